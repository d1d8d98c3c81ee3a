/* knee lab compare: before/after done right. One unchanged server (2 ms per cache
 * hit, 40 ms per miss at 10%, no slot limit) is measured as "before" and "after" with one run
 * each, three times: reading one run against one names a winner every time. The same six
 * runs as three repetitions a side go through knee compare (src/compare): the verdict the
 * data backs. Then three runs against the same server with 3 ms added to every hit: knee
 * compare says slower, with an interval for the p50 that should hold the 3 ms. Every run has
 * the same plan (seed, schedule), as knee run --repeat makes them. */
#include "lab/internal.h"
#include "lab/lab_compare.h"

#include "core/clock.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CMP_DEFAULT_NS (5 * NS_PER_S)
#define CMP_QUICK_NS (2 * NS_PER_S)
#define CMP_RATE 200.0
#define CMP_RESAMPLES 2000

static const struct lab_lengths lengths = {CMP_QUICK_NS, CMP_DEFAULT_NS, LAB_WARMUP_QUICK_NS, LAB_WARMUP_NS};

/* The load model of a lab round, as knee compare reads it from a run's JSON. */
static void model_of(const struct run_config *cfg, const char *authority, struct compare_model *m)
{
    memset(m, 0, sizeof *m);
    m->known = m->closed_known = true;
    m->closed_loop = !cfg->plan.open_loop;
    snprintf(m->arrivals, sizeof m->arrivals, "%s",
             cfg->plan.arrivals == RUN_ARRIVALS_POISSON ? "poisson" : "constant");
    m->rate = cfg->plan.rate;
    m->duration_s = (double)cfg->plan.duration_ns / 1e9;
    m->warmup_s = (double)cfg->plan.warmup_ns / 1e9;
    m->timeout_s = (double)cfg->timeout_ns / 1e9;
    m->think_s = NAN;
    m->keepalive = cfg->keepalive;
    m->seed = cfg->plan.seed;
    snprintf(m->when_busy, sizeof m->when_busy, "queue");
    m->ntargets = 1;
    snprintf(m->targets[0].name, sizeof m->targets[0].name, "%s", cfg->plan.targets[0].name);
    snprintf(m->targets[0].path, sizeof m->targets[0].path, "/product?id=42");
    snprintf(m->targets[0].authority, sizeof m->targets[0].authority, "%s", authority);
    m->targets[0].planned_rate = cfg->plan.rate;
}

/* One round into a repetition of side s: the latencies of the measured requests. */
static int round_into(struct lab_ctx *c, const char *name, const char *what, struct run_config *cfg,
                      const char *authority, struct compare_side *s)
{
    struct lab_round rd;
    int rc = lab_round_run(c, name, what, cfg, &rd);
    if (rc == 0) {
        struct compare_rep *r = compare_rep_add(s, name);
        size_t n;
        double *v = lab_values(&rd, LAB_ALL_TARGETS, -1, LAB_COL_LATENCY, &n);
        r->ntargets = 1;
        snprintf(r->names[0], sizeof r->names[0], "%s", cfg->plan.targets[0].name);
        rc = compare_dist_from_values(&r->dist[0], v, n);
        free(v);
        r->requests = rd.res.all.counts.planned;
        r->not_ok = r->requests - rd.res.all.counts.outcome[OUTCOME_OK];
        r->outcomes_known = true;
        model_of(cfg, authority, &r->model);
        snprintf(r->source, sizeof r->source, "lab round %s", name);
    }
    lab_round_release(&rd);
    return rc;
}

/* Does a plain bootstrap over the requests of one run a side call metric m different? */
static bool plain_differs(const struct compare_rep *b, const struct compare_rep *a, int m, uint64_t seed)
{
    const struct compare_dist *db[1] = {&b->dist[0]}, *da[1] = {&a->dist[0]};
    bool want[CMP_NMETRICS] = {0};
    want[m] = true;
    double *diff[CMP_NMETRICS] = {0};
    diff[m] = xmalloc(CMP_RESAMPLES * sizeof(double));
    struct compare_boot cb = {.resamples = CMP_RESAMPLES, .seed = seed, .plain = true};
    compare_bootstrap(&cb, db, 1, da, 1, want, diff, NULL);
    stats_sort(diff[m], CMP_RESAMPLES);
    double lo = stats_quantile(diff[m], CMP_RESAMPLES, 0.025, 7), hi = stats_quantile(diff[m], CMP_RESAMPLES, 0.975, 7);
    free(diff[m]);
    return lo > 0 || hi < 0;
}

