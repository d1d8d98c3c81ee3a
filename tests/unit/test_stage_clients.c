/* Unit tests for closed-loop stages (--stages 4c:30s,4..64c:2m): the parser's Nc forms and their
 * refusals (cli/runopts.h runopts_parse_stages), the count of clients over time and each rank's
 * toggles (plan/clients.h: the floor of the line, exact to the ns and consistent with the count),
 * the ranks dealt to targets by weight and to shards (every prefix split within one client, the
 * shards' parts adding up to the count), the plan's checks and shares (plan_validate, plan_shares),
 * the plan id, and the per-stage JSON's unit (record/stages.h). Nothing here is timed or touches
 * the network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/runopts.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/json.h"
#include "plan/clients.h"
#include "plan/plan.h"
#include "plan/shard.h"
#include "record/stages.h"
#include "runreport/runreport.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U "http://127.0.0.1:1/"

/* 2c:2s, 2..6c:3s, 0c:1s, 6..3c:3s: the e2e test's shape with a pause and a ramp down */
static const struct run_stage ST[] = {
    {2, 2, 2 * NS_PER_S, true},
    {2, 6, 3 * NS_PER_S, true},
    {0, 0, NS_PER_S, true},
    {6, 3, 3 * NS_PER_S, true},
};
#define NST (sizeof ST / sizeof *ST)

static void test_parse(void **state)
{
    (void)state;
    struct run_stage *st;
    size_t n;
    char err[256];
    assert_int_equal(runopts_parse_stages("4c:30s,4..64c:2m,0c:10s,8c..2c:1s", &st, &n, err, sizeof err), 0);
    assert_int_equal(n, 4);
    assert_true(st[0].clients && st[0].from == 4 && st[0].to == 4 && st[0].duration_ns == 30 * NS_PER_S);
    assert_true(st[1].clients && st[1].from == 4 && st[1].to == 64 && st[1].duration_ns == 120 * NS_PER_S);
    assert_true(st[2].clients && st[2].from == 0 && st[2].to == 0);
    assert_true(st[3].clients && st[3].from == 8 && st[3].to == 2);
    free(st);
    assert_int_equal(runopts_parse_stages("100:1s", &st, &n, err, sizeof err), 0);
    assert_false(st[0].clients);
    free(st);
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"x..4c:1s", "--stages: stage 1 'x..4c:1s': expected clients such as 4c or 4..64c (whole numbers 0..1000000)"},
        {"4c:1s,1.5c:1s",
         "--stages: stage 2 '1.5c:1s': expected clients such as 4c or 4..64c (whole numbers 0..1000000)"},
        {"2000000c:1s",
         "--stages: stage 1 '2000000c:1s': expected clients such as 4c or 4..64c (whole numbers 0..1000000)"},
        {"4c..5x6c:1s",
         "--stages: stage 1 '4c..5x6c:1s': expected clients such as 4c or 4..64c (whole numbers 0..1000000)"},
        {"4c:0s", "--stages: stage 1 '4c:0s': '0s' is not a duration > 0 such as 30s or 2m"},
        {"4c:1s,5:1s", "--stages: stage 2 '5:1s': give all stages as rates or all as clients (Nc), not a mix"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(runopts_parse_stages(bad[i].spec, &st, &n, err, sizeof err), KNEE_EINVAL);
        assert_string_equal(err, bad[i].msg);
        assert_null(st);
    }
}

