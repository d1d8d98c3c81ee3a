/* Unit tests for the HTTP client side: request serialisation (exact bytes, refusals) and
 * response parsing (framing, split reads at every byte, interim responses, HEAD, EOF cases,
 * bytes after the response, body substrings across reads, Server-Timing) and the fast path
 * against http-parser alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "http/client.h"
#include "http/response.h"
#include "net/url.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *build(const char *url, const char *method, const char *const *h, size_t nh, const char *body,
                   bool keepalive, int *rc, char *err)
{
    struct url u;
    char uerr[128];
    assert_int_equal(url_parse(url, &u, uerr, sizeof uerr), 0);
    struct http_request_spec spec = {.method = method,
                                     .url = &u,
                                     .headers = h,
                                     .nheaders = nh,
                                     .body = body,
                                     .body_len = body ? strlen(body) : 0,
                                     .keepalive = keepalive};
    char *out = NULL;
    size_t len = 0;
    *rc = http_client_build_request(&spec, &out, &len, err, 256);
    url_release(&u);
    if (out)
        assert_int_equal(strlen(out), len);
    return out;
}

static void test_request_get(void **state)
{
    (void)state;
    int rc;
    char err[256];
    char *r = build("http://127.0.0.1:8080/a?b=1", NULL, NULL, 0, NULL, true, &rc, err);
    assert_int_equal(rc, 0);
    assert_string_equal(r, "GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: knee/" KNEE_VERSION "\r\n\r\n");
    free(r);
    r = build("http://h/", "HEAD", NULL, 0, NULL, false, &rc, err);
    assert_string_equal(r,
                        "HEAD / HTTP/1.1\r\nHost: h\r\nUser-Agent: knee/" KNEE_VERSION "\r\nConnection: close\r\n\r\n");
    free(r);
}

static void test_request_post_headers(void **state)
{
    (void)state;
    int rc;
    char err[256];
    const char *h[] = {"Content-Type:application/json", "Host: other  ", "X-A:\tb c"};
    char *r = build("http://[::1]:81/w", "POST", h, 3, "{\"a\":1}", true, &rc, err);
    assert_int_equal(rc, 0);
    assert_string_equal(r, "POST /w HTTP/1.1\r\nUser-Agent: knee/" KNEE_VERSION
                           "\r\nContent-Type: application/json\r\nHost: other\r\nX-A: b c\r\n"
                           "Content-Length: 7\r\n\r\n{\"a\":1}");
    free(r);
    r = build("http://h/", "PUT", NULL, 0, NULL, true, &rc, err);
    assert_non_null(strstr(r, "Content-Length: 0\r\n\r\n"));
    free(r);
}

static void test_request_refusals(void **state)
{
    (void)state;
    int rc;
    char err[256];
    const char *bad[][1] = {{"Content-Length: 5"}, {"Transfer-Encoding: chunked"}, {"Connection: close"}, {"NoColon"},
                            {"Bad Name: x"},       {"X: a\r\nInjected: 1"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *r = build("http://h/", "GET", bad[i], 1, NULL, true, &rc, err);
        if (rc != KNEE_EINVAL)
            fail_msg("accepted header '%s'", bad[i][0]);
        assert_null(r);
        assert_true(err[0] != '\0');
    }
    assert_null(build("http://h/", "GE T", NULL, 0, NULL, true, &rc, err));
    assert_int_equal(rc, KNEE_EINVAL);
    assert_true(http_is_token("PATCH", 5));
    assert_false(http_is_token("", 0));
    assert_false(http_is_token("a:b", 3));
}

/* Feed a whole message, split into pieces of `step` bytes. */
static enum http_feed feed_all(struct http_response *r, const char *msg, size_t len, size_t step, size_t *used_total)
{
    size_t off = 0;
    enum http_feed f = HTTP_FEED_MORE;
    while (off < len) {
        size_t n = len - off < step ? len - off : step;
        size_t used = 0;
        f = http_response_feed(r, msg + off, n, &used);
        off += used;
        if (f != HTTP_FEED_MORE)
            break;
        assert_int_equal(used, n);
    }
    *used_total = off;
    return f;
}

