/* A Prometheus classic histogram: counts on fixed upper bounds (`le`, inclusive) plus +Inf,
 * and quantile estimation exactly as PromQL's histogram_quantile (promql/quantile.go
 * bucketQuantile): linear interpolation inside the bucket, the lowest bucket starting at 0,
 * a rank in the +Inf bucket answered with the highest finite bound; an interpolation that
 * floating point would round out of its bucket (bounds near ±1e308, or of opposite sign near
 * ±1e78) is kept inside the bucket, where Prometheus would print a number outside it. Units
 * are the caller's. */
#ifndef KNEE_HIST_PROM_H
#define KNEE_HIST_PROM_H

#include <stddef.h>
#include <stdint.h>

#define PROM_MAX_BOUNDS 64

/* client_golang DefBuckets in milliseconds: 5,10,25,50,100,250,500,1000,2500,5000,10000. */
extern const double prom_default_bounds_ms[11];
#define PROM_DEFAULT_NBOUNDS 11

struct prom_hist {
    size_t nbounds;
    double bounds[PROM_MAX_BOUNDS];       /* strictly increasing, finite */
    uint64_t counts[PROM_MAX_BOUNDS + 1]; /* per bucket (not cumulative); [nbounds] is +Inf */
    uint64_t total;
    double sum;
};

/* 0, or KNEE_EINVAL when n is 0 or > PROM_MAX_BOUNDS or bounds are not strictly increasing
 * and finite. */
int prom_init(struct prom_hist *p, const double *bounds, size_t n);
/* Parse "5,10,25" into bounds; 0 or KNEE_EFORMAT / KNEE_EINVAL. */
int prom_parse_bounds(const char *s, double *bounds, size_t *n);
/* Count v in the first bucket whose upper bound is >= v (le semantics; NaN and values above
 * every bound go to +Inf), and add v to sum. */
void prom_observe(struct prom_hist *p, double v);
/* Cumulative count of bucket i (i == nbounds is +Inf = total). */
uint64_t prom_cumulative(const struct prom_hist *p, size_t i);

struct prom_estimate {
    double q;
    double estimate;
    double low, high; /* bounds of the bucket the rank fell in (high = INFINITY for +Inf) */
    size_t bucket;    /* index of that bucket (nbounds for +Inf) */
};
/* histogram_quantile(q). NAN when total == 0 or q is NAN; -INF for q < 0; +INF for q > 1. */
double prom_quantile(const struct prom_hist *p, double q, struct prom_estimate *out);

struct hdr;
/* Add the values of an HdrHistogram (recorded in the unit of p's bounds, e.g. ns) to p, HDR
 * bucket by HDR bucket: the values of one HDR bucket (lo..hi, equivalent at its precision) go
 * to the first bound >= hi, its highest equivalent value (the value HdrHistogram reports for
 * them), so the `le` counts agree with knee's HdrHistogram percentiles. The error bound: le=B
 * never counts a value above B, and counts every value up to B except those in the HDR
 * bucket B falls strictly inside, all of which lie within that bucket's width below B: at
 * most B / h->sub_bucket_half_count (B/1024 at 3 significant digits, i.e. 0.1%), and none
 * when B < h->sub_bucket_count (there HDR buckets are one unit wide) or B + 1 starts an HDR
 * bucket. The sum adds count x the bucket's median equivalent value (as hdr_mean). Values
 * in h's overflow (above h->highest) are not added, as they are not in h->total_count. */
void prom_add_hdr(struct prom_hist *p, const struct hdr *h);

#endif
