/* Unit tests for the rates by event time and the generator-limited rule (src/record/rates.c),
 * the plan's bounds (run_validate), thresholds on groups, and the engine in-process against a
 * tiny server thread: the rates and the timeline equal what the per-request log says, to the
 * request; a generator asked for far more than it can send reports what it sent. Exact tier:
 * that a run keeps up (sent = planned) and that a run far behind still ends by --duration +
 * --drain are test_rates_timing.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "load/run.h"
#include "record/threshold.h"
#include "reqlog/reqlog.h"
#include "unit/fixture_server.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MS NS_PER_MS
#define S NS_PER_S

/* ------------------------------------------------------------------ events and rates */

static void test_events_by_time(void **state)
{
    (void)state;
    struct run_events ev;
    record_events_init(&ev, 1 * S, 3 * S);                                  /* the window [1 s, 3 s) */
    record_events_count(&ev, 0, 500 * MS, 600 * MS, OUTCOME_OK);            /* all before: warm-up */
    record_events_count(&ev, 900 * MS, 1 * S, 1200 * MS, OUTCOME_OK);       /* planned before, sent at the start */
    record_events_count(&ev, 2 * S, 2 * S + 1, 3 * S, OUTCOME_OK);          /* done exactly at the end: after */
    record_events_count(&ev, 2900 * MS, 3 * S, 3500 * MS, OUTCOME_TIMEOUT); /* sent at the end: late */
    record_events_count(&ev, 2500 * MS, 0, 0, OUTCOME_DROPPED);             /* planned, never sent */
    record_events_count(&ev, 2600 * MS, 2700 * MS, 0, OUTCOME_CANCELLED);   /* sent, never done */
    record_events_count(&ev, 1500 * MS, 1600 * MS, 1700 * MS, OUTCOME_HTTP_ERROR);
    assert_int_equal(ev.planned, 5); /* 2, 2.9, 2.5, 2.6, 1.5 */
    assert_int_equal(ev.sent_before, 1);
    assert_int_equal(ev.sent, 4);      /* 1, 2+, 2.7, 1.6 */
    assert_int_equal(ev.sent_late, 1); /* 3 */
    assert_int_equal(ev.sends, 5);
    assert_int_equal(ev.first_send_ns, 1 * S);
    assert_int_equal(ev.last_send_ns, 3 * S);
    assert_int_equal(ev.completed, 2); /* 1.2 ok, 1.7 http_error */
    assert_int_equal(ev.ok, 1);
    assert_int_equal(ev.completed_late, 2); /* 3.0, 3.5 */

    struct run_rates r;
    record_rates_of(&ev, &r);
    assert_true(fabs(r.window_s - 2) < 1e-12);
    assert_true(fabs(r.planned - 2.5) < 1e-12);
    assert_true(fabs(r.sent - 2) < 1e-12);
    assert_true(fabs(r.completed - 1) < 1e-12);
    assert_true(fabs(r.goodput - 0.5) < 1e-12);
    assert_true(fabs(r.sending_s - 2) < 1e-12);
    assert_true(fabs(r.achieved_send - 2) < 1e-12); /* 5 sends span 4 gaps in 2 s */
    assert_int_equal(r.sent_late, 1);
    assert_int_equal(r.completed_late, 2);

    /* merging: sums, the earliest first and latest last send, the union of the windows */
    struct run_events b;
    record_events_init(&b, 1 * S, 4 * S);
    record_events_count(&b, 3500 * MS, 3600 * MS, 3700 * MS, OUTCOME_OK);
    record_events_merge(&ev, &b);
    assert_int_equal(ev.window_end_ns, 4 * S);
    assert_int_equal(ev.sends, 6);
    assert_int_equal(ev.last_send_ns, 3600 * MS);
    assert_int_equal(ev.ok, 2);

    /* nothing sent, an open window: no rate at all rather than a made-up one */
    record_events_init(&ev, 0, UINT64_MAX);
    record_rates_of(&ev, &r);
    assert_true(isnan(r.window_s) && isnan(r.sent) && isnan(r.achieved_send) && isnan(r.sending_s));
    /* one send: no pace */
    record_events_init(&ev, 0, S);
    record_events_count(&ev, 10, 20, 30, OUTCOME_OK);
    record_rates_of(&ev, &r);
    assert_true(isnan(r.achieved_send));
    assert_true(fabs(r.sent - 1) < 1e-12);
    /* a record from a log counts the same */
    struct reqlog_record rec = {.planned_ns = 10, .sent_ns = 20, .done_ns = 30, .outcome = OUTCOME_OK};
    struct run_events e2;
    record_events_init(&e2, 0, S);
    record_events_add_reqlog(&e2, &rec);
    assert_memory_equal(&e2, &ev, sizeof ev);
}

