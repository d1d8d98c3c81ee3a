/* run_config.on_live: the run's cumulative numbers once per second, for a metrics endpoint.
 *
 * Nothing is recorded for it on the request path. Each thread already keeps its own totals
 * (struct target_rt: counts, HdrHistograms of latency by group, service, lag and TTFB); once per
 * second, when it hands its interval to the engine (engine_publish), it only COPIES them: the
 * counts, and each HdrHistogram's recorded range (a memcpy of the used counters, into buffers
 * that grow with the range and are then reused) into a struct live_snap outside the lock, then
 * swaps that snapshot with its posted one under the lock. Every conversion happens on the main
 * thread: after each merged interval it takes the fresh posts (a pointer swap under the lock),
 * and outside the lock adds every thread's ranges into one scratch HdrHistogram per target and
 * kind and converts that to classic buckets (prom_add_hdr) and, with run_config.live_native,
 * to native histograms (native_from_hdr), then calls on_live. A load thread's publish thus
 * costs a few memcpy instead of 0.1-0.4 ms of conversions per target (docs/INTERNALS.md).
 * A thread's totals only grow, and a finished thread's last post stays, so every sum is
 * monotonic and the last one (every thread finished) is the run's total, the same requests
 * the result counts; its histograms are the conversions of the result's merged ones. */
#include "load/internal.h"

#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The recorded range of one HdrHistogram: counts[0..n) are its counters first..first+n-1. */
struct live_range {
    int64_t *counts; /* grown to the widest range seen, then reused (cap counters) */
    size_t cap, first, n;
    int64_t total, min_value, max_value;
};

/* The histograms a snapshot keeps per target: latency by group, then service, lag, TTFB. */
#define LIVE_SERVICE RUN_GROUP_COUNT
#define LIVE_LAG (RUN_GROUP_COUNT + 1)
#define LIVE_TTFB (RUN_GROUP_COUNT + 2)
#define LIVE_HISTS (RUN_GROUP_COUNT + 3)

/* One target's totals as a thread copied them (no conversion). */
struct live_snap {
    struct run_counts counts;
    uint64_t bytes_sent, bytes_received, in_flight, queued;
    struct run_status_counts status;
    uint64_t conns_proto[3]; /* connections ready by protocol: http/1.1, h2, h3 */
    struct live_range h[LIVE_HISTS];
};

struct live_thread {
    struct live_snap *mine;   /* the thread's (written outside the lock) */
    struct live_snap *posted; /* the last one handed over (swapped under e->mu) */
    struct live_snap *taken;  /* the main thread's copy of the last post */
    bool fresh;               /* posted is newer than taken (under e->mu) */
};

struct live {
    size_t nt, nbounds;
    double bounds_ns[PROM_MAX_BOUNDS];
    double lag_limit_ns;
    bool native;
    struct live_thread *threads; /* one per worker */
    struct run_live_target *sum; /* the main thread's */
    uint64_t lag_ok;             /* lag values whose HDR bucket ends at or below the lag limit, all threads */
    struct hdr scratch;          /* the main thread's: the threads' ranges of one histogram, added */
};

/* The native histograms of a struct run_live_target, in a fixed order. */
#define NATIVES 4
static struct native_hist *natives(struct run_live_target *t, int k)
{
    return k == 0 ? &t->latency_native : k == 1 ? &t->service_native : k == 2 ? &t->lag_native : &t->ttfb_native;
}

static void snaps_free(struct live_snap *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        for (int k = 0; k < LIVE_HISTS; k++)
            free(s[i].h[k].counts);
    free(s);
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
    l->native = cfg->live_native;
    for (size_t i = 0; i < n; i++)
        l->bounds_ns[i] = (double)cfg->live_bounds_ns[i];
    l->lag_limit_ns = (double)(e->lag_limit_ns + e->timer_slack_ns); /* on time: within the slack + the limit */
    l->threads = xcalloc(e->nworkers, sizeof *l->threads);
    for (uint32_t w = 0; w < e->nworkers; w++) {
        l->threads[w].mine = xcalloc(l->nt, sizeof *l->threads[w].mine);
        l->threads[w].posted = xcalloc(l->nt, sizeof *l->threads[w].posted);
        l->threads[w].taken = xcalloc(l->nt, sizeof *l->threads[w].taken);
    }
    l->sum = xcalloc(l->nt, sizeof *l->sum);
    for (size_t i = 0; i < l->nt; i++)
        for (int k = 0; k < NATIVES; k++)
            native_init(natives(&l->sum[i], k), NATIVE_SCHEMA);
    if (hdr_init(&l->scratch, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS)) /* the threads' layout */
        abort();
    e->live = l;
    return 0;
}

