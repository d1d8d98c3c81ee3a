/* One load thread: its own event loop, schedule share, connections, counters and
 * histograms. Nothing here takes a lock or touches another thread's memory on the request
 * path; once a second the interval is handed to the engine (engine_publish).
 *
 * Connection state machine (struct conn):
 *   FREE → CONNECTING (non-blocking connect, EPOLLIN|EPOLLOUT registered)
 *        → HANDSHAKING (https: the TLS handshake, its own phase and histogram)
 *        → IDLE (HTTP/1.1, connected, no request; EPOLLIN only, so a close by the server is seen)
 *        → BUSY (HTTP/1.1, request written or being written; response being parsed) → IDLE or closed
 *        or H2 (an HTTP/2 session: up to --streams requests at once, one per stream) → closed.
 * Bytes go through the connection's transport table (c->ops: plain or TLS, transport.c). A
 * request is written directly from whatever callback decided to send it; EPOLLOUT is armed
 * only when a write would block (one epoll_ctl pair per short write, none per request).
 *
 * A request in flight is a struct req from the thread's pool: an HTTP/1.1 connection carries
 * one (conn.req), an HTTP/2 connection one per open stream. "Idle" in the open loop means
 * "has room": a connection is on its target's available list while it can take a request
 * (IDLE, or an HTTP/2 session with a free stream); a planned request that finds none opens a
 * connection or waits, by --when-busy, exactly as over HTTP/1.1.
 *
 * Every planned request reaches exactly one of: dropped (never sent), or one outcome after
 * being sent. "Sent" (T1) is when knee began sending it: the write (HTTP/1.1) or the submit
 * and flush of its HEADERS (HTTP/2) on an open connection, or the start of the connect when a
 * connection was opened for it (its connect and handshake are then part of its latency). */
#include "load/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "load/shard.h"
#include "load/uring.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static void on_io(struct loop *loop, struct loop_io *io, uint32_t events);
static void client_next(struct client *cl);
static void maybe_finish(struct worker *w);
static void after_request(struct worker *w, struct target_rt *t, struct client *cl, struct conn *alive);
static void pool_refill(struct worker *w, struct target_rt *t, struct conn *c);
static void group_refill(struct worker *w, struct conn *c);
static void wake_waiters(struct worker *w, struct cgroup *g);
static void h2_after(struct worker *w, struct conn *c);
static bool conn_send(struct worker *w, struct conn *c, struct req *r);
static void fail_transport(struct worker *w, struct conn *c, enum run_transport_cause cause);

/* ------------------------------------------------------------------ pools */

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

/* Requests in flight come from a pool that grows by REQ_CHUNK and is never shrunk: no
 * allocation per request once the pool holds the most requests ever in flight at once. */
static struct req *req_alloc(struct worker *w)
{
    struct req *r = w->req_free;
    if (r) {
        w->req_free = r->next;
        return r;
    }
    struct req *chunk = xcalloc(REQ_CHUNK, sizeof *chunk);
    w->rchunks = xrealloc(w->rchunks, (w->nrchunks + 1) * sizeof *w->rchunks);
    w->rchunks[w->nrchunks++] = chunk;
    for (size_t i = 1; i < REQ_CHUNK; i++) {
        chunk[i].next = w->req_free;
        w->req_free = &chunk[i];
    }
    return &chunk[0];
}

static void req_release(struct worker *w, struct req *r)
{
    r->c = NULL;
    r->pending = false;
    r->next = w->req_free;
    w->req_free = r;
}

/* ------------------------------------------------------------------ lists */

/* The open loop's connections with room, most recently freed first (a warm connection, and
 * the cold ones age out by the server's keep-alive timeout, as a stack of idle ones did). */
static void avail_push(struct target_rt *t, struct conn *c)
{
    if (c->avail)
        return;
    c->avail = true;
    c->aprev = NULL;
    c->anext = t->avail;
    if (t->avail)
        t->avail->aprev = c;
    t->avail = c;
}

static void avail_remove(struct target_rt *t, struct conn *c)
{
    if (!c->avail)
        return;
    c->avail = false;
    if (c->aprev)
        c->aprev->anext = c->anext;
    else
        t->avail = c->anext;
    if (c->anext)
        c->anext->aprev = c->aprev;
    c->aprev = c->anext = NULL;
}

/* Requests waiting for a stream to be sent again (HTTP/2 GOAWAY, REFUSED_STREAM), in order. */
static void pend_push(struct target_rt *t, struct req *r)
{
    r->pending = true;
    r->c = NULL;
    r->next = NULL;
    if (t->pend_tail)
        t->pend_tail->next = r;
    else
        t->pend_head = r;
    t->pend_tail = r;
    t->npend++;
}

static void pend_remove(struct target_rt *t, struct req *r)
{
    struct req **pp = &t->pend_head, *prev = NULL;
    while (*pp && *pp != r) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = r->next;
    if (t->pend_tail == r)
        t->pend_tail = prev;
    r->pending = false;
    r->next = NULL;
    t->npend--;
}

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

/* ------------------------------------------------------------------ connections */

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

/* Add an HTTP/2 session's counters to its target's at the end of the connection. */
static void h2_count(struct target_rt *t, const struct h2_client *h)
{
    const struct h2_client_stats *s = h2_client_stats(h);
    t->pc.h2_streams += s->streams;
    t->pc.h2_rst += s->rst_received;
    t->pc.h2_goaway += s->goaway;
    t->pc.h2_stalls += s->stalls;
    uint32_t m = h2_client_server_max_streams(h);
    uint64_t mm = m == UINT32_MAX ? UINT64_MAX : m;
    if (mm > t->pc.h2_max_concurrent)
        t->pc.h2_max_concurrent = mm;
}

/* Close c (it carries no request any more; an HTTP/2 session has no open stream) and free
 * what it holds: the TLS state after one try at close_notify, the HTTP/2 session. */
static void conn_close(struct worker *w, struct conn *c)
{
    leave_connecting(w, c);
    cfifo_remove(w, c);
    conn_unqueue(c);
    avail_remove(c->t, c);
    if (c->group && c->group->conn == c)
        c->group->conn = NULL;
    if (c->h2) {
        h2_count(c->t, c->h2);
        h2_client_free(c->h2);
        c->h2 = NULL;
    }
    if (c->tls_on) {
        tls_conn_shutdown(&c->tls);
        tls_conn_release(&c->tls);
        c->tls_on = false;
    }
    uring_conn_close(w, c);
    if (c->io.fd >= 0)
        close(c->io.fd); /* also removes it from the epoll set */
    c->io.fd = -1;
    c->state = CONN_FREE;
    c->req = NULL;
    c->group = NULL;
    c->freed_iter = w->loop.iterations;
    c->next = NULL;
    if (w->free_tail)
        w->free_tail->next = c;
    else
        w->free_head = c;
    w->free_tail = c;
    w->nopen--;
}

static struct run_counts *counts_of(struct target_rt *t, bool warm)
{
    return &t->counts[warm ? 1 : 0];
}

/* Start a connect. 0 with *out CONNECTING (on the deadline FIFO until a request is bound to
 * it), or -errno (nothing allocated stays). for_queue: an open-loop connection for the queue. */
static int conn_open(struct worker *w, struct target_rt *t, struct conn **out, bool for_queue)
{
    struct conn *c = conn_alloc(w);
    int fd = -1;
    uint64_t start = clock_now_ns();
    int r = net_connect_start(&t->et->addr, &fd);
    if (r == 0) {
        c->io.fd = fd;
        c->io.cb = on_io;
        c->io.data = c;
        r = loop_io_add(&w->loop, &c->io, EPOLLIN | EPOLLOUT);
        if (r)
            close(fd);
    }
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
    c->w = w;
    c->t = t;
    c->ops = &conn_plain_ops;
    c->group = NULL;
    c->state = CONN_CONNECTING;
    c->id = w->conn_seq++ * w->e->nworkers + w->index;
    c->connect_start_ns = start;
    c->connected_ns = c->connect_ns = c->tls_ns = 0;
    c->nreq = 0;
    c->want_out = true;
    c->close_after = c->avail = c->in_cfifo = c->tls_on = c->counted = false;
    c->flush_due = c->close_due = c->in_after = false;
    c->in_h2 = 0;
    c->fail_cause = 0;
    c->sys_errno = 0;
    c->req = NULL;
    c->h2 = NULL;
    c->for_queue = for_queue;
    if (for_queue)
        t->connecting_unbound++;
    w->nopen++;
    w->connecting++;
    cfifo_push(w, c);
    *out = c;
    return 0;
}

/* Requests c can take now: HTTP/1.1 one when IDLE; HTTP/2 its free streams; none once it has
 * begun --requests-per-connection of them. */
static uint32_t conn_room(const struct worker *w, const struct conn *c)
{
    if (c->nreq >= w->e->rpc)
        return 0;
    if (c->state == CONN_IDLE)
        return 1;
    if (c->state != CONN_H2)
        return 0;
    uint32_t cap = h2_client_capacity(c->h2), left = w->e->rpc - c->nreq;
    return cap < left ? cap : left;
}

/* ------------------------------------------------------------------ timeout FIFO */

/* Requests in flight in the order of their deadlines (send time + the one timeout), so the
 * head has the earliest; one loop timer serves them all. Invariant, outside on_timeout: while
 * the FIFO is not empty, the timer is armed no later than the head's deadline (it may be
 * earlier: a removed head leaves the timer early, and on_timeout then re-arms it). Only a
 * request that becomes the head arms the timer, so a send never pushes an earlier deadline
 * back; on_timeout re-arms for the head when it is done. */
static uint64_t deadline_of(const struct worker *w, const struct req *r)
{
    return r->sent_ns + w->e->timeout_ns;
}

static void fifo_push(struct worker *w, struct req *r)
{
    /* nearly always at the tail (requests are sent in time order); a request sent again keeps
     * its first send time and may go a few places back */
    struct req *after = w->fifo_tail;
    while (after && after->sent_ns > r->sent_ns)
        after = after->tprev;
    r->tprev = after;
    r->tnext = after ? after->tnext : w->fifo_head;
    if (r->tnext)
        r->tnext->tprev = r;
    else
        w->fifo_tail = r;
    if (after)
        after->tnext = r;
    else
        w->fifo_head = r;
    if (w->fifo_head == r)
        loop_timer_arm(&w->loop, &w->timeout_timer, deadline_of(w, r));
}

