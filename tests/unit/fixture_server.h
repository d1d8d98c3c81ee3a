/* The engine tests' fixtures (tests/unit/test_load.c, test_rates.c): a tiny HTTP/1.1 server on
 * a thread of the test process, the run configuration those tests start from, and a port where
 * nobody listens. Test code, header-only (static inline: each test uses the part it needs).
 *
 * The server lives on the heap and is a cmocka fixture: a test registered with
 *     fixture_server_test(test_x)   (fixture_server_setup, fixture_server_teardown)
 * finds it in *state, and the teardown stops and joins its thread even when an assertion failed
 * half-way through the test (cmocka leaves the test by longjmp, then runs the teardown), so no
 * server thread outlives its test or reads memory of a test that has ended. A test that starts
 * its own servers keeps the one running in *state (fixture_server_new) and registers
 * fixture_server_teardown alone. */
#ifndef KNEE_TESTS_FIXTURE_SERVER_H
#define KNEE_TESTS_FIXTURE_SERVER_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "load/run.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

enum fixture_server_mode {
    FIXTURE_SERVER_OK,       /* answer every request */
    FIXTURE_SERVER_ONE_SHOT, /* answer a connection's first request; close on its second without a byte */
};

struct fixture_server {
    int lfd;
    uint16_t port;
    char url[64]; /* http://127.0.0.1:<port>/x */
    pthread_t tid;
    atomic_bool stop;
    enum fixture_server_mode mode;
};

enum { FIXTURE_SERVER_MAX_CONNS = 1024 };

/* One thread, poll over up to 1024 connections, no allocation: answers every request (a blank
 * line ends a GET) with a fixed 200 (FIXTURE_SERVER_ONE_SHOT: see above); checks its stop flag
 * at least every 50 ms. */
static inline void *fixture_server_main(void *arg)
{
    struct fixture_server *s = arg;
    struct pollfd p[FIXTURE_SERVER_MAX_CONNS + 1];
    int tail[FIXTURE_SERVER_MAX_CONNS + 1];   /* state of the "\r\n\r\n" search per connection */
    int served[FIXTURE_SERVER_MAX_CONNS + 1]; /* responses written on the connection */
    size_t n = 1;
    p[0].fd = s->lfd;
    p[0].events = POLLIN;
    static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    char buf[4096];
    while (!atomic_load(&s->stop)) {
        if (poll(p, n, 50) <= 0)
            continue;
        if ((p[0].revents & POLLIN) && n < FIXTURE_SERVER_MAX_CONNS + 1) {
            int c = accept(s->lfd, NULL, NULL);
            if (c >= 0) {
                p[n].fd = c;
                p[n].events = POLLIN;
                p[n].revents = 0;
                tail[n] = 0;
                served[n] = 0;
                n++;
            }
        }
        for (size_t i = 1; i < n; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = read(p[i].fd, buf, sizeof buf);
            bool hang_up = r <= 0;
            static const char end[] = "\r\n\r\n";
            for (ssize_t k = 0; k < r && !hang_up; k++) {
                tail[i] = buf[k] == end[tail[i]] ? tail[i] + 1 : (buf[k] == '\r' ? 1 : 0);
                if (tail[i] == 4) {
                    tail[i] = 0;
                    if (s->mode == FIXTURE_SERVER_ONE_SHOT && served[i]) {
                        hang_up = true;
                        break;
                    }
                    ssize_t w = write(p[i].fd, resp, sizeof resp - 1);
                    (void)w;
                    served[i]++;
                }
            }
            if (hang_up) {
                close(p[i].fd);
                p[i] = p[n - 1];
                tail[i] = tail[n - 1];
                served[i] = served[n - 1];
                n--;
                i--;
            }
        }
    }
    for (size_t i = 1; i < n; i++)
        close(p[i].fd);
    return NULL;
}

/* A server listening on 127.0.0.1 (a free port) with its thread running, or NULL when it could
 * not be set up (nothing is left behind then). No cmocka assertion: it may run in a setup. */
static inline struct fixture_server *fixture_server_new(enum fixture_server_mode mode)
{
    struct fixture_server *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->mode = mode;
    atomic_init(&s->stop, false);
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof a) || listen(s->lfd, 512) ||
        getsockname(s->lfd, (struct sockaddr *)&a, &len) || pthread_create(&s->tid, NULL, fixture_server_main, s)) {
        if (s->lfd >= 0)
            close(s->lfd);
        free(s);
        return NULL;
    }
    s->port = ntohs(a.sin_port);
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%u/x", s->port);
    return s;
}

/* Stops the thread, waits for it, closes every socket and frees s (NULL: nothing). */
static inline void fixture_server_free(struct fixture_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, true);
    pthread_join(s->tid, NULL);
    close(s->lfd);
    free(s);
}

static inline int fixture_server_setup(void **state)
{
    *state = fixture_server_new(FIXTURE_SERVER_OK);
    return *state ? 0 : -1;
}

static inline int fixture_server_setup_one_shot(void **state)
{
    *state = fixture_server_new(FIXTURE_SERVER_ONE_SHOT);
    return *state ? 0 : -1;
}

/* Stops whatever server *state holds, after the test passed or failed. */
static inline int fixture_server_teardown(void **state)
{
    fixture_server_free(*state);
    *state = NULL;
    return 0;
}

/* A test that finds a FIXTURE_SERVER_OK server in *state (one of its own for each test). */
#define fixture_server_test(f) cmocka_unit_test_setup_teardown(f, fixture_server_setup, fixture_server_teardown)

/* The run the engine tests start from: one target (tc), keep-alive, --timeout and --drain 5 s,
 * `threads` load threads; the test sets the loop, rate or connections and the bounds. */
static inline struct run_config fixture_run_config(const struct plan_target *tc, uint32_t threads)
{
    return (struct run_config){.plan.targets = tc,
                               .plan.ntargets = 1,
                               .timeout_ns = 5 * NS_PER_S,
                               .drain_ns = 5 * NS_PER_S,
                               .keepalive = true,
                               .threads = threads};
}

/* run_execute, failing the test with its error. */
static inline void run_once(struct run_config *cfg, struct run_record *res)
{
    char err[256];
    int r = run_execute(cfg, res, err, sizeof err);
    if (r)
        fail_msg("run_execute: %s", err);
}

/* In url, an http:// URL of 127.0.0.1 at a port that was bound, never listened on and closed
 * again: connecting there is refused. */
static inline void fixture_refused_url(char *url, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd);
    snprintf(url, len, "http://127.0.0.1:%u/x", ntohs(a.sin_port));
}

#endif
