/* One load thread: its own event loop, schedule share, connections, counters and
 * histograms. Nothing here takes a lock or touches another thread's memory on the request
 * path; once a second the interval is handed to the engine (engine_publish).
 *
 * Connection state machine (struct conn):
 *   FREE → CONNECTING (non-blocking connect, EPOLLIN|EPOLLOUT registered)
 *        → IDLE (connected, no request; EPOLLIN only, so a close by the server is seen)
 *        → BUSY (request written or being written; response being parsed) → IDLE or closed.
 * A request is written directly from whatever callback decided to send it; EPOLLOUT is armed
 * only when a write would block (one epoll_ctl pair per short write, none per request).
 *
 * Every planned request reaches exactly one of: dropped (never sent), or one outcome after
 * being sent. "Sent" (T1) is when knee began sending it: the write on an open connection, or
 * the start of the connect when a connection was opened for it. */
#include "load/internal.h"

#include "core/clock.h"
#include "core/err.h"

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

/* ------------------------------------------------------------------ connection pool */

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

static void leave_connecting(struct worker *w, struct conn *c)
{
    if (c->state != CONN_CONNECTING)
        return;
    w->connecting--;
    if (!c->has_req && !c->client)
        c->t->connecting_unbound--;
}

static void conn_close(struct worker *w, struct conn *c)
{
    leave_connecting(w, c);
    if (c->io.fd >= 0)
        close(c->io.fd); /* also removes it from the epoll set */
    c->io.fd = -1;
    c->state = CONN_FREE;
    c->has_req = false;
    c->client = NULL;
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

/* Start a connect. 0 with *out CONNECTING, or -errno (nothing allocated stays). */
static int conn_open(struct worker *w, struct target_rt *t, struct conn **out)
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
    c->client = NULL;
    c->state = CONN_CONNECTING;
    c->id = w->conn_seq++ * w->e->nworkers + w->index;
    c->connect_start_ns = start;
    c->has_req = false;
    c->want_out = true;
    c->close_after = false;
    c->nreq = 0;
    w->nopen++;
    w->connecting++;
    *out = c;
    return 0;
}

/* ------------------------------------------------------------------ timeout FIFO */

/* Requests in flight in the order of their deadlines (send time + the one timeout), so the
 * head has the earliest; one loop timer serves them all. Invariant, outside on_timeout: while
 * the FIFO is not empty, the timer is armed no later than the head's deadline (it may be
 * earlier: a removed head leaves the timer early, and on_timeout then re-arms it). Only a
 * request that becomes the head arms the timer, so a send never pushes an earlier deadline
 * back; on_timeout re-arms for the head when it is done. */
static uint64_t deadline_of(const struct worker *w, const struct conn *c)
{
    return c->sent_ns + w->e->timeout_ns;
}

static void fifo_push(struct worker *w, struct conn *c)
{
    /* nearly always at the tail (requests are sent in time order); a --retry-stale request
     * keeps its first send time and may go a few places back */
    struct conn *after = w->fifo_tail;
    while (after && after->sent_ns > c->sent_ns)
        after = after->tprev;
    c->tprev = after;
    c->tnext = after ? after->tnext : w->fifo_head;
    if (c->tnext)
        c->tnext->tprev = c;
    else
        w->fifo_tail = c;
    if (after)
        after->tnext = c;
    else
        w->fifo_head = c;
    if (w->fifo_head == c)
        loop_timer_arm(&w->loop, &w->timeout_timer, deadline_of(w, c));
}

static void fifo_remove(struct worker *w, struct conn *c)
{
    if (c->tprev)
        c->tprev->tnext = c->tnext;
    else
        w->fifo_head = c->tnext;
    if (c->tnext)
        c->tnext->tprev = c->tprev;
    else
        w->fifo_tail = c->tprev;
    c->tprev = c->tnext = NULL;
}

/* ------------------------------------------------------------------ recording */

/* Times since t0 in the log; an event that happened is never 0 there (0 means "none"). */
static uint64_t since_t0(uint64_t t, uint64_t t0)
{
    return t > t0 ? t - t0 : 1;
}