static void fifo_remove(struct worker *w, struct req *r)
{
    if (r->tprev)
        r->tprev->tnext = r->tnext;
    else
        w->fifo_head = r->tnext;
    if (r->tnext)
        r->tnext->tprev = r->tprev;
    else
        w->fifo_tail = r->tprev;
    r->tprev = r->tnext = NULL;
}

/* ------------------------------------------------------------------ recording */

/* Times since t0 in the log; an event that happened is never 0 there (0 means "none"). */
static uint64_t since_t0(uint64_t t, uint64_t t0)
{
    return t > t0 ? t - t0 : 1;
}

static void log_record(struct worker *w, const struct target_rt *t, const struct req *r, uint64_t planned_ns, bool warm,
                       enum reqlog_outcome o, uint64_t done_ns)
{
    if (!w->chunk)
        return;
    uint64_t t0 = w->e->t0_ns;
    struct reqlog_record *rec = &w->chunk->rec[w->chunk->n++];
    memset(rec, 0, sizeof *rec);
    rec->planned_ns = planned_ns - t0;
    rec->target = (uint32_t)t->index;
    rec->outcome = (uint8_t)o;
    rec->flags = warm ? REQLOG_FLAG_WARMUP : 0;
    if (r) {
        rec->sent_ns = since_t0(r->sent_ns, t0);
        if (!w->e->cfg->open_loop)
            rec->planned_ns = rec->sent_ns; /* closed loop: latency is measured from the send */
        rec->first_byte_ns = r->first_byte_ns ? since_t0(r->first_byte_ns, t0) : 0;
        rec->done_ns = o == OUTCOME_CANCELLED ? 0 : since_t0(done_ns, t0);
        rec->connect_ns = r->connect_ns;
        rec->tls_ns = r->tls_ns;
        rec->protocol = r->proto;
        rec->tls = r->tls_kind;
        rec->bytes = r->resp.bytes;
        rec->connection = r->conn_id;
        rec->status = (uint16_t)(r->resp.status > 0 && r->resp.status < 1000 ? r->resp.status : 0);
    }
    if (w->chunk->n == OUTLOG_CHUNK_RECORDS) {
        outlog_submit(w->e->log, w->chunk);
        w->chunk = outlog_take(w->e->log, &w->log_slowed);
    }
}

