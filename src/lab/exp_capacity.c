/* knee lab capacity (the capacity article): one bad window steers a search, a vote absorbs
 * it. The server is knee serve's stall preset; every window is one round of the lab toolkit
 * (Poisson arrivals), judged as knee capacity judges a step (capacity_step_eval: delivered
 * and the ok responses' p99 within the SLO). The search is the article's: double from 250/s
 * while a window passes, halve while the first ones fail, then bisect down to 125/s; its
 * answer is the highest rate that passed, and a run's answer the median of its repetitions.
 * The ladder is knee's: fixed rates, every repetition the same, a rate held by a strict
 * majority (capacity_vote). Then the cross-check's regime (issue 25) on knee serve's flat
 * preset: one ladder of Poisson windows and one closed loop, both judged against a tight and a
 * loose SLO, and knee capacity's own cross-check of each (capacity_queue_run,
 * capacity_compare, capacity_judge, capacity_print_cross): the regime, and why. */
#include "lab/internal.h"
#include "lab/lab_capacity.h"

#include "capacity/capacity.h"
#include "core/err.h"
#include "core/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CAP_SLO "p99<50ms"
#define CAP_SLO_MS 50.0
/* A hard --lag-limit for every window: knee run's relative rule (a lag p99 above 1 ms and a
 * tenth of the latency) would fail the stall server's 2-3 ms windows whenever a shared
 * machine's timer runs a few ms late, and the generator's lateness is not the lesson here. */
#define CAP_LAG_LIMIT_NS (10 * NS_PER_MS)
#define CAP_START 250.0      /* the search's first rate */
#define CAP_RESOLUTION 125.0 /* the search stops when its bracket is this narrow */
#define CAP_DEFAULT_NS (1 * NS_PER_S)
#define CAP_QUICK_NS (NS_PER_S / 2)
#define CAP_WARMUP_NS (NS_PER_S / 2)
#define CAP_WARMUP_QUICK_NS (NS_PER_S / 4)

static const struct lab_lengths lengths = {CAP_QUICK_NS, CAP_DEFAULT_NS, CAP_WARMUP_QUICK_NS, CAP_WARMUP_NS};

static const double ladder_rates[] = {250, 500, 750, 1000, 1250, 1500, 1750};
#define NLADDER (sizeof ladder_rates / sizeof ladder_rates[0])
_Static_assert(NLADDER <= LAB_CAP_MAX_RATES, "the ladder fits the result");

struct cap_ctx {
    struct lab_exp e; /* the stall server is e.srv[0] */
    char url[160];
    uint64_t seed;
    size_t nround; /* rounds so far: the seed of the next */
};

/* Idle a quarter of a window before each one, so that the last one's queue drains. */
static void settle(const struct cap_ctx *x)
{
    uint64_t ns = x->e.dur_ns / 4;
    struct timespec ts = {(time_t)(ns / NS_PER_S), (long)(ns % NS_PER_S)};
    nanosleep(&ts, NULL);
}

/* One window at `rate`: held (delivered and p99 within the SLO) into *pass; whether the server
 * began a stall during it, its warm-up or the settle before it (a stall's backlog spills into
 * the window either way) into *stalled. */
static int window(struct cap_ctx *x, const char *name, const char *what, double rate, bool *pass, bool *stalled)
{
    struct plan_target t;
    memset(&t, 0, sizeof t);
    t.name = "stall";
    t.url = x->url;
    struct run_config cfg;
    lab_run_config_init(&cfg, &t, 1, x->seed + x->nround++, x->e.dur_ns, x->e.warm_ns);
    cfg.plan.open_loop = true;
    cfg.plan.rate = rate;
    cfg.plan.arrivals = RUN_ARRIVALS_POISSON;
    cfg.lag_limit_ns = CAP_LAG_LIMIT_NS;
    struct run_threshold slo;
    char why[256];
    int rc = run_threshold_parse(CAP_SLO, &cfg, &slo, why, sizeof why);
    if (rc) {
        fprintf(x->e.c.err, "knee lab: %s: %s\n", CAP_SLO, why);
        return rc;
    }
    struct serve_counters before, after;
    serve_counters(x->e.srv[0], &before);
    settle(x);
    struct lab_round rd;
    rc = lab_round_run(&x->e.c, name, what, &cfg, &rd);
    serve_counters(x->e.srv[0], &after);
    if (rc == 0) {
        struct capacity_step s;
        capacity_step_eval(&rd.res, true, &slo, 1, &s);
        *pass = s.held;
        *stalled = after.pauses > before.pauses;
    }
    lab_round_release(&rd);
    return rc;
}

