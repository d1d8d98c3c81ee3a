/* knee serve's stall preset and serve_config.pause_random: the preset's settings and the checks
 * of a random pause's configuration. Exact tier: that the pauses come at random moments
 * (exponential idle times, seeded) instead of every pause_every_ns, watched through the pauses
 * counter, is test_serve_timing.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "serve/serve.h"

#include <string.h>

static void test_preset(void **state)
{
    (void)state;
    struct serve_config c;
    assert_int_equal(serve_preset("stall", &c), 0);
    assert_true(c.pause_random);
    assert_int_equal(c.pool, 4);
    assert_true(c.hit_ns == 2 * NS_PER_MS && c.miss_ns == 2 * NS_PER_MS);
    assert_true(c.pause_every_ns == 20 * NS_PER_S && c.pause_for_ns == 300 * NS_PER_MS);
    assert_non_null(strstr(serve_preset_summary("stall"), "random"));
    char err[256];
    assert_int_equal(serve_config_check(&c, err, sizeof err), 0);
    c.pause_every_ns = c.pause_for_ns = 0;
    assert_int_equal(serve_config_check(&c, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "random pauses need"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
