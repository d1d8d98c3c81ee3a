/* HdrHistogram: the counts array, its index math, recording (plain and with coordinated-omission
 * back-fill), merging, statistics, the four iterators and Java's percentile-distribution
 * printout. Written from HdrHistogram's published description (Gil Tene's design) and checked value
 * for value against the Java reference by tests/e2e/hdr_java.sh. */
#include "hist/hdr.h"

#include "core/err.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- parameters and index math ---- */

static int floor_log2_u64(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}

/* Java: (int)ceil(log(2*10^d)/log(2)). 2*10^d is never a power of two for d >= 1, so the integer
 * form below is exact and agrees with Java's floating formula. */
static int sub_bucket_count_magnitude_for(int sig_digits)
{
    uint64_t largest = 2;
    for (int i = 0; i < sig_digits; i++)
        largest *= 10;
    int m = floor_log2_u64(largest);
    if (((uint64_t)1 << m) < largest)
        m++;
    return m;
}

/* Buckets needed so that the top bucket covers `highest` (Java getBucketsNeededToCoverValue). */
static int32_t buckets_needed(int64_t highest, int32_t sub_bucket_count, int unit_magnitude)
{
    int64_t smallest_untrackable = (int64_t)sub_bucket_count << unit_magnitude;
    int32_t needed = 1;
    while (smallest_untrackable <= highest) {
        if (smallest_untrackable > INT64_MAX / 2)
            return needed + 1;
        smallest_untrackable <<= 1;
        needed++;
    }
    return needed;
}

static bool params_valid(int64_t lowest, int64_t highest, int sig_digits)
{
    if (sig_digits < 1 || sig_digits > 5 || lowest < 1 || highest / 2 < lowest)
        return false;
    int um = floor_log2_u64((uint64_t)lowest);
    return sub_bucket_count_magnitude_for(sig_digits) + um <= 62;
}

size_t hdr_memory_bytes(int64_t lowest, int64_t highest, int sig_digits)
{
    if (!params_valid(lowest, highest, sig_digits))
        return 0;
    int um = floor_log2_u64((uint64_t)lowest);
    int sbcm = sub_bucket_count_magnitude_for(sig_digits);
    int32_t sbc = (int32_t)1 << sbcm;
    int32_t buckets = buckets_needed(highest, sbc, um);
    return (size_t)(buckets + 1) * (size_t)(sbc / 2) * sizeof(int64_t);
}

int hdr_init(struct hdr *h, int64_t lowest, int64_t highest, int sig_digits)
{
    memset(h, 0, sizeof *h);
    if (!params_valid(lowest, highest, sig_digits))
        return KNEE_EINVAL;
    h->lowest = lowest;
    h->highest = highest;
    h->sig_digits = sig_digits;
    /* Java computes (int)(log(L)/log(2)); the integer floor(log2) is the exact value of it. */
    h->unit_magnitude = floor_log2_u64((uint64_t)lowest);
    h->sub_bucket_count_magnitude = sub_bucket_count_magnitude_for(sig_digits);
    h->sub_bucket_half_count_magnitude = h->sub_bucket_count_magnitude - 1;
    h->sub_bucket_count = (int32_t)1 << h->sub_bucket_count_magnitude;
    h->sub_bucket_half_count = h->sub_bucket_count / 2;
    h->sub_bucket_mask = ((int64_t)h->sub_bucket_count - 1) << h->unit_magnitude;
    h->leading_zero_count_base = 64 - h->unit_magnitude - h->sub_bucket_count_magnitude;
    h->bucket_count = buckets_needed(highest, h->sub_bucket_count, h->unit_magnitude);
    h->counts_len = (size_t)(h->bucket_count + 1) * (size_t)h->sub_bucket_half_count;
    h->counts = xcalloc(h->counts_len, sizeof *h->counts);
    h->min_value = INT64_MAX;
    return 0;
}

