/* knee lab stream in short rounds, the exact tier: four rates, 1 s each after a 0.2 s warm-up.
 * Whatever the machine did to the timing, every row has its streams (the rate times the window),
 * every stream its 20 events, and the gaps' median lies between their minimum and their p99. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/lab.h"

#include <math.h>

static void test_stream_rows(void **state)
{
    (void)state;
    struct lab_options o;
    lab_options_init(&o);
    o.duration_ns = NS_PER_S;
    o.warmup_ns = 200 * NS_PER_MS;
    o.seed = 5;
    struct lab_stream_result r;
    assert_int_equal(lab_stream(&o, &r), 0);
    assert_int_equal(r.nrows, LAB_STREAM_RATES);
    assert_true(r.gap_ms == 10 && r.stall_ms == 500 && fabs(r.stall_p - 0.01) < 1e-12);
    for (size_t i = 0; i < r.nrows; i++) {
        const struct lab_stream_row *w = &r.row[i];
        assert_int_equal(w->responses, (uint64_t)llround(w->rate)); /* rate x 1 s, constant arrivals */
        assert_int_equal(w->events, 20 * w->responses);
        assert_true(w->first_p50_ms >= 50 && w->first_p99_ms >= w->first_p50_ms);
        assert_true(w->gap_p50_ms <= w->gap_p99_ms && w->gap_p99_ms <= w->gap_max_ms);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
