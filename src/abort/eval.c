/* The trailing-window evaluator of --abort-if: a ring of the run's last seconds (counts and a
 * sparse copy of each second's latency, first-event and event-gap histograms, the buckets that
 * hold values), from which a
 * rule's window is added up when it is judged. Percentiles come from the window's merged
 * histogram, never from an average of per-second percentiles. */
#include "abort/abort.h"

#include "core/err.h"
#include "record/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Seconds are compared with this slack: interval edges are float sums of ns. */
#define EPS_S 1e-6

struct bucket {
    size_t index;
    int64_t count;
};

/* The non-empty buckets of one second's histogram. */
struct sparse {
    struct bucket *b;
    size_t n, cap;
};

struct tick {
    double start_s, end_s;
    struct abort_second c;
    struct sparse h[ABORT_H_COUNT]; /* latency, first_event, event_gap (enum abort_hist) */
};

struct abort_eval {
    struct abort_rule *rules;
    size_t n;
    double armed_after_s, warmup_s;
    double plan_end_s; /* INFINITY: not known */
    double *edges_s;   /* nstages + 1 */
    size_t nstages;
    struct tick *ring; /* the last `count` seconds; the newest at (head + cap - 1) % cap */
    size_t cap, count, head;
    struct hdr cur[ABORT_H_COUNT]; /* the second being fed (enum abort_hist) */
    struct hdr win;                /* a window, rebuilt for each judgement */
    bool fired;
    size_t fired_rule;
    double fired_at_s;
};

struct abort_eval *abort_eval_new(const struct abort_rule *rules, size_t n, double armed_after_s, double warmup_s)
{
    struct abort_eval *ev = xcalloc(1, sizeof *ev);
    ev->rules = xcalloc(n ? n : 1, sizeof *ev->rules);
    if (n)
        memcpy(ev->rules, rules, n * sizeof *rules);
    ev->n = n;
    ev->armed_after_s = armed_after_s;
    ev->warmup_s = warmup_s;
    ev->plan_end_s = INFINITY;
    uint32_t longest = 1;
    for (size_t i = 0; i < n; i++)
        if (rules[i].window_s > longest)
            longest = rules[i].window_s;
    /* a window of W seconds holds W whole seconds and the pieces the warm-up's and the plan's
     * edges cut (engine_tick_end): a few more than W */
    ev->cap = (size_t)longest + 4;
    ev->ring = xcalloc(ev->cap, sizeof *ev->ring);
    for (int h = 0; h < ABORT_H_COUNT; h++)
        if (hdr_init(&ev->cur[h], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS))
            abort(); /* constant, valid parameters */
    if (hdr_init(&ev->win, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS))
        abort();
    return ev;
}

void abort_eval_free(struct abort_eval *ev)
{
    if (!ev)
        return;
    for (size_t i = 0; i < ev->cap; i++)
        for (int h = 0; h < ABORT_H_COUNT; h++)
            free(ev->ring[i].h[h].b);
    free(ev->ring);
    free(ev->rules);
    free(ev->edges_s);
    for (int h = 0; h < ABORT_H_COUNT; h++)
        hdr_release(&ev->cur[h]);
    hdr_release(&ev->win);
    free(ev);
}

void abort_eval_set_stages(struct abort_eval *ev, const double *edges_s, size_t nstages)
{
    free(ev->edges_s);
    ev->edges_s = xcalloc(nstages + 1, sizeof *ev->edges_s);
    memcpy(ev->edges_s, edges_s, (nstages + 1) * sizeof *edges_s);
    ev->nstages = nstages;
}

void abort_eval_set_plan_end(struct abort_eval *ev, double plan_end_s)
{
    ev->plan_end_s = plan_end_s;
}

void abort_eval_add_latency(struct abort_eval *ev, const struct hdr *latency_ns)
{
    hdr_add(&ev->cur[ABORT_H_LATENCY], latency_ns);
}

