/* Unit tests for src/http/request (server-side parsing) and server_response (heads):
 * one request per call, pipelining, byte-at-a-time input, the 400/413/414/431 caps,
 * keep-alive rules, and the path/query helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "http/request.h"
#include "http/server_response.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t parse_all(struct http_request_parser *p, const char *s, enum http_request_state *st)
{
    return http_request_parse(p, s, strlen(s), st);
}

static void test_simple_get(void **state)
{
    (void)state;
    struct http_request_parser p;
    http_request_parser_init(&p, 0, 1024);
    const char *req = "GET /work?ms=20 HTTP/1.1\r\nHost: x\r\n\r\n";
    enum http_request_state st;
    size_t n = parse_all(&p, req, &st);
    assert_int_equal(st, HTTP_REQUEST_DONE);
    assert_int_equal(n, strlen(req));
    assert_string_equal(p.req.url, "/work?ms=20");
    assert_int_equal(p.req.method, HTTP_GET);
    assert_true(p.req.keep_alive);
    assert_int_equal(p.req.http_minor, 1);
}

static void test_keep_alive_rules(void **state)
{
    (void)state;
    struct {
        const char *req;
        bool keep;
    } cases[] = {
        {"GET / HTTP/1.1\r\n\r\n", true},
        {"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", false},
        {"GET / HTTP/1.1\r\nconnection: Close\r\n\r\n", false},
        {"GET / HTTP/1.0\r\n\r\n", false},
        {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct http_request_parser p;
        http_request_parser_init(&p, 0, 1024);
        enum http_request_state st;
        parse_all(&p, cases[i].req, &st);
        assert_int_equal(st, HTTP_REQUEST_DONE);
        assert_int_equal(p.req.keep_alive, cases[i].keep);
    }
}

static void test_pipelined_requests_one_at_a_time(void **state)
{
    (void)state;
    const char *a = "GET /a HTTP/1.1\r\n\r\n";
    const char *b = "POST /b HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
    const char *c = "GET /c HTTP/1.1\r\n\r\n";
    char buf[256];
    snprintf(buf, sizeof buf, "%s%s%s", a, b, c);
    struct http_request_parser p;
    http_request_parser_init(&p, 0, 1024);
    size_t off = 0, len = strlen(buf);
    const char *want[] = {"/a", "/b", "/c"};
    for (int i = 0; i < 3; i++) {
        enum http_request_state st;
        off += http_request_parse(&p, buf + off, len - off, &st);
        assert_int_equal(st, HTTP_REQUEST_DONE);
        assert_string_equal(p.req.url, want[i]);
        if (i == 0)
            assert_int_equal(off, strlen(a));
        if (i == 1) {
            assert_int_equal(off, strlen(a) + strlen(b));
            assert_int_equal(p.body_bytes, 5);
        }
        /* Without http_request_next() nothing more is consumed. */
        size_t again = http_request_parse(&p, buf + off, len - off, &st);
        assert_int_equal(again, 0);
        http_request_next(&p);
    }
    assert_int_equal(off, len);
}

static void test_byte_at_a_time(void **state)
{
    (void)state;
    const char *req = "GET /slow?x=1 HTTP/1.1\r\nHost: a\r\nX-Long: 0123456789\r\n\r\n";
    struct http_request_parser p;
    http_request_parser_init(&p, 0, 1024);
    size_t len = strlen(req);
    for (size_t i = 0; i < len; i++) {
        enum http_request_state st;
        size_t n = http_request_parse(&p, req + i, 1, &st);
        assert_int_equal(n, 1);
        if (i + 1 < len) {
            assert_int_equal(st, HTTP_REQUEST_MORE);
            assert_true(http_request_partial(&p));
        } else {
            assert_int_equal(st, HTTP_REQUEST_DONE);
        }
    }
    assert_string_equal(p.req.url, "/slow?x=1");
}

static void test_malformed_is_400(void **state)
{
    (void)state;
    const char *bad[] = {
        "GARBAGE\r\n\r\n",
        "GET / HTTP/9.9.9\r\n\r\n",
        "GET / HTTP/1.1\r\nBad Header Without Colon\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
        "\x01\x02\x03\x04",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct http_request_parser p;
        http_request_parser_init(&p, 0, 1024);
        enum http_request_state st;
        parse_all(&p, bad[i], &st);
        assert_int_equal(st, HTTP_REQUEST_ERROR);
        assert_int_equal(p.error_status, 400);
    }
}

static char *big_header_request(size_t value_len)
{
    char *buf = malloc(value_len + 64);
    int n = snprintf(buf, 64, "GET / HTTP/1.1\r\nX-Big: ");
    memset(buf + n, 'a', value_len);
    strcpy(buf + n + value_len, "\r\n\r\n");
    return buf;
}

static void test_oversized_headers_are_431(void **state)
{
    (void)state;
    char *req = big_header_request(9000);
    struct http_request_parser p;
    http_request_parser_init(&p, 8192, 1024);
    enum http_request_state st;
    parse_all(&p, req, &st);
    assert_int_equal(st, HTTP_REQUEST_ERROR);
    assert_int_equal(p.error_status, 431);

    /* The same, fed in small pieces: the cap holds across calls. */
    http_request_parser_init(&p, 8192, 1024);
    size_t len = strlen(req), off = 0;
    st = HTTP_REQUEST_MORE;
    while (off < len && st == HTTP_REQUEST_MORE) {
        size_t k = len - off < 100 ? len - off : 100;
        off += http_request_parse(&p, req + off, k, &st);
    }
    assert_int_equal(st, HTTP_REQUEST_ERROR);
    assert_int_equal(p.error_status, 431);
    free(req);

    /* Just below the cap is fine. */
    req = big_header_request(7000);
    http_request_parser_init(&p, 8192, 1024);
    parse_all(&p, req, &st);
    assert_int_equal(st, HTTP_REQUEST_DONE);
    free(req);

    /* Many small headers add up too (line overhead counted). */
    char many[20000];
    size_t n = (size_t)snprintf(many, sizeof many, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < 2000; i++)
        n += (size_t)snprintf(many + n, sizeof many - n, "a:b\r\n");
    snprintf(many + n, sizeof many - n, "\r\n");
    http_request_parser_init(&p, 8192, 1024);
    parse_all(&p, many, &st);
    assert_int_equal(st, HTTP_REQUEST_ERROR);
    assert_int_equal(p.error_status, 431);
}