static void explain_pairs(FILE *out, const struct lab_compare_result *r)
{
    struct lab_say s = {.n = 0};
    double lo = INFINITY, hi = -INFINITY;
    size_t slower = 0, faster = 0, p50 = 0, p99 = 0;
    for (size_t i = 0; i < r->npairs; i++) {
        const struct lab_compare_pair *p = &r->pair[i];
        lo = fmin(lo, p->p99_rel);
        hi = fmax(hi, p->p99_rel);
        slower += p->after_p99 > p->before_p99;
        faster += p->after_p99 < p->before_p99;
        p50 += p->plain_p50_differs;
        p99 += p->plain_p99_differs;
    }
    lab_say_add(
        &s, "one unchanged server, %zu pairs of single runs: after's p99 differed from before's by %+.1f%% to %+.1f%%",
        r->npairs, 100 * lo, 100 * hi);
    if (slower + faster == r->npairs)
        lab_say_add(&s,
                    ", and reading one run against one names a winner every time (after 'slower' %zu times, "
                    "'faster' %zu) although nothing changed.",
                    slower, faster);
    else
        lab_say_add(&s, "; %zu pairs had the same p99 to the microsecond.", r->npairs - slower - faster);
    lab_say_end(&s, out);
    lab_say_add(&s,
                "an interval from the two runs' requests alone (a plain bootstrap) calls the p50 different in %zu of "
                "%zu pairs and the p99 in %zu",
                p50, r->npairs, p99);
    lab_say_verdict(&s, out, p50 + p99 > 0,
                    ": it sees the noise of requests, not how runs differ from each other, so with one run a side "
                    "knee compare gives no verdict at all.",
                    ": here no pair looked different even so, but one run a side says nothing about how runs "
                    "differ, so knee compare gives no verdict below 3 repetitions.");
}

static void explain_same(FILE *out, const struct compare_result *cr, const struct lab_compare_result *r)
{
    struct lab_say s = {.n = 0};
    size_t with_zero = 0, judged = 0;
    for (int m = 0; m < CMP_NMETRICS; m++) {
        const struct compare_metric_result *mr = &cr->all->m[m];
        if (!mr->used || !isfinite(mr->ci_lo))
            continue;
        judged++;
        with_zero += mr->ci_lo <= 0 && mr->ci_hi >= 0;
    }
    lab_say_add(&s,
                "the same six runs as %zu repetitions a side: knee compare says '%s'; %zu of %zu intervals contain 0",
                cr->nreps_before, r->same_verdict_text, with_zero, judged);
    lab_say_verdict(&s, out, r->same_verdict == CMP_V_NO_DIFFERENCE, ", as they should for one unchanged server.",
                    " — one unchanged server, so this is the rare false alarm the method allows (the unit tests "
                    "measure how rare).");
}

static void explain_changed(FILE *out, const struct lab_compare_result *r)
{
    struct lab_say s = {.n = 0};
    lab_say_add(&s,
                "with %.0f ms added to every cache hit, knee compare says '%s': the p50 rose by %+.2f ms [%+.2f, "
                "%+.2f]",
                LAB_COMPARE_ADDED_MS, r->changed_verdict_text, r->changed_p50_diff, r->changed_p50_lo,
                r->changed_p50_hi);
    lab_say_verdict(&s, out, r->changed_contains, ", an interval that contains the change made.",
                    ", an interval that misses the change made (queueing or the run-to-run spread moved the "
                    "median too).");
}

static void print_compare(FILE *out, const struct compare_result *cr, const struct compare_side *b,
                          const struct compare_side *a)
{
    compare_print_text(out, cr, b, a, false);
}

static int run_compare(const struct compare_side *b, const struct compare_side *a, uint64_t seed,
                       struct compare_result *cr, FILE *err)
{
    struct compare_opts co;
    compare_opts_init(&co);
    co.seed = seed;
    co.resamples = CMP_RESAMPLES;
    char why[1024];
    int rc = compare_run(b, a, &co, cr, why, sizeof why);
    if (rc)
        fprintf(err, "knee lab compare: %s\n", why);
    return rc;
}

/* The two servers: "before" (and, unchanged, "after") and the changed one, LAB_COMPARE_ADDED_MS
 * slower on every cache hit; no slot limit, so no queue: the added time is all the change. */
