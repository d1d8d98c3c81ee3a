/* A connection's byte stream for the load engine: the transport rows (struct conn_ops,
 * load/worker.h) of plain sockets and TLS (src/tls): connect, handshake, read, write, close.
 * The protocols above (h1.c, h2.c) read and write every connection through c->ops, so they do
 * not know which row they ride; every row answers in src/tls's terms (enum tls_io). The third
 * row, io_uring's, is in uring.c. */
#include "load/worker.h"

#include "net/bind.h"

#include "core/clock.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ TCP (both rows) */

static int tcp_connect(struct conn *c, const struct net_addr *addr)
{
    int fd = -1;
    int r = net_connect_start_from(route_dest(c, addr), route_source(c->w), &fd);
    if (r == 0)
        c->io.fd = fd;
    return r;
}

static int tcp_connected(struct conn *c)
{
    return net_connect_finish(c->io.fd);
}

/* ------------------------------------------------------------------ plain */

/* A read that returned n <= 0 (both plain rows): the peer's end, nothing yet, or the error
 * (kept in c->sys_errno); false: interrupted, read again. */
static bool read_ended(struct conn *c, ssize_t n, enum tls_io *r)
{
    if (n == 0) {
        *r = TLS_IO_EOF;
        return true;
    }
    if (errno == EINTR)
        return false;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
        *r = TLS_IO_WANT_READ;
        return true;
    }
    c->sys_errno = errno;
    *r = TLS_IO_ERROR;
    return true;
}

static enum tls_io plain_read(struct conn *c, void *buf, size_t cap, size_t *got)
{
    *got = 0;
    enum tls_io r;
    for (;;) {
        ssize_t n = read(c->io.fd, buf, cap);
        if (n > 0) {
            *got = (size_t)n;
            return TLS_IO_OK;
        }
        if (read_ended(c, n, &r))
            return r;
    }
}

