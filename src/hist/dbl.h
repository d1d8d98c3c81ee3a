/* Doubling buckets for terminal bars: [0,b), [b,2b), [2b,4b), ... with b the first bound
 * (knee uses 1 ms), drawn as a text histogram. Units are the caller's. */
#ifndef KNEE_HIST_DBL_H
#define KNEE_HIST_DBL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DBL_MAX_BUCKETS 64

struct dbl_hist {
    double first; /* upper bound of bucket 0 */
    uint64_t counts[DBL_MAX_BUCKETS];
    uint64_t total;
};

/* Empty histogram; a first_bound that is not finite and positive becomes 1. */
void dbl_init(struct dbl_hist *d, double first_bound);
/* Bucket index of v (>= 0); the last bucket takes everything beyond. */
size_t dbl_bucket_of(const struct dbl_hist *d, double v);
/* Add count occurrences of v (NaN goes to the last bucket). No allocation; not thread-safe. */
void dbl_add(struct dbl_hist *d, double v, uint64_t count);
/* Bounds of bucket i: [lower, upper); the last bucket's upper bound is INFINITY. */
double dbl_lower(const struct dbl_hist *d, size_t i);
double dbl_upper(const struct dbl_hist *d, size_t i);
/* Print non-empty range of buckets as rows "  2..4 ms  1234  12.3%  ########", bars scaled
 * to `width` characters for the largest bucket. */
void dbl_print(FILE *out, const struct dbl_hist *d, const char *unit, int width);

#endif