static void test_long_url_is_414_and_big_body_413(void **state)
{
    (void)state;
    char req[HTTP_REQUEST_URL_MAX + 100];
    int n = snprintf(req, sizeof req, "GET /");
    memset(req + n, 'u', HTTP_REQUEST_URL_MAX);
    strcpy(req + n + HTTP_REQUEST_URL_MAX, " HTTP/1.1\r\n\r\n");
    struct http_request_parser p;
    http_request_parser_init(&p, 16384, 1024);
    enum http_request_state st;
    parse_all(&p, req, &st);
    assert_int_equal(st, HTTP_REQUEST_ERROR);
    assert_int_equal(p.error_status, 414);

    http_request_parser_init(&p, 0, 10);
    parse_all(&p, "POST / HTTP/1.1\r\nContent-Length: 20\r\n\r\n01234567890123456789", &st);
    assert_int_equal(st, HTTP_REQUEST_ERROR);
    assert_int_equal(p.error_status, 413);

    http_request_parser_init(&p, 0, 100);
    parse_all(&p, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", &st);
    assert_int_equal(st, HTTP_REQUEST_DONE);
    assert_int_equal(p.body_bytes, 5);
}

static void test_path_and_query(void **state)
{
    (void)state;
    struct http_request r = {0};
    double v = -1;
#define SET(u)                                                                                                         \
    do {                                                                                                               \
        snprintf(r.url, sizeof r.url, "%s", u);                                                                        \
        r.url_len = strlen(r.url);                                                                                     \
    } while (0)
    SET("/work?ms=20");
    assert_true(http_request_path_is(&r, "/work"));
    assert_false(http_request_path_is(&r, "/wor"));
    assert_int_equal(http_request_query_double(&r, "ms", 1e6, &v), 0);
    assert_true(v == 20.0);
    SET("/x?fanout=3&ms=0.5#frag");
    assert_int_equal(http_request_query_double(&r, "ms", 1e6, &v), 0);
    assert_true(v == 0.5);
    assert_int_equal(http_request_query_double(&r, "fanout", 1e6, &v), 0);
    assert_true(v == 3.0);
    assert_int_equal(http_request_query_double(&r, "m", 1e6, &v), KNEE_ENOTFOUND);
    SET("/work?ms=-1");
    assert_int_equal(http_request_query_double(&r, "ms", 1e6, &v), KNEE_EFORMAT);
    SET("/work?ms=abc");
    assert_int_equal(http_request_query_double(&r, "ms", 1e6, &v), KNEE_EFORMAT);
    SET("/work?ms=");
    assert_int_equal(http_request_query_double(&r, "ms", 1e6, &v), KNEE_EFORMAT);
    SET("/work?ms=1.2.3");
    assert_int_equal(http_request_query_double(&r, "ms", 1e6, &v), KNEE_EFORMAT);
    SET("/work?ms=99999999");
    assert_int_equal(http_request_query_double(&r, "ms", 60000, &v), KNEE_ERANGE);
    SET("/health");
    assert_int_equal(http_request_query_double(&r, "ms", 1e6, &v), KNEE_ENOTFOUND);
    assert_true(http_request_path_is(&r, "/health"));
    SET("http://example:80/stats?x=1");
    assert_true(http_request_path_is(&r, "/stats"));
    SET("https://example/health");
    assert_true(http_request_path_is(&r, "/health"));
    SET("http://example");
    assert_true(http_request_path_is(&r, ""));
#undef SET
}

static void test_response_head(void **state)
{
    (void)state;
    char date[HTTP_DATE_LEN + 1];
    http_date_format(784111777ULL * 1000000000ULL, date); /* RFC 9110's example instant */
    assert_string_equal(date, "Sun, 06 Nov 1994 08:49:37 GMT");
    char buf[512];
    size_t n = http_response_head(buf, sizeof buf, 503, date, "application/json", 12, "X-A: b\r\n", true);
    assert_true(n > 0);
    assert_string_equal(buf, "HTTP/1.1 503 Service Unavailable\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
                             "Server: knee\r\nContent-Type: application/json\r\nContent-Length: 12\r\nX-A: b\r\n"
                             "Connection: close\r\n\r\n");
    n = http_response_head(buf, sizeof buf, 431, NULL, NULL, 0, NULL, false);
    assert_string_equal(buf,
                        "HTTP/1.1 431 Request Header Fields Too Large\r\nServer: knee\r\nContent-Length: 0\r\n\r\n");
    assert_int_equal(http_response_head(buf, 20, 200, NULL, NULL, 0, NULL, false), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_get),
        cmocka_unit_test(test_keep_alive_rules),
        cmocka_unit_test(test_pipelined_requests_one_at_a_time),
        cmocka_unit_test(test_byte_at_a_time),
        cmocka_unit_test(test_malformed_is_400),
        cmocka_unit_test(test_oversized_headers_are_431),
        cmocka_unit_test(test_long_url_is_414_and_big_body_413),
        cmocka_unit_test(test_path_and_query),
        cmocka_unit_test(test_response_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
