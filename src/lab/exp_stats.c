/* knee lab stats (the statistics-lab article): servers A (report job) and B (quiet) under three rounds —
 * closed loop 8+8 clients, open loop A=100/s B=300/s, open loop A=100/s B=550/s — each
 * analysed like `knee stats`, then compared, then explained from this run's numbers. */
#include "lab/internal.h"

#include "core/clock.h"
#include "core/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STATS_DEFAULT_NS (60 * NS_PER_S)
#define STATS_QUICK_NS (15 * NS_PER_S)
#define SLOW_MS 100.0

static const struct lab_lengths lengths = {STATS_QUICK_NS, STATS_DEFAULT_NS, LAB_WARMUP_QUICK_NS, LAB_WARMUP_NS};

struct round_plan {
    const char *name, *label;
    bool open_loop;
    double rate[2];
    unsigned clients[2];
};

/* LAB_A and LAB_B index the run's targets (A is configured first) as well as the result's
 * per-group arrays, where LAB_AB follows them. */
_Static_assert(LAB_A == 0 && LAB_B == 1 && LAB_AB == 2 && LAB_NGROUPS == 3, "targets A, B, then A+B, by position");

static const struct round_plan plans[3] = {
    {"closed", "closed loop, 8 clients per server", false, {0, 0}, {8, 8}},
    {"open", "open loop, A=100/s, B=300/s", true, {100, 300}, {0, 0}},
    {"busy", "open loop, A=100/s, B=550/s", true, {100, 550}, {0, 0}},
};

/* Mean service time of the report/quiet work and the pool's capacity (/s). */
static double capacity_of(const struct serve_config *c)
{
    double mean_s = ((1 - c->miss_rate) * (double)c->hit_ns + c->miss_rate * (double)c->miss_ns) / 1e9;
    return mean_s > 0 ? c->pool / mean_s : NAN;
}

void lab_stats_fill_round(const struct lab_round *rd, bool open_loop, const double rate[2], const unsigned clients[2],
                          const char *label, struct lab_stats_round *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->label, sizeof o->label, "%s", label);
    o->open_loop = open_loop;
    o->accounting_ok = true;
    lab_validity_of(&rd->res, &o->valid);
    for (int t = 0; t < 2; t++) {
        o->rate[t] = rate[t];
        o->clients[t] = clients[t];
        const struct run_counts *c = &rd->res.targets[t].counts;
        o->sent_rate[t] = lab_rates(rd, (size_t)t)->sent;
        o->accounting_ok &= record_counts_hold(c);
        o->not_ok += c->sent - c->outcome[OUTCOME_OK];
        o->lag_p99_ms[t] = NAN;
        if (open_loop)
            o->lag_p99_ms[t] = lab_percentile(rd, (size_t)t, -1, LAB_COL_LAG, 99);
    }
    size_t n;
    double *a = lab_values(rd, LAB_A, OUTCOME_OK, LAB_COL_LATENCY, &n);
    o->slow_a = lab_count_at_least(a, n, SLOW_MS);
    free(a);
}

/* Summaries A, B, A+B of a report, by name. */
static void take_summaries(const struct report *rep, struct summary out[LAB_NGROUPS])
{
    static const char *const names[2] = {[LAB_A] = "A", [LAB_B] = "B"};
    for (int g = 0; g < 2; g++) {
        const struct group_result *gr = lab_report_group(rep, names[g]);
        if (gr)
            out[g] = gr->s;
        else
            stats_summarize(NULL, 0, &out[g]);
    }
    out[LAB_AB] = rep->all.s;
}

/* Round 2's numbers behind the sentences, straight from its `knee stats` report. */
static void take_round2(const struct report *rep, struct lab_stats_result *r)
{
    r->avg_of_p99s_ms = rep->groups_mean_p99;
    r->real_p99_ms = rep->all.s.p99;
    const struct group_result *a = lab_report_group(rep, "A");
    if (a && a->has_windows) {
        r->per_second_p99_avg_ms = a->win.mean;
        r->per_second_p99_max_ms = a->win.max;
        r->per_second_n = a->win.nwindows;
    }
    r->prom_p99_ms = rep->prom_est[2].estimate;
    r->prom_p99_lo_ms = rep->prom_est[2].low;
    r->prom_p99_hi_ms = rep->prom_est[2].high;
    r->window_p99_min_ms = INFINITY;
    r->window_p99_max_ms = -INFINITY;
    if (rep->small_group && strcmp(rep->small_group, "A") == 0 && rep->small_n >= REPORT_SMALL_WINDOW_LEN) {
        for (size_t i = 0; i < rep->nsmall; i++) {
            r->window_p99_min_ms = fmin(r->window_p99_min_ms, rep->small[i].p99);
            r->window_p99_max_ms = fmax(r->window_p99_max_ms, rep->small[i].p99);
        }
        r->nwindows = rep->nsmall;
    }
}

