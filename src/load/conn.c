/* The connection pool and a connection's life of a load thread: allocation, the connect, the
 * handshake, the choice of its protocol when it is ready, its failures, its close.
 *
 * Connection state machine (struct conn):
 *   FREE → CONNECTING (non-blocking connect through its transport row, EPOLLIN|EPOLLOUT registered;
 *                     with --connect-rate it may first wait for its turn without a socket, route.c;
 *                     through a proxy's tunnel the CONNECT exchange follows the TCP connect, proxy.c)
 *        → HANDSHAKING (a row with a handshake, https: TLS; its own phase and histogram)
 *        → READY: its protocol row is chosen once (ALPN, or prior knowledge) and owns it:
 *            HTTP/1.1 (h1.c): idle (no request; EPOLLIN only, so a close by the server is seen)
 *              or busy (request written or being written; response being parsed) → idle or closed;
 *            HTTP/2 (h2.c): a session with up to --streams requests at once, one per stream → closed.
 *        → FREE (conn_close: the protocol's state, then the transport's, then the descriptor).
 * Bytes go through the connection's transport row (c->ops: plain, TLS, io_uring). A request
 * is written directly from whatever callback decided to send it; EPOLLOUT is armed only when a
 * write would block (one epoll_ctl pair per short write, none per request).
 *
 * A request in flight is a struct req from the thread's pool: an HTTP/1.1 connection carries
 * one (conn.req), an HTTP/2 connection one per open stream. "Idle" in the open loop means
 * "has room": a connection is on its target's available list while it can take a request
 * (an idle HTTP/1.1 one, or an HTTP/2 session with a free stream); a planned request that
 * finds none opens a connection or waits, by --when-busy, exactly as over HTTP/1.1. A request
 * may also be bound to a connection that is not ready yet (conn.req while CONNECTING or
 * HANDSHAKING): it goes out when the connection is ready. */
#include "load/worker.h"

#include "core/clock.h"
#include "core/err.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void conn_on_io(struct loop *loop, struct loop_io *io, uint32_t events);

/* ------------------------------------------------------------------ pool */

static struct conn *conn_alloc(struct worker *w)
{
    struct conn *c = w->free_head;
    /* A connection freed in this loop iteration may still have events queued in the
     * current epoll batch; reusing it now would hand them to a different socket. */
    if (c && c->freed_iter != w->loop.iterations) {
        w->free_head = c->next;
        if (!w->free_head)
            w->free_tail = NULL;
        return c;
    }
    struct conn *chunk = xcalloc(CONN_CHUNK, sizeof *chunk);
    w->chunks = xrealloc(w->chunks, (w->nchunks + 1) * sizeof *w->chunks);
    w->chunks[w->nchunks++] = chunk;
    for (size_t i = 1; i < CONN_CHUNK; i++) {
        chunk[i].state = CONN_FREE;
        chunk[i].io.fd = -1;
        chunk[i].freed_iter = UINT64_MAX;
        chunk[i].next = w->free_head;
        w->free_head = &chunk[i];
        if (!w->free_tail)
            w->free_tail = &chunk[i];
    }
    return &chunk[0];
}

/* ------------------------------------------------------------------ lists */

/* The deadline FIFO of connections that carry no request while they connect or handshake
 * (knee run has no connect timeout of its own: --timeout from the connect start). Connects
 * start in time order, so a push is always at the tail. */
static uint64_t conn_deadline(const struct worker *w, const struct conn *c)
{
    return c->connect_start_ns + w->e->timeout_ns;
}

static void cfifo_push(struct worker *w, struct conn *c)
{
    c->in_cfifo = true;
    c->cnext = NULL;
    c->cprev = w->cfifo_tail;
    if (w->cfifo_tail)
        w->cfifo_tail->cnext = c;
    else
        w->cfifo_head = c;
    w->cfifo_tail = c;
    if (w->cfifo_head == c)
        loop_timer_arm(&w->loop, &w->conn_timer, conn_deadline(w, c));
}

static void cfifo_remove(struct worker *w, struct conn *c)
{
    if (!c->in_cfifo)
        return;
    c->in_cfifo = false;
    if (c->cprev)
        c->cprev->cnext = c->cnext;
    else
        w->cfifo_head = c->cnext;
    if (c->cnext)
        c->cnext->cprev = c->cprev;
    else
        w->cfifo_tail = c->cprev;
    c->cprev = c->cnext = NULL;
}

