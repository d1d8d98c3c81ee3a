/* What knee run prints about a plan rather than a record: the plan of --dry-run, the progress
 * line during a run, the shard line before it starts, and a shard's hlog comment (the record's
 * own summary is runreport's). Private to src/cli. */
#include "cli/run_print.h"

#include "core/clock.h"
#include "core/err.h"
#include "plan/shard.h"
#include "plan/clients.h"
#include "core/units.h"
#include "load/shard_hooks.h"
#include "runreport/runreport.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

void cli_print_progress(FILE *out, const struct run_progress *p, bool terminal)
{
    char a[32], b[32], c[32];
    char tot[32] = "";
    if (p->total_s > 0)
        snprintf(tot, sizeof tot, "/%.0fs", p->total_s);
    double len = p->length_s > 0 ? p->length_s : 1;
    fprintf(out, "%s[%6.1fs%s] sent %s/s  done %s/s  in flight %s", terminal ? "\r" : "", p->elapsed_s, tot,
            units_fmt_rate((double)p->sent / len, a, sizeof a), units_fmt_rate((double)p->completed / len, b, sizeof b),
            units_fmt_count(p->in_flight, c, sizeof c));
    if (p->queued)
        fprintf(out, " (+%llu queued)", (unsigned long long)p->queued);
    fprintf(out, "  p50 %s p99 %s ms  errors %llu", units_fmt_ms(p->p50_ms, a, sizeof a),
            units_fmt_ms(p->p99_ms, b, sizeof b), (unsigned long long)p->errors);
    if (p->dropped)
        fprintf(out, "  dropped %llu", (unsigned long long)p->dropped);
    fputs(terminal ? "\033[K" : "\n", out);
    fflush(out);
}

/* ------------------------------------------------------------------ the plan (--dry-run) */

/* "1,000", or "about 1,000" for an expectation. */
static const char *planned_count(double n, bool exact, char *buf, size_t len)
{
    char c[32];
    snprintf(buf, len, "%s%s", exact ? "" : "about ", units_fmt_count((uint64_t)llround(n), c, sizeof c));
    return buf;
}

static void dryrun_target(FILE *out, const struct run_config *cfg, const struct run_dryrun_target *t)
{
    char a[32], b[32], n[48];
    runreport_print_target_head(out, t->name, t->url, t->address, t->resolve_ns);
    if (cfg->plan.open_loop && t->rate_from != t->rate_to)
        fprintf(out, ", %s -> %s/s", units_fmt_rate(t->rate_from, a, sizeof a),
                units_fmt_rate(t->rate_to, b, sizeof b));
    else if (cfg->plan.open_loop)
        fprintf(out, ", %s/s%s", units_fmt_rate(t->rate_from, a, sizeof a), cfg->plan.nstages ? " on average" : "");
    else if (plan_stages_clients(&cfg->plan))
        fprintf(out, ", up to %u client%s", t->connections, t->connections == 1 ? "" : "s");
    else if (cfg->streams > 1)
        fprintf(out, ", %u clients", t->connections);
    else
        fprintf(out, ", %u connection%s", t->connections, t->connections == 1 ? "" : "s");
    if (isfinite(t->planned))
        fprintf(out, ", %s planned", planned_count(t->planned, t->planned_exact, n, sizeof n));
    if (t->request_bytes)
        fprintf(out, "; request %s bytes\n", units_fmt_count(t->request_bytes, a, sizeof a));
    else
        fprintf(out, "; requests that vary (below)\n");
}

/* This shard's clients when the whole plan runs c (plan/clients.h: the first c ranks, dealt to the
 * targets, and each target's to the shards). */
static uint32_t shard_clients(const struct plan *p, double c)
{
    double *w = xcalloc(p->ntargets ? p->ntargets : 1, sizeof *w);
    uint32_t *split = xcalloc(p->ntargets ? p->ntargets : 1, sizeof *split);
    plan_clients_weights(p, w);
    plan_clients_split(w, p->ntargets, (uint32_t)c, split);
    uint64_t n = 0;
    for (size_t i = 0; i < p->ntargets; i++)
        n += plan_shard_share(split[i], plan_shard_index(p), plan_shard_count(p));
    free(w);
    free(split);
    return (uint32_t)n;
}

/* Closed-loop stages: one row per stage, its clients (the whole plan's, and this shard's when
 * sharded); nothing is planned ahead in a closed loop. */