void hdr_release(struct hdr *h)
{
    free(h->counts);
    memset(h, 0, sizeof *h);
}

static inline int bucket_index(const struct hdr *h, int64_t v)
{
    /* v | mask is never 0, so clz is defined. */
    return h->leading_zero_count_base - __builtin_clzll((uint64_t)(v | h->sub_bucket_mask));
}

static inline int32_t sub_bucket_index(const struct hdr *h, int64_t v, int b)
{
    return (int32_t)((uint64_t)v >> (b + h->unit_magnitude));
}

static inline size_t counts_index(const struct hdr *h, int b, int32_t s)
{
    return ((size_t)(b + 1) << h->sub_bucket_half_count_magnitude) + (size_t)(s - h->sub_bucket_half_count);
}

size_t hdr_index_of(const struct hdr *h, int64_t value)
{
    int b = bucket_index(h, value);
    return counts_index(h, b, sub_bucket_index(h, value, b));
}

int64_t hdr_value_from_index(const struct hdr *h, size_t index)
{
    int b = (int)(index >> h->sub_bucket_half_count_magnitude) - 1;
    int64_t s = (int64_t)(index & (size_t)(h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;
    if (b < 0) {
        s -= h->sub_bucket_half_count;
        b = 0;
    }
    /* unsigned: the iterators peek one index past the array, which for a histogram reaching
     * INT64_MAX lies beyond it (Java wraps there too) */
    return (int64_t)((uint64_t)s << (b + h->unit_magnitude));
}

int64_t hdr_size_of_equivalent_range(const struct hdr *h, int64_t value)
{
    int b = bucket_index(h, value);
    int32_t s = sub_bucket_index(h, value, b);
    return (int64_t)1 << (h->unit_magnitude + (s >= h->sub_bucket_count ? b + 1 : b));
}

int64_t hdr_lowest_equivalent(const struct hdr *h, int64_t value)
{
    int b = bucket_index(h, value);
    return (int64_t)sub_bucket_index(h, value, b) << (b + h->unit_magnitude);
}

/* Wrapping arithmetic as Java's long: for the top bucket of a histogram reaching INT64_MAX the
 * next non-equivalent value wraps, and the highest equivalent value comes back as INT64_MAX. */
int64_t hdr_next_non_equivalent(const struct hdr *h, int64_t value)
{
    return (int64_t)((uint64_t)hdr_lowest_equivalent(h, value) + (uint64_t)hdr_size_of_equivalent_range(h, value));
}

int64_t hdr_highest_equivalent(const struct hdr *h, int64_t value)
{
    return (int64_t)((uint64_t)hdr_next_non_equivalent(h, value) - 1);
}

int64_t hdr_median_equivalent(const struct hdr *h, int64_t value)
{
    return hdr_lowest_equivalent(h, value) + (hdr_size_of_equivalent_range(h, value) >> 1);
}

bool hdr_values_equivalent(const struct hdr *h, int64_t a, int64_t b)
{
    return hdr_lowest_equivalent(h, a) == hdr_lowest_equivalent(h, b);
}

int64_t hdr_count_at_value(const struct hdr *h, int64_t value)
{
    if (value < 0)
        return 0;
    size_t i = hdr_index_of(h, value);
    return i < h->counts_len ? h->counts[i] : 0;
}

/* ---- recording ---- */

static void note_overflow(struct hdr *h, int64_t value, int64_t count)
{
    h->overflow_count += count;
    if (value > h->overflow_max)
        h->overflow_max = value;
}

int hdr_record(struct hdr *h, int64_t value, int64_t count)
{
    if (value < 0 || count < 0)
        return KNEE_ENEG;
    if (count == 0)
        return 0;
    if (value > h->highest) {
        note_overflow(h, value, count);
        return KNEE_ERANGE;
    }
    int64_t total;
    /* Every bucket count is <= total_count, so checking the total guards them all. */
    if (__builtin_add_overflow(h->total_count, count, &total))
        return KNEE_EOVERFLOW;
    h->counts[hdr_index_of(h, value)] += count;
    h->total_count = total;
    if (value > h->max_value)
        h->max_value = value;
    if (value < h->min_value && value != 0)
        h->min_value = value;
    return 0;
}

/* Back-fill the arithmetic progression first, first+step, ..., last (all within [0, highest]),
 * `count` each, bucket by bucket: the number of terms in a bucket [lo, hi] is computed, so a
 * 1-hour stall at a 1 µs interval costs one pass over the counts array, not 3.6e9 records. */
static void record_progression(struct hdr *h, int64_t first, int64_t last, int64_t step, int64_t count)
{
    size_t i0 = hdr_index_of(h, first), i1 = hdr_index_of(h, last);
    for (size_t i = i0; i <= i1; i++) {
        int64_t lo = hdr_value_from_index(h, i);
        int64_t hi = hdr_highest_equivalent(h, lo);
        if (lo < first)
            lo = first;
        if (hi > last)
            hi = last;
        if (hi < lo)
            continue;
        /* terms j with first + j*step in [lo, hi] */
        int64_t jlo = (lo - first + step - 1) / step;
        int64_t jhi = (hi - first) / step;
        if (jhi >= jlo)
            h->counts[i] += (jhi - jlo + 1) * count;
    }
}

int hdr_record_corrected(struct hdr *h, int64_t value, int64_t count, int64_t expected_interval)
{
    if (value < 0 || count < 0)
        return KNEE_ENEG;
    if (expected_interval <= 0 || value <= expected_interval)
        return hdr_record(h, value, count);
    if (count == 0)
        return 0;
    /* Terms value - k*I for k = 0..K with K = value/I - 1 (the last one still >= I). */
    int64_t step = expected_interval;
    int64_t terms = value / step; /* k = 0..K, K + 1 terms */
    int64_t over_terms = 0;       /* leading terms above highest */
    if (value > h->highest) {
        int64_t d = value - h->highest; /* term k overflows iff k*step < d */
        over_terms = (d - 1) / step + 1;
        if (over_terms > terms)
            over_terms = terms;
    }
    int64_t in_terms = terms - over_terms, in_add, over_add, total;
    if (__builtin_mul_overflow(in_terms, count, &in_add) || __builtin_add_overflow(h->total_count, in_add, &total) ||
        __builtin_mul_overflow(over_terms, count, &over_add))
        return KNEE_EOVERFLOW;
    if (over_terms)
        note_overflow(h, value, over_add);
    if (in_terms == 0)
        return KNEE_ERANGE;
    int64_t hi_term = value - over_terms * step;  /* largest recorded term */
    int64_t lo_term = value - (terms - 1) * step; /* smallest: in [I, 2I) */
    if ((size_t)in_terms <= h->counts_len) {
        for (int64_t v = lo_term; v <= hi_term; v += step)
            h->counts[hdr_index_of(h, v)] += count;
    } else {
        record_progression(h, lo_term, hi_term, step, count);
    }
    h->total_count = total;
    if (hi_term > h->max_value)
        h->max_value = hi_term;
    if (lo_term < h->min_value)
        h->min_value = lo_term; /* lo_term >= I >= 1 */
    return over_terms ? KNEE_ERANGE : 0;
}

/* The indexes that may hold counts: [*lo, *hi], from the extremes every writer keeps on the
 * non-zero counts (a recorded 0 is counts[0], below min_value's bucket). false: none. A
 * second's histogram spans a few of its buckets, and a walk over the span alone reads and
 * writes no page of the rest (each a page fault the first time, in the thread that walks). */
static bool hdr_span(const struct hdr *h, size_t *lo, size_t *hi)
{
    if (h->total_count <= 0)
        return false;
    *lo = h->counts[0] || h->min_value == INT64_MAX ? 0 : hdr_index_of(h, h->min_value);
    *hi = hdr_index_of(h, h->max_value);
    if (*hi >= h->counts_len) /* cannot happen: max_value <= highest */
        *hi = h->counts_len - 1;
    return *lo <= *hi;
}

void hdr_reset(struct hdr *h)
{
    size_t lo, hi; /* only the span that may hold counts */
    if (hdr_span(h, &lo, &hi))
        memset(&h->counts[lo], 0, (hi - lo + 1) * sizeof *h->counts);
    h->total_count = 0;
    h->min_value = INT64_MAX;
    h->max_value = 0;
    h->overflow_count = 0;
    h->overflow_max = 0;
    h->start_s = h->end_s = 0;
}

void hdr_recalc(struct hdr *h)
{
    int64_t total = 0;
    size_t max_i = SIZE_MAX, min_nz_i = SIZE_MAX;
    for (size_t i = 0; i < h->counts_len; i++) {
        if (h->counts[i] > 0) {
            total += h->counts[i];
            max_i = i;
            if (min_nz_i == SIZE_MAX && i != 0)
                min_nz_i = i;
        }
    }
    h->total_count = total;
    h->max_value = max_i == SIZE_MAX ? 0 : hdr_value_from_index(h, max_i);
    h->min_value = min_nz_i == SIZE_MAX ? INT64_MAX : hdr_value_from_index(h, min_nz_i);
}

/* ---- merging ---- */

int hdr_add(struct hdr *dst, const struct hdr *src)
{
    if (dst->unit_magnitude != src->unit_magnitude || dst->sub_bucket_count != src->sub_bucket_count)
        return KNEE_EMISMATCH;
    /* A bucket of src goes into dst iff its lowest value is trackable by dst, the same rule
     * hdr_record applies to a single value (its bucket's lowest value is <= the value). Lowest
     * values grow with the index, so the buckets that fit are those up to the one holding
     * dst->highest, an index inside dst's counts by construction (buckets_needed covers it). */
    size_t fit = hdr_index_of(dst, dst->highest) + 1; /* indexes [0, fit) of src fit into dst */
    if (fit > src->counts_len)
        fit = src->counts_len;
    int64_t in = 0, out = 0, t;
    size_t first_in = SIZE_MAX, top_in = SIZE_MAX, top_out = SIZE_MAX, lo = 1, hi = 0;
    if (!hdr_span(src, &lo, &hi))
        lo = 1, hi = 0;
    for (size_t i = lo; i <= hi; i++) {
        if (!src->counts[i])
            continue;
        if (i < fit) {
            in += src->counts[i];
            if (first_in == SIZE_MAX)
                first_in = i;
            top_in = i;
        } else {
            out += src->counts[i];
            top_out = i;
        }
    }
    if (__builtin_add_overflow(dst->total_count, in, &t) ||
        __builtin_add_overflow(dst->overflow_count, out + src->overflow_count, &t))
        return KNEE_EOVERFLOW;
    if (top_in != SIZE_MAX) /* src's non-empty span only (hdr_span) */
        for (size_t i = first_in; i <= top_in; i++)
            dst->counts[i] += src->counts[i];
    dst->total_count += in;
    if (top_in != SIZE_MAX) {
        size_t max_i = hdr_index_of(src, src->max_value);
        int64_t m = max_i == top_in ? src->max_value : hdr_value_from_index(src, top_in);
        if (m > dst->max_value)
            dst->max_value = m;
        if (src->min_value != INT64_MAX && hdr_index_of(src, src->min_value) < fit && src->min_value < dst->min_value)
            dst->min_value = src->min_value;
    }
    if (top_out != SIZE_MAX) {
        size_t max_i = hdr_index_of(src, src->max_value);
        note_overflow(
            dst, max_i == top_out ? src->max_value : hdr_highest_equivalent(src, hdr_value_from_index(src, top_out)),
            out);
    }
    if (src->overflow_count)
        note_overflow(dst, src->overflow_max, src->overflow_count);
    if (src->start_s != 0 || src->end_s != 0) {
        if (dst->start_s == 0 && dst->end_s == 0) {
            dst->start_s = src->start_s;
            dst->end_s = src->end_s;
        } else {
            if (src->start_s < dst->start_s)
                dst->start_s = src->start_s;
            if (src->end_s > dst->end_s)
                dst->end_s = src->end_s;
        }
    }
    return 0;
}

/* ---- statistics ---- */

int64_t hdr_min(const struct hdr *h)
{
    if (h->total_count == 0 || h->counts[0] > 0 || h->min_value == INT64_MAX)
        return 0;
    return hdr_lowest_equivalent(h, h->min_value);
}

int64_t hdr_max(const struct hdr *h)
{
    return h->max_value == 0 ? 0 : hdr_highest_equivalent(h, h->max_value);
}

/* Mean and stdev walk the non-empty buckets in index order and use the same double operations
 * as Java's getMean/getStdDeviation, so the printed footers agree to the last digit. */
double hdr_mean(const struct hdr *h)
{
    if (h->total_count == 0)
        return 0;
    double total = 0;
    for (size_t i = 0; i < h->counts_len; i++)
        if (h->counts[i])
            total += (double)hdr_median_equivalent(h, hdr_value_from_index(h, i)) * (double)h->counts[i];
    return total / (double)h->total_count;
}

double hdr_stdev(const struct hdr *h)
{
    if (h->total_count == 0)
        return 0;
    double mean = hdr_mean(h), total = 0;
    for (size_t i = 0; i < h->counts_len; i++) {
        if (h->counts[i]) {
            double dev = (double)hdr_median_equivalent(h, hdr_value_from_index(h, i)) - mean;
            total += dev * dev * (double)h->counts[i];
        }
    }
    return sqrt(total / (double)h->total_count);
}

/* Java's (long) cast of a double: saturating, NaN -> 0 (a C cast would be undefined). */
static int64_t java_d2l(double d)
{
    if (isnan(d))
        return 0;
    if (d >= 9223372036854775807.0)
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

int64_t hdr_value_at_percentile(const struct hdr *h, double p_percent)
{
    /* One ulp below p so that p*total landing a hair above an integer (floating error) does
     * not push the rank into the next bucket; then ceil, as Java does. */
    double p = fmin(fmax(nextafter(p_percent, -INFINITY), 0.0), 100.0);
    int64_t rank = java_d2l(ceil(p * (double)h->total_count / 100.0));
    if (rank < 1)
        rank = 1;
    int64_t cum = 0;
    for (size_t i = 0; i < h->counts_len; i++) {
        cum += h->counts[i];
        if (cum >= rank) {
            int64_t v = hdr_value_from_index(h, i);
            return p_percent == 0.0 ? hdr_lowest_equivalent(h, v) : hdr_highest_equivalent(h, v);
        }
    }
    return 0;
}

/* ---- iterators (AbstractHistogramIterator and subclasses) ---- */

static void iter_reset(struct hdr_iter *it, const struct hdr *h, enum hdr_iter_kind kind)
{
    memset(it, 0, sizeof *it);
    it->h = h;
    it->kind = kind;
    it->total_count = h->total_count;
    it->array_total = h->total_count;
    it->current_index = 0;
    it->current_value_at_index = 0;
    it->next_value_at_index = (int64_t)1 << h->unit_magnitude;
    it->fresh_sub_bucket = true;
    it->visited_index = SIZE_MAX;
}

void hdr_iter_recorded_init(struct hdr_iter *it, const struct hdr *h)
{
    iter_reset(it, h, HDR_ITER_RECORDED);
}

void hdr_iter_percentile_init(struct hdr_iter *it, const struct hdr *h, int ticks_per_half_distance)
{
    iter_reset(it, h, HDR_ITER_PERCENTILE);
    it->ticks_per_half_distance = ticks_per_half_distance < 1 ? 1 : ticks_per_half_distance;
    it->percentile_to_iterate_to = 0.0;
    it->reached_last = false;
}

void hdr_iter_linear_init(struct hdr_iter *it, const struct hdr *h, int64_t value_units_per_bucket)
{
    iter_reset(it, h, HDR_ITER_LINEAR);
    it->value_units_per_bucket = value_units_per_bucket < 1 ? 1 : value_units_per_bucket;
    it->step_highest = it->value_units_per_bucket - 1;
    it->step_lowest = hdr_lowest_equivalent(h, it->step_highest);
}

void hdr_iter_log_init(struct hdr_iter *it, const struct hdr *h, int64_t first_bucket_size, double log_base)
{
    iter_reset(it, h, HDR_ITER_LOG);
    if (first_bucket_size < 1)
        first_bucket_size = 1;
    it->log_base = log_base > 1.0 ? log_base : 2.0;
    it->step_highest = first_bucket_size - 1;
    it->step_lowest = hdr_lowest_equivalent(h, it->step_highest);
    it->next_log_level = (double)first_bucket_size;
}

static bool iter_has_next(struct hdr_iter *it)
{
    if (it->h->total_count != it->total_count)
        return false; /* modified during iteration (Java throws) */
    if (it->total_count_to_current_index < it->array_total)
        return true;
    switch (it->kind) {
    case HDR_ITER_RECORDED:
        return false;
    case HDR_ITER_PERCENTILE:
        /* one last step to 100% */
        if (!it->reached_last && it->array_total > 0) {
            it->percentile_to_iterate_to = 100.0;
            it->reached_last = true;
            return true;
        }
        return false;
    case HDR_ITER_LINEAR:
        /* keep stepping until the step no longer ends before the next (empty) bucket */
        return it->step_highest < it->next_value_at_index;
    case HDR_ITER_LOG:
        return hdr_lowest_equivalent(it->h, java_d2l(it->next_log_level)) < it->next_value_at_index;
    }
    return false;
}

static bool iter_reached_level(const struct hdr_iter *it)
{
    switch (it->kind) {
    case HDR_ITER_RECORDED:
        return it->h->counts[it->current_index] != 0 && it->visited_index != it->current_index;
    case HDR_ITER_PERCENTILE:
        if (it->count_at_value == 0)
            return false;
        return (100.0 * (double)it->total_count_to_current_index) / (double)it->array_total >=
               it->percentile_to_iterate_to;
    case HDR_ITER_LINEAR:
    case HDR_ITER_LOG:
        return it->current_value_at_index >= it->step_lowest || it->current_index >= it->h->counts_len - 1;
    }
    return false;
}

static void iter_increment_level(struct hdr_iter *it)
{
    switch (it->kind) {
    case HDR_ITER_RECORDED:
        it->visited_index = it->current_index;
        break;
    case HDR_ITER_PERCENTILE: {
        /* Fixed-size ticks within each half of the remaining distance to 100%: the tick is
         * 100 / (ticks * 2^(floor(log2(100/(100-level))) + 1)). Java's integer conversions are
         * reproduced: at level 100 the exponent overflows and the tick becomes infinite. */
        double level = it->percentile_to_iterate_to;
        double x = log(100.0 / (100.0 - level)) / log(2.0);
        int64_t e = java_d2l(x);
        double reporting_ticks;
        if (e == INT64_MAX) {
            reporting_ticks = 0; /* Java: (long)+1 wraps to Long.MIN_VALUE, pow(2, that) == 0 */
        } else {
            double pw = pow(2.0, (double)(e + 1));
            /* long multiplication wraps in Java */
            uint64_t t = (uint64_t)it->ticks_per_half_distance * (uint64_t)java_d2l(pw);
            reporting_ticks = (double)(int64_t)t;
        }
        it->percentile_to_iterate_to = level + 100.0 / reporting_ticks;
        break;
    }
    case HDR_ITER_LINEAR:
        it->step_highest += it->value_units_per_bucket;
        it->step_lowest = hdr_lowest_equivalent(it->h, it->step_highest);
        break;
    case HDR_ITER_LOG:
        it->next_log_level *= it->log_base;
        it->step_highest = java_d2l(it->next_log_level) - 1;
        it->step_lowest = hdr_lowest_equivalent(it->h, it->step_highest);
        break;
    }
}

static int64_t iter_value_iterated_to(const struct hdr_iter *it)
{
    if (it->kind == HDR_ITER_LINEAR || it->kind == HDR_ITER_LOG)
        return it->step_highest;
    return hdr_highest_equivalent(it->h, it->current_value_at_index);
}

bool hdr_iter_next(struct hdr_iter *it)
{
    if (!iter_has_next(it))
        return false;
    const struct hdr *h = it->h;
    while (it->current_index < h->counts_len) {
        it->count_at_value = h->counts[it->current_index];
        if (it->fresh_sub_bucket) {
            it->total_count_to_current_index += it->count_at_value;
            it->fresh_sub_bucket = false;
        }
        if (iter_reached_level(it)) {
            int64_t to = iter_value_iterated_to(it);
            it->value_iterated_to = to;
            it->value_iterated_from = it->prev_value_iterated_to;
            it->count_added_in_step = it->total_count_to_current_index - it->total_count_to_prev_index;
            it->cumulative_count = it->total_count_to_current_index;
            /* 0/0 for an empty histogram: NaN, as Java (the positive quiet NaN, not x86's -nan) */
            it->percentile =
                it->array_total ? (100.0 * (double)it->total_count_to_current_index) / (double)it->array_total : NAN;
            it->percentile_level_iterated_to =
                it->kind == HDR_ITER_PERCENTILE ? it->percentile_to_iterate_to : it->percentile;
            it->prev_value_iterated_to = to;
            it->total_count_to_prev_index = it->total_count_to_current_index;
            iter_increment_level(it);
            return true;
        }
        /* next sub bucket */
        it->fresh_sub_bucket = true;
        it->current_index++;
        it->current_value_at_index = hdr_value_from_index(h, it->current_index);
        it->next_value_at_index = hdr_value_from_index(h, it->current_index + 1);
    }
    return false;
}

/* ---- Java-compatible printing ---- */

int hdr_java_fixed(char *buf, size_t cap, double v, int decimals)
{
    if (decimals < 0)
        decimals = 0;
    if (isnan(v))
        return snprintf(buf, cap, "NaN");
    if (isinf(v))
        return snprintf(buf, cap, v < 0 ? "-Infinity" : "Infinity");
    bool neg = signbit(v) != 0;
    if (neg)
        v = -v;
    /* The shortest digits that read back as v (what Java's FloatingDecimal produces). */
    char tmp[40];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    /* tmp = d[.ddd]e±XX: digits D with value 0.D * 10^dexp */
    char digits[24];
    int nd = 0;
    char *p = tmp;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    int dexp = (int)strtol(p + 1, NULL, 10) + 1;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (nd == 1 && digits[0] == '0')
        dexp = 1;
    /* Positional digits: index k is the digit of 10^(dexp-1-k). Keep dexp + decimals of them,
     * rounding half-up on the first dropped digit (FormattedFloatingDecimal.applyPrecision). */
    int keep = dexp + decimals;
    char out[400];
    int ilen; /* number of integer digits in the result */
    char res[400];
    if (keep > 380)
        keep = 380; /* beyond any double's digits: more zeros only */
    int rlen = 0;
    if (keep < 0) {
        rlen = 0; /* zero */
        ilen = 1;
    } else {
        int carry = keep < nd && digits[keep] >= '5';
        for (int k = 0; k < keep; k++)
            res[rlen++] = k < nd ? digits[k] : '0';
        for (int k = rlen - 1; k >= 0 && carry; k--) {
            if (res[k] == '9') {
                res[k] = '0';
            } else {
                res[k]++;
                carry = 0;
            }
        }
        if (carry) {
            memmove(res + 1, res, (size_t)rlen);
            res[0] = '1';
            rlen++;
            dexp++;
        }
        ilen = dexp;
    }
    /* res holds the digits of 10^(dexp-1) .. 10^-decimals (rlen of them), or nothing for 0. */
    int o = 0;
    if (neg)
        out[o++] = '-';
    if (rlen == 0) {
        out[o++] = '0';
        if (decimals) {
            out[o++] = '.';
            for (int k = 0; k < decimals; k++)
                out[o++] = '0';
        }
    } else {
        if (ilen <= 0) {
            out[o++] = '0';
        } else {
            for (int k = 0; k < ilen && o < 380; k++)
                out[o++] = res[k];
        }
        if (decimals) {
            out[o++] = '.';
            /* fractional digits: positions 10^-1 .. 10^-decimals */
            for (int f = 1; f <= decimals && o < 398; f++) {
                int k = dexp - 1 + f; /* index of 10^-f in res */
                out[o++] = (k >= 0 && k < rlen) ? res[k] : '0';
            }
        }
    }
    out[o] = '\0';
    return snprintf(buf, cap, "%s", out);
}

static void pad_print(FILE *out, int width, const char *s)
{
    fprintf(out, "%*s", width, s);
}

int hdr_percentiles_print(FILE *out, const struct hdr *h, int ticks_per_half_distance, double value_unit_ratio,
                          bool csv)
{
    char v[400], pc[400], inv[400];
    int d = h->sig_digits;
    if (csv)
        fprintf(out, "\"Value\",\"Percentile\",\"TotalCount\",\"1/(1-Percentile)\"\n");
    else
        fprintf(out, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    struct hdr_iter it;
    hdr_iter_percentile_init(&it, h, ticks_per_half_distance);
    while (hdr_iter_next(&it)) {
        double level = it.percentile_level_iterated_to / 100.0;
        hdr_java_fixed(v, sizeof v, (double)it.value_iterated_to / value_unit_ratio, d);
        hdr_java_fixed(pc, sizeof pc, level, 12);
        bool last = it.percentile_level_iterated_to == 100.0;
        if (!last)
            hdr_java_fixed(inv, sizeof inv, 1.0 / (1.0 - level), 2);
        if (csv) {
            fprintf(out, "%s,%s,%" PRId64 ",%s\n", v, pc, it.cumulative_count, last ? "Infinity" : inv);
        } else {
            pad_print(out, 12, v);
            fputc(' ', out);
            pad_print(out, 2, pc);
            fprintf(out, " %10" PRId64, it.cumulative_count);
            if (!last) {
                fputc(' ', out);
                pad_print(out, 14, inv);
            }
            fputc('\n', out);
        }
    }
    if (!csv) {
        char a[400], b[400];
        hdr_java_fixed(a, sizeof a, hdr_mean(h) / value_unit_ratio, d);
        hdr_java_fixed(b, sizeof b, hdr_stdev(h) / value_unit_ratio, d);
        fprintf(out, "#[Mean    = %12s, StdDeviation   = %12s]\n", a, b);
        hdr_java_fixed(a, sizeof a, (double)hdr_max(h) / value_unit_ratio, d);
        fprintf(out, "#[Max     = %12s, Total count    = %12" PRId64 "]\n", a, h->total_count);
        fprintf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", (int)h->bucket_count, (int)h->sub_bucket_count);
    }
    return ferror(out) ? -EIO : 0;
}
