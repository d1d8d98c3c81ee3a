/* Unit tests for src/serve through its library API: servers started in-process on port 0
 * and driven with blocking sockets. Exact counters, ordering and status codes are asserted
 * exactly; times only as lower bounds the server enforces (a timeout fires no earlier than its
 * time) or as bounds that catch a hang, many times above what a loaded machine takes. The
 * tests never sleep to let the server catch up: they poll serve_counters() until the state
 * they need is there (AWAIT, bounded by a deadline). The pauses' shape is
 * test_serve_timing.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "serve/cpu.h"
#include "serve/listen.h"
#include "serve/serve.h"
#include "unit/fixture_serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- tests ------------------------------------------------------------------------------ */

static void test_presets_and_checks(void **state)
{
    (void)state;
    struct serve_config c;
    char err[160];
    for (size_t i = 0; serve_preset_names[i]; i++) {
        assert_int_equal(serve_preset(serve_preset_names[i], &c), 0);
        assert_string_equal(c.preset, serve_preset_names[i]);
        assert_int_equal(serve_config_check(&c, err, sizeof err), 0);
        assert_non_null(serve_preset_summary(serve_preset_names[i]));
    }
    assert_int_equal(serve_preset("nope", &c), KNEE_ENOTFOUND);
    serve_preset("report", &c);
    assert_int_equal(c.pool, 4);
    assert_int_equal(c.pause_for_ns, 250 * NS_PER_MS);
    assert_int_equal(c.pause_every_ns, 4 * NS_PER_S);
    assert_true(c.miss_rate == 0.10);
    serve_preset("queue", &c);
    assert_int_equal(c.acquire_timeout_ns, 250 * NS_PER_MS);
    c.pool = 0;
    assert_int_equal(serve_config_check(&c, err, sizeof err), KNEE_EINVAL);
    serve_preset("null", &c);
    c.pool = 4;
    assert_int_equal(serve_config_check(&c, err, sizeof err), KNEE_EINVAL);
    serve_preset("quiet", &c);
    c.pause_every_ns = NS_PER_S;
    assert_int_equal(serve_config_check(&c, err, sizeof err), KNEE_EINVAL); /* without pause_for */
    c.pause_for_ns = 2 * NS_PER_S;
    assert_int_equal(serve_config_check(&c, err, sizeof err), KNEE_EINVAL); /* longer than the period */
    serve_preset("quiet", &c);
    c.miss_rate = 1.5;
    assert_int_equal(serve_config_check(&c, err, sizeof err), KNEE_EINVAL);
}

