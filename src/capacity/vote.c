/* The decision: the majority vote over valid repetitions, monotonicity, the comparison with
 * the closed loop, and the verdict with its reasons. Pure functions over a struct
 * capacity_result (no I/O), so every rule is unit-tested with made-up step results. */
#include "capacity/capacity.h"

#include "core/err.h"
#include "core/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int capacity_result_init(struct capacity_result *r, const double *rates, size_t nrates, size_t nreps)
{
    memset(r, 0, sizeof *r);
    if (nrates == 0 || nrates > CAPACITY_MAX_RATES || nreps == 0 || nreps > CAPACITY_MAX_REPS)
        return KNEE_EINVAL;
    r->nrates = nrates;
    memcpy(r->rates, rates, nrates * sizeof *rates);
    r->nreps = nreps;
    r->reps = xcalloc(nreps, sizeof *r->reps);
    r->vote.cap_index = -1;
    r->vote.capacity = NAN;
    r->cross.closed_loop = NAN;
    r->cross.best = -1;
    r->cross.relative = NAN;
    r->cross.difference = NAN;
    r->cross.bound = NAN;
    r->cross.bound_step = -1;
    r->cross.second = NAN;
    r->cross.queue.term = -1;
    r->cross.queue.cap_index = -1;
    r->cross.queue.capacity = NAN;
    r->verdict.capacity = NAN;
    return 0;
}

