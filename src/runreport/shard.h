/* The shard parts of knee run's reports (--shard, --start-at) and of a merged result (knee
 * merge): the line printed at the start, the line after the summary, and the `shard` object of
 * the JSON (docs/FORMATS.md, "knee run JSON"), which carries the run's histograms so that
 * `knee merge` can add shards up exactly from their JSON alone. */
#ifndef KNEE_RUNREPORT_SHARD_H
#define KNEE_RUNREPORT_SHARD_H

#include <stdio.h>

#include "load/run.h"

struct json; /* core/json.h (not included: its names clash with jansson's for readers of both) */

/* "shard 2/4 (SLURM_PROCID/SLURM_NTASKS), plan 1f0c…, start at 2026-…Z (in 4.93 s)": nothing
 * when cfg is neither sharded nor has a start instant. */
void run_print_shard_start(FILE *out, const struct run_config *cfg);

/* After the summary: the shard's skew against the start instant and the clock's state, or a
 * merge's shards (skews, generator-limited and failed shards). Nothing without a shard record. */
void run_print_shard_result(FILE *out, const struct run_result *res);

/* The "shard" member of the run JSON (key and object) when res has a shard record: index,
 * count, source, plan id, start instant, t0, skew, clock, and every histogram of the result
 * (HdrHistogram V2 compressed, base64, with the exact min and max) per target and in total. */
void run_write_json_shard(struct json *j, const struct run_result *res);

/* The first comment line of a shard's .hlog in buf ("Logged with knee V, shard I/N, plan HEX,
 * start at S.NNNNNNNNN"; "" when cfg is neither sharded nor has a start instant), and the start
 * instant to write as its StartTime (0: none, use the present). knee merge reads it back. */
uint64_t run_shard_hlog_comment(const struct run_config *cfg, char *buf, size_t len);

/* The plan id as 16 hex digits (buf of at least 17 bytes). */
const char *run_shard_plan_hex(uint64_t plan_id, char *buf, size_t len);

#endif
