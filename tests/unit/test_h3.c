/* Unit tests for src/h3 and the record's QUIC counters, without a QUIC server: the names
 * (reasons, HTTP/3 and QUIC codes), the counters by code and their sums, the credentials' bad
 * input, and a client against loopback UDP peers of this test: nobody on the port (the
 * handshake fails: ICMP port unreachable), a peer that takes the Initial (a padded long-header
 * datagram) and answers with a Version Negotiation packet (the version cause). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "h3/h3.h"
#include "record/record.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(h3_reason_name(H3_R_NONE), "none");
    assert_string_equal(h3_reason_name(H3_R_HANDSHAKE), "quic_handshake");
    assert_string_equal(h3_reason_name(H3_R_VERSION), "quic_version_negotiation");
    assert_string_equal(h3_reason_name(H3_R_CLOSED), "h3_closed");
    assert_string_equal(h3_reason_name(H3_R_COUNT), "unknown");
    assert_string_equal(h3_error_code_name(0x100), "H3_NO_ERROR");
    assert_string_equal(h3_error_code_name(0x10c), "H3_REQUEST_CANCELLED");
    assert_string_equal(h3_error_code_name(0x110), "H3_VERSION_FALLBACK");
    assert_string_equal(h3_error_code_name(0x202), "QPACK_DECODER_STREAM_ERROR");
    assert_null(h3_error_code_name(0x111));
    assert_null(h3_error_code_name(0));
    assert_string_equal(quic_error_code_name(0), "NO_ERROR");
    assert_string_equal(quic_error_code_name(0x10), "NO_VIABLE_PATH");
    assert_string_equal(quic_error_code_name(0x150), "CRYPTO_ERROR");
    assert_null(quic_error_code_name(0x11));
    assert_string_equal(record_transport_cause_name(RUN_TC_QUIC_HANDSHAKE), "quic_handshake");
    assert_string_equal(record_transport_cause_name(RUN_TC_H3_STREAM_RESET), "h3_stream_reset");
    assert_string_equal(record_transport_cause_name(RUN_TC_QUIC_VERSION), "quic_version_negotiation");
    assert_string_equal(record_transport_cause_name(RUN_TC_H3_PROTOCOL), "h3_protocol");
    assert_non_null(strstr(h3_library_version(), "ngtcp2 "));
}

/* Every code lands in its slot, named as the JSON names it; the counters add up. */
static void test_codes_and_sums(void **state)
{
    (void)state;
    struct run_proto_counts a = {0}, b = {0};
    record_quic_reset_add(&a.quic, 0x10c); /* H3_REQUEST_CANCELLED */
    record_quic_reset_add(&a.quic, 0x10c);
    record_quic_reset_add(&a.quic, 0x999);        /* other */
    record_quic_close_add(&a.quic, 0x100, true);  /* H3_NO_ERROR */
    record_quic_close_add(&a.quic, 0x0a, false);  /* PROTOCOL_VIOLATION */
    record_quic_close_add(&a.quic, 0x178, false); /* CRYPTO_ERROR (a TLS alert) */
    record_quic_close_add(&a.quic, 0x0a, true);   /* an application code below HTTP/3's: other */
    assert_int_equal(a.quic.reset_codes[RUN_QC_H3 + 0xc], 2);
    assert_string_equal(record_quic_code_name(RUN_QC_H3 + 0xc), "H3_REQUEST_CANCELLED");
    assert_int_equal(a.quic.reset_codes[RUN_QC_OTHER], 1);
    assert_int_equal(a.quic.close_codes[RUN_QC_H3], 1);
    assert_string_equal(record_quic_code_name(RUN_QC_H3), "H3_NO_ERROR");
    assert_int_equal(a.quic.close_codes[RUN_QC_TRANSPORT + 0x0a], 1);
    assert_string_equal(record_quic_code_name(RUN_QC_TRANSPORT + 0x0a), "PROTOCOL_VIOLATION");
    assert_int_equal(a.quic.close_codes[RUN_QC_CRYPTO], 1);
    assert_string_equal(record_quic_code_name(RUN_QC_CRYPTO), "CRYPTO_ERROR");
    assert_int_equal(a.quic.close_codes[RUN_QC_OTHER], 1);
    assert_string_equal(record_quic_code_name(RUN_QC_OTHER), "other");
    for (int k = 0; k < RUN_QC_COUNT; k++) /* every slot named, H3 codes by the module's names */
        if (k < RUN_H3_CODES)
            assert_string_equal(record_quic_code_name(k), h3_error_code_name(0x100 + (uint64_t)k));
        else if (k < RUN_QC_CRYPTO)
            assert_string_equal(record_quic_code_name(k), quic_error_code_name((uint64_t)(k - RUN_QC_TRANSPORT)));
    a.h3 = 2;
    a.quic.streams = 10;
    a.quic.datagrams_sent = 30;
    a.quic.pto = 1;
    b.h3 = 1;
    b.quic.streams = 5;
    b.quic.datagrams_received = 7;
    b.quic.reset_codes[RUN_QC_OTHER] = 4;
    record_proto_counts_add(&b, &a);
    assert_int_equal(b.h3, 3);
    assert_int_equal(b.quic.streams, 15);
    assert_int_equal(b.quic.datagrams_sent, 30);
    assert_int_equal(b.quic.datagrams_received, 7);
    assert_int_equal(b.quic.pto, 1);
    assert_int_equal(b.quic.reset_codes[RUN_QC_OTHER], 5);
    assert_int_equal(b.quic.close_codes[RUN_QC_CRYPTO], 1);
    /* 0-RTT and the path: sums, the smallest minimum RTT of connections that had one, the largest
     * smoothed RTT */
    struct run_proto_counts c = {0}, d = {0}, e = {0};
    c.quic = (struct run_quic_counts){.zero_rtt_accepted = 3,
                                      .zero_rtt_rejected = 1,
                                      .stream_packets_lost = 2,
                                      .rtt_connections = 2,
                                      .rtt_min_us = 80,
                                      .rtt_smoothed_sum_us = 500,
                                      .rtt_smoothed_max_us = 300,
                                      .cwnd_sum_bytes = 24000};
    d.quic = (struct run_quic_counts){.zero_rtt_accepted = 1,
                                      .rtt_connections = 1,
                                      .rtt_min_us = 120,
                                      .rtt_smoothed_sum_us = 400,
                                      .rtt_smoothed_max_us = 400,
                                      .cwnd_sum_bytes = 12000};
    record_proto_counts_add(&e, &d); /* into an empty one: d's values, its minimum too */
    assert_int_equal(e.quic.rtt_min_us, 120);
    record_proto_counts_add(&e, &c);
    record_proto_counts_add(&e, &(struct run_proto_counts){0}); /* no connection with an RTT: nothing moves */
    assert_int_equal(e.quic.zero_rtt_accepted, 4);
    assert_int_equal(e.quic.zero_rtt_rejected, 1);
    assert_int_equal(e.quic.stream_packets_lost, 2);
    assert_int_equal(e.quic.rtt_connections, 3);
    assert_int_equal(e.quic.rtt_min_us, 80);
    assert_int_equal(e.quic.rtt_smoothed_sum_us, 900);
    assert_int_equal(e.quic.rtt_smoothed_max_us, 400);
    assert_int_equal(e.quic.cwnd_sum_bytes, 36000);
}