/* The article's search, one repetition. */
static int search(struct cap_ctx *x, size_t run, size_t rep, struct lab_cap_search *s)
{
    memset(s, 0, sizeof *s);
    double r = CAP_START, lo = 0, hi = INFINITY;
    while (s->nwindows < LAB_CAP_MAX_WINDOWS) {
        size_t w = s->nwindows;
        char name[48], what[128], rs[32];
        snprintf(name, sizeof name, "search-r%zu-rep%zu-w%zu", run + 1, rep + 1, w + 1);
        snprintf(what, sizeof what, "search, run %zu, repetition %zu, window %zu: %s/s", run + 1, rep + 1, w + 1,
                 capacity_fmt_rate(r, rs, sizeof rs));
        s->rate[w] = r;
        int rc = window(x, name, what, r, &s->pass[w], &s->stalled[w]);
        if (rc)
            return rc;
        s->nwindows++;
        if (s->pass[w])
            lo = r;
        else
            hi = r;
        if (lo > 0 && isfinite(hi) && hi - lo <= CAP_RESOLUTION)
            break;
        r = isinf(hi) ? 2 * r : lo == 0 ? r / 2 : (lo + hi) / 2;
        if (r < 1)
            break;
    }
    s->answer = lo;
    return 0;
}

_Static_assert(LAB_CAP_REPS == 3, "median3 takes the median of three");
static double median3(const double *v)
{
    double a = v[0], b = v[1], c = v[2];
    return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

/* knee's ladder, one run: every repetition climbs every rate; the vote decides. */
static int ladder(struct cap_ctx *x, size_t run, struct lab_capacity_result *r)
{
    struct capacity_result cr;
    capacity_result_init(&cr, ladder_rates, NLADDER, LAB_CAP_REPS);
    int rc = 0;
    for (size_t rep = 0; rep < LAB_CAP_REPS && rc == 0; rep++) {
        cr.reps[rep].ran = cr.reps[rep].valid = true;
        double alone = 0;
        bool climbing = true;
        for (size_t k = 0; k < NLADDER && rc == 0; k++) {
            char name[48], what[128], rs[32];
            snprintf(name, sizeof name, "ladder-r%zu-rep%zu-%g", run + 1, rep + 1, ladder_rates[k]);
            snprintf(what, sizeof what, "ladder, run %zu, repetition %zu: %s/s", run + 1, rep + 1,
                     capacity_fmt_rate(ladder_rates[k], rs, sizeof rs));
            bool pass = false, stalled = false;
            rc = window(x, name, what, ladder_rates[k], &pass, &stalled);
            cr.reps[rep].step[k].ran = rc == 0;
            cr.reps[rep].step[k].held = pass;
            r->held[run][rep][k] = pass;
            r->stalled[run][rep][k] = stalled;
            climbing &= pass;
            if (climbing)
                alone = ladder_rates[k];
        }
        r->ladder_rep[run][rep] = alone;
    }
    if (rc == 0) {
        capacity_vote(&cr);
        r->ladder_vote[run] = cr.vote.cap_index >= 0 ? cr.vote.capacity : 0;
        r->ladder_nonmono[run] = cr.vote.nnonmono;
    }
    capacity_result_release(&cr);
    return rc;
}

/* The vote over every ladder repetition of every run: the reference the runs are read against. */
static void pool(struct lab_capacity_result *r)
{
    struct capacity_result cr;
    capacity_result_init(&cr, r->rates, r->nrates, r->nruns * LAB_CAP_REPS);
    for (size_t run = 0; run < r->nruns; run++)
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++) {
            struct capacity_rep *p = &cr.reps[run * LAB_CAP_REPS + rep];
            p->ran = p->valid = true;
            for (size_t k = 0; k < r->nrates; k++) {
                p->step[k].ran = true;
                p->step[k].held = r->held[run][rep][k];
            }
        }
    capacity_vote(&cr);
    r->pooled = cr.vote.cap_index >= 0 ? cr.vote.capacity : 0;
    capacity_result_release(&cr);
}

#define rate_s capacity_fmt_rate

/* A vote: its rate, or "<250" when not even the lowest rate was held. */
static const char *vote_s(const struct lab_capacity_result *r, double v, char *buf, size_t len)
{
    if (v > 0)
        return rate_s(v, buf, len);
    char low[32];
    snprintf(buf, len, "<%s", rate_s(r->rates[0], low, sizeof low));
    return buf;
}

static void spread(const double *v, size_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0;
    for (size_t i = 0; i < n; i++) {
        *lo = fmin(*lo, v[i]);
        *hi = fmax(*hi, v[i]);
    }
}

