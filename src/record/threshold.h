/* Pass/fail checks on a run (--threshold, k6-like). An expression is
 *     [TARGET.][GROUP.][METRIC.]STAT OP VALUE
 * METRIC is latency (default), service, ttfb, lag, connect, or first_event and event_gap (streamed
 * responses, knee run --stream: the planned send to the first event, the gaps between events); STAT is pNN (p99,
 * p99.9), mean, stdev, min, max or count, compared with a duration (250ms, 1s; a bare number is ms). GROUP (latency
 * only, also written latency.GROUP.STAT) says whose latency: ok (the default: a verdict on latency is about requests
 * that worked, so a refused connection's 0.1 ms never passes a p99 check), all (every completed request), or one failed
 * outcome (rejected, http_error, invalid, transport, timeout). A target named like a group is read as the target.
 * Without a metric STAT may also be a request count (planned, sent, ok, rejected,
 * http_error, invalid, transport, timeout, dropped, cancelled), a share of planned requests
 * (<outcome>_rate, e.g. goodput_rate = ok_rate, dropped_rate; compared with 1% or 0.01),
 * error_rate (failed among sent: rejected + http_error + invalid + transport + timeout),
 * sent_on_schedule (the share of planned requests sent on schedule), or a rate per second
 * by event time over the window (planned_per_s, sent_per_s, completed_per_s, goodput_per_s,
 * achieved_send_per_s: docs/FORMATS.md, "Rates").
 * Without a metric STAT may also be a status code's count, status.CODE, among the responses of
 * the requests counted (after the warm-up): CODE is a status (404), a class (5xx: 500 .. 599,
 * 1xx .. 5xx) or other (a status outside 100 .. 599), compared with a count (status.5xx==0,
 * status.404<10, status.2xx>=1000); status.CODE_rate is its share of the completed requests
 * (every outcome but dropped and cancelled; status.5xx_rate<1%), which fails when none completed.
 * OP is one of < <= > >= == !=. A statistic without samples fails (nothing to vouch for it).
 * A --stages run may name a stage first, stageN. (1-based: stage2.p99<250ms): then the
 * quantity is the stage's (record/stages.h: its requests by planned time): the ok latency
 * (pNN, mean, stdev, min, max, count), a count, a share, error_rate or a rate per second over
 * the stage's window; a target named stageN is read as the target. */
#ifndef KNEE_RECORD_THRESHOLD_H
#define KNEE_RECORD_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "record/record.h"

enum thr_op { THR_LT, THR_LE, THR_GT, THR_GE, THR_EQ, THR_NE };
enum thr_kind { THR_STAT, THR_COUNT, THR_SHARE, THR_ERROR_RATE, THR_PER_S, THR_SCHEDULE, THR_STATUS, THR_STATUS_SHARE };
enum thr_metric {
    THR_LATENCY,
    THR_SERVICE,
    THR_TTFB,
    THR_LAG,
    THR_CONNECT,
    THR_FIRST_EVENT,
    THR_EVENT_GAP,
    THR_METRIC_COUNT
};

#define THR_ALL_TARGETS (-1)   /* run_threshold.target: the merged result, no TARGET. prefix */
#define THR_COUNT_PLANNED (-1) /* run_threshold.outcome: planned requests, not an outcome */
#define THR_COUNT_SENT (-2)    /* run_threshold.outcome: sent requests, not an outcome */
#define THR_GROUP_ALL (-1)     /* run_threshold.group: every completed request's latency */
#define THR_NO_STAGE (-1)      /* run_threshold.stage: the whole run */

struct run_threshold {
    char expr[160];
    int target; /* index, or THR_ALL_TARGETS */
    int stage;  /* stageN.: N - 1; -1 (THR_NO_STAGE) for the whole run */
    enum thr_kind kind;
    enum thr_metric metric;
    int group;                /* latency: an enum run_group (RUN_GROUP_OK by default) or THR_GROUP_ALL */
    char stat[24];            /* "p", "mean", "stdev", "min", "max", "count"; counters by name */
    double pct;               /* for "p" */
    int outcome;              /* THR_COUNT/THR_SHARE: an outcome, THR_COUNT_PLANNED or THR_COUNT_SENT */
    int status_lo, status_hi; /* THR_STATUS(_SHARE): the statuses counted, inclusive; -1, -1: "other" */
    enum thr_op op;
    double value; /* ms for THR_STAT durations, a fraction for shares, else plain */
    /* evaluation */
    double measured; /* NAN when there was nothing to measure */
    bool pass;
};

/* Parse expr against the run's target names (names[0..nnames), in the run's order: a TARGET.
 * prefix is the longest of them followed by '.'). 0, or KNEE_EINVAL with a reason in err.
 * run_threshold_parse (load/run.h) parses against a struct run_config's targets. */
int record_threshold_parse_names(const char *expr, const char *const *names, size_t nnames, struct run_threshold *out,
                                 char *err, size_t errlen);
/* Evaluate against a record with histograms (a run's, a merge's): sets measured and pass.
 * record_set_thresholds (record/record.h) keeps the verdicts in the record. */
void record_threshold_eval(struct run_threshold *t, const struct run_record *res);
/* The unit a threshold's measured value is in: "ms", "", "/s" (shares print as %). */
const char *record_threshold_unit(const struct run_threshold *t);

#endif
