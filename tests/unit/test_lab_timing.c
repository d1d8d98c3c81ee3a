/* The timing tier of test_lab.c: the stats and nagle experiments in a reduced form (short
 * rounds, fixed seeds) asserting the shapes the articles report, with tolerances wide enough
 * for a shared machine. The shapes are the servers' timers and the machine's; the exact checks
 * (the helpers, the rounds' accounting, the outputs) are test_lab.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/internal.h"
#include "lab/lab.h"
#include "unit/timing.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

static void quick_options(struct lab_options *o, uint64_t duration_ns)
{
    lab_options_init(o);
    o->duration_ns = duration_ns;
    o->warmup_ns = NS_PER_S / 2;
    o->seed = 7;
}

/* Knee run's own reasons for every open-loop round of r it called GENERATOR-LIMITED (its
 * latencies then measure knee's delay as much as the servers'), in why; "" when none. */
static void stats_limited(const struct lab_stats_result *r, char *why, size_t len)
{
    why[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < r->nrounds; i++)
        if (r->round[i].open_loop && r->round[i].valid.generator_limited && used < len) {
            int n = snprintf(why + used, len - used, "%sround %zu (%s): %s", used ? "; " : "", i + 1, r->round[i].label,
                             r->round[i].valid.warning);
            used += n > 0 ? (size_t)n : 0;
        }
}

/* Coordinated omission: the same server A, open loop p99 well above closed loop p99. Rounds of
 * 9 s take in two of A's 250 ms stalls.
 * The shapes below are the servers' and hold only for rounds knee kept to its plan: on a loaded
 * 2-core machine (two CPU hogs and other builds) round 2 once came out GENERATOR-LIMITED (lag
 * p99 140 ms, A's p99 339 ms against B's 220 ms, so "A's tail above twice B's" failed), and the
 * lab itself says it draws no conclusion from such a round. So a failed shape on a round knee
 * run called so is the machine's (timing_verdict). */
static void test_stats_coordinated_omission(void **state)
{
    (void)state;
    struct lab_options o;
    quick_options(&o, 9 * NS_PER_S);
    static struct lab_stats_result r;
    for (int attempt = 1;; attempt++) {
        assert_int_equal(lab_stats(&o, &r), 0);
        assert_int_equal(r.nrounds, 3);
        for (size_t i = 0; i < 3; i++)
            assert_true(r.round[i].accounting_ok);
        const struct summary *closed = &r.round[0].latency[LAB_A], *open = &r.round[1].latency[LAB_A];
        const struct summary *open_b = &r.round[1].latency[LAB_B];
        printf("# closed p99 A %.1f ms (n %zu), open p99 A %.1f ms (n %zu)\n", closed->p99, closed->count, open->p99,
               open->count);
        const char *problem = "";
        if (!(open->count >= 800))
            problem = "fewer than 800 of A's requests in the open loop";
        else if (!(closed->count > open->count)) /* 8 clients on ~6 ms answers outpace 100/s */
            problem = "the closed loop did not outpace the open loop";
        else if (!(open->p99 > 2 * closed->p99))
            problem = "A's open-loop p99 is not above twice its closed-loop p99";
        /* The stall is in the open loop's tail: ~250 ms at most, and well above B's p99. */
        else if (!(open->p99 > 100))
            problem = "A's open-loop p99 is not above 100 ms";
        else if (!(open->p99 > 2 * open_b->p99))
            problem = "A's open-loop p99 is not above twice B's";
        /* Medians of A and B in the open loop are alike; the report job owns only A's tail. */
        else if (!(fabs(open->p50 - open_b->p50) < 0.5 * fmax(open->p50, open_b->p50)))
            problem = "A's and B's open-loop medians differ by half or more";
        /* Percentiles do not average: the average of p99s is not the p99 of all (here A+B's p99
         * is pulled towards B, which has three times the requests). */
        else if (!(r.avg_of_p99s_ms > r.real_p99_ms))
            problem = "the average of the p99s is not above the p99 of all";
        /* Ten windows of 100 requests of A disagree wildly when a stall falls in some of them. */
        else if (r.nwindows != 10)
            problem = "not ten windows of A's requests";
        else if (!(r.window_p99_max_ms > 2 * r.window_p99_min_ms))
            problem = "the windows' p99s do not differ by twice";
        /* B at 550/s waits longer than at 300/s. */
        else if (!(r.round[2].latency[LAB_B].p50 > open_b->p50))
            problem = "B's p50 at 550/s is not above its p50 at 300/s";
        char why[1024];
        stats_limited(&r, why, sizeof why);
        if (timing_verdict(attempt, problem, why))
            break;
    }
}

/* Nagle plus delayed ACK: the median jumps to tens of ms with two writes and Nagle on. */
static void test_nagle_median(void **state)
{
    (void)state;
    struct lab_options o;
    quick_options(&o, 3 * NS_PER_S);
    struct lab_nagle_result r;
    assert_int_equal(lab_nagle(&o, &r), 0);
    printf("# median nagle %.1f ms, nodelay %.1f ms\n", r.nagle.p50, r.nodelay.p50);
    assert_true(r.nagle.count > 0 && r.nodelay.count > 0);
    assert_true(r.nagle.p50 > 3 * r.nodelay.p50);
    assert_true(r.nagle.p50 > 20);
    assert_true(r.rate_nodelay > 2 * r.rate_nagle);
}

int main(void)
{
    /* The experiments' servers and load share this process: at nice -10 where that is allowed
     * (as tests/e2e/capacity_flat.sh runs its server), the other processes of a shared machine
     * stretch their timers less. Not allowed: the tests run as they are. */
    if (setpriority(PRIO_PROCESS, 0, -10) != 0)
        printf("# nice -10 not allowed: running at the default priority\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_coordinated_omission),
        cmocka_unit_test(test_nagle_median),
    };
    return timing_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
