/* Unit tests for src/lab: the helpers exactly, the stats experiment's accounting in short rounds,
 * and knee lab's outputs and bad options. Exact tier: the shapes the articles report (the
 * stats and nagle experiments) are test_lab_timing.c's. */
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

/* The stats experiment in short rounds (1 s): three rounds, each with every accounting identity
 * holding, whatever the machine did to their timing (the shapes, from 9 s rounds, are
 * test_lab_timing.c's). */
static void test_stats_rounds_account(void **state)
{
    (void)state;
    struct lab_options o;
    quick_options(&o, 1 * NS_PER_S);
    o.warmup_ns = 300 * NS_PER_MS;
    struct lab_stats_result r;
    assert_int_equal(lab_stats(&o, &r), 0);
    assert_int_equal(r.nrounds, 3);
    for (size_t i = 0; i < 3; i++)
        assert_true(r.round[i].accounting_ok);
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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wilson),
        cmocka_unit_test(test_say_wraps),
        cmocka_unit_test(test_stats_rounds_account),
        cmocka_unit_test(test_out_dir_and_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
