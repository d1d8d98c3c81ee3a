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