/* The round's accounting, then its `knee stats` report (latency_ms; in an open loop also the
 * service_ms table). Fills the summaries of *o and, for round 2, the fields of *r. */
static int analyse_round(struct lab_ctx *c, size_t i, const struct lab_round *rd, struct lab_stats_round *o,
                         double duration_s, struct lab_stats_result *r)
{
    FILE *out = c->out;
    lab_heading(out, "round %zu of 3: %s, %.0f s", i + 1, o->label, duration_s);
    for (int t = 0; t < 2; t++) {
        const struct run_counts *k = &rd->res.targets[t].counts;
        char rate[32];
        fprintf(out, "  %s: planned %llu = sent %llu + dropped %llu; ok %llu, other outcomes %llu; %s sent/s",
                t == 0 ? "A" : "B", (unsigned long long)k->planned, (unsigned long long)k->sent,
                (unsigned long long)k->dropped, (unsigned long long)k->outcome[OUTCOME_OK],
                (unsigned long long)(k->sent - k->outcome[OUTCOME_OK]),
                units_fmt_rate(o->sent_rate[t], rate, sizeof rate));
        if (o->open_loop)
            fprintf(out, " (planned %.0f/s)", o->rate[t]);
        fputs("\n", out);
    }
    fprintf(out, "  accounting: planned = sent + dropped, sent = ok + rejected + errors + timeouts + cancelled: %s\n",
            lab_holds(o->accounting_ok));
    if (o->open_loop)
        fprintf(out,
                "  latency_ms counts from the planned send (T5 - T0), service_ms from the actual send (T5 - T1); "
                "generator lag p99: A %.2f ms, B %.2f ms\n",
                o->lag_p99_ms[0], o->lag_p99_ms[1]);
    else
        fputs("  a closed loop plans each request when it sends it: latency_ms and service_ms are the same column\n",
              out);
    char rname[16];
    snprintf(rname, sizeof rname, "round %zu", i + 1);
    lab_print_round_warnings(out, "  ", rname, &rd->res);
    fputs("  the analysis below is `knee stats` over this round's requests (ok outcomes, warm-up left out)\n\n", out);

    char title[96];
    snprintf(title, sizeof title, "round %zu: %s", i + 1, o->label);
    struct lab_report lr;
    int rc = lab_report_build(c, rd, "latency_ms", title, &lr);
    if (rc == 0) {
        report_print_text(out, &lr.rep);
        take_summaries(&lr.rep, o->latency);
        if (r)
            take_round2(&lr.rep, r);
    }
    lab_report_release(&lr);
    if (rc)
        return rc;
    if (!o->open_loop) {
        memcpy(o->service, o->latency, sizeof o->service);
        return 0;
    }
    if ((rc = lab_report_build(c, rd, "service_ms", title, &lr)) == 0) {
        take_summaries(&lr.rep, o->service);
        lab_heading(out, "%s (service_ms)", title);
        lab_print_table_head(out, "");
        static const char *const gn[LAB_NGROUPS] = {[LAB_A] = "A", [LAB_B] = "B", [LAB_AB] = "A+B"};
        for (int g = 0; g < LAB_NGROUPS; g++)
            lab_print_table_row(out, "", gn[g], &o->service[g]);
    }
    lab_report_release(&lr);
    return rc;
}

