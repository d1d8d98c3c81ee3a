/* Unit tests for src/model and `knee model`: textbook values, limits and special cases,
 * cross-checks between independent formulas, seeded simulations of the same queues, bad
 * input, and the CLI driven in-process with stdout and stderr captured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/commands.h"
#include "core/err.h"
#include "core/rng.h"
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |got − want| ≤ rel·|want| (or ≤ rel when want is 0), printing both sides on failure. */
#define assert_close(got, want, rel) assert_close_at((got), (want), (rel), __FILE__, __LINE__)

static void assert_close_at(double got, double want, double rel, const char *file, int line)
{
    double tol = want == 0 ? rel : rel * fabs(want);
    if (!(fabs(got - want) <= tol)) {
        print_error("%s:%d: got %.17g, want %.17g (relative tolerance %g)\n", file, line, got, want, rel);
        _fail(file, line);
    }
}

/* ---- M/M/1 ------------------------------------------------------------------------------ */

static void test_mm1_textbook(void **state)
{
    (void)state;
    struct model_mmc m;
    /* λ = 70/s, S = 10 ms: the knee article's row. */
    assert_int_equal(model_mmc(1, 70, 100, &m), 0);
    assert_close(m.utilisation, 0.7, 1e-15);
    assert_close(m.p_wait, 0.7, 1e-15);
    assert_close(m.mean_response_s, 1.0 / 30, 1e-14); /* 33.33 ms = 1/(μ − λ) */
    assert_close(m.mean_wait_s, 0.7 / 30, 1e-14);     /* ρ/(μ − λ) */
    assert_close(m.mean_in_system, 0.7 / 0.3, 1e-14); /* ρ/(1 − ρ) */
    assert_close(m.mean_in_queue, 0.49 / 0.3, 1e-14); /* ρ²/(1 − ρ) */
    double t;
    assert_int_equal(model_mmc_response_quantile(&m, 0.99, &t), 0);
    assert_close(t / m.mean_response_s, 4.605170185988091, 1e-12); /* ln 100 */
    assert_close(t * 1e3, 153.5056728662697, 1e-12);
    assert_int_equal(model_mmc_response_quantile(&m, 0.5, &t), 0);
    assert_close(t / m.mean_response_s, M_LN2, 1e-12);
    assert_int_equal(model_mmc_response_quantile(&m, 0.999, &t), 0);
    assert_close(t / m.mean_response_s, 6.907755278982137, 1e-12);
    /* Waiting time: atom 1 − ρ at 0, so the median wait is ln(0.7/0.5)/30 and p20 is 0. */
    assert_int_equal(model_mmc_wait_quantile(&m, 0.5, &t), 0);
    assert_close(t, log(0.7 / 0.5) / 30, 1e-12);
    assert_int_equal(model_mmc_wait_quantile(&m, 0.2, &t), 0);
    assert_true(t == 0);
    /* The general W + Exp(μ) tail collapses to e^(−(μ−λ)t) for one server. */
    for (double x = 0; x < 0.5; x += 0.01)
        assert_close(model_mmc_response_survival(&m, x), exp(-30 * x), 1e-12);
    assert_close(model_mmc_wait_survival(&m, 0.01), 0.7 * exp(-0.3), 1e-14);
    assert_true(model_mmc_response_survival(&m, -1) == 1);
}