static void print_search(FILE *out, const struct lab_capacity_result *r)
{
    lab_heading(out,
                "the article's method: double from %.0f/s while a window passes, then bisect to %.0f/s; the "
                "median of %d repetitions",
                CAP_START, CAP_RESOLUTION, LAB_CAP_REPS);
    for (size_t run = 0; run < r->nruns; run++) {
        char b[32];
        fprintf(out, "  run %zu:", run + 1);
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++)
            fprintf(out, "  %8s", rate_s(r->search[run][rep].answer, b, sizeof b));
        fprintf(out, "  -> median %s/s\n", rate_s(r->search_median[run], b, sizeof b));
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++) {
            const struct lab_cap_search *s = &r->search[run][rep];
            fprintf(out, "         rep %zu asked:", rep + 1);
            for (size_t w = 0; w < s->nwindows; w++)
                fprintf(out, " %s%s%s", rate_s(s->rate[w], b, sizeof b), s->pass[w] ? "✔" : "✘",
                        s->stalled[w] ? "(stall)" : "");
            fputc('\n', out);
        }
    }
}

static void print_ladder(FILE *out, const struct lab_capacity_result *r)
{
    char b[32];
    lab_heading(out, "knee's ladder: %zu fixed rates, %d repetitions, a rate held by a strict majority", r->nrates,
                LAB_CAP_REPS);
    for (size_t run = 0; run < r->nruns; run++) {
        fprintf(out, "  run %zu:  %10s", run + 1, "rate/s");
        for (size_t k = 0; k < r->nrates; k++)
            fprintf(out, " %11s", rate_s(r->rates[k], b, sizeof b));
        fprintf(out, "   alone\n");
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++) {
            fprintf(out, "          %10s", "");
            fprintf(out, "rep %zu", rep + 1);
            for (size_t k = 0; k < r->nrates; k++) {
                const char *m = r->held[run][rep][k] ? "✔" : "✘";
                fprintf(out, " %*s%s%s", r->stalled[run][rep][k] ? 3 : 10, "", m,
                        r->stalled[run][rep][k] ? "(stall)" : "");
            }
            fprintf(out, "   %s\n", rate_s(r->ladder_rep[run][rep], b, sizeof b));
        }
        fprintf(out, "          -> vote %s/s%s\n", vote_s(r, r->ladder_vote[run], b, sizeof b),
                r->ladder_nonmono[run] ? " (non-monotone: a rate held above a failed one)" : "");
    }
}

static void print_side(FILE *out, const struct lab_capacity_result *r)
{
    lab_heading(out, "side by side: the answer of each run");
    char b[32], b2[32];
    double lo, hi;
    fprintf(out, "  %-34s", "search (median of 3 repetitions)");
    for (size_t run = 0; run < r->nruns; run++)
        fprintf(out, " %8s", rate_s(r->search_median[run], b, sizeof b));
    spread(r->search_median, r->nruns, &lo, &hi);
    fprintf(out, "   spread %s..%s/s\n", rate_s(lo, b, sizeof b), rate_s(hi, b2, sizeof b2));
    fprintf(out, "  %-34s", "ladder (majority of 3 repetitions)");
    for (size_t run = 0; run < r->nruns; run++)
        fprintf(out, " %8s", vote_s(r, r->ladder_vote[run], b, sizeof b));
    spread(r->ladder_vote, r->nruns, &lo, &hi);
    fprintf(out, "   spread %s..%s/s\n", vote_s(r, lo, b, sizeof b), vote_s(r, hi, b2, sizeof b2));
    double all[LAB_CAP_MAX_RUNS * LAB_CAP_REPS];
    size_t n = 0;
    for (size_t run = 0; run < r->nruns; run++)
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++)
            all[n++] = r->search[run][rep].answer;
    spread(all, n, &lo, &hi);
    fprintf(out, "  %-34s %s..%s/s over %zu repetitions\n", "search, single repetitions", rate_s(lo, b, sizeof b),
            rate_s(hi, b2, sizeof b2), n);
    n = 0;
    for (size_t run = 0; run < r->nruns; run++)
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++)
            all[n++] = r->ladder_rep[run][rep];
    spread(all, n, &lo, &hi);
    fprintf(out, "  %-34s %s..%s/s over %zu repetitions\n", "ladder, single repetitions", rate_s(lo, b, sizeof b),
            rate_s(hi, b2, sizeof b2), n);
    fprintf(out, "  %-34s %s/s\n", "ladder, every repetition pooled", rate_s(r->pooled, b, sizeof b));
}

