/* The hierarchical (two-stage) bootstrap behind knee compare's intervals.
 *
 * Why two stages: a run's requests are not independent draws from "the server's latency".
 * Each run has its own state (caches, JIT, placement, the other tenants of the machine), so
 * repetitions differ by more than their requests' sampling noise, and a bootstrap over the
 * pooled requests only sees the latter: its intervals are too narrow and it declares winners
 * by noise (tests/unit/test_compare.c measures how often). Resampling the repetitions first
 * puts the run-to-run spread into the interval; resampling requests within each drawn
 * repetition keeps the within-run noise (Davison & Hinkley, "Bootstrap Methods and their
 * Application", 1997, §3.8, the two-stage strategy).
 *
 * Each replicate of a side: draw R of its R repetitions with replacement; give every value of
 * each drawn repetition a Poisson(count) weight (the Poisson bootstrap: the same limit as
 * the multinomial resample of the repetition's n requests, Hanley & MacGibbon 2006, and
 * O(distinct values) instead of O(n)); pool the weights on the side's grid of values and take
 * the nearest-rank percentiles, the mean and the share under the threshold. The two sides are
 * resampled independently and the replicate is the difference. The grid is a side's distinct
 * values while there are at most COMPARE_GRID_EXACT_MAX of them, else bins of
 * COMPARE_GRID_PER_OCTAVE per doubling (each bin reports its largest member for percentiles
 * and the mean of its members for the mean). */
#include "compare/internal.h"

#include "core/err.h"
#include "core/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Poisson variates ---------------------------------------------------------------------- */

uint64_t compare_poisson(struct rng *r, double mean)
{
    if (!(mean > 0))
        return 0;
    if (mean < 10) {
        /* multiply uniforms until the product falls below e^-mean (Knuth) */
        double limit = exp(-mean), prod = rng_uniform(r);
        uint64_t k = 0;
        while (prod > limit) {
            k++;
            prod *= rng_uniform(r);
        }
        return k;
    }
    /* PTRS (Hörmann 1993): transformed rejection with squeeze */
    double slam = sqrt(mean), loglam = log(mean);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        double u = rng_uniform(r) - 0.5, v = rng_uniform(r);
        double us = 0.5 - fabs(u);
        double k = floor((2 * a / us + b) * u + mean + 0.43);
        if (us >= 0.07 && v <= vr)
            return (uint64_t)k;
        if (k < 0 || (us < 0.013 && v > us))
            continue;
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -mean + k * loglam - lgamma(k + 1))
            return (uint64_t)k;
    }
}

/* ---- a side on its grid ---------------------------------------------------------------------- */

struct rep_cells {
    size_t m;
    uint32_t *idx;
    uint64_t *count;
};

struct grid {
    size_t m;
    double *x;    /* per cell: the value percentiles report */
    double *mean; /* per cell: the mean of its members */
    size_t nreps;
    struct rep_cells *rep;
};

struct entry {
    double x, s;
    uint64_t c;
    uint32_t rep;
    int64_t key;
};

static int cmp_entry_x(const void *a, const void *b)
{
    const struct entry *p = a, *q = b;
    if (p->x != q->x)
        return (p->x > q->x) - (p->x < q->x);
    return (p->rep > q->rep) - (p->rep < q->rep);
}

/* The bin of x: COMPARE_GRID_PER_OCTAVE bins per power of two (monotone in x). */
static int64_t bin_key(double x)
{
    if (x <= 0)
        return 0;
    int e;
    double mant = frexp(x, &e); /* [0.5, 1) */
    int64_t sub = (int64_t)((mant - 0.5) * 2 * COMPARE_GRID_PER_OCTAVE);
    if (sub >= COMPARE_GRID_PER_OCTAVE)
        sub = COMPARE_GRID_PER_OCTAVE - 1;
    return ((int64_t)e + 1100) * COMPARE_GRID_PER_OCTAVE + sub + 1;
}

static void grid_build(struct grid *g, const struct compare_dist *const *reps, size_t nreps)
{
    memset(g, 0, sizeof *g);
    size_t total = 0;
    for (size_t r = 0; r < nreps; r++)
        total += reps[r]->m;
    struct entry *e = xmalloc((total ? total : 1) * sizeof *e);
    size_t k = 0;
    for (size_t r = 0; r < nreps; r++)
        for (size_t i = 0; i < reps[r]->m; i++)
            e[k++] = (struct entry){reps[r]->x[i], reps[r]->s[i], reps[r]->c[i], (uint32_t)r, 0};
    qsort(e, k, sizeof *e, cmp_entry_x);
    size_t distinct = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || e[i].x != e[i - 1].x)
            distinct++;
    bool binned = distinct > COMPARE_GRID_EXACT_MAX;
    int64_t rank = 0;
    for (size_t i = 0; i < k; i++) {
        if (binned)
            e[i].key = bin_key(e[i].x);
        else
            e[i].key = (i == 0 || e[i].x != e[i - 1].x) ? ++rank : rank;
    }
    g->x = xmalloc((k ? k : 1) * sizeof *g->x);
    g->mean = xmalloc((k ? k : 1) * sizeof *g->mean);
    g->nreps = nreps;
    g->rep = xcalloc(nreps ? nreps : 1, sizeof *g->rep);
    for (size_t r = 0; r < nreps; r++) {
        g->rep[r].idx = xmalloc((reps[r]->m ? reps[r]->m : 1) * sizeof *g->rep[r].idx);
        g->rep[r].count = xmalloc((reps[r]->m ? reps[r]->m : 1) * sizeof *g->rep[r].count);
    }
    for (size_t i = 0; i < k;) {
        size_t j = i;
        double s = 0, c = 0, xmax = e[i].x;
        uint32_t cell = (uint32_t)g->m;
        while (j < k && e[j].key == e[i].key) {
            struct rep_cells *rc = &g->rep[e[j].rep];
            if (rc->m && rc->idx[rc->m - 1] == cell) {
                rc->count[rc->m - 1] += e[j].c;
            } else {
                rc->idx[rc->m] = cell;
                rc->count[rc->m] = e[j].c;
                rc->m++;
            }
            s += e[j].s;
            c += (double)e[j].c;
            if (e[j].x > xmax)
                xmax = e[j].x;
            j++;
        }
        g->x[g->m] = xmax;
        g->mean[g->m] = c > 0 ? s / c : xmax;
        g->m++;
        i = j;
    }
    free(e);
}

