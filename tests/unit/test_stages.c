/* Unit tests for --stages: the piecewise-linear schedule (plan/schedule.h sched_init_segs: every
 * stage's constant arrivals equal its integral ±1, a stage at rate 0 plans nothing, the threads'
 * stride and the counts without generating; Poisson stage counts near their expectation for a
 * fixed seed), the plan's stage arithmetic (plan_stage_expected: exact, shards adding up; the
 * refusals), the flag's parser (cli/runopts.h runopts_parse_stages: values and the message naming
 * the stage), per-stage results (record/stages.h: counted by planned time, JSON round trip, the
 * strict reader's refusals) and stageN. thresholds. Nothing here is timed or touches the network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/runopts.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/json.h"
#include "plan/plan.h"
#include "plan/schedule.h"
#include "plan/shard.h"
#include "record/stages.h"
#include "record/threshold.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 100:3s, 100..1000:2s, 1000:1s, 0:1s, 50..0:2s: integrals 300, 1100, 1000, 0, 50 */
static const struct sched_seg SEGS[] = {
    {100, 100, 3}, {100, 1000, 2}, {1000, 1000, 1}, {0, 0, 1}, {50, 0, 2},
};
static const double INTEGRAL[] = {300, 1100, 1000, 0, 50};
static const double EDGE_S[] = {0, 3, 5, 6, 7, 9};
#define NSEG (sizeof SEGS / sizeof *SEGS)

/* Every planned time of the stream (thread k of T) counted by stage; returns the total. */
static uint64_t count_by_stage(bool poisson, uint64_t T, uint64_t k, uint64_t seed, uint64_t *per)
{
    struct sched s;
    sched_init_segs(&s, poisson, SEGS, NSEG, 1.0, 0, UINT64_MAX, UINT64_MAX, T, k, seed);
    memset(per, 0, NSEG * sizeof *per);
    uint64_t t, n = 0, prev = 0;
    while (sched_next(&s, &t)) {
        assert_true(t >= prev); /* in order */
        prev = t;
        size_t j = 0;
        while (j + 1 < NSEG && (double)t >= EDGE_S[j + 1] * 1e9)
            j++;
        assert_true((double)t < EDGE_S[NSEG] * 1e9); /* nothing past the last stage */
        per[j]++;
        n++;
    }
    return n;
}

static void test_constant_exact(void **state)
{
    (void)state;
    uint64_t per[NSEG];
    uint64_t n = count_by_stage(false, 1, 0, 1, per);
    for (size_t j = 0; j < NSEG; j++)
        assert_true(fabs((double)per[j] - INTEGRAL[j]) <= 1);
    assert_int_equal(per[3], 0); /* a stage at rate 0 plans nothing, even at its edge */
    assert_int_equal(n, 2450);
    /* the count without generating, at every edge */
    struct sched s;
    sched_init_segs(&s, false, SEGS, NSEG, 1.0, 0, UINT64_MAX, UINT64_MAX, 1, 0, 1);
    uint64_t before = 0;
    for (size_t j = 0; j < NSEG; j++) {
        uint64_t upto = sched_constant_count(&s, (uint64_t)(EDGE_S[j + 1] * 1e9));
        assert_int_equal(upto - before, per[j]);
        before = upto;
    }
    assert_true(fabs(sched_expected_count(&s, 9) - 2450) < 1e-6);
    assert_true(fabs(sched_expected_count(&s, 4) - (300 + 100 + 0.5 * 900 / 2)) < 1e-6);
    assert_true(isinf(sched_time_of(&s, 2450)));
    assert_true(fabs(sched_time_of(&s, 0) - 0) < 1e-12);
    assert_true(fabs(sched_time_of(&s, 2400) - 7) < 1e-9); /* past the silent stage */
    /* three threads take every third index of the same sequence */
    uint64_t sum[NSEG] = {0}, part[NSEG];
    for (uint64_t k = 0; k < 3; k++) {
        count_by_stage(false, 3, k, 1, part);
        for (size_t j = 0; j < NSEG; j++)
            sum[j] += part[j];
    }
    for (size_t j = 0; j < NSEG; j++)
        assert_int_equal(sum[j], per[j]);
}

