/* Unit tests for hist/native.h: bucket keys exact on the bounds; the conversion from an
 * HdrHistogram (counts, sum, the buckets equal to those found value by value, and
 * histogram_quantile over them within the schema's error, 2^(1/256) - 1, of
 * hdr_value_at_percentile for p50/p90/p99/p99.9 on several shapes); the sum of conversions
 * equal to the conversion of the sum; the spans-and-deltas encoding read back into the same
 * buckets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/pb.h"
#include "core/rng.h"
#include "hist/hdr.h"
#include "hist/native.h"
#include "unit/pb_decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HIGHEST 3600000000000LL

static void test_keys(void **state)
{
    (void)state;
    assert_int_equal(native_key(8, 1.0), 0);
    assert_int_equal(native_key(8, 2.0), 256);
    assert_int_equal(native_key(8, 0.5), -256);
    assert_int_equal(native_key(8, nextafter(1.0, 2.0)), 1);
    assert_int_equal(native_key(8, nextafter(1.0, 0.0)), 0);
    assert_int_equal(native_key(0, 3.0), 2); /* (2, 4] */
    assert_int_equal(native_key(0, 4.0), 2);
    assert_int_equal(native_key(-1, 5.0), 2); /* schema -1: (4, 16] */
    assert_true(native_upper(8, 256) == 2.0);
    assert_true(native_upper(8, -512) == 0.25);
    /* Every key's upper bound is in it, and a hair above it is in the next one. */
    for (int32_t k = -8000; k < 3100; k += 37) {
        double u = native_upper(8, k);
        assert_int_equal(native_key(8, u), k);
        assert_int_equal(native_key(8, nextafter(u, INFINITY)), k + 1);
    }
}

/* Record n values of a shape (ns) into h. */
static void fill(struct hdr *h, int shape, struct rng *r, int n)
{
    for (int i = 0; i < n; i++) {
        double v;
        switch (shape) {
        case 0:
            v = 1e6 + rng_uniform(r) * 9e6;
            break; /* 1..10 ms uniform */
        case 1:
            v = rng_lognormal(r, log(5e6), 1.0);
            break; /* lognormal, median 5 ms */
        case 2:
            v = rng_uniform(r) < 0.97 ? 2e5 + rng_exp(r, 1e5) : 2e9 + rng_exp(r, 5e8);
            break; /* bimodal */
        case 3:
            v = 123456789;
            break; /* one value */
        default:
            v = 1000 + rng_pareto(r, 1e4, 1.2);
            break; /* heavy tail, µs */
        }
        if (v > (double)HIGHEST)
            v = (double)HIGHEST;
        hdr_record(h, (int64_t)v, 1);
    }
}

static void test_quantiles_within_schema_error(void **state)
{
    (void)state;
    const double bound = exp2(1.0 / 256) - 1; /* a bucket's width relative to its lower bound */
    struct rng r;
    rng_seed(&r, 32);
    for (int shape = 0; shape < 5; shape++) {
        struct hdr h;
        assert_int_equal(hdr_init(&h, 1, HIGHEST, 3), 0);
        fill(&h, shape, &r, 20000 + 7 * shape);
        struct native_hist nh;
        native_init(&nh, NATIVE_SCHEMA);
        native_from_hdr(&nh, &h, 1e-9);
        assert_int_equal(nh.count, (uint64_t)h.total_count);
        assert_true(fabs(nh.sum - hdr_mean(&h) * (double)h.total_count * 1e-9) <= 1e-9 * nh.sum);
        const double ps[] = {50, 90, 99, 99.9};
        for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
            double want = (double)hdr_value_at_percentile(&h, ps[i]) * 1e-9;
            double got = native_quantile(&nh, ps[i] / 100);
            double rel = fabs(got - want) / want;
            if (rel > bound * (1 + 1e-9))
                fail_msg("shape %d p%g: native %.9g, hdr %.9g (%.4f%% > %.4f%%)", shape, ps[i], got, want, 100 * rel,
                         100 * bound);
        }
        native_release(&nh);
        hdr_release(&h);
    }
}

/* The conversion walks keys by table steps; the reference finds each HDR bucket's key on its
 * own (native_observe of the highest equivalent value): the same buckets, for every shape. */
static void test_conversion_equals_reference(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 99);
    for (int shape = 0; shape < 5; shape++) {
        struct hdr h;
        assert_int_equal(hdr_init(&h, 1, HIGHEST, 3), 0);
        fill(&h, shape, &r, 30000);
        hdr_record(&h, 1, 2); /* 1 ns: far below the rest, a jump */
        struct native_hist got, want;
        native_init(&got, NATIVE_SCHEMA);
        native_init(&want, NATIVE_SCHEMA);
        native_from_hdr(&got, &h, 1e-9);
        for (size_t i = 0; i < h.counts_len; i++)
            if (h.counts[i] > 0)
                native_observe(&want, (double)hdr_highest_equivalent(&h, hdr_value_from_index(&h, i)) * 1e-9,
                               (uint64_t)h.counts[i]);
        assert_int_equal(got.count, want.count);
        assert_int_equal(got.first, want.first);
        assert_int_equal(got.n, want.n);
        assert_memory_equal(got.counts, want.counts, got.n * sizeof *got.counts);
        native_release(&got);
        native_release(&want);
        hdr_release(&h);
    }
}