static void dryrun_client_stages(FILE *out, const struct plan *p)
{
    bool sharded = plan_shard_count(p) > 1;
    fprintf(out, "  stages (clients; client k runs while the stage's line is >= k)%s:\n",
            sharded ? ", this shard's in brackets" : "");
    for (size_t j = 0; j < p->nstages; j++) {
        const struct run_stage *st = &p->stages[j];
        char r[64], mine[64] = "", d[32];
        if (st->from != st->to)
            snprintf(r, sizeof r, "%.0f -> %.0f clients", st->from, st->to);
        else
            snprintf(r, sizeof r, "%.0f client%s", st->from, st->from == 1 ? "" : "s");
        if (sharded && st->from != st->to)
            snprintf(mine, sizeof mine, "  [%u -> %u]", shard_clients(p, st->from), shard_clients(p, st->to));
        else if (sharded)
            snprintf(mine, sizeof mine, "  [%u]", shard_clients(p, st->from));
        fprintf(out, "    stage %zu  %-22s %8s  from %.3g s%s\n", j + 1, r,
                units_fmt_duration(st->duration_ns, d, sizeof d), (double)plan_stage_start_ns(p, j) / 1e9, mine);
    }
}

/* --stages: one row per stage, its rates (every target's together) and its requests planned, every
 * target's and this shard's (exact for constant arrivals: the schedule's own count). */
static void dryrun_stages(FILE *out, const struct run_config *cfg)
{
    const struct plan *p = &cfg->plan;
    if (plan_stages_clients(p)) {
        dryrun_client_stages(out, p);
        return;
    }
    struct plan_share *sh = xcalloc(p->ntargets ? p->ntargets : 1, sizeof *sh);
    char err[256];
    if (plan_shares(p, cfg->streams, sh, err, sizeof err)) {
        free(sh);
        return;
    }
    fprintf(out, "  stages (requests by planned time%s):\n", plan_shard_count(p) > 1 ? ", this shard's" : "");
    for (size_t j = 0; j < p->nstages; j++) {
        double from = 0, to = 0, planned = 0;
        bool exact = true;
        for (size_t i = 0; i < p->ntargets; i++) {
            struct plan_expect x;
            plan_stage_expected(p, &sh[i], j, &x);
            from += x.rate_from;
            to += x.rate_to;
            planned += x.planned;
            exact &= x.exact;
        }
        char a[32], b[32], r[64], n[48], d[32];
        if (from != to)
            snprintf(r, sizeof r, "%s -> %s/s", units_fmt_rate(from, a, sizeof a), units_fmt_rate(to, b, sizeof b));
        else
            snprintf(r, sizeof r, "%s/s", units_fmt_rate(from, a, sizeof a));
        fprintf(out, "    stage %zu  %-22s %8s  from %.3g s  %s planned\n", j + 1, r,
                units_fmt_duration(p->stages[j].duration_ns, d, sizeof d), (double)plan_stage_start_ns(p, j) / 1e9,
                planned_count(planned, exact, n, sizeof n));
    }
    free(sh);
}

