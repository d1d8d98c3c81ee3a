/* Shards of one plan: the shares (load/shard.h explains the split), the plan's fingerprint,
 * the shared start instant mapped onto the monotonic clock, and the kernel's clock status. */
#include "load/shard.h"

#include "core/clock.h"
#include "core/err.h"
#include "load/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>

__extension__ typedef unsigned __int128 shard_u128;

uint64_t run_shard_share(uint64_t total, uint32_t index, uint32_t count)
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

uint64_t run_shard_share_by(uint64_t total, uint64_t connections, uint32_t index, uint32_t count)
{
    if (count == 0)
        count = 1;
    if (connections == 0)
        return index == 0 ? total : 0;
    shard_u128 lo = (shard_u128)total * shards_before(connections, index, count) / connections;
    shard_u128 hi = (shard_u128)total * shards_before(connections, index + 1, count) / connections;
    return (uint64_t)(hi - lo);
}

uint64_t run_shard_stride(const struct run_config *cfg, uint32_t threads)
{
    return (uint64_t)run_shard_count(cfg) * (threads ? threads : 1);
}

uint64_t run_shard_offset(const struct run_config *cfg, uint32_t threads, uint32_t k)
{
    (void)threads;
    return run_shard_index(cfg) + (uint64_t)run_shard_count(cfg) * k;
}

