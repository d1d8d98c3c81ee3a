/* Doubling buckets [0,b), [b,2b), [2b,4b), ... and their text bars for terminal reports. */
#include "hist/dbl.h"

#include <math.h>
#include <string.h>

void dbl_init(struct dbl_hist *d, double first_bound)
{
    memset(d, 0, sizeof *d);
    d->first = (isfinite(first_bound) && first_bound > 0) ? first_bound : 1.0;
}

double dbl_upper(const struct dbl_hist *d, size_t i)
{
    return i >= DBL_MAX_BUCKETS - 1 ? INFINITY : ldexp(d->first, (int)i);
}

double dbl_lower(const struct dbl_hist *d, size_t i)
{
    return i == 0 ? 0 : ldexp(d->first, (int)i - 1);
}

size_t dbl_bucket_of(const struct dbl_hist *d, double v)
{
    if (isnan(v))
        return DBL_MAX_BUCKETS - 1;
    if (v < d->first)
        return 0;
    /* v/first in [2^(i-1), 2^i) -> bucket i; frexp gives the exponent, then one exact
     * comparison fixes rounding of the division at a boundary. */
    int e;
    frexp(v / d->first, &e);
    size_t i = e < 1 ? 1 : (size_t)e;
    if (i >= DBL_MAX_BUCKETS - 1)
        return DBL_MAX_BUCKETS - 1;
    if (v >= dbl_upper(d, i))
        i++;
    else if (i > 1 && v < dbl_lower(d, i))
        i--;
    return i;
}

void dbl_add(struct dbl_hist *d, double v, uint64_t count)
{
    d->counts[dbl_bucket_of(d, v)] += count;
    d->total += count;
}

void dbl_print(FILE *out, const struct dbl_hist *d, const char *unit, int width)
{
    size_t first = DBL_MAX_BUCKETS, last = 0;
    uint64_t max = 0;
    for (size_t i = 0; i < DBL_MAX_BUCKETS; i++) {
        if (d->counts[i]) {
            if (first == DBL_MAX_BUCKETS)
                first = i;
            last = i;
            if (d->counts[i] > max)
                max = d->counts[i];
        }
    }
    if (first == DBL_MAX_BUCKETS)
        return;
    if (width < 1)
        width = 1;
    /* label column width: the widest "lo..hi" */
    char label[DBL_MAX_BUCKETS][64];
    int lw = 0, cw = 1;
    for (size_t i = first; i <= last; i++) {
        double hi = dbl_upper(d, i);
        int n = isinf(hi) ? snprintf(label[i], sizeof label[i], "%g..", dbl_lower(d, i))
                          : snprintf(label[i], sizeof label[i], "%g..%g", dbl_lower(d, i), hi);
        if (n > lw)
            lw = n;
        char tmp[32];
        n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)d->counts[i]);
        if (n > cw)
            cw = n;
    }
    for (size_t i = first; i <= last; i++) {
        uint64_t c = d->counts[i];
        double share = d->total ? 100.0 * (double)c / (double)d->total : 0;
        /* bar length rounded to nearest, at least one mark for any non-zero count */
        int bar = (int)((double)c * width / (double)max + 0.5);
        if (c && bar == 0)
            bar = 1;
        fprintf(out, "  %*s %s  %*llu  %5.1f%%  ", lw, label[i], unit, cw, (unsigned long long)c, share);
        for (int k = 0; k < bar; k++)
            fputc('#', out);
        fputc('\n', out);
    }
}
