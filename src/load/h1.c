/* HTTP/1.1 on a ready connection of a load thread (the protocol row proto_h1): one request at
 * a time, written whole from the callback that sends it, its response parsed from the thread's
 * one read buffer as it arrives (never stored), keep-alive, and --retry-stale's second try of
 * a request the server's close of an idle connection caught. Its bytes come through readiness
 * (epoll) or, on the io_uring row, through completions (h1_input). */
#include "load/worker.h"

#include "core/clock.h"

/* ------------------------------------------------------------------ writing */

/* Write (the rest of) the request on c. Returns 0 while the request is in flight (written, or
 * the rest waits for the socket or the row's completion), or -1 when the write failed
 * (account_fail_cause says why): the caller fails the request. A TLS write that wants to read
 * first waits for EPOLLIN, which is always armed (arming EPOLLOUT would spin). */
static int h1_write(struct worker *w, struct conn *c)
{
    struct req *r = c->req;
    while (r->write_off < r->len) {
        size_t put;
        enum tls_io io = c->ops->write(c, r->buf + r->write_off, r->len - r->write_off, &put);
        if (io == TLS_IO_OK) {
            r->write_off += put;
            continue;
        }
        if (io == TLS_IO_WANT_WRITE) {
            conn_want_out(w, c, true);
            return 0;
        }
        if (io == TLS_IO_WANT_READ)
            return 0;
        return -1;
    }
    conn_want_out(w, c, false);
    return 0;
}

/* The bytes r writes on c (the last request a connection may carry asks the server to close
 * it: --requests-per-connection). */
static void req_bytes(const struct worker *w, struct conn *c, struct req *r)
{
    const struct engine_target *et = c->t->et;
    if (r->var) {
        bool last = r->var->h1_close && c->nreq >= w->e->rpc;
        r->buf = last ? r->var->h1_close : r->var->h1;
        r->len = last ? r->var->h1_close_len : r->var->h1_len;
        r->write_off = 0;
        if (et->proxy_origin)
            proxy_request_bytes(c, r);
        return;
    }
    bool last = et->req_close && c->nreq >= w->e->rpc;
    r->buf = last ? et->req_close : et->req;
    r->len = last ? et->req_close_len : et->req_len;
    r->write_off = 0;
    if (et->proxy_origin) /* http:// through --proxy: absolute form (proxy.c) */
        proxy_request_bytes(c, r);
}

/* ------------------------------------------------------------------ ends */

/* The request on c ends with outcome o at done_ns. The connection stays open (idle) only when
 * keep is true; returns c when it does, NULL when it was closed. Dispatches nothing. */
static struct conn *h1_complete(struct worker *w, struct conn *c, enum reqlog_outcome o, bool keep, uint64_t done_ns)
{
    if (!keep) {
        conn_drop(w, c, o, done_ns);
        return NULL;
    }
    struct req *r = c->req;
    c->req = NULL;
    req_complete(w, r, o, done_ns);
    return c;
}

/* The request on c ended with outcome o at done_ns; c stays when keep. The next request goes out. */
static void h1_finish_at(struct worker *w, struct conn *c, enum reqlog_outcome o, bool keep, uint64_t done_ns)
{
    struct target_rt *t = c->t;
    struct client *cl = c->req->client;
    struct conn *alive = h1_complete(w, c, o, keep, done_ns);
    worker_after_request(w, t, cl, alive);
    worker_maybe_finish(w);
}

static void h1_finish(struct worker *w, struct conn *c, enum reqlog_outcome o, bool keep)
{
    h1_finish_at(w, c, o, keep, clock_now_ns());
}

static bool may_retry(const struct worker *w, const struct req *r, enum run_transport_cause cause)
{
    const struct run_config *cfg = w->e->cfg;
    return cause == RUN_TC_STALE && cfg->retry_stale &&
           (cfg->retry_stale_all || (r->var ? r->var->idempotent : r->t->et->idempotent)) && !r->retried;
}

/* --retry-stale: send the request on c (its reused connection went stale before any byte of
 * the response) once more, on a new connection. It keeps its planned and first send times, so
 * its latency and its timeout still run from them, and its place in the timeout FIFO. It is
 * not counted as sent again: counts.retries says how many went twice. Returns true when the
 * request is in flight on the new connection (which the client or the pool now owns), false
 * when the new connect failed at once: then the request is accounted (transport, the
 * connect's cause), and the caller goes on as after any failed request. */
