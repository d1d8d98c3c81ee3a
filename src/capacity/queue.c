/* The second method where a capacity is latency-bound: a trace-driven queue. The closed loop's
 * measured service times are drawn for the arrivals the ladder planned, through a simulated FCFS
 * queue of c servers, window by window as the ladder measures them; the SLO's response-time
 * terms are judged on each simulated window as on a step, and a rate is held when most windows
 * meet them (capacity.h, "the queue model"; docs/INTERNALS.md, "knee capacity: choices"). */
#include "capacity/capacity.h"

#include "core/err.h"
#include "core/rng.h"
#include "core/units.h"
#include "hist/hdr.h"
#include "load/run.h"
#include "plan/schedule.h"
#include "plan/shard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- service times ---- */

int capacity_service_from_hdr(const struct hdr *h, struct capacity_service *out)
{
    memset(out, 0, sizeof *out);
    if (!h->counts || h->total_count <= 0)
        return KNEE_EINVAL;
    struct hdr_iter it;
    size_t n = 0;
    hdr_iter_recorded_init(&it, h);
    while (hdr_iter_next(&it))
        n++;
    if (!n)
        return KNEE_EINVAL;
    out->value_ns = xcalloc(n, sizeof *out->value_ns);
    out->cum = xcalloc(n, sizeof *out->cum);
    hdr_iter_recorded_init(&it, h);
    while (hdr_iter_next(&it) && out->n < n) {
        out->value_ns[out->n] = hdr_median_equivalent(h, it.value_iterated_to);
        out->cum[out->n] = (uint64_t)it.cumulative_count;
        out->n++;
    }
    out->mean_ms = hdr_mean(h) / 1e6;
    out->p50_ms = (double)hdr_value_at_percentile(h, 50) / 1e6;
    out->p99_ms = (double)hdr_value_at_percentile(h, 99) / 1e6;
    return 0;
}

void capacity_service_release(struct capacity_service *s)
{
    free(s->value_ns);
    free(s->cum);
    memset(s, 0, sizeof *s);
}

