/* Exact statistics over an array of doubles. Units are the caller's (knee passes
 * milliseconds); nothing here converts. Functions that take `sorted` require ascending order
 * (use stats_sort) and never modify the array. Inputs are validated by stats_check: NaN,
 * infinities and negative values are errors, never silently dropped. Thread-safe (no state). */
#ifndef KNEE_STATS_STATS_H
#define KNEE_STATS_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* 0, or KNEE_ENAN / KNEE_EINF / KNEE_ENEG for the first bad value (its index in *bad_index
 * when bad_index is not NULL). */
int stats_check(const double *v, size_t n, size_t *bad_index);

/* Sort ascending in place (O(n log n) or better; 10M values in well under 2 s). */
void stats_sort(double *v, size_t n);

/* Mean with compensated summation (agrees with Python statistics.fmean to 1e-12 relative). */
double stats_mean(const double *v, size_t n);
/* Sample standard deviation (n-1), as Python statistics.stdev; 0 when n < 2. */
double stats_stdev(const double *v, size_t n);

/* Nearest rank (Hyndman & Fan type 1 with p in percent): the smallest value with at least
 * p% of values at or below it: rank = ceil(p/100*n) clamped to [1,n]. p in [0,100]; n > 0. */
double stats_nearest_rank(const double *sorted, size_t n, double p_percent);

/* Hyndman & Fan sample quantile of type 1..9 for probability p in [0,1]; n > 0.
 * Type 6 = Python statistics.quantiles(method='exclusive'), type 7 = 'inclusive' = NumPy's
 * default. For type 6 and 7 the result equals Python's to 1e-12 relative.
 * Returns NAN for an invalid type or p. */
double stats_quantile(const double *sorted, size_t n, double p, int type);

/* The table every knee report prints. Percentiles by nearest rank. */
struct summary {
    size_t count;
    double min, max, mean, stdev;
    double p50, p90, p95, p99, p999;
};
/* Fill *out from sorted values; n == 0 gives count 0 and NAN everywhere else. */
void stats_summarize(const double *sorted, size_t n, struct summary *out);

/* Share of values under a threshold: `under` counts v < t, `at_or_under` counts v <= t. */
struct share {
    size_t under, at_or_under, count;
};
void stats_share(const double *sorted, size_t n, double threshold, struct share *out);

/* Distribution-free confidence interval for a percentile from order statistics: the
 * tightest pair of order statistics x_(lo_rank) <= x_p <= x_(hi_rank) (1-based) whose exact
 * binomial coverage P(lo_rank <= B < hi_rank), B ~ Binomial(n, p), is at least `confidence`.
 * When no such pair exists inside the sample (n too small: for p99 at 95% below n = 299),
 * `defined` is false and lo/hi are the sample min/max. `beyond` = the number of samples above
 * the nearest-rank percentile; `too_few` is set when beyond < STATS_MIN_BEYOND, the point below
 * which a tail percentile is mostly noise (documented in docs/DESIGN.md). */
#define STATS_MIN_BEYOND 10
struct pct_ci {
    double p_percent, confidence;
    double value;          /* nearest-rank point estimate */
    double lo, hi;         /* the interval, in value units */
    size_t lo_rank, hi_rank;
    double coverage;       /* achieved coverage, >= confidence when defined */
    size_t beyond;
    bool defined, too_few;
};
/* p_percent in (0,100), confidence in (0,1) (knee's default is 0.95). Returns 0 or KNEE_EINVAL
 * / KNEE_EEMPTY. */
int stats_percentile_ci(const double *sorted, size_t n, double p_percent, double confidence, struct pct_ci *out);

#endif
