/* Unit tests for knee run --setup's parts: --capture rules parsed (workload/capture.c) and applied
 * to a response (a header, a cookie, a JSON path, the status, the body; every missing piece
 * named), the one blocking exchange (http/fetch.c) against canned answers from a thread of
 * this process (chunked, an interim 100, a body ended by the close, a timeout, a refusal), the
 * values bound to a request source (load/variant_vars.c), the record's note of the setup read
 * back from its JSON, and the setup flags redacted from a recorded command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "http/fetch.h"
#include "load/variant.h"
#include "record/record.h"
#include "workload/capture.h"

#include "fixture_server.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

static char err[1024];

/* ------------------------------------------------------------------ --capture rules */

static void test_capture_parse(void **state)
{
    (void)state;
    struct wl_capture c;
    char buf[100];
    assert_int_equal(wl_capture_parse("tok=json:data.items.0.id", &c, err, sizeof err), 0);
    assert_string_equal(c.name, "tok");
    assert_int_equal(c.kind, WL_CAPTURE_JSON);
    assert_string_equal(wl_capture_source(&c, buf, sizeof buf), "json:data.items.0.id");
    wl_capture_release(&c);
    assert_int_equal(wl_capture_parse("sid=cookie:sid", &c, err, sizeof err), 0);
    assert_int_equal(c.kind, WL_CAPTURE_COOKIE);
    wl_capture_release(&c);
    assert_int_equal(wl_capture_parse("x-1=header:X-Token", &c, err, sizeof err), 0);
    assert_int_equal(c.kind, WL_CAPTURE_HEADER);
    assert_string_equal(c.arg, "X-Token");
    wl_capture_release(&c);
    assert_int_equal(wl_capture_parse("st=status", &c, err, sizeof err), 0);
    assert_int_equal(c.kind, WL_CAPTURE_STATUS);
    assert_null(c.arg);
    assert_int_equal(wl_capture_parse("b=body", &c, err, sizeof err), 0);
    assert_int_equal(c.kind, WL_CAPTURE_BODY);
    static const struct {
        const char *spec, *says;
    } bad[] = {
        {"tok", "expected NAME=SOURCE"},
        {"=status", "the name ''"},
        {"seq=status", "not seq or uuid"},
        {"uuid=body", "not seq or uuid"},
        {"a b=status", "the name 'a b'"},
        {"t=json:", "a path is keys"},
        {"t=json:a..b", "a path is keys"},
        {"t=json:.a", "a path is keys"},
        {"t=json:a.", "a path is keys"},
        {"t=header:", "a header name is an HTTP token"},
        {"t=cookie:a b", "a cookie name is an HTTP token"},
        {"t=xml:a", "unknown source 'xml:a'"},
        {"t=Status", "unknown source"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(wl_capture_parse(bad[i].spec, &c, err, sizeof err), KNEE_EINVAL);
        if (!strstr(err, bad[i].says))
            fail_msg("%s: %s", bad[i].spec, err);
    }
    char longname[100];
    memset(longname, 'a', 65);
    snprintf(longname + 65, sizeof longname - 65, "=status");
    assert_int_equal(wl_capture_parse(longname, &c, err, sizeof err), KNEE_EINVAL);
    longname[1] = '=';
    assert_int_equal(wl_capture_parse("p=json:a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.0.1.2.3.4.5.6", &c,
                                      err, sizeof err),
                     KNEE_EINVAL);
}

static const char *const NAMES[] = {"Content-Type", "Set-Cookie", "X-Token", "set-cookie", "X-Bad"};
static const char *const VALUES[] = {"application/json", "theme=dark; Path=/", "abc.def",
                                     " sid = s-42 ; Path=/; HttpOnly",
                                     "a\x01"
                                     "b"};
static const char BODY[] = "{\"data\": {\"token\": \"tk-1\", \"n\": 42, \"r\": 0.5, \"big\": 1e3, \"ok\": true, "
                           "\"none\": null, \"ids\": [7, {\"id\": \"x\"}], \"o\": {}, \"nl\": \"a\\nb\"}}";

static struct wl_response response(const char *body)
{
    return (struct wl_response){.status = 201,
                                .names = NAMES,
                                .values = VALUES,
                                .nheaders = 5,
                                .body = body,
                                .body_len = body ? strlen(body) : 0};
}

/* The capture spec's value in r, or the error's text in err (NULL returned). */
static char *capture(const char *spec, const struct wl_response *r, int *code)
{
    struct wl_capture c;
    assert_int_equal(wl_capture_parse(spec, &c, err, sizeof err), 0);
    char *v;
    size_t n;
    *code = wl_capture_extract(&c, r, &v, &n, err, sizeof err);
    wl_capture_release(&c);
    if (*code == 0)
        assert_int_equal(n, strlen(v));
    return *code ? NULL : v;
}

static void captures_as(const char *spec, const struct wl_response *r, const char *want)
{
    int code;
    char *v = capture(spec, r, &code);
    if (!v)
        fail_msg("%s: %s", spec, err);
    assert_string_equal(v, want);
    free(v);
}

static void fails_with(const char *spec, const struct wl_response *r, int want, const char *says)
{
    int code;
    char *v = capture(spec, r, &code);
    assert_null(v);
    assert_int_equal(code, want);
    if (!strstr(err, says))
        fail_msg("%s: \"%s\" does not say \"%s\"", spec, err, says);
}

static void test_capture_extract(void **state)
{
    (void)state;
    struct wl_response r = response(BODY);
    captures_as("t=header:x-token", &r, "abc.def");               /* names in any case */
    captures_as("t=header:Set-Cookie", &r, "theme=dark; Path=/"); /* the first */
    captures_as("t=cookie:sid", &r, "s-42");                      /* any Set-Cookie, spaces dropped */
    captures_as("t=cookie:theme", &r, "dark");
    captures_as("t=status", &r, "201");
    captures_as("t=json:data.token", &r, "tk-1");
    captures_as("t=json:data.n", &r, "42");
    captures_as("t=json:data.r", &r, "0.5");
    captures_as("t=json:data.big", &r, "1000");
    captures_as("t=json:data.ok", &r, "true");
    captures_as("t=json:data.ids.0", &r, "7");
    captures_as("t=json:data.ids.1.id", &r, "x");
    fails_with("t=header:X-Missing", &r, KNEE_ENOTFOUND,
               "header:X-Missing: no such header in the response (headers: "
               "Content-Type, Set-Cookie, X-Token, X-Bad)");
    fails_with("t=header:X-Bad", &r, KNEE_EINVAL, "holds a control byte");
    fails_with("t=cookie:sess", &r, KNEE_ENOTFOUND,
               "cookie:sess: no Set-Cookie header sets it (cookies set: theme, sid)");
    fails_with("t=json:data.tokn", &r, KNEE_ENOTFOUND, "json:data.tokn: no key 'tokn' in data (keys: token, n, r,");
    fails_with("t=json:token", &r, KNEE_ENOTFOUND, "no key 'token' in the body (keys: data)");
    fails_with("t=json:data.ids.2", &r, KNEE_ENOTFOUND, "no item 2 in data.ids (it has 2)");
    fails_with("t=json:data.ids.x", &r, KNEE_ENOTFOUND, "'x' in data.ids: it is a list, indexed by a number from 0");
    fails_with("t=json:data.token.x", &r, KNEE_ENOTFOUND, "'x' in data.token: it is a string, not an object or a list");
    fails_with("t=json:data.none", &r, KNEE_EINVAL, "json:data.none: it is null");
    fails_with("t=json:data.o", &r, KNEE_EINVAL, "it is an object; a capture takes a string, a number or a boolean");
    fails_with("t=json:data.ids", &r, KNEE_EINVAL, "it is a list");
    fails_with("t=json:data.nl", &r, KNEE_EINVAL, "holds a control byte");
    struct wl_response text = response("  tk-9\r\n");
    captures_as("t=body", &text, "tk-9"); /* trimmed */
    fails_with("t=json:a", &text, KNEE_EINVAL, "json:a: the body is not JSON");
    struct wl_response empty = response(NULL);
    captures_as("t=body", &empty, "");
    fails_with("t=json:a", &empty, KNEE_EINVAL, "the body is not JSON");
    struct wl_response none = {.status = 200};
    fails_with("t=header:X", &none, KNEE_ENOTFOUND, "(headers: none)");
    fails_with("t=cookie:X", &none, KNEE_ENOTFOUND, "(cookies set: none)");
    char *big = malloc(WL_CAPTURE_VALUE_MAX + 10);
    memset(big, 'a', WL_CAPTURE_VALUE_MAX + 1);
    big[WL_CAPTURE_VALUE_MAX + 1] = '\0';
    struct wl_response large = response(big);
    fails_with("t=body", &large, KNEE_EINVAL, "bytes (at most 65536)");
    free(big);
}

/* ------------------------------------------------------------------ the blocking exchange */

/* A server of one connection: reads the request's head, answers `answer` (or nothing, and
 * waits for the client to go), closes. */
struct canned {
    int lfd;
    const char *answer;
    size_t answer_len;
    char request[4096];
    pthread_t th;
};

static void *canned_main(void *arg)
{
    struct canned *c = arg;
    int fd = accept(c->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    size_t n = 0;
    while (n + 1 < sizeof c->request && !strstr(c->request, "\r\n\r\n")) {
        ssize_t r = read(fd, c->request + n, sizeof c->request - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        c->request[n] = '\0';
    }
    if (c->answer) {
        for (size_t off = 0; off < c->answer_len;) {
            ssize_t w = write(fd, c->answer + off, c->answer_len - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
    } else {
        char b[64];
        while (read(fd, b, sizeof b) > 0) /* until the client gives up */
            ;
    }
    close(fd);
    return NULL;
}

/* Start c answering answer (NULL: nothing); url gets its address + path. */
static void canned_start(struct canned *c, const char *answer, size_t len, char *url, size_t urllen)
{
    memset(c, 0, sizeof *c);
    c->answer = answer;
    c->answer_len = len;
    c->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(c->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(c->lfd, 4), 0);
    assert_int_equal(getsockname(c->lfd, (struct sockaddr *)&a, &alen), 0);
    snprintf(url, urllen, "http://127.0.0.1:%u/login", ntohs(a.sin_port));
    assert_int_equal(pthread_create(&c->th, NULL, canned_main, c), 0);
}

static void canned_stop(struct canned *c)
{
    pthread_join(c->th, NULL);
    close(c->lfd);
}

/* Fetch from a canned server answering answer: the code, *res filled. */
static int fetch_canned(struct canned *c, const char *answer, size_t len, uint64_t timeout_ns,
                        struct http_fetch_response *res)
{
    char url[100];
    canned_start(c, answer, len, url, sizeof url);
    static const char *const hdrs[] = {"Content-Type: application/json"};
    struct http_fetch_request req = {.method = "POST",
                                     .url = url,
                                     .headers = hdrs,
                                     .nheaders = 1,
                                     .body = "{\"u\":1}",
                                     .body_len = 7,
                                     .timeout_ns = timeout_ns};
    int r = http_fetch(&req, res, err, sizeof err);
    canned_stop(c);
    return r;
}

static void test_fetch_answers(void **state)
{
    (void)state;
    struct canned c;
    struct http_fetch_response res;
    static const char chunked[] = "HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\n"
                                  "HTTP/1.1 200 Fine Thanks\r\nSet-Cookie: a=1\r\nX-Empty:\r\nX-Token:  t1  \r\n"
                                  "Transfer-Encoding: chunked\r\nSet-Cookie: b=2\r\n\r\n"
                                  "4\r\n{\"t\"\r\n5\r\n:\"x\"}\r\n0\r\n\r\nHTTP/1.1 500 extra\r\n";
    assert_int_equal(fetch_canned(&c, chunked, sizeof chunked - 1, 5 * NS_PER_S, &res), 0);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.reason, "Fine Thanks");
    assert_int_equal(res.nheaders, 5); /* the interim response's header is gone */
    assert_string_equal(res.names[1], "X-Empty");
    assert_string_equal(res.values[1], "");
    assert_string_equal(res.names[2], "X-Token");
    assert_string_equal(res.values[2], "t1");
    assert_string_equal(res.values[4], "b=2");
    assert_int_equal(res.body_len, 9);
    assert_memory_equal(res.body, "{\"t\":\"x\"}", 9);
    assert_non_null(strstr(c.request, "POST /login HTTP/1.1\r\n"));
    assert_non_null(strstr(c.request, "Connection: close\r\n"));
    assert_non_null(strstr(c.request, "Content-Type: application/json\r\n"));
    assert_non_null(strstr(c.request, "Content-Length: 7\r\n"));
    assert_true(strncmp(res.address, "127.0.0.1:", 10) == 0);
    http_fetch_response_release(&res);

    static const char closed[] = "HTTP/1.1 401 Unauthorized\r\n\r\nno entry";
    assert_int_equal(fetch_canned(&c, closed, sizeof closed - 1, 5 * NS_PER_S, &res), 0);
    assert_int_equal(res.status, 401);
    assert_int_equal(res.body_len, 8);
    assert_string_equal(res.body, "no entry");
    http_fetch_response_release(&res);

    static const char cut[] = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
    assert_int_equal(fetch_canned(&c, cut, sizeof cut - 1, 5 * NS_PER_S, &res), KNEE_EFORMAT);
    assert_non_null(strstr(err, "closed the connection before the response's end"));
    http_fetch_response_release(&res);

    static const char junk[] = "SSH-2.0-OpenSSH_9\r\n\r\n";
    assert_int_equal(fetch_canned(&c, junk, sizeof junk - 1, 5 * NS_PER_S, &res), KNEE_EFORMAT);
    assert_non_null(strstr(err, "not an HTTP/1.1 response"));
    http_fetch_response_release(&res);
}

static void test_fetch_failures(void **state)
{
    (void)state;
    struct canned c;
    struct http_fetch_response res;
    uint64_t t0 = clock_now_ns();
    assert_int_equal(fetch_canned(&c, NULL, 0, 200 * NS_PER_MS, &res), -ETIMEDOUT);
    assert_true(clock_now_ns() - t0 < 5 * NS_PER_S);
    assert_non_null(strstr(err, "no complete response within the timeout"));
    http_fetch_response_release(&res);

    size_t big = HTTP_FETCH_MAX_BODY + 100;
    char *answer = malloc(big + 100);
    int h = snprintf(answer, 100, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", big);
    memset(answer + h, 'x', big);
    assert_int_equal(fetch_canned(&c, answer, (size_t)h + big, 5 * NS_PER_S, &res), KNEE_ETOOBIG);
    assert_non_null(strstr(err, "larger than"));
    http_fetch_response_release(&res);
    free(answer);

    char url[100];
    fixture_refused_url(url, sizeof url);
    struct http_fetch_request req = {.url = url, .timeout_ns = NS_PER_S};
    assert_int_equal(http_fetch(&req, &res, err, sizeof err), -ECONNREFUSED);
    assert_non_null(strstr(err, "Connection refused"));
    http_fetch_response_release(&res);
    req.url = "https://127.0.0.1:1/";
    assert_int_equal(http_fetch(&req, &res, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "without a TLS context"));
    req.url = "ftp://x/";
    assert_int_equal(http_fetch(&req, &res, err, sizeof err), KNEE_EINVAL);
    static const char *const bad[] = {"No colon"};
    req.url = url;
    req.headers = bad;
    req.nheaders = 1;
    assert_int_equal(http_fetch(&req, &res, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "has no ':'"));
}

/* ------------------------------------------------------------------ variables in a request source */

static void test_variant_bind(void **state)
{
    (void)state;
    static const char *const vars[] = {"tok", "sid"};
    static const char *const hdrs[] = {"Authorization: Bearer {{tok}}"};
    struct variant_opts o = {.url = "http://127.0.0.1:9/a?s={{sid}}&n={{seq}}",
                             .headers = hdrs,
                             .nheaders = 1,
                             .var_names = vars,
                             .nvars = 2};
    struct variant_source *s;
    assert_int_equal(variant_source_open(&s, &o, err, sizeof err), 0);
    struct wl_value v[2] = {{"a b", 3}, {"s1", 2}};
    assert_int_equal(variant_source_bind(s, v, 1, err, sizeof err), KNEE_EINVAL); /* one value per name */
    assert_int_equal(variant_source_bind(s, v, 2, err, sizeof err), 0);           /* a space in a header: fine */
    v[0] = (struct wl_value){"x\ny", 3};
    assert_int_equal(variant_source_bind(s, v, 2, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "the target: {{tok}} in a header: the value --capture took holds a control byte"));
    v[0] = (struct wl_value){"t", 1};
    v[1] = (struct wl_value){"s#1", 3};
    assert_int_equal(variant_source_bind(s, v, 2, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "{{sid}} in the URL"));
    v[1] = (struct wl_value){"s1", 2};
    assert_int_equal(variant_source_bind(s, v, 2, err, sizeof err), 0);
    variant_source_free(s);

    o.url = "http://127.0.0.1:9/a?{{nope}}";
    assert_int_equal(variant_source_open(&s, &o, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "no column 'nope' in --capture (columns: tok, sid)"));
    o.var_names = NULL;
    o.nvars = 0;
    o.url = "http://127.0.0.1:9/a?{{tok}}";
    assert_int_equal(variant_source_open(&s, &o, err, sizeof err), KNEE_EINVAL); /* no --capture: unknown */
}

/* ------------------------------------------------------------------ the record's note, the command line */

static void test_record_setup(void **state)
{
    (void)state;
    char *names[] = {"tok", "sid"};
    struct record_setup note = {.method = "POST",
                                .url = "http://h/login",
                                .status = 201,
                                .duration_ns = 2500000,
                                .ncaptured = 2,
                                .captured = names};
    struct run_record rec = {0};
    record_setup_copy(&rec.config.setup, &note);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    record_write_json(f, &rec, false);
    fclose(f);
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    assert_non_null(root);
    json_t *sj = json_object_get(json_object_get(root, "config"), "setup");
    assert_non_null(sj);
    assert_string_equal(json_string_value(json_object_get(sj, "url")), "http://h/login");
    assert_int_equal(json_integer_value(json_object_get(sj, "status")), 201);
    assert_int_equal(json_array_size(json_object_get(sj, "captured")), 2);
    struct run_record back = {0};
    record_read_json(root, &back, err, sizeof err);
    assert_string_equal(back.config.setup.url, "http://h/login");
    assert_string_equal(back.config.setup.method, "POST");
    assert_int_equal(back.config.setup.status, 201);
    assert_int_equal(back.config.setup.duration_ns, 2500000);
    assert_int_equal(back.config.setup.ncaptured, 2);
    assert_string_equal(back.config.setup.captured[1], "sid");
    record_release(&back);
    json_decref(root);
    free(text);
    record_release(&rec);
    record_setup_copy(&rec.config.setup, NULL);
    assert_null(rec.config.setup.url);
}

static void redacts(const char *prev, const char *arg, const char *want)
{
    char *got = record_redact_arg(prev, arg);
    assert_string_equal(got, want);
    free(got);
}

static void test_redact_setup(void **state)
{
    (void)state;
    redacts("--setup-header", "X-Api-Key: k1", "X-Api-Key: <redacted>");
    redacts(NULL, "--setup-header=X-Api-Key: k1", "--setup-header=X-Api-Key: <redacted>");
    redacts("--setup-body", "{\"password\":\"pw\"}", "<redacted>");
    redacts(NULL, "--setup-body={\"password\":\"pw\"}", "--setup-body=<redacted>");
    redacts("--setup-body", "@login.json", "@login.json");
    redacts("--capture", "sid=cookie:sid", "sid=cookie:sid");
    redacts(NULL, "--capture=sid=cookie:sid", "--capture=sid=cookie:sid");
    redacts("--setup", "POST http://h/login", "POST http://h/login");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_parse), cmocka_unit_test(test_capture_extract),
        cmocka_unit_test(test_fetch_answers), cmocka_unit_test(test_fetch_failures),
        cmocka_unit_test(test_variant_bind),  cmocka_unit_test(test_record_setup),
        cmocka_unit_test(test_redact_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
