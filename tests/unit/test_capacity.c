/* Unit tests for src/capacity: the ladder (lists and --max/--min/--steps, geometric and
 * linear), the delivery adapter and a step judged against SLO terms on run results built by
 * hand, the majority vote (invalid repetitions never vote, ties are not a majority, medians),
 * monotonicity, the comparison with the closed loop against the ladder's bracket, the verdict
 * and its exit codes, the environment record on this machine (a busy child shows among the
 * busiest processes), and the text and JSON printers over synthetic results (the JSON parsed
 * by python3 when it is installed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "capacity/capacity.h"
#include "core/clock.h"
#include "core/err.h"
#include "hist/hdr.h"
#include "load/run.h"
#include "model/model.h"
#include "record/threshold.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ the ladder */

static void test_ladder_parse(void **state)
{
    (void)state;
    double r[CAPACITY_MAX_RATES];
    size_t n;
    char err[256];
    assert_int_equal(capacity_ladder_parse("500,1000,2k,4500/s", r, &n, err, sizeof err), 0);
    assert_int_equal(n, 4);
    assert_true(r[0] == 500 && r[1] == 1000 && r[2] == 2000 && r[3] == 4500);
    assert_int_equal(capacity_ladder_parse("100", r, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(capacity_ladder_parse("500,400", r, &n, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "must increase"));
    assert_int_equal(capacity_ladder_parse("500,500", r, &n, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(capacity_ladder_parse("500,,600", r, &n, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "empty item"));
    assert_int_equal(capacity_ladder_parse("500,", r, &n, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(capacity_ladder_parse("", r, &n, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(capacity_ladder_parse("fast", r, &n, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "'fast' is not a rate"));
    assert_int_equal(capacity_ladder_parse("0,10", r, &n, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(capacity_ladder_parse("-5,10", r, &n, err, sizeof err), KNEE_EINVAL);
    char many[512] = "";
    for (int i = 1; i <= CAPACITY_MAX_RATES + 1; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i > 1 ? "," : "", i * 10);
    assert_int_equal(capacity_ladder_parse(many, r, &n, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "at most"));
}

static void test_ladder_make(void **state)
{
    (void)state;
    double r[CAPACITY_MAX_RATES];
    char err[256];
    /* geometric, the default span: max/8 .. max in 7 steps, a ratio of 8^(1/6) ≈ 1.414 */
    assert_int_equal(capacity_ladder_make(0, 1000, 7, false, r, err, sizeof err), 0);
    const double want[] = {125, 177, 250, 354, 500, 707, 1000};
    for (int i = 0; i < 7; i++)
        assert_true(fabs(r[i] - want[i]) < 1e-9);
    /* linear: max/K .. max */
    assert_int_equal(capacity_ladder_make(0, 700, 7, true, r, err, sizeof err), 0);
    for (int i = 0; i < 7; i++)
        assert_true(fabs(r[i] - 100 * (i + 1)) < 1e-9);
    /* --min given, exact at both ends; the middle rounded to 3 digits */
    assert_int_equal(capacity_ladder_make(333, 3333, 4, false, r, err, sizeof err), 0);
    assert_true(r[0] == 333 && r[3] == 3333);
    assert_true(fabs(r[1] - 718) < 1e-9 && fabs(r[2] - 1550) < 1e-9);
    for (int i = 1; i < 4; i++)
        assert_true(r[i] > r[i - 1]);
    /* bad: --steps out of range, --min not below --max, rates that collide after rounding */
    assert_int_equal(capacity_ladder_make(0, 1000, 1, false, r, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--steps"));
    assert_int_equal(capacity_ladder_make(0, 1000, CAPACITY_MAX_RATES + 1, false, r, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(capacity_ladder_make(2000, 1000, 5, false, r, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--min"));
    assert_int_equal(capacity_ladder_make(0, 0, 5, false, r, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--max"));
    assert_int_equal(capacity_ladder_make(1000, 1001, 20, true, r, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "3 significant digits"));
}

/* ------------------------------------------------------------------ one step */

/* A one-target open-loop result over a 1 s window: `n` requests planned in it at `planned`/s,
 * a share `sent_share` of them sent in it (rates by event time, and sent on schedule), the ok
 * ones' latencies spread evenly over [lo_ms, hi_ms] and `failed` of them timeouts at 5 s. */
struct fake {
    struct run_record res;
    struct run_target_result t;
};

static void fake_init(struct fake *f, double planned, double sent_share, uint64_t n, double lo_ms, double hi_ms,
                      uint64_t failed)
{
    memset(f, 0, sizeof *f);
    struct run_target_result *all = &f->res.all;
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        assert_int_equal(hdr_init(&all->latency[g], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    assert_int_equal(hdr_init(&all->latency_all, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    assert_int_equal(hdr_init(&all->lag, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    uint64_t ok = n - failed;
    for (uint64_t i = 0; i < ok; i++) {
        double ms = ok > 1 ? lo_ms + (hi_ms - lo_ms) * (double)i / (double)(ok - 1) : lo_ms;
        hdr_record(&all->latency[RUN_GROUP_OK], (int64_t)(ms * 1e6), 1);
        hdr_record(&all->latency_all, (int64_t)(ms * 1e6), 1);
    }
    for (uint64_t i = 0; i < failed; i++) {
        hdr_record(&all->latency[RUN_GROUP_TIMEOUT], 5 * NS_PER_S, 1);
        hdr_record(&all->latency_all, 5 * NS_PER_S, 1);
    }
    for (uint64_t i = 0; i < n; i++)
        hdr_record(&all->lag, 50000, 1); /* 50 us */
    all->counts.planned = all->counts.sent = n;
    all->counts.outcome[OUTCOME_OK] = ok;
    all->counts.outcome[OUTCOME_TIMEOUT] = failed;
    all->counts.sent_on_time = (uint64_t)llround(sent_share * (double)n);
    all->rates = (struct run_rates){.window_s = 1,
                                    .planned = planned,
                                    .sent = planned * sent_share,
                                    .completed = planned * sent_share,
                                    .goodput = planned * sent_share * (double)ok / (double)n,
                                    .achieved_send = planned * sent_share};
    snprintf(all->name, sizeof all->name, "all");
    f->t = *all;
    snprintf(f->t.name, sizeof f->t.name, "api");
    f->t.planned_rate = planned;
    f->res.ntargets = 1;
    f->res.targets = &f->t;
    f->res.window_s = 1;
    f->res.sent_on_schedule = sent_share;
    f->res.no_ok = ok == 0;
    f->res.accounting_ok = true;
}

static void fake_release(struct fake *f)
{
    struct run_target_result *all = &f->res.all;
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_release(&all->latency[g]);
    hdr_release(&all->latency_all);
    hdr_release(&all->lag);
}

static void parse_slo(const char *expr, struct run_threshold *t)
{
    struct plan_target tc = {.name = "api", .url = "http://127.0.0.1:1/"};
    struct run_config cfg = {.plan.targets = &tc, .plan.ntargets = 1, .plan.open_loop = true, .plan.rate = 100};
    char err[256];
    assert_int_equal(run_threshold_parse(expr, &cfg, t, err, sizeof err), 0);
}

static void test_step_delivered(void **state)
{
    (void)state;
    struct fake f;
    double a;
    char why[256];
    fake_init(&f, 1000, 0.995, 1000, 1, 2, 0);
    assert_true(capacity_step_delivered(&f.res, NULL, &a, why, sizeof why));
    assert_true(fabs(a - 995) < 1e-9); /* achieved = rates.sent */
    assert_string_equal(why, "");
    /* short: 98% of the window's plan sent in it (rates by event time) */
    f.res.all.rates.sent = 980;
    assert_false(capacity_step_delivered(&f.res, NULL, &a, why, sizeof why));
    assert_non_null(strstr(why, "sent 98.0% of the plan in the window (980.0 of 1000.0/s"));
    /* the generator's pace alone (achieved_send) does not make a delivery: sends after the
     * window are in it, not in the window's rate */
    f.res.all.rates.achieved_send = 1000;
    assert_false(capacity_step_delivered(&f.res, NULL, &a, NULL, 0));
    /* all sent but generator-limited (record_generator_judge's verdict, with its reason) */
    f.res.all.rates.sent = 1000;
    f.res.generator.limited = f.res.generator.shapes_tail = true;
    snprintf(f.res.generator.why, sizeof f.res.generator.why, "lag p99 9.000 ms is 45%% of the latency p99");
    assert_false(capacity_step_delivered(&f.res, NULL, &a, why, sizeof why));
    assert_non_null(strstr(why, "not delivered: generator-limited: lag p99 9.000 ms is 45% of the latency p99"));
    /* the lag carries requests past the window's end: a 10 ms lag in a 1 s window lowers the
     * floor by 1% (98.5% sent is then a delivery, 97.5% is not) */
    f.res.generator.limited = false;
    assert_true(fabs(capacity_delivered_floor(&f.res) - (0.99 - 50e-6)) < 1e-6); /* HDR: 3 digits */
    hdr_record(&f.res.all.lag, 10 * NS_PER_MS, 1);
    assert_true(fabs(capacity_delivered_floor(&f.res) - 0.98) < 1e-4);
    f.res.all.rates.sent = 985;
    assert_true(capacity_step_delivered(&f.res, NULL, &a, why, sizeof why));
    f.res.all.rates.sent = 975;
    assert_false(capacity_step_delivered(&f.res, NULL, &a, why, sizeof why));
    assert_non_null(strstr(why, "sent 97.5% of the plan in the window (975.0 of 1000.0/s; floor 98.0%: 99% less"));
    f.res.all.rates.sent = 1000;
    f.res.generator.limited = true;
    /* another verdict given by the caller replaces the engine's */
    struct run_generator_verdict fine = {0};
    assert_true(capacity_step_delivered(&f.res, &fine, &a, why, sizeof why));
    /* nothing planned: not delivered (no evidence) */
    f.res.generator.limited = false;
    f.res.all.rates.planned = NAN;
    assert_false(capacity_step_delivered(&f.res, NULL, &a, why, sizeof why));
    assert_non_null(strstr(why, "nothing was planned"));
    f.res.all.rates.planned = 0;
    assert_false(capacity_step_delivered(&f.res, NULL, &a, NULL, 0));
    fake_release(&f);
}

static void test_step_eval(void **state)
{
    (void)state;
    struct run_threshold slo[2];
    parse_slo("p99<10ms", &slo[0]);
    parse_slo("error_rate<1%", &slo[1]);
    struct capacity_step s;
    struct fake f;
    /* 1000 requests 1..5 ms, none failed: held */
    fake_init(&f, 1000, 1, 1000, 1, 5, 0);
    capacity_step_eval(&f.res, true, slo, 2, &s);
    assert_true(s.ran && s.held && s.delivered);
    assert_true(s.p99_ms > 4.9 && s.p99_ms < 5.1);
    assert_true(s.planned == 1000 && s.achieved == 1000);
    assert_true(s.error_rate == 0);
    assert_string_equal(s.reason, "");
    assert_true(isnan(slo[0].measured)); /* the caller's terms are not changed */
    fake_release(&f);
    /* p99 over the SLO and 2% failed: both terms named, with their measured values; the step's
     * p99 is the ok requests' (the SLO's group), equal to what the term measured, not the 5 s
     * of the timeouts that every response's p99 would show */
    fake_init(&f, 1000, 1, 1000, 1, 20, 20);
    capacity_step_eval(&f.res, true, slo, 2, &s);
    assert_false(s.held);
    assert_true(s.ran && s.delivered);
    assert_non_null(strstr(s.reason, "p99<10ms measured 19."));
    assert_non_null(strstr(s.reason, "error_rate<1% measured 2%"));
    struct run_threshold t = slo[0];
    record_threshold_eval(&t, &f.res);
    assert_true(s.p99_ms == t.measured);
    assert_int_equal(capacity_latency_group(slo, 2), RUN_GROUP_OK);
    assert_string_equal(capacity_latency_group_name(capacity_latency_group(slo, 2)), "ok");
    /* an SLO on every response's latency: the step shows that group, still equal */
    struct run_threshold all[2];
    parse_slo("error_rate<5%", &all[0]); /* not a latency term: skipped */
    parse_slo("all.p99<10ms", &all[1]);
    assert_int_equal(capacity_latency_group(all, 2), THR_GROUP_ALL);
    assert_string_equal(capacity_latency_group_name(THR_GROUP_ALL), "all");
    capacity_step_eval(&f.res, true, all, 2, &s);
    t = all[1];
    record_threshold_eval(&t, &f.res);
    assert_true(s.p99_ms == t.measured && s.p99_ms > 4000);
    assert_int_equal(capacity_latency_group(NULL, 0), RUN_GROUP_OK);
    fake_release(&f);
    /* fast but not delivered: not held, the reason says why */
    fake_init(&f, 1000, 0.9, 1000, 1, 2, 0);
    capacity_step_eval(&f.res, true, slo, 2, &s);
    assert_false(s.held);
    assert_non_null(strstr(s.reason, "not delivered"));
    /* the same result judged as a closed loop: delivery does not apply, achieved = completed/s */
    capacity_step_eval(&f.res, false, slo, 2, &s);
    assert_true(s.held);
    assert_true(s.achieved == 900 && s.planned == 0);
    /* interrupted or broken accounting: not ran */
    f.res.interrupted = true;
    capacity_step_eval(&f.res, true, slo, 2, &s);
    assert_false(s.ran || s.held);
    assert_non_null(strstr(s.reason, "interrupted"));
    fake_release(&f);
    /* not one request ok: not held, said, whatever the SLO (a rate term alone would pass) */
    struct run_threshold rate;
    parse_slo("sent_per_s>=10", &rate);
    fake_init(&f, 100, 1, 100, 1, 2, 100);
    capacity_step_eval(&f.res, true, &rate, 1, &s);
    assert_true(s.ran && s.delivered);
    assert_false(s.held);
    assert_non_null(strstr(s.reason, "not one request ended ok"));
    assert_null(strstr(s.reason, "tls")); /* timeouts: no TLS cause to name */
    fake_release(&f);
    /* ... and a certificate that did not verify is named with the flags that fix it */
    fake_init(&f, 100, 1, 100, 1, 2, 100);
    f.res.all.counts.outcome[OUTCOME_TIMEOUT] = 0;
    f.res.all.counts.outcome[OUTCOME_TRANSPORT] = 100;
    f.res.all.counts.transport_cause[RUN_TC_TLS_VERIFY] = 60;
    f.res.all.counts.transport_cause[RUN_TC_TLS_HOSTNAME] = 40;
    capacity_step_eval(&f.res, true, &rate, 1, &s);
    assert_false(s.held);
    assert_non_null(strstr(s.reason, "; tls verify 60: the certificate did not verify: --cacert FILE or --insecure; "
                                     "tls hostname 40: the certificate does not name the host: --insecure"));
    fake_release(&f);
}

static void test_probe(void **state)
{
    (void)state;
    struct fake f;
    struct capacity_step s;
    fake_init(&f, 1150, 1, 1150, 0.1, 0.3, 0);
    /* the engine found it generator-limited by the relative rule (lag against the null
     * target's 0.3 ms): the probe judges its lag against its own limit instead */
    f.res.generator.limited = f.res.generator.shapes_tail = true;
    capacity_probe_eval(&f.res, 5, 0, &s);
    assert_true(s.held && s.delivered);
    assert_string_equal(s.reason, "");
    /* lag p99 30 ms: over a 5 ms limit, named as the probe's */
    for (int i = 0; i < 100; i++)
        hdr_record(&f.res.all.lag, 30 * NS_PER_MS, 1);
    capacity_probe_eval(&f.res, 5, 0, &s);
    assert_false(s.held);
    assert_non_null(strstr(s.reason, "generator-limited: lag p99 30."));
    assert_non_null(strstr(s.reason, "above the probe's lag limit 5 ms"));
    assert_null(strstr(s.reason, "--lag-limit"));
    capacity_probe_eval(&f.res, 50, 0, &s);
    assert_true(s.held);
    /* short sends: sent on schedule below 99% (the engine's floor), and in the window */
    f.res.sent_on_schedule = 0.9;
    capacity_probe_eval(&f.res, 50, 0, &s);
    assert_false(s.held);
    assert_non_null(strstr(s.reason, "on schedule"));
    f.res.sent_on_schedule = 1;
    f.res.all.rates.sent = 1000;
    capacity_probe_eval(&f.res, 50, 0, &s);
    assert_false(s.held);
    assert_non_null(strstr(s.reason, "sent 87.0% of the plan in the window"));
    assert_true(s.planned == 1150 && s.achieved == 1000);
    fake_release(&f);
    /* a probe target that answers nothing ok measured nothing */
    fake_init(&f, 1150, 1, 1150, 0.1, 0.3, 1150);
    capacity_probe_eval(&f.res, 50, 0, &s);
    assert_false(s.held);
    assert_non_null(strstr(s.reason, "not one request ended ok"));
    fake_release(&f);
}

/* --timer-slack: the probe's verdict judges the lag beyond the slack, as every step's does
 * (the engine's record_generator_judge with the run's slack) */
static void test_probe_timer_slack(void **state)
{
    (void)state;
    struct fake f;
    struct capacity_step s;
    fake_init(&f, 1150, 1, 1150, 0.1, 0.3, 0);
    for (int i = 0; i < 200; i++) /* lag p99 3 ms: the sends left up to 3 ms late */
        hdr_record(&f.res.all.lag, 3 * NS_PER_MS, 1);
    capacity_probe_eval(&f.res, 2, 0, &s); /* no slack: 3 ms is over the 2 ms limit */
    assert_false(s.held);
    assert_non_null(strstr(s.reason, "lag p99 3.0"));
    assert_non_null(strstr(s.reason, "ms above the probe's lag limit 2 ms"));
    assert_null(strstr(s.reason, "--timer-slack"));
    capacity_probe_eval(&f.res, 2, 2, &s); /* --timer-slack 2ms: 1 ms beyond it, under the limit */
    assert_true(s.held && s.delivered);
    assert_string_equal(s.reason, "");
    capacity_probe_eval(&f.res, 0.5, 2, &s); /* the lag beyond the slack over a 0.5 ms limit: named so */
    assert_false(s.held);
    assert_non_null(strstr(s.reason, "lag p99 1.0"));
    assert_non_null(strstr(s.reason, "ms beyond --timer-slack above the probe's lag limit 0.5 ms"));
    fake_release(&f);
}

/* Every window's run configuration: the steps and the probe keep --timer-slack (the engine's
 * verdict and "sent on schedule" of each then allow it), the closed loop drops it (a closed
 * loop has no plan; run_validate refuses a slack there) */
static void test_window_config(void **state)
{
    (void)state;
    struct run_threshold slo;
    parse_slo("p99<50ms", &slo);
    struct plan_target tc = {.name = "api", .url = "http://127.0.0.1:1/"};
    double rates[] = {100, 200};
    struct run_config base = {.plan.targets = &tc,
                              .plan.ntargets = 1,
                              .plan.open_loop = true,
                              .plan.rate = 200,
                              .timeout_ns = NS_PER_S,
                              .drain_ns = NS_PER_S,
                              .keepalive = true,
                              .plan.duration_ns = 2 * NS_PER_S,
                              .lag_limit_ns = 3 * NS_PER_MS,
                              .timer_slack_ns = 2 * NS_PER_MS,
                              .plan.arrivals = RUN_ARRIVALS_POISSON};
    struct capacity_config cfg = {
        .base = &base,
        .rates = rates,
        .nrates = 2,
        .reps = 1,
        .step_ns = NS_PER_S,
        .warmup_ns = NS_PER_S / 2,
        .slo = &slo,
        .nslo = 1,
    };
    char err[256];
    assert_int_equal(capacity_config_check(&cfg, err, sizeof err), 0);
    struct run_config c;
    capacity_window_config(&cfg, CAPACITY_WINDOW_STEP, 100, 0, NULL, 0, &c);
    assert_true(c.plan.open_loop && c.plan.rate == 100 && c.plan.targets == &tc);
    assert_int_equal(c.timer_slack_ns, 2 * NS_PER_MS);
    assert_int_equal(c.lag_limit_ns, 3 * NS_PER_MS);
    assert_int_equal(run_validate(&c, err, sizeof err), 0);
    struct plan_target probe = {.name = "probe", .url = "http://127.0.0.1:2/"};
    capacity_window_config(&cfg, CAPACITY_WINDOW_PROBE, 230, 0, &probe, 7, &c);
    assert_true(c.plan.open_loop && c.plan.rate == 230 && c.plan.targets == &probe && c.plan.ntargets == 1);
    assert_int_equal(c.timer_slack_ns, 2 * NS_PER_MS);
    assert_int_equal(c.lag_limit_ns, 7 * NS_PER_MS);
    assert_int_equal(run_validate(&c, err, sizeof err), 0);
    capacity_window_config(&cfg, CAPACITY_WINDOW_CLOSED, 0, 4, NULL, 0, &c);
    assert_true(!c.plan.open_loop && c.plan.rate == 0 && c.plan.connections == 4 &&
                c.plan.arrivals == RUN_ARRIVALS_CONSTANT);
    assert_int_equal(c.timer_slack_ns, 0);
    assert_int_equal(run_validate(&c, err, sizeof err), 0);
    /* knee run's checks of the slack are capacity's: at most 100 ms, not with --spin */
    base.timer_slack_ns = RUN_MAX_TIMER_SLACK_NS + 1;
    assert_int_equal(capacity_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--timer-slack must be at most 100 ms"));
    base.timer_slack_ns = NS_PER_MS;
    base.spin_ns = 20 * NS_PER_US;
    assert_int_equal(capacity_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--timer-slack and --spin"));
}

static void test_probe_lag_limit(void **state)
{
    (void)state;
    struct run_threshold slo[3];
    parse_slo("error_rate<1%", &slo[0]);
    parse_slo("p99<100ms", &slo[1]);
    parse_slo("p50<=40ms", &slo[2]);
    struct plan_target tc = {.name = "api", .url = "http://127.0.0.1:1/"};
    double rates[] = {100, 1000};
    struct run_config base = {.plan.targets = &tc, .plan.ntargets = 1, .plan.open_loop = true};
    struct capacity_config cfg = {
        .base = &base,
        .rates = rates,
        .nrates = 2,
        .slo = slo,
        .nslo = 3,
    };
    char src[200];
    /* 10% of the tightest latency bound */
    assert_true(fabs(capacity_probe_lag_limit_ms(&cfg, src, sizeof src) - 4) < 1e-9);
    assert_string_equal(src, "10% of the SLO's p50<=40ms");
    cfg.nslo = 2;
    assert_true(fabs(capacity_probe_lag_limit_ms(&cfg, src, sizeof src) - 10) < 1e-9);
    /* no latency term: 10 planned sends at the probe rate (115% of 1,000/s) */
    cfg.nslo = 1;
    assert_true(fabs(capacity_probe_lag_limit_ms(&cfg, src, sizeof src) - 10e3 / 1150) < 1e-9);
    assert_non_null(strstr(src, "no latency term"));
    cfg.probe_rate = 20000; /* 0.5 ms: the floor */
    assert_true(fabs(capacity_probe_lag_limit_ms(&cfg, src, sizeof src) - 1) < 1e-9);
    assert_string_equal(src, "the floor of knee run's lag rule");
    /* --lag-limit, then --probe-lag-limit */
    base.lag_limit_ns = 50 * NS_PER_MS;
    assert_true(fabs(capacity_probe_lag_limit_ms(&cfg, src, sizeof src) - 50) < 1e-9);
    assert_string_equal(src, "--lag-limit");
    cfg.probe_lag_limit_ns = 7 * NS_PER_MS;
    assert_true(fabs(capacity_probe_lag_limit_ms(&cfg, NULL, 0) - 7) < 1e-9);
}

/* ------------------------------------------------------------------ vote, compare, judge */

/* A result over `nrates` rates of 100, 200, ... with reps given as strings of '+' (held),
 * '-' (not held) per rung; a leading 'x' marks the repetition invalid (probe failed). */
static void synth(struct capacity_result *r, size_t nrates, const char *const *reps, size_t nreps)
{
    double rates[CAPACITY_MAX_RATES];
    for (size_t k = 0; k < nrates; k++)
        rates[k] = 100.0 * (double)(k + 1);
    assert_int_equal(capacity_result_init(r, rates, nrates, nreps), 0);
    for (size_t i = 0; i < nreps; i++) {
        const char *s = reps[i];
        struct capacity_rep *p = &r->reps[i];
        p->ran = true;
        p->valid = s[0] != 'x';
        p->probe.ran = true;
        p->probe.held = p->valid;
        if (!p->valid) {
            snprintf(p->excluded, sizeof p->excluded, "probe failed (lag p99 30 ms)");
            s++;
        }
        for (size_t k = 0; k < nrates; k++) {
            p->step[k].ran = true;
            p->step[k].held = s[k] == '+';
            p->step[k].achieved = rates[k] * (p->step[k].held ? 1 : 0.9);
            p->step[k].p50_ms = 1 + (double)i;
            p->step[k].p99_ms = 10 * (double)(k + 1) + (double)i;
            p->step[k].error_rate = 0;
        }
    }
    r->steps_total = r->steps_done = nreps * (nrates + 1);
}

static void test_vote_majority(void **state)
{
    (void)state;
    struct capacity_result r;
    /* one repetition misbehaves at every rate: the capacity does not move */
    const char *reps[] = {"++++--", "------", "++++--"};
    synth(&r, 6, reps, 3);
    capacity_vote(&r);
    assert_int_equal(r.vote.nvalid, 3);
    assert_int_equal(r.vote.cap_index, 3);
    assert_true(r.vote.capacity == 400 && r.vote.bracket_hi == 500);
    assert_false(r.vote.top_held);
    assert_int_equal(r.vote.rung[0].held_by, 2);
    assert_int_equal(r.vote.rung[0].valid_reps, 3);
    assert_true(r.vote.rung[0].held && !r.vote.rung[4].held);
    /* medians over the valid repetitions: p99 of rung 0 are 10, 11, 12 */
    assert_true(r.vote.rung[0].p99_ms == 11);
    assert_int_equal(r.vote.nnonmono, 0);
    capacity_result_release(&r);

    /* an excluded repetition never votes: 1 held of 2 valid is not a strict majority */
    const char *reps2[] = {"+++", "x+++", "---"};
    synth(&r, 3, reps2, 3);
    capacity_vote(&r);
    assert_int_equal(r.vote.nvalid, 2);
    assert_int_equal(r.vote.rung[0].valid_reps, 2);
    assert_int_equal(r.vote.rung[0].held_by, 1);
    assert_false(r.vote.rung[0].held);
    assert_int_equal(r.vote.cap_index, -1);
    assert_true(isnan(r.vote.capacity));
    assert_true(r.vote.bracket_hi == 100);
    capacity_result_release(&r);

    /* every rate held: the top, with an open bracket */
    const char *reps3[] = {"+++", "+++", "++-"};
    synth(&r, 3, reps3, 3);
    capacity_vote(&r);
    assert_true(r.vote.top_held && r.vote.capacity == 300 && isinf(r.vote.bracket_hi));
    capacity_result_release(&r);
}

static void test_vote_monotone(void **state)
{
    (void)state;
    struct capacity_result r;
    /* 200 fails by majority while 300 and 400 hold: named, never used */
    const char *reps[] = {"+-++-", "+-++-", "++++-"};
    synth(&r, 5, reps, 3);
    capacity_vote(&r);
    assert_int_equal(r.vote.cap_index, 0);
    assert_true(r.vote.capacity == 100 && r.vote.bracket_hi == 200);
    assert_int_equal(r.vote.nnonmono, 2);
    assert_int_equal(r.vote.nonmono[0], 2);
    assert_int_equal(r.vote.nonmono[1], 3);
    capacity_judge(&r, 0);
    bool named = false;
    for (size_t i = 0; i < r.verdict.nreasons; i++)
        named |= strstr(r.verdict.reasons[i], "non-monotone: 300/s, 400/s held above a rate that failed") != NULL;
    assert_true(named);
    capacity_result_release(&r);
}

static void test_compare_bracket(void **state)
{
    (void)state;
    struct capacity_result r;
    const char *reps[] = {"+++--", "+++--", "+++--"}; /* capacity 300, bracket [300, 400) */
    synth(&r, 5, reps, 3);
    capacity_vote(&r);
    r.cross.ran = true;
    /* inside the bracket: no difference, whatever the distance from the capacity */
    r.cross.closed_loop = 390;
    capacity_compare(&r, 0.10);
    assert_true(r.cross.difference == 0 && r.cross.agree);
    assert_true(fabs(r.cross.relative - 0.3) < 1e-12);
    assert_true(r.cross.agree_share == 0.10);
    /* above the bracket by 5%: agree within 10% */
    r.cross.closed_loop = 420;
    capacity_compare(&r, 0.10);
    assert_true(fabs(r.cross.difference - 0.05) < 1e-12 && r.cross.agree);
    /* above by 25%: disagree */
    r.cross.closed_loop = 500;
    capacity_compare(&r, 0.10);
    assert_true(fabs(r.cross.difference - 0.25) < 1e-12 && !r.cross.agree);
    /* below the capacity by 20% */
    r.cross.closed_loop = 240;
    capacity_compare(&r, 0.10);
    assert_true(fabs(r.cross.difference + 0.2) < 1e-12 && !r.cross.agree);
    /* exactly at the threshold agrees */
    r.cross.closed_loop = 270;
    capacity_compare(&r, 0.10);
    assert_true(r.cross.agree);
    /* nothing met the SLO in the closed loop while the ladder held 300/s: -100% */
    r.cross.closed_loop = NAN;
    capacity_compare(&r, 0.10);
    assert_true(r.cross.difference == -1 && !r.cross.agree);
    capacity_result_release(&r);
    /* below the ladder: the bracket is [0, 100) */
    const char *low[] = {"---", "---", "---"};
    synth(&r, 3, low, 3);
    capacity_vote(&r);
    r.cross.closed_loop = 95;
    capacity_compare(&r, 0.10);
    assert_true(r.cross.difference == 0 && r.cross.agree && isnan(r.cross.relative));
    r.cross.closed_loop = 150;
    capacity_compare(&r, 0.10);
    assert_false(r.cross.agree);
    capacity_result_release(&r);
}

static bool has_reason(const struct capacity_verdict *v, const char *needle)
{
    for (size_t i = 0; i < v->nreasons; i++)
        if (strstr(v->reasons[i], needle))
            return true;
    return false;
}

static void test_judge(void **state)
{
    (void)state;
    struct capacity_result r;
    const char *good[] = {"+++--", "+++--", "++---"};
    /* valid, cross-check agrees: exit 0 with the capacity */
    synth(&r, 5, good, 3);
    capacity_vote(&r);
    r.cross.ran = true;
    r.cross.closed_loop = 350;
    capacity_compare(&r, 0.10);
    capacity_judge(&r, 0);
    assert_true(r.verdict.valid);
    assert_true(r.verdict.capacity == 300);
    assert_int_equal(r.verdict.exit_code, 0);
    assert_false(r.verdict.require_given);
    /* --require above it: 99; at or below: 0 */
    capacity_judge(&r, 301);
    assert_int_equal(r.verdict.exit_code, 99);
    assert_true(r.verdict.require_given && !r.verdict.require_met);
    assert_true(has_reason(&r.verdict, "--require 301/s not met"));
    capacity_judge(&r, 300);
    assert_int_equal(r.verdict.exit_code, 0);
    assert_true(r.verdict.require_met);
    /* the methods disagree: INVALID (3), both numbers in the reason, --require does not matter */
    r.cross.closed_loop = 800;
    r.cross.best = 0;
    r.cross.nsteps = 1;
    r.cross.step[0] =
        (struct capacity_closed_step){.connections = 4, .s = {.ran = true, .held = true, .achieved = 800, .p99_ms = 9}};
    capacity_compare(&r, 0.10);
    capacity_judge(&r, 100);
    assert_false(r.verdict.valid);
    assert_true(isnan(r.verdict.capacity));
    assert_int_equal(r.verdict.exit_code, 3);
    assert_non_null(strstr(r.verdict.reasons[0], "disagree"));
    assert_non_null(strstr(r.verdict.reasons[0], "the ladder says 300/s"));
    assert_non_null(strstr(r.verdict.reasons[0], "the closed loop carried 800/s"));
    assert_true(has_reason(&r.verdict, "likely cause"));
    /* no cross-check: valid, and the verdict says it rests on one method */
    r.cross.ran = false;
    capacity_judge(&r, 0);
    assert_true(r.verdict.valid);
    assert_true(has_reason(&r.verdict, "--no-cross-check"));
    /* interrupted: INVALID */
    r.interrupted = true;
    r.steps_done = 7;
    capacity_judge(&r, 0);
    assert_int_equal(r.verdict.exit_code, 3);
    assert_non_null(strstr(r.verdict.reasons[0], "interrupted after 7 of the ladder's 18 windows"));
    capacity_result_release(&r);

    /* a minority of valid repetitions: INVALID, excluded repetitions listed with their reasons */
    const char *few[] = {"x+++--", "+++--", "x+++--"};
    synth(&r, 5, few, 3);
    capacity_vote(&r);
    capacity_judge(&r, 0);
    assert_int_equal(r.verdict.exit_code, 3);
    assert_non_null(strstr(r.verdict.reasons[0], "only 1 of 3 repetitions valid"));
    assert_non_null(strstr(r.verdict.reasons[0], "excluded: 1, 3"));
    assert_true(has_reason(&r.verdict, "repetition 1 excluded: probe failed (lag p99 30 ms)"));
    capacity_result_release(&r);

    /* 2 of 3 valid is a majority: valid, the excluded one named */
    const char *two[] = {"+++--", "x-----", "+++--"};
    synth(&r, 5, two, 3);
    capacity_vote(&r);
    capacity_judge(&r, 0);
    assert_int_equal(r.verdict.exit_code, 0);
    assert_true(r.verdict.capacity == 300);
    assert_true(has_reason(&r.verdict, "repetition 2 excluded"));
    capacity_result_release(&r);

    /* 2 of 4 valid is not a strict majority */
    const char *half[] = {"+++--", "x-----", "+++--", "x-----"};
    synth(&r, 5, half, 4);
    capacity_vote(&r);
    capacity_judge(&r, 0);
    assert_int_equal(r.verdict.exit_code, 3);
    capacity_result_release(&r);

    /* below the ladder: valid, no number; --require is not met */
    const char *low[] = {"---", "---", "+--"};
    synth(&r, 3, low, 3);
    capacity_vote(&r);
    capacity_judge(&r, 0);
    assert_true(r.verdict.valid && isnan(r.verdict.capacity));
    assert_int_equal(r.verdict.exit_code, 0);
    assert_true(has_reason(&r.verdict, "below the ladder"));
    capacity_judge(&r, 50);
    assert_int_equal(r.verdict.exit_code, 99);
    capacity_result_release(&r);

    /* the top held: valid, "at least" */
    const char *top[] = {"+++", "+++", "+++"};
    synth(&r, 3, top, 3);
    capacity_vote(&r);
    capacity_judge(&r, 0);
    assert_true(r.verdict.capacity == 300);
    assert_true(has_reason(&r.verdict, "at least 300/s"));
    capacity_result_release(&r);

    assert_int_equal(capacity_result_init(&r, (double[]){1}, 1, 0), KNEE_EINVAL);
    assert_int_equal(capacity_result_init(&r, (double[]){1}, 0, 3), KNEE_EINVAL);
}

/* ------------------------------------------------------------------ environment */

/* Burn `ns` of this process's CPU time. */
static void burn_cpu(uint64_t ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    volatile uint64_t x = 0;
    do {
        for (int i = 0; i < 10000; i++)
            x++;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while ((uint64_t)(t.tv_sec - t0.tv_sec) * NS_PER_S + (uint64_t)t.tv_nsec - (uint64_t)t0.tv_nsec < ns);
}

static void test_env_record(void **state)
{
    (void)state;
    struct capacity_env_snap snap;
    capacity_env_begin(&snap);
    /* a child that burns 200 ms of CPU: it must show among the busiest others */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        burn_cpu(200 * NS_PER_MS);
        _exit(0);
    }
    burn_cpu(60 * NS_PER_MS); /* knee's own CPU time */
    siginfo_t si;
    assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0); /* ended, still in /proc */
    struct capacity_env e;
    capacity_env_end(&snap, &e);
    int st;
    waitpid(pid, &st, 0);
    assert_true(e.have);
    assert_true(e.ncpus >= 1);
    assert_true(e.wall_s >= 0.06);
    assert_true(e.knee_cpu_s >= 0.05);
    assert_int_equal(strlen(e.start_wall), 20); /* 2025-01-01T00:00:00Z */
    assert_true(e.loadavg_before[0] >= 0 && e.loadavg_after[0] >= 0);
    for (size_t c = 0; c < e.ncpus; c++)
        assert_true(e.cpu[c].busy >= 0 && e.cpu[c].busy <= 1.0001);
    bool child = false;
    for (size_t i = 0; i < e.nprocs; i++) {
        assert_true(e.top[i].pid != getpid());
        if (i)
            assert_true(e.top[i].cpu_s <= e.top[i - 1].cpu_s);
        child |= e.top[i].pid == pid;
    }
    printf("# env: %zu CPUs, knee %.3f s, others %.0f%%, top %s %.2f s\n", e.ncpus, e.knee_cpu_s, 100 * e.others_share,
           e.nprocs ? e.top[0].comm : "-", e.nprocs ? e.top[0].cpu_s : 0);
    /* the child burnt 0.2 s; on a machine busy with others it may be beaten by three busier
     * processes, so it is only required when there are fewer */
    if (e.nprocs < CAPACITY_TOP_PROCS)
        assert_true(child);
}

/* ------------------------------------------------------------------ printers */

static char *capture(void (*fn)(FILE *, const struct capacity_config *, const struct capacity_result *),
                     const struct capacity_config *cfg, const struct capacity_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fn(f, cfg, r);
    fclose(f);
    return buf;
}

static void assert_has(const char *text, const char *needle)
{
    if (!strstr(text, needle)) {
        fprintf(stderr, "%s\n", text); /* whole: cmocka cuts a long message */
        fail_msg("'%s' not in the text above", needle);
    }
}

static void assert_json(const char *json, const char *expr)
{
    if (access("/usr/bin/python3", X_OK) != 0)
        return;
    char path[] = "/tmp/knee_test_capacity_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    char cmd[2048];
    assert_null(strpbrk(expr, "\"$`\\"));
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "
             "%s \"%s\"",
             path, expr);
    int rc = system(cmd);
    unlink(path);
    if (rc != 0)
        fail_msg("JSON fails '%s':\n%s", expr, json);
}

static void test_printers(void **state)
{
    (void)state;
    struct capacity_result r;
    const char *reps[] = {"+++--", "x-----", "+++--"};
    synth(&r, 5, reps, 3);
    snprintf(r.probe_target, sizeof r.probe_target, "http://127.0.0.1:9/ (in-process)");
    r.probe_rate = 575;
    r.reps[0].env.have = true;
    snprintf(r.reps[0].env.start_wall, sizeof r.reps[0].env.start_wall, "2025-01-01T00:00:00Z");
    r.reps[0].env.ncpus = 2;
    r.reps[0].env.busy = true;
    r.reps[0].env.others_share = 0.6;
    r.reps[0].env.nprocs = 1;
    r.reps[0].env.top[0] = (struct capacity_proc){.pid = 42, .comm = "cc1", .cpu_s = 3.5};
    snprintf(r.reps[1].step[0].reason, sizeof r.reps[1].step[0].reason, "p99<50ms measured 61 ms");
    r.cross.ran = true;
    r.cross.nsteps = 2;
    r.cross.step[0] =
        (struct capacity_closed_step){.connections = 1, .s = {.ran = true, .held = true, .achieved = 310}};
    r.cross.step[1] = (struct capacity_closed_step){.connections = 2, .s = {.ran = true, .achieved = 330}};
    snprintf(r.cross.step[1].s.reason, sizeof r.cross.step[1].s.reason, "p99<50ms measured 70 ms");
    r.cross.best = 0;
    r.cross.closed_loop = 310;
    capacity_vote(&r);
    capacity_compare(&r, 0.10);
    capacity_judge(&r, 250);

    struct run_threshold slo;
    parse_slo("p99<50ms", &slo);
    struct plan_target tc = {.name = "api", .url = "http://127.0.0.1:1/"};
    struct run_config base = {
        .plan.targets = &tc, .plan.ntargets = 1, .plan.open_loop = true, .plan.arrivals = RUN_ARRIVALS_POISSON};
    struct capacity_config cfg = {
        .base = &base,
        .rates = r.rates,
        .nrates = r.nrates,
        .reps = 3,
        .step_ns = 2 * NS_PER_S,
        .warmup_ns = NS_PER_S / 2,
        .settle_ns = NS_PER_S / 4,
        .slo = &slo,
        .nslo = 1,
        .cross_check = true,
        .agree = 0.10,
        .require = 250,
    };
    char *text = capture(capacity_print_text, &cfg, &r);
    assert_has(text, "knee capacity: 3 repetitions of a 5-rate ladder, open loop (poisson arrivals), SLO p99<50ms");
    assert_has(text, "100, 200, 300, 400, 500 /s");
    assert_has(text, "held 2/2  <- capacity");
    assert_has(text, "EXCLUDED");
    assert_has(text, "2 of 3");
    assert_has(text, "     machine        BUSY           -           -   (environment below)");
    assert_has(text, "200/s rep 2 (excluded)");
    assert_has(text, "knee curve (medians over the 2 valid repetitions; latency of ok responses)");
    assert_has(text, "ladder x repetitions (✔ held, ✘ not held; the p99 of ok responses)");
    assert_has(text, "its lag p99 > 5ms (10% of the SLO's p99<50ms)");
    assert_has(text, "cc1 (pid 42)");
    assert_has(text, "BUSY");
    assert_has(text, "closed loop 310.0/s at 1 connection;");
    assert_has(text, "inside the ladder's bracket: agree");
    assert_has(text, "repetition 2 excluded: probe failed");
    assert_has(text,
               "capacity 300/s at p99<50ms (2/3 repetitions valid, closed loop 310.0/s, inside the ladder's bracket: "
               "agree; regime undecided); --require 250/s met\n");
    /* no service times: no queue model, the closed loop is the second method, and the text says so */
    assert_has(text, "  queue model: not run (no queue model)\n");
    assert_has(text, "  regime: undecided (no queue model): the closed loop is compared as a second measurement\n");
    assert_has(text, "  second method: the closed loop, 310.0/s: +3.3% from the capacity, inside the ladder's bracket: "
                     "agree (--agree 10%)\n");
    assert_has(text, "  upper bound: the closed loop's highest throughput 330.0/s (2 connections): the ladder's 300/s "
                     "is within it\n");
    assert_null(strstr(text, "timer-slack"));
    free(text);

    char *json = capture(capacity_write_json, &cfg, &r);
    assert_json(json, "d['schema'] == 'knee-capacity/1' and d['capacity'] == 300 and d['verdict'] == 'valid'");
    assert_json(json, "d['slo'] == ['p99<50ms'] and d['exit_code'] == 0 and d['require_met'] is True");
    assert_json(json, "d['config']['probe_lag_limit'] == 5 and d['config']['latency_group'] == 'ok'");
    assert_json(json, "[g['rate'] for g in d['ladder']] == [100, 200, 300, 400, 500]");
    assert_json(json, "d['ladder'][2]['held_by'] == 2 and d['ladder'][2]['valid_reps'] == 2 and "
                      "d['ladder'][2]['held'] and not d['ladder'][3]['held']");
    assert_json(json, "all(set(r) >= {'held', 'reason', 'achieved', 'p50', 'p99', 'error_rate'} "
                      "for g in d['ladder'] for r in g['reps'])");
    assert_json(json, "[p['ok'] for p in d['probes']] == [True, False, True] and "
                      "all(set(p) >= {'planned', 'achieved', 'lag_p99', 'ok'} for p in d['probes'])");
    assert_json(json, "len(d['environment']) == 3 and d['environment'][0]['busy'] and "
                      "d['environment'][0]['top'][0]['comm'] == 'cc1'");
    assert_json(json, "d['cross_check']['closed_loop'] == 310 and d['cross_check']['agree'] is True and "
                      "d['cross_check']['difference'] == 0 and len(d['cross_check']['steps']) == 2");
    assert_json(json, "d['bracket'] == [300, 400] and d['nonmonotone'] == [] and d['valid_reps'] == 2");
    assert_json(json, "any('excluded' in x for x in d['reasons'])");
    assert_json(json, "d['config']['timer_slack_ms'] == 0");
    free(json);

    /* --timer-slack: the head says it as knee run's plan line does, the probe's rule names it,
     * the JSON records it */
    base.timer_slack_ns = 1500 * NS_PER_US;
    text = capture(capacity_print_text, &cfg, &r);
    assert_has(text, "knee capacity: 3 repetitions of a 5-rate ladder, open loop (poisson arrivals), SLO p99<50ms, "
                     "sends up to 1.500 ms late by --timer-slack\n");
    assert_has(text, "its lag p99 beyond --timer-slack > 5ms (10% of the SLO's p99<50ms)");
    free(text);
    json = capture(capacity_write_json, &cfg, &r);
    assert_json(json, "d['config']['timer_slack_ms'] == 1.5");
    free(json);
    base.timer_slack_ns = 0;

    /* --http3: the head and the JSON say h3 (without it: no line, http3 false) */
    text = capture(capacity_print_text, &cfg, &r);
    assert_null(strstr(text, "  protocol  "));
    free(text);
    base.http3 = true;
    text = capture(capacity_print_text, &cfg, &r);
    assert_has(text, "\n  protocol  h3 (HTTP/3 over QUIC, --http3): every step and the probe\n");
    free(text);
    json = capture(capacity_write_json, &cfg, &r);
    assert_json(json, "d['config']['http3'] is True");
    free(json);
    base.http3 = false;
    json = capture(capacity_write_json, &cfg, &r);
    assert_json(json, "d['config']['http3'] is False");
    free(json);

    /* invalid: the verdict line says INVALID and JSON capacity is null */
    r.cross.closed_loop = 900;
    capacity_compare(&r, 0.10);
    capacity_judge(&r, 0);
    char line[1024];
    FILE *f = fmemopen(line, sizeof line, "w");
    capacity_print_verdict(f, &cfg, &r);
    fclose(f);
    assert_non_null(strstr(line, "INVALID: the two methods disagree"));
    json = capture(capacity_write_json, &cfg, &r);
    assert_json(json, "d['capacity'] is None and d['verdict'] == 'invalid' and d['exit_code'] == 3 and "
                      "d['ladder_capacity'] == 300");
    free(json);
    capacity_result_release(&r);
}

/* ------------------------------------------------------------------ the queue model */

/* A service-time distribution: n samples of each of the values (ms) given. */
static void service_of(struct capacity_service *s, const double *ms, size_t nvalues, int64_t n)
{
    struct hdr h;
    assert_int_equal(hdr_init(&h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    for (size_t i = 0; i < nvalues; i++)
        hdr_record(&h, (int64_t)(ms[i] * 1e6), n);
    assert_int_equal(capacity_service_from_hdr(&h, s), 0);
    hdr_release(&h);
}

/* One target, the service times s, c servers, the SLO slo: the ladder's default windows (1 s of
 * warm-up, 5 s measured). */
static void model_init(struct capacity_queue_model *m, const struct capacity_service *s, bool poisson, uint32_t c,
                       const struct run_threshold *slo, size_t nslo)
{
    memset(m, 0, sizeof *m);
    m->poisson = poisson;
    m->seed = 1;
    m->ntargets = 1;
    m->share[0] = 1;
    m->all = s;
    m->servers = c;
    m->scale = 1;
    m->warmup_ns = NS_PER_S;
    m->window_ns = 5 * NS_PER_S;
    m->slo = slo;
    m->nslo = nslo;
}

/* The rate at which M/D/1's response-time quantile q reaches slo_s (model/model.h), by bisection. */
static double md1_rate(double service_s, double q, double slo_s)
{
    double lo = 0.01, hi = 0.999 / service_s;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) / 2, w = 0;
        struct model_md1_dist d;
        assert_int_equal(model_md1_dist_init(&d, mid, service_s), 0);
        assert_int_equal(model_md1_wait_quantile(&d, q, &w), 0);
        model_md1_dist_release(&d);
        if (w + service_s < slo_s)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void test_queue_model(void **state)
{
    (void)state;
    struct capacity_service d10, empty;
    const double ten = 10;
    service_of(&d10, &ten, 1, 1000);
    assert_int_equal(d10.n, 1);
    assert_true(fabs(d10.mean_ms - 10) < 0.01 && fabs(d10.p99_ms - 10) < 0.01);
    struct hdr h;
    hdr_init(&h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    assert_int_equal(capacity_service_from_hdr(&h, &empty), KNEE_EINVAL);
    assert_int_equal(empty.n, 0);
    hdr_release(&h);

    struct run_threshold slo[3];
    parse_slo("error_rate<1%", &slo[0]);
    parse_slo("p90<50ms", &slo[1]);
    parse_slo("count<5", &slo[2]);
    assert_false(capacity_queue_predicts(&slo[0]));
    assert_true(capacity_queue_predicts(&slo[1]));

    /* M/D/1, 10 ms, Poisson arrivals: p90 < 50 ms holds at 50/s and 65/s, not at 80/s or 100/s;
     * the predicted capacity is M/D/1's ~70/s (its p90 reaches 50 ms near rho 0.7), and the
     * same model gives the same numbers (deterministic) */
    struct capacity_queue_model m;
    model_init(&m, &d10, true, 1, slo, 2);
    struct capacity_queue_point p;
    assert_int_equal(capacity_queue_at(&m, 50, &p), 0);
    assert_true(p.held);
    assert_int_equal(p.windows, CAPACITY_QUEUE_WINDOWS);
    assert_true(p.value_ms > 10 && p.value_ms < 30);
    assert_int_equal(capacity_queue_at(&m, 65, &p), 0);
    assert_true(p.held);
    assert_int_equal(capacity_queue_at(&m, 80, &p), 0);
    assert_false(p.held);
    assert_true(p.value_ms > 50);
    assert_int_equal(capacity_queue_at(&m, 100, &p), 0);
    assert_false(p.held);
    assert_int_equal(p.held_by, 0);
    bool at_hi = true;
    double c1 = capacity_queue_capacity(&m, 200, &at_hi);
    double theory = md1_rate(0.010, 0.9, 0.050);
    printf("# M/D/1 10 ms, p90<50ms: %.3f/s (the M/D/1 formula: %.3f/s)\n", c1, theory);
    assert_false(at_hi);
    assert_true(fabs(c1 / theory - 1) < 0.03); /* 5 s windows from an empty queue queue a little less */
    assert_true(capacity_queue_capacity(&m, 200, NULL) == c1);
    /* replay: every window plans the ladder's own arrivals (one --seed), as its repetitions do;
     * with a constant service all windows are alike (held by all or none), and its one window is
     * the independent model's first */
    m.replay = true;
    for (double rate = 60; rate <= 90; rate += 10) {
        assert_int_equal(capacity_queue_at(&m, rate, &p), 0);
        assert_true(p.held_by == 0 || p.held_by == p.windows);
        struct capacity_queue_point one;
        m.windows = 1;
        m.replay = false;
        assert_int_equal(capacity_queue_at(&m, rate, &one), 0);
        assert_true(one.value_ms == p.value_ms);
        m.windows = 0;
        m.replay = true;
    }
    printf("# M/D/1 10 ms replayed: %.3f/s\n", capacity_queue_capacity(&m, 200, NULL));
    /* constant arrivals (D/D/1): no queue until the service is full, 100/s */
    model_init(&m, &d10, false, 1, slo, 2);
    double c2 = capacity_queue_capacity(&m, 200, &at_hi);
    printf("# D/D/1 10 ms, p90<50ms: %.3f/s\n", c2);
    assert_true(c2 > 99 && c2 < 101.5);
    /* four servers of 20 ms: constant arrivals up to their 200/s */
    const double twenty = 20;
    struct capacity_service d20;
    service_of(&d20, &twenty, 1, 1000);
    model_init(&m, &d20, false, 4, slo, 2);
    double c3 = capacity_queue_capacity(&m, 400, &at_hi);
    printf("# D/D/4 20 ms, p90<50ms: %.3f/s\n", c3);
    assert_true(c3 > 198 && c3 < 203);
    /* the scale multiplies every service time: 10 ms x 2 is 20 ms, half the rate */
    model_init(&m, &d10, false, 1, slo, 2);
    m.scale = 2;
    double c4 = capacity_queue_capacity(&m, 200, &at_hi);
    assert_true(c4 > 49.5 && c4 < 51);
    /* a variable service (half 2 ms, half 18 ms: mean 10 ms) queues more than a constant one */
    const double two[] = {2, 18};
    struct capacity_service var;
    service_of(&var, two, 2, 500);
    assert_int_equal(var.n, 2);
    model_init(&m, &var, true, 1, slo, 2);
    double c5 = capacity_queue_capacity(&m, 200, &at_hi);
    printf("# M/G/1 2|18 ms, p90<50ms: %.3f/s\n", c5);
    assert_true(c5 < c1 && c5 > 50);
    /* a loose SLO holds at the top of the search: at least 2 x the service rate's half */
    struct run_threshold loose;
    parse_slo("p90<60s", &loose);
    model_init(&m, &d10, true, 1, &loose, 1);
    assert_true(capacity_queue_capacity(&m, 90, &at_hi) == 90);
    assert_true(at_hi);
    /* errors: no service times, no predicted term, a rate <= 0 */
    model_init(&m, &d10, true, 1, slo, 1);
    assert_int_equal(capacity_queue_at(&m, 50, &p), KNEE_EINVAL);
    assert_true(isnan(capacity_queue_capacity(&m, 100, &at_hi)));
    model_init(&m, &d10, true, 1, slo, 2);
    assert_int_equal(capacity_queue_at(&m, 0, &p), KNEE_EINVAL);
    model_init(&m, &empty, true, 1, slo, 2);
    assert_int_equal(capacity_queue_at(&m, 50, &p), KNEE_EINVAL);
    capacity_service_release(&d10);
    capacity_service_release(&d20);
    capacity_service_release(&var);
}

/* A measurement of a one-worker service of D ms: the ladder 50..110/s with `held` ('+'/'-' per
 * rung, three repetitions alike), the closed loop's steps (1, 2, 4 connections) at 1000/D/s with
 * 1, 2, 4 x D of latency, its first step's latencies D ms (the service times). */
static void measured(struct capacity_result *r, const char *held, double d_ms, const struct run_threshold *slo,
                     struct capacity_config *cfg, struct run_config *base, struct plan_target *tc)
{
    static const double rates[] = {50, 60, 70, 80, 90, 100, 110};
    assert_int_equal(capacity_result_init(r, rates, 7, 3), 0);
    for (size_t i = 0; i < 3; i++) {
        r->reps[i].ran = r->reps[i].valid = true;
        for (size_t k = 0; k < 7; k++) {
            r->reps[i].step[k].ran = true;
            r->reps[i].step[k].held = held[k] == '+';
            r->reps[i].step[k].achieved = rates[k];
            r->reps[i].step[k].p99_ms = held[k] == '+' ? 40 : 200;
        }
    }
    capacity_vote(r);
    r->cross.ran = true;
    r->cross.nsteps = 3;
    for (size_t k = 0; k < 3; k++) {
        uint32_t c = 1u << k;
        double lat = d_ms * c;
        bool ok = lat < slo->value; /* the SLO's bound, ms */
        r->cross.step[k] = (struct capacity_closed_step){
            .connections = c, .s = {.ran = true, .held = ok, .achieved = 1000 / d_ms, .p99_ms = lat}};
        if (ok) {
            r->cross.best = (int)k;
            r->cross.closed_loop = 1000 / d_ms;
        }
    }
    service_of(&r->service_all, &d_ms, 1, 500);
    *tc = (struct plan_target){.name = "api", .url = "http://127.0.0.1:1/"};
    *base = (struct run_config){
        .plan.targets = tc, .plan.ntargets = 1, .plan.open_loop = true, .plan.arrivals = RUN_ARRIVALS_POISSON};
    base->plan.seed = 1;
    *cfg = (struct capacity_config){.base = base,
                                    .rates = r->rates,
                                    .nrates = r->nrates,
                                    .reps = 3,
                                    .step_ns = 5 * NS_PER_S,
                                    .warmup_ns = NS_PER_S,
                                    .slo = slo,
                                    .nslo = 1,
                                    .cross_check = true};
}

static void test_regime(void **state)
{
    (void)state;
    struct capacity_result r;
    struct capacity_config cfg;
    struct run_config base;
    struct plan_target tc;
    struct run_threshold slo;
    /* the issue's case: 10 ms of service, Poisson, p90<50ms; the ladder held 70/s, the closed
     * loop carried 100/s within the SLO: latency-bound, the queue model (~70/s) agrees */
    parse_slo("p90<50ms", &slo);
    measured(&r, "+++----", 10, &slo, &cfg, &base, &tc);
    capacity_queue_run(&cfg, &r);
    assert_true(r.cross.queue.ran);
    assert_int_equal(r.cross.queue.servers, 1);
    assert_true(fabs(r.cross.queue.scale - 1) < 1e-3); /* the histogram's 10 ms is 10.00x ms */
    assert_true(fabs(r.cross.queue.saturation - 100) < 1e-9);
    assert_string_equal(r.cross.queue.term_stat, "p90");
    assert_int_equal(r.cross.queue.cap_index, 2); /* 50, 60, 70 held; 80 not */
    capacity_compare(&r, 0.10);
    capacity_judge(&r, 0);
    printf("# queue %.3f/s; %s\n", r.cross.queue.capacity, r.cross.regime_why);
    assert_int_equal(r.cross.regime, CAPACITY_REGIME_LATENCY);
    assert_true(r.cross.second == r.cross.queue.capacity);
    assert_non_null(strstr(r.cross.regime_why, "latency-bound: the queue model holds the SLO up to "));
    assert_non_null(strstr(r.cross.regime_why, "22% below the closed loop's 100/s"));
    assert_true(r.cross.bound == 100 && !r.cross.above_bound);
    assert_true(r.cross.agree);
    assert_true(r.verdict.valid);
    assert_true(r.verdict.capacity == 70);
    assert_int_equal(r.verdict.exit_code, 0);
    char *text = capture(capacity_print_text, &cfg, &r);
    assert_has(text, "(3/3 repetitions valid, latency-bound: queue model 77.7/s, inside the ladder's bracket: agree; "
                     "the closed loop's 100.0/s bounds it)\n");
    assert_has(text, "  queue model: 1 server (Little: 100.0/s, the closed loop's highest throughput, x ");
    assert_has(text, "fed the ladder's poisson arrivals (seed 1), FCFS, 21 windows of 5s after 1s per rate\n");
    assert_has(text, "  regime: latency-bound: the queue model holds the SLO up to 77.7/s, 22% below the closed "
                     "loop's 100/s");
    assert_has(text, "  second method: the queue model, 77.7/s: +11.0% from the capacity, inside the ladder's "
                     "bracket: agree (--agree 10%)\n");
    free(text);
    char *json = capture(capacity_write_json, &cfg, &r);
    assert_json(json, "d['capacity'] == 70 and d['verdict'] == 'valid'");
    assert_json(json, "[d['cross_check'][k] for k in ('regime', 'method', 'bound', 'above_bound', 'agree')] == "
                      "['latency-bound', 'queue', 100, False, True] and 77 < d['cross_check']['second'] < 78.5");
    assert_json(json, "d['cross_check']['queue']['ran'] and d['cross_check']['queue']['servers'] == 1 and "
                      "[g['held'] for g in d['cross_check']['queue']['rungs']] == [True] * 3 + [False] * 4");
    free(json);
    capacity_result_release(&r);

    /* constant arrivals: the ladder held 100/s, the queue model too (no queue below the
     * service's rate): throughput-bound, the closed loop compared, agree */
    measured(&r, "++++++-", 10, &slo, &cfg, &base, &tc);
    base.plan.arrivals = RUN_ARRIVALS_CONSTANT;
    capacity_queue_run(&cfg, &r);
    capacity_compare(&r, 0.10);
    capacity_judge(&r, 0);
    assert_int_equal(r.cross.regime, CAPACITY_REGIME_THROUGHPUT);
    assert_true(r.cross.second == 100);
    assert_non_null(strstr(r.cross.regime_why, "throughput-bound: the queue model holds the SLO up to "));
    assert_true(r.verdict.valid && r.verdict.capacity == 100);
    capacity_result_release(&r);

    /* a loose SLO (many service times): throughput-bound even with Poisson arrivals */
    struct run_threshold loose;
    parse_slo("p90<500ms", &loose);
    measured(&r, "++++++-", 10, &loose, &cfg, &base, &tc);
    capacity_queue_run(&cfg, &r);
    capacity_compare(&r, 0.10);
    capacity_judge(&r, 0);
    assert_int_equal(r.cross.regime, CAPACITY_REGIME_THROUGHPUT);
    assert_true(r.verdict.valid);
    capacity_result_release(&r);

    /* latency-bound and a real disagreement: the ladder held only 50/s where the queue model
     * holds ~70/s: INVALID, the queue named, the likely cause the service slower under the
     * open loop */
    measured(&r, "+------", 10, &slo, &cfg, &base, &tc);
    r.reps[1].step[1].lag_p99_ms = 12.5; /* the generator late at 60/s in one repetition */
    capacity_queue_run(&cfg, &r);
    capacity_compare(&r, 0.10);
    capacity_judge(&r, 0);
    assert_int_equal(r.cross.regime, CAPACITY_REGIME_LATENCY);
    assert_false(r.cross.agree);
    assert_int_equal(r.verdict.exit_code, 3);
    assert_non_null(strstr(r.verdict.reasons[0], "the two methods disagree (latency-bound): the ladder says 50/s, "
                                                 "the queue model of the closed loop's service times predicts "));
    assert_true(has_reason(&r.verdict, "likely cause: at 60/s the queue predicts p90 "));
    assert_true(has_reason(&r.verdict, ", or the generator's lag (p99 up to 12.5 ms there: latency counts from the "
                                       "planned send, the model sends on time), or the machine was busy"));
    capacity_result_release(&r);

    /* the ladder above the closed loop's highest throughput: INVALID in every regime */
    measured(&r, "+++++++", 10, &loose, &cfg, &base, &tc);
    capacity_queue_run(&cfg, &r);
    capacity_compare(&r, 0.05);
    capacity_judge(&r, 0);
    assert_true(r.cross.above_bound);
    assert_false(r.cross.agree);
    assert_int_equal(r.verdict.exit_code, 3);
    assert_non_null(
        strstr(r.verdict.reasons[0],
               "the ladder held 110/s, above the closed loop's highest throughput (100/s at 1 connection) by +10%"));
    printf("# queue %.3f/s: %s\n", r.cross.queue.capacity, r.verdict.reasons[1]);
    /* p90<500ms in 5 s windows: the queue model too holds a rate above the service's */
    assert_true(r.cross.queue.capacity > 105);
    assert_true(has_reason(&r.verdict, "likely cause: the steps are too short for an overload to break the SLO: "
                                       "the queue model, whose service completes 100/s, holds it up to "));
    capacity_result_release(&r);
    /* the same ladder with p90<50ms: the queue model breaks it at ~77/s, so the ladder's 110/s
     * says the service changed (or the closed loop was held back) */
    measured(&r, "+++++++", 10, &slo, &cfg, &base, &tc);
    capacity_queue_run(&cfg, &r);
    capacity_compare(&r, 0.05);
    capacity_judge(&r, 0);
    assert_true(r.cross.above_bound);
    assert_int_equal(r.verdict.exit_code, 3);
    assert_true(has_reason(&r.verdict, "likely cause: the service changed between the ladder and the closed loop"));
    capacity_result_release(&r);

    /* an SLO without a response-time term: no queue, throughput-bound, the closed loop compared */
    struct run_threshold err;
    parse_slo("error_rate<1%", &err);
    measured(&r, "++++++-", 10, &slo, &cfg, &base, &tc);
    cfg.slo = &err;
    capacity_queue_run(&cfg, &r);
    capacity_compare(&r, 0.10);
    assert_false(r.cross.queue.ran);
    assert_true(r.cross.queue.no_latency_term);
    assert_int_equal(r.cross.regime, CAPACITY_REGIME_THROUGHPUT);
    assert_non_null(strstr(r.cross.regime_why, "the SLO bounds no response time"));
    capacity_result_release(&r);

    /* no service times (the closed loop's first step recorded none): undecided, the closed loop
     * compared as a second measurement, and why not said */
    measured(&r, "+++----", 10, &slo, &cfg, &base, &tc);
    capacity_service_release(&r.service_all);
    capacity_queue_run(&cfg, &r);
    capacity_compare(&r, 0.10);
    capacity_judge(&r, 0);
    assert_false(r.cross.queue.ran);
    assert_int_equal(r.cross.regime, CAPACITY_REGIME_UNDECIDED);
    assert_non_null(strstr(r.cross.regime_why, "undecided (the closed loop's first step has no latencies"));
    assert_int_equal(r.verdict.exit_code, 3);
    assert_true(has_reason(&r.verdict, "which no queue model could weigh here"));
    capacity_result_release(&r);
}

static void test_config_check(void **state)
{
    (void)state;
    struct run_threshold slo;
    parse_slo("p99<50ms", &slo);
    struct plan_target tc = {.name = "api", .url = "http://127.0.0.1:1/"};
    double rates[] = {100, 200};
    struct run_config base = {
        .plan.targets = &tc, .plan.ntargets = 1, .plan.open_loop = true, .timeout_ns = NS_PER_S, .keepalive = true};
    struct capacity_config cfg = {
        .base = &base,
        .rates = rates,
        .nrates = 2,
        .reps = 3,
        .step_ns = NS_PER_S,
        .slo = &slo,
        .nslo = 1,
    };
    char err[256];
    assert_int_equal(capacity_config_check(&cfg, err, sizeof err), 0);
    cfg.reps = 0;
    assert_int_equal(capacity_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--reps"));
    cfg.reps = 3;
    cfg.nslo = 0;
    assert_int_equal(capacity_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--slo"));
    cfg.nslo = 1;
    tc.rate = 50;
    assert_int_equal(capacity_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "@R"));
    tc.rate = 0;
    cfg.step_ns = NS_PER_MS;
    assert_int_equal(capacity_config_check(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--step"));
    cfg.step_ns = NS_PER_S;
    uint64_t windows;
    double secs;
    cfg.warmup_ns = NS_PER_S;
    cfg.settle_ns = NS_PER_S;
    capacity_plan(&cfg, &windows, &secs);
    assert_int_equal(windows, 9); /* 3 x (2 rates + 1 probe) */
    assert_true(fabs(secs - 27) < 1e-9);
    cfg.cross_check = true; /* the closed loop is not part of the plan's minimum */
    capacity_plan(&cfg, &windows, &secs);
    assert_int_equal(windows, 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ladder_parse),    cmocka_unit_test(test_ladder_make),
        cmocka_unit_test(test_step_delivered),  cmocka_unit_test(test_step_eval),
        cmocka_unit_test(test_probe),           cmocka_unit_test(test_probe_lag_limit),
        cmocka_unit_test(test_vote_majority),   cmocka_unit_test(test_vote_monotone),
        cmocka_unit_test(test_compare_bracket), cmocka_unit_test(test_judge),
        cmocka_unit_test(test_env_record),      cmocka_unit_test(test_printers),
        cmocka_unit_test(test_config_check),    cmocka_unit_test(test_probe_timer_slack),
        cmocka_unit_test(test_window_config),   cmocka_unit_test(test_queue_model),
        cmocka_unit_test(test_regime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
