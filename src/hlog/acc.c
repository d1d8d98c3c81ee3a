/* Exact accumulation of interval histograms. Index-wise addition is exact only between
 * histograms with the same lowest discernible value and significant digits (§4.5), so a
 * mismatch is an error, never a lossy re-recording. The range grows the way the reference's
 * auto-resizing accumulator (HistogramLogProcessor's) grows, which keeps the bucket count in
 * the printed footer equal to Java's. */
#include "hlog/hlog.h"

#include "core/err.h"
#include "hlog/codec.h"

#include <string.h>

void hlog_acc_init(struct hlog_acc *a)
{
    memset(a, 0, sizeof *a);
}

void hlog_acc_release(struct hlog_acc *a)
{
    if (a->used)
        hdr_release(&a->h);
    memset(a, 0, sizeof *a);
}

int hlog_acc_add(struct hlog_acc *a, const struct hdr *src, char *why, size_t whylen)
{
    if (!a->used) {
        /* The reference copies the first histogram's parameters (Histogram.copy). A decoded
         * histogram may hold counts above its highest trackable value (Java records anything
         * its counts array covers), so the sum's range also covers src's max; that stays in the
         * same bucket, so the bucket count is the reference's. */
        int64_t highest = src->highest;
        if (src->total_count > 0 && hdr_max(src) > highest)
            highest = hdr_max(src);
        if (hdr_init(&a->h, src->lowest, highest, src->sig_digits) != 0)
            return knee_fail(why, whylen, KNEE_EINVAL, "histogram parameters rejected");
        a->used = true;
    } else if (src->unit_magnitude != a->h.unit_magnitude || src->sig_digits != a->h.sig_digits) {
        /* same digits and floor(log2(lowest)): the same bucket layout, so index-wise addition
         * is exact (the reference's add takes the same fast path) */
        return knee_fail(
            why, whylen, KNEE_EMISMATCH,
            "%d significant digits and lowest value %lld where the sum has %d and %lld: not addable exactly",
            src->sig_digits, (long long)src->lowest, a->h.sig_digits, (long long)a->h.lowest);
    }
    if (src->total_count > INT64_MAX - a->h.total_count)
        return knee_fail(why, whylen, KNEE_EOVERFLOW, "the total count would pass 2^63-1");
    if (src->total_count > 0) {
        int64_t top = hdr_highest_equivalent(&a->h, hdr_value_from_index(&a->h, a->h.counts_len - 1));
        int64_t src_max = hdr_max(src);
        if (src_max > top) {
            /* AbstractHistogram.add on an auto-resizing histogram: resize(other.getMaxValue()) */
            struct hdr bigger;
            if (hdr_init(&bigger, a->h.lowest, src_max, a->h.sig_digits) != 0)
                return knee_fail(why, whylen, KNEE_ERANGE, "cannot grow the sum to %lld", (long long)src_max);
            int r = hdr_add(&bigger, &a->h);
            if (r) {
                hdr_release(&bigger);
                return knee_fail(why, whylen, r, "growing the sum: %s", knee_strerror(r));
            }
            hdr_release(&a->h);
            a->h = bigger;
        }
    }
    int r = hdr_add(&a->h, src);
    if (r)
        return knee_fail(why, whylen, r, "adding: %s", knee_strerror(r));
    a->added++;
    return 0;
}
