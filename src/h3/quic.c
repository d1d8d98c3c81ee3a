/* The QUIC side of an HTTP/3 client connection: ngtcp2 over a connected UDP socket, TLS 1.3 in
 * GnuTLS (ALPN "h3", SNI, certificate verification), the reads, the writes, the timer, and why
 * a connection failed. The HTTP/3 side is http.c. */
#include "h3/internal.h"

#include "core/clock.h"
#include "core/err.h"

#include <errno.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* The largest datagram knee sends or takes (ngtcp2 sizes its packets below it). */
#define H3_DGRAM 1452
#define H3_RBUF 65536
/* Datagrams per sendmmsg(2). */
#define H3_BATCH 16

/* TLS 1.3 only (QUIC requires it), the suites QUIC defines, no compatibility mode. */
static const char h3_priority[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
                                  "+CHACHA20-POLY1305:+AES-128-CCM:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"
                                  "+GROUP-SECP384R1:+GROUP-SECP521R1:%DISABLE_TLS13_COMPAT_MODE";

void h3_set_failed(struct h3_client *c, enum h3_reason r, const char *detail)
{
    if (c->reason != H3_R_NONE)
        return;
    c->reason = r;
    snprintf(c->detail, sizeof c->detail, "%s", detail ? detail : "");
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
    struct h3_client *c = ref->user_data;
    return c->q;
}

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
    (void)ctx;
    if (getrandom(dest, len, 0) != (ssize_t)len)
        for (size_t i = 0; i < len; i++)
            dest[i] = (uint8_t)rand();
}

static int new_cid_cb(ngtcp2_conn *q, ngtcp2_cid *cid, uint8_t *token, size_t cidlen, void *user)
{
    (void)q, (void)user;
    rand_cb(cid->data, cidlen, NULL);
    cid->datalen = cidlen;
    rand_cb(token, NGTCP2_STATELESS_RESET_TOKENLEN, NULL);
    return 0;
}

