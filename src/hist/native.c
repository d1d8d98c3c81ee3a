/* Native histograms (hist/native.h): dense counts over the key range recorded, keys from
 * log2, HdrHistogram conversion bucket by bucket, the spans-and-deltas wire shape, and
 * histogram_quantile as Prometheus 2.42 runs it. */
#include "hist/native.h"

#include "core/err.h"
#include "core/grow.h"
#include "hist/hdr.h"

#include <math.h>
#include <pthread.h>
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

/* 2^(j/256) for j = 0..256: the bounds of every positive schema within one power of two
 * (schema s uses every 2^(8-s)-th), computed once; ldexp then scales them exactly, so a key
 * and its bounds agree to the bit and no bucket costs a log2 or exp2. */
static double frac_bounds[257];
static pthread_once_t frac_once = PTHREAD_ONCE_INIT;

static void frac_init(void)
{
    for (int j = 0; j <= 256; j++)
        frac_bounds[j] = exp2(j / 256.0);
    frac_bounds[256] = 2.0;
}

/* floor(key / per) for per a power of two. */
static int32_t floor_div(int32_t key, int32_t per)
{
    return key >= 0 ? key / per : -((-key + per - 1) / per);
}

double native_upper(int32_t schema, int32_t key)
{
    if (schema <= 0)
        return ldexp(1.0, key * (1 << -schema));
    pthread_once(&frac_once, frac_init);
    int32_t per = 1 << schema;
    int32_t whole = floor_div(key, per);
    int32_t frac = key - whole * per;
    return ldexp(frac_bounds[frac << (8 - schema)], whole);
}

int32_t native_key(int32_t schema, double v)
{
    int e;
    double m = 2 * frexp(v, &e); /* v = m x 2^(e-1), m in [1, 2) */
    if (schema <= 0) {
        /* bucket k of schema s <= 0 holds (2^((k-1) 2^-s), 2^(k 2^-s)]: k = ceil(log2(v) / 2^-s) */
        int32_t width = 1 << -schema;
        int32_t exp2v = e - 1 + (m > 1); /* ceil(log2(v)) */
        return floor_div(exp2v + width - 1, width);
    }
    pthread_once(&frac_once, frac_init);
    int32_t per = 1 << schema, step = 1 << (8 - schema);
    int32_t lo = 0, hi = per; /* the smallest j with frac_bounds[j * step] >= m */
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (frac_bounds[mid * step] >= m)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (e - 1) * per + lo;
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

/* Walks the upper bounds of consecutive keys of a positive schema without log2 or exp2:
 * upper = 2^whole x frac_bounds[frac x step], exact (a product by a power of two). */
struct cursor {
    int32_t per, step, whole, frac; /* per 0: a schema <= 0, no table steps */
    double pow2, upper;
};

static void cursor_at(struct cursor *c, int32_t schema, int32_t key)
{
    c->upper = native_upper(schema, key); /* also initialises the table */
    c->per = schema > 0 ? 1 << schema : 0;
    if (!c->per)
        return;
    c->step = 1 << (8 - schema);
    c->whole = floor_div(key, c->per);
    c->frac = key - c->whole * c->per;
    c->pow2 = ldexp(1.0, c->whole);
}

/* To the next key; false when the schema has no table (the caller uses native_key). */
static bool cursor_next(struct cursor *c)
{
    if (!c->per)
        return false;
    if (++c->frac == c->per) {
        c->frac = 0;
        c->whole++;
        c->pow2 *= 2;
    }
    c->upper = c->pow2 * frac_bounds[c->frac * c->step];
    return true;
}

void native_add_hdr(struct native_hist *h, const struct hdr *src, double scale)
{
    if (src->total_count <= 0 || !src->counts)
        return;
    /* Only the recorded range (a histogram up to an hour at 3 digits has ~32k counters), with
     * hdr_index_range inline, as prom_add_hdr: the live metrics run this once a second per
     * histogram (on the main thread, load/live.c). */
    size_t first = src->counts[0] || src->min_value == INT64_MAX ? 0 : hdr_index_of(src, src->min_value);
    size_t last = hdr_index_of(src, src->max_value);
    if (last >= src->counts_len)
        last = src->counts_len - 1;
    int32_t key = 0;
    double upper = -1; /* the current native bucket's upper bound; -1: none yet */
    struct cursor cur = {0};
    uint64_t in_key = 0, total = 0;
    double sum = 0;
    for (size_t i = first; i <= last; i++) {
        int64_t c = src->counts[i];
        if (c <= 0)
            continue;
        int64_t width, lo = hdr_index_range(src, i, &width); /* the HDR bucket: lo .. lo + width - 1 */
        double hi = (double)(lo + width - 1) * scale;        /* its highest equivalent value */
        total += (uint64_t)c;
        if (lo == 0 && i == 0) { /* recorded zeros stay zero */
            h->zero_count += (uint64_t)c;
            continue;
        }
        sum += (double)c * (double)(lo + (width >> 1)) * scale; /* the median equivalent value */
        if (hi <= h->zero_threshold) {
            h->zero_count += (uint64_t)c;
            continue;
        }
        /* HDR buckets come in increasing order, so the native key only grows: move it only
         * when hi leaves the current native bucket (to the next one by a table step, else by
         * native_key), and add each key's count once. */
        if (hi > upper) {
            if (in_key)
                *slot_of(h, key) += in_key;
            in_key = 0;
            if (upper > 0 && cursor_next(&cur) && hi <= cur.upper) {
                key++;
            } else {
                key = native_key(h->schema, hi);
                cursor_at(&cur, h->schema, key);
            }
            upper = cur.upper;
        }
        in_key += (uint64_t)c;
    }
    if (in_key)
        *slot_of(h, key) += in_key;
    h->count += total;
    h->sum += sum;
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
