/* knee capacity's terminal report: what was planned, the ladder × repetitions table, why
 * steps were not held, the knee curve, the probes, the environment, the cross-check and the
 * verdict line. Prints only what struct capacity_result holds; every sentence is chosen by
 * the numbers (capacity_judge wrote the reasons). */
#include "capacity/capacity.h"

#include "core/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *capacity_fmt_rate(double r, char *buf, size_t len)
{
    if (isfinite(r) && r >= 0 && r < 9e15 && r == floor(r))
        return units_fmt_count((uint64_t)r, buf, len);
    return units_fmt_rate(r, buf, len);
}

#define rate_s capacity_fmt_rate

/* A latency in ms for people: "10.9ms", "1.2s", "-". */
static const char *ms_s(double ms, char *buf, size_t len)
{
    if (!isfinite(ms)) {
        snprintf(buf, len, "-");
        return buf;
    }
    return units_fmt_seconds(ms / 1e3, 3, buf, len);
}

static const char *pct_s(double share, char *buf, size_t len)
{
    if (!isfinite(share)) {
        snprintf(buf, len, "-");
        return buf;
    }
    return units_fmt_share(share, 3, buf, len);
}

/* "p99<50ms, error_rate<1%" */
static void slo_list(const struct capacity_config *cfg, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < cfg->nslo && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", cfg->slo[i].expr);
}

static void ladder_list(const double *rates, size_t n, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++) {
        char r[32];
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", rate_s(rates[i], r, sizeof r));
    }
}

static double probe_rate_of(const struct capacity_config *cfg)
{
    return cfg->probe_rate > 0 ? cfg->probe_rate : CAPACITY_PROBE_SHARE * cfg->rates[cfg->nrates - 1];
}

/* The head: load model, targets, ladder, windows, probe and what "held" means. */
static void print_head(FILE *out, const struct capacity_config *cfg, const char *probe_target)
{
    struct capacity_load b;
    capacity_load_of(cfg, &b);
    char slo[512], lad[1024], a[32], d1[32], d2[32], d3[32];
    slo_list(cfg, slo, sizeof slo);
    ladder_list(cfg->rates, cfg->nrates, lad, sizeof lad);
    fprintf(out, "knee capacity: %zu repetition%s of a %zu-rate ladder, open loop (%s arrivals), SLO %s", cfg->reps,
            cfg->reps == 1 ? "" : "s", cfg->nrates, b.arrivals == RUN_ARRIVALS_POISSON ? "poisson" : "constant", slo);
    if (b.timer_slack_ns) /* as knee run's plan line says it */
        fprintf(out, ", sends up to %s ms late by --timer-slack",
                units_fmt_ms((double)b.timer_slack_ns / 1e6, a, sizeof a));
    fputc('\n', out);
    for (size_t i = 0; i < b.ntargets; i++) {
        const struct capacity_load_target *t = &b.targets[i];
        fprintf(out, "  target    %s %s %s", t->name, t->method ? t->method : "GET", t->url);
        if (b.ntargets > 1)
            fprintf(out, " (weight %g)", t->weight > 0 ? t->weight : 1);
        fputc('\n', out);
    }
    if (b.http3)
        fprintf(out, "  protocol  h3 (HTTP/3 over QUIC, --http3): every step and the probe\n");
    fprintf(out, "  ladder    %s /s (fixed: the same in every repetition)\n", lad);
    fprintf(out, "  windows   %s each after a %s warm-up, %s settle before each\n",
            units_fmt_duration(cfg->step_ns, d1, sizeof d1), units_fmt_duration(cfg->warmup_ns, d2, sizeof d2),
            units_fmt_duration(cfg->settle_ns, d3, sizeof d3));
    double pr = probe_rate_of(cfg);
    fprintf(out, "  probe     %s/s", rate_s(pr, a, sizeof a));
    if (cfg->probe_rate > 0)
        fprintf(out, " (--probe-rate)");
    else
        fprintf(out, " (%.0f%% of the top rate)", 100 * CAPACITY_PROBE_SHARE);
    fprintf(out, " to %s before every repetition\n", probe_target);
    char src[200];
    double lim = capacity_probe_lag_limit_ms(cfg, src, sizeof src);
    fprintf(out, "            it fails when it sends < %.0f%% of its plan or its lag p99%s > %s (%s)\n",
            100 * CAPACITY_DELIVERED, b.timer_slack_ns ? " beyond --timer-slack" : "", ms_s(lim, d1, sizeof d1), src);
    if (cfg->between)
        fprintf(out, "  between   %s (before every repetition, outside every window)\n", cfg->between);
    fprintf(out,
            "  held      a step: the generator delivered it (>= %.0f%% of the window's planned requests sent in "
            "it, less\n"
            "            what the lag carries past its end; not generator-limited), a request ended ok and every "
            "SLO\n"
            "            term passed; a rate: a strict majority of the valid repetitions held it\n",
            100 * CAPACITY_DELIVERED);
}