void live_release(struct engine *e)
{
    struct live *l = e->live;
    if (!l)
        return;
    for (uint32_t w = 0; w < e->nworkers; w++) {
        snaps_free(l->threads[w].mine, l->nt);
        snaps_free(l->threads[w].posted, l->nt);
        snaps_free(l->threads[w].taken, l->nt);
    }
    free(l->threads);
    for (size_t i = 0; i < l->nt; i++)
        for (int k = 0; k < NATIVES; k++)
            native_release(natives(&l->sum[i], k));
    free(l->sum);
    hdr_release(&l->scratch);
    free(l);
    e->live = NULL;
}

/* On the main thread: make room for cap counters in r, keeping its content; the new memory is
 * written once here (paged in), so the load thread that later copies into it takes no page
 * faults. */
static void range_reserve(struct live_range *r, size_t cap)
{
    int64_t *c = xmalloc(cap * sizeof *c);
    memset(c, 0, cap * sizeof *c);
    if (r->n)
        memcpy(c, r->counts, r->n * sizeof *c);
    free(r->counts);
    r->counts = c;
    r->cap = cap;
}

/* r = h's recorded range (as prom_add_hdr visits it: from the smallest value, 0 when zeros
 * were recorded, to the largest). Allocates only when the range is wider than ever before. */
static void range_copy(struct live_range *r, const struct hdr *h)
{
    r->n = 0;
    r->total = h->counts ? h->total_count : 0;
    r->min_value = h->min_value;
    r->max_value = h->max_value;
    if (r->total <= 0)
        return;
    size_t first = h->counts[0] || h->min_value == INT64_MAX ? 0 : hdr_index_of(h, h->min_value);
    size_t last = hdr_index_of(h, h->max_value);
    if (last >= h->counts_len)
        last = h->counts_len - 1;
    if (last < first)
        return;
    size_t n = last - first + 1;
    if (n > r->cap) { /* rare: the main thread keeps every buffer it holds at twice its range */
        r->cap = 2 * n < h->counts_len ? 2 * n : h->counts_len;
        free(r->counts); /* overwritten below: nothing to keep, nothing to page in beyond n */
        r->counts = xmalloc(r->cap * sizeof *r->counts);
    }
    memcpy(r->counts, h->counts + first, n * sizeof *r->counts);
    r->first = first;
    r->n = n;
}

void live_snapshot(struct worker *w)
{
    struct live *l = w->e->live;
    struct live_thread *lt = &l->threads[w->index];
    for (size_t i = 0; i < l->nt; i++) {
        const struct target_rt *t = &w->t[i];
        struct live_snap *o = &lt->mine[i];
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
        for (int g = 0; g < RUN_GROUP_COUNT; g++)
            range_copy(&o->h[g], &t->latency[g]);
        range_copy(&o->h[LIVE_SERVICE], &t->service);
        range_copy(&o->h[LIVE_LAG], &t->lag);
        range_copy(&o->h[LIVE_TTFB], &t->ttfb);
    }
}

void live_post(struct worker *w)
{
    struct live_thread *lt = &w->e->live->threads[w->index];
    struct live_snap *s = lt->posted;
    lt->posted = lt->mine; /* the thread writes its next snapshot over the older buffer */
    lt->mine = s;
    lt->fresh = true;
}

/* Under e->mu (or with the threads joined): take every thread's fresh post. */
static void take_posts(struct engine *e)
{
    struct live *l = e->live;
    for (uint32_t w = 0; w < e->nworkers; w++) {
        struct live_thread *lt = &l->threads[w];
        if (!lt->fresh)
            continue; /* no post since the last take: its last one stays in taken */
        struct live_snap *s = lt->taken;
        lt->taken = lt->posted;
        lt->posted = s;
        lt->fresh = false;
    }
}

/* l->scratch += r, widening [*lo, *hi] (the scratch's used counters) to r's. */
static void scratch_add(struct live *l, const struct live_range *r, size_t *lo, size_t *hi)
{
    struct hdr *h = &l->scratch;
    if (r->total <= 0)
        return;
    for (size_t i = 0; i < r->n; i++)
        h->counts[r->first + i] += r->counts[i];
    if (r->n && r->first < *lo)
        *lo = r->first;
    if (r->n && r->first + r->n - 1 > *hi)
        *hi = r->first + r->n - 1;
    h->total_count += r->total;
    if (r->min_value < h->min_value)
        h->min_value = r->min_value;
    if (r->max_value > h->max_value)
        h->max_value = r->max_value;
}

