/* What only a merge of shards judges, on the merged record: whether the shards planned the whole
 * plan, which shards failed, were generator-limited or started late, how the rates were counted
 * without a shared start instant; knee run's own sentences (FAILED, ERRORS, the notes on the warm-up
 * and the samples) come from the record (record/finish.c), in the merge's order. */
#include "merge/internal.h"

#include "core/units.h"
#include "plan/shard.h"

#include <inttypes.h>
#include <string.h>

#define MAX_PLAN_DRAWS 200000000ULL /* a Poisson plan's draws counted to check it, at most */

/* The whole plan's count against the shards' (open loop: every stream, each shard's exact share of
 * the global indices; closed loop with --requests: the total). */
void merge_plan_check(struct merge_ctx *c)
{
    struct merge_summary *m = c->m;
    const struct run_record *res = &m->res;
    const struct record_config *cfg = &res->config;
    uint64_t expected = 0;
    if (!cfg->open_loop) {
        if (!cfg->requests)
            return;
        expected = cfg->requests;
    } else if (res->shard.nstreams != res->ntargets) {
        return;
    }
    for (size_t i = 0; cfg->open_loop && i < res->ntargets; i++) {
        const struct run_shard_stream *st = &res->shard.streams[i];
        double top = st->rate_from > st->rate_to ? st->rate_from : st->rate_to;
        if (!(st->rate_from >= 0 && st->rate_to >= 0 && top > 0 && top < 1e10) ||
            (st->limit == UINT64_MAX && top * (double)cfg->duration_ns / 1e9 > 1e12))
            return; /* not a plan a generator runs: no check (and no endless count) */
        uint64_t n;
        if (!plan_stream_planned(st, cfg->stages, cfg->nstages, cfg->arrivals == RUN_ARRIVALS_POISSON, cfg->seed, i,
                                 cfg->duration_ns, MAX_PLAN_DRAWS, &n))
            return;
        expected += n;
        /* each shard: exactly its share of this stream's global indices */
        for (uint32_t k = 0; k < c->count; k++) {
            uint64_t got = c->planned[(size_t)k * res->ntargets + i], want = plan_shard_share(n, k, c->count);
            if (got != want)
                merge_summary_fail_shardf(
                    m, k, "planned %" PRIu64 " requests of target %s, its share of the plan is %" PRIu64, got,
                    res->targets[i].name, want);
        }
    }
    m->plan_checked = true;
    m->plan_expected = expected;
    m->plan_merged = res->all.counts.planned + res->all.warmup_counts.planned;
    m->plan_ok = expected == m->plan_merged;
}

void merge_hostnames(struct run_record *res)
{
    struct run_env *env = &res->env;
    const struct run_shard *sh = &res->shard;
    size_t off = 0, shown = 0, distinct = 0;
    env->hostname[0] = '\0';
    for (size_t k = 0; k < sh->nparts; k++) {
        const char *h = sh->parts[k].host;
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++)
            seen = strcmp(sh->parts[j].host, h) == 0;
        if (seen)
            continue;
        distinct++;
        if (off + strlen(h) + 24 < sizeof env->hostname) {
            off += (size_t)snprintf(env->hostname + off, sizeof env->hostname - off, "%s%s", shown ? "," : "", h);
            shown++;
        }
    }
    if (distinct > shown)
        snprintf(env->hostname + off, sizeof env->hostname - off, ",+%zu more", distinct - shown);
}

/* "1, 3, 7" of the shards for which pick() holds (a few, then "..."). */
static size_t shard_list(const struct run_shard *sh, bool (*pick)(const struct run_shard_part *, int64_t), int64_t arg,
                         char *buf, size_t len)
{
    size_t off = 0, n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sh->nparts; i++) {
        if (!pick(&sh->parts[i], arg))
            continue;
        if (n < 10 && off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%u", n ? ", " : "", sh->parts[i].index);
        else if (n == 10 && off < len)
            off += (size_t)snprintf(buf + off, len - off, " ...");
        n++;
    }
    return n;
}

static bool pick_limited(const struct run_shard_part *p, int64_t arg)
{
    (void)arg;
    return p->generator_limited;
}

static bool pick_late(const struct run_shard_part *p, int64_t lag_limit_ns)
{
    return p->start_skew_ns > lag_limit_ns;
}

/* Most important first: failed shards, broken identities, knee run's FAILED or ERRORS, logs that
 * disagree, a plan not whole, generator-limited shards, late shards. */