void capacity_result_release(struct capacity_result *r)
{
    free(r->reps);
    r->reps = NULL;
    r->nreps = 0;
    for (size_t i = 0; i < r->nservice; i++)
        capacity_service_release(&r->service[i]);
    free(r->service);
    r->service = NULL;
    r->nservice = 0;
    capacity_service_release(&r->service_all);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the finite values among v[0..n) (sorted in place); NAN when none. */
static double median(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            v[k++] = v[i];
    if (!k)
        return NAN;
    qsort(v, k, sizeof *v, cmp_double);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

void capacity_vote(struct capacity_result *r)
{
    struct capacity_vote *v = &r->vote;
    memset(v, 0, sizeof *v);
    for (size_t i = 0; i < r->nreps; i++)
        v->nvalid += r->reps[i].valid;
    double a[CAPACITY_MAX_REPS], p50[CAPACITY_MAX_REPS], p99[CAPACITY_MAX_REPS], er[CAPACITY_MAX_REPS];
    struct capacity_rung *rung = v->rung;
    int first_failed = -1;
    v->cap_index = -1;
    for (size_t k = 0; k < r->nrates; k++) {
        struct capacity_rung *g = &rung[k];
        memset(g, 0, sizeof *g);
        g->rate = r->rates[k];
        size_t m = 0;
        for (size_t i = 0; i < r->nreps; i++) {
            const struct capacity_rep *rep = &r->reps[i];
            const struct capacity_step *s = &rep->step[k];
            if (!rep->valid || !s->ran)
                continue;
            g->valid_reps++;
            g->held_by += s->held;
            a[m] = s->achieved;
            p50[m] = s->p50_ms;
            p99[m] = s->p99_ms;
            er[m] = s->error_rate;
            m++;
        }
        g->held = g->valid_reps > 0 && 2 * g->held_by > g->valid_reps;
        g->achieved = median(a, m);
        g->p50_ms = median(p50, m);
        g->p99_ms = median(p99, m);
        g->error_rate = median(er, m);
        if (!g->held && first_failed < 0)
            first_failed = (int)k;
        else if (g->held && first_failed < 0)
            v->cap_index = (int)k;
        else if (g->held)
            v->nonmono[v->nnonmono++] = (int)k;
    }
    v->capacity = v->cap_index >= 0 ? r->rates[v->cap_index] : NAN;
    v->top_held = v->cap_index == (int)r->nrates - 1;
    v->bracket_hi = v->top_held ? INFINITY : r->rates[v->cap_index + 1];
}

/* The closed loop's highest throughput over the steps that ran (held or not): the doubling of
 * its connections may step over the concurrency at which it would have carried the open loop's
 * rate within the SLO, but no step carries more than the service completes. */
static void upper_bound(struct capacity_cross *x)
{
    x->bound = NAN;
    x->bound_step = -1;
    for (size_t k = 0; k < x->nsteps; k++) {
        const struct capacity_step *s = &x->step[k].s;
        if (s->ran && isfinite(s->achieved) && (x->bound_step < 0 || s->achieved > x->bound)) {
            x->bound = s->achieved;
            x->bound_step = (int)k;
        }
    }
}

/* The regime and the number the ladder is compared with, with the sentence that says why. */
static void regime(struct capacity_result *r, double agree_share)
{
    struct capacity_cross *x = &r->cross;
    const struct capacity_queue *q = &x->queue;
    char a[32], b[32], c[32];
    if (!q->ran) {
        /* no latency bound in the SLO: nothing queues against it, the throughput decides */
        bool no_latency = q->no_latency_term;
        x->regime = no_latency ? CAPACITY_REGIME_THROUGHPUT : CAPACITY_REGIME_UNDECIDED;
        x->second = x->closed_loop;
        snprintf(x->regime_why, sizeof x->regime_why,
                 no_latency ? "throughput-bound: the SLO bounds no response time, so no queue counts against it"
                            : "undecided (%s): the closed loop is compared as a second measurement",
                 q->why_not[0] ? q->why_not : "no queue model");
        return;
    }
    double cl = x->closed_loop;
    bool latency = !isfinite(cl) || q->capacity < (1 - agree_share) * cl - 1e-9;
    x->regime = latency ? CAPACITY_REGIME_LATENCY : CAPACITY_REGIME_THROUGHPUT;
    x->second = latency ? q->capacity : cl;
    snprintf(a, sizeof a, "%s%s/s", q->capacity_at_hi ? "at least " : "", capacity_fmt_rate(q->capacity, c, sizeof c));
    if (!isfinite(cl))
        snprintf(x->regime_why, sizeof x->regime_why,
                 "latency-bound: not one closed-loop step met the SLO, and the queue model holds it up to %s", a);
    else if (latency)
        snprintf(x->regime_why, sizeof x->regime_why,
                 "latency-bound: the queue model holds the SLO up to %s, %.0f%% below the closed loop's %s/s (it "
                 "would be throughput-bound within %.0f%%, --agree)",
                 a, 100 * (1 - q->capacity / cl), capacity_fmt_rate(cl, b, sizeof b), 100 * agree_share);
    else
        snprintf(x->regime_why, sizeof x->regime_why,
                 "throughput-bound: the queue model holds the SLO up to %s, within %.0f%% of the closed loop's %s/s "
                 "(--agree): the queue the open loop builds does not break the SLO before the throughput ends",
                 a, 100 * agree_share, capacity_fmt_rate(cl, b, sizeof b));
}

void capacity_compare(struct capacity_result *r, double agree_share)
{
    struct capacity_cross *x = &r->cross;
    const struct capacity_vote *v = &r->vote;
    double lo = v->cap_index >= 0 ? v->capacity : 0, hi = v->bracket_hi;
    x->agree_share = agree_share;
    upper_bound(x);
    regime(r, agree_share);
    double c = x->second;
    x->relative = v->cap_index >= 0 && isfinite(c) ? c / v->capacity - 1 : NAN;
    if (!isfinite(c))
        c = 0; /* not even one connection met the SLO: the closed loop carries nothing within it */
    if (c < lo)
        x->difference = c / lo - 1;
    else if (c > hi)
        x->difference = c / hi - 1;
    else
        x->difference = 0;
    x->above_bound = v->cap_index >= 0 && isfinite(x->bound) && v->capacity > x->bound * (1 + agree_share) + 1e-9;
    x->agree = fabs(x->difference) <= agree_share + 1e-12 && !x->above_bound;
}

/* ---- the verdict ---- */

static void reason(struct capacity_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason(struct capacity_verdict *v, const char *fmt, ...)
{
    if (v->nreasons == CAPACITY_MAX_REASONS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->reasons[v->nreasons++], CAPACITY_REASON_MAX, fmt, ap);
    va_end(ap);
}

/* "1, 3" of the repetitions matching pred, into buf; the count. */
static size_t rep_list(const struct capacity_result *r, bool (*pred)(const struct capacity_rep *), char *buf,
                       size_t len)
{
    size_t n = 0, off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->nreps; i++) {
        if (!pred(&r->reps[i]))
            continue;
        if (off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%zu", n ? ", " : "", i + 1);
        n++;
    }
    return n;
}

static bool rep_busy(const struct capacity_rep *p)
{
    return p->ran && p->env.have && p->env.busy;
}

static bool rep_excluded(const struct capacity_rep *p)
{
    return p->ran && !p->valid;
}

/* The ladder's answer for a sentence: "70/s", "below 50/s". */
static const char *ladder_says(const struct capacity_result *r, char *buf, size_t len)
{
    char c[32];
    if (r->vote.cap_index >= 0)
        snprintf(buf, len, "%s/s", capacity_fmt_rate(r->vote.capacity, c, sizeof c));
    else
        snprintf(buf, len, "below %s/s", capacity_fmt_rate(r->rates[0], c, sizeof c));
    return buf;
}

/* The ladder above what the closed loop carried at any concurrency: INVALID in every regime. */
static void above_bound(const struct capacity_result *r, struct capacity_verdict *v)
{
    const struct capacity_cross *x = &r->cross;
    const struct capacity_closed_step *s = &x->step[x->bound_step];
    char a[48], b[32];
    reason(v,
           "the ladder held %s, above the closed loop's highest throughput (%s/s at %u connection%s) by %+.0f%% "
           "(--agree %.0f%%): no open loop carries more than the service completes",
           ladder_says(r, a, sizeof a), capacity_fmt_rate(x->bound, b, sizeof b), s->connections,
           s->connections == 1 ? "" : "s", 100 * (r->vote.capacity / x->bound - 1), 100 * x->agree_share);
    const struct capacity_queue *q = &x->queue;
    if (q->ran && q->capacity > x->bound * (1 + x->agree_share))
        /* the model's servers complete exactly the bound: holding more, its windows end before
         * the overload's queue breaks the SLO, and the ladder's do too */
        reason(v,
               "likely cause: the steps are too short for an overload to break the SLO: the queue model, whose "
               "service completes %s/s, holds it up to %s/s in windows of %.3g s after %.3g s of warm-up; longer "
               "--step (or a tighter SLO) lets the queue of a rate above the service's show",
               capacity_fmt_rate(x->bound, b, sizeof b), capacity_fmt_rate(q->capacity, a, sizeof a), q->window_s,
               q->warmup_s);
    else
        reason(v, "likely cause: the service changed between the ladder and the closed loop, which runs after it (a "
                  "restart, a cache, another load), or the closed loop was held back (the server's connection limit, "
                  "--timeout); the environment record says whether the machine was busy");
}

/* The closed loop compared as the second measurement (throughput-bound, or no queue model). */
static void closed_disagrees(const struct capacity_result *r, struct capacity_verdict *v)
{
    const struct capacity_cross *x = &r->cross;
    const struct capacity_vote *vo = &r->vote;
    char a[48], b[32], c[32];
    if (isfinite(x->closed_loop))
        snprintf(b, sizeof b, "%s/s", capacity_fmt_rate(x->closed_loop, c, sizeof c));
    else
        snprintf(b, sizeof b, "nothing");
    reason(v,
           "the two methods disagree (%s): the ladder says %s, the closed loop carried %s within the SLO, %+.0f%% "
           "outside the ladder's bracket (--agree %.0f%%)",
           x->regime == CAPACITY_REGIME_UNDECIDED ? "regime undecided" : capacity_regime_name(x->regime),
           ladder_says(r, a, sizeof a), b, 100 * x->difference, 100 * x->agree_share);
    const struct capacity_closed_step *last = x->nsteps ? &x->step[x->nsteps - 1] : NULL;
    if (x->difference > 0 && x->best >= 0 && x->regime == CAPACITY_REGIME_THROUGHPUT) {
        reason(v,
               "likely cause: the queue model holds the SLO up to %s/s with the closed loop's own service times, yet "
               "the open loop failed at %s/s: the service was slower under the open loop's arrivals than one request "
               "at a time (more connections, contention between concurrent requests), or the machine was busy "
               "during the ladder",
               capacity_fmt_rate(x->queue.capacity, c, sizeof c),
               vo->top_held ? "no rate" : capacity_fmt_rate(vo->bracket_hi, a, sizeof a));
    } else if (x->difference > 0 && x->best >= 0) {
        const struct capacity_closed_step *s = &x->step[x->best];
        reason(v,
               "likely cause: a closed loop waits for each answer before it sends again, so it never builds the "
               "queue that open-loop arrivals build; its best step (%u connection%s) met the SLO with p99 %.3g ms, "
               "while the open loop failed at %s/s: an SLO within a few service times puts the open-loop capacity "
               "below the closed loop's throughput, which no queue model could weigh here (%s)",
               s->connections, s->connections == 1 ? "" : "s", s->s.p99_ms,
               vo->top_held ? "no rate" : capacity_fmt_rate(vo->bracket_hi, c, sizeof c),
               x->queue.why_not[0] ? x->queue.why_not : "none was run");
    } else if (x->difference < 0 && last) {
        if (x->best < 0)
            reason(v,
                   "likely cause: the closed loop failed the SLO already at %u connection%s (%s), so it carried "
                   "nothing within it; a step of the ladder that held may have been a lucky window",
                   x->step[0].connections, x->step[0].connections == 1 ? "" : "s", x->step[0].s.reason);
        else
            reason(v,
                   "likely cause: a closed loop's throughput is connections / latency; it stopped at %u connections "
                   "(%s), so it could not reach the open loop's rate: check --timeout and the server's connection "
                   "limit, or whether the ladder's windows were too short to see the queue grow",
                   last->connections, last->s.held ? "the last step held" : last->s.reason);
    }
}

/* The highest lag p99 (ms) of rung k over the valid repetitions (0 when none). */
static double rung_lag_p99_ms(const struct capacity_result *r, size_t k)
{
    double lag = 0;
    for (size_t i = 0; i < r->nreps; i++)
        if (r->reps[i].valid && r->reps[i].step[k].ran && isfinite(r->reps[i].step[k].lag_p99_ms))
            lag = fmax(lag, r->reps[i].step[k].lag_p99_ms);
    return lag;
}

/* The queue model compared (latency-bound). */
static void queue_disagrees(const struct capacity_result *r, struct capacity_verdict *v)
{
    const struct capacity_cross *x = &r->cross;
    const struct capacity_queue *q = &x->queue;
    const struct capacity_vote *vo = &r->vote;
    char a[48], b[32], c[32];
    reason(v,
           "the two methods disagree (latency-bound): the ladder says %s, the queue model of the closed loop's "
           "service times predicts %s/s, %+.0f%% outside the ladder's bracket (--agree %.0f%%)",
           ladder_says(r, a, sizeof a), capacity_fmt_rate(q->capacity, b, sizeof b), 100 * x->difference,
           100 * x->agree_share);
    if (x->difference > 0) {
        /* the ladder failed a rate the queue holds */
        int k = vo->top_held ? -1 : vo->cap_index + 1;
        if (k >= 0 && k < (int)r->nrates && q->rung[k].held && isfinite(q->rung[k].value_ms)) {
            char lag[160] = "";
            double lag_ms = rung_lag_p99_ms(r, (size_t)k);
            if (lag_ms >= 1)
                snprintf(lag, sizeof lag,
                         ", or the generator's lag (p99 up to %.3g ms there: latency counts from the "
                         "planned send, the model sends on time)",
                         lag_ms);
            reason(v,
                   "likely cause: at %s/s the queue predicts %s %.3g ms, within the SLO, where the ladder did not "
                   "hold (its median p99 there: %.3g ms): the service was slower under the open loop's arrivals than "
                   "one request at a time (more connections, contention, a stall)%s, or the machine was busy during "
                   "the ladder",
                   capacity_fmt_rate(r->rates[k], c, sizeof c), q->term_stat, q->rung[k].value_ms, vo->rung[k].p99_ms,
                   lag);
        } else
            reason(v, "likely cause: the service was slower under the open loop's arrivals than one request at a "
                      "time (more connections, contention, a stall), or the machine was busy during the ladder");
    } else {
        reason(v,
               "likely cause: the model queues more than the service did: it assumed %u server%s from the closed "
               "loop (%s/s x %.3g ms at %u connection%s), so a service with more parallelism than its throughput "
               "shows, or one whose closed-loop latencies were inflated (a busy machine), predicts too little",
               q->servers, q->servers == 1 ? "" : "s", capacity_fmt_rate(q->saturation, b, sizeof b), q->one_conn_ms,
               q->connections, q->connections == 1 ? "" : "s");
    }
}

/* Why the two methods disagree, from what was measured, and whether the machine was busy. */
static void disagreement(const struct capacity_result *r, struct capacity_verdict *v)
{
    const struct capacity_cross *x = &r->cross;
    if (x->above_bound)
        above_bound(r, v);
    else if (x->regime == CAPACITY_REGIME_LATENCY)
        queue_disagrees(r, v);
    else
        closed_disagrees(r, v);
    char list[128];
    size_t nbusy = rep_list(r, rep_busy, list, sizeof list);
    if (nbusy)
        reason(v, "the machine was busy during repetition%s %s (see environment): rerun on a quiet machine",
               nbusy == 1 ? "" : "s", list);
}

void capacity_judge(struct capacity_result *r, double require)
{
    struct capacity_verdict *v = &r->verdict;
    memset(v, 0, sizeof *v);
    v->capacity = NAN;
    const struct capacity_vote *vo = &r->vote;
    char a[32], b[32], list[128];
    bool valid = true;
    if (r->interrupted) {
        valid = false;
        if (r->steps_done < r->steps_total)
            reason(v, "interrupted after %llu of the ladder's %llu windows (probes included): the vote is incomplete",
                   (unsigned long long)r->steps_done, (unsigned long long)r->steps_total);
        else
            reason(v, "interrupted during the closed-loop cross-check: the second method is incomplete");
    }
    if (!(2 * vo->nvalid > r->nreps)) {
        valid = false;
        size_t nx = rep_list(r, rep_excluded, list, sizeof list);
        reason(v,
               "only %zu of %zu repetitions valid, fewer than a majority%s%s: the generator or the machine was "
               "measured, not the candidate",
               vo->nvalid, r->nreps, nx ? "; excluded: " : "", nx ? list : "");
    }
    if (r->cross.ran && !r->cross.agree && valid) {
        valid = false;
        disagreement(r, v);
    }
    v->valid = valid;
    if (valid && vo->cap_index >= 0)
        v->capacity = vo->capacity;
    /* notes, valid or not */
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_rep *p = &r->reps[i];
        if (p->ran && !p->valid && p->excluded[0])
            reason(v, "repetition %zu excluded: %s", i + 1, p->excluded);
    }
    if (vo->nnonmono) {
        size_t off = 0;
        list[0] = '\0';
        for (size_t i = 0; i < vo->nnonmono && off < sizeof list; i++)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%s/s", i ? ", " : "",
                                    capacity_fmt_rate(r->rates[vo->nonmono[i]], a, sizeof a));
        reason(v, "non-monotone: %s held above a rate that failed; the capacity stops below the first failed rate",
               list);
    }
    if (vo->nvalid && vo->cap_index < 0)
        reason(v, "not even the lowest rate (%s/s) was held: the capacity is below the ladder",
               capacity_fmt_rate(r->rates[0], a, sizeof a));
    if (vo->top_held)
        reason(v, "the top rate held: the capacity is at least %s/s (raise --max or the last of --rates)",
               capacity_fmt_rate(vo->capacity, a, sizeof a));
    if (!r->cross.ran && !r->interrupted)
        reason(v, "no cross-check (--no-cross-check): the capacity rests on one method");
    if (require > 0) {
        v->require_given = true;
        v->require_met = valid && vo->cap_index >= 0 && vo->capacity >= require;
        if (valid && !v->require_met)
            reason(v, "--require %s/s not met (capacity %s)", capacity_fmt_rate(require, a, sizeof a),
                   vo->cap_index >= 0 ? capacity_fmt_rate(vo->capacity, b, sizeof b) : "below the ladder");
    }
    v->exit_code = !valid ? 3 : (v->require_given && !v->require_met) ? 99 : 0;
}
