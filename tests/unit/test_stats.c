/* Unit tests for src/stats: validation, the radix sort, exact mean and stdev, nearest rank,
 * the nine Hyndman & Fan types on hand-computed cases, shares, and the order-statistic
 * confidence interval against a brute-force binomial search. The Python cross-check lives in
 * tests/e2e/stats_python.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/rng.h"
#include "stats/stats.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define assert_near(a, b, rel)                                                                                         \
    do {                                                                                                               \
        double a_ = (a), b_ = (b);                                                                                     \
        if (!(fabs(a_ - b_) <= (rel)*fmax(fabs(a_), fabs(b_)))) {                                                      \
            print_error("%s = %.17g, expected %.17g (rel %g)\n", #a, a_, b_, (double)(rel));                           \
            fail();                                                                                                    \
        }                                                                                                              \
    } while (0)

static const double ten[10] = {10, 10, 11, 11, 12, 12, 13, 13, 110, 180};

static void test_ten_values(void **state)
{
    (void)state;
    double v[10];
    memcpy(v, ten, sizeof v);
    assert_int_equal(stats_check(v, 10, NULL), 0);
    stats_sort(v, 10);
    assert_near(stats_mean(v, 10), 38.2, 1e-15);
    assert_true(stats_nearest_rank(v, 10, 50) == 12);
    assert_true(stats_nearest_rank(v, 10, 95) == 180);
    assert_true(stats_nearest_rank(v, 10, 99) == 180);
    assert_true(stats_nearest_rank(v, 10, 90) == 110);
    assert_true(stats_nearest_rank(v, 10, 0) == 10);
    assert_true(stats_nearest_rank(v, 10, 100) == 180);
    struct summary s;
    stats_summarize(v, 10, &s);
    assert_int_equal(s.count, 10);
    assert_true(s.min == 10 && s.max == 180);
    assert_near(s.mean, 38.2, 1e-15);
    /* sum of squared deviations 30975.6 over 9; Python's statistics.stdev: 58.666287877565026 */
    assert_near(s.stdev, 58.666287877565026, 1e-15);
    assert_true(s.p50 == 12 && s.p90 == 110 && s.p95 == 180 && s.p99 == 180 && s.p999 == 180);
}

