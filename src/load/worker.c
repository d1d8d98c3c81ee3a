/* One load thread: its own event loop, schedule share, connections, counters and histograms.
 * Nothing here takes a lock or touches another thread's memory on the request path; once a
 * second the interval is handed to the engine (engine_publish). This file holds what every
 * request passes through whatever its loop and protocol: dispatch, the timeout FIFO, the due
 * list of deferred connection work, the phases (start, tick, end, drain, finish) and the
 * thread itself; the rest of the request path is described in load/worker.h. */
#include "load/worker.h"

#include "core/clock.h"
#include "core/err.h"
#include "load/uring.h"
#include "record/stages.h"

#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* ------------------------------------------------------------------ requests */

struct req *req_alloc_chunk(struct worker *w)
{
    /* no allocation per request once the pool holds the most requests ever in flight at once */
    struct req *chunk = xcalloc(REQ_CHUNK, sizeof *chunk);
    w->rchunks = xrealloc(w->rchunks, (w->nrchunks + 1) * sizeof *w->rchunks);
    w->rchunks[w->nrchunks++] = chunk;
    for (size_t i = 1; i < REQ_CHUNK; i++) {
        chunk[i].next = w->req_free;
        w->req_free = &chunk[i];
    }
    return &chunk[0];
}

void req_release(struct worker *w, struct req *r)
{
    if (r->var) {
        variant_put(r->t, r->var);
        r->var = NULL;
    }
    r->c = NULL;
    r->pending = false;
    r->next = w->req_free;
    w->req_free = r;
}

void req_init(struct req *r, struct target_rt *t, struct client *cl, struct variant *v, uint64_t planned_ns, bool warm,
              uint64_t sent_ns)
{
    r->c = NULL;
    r->t = t;
    r->client = cl;
    r->var = v;
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
    http_response_init(&r->resp, &t->et->matchers, v ? v->head : t->et->head);
    r->resp.ev.mode = t->et->stream_mode;
    req_gaps_reset(r);
}

