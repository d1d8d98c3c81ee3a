/* knee lab fanout in a reduced form, the timing tier: N = 1, 5 and 20 parallel dependencies,
 * each 2% slow at 200 ms, 40 pages/s for 8 s with a seeded server. The share of slow pages stays
 * near 1 − 0.98^N (within four binomial standard deviations) and grows with N, and a page with
 * one fast call stays fast. The exact checks in short rounds are test_lab_fanout.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/lab.h"
#include "unit/timing.h"

#include <math.h>
#include <stdio.h>

static void test_fanout_shares(void **state)
{
    (void)state;
    struct lab_options o;
    lab_options_init(&o);
    o.duration_ns = 8 * NS_PER_S;
    o.warmup_ns = NS_PER_S / 2;
    o.seed = 5;
    const unsigned ns[] = {1, 5, 20};
    o.fanouts = ns;
    o.nfanouts = 3;
    static struct lab_fanout_result r;
    for (int attempt = 1;; attempt++) {
        assert_int_equal(lab_fanout(&o, &r), 0);
        assert_int_equal(r.nrows, 3);
        char problem[256] = "";
        for (size_t i = 0; i < 3; i++) {
            const struct lab_fanout_row *w = &r.row[i];
            double p = 1 - pow(0.98, ns[i]);
            assert_true(fabs(w->predicted - p) < 1e-12);
            assert_true(w->ci_lo <= w->share && w->share <= w->ci_hi);
            double sd = sqrt(p * (1 - p) / (double)w->pages);
            printf("# N=%u: %.3f of %llu pages slow, predicted %.3f (sd %.3f)\n", w->n, w->share,
                   (unsigned long long)w->pages, p, sd);
            TIMING_CHECK(problem, w->pages >= 300);
            TIMING_CHECK(problem, fabs(w->share - p) <= 4 * sd + 0.005);
        }
        TIMING_CHECK(problem, r.row[2].share > r.row[0].share);
        /* A page waits for its slowest call: with 20 calls p95 is the slow dependency itself. */
        TIMING_CHECK(problem, r.row[2].p95_ms >= 200);
        TIMING_CHECK(problem, r.row[0].p95_ms < 100);
        /* a round knee run called GENERATOR-LIMITED measured the machine (timing_verdict) */
        if (timing_verdict(attempt, problem, r.valid.generator_limited ? r.valid.warning : ""))
            break;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fanout_shares),
    };
    return timing_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
