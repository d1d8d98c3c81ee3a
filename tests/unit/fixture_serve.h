/* The knee serve tests' fixtures (tests/unit/test_serve.c, test_serve_timing.c): a tiny blocking
 * HTTP/1.1 client over loopback, servers started in-process on port 0, and AWAIT, which polls a
 * server's counters until a condition holds (bounded: the tests never sleep to let the server
 * catch up). Test code, header-only (static inline: each test uses the part it needs). */
#ifndef KNEE_TESTS_FIXTURE_SERVE_H
#define KNEE_TESTS_FIXTURE_SERVE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "serve/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- a tiny blocking HTTP client ------------------------------------------------------ */

struct tconn {
    int fd;
    size_t len;
    char buf[65536];
};

struct resp {
    int status;
    char head[2048];
    char body[2048];
    size_t body_len;
};

static inline struct tconn *tconnect(int port)
{
    struct tconn *c = calloc(1, sizeof *c);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(c->fd >= 0);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(c->fd, (struct sockaddr *)&a, sizeof a), 0);
    return c;
}

static inline void tclose(struct tconn *c)
{
    close(c->fd);
    free(c);
}

/* Close with a reset (SO_LINGER 0): the server's next read or write fails at once. */
static inline void treset(struct tconn *c)
{
    struct linger l = {.l_onoff = 1, .l_linger = 0};
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    tclose(c);
}

/* Send all of n bytes (blocking). Returns 0, or -errno when the server reset or closed. */
static inline int tsend_all(struct tconn *c, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
        if (k < 0)
            return errno == EINTR ? 0 : -errno;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static inline void tsend(struct tconn *c, const char *s)
{
    size_t n = strlen(s);
    assert_int_equal(send(c->fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Read one response. Returns 0, or -1 when the server closed (or the read timed out). */
static inline int tread(struct tconn *c, struct resp *r)
{
    for (;;) {
        char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (end) {
            size_t hlen = (size_t)(end - c->buf) + 4;
            size_t clen = 0;
            for (char *p = c->buf; p < end; p++)
                if (strncasecmp(p, "\r\ncontent-length:", 17) == 0)
                    clen = strtoul(p + 17, NULL, 10);
            if (c->len >= hlen + clen) {
                memset(r, 0, sizeof *r);
                r->status = atoi(c->buf + 9);
                memcpy(r->head, c->buf, hlen < sizeof r->head - 1 ? hlen : sizeof r->head - 1);
                r->body_len = clen < sizeof r->body - 1 ? clen : sizeof r->body - 1;
                memcpy(r->body, c->buf + hlen, r->body_len);
                memmove(c->buf, c->buf + hlen + clen, c->len - hlen - clen);
                c->len -= hlen + clen;
                return 0;
            }
        }
        if (c->len == sizeof c->buf)
            return -1;
        ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
        if (n <= 0)
            return -1;
        c->len += (size_t)n;
    }
}

/* True when the server closes the connection (EOF or reset) within timeout_ms. */
static inline bool tsees_close(struct tconn *c, int timeout_ms)
{
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) <= 0)
        return false;
    char b[4096];
    ssize_t n = recv(c->fd, b, sizeof b, 0);
    return n <= 0;
}

/* True when the server ends the connection with a clean EOF (not a reset) within
 * timeout_ms, after nothing more than what is buffered. */
static inline bool tsees_eof(struct tconn *c, int timeout_ms)
{
    if (c->len)
        return false;
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) <= 0)
        return false;
    char b[64];
    return recv(c->fd, b, sizeof b, 0) == 0;
}

static inline double timing(const struct resp *r, const char *name)
{
    char key[32];
    snprintf(key, sizeof key, "%s;dur=", name);
    const char *p = strstr(r->head, key);
    return p ? strtod(p + strlen(key), NULL) : -1;
}

static inline uint64_t json_u64(const char *body, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(body, k);
    assert_non_null(p);
    return strtoull(p + strlen(k), NULL, 10);
}

static inline struct serve_handle *start(struct serve_config *cfg)
{
    struct serve_handle *h = NULL;
    assert_int_equal(serve_start(cfg, &h), 0);
    assert_true(serve_port(h) > 0);
    return h;
}

static inline struct serve_handle *start_preset(const char *name)
{
    struct serve_config cfg;
    assert_int_equal(serve_preset(name, &cfg), 0);
    return start(&cfg);
}

/* Sleep ms milliseconds: pacing only (requests spread over a second), never to wait for the
 * server (AWAIT does that). */
static inline void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Poll the server's counters into sc until cond holds (every 0.2 ms, at most 10 s: a loaded
 * machine is slow, never that slow); the test fails naming the condition otherwise. */
#define AWAIT(h, sc, cond)                                                                                             \
    do {                                                                                                               \
        uint64_t await_end_ = clock_now_ns() + 10 * NS_PER_S;                                                          \
        for (;;) {                                                                                                     \
            serve_counters((h), &(sc));                                                                                \
            if (cond)                                                                                                  \
                break;                                                                                                 \
            if (clock_now_ns() > await_end_)                                                                           \
                fail_msg("%s:%d: still not %s after 10 s", __FILE__, __LINE__, #cond);                                 \
            struct timespec await_nap_ = {.tv_nsec = 200000};                                                          \
            nanosleep(&await_nap_, NULL);                                                                              \
        }                                                                                                              \
    } while (0)

#endif
