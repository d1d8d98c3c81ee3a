/* knee lab fanout in short rounds, the exact tier: N = 1, 5 and 20 parallel dependencies, 1 s
 * each. Whatever the machine did to the pages' timing, the table has its rows, the prediction
 * is 1 − 0.98^N to the last digit and every share lies in its own Wilson interval. The shares
 * against the prediction, from 8 s rounds, are test_lab_fanout_timing.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/lab.h"

#include <math.h>

static void test_fanout_rows(void **state)
{
    (void)state;
    struct lab_options o;
    lab_options_init(&o);
    o.duration_ns = NS_PER_S;
    o.warmup_ns = 200 * NS_PER_MS;
    o.seed = 5;
    const unsigned ns[] = {1, 5, 20};
    o.fanouts = ns;
    o.nfanouts = 3;
    struct lab_fanout_result r;
    assert_int_equal(lab_fanout(&o, &r), 0);
    assert_int_equal(r.nrows, 3);
    for (size_t i = 0; i < 3; i++) {
        const struct lab_fanout_row *w = &r.row[i];
        assert_int_equal(w->n, ns[i]);
        assert_true(fabs(w->predicted - (1 - pow(0.98, ns[i]))) < 1e-12);
        assert_true(w->pages > 0 && w->slow <= w->pages);
        assert_true(fabs(w->share - (double)w->slow / (double)w->pages) < 1e-12);
        assert_true(w->ci_lo <= w->share && w->share <= w->ci_hi);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fanout_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
