/* Private parts of src/merge shared by its files: inputs.c (probing, the set), summary.c (the
 * merged result from the shards' JSON), logs.c (the per-request logs), hlogs.c (the interval
 * logs). Not an API: use merge/merge.h. */
#ifndef KNEE_MERGE_INTERNAL_H
#define KNEE_MERGE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "merge/merge.h"

/* "JSON", "binary log", "hlog" */
const char *merge_kind_name(enum merge_kind k);
/* 16 hex digits → *out. */
bool merge_parse_plan_hex(const char *s, uint64_t *out);
/* The shard record in an hlog comment line (run_shard_hlog_comment's layout); false when none. */
bool merge_parse_hlog_comment(const char *line, struct merge_probe *p);
/* The shard record of a parsed knee run JSON (count 0 when it has none). 0 or KNEE_EFORMAT. */
int merge_json_shard(const json_t *root, const char *path, struct merge_probe *p, char *err, size_t errlen);

/* The summary from parsed documents (roots[k] is shard k's, names[k] labels its messages;
 * borrowed; log_paths[k] shard k's binary log, or log_paths NULL). merge_summary_build loads
 * the files and calls it; the fuzz target calls it. */
int merge_summary_from_docs(struct merge_summary *m, json_t *const *roots, const char *const *names, uint32_t count,
                            uint64_t plan_id, uint64_t start_at_unix_ns, const char *const *log_paths,
                            const char *const *argv, int argc, char *err, size_t errlen);

/* Mark shard `index` of m failed with a reason (the first reason is kept). */
void merge_summary_fail_shard(struct merge_summary *m, uint32_t index, const char *why);

#endif
