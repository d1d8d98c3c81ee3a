/* Live abort rules (knee run --abort-if): a threshold over a trailing window of the run's
 * seconds, judged once a second on the thread that merges the seconds (never on a load thread),
 * so that a run stops itself when the service is clearly failing. A rule is
 *     [stageN.]STAT[WINDOW] OP VALUE      or      generator_limited
 * STAT and VALUE take --threshold's names and units (record/threshold.h) where they overlap:
 *   pNN, mean, max         latency of every request completed in the window (all outcomes, as
 *                          the per-second timeline; --threshold's default is ok requests only),
 *                          compared with a duration (500ms, 1s; a bare number is ms);
 *   first_event.pNN, first_event.mean, first_event.max, and the same of event_gap
 *                          streamed responses (--stream): the planned send -> first event of
 *                          the responses whose first event arrived in the window, and the gaps
 *                          between successive events that ended in it (a duration, as above);
 *   error_rate             requests that ended in the window and did not end ok, among those
 *                          that ended (5% or 0.05);
 *   dropped_rate           dropped among planned in the window;
 *   completed_per_s, goodput_per_s, sent_per_s
 *                          events in the window per second of it (a plain number, 10k).
 * WINDOW is whole seconds in brackets ([30s], [1m]; 1 .. ABORT_MAX_WINDOW_S), OP is one of
 * < <= > >= == !=, and the rule fires when the comparison holds. A rule is judged once the
 * window is full of measured time (after the warm-up and --abort-after); a window without
 * samples never fires. stageN. (1-based) limits the window to stage N while it runs (the stage
 * boundaries come from the plan: abort_eval_set_stages). generator_limited fires when the
 * summary's GENERATOR-LIMITED test holds on the numbers so far (load/run.h struct run_live). */
#ifndef KNEE_ABORT_ABORT_H
#define KNEE_ABORT_ABORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist/hdr.h"
#include "record/threshold.h"

#define ABORT_MAX_WINDOW_S 3600 /* the longest trailing window: an hour of seconds kept */
#define ABORT_MAX_RULES 32      /* --abort-if given more often is bad input */
#define ABORT_RULE_MAX 160      /* a rule's text, NUL included (record.h RUN_ABORT_RULE_MAX) */

enum abort_kind {
    ABORT_LATENCY,           /* a latency statistic (ms) */
    ABORT_ERROR_RATE,        /* errors / completed (a fraction) */
    ABORT_DROPPED_RATE,      /* dropped / planned (a fraction) */
    ABORT_PER_S,             /* events per second of the window */
    ABORT_GENERATOR_LIMITED, /* no window, no comparison */
};
enum abort_stat { ABORT_PCT, ABORT_MEAN, ABORT_MAX, ABORT_COMPLETED, ABORT_GOODPUT, ABORT_SENT };
/* Which histogram a latency-kind rule reads: the requests' latency, or (--stream) the time from
 * the planned send to a response's first event, or the gaps between successive events. */
enum abort_hist { ABORT_H_LATENCY, ABORT_H_FIRST_EVENT, ABORT_H_EVENT_GAP, ABORT_H_COUNT };

struct abort_rule {
    char text[ABORT_RULE_MAX]; /* as given (the record and the messages quote it) */
    enum abort_kind kind;
    enum abort_stat stat; /* ABORT_LATENCY: PCT, MEAN, MAX; ABORT_PER_S: COMPLETED, GOODPUT, SENT */
    double pct;           /* ABORT_PCT: 0 < pct <= 100 */
    enum thr_op op;
    double value;      /* ms (latency), a fraction (rates), per second (ABORT_PER_S) */
    uint32_t window_s; /* 1 .. ABORT_MAX_WINDOW_S; 0 for generator_limited */
    uint32_t stage;    /* 0: the whole run; N: stage N (1-based) */
    enum abort_hist
        hist; /* ABORT_LATENCY: the histogram it reads ("first_event." / "event_gap." before pNN, mean, max) */
};

/* Parse text into *out. 0, or KNEE_EINVAL with one line in err saying what was expected at
 * which part ("p99[30s]: expected a comparison such as p99[30s]>500ms"); err does not repeat
 * the rule (the caller names the flag and the rule). */
int abort_rule_parse(const char *text, struct abort_rule *out, char *err, size_t errlen);

/* The measured value's unit for messages: "ms", "" (a fraction, printed as %), "/s". */
const char *abort_rule_unit(const struct abort_rule *r);

/* One second of the run (an interval of the per-second merge: load/run.h struct run_progress),
 * every target and thread together. */
struct abort_second {
    double start_s, length_s; /* since t0 */
    uint64_t planned, sent, completed, ok, errors, dropped;
};

/* The trailing-window evaluator: the seconds the longest window needs, each with its counts
 * and its latency histogram (kept sparse: the buckets that hold values). Not thread-safe: one
 * thread feeds it (knee run: the thread of run_execute, from its callbacks). */
struct abort_eval;

/* A new evaluator for rules[0..n) (copied). armed_after_s: no rule fires before that much of
 * the run (--abort-after); warmup_s: seconds that start before it are not measured. Never NULL
 * (out of memory aborts). */
struct abort_eval *abort_eval_new(const struct abort_rule *rules, size_t n, double armed_after_s, double warmup_s);
/* Free it; NULL is a no-op. */
void abort_eval_free(struct abort_eval *ev);

/* The stages' edges in seconds since t0: stage i (1-based) runs [edges_s[i-1], edges_s[i]);
 * nstages + 1 edges, increasing (copied). Stage rules naming a stage beyond nstages never
 * fire; without a call, no stage rule fires (the command line refuses them without --stages). */
void abort_eval_set_stages(struct abort_eval *ev, const double *edges_s, size_t nstages);

/* The end of the plan in seconds since t0 (--duration): from then on nothing is left to stop
 * (the seconds of the drain are not judged). Without a call every second is judged. */
void abort_eval_set_plan_end(struct abort_eval *ev, double plan_end_s);

/* Add latencies (ns, RUN_HDR_* histograms) to the second being fed: call it per target before
 * abort_eval_second closes the second. */
void abort_eval_add_latency(struct abort_eval *ev, const struct hdr *latency_ns);

/* Add a second's streamed events (ns, RUN_HDR_* histograms; either may be NULL or unallocated:
 * counts NULL) to the second being fed, as abort_eval_add_latency. */
void abort_eval_add_stream(struct abort_eval *ev, const struct hdr *first_event_ns, const struct hdr *event_gap_ns);

/* Close one second (its counts; the latencies given since the last call) and judge the window
 * rules. Returns the index of the rule that fired (the first in order), or -1. Once a rule has
 * fired nothing fires again. *measured (may be NULL) gets the fired rule's value. */
int abort_eval_second(struct abort_eval *ev, const struct abort_second *sec, double *measured);

/* The generator's verdict on the numbers so far at elapsed_s (struct run_live.generator_limited):
 * judge the generator_limited rules. Returns the index of the rule that fired, or -1. */
int abort_eval_limited(struct abort_eval *ev, double elapsed_s, bool limited);

/* The rule that fired (its index and the end of the second it fired in, seconds since t0):
 * true, or false while none has. */
bool abort_eval_fired(const struct abort_eval *ev, size_t *rule, double *at_s);

#endif
