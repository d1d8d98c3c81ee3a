/* Shards of one plan (knee run --shard I/N): N processes, on one machine or many, each execute
 * exactly their share of the plan one process would have run, so that the union of their
 * requests is that process's plan, request for request, and `knee merge` can add their
 * results up exactly.
 *
 * The split, per target:
 *   open loop    the schedule's global index sequence (load/schedule.h) is dealt out: shard I
 *                takes the indices i ≡ I (mod N), and its T threads interleave within that
 *                share (thread k: i ≡ I + N·k (mod N·T)). A constant rate: every N-th planned
 *                send. Poisson arrivals: every shard draws the same seeded global sequence and
 *                keeps its indices, a deterministic split of one process (not N independent
 *                processes of rate R/N, which would be Poisson too but not the same requests):
 *                each shard generates N times the draws it keeps. --requests bounds the global
 *                index, so the shards' counts add up to it exactly.
 *   closed loop  each target's C connections: shard I gets C/N, plus one when I < C mod N
 *                (the first C mod N shards take the remainder); --requests is split in
 *                proportion to the connections each shard holds (cumulative floors, so the
 *                parts add up to the total exactly). A shard left without any connection is
 *                refused (raise --connections to at least N).
 *
 * A shared start instant (run_config.start_at_unix_ns, knee run --start-at) puts t0 of every
 * shard at the same wall-clock instant, mapped once onto CLOCK_MONOTONIC; a shard that is
 * ready after that instant starts late, and every request planned before it is sent late:
 * the lag counts it, nothing hides it. */
#ifndef KNEE_LOAD_SHARD_H
#define KNEE_LOAD_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/run.h"

/* Shards in the run (1 when the configuration is not sharded) and this process's index. */
static inline uint32_t run_shard_count(const struct run_config *cfg)
{
    return cfg->shard_count ? cfg->shard_count : 1;
}
static inline uint32_t run_shard_index(const struct run_config *cfg)
{
    return cfg->shard_count ? cfg->shard_index : 0;
}

/* The Poisson seed of target i's stream (every thread and shard of the run uses it). */
static inline uint64_t run_stream_seed(uint64_t seed, size_t target)
{
    return seed ^ (0x9e3779b97f4a7c15ULL * (target + 1));
}

/* How many requests the whole plan (every shard) gives target stream st within duration_ns (0:
 * no duration) and its limit: exact. Constant arrivals by arithmetic; Poisson by drawing the
 * seeded sequence, at most max_draws draws (false beyond: too costly to check). */
bool run_shard_stream_planned(const struct run_shard_stream *st, bool poisson, uint64_t seed, size_t target,
                              uint64_t duration_ns, uint64_t max_draws, uint64_t *out);

/* How many of `total` things (indices 0..total-1 dealt round robin, or connections) shard
 * `index` of `count` gets: total / count, plus one when index < total mod count. The parts of
 * all shards add up to total. count 0 is read as 1. */
uint64_t run_shard_share(uint64_t total, uint32_t index, uint32_t count);

/* Shard `index`'s part of `total` requests split in proportion to the shards' connections
 * (run_shard_share(connections, ., count) each): floor(total·c(I+1)/C) − floor(total·c(I)/C),
 * c(I) the connections of the shards before I. The parts add up to total. */
uint64_t run_shard_share_by(uint64_t total, uint64_t connections, uint32_t index, uint32_t count);

/* The schedule's interleave for thread k of `threads` in this shard: the stride N·T and the
 * offset I + N·k of the global indices it plans (load/schedule.h sched_init). */
uint64_t run_shard_stride(const struct run_config *cfg, uint32_t threads);
uint64_t run_shard_offset(const struct run_config *cfg, uint32_t threads, uint32_t k);

/* Check the shard fields of cfg (index < count <= RUN_MAX_SHARDS). 0 or KNEE_EINVAL with a
 * line naming --shard. run_validate calls it. */
int run_shard_validate(const struct run_config *cfg, char *err, size_t errlen);

/* A fingerprint of everything that makes the plan (targets, requests, rates, arrivals and
 * seed, connections, durations, timeouts, the start instant, the shard count), the same in
 * every shard of one plan whatever its index, threads or outputs; `knee merge` refuses shards
 * whose fingerprints differ. FNV-1a 64 over a canonical encoding: not a security measure. */
uint64_t run_shard_plan_id(const struct run_config *cfg);

/* The kernel's view of the wall clock (adjtimex(2), read-only): whether NTP/PTP discipline
 * keeps it synchronised and its maximum and estimated error. NAN errors when unknown. */
void run_shard_read_clock(struct run_shard *s);

/* The binary log's shard block for cfg in *out, or NULL when cfg is neither sharded nor has a
 * start instant (the log then says it is not a shard's). */
const struct reqlog_shard *run_shard_reqlog(const struct run_config *cfg, struct reqlog_shard *out);

/* ---- engine hooks (load/engine.c; struct engine is private to the load module) ---- */
struct engine;
struct run_plan_target;
/* After the targets' shares are planned: this shard's part of each closed-loop target's
 * connections and --requests. 0, or KNEE_EINVAL when the shard gets no connection at all. */
int shard_apply(struct engine *e, char *err, size_t errlen);
/* At the start gate, once t0 is chosen: with a start instant, move t0 to it (mapped onto the
 * monotonic clock) and record the skew; fill res->shard. */
void shard_start(struct engine *e, struct run_result *res);
/* After the result: the warnings a shard adds (a late start, an unsynchronised clock). */
void shard_finish(struct engine *e, struct run_result *res);
/* knee run --dry-run: a target's plan reduced to this shard's part (open loop: its rate and
 * planned count; the closed loop is already the shard's part after shard_apply). */
void shard_plan_target(const struct run_config *cfg, struct run_plan_target *pt);

#endif