static void test_mmc_bad_input(void **state)
{
    (void)state;
    struct model_mmc m;
    assert_int_equal(model_mmc(1, 100, 100, &m), KNEE_EUNSTABLE); /* ρ = 1 */
    assert_int_equal(model_mmc(1, 120, 100, &m), KNEE_EUNSTABLE);
    assert_int_equal(model_mmc(4, 400, 100, &m), KNEE_EUNSTABLE);
    assert_int_equal(model_mmc(4, 399.9, 100, &m), 0);
    assert_int_equal(model_mmc(0, 1, 100, &m), KNEE_EINVAL);
    assert_int_equal(model_mmc(1, 0, 100, &m), KNEE_EINVAL);
    assert_int_equal(model_mmc(1, -1, 100, &m), KNEE_EINVAL);
    assert_int_equal(model_mmc(1, 1, 0, &m), KNEE_EINVAL);
    assert_int_equal(model_mmc(1, NAN, 100, &m), KNEE_EINVAL);
    assert_int_equal(model_mmc(1, 1, INFINITY, &m), KNEE_EINVAL);
    assert_int_equal(model_mmc(2, 100, 100, &m), 0);
    double t;
    assert_int_equal(model_mmc_response_quantile(&m, 0, &t), KNEE_EINVAL);
    assert_int_equal(model_mmc_response_quantile(&m, 1, &t), KNEE_EINVAL);
    assert_int_equal(model_mmc_wait_quantile(&m, 1.5, &t), KNEE_EINVAL);
    assert_int_equal(model_mmc_wait_quantile(&m, NAN, &t), KNEE_EINVAL);
}

/* ---- Erlang B and C --------------------------------------------------------------------- */

/* The textbook closed form, in logs: fine for the small c the test compares. */
static double erlang_c_direct(unsigned c, double a)
{
    double sum = 0;
    for (unsigned k = 0; k < c; k++)
        sum += exp(k * log(a) - lgamma(k + 1.0));
    double top = exp(c * log(a) - lgamma(c + 1.0)) * c / (c - a);
    return top / (sum + top);
}

static void test_erlang(void **state)
{
    (void)state;
    double c;
    assert_close(model_erlang_b(2, 1), 0.2, 1e-15); /* (1/2)/(1 + 1 + 1/2) */
    assert_close(model_erlang_b(1, 3), 0.75, 1e-15);
    assert_true(model_erlang_b(0, 3) == 1);
    assert_true(isnan(model_erlang_b(2, -1)));
    assert_int_equal(model_erlang_c(2, 1, &c), 0);
    assert_close(c, 1.0 / 3, 1e-15); /* c = 2, a = 1 */
    assert_int_equal(model_erlang_c(1, 0.7, &c), 0);
    assert_close(c, 0.7, 1e-15); /* one server: C = ρ */
    assert_int_equal(model_erlang_c(4, 3, &c), 0);
    assert_close(c, 0.50943396226415094, 1e-14); /* 27/53, the usual table value 0.5094 */
    assert_int_equal(model_erlang_c(10, 8, &c), 0);
    assert_close(c, 0.4091801507964435, 1e-13); /* tables: C(10, 8) ≈ 0.409 */
    for (unsigned s = 1; s <= 30; s++)
        for (double r = 0.05; r < 1; r += 0.1) {
            assert_int_equal(model_erlang_c(s, r * s, &c), 0);
            assert_close(c, erlang_c_direct(s, r * s), 1e-11);
        }
    /* Where a^c/c! overflows a double, the recurrence still answers. */
    assert_int_equal(model_erlang_c(5000, 4900, &c), 0);
    assert_true(c > 0 && c < 1);
    assert_int_equal(model_erlang_c(2, 2, &c), KNEE_EUNSTABLE);
    assert_int_equal(model_erlang_c(0, 0.5, &c), KNEE_EINVAL);
    assert_int_equal(model_erlang_c(2, NAN, &c), KNEE_EINVAL);
}

/* ---- M/M/c response time --------------------------------------------------------------- */

/* The textbook hypoexponential form for θ ≠ μ, written independently of model.c. */
static double mmc_survival_direct(const struct model_mmc *m, double t)
{
    double mu = m->service_per_s, th = m->decay_per_s, C = m->p_wait;
    double hypo = (th * exp(-mu * t) - mu * exp(-th * t)) / (th - mu);
    return (1 - C) * exp(-mu * t) + C * hypo;
}

