/* The analyses behind `knee stats`, as library functions over arrays of doubles (in the
 * column's unit, knee's is milliseconds) with their whole-second times. The statistics
 * themselves (sorting, percentiles, means, intervals, histograms) come from src/stats and
 * src/hist; this module decides which numbers to compute and how windows are cut, following
 * the statistics-lab article's analysis where it gives a rule. Thread-safe: no state. */
#ifndef KNEE_ANALYZE_ANALYZE_H
#define KNEE_ANALYZE_ANALYZE_H

#include "hist/dbl.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- 4b. Averaging per-second percentiles ----
 * Windows are keyed by the whole second of the time column (floor(time_s)); the p99 of each
 * window is its nearest-rank p99. `mean` is the plain average of those p99s (what a dashboard
 * shows when it averages per-second values), `max` the largest, `whole` the nearest-rank p99
 * of all the values together. */
struct window_p99 {
    size_t nwindows;
    double mean, max, whole;
};
/* values[i] happened in second secs[i] (any order; neither array is modified). scratch: n
 * doubles the function may use (NULL: allocated internally). whole_p99: the caller's
 * nearest-rank p99 of all values, copied to out->whole, or NAN to have it computed here.
 * 0, or KNEE_EEMPTY for n == 0 (out gets NAN and 0 windows). */
int analyze_window_p99(const double *values, const int32_t *secs, size_t n, double *scratch, double whole_p99,
                       struct window_p99 *out);

/* ---- 7. p99 of small windows ----
 * nwin windows of at most win_len consecutive values, window i starting at i * floor(n/nwin)
 * (so they are evenly spaced through the series, as the article's ten 100-request windows).
 * For each window: its start, length and nearest-rank p99 (NAN when empty). Returns the
 * number of windows filled (0 when n == 0). */
struct small_window {
    size_t start, len;
    double p99;
};
size_t analyze_small_windows(const double *values_in_order, size_t n, size_t nwin, size_t win_len,
                             struct small_window *out);
/* Where the windows of analyze_small_windows lie, for a streaming second pass: window i
 * covers [start_i, start_i + len_i) of an n-long series. */
void analyze_small_window_bounds(size_t n, size_t nwin, size_t win_len, struct small_window *out);

/* ---- 3. p99 by Python's statistics.quantiles ----
 * statistics.quantiles(data, n=den, method=...)[k-1] for sorted data: exclusive (Hyndman &
 * Fan type 6) or inclusive (type 7). stats_quantile computes both, but clamps type 6 to the
 * sample's extremes where Python extrapolates (n < 99 for p99: Python's j is clamped to n-1
 * and the weight runs past 1), so for that region this function reproduces Python's integer
 * arithmetic and float expression; everywhere else it is stats_quantile. n == 1 gives the
 * value (as Python 3.13; 3.11 raises). NAN for n == 0 or k outside 1..den-1. */
double analyze_python_quantile(const double *sorted, size_t n, unsigned k, unsigned den, bool exclusive);

/* ---- 9. "mean + 2 stdev" next to the real p99 ----
 * The normal-distribution rule of thumb against the real percentile: diff = (m2s - p99) / p99,
 * flagged when |diff| > 0.2 (the rule is meaningless for a long-tailed latency). */
struct mean_2sd {
    double mean_plus_2sd, p99, rel_diff;
    bool flagged;
};
#define ANALYZE_MEAN_2SD_TOLERANCE 0.2
void analyze_mean_2sd(double mean, double stdev, double p99, struct mean_2sd *out);

/* ---- 11. the expected median ----
 * A median more than 3x away from what the code should take (either way) is a warning;
 * when the excess is 30..50 ms, or many values sit near 40 ms plus the expectation, the
 * hint names Nagle's algorithm with delayed ACK (two writes per response). Values in ms. */
struct median_check {
    double expected_ms, median_ms, ratio;
    bool off;             /* ratio > 3 or < 1/3 */
    bool nagle_like;      /* the excess looks like the 40 ms delayed-ACK timer */
    double share_near_40; /* share of values in [expected + 30, expected + 50] ms */
};
#define ANALYZE_MEDIAN_FACTOR 3.0
void analyze_median_check(const double *sorted_ms, size_t n, double expected_ms, struct median_check *out);

/* ---- 10. latency over time: a heatmap ----
 * Counts per (time bin, doubling bucket) in constant memory: bins start one second wide and
 * double in width whenever the time span would need more than HEATMAP_MAX_BINS, so any span
 * fits. Buckets are those of hist/dbl.h with the same first bound as the histogram. */
#define HEATMAP_MAX_BINS 4096
struct heatmap {
    double first_bound;
    struct dbl_hist shape; /* the bucket rule (its counts stay unused) */
    int64_t width_s;       /* seconds per bin: 1, 2, 4, ... */
    int64_t lo;            /* bin index (time / width_s, floored) of bins[0] */
    size_t nbins;          /* bins in use, <= HEATMAP_MAX_BINS */
    uint64_t *counts;      /* nbins x DBL_MAX_BUCKETS */
    uint64_t total;
};
void heatmap_init(struct heatmap *h, double first_bound);
void heatmap_release(struct heatmap *h);
/* Count one value at time_s (finite). */
void heatmap_add(struct heatmap *h, double time_s, double value);
/* Draw at most max_cols columns (adjacent bins merged) x the non-empty bucket range, one
 * character per cell shaded by log(count) from ' ' to '@', with a time axis. unit labels the
 * buckets. Prints nothing when empty. */
void heatmap_print(FILE *out, const struct heatmap *h, int max_cols, const char *unit);
/* Seconds per printed column when drawn with max_cols (for JSON and labels). */
int64_t heatmap_col_width_s(const struct heatmap *h, int max_cols);
/* The cells as printed: ncols columns (col_width_s seconds each, the first starting at
 * start_s) x buckets bmin..bmax. Returns a heap array indexed [col * DBL_MAX_BUCKETS + bucket]
 * (caller frees), or NULL when empty. */
struct heatmap_shape {
    size_t ncols, bmin, bmax;
    int64_t col_width_s, start_s;
    uint64_t max_count;
};
uint64_t *heatmap_cells(const struct heatmap *h, int max_cols, struct heatmap_shape *sh);

#endif
