/* Queueing calculators: closed-form (or exactly computed) predictions for M/M/1, M/M/c
 * (Erlang C), M/D/1 (Pollaczek–Khinchine and the exact waiting-time distribution), Little's
 * law and fan-out tails. Pure functions over doubles; no I/O, no globals, thread-safe.
 *
 * Units: rates are per second (λ arrivals/s, μ completions/s per server), times are seconds
 * (suffix _s), probabilities and utilisations are fractions in [0, 1]. Quantile levels q are
 * fractions in (0, 1): p99 is q = 0.99. All queues are FCFS with Poisson arrivals.
 *
 * Errors: functions that validate their input return 0 or a negative code from core/err.h:
 *   KNEE_EINVAL    a parameter is not finite, not positive, or a level is outside (0, 1)
 *   KNEE_EUNSTABLE λ ≥ c·μ: the queue grows without bound, there is no steady state
 *   KNEE_ERANGE    the exact M/D/1 distribution would need more than MODEL_MD1_MAX_STATES
 *                  queue-length states (utilisation extremely close to 1)
 * Notation (Harchol-Balter's): ρ = λ/(cμ), a = λ/μ, S = 1/μ. */
#ifndef KNEE_MODEL_MODEL_H
#define KNEE_MODEL_MODEL_H

#include <stddef.h>

/* ---- M/M/c (M/M/1 is c = 1) ------------------------------------------------------------ */

struct model_mmc {
    unsigned servers;       /* c */
    double arrival_per_s;   /* λ */
    double service_per_s;   /* μ, per server */
    double offered;         /* a = λ/μ, in Erlangs */
    double utilisation;     /* ρ = λ/(cμ) */
    double p_wait;          /* Erlang C: P(W > 0); ρ when c = 1 */
    double decay_per_s;     /* θ = cμ − λ: P(W > t) = p_wait·e^(−θt) */
    double mean_wait_s;     /* Wq = p_wait/θ */
    double mean_response_s; /* T = Wq + 1/μ */
    double mean_in_queue;   /* Lq = λ·Wq */
    double mean_in_system;  /* L = λ·T */
};

/* Erlang B blocking probability B(c, a) for c servers and offered load a ≥ 0 Erlangs, by the
 * recurrence B(0) = 1, B(k) = a·B(k−1)/(k + a·B(k−1)), which never overflows (the textbook
 * a^c/c! form does for c ≳ 170). Returns NaN when a is negative or not finite. */
double model_erlang_b(unsigned servers, double offered);

/* Erlang C probability of waiting C(c, a) = c·B/(c − a(1 − B)) for a < c. Returns 0 and sets
 * *out, KNEE_EINVAL (c = 0, a not finite or negative) or KNEE_EUNSTABLE (a ≥ c). */
int model_erlang_c(unsigned servers, double offered, double *out);

/* Fill *out for c servers, arrival rate λ and per-server service rate μ (both > 0 and
 * finite). Returns 0, KNEE_EINVAL or KNEE_EUNSTABLE. */
int model_mmc(unsigned servers, double arrival_per_s, double service_per_s, struct model_mmc *out);

/* P(W > t) for the queueing delay W (an atom of 1 − p_wait at 0, then exponential). 1 for t < 0. */
double model_mmc_wait_survival(const struct model_mmc *m, double t_s);

/* P(T > t) for the response time T = W + X, X ~ Exp(μ) the service time (independent of W
 * under FCFS). With θ = cμ − λ, lo = min(θ, μ), δ = |θ − μ| the closed form is
 *     P(T > t) = e^(−μt) + p_wait·μ·e^(−lo·t)·(1 − e^(−δt))/δ
 * and its δ → 0 limit (θ = μ, where Exp(θ) + Exp(μ) is Erlang-2) e^(−μt)(1 + p_wait·μt).
 * For c = 1 this collapses to e^(−(μ−λ)t). 1 for t < 0. */
double model_mmc_response_survival(const struct model_mmc *m, double t_s);