static void explain(FILE *out, const struct lab_capacity_result *r)
{
    lab_heading(out, "what this run shows");
    struct lab_say s = {.n = 0};
    char a[32], b[32], c[32], d[32], e[32];
    /* windows that met a stall, and what they did to each method */
    size_t sw = 0, sw_stalled = 0, sw_stalled_failed = 0, steered = 0, nsearch = 0;
    double ref = r->pooled;
    for (size_t run = 0; run < r->nruns; run++)
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++) {
            const struct lab_cap_search *q = &r->search[run][rep];
            nsearch++;
            bool hit = false;
            for (size_t w = 0; w < q->nwindows; w++) {
                sw++;
                sw_stalled += q->stalled[w];
                if (q->stalled[w] && !q->pass[w] && q->rate[w] <= ref) {
                    sw_stalled_failed++;
                    hit = true;
                }
            }
            /* steered: a stalled window failed below the reference and the answer fell more
             * than one ladder step (250/s) below it */
            steered += hit && q->answer < ref - 250;
        }
    size_t lw = 0, lw_stalled = 0, lw_failed_stalled = 0;
    for (size_t run = 0; run < r->nruns; run++)
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++)
            for (size_t k = 0; k < r->nrates; k++) {
                lw++;
                lw_stalled += r->stalled[run][rep][k];
                lw_failed_stalled += r->stalled[run][rep][k] && !r->held[run][rep][k] && r->rates[k] <= ref;
            }
    lab_say_add(&s,
                "the server stalled %llu times (its lock held 300 ms at random moments); %zu of the search's %zu "
                "windows and %zu of the ladder's %zu met a stall, and %zu + %zu of those failed the SLO at a rate the "
                "server carries (the vote over all %zu ladder repetitions: %s/s).",
                (unsigned long long)r->stalls, sw_stalled, sw, lw_stalled, lw, sw_stalled_failed, lw_failed_stalled,
                r->nruns * LAB_CAP_REPS, rate_s(ref, a, sizeof a));
    lab_say_end(&s, out);

    double slo_lo, slo_hi, lad_lo, lad_hi;
    spread(r->search_median, r->nruns, &slo_lo, &slo_hi);
    spread(r->ladder_vote, r->nruns, &lad_lo, &lad_hi);
    lab_say_add(&s,
                "%zu of %zu search repetitions met a stall in a window that failed and answered more than one "
                "ladder step below %s/s",
                steered, nsearch, rate_s(ref, a, sizeof a));
    lab_say_verdict(
        &s, out, steered > 0,
        ": with no success yet to bisect from, or a bracket cut short, the search turns one bad window into "
        "its verdict and spends the rest of its windows confirming it.",
        ": in this run no stall fell on a window the search needed; run it again (--seed) to see one.");
    size_t off_ladder = 0, off_flagged = 0, off_search = 0;
    for (size_t run = 0; run < r->nruns; run++) {
        bool off = fabs(r->ladder_vote[run] - ref) > 250;
        off_ladder += off;
        off_flagged += off && r->ladder_nonmono[run] > 0;
        off_search += fabs(r->search_median[run] - ref) > 250;
    }
    lab_say_add(&s,
                "the medians of 3 searches ranged from %s to %s/s (%zu of %zu more than one ladder step from %s/s); "
                "the ladder's votes from %s to %s/s (%zu of %zu)",
                rate_s(slo_lo, a, sizeof a), rate_s(slo_hi, b, sizeof b), off_search, r->nruns,
                rate_s(ref, c, sizeof c), rate_s(lad_lo, d, sizeof d), rate_s(lad_hi, e, sizeof e), off_ladder,
                r->nruns);
    if (off_ladder == 0)
        lab_say_verdict(&s, out, true,
                        ": a stalled window costs the ladder one vote at one rate, and the majority absorbs it.", "");
    else if (off_flagged == off_ladder)
        lab_say_verdict(&s, out, true,
                        ": the ladder's outlying vote came with a warning — two bad windows fell on one rate in one "
                        "run while faster rates still held, which knee capacity reports as non-monotone; a search's "
                        "answer comes with none.",
                        "");
    else {
        lab_say_add(&s, ": here the ladder was moved too");
        if (off_flagged)
            lab_say_add(&s, " (%zu of those %zu runs with a non-monotone warning)", off_flagged, off_ladder);
        lab_say_verdict(&s, out, false, "", ": more bad windows than one per rate and run.");
    }
    /* bad windows that no stall explains: the machine */
    size_t quiet_fail = 0, quiet_n = 0;
    for (size_t run = 0; run < r->nruns; run++)
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++) {
            const struct lab_cap_search *q = &r->search[run][rep];
            for (size_t w = 0; w < q->nwindows; w++)
                if (!q->stalled[w] && q->rate[w] <= ref) {
                    quiet_n++;
                    quiet_fail += !q->pass[w];
                }
            for (size_t k = 0; k < r->nrates; k++)
                if (!r->stalled[run][rep][k] && r->rates[k] <= ref) {
                    quiet_n++;
                    quiet_fail += !r->held[run][rep][k];
                }
        }
    lab_say_add(&s,
                "%zu of the %zu windows without a stall at rates up to %s/s failed anyway (load average %.1f "
                "before, %.1f after)",
                quiet_fail, quiet_n, rate_s(ref, a, sizeof a), r->loadavg_before, r->loadavg_after);
    lab_say_verdict(&s, out, quiet_fail * 20 > quiet_n,
                    ": the machine itself produced bad windows — the article's host that lied; knee capacity's "
                    "probe and environment record are there to catch it.",
                    ": the stalls, not the machine, made the bad windows.");
    size_t nm = 0;
    for (size_t run = 0; run < r->nruns; run++)
        nm += r->ladder_nonmono[run] > 0;
    if (nm) {
        lab_say_add(&s,
                    "in %zu run%s a rate was held above one that failed: knee capacity names such rates as "
                    "non-monotone instead of using them.",
                    nm, nm == 1 ? "" : "s");
        lab_say_end(&s, out);
    }
    lab_say_add(&s, "knee capacity adds two checks this part leaves out: a calibration probe before each "
                    "repetition (is the generator able to send the top rate?) and a closed-loop cross-check, shown "
                    "next on another server (knee capacity --help).");
    lab_say_end(&s, out);
}