static void print_comparison(FILE *out, const struct lab_stats_result *r)
{
    lab_heading(out, "comparison across rounds (latency_ms: from the planned send; closed loop: from the send)");
    fprintf(out, "  %-36s %-4s%9s%8s%8s%8s%8s%8s%8s%9s\n", "round", "", "sent/s", "count", "p50", "p90", "p99", "p99.9",
            "max", "lag p99");
    static const char *const gn[] = {[LAB_A] = "A", [LAB_B] = "B"};
    for (size_t i = 0; i < r->nrounds; i++) {
        const struct lab_stats_round *o = &r->round[i];
        for (int g = 0; g < 2; g++) {
            const struct summary *s = &o->latency[g];
            char lab[96], b[7][32];
            snprintf(lab, sizeof lab, "%zu %s", i + 1, o->label);
            fprintf(out, "  %-36s %-4s%9s%8zu%8s%8s%8s%8s%8s%9s\n", g == 0 ? lab : "", gn[g],
                    units_fmt_rate(o->sent_rate[g], b[6], 32), s->count, units_fmt_fixed(s->p50, 1, b[0], 32),
                    units_fmt_fixed(s->p90, 1, b[1], 32), units_fmt_fixed(s->p99, 1, b[2], 32),
                    units_fmt_fixed(s->p999, 1, b[3], 32), units_fmt_fixed(s->max, 1, b[4], 32),
                    isnan(o->lag_p99_ms[g]) ? "-" : (snprintf(b[5], 32, "%.2f", o->lag_p99_ms[g]), b[5]));
        }
    }
}

/* The rounds knee run called generator-limited, each named with its warning: nothing about
 * the servers is concluded from them. */
static void say_invalid_rounds(struct lab_say *s, FILE *out, const struct lab_stats_result *r)
{
    for (size_t i = 0; i < r->nrounds; i++) {
        char what[96];
        snprintf(what, sizeof what, "round %zu (%s)", i + 1, r->round[i].label);
        if (lab_say_invalid(s, &r->round[i].valid, what)) {
            const char *w = r->round[i].valid.warning;
            if (strncmp(w, "GENERATOR-LIMITED: ", 19) == 0)
                w += 19; /* the verdict is already named */
            lab_say_add(s,
                        ": %s. Its numbers measure knee's own delay as much as the servers'; the sentences below "
                        "draw no conclusion about the servers from it.",
                        w);
            lab_say_end(s, out);
        }
    }
}

/* Closed against open loop for A: what coordinated omission hides. */
static void say_closed_loop(struct lab_say *s, FILE *out, const struct lab_stats_result *r)
{
    const struct lab_stats_round *cl = &r->round[0], *op = &r->round[1];
    const struct summary *ca = &cl->latency[LAB_A], *oa = &op->latency[LAB_A];
    char ch[48];
    bool clean12 = !cl->valid.generator_limited && !op->valid.generator_limited;

    double share_c = ca->count ? 100.0 * (double)cl->slow_a / (double)ca->count : NAN;
    double share_o = oa->count ? 100.0 * (double)op->slow_a / (double)oa->count : NAN;
    lab_say_add(s, "closed loop: p99 of A = %.1f ms; open loop: %.1f ms (%s)", ca->p99, oa->p99,
                lab_change(ch, sizeof ch, ca->p99, oa->p99));
    if (!clean12)
        lab_say_add(s, " — a generator-limited round is on one side, so what the closed loop hides is not read "
                       "from this pair.");
    else if (oa->p99 > 1.5 * ca->p99)
        lab_say_add(s,
                    " — the closed loop stopped sending while A stalled (coordinated omission): only %.2f%% of its "
                    "requests to A took %.0f ms or more, against %.2f%% in the open loop",
                    share_c, SLOW_MS, share_o);
    else
        lab_say_add(s,
                    " — the gap coordinated omission predicts did not show in this run (%.2f%% of closed-loop "
                    "requests to A took %.0f ms or more, %.2f%% in the open loop)",
                    share_c, SLOW_MS, share_o);
    if (clean12 && ca->p999 > 2 * ca->p99)
        lab_say_add(s, "; the stalls surface only in the closed loop's p99.9 (%.1f ms)", ca->p999);
    lab_say_add(s, ".");
    lab_say_end(s, out);
}