/* ------------------------------------------------------------------ generator-limited */

static bool judge(struct run_generator_input in, struct run_generator_verdict *v)
{
    return record_generator_judge(&in, v);
}

static void test_generator_rule(void **state)
{
    (void)state;
    struct run_generator_verdict v;
    struct run_generator_input base = {.open_loop = true,
                                       .sent_on_schedule = 1,
                                       .lag_p50_ms = 0.05,
                                       .lag_p99_ms = 1.8,
                                       .latency_p50_ms = 20,
                                       .latency_p99_ms = 50,
                                       .planned_rate = 10};
    /* the relative rule: a harmless 1.8 ms lag at 10/s under a 50 ms latency */
    assert_false(judge(base, &v));
    assert_string_equal(v.why, "");
    assert_true(fabs(v.gap_ms - 100) < 1e-9);
    /* the same lag under a 2 ms latency is most of what the run reports */
    struct run_generator_input in = base;
    in.latency_p50_ms = 0.2;
    in.latency_p99_ms = 2;
    assert_true(judge(in, &v));
    assert_true(v.shapes_tail);
    assert_non_null(strstr(v.why, "lag p99 1.800 ms is 90% of the latency p99 2.000 ms"));
    /* the lab's round: 150 ms of lag under a 434 ms p99 */
    in = base;
    in.lag_p99_ms = 150;
    in.latency_p99_ms = 434;
    in.planned_rate = 550;
    assert_true(judge(in, &v));
    assert_true(v.shapes_tail);
    /* below the floor, whatever the latency: timer and scheduler jitter */
    in = base;
    in.lag_p99_ms = 0.9;
    in.latency_p50_ms = 0.1;
    in.latency_p99_ms = 0.2;
    assert_false(judge(in, &v));
    /* the median: lag p50 above the floor and a tenth of the latency p50 */
    in = base;
    in.lag_p50_ms = 3;
    in.lag_p99_ms = 4;
    in.latency_p50_ms = 20;
    in.latency_p99_ms = 200;
    assert_true(judge(in, &v));
    assert_true(v.shapes_median && !v.shapes_tail);
    /* bursts: at 100k/s a 5 ms lag sends 500 planned requests at once, a quarter of a 20 ms p50 */
    in = base;
    in.planned_rate = 100000;
    in.lag_p99_ms = 5;
    in.latency_p50_ms = 20;
    in.latency_p99_ms = 100;
    assert_true(judge(in, &v));
    assert_true(v.bursts && !v.shapes_tail && !v.shapes_median);
    assert_non_null(strstr(v.why, "spans 500 planned sends"));
    /* ... but at 10/s the same 5 ms lag is far below the 100 ms gap, and at 200/s (one every
     * 5 ms) one planned send late is no burst */
    in.planned_rate = 10;
    assert_false(judge(in, &v));
    in.planned_rate = 200;
    in.latency_p50_ms = 0.5;
    assert_false(judge(in, &v));
    in.planned_rate = 2000; /* 10 gaps */
    assert_true(judge(in, &v));
    assert_true(v.bursts);
    /* the plan was not kept */
    in = base;
    in.sent_on_schedule = 0.24;
    assert_true(judge(in, &v));
    assert_true(v.short_send);
    assert_non_null(strstr(v.why, "sent 24.0% of planned requests on schedule (floor 99%)"));
    /* --lag-limit is a hard limit and replaces the relative rule */
    in = base;
    in.lag_limit_ms = 1;
    assert_true(judge(in, &v));
    assert_true(v.over_limit);
    assert_non_null(strstr(v.why, "lag p99 1.800 ms above --lag-limit 1.000 ms"));
    in.lag_limit_ms = 5;
    in.latency_p99_ms = 2; /* the relative rule would say yes */
    assert_false(judge(in, &v));
    /* a closed loop has no plan to keep */
    in = base;
    in.open_loop = false;
    in.sent_on_schedule = 0.1;
    assert_false(judge(in, &v));
    /* nothing measured: no verdict from nothing */
    in = base;
    in.sent_on_schedule = NAN;
    in.lag_p50_ms = in.lag_p99_ms = NAN;
    assert_false(judge(in, &v));
}

