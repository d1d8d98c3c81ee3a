/* Per-stage results of a --stages run: every request belongs to the stage its planned time
 * falls in (the exact way: a request planned in stage 2 and answered in stage 3 is stage 2's),
 * and each stage keeps its counts, its ok latency and its events by time over its own window
 * [start, end) (record/rates.c), so its rates are the stage's own. The engine counts into one
 * set per load thread and adds them up (load/result.c); knee merge adds the shards' from their
 * JSON ("stages" with "shard" histograms). The JSON is "stages" (docs/FORMATS.md). Threads: plain
 * data, one owner at a time. */
#ifndef KNEE_RECORD_STAGES_H
#define KNEE_RECORD_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/record.h"

struct run_stage_result {
    double from, to;           /* the stage as planned (--stages: requests/s of the shared rate, or clients) */
    uint64_t start_ns, end_ns; /* its window, ns since t0 */
    struct run_counts counts;  /* requests planned in the stage, warm-up included */
    struct run_events events;  /* their events by time, over the stage's window */
    struct run_rates rates;    /* from events (record_stages_summarize) */
    struct hdr latency;        /* ok requests' latency, ns */
    struct run_summary lat;    /* of latency, ms (record_stages_summarize; from the JSON when read) */
    bool clients;              /* closed-loop stages: from and to are clients (JSON "unit": "clients"; else "rps") */
};

/* n results for stages st[0..n), each window the sum of the durations before it .. with it,
 * histograms empty. NULL when n is 0. Free with record_stages_free. */
struct run_stage_result *record_stages_new(const struct run_stage *st, size_t n);
void record_stages_free(struct run_stage_result *s, size_t n);

/* The stage planned_ns (ns since t0) falls in: its index, or n past the last one (nothing is
 * planned there; counted nowhere). */
size_t record_stage_of(const struct run_stage_result *s, size_t n, uint64_t planned_ns);

/* One request with its outcome, by its planned time (ns since t0; its send and end as
 * record_events_count takes them): planned, sent or dropped, its outcome, its events. */
void record_stages_count(struct run_stage_result *s, size_t n, uint64_t planned_ns, uint64_t sent_ns, uint64_t done_ns,
                         enum reqlog_outcome o);
/* An ok request's latency (ns) into the stage of its planned time. */
void record_stages_latency(struct run_stage_result *s, size_t n, uint64_t planned_ns, int64_t latency_ns);

/* d[i] += s[i] for the n stages of one plan: counts, events (record_events_merge), latency. */
void record_stages_add(struct run_stage_result *d, const struct run_stage_result *s, size_t n);

/* Every stage's rates over its own window and its latency statistics from its histogram. */
void record_stages_summarize(struct run_record *rec);

struct jw;
struct json_t;
/* "stages": the list in order (index 1-based, from, to, unit, start_s, duration_s, planned, sent,
 * dropped, completed, outcomes, latency, rates, events); with_hist: each with "shard" (the exact events in ns
 * and the latency histogram) for knee merge. Nothing when the record has no stages. */
void record_stages_write_json(struct jw *j, const struct run_record *rec, bool with_hist);
/* "stages" of a run JSON into rec (a record read by record_read_json; none: rec->nstages 0). strict
 * (knee merge): every count an integer >= 0, a unit "rps" or "clients" when given, the identities (planned = sent +
 * dropped, sent = the outcomes but dropped) and, with "shard", the histogram and exact events, added up; else a reason
 * in err without a path ("stages[2]: planned 9 != sent 8 + dropped 0") and KNEE_EFORMAT. */
int record_stages_read_json(const struct json_t *root, struct run_record *rec, bool strict, char *err, size_t errlen);

#endif
