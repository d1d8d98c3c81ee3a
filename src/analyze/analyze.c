/* Window cutting and the rule-of-thumb checks of `knee stats`. Percentiles, sorting and
 * means are the statistics core's (src/stats); what is here is bookkeeping: grouping values
 * by second, placing the small windows, and comparing numbers against the rules. */
#include "analyze/analyze.h"

#include "core/err.h"
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct sec_value {
    int32_t sec;
    double v;
};

static int cmp_sec(const void *a, const void *b)
{
    int32_t x = ((const struct sec_value *)a)->sec, y = ((const struct sec_value *)b)->sec;
    return (x > y) - (x < y);
}

/* Nearest-rank p99 of each run of equal seconds in a grouped copy; p99s appended to out. */
static size_t p99_of_runs(double *grouped, const size_t *run_len, size_t nruns, double *out)
{
    size_t k = 0, pos = 0;
    for (size_t r = 0; r < nruns; r++) {
        if (run_len[r] == 0)
            continue;
        stats_sort(grouped + pos, run_len[r]);
        out[k++] = stats_nearest_rank(grouped + pos, run_len[r], 99.0);
        pos += run_len[r];
    }
    return k;
}

int analyze_window_p99(const double *values, const int32_t *secs, size_t n, double *scratch, double whole_p99,
                       struct window_p99 *out)
{
    out->nwindows = 0;
    out->mean = out->max = out->whole = NAN;
    if (n == 0)
        return KNEE_EEMPTY;
    double *tmp = scratch ? scratch : xmalloc(n * sizeof *tmp);
    int32_t lo = secs[0], hi = secs[0];
    for (size_t i = 1; i < n; i++) {
        if (secs[i] < lo)
            lo = secs[i];
        if (secs[i] > hi)
            hi = secs[i];
    }
    uint64_t range = (uint64_t)((int64_t)hi - (int64_t)lo) + 1;
    double *p99s;
    size_t nw;
    if (range <= (uint64_t)n + 1024) {
        /* counting sort by second: linear, and the usual case (a run's seconds are dense) */
        size_t *cnt = xcalloc(range + 1, sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(size_t)(secs[i] - lo) + 1]++;
        size_t *run_len = xmalloc(range * sizeof *run_len);
        for (size_t s = 0; s < range; s++) {
            run_len[s] = cnt[s + 1];
            cnt[s + 1] += cnt[s];
        }
        for (size_t i = 0; i < n; i++)
            tmp[cnt[secs[i] - lo]++] = values[i];
        free(cnt);
        p99s = xmalloc((range < n ? range : n) * sizeof *p99s);
        nw = p99_of_runs(tmp, run_len, range, p99s);
        free(run_len);
    } else {
        /* sparse seconds (epoch times with gaps): sort (second, value) pairs instead */
        struct sec_value *pairs = xmalloc(n * sizeof *pairs);
        for (size_t i = 0; i < n; i++)
            pairs[i] = (struct sec_value){secs[i], values[i]};
        qsort(pairs, n, sizeof *pairs, cmp_sec);
        size_t *run_len = xmalloc(n * sizeof *run_len);
        size_t nruns = 0;
        for (size_t i = 0; i < n; i++) {
            tmp[i] = pairs[i].v;
            if (i == 0 || pairs[i].sec != pairs[i - 1].sec)
                run_len[nruns++] = 0;
            run_len[nruns - 1]++;
        }
        free(pairs);
        p99s = xmalloc(nruns * sizeof *p99s);
        nw = p99_of_runs(tmp, run_len, nruns, p99s);
        free(run_len);
    }
    out->nwindows = nw;
    out->mean = stats_mean(p99s, nw);
    out->max = p99s[0];
    for (size_t i = 1; i < nw; i++)
        if (p99s[i] > out->max)
            out->max = p99s[i];
    free(p99s);
    if (isnan(whole_p99)) {
        memcpy(tmp, values, n * sizeof *tmp);
        stats_sort(tmp, n);
        whole_p99 = stats_nearest_rank(tmp, n, 99.0);
    }
    out->whole = whole_p99;
    if (!scratch)
        free(tmp);
    return 0;
}