/* Open loop, A against B: the report job in the median and the tail. */
static void say_report_job(struct lab_say *s, FILE *out, const struct lab_stats_result *r)
{
    const struct lab_stats_round *op = &r->round[1];
    const struct summary *oa = &op->latency[LAB_A], *ob = &op->latency[LAB_B];
    double p50_ratio = ob->p50 > 0 ? oa->p50 / ob->p50 : NAN, p99_ratio = ob->p99 > 0 ? oa->p99 / ob->p99 : NAN;
    lab_say_add(s,
                "open loop: the medians of A and B are %.1f and %.1f ms (A/B %.2f×), their p99s %.1f and %.1f ms "
                "(A/B %.2f×)",
                oa->p50, ob->p50, p50_ratio, oa->p99, ob->p99, p99_ratio);
    if (op->valid.generator_limited)
        lab_say_verdict(s, out, true, " — from a generator-limited round: not read as the report job's doing.", "");
    else
        lab_say_verdict(s, out, p99_ratio > 2 && p50_ratio > 0.5 && p50_ratio < 2,
                        " — the report job (250 ms every 4 s) leaves the typical request alone and owns A's tail.",
                        " — the report job's hold on A's tail did not stand out from B in this run.");
}

/* Arithmetic over round 2's numbers: mean + 2 stdev, averaged p99s, per-second p99s, the
 * Prometheus buckets' estimate, p99 of small windows. Said of a generator-limited round too, as
 * whose numbers they are. */
static void say_percentile_math(struct lab_say *s, FILE *out, const struct lab_stats_result *r)
{
    const struct lab_stats_round *op = &r->round[1];
    const struct summary *oa = &op->latency[LAB_A];
    char ch[48];
    const char *whose = op->valid.generator_limited ? "in round 2's numbers (generator-limited): " : "";
    double lo = oa->mean - oa->stdev, hi = oa->mean + 2 * oa->stdev;
    lab_say_add(s, "%smean + 2 stdev of A = %.1f ms against its real p99 of %.1f ms%s", whose, hi, oa->p99,
                hi < oa->p99 ? " (the bell-curve rule falls short)"
                             : " (above it this time; the rule still assumes a shape latency does not have)");
    if (lo < 0)
        lab_say_add(s, "; mean − stdev = %.1f ms, a latency below zero", lo);
    lab_say_add(s, ".");
    lab_say_end(s, out);

    double off = r->avg_of_p99s_ms - r->real_p99_ms;
    lab_say_add(
        s, "%sthe average of the two p99s is %.1f ms, the real p99 of all requests %.1f ms (%+.1f ms, %s): ", whose,
        r->avg_of_p99s_ms, r->real_p99_ms, off, lab_change(ch, sizeof ch, r->real_p99_ms, r->avg_of_p99s_ms));
    lab_say_verdict(s, out, fabs(off) > 0.05 * r->real_p99_ms,
                    "percentiles do not average; merge histograms or counts, then take the percentile.",
                    "close this time only because of these weights; percentiles still do not average.");

    if (r->per_second_n) {
        lab_say_add(s, "%sA's %zu per-second p99s average %.1f ms (max %.1f) against the round's real p99 of %.1f ms",
                    whose, r->per_second_n, r->per_second_p99_avg_ms, r->per_second_p99_max_ms, oa->p99);
        lab_say_verdict(s, out, r->per_second_p99_avg_ms < 0.8 * oa->p99,
                        ": the quiet seconds outvote the stalled ones.", ": in this run the averaging hid little.");
    }
    lab_say_add(s, "%sthe default Prometheus buckets estimate p99 of A+B at %.1f ms; the exact value is %.1f ms", whose,
                r->prom_p99_ms, r->real_p99_ms);
    if (isinf(r->prom_p99_hi_ms))
        lab_say_add(s, ", beyond the last bucket: the estimate is only its bound.");
    else
        lab_say_add(s,
                    " (%+.1f ms): the estimate is only as good as the bucket it falls in, (%g, %g] — put SLO "
                    "thresholds on bucket boundaries.",
                    r->prom_p99_ms - r->real_p99_ms, r->prom_p99_lo_ms, r->prom_p99_hi_ms);
    lab_say_end(s, out);
    if (r->nwindows) {
        lab_say_add(s,
                    "%sp99 from only 100 requests of A ranged from %.0f to %.0f ms over ten windows of one round: %s",
                    whose, r->window_p99_min_ms, r->window_p99_max_ms,
                    r->window_p99_max_ms > 2 * r->window_p99_min_ms ? "p99 needs thousands of requests behind it."
                                                                    : "unusually steady this time.");
        lab_say_end(s, out);
    }
}

