/* Native histograms (hist/native.h): dense counts over the key range recorded, keys from
 * log2, HdrHistogram conversion bucket by bucket, the spans-and-deltas wire shape, and
 * histogram_quantile as Prometheus 2.42 runs it. */
#include "hist/native.h"

#include "core/err.h"
#include "core/grow.h"
#include "hist/hdr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const struct native_pb_fields native_pb_exposition = {
    .count = 1, .sum = 2, .schema = 5, .zero_threshold = 6, .zero_count = 7, .positive_span = 12, .positive_delta = 13};
const struct native_pb_fields native_pb_remote = {
    .count = 1, .sum = 3, .schema = 4, .zero_threshold = 5, .zero_count = 6, .positive_span = 11, .positive_delta = 12};

void native_init(struct native_hist *h, int32_t schema)
{
    memset(h, 0, sizeof *h);
    h->schema = schema;
    h->zero_threshold = NATIVE_ZERO_THRESHOLD;
}

void native_release(struct native_hist *h)
{
    free(h->counts);
    native_init(h, h->schema);
}

void native_reset(struct native_hist *h)
{
    h->zero_count = h->count = 0;
    h->sum = 0;
    h->n = 0;
    h->first = 0;
}

double native_upper(int32_t schema, int32_t key)
{
    /* 2^(key / 2^schema), exact for whole powers of two; ldexp keeps the integral part exact. */
    if (schema <= 0)
        return ldexp(1.0, key * (1 << -schema));
    int32_t per = 1 << schema;
    int32_t whole = key >= 0 ? key / per : -((-key + per - 1) / per);
    int32_t frac = key - whole * per;
    return ldexp(exp2((double)frac / per), whole);
}

int32_t native_key(int32_t schema, double v)
{
    double scale = ldexp(1.0, schema);
    int32_t k = (int32_t)ceil(log2(v) * scale);
    /* log2 may be off by an ulp: move k so that upper(k-1) < v <= upper(k) holds exactly. */
    while (native_upper(schema, k) < v)
        k++;
    while (native_upper(schema, k - 1) >= v)
        k--;
    return k;
}

/* Room for key k in the dense array: grows it (and shifts it when k is below first). */
static uint64_t *slot_of(struct native_hist *h, int32_t k)
{
    if (h->n == 0) {
        h->counts = grow_array(h->counts, &h->cap, 1, sizeof *h->counts, 256);
        h->first = k;
        h->n = 1;
        h->counts[0] = 0;
        return &h->counts[0];
    }
    if (k < h->first) {
        size_t shift = (size_t)(h->first - k);
        h->counts = grow_array(h->counts, &h->cap, h->n + shift, sizeof *h->counts, 256);
        memmove(h->counts + shift, h->counts, h->n * sizeof *h->counts);
        memset(h->counts, 0, shift * sizeof *h->counts);
        h->n += shift;
        h->first = k;
    } else if ((size_t)(k - h->first) >= h->n) {
        size_t need = (size_t)(k - h->first) + 1;
        h->counts = grow_array(h->counts, &h->cap, need, sizeof *h->counts, 256);
        memset(h->counts + h->n, 0, (need - h->n) * sizeof *h->counts);
        h->n = need;
    }
    return &h->counts[k - h->first];
}

bool native_observe(struct native_hist *h, double v, uint64_t n)
{
    if (!(v >= 0) || n == 0)
        return false;
    if (v <= h->zero_threshold)
        h->zero_count += n;
    else
        *slot_of(h, native_key(h->schema, v)) += n;
    h->count += n;
    h->sum += v * (double)n;
    return true;
}

void native_add_hdr(struct native_hist *h, const struct hdr *src, double scale)
{
    if (src->total_count <= 0 || !src->counts)
        return;
    /* Only the recorded range: a histogram up to an hour at 3 digits has ~32k counters. */
    size_t lo = src->counts[0] || src->min_value == INT64_MAX ? 0 : hdr_index_of(src, src->min_value);
    size_t end = hdr_index_of(src, src->max_value) + 1;
    if (end > src->counts_len)
        end = src->counts_len;
    for (size_t i = lo; i < end; i++) {
        int64_t c = src->counts[i];
        if (c <= 0)
            continue;
        int64_t v = hdr_value_from_index(src, i);
        double hi = (double)hdr_highest_equivalent(src, v) * scale;
        double mid = (double)hdr_median_equivalent(src, v) * scale;
        if (v == 0)
            hi = mid = 0; /* a recorded zero stays zero */
        if (hi <= h->zero_threshold)
            h->zero_count += (uint64_t)c;
        else
            *slot_of(h, native_key(h->schema, hi)) += (uint64_t)c;
        h->count += (uint64_t)c;
        h->sum += mid * (double)c;
    }
}

void native_from_hdr(struct native_hist *h, const struct hdr *src, double scale)
{
    native_reset(h);
    native_add_hdr(h, src, scale);
}