/* ---- the cross-check's regime on the flat server ---- */

static const double flat_rates[LAB_CAP_FLAT_RATES] = {50, 60, 70, 80, 90, 100, 110};
static const char *const flat_slo[LAB_CAP_NSLO] = {"p90<50ms", "p90<100ms"};
/* The flat part's windows: longer than the stall part's, so that a p90 has a hundred requests
 * behind it and a rate above the service's 100/s builds a queue the looser SLO sees. */
#define FLAT_DEFAULT_NS (2 * NS_PER_S)
#define FLAT_QUICK_NS (1 * NS_PER_S)
#define FLAT_WARMUP_NS (NS_PER_S / 2)

/* The flat server's measurement against both SLOs: the capacity config and result of each. */
struct flat {
    uint64_t dur_ns; /* each window after its warm-up (FLAT_WARMUP_NS) */
    struct plan_target t;
    struct run_config base;
    struct run_threshold slo[LAB_CAP_NSLO];
    struct capacity_config cfg[LAB_CAP_NSLO];
    struct capacity_result cr[LAB_CAP_NSLO];
};

/* One window against the flat server: the ladder's (open loop, Poisson, rate) or the closed
 * loop's (connections), judged against each SLO into step[i]; the closed loop's first window
 * keeps its service times (capacity_service_keep) for each SLO's queue model. */
static int flat_window(struct cap_ctx *x, struct flat *f, double rate, uint32_t conns,
                       struct capacity_step *step[LAB_CAP_NSLO])
{
    struct run_config cfg = f->base;
    char name[48], what[128], rs[32];
    if (conns) {
        cfg.plan.open_loop = false;
        cfg.plan.rate = 0;
        cfg.plan.arrivals = RUN_ARRIVALS_CONSTANT;
        cfg.plan.connections = conns;
        snprintf(name, sizeof name, "flat-closed-c%u", conns);
        snprintf(what, sizeof what, "flat server, closed loop: %u connection%s", conns, conns == 1 ? "" : "s");
    } else {
        cfg.plan.rate = rate; /* every rung the same seed, as knee capacity's: the queue model replays it */
        snprintf(name, sizeof name, "flat-ladder-%g", rate);
        snprintf(what, sizeof what, "flat server, ladder: %s/s", capacity_fmt_rate(rate, rs, sizeof rs));
    }
    settle(x);
    struct lab_round rd;
    int rc = lab_round_run(&x->e.c, name, what, &cfg, &rd);
    if (rc == 0)
        for (size_t i = 0; i < LAB_CAP_NSLO; i++) {
            capacity_step_eval(&rd.res, !conns, &f->slo[i], 1, step[i]);
            if (conns)
                capacity_service_keep(&f->cfg[i], &rd.res, &f->cr[i]);
        }
    lab_round_release(&rd);
    return rc;
}

