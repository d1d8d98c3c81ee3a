/* knee serve's request pipeline: every simulated wait of a work request is a timer on the
 * server's loop, so a thousand waiting requests cost a thousand timers, not threads. A
 * request takes a slot of the pool (FIFO, with an acquire timeout), then the table lock the
 * report job holds for pause_for_ns every pause_every_ns, then its work (a timer, or real
 * CPU on a worker thread), then waits for its slowest dependency, releases its slot and is
 * answered (conn.c). The life of a request is drawn in serve/internal.h. */
#include "serve/internal.h"

#include "core/clock.h"
#include "core/err.h"

#include <math.h>

/* ---- queues ----------------------------------------------------------------------------- */

static void workq_push(struct workq *q, struct work *w)
{
    w->next = NULL;
    w->prev = q->tail;
    if (q->tail)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
}

static void workq_remove(struct workq *q, struct work *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        q->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        q->tail = w->prev;
    w->prev = w->next = NULL;
}

/* ---- work and dependencies -------------------------------------------------------------- */

static void release_slot(struct serve_handle *s);

void serve_work_end(struct serve_handle *s, struct work *w)
{
    w->end_ns = clock_now_ns();
    gauge_add(&s->c.active, -1);
    counter_inc(&s->c.executed);
    if (w->holds_slot) {
        w->holds_slot = false;
        release_slot(s);
    }
    if (!w->conn->dead) {
        counter_inc(&s->c.ok);
        serve_time_record(s, SERVE_TIME_OK, w->entry_ns);
        if (!w->stream_started)
            serve_conn_respond_work(w->conn);
    }
    serve_conn_request_done(w->conn);
}

static void finish(struct serve_handle *s, struct work *w)
{
    if (w->stream && !w->conn->dead) {
        serve_stream_begin(s, w);
        return;
    }
    serve_work_end(s, w);
}

static void on_deps_done(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct work *w = t->data;
    finish(w->conn->srv, w);
}

static void work_done(struct serve_handle *s, struct work *w)
{
    if (w->deps_ns > 0) {
        w->phase = PH_DEPS;
        w->timer.cb = on_deps_done;
        loop_timer_arm(&s->loop, &w->timer, clock_now_ns() + w->deps_ns);
        return;
    }
    finish(s, w);
}

static void on_work_timer(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct work *w = t->data;
    work_done(w->conn->srv, w);
}

static void begin_work(struct serve_handle *s, struct work *w)
{
    w->start_ns = clock_now_ns();
    if (s->cfg.cpu_ns && w->work_ns > 0) {
        /* Waiting for a CPU worker still counts as waiting; the worker moves the gauge. */
        w->phase = PH_CPU;
        gauge_add(&s->c.waiting, 1);
        w->job.cpu_ns = w->work_ns;
        w->job.data = w;
        cpu_pool_submit(&s->cpu, &w->job);
        return;
    }
    gauge_add(&s->c.active, 1);
    if (w->work_ns > 0) {
        w->phase = PH_WORK;
        w->timer.cb = on_work_timer;
        loop_timer_arm(&s->loop, &w->timer, w->start_ns + w->work_ns);
        return;
    }
    w->phase = PH_WORK;
    work_done(s, w);
}

void serve_work_init(struct work *w, struct conn *c)
{
    loop_timer_init(&w->timer, on_work_timer, w);
    w->conn = c;
}

/* ---- the report lock and the slots ------------------------------------------------------ */

static void after_slot(struct serve_handle *s, struct work *w)
{
    w->slot_ns = clock_now_ns();
    if (s->paused) {
        w->phase = PH_WAIT_LOCK;
        gauge_add(&s->c.waiting, 1);
        workq_push(&s->lockq, w);
        return;
    }
    begin_work(s, w);
}

/* Hand freed slots to waiters in FIFO order. A waiter's work may end at once (0 ms) and
 * release again; the `granting` guard turns that recursion into this loop. */
