/* run_config.on_live: the run's cumulative numbers once per second, for a metrics endpoint.
 *
 * Nothing is recorded for it on the request path. Each thread already keeps its own totals
 * (struct target_rt: counts, HdrHistograms of latency by group, service, lag and TTFB); once per
 * second, when it hands its interval to the engine (engine_publish), it turns them into one
 * struct run_live_target per target (outside the lock: counts copied, histograms converted by
 * prom_add_hdr over their recorded range only) and posts a copy under the lock. After each
 * merged interval the main thread sums the last posts of every thread and calls on_live.
 * A thread's totals only grow, and a finished thread's last post stays, so every sum is
 * monotonic and the last one (every thread finished) is the run's total, the same requests
 * the result counts. With run_config.live_native, the same HdrHistograms are also converted
 * to native histograms (native_add_hdr) at the same moment; those own heap memory, so posts
 * and sums copy them (native_copy/native_add, which reuse the memory once grown) instead of
 * sharing pointers. */
#include "load/internal.h"

#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct live_thread {
    struct run_live_target *mine;   /* the thread's snapshot (its own memory) */
    struct run_live_target *posted; /* the last one handed over (under e->mu) */
    uint64_t mine_lag_ok, posted_lag_ok;
};

struct live {
    size_t nt, nbounds;
    double bounds_ns[PROM_MAX_BOUNDS];
    double lag_limit_ns;
    struct live_thread *threads; /* one per worker */
    struct run_live_target *sum; /* the main thread's */
    uint64_t lag_ok;             /* lag values whose HDR bucket ends at or below the lag limit, all threads */
};

/* The native histograms of a struct run_live_target, in a fixed order. */
#define NATIVES 4
static struct native_hist *natives(struct run_live_target *t, int k)
{
    return k == 0 ? &t->latency_native : k == 1 ? &t->service_native : k == 2 ? &t->lag_native : &t->ttfb_native;
}

static void natives_init(struct run_live_target *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < NATIVES; k++)
            native_init(natives(&t[i], k), NATIVE_SCHEMA);
}

static void natives_release(struct run_live_target *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++)
        for (int k = 0; k < NATIVES; k++)
            native_release(natives(&t[i], k));
}

static const struct native_hist *natives_of(const struct run_live_target *t, int k)
{
    return k == 0 ? &t->latency_native : k == 1 ? &t->service_native : k == 2 ? &t->lag_native : &t->ttfb_native;
}

/* *dst = *src, the native histograms copied into dst's own memory. */
static void target_copy(struct run_live_target *dst, const struct run_live_target *src)
{
    struct native_hist keep[NATIVES];
    for (int k = 0; k < NATIVES; k++)
        keep[k] = *natives(dst, k);
    *dst = *src;
    for (int k = 0; k < NATIVES; k++) {
        *natives(dst, k) = keep[k];
        native_copy(natives(dst, k), natives_of(src, k));
    }
}

int live_init(struct engine *e, char *err, size_t errlen)
{
    const struct run_config *cfg = e->cfg;
    if (!cfg->on_live)
        return 0;
    size_t n = cfg->live_nbounds;
    if (n == 0 || n > PROM_MAX_BOUNDS || !cfg->live_bounds_ns)
        return knee_fail(err, errlen, KNEE_EINVAL, "run_config.live_bounds_ns: 1..%d bounds", PROM_MAX_BOUNDS);
    for (size_t i = 0; i < n; i++)
        if (cfg->live_bounds_ns[i] <= 0 || (i && cfg->live_bounds_ns[i] <= cfg->live_bounds_ns[i - 1]))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "run_config.live_bounds_ns: bounds must be > 0 and strictly increasing");
    struct live *l = xcalloc(1, sizeof *l);
    l->nt = e->nt;
    l->nbounds = n;
    for (size_t i = 0; i < n; i++)
        l->bounds_ns[i] = (double)cfg->live_bounds_ns[i];
    l->lag_limit_ns = (double)(e->lag_limit_ns + e->timer_slack_ns); /* on time: within the slack + the limit */
    l->threads = xcalloc(e->nworkers, sizeof *l->threads);
    for (uint32_t w = 0; w < e->nworkers; w++) {
        l->threads[w].mine = xcalloc(l->nt, sizeof *l->threads[w].mine);
        l->threads[w].posted = xcalloc(l->nt, sizeof *l->threads[w].posted);
        for (size_t t = 0; t < l->nt; t++) {
            struct run_live_target *p = &l->threads[w].posted[t];
            prom_init(&p->latency, l->bounds_ns, n);
            prom_init(&p->service, l->bounds_ns, n);
            prom_init(&p->lag, l->bounds_ns, n);
            prom_init(&p->ttfb, l->bounds_ns, n);
        }
        natives_init(l->threads[w].mine, l->nt);
        natives_init(l->threads[w].posted, l->nt);
    }
    l->sum = xcalloc(l->nt, sizeof *l->sum);
    natives_init(l->sum, l->nt);
    e->live = l;
    return 0;
}