/* The ladder (one repetition) and the closed loop (1, 2, 4, ... connections until the loose SLO
 * fails: no SLO holds after that), each window judged against both SLOs. */
static int flat_measure(struct cap_ctx *x, struct flat *f)
{
    struct capacity_step *step[LAB_CAP_NSLO];
    int rc = 0;
    for (size_t k = 0; k < LAB_CAP_FLAT_RATES && rc == 0; k++) {
        for (size_t i = 0; i < LAB_CAP_NSLO; i++)
            step[i] = &f->cr[i].reps[0].step[k];
        rc = flat_window(x, f, flat_rates[k], 0, step);
    }
    bool open[LAB_CAP_NSLO] = {true, true}; /* the SLO's closed loop has not failed yet */
    uint32_t conns = 1;
    for (size_t k = 0; k < LAB_CAP_CLOSED_STEPS && rc == 0 && open[LAB_CAP_NSLO - 1]; k++, conns *= 2) {
        struct capacity_step s[LAB_CAP_NSLO];
        for (size_t i = 0; i < LAB_CAP_NSLO; i++)
            step[i] = &s[i];
        rc = flat_window(x, f, 0, conns, step);
        for (size_t i = 0; i < LAB_CAP_NSLO && rc == 0; i++) {
            struct capacity_cross *c = &f->cr[i].cross;
            if (!open[i])
                continue;
            c->step[c->nsteps++] = (struct capacity_closed_step){.connections = conns, .s = s[i]};
            if (s[i].held && (c->best < 0 || s[i].achieved > c->closed_loop)) {
                c->best = (int)k;
                c->closed_loop = s[i].achieved;
            }
            open[i] = s[i].held;
        }
    }
    return rc;
}

/* Set up both SLOs' configs and results over the flat server at url. */
static int flat_init(struct cap_ctx *x, struct flat *f, const char *url, uint64_t dur_ns)
{
    memset(f, 0, sizeof *f);
    f->dur_ns = dur_ns;
    f->t.name = "flat";
    f->t.url = url;
    lab_run_config_init(&f->base, &f->t, 1, x->seed, f->dur_ns, FLAT_WARMUP_NS);
    f->base.plan.open_loop = true;
    f->base.plan.arrivals = RUN_ARRIVALS_POISSON;
    f->base.lag_limit_ns = CAP_LAG_LIMIT_NS;
    for (size_t i = 0; i < LAB_CAP_NSLO; i++) {
        char why[256];
        int rc = run_threshold_parse(flat_slo[i], &f->base, &f->slo[i], why, sizeof why);
        if (rc) {
            fprintf(x->e.c.err, "knee lab: %s: %s\n", flat_slo[i], why);
            return rc;
        }
        capacity_result_init(&f->cr[i], flat_rates, LAB_CAP_FLAT_RATES, 1);
        f->cr[i].reps[0].ran = f->cr[i].reps[0].valid = true;
        f->cr[i].cross.ran = true;
        f->cfg[i] = (struct capacity_config){.base = &f->base,
                                             .rates = flat_rates,
                                             .nrates = LAB_CAP_FLAT_RATES,
                                             .reps = 1,
                                             .step_ns = f->dur_ns,
                                             .warmup_ns = FLAT_WARMUP_NS,
                                             .slo = &f->slo[i],
                                             .nslo = 1,
                                             .cross_check = true};
    }
    return 0;
}

/* knee capacity's judgement of each SLO, printed as knee capacity prints its cross-check, and
 * kept in r->regime. */
static void flat_judge(FILE *out, struct flat *f, struct lab_capacity_result *r)
{
    for (size_t i = 0; i < LAB_CAP_NSLO; i++) {
        struct capacity_result *c = &f->cr[i];
        capacity_vote(c);
        capacity_queue_run(&f->cfg[i], c);
        capacity_compare(c, CAPACITY_DEFAULT_AGREE);
        capacity_judge(c, 0);
        struct lab_cap_regime *g = &r->regime[i];
        snprintf(g->slo, sizeof g->slo, "%s", flat_slo[i]);
        g->ladder = c->vote.cap_index >= 0 ? c->vote.capacity : 0;
        g->closed_loop = c->cross.closed_loop;
        g->bound = c->cross.bound;
        g->queue = c->cross.queue.ran ? c->cross.queue.capacity : NAN;
        g->servers = c->cross.queue.servers;
        g->regime = (int)c->cross.regime;
        g->agree = c->cross.agree;
        g->valid = c->verdict.valid;
        fprintf(out, "\n  SLO %s:", flat_slo[i]);
        capacity_print_cross(out, &f->cfg[i], c);
        fputc('\n', out);
        fputs("  ", out);
        capacity_print_verdict(out, &f->cfg[i], c);
    }
}