/* ------------------------------------------------------------------ open and close */

/* An open-loop connection opened for the queue counts in connecting_unbound until it is
 * ready, carries a request, or is gone. */
static void conn_unqueue(struct conn *c)
{
    if (c->for_queue) {
        c->for_queue = false;
        c->t->connecting_unbound--;
    }
}

static void leave_connecting(struct worker *w, struct conn *c)
{
    if (c->state == CONN_CONNECTING)
        w->connecting--;
}

void conn_close(struct worker *w, struct conn *c)
{
    leave_connecting(w, c);
    route_unwait(w, c);
    cfifo_remove(w, c);
    conn_unqueue(c);
    avail_remove(c->t, c);
    if (c->group && c->group->conn == c)
        c->group->conn = NULL;
    if (c->proto) {
        if (c->proto->close)
            c->proto->close(w, c);
        c->proto = NULL;
    }
    if (c->ops->close)
        c->ops->close(c);
    if (c->io.fd >= 0)
        close(c->io.fd); /* also removes it from the epoll set */
    c->io.fd = -1;
    c->io.cb = conn_on_io; /* a stale event of this batch finds it FREE */
    c->state = CONN_FREE;
    c->req = NULL;
    c->group = NULL;
    c->due = 0; /* off the due list: worker_settle skips it */
    c->freed_iter = w->loop.iterations;
    c->next = NULL;
    if (w->free_tail)
        w->free_tail->next = c;
    else
        w->free_head = c;
    w->free_tail = c;
    w->nopen--;
}

void conn_close_soon(struct worker *w, struct conn *c)
{
    if (c->proto && c->proto->settle)
        worker_due(w, c, DUE_CLOSE);
    else
        conn_close(w, c);
}

/* The fields of a connection's new life (conn_open). */
static void conn_reset(struct worker *w, struct target_rt *t, struct conn *c, uint64_t start_ns, bool for_queue)
{
    c->w = w;
    c->t = t;
    c->proto = NULL;
    c->group = NULL;
    c->state = CONN_CONNECTING;
    c->id = w->conn_seq++ * w->e->nworkers + w->index;
    c->connect_start_ns = start_ns;
    c->connected_ns = c->connect_ns = c->tls_ns = 0;
    c->nreq = 0;
    c->want_out = true;
    c->close_after = c->avail = c->in_cfifo = c->tls_on = false;
    c->due = 0;
    c->log_proto = REQLOG_PROTO_HTTP1;
    c->log_tls = REQLOG_TLS_PLAIN;
    c->fail_cause = 0;
    c->sys_errno = 0;
    c->ring_sent = false;
    c->req = NULL;
    c->h2 = NULL;
    c->h3 = NULL;
    c->for_queue = for_queue;
    c->tcp_up = false;
    c->proxy_sent = 0;
    memset(&c->phead, 0, sizeof c->phead);
}

/* Start c's TCP connect through ops and register it: 0, or -errno (nothing left open). */
static int conn_dial(struct worker *w, struct conn *c, const struct conn_ops *ops, struct target_rt *t)
{
    c->w = w; /* the rows' connect asks the thread where to go (route.c) */
    c->t = t;
    int r = ops->connect(c, &t->et->addr);
    if (r == 0) {
        c->io.cb = conn_on_io;
        c->io.data = c;
        r = loop_io_add(&w->loop, &c->io, EPOLLIN | EPOLLOUT);
        if (r)
            close(c->io.fd);
    }
    return r;
}

/* --connect-rate: c opens without a socket and waits for its turn (route.c). */
static void conn_open_waiting(struct worker *w, struct target_rt *t, struct conn *c, const struct conn_ops *ops,
                              uint64_t start, bool for_queue)
{
    c->ops = ops;
    c->io.fd = -1;
    c->io.cb = conn_on_io;
    c->io.data = c;
    conn_reset(w, t, c, start, for_queue);
    if (for_queue)
        t->connecting_unbound++;
    w->nopen++;
    w->connecting++;
    route_wait(w, c);
}

void conn_dial_late(struct worker *w, struct conn *c)
{
    struct target_rt *t = c->t;
    c->connect_start_ns = clock_now_ns(); /* its connect phase starts now */
    int r = conn_dial(w, c, c->ops, t);
    t->counts[0].conns_opened++;
    if (r) {
        c->io.fd = -1;
        t->counts[0].conns_failed++;
        conn_fail(w, c, account_connect_cause(r));
        return;
    }
    if (c->req) /* T1 is the start of the connect opened for it: the wait was not the server's */
        req_sent_at(w, c->req, c->connect_start_ns);
    else
        cfifo_push(w, c);
}

