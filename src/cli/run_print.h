/* knee run's lines about a plan (not a record): the --dry-run plan, the progress line, the
 * shard line before the run and the shard's hlog comment. Private to src/cli (and its tests). */
#ifndef KNEE_CLI_RUN_PRINT_H
#define KNEE_CLI_RUN_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "load/run.h"

/* The plan of a run that is not run (knee run --dry-run): the same head as the summary, each
 * target with its share and its planned count and the size of its request, then the planned
 * requests (exact, or "about" for Poisson arrivals), the warm-up, timeout and drain. */
void cli_print_dryrun(FILE *out, const struct run_config *cfg, const struct run_dryrun *dry);

/* One progress line: on a terminal "\r" + text + erase-to-end-of-line, no newline (the next
 * one overwrites it); elsewhere (a pipe, a file) the plain text and "\n", one line per second,
 * without control bytes. */
void cli_print_progress(FILE *out, const struct run_progress *p, bool terminal);

/* "shard 2/4 (SLURM_PROCID/SLURM_NTASKS), plan 1f0c…, start at 2026-…Z (in 4.93 s)": nothing
 * when cfg is neither sharded nor has a start instant. */
void cli_print_shard_start(FILE *out, const struct run_config *cfg);

/* The first comment line of a shard's .hlog in buf ("Logged with knee V, shard I/N, plan HEX,
 * start at S.NNNNNNNNN"; "" when cfg is neither sharded nor has a start instant), and the start
 * instant to write as its StartTime (0: none, use the present). knee merge reads it back. */
uint64_t cli_shard_hlog_comment(const struct run_config *cfg, char *buf, size_t len);

#endif
