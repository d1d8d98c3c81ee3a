/* A connection's byte stream for the load engine: the transport rows (struct conn_ops,
 * load/worker.h) of plain sockets and TLS (src/tls): connect, handshake, read, write, close.
 * The protocols above (h1.c, h2.c) read and write every connection through c->ops, so they do
 * not know which row they ride; every row answers in src/tls's terms (enum tls_io). The third
 * row, io_uring's, is in uring.c. */
#include "load/worker.h"

#include "net/bind.h"

#include <errno.h>
#include <sys/socket.h>
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

static enum tls_io plain_read(struct conn *c, void *buf, size_t cap, size_t *got)
{
    *got = 0;
    for (;;) {
        ssize_t n = read(c->io.fd, buf, cap);
        if (n > 0) {
            *got = (size_t)n;
            return TLS_IO_OK;
        }
        if (n == 0)
            return TLS_IO_EOF;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return TLS_IO_WANT_READ;
        c->sys_errno = errno;
        return TLS_IO_ERROR;
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
