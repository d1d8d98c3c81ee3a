/* Unit tests for the load thread's pure classifiers (src/load/account.c): the outcome of a
 * complete response (--reject, --expect-body, status classes) and the transport cause of a
 * failed connect, TLS handshake, read or write, or HTTP/2 stream, without sockets or threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "load/worker.h"

#include <errno.h>
#include <string.h>

/* A target with --expect-body as needle expect (ENGINE_NO_NEEDLE: none) and no --reject. */
static struct engine_target target(int expect)
{
    struct engine_target et;
    memset(&et, 0, sizeof et);
    et.expect_bit = expect;
    return et;
}

static struct http_response response(int status, unsigned matched)
{
    struct http_response r;
    memset(&r, 0, sizeof r);
    r.status = status;
    r.matched = matched;
    return r;
}

static void test_classify_status(void **state)
{
    (void)state;
    struct engine_target et = target(ENGINE_NO_NEEDLE);
    int ok[] = {200, 204, 301, 304, 399};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct http_response r = response(ok[i], 0);
        assert_int_equal(account_classify(&et, &r), OUTCOME_OK);
    }
    int bad[] = {0, 100, 199, 400, 404, 500, 503, 999};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct http_response r = response(bad[i], 0);
        assert_int_equal(account_classify(&et, &r), OUTCOME_HTTP_ERROR);
    }
}

static void test_classify_expect_body(void **state)
{
    (void)state;
    struct engine_target et = target(1); /* --expect-body is needle 1 */
    struct http_response found = response(200, 1u << 1), missing = response(200, 1u << 0);
    assert_int_equal(account_classify(&et, &found), OUTCOME_OK);
    assert_int_equal(account_classify(&et, &missing), OUTCOME_INVALID);
    /* an error status stays an HTTP error whatever its body */
    struct http_response err = response(500, 0);
    assert_int_equal(account_classify(&et, &err), OUTCOME_HTTP_ERROR);
}

static void test_classify_reject(void **state)
{
    (void)state;
    struct engine_target et = target(ENGINE_NO_NEEDLE);
    et.nrejects = 2;
    et.reject_status[0] = 503; /* --reject 503 */
    et.reject_bit[0] = ENGINE_NO_NEEDLE;
    et.reject_status[1] = 200; /* --reject 200:QUEUE_TIMEOUT, needle 0 */
    et.reject_bit[1] = 0;
    struct http_response r503 = response(503, 0), r200q = response(200, 1u), r200 = response(200, 0);
    assert_int_equal(account_classify(&et, &r503), OUTCOME_REJECTED);
    assert_int_equal(account_classify(&et, &r200q), OUTCOME_REJECTED);
    assert_int_equal(account_classify(&et, &r200), OUTCOME_OK);
}

static void test_connect_and_tls_causes(void **state)
{
    (void)state;
    assert_int_equal(account_connect_cause(-ECONNREFUSED), RUN_TC_REFUSED);
    assert_int_equal(account_connect_cause(-ETIMEDOUT), RUN_TC_CONNECT);
    assert_int_equal(account_connect_cause(-EMFILE), RUN_TC_CONNECT);
    assert_int_equal(account_tls_cause(TLS_R_VERIFY), RUN_TC_TLS_VERIFY);
    assert_int_equal(account_tls_cause(TLS_R_HOSTNAME), RUN_TC_TLS_HOSTNAME);
    assert_int_equal(account_tls_cause(TLS_R_EXPIRED), RUN_TC_TLS_EXPIRED);
    assert_int_equal(account_tls_cause(TLS_R_ALERT), RUN_TC_TLS_ALERT);
    assert_int_equal(account_tls_cause(TLS_R_PROTOCOL), RUN_TC_TLS_PROTOCOL);
    assert_int_equal(account_tls_cause(TLS_R_ALPN), RUN_TC_TLS_ALPN);
    assert_int_equal(account_tls_cause(TLS_R_HANDSHAKE_TIMEOUT), RUN_TC_TLS_HANDSHAKE_TIMEOUT);
    assert_int_equal(account_tls_cause(TLS_R_CLOSED), RUN_TC_OTHER);
    assert_int_equal(account_tls_cause(TLS_R_SOCKET), RUN_TC_OTHER);
}

static struct req request(bool reused, uint64_t first_byte_ns)
{
    struct req r;
    memset(&r, 0, sizeof r);
    r.reused = reused;
    r.first_byte_ns = first_byte_ns;
    return r;
}