static void test_mmc_response(void **state)
{
    (void)state;
    struct model_mmc m;
    /* θ = cμ − λ above and below μ (c = 4, λ = 300, μ = 100 is θ = μ: see below). */
    double cases[][3] = {{4, 290, 100}, {2, 50, 100}, {3, 250, 100}, {8, 790, 100}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(model_mmc((unsigned)cases[i][0], cases[i][1], cases[i][2], &m), 0);
        for (double t = 0; t < 0.3; t += 0.005)
            assert_close(model_mmc_response_survival(&m, t), mmc_survival_direct(&m, t), 1e-9);
        static const double qs[] = {0.5, 0.9, 0.99, 0.999, 0.9999};
        for (size_t k = 0; k < 5; k++) {
            double t;
            assert_int_equal(model_mmc_response_quantile(&m, qs[k], &t), 0);
            assert_close(model_mmc_response_survival(&m, t), 1 - qs[k], 1e-9);
        }
        /* The mean of the distribution is T: integrate the survival function. */
        double mean = 0, h = 1e-5;
        for (double t = h / 2; t < 60 * m.mean_response_s; t += h)
            mean += model_mmc_response_survival(&m, t) * h;
        assert_close(mean, m.mean_response_s, 1e-6);
    }

    /* θ = μ exactly (λ = (c − 1)μ): the Erlang-2 limit, continuous with its neighbours. */
    static const unsigned cs[] = {2, 4};
    for (size_t i = 0; i < 2; i++) {
        struct model_mmc eq, below, above;
        double lambda = (cs[i] - 1) * 100.0;
        assert_int_equal(model_mmc(cs[i], lambda, 100, &eq), 0);
        assert_true(eq.decay_per_s == eq.service_per_s);
        assert_int_equal(model_mmc(cs[i], lambda * (1 - 1e-9), 100, &below), 0);
        assert_int_equal(model_mmc(cs[i], lambda * (1 + 1e-9), 100, &above), 0);
        for (double t = 0; t < 0.2; t += 0.01) {
            double want = exp(-100 * t) * (1 + eq.p_wait * 100 * t);
            assert_close(model_mmc_response_survival(&eq, t), want, 1e-14);
            assert_close(model_mmc_response_survival(&below, t), want, 1e-7);
            assert_close(model_mmc_response_survival(&above, t), want, 1e-7);
        }
        double t;
        assert_int_equal(model_mmc_response_quantile(&eq, 0.99, &t), 0);
        assert_close(model_mmc_response_survival(&eq, t), 0.01, 1e-9);
    }
    /* Far tails stay finite (no e^(+δt)·e^(−μt) = inf·0). */
    assert_int_equal(model_mmc(4, 10, 100, &m), 0);
    double far = model_mmc_response_survival(&m, 1e4);
    assert_true(isfinite(far) && far >= 0);
}

