/* Shards of one plan (knee run --shard I/N): N processes, on one machine or many, each execute
 * exactly their share of the plan one process would have run, so that the union of their
 * requests is that process's plan, request for request, and `knee merge` can add their
 * results up exactly. This is the arithmetic of the split and the plan's fingerprint; the
 * engine's hooks (the shared start instant, the clock's status) are load/shard_hooks.h's.
 *
 * The split, per target:
 *   open loop    the schedule's global index sequence (plan/schedule.h) is dealt out: shard I
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
 * A shared start instant (plan.shard.start_at_unix_ns, knee run --start-at) puts t0 of every
 * shard at the same wall-clock instant; a shard that is ready after that instant starts late,
 * and every request planned before it is sent late: the lag counts it, nothing hides it.
 * Everything here is pure arithmetic: reentrant, no allocation. */
#ifndef KNEE_PLAN_SHARD_H
#define KNEE_PLAN_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"

/* Shards in the plan (1 when it is not sharded) and this process's index. */
static inline uint32_t plan_shard_count(const struct plan *p)
{
    return p->shard.count ? p->shard.count : 1;
}
static inline uint32_t plan_shard_index(const struct plan *p)
{
    return p->shard.count ? p->shard.index : 0;
}

/* The Poisson seed of target i's stream (every thread and shard of the run uses it). */
static inline uint64_t plan_stream_seed(uint64_t seed, size_t target)
{
    return seed ^ (0x9e3779b97f4a7c15ULL * (target + 1));
}

/* How many requests the whole plan (every shard) gives target stream st within duration_ns (0:
 * no duration) and its limit (following stages[0..nstages) at st->stage_share when it is > 0): exact. Constant arrivals
 * by arithmetic; Poisson by drawing the seeded sequence, at most max_draws draws (false beyond: too costly to check).
 * knee merge checks the shards' counts against it (st from a shard's record). */
bool plan_stream_planned(const struct run_shard_stream *st, const struct run_stage *stages, size_t nstages,
                         bool poisson, uint64_t seed, size_t target, uint64_t duration_ns, uint64_t max_draws,
                         uint64_t *out);

/* How many of `total` things (indices 0..total-1 dealt round robin, or connections) shard
 * `index` of `count` gets: total / count, plus one when index < total mod count. The parts of
 * all shards add up to total. count 0 is read as 1. */
uint64_t plan_shard_share(uint64_t total, uint32_t index, uint32_t count);

/* Shard `index`'s part of `total` requests split in proportion to the shards' connections
 * (plan_shard_share(connections, ., count) each): floor(total·c(I+1)/C) − floor(total·c(I)/C),
 * c(I) the connections of the shards before I. The parts add up to total. */
uint64_t plan_shard_share_by(uint64_t total, uint64_t connections, uint32_t index, uint32_t count);

/* The schedule's interleave for thread k of `threads` in this shard: the stride N·T and the
 * offset I + N·k of the global indices it plans (plan/schedule.h sched_init). */
uint64_t plan_shard_stride(const struct plan *p, uint32_t threads);
uint64_t plan_shard_offset(const struct plan *p, uint32_t threads, uint32_t k);

/* Check the shard fields of p (index < count <= RUN_MAX_SHARDS). 0 or KNEE_EINVAL with a line
 * naming --shard. plan_validate calls it. */
int plan_shard_validate(const struct plan *p, char *err, size_t errlen);

/* What a request's outcome depends on besides the plan (struct run_config's timeout, drain,
 * --when-busy, keep-alive, --expect-body, --reject): the shards of one plan must agree on
 * these too, so the fingerprint covers them. Strings and rejects are not copied. */
struct plan_terms {
    uint64_t timeout_ns, drain_ns;
    enum run_when_busy when_busy;
    bool keepalive;
    const char *expect_body;
    const struct run_reject *rejects;
    size_t nrejects;
};

/* A fingerprint of everything that makes the plan (targets, requests, rates, arrivals and
 * seed, connections, durations, the start instant, the shard count) and of its terms, the same
 * in every shard of one plan whatever its index, threads or outputs; `knee merge` refuses
 * shards whose fingerprints differ. FNV-1a 64 over a canonical encoding ("knee-plan/1": the
 * encoding is kept, so shards of older runs still merge): not a security measure. */
uint64_t plan_id(const struct plan *p, const struct plan_terms *terms);

#endif
