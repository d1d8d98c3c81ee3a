/* Shared by the dataset files of src/analyze (dataset.c: groups and values; dataset_csv.c and
 * dataset_log.c: the two readers); not part of its API (dataset.h). Not thread-safe, as the
 * dataset itself. */
#ifndef KNEE_ANALYZE_INTERNAL_H
#define KNEE_ANALYZE_INTERNAL_H

#include "analyze/dataset.h"

#include <stdbool.h>
#include <stddef.h>

/* A column's index in a file's header or a log's column list, or NO_COL (an index, not an
 * error code). */
enum { NO_COL = -1 };

/* At most this many --where filters (each reader keeps one column index per filter). */
#define DATASET_MAX_WHERE 64

/* The group index of a name of len bytes (not NUL-terminated), created on first sight; the
 * previous row's group is tried first. 0 or KNEE_ETOOBIG (DATASET_MAX_GROUPS reached). */
int dataset_group_of(struct dataset *d, const char *name, size_t len, size_t *out);

/* Add one kept value v of group gi, at time t (seconds) when has_t: counts, the streaming
 * histograms, then the group's array (exact mode) or HDR histogram and per-second windows
 * (approx mode); in approx mode's second pass only the small windows of d->pass2_group. */
void dataset_add_value(struct dataset *d, size_t gi, double v, double t, bool has_t);

/* --skip/--until: a row at time t (seconds) is kept. */
static inline bool dataset_time_kept(const struct dataset *d, double t)
{
    return t >= d->o.skip_s && t < d->o.until_s;
}

/* Read a CSV file (src; named path in messages) into d: its header resolves the value, group,
 * time, --where and warm-up columns, then every row is filtered and added. file_group is the
 * group of every row when by_file (--by file). 0, or a negative code with d->err set to
 * "FILE:LINE: why". */
int dataset_load_csv(struct dataset *d, const char *src, const char *path, size_t file_group, bool by_file);

/* The same for knee's binary request log: its columns are REQLOG_CSV_HEADER's (derived from
 * each record) and "warmup"; messages name the record instead of a line. */
int dataset_load_log(struct dataset *d, const char *src, const char *path, size_t file_group, bool by_file);

#endif
