/* Latency distributions as sorted distinct values with counts: built from exact values or
 * histogram buckets, merged across repetitions and targets, and their nearest-rank
 * percentiles, mean and share under a threshold. */
#include "compare/internal.h"

#include "core/err.h"
#include "core/warn.h"
#include "stats/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void compare_dist_release(struct compare_dist *d)
{
    free(d->x);
    free(d->s);
    free(d->c);
    memset(d, 0, sizeof *d);
}

int compare_dist_from_values(struct compare_dist *d, const double *v, size_t n)
{
    memset(d, 0, sizeof *d);
    double *t = xmalloc((n ? n : 1) * sizeof *t);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (!(v[i] >= 0) || isinf(v[i])) {
            free(t);
            return KNEE_ERANGE;
        }
        t[k++] = v[i];
    }
    stats_sort(t, k);
    d->x = xmalloc((k ? k : 1) * sizeof *d->x);
    d->s = xmalloc((k ? k : 1) * sizeof *d->s);
    d->c = xmalloc((k ? k : 1) * sizeof *d->c);
    for (size_t i = 0; i < k;) {
        size_t j = i;
        while (j < k && t[j] == t[i])
            j++;
        d->x[d->m] = t[i];
        d->c[d->m] = j - i;
        d->s[d->m] = t[i] * (double)(j - i);
        d->sum += d->s[d->m];
        d->m++;
        i = j;
    }
    d->n = k;
    free(t);
    return 0;
}

struct triple {
    double x, s;
    uint64_t c;
};

static int cmp_triple(const void *a, const void *b)
{
    double x = ((const struct triple *)a)->x, y = ((const struct triple *)b)->x;
    return (x > y) - (x < y);
}

void compare_dist_merge(struct compare_dist *d, const struct compare_dist *const *parts, size_t nparts)
{
    memset(d, 0, sizeof *d);
    size_t total = 0;
    for (size_t p = 0; p < nparts; p++)
        total += parts[p]->m;
    struct triple *t = xmalloc((total ? total : 1) * sizeof *t);
    size_t k = 0;
    for (size_t p = 0; p < nparts; p++) {
        d->approx |= parts[p]->approx;
        d->bad += parts[p]->bad;
        for (size_t i = 0; i < parts[p]->m; i++)
            t[k++] = (struct triple){parts[p]->x[i], parts[p]->s[i], parts[p]->c[i]};
    }
    qsort(t, k, sizeof *t, cmp_triple);
    d->x = xmalloc((k ? k : 1) * sizeof *d->x);
    d->s = xmalloc((k ? k : 1) * sizeof *d->s);
    d->c = xmalloc((k ? k : 1) * sizeof *d->c);
    for (size_t i = 0; i < k;) {
        size_t j = i;
        uint64_t c = 0;
        double s = 0;
        while (j < k && t[j].x == t[i].x) {
            c += t[j].c;
            s += t[j].s;
            j++;
        }
        d->x[d->m] = t[i].x;
        d->c[d->m] = c;
        d->s[d->m] = s;
        d->n += c;
        d->sum += s;
        d->m++;
        i = j;
    }
    free(t);
}

uint64_t compare_rank_of(uint64_t n, double p_percent)
{
    double x = p_percent * (double)n / 100.0, r = nearbyint(x);
    if (fabs(x - r) <= 1e-12 * fmax(1.0, fabs(x)))
        x = r;
    double k = ceil(x);
    if (k < 1)
        k = 1;
    if (k > (double)n)
        k = (double)n;
    return (uint64_t)k;
}

double compare_dist_percentile(const struct compare_dist *d, double p_percent)
{
    if (d->n == 0)
        return NAN;
    uint64_t k = compare_rank_of(d->n, p_percent), cum = 0;
    for (size_t i = 0; i < d->m; i++) {
        cum += d->c[i];
        if (cum >= k)
            return d->x[i];
    }
    return d->x[d->m - 1];
}

double compare_dist_mean(const struct compare_dist *d)
{
    return d->n ? d->sum / (double)d->n : NAN;
}

double compare_dist_share_under(const struct compare_dist *d, double threshold_ms)
{
    if (d->n == 0)
        return NAN;
    uint64_t under = 0;
    for (size_t i = 0; i < d->m && d->x[i] < threshold_ms; i++)
        under += d->c[i];
    return (double)under / (double)d->n;
}

const double compare_metric_pct[CMP_NMETRICS] = {50, 90, 99, 99.9, NAN, NAN};

void compare_strv_add(char ***v, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    warn_strv_vadd(v, n, WARN_MAX_LEN, fmt, ap);
    va_end(ap);
}

void compare_strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}
