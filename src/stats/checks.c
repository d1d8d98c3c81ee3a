/* Anderson–Darling exponentiality and Mann–Kendall trend (see checks.h for the references). */
#include "stats/checks.h"

#include "core/err.h"
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>

const double stats_ad_exp_levels[STATS_AD_NLEVELS] = {15, 10, 5, 2.5, 1};
const double stats_ad_exp_crit[STATS_AD_NLEVELS] = {0.922, 1.078, 1.341, 1.606, 1.957};

double stats_normal_sf(double z)
{
    return 0.5 * erfc(z / sqrt(2.0));
}

int stats_ad_exponential(const double *sorted, size_t n, struct stats_ad *out)
{
    if (n < 5)
        return KNEE_EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(sorted[i]) || sorted[i] <= 0)
            return KNEE_ERANGE;
        if (i && sorted[i] < sorted[i - 1])
            return KNEE_EINVAL;
    }
    double mean = stats_mean(sorted, n);
    /* ln F(x) = ln(1 - e^{-x/m}) = log(-expm1(-x/m)); ln(1 - F(x)) = -x/m exactly */
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double lo = log(-expm1(-sorted[i] / mean));
        double hi = -sorted[n - 1 - i] / mean;
        sum += (double)(2 * i + 1) * (lo + hi);
    }
    double dn = (double)n;
    out->n = n;
    out->mean = mean;
    out->a2 = -dn - sum / dn;
    out->a2_modified = out->a2 * (1.0 + 0.6 / dn);
    out->rejected_at = 0;
    for (int k = STATS_AD_NLEVELS - 1; k >= 0; k--)
        if (out->a2_modified > stats_ad_exp_crit[k]) {
            out->rejected_at = stats_ad_exp_levels[k];
            break;
        }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int stats_mann_kendall(const double *x, size_t n, struct stats_mk *out)
{
    if (n < 3 || n > STATS_MK_MAX)
        return KNEE_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return KNEE_ERANGE;
    size_t npairs = n * (n - 1) / 2, k = 0;
    double *slopes = xmalloc(npairs * sizeof *slopes);
    long long s = 0;
    for (size_t i = 0; i + 1 < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double d = x[j] - x[i];
            s += (d > 0) - (d < 0);
            slopes[k++] = d / (double)(j - i);
        }
    /* ties: groups of equal values in a sorted copy */
    double *c = xmalloc(n * sizeof *c);
    for (size_t i = 0; i < n; i++)
        c[i] = x[i];
    qsort(c, n, sizeof *c, cmp_double);
    double dn = (double)n, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && c[j] == c[i])
            j++;
        double t = (double)(j - i);
        if (t > 1)
            ties += t * (t - 1) * (2 * t + 5);
        i = j;
    }
    free(c);
    out->n = n;
    out->s = s;
    out->var_s = (dn * (dn - 1) * (2 * dn + 5) - ties) / 18.0;
    double sd = sqrt(out->var_s);
    out->z = sd > 0 ? (s > 0 ? ((double)s - 1) / sd : s < 0 ? ((double)s + 1) / sd : 0) : 0;
    out->p = sd > 0 ? erfc(fabs(out->z) / sqrt(2.0)) : 1;
    qsort(slopes, npairs, sizeof *slopes, cmp_double);
    out->sen_slope = npairs % 2 ? slopes[npairs / 2] : (slopes[npairs / 2 - 1] + slopes[npairs / 2]) / 2;
    free(slopes);
    return 0;
}

/* The continued fraction of I_x(a, b) (DLMF 8.17.22), modified Lentz; converges fast for
 * x < (a + 1)/(a + b + 2). */
static double beta_cf(double x, double a, double b)
{
    const double tiny = 1e-300, eps = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 1000; m++) {
        double dm = m, num = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
        d = 1 + num * d;
        c = 1 + num / c;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        num = -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
        d = 1 + num * d;
        c = 1 + num / c;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps)
            break;
    }
    return h;
}

double stats_incomplete_beta(double x, double a, double b)
{
    if (!(a > 0 && b > 0 && x >= 0 && x <= 1))
        return NAN;
    if (x == 0 || x == 1)
        return x;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(x, a, b) / a;
    return 1 - front * beta_cf(1 - x, b, a) / b;
}

double stats_t_cdf(double t, double df)
{
    if (!(df > 0) || isnan(t))
        return NAN;
    if (isinf(t))
        return t > 0 ? 1 : 0;
    double tail = 0.5 * stats_incomplete_beta(df / (df + t * t), df / 2, 0.5); /* P(T > |t|) */
    return t > 0 ? 1 - tail : tail;
}

double stats_t_quantile(double p, double df)
{
    if (!(p > 0 && p < 1) || !(df > 0))
        return NAN;
    if (p < 0.5)
        return -stats_t_quantile(1 - p, df);
    double lo = 0, hi = 1;
    while (stats_t_cdf(hi, df) < p && hi < 1e300)
        hi *= 2;
    for (int i = 0; i < 2000 && hi - lo > 1e-12 * fmax(1, hi); i++) {
        double mid = (lo + hi) / 2;
        if (stats_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}
