/* Unit tests for src/hist: HdrHistogram index math (worked values of
 * the published index math), Java percentile semantics, statistics, overflow, corrected
 * recording, merging, iterators and Java-style number formatting; seeded property tests on five
 * distribution shapes; Prometheus histogram_quantile against the reference example and an
 * independent reimplementation; doubling buckets. Exactness against the Java library itself is
 * tests/e2e/hdr_java.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/rng.h"
#include "hist/dbl.h"
#include "hist/hdr.h"
#include "hist/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H_1H_NS 3600000000000LL

static void test_hdr_worked_index_values(void **state)
{
    (void)state;
    struct hdr h;
    assert_int_equal(hdr_init(&h, 1, 3600000000LL, 3), 0);
    assert_int_equal(h.sub_bucket_count, 2048);
    assert_int_equal(h.sub_bucket_half_count, 1024);
    assert_int_equal(h.unit_magnitude, 0);
    assert_int_equal(h.bucket_count, 22);
    assert_int_equal(h.counts_len, 23552);
    struct {
        int64_t v;
        size_t index;
        int64_t lo, hi;
    } w[] = {
        {2047, 2047, 2047, 2047},
        {2048, 2048, 2048, 2049},
        {4096, 3072, 4096, 4099},
        {1000000, 11169, 999936, 1000447},
    };
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(hdr_index_of(&h, w[i].v), w[i].index);
        assert_int_equal(hdr_lowest_equivalent(&h, w[i].v), w[i].lo);
        assert_int_equal(hdr_highest_equivalent(&h, w[i].v), w[i].hi);
        assert_int_equal(hdr_value_from_index(&h, w[i].index), w[i].lo);
        assert_int_equal(hdr_size_of_equivalent_range(&h, w[i].v), w[i].hi - w[i].lo + 1);
        assert_int_equal(hdr_next_non_equivalent(&h, w[i].v), w[i].hi + 1);
        assert_int_equal(hdr_median_equivalent(&h, w[i].v), w[i].lo + (w[i].hi - w[i].lo + 1) / 2);
    }
    assert_true(hdr_values_equivalent(&h, 999936, 1000447));
    assert_false(hdr_values_equivalent(&h, 999935, 999936));
    assert_int_equal(hdr_memory_bytes(1, 3600000000LL, 3), 23552 * 8);
    hdr_release(&h);
    assert_int_equal(hdr_init(&h, 1, H_1H_NS, 3), 0);
    assert_int_equal(h.bucket_count, 32);
    assert_int_equal(h.counts_len, 33792);
    hdr_release(&h);
    /* L = 1000: unit magnitude 9, index 0 holds 0..511 */
    assert_int_equal(hdr_init(&h, 1000, H_1H_NS, 2), 0);
    assert_int_equal(h.unit_magnitude, 9);
    assert_int_equal(h.sub_bucket_count, 256);
    assert_int_equal(hdr_index_of(&h, 511), 0);
    assert_int_equal(hdr_index_of(&h, 512), 1);
    hdr_release(&h);
}

static void test_hdr_bad_params(void **state)
{
    (void)state;
    struct hdr h;
    assert_int_equal(hdr_init(&h, 1, 1000, 0), KNEE_EINVAL);
    assert_int_equal(hdr_init(&h, 1, 1000, 6), KNEE_EINVAL);
    assert_int_equal(hdr_init(&h, 0, 1000, 3), KNEE_EINVAL);
    assert_int_equal(hdr_init(&h, -5, 1000, 3), KNEE_EINVAL);
    assert_int_equal(hdr_init(&h, 100, 199, 3), KNEE_EINVAL);
    assert_int_equal(hdr_init(&h, (int64_t)1 << 52, INT64_MAX, 3), KNEE_EINVAL); /* 52 + 11 > 62 */
    assert_int_equal(hdr_memory_bytes(0, 10, 3), 0);
    assert_int_equal(hdr_init(&h, (int64_t)1 << 51, INT64_MAX, 3), 0); /* 51 + 11 == 62: the limit */
    assert_int_equal(hdr_record(&h, INT64_MAX, 1), 0);
    assert_int_equal(hdr_value_at_percentile(&h, 100), INT64_MAX);
    hdr_release(&h);
    assert_int_equal(hdr_init(&h, 1, INT64_MAX, 5), 0);
    assert_int_equal(hdr_record(&h, INT64_MAX, 1), 0);
    hdr_release(&h);
}

static void test_hdr_record_errors_and_overflow(void **state)
{
    (void)state;
    struct hdr h;
    assert_int_equal(hdr_init(&h, 1, 1000000, 3), 0);
    assert_int_equal(hdr_record(&h, -1, 1), KNEE_ENEG);
    assert_int_equal(hdr_record(&h, 5, -1), KNEE_ENEG);
    assert_int_equal(hdr_record(&h, 5, 0), 0);
    assert_int_equal(h.total_count, 0);
    assert_int_equal(hdr_record(&h, 1000000, 1), 0);
    assert_int_equal(hdr_record(&h, 1000001, 3), KNEE_ERANGE);
    assert_int_equal(hdr_record(&h, 5000000, 1), KNEE_ERANGE);
    assert_int_equal(h.total_count, 1);
    assert_int_equal(h.overflow_count, 4);
    assert_int_equal(h.overflow_max, 5000000);
    assert_int_equal(hdr_record(&h, 7, INT64_MAX), KNEE_EOVERFLOW);
    assert_int_equal(h.total_count, 1);
    hdr_reset(&h);
    assert_int_equal(h.total_count, 0);
    assert_int_equal(h.overflow_count, 0);
    assert_int_equal(hdr_max(&h), 0);
    assert_int_equal(hdr_min(&h), 0);
    assert_int_equal(hdr_value_at_percentile(&h, 50), 0);
    assert_true(hdr_mean(&h) == 0 && hdr_stdev(&h) == 0);
    hdr_release(&h);
}

