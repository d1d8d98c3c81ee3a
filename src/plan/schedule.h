/* Planned send times for one target's open-loop stream, computed from t0 so no drift can
 * accumulate: the i-th request of the stream sits at unit time u_i (u_i = i for constant
 * arrivals; u_i = u_{i-1} + Exp(1) from a seeded RNG for Poisson) mapped through the
 * inverse of the cumulative planned count Λ(t). The rate is piecewise linear: one constant
 * piece (-R), one ramp (--ramp), or the pieces of --stages (holds, ramps, stages at rate 0),
 * so Λ is piecewise quadratic and its inverse exact piece by piece; for constant arrivals
 * the count planned in a piece is its integral (±1). With T threads, thread k takes the
 * indices i ≡ k (mod T) of the same global sequence, so the threads together send exactly
 * the sequence one thread would. Not thread-safe: each thread owns its struct sched. */
#ifndef KNEE_PLAN_SCHEDULE_H
#define KNEE_PLAN_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"

#define SCHED_MAX_SEGS 64 /* pieces of one schedule (the --stages limit) */

/* One piece of the rate: from `from` to `to` requests/s, linearly, over dur_s seconds
 * (INFINITY: a constant rate without end; from == to then). */
struct sched_seg {
    double from, to, dur_s;
};

/* A piece as the schedule keeps it: where it starts and the count planned before it. */
struct sched_piece {
    double from, to, dur_s;
    double start_s; /* seconds after t0 */
    double before;  /* Λ(start_s) */
    double count;   /* Λ over the piece (INFINITY for an endless constant piece) */
};

struct sched {
    bool poisson;
    size_t npieces;
    struct sched_piece piece[SCHED_MAX_SEGS];
    size_t cur; /* sched_next: the piece of the last planned time (unit times only grow) */
    uint64_t t0_ns;
    uint64_t end_ns;     /* planned times >= end_ns are not planned (UINT64_MAX: none) */
    uint64_t limit;      /* global indices >= limit are not planned (UINT64_MAX: none) */
    uint64_t stride;     /* T */
    uint64_t next_index; /* the next global index this thread plans */
    double u;            /* Poisson: unit time of the last generated global index */
    uint64_t generated;  /* Poisson: global indices generated so far */
    struct rng rng;
};

/* Prepare thread `k` of `stride` threads. rate_from/rate_to > 0 (or rate_from == 0 < rate_to
 * for a ramp from zero); ramp_s > 0 when they differ (the ramp's length: Λ ends there). seed
 * feeds the Poisson stream (the same seed in every thread: they must draw the same global
 * sequence). */
void sched_init(struct sched *s, bool poisson, double rate_from, double rate_to, double ramp_s, uint64_t t0_ns,
                uint64_t end_ns, uint64_t limit, uint64_t stride, uint64_t k, uint64_t seed);

/* The same with a piecewise-linear rate: segs[0..n) one after the other from t0 (1 <= n <=
 * SCHED_MAX_SEGS; rates >= 0, durations > 0; a piece may be 0 throughout), each rate
 * multiplied by scale (a target's share of the stages). Λ ends with the last piece. */
void sched_init_segs(struct sched *s, bool poisson, const struct sched_seg *segs, size_t n, double scale,
                     uint64_t t0_ns, uint64_t end_ns, uint64_t limit, uint64_t stride, uint64_t k, uint64_t seed);

/* The planned time (absolute ns) of this thread's next request; false when the stream is
 * exhausted (past end_ns or limit, or past the end of Λ). Advances the stream. */
bool sched_next(struct sched *s, uint64_t *planned_ns);

/* Seconds since t0 at which the cumulative planned count reaches u (the inverse of Λ: the
 * first instant Λ(t) >= u where the rate is not 0; +inf past Λ's end). */
double sched_time_of(const struct sched *s, double u);

/* Λ(t): the planned count the stream reaches t seconds after t0 (for Poisson arrivals, its
 * expectation), not capped by limit; Λ's total past its end. */
double sched_expected_count(const struct sched *s, double t_s);

/* Constant arrivals: exactly how many requests the whole stream (all threads) plans in the
 * first span_ns after t0, capped by limit, computed without generating them (the same
 * arithmetic as sched_next, checked at the boundary). Only for !s->poisson. */
uint64_t sched_constant_count(const struct sched *s, uint64_t span_ns);

#endif
