/* Unit tests for src/stats/checks: the Anderson–Darling exponentiality statistic and the
 * Mann–Kendall trend test with Sen's slope against values python3's standard library
 * computes independently at test time (math.erfc, math.fsum,
 * statistics.median), Stephens' critical values on samples that are and are not
 * exponential, and Student's t quantiles against the published table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/rng.h"
#include "stats/checks.h"
#include "stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define assert_near(a, b, rel)                                                                                         \
    do {                                                                                                               \
        double a_ = (a), b_ = (b);                                                                                     \
        if (!(fabs(a_ - b_) <= (rel)*fmax(fabs(a_), fabs(b_)))) {                                                      \
            print_error("%s = %.17g, expected %.17g (rel %g)\n", #a, a_, b_, (double)(rel));                           \
            fail();                                                                                                    \
        }                                                                                                              \
    } while (0)

/* Run a python3 program over values written one per line; read back n doubles. */
static bool python(const char *program, const double *v, size_t n, double *out, size_t nout)
{
    if (access("/usr/bin/python3", X_OK) != 0)
        return false;
    char data[] = "/tmp/knee_test_checks_XXXXXX", prog[] = "/tmp/knee_test_checks_py_XXXXXX";
    int fd = mkstemp(data);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.17g\n", v[i]);
    fclose(f);
    fd = mkstemp(prog);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs(program, f);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "python3 %s %s", prog, data);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    for (size_t i = 0; i < nout; i++)
        assert_int_equal(fscanf(p, "%lf", &out[i]), 1);
    assert_int_equal(pclose(p), 0);
    unlink(data);
    unlink(prog);
    return true;
}

static const char py_ad[] = "import math, sys\n"
                            "x = sorted(float(l) for l in open(sys.argv[1]))\n"
                            "n = len(x); m = math.fsum(x) / n\n"
                            "F = [1 - math.exp(-v / m) for v in x]\n"
                            "s = math.fsum((2 * i - 1) * (math.log(F[i - 1]) + math.log(1 - F[n - i])) for i in "
                            "range(1, n + 1))\n"
                            "a2 = -n - s / n\n"
                            "print(repr(a2), repr(a2 * (1 + 0.6 / n)))\n";

static void test_ad(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 77);
    double v[400];
    for (int i = 0; i < 400; i++)
        v[i] = rng_exp(&g, 2.5);
    stats_sort(v, 400);
    struct stats_ad ad;
    assert_int_equal(stats_ad_exponential(v, 400, &ad), 0);
    double ref[2];
    if (python(py_ad, v, 400, ref, 2)) {
        assert_near(ad.a2, ref[0], 1e-9);
        assert_near(ad.a2_modified, ref[1], 1e-9);
    }
    assert_near(ad.mean, stats_mean(v, 400), 1e-15);
    /* exponential: rejected at most rarely; over 200 samples of 400, the 1% level rejects
     * about 1% and the 5% level about 5% (Stephens' table is for this modified statistic) */
    int rej1 = 0, rej5 = 0;
    for (int t = 0; t < 200; t++) {
        for (int i = 0; i < 400; i++)
            v[i] = rng_exp(&g, 1.0);
        stats_sort(v, 400);
        assert_int_equal(stats_ad_exponential(v, 400, &ad), 0);
        rej1 += ad.rejected_at > 0 && ad.rejected_at <= 1;
        rej5 += ad.rejected_at > 0 && ad.rejected_at <= 5;
    }
    print_message("exponential samples: rejected at 1%% in %d of 200, at 5%% in %d\n", rej1, rej5);
    assert_true(rej1 <= 8);
    assert_true(rej5 >= 2 && rej5 <= 22);
    /* not exponential: constant gaps with a little jitter, and uniform gaps */
    for (int i = 0; i < 400; i++)
        v[i] = 1.0 + 0.01 * rng_uniform(&g);
    stats_sort(v, 400);
    assert_int_equal(stats_ad_exponential(v, 400, &ad), 0);
    assert_true(ad.rejected_at == 1);
    assert_true(ad.a2_modified > 50);
    for (int i = 0; i < 400; i++)
        v[i] = 1e-3 + rng_uniform(&g);
    stats_sort(v, 400);
    assert_int_equal(stats_ad_exponential(v, 400, &ad), 0);
    assert_true(ad.rejected_at == 1);
    /* bad input */
    assert_int_equal(stats_ad_exponential(v, 4, &ad), KNEE_EINVAL);
    double zero[6] = {0, 1, 2, 3, 4, 5};
    assert_int_equal(stats_ad_exponential(zero, 6, &ad), KNEE_ERANGE);
    double unsorted[6] = {1, 3, 2, 4, 5, 6};
    assert_int_equal(stats_ad_exponential(unsorted, 6, &ad), KNEE_EINVAL);
}

