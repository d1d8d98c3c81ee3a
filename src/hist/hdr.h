/* HdrHistogram, written from its published description (Gil Tene's HdrHistogram: see
 * docs/INTERNALS.md and docs/FORMATS.md): values are int64 in the
 * caller's unit (knee records nanoseconds), recorded in O(1) with no allocation, with a
 * guaranteed relative precision of 10^-sig_digits. Index math, equivalence ranges, percentile
 * semantics and iterators follow the Java reference so knee's numbers match its tools.
 *
 * Values above `highest` are not dropped silently: they are counted in overflow_count (and
 * overflow_max) and reported; they are not part of total_count or of percentiles.
 * Not thread-safe: one histogram per thread, merged with hdr_add. */
#ifndef KNEE_HIST_HDR_H
#define KNEE_HIST_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct hdr {
    int64_t lowest;  /* lowest discernible value, >= 1 */
    int64_t highest; /* highest trackable value, >= 2 * lowest */
    int sig_digits;  /* 1..5 */
    int unit_magnitude;
    int sub_bucket_count_magnitude;
    int sub_bucket_half_count_magnitude;
    int32_t sub_bucket_count;
    int32_t sub_bucket_half_count;
    int64_t sub_bucket_mask;
    int leading_zero_count_base;
    int32_t bucket_count;
    size_t counts_len;
    int64_t *counts;
    int64_t total_count;
    int64_t min_value;      /* smallest recorded non-zero value (INT64_MAX when none) */
    int64_t max_value;      /* largest recorded value (0 when none) */
    int64_t overflow_count; /* values > highest: counted here, not in counts[] */
    int64_t overflow_max;
    /* Interval bounds for logs (ms since the epoch or since a base; the hlog module's) */
    double start_s, end_s;
};

/* Allocate a histogram. Returns 0, KNEE_EINVAL for bad parameters (sig_digits outside 1..5,
 * lowest < 1, highest < 2*lowest, or the index space beyond 62 bits). */
int hdr_init(struct hdr *h, int64_t lowest, int64_t highest, int sig_digits);
/* Free the counts; h is zeroed and may be hdr_init'ed again. */
void hdr_release(struct hdr *h);
/* Bytes of counts an hdr_init with these parameters allocates (0 when invalid). */
size_t hdr_memory_bytes(int64_t lowest, int64_t highest, int sig_digits);

/* Record count occurrences of value. 0; KNEE_ENEG for a negative value or count (nothing
 * recorded); a value > highest is added to overflow_count (overflow_max keeps the largest) and
 * returns KNEE_ERANGE; KNEE_EOVERFLOW (nothing recorded) if total_count would pass INT64_MAX.
 * count == 0 records nothing. O(1), no allocation. */
int hdr_record(struct hdr *h, int64_t value, int64_t count);
/* Record with HdrHistogram's coordinated-omission back-fill (recordValueWithExpectedInterval):
 * also records value - k*interval for every k >= 1 while that stays >= interval (each with
 * `count`). interval <= 0 records plainly. Back-filled values above highest are counted as
 * overflow; returns KNEE_ERANGE when any value (the original or a back-filled one)
 * overflowed. Cost O(min(value/interval, counts_len)): long stalls are filled per bucket,
 * not per value. */
int hdr_record_corrected(struct hdr *h, int64_t value, int64_t count, int64_t expected_interval);

/* dst += src: counts, total, extremes, overflow; the interval becomes the union of both
 * (start_s/end_s equal to 0 count as unset). Exact index-wise when unit_magnitude and
 * sub_bucket_count match (same sig_digits and floor(log2(lowest)); highest may differ): buckets
 * of src whose lowest value is above dst->highest go to dst's overflow. KNEE_EMISMATCH (dst
 * unchanged) otherwise, since re-recording between different bucket layouts loses precision;
 * KNEE_EOVERFLOW (dst unchanged) if a count would pass INT64_MAX. */
int hdr_add(struct hdr *dst, const struct hdr *src);
/* Zero all counts, extremes and overflow; keeps parameters and memory. Zeroes only the span
 * [min_value, max_value] and counts[0]: a caller that writes counts itself keeps total_count,
 * min_value and max_value on them (hdr_recalc sets them from the counts). */
void hdr_reset(struct hdr *h);

/* Index math (as AbstractHistogram). */
size_t hdr_index_of(const struct hdr *h, int64_t value);
int64_t hdr_value_from_index(const struct hdr *h, size_t index);
/* The values counts[index] stands for: the return value (hdr_value_from_index's) .. that +
 * *width - 1. Inline, for the walks over a counts array that convert a histogram once a second
 * (hist/prom.c, hist/native.c): no call and no second index computation per bucket. */
