/* Statistical self-checks of a run, as pure functions over arrays of doubles (the run
 * integration is src/runcheck): the Anderson–Darling test that inter-arrival times are
 * exponential (a Poisson process), and the Mann–Kendall trend test with Sen's slope (is a
 * per-second series stationary?). Units are the caller's. Thread-safe (no state).
 *
 * References: M. A. Stephens, "EDF Statistics for Goodness of Fit and Some Comparisons",
 * JASA 69 (1974) 730–737 (the exponential case with the mean estimated: modified statistic
 * A²(1 + 0.6/n) and its critical values); H. B. Mann, "Nonparametric tests against trend",
 * Econometrica 13 (1945); M. G. Kendall, "Rank Correlation Methods" (1975) (the variance of S
 * with ties); P. K. Sen, "Estimates of the regression coefficient based on Kendall's tau",
 * JASA 63 (1968). */
#ifndef KNEE_STATS_CHECKS_H
#define KNEE_STATS_CHECKS_H

#include <stdbool.h>
#include <stddef.h>

/* Significance levels (%) of Stephens' table for the exponential case, and the critical
 * values of the modified statistic A²(1 + 0.6/n) at those levels. */
#define STATS_AD_NLEVELS 5
extern const double stats_ad_exp_levels[STATS_AD_NLEVELS]; /* 15, 10, 5, 2.5, 1 */
extern const double stats_ad_exp_crit[STATS_AD_NLEVELS];   /* 0.922, 1.078, 1.341, 1.606, 1.957 */

struct stats_ad {
    size_t n;
    double mean;        /* the estimated mean (the exponential's scale) */
    double a2;          /* A² = -n - (1/n) Σ (2i-1) [ln F(x_(i)) + ln(1 - F(x_(n+1-i)))] */
    double a2_modified; /* A²(1 + 0.6/n), compared with stats_ad_exp_crit */
    double rejected_at; /* the smallest level (%) of the table at which exponentiality is
                           rejected (modified statistic above its critical value); 0 when
                           it is rejected at none (not even 15%) */
};

/* Anderson–Darling test that sorted (ascending) values come from an exponential distribution
 * with unknown mean. Values must be finite and > 0 (a zero has F = 0 and ln 0: the caller
 * replaces an interval of 0 by its clock's resolution); n >= 5 (Stephens' table). Returns 0,
 * KNEE_EINVAL (n < 5, not sorted) or KNEE_ERANGE (a value <= 0 or not finite). */
int stats_ad_exponential(const double *sorted, size_t n, struct stats_ad *out);

struct stats_mk {
    size_t n;
    long long s;      /* Σ_{i<j} sign(x_j - x_i) */
    double var_s;     /* n(n-1)(2n+5)/18 - Σ over ties t(t-1)(2t+5)/18 */
    double z;         /* (S - 1)/√var, 0, (S + 1)/√var for S > 0, = 0, < 0 */
    double p;         /* two-sided, normal approximation: erfc(|z|/√2) */
    double sen_slope; /* median of (x_j - x_i)/(j - i) over i < j: the trend per step */
};

/* Mann–Kendall test of a monotonic trend in x[0..n) (in order: index = time) and Sen's slope.
 * 3 <= n <= STATS_MK_MAX (the slope sorts n(n-1)/2 pair slopes: 8 MB at the cap). Values must
 * be finite. Returns 0, KNEE_EINVAL (n outside the bounds) or KNEE_ERANGE (a value not
 * finite). The normal approximation of S is good from n ≈ 10 on; callers test shorter series
 * at their own risk. */
#define STATS_MK_MAX 1024
int stats_mann_kendall(const double *x, size_t n, struct stats_mk *out);

/* Standard normal upper tail P(Z > z) = erfc(z/√2)/2. */
double stats_normal_sf(double z);

/* The regularized incomplete beta function I_x(a, b) for a, b > 0 and x in [0, 1] (the
 * continued fraction of DLMF 8.17.22, evaluated by the modified Lentz method; ~1e-14
 * relative). NAN outside the domain. */
double stats_incomplete_beta(double x, double a, double b);
/* Student's t: P(T <= t) with df > 0 degrees of freedom, and its quantile for p in (0, 1)
 * (bisection on the CDF to 1e-12). NAN outside the domain. */
double stats_t_cdf(double t, double df);
double stats_t_quantile(double p, double df);

#endif