static struct hdr *group_hist(struct target_rt *t, enum run_group g)
{
    struct hdr *h = &t->latency[g];
    if (!h->counts) /* error groups are allocated on first use: most runs never need them */
        hdr_init(h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    return h;
}

static void record_server_timing(struct target_rt *t, const struct http_response *resp)
{
    for (size_t i = 0; i < resp->nst; i++) {
        const struct http_server_timing *m = &resp->st[i];
        if (isnan(m->dur_ms))
            continue;
        size_t j = 0;
        while (j < t->nst && strcmp(t->st[j].name, m->name) != 0)
            j++;
        if (j == t->nst) {
            if (t->nst == RUN_ST_MAX_NAMES)
                continue; /* a cap on names the server controls */
            snprintf(t->st[j].name, sizeof t->st[j].name, "%s", m->name);
            hdr_init(&t->st[j].dur, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
            t->nst++;
        }
        double ns = m->dur_ms * 1e6;
        hdr_record(&t->st[j].dur, ns < 1 ? 1 : (ns > 9e18 ? INT64_MAX : (int64_t)llround(ns)), 1);
    }
}

/* The timeline's counts of the interval holding t (ns since t0), grown on demand. */
static struct ival_counts *tick_at(struct worker *w, uint64_t t)
{
    uint64_t k = engine_tick_of(w->e, t);
    if (k >= w->ntk) {
        size_t n = w->ntk ? w->ntk : 16;
        while (n <= k)
            n *= 2;
        w->tk = xrealloc(w->tk, n * sizeof *w->tk);
        memset(w->tk + w->ntk, 0, (n - w->ntk) * sizeof *w->tk);
        w->ntk = n;
    }
    return &w->tk[k];
}

/* A request has its outcome: count its events by their times (load/rates.c) and in the
 * timeline's intervals, from the nanoseconds since t0 the log gets (closed loop: planned =
 * sent), so the rates, the timeline and the log agree to the request. */
static void count_events(struct worker *w, struct target_rt *t, const struct req *r, uint64_t planned_ns,
                         enum reqlog_outcome o, uint64_t done_ns)
{
    uint64_t t0 = w->e->t0_ns;
    uint64_t planned = planned_ns > t0 ? planned_ns - t0 : 0;
    uint64_t sent = r ? since_t0(r->sent_ns, t0) : 0;
    if (r && !w->e->cfg->open_loop)
        planned = sent;
    uint64_t done = r && o != OUTCOME_CANCELLED ? since_t0(done_ns, t0) : 0;
    run_events_count(&t->ev, planned, sent, done, o);
    struct ival_counts *k = tick_at(w, planned);
    k->planned++;
    if (o == OUTCOME_DROPPED)
        k->dropped++;
    if (sent)
        tick_at(w, sent)->sent++;
    if (done) {
        k = tick_at(w, done);
        k->completed++;
        if (o == OUTCOME_OK)
            k->ok++;
        else
            k->errors++;
    }
}

static void record_dropped(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm)
{
    struct run_counts *rc = counts_of(t, warm);
    rc->dropped++;
    rc->outcome[OUTCOME_DROPPED]++;
    w->ic.dropped++;
    log_record(w, t, NULL, planned_ns, warm, OUTCOME_DROPPED, 0);
    count_events(w, t, NULL, planned_ns, OUTCOME_DROPPED, 0);
}

/* Account a finished request (any outcome but dropped). */
static void record(struct worker *w, struct req *r, enum reqlog_outcome o, uint64_t done_ns)
{
    struct target_rt *t = r->t;
    struct engine *e = w->e;
    struct run_counts *rc = counts_of(t, r->warm);
    rc->outcome[o]++;
    if (o == OUTCOME_TRANSPORT)
        rc->transport_cause[r->tcause < RUN_TC_COUNT ? r->tcause : RUN_TC_OTHER]++;
    rc->bytes_in += r->resp.bytes;
    t->bytes_out += r->write_off; /* the request's bytes written (live metrics; HTTP/2 counts its frames) */
    if (o != OUTCOME_CANCELLED) {
        uint64_t from = e->cfg->open_loop ? r->planned_ns : r->sent_ns;
        int64_t lat = (int64_t)(done_ns - from);
        w->ic.completed++;
        if (o == OUTCOME_OK)
            w->ic.ok++;
        else
            w->ic.errors++;
        hdr_record(&t->ival, lat, 1);
        if ((uint64_t)lat > t->ival_max_ns)
            t->ival_max_ns = (uint64_t)lat;
        if (!r->warm) {
            hdr_record(group_hist(t, (enum run_group)o), lat, 1);
            hdr_record(&t->service, (int64_t)(done_ns - r->sent_ns), 1);
            if (r->first_byte_ns)
                hdr_record(&t->ttfb, (int64_t)(r->first_byte_ns - r->sent_ns), 1);
            if (r->resp.nst)
                record_server_timing(t, &r->resp);
        }
    }
    log_record(w, t, r, r->planned_ns, r->warm, o, done_ns);
    count_events(w, t, r, r->planned_ns, o, done_ns);
}

/* The request r ends with outcome o: accounted, out of the FIFO, back to the pool. The
 * caller has detached it from its connection. */
static void complete(struct worker *w, struct req *r, enum reqlog_outcome o, uint64_t done_ns)
{
    record(w, r, o, done_ns);
    fifo_remove(w, r);
    w->inflight--;
    req_release(w, r);
}

/* The HTTP/1.1 request on c ends with outcome o. The connection stays open (IDLE) only when
 * keep is true; returns c when it does, NULL when it was closed. Dispatches nothing. */
static struct conn *h1_complete(struct worker *w, struct conn *c, enum reqlog_outcome o, bool keep, uint64_t done_ns)
{
    struct req *r = c->req;
    c->req = NULL;
    complete(w, r, o, done_ns);
    if (!keep) {
        conn_close(w, c);
        return NULL;
    }
    c->state = CONN_IDLE;
    return c;
}

/* ------------------------------------------------------------------ sending */

/* Write (the rest of) the HTTP/1.1 request on c. Returns 0 while the request is in flight
 * (written, or the rest waits for the socket), or -1 when the write failed (fail_cause says
 * why): the caller fails the request. A TLS write that wants to read first waits for EPOLLIN,
 * which is always armed (arming EPOLLOUT would spin). */
static int conn_write(struct worker *w, struct conn *c)
{
    if (c->ring)
        return uring_send(w, c);
    struct req *r = c->req;
    while (r->write_off < r->len) {
        size_t put;
        enum tls_io io = c->ops->write(c, r->buf + r->write_off, r->len - r->write_off, &put);
        if (io == TLS_IO_OK) {
            r->write_off += put;
            continue;
        }
        if (io == TLS_IO_WANT_WRITE) {
            if (!c->want_out) {
                loop_io_mod(&w->loop, &c->io, EPOLLIN | EPOLLOUT);
                c->want_out = true;
            }
            return 0;
        }
        if (io == TLS_IO_WANT_READ)
            return 0;
        return -1;
    }
    if (c->want_out) {
        loop_io_mod(&w->loop, &c->io, EPOLLIN);
        c->want_out = false;
    }
    return 0;
}

/* Count a request as sent at sent_ns (T1). */
static void count_sent(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm, uint64_t sent_ns)
{
    struct engine *e = w->e;
    struct run_counts *rc = counts_of(t, warm);
    rc->sent++;
    if (sent_ns <= e->window_end_ns + e->lag_limit_ns + e->timer_slack_ns)
        rc->sent_on_time++;
    if (!warm)
        hdr_record(&t->lag, (int64_t)(sent_ns - planned_ns), 1);
    w->ic.sent++;
}

static void req_init(struct req *r, struct target_rt *t, struct client *cl, uint64_t planned_ns, bool warm,
                     uint64_t sent_ns)
{
    r->c = NULL;
    r->t = t;
    r->client = cl;
    r->warm = warm;
    r->reused = r->retried = r->pending = false;
    r->end = REQ_END_NONE;
    r->tcause = RUN_TC_OTHER;
    r->proto = REQLOG_PROTO_HTTP1;
    r->tls_kind = REQLOG_TLS_PLAIN;
    r->conn_id = 0;
    r->planned_ns = planned_ns;
    r->sent_ns = sent_ns;
    r->first_byte_ns = r->connect_ns = r->tls_ns = 0;
    r->buf = NULL;
    r->len = r->write_off = 0;
    http_response_init(&r->resp, &t->et->matchers, t->et->head);
}

/* A new request, sent at sent_ns: counted as sent, in flight, on the timeout FIFO. */
static struct req *req_begin(struct worker *w, struct target_rt *t, struct client *cl, uint64_t planned_ns, bool warm,
                             uint64_t sent_ns)
{
    struct req *r = req_alloc(w);
    req_init(r, t, cl, planned_ns, warm, sent_ns);
    count_sent(w, t, planned_ns, warm, sent_ns);
    w->inflight++;
    fifo_push(w, r);
    return r;
}

/* r goes on c: the connection's number, whether it is reused, and (once c is ready) what c
 * speaks. The connection's first request carries its connect and handshake times: here when c
 * was ready before a request came for it (a closed-loop connection whose handshake finished
 * first), in conn_ready when the request waited for c. */
static void req_attach(struct conn *c, struct req *r)
{
    r->c = c;
    r->conn_id = c->id;
    r->reused = c->nreq++ > 0;
    if (!r->reused) {
        r->connect_ns = c->connect_ns;
        r->tls_ns = c->tls_ns;
    }
}

static void req_protocol(const struct conn *c, struct req *r)
{
    r->proto = c->h2 ? REQLOG_PROTO_H2 : REQLOG_PROTO_HTTP1;
    r->tls_kind = !c->tls_on ? REQLOG_TLS_PLAIN : c->tls.resumed ? REQLOG_TLS_RESUMED : REQLOG_TLS_FULL;
}

/* HTTP/1.1: the bytes r writes on c (the last request a connection may carry asks the server
 * to close it: --requests-per-connection). */
static void req_bytes(const struct worker *w, const struct conn *c, struct req *r)
{
    const struct engine_target *et = c->t->et;
    bool last = et->req_close && c->nreq >= w->e->rpc;
    r->buf = last ? et->req_close : et->req;
    r->len = last ? et->req_close_len : et->req_len;
    r->write_off = 0;
}

/* A request is bound to a connection that is not ready yet (CONNECTING, HANDSHAKING): it goes
 * out as soon as the connection is (conn_ready), and its timeout covers the connection's. */
static void bind_req(struct worker *w, struct conn *c, struct req *r)
{
    c->req = r;
    req_attach(c, r);
    cfifo_remove(w, c);
    conn_unqueue(c);
}

/* ------------------------------------------------------------------ transport failures */

static enum run_transport_cause connect_cause(int err)
{
    return err == -ECONNREFUSED ? RUN_TC_REFUSED : RUN_TC_CONNECT;
}

static enum run_transport_cause tls_cause(enum tls_reason r)
{
    switch (r) {
    case TLS_R_VERIFY:
        return RUN_TC_TLS_VERIFY;
    case TLS_R_HOSTNAME:
        return RUN_TC_TLS_HOSTNAME;
    case TLS_R_EXPIRED:
        return RUN_TC_TLS_EXPIRED;
    case TLS_R_ALERT:
        return RUN_TC_TLS_ALERT;
    case TLS_R_PROTOCOL:
        return RUN_TC_TLS_PROTOCOL;
    case TLS_R_ALPN:
        return RUN_TC_TLS_ALPN;
    case TLS_R_HANDSHAKE_TIMEOUT:
        return RUN_TC_TLS_HANDSHAKE_TIMEOUT;
    default:
        return RUN_TC_OTHER;
    }
}

/* The cause of a failed read or write (-errno, or 0 for end-of-file) for request r. Before
 * any byte of the response, on a reused connection, whatever ended it is the server's close
 * of a connection it thought idle: stale. */
static enum run_transport_cause io_cause(const struct req *r, int err)
{
    bool reset = err == -ECONNRESET || err == -EPIPE;
    if ((reset || err == 0) && r && r->reused && !r->first_byte_ns)
        return RUN_TC_STALE;
    if (reset)
        return RUN_TC_RESET;
    if (err == 0)
        return r && r->first_byte_ns ? RUN_TC_CLOSED_MID : RUN_TC_CLOSED_BEFORE;
    return RUN_TC_OTHER;
}

/* Why the byte stream of c failed for request r (r may be NULL): end-of-file (eof), the TLS
 * layer's reason (a TLS close or socket error is the plain one), or the socket's errno. */
static enum run_transport_cause fail_cause(const struct conn *c, const struct req *r, bool eof)
{
    int err = 0;
    if (!eof && c->tls_on && c->tls.reason != TLS_R_NONE) {
        if (c->tls.reason == TLS_R_CLOSED)
            eof = true;
        else if (c->tls.reason == TLS_R_SOCKET)
            err = -(c->tls.sys_errno ? c->tls.sys_errno : EIO);
        else
            return tls_cause(c->tls.reason);
    } else if (!eof) {
        err = -(c->sys_errno ? c->sys_errno : EIO);
    }
    return io_cause(r, eof ? 0 : err);
}

/* A request that failed in transport before it had a connection of its own (its connect
 * failed at once, or the connect opened for the queue it waited in failed). It was attempted:
 * counted as sent at sent_ns unless `counted` (a request sent again already is), and
 * accounted at once. */
static void fail_unconnected(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm, uint64_t sent_ns,
                             enum run_transport_cause cause, bool counted)
{
    struct req tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.t = t;
    tmp.conn_id = w->conn_seq++ * w->e->nworkers + w->index;
    tmp.planned_ns = planned_ns;
    tmp.sent_ns = sent_ns;
    tmp.warm = warm;
    tmp.tcause = (uint8_t)cause;
    if (!counted)
        count_sent(w, t, planned_ns, warm, sent_ns);
    record(w, &tmp, OUTCOME_TRANSPORT, clock_now_ns());
}

static bool may_retry(const struct worker *w, const struct req *r, enum run_transport_cause cause)
{
    return cause == RUN_TC_STALE && w->e->cfg->retry_stale && !r->retried;
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
        fifo_remove(w, r);
        w->inflight--;
        fail_unconnected(w, t, r->planned_ns, r->warm, r->sent_ns, connect_cause(rc), true);
        req_release(w, r);
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
    bind_req(w, n, r);
    return true;
}

/* ------------------------------------------------------------------ HTTP/2 streams */

/* r goes out as a new stream of c's session (c has room). Its HEADERS leave with the next
 * flush: at once (h2_after), or after the callbacks of c's session that submitted it. */
static void h2_submit(struct worker *w, struct conn *c, struct req *r)
{
    if (!r->c)
        req_attach(c, r);
    req_protocol(c, r);
    r->stream.user = r;
    if (h2_client_submit(c->h2, &c->t->et->h2req, &r->stream) != 0) {
        /* no free stream after all (stream ids of the connection used up): the request goes
         * back to wait for one */
        c->nreq--;
        pend_push(c->t, r);
        return;
    }
    if (!conn_room(w, c))
        avail_remove(c->t, c);
    c->flush_due = true;
    if (!c->in_h2)
        h2_after(w, c);
}

/* Send r (in flight, not on a connection) on c, which has room. Returns false when it failed
 * at once (accounted; c is closed): the caller goes on as after any failed request. */
static bool conn_send(struct worker *w, struct conn *c, struct req *r)
{
    if (c->state == CONN_H2) {
        h2_submit(w, c, r);
        return true;
    }
    avail_remove(c->t, c);
    c->req = r;
    req_attach(c, r);
    req_protocol(c, r);
    req_bytes(w, c, r);
    c->state = CONN_BUSY;
    if (conn_write(w, c) == 0)
        return true;
    /* a reused connection the server closed while it was idle fails here when the close (RST)
     * came first */
    enum run_transport_cause cause = fail_cause(c, r, false);
    if (may_retry(w, r, cause))
        return retry_stale(w, c);
    r->tcause = (uint8_t)cause;
    h1_complete(w, c, OUTCOME_TRANSPORT, false, clock_now_ns());
    return false;
}

/* Send a planned request: on c when given (it has room), else on a new connection. Returns
 * true when the request is in flight (or its end was already handled by the callbacks of an
 * HTTP/2 session), false when it already failed (accounted, connection gone). */
static bool dispatch(struct worker *w, struct target_rt *t, struct client *cl, struct conn *c, uint64_t planned_ns,
                     bool warm)
{
    uint64_t now = clock_now_ns();
    if (c)
        return conn_send(w, c, req_begin(w, t, cl, planned_ns, warm, now));
    int r = conn_open(w, t, &c, false);
    if (r) {
        /* The connect failed at once (refused on loopback, out of descriptors): the request
         * was attempted and failed in transport. It has no connection, so account it here. */
        fail_unconnected(w, t, planned_ns, warm, now, connect_cause(r), false);
        return false;
    }
    if (cl) {
        c->group = cl->g;
        cl->g->conn = c;
    }
    bind_req(w, c, req_begin(w, t, cl, planned_ns, warm, c->connect_start_ns));
    return true;
}

/* The first request of the pending list goes on c (which has room). */
static void send_pending(struct worker *w, struct conn *c)
{
    struct target_rt *t = c->t;
    struct req *r = t->pend_head;
    pend_remove(t, r);
    struct client *cl = r->client;
    if (!conn_send(w, c, r))
        after_request(w, t, cl, NULL);
}

/* ------------------------------------------------------------------ open loop */

static bool queue_push(struct target_rt *t, uint64_t planned_ns)
{
    if (t->qlen == t->qcap) {
        if (t->qcap >= RUN_QUEUE_CAP)
            return false;
        size_t ncap = t->qcap ? t->qcap * 2 : 1024;
        uint64_t *nq = xmalloc(ncap * sizeof *nq);
        for (size_t i = 0; i < t->qlen; i++)
            nq[i] = t->q[(t->qhead + i) % t->qcap];
        free(t->q);
        t->q = nq;
        t->qcap = ncap;
        t->qhead = 0;
    }
    t->q[(t->qhead + t->qlen) % t->qcap] = planned_ns;
    t->qlen++;
    return true;
}

static uint64_t queue_pop(struct target_rt *t)
{
    uint64_t v = t->q[t->qhead];
    t->qhead = (t->qhead + 1) % t->qcap;
    t->qlen--;
    return v;
}

/* Make room in a full pool by closing an idle connection of another target (HTTP/1.1 IDLE,
 * or an HTTP/2 session without an open stream). */
static bool steal_idle(struct worker *w, struct target_rt *except)
{
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *o = &w->t[i];
        if (o == except)
            continue;
        for (struct conn *c = o->avail; c; c = c->anext)
            if (c->state == CONN_IDLE ||
                (c->state == CONN_H2 && !c->in_h2 && !c->in_after && !h2_client_open_streams(c->h2))) {
                conn_close(w, c);
                return true;
            }
    }
    return false;
}

/* May this thread start one more connect? The pool cap bounds connections; RUN_MAX_CONNECTING
 * bounds connects in progress, so a burst (the thread was descheduled, or the server paused)
 * waits a few µs for busy connections to come free instead of opening hundreds at once and
 * overflowing the server's accept queue: that would turn a short pause into SYN retransmits
 * (a second or more) of the generator's own making. */
static bool can_open(struct worker *w, struct target_rt *t)
{
    if (w->connecting >= RUN_MAX_CONNECTING)
        return false;
    return w->nopen < w->pool_cap || steal_idle(w, t);
}

/* A queued request whose connection attempt failed (cause: the connect's or the handshake's):
 * it was attempted (sent) and failed in transport, like a request whose own connect failed. A
 * request waiting to be sent again (pending) goes first: it is the older. */
static void fail_queued(struct worker *w, struct target_rt *t, uint64_t attempt_ns, enum run_transport_cause cause)
{
    if (t->npend) {
        struct req *r = t->pend_head;
        struct client *cl = r->client;
        pend_remove(t, r);
        r->tcause = (uint8_t)cause;
        complete(w, r, OUTCOME_TRANSPORT, clock_now_ns());
        after_request(w, t, cl, NULL);
        return;
    }
    uint64_t planned = queue_pop(t);
    w->queued--;
    fail_unconnected(w, t, planned, planned < w->e->warmup_end_ns, attempt_ns, cause, false);
}

/* Open connections (not bound to a request) for the queued requests: each queued request has
 * at most one connect in progress for it (an HTTP/2 connection counts for the streams it is
 * expected to take); whichever connection comes free first serves the head of the queue. */
static void grow(struct worker *w, struct target_rt *t)
{
    if (w->e->cfg->open_loop) {
        while (t->qlen + t->npend > t->connecting_unbound * t->per_conn && can_open(w, t)) {
            struct conn *c;
            uint64_t now = clock_now_ns();
            int r = conn_open(w, t, &c, true);
            if (r)
                fail_queued(w, t, now, connect_cause(r));
        }
        return;
    }
    /* closed loop: requests to send again need a connection of their client's group */
    for (struct req *r = t->pend_head; r; r = r->next) {
        struct cgroup *g = r->client->g;
        if (g->conn && g->conn->state == CONN_H2 && !h2_client_usable(g->conn->h2))
            g->conn = NULL; /* after a GOAWAY: it finishes its streams, new ones need a new connection */
        if (g->conn)
            continue;
        struct conn *c;
        int rc = conn_open(w, t, &c, false);
        if (rc) {
            struct client *cl = r->client;
            pend_remove(t, r);
            r->tcause = (uint8_t)connect_cause(rc);
            complete(w, r, OUTCOME_TRANSPORT, clock_now_ns());
            after_request(w, t, cl, NULL);
            return; /* the list changed: the next request's turn comes with the next change */
        }
        c->group = g;
        g->conn = c;
    }
}

/* A connection of the open-loop pool has room (c), or went away (NULL): serve the requests to
 * send again, then the head of the queue, while it has room; park it on the available list
 * when room is left; then make sure the queue has connects in progress. */
static void pool_refill(struct worker *w, struct target_rt *t, struct conn *c)
{
    if (c && c->state != CONN_FREE) {
        bool h2 = c->state == CONN_H2;
        if (h2)
            c->in_h2++;
        while ((t->npend || t->qlen) && conn_room(w, c)) {
            if (t->npend) {
                send_pending(w, c);
                continue;
            }
            uint64_t planned = queue_pop(t);
            w->queued--;
            /* in flight on c, or failed at once with c gone */
            dispatch(w, t, NULL, c, planned, planned < w->e->warmup_end_ns);
        }
        if (c->state != CONN_FREE && conn_room(w, c) && !w->finished)
            avail_push(t, c);
        if (h2 && --c->in_h2 == 0)
            h2_after(w, c);
    }
    grow(w, t);
}

/* One planned request of the open loop is due now. */
static void issue(struct worker *w, struct target_rt *t, uint64_t planned_ns, uint64_t now)
{
    bool warm = planned_ns < w->e->warmup_end_ns;
    counts_of(t, warm)->planned++;
    w->ic.planned++;
    hdr_record(&w->late, (int64_t)(now - planned_ns), 1);
    if (!t->qlen && !t->npend) {
        if (t->avail) {
            dispatch(w, t, NULL, t->avail, planned_ns, warm);
            return;
        }
        if (can_open(w, t)) {
            dispatch(w, t, NULL, NULL, planned_ns, warm);
            return;
        }
    }
    /* --when-busy drop drops only when the pool is exhausted (every stream of every
     * connection busy); a connect limit or a queue already waiting means a connection is on
     * its way */
    bool exhausted = w->nopen >= w->pool_cap && !t->avail;
    if (w->e->cfg->when_busy == RUN_BUSY_DROP && exhausted && !t->connecting_unbound) {
        record_dropped(w, t, planned_ns, warm);
        return;
    }
    if (!queue_push(t, planned_ns)) {
        counts_of(t, warm)->queue_overflow++;
        record_dropped(w, t, planned_ns, warm);
        return;
    }
    counts_of(t, warm)->queued++;
    w->queued++;
    grow(w, t);
}

static void end_planning(struct worker *w, uint64_t at_ns);

/* The drain of a duration run is over and the generator is still behind its plan: every
 * planned request it has not reached is dropped (planned, never sent), so a plan it cannot
 * keep ends with the run instead of stretching it. */
static void drop_unsent(struct worker *w)
{
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        while (t->has_next) {
            uint64_t planned = t->next_planned_ns;
            bool warm = planned < w->e->warmup_end_ns;
            counts_of(t, warm)->planned++;
            w->ic.planned++;
            w->unreached++;
            record_dropped(w, t, planned, warm);
            t->has_next = sched_next(&t->sched, &t->next_planned_ns);
        }
    }
}

