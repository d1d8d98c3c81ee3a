/* Unit tests for src/lab: the helpers exactly, and the stats and nagle experiments in a
 * reduced form (short rounds, fixed seeds) asserting the shapes the articles report, with
 * tolerances wide enough for a shared, loaded machine and an ASan build. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "lab/internal.h"
#include "lab/lab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void test_wilson(void **state)
{
    (void)state;
    double lo, hi;
    /* 143 of 400 (a fan-out row): Wilson 95% = [0.3121, 0.4056] to 4 digits. */
    lab_wilson95(143, 400, &lo, &hi);
    assert_true(fabs(lo - 0.31209) < 1e-4);
    assert_true(fabs(hi - 0.40562) < 1e-4);
    /* 0 of 100: the lower bound is 0, the upper 3.7%. */
    lab_wilson95(0, 100, &lo, &hi);
    assert_true(lo == 0);
    assert_true(fabs(hi - 0.036993) < 1e-5);
    lab_wilson95(100, 100, &lo, &hi);
    assert_true(hi == 1);
    lab_wilson95(0, 0, &lo, &hi);
    assert_true(isnan(lo) && isnan(hi));
}

static void test_say_wraps(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct lab_say s = {.n = 0};
    for (int i = 0; i < 40; i++)
        lab_say_add(&s, "word%02d λ·W ", i);
    lab_say_end(&s, f);
    fclose(f);
    assert_true(strncmp(buf, "- word00 λ·W", strlen("- word00 λ·W")) == 0);
    /* Every line fits LAB_SAY_WIDTH columns; continuation lines are indented by two. */
    int lines = 0;
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        size_t cols = 0;
        for (char *p = line; p < nl; p++)
            cols += ((unsigned char)*p & 0xC0) != 0x80;
        assert_true(cols <= LAB_SAY_WIDTH);
        if (lines++)
            assert_true(line[0] == ' ' && line[1] == ' ' && line[2] != ' ');
        line = nl + 1;
    }
    assert_true(lines > 1);
    free(buf);
}

static void quick_options(struct lab_options *o, uint64_t duration_ns)
{
    lab_options_init(o);
    o->duration_ns = duration_ns;
    o->warmup_ns = NS_PER_S / 2;
    o->seed = 7;
}

/* Does knee run call an open-loop round of r GENERATOR-LIMITED (its latencies then measure
 * knee's delay as much as the servers')? */
static bool stats_limited(const struct lab_stats_result *r)
{
    bool limited = false;
    for (size_t i = 0; i < r->nrounds; i++)
        if (r->round[i].open_loop && r->round[i].valid.generator_limited) {
            printf("# round %zu (%s): %s\n", i + 1, r->round[i].label, r->round[i].valid.warning);
            limited = true;
        }
    return limited;
}

/* Coordinated omission: the same server A, open loop p99 well above closed loop p99. Rounds of
 * 9 s take in two of A's 250 ms stalls.
 * The shapes below are the servers' and hold only for rounds knee kept to its plan: on a loaded
 * 2-core machine (two CPU hogs and other builds) round 2 once came out GENERATOR-LIMITED (lag
 * p99 140 ms, A's p99 339 ms against B's 220 ms, so "A's tail above twice B's" failed), and the
 * lab itself says it draws no conclusion from such a round. So knee run's verdict is checked
 * first: a generator-limited round repeats the experiment once, and a second one fails. */
static void test_stats_coordinated_omission(void **state)
{
    (void)state;
    struct lab_options o;
    quick_options(&o, 9 * NS_PER_S);
    struct lab_stats_result r;
    assert_int_equal(lab_stats(&o, &r), 0);
    if (stats_limited(&r)) {
        printf("# the machine kept knee from its plan: the experiment once more\n");
        assert_int_equal(lab_stats(&o, &r), 0);
        assert_false(stats_limited(&r));
    }
    assert_int_equal(r.nrounds, 3);
    for (size_t i = 0; i < 3; i++)
        assert_true(r.round[i].accounting_ok);
    const struct summary *closed = &r.round[0].latency[LAB_A], *open = &r.round[1].latency[LAB_A];
    printf("# closed p99 A %.1f ms (n %zu), open p99 A %.1f ms (n %zu)\n", closed->p99, closed->count, open->p99,
           open->count);
    assert_true(open->count >= 800);
    assert_true(closed->count > open->count); /* 8 clients on ~6 ms answers outpace 100/s */
    assert_true(open->p99 > 2 * closed->p99);
    /* The stall is in the open loop's tail: ~250 ms at most, and well above B's p99. */
    assert_true(open->p99 > 100);
    assert_true(open->p99 > 2 * r.round[1].latency[LAB_B].p99);
    /* Medians of A and B in the open loop are alike; the report job owns only A's tail. */
    assert_true(fabs(open->p50 - r.round[1].latency[LAB_B].p50) < 0.5 * fmax(open->p50, r.round[1].latency[LAB_B].p50));
    /* Percentiles do not average: the average of p99s is not the p99 of all (here A+B's p99 is
     * pulled towards B, which has three times the requests). */
    assert_true(r.avg_of_p99s_ms > r.real_p99_ms);
    /* Ten windows of 100 requests of A disagree wildly when a stall falls in some of them. */
    assert_int_equal(r.nwindows, 10);
    assert_true(r.window_p99_max_ms > 2 * r.window_p99_min_ms);
    /* B at 550/s waits longer than at 300/s. */
    assert_true(r.round[2].latency[LAB_B].p50 > r.round[1].latency[LAB_B].p50);
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

static void test_out_dir_and_bad_options(void **state)
{
    (void)state;
    char dir[] = "/tmp/knee-test-lab-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[sizeof dir + 16];
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    struct lab_options o;
    quick_options(&o, 1 * NS_PER_S);
    o.out_dir = sub;
    const double bad_rates[] = {10, -1};
    o.rates = bad_rates;
    o.nrates = 2;
    struct lab_knee_result *kr = malloc(sizeof *kr);
    assert_int_equal(lab_knee(&o, kr), KNEE_EINVAL);
    free(kr);
    assert_int_equal(lab_run_named("nosuch", &o), KNEE_ENOTFOUND);
    /* nagle writes one round: its CSV (header + one row per request) and JSON land in DIR. */
    struct lab_nagle_result r;
    assert_int_equal(lab_nagle(&o, &r), 0);
    char path[sizeof sub + 64];
    snprintf(path, sizeof path, "%s/nagle-closed.csv", sub);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    assert_non_null(fgets(line, sizeof line, f));
    assert_true(strncmp(line, "server,start_s,latency_ms,service_ms", 36) == 0);
    size_t rows = 0;
    while (fgets(line, sizeof line, f))
        rows++;
    fclose(f);
    assert_true(rows >= r.nagle.count + r.nodelay.count);
    snprintf(path, sizeof path, "%s/nagle-closed.json", sub);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(fgetc(f), '{');
    fclose(f);
    char cmd[sizeof dir + 32];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    /* The experiments' servers and load share this process: at nice -10 where that is allowed
     * (as tests/e2e/capacity_flat.sh runs its server), the other processes of a shared machine
     * stretch their timers less. Not allowed: the tests run as they are. */
    if (setpriority(PRIO_PROCESS, 0, -10) != 0)
        printf("# nice -10 not allowed: running at the default priority\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wilson),
        cmocka_unit_test(test_say_wraps),
        cmocka_unit_test(test_stats_coordinated_omission),
        cmocka_unit_test(test_nagle_median),
        cmocka_unit_test(test_out_dir_and_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
