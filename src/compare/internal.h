/* Shared by the files of src/compare; not part of its API (compare.h). */
#ifndef KNEE_COMPARE_INTERNAL_H
#define KNEE_COMPARE_INTERNAL_H

#include "compare/compare.h"

/* The 1-based nearest rank of p% among n values (n >= 1), as stats_nearest_rank computes it:
 * ceil(p/100 * n), a product within 1e-12 of an integer taken as that integer, clamped to
 * [1, n]. */
uint64_t compare_rank_of(uint64_t n, double p_percent);

/* The percentile of each CMP_P* metric, in percent. */
extern const double compare_metric_pct[CMP_NMETRICS]; /* 50, 90, 99, 99.9, NAN, NAN */

/* Append a printf-formatted string to a heap array of strings. */
void compare_strv_add(char ***v, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void compare_strv_free(char **v, size_t n);

#endif