int conn_open(struct worker *w, struct target_rt *t, struct conn **out, bool for_queue)
{
    struct conn *c = conn_alloc(w);
    const struct conn_ops *ops = route_ops(w->e, t);
    uint64_t start = clock_now_ns();
    if (route_must_wait(w, start)) {
        conn_open_waiting(w, t, c, ops, start, for_queue);
        *out = c;
        return 0;
    }
    int r = conn_dial(w, c, ops, t);
    t->counts[0].conns_opened++;
    if (r) {
        t->counts[0].conns_failed++;
        c->io.fd = -1;
        c->state = CONN_FREE;
        c->freed_iter = UINT64_MAX; /* never registered: safe to reuse at once */
        c->next = w->free_head;
        w->free_head = c;
        if (!w->free_tail)
            w->free_tail = c;
        return r;
    }
    c->ops = ops;
    conn_reset(w, t, c, start, for_queue);
    if (for_queue)
        t->connecting_unbound++;
    w->nopen++;
    w->connecting++;
    cfifo_push(w, c);
    *out = c;
    return 0;
}

void conn_bind(struct worker *w, struct conn *c, struct req *r)
{
    c->req = r;
    req_attach(c, r);
    cfifo_remove(w, c);
    conn_unqueue(c);
}

void conn_drop(struct worker *w, struct conn *c, enum reqlog_outcome o, uint64_t done_ns)
{
    struct req *r = c->req;
    c->req = NULL;
    req_complete(w, r, o, done_ns);
    conn_close(w, c);
}

/* ------------------------------------------------------------------ failures */

void conn_failed(struct worker *w, struct conn *c, enum run_transport_cause cause)
{
    struct target_rt *t = c->t;
    struct cgroup *g = c->group;
    bool for_queue = c->for_queue;
    uint64_t attempt = c->connect_start_ns;
    conn_close(w, c);
    if (g) {
        group_wake(w, g);
        group_grow(w, t);
    } else {
        /* a failed connect opened for the queue fails the request at its head (one attempt
         * per request), or a refusing server would be retried forever */
        if (for_queue && (t->qlen || t->npend))
            pool_fail_queued(w, t, attempt, cause);
        pool_refill(w, t, NULL);
    }
    worker_maybe_finish(w);
}

void conn_fail(struct worker *w, struct conn *c, enum run_transport_cause cause)
{
    if (!c->req) {
        conn_failed(w, c, cause);
        return;
    }
    /* the connection's first request: never stale, so never sent again (--retry-stale) */
    struct req *r = c->req;
    struct target_rt *t = c->t;
    struct client *cl = r->client;
    r->tcause = (uint8_t)cause;
    conn_drop(w, c, OUTCOME_TRANSPORT, clock_now_ns());
    worker_after_request(w, t, cl, NULL);
    worker_maybe_finish(w);
}

/* A connection without a request that is still connecting or handshaking at its deadline
 * (connect start + --timeout) fails: a stalled handshake is tls_handshake_timeout, a connect
 * that never finished is connect. The queued request at the head fails with it (as after a
 * failed connect); a request bound to a connection times out through its own deadline. */
void conn_on_timeout(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    uint64_t now = clock_now_ns();
    while (w->cfifo_head && conn_deadline(w, w->cfifo_head) <= now) {
        struct conn *c = w->cfifo_head;
        enum run_transport_cause cause = RUN_TC_CONNECT;
        if (c->state == CONN_HANDSHAKING) {
            if (c->ops->timeout)
                c->ops->timeout(c);
            c->t->pc.tls_failed++;
            cause = RUN_TC_TLS_HANDSHAKE_TIMEOUT;
        } else {
            c->t->counts[0].conns_failed++;
        }
        conn_failed(w, c, cause);
    }
    if (w->cfifo_head)
        loop_timer_arm(&w->loop, &w->conn_timer, conn_deadline(w, w->cfifo_head));
    worker_maybe_finish(w);
}

/* ------------------------------------------------------------------ connecting */

