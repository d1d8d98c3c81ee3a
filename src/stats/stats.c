/* Exact statistics over arrays of doubles: validation, a radix sort, exactly rounded mean,
 * sample stdev, nearest rank and the nine Hyndman & Fan quantile types, shares under a
 * threshold and the order-statistic (binomial) confidence interval of a percentile. */
#include "stats/stats.h"

#include "core/err.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int stats_check(const double *v, size_t n, size_t *bad_index)
{
    for (size_t i = 0; i < n; i++) {
        int err = 0;
        if (isnan(v[i]))
            err = KNEE_ENAN;
        else if (isinf(v[i]))
            err = KNEE_EINF;
        else if (v[i] < 0)
            err = KNEE_ENEG;
        if (err) {
            if (bad_index)
                *bad_index = i;
            return err;
        }
    }
    return 0;
}

/* ---- sorting ---- */

/* The IEEE-754 bits mapped to an unsigned key with the same order as the doubles: flip all
 * bits of negatives, set the sign bit of positives. Total order: -inf < ... < -0 < +0 < ... <
 * +inf < NaN (positive NaNs), so the sort never misbehaves on bad input. */
#define SIGN_BIT 0x8000000000000000ULL
static inline uint64_t key_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return (u & SIGN_BIT) ? ~u : (u | SIGN_BIT);
}

static inline double double_of(uint64_t k)
{
    uint64_t u = (k & SIGN_BIT) ? (k & ~SIGN_BIT) : ~k;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Keys live either in a uint64_t buffer or, between passes, in the caller's double array
 * (accessed only through memcpy, so no aliasing rules are broken). */
static inline uint64_t load_key(const unsigned char *base, size_t i)
{
    uint64_t k;
    memcpy(&k, base + i * 8, 8);
    return k;
}

static inline void store_key(unsigned char *base, size_t i, uint64_t k)
{
    memcpy(base + i * 8, &k, 8);
}

static int cmp_double(const void *a, const void *b)
{
    uint64_t x = key_of(*(const double *)a), y = key_of(*(const double *)b);
    return (x > y) - (x < y);
}

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)
#define RADIX_PASSES 6 /* 6 * 11 >= 64 */

/* LSD radix sort on the keys, 11 bits per pass, skipping passes in which every key has the
 * same digit (common: latencies share their top exponent bits). O(n), one n-sized buffer. */
void stats_sort(double *v, size_t n)
{
    if (n < 2)
        return;
    if (n < 2048) {
        qsort(v, n, sizeof *v, cmp_double);
        return;
    }
    size_t(*hist)[RADIX_SIZE] = xcalloc(RADIX_PASSES, sizeof *hist);
    unsigned char *a = (unsigned char *)v;
    unsigned char *b = xmalloc(n * 8);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_of(v[i]);
        store_key(a, i, k);
        for (int p = 0; p < RADIX_PASSES; p++)
            hist[p][(k >> (p * RADIX_BITS)) & (RADIX_SIZE - 1)]++;
    }
    for (int p = 0; p < RADIX_PASSES; p++) {
        size_t *h = hist[p];
        bool trivial = false;
        size_t sum = 0;
        for (size_t d = 0; d < RADIX_SIZE; d++) {
            if (h[d] == n)
                trivial = true;
            size_t c = h[d];
            h[d] = sum;
            sum += c;
        }
        if (trivial)
            continue;
        int shift = p * RADIX_BITS;
        for (size_t i = 0; i < n; i++) {
            uint64_t k = load_key(a, i);
            store_key(b, h[(k >> shift) & (RADIX_SIZE - 1)]++, k);
        }
        unsigned char *t = a;
        a = b;
        b = t;
    }
    /* a holds the sorted keys: decode into v */
    for (size_t i = 0; i < n; i++)
        v[i] = double_of(load_key(a, i));
    free(a == (unsigned char *)v ? b : a);
    free(hist);
}

/* ---- mean and stdev ---- */

/* Values beyond 2^STATS_SCALE_EXP in magnitude (or, for the stdev, all below 2^-STATS_SCALE_EXP)
 * are computed as v·2^-k and the result scaled back by 2^k: a power of two scales exactly,
 * and n ≤ 2^64 squares of values below 2^401 stay far from DBL_MAX. Ordinary data is never
 * scaled, so it gives the same bits as the unscaled formulas. */
#define STATS_SCALE_EXP 400