static bool retry_stale(struct worker *w, struct conn *c)
{
    struct req *r = c->req;
    struct target_rt *t = r->t;
    struct client *cl = r->client;
    c->req = NULL;
    conn_close(w, c);
    counts_of(t, r->warm)->retries++;
    struct conn *n;
    int rc = conn_open(w, t, &n, false);
    if (rc) {
        account_unconnected(w, t, r->planned_ns, r->warm, r->sent_ns, account_connect_cause(rc), true);
        req_discard(w, r);
        return false;
    }
    if (cl) {
        n->group = cl->g;
        cl->g->conn = n;
    }
    r->retried = true;
    r->first_byte_ns = r->connect_ns = r->tls_ns = 0;
    r->tcause = RUN_TC_OTHER;
    http_response_init(&r->resp, &t->et->matchers, t->et->head);
    r->resp.ev.mode = t->et->stream_mode;
    req_gaps_reset(r);
    conn_bind(w, n, r);
    return true;
}

/* The request on c failed in transport (cause): retried once when --retry-stale applies, else
 * finished. */
static void fail_transport(struct worker *w, struct conn *c, enum run_transport_cause cause)
{
    struct req *r = c->req;
    if (may_retry(w, r, cause)) {
        struct target_rt *t = r->t;
        struct client *cl = r->client;
        if (!retry_stale(w, c)) {
            worker_after_request(w, t, cl, NULL);
            worker_maybe_finish(w);
        }
        return;
    }
    r->tcause = (uint8_t)cause;
    h1_finish(w, c, OUTCOME_TRANSPORT, false);
}

/* ------------------------------------------------------------------ the row's sending */

static void h1_begin(struct worker *w, struct conn *c, struct req *r)
{
    c->t->pc.http1++;
    if (r) {
        req_protocol(c, r);
        req_bytes(w, c, r);
        if (h1_write(w, c))
            fail_transport(w, c, account_fail_cause(c, r, false));
        return;
    }
    loop_io_mod(&w->loop, &c->io, EPOLLIN);
    c->want_out = false;
    if (c->group)
        group_refill(w, c);
    else
        pool_refill(w, c->t, c);
}

static bool h1_send(struct worker *w, struct conn *c, struct req *r)
{
    avail_remove(c->t, c);
    c->req = r;
    req_attach(c, r);
    req_protocol(c, r);
    req_bytes(w, c, r);
    if (h1_write(w, c) == 0)
        return true;
    /* a reused connection the server closed while it was idle fails here when the close (RST)
     * came first */
    enum run_transport_cause cause = account_fail_cause(c, r, false);
    if (may_retry(w, r, cause))
        return retry_stale(w, c);
    r->tcause = (uint8_t)cause;
    conn_drop(w, c, OUTCOME_TRANSPORT, clock_now_ns());
    return false;
}

static uint32_t h1_room(const struct conn *c)
{
    return c->req ? 0 : 1;
}

static bool h1_idle(const struct conn *c)
{
    return !c->req;
}

/* ------------------------------------------------------------------ responses */

/* got bytes of the response to the request on c arrived (at buf). Returns true while the
 * response is not complete, false when the request ended (finished, or failed). */
static bool h1_feed(struct worker *w, struct conn *c, const char *buf, size_t got)
{
    struct req *r = c->req;
    /* when the bytes arrived: now, or the kernel's receive time when the thread reads late on
     * purpose (deferred reads) */
    uint64_t at = conn_rx_at(c, r->sent_ns);
    if (!r->first_byte_ns)
        r->first_byte_ns = at;
    size_t used = 0;
    uint32_t events = r->resp.ev.count;
    uint64_t last_ns = r->resp.ev.last_ns;
    enum http_feed f = http_response_feed_at(&r->resp, buf, got, &used, at);
    w->events_seen |= r->resp.ev.on; /* events need prompt reads (worker_hold) */
    if (r->resp.ev.count != events)
        account_stream_gaps(r, events, last_ns);
    if (f == HTTP_FEED_DONE) {
        if (used < got) {
            /* bytes after the response we asked for: the connection is out of step */
            c->t->counts[0].conns_unsolicited++;
            c->close_after = true;
        } else if (conn_pending(c)) {
            /* OpenSSL holds more: a session ticket is fine, anything else is not */
            size_t more;
            enum tls_io x = c->ops->read(c, w->rbuf, WORKER_RBUF, &more);
            if (x == TLS_IO_OK)
                c->t->counts[0].conns_unsolicited++;
            if (x != TLS_IO_WANT_READ)
                c->close_after = true;
        }
        /* a response before the whole request was written leaves the connection out
         * of step (the rest of the request would be read as the next one) */
        bool keep = r->resp.keep_alive && !c->close_after && r->write_off == r->len && c->nreq < w->e->rpc;
        h1_finish_at(w, c, account_classify(c->t->et, &r->resp), keep, at);
        return false;
    }
    if (f == HTTP_FEED_ERROR) {
        h1_finish(w, c, OUTCOME_INVALID, false);
        return false;
    }
    return true;
}