/* Seeded simulation of FCFS M/M/c (the earliest-free server takes the next arrival) and
 * M/D/1; the models must land within sampling error of what the queue actually does. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void simulate(unsigned c, double lambda, double mean_service_s, int deterministic, double *resp, size_t n,
                     uint64_t seed)
{
    struct rng r;
    rng_seed(&r, seed);
    double *free_at = calloc(c, sizeof *free_at), now = 0;
    assert_non_null(free_at);
    for (size_t i = 0; i < n; i++) {
        now += rng_exp(&r, 1 / lambda);
        unsigned best = 0;
        for (unsigned k = 1; k < c; k++)
            if (free_at[k] < free_at[best])
                best = k;
        double start = free_at[best] > now ? free_at[best] : now;
        double s = deterministic ? mean_service_s : rng_exp(&r, mean_service_s);
        free_at[best] = start + s;
        resp[i] = start + s - now;
    }
    free(free_at);
    qsort(resp, n, sizeof *resp, cmp_double);
}

static void test_simulation_agrees(void **state)
{
    (void)state;
    enum { N = 400000 };
    double *resp = malloc(N * sizeof *resp);
    assert_non_null(resp);
    struct model_mmc m;
    double t;

    simulate(4, 300, 0.010, 0, resp, N, 42);
    assert_int_equal(model_mmc(4, 300, 100, &m), 0);
    double sum = 0;
    for (size_t i = 0; i < N; i++)
        sum += resp[i];
    assert_close(sum / N, m.mean_response_s, 0.03);
    assert_int_equal(model_mmc_response_quantile(&m, 0.5, &t), 0);
    assert_close(resp[N / 2], t, 0.03);
    assert_int_equal(model_mmc_response_quantile(&m, 0.99, &t), 0);
    assert_close(resp[(size_t)(0.99 * N)], t, 0.05);

    struct model_md1_dist d;
    simulate(1, 70, 0.010, 1, resp, N, 7);
    assert_int_equal(model_md1_dist_init(&d, 70, 0.010), 0);
    sum = 0;
    for (size_t i = 0; i < N; i++)
        sum += resp[i];
    assert_close(sum / N, d.m.mean_response_s, 0.04);
    assert_int_equal(model_md1_wait_quantile(&d, 0.9, &t), 0);
    assert_close(resp[(size_t)(0.9 * N)], t + 0.010, 0.04);
    assert_int_equal(model_md1_wait_quantile(&d, 0.99, &t), 0);
    assert_close(resp[(size_t)(0.99 * N)], t + 0.010, 0.06);
    model_md1_dist_release(&d);
    free(resp);
}

/* ---- M/D/1 ------------------------------------------------------------------------------ */

/* Erlang's alternating series, usable only for t of a few service times. */
static double md1_cdf_series(double lambda, double D, double t)
{
    double rho = lambda * D, s = 0;
    for (int k = 0; k <= (int)floor(t / D); k++) {
        double x = lambda * (k * D - t);
        s += (k == 0 ? 1 : pow(x, k) / tgamma(k + 1.0)) * exp(-x);
    }
    return (1 - rho) * s;
}

