/* The engine's side of a sharded run: the run's fingerprint, the log's shard block, the shared
 * start instant mapped onto the monotonic clock, and the kernel's clock status. */
#include "load/shard_hooks.h"

#include "core/clock.h"
#include "load/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>

uint64_t run_shard_plan_id(const struct run_config *cfg)
{
    struct plan_terms terms = {
        .timeout_ns = cfg->timeout_ns,
        .drain_ns = cfg->drain_ns,
        .when_busy = cfg->when_busy,
        .keepalive = cfg->keepalive,
        .expect_body = cfg->expect_body,
        .rejects = cfg->rejects,
        .nrejects = cfg->nrejects,
    };
    return plan_id(&cfg->plan, &terms);
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

const struct reqlog_shard *run_shard_reqlog(const struct run_config *cfg, struct reqlog_shard *out)
{
    const struct plan *p = &cfg->plan;
    if (!p->shard.count && !p->shard.start_at_unix_ns)
        return NULL;
    out->index = plan_shard_index(p);
    out->count = plan_shard_count(p);
    out->start_at_unix_ns = p->shard.start_at_unix_ns;
    out->plan_id = run_shard_plan_id(cfg);
    return out;
}

/* ---- engine hooks ---- */

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

void shard_start(struct engine *e, struct run_record *res)
{
    const struct plan *p = &e->cfg->plan;
    struct run_shard *s = &res->shard;
    if (!p->shard.count && !p->shard.start_at_unix_ns)
        return;
    uint64_t mono = 0, wall = 0;
    clock_pair(&mono, &wall);
    s->index = plan_shard_index(p);
    s->count = plan_shard_count(p);
    snprintf(s->source, sizeof s->source, "%s", p->shard.source ? p->shard.source : "--shard");
    s->plan_id = run_shard_plan_id(e->cfg);
    s->start_at_unix_ns = p->shard.start_at_unix_ns;
    s->lag_limit_ns = e->lag_limit_ns;
    s->nstreams = p->open_loop ? e->nt : 0;
    for (size_t i = 0; i < s->nstreams; i++) {
        const struct plan_share *sh = &e->shares[i];
        s->streams[i] = (struct run_shard_stream){
            .rate_from = sh->rate_from, .rate_to = sh->rate_to, .stage_share = sh->stage_share, .limit = sh->limit};
    }
    run_shard_read_clock(s);
    if (p->shard.start_at_unix_ns) {
        /* t0 = the start instant on the monotonic clock; in the past when this shard is late */
        int64_t until = (int64_t)(p->shard.start_at_unix_ns - wall);
        e->t0_ns = until >= 0 ? mono + (uint64_t)until : mono - (uint64_t)(-until);
        s->start_skew_ns = -until;
        s->t0_unix_ns = p->shard.start_at_unix_ns;
    } else {
        s->start_skew_ns = 0;
        s->t0_unix_ns = wall + (e->t0_ns - mono);
    }
}

void shard_finish(struct engine *e, struct run_record *res)
{
    const struct run_shard *s = &res->shard;
    if (!e->cfg->plan.shard.start_at_unix_ns)
        return;
    if (s->start_skew_ns > (int64_t)e->lag_limit_ns)
        warn_add(&res->warnings, true,
                 "this shard was ready %.3f ms after the shared start instant: the requests planned before then "
                 "were sent late, and the lag counts them",
                 (double)s->start_skew_ns / 1e6);
    if (!s->clock_synced)
        warn_add(&res->warnings, false,
                 "the kernel does not report this clock as synchronised (NTP/PTP): the shared start instant "
                 "is only as good as the clocks agree (docs/DISTRIBUTED.md)");
}