static void flat_release(struct flat *f)
{
    for (size_t i = 0; i < LAB_CAP_NSLO; i++)
        capacity_result_release(&f->cr[i]);
}

/* The ladder's answer for a sentence: "70/s", "below 50/s". */
static const char *flat_ladder_s(double v, char *buf, size_t len)
{
    char c[32];
    if (v > 0)
        return capacity_fmt_rate(v, buf, len);
    snprintf(buf, len, "below %s", capacity_fmt_rate(flat_rates[0], c, sizeof c));
    return buf;
}

/* Whether one SLO's judgement can carry a sentence about the regimes; when not, says why. A
 * machine slow enough (a sanitizer build, a busy host) that one connection's latencies already
 * break the SLO has no closed-loop throughput to bound anything with. */
static bool flat_usable(FILE *out, const struct lab_cap_regime *g)
{
    if (!g->valid) {
        fprintf(out, "  %s: knee capacity's verdict above is INVALID, so nothing is concluded from it.\n", g->slo);
        return false;
    }
    if (!isfinite(g->closed_loop) || !isfinite(g->queue)) {
        fprintf(out,
                "  %s: the closed loop held no step within the SLO (one connection's latencies already break it: "
                "this machine ran the 10 ms service too slowly to show the regimes), so nothing is concluded "
                "from it.\n",
                g->slo);
        return false;
    }
    return true;
}

/* The tight SLO's sentences: latency-bound, the queue model as the second method. */
static void flat_explain_tight(FILE *out, const struct lab_cap_regime *t)
{
    struct lab_say s = {.n = 0};
    char a[32], b[32], c[32];
    lab_say_add(&s,
                "with %s (five service times) the ladder held %s/s and the closed loop carried %s/s within the SLO: "
                "a closed loop waits for each answer, so it never builds the queue that random arrivals build",
                t->slo, flat_ladder_s(t->ladder, a, sizeof a), capacity_fmt_rate(t->closed_loop, b, sizeof b));
    lab_say_verdict(&s, out, t->regime == CAPACITY_REGIME_LATENCY,
                    "; the queue model of its service times breaks the SLO well below that throughput, so the run is "
                    "latency-bound: the closed loop only bounds the capacity from above, and the queue model is the "
                    "second method.",
                    "; here the queue model did not find the run latency-bound (the regime line above says why).");
    if (isfinite(t->queue)) {
        lab_say_add(
            &s,
            "the queue model predicts %s/s for %s (M/D/1 for the preset's 10 ms: 75.8/s in the steady state; the "
            "service this machine gave is in the queue model's lines above) and %s",
            capacity_fmt_rate(t->queue, c, sizeof c), t->slo,
            t->agree ? "agrees with the ladder" : "DISAGREES with the ladder");
        lab_say_verdict(&s, out, t->agree,
                        t->regime == CAPACITY_REGIME_LATENCY
                            ? ": compared with the closed loop instead, as knee capacity did before it had the queue "
                              "model, this answer would be INVALID."
                            : ".",
                        ": the machine stretched the service during one method and not the other (knee capacity's "
                        "environment record would say BUSY).");
    }
}

/* What the two regimes show, from what was measured. */
static void flat_explain(FILE *out, const struct lab_capacity_result *r)
{
    const struct lab_cap_regime *t = &r->regime[0], *l = &r->regime[1];
    struct lab_say s = {.n = 0};
    char a[32], b[32];
    if (flat_usable(out, t))
        flat_explain_tight(out, t);
    if (!flat_usable(out, l))
        return;
    lab_say_add(&s,
                "with %s (ten service times) the queue that the open loop builds in a window stays within the SLO "
                "nearly up to the service's own rate (the queue model: %s/s, the closed loop %s/s)",
                l->slo, capacity_fmt_rate(l->queue, a, sizeof a), capacity_fmt_rate(l->closed_loop, b, sizeof b));
    lab_say_verdict(&s, out, l->regime == CAPACITY_REGIME_THROUGHPUT,
                    ": throughput-bound, and the closed loop is a second measurement of the same capacity, as in the "
                    "article (whose SLO was many service times).",
                    ": here the queue model found it latency-bound all the same (the regime line above says why).");
}