static void log_record(struct worker *w, const struct target_rt *t, const struct conn *c, uint64_t planned_ns,
                       bool warm, enum reqlog_outcome o, uint64_t done_ns)
{
    if (!w->chunk)
        return;
    uint64_t t0 = w->e->t0_ns;
    struct reqlog_record *r = &w->chunk->rec[w->chunk->n++];
    memset(r, 0, sizeof *r);
    r->planned_ns = planned_ns - t0;
    r->target = (uint32_t)t->index;
    r->outcome = (uint8_t)o;
    r->flags = warm ? REQLOG_FLAG_WARMUP : 0;
    if (c) {
        r->sent_ns = since_t0(c->sent_ns, t0);
        if (!w->e->cfg->open_loop)
            r->planned_ns = r->sent_ns; /* closed loop: latency is measured from the send */
        r->first_byte_ns = c->first_byte_ns ? since_t0(c->first_byte_ns, t0) : 0;
        r->done_ns = o == OUTCOME_CANCELLED ? 0 : since_t0(done_ns, t0);
        r->connect_ns = c->connect_ns;
        r->bytes = c->resp.bytes;
        r->connection = c->id;
        r->status = (uint16_t)(c->resp.status > 0 && c->resp.status < 1000 ? c->resp.status : 0);
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
static void count_events(struct worker *w, struct target_rt *t, const struct conn *c, uint64_t planned_ns,
                         enum reqlog_outcome o, uint64_t done_ns)
{
    uint64_t t0 = w->e->t0_ns;
    uint64_t planned = planned_ns > t0 ? planned_ns - t0 : 0;
    uint64_t sent = c ? since_t0(c->sent_ns, t0) : 0;
    if (c && !w->e->cfg->open_loop)
        planned = sent;
    uint64_t done = c && o != OUTCOME_CANCELLED ? since_t0(done_ns, t0) : 0;
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
static void record(struct worker *w, struct conn *c, enum reqlog_outcome o, uint64_t done_ns)
{
    struct target_rt *t = c->t;
    struct engine *e = w->e;
    struct run_counts *rc = counts_of(t, c->warm);
    rc->outcome[o]++;
    if (o == OUTCOME_TRANSPORT)
        rc->transport_cause[c->tcause < RUN_TC_COUNT ? c->tcause : RUN_TC_OTHER]++;
    rc->bytes_in += c->resp.bytes;
    t->bytes_out += c->write_off; /* the request's bytes written (live metrics) */
    if (o != OUTCOME_CANCELLED) {
        uint64_t from = e->cfg->open_loop ? c->planned_ns : c->sent_ns;
        int64_t lat = (int64_t)(done_ns - from);
        w->ic.completed++;
        if (o == OUTCOME_OK)
            w->ic.ok++;
        else
            w->ic.errors++;
        hdr_record(&t->ival, lat, 1);
        if ((uint64_t)lat > t->ival_max_ns)
            t->ival_max_ns = (uint64_t)lat;
        if (!c->warm) {
            hdr_record(group_hist(t, (enum run_group)o), lat, 1);
            hdr_record(&t->service, (int64_t)(done_ns - c->sent_ns), 1);
            if (c->first_byte_ns)
                hdr_record(&t->ttfb, (int64_t)(c->first_byte_ns - c->sent_ns), 1);
            if (c->resp.nst)
                record_server_timing(t, &c->resp);
        }
    }
    log_record(w, t, c, c->planned_ns, c->warm, o, done_ns);
    count_events(w, t, c, c->planned_ns, o, done_ns);
}

/* The request on c ends with outcome o. The connection stays open (IDLE) only when keep is
 * true; returns c when it does, NULL when it was closed. Dispatches nothing. */
static struct conn *complete(struct worker *w, struct conn *c, enum reqlog_outcome o, bool keep, uint64_t done_ns)
{
    record(w, c, o, done_ns);
    fifo_remove(w, c);
    c->has_req = false;
    w->inflight--;
    if (!keep) {
        conn_close(w, c);
        return NULL;
    }
    c->state = CONN_IDLE;
    return c;
}

/* ------------------------------------------------------------------ sending */

/* Write (the rest of) the request. Returns 0 while the request is in flight (written, or the
 * rest waits for EPOLLOUT), or the send's -errno: the caller fails the request. */
static int conn_write(struct worker *w, struct conn *c)
{
    const struct engine_target *et = c->t->et;
    while (c->write_off < et->req_len) {
        ssize_t n = send(c->io.fd, et->req + c->write_off, et->req_len - c->write_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->write_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->want_out) {
                loop_io_mod(&w->loop, &c->io, EPOLLIN | EPOLLOUT);
                c->want_out = true;
            }
            return 0;
        }
        return n < 0 ? -errno : -EPIPE;
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
    if (sent_ns <= e->window_end_ns + e->lag_limit_ns)
        rc->sent_on_time++;
    if (!warm)
        hdr_record(&t->lag, (int64_t)(sent_ns - planned_ns), 1);
    w->ic.sent++;
}

/* Begin a request on c (IDLE or CONNECTING without a request). */
static void req_begin(struct worker *w, struct conn *c, uint64_t planned_ns, bool warm, uint64_t sent_ns)
{
    struct target_rt *t = c->t;
    c->has_req = true;
    c->warm = warm;
    c->planned_ns = planned_ns;
    c->sent_ns = sent_ns;
    c->first_byte_ns = 0;
    c->connect_ns = 0;
    c->write_off = 0;
    c->close_after = false;
    c->reused = c->nreq++ > 0;
    c->retried = false;
    c->tcause = RUN_TC_OTHER;
    http_response_init(&c->resp, &t->et->matchers, t->et->head);
    count_sent(w, t, planned_ns, warm, sent_ns);
    w->inflight++;
    fifo_push(w, c);
}

/* ------------------------------------------------------------------ transport failures */

static enum run_transport_cause connect_cause(int err)
{
    return err == -ECONNREFUSED ? RUN_TC_REFUSED : RUN_TC_CONNECT;
}

/* The cause of a failed read or write (-errno, or 0 for a read of end-of-file) on c. Before
 * any byte of the response, on a reused connection, whatever ended it is the server's close of
 * a connection it thought idle: stale. */
static enum run_transport_cause io_cause(const struct conn *c, int err)
{
    bool reset = err == -ECONNRESET || err == -EPIPE;
    if ((reset || err == 0) && c->reused && !c->first_byte_ns)
        return RUN_TC_STALE;
    if (reset)
        return RUN_TC_RESET;
    if (err == 0)
        return c->first_byte_ns ? RUN_TC_CLOSED_MID : RUN_TC_CLOSED_BEFORE;
    return RUN_TC_OTHER;
}

/* A request that failed in transport before it had a connection of its own (its connect
 * failed at once, or the connect opened for the queue it waited in failed). It was attempted:
 * counted as sent at sent_ns unless `counted` (a --retry-stale request already is), and
 * accounted at once. */
static void fail_unconnected(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm, uint64_t sent_ns,
                             enum run_transport_cause cause, bool counted)
{
    struct conn tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.t = t;
    tmp.id = w->conn_seq++ * w->e->nworkers + w->index;
    tmp.io.fd = -1;
    tmp.state = CONN_BUSY;
    tmp.planned_ns = planned_ns;
    tmp.sent_ns = sent_ns;
    tmp.warm = warm;
    tmp.tcause = (uint8_t)cause;
    if (!counted)
        count_sent(w, t, planned_ns, warm, sent_ns);
    record(w, &tmp, OUTCOME_TRANSPORT, clock_now_ns());
}

static bool may_retry(const struct worker *w, const struct conn *c, enum run_transport_cause cause)
{
    return cause == RUN_TC_STALE && w->e->cfg->retry_stale && !c->retried;
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
    struct target_rt *t = c->t;
    struct client *cl = c->client;
    uint64_t planned = c->planned_ns, sent = c->sent_ns;
    bool warm = c->warm;
    fifo_remove(w, c);
    conn_close(w, c);
    counts_of(t, warm)->retries++;
    struct conn *n;
    int r = conn_open(w, t, &n);
    if (r) {
        if (cl)
            cl->conn = NULL;
        w->inflight--;
        fail_unconnected(w, t, planned, warm, sent, connect_cause(r), true);
        return false;
    }
    n->client = cl;
    if (cl)
        cl->conn = n;
    n->has_req = true;
    n->warm = warm;
    n->planned_ns = planned;
    n->sent_ns = sent;
    n->first_byte_ns = 0;
    n->connect_ns = 0;
    n->write_off = 0;
    n->nreq = 1;
    n->reused = false;
    n->retried = true;
    n->tcause = RUN_TC_OTHER;
    http_response_init(&n->resp, &t->et->matchers, t->et->head);
    fifo_push(w, n);
    return true;
}

/* Send a planned request: on c when given (IDLE), else on a new connection. Returns true when
 * the request is in flight, false when it already failed (accounted, connection gone). */
static bool dispatch(struct worker *w, struct target_rt *t, struct client *cl, struct conn *c, uint64_t planned_ns,
                     bool warm)
{
    uint64_t now = clock_now_ns();
    if (c) {
        c->state = CONN_BUSY;
        req_begin(w, c, planned_ns, warm, now);
        int err = conn_write(w, c);
        if (!err)
            return true;
        /* a reused connection the server closed while it was idle fails here when the
         * close (RST) came first */
        enum run_transport_cause cause = io_cause(c, err);
        if (may_retry(w, c, cause))
            return retry_stale(w, c);
        c->tcause = (uint8_t)cause;
        complete(w, c, OUTCOME_TRANSPORT, false, clock_now_ns());
        return false;
    }
    int r = conn_open(w, t, &c);
    if (r) {
        /* The connect failed at once (refused on loopback, out of descriptors): the request
         * was attempted and failed in transport. It has no connection, so account it here. */
        fail_unconnected(w, t, planned_ns, warm, now, connect_cause(r), false);
        return false;
    }
    c->client = cl;
    if (cl)
        cl->conn = c;
    req_begin(w, c, planned_ns, warm, c->connect_start_ns);
    return true;
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

/* Make room in a full pool by closing an idle connection of another target. */
static bool steal_idle(struct worker *w, struct target_rt *except)
{
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *o = &w->t[i];
        if (o == except || !o->idle)
            continue;
        struct conn *c = o->idle;
        o->idle = c->next;
        conn_close(w, c);
        return true;
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

/* A queued request whose connection attempt failed (err: the connect's -errno): it was
 * attempted (sent) and failed in transport, like a request whose own connect failed. */
static void fail_queued(struct worker *w, struct target_rt *t, uint64_t attempt_ns, int err)
{
    uint64_t planned = queue_pop(t);
    w->queued--;
    fail_unconnected(w, t, planned, planned < w->e->warmup_end_ns, attempt_ns, connect_cause(err), false);
}

/* Open connections (not bound to a request) for the queued requests: each queued request has
 * at most one connect in progress for it; whichever connection comes free first serves the
 * head of the queue. */
static void grow(struct worker *w, struct target_rt *t)
{
    while (t->qlen > t->connecting_unbound && can_open(w, t)) {
        struct conn *c;
        uint64_t now = clock_now_ns();
        int r = conn_open(w, t, &c);
        if (r == 0) {
            t->connecting_unbound++;
            continue;
        }
        fail_queued(w, t, now, r);
    }
}

/* A connection of the open-loop pool came free (c, IDLE) or went away (NULL): serve the head
 * of the queue, else park it; then make sure the queue has connects in progress. */
static void pool_refill(struct worker *w, struct target_rt *t, struct conn *c)
{
    if (c && t->qlen) {
        uint64_t planned = queue_pop(t);
        w->queued--;
        /* in flight on c, or failed at once with c gone: either way c is not idle */
        dispatch(w, t, NULL, c, planned, planned < w->e->warmup_end_ns);
        c = NULL;
    }
    if (c) {
        c->next = t->idle;
        t->idle = c;
        return;
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
    if (!t->qlen) {
        if (t->idle) {
            struct conn *c = t->idle;
            t->idle = c->next;
            dispatch(w, t, NULL, c, planned_ns, warm);
            return;
        }
        if (can_open(w, t)) {
            dispatch(w, t, NULL, NULL, planned_ns, warm);
            return;
        }
    }
    /* --when-busy drop drops only when the pool is exhausted; a connect limit or a queue
     * already waiting means a connection is on its way */
    bool exhausted = w->nopen >= w->pool_cap && !t->idle;
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

static _Thread_local bool in_client_next;

static void client_next(struct client *cl)
{
    struct worker *w = cl->w;
    struct target_rt *t = cl->t;
    if (cl->done)
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
    in_client_next = true;
    uint64_t planned = clock_now_ns();
    bool warm = planned < w->e->warmup_end_ns;
    if (t->budget != UINT64_MAX)
        t->budget--;
    counts_of(t, warm)->planned++;
    w->ic.planned++;
    struct conn *c = cl->conn;
    bool ok = true;
    if (c && c->state == CONN_IDLE) {
        ok = dispatch(w, t, cl, c, planned, warm);
    } else if (c && c->state == CONN_CONNECTING && !c->has_req) {
        /* the connect started before this request: T1 is now; the write follows the connect */
        req_begin(w, c, planned, warm, planned);
    } else {
        cl->conn = NULL;
        ok = dispatch(w, t, cl, NULL, planned, warm);
    }
    if (!ok) /* failed at once: the next request comes from the loop (see above) */
        after_request(w, t, cl, NULL);
    in_client_next = false;
}

/* ------------------------------------------------------------------ after a request */

static void after_request(struct worker *w, struct target_rt *t, struct client *cl, struct conn *alive)
{
    if (cl) {
        cl->conn = alive;
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

static void finish_request(struct worker *w, struct conn *c, enum reqlog_outcome o, bool keep)
{
    struct target_rt *t = c->t;
    struct client *cl = c->client;
    uint64_t now = clock_now_ns();
    struct conn *alive = complete(w, c, o, keep, now);
    after_request(w, t, cl, alive);
    maybe_finish(w);
}

/* The request on c failed in transport (cause): retried once when --retry-stale applies,
 * else finished. */
static void fail_transport(struct worker *w, struct conn *c, enum run_transport_cause cause)
{
    if (may_retry(w, c, cause)) {
        struct target_rt *t = c->t;
        struct client *cl = c->client;
        if (!retry_stale(w, c)) {
            after_request(w, t, cl, NULL);
            maybe_finish(w);
        }
        return;
    }
    c->tcause = (uint8_t)cause;
    finish_request(w, c, OUTCOME_TRANSPORT, false);
}

/* A connection without a request closed or failed (err: the connect's -errno while it was
 * connecting, else 0). */
static void conn_failed(struct worker *w, struct conn *c, int err)
{
    /* a connection without a request closed or failed: the pool (or the client) needs a
     * new one only when there is work for it */
    struct target_rt *t = c->t;
    struct client *cl = c->client;
    bool was_connecting = c->state == CONN_CONNECTING;
    uint64_t attempt = c->connect_start_ns;
    conn_close(w, c);
    if (cl) {
        cl->conn = NULL;
    } else {
        /* a failed connect opened for the queue fails the request at its head (one attempt
         * per request), or a refusing server would be retried forever */
        if (was_connecting && t->qlen)
            fail_queued(w, t, attempt, err);
        pool_refill(w, t, NULL);
    }
    maybe_finish(w);
}

/* Read and parse what arrived for the request on c. Bytes are parsed from the thread's one
 * buffer and never kept, so a body without end costs no memory; at most WORKER_READS buffers
 * per call, so a peer that sends faster than we parse cannot keep the loop from its timers
 * (the request's timeout among them): the rest waits for the next turn (epoll is
 * level-triggered). */
static void conn_read(struct worker *w, struct conn *c)
{
    for (int reads = 0; reads < WORKER_READS;) {
        ssize_t n = read(c->io.fd, w->rbuf, WORKER_RBUF);
        if (n > 0) {
            if (!c->first_byte_ns)
                c->first_byte_ns = clock_now_ns();
            size_t used = 0;
            enum http_feed f = http_response_feed(&c->resp, w->rbuf, (size_t)n, &used);
            if (f == HTTP_FEED_DONE) {
                if (used < (size_t)n) {
                    /* bytes after the response we asked for: the connection is out of step */
                    c->t->counts[0].conns_unsolicited++;
                    c->close_after = true;
                }
                /* a response before the whole request was written leaves the connection out
                 * of step (the rest of the request would be read as the next one) */
                bool keep =
                    c->resp.keep_alive && !c->close_after && w->e->cfg->keepalive && c->write_off == c->t->et->req_len;
                finish_request(w, c, classify(c->t->et, &c->resp), keep);
                return;
            }
            if (f == HTTP_FEED_ERROR) {
                finish_request(w, c, OUTCOME_INVALID, false);
                return;
            }
            if ((size_t)n < WORKER_RBUF)
                return;
            reads++;
            continue;
        }
        if (n == 0) {
            if (http_response_eof(&c->resp) == HTTP_FEED_DONE) {
                finish_request(w, c, classify(c->t->et, &c->resp), false);
            } else {
                c->t->counts[0].conns_closed_by_peer++;
                fail_transport(w, c, io_cause(c, 0));
            }
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        fail_transport(w, c, io_cause(c, -errno));
        return;
    }
}

static void on_connected(struct worker *w, struct conn *c)
{
    leave_connecting(w, c);
    uint64_t now = clock_now_ns();
    uint64_t took = now - c->connect_start_ns;
    if (w->e->cfg->warmup_ns == 0 || c->connect_start_ns >= w->e->warmup_end_ns)
        hdr_record(&c->t->connect, (int64_t)took, 1);
    if (c->has_req) {
        c->connect_ns = took;
        c->state = CONN_BUSY;
        int err = conn_write(w, c);
        if (err)
            fail_transport(w, c, io_cause(c, err));
        return;
    }
    loop_io_mod(&w->loop, &c->io, EPOLLIN);
    c->want_out = false;
    c->state = CONN_IDLE;
    if (!c->client)
        pool_refill(w, c->t, c);
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
            if (c->has_req)
                fail_transport(w, c, connect_cause(r));
            else
                conn_failed(w, c, r);
            return;
        }
        on_connected(w, c);
        return;
    }
    case CONN_IDLE: {
        /* nothing is expected on an idle connection: a close, or bytes nobody asked for */
        char b[512];
        ssize_t n = read(c->io.fd, b, sizeof b);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n > 0)
            c->t->counts[0].conns_unsolicited++;
        else
            c->t->counts[0].conns_closed_by_peer++;
        /* unlink from the idle stack before closing */
        if (!c->client) {
            struct conn **pp = &c->t->idle;
            while (*pp && *pp != c)
                pp = &(*pp)->next;
            if (*pp)
                *pp = c->next;
        }
        conn_failed(w, c, 0);
        return;
    }
    case CONN_BUSY:
        if ((events & EPOLLOUT) && c->want_out && c->write_off < c->t->et->req_len) {
            int err = conn_write(w, c);
            if (err) {
                fail_transport(w, c, io_cause(c, err));
                return;
            }
        }
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            conn_read(w, c);
        return;
    }
}

/* ------------------------------------------------------------------ timers and phases */

static void on_timeout(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    uint64_t now = clock_now_ns();
    /* The next request a closed-loop client sends here joins the FIFO's tail: it never delays
     * an older deadline, and the timer is re-armed for whatever is the head at the end. */
    while (w->fifo_head && deadline_of(w, w->fifo_head) <= now) {
        struct conn *c = w->fifo_head;
        struct target_rt *t = c->t;
        struct client *cl = c->client;
        complete(w, c, OUTCOME_TIMEOUT, false, now);
        after_request(w, t, cl, NULL);
    }
    if (w->fifo_head)
        loop_timer_arm(&w->loop, &w->timeout_timer, deadline_of(w, w->fifo_head));
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
        complete(w, w->fifo_head, OUTCOME_CANCELLED, false, now);
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
    w->finished = true;
    w->finish_ns = clock_now_ns();
    /* close what is left: idle and preconnected connections */
    for (size_t k = 0; k < w->nchunks; k++)
        for (size_t i = 0; i < CONN_CHUNK; i++) {
            struct conn *c = &w->chunks[k][i];
            if (c->state != CONN_FREE)
                conn_close(w, c);
        }
    for (size_t i = 0; i < w->nt; i++)
        w->t[i].idle = NULL;
    loop_timer_cancel(&w->loop, &w->tick_timer);
    loop_timer_cancel(&w->loop, &w->end_timer);
    loop_timer_cancel(&w->loop, &w->timeout_timer);
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
        for (size_t i = 0; i < w->nclients; i++) {
            struct conn *c;
            if (conn_open(w, w->clients[i].t, &c) == 0) {
                c->client = &w->clients[i];
                w->clients[i].conn = c;
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
            if (conn_open(w, t, &c))
                break;
            t->connecting_unbound++;
        }
    }
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
        hdr_init(&t->latency[RUN_GROUP_OK], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->service, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->ttfb, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->lag, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->connect, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        hdr_init(&t->ival, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    }
    uint32_t T = e->nworkers;
    if (e->cfg->open_loop) {
        w->pool_cap = e->pool_cap / T + (index < e->pool_cap % T ? 1 : 0);
        if (w->pool_cap == 0)
            w->pool_cap = 1;
    } else {
        /* clients: each target's clients spread over the threads; so are --requests */
        for (size_t i = 0; i < e->nt; i++) {
            const struct engine_target *et = &e->targets[i];
            uint32_t mine = et->clients / T + (index < et->clients % T ? 1 : 0);
            w->nclients += mine;
            struct target_rt *t = &w->t[i];
            /* --requests: split over the threads that have clients for this target */
            uint32_t teff = et->clients < T ? et->clients : T;
            if (et->limit == UINT64_MAX)
                t->budget = UINT64_MAX;
            else if (index < teff)
                t->budget = et->limit / teff + (index < et->limit % teff ? 1 : 0);
            else
                t->budget = 0;
        }
        w->clients = xcalloc(w->nclients ? w->nclients : 1, sizeof *w->clients);
        size_t k = 0;
        for (size_t i = 0; i < e->nt; i++) {
            const struct engine_target *et = &e->targets[i];
            uint32_t mine = et->clients / T + (index < et->clients % T ? 1 : 0);
            for (uint32_t j = 0; j < mine; j++, k++) {
                struct client *cl = &w->clients[k];
                cl->w = w;
                cl->t = &w->t[i];
                loop_timer_init(&cl->think, on_think, cl);
            }
        }
    }
    loop_timer_init(&w->start_timer, on_start, w);
    loop_timer_init(&w->sched_timer, on_sched, w);
    loop_timer_init(&w->tick_timer, on_tick, w);
    loop_timer_init(&w->end_timer, on_end, w);
    loop_timer_init(&w->timeout_timer, on_timeout, w);
    w->planning = true;
    return 0;
}

void worker_release(struct worker *w)
{
    for (size_t k = 0; k < w->nchunks; k++) {
        for (size_t i = 0; i < CONN_CHUNK; i++)
            if (w->chunks[k][i].state != CONN_FREE && w->chunks[k][i].io.fd >= 0)
                close(w->chunks[k][i].io.fd);
        free(w->chunks[k]);
    }
    free(w->chunks);
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        for (int g = 0; g < RUN_GROUP_COUNT; g++)
            if (t->latency[g].counts)
                hdr_release(&t->latency[g]);
        hdr_release(&t->service);
        hdr_release(&t->ttfb);
        hdr_release(&t->lag);
        hdr_release(&t->connect);
        hdr_release(&t->ival);
        for (size_t j = 0; j < t->nst; j++)
            hdr_release(&t->st[j].dur);
        free(t->q);
    }
    hdr_release(&w->late);
    free(w->tk);
    free(w->t);
    free(w->clients);
    free(w->rbuf);
    loop_release(&w->loop);
}

void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct engine *e = w->e;
    /* timer slack 1 ns: the kernel would otherwise coalesce our wake-ups by 50 µs */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    if (e->log)
        w->chunk = outlog_take(e->log, &w->log_slowed);
    preconnect(w);
    if (!engine_start_gate(e))
        goto out; /* the engine could not start every thread: no run */
    if (e->cfg->open_loop) {
        for (size_t i = 0; i < w->nt; i++) {
            struct target_rt *t = &w->t[i];
            const struct engine_target *et = t->et;
            uint64_t seed = e->cfg->seed ^ (0x9e3779b97f4a7c15ULL * (i + 1));
            sched_init(&t->sched, e->cfg->arrivals == RUN_ARRIVALS_POISSON, et->rate_from, et->rate_to,
                       (double)e->cfg->duration_ns / 1e9, e->t0_ns, e->plan_end_ns, et->limit, e->nworkers, w->index,
                       seed);
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
        int r = loop_run_once(&w->loop, wait_ns);
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
    return NULL;
}