static void test_add_equals_merge(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 7);
    struct hdr a, b, all;
    assert_int_equal(hdr_init(&a, 1, HIGHEST, 3), 0);
    assert_int_equal(hdr_init(&b, 1, HIGHEST, 3), 0);
    assert_int_equal(hdr_init(&all, 1, HIGHEST, 3), 0);
    fill(&a, 1, &r, 5000);
    fill(&b, 2, &r, 5000);
    hdr_record(&b, 0, 3); /* zeros go to the zero bucket */
    assert_int_equal(hdr_add(&all, &a), 0);
    assert_int_equal(hdr_add(&all, &b), 0);
    struct native_hist na, nb, nall, other;
    native_init(&na, NATIVE_SCHEMA);
    native_init(&nb, NATIVE_SCHEMA);
    native_init(&nall, NATIVE_SCHEMA);
    native_init(&other, 4);
    native_from_hdr(&na, &a, 1e-9);
    native_from_hdr(&nb, &b, 1e-9);
    native_from_hdr(&nall, &all, 1e-9);
    assert_int_equal(nb.zero_count, 3);
    assert_int_equal(native_add(&na, &nb), 0);
    assert_int_equal(na.count, nall.count);
    assert_int_equal(na.zero_count, 3);
    assert_int_equal(na.first, nall.first);
    assert_int_equal(na.n, nall.n);
    assert_memory_equal(na.counts, nall.counts, na.n * sizeof *na.counts);
    assert_int_equal(native_add(&na, &other), KNEE_EMISMATCH);
    struct native_hist copy;
    native_init(&copy, 0);
    native_copy(&copy, &nall);
    assert_int_equal(copy.schema, NATIVE_SCHEMA);
    assert_int_equal(copy.n, nall.n);
    assert_true(native_quantile(&copy, 0.99) == native_quantile(&nall, 0.99));
    /* Observing directly agrees with the key of each value. */
    native_reset(&copy);
    assert_true(native_observe(&copy, 1.0, 2));
    assert_true(native_observe(&copy, 0.0, 1));
    assert_false(native_observe(&copy, -1.0, 1));
    assert_int_equal(copy.count, 3);
    assert_int_equal(copy.zero_count, 1);
    assert_int_equal(copy.first, 0);
    assert_true(native_quantile(&copy, 1.0) == 1.0);
    assert_true(isnan(native_quantile(&other, 0.5)));
    native_release(&copy);
    native_release(&na);
    native_release(&nb);
    native_release(&nall);
    native_release(&other);
    hdr_release(&a);
    hdr_release(&b);
    hdr_release(&all);
}

/* Read spans and deltas (remote-write field numbers) back into per-key counts. */
static void test_wire_shape(void **state)
{
    (void)state;
    struct native_hist h;
    native_init(&h, NATIVE_SCHEMA);
    /* keys 0, 1, 4 (a gap of two: one span), 10 (a gap of five: a new span), -4 (three below 0: a span
     * of its own). */
    native_observe(&h, 1.0, 5);
    native_observe(&h, native_upper(8, 1), 2);
    native_observe(&h, native_upper(8, 4), 9);
    native_observe(&h, native_upper(8, 10), 1);
    native_observe(&h, native_upper(8, -4), 4);
    struct pb_buf b;
    pb_buf_init(&b);
    native_pb_write(&h, &native_pb_remote, &b);
    assert_false(b.failed);
    struct pbd d = pbd_of(b.data, b.len);
    struct pbd_field f;
    int32_t offs[8], lens[8];
    size_t nspans = 0;
    int64_t deltas[32];
    long ndeltas = -1;
    uint64_t count = 0;
    while (pbd_next(&d, &f) == 1) {
        if (f.field == 1)
            count = f.u;
        else if (f.field == 4)
            assert_int_equal(pbd_zigzag(f.u), 8);
        else if (f.field == 11) {
            struct pbd s = pbd_of(f.data, f.len);
            struct pbd_field g;
            offs[nspans] = 0;
            lens[nspans] = 0;
            while (pbd_next(&s, &g) == 1)
                if (g.field == 1)
                    offs[nspans] = (int32_t)pbd_zigzag(g.u);
                else
                    lens[nspans] = (int32_t)g.u;
            nspans++;
        } else if (f.field == 12)
            ndeltas = pbd_packed_sint(&f, deltas, 32);
    }
    assert_int_equal(count, 21);
    /* spans: [-4] then [0..4] (offset 3 after -3) then [10] (offset 5 after 5) */
    assert_int_equal(nspans, 3);
    assert_int_equal(offs[0], -4);
    assert_int_equal(lens[0], 1);
    assert_int_equal(offs[1], 3);
    assert_int_equal(lens[1], 5);
    assert_int_equal(offs[2], 5);
    assert_int_equal(lens[2], 1);
    /* counts 4 | 5 2 0 0 9 | 1 as deltas */
    const int64_t want[] = {4, 1, -3, -2, 0, 9, -8};
    assert_int_equal(ndeltas, 7);
    assert_memory_equal(deltas, want, sizeof want);

    /* Empty: one empty span, no deltas. */
    native_reset(&h);
    pb_buf_reset(&b);
    native_pb_write(&h, &native_pb_exposition, &b);
    d = pbd_of(b.data, b.len);
    int spans = 0, dfields = 0;
    while (pbd_next(&d, &f) == 1) {
        spans += f.field == 12;
        dfields += f.field == 13;
        if (f.field == 12)
            assert_int_equal(f.len, 4); /* offset 0, length 0 */
    }
    assert_int_equal(spans, 1);
    assert_int_equal(dfields, 0);
    pb_buf_release(&b);
    native_release(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_quantiles_within_schema_error),
        cmocka_unit_test(test_conversion_equals_reference),
        cmocka_unit_test(test_add_equals_merge),
        cmocka_unit_test(test_wire_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
