/* Unit tests for knee serve --h3 (src/serve/h3.c) through the library API, and for
 * tls_ctx_pem: the configuration check, the UDP socket on the TCP port's number, what the
 * server answers to datagrams that are not a connection (a version it does not speak, garbage
 * shaped as an Initial, a stray short-header packet), the counters' "h3" field, and the TCP
 * side's Alt-Svc. Whole HTTP/3 exchanges are tests/e2e/serve_h3.sh's (Chromium is the client). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "serve/serve.h"
#include "tls/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct serve_handle *start_h3(unsigned max_conns)
{
    struct serve_config cfg;
    assert_int_equal(serve_preset("null", &cfg), 0);
    snprintf(cfg.listen, sizeof cfg.listen, "127.0.0.1:0");
    cfg.tls = cfg.h3 = true;
    if (max_conns)
        cfg.max_conns = max_conns;
    struct serve_handle *h;
    assert_int_equal(serve_start(&cfg, &h), 0);
    return h;
}

static int udp_to(int port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* The next datagram within wait_ms, its length (0: none came). */
static size_t recv_within(int fd, uint8_t *buf, size_t cap, int wait_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, wait_ms) != 1)
        return 0;
    ssize_t n = recv(fd, buf, cap, 0);
    return n > 0 ? (size_t)n : 0;
}

/* A long-header packet of 1200 bytes: version, an 8-byte DCID and SCID, then rest. */
static size_t long_packet(uint8_t *p, uint32_t version, uint8_t fill)
{
    memset(p, fill, 1200);
    p[0] = 0xc3; /* long header, Initial */
    p[1] = (uint8_t)(version >> 24), p[2] = (uint8_t)(version >> 16), p[3] = (uint8_t)(version >> 8);
    p[4] = (uint8_t)version;
    p[5] = 8; /* DCID */
    memcpy(p + 6, "DCIDdcid", 8);
    p[14] = 8; /* SCID */
    memcpy(p + 15, "SCIDscid", 8);
    return 1200;
}

static void test_config_and_pem(void **state)
{
    (void)state;
    struct serve_config cfg;
    assert_int_equal(serve_preset("null", &cfg), 0);
    cfg.h3 = true;
    char err[160];
    assert_int_equal(serve_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--h3"));
    assert_non_null(strstr(err, "--tls"));
    cfg.tls = true;
    assert_int_equal(serve_config_check(&cfg, err, sizeof err), 0);
    /* the stream preset is served over HTTP/3 too */
    assert_int_equal(serve_preset("stream", &cfg), 0);
    cfg.tls = cfg.h3 = true;
    assert_int_equal(serve_config_check(&cfg, err, sizeof err), 0);

    /* tls_ctx_pem: a server's generated pair as PEM; nothing for a client context */
    struct tls_server_config sc = {.host = "127.0.0.1"};
    struct tls_ctx *ctx;
    assert_int_equal(tls_server_new(&sc, &ctx, err, sizeof err), 0);
    char *cert, *key;
    assert_int_equal(tls_ctx_pem(ctx, &cert, &key), 0);
    assert_true(strncmp(cert, "-----BEGIN CERTIFICATE-----\n", 28) == 0);
    assert_non_null(strstr(key, "PRIVATE KEY-----\n"));
    free(cert);
    free(key);
    tls_ctx_free(ctx);
    struct tls_client_config cc = {.insecure = true};
    assert_int_equal(tls_client_new(&cc, &ctx, err, sizeof err), 0);
    assert_int_equal(tls_ctx_pem(ctx, &cert, &key), KNEE_EINVAL);
    assert_null(cert);
    assert_null(key);
    tls_ctx_free(ctx);

    /* the counters' JSON carries the h3 requests */
    struct serve_counters c = {.requests = 5, .h3 = 3};
    char json[640];
    assert_true(serve_counters_json(&c, "null", json, sizeof json) > 0);
    assert_non_null(strstr(json, "\"tls_failed\":0,\"h3\":3,\"uptime_s\":"));
}

static void test_udp_socket_and_stray_datagrams(void **state)
{
    (void)state;
    struct serve_handle *h = start_h3(0);
    int port = serve_port(h);
    /* the UDP port of the same number is the server's */
    int taken = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(taken, (struct sockaddr *)&a, sizeof a), -1);
    assert_int_equal(errno, EADDRINUSE);
    close(taken);

    int fd = udp_to(port);
    uint8_t pkt[1500], back[1500];
    /* a version it does not speak: Version Negotiation offering QUIC v1, the IDs swapped */
    size_t n = long_packet(pkt, 0x1a2a3a4a, 0);
    assert_int_equal(send(fd, pkt, n, 0), (ssize_t)n);
    size_t got = recv_within(fd, back, sizeof back, 5000);
    assert_true(got >= 7 + 8 + 8 + 4);
    assert_true(back[0] & 0x80);
    assert_memory_equal(back + 1, "\0\0\0\0", 4); /* version 0: Version Negotiation */
    assert_int_equal(back[5], 8);
    assert_memory_equal(back + 6, "SCIDscid", 8); /* its DCID is the client's SCID */
    assert_memory_equal(back + got - 4, "\0\0\0\1", 4);

    /* garbage shaped as a v1 Initial: a connection begins, cannot decrypt it, and is dropped
     * without a word; a short-header packet of no connection: nothing at all */
    n = long_packet(pkt, 1, 0x5a);
    assert_int_equal(send(fd, pkt, n, 0), (ssize_t)n);
    memset(pkt, 0x41, 100);
    assert_int_equal(send(fd, pkt, 100, 0), 100);
    assert_int_equal(recv_within(fd, back, sizeof back, 300), 0);
    struct serve_counters c;
    serve_counters(h, &c);
    assert_true(c.connections_total <= 1);
    assert_int_equal(c.connections, 0);
    assert_int_equal(c.h3, 0);
    close(fd);

    /* the TCP side is there, and stops as always */
    serve_stop(h, &c);
    assert_int_equal(c.connections, 0);
    assert_int_equal(c.requests, 0);
}

static void test_many_servers_on_kernel_ports(void **state)
{
    (void)state;
    /* each gets a port whose UDP number is free too (another one when it is not) */
    struct serve_handle *h[8];
    for (int i = 0; i < 8; i++)
        h[i] = start_h3(0);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < i; j++)
            assert_int_not_equal(serve_port(h[i]), serve_port(h[j]));
    for (int i = 0; i < 8; i++)
        serve_stop(h[i], NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_and_pem),
        cmocka_unit_test(test_udp_socket_and_stray_datagrams),
        cmocka_unit_test(test_many_servers_on_kernel_ports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