void live_release(struct engine *e)
{
    struct live *l = e->live;
    if (!l)
        return;
    for (uint32_t w = 0; w < e->nworkers; w++) {
        natives_release(l->threads[w].mine, l->nt);
        natives_release(l->threads[w].posted, l->nt);
        free(l->threads[w].mine);
        free(l->threads[w].posted);
    }
    free(l->threads);
    natives_release(l->sum, l->nt);
    free(l->sum);
    free(l);
    e->live = NULL;
}

void live_snapshot(struct worker *w)
{
    struct live *l = w->e->live;
    struct live_thread *lt = &l->threads[w->index];
    lt->mine_lag_ok = 0;
    for (size_t i = 0; i < l->nt; i++) {
        const struct target_rt *t = &w->t[i];
        struct run_live_target *o = &lt->mine[i];
        o->counts = t->counts[0];
        o->bytes_sent = t->bytes_out;
        o->bytes_received = t->counts[0].bytes_in + t->counts[1].bytes_in;
        /* in flight: sent and not yet ended, warm-up requests included */
        uint64_t sent = t->counts[0].sent + t->counts[1].sent, ended = 0;
        for (int k = 0; k < OUTCOME_COUNT; k++)
            if (k != OUTCOME_DROPPED)
                ended += t->counts[0].outcome[k] + t->counts[1].outcome[k];
        o->in_flight = sent > ended ? sent - ended : 0;
        o->queued = t->qlen;
        o->status = t->status;
        o->conns_proto[0] = t->pc.http1;
        o->conns_proto[1] = t->pc.h2;
        o->conns_proto[2] = t->pc.h3;
        prom_init(&o->latency, l->bounds_ns, l->nbounds);
        prom_init(&o->service, l->bounds_ns, l->nbounds);
        prom_init(&o->lag, l->bounds_ns, l->nbounds);
        prom_init(&o->ttfb, l->bounds_ns, l->nbounds);
        for (int g = 0; g < RUN_GROUP_COUNT; g++)
            if (t->latency[g].counts)
                prom_add_hdr(&o->latency, &t->latency[g]);
        prom_add_hdr(&o->service, &t->service);
        prom_add_hdr(&o->lag, &t->lag);
        prom_add_hdr(&o->ttfb, &t->ttfb);
        if (w->e->cfg->live_native) {
            native_reset(&o->latency_native);
            for (int g = 0; g < RUN_GROUP_COUNT; g++)
                if (t->latency[g].counts)
                    native_add_hdr(&o->latency_native, &t->latency[g], 1e-9);
            native_from_hdr(&o->service_native, &t->service, 1e-9);
            native_from_hdr(&o->lag_native, &t->lag, 1e-9);
            native_from_hdr(&o->ttfb_native, &t->ttfb, 1e-9);
        }
        if (w->e->cfg->plan.open_loop) {
            struct prom_hist within;
            prom_init(&within, &l->lag_limit_ns, 1);
            prom_add_hdr(&within, &t->lag);
            lt->mine_lag_ok += within.counts[0];
        }
    }
}

void live_post(struct worker *w)
{
    struct live *l = w->e->live;
    struct live_thread *lt = &l->threads[w->index];
    for (size_t i = 0; i < l->nt; i++)
        target_copy(&lt->posted[i], &lt->mine[i]);
    lt->posted_lag_ok = lt->mine_lag_ok;
}

