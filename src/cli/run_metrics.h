/* Live metrics of the commands that run load (knee run; knee capacity): one call starts the
 * Prometheus endpoint and wires a struct run_config to it (run_config.on_live), another serves
 * the final values for --metrics-linger and stops. The engine never depends on src/metrics:
 * it hands this glue a struct run_live once per second, which becomes a struct
 * metrics_run_sample (metrics/knee_run.h) published to the endpoint's registry.
 *
 *   struct metrics_flags mf = {0};               // rows: cli/metrics_flags.h, METRICS_FOR_RUN
 *   ... opt_parse, runopts_build(..., &rc) ...
 *   struct run_metrics *m;
 *   if (cli_metrics_start(&mf, &spec, &rc.cfg, rc.thr, rc.nthr, &m)) return that code;
 *   run_execute(&rc.cfg, ...);                   // as many runs as the command makes
 *   ... print the results ...
 *   cli_metrics_finish(m, true);                 // linger (if asked), stop; m NULL is a no-op
 *
 * Several runs through the same cfg (knee capacity's steps) add up: each run's final values
 * are kept and the next run's are published on top of them, so every counter only grows
 * across the command (the runs must have the same targets, as one cfg has). Runs through one
 * struct run_metrics follow each other; they must not overlap (on_live takes no lock). */
#ifndef KNEE_CLI_RUN_METRICS_H
#define KNEE_CLI_RUN_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/metrics_flags.h"
#include "cli/opt.h"
#include "load/run.h"
#include "record/record.h"
#include "record/threshold.h"

struct run_metrics;

/* The SLO thresholds of thr that are durations of the exposed histograms (latency, service or
 * lag: pNN, mean, min, max), in seconds, into out (cap entries). Returns the count. */
size_t cli_metrics_thresholds(const struct run_threshold *thr, size_t nthr, double *out, size_t cap);

/* Check the metrics flags (cli/metrics_flags.h) against the thresholds, without starting
 * anything: 0 (bounds_s/nbounds filled; nbounds 0 without --metrics-listen) or 2 after one
 * line on stderr. For --dry-run, and called by cli_metrics_start. */
int cli_metrics_check(const struct metrics_flags *f, const struct cmd_spec *spec, const struct run_threshold *thr,
                      size_t nthr, double *bounds_s, size_t *nbounds);

/* Without --metrics-listen and --remote-write (f->push): *out = NULL, 0. With --remote-write
 * alone the registry is made and pushed from (cli/push_flags.h), without an endpoint. Else check the flags, declare
 * knee run's families for cfg's targets with the buckets (the thresholds added), start the endpoint (printing "metrics
 * on http://ADDR:PORT/metrics" on stderr, and a warning for a non-loopback address) and set cfg->on_live, live_ctx,
 * live_bounds_ns and live_nbounds. Returns 0, 2 (bad input: a flag, an address that does not resolve) or 1 (the
 * endpoint could not start), after one line on stderr. m must outlive every run through cfg. */
int cli_metrics_start(const struct metrics_flags *f, const struct cmd_spec *spec, struct run_config *cfg,
                      const struct run_threshold *thr, size_t nthr, struct run_metrics **out);

/* The endpoint's bound address ("127.0.0.1:PORT") and port. */
const char *cli_metrics_address(const struct run_metrics *m);
int cli_metrics_port(const struct run_metrics *m);

/* --remote-write (metrics_flags.push): mark the values final and end the pushes (the last one,
 * the flush), their numbers into *rw (zeroed, set false, without --remote-write or m NULL).
 * For a command that records one run (knee run): the record's remote_write. */
void cli_metrics_push_end(struct run_metrics *m, struct record_remote_write *rw);

/* Mark the values final (knee_run_finished 1); end the pushes if cli_metrics_push_end did not
 * (then a failure is one line on stderr: no record says it); with linger and --metrics-linger,
 * keep serving them for that long (SIGINT/SIGTERM ends the wait; "metrics: final values on ...
 * for D" on stderr); stop the endpoint and free. Returns 1 when --remote-write-required and
 * not one push was accepted (ended here), else 0. NULL is a no-op (0). */
int cli_metrics_finish(struct run_metrics *m, bool linger);

#endif