/* --timer-slack: the lateness the user asked for is not the generator's; what the slack does
 * not explain still is */
static void test_generator_slack(void **state)
{
    (void)state;
    struct run_generator_verdict v;
    /* 5,000/s against a 0.2 ms service with --timer-slack 1ms: lag p99 1.05 ms, p50 0.5 ms */
    struct run_generator_input in = {.open_loop = true,
                                     .sent_on_schedule = 1,
                                     .lag_p50_ms = 0.5,
                                     .lag_p99_ms = 1.05,
                                     .latency_p50_ms = 0.7,
                                     .latency_p99_ms = 1.3,
                                     .planned_rate = 5000,
                                     .timer_slack_ms = 1};
    assert_false(judge(in, &v));
    /* without the slack the same lag is most of the latency */
    in.timer_slack_ms = 0;
    assert_true(judge(in, &v));
    assert_true(v.shapes_tail);
    /* lag beyond the slack is the generator's: 2.6 ms past a 1 ms slack under a 4 ms p99 */
    in.timer_slack_ms = 1;
    in.lag_p99_ms = 3.6;
    in.latency_p99_ms = 4;
    assert_true(judge(in, &v));
    assert_true(v.shapes_tail);
    assert_non_null(strstr(v.why, "lag p99 2.600 ms beyond --timer-slack is 65% of the latency p99 4.000 ms"));
    /* the median too: p50 3 ms past the slack under a 5 ms median */
    in.lag_p50_ms = 4;
    in.lag_p99_ms = 4.5;
    in.latency_p50_ms = 5;
    in.latency_p99_ms = 50;
    assert_true(judge(in, &v));
    assert_true(v.shapes_median);
    assert_non_null(strstr(v.why, "lag p50 3.000 ms beyond --timer-slack"));
    /* --lag-limit bounds the lag beyond the slack */
    in.lag_p50_ms = 0.5;
    in.lag_p99_ms = 1.4;
    in.latency_p50_ms = 0.7;
    in.latency_p99_ms = 1.5;
    in.lag_limit_ms = 0.5;
    assert_false(judge(in, &v)); /* 0.4 ms beyond */
    in.lag_p99_ms = 1.6;
    assert_true(judge(in, &v)); /* 0.6 ms beyond */
    assert_true(v.over_limit);
    assert_non_null(strstr(v.why, "lag p99 0.600 ms beyond --timer-slack above --lag-limit 0.500 ms"));
    /* short sends are short sends, slack or not */
    in.lag_limit_ms = 0;
    in.lag_p99_ms = 1;
    in.sent_on_schedule = 0.5;
    assert_true(judge(in, &v));
    assert_true(v.short_send && !v.shapes_tail);
}

static void test_lag_beyond_slack(void **state)
{
    (void)state;
    assert_true(fabs(record_lag_beyond_slack(1.5, 1) - 0.5) < 1e-12);
    assert_true(record_lag_beyond_slack(0.7, 1) == 0);
    assert_true(record_lag_beyond_slack(1, 1) == 0);
    assert_true(fabs(record_lag_beyond_slack(1.5, 0) - 1.5) < 1e-12);
    assert_true(fabs(record_lag_beyond_slack(1.5, -1) - 1.5) < 1e-12);
    assert_true(isnan(record_lag_beyond_slack(NAN, 1)));
    assert_true(fabs(record_lag_beyond_slack(1.5, NAN) - 1.5) < 1e-12);
}

/* ------------------------------------------------------------------ thresholds on groups */

static const struct plan_target TC[] = {{.name = "api", .url = "http://h/"}, {.name = "ok", .url = "http://h/"}};