void abort_eval_add_stream(struct abort_eval *ev, const struct hdr *first_event_ns, const struct hdr *event_gap_ns)
{
    if (first_event_ns && first_event_ns->counts && first_event_ns->total_count)
        hdr_add(&ev->cur[ABORT_H_FIRST_EVENT], first_event_ns);
    if (event_gap_ns && event_gap_ns->counts && event_gap_ns->total_count)
        hdr_add(&ev->cur[ABORT_H_EVENT_GAP], event_gap_ns);
}

/* cur's non-empty buckets into sp (its memory kept for the next second); cur emptied. */
static void keep_sparse(struct sparse *sp, struct hdr *cur)
{
    sp->n = 0;
    if (!cur->total_count)
        return;
    for (size_t i = 0; i < cur->counts_len; i++) {
        if (!cur->counts[i])
            continue;
        if (sp->n == sp->cap) {
            sp->cap = sp->cap ? sp->cap * 2 : 64;
            sp->b = xrealloc(sp->b, sp->cap * sizeof *sp->b);
        }
        sp->b[sp->n++] = (struct bucket){i, cur->counts[i]};
    }
    hdr_reset(cur);
}

/* The second just fed becomes the ring's newest tick (the oldest falls out when it is full). */
static void push_tick(struct abort_eval *ev, const struct abort_second *sec)
{
    struct tick *t;
    if (ev->count < ev->cap) {
        t = &ev->ring[(ev->head + ev->count) % ev->cap];
        ev->count++;
    } else {
        t = &ev->ring[ev->head];
        ev->head = (ev->head + 1) % ev->cap;
    }
    t->start_s = sec->start_s;
    t->end_s = sec->start_s + sec->length_s;
    t->c = *sec;
    for (int h = 0; h < ABORT_H_COUNT; h++)
        keep_sparse(&t->h[h], &ev->cur[h]);
}

/* A window's sums: the ticks that lie in [lo_s, hi_s], one of their histograms in ev->win. */
struct window {
    uint64_t planned, sent, completed, ok, errors, dropped;
    double length_s;
};

static void add_window(struct abort_eval *ev, double lo_s, double hi_s, bool latency, enum abort_hist hist,
                       struct window *w)
{
    memset(w, 0, sizeof *w);
    if (latency)
        hdr_reset(&ev->win);
    for (size_t k = 0; k < ev->count; k++) {
        const struct tick *t = &ev->ring[(ev->head + k) % ev->cap];
        if (t->start_s < lo_s - EPS_S || t->end_s > hi_s + EPS_S)
            continue;
        w->planned += t->c.planned;
        w->sent += t->c.sent;
        w->completed += t->c.completed;
        w->ok += t->c.ok;
        w->errors += t->c.errors;
        w->dropped += t->c.dropped;
        w->length_s += t->end_s - t->start_s;
        if (latency)
            for (size_t i = 0; i < t->h[hist].n; i++)
                ev->win.counts[t->h[hist].b[i].index] += t->h[hist].b[i].count;
    }
    if (latency)
        hdr_recalc(&ev->win);
}

static double ratio(uint64_t num, uint64_t den)
{
    return den ? (double)num / (double)den : NAN;
}

/* The rule's value over its window (NAN: nothing to measure). */
static double measure(struct abort_eval *ev, const struct abort_rule *r, double lo_s, double hi_s)
{
    struct window w;
    add_window(ev, lo_s, hi_s, r->kind == ABORT_LATENCY, r->hist, &w);
    switch (r->kind) {
    case ABORT_LATENCY:
        if (!ev->win.total_count)
            return NAN;
        if (r->stat == ABORT_MEAN)
            return hdr_mean(&ev->win) / 1e6;
        if (r->stat == ABORT_MAX)
            return (double)hdr_max(&ev->win) / 1e6;
        return (double)hdr_value_at_percentile(&ev->win, r->pct) / 1e6;
    case ABORT_ERROR_RATE:
        return ratio(w.errors, w.completed);
    case ABORT_DROPPED_RATE:
        return ratio(w.dropped, w.planned);
    case ABORT_PER_S:
        if (!(w.length_s > 0))
            return NAN;
        return (double)(r->stat == ABORT_COMPLETED ? w.completed
                        : r->stat == ABORT_GOODPUT ? w.ok
                                                   : w.sent) /
               w.length_s;
    case ABORT_GENERATOR_LIMITED:
        break;
    }
    return NAN;
}