static void on_sched(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    if (!w->planning)
        return;
    unsigned n = 0;
    for (;;) {
        struct target_rt *best = NULL;
        for (size_t i = 0; i < w->nt; i++)
            if (w->t[i].has_next && (!best || w->t[i].next_planned_ns < best->next_planned_ns))
                best = &w->t[i];
        uint64_t now = clock_now_ns();
        if (!best) {
            end_planning(w, now);
            return;
        }
        uint64_t next = best->next_planned_ns;
        if (next > now) {
            /* with --spin the thread's main loop polls (without sleeping) once this
             * deadline is closer than spin_ns, and IO keeps flowing meanwhile */
            loop_timer_arm(&w->loop, &w->sched_timer, next);
            return;
        }
        if (now >= w->e->cutoff_ns) {
            drop_unsent(w);
            end_planning(w, now);
            return;
        }
        if (++n > WORKER_BATCH) {
            /* far behind: let the loop read responses before sending more (the lateness
             * is in the lag histogram either way) */
            loop_timer_arm(&w->loop, &w->sched_timer, now);
            return;
        }
        issue(w, best, next, now);
        best->has_next = sched_next(&best->sched, &best->next_planned_ns);
    }
}

/* ------------------------------------------------------------------ closed loop */

static void on_think(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    client_next(timer->data);
}

static bool all_clients_done(const struct worker *w)
{
    for (size_t i = 0; i < w->nclients; i++)
        if (!w->clients[i].done)
            return false;
    return true;
}

static void client_finish(struct client *cl)
{
    struct worker *w = cl->w;
    cl->done = true;
    loop_timer_cancel(&w->loop, &cl->think);
    if (w->planning && all_clients_done(w))
        end_planning(w, clock_now_ns());
}

static void client_wait(struct cgroup *g, struct client *cl)
{
    cl->waiting = true;
    cl->wnext = NULL;
    if (g->wait_tail)
        g->wait_tail->wnext = cl;
    else
        g->wait_head = cl;
    g->wait_tail = cl;
}

/* The target's budget (--requests) is spent: the clients still waiting for a stream will
 * send nothing more. */
static void finish_waiters(struct target_rt *t)
{
    for (size_t i = 0; i < t->ngroups; i++) {
        struct cgroup *g = &t->groups[i];
        struct client *cl = g->wait_head;
        g->wait_head = g->wait_tail = NULL;
        while (cl) {
            struct client *next = cl->wnext;
            cl->waiting = false;
            client_finish(cl);
            cl = next;
        }
    }
}

static _Thread_local bool in_client_next;

static void client_next(struct client *cl)
{
    struct worker *w = cl->w;
    struct target_rt *t = cl->t;
    if (cl->done || cl->waiting)
        return;
    if (!w->planning || t->budget == 0) {
        client_finish(cl);
        return;
    }
    if (in_client_next) {
        /* a request failed synchronously inside a send: continue from the loop, not by
         * recursion (a refusing server would otherwise never let the loop run) */
        loop_timer_arm(&w->loop, &cl->think, clock_now_ns() + 1);
        return;
    }
    struct cgroup *g = cl->g;
    struct conn *c = g->conn;
    if (c && c->state == CONN_H2 && !h2_client_usable(c->h2)) {
        g->conn = NULL; /* after a GOAWAY it finishes its streams; new ones need a new connection */
        c = NULL;
    }
    bool room = c && conn_room(w, c) > 0;
    bool bindable = c && (c->state == CONN_CONNECTING || c->state == CONN_HANDSHAKING) && !c->req;
    if (c && !room && !bindable) {
        /* every stream of the group's connection is busy (or it is being opened for another
         * client): wait, before planning, for one to come free */
        client_wait(g, cl);
        return;
    }
    in_client_next = true;
    uint64_t planned = clock_now_ns();
    bool warm = planned < w->e->warmup_end_ns;
    if (t->budget != UINT64_MAX)
        t->budget--;
    counts_of(t, warm)->planned++;
    w->ic.planned++;
    bool ok = true;
    if (room) {
        ok = dispatch(w, t, cl, c, planned, warm);
    } else if (bindable) {
        /* the connect started before this request: T1 is now; the write follows the connect */
        bind_req(w, c, req_begin(w, t, cl, planned, warm, planned));
    } else {
        ok = dispatch(w, t, cl, NULL, planned, warm);
    }
    if (!ok) /* failed at once: the next request comes from the loop (see above) */
        after_request(w, t, cl, NULL);
    in_client_next = false;
    if (t->budget == 0)
        finish_waiters(t);
}

/* The clients waiting on g's connection get their turn: it went away (they open the next one:
 * the first opens it, the others wait for it). */
