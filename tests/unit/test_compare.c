/* Unit tests for src/compare: distributions, the Poisson sampler, the hierarchical bootstrap
 * against an independent two-stage multinomial bootstrap and the closed-form variance of its
 * mean computed by python3's standard library, the false-positive rate on two sides from the
 * same synthetic server (and the plain bootstrap's, to show why knee does not use it), a
 * known added delay, refused load models, --force, fewer than 3 repetitions, --fail-if, the
 * verdict words, and loading a side from a binary log + JSON, a CSV and an hlog. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "compare/compare.h"
#include "core/json.h"
#include "core/err.h"
#include "core/rng.h"
#include "hist/hdr.h"
#include "hlog/hlog.h"
#include "record/stages.h"
#include "reqlog/reqlog.h"
#include "stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Under AddressSanitizer the code runs several times slower: the statistical tests then run a
 * few trials for their memory checks and leave the rates to the normal build. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
#define TRIALS(n) (SANITIZED ? 4 : (n))

/* ---- synthetic servers ---------------------------------------------------------------------- */

/* One repetition of a synthetic server: 99% lognormal around 2 ms (sigma 0.4), 1% slow
 * around 20 ms; each run has its own state: all its latencies scaled by exp(N(0, 0.03)) and
 * its slow share by exp(N(0, 0.2)) (run-to-run spread, as real runs have). shift_ms is added
 * to every request (a real change). */
static void synth_rep(struct compare_rep *r, struct rng *g, size_t n, double shift_ms)
{
    double scale = exp(0.03 * rng_normal(g)), slow = 0.01 * exp(0.2 * rng_normal(g));
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        double x = rng_bernoulli(g, slow) ? rng_lognormal(g, log(20.0), 0.5) : rng_lognormal(g, log(2.0), 0.4);
        v[i] = x * scale + shift_ms;
    }
    r->ntargets = 1;
    snprintf(r->names[0], sizeof r->names[0], "api");
    assert_int_equal(compare_dist_from_values(&r->dist[0], v, n), 0);
    r->requests = n;
    r->outcomes_known = true;
    r->model.known = r->model.closed_known = true;
    snprintf(r->model.arrivals, sizeof r->model.arrivals, "poisson");
    r->model.rate = 1000;
    r->model.duration_s = 10;
    r->model.warmup_s = 1;
    r->model.timeout_s = 10;
    r->model.ntargets = 1;
    snprintf(r->model.targets[0].name, sizeof r->model.targets[0].name, "api");
    snprintf(r->model.targets[0].path, sizeof r->model.targets[0].path, "/");
    r->model.targets[0].planned_rate = 1000;
    free(v);
}

static void synth_side(struct compare_side *s, const char *name, struct rng *g, size_t nreps, size_t n, double shift_ms)
{
    compare_side_init(s, name);
    for (size_t i = 0; i < nreps; i++) {
        char label[32];
        snprintf(label, sizeof label, "rep-%zu", i + 1);
        synth_rep(compare_rep_add(s, label), g, n, shift_ms);
    }
}

/* ---- distributions --------------------------------------------------------------------------- */

static void test_dist(void **state)
{
    (void)state;
    double v[] = {5, 1, 3, 3, NAN, 2, 4, 3};
    struct compare_dist d;
    assert_int_equal(compare_dist_from_values(&d, v, 8), 0);
    assert_int_equal(d.n, 7);
    assert_int_equal(d.m, 5);
    double sorted[] = {1, 2, 3, 3, 3, 4, 5};
    for (double p = 1; p <= 100; p += 7.5)
        assert_true(compare_dist_percentile(&d, p) == stats_nearest_rank(sorted, 7, p));
    assert_true(fabs(compare_dist_mean(&d) - 3) < 1e-15);
    assert_true(compare_dist_share_under(&d, 3) == 2.0 / 7);
    double w[] = {3, 10};
    struct compare_dist e, u;
    assert_int_equal(compare_dist_from_values(&e, w, 2), 0);
    const struct compare_dist *parts[] = {&d, &e};
    compare_dist_merge(&u, parts, 2);
    assert_int_equal(u.n, 9);
    assert_int_equal(u.m, 6);
    assert_true(compare_dist_percentile(&u, 100) == 10);
    assert_true(compare_dist_percentile(&u, 50) == 3);
    double neg[] = {1, -1};
    struct compare_dist bad;
    assert_int_equal(compare_dist_from_values(&bad, neg, 2), KNEE_ERANGE);
    compare_dist_release(&d);
    compare_dist_release(&e);
    compare_dist_release(&u);
    /* the widening: sqrt(3/2) * t(0.975, 4) / z(0.975) = 1.2247 * 2.7764 / 1.9600 (tables) */
    assert_true(fabs(compare_widening(3, 3, 0.95) - 1.2247449 * 2.7764451 / 1.9599640) < 1e-6);
    assert_true(fabs(compare_widening(10, 10, 0.95) - sqrt(10.0 / 9) * 2.1009220 / 1.9599640) < 1e-6);
    assert_true(isnan(compare_widening(1, 5, 0.95)));
}

/* The sampler's mean and variance are its mean (4 standard errors), below and above the
 * switch from multiplication to PTRS at 10. */
static void test_poisson(void **state)
{
    (void)state;
    const double means[] = {0.3, 1, 4, 9.9, 10, 37, 1000};
    struct rng g;
    rng_seed(&g, 3);
    for (size_t k = 0; k < sizeof means / sizeof means[0]; k++) {
        double mu = means[k], s = 0, s2 = 0;
        const size_t n = 200000;
        for (size_t i = 0; i < n; i++) {
            double x = (double)compare_poisson(&g, mu);
            s += x;
            s2 += x * x;
        }
        double mean = s / (double)n, var = s2 / (double)n - mean * mean;
        if (fabs(mean - mu) > 4 * sqrt(mu / (double)n))
            fail_msg("Poisson(%g): mean %g", mu, mean);
        /* Var of the sample variance ≈ (mu + 2 mu^2)/n for a Poisson */
        if (fabs(var - mu) > 4 * sqrt((mu + 2 * mu * mu) / (double)n))
            fail_msg("Poisson(%g): variance %g", mu, var);
    }
    assert_int_equal(compare_poisson(&g, 0), 0);
}