/* The exactly rounded sum of v[i]·2^-scale (Shewchuk's non-overlapping partials, as Python's
 * math.fsum), so the mean is bit-identical to statistics.fmean. Non-finite intermediate sums
 * fall back to the plain sum (which is then inf). */
static double exact_sum(const double *v, size_t n, int scale)
{
    double stack[64], *partials = stack, naive = 0;
    size_t np = 0, cap = 64;
    for (size_t k = 0; k < n; k++) {
        double x = scale ? ldexp(v[k], -scale) : v[k];
        naive += x;
        size_t i = 0;
        for (size_t j = 0; j < np; j++) {
            double y = partials[j];
            if (fabs(x) < fabs(y)) {
                double t = x;
                x = y;
                y = t;
            }
            double hi = x + y, lo = y - (hi - x);
            if (lo != 0.0)
                partials[i++] = lo;
            x = hi;
        }
        if (i == cap) {
            double *grown = xmalloc(2 * cap * sizeof *grown);
            memcpy(grown, partials, i * sizeof *grown);
            if (partials != stack)
                free(partials);
            partials = grown;
            cap *= 2;
        }
        partials[i] = x;
        np = i + 1;
        if (!isfinite(x))
            break;
    }
    double hi = 0;
    if (np > 0) {
        size_t i = np - 1;
        hi = partials[i];
        double lo = 0;
        if (!isfinite(hi)) {
            hi = naive;
            i = 0;
        }
        while (i > 0) {
            double x = hi, y = partials[--i];
            hi = x + y;
            double yr = hi - x;
            lo = y - yr;
            if (lo != 0.0)
                break;
        }
        /* Round half-even correctly when the remaining partials would tip a tie. */
        if (i > 0 && ((lo < 0 && partials[i - 1] < 0) || (lo > 0 && partials[i - 1] > 0))) {
            double y = lo * 2, x = hi + y, yr = x - hi;
            if (y == yr)
                hi = x;
        }
    }
    if (partials != stack)
        free(partials);
    return hi;
}

/* The exponent k to compute v in units of 2^k: 0 unless the largest magnitude lies beyond
 * 2^±STATS_SCALE_EXP (tiny values only when `tiny`); INT_MIN when a value is not finite. */
static int scale_of(const double *v, size_t n, bool tiny)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            return INT_MIN;
        m = fmax(m, fabs(v[i]));
    }
    if (m == 0)
        return 0;
    int e = ilogb(m);
    return e > STATS_SCALE_EXP || (tiny && e < -STATS_SCALE_EXP) ? e : 0;
}

double stats_mean(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double s = exact_sum(v, n, 0);
    if (isfinite(s))
        return s / (double)n;
    /* the sum left the double range: values near DBL_MAX have a finite mean all the same */
    int k = scale_of(v, n, false);
    return k == INT_MIN || k == 0 ? s / (double)n : ldexp(exact_sum(v, n, k) / (double)n, k);
}

/* Two passes: the exactly rounded mean, then a compensated (Neumaier) sum of squared
 * deviations with the classic correction term sum(d)^2/n for the mean's own rounding. Agrees
 * with Python's exact-fraction stdev to ~1e-15 relative on latency-like data. Values near
 * DBL_MAX (their squares overflow) or near the smallest doubles (their squares underflow)
 * are scaled by a power of two first (STATS_SCALE_EXP). */
double stats_stdev(const double *v, size_t n)
{
    if (n < 2)
        return 0;
    int k = scale_of(v, n, true);
    if (k == INT_MIN)
        return NAN;
    double m = exact_sum(v, n, k) / (double)n;
    double ss = 0, ss_c = 0, sd = 0, sd_c = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (k ? ldexp(v[i], -k) : v[i]) - m, sq = d * d;
        double t = ss + sq;
        ss_c += fabs(ss) >= fabs(sq) ? (ss - t) + sq : (sq - t) + ss;
        ss = t;
        t = sd + d;
        sd_c += fabs(sd) >= fabs(d) ? (sd - t) + d : (d - t) + sd;
        sd = t;
    }
    ss += ss_c;
    sd += sd_c;
    double var = (ss - sd * sd / (double)n) / (double)(n - 1);
    /* scaled back: +inf only when the true stdev exceeds DBL_MAX (values ±DBL_MAX apart) */
    return var > 0 ? ldexp(sqrt(var), k) : 0;
}

/* ---- running mean and stdev ---- */

void stats_running_init(struct stats_running *r)
{
    memset(r, 0, sizeof *r);
}