void req_gaps_reset(struct req *r)
{
    r->ngaps = 0;
    if (r->gaps_cap > REQ_GAPS_KEEP) { /* one long stream does not keep its memory in the pool */
        free(r->gaps);
        r->gaps = NULL;
        r->gaps_cap = 0;
    }
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

void req_sent_at(struct worker *w, struct req *r, uint64_t sent_ns)
{
    fifo_remove(w, r);
    r->sent_ns = sent_ns;
    fifo_push(w, r); /* at the tail: nothing in flight was sent later */
}

void req_replace(struct worker *w, struct req *r, struct req *n)
{
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
}

struct req *req_begin(struct worker *w, struct target_rt *t, struct client *cl, uint64_t planned_ns, bool warm,
                      uint64_t sent_ns)
{
    struct req *r = req_alloc(w);
    /* a request source's next request (its ring was checked: vring_ready) */
    req_init(r, t, cl, t->vr.slot ? vring_pop(w, t) : NULL, planned_ns, warm, sent_ns);
    account_sent(w, t, planned_ns, warm, sent_ns);
    w->inflight++;
    fifo_push(w, r);
    return r;
}

void req_complete(struct worker *w, struct req *r, enum reqlog_outcome o, uint64_t done_ns)
{
    account_record(w, r, o, done_ns);
    req_discard(w, r);
}

void req_discard(struct worker *w, struct req *r)
{
    fifo_remove(w, r);
    w->inflight--;
    req_release(w, r);
}

/* ------------------------------------------------------------------ pending requests */

void pend_push(struct target_rt *t, struct req *r)
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

void pend_remove(struct target_rt *t, struct req *r)
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

void pend_send(struct worker *w, struct conn *c)
{
    struct target_rt *t = c->t;
    struct req *r = t->pend_head;
    pend_remove(t, r);
    struct client *cl = r->client;
    if (!conn_send(w, c, r))
        worker_after_request(w, t, cl, NULL);
}

/* ------------------------------------------------------------------ dispatch */

bool worker_dispatch(struct worker *w, struct target_rt *t, struct client *cl, struct conn *c, uint64_t planned_ns,
                     bool warm)
{
    uint64_t now = clock_now_ns();
    if (c)
        return conn_send(w, c, req_begin(w, t, cl, planned_ns, warm, now));
    int r = conn_open(w, t, &c, false);
    if (r) {
        /* The connect failed at once (refused on loopback, out of descriptors): the request
         * was attempted and failed in transport. It has no connection, so account it here. */
        if (t->vr.slot) { /* the request it would have sent is spent with it */
            struct variant *v = vring_pop(w, t);
            if (v)
                variant_put(t, v);
        }
        account_unconnected(w, t, planned_ns, warm, now, account_connect_cause(r), false);
        return false;
    }
    if (cl) {
        c->group = cl->g;
        cl->g->conn = c;
    }
    conn_bind(w, c, req_begin(w, t, cl, planned_ns, warm, c->connect_start_ns));
    return true;
}

void worker_after_request(struct worker *w, struct target_rt *t, struct client *cl, struct conn *alive)
{
    if (cl) {
        /* those waiting for a stream of this connection go first, then this client */
        if (alive && alive->group && alive->group->wait_head)
            group_refill(w, alive);
        if (w->e->cfg->plan.think_ns && w->planning)
            loop_timer_arm(&w->loop, &cl->think, clock_now_ns() + w->e->cfg->plan.think_ns);
        else
            client_next(cl);
    } else {
        pool_refill(w, t, alive);
    }
}

/* ------------------------------------------------------------------ the due list */

/* Work a protocol cannot do inside the callback that asks for it (a flush or a close of an
 * HTTP/2 session inside a call of that session), as redis defers its writes to before the loop
 * sleeps: the connection goes on this list once, and worker_settle runs each one's settle
 * when the loop's callback has returned. A connection closed meanwhile has due == 0 and is
 * skipped. */
void worker_due(struct worker *w, struct conn *c, uint8_t what)
{
    c->due |= what;
    if (c->due & DUE_LISTED)
        return;
    c->due |= DUE_LISTED;
    c->dnext = NULL;
    if (w->due_tail)
        w->due_tail->dnext = c;
    else
        w->due_head = c;
    w->due_tail = c;
}

void worker_settle(struct worker *w)
{
    while (w->due_head) {
        struct conn *c = w->due_head;
        w->due_head = c->dnext;
        if (!w->due_head)
            w->due_tail = NULL;
        if (!(c->due & DUE_LISTED))
            continue;
        /* still listed while it settles: what it asks for meanwhile is its settle's to do */
        c->proto->settle(w, c);
        if (c->state == CONN_FREE)
            continue;
        c->due &= (uint8_t)~DUE_LISTED;
        if (c->due)
            worker_due(w, c, 0);
    }
}

static void settle_after(void *data)
{
    struct worker *w = data;
    if (w->due_head)
        worker_settle(w);
    if (w->vneed) /* after the sends went out: prepare the next ones */
        vring_refill(w);
}

/* ------------------------------------------------------------------ timeouts */

/* The request r ends without its response: its timeout passed (end REQ_END_TIMEOUT), or the
 * drain is over (REQ_END_CANCEL). A protocol that can end one request alone does (HTTP/2:
 * RST_STREAM CANCEL, its connection goes on); otherwise (HTTP/1.1, or a connection still
 * connecting for the request) the connection is closed, since the response may still come. */
static void expire(struct worker *w, struct req *r, enum req_end end, uint64_t now)
{
    struct target_rt *t = r->t;
    struct client *cl = r->client;
    struct conn *c = r->c;
    enum reqlog_outcome o = end == REQ_END_TIMEOUT ? OUTCOME_TIMEOUT : OUTCOME_CANCELLED;
    if (r->pending) {
        pend_remove(t, r);
        req_complete(w, r, o, now);
        if (end == REQ_END_TIMEOUT)
            worker_after_request(w, t, cl, NULL);
        return;
    }
    if (c->proto && c->proto->cancel) {
        r->end = (uint8_t)end;
        c->proto->cancel(w, c, r); /* its protocol accounts it */
        return;
    }
    conn_drop(w, c, o, now);
    if (end == REQ_END_TIMEOUT)
        worker_after_request(w, t, cl, NULL);
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
    worker_maybe_finish(w);
}

/* ------------------------------------------------------------------ phases */

static void publish_interval(struct worker *w, uint64_t end_ns)
{
    engine_publish(w, end_ns);
    for (size_t i = 0; i < w->nt; i++) {
        hdr_reset(&w->t[i].ival);
        w->t[i].ival_max_ns = 0;
        record_stream_reset(&w->t[i].ival_stream);
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

void worker_tick_due(struct worker *w, uint64_t now)
{
    if (loop_timer_armed(&w->tick_timer) && w->tick_timer.deadline_ns <= now) {
        loop_timer_cancel(&w->loop, &w->tick_timer);
        on_tick(&w->loop, &w->tick_timer);
    }
}

/* Cancel whatever is still in flight and drop whatever still waits, then stop. */
static void finish_now(struct worker *w)
{
    uint64_t now = clock_now_ns();
    while (w->fifo_head)
        expire(w, w->fifo_head, REQ_END_CANCEL, now);
    pool_drop_queued(w);
    worker_maybe_finish(w);
}

static void on_end(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    if (w->planning) /* closed loop: the duration is over */
        worker_end_planning(w, clock_now_ns());
    else /* the drain is over */
        finish_now(w);
}

void worker_end_planning(struct worker *w, uint64_t at_ns)
{
    if (!w->planning)
        return;
    w->planning = false;
    w->plan_end_ns = at_ns;
    loop_timer_cancel(&w->loop, &w->sched_timer);
    closed_stop(w);
    /* a duration run's drain starts at the end of the plan, however late the generator
     * finished planning: the run ends by --duration + --drain */
    uint64_t from = w->e->plan_end_ns != UINT64_MAX && at_ns > w->e->plan_end_ns ? w->e->plan_end_ns : at_ns;
    w->drain_deadline_ns = from + w->e->drain_ns;
    loop_timer_arm(&w->loop, &w->end_timer, w->drain_deadline_ns);
    worker_maybe_finish(w);
}

void worker_maybe_finish(struct worker *w)
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
    /* close what is left: idle and preconnected connections (an HTTP/2 session closes when
     * the current callback has returned: worker_settle) */
    for (size_t k = 0; k < w->nchunks; k++)
        for (size_t i = 0; i < CONN_CHUNK; i++) {
            struct conn *c = &w->chunks[k][i];
            if (c->state != CONN_FREE)
                conn_close_soon(w, c);
        }
    for (size_t i = 0; i < w->nt; i++)
        w->t[i].avail = NULL;
    loop_timer_cancel(&w->loop, &w->tick_timer);
    loop_timer_cancel(&w->loop, &w->end_timer);
    loop_timer_cancel(&w->loop, &w->timeout_timer);
    loop_timer_cancel(&w->loop, &w->conn_timer);
    loop_timer_cancel(&w->loop, &w->rate_timer);
    publish_interval(w, w->finish_ns);
}

static void on_start(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    w->started = true;
    if (w->e->cfg->plan.open_loop)
        open_start(w);
    else
        closed_start(w);
}

/* ------------------------------------------------------------------ thread */

int worker_init(struct worker *w, struct engine *e, uint32_t index)
{
    memset(w, 0, sizeof *w);
    w->e = e;
    w->index = index;
    int r = loop_init(&w->loop);
    if (r)
        return r;
    loop_set_after(&w->loop, settle_after, w);
    w->rbuf = xmalloc(WORKER_RBUF);
    w->nt = e->nt;
    w->t = xcalloc(e->nt, sizeof *w->t);
    w->nstg = e->cfg->plan.nstages;
    w->stg = record_stages_new(e->cfg->plan.stages, w->nstg);
    hdr_init(&w->late, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    if (e->nent) /* calloc: pages of entries never drawn stay untouched */
        w->ent = xcalloc(e->nent, sizeof *w->ent);
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
        if (t->et->target->source)
            vring_init(w, t);
    }
    uint32_t T = e->nworkers;
    if (e->cfg->plan.open_loop) {
        w->pool_cap = e->pool_cap / T + (index < e->pool_cap % T ? 1 : 0);
        if (w->pool_cap == 0)
            w->pool_cap = 1;
    } else {
        closed_init(w);
    }
    loop_timer_init(&w->start_timer, on_start, w);
    loop_timer_init(&w->sched_timer, open_on_sched, w);
    loop_timer_init(&w->tick_timer, on_tick, w);
    loop_timer_init(&w->end_timer, on_end, w);
    loop_timer_init(&w->timeout_timer, on_timeout, w);
    loop_timer_init(&w->conn_timer, conn_on_timeout, w);
    loop_timer_init(&w->rate_timer, route_on_timer, w);
    w->planning = true;
    return 0;
}

void worker_release(struct worker *w)
{
    for (size_t k = 0; k < w->nchunks; k++) {
        for (size_t i = 0; i < CONN_CHUNK; i++) {
            struct conn *c = &w->chunks[k][i];
            free(c->pxbuf); /* --proxy's absolute-form requests, kept across the connection's lives */
            if (c->state == CONN_FREE)
                continue;
            if (c->proto && c->proto->release)
                c->proto->release(c);
            if (c->ops->release)
                c->ops->release(c);
            if (c->io.fd >= 0)
                close(c->io.fd);
        }
        free(w->chunks[k]);
    }
    free(w->chunks);
    for (size_t k = 0; k < w->nrchunks; k++) {
        for (size_t i = 0; i < REQ_CHUNK; i++) {
            if (w->rchunks[k][i].var) /* a thread that ended early: its requests' variants */
                variant_put(w->rchunks[k][i].t, w->rchunks[k][i].var);
            free(w->rchunks[k][i].gaps);
        }
        free(w->rchunks[k]);
    }
    free(w->rchunks);
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        for (int g = 0; g < RUN_GROUP_COUNT; g++)
            if (t->latency[g].counts)
                hdr_release(&t->latency[g]);
        hdr_release(&t->service);
        hdr_release(&t->ttfb);
        record_stream_release(&t->stream);
        record_stream_release(&t->ival_stream);
        hdr_release(&t->lag);
        hdr_release(&t->connect);
        hdr_release(&t->tls);
        hdr_release(&t->ival);
        for (size_t j = 0; j < t->nst; j++)
            hdr_release(&t->st[j].dur);
        tls_session_cache_release(&t->tls_cache);
        h3_session_free(t->h3_session);
        vring_release(t);
        free(t->q);
    }
    hdr_release(&w->late);
    record_stages_free(w->stg, w->nstg);
    free(w->tk);
    free(w->ent);
    free(w->t);
    free(w->clients);
    free(w->groups);
    free(w->rbuf);
    uring_release(w);
    loop_release(&w->loop);
}

/* The open loop's schedules, once t0 is known, and its slack: --timer-slack D from the start,
 * auto none until a service time was measured (openloop.c open_on_sched). The kernel's timer
 * slack stays 1 ns: the schedule timer is armed for the first due send + the slack, so the
 * one wake at that time sends every request planned up to it. */
static void sched_start(struct worker *w)
{
    const struct engine *e = w->e;
    w->slack_ns = w->slack_max_ns = e->timer_slack_auto ? 0 : e->timer_slack_ns;
    for (size_t i = 0; i < w->nt; i++)
        plan_sched_init(&w->t[i].sched, &e->cfg->plan, w->t[i].et->share, i, e->t0_ns, e->plan_end_ns, e->nworkers,
                        w->index);
}

/* A system error of the loop (-errno) ends the thread early: what is in flight is cancelled. */
static void fail_thread(struct worker *w, int err)
{
    w->fatal = err;
    finish_now(w);
    if (!w->finished) {
        w->planning = false;
        w->inflight = w->queued = 0;
        w->started = true;
        worker_maybe_finish(w);
    }
    worker_settle(w);
}

/* The run's stop handle changed to lvl (1: drain, 2: cancel) after the start. */
static void on_stop(struct worker *w, int lvl)
{
    const struct engine *e = w->e;
    if (lvl >= 1 && w->planning) {
        /* the window ends where this thread stopped planning */
        uint64_t now = clock_now_ns();
        uint64_t cut = now - e->t0_ns;
        if (cut < w->win_end_ns) {
            w->win_end_ns = cut;
            for (size_t i = 0; i < w->nt; i++)
                w->t[i].ev.window_end_ns = cut;
        }
        worker_end_planning(w, now);
    }
    if (lvl >= 2)
        finish_now(w);
    worker_settle(w);
}

/* Deferred reads: how long this iteration may sleep past arriving responses (0: it wakes for
 * them as usual). Only while the open loop plans, with requests in flight and none waiting
 * for a connection (a response read late holds its connection, and a request queued for one
 * must not wait for the next wake), and before the thread timed a response as events (an
 * event's time is its own arrival: segments read together share the newest one's stamp).
 * The sleep ends at the next timer (the next send, or with a slack the first due send + the
 * slack) when that is at most max(twice the slack, WORKER_HOLD_NS), never more than
 * WORKER_HOLD_MAX_NS, away; a farther timer (a low rate) gets a wait that responses end, as
 * without deferral, since slices of the bound would wake more often than they do. The
 * kernel's receive timestamps keep the responses' times, so the reads' lateness is in no
 * latency, and a send's wake reads the responses that came since the last one: one wake per
 * send instead of one per send and one per response. */
static uint64_t worker_hold(const struct worker *w)
{
    if (!w->defer_reads || w->events_seen || !w->planning || !w->inflight || w->queued)
        return 0;
    uint64_t bound = 2 * w->slack_ns;
    if (bound < WORKER_HOLD_NS)
        bound = WORKER_HOLD_NS;
    if (bound > WORKER_HOLD_MAX_NS)
        bound = WORKER_HOLD_MAX_NS;
    /* a next timer farther than that: the responses wake the thread as usual (sleeping in
     * slices of the bound would wake it more often than they do) */
    uint64_t next = loop_next_deadline(&w->loop), now = clock_now_ns();
    if (next == UINT64_MAX || next > now + bound)
        return 0;
    return next > now ? next - now : 1;
}

/* The thread's loop from the start gate to its finish. */
static void worker_run(struct worker *w)
{
    struct engine *e = w->e;
    if (e->cfg->plan.open_loop)
        sched_start(w);
    loop_timer_arm(&w->loop, &w->start_timer, e->t0_ns);
    loop_timer_arm(&w->loop, &w->tick_timer, e->t0_ns + engine_tick_end(e, 0));
    w->win_end_ns = e->window_end_ns == UINT64_MAX ? UINT64_MAX : e->window_end_ns - e->t0_ns;
    for (size_t i = 0; i < w->nt; i++)
        record_events_init(&w->t[i].ev, e->cfg->plan.warmup_ns, w->win_end_ns);
    int stop_seen = 0;
    while (!w->finished) {
        /* connections opened before t0 complete while we wait for it. With --spin, the
         * last spin_ns before a deadline are spent polling instead of sleeping: a sleep
         * wakes up late by the timer and scheduler latency (tens of µs), a poll does not. */
        uint64_t wait_ns = 200 * NS_PER_MS;
        if (e->spin_ns) {
            uint64_t next = loop_next_deadline(&w->loop), now = clock_now_ns();
            if (next != UINT64_MAX && next <= now + e->spin_ns)
                wait_ns = 0;
        }
        uint64_t hold = e->spin_ns ? 0 : worker_hold(w);
        int r = w->ring ? uring_run_once(w, wait_ns)
                : hold  ? loop_run_once_held(&w->loop, hold < wait_ns ? hold : wait_ns)
                        : loop_run_once(&w->loop, wait_ns);
        if (r < 0) {
            fail_thread(w, r);
            break;
        }
        int lvl = atomic_load(&e->stop->level);
        if (lvl < atomic_load(&e->self_stop)) /* the engine's own early end (engine.c refused_check) */
            lvl = atomic_load(&e->self_stop);
        if (lvl != stop_seen && w->started) {
            stop_seen = lvl;
            on_stop(w, lvl);
        }
    }
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
    /* the loop backend and the cleartext HTTP/1.1 row, chosen once: the ring's, or epoll's */
    w->defer_reads = !w->ring && e->defer_reads;
    w->clear_ops = w->ring ? &conn_ring_ops : w->defer_reads ? &conn_stamped_ops : NULL;
    if (e->cfg->plan.open_loop)
        open_preconnect(w);
    else
        closed_preconnect(w);
    if (engine_start_gate(e)) {                  /* false: the engine could not start every thread, no run */
        w->cpu_mark_ns = engine_thread_cpu_ns(); /* --live's CPU per interval counts from t0 */
        worker_run(w);
    }
    if (w->chunk) {
        outlog_submit(e->log, w->chunk);
        w->chunk = NULL;
    }
    if (e->defer_reads && !w->ring && !w->defer_reads)
        atomic_fetch_add(&e->deferred_off, 1); /* a read without its timestamp: the result says so */
    thread_cpu_since(&cpu0, &e->worker_cpu[w->index]);
    return NULL;
}