void cli_print_dryrun(FILE *out, const struct run_config *cfg, const struct run_dryrun *dry)
{
    char a[32], b[32], n[48];
    struct runreport_head h = {.open_loop = cfg->plan.open_loop,
                               .poisson = cfg->plan.arrivals == RUN_ARRIVALS_POISSON,
                               .ramp = cfg->plan.ramp,
                               .drop_when_busy = cfg->when_busy == RUN_BUSY_DROP,
                               .keepalive = cfg->keepalive,
                               .shared = !cfg->plan.targets,
                               .seed = cfg->plan.seed,
                               .think_ns = cfg->plan.think_ns,
                               .timer_slack_ns = cfg->plan.open_loop ? cfg->timer_slack_ns : 0,
                               .timer_slack_auto = cfg->plan.open_loop && cfg->timer_slack_auto,
                               .requests = cfg->plan.requests,
                               .rate = cfg->plan.rate,
                               .ramp_from = cfg->plan.ramp_from,
                               .ramp_to = cfg->plan.ramp_to,
                               .duration_s = cfg->plan.duration_ns ? (double)cfg->plan.duration_ns / 1e9 : 0,
                               .threads = dry->threads,
                               .pool_cap = dry->pool_cap,
                               .conns = dry->all.connections,
                               .streams = cfg->streams};
    if (plan_stages_clients(&cfg->plan)) {
        h.client_stages = cfg->plan.nstages;
        h.clients_peak = plan_clients_peak(cfg->plan.stages, cfg->plan.nstages);
    }
    if (dry->io != RUN_IO_AUTO) { /* the engine the run would take, and the --io that chose it */
        h.io = record_io_name(dry->io);
        h.io_asked = record_io_name(cfg->io);
    }
    for (size_t i = 0; cfg->plan.targets && i < cfg->plan.ntargets; i++) {
        if (cfg->plan.targets[i].rate > 0)
            h.own += cfg->plan.targets[i].rate;
        else
            h.shared = true;
    }
    runreport_print_head(out, &h);
    for (size_t i = 0; i < dry->ntargets; i++)
        dryrun_target(out, cfg, &dry->targets[i]);
    const struct run_dryrun_target *all = &dry->all;
    fprintf(out, "\nplan\n");
    if (isfinite(all->planned)) {
        fprintf(out, "  %s request%s planned", planned_count(all->planned, all->planned_exact, n, sizeof n),
                all->planned_exact && llround(all->planned) == 1 ? "" : "s");
        if (cfg->plan.duration_ns)
            fprintf(out, " over %.3g s", (double)cfg->plan.duration_ns / 1e9);
        if (cfg->plan.open_loop && !all->planned_exact)
            fprintf(out, " (Poisson arrivals: the count varies from seed to seed)");
        if (!cfg->plan.open_loop)
            fprintf(out, ", shared by %u connection%s", all->connections, all->connections == 1 ? "" : "s");
        fputc('\n', out);
    } else if (plan_stages_clients(&cfg->plan)) {
        fprintf(out, "  as many requests as up to %u client%s complete in %.3g s (a closed loop plans none ahead)\n",
                all->connections, all->connections == 1 ? "" : "s", (double)cfg->plan.duration_ns / 1e9);
    } else {
        fprintf(out, "  as many requests as %u connection%s complete in %.3g s (a closed loop plans none ahead)\n",
                all->connections, all->connections == 1 ? "" : "s", (double)cfg->plan.duration_ns / 1e9);
    }
    if (cfg->plan.nstages)
        dryrun_stages(out, cfg);
    if (cfg->plan.warmup_ns) {
        if (isfinite(all->warmup_planned))
            fprintf(out, "  warm-up: %s of them in the first %.3g s, logged but left out of the statistics\n",
                    planned_count(all->warmup_planned, all->planned_exact, n, sizeof n),
                    (double)cfg->plan.warmup_ns / 1e9);
        else
            fprintf(out, "  warm-up: the requests of the first %.3g s, logged but left out of the statistics\n",
                    (double)cfg->plan.warmup_ns / 1e9);
    }
    fprintf(out, "  timeout %s per request, drain %s after planning ends\n",
            units_fmt_duration(cfg->timeout_ns, a, sizeof a), units_fmt_duration(cfg->drain_ns, b, sizeof b));
    if (dry->pool_cap < dry->pool_asked)
        fprintf(out, "  ! the connection pool is capped at %u (file descriptor limit %llu; asked for %u)\n",
                dry->pool_cap, (unsigned long long)dry->fd_limit, dry->pool_asked);
}

void cli_print_shard_start(FILE *out, const struct run_config *cfg)
{
    if (!cfg->plan.shard.count && !cfg->plan.shard.start_at_unix_ns)
        return;
    char hex[24], when[48];
    if (cfg->plan.shard.count)
        fprintf(out, "shard %u/%u (%s), plan %s", cfg->plan.shard.index, cfg->plan.shard.count,
                cfg->plan.shard.source ? cfg->plan.shard.source : "--shard",
                record_shard_plan_hex(run_shard_plan_id(cfg), hex, sizeof hex));
    else
        fprintf(out, "one process");
    if (cfg->plan.shard.start_at_unix_ns) {
        double in_s = ((double)cfg->plan.shard.start_at_unix_ns - (double)clock_wall_ns()) / 1e9;
        fprintf(out, ", start at %s (%s %.3f s)", record_shard_utc(cfg->plan.shard.start_at_unix_ns, when, sizeof when),
                in_s >= 0 ? "in" : "LATE by", fabs(in_s));
    }
    fputc('\n', out);
}

uint64_t cli_shard_hlog_comment(const struct run_config *cfg, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!cfg->plan.shard.count && !cfg->plan.shard.start_at_unix_ns)
        return 0;
    char hex[24];
    snprintf(buf, len, "Logged with knee %s, shard %u/%u, plan %s, start at %llu.%09llu", KNEE_VERSION,
             plan_shard_index(&cfg->plan), plan_shard_count(&cfg->plan),
             record_shard_plan_hex(run_shard_plan_id(cfg), hex, sizeof hex),
             (unsigned long long)(cfg->plan.shard.start_at_unix_ns / NS_PER_S),
             (unsigned long long)(cfg->plan.shard.start_at_unix_ns % NS_PER_S));
    return cfg->plan.shard.start_at_unix_ns;
}
