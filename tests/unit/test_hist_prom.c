/* Unit tests for prom_add_hdr (hist/prom.h): an HdrHistogram's values as Prometheus bucket
 * counts, checked against the values themselves. The stated error bound, on seeded random
 * values and bounds: le=B never counts a value above B, and misses only values within the
 * width of the HDR bucket B falls inside (at most B/1024, none below 2048 units); a bound on
 * an HDR bucket's edge is exact; the sum is count x median equivalent (hdr_mean's); overflow
 * and empty histograms; the conversion of a merge equals the sum of the conversions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/rng.h"
#include "hist/hdr.h"
#include "hist/prom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOWEST 1
#define HIGHEST 3600000000000LL
#define SIG 3

/* The count at le=bounds[i], cumulative. */
static uint64_t cum(const struct prom_hist *p, size_t i)
{
    return prom_cumulative(p, i);
}

static void test_worked_example(void **state)
{
    (void)state;
    struct hdr h;
    assert_int_equal(hdr_init(&h, LOWEST, HIGHEST, SIG), 0);
    /* 100 ms = 1e8 ns lies inside the HDR bucket [99942400, 100007935] (width 65536 ns). */
    assert_int_equal(hdr_lowest_equivalent(&h, 100000000), 99942400);
    assert_int_equal(hdr_highest_equivalent(&h, 100000000), 100007935);
    hdr_record(&h, 99942399, 1);  /* below the bucket: counted at le=100ms */
    hdr_record(&h, 99950000, 1);  /* in it, <= 100 ms: counted above (the stated loss) */
    hdr_record(&h, 100000000, 1); /* exactly 100 ms: in it, counted above */
    hdr_record(&h, 100000001, 1); /* above: never at le=100ms */
    hdr_record(&h, 2047, 3);      /* below 2048 ns buckets are 1 ns wide: exact */
    hdr_record(&h, 2048, 1);
    const double b[] = {2047, 1e8};
    struct prom_hist p;
    assert_int_equal(prom_init(&p, b, 2), 0);
    prom_add_hdr(&p, &h);
    assert_int_equal(p.counts[0], 3);
    assert_int_equal(p.counts[1], 2); /* 2048 and 99942399 */
    assert_int_equal(p.counts[2], 3);
    assert_int_equal(p.total, 8);
    /* A bound on the bucket's last value is exact. */
    const double edge[] = {99942399, 100007935};
    assert_int_equal(prom_init(&p, edge, 2), 0);
    prom_add_hdr(&p, &h);
    assert_int_equal(cum(&p, 0), 5);
    assert_int_equal(cum(&p, 1), 8); /* the whole bucket, 100000001 included */
    hdr_release(&h);
}

static void test_error_bound_random(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 42);
    for (int round = 0; round < 40; round++) {
        struct hdr h;
        assert_int_equal(hdr_init(&h, LOWEST, HIGHEST, SIG), 0);
        size_t nv = 2000;
        int64_t *v = malloc(nv * sizeof *v);
        for (size_t i = 0; i < nv; i++) {
            /* log-uniform over 1 ns .. 100 s, and some zeros */
            double e = rng_uniform(&r) * 11;
            v[i] = rng_uniform(&r) < 0.01 ? 0 : (int64_t)pow(10, e);
            hdr_record(&h, v[i], 1);
        }
        /* Random bounds, half of them next to recorded values (the worst case). */
        double b[PROM_MAX_BOUNDS];
        size_t nb = 1 + (size_t)(rng_uniform(&r) * 20);
        for (size_t i = 0; i < nb; i++)
            b[i] = rng_uniform(&r) < 0.5 ? (double)v[(size_t)(rng_uniform(&r) * (double)nv)] + (double)(i % 3)
                                         : floor(pow(10, rng_uniform(&r) * 11));
        /* sort, unique, > 0 */
        for (size_t i = 0; i < nb; i++)
            for (size_t j = i + 1; j < nb; j++)
                if (b[j] < b[i]) {
                    double t = b[i];
                    b[i] = b[j];
                    b[j] = t;
                }
        size_t k = 0;
        for (size_t i = 0; i < nb; i++)
            if (b[i] > 0 && (k == 0 || b[i] > b[k - 1]))
                b[k++] = b[i];
        if (k == 0)
            b[k++] = 1;
        struct prom_hist p;
        assert_int_equal(prom_init(&p, b, k), 0);
        prom_add_hdr(&p, &h);
        assert_int_equal(p.total, nv);
        for (size_t i = 0; i < k; i++) {
            int64_t B = (int64_t)b[i];
            int64_t lo = hdr_lowest_equivalent(&h, B), hi = hdr_highest_equivalent(&h, B);
            uint64_t le = 0, below_lo = 0, le_minus = 0;
            double slack = B < h.sub_bucket_count ? 0 : (double)B / h.sub_bucket_half_count;
            for (size_t j = 0; j < nv; j++) {
                le += v[j] <= B;
                below_lo += v[j] < lo || (hi == B && v[j] <= B);
                le_minus += (double)v[j] <= (double)B - slack;
            }
            uint64_t got = cum(&p, i);
            assert_true(got <= le);          /* never a value above B */
            assert_true(got >= le_minus);    /* nothing missed further than the slack below B */
            assert_int_equal(got, below_lo); /* exactly: the values below B's HDR bucket (or up to B on its edge) */
        }
        /* sum: count x median equivalent, as hdr_mean */
        assert_true(fabs(p.sum / (double)p.total - hdr_mean(&h)) <= 1e-9 * hdr_mean(&h));
        free(v);
        hdr_release(&h);
    }
}

static void test_merge_and_edges(void **state)
{
    (void)state;
    struct hdr a, b, m;
    assert_int_equal(hdr_init(&a, LOWEST, HIGHEST, SIG), 0);
    assert_int_equal(hdr_init(&b, LOWEST, HIGHEST, SIG), 0);
    assert_int_equal(hdr_init(&m, LOWEST, HIGHEST, SIG), 0);
    const double bounds[] = {1e6, 5e6, 1e7};
    struct prom_hist pa, pb, pm;
    prom_init(&pa, bounds, 3);
    prom_init(&pb, bounds, 3);
    prom_init(&pm, bounds, 3);
    prom_add_hdr(&pa, &a); /* empty: nothing */
    assert_int_equal(pa.total, 0);
    for (int i = 1; i <= 1000; i++) {
        hdr_record(&a, i * 9973, 1);
        hdr_record(&b, i * 13007, 2);
    }
    hdr_record(&a, HIGHEST * 2, 1); /* overflow: not in total_count, not added */
    hdr_add(&m, &a);
    hdr_add(&m, &b);
    prom_add_hdr(&pa, &a);
    prom_add_hdr(&pb, &b);
    prom_add_hdr(&pm, &m);
    assert_int_equal(pa.total, 1000);
    for (size_t i = 0; i <= 3; i++)
        assert_int_equal(pm.counts[i], pa.counts[i] + pb.counts[i]);
    assert_int_equal(pm.total, 3000);
    /* adding twice doubles (the function adds; the caller resets) */
    prom_add_hdr(&pa, &a);
    assert_int_equal(pa.total, 2000);
    hdr_release(&a);
    hdr_release(&b);
    hdr_release(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_error_bound_random),
        cmocka_unit_test(test_merge_and_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
