/* The client count of closed-loop stages over time and the ranks each target, shard and thread
 * runs (plan/clients.h). Every answer comes from one function, stage_count: the instant a
 * client toggles is searched with it to the ns, so a thread's timers and any count reported
 * agree at every instant. */
#include "plan/clients.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

bool plan_stages_clients(const struct plan *p)
{
    return p->nstages > 0 && p->stages && p->stages[0].clients;
}

uint32_t plan_clients_peak(const struct run_stage *st, size_t n)
{
    double peak = 0;
    for (size_t j = 0; j < n; j++)
        peak = fmax(peak, fmax(st[j].from, st[j].to));
    return peak >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)peak;
}

/* The count tau_ns into stage st (tau_ns < its duration): the floor of its line. */
static uint32_t stage_count(const struct run_stage *st, uint64_t tau_ns)
{
    double line = st->from;
    if (st->to != st->from)
        line += (st->to - st->from) * ((double)tau_ns / (double)st->duration_ns);
    double hi = fmax(st->from, st->to);
    if (line > hi) /* rounding: never past the stage's ends */
        line = hi;
    if (!(line > 0))
        return 0;
    return line >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)floor(line);
}

uint32_t plan_clients_at(const struct run_stage *st, size_t n, uint64_t t_ns)
{
    uint64_t start = 0;
    for (size_t j = 0; j < n; j++) {
        if (t_ns - start < st[j].duration_ns)
            return stage_count(&st[j], t_ns - start);
        start += st[j].duration_ns;
    }
    return 0;
}

/* The first tau in [lo, hi] where (stage_count >= k) != was, knowing it differs at hi and the
 * count is monotone over the stage (its line is). */
static uint64_t first_change(const struct run_stage *st, uint32_t k, bool was, uint64_t lo, uint64_t hi)
{
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((stage_count(st, mid) >= k) != was)
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi;
}

bool plan_client_active(const struct run_stage *st, size_t n, uint32_t k, uint64_t t_ns, uint64_t *next_ns)
{
    uint64_t start = 0;
    size_t j = 0;
    while (j < n && t_ns - start >= st[j].duration_ns) {
        start += st[j].duration_ns;
        j++;
    }
    *next_ns = UINT64_MAX;
    if (j >= n)
        return false; /* past the stages: no client, ever again */
    bool was = stage_count(&st[j], t_ns - start) >= k;
    uint64_t lo = t_ns - start + 1; /* known: `was` holds up to lo - 1 of stage j */
    for (;;) {
        uint64_t d = st[j].duration_ns;
        if (lo < d && (stage_count(&st[j], d - 1) >= k) != was) {
            *next_ns = start + first_change(&st[j], k, was, lo, d - 1);
            return was;
        }
        start += d;
        if (++j >= n)
            break;
        if ((stage_count(&st[j], 0) >= k) != was) {
            *next_ns = start;
            return was;
        }
        lo = 1;
    }
    if (was) /* the stages end: every client stops */
        *next_ns = start;
    return was;
}

/* The target rank k goes to: the one whose ranks so far fall most below its weighted share of
 * k (ties: the first). */
static size_t pick(const double *w, size_t n, double total, uint32_t k, const uint32_t *got)
{
    size_t best = 0;
    double best_gap = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double gap = (double)k * w[i] / total - (double)got[i];
        if (gap > best_gap) {
            best_gap = gap;
            best = i;
        }
    }
    return best;
}

static double weights_total(const double *w, size_t n)
{
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += w[i];
    return total;
}

void plan_clients_split(const double *weights, size_t ntargets, uint32_t peak, uint32_t *out)
{
    memset(out, 0, ntargets * sizeof *out);
    double total = weights_total(weights, ntargets);
    for (uint32_t k = 1; ntargets && k <= peak; k++)
        out[pick(weights, ntargets, total, k, out)]++;
}

void plan_clients_ranks(const double *weights, size_t ntargets, uint32_t peak, uint32_t index, uint32_t count,
                        uint32_t *const *out, const uint32_t *n)
{
    uint32_t N = count ? count : 1;
    uint32_t *got = xcalloc(ntargets ? ntargets : 1, sizeof *got);
    uint32_t *have = xcalloc(ntargets ? ntargets : 1, sizeof *have);
    double total = weights_total(weights, ntargets);
    for (uint32_t k = 1; ntargets && k <= peak; k++) {
        size_t i = pick(weights, ntargets, total, k, got);
        if (got[i] % N == index && have[i] < n[i])
            out[i][have[i]++] = k;
        got[i]++;
    }
    for (size_t i = 0; i < ntargets; i++)
        for (; have[i] < n[i]; have[i]++) /* not reached for plan_shares' counts */
            out[i][have[i]] = UINT32_MAX;
    free(got);
    free(have);
}

void plan_clients_weights(const struct plan *p, double *out)
{
    for (size_t i = 0; i < p->ntargets; i++)
        out[i] = p->targets[i].weight > 0 ? p->targets[i].weight : 1;
}
