/* A small, fast, seedable random number generator (xoshiro256**, seeded through
 * splitmix64; Blackman & Vigna 2018) and the distributions knee's schedules and lab servers
 * draw from. Every random choice in knee goes through one of these, so a seed reproduces it.
 * Not thread-safe: one struct rng per thread. */
#ifndef KNEE_CORE_RNG_H
#define KNEE_CORE_RNG_H

#include <stdint.h>

struct rng {
    uint64_t s[4];
};

/* Seed the generator; any seed (0 included) gives a valid, distinct stream. */
void rng_seed(struct rng *r, uint64_t seed);

/* The next 64 random bits. */
uint64_t rng_next(struct rng *r);

/* Uniform double in [0, 1) with 53 random bits. */
double rng_uniform(struct rng *r);

/* Uniform integer in [0, n) without modulo bias; n > 0. */
uint64_t rng_below(struct rng *r, uint64_t n);

/* 1 with probability p (p clamped to [0,1]), else 0. */
int rng_bernoulli(struct rng *r, double p);

/* Exponential with the given mean (> 0): -mean * ln(1 - U). */
double rng_exp(struct rng *r, double mean);

/* Standard normal (Box-Muller, one value per call). */
double rng_normal(struct rng *r);

/* Log-normal: exp(mu + sigma * N(0,1)). */
double rng_lognormal(struct rng *r, double mu, double sigma);

/* Pareto with scale xm > 0 and shape alpha > 0: xm / U^(1/alpha). */
double rng_pareto(struct rng *r, double xm, double alpha);

#endif
