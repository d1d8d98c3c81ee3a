/* The reports of `knee run`: the terminal summary and the JSON document (schema in
 * docs/FORMATS.md, "knee run JSON"). Both read a finished struct run_result and write to a
 * FILE * the caller owns; they print only measured values (a statistic without samples is
 * "-" in text and null in JSON). */
#ifndef KNEE_RUNREPORT_H
#define KNEE_RUNREPORT_H

#include <stddef.h>
#include <stdio.h>

#include "load/run.h"
#include "load/threshold.h"

/* The human summary: the plan, accounting identities, rates, per-outcome latency and the
 * service/ttfb/lag/connect tables (each labelled with its interval), per target when there
 * are several, Server-Timing, connections, warnings, and the thresholds when given. */
void run_print_summary(FILE *out, const struct run_config *cfg, const struct run_result *res,
                       const struct run_threshold *thr, size_t nthr);

/* The whole summary as one JSON object (pretty when `pretty`). */
void run_write_json(FILE *out, const struct run_config *cfg, const struct run_result *res,
                    const struct run_threshold *thr, size_t nthr, bool pretty);

/* One progress line ("\r" + text, no newline) for a terminal. */
void run_print_progress(FILE *out, const struct run_progress *p);

#endif
