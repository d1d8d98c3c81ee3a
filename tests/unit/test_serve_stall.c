/* knee serve's stall preset and serve_config.pause_random: the report job's pauses come at
 * random moments (exponential idle times, seeded) instead of every pause_every_ns. Watched
 * through the pauses counter: about the expected number of pauses, and gaps between them that
 * vary like an exponential's (coefficient of variation near 1) where the periodic job's barely
 * vary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "serve/serve.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

/* Start a server with pauses of 5 ms every `every_ms` (random or not), watch the pauses
 * counter for `watch_ms` and return the gaps between the pause starts seen (ms). */
static size_t watch(bool random, double every_ms, double watch_ms, double *gaps, size_t cap)
{
    struct serve_config c;
    serve_preset("quiet", &c);
    c.pause_every_ns = (uint64_t)(every_ms * 1e6);
    c.pause_for_ns = 5 * NS_PER_MS;
    c.pause_random = random;
    c.seed = 7;
    struct serve_handle *h;
    assert_int_equal(serve_start(&c, &h), 0);
    uint64_t t0 = clock_now_ns(), last_ns = 0, seen = 0;
    size_t n = 0;
    while (clock_now_ns() - t0 < (uint64_t)(watch_ms * 1e6)) {
        struct serve_counters k;
        serve_counters(h, &k);
        if (k.pauses > seen) {
            uint64_t now = clock_now_ns();
            if (seen && n < cap)
                gaps[n++] = (double)(now - last_ns) / 1e6;
            seen = k.pauses;
            last_ns = now;
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    serve_stop(h, NULL);
    return n;
}

static double cv(const double *v, size_t n)
{
    double m = 0, s = 0;
    for (size_t i = 0; i < n; i++)
        m += v[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m) / (double)(n - 1);
    return sqrt(s) / m;
}

static void test_random_pauses(void **state)
{
    (void)state;
    double gaps[256];
    /* mean gap 40 ms over 3 s: about 75 pauses */
    size_t n = watch(true, 40, 3000, gaps, 256);
    double c = cv(gaps, n);
    printf("# random: %zu gaps, cv %.2f\n", n, c);
    assert_true(n >= 30 && n <= 160);
    assert_true(c > 0.5); /* exponential idle times of mean 35 ms + 5 ms pauses: cv ≈ 0.9 */
    n = watch(false, 40, 1500, gaps, 256);
    c = cv(gaps, n);
    printf("# periodic: %zu gaps, cv %.2f\n", n, c);
    assert_true(n >= 20 && n <= 40);
    assert_true(c < 0.35); /* every 40 ms, give or take the poller's and the loop's lateness */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preset),
        cmocka_unit_test(test_random_pauses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
