/* Exact statistics over an array of doubles. Units are the caller's (knee passes
 * milliseconds); nothing here converts. Functions that take `sorted` require ascending order
 * (use stats_sort) and never modify the array. Inputs are validated by stats_check: NaN,
 * infinities and negative values are errors, never silently dropped. Thread-safe (no state). */
#ifndef KNEE_STATS_STATS_H
#define KNEE_STATS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 0, or KNEE_ENAN / KNEE_EINF / KNEE_ENEG for the first bad value (its index in *bad_index
 * when bad_index is not NULL). */
int stats_check(const double *v, size_t n, size_t *bad_index);

/* Sort ascending in place: an LSD radix sort on the IEEE-754 bits (O(n), one n-sized
 * temporary; 10M values in well under 2 s). Any doubles: -inf < negatives < -0 < +0 < ... <
 * +inf < NaN. */
void stats_sort(double *v, size_t n);

/* Mean from the exactly rounded sum (Shewchuk's partials, as math.fsum) divided by n: bit-identical
 * to Python statistics.fmean. NAN when n == 0. */
double stats_mean(const double *v, size_t n);
/* Sample standard deviation (n-1), as Python statistics.stdev (two passes, compensated; ~1e-15
 * relative to Python's exact-fraction result); 0 when n < 2, NAN when a value is not finite.
 * Values near DBL_MAX or near the smallest doubles are scaled by a power of two, so any
 * finite values give a finite stdev, except +inf when the true one exceeds DBL_MAX (values
 * about DBL_MAX apart). The mean likewise: finite for finite values, even when their sum
 * is not (where Python's fmean raises OverflowError). */
double stats_stdev(const double *v, size_t n);

/* Running mean and sample stdev of values seen one at a time (Welford 1962; two merged as
 * Chan, Golub & LeVeque 1979): kept in units of 2^scale, raised when a value beyond 2^400
 * arrives, so values up to DBL_MAX give a finite mean and stdev as stats_stdev does (scale
 * stays 0 on ordinary data: the plain recurrences, bit for bit). A non-finite value makes
 * both NAN. Zeroed by stats_running_init. */
struct stats_running {
    uint64_t n;
    double mean, m2; /* in units of 2^scale */
    int scale;
    bool nonfinite;
};
void stats_running_init(struct stats_running *r);
void stats_running_add(struct stats_running *r, double v);
/* d += s: the running statistics of both sets of values together. */
void stats_running_merge(struct stats_running *d, const struct stats_running *s);
double stats_running_mean(const struct stats_running *r);  /* NAN when n == 0 */
double stats_running_stdev(const struct stats_running *r); /* n − 1; 0 when n < 2 */

/* Nearest rank (Hyndman & Fan type 1 with p in percent): the smallest value with at least
 * p% of values at or below it: rank = ceil(p/100*n) clamped to [1,n]. p in [0,100]; n > 0
 * (NAN otherwise). p*n/100 within 1e-12 relative of an integer counts as that integer, so
 * p99.9 of 1000 values is x_(999) although 99.9 has no exact binary form. */
double stats_nearest_rank(const double *sorted, size_t n, double p_percent);

/* Hyndman & Fan sample quantile of type 1..9 for probability p in [0,1]; n > 0. Definitions as
 * R's quantile(type=) (x_(0) = x_(1), x_(n+1) = x_(n)); docs/INTERNALS.md lists them.
 * Type 6 = Python statistics.quantiles(method='exclusive'), type 7 = 'inclusive' = NumPy's
 * default. For p = k/100 (also k/1000, k/10000, k/100000) types 6 and 7 use Python's exact
 * integer arithmetic and are bit-identical to its cut points; other p agree to ~1e-15 relative.
 * One deliberate difference: for type 6 with p < 1/(n+1) or p > n/(n+1), Python extrapolates
 * beyond the data; here (as in R and H&F) the result is clamped to min/max.
 * Indices computed from a decimal p within 1e-12 relative of an integer are taken as that
 * integer (so 0.999 * 1000 is 999, not 999.0000000000001). Returns NAN for an invalid type,
 * p outside [0,1] or NaN, or n == 0. */
double stats_quantile(const double *sorted, size_t n, double p, int type);

/* The table every knee report prints. Percentiles by nearest rank. */
struct summary {
    size_t count;
    double min, max, mean, stdev;
    double p50, p90, p95, p99, p999;
};
/* Fill *out from sorted values; n == 0 gives count 0 and NAN everywhere else. */
void stats_summarize(const double *sorted, size_t n, struct summary *out);

/* Share of values under a threshold: `under` counts v < t, `at_or_under` counts v <= t,
 * count = n (binary search, O(log n)). A NaN threshold counts nothing. */
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
 * which a tail percentile is mostly noise (docs/INTERNALS.md). */
#define STATS_MIN_BEYOND 10
struct pct_ci {
    double p_percent, confidence;
    double value;  /* nearest-rank point estimate */
    double lo, hi; /* the interval, in value units */
    size_t lo_rank, hi_rank;
    double coverage; /* achieved coverage, >= confidence when defined */
    size_t beyond;
    bool defined, too_few;
};
/* p_percent in (0,100), confidence in (0,1) (knee's default is 0.95). Returns 0 or KNEE_EINVAL
 * / KNEE_EEMPTY. The binomial probabilities are computed exactly (see
 * stats_binomial_ci_ranks), never by a normal approximation. */
int stats_percentile_ci(const double *sorted, size_t n, double p_percent, double confidence, struct pct_ci *out);

/* The rank part of stats_percentile_ci, for a sample of n values: the narrowest 1-based pair
 * lo_rank < hi_rank <= n with P(lo_rank <= B < hi_rank) >= confidence, B ~ Binomial(n, p/100)
 * (ties broken by the larger coverage). Returns 0 and sets the pair and its coverage; KNEE_ERANGE
 * when no pair exists inside the sample (then lo_rank = 1, hi_rank = n and *coverage is that
 * pair's coverage, below confidence); KNEE_EINVAL for p or confidence outside (0,100) / (0,1) or
 * n < 2. Exact: the probabilities come from the ratio recurrence around the mode, normalized
 * over the window where they exceed 1e-30 of the mode (about 23*sqrt(n p (1-p)) terms, so
 * n = 1e8 costs ~1 MB and a few ms); no normal approximation at any n. */
int stats_binomial_ci_ranks(size_t n, double p_percent, double confidence, size_t *lo_rank, size_t *hi_rank,
                            double *coverage);

#endif