/* ---- the bootstrap against python ------------------------------------------------------------- */

/* Small sides written to a file that python3 reads: "side rep value" lines. */
static const char py_reference[] =
    "import math, random, statistics, sys\n"
    "from fractions import Fraction as F\n"
    "reps = {'b': {}, 'a': {}}\n"
    "for line in open(sys.argv[1]):\n"
    "    s, r, v = line.split()\n"
    "    reps[s].setdefault(int(r), []).append(float(v))\n"
    "def rank(n, p):\n"
    "    return max(1, min(n, math.ceil(p * n / 100 - 1e-9)))\n"
    "def stat(vals, what):\n"
    "    if what == 'mean':\n"
    "        return statistics.fmean(vals)\n"
    "    s = sorted(vals)\n"
    "    return s[rank(len(s), what) - 1]\n"
    "rnd = random.Random(12345)\n"
    "B = int(sys.argv[2])\n"
    "def side(rs):\n"
    "    keys = sorted(rs)\n"
    "    out = []\n"
    "    for _ in range(len(keys)):\n"
    "        rep = rs[rnd.choice(keys)]\n"
    "        out += rnd.choices(rep, k=len(rep))\n"
    "    return out\n"
    "whats = ['mean', 50, 90]\n"
    "diffs = {w: [] for w in whats}\n"
    "for _ in range(B):\n"
    "    b, a = side(reps['b']), side(reps['a'])\n"
    "    for w in whats:\n"
    "        diffs[w].append(stat(a, w) - stat(b, w))\n"
    "for w in whats:\n"
    "    q = statistics.quantiles(diffs[w], n=40, method='inclusive')\n"
    "    print(w, q[0], q[-1], statistics.stdev(diffs[w]))\n"
    /* the closed form of the two-stage bootstrap variance of the mean, per side:
     * (1/R) [ (1/R) sum (m_r - mbar)^2 + (1/R) sum s_r^2 / n_r ], s_r^2 with divisor n_r */
    "def var_side(rs):\n"
    "    R = len(rs)\n"
    "    ms = [F(statistics.fmean(v)) for v in rs.values()]\n"
    "    mbar = sum(ms) / R\n"
    "    within = sum(sum((F(x) - m) ** 2 for x in v) / len(v) / len(v) for v, m in zip(rs.values(), ms))\n"
    "    return (sum((m - mbar) ** 2 for m in ms) / R + within / R) / R\n"
    "print('closed', float(var_side(reps['b']) + var_side(reps['a'])))\n";

struct py_row {
    char what[16];
    double lo, hi, sd;
};

static void test_bootstrap_python(void **state)
{
    (void)state;
    if (access("/usr/bin/python3", X_OK) != 0)
        skip();
    struct rng g;
    rng_seed(&g, 42);
    struct compare_side b, a;
    synth_side(&b, "before", &g, 3, 80, 0);
    synth_side(&a, "after", &g, 4, 70, 0.3);
    char data[] = "/tmp/knee_test_compare_XXXXXX", script[] = "/tmp/knee_test_compare_py_XXXXXX";
    int fd = mkstemp(data);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    const struct compare_side *sides[2] = {&b, &a};
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < sides[s]->nreps; r++) {
            const struct compare_dist *d = &sides[s]->reps[r].dist[0];
            for (size_t i = 0; i < d->m; i++)
                for (uint64_t k = 0; k < d->c[i]; k++)
                    fprintf(f, "%c %zu %.17g\n", s ? 'a' : 'b', r, d->x[i]);
        }
    fclose(f);
    fd = mkstemp(script);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs(py_reference, f);
    fclose(f);
    char cmd[256];
    const size_t B = 10000;
    snprintf(cmd, sizeof cmd, "python3 %s %s %zu", script, data, B);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    struct py_row rows[3];
    double closed = NAN;
    for (int i = 0; i < 3; i++)
        assert_int_equal(fscanf(p, "%15s %lf %lf %lf", rows[i].what, &rows[i].lo, &rows[i].hi, &rows[i].sd), 4);
    assert_int_equal(fscanf(p, " closed %lf", &closed), 1);
    assert_int_equal(pclose(p), 0);
    unlink(data);
    unlink(script);

    const struct compare_dist *db[3], *da[4];
    for (size_t i = 0; i < 3; i++)
        db[i] = &b.reps[i].dist[0];
    for (size_t i = 0; i < 4; i++)
        da[i] = &a.reps[i].dist[0];
    bool want[CMP_NMETRICS] = {[CMP_MEAN] = true, [CMP_P50] = true, [CMP_P90] = true};
    double *diff[CMP_NMETRICS] = {0};
    for (int m = 0; m < CMP_NMETRICS; m++)
        diff[m] = calloc(B, sizeof(double));
    struct compare_boot cb = {.resamples = B, .seed = 7};
    compare_bootstrap(&cb, db, 3, da, 4, want, diff, NULL);
    const int order[3] = {CMP_MEAN, CMP_P50, CMP_P90};
    for (int i = 0; i < 3; i++) {
        double *v = diff[order[i]];
        double sd = stats_stdev(v, B);
        stats_sort(v, B);
        double lo = stats_quantile(v, B, 0.025, 7), hi = stats_quantile(v, B, 0.975, 7);
        double width = rows[i].hi - rows[i].lo;
        print_message("bootstrap %-5s knee [%.4f, %.4f] sd %.4f   python [%.4f, %.4f] sd %.4f\n", rows[i].what, lo, hi,
                      sd, rows[i].lo, rows[i].hi, rows[i].sd);
        /* two Monte Carlo estimates of the same interval (10,000 replicates each; Poisson vs
         * multinomial weights within a repetition): ends within 10% of its width, spread 10% */
        if (fabs(lo - rows[i].lo) > 0.1 * width || fabs(hi - rows[i].hi) > 0.1 * width ||
            fabs(sd - rows[i].sd) > 0.1 * rows[i].sd)
            fail_msg("%s: knee [%g, %g] sd %g vs python [%g, %g] sd %g", rows[i].what, lo, hi, sd, rows[i].lo,
                     rows[i].hi, rows[i].sd);
        if (order[i] == CMP_MEAN) {
            print_message("mean: bootstrap variance %.6g, closed form %.6g\n", sd * sd, closed);
            if (fabs(sd * sd - closed) > 0.06 * closed)
                fail_msg("mean: bootstrap variance %g, closed form %g", sd * sd, closed);
        }
    }
    for (int m = 0; m < CMP_NMETRICS; m++)
        free(diff[m]);
    compare_side_release(&b);
    compare_side_release(&a);
}