int native_add(struct native_hist *dst, const struct native_hist *src)
{
    if (dst->schema != src->schema || dst->zero_threshold != src->zero_threshold)
        return KNEE_EMISMATCH;
    if (src->n) { /* the two ends first, so the array grows at most twice */
        slot_of(dst, src->first);
        slot_of(dst, src->first + (int32_t)src->n - 1);
        for (size_t i = 0; i < src->n; i++)
            dst->counts[(size_t)(src->first - dst->first) + i] += src->counts[i];
    }
    dst->zero_count += src->zero_count;
    dst->count += src->count;
    dst->sum += src->sum;
    return 0;
}

void native_copy(struct native_hist *dst, const struct native_hist *src)
{
    dst->schema = src->schema;
    dst->zero_threshold = src->zero_threshold;
    native_reset(dst);
    native_add(dst, src);
}

double native_quantile(const struct native_hist *h, double q)
{
    if (isnan(q) || h->count == 0)
        return NAN;
    if (q < 0)
        return -INFINITY;
    if (q > 1)
        return INFINITY;
    double rank = q * (double)h->count, cum = (double)h->zero_count;
    double lower = 0, upper = h->zero_threshold, c = (double)h->zero_count;
    /* Prometheus iterates the zero bucket, then every bucket of every span (empty ones inside a
     * span too); the first whose cumulative count reaches the rank holds the quantile. */
    for (size_t i = 0; cum < rank && i < h->n; i++) {
        if (!h->counts[i])
            continue;
        int32_t k = h->first + (int32_t)i;
        lower = native_upper(h->schema, k - 1);
        upper = native_upper(h->schema, k);
        c = (double)h->counts[i];
        cum += c;
    }
    if (cum < rank)
        return upper;
    if (c == 0)
        return lower;
    rank -= cum - c;
    return lower + (upper - lower) * (rank / c);
}

/* The spans: runs of keys with at most NATIVE_MAX_GAP empty keys inside. */
static void write_spans(const struct native_hist *h, const struct native_pb_fields *f, struct pb_buf *b)
{
    int32_t prev_end = 0; /* key after the previous span */
    bool any = false;
    size_t i = 0;
    while (i < h->n) {
        if (!h->counts[i]) {
            i++;
            continue;
        }
        size_t start = i, end = i + 1; /* [start, end) non-empty at both ends */
        for (size_t j = end; j < h->n && j - end <= NATIVE_MAX_GAP; j++)
            if (h->counts[j])
                end = j + 1;
        int32_t key = h->first + (int32_t)start;
        size_t m = pb_begin(b, f->positive_span);
        pb_sint(b, 1, any ? key - prev_end : key);
        pb_uint(b, 2, end - start);
        pb_end(b, m);
        prev_end = h->first + (int32_t)end;
        any = true;
        i = end;
    }
    if (!any) {
        size_t m = pb_begin(b, f->positive_span);
        pb_sint(b, 1, 0);
        pb_uint(b, 2, 0);
        pb_end(b, m);
    }
}

/* The deltas: each bucket's count minus the previous one's, over the buckets the spans cover. */
static void write_deltas(const struct native_hist *h, const struct native_pb_fields *f, struct pb_buf *b)
{
    size_t len = 0;
    uint64_t prev = 0;
    /* Two passes over the same walk: the packed field's length first, then the values. */
    for (int pass = 0; pass < 2; pass++) {
        size_t mark = 0;
        if (pass == 1) {
            if (len == 0)
                return;
            mark = pb_begin(b, f->positive_delta);
        }
        prev = 0;
        size_t i = 0;
        while (i < h->n) {
            if (!h->counts[i]) {
                i++;
                continue;
            }
            size_t end = i + 1;
            for (size_t j = end; j < h->n && j - end <= NATIVE_MAX_GAP; j++)
                if (h->counts[j])
                    end = j + 1;
            for (size_t j = i; j < end; j++) {
                int64_t d = (int64_t)(h->counts[j] - prev);
                prev = h->counts[j];
                if (pass == 0)
                    len++;
                else {
                    uint64_t u = (uint64_t)d;
                    pb_varint(b, (u << 1) ^ (d < 0 ? UINT64_MAX : 0));
                }
            }
            i = end;
        }
        if (pass == 1)
            pb_end(b, mark);
    }
}

void native_pb_write(const struct native_hist *h, const struct native_pb_fields *f, struct pb_buf *b)
{
    if (f->count)
        pb_uint(b, f->count, h->count);
    pb_double(b, f->sum, h->sum);
    pb_sint(b, f->schema, h->schema);
    pb_double(b, f->zero_threshold, h->zero_threshold);
    pb_uint(b, f->zero_count, h->zero_count);
    write_spans(h, f, b);
    write_deltas(h, f, b);
}