static void test_threshold_groups(void **state)
{
    (void)state;
    struct run_record res;
    memset(&res, 0, sizeof res);
    struct run_target_result tr[2];
    memset(tr, 0, sizeof tr);
    res.targets = tr;
    res.ntargets = 2;
    res.window_s = 10;
    struct run_target_result *a = &res.all;
    assert_int_equal(hdr_init(&a->latency_all, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    assert_int_equal(hdr_init(&a->latency[RUN_GROUP_OK], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    assert_int_equal(hdr_init(&a->latency[RUN_GROUP_TRANSPORT], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    /* 100 ok at 200 ms, 900 refused connections at 0.1 ms */
    hdr_record(&a->latency[RUN_GROUP_OK], 200 * MS, 100);
    hdr_record(&a->latency[RUN_GROUP_TRANSPORT], 100000, 900);
    hdr_add(&a->latency_all, &a->latency[RUN_GROUP_OK]);
    hdr_add(&a->latency_all, &a->latency[RUN_GROUP_TRANSPORT]);
    a->counts.planned = a->counts.sent = 1000;
    a->counts.sent_on_time = 990;
    a->counts.outcome[OUTCOME_OK] = 100;
    a->counts.outcome[OUTCOME_TRANSPORT] = 900;
    a->rates.achieved_send = 99.5;
    struct run_config cfg = {.plan.targets = TC, .plan.ntargets = 1}; /* "api" */
    struct {
        const char *expr;
        bool pass;
        double measured;
    } cases[] = {
        {"p50<1ms", false, 200}, /* ok requests by default: the failures do not pass it */
        {"ok.p50<1ms", false, 200},
        {"latency.p50<1ms", false, 200},
        {"all.p50<1ms", true, 0.1},
        {"latency.all.p50<1ms", true, 0.1},
        {"transport.count==900", true, 900},
        {"count==100", true, 100},
        {"timeout.count==0", true, 0},
        {"timeout.p99<1s", false, NAN}, /* no samples: nothing vouches */
        {"sent_on_schedule>=99%", true, 0.99},
        {"achieved_send_per_s>=99", true, 99.5},
        {"service.p99<1s", false, NAN}, /* no metric groups beyond latency; empty histogram fails */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct run_threshold t;
        char err[256];
        if (run_threshold_parse(cases[i].expr, &cfg, &t, err, sizeof err))
            fail_msg("%s: %s", cases[i].expr, err);
        record_threshold_eval(&t, &res);
        bool same = isnan(cases[i].measured) ? isnan(t.measured)
                                             : fabs(t.measured - cases[i].measured) <= 1e-3 * cases[i].measured;
        if (t.pass != cases[i].pass || !same)
            fail_msg("%s: pass %d measured %g", cases[i].expr, t.pass, t.measured);
    }
    /* a target named like a group is the target */
    cfg.plan.ntargets = 2;
    struct run_threshold t;
    char err[256];
    assert_int_equal(run_threshold_parse("ok.p99<1s", &cfg, &t, err, sizeof err), 0);
    assert_int_equal(t.target, 1);
    assert_int_equal(t.group, RUN_GROUP_OK);
    assert_int_equal(run_threshold_parse("ok.all.p99<1s", &cfg, &t, err, sizeof err), 0);
    assert_int_equal(t.target, 1);
    assert_int_equal(t.group, THR_GROUP_ALL);
    /* a group on a metric with one histogram is refused, naming why */
    assert_int_equal(run_threshold_parse("all.service.p99<1s", &cfg, &t, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "applies to latency only"));
    assert_int_equal(run_threshold_parse("all.dropped==0", &cfg, &t, err, sizeof err), KNEE_EINVAL);
    hdr_release(&a->latency_all);
    hdr_release(&a->latency[RUN_GROUP_OK]);
    hdr_release(&a->latency[RUN_GROUP_TRANSPORT]);
}

/* ------------------------------------------------------------------ --timer-slack's checks */

static void test_timer_slack_validate(void **state)
{
    (void)state;
    struct plan_target tc = {.name = "t", .url = "http://127.0.0.1:1/"};
    struct run_config cfg = {.plan.targets = &tc,
                             .plan.ntargets = 1,
                             .plan.open_loop = true,
                             .plan.rate = 100,
                             .plan.duration_ns = S,
                             .timeout_ns = S,
                             .threads = 1,
                             .timer_slack_ns = RUN_MAX_TIMER_SLACK_NS};
    char err[512];
    assert_int_equal(run_validate(&cfg, err, sizeof err), 0); /* the bound itself is allowed */
    cfg.timer_slack_ns = RUN_MAX_TIMER_SLACK_NS + 1;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--timer-slack must be at most 100 ms"));
    cfg.timer_slack_ns = 1000000;
    cfg.spin_ns = 20000;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--timer-slack and --spin"));
    cfg.spin_ns = 0;
    cfg.plan.open_loop = false;
    cfg.plan.rate = 0;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--timer-slack applies to the open loop"));
    cfg.timer_slack_ns = 0;
    assert_int_equal(run_validate(&cfg, err, sizeof err), 0);
    /* auto: the open loop only, and not with --spin */
    cfg.timer_slack_auto = true;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--timer-slack applies to the open loop"));
    cfg.plan.open_loop = true;
    cfg.plan.rate = 100;
    assert_int_equal(run_validate(&cfg, err, sizeof err), 0);
    cfg.spin_ns = 20000;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--timer-slack and --spin"));
}

/* --timer-slack auto's rule: 1% of the median service time, rounded down, at most 1 ms. */
static void test_timer_slack_auto_rule(void **state)
{
    (void)state;
    assert_int_equal(run_auto_slack_ns(0), 0);
    assert_int_equal(run_auto_slack_ns(99), 0);                      /* below 1 ns: none */
    assert_int_equal(run_auto_slack_ns(50 * 1000), 500);             /* 50 us: 0.5 us */
    assert_int_equal(run_auto_slack_ns(10 * NS_PER_MS), 100 * 1000); /* 10 ms: 100 us */
    assert_int_equal(run_auto_slack_ns(100 * NS_PER_MS), NS_PER_MS); /* the bound itself */
    assert_int_equal(run_auto_slack_ns(100 * NS_PER_MS + 100), NS_PER_MS);
    assert_int_equal(run_auto_slack_ns(5 * NS_PER_S), RUN_AUTO_SLACK_MAX_NS);
    assert_int_equal(run_auto_slack_ns(UINT64_MAX), RUN_AUTO_SLACK_MAX_NS);
}

/* ------------------------------------------------------------------ the plan's bounds */

static void test_plan_bounds(void **state)
{
    (void)state;
    struct plan_target tc = {.name = "t", .url = "http://127.0.0.1:1/"};
    struct run_config cfg = {.plan.targets = &tc,
                             .plan.ntargets = 1,
                             .plan.open_loop = true,
                             .plan.rate = 1e8,
                             .plan.duration_ns = S,
                             .timeout_ns = S,
                             .threads = 2};
    char err[512];
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "more than 2 load threads can plan"));
    assert_non_null(strstr(err, "1,000,000/s per thread"));
    double rates[] = {1e12, 1e20, 1.79e308};
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
        cfg.plan.rate = rates[i];
        assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    }
    cfg.plan.rate = 2 * PLAN_MAX_RATE_PER_THREAD; /* the limit itself is allowed */
    assert_int_equal(run_validate(&cfg, err, sizeof err), 0);
    cfg.threads = 1;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    /* a target's own rate counts, and a ramp by its peak */
    cfg.threads = 2;
    cfg.plan.rate = PLAN_MAX_RATE_PER_THREAD;
    tc.rate = 1.5 * PLAN_MAX_RATE_PER_THREAD;
    assert_int_equal(run_validate(&cfg, err, sizeof err), 0); /* all targets have their own rate */
    struct plan_target two[2] = {tc, {.name = "u", .url = "http://127.0.0.1:1/"}};
    cfg.plan.targets = two;
    cfg.plan.ntargets = 2;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    cfg.plan.targets = &tc;
    cfg.plan.ntargets = 1;
    tc.rate = 0;
    cfg.plan.rate = 0;
    cfg.plan.ramp = true;
    cfg.plan.ramp_from = 10;
    cfg.plan.ramp_to = 3e6;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    cfg.plan.ramp = false;
    /* --rate 1e-300 -n 5 would take 5e300 s: refused, not 1 of 5 planned */
    cfg.plan.rate = 1e-300;
    cfg.plan.duration_ns = 0;
    cfg.plan.requests = 5;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--requests 5 at 1e-300/s"));
    cfg.plan.rate = 1e-6; /* 5e6 s: long, but a plan */
    assert_int_equal(run_validate(&cfg, err, sizeof err), 0);
    cfg.plan.rate = 1;
    cfg.plan.duration_ns = PLAN_MAX_NS + 1;
    cfg.plan.requests = 0;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
}

/* ------------------------------------------------------------------ the engine in-process */

/* The log's records counted with record_events_count over the run's window. */
static void events_of_log(const char *path, const struct run_record *res, struct run_events *ev)
{
    struct reqlog_reader *rd;
    char err[256];
    assert_int_equal(reqlog_reader_open(&rd, path, err, sizeof err), 0);
    record_events_init(ev, res->all.events.window_start_ns, res->all.events.window_end_ns);
    struct reqlog_record r;
    int k;
    while ((k = reqlog_read(rd, &r)) == 1)
        record_events_add_reqlog(ev, &r);
    assert_int_equal(k, 0);
    reqlog_reader_close(rd);
}

/* The timeline's intervals inside the window, summed. */
static void ticks_in_window(const struct run_record *res, struct run_tick *sum)
{
    memset(sum, 0, sizeof *sum);
    for (size_t i = 0; i < res->nticks; i++) {
        const struct run_tick *t = &res->ticks[i];
        if (t->start_s >= res->window_start_s - 1e-9 && t->start_s + t->length_s <= res->window_end_s + 1e-9) {
            sum->planned += t->planned;
            sum->sent += t->sent;
            sum->completed += t->completed;
            sum->ok += t->ok;
        }
    }
}

static void assert_events_equal(const struct run_events *a, const struct run_events *b)
{
    assert_int_equal(a->planned, b->planned);
    assert_int_equal(a->sent, b->sent);
    assert_int_equal(a->completed, b->completed);
    assert_int_equal(a->ok, b->ok);
    assert_int_equal(a->sent_before, b->sent_before);
    assert_int_equal(a->sent_late, b->sent_late);
    assert_int_equal(a->completed_late, b->completed_late);
    assert_int_equal(a->sends, b->sends);
    assert_int_equal(a->first_send_ns, b->first_send_ns);
    assert_int_equal(a->last_send_ns, b->last_send_ns);
}

/* An open-loop run: the rates are the log's to the request, the timeline's intervals inside the
 * window (cut at its edges, 0.3 s and 1.3 s) add up to them, whatever the machine let the
 * generator keep of its plan (that it keeps up is test_rates_timing.c's). */
static void test_rates_match_the_log(void **state)
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
    struct run_record res;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(res.out_error, 0);
    assert_true(fabs(res.window_start_s - 0.3) < 1e-9 && fabs(res.window_end_s - 1.3) < 1e-9);
    assert_int_equal(res.all.events.planned, 1000);
    assert_true(fabs(res.all.rates.planned - 1000) < 1e-6);
    struct run_events log;
    events_of_log(path, &res, &log);
    assert_events_equal(&log, &res.all.events);
    assert_events_equal(&res.targets[0].events, &res.all.events);
    struct run_tick sum;
    ticks_in_window(&res, &sum);
    assert_int_equal(sum.sent, res.all.events.sent);
    assert_int_equal(sum.planned, res.all.events.planned);
    assert_int_equal(sum.completed, res.all.events.completed);
    assert_int_equal(sum.ok, res.all.events.ok);
    /* the edges cut the seconds: [0,0.3) [0.3,1) [1,1.3) and [1.3,...) when the run lasts longer */
    assert_true(res.nticks >= 3);
    assert_true(fabs(res.ticks[1].start_s - 0.3) < 1e-9 && fabs(res.ticks[2].start_s - 1) < 1e-9);
    assert_true(res.nticks == 3 || fabs(res.ticks[3].start_s - 1.3) < 1e-9);
    uint64_t all_sent = 0;
    for (size_t i = 0; i < res.nticks; i++)
        all_sent += res.ticks[i].sent;
    assert_int_equal(all_sent, res.all.counts.sent + res.all.warmup_counts.sent);
    record_release(&res);
    unlink(path);
}

/* A closed loop: every send happens while planning, so a run with --requests has its window
 * up to the last client's end and nothing after it. */
static void test_closed_loop_rates(void **state)
{
    struct fixture_server *s = *state;
    struct plan_target tc = {.name = "t", .url = s->url};
    struct run_config cfg = fixture_run_config(&tc, 2);
    cfg.plan.connections = 4;
    cfg.plan.requests = 2000;
    struct run_record res;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(res.all.events.sent, 2000);
    assert_int_equal(res.all.events.planned, 2000);
    assert_int_equal(res.all.events.completed, 2000);
    assert_int_equal(res.all.rates.sent_late + res.all.rates.completed_late, 0);
    /* unchanged from the definition by counts: 2000 over the window */
    assert_true(fabs(res.all.rates.sent - 2000 / res.window_s) < 1e-9);
    assert_false(res.generator_limited);
    assert_false(res.no_ok);
    record_release(&res);
}

/* One load thread asked for 1,000,000/s (the most a thread may plan, several times what it can
 * send): the rates say what it sent, the generator is named, every request accounted (that the
 * run ends by --duration + --drain is test_rates_timing.c's). */
static void test_generator_far_behind(void **state)
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
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(res.all.counts.planned, 500000);
    /* what happened, not what was planned */
    assert_true(res.all.rates.sent < 0.5 * res.all.rates.planned);
    assert_true(fabs(res.all.rates.sent * res.window_s - (double)res.all.events.sent) < 1e-6);
    assert_true(res.all.events.sent + res.all.events.sent_late <= res.all.counts.sent);
    printf("1M/s on one thread: sent %.0f/s in the window, %.0f/s achieved, %llu late, %llu queued, %llu dropped "
           "(%llu unreached), elapsed %.2f s\n",
           res.all.rates.sent, res.all.rates.achieved_send, (unsigned long long)res.all.events.sent_late,
           (unsigned long long)res.all.counts.queued, (unsigned long long)res.all.counts.dropped,
           (unsigned long long)res.unreached, res.elapsed_s);
    assert_true(res.all.counts.dropped > 0);
    assert_int_equal(res.all.counts.dropped, res.all.counts.outcome[OUTCOME_DROPPED]);
    assert_true(res.generator_limited);
    assert_true(res.generator.short_send);
    struct run_tick sum;
    ticks_in_window(&res, &sum);
    assert_int_equal(sum.sent, res.all.events.sent);
    assert_int_equal(sum.planned, res.all.events.planned);
    bool said = false;
    for (size_t i = 0; i < res.warnings.n; i++)
        said |= strstr(res.warnings.items[i], "never sent (dropped)") != NULL;
    assert_true(said);
    record_release(&res);
}

/* A target that is down: every request fails, the run says so and is a failed run. */
static void test_target_down(void **state)
{
    (void)state;
    char url[64];
    fixture_refused_url(url, sizeof url); /* nobody listens there */
    struct plan_target tc = {.name = "t", .url = url};
    struct run_config cfg = fixture_run_config(&tc, 1);
    cfg.plan.connections = 2;
    cfg.plan.requests = 200;
    cfg.timeout_ns = S;
    cfg.drain_ns = S;
    struct run_record res;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_true(res.no_ok);
    assert_true(fabs(res.failed_share - 1) < 1e-12);
    assert_non_null(res.warnings.n ? strstr(res.warnings.items[0], "FAILED: not one request succeeded (transport 200)")
                                   : NULL);
    /* p77<1s would pass on the refused connections' 0.1 ms; on ok requests it has nothing */
    struct run_threshold t;
    char err[256];
    assert_int_equal(run_threshold_parse("p77<1s", &cfg, &t, err, sizeof err), 0);
    record_threshold_eval(&t, &res);
    assert_false(t.pass);
    assert_int_equal(run_threshold_parse("all.p77<1s", &cfg, &t, err, sizeof err), 0);
    record_threshold_eval(&t, &res);
    assert_true(t.pass);
    record_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_by_time),          cmocka_unit_test(test_generator_rule),
        cmocka_unit_test(test_generator_slack),         cmocka_unit_test(test_lag_beyond_slack),
        cmocka_unit_test(test_threshold_groups),        cmocka_unit_test(test_plan_bounds),
        cmocka_unit_test(test_timer_slack_validate),    cmocka_unit_test(test_timer_slack_auto_rule),
        fixture_server_test(test_rates_match_the_log),  fixture_server_test(test_closed_loop_rates),
        fixture_server_test(test_generator_far_behind), cmocka_unit_test(test_target_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