void merge_verdicts(struct merge_ctx *c, bool identities_ok)
{
    struct merge_summary *m = c->m;
    struct run_record *res = &m->res;
    const struct run_shard *sh = &res->shard;
    char list[128], a[32], b[32];
    size_t nfailed = 0;
    for (size_t i = 0; i < sh->nparts; i++)
        if (sh->parts[i].failed && nfailed++ < 10)
            warn_add(&res->warnings, true,
                     "INCOMPLETE: shard %u of %u (%s) failed: %s; the merged numbers are the other shards' parts and "
                     "what this shard did, not the whole plan",
                     sh->parts[i].index, sh->count, sh->parts[i].host, sh->parts[i].failure);
    if (nfailed > 10)
        warn_add(&res->warnings, true, "INCOMPLETE: %zu more shards failed (see the shard list)", nfailed - 10);
    if (!identities_ok)
        warn_add(&res->warnings, true,
                 "BUG: the accounting identities do not hold for the merged counts (planned = sent + dropped; "
                 "sent = outcomes; transport = its causes; retries <= sent)");
    record_warn_failures(res); /* knee run's sentences, on the merged counts */
    if (m->logs_disagree && !nfailed)
        warn_add(&res->warnings, true,
                 "the shards' per-request logs and their JSON disagree on the events (the rates are the logs'): are "
                 "they the outputs of one run?");
    if (m->plan_checked && !m->plan_ok)
        warn_add(&res->warnings, true, "the shards planned %s requests, the whole plan has %s%s",
                 units_fmt_count(m->plan_merged, a, sizeof a), units_fmt_count(m->plan_expected, b, sizeof b),
                 nfailed ? " (a shard failed)" : "");
    size_t nlim = shard_list(sh, pick_limited, 0, list, sizeof list);
    if (nlim)
        warn_add(&res->warnings, true,
                 "GENERATOR-LIMITED: shard%s %s of %u could not keep %s plan (%s warnings follow): the merged lag and "
                 "latency include that",
                 nlim == 1 ? "" : "s", list, sh->count, nlim == 1 ? "its" : "their", nlim == 1 ? "its" : "their");
    size_t nlate = sh->start_at_unix_ns ? shard_list(sh, pick_late, (int64_t)sh->lag_limit_ns, list, sizeof list) : 0;
    if (nlate)
        warn_add(&res->warnings, true,
                 "shard%s %s started up to %.3f ms after the shared start instant: %s requests planned before then "
                 "were sent late, and the lag counts them",
                 nlate == 1 ? "" : "s", list, (double)sh->skew_max_ns / 1e6, nlate == 1 ? "its" : "their");
}

void merge_notes(struct merge_ctx *c)
{
    struct merge_summary *m = c->m;
    struct run_record *res = &m->res;
    if (!m->same_t0 && m->rates_from_logs)
        warn_add(&res->warnings, false,
                 "no shared start instant (--start-at): each shard measured its own window; the rates count the "
                 "shards' per-request logs over the common window %.3f .. %.3f s (since the earliest start), and the "
                 "timeline is aligned to whole seconds of their starts",
                 res->window_start_s, res->window_end_s);
    else if (!m->same_t0 && !(m->window_end_ns > m->window_start_ns))
        warn_add(&res->warnings, false,
                 "no shared start instant (--start-at), and the shards' windows do not overlap: the rates are the sum "
                 "of the shards' rates, each over its own window, and the timeline is aligned to whole seconds of "
                 "their starts");
    else if (!m->same_t0)
        warn_add(&res->warnings, false,
                 "no shared start instant (--start-at): each shard measured its own window; the rates are the sum of "
                 "the shards' rates (each over its own window; give their binary logs to count the common window), "
                 "and the timeline is aligned to whole seconds of their starts");
    if (!res->shard.clock_synced && res->shard.start_at_unix_ns)
        warn_add(&res->warnings, false,
                 "not every shard's kernel reports a synchronised clock (NTP/PTP; largest error bound %.3f ms): the "
                 "shared start instant is only as good as the clocks agree",
                 res->shard.clock_maxerror_ms);
    record_note_warmup(res); /* knee run's notes, in the merge's order */
    record_note_samples(res);
    for (size_t i = 0; i < c->carried.n; i++)
        warn_add_text(&res->warnings, false, c->carried.items[i]);
    if (c->more)
        warn_add(&res->warnings, false, "%zu more warnings of the shards are in their JSON", c->more);
}
