/* knee lab knee (the knee article): the flat server (10 ms of CPU per request on one worker,
 * capacity 100/s) under a ladder of Poisson rates. Per rate: percentiles and the mean next
 * to the M/M/1 and M/D/1 predictions of src/model, and Little's law with L measured
 * independently of the client — the server's in-flight gauge sampled every millisecond. */
#include "lab/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "model/model.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KNEE_DEFAULT_NS (20 * NS_PER_S)
#define KNEE_QUICK_NS (6 * NS_PER_S)
#define SERVICE_S 0.010      /* the flat preset's CPU per request */
#define MU (1.0 / SERVICE_S) /* its capacity on one worker (/s) */
#define SAMPLE_NS (1 * NS_PER_MS)
#define MODEL_TOLERANCE 0.25  /* |measured − M/M/1| / M/M/1 above this: they part */
#define LITTLE_TOLERANCE 0.10 /* |L − λW| / max(L, λW) above this (plus 0.01): flagged */
#define OVERLOAD 1.0          /* measured utilisation at which a row is past the knee */

static const double default_rates[] = {10, 30, 50, 70, 80, 90, 95};
static const double quick_rates[] = {10, 50, 70, 90};
static const struct lab_lengths lengths = {KNEE_QUICK_NS, KNEE_DEFAULT_NS, LAB_WARMUP_QUICK_NS, LAB_WARMUP_NS};

/* Time-averaged in-flight count at the server: its gauges (active + waiting) read about
 * every SAMPLE_NS between from_ns and to_ns and integrated over time (trapezoids). A
 * sampler at fixed times does not synchronise with the arrivals; weighting each step by
 * its real length keeps a sampler that the scheduler delays (a busy machine, exactly when
 * the server is busy) from under-counting the busy periods. */
struct sampler {
    struct serve_handle *srv;
    uint64_t from_ns, to_ns;
    double integral_ns; /* ∫ N(t) dt over [from, last sample] */
    uint64_t span_ns;   /* last sample − first sample */
    uint64_t n;
    atomic_bool quit;
    pthread_t thread;
    uint64_t wall0_ns, cpu_ns, wall_ns; /* the sampler's own CPU over its life (it shares the process) */
};

static double gauge(struct serve_handle *srv)
{
    struct serve_counters c;
    serve_counters(srv, &c);
    return (double)(c.active + c.waiting);
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec : 0;
}

