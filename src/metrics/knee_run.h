/* The metric families of knee run and knee capacity (fed from the load engine's per-second
 * merge by cli/run_metrics; see docs/FORMATS.md "Live metrics" for names and meanings). The
 * caller keeps a struct metrics_run_sample with everything counted since the start (after the
 * warm-up, like the JSON) and publishes it with one call per second:
 *
 *     struct metrics_run *mr;
 *     metrics_run_new(reg, names, ntargets, bounds_s, nbounds, &mr, err, sizeof err);
 *     struct metrics_run_sample s;
 *     metrics_run_sample_init(mr, &s);
 *     ... every second, in the merge: update s (counts, prom_observe or bucket counts), then
 *     metrics_run_publish(mr, &s);
 *     ... at the end: the final values, then --metrics-linger, then
 *     metrics_run_sample_release(&s); metrics_run_free(mr);
 *
 * Labels: target (the run's target names), outcome (the eight outcome classes of
 * reqlog/reqlog.h, enum reqlog_outcome), code (an HTTP status, 100 .. 599 or "other": a series
 * is declared when a target first sees the code, so at most 501 per target, and at most
 * METRICS_SERIES_MAX in all) and protocol (h1, h2, h3: a series is declared when a target's
 * first connection of that protocol is ready, so a dashboard sums or splits
 * knee_protocol_connections without zero series for protocols the run never spoke); nothing
 * per URL or per request. Times are seconds. The four histogram families (latency, service,
 * lag, TTFB) are native too (metrics_family_spec.native). */
#ifndef KNEE_METRICS_KNEE_RUN_H
#define KNEE_METRICS_KNEE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist/native.h"
#include "hist/prom.h"
#include "metrics/metrics.h"
#include "record/status.h"
#include "reqlog/reqlog.h"

/* The protocols of knee_protocol_connections, in its label's spelling (h1, h2, h3). */
enum metrics_protocol { METRICS_PROTO_H1, METRICS_PROTO_H2, METRICS_PROTO_H3, METRICS_PROTOCOLS };
/* "h1", "h2", "h3"; NULL beyond. */
const char *metrics_protocol_name(int protocol);

/* Everything one publication carries; counts are cumulative since the start. Arrays have one
 * element per target, in the order given to metrics_run_new(). */
struct metrics_run_sample {
    size_t ntargets;
    uint64_t (*outcome)[OUTCOME_COUNT]; /* planned requests by outcome, [target][enum reqlog_outcome] */
    uint64_t *planned, *sent, *dropped;
    uint64_t *conns_opened, *conns_failed; /* warm-up included (as the JSON's) */
    uint64_t *bytes_sent, *bytes_received; /* warm-up included (as the JSON's bytes_in) */
    /* Histograms in seconds with the run's bounds (set by _init): observe seconds, or copy
     * bucket counts (counts[], total, sum) from the engine's own merge. */
    struct prom_hist *latency;        /* planned send -> full response (closed loop: send -> response) */
    struct prom_hist *service;        /* actual send -> full response */
    struct prom_hist *lag;            /* planned send -> actual send: the generator's own delay */
    uint64_t *in_flight, *queued;     /* now (at the end of the last interval), per target */
    struct run_status_counts *status; /* responses by status, per target (knee_responses{target,code}) */
    /* connections that became ready by protocol, [target][enum metrics_protocol]
       (knee_protocol_connections{target,protocol}); warm-up included */
    uint64_t (*conns_proto)[METRICS_PROTOCOLS];
    /* Run-wide. */
    bool warmup;            /* the warm-up runs: requests planned in it are not counted */
    bool finished;          /* the run is over: the values are final */
    bool generator_limited; /* the generator could not keep to the plan (the summary's warning) */
    /* The same three histograms as native ones (hist/native.h, NATIVE_SCHEMA, seconds), one per
     * target, from the same HdrHistograms as the classic buckets (set by _init, empty): the
     * protobuf exposition and remote-write carry these; the text formats the classic ones. */
    struct native_hist *latency_native, *service_native, *lag_native;
    struct prom_hist *ttfb;          /* actual send -> first response byte (classic, seconds) */
    struct native_hist *ttfb_native; /* the same, native */
};

struct metrics_run;

/* Declare the families of a run with these targets and bucket bounds (seconds; already
 * merged with the SLO thresholds, metrics_bounds_merge) in reg. Returns 0 and *out, or an
 * error of metrics_family_add/metrics_series_add (a duplicate or too long target name...)
 * with a reason in err. */
int metrics_run_new(struct metrics_registry *reg, const char *const *targets, size_t ntargets, const double *bounds_s,
                    size_t nbounds, struct metrics_run **out, char *err, size_t errlen);

/* A zeroed sample for this run (histograms initialised with its bounds). Aborts on OOM. */
void metrics_run_sample_init(const struct metrics_run *m, struct metrics_run_sample *s);
void metrics_run_sample_release(struct metrics_run_sample *s);

/* Publish the sample: from now on every scrape sees these values. Returns 0, or
 * KNEE_EMISMATCH when the sample was not made for this run. Takes the registry's mutex
 * once; call it from the engine's merge, never from a worker's request path. */
int metrics_run_publish(struct metrics_run *m, const struct metrics_run_sample *s);

void metrics_run_free(struct metrics_run *m);

#endif
