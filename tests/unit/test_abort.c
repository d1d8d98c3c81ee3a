/* Unit tests for src/abort: --abort-if rules parsed (every statistic, window, comparison and
 * unit; every malformed rule refused with what was expected), and the trailing-window evaluator
 * fed synthetic seconds: when a window is judged (full, armed, after the warm-up, inside its
 * stage), what it adds up (a percentile of the merged seconds, never an average), which rule
 * fires first, and that nothing fires twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "abort/abort.h"
#include "core/err.h"
#include "record/record.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ parsing */

static struct abort_rule parsed(const char *text)
{
    struct abort_rule r;
    char err[256] = "";
    int rc = abort_rule_parse(text, &r, err, sizeof err);
    if (rc)
        fail_msg("'%s' refused: %s", text, err);
    assert_string_equal(r.text, text);
    return r;
}

static void refused(const char *text, const char *want)
{
    struct abort_rule r;
    char err[384] = "";
    assert_int_equal(abort_rule_parse(text, &r, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, want);
}

static void test_parse(void **state)
{
    (void)state;
    struct abort_rule r = parsed("p99[30s]>500ms");
    assert_true(r.kind == ABORT_LATENCY && r.stat == ABORT_PCT && r.pct == 99 && r.window_s == 30);
    assert_true(r.op == THR_GT && r.value == 500 && r.stage == 0);
    r = parsed(" p99.9 [ 1m ] >= 1s ");
    assert_true(r.pct == 99.9 && r.window_s == 60 && r.op == THR_GE && r.value == 1000);
    r = parsed("p50[10]>250"); /* bare numbers: the window in seconds, the value in ms */
    assert_true(r.pct == 50 && r.window_s == 10 && r.value == 250);
    r = parsed("mean[5s]!=2ms");
    assert_true(r.stat == ABORT_MEAN && r.op == THR_NE && r.value == 2);
    r = parsed("max[5s]<=100us");
    assert_true(r.stat == ABORT_MAX && r.op == THR_LE && r.value == 0.1);
    r = parsed("error_rate[10s]>5%");
    assert_true(r.kind == ABORT_ERROR_RATE && r.value == 0.05);
    r = parsed("dropped_rate[10s]==0.5");
    assert_true(r.kind == ABORT_DROPPED_RATE && r.op == THR_EQ && r.value == 0.5);
    r = parsed("goodput_per_s[20s]<10k");
    assert_true(r.kind == ABORT_PER_S && r.stat == ABORT_GOODPUT && r.op == THR_LT && r.value == 10000);
    r = parsed("completed_per_s[20s]<=0");
    assert_true(r.stat == ABORT_COMPLETED && r.value == 0);
    r = parsed("sent_per_s[1s]<100");
    assert_true(r.stat == ABORT_SENT && r.window_s == 1);
    r = parsed("stage2.p99[10s]>1s");
    assert_true(r.stage == 2 && r.pct == 99 && r.window_s == 10 && r.value == 1000);
    r = parsed("generator_limited");
    assert_true(r.kind == ABORT_GENERATOR_LIMITED && r.window_s == 0);
    assert_string_equal(abort_rule_unit(&r), "");
    assert_string_equal(abort_rule_unit(&(struct abort_rule){.kind = ABORT_LATENCY}), "ms");
    assert_string_equal(abort_rule_unit(&(struct abort_rule){.kind = ABORT_PER_S}), "/s");
}

static void test_parse_refused(void **state)
{
    (void)state;
    refused("", "empty (expected e.g. p99[30s]>500ms)");
    refused("p99>500ms", "'p99': expected a trailing window in brackets, e.g. p99[30s]");
    refused("p99", "'p99': expected a trailing window in brackets, e.g. p99[30s]");
    refused("p99[30s", "'[30s': expected ']' after the window");
    refused("p99[]>1s", "'[]': expected a window such as [30s]");
    refused("p99[500ms]>1s", "'[500ms]': the window is whole seconds from 1s to 3600s, e.g. [30s]");
    refused("p99[1.5s]>1s", "'[1.5s]': the window is whole seconds from 1s to 3600s, e.g. [30s]");
    refused("p99[2h]>1s", "'[2h]': the window is whole seconds from 1s to 3600s, e.g. [30s]");
    refused("p99[0s]>1s", "'[0s]': the window is whole seconds from 1s to 3600s, e.g. [30s]");
    refused("p99[30s]", "expected a comparison (<, <=, >, >=, == or !=) after the window");
    refused("p99[30s]~1s", "expected a comparison (<, <=, >, >=, == or !=) after the window at '~1s'");
    refused("p99[30s]>", "expected a value after '>'");
    refused("p99[30s]>fast", "'fast': expected a duration such as 500ms or 1s");
    refused("error_rate[10s]>lots", "'lots': expected a share such as 5% or 0.05");
    refused("error_rate[10s]>150%", "'150%': expected a share such as 5% or 0.05");
    refused("goodput_per_s[10s]<-1", "'-1': expected a rate per second such as 100 or 10k");
    refused("p0[10s]>1s", "'p0': bad percentile (use p50, p99, p99.9)");
    refused("p101[10s]>1s", "'p101': bad percentile (use p50, p99, p99.9)");
    refused("latency[10s]>1s",
            "'latency': unknown statistic (expected p50, p99, p99.9, mean, max, error_rate, dropped_rate, "
            "completed_per_s, goodput_per_s, sent_per_s, first_event.p99, event_gap.p99 or "
            "generator_limited)");
    refused("status.5xx[10s]>0",
            "'status.5xx': status codes are not counted per second; use error_rate (a 5xx is an http_error)");
    refused("generator_limited[10s]", "generator_limited takes no window and no comparison");
    refused("generator_limited==1", "generator_limited takes no window and no comparison");
    refused("stage1.generator_limited", "generator_limited is a verdict on the whole run: no stageN.");
    refused("stage0.p99[10s]>1s", "'stage0': stages are numbered from 1");
    refused("stage2p99[10s]>1s", "'stage2p': expected stageN. before the statistic (stage2.p99[10s]>1s)");
    char longer[200];
    memset(longer, 'p', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    refused(longer, "longer than 159 characters");
}

/* ------------------------------------------------------------------ the evaluator */

/* One second [start_s, start_s + len_s) with n completions of latency lat_ms (errors of them
 * failed), fed to ev; returns what abort_eval_second returns. */
static int feed(struct abort_eval *ev, double start_s, double len_s, uint64_t n, double lat_ms, uint64_t errors,
                double *measured)
{
    struct hdr h;
    assert_int_equal(hdr_init(&h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    if (n)
        hdr_record(&h, (int64_t)(lat_ms * 1e6), (int64_t)n);
    abort_eval_add_latency(ev, &h);
    hdr_release(&h);
    struct abort_second s = {.start_s = start_s,
                             .length_s = len_s,
                             .planned = n,
                             .sent = n,
                             .completed = n,
                             .ok = n - errors,
                             .errors = errors};
    return abort_eval_second(ev, &s, measured);
}

/* A window is judged once full: p99[3s] over 3 seconds; one slow second among three is 1/3 of
 * the window, above 1%, so it fires at the end of that second; at_s is that second's end. */
static void test_eval_window_full(void **state)
{
    (void)state;
    struct abort_rule r = parsed("p99[3s]>200ms");
    struct abort_eval *ev = abort_eval_new(&r, 1, 0, 0);
    double m = NAN;
    assert_int_equal(feed(ev, 0, 1, 100, 300, 0, &m), -1); /* slow, but only 1 s of a 3 s window */
    assert_int_equal(feed(ev, 1, 1, 100, 300, 0, &m), -1);
    assert_int_equal(feed(ev, 2, 1, 100, 300, 0, &m), 0); /* full: fires */
    assert_true(fabs(m - 300) < 0.5);
    size_t rule = 99;
    double at_s = 0;
    assert_true(abort_eval_fired(ev, &rule, &at_s));
    assert_true(rule == 0 && at_s == 3);
    assert_int_equal(feed(ev, 3, 1, 100, 300, 0, &m), -1); /* never twice */
    abort_eval_free(ev);

    /* the window slides: fast seconds, then a slow one: 100 of the window's 300 samples */
    ev = abort_eval_new(&r, 1, 0, 0);
    for (int s = 0; s < 5; s++)
        assert_int_equal(feed(ev, s, 1, 100, 10, 0, NULL), -1);
    assert_false(abort_eval_fired(ev, NULL, NULL));
    assert_int_equal(feed(ev, 5, 1, 100, 300, 0, &m), 0);
    abort_eval_fired(ev, NULL, &at_s);
    assert_true(at_s == 6);
    abort_eval_free(ev);
}

/* The percentile is of the window's merged histogram: 1 slow request among 300 in a 3 s
 * window is below p99's rank (ceil(0.99 * 300) = 297 fast ones), 4 are above it. */
static void test_eval_merged_percentile(void **state)
{
    (void)state;
    struct abort_rule r = parsed("p99[3s]>200ms");
    struct abort_eval *ev = abort_eval_new(&r, 1, 0, 0);
    assert_int_equal(feed(ev, 0, 1, 100, 10, 0, NULL), -1);
    assert_int_equal(feed(ev, 1, 1, 100, 10, 0, NULL), -1);
    /* a second of 99 fast and 1 slow: its own p99 is fast, the window's too (3 of 300 slow needed) */
    struct hdr h;
    hdr_init(&h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_record(&h, 10 * 1000000, 96);
    hdr_record(&h, 300 * 1000000, 4); /* 4 of 300 in the window: p99 is slow */
    abort_eval_add_latency(ev, &h);
    struct abort_second s = {.start_s = 2, .length_s = 1, .completed = 100, .ok = 100};
    double m = NAN;
    assert_int_equal(abort_eval_second(ev, &s, &m), 0);
    assert_true(fabs(m - 300) < 0.5);
    abort_eval_free(ev);

    ev = abort_eval_new(&r, 1, 0, 0);
    feed(ev, 0, 1, 100, 10, 0, NULL);
    feed(ev, 1, 1, 100, 10, 0, NULL);
    hdr_reset(&h);
    hdr_record(&h, 10 * 1000000, 99);
    hdr_record(&h, 300 * 1000000, 1); /* 1 of 300: p99 is fast */
    abort_eval_add_latency(ev, &h);
    assert_int_equal(abort_eval_second(ev, &s, &m), -1);
    hdr_release(&h);
    abort_eval_free(ev);
}

/* --abort-after and the warm-up: nothing is judged before them, and seconds of the warm-up are
 * not in any window (the warm-up's edge cuts a second in two, as the engine's timeline does). */
static void test_eval_armed_and_warmup(void **state)
{
    (void)state;
    struct abort_rule r = parsed("p99[2s]>200ms");
    struct abort_eval *ev = abort_eval_new(&r, 1, 5, 0);
    for (int s = 0; s < 4; s++)
        assert_int_equal(feed(ev, s, 1, 10, 300, 0, NULL), -1); /* slow from the start, not armed */
    assert_int_equal(feed(ev, 4, 1, 10, 300, 0, NULL), 0);      /* armed at 5 s */
    abort_eval_free(ev);

    ev = abort_eval_new(&r, 1, 0, 1.5); /* --warmup 1.5s: slow in the warm-up only */
    assert_int_equal(feed(ev, 0, 1, 10, 300, 0, NULL), -1);
    assert_int_equal(feed(ev, 1, 0.5, 10, 300, 0, NULL), -1);
    assert_int_equal(feed(ev, 1.5, 0.5, 10, 10, 0, NULL), -1);
    assert_int_equal(feed(ev, 2, 1, 10, 10, 0, NULL), -1);
    assert_int_equal(feed(ev, 3, 1, 10, 10, 0, NULL), -1); /* full after 3.5 s; fast */
    assert_false(abort_eval_fired(ev, NULL, NULL));
    assert_int_equal(feed(ev, 4, 1, 10, 300, 0, NULL), 0);
    abort_eval_free(ev);

    /* the plan ends at 3 s: the seconds of the drain are not judged */
    ev = abort_eval_new(&r, 1, 0, 0);
    abort_eval_set_plan_end(ev, 3);
    assert_int_equal(feed(ev, 0, 1, 10, 10, 0, NULL), -1);
    assert_int_equal(feed(ev, 1, 1, 10, 10, 0, NULL), -1);
    assert_int_equal(feed(ev, 2, 1, 10, 300, 0, NULL), -1); /* ends at the plan's end: nothing to stop */
    assert_int_equal(feed(ev, 3, 1, 10, 300, 0, NULL), -1);
    assert_int_equal(abort_eval_limited(ev, 3.5, true), -1);
    assert_false(abort_eval_fired(ev, NULL, NULL));
    abort_eval_free(ev);
}

/* Counts: error_rate over the requests that ended in the window, dropped_rate over those planned,
 * per-second rates over the window's length; an empty window never fires. */
static void test_eval_counts(void **state)
{
    (void)state;
    struct abort_rule rules[] = {parsed("error_rate[2s]>=50%"), parsed("goodput_per_s[2s]<20")};
    struct abort_eval *ev = abort_eval_new(rules, 2, 0, 0);
    double m = NAN;
    assert_int_equal(feed(ev, 0, 1, 0, 0, 0, &m), -1); /* not full */
    assert_int_equal(feed(ev, 1, 1, 0, 0, 0, &m), 1);  /* nothing ended: no error_rate; goodput 0/s < 20 */
    assert_true(m == 0);
    abort_eval_free(ev);

    ev = abort_eval_new(rules, 2, 0, 0);
    assert_int_equal(feed(ev, 0, 1, 100, 1, 40, &m), -1);
    assert_int_equal(feed(ev, 1, 1, 100, 1, 50, &m), -1); /* 90/200 = 45% */
    assert_int_equal(feed(ev, 2, 1, 100, 1, 60, &m), 0);  /* 110/200 = 55% */
    assert_true(fabs(m - 0.55) < 1e-12);
    abort_eval_free(ev);

    ev = abort_eval_new(&rules[1], 1, 0, 0);
    assert_int_equal(feed(ev, 0, 1, 30, 1, 0, &m), -1);
    assert_int_equal(feed(ev, 1, 1, 30, 1, 0, &m), -1); /* 30/s */
    assert_int_equal(feed(ev, 2, 1, 30, 1, 25, &m), 0); /* 5 ok: (30 + 5) / 2 s */
    assert_true(fabs(m - 17.5) < 1e-12);
    abort_eval_free(ev);

    struct abort_rule d = parsed("dropped_rate[1s]>10%");
    ev = abort_eval_new(&d, 1, 0, 0);
    struct abort_second s = {.start_s = 0, .length_s = 1, .planned = 100, .sent = 95, .dropped = 5};
    assert_int_equal(abort_eval_second(ev, &s, NULL), -1);
    s = (struct abort_second){.start_s = 1, .length_s = 1, .planned = 100, .sent = 80, .dropped = 20};
    assert_int_equal(abort_eval_second(ev, &s, &m), 0);
    assert_true(fabs(m - 0.2) < 1e-12);
    abort_eval_free(ev);
}

/* Stage rules see only their stage's seconds while it runs; a stage shorter than the window is
 * judged once it is whole; a stage that is not there never fires. */
static void test_eval_stages(void **state)
{
    (void)state;
    struct abort_rule r = parsed("stage2.p99[3s]>200ms");
    double edges[] = {0, 2, 4, 10};
    struct abort_eval *ev = abort_eval_new(&r, 1, 0, 0);
    for (int s = 0; s < 6; s++) /* no stages given: never */
        assert_int_equal(feed(ev, s, 1, 10, 300, 0, NULL), -1);
    abort_eval_free(ev);

    ev = abort_eval_new(&r, 1, 0, 0);
    abort_eval_set_stages(ev, edges, 3);
    assert_int_equal(feed(ev, 0, 1, 10, 300, 0, NULL), -1); /* stage 1 slow: not stage 2's */
    assert_int_equal(feed(ev, 1, 1, 10, 300, 0, NULL), -1);
    assert_int_equal(feed(ev, 2, 1, 10, 10, 0, NULL), -1);  /* stage 2 (2 s long) half done */
    assert_int_equal(feed(ev, 3, 1, 10, 10, 0, NULL), -1);  /* whole and fast */
    assert_int_equal(feed(ev, 4, 1, 10, 300, 0, NULL), -1); /* stage 3 slow: stage 2 is over */
    assert_false(abort_eval_fired(ev, NULL, NULL));
    abort_eval_free(ev);

    ev = abort_eval_new(&r, 1, 0, 0);
    abort_eval_set_stages(ev, edges, 3);
    feed(ev, 0, 1, 10, 10, 0, NULL);
    feed(ev, 1, 1, 10, 10, 0, NULL);
    assert_int_equal(feed(ev, 2, 1, 10, 300, 0, NULL), -1); /* 1 s of a 2 s stage */
    assert_int_equal(feed(ev, 3, 1, 10, 10, 0, NULL), 0);   /* whole: 10 of 20 slow */
    abort_eval_free(ev);

    struct abort_rule r9 = parsed("stage9.p99[1s]>1ms");
    ev = abort_eval_new(&r9, 1, 0, 0);
    abort_eval_set_stages(ev, edges, 3);
    for (int s = 0; s < 10; s++)
        assert_int_equal(feed(ev, s, 1, 10, 300, 0, NULL), -1);
    abort_eval_free(ev);
}

/* generator_limited: fires on the first verdict that holds once armed; window rules ignore it,
 * and it ignores the seconds. The first rule in order wins within a second. */
static void test_eval_limited_and_order(void **state)
{
    (void)state;
    struct abort_rule rules[] = {parsed("p50[1s]>100ms"), parsed("generator_limited"), parsed("max[1s]>100ms")};
    struct abort_eval *ev = abort_eval_new(rules, 3, 2, 0);
    assert_int_equal(abort_eval_limited(ev, 1, true), -1); /* not armed */
    assert_int_equal(abort_eval_limited(ev, 2, false), -1);
    assert_int_equal(feed(ev, 0, 1, 10, 1, 0, NULL), -1);
    assert_int_equal(abort_eval_limited(ev, 3, true), 1);
    double at_s;
    size_t rule;
    assert_true(abort_eval_fired(ev, &rule, &at_s) && rule == 1 && at_s == 3);
    assert_int_equal(abort_eval_limited(ev, 4, true), -1);
    abort_eval_free(ev);

    ev = abort_eval_new(rules, 3, 0, 0);
    assert_int_equal(feed(ev, 0, 1, 10, 300, 0, NULL), 0); /* both p50 and max hold: the first */
    abort_eval_free(ev);
    abort_eval_free(NULL);
}

/* A long window keeps only what it needs: an hour of seconds fed, the window's sums exact. */
/* Stream rules: "first_event." and "event_gap." before pNN, mean or max read those
 * histograms; other statistics are refused with them. */
static void test_parse_stream(void **state)
{
    (void)state;
    struct abort_rule r = parsed("first_event.p99[10s]>500ms");
    assert_true(r.kind == ABORT_LATENCY && r.hist == ABORT_H_FIRST_EVENT && r.pct == 99 && r.value == 500);
    r = parsed("stage1.event_gap.max[5s]>=1s");
    assert_true(r.stage == 1 && r.hist == ABORT_H_EVENT_GAP && r.stat == ABORT_MAX && r.value == 1000);
    r = parsed("event_gap.mean[2s]<3ms");
    assert_true(r.hist == ABORT_H_EVENT_GAP && r.stat == ABORT_MEAN);
    r = parsed("p99[2s]>3ms");
    assert_true(r.hist == ABORT_H_LATENCY);
    refused("first_event.error_rate[5s]>1%",
            "'first_event.error_rate': a stream histogram takes pNN, mean or max (first_event.p99, event_gap.max)");
    refused("event_gap.bogus[5s]>1ms",
            "'bogus': unknown statistic (expected p50, p99, p99.9, mean, max, error_rate, dropped_rate, "
            "completed_per_s, goodput_per_s, sent_per_s, first_event.p99, event_gap.p99 or generator_limited)");
}

/* A stream rule reads its own histogram: the latency is fast, the gaps slow; a second without
 * streamed events never fires it; the first-event rule stays quiet on slow gaps. */
static void test_eval_stream(void **state)
{
    (void)state;
    struct abort_rule rules[2] = {parsed("first_event.p99[2s]>100ms"), parsed("event_gap.p99[2s]>100ms")};
    struct abort_eval *ev = abort_eval_new(rules, 2, 0, 0);
    struct hdr fe, gap, none;
    hdr_init(&fe, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&gap, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    memset(&none, 0, sizeof none); /* unallocated: no event that second */
    hdr_record(&fe, 50 * 1000000, 10);
    hdr_record(&gap, 400 * 1000000, 30);
    double m = NAN;
    assert_int_equal(feed(ev, 0, 1, 10, 1, 0, &m), -1); /* latency only: nothing streamed */
    abort_eval_add_stream(ev, &fe, &none);
    assert_int_equal(feed(ev, 1, 1, 10, 1, 0, &m), -1); /* first events fast, no gap yet */
    abort_eval_add_stream(ev, NULL, &gap);
    assert_int_equal(feed(ev, 2, 1, 10, 1, 0, &m), 1);
    assert_true(fabs(m - 400) < 0.5);
    abort_eval_free(ev);

    ev = abort_eval_new(rules, 1, 0, 0);
    hdr_reset(&fe);
    hdr_record(&fe, 300 * 1000000, 2);
    abort_eval_add_stream(ev, &fe, &gap);
    assert_int_equal(feed(ev, 0, 1, 10, 1, 0, &m), -1); /* 1 s of a 2 s window */
    abort_eval_add_stream(ev, &fe, &none);
    assert_int_equal(feed(ev, 1, 1, 10, 1, 0, &m), 0);
    assert_true(fabs(m - 300) < 0.5);
    abort_eval_free(ev);
    hdr_release(&fe);
    hdr_release(&gap);
}

static void test_eval_long_run(void **state)
{
    (void)state;
    struct abort_rule r = parsed("completed_per_s[10s]<50");
    struct abort_eval *ev = abort_eval_new(&r, 1, 0, 0);
    for (int s = 0; s < 3600; s++)
        assert_int_equal(feed(ev, s, 1, 60, 1, 0, NULL), -1);
    /* 40/s from 3600 s: after k such seconds the window holds (60 (10 - k) + 40 k) / 10 = 60 - 2k */
    for (int s = 3600; s < 3605; s++)
        assert_int_equal(feed(ev, s, 1, 40, 1, 0, NULL), -1); /* k = 5: 50, not < 50 */
    double m, at_s;
    assert_int_equal(feed(ev, 3605, 1, 40, 1, 0, &m), 0);
    assert_true(abort_eval_fired(ev, NULL, &at_s));
    assert_true(at_s == 3606 && m == 48);
    abort_eval_free(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_eval_window_full),
        cmocka_unit_test(test_parse_refused),
        cmocka_unit_test(test_eval_merged_percentile),
        cmocka_unit_test(test_eval_armed_and_warmup),
        cmocka_unit_test(test_eval_counts),
        cmocka_unit_test(test_eval_stages),
        cmocka_unit_test(test_eval_limited_and_order),
        cmocka_unit_test(test_eval_long_run),
        cmocka_unit_test(test_parse_stream),
        cmocka_unit_test(test_eval_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