static int handshake_completed_cb(ngtcp2_conn *q, void *user)
{
    struct h3_client *c = user;
    c->handshake_done = true;
    if (!c->early)
        return h3_http_start(c) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
    /* the 0-RTT key installed means early data went out (GnuTLS sends none when the ticket
     * does not allow it); the server's EncryptedExtensions say whether it took them */
    const ngtcp2_crypto_ctx *ectx = ngtcp2_conn_get_early_crypto_ctx(q);
    c->early_sent = ectx && ectx->aead.native_handle;
    c->early_accepted = c->early_sent && (gnutls_session_get_flags(c->tls) & GNUTLS_SFLAGS_EARLY_DATA);
    if (c->early_accepted)
        return 0;
    if (!ngtcp2_conn_get_early_data_rejected(q) && ngtcp2_conn_early_data_rejected(q) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return h3_http_restart(c) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

/* A NewSessionTicket arrived (after the handshake): it and the server's transport parameters
 * become the target's newest session. */
static int ticket_hook(gnutls_session_t tls, unsigned htype, unsigned when, unsigned incoming,
                       const gnutls_datum_t *msg)
{
    (void)htype, (void)when, (void)incoming, (void)msg;
    ngtcp2_crypto_conn_ref *ref = gnutls_session_get_ptr(tls);
    struct h3_client *c = ref->user_data;
    struct h3_session *s = c->session;
    gnutls_datum_t d = {0};
    if (!s || gnutls_session_get_data2(tls, &d) != 0)
        return 0;
    gnutls_free(s->ticket.data);
    s->ticket = d;
    const ngtcp2_transport_params *p = ngtcp2_conn_get_remote_transport_params(c->q);
    s->has_tp = p != NULL;
    if (p) {
        s->tp = *p;
        /* its version list points into the connection's memory, and 0-RTT ignores it */
        s->tp.version_info_present = 0;
        memset(&s->tp.version_info, 0, sizeof s->tp.version_info);
    }
    return 0;
}

static int recv_vn_cb(ngtcp2_conn *q, const ngtcp2_pkt_hd *hd, const uint32_t *sv, size_t nsv, void *user)
{
    (void)q, (void)hd, (void)sv;
    char why[96];
    snprintf(why, sizeof why, "the server offered %zu other QUIC version%s", nsv, nsv == 1 ? "" : "s");
    h3_set_failed(user, H3_R_VERSION, why);
    return 0;
}

/* The GnuTLS session of a client connection: QUIC's TLS 1.3, ALPN h3, SNI, verification, the
 * session to resume and the hook that keeps the server's tickets. */
static int tls_setup(struct h3_client *c, const struct h3_tls *tls, const char *host, bool early)
{
    int r = gnutls_init(&c->tls, GNUTLS_CLIENT | GNUTLS_NO_END_OF_EARLY_DATA | (early ? GNUTLS_ENABLE_EARLY_DATA : 0));
    if (r < 0)
        return r;
    if ((r = gnutls_priority_set_direct(c->tls, h3_priority, NULL)) < 0)
        return r;
    if (ngtcp2_crypto_gnutls_configure_client_session(c->tls) != 0)
        return GNUTLS_E_INTERNAL_ERROR;
    c->conn_ref.get_conn = get_conn;
    c->conn_ref.user_data = c;
    gnutls_session_set_ptr(c->tls, &c->conn_ref);
    if ((r = gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, tls->cred)) < 0)
        return r;
    gnutls_datum_t alpn = {.data = (unsigned char *)"h3", .size = 2};
    if ((r = gnutls_alpn_set_protocols(c->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY)) < 0)
        return r;
    /* SNI is the URL's host even when it is an address: RFC 6066 wants names only, but a QUIC
     * server on an unconnected UDP socket has no local address to choose its certificate by
     * (Caddy answers internal_error without it), and ngtcp2's own clients send it too */
    if ((r = gnutls_server_name_set(c->tls, GNUTLS_NAME_DNS, host, strlen(host))) < 0)
        return r;
    if (!tls->insecure)
        gnutls_session_set_verify_cert(c->tls, host, 0);
    if (c->session) {
        /* a ticket GnuTLS refuses (expired, another server) is a full handshake, not an error */
        if (c->session->ticket.size)
            (void)gnutls_session_set_data(c->tls, c->session->ticket.data, c->session->ticket.size);
        gnutls_handshake_set_hook_function(c->tls, GNUTLS_HANDSHAKE_NEW_SESSION_TICKET, GNUTLS_HOOK_POST, ticket_hook);
    }
    return 0;
}

/* ngtcp2's qlog: every chunk to the caller's file as it comes (a connection's record is
 * complete when the client is freed: the FIN chunk). */
static void qlog_write(void *user, uint32_t flags, const void *data, size_t len)
{
    (void)flags;
    struct h3_client *c = user;
    if (c->qlog && len)
        (void)fwrite(data, 1, len, c->qlog);
}

static int quic_setup(struct h3_client *c)
{
    ngtcp2_callbacks cb = {
        .client_initial = ngtcp2_crypto_client_initial_cb,
        .recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
        .handshake_completed = handshake_completed_cb,
        .recv_version_negotiation = recv_vn_cb,
        .encrypt = ngtcp2_crypto_encrypt_cb,
        .decrypt = ngtcp2_crypto_decrypt_cb,
        .hp_mask = ngtcp2_crypto_hp_mask_cb,
        .recv_retry = ngtcp2_crypto_recv_retry_cb,
        .rand = rand_cb,
        .get_new_connection_id = new_cid_cb,
        .update_key = ngtcp2_crypto_update_key_cb,
        .delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
        .delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
        .get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
        .version_negotiation = ngtcp2_crypto_version_negotiation_cb,
    };
    h3_http_callbacks(&cb);
    ngtcp2_cid dcid = {.datalen = 18}, scid = {.datalen = 8};
    rand_cb(dcid.data, dcid.datalen, NULL);
    rand_cb(scid.data, scid.datalen, NULL);
    ngtcp2_path path = {
        .local = {.addr = (ngtcp2_sockaddr *)&c->local, .addrlen = c->local_len},
        .remote = {.addr = (ngtcp2_sockaddr *)&c->remote, .addrlen = c->remote_len},
    };
    ngtcp2_settings settings;
    ngtcp2_settings_default(&settings);
    settings.initial_ts = clock_now_ns();
    settings.max_tx_udp_payload_size = H3_DGRAM;
    if (c->qlog)
        settings.qlog.write = qlog_write;
    ngtcp2_transport_params params;
    ngtcp2_transport_params_default(&params);
    /* windows as large as HTTP/2's: the generator must never be the one that stalls a response */
    params.initial_max_streams_uni = 3;
    params.initial_max_stream_data_bidi_local = 16u << 20;
    params.initial_max_stream_data_uni = 1u << 20;
    params.initial_max_data = 1u << 30;
    params.max_idle_timeout = H3_IDLE_TIMEOUT_NS;
    return ngtcp2_conn_client_new(&c->q, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb, &settings, &params, NULL, c);
}

/* 0-RTT: the ticket's transport parameters for ngtcp2, HTTP/3 at once (requests go out as early
 * data with the ClientHello's flight). */
static int early_setup(struct h3_client *c)
{
    ngtcp2_conn_set_early_remote_transport_params(c->q, &c->session->tp);
    c->early = true;
    return h3_http_start(c);
}

int h3_client_new(const struct h3_tls *tls, int fd, const char *host, const struct h3_callbacks *cb,
                  const struct h3_client_opts *o, struct h3_client **out, char *err, size_t errlen)
{
    static const struct h3_client_opts none = {0};
    if (!o)
        o = &none;
    struct h3_client *c = calloc(1, sizeof *c);
    if (!c)
        return knee_fail(err, errlen, KNEE_EINVAL, "out of memory");
    c->fd = fd;
    c->cb = cb;
    c->max_streams = o->max_streams ? o->max_streams : H3_MAX_STREAMS;
    c->session = o->session;
    c->qlog = o->qlog;
    bool early = o->early_data && o->session && o->session->ticket.size && o->session->has_tp;
    c->local_len = sizeof c->local;
    c->remote_len = sizeof c->remote;
    if (getsockname(fd, (struct sockaddr *)&c->local, &c->local_len) ||
        getpeername(fd, (struct sockaddr *)&c->remote, &c->remote_len)) {
        int e = errno;
        free(c);
        return knee_fail(err, errlen, KNEE_EINVAL, "UDP socket: %s", strerror(e));
    }
    int r = tls_setup(c, tls, host, early);
    if (r < 0) {
        h3_client_free(c);
        return knee_fail(err, errlen, KNEE_EINVAL, "GnuTLS: %s", gnutls_strerror(r));
    }
    r = quic_setup(c);
    if (r != 0) {
        h3_client_free(c);
        return knee_fail(err, errlen, KNEE_EINVAL, "ngtcp2: %s", ngtcp2_strerror(r));
    }
    ngtcp2_conn_set_tls_native_handle(c->q, c->tls);
    if (early && early_setup(c) != 0) {
        h3_client_free(c);
        return knee_fail(err, errlen, KNEE_EINVAL, "nghttp3: the HTTP/3 connection for 0-RTT");
    }
    *out = c;
    return 0;
}

void h3_client_free(struct h3_client *c)
{
    if (!c)
        return;
    if (c->h)
        nghttp3_conn_del(c->h);
    if (c->q)
        ngtcp2_conn_del(c->q);
    if (c->tls)
        gnutls_deinit(c->tls);
    free(c->cancels);
    free(c->nv);
    free(c);
}

/* ------------------------------------------------------------------ sending */

/* One datagram to the socket: false when it refused it (EAGAIN: counted, QUIC resends). */
static bool send_dgram(struct h3_client *c, const uint8_t *buf, size_t len)
{
    for (;;) {
        ssize_t n = send(c->fd, buf, len, MSG_DONTWAIT);
        if (n >= 0) {
            c->stats.datagrams_sent++;
            c->stats.bytes_sent += (uint64_t)n;
            return true;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            c->stats.send_blocked++;
            return false;
        }
        if (errno == ECONNREFUSED) /* an ICMP port unreachable from an earlier datagram */
            return true;
        c->sys_errno = errno;
        h3_set_failed(c, H3_R_SOCKET, strerror(errno));
        return true;
    }
}

void h3_client_goodbye(struct h3_client *c)
{
    if (!c->q || c->closing || !c->handshake_done || c->reason != H3_R_NONE)
        return;
    uint8_t buf[H3_DGRAM];
    ngtcp2_connection_close_error ccerr;
    ngtcp2_connection_close_error_set_application_error(&ccerr, NGHTTP3_H3_NO_ERROR, NULL, 0);
    ngtcp2_ssize n = ngtcp2_conn_write_connection_close(c->q, NULL, NULL, buf, sizeof buf, &ccerr, clock_now_ns());
    c->closing = true;
    if (n > 0)
        send_dgram(c, buf, (size_t)n);
}

/* A fatal error of ngtcp2 (or of a callback): the connection is over. */
static void quic_fatal(struct h3_client *c, int rv)
{
    if (rv == NGTCP2_ERR_IDLE_CLOSE) {
        h3_set_failed(c, H3_R_IDLE_TIMEOUT, "the QUIC idle timeout closed the connection");
    } else if (rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
        h3_set_failed(c, H3_R_HS_TIMEOUT, "the QUIC handshake timed out");
    } else if (rv == NGTCP2_ERR_RECV_VERSION_NEGOTIATION || rv == NGTCP2_ERR_VERSION_NEGOTIATION_FAILURE) {
        h3_set_failed(c, H3_R_VERSION, "version negotiation: no QUIC version in common");
    } else if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING) {
        ngtcp2_connection_close_error e;
        ngtcp2_conn_get_connection_close_error(c->q, &e);
        c->error_code = e.error_code;
        c->close_app = e.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION;
        const char *name = c->close_app ? h3_error_code_name(e.error_code) : quic_error_code_name(e.error_code);
        char why[128];
        snprintf(why, sizeof why, "the server closed the connection: %s (0x%llx)", name ? name : "unknown",
                 (unsigned long long)e.error_code);
        /* a close during the handshake (a TLS alert in CRYPTO_ERROR) is a failed handshake */
        h3_set_failed(c, c->handshake_done ? H3_R_CLOSE : H3_R_HANDSHAKE, why);
    } else if (rv == NGTCP2_ERR_CRYPTO && !c->handshake_done) {
        unsigned st = gnutls_session_get_verify_cert_status(c->tls);
        if (st & GNUTLS_CERT_UNEXPECTED_OWNER)
            h3_set_failed(c, H3_R_HOSTNAME, "the certificate does not name the host");
        else if (st & (GNUTLS_CERT_EXPIRED | GNUTLS_CERT_NOT_ACTIVATED))
            h3_set_failed(c, H3_R_EXPIRED, "the certificate expired or is not valid yet");
        else if (st)
            h3_set_failed(c, H3_R_VERIFY, "the certificate chain did not verify");
        else
            h3_set_failed(c, H3_R_HANDSHAKE, "the TLS handshake failed");
    } else {
        h3_set_failed(c, c->handshake_done ? H3_R_PROTOCOL : H3_R_HANDSHAKE, ngtcp2_strerror(rv));
    }
    c->closing = true;
}