static void test_count_over_time(void **state)
{
    (void)state;
    assert_int_equal(plan_clients_peak(ST, NST), 6);
    assert_int_equal(plan_clients_at(ST, NST, 0), 2);
    assert_int_equal(plan_clients_at(ST, NST, 2 * NS_PER_S - 1), 2);
    /* 2..6 over 3 s: the line reaches 3 at 0.75 s, 4 at 1.5 s, 5 at 2.25 s; 6 only at its end */
    assert_int_equal(plan_clients_at(ST, NST, 2 * NS_PER_S + 750000000 - 1), 2);
    assert_int_equal(plan_clients_at(ST, NST, 2 * NS_PER_S + 750000000), 3);
    assert_int_equal(plan_clients_at(ST, NST, 2 * NS_PER_S + 1500000000), 4);
    assert_int_equal(plan_clients_at(ST, NST, 5 * NS_PER_S - 1), 5);
    assert_int_equal(plan_clients_at(ST, NST, 5 * NS_PER_S), 0); /* 0c */
    assert_int_equal(plan_clients_at(ST, NST, 6 * NS_PER_S), 6); /* 6..3 starts at 6 */
    assert_int_equal(plan_clients_at(ST, NST, 7 * NS_PER_S), 5);
    assert_int_equal(plan_clients_at(ST, NST, 9 * NS_PER_S - 1), 3);
    assert_int_equal(plan_clients_at(ST, NST, 9 * NS_PER_S), 0); /* past the stages */
}

/* Every rank's toggles, walked from t0 with plan_client_active, agree with plan_clients_at at the
 * toggles and just before them, and a toggle happens exactly where the count crosses the rank. */
static void test_toggles_agree(void **state)
{
    (void)state;
    for (uint32_t k = 1; k <= 6; k++) {
        uint64_t t = 0, next;
        int toggles = 0;
        bool on = plan_client_active(ST, NST, k, t, &next);
        assert_true(on == (plan_clients_at(ST, NST, t) >= k));
        while (next != UINT64_MAX) {
            assert_true(next > t);
            assert_true((plan_clients_at(ST, NST, next - 1) >= k) == on); /* unchanged up to the toggle */
            t = next;
            bool now = plan_client_active(ST, NST, k, t, &next);
            assert_true(now == (plan_clients_at(ST, NST, t) >= k));
            assert_true(now != on); /* a toggle is a change */
            on = now;
            assert_true(++toggles < 10);
        }
        assert_false(on); /* every client stops, at the end at the latest */
        assert_true(t <= 9 * NS_PER_S);
    }
    /* rank 3: on at 2.75 s, off at 5 s (0c), on at 6 s, off at 9 s */
    uint64_t next;
    assert_false(plan_client_active(ST, NST, 3, 0, &next));
    assert_int_equal(next, 2 * NS_PER_S + 750000000);
    assert_true(plan_client_active(ST, NST, 3, next, &next));
    assert_int_equal(next, 5 * NS_PER_S);
    assert_false(plan_client_active(ST, NST, 3, next, &next));
    assert_int_equal(next, 6 * NS_PER_S);
    assert_true(plan_client_active(ST, NST, 3, next, &next));
    assert_int_equal(next, 9 * NS_PER_S);
    /* rank 6 runs only in the ramp down's first third (6..3 over 3 s: the line is >= 6 at 0 only) */
    assert_false(plan_client_active(ST, NST, 6, 0, &next));
    assert_int_equal(next, 6 * NS_PER_S);
    assert_true(plan_client_active(ST, NST, 6, next, &next));
    assert_int_equal(next, 6 * NS_PER_S + 1);
    /* rank 7 never runs */
    assert_false(plan_client_active(ST, NST, 7, 0, &next));
    assert_int_equal(next, UINT64_MAX);
}

