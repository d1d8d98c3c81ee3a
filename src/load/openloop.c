/* The open loop of a load thread: requests leave on the schedule (plan/schedule.c) whether
 * the server keeps up or not. A planned request goes on a connection with room, or opens one,
 * or waits in its target's queue for one (--when-busy), or is dropped; the pool of connections
 * grows on demand up to its cap, taking an idle connection of another target when it is full. */
#include "load/worker.h"

#include "core/clock.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ the queue */

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

void pool_drop_queued(struct worker *w)
{
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        while (t->qlen) {
            uint64_t planned = queue_pop(t);
            w->queued--;
            account_dropped(w, t, planned, planned < w->e->warmup_end_ns);
        }
    }
}

/* ------------------------------------------------------------------ the pool */

/* Make room in a full pool by closing an idle connection of another target (HTTP/1.1 idle, or
 * an HTTP/2 session without an open stream). Such a connection is never inside a call of its
 * session here: callbacks only go on with their own target's requests. */
static bool steal_idle(struct worker *w, struct target_rt *except)
{
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *o = &w->t[i];
        if (o == except)
            continue;
        for (struct conn *c = o->avail; c; c = c->anext)
            if (c->proto->idle(c)) {
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

/* May t be dialled for `waiting` requests? Not while a connection of it reports that its
 * server allows no stream (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS 0, h2.c h2_track_room): a new
 * connection would hear the same, and each would be left open with nothing to carry (a server
 * shedding load drew thousands of connections for 150 requests). After such connections
 * closed, while none of the target's has had room since, the connections that said so and the
 * connects in progress stay fewer than the requests waiting: a server that says 0 and hangs up
 * is dialled at most once per waiting request, not at its own pace. */
static bool may_dial(const struct target_rt *t, size_t waiting)
{
    if (t->h2_noroom)
        return false;
    return !t->h2_noroom_seen || t->h2_noroom_seen + t->connecting_unbound < waiting;
}

/* A queued request whose connection attempt failed (cause: the connect's or the handshake's):
 * it was attempted (sent) and failed in transport, like a request whose own connect failed. A
 * request waiting to be sent again (pending) goes first: it is the older. */
void pool_fail_queued(struct worker *w, struct target_rt *t, uint64_t attempt_ns, enum run_transport_cause cause)
{
    if (t->npend) {
        struct req *r = t->pend_head;
        struct client *cl = r->client;
        pend_remove(t, r);
        r->tcause = (uint8_t)cause;
        req_complete(w, r, OUTCOME_TRANSPORT, clock_now_ns());
        worker_after_request(w, t, cl, NULL);
        return;
    }
    uint64_t planned = queue_pop(t);
    w->queued--;
    account_unconnected(w, t, planned, planned < w->e->warmup_end_ns, attempt_ns, cause, false);
}

/* Each queued request has at most one connect in progress for it (an HTTP/2 connection counts
 * for the streams it is expected to take); whichever connection comes free first serves the
 * head of the queue. */
void pool_grow(struct worker *w, struct target_rt *t)
{
    while (t->qlen + t->npend > t->connecting_unbound * t->per_conn && may_dial(t, t->qlen + t->npend) &&
           can_open(w, t)) {
        struct conn *c;
        uint64_t now = clock_now_ns();
        int r = conn_open(w, t, &c, true);
        if (r)
            pool_fail_queued(w, t, now, account_connect_cause(r));
    }
}

/* Serve the requests to send again, then the head of the queue, while c has room; park it on
 * the available list when room is left; then make sure the queue has connects in progress. */
void pool_refill(struct worker *w, struct target_rt *t, struct conn *c)
{
    if (c && c->state != CONN_FREE) {
        while ((t->npend || t->qlen) && conn_room(w, c)) {
            if (t->npend) {
                pend_send(w, c);
                continue;
            }
            uint64_t planned = queue_pop(t);
            w->queued--;
            /* in flight on c, or failed at once with c gone */
            worker_dispatch(w, t, NULL, c, planned, planned < w->e->warmup_end_ns);
        }
        if (c->state != CONN_FREE && conn_room(w, c) && !w->finished)
            avail_push(t, c);
    }
    pool_grow(w, t);
}

void open_preconnect(struct worker *w)
{
    const struct engine *e = w->e;
    /* about a millisecond's worth of requests per target, so the first sends do not all pay
     * for a connect; the pool grows on demand from there */
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        double per_thread = fmax(t->et->share->rate_from, t->et->share->rate_to);
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

/* ------------------------------------------------------------------ the slack */

uint64_t run_auto_slack_ns(uint64_t service_p50_ns)
{
    uint64_t s = (uint64_t)((double)service_p50_ns * RUN_AUTO_SLACK_SHARE);
    return s < RUN_AUTO_SLACK_MAX_NS ? s : RUN_AUTO_SLACK_MAX_NS;
}

/* --timer-slack auto: the slack from the median service time of this thread's targets (the
 * smallest, so no target's lag exceeds its share), at most every RUN_AUTO_SLACK_EVERY_NS (a
 * percentile walks the histogram); none until a response was timed. */
static void auto_slack(struct worker *w, uint64_t now)
{
    if (!w->e->timer_slack_auto || now < w->slack_next_ns)
        return;
    w->slack_next_ns = now + RUN_AUTO_SLACK_EVERY_NS;
    uint64_t p50 = UINT64_MAX;
    for (size_t i = 0; i < w->nt; i++)
        if (w->t[i].service.total_count) {
            int64_t v = hdr_value_at_percentile(&w->t[i].service, 50);
            if (v >= 0 && (uint64_t)v < p50)
                p50 = (uint64_t)v;
        }
    if (p50 == UINT64_MAX)
        return;
    w->slack_ns = run_auto_slack_ns(p50);
    if (w->slack_ns > w->slack_max_ns)
        w->slack_max_ns = w->slack_ns;
}

/* The schedule timer's callback ran at now for a deadline armed at w->sched_due_ns: fold its
 * lateness into the estimates: the mean and deviation (gains 1/8 and 1/4, RFC 6298's) and the
 * SCHED_EARLY_Q quantile (a step down when a wake beat it, q/(1 - q) of a step up when not:
 * the estimate settles where a share q of the wakes beat it). */
static void sched_lateness(struct worker *w, uint64_t now)
{
    if (!w->sched_due_ns)
        return;
    double late = now > w->sched_due_ns ? (double)(now - w->sched_due_ns) : 0;
    w->sched_due_ns = 0;
    if (w->late_mean_ns == 0 && w->late_dev_ns == 0)
        w->early_ns = late / 2; /* the first wake: a start near the quantile, then the steps */
    else
        w->early_ns +=
            late < w->early_ns ? -SCHED_EARLY_STEP_NS * (1 - SCHED_EARLY_Q) : SCHED_EARLY_STEP_NS * SCHED_EARLY_Q;
    if (w->early_ns < 0)
        w->early_ns = 0;
    if (w->early_ns > (double)SCHED_EARLY_MAX_NS)
        w->early_ns = (double)SCHED_EARLY_MAX_NS;
    if (w->late_mean_ns == 0 && w->late_dev_ns == 0) {
        w->late_mean_ns = late;
        w->late_dev_ns = late / 2;
        return;
    }
    w->late_dev_ns += (fabs(late - w->late_mean_ns) - w->late_dev_ns) / 4;
    w->late_mean_ns += (late - w->late_mean_ns) / 8;
}

/* How much earlier than the first due send + the slack the schedule timer is armed: the
 * callback's usual lateness (mean + 2 deviations), at most half the slack, so the first send
 * of a wake leaves within the slack and no send before its planned time. */
static uint64_t slack_margin(const struct worker *w)
{
    double m = w->late_mean_ns + 2 * w->late_dev_ns;
    double cap = (double)w->slack_ns / 2;
    return (uint64_t)(m < cap ? m : cap);
}

/* The schedule timer's deadline when the next send is planned at next. With a slack: slack_ns
 * after it, less the callback's usual lateness (slack_margin). Without one (or with one below
 * the wake-up latency: --timer-slack auto against a fast server): early_ns before it, so the
 * wake-up the kernel adds to a sleep (tens of µs on a VM) mostly ends near the planned time
 * instead of after it; a next sooner than that is slept to as before. With --spin (never
 * with a slack) the loop polls before deadlines already. */
static uint64_t sched_deadline(struct worker *w, uint64_t next, uint64_t now)
{
    w->early_armed_ns = 0;
    uint64_t e = (uint64_t)w->early_ns;
    if (w->slack_ns > e)
        return next + w->slack_ns - slack_margin(w);
    if (w->e->spin_ns || next - now <= e)
        return next;
    w->early_armed_ns = e;
    return next - e;
}

/* A wake that came before the send planned at next, by at most early (what the timer was
 * armed early by): the clock is polled until then, since no request leaves before its planned
 * time. The estimate aims at a share SCHED_EARLY_Q of such wakes; more come (a quarter at
 * 20,000/s on this VM, by 13 µs on average, with the cap then at 100 µs), as a shorter sleep
 * wakes faster. */
static uint64_t sched_wait_out(uint64_t next, uint64_t now, uint64_t early)
{
    if (next <= now || next - now > early)
        return now;
    while ((now = clock_now_ns()) < next)
        ;
    return now;
}

/* ------------------------------------------------------------------ the schedule */

/* One planned request of the open loop is due now. false: its target's request source has no
 * more (the run was asked to stop): the request is not planned. */
static bool issue(struct worker *w, struct target_rt *t, uint64_t planned_ns, uint64_t now)
{
    if (t->vr.slot && !vring_ready(w, t))
        return false;
    bool warm = planned_ns < w->e->warmup_end_ns;
    counts_of(t, warm)->planned++;
    w->ic.planned++;
    hdr_record(&w->late, (int64_t)(now - planned_ns), 1);
    if (!t->qlen && !t->npend) {
        if (t->avail) {
            worker_dispatch(w, t, NULL, t->avail, planned_ns, warm);
            return true;
        }
        if (may_dial(t, 1) && can_open(w, t)) {
            worker_dispatch(w, t, NULL, NULL, planned_ns, warm);
            return true;
        }
    }
    /* --when-busy drop drops only when the pool is exhausted (every stream of every
     * connection busy, or the server allows none); a connect limit or a queue already waiting
     * means a connection is on its way */
    bool exhausted = (w->nopen >= w->pool_cap && !t->avail) || t->h2_noroom;
    if (w->e->cfg->when_busy == RUN_BUSY_DROP && exhausted && !t->connecting_unbound) {
        vring_unreserve(t);
        account_dropped(w, t, planned_ns, warm);
        return true;
    }
    if (!queue_push(t, planned_ns)) {
        counts_of(t, warm)->queue_overflow++;
        vring_unreserve(t);
        account_dropped(w, t, planned_ns, warm);
        return true;
    }
    counts_of(t, warm)->queued++;
    w->queued++;
    pool_grow(w, t);
    return true;
}

/* The drain of a duration run is over and the generator is still behind its plan: every
 * planned request it has not reached is dropped (planned, never sent), so a plan it cannot
 * keep ends with the run instead of stretching it. */
static void pool_drop_unsent(struct worker *w)
{
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        while (t->has_next) {
            uint64_t planned = t->next_planned_ns;
            bool warm = planned < w->e->warmup_end_ns;
            counts_of(t, warm)->planned++;
            w->ic.planned++;
            w->unreached++;
            account_dropped(w, t, planned, warm);
            t->has_next = sched_next(&t->sched, &t->next_planned_ns);
        }
    }
}

void open_on_sched(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    if (!w->planning)
        return;
    unsigned n = 0;
    sched_lateness(w, clock_now_ns());
    uint64_t early = w->early_armed_ns; /* this wake's, for its first send alone */
    w->early_armed_ns = 0;
    for (;;) {
        struct target_rt *best = NULL;
        for (size_t i = 0; i < w->nt; i++)
            if (w->t[i].has_next && (!best || w->t[i].next_planned_ns < best->next_planned_ns))
                best = &w->t[i];
        uint64_t now = clock_now_ns();
        if (!best) {
            worker_end_planning(w, now);
            return;
        }
        uint64_t next = best->next_planned_ns;
        if (n == 0)
            now = sched_wait_out(next, now, early);
        if (next > now) {
            /* with --spin the thread's main loop polls (without sleeping) once this
             * deadline is closer than spin_ns, and IO keeps flowing meanwhile. With a slack
             * the wake comes slack_ns after the first due send and sends every request
             * planned up to then: sends within the slack of each other share it, and an IO
             * wake in between sends nothing (the timer is not due) */
            auto_slack(w, now);
            uint64_t due = sched_deadline(w, next, now);
            w->sched_due_ns = due;
            loop_timer_arm(&w->loop, &w->sched_timer, due);
            return;
        }
        if (now >= w->e->cutoff_ns) {
            pool_drop_unsent(w);
            worker_end_planning(w, now);
            return;
        }
        if (++n > WORKER_BATCH) {
            /* far behind: let the loop read responses before sending more (the lateness
             * is in the lag histogram either way; no estimate learns from this deadline) */
            loop_timer_arm(&w->loop, &w->sched_timer, now);
            return;
        }
        worker_tick_due(w, now);
        if (issue(w, best, next, now))
            best->has_next = sched_next(&best->sched, &best->next_planned_ns);
        else
            best->has_next = false;
    }
}

void open_start(struct worker *w)
{
    bool any = false;
    for (size_t i = 0; i < w->nt; i++) {
        struct target_rt *t = &w->t[i];
        t->has_next = sched_next(&t->sched, &t->next_planned_ns);
        any |= t->has_next;
    }
    if (!any) {
        worker_end_planning(w, clock_now_ns());
        return;
    }
    open_on_sched(&w->loop, &w->sched_timer);
}