void capacity_print_plan(FILE *out, const struct capacity_config *cfg)
{
    char url[300];
    if (cfg->probe_url)
        snprintf(url, sizeof url, "%s", cfg->probe_url);
    else
        snprintf(url, sizeof url, "knee serve --preset null (in-process, 127.0.0.1)");
    print_head(out, cfg, url);
    uint64_t windows;
    double secs;
    capacity_plan(cfg, &windows, &secs);
    fprintf(out, "  then      %s\n",
            cfg->cross_check ? "the closed-loop cross-check: 1, 2, 4, ... connections until the SLO fails"
                             : "no cross-check (--no-cross-check)");
    char d[32], e[32];
    fprintf(out, "\nplan: %llu windows of the ladder (%zu x %zu rates + %zu probes), at least %s",
            (unsigned long long)windows, cfg->reps, cfg->nrates, cfg->reps, units_fmt_seconds(secs, 3, d, sizeof d));
    if (cfg->cross_check)
        fprintf(out, ", then up to %d of the closed loop (%s each)", CAPACITY_CLOSED_MAX_STEPS,
                units_fmt_seconds((double)(cfg->warmup_ns + cfg->step_ns + cfg->settle_ns) / 1e9, 3, e, sizeof e));
    fputc('\n', out);
}

/* One cell of the table: "✔ 10.9ms", "✘ 1.2s", "-" (not measured). */
static void cell(const struct capacity_step *s, bool measured, char *buf, size_t len)
{
    char m[32];
    if (!measured)
        snprintf(buf, len, "-");
    else if (!s->ran)
        snprintf(buf, len, "✘ stopped");
    else
        snprintf(buf, len, "%s %s", s->held ? "✔" : "✘", ms_s(s->p99_ms, m, sizeof m));
}

/* Pad a string holding UTF-8 marks to `width` columns (✔ and ✘ are 3 bytes, 1 column). */
static void put_col(FILE *out, const char *s, int width)
{
    int cols = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        cols += (*p & 0xC0) != 0x80;
    for (int i = cols; i < width; i++)
        fputc(' ', out);
    fputs(s, out);
}

static bool step_measured(const struct capacity_rep *rep, const struct capacity_step *s)
{
    return rep->ran && (s->ran || s->requests || s->reason[0]);
}

/* "ok responses", "every response", "timeout responses": whose latency a step shows. */
static const char *group_words(const struct capacity_config *cfg, char *buf, size_t len)
{
    int g = capacity_latency_group(cfg->slo, cfg->nslo);
    if (g == THR_GROUP_ALL)
        snprintf(buf, len, "every response");
    else
        snprintf(buf, len, "%s responses", capacity_latency_group_name(g));
    return buf;
}

static void print_table(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r)
{
    const int W = 12;
    char gw[64];
    fprintf(out, "\nladder x repetitions (✔ held, ✘ not held; the p99 of %s)\n", group_words(cfg, gw, sizeof gw));
    fprintf(out, "  %10s", "rate/s");
    for (size_t i = 0; i < r->nreps; i++) {
        char h[32];
        snprintf(h, sizeof h, "rep %zu", i + 1);
        put_col(out, h, W);
    }
    fprintf(out, "   majority\n");
    for (size_t k = 0; k < r->nrates; k++) {
        char rs[32], c[64];
        fprintf(out, "  %10s", rate_s(r->rates[k], rs, sizeof rs));
        for (size_t i = 0; i < r->nreps; i++) {
            const struct capacity_rep *rep = &r->reps[i];
            cell(&rep->step[k], step_measured(rep, &rep->step[k]), c, sizeof c);
            put_col(out, c, W);
        }
        const struct capacity_rung *g = &r->vote.rung[k];
        fprintf(out, "   %s %zu/%zu%s\n", g->held ? "held" : "not held", g->held_by, g->valid_reps,
                (int)k == r->vote.cap_index ? "  <- capacity" : "");
    }
    fprintf(out, "  %10s", "probe");
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_rep *rep = &r->reps[i];
        char c[64], a[32];
        if (!rep->ran || !step_measured(rep, &rep->probe))
            snprintf(c, sizeof c, "-");
        else
            snprintf(c, sizeof c, "%s %s/s", rep->probe.held ? "✔" : "✘", rate_s(rep->probe.achieved, a, sizeof a));
        put_col(out, c, W);
    }
    fprintf(out, "\n  %10s", "valid");
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_rep *rep = &r->reps[i];
        put_col(out, !rep->ran ? "-" : rep->valid ? "yes" : "EXCLUDED", W);
    }
    fprintf(out, "   %zu of %zu\n", r->vote.nvalid, r->nreps);
    fprintf(out, "  %10s", "machine");
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_rep *rep = &r->reps[i];
        put_col(out, !rep->ran || !rep->env.have ? "-" : rep->env.busy ? "BUSY" : "quiet", W);
    }
    fprintf(out, "   (environment below)\n");
}