static int start_servers(struct lab_exp *x, uint64_t seed, struct serve_config cfg[2])
{
    for (int i = 0; i < 2; i++) {
        serve_preset("quiet", &cfg[i]);
        cfg[i].seed = seed + (uint64_t)i;
        cfg[i].pool = 0;
        if (i == 1)
            cfg[i].hit_ns += (uint64_t)(LAB_COMPARE_ADDED_MS * 1e6);
        int rc = lab_exp_server(x, &cfg[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static void print_setup(FILE *out, const struct lab_exp *x, const struct serve_config cfg[2])
{
    fprintf(out,
            "knee lab compare: before/after done right (open loop %.0f/s Poisson, %.0f s per run after a %.1f s "
            "warm-up, the same seed every run)\n",
            CMP_RATE, (double)x->dur_ns / 1e9, (double)x->warm_ns / 1e9);
    fprintf(out,
            "  server  %s: %.0f ms per cache hit, %.0f ms per miss (%.0f%%), no slot limit: \"before\" and, "
            "unchanged, \"after\"\n",
            serve_address(x->srv[0]), (double)cfg[0].hit_ns / 1e6, (double)cfg[0].miss_ns / 1e6,
            100 * cfg[0].miss_rate);
    fprintf(out, "  changed %s: the same with %.0f ms per hit (%.0f ms added to every hit)\n", serve_address(x->srv[1]),
            (double)cfg[1].hit_ns / 1e6, LAB_COMPARE_ADDED_MS);
    fflush(out);
}

/* Every round: LAB_COMPARE_PAIRS pairs of before and after on the unchanged server, then as many
 * rounds on the changed one, each kept in its side. Returns 0 or round_into's code. */
static int run_rounds(struct lab_exp *x, uint64_t seed, struct compare_side *before, struct compare_side *after,
                      struct compare_side *changed)
{
    char url[2][160];
    struct plan_target t[2];
    memset(t, 0, sizeof t);
    for (int i = 0; i < 2; i++) {
        snprintf(url[i], sizeof url[i], "http://%s/product?id=42", serve_address(x->srv[i]));
        t[i].name = "api";
        t[i].url = url[i];
    }
    struct run_config rcfg[2];
    for (int i = 0; i < 2; i++) {
        lab_run_config_init(&rcfg[i], &t[i], 1, seed, x->dur_ns, x->warm_ns);
        rcfg[i].plan.open_loop = true;
        rcfg[i].plan.rate = CMP_RATE;
        rcfg[i].plan.arrivals = RUN_ARRIVALS_POISSON;
    }
    double round_s = (double)(x->dur_ns + x->warm_ns) / 1e9;
    int rc;
    /* before and after alternate, so a drift of the machine falls on both sides */
    for (size_t k = 0; k < LAB_COMPARE_PAIRS; k++) {
        char name[32], what[160];
        snprintf(name, sizeof name, "before-%zu", k + 1);
        snprintf(what, sizeof what, "pair %zu, before: the unchanged server, %.0f s", k + 1, round_s);
        if ((rc = round_into(&x->c, name, what, &rcfg[0], serve_address(x->srv[0]), before)) != 0)
            return rc;
        snprintf(name, sizeof name, "after-%zu", k + 1);
        snprintf(what, sizeof what, "pair %zu, after: the same server again, %.0f s", k + 1, round_s);
        if ((rc = round_into(&x->c, name, what, &rcfg[0], serve_address(x->srv[0]), after)) != 0)
            return rc;
    }
    for (size_t k = 0; k < LAB_COMPARE_PAIRS; k++) {
        char name[32], what[160];
        snprintf(name, sizeof name, "changed-%zu", k + 1);
        snprintf(what, sizeof what, "changed server, repetition %zu, %.0f s", k + 1, round_s);
        if ((rc = round_into(&x->c, name, what, &rcfg[1], serve_address(x->srv[1]), changed)) != 0)
            return rc;
    }
    return 0;
}

/* Section 1: each pair on its own, one run a side, as a reader of two runs would judge it. */
static void print_pairs(FILE *out, const struct compare_side *before, const struct compare_side *after, uint64_t seed,
                        struct lab_compare_result *r)
{
    lab_heading(out, "1. the same server, one run a side, %d times", LAB_COMPARE_PAIRS);
    fprintf(out, "  %-5s %22s %22s %10s   %s\n", "pair", "before p50 / p99 ms", "after p50 / p99 ms", "p99",
            "one run vs one");
    for (size_t k = 0; k < LAB_COMPARE_PAIRS; k++) {
        struct lab_compare_pair *p = &r->pair[k];
        const struct compare_dist *b = &before->reps[k].dist[0], *a = &after->reps[k].dist[0];
        p->before_p50 = compare_dist_percentile(b, 50);
        p->before_p99 = compare_dist_percentile(b, 99);
        p->after_p50 = compare_dist_percentile(a, 50);
        p->after_p99 = compare_dist_percentile(a, 99);
        p->p99_rel = p->after_p99 / p->before_p99 - 1;
        p->plain_p50_differs = plain_differs(&before->reps[k], &after->reps[k], CMP_P50, seed + k);
        p->plain_p99_differs = plain_differs(&before->reps[k], &after->reps[k], CMP_P99, seed + k);
        char bb[48], aa[48];
        snprintf(bb, sizeof bb, "%.3f / %.3f", p->before_p50, p->before_p99);
        snprintf(aa, sizeof aa, "%.3f / %.3f", p->after_p50, p->after_p99);
        fprintf(out, "  %-5zu %22s %22s %+9.1f%%   %s\n", k + 1, bb, aa, 100 * p->p99_rel,
                p->after_p99 > p->before_p99   ? "\"after is slower\""
                : p->after_p99 < p->before_p99 ? "\"after is faster\""
                                               : "\"the same\"");
        r->npairs = k + 1;
    }
    explain_pairs(out, r);
}

/* Section 2: knee compare over the repetitions of the unchanged server. */
static int print_same(FILE *out, FILE *err, const struct compare_side *before, const struct compare_side *after,
                      uint64_t seed, struct lab_compare_result *r)
{
    lab_heading(out, "2. the same six runs, %d repetitions a side: knee compare", LAB_COMPARE_PAIRS);
    struct compare_result cr;
    memset(&cr, 0, sizeof cr);
    int rc = run_compare(before, after, seed, &cr, err);
    if (rc)
        return rc;
    r->same_verdict = cr.all->verdict;
    snprintf(r->same_verdict_text, sizeof r->same_verdict_text, "%s", cr.all->verdict_text);
    print_compare(out, &cr, before, after);
    fputc('\n', out);
    explain_same(out, &cr, r);
    compare_result_release(&cr);
    return 0;
}

/* Section 3: knee compare between the unchanged server and the changed one. */
static int print_changed(FILE *out, FILE *err, const struct compare_side *before, const struct compare_side *changed,
                         uint64_t seed, struct lab_compare_result *r)
{
    lab_heading(out, "3. a real change: %.0f ms added to every cache hit, %d repetitions", LAB_COMPARE_ADDED_MS,
                LAB_COMPARE_PAIRS);
    struct compare_result cr;
    memset(&cr, 0, sizeof cr);
    int rc = run_compare(before, changed, seed, &cr, err);
    if (rc)
        return rc;
    r->changed_verdict = cr.all->verdict;
    snprintf(r->changed_verdict_text, sizeof r->changed_verdict_text, "%s", cr.all->verdict_text);
    r->changed_p50_diff = cr.all->m[CMP_P50].diff;
    r->changed_p50_lo = cr.all->m[CMP_P50].ci_lo;
    r->changed_p50_hi = cr.all->m[CMP_P50].ci_hi;
    r->changed_contains = r->changed_p50_lo <= LAB_COMPARE_ADDED_MS && LAB_COMPARE_ADDED_MS <= r->changed_p50_hi;
    print_compare(out, &cr, before, changed);
    fputc('\n', out);
    explain_changed(out, r);
    compare_result_release(&cr);
    return 0;
}

int lab_compare(const struct lab_options *o, struct lab_compare_result *r)
{
    memset(r, 0, sizeof *r);
    struct lab_exp x;
    int rc = lab_exp_open(&x, o, "compare", &lengths);
    if (rc)
        return rc;
    struct compare_side before, after, changed;
    compare_side_init(&before, "before");
    compare_side_init(&after, "after");
    compare_side_init(&changed, "after");
    struct serve_config cfg[2];
    if ((rc = start_servers(&x, o->seed, cfg)) != 0)
        goto out;
    FILE *out = x.out;
    print_setup(out, &x, cfg);
    if ((rc = run_rounds(&x, o->seed, &before, &after, &changed)) != 0)
        goto out;
    print_pairs(out, &before, &after, o->seed, r);
    if ((rc = print_same(out, x.c.err, &before, &after, o->seed, r)) != 0 ||
        (rc = print_changed(out, x.c.err, &before, &changed, o->seed, r)) != 0)
        goto out;
    fputc('\n', out);
    lab_print_cpu_summary(out, &x.c);
    fflush(out);
out:
    compare_side_release(&before);
    compare_side_release(&after);
    compare_side_release(&changed);
    lab_exp_close(&x);
    return rc;
}
