/* Prometheus classic histogram: fixed `le` bounds (inclusive) plus +Inf, and PromQL's
 * histogram_quantile (promql/quantile.go bucketQuantile), step by step as Prometheus runs it on
 * the cumulative buckets, including its count-precision fix and its edge cases; one deviation:
 * an interpolation that floating point rounds out of its bucket is kept inside it. */
#include "hist/prom.h"

#include "core/err.h"
#include "hist/hdr.h"

#include <errno.h>
#include <float.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const double prom_default_bounds_ms[11] = {5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};

int prom_init(struct prom_hist *p, const double *bounds, size_t n)
{
    memset(p, 0, sizeof *p);
    if (n == 0 || n > PROM_MAX_BOUNDS)
        return KNEE_EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1])))
            return KNEE_EINVAL;
        p->bounds[i] = bounds[i];
    }
    p->nbounds = n;
    return 0;
}

int prom_parse_bounds(const char *s, double *bounds, size_t *n)
{
    size_t k = 0;
    const char *c = s;
    *n = 0;
    for (;;) {
        while (*c == ' ' || *c == '\t')
            c++;
        if (*c == '\0' || *c == ',')
            return KNEE_EFORMAT; /* empty list or empty item */
        char *end;
        errno = 0;
        double v = strtod(c, &end);
        if (end == c || errno == ERANGE)
            return KNEE_EFORMAT;
        if (!isfinite(v) || k == PROM_MAX_BOUNDS || (k > 0 && !(v > bounds[k - 1])))
            return KNEE_EINVAL;
        bounds[k++] = v;
        c = end;
        while (*c == ' ' || *c == '\t')
            c++;
        if (*c == '\0')
            break;
        if (*c != ',')
            return KNEE_EFORMAT;
        c++;
    }
    *n = k;
    return 0;
}

/* The first bound >= v (le is inclusive); NaN and values above every bound go to +Inf, as
 * client_golang's sort.SearchFloat64s does. */
static size_t bucket_of(const struct prom_hist *p, double v)
{
    size_t lo = 0, hi = p->nbounds;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->bounds[mid] >= v)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void prom_observe(struct prom_hist *p, double v)
{
    p->counts[bucket_of(p, v)]++;
    p->total++;
    p->sum += v;
}

uint64_t prom_cumulative(const struct prom_hist *p, size_t i)
{
    if (i > p->nbounds)
        i = p->nbounds;
    uint64_t c = 0;
    for (size_t k = 0; k <= i; k++)
        c += p->counts[k];
    return c;
}

/* Prometheus's almost.Equal (util/almost): relative difference below epsilon. */
static bool almost_equal(double a, double b, double eps)
{
    if (a == b)
        return true;
    double abs_sum = fabs(a) + fabs(b), diff = fabs(a - b);
    if (a == 0 || b == 0 || abs_sum < DBL_MIN)
        return diff < eps * DBL_MIN;
    return diff / fmin(abs_sum, DBL_MAX) < eps;
}

double prom_quantile(const struct prom_hist *p, double q, struct prom_estimate *out)
{
    struct prom_estimate e = {.q = q, .estimate = NAN, .low = NAN, .high = NAN, .bucket = SIZE_MAX};
    if (isnan(q) || p->nbounds == 0)
        goto done;
    if (q < 0) {
        e.estimate = -INFINITY;
        goto done;
    }
    if (q > 1) {
        e.estimate = INFINITY;
        goto done;
    }
    /* The cumulative buckets as Prometheus sees them: bounds[0..n-1] then +Inf. Bounds are
     * strictly increasing (nothing to sort or coalesce); counts are float64 there, and
     * neighbours within 1e-12 relative are made equal (ensureMonotonicAndIgnoreSmallDeltas). */
    size_t nb = p->nbounds + 1;
    double cum[PROM_MAX_BOUNDS + 1];
    uint64_t acc = 0;
    for (size_t i = 0; i < nb; i++) {
        acc += p->counts[i];
        cum[i] = (double)acc;
    }
    double prev = cum[0];
    for (size_t i = 1; i < nb; i++) {
        double curr = cum[i];
        if (curr == prev)
            continue;
        if (almost_equal(prev, curr, 1e-12) || curr < prev) {
            cum[i] = prev;
            continue;
        }
        prev = curr;
    }
    double observations = cum[nb - 1];
    if (nb < 2 || observations == 0)
        goto done;
    double rank = q * observations;
    /* sort.Search over all buckets but the last: the first with count >= rank */
    size_t lo = 0, hi = nb - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cum[mid] >= rank)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t b = lo;
    e.bucket = b;
    if (b == nb - 1) {
        /* the rank is in +Inf: answer the highest finite bound, never extrapolate */
        e.low = p->bounds[nb - 2];
        e.high = INFINITY;
        e.estimate = p->bounds[nb - 2];
        goto done;
    }
    if (b == 0 && p->bounds[0] <= 0) {
        e.low = -INFINITY;
        e.high = p->bounds[0];
        e.estimate = p->bounds[0];
        goto done;
    }
    double start = 0, end = p->bounds[b], count = cum[b];
    if (b > 0) {
        start = p->bounds[b - 1];
        count -= cum[b - 1];
        rank -= cum[b - 1];
    }
    e.low = start;
    e.high = end;
    /* Prometheus's interpolation, start + (end - start) * rank / count. In floating point it
     * can land outside its own bucket: end - start overflows to infinity for bounds near
     * ±DBL_MAX, and with bounds of opposite sign near ±1e78 the sum cancels and rounds past
     * end. The first case is computed as a weighted mean instead (no overflow), and the result
     * is kept inside [start, end], where the exact value always lies; for every finite
     * interpolation that stays inside (all ordinary bounds) the number is Prometheus's. */
    double f = rank / count;
    double width = end - start;
    double est = isfinite(width) ? start + width * f : start * (1 - f) + end * f;
    e.estimate = est < start ? start : est > end ? end : est;
done:
    if (out)
        *out = e;
    return e.estimate;
}

void prom_add_hdr(struct prom_hist *p, const struct hdr *h)
{
    if (!h->counts || h->total_count <= 0)
        return;
    /* Only the recorded range is visited: from the smallest value (0 when zeros were
     * recorded) to the largest, with hdr_index_range inline: the live metrics run this once a
     * second (main thread, load/live.c) over histograms that may span 20 buckets of 1024. */
    size_t first = h->counts[0] || h->min_value == INT64_MAX ? 0 : hdr_index_of(h, h->min_value);
    size_t last = hdr_index_of(h, h->max_value);
    if (last >= h->counts_len)
        last = h->counts_len - 1;
    size_t j = 0;
    double bound = p->nbounds ? p->bounds[0] : INFINITY;
    uint64_t in_j = 0, total = 0;
    double sum = 0;
    for (size_t i = first; i <= last; i++) {
        int64_t c = h->counts[i];
        if (c <= 0)
            continue;
        int64_t width, lo = hdr_index_range(h, i, &width); /* the bucket: lo .. lo + width - 1 */
        double hi = (double)(lo + width - 1);
        if (bound < hi) { /* past bound j: its count is complete */
            p->counts[j] += in_j;
            in_j = 0;
            do
                j++;
            while (j < p->nbounds && p->bounds[j] < hi);
            bound = j < p->nbounds ? p->bounds[j] : INFINITY;
        }
        in_j += (uint64_t)c;
        total += (uint64_t)c;
        sum += (double)c * (double)(lo + (width >> 1)); /* the median equivalent value */
    }
    p->counts[j] += in_j;
    p->total += total;
    p->sum += sum;
}