static void test_check_bad_values(void **state)
{
    (void)state;
    size_t bad = 99;
    double a[] = {1, 2, NAN, -1};
    assert_int_equal(stats_check(a, 4, &bad), KNEE_ENAN);
    assert_int_equal(bad, 2);
    double b[] = {1, INFINITY};
    assert_int_equal(stats_check(b, 2, &bad), KNEE_EINF);
    assert_int_equal(bad, 1);
    double c[] = {0, -INFINITY};
    assert_int_equal(stats_check(c, 2, NULL), KNEE_EINF);
    double d[] = {0, 3, -0.5};
    assert_int_equal(stats_check(d, 3, &bad), KNEE_ENEG);
    assert_int_equal(bad, 2);
    double e[] = {0, -0.0, 1e308, 5e-324};
    assert_int_equal(stats_check(e, 4, NULL), 0);
    assert_int_equal(stats_check(NULL, 0, NULL), 0);
    /* nothing crashes on bad input either */
    double f[] = {NAN, -1, INFINITY, 2, -INFINITY, 0};
    stats_sort(f, 6);
    assert_true(f[0] == -INFINITY && f[1] == -1 && f[2] == 0 && f[3] == 2 && f[4] == INFINITY && isnan(f[5]));
    assert_true(isnan(stats_nearest_rank(f, 0, 50)));
    assert_true(isnan(stats_nearest_rank(f, 6, NAN)));
    assert_true(isnan(stats_nearest_rank(f, 6, 101)));
    assert_true(isnan(stats_quantile(f, 6, 0.5, 0)));
    assert_true(isnan(stats_quantile(f, 6, 0.5, 10)));
    assert_true(isnan(stats_quantile(f, 6, -0.1, 7)));
    assert_true(isnan(stats_mean(f, 0)));
    struct summary s;
    stats_summarize(f, 0, &s);
    assert_int_equal(s.count, 0);
    assert_true(isnan(s.mean) && isnan(s.p99));
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void check_sorted_like_qsort(double *v, size_t n)
{
    double *w = malloc(n * sizeof *w);
    memcpy(w, v, n * sizeof *w);
    qsort(w, n, sizeof *w, cmp_d);
    stats_sort(v, n);
    for (size_t i = 0; i < n; i++)
        if (memcmp(&v[i], &w[i], sizeof *v) != 0) {
            print_error("index %zu: %.17g vs %.17g\n", i, v[i], w[i]);
            fail();
        }
    free(w);
}

static void test_sort(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 42);
    size_t sizes[] = {0, 1, 2, 3, 100, 2047, 2048, 5000, 200000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        double *v = malloc((n + 1) * sizeof *v);
        for (size_t i = 0; i < n; i++)
            v[i] = rng_lognormal(&r, 0, 2);
        check_sorted_like_qsort(v, n);
        /* already sorted, reversed, with duplicates, with negatives */
        check_sorted_like_qsort(v, n);
        for (size_t i = 0; i < n / 2; i++) {
            double t = v[i];
            v[i] = v[n - 1 - i];
            v[n - 1 - i] = t;
        }
        check_sorted_like_qsort(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = (double)rng_below(&r, 7) - 3;
        check_sorted_like_qsort(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = 5.0; /* every radix pass trivial */
        check_sorted_like_qsort(v, n);
        free(v);
    }
}

static void test_mean_exact(void **state)
{
    (void)state;
    double a[10];
    for (int i = 0; i < 10; i++)
        a[i] = 0.1;
    assert_true(stats_mean(a, 10) == 0.1); /* fsum([0.1]*10) == 1.0 exactly */
    double b[] = {1e16, 1, -1e16};
    assert_true(stats_mean(b, 3) == 1.0 / 3);
    double c[] = {1e308, 1e308, -1e308}; /* intermediate overflow: no crash */
    (void)stats_mean(c, 3);
    double d[] = {2, 4, 4, 4, 5, 5, 7, 9};
    assert_true(stats_mean(d, 8) == 5);
    assert_near(stats_stdev(d, 8), sqrt(32.0 / 7), 1e-15);
    assert_true(stats_stdev(d, 1) == 0);
    /* a large offset: naive one-pass variance loses everything here */
    double e[4] = {1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16};
    assert_near(stats_stdev(e, 4), sqrt(90.0 / 3), 1e-12);
}

/* Values near DBL_MAX (their sum and squares overflow) and near the smallest normal doubles
 * (their squares underflow): a finite, correct mean and stdev, exact and running alike. The
 * expected values are Python's exact fractions. */
static void test_stdev_extremes(void **state)
{
    (void)state;
    double big[] = {1e308, 1.5e308, 1.7e308};
    assert_near(stats_mean(big, 3), 1.4e308, 1e-15);
    assert_near(stats_stdev(big, 3), 3.605551275463989e307, 1e-14);
    double top[] = {DBL_MAX, DBL_MAX};
    assert_true(stats_mean(top, 2) == DBL_MAX);
    assert_true(stats_stdev(top, 2) == 0);
    double tiny[] = {1e-300, 2e-300, 3e-300};
    assert_near(stats_stdev(tiny, 3), 1e-300, 1e-14);
    /* a true stdev above DBL_MAX: +inf, not 0 */
    double apart[] = {-1.7e308, 1.7e308};
    assert_true(isinf(stats_stdev(apart, 2)));
    double bad[] = {1, INFINITY};
    assert_true(isnan(stats_stdev(bad, 2)));

    struct stats_running r, a, b;
    stats_running_init(&r);
    stats_running_init(&a);
    stats_running_init(&b);
    for (int i = 0; i < 3; i++) {
        stats_running_add(&r, big[i]);
        stats_running_add(i < 1 ? &a : &b, big[i]);
    }
    assert_near(stats_running_mean(&r), 1.4e308, 1e-15);
    assert_near(stats_running_stdev(&r), 3.605551275463989e307, 1e-14);
    stats_running_merge(&a, &b);
    assert_near(stats_running_mean(&a), 1.4e308, 1e-15);
    assert_near(stats_running_stdev(&a), 3.605551275463989e307, 1e-14);
    /* a small set merged into a huge one, and the other way round */
    struct stats_running s1, s2;
    stats_running_init(&s1);
    stats_running_init(&s2);
    stats_running_add(&s1, 1);
    stats_running_add(&s1, 3);
    stats_running_add(&s2, 1e308);
    stats_running_merge(&s2, &s1);
    assert_int_equal(s2.n, 3);
    assert_near(stats_running_mean(&s2), 1e308 / 3, 1e-15);
    stats_running_add(&s1, INFINITY);
    assert_true(isnan(stats_running_mean(&s1)) && isnan(stats_running_stdev(&s1)));

    /* ordinary data is never scaled: the running stdev is the plain recurrence, bit for bit */
    double d[] = {2, 4, 4, 4, 5, 5, 7, 9};
    struct stats_running w;
    stats_running_init(&w);
    double mean = 0, m2 = 0;
    for (int i = 0; i < 8; i++) {
        stats_running_add(&w, d[i]);
        double delta = d[i] - mean;
        mean += delta / (i + 1);
        m2 += delta * (d[i] - mean);
    }
    assert_int_equal(w.scale, 0);
    assert_true(stats_running_mean(&w) == mean);
    assert_true(stats_running_stdev(&w) == sqrt(m2 / 7));
}

static void test_nearest_rank_decimal_p(void **state)
{
    (void)state;
    size_t n = 1000;
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(i + 1);
    assert_true(stats_nearest_rank(v, n, 99.9) == 999);
    assert_true(stats_nearest_rank(v, n, 99.95) == 1000);
    assert_true(stats_nearest_rank(v, n, 0.1) == 1);
    assert_true(stats_nearest_rank(v, n, 0.15) == 2);
    assert_true(stats_nearest_rank(v, n, 29) == 290);
    assert_true(stats_quantile(v, n, 0.999, 1) == 999);
    assert_true(stats_quantile(v, n, 0.29, 1) == 290);
    free(v);
}

/* x = 1 3 4 7 10 (n = 5), hand-computed from the H&F definitions (docs/INTERNALS.md). */
static void test_quantile_types_hand(void **state)
{
    (void)state;
    const double x[5] = {1, 3, 4, 7, 10};
    struct {
        double p;
        double want[10];
    } cases[] = {
        /*            t1   t2   t3  t4   t5  t6   t7   t8           t9 */
        {0.3, {0, 3, 3, 3, 2, 3, 2.6, 3.2, 2 + 13.0 / 15, 2.9}},
        {0.5, {0, 4, 4, 3, 3.5, 4, 4, 4, 4, 4}},
        {0.4, {0, 3, 3.5, 3, 3, 3.5, 3.4, 3.6, 3 + 7.0 / 15, 3.475}},
        {0.0, {0, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
        {1.0, {0, 10, 10, 10, 10, 10, 10, 10, 10, 10}},
        {0.1, {0, 1, 1, 1, 1, 1, 1, 1.8, 1, 1}},
        {0.95, {0, 10, 10, 10, 9.25, 10, 10, 9.4, 10, 10}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int t = 1; t <= 9; t++) {
            double got = stats_quantile(x, 5, cases[c].p, t);
            if (fabs(got - cases[c].want[t]) > 1e-12) {
                print_error("p=%g type %d: got %.17g want %.17g\n", cases[c].p, t, got, cases[c].want[t]);
                fail();
            }
        }
    /* one value: every type returns it */
    for (int t = 1; t <= 9; t++)
        assert_true(stats_quantile(x, 1, 0.7, t) == 1);
}

static void test_share(void **state)
{
    (void)state;
    double v[] = {1, 2, 2, 3, 5};
    struct share s;
    stats_share(v, 5, 2, &s);
    assert_int_equal(s.under, 1);
    assert_int_equal(s.at_or_under, 3);
    assert_int_equal(s.count, 5);
    stats_share(v, 5, 0.5, &s);
    assert_int_equal(s.under, 0);
    assert_int_equal(s.at_or_under, 0);
    stats_share(v, 5, 9, &s);
    assert_int_equal(s.under, 5);
    assert_int_equal(s.at_or_under, 5);
    stats_share(v, 5, NAN, &s);
    assert_int_equal(s.at_or_under, 0);
    stats_share(v, 0, 1, &s);
    assert_int_equal(s.count, 0);
}

/* Exhaustive search over all pairs with the binomial pmf from direct products in long double
 * (an independent computation: no recurrence, no window). */
static void brute_ci(int n, double p, double conf, int *lo, int *hi, double *cov)
{
    long double *cum = malloc((size_t)(n + 2) * sizeof *cum);
    long double c = 1; /* C(n, k) */
    cum[0] = 0;
    for (int k = 0; k <= n; k++) {
        if (k > 0)
            c = c * (n - k + 1) / k;
        cum[k + 1] = cum[k] + c * powl(p, k) * powl(1 - p, n - k);
    }
    *lo = *hi = 0;
    *cov = -1;
    for (int w = 1; w <= n - 1 && *cov < 0; w++) /* width hi - lo */
        for (int a = 1; a + w <= n; a++) {
            double m = (double)(cum[a + w] - cum[a]); /* P(a <= B <= a+w-1) */
            if (m >= conf && m > *cov) {
                *lo = a;
                *hi = a + w;
                *cov = m;
            }
        }
    free(cum);
}

static void test_ci_brute_force(void **state)
{
    (void)state;
    int ns[] = {6, 10, 29, 50, 120, 299, 400};
    double ps[] = {50, 90, 95, 99};
    double confs[] = {0.9, 0.95, 0.99};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++)
            for (size_t c = 0; c < sizeof confs / sizeof confs[0]; c++) {
                int blo, bhi;
                double bcov;
                brute_ci(ns[i], ps[j] / 100, confs[c], &blo, &bhi, &bcov);
                size_t lo, hi;
                double cov;
                int rc = stats_binomial_ci_ranks((size_t)ns[i], ps[j], confs[c], &lo, &hi, &cov);
                if (bcov < 0) {
                    assert_int_equal(rc, KNEE_ERANGE);
                    assert_int_equal(lo, 1);
                    assert_int_equal(hi, ns[i]);
                    assert_true(cov < confs[c]);
                } else {
                    if (rc != 0 || (int)lo != blo || (int)hi != bhi) {
                        print_error("n=%d p=%g conf=%g: got (%zu,%zu) rc %d, brute (%d,%d)\n", ns[i], ps[j], confs[c],
                                    lo, hi, rc, blo, bhi);
                        fail();
                    }
                    assert_near(cov, bcov, 1e-12);
                }
            }
}

static void test_ci_sample_size_thresholds(void **state)
{
    (void)state;
    /* smallest n with a 95% interval inside the sample: p99 -> 299, p99.9 -> 2995, p50 -> 6 */
    size_t lo, hi;
    double cov;
    assert_int_equal(stats_binomial_ci_ranks(298, 99, 0.95, &lo, &hi, &cov), KNEE_ERANGE);
    assert_int_equal(stats_binomial_ci_ranks(299, 99, 0.95, &lo, &hi, &cov), 0);
    assert_int_equal(hi, 299); /* the interval needs the sample max: P(B = 299) = 0.99^299 = 0.0495 */
    assert_true(lo > 280 && cov >= 0.95);
    assert_int_equal(stats_binomial_ci_ranks(2994, 99.9, 0.95, &lo, &hi, &cov), KNEE_ERANGE);
    assert_int_equal(stats_binomial_ci_ranks(2995, 99.9, 0.95, &lo, &hi, &cov), 0);
    assert_int_equal(stats_binomial_ci_ranks(5, 50, 0.95, &lo, &hi, &cov), KNEE_ERANGE);
    assert_int_equal(stats_binomial_ci_ranks(6, 50, 0.95, &lo, &hi, &cov), 0);
    assert_int_equal(stats_binomial_ci_ranks(1, 50, 0.95, &lo, &hi, &cov), KNEE_EINVAL);
    assert_int_equal(stats_binomial_ci_ranks(100, 0, 0.95, &lo, &hi, &cov), KNEE_EINVAL);
    assert_int_equal(stats_binomial_ci_ranks(100, 50, 1, &lo, &hi, &cov), KNEE_EINVAL);
}

static void test_ci_large_n(void **state)
{
    (void)state;
    /* Far beyond brute force: compare with the normal approximation, which is excellent here. */
    size_t ns[] = {1000000, 100000000};
    double ps[] = {50, 99, 99.9};
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++) {
            size_t n = ns[i], lo, hi;
            double p = ps[j] / 100, cov;
            assert_int_equal(stats_binomial_ci_ranks(n, ps[j], 0.95, &lo, &hi, &cov), 0);
            double np = (double)n * p, half = 1.959964 * sqrt(np * (1 - p));
            /* exact and normal-approximation ranks agree within a few ranks (skew at the tail) */
            double tol = 3 + 0.01 * half;
            if (fabs((double)lo - (np - half)) > tol || fabs((double)hi - (np + half)) > tol + 1) {
                print_error("n=%zu p=%g: (%zu,%zu) vs normal (%.1f,%.1f)\n", n, p, lo, hi, np - half, np + half);
                fail();
            }
            /* discreteness: the coverage overshoots by at most about one pmf step at the edge */
            assert_true(cov >= 0.95 && cov < 0.95 + 0.5 / sqrt(np * (1 - p)));
        }
}

static void test_ci_on_samples(void **state)
{
    (void)state;
    size_t n = 1000;
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(i + 1);
    struct pct_ci ci;
    assert_int_equal(stats_percentile_ci(v, n, 99, 0.95, &ci), 0);
    assert_true(ci.defined);
    assert_true(ci.value == 990);
    assert_int_equal(ci.beyond, 10);
    assert_false(ci.too_few);
    assert_true(ci.lo <= ci.value && ci.value <= ci.hi);
    assert_true(ci.lo == (double)ci.lo_rank && ci.hi == (double)ci.hi_rank);
    assert_true(ci.coverage >= 0.95);
    assert_int_equal(stats_percentile_ci(v, n, 99.9, 0.95, &ci), 0);
    assert_false(ci.defined); /* n < 2995 */
    assert_true(ci.lo == 1 && ci.hi == 1000);
    assert_int_equal(ci.beyond, 1);
    assert_true(ci.too_few);
    assert_int_equal(stats_percentile_ci(v, 0, 99, 0.95, &ci), KNEE_EEMPTY);
    assert_int_equal(stats_percentile_ci(v, n, 100, 0.95, &ci), KNEE_EINVAL);
    assert_int_equal(stats_percentile_ci(v, n, 50, 0, &ci), KNEE_EINVAL);
    assert_int_equal(stats_percentile_ci(v, n, NAN, 0.95, &ci), KNEE_EINVAL);
    assert_int_equal(stats_percentile_ci(v, 1, 50, 0.95, &ci), 0);
    assert_false(ci.defined);
    /* ties: beyond counts values strictly above the percentile */
    for (size_t i = 0; i < n; i++)
        v[i] = i < 995 ? 1.0 : 2.0;
    assert_int_equal(stats_percentile_ci(v, n, 99, 0.95, &ci), 0);
    assert_true(ci.value == 1.0);
    assert_int_equal(ci.beyond, 5);
    assert_true(ci.too_few);
    free(v);
}

/* ---- `test_stats --python-dump`: the C side of tests/e2e/stats_python.sh ----
 * Reads data sets from stdin, one per line ("name v1 v2 ..."), and prints per set the mean,
 * stdev, types 6 and 7 at k/100 and nearest ranks, as hex floats (exact). */
static int python_driver(void)
{
    static const double pcts[] = {0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 100};
    static const char *pct_names[] = {"0.1", "1",  "5",  "10",   "25",   "50",    "75",
                                      "90",  "95", "99", "99.5", "99.9", "99.99", "100"};
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        size_t n = 0, vcap = 1024;
        double *v = malloc(vcap * sizeof *v);
        char *p = strchr(line, ' ');
        while (p && *p) {
            char *end;
            double x = strtod(p, &end);
            if (end == p)
                break;
            if (n == vcap)
                v = realloc(v, (vcap *= 2) * sizeof *v);
            v[n++] = x;
            p = end;
        }
        if (n == 0 || stats_check(v, n, NULL) != 0) {
            fprintf(stderr, "test_stats --python-dump: bad data line\n");
            return 2;
        }
        printf("set\nmean %a\nstdev %a\n", stats_mean(v, n), stats_stdev(v, n));
        stats_sort(v, n);
        for (int k = 1; k < 100; k++)
            printf("q6 %d %a\nq7 %d %a\n", k, stats_quantile(v, n, k / 100.0, 6), k,
                   stats_quantile(v, n, k / 100.0, 7));
        for (size_t i = 0; i < sizeof pcts / sizeof pcts[0]; i++)
            printf("nr %s %a\n", pct_names[i], stats_nearest_rank(v, n, pcts[i]));
        free(v);
    }
    free(line);
    return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--python-dump"))
        return python_driver();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ten_values),
        cmocka_unit_test(test_check_bad_values),
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_mean_exact),
        cmocka_unit_test(test_stdev_extremes),
        cmocka_unit_test(test_nearest_rank_decimal_p),
        cmocka_unit_test(test_quantile_types_hand),
        cmocka_unit_test(test_share),
        cmocka_unit_test(test_ci_brute_force),
        cmocka_unit_test(test_ci_sample_size_thresholds),
        cmocka_unit_test(test_ci_large_n),
        cmocka_unit_test(test_ci_on_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