static inline int64_t hdr_index_range(const struct hdr *h, size_t index, int64_t *width)
{
    int b = (int)(index >> h->sub_bucket_half_count_magnitude) - 1;
    int64_t s = (int64_t)(index & (size_t)(h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;
    if (b < 0) {
        s -= h->sub_bucket_half_count;
        b = 0;
    }
    *width = (int64_t)1 << (b + h->unit_magnitude);
    return (int64_t)((uint64_t)s << (b + h->unit_magnitude)); /* as hdr_value_from_index */
}
int64_t hdr_size_of_equivalent_range(const struct hdr *h, int64_t value);
int64_t hdr_lowest_equivalent(const struct hdr *h, int64_t value);
int64_t hdr_highest_equivalent(const struct hdr *h, int64_t value);
int64_t hdr_median_equivalent(const struct hdr *h, int64_t value);
int64_t hdr_next_non_equivalent(const struct hdr *h, int64_t value);
bool hdr_values_equivalent(const struct hdr *h, int64_t a, int64_t b);

/* Statistics, as the Java reference: min = lowest equivalent of the smallest non-zero value
 * (0 if a zero was recorded), max = highest equivalent of the largest, mean and stdev over
 * median-equivalent values (population stdev, as getStdDeviation). Empty histogram: 0. */
int64_t hdr_min(const struct hdr *h);
int64_t hdr_max(const struct hdr *h);
double hdr_mean(const struct hdr *h);
double hdr_stdev(const struct hdr *h);

/* Java getValueAtPercentile: rank = max(1, ceil(p'/100 * total)) with p' one ulp below p,
 * reported as the highest equivalent value of the bucket holding that rank (lowest for
 * p == 0). p in [0,100]. 0 for an empty histogram. */
int64_t hdr_value_at_percentile(const struct hdr *h, double p_percent);

/* Iteration, exactly as the Java reference's iterators (AbstractHistogramIterator and its
 * four subclasses; the step sequence, the reported values and the percentile ticks agree
 * value for value with HdrHistogram 2.1.x). Usage:
 *     struct hdr_iter it; hdr_iter_percentile_init(&it, h, 5);
 *     while (hdr_iter_next(&it)) use it.value_iterated_to, it.percentile, it.cumulative_count
 * The histogram must not change during an iteration (hdr_iter_next then returns false).
 *   recorded:   one step per non-empty bucket;
 *   percentile: steps at percentile ticks, ticks_per_half_distance ticks per halving of the
 *               distance to 100%, plus a final step at 100%;
 *   linear:     one step per value_units_per_bucket (>= 1) up to the last recorded value;
 *   log:        steps at first_bucket_size * log_base^k (first_bucket_size >= 1, log_base > 1). */
enum hdr_iter_kind { HDR_ITER_RECORDED, HDR_ITER_PERCENTILE, HDR_ITER_LINEAR, HDR_ITER_LOG };
struct hdr_iter {
    const struct hdr *h;
    enum hdr_iter_kind kind;
    /* output of each step (HistogramIterationValue) */
    int64_t value_iterated_to;           /* reporting value of the step (recorded/percentile: the highest
                                            equivalent value of the current bucket; linear/log: the
                                            step's upper reporting level) */
    int64_t value_iterated_from;         /* value_iterated_to of the previous step (0 at first) */
    int64_t count_at_value;              /* count in the bucket at the current index */
    int64_t count_added_in_step;         /* counts added since the previous step */
    int64_t cumulative_count;            /* total counts up to and including the current bucket */
    double percentile;                   /* 100 * cumulative_count / total */
    double percentile_level_iterated_to; /* percentile iterator: the tick; others: percentile */
    /* private state (AbstractHistogramIterator's) */
    int64_t total_count, array_total;
    size_t current_index;
    int64_t current_value_at_index, next_value_at_index;
    int64_t prev_value_iterated_to, total_count_to_prev_index, total_count_to_current_index;
    bool fresh_sub_bucket;
    size_t visited_index;        /* recorded: last index reported (SIZE_MAX: none) */
    int ticks_per_half_distance; /* percentile */
    double percentile_to_iterate_to;
    bool reached_last;
    int64_t value_units_per_bucket;    /* linear */
    int64_t step_highest, step_lowest; /* linear, log: current step's reporting level */
    double log_base, next_log_level;   /* log */
};
void hdr_iter_recorded_init(struct hdr_iter *it, const struct hdr *h);
void hdr_iter_percentile_init(struct hdr_iter *it, const struct hdr *h, int ticks_per_half_distance);
void hdr_iter_linear_init(struct hdr_iter *it, const struct hdr *h, int64_t value_units_per_bucket);
void hdr_iter_log_init(struct hdr_iter *it, const struct hdr *h, int64_t first_bucket_size, double log_base);
/* Advance to the next step; false when the iteration is over. */
bool hdr_iter_next(struct hdr_iter *it);

/* Count recorded in the bucket holding value (0 for values beyond the counts array). */
int64_t hdr_count_at_value(const struct hdr *h, int64_t value);

/* Recompute total_count, min_value and max_value from counts[] (as the Java reference does
 * after decoding), for code that fills counts[] directly (the hlog decoder). Overflow fields
 * are left alone. */
void hdr_recalc(struct hdr *h);

/* Java's outputPercentileDistribution, character for character: the header line, one row per
 * percentile-iterator step ("%12.Nf %2.12f %10d %14.2f" with N = sig_digits, values divided by
 * value_unit_ratio, e.g. 1e6 for ns -> ms), the last row without its 1/(1-p) column, and the
 * Mean/StdDeviation, Max/Total count and Buckets/SubBuckets footer; with csv, Java's CSV variant
 * (no footer). Numbers are formatted as java.util.Formatter does (shortest round-trip decimal
 * digits rounded half-up), not as printf does. Returns 0 or -EIO on a write error. */
int hdr_percentiles_print(FILE *out, const struct hdr *h, int ticks_per_half_distance, double value_unit_ratio,
                          bool csv);

/* Format v with `decimals` digits after the point as Java's String.format("%.<decimals>f")
 * does: the shortest decimal digits that round-trip to v, rounded half-up. Infinity/NaN as
 * Java prints them ("Infinity", "NaN"). Returns the length (truncated to cap-1 like snprintf). */
int hdr_java_fixed(char *buf, size_t cap, double v, int decimals);

#endif
