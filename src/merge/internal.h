/* Private parts of src/merge shared by its files: inputs.c (probing, the set), summary.c (the
 * merged record from the shards' JSON), verdict.c (what only a merge judges), logs.c (the
 * per-request logs), hlogs.c (the interval logs). Not an API: use merge/merge.h. */
#ifndef KNEE_MERGE_INTERNAL_H
#define KNEE_MERGE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "merge/merge.h"

/* "JSON", "binary log", "hlog" */
const char *merge_kind_name(enum merge_kind k);
/* The shard record in an hlog comment line (cli_shard_hlog_comment's layout); false when none. */
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
void merge_summary_fail_shardf(struct merge_summary *m, uint32_t index, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- the summary being built (summary.c; logs.c and verdict.c read it) ---- */

/* One shard as the merge keeps it once its record is added. */
struct merge_doc {
    const char *path; /* its JSON */
    uint64_t t0_unix_ns;
    uint64_t off_ns;       /* t0 - the earliest t0: where this shard's times sit on the merged axis */
    uint64_t ws_ns, we_ns; /* its window on the merged axis */
    double window_s, elapsed_s;
    uint64_t planned; /* requests it planned, warm-up included (its "all") */
};

/* One interval of a shard's timeline placed on the merged axis. */
struct merge_tick {
    double start_s;
    struct run_tick t;
};

struct merge_ctx {
    struct merge_summary *m;
    uint32_t count;
    struct merge_doc *docs;
    struct run_record *recs; /* the shards' records (their histograms read and released one by one) */
    uint64_t *planned;       /* [shard * ntargets + target]: planned, warm-up included (the plan check) */
    bool same_t0;            /* every shard's t0 is one instant (a shared start instant) */
    bool shards_ok;          /* every shard's own accounting held */
    struct run_rates *sums;  /* the shards' rates summed, per target and [ntargets] for all */
    struct merge_tick *ticks;
    size_t nticks, cap_ticks;
    struct warn_list carried; /* the shards' own warnings, "shard K: ..." */
    size_t more;              /* ... and those left out */
    bool entries_off;         /* the shards ran different targets files: no per-entry tables */
    char *err;
    size_t errlen;
};

/* code, with the formatted reason in c->err. */
int merge_fail(struct merge_ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The events counted again from the shards' per-request logs (paths[k]: shard k's) over the merged
 * window (logs.c): with one t0 they must equal the shards' events added up (logs_disagree); without,
 * they are the common window's. A truncated log, or one that holds another number of requests than
 * its JSON planned, fails its shard. 0, or an error with "FILE: why" in c->err. */
int merge_count_logs(struct merge_ctx *c, const char *const *paths);

/* verdict.c: the whole plan's count against the shards' (m->plan_*; a shard that planned another
 * share than its own fails); the merged hostnames; the warnings of the merged run that need
 * attention (failed shards, broken identities, knee run's FAILED or ERRORS, a plan not whole,
 * generator-limited or late shards); then the notes (rates without a shared start instant, clocks,
 * knee run's notes on the warm-up and the samples, the shards' own warnings). */
void merge_plan_check(struct merge_ctx *c);
void merge_hostnames(struct run_record *res);
void merge_verdicts(struct merge_ctx *c, bool identities_ok);
void merge_notes(struct merge_ctx *c);

#endif
