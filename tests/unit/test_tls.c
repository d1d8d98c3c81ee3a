/* Unit tests for src/tls with real peers: knee serve --tls started in-process (serve_start),
 * certificates made by the module itself (good, expired, for another name), and small
 * misbehaving peers in threads of this test (one that never answers the handshake, one that
 * closes during it, one that sends garbage after it). The client side is driven through the
 * transport probe (tests/probe), an epoll loop over the non-blocking API as knee run's worker
 * will drive it. Each failure must come back with its own reason; nothing may crash. Times are
 * never asserted beyond "was measured". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "probe/probe.h"
#include "serve/serve.h"
#include "tls/tls.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------------------- */

static char tmpdir[64];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A certificate for names, valid from nb_s to na_s (relative to now), as files in tmpdir. */
static void make_cert(const char *tag, const char *const *names, size_t n, int64_t nb_s, int64_t na_s, char *cert,
                      char *key)
{
    char *cp, *kp, err[200];
    assert_int_equal(tls_cert_self_signed(names, n, nb_s, na_s, &cp, &kp, err, sizeof err), 0);
    snprintf(cert, 128, "%s/%s.pem", tmpdir, tag);
    snprintf(key, 128, "%s/%s.key", tmpdir, tag);
    write_file(cert, cp);
    write_file(key, kp);
    free(cp);
    free(kp);
}

static struct serve_handle *start_server(bool tls, bool h2, const char *cert, const char *key)
{
    struct serve_config cfg;
    assert_int_equal(serve_preset("null", &cfg), 0);
    snprintf(cfg.listen, sizeof cfg.listen, "127.0.0.1:0");
    cfg.tls = tls;
    cfg.h2 = h2;
    cfg.cert_file = cert;
    cfg.key_file = key;
    struct serve_handle *h;
    assert_int_equal(serve_start(&cfg, &h), 0);
    return h;
}

static struct tls_ctx *client(const struct tls_client_config *cfg)
{
    struct tls_ctx *ctx;
    char err[256];
    int r = tls_client_new(cfg, &ctx, err, sizeof err);
    if (r)
        fail_msg("tls_client_new: %s", err);
    return ctx;
}

/* One exchange with the probe: n requests on one connection. */
static void probe(struct tls_ctx *ctx, struct tls_session_cache *cache, const char *url, unsigned n,
                  struct probe_result *res)
{
    struct probe_config pc = {.url = url,
                              .tls = ctx,
                              .cache = cache,
                              .requests = n,
                              .handshake_timeout_ns = 2 * NS_PER_S,
                              .timeout_ns = 10 * NS_PER_S};
    assert_int_equal(probe_run(&pc, res), 0);
}

static void url_of(char *buf, size_t len, const char *scheme, int port, const char *host)
{
    snprintf(buf, len, "%s://%s:%d/", scheme, host, port);
}

/* A listening socket on a free loopback port; *port receives it. */
static int listen_any(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    return fd;
}

static int setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/knee-test-tls-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- configuration ---------------------------------------------------------------------- */

