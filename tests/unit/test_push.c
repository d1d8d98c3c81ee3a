/* Unit tests for src/push: the checks of what a user gives (URL, auth file, labels), base64,
 * status lines and backoff, and the transport against a small receiver thread on 127.0.0.1
 * (headers, snappy bodies, retries on 500, none on 400, a receiver that is down, the queue's
 * bound). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "fixture_tmpdir.h"
#include "push/push.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- pure pieces ---------------------------------------------------------------------------- */

static void test_base64(void **state)
{
    (void)state;
    char out[32];
    /* RFC 4648 section 10 */
    const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(push_base64(in[i], strlen(in[i]), out, sizeof out), strlen(want[i]));
        assert_string_equal(out, want[i]);
    }
    assert_int_equal(push_base64("foobar", 6, out, 8), 0); /* 8 bytes and the NUL do not fit */
}

static void test_status_and_backoff(void **state)
{
    (void)state;
    assert_int_equal(push_http_status("HTTP/1.1 204 No Content\r\n", 25), 204);
    assert_int_equal(push_http_status("HTTP/1.0 500 x", 14), 500);
    assert_int_equal(push_http_status("HTTP/2 200 OK\r\n", 15), -1);
    assert_int_equal(push_http_status("HTTP/1.1 2x0 OK", 15), -1);
    assert_int_equal(push_http_status("HTTP/1.1 20", 11), -1);
    assert_true(push_status_retry(500));
    assert_true(push_status_retry(503));
    assert_true(push_status_retry(429));
    assert_false(push_status_retry(400));
    assert_false(push_status_retry(404));
    assert_int_equal(push_backoff_ns(1, 10 * NS_PER_S), PUSH_BACKOFF_FIRST_NS);
    assert_int_equal(push_backoff_ns(2, 10 * NS_PER_S), 2 * PUSH_BACKOFF_FIRST_NS);
    assert_int_equal(push_backoff_ns(4, 10 * NS_PER_S), 8 * PUSH_BACKOFF_FIRST_NS);
    assert_int_equal(push_backoff_ns(40, 5 * NS_PER_S), 5 * NS_PER_S);
}