static void wake_waiters(struct worker *w, struct cgroup *g)
{
    (void)w;
    struct client *cl = g->wait_head;
    g->wait_head = g->wait_tail = NULL;
    while (cl) {
        struct client *next = cl->wnext;
        cl->waiting = false;
        client_next(cl);
        cl = next;
    }
}

/* c (of a closed-loop group) has room: requests to send again first, then the waiting clients,
 * one per free stream, in the order they began to wait. */
static void group_refill(struct worker *w, struct conn *c)
{
    struct cgroup *g = c->group;
    struct target_rt *t = c->t;
    if (c->state == CONN_FREE)
        return;
    bool h2 = c->state == CONN_H2;
    if (h2)
        c->in_h2++;
    while (t->npend && c->state != CONN_FREE && conn_room(w, c))
        send_pending(w, c);
    size_t n = 0;
    for (struct client *cl = g->wait_head; cl; cl = cl->wnext)
        n++;
    while (n-- && g->wait_head && c->state != CONN_FREE && g->conn == c && conn_room(w, c)) {
        struct client *cl = g->wait_head;
        g->wait_head = cl->wnext;
        if (!g->wait_head)
            g->wait_tail = NULL;
        cl->waiting = false;
        client_next(cl);
    }
    if (h2 && --c->in_h2 == 0)
        h2_after(w, c);
}

/* ------------------------------------------------------------------ after a request */

static void after_request(struct worker *w, struct target_rt *t, struct client *cl, struct conn *alive)
{
    if (cl) {
        /* those waiting for a stream of this connection go first, then this client */
        if (alive && alive->group && alive->group->wait_head)
            group_refill(w, alive);
        if (w->e->cfg->think_ns && w->planning)
            loop_timer_arm(&w->loop, &cl->think, clock_now_ns() + w->e->cfg->think_ns);
        else
            client_next(cl);
    } else {
        pool_refill(w, t, alive);
    }
}

static enum reqlog_outcome classify(const struct engine_target *et, const struct http_response *r)
{
    for (size_t i = 0; i < et->nrejects; i++)
        if (et->reject_status[i] == r->status &&
            (et->reject_bit[i] == ENGINE_NO_NEEDLE || (r->matched & (1u << et->reject_bit[i]))))
            return OUTCOME_REJECTED;
    if (r->status >= 200 && r->status < 400) {
        if (et->expect_bit != ENGINE_NO_NEEDLE && !(r->matched & (1u << et->expect_bit)))
            return OUTCOME_INVALID;
        return OUTCOME_OK;
    }
    return OUTCOME_HTTP_ERROR;
}

/* The HTTP/1.1 request on c ended with outcome o; c stays when keep. */
static void h1_finish(struct worker *w, struct conn *c, enum reqlog_outcome o, bool keep)
{
    struct target_rt *t = c->t;
    struct client *cl = c->req->client;
    uint64_t now = clock_now_ns();
    struct conn *alive = h1_complete(w, c, o, keep, now);
    after_request(w, t, cl, alive);
    maybe_finish(w);
}

/* The HTTP/1.1 request on c (or the request bound to a connection that is not ready) failed
 * in transport (cause): retried once when --retry-stale applies, else finished. */
static void fail_transport(struct worker *w, struct conn *c, enum run_transport_cause cause)
{
    struct req *r = c->req;
    if (may_retry(w, r, cause)) {
        struct target_rt *t = r->t;
        struct client *cl = r->client;
        if (!retry_stale(w, c)) {
            after_request(w, t, cl, NULL);
            maybe_finish(w);
        }
        return;
    }
    r->tcause = (uint8_t)cause;
    h1_finish(w, c, OUTCOME_TRANSPORT, false);
}

/* A connection that carries no request closed or failed (cause: why, when it failed before it
 * was ready). Whoever needs a connection hears of it. */
static void conn_failed(struct worker *w, struct conn *c, enum run_transport_cause cause)
{
    struct target_rt *t = c->t;
    struct cgroup *g = c->group;
    bool for_queue = c->for_queue;
    uint64_t attempt = c->connect_start_ns;
    conn_close(w, c);
    if (g) {
        wake_waiters(w, g);
        grow(w, t);
    } else {
        /* a failed connect opened for the queue fails the request at its head (one attempt
         * per request), or a refusing server would be retried forever */
        if (for_queue && (t->qlen || t->npend))
            fail_queued(w, t, attempt, cause);
        pool_refill(w, t, NULL);
    }
    maybe_finish(w);
}

/* A connection failed before it was ready: its bound request fails with the cause, or, without
 * one, whoever waited for it hears of it. */
static void conn_fail(struct worker *w, struct conn *c, enum run_transport_cause cause)
{
    if (c->req)
        fail_transport(w, c, cause);
    else
        conn_failed(w, c, cause);
}

/* ------------------------------------------------------------------ HTTP/1.1 responses */

/* n bytes of the response to the request on c arrived (at buf). Returns true while the
 * response is not complete, false when the request ended (finished, or failed). */