/* A stage starting at 0 plans its first request at its own start; scale shares the rates. */
static void test_leading_zero_and_scale(void **state)
{
    (void)state;
    const struct sched_seg z[] = {{0, 0, 2}, {10, 10, 1}};
    struct sched s;
    sched_init_segs(&s, false, z, 2, 0.5, 0, UINT64_MAX, UINT64_MAX, 1, 0, 1);
    uint64_t t, n = 0;
    assert_true(sched_next(&s, &t));
    assert_int_equal(t, 2 * NS_PER_S);
    n = 1;
    while (sched_next(&s, &t))
        n++;
    assert_int_equal(n, 5); /* 10/s halved for 1 s */
}

static void test_poisson_expectation(void **state)
{
    (void)state;
    uint64_t per[NSEG], again[NSEG];
    count_by_stage(true, 1, 0, 7, per);
    for (size_t j = 0; j < NSEG; j++)
        assert_true(fabs((double)per[j] - INTEGRAL[j]) <= 5 * sqrt(INTEGRAL[j]) + 1); /* 5 sigma */
    assert_int_equal(per[3], 0);
    count_by_stage(true, 1, 0, 7, again); /* the seed reproduces it */
    assert_memory_equal(per, again, sizeof per);
    uint64_t sum[NSEG] = {0}, part[NSEG];
    for (uint64_t k = 0; k < 2; k++) {
        count_by_stage(true, 2, k, 7, part);
        for (size_t j = 0; j < NSEG; j++)
            sum[j] += part[j];
    }
    assert_memory_equal(sum, per, sizeof per);
}

static const struct plan_target ONE[] = {{.name = "a", .url = "http://127.0.0.1:1/"}};
static const struct run_stage STAGES[] = {
    {100, 100, 3 * NS_PER_S, false}, {100, 1000, 2 * NS_PER_S, false}, {1000, 1000, NS_PER_S, false},
    {0, 0, NS_PER_S, false},         {50, 0, 2 * NS_PER_S, false},
};

static struct plan stage_plan(void)
{
    return (struct plan){.targets = ONE,
                         .ntargets = 1,
                         .open_loop = true,
                         .stages = STAGES,
                         .nstages = 5,
                         .seed = 1,
                         .duration_ns = 9 * NS_PER_S};
}

static void test_plan_stages(void **state)
{
    (void)state;
    struct plan p = stage_plan();
    char err[256];
    assert_int_equal(plan_validate(&p, 1, err, sizeof err), 0);
    struct plan_share sh;
    assert_int_equal(plan_shares(&p, 1, &sh, err, sizeof err), 0);
    assert_true(fabs(sh.stage_share - 1) < 1e-12);
    assert_true(fabs(sh.rate_from - 2450.0 / 9) < 1e-9);
    uint64_t total = 0;
    for (size_t j = 0; j < 5; j++) {
        struct plan_expect x;
        plan_stage_expected(&p, &sh, j, &x);
        assert_true(x.exact);
        assert_true(fabs(x.planned - INTEGRAL[j]) <= 1);
        total += (uint64_t)x.planned;
        /* the shards' parts add up to the whole stage */
        double parts = 0;
        for (uint32_t i = 0; i < 3; i++) {
            struct plan q = p;
            q.shard.count = 3;
            q.shard.index = i;
            struct plan_expect y;
            plan_stage_expected(&q, &sh, j, &y);
            parts += y.planned;
        }
        assert_true(parts == x.planned);
    }
    struct plan_expect all;
    plan_expected(&p, &sh, &all);
    assert_true((double)total == all.planned);
    assert_int_equal(plan_stage_start_ns(&p, 3), 6 * NS_PER_S);
    assert_int_equal(plan_stage_end_ns(&p, 4), 9 * NS_PER_S);

    struct plan bad = p;
    bad.rate = 10;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--stages and --rate: give one (the stages set the rate over time)");
    bad = p;
    bad.requests = 5;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    bad = p;
    bad.duration_ns = NS_PER_S;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--stages and --duration: give one (the stages set the duration)");
    const struct run_stage zero[] = {{0, 0, NS_PER_S, false}};
    bad = p;
    bad.stages = zero;
    bad.nstages = 1;
    bad.duration_ns = NS_PER_S;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--stages: every stage has rate 0: nothing would be sent");
    /* the plan id: stages change it, a plan without keeps its own */
    struct plan_terms terms = {0};
    struct plan q = p;
    uint64_t id = plan_id(&q, &terms);
    struct run_stage other[5];
    memcpy(other, STAGES, sizeof other);
    other[2].to = 999;
    q.stages = other;
    assert_true(plan_id(&q, &terms) != id);
}