static void release_slot(struct serve_handle *s)
{
    s->slots_free++;
    if (s->granting)
        return;
    s->granting = true;
    while (s->slots_free > 0 && s->slotq.head) {
        struct work *w = s->slotq.head;
        workq_remove(&s->slotq, w);
        s->slots_free--;
        loop_timer_cancel(&s->loop, &w->timer);
        gauge_add(&s->c.waiting, -1);
        w->holds_slot = true;
        after_slot(s, w);
    }
    s->granting = false;
}

static void on_acquire_timeout(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct work *w = t->data;
    struct serve_handle *s = w->conn->srv;
    workq_remove(&s->slotq, w);
    gauge_add(&s->c.waiting, -1);
    counter_inc(&s->c.rejected);
    serve_time_record(s, SERVE_TIME_REJECTED, w->entry_ns);
    serve_conn_respond_rejected(w->conn);
    serve_conn_request_done(w->conn);
}

static void acquire_slot(struct serve_handle *s, struct work *w)
{
    if (s->slots_free > 0 && !s->slotq.head) {
        s->slots_free--;
        w->holds_slot = true;
        after_slot(s, w);
        return;
    }
    w->phase = PH_WAIT_SLOT;
    gauge_add(&s->c.waiting, 1);
    workq_push(&s->slotq, w);
    if (s->cfg.acquire_timeout_ns) {
        w->timer.cb = on_acquire_timeout;
        loop_timer_arm(&s->loop, &w->timer, w->entry_ns + s->cfg.acquire_timeout_ns);
    }
}

void serve_work_start(struct serve_handle *s, struct work *w)
{
    if (s->cfg.pool)
        acquire_slot(s, w);
    else
        after_slot(s, w);
}

void serve_work_cancel(struct serve_handle *s, struct work *w)
{
    loop_timer_cancel(&s->loop, &w->timer);
    workq_remove(w->phase == PH_WAIT_SLOT ? &s->slotq : &s->lockq, w);
    gauge_add(&s->c.waiting, -1);
    counter_inc(&s->c.cancelled);
    w->phase = PH_NONE;
    if (w->holds_slot) {
        w->holds_slot = false;
        release_slot(s);
    }
}

/* ---- planning a request ----------------------------------------------------------------- */

/* The random draws happen here, at entry and in arrival order (see serve/internal.h). */
bool serve_work_plan(struct serve_handle *s, const struct http_request *r, struct work *w)
{
    const struct serve_config *cfg = &s->cfg;
    w->stream = w->stream_started = false;
    if (cfg->stream) {
        w->fanout = w->slow_deps = 0;
        w->deps_ns = 0;
        w->miss = false;
        return serve_stream_plan(s, r, w);
    }
    double v;
    int rc = http_request_query_double(r, "ms", ns_to_ms(cfg->max_work_ns), &v);
    if (rc == 0) {
        w->work_ns = (uint64_t)llround(v * 1e6);
        w->miss = false;
    } else if (rc != KNEE_ENOTFOUND) {
        return false;
    } else if (cfg->cpu_ns) {
        w->work_ns = cfg->cpu_ns;
        w->miss = false;
    } else {
        w->miss = cfg->miss_rate > 0 && rng_bernoulli(&s->rng, cfg->miss_rate);
        w->work_ns = w->miss ? cfg->miss_ns : cfg->hit_ns;
    }
    w->fanout = cfg->fanout;
    rc = http_request_query_double(r, "fanout", MAX_FANOUT, &v);
    if (rc == 0) {
        if (v != floor(v))
            return false;
        w->fanout = (unsigned)v;
    } else if (rc != KNEE_ENOTFOUND) {
        return false;
    }
    w->slow_deps = 0;
    w->deps_ns = 0;
    for (unsigned i = 0; i < w->fanout; i++) {
        bool slow = cfg->dep_slow_prob > 0 && rng_bernoulli(&s->rng, cfg->dep_slow_prob);
        uint64_t d = slow ? cfg->dep_slow_ns : cfg->dep_ns;
        w->slow_deps += slow;
        if (d > w->deps_ns)
            w->deps_ns = d;
    }
    return true;
}