static bool h1_feed(struct worker *w, struct conn *c, const char *buf, size_t got)
{
    struct req *r = c->req;
    if (!r->first_byte_ns)
        r->first_byte_ns = clock_now_ns();
    size_t used = 0;
    enum http_feed f = http_response_feed(&r->resp, buf, got, &used);
    if (f == HTTP_FEED_DONE) {
        if (used < got) {
            /* bytes after the response we asked for: the connection is out of step */
            c->t->counts[0].conns_unsolicited++;
            c->close_after = true;
        } else if (c->tls_on && tls_conn_pending(&c->tls)) {
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
        h1_finish(w, c, classify(c->t->et, &r->resp), keep);
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
        h1_finish(w, c, classify(c->t->et, &r->resp), false);
    } else {
        c->t->counts[0].conns_closed_by_peer++;
        fail_transport(w, c, fail_cause(c, r, true));
    }
}

/* Read and parse what arrived for the request on c. Bytes are parsed from the thread's one
 * buffer and never kept, so a body without end costs no memory; at most WORKER_READS buffers
 * per call, so a peer that sends faster than we parse cannot keep the loop from its timers
 * (the request's timeout among them): the rest waits for the next turn (epoll is
 * level-triggered). Over TLS a read returns one record at most, so a short read says nothing:
 * read until the socket is empty, and never leave while OpenSSL holds bytes epoll cannot see. */
static void conn_read(struct worker *w, struct conn *c)
{
    for (int reads = 0;;) {
        size_t got;
        enum tls_io io = c->ops->read(c, w->rbuf, WORKER_RBUF, &got);
        if (io == TLS_IO_OK) {
            if (!h1_feed(w, c, w->rbuf, got))
                return;
            if (!c->tls_on && got < WORKER_RBUF)
                return;
            if (++reads >= WORKER_READS && !(c->tls_on && tls_conn_pending(&c->tls)))
                return;
            continue;
        }
        if (io == TLS_IO_WANT_READ)
            return;
        if (io == TLS_IO_WANT_WRITE) {
            if (!c->want_out) {
                loop_io_mod(&w->loop, &c->io, EPOLLIN | EPOLLOUT);
                c->want_out = true;
            }
            return;
        }
        if (io == TLS_IO_EOF) {
            h1_eof(w, c);
            return;
        }
        fail_transport(w, c, fail_cause(c, c->req, false));
        return;
    }
}

void worker_h1_input(struct worker *w, struct conn *c, const char *buf, long n)
{
    if (c->state == CONN_IDLE) {
        /* nothing is expected on an idle connection (as on_io's CONN_IDLE) */
        if (n > 0)
            c->t->counts[0].conns_unsolicited++;
        else
            c->t->counts[0].conns_closed_by_peer++;
        conn_failed(w, c, RUN_TC_OTHER);
        return;
    }
    if (c->state != CONN_BUSY)
        return;
    if (n > 0) {
        h1_feed(w, c, buf, (size_t)n);
    } else if (n == 0) {
        h1_eof(w, c);
    } else {
        c->sys_errno = (int)-n;
        fail_transport(w, c, fail_cause(c, c->req, false));
    }
}

/* ------------------------------------------------------------------ HTTP/2 sessions */

/* The session's bytes go out through the connection's transport. */
static long h2_io_write(void *io, const uint8_t *data, size_t len)
{
    struct conn *c = io;
    size_t put;
    enum tls_io r = c->ops->write(c, data, len, &put);
    if (r == TLS_IO_OK) {
        c->t->bytes_out += put;
        return (long)put;
    }
    if (r == TLS_IO_WANT_WRITE) {
        c->want_out = true; /* h2_after arms EPOLLOUT */
        return 0;
    }
    if (r == TLS_IO_WANT_READ)
        return 0; /* EPOLLIN is always armed */
    if (!c->fail_cause)
        c->fail_cause = (uint8_t)(1 + fail_cause(c, NULL, false));
    return -1;
}

static void h2_on_header(struct h2_stream *s, const uint8_t *name, size_t namelen, const uint8_t *value,
                         size_t valuelen)
{
    struct req *r = s->user;
    if (s->status >= 200 && namelen == 13 && memcmp(name, "server-timing", 13) == 0 && !r->resp.nst)
        r->resp.nst = http_parse_server_timing((const char *)value, valuelen, r->resp.st, HTTP_ST_MAX_ENTRIES);
}

static void h2_on_data(struct h2_stream *s, const uint8_t *data, size_t len)
{
    struct req *r = s->user;
    if (r->t->et->matchers.n)
        http_matchers_feed(&r->t->et->matchers, r->resp.kmp, &r->resp.matched, (const char *)data, len);
}

/* A refused stream (GOAWAY, REFUSED_STREAM) was not processed by the server (RFC 9113 §8.7,
 * §6.8): the request is sent once more on another connection, with --retry-stale's accounting
 * (one request: planned and sent once, its first send time kept, counts.retries + 1). It
 * waits on the target's pending list for a stream. */
static void h2_retry(struct worker *w, struct req *r)
{
    struct target_rt *t = r->t;
    struct req *n = req_alloc(w);
    req_init(n, t, r->client, r->planned_ns, r->warm, r->sent_ns);
    n->retried = true;
    /* n takes r's place in the timeout FIFO */
    n->tprev = r->tprev;
    n->tnext = r->tnext;
    if (n->tprev)
        n->tprev->tnext = n;
    else
        w->fifo_head = n;
    if (n->tnext)
        n->tnext->tprev = n;
    else
        w->fifo_tail = n;
    req_release(w, r);
    counts_of(t, n->warm)->retries++;
    t->pc.h2_retried++;
    pend_push(t, n);
    if (w->e->cfg->open_loop) {
        for (struct conn *c = t->avail; c && t->npend;) {
            struct conn *next = c->anext;
            if (conn_room(w, c))
                pool_refill(w, t, c);
            c = next;
        }
    } else {
        struct cgroup *g = n->client->g;
        if (g->conn && g->conn->state != CONN_FREE && conn_room(w, g->conn))
            group_refill(w, g->conn);
    }
    if (t->npend)
        grow(w, t);
}

static void h2_on_close(struct h2_stream *s)
{
    struct req *r = s->user;
    struct conn *c = r->c;
    struct worker *w = c->w;
    struct target_rt *t = r->t;
    struct client *cl = r->client;
    r->first_byte_ns = s->first_byte_ns;
    r->resp.status = s->status;
    r->resp.bytes = s->bytes;
    r->resp.body_bytes = s->body_bytes;
    uint64_t done = clock_now_ns();
    enum reqlog_outcome o = OUTCOME_TRANSPORT;
    if (r->end == REQ_END_TIMEOUT) {
        o = OUTCOME_TIMEOUT;
    } else if (r->end == REQ_END_CANCEL) {
        o = OUTCOME_CANCELLED;
    } else {
        switch (s->reason) {
        case H2_R_NONE:
            o = classify(t->et, &r->resp);
            done = s->done_ns;
            break;
        case H2_R_GOAWAY:
        case H2_R_REFUSED:
            if (s->reason == H2_R_REFUSED)
                t->pc.h2_refused++;
            else
                t->pc.h2_goaway_streams++;
            if (!r->retried) {
                h2_retry(w, r);
                return;
            }
            r->tcause = s->reason == H2_R_REFUSED ? RUN_TC_H2_REFUSED : RUN_TC_H2_GOAWAY;
            break;
        case H2_R_RST_STREAM:
            r->tcause = RUN_TC_H2_RST_STREAM;
            break;
        case H2_R_PROTOCOL:
            r->tcause = RUN_TC_H2_PROTOCOL;
            break;
        case H2_R_NOT_H2:
            r->tcause = RUN_TC_H2_NOT_H2;
            break;
        case H2_R_TIMEOUT: /* only through h2_client_cancel, which set r->end */
            o = OUTCOME_TIMEOUT;
            break;
        default: /* H2_R_CLOSED: the connection ended under the stream */
            r->tcause = c->fail_cause ? (uint8_t)(c->fail_cause - 1) : (uint8_t)io_cause(r, 0);
            break;
        }
    }
    bool cancelled = r->end == REQ_END_CANCEL;
    complete(w, r, o, done);
    if (cancelled)
        return; /* the drain is over: nothing more is sent (finish_now) */
    after_request(w, t, cl, c->state == CONN_H2 && conn_room(w, c) ? c : NULL);
    maybe_finish(w);
}

static void h2_on_goaway(void *user, int32_t last_stream_id, uint32_t error_code)
{
    (void)last_stream_id, (void)error_code;
    struct conn *c = user;
    avail_remove(c->t, c); /* no new streams; h2_after lets its group open the next connection */
}

static const struct h2_callbacks h2_callbacks = {
    .on_header = h2_on_header,
    .on_data = h2_on_data,
    .on_close = h2_on_close,
    .on_goaway = h2_on_goaway,
};

/* Everything that must wait until the session's callbacks have returned, in a loop until
 * nothing changes: write what nghttp2 has (one flush for every stream submitted meanwhile),
 * close the connection when it is over (failed, GOAWAY with nothing open, its requests per
 * connection done, or the worker finished), let new requests go elsewhere after a GOAWAY, and
 * give free streams to whoever waits. Never runs inside a callback of c's own session. */
static void h2_after(struct worker *w, struct conn *c)
{
    if (c->in_after || c->in_h2 || c->state != CONN_H2)
        return;
    c->in_after = true;
    struct target_rt *t = c->t;
    for (;;) {
        if (c->flush_due || h2_client_want_write(c->h2)) {
            c->flush_due = false;
            c->want_out = false;
            c->in_h2++;
            enum h2_io io = h2_client_flush(c->h2);
            if (io == H2_IO_ERROR && h2_client_reason(c->h2) == H2_R_NONE)
                h2_client_fail(c->h2, H2_R_CLOSED); /* the write failed: every open stream fails */
            c->in_h2--;
            bool out = io == H2_IO_WANT_WRITE || c->want_out;
            loop_io_mod(&w->loop, &c->io, EPOLLIN | (out ? EPOLLOUT : 0));
            c->want_out = out;
        }
        uint32_t open = h2_client_open_streams(c->h2);
        if (c->close_due || h2_client_done(c->h2) || (!open && (c->nreq >= w->e->rpc || w->finished))) {
            struct cgroup *g = c->group;
            c->in_after = false;
            conn_close(w, c);
            if (w->finished)
                return;
            if (g) {
                wake_waiters(w, g);
                grow(w, t);
            } else {
                pool_refill(w, t, NULL);
            }
            return;
        }
        if (!h2_client_usable(c->h2)) {
            /* GOAWAY: its streams finish here, new requests need a new connection */
            avail_remove(t, c);
            if (c->group && c->group->conn == c) {
                c->group->conn = NULL;
                wake_waiters(w, c->group);
                grow(w, t);
            }
            break;
        }
        uint32_t m = h2_client_server_max_streams(c->h2);
        t->per_conn = m < w->e->h2_streams ? m : w->e->h2_streams;
        if (!conn_room(w, c) || w->finished)
            break;
        if (c->group)
            group_refill(w, c);
        else
            pool_refill(w, t, c);
        if (!(c->flush_due || c->close_due || h2_client_want_write(c->h2)))
            break;
    }
    c->in_after = false;
}

/* Bytes arrived (or the socket can take more) on an HTTP/2 connection. */
static void h2_on_io(struct worker *w, struct conn *c, uint32_t events)
{
    c->in_h2++;
    if (events & EPOLLOUT)
        c->flush_due = true;
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        for (int reads = 0;;) {
            size_t got;
            enum tls_io io = c->ops->read(c, w->rbuf, WORKER_RBUF, &got);
            if (io == TLS_IO_OK) {
                if (h2_client_feed(c->h2, (const uint8_t *)w->rbuf, got) != 0)
                    break; /* the session failed: its streams were closed with its reason */
                if (!c->tls_on && got < WORKER_RBUF)
                    break;
                if (++reads >= WORKER_READS && !(c->tls_on && tls_conn_pending(&c->tls)))
                    break;
                continue;
            }
            if (io == TLS_IO_WANT_READ)
                break;
            if (io == TLS_IO_WANT_WRITE) {
                c->flush_due = true;
                c->want_out = true;
                break;
            }
            if (io == TLS_IO_EOF)
                c->t->counts[0].conns_closed_by_peer++;
            else if (!c->fail_cause)
                c->fail_cause = (uint8_t)(1 + fail_cause(c, NULL, false));
            h2_client_fail(c->h2, H2_R_CLOSED);
            break;
        }
    }
    c->in_h2--;
    h2_after(w, c);
}

/* ------------------------------------------------------------------ connecting */

/* c is connected (and through its handshake): choose the protocol, send the request bound to
 * it or take whatever waits. */
static void conn_ready(struct worker *w, struct conn *c)
{
    struct target_rt *t = c->t;
    cfifo_remove(w, c);
    conn_unqueue(c);
    bool h2 = c->tls_on ? c->tls.proto == TLS_PROTO_H2 : t->et->h2_known;
    if (h2)
        t->pc.h2++;
    else
        t->pc.http1++;
    c->counted = true;
    struct req *r = c->req;
    if (r) {
        /* the connection's first request carries its connect and handshake (as main's connect_ns:
         * a connection opened before t0 began them before its first request was sent) */
        r->connect_ns = c->connect_ns;
        r->tls_ns = c->tls_ns;
    }
    if (h2) {
        c->h2 = h2_client_new(&h2_callbacks, h2_io_write, c, c, w->e->h2_streams);
        c->state = CONN_H2;
        loop_io_mod(&w->loop, &c->io, EPOLLIN);
        c->want_out = false;
        c->req = NULL;
        c->in_h2++;
        if (r)
            h2_submit(w, c, r); /* the one stream allowed before the server's SETTINGS */
        c->flush_due = true;    /* the preface and SETTINGS go out with the first flush */
        c->in_h2--;
        h2_after(w, c);
        return;
    }
    if (w->ring && !c->tls_on)
        uring_conn_ready(w, c);
    if (r) {
        req_protocol(c, r);
        req_bytes(w, c, r);
        c->state = CONN_BUSY;
        if (conn_write(w, c))
            fail_transport(w, c, fail_cause(c, r, false));
        return;
    }
    loop_io_mod(&w->loop, &c->io, EPOLLIN);
    c->want_out = false;
    c->state = CONN_IDLE;
    if (c->group)
        group_refill(w, c);
    else
        pool_refill(w, t, c);
}

/* One step of the TLS handshake; the tls phase is connected -> handshake done. */
static void handshake(struct worker *w, struct conn *c)
{
    enum tls_io io = tls_conn_handshake(&c->tls);
    if (io == TLS_IO_WANT_READ || io == TLS_IO_WANT_WRITE) {
        bool out = io == TLS_IO_WANT_WRITE;
        if (out != c->want_out) {
            loop_io_mod(&w->loop, &c->io, EPOLLIN | (out ? EPOLLOUT : 0));
            c->want_out = out;
        }
        return;
    }
    struct target_rt *t = c->t;
    if (io != TLS_IO_OK) {
        t->pc.tls_failed++;
        conn_fail(w, c, fail_cause(c, NULL, false));
        return;
    }
    uint64_t now = clock_now_ns();
    c->tls_ns = now - c->connected_ns;
    if (w->e->cfg->warmup_ns == 0 || c->connect_start_ns >= w->e->warmup_end_ns)
        hdr_record(&t->tls, (int64_t)c->tls_ns, 1);
    if (c->tls.resumed)
        t->pc.tls_resumed++;
    else
        t->pc.tls_full++;
    int v = tls_conn_version_number(&c->tls);
    if (v >= TLS_V1_0 && v <= TLS_V1_3)
        t->pc.tls_version[v - TLS_V1_0]++;
    conn_ready(w, c);
    /* reading ahead, the handshake may have taken in what followed it (an HTTP/2 server's
     * SETTINGS): epoll will not say so again */
    if (c->state != CONN_FREE && c->tls_on && tls_conn_pending(&c->tls))
        on_io(&w->loop, &c->io, EPOLLIN);
}