static void test_hdr_percentile_semantics(void **state)
{
    (void)state;
    struct hdr h;
    assert_int_equal(hdr_init(&h, 1, 100000, 3), 0);
    for (int v = 1; v <= 10; v++)
        hdr_record(&h, v, 1);
    assert_int_equal(hdr_value_at_percentile(&h, 21), 3); /* ceil(2.1): Java, not C's rounding */
    assert_int_equal(hdr_value_at_percentile(&h, 20), 2); /* exactly 2: the one-ulp step keeps it */
    assert_int_equal(hdr_value_at_percentile(&h, 0), 1);
    assert_int_equal(hdr_value_at_percentile(&h, 100), 10);
    assert_int_equal(hdr_value_at_percentile(&h, 150), 10);
    assert_int_equal(hdr_value_at_percentile(&h, 0.0001), 1);
    hdr_reset(&h);
    hdr_record(&h, 10000, 1);
    hdr_record(&h, 20000, 1);
    assert_int_equal(hdr_value_at_percentile(&h, 50), hdr_highest_equivalent(&h, 10000));
    assert_int_equal(hdr_value_at_percentile(&h, 0), hdr_lowest_equivalent(&h, 10000));
    assert_int_equal(hdr_min(&h), hdr_lowest_equivalent(&h, 10000));
    assert_int_equal(hdr_max(&h), hdr_highest_equivalent(&h, 20000));
    double m1 = (double)hdr_median_equivalent(&h, 10000), m2 = (double)hdr_median_equivalent(&h, 20000);
    assert_true(hdr_mean(&h) == (m1 + m2) / 2);
    assert_true(fabs(hdr_stdev(&h) - (m2 - m1) / 2) < 1e-9);
    hdr_record(&h, 0, 1);
    assert_int_equal(hdr_min(&h), 0);
    assert_int_equal(hdr_count_at_value(&h, 10001), 1);
    assert_int_equal(hdr_count_at_value(&h, -1), 0);
    hdr_release(&h);
}

/* ---- property tests on five shapes ---- */

enum shape { UNIFORM, EXPONENTIAL, LOGNORMAL, BIMODAL, PARETO };

/* A latency in nanoseconds (>= 1) drawn from the shape, all around a 1-10 ms scale. */
static int64_t draw_ns(struct rng *r, enum shape s)
{
    double ms = 0;
    switch (s) {
    case UNIFORM:
        ms = 1 + 9 * rng_uniform(r);
        break;
    case EXPONENTIAL:
        ms = rng_exp(r, 5);
        break;
    case LOGNORMAL:
        ms = rng_lognormal(r, 1, 1);
        break;
    case BIMODAL:
        ms = rng_bernoulli(r, 0.9) ? 1 + rng_normal(r) * 0.1 : 50 + rng_normal(r) * 5;
        break;
    case PARETO:
        ms = rng_pareto(r, 1, 1.2);
        break;
    }
    double ns = ms * 1e6;
    if (ns < 1)
        ns = 1;
    if (ns > 1e12)
        ns = 1e12;
    return (int64_t)ns;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void test_hdr_properties(void **state)
{
    (void)state;
    const size_t n = 50000;
    const double ps[] = {0.001, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100};
    int64_t *v = malloc(n * sizeof *v);
    for (int shape = UNIFORM; shape <= PARETO; shape++) {
        for (int d = 1; d <= 5; d += 2) {
            struct rng r;
            rng_seed(&r, 1000 + (uint64_t)shape);
            struct hdr all, a, b;
            assert_int_equal(hdr_init(&all, 1, H_1H_NS, d), 0);
            assert_int_equal(hdr_init(&a, 1, H_1H_NS, d), 0);
            assert_int_equal(hdr_init(&b, 1, H_1H_NS, d), 0);
            for (size_t i = 0; i < n; i++) {
                v[i] = draw_ns(&r, (enum shape)shape);
                assert_int_equal(hdr_record(&all, v[i], 1), 0);
                assert_int_equal(hdr_record(i % 3 ? &a : &b, v[i], 1), 0);
            }
            qsort(v, n, sizeof *v, cmp_i64);
            double rel = pow(10, -d);
            for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
                /* nearest rank of the decimal p (99.9% of 50000 is 49950) */
                size_t rank = (size_t)ceil(ps[k] * (double)n / 100 * (1 - 1e-12));
                if (rank < 1)
                    rank = 1;
                int64_t exact = v[rank - 1], got = hdr_value_at_percentile(&all, ps[k]);
                /* the reported value is the top of the exact value's bucket ... */
                if (!hdr_values_equivalent(&all, exact, got)) {
                    print_error("shape %d d=%d p=%g rank %zu: exact %lld hdr %lld\n", shape, d, ps[k], rank,
                                (long long)exact, (long long)got);
                    fail();
                }
                /* ... so within the stated relative precision */
                if (!((double)(got - exact) <= rel * (double)exact)) {
                    print_error("shape %d d=%d p=%g: exact %lld hdr %lld\n", shape, d, ps[k], (long long)exact,
                                (long long)got);
                    fail();
                }
            }
            assert_int_equal(hdr_min(&all), hdr_lowest_equivalent(&all, v[0]));
            assert_int_equal(hdr_max(&all), hdr_highest_equivalent(&all, v[n - 1]));
            /* merge(A, B) == everything recorded into one */
            assert_int_equal(hdr_add(&a, &b), 0);
            assert_int_equal(a.total_count, all.total_count);
            assert_int_equal(a.min_value, all.min_value);
            assert_int_equal(a.max_value, all.max_value);
            assert_memory_equal(a.counts, all.counts, all.counts_len * sizeof *all.counts);
            assert_true(hdr_mean(&a) == hdr_mean(&all));
            hdr_release(&all);
            hdr_release(&a);
            hdr_release(&b);
        }
    }
    free(v);
}