static void *sampler_main(void *arg)
{
    struct sampler *s = arg;
    uint64_t cpu0 = thread_cpu_ns();
    uint64_t next = clock_now_ns(), prev_ns = 0;
    double prev = 0;
    while (!atomic_load(&s->quit)) {
        uint64_t now = clock_now_ns();
        if (now >= s->to_ns)
            break;
        if (now >= s->from_ns) {
            double v = gauge(s->srv);
            if (s->n) {
                s->integral_ns += (prev + v) / 2 * (double)(now - prev_ns);
                s->span_ns += now - prev_ns;
            }
            prev = v;
            prev_ns = now;
            s->n++;
        }
        next += SAMPLE_NS;
        if (next < now)
            next = now + SAMPLE_NS; /* fell behind: the integral weighs the gap, never burst */
        struct timespec ts = {(time_t)(next / NS_PER_S), (long)(next % NS_PER_S)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    s->cpu_ns = thread_cpu_ns() - cpu0;
    return NULL;
}

/* Start s sampling srv over [now + warm_ns, now + warm_ns + dur_ns): the measured part of
 * the round about to run. 0 or the pthread_create error (then there is nothing to stop). */
static int sampler_start(struct sampler *s, struct serve_handle *srv, uint64_t warm_ns, uint64_t dur_ns)
{
    memset(s, 0, sizeof *s);
    s->srv = srv;
    uint64_t now = clock_now_ns();
    s->from_ns = now + warm_ns;
    s->to_ns = now + warm_ns + dur_ns;
    s->wall0_ns = now;
    atomic_init(&s->quit, false);
    return pthread_create(&s->thread, NULL, sampler_main, s);
}

static void sampler_stop(struct sampler *s)
{
    atomic_store(&s->quit, true);
    pthread_join(s->thread, NULL);
    s->wall_ns = clock_now_ns() - s->wall0_ns;
}

static bool little_holds(const struct lab_knee_row *w)
{
    double m = fmax(w->l_measured, w->l_little);
    return fabs(w->l_measured - w->l_little) <= LITTLE_TOLERANCE * m + 0.01;
}

static bool model_close(const struct lab_knee_row *w)
{
    return !isnan(w->mm1_mean_ms) && fabs(w->latency.mean - w->mm1_mean_ms) <= MODEL_TOLERANCE * w->mm1_mean_ms;
}

void lab_knee_fill_row(const struct lab_round *rd, double rate, uint64_t l_samples, double l_measured,
                       struct lab_knee_row *w)
{
    memset(w, 0, sizeof *w);
    w->rate = rate;
    lab_validity_of(&rd->res, &w->valid);
    const struct run_target_result *t = &rd->res.targets[0];
    const struct run_rates *rt = lab_rates(rd, 0);
    w->sent_rate = rt->sent;
    w->completed_rate = rt->completed;
    w->not_ok = t->counts.planned - t->counts.outcome[OUTCOME_OK];
    lab_summarize_values(rd, 0, OUTCOME_OK, LAB_COL_LATENCY, &w->latency);
    size_t n;
    double *v = lab_values(rd, 0, -1, LAB_COL_SERVICE, &n);
    w->service_mean_ms = n ? stats_mean(v, n) : NAN;
    free(v);
    w->lag_p99_ms = lab_percentile(rd, 0, -1, LAB_COL_LAG, 99);
    const struct hdr *work = lab_server_timing(&rd->res, 0, "work");
    w->work_mean_ms = work && work->total_count ? hdr_mean(work) / 1e6 : NAN;

    struct model_mmc mm;
    w->mm1_mean_ms = model_mmc(1, rate, MU, &mm) == 0 ? mm.mean_response_s * 1e3 : NAN;
    struct model_md1 md;
    w->md1_mean_ms = model_md1(rate, SERVICE_S, &md) == 0 ? md.mean_response_s * 1e3 : NAN;
    w->l_samples = l_samples;
    w->l_measured = l_measured;
    /* λ·W with λ the requests sent per second of the window and W their mean time from the
     * send to the full response: the interval the server's gauge can see. */
    w->l_little = w->sent_rate * w->service_mean_ms / 1e3;
}

static void print_table(FILE *out, const struct lab_knee_result *r)
{
    fprintf(out, "\n  %5s%8s%8s%8s%8s%8s |%8s%8s |%7s%6s |%7s%9s |%6s | %-14s%s\n", "rate", "sent/s", "p50", "p95",
            "p99", "mean", "M/M/1", "M/D/1", "work", "busy", "L", "λ·W", "gen", "M/M/1 vs mean", "Little");
    for (size_t i = 0; i < r->nrows; i++) {
        const struct lab_knee_row *w = &r->row[i];
        char b[8][32], flag[32], lit[32], sr[32];
        if (isnan(w->mm1_mean_ms))
            snprintf(flag, sizeof flag, "unstable");
        else if (model_close(w))
            snprintf(flag, sizeof flag, "close");
        else
            snprintf(flag, sizeof flag, "PARTS %+.0f%%", 100 * (w->latency.mean / w->mm1_mean_ms - 1));
        if (little_holds(w))
            snprintf(lit, sizeof lit, "holds");
        else
            snprintf(lit, sizeof lit, "OFF %+.0f%%", 100 * (w->l_measured / w->l_little - 1));
        char gen[16];
        if (isnan(w->valid.gen_cpu_share))
            snprintf(gen, sizeof gen, "-");
        else
            snprintf(gen, sizeof gen, "%.1f%%%s", 100 * w->valid.gen_cpu_share, w->valid.gen_cpu_over ? "!" : "");
        fprintf(out, "  %5.0f%8s%8s%8s%8s%8s |%8s%8s |%7.2f%5.0f%% |%7.3f%7.3f |%6s | %-14s%-6s%s\n", w->rate,
                units_fmt_rate(w->sent_rate, sr, sizeof sr), units_fmt_fixed(w->latency.p50, 1, b[0], 32),
                units_fmt_fixed(w->latency.p95, 1, b[1], 32), units_fmt_fixed(w->latency.p99, 1, b[2], 32),
                units_fmt_fixed(w->latency.mean, 1, b[3], 32), units_fmt_fixed(w->mm1_mean_ms, 1, b[4], 32),
                units_fmt_fixed(w->md1_mean_ms, 1, b[5], 32), w->work_mean_ms,
                100 * w->sent_rate * w->work_mean_ms / 1e3, w->l_measured, w->l_little, gen, flag, lit,
                w->valid.generator_limited ? "  ! GENERATOR-LIMITED" : "");
    }
    fprintf(out,
            "  (ms; p50..mean from the planned send; M/M/1 = 1/(μ−λ), M/D/1 = D + ρD/(2(1−ρ)) with D = 10 ms;\n"
            "   work = the server's own time per request (Server-Timing), busy = sent/s × work;\n"
            "   L = in-flight requests at the server, time-averaged; λ·W = sent/s × mean send->response time;\n"
            "   gen = knee's own threads' CPU over the round, %% of one core; ! over the lab's budget of %.0f%%)\n",
            100 * RUN_GENERATOR_CPU_BUDGET);
    for (size_t i = 0; i < r->nrows; i++)
        if (r->row[i].valid.generator_limited)
            fprintf(out, "  ! %.0f/s: %s\n", r->row[i].rate, r->row[i].valid.warning);
}

/* Utilisation from what the server measured: sent/s × its own time per request. */
static double busy(const struct lab_knee_row *w)
{
    return w->sent_rate * w->work_mean_ms / 1e3;
}

/* A row knee run did not call generator-limited: only those carry conclusions. */
static bool clean(const struct lab_knee_row *w)
{
    return !w->valid.generator_limited;
}

/* The rows knee run called generator-limited, said first. Returns true when no row is left
 * to conclude from. */
static bool say_generator_limited(struct lab_say *s, FILE *out, const struct lab_knee_result *r, size_t *ngl)
{
    *ngl = 0;
    for (size_t i = 0; i < r->nrows; i++)
        *ngl += !clean(&r->row[i]);
    if (*ngl == 0)
        return false;
    lab_say_add(s, "generator-limited (knee run's verdict, under the table):");
    for (size_t i = 0, k = 0; i < r->nrows; i++)
        if (!clean(&r->row[i]))
            lab_say_add(s, "%s %.0f/s", k++ ? "," : "", r->row[i].rate);
    lab_say_add(s,
                " — knee fell behind its plan there, so those rows measure knee's delay as much as the "
                "server's; the sentences below leave them out%s",
                *ngl == r->nrows ? ", which leaves nothing to conclude from." : ".");
    lab_say_end(s, out);
    return *ngl == r->nrows;
}

/* The trend up to the knee: from the first clean row (*lo) to the highest clean row the server
 * could still carry (*hi, busy < 100%; NULL when there is none), then the first clean row at or
 * past its capacity. */
static void say_trend(struct lab_say *s, FILE *out, const struct lab_knee_result *r, const struct lab_knee_row **lo,
                      const struct lab_knee_row **hi)
{
    *lo = *hi = NULL;
    for (size_t i = 0; i < r->nrows; i++) {
        if (!clean(&r->row[i]))
            continue;
        if (!*lo)
            *lo = &r->row[i];
        else if (busy(&r->row[i]) < OVERLOAD)
            *hi = &r->row[i];
    }
    const struct lab_knee_row *l = *lo, *h = *hi;
    if (h) {
        double gp = h->latency.p99 / l->latency.p99, gm = h->latency.mean / l->latency.mean;
        lab_say_add(s, "from %.0f/s to %.0f/s, p99 grew %.1f× (%.1f -> %.1f ms) and the mean %.1f× (%.1f -> %.1f ms)",
                    l->rate, h->rate, gp, l->latency.p99, h->latency.p99, gm, l->latency.mean, h->latency.mean);
        lab_say_verdict(s, out, gp > gm, ": the high percentiles move first, the mean last.",
                        ": in this run p99 did not outgrow the mean.");
    }
    for (size_t i = 0; i < r->nrows; i++) {
        const struct lab_knee_row *w = &r->row[i];
        if (busy(w) < OVERLOAD || !clean(w))
            continue;
        lab_say_add(s,
                    "at %.0f/s the server was busy %.0f%% of the time by its own clock (%.2f ms per request): at "
                    "or past its real capacity the queue cannot settle (p50 %.1f ms), and no queueing model has a "
                    "steady state to predict.",
                    w->rate, 100 * busy(w), w->work_mean_ms, w->latency.p50);
        lab_say_end(s, out);
        break;
    }
}

/* The clean row nearest 70/s (the article's "70% busy" point) against the work and M/M/1. */
static void say_seventy(struct lab_say *s, FILE *out, const struct lab_knee_result *r, const struct lab_knee_row *lo)
{
    const struct lab_knee_row *k = lo;
    for (size_t i = 0; i < r->nrows; i++)
        if (clean(&r->row[i]) && fabs(r->row[i].rate - 70) < fabs(k->rate - 70))
            k = &r->row[i];
    lab_say_add(s,
                "at %.0f/s (%.0f%% of the nominal capacity, %.0f%% busy as measured) p99 was %.1f ms, %.1f× the "
                "10 ms of work; M/M/1 puts the mean at %.1f ms, measured %.1f ms.",
                k->rate, k->rate, 100 * busy(k), k->latency.p99, k->latency.p99 / 10, k->mm1_mean_ms, k->latency.mean);
    lab_say_end(s, out);
}

/* Where the measured mean parts from M/M/1, and which model is closer at *hi, where queueing
 * matters and a steady state exists. */
static void say_models(struct lab_say *s, FILE *out, const struct lab_knee_result *r, size_t ngl,
                       const struct lab_knee_row *hi)
{
    size_t nparts = 0;
    for (size_t i = 0; i < r->nrows; i++)
        nparts += clean(&r->row[i]) && !model_close(&r->row[i]);
    if (nparts == 0)
        lab_say_add(s, "the measured mean stayed within 25%% of M/M/1 on every %srow.", ngl ? "clean " : "");
    else {
        lab_say_add(s, "model and measurement part (the mean more than 25%% from M/M/1) at");
        for (size_t i = 0, k2 = 0; i < r->nrows; i++)
            if (clean(&r->row[i]) && !model_close(&r->row[i]))
                lab_say_add(s, "%s %.0f/s (%.1f vs %.1f ms)", k2++ ? "," : "", r->row[i].rate, r->row[i].latency.mean,
                            r->row[i].mm1_mean_ms);
        lab_say_add(s, ".");
    }
    lab_say_end(s, out);
    if (!hi || isnan(hi->mm1_mean_ms) || isnan(hi->md1_mean_ms))
        return;
    double em = fabs(hi->latency.mean - hi->mm1_mean_ms), ed = fabs(hi->latency.mean - hi->md1_mean_ms);
    if (fmin(em / hi->mm1_mean_ms, ed / hi->md1_mean_ms) > 0.5)
        lab_say_add(s,
                    "at %.0f/s neither model is close (measured %.1f ms, M/M/1 %.1f, M/D/1 %.1f): the server was "
                    "busy %.0f%% by its own clock (%.2f ms per request), not the nominal %.0f%% — near the knee a "
                    "small stretch of the service time moves the mean a lot.",
                    hi->rate, hi->latency.mean, hi->mm1_mean_ms, hi->md1_mean_ms, 100 * busy(hi), hi->work_mean_ms,
                    hi->rate);
    else if (ed < em)
        lab_say_add(s,
                    "at %.0f/s M/D/1 (%.1f ms) is closer than M/M/1 (%.1f ms) to the measured %.1f ms: this "
                    "server's work is nearly constant, and M/M/1 assumes exponential service times, which "
                    "doubles the waiting.",
                    hi->rate, hi->md1_mean_ms, hi->mm1_mean_ms, hi->latency.mean);
    else
        lab_say_add(s,
                    "at %.0f/s M/M/1 (%.1f ms) is closer than M/D/1 (%.1f ms) to the measured %.1f ms: the "
                    "service times varied more than 10 ms of CPU would (mean work %.2f ms; a shared machine "
                    "stretches them).",
                    hi->rate, hi->mm1_mean_ms, hi->md1_mean_ms, hi->latency.mean, hi->work_mean_ms);
    lab_say_end(s, out);
}

/* Little's law, L at the server against λ·W at the client, on every row. */
static void say_little(struct lab_say *s, FILE *out, const struct lab_knee_result *r)
{
    size_t off = 0, off_steady = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        off += !little_holds(&r->row[i]);
        off_steady += !little_holds(&r->row[i]) && busy(&r->row[i]) < OVERLOAD;
    }
    if (off == 0)
        lab_say_add(s,
                    "Little's law L = λ·W held on all %zu rows within 10%%, with L counted at the server and λ, W "
                    "at the client: the measurements agree with each other.",
                    r->nrows);
    else {
        lab_say_add(s, "Little's law held on %zu of %zu rows; off at", r->nrows - off, r->nrows);
        for (size_t i = 0; i < r->nrows; i++)
            if (!little_holds(&r->row[i]))
                lab_say_add(s, " %.0f/s", r->row[i].rate);
        if (off_steady == 0)
            lab_say_add(s, ", where the server was overloaded: over a finite window with a growing queue, the "
                           "requests still waiting at its end make λ·W exceed the time-averaged L.");
        else
            lab_say_add(s, ": the server's gauge and the client disagree there, so one of the measurements is off.");
    }
    lab_say_end(s, out);
}

/* knee's own CPU share per round against the lab's budget (and the in-flight sampler's). */
static void say_generator_cpu(struct lab_say *s, FILE *out, const struct lab_knee_result *r)
{
    const struct lab_knee_row *cpurow = NULL;
    size_t nover = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const struct lab_knee_row *w = &r->row[i];
        if (!(w->valid.gen_cpu_share > 0))
            continue; /* not measured */
        nover += w->valid.gen_cpu_over;
        if (!cpurow || w->valid.gen_cpu_share > cpurow->valid.gen_cpu_share)
            cpurow = w;
    }
    double sampler = 0;
    for (size_t i = 0; i < r->nrows; i++)
        if (r->row[i].sampler_cpu_share > sampler)
            sampler = r->row[i].sampler_cpu_share;
    if (cpurow && nover == 0) {
        lab_say_add(
            s,
            "knee's own threads took at most %.1f%% of one core per round (at %.0f/s), under the lab's %.0f%% budget",
            100 * cpurow->valid.gen_cpu_share, cpurow->rate, 100 * RUN_GENERATOR_CPU_BUDGET);
        if (sampler > 0)
            lab_say_add(s, ", and the in-flight sampler at most %.1f%%", 100 * sampler);
        lab_say_add(s, ", against the server's own %.0f%% busy at that rate.", 100 * busy(cpurow));
        lab_say_end(s, out);
    } else if (cpurow) {
        lab_say_add(s, "knee's own threads took more than the lab's %.0f%% budget of one core at",
                    100 * RUN_GENERATOR_CPU_BUDGET);
        for (size_t i = 0, k2 = 0; i < r->nrows; i++)
            if (r->row[i].valid.gen_cpu_over)
                lab_say_add(s, "%s %.0f/s (%.1f%%)", k2++ ? "," : "", r->row[i].rate,
                            100 * r->row[i].valid.gen_cpu_share);
        lab_say_add(s, ": there the server in this process shared the machine's cores with it, so its work per request "
                       "may be stretched by the generator as well as by other processes (the work column shows the "
                       "stretch from every cause).");
        lab_say_end(s, out);
    }
}

