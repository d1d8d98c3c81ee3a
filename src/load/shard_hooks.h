/* The engine's side of a sharded run (knee run --shard I/N, --start-at): the run's fingerprint
 * (the plan's and its terms', plan/shard.h plan_id), the binary log's shard block, the shared
 * start instant mapped onto the monotonic clock and the kernel's clock status. The split itself
 * is the plan's (plan/shard.h). */
#ifndef KNEE_LOAD_SHARD_HOOKS_H
#define KNEE_LOAD_SHARD_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/run.h"
#include "plan/shard.h"

/* The fingerprint of cfg's plan and terms (plan_id): equal in every shard of one plan. */
uint64_t run_shard_plan_id(const struct run_config *cfg);

/* The kernel's view of the wall clock (adjtimex(2), read-only): whether NTP/PTP discipline
 * keeps it synchronised and its maximum and estimated error. NAN errors when unknown. */
void run_shard_read_clock(struct run_shard *s);

/* The binary log's shard block for cfg in *out, or NULL when cfg is neither sharded nor has a
 * start instant (the log then says it is not a shard's). */
const struct reqlog_shard *run_shard_reqlog(const struct run_config *cfg, struct reqlog_shard *out);

/* ---- engine hooks (load/engine.c; struct engine is private to the load module) ---- */
struct engine;
/* At the start gate, once t0 is chosen: with a start instant, move t0 to it (mapped onto the
 * monotonic clock) and record the skew; fill res->shard. */
void shard_start(struct engine *e, struct run_record *res);
/* After the result: the warnings a shard adds (a late start, an unsynchronised clock). */
void shard_finish(struct engine *e, struct run_record *res);

#endif
