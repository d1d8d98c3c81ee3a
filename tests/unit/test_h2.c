/* Unit tests for src/h2 (and knee serve --h2) with real peers: knee serve in-process speaking
 * h2c, and a scripted HTTP/2 peer in a thread of this test that answers one stream, resets
 * two (an error, a refusal) and refuses a fourth with GOAWAY, or sends garbage frames. The client side is the
 * transport probe (tests/probe), driven as knee run's worker will drive src/h2. Counts and
 * reasons are asserted exactly; times only as "measured". The client session's flush is also driven
 * directly over a socket pair read by nghttp2's server session. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "h2/h2.h"
#include "probe/probe.h"
#include "serve/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct serve_handle *start_server(const char *preset, bool h2, unsigned pool)
{
    struct serve_config cfg;
    assert_int_equal(serve_preset(preset, &cfg), 0);
    snprintf(cfg.listen, sizeof cfg.listen, "127.0.0.1:0");
    cfg.h2 = h2;
    if (pool)
        cfg.pool = pool;
    struct serve_handle *h;
    assert_int_equal(serve_start(&cfg, &h), 0);
    return h;
}

static void run(const char *url, unsigned n, unsigned streams, struct probe_result *r)
{
    struct probe_config pc = {
        .url = url, .proto = PROBE_H2C, .requests = n, .streams = streams, .timeout_ns = 20 * NS_PER_S};
    assert_int_equal(probe_run(&pc, r), 0);
}

/* Poll the server's counters until pred holds (bounded): never sleep for the server. */
static bool await_counters(struct serve_handle *h, bool (*pred)(const struct serve_counters *, uint64_t), uint64_t arg)
{
    uint64_t deadline = clock_now_ns() + 10 * NS_PER_S;
    struct serve_counters c;
    do {
        serve_counters(h, &c);
        if (pred(&c, arg))
            return true;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    } while (clock_now_ns() < deadline);
    return false;
}

/* ---- requests ------------------------------------------------------------------------------ */

static const nghttp2_nv *field(const struct h2_request *r, const char *name)
{
    const nghttp2_nv *nva = r->nva;
    for (size_t i = 0; i < r->nnv; i++)
        if (nva[i].namelen == strlen(name) && memcmp(nva[i].name, name, nva[i].namelen) == 0)
            return &nva[i];
    return NULL;
}

static void assert_field(const struct h2_request *r, const char *name, const char *value)
{
    const nghttp2_nv *f = field(r, name);
    if (!f)
        fail_msg("no field %s", name);
    if (f->valuelen != strlen(value) || memcmp(f->value, value, f->valuelen) != 0)
        fail_msg("%s: '%.*s', expected '%s'", name, (int)f->valuelen, f->value, value);
}

