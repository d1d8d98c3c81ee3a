/* The timing tier of knee serve's pauses (test_serve.c, test_serve_stall.c): the report job's
 * pause holds the requests that arrive during it (their Server-Timing lock time, about the
 * pause), and the stall preset's pauses come at random moments (exponential idle times,
 * seeded: about the expected number of pauses, gaps that vary like an exponential's) where the
 * periodic job's barely vary. The pauses are timers: on a loaded machine they come late. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "serve/serve.h"
#include "unit/fixture_serve.h"
#include "unit/timing.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

static void test_pause_holds_requests(void **state)
{
    (void)state;
    struct serve_config cfg;
    serve_preset("report", &cfg);
    cfg.pause_every_ns = 400 * NS_PER_MS;
    cfg.pause_for_ns = 150 * NS_PER_MS;
    cfg.miss_rate = 0;
    struct serve_handle *h = start(&cfg);
    struct tconn *c = tconnect(serve_port(h));
    double max_lock = 0, max_latency = 0;
    uint64_t end = clock_now_ns() + 1000 * NS_PER_MS;
    int n = 0;
    while (clock_now_ns() < end) {
        struct resp r;
        uint64_t t0 = clock_now_ns();
        tsend(c, "GET / HTTP/1.1\r\n\r\n");
        assert_int_equal(tread(c, &r), 0);
        double lat = (double)(clock_now_ns() - t0) / 1e6;
        double lock = timing(&r, "lock");
        assert_true(lock >= 0);
        if (lock > max_lock)
            max_lock = lock;
        if (lat > max_latency)
            max_latency = lat;
        n++;
        sleep_ms(5); /* pacing, not synchronisation: requests spread over the second */
    }
    /* Two pauses of 150 ms happened in that second; some request sat in one. */
    assert_true(max_lock > 50 && max_lock <= 300); /* the pause is 150 ms; a late loop adds */
    assert_true(max_latency > 50);
    struct serve_counters fc;
    tclose(c);
    serve_stop(h, &fc);
    assert_true(fc.pauses >= 2);
    assert_int_equal(fc.ok, (uint64_t)n);
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
        cmocka_unit_test(test_pause_holds_requests),
        cmocka_unit_test(test_random_pauses),
    };
    return timing_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
