/* The percentile distribution in the reference layout (AbstractHistogram
 * .outputPercentileDistribution, the .hgrm format the HdrHistogram plotter reads): the same
 * header, the same percentile ticks, the same number formatting, the same footer. */
#include "hlog/hlog.h"

#include "core/err.h"
#include "hlog/jfmt.h"

#include <errno.h>
#include <math.h>

int hlog_print_percentiles(FILE *out, const struct hdr *h, int ticks_per_half, double unit_ratio, bool csv)
{
    if (ticks_per_half < 1 || ticks_per_half > 1000 || !(unit_ratio > 0) || !isfinite(unit_ratio))
        return KNEE_EINVAL;
    int d = h->sig_digits;
    char v[64], p[64], inv[64];
    if (csv)
        fputs("\"Value\",\"Percentile\",\"TotalCount\",\"1/(1-Percentile)\"\n", out);
    else
        fprintf(out, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    struct hdr_iter it;
    hdr_iter_percentile_init(&it, h, ticks_per_half);
    while (hdr_iter_next(&it)) {
        double level = it.percentile_level_iterated_to;
        jfmt_fixed(v, sizeof v, (double)it.value_iterated_to / unit_ratio, d);
        jfmt_fixed(p, sizeof p, level / 100.0, 12);
        if (level != 100.0) {
            jfmt_fixed(inv, sizeof inv, 1 / (1.0 - level / 100.0), 2);
            if (csv)
                fprintf(out, "%s,%s,%lld,%s\n", v, p, (long long)it.cumulative_count, inv);
            else
                fprintf(out, "%12s %2s %10lld %14s\n", v, p, (long long)it.cumulative_count, inv);
        } else if (csv) {
            fprintf(out, "%s,%s,%lld,Infinity\n", v, p, (long long)it.cumulative_count);
        } else {
            fprintf(out, "%12s %2s %10lld\n", v, p, (long long)it.cumulative_count);
        }
    }
    if (!csv) {
        char m[64], s[64], mx[64];
        jfmt_fixed(m, sizeof m, hdr_mean(h) / unit_ratio, d);
        jfmt_fixed(s, sizeof s, hdr_stdev(h) / unit_ratio, d);
        jfmt_fixed(mx, sizeof mx, (double)hdr_max(h) / unit_ratio, d);
        fprintf(out, "#[Mean    = %12s, StdDeviation   = %12s]\n", m, s);
        fprintf(out, "#[Max     = %12s, Total count    = %12lld]\n", mx, (long long)h->total_count);
        fprintf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", (int)h->bucket_count, (int)h->sub_bucket_count);
    }
    return ferror(out) ? -EIO : 0;
}
