/* Unit tests of run_progress's --live fields (src/load/engine.c's merge, account.c's counts)
 * against the in-process fixture server: each second's outcomes and status codes add up to the
 * run's requests (warm-up included), the warm-up's seconds say so, the lag limit and the thread
 * count are the run's, the CPU figures are sane; a refused port's seconds count transport
 * failures and no status. Exact checks only (no rate or latency is asserted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "load/run.h"
#include "reqlog/reqlog.h"
#include "unit/fixture_server.h"

#include <math.h>
#include <string.h>

struct seen {
    size_t calls;
    uint64_t sent, outcome[OUTCOME_COUNT], status200, status_other_codes, status_other, late;
    bool warmup_ok, lag_ok, cpu_ok, threads_ok, limit_ok;
    double warmup_s, limit_ms;
    uint32_t threads;
};

static void on_progress(void *ctx, const struct run_progress *p)
{
    struct seen *s = ctx;
    s->calls++;
    s->sent += p->sent;
    for (size_t i = 0; i < OUTCOME_COUNT; i++)
        s->outcome[i] += p->outcome[i];
    for (size_t i = 0; i < RUN_PROGRESS_STATUS_MAX && p->status[i].code; i++) {
        if (p->status[i].code == 200)
            s->status200 += p->status[i].count;
        else
            s->status_other_codes += p->status[i].count;
    }
    s->status_other += p->status_other;
    s->late += p->late;
    s->warmup_ok &= p->warmup == (p->start_s < s->warmup_s - 1e-9);
    s->lag_ok &= p->sent ? isfinite(p->lag_max_ms) && p->lag_max_ms >= 0 : isnan(p->lag_max_ms);
    s->lag_ok &= p->late <= p->sent;
    s->cpu_ok &=
        isfinite(p->cpu_cores) && p->cpu_cores >= 0 && p->cpu_busiest >= 0 && p->cpu_busiest <= p->cpu_cores + 1e-9;
    s->threads_ok &= p->threads == s->threads;
    s->limit_ok &= fabs(p->lag_limit_ms - s->limit_ms) < 1e-9;
}

static struct seen seen_init(double warmup_s, uint32_t threads, double limit_ms)
{
    return (struct seen){.warmup_ok = true,
                         .lag_ok = true,
                         .cpu_ok = true,
                         .threads_ok = true,
                         .limit_ok = true,
                         .warmup_s = warmup_s,
                         .threads = threads,
                         .limit_ms = limit_ms};
}

static void test_progress_adds_up(void **state)
{
    struct fixture_server *s = *state;
    struct plan_target tc = {.name = "t", .url = s->url};
    struct run_config cfg = fixture_run_config(&tc, 2);
    cfg.plan.open_loop = true;
    cfg.plan.rate = 400;
    cfg.plan.duration_ns = 2500 * NS_PER_MS;
    cfg.plan.warmup_ns = 500 * NS_PER_MS;
    cfg.lag_limit_ns = 5 * NS_PER_MS;
    cfg.timer_slack_ns = 1 * NS_PER_MS;
    struct seen v = seen_init(0.5, 2, 6.0); /* the limit: --lag-limit + --timer-slack */
    cfg.on_progress = on_progress;
    cfg.progress_ctx = &v;
    struct run_record res;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_true(v.calls >= 4); /* [0,0.5) [0.5,1) [1,2) [2,2.5) at least */
    uint64_t ok = res.all.counts.outcome[OUTCOME_OK] + res.all.warmup_counts.outcome[OUTCOME_OK];
    assert_int_equal(ok, 1000);
    assert_int_equal(v.outcome[OUTCOME_OK], 1000); /* every second's, warm-up included */
    for (int o = OUTCOME_OK + 1; o < OUTCOME_COUNT; o++)
        assert_int_equal(v.outcome[o], 0);
    assert_int_equal(v.sent, 1000);
    assert_int_equal(v.status200, 1000);
    assert_int_equal(v.status_other_codes + v.status_other, 0);
    assert_true(v.warmup_ok);
    assert_true(v.lag_ok);
    assert_true(v.cpu_ok);
    assert_true(v.threads_ok);
    assert_true(v.limit_ok);
    record_release(&res);
}

/* Nobody listens: every request a transport failure, no status, the default lag limit. */
static void test_progress_refused(void **state)
{
    (void)state;
    char url[64];
    fixture_refused_url(url, sizeof url);
    struct plan_target tc = {.name = "t", .url = url};
    struct run_config cfg = fixture_run_config(&tc, 1);
    cfg.plan.open_loop = true;
    cfg.plan.rate = 100;
    cfg.plan.requests = 50;
    struct seen v = seen_init(0, 1, (double)RUN_DEFAULT_LAG_LIMIT_NS / 1e6);
    cfg.on_progress = on_progress;
    cfg.progress_ctx = &v;
    struct run_record res;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    uint64_t ended = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        ended += v.outcome[o];
    assert_int_equal(ended, 50);
    assert_int_equal(v.outcome[OUTCOME_TRANSPORT], res.all.counts.outcome[OUTCOME_TRANSPORT]);
    assert_int_equal(v.outcome[OUTCOME_DROPPED], res.all.counts.outcome[OUTCOME_DROPPED]);
    assert_true(v.outcome[OUTCOME_TRANSPORT] > 0);
    assert_int_equal(v.status200 + v.status_other_codes + v.status_other, 0);
    assert_true(v.warmup_ok && v.lag_ok && v.cpu_ok && v.threads_ok && v.limit_ok);
    record_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        fixture_server_test(test_progress_adds_up),
        fixture_server_test(test_progress_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