static void print_why(FILE *out, const struct capacity_result *r)
{
    bool any = false;
    for (size_t k = 0; k < r->nrates; k++)
        for (size_t i = 0; i < r->nreps; i++) {
            const struct capacity_rep *rep = &r->reps[i];
            const struct capacity_step *s = &rep->step[k];
            if (!step_measured(rep, s) || s->held)
                continue;
            if (!any)
                fprintf(out, "\nwhy steps were not held\n");
            any = true;
            char rs[32];
            fprintf(out, "  %s/s rep %zu%s: %s\n", rate_s(r->rates[k], rs, sizeof rs), i + 1,
                    rep->valid ? "" : " (excluded)", s->reason);
        }
}

static void print_curve(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r)
{
    if (!r->vote.nvalid)
        return;
    char gw[64];
    fprintf(out, "\nknee curve (medians over the %zu valid repetition%s; latency of %s)\n", r->vote.nvalid,
            r->vote.nvalid == 1 ? "" : "s", group_words(cfg, gw, sizeof gw));
    fprintf(out, "  %10s %12s %10s %10s %8s\n", "rate/s", "achieved/s", "p50", "p99", "errors");
    for (size_t k = 0; k < r->nrates; k++) {
        const struct capacity_rung *g = &r->vote.rung[k];
        char a[32], b[32], c[32], d[32], e[32];
        fprintf(out, "  %10s %12s %10s %10s %8s\n", rate_s(g->rate, a, sizeof a),
                units_fmt_rate(g->achieved, b, sizeof b), ms_s(g->p50_ms, c, sizeof c), ms_s(g->p99_ms, d, sizeof d),
                pct_s(g->error_rate, e, sizeof e));
    }
}

static void print_probes(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r)
{
    char a[32], d[32];
    fprintf(out, "\nprobes (%s/s for %s after the warm-up, to %s)\n", rate_s(r->probe_rate, a, sizeof a),
            units_fmt_duration(cfg->step_ns, d, sizeof d), r->probe_target);
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_rep *rep = &r->reps[i];
        if (!rep->ran || !step_measured(rep, &rep->probe)) {
            fprintf(out, "  rep %-3zu not run\n", i + 1);
            continue;
        }
        const struct capacity_step *p = &rep->probe;
        char b[32];
        fprintf(out, "  rep %-3zu %-7s achieved %s/s of %s/s, lag p99 %s%s%s\n", i + 1, p->held ? "ok" : "FAILED",
                units_fmt_rate(p->achieved, a, sizeof a), units_fmt_rate(p->planned, d, sizeof d),
                ms_s(p->lag_p99_ms, b, sizeof b), p->held ? "" : ": ", p->held ? "" : p->reason);
    }
}