/* B from round 2's rate to round 3's: how its latency grew against its load. */
static void say_load_growth(struct lab_say *s, FILE *out, const struct lab_stats_result *r, double capacity_b)
{
    const struct lab_stats_round *op = &r->round[1], *bz = &r->round[2];
    const struct summary *ob = &op->latency[LAB_B], *bb = &bz->latency[LAB_B];
    bool clean23 = !op->valid.generator_limited && !bz->valid.generator_limited;
    double ratio = ob->p50 > 0 ? bb->p50 / ob->p50 : NAN, mratio = bb->mean / ob->mean, pratio = bb->p99 / ob->p99;
    double load = bz->rate[1] / op->rate[1];
    lab_say_add(s,
                "B from %.0f to %.0f/s (%.2f×; about %.0f%% of its ~%.0f/s capacity): median %.1f× (%.1f -> %.1f ms), "
                "mean %.1f× (%.1f -> %.1f), p99 %.1f× (%.1f -> %.1f)",
                op->rate[1], bz->rate[1], load, 100 * bz->rate[1] / capacity_b, capacity_b, ratio, ob->p50, bb->p50,
                mratio, ob->mean, bb->mean, pratio, ob->p99, bb->p99);
    if (!clean23)
        lab_say_add(s, " — a generator-limited round is on one side: its latencies include knee's own lag, so how "
                       "B's latency grew with its load is not concluded from them.");
    else if (mratio > load || ratio > load)
        lab_say_add(s, " — %s grew faster than the load: waiting grows faster than utilisation%s",
                    ratio > load ? "the median" : "the mean",
                    ratio > load ? "." : " (the median moved less: most requests still found a free slot).");
    else
        lab_say_add(s, " — nothing grew faster than the load in this run.");
    lab_say_end(s, out);
}

/* Round 3, B: p99 from the planned send against from the actual send. */
static void say_planned_send(struct lab_say *s, FILE *out, const struct lab_stats_result *r)
{
    const struct lab_stats_round *bz = &r->round[2];
    const struct summary *bb = &bz->latency[LAB_B], *bs = &bz->service[LAB_B];
    char ch[48];
    /* Planned against actual send: the difference of the two columns is knee's send lag, so
     * what the sentence says follows the lag (and knee run's verdict on it), not the p99s alone. */
    lab_say_add(s,
                "at %.0f/s, p99 of B from the planned send = %.1f ms, from the actual send = %.1f ms (%s), knee's lag "
                "p99 %.2f ms",
                bz->rate[1], bb->p99, bs->p99, lab_change(ch, sizeof ch, bs->p99, bb->p99), bz->lag_p99_ms[1]);
    if (bz->valid.generator_limited)
        lab_say_add(s, ": the generator fell behind its plan (knee run: GENERATOR-LIMITED), so this round says "
                       "nothing about B; timing from the send alone would have hidden the lag (coordinated omission "
                       "inside an open loop).");
    else if (bb->p99 > 1.1 * bs->p99)
        lab_say_add(s, ": the difference is knee's lag between plan and send, within knee run's limit for a valid "
                       "run yet visible in the tail; timing from the send alone would hide it.");
    else
        lab_say_add(s, ": the generator kept its plan (lag within knee run's limit), so the two agree; only a tool "
                       "that records the plan can show when they do not.");
    lab_say_end(s, out);
}

/* A between rounds 2 and 3, its own load unchanged: noise or the machine. */
static void say_round_noise(struct lab_say *s, FILE *out, const struct lab_stats_result *r)
{
    const struct lab_stats_round *op = &r->round[1], *bz = &r->round[2];
    const struct summary *oa = &op->latency[LAB_A];
    bool clean23 = !op->valid.generator_limited && !bz->valid.generator_limited;
    char ch[48];
    double a2 = oa->p99, a3 = bz->latency[LAB_A].p99;
    double big = fmax(a2, a3), small = fmin(a2, a3);
    lab_say_add(s, "A's load did not change between rounds 2 and 3: its p99 was %.1f and %.1f ms (%s)", a2, a3,
                lab_change(ch, sizeof ch, a2, a3));
    if (!clean23)
        lab_say_add(s, " — a generator-limited round is on one side: the change is put down neither to noise nor "
                       "to the servers.");
    else if (small > 0 && big / small < 1.15)
        lab_say_add(s, " — round-to-round noise; differences this small between two runs say nothing.");
    else
        lab_say_add(s, " — with A's own load unchanged, a change this size comes from the machine (B's load shares "
                       "its CPUs with A and with knee) or from noise; only repeated runs can tell: compare "
                       "before/after over repeated runs.");
    lab_say_end(s, out);
}