static void on_connected(struct worker *w, struct conn *c)
{
    leave_connecting(w, c);
    struct target_rt *t = c->t;
    uint64_t now = clock_now_ns();
    c->connected_ns = now;
    c->connect_ns = now - c->connect_start_ns;
    if (w->e->cfg->warmup_ns == 0 || c->connect_start_ns >= w->e->warmup_end_ns)
        hdr_record(&t->connect, (int64_t)c->connect_ns, 1);
    if (!t->et->tls) {
        conn_ready(w, c);
        return;
    }
    c->state = CONN_HANDSHAKING;
    int r =
        tls_conn_client(&c->tls, w->e->tls, c->io.fd, t->et->url.host, w->e->cfg->tls_no_resume ? NULL : &t->tls_cache);
    if (r) {
        t->pc.tls_failed++;
        conn_fail(w, c, RUN_TC_OTHER);
        return;
    }
    c->tls_on = true;
    c->ops = &conn_tls_ops;
    handshake(w, c); /* the ClientHello goes out now */
}

static void on_io(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    struct conn *c = io->data;
    struct worker *w = c->w;
    switch (c->state) {
    case CONN_FREE:
        return; /* a stale event for a connection closed earlier in this batch */
    case CONN_CONNECTING: {
        int r = net_connect_finish(c->io.fd);
        if (r == 0 && !(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        if (r) {
            c->t->counts[0].conns_failed++;
            conn_fail(w, c, connect_cause(r));
            return;
        }
        on_connected(w, c);
        return;
    }
    case CONN_HANDSHAKING:
        handshake(w, c);
        return;
    case CONN_IDLE: {
        /* nothing is expected on an idle connection: a close, or bytes nobody asked for (over
         * TLS also a session ticket, which the read takes in and answers WANT_READ) */
        char b[512];
        size_t got;
        enum tls_io r = c->ops->read(c, b, sizeof b, &got);
        if (r == TLS_IO_WANT_READ || r == TLS_IO_WANT_WRITE) {
            bool out = r == TLS_IO_WANT_WRITE;
            if (out != c->want_out) {
                loop_io_mod(&w->loop, &c->io, EPOLLIN | (out ? EPOLLOUT : 0));
                c->want_out = out;
            }
            return;
        }
        if (r == TLS_IO_OK)
            c->t->counts[0].conns_unsolicited++;
        else
            c->t->counts[0].conns_closed_by_peer++;
        conn_failed(w, c, RUN_TC_OTHER);
        return;
    }
    case CONN_BUSY: {
        struct req *r = c->req;
        if (r->write_off < r->len && (events & (EPOLLOUT | EPOLLIN))) {
            if (conn_write(w, c)) {
                fail_transport(w, c, fail_cause(c, r, false));
                return;
            }
        } else if ((events & EPOLLOUT) && c->want_out) {
            /* a TLS read that wanted to write (a key update) */
            loop_io_mod(&w->loop, &c->io, EPOLLIN);
            c->want_out = false;
            conn_read(w, c);
            return;
        }
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            conn_read(w, c);
        return;
    }
    case CONN_H2:
        h2_on_io(w, c, events);
        return;
    }
}

/* ------------------------------------------------------------------ timers and phases */

/* The request r ends without its response: its timeout passed (end REQ_END_TIMEOUT), or the
 * drain is over (REQ_END_CANCEL). An HTTP/2 stream is reset (RST_STREAM CANCEL) and its
 * connection goes on; an HTTP/1.1 connection (or one still connecting for the request) is
 * closed, since the response may still come. */
static void expire(struct worker *w, struct req *r, enum req_end end, uint64_t now)
{
    struct target_rt *t = r->t;
    struct client *cl = r->client;
    struct conn *c = r->c;
    enum reqlog_outcome o = end == REQ_END_TIMEOUT ? OUTCOME_TIMEOUT : OUTCOME_CANCELLED;
    if (r->pending) {
        pend_remove(t, r);
        complete(w, r, o, now);
        if (end == REQ_END_TIMEOUT)
            after_request(w, t, cl, NULL);
        return;
    }
    if (c && c->state == CONN_H2) {
        r->end = (uint8_t)end;
        c->in_h2++;
        h2_client_cancel(c->h2, &r->stream, H2_R_TIMEOUT); /* on_close accounts it */
        c->in_h2--;
        h2_after(w, c);
        return;
    }
    h1_complete(w, c, o, false, now);
    if (end == REQ_END_TIMEOUT)
        after_request(w, t, cl, NULL);
}

static void on_timeout(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    uint64_t now = clock_now_ns();
    /* The next request a closed-loop client sends here joins the FIFO's tail: it never delays
     * an older deadline, and the timer is re-armed for whatever is the head at the end. */
    while (w->fifo_head && deadline_of(w, w->fifo_head) <= now)
        expire(w, w->fifo_head, REQ_END_TIMEOUT, now);
    if (w->fifo_head)
        loop_timer_arm(&w->loop, &w->timeout_timer, deadline_of(w, w->fifo_head));
    maybe_finish(w);
}

/* A connection without a request that is still connecting or handshaking at its deadline
 * (connect start + --timeout) fails: a stalled handshake is tls_handshake_timeout, a connect
 * that never finished is connect. The queued request at the head fails with it (as after a
 * failed connect); a request bound to a connection times out through its own deadline. */
static void on_conn_timeout(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    uint64_t now = clock_now_ns();
    while (w->cfifo_head && conn_deadline(w, w->cfifo_head) <= now) {
        struct conn *c = w->cfifo_head;
        enum run_transport_cause cause = RUN_TC_CONNECT;
        if (c->state == CONN_HANDSHAKING) {
            tls_conn_fail(&c->tls, TLS_R_HANDSHAKE_TIMEOUT, "the TLS handshake did not finish within --timeout");
            c->t->pc.tls_failed++;
            cause = RUN_TC_TLS_HANDSHAKE_TIMEOUT;
        } else {
            c->t->counts[0].conns_failed++;
        }
        conn_failed(w, c, cause);
    }
    if (w->cfifo_head)
        loop_timer_arm(&w->loop, &w->conn_timer, conn_deadline(w, w->cfifo_head));
    maybe_finish(w);
}

static void publish_interval(struct worker *w, uint64_t end_ns)
{
    engine_publish(w, end_ns);
    for (size_t i = 0; i < w->nt; i++) {
        hdr_reset(&w->t[i].ival);
        w->t[i].ival_max_ns = 0;
    }
    memset(&w->ic, 0, sizeof w->ic);
    w->tick_index++;
}

static void on_tick(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    uint64_t end = w->e->t0_ns + engine_tick_end(w->e, w->tick_index);
    publish_interval(w, end);
    loop_timer_arm(&w->loop, &w->tick_timer, w->e->t0_ns + engine_tick_end(w->e, w->tick_index));
}

/* Cancel whatever is still in flight and drop whatever still waits, then stop. */
static void finish_now(struct worker *w)
{
    uint64_t now = clock_now_ns();
    while (w->fifo_head)
        expire(w, w->fifo_head, REQ_END_CANCEL, now);
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        while (t->qlen) {
            uint64_t planned = queue_pop(t);
            w->queued--;
            record_dropped(w, t, planned, planned < w->e->warmup_end_ns);
        }
    }
    maybe_finish(w);
}

static void on_end(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    if (w->planning) /* closed loop: the duration is over */
        end_planning(w, clock_now_ns());
    else /* the drain is over */
        finish_now(w);
}

static void end_planning(struct worker *w, uint64_t at_ns)
{
    if (!w->planning)
        return;
    w->planning = false;
    w->plan_end_ns = at_ns;
    loop_timer_cancel(&w->loop, &w->sched_timer);
    for (size_t i = 0; i < w->nclients; i++) {
        struct client *cl = &w->clients[i];
        loop_timer_cancel(&w->loop, &cl->think);
        cl->done = true;
    }
    /* a duration run's drain starts at the end of the plan, however late the generator
     * finished planning: the run ends by --duration + --drain */
    uint64_t from = w->e->plan_end_ns != UINT64_MAX && at_ns > w->e->plan_end_ns ? w->e->plan_end_ns : at_ns;
    w->drain_deadline_ns = from + w->e->drain_ns;
    loop_timer_arm(&w->loop, &w->end_timer, w->drain_deadline_ns);
    maybe_finish(w);
}

static void maybe_finish(struct worker *w)
{
    if (w->finished || w->planning || !w->started || w->inflight || w->queued)
        return;
    /* Edges this thread passed before it saw it was done (a loaded machine runs the tick
     * timer late) are published at their own times first, so no interval stretches past
     * its edge; only the last one ends when the thread does. Done before `finished`: the
     * engine takes a finished thread's later intervals as published. */
    uint64_t now = clock_now_ns();
    for (uint64_t edge; (edge = w->e->t0_ns + engine_tick_end(w->e, w->tick_index)) < now;)
        publish_interval(w, edge);
    w->finished = true;
    w->finish_ns = now;
    /* close what is left: idle and preconnected connections (an HTTP/2 session whose
     * callbacks are running closes when they return) */
    for (size_t k = 0; k < w->nchunks; k++)
        for (size_t i = 0; i < CONN_CHUNK; i++) {
            struct conn *c = &w->chunks[k][i];
            if (c->state == CONN_FREE)
                continue;
            if (c->state == CONN_H2 && (c->in_h2 || c->in_after))
                c->close_due = true;
            else
                conn_close(w, c);
        }
    for (size_t i = 0; i < w->nt; i++)
        w->t[i].avail = NULL;
    loop_timer_cancel(&w->loop, &w->tick_timer);
    loop_timer_cancel(&w->loop, &w->end_timer);
    loop_timer_cancel(&w->loop, &w->timeout_timer);
    loop_timer_cancel(&w->loop, &w->conn_timer);
    publish_interval(w, w->finish_ns);
}

static void on_start(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    struct engine *e = w->e;
    w->started = true;
    if (e->cfg->open_loop) {
        bool any = false;
        for (size_t i = 0; i < w->nt; i++) {
            struct target_rt *t = &w->t[i];
            t->has_next = sched_next(&t->sched, &t->next_planned_ns);
            any |= t->has_next;
        }
        if (!any) {
            end_planning(w, clock_now_ns());
            return;
        }
        on_sched(&w->loop, &w->sched_timer);
        return;
    }
    if (!w->nclients) {
        end_planning(w, clock_now_ns());
        return;
    }
    if (e->plan_end_ns != UINT64_MAX)
        loop_timer_arm(&w->loop, &w->end_timer, e->plan_end_ns);
    for (size_t i = 0; i < w->nclients && w->planning; i++)
        client_next(&w->clients[i]);
}

/* ------------------------------------------------------------------ thread */

static void preconnect(struct worker *w)
{
    struct engine *e = w->e;
    if (!e->cfg->open_loop) {
        /* one connection per group of clients (per client over HTTP/1.1) */
        for (size_t i = 0; i < w->ngroups; i++) {
            struct cgroup *g = &w->groups[i];
            struct conn *c;
            if (conn_open(w, g->t, &c, false) == 0) {
                c->group = g;
                g->conn = c;
            }
        }
        return;
    }
    /* open loop: about a millisecond's worth of requests per target, so the first sends
     * do not all pay for a connect; the pool grows on demand from there */
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        double per_thread = t->et->rate_from > t->et->rate_to ? t->et->rate_from : t->et->rate_to;
        per_thread /= e->nworkers;
        uint32_t n = (uint32_t)ceil(per_thread * 1e-3);
        if (n < 1)
            n = 1;
        if (n > 32)
            n = 32;
        for (uint32_t k = 0; k < n && w->nopen < w->pool_cap && w->connecting < RUN_MAX_CONNECTING; k++) {
            struct conn *c;
            if (conn_open(w, t, &c, true))
                break;
        }
    }
}