static void test_request_build(void **state)
{
    (void)state;
    struct url u;
    char err[200];
    assert_int_equal(url_parse("https://example.com:8443/a/b?c=1", &u, err, sizeof err), 0);
    const char *headers[] = {"X-Trace:  abc ", "Accept: */*"};
    struct http_request_spec spec = {.method = "POST",
                                     .url = &u,
                                     .headers = headers,
                                     .nheaders = 2,
                                     .body = "hello",
                                     .body_len = 5,
                                     .keepalive = true};
    struct h2_request r;
    assert_int_equal(h2_request_build(&spec, &r, err, sizeof err), 0);
    const nghttp2_nv *nva = r.nva;
    /* pseudo-headers first, in this order (RFC 9113 §8.3) */
    assert_memory_equal(nva[0].name, ":method", 7);
    assert_memory_equal(nva[3].name, ":path", 5);
    assert_field(&r, ":method", "POST");
    assert_field(&r, ":scheme", "https");
    assert_field(&r, ":authority", "example.com:8443");
    assert_field(&r, ":path", "/a/b?c=1");
    assert_field(&r, "x-trace", "abc");
    assert_field(&r, "accept", "*/*");
    assert_field(&r, "content-length", "5");
    assert_non_null(field(&r, "user-agent"));
    assert_null(field(&r, "host"));
    assert_int_equal(r.body_len, 5);
    h2_request_release(&r);

    /* Host overrides :authority; GET has no content-length; http scheme */
    url_release(&u);
    assert_int_equal(url_parse("http://127.0.0.1:80/", &u, err, sizeof err), 0);
    const char *host[] = {"Host: api.internal", "User-Agent: me"};
    struct http_request_spec s2 = {.url = &u, .headers = host, .nheaders = 2, .keepalive = true};
    assert_int_equal(h2_request_build(&s2, &r, err, sizeof err), 0);
    assert_field(&r, ":scheme", "http");
    assert_field(&r, ":authority", "api.internal");
    assert_field(&r, "user-agent", "me");
    assert_null(field(&r, "content-length"));
    h2_request_release(&r);

    /* connection-specific fields are refused; HTTP/1.1's refusals hold too */
    const char *bad[] = {"Upgrade: h2c",      "Keep-Alive: 5",     "TE: gzip",
                         "Connection: close", "Content-Length: 3", "Bad Name: x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct http_request_spec s3 = {.url = &u, .headers = &bad[i], .nheaders = 1, .keepalive = true};
        assert_int_equal(h2_request_build(&s3, &r, err, sizeof err), KNEE_EINVAL);
    }
    const char *te[] = {"TE: trailers"};
    struct http_request_spec s4 = {.url = &u, .headers = te, .nheaders = 1, .keepalive = true};
    assert_int_equal(h2_request_build(&s4, &r, err, sizeof err), 0);
    h2_request_release(&r);
    url_release(&u);
    for (int k = 0; k < H2_R_COUNT; k++)
        assert_true(k == H2_R_NONE || strncmp(h2_reason_name((enum h2_reason)k), "h2_", 3) == 0);
    assert_string_equal(h2_error_code_name(NGHTTP2_REFUSED_STREAM), "REFUSED_STREAM");
    assert_true(strlen(h2_library_version()) > 0);
}

/* ---- against knee serve --h2 (h2c) ----------------------------------------------------------- */