static void test_ranks(void **state)
{
    (void)state;
    const double w[] = {1, 3}; /* target 1 weighs three times target 0 */
    for (uint32_t c = 0; c <= 40; c++) {
        uint32_t split[2];
        plan_clients_split(w, 2, c, split);
        assert_int_equal(split[0] + split[1], c);
        assert_true(fabs((double)split[1] - 0.75 * c) < 1); /* every prefix within one client */
    }
    /* shards: every target's ranks of shards 0..2 are disjoint, sorted and cover its ranks */
    uint32_t split[2];
    plan_clients_split(w, 2, 40, split);
    uint32_t seen[41] = {0};
    for (uint32_t I = 0; I < 3; I++) {
        uint32_t n[2] = {(uint32_t)plan_shard_share(split[0], I, 3), (uint32_t)plan_shard_share(split[1], I, 3)};
        uint32_t r0[40], r1[40];
        uint32_t *out[2] = {r0, r1};
        plan_clients_ranks(w, 2, 40, I, 3, out, n);
        for (size_t i = 0; i < 2; i++)
            for (uint32_t m = 0; m < n[i]; m++) {
                assert_true(out[i][m] >= 1 && out[i][m] <= 40);
                assert_true(m == 0 || out[i][m] > out[i][m - 1]);
                seen[out[i][m]]++;
            }
    }
    for (uint32_t k = 1; k <= 40; k++)
        assert_int_equal(seen[k], 1);
    /* one target, one shard: ranks 1..n */
    const double one = 1;
    uint32_t r[5], n5 = 5;
    uint32_t *o1[1] = {r};
    plan_clients_ranks(&one, 1, 5, 0, 1, o1, &n5);
    for (uint32_t m = 0; m < 5; m++)
        assert_int_equal(r[m], m + 1);
}

