/* Planned-time streams. Poisson streams are generated in global order by every thread,
 * each keeping its own indices: T draws per planned request, but the global sequence is the
 * same for any T (a superposition of T independent streams would be Poisson too, but not the
 * same requests at the same times, and a seed should reproduce a run). */
#include "plan/schedule.h"

#include <math.h>
#include <stdbool.h>

void sched_init(struct sched *s, bool poisson, double rate_from, double rate_to, double ramp_s, uint64_t t0_ns,
                uint64_t end_ns, uint64_t limit, uint64_t stride, uint64_t k, uint64_t seed)
{
    s->poisson = poisson;
    s->rate_from = rate_from;
    s->rate_to = rate_to;
    s->ramp_s = rate_from == rate_to ? 0 : ramp_s;
    s->t0_ns = t0_ns;
    s->end_ns = end_ns;
    s->limit = limit;
    s->stride = stride ? stride : 1;
    s->next_index = k;
    s->u = 0;
    s->generated = 0;
    rng_seed(&s->rng, seed);
}

double sched_time_of(const struct sched *s, double u)
{
    if (u <= 0)
        return 0;
    double a = s->rate_from;
    if (s->ramp_s <= 0)
        return u / a;
    /* Λ(t) = a t + c t², c = (b - a) / (2 D); t = 2u / (a + sqrt(a² + 4 c u)) avoids the
     * cancellation of the textbook root when c is small. Past the ramp end Λ has no inverse
     * (the rate would keep changing): return +inf so the stream ends there. */
    double c = (s->rate_to - a) / (2 * s->ramp_s);
    double total = a * s->ramp_s + c * s->ramp_s * s->ramp_s;
    if (u > total)
        return INFINITY;
    double disc = a * a + 4 * c * u;
    if (disc < 0)
        return INFINITY;
    return 2 * u / (a + sqrt(disc));
}

bool sched_next(struct sched *s, uint64_t *planned_ns)
{
    uint64_t i = s->next_index;
    if (i >= s->limit)
        return false;
    double u;
    if (s->poisson) {
        /* draw the global sequence up to and including index i */
        while (s->generated <= i) {
            s->u += rng_exp(&s->rng, 1.0);
            s->generated++;
        }
        u = s->u;
    } else {
        u = (double)i;
    }
    double t_s = sched_time_of(s, u);
    if (!isfinite(t_s) || t_s * 1e9 >= (double)(UINT64_MAX - s->t0_ns))
        return false;
    uint64_t t = s->t0_ns + (uint64_t)llround(t_s * 1e9);
    if (t >= s->end_ns)
        return false;
    s->next_index = i + s->stride;
    *planned_ns = t;
    return true;
}

double sched_expected_count(const struct sched *s, double t_s)
{
    if (t_s <= 0)
        return 0;
    double a = s->rate_from;
    if (s->ramp_s <= 0)
        return a * t_s;
    double c = (s->rate_to - a) / (2 * s->ramp_s);
    double t = t_s < s->ramp_s ? t_s : s->ramp_s;
    return a * t + c * t * t;
}

/* Does global index i fall before t0 + span_ns (as sched_next decides it)? */
static bool constant_planned(const struct sched *s, uint64_t i, uint64_t span_ns)
{
    double t_s = sched_time_of(s, (double)i);
    if (!isfinite(t_s) || t_s * 1e9 >= (double)UINT64_MAX)
        return false;
    return (uint64_t)llround(t_s * 1e9) < span_ns;
}

uint64_t sched_constant_count(const struct sched *s, uint64_t span_ns)
{
    double guess = ceil(sched_expected_count(s, (double)span_ns / 1e9));
    uint64_t n = guess > 9e18 ? (uint64_t)9e18 : (uint64_t)guess;
    if (n > s->limit)
        n = s->limit;
    /* n is within a step or two of the answer; indices are planned in order, so walk */
    while (n > 0 && !constant_planned(s, n - 1, span_ns))
        n--;
    while (n < s->limit && constant_planned(s, n, span_ns))
        n++;
    return n;
}
