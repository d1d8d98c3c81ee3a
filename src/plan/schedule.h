/* Planned send times for one target's open-loop stream, computed from t0 so no drift can
 * accumulate: the i-th request of the stream sits at unit time u_i (u_i = i for constant
 * arrivals; u_i = u_{i-1} + Exp(1) from a seeded RNG for Poisson) mapped through the
 * inverse of the cumulative planned count Λ(t) (Λ(t) = R·t, or a linear ramp's quadratic).
 * With T threads, thread k takes the indices i ≡ k (mod T) of the same global sequence, so
 * the threads together send exactly the sequence one thread would. Not thread-safe: each
 * thread owns its struct sched. */
#ifndef KNEE_PLAN_SCHEDULE_H
#define KNEE_PLAN_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/rng.h"

struct sched {
    bool poisson;
    double rate_from, rate_to; /* per second; equal for a constant rate */
    double ramp_s;             /* ramp length (the duration) when rate_from != rate_to */
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
 * for a ramp from zero); ramp_s > 0 when they differ. seed feeds the Poisson stream (the same
 * seed in every thread: they must draw the same global sequence). */
void sched_init(struct sched *s, bool poisson, double rate_from, double rate_to, double ramp_s, uint64_t t0_ns,
                uint64_t end_ns, uint64_t limit, uint64_t stride, uint64_t k, uint64_t seed);

/* The planned time (absolute ns) of this thread's next request; false when the stream is
 * exhausted (past end_ns or limit). Advances the stream. */
bool sched_next(struct sched *s, uint64_t *planned_ns);

/* Seconds since t0 at which the cumulative planned count reaches u (the inverse of Λ). */
double sched_time_of(const struct sched *s, double u);

/* Λ(t): the planned count the stream reaches t seconds after t0 (for Poisson arrivals, its
 * expectation), not capped by limit; the ramp's total past its end. */
double sched_expected_count(const struct sched *s, double t_s);

/* Constant arrivals: exactly how many requests the whole stream (all threads) plans in the
 * first span_ns after t0, capped by limit, computed without generating them (the same
 * arithmetic as sched_next, checked at the boundary). Only for !s->poisson. */
uint64_t sched_constant_count(const struct sched *s, uint64_t span_ns);

#endif