/* Datagrams built and not sent yet: one sendmmsg(2) takes them all (one system call per
 * flush rather than per datagram). One batch per thread: a client fills and sends it within
 * one write_packets. */
struct dgram_batch {
    uint8_t buf[H3_BATCH][H3_DGRAM];
    struct mmsghdr msg[H3_BATCH];
    struct iovec iov[H3_BATCH];
    unsigned n;
};

/* Send the batch: false when the socket refused some (EAGAIN: those are counted in
 * send_blocked and left to QUIC's loss recovery, as one refused send). */
static bool send_batch(struct h3_client *c, struct dgram_batch *b)
{
    unsigned off = 0;
    while (off < b->n) {
        int r = sendmmsg(c->fd, b->msg + off, b->n - off, MSG_DONTWAIT);
        if (r > 0) {
            for (unsigned i = off; i < off + (unsigned)r; i++) {
                c->stats.datagrams_sent++;
                c->stats.bytes_sent += b->msg[i].msg_len;
            }
            off += (unsigned)r;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->stats.send_blocked += b->n - off;
            b->n = 0;
            return false;
        }
        if (r < 0 && errno == ECONNREFUSED) { /* an ICMP port unreachable from an earlier datagram */
            off++;
            continue;
        }
        c->sys_errno = r < 0 ? errno : EIO;
        h3_set_failed(c, H3_R_SOCKET, strerror(c->sys_errno));
        break;
    }
    b->n = 0;
    return true;
}