/* ---- verdicts on synthetic servers ---------------------------------------------------------- */

static int run(const struct compare_side *b, const struct compare_side *a, size_t resamples, uint64_t seed,
               struct compare_result *r)
{
    struct compare_opts o;
    compare_opts_init(&o);
    o.resamples = resamples;
    o.seed = seed;
    char err[512];
    int rc = compare_run(b, a, &o, r, err, sizeof err);
    if (rc)
        fail_msg("compare_run: %s", err);
    return rc;
}

/* The 95% p50 interval of a bootstrap (plain or hierarchical) of 3 repetitions a side, as it
 * is (*raw) and widened as knee widens it (*widened): does each exclude 0? */
static void p50_excludes_zero(const struct compare_side *b, const struct compare_side *a, bool plain, uint64_t seed,
                              bool *raw, bool *widened)
{
    const struct compare_dist *db[3] = {&b->reps[0].dist[0], &b->reps[1].dist[0], &b->reps[2].dist[0]};
    const struct compare_dist *da[3] = {&a->reps[0].dist[0], &a->reps[1].dist[0], &a->reps[2].dist[0]};
    bool want[CMP_NMETRICS] = {[CMP_P50] = true};
    double *diff[CMP_NMETRICS] = {0};
    diff[CMP_P50] = malloc(250 * sizeof(double));
    struct compare_boot cb = {.resamples = 250, .seed = seed, .plain = plain};
    compare_bootstrap(&cb, db, 3, da, 3, want, diff, NULL);
    stats_sort(diff[CMP_P50], 250);
    double lo = stats_quantile(diff[CMP_P50], 250, 0.025, 7), hi = stats_quantile(diff[CMP_P50], 250, 0.975, 7);
    free(diff[CMP_P50]);
    *raw = lo > 0 || hi < 0;
    struct compare_dist pb, pa;
    compare_dist_merge(&pb, db, 3);
    compare_dist_merge(&pa, da, 3);
    double est = compare_dist_percentile(&pa, 50) - compare_dist_percentile(&pb, 50), k = compare_widening(3, 3, 0.95);
    compare_dist_release(&pb);
    compare_dist_release(&pa);
    lo = est - k * fmax(0, est - lo);
    hi = est + k * fmax(0, hi - est);
    if (widened)
        *widened = lo > 0 || hi < 0;
}

/* Same server on both sides, 3 repetitions each (run-to-run spread as in synth_rep): how
 * often knee's verdict claims a difference, and how often the p50 interval alone misses 0
 * for knee's widened interval, the hierarchical bootstrap as it is, and a plain bootstrap
 * over the pooled requests. */
#define FP_TRIALS TRIALS(200)
#define FP_TRIALS_P50 TRIALS(100)
static void test_same_server(void **state)
{
    (void)state;
    size_t nodiff = 0, claims = 0, spread = 0, plain = 0, raw = 0, knee = 0;
    for (uint64_t t = 0; t < FP_TRIALS; t++) {
        struct rng g;
        rng_seed(&g, 1000 + t);
        struct compare_side b, a;
        synth_side(&b, "before", &g, 3, 800, 0);
        synth_side(&a, "after", &g, 3, 800, 0);
        struct compare_result r;
        run(&b, &a, 250, t + 1, &r);
        enum compare_verdict v = r.all->verdict;
        nodiff += v == CMP_V_NO_DIFFERENCE;
        spread += v == CMP_V_SPREAD;
        claims += v == CMP_V_SLOWER || v == CMP_V_FASTER || v == CMP_V_MIXED;
        knee += r.all->m[CMP_P50].ci_lo > 0 || r.all->m[CMP_P50].ci_hi < 0;
        if (t < FP_TRIALS_P50) {
            bool x;
            p50_excludes_zero(&b, &a, false, t + 1, &x, NULL);
            raw += x;
            p50_excludes_zero(&b, &a, true, t + 1, &x, NULL);
            plain += x;
        }
        compare_result_release(&r);
        compare_side_release(&b);
        compare_side_release(&a);
    }
    print_message("same server, %d trials: verdict no detectable difference %zu, spread within exceeds %zu, "
                  "false claims %zu; the 95%% p50 interval misses 0: knee %zu of %d; of the first %d, hierarchical "
                  "unwidened %zu, plain bootstrap %zu\n",
                  FP_TRIALS, nodiff, spread, claims, knee, FP_TRIALS, FP_TRIALS_P50, raw, plain);
    if (SANITIZED)
        return;
    /* knee: the large majority says so; a false claim is rare (six metrics are judged, so the
     * family's rate is above one interval's) */
    assert_true(nodiff * 100 >= FP_TRIALS * 90);
    assert_true(claims * 100 <= FP_TRIALS * 5);
    assert_true(knee * 100 <= FP_TRIALS * 6);
    /* the plain bootstrap's p50 interval misses 0 far more often than the 5% it promises */
    assert_true(plain * 100 >= FP_TRIALS_P50 * 25);
    assert_true(plain > 2 * raw);
}