/* The sentences: every number from this run, every claim conditional on what it measured.
 * A round knee run calls generator-limited is named first, and no sentence concludes anything
 * about the servers from it; the sentences about arithmetic (percentiles do not average, a
 * bucket bounds an estimate) still hold for its numbers and say whose numbers they are. */
void lab_stats_explain(FILE *out, const struct lab_stats_result *r, double capacity_b)
{
    struct lab_say s = {.n = 0};
    lab_heading(out, "what this run shows");
    if (r->nrounds < 3)
        return;
    say_invalid_rounds(&s, out, r);
    say_closed_loop(&s, out, r);
    say_report_job(&s, out, r);
    say_percentile_math(&s, out, r);
    say_load_growth(&s, out, r, capacity_b);
    say_planned_send(&s, out, r);
    say_round_noise(&s, out, r);
}

int lab_stats(const struct lab_options *o, struct lab_stats_result *r)
{
    memset(r, 0, sizeof *r);
    struct lab_exp x;
    int rc = lab_exp_open(&x, o, "stats", &lengths);
    if (rc)
        return rc;
    struct serve_config cfg[2];
    for (int i = 0; i < 2; i++)
        if ((rc = lab_exp_preset(&x, i == 0 ? "report" : "quiet", o->seed + (uint64_t)i, &cfg[i])) != 0)
            goto out;
    double cap_b = capacity_of(&cfg[1]);
    FILE *out = x.out;
    fprintf(out, "knee lab stats: why the mean lies (servers A and B, three rounds of %.0f s after a %.1f s warm-up)\n",
            (double)x.dur_ns / 1e9, (double)x.warm_ns / 1e9);
    fprintf(out, "  A (report) %s: %s\n", serve_address(x.srv[0]), serve_preset_summary("report"));
    fprintf(out, "  B (quiet)  %s: %s\n", serve_address(x.srv[1]), serve_preset_summary("quiet"));
    fprintf(out, "  percentiles: nearest rank over every request; times in ms\n");
    fflush(out);

    char url[2][128];
    for (int i = 0; i < 2; i++)
        snprintf(url[i], sizeof url[i], "http://%s/product?id=42", serve_address(x.srv[i]));
    for (size_t i = 0; i < 3; i++) {
        const struct round_plan *p = &plans[i];
        struct plan_target t[2];
        memset(t, 0, sizeof t);
        for (int k = 0; k < 2; k++) {
            t[k].name = k == 0 ? "A" : "B";
            t[k].url = url[k];
            t[k].rate = p->rate[k];
            t[k].connections = p->clients[k];
        }
        struct run_config rc_cfg;
        lab_run_config_init(&rc_cfg, t, 2, o->seed, x.dur_ns, x.warm_ns);
        rc_cfg.plan.open_loop = p->open_loop;
        char what[128];
        snprintf(what, sizeof what, "round %zu of 3: %s, %.0f s", i + 1, p->label,
                 (double)(x.dur_ns + x.warm_ns) / 1e9);
        if ((rc = lab_round_run(&x.c, p->name, what, &rc_cfg, &x.rd)) != 0)
            goto out;
        lab_stats_fill_round(&x.rd, p->open_loop, p->rate, p->clients, p->label, &r->round[i]);
        if ((rc = analyse_round(&x.c, i, &x.rd, &r->round[i], (double)x.dur_ns / 1e9, i == 1 ? r : NULL)) != 0)
            goto out;
        r->nrounds = i + 1;
        fflush(out);
        lab_round_release(&x.rd);
    }
    print_comparison(out, r);
    lab_stats_explain(out, r, cap_b);
    fputc('\n', out);
    lab_print_cpu_summary(out, &x.c);
    fflush(out);
out:
    lab_exp_close(&x);
    return rc;
}