/* Every packet ngtcp2 has, stream data from nghttp3 first, sent in batches. */
static bool write_packets(struct h3_client *c)
{
    static __thread struct dgram_batch batch;
    struct dgram_batch *b = &batch;
    b->n = 0;
    uint64_t ts = clock_now_ns();
    for (int guard = 0; guard < 4096; guard++) {
        int64_t sid = -1;
        int fin = 0;
        nghttp3_vec vec[16];
        nghttp3_ssize nvec = 0;
        if (c->h && ngtcp2_conn_get_max_data_left(c->q)) {
            nvec = nghttp3_conn_writev_stream(c->h, &sid, &fin, vec, 16);
            if (nvec < 0) {
                h3_set_failed(c, H3_R_PROTOCOL, nghttp3_strerror((int)nvec));
                c->closing = true;
                return false;
            }
        }
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
        ngtcp2_ssize ndata = -1;
        c->in_cb = true;
        ngtcp2_ssize n = ngtcp2_conn_writev_stream(c->q, NULL, NULL, b->buf[b->n], H3_DGRAM, &ndata, flags, sid,
                                                   (const ngtcp2_vec *)vec, (size_t)nvec, ts);
        c->in_cb = false;
        if (n < 0) {
            if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
                nghttp3_conn_block_stream(c->h, sid);
                continue;
            }
            if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
                nghttp3_conn_shutdown_stream_write(c->h, sid);
                continue;
            }
            if (n == NGTCP2_ERR_WRITE_MORE) {
                nghttp3_conn_add_write_offset(c->h, sid, (size_t)ndata);
                continue;
            }
            quic_fatal(c, (int)n);
            return false;
        }
        if (ndata >= 0 && c->h)
            nghttp3_conn_add_write_offset(c->h, sid, (size_t)ndata);
        if (n == 0)
            break;
        b->iov[b->n] = (struct iovec){.iov_base = b->buf[b->n], .iov_len = (size_t)n};
        b->msg[b->n] = (struct mmsghdr){.msg_hdr = {.msg_iov = &b->iov[b->n], .msg_iovlen = 1}};
        if (++b->n == H3_BATCH && !send_batch(c, b))
            return true;
    }
    if (b->n && !send_batch(c, b))
        return true;
    ngtcp2_conn_update_pkt_tx_time(c->q, ts);
    return false;
}