/* Long runs: the run-to-run spread outweighs the requests' noise, and there the two-stage
 * bootstrap's interval is too narrow with 3 repetitions; knee's widening restores it. */
#define LONG_TRIALS TRIALS(100)
static void test_same_server_long_runs(void **state)
{
    (void)state;
    size_t raw = 0, widened = 0;
    for (uint64_t t = 0; t < LONG_TRIALS; t++) {
        struct rng g;
        rng_seed(&g, 7000 + t);
        struct compare_side b, a;
        synth_side(&b, "before", &g, 3, 4000, 0);
        synth_side(&a, "after", &g, 3, 4000, 0);
        bool r, w;
        p50_excludes_zero(&b, &a, false, t + 1, &r, &w);
        raw += r;
        widened += w;
        compare_side_release(&b);
        compare_side_release(&a);
    }
    print_message("same server, 3 repetitions of 4,000 requests, %d trials: the 95%% p50 interval misses 0: "
                  "two-stage bootstrap %zu, widened as knee does %zu\n",
                  LONG_TRIALS, raw, widened);
    if (SANITIZED)
        return;
    assert_true(raw * 100 >= LONG_TRIALS * 10);
    assert_true(widened * 100 <= LONG_TRIALS * 6);
}

/* A real change: 1 ms added to every request. knee says slower, and the intervals of the
 * difference contain the true 1 ms for the p50 and the mean in most trials. */
#define DELAY_TRIALS TRIALS(30)
static void test_added_delay(void **state)
{
    (void)state;
    size_t slower = 0, p50_in = 0, mean_in = 0;
    for (uint64_t t = 0; t < DELAY_TRIALS; t++) {
        struct rng g;
        rng_seed(&g, 5000 + t);
        struct compare_side b, a;
        synth_side(&b, "before", &g, 3, 1500, 0);
        synth_side(&a, "after", &g, 3, 1500, 1.0);
        struct compare_result r;
        run(&b, &a, 400, t + 1, &r);
        slower += r.all->verdict == CMP_V_SLOWER && r.all->m[CMP_P50].verdict == CMP_V_SLOWER;
        /* the true difference of the p50: 1 ms plus what the scale noise does to 2 ms */
        p50_in += r.all->m[CMP_P50].ci_lo <= 1.0 && 1.0 <= r.all->m[CMP_P50].ci_hi;
        mean_in += r.all->m[CMP_MEAN].ci_lo <= 1.0 && 1.0 <= r.all->m[CMP_MEAN].ci_hi;
        if (t == 0) {
            char *text;
            size_t len;
            FILE *f = open_memstream(&text, &len);
            compare_print_text(f, &r, &b, &a, false);
            fclose(f);
            print_message("%s", text);
            assert_non_null(strstr(text, "verdict: slower"));
            free(text);
        }
        compare_result_release(&r);
        compare_side_release(&b);
        compare_side_release(&a);
    }
    print_message("+1 ms, %d trials: slower %zu; interval holds 1 ms: p50 %zu, mean %zu\n", DELAY_TRIALS, slower,
                  p50_in, mean_in);
    assert_int_equal(slower, DELAY_TRIALS);
    if (SANITIZED)
        return;
    assert_true(p50_in * 100 >= DELAY_TRIALS * 80);
    assert_true(mean_in * 100 >= DELAY_TRIALS * 80);
}

/* Stream rows: compared when every repetition of both sides has them; the gaps doubled on the
 * after side are "slower", the first events unchanged are not; one repetition without gaps
 * takes the gap row away (the first-event row stays). */
static void test_stream_rows(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 11);
    struct compare_side b, a;
    synth_side(&b, "before", &g, 3, 400, 0);
    synth_side(&a, "after", &g, 3, 400, 0);
    double fe[200], gap[800];
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < 3; i++) {
            struct compare_rep *r = &(s ? &a : &b)->reps[i];
            for (size_t k = 0; k < 200; k++)
                fe[k] = 40 + rng_lognormal(&g, log(5.0), 0.3);
            for (size_t k = 0; k < 800; k++)
                gap[k] = (s ? 2 : 1) * rng_lognormal(&g, log(20.0), 0.2);
            assert_int_equal(compare_dist_from_values(&r->stream[COMPARE_FIRST_EVENT], fe, 200), 0);
            assert_int_equal(compare_dist_from_values(&r->stream[COMPARE_EVENT_GAP], gap, 800), 0);
        }
    struct compare_opts o;
    compare_opts_init(&o);
    o.resamples = 300;
    struct compare_result r;
    char err[256];
    assert_int_equal(compare_run(&b, &a, &o, &r, err, sizeof err), 0);
    assert_true(r.has_stream[0] && r.has_stream[1]);
    assert_string_equal(r.stream[COMPARE_EVENT_GAP].name, "event gap");
    assert_int_equal(r.stream[COMPARE_FIRST_EVENT].n_before, 600);
    assert_int_equal(r.stream[COMPARE_EVENT_GAP].n_after, 2400);
    assert_int_equal(r.stream[COMPARE_EVENT_GAP].m[CMP_P50].verdict, CMP_V_SLOWER);
    assert_int_not_equal(r.stream[COMPARE_FIRST_EVENT].m[CMP_P50].verdict, CMP_V_SLOWER);
    compare_result_release(&r);
    compare_dist_release(&a.reps[2].stream[COMPARE_EVENT_GAP]);
    assert_int_equal(compare_run(&b, &a, &o, &r, err, sizeof err), 0);
    assert_true(r.has_stream[COMPARE_FIRST_EVENT] && !r.has_stream[COMPARE_EVENT_GAP]);
    compare_result_release(&r);
    compare_side_release(&b);
    compare_side_release(&a);
}