static void test_parse(void **state)
{
    (void)state;
    struct run_stage *st;
    size_t n;
    char err[256];
    assert_int_equal(runopts_parse_stages("100:30s,100..1k:2m,1000:5m,3000:10s,0:30s", &st, &n, err, sizeof err), 0);
    assert_int_equal(n, 5);
    assert_true(st[0].from == 100 && st[0].to == 100 && st[0].duration_ns == 30 * NS_PER_S);
    assert_true(st[1].from == 100 && st[1].to == 1000 && st[1].duration_ns == 120 * NS_PER_S);
    assert_true(st[4].from == 0 && st[4].to == 0);
    free(st);
    assert_int_equal(runopts_parse_stages("100:3", &st, &n, err, sizeof err), 0); /* a bare number: seconds */
    assert_int_equal(st[0].duration_ns, 3 * NS_PER_S);
    free(st);
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"100:30s,1k:1m,1000:5x", "--stages: stage 3 '1000:5x': '5x' is not a duration > 0 such as 30s or 2m"},
        {"abc:1s", "--stages: stage 1 'abc:1s': 'abc' is not a rate such as 500 or 10k"},
        {"100", "--stages: stage 1 '100': expected RATE:DURATION or FROM..TO:DURATION, e.g. 100..1000:2m"},
        {"100:1s,,5:1s", "--stages: stage 2 is empty"},
        {"100..:1s", "--stages: stage 1 '100..:1s': '' is not a rate such as 500 or 10k"},
        {"100:0s", "--stages: stage 1 '100:0s': '0s' is not a duration > 0 such as 30s or 2m"},
        {"100:", "--stages: stage 1 '100:': no duration after ':'"},
        {"4c:30s,10:1s", "--stages: stage 2 '10:1s': give all stages as rates or all as clients (Nc), not a mix"},
        {"10:1s,4c:30s", "--stages: stage 2 '4c:30s': give all stages as rates or all as clients (Nc), not a mix"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(runopts_parse_stages(bad[i].spec, &st, &n, err, sizeof err), KNEE_EINVAL);
        assert_string_equal(err, bad[i].msg);
        assert_null(st);
    }
}

/* A record with the stages above and a few requests counted into them. */
static void stage_record(struct run_record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->nstages = 5;
    rec->stages = record_stages_new(STAGES, 5);
    struct run_stage_result *s = rec->stages;
    assert_int_equal(record_stage_of(s, 5, 0), 0);
    assert_int_equal(record_stage_of(s, 5, 3 * NS_PER_S - 1), 0);
    assert_int_equal(record_stage_of(s, 5, 3 * NS_PER_S), 1);
    assert_int_equal(record_stage_of(s, 5, 9 * NS_PER_S), 5);
    /* planned in stage 2, answered in stage 3: stage 2's */
    record_stages_count(s, 5, 4 * NS_PER_S, 4 * NS_PER_S + 10, 5 * NS_PER_S + 500, OUTCOME_OK);
    record_stages_latency(s, 5, 4 * NS_PER_S, (int64_t)NS_PER_S + 500);
    record_stages_count(s, 5, 4 * NS_PER_S + 1, 0, 0, OUTCOME_DROPPED);
    record_stages_count(s, 5, NS_PER_S, NS_PER_S + 5, NS_PER_S + 9, OUTCOME_TIMEOUT);
    record_stages_count(s, 5, 10 * NS_PER_S, 10 * NS_PER_S, 10 * NS_PER_S, OUTCOME_OK); /* past the end: nowhere */
    record_stages_summarize(rec);
}