static void test_hdr_add_rules(void **state)
{
    (void)state;
    struct hdr a, b, c;
    /* different highest: src buckets above dst's highest become dst overflow */
    assert_int_equal(hdr_init(&a, 1, 1000000, 3), 0);
    int64_t top = hdr_highest_equivalent(&a, 1000000); /* bucket-aligned so the rules coincide */
    hdr_release(&a);
    assert_int_equal(hdr_init(&a, 1, top, 3), 0);
    assert_int_equal(hdr_init(&b, 1, H_1H_NS, 3), 0);
    assert_int_equal(hdr_init(&c, 1, top, 3), 0);
    int64_t vals[] = {1, 500, 999999, top, top + 1, 5000000, 123456789};
    for (size_t i = 0; i < 7; i++) {
        hdr_record(&b, vals[i], 2);
        hdr_record(&c, vals[i], 2);
    }
    hdr_record(&b, H_1H_NS + 1, 1); /* b's own overflow carries over */
    hdr_record(&c, H_1H_NS + 1, 1);
    b.start_s = 10;
    b.end_s = 20;
    assert_int_equal(hdr_add(&a, &b), 0);
    assert_int_equal(a.total_count, c.total_count);
    assert_int_equal(a.overflow_count, c.overflow_count);
    assert_int_equal(a.overflow_count, 7);
    assert_int_equal(a.overflow_max, H_1H_NS + 1);
    assert_memory_equal(a.counts, c.counts, c.counts_len * sizeof *c.counts);
    assert_int_equal(hdr_max(&a), hdr_max(&c));
    assert_true(a.start_s == 10 && a.end_s == 20);
    struct hdr d;
    assert_int_equal(hdr_init(&d, 1, top, 3), 0);
    d.start_s = 5;
    d.end_s = 15;
    assert_int_equal(hdr_add(&a, &d), 0);
    assert_true(a.start_s == 5 && a.end_s == 20);
    hdr_release(&d);
    /* incompatible layouts */
    assert_int_equal(hdr_init(&d, 1, top, 2), 0);
    assert_int_equal(hdr_add(&a, &d), KNEE_EMISMATCH);
    hdr_release(&d);
    assert_int_equal(hdr_init(&d, 2, top, 3), 0);
    assert_int_equal(hdr_add(&a, &d), KNEE_EMISMATCH);
    hdr_release(&d);
    /* same unit magnitude (1000 and 1023 both give 9): compatible */
    struct hdr e, f;
    assert_int_equal(hdr_init(&e, 1000, H_1H_NS, 3), 0);
    assert_int_equal(hdr_init(&f, 1023, H_1H_NS, 3), 0);
    hdr_record(&f, 77777, 3);
    assert_int_equal(hdr_add(&e, &f), 0);
    assert_int_equal(hdr_count_at_value(&e, 77777), 3);
    /* adding to itself doubles */
    assert_int_equal(hdr_add(&e, &e), 0);
    assert_int_equal(hdr_count_at_value(&e, 77777), 6);
    assert_int_equal(e.total_count, 6);
    hdr_release(&e);
    hdr_release(&f);
    hdr_release(&a);
    hdr_release(&b);
    hdr_release(&c);
}

/* The naive back-fill loop of recordValueWithExpectedInterval. */
static void naive_corrected(struct hdr *h, int64_t value, int64_t count, int64_t interval)
{
    hdr_record(h, value, count);
    if (interval <= 0 || value <= interval)
        return;
    for (int64_t m = value - interval; m >= interval; m -= interval)
        hdr_record(h, m, count);
}

/* hdr_add's boundary between counts and overflow, for highest values on and off bucket
 * edges, a src larger and smaller than dst, and INT64_MAX: one count in every index of src
 * lands in dst's counts exactly when the index's lowest value is <= dst->highest (the rule
 * hdr_record applies to one value), checked against a walk over every index. */