int run_shard_validate(const struct run_config *cfg, char *err, size_t errlen)
{
    if (cfg->shard_count > RUN_MAX_SHARDS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--shard I/N: N must be between 1 and %d", RUN_MAX_SHARDS);
    if (cfg->shard_count && cfg->shard_index >= cfg->shard_count)
        return knee_fail(err, errlen, KNEE_EINVAL, "--shard %u/%u: the index counts from 0 and must be below %u",
                         cfg->shard_index, cfg->shard_count, cfg->shard_count);
    if (!cfg->shard_count && cfg->shard_index)
        return knee_fail(err, errlen, KNEE_EINVAL, "--shard: an index without a shard count");
    return 0;
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

uint64_t run_shard_plan_id(const struct run_config *cfg)
{
    struct fnv f = {0xcbf29ce484222325ULL};
    fnv_str(&f, "knee-plan/1");
    fnv_u64(&f, cfg->open_loop);
    fnv_dbl(&f, cfg->rate);
    fnv_u64(&f, cfg->ramp);
    fnv_dbl(&f, cfg->ramp ? cfg->ramp_from : 0);
    fnv_dbl(&f, cfg->ramp ? cfg->ramp_to : 0);
    fnv_u64(&f, cfg->open_loop ? (uint64_t)cfg->arrivals : 0);
    fnv_u64(&f, cfg->open_loop && cfg->arrivals == RUN_ARRIVALS_POISSON ? cfg->seed : 0);
    fnv_u64(&f, cfg->open_loop ? 0 : cfg->connections); /* open loop: a per-process pool cap, not the plan */
    fnv_u64(&f, cfg->think_ns);
    fnv_u64(&f, cfg->duration_ns);
    fnv_u64(&f, cfg->requests);
    fnv_u64(&f, cfg->timeout_ns);
    fnv_u64(&f, cfg->drain_ns);
    fnv_u64(&f, cfg->warmup_ns);
    fnv_u64(&f, cfg->when_busy);
    fnv_u64(&f, cfg->keepalive);
    fnv_str(&f, cfg->expect_body);
    fnv_u64(&f, cfg->nrejects);
    for (size_t i = 0; i < cfg->nrejects; i++) {
        fnv_u64(&f, (uint64_t)cfg->rejects[i].status);
        fnv_str(&f, cfg->rejects[i].body);
    }
    fnv_u64(&f, cfg->ntargets);
    for (size_t i = 0; i < cfg->ntargets; i++) {
        const struct run_target_config *t = &cfg->targets[i];
        fnv_str(&f, t->name);
        fnv_str(&f, t->url);
        fnv_str(&f, t->method);
        fnv_u64(&f, t->nheaders);
        for (size_t h = 0; h < t->nheaders; h++)
            fnv_str(&f, t->headers[h]);
        fnv_mem(&f, t->body, t->body_len);
        fnv_dbl(&f, t->rate);
        fnv_u64(&f, t->connections);
        fnv_dbl(&f, t->weight > 0 ? t->weight : 1);
    }
    fnv_u64(&f, run_shard_count(cfg));
    fnv_u64(&f, cfg->start_at_unix_ns);
    return f.h;
}

void run_shard_read_clock(struct run_shard *s)
{
    struct timex tx;
    memset(&tx, 0, sizeof tx); /* modes 0: read only, allowed without privileges */
    int state = adjtimex(&tx);
    if (state < 0) {
        s->clock_synced = false;
        s->clock_maxerror_ms = s->clock_esterror_ms = NAN;
        return;
    }
    s->clock_synced = state != TIME_ERROR && !(tx.status & STA_UNSYNC);
    s->clock_maxerror_ms = (double)tx.maxerror / 1e3; /* microseconds */
    s->clock_esterror_ms = (double)tx.esterror / 1e3;
}

bool run_shard_stream_planned(const struct run_shard_stream *st, bool poisson, uint64_t seed, size_t target,
                              uint64_t duration_ns, uint64_t max_draws, uint64_t *out)
{
    struct sched s;
    uint64_t end = duration_ns ? duration_ns : UINT64_MAX;
    sched_init(&s, poisson, st->rate_from, st->rate_to, (double)duration_ns / 1e9, 0, end, st->limit, 1, 0,
               run_stream_seed(seed, target));
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

const struct reqlog_shard *run_shard_reqlog(const struct run_config *cfg, struct reqlog_shard *out)
{
    if (!cfg->shard_count && !cfg->start_at_unix_ns)
        return NULL;
    out->index = run_shard_index(cfg);
    out->count = run_shard_count(cfg);
    out->start_at_unix_ns = cfg->start_at_unix_ns;
    out->plan_id = run_shard_plan_id(cfg);
    return out;
}

/* ---- engine hooks ---- */

int shard_apply(struct engine *e, char *err, size_t errlen)
{
    const struct run_config *cfg = e->cfg;
    if (!cfg->shard_count || cfg->open_loop)
        return 0; /* the open loop's split is the schedule's interleave */
    uint32_t I = cfg->shard_index, N = cfg->shard_count;
    uint64_t mine = 0, all = 0;
    for (size_t i = 0; i < e->nt; i++) {
        struct engine_target *et = &e->targets[i];
        uint32_t c = et->clients;
        all += c;
        et->clients = (uint32_t)run_shard_share(c, I, N);
        if (et->limit != UINT64_MAX)
            et->limit = run_shard_share_by(et->limit, c, I, N);
        mine += et->clients;
    }
    if (!mine && cfg->requests && cfg->requests < N) /* the connections were capped at one per request */
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--shard %u/%u: --requests %llu leaves this shard no request, and so no connection (give "
                         "--requests >= %u)",
                         I, N, (unsigned long long)cfg->requests, N);
    if (!mine)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--shard %u/%u: %llu closed-loop connections leave this shard none (give --connections >= %u)",
                         I, N, (unsigned long long)all, N);
    return 0;
}

/* A (monotonic, wall) pair read as close together as three tries allow. */
static void clock_pair(uint64_t *mono_ns, uint64_t *wall_ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t a = clock_now_ns(), w = clock_wall_ns(), b = clock_now_ns();
        if (b - a < best) {
            best = b - a;
            *mono_ns = a + (b - a) / 2;
            *wall_ns = w;
        }
    }
}

void shard_start(struct engine *e, struct run_result *res)
{
    const struct run_config *cfg = e->cfg;
    struct run_shard *s = &res->shard;
    if (!cfg->shard_count && !cfg->start_at_unix_ns)
        return;
    uint64_t mono = 0, wall = 0;
    clock_pair(&mono, &wall);
    s->index = run_shard_index(cfg);
    s->count = run_shard_count(cfg);
    snprintf(s->source, sizeof s->source, "%s", cfg->shard_source ? cfg->shard_source : "--shard");
    s->plan_id = run_shard_plan_id(cfg);
    s->start_at_unix_ns = cfg->start_at_unix_ns;
    s->lag_limit_ns = e->lag_limit_ns;
    s->nstreams = cfg->open_loop ? e->nt : 0;
    for (size_t i = 0; i < s->nstreams; i++)
        s->streams[i] = (struct run_shard_stream){e->targets[i].rate_from, e->targets[i].rate_to, e->targets[i].limit};
    run_shard_read_clock(s);
    if (cfg->start_at_unix_ns) {
        /* t0 = the start instant on the monotonic clock; in the past when this shard is late */
        int64_t until = (int64_t)(cfg->start_at_unix_ns - wall);
        e->t0_ns = until >= 0 ? mono + (uint64_t)until : mono - (uint64_t)(-until);
        s->start_skew_ns = -until;
        s->t0_unix_ns = cfg->start_at_unix_ns;
    } else {
        s->start_skew_ns = 0;
        s->t0_unix_ns = wall + (e->t0_ns - mono);
    }
}

void shard_finish(struct engine *e, struct run_result *res)
{
    const struct run_shard *s = &res->shard;
    if (!e->cfg->start_at_unix_ns)
        return;
    if (s->start_skew_ns > (int64_t)e->lag_limit_ns)
        result_warn(res,
                    "this shard was ready %.3f ms after the shared start instant: the requests planned before then "
                    "were sent late, and the lag counts them",
                    (double)s->start_skew_ns / 1e6);
    if (!s->clock_synced)
        result_note(res, "the kernel does not report this clock as synchronised (NTP/PTP): the shared start instant "
                         "is only as good as the clocks agree (docs/DISTRIBUTED.md)");
}

void shard_plan_target(const struct run_config *cfg, struct run_plan_target *pt)
{
    if (!cfg->shard_count || !cfg->open_loop)
        return;
    uint32_t I = cfg->shard_index, N = cfg->shard_count;
    pt->rate_from /= N;
    pt->rate_to /= N;
    /* exact counts are the number of global indices below them that are this shard's; an
     * expectation (Poisson arrivals by duration, any Poisson warm-up) is divided */
    bool poisson = cfg->arrivals == RUN_ARRIVALS_POISSON;
    if (pt->planned_exact && isfinite(pt->planned))
        pt->planned = (double)run_shard_share((uint64_t)pt->planned, I, N);
    else
        pt->planned /= N;
    if (!poisson && isfinite(pt->warmup_planned))
        pt->warmup_planned = (double)run_shard_share((uint64_t)pt->warmup_planned, I, N);
    else
        pt->warmup_planned /= N;
}