static const char py_mk[] =
    "import math, statistics, sys\n"
    "x = [float(l) for l in open(sys.argv[1])]\n"
    "n = len(x)\n"
    "s = sum((x[j] > x[i]) - (x[j] < x[i]) for i in range(n) for j in range(i + 1, n))\n"
    "ties = {}\n"
    "for v in x: ties[v] = ties.get(v, 0) + 1\n"
    "var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in ties.values())) / 18\n"
    "z = (s - 1) / var ** 0.5 if s > 0 else (s + 1) / var ** 0.5 if s < 0 else 0.0\n"
    "p = math.erfc(abs(z) / math.sqrt(2))  # NormalDist.cdf is 1 + erf: imprecise this far out\n"
    "slope = statistics.median((x[j] - x[i]) / (j - i) for i in range(n) for j in range(i + 1, n))\n"
    "print(s, repr(var), repr(z), repr(p), repr(slope))\n";

static void test_mann_kendall(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 5);
    /* a trend of 0.05 per step in noise, rounded to 0.1 so there are ties */
    double x[60];
    for (int i = 0; i < 60; i++)
        x[i] = round((10 + 0.05 * i + rng_normal(&g)) * 10) / 10;
    struct stats_mk mk;
    assert_int_equal(stats_mann_kendall(x, 60, &mk), 0);
    double ref[5];
    if (python(py_mk, x, 60, ref, 5)) {
        assert_true((double)mk.s == ref[0]);
        assert_near(mk.var_s, ref[1], 1e-12);
        assert_near(mk.z, ref[2], 1e-12);
        assert_near(mk.p, ref[3], 1e-9);
        assert_near(mk.sen_slope, ref[4], 1e-12);
    }
    print_message("trend 0.05/step: S = %lld, z = %.3f, p = %.3g, Sen's slope %.4f\n", mk.s, mk.z, mk.p, mk.sen_slope);
    assert_true(mk.p < 0.01 && mk.sen_slope > 0.02 && mk.sen_slope < 0.08);
    /* no trend: iid noise; a flat series (all ties) */
    for (int i = 0; i < 60; i++)
        x[i] = 10 + rng_normal(&g);
    assert_int_equal(stats_mann_kendall(x, 60, &mk), 0);
    if (python(py_mk, x, 60, ref, 5))
        assert_near(mk.p, ref[3], 1e-9);
    for (int i = 0; i < 60; i++)
        x[i] = 3;
    assert_int_equal(stats_mann_kendall(x, 60, &mk), 0);
    assert_true(mk.s == 0 && mk.z == 0 && mk.p == 1 && mk.sen_slope == 0);
    /* a strictly decreasing series: S = -n(n-1)/2 */
    for (int i = 0; i < 12; i++)
        x[i] = 12 - i;
    assert_int_equal(stats_mann_kendall(x, 12, &mk), 0);
    assert_true(mk.s == -66 && mk.sen_slope == -1);
    assert_near(mk.var_s, 12.0 * 11 * 29 / 18, 1e-15);
    assert_int_equal(stats_mann_kendall(x, 2, &mk), KNEE_EINVAL);
    x[3] = NAN;
    assert_int_equal(stats_mann_kendall(x, 12, &mk), KNEE_ERANGE);
}

/* Student's t quantiles from the published table (3 decimals), and identities. */
static void test_t(void **state)
{
    (void)state;
    const struct {
        double p, df, t;
    } table[] = {
        {0.975, 1, 12.706}, {0.975, 2, 4.303}, {0.975, 4, 2.776},  {0.975, 10, 2.228}, {0.975, 30, 2.042},
        {0.95, 2, 2.920},   {0.995, 4, 4.604}, {0.995, 30, 2.750}, {0.9, 5, 1.476},    {0.975, 120, 1.980},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        double t = stats_t_quantile(table[i].p, table[i].df);
        if (fabs(t - table[i].t) > 0.0006)
            fail_msg("t(%g, %g) = %.6f, table %.3f", table[i].p, table[i].df, t, table[i].t);
        assert_near(stats_t_cdf(t, table[i].df), table[i].p, 1e-10);
        assert_near(stats_t_quantile(1 - table[i].p, table[i].df), -t, 1e-9);
    }
    /* df = 1 is Cauchy: F(t) = 1/2 + atan(t)/pi */
    assert_near(stats_t_cdf(2.5, 1), 0.5 + atan(2.5) / M_PI, 1e-12);
    /* df = 2: F(t) = 1/2 + t / (2 sqrt(2 + t^2)) */
    assert_near(stats_t_cdf(1.3, 2), 0.5 + 1.3 / (2 * sqrt(2 + 1.69)), 1e-12);
    assert_true(stats_t_cdf(0, 7) == 0.5);
    assert_near(stats_incomplete_beta(0.5, 3, 3), 0.5, 1e-14);
    assert_near(stats_incomplete_beta(0.3, 1, 1), 0.3, 1e-14);
    assert_near(stats_incomplete_beta(0.2, 2, 1), 0.04, 1e-13); /* x^a for b = 1 */
    assert_true(isnan(stats_t_quantile(1, 3)) && isnan(stats_t_quantile(0.5, 0)));
    assert_near(stats_normal_sf(1.959963984540054), 0.025, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ad),
        cmocka_unit_test(test_mann_kendall),
        cmocka_unit_test(test_t),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
