/* knee merge (docs/DISTRIBUTED.md): the outputs of the N shards of one plan (knee run --shard I/N) added
 * up into the result one process running the whole plan would have given, exactly.
 *
 *   inputs    each file names its shard (the JSON's "shard" object, the binary log's shard
 *             block, the hlog's first comment): files are grouped by shard index, and the set
 *             is refused (KNEE_EINVAL, exit 2) when the shards disagree on the count, the plan or
 *             the start instant, when a shard's file of one kind is given twice, or when a kind
 *             of output is given for some shards but not all ("missing shards 1, 3 of 4").
 *   summary   from the shards' JSON, read back as records (record/ strict reader): counts summed
 *             (transport causes and retries too) and the accounting identities checked, the
 *             histograms (carried in the JSON) added index by index, so every percentile is that
 *             of the union of the requests, never an average; the total planned checked against
 *             the whole plan; rates by event time (record/record.h struct run_events: the shards'
 *             events added up, or counted again from their binary logs) over the merged window;
 *             generator-limited when any shard was; a shard that failed (interrupted, broken
 *             accounting, a thread stopped, a truncated log) named and the result marked
 *             incomplete. The result is a run record (record_add, then the record's own
 *             derivation), printed by knee run's own printers (text, JSON in the knee-run/2 schema).
 *   logs      the union of the binary logs, on one time axis (the shared start instant, else
 *             each shard's t0 on the wall clock), ordered by planned time.
 *   hlogs     the union of the interval logs, streamed: one interval per file open at a time.
 *
 * Not thread-safe; memory: the summary holds a few histograms, and each shard's record without
 * its histograms until its turn to be added (then one shard's histograms); the merged binary log
 * holds every record in memory (64 bytes each) to sort it; the hlog merge holds one line per
 * input. */
#ifndef KNEE_MERGE_MERGE_H
#define KNEE_MERGE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/record.h"

enum merge_kind { MERGE_JSON, MERGE_LOG, MERGE_HLOG, MERGE_NKINDS };

/* What a file says about itself. */
struct merge_probe {
    enum merge_kind kind;
    uint32_t index, count;     /* count 0: not a shard's output */
    uint64_t plan_id;          /* 0 when the file does not record one */
    uint64_t start_at_unix_ns; /* the shared start instant, 0 = none */
    bool merged;               /* already a merge of count shards */
};

/* Read a file's kind and shard record (a JSON is parsed whole, a log's header read, an hlog's
 * comment lines). 0; KNEE_EINVAL/KNEE_EFORMAT with "FILE: why" in err (not knee's output, a
 * CSV, unreadable), -errno. A file without a shard record is not an error: count 0. */
int merge_probe_file(const char *path, struct merge_probe *p, char *err, size_t errlen);

/* The shards' files, by index. */
struct merge_shard {
    const char *path[MERGE_NKINDS]; /* NULL when that kind was not given */
};

struct merge_set {
    uint32_t count; /* N */
    uint64_t plan_id;
    uint64_t start_at_unix_ns;
    struct merge_shard *shards; /* count entries */
    bool have[MERGE_NKINDS];    /* that kind was given (for every shard) */
    size_t nfiles;
};

/* Group paths into shards and check the set (see the header comment). allow_partial: a kind
 * may be given for some shards only, and shards may be missing (knee stats / knee report label
 * such a set instead of refusing it); duplicates and disagreements are refused either way.
 * 0 or KNEE_EINVAL with the reason in err. */
int merge_set_build(struct merge_set *s, const char *const *paths, size_t n, bool allow_partial, char *err,
                    size_t errlen);
void merge_set_release(struct merge_set *s);

/* "shards 0-3 of 4 (plan 5f13…, start 2026-…Z)" or "shards 0, 2 of 4 (MISSING 1, 3; …)". */
void merge_set_describe(const struct merge_set *s, char *buf, size_t len);

/* True when every shard has a file of `kind`. */
bool merge_set_complete(const struct merge_set *s, enum merge_kind kind);

/* The merged summary (needs every shard's JSON): the merged record and what the merge found. */
struct merge_summary {
    struct run_record res;      /* the merged run (its shard record: every shard's part, by index) */
    bool incomplete;            /* a shard failed: res.shard.complete is false */
    bool plan_checked, plan_ok; /* the shards' planned counts against the whole plan */
    uint64_t plan_expected, plan_merged;
    bool same_t0;               /* every shard's t0 is one instant (a shared start instant) */
    bool windows_equal;         /* ... and every shard measured a window of the same length */
    uint64_t *shard_t0_unix_ns; /* per shard: its t0 on the wall clock */
    /* The merged window on the merged axis (0 = the earliest t0): with one t0 the union of the
     * shards' windows (one process's window), else the common window (every shard measured). */
    uint64_t window_start_ns, window_end_ns;
    bool rates_from_logs; /* the events were counted again from the shards' binary logs */
    bool logs_disagree;   /* ... and (one t0) differ from the shards' events added up */
    uint64_t log_records; /* the records those logs hold */
};