/* Express r in units of 2^scale (scale ≥ r->scale). */
static void running_rescale(struct stats_running *r, int scale)
{
    int d = scale - r->scale;
    if (d == 0)
        return;
    r->mean = ldexp(r->mean, -d);
    r->m2 = ldexp(r->m2, -2 * d);
    r->scale = scale;
}

void stats_running_add(struct stats_running *r, double v)
{
    if (!isfinite(v)) {
        r->nonfinite = true;
        return;
    }
    if (v != 0 && ilogb(v) - r->scale > STATS_SCALE_EXP)
        running_rescale(r, ilogb(v));
    double x = r->scale ? ldexp(v, -r->scale) : v;
    r->n++;
    double delta = x - r->mean;
    r->mean += delta / (double)r->n;
    r->m2 += delta * (x - r->mean);
}

void stats_running_merge(struct stats_running *d, const struct stats_running *s)
{
    d->nonfinite |= s->nonfinite;
    if (s->n == 0)
        return;
    struct stats_running b = *s;
    int scale = d->scale > b.scale ? d->scale : b.scale;
    running_rescale(d, scale);
    running_rescale(&b, scale);
    uint64_t nn = d->n + b.n;
    double delta = b.mean - d->mean;
    d->mean += delta * (double)b.n / (double)nn;
    d->m2 += b.m2 + delta * delta * (double)d->n * (double)b.n / (double)nn;
    d->n = nn;
}

double stats_running_mean(const struct stats_running *r)
{
    if (r->n == 0 || r->nonfinite)
        return NAN;
    return ldexp(r->mean, r->scale);
}

double stats_running_stdev(const struct stats_running *r)
{
    if (r->nonfinite)
        return NAN;
    if (r->n < 2)
        return 0;
    return ldexp(sqrt(r->m2 / (double)(r->n - 1)), r->scale);
}

/* ---- quantiles ---- */

/* A rank computed from a decimal probability (99.9 has no exact binary form) lands a hair off
 * the integer it means; within 1e-12 relative it is taken as that integer, so p99.9 of 1000
 * values is rank 999, not 1000. */
static double snap_integer(double x)
{
    double r = nearbyint(x);
    return fabs(x - r) <= 1e-12 * fmax(1.0, fabs(x)) ? r : x;
}

/* x_(j) 1-based, clamped to [1, n] (H&F's convention x_(0) = x_(1), x_(n+1) = x_(n)). */
static double order_stat(const double *s, size_t n, double j)
{
    if (j < 1)
        return s[0];
    if (j > (double)n)
        return s[n - 1];
    return s[(size_t)j - 1];
}

double stats_nearest_rank(const double *sorted, size_t n, double p_percent)
{
    if (n == 0 || !(p_percent >= 0 && p_percent <= 100))
        return NAN;
    double r = ceil(snap_integer(p_percent * (double)n / 100.0));
    return order_stat(sorted, n, r < 1 ? 1 : r);
}

/* Python's statistics.quantiles(n=den) cut point i = k for p = k/den, with its exact integer
 * arithmetic (j, delta) and its float expression, so results are bit-identical. Inside
 * [x_(1), x_(n)] only: where Python extrapolates (type 6 with p < 1/(n+1) or p > n/(n+1)), the
 * H&F definition, and this function, clamp to the extreme observation. */
static bool python_cut(const double *s, size_t n, double p, int type, double *out)
{
    static const uint64_t dens[] = {100, 1000, 10000, 100000};
    for (size_t d = 0; d < sizeof dens / sizeof dens[0]; d++) {
        uint64_t den = dens[d];
        double kd = nearbyint(p * (double)den);
        if (kd <= 0 || kd >= (double)den || kd / (double)den != p)
            continue;
        uint64_t k = (uint64_t)kd;
        if (type == 7) {
            uint64_t t = k * (uint64_t)(n - 1), j = t / den, delta = t % den;
            *out = (s[j] * (double)(den - delta) + s[j + 1] * (double)delta) / (double)den;
            return true;
        }
        uint64_t t = k * (uint64_t)(n + 1), j = t / den;
        if (j == n && t == j * den)
            j = n - 1; /* p = n/(n+1) exactly: Python clamps j and uses delta = den */
        if (j < 1) {
            *out = s[0];
        } else if (j >= n) {
            *out = s[n - 1];
        } else {
            uint64_t delta = t - j * den;
            *out = (s[j - 1] * (double)(den - delta) + s[j] * (double)delta) / (double)den;
        }
        return true;
    }
    return false;
}