static void test_response_framing(void **state)
{
    (void)state;
    static const char *msgs[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nhello",
        "HTTP/1.1 204 No Content\r\n\r\n",
    };
    static const int status[] = {200, 404, 201, 204};
    static const uint64_t body[] = {5, 5, 5, 0};
    for (size_t m = 0; m < 4; m++) {
        size_t len = strlen(msgs[m]);
        for (size_t step = 1; step <= len; step++) {
            struct http_response r;
            http_response_init(&r, NULL, false);
            size_t used;
            enum http_feed f = feed_all(&r, msgs[m], len, step, &used);
            assert_int_equal(f, HTTP_FEED_DONE);
            assert_int_equal(used, len);
            assert_int_equal(r.status, status[m]);
            assert_int_equal(r.body_bytes, body[m]);
            assert_int_equal(r.bytes, len);
            assert_true(r.keep_alive);
        }
    }
}

static void test_response_head_and_close(void **state)
{
    (void)state;
    struct http_response r;
    size_t used;
    const char *head = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
    http_response_init(&r, NULL, true);
    assert_int_equal(http_response_feed(&r, head, strlen(head), &used), HTTP_FEED_DONE);
    assert_int_equal(r.body_bytes, 0);

    const char *close = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
    http_response_init(&r, NULL, false);
    assert_int_equal(http_response_feed(&r, close, strlen(close), &used), HTTP_FEED_DONE);
    assert_false(r.keep_alive);

    /* a body delimited by the close */
    const char *eofbody = "HTTP/1.1 200 OK\r\n\r\nuntil eof";
    http_response_init(&r, NULL, false);
    assert_int_equal(http_response_feed(&r, eofbody, strlen(eofbody), &used), HTTP_FEED_MORE);
    assert_int_equal(http_response_eof(&r), HTTP_FEED_DONE);
    assert_int_equal(r.body_bytes, 9);
    assert_false(r.keep_alive);

    /* EOF before anything, and in the middle of a Content-Length body */
    http_response_init(&r, NULL, false);
    assert_int_equal(http_response_eof(&r), HTTP_FEED_ERROR);
    assert_string_equal(r.error_name, "eof_before_response");
    const char *part = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123";
    http_response_init(&r, NULL, false);
    assert_int_equal(http_response_feed(&r, part, strlen(part), &used), HTTP_FEED_MORE);
    assert_int_equal(http_response_eof(&r), HTTP_FEED_ERROR);
    assert_string_equal(r.error_name, "eof_mid_response");
}

static void test_response_errors(void **state)
{
    (void)state;
    struct http_response r;
    size_t used;
    const char *garbage = "THIS IS NOT HTTP\r\n\r\n";
    http_response_init(&r, NULL, false);
    assert_int_equal(http_response_feed(&r, garbage, strlen(garbage), &used), HTTP_FEED_ERROR);
    assert_non_null(r.error_name);
    const char *upgrade = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n";
    http_response_init(&r, NULL, false);
    assert_int_equal(http_response_feed(&r, upgrade, strlen(upgrade), &used), HTTP_FEED_ERROR);
    /* a header beyond http-parser's cap */
    size_t big = 200 * 1024;
    char *huge = malloc(big + 64);
    int n = snprintf(huge, 64, "HTTP/1.1 200 OK\r\nX-Big: ");
    memset(huge + n, 'a', big);
    memcpy(huge + n + big, "\r\n\r\n", 5);
    http_response_init(&r, NULL, false);
    assert_int_equal(http_response_feed(&r, huge, strlen(huge), &used), HTTP_FEED_ERROR);
    free(huge);
    /* bytes after the response are not consumed */
    const char *extra = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA";
    http_response_init(&r, NULL, false);
    assert_int_equal(http_response_feed(&r, extra, strlen(extra), &used), HTTP_FEED_DONE);
    assert_int_equal(used, strlen(extra) - 5);
}