static enum tls_io plain_write(struct conn *c, const void *buf, size_t len, size_t *put)
{
    *put = 0;
    for (;;) {
        ssize_t n = send(c->io.fd, buf, len, MSG_NOSIGNAL);
        if (n > 0) {
            *put = (size_t)n;
            return TLS_IO_OK;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return TLS_IO_WANT_WRITE;
        c->sys_errno = n < 0 ? errno : EPIPE;
        return TLS_IO_ERROR;
    }
}

/* ------------------------------------------------------------------ plain, stamped */

/* Deferred reads (worker.c worker_hold): the thread may read a response at its next wake, up
 * to WORKER_HOLD_MAX_NS after it arrived, so every read takes the time the kernel received
 * what it read (SO_TIMESTAMPNS: the newest segment the read took, on CLOCK_REALTIME) onto the
 * monotonic clock. A read without it (a kernel that does not stamp) ends the deferral. */
static void stamped_attach(struct conn *c)
{
    int on = 1;
    if (setsockopt(c->io.fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0)
        c->w->defer_reads = false;
}

static uint64_t rx_mono_ns(struct worker *w, const struct timespec *ts)
{
    if (w->rt_off_wake != w->loop.iterations) { /* once per wake: the two clocks move together */
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        uint64_t mono = clock_now_ns();
        w->rt_off_ns = (int64_t)((uint64_t)rt.tv_sec * NS_PER_S + (uint64_t)rt.tv_nsec) - (int64_t)mono;
        w->rt_off_wake = w->loop.iterations;
    }
    int64_t v = (int64_t)((uint64_t)ts->tv_sec * NS_PER_S + (uint64_t)ts->tv_nsec) - w->rt_off_ns;
    return v > 0 ? (uint64_t)v : 1;
}

static enum tls_io stamped_read(struct conn *c, void *buf, size_t cap, size_t *got)
{
    *got = 0;
    c->rx_ns = 0;
    struct iovec iov = {.iov_base = buf, .iov_len = cap};
    union {
        char b[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    enum tls_io r;
    for (;;) {
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
        ssize_t n = recvmsg(c->io.fd, &m, 0);
        if (n > 0) {
            *got = (size_t)n;
            for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
                if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_TIMESTAMPNS) {
                    struct timespec ts;
                    memcpy(&ts, CMSG_DATA(h), sizeof ts);
                    c->rx_ns = rx_mono_ns(c->w, &ts);
                }
            if (!c->rx_ns)
                c->w->defer_reads = false;
            return TLS_IO_OK;
        }
        if (read_ended(c, n, &r))
            return r;
    }
}

uint64_t conn_rx_at(const struct conn *c, uint64_t sent_ns)
{
    uint64_t now = clock_now_ns();
    if (c->ops != &conn_stamped_ops || !c->rx_ns || c->rx_ns > now)
        return now;
    return c->rx_ns > sent_ns ? c->rx_ns : sent_ns;
}

/* ------------------------------------------------------------------ TLS */

/* The client state over the connected socket: SNI and verification for the URL's host, the
 * target's newest session ticket offered unless --tls-no-resume. */
static int tls_start(struct conn *c)
{
    const struct engine *e = c->w->e;
    struct target_rt *t = c->t;
    int r = tls_conn_client(&c->tls, e->tls, c->io.fd, t->et->url.host, e->cfg->tls_no_resume ? NULL : &t->tls_cache);
    if (r == 0)
        c->tls_on = true;
    return r;
}

static enum tls_io tls_step(struct conn *c)
{
    return tls_conn_handshake(&c->tls);
}

static void tls_timeout(struct conn *c)
{
    tls_conn_fail(&c->tls, TLS_R_HANDSHAKE_TIMEOUT, "the TLS handshake did not finish within --timeout");
}

static int tls_opened(struct conn *c, struct run_proto_counts *pc)
{
    if (c->tls.resumed)
        pc->tls_resumed++;
    else
        pc->tls_full++;
    int v = tls_conn_version_number(&c->tls);
    if (v >= TLS_V1_0 && v <= TLS_V1_3)
        pc->tls_version[v - TLS_V1_0]++;
    c->log_tls = c->tls.resumed ? REQLOG_TLS_RESUMED : REQLOG_TLS_FULL;
    if (c->tls.cert_requested) /* mutual TLS: a 400 may be its refusal (result.c warns) */
        pc->tls_cert_requested++;
    return (int)c->tls.proto;
}

static enum tls_io tls_read(struct conn *c, void *buf, size_t cap, size_t *got)
{
    return tls_conn_read(&c->tls, buf, cap, got);
}

static enum tls_io tls_write(struct conn *c, const void *buf, size_t len, size_t *put)
{
    return tls_conn_write(&c->tls, buf, len, put);
}

static bool tls_pending(const struct conn *c)
{
    return c->tls_on && tls_conn_pending(&c->tls);
}

static void tls_close(struct conn *c)
{
    if (!c->tls_on)
        return;
    tls_conn_shutdown(&c->tls);
    tls_conn_release(&c->tls);
    c->tls_on = false;
}

static void tls_release(struct conn *c)
{
    if (c->tls_on)
        tls_conn_release(&c->tls);
}

const struct conn_ops conn_plain_ops = {
    .connect = tcp_connect,
    .connected = tcp_connected,
    .read = plain_read,
    .write = plain_write,
};

const struct conn_ops conn_stamped_ops = {
    .connect = tcp_connect,
    .connected = tcp_connected,
    .attach = stamped_attach,
    .read = stamped_read,
    .write = plain_write,
};

/* The TLS row's calls, shared by the direct and the tunnelled row (a designated-initializer list:
 * a row adds its own members after it). */
#define TLS_OPS                                                                                                        \
    .connect = tcp_connect, .connected = tcp_connected, .start = tls_start, .handshake = tls_step,                     \
    .timeout = tls_timeout, .opened = tls_opened, .read = tls_read, .write = tls_write, .pending = tls_pending,        \
    .close = tls_close, .release = tls_release

/* TLS to the target inside a proxy's CONNECT tunnel: the TLS row after the tunnel's exchange
 * (proxy.c). */
const struct conn_ops conn_proxy_tls_ops = {TLS_OPS, .tunnel = proxy_tunnel};

const struct conn_ops conn_tls_ops = {TLS_OPS};