static void test_few_reps(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 9);
    struct compare_side b, a;
    synth_side(&b, "before", &g, 2, 500, 0);
    synth_side(&a, "after", &g, 3, 500, 5.0); /* even a large change: no verdict */
    struct compare_opts o;
    compare_opts_init(&o);
    o.resamples = 200;
    struct compare_fail_if fi;
    char err[256];
    assert_int_equal(compare_fail_if_parse("slower", &fi, err, sizeof err), 0);
    o.fail_if = &fi;
    o.nfail_if = 1;
    struct compare_result r;
    assert_int_equal(compare_run(&b, &a, &o, &r, err, sizeof err), 0);
    assert_int_equal(r.all->verdict, CMP_V_FEW_REPS);
    assert_string_equal(r.all->verdict_text, "not enough repetitions (N<3)");
    for (int m = 0; m < CMP_NMETRICS; m++) {
        if (!r.all->m[m].used)
            continue;
        assert_int_equal(r.all->m[m].verdict, CMP_V_FEW_REPS);
        assert_true(isnan(r.all->m[m].ci_lo));
    }
    assert_true(r.all->m[CMP_P50].diff > 4); /* the point difference is still there */
    assert_false(r.fail);
    assert_true(r.fail_unevaluated);
    assert_false(fi.evaluated);
    compare_result_release(&r);
    compare_side_release(&b);
    compare_side_release(&a);
}

static void test_models(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 11);
    struct compare_side b, a;
    synth_side(&b, "before", &g, 3, 300, 0);
    synth_side(&a, "after", &g, 3, 300, 0);
    for (size_t i = 0; i < 3; i++) {
        a.reps[i].model.rate = 2000;
        a.reps[i].model.targets[0].planned_rate = 2000;
        a.reps[i].model.warmup_s = 0;
    }
    struct compare_opts o;
    compare_opts_init(&o);
    o.resamples = 200;
    struct compare_result r;
    char err[1024];
    assert_int_equal(compare_run(&b, &a, &o, &r, err, sizeof err), KNEE_EMISMATCH);
    print_message("refused: %s\n", err);
    assert_non_null(strstr(err, "not run with the same load model: rate: 1,000.0/s vs 2,000.0/s"));
    assert_non_null(strstr(err, "warm-up"));
    assert_non_null(strstr(err, "--force"));
    o.force = true;
    assert_int_equal(compare_run(&b, &a, &o, &r, err, sizeof err), 0);
    assert_true(r.forced);
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    compare_print_text(f, &r, &b, &a, false);
    fclose(f);
    if (strncmp(text, "FORCED: the two sides were not run with the same load model (rate: ", 67) != 0)
        fail_msg("forced report:\n%s", text);
    free(text);
    compare_result_release(&r);
    /* within a side too */
    for (size_t i = 0; i < 3; i++) {
        a.reps[i].model = b.reps[0].model;
    }
    a.reps[2].model.closed_loop = true;
    o.force = false;
    assert_int_equal(compare_run(&b, &a, &o, &r, err, sizeof err), KNEE_EMISMATCH);
    assert_non_null(strstr(err, "after: rep-1 vs rep-3: loop: open vs closed"));
    /* an unknown model is refused too */
    a.reps[2].model = b.reps[0].model;
    a.reps[0].model.known = false;
    assert_int_equal(compare_run(&b, &a, &o, &r, err, sizeof err), KNEE_EMISMATCH);
    assert_non_null(strstr(err, "load model unknown"));
    /* the model differences themselves */
    struct compare_model m1 = b.reps[0].model, m2 = m1;
    char d[16][200];
    assert_int_equal(compare_model_diff(&m1, &m2, d, 16), 0);
    snprintf(m2.targets[0].authority, sizeof m2.targets[0].authority, "127.0.0.1:9");
    m2.seed = 99;
    m2.threads = 7;
    assert_int_equal(compare_model_diff(&m1, &m2, d, 16), 0); /* not part of the load model */
    snprintf(m2.targets[0].path, sizeof m2.targets[0].path, "/other");
    m2.duration_s = 20;
    assert_int_equal(compare_model_diff(&m1, &m2, d, 16), 2);
    assert_string_equal(d[0], "duration: 10s vs 20s");
    assert_string_equal(d[1], "target api: path / vs /other");
    /* --stages: the same stages, or the first that differs */
    m2 = m1;
    m1.nstages = m2.nstages = 2;
    m1.stages[0] = m2.stages[0] = (struct run_stage){100, 100, 1000000000ULL, false};
    m1.stages[1] = (struct run_stage){100, 500, 2000000000ULL, false};
    m2.stages[1] = m1.stages[1];
    assert_int_equal(compare_model_diff(&m1, &m2, d, 16), 0);
    m2.stages[1].to = 400;
    assert_int_equal(compare_model_diff(&m1, &m2, d, 16), 1);
    assert_string_equal(d[0], "stage 2: 100.0..500.0/s for 2 s vs 100.0..400.0/s for 2 s");
    m2.nstages = 1;
    assert_int_equal(compare_model_diff(&m1, &m2, d, 16), 1);
    assert_string_equal(d[0], "stages: 2 vs 1");
    compare_side_release(&b);
    compare_side_release(&a);
}

