/* Unit tests for src/runcheck: the self-checks of a finished run on synthetic results and
 * request logs — Poisson sends pass and a fixed schedule fails the Anderson–Darling check,
 * a rising per-second p99 is a trend and a flat one is not, the p99's interval exact from the
 * log and from the histogram, and the warnings they add to the run; a Poisson run whose check
 * cannot be made (no binary log, a CSV, too few sends, a log that cannot be read) says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/rng.h"
#include "reqlog/reqlog.h"
#include "runcheck/runcheck.h"
#include "stats/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The plan a record echoes (runcheck reads the record alone). */
static void config(struct record_config *cfg, bool poisson)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->open_loop = true;
    cfg->rate = 1000;
    cfg->arrivals = poisson ? RUN_ARRIVALS_POISSON : RUN_ARRIVALS_CONSTANT;
    cfg->duration_ns = 30ULL * 1000000000ULL;
    cfg->warmup_ns = 1000000000ULL;
}

/* A record of cfg's plan: 30 ticks (the first in the warm-up); p99 from 10 ms rising by `slope`
 * ms/s, with noise. */
static void result(struct run_record *res, const struct record_config *cfg, double slope, struct rng *g)
{
    memset(res, 0, sizeof *res);
    res->config = *cfg; /* no strings: nothing shared */
    assert_int_equal(hdr_init(&res->all.latency_all, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    res->nticks = 31;
    res->ticks = calloc(res->nticks, sizeof *res->ticks);
    for (size_t i = 0; i < res->nticks; i++) {
        res->ticks[i].start_s = (double)i;
        res->ticks[i].length_s = i == 30 ? 0.2 : 1; /* the last, partial second is left out */
        res->ticks[i].p50_ms = 2 + 0.1 * rng_normal(g);
        res->ticks[i].p99_ms = 10 + slope * (double)i + 0.5 * rng_normal(g);
    }
}

static void release(struct run_record *res)
{
    hdr_release(&res->all.latency_all);
    record_release(res);
}

/* A log of n measured requests (+ 100 warm-up) sent at the given gaps (ns), latencies
 * lognormal around 2 ms; the same latencies go into the result's histogram. */
static void write_log(const char *path, struct run_record *res, struct rng *g, size_t n, bool poisson)
{
    const char *names[] = {"api"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path, names, 1, 0), 0);
    uint64_t t = 0;
    for (size_t i = 0; i < n + 100; i++) {
        double gap = poisson ? rng_exp(g, 1e6) : 1e6 + 2000 * rng_uniform(g);
        t += (uint64_t)gap + 1;
        struct reqlog_record r = {0};
        r.planned_ns = t;
        r.sent_ns = t + 1000;
        r.done_ns = t + (uint64_t)(rng_lognormal(g, log(2e6), 0.3));
        r.outcome = OUTCOME_OK;
        r.status = 200;
        r.flags = i < 100 ? REQLOG_FLAG_WARMUP : 0;
        assert_int_equal(reqlog_write(w, &r), 0);
        if (i >= 100)
            hdr_record(&res->all.latency_all, (int64_t)(r.done_ns - r.planned_ns), 1);
    }
    assert_int_equal(reqlog_writer_close(w), 0);
}

static bool has_warning(const struct run_record *res, const char *needle)
{
    for (size_t i = 0; i < res->warnings.n; i++)
        if (strstr(res->warnings.items[i], needle))
            return true;
    return false;
}

static void test_poisson_and_trend(void **state)
{
    (void)state;
    char path[] = "/tmp/knee_test_runcheck_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct rng g;
    rng_seed(&g, 3);
    struct record_config cfg;
    config(&cfg, true);
    struct run_record res;
    result(&res, &cfg, 0, &g);
    write_log(path, &res, &g, 20000, true);
    struct runcheck c;
    char err[256];
    assert_int_equal(runcheck_run(&res, path, &c, err, sizeof err), 0);
    assert_true(c.poisson_tested);
    assert_int_equal(c.gaps_total, 19999);
    assert_int_equal(c.ad.n, RUNCHECK_AD_MAX_GAPS);
    assert_false(c.poisson_rejected);
    assert_true(c.p50.tested && c.p99.tested);
    assert_int_equal(c.p99.n, 29); /* 30 whole seconds, the first in the warm-up */
    assert_false(c.p50.trend || c.p99.trend);
    assert_true(c.p99_exact && c.p99_ci_defined);
    assert_true(c.p99_lo_ms <= c.p99_ms && c.p99_ms <= c.p99_hi_ms);
    /* the histogram's interval agrees with the exact one to its 3 significant digits */
    double p, lo, hi;
    assert_true(runcheck_p99_ci(&res.all.latency_all, &p, &lo, &hi));
    assert_true(fabs(p - c.p99_ms) <= 0.002 * p && fabs(lo - c.p99_lo_ms) <= 0.002 * lo &&
                fabs(hi - c.p99_hi_ms) <= 0.002 * hi);
    assert_false(c.p99_wide);
    runcheck_annotate(&c, &res);
    assert_false(has_warning(&res, "self-check:"));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    runcheck_print(f, &c, "  ");
    fclose(f);
    assert_non_null(strstr(text, "poisson: yes"));
    assert_non_null(strstr(text, "stationary p99: yes"));
    free(text);
    release(&res);

    /* a fixed schedule with jitter is not Poisson; a rising p99 is a trend */
    result(&res, &cfg, 0.5, &g);
    write_log(path, &res, &g, 20000, false);
    assert_int_equal(runcheck_run(&res, path, &c, err, sizeof err), 0);
    assert_true(c.poisson_rejected);
    assert_true(c.p99.trend);
    assert_false(c.p50.trend);
    assert_true(fabs(c.p99.mk.sen_slope - 0.5) < 0.1);
    runcheck_annotate(&c, &res);
    assert_true(has_warning(&res, "self-check: the actual sends are not a Poisson process"));
    assert_true(has_warning(&res, "self-check: not stationary: the per-second p99 rises"));
    assert_true(res.warnings.attention);
    release(&res);

    /* constant arrivals: no Poisson check; no log: the p99 from the histogram */
    config(&cfg, false);
    result(&res, &cfg, 0, &g);
    write_log(path, &res, &g, 200, true);
    assert_int_equal(runcheck_run(&res, NULL, &c, err, sizeof err), 0);
    assert_false(c.poisson_tested);
    assert_string_equal(c.poisson_note, "not Poisson arrivals");
    assert_false(c.p99_exact);
    assert_false(c.p99_ci_defined); /* 200 samples: no 95% interval for p99 (needs 299) */
    runcheck_annotate(&c, &res);
    assert_true(has_warning(&res, "self-check (precision): p99"));
    assert_false(has_warning(&res, "Poisson")); /* no check owed: nothing to say about it */
    assert_false(res.warnings.attention);
    release(&res);
    unlink(path);
}

/* The warning of a Poisson run whose check was owed and not made (its reason), or NULL. */
static const char *poisson_skipped(const struct record_config *cfg, const char *log, struct rng *g)
{
    static char text[512];
    struct run_record res;
    result(&res, cfg, 0, g);
    struct runcheck c;
    char err[256];
    runcheck_run(&res, log, &c, err, sizeof err);
    assert_true(c.poisson_applies);
    assert_false(c.poisson_tested);
    runcheck_annotate(&c, &res);
    const char *found = NULL;
    for (size_t i = 0; i < res.warnings.n; i++)
        if (strncmp(res.warnings.items[i], "self-check: the Poisson arrivals were not checked: ", 51) == 0) {
            assert_null(found); /* one note */
            snprintf(text, sizeof text, "%s", res.warnings.items[i] + 51);
            found = text;
        }
    assert_false(res.warnings.attention); /* a check not made is a note, not a problem of the run */
    release(&res);
    return found;
}

static void test_poisson_not_checked(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 5);
    struct record_config cfg;
    config(&cfg, true);
    /* no log: the result has no send times */
    const char *why = poisson_skipped(&cfg, NULL, &g);
    assert_non_null(why);
    assert_string_equal(why, "it needs the actual send times, from the binary request log (--out FILE.bin)");
    /* a CSV log is not read back */
    why = poisson_skipped(&cfg, "/nonexistent/run.csv", &g);
    assert_non_null(why);
    assert_non_null(strstr(why, "a binary request log (--out FILE.bin), not a CSV"));
    /* a binary log that cannot be read: the reason names it */
    why = poisson_skipped(&cfg, "/nonexistent/run.bin", &g);
    assert_non_null(why);
    assert_non_null(strstr(why, "the request log could not be read back (/nonexistent/run.bin"));
    /* too few measured sends */
    char path[] = "/tmp/knee_test_runcheck_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct run_record scratch;
    result(&scratch, &cfg, 0, &g);
    write_log(path, &scratch, &g, 3, true);
    release(&scratch);
    why = poisson_skipped(&cfg, path, &g);
    assert_non_null(why);
    assert_string_equal(why, "3 measured sends, too few to test (needs 6)");
    unlink(path);
    /* --ramp: no check is owed, and none is mentioned */
    cfg.ramp = true;
    struct run_record res;
    result(&res, &cfg, 0, &g);
    struct runcheck c;
    char err[256];
    runcheck_run(&res, NULL, &c, err, sizeof err);
    assert_false(c.poisson_applies);
    runcheck_annotate(&c, &res);
    assert_false(has_warning(&res, "Poisson"));
    release(&res);
    /* a shard's run (its record says so) sends one arrival in N of the plan's: no check owed; a
     * merge of the shards is the whole plan again */
    cfg.ramp = false;
    result(&res, &cfg, 0, &g);
    res.shard.count = 4;
    res.shard.index = 1;
    runcheck_run(&res, NULL, &c, err, sizeof err);
    assert_false(c.poisson_applies);
    assert_string_equal(
        c.poisson_note,
        "a shard sends one arrival in 4 of the plan's (gaps not exponential); knee merge -o checks them all");
    res.shard.index = RUN_SHARD_MERGED;
    runcheck_run(&res, NULL, &c, err, sizeof err);
    assert_true(c.poisson_applies);
    release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poisson_and_trend),
        cmocka_unit_test(test_poisson_not_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