static void test_results_and_json(void **state)
{
    (void)state;
    struct run_record rec;
    stage_record(&rec);
    const struct run_stage_result *s = rec.stages;
    assert_int_equal(s[1].counts.planned, 2);
    assert_int_equal(s[1].counts.sent, 1);
    assert_int_equal(s[1].counts.dropped, 1);
    assert_int_equal(s[1].counts.outcome[OUTCOME_OK], 1);
    assert_int_equal(s[0].counts.outcome[OUTCOME_TIMEOUT], 1);
    assert_int_equal(s[1].events.completed_late, 1); /* done after its stage's window */
    assert_true(s[1].rates.window_s == 2);
    assert_true(fabs(s[1].lat.max - 1000) < 1);
    /* written and read back (strict, with the shard part) */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct jw j;
    jw_init(&j, f, false);
    jw_object_begin(&j);
    record_stages_write_json(&j, &rec, true);
    jw_object_end(&j);
    fclose(f);
    json_error_t je;
    json_t *root = json_loads(buf, 0, &je);
    assert_non_null(root);
    struct run_record back;
    memset(&back, 0, sizeof back);
    char err[256];
    assert_int_equal(record_stages_read_json(root, &back, true, err, sizeof err), 0);
    assert_int_equal(back.nstages, 5);
    assert_int_equal(back.stages[1].counts.planned, 2);
    assert_int_equal(back.stages[1].start_ns, 3 * NS_PER_S);
    assert_int_equal(back.stages[1].end_ns, 5 * NS_PER_S);
    assert_int_equal(back.stages[1].latency.total_count, 1);
    assert_int_equal(back.stages[1].events.completed_late, 1);
    assert_true(back.stages[1].lat.max == s[1].lat.max);
    /* a broken identity is refused by the strict reader */
    json_t *e = json_array_get(json_object_get(root, "stages"), 1);
    json_object_set_new(e, "planned", json_integer(9));
    record_release(&back);
    memset(&back, 0, sizeof back);
    assert_int_equal(record_stages_read_json(root, &back, true, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "stages[2]: planned 9 != sent 1 + dropped 1, or the outcomes do not add up");
    json_object_del(e, "sent");
    assert_int_equal(record_stages_read_json(root, &back, true, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "stages[2]: sent is missing or not a count");
    assert_int_equal(record_stages_read_json(root, &back, false, err, sizeof err), 0); /* the lenient reader */
    record_release(&back);
    json_decref(root);
    free(buf);
    /* added up (threads, shards) */
    struct run_stage_result *sum = record_stages_new(STAGES, 5);
    record_stages_add(sum, rec.stages, 5);
    record_stages_add(sum, rec.stages, 5);
    assert_int_equal(sum[1].counts.planned, 4);
    assert_int_equal(sum[1].latency.total_count, 2);
    record_stages_free(sum, 5);
    record_release(&rec);
}

static void test_thresholds(void **state)
{
    (void)state;
    const char *names[] = {"api", "stage9"};
    struct run_threshold t;
    char err[256];
    assert_int_equal(record_threshold_parse_names("stage2.p99<250ms", names, 2, &t, err, sizeof err), 0);
    assert_int_equal(t.stage, 1);
    assert_int_equal(t.kind, THR_STAT);
    assert_int_equal(record_threshold_parse_names("stage2.error_rate<1%", names, 2, &t, err, sizeof err), 0);
    assert_int_equal(t.kind, THR_ERROR_RATE);
    assert_int_equal(record_threshold_parse_names("stage9.p99<1s", names, 2, &t, err, sizeof err), 0);
    assert_int_equal(t.stage, THR_NO_STAGE); /* the target named stage9 */
    assert_int_equal(t.target, 1);
    assert_int_equal(record_threshold_parse_names("p99<1s", names, 2, &t, err, sizeof err), 0);
    assert_int_equal(t.stage, THR_NO_STAGE);
    assert_int_equal(record_threshold_parse_names("stage0.p99<1s", names, 2, &t, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(record_threshold_parse_names("stage2.status.5xx==0", names, 2, &t, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(record_threshold_parse_names("stage2.lag.p99<1s", names, 2, &t, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(record_threshold_parse_names("stage2.api.p99<1s", names, 2, &t, err, sizeof err), KNEE_EINVAL);
    struct run_record rec;
    stage_record(&rec);
    record_threshold_parse_names("stage2.max<2s", names, 2, &t, err, sizeof err);
    record_threshold_eval(&t, &rec);
    assert_true(t.pass && fabs(t.measured - 1000) < 1);
    record_threshold_parse_names("stage2.dropped==1", names, 2, &t, err, sizeof err);
    record_threshold_eval(&t, &rec);
    assert_true(t.pass);
    record_threshold_parse_names("stage4.p99<1s", names, 2, &t, err, sizeof err); /* no sample: fails */
    record_threshold_eval(&t, &rec);
    assert_false(t.pass);
    record_threshold_parse_names("stage7.p99<1s", names, 2, &t, err, sizeof err); /* no such stage */
    record_threshold_eval(&t, &rec);
    assert_false(t.pass);
    assert_true(isnan(t.measured));
    record_release(&rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_exact),
        cmocka_unit_test(test_leading_zero_and_scale),
        cmocka_unit_test(test_poisson_expectation),
        cmocka_unit_test(test_plan_stages),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_results_and_json),
        cmocka_unit_test(test_thresholds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