static void test_serve_h2c(void **state)
{
    (void)state;
    struct serve_handle *h = start_server("null", true, 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", serve_port(h));
    struct probe_result r;
    run(url, 200, 16, &r);
    assert_string_equal(r.reason, "none");
    assert_string_equal(r.proto, "h2");
    assert_int_equal(r.sent, 200);
    assert_int_equal(r.completed, 200);
    assert_int_equal(r.ok, 200);
    assert_int_equal(r.body_bytes, 400); /* "ok" each */
    assert_int_equal(r.server_max_streams, 128);
    assert_int_equal(r.max_open, 16); /* the user's cap, below the server's */
    assert_int_equal(r.failed_streams, 0);
    /* HTTP/1.1 on the same server still works */
    struct probe_config pc = {.url = url, .requests = 3};
    assert_int_equal(probe_run(&pc, &r), 0);
    assert_string_equal(r.proto, "http/1.1");
    assert_int_equal(r.ok, 3);
    struct serve_counters sc;
    serve_stop(h, &sc);
    assert_int_equal(sc.requests, 203);
    assert_int_equal(sc.ok, 203);
    assert_int_equal(sc.connections_total, 2);
    assert_int_equal(sc.connections, 0);
}

static void test_serve_h2_pipeline(void **state)
{
    (void)state;
    /* the quiet preset: pool of 4, Server-Timing on each answer */
    struct serve_handle *h = start_server("quiet", true, 0);
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/work?ms=1", serve_port(h));
    struct probe_result r;
    run(url, 40, 8, &r);
    assert_string_equal(r.reason, "none");
    assert_int_equal(r.ok, 40);
    assert_non_null(strstr(r.server_timing, "queue;dur="));
    assert_non_null(strstr(r.server_timing, "work;dur="));
    /* /health and /stats as streams; a bad parameter is a 400 on its stream only */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/health", serve_port(h));
    run(url, 2, 2, &r);
    assert_int_equal(r.ok, 2);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/work?ms=abc", serve_port(h));
    run(url, 3, 3, &r);
    assert_string_equal(r.reason, "none");
    assert_int_equal(r.completed, 3);
    assert_int_equal(r.last_status, 400);
    /* a POST body larger than the server's stream window: the client's body waits for it */
    static char body[200000];
    memset(body, 'x', sizeof body);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/work?ms=0", serve_port(h));
    struct probe_config pc = {.url = url,
                              .proto = PROBE_H2C,
                              .method = "POST",
                              .body = body,
                              .body_len = sizeof body,
                              .requests = 1,
                              .timeout_ns = 20 * NS_PER_S};
    assert_int_equal(probe_run(&pc, &r), 0);
    assert_string_equal(r.reason, "none");
    assert_int_equal(r.ok, 1);
    assert_int_equal(r.h2.stalls, 1);
    struct serve_counters sc;
    serve_stop(h, &sc);
    assert_int_equal(sc.requests, 40 + 2 + 3 + 1);
    assert_int_equal(sc.ok, 41);
    assert_int_equal(sc.bad_requests, 3);
}

static bool cancelled_and_failed(const struct serve_counters *c, uint64_t n)
{
    return c->cancelled + c->write_failures >= n && c->active == 0 && c->waiting == 0;
}

/* The client gives up on its streams (RST_STREAM CANCEL): those waiting for a slot are
 * cancelled at the server, those working finish into nothing (write failures), as for
 * HTTP/1.1 clients that leave. */
static void test_serve_h2_client_leaves(void **state)
{
    (void)state;
    struct serve_handle *h = start_server("quiet", true, 4);
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/work?ms=400", serve_port(h));
    struct probe_config pc = {
        .url = url, .proto = PROBE_H2C, .requests = 8, .streams = 8, .timeout_ns = 150 * NS_PER_MS};
    struct probe_result r;
    assert_int_equal(probe_run(&pc, &r), 0);
    assert_string_equal(r.reason, "h2_timeout");
    assert_int_equal(r.by_reason[H2_R_TIMEOUT], 8);
    assert_int_equal(r.completed, 0);
    assert_true(await_counters(h, cancelled_and_failed, 8));
    struct serve_counters sc;
    serve_stop(h, &sc);
    assert_int_equal(sc.requests, 8);
    assert_int_equal(sc.cancelled, 4);
    assert_int_equal(sc.write_failures, 4);
    assert_int_equal(sc.ok, 0);
}

struct drain {
    struct serve_handle *h;
    pthread_t t;
};

static bool active_4(const struct serve_counters *c, uint64_t n)
{
    return c->active + c->waiting >= n;
}

static void *drain_main(void *arg)
{
    struct drain *d = arg;
    if (await_counters(d->h, active_4, 6))
        serve_shutdown(d->h);
    return NULL;
}

/* knee serve stops gracefully with GOAWAY: the streams it took are answered. */
static void test_serve_h2_goaway_drain(void **state)
{
    (void)state;
    struct serve_handle *h = start_server("quiet", true, 4);
    struct drain d = {.h = h};
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/work?ms=100", serve_port(h));
    assert_int_equal(pthread_create(&d.t, NULL, drain_main, &d), 0);
    struct probe_result r;
    run(url, 6, 6, &r);
    pthread_join(d.t, NULL);
    assert_int_equal(r.h2.goaway, 1);
    assert_int_equal(r.completed, 6);
    assert_int_equal(r.ok, 6);
    struct serve_counters sc;
    serve_stop(h, &sc);
    assert_int_equal(sc.ok, 6);
}

static void test_h2c_to_http1_server(void **state)
{
    (void)state;
    struct serve_handle *h = start_server("null", false, 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", serve_port(h));
    struct probe_result r;
    run(url, 2, 2, &r);
    assert_string_equal(r.reason, "h2_not_h2");
    assert_non_null(strstr(r.detail, "h2_not_h2"));
    assert_int_equal(r.completed, 0);
    assert_int_equal(r.sent, 1); /* one stream before the server's SETTINGS, which never came */
    assert_int_equal(r.by_reason[H2_R_NOT_H2], 1);
    serve_stop(h, NULL);
}

/* ---- a scripted HTTP/2 peer --------------------------------------------------------------- */

enum script { SCRIPT_MIXED, SCRIPT_GARBAGE };

struct peer {
    int lfd;
    enum script script;
    pthread_t t;
};

static bool send_all(int fd, const void *p, size_t n)
{
    return send(fd, p, n, MSG_NOSIGNAL) == (ssize_t)n;
}

/* Read the client's preface and frames until it has sent `want` HEADERS frames. */
static bool read_headers(int fd, unsigned want)
{
    static unsigned char buf[65536];
    size_t len = 0, pos = 24;
    unsigned seen = 0;
    while (seen < want) {
        ssize_t n = recv(fd, buf + len, sizeof buf - len, 0);
        if (n <= 0)
            return false;
        len += (size_t)n;
        while (pos + 9 <= len) {
            size_t flen = (size_t)buf[pos] << 16 | (size_t)buf[pos + 1] << 8 | buf[pos + 2];
            if (pos + 9 + flen > len)
                break;
            seen += buf[pos + 3] == NGHTTP2_HEADERS;
            pos += 9 + flen;
        }
    }
    return true;
}

static void *peer_main(void *arg)
{
    struct peer *p = arg;
    int fd = accept(p->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    static const unsigned char settings[] = {0, 0, 0, NGHTTP2_SETTINGS, 0, 0, 0, 0, 0};
    static const unsigned char settings_ack[] = {0, 0, 0, NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, 0, 0, 0};
    /* SETTINGS first, as a server must: the client opens one stream until they arrive */
    bool ok = send_all(fd, settings, sizeof settings);
    if (ok && p->script == SCRIPT_MIXED && read_headers(fd, 4)) {
        /* stream 1: 200 (HPACK static index 8, ":status: 200"), END_STREAM | END_HEADERS */
        static const unsigned char h1[] = {0, 0, 1, NGHTTP2_HEADERS, 0x05, 0, 0, 0, 1, 0x88};
        /* stream 3: RST_STREAM PROTOCOL_ERROR; stream 5: RST_STREAM REFUSED_STREAM */
        static const unsigned char rst3[] = {0, 0, 4, NGHTTP2_RST_STREAM, 0, 0, 0, 0, 3, 0, 0, 0, 1};
        static const unsigned char rst5[] = {0, 0, 4, NGHTTP2_RST_STREAM, 0, 0, 0, 0, 5, 0, 0, 0, 7};
        /* GOAWAY, last stream 5, NO_ERROR: stream 7 was never processed */
        static const unsigned char ga[] = {0, 0, 8, NGHTTP2_GOAWAY, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0};
        ok = send_all(fd, settings_ack, sizeof settings_ack) && send_all(fd, h1, sizeof h1) &&
             send_all(fd, rst3, sizeof rst3) && send_all(fd, rst5, sizeof rst5) && send_all(fd, ga, sizeof ga);
    } else if (ok && p->script == SCRIPT_GARBAGE && read_headers(fd, 1)) {
        /* a SETTINGS frame with a length that is not a multiple of 6: FRAME_SIZE_ERROR */
        static const unsigned char junk[] = {0, 0, 5, NGHTTP2_SETTINGS, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5};
        ok = send_all(fd, junk, sizeof junk);
    }
    (void)ok;
    char b[4096];
    while (recv(fd, b, sizeof b, 0) > 0) /* until the client closes */
        ;
    close(fd);
    return NULL;
}

static void peer_start(struct peer *p, enum script s, int *port)
{
    p->script = s;
    p->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(p->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(p->lfd, 4), 0);
    socklen_t len = sizeof a;
    getsockname(p->lfd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&p->t, NULL, peer_main, p), 0);
}

static void test_rst_goaway_garbage(void **state)
{
    (void)state;
    struct peer p;
    int port;
    char url[64];
    struct probe_result r;

    peer_start(&p, SCRIPT_MIXED, &port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    run(url, 4, 4, &r);
    pthread_join(p.t, NULL);
    close(p.lfd);
    assert_int_equal(r.sent, 4);
    assert_int_equal(r.completed, 1);
    assert_int_equal(r.last_status, 200);
    assert_int_equal(r.failed_streams, 3);
    assert_int_equal(r.by_reason[H2_R_NONE], 1);
    assert_int_equal(r.by_reason[H2_R_RST_STREAM], 1);
    assert_int_equal(r.by_reason[H2_R_REFUSED], 1);
    assert_int_equal(r.by_reason[H2_R_GOAWAY], 1);
    assert_int_equal(r.h2.rst_received, 2);
    assert_int_equal(r.h2.goaway, 1);

    peer_start(&p, SCRIPT_GARBAGE, &port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    run(url, 1, 1, &r);
    pthread_join(p.t, NULL);
    close(p.lfd);
    assert_string_equal(r.reason, "h2_protocol");
    assert_int_equal(r.by_reason[H2_R_PROTOCOL], 1);
    assert_int_equal(r.completed, 0);
}

/* ---- the flush: frames gathered into one write, the rest kept while the socket is full ---- */

struct gather_io {
    int fd;
    unsigned writes; /* write_fn calls that took bytes */
};

static long gather_write(void *io, const uint8_t *data, size_t len)
{
    struct gather_io *g = io;
    ssize_t n = send(g->fd, data, len, MSG_NOSIGNAL);
    if (n > 0) {
        g->writes++;
        return (long)n;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
}

static unsigned gather_closed;
static void gather_on_close(struct h2_stream *s)
{
    (void)s;
    gather_closed++;
}

static unsigned srv_requests; /* request HEADERS frames nghttp2's server session parsed */
static int srv_on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    (void)session, (void)ud;
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
        srv_requests++;
    return 0;
}

/* What the client wrote so far (read from the socket's other end) into the server session. */
static void srv_take(nghttp2_session *srv, int fd)
{
    uint8_t buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        assert_int_equal(nghttp2_session_mem_recv(srv, buf, (size_t)n), n);
}

/* The server's frames (SETTINGS, acknowledgements) into the client. */
static void srv_give(nghttp2_session *srv, struct h2_client *h)
{
    const uint8_t *data;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(srv, &data)) > 0)
        assert_int_equal(h2_client_feed(h, data, (size_t)n), 0);
}

/* Over a real socket pair read by nghttp2's server session: the preface waits while the socket
 * is full (H2_IO_WANT_WRITE, want_write) and leaves whole after it drained; 20 streams submitted
 * together leave in one write, and the server parses every HEADERS. */
static void test_client_flush_gathers(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    /* fill the client's side with bytes the test reads back and drops */
    char junk[4096];
    memset(junk, 'x', sizeof junk);
    size_t filled = 0;
    ssize_t k;
    while ((k = send(sv[0], junk, sizeof junk, MSG_NOSIGNAL)) > 0)
        filled += (size_t)k;
    assert_true(filled > 0);

    struct gather_io io = {.fd = sv[0]};
    struct h2_callbacks cb = {.on_close = gather_on_close};
    struct h2_client *h = h2_client_new(&cb, gather_write, &io, NULL, 0);
    assert_int_equal(h2_client_flush(h), H2_IO_WANT_WRITE);
    assert_true(h2_client_want_write(h));
    while (filled > 0) { /* drain the junk: the socket can take the preface now */
        ssize_t n = read(sv[1], junk, filled < sizeof junk ? filled : sizeof junk);
        if (n > 0)
            filled -= (size_t)n;
    }
    assert_int_equal(h2_client_flush(h), H2_IO_OK);
    assert_false(h2_client_want_write(h));

    nghttp2_session_callbacks *cbs;
    assert_int_equal(nghttp2_session_callbacks_new(&cbs), 0);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, srv_on_frame_recv);
    nghttp2_session *srv;
    assert_int_equal(nghttp2_session_server_new(&srv, cbs, NULL), 0);
    nghttp2_session_callbacks_del(cbs);
    nghttp2_settings_entry iv = {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100};
    assert_int_equal(nghttp2_submit_settings(srv, NGHTTP2_FLAG_NONE, &iv, 1), 0);
    srv_take(srv, sv[1]); /* the preface and the client's SETTINGS parse */
    srv_give(srv, h);
    assert_int_equal(h2_client_capacity(h), 100);

    struct url u;
    char err[200];
    assert_int_equal(url_parse("http://127.0.0.1/g", &u, err, sizeof err), 0);
    struct http_request_spec spec = {.method = "GET", .url = &u, .keepalive = true};
    struct h2_request req;
    assert_int_equal(h2_request_build(&spec, &req, err, sizeof err), 0);
    struct h2_stream st[20];
    memset(st, 0, sizeof st);
    for (int i = 0; i < 20; i++)
        assert_int_equal(h2_client_submit(h, &req, &st[i]), 0);
    unsigned before = io.writes;
    assert_int_equal(h2_client_flush(h), H2_IO_OK);
    assert_int_equal(io.writes - before, 1); /* 20 HEADERS and the SETTINGS ack: one write */
    for (int i = 0; i < 20; i++)
        assert_true(st[i].headers_ns > 0);
    srv_take(srv, sv[1]);
    assert_int_equal(srv_requests, 20);

    h2_client_fail(h, H2_R_CLOSED);
    assert_int_equal(gather_closed, 20);
    h2_client_free(h);
    h2_request_release(&req);
    url_release(&u);
    nghttp2_session_del(srv);
    close(sv[0]);
    close(sv[1]);
}

/* ---- the server's SETTINGS (a limit of 0) and the response header budget ---- */

static unsigned srv_rst[16]; /* RST_STREAM frames the server parsed, by error code */
static int srv_on_frame_recv_rst(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    (void)session, (void)ud;
    if (frame->hd.type == NGHTTP2_RST_STREAM && frame->rst_stream.error_code < 16)
        srv_rst[frame->rst_stream.error_code]++;
    return 0;
}

static struct h2_stream *budget_closed[4];
static unsigned budget_nclosed;
static void budget_on_close(struct h2_stream *s)
{
    if (budget_nclosed < 4)
        budget_closed[budget_nclosed] = s;
    budget_nclosed++;
}

/* n header fields "x-big-<i>" of `value` bytes each (value shared) */
static void big_fields(nghttp2_nv *nv, size_t n, char names[][16], const char *value)
{
    nv[0] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE};
    for (size_t i = 1; i <= n; i++) {
        snprintf(names[i], 16, "x-big-%zu", i % 2); /* two names: the deflater indexes them */
        nv[i] =
            (nghttp2_nv){(uint8_t *)names[i], (uint8_t *)value, strlen(names[i]), strlen(value), NGHTTP2_NV_FLAG_NONE};
    }
}