static void grid_release(struct grid *g)
{
    for (size_t r = 0; r < g->nreps; r++) {
        free(g->rep[r].idx);
        free(g->rep[r].count);
    }
    free(g->rep);
    free(g->x);
    free(g->mean);
    memset(g, 0, sizeof *g);
}

/* Most cells hold a count of 1, 2, ...: Poisson(c) for a whole c below PTAB_MAX by inversion
 * of its tabulated CDF, scaled to 64-bit integers (one raw random number per draw, no exp,
 * no conversion to double; the CDF's resolution is 2^-64). */
#define PTAB_MAX 10
#define PTAB_LEN 48
struct ptab {
    uint64_t cdf[PTAB_MAX][PTAB_LEN];
};

static void ptab_init(struct ptab *t)
{
    for (int c = 1; c < PTAB_MAX; c++) {
        double p = exp(-(double)c), cum = 0;
        for (int k = 0; k < PTAB_LEN; k++) {
            cum += p;
            /* the last entry ends every search */
            t->cdf[c][k] = k == PTAB_LEN - 1 || cum >= 1 ? UINT64_MAX : (uint64_t)ldexp(cum, 64);
            p *= (double)c / (double)(k + 1);
        }
    }
}

static inline uint64_t draw(const struct ptab *t, struct rng *r, uint64_t count)
{
    if (count == 0)
        return 0;
    if (count < PTAB_MAX) {
        const uint64_t *cdf = t->cdf[count];
        uint64_t u = rng_next(r), k = 0;
        while (u >= cdf[k] && cdf[k] != UINT64_MAX)
            k++;
        return k;
    }
    return compare_poisson(r, (double)count);
}

/* One replicate of a side: the weights on the grid (w zeroed here), then the statistics. */
static void replicate(const struct grid *g, const struct ptab *t, struct rng *r, bool plain, uint64_t *w,
                      double under_ms, double out[CMP_NMETRICS])
{
    memset(w, 0, g->m * sizeof *w);
    for (size_t k = 0; k < g->nreps; k++) {
        const struct rep_cells *rc = &g->rep[plain ? k : rng_below(r, g->nreps)];
        for (size_t i = 0; i < rc->m; i++)
            w[rc->idx[i]] += draw(t, r, rc->count[i]);
    }
    uint64_t n = 0;
    double sum = 0, under = 0;
    for (size_t i = 0; i < g->m; i++) {
        n += w[i];
        sum += (double)w[i] * g->mean[i];
        if (g->x[i] < under_ms)
            under += (double)w[i];
    }
    for (int m = 0; m < CMP_NMETRICS; m++)
        out[m] = NAN;
    if (n == 0)
        return;
    out[CMP_MEAN] = sum / (double)n;
    out[CMP_UNDER] = under / (double)n;
    /* the percentiles in increasing order, one pass */
    uint64_t cum = 0;
    size_t i = 0;
    for (int m = CMP_P50; m <= CMP_P999; m++) {
        uint64_t k = compare_rank_of(n, compare_metric_pct[m]);
        while (i < g->m && cum + w[i] < k)
            cum += w[i++];
        out[m] = g->x[i < g->m ? i : g->m - 1];
    }
}

void compare_bootstrap(const struct compare_boot *b, const struct compare_dist *const *reps_before, size_t nb,
                       const struct compare_dist *const *reps_after, size_t na, const bool want[CMP_NMETRICS],
                       double *diff[CMP_NMETRICS], double *rel[CMP_NMETRICS])
{
    struct grid gb, ga;
    grid_build(&gb, reps_before, nb);
    grid_build(&ga, reps_after, na);
    uint64_t *wb = xmalloc((gb.m ? gb.m : 1) * sizeof *wb), *wa = xmalloc((ga.m ? ga.m : 1) * sizeof *wa);
    /* one stream per side, both derived from the seed */
    struct rng seeder, rb, ra;
    rng_seed(&seeder, b->seed);
    rng_seed(&rb, rng_next(&seeder));
    rng_seed(&ra, rng_next(&seeder));
    struct ptab *t = xmalloc(sizeof *t);
    ptab_init(t);
    double sb[CMP_NMETRICS], sa[CMP_NMETRICS];
    for (size_t i = 0; i < b->resamples; i++) {
        replicate(&gb, t, &rb, b->plain, wb, b->under_ms, sb);
        replicate(&ga, t, &ra, b->plain, wa, b->under_ms, sa);
        for (int m = 0; m < CMP_NMETRICS; m++) {
            if (!want[m])
                continue;
            diff[m][i] = sa[m] - sb[m];
            if (rel && rel[m])
                rel[m][i] = sb[m] != 0 ? sa[m] / sb[m] - 1 : NAN;
        }
    }
    free(t);
    free(wb);
    free(wa);
    grid_release(&gb);
    grid_release(&ga);
}