static void test_plan(void **state)
{
    (void)state;
    static const struct plan_target two[] = {{.name = "a", .url = U}, {.name = "b", .url = U, .weight = 3}};
    struct plan p = {.targets = two, .ntargets = 2, .stages = ST, .nstages = NST, .duration_ns = 9 * NS_PER_S};
    char err[256];
    assert_true(plan_stages_clients(&p));
    assert_int_equal(plan_validate(&p, 2, err, sizeof err), 0);
    struct plan_share sh[2];
    assert_int_equal(plan_shares(&p, 1, sh, err, sizeof err), 0);
    assert_int_equal(sh[0].clients + sh[1].clients, 6);
    assert_true(sh[0].clients == 2 && sh[1].clients == 4);
    assert_int_equal(sh[1].groups, 4);
    assert_int_equal(sh[0].limit, UINT64_MAX);
    assert_int_equal(plan_shares(&p, 3, sh, err, sizeof err), 0); /* --streams 3: clients stay, groups of 3 */
    assert_true(sh[0].clients == 2 && sh[0].groups == 1 && sh[1].clients == 4 && sh[1].groups == 2);
    /* shards: this shard's part of each target's clients */
    struct plan q = p;
    q.shard.count = 2;
    q.shard.index = 1;
    assert_int_equal(plan_shares(&q, 1, sh, err, sizeof err), 0);
    assert_true(sh[0].clients == 1 && sh[1].clients == 2);
    /* refusals */
    struct plan bad = p;
    bad.connections = 4;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--stages of clients and --connections: give one (the stages give the clients)");
    static const struct plan_target own[] = {{.name = "a", .url = U, .connections = 2}};
    bad = p;
    bad.targets = own;
    bad.ntargets = 1;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--target a: @Nc and --stages of clients: give one (the stages give the clients)");
    bad = p;
    bad.open_loop = true;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--stages of clients (Nc) make a closed loop: no --rate, --ramp or target @RATE");
    struct run_stage mix[2] = {{2, 2, NS_PER_S, true}, {5, 5, NS_PER_S, false}};
    bad = p;
    bad.stages = mix;
    bad.nstages = 2;
    bad.duration_ns = 2 * NS_PER_S;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--stages: stage 2: give all stages as rates or all as clients (Nc), not a mix");
    struct run_stage half[1] = {{1.5, 1.5, NS_PER_S, true}};
    bad.stages = half;
    bad.nstages = 1;
    bad.duration_ns = NS_PER_S;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--stages: stage 1: clients must be whole numbers 0..1000000");
    struct run_stage none[1] = {{0, 0, NS_PER_S, true}};
    bad.stages = none;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--stages: every stage has clients 0: nothing would be sent");
    /* 1 client for 2 targets: one of them gets none */
    struct run_stage one[1] = {{1, 1, NS_PER_S, true}};
    bad.stages = one;
    assert_int_equal(plan_validate(&bad, 1, err, sizeof err), 0);
    assert_int_equal(plan_shares(&bad, 1, sh, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "target a gets no client: the stages' peak of 1 clients is shared by 2 targets (raise it "
                             "in --stages)");
    /* the plan id: 4c is not 4/s */
    struct run_stage rate[NST];
    memcpy(rate, ST, sizeof rate);
    for (size_t j = 0; j < NST; j++)
        rate[j].clients = false;
    struct plan_terms terms = {0};
    struct plan r = p;
    r.stages = rate;
    assert_true(plan_id(&p, &terms) != plan_id(&r, &terms));
}

static void test_json_unit(void **state)
{
    (void)state;
    struct run_record rec;
    memset(&rec, 0, sizeof rec);
    rec.nstages = NST;
    rec.stages = record_stages_new(ST, NST);
    assert_true(rec.stages[1].clients);
    record_stages_summarize(&rec);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct jw j;
    jw_init(&j, f, false);
    jw_object_begin(&j);
    record_stages_write_json(&j, &rec, false);
    jw_object_end(&j);
    fclose(f);
    assert_non_null(strstr(buf, "\"unit\":\"clients\""));
    json_error_t je;
    json_t *root = json_loads(buf, 0, &je);
    assert_non_null(root);
    struct run_record back;
    memset(&back, 0, sizeof back);
    char err[256];
    assert_int_equal(record_stages_read_json(root, &back, true, err, sizeof err), 0);
    assert_true(back.stages[1].clients && back.stages[1].from == 2 && back.stages[1].to == 6);
    record_release(&back);
    /* no unit (a run before closed-loop stages): a rate; an unknown unit: refused by the strict reader */
    json_t *e = json_array_get(json_object_get(root, "stages"), 0);
    json_object_del(e, "unit");
    memset(&back, 0, sizeof back);
    assert_int_equal(record_stages_read_json(root, &back, true, err, sizeof err), 0);
    assert_false(back.stages[0].clients);
    record_release(&back);
    json_object_set_new(e, "unit", json_string("users"));
    memset(&back, 0, sizeof back);
    assert_int_equal(record_stages_read_json(root, &back, true, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "stages[1]: unit is neither \"rps\" nor \"clients\"");
    assert_int_equal(record_stages_read_json(root, &back, false, err, sizeof err), 0); /* the lenient reader */
    record_release(&back);
    json_decref(root);
    free(buf);
    record_release(&rec);
}

/* The summary's head and its stage rows name the clients. */
static void test_text(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct runreport_head h = {
        .keepalive = true, .duration_s = 9, .threads = 2, .client_stages = NST, .clients_peak = 6};
    runreport_print_head(f, &h);
    struct run_record rec;
    memset(&rec, 0, sizeof rec);
    rec.nstages = NST;
    rec.stages = record_stages_new(ST, NST);
    record_stages_summarize(&rec);
    runreport_print_stages(f, &rec);
    fclose(f);
    assert_non_null(strstr(buf, "knee run: closed loop, 4 stages up to 6 clients, 9 s, 2 threads\n"));
    assert_non_null(strstr(buf, "\n  #   clients "));
    assert_non_null(strstr(buf, "\n  2   2 -> 6 clients "));
    assert_non_null(strstr(buf, "\n  3   0 clients "));
    free(buf);
    record_release(&rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),         cmocka_unit_test(test_count_over_time),
        cmocka_unit_test(test_toggles_agree), cmocka_unit_test(test_ranks),
        cmocka_unit_test(test_plan),          cmocka_unit_test(test_json_unit),
        cmocka_unit_test(test_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