bool h3_client_flush(struct h3_client *c)
{
    if (!c->q || c->closing)
        return false;
    h3_http_submit_queued(c);
    return write_packets(c);
}

/* ------------------------------------------------------------------ receiving */

void h3_client_read(struct h3_client *c)
{
    static __thread uint8_t buf[H3_RBUF];
    for (int i = 0; i < 64 && !c->closing; i++) {
        ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            c->sys_errno = errno;
            /* ECONNREFUSED: an ICMP port unreachable, nobody listens on the UDP port */
            h3_set_failed(c, c->handshake_done ? H3_R_SOCKET : H3_R_HANDSHAKE, strerror(errno));
            c->closing = true;
            return;
        }
        c->stats.datagrams_received++;
        c->stats.bytes_received += (uint64_t)n;
        ngtcp2_path path = {
            .local = {.addr = (ngtcp2_sockaddr *)&c->local, .addrlen = c->local_len},
            .remote = {.addr = (ngtcp2_sockaddr *)&c->remote, .addrlen = c->remote_len},
        };
        ngtcp2_pkt_info pi = {0};
        c->in_cb = true;
        int rv = ngtcp2_conn_read_pkt(c->q, &path, &pi, buf, (size_t)n, clock_now_ns());
        c->in_cb = false;
        if (rv != 0 && rv != NGTCP2_ERR_DISCARD_PKT && rv != NGTCP2_ERR_DECRYPT) {
            quic_fatal(c, rv);
            return;
        }
    }
}