static void test_body_match(void **state)
{
    (void)state;
    struct http_matchers m;
    http_matchers_init(&m);
    assert_int_equal(http_matchers_add(&m, "aab", 3), 0);
    assert_int_equal(http_matchers_add(&m, "QUEUE_TIMEOUT", 13), 1);
    assert_int_equal(http_matchers_add(&m, "aab", 3), 0); /* the same needle again */
    assert_int_equal(http_matchers_add(&m, "", 0), KNEE_EINVAL);
    const char *msg = "HTTP/1.1 503 x\r\nContent-Length: 26\r\n\r\n{\"r\":\"QUEUE_TIMEOUT\",aaab}";
    size_t len = strlen(msg);
    for (size_t step = 1; step <= len; step++) {
        struct http_response r;
        http_response_init(&r, &m, false);
        size_t used;
        assert_int_equal(feed_all(&r, msg, len, step, &used), HTTP_FEED_DONE);
        assert_int_equal(r.matched, 3u);
    }
    const char *no = "HTTP/1.1 200 x\r\nContent-Length: 6\r\n\r\naabaXb";
    struct http_response r;
    http_response_init(&r, &m, false);
    size_t used;
    assert_int_equal(http_response_feed(&r, no, strlen(no), &used), HTTP_FEED_DONE);
    assert_int_equal(r.matched, 1u);
    http_matchers_release(&m);
}

static void test_server_timing(void **state)
{
    (void)state;
    struct http_server_timing st[8];
    const char *v = "db;dur=53, app;desc=\"a, b\";dur=47.2 , cache, miss;dur=abc, x;dur=\"1.5\"";
    size_t n = http_parse_server_timing(v, strlen(v), st, 8);
    assert_int_equal(n, 5);
    assert_string_equal(st[0].name, "db");
    assert_true(st[0].dur_ms == 53);
    assert_string_equal(st[1].name, "app");
    assert_true(fabs(st[1].dur_ms - 47.2) < 1e-12);
    assert_string_equal(st[2].name, "cache");
    assert_true(isnan(st[2].dur_ms));
    assert_true(isnan(st[3].dur_ms));
    assert_true(st[4].dur_ms == 1.5);
    /* two Server-Timing fields, split across reads */
    const char *msg = "HTTP/1.1 200 OK\r\nServer-Timing: queue;dur=1.5\r\nX: y\r\nserver-timing: "
                      "work;dur=2.25\r\nContent-Length: 0\r\n\r\n";
    size_t len = strlen(msg);
    for (size_t step = 1; step <= len; step += 3) {
        struct http_response r;
        http_response_init(&r, NULL, false);
        size_t used;
        assert_int_equal(feed_all(&r, msg, len, step, &used), HTTP_FEED_DONE);
        assert_int_equal(r.nst, 2);
        assert_string_equal(r.st[0].name, "queue");
        assert_true(r.st[0].dur_ms == 1.5);
        assert_string_equal(r.st[1].name, "work");
        assert_true(r.st[1].dur_ms == 2.25);
    }
}

/* Feed msg as a first piece of `first` bytes and then the rest, with the fast path allowed or
 * not (slow_only: http-parser alone). */
static enum http_feed feed_two(struct http_response *r, const char *msg, size_t len, size_t first, bool head, bool slow,
                               size_t *used)
{
    static struct http_matchers m;
    static bool ready;
    if (!ready) {
        http_matchers_init(&m);
        assert_int_equal(http_matchers_add(&m, "QUEUE_TIMEOUT", 13), 0);
        ready = true;
    }
    http_response_init(r, &m, head);
    r->slow_only = slow;
    size_t off = 0;
    enum http_feed f = HTTP_FEED_MORE;
    while (off < len && f == HTTP_FEED_MORE) {
        size_t want = off == 0 ? first : len - off;
        size_t u = 0;
        f = http_response_feed(r, msg + off, want < len - off ? want : len - off, &u);
        off += u;
    }
    if (f == HTTP_FEED_MORE)
        f = http_response_eof(r);
    *used = off;
    return f;
}

/* The fast path against http-parser alone: the same result for every response below and every
 * first read, and the fast path taken exactly where expected (the whole head in the first
 * read, a shape it knows). */