static void print_env(FILE *out, const struct capacity_result *r)
{
    fprintf(out, "\nenvironment (per repetition: CPU shares over it, busiest other processes)\n");
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_rep *rep = &r->reps[i];
        const struct capacity_env *e = &rep->env;
        if (!rep->ran || !e->have) {
            fprintf(out, "  rep %-3zu not run\n", i + 1);
            continue;
        }
        char a[32], b[32], c3[32];
        fprintf(out, "  rep %-3zu %s  %s  load %.2f -> %.2f  knee %s CPU  others %s of the CPUs%s\n", i + 1,
                e->start_wall, units_fmt_seconds(e->wall_s, 3, a, sizeof a), e->loadavg_before[0], e->loadavg_after[0],
                units_fmt_seconds(e->knee_cpu_s, 3, b, sizeof b), pct_s(e->others_share, c3, sizeof c3),
                e->busy ? "  BUSY" : "");
        fprintf(out, "          CPU busy");
        for (size_t c = 0; c < e->ncpus; c++)
            fprintf(out, " %s", pct_s(e->cpu[c].busy, a, sizeof a));
        double iow = 0, st = 0;
        for (size_t c = 0; c < e->ncpus; c++) {
            iow = fmax(iow, isfinite(e->cpu[c].iowait) ? e->cpu[c].iowait : 0);
            st = fmax(st, isfinite(e->cpu[c].steal) ? e->cpu[c].steal : 0);
        }
        fprintf(out, "  (iowait up to %s, steal up to %s)\n", pct_s(iow, a, sizeof a), pct_s(st, b, sizeof b));
        if (e->nprocs) {
            fprintf(out, "          others:");
            for (size_t p = 0; p < e->nprocs; p++)
                fprintf(out, "%s %s (pid %d) %s", p ? "," : "", e->top[p].comm, e->top[p].pid,
                        units_fmt_seconds(e->top[p].cpu_s, 3, a, sizeof a));
            fputc('\n', out);
        }
        if (rep->between_ran)
            fprintf(out, "          --between ran %s before it, exit %d\n",
                    units_fmt_seconds(rep->between_s, 3, a, sizeof a), rep->between_status);
    }
}

/* The comparison's words: "inside the ladder's bracket: agree", "+12.0% outside the ladder's bracket: DISAGREE". */
static void print_agreement(FILE *out, const struct capacity_cross *x)
{
    if (x->difference == 0)
        fprintf(out, "inside the ladder's bracket: %s", x->agree ? "agree" : "DISAGREE");
    else
        fprintf(out, "%+.1f%% outside the ladder's bracket: %s", 100 * x->difference, x->agree ? "agree" : "DISAGREE");
    fprintf(out, " (--agree %.0f%%)\n", 100 * x->agree_share);
}

/* The queue model: how it was built from the closed loop, and its prediction rung by rung. */
static void print_queue(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r)
{
    const struct capacity_queue *q = &r->cross.queue;
    char a[32], b[32], c[32], d[32];
    if (!q->ran) {
        fprintf(out, "  queue model: not run (%s)\n", q->why_not[0] ? q->why_not : "no queue model");
        return;
    }
    fprintf(out,
            "  queue model: %u server%s (Little: %s/s, the closed loop's highest throughput, x %s mean latency at %u "
            "connection%s = %.2f),\n",
            q->servers, q->servers == 1 ? "" : "s", units_fmt_rate(q->saturation, a, sizeof a),
            ms_s(q->one_conn_ms, b, sizeof b), q->connections, q->connections == 1 ? "" : "s",
            q->saturation * q->one_conn_ms / 1e3);
    fprintf(out, "      service times: that step's latencies x %.3f (mean %s, p50 %s, p99 %s: %u server%s %s %s/s),\n",
            q->scale, ms_s(q->service_mean_ms, a, sizeof a), ms_s(q->service_p50_ms, b, sizeof b),
            ms_s(q->service_p99_ms, c, sizeof c), q->servers, q->servers == 1 ? "" : "s",
            q->servers == 1 ? "completes" : "complete", units_fmt_rate(q->saturation, d, sizeof d));
    fprintf(out, "      fed the ladder's %s arrivals (seed %llu), FCFS, %zu window%s of %s after %s per rate\n",
            q->poisson ? "poisson" : "constant", (unsigned long long)q->seed, q->windows, q->windows == 1 ? "" : "s",
            units_fmt_seconds(q->window_s, 3, a, sizeof a), units_fmt_seconds(q->warmup_s, 3, b, sizeof b));
    char head[48];
    snprintf(head, sizeof head, "%s predicted", q->term_stat);
    fprintf(out, "  %10s %16s   %s\n", "rate/s", head, "ladder");
    for (size_t k = 0; k < r->nrates; k++) {
        const struct capacity_queue_point *p = &q->rung[k];
        char cellv[64];
        snprintf(cellv, sizeof cellv, "%s %s", p->held ? "✔" : "✘", ms_s(p->value_ms, b, sizeof b));
        fprintf(out, "  %10s ", rate_s(r->rates[k], a, sizeof a));
        put_col(out, cellv, 16);
        fprintf(out, "   %s%s\n", r->vote.rung[k].held ? "held" : "not held",
                (int)k == q->cap_index ? "  <- the queue's last held rung" : "");
    }
    fprintf(out, "  the queue holds %s up to %s%s/s\n", cfg->slo[q->term].expr, q->capacity_at_hi ? "at least " : "",
            units_fmt_rate(q->capacity, a, sizeof a));
}