static void test_hdr_add_fit_boundary(void **state)
{
    (void)state;
    struct {
        int64_t lowest, dst_highest, src_highest;
        int digits;
    } cases[] = {
        {1, 2, 1000, 1},
        {1, 1000, 1000000, 2},
        {1, 1000001, H_1H_NS, 3},
        {1, H_1H_NS, 1000001, 3},
        {1000, H_1H_NS + 7, INT64_MAX, 3},
        {7, 123456789, 987654321, 4},
        {1, INT64_MAX, 1000000000000LL, 2},
        {1, INT64_MAX, INT64_MAX, 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct hdr dst, src;
        assert_int_equal(hdr_init(&dst, cases[k].lowest, cases[k].dst_highest, cases[k].digits), 0);
        assert_int_equal(hdr_init(&src, cases[k].lowest, cases[k].src_highest, cases[k].digits), 0);
        for (size_t i = 0; i < src.counts_len; i++)
            src.counts[i] = 1;
        hdr_recalc(&src);
        int64_t fit = 0;
        for (size_t i = 0; i < src.counts_len; i++)
            if (i < dst.counts_len && hdr_value_from_index(&dst, i) <= dst.highest)
                fit++;
        assert_int_equal(hdr_add(&dst, &src), 0);
        for (size_t i = 0; i < dst.counts_len; i++)
            if (dst.counts[i] != ((int64_t)i < fit)) {
                print_error("case %zu: index %zu holds %lld, fit %lld\n", k, i, (long long)dst.counts[i],
                            (long long)fit);
                fail();
            }
        assert_int_equal(dst.total_count, fit);
        assert_int_equal(dst.overflow_count, (int64_t)src.counts_len - fit);
        hdr_release(&dst);
        hdr_release(&src);
    }
}

static void test_hdr_corrected(void **state)
{
    (void)state;
    struct {
        int64_t value, count, interval, highest;
    } cases[] = {
        {100, 1, 10, 1000000},
        {105, 2, 10, 1000000},
        {10, 1, 10, 1000000},
        {19, 1, 10, 1000000},
        {20, 1, 10, 1000000},
        {5, 1, 0, 1000000},
        {1000, 1, -3, 1000000},
        {3000000, 1, 7, 1000000},    /* partly overflowing, bucket path */
        {200000000, 3, 13, H_1H_NS}, /* 1.5e7 terms: bucket path */
        {123456789, 1, 1000, 100000000},
        {2000000, 1, 1000000, 1000000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hdr a, b;
        assert_int_equal(hdr_init(&a, 1, cases[i].highest, 3), 0);
        assert_int_equal(hdr_init(&b, 1, cases[i].highest, 3), 0);
        hdr_record(&a, 4, 1);
        hdr_record(&b, 4, 1);
        int rc = hdr_record_corrected(&a, cases[i].value, cases[i].count, cases[i].interval);
        naive_corrected(&b, cases[i].value, cases[i].count, cases[i].interval);
        assert_int_equal(rc, b.overflow_count ? KNEE_ERANGE : 0);
        assert_int_equal(a.total_count, b.total_count);
        assert_int_equal(a.overflow_count, b.overflow_count);
        assert_int_equal(a.overflow_max, b.overflow_max);
        assert_int_equal(a.min_value, b.min_value);
        assert_int_equal(a.max_value, b.max_value);
        assert_memory_equal(a.counts, b.counts, a.counts_len * sizeof *a.counts);
        hdr_release(&a);
        hdr_release(&b);
    }
    /* the README example: 10000 x 1 ms and one 100 s stall at a 10 ms interval */
    struct hdr h;
    assert_int_equal(hdr_init(&h, 1000, H_1H_NS, 3), 0);
    for (int i = 0; i < 10000; i++)
        hdr_record_corrected(&h, 1000000, 1, 10000000);
    hdr_record_corrected(&h, 100000000000LL, 1, 10000000);
    assert_int_equal(h.total_count, 10000 + 10000);
    assert_true(hdr_value_at_percentile(&h, 50) < 1100000);
    assert_true(hdr_value_at_percentile(&h, 75) > 40000000000LL);
    assert_int_equal(hdr_record_corrected(&h, -1, 1, 10), KNEE_ENEG);
    hdr_release(&h);
}

static void test_hdr_iterators(void **state)
{
    (void)state;
    struct hdr h;
    assert_int_equal(hdr_init(&h, 1, H_1H_NS, 3), 0);
    struct hdr_iter it;
    hdr_iter_percentile_init(&it, &h, 5);
    assert_false(hdr_iter_next(&it)); /* empty */
    struct rng r;
    rng_seed(&r, 7);
    for (int i = 0; i < 20000; i++)
        hdr_record(&h, draw_ns(&r, LOGNORMAL), 1 + (int64_t)rng_below(&r, 3));
    /* recorded: one step per non-empty bucket, counts sum to the total */
    int64_t sum = 0;
    size_t steps = 0, nonempty = 0;
    for (size_t i = 0; i < h.counts_len; i++)
        nonempty += h.counts[i] != 0;
    hdr_iter_recorded_init(&it, &h);
    while (hdr_iter_next(&it)) {
        assert_true(it.count_at_value > 0);
        assert_int_equal(it.count_added_in_step, it.count_at_value);
        sum += it.count_added_in_step;
        assert_int_equal(it.cumulative_count, sum);
        steps++;
    }
    assert_int_equal(sum, h.total_count);
    assert_int_equal(steps, nonempty);
    /* percentile: ticks rise, cumulative counts never fall, last step is 100% at the max */
    hdr_iter_percentile_init(&it, &h, 5);
    double prev = -1;
    int64_t prevc = 0, last_v = 0;
    double last_p = 0;
    steps = 0;
    while (hdr_iter_next(&it)) {
        assert_true(it.percentile_level_iterated_to > prev);
        assert_true(it.cumulative_count >= prevc);
        assert_true(it.percentile >= it.percentile_level_iterated_to || it.percentile_level_iterated_to == 100.0);
        prev = it.percentile_level_iterated_to;
        prevc = it.cumulative_count;
        last_v = it.value_iterated_to;
        last_p = it.percentile_level_iterated_to;
        if (steps == 1)
            assert_true(it.percentile_level_iterated_to == 10.0); /* 0, 10, 20, ... 50, 55, ... */
        steps++;
    }
    assert_true(last_p == 100.0);
    assert_int_equal(last_v, hdr_max(&h));
    assert_int_equal(prevc, h.total_count);
    /* linear: steps of 1 ms from 0 until the max; counts sum to total */
    hdr_iter_linear_init(&it, &h, 1000000);
    sum = 0;
    int64_t expect_to = 1000000 - 1;
    while (hdr_iter_next(&it)) {
        assert_int_equal(it.value_iterated_to, expect_to);
        expect_to += 1000000;
        sum += it.count_added_in_step;
    }
    assert_int_equal(sum, h.total_count);
    assert_true(expect_to - 1000000 >= hdr_lowest_equivalent(&h, h.max_value));
    /* log: 1 ms, 2 ms, 4 ms, ... */
    hdr_iter_log_init(&it, &h, 1000000, 2.0);
    sum = 0;
    double level = 1000000;
    while (hdr_iter_next(&it)) {
        assert_int_equal(it.value_iterated_to, (int64_t)level - 1);
        level *= 2;
        sum += it.count_added_in_step;
    }
    assert_int_equal(sum, h.total_count);
    /* modification during iteration stops it */
    hdr_iter_recorded_init(&it, &h);
    assert_true(hdr_iter_next(&it));
    hdr_record(&h, 5, 1);
    assert_false(hdr_iter_next(&it));
    hdr_release(&h);
}

static void test_hdr_recalc(void **state)
{
    (void)state;
    struct hdr a, b;
    assert_int_equal(hdr_init(&a, 1, H_1H_NS, 3), 0);
    assert_int_equal(hdr_init(&b, 1, H_1H_NS, 3), 0);
    int64_t vals[] = {0, 3, 2500, 777777, 99999999};
    for (size_t i = 0; i < 5; i++)
        hdr_record(&a, vals[i], (int64_t)i + 1);
    memcpy(b.counts, a.counts, a.counts_len * sizeof *a.counts);
    hdr_recalc(&b);
    assert_int_equal(b.total_count, a.total_count);
    assert_int_equal(hdr_min(&b), hdr_min(&a));
    assert_int_equal(hdr_max(&b), hdr_max(&a));
    assert_int_equal(hdr_lowest_equivalent(&b, b.min_value), 3);
    hdr_reset(&b);
    hdr_recalc(&b);
    assert_int_equal(b.total_count, 0);
    assert_int_equal(hdr_max(&b), 0);
    hdr_release(&a);
    hdr_release(&b);
}

static bool all_zero(const struct hdr *h)
{
    for (size_t i = 0; i < h->counts_len; i++)
        if (h->counts[i])
            return false;
    return true;
}

/* hdr_add and hdr_reset walk only the span [min_value, max_value] and counts[0]: after any mix
 * of plain, zero, corrected and overflowing records, merges (into a narrower dst too) and
 * counts set by hand then hdr_recalc, the add equals the element-wise sum of the fitting
 * buckets and the reset leaves no count behind. */
static void test_hdr_span_walks(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 20261202);
    for (int round = 0; round < 200; round++) {
        struct hdr a, b, sum, narrow;
        assert_int_equal(hdr_init(&a, 1, H_1H_NS, 3), 0);
        assert_int_equal(hdr_init(&b, 1, H_1H_NS, 3), 0);
        assert_int_equal(hdr_init(&sum, 1, H_1H_NS, 3), 0);
        assert_int_equal(hdr_init(&narrow, 1, 1000000, 3), 0); /* same layout, highest 1 ms */
        int n = (int)(rng_next(&r) % 40);
        for (int i = 0; i < n; i++) {
            int64_t v = (int64_t)(rng_next(&r) % 4 == 0 ? 0 : rng_next(&r) % (1ULL << (rng_next(&r) % 44)));
            switch (rng_next(&r) % 4) {
            case 0:
                hdr_record_corrected(&a, v, 1, 1000 + (int64_t)(rng_next(&r) % 100000));
                break;
            case 1:
                hdr_record(&a, v, 1 + (int64_t)(rng_next(&r) % 5));
                break;
            default:
                hdr_record(&b, v, 1);
            }
        }
        if (round % 5 == 0) { /* b by hand: counts, then hdr_recalc as the decoders do */
            hdr_reset(&b);
            assert_true(all_zero(&b));
            b.counts[0] = round % 10 == 0;
            b.counts[b.counts_len / 2] = 3;
            hdr_recalc(&b);
        }
        assert_int_equal(hdr_add(&sum, &a), 0);
        assert_int_equal(hdr_add(&sum, &b), 0);
        for (size_t i = 0; i < sum.counts_len; i++)
            assert_int_equal(sum.counts[i], a.counts[i] + b.counts[i]);
        assert_int_equal(hdr_add(&narrow, &sum), 0);
        size_t fit = hdr_index_of(&narrow, narrow.highest) + 1;
        for (size_t i = 0; i < fit; i++)
            assert_int_equal(narrow.counts[i], sum.counts[i]);
        assert_int_equal(narrow.total_count + narrow.overflow_count, sum.total_count + sum.overflow_count);
        struct hdr *all[] = {&a, &b, &sum, &narrow};
        for (size_t k = 0; k < 4; k++) {
            hdr_reset(all[k]);
            assert_true(all_zero(all[k]));
            assert_int_equal(all[k]->total_count, 0);
            hdr_release(all[k]);
        }
    }
}

static void test_java_fixed(void **state)
{
    (void)state;
    /* Outputs of java.util.Formatter (JDK 17), checked by hand with javac/java. */
    struct {
        double v;
        int d;
        const char *want;
    } c[] = {
        {0.125, 2, "0.13"},
        {1.005, 2, "1.01"},
        {2.5, 0, "3"},
        {0.0005, 3, "0.001"},
        {1e-7, 3, "0.000"},
        {999.9996, 3, "1000.000"},
        {0.15, 0, "0"},
        {1.0 / 3, 12, "0.333333333333"},
        {0.0, 3, "0.000"},
        {1e21, 2, "1000000000000000000000.00"},
        {123456789.0, 3, "123456789.000"},
        {0.9, 12, "0.900000000000"},
        {INFINITY, 2, "Infinity"},
        {1.000447, 3, "1.000"},
        {2.7684, 3, "2.768"},
        {9.5, 0, "10"},
        {-1.5, 1, "-1.5"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        hdr_java_fixed(buf, sizeof buf, c[i].v, c[i].d);
        assert_string_equal(buf, c[i].want);
    }
}

static void test_percentiles_print_shape(void **state)
{
    (void)state;
    struct hdr h;
    assert_int_equal(hdr_init(&h, 1, H_1H_NS, 3), 0);
    for (int v = 1; v <= 4; v++)
        hdr_record(&h, v * 1000000, 1);
    /* Java's outputPercentileDistribution(System.out, 5, 1e6) for the same four values */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(hdr_percentiles_print(f, &h, 5, 1e6, false), 0);
    fclose(f);
    const char *want = "       Value     Percentile TotalCount 1/(1-Percentile)\n"
                       "\n"
                       "       1.000 0.000000000000          1           1.00\n"
                       "       1.000 0.100000000000          1           1.11\n"
                       "       1.000 0.200000000000          1           1.25\n"
                       "       2.001 0.300000000000          2           1.43\n"
                       "       2.001 0.400000000000          2           1.67\n"
                       "       2.001 0.500000000000          2           2.00\n"
                       "       3.000 0.550000000000          3           2.22\n"
                       "       3.000 0.600000000000          3           2.50\n"
                       "       3.000 0.650000000000          3           2.86\n"
                       "       3.000 0.700000000000          3           3.33\n"
                       "       3.000 0.750000000000          3           4.00\n"
                       "       4.002 0.775000000000          4           4.44\n"
                       "       4.002 1.000000000000          4\n"
                       "#[Mean    =        2.500, StdDeviation   =        1.118]\n"
                       "#[Max     =        4.002, Total count    =            4]\n"
                       "#[Buckets =           32, SubBuckets     =         2048]\n";
    assert_string_equal(buf, want);
    free(buf);
    hdr_release(&h);
}

/* ---- Prometheus ---- */

static void test_prom_reference_example(void **state)
{
    (void)state;
    /* le=0.1:50, 0.2:80, 0.5:95, +Inf:100 (a worked histogram_quantile example) */
    struct prom_hist p;
    double b[] = {0.1, 0.2, 0.5};
    assert_int_equal(prom_init(&p, b, 3), 0);
    for (int i = 0; i < 50; i++)
        prom_observe(&p, 0.05);
    for (int i = 0; i < 30; i++)
        prom_observe(&p, 0.2); /* le is inclusive: 0.2 counts in le=0.2 */
    for (int i = 0; i < 15; i++)
        prom_observe(&p, 0.3);
    for (int i = 0; i < 5; i++)
        prom_observe(&p, 7);
    assert_int_equal(prom_cumulative(&p, 0), 50);
    assert_int_equal(prom_cumulative(&p, 1), 80);
    assert_int_equal(prom_cumulative(&p, 2), 95);
    assert_int_equal(prom_cumulative(&p, 3), 100);
    struct prom_estimate e;
    assert_true(fabs(prom_quantile(&p, 0.9, &e) - 0.4) < 1e-15);
    assert_int_equal(e.bucket, 2);
    assert_true(e.low == 0.2 && e.high == 0.5);
    assert_true(fabs(prom_quantile(&p, 0.3, &e) - 0.06) < 1e-15);
    assert_true(e.low == 0 && e.high == 0.1);
    assert_true(prom_quantile(&p, 0.99, &e) == 0.5);
    assert_int_equal(e.bucket, 3);
    assert_true(isinf(e.high));
    assert_true(isnan(prom_quantile(&p, NAN, NULL)));
    assert_true(prom_quantile(&p, -0.1, NULL) == -INFINITY);
    assert_true(prom_quantile(&p, 1.1, NULL) == INFINITY);
    struct prom_hist empty;
    assert_int_equal(prom_init(&empty, prom_default_bounds_ms, PROM_DEFAULT_NBOUNDS), 0);
    assert_true(isnan(prom_quantile(&empty, 0.5, NULL)));
    /* a non-positive lowest bound answers itself */
    double nb[] = {-1, 1};
    assert_int_equal(prom_init(&p, nb, 2), 0);
    prom_observe(&p, -5);
    assert_true(prom_quantile(&p, 0.5, NULL) == -1);
}

static void test_prom_parse_and_init(void **state)
{
    (void)state;
    double b[PROM_MAX_BOUNDS];
    size_t n;
    assert_int_equal(prom_parse_bounds("5,10,25", b, &n), 0);
    assert_int_equal(n, 3);
    assert_true(b[0] == 5 && b[2] == 25);
    assert_int_equal(prom_parse_bounds(" 0.5 , 1e3 ", b, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(prom_parse_bounds("", b, &n), KNEE_EFORMAT);
    assert_int_equal(prom_parse_bounds("5,,10", b, &n), KNEE_EFORMAT);
    assert_int_equal(prom_parse_bounds("5,", b, &n), KNEE_EFORMAT);
    assert_int_equal(prom_parse_bounds("5x", b, &n), KNEE_EFORMAT);
    assert_int_equal(prom_parse_bounds("10,5", b, &n), KNEE_EINVAL);
    assert_int_equal(prom_parse_bounds("5,5", b, &n), KNEE_EINVAL);
    assert_int_equal(prom_parse_bounds("1,inf", b, &n), KNEE_EINVAL);
    assert_int_equal(prom_parse_bounds("nan", b, &n), KNEE_EINVAL);
    char many[1024] = "";
    for (int i = 1; i <= PROM_MAX_BOUNDS + 1; i++) {
        char t[16];
        snprintf(t, sizeof t, i == 1 ? "%d" : ",%d", i);
        strcat(many, t);
    }
    assert_int_equal(prom_parse_bounds(many, b, &n), KNEE_EINVAL);
    struct prom_hist p;
    double bad[] = {1, NAN};
    assert_int_equal(prom_init(&p, bad, 2), KNEE_EINVAL);
    assert_int_equal(prom_init(&p, bad, 0), KNEE_EINVAL);
    assert_int_equal(prom_init(&p, prom_default_bounds_ms, PROM_MAX_BOUNDS + 1), KNEE_EINVAL);
    assert_true(prom_default_bounds_ms[0] == 5 && prom_default_bounds_ms[10] == 10000);
}

/* A straightforward histogram_quantile from the description: linear scan, per-bucket counts. */
static double ref_quantile(const double *bounds, const uint64_t *counts, size_t nb, double q)
{
    double total = 0;
    for (size_t i = 0; i <= nb; i++)
        total += (double)counts[i];
    if (total == 0)
        return NAN;
    double rank = q * total, below = 0;
    for (size_t i = 0; i < nb; i++) {
        double c = (double)counts[i];
        if (below + c >= rank) {
            double lo = i ? bounds[i - 1] : 0;
            if (i == 0 && bounds[0] <= 0)
                return bounds[0];
            return lo + (bounds[i] - lo) * ((rank - below) / c);
        }
        below += c;
    }
    return bounds[nb - 1];
}

static void test_prom_vs_reimplementation(void **state)
{
    (void)state;
    for (int shape = UNIFORM; shape <= PARETO; shape++) {
        struct rng r;
        rng_seed(&r, 77 + (uint64_t)shape);
        struct prom_hist p;
        assert_int_equal(prom_init(&p, prom_default_bounds_ms, PROM_DEFAULT_NBOUNDS), 0);
        for (int i = 0; i < 20000; i++)
            prom_observe(&p, (double)draw_ns(&r, (enum shape)shape) / 1e6 * 10);
        for (double q = 0; q <= 1.0; q += 0.0125) {
            double got = prom_quantile(&p, q, NULL), want = ref_quantile(p.bounds, p.counts, p.nbounds, q);
            if (!(got == want || (isnan(got) && isnan(want)) || fabs(got - want) <= 1e-12 * fabs(want))) {
                print_error("shape %d q=%g: %.17g vs %.17g\n", shape, q, got, want);
                fail();
            }
        }
    }
}

/* ---- doubling buckets ---- */

static void test_dbl(void **state)
{
    (void)state;
    struct dbl_hist d;
    dbl_init(&d, 1);
    assert_int_equal(dbl_bucket_of(&d, 0), 0);
    assert_int_equal(dbl_bucket_of(&d, 0.999), 0);
    assert_int_equal(dbl_bucket_of(&d, 1), 1);
    assert_int_equal(dbl_bucket_of(&d, 1.999), 1);
    assert_int_equal(dbl_bucket_of(&d, 2), 2);
    assert_int_equal(dbl_bucket_of(&d, 4), 3);
    assert_int_equal(dbl_bucket_of(&d, 1e300), DBL_MAX_BUCKETS - 1);
    assert_int_equal(dbl_bucket_of(&d, NAN), DBL_MAX_BUCKETS - 1);
    assert_true(dbl_lower(&d, 3) == 4 && dbl_upper(&d, 3) == 8 && dbl_lower(&d, 0) == 0);
    dbl_init(&d, 0.1);
    assert_int_equal(dbl_bucket_of(&d, 0.4), 3);
    assert_int_equal(dbl_bucket_of(&d, nextafter(0.4, 0)), 2);
    dbl_init(&d, -3);
    assert_true(d.first == 1);
    dbl_init(&d, 1);
    dbl_add(&d, 0.5, 10);
    dbl_add(&d, 2.5, 20);
    dbl_add(&d, 100, 1);
    assert_int_equal(d.total, 31);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dbl_print(f, &d, "ms", 20);
    fclose(f);
    /* labels are right-aligned to the widest */
    assert_non_null(strstr(buf, "   0..1 ms  10   32.3%  ##########\n"));
    assert_non_null(strstr(buf, "   2..4 ms  20   64.5%  ####################\n"));
    assert_non_null(strstr(buf, "  64..128 ms   1    3.2%  #\n"));
    free(buf);
    struct dbl_hist e;
    dbl_init(&e, 1);
    f = open_memstream(&buf, &len);
    dbl_print(f, &e, "ms", 20);
    fclose(f);
    assert_int_equal(len, 0);
    free(buf);
}

/* ---- `test_hist --java-dump`: the C side of tests/e2e/hdr_java.sh ----
 * Reads the command script of tests/e2e/hdr_java/HdrCheck.java from stdin and prints the same
 * lines that program prints with the Java library; the e2e test diffs the two. */

static const double java_pcts[] = {0,  1e-9, 0.001, 0.1,   0.5,   1,      5,       10, 12.345, 20,
                                   25, 33.3, 50,    66.6,  75,    80,     87.5,    90, 95,     97.5,
                                   99, 99.5, 99.9,  99.95, 99.99, 99.999, 99.9999, 100};

static unsigned long long dbits(double d)
{
    unsigned long long u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static void dump_steps(const char *kind, struct hdr_iter *it)
{
    while (hdr_iter_next(it))
        printf("%s %lld %lld %lld %lld %lld %llx %llx\n", kind, (long long)it->value_iterated_to,
               (long long)it->value_iterated_from, (long long)it->count_at_value, (long long)it->count_added_in_step,
               (long long)it->cumulative_count, dbits(it->percentile), dbits(it->percentile_level_iterated_to));
}

static void java_dump(const struct hdr *h)
{
    printf("total %lld min %lld max %lld mean %llx stdev %llx footprint %zu\n", (long long)h->total_count,
           (long long)hdr_min(h), (long long)hdr_max(h), dbits(hdr_mean(h)), dbits(hdr_stdev(h)),
           512 + hdr_memory_bytes(h->lowest, h->highest, h->sig_digits));
    for (size_t i = 0; i < sizeof java_pcts / sizeof java_pcts[0]; i++)
        printf("pct %llx %lld\n", dbits(java_pcts[i]), (long long)hdr_value_at_percentile(h, java_pcts[i]));
    for (int k = 1; k < 200; k++) {
        double p = 100.0 * k / 199;
        printf("pct %llx %lld\n", dbits(p), (long long)hdr_value_at_percentile(h, p));
    }
    struct hdr_iter it;
    hdr_iter_recorded_init(&it, h);
    dump_steps("rec", &it);
    int ticks[] = {1, 5, 7};
    for (int t = 0; t < 3; t++) {
        char kind[8];
        snprintf(kind, sizeof kind, "pt%d", ticks[t]);
        hdr_iter_percentile_init(&it, h, ticks[t]);
        dump_steps(kind, &it);
    }
    int64_t max = hdr_max(h), unit = max / 37 > 1 ? max / 37 : 1;
    hdr_iter_linear_init(&it, h, unit);
    dump_steps("lin", &it);
    hdr_iter_log_init(&it, h, 1000, 2.0);
    dump_steps("log2", &it);
    hdr_iter_log_init(&it, h, 3, 1.7);
    dump_steps("log17", &it);
    int64_t probes[] = {0,    1,      2,      1023,    1024,      2047, 2048,    2049,       4095,
                        4096, 100000, 999999, 1000000, 123456789, max,  max / 3, hdr_min(h), 3599999999999LL};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        int64_t x = probes[i];
        printf("idx %lld %lld %lld %lld %lld %lld %lld\n", (long long)x, (long long)hdr_lowest_equivalent(h, x),
               (long long)hdr_highest_equivalent(h, x), (long long)hdr_median_equivalent(h, x),
               (long long)hdr_size_of_equivalent_range(h, x), (long long)hdr_next_non_equivalent(h, x),
               (long long)hdr_count_at_value(h, x < h->highest ? x : h->highest));
    }
}

static int java_driver(void)
{
    struct hdr hs[256];
    int nh = 0;
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        char cmd[16];
        long long a = 0, b = 0, c = 0;
        double r = 0;
        if (sscanf(line, "%15s", cmd) != 1 || cmd[0] == '#')
            continue;
        struct hdr *cur = nh ? &hs[nh - 1] : NULL;
        if (!strcmp(cmd, "new") && sscanf(line, "%*s %lld %lld %lld", &a, &b, &c) == 3 && nh < 256) {
            if (hdr_init(&hs[nh], a, b, (int)c) != 0)
                return 1;
            nh++;
        } else if (!strcmp(cmd, "r") && cur && sscanf(line, "%*s %lld %lld", &a, &b) == 2) {
            if (hdr_record(cur, a, b) != 0)
                return 1;
        } else if (!strcmp(cmd, "c") && cur && sscanf(line, "%*s %lld %lld", &a, &b) == 2) {
            if (hdr_record_corrected(cur, a, 1, b) != 0)
                return 1;
        } else if (!strcmp(cmd, "add") && cur && sscanf(line, "%*s %lld", &a) == 1 && a < nh) {
            if (hdr_add(cur, &hs[a]) != 0)
                return 1;
        } else if (!strcmp(cmd, "dump") && cur) {
            java_dump(cur);
        } else if (!strcmp(cmd, "dist") && cur && sscanf(line, "%*s %lld %lf %lld", &a, &r, &b) == 3) {
            if (hdr_percentiles_print(stdout, cur, (int)a, r, b == 1) != 0)
                return 1;
        } else if (!strcmp(cmd, "fmt") && sscanf(line, "%*s %llx %lld", (unsigned long long *)&a, &b) == 2) {
            double d;
            unsigned long long u = (unsigned long long)a;
            memcpy(&d, &u, sizeof d);
            char buf[512];
            hdr_java_fixed(buf, sizeof buf, d, (int)b);
            printf("%s\n", buf);
        } else {
            fprintf(stderr, "test_hist --java-dump: bad line: %s", line);
            return 2;
        }
    }
    for (int i = 0; i < nh; i++)
        hdr_release(&hs[i]);
    return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--java-dump"))
        return java_driver();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hdr_worked_index_values),
        cmocka_unit_test(test_hdr_bad_params),
        cmocka_unit_test(test_hdr_record_errors_and_overflow),
        cmocka_unit_test(test_hdr_percentile_semantics),
        cmocka_unit_test(test_hdr_properties),
        cmocka_unit_test(test_hdr_add_rules),
        cmocka_unit_test(test_hdr_add_fit_boundary),
        cmocka_unit_test(test_hdr_corrected),
        cmocka_unit_test(test_hdr_iterators),
        cmocka_unit_test(test_hdr_recalc),
        cmocka_unit_test(test_hdr_span_walks),
        cmocka_unit_test(test_java_fixed),
        cmocka_unit_test(test_percentiles_print_shape),
        cmocka_unit_test(test_prom_reference_example),
        cmocka_unit_test(test_prom_parse_and_init),
        cmocka_unit_test(test_prom_vs_reimplementation),
        cmocka_unit_test(test_dbl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