double stats_quantile(const double *sorted, size_t n, double p, int type)
{
    if (n == 0 || type < 1 || type > 9 || !(p >= 0 && p <= 1))
        return NAN;
    const double *s = sorted;
    double nd = (double)n;
    if (n == 1)
        return s[0];
    if (type <= 3) {
        if (type == 1) {
            double j = ceil(snap_integer(nd * p));
            return order_stat(s, n, j < 1 ? 1 : j);
        }
        if (type == 2) {
            double np = snap_integer(nd * p), j = floor(np);
            if (np == j)
                return (order_stat(s, n, j) + order_stat(s, n, j + 1)) / 2;
            return order_stat(s, n, j + 1);
        }
        /* type 3: nearest even order statistic (R: m = -1/2, h = 0 iff exact and j even) */
        double nppm = snap_integer(nd * p - 0.5), j = floor(nppm);
        bool h0 = nppm == j && fmod(j, 2.0) == 0;
        return order_stat(s, n, h0 ? j : j + 1);
    }
    double out;
    if ((type == 6 || type == 7) && python_cut(s, n, p, type, &out))
        return out;
    static const double alpha[10] = {0, 0, 0, 0, 0, 0.5, 0, 1, 1.0 / 3, 3.0 / 8};
    double a = alpha[type], b = a; /* beta == alpha for types 5..9 */
    if (type == 4) {
        a = 0;
        b = 1;
    }
    /* R's form: n*p + m with m = a + p*(1 - a - b) */
    double nppm = a + p * (nd + 1 - a - b);
    double j = floor(snap_integer(nppm));
    double h = nppm - j;
    if (fabs(h) < 1e-12 * fmax(1.0, nppm))
        h = 0;
    double lo = order_stat(s, n, j), hi = order_stat(s, n, j + 1);
    if (h == 0 || lo == hi)
        return lo;
    if (h >= 1)
        return hi;
    return lo + h * (hi - lo);
}

/* ---- summaries and shares ---- */

void stats_summarize(const double *sorted, size_t n, struct summary *out)
{
    out->count = n;
    if (n == 0) {
        out->min = out->max = out->mean = out->stdev = NAN;
        out->p50 = out->p90 = out->p95 = out->p99 = out->p999 = NAN;
        return;
    }
    out->min = sorted[0];
    out->max = sorted[n - 1];
    out->mean = stats_mean(sorted, n);
    out->stdev = stats_stdev(sorted, n);
    out->p50 = stats_nearest_rank(sorted, n, 50);
    out->p90 = stats_nearest_rank(sorted, n, 90);
    out->p95 = stats_nearest_rank(sorted, n, 95);
    out->p99 = stats_nearest_rank(sorted, n, 99);
    out->p999 = stats_nearest_rank(sorted, n, 99.9);
}