static int closes;
static void on_close(struct h3_stream *s)
{
    (void)s;
    closes++;
}
static const struct h3_callbacks callbacks = {.on_close = on_close};

static void test_credentials(void **state)
{
    (void)state;
    struct h3_tls *t = NULL;
    char err[256];
    assert_int_equal(h3_tls_new("/nonexistent/ca.pem", false, &t, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--cacert /nonexistent/ca.pem"));
    assert_null(t);
    FILE *f = fopen("/tmp/knee-test-h3-empty.pem", "w");
    assert_non_null(f);
    fputs("not a certificate\n", f);
    fclose(f);
    assert_int_equal(h3_tls_new("/tmp/knee-test-h3-empty.pem", false, &t, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--cacert /tmp/knee-test-h3-empty.pem"));
    unlink("/tmp/knee-test-h3-empty.pem");
    assert_int_equal(h3_tls_new(NULL, true, &t, err, sizeof err), 0);
    /* a client certificate that is not there: the flags and the file in the words */
    assert_int_equal(h3_tls_set_client_cert(t, "/nonexistent/c.pem", NULL, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--cert /nonexistent/c.pem: "));
    assert_int_equal(h3_tls_set_client_cert(t, "/nonexistent/c.pem", "/nonexistent/k.pem", err, sizeof err),
                     KNEE_EINVAL);
    assert_non_null(strstr(err, "--cert /nonexistent/c.pem --key /nonexistent/k.pem: "));
    h3_tls_free(t);
    h3_tls_free(NULL);
}

/* A session with no ticket yet: a client given it starts a full handshake (no 0-RTT, not ready
 * before the handshake), ngtcp2's qlog goes to the file given (JSON text sequences: RS before
 * each record, the first one qlog's header), and the path has no RTT sample yet. */
static void test_session_and_qlog(void **state)
{
    (void)state;
    struct h3_session *s = h3_session_new();
    assert_non_null(s);
    assert_false(h3_session_has_ticket(s));
    assert_false(h3_session_has_ticket(NULL));
    int peer = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(peer, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t alen = sizeof a;
    assert_int_equal(getsockname(peer, (struct sockaddr *)&a, &alen), 0);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    FILE *q = tmpfile();
    assert_non_null(q);
    struct h3_tls *t = NULL;
    struct h3_client *h = NULL;
    char err[256];
    assert_int_equal(h3_tls_new(NULL, true, &t, err, sizeof err), 0);
    struct h3_client_opts o = {.session = s, .early_data = true, .qlog = q};
    assert_int_equal(h3_client_new(t, fd, "localhost", &callbacks, &o, &h, err, sizeof err), 0);
    assert_false(h3_client_early(h));
    assert_false(h3_client_ready(h));
    assert_int_equal(h3_client_capacity(h), 0);
    assert_false(h3_client_flush(h));
    assert_false(h3_client_handshake_done(h));
    assert_false(h3_client_early_accepted(h));
    assert_false(h3_client_resumed(h));
    assert_false(h3_client_cert_requested(h));
    struct h3_client_path p;
    h3_client_path(h, &p);
    assert_int_equal(p.min_rtt_ns, 0);
    assert_int_equal(p.smoothed_rtt_ns, 0);
    assert_true(p.cwnd > 0);
    assert_true(p.bytes_in_flight >= 1200); /* the Initial, padded */
    h3_client_free(h);
    assert_false(h3_session_has_ticket(s)); /* no server, no ticket */
    long len = ftell(q);
    assert_true(len > 0);
    char buf[256] = {0};
    rewind(q);
    assert_true(fread(buf, 1, sizeof buf - 1, q) > 0);
    assert_int_equal(buf[0], 0x1e);
    assert_non_null(strstr(buf, "\"qlog_format\":\"JSON-SEQ\""));
    fclose(q);
    h3_session_free(s);
    h3_session_free(NULL);
    h3_tls_free(t);
    close(fd);
    close(peer);
}

/* ------------------------------------------------------------------ a client on loopback */

/* A UDP socket bound to a free loopback port (*port), or connected to port. */
static int udp(uint16_t *port, bool bind_it)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(bind_it ? 0 : *port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind_it) {
        assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
        socklen_t len = sizeof a;
        assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        *port = ntohs(a.sin_port);
    } else {
        assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    }
    return fd;
}

static void wait_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 2000), 1);
}

/* Nobody listens: the Initial goes out, the ICMP port unreachable comes back as ECONNREFUSED on
 * the connected socket, and the handshake fails (not a timeout). */
static void test_nobody_listens(void **state)
{
    (void)state;
    uint16_t port = 0;
    int probe = udp(&port, true);
    close(probe); /* a port that was free a moment ago */
    int fd = udp(&port, false);
    struct h3_tls *t = NULL;
    struct h3_client *h = NULL;
    char err[256];
    assert_int_equal(h3_tls_new(NULL, true, &t, err, sizeof err), 0);
    assert_int_equal(h3_client_new(t, fd, "localhost", &callbacks, NULL, &h, err, sizeof err), 0);
    assert_false(h3_client_flush(h));
    assert_int_equal(h3_client_stats(h)->datagrams_sent, 1);
    assert_true(h3_client_expiry_ns(h) != UINT64_MAX);
    wait_readable(fd);
    h3_client_read(h);
    assert_int_equal(h3_client_reason(h), H3_R_HANDSHAKE);
    assert_non_null(strstr(h3_client_detail(h), "refused"));
    assert_false(h3_client_ready(h));
    assert_int_equal(h3_client_capacity(h), 0);
    assert_true(h3_client_done(h));
    h3_client_free(h);
    h3_tls_free(t);
    close(fd);
}

/* A peer answers the Initial with Version Negotiation (a version knee does not speak): the
 * connection fails with H3_R_VERSION. The Initial is a padded long-header datagram. */
static void test_version_negotiation(void **state)
{
    (void)state;
    uint16_t port = 0;
    int peer = udp(&port, true);
    int fd = udp(&port, false);
    struct h3_tls *t = NULL;
    struct h3_client *h = NULL;
    char err[256];
    assert_int_equal(h3_tls_new(NULL, true, &t, err, sizeof err), 0);
    assert_int_equal(
        h3_client_new(t, fd, "localhost", &callbacks, &(struct h3_client_opts){.max_streams = 4}, &h, err, sizeof err),
        0);
    assert_false(h3_client_flush(h));
    wait_readable(peer);
    uint8_t in[2048];
    struct sockaddr_in from;
    socklen_t flen = sizeof from;
    ssize_t n = recvfrom(peer, in, sizeof in, 0, (struct sockaddr *)&from, &flen);
    assert_true(n >= 1200);               /* a client's Initial is padded (RFC 9000 §14.1) */
    assert_int_equal(in[0] & 0xc0, 0xc0); /* long header, fixed bit */
    assert_int_equal(in[1] << 24 | in[2] << 16 | in[3] << 8 | in[4], 1); /* QUIC v1 */
    uint8_t dcil = in[5], scil = in[6 + dcil];
    /* Version Negotiation: its DCID is the client's SCID, its SCID the client's DCID */
    uint8_t vn[128];
    size_t k = 0;
    vn[k++] = 0x80 | 0x2a;
    memset(vn + k, 0, 4), k += 4;
    vn[k++] = scil;
    memcpy(vn + k, in + 7 + dcil, scil), k += scil;
    vn[k++] = dcil;
    memcpy(vn + k, in + 6, dcil), k += dcil;
    const uint8_t other[4] = {0x1a, 0x2a, 0x3a, 0x4a};
    memcpy(vn + k, other, 4), k += 4;
    assert_int_equal(sendto(peer, vn, k, 0, (struct sockaddr *)&from, flen), (ssize_t)k);
    wait_readable(fd);
    h3_client_read(h);
    assert_int_equal(h3_client_reason(h), H3_R_VERSION);
    assert_int_equal(h3_client_stats(h)->datagrams_received, 1);
    assert_int_equal(closes, 0);
    h3_client_fail(h, H3_R_CLOSED); /* nothing open: no callback */
    assert_int_equal(closes, 0);
    h3_client_free(h);
    h3_tls_free(t);
    close(fd);
    close(peer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),          cmocka_unit_test(test_codes_and_sums),
        cmocka_unit_test(test_credentials),    cmocka_unit_test(test_session_and_qlog),
        cmocka_unit_test(test_nobody_listens), cmocka_unit_test(test_version_negotiation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