/* The regime part: the flat server started beside the stall server, measured, judged, explained. */
static int flat_part(struct cap_ctx *x, bool quick, struct lab_capacity_result *r)
{
    uint64_t dur_ns = quick ? FLAT_QUICK_NS : FLAT_DEFAULT_NS;
    struct serve_config sc;
    int rc = lab_exp_preset(&x->e, "flat", x->seed, &sc);
    if (rc)
        return rc;
    char url[160];
    snprintf(url, sizeof url, "http://%s/", serve_address(x->e.srv[1]));
    memcpy(r->flat_rates, flat_rates, sizeof flat_rates);
    FILE *out = x->e.out;
    char d1[32], d2[32];
    lab_heading(out, "the cross-check's regime: the closed loop bounds the capacity; which method measures it");
    fprintf(out, "  flat server %s: %s\n", serve_address(x->e.srv[1]), serve_preset_summary("flat"));
    fprintf(out,
            "  one ladder of Poisson windows (%s/s, one repetition) and one closed loop (1, 2, 4, ... connections),\n"
            "  every window %s after a %s warm-up, judged against two SLOs: %s and %s\n",
            "50, 60, ..., 110", units_fmt_seconds((double)dur_ns / 1e9, 3, d1, sizeof d1),
            units_fmt_seconds((double)FLAT_WARMUP_NS / 1e9, 3, d2, sizeof d2), flat_slo[0], flat_slo[1]);
    fflush(out);
    struct flat *f = xcalloc(1, sizeof *f);
    rc = flat_init(x, f, url, dur_ns);
    if (rc == 0)
        rc = flat_measure(x, f);
    if (rc == 0) {
        flat_judge(out, f, r);
        fputc('\n', out);
        flat_explain(out, r);
    }
    flat_release(f);
    free(f);
    return rc;
}

int lab_capacity(const struct lab_options *o, struct lab_capacity_result *r)
{
    memset(r, 0, sizeof *r);
    r->nruns = o->quick ? 2 : 3;
    r->slo_p99_ms = CAP_SLO_MS;
    r->lag_limit_ms = (double)CAP_LAG_LIMIT_NS / 1e6;
    r->nrates = NLADDER;
    memcpy(r->rates, ladder_rates, sizeof ladder_rates);
    struct cap_ctx x;
    memset(&x, 0, sizeof x);
    int rc = lab_exp_open(&x.e, o, "capacity", &lengths);
    if (rc)
        return rc;
    struct serve_config sc;
    if ((rc = lab_exp_preset(&x.e, "stall", o->seed, &sc)) != 0)
        goto out;
    x.seed = o->seed;
    struct serve_handle *srv = x.e.srv[0];
    snprintf(x.url, sizeof x.url, "http://%s/", serve_address(srv));
    FILE *out = x.e.out;
    char d1[32], d2[32];
    fprintf(out, "knee lab capacity: a search against a fixed ladder with a majority vote (%zu runs of each)\n",
            r->nruns);
    fprintf(out, "  stall server %s: %s\n", serve_address(srv), serve_preset_summary("stall"));
    fprintf(out,
            "  every window: Poisson arrivals for %s after a %s warm-up; it passes when the generator delivered it\n"
            "  (lag p99 <= %.0f ms on this shared machine) and %s\n",
            units_fmt_seconds((double)x.e.dur_ns / 1e9, 3, d1, sizeof d1),
            units_fmt_seconds((double)x.e.warm_ns / 1e9, 3, d2, sizeof d2), r->lag_limit_ms, CAP_SLO);
    fflush(out);
    struct serve_counters before, after;
    serve_counters(srv, &before);
    double la[3];
    r->loadavg_before = getloadavg(la, 1) == 1 ? la[0] : NAN;
    for (size_t run = 0; run < r->nruns && rc == 0; run++) {
        double answers[LAB_CAP_REPS];
        for (size_t rep = 0; rep < LAB_CAP_REPS && rc == 0; rep++) {
            rc = search(&x, run, rep, &r->search[run][rep]);
            answers[rep] = r->search[run][rep].answer;
        }
        if (rc == 0)
            r->search_median[run] = median3(answers);
    }
    for (size_t run = 0; run < r->nruns && rc == 0; run++)
        rc = ladder(&x, run, r);
    if (rc == 0)
        pool(r);
    serve_counters(srv, &after);
    r->loadavg_after = getloadavg(la, 1) == 1 ? la[0] : NAN;
    r->stalls = after.pauses - before.pauses;
    if (rc)
        goto out;
    print_search(out, r);
    print_ladder(out, r);
    print_side(out, r);
    explain(out, r);
    fflush(out);
    if ((rc = flat_part(&x, o->quick, r)) != 0)
        goto out;
    fputc('\n', out);
    lab_print_cpu_summary(out, &x.e.c);
    fflush(out);
out:
    lab_exp_close(&x.e);
    return rc;
}
