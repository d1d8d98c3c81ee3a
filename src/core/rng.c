/* xoshiro256** and splitmix64, from the published algorithms (Blackman & Vigna, "Scrambled
 * linear pseudorandom number generators", 2018), plus the distributions built on them. */
#include "core/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
    /* Rejection on the top of the range removes modulo bias. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= limit);
    return x % n;
}

int rng_bernoulli(struct rng *r, double p)
{
    if (p <= 0)
        return 0;
    if (p >= 1)
        return 1;
    return rng_uniform(r) < p;
}

double rng_exp(struct rng *r, double mean)
{
    return -mean * log1p(-rng_uniform(r));
}

double rng_normal(struct rng *r)
{
    double u1 = 1.0 - rng_uniform(r); /* (0, 1]: log is finite */
    double u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double rng_lognormal(struct rng *r, double mu, double sigma)
{
    return exp(mu + sigma * rng_normal(r));
}

double rng_pareto(struct rng *r, double xm, double alpha)
{
    double u = 1.0 - rng_uniform(r); /* (0, 1] */
    return xm / pow(u, 1.0 / alpha);
}