static void test_fail_if(void **state)
{
    (void)state;
    struct compare_fail_if f;
    char err[256];
    assert_int_equal(compare_fail_if_parse("p99+5%", &f, err, sizeof err), 0);
    assert_true(f.relative && f.metric == CMP_P99 && fabs(f.limit - 0.05) < 1e-15);
    assert_int_equal(compare_fail_if_parse("p99.9+2ms", &f, err, sizeof err), 0);
    assert_true(!f.relative && f.metric == CMP_P999 && f.limit == 2);
    assert_int_equal(compare_fail_if_parse("mean+500us", &f, err, sizeof err), 0);
    assert_true(f.limit == 0.5);
    assert_int_equal(compare_fail_if_parse("p75+5%", &f, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "unknown metric 'p75'"));
    assert_int_equal(compare_fail_if_parse("faster", &f, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(compare_fail_if_parse("p99+x%", &f, err, sizeof err), KNEE_EINVAL);

    /* +1 ms on ~2.2 ms: p50 about +45%: p50+20% fails, p50+80% and p50+2ms do not */
    struct rng g;
    rng_seed(&g, 21);
    struct compare_side b, a;
    synth_side(&b, "before", &g, 3, 1500, 0);
    synth_side(&a, "after", &g, 3, 1500, 1.0);
    struct compare_fail_if fi[4];
    assert_int_equal(compare_fail_if_parse("p50+20%", &fi[0], err, sizeof err), 0);
    assert_int_equal(compare_fail_if_parse("p50+80%", &fi[1], err, sizeof err), 0);
    assert_int_equal(compare_fail_if_parse("p50+2ms", &fi[2], err, sizeof err), 0);
    assert_int_equal(compare_fail_if_parse("slower", &fi[3], err, sizeof err), 0);
    struct compare_opts o;
    compare_opts_init(&o);
    o.resamples = 400;
    o.fail_if = fi;
    o.nfail_if = 4;
    struct compare_result r;
    assert_int_equal(compare_run(&b, &a, &o, &r, err, sizeof err), 0);
    assert_true(fi[0].failed && !fi[1].failed && !fi[2].failed && fi[3].failed && r.fail);
    compare_result_release(&r);
    /* the same server: nothing fails */
    compare_side_release(&a);
    synth_side(&a, "after", &g, 3, 1500, 0);
    assert_int_equal(compare_run(&b, &a, &o, &r, err, sizeof err), 0);
    print_message("same server: %s\n", r.all->verdict_text);
    assert_false(fi[0].failed || fi[3].failed || r.fail);
    compare_result_release(&r);
    compare_side_release(&b);
    compare_side_release(&a);
}

/* The median faster, the tail slower: "median better, tail worse". */
static void test_mixed(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 31);
    struct compare_side b, a;
    compare_side_init(&b, "before");
    compare_side_init(&a, "after");
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 3; i++) {
            struct compare_rep *r = compare_rep_add(s ? &a : &b, "rep");
            synth_rep(r, &g, 1, 0); /* the model */
            compare_dist_release(&r->dist[0]);
            double v[4000];
            for (int k = 0; k < 4000; k++) {
                bool tail = k % 20 == 0; /* 5% */
                v[k] = s ? (tail ? 60 : 1.0) : (tail ? 20 : 2.0);
                v[k] *= 1 + 0.02 * rng_uniform(&g);
            }
            assert_int_equal(compare_dist_from_values(&r->dist[0], v, 4000), 0);
        }
    struct compare_result r;
    run(&b, &a, 400, 1, &r);
    assert_int_equal(r.all->verdict, CMP_V_MIXED);
    assert_string_equal(r.all->verdict_text, "median better, tail worse");
    assert_int_equal(r.all->m[CMP_P50].verdict, CMP_V_FASTER);
    assert_int_equal(r.all->m[CMP_P99].verdict, CMP_V_SLOWER);
    compare_result_release(&r);
    compare_side_release(&b);
    compare_side_release(&a);
}

/* ---- files ------------------------------------------------------------------------------------ */