/* The machine: the work's wall time per request, knee's own CPU share (and the sampler's)
 * against the lab's budget, and knee's send lag. */
static void say_machine(struct lab_say *s, FILE *out, const struct lab_knee_result *r)
{
    double worst_work = 0, worst_lag = 0;
    const struct lab_knee_row *lagrow = NULL;
    for (size_t i = 0; i < r->nrows; i++) {
        worst_work = fmax(worst_work, r->row[i].work_mean_ms);
        if (r->row[i].lag_p99_ms > worst_lag) {
            worst_lag = r->row[i].lag_p99_ms;
            lagrow = &r->row[i];
        }
    }
    if (worst_work > 11) {
        lab_say_add(s,
                    "the 10 ms of CPU took up to %.1f ms of wall time per request (the machine is shared): the real "
                    "capacity was about %.0f/s, not 100/s.",
                    worst_work, 1e3 / worst_work);
        lab_say_end(s, out);
    }
    say_generator_cpu(s, out, r);
    if (lagrow && (worst_lag > 1 || !clean(lagrow))) {
        lab_say_add(s, "knee's own send lag reached p99 %.1f ms at %.0f/s", worst_lag, lagrow->rate);
        lab_say_verdict(s, out, clean(lagrow),
                        "; knee run still calls that round valid, and latency is timed from the plan, so that lag is "
                        "in the numbers, not hidden.",
                        ", where knee run calls the round GENERATOR-LIMITED: latency is timed from the plan, so the "
                        "lag is in that row's numbers, which is why it is left out above.");
    }
}

