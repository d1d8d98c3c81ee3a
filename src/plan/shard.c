/* Shards of one plan: the shares (plan/shard.h explains the split), the interleave of the
 * schedule's indices, the shard fields' check and the plan's fingerprint. */
#include "plan/shard.h"

#include "core/err.h"
#include "plan/schedule.h"

#include <string.h>

__extension__ typedef unsigned __int128 shard_u128;

uint64_t plan_shard_share(uint64_t total, uint32_t index, uint32_t count)
{
    if (count == 0)
        count = 1;
    return total / count + (index < total % count ? 1 : 0);
}

/* Connections held by the shards before `index`. */
static uint64_t shards_before(uint64_t connections, uint32_t index, uint32_t count)
{
    uint64_t rem = connections % count;
    return (uint64_t)index * (connections / count) + (index < rem ? index : rem);
}

uint64_t plan_shard_share_by(uint64_t total, uint64_t connections, uint32_t index, uint32_t count)
{
    if (count == 0)
        count = 1;
    if (connections == 0)
        return index == 0 ? total : 0;
    shard_u128 lo = (shard_u128)total * shards_before(connections, index, count) / connections;
    shard_u128 hi = (shard_u128)total * shards_before(connections, index + 1, count) / connections;
    return (uint64_t)(hi - lo);
}

uint64_t plan_shard_stride(const struct plan *p, uint32_t threads)
{
    return (uint64_t)plan_shard_count(p) * (threads ? threads : 1);
}

uint64_t plan_shard_offset(const struct plan *p, uint32_t threads, uint32_t k)
{
    (void)threads;
    return plan_shard_index(p) + (uint64_t)plan_shard_count(p) * k;
}

int plan_shard_validate(const struct plan *p, char *err, size_t errlen)
{
    const struct plan_shard *s = &p->shard;
    if (s->count > RUN_MAX_SHARDS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--shard I/N: N must be between 1 and %d", RUN_MAX_SHARDS);
    if (s->count && s->index >= s->count)
        return knee_fail(err, errlen, KNEE_EINVAL, "--shard %u/%u: the index counts from 0 and must be below %u",
                         s->index, s->count, s->count);
    if (!s->count && s->index)
        return knee_fail(err, errlen, KNEE_EINVAL, "--shard: an index without a shard count");
    return 0;
}

bool plan_stream_planned(const struct run_shard_stream *st, const struct run_stage *stages, size_t nstages,
                         bool poisson, uint64_t seed, size_t target, uint64_t duration_ns, uint64_t max_draws,
                         uint64_t *out)
{
    struct sched s;
    uint64_t end = duration_ns ? duration_ns : UINT64_MAX;
    struct plan_stream ps = {.rate_from = st->rate_from,
                             .rate_to = st->rate_to,
                             .stage_share = st->stage_share,
                             .limit = st->limit,
                             .stages = stages,
                             .nstages = nstages,
                             .duration_ns = duration_ns};
    plan_stream_init(&s, poisson, &ps, 0, end, 1, 0, plan_stream_seed(seed, target));
    if (!poisson) {
        *out = sched_constant_count(&s, end);
        return true;
    }
    uint64_t n = 0, t;
    while (sched_next(&s, &t))
        if (++n > max_draws)
            return false;
    *out = n;
    return true;
}

/* ---- the plan's fingerprint (FNV-1a 64) ---- */

struct fnv {
    uint64_t h;
};

static void fnv_bytes(struct fnv *f, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        f->h ^= b[i];
        f->h *= 0x100000001b3ULL;
    }
}

/* Numbers in a fixed byte order; strings with their length (so "ab"+"c" != "a"+"bc"). */
static void fnv_u64(struct fnv *f, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    fnv_bytes(f, b, 8);
}

static void fnv_dbl(struct fnv *f, double v)
{
    uint64_t bits;
    if (v == 0)
        v = 0; /* -0 and 0 plan the same */
    memcpy(&bits, &v, sizeof bits);
    fnv_u64(f, bits);
}

static void fnv_mem(struct fnv *f, const char *s, size_t n)
{
    fnv_u64(f, s ? n : UINT64_MAX);
    if (s)
        fnv_bytes(f, s, n);
}

static void fnv_str(struct fnv *f, const char *s)
{
    fnv_mem(f, s, s ? strlen(s) : 0);
}

static void fnv_target(struct fnv *f, const struct plan_target *t)
{
    fnv_str(f, t->name);
    fnv_str(f, t->url);
    fnv_str(f, t->method);
    fnv_u64(f, t->nheaders);
    for (size_t h = 0; h < t->nheaders; h++)
        fnv_str(f, t->headers[h]);
    fnv_mem(f, t->body, t->body_len);
    fnv_dbl(f, t->rate);
    fnv_u64(f, t->connections);
    fnv_dbl(f, t->weight > 0 ? t->weight : 1);
}

/* The encoding "knee-plan/1": the order and widths below are what shards of every knee since
 * --shard hash, so a field added to the plan goes at the end, under a new version string only
 * when it changes plans that already exist. */
uint64_t plan_id(const struct plan *p, const struct plan_terms *terms)
{
    struct fnv f = {0xcbf29ce484222325ULL};
    fnv_str(&f, "knee-plan/1");
    fnv_u64(&f, p->open_loop);
    fnv_dbl(&f, p->rate);
    fnv_u64(&f, p->ramp);
    fnv_dbl(&f, p->ramp ? p->ramp_from : 0);
    fnv_dbl(&f, p->ramp ? p->ramp_to : 0);
    fnv_u64(&f, p->open_loop ? (uint64_t)p->arrivals : 0);
    fnv_u64(&f, p->open_loop && p->arrivals == RUN_ARRIVALS_POISSON ? p->seed : 0);
    fnv_u64(&f, p->open_loop ? 0 : p->connections); /* open loop: a per-process pool cap, not the plan */
    fnv_u64(&f, p->think_ns);
    fnv_u64(&f, p->duration_ns);
    fnv_u64(&f, p->requests);
    fnv_u64(&f, terms->timeout_ns);
    fnv_u64(&f, terms->drain_ns);
    fnv_u64(&f, p->warmup_ns);
    fnv_u64(&f, terms->when_busy);
    fnv_u64(&f, terms->keepalive);
    fnv_str(&f, terms->expect_body);
    fnv_u64(&f, terms->nrejects);
    for (size_t i = 0; i < terms->nrejects; i++) {
        fnv_u64(&f, (uint64_t)terms->rejects[i].status);
        fnv_str(&f, terms->rejects[i].body);
    }
    fnv_u64(&f, p->ntargets);
    for (size_t i = 0; i < p->ntargets; i++)
        fnv_target(&f, &p->targets[i]);
    fnv_u64(&f, plan_shard_count(p));
    fnv_u64(&f, p->shard.start_at_unix_ns);
    if (p->nstages) { /* at the end, and only with stages: every plan without keeps its id */
        fnv_str(&f, "stages");
        fnv_u64(&f, p->nstages);
        for (size_t j = 0; j < p->nstages; j++) {
            fnv_dbl(&f, p->stages[j].from);
            fnv_dbl(&f, p->stages[j].to);
            fnv_u64(&f, p->stages[j].duration_ns);
        }
        if (p->stages[0].clients) /* closed-loop stages: 4c is not 4/s (rate stages keep their ids) */
            fnv_str(&f, "clients");
    }
    return f.h;
}