static const char run_json[] =
    "{\"schema\": \"knee-run/1\", \"config\": {\"mode\": \"open\", \"arrivals\": \"constant\", \"seed\": 1, "
    "\"rate\": 100, \"pool_cap\": 10000, \"when_busy\": \"queue\", \"threads\": 2, \"duration_s\": 2, "
    "\"requests\": 0, \"timeout_s\": 10, \"drain_s\": 10, \"warmup_s\": 0.5, \"keepalive\": true}, "
    "\"interrupted\": false, \"generator_limited\": false, \"accounting_ok\": true, "
    "\"all\": {\"name\": \"all\"}, \"targets\": [{\"name\": \"api\", \"url\": \"http://127.0.0.1:8080/x?y=1\", "
    "\"planned_rate\": 100, "
    "\"clients\": 0}], \"warnings\": [\"warm-up: note\", \"self-check: the per-second p99 rises\"]}\n";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_load_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/knee_test_compare_dir_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], csv[256], hl[256], json[256];
    /* a binary log: 10 warm-up records, 90 measured (one dropped, one 503) */
    snprintf(path, sizeof path, "%s/rep-1.bin", dir);
    const char *names[] = {"api"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path, names, 1, 0), 0);
    for (int i = 0; i < 100; i++) {
        struct reqlog_record rec = {0};
        rec.planned_ns = (uint64_t)i * 20000000ULL; /* 20 ms apart: the first 25 in the 0.5 s warm-up */
        rec.sent_ns = rec.planned_ns + 1000;
        rec.done_ns = rec.planned_ns + (uint64_t)(i + 1) * 100000ULL; /* (i+1) * 0.1 ms */
        rec.status = 200;
        rec.outcome = OUTCOME_OK;
        if (i == 50) {
            rec.outcome = OUTCOME_DROPPED;
            rec.sent_ns = rec.done_ns = 0;
        }
        if (i == 60) {
            rec.outcome = OUTCOME_HTTP_ERROR;
            rec.status = 503;
        }
        if (i < 25)
            rec.flags = REQLOG_FLAG_WARMUP;
        assert_int_equal(reqlog_write(w, &rec), 0);
    }
    assert_int_equal(reqlog_writer_close(w), 0);
    snprintf(json, sizeof json, "%s/rep-1.json", dir);
    write_file(json, run_json);
    /* a CSV with the same requests and its JSON: warm-up from warmup_s */
    snprintf(csv, sizeof csv, "%s/rep-2.csv", dir);
    FILE *f = fopen(csv, "w");
    fprintf(f, "%s\n", REQLOG_CSV_HEADER);
    for (int i = 0; i < 100; i++) {
        if (i == 50)
            fprintf(f, "api,%.9f,,,,,0,dropped,0,1\n", i * 0.02);
        else
            fprintf(f, "api,%.9f,%.6f,,,,200,%s,0,1\n", i * 0.02, (i + 1) * 0.1, i == 60 ? "http_error" : "ok");
    }
    fclose(f);
    snprintf(json, sizeof json, "%s/rep-2.json", dir);
    write_file(json, run_json);
    /* an hlog of the measured 74 latencies (warm-up never in knee's hlog) */
    snprintf(hl, sizeof hl, "%s/rep-10.hlog", dir);
    f = fopen(hl, "w");
    struct hlog_writer *hw;
    assert_int_equal(hlog_writer_open(&hw, f, 1700000000.0, NULL), 0);
    struct hdr h;
    assert_int_equal(hdr_init(&h, 1, 3600000000000LL, 3), 0);
    for (int i = 25; i < 100; i++)
        if (i != 50)
            hdr_record(&h, (int64_t)(i + 1) * 100000, 1);
    assert_int_equal(hlog_writer_write(hw, "api", 0, 1, &h), 0);
    assert_int_equal(hlog_writer_close(hw), 0);
    fclose(f);
    hdr_release(&h);
    snprintf(json, sizeof json, "%s/repeat.json", dir);
    write_file(json, "{\"schema\": \"knee-repeat/1\"}\n");

    struct compare_side s;
    compare_side_init(&s, "before");
    char err[512];
    const char *paths[] = {dir};
    assert_int_equal(compare_side_load(&s, paths, 1, err, sizeof err), 0);
    assert_int_equal(s.nreps, 3);
    assert_string_equal(s.reps[0].label, "rep-1");
    assert_string_equal(s.reps[1].label, "rep-2");
    assert_string_equal(s.reps[2].label, "rep-10"); /* natural order */
    for (int i = 0; i < 2; i++) {
        const struct compare_rep *r = &s.reps[i];
        assert_true(r->model.known);
        assert_true(fabs(r->model.warmup_s - 0.5) < 1e-12);
        assert_string_equal(r->model.targets[0].path, "/x?y=1");
        assert_string_equal(r->model.targets[0].authority, "127.0.0.1:8080");
        assert_int_equal(r->requests, 75); /* 25 warm-up records left out */
        assert_int_equal(r->not_ok, 2);    /* the dropped one and the 503 */
        assert_int_equal(r->dist[0].n, 74);
        assert_true(fabs(compare_dist_percentile(&r->dist[0], 100) - 10.0) < 1e-9);
        assert_true(fabs(compare_dist_percentile(&r->dist[0], 0) - 2.6) < 1e-9);
        assert_int_equal(r->nwarnings, 1); /* the self-check line */
    }
    assert_true(s.reps[2].dist[0].approx);
    assert_int_equal(s.reps[2].dist[0].n, 74);
    assert_true(fabs(compare_dist_percentile(&s.reps[2].dist[0], 50) -
                     compare_dist_percentile(&s.reps[0].dist[0], 50)) < 0.001 * 6.5);
    compare_side_release(&s);

    /* listed files: the JSON beside a log is found by its stem */
    compare_side_init(&s, "after");
    const char *list[] = {path, csv};
    assert_int_equal(compare_side_load(&s, list, 2, err, sizeof err), 0);
    assert_int_equal(s.nreps, 2);
    assert_true(s.reps[0].model.known && s.reps[1].model.known);
    compare_side_release(&s);

    /* a CSV alone: no warm-up information, said so */
    char lone[256];
    snprintf(lone, sizeof lone, "%s/lone.csv", dir);
    FILE *in = fopen(csv, "r"), *out = fopen(lone, "w");
    int c;
    while ((c = fgetc(in)) != EOF)
        fputc(c, out);
    fclose(in);
    fclose(out);
    compare_side_init(&s, "after");
    const char *one[] = {lone};
    assert_int_equal(compare_side_load(&s, one, 1, err, sizeof err), 0);
    assert_false(s.reps[0].warmup_known);
    assert_false(s.reps[0].model.known);
    assert_int_equal(s.reps[0].dist[0].n, 99);
    compare_side_release(&s);

    /* bad input names the file */
    compare_side_init(&s, "after");
    const char *missing[] = {"/nonexistent/knee.bin"};
    assert_int_not_equal(compare_side_load(&s, missing, 1, err, sizeof err), 0);
    assert_non_null(strstr(err, "/nonexistent/knee.bin"));
    compare_side_release(&s);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    assert_int_equal(system(path), 0);
}

/* ---- by stage ---------------------------------------------------------------------------- */

/* A repetition with the stages 50:1s,100:1s and its stage points (p50, p99 in ms; ok of planned). */
static void stage_rep(struct compare_side *s, const char *label, double p50, double p99, uint64_t ok)
{
    struct compare_rep *r = compare_rep_add(s, label);
    r->model.known = true;
    r->model.nstages = 2;
    r->model.stages[0] = (struct run_stage){50, 50, 1000000000, false};
    r->model.stages[1] = (struct run_stage){100, 100, 1000000000, false};
    r->nstage_points = 2;
    r->stage_points[0] = (struct compare_stage_point){50, ok < 50 ? ok : 50, p50, p99};
    r->stage_points[1] = (struct compare_stage_point){100, ok, 2 * p50, 2 * p99};
}