static void test_response_fast_path(void **state)
{
    (void)state;
    static const struct {
        const char *msg;
        bool head, fast; /* fast: the fast path takes it when its head comes whole */
    } cases[] = {
        /* nginx's answer: headers no matcher needs */
        {"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Mon, 30 Nov 2026 18:48:05 GMT\r\nContent-Type: "
         "text/plain\r\nContent-Length: 6\r\nConnection: keep-alive\r\n\r\nhello\n",
         false, true},
        /* headers a matcher needs: Server-Timing (two fields) and a body substring */
        {"HTTP/1.1 503 Service Unavailable\r\nServer-Timing: queue;dur=1.5\r\nX-A: b\r\nserver-timing: "
         "work;dur=2.25, cache\r\nContent-Length: 20\r\n\r\nerror: QUEUE_TIMEOUT",
         false, true},
        {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false, true},
        {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", true, true},
        {"HTTP/1.1 200 OK\r\n\r\n", true, true},
        {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false, true},
        /* bytes after the response stay unconsumed */
        {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n", false, true},
        /* http-parser's: chunked, interim, no body by status, body until EOF, HTTP/1.0,
         * Connection lists, duplicates, obs-fold, trailing whitespace, errors */
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", false, false},
        {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nhello", false, false},
        {"HTTP/1.1 204 No Content\r\n\r\n", false, false},
        {"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", false, false},
        {"HTTP/1.1 200 OK\r\n\r\nuntil eof", false, false},
        {"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false, false},
        {"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nok", false, false},
        {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", false, false},
        {"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 2\r\n\r\nok", false, false},
        {"HTTP/1.1 200 OK\r\nContent-Length: 2 \r\n\r\nok", false, false},
        {"HTTP/1.1 200 OK\r\nUpgrade: h2c\r\nContent-Length: 2\r\n\r\nok", false, false},
        {"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", false, false},
        {"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\nok", false, false},
        {"HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 2\r\n\r\nok", false, false},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *msg = cases[c].msg;
        size_t len = strlen(msg);
        for (size_t first = 1; first <= len; first++) {
            struct http_response fast, slow;
            size_t uf, us;
            enum http_feed ff = feed_two(&fast, msg, len, first, cases[c].head, false, &uf);
            enum http_feed fs = feed_two(&slow, msg, len, first, cases[c].head, true, &us);
            assert_false(slow.fast);
            assert_int_equal(ff, fs);
            assert_int_equal(uf, us);
            assert_int_equal(fast.status, slow.status);
            assert_int_equal(fast.complete, slow.complete);
            assert_int_equal(fast.keep_alive, slow.keep_alive);
            assert_int_equal(fast.bytes, slow.bytes);
            assert_int_equal(fast.body_bytes, slow.body_bytes);
            assert_int_equal(fast.matched, slow.matched);
            assert_int_equal(fast.nst, slow.nst);
            for (size_t i = 0; i < fast.nst; i++) {
                assert_string_equal(fast.st[i].name, slow.st[i].name);
                assert_true(isnan(fast.st[i].dur_ms) ? isnan(slow.st[i].dur_ms)
                                                     : fast.st[i].dur_ms == slow.st[i].dur_ms);
            }
            if (ff == HTTP_FEED_ERROR)
                assert_string_equal(fast.error_name, slow.error_name);
            const char *end = strstr(msg, "\r\n\r\n");
            bool whole_head = end && first >= (size_t)(end - msg) + 4;
            assert_int_equal(fast.fast, cases[c].fast && whole_head);
        }
    }
    /* what the fast path found, spelled out */
    struct http_response r;
    size_t used;
    const char *st = cases[1].msg;
    assert_int_equal(feed_two(&r, st, strlen(st), strlen(st), false, false, &used), HTTP_FEED_DONE);
    assert_true(r.fast);
    assert_int_equal(r.status, 503);
    assert_int_equal(r.nst, 3);
    assert_string_equal(r.st[2].name, "cache");
    assert_true(isnan(r.st[2].dur_ms));
    assert_int_equal(r.matched, 1);
    assert_true(r.keep_alive);
    const char *extra = cases[6].msg;
    assert_int_equal(feed_two(&r, extra, strlen(extra), strlen(extra), false, false, &used), HTTP_FEED_DONE);
    assert_int_equal(used, strlen("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
    /* a body that continues after the first read, then EOF in its middle */
    const char *part = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123";
    http_response_init(&r, NULL, false);
    assert_int_equal(http_response_feed(&r, part, strlen(part), &used), HTTP_FEED_MORE);
    assert_true(r.fast);
    assert_true(r.headers_done);
    assert_int_equal(r.body_bytes, 4);
    assert_int_equal(http_response_eof(&r), HTTP_FEED_ERROR);
    assert_string_equal(r.error_name, "eof_mid_response");
}

/* --- random responses around the fast path's line, compared with http-parser alone --- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#define PICK(s, a) ((a)[rng_next(s) % (sizeof(a) / sizeof((a)[0]))])

static size_t cat(char *buf, size_t off, size_t cap, const char *s, size_t len)
{
    if (off + len > cap)
        len = cap - off;
    memcpy(buf + off, s, len);
    return off + len;
}

/* Usually a piece the fast path accepts, one time in `odds` one it declines. */
#define PICK2(s, good, bad, odds) (rng_next(s) % (odds) ? PICK(s, good) : PICK(s, bad))

/* One response built from pieces on both sides of what the fast path accepts; its length. */
static size_t random_response(uint64_t *s, char *buf, size_t cap)
{
    static const char *status[] = {"HTTP/1.1 200 OK",       "HTTP/1.1 503 Busy", "HTTP/1.1 404 Not Found",
                                   "HTTP/1.1 599 \x80\xff", "HTTP/1.1 200 ",     "HTTP/1.1 299 x"};
    static const char *status_bad[] = {
        "HTTP/1.1 200",        "HTTP/1.0 200 OK", "HTTP/1.1 204 No",   "HTTP/1.1 304 NM",
        "HTTP/1.1 100 Go",     "HTTP/1.1 101 Sw", "HTTP/1.1 600 x",    "HTTP/1.1 199 x",
        "HTTP/1.1 2000 x",     "HTTP/1.1 20 x",   "HTTP/1.1 200 O\tK", "HTTP/1.1 200 O\x7fK",
        "HTTP/1.1 200 O\x01K", "http/1.1 200 OK", "HTTP/2 200 OK",     "HTTP/1.1  200 OK",
    };
    static const char *crlf[] = {"\r\n"};
    static const char *eol_bad[] = {"\n", "\r", "\r\r\n", "\n\r"};
    static const char *names[] = {"Content-Length", "content-length", "CONTENT-LENGTH", "Connection",
                                  "connection",     "Server-Timing",  "server-timing",  "X-A",
                                  "Content-Type",   "Date",           "Keep-Alive",     "Content-Lengthx",
                                  "Server",         "Content-Typ",    "Connectio",      "X~!#$%&'*+-.^_`|"};
    static const char *names_bad[] = {"Transfer-Encoding", "Upgrade", "Proxy-Connection", "Bad Name",
                                      "Conn\x80ion",       "",        "Server-Timing ",   "X\"Y"};
    static const char *sep[] = {": ", ":", ":\t", ":  ", ": \t"};
    static const char *sep_bad[] = {" : ", " :", "\t:"};
    static const char *cl[] = {"0", "5", "2", "10", "00", "3", "1000", "20", "999999999999999999"};
    static const char *cl_bad[] = {"x", "5 ", "1 2", "-1", "9999999999999999999", "", "+5", "5\t"};
    static const char *conn[] = {"close", "keep-alive", "Close", "KEEP-ALIVE"};
    static const char *conn_bad[] = {"upgrade", "keep-alive, close", "close ", "", "clos", "close\t", "Upgrade"};
    static const char *te[] = {"chunked", "gzip", "identity", "gzip, chunked"};
    static const char *st[] = {"a;dur=1", "b;dur=2.5, c", "x;desc=\"q,r\";dur=3", "z;dur=-1", "\x80;dur=1"};
    static const char *st_bad[] = {"", "y;dur=4 ", "y;dur=4\t"};
    static const char *other[] = {"v", "v\x80w", "v\tw", "a b c", "\xff"};
    static const char *other_bad[] = {"v\x7fw", "v\x01w", "", "v ", "v\rw", "v\t"};
    static const char *body[] = {"",
                                 "hello",
                                 "ok",
                                 "QUEUE_TIMEOUT",
                                 "xxQUEUE_TIMEOUTyy",
                                 "5\r\nhello\r\n0\r\n\r\n",
                                 "0123456789",
                                 "HTTP/1.1 200 OK\r\n\r\n"};
    size_t off = 0;
    const char *l = PICK2(s, status, status_bad, 4);
    off = cat(buf, off, cap, l, strlen(l));
    const char *e = PICK2(s, crlf, eol_bad, 16);
    off = cat(buf, off, cap, e, strlen(e));
    const char *b = PICK(s, body);
    char blen[24];
    snprintf(blen, sizeof blen, "%zu", strlen(b));
    size_t nh = rng_next(s) % 7, at_cl = rng_next(s) % 4 ? rng_next(s) % (nh + 1) : SIZE_MAX;
    for (size_t h = 0; h <= nh; h++) {
        if (h == at_cl) {
            off = cat(buf, off, cap, "Content-Length: ", 16);
            off = cat(buf, off, cap, blen, strlen(blen));
            off = cat(buf, off, cap, "\r\n", 2);
        }
        if (h == nh)
            break;
        const char *n = PICK2(s, names, names_bad, 12);
        off = cat(buf, off, cap, n, strlen(n));
        const char *sp = PICK2(s, sep, sep_bad, 24);
        off = cat(buf, off, cap, sp, strlen(sp));
        const char *v;
        if (strcasecmp(n, "content-length") == 0)
            v = PICK2(s, cl, cl_bad, 8);
        else if (strcasecmp(n, "connection") == 0 || strcasecmp(n, "proxy-connection") == 0)
            v = PICK2(s, conn, conn_bad, 6);
        else if (strcasecmp(n, "transfer-encoding") == 0)
            v = PICK(s, te);
        else if (strcasecmp(n, "server-timing") == 0)
            v = PICK2(s, st, st_bad, 8);
        else
            v = PICK2(s, other, other_bad, 12);
        off = cat(buf, off, cap, v, strlen(v));
        if (rng_next(s) % 32 == 0)
            off = cat(buf, off, cap, "\r\n folded", 9);
        e = PICK2(s, crlf, eol_bad, 32);
        off = cat(buf, off, cap, e, strlen(e));
    }
    e = PICK2(s, crlf, eol_bad, 16);
    off = cat(buf, off, cap, e, strlen(e));
    off = cat(buf, off, cap, b, strlen(b));
    if (rng_next(s) % 4 == 0) {
        b = PICK(s, body);
        off = cat(buf, off, cap, b, strlen(b));
    }
    return off;
}

static void compare_fast_slow(const char *msg, size_t len, size_t first, bool head, size_t *nfast)
{
    struct http_response fast, slow;
    size_t uf, us;
    enum http_feed ff = feed_two(&fast, msg, len, first, head, false, &uf);
    enum http_feed fs = feed_two(&slow, msg, len, first, head, true, &us);
    *nfast += fast.fast;
    if (ff != fs || uf != us || fast.status != slow.status || fast.complete != slow.complete ||
        fast.bytes != slow.bytes || fast.body_bytes != slow.body_bytes || fast.matched != slow.matched ||
        fast.nst != slow.nst || (fast.complete && fast.keep_alive != slow.keep_alive) ||
        (ff == HTTP_FEED_ERROR && strcmp(fast.error_name, slow.error_name) != 0))
        fail_msg("fast path != http-parser (head %d, first %zu): %.*s", head, first, (int)len, msg);
    for (size_t i = 0; i < fast.nst; i++) {
        assert_string_equal(fast.st[i].name, slow.st[i].name);
        assert_true(isnan(fast.st[i].dur_ms) ? isnan(slow.st[i].dur_ms) : fast.st[i].dur_ms == slow.st[i].dur_ms);
    }
}

static void test_response_fast_path_random(void **state)
{
    (void)state;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    const char *n_env = getenv("KNEE_FAST_PATH_CASES"); /* more, by hand: a longer hunt */
    size_t cases = n_env ? strtoull(n_env, NULL, 10) : 20000, nfast = 0, runs = 0;
    char buf[2048];
    for (size_t c = 0; c < cases; c++) {
        size_t len = random_response(&s, buf, sizeof buf);
        if (len == 0)
            continue;
        bool head = rng_next(&s) % 4 == 0;
        size_t firsts[] = {len, 1 + rng_next(&s) % len, len / 2 ? len / 2 : 1};
        for (size_t k = 0; k < 3; k++, runs++)
            compare_fast_slow(buf, len, firsts[k], head, &nfast);
    }
    /* the pieces reach both sides of the line: a fast path never taken would test nothing */
    print_message("fast path taken in %zu of %zu feeds\n", nfast, runs);
    assert_true(nfast > runs / 40);
    assert_true(nfast < runs / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_get),
        cmocka_unit_test(test_request_post_headers),
        cmocka_unit_test(test_request_refusals),
        cmocka_unit_test(test_response_framing),
        cmocka_unit_test(test_response_head_and_close),
        cmocka_unit_test(test_response_errors),
        cmocka_unit_test(test_body_match),
        cmocka_unit_test(test_server_timing),
        cmocka_unit_test(test_response_fast_path),
        cmocka_unit_test(test_response_fast_path_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