void capacity_print_cross(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r)
{
    const struct capacity_cross *x = &r->cross;
    if (!x->ran) {
        fprintf(out, "\ncross-check: not run%s\n", r->interrupted ? " (interrupted)" : " (--no-cross-check)");
        return;
    }
    fprintf(out, "\ncross-check: closed loop, connections doubling until the SLO fails\n");
    fprintf(out, "  %11s %13s %10s %10s   %s\n", "connections", "throughput/s", "p50", "p99", "SLO");
    for (size_t k = 0; k < x->nsteps; k++) {
        const struct capacity_closed_step *c = &x->step[k];
        char a[32], b[32], d[32];
        fprintf(out, "  %11u %13s %10s %10s   %s%s%s\n", c->connections, units_fmt_rate(c->s.achieved, a, sizeof a),
                ms_s(c->s.p50_ms, b, sizeof b), ms_s(c->s.p99_ms, d, sizeof d), c->s.held ? "✔" : "✘ ",
                c->s.held ? "" : c->s.reason, (int)k == x->best ? "  <- best" : "");
    }
    char a[32], b[32], c[32];
    const struct capacity_vote *v = &r->vote;
    if (x->best >= 0)
        fprintf(out, "  closed loop %s/s at %u connection%s%s", units_fmt_rate(x->closed_loop, a, sizeof a),
                x->step[x->best].connections, x->step[x->best].connections == 1 ? "" : "s",
                x->beyond ? " (stopped beyond 4x the top rate)" : "");
    else
        fprintf(out, "  closed loop: no step met the SLO");
    if (v->cap_index >= 0 && v->top_held)
        fprintf(out, "; the ladder: %s/s held, the top (capacity at least that)", rate_s(v->capacity, b, sizeof b));
    else if (v->cap_index >= 0)
        fprintf(out, "; the ladder: %s/s held, %s/s not", rate_s(v->capacity, b, sizeof b),
                rate_s(v->bracket_hi, c, sizeof c));
    else
        fprintf(out, "; the ladder: not even %s/s held", rate_s(r->rates[0], b, sizeof b));
    fputc('\n', out);
    print_queue(out, cfg, r);
    fprintf(out, "  regime: %s\n", x->regime_why);
    if (x->regime == CAPACITY_REGIME_LATENCY)
        fprintf(out, "  second method: the queue model, %s/s: ", units_fmt_rate(x->second, a, sizeof a));
    else if (isfinite(x->second))
        fprintf(out, "  second method: the closed loop, %s/s: ", units_fmt_rate(x->second, a, sizeof a));
    else
        fprintf(out, "  second method: the closed loop, nothing within the SLO: ");
    if (isfinite(x->relative))
        fprintf(out, "%+.1f%% from the capacity, ", 100 * x->relative);
    print_agreement(out, x);
    if (isfinite(x->bound)) {
        fprintf(out, "  upper bound: the closed loop's highest throughput %s/s (%u connection%s): ",
                units_fmt_rate(x->bound, a, sizeof a), x->step[x->bound_step].connections,
                x->step[x->bound_step].connections == 1 ? "" : "s");
        if (v->cap_index < 0)
            fprintf(out, "the ladder held no rate\n");
        else
            fprintf(out, "the ladder's %s/s is %s\n", rate_s(v->capacity, b, sizeof b),
                    x->above_bound ? "ABOVE it by more than --agree" : "within it");
    }
}