void lab_knee_explain(FILE *out, const struct lab_knee_result *r)
{
    lab_heading(out, "what this run shows");
    if (r->nrows < 2)
        return;
    struct lab_say s = {.n = 0};
    size_t ngl;
    if (say_generator_limited(&s, out, r, &ngl))
        return;
    const struct lab_knee_row *lo, *hi;
    say_trend(&s, out, r, &lo, &hi);
    say_seventy(&s, out, r, lo);
    say_models(&s, out, r, ngl, hi);
    say_little(&s, out, r);
    say_machine(&s, out, r);
}

int lab_knee(const struct lab_options *o, struct lab_knee_result *r)
{
    memset(r, 0, sizeof *r);
    const double *rates = o->rates ? o->rates : o->quick ? quick_rates : default_rates;
    size_t nrates = o->rates   ? o->nrates
                    : o->quick ? sizeof quick_rates / sizeof *quick_rates
                               : sizeof default_rates / sizeof *default_rates;
    if (nrates == 0 || nrates > LAB_MAX_RATES)
        return KNEE_EINVAL;
    for (size_t i = 0; i < nrates; i++)
        if (!(rates[i] > 0) || !isfinite(rates[i]))
            return KNEE_EINVAL;
    struct lab_exp x;
    int rc = lab_exp_open(&x, o, "knee", &lengths);
    if (rc)
        return rc;
    struct serve_config cfg;
    if ((rc = lab_exp_preset(&x, "flat", o->seed, &cfg)) != 0)
        goto out;
    struct serve_handle *srv = x.srv[0];
    FILE *out = x.out;
    fprintf(out,
            "knee lab knee: where the knee is (%zu rate%s, Poisson arrivals, %.0f s each after a %.1f s warm-up)\n",
            nrates, nrates == 1 ? "" : "s", (double)x.dur_ns / 1e9, (double)x.warm_ns / 1e9);
    fprintf(out, "  flat server %s: %s\n", serve_address(srv), serve_preset_summary("flat"));
    fflush(out);
    char url[160];
    snprintf(url, sizeof url, "http://%s/", serve_address(srv));
    for (size_t i = 0; i < nrates; i++) {
        struct plan_target t;
        memset(&t, 0, sizeof t);
        t.name = "flat";
        t.url = url;
        struct run_config rc_cfg;
        lab_run_config_init(&rc_cfg, &t, 1, o->seed + i, x.dur_ns, x.warm_ns);
        rc_cfg.plan.open_loop = true;
        rc_cfg.plan.rate = rates[i];
        rc_cfg.plan.arrivals = RUN_ARRIVALS_POISSON;

        struct sampler s;
        int prc = sampler_start(&s, srv, x.warm_ns, x.dur_ns);
        if (prc) {
            fprintf(x.c.err, "knee lab: cannot start the in-flight sampler: %s\n", strerror(prc));
            rc = -prc;
            goto out;
        }
        char name[32], what[128];
        snprintf(name, sizeof name, "%g", rates[i]);
        snprintf(what, sizeof what, "rate %zu of %zu: %g/s for %.0f s", i + 1, nrates, rates[i],
                 (double)(x.dur_ns + x.warm_ns) / 1e9);
        rc = lab_round_run(&x.c, name, what, &rc_cfg, &x.rd);
        sampler_stop(&s);
        if (rc)
            goto out;
        lab_knee_fill_row(&x.rd, rates[i], s.n, s.span_ns ? s.integral_ns / (double)s.span_ns : NAN, &r->row[i]);
        r->row[i].sampler_cpu_share = s.wall_ns ? (double)s.cpu_ns / (double)s.wall_ns : NAN;
        r->nrows = i + 1;
        lab_round_release(&x.rd);
    }
    print_table(out, r);
    lab_print_cpu_summary(out, &x.c);
    lab_knee_explain(out, r);
    fflush(out);
out:
    lab_exp_close(&x);
    return rc;
}