/* ---- the report job --------------------------------------------------------------------- */

static void on_pause_start(struct loop *loop, struct loop_timer *t);

/* When the next pause starts, from the end (or the start, for the first) of the last one:
 * periodic, or with pause_random an exponential idle time of mean pause_every − pause_for
 * drawn from the seed and the pause's number (not from the request stream's generator, so
 * the requests' draws stay the same). */
static uint64_t next_pause_ns(const struct serve_handle *s, uint64_t from_ns, bool first)
{
    if (!s->cfg.pause_random)
        return first ? from_ns + s->cfg.pause_every_ns : from_ns - s->cfg.pause_for_ns + s->cfg.pause_every_ns;
    struct rng g;
    rng_seed(&g, s->cfg.seed ^ 0x5eed5a11ULL ^ (counter_get(&s->c.pauses) << 20));
    double idle_ns = rng_exp(&g, (double)(s->cfg.pause_every_ns - s->cfg.pause_for_ns));
    return from_ns + (uint64_t)idle_ns;
}

static void on_pause_end(struct loop *loop, struct loop_timer *t)
{
    struct serve_handle *s = t->data;
    s->paused = false;
    if (!s->draining) {
        t->cb = on_pause_start;
        loop_timer_arm(loop, t, next_pause_ns(s, s->pause_start_ns + s->cfg.pause_for_ns, false));
    }
    /* Detach the queue first: begin_work never re-queues (the lock is free now), but a
     * request finishing synchronously may parse a pipelined one that must not see a
     * half-walked list. */
    struct work *w = s->lockq.head;
    s->lockq.head = s->lockq.tail = NULL;
    while (w) {
        struct work *next = w->next;
        w->prev = w->next = NULL;
        gauge_add(&s->c.waiting, -1);
        begin_work(s, w);
        w = next;
    }
}

static void on_pause_start(struct loop *loop, struct loop_timer *t)
{
    struct serve_handle *s = t->data;
    s->paused = true;
    s->pause_start_ns = t->deadline_ns;
    counter_inc(&s->c.pauses);
    t->cb = on_pause_end;
    loop_timer_arm(loop, t, s->pause_start_ns + s->cfg.pause_for_ns);
}

void serve_pause_start(struct serve_handle *s)
{
    loop_timer_init(&s->pause_timer, on_pause_start, s);
    if (s->cfg.pause_every_ns)
        loop_timer_arm(&s->loop, &s->pause_timer, next_pause_ns(s, s->start_ns, true));
}

void serve_pause_stop(struct serve_handle *s)
{
    if (s->pause_timer.cb == on_pause_start)
        loop_timer_cancel(&s->loop, &s->pause_timer);
}

/* ---- CPU work --------------------------------------------------------------------------- */

static void on_cpu_started(struct cpu_job *job, void *arg)
{
    (void)job;
    struct serve_handle *s = arg;
    gauge_add(&s->c.waiting, -1);
    gauge_add(&s->c.active, 1);
}

static void on_cpu_done(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    (void)events;
    struct serve_handle *s = io->data;
    struct cpu_job *j = cpu_pool_take_done(&s->cpu);
    while (j) {
        struct cpu_job *next = j->next;
        struct work *w = j->data;
        w->start_ns = j->start_ns; /* processing began when a worker took it */
        work_done(s, w);
        j = next;
    }
}

int serve_cpu_start(struct serve_handle *s)
{
    int r = cpu_pool_init(&s->cpu, s->cfg.workers, on_cpu_started, s);
    if (r)
        return r;
    s->have_cpu = true;
    s->cpu_io.fd = s->cpu.eventfd;
    s->cpu_io.cb = on_cpu_done;
    s->cpu_io.data = s;
    loop_io_add(&s->loop, &s->cpu_io, EPOLLIN);
    return 0;
}

void serve_cpu_stop(struct serve_handle *s)
{
    if (!s->have_cpu)
        return;
    loop_io_del(&s->loop, &s->cpu_io);
    cpu_pool_release(&s->cpu);
    s->have_cpu = false;
}