/* Convert the scratch (the threads' histograms k0..k1 of target i, added) into p and, when
 * asked, nat; then zero the scratch's used counters for the next. Returns the lag-limit count
 * when want_ok (lag). */
static uint64_t convert(struct live *l, size_t i, int k0, int k1, struct prom_hist *p, struct native_hist *nat,
                        uint32_t nworkers, bool want_ok)
{
    struct hdr *h = &l->scratch;
    size_t lo = SIZE_MAX, hi = 0;
    for (uint32_t w = 0; w < nworkers; w++)
        for (int k = k0; k <= k1; k++)
            scratch_add(l, &l->threads[w].taken[i].h[k], &lo, &hi);
    prom_init(p, l->bounds_ns, l->nbounds);
    prom_add_hdr(p, h);
    native_reset(nat);
    if (l->native)
        native_add_hdr(nat, h, 1e-9);
    uint64_t ok = 0;
    if (want_ok) {
        struct prom_hist within;
        prom_init(&within, &l->lag_limit_ns, 1);
        prom_add_hdr(&within, h);
        ok = within.counts[0];
    }
    if (lo != SIZE_MAX)
        memset(h->counts + lo, 0, (hi - lo + 1) * sizeof *h->counts);
    h->total_count = 0;
    h->min_value = INT64_MAX;
    h->max_value = 0;
    return ok;
}

/* Sum the taken posts of every thread into l->sum and convert their histograms (main thread,
 * outside the lock). */
static void sum_posts(struct engine *e)
{
    struct live *l = e->live;
    l->lag_ok = 0;
    for (size_t i = 0; i < l->nt; i++) {
        struct run_live_target *d = &l->sum[i];
        memset(&d->counts, 0, sizeof d->counts);
        memset(&d->status, 0, sizeof d->status);
        d->bytes_sent = d->bytes_received = d->in_flight = d->queued = 0;
        memset(d->conns_proto, 0, sizeof d->conns_proto);
        for (uint32_t w = 0; w < e->nworkers; w++) {
            const struct live_snap *s = &l->threads[w].taken[i];
            record_counts_add(&d->counts, &s->counts);
            d->bytes_sent += s->bytes_sent;
            d->bytes_received += s->bytes_received;
            d->in_flight += s->in_flight;
            d->queued += s->queued;
            record_status_add(&d->status, &s->status);
            for (size_t k = 0; k < 3; k++)
                d->conns_proto[k] += s->conns_proto[k];
        }
        convert(l, i, 0, RUN_GROUP_COUNT - 1, &d->latency, &d->latency_native, e->nworkers, false);
        convert(l, i, LIVE_SERVICE, LIVE_SERVICE, &d->service, &d->service_native, e->nworkers, false);
        l->lag_ok += convert(l, i, LIVE_LAG, LIVE_LAG, &d->lag, &d->lag_native, e->nworkers, e->cfg->plan.open_loop);
        convert(l, i, LIVE_TTFB, LIVE_TTFB, &d->ttfb, &d->ttfb_native, e->nworkers, false);
    }
    /* Grow the taken buffers here, off the load threads: each returns to its thread at the
     * next post, with room for its range to double. */
    for (uint32_t w = 0; w < e->nworkers; w++)
        for (size_t i = 0; i < l->nt; i++)
            for (int k = 0; k < LIVE_HISTS; k++) {
                struct live_range *r = &l->threads[w].taken[i].h[k];
                size_t want = 2 * r->n < l->scratch.counts_len ? 2 * r->n : l->scratch.counts_len;
                if (r->n && r->cap < want)
                    range_reserve(r, want);
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
    take_posts(e); /* pointer swaps only: the conversions run outside the lock */
    pthread_mutex_unlock(&e->mu);
    sum_posts(e);
    call(e, elapsed_s, false, limited_so_far(e));
}

void live_final(struct engine *e, const struct run_record *res)
{
    if (!e->live)
        return;
    take_posts(e); /* the threads are joined: nothing else touches the posts */
    sum_posts(e);
    call(e, res->elapsed_s, true, res->generator_limited);
}