/* The peer closed c while its request waited for (the rest of) the response. */
static void h1_eof(struct worker *w, struct conn *c)
{
    struct req *r = c->req;
    if (http_response_eof(&r->resp) == HTTP_FEED_DONE) {
        h1_finish(w, c, account_classify(c->t->et, &r->resp), false);
    } else {
        c->t->counts[0].conns_closed_by_peer++;
        fail_transport(w, c, account_fail_cause(c, r, true));
    }
}

/* Read and parse what arrived for the request on c. Bytes are parsed from the thread's one
 * buffer and never kept, so a body without end costs no memory; conn_read_again bounds the
 * reads of one turn. */
static void h1_read(struct worker *w, struct conn *c)
{
    for (int reads = 0;;) {
        size_t got;
        enum tls_io io = c->ops->read(c, w->rbuf, WORKER_RBUF, &got);
        if (io == TLS_IO_OK) {
            if (!h1_feed(w, c, w->rbuf, got) || !conn_read_again(c, got, &reads))
                return;
            continue;
        }
        if (io == TLS_IO_WANT_READ)
            return;
        if (io == TLS_IO_WANT_WRITE) {
            conn_want_out(w, c, true);
            return;
        }
        if (io == TLS_IO_EOF) {
            h1_eof(w, c);
            return;
        }
        fail_transport(w, c, account_fail_cause(c, c->req, false));
        return;
    }
}

/* Nothing is expected on an idle connection: a close, or bytes nobody asked for (over TLS also
 * a session ticket, which the read takes in and answers WANT_READ). */
static void h1_idle_io(struct worker *w, struct conn *c, uint32_t events)
{
    /* a completion row's send that completed after its response (uring.c): nothing waits for
     * it (over epoll an idle connection gets EPOLLOUT only when it armed it) */
    if (!(events & ~(uint32_t)EPOLLOUT) && !c->want_out)
        return;
    char b[512];
    size_t got;
    enum tls_io r = c->ops->read(c, b, sizeof b, &got);
    if (r == TLS_IO_WANT_READ || r == TLS_IO_WANT_WRITE) {
        conn_want_out(w, c, r == TLS_IO_WANT_WRITE);
        return;
    }
    if (r == TLS_IO_OK)
        c->t->counts[0].conns_unsolicited++;
    else
        c->t->counts[0].conns_closed_by_peer++;
    conn_failed(w, c, RUN_TC_OTHER);
}

static void h1_on_io(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    struct conn *c = io->data;
    struct worker *w = c->w;
    struct req *r = c->req;
    if (!r) {
        h1_idle_io(w, c, events);
        return;
    }
    if (r->write_off < r->len && (events & (EPOLLOUT | EPOLLIN))) {
        if (h1_write(w, c)) {
            fail_transport(w, c, account_fail_cause(c, r, false));
            return;
        }
    } else if ((events & EPOLLOUT) && c->want_out) {
        /* a TLS read that wanted to write (a key update) */
        conn_want_out(w, c, false);
        h1_read(w, c);
        return;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        h1_read(w, c);
}

/* Bytes that came through a completion row (uring.c), accounted as a read on a readiness
 * event would be. */
static void h1_input(struct worker *w, struct conn *c, const char *buf, long n)
{
    if (!c->req) {
        /* nothing is expected on an idle connection (as h1_idle_io) */
        if (n > 0)
            c->t->counts[0].conns_unsolicited++;
        else
            c->t->counts[0].conns_closed_by_peer++;
        conn_failed(w, c, RUN_TC_OTHER);
        return;
    }
    if (n > 0) {
        h1_feed(w, c, buf, (size_t)n);
    } else if (n == 0) {
        h1_eof(w, c);
    } else {
        c->sys_errno = (int)-n;
        fail_transport(w, c, account_fail_cause(c, c->req, false));
    }
}

const struct proto_ops proto_h1 = {
    .log_proto = REQLOG_PROTO_HTTP1,
    .begin = h1_begin,
    .room = h1_room,
    .send = h1_send,
    .on_io = h1_on_io,
    .input = h1_input,
    .idle = h1_idle,
};
