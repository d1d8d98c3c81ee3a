/* The timing tier of test_rates.c: the engine in-process against a tiny server thread keeps its
 * plan (a run at 1,000/s sends as planned, within 0.5%, at the planned pace), and a generator
 * asked for far more than it can send still ends by --duration + --drain. Both depend on the
 * machine's speed; the exact checks of the same runs are test_rates.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "load/run.h"
#include "unit/fixture_server.h"
#include "unit/timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MS NS_PER_MS
#define S NS_PER_S

/* Sent on plan: 1,000/s for 1 s after a 0.3 s warm-up, with a binary log (as test_rates.c's run):
 * sent = planned within 0.5%, the achieved pace within 5% of 1,000/s, no short send. These hold
 * only when the generator kept its plan: a run knee itself calls generator-limited is the
 * machine's (timing_verdict). */
static void test_sent_on_plan(void **state)
{
    struct fixture_server *s = *state;
    char path[] = "/tmp/knee-test-rates-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct plan_target tc = {.name = "t", .url = s->url};
    struct run_config cfg = fixture_run_config(&tc, 2);
    cfg.plan.open_loop = true;
    cfg.plan.rate = 1000;
    cfg.plan.duration_ns = 1300 * MS;
    cfg.plan.warmup_ns = 300 * MS;
    cfg.out_path = path;
    for (int attempt = 1;; attempt++) {
        struct run_record res;
        run_once(&cfg, &res);
        assert_true(res.accounting_ok);
        char problem[256] = "";
        const struct run_rates *r = &res.all.rates;
        if (!(fabs(r->sent - r->planned) <= 0.005 * r->planned))
            snprintf(problem, sizeof problem, "sent %.1f/s, planned %.1f/s: not within 0.5%%", r->sent, r->planned);
        else if (!(fabs(r->achieved_send - 1000) <= 0.05 * 1000))
            snprintf(problem, sizeof problem, "achieved %.1f/s, not within 5%% of 1,000/s", r->achieved_send);
        else if (res.generator_limited && res.generator.short_send)
            snprintf(problem, sizeof problem, "a short send");
        char why[sizeof res.generator.why];
        snprintf(why, sizeof why, "%s", res.generator_limited ? res.generator.why : "");
        record_release(&res);
        if (timing_verdict(attempt, problem, why))
            break;
    }
    unlink(path);
}

/* One load thread asked for 1,000,000/s: the run ends by 0.5 s + 0.3 s of drain, plus the set-up
 * and the accounting of ~500k unsent requests (a few tens of ns each, more on a loaded
 * machine): far from the 5+ s of sending them late. The run is generator-limited by design, so
 * knee's verdict says nothing about the machine here: the bound stands as it is. */
static void test_far_behind_ends_on_time(void **state)
{
    struct fixture_server *s = *state;
    struct plan_target tc = {.name = "t", .url = s->url};
    struct run_config cfg = fixture_run_config(&tc, 1);
    cfg.plan.open_loop = true;
    cfg.plan.rate = PLAN_MAX_RATE_PER_THREAD;
    cfg.plan.duration_ns = 500 * MS;
    cfg.timeout_ns = 2 * S;
    cfg.drain_ns = 300 * MS;
    cfg.plan.connections = 64;
    struct run_record res;
    uint64_t t0 = clock_now_ns();
    run_once(&cfg, &res);
    double wall_s = (double)(clock_now_ns() - t0) / 1e9;
    assert_true(res.accounting_ok);
    if (wall_s > 0.8 + 2.5)
        fail_msg("the run took %.2f s (elapsed %.2f s)", wall_s, res.elapsed_s);
    assert_true(res.elapsed_s < 0.8 + 2.5);
    record_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        fixture_server_test(test_sent_on_plan),
        fixture_server_test(test_far_behind_ends_on_time),
    };
    return timing_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