static void test_md1(void **state)
{
    (void)state;
    struct model_md1 m;
    struct model_mmc mm;
    assert_int_equal(model_md1(70, 0.010, &m), 0);
    assert_int_equal(model_mmc(1, 70, 100, &mm), 0);
    assert_close(m.mean_wait_s, mm.mean_wait_s / 2, 1e-14); /* half of M/M/1's */
    assert_close(m.mean_wait_s, 0.7 * 0.010 / 0.6, 1e-14);
    assert_close(m.mean_response_s, m.mean_wait_s + 0.010, 1e-15);
    assert_close(m.mean_in_system, 70 * m.mean_response_s, 1e-15);
    assert_int_equal(model_md1(100, 0.010, &m), KNEE_EUNSTABLE);
    assert_int_equal(model_md1(0, 0.010, &m), KNEE_EINVAL);
    assert_int_equal(model_md1(10, -1, &m), KNEE_EINVAL);

    struct model_md1_dist d;
    assert_int_equal(model_md1_dist_init(&d, 150, 0.5 / 150), 0); /* ρ = 0.5 */
    double D = d.m.service_s, s;
    /* The atom at 0 and Erlang's first interval, P(W ≤ u) = (1 − ρ)e^(λu). */
    assert_int_equal(model_md1_wait_survival(&d, 0, &s), 0);
    assert_close(s, 0.5, 1e-13);
    for (double u = 0; u < D; u += D / 7) {
        assert_int_equal(model_md1_wait_survival(&d, u, &s), 0);
        assert_close(1 - s, 0.5 * exp(150 * u), 1e-12);
    }
    /* Against the alternating series where it is still accurate (t ≤ 6D at ρ = 0.5). */
    for (double t = 0; t < 6 * D; t += D / 9.3) {
        assert_int_equal(model_md1_wait_survival(&d, t, &s), 0);
        assert_close(1 - s, md1_cdf_series(150, D, t), 1e-10);
    }
    /* The queue-length law sums to 1 and its mean is L = λT (Pollaczek–Khinchine). */
    assert_int_equal(model_md1_wait_survival(&d, 200 * D, &s), 0);
    double total = 0, mean_n = 0;
    for (size_t n = 0; n < d.npi; n++) {
        total += d.pi[n];
        mean_n += (double)n * d.pi[n];
    }
    assert_close(total, 1, 1e-12);
    assert_close(mean_n, d.m.mean_in_system, 1e-10);
    /* E[W] = ∫ P(W > t) dt equals Pollaczek–Khinchine. */
    double mean_w = 0, h = D / 200;
    for (double t = h / 2; t < 60 * D; t += h) {
        assert_int_equal(model_md1_wait_survival(&d, t, &s), 0);
        mean_w += s * h;
    }
    assert_close(mean_w, d.m.mean_wait_s, 1e-6);
    /* Quantiles: 0 inside the atom, and the survival there is 1 − q. */
    double t;
    assert_int_equal(model_md1_wait_quantile(&d, 0.4, &t), 0);
    assert_true(t == 0);
    static const double qs[] = {0.6, 0.9, 0.99, 0.999};
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal(model_md1_wait_quantile(&d, qs[k], &t), 0);
        assert_int_equal(model_md1_wait_survival(&d, t, &s), 0);
        assert_close(s, 1 - qs[k], 1e-9);
    }
    assert_int_equal(model_md1_wait_quantile(&d, 1, &t), KNEE_EINVAL);
    model_md1_dist_release(&d);

    /* Heavy traffic: W is nearly exponential with the P-K mean, and the high quantiles are
     * computed where Erlang's series has lost every digit. */
    assert_int_equal(model_md1_dist_init(&d, 99, 0.010), 0);
    assert_int_equal(model_md1_wait_quantile(&d, 0.99, &t), 0);
    assert_close(t, d.m.mean_wait_s * log(100), 0.02);
    assert_int_equal(model_md1_wait_survival(&d, t, &s), 0);
    assert_close(s, 0.01, 1e-9);
    model_md1_dist_release(&d);

    /* Too close to 1: a clear range error rather than a wrong number. */
    assert_int_equal(model_md1_dist_init(&d, 1 - 1e-9, 1), 0);
    assert_int_equal(model_md1_wait_quantile(&d, 0.99, &t), KNEE_ERANGE);
    assert_int_equal(model_md1_wait_survival(&d, 1e7, &s), KNEE_ERANGE);
    model_md1_dist_release(&d);
}

/* ---- Little and fan-out ------------------------------------------------------------------ */

static void test_little(void **state)
{
    (void)state;
    double l = NAN, lambda = 70, w = 1.0 / 30;
    assert_int_equal(model_little(&l, &lambda, &w), 0);
    assert_close(l, 7.0 / 3, 1e-15);
    l = 7.0 / 3, lambda = NAN, w = 1.0 / 30;
    assert_int_equal(model_little(&l, &lambda, &w), 0);
    assert_close(lambda, 70, 1e-14);
    l = 7.0 / 3, lambda = 70, w = NAN;
    assert_int_equal(model_little(&l, &lambda, &w), 0);
    assert_close(w, 1.0 / 30, 1e-14);
    l = NAN, lambda = NAN, w = 1;
    assert_int_equal(model_little(&l, &lambda, &w), KNEE_EINVAL);
    l = 1, lambda = 1, w = 1;
    assert_int_equal(model_little(&l, &lambda, &w), KNEE_EINVAL);
    l = NAN, lambda = -1, w = 1;
    assert_int_equal(model_little(&l, &lambda, &w), KNEE_EINVAL);
    l = 0, lambda = NAN, w = 1;
    assert_int_equal(model_little(&l, &lambda, &w), KNEE_EINVAL);
}