static void test_io_cause(void **state)
{
    (void)state;
    struct req first = request(false, 0), reused = request(true, 0), mid = request(true, 42);
    /* a reused connection closed or reset before any byte of the response: stale */
    assert_int_equal(account_io_cause(&reused, 0), RUN_TC_STALE);
    assert_int_equal(account_io_cause(&reused, -ECONNRESET), RUN_TC_STALE);
    assert_int_equal(account_io_cause(&reused, -EPIPE), RUN_TC_STALE);
    /* the connection's first request: never stale */
    assert_int_equal(account_io_cause(&first, 0), RUN_TC_CLOSED_BEFORE);
    assert_int_equal(account_io_cause(&first, -ECONNRESET), RUN_TC_RESET);
    /* after the first byte: closed in the middle, or reset */
    assert_int_equal(account_io_cause(&mid, 0), RUN_TC_CLOSED_MID);
    assert_int_equal(account_io_cause(&mid, -EPIPE), RUN_TC_RESET);
    /* without a request (a connection's own failure), and any other errno */
    assert_int_equal(account_io_cause(NULL, 0), RUN_TC_CLOSED_BEFORE);
    assert_int_equal(account_io_cause(NULL, -ECONNRESET), RUN_TC_RESET);
    assert_int_equal(account_io_cause(&reused, -EIO), RUN_TC_OTHER);
    assert_int_equal(account_io_cause(&first, -EBUSY), RUN_TC_OTHER);
}

static void test_fail_cause(void **state)
{
    (void)state;
    struct conn c;
    memset(&c, 0, sizeof c);
    struct req first = request(false, 0), reused = request(true, 0);
    /* plain: the socket's errno (none recorded: EIO), or end-of-file */
    c.sys_errno = ECONNRESET;
    assert_int_equal(account_fail_cause(&c, &first, false), RUN_TC_RESET);
    assert_int_equal(account_fail_cause(&c, &reused, false), RUN_TC_STALE);
    c.sys_errno = 0;
    assert_int_equal(account_fail_cause(&c, &first, false), RUN_TC_OTHER);
    assert_int_equal(account_fail_cause(&c, &first, true), RUN_TC_CLOSED_BEFORE);
    /* TLS: its reason, a TLS close as an end-of-file, a TLS socket error as the plain one */
    c.tls_on = true;
    c.tls.reason = TLS_R_VERIFY;
    assert_int_equal(account_fail_cause(&c, &first, false), RUN_TC_TLS_VERIFY);
    assert_int_equal(account_fail_cause(&c, &first, true), RUN_TC_CLOSED_BEFORE);
    c.tls.reason = TLS_R_CLOSED;
    assert_int_equal(account_fail_cause(&c, &reused, false), RUN_TC_STALE);
    c.tls.reason = TLS_R_SOCKET;
    c.tls.sys_errno = EPIPE;
    assert_int_equal(account_fail_cause(&c, &first, false), RUN_TC_RESET);
    c.tls.sys_errno = 0;
    assert_int_equal(account_fail_cause(&c, &first, false), RUN_TC_OTHER);
    /* TLS without a failure of its own: the socket's errno */
    c.tls.reason = TLS_R_NONE;
    c.sys_errno = ECONNRESET;
    assert_int_equal(account_fail_cause(&c, NULL, false), RUN_TC_RESET);
}

static void test_stream_cause(void **state)
{
    (void)state;
    struct conn c;
    memset(&c, 0, sizeof c);
    struct req first = request(false, 0), mid = request(false, 7);
    assert_int_equal(account_stream_cause(H2_R_REFUSED, &c, &first), RUN_TC_H2_REFUSED);
    assert_int_equal(account_stream_cause(H2_R_GOAWAY, &c, &first), RUN_TC_H2_GOAWAY);
    assert_int_equal(account_stream_cause(H2_R_RST_STREAM, &c, &first), RUN_TC_H2_RST_STREAM);
    assert_int_equal(account_stream_cause(H2_R_PROTOCOL, &c, &first), RUN_TC_H2_PROTOCOL);
    assert_int_equal(account_stream_cause(H2_R_NOT_H2, &c, &first), RUN_TC_H2_NOT_H2);
    /* the connection ended under the stream: its own cause when it failed, else end-of-file */
    assert_int_equal(account_stream_cause(H2_R_CLOSED, &c, &first), RUN_TC_CLOSED_BEFORE);
    assert_int_equal(account_stream_cause(H2_R_CLOSED, &c, &mid), RUN_TC_CLOSED_MID);
    c.fail_cause = (uint8_t)(1 + RUN_TC_TLS_PROTOCOL);
    assert_int_equal(account_stream_cause(H2_R_CLOSED, &c, &mid), RUN_TC_TLS_PROTOCOL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify_status), cmocka_unit_test(test_classify_expect_body),
        cmocka_unit_test(test_classify_reject), cmocka_unit_test(test_connect_and_tls_causes),
        cmocka_unit_test(test_io_cause),        cmocka_unit_test(test_fail_cause),
        cmocka_unit_test(test_stream_cause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
