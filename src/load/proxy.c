/* --proxy on a load thread's request path. An https:// target's connection is a tunnel: after
 * the TCP connect to the proxy, the tunnel row (conn_proxy_tls_ops, transport.c) writes the
 * target's CONNECT request and reads the proxy's answer (proxy_tunnel) while the connection is
 * still CONNECTING, so the connect phase (connect_ns) is the TCP connect plus the CONNECT
 * exchange; TLS to the target (SNI and the certificate check for the URL's host, ALPN) then
 * runs inside the tunnel as on any connection. A refusal (any status but 2xx: 407, 403, 502...)
 * fails the connect with cause proxy_refused and is counted by status. An http:// target's
 * requests go to the proxy in absolute form ("GET http://host:port/path HTTP/1.1") with the
 * proxy's credentials: the serialised request is rewritten as it is written (one copy per
 * request into the connection's own buffer), so every way a request is prepared (a target's
 * fixed bytes, a request source's variants) goes through one place. */
#include "load/worker.h"

#include "core/err.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

int proxy_tunnel(struct conn *c)
{
    const struct engine_target *et = c->t->et;
    while (c->proxy_sent < et->proxy_connect_len) {
        ssize_t n =
            send(c->io.fd, et->proxy_connect + c->proxy_sent, et->proxy_connect_len - c->proxy_sent, MSG_NOSIGNAL);
        if (n > 0) {
            c->proxy_sent += (uint32_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            conn_want_out(c->w, c, true);
            return 1;
        }
        return n < 0 ? -errno : -EPIPE;
    }
    conn_want_out(c->w, c, false);
    /* small reads: the answer to a CONNECT is a short head, and a refusal is decided by its
     * status line (its body is never read) */
    char buf[512];
    for (;;) {
        ssize_t n = recv(c->io.fd, buf, sizeof buf, 0);
        if (n == 0)
            return -ECONNRESET; /* the proxy closed without an answer */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -errno;
        }
        size_t used = 0;
        int r = net_proxy_head_feed(&c->phead, buf, (size_t)n, &used);
        if (c->phead.status && c->phead.status / 100 != 2) {
            c->t->pc.proxy_refused[c->phead.status - RUN_PROXY_STATUS_MIN]++;
            return -EACCES;
        }
        if (r < 0)
            return -EPROTO;
        if (r > 0) /* a byte after the head before TLS began is not a tunnel */
            return used == (size_t)n ? 0 : -EPROTO;
    }
}

enum run_transport_cause proxy_fail_cause(const struct conn *c, int r)
{
    if (c->ops->tunnel && c->phead.status && c->phead.status / 100 != 2)
        return RUN_TC_PROXY_REFUSED;
    return account_connect_cause(r);
}

void proxy_request_bytes(struct conn *c, struct req *r)
{
    const struct engine *e = c->w->e;
    const struct engine_target *et = c->t->et;
    size_t need = r->len + et->proxy_origin_len + e->proxy->auth_len;
    if (c->pxcap < need) {
        c->pxbuf = xrealloc(c->pxbuf, need);
        c->pxcap = need;
    }
    size_t n = net_proxy_absolute(r->buf, r->len, et->proxy_origin, et->proxy_origin_len, e->proxy->auth,
                                  e->proxy->auth_len, c->pxbuf);
    if (n) {
        r->buf = c->pxbuf;
        r->len = n;
    }
}