static bool holds(enum thr_op op, double v, double limit)
{
    switch (op) {
    case THR_LT:
        return v < limit;
    case THR_LE:
        return v <= limit;
    case THR_GT:
        return v > limit;
    case THR_GE:
        return v >= limit;
    case THR_EQ:
        return v == limit;
    case THR_NE:
        return v != limit;
    }
    return false;
}

/* The window [*lo_s, now_s] of rule r, and whether it is judged now: armed, full of measured
 * time (after the warm-up) or, for a stage rule, of the stage's time so far while it runs. */
static bool window_of(const struct abort_eval *ev, const struct abort_rule *r, double now_s, double *lo_s)
{
    if (now_s < ev->armed_after_s - EPS_S || now_s > ev->plan_end_s - EPS_S)
        return false; /* not armed yet, or planning is over: nothing left to stop */
    double from_s = ev->warmup_s;
    double need_s = r->window_s;
    if (r->stage) {
        if (r->stage > ev->nstages)
            return false;
        double s0 = ev->edges_s[r->stage - 1], s1 = ev->edges_s[r->stage];
        if (now_s <= s0 + EPS_S || now_s > s1 + EPS_S)
            return false; /* the stage is not running */
        if (s0 > from_s)
            from_s = s0;
        if (s1 - from_s < need_s)
            need_s = s1 - from_s; /* a stage shorter than the window: judged when it is whole */
        if (!(need_s > 0))
            return false;
    }
    *lo_s = now_s - r->window_s > from_s ? now_s - r->window_s : from_s;
    return now_s - *lo_s >= need_s - EPS_S;
}

static void fire(struct abort_eval *ev, size_t i, double at_s)
{
    ev->fired = true;
    ev->fired_rule = i;
    ev->fired_at_s = at_s;
}

int abort_eval_second(struct abort_eval *ev, const struct abort_second *sec, double *measured)
{
    push_tick(ev, sec);
    if (ev->fired)
        return -1;
    double now_s = sec->start_s + sec->length_s;
    for (size_t i = 0; i < ev->n; i++) {
        const struct abort_rule *r = &ev->rules[i];
        double lo_s;
        if (r->kind == ABORT_GENERATOR_LIMITED || !window_of(ev, r, now_s, &lo_s))
            continue;
        double v = measure(ev, r, lo_s, now_s);
        if (isnan(v) || !holds(r->op, v, r->value))
            continue;
        if (measured)
            *measured = v;
        fire(ev, i, now_s);
        return (int)i;
    }
    return -1;
}

int abort_eval_limited(struct abort_eval *ev, double elapsed_s, bool limited)
{
    if (ev->fired || !limited || elapsed_s < ev->armed_after_s - EPS_S || elapsed_s < ev->warmup_s - EPS_S ||
        elapsed_s > ev->plan_end_s - EPS_S)
        return -1;
    for (size_t i = 0; i < ev->n; i++)
        if (ev->rules[i].kind == ABORT_GENERATOR_LIMITED) {
            fire(ev, i, elapsed_s);
            return (int)i;
        }
    return -1;
}

bool abort_eval_fired(const struct abort_eval *ev, size_t *rule, double *at_s)
{
    if (!ev->fired)
        return false;
    if (rule)
        *rule = ev->fired_rule;
    if (at_s)
        *at_s = ev->fired_at_s;
    return true;
}