static void test_listen_split(void **state)
{
    (void)state;
    char host[64];
    int port;
    assert_int_equal(listen_split("127.0.0.1:8080", host, sizeof host, &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8080);
    assert_int_equal(listen_split("[::1]:0", host, sizeof host, &port), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 0);
    assert_int_equal(listen_split(":9", host, sizeof host, &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(listen_split("127.0.0.1", host, sizeof host, &port), KNEE_EINVAL);
    assert_int_equal(listen_split("127.0.0.1:70000", host, sizeof host, &port), KNEE_EINVAL);
    assert_int_equal(listen_split("::1:80", host, sizeof host, &port), KNEE_EINVAL);
    assert_int_equal(listen_split("h:8x", host, sizeof host, &port), KNEE_EINVAL);
    struct serve_config c;
    serve_preset("null", &c);
    snprintf(c.listen, sizeof c.listen, "no-such-host.invalid:0");
    struct serve_handle *h = NULL;
    assert_int_equal(serve_start(&c, &h), KNEE_EINVAL);
}

static void test_null_target_and_exact_stats(void **state)
{
    (void)state;
    struct serve_handle *h = start_preset("null");
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%d", serve_port(h));
    assert_string_equal(serve_address(h), want);
    struct tconn *c = tconnect(serve_port(h));
    struct resp r;
    for (int i = 0; i < 25; i++) {
        tsend(c, "GET /anything HTTP/1.1\r\nHost: t\r\n\r\n");
        assert_int_equal(tread(c, &r), 0);
        assert_int_equal(r.status, 200);
        assert_int_equal(r.body_len, 2);
        assert_memory_equal(r.body, "ok", 2);
        assert_non_null(strstr(r.head, "\r\nDate: "));
    }
    tsend(c, "GET /health HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_string_equal(r.body, "{\"status\":\"UP\"}\n");
    tsend(c, "HEAD / HTTP/1.1\r\n\r\n");
    /* HEAD: Content-Length of the body, but no body: read the head alone. */
    char buf[512];
    ssize_t n = recv(c->fd, buf, sizeof buf - 1, 0);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "Content-Length: 2\r\n"));
    assert_non_null(strstr(buf, "\r\n\r\n"));
    assert_true(strstr(buf, "\r\n\r\n")[4] == '\0');
    tsend(c, "GET /stats HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    /* 25 GETs + HEAD + /health + /stats itself. */
    assert_int_equal(json_u64(r.body, "requests"), 28);
    assert_int_equal(json_u64(r.body, "executed"), 26);
    assert_int_equal(json_u64(r.body, "ok"), 26);
    assert_int_equal(json_u64(r.body, "connections"), 1);
    assert_int_equal(json_u64(r.body, "bad_requests"), 0);
    tclose(c);
    struct serve_counters fc;
    serve_stop(h, &fc);
    assert_int_equal(fc.requests, 28);
    assert_int_equal(fc.connections_total, 1);
    assert_int_equal(fc.connections, 0);
}

static void test_pipelining_answers_in_order(void **state)
{
    (void)state;
    struct serve_config cfg;
    serve_preset("quiet", &cfg);
    cfg.pool = 0; /* no slots: every request could run at once, order must still hold */
    struct serve_handle *h = start(&cfg);
    struct tconn *c = tconnect(serve_port(h));
    tsend(c, "GET /work?ms=60 HTTP/1.1\r\n\r\nGET /work?ms=0 HTTP/1.1\r\n\r\n"
             "GET /health HTTP/1.1\r\n\r\nGET /work?ms=15 HTTP/1.1\r\n\r\n");
    const char *want[] = {"\"work_ms\":60.000", "\"work_ms\":0.000", "UP", "\"work_ms\":15.000"};
    for (int i = 0; i < 4; i++) {
        struct resp r;
        assert_int_equal(tread(c, &r), 0);
        assert_int_equal(r.status, 200);
        assert_non_null(strstr(r.body, want[i]));
    }
    /* Many pipelined null-style requests in one write exceed the output buffer: all answered. */
    char big[40 * 32];
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "GET /health HTTP/1.1\r\n\r\n");
    tsend(c, big);
    for (int i = 0; i < 40; i++) {
        struct resp r;
        assert_int_equal(tread(c, &r), 0);
        assert_int_equal(r.status, 200);
    }
    tclose(c);
    serve_stop(h, NULL);
}

static void test_connection_close_and_http10(void **state)
{
    (void)state;
    struct serve_handle *h = start_preset("null");
    struct tconn *c = tconnect(serve_port(h));
    struct resp r;
    tsend(c, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_non_null(strstr(r.head, "Connection: close\r\n"));
    assert_true(tsees_close(c, 3000));
    tclose(c);
    c = tconnect(serve_port(h));
    tsend(c, "GET / HTTP/1.0\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_true(tsees_close(c, 3000));
    tclose(c);
    serve_stop(h, NULL);
}

static void test_bad_requests_and_others_keep_working(void **state)
{
    (void)state;
    struct serve_handle *h = start_preset("quiet");
    struct tconn *good = tconnect(serve_port(h));
    struct resp r;

    struct tconn *c = tconnect(serve_port(h));
    tsend(c, "THIS IS NOT HTTP\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "BAD_REQUEST"));
    assert_true(tsees_close(c, 3000));
    tclose(c);

    c = tconnect(serve_port(h));
    char *big = malloc(20000);
    int n = snprintf(big, 100, "GET / HTTP/1.1\r\nX-Big: ");
    memset(big + n, 'x', 16000);
    strcpy(big + n + 16000, "\r\n\r\n");
    tsend(c, big);
    free(big);
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 431);
    assert_non_null(strstr(r.body, "HEADERS_TOO_LARGE"));
    tclose(c);

    c = tconnect(serve_port(h));
    tsend(c, "GET /work?ms=oops HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "BAD_PARAMETER"));
    tsend(c, "GET /work?ms=1 HTTP/1.1\r\n\r\n"); /* a bad parameter keeps the connection */
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 200);
    tclose(c);

    tsend(good, "GET /work?ms=1 HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(good, &r), 0);
    assert_int_equal(r.status, 200);
    tsend(good, "GET /stats HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(good, &r), 0);
    assert_int_equal(json_u64(r.body, "bad_requests"), 3);
    assert_int_equal(json_u64(r.body, "ok"), 2);
    tclose(good);
    serve_stop(h, NULL);
}

static void test_acquire_timeout_and_fifo(void **state)
{
    (void)state;
    struct serve_config cfg;
    serve_preset("queue", &cfg);
    cfg.pool = 1;
    cfg.acquire_timeout_ns = 150 * NS_PER_MS;
    struct serve_handle *h = start(&cfg);
    int port = serve_port(h);
    struct resp r;

    /* One slot held for 600 ms: a second request waits 150 ms and gets 503 QUEUE_TIMEOUT. */
    struct tconn *hold = tconnect(port);
    tsend(hold, "GET /work?ms=600 HTTP/1.1\r\n\r\n");
    struct serve_counters sc;
    AWAIT(h, sc, sc.active == 1); /* the slot is taken */
    struct tconn *c = tconnect(port);
    uint64_t t0 = clock_now_ns();
    tsend(c, "GET /work?ms=1 HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    double waited_ms = (double)(clock_now_ns() - t0) / 1e6;
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(r.body, "\"reason\":\"QUEUE_TIMEOUT\""));
    assert_true(waited_ms >= 140);
    assert_true(timing(&r, "queue") >= 149 && timing(&r, "queue") < 1000);
    assert_int_equal(tread(hold, &r), 0);
    assert_int_equal(r.status, 200);
    assert_true(timing(&r, "work") >= 599);
    tclose(c);
    tclose(hold);
    struct serve_counters fc;
    serve_stop(h, &fc);
    assert_int_equal(fc.ok, 1);
    assert_int_equal(fc.rejected, 1);
    assert_int_equal(fc.executed, 1);
}

/* The server-time histogram (serve_config.time_bounds_ns): a 200 after 20 ms of work and a 503
 * after a 150 ms wait land in buckets at or above those times, never below; totals equal the
 * ok and rejected counters; serve_join keeps the final values readable; no bounds, no counts;
 * bad bounds are refused. */
static void test_server_time(void **state)
{
    (void)state;
    struct serve_config cfg;
    serve_preset("queue", &cfg);
    cfg.pool = 1;
    cfg.acquire_timeout_ns = 150 * NS_PER_MS;
    const uint64_t b[] = {5 * NS_PER_MS, 19 * NS_PER_MS, 100 * NS_PER_MS, 149 * NS_PER_MS, 10 * NS_PER_S};
    memcpy(cfg.time_bounds_ns, b, sizeof b);
    cfg.ntime_bounds = 5;
    struct serve_handle *h = start(&cfg);
    int port = serve_port(h);
    struct resp r;
    struct tconn *c = tconnect(port);
    for (int i = 0; i < 3; i++) {
        tsend(c, "GET /work?ms=20 HTTP/1.1\r\n\r\n");
        assert_int_equal(tread(c, &r), 0);
        assert_int_equal(r.status, 200);
    }
    /* the slot held for 400 ms: a second request is rejected after 150 ms */
    tsend(c, "GET /work?ms=400 HTTP/1.1\r\n\r\n");
    struct serve_counters sc;
    AWAIT(h, sc, sc.active == 1);
    struct tconn *d = tconnect(port);
    tsend(d, "GET /work?ms=1 HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(d, &r), 0);
    assert_int_equal(r.status, 503);
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 200);
    tclose(c);
    tclose(d);
    serve_join(h); /* drained; the handle still answers */
    serve_counters(h, &sc);
    struct serve_time_hist ok, rej;
    serve_time(h, SERVE_TIME_OK, &ok);
    serve_time(h, SERVE_TIME_REJECTED, &rej);
    assert_int_equal(ok.nbounds, 5);
    assert_int_equal(ok.total, sc.ok);
    assert_int_equal(ok.total, 4);
    assert_int_equal(rej.total, sc.rejected);
    assert_int_equal(rej.total, 1);
    /* never below the time the server waited: 20 ms of work > 19 ms; 150 ms of waiting > 149 ms */
    assert_int_equal(ok.counts[0] + ok.counts[1], 0);
    assert_int_equal(rej.counts[0] + rej.counts[1] + rej.counts[2] + rej.counts[3], 0);
    assert_true(ok.sum_ns >= 3 * 20 * NS_PER_MS + 400 * NS_PER_MS);
    assert_true(rej.sum_ns >= 150 * NS_PER_MS);
    uint64_t sum = 0;
    for (unsigned i = 0; i <= ok.nbounds; i++)
        sum += ok.counts[i];
    assert_int_equal(sum, ok.total);
    serve_stop(h, NULL);

    /* Without bounds nothing is counted. */
    serve_preset("queue", &cfg);
    h = start(&cfg);
    c = tconnect(serve_port(h));
    tsend(c, "GET /work?ms=1 HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    tclose(c);
    serve_time(h, SERVE_TIME_OK, &ok);
    assert_int_equal(ok.nbounds, 0);
    assert_int_equal(ok.total, 0);
    serve_stop(h, NULL);

    /* Bounds must be > 0 and strictly increasing, at most 64. */
    char err[160];
    cfg.ntime_bounds = 2;
    cfg.time_bounds_ns[0] = cfg.time_bounds_ns[1] = NS_PER_MS;
    assert_int_equal(serve_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
    cfg.time_bounds_ns[0] = 0;
    assert_int_equal(serve_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
    cfg.ntime_bounds = SERVE_TIME_MAX_BOUNDS + 1;
    assert_int_equal(serve_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
}

static void test_completion_order_is_fifo(void **state)
{
    (void)state;
    /* One slot, 20 ms each: requests sent one after another must be answered in that order
     * (watched with poll on all six sockets). */
    struct serve_config cfg;
    serve_preset("quiet", &cfg);
    cfg.pool = 1;
    cfg.hit_ns = cfg.miss_ns = 20 * NS_PER_MS;
    struct serve_handle *h = start(&cfg);
    struct tconn *q[6];
    struct pollfd pf[6];
    for (int i = 0; i < 6; i++) {
        q[i] = tconnect(serve_port(h));
        pf[i] = (struct pollfd){.fd = q[i]->fd, .events = POLLIN};
    }
    struct serve_counters sc;
    for (int i = 0; i < 6; i++) {
        tsend(q[i], "GET / HTTP/1.1\r\n\r\n");
        AWAIT(h, sc, sc.requests == (uint64_t)i + 1); /* parsed (and queued) before the next is sent */
    }
    int order[6], got = 0;
    while (got < 6) {
        assert_true(poll(pf, 6, 10000) > 0);
        for (int i = 0; i < 6; i++) {
            if (pf[i].revents & POLLIN) {
                struct resp r;
                assert_int_equal(tread(q[i], &r), 0);
                assert_int_equal(r.status, 200);
                order[got++] = i;
                pf[i].fd = -1; /* poll ignores negative descriptors */
            }
        }
    }
    for (int i = 0; i < 6; i++) {
        assert_int_equal(order[i], i);
        tclose(q[i]);
    }
    serve_stop(h, NULL);
}

static void test_seed_reproducible(void **state)
{
    (void)state;
    char seq[3][64];
    uint64_t seeds[3] = {5, 5, 6};
    for (int k = 0; k < 3; k++) {
        struct serve_config cfg;
        serve_preset("quiet", &cfg);
        cfg.hit_ns = cfg.miss_ns = 0;
        cfg.miss_rate = 0.5;
        cfg.fanout = 3;
        cfg.dep_slow_prob = 0.3;
        cfg.dep_slow_ns = 2 * NS_PER_MS;
        cfg.seed = seeds[k];
        struct serve_handle *h = start(&cfg);
        struct tconn *c = tconnect(serve_port(h));
        for (int i = 0; i < 60; i++) {
            struct resp r;
            tsend(c, "GET / HTTP/1.1\r\n\r\n");
            assert_int_equal(tread(c, &r), 0);
            char slow = (char)('0' + json_u64(r.body, "slow_deps"));
            seq[k][i] = strstr(r.body, "\"miss\":true") ? (char)('A' + (slow - '0')) : slow;
        }
        seq[k][60] = '\0';
        tclose(c);
        serve_stop(h, NULL);
    }
    assert_string_equal(seq[0], seq[1]);
    assert_string_not_equal(seq[0], seq[2]);
}

static void test_client_leaving(void **state)
{
    (void)state;
    struct serve_config cfg;
    serve_preset("quiet", &cfg);
    cfg.pool = 1;
    struct serve_handle *h = start(&cfg);
    int port = serve_port(h);
    struct tconn *hold = tconnect(port);
    tsend(hold, "GET /work?ms=1000 HTTP/1.1\r\n\r\n"); /* 1 s: long enough to still hold the slot below */
    struct serve_counters sc;
    AWAIT(h, sc, sc.active == 1);
    /* Waiting for the slot, then gone: cancelled, never executed. */
    struct tconn *w = tconnect(port);
    tsend(w, "GET /work?ms=1 HTTP/1.1\r\n\r\n");
    AWAIT(h, sc, sc.waiting == 1);
    tclose(w);
    AWAIT(h, sc, sc.cancelled == 1 && sc.waiting == 0); /* (the counters move one at a time) */
    assert_int_equal(sc.active, 1);                     /* the holder still works */
    assert_int_equal(sc.executed, 0);
    /* The slot holder resets the connection: its work runs on; the response cannot be
     * delivered. */
    treset(hold);
    AWAIT(h, sc, sc.write_failures == 1 && sc.executed == 1 && sc.active == 0 && sc.connections == 0);
    assert_int_equal(sc.cancelled, 1);
    assert_int_equal(sc.ok, 0);
    assert_int_equal(sc.waiting, 0);
    /* And the slot came back. */
    struct tconn *c = tconnect(port);
    struct resp r;
    tsend(c, "GET /work?ms=1 HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 200);
    tclose(c);
    serve_stop(h, NULL);
}

/* A half-close (shutdown(SHUT_WR) after the requests): every complete request is answered,
 * in order, then the server closes. A client that closes (FIN) while its work runs cannot
 * be told from a half-close: its response is written (ok); only a reset makes it a write
 * failure (test_client_leaving). */
static void test_half_close_is_answered(void **state)
{
    (void)state;
    struct serve_handle *h = start_preset("quiet");
    int port = serve_port(h);
    struct resp r;
    struct tconn *c = tconnect(port);
    tsend(c, "GET /work?ms=80 HTTP/1.1\r\n\r\n");
    struct serve_counters sc;
    AWAIT(h, sc, sc.active == 1); /* the work is running when the EOF comes */
    assert_int_equal(shutdown(c->fd, SHUT_WR), 0);
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_true(tsees_eof(c, 3000));
    tclose(c);

    /* Pipelined, with the EOF in the same breath: all three answered, in order. */
    c = tconnect(port);
    tsend(c, "GET /work?ms=30 HTTP/1.1\r\n\r\nGET /health HTTP/1.1\r\n\r\nGET /work?ms=1 HTTP/1.1\r\n\r\n");
    assert_int_equal(shutdown(c->fd, SHUT_WR), 0);
    assert_int_equal(tread(c, &r), 0);
    assert_non_null(strstr(r.body, "\"work_ms\":30.000"));
    assert_int_equal(tread(c, &r), 0);
    assert_non_null(strstr(r.body, "UP"));
    assert_int_equal(tread(c, &r), 0);
    assert_non_null(strstr(r.body, "\"work_ms\":1.000"));
    assert_true(tsees_eof(c, 3000));
    tclose(c);

    /* An incomplete request before the EOF can never complete: closed, unanswered. */
    c = tconnect(port);
    tsend(c, "GET / HTTP/1.1\r\nHost: x\r\n");
    assert_int_equal(shutdown(c->fd, SHUT_WR), 0);
    assert_true(tsees_eof(c, 3000));
    tclose(c);

    struct serve_counters fc;
    serve_stop(h, &fc);
    assert_int_equal(fc.ok, 3);
    assert_int_equal(fc.requests, 4);
    assert_int_equal(fc.write_failures, 0);
    assert_int_equal(fc.cancelled, 0);
    assert_int_equal(fc.connections, 0);
}

/* Requests the framing rules refuse, through a real socket: the status, the reason, and
 * the close (a smuggled request in the body is never answered). */
static void test_framing_refused_over_the_wire(void **state)
{
    (void)state;
    struct serve_handle *h = start_preset("null");
    int port = serve_port(h);
    static const struct {
        const char *req;
        int status;
        const char *reason;
    } cases[] = {
        {"POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n", 400,
         "BAD_REQUEST"},
        {"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "BAD_REQUEST"},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501,
         "TRANSFER_CODING_NOT_IMPLEMENTED"},
        {"GET / HTTP/9.9\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED"},
        {"GET / HTTP/1.1\r\nX-A: b\r\n c\r\n\r\n", 400, "BAD_REQUEST"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tconn *c = tconnect(port);
        struct resp r;
        tsend(c, cases[i].req);
        assert_int_equal(tread(c, &r), 0);
        assert_int_equal(r.status, cases[i].status);
        assert_non_null(strstr(r.body, cases[i].reason));
        assert_non_null(strcasestr(r.head, "Connection: close"));
        assert_true(tsees_eof(c, 3000)); /* nothing after the error, and no reset */
        tclose(c);
    }
    struct serve_counters fc;
    serve_stop(h, &fc);
    assert_int_equal(fc.bad_requests, sizeof cases / sizeof cases[0]);
    assert_int_equal(fc.requests, 0);
}

/* The lingering close: a client that sends an oversized request in full (more than the
 * kernel buffers hold, so the server must read on after its 413) reads the status and a
 * clean EOF every time; a client that never stops sending is cut off at the byte bound. */
static void test_lingering_close_delivers_the_error(void **state)
{
    (void)state;
    struct serve_config cfg;
    serve_preset("null", &cfg);
    cfg.max_body_bytes = 1024;
    struct serve_handle *h = start(&cfg);
    int port = serve_port(h);
    size_t body_len = 8u << 20;
    char *req = malloc(body_len + 128);
    int hl = snprintf(req, 128, "POST / HTTP/1.1\r\nContent-Length: %zu\r\n\r\n", body_len);
    memset(req + hl, 'b', body_len);
    for (int i = 0; i < 5; i++) {
        struct tconn *c = tconnect(port);
        assert_int_equal(tsend_all(c, req, (size_t)hl + body_len), 0);
        struct resp r;
        assert_int_equal(tread(c, &r), 0);
        assert_int_equal(r.status, 413);
        assert_non_null(strstr(r.body, "BODY_TOO_LARGE"));
        assert_true(tsees_eof(c, 3000));
        tclose(c);
    }
    free(req);

    /* A sender without end: the server discards up to its byte bound, then closes. */
    struct tconn *c = tconnect(port);
    tsend(c, "POST / HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n");
    static char chunk[1 << 16];
    memset(chunk, 'x', sizeof chunk);
    uint64_t sent = 0, t0 = clock_now_ns();
    int rc = 0;
    while (rc == 0 && clock_now_ns() - t0 < 30 * NS_PER_S)
        if ((rc = tsend_all(c, chunk, sizeof chunk)) == 0)
            sent += sizeof chunk;
    assert_true(rc == -ECONNRESET || rc == -EPIPE);
    assert_true(sent > (64u << 20) && sent < (64u << 20) + (64u << 20)); /* the bound, plus buffers */
    tclose(c);
    struct serve_counters fc;
    serve_stop(h, &fc);
    assert_int_equal(fc.bad_requests, 6);
    assert_int_equal(fc.connections, 0);
}

static void test_header_timeout_and_conn_limit(void **state)
{
    (void)state;
    struct serve_config cfg;
    serve_preset("null", &cfg);
    cfg.header_timeout_ns = 200 * NS_PER_MS;
    cfg.max_conns = 2;
    struct serve_handle *h = start(&cfg);
    int port = serve_port(h);
    struct tconn *slow = tconnect(port);
    tsend(slow, "GET / HTTP/1.1\r\nHost: slo");
    uint64_t t0 = clock_now_ns();
    struct resp r;
    assert_int_equal(tread(slow, &r), 0);
    double ms = (double)(clock_now_ns() - t0) / 1e6;
    assert_int_equal(r.status, 408);
    assert_true(ms >= 150 && ms < 5000);
    assert_true(tsees_close(slow, 3000));
    tclose(slow);

    struct tconn *a = tconnect(port), *b = tconnect(port);
    tsend(a, "GET / HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(a, &r), 0);
    tsend(b, "GET / HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(b, &r), 0);
    struct tconn *c = tconnect(port); /* the third: refused with a 503, then EOF */
    tsend(c, "GET / HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(r.body, "CONN_LIMIT"));
    assert_true(tsees_eof(c, 3000));
    tclose(c);
    tclose(a);
    struct serve_counters sc;
    AWAIT(h, sc, sc.connections == 1); /* a's slot is free again: only b is left */
    c = tconnect(port);
    tsend(c, "GET / HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 200);
    tclose(c);
    tclose(b);
    struct serve_counters fc;
    serve_stop(h, &fc);
    assert_int_equal(fc.timeouts, 1);
    assert_int_equal(fc.conn_refused, 1);
}

static void test_graceful_stop_finishes_in_flight(void **state)
{
    (void)state;
    struct serve_handle *h = start_preset("queue");
    int port = serve_port(h);
    struct tconn *c = tconnect(port), *idle = tconnect(port);
    tsend(c, "GET /work?ms=300 HTTP/1.1\r\n\r\n");
    struct serve_counters sc;
    AWAIT(h, sc, sc.active == 1 && sc.connections == 2); /* in flight, and idle is accepted */
    serve_shutdown(h);
    struct resp r;
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.head, "Connection: close\r\n"));
    assert_true(tsees_close(idle, 3000));
    struct serve_counters fc;
    serve_stop(h, &fc);
    assert_int_equal(fc.ok, 1);
    assert_int_equal(fc.connections, 0);
    tclose(c);
    tclose(idle);
}

static void test_cpu_work_is_real(void **state)
{
    (void)state;
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    cpu_burn(20 * NS_PER_MS);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    double used_ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    assert_true(used_ms >= 20 && used_ms < 40);

    struct serve_handle *h = start_preset("flat");
    struct tconn *c = tconnect(serve_port(h));
    struct resp r;
    tsend(c, "GET / HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_true(timing(&r, "work") >= 9.9);
    tsend(c, "GET /work?ms=3 HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_true(timing(&r, "work") >= 2.9);
    assert_non_null(strstr(r.body, "\"work_ms\":3.000"));
    tclose(c);
    struct serve_counters fc;
    serve_stop(h, &fc);
    assert_int_equal(fc.executed, 2);
}

static void test_idle_timeout_closes_quietly(void **state)
{
    (void)state;
    struct serve_config cfg;
    serve_preset("null", &cfg);
    cfg.idle_timeout_ns = 1000 * NS_PER_MS;
    struct serve_handle *h = start(&cfg);
    struct tconn *c = tconnect(serve_port(h));
    struct resp r;
    tsend(c, "GET / HTTP/1.1\r\n\r\n");
    assert_int_equal(tread(c, &r), 0);
    assert_false(tsees_close(c, 200)); /* still open well before the idle timeout */
    assert_true(tsees_close(c, 5000)); /* closed after it */
    tclose(c);
    struct serve_counters fc;
    serve_stop(h, &fc);
    assert_int_equal(fc.timeouts, 0); /* an idle keep-alive close is not a timeout */
    assert_int_equal(fc.connections, 0);
}

static void test_grace_expiry_forces_close(void **state)
{
    (void)state;
    /* A 3 s request (and a CPU job) in flight, 200 ms of grace: stop returns long before. */
    struct serve_config cfg;
    serve_preset("quiet", &cfg);
    cfg.grace_ns = 200 * NS_PER_MS;
    struct serve_handle *h = start(&cfg);
    struct tconn *c = tconnect(serve_port(h));
    tsend(c, "GET /work?ms=3000 HTTP/1.1\r\n\r\n");
    serve_preset("flat", &cfg);
    cfg.grace_ns = 100 * NS_PER_MS;
    struct serve_handle *f = start(&cfg);
    struct tconn *d = tconnect(serve_port(f));
    tsend(d, "GET /work?ms=300 HTTP/1.1\r\n\r\nGET /work?ms=300 HTTP/1.1\r\n\r\n");
    struct serve_counters sc;
    AWAIT(h, sc, sc.active == 1); /* the 3 s request is in flight */
    AWAIT(f, sc, sc.active == 1); /* and the CPU job runs */
    uint64_t t0 = clock_now_ns();
    serve_shutdown(f); /* both servers stop at once */
    serve_stop(h, NULL);
    double ms = (double)(clock_now_ns() - t0) / 1e6;
    /* The 3 s request waits on a timer: cut at the 200 ms grace, however loaded the machine. */
    assert_true(ms < 2500);
    assert_true(tsees_close(c, 2000));
    /* A CPU job cannot be interrupted: the stop waits for the one in progress (300 ms of CPU,
     * longer in wall time on a loaded machine), and the request behind it never runs. */
    struct serve_counters fc;
    serve_stop(f, &fc);
    print_message("flat server stopped %.0f ms after the shutdown: executed %llu, ok %llu\n",
                  (double)(clock_now_ns() - t0) / 1e6, (unsigned long long)fc.executed, (unsigned long long)fc.ok);
    assert_true(fc.executed <= 1);
    assert_int_equal(fc.ok, 0); /* 300 ms of CPU never fit in the 100 ms grace */
    assert_int_equal(fc.connections, 0);
    assert_true(tsees_close(d, 2000));
    tclose(c);
    tclose(d);
}

static void test_ipv6_loopback(void **state)
{
    (void)state;
    struct serve_config cfg;
    serve_preset("null", &cfg);
    snprintf(cfg.listen, sizeof cfg.listen, "[::1]:0");
    struct serve_handle *h = NULL;
    int rc = serve_start(&cfg, &h);
    if (rc == -EADDRNOTAVAIL || rc == -EAFNOSUPPORT) {
        print_message("skipped: no IPv6 loopback on this machine ([::1]: %s)\n", strerror(-rc));
        skip();
    }
    assert_int_equal(rc, 0);
    char want[64];
    snprintf(want, sizeof want, "[::1]:%d", serve_port(h));
    assert_string_equal(serve_address(h), want);
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)serve_port(h))};
    a.sin6_addr = in6addr_loopback;
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    const char req[] = "GET / HTTP/1.1\r\n\r\n";
    assert_int_equal(send(fd, req, sizeof req - 1, 0), (ssize_t)(sizeof req - 1));
    char buf[512];
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    assert_true(n > 12);
    assert_memory_equal(buf, "HTTP/1.1 200", 12);
    close(fd);
    serve_stop(h, NULL);
}

/* Count allocations by interposing malloc and friends in this executable (glibc exports
 * the real ones as __libc_*). Not under AddressSanitizer, which owns malloc itself. */
#if defined(__SANITIZE_ADDRESS__)
#define COUNT_ALLOCS 0
#else
#define COUNT_ALLOCS 1
#include <stdatomic.h>
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
static _Atomic unsigned long allocations;
void *malloc(size_t n)
{
    atomic_fetch_add(&allocations, 1);
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t m)
{
    atomic_fetch_add(&allocations, 1);
    return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n)
{
    atomic_fetch_add(&allocations, 1);
    return __libc_realloc(p, n);
}
#endif

static void test_no_allocation_per_request(void **state)
{
    (void)state;
    if (!COUNT_ALLOCS) {
        print_message("skipped: AddressSanitizer owns malloc, so allocations cannot be counted here\n");
        skip();
        return;
    }
#if COUNT_ALLOCS
    struct serve_config cfg;
    serve_preset("quiet", &cfg);
    cfg.hit_ns = cfg.miss_ns = 100 * NS_PER_US; /* every request arms a work timer */
    cfg.pool = 1;
    struct serve_handle *h = start(&cfg);
    struct serve_handle *n = start_preset("null");
    struct tconn *a = tconnect(serve_port(h)), *b = tconnect(serve_port(n)), *q = tconnect(serve_port(h));
    struct resp r;
    unsigned long before = 0;
    for (int round = 0; round < 2; round++) { /* round 0 warms up: connections, timer heap */
        if (round == 1)
            before = atomic_load(&allocations);
        for (int i = 0; i < 200; i++) {
            /* Two clients on one slot (the FIFO queue), /stats, pipelined null requests. */
            tsend(a, i % 10 ? "GET / HTTP/1.1\r\n\r\n" : "GET /stats HTTP/1.1\r\n\r\n");
            tsend(q, "GET /work?ms=0.2 HTTP/1.1\r\n\r\n");
            tsend(b, "GET / HTTP/1.1\r\n\r\nGET /health HTTP/1.1\r\n\r\n");
            assert_int_equal(tread(a, &r), 0);
            assert_int_equal(tread(q, &r), 0);
            assert_int_equal(tread(b, &r), 0);
            assert_int_equal(tread(b, &r), 0);
        }
    }
    unsigned long during = atomic_load(&allocations) - before;
    /* 400 work requests, 20 /stats, 400 null and /health responses: no allocation at all. */
    assert_int_equal(during, 0);
    tclose(a);
    tclose(b);
    tclose(q);
    serve_stop(h, NULL);
    serve_stop(n, NULL);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_and_checks),
        cmocka_unit_test(test_listen_split),
        cmocka_unit_test(test_null_target_and_exact_stats),
        cmocka_unit_test(test_pipelining_answers_in_order),
        cmocka_unit_test(test_connection_close_and_http10),
        cmocka_unit_test(test_bad_requests_and_others_keep_working),
        cmocka_unit_test(test_acquire_timeout_and_fifo),
        cmocka_unit_test(test_completion_order_is_fifo),
        cmocka_unit_test(test_seed_reproducible),
        cmocka_unit_test(test_client_leaving),
        cmocka_unit_test(test_half_close_is_answered),
        cmocka_unit_test(test_framing_refused_over_the_wire),
        cmocka_unit_test(test_lingering_close_delivers_the_error),
        cmocka_unit_test(test_header_timeout_and_conn_limit),
        cmocka_unit_test(test_graceful_stop_finishes_in_flight),
        cmocka_unit_test(test_cpu_work_is_real),
        cmocka_unit_test(test_idle_timeout_closes_quietly),
        cmocka_unit_test(test_grace_expiry_forces_close),
        cmocka_unit_test(test_ipv6_loopback),
        cmocka_unit_test(test_server_time),
        cmocka_unit_test(test_no_allocation_per_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