static void hist_add(struct prom_hist *dst, const struct prom_hist *src)
{
    for (size_t i = 0; i <= src->nbounds; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->sum += src->sum;
}

/* Sum the posts of every thread into l->sum (under e->mu). */
static void sum_posts(struct engine *e)
{
    struct live *l = e->live;
    for (size_t i = 0; i < l->nt; i++) { /* zero, keeping the native histograms' memory */
        struct native_hist keep[NATIVES];
        for (int k = 0; k < NATIVES; k++) {
            keep[k] = *natives(&l->sum[i], k);
            native_reset(&keep[k]);
        }
        memset(&l->sum[i], 0, sizeof l->sum[i]);
        for (int k = 0; k < NATIVES; k++)
            *natives(&l->sum[i], k) = keep[k];
    }
    l->lag_ok = 0;
    for (size_t i = 0; i < l->nt; i++) {
        prom_init(&l->sum[i].latency, l->bounds_ns, l->nbounds);
        prom_init(&l->sum[i].service, l->bounds_ns, l->nbounds);
        prom_init(&l->sum[i].lag, l->bounds_ns, l->nbounds);
        prom_init(&l->sum[i].ttfb, l->bounds_ns, l->nbounds);
    }
    for (uint32_t w = 0; w < e->nworkers; w++) {
        const struct live_thread *lt = &l->threads[w];
        l->lag_ok += lt->posted_lag_ok;
        for (size_t i = 0; i < l->nt; i++) {
            struct run_live_target *d = &l->sum[i];
            const struct run_live_target *s = &lt->posted[i];
            record_counts_add(&d->counts, &s->counts);
            d->bytes_sent += s->bytes_sent;
            d->bytes_received += s->bytes_received;
            d->in_flight += s->in_flight;
            d->queued += s->queued;
            record_status_add(&d->status, &s->status);
            for (size_t k = 0; k < 3; k++)
                d->conns_proto[k] += s->conns_proto[k];
            hist_add(&d->latency, &s->latency);
            hist_add(&d->service, &s->service);
            hist_add(&d->lag, &s->lag);
            hist_add(&d->ttfb, &s->ttfb);
            for (int k = 0; k < NATIVES; k++)
                native_add(natives(d, k), natives_of(s, k));
        }
    }
}

/* The summary's GENERATOR-LIMITED test (result.c) on the numbers so far: an open loop that
 * sent fewer than RUN_SEND_RATE_FLOOR of its planned requests on time (those still waiting for
 * a connection are not late yet), or whose lag p99 (HdrHistogram's: the highest equivalent
 * value of the bucket holding rank ceil(0.99 n)) is above the lag limit. */
static bool limited_so_far(const struct engine *e)
{
    const struct live *l = e->live;
    if (!e->cfg->plan.open_loop)
        return false;
    uint64_t planned = 0, on_time = 0, queued = 0, lag_n = 0;
    for (size_t i = 0; i < l->nt; i++) {
        planned += l->sum[i].counts.planned;
        on_time += l->sum[i].counts.sent_on_time;
        queued += l->sum[i].queued;
        lag_n += l->sum[i].lag.total;
    }
    if (!planned)
        return false;
    if ((double)(on_time + queued) < RUN_SEND_RATE_FLOOR * (double)planned)
        return true;
    double rank = ceil(nextafter(99.0, 0.0) * (double)lag_n / 100.0);
    return lag_n && (double)l->lag_ok < (rank < 1 ? 1 : rank);
}

static void call(struct engine *e, double elapsed_s, bool final, bool limited)
{
    const struct live *l = e->live;
    const struct run_config *cfg = e->cfg;
    struct run_live live = {
        .elapsed_s = elapsed_s,
        .warmup = !final && cfg->plan.warmup_ns && elapsed_s * 1e9 < (double)cfg->plan.warmup_ns,
        .final = final,
        .generator_limited = limited,
        .ntargets = l->nt,
        .targets = l->sum,
    };
    cfg->on_live(cfg->live_ctx, &live);
}

void live_tick(struct engine *e, double elapsed_s)
{
    if (!e->live)
        return;
    pthread_mutex_lock(&e->mu);
    sum_posts(e);
    pthread_mutex_unlock(&e->mu);
    call(e, elapsed_s, false, limited_so_far(e));
}

void live_final(struct engine *e, const struct run_record *res)
{
    if (!e->live)
        return;
    sum_posts(e); /* the threads are joined: nothing else touches the posts */
    call(e, res->elapsed_s, true, res->generator_limited);
}