/* Closed loop: this thread's share of a target's connections (groups of clients) and of its
 * --requests. Connections are split over the threads; a group has --streams clients (the last
 * one of the target fewer, when the clients were capped by --requests). */
static void closed_share(struct worker *w, struct target_rt *t, uint32_t T, uint32_t index, size_t *k)
{
    const struct engine_target *et = t->et;
    uint32_t G = et->groups, S = w->e->group_streams;
    uint32_t mine = G / T + (index < G % T ? 1 : 0);
    uint32_t first = index * (G / T) + (index < G % T ? index : G % T);
    t->groups = w->groups + w->ngroups;
    t->ngroups = mine;
    for (uint32_t j = 0; j < mine; j++) {
        struct cgroup *g = &w->groups[w->ngroups++];
        g->t = t;
        uint32_t gi = first + j;
        uint32_t n = et->clients - gi * S < S ? et->clients - gi * S : S;
        for (uint32_t m = 0; m < n; m++) {
            struct client *cl = &w->clients[(*k)++];
            cl->w = w;
            cl->t = t;
            cl->g = g;
            loop_timer_init(&cl->think, on_think, cl);
        }
    }
    /* --requests: split over the threads that have connections for this target */
    uint32_t teff = G < T ? G : T;
    if (et->limit == UINT64_MAX)
        t->budget = UINT64_MAX;
    else if (index < teff)
        t->budget = et->limit / teff + (index < et->limit % teff ? 1 : 0);
    else
        t->budget = 0;
}

int worker_init(struct worker *w, struct engine *e, uint32_t index)
{
    memset(w, 0, sizeof *w);
    w->e = e;
    w->index = index;
    int r = loop_init(&w->loop);
    if (r)
        return r;
    w->rbuf = xmalloc(WORKER_RBUF);
    w->nt = e->nt;
    w->t = xcalloc(e->nt, sizeof *w->t);
    hdr_init(&w->late, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    for (size_t i = 0; i < e->nt; i++) {
        struct target_rt *t = &w->t[i];
        t->index = i;
        t->et = &e->targets[i];
        t->per_conn = 1;
        hdr_init(&t->latency[RUN_GROUP_OK], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->service, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->ttfb, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->lag, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->connect, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->tls, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->ival, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        tls_session_cache_init(&t->tls_cache);
    }
    uint32_t T = e->nworkers;
    if (e->cfg->open_loop) {
        w->pool_cap = e->pool_cap / T + (index < e->pool_cap % T ? 1 : 0);
        if (w->pool_cap == 0)
            w->pool_cap = 1;
    } else {
        /* clients: each target's connections spread over the threads, --streams clients each */
        size_t ngroups = 0;
        for (size_t i = 0; i < e->nt; i++) {
            uint32_t G = e->targets[i].groups;
            ngroups += G / T + (index < G % T ? 1 : 0);
        }
        w->groups = xcalloc(ngroups ? ngroups : 1, sizeof *w->groups);
        w->clients = xcalloc(ngroups ? ngroups * e->group_streams : 1, sizeof *w->clients);
        size_t k = 0;
        for (size_t i = 0; i < e->nt; i++)
            closed_share(w, &w->t[i], T, index, &k);
        w->nclients = k;
    }
    loop_timer_init(&w->start_timer, on_start, w);
    loop_timer_init(&w->sched_timer, on_sched, w);
    loop_timer_init(&w->tick_timer, on_tick, w);
    loop_timer_init(&w->end_timer, on_end, w);
    loop_timer_init(&w->timeout_timer, on_timeout, w);
    loop_timer_init(&w->conn_timer, on_conn_timeout, w);
    w->planning = true;
    return 0;
}

void worker_release(struct worker *w)
{
    for (size_t k = 0; k < w->nchunks; k++) {
        for (size_t i = 0; i < CONN_CHUNK; i++) {
            struct conn *c = &w->chunks[k][i];
            if (c->state == CONN_FREE)
                continue;
            if (c->h2) {
                h2_client_free(c->h2); /* streams still open are not called back */
                c->h2 = NULL;
            }
            if (c->tls_on)
                tls_conn_release(&c->tls);
            if (c->io.fd >= 0)
                close(c->io.fd);
        }
        free(w->chunks[k]);
    }
    free(w->chunks);
    for (size_t k = 0; k < w->nrchunks; k++)
        free(w->rchunks[k]);
    free(w->rchunks);
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        for (int g = 0; g < RUN_GROUP_COUNT; g++)
            if (t->latency[g].counts)
                hdr_release(&t->latency[g]);
        hdr_release(&t->service);
        hdr_release(&t->ttfb);
        hdr_release(&t->lag);
        hdr_release(&t->connect);
        hdr_release(&t->tls);
        hdr_release(&t->ival);
        for (size_t j = 0; j < t->nst; j++)
            hdr_release(&t->st[j].dur);
        tls_session_cache_release(&t->tls_cache);
        free(t->q);
    }
    hdr_release(&w->late);
    free(w->tk);
    free(w->t);
    free(w->clients);
    free(w->groups);
    free(w->rbuf);
    uring_release(w);
    loop_release(&w->loop);
}

void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct engine *e = w->e;
    struct run_generator_cpu cpu0; /* this thread's CPU, for the run's generator_cpu */
    thread_cpu_now(&cpu0);
    /* timer slack 1 ns: the kernel would otherwise coalesce our wake-ups by 50 µs */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    if (e->log)
        w->chunk = outlog_take(e->log, &w->log_slowed);
    if (e->io == RUN_IO_URING && uring_init(w) != 0)
        atomic_fetch_add(&e->ring_failed, 1); /* this thread runs epoll (the result says so) */
    preconnect(w);
    if (!engine_start_gate(e))
        goto out; /* the engine could not start every thread: no run */
    if (e->cfg->open_loop) {
        /* --timer-slack D: the user accepts sends up to D late. Every wait of this thread may
         * then end anywhere in [deadline, deadline + D] (the kernel's hrtimer range), so the
         * schedule timer, still armed for the first due send's exact time, wakes at most D
         * after it and that wake sends every request due by then; an IO wake-up in between
         * sends them too (the loop runs every timer whose deadline has passed). Lag records
         * each send's true time. */
        if (e->timer_slack_ns)
            prctl(PR_SET_TIMERSLACK, (unsigned long)e->timer_slack_ns, 0UL, 0UL, 0UL);
        for (size_t i = 0; i < w->nt; i++) {
            struct target_rt *t = &w->t[i];
            const struct engine_target *et = t->et;
            uint64_t seed = run_stream_seed(e->cfg->seed, i);
            sched_init(&t->sched, e->cfg->arrivals == RUN_ARRIVALS_POISSON, et->rate_from, et->rate_to,
                       (double)e->cfg->duration_ns / 1e9, e->t0_ns, e->plan_end_ns, et->limit,
                       run_shard_stride(e->cfg, e->nworkers), run_shard_offset(e->cfg, e->nworkers, w->index), seed);
        }
    }
    loop_timer_arm(&w->loop, &w->start_timer, e->t0_ns);
    loop_timer_arm(&w->loop, &w->tick_timer, e->t0_ns + engine_tick_end(e, 0));
    w->win_end_ns = e->window_end_ns == UINT64_MAX ? UINT64_MAX : e->window_end_ns - e->t0_ns;
    for (size_t i = 0; i < w->nt; i++)
        run_events_init(&w->t[i].ev, e->cfg->warmup_ns, w->win_end_ns);
    int stop_seen = 0;
    while (!w->finished) {
        /* connections opened before t0 complete while we wait for it. With --spin, the
         * last spin_ns before a deadline are spent polling instead of sleeping: a sleep
         * wakes up late by the timer and scheduler latency (tens of µs), a poll does not. */
        uint64_t wait_ns = 200 * NS_PER_MS;
        if (w->e->spin_ns) {
            uint64_t next = loop_next_deadline(&w->loop), now = clock_now_ns();
            if (next != UINT64_MAX && next <= now + w->e->spin_ns)
                wait_ns = 0;
        }
        int r = w->ring ? uring_run_once(w, wait_ns) : loop_run_once(&w->loop, wait_ns);
        if (r < 0) {
            w->fatal = r;
            finish_now(w);
            if (!w->finished) {
                w->planning = false;
                w->inflight = w->queued = 0;
                w->started = true;
                maybe_finish(w);
            }
            break;
        }
        int lvl = atomic_load(&e->stop->level);
        if (lvl != stop_seen && w->started) {
            stop_seen = lvl;
            if (lvl >= 1 && w->planning) {
                /* the window ends where this thread stopped planning */
                uint64_t now = clock_now_ns();
                uint64_t cut = now - e->t0_ns;
                if (cut < w->win_end_ns) {
                    w->win_end_ns = cut;
                    for (size_t i = 0; i < w->nt; i++)
                        w->t[i].ev.window_end_ns = cut;
                }
                end_planning(w, now);
            }
            if (lvl >= 2)
                finish_now(w);
        }
    }
out:
    if (w->chunk) {
        outlog_submit(e->log, w->chunk);
        w->chunk = NULL;
    }
    thread_cpu_since(&cpu0, &e->worker_cpu[w->index]);
    return NULL;
}