static void test_stage_rows(void **state)
{
    (void)state;
    struct compare_side b, a;
    compare_side_init(&b, "before");
    compare_side_init(&a, "after");
    stage_rep(&b, "b1", 1, 4, 50);
    stage_rep(&b, "b2", 3, 8, 50);
    stage_rep(&b, "b3", 2, 6, 50);
    stage_rep(&a, "a1", 4, 12, 45);
    struct compare_stage_row rows[RUN_MAX_STAGES];
    assert_int_equal(compare_stage_rows(&b, &a, rows, RUN_MAX_STAGES), 2);
    /* summed requests, the median of the repetitions' p50 and p99, 1 - ok / planned */
    assert_int_equal(rows[0].req_before, 150);
    assert_int_equal(rows[1].req_before, 300);
    assert_int_equal(rows[0].req_after, 50);
    assert_true(rows[0].from == 50 && rows[0].to == 50 && rows[0].duration_s == 1);
    assert_true(rows[0].p50_before == 2 && rows[0].p99_before == 6);
    assert_true(rows[1].p50_before == 4 && rows[1].p99_before == 12);
    assert_true(rows[0].p50_after == 4 && rows[1].p99_after == 24);
    assert_true(rows[0].err_before == 0);
    assert_true(fabs(rows[0].err_after - 5.0 / 50) < 1e-12 && fabs(rows[1].err_after - 55.0 / 100) < 1e-12);
    assert_int_equal(compare_stage_rows(&b, &a, rows, 1), 1);

    /* the table: one row per stage, the labels; the JSON: "stages" with the ratio */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    compare_print_stages(f, &b, &a);
    fclose(f);
    assert_non_null(strstr(text, "by stage (per stage: point values from each run's JSON, no intervals"));
    assert_non_null(strstr(text, "    1  50/s 1s"));
    assert_non_null(strstr(text, "    2  100/s 1s"));
    assert_non_null(strstr(text, "2.00x"));
    free(text);
    f = open_memstream(&text, &len);
    struct jw j;
    jw_init(&j, f, false);
    jw_object_begin(&j);
    compare_write_stages_json(&j, &b, &a);
    jw_object_end(&j);
    jw_end(&j);
    fclose(f);
    assert_non_null(strstr(text, "\"stages\""));
    assert_non_null(strstr(text, "\"requests_before\":150"));
    assert_non_null(strstr(text, "\"p50_ratio\":2"));
    free(text);

    /* a repetition without its stage points, or different stages: no rows, no table, no JSON */
    a.reps[0].nstage_points = 0;
    assert_int_equal(compare_stage_rows(&b, &a, rows, RUN_MAX_STAGES), 0);
    a.reps[0].nstage_points = 2;
    b.reps[2].model.stages[1].to = 120;
    assert_int_equal(compare_stage_rows(&b, &a, rows, RUN_MAX_STAGES), 0);
    f = open_memstream(&text, &len);
    compare_print_stages(f, &b, &a);
    jw_init(&j, f, false);
    jw_object_begin(&j);
    compare_write_stages_json(&j, &b, &a);
    jw_object_end(&j);
    jw_end(&j);
    fclose(f);
    assert_string_equal(text, "{}\n");
    free(text);
    b.reps[2].model.stages[1].to = 100;
    a.reps[0].model.nstages = 0;
    assert_int_equal(compare_stage_rows(&b, &a, rows, RUN_MAX_STAGES), 0);
    compare_side_release(&b);
    compare_side_release(&a);
}

static void test_stage_points_of(void **state)
{
    (void)state;
    struct run_stage st[2] = {{50, 50, 1000000000, false}, {100, 100, 1000000000, false}};
    struct run_record rec;
    memset(&rec, 0, sizeof rec);
    rec.nstages = 2;
    rec.stages = record_stages_new(st, 2);
    rec.stages[0].counts.planned = 50;
    rec.stages[0].counts.outcome[OUTCOME_OK] = 49;
    rec.stages[0].lat.p50 = 1.5;
    rec.stages[0].lat.p99 = 3.5;
    rec.stages[1].counts.planned = 100;
    struct compare_stage_point pts[RUN_MAX_STAGES];
    size_t n = 99;
    compare_stage_points_of(pts, &n, &rec);
    assert_int_equal(n, 2);
    assert_int_equal(pts[0].planned, 50);
    assert_int_equal(pts[0].ok, 49);
    assert_true(pts[0].p50_ms == 1.5 && pts[0].p99_ms == 3.5);
    assert_int_equal(pts[1].ok, 0);
    assert_true(isnan(pts[1].p50_ms) && isnan(pts[1].p99_ms)); /* no ok request: no latency */
    record_stages_free(rec.stages, 2);
    rec.nstages = 0;
    compare_stage_points_of(pts, &n, &rec);
    assert_int_equal(n, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]); /* one test by name, for a quick look */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dist),
        cmocka_unit_test(test_poisson),
        cmocka_unit_test(test_bootstrap_python),
        cmocka_unit_test(test_same_server),
        cmocka_unit_test(test_same_server_long_runs),
        cmocka_unit_test(test_added_delay),
        cmocka_unit_test(test_few_reps),
        cmocka_unit_test(test_models),
        cmocka_unit_test(test_fail_if),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_stream_rows),
        cmocka_unit_test(test_load_files),
        cmocka_unit_test(test_stage_rows),
        cmocka_unit_test(test_stage_points_of),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