/* Build the summary from the set's JSON files, and when the set has every shard's binary log,
 * count the events again from the logs (argv/argc: the merge's command line, for the
 * environment record). 0, or KNEE_EINVAL/KNEE_EFORMAT with "FILE: why" in err. */
int merge_summary_build(struct merge_summary *m, const struct merge_set *s, const char *const *argv, int argc,
                        char *err, size_t errlen);
void merge_summary_release(struct merge_summary *m);

/* The p50/p99 of the merged timeline's intervals from the shards' hlogs (the JSON alone cannot
 * give them: percentiles are not additive; its max is). With one t0 every interval's exactly;
 * without, each second's (the interval holding the second's midpoint). 0 or an hlog error. */
int merge_summary_ticks_from_hlogs(struct merge_summary *m, const struct merge_set *s, char *err, size_t errlen);

/* What the merged per-request log holds. */
struct merge_log_stats {
    uint64_t records;
    uint64_t truncated_shards; /* shards whose log ended inside a record */
};

/* Write the union of the set's binary logs to out_path (binary, or CSV for *.csv; through
 * core/outfile), ordered by planned time on one time axis (m given: its shards' t0s place
 * shards without a shared start instant). A shard whose log is truncated is marked failed in m.
 * 0, or an error with "FILE: why" in err (KNEE_EFORMAT bad input, -errno a write failed).
 * out_path NULL: only the counts. */
int merge_logs(const struct merge_set *s, struct merge_summary *m, const char *out_path, struct merge_log_stats *st,
               char *err, size_t errlen);

/* Write the union of the set's hlogs to out (streamed, exact, intervals aligned by absolute
 * time into one-second slots as knee hlog merge aligns them). 0 or an error with "FILE:LINE:
 * why" in err. */
int merge_hlogs(const struct merge_set *s, FILE *out, char *err, size_t errlen);

/* The streaming merge itself over any hlog files (the bench calls it on its own files):
 * inputs must each be in time order (knee's are); on_slot, when not NULL, sees every slot's
 * summed histogram per tag, with the span [start_s, end_s) of the intervals in it (seconds
 * from the earliest StartTime), before it is written (out may be NULL). */
typedef void merge_slot_fn(void *ctx, int64_t slot, double start_s, double end_s, const char *tag,
                           const struct hdr *sum);
int merge_hlog_files(const char *const *paths, size_t n, double slot_s, FILE *out, const char *comment,
                     merge_slot_fn *on_slot, void *ctx, char *err, size_t errlen);

/* ---- shard files given to other commands ---- */

/* knee stats FILE...: when some inputs are shards' outputs, a one-line label in `label` ("inputs:
 * all 4 shards of one run (plan …, shared start …): one time axis") and 1; 0 when none is (label
 * ""); KNEE_EINVAL with the reason in err when they cannot be one run's (a shard given twice,
 * shards of two plans). A set with shards missing is labelled, not refused. */
int merge_label_inputs(const char *const *paths, size_t n, char *label, size_t len, char *err, size_t errlen);

/* knee stats / knee hlog stats with several hlogs: when any of paths is a shard's output, the
 * set is checked as knee merge checks it (merge_set_build: every shard once, one plan, none
 * missing; a file not a shard's, or not an hlog, refused by name) and the shards' hlogs are
 * merged into out exactly as knee merge --hlog writes them. 1 then, with the label line
 * ("inputs: all 3 shards of one run (...): ...") and a name for the merged log ("mix (3 shards
 * merged)"); 0 when n < 2 or no path is a shard's output (nothing written: the caller reads
 * its files as before); an error with the reason in err otherwise (KNEE_* bad input, -errno
 * out could not be written). out NULL: the checks alone (1, 0 or the error; nothing read but
 * the files' headers). */
struct merge_hlog_input {
    char label[512];
    char name[192];
};
int merge_hlog_inputs(const char *const *paths, size_t n, FILE *out, struct merge_hlog_input *in, char *err,
                      size_t errlen);

/* knee report INPUT...: every whole set of shard outputs among paths (grouped by plan) becomes one
 * run, "<name> (N shards merged)", merged as knee merge merges it (summary, per-request log or
 * hlog); used[i] says which paths it took (the rest are the command's). 0 or an error as
 * merge_set_build / merge_summary_build (exit 2). */
struct html_report;
int merge_report_runs(struct html_report *rep, const char *const *paths, size_t n, bool *used, char *err,
                      size_t errlen);

#endif
