/* Planned-time streams. Poisson streams are generated in global order by every thread,
 * each keeping its own indices: T draws per planned request, but the global sequence is the
 * same for any T (a superposition of T independent streams would be Poisson too, but not the
 * same requests at the same times, and a seed should reproduce a run). A Poisson stream of
 * a varying rate is the unit-rate stream mapped through Λ⁻¹ (the time-change theorem), so
 * stages and ramps keep the one seeded sequence. */
#include "plan/schedule.h"

#include <math.h>
#include <stdbool.h>

/* Λ over the first t seconds of a piece (t <= its length). */
static double piece_count(const struct sched_piece *p, double t)
{
    if (t <= 0)
        return 0;
    if (p->from == p->to)
        return p->from * t;
    double c = (p->to - p->from) / (2 * p->dur_s);
    return p->from * t + c * t * t;
}

static void sched_start(struct sched *s, bool poisson, uint64_t t0_ns, uint64_t end_ns, uint64_t limit, uint64_t stride,
                        uint64_t k, uint64_t seed)
{
    s->poisson = poisson;
    s->cur = 0;
    s->t0_ns = t0_ns;
    s->end_ns = end_ns;
    s->limit = limit;
    s->stride = stride ? stride : 1;
    s->next_index = k;
    s->u = 0;
    s->generated = 0;
    rng_seed(&s->rng, seed);
}

void sched_init_segs(struct sched *s, bool poisson, const struct sched_seg *segs, size_t n, double scale,
                     uint64_t t0_ns, uint64_t end_ns, uint64_t limit, uint64_t stride, uint64_t k, uint64_t seed)
{
    if (n > SCHED_MAX_SEGS)
        n = SCHED_MAX_SEGS;
    s->npieces = n;
    double start = 0, before = 0;
    for (size_t i = 0; i < n; i++) {
        struct sched_piece *p = &s->piece[i];
        p->from = segs[i].from * scale;
        p->to = segs[i].to * scale;
        p->dur_s = segs[i].dur_s;
        p->start_s = start;
        p->before = before;
        p->count = isinf(p->dur_s) ? (p->from > 0 ? INFINITY : 0) : piece_count(p, p->dur_s);
        start += p->dur_s;
        before += p->count;
    }
    sched_start(s, poisson, t0_ns, end_ns, limit, stride, k, seed);
}

void sched_init(struct sched *s, bool poisson, double rate_from, double rate_to, double ramp_s, uint64_t t0_ns,
                uint64_t end_ns, uint64_t limit, uint64_t stride, uint64_t k, uint64_t seed)
{
    struct sched_seg seg = {rate_from, rate_to, rate_from == rate_to ? INFINITY : ramp_s};
    sched_init_segs(s, poisson, &seg, 1, 1.0, t0_ns, end_ns, limit, stride, k, seed);
}

/* Seconds into piece p at which its own count reaches u (0 <= u <= p->count). */
static double piece_time_of(const struct sched_piece *p, double u)
{
    if (u <= 0)
        return 0;
    double a = p->from;
    if (a == p->to)
        return u / a;
    /* Λ(t) = a t + c t², c = (b - a) / (2 D); t = 2u / (a + sqrt(a² + 4 c u)) avoids the
     * cancellation of the textbook root when c is small; a ramp down to 0 ends where the
     * discriminant reaches 0 (rounding may take it a hair below) */
    double c = (p->to - a) / (2 * p->dur_s);
    double disc = a * a + 4 * c * u;
    double t = 2 * u / (a + sqrt(disc > 0 ? disc : 0));
    return t < p->dur_s ? t : p->dur_s;
}

/* The piece that holds unit time u, searched from piece `from`: a piece of count N holds
 * [before, before + N), so the request at a boundary starts the next piece with a rate (a stage
 * at rate 0 plans nothing, and Λ's total is past the end); the last piece of a ramp without end
 * (sched_init) also holds its total. npieces when Λ ends before u. */
static size_t piece_of(const struct sched *s, double u, size_t from)
{
    size_t i = from;
    while (i < s->npieces && (s->piece[i].count <= 0 || s->piece[i].before + s->piece[i].count <= u))
        i++;
    return i;
}

static double time_in(const struct sched *s, size_t i, double u)
{
    if (i >= s->npieces)
        return INFINITY;
    const struct sched_piece *p = &s->piece[i];
    return p->start_s + piece_time_of(p, u - p->before);
}

double sched_time_of(const struct sched *s, double u)
{
    if (u < 0)
        u = 0;
    return time_in(s, piece_of(s, u, 0), u);
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
    s->cur = piece_of(s, u, s->cur);
    double t_s = time_in(s, s->cur, u);
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
    double n = 0;
    for (size_t i = 0; i < s->npieces; i++) {
        const struct sched_piece *p = &s->piece[i];
        if (t_s < p->start_s + p->dur_s)
            return p->before + piece_count(p, t_s - p->start_s);
        n = p->before + p->count;
    }
    return n;
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