void analyze_small_window_bounds(size_t n, size_t nwin, size_t win_len, struct small_window *out)
{
    size_t step = nwin ? n / nwin : 0;
    for (size_t i = 0; i < nwin; i++) {
        size_t start = i * step;
        size_t len = start < n ? n - start : 0;
        out[i].start = start;
        out[i].len = len < win_len ? len : win_len;
        out[i].p99 = NAN;
    }
}

size_t analyze_small_windows(const double *values_in_order, size_t n, size_t nwin, size_t win_len,
                             struct small_window *out)
{
    if (n == 0 || nwin == 0 || win_len == 0)
        return 0;
    analyze_small_window_bounds(n, nwin, win_len, out);
    double *tmp = xmalloc(win_len * sizeof *tmp);
    for (size_t i = 0; i < nwin; i++) {
        if (out[i].len == 0)
            continue;
        memcpy(tmp, values_in_order + out[i].start, out[i].len * sizeof *tmp);
        stats_sort(tmp, out[i].len);
        out[i].p99 = stats_nearest_rank(tmp, out[i].len, 99.0);
    }
    free(tmp);
    return nwin;
}

double analyze_python_quantile(const double *sorted, size_t n, unsigned k, unsigned den, bool exclusive)
{
    if (n == 0 || den < 2 || k < 1 || k >= den)
        return NAN;
    if (n == 1)
        return sorted[0];
    double p = (double)k / (double)den;
    if (!exclusive)
        return stats_quantile(sorted, n, p, 7);
    /* Python: m = n + 1; j = k*m // den clamped to [1, n-1]; delta = k*m - j*den */
    uint64_t km = (uint64_t)k * (uint64_t)(n + 1);
    uint64_t j = km / den;
    if (j >= 1 && j <= n - 1)
        return stats_quantile(sorted, n, p, 6);
    j = j < 1 ? 1 : n - 1;
    double delta = (double)((int64_t)km - (int64_t)(j * den));
    double dd = (double)den;
    return (sorted[j - 1] * (dd - delta) + sorted[j] * delta) / dd;
}

void analyze_mean_2sd(double mean, double stdev, double p99, struct mean_2sd *out)
{
    out->mean_plus_2sd = mean + 2 * stdev;
    out->p99 = p99;
    out->rel_diff = p99 != 0 ? (out->mean_plus_2sd - p99) / p99 : NAN;
    out->flagged = !(fabs(out->rel_diff) <= ANALYZE_MEAN_2SD_TOLERANCE);
}

/* Index of the first value >= x in a sorted array. */
static size_t lower_bound(const double *s, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void analyze_median_check(const double *sorted_ms, size_t n, double expected_ms, struct median_check *out)
{
    memset(out, 0, sizeof *out);
    out->expected_ms = expected_ms;
    out->median_ms = n ? stats_nearest_rank(sorted_ms, n, 50.0) : NAN;
    out->ratio = expected_ms > 0 ? out->median_ms / expected_ms : NAN;
    out->off =
        n > 0 && expected_ms > 0 && (out->ratio > ANALYZE_MEDIAN_FACTOR || out->ratio < 1.0 / ANALYZE_MEDIAN_FACTOR);
    if (n) {
        size_t a = lower_bound(sorted_ms, n, expected_ms + 30.0);
        size_t b = lower_bound(sorted_ms, n, nextafter(expected_ms + 50.0, INFINITY));
        out->share_near_40 = (double)(b - a) / (double)n;
    }
    double excess = out->median_ms - expected_ms;
    out->nagle_like = out->off && out->ratio > 1 && ((excess >= 30.0 && excess <= 50.0) || out->share_near_40 >= 0.25);
}