static void test_fanout(void **state)
{
    (void)state;
    assert_close(model_fanout_any(0.02, 20), 1 - pow(0.98, 20), 1e-14);
    assert_close(model_fanout_any(0.02, 20), 0.3323920282449, 1e-12);
    assert_close(model_fanout_any(0.01, 100), 0.6339676587267709, 1e-13); /* The Tail at Scale: 63% */
    assert_close(model_fanout_any(0.02, 1), 0.02, 1e-15);
    assert_close(model_fanout_any(1e-15, 10), 1e-14, 1e-12); /* 1 − (1 − p)^n would lose this */
    assert_true(model_fanout_any(0, 50) == 0);
    assert_true(model_fanout_any(1, 50) == 1);
    assert_true(isnan(model_fanout_any(1.5, 2)));
    assert_true(isnan(model_fanout_any(NAN, 2)));
    assert_close(model_fanout_leaf_level(0.99, 100), 0.9998995016917583, 1e-13);
    assert_close(pow(model_fanout_leaf_level(0.99, 20), 20), 0.99, 1e-14);
    assert_close(model_fanout_leaf_level(0.99, 1), 0.99, 1e-15);
    assert_true(isnan(model_fanout_leaf_level(1, 3)));
    assert_true(isnan(model_fanout_leaf_level(0.9, 0)));
}

/* ---- the CLI, in-process ------------------------------------------------------------------ */

struct captured {
    int rc;
    char out[16384], err[4096];
};

