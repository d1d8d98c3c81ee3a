/* Prometheus native histograms (sparse exponential buckets) built from knee's HdrHistograms:
 * bucket key k of schema s holds the values in (2^((k-1)/2^s), 2^(k/2^s)]; a zero bucket holds
 * the values at most zero_threshold. knee uses schema 8 (NATIVE_SCHEMA): neighbouring bounds
 * differ by the factor 2^(1/256) = 1.0027, so a quantile that histogram_quantile() interpolates
 * inside its bucket is within 0.27% of any value in that bucket (0.14% of its midpoint), the
 * same order as the HdrHistogram's own 0.1% (3 significant digits). Also the encodings both
 * protobuf schemas share (spans of consecutive buckets, counts as deltas) and
 * histogram_quantile() as Prometheus 2.42 computes it over native buckets. */
#ifndef KNEE_HIST_NATIVE_H
#define KNEE_HIST_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pb.h"

#define NATIVE_SCHEMA 8                /* knee's choice: 256 buckets per power of two */
#define NATIVE_ZERO_THRESHOLD 0x1p-128 /* client_golang's default: only true zeros */
#define NATIVE_MAX_GAP 2               /* empty buckets kept inside a span rather than a new span */

/* One histogram: dense counts over the keys first .. first + n - 1 (heap; grows to the range
 * recorded), positive values only (knee's durations never are negative). */
struct native_hist {
    int32_t schema;        /* -4 .. 8 */
    double zero_threshold; /* values <= this count in zero_count */
    uint64_t zero_count;
    uint64_t count; /* every observation, the zero bucket included */
    double sum;
    int32_t first;    /* key of counts[0] (meaningless while n == 0) */
    size_t n, cap;    /* keys held; allocated */
    uint64_t *counts; /* per key, not cumulative */
};

/* An empty histogram of this schema (-4 .. 8) with NATIVE_ZERO_THRESHOLD. No allocation. */
void native_init(struct native_hist *h, int32_t schema);
/* Free the counts; h is empty (schema kept) and usable again. */
void native_release(struct native_hist *h);
/* Empty it, keeping the memory. */
void native_reset(struct native_hist *h);

/* The key of the bucket holding v > 0 (exact on the bounds: v = 2^(k/2^s) is in key k). */
int32_t native_key(int32_t schema, double v);
/* The upper bound of bucket key, 2^(key/2^s); its lower bound is native_upper(key - 1). */
double native_upper(int32_t schema, int32_t key);

/* Add n observations of v (NaN and negative values are ignored: returns false). Aborts on
 * out of memory, like every knee allocation on a producer's path. */
bool native_observe(struct native_hist *h, double v, uint64_t n);

struct hdr;
/* Add the values of an HdrHistogram recorded in some unit, times scale (ns → s: 1e-9): each
 * HDR bucket's count goes to the native bucket of its highest equivalent value (the value
 * HdrHistogram reports for it, as prom_add_hdr does), so a rank falls in the native bucket
 * holding hdr_value_at_percentile's answer; the sum adds count x the median equivalent value
 * (as hdr_mean). Overflow (above h->highest) is not added, as it is not in total_count. */
void native_add_hdr(struct native_hist *h, const struct hdr *src, double scale);
/* native_reset, then native_add_hdr: the native form of one HdrHistogram. */
void native_from_hdr(struct native_hist *h, const struct hdr *src, double scale);

/* dst += src. Returns 0, or KNEE_EMISMATCH (dst unchanged) for different schemas or zero
 * thresholds. */
int native_add(struct native_hist *dst, const struct native_hist *src);
/* dst = src (dst's memory reused). */
void native_copy(struct native_hist *dst, const struct native_hist *src);

/* histogram_quantile(q, h) as Prometheus 2.42 (promql/quantile.go histogramQuantile):
 * rank q x count, the first bucket (zero bucket first, taken as starting at 0) whose
 * cumulative count reaches it, linear interpolation between its bounds. NaN when empty or q
 * NaN; -Inf below 0, +Inf above 1. */
double native_quantile(const struct native_hist *h, double q);

/* Field numbers of the two protobuf messages a native histogram goes into:
 * io.prometheus.client.Histogram (the scrape exposition) and prometheus.Histogram
 * (remote-write 1.0). */
struct native_pb_fields {
    uint32_t count, sum, schema, zero_threshold, zero_count, positive_span, positive_delta;
};
extern const struct native_pb_fields native_pb_exposition; /* io.prometheus.client.Histogram */
extern const struct native_pb_fields native_pb_remote;     /* prometheus.Histogram */

/* Write h's native fields into the message open in b: count (except when f->count is 0: the
 * caller writes it), sum, schema, zero threshold and count, then the positive spans
 * (BucketSpan{sint32 offset = 1, uint32 length = 2}; runs of buckets with gaps of at most
 * NATIVE_MAX_GAP empty ones inside) and the deltas between consecutive bucket counts. An
 * empty histogram gets one empty span, as client_golang writes it, so a reader still sees a
 * native histogram. */
void native_pb_write(const struct native_hist *h, const struct native_pb_fields *f, struct pb_buf *b);

#endif