void capacity_print_verdict(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r)
{
    const struct capacity_verdict *v = &r->verdict;
    const struct capacity_vote *vo = &r->vote;
    if (!v->valid) {
        fprintf(out, "INVALID: %s\n", v->nreasons ? v->reasons[0] : "no valid measurement");
        return;
    }
    char slo[512], a[32], b[32];
    slo_list(cfg, slo, sizeof slo);
    if (vo->cap_index < 0)
        fprintf(out, "capacity below %s/s at %s (the lowest rate was not held", rate_s(r->rates[0], a, sizeof a), slo);
    else
        fprintf(out, "capacity %s%s/s at %s (", vo->top_held ? ">= " : "", rate_s(vo->capacity, a, sizeof a), slo);
    fprintf(out, "%s%zu/%zu repetitions valid", vo->cap_index < 0 ? "; " : "", vo->nvalid, r->nreps);
    const struct capacity_cross *x = &r->cross;
    if (!x->ran) {
        fprintf(out, ", no cross-check");
    } else if (x->regime == CAPACITY_REGIME_LATENCY) {
        fprintf(out, ", latency-bound: queue model %s/s", units_fmt_rate(x->second, b, sizeof b));
        if (x->difference == 0)
            fprintf(out, ", inside the ladder's bracket: agree");
        else
            fprintf(out, ", agree within %.0f%% of the ladder's bracket", ceil(100 * fabs(x->difference)));
        if (isfinite(x->bound))
            fprintf(out, "; the closed loop's %s/s bounds it", units_fmt_rate(x->bound, b, sizeof b));
    } else {
        if (x->best < 0)
            fprintf(out, ", closed loop: nothing within the SLO");
        else {
            fprintf(out, ", closed loop %s/s", units_fmt_rate(x->closed_loop, b, sizeof b));
            if (x->difference == 0)
                fprintf(out, ", inside the ladder's bracket: agree");
            else
                fprintf(out, ", agree within %.0f%% of the ladder's bracket", ceil(100 * fabs(x->difference)));
        }
        if (x->regime == CAPACITY_REGIME_UNDECIDED)
            fprintf(out, "; regime undecided");
        else if (x->queue.ran)
            fprintf(out, "; throughput-bound: queue model %s%s/s", x->queue.capacity_at_hi ? ">= " : "",
                    units_fmt_rate(x->queue.capacity, b, sizeof b));
        else
            fprintf(out, "; throughput-bound: no response-time term");
    }
    fputc(')', out);
    if (v->require_given)
        fprintf(out, "; --require %s/s %s", rate_s(cfg->require, b, sizeof b), v->require_met ? "met" : "NOT MET");
    fputc('\n', out);
}

void capacity_print_text(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r)
{
    print_head(out, cfg, r->probe_target);
    print_table(out, cfg, r);
    print_why(out, r);
    print_curve(out, cfg, r);
    print_probes(out, cfg, r);
    print_env(out, r);
    capacity_print_cross(out, cfg, r);
    const struct capacity_verdict *v = &r->verdict;
    size_t first = v->valid ? 0 : 1;
    if (v->nreasons > first) {
        fprintf(out, "\n%s\n", v->valid ? "notes" : "also");
        for (size_t i = first; i < v->nreasons; i++)
            fprintf(out, "  - %s\n", v->reasons[i]);
    }
    if (r->out_error)
        fprintf(out, "\n! an output could not be written: %s\n", r->out_error_msg);
    fputc('\n', out);
    capacity_print_verdict(out, cfg, r);
}

void capacity_print_progress(FILE *out, const struct capacity_progress *p, bool terminal)
{
    char a[32], b[32], c[32];
    if (!terminal && p->elapsed_s > 0)
        return; /* a pipe: one plain line as each window starts */
    if (terminal)
        fprintf(out, "\r\033[K");
    if (p->rep)
        fprintf(out, "capacity: rep %zu/%zu ", p->rep, p->nreps);
    else
        fprintf(out, "capacity: ");
    if (strcmp(p->phase, "step") == 0)
        fprintf(out, "step %zu/%zu %s/s", p->step, p->nsteps, rate_s(p->rate, a, sizeof a));
    else if (strcmp(p->phase, "probe") == 0)
        fprintf(out, "probe %s/s", rate_s(p->rate, a, sizeof a));
    else if (strcmp(p->phase, "closed loop") == 0)
        fprintf(out, "closed loop %u connections", p->connections);
    else
        fprintf(out, "%s", p->phase);
    if (terminal && p->total_s > 0)
        fprintf(out, "  %.0f/%.0f s", p->elapsed_s, p->total_s);
    if (isfinite(p->now_p99_ms))
        fprintf(out, "  p99 now %s", ms_s(p->now_p99_ms, b, sizeof b));
    if (isfinite(p->last_p99_ms))
        fprintf(out, "  last step p99 %s", ms_s(p->last_p99_ms, c, sizeof c));
    if (!terminal)
        fputc('\n', out);
    fflush(out);
}