static void test_versions(void **state)
{
    (void)state;
    int lo, hi;
    char err[200];
    assert_int_equal(tls_parse_versions("1.2", &lo, &hi, err, sizeof err), 0);
    assert_int_equal(lo, TLS_V1_2);
    assert_int_equal(hi, 0);
    assert_int_equal(tls_parse_versions("1.2:1.3", &lo, &hi, err, sizeof err), 0);
    assert_int_equal(lo, TLS_V1_2);
    assert_int_equal(hi, TLS_V1_3);
    assert_int_equal(tls_parse_versions("1.3:1.2", &lo, &hi, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--tls-version"));
    const char *bad[] = {"", "1.4", "1", "1.2:", ":1.3", "1.2:1.3:1.3", "tls1.2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(tls_parse_versions(bad[i], &lo, &hi, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(tls_version_name(TLS_V1_3), "TLSv1.3");
    assert_non_null(strstr(tls_library_version(), "OpenSSL"));
    for (int r = 0; r < TLS_R_COUNT; r++)
        assert_true(r == TLS_R_NONE || strncmp(tls_reason_name((enum tls_reason)r), "tls_", 4) == 0);
}

static void test_bad_client_config(void **state)
{
    (void)state;
    struct tls_ctx *ctx;
    char err[300];
    struct tls_client_config c = {.cafile = "/nonexistent/ca.pem"};
    assert_int_equal(tls_client_new(&c, &ctx, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--cacert /nonexistent/ca.pem"));
    struct tls_client_config d = {.ciphers = "NO-SUCH-CIPHER"};
    assert_int_equal(tls_client_new(&d, &ctx, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--ciphers"));
    struct tls_client_config e = {.ciphers = "TLS_NO_SUCH_SUITE"};
    assert_int_equal(tls_client_new(&e, &ctx, err, sizeof err), KNEE_EINVAL);
    struct tls_client_config f = {.min_version = TLS_V1_3, .max_version = TLS_V1_2};
    assert_int_equal(tls_client_new(&f, &ctx, err, sizeof err), KNEE_EINVAL);
    /* a file that is not PEM */
    char path[128];
    snprintf(path, sizeof path, "%s/not.pem", tmpdir);
    write_file(path, "hello\n");
    struct tls_client_config g = {.cafile = path};
    assert_int_equal(tls_client_new(&g, &ctx, err, sizeof err), KNEE_EINVAL);
    /* the server side: a key that does not match, a missing file */
    const char *names[] = {"localhost"};
    char c1[128], k1[128], c2[128], k2[128];
    make_cert("m1", names, 1, -60, 3600, c1, k1);
    make_cert("m2", names, 1, -60, 3600, c2, k2);
    struct tls_server_config s1 = {.cert_file = c1, .key_file = k2};
    assert_int_equal(tls_server_new(&s1, &ctx, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "does not match"));
    struct tls_server_config s2 = {.cert_file = "/nonexistent.pem", .key_file = k1};
    assert_int_equal(tls_server_new(&s2, &ctx, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--cert /nonexistent.pem"));
    /* names a certificate cannot carry */
    const char *bad[] = {"bad name"};
    char *cp, *kp;
    assert_int_equal(tls_cert_self_signed(bad, 1, 0, 60, &cp, &kp, err, sizeof err), KNEE_EINVAL);
}

/* ---- handshakes with knee serve --tls ----------------------------------------------------- */

static void test_self_signed_insecure(void **state)
{
    (void)state;
    struct serve_handle *h = start_server(true, false, NULL, NULL);
    bool self;
    const char *fp = serve_tls_fingerprint(h, &self);
    assert_true(self);
    assert_int_equal(strlen(fp), 95);
    char url[64];
    url_of(url, sizeof url, "https", serve_port(h), "127.0.0.1");
    struct tls_client_config c = {.insecure = true};
    struct tls_ctx *ctx = client(&c);
    struct probe_result r;
    probe(ctx, NULL, url, 5, &r);
    assert_string_equal(r.reason, "none");
    assert_string_equal(r.phase, "done");
    assert_int_equal(r.completed, 5);
    assert_int_equal(r.ok, 5);
    assert_string_equal(r.proto, "http/1.1"); /* the server does not speak h2 */
    assert_string_equal(r.version, "TLSv1.3");
    assert_true(r.tls_ns > 0);
    assert_true(r.connect_ns > 0);
    /* verification on (the default) against the system store: this certificate is nobody's */
    struct tls_client_config v = {0};
    struct tls_ctx *vctx = client(&v);
    probe(vctx, NULL, url, 1, &r);
    assert_string_equal(r.phase, "tls");
    assert_string_equal(r.reason, "tls_verify");
    assert_true(strlen(r.detail) > 0);
    assert_int_equal(r.sent, 0);
    struct serve_counters sc;
    serve_stop(h, &sc);
    assert_int_equal(sc.requests, 5);
    tls_ctx_free(ctx);
    tls_ctx_free(vctx);
}

static void test_verification(void **state)
{
    (void)state;
    const char *names[] = {"localhost", "127.0.0.1"};
    char cert[128], key[128];
    make_cert("good", names, 2, -60, 3600, cert, key);
    struct serve_handle *h = start_server(true, false, cert, key);
    bool self = true;
    serve_tls_fingerprint(h, &self);
    assert_false(self);
    struct tls_client_config c = {.cafile = cert};
    struct tls_ctx *ctx = client(&c);
    char url[64];
    struct probe_result r;
    url_of(url, sizeof url, "https", serve_port(h), "127.0.0.1"); /* by IP address SAN */
    probe(ctx, NULL, url, 1, &r);
    assert_string_equal(r.reason, "none");
    assert_int_equal(r.ok, 1);
    url_of(url, sizeof url, "https", serve_port(h), "localhost"); /* by DNS SAN, with SNI */
    probe(ctx, NULL, url, 1, &r);
    assert_string_equal(r.reason, "none");
    serve_stop(h, NULL);

    /* the right chain, the wrong name */
    const char *other[] = {"other.example"};
    make_cert("other", other, 1, -60, 3600, cert, key);
    h = start_server(true, false, cert, key);
    struct tls_client_config c2 = {.cafile = cert};
    struct tls_ctx *ctx2 = client(&c2);
    url_of(url, sizeof url, "https", serve_port(h), "127.0.0.1");
    probe(ctx2, NULL, url, 1, &r);
    assert_string_equal(r.reason, "tls_hostname");
    assert_string_equal(r.phase, "tls");
    /* ... which --insecure ignores */
    struct tls_client_config c3 = {.cafile = cert, .insecure = true};
    struct tls_ctx *ctx3 = client(&c3);
    probe(ctx3, NULL, url, 1, &r);
    assert_string_equal(r.reason, "none");
    serve_stop(h, NULL);

    /* expired an hour ago */
    make_cert("expired", names, 2, -7200, -3600, cert, key);
    h = start_server(true, false, cert, key);
    struct tls_client_config c4 = {.cafile = cert};
    struct tls_ctx *ctx4 = client(&c4);
    url_of(url, sizeof url, "https", serve_port(h), "127.0.0.1");
    probe(ctx4, NULL, url, 1, &r);
    assert_string_equal(r.reason, "tls_expired");
    assert_non_null(strstr(r.detail, "expired"));
    serve_stop(h, NULL);
    tls_ctx_free(ctx);
    tls_ctx_free(ctx2);
    tls_ctx_free(ctx3);
    tls_ctx_free(ctx4);
}

static void test_alpn_versions_ciphers(void **state)
{
    (void)state;
    struct serve_handle *h2 = start_server(true, true, NULL, NULL);
    struct serve_handle *h1 = start_server(true, false, NULL, NULL);
    char url2[64], url1[64];
    url_of(url2, sizeof url2, "https", serve_port(h2), "127.0.0.1");
    url_of(url1, sizeof url1, "https", serve_port(h1), "127.0.0.1");
    struct probe_result r;
    /* ALPN offers h2 and http/1.1: the server decides */
    struct tls_client_config any = {.insecure = true};
    struct tls_ctx *ctx = client(&any);
    probe(ctx, NULL, url2, 3, &r);
    assert_string_equal(r.reason, "none");
    assert_string_equal(r.proto, "h2");
    assert_int_equal(r.ok, 3);
    probe(ctx, NULL, url1, 1, &r);
    assert_string_equal(r.proto, "http/1.1");
    /* --http1.1 against an h2 server */
    struct tls_client_config h1only = {.insecure = true, .alpn = TLS_ALPN_HTTP1};
    struct tls_ctx *c1 = client(&h1only);
    probe(c1, NULL, url2, 1, &r);
    assert_string_equal(r.reason, "none");
    assert_string_equal(r.proto, "http/1.1");
    /* --http2 against a server that speaks only HTTP/1.1: no protocol agreed */
    struct tls_client_config h2only = {.insecure = true, .alpn = TLS_ALPN_H2};
    struct tls_ctx *c2 = client(&h2only);
    probe(c2, NULL, url1, 1, &r);
    assert_string_equal(r.phase, "tls");
    assert_string_equal(r.reason, "tls_alpn");
    /* --tls-version 1.2:1.2 and a TLS 1.2 cipher; a TLS 1.3 suite */
    struct tls_client_config v12 = {
        .insecure = true, .min_version = TLS_V1_2, .max_version = TLS_V1_2, .ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256"};
    struct tls_ctx *c3 = client(&v12);
    probe(c3, NULL, url1, 1, &r);
    assert_string_equal(r.reason, "none");
    assert_string_equal(r.version, "TLSv1.2");
    assert_string_equal(r.cipher, "ECDHE-ECDSA-AES128-GCM-SHA256");
    struct tls_client_config v13 = {.insecure = true, .ciphers = "TLS_CHACHA20_POLY1305_SHA256"};
    struct tls_ctx *c4 = client(&v13);
    probe(c4, NULL, url1, 1, &r);
    assert_string_equal(r.version, "TLSv1.3");
    assert_string_equal(r.cipher, "TLS_CHACHA20_POLY1305_SHA256");
    /* a TLS 1.2 cipher the server's EC key cannot use: the server says so with an alert */
    struct tls_client_config rsa = {
        .insecure = true, .max_version = TLS_V1_2, .ciphers = "ECDHE-RSA-AES128-GCM-SHA256"};
    struct tls_ctx *c5 = client(&rsa);
    probe(c5, NULL, url1, 1, &r);
    assert_string_equal(r.reason, "tls_alert");
    assert_non_null(strstr(r.detail, "handshake failure"));
    serve_stop(h1, NULL);
    serve_stop(h2, NULL);
    tls_ctx_free(ctx);
    tls_ctx_free(c1);
    tls_ctx_free(c2);
    tls_ctx_free(c3);
    tls_ctx_free(c4);
    tls_ctx_free(c5);
}

static void test_resumption(void **state)
{
    (void)state;
    struct serve_handle *h = start_server(true, false, NULL, NULL);
    char url[64];
    url_of(url, sizeof url, "https", serve_port(h), "127.0.0.1");
    for (int v = 0; v < 2; v++) { /* TLS 1.3 tickets, then TLS 1.2 tickets */
        struct tls_client_config c = {.insecure = true, .resume = true, .max_version = v ? TLS_V1_2 : 0};
        struct tls_ctx *ctx = client(&c);
        struct tls_session_cache cache;
        tls_session_cache_init(&cache);
        struct probe_result r;
        probe(ctx, &cache, url, 1, &r);
        assert_string_equal(r.reason, "none");
        assert_false(r.resumed);
        assert_true(cache.stored >= 1);
        assert_non_null(cache.session);
        for (int k = 0; k < 3; k++) {
            probe(ctx, &cache, url, 1, &r);
            assert_string_equal(r.reason, "none");
            assert_true(r.resumed);
        }
        /* another target's cache (empty) is not resumed */
        struct tls_session_cache other;
        tls_session_cache_init(&other);
        probe(ctx, &other, url, 1, &r);
        assert_false(r.resumed);
        tls_session_cache_release(&other);
        tls_session_cache_release(&cache);
        tls_ctx_free(ctx);
    }
    /* resumption off: a cache is ignored, every handshake is full */
    struct tls_client_config off = {.insecure = true};
    struct tls_ctx *ctx = client(&off);
    struct tls_session_cache cache;
    tls_session_cache_init(&cache);
    struct probe_result r;
    for (int k = 0; k < 2; k++) {
        probe(ctx, &cache, url, 1, &r);
        assert_false(r.resumed);
    }
    assert_int_equal(cache.stored, 0);
    tls_session_cache_release(&cache);
    tls_ctx_free(ctx);
    serve_stop(h, NULL);
}

/* ---- misbehaving peers ------------------------------------------------------------------- */

enum peer_mode {
    PEER_CLOSE,          /* accept, then close at once (during the client's handshake) */
    PEER_GARBAGE_RAW,    /* TLS handshake, then bytes that are not TLS records on the socket */
    PEER_GARBAGE_INSIDE, /* TLS handshake, then bytes that are not HTTP inside TLS */
};

struct peer {
    int lfd;
    enum peer_mode mode;
    struct tls_ctx *ctx;
    pthread_t t;
};

static void *peer_main(void *arg)
{
    struct peer *p = arg;
    int fd = accept(p->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    if (p->mode == PEER_CLOSE) {
        close(fd);
        return NULL;
    }
    struct tls_conn tc;
    if (tls_conn_server(&tc, p->ctx, fd) == 0 && tls_conn_handshake(&tc) == TLS_IO_OK) { /* blocking socket */
        char buf[4096];
        size_t got;
        tls_conn_read(&tc, buf, sizeof buf, &got); /* the request */
        if (p->mode == PEER_GARBAGE_RAW) {
            static const char junk[] = "\x17\x03\x03\x00\x20this is no TLS record at all!!!!";
            ssize_t n = send(fd, junk, sizeof junk - 1, MSG_NOSIGNAL);
            (void)n;
        } else {
            static const char junk[] = "SPDY/9 700 Whatever\r\n\r\n";
            size_t put;
            tls_conn_write(&tc, junk, sizeof junk - 1, &put);
        }
        /* keep the connection until the client has seen it and closed */
        while (recv(fd, buf, sizeof buf, 0) > 0)
            ;
    }
    tls_conn_release(&tc);
    close(fd);
    return NULL;
}

static void peer_start(struct peer *p, enum peer_mode mode, int *port)
{
    memset(p, 0, sizeof *p);
    p->mode = mode;
    p->lfd = listen_any(port);
    struct tls_server_config sc = {0};
    char err[200];
    assert_int_equal(tls_server_new(&sc, &p->ctx, err, sizeof err), 0);
    assert_int_equal(pthread_create(&p->t, NULL, peer_main, p), 0);
}

static void peer_stop(struct peer *p)
{
    pthread_join(p->t, NULL);
    close(p->lfd);
    tls_ctx_free(p->ctx);
}

static void test_bad_peers(void **state)
{
    (void)state;
    struct tls_client_config c = {.insecure = true};
    struct tls_ctx *ctx = client(&c);
    char url[64];
    struct probe_result r;
    int port;
    struct peer p;

    peer_start(&p, PEER_CLOSE, &port);
    url_of(url, sizeof url, "https", port, "127.0.0.1");
    probe(ctx, NULL, url, 1, &r);
    peer_stop(&p);
    assert_string_equal(r.phase, "tls");
    assert_true(strcmp(r.reason, "tls_closed") == 0 || strcmp(r.reason, "tls_socket") == 0); /* EOF or RST */

    peer_start(&p, PEER_GARBAGE_RAW, &port);
    url_of(url, sizeof url, "https", port, "127.0.0.1");
    probe(ctx, NULL, url, 1, &r);
    peer_stop(&p);
    assert_string_equal(r.phase, "http");
    assert_string_equal(r.reason, "tls_protocol");
    assert_int_equal(r.completed, 0);

    peer_start(&p, PEER_GARBAGE_INSIDE, &port);
    url_of(url, sizeof url, "https", port, "127.0.0.1");
    probe(ctx, NULL, url, 1, &r);
    peer_stop(&p);
    assert_string_equal(r.phase, "http");
    assert_string_equal(r.reason, "http_invalid");

    /* a peer that accepts (the kernel does, from its backlog) and never says a word */
    int lfd = listen_any(&port);
    url_of(url, sizeof url, "https", port, "127.0.0.1");
    struct probe_config pc = {.url = url, .tls = ctx, .handshake_timeout_ns = 200 * NS_PER_MS};
    assert_int_equal(probe_run(&pc, &r), 0);
    assert_string_equal(r.phase, "tls");
    assert_string_equal(r.reason, "tls_handshake_timeout");
    close(lfd);

    /* a plain HTTP server on an https URL */
    struct serve_handle *h = start_server(false, false, NULL, NULL);
    url_of(url, sizeof url, "https", serve_port(h), "127.0.0.1");
    probe(ctx, NULL, url, 1, &r);
    assert_string_equal(r.phase, "tls");
    assert_string_equal(r.reason, "tls_protocol");
    assert_non_null(strstr(r.detail, "wrong version number"));
    serve_stop(h, NULL);
    tls_ctx_free(ctx);
}

/* knee serve --tls keeps its HTTP/1.1 behaviour: a stalled handshake ends with the header
 * timeout, a bad request gets its status through TLS, keep-alive and pipelining work. */
static void test_serve_tls_behaviour(void **state)
{
    (void)state;
    struct serve_config cfg;
    assert_int_equal(serve_preset("quiet", &cfg), 0);
    snprintf(cfg.listen, sizeof cfg.listen, "127.0.0.1:0");
    cfg.tls = true;
    cfg.header_timeout_ns = 300 * NS_PER_MS;
    struct serve_handle *h;
    assert_int_equal(serve_start(&cfg, &h), 0);
    /* a client that connects and never starts its handshake */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)serve_port(h))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char b[64];
    assert_int_equal(recv(fd, b, sizeof b, 0), 0); /* closed by the server, in time */
    close(fd);
    struct serve_counters sc;
    serve_counters(h, &sc);
    assert_int_equal(sc.timeouts, 1);
    /* work requests with Server-Timing, through TLS */
    char url[96];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/work?ms=1", serve_port(h));
    struct tls_client_config c = {.insecure = true};
    struct tls_ctx *ctx = client(&c);
    struct probe_result r;
    probe(ctx, NULL, url, 20, &r);
    assert_string_equal(r.reason, "none");
    assert_int_equal(r.ok, 20);
    assert_non_null(strstr(r.server_timing, "work;dur="));
    /* a request the parser refuses: the 414 arrives inside TLS */
    char longurl[4000];
    int n = snprintf(longurl, sizeof longurl, "https://127.0.0.1:%d/", serve_port(h));
    memset(longurl + n, 'a', 3000);
    longurl[n + 3000] = '\0';
    probe(ctx, NULL, longurl, 1, &r);
    assert_int_equal(r.last_status, 414);
    serve_stop(h, &sc);
    assert_int_equal(sc.ok, 20);
    assert_int_equal(sc.bad_requests, 1);
    assert_int_equal(sc.connections, 0);
    tls_ctx_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_bad_client_config),
        cmocka_unit_test(test_self_signed_insecure),
        cmocka_unit_test(test_verification),
        cmocka_unit_test(test_alpn_versions_ciphers),
        cmocka_unit_test(test_resumption),
        cmocka_unit_test(test_bad_peers),
        cmocka_unit_test(test_serve_tls_behaviour),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