static void test_url_check(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(push_url_check("http://127.0.0.1:9090/api/v1/write", err, sizeof err), 0);
    assert_int_equal(push_url_check("https://prom.example/api/v1/write", err, sizeof err), 0);
    assert_int_equal(push_url_check("ftp://x/", err, sizeof err), KNEE_EINVAL);
    assert_int_equal(push_url_check("127.0.0.1:9090", err, sizeof err), KNEE_EINVAL);
    assert_int_equal(push_url_check("http://u:secret@h/api", err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--remote-write-auth-file"));
    assert_null(strstr(err, "secret"));
    assert_int_equal(push_url_check("http://h/api#x", err, sizeof err), KNEE_EINVAL);
    assert_int_equal(push_url_check("http:///api", err, sizeof err), KNEE_EINVAL);
}

static void test_label_check(void **state)
{
    (void)state;
    char err[256];
    size_t eq;
    assert_int_equal(push_label_check("job=ci", &eq, err, sizeof err), 0);
    assert_int_equal(eq, 3);
    assert_int_equal(push_label_check("_x9=a=b", &eq, err, sizeof err), 0);
    assert_int_equal(eq, 3);
    assert_int_equal(push_label_check("région=x", &eq, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(push_label_check("zone=été", &eq, err, sizeof err), 0);
    const char *const bad[] = {"job", "=x", "9job=x", "a-b=x", "__name__=x", "job=", "job=a\tb", "job=\xff"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(push_label_check(bad[i], &eq, err, sizeof err), KNEE_EINVAL);
    char longv[PUSH_LABEL_VALUE_MAX + 8] = "k=";
    memset(longv + 2, 'v', PUSH_LABEL_VALUE_MAX + 1);
    longv[PUSH_LABEL_VALUE_MAX + 3] = '\0';
    assert_int_equal(push_label_check(longv, &eq, err, sizeof err), KNEE_EINVAL);
    longv[PUSH_LABEL_VALUE_MAX + 2] = '\0';
    assert_int_equal(push_label_check(longv, &eq, err, sizeof err), 0);
}

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_auth_load(void **state)
{
    (void)state;
    char err[512], *h;
    assert_int_equal(push_auth_load(write_file("bearer", "bearer s3cr3t-TOKEN\n"), &h, err, sizeof err), 0);
    assert_string_equal(h, "Bearer s3cr3t-TOKEN");
    free(h);
    assert_int_equal(push_auth_load(write_file("basic", "  Basic Aladdin:open sesame\r\n"), &h, err, sizeof err), 0);
    assert_string_equal(h, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="); /* RFC 7617's example */
    free(h);
    struct {
        const char *text, *says;
    } bad[] = {
        {"", "empty"},
        {"\n\n", "empty"},
        {"token s3cr3t\n", ":1: expected 'bearer TOKEN'"},
        {"bearer\n", ":1: nothing after"},
        {"bearer a b\n", ":1: a bearer token without blanks"},
        {"basic s3cr3t\n", ":1: basic needs USER:PASSWORD"},
        {"bearer s3cr3t\nbearer other\n", ":2: more than one line"},
        {"bearer s3\x01cr3t\n", ":1: a control character"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(push_auth_load(write_file("bad", bad[i].text), &h, err, sizeof err), KNEE_EINVAL);
        assert_null(h);
        assert_non_null(strstr(err, bad[i].says));
        assert_null(strstr(err, "s3cr3t")); /* the secret is never in a message */
    }
    assert_int_equal(push_auth_load("/nonexistent/knee-auth", &h, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "/nonexistent/knee-auth: No such file"));
}

/* ---- a receiver ------------------------------------------------------------------------------- */

#define RX_MAX 64

/* A one-thread HTTP/1.1 receiver: answers statuses[i] to request i (the last one after). */
struct rx {
    int lfd, port;
    pthread_t th;
    int statuses[8];
    size_t nstatuses;
    pthread_mutex_t mu;
    size_t nreq;
    char head[4096];       /* the last request's head */
    char body[RX_MAX][32]; /* every request's body, uncompressed (the renderer's strings) */
    bool stop;
};

/* Read one request from fd: its head into h, its uncompressed body into b (cap 32). */
static bool rx_read(int fd, char *h, size_t hcap, char *b)
{
    char buf[8192];
    size_t n = 0;
    char *end = NULL;
    while (!end && n < sizeof buf - 1) {
        ssize_t r = recv(fd, buf + n, sizeof buf - 1 - n, 0);
        if (r <= 0)
            return false;
        n += (size_t)r;
        buf[n] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    if (!end)
        return false;
    size_t hl = (size_t)(end - buf);
    snprintf(h, hcap, "%.*s", (int)hl, buf);
    const char *cl = strcasestr(h, "Content-Length: ");
    size_t want = cl ? strtoul(cl + 16, NULL, 10) : 0, have = n - hl - 4;
    char *body = malloc(want + 1);
    memcpy(body, end + 4, have);
    while (have < want) {
        ssize_t r = recv(fd, body + have, want - have, 0);
        if (r <= 0) {
            free(body);
            return false;
        }
        have += (size_t)r;
    }
    size_t ulen = 31;
    bool ok = snappy_uncompress(body, want, b, &ulen) == SNAPPY_OK;
    b[ok ? ulen : 0] = '\0';
    free(body);
    return true;
}

static void *rx_main(void *arg)
{
    struct rx *x = arg;
    for (;;) {
        int fd = accept(x->lfd, NULL, NULL);
        if (fd < 0)
            return NULL;
        pthread_mutex_lock(&x->mu);
        bool stop = x->stop;
        size_t i = x->nreq;
        pthread_mutex_unlock(&x->mu);
        if (stop) {
            close(fd);
            return NULL;
        }
        char head[4096], body[32];
        if (rx_read(fd, head, sizeof head, body)) {
            int status = x->statuses[i < x->nstatuses ? i : x->nstatuses - 1];
            char resp[256];
            int n = snprintf(resp, sizeof resp, "HTTP/1.1 %d X\r\nContent-Length: 12\r\n\r\nbad sample\r\n", status);
            send(fd, resp, (size_t)n, MSG_NOSIGNAL);
            pthread_mutex_lock(&x->mu);
            snprintf(x->head, sizeof x->head, "%s", head);
            if (x->nreq < RX_MAX)
                memcpy(x->body[x->nreq], body, sizeof body);
            x->nreq++;
            pthread_mutex_unlock(&x->mu);
        }
        close(fd);
    }
}

static void rx_start(struct rx *x, const int *statuses, size_t n)
{
    memset(x, 0, sizeof *x);
    memcpy(x->statuses, statuses, n * sizeof *statuses);
    x->nstatuses = n;
    pthread_mutex_init(&x->mu, NULL);
    x->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(x->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(x->lfd, 16), 0);
    socklen_t sl = sizeof a;
    getsockname(x->lfd, (struct sockaddr *)&a, &sl);
    x->port = ntohs(a.sin_port);
    pthread_create(&x->th, NULL, rx_main, x);
}

static void rx_stop(struct rx *x)
{
    pthread_mutex_lock(&x->mu);
    x->stop = true;
    pthread_mutex_unlock(&x->mu);
    shutdown(x->lfd, SHUT_RDWR);
    int fd = socket(AF_INET, SOCK_STREAM, 0); /* wake accept() when shutdown did not */
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)x->port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    connect(fd, (struct sockaddr *)&a, sizeof a);
    close(fd);
    pthread_join(x->th, NULL);
    close(x->lfd);
    pthread_mutex_destroy(&x->mu);
}

/* The renderer: "payload N" stamped with a rising N. */
struct gen {
    int n;
    char buf[32];
};

static int gen_render(void *ctx, int64_t ts_ms, const uint8_t **data, size_t *len, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct gen *g = ctx;
    assert_true(ts_ms > 1700000000000LL); /* wall time in ms */
    *len = (size_t)snprintf(g->buf, sizeof g->buf, "payload %d", __atomic_fetch_add(&g->n, 1, __ATOMIC_RELAXED));
    *data = (const uint8_t *)g->buf;
    return 0;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Pushes every 50 ms until the pusher has rendered `renders` payloads (polled: a loaded machine
 * takes longer, never fewer), then finishes (the final push). */
static void push_run(struct rx *x, int port, const char *auth, size_t qmax, uint64_t timeout_ms, int renders,
                     struct gen *g, struct push_stats *st)
{
    char url[128], err[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/v1/write", port);
    struct push_config pc = {.url = url,
                             .auth_header = auth,
                             .interval_ns = 50 * NS_PER_MS,
                             .timeout_ns = timeout_ms * NS_PER_MS,
                             .queue_max = qmax,
                             .render = gen_render,
                             .render_ctx = g};
    struct push *p;
    assert_int_equal(push_start(&pc, &p, err, sizeof err), 0);
    assert_string_equal(push_url(p), url);
    for (int waited_ms = 0; __atomic_load_n(&g->n, __ATOMIC_RELAXED) < renders && waited_ms < 60000; waited_ms += 5)
        sleep_ms(5);
    assert_true(__atomic_load_n(&g->n, __ATOMIC_RELAXED) >= renders);
    uint64_t t0 = clock_now_ns();
    push_finish(p, st);
    /* the end's pushes get one timeout in all; a wide margin for a loaded machine, but a flush
     * that waits on a dead receiver past its timeout (seconds) fails here */
    assert_true((clock_now_ns() - t0) / NS_PER_MS < timeout_ms + 5000);
    (void)x;
    assert_int_equal(st->pushes, st->ok + st->failed + st->dropped);
    assert_int_equal(st->pushes, (uint64_t)g->n);
}

static void test_push_ok(void **state)
{
    (void)state;
    struct rx x;
    rx_start(&x, (const int[]){204}, 1);
    struct gen g = {0};
    struct push_stats st;
    push_run(&x, x.port, "Bearer tok", 0, 2000, 3, &g, &st);
    rx_stop(&x);
    assert_true(st.pushes >= 4); /* 3 intervals, then the final one */
    assert_int_equal(st.ok, st.pushes);
    assert_int_equal(st.failed + st.dropped + st.retried, 0);
    assert_int_equal(x.nreq, st.pushes);
    assert_string_equal(st.last_error, "");
    assert_true(st.bytes > 0);
    for (size_t i = 0; i < x.nreq; i++) {
        char want[32];
        snprintf(want, sizeof want, "payload %zu", i);
        assert_string_equal(x.body[i], want); /* in order, each once, snappy round-trips */
    }
    assert_non_null(strstr(x.head, "POST /api/v1/write HTTP/1.1\r\n"));
    const char *const must[] = {"\r\nContent-Encoding: snappy",
                                "\r\nContent-Type: application/x-protobuf",
                                "\r\nX-Prometheus-Remote-Write-Version: 0.1.0",
                                "\r\nUser-Agent: knee/",
                                "\r\nAuthorization: Bearer tok",
                                "\r\nHost: 127.0.0.1:"};
    for (size_t i = 0; i < sizeof must / sizeof *must; i++)
        assert_non_null(strstr(x.head, must[i]));
}

static void test_push_retries_500(void **state)
{
    (void)state;
    struct rx x;
    rx_start(&x, (const int[]){500, 503, 429, 200}, 4);
    struct gen g = {0};
    struct push_stats st;
    push_run(&x, x.port, NULL, 0, 3000, 2, &g, &st);
    rx_stop(&x);
    assert_int_equal(st.retried, 3); /* the first payload went through on its 4th attempt */
    assert_int_equal(st.failed + st.dropped, 0);
    assert_int_equal(st.ok, st.pushes);
    assert_int_equal(x.nreq, st.pushes + 3);
    assert_null(strstr(x.head, "Authorization"));
}

static void test_push_no_retry_400(void **state)
{
    (void)state;
    struct rx x;
    rx_start(&x, (const int[]){400}, 1);
    struct gen g = {0};
    struct push_stats st;
    push_run(&x, x.port, NULL, 0, 2000, 2, &g, &st);
    rx_stop(&x);
    assert_int_equal(st.ok + st.retried + st.dropped, 0);
    assert_int_equal(st.failed, st.pushes);
    assert_int_equal(x.nreq, st.pushes);
    assert_string_equal(st.last_error, "HTTP 400: bad sample");
}

static void test_push_down_drops_oldest(void **state)
{
    (void)state;
    /* A port nobody listens on: a receiver started and stopped. */
    struct rx x;
    rx_start(&x, (const int[]){200}, 1);
    int port = x.port;
    rx_stop(&x);
    struct gen g = {0};
    struct push_stats st;
    push_run(NULL, port, NULL, 2, 300, 6, &g, &st);
    assert_int_equal(st.ok, 0);
    assert_true(st.dropped >= 1); /* 6 payloads or more, a queue of 2 */
    assert_true(st.failed >= 1);  /* what the queue held at the end */
    assert_true(st.failed <= 2);
    assert_true(st.retried >= 1);
    assert_non_null(strstr(st.last_error, "connect 127.0.0.1:"));
}

static void test_push_finish_null(void **state)
{
    (void)state;
    struct push_stats st;
    memset(&st, 0xff, sizeof st);
    push_finish(NULL, &st);
    assert_int_equal(st.pushes, 0);
    char err[256];
    struct push *p;
    struct push_config pc = {.url = "http://u:p@h/", .interval_ns = 1, .timeout_ns = 1, .render = gen_render};
    assert_int_equal(push_start(&pc, &p, err, sizeof err), KNEE_EINVAL);
    assert_null(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_status_and_backoff),
        cmocka_unit_test(test_url_check),
        cmocka_unit_test(test_label_check),
        cmocka_unit_test(test_auth_load),
        cmocka_unit_test(test_push_ok),
        cmocka_unit_test(test_push_retries_500),
        cmocka_unit_test(test_push_no_retry_400),
        cmocka_unit_test(test_push_down_drops_oldest),
        cmocka_unit_test(test_push_finish_null),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