static void slurp(FILE *f, char *buf, size_t len)
{
    fflush(f);
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Run `knee ARGS...` (a NULL-terminated list) with stdout and stderr captured. */
static void knee(struct captured *c, ...)
{
    char *argv[32] = {"knee"};
    int argc = 1;
    va_list ap;
    va_start(ap, c);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    FILE *saved_out = stdout, *saved_err = stderr;
    stdout = tmpfile();
    stderr = tmpfile();
    assert_non_null(stdout);
    assert_non_null(stderr);
    c->rc = knee_main(argc, argv);
    FILE *o = stdout, *e = stderr;
    stdout = saved_out;
    stderr = saved_err;
    slurp(o, c->out, sizeof c->out);
    slurp(e, c->err, sizeof c->err);
}

#define assert_contains(hay, needle)                                                                                   \
    do {                                                                                                               \
        if (!strstr((hay), (needle))) {                                                                                \
            print_error("expected to find '%s' in:\n%s\n", (needle), (hay));                                           \
            fail();                                                                                                    \
        }                                                                                                              \
    } while (0)

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_cli(void **state)
{
    (void)state;
    struct captured *c = malloc(sizeof *c);
    assert_non_null(c);

    knee(c, "model", "mm1", "--service", "10ms", "--rate", "70", NULL);
    assert_int_equal(c->rc, 0);
    assert_contains(c->out, "T = 1/(μ−λ)");
    assert_contains(c->out, "33.33ms");
    assert_contains(c->out, "153.5ms  (4.605·T)");
    assert_contains(c->out, "utilisation      ρ = λ/μ                    70%");

    knee(c, "model", "mm1", "--mu", "100", "--rate", "70", "--json", NULL);
    assert_int_equal(c->rc, 0);
    assert_contains(c->out, "\"model\": \"mm1\"");
    assert_contains(c->out, "\"mean_response_ms\": 33.33333333333");
    assert_contains(c->out, "\"p\": 99,");
    assert_contains(c->out, "\"response_ms\": 153.50567286626");

    knee(c, "model", "mmc", "--servers", "2", "--service", "10ms", "--rate", "100", NULL);
    assert_int_equal(c->rc, 0);
    assert_contains(c->out, "33.33%"); /* C(2, 1) = 1/3 */

    knee(c, "model", "md1", "--service", "10ms", "--rate", "70", NULL);
    assert_int_equal(c->rc, 0);
    assert_contains(c->out, "11.67ms (M/M/1 with the same mean: 23.33ms)");

    knee(c, "model", "little", "--rate", "70", "--W", "33.33ms", NULL);
    assert_int_equal(c->rc, 0);
    assert_contains(c->out, "= 2.333 in the system");

    knee(c, "model", "fanout", "--p", "2%", "--n", "1,2,5,10,20", "--q", "99%", NULL);
    assert_int_equal(c->rc, 0);
    assert_contains(c->out, "33.24%");
    assert_contains(c->out, "p99.9498");
    assert_int_equal(count_lines(c->out), 3 + 5);

    knee(c, "model", "ladder", "--service", "10ms", "--rates", "10,20,...,90,95", NULL);
    assert_int_equal(c->rc, 0);
    assert_int_equal(count_lines(c->out), 3 + 10);
    assert_contains(c->out, "      70     70%      70%      23.33      33.33");

    knee(c, "model", "ladder", "--service", "10ms", "--rates", "10,20,...,95", "--json", NULL);
    assert_int_equal(c->rc, 0);
    assert_contains(c->out, "\"arrival_rate_per_s\": 95,");
    assert_true(strstr(c->out, "\"arrival_rate_per_s\": 96") == NULL);

    /* Unstable systems: a plain sentence, exit 2, nothing on stdout. */
    knee(c, "model", "mm1", "--service", "10ms", "--rate", "100", NULL);
    assert_int_equal(c->rc, 2);
    assert_string_equal(c->out, "");
    assert_contains(c->err, "the queue grows without bound");
    assert_contains(c->err, "utilisation 100% ≥ 100%");
    knee(c, "model", "mmc", "-c", "4", "--service", "10ms", "--rate", "500", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "capacity 400/s (4 servers × 100/s)");
    knee(c, "model", "md1", "--service", "10ms", "--rate", "120", "--json", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "grows without bound");

    /* Bad flags: exit 2 naming the flag. */
    knee(c, "model", "mm1", "--service", "10ms", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "--rate is required");
    knee(c, "model", "mm1", "--service", "soon", "--rate", "1", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "--service: 'soon'");
    knee(c, "model", "mm1", "--service", "1ms", "--mu", "5", "--rate", "1", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "--service and --mu");
    knee(c, "model", "mm1", "--servers", "2", "--service", "1ms", "--rate", "1", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "--servers");
    knee(c, "model", "little", "--L", "3", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "exactly two of --L, --rate and --W");
    knee(c, "model", "fanout", "--p", "2%", "--n", "5,0", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "--n: '0'");
    knee(c, "model", "ladder", "--service", "10ms", "--rates", "10,...", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "--rates");
    knee(c, "model", "mm1", "--service", "10ms", "--rate", "5", "--percentiles", "99,100", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "--percentiles: '100'");
    knee(c, "model", "erlang", NULL);
    assert_int_equal(c->rc, 2);
    assert_contains(c->err, "unknown calculator 'erlang'");

    /* Help: the calculators and each calculator's options. */
    knee(c, "model", "--help", NULL);
    assert_int_equal(c->rc, 0);
    assert_contains(c->out, "fanout");
    knee(c, "model", "mmc", "--help", NULL);
    assert_int_equal(c->rc, 0);
    assert_contains(c->out, "--servers N");
    knee(c, "help", "model", NULL);
    assert_int_equal(c->rc, 0);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mm1_textbook),
        cmocka_unit_test(test_mmc_bad_input),
        cmocka_unit_test(test_erlang),
        cmocka_unit_test(test_mmc_response),
        cmocka_unit_test(test_simulation_agrees),
        cmocka_unit_test(test_md1),
        cmocka_unit_test(test_little),
        cmocka_unit_test(test_fanout),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