/* Number of values < t (strict) or <= t, by binary search. */
static size_t count_below(const double *s, size_t n, double t, bool inclusive)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (inclusive ? s[mid] <= t : s[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void stats_share(const double *sorted, size_t n, double threshold, struct share *out)
{
    out->count = n;
    out->under = count_below(sorted, n, threshold, false);
    out->at_or_under = count_below(sorted, n, threshold, true);
}

/* ---- confidence interval of a percentile ---- */

/* The Binomial(n, p) probabilities over the window of k where they are not negligible
 * (relative to the mode, > 1e-30; the mass left out is far below double precision of a
 * coverage). Computed by the ratio recurrence from the mode and normalized by their sum, so
 * no lgamma of huge arguments is needed: exact to rounding for every n that fits in memory
 * (the window has about 23*sqrt(n*p*(1-p)) entries: ~1e5 for n = 1e8, p = 0.5). */
struct binom_window {
    size_t klo, khi; /* inclusive */
    double *cum;     /* cum[i] = P(klo <= B < klo + i), i in [0, khi-klo+1] */
};

static void binom_window(size_t n, double p, struct binom_window *w)
{
    const double tiny = 1e-30;
    double q = 1 - p, up = p / q, down = q / p, nd = (double)n;
    double mf = floor((nd + 1) * p);
    size_t mode = mf > nd ? n : (size_t)mf;
    size_t klo = mode, khi = mode;
    double x = 1;
    while (klo > 0) {
        double nx = x * (double)klo / (nd - (double)klo + 1) * down;
        if (nx < tiny)
            break;
        x = nx;
        klo--;
    }
    x = 1;
    while (khi < n) {
        double nx = x * (nd - (double)khi) / ((double)khi + 1) * up;
        if (nx < tiny)
            break;
        x = nx;
        khi++;
    }
    size_t len = khi - klo + 1;
    double *pmf = xmalloc(len * sizeof *pmf);
    pmf[mode - klo] = 1;
    for (size_t k = mode; k > klo; k--)
        pmf[k - 1 - klo] = pmf[k - klo] * (double)k / (nd - (double)k + 1) * down;
    for (size_t k = mode; k < khi; k++)
        pmf[k + 1 - klo] = pmf[k - klo] * (nd - (double)k) / ((double)k + 1) * up;
    /* normalize with a compensated sum, then cumulate */
    double sum = 0, c = 0;
    for (size_t i = 0; i < len; i++) {
        double y = pmf[i] - c, t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    w->cum = xmalloc((len + 1) * sizeof *w->cum);
    w->cum[0] = 0;
    double acc = 0;
    c = 0;
    for (size_t i = 0; i < len; i++) {
        double y = pmf[i] / sum - c, t = acc + y;
        c = (t - acc) - y;
        acc = t;
        w->cum[i + 1] = acc;
    }
    free(pmf);
    w->klo = klo;
    w->khi = khi;
}

/* P(a <= B <= b), a <= b, clipped to the window. */
static double binom_mass(const struct binom_window *w, size_t a, size_t b)
{
    if (a < w->klo)
        a = w->klo;
    if (b > w->khi)
        b = w->khi;
    if (a > b)
        return 0;
    return w->cum[b - w->klo + 1] - w->cum[a - w->klo];
}

int stats_binomial_ci_ranks(size_t n, double p_percent, double confidence, size_t *lo_rank, size_t *hi_rank,
                            double *coverage)
{
    if (!(p_percent > 0 && p_percent < 100) || !(confidence > 0 && confidence < 1) || n < 2)
        return KNEE_EINVAL;
    struct binom_window w;
    binom_window(n, p_percent / 100.0, &w);
    /* x_(lo) <= x_p < x_(hi) iff lo <= B <= hi-1, B = #samples below x_p. Search B-ranges
     * [a, b] with 1 <= a, b <= n-1: the narrowest with mass >= confidence, ties broken by the
     * larger mass. Two pointers: the smallest sufficient b never decreases as a grows. */
    size_t amin = w.klo > 1 ? w.klo : 1;
    size_t bmax = w.khi < n - 1 ? w.khi : n - 1;
    size_t best_a = 0, best_b = 0;
    double best_mass = -1;
    size_t b = amin;
    for (size_t a = amin; a <= bmax; a++) {
        if (b < a)
            b = a;
        while (b <= bmax && binom_mass(&w, a, b) < confidence)
            b++;
        if (b > bmax)
            break;
        double m = binom_mass(&w, a, b);
        if (best_mass < 0 || b - a < best_b - best_a || (b - a == best_b - best_a && m > best_mass)) {
            best_a = a;
            best_b = b;
            best_mass = m;
        }
    }
    int rc = 0;
    if (best_mass >= 0) {
        *lo_rank = best_a;
        *hi_rank = best_b + 1;
        *coverage = best_mass;
    } else {
        *lo_rank = 1;
        *hi_rank = n;
        *coverage = binom_mass(&w, 1, n - 1);
        rc = KNEE_ERANGE;
    }
    free(w.cum);
    return rc;
}

int stats_percentile_ci(const double *sorted, size_t n, double p_percent, double confidence, struct pct_ci *out)
{
    if (!(p_percent > 0 && p_percent < 100) || !(confidence > 0 && confidence < 1))
        return KNEE_EINVAL;
    if (n == 0)
        return KNEE_EEMPTY;
    memset(out, 0, sizeof *out);
    out->p_percent = p_percent;
    out->confidence = confidence;
    out->value = stats_nearest_rank(sorted, n, p_percent);
    out->beyond = n - count_below(sorted, n, out->value, true);
    out->too_few = out->beyond < STATS_MIN_BEYOND;
    out->lo = sorted[0];
    out->hi = sorted[n - 1];
    out->lo_rank = 1;
    out->hi_rank = n;
    if (n < 2)
        return 0; /* no interval of two order statistics exists; coverage 0 */
    size_t lo, hi;
    double cov;
    if (stats_binomial_ci_ranks(n, p_percent, confidence, &lo, &hi, &cov) == 0) {
        out->defined = true;
        out->lo_rank = lo;
        out->hi_rank = hi;
        out->lo = sorted[lo - 1];
        out->hi = sorted[hi - 1];
    }
    out->coverage = cov;
    return 0;
}