/* The q-quantile of W: max(0, ln(p_wait/(1 − q))/θ). Returns 0 or KNEE_EINVAL (q ∉ (0,1)). */
int model_mmc_wait_quantile(const struct model_mmc *m, double q, double *out_s);

/* The q-quantile of T: exact for c = 1 (−ln(1 − q)/(μ − λ)); otherwise the root of
 * P(T > t) = 1 − q by bisection to a relative width of 1e-12. Returns 0 or KNEE_EINVAL. */
int model_mmc_response_quantile(const struct model_mmc *m, double q, double *out_s);

/* ---- M/D/1 --------------------------------------------------------------------------- */

struct model_md1 {
    double arrival_per_s;   /* λ */
    double service_s;       /* D, deterministic */
    double utilisation;     /* ρ = λD */
    double mean_wait_s;     /* Pollaczek–Khinchine: Wq = ρD/(2(1 − ρ)) */
    double mean_response_s; /* T = Wq + D */
    double mean_in_queue;   /* Lq = λ·Wq */
    double mean_in_system;  /* L = λ·T */
};

/* Means of M/D/1 for λ > 0 and D > 0. Returns 0, KNEE_EINVAL or KNEE_EUNSTABLE. */
int model_md1(double arrival_per_s, double service_s, struct model_md1 *out);

/* The cap on queue-length states the exact distribution may use (about 8 MB of doubles). */
#define MODEL_MD1_MAX_STATES 1000000u

/* The exact M/D/1 FCFS waiting-time distribution. It keeps the stationary queue-length
 * probabilities π_n (grown on demand), so it is a stateful object: _init/_release, caller's
 * memory, one thread at a time. See model.c for the derivation; every sum in it has
 * non-negative terms, unlike the alternating Erlang/Crommelin series. */
struct model_md1_dist {
    struct model_md1 m;
    double *tail; /* tail[k] = P(A ≥ k), A ~ Poisson(ρ) arrivals per service time */
    size_t ntail; /* tail[k] for k < ntail; beyond it the tail is below 1e-300 */
    double *pi;   /* π_n = P(n in system) at an arbitrary time, n < npi */
    double *cdf;  /* cdf[n] = π_0 + … + π_n */
    size_t npi, cap;
};

/* Returns 0, KNEE_EINVAL or KNEE_EUNSTABLE; on error there is nothing to release. */
int model_md1_dist_init(struct model_md1_dist *d, double arrival_per_s, double service_s);
/* Free the tables; d is zeroed. */
void model_md1_dist_release(struct model_md1_dist *d);

/* P(W > t) for the queueing delay W. Returns 0, or KNEE_ERANGE when t/D would need more
 * than MODEL_MD1_MAX_STATES states. */
int model_md1_wait_survival(struct model_md1_dist *d, double t_s, double *out);

/* The q-quantile of W (0 when q ≤ 1 − ρ: that many customers do not wait), by bisection to a
 * relative width of 1e-12. The response-time quantile is this plus D. Returns 0,
 * KNEE_EINVAL (q ∉ (0,1)) or KNEE_ERANGE. */
int model_md1_wait_quantile(struct model_md1_dist *d, double q, double *out_s);

/* ---- Little's law and fan-out --------------------------------------------------------- */

/* L = λ·W. Exactly one of *l, *arrival_per_s, *w_s must be NaN (the unknown); the other two
 * must be finite and > 0. The unknown is filled in. Returns 0 or KNEE_EINVAL. */
int model_little(double *l, double *arrival_per_s, double *w_s);

/* P(at least one of n independent calls is slow) = 1 − (1 − p)^n, computed as
 * −expm1(n·log1p(−p)) so tiny p keeps its digits. p in [0, 1]; NaN otherwise. */
double model_fanout_any(double p, unsigned n);

/* The per-call quantile level each of n calls must meet so that all n finish under it with
 * probability q: q^(1/n). q in (0, 1); NaN otherwise. */
double model_fanout_leaf_level(double q, unsigned n);

#endif
