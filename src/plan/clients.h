/* Closed-loop stages (--stages 4c:30s,4..64c:2m): how many clients run at each instant and which
 * ones. The count at time t (ns after t0) in stage j is the floor of its line, from + (to - from)
 * · τ/D at τ = t - start_j (a hold: its count); past the last stage, 0. The plan's clients have
 * global ranks 1..peak, and client k is active exactly while the count is >= k: the lowest ranks
 * run longest, a ramp up adds ranks in order, a ramp down retires the highest first, and every
 * thread and shard decides for its own clients alone, with no message between them, yet the
 * active clients always number the count. Ranks are dealt to targets by weight, each rank to
 * the target whose share of the ranks so far is most below its weight (so every prefix, hence
 * every count, is split by weight within one client), and a target's m-th rank to shard
 * (m - 1) mod N (the -c split of shards, at every count). Pure arithmetic: reentrant. */
#ifndef KNEE_PLAN_CLIENTS_H
#define KNEE_PLAN_CLIENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"

/* Does p run closed-loop stages (--stages of clients)? */
bool plan_stages_clients(const struct plan *p);

/* The most clients the stages ask for: max over the stages of max(from, to) (a ramp's end
 * counts though the line reaches it only at the stage's end). 0 without stages. */
uint32_t plan_clients_peak(const struct run_stage *st, size_t n);

/* The client count at t_ns after t0: the floor of the line of the stage holding t_ns; 0 past the
 * last stage. */
uint32_t plan_clients_at(const struct run_stage *st, size_t n, uint64_t t_ns);

/* Client of rank k (1-based): is it active at t_ns (plan_clients_at >= k), and (*next_ns) the
 * first instant after t_ns where that changes (UINT64_MAX: never before the stages end). Exact
 * to the ns and consistent with plan_clients_at at every instant. */
bool plan_client_active(const struct run_stage *st, size_t n, uint32_t k, uint64_t t_ns, uint64_t *next_ns);

/* Split peak ranks over the targets by weight (out[i]: the ranks of target i, every shard's;
 * the parts add up to peak). weights: p->ntargets weights > 0. */
void plan_clients_split(const double *weights, size_t ntargets, uint32_t peak, uint32_t *out);

/* The ranks (1-based, ascending) of every target's clients in shard `index` of `count` (0 is read
 * as 1), in one pass over the peak's ranks: out[i][0..n[i]) for target i, n[i] their number
 * (plan_shard_share of the target's part: plan_shares' clients); an entry no rank reaches is
 * UINT32_MAX. out[i] may be NULL when n[i] is 0. */
void plan_clients_ranks(const double *weights, size_t ntargets, uint32_t peak, uint32_t index, uint32_t count,
                        uint32_t *const *out, const uint32_t *n);

/* The weights plan_clients_split takes for p's targets (the --mix weights, 0 read as 1); out:
 * p->ntargets of them. */
void plan_clients_weights(const struct plan *p, double *out);

#endif