/* c is connected (and through its handshake; alpn: what it negotiated, TLS_PROTO_*, or -1):
 * its protocol is chosen once, and takes the request bound to it or whatever waits. On a
 * thread with a ring, a cleartext connection of a protocol that takes completions moves to
 * the ring's transport row (w->clear_ops). */
static void conn_ready(struct worker *w, struct conn *c, int alpn)
{
    struct target_rt *t = c->t;
    cfifo_remove(w, c);
    conn_unqueue(c);
    bool h2 = alpn < 0 ? t->et->h2_known : alpn == TLS_PROTO_H2;
    const struct proto_ops *p = c->ops->proto ? c->ops->proto : h2 ? &proto_h2 : &proto_h1;
    struct req *r = c->req;
    if (r) {
        /* the connection's first request carries its connect and handshake (as main's connect_ns:
         * a connection opened before t0 began them before its first request was sent) */
        r->connect_ns = c->connect_ns;
        r->tls_ns = c->tls_ns;
    }
    c->proto = p;
    c->log_proto = p->log_proto;
    c->state = CONN_READY;
    c->io.cb = p->on_io; /* its events go to the protocol from now on */
    if (w->clear_ops && c->ops == &conn_plain_ops && p->input) {
        c->ops = w->clear_ops;
        c->ops->attach(c);
    }
    p->begin(w, c, r);
}

/* One step of the handshake; the tls phase is connected -> handshake done. */
static void handshake(struct worker *w, struct conn *c)
{
    enum tls_io io = c->ops->handshake(c);
    if (io == TLS_IO_WANT_READ || io == TLS_IO_WANT_WRITE) {
        conn_want_out(w, c, io == TLS_IO_WANT_WRITE);
        return;
    }
    struct target_rt *t = c->t;
    if (io != TLS_IO_OK) {
        t->pc.tls_failed++;
        /* a row that knows its cause (QUIC) set it */
        conn_fail(w, c,
                  c->fail_cause ? (enum run_transport_cause)(c->fail_cause - 1) : account_fail_cause(c, NULL, false));
        return;
    }
    uint64_t now = clock_now_ns();
    c->tls_ns = now - c->connected_ns;
    if (w->e->cfg->plan.warmup_ns == 0 || c->connect_start_ns >= w->e->warmup_end_ns)
        hdr_record(&t->tls, (int64_t)c->tls_ns, 1);
    conn_ready(w, c, c->ops->opened(c, &t->pc));
    /* reading ahead, the handshake may have taken in what followed it (an HTTP/2 server's
     * SETTINGS): epoll will not say so again */
    if (c->state != CONN_FREE && conn_pending(c))
        c->io.cb(&w->loop, &c->io, EPOLLIN);
}

static void on_connected(struct worker *w, struct conn *c)
{
    leave_connecting(w, c);
    struct target_rt *t = c->t;
    uint64_t now = clock_now_ns();
    c->connected_ns = now;
    c->connect_ns = now - c->connect_start_ns;
    if (w->e->cfg->plan.warmup_ns == 0 || c->connect_start_ns >= w->e->warmup_end_ns)
        hdr_record(&t->connect, (int64_t)c->connect_ns, 1);
    if (!c->ops->start) {
        conn_ready(w, c, -1);
        return;
    }
    c->state = CONN_HANDSHAKING;
    if (c->ops->start(c)) {
        t->pc.tls_failed++;
        conn_fail(w, c, RUN_TC_OTHER);
        return;
    }
    handshake(w, c); /* the ClientHello goes out now */
}

static void conn_on_io(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    struct conn *c = io->data;
    struct worker *w = c->w;
    switch (c->state) {
    case CONN_FREE:
        return; /* a stale event for a connection closed earlier in this batch */
    case CONN_CONNECTING: {
        int r = 0;
        if (!c->tcp_up) {
            r = c->ops->connected(c);
            if (r == 0 && !(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
                return;
            c->tcp_up = r == 0;
        }
        if (r == 0 && c->ops->tunnel && (r = c->ops->tunnel(c)) > 0)
            return; /* a proxy's CONNECT under way (proxy.c): still connecting */
        if (r) {
            c->t->counts[0].conns_failed++;
            conn_fail(w, c, proxy_fail_cause(c, r));
            return;
        }
        on_connected(w, c);
        return;
    }
    case CONN_HANDSHAKING:
        handshake(w, c);
        return;
    case CONN_READY:
        c->proto->on_io(loop, io, events);
        return;
    }
}