void h3_client_expire(struct h3_client *c)
{
    if (!c->q || c->closing)
        return;
    uint64_t now = clock_now_ns();
    if (ngtcp2_conn_get_expiry(c->q) > now)
        return;
    ngtcp2_conn_stat st;
    ngtcp2_conn_get_conn_stat(c->q, &st);
    size_t pto = st.pto_count;
    c->in_cb = true;
    int rv = ngtcp2_conn_handle_expiry(c->q, now);
    c->in_cb = false;
    if (rv != 0) {
        quic_fatal(c, rv);
        return;
    }
    ngtcp2_conn_get_conn_stat(c->q, &st);
    if (st.pto_count > pto)
        c->stats.pto += st.pto_count - pto;
}

uint64_t h3_client_expiry_ns(const struct h3_client *c)
{
    if (!c->q || c->closing)
        return UINT64_MAX;
    return ngtcp2_conn_get_expiry(c->q);
}

/* ------------------------------------------------------------------ state */

bool h3_client_ready(const struct h3_client *c)
{
    return (c->handshake_done || c->early) && c->h && c->reason == H3_R_NONE;
}

bool h3_client_cert_requested(const struct h3_client *c)
{
    return c->tls && gnutls_certificate_client_get_request_status(c->tls) != 0;
}

bool h3_client_handshake_done(const struct h3_client *c)
{
    return c->handshake_done;
}

bool h3_client_early(const struct h3_client *c)
{
    return c->early;
}

bool h3_client_early_accepted(const struct h3_client *c)
{
    return c->early_accepted;
}

bool h3_client_resumed(const struct h3_client *c)
{
    return c->tls && gnutls_session_is_resumed(c->tls);
}

uint32_t h3_client_capacity(const struct h3_client *c)
{
    if (!h3_client_ready(c) || c->goaway || c->closing || c->open >= c->max_streams)
        return 0;
    uint64_t left = ngtcp2_conn_get_streams_bidi_left(c->q);
    uint32_t queued = 0;
    for (const struct h3_stream *s = c->queued; s; s = s->next)
        queued++;
    left = left > queued ? left - queued : 0;
    uint32_t room = c->max_streams - c->open;
    return left < room ? (uint32_t)left : room;
}

uint32_t h3_client_open_streams(const struct h3_client *c)
{
    return c->open;
}

bool h3_client_usable(const struct h3_client *c)
{
    return !c->goaway && !c->closing && c->reason == H3_R_NONE;
}

bool h3_client_done(const struct h3_client *c)
{
    return c->reason != H3_R_NONE || c->closing || (c->goaway && !c->open);
}

enum h3_reason h3_client_reason(const struct h3_client *c)
{
    return c->reason;
}

uint64_t h3_client_error_code(const struct h3_client *c, bool *close_app)
{
    if (close_app)
        *close_app = c->close_app;
    return c->error_code;
}

int h3_client_errno(const struct h3_client *c)
{
    return c->sys_errno;
}

const char *h3_client_detail(const struct h3_client *c)
{
    return c->detail;
}

const struct h3_client_stats *h3_client_stats(const struct h3_client *c)
{
    return &c->stats;
}

void h3_client_path(const struct h3_client *c, struct h3_client_path *out)
{
    memset(out, 0, sizeof *out);
    if (!c->q)
        return;
    ngtcp2_conn_stat st;
    ngtcp2_conn_get_conn_stat(c->q, &st);
    if (st.first_rtt_sample_ts != UINT64_MAX && st.min_rtt != UINT64_MAX) {
        out->min_rtt_ns = st.min_rtt;
        out->smoothed_rtt_ns = st.smoothed_rtt;
        out->latest_rtt_ns = st.latest_rtt;
    }
    out->cwnd = st.cwnd;
    out->bytes_in_flight = st.bytes_in_flight;
}
