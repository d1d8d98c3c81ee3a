/* The reports of `knee run`: the terminal summary and the JSON document (schema in
 * docs/FORMATS.md, "knee run JSON"). Both read a finished struct run_result and write to a
 * FILE * the caller owns; they print only measured values (a statistic without samples is
 * "-" in text and null in JSON). */
#ifndef KNEE_RUNREPORT_H
#define KNEE_RUNREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "load/run.h"
#include "load/threshold.h"

/* The JSON document's schema name. Version 2: rates by event time (docs/FORMATS.md, "Rates"),
 * events, the window's edges, the generator verdict, sent_on_schedule (was send_ratio). */
#define RUN_JSON_SCHEMA "knee-run/2"

/* True for a knee run JSON schema that readers (report, compare, merge) accept: this version
 * and knee-run/1 (written before the rates were by event time). NULL is false. */
bool run_json_schema_readable(const char *schema);

/* The human summary. The full form: the plan, the accounting identities with every outcome
 * (warm-up apart), rates, latency by outcome and the service/ttfb/lag/connect tables (each
 * labelled with its interval), per target when there are several, Server-Timing,
 * connections, warnings and the thresholds. The compact form (one target, nothing that needs
 * attention, !verbose): the plan, the accounting with the outcomes that occurred, rates,
 * latency p50/p90/p99/p99.9/max (and the generator's lag in an open loop), Server-Timing
 * when the server sent it, connections, warnings and thresholds in ~15 lines. The JSON
 * holds everything either form leaves out. */
void run_print_summary(FILE *out, const struct run_config *cfg, const struct run_result *res,
                       const struct run_threshold *thr, size_t nthr, bool verbose);

/* True when the summary must be the full form even without verbose: several targets, a
 * warning that needs attention, failed requests (anything but ok and rejected), a broken
 * identity, an interrupted or generator-limited run, a failed threshold. */
bool run_summary_needs_full(const struct run_config *cfg, const struct run_result *res, const struct run_threshold *thr,
                            size_t nthr);

/* The whole summary as one JSON object (pretty when `pretty`). */
void run_write_json(FILE *out, const struct run_config *cfg, const struct run_result *res,
                    const struct run_threshold *thr, size_t nthr, bool pretty);

/* The plan of a run that is not run (knee run --dry-run): the same head as the summary, each
 * target with its share and its planned count and the size of its request, then the planned
 * requests (exact, or "about" for Poisson arrivals), the warm-up, timeout and drain. */
void run_print_plan(FILE *out, const struct run_config *cfg, const struct run_plan *plan);

/* One progress line: on a terminal "\r" + text + erase-to-end-of-line, no newline (the next
 * one overwrites it); elsewhere (a pipe, a file) the plain text and "\n", one line per second,
 * without control bytes. */
void run_print_progress(FILE *out, const struct run_progress *p, bool terminal);

#endif