/* Over a socket pair with nghttp2's server session: before the server's SETTINGS the client
 * knows no limit (1 stream); SETTINGS_MAX_CONCURRENT_STREAMS 0 leaves it no room (it took
 * "1" for the limit); raised, room again. A response whose header fields pass
 * H2_MAX_HEADER_BYTES (30 fields of 3,000 bytes: 91 KB, a few hundred bytes of HPACK once
 * indexed) closes its stream with H2_R_HEADERS and a RST_STREAM(CANCEL) to the server; the
 * session goes on, and a response of 20 such fields (61 KB) completes. */
static void test_client_room_and_header_budget(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    struct gather_io io = {.fd = sv[0]};
    struct h2_callbacks cb = {.on_close = budget_on_close};
    struct h2_client *h = h2_client_new(&cb, gather_write, &io, NULL, 0);
    assert_int_equal(h2_client_flush(h), H2_IO_OK);
    assert_false(h2_client_settings_seen(h));
    assert_int_equal(h2_client_server_max_streams(h), 1);
    assert_false(h2_client_no_room(h));

    nghttp2_session_callbacks *cbs;
    assert_int_equal(nghttp2_session_callbacks_new(&cbs), 0);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, srv_on_frame_recv_rst);
    nghttp2_option *opt; /* a server that sends header blocks larger than nghttp2's 64 KB default */
    assert_int_equal(nghttp2_option_new(&opt), 0);
    nghttp2_option_set_max_send_header_block_length(opt, 1u << 20);
    nghttp2_session *srv;
    assert_int_equal(nghttp2_session_server_new2(&srv, cbs, NULL, opt), 0);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    nghttp2_settings_entry iv = {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 0};
    assert_int_equal(nghttp2_submit_settings(srv, NGHTTP2_FLAG_NONE, &iv, 1), 0);
    srv_take(srv, sv[1]);
    srv_give(srv, h);
    assert_true(h2_client_settings_seen(h));
    assert_int_equal(h2_client_server_max_streams(h), 0);
    assert_true(h2_client_no_room(h));
    assert_int_equal(h2_client_capacity(h), 0);
    iv.value = 10;
    assert_int_equal(nghttp2_submit_settings(srv, NGHTTP2_FLAG_NONE, &iv, 1), 0);
    srv_give(srv, h);
    assert_false(h2_client_no_room(h));
    assert_int_equal(h2_client_capacity(h), 10);

    struct url u;
    char err[200];
    assert_int_equal(url_parse("http://127.0.0.1/g", &u, err, sizeof err), 0);
    struct http_request_spec spec = {.method = "GET", .url = &u, .keepalive = true};
    struct h2_request req;
    assert_int_equal(h2_request_build(&spec, &req, err, sizeof err), 0);
    struct h2_stream st[2];
    memset(st, 0, sizeof st);
    for (int i = 0; i < 2; i++)
        assert_int_equal(h2_client_submit(h, &req, &st[i]), 0);
    assert_int_equal(h2_client_flush(h), H2_IO_OK);
    srv_take(srv, sv[1]);

    static char value[3001], names[31][16];
    memset(value, 'v', 3000);
    nghttp2_nv nv[31];
    big_fields(nv, 30, names, value);
    assert_int_equal(nghttp2_submit_response(srv, st[0].id, nv, 31, NULL), 0);
    big_fields(nv, 20, names, value);
    assert_int_equal(nghttp2_submit_response(srv, st[1].id, nv, 21, NULL), 0);
    srv_give(srv, h);
    assert_int_equal(budget_nclosed, 2);
    assert_ptr_equal(budget_closed[0], &st[0]);
    assert_int_equal(st[0].reason, H2_R_HEADERS);
    assert_ptr_equal(budget_closed[1], &st[1]);
    assert_int_equal(st[1].reason, H2_R_NONE);
    assert_int_equal(st[1].status, 200);
    assert_true(st[1].header_bytes > 60000 && st[1].header_bytes <= H2_MAX_HEADER_BYTES);
    assert_true(h2_client_usable(h));
    assert_int_equal(h2_client_flush(h), H2_IO_OK);
    srv_take(srv, sv[1]);
    assert_int_equal(srv_rst[NGHTTP2_CANCEL], 1);
    assert_int_equal(srv_rst[NGHTTP2_INTERNAL_ERROR], 0);

    h2_client_free(h);
    h2_request_release(&req);
    url_release(&u);
    nghttp2_session_del(srv);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_build),
        cmocka_unit_test(test_serve_h2c),
        cmocka_unit_test(test_serve_h2_pipeline),
        cmocka_unit_test(test_serve_h2_client_leaves),
        cmocka_unit_test(test_serve_h2_goaway_drain),
        cmocka_unit_test(test_h2c_to_http1_server),
        cmocka_unit_test(test_rst_goaway_garbage),
        cmocka_unit_test(test_client_flush_gathers),
        cmocka_unit_test(test_client_room_and_header_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