/* One service time (ns) drawn from s: a uniform rank, its value. */
static int64_t draw(const struct capacity_service *s, struct rng *r)
{
    uint64_t u = rng_below(r, s->cum[s->n - 1]);
    size_t lo = 0, hi = s->n - 1;
    while (lo < hi) { /* the first value whose cumulative count exceeds u */
        size_t mid = lo + (hi - lo) / 2;
        if (s->cum[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return s->value_ns[lo];
}

bool capacity_queue_predicts(const struct run_threshold *t)
{
    return t->kind == THR_STAT && (t->metric == THR_LATENCY || t->metric == THR_SERVICE || t->metric == THR_TTFB) &&
           strcmp(t->stat, "count") != 0;
}

/* ---- the servers: a min-heap of the times each is free again ---- */

struct servers {
    size_t n;
    int64_t *free_ns;
};

static void servers_reset(struct servers *s)
{
    memset(s->free_ns, 0, s->n * sizeof *s->free_ns);
}

/* The earliest free server takes a request arriving at a_ns for service_ns; its response time. */
static int64_t servers_take(struct servers *s, int64_t a_ns, int64_t service_ns)
{
    int64_t start = s->free_ns[0] > a_ns ? s->free_ns[0] : a_ns;
    int64_t end = start + service_ns;
    size_t i = 0;
    for (;;) { /* the root becomes `end`: sift it down */
        size_t l = 2 * i + 1, r = l + 1, m = i;
        int64_t v = end;
        if (l < s->n && s->free_ns[l] < v) {
            m = l;
            v = s->free_ns[l];
        }
        if (r < s->n && s->free_ns[r] < v)
            m = r;
        if (m == i)
            break;
        s->free_ns[i] = s->free_ns[m];
        i = m;
    }
    s->free_ns[i] = end;
    return end - a_ns;
}

/* ---- one window ---- */

/* A window's simulated responses: every target's (when a term names it) and all merged. */
struct sim {
    const struct capacity_queue_model *m;
    struct servers srv;
    struct hdr all;
    struct hdr *target; /* [ntargets]; counts NULL for a target no term names */
    struct sched *sched;
    uint64_t *next_ns;
    bool *live;
};

static uint64_t window_seed(uint64_t seed, size_t w)
{
    return w == 0 ? seed : seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)w);
}

static const struct capacity_service *service_of(const struct capacity_queue_model *m, size_t t)
{
    return m->service && m->service[t].n ? &m->service[t] : m->all;
}

/* Simulate window w at rate: the plan's streams merged in time order, each request served by the
 * earliest free server, those planned after the warm-up recorded. With m->replay every window
 * plans the ladder's own arrivals and only the service times drawn differ. */
static void simulate(struct sim *s, double rate, size_t w)
{
    const struct capacity_queue_model *m = s->m;
    uint64_t seed = window_seed(m->seed, w), end = m->warmup_ns + m->window_ns;
    uint64_t arrivals = m->replay ? m->seed : seed;
    for (size_t t = 0; t < m->ntargets; t++) {
        double r = rate * m->share[t];
        s->live[t] = r > 0;
        if (!s->live[t])
            continue;
        sched_init(&s->sched[t], m->poisson, r, r, 0, 0, end, UINT64_MAX, 1, 0, plan_stream_seed(arrivals, t));
        s->live[t] = sched_next(&s->sched[t], &s->next_ns[t]);
    }
    struct rng rng;
    rng_seed(&rng, seed ^ 0x5E5F1CE5EEDULL);
    servers_reset(&s->srv);
    hdr_reset(&s->all);
    for (size_t t = 0; t < m->ntargets; t++)
        if (s->target[t].counts)
            hdr_reset(&s->target[t]);
    for (;;) {
        size_t t = SIZE_MAX;
        for (size_t k = 0; k < m->ntargets; k++)
            if (s->live[k] && (t == SIZE_MAX || s->next_ns[k] < s->next_ns[t]))
                t = k;
        if (t == SIZE_MAX)
            break;
        uint64_t a = s->next_ns[t];
        int64_t service = (int64_t)llround((double)draw(service_of(m, t), &rng) * m->scale);
        int64_t resp = servers_take(&s->srv, (int64_t)a, service > 0 ? service : 1);
        if (a >= m->warmup_ns) {
            hdr_record(&s->all, resp, 1);
            if (s->target[t].counts)
                hdr_record(&s->target[t], resp, 1);
        }
        s->live[t] = sched_next(&s->sched[t], &s->next_ns[t]);
    }
}

/* A term's statistic on the simulated window (ms; NAN without samples), as
 * record_threshold_eval computes it. */
static double term_value(const struct sim *s, const struct run_threshold *t)
{
    const struct hdr *h = t->target == THR_ALL_TARGETS ? &s->all : &s->target[t->target];
    if (!h->counts || h->total_count <= 0)
        return NAN;
    if (strcmp(t->stat, "p") == 0)
        return (double)hdr_value_at_percentile(h, t->pct) / 1e6;
    if (strcmp(t->stat, "mean") == 0)
        return hdr_mean(h) / 1e6;
    if (strcmp(t->stat, "stdev") == 0)
        return hdr_stdev(h) / 1e6;
    if (strcmp(t->stat, "min") == 0)
        return (double)hdr_min(h) / 1e6;
    return (double)hdr_max(h) / 1e6;
}

static bool term_pass(const struct run_threshold *t, double v)
{
    if (isnan(v))
        return false; /* a statistic without samples fails, as a step's does */
    switch (t->op) {
    case THR_LT:
        return v < t->value;
    case THR_LE:
        return v <= t->value;
    case THR_GT:
        return v > t->value;
    case THR_GE:
        return v >= t->value;
    case THR_EQ:
        return v == t->value;
    case THR_NE:
    default:
        return v != t->value;
    }
}

static int first_term(const struct capacity_queue_model *m)
{
    for (size_t i = 0; i < m->nslo; i++)
        if (capacity_queue_predicts(&m->slo[i]))
            return (int)i;
    return -1;
}

static int sim_init(struct sim *s, const struct capacity_queue_model *m)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    if (!m->ntargets || m->ntargets > RUN_MAX_TARGETS || !m->all || !m->all->n || m->servers < 1 ||
        m->servers > CAPACITY_QUEUE_MAX_SERVERS || !(m->scale > 0) || !isfinite(m->scale) || first_term(m) < 0)
        return KNEE_EINVAL;
    s->srv.n = m->servers;
    s->srv.free_ns = xcalloc(m->servers, sizeof *s->srv.free_ns);
    s->target = xcalloc(m->ntargets, sizeof *s->target);
    s->sched = xcalloc(m->ntargets, sizeof *s->sched);
    s->next_ns = xcalloc(m->ntargets, sizeof *s->next_ns);
    s->live = xcalloc(m->ntargets, sizeof *s->live);
    hdr_init(&s->all, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    for (size_t i = 0; i < m->nslo; i++) {
        const struct run_threshold *t = &m->slo[i];
        if (capacity_queue_predicts(t) && t->target >= 0 && (size_t)t->target < m->ntargets &&
            !s->target[t->target].counts)
            hdr_init(&s->target[t->target], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    }
    return 0;
}

static void sim_release(struct sim *s)
{
    hdr_release(&s->all);
    for (size_t t = 0; s->target && t < s->m->ntargets; t++)
        hdr_release(&s->target[t]);
    free(s->target);
    free(s->srv.free_ns);
    free(s->sched);
    free(s->next_ns);
    free(s->live);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Windows at rate: as many as asked, fewer (odd, at least one) when they would simulate more
 * than CAPACITY_QUEUE_MAX_ARRIVALS requests. */
static size_t windows_at(const struct capacity_queue_model *m, double rate)
{
    size_t k = m->windows ? m->windows : CAPACITY_QUEUE_WINDOWS;
    double per = rate * (double)(m->warmup_ns + m->window_ns) / 1e9;
    if (per * (double)k > CAPACITY_QUEUE_MAX_ARRIVALS)
        k = per >= CAPACITY_QUEUE_MAX_ARRIVALS ? 1 : (size_t)(CAPACITY_QUEUE_MAX_ARRIVALS / per);
    if (k > 1 && k % 2 == 0)
        k--;
    return k ? k : 1;
}

static int point(struct sim *s, double rate, struct capacity_queue_point *out)
{
    const struct capacity_queue_model *m = s->m;
    memset(out, 0, sizeof *out);
    out->rate = rate;
    out->value_ms = NAN;
    if (!(rate > 0) || !isfinite(rate))
        return KNEE_EINVAL;
    int shown = first_term(m);
    out->windows = windows_at(m, rate);
    double *v = xcalloc(out->windows, sizeof *v);
    size_t nv = 0;
    for (size_t w = 0; w < out->windows; w++) {
        simulate(s, rate, w);
        bool pass = true;
        for (size_t i = 0; i < m->nslo; i++) {
            const struct run_threshold *t = &m->slo[i];
            if (!capacity_queue_predicts(t))
                continue;
            double x = term_value(s, t);
            pass &= term_pass(t, x);
            if ((int)i == shown && !isnan(x))
                v[nv++] = x;
        }
        out->held_by += pass;
    }
    out->held = 2 * out->held_by > out->windows;
    if (nv) {
        qsort(v, nv, sizeof *v, cmp_double);
        out->value_ms = nv % 2 ? v[nv / 2] : (v[nv / 2 - 1] + v[nv / 2]) / 2;
    }
    free(v);
    return 0;
}

int capacity_queue_at(const struct capacity_queue_model *m, double rate, struct capacity_queue_point *out)
{
    struct sim s;
    int rc = sim_init(&s, m);
    if (rc == 0)
        rc = point(&s, rate, out);
    else {
        memset(out, 0, sizeof *out);
        out->rate = rate;
        out->value_ms = NAN;
    }
    sim_release(&s);
    return rc;
}

static double search(struct sim *s, double hi, bool *at_hi)
{
    struct capacity_queue_point p;
    *at_hi = false;
    if (point(s, hi, &p) != 0)
        return NAN;
    if (p.held) {
        *at_hi = true;
        return hi;
    }
    double lo = 0, top = hi;
    for (int i = 0; i < CAPACITY_QUEUE_SEARCH_STEPS; i++) {
        double mid = (lo + top) / 2;
        if (point(s, mid, &p) != 0)
            return NAN;
        if (p.held)
            lo = mid;
        else
            top = mid;
    }
    return lo;
}

double capacity_queue_capacity(const struct capacity_queue_model *m, double hi, bool *at_hi)
{
    struct sim s;
    bool dummy;
    if (!at_hi)
        at_hi = &dummy;
    *at_hi = false;
    if (!(hi > 0) || !isfinite(hi))
        return NAN;
    double c = sim_init(&s, m) == 0 ? search(&s, hi, at_hi) : NAN;
    sim_release(&s);
    return c;
}

/* ---- the queue model of a measurement ---- */

/* The closed loop's first step: its latencies (of the SLO's group, per target and merged) are the
 * service times of the queue model (capacity/queue.c). */
void capacity_service_keep(const struct capacity_config *cfg, const struct run_record *rr, struct capacity_result *res)
{
    if (res->service)
        return;
    int g = capacity_latency_group(cfg->slo, cfg->nslo);
    capacity_service_from_hdr(g == THR_GROUP_ALL ? &rr->all.latency_all : &rr->all.latency[g], &res->service_all);
    res->service = xcalloc(rr->ntargets ? rr->ntargets : 1, sizeof *res->service);
    res->nservice = rr->ntargets;
    for (size_t i = 0; i < rr->ntargets; i++) {
        const struct run_target_result *t = &rr->targets[i];
        capacity_service_from_hdr(g == THR_GROUP_ALL ? &t->latency_all : &t->latency[g], &res->service[i]);
    }
}

const char *capacity_regime_name(enum capacity_regime g)
{
    return g == CAPACITY_REGIME_LATENCY      ? "latency-bound"
           : g == CAPACITY_REGIME_THROUGHPUT ? "throughput-bound"
                                             : "undecided";
}

/* The closed loop's highest throughput over the steps that ran, and its step (-1: none). */
static double saturation(const struct capacity_cross *x, int *step)
{
    double best = NAN;
    *step = -1;
    for (size_t k = 0; k < x->nsteps; k++) {
        const struct capacity_step *s = &x->step[k].s;
        if (s->ran && isfinite(s->achieved) && s->achieved > 0 && (*step < 0 || s->achieved > best)) {
            best = s->achieved;
            *step = (int)k;
        }
    }
    return best;
}

/* The model's input from cfg and r (the servers and scale already in q). */
static void model_of(const struct capacity_config *cfg, const struct capacity_result *r, const struct capacity_queue *q,
                     struct capacity_queue_model *m)
{
    struct capacity_load b;
    capacity_load_of(cfg, &b);
    memset(m, 0, sizeof *m);
    m->poisson = b.arrivals == RUN_ARRIVALS_POISSON;
    m->seed = b.seed;
    m->ntargets = b.ntargets;
    double sum = 0;
    for (size_t t = 0; t < b.ntargets; t++)
        sum += b.targets[t].weight > 0 ? b.targets[t].weight : 1;
    for (size_t t = 0; t < b.ntargets; t++)
        m->share[t] = (b.targets[t].weight > 0 ? b.targets[t].weight : 1) / sum;
    m->service = r->nservice == b.ntargets ? r->service : NULL;
    m->all = &r->service_all;
    m->servers = q->servers;
    m->scale = q->scale;
    m->warmup_ns = cfg->warmup_ns;
    m->window_ns = cfg->step_ns;
    m->slo = cfg->slo;
    m->nslo = cfg->nslo;
    /* every repetition of the ladder plans the same arrivals (one --seed): its windows differ
     * only by the service, and so do the model's */
    m->replay = true;
}

/* The servers and the scale from the closed loop (Little's law at its saturation: the requests in
 * service at once are its highest throughput times one request's service time). NULL, or why not. */
static const char *fit(const struct capacity_config *cfg, const struct capacity_result *r, struct capacity_queue *q)
{
    const struct capacity_cross *x = &r->cross;
    for (size_t i = 0; i < cfg->nslo && q->term < 0; i++)
        if (capacity_queue_predicts(&cfg->slo[i]))
            q->term = (int)i;
    q->no_latency_term = q->term < 0;
    if (q->term >= 0) {
        const struct run_threshold *t = &cfg->slo[q->term];
        if (strcmp(t->stat, "p") == 0)
            snprintf(q->term_stat, sizeof q->term_stat, "p%g", t->pct);
        else
            snprintf(q->term_stat, sizeof q->term_stat, "%s", t->stat);
    }
    if (!x->ran)
        return "no cross-check";
    if (q->term < 0)
        return "the SLO bounds no response time";
    if (!x->nsteps || !r->service_all.n)
        return "the closed loop's first step has no latencies to draw service times from";
    int sat_step;
    q->saturation = saturation(x, &sat_step);
    if (sat_step < 0)
        return "the closed loop completed nothing";
    q->connections = x->step[0].connections;
    q->one_conn_ms = r->service_all.mean_ms;
    double busy = q->saturation * q->one_conn_ms / 1e3;
    double c = fmax(1, round(busy));
    if (!(busy > 0) || c > CAPACITY_QUEUE_MAX_SERVERS)
        return "the closed loop's throughput and latency give no server count";
    q->servers = (uint32_t)c;
    q->scale = c / busy;
    q->service_mean_ms = r->service_all.mean_ms * q->scale;
    q->service_p50_ms = r->service_all.p50_ms * q->scale;
    q->service_p99_ms = r->service_all.p99_ms * q->scale;
    return NULL;
}

void capacity_queue_run(const struct capacity_config *cfg, struct capacity_result *r)
{
    struct capacity_queue *q = &r->cross.queue;
    memset(q, 0, sizeof *q);
    q->term = -1;
    q->cap_index = -1;
    q->capacity = NAN;
    q->one_conn_ms = q->saturation = q->scale = q->service_mean_ms = NAN;
    q->service_p50_ms = q->service_p99_ms = NAN;
    const char *why = fit(cfg, r, q);
    struct capacity_queue_model m;
    struct sim s;
    memset(&s, 0, sizeof s);
    if (!why) {
        model_of(cfg, r, q, &m);
        q->poisson = m.poisson;
        q->seed = m.seed;
        q->window_s = (double)cfg->step_ns / 1e9;
        q->warmup_s = (double)cfg->warmup_ns / 1e9;
        if (sim_init(&s, &m) != 0)
            why = "no model could be built from the closed loop";
    }
    if (why) {
        if (s.m)
            sim_release(&s);
        snprintf(q->why_not, sizeof q->why_not, "%s", why);
        return;
    }
    q->windows = windows_at(&m, r->rates[r->nrates - 1]);
    bool climbing = true;
    for (size_t k = 0; k < r->nrates; k++) {
        point(&s, r->rates[k], &q->rung[k]);
        climbing &= q->rung[k].held;
        if (climbing)
            q->cap_index = (int)k;
    }
    q->capacity = search(&s, 2 * q->saturation, &q->capacity_at_hi);
    sim_release(&s);
    q->ran = isfinite(q->capacity);
    if (!q->ran)
        snprintf(q->why_not, sizeof q->why_not, "the simulation failed");
}
