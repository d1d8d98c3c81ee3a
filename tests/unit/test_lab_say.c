/* Unit tests for the lab's sentences (src/lab): every experiment's "what this run shows" is
 * driven with synthetic results — a round knee run calls generator-limited, numbers that
 * double — and the words are checked: the round is named first, no conclusion is drawn from
 * it, and changes read as signed percentages and ratios (+100%, 2.00×), never |a−b|/max. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lab/internal.h"
#include "lab/lab.h"
#include "unit/capture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void gl(struct lab_validity *v)
{
    v->generator_limited = true;
    snprintf(v->warning, sizeof v->warning,
             "GENERATOR-LIMITED: the generator, not the service, shaped this run: sent 97.0%% of planned requests "
             "on time (floor 99%%), lag p99 150.000 ms (limit 1.000 ms)");
}

static void summary_of(struct summary *s, double p50, double p99, double mean)
{
    memset(s, 0, sizeof *s);
    s->count = 10000;
    s->p50 = p50;
    s->p90 = p50 * 1.5;
    s->p95 = p50 * 2;
    s->p99 = p99;
    s->p999 = p99 * 1.2;
    s->max = p99 * 2;
    s->mean = mean;
    s->stdev = mean / 2;
}

/* A clean knee ladder (heap; the caller frees it): 10, 50, 70 and 90/s against 10 ms of work,
 * every row sent on plan with a lag p99 of 0.2 ms and an M/D/1 mean latency. */
static struct lab_knee_result *knee_ladder_new(void)
{
    struct lab_knee_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    const double rates[] = {10, 50, 70, 90};
    r->nrows = 4;
    for (size_t i = 0; i < 4; i++) {
        struct lab_knee_row *w = &r->row[i];
        w->rate = rates[i];
        w->sent_rate = rates[i];
        w->work_mean_ms = 10;
        double rho = rates[i] / 100;
        w->mm1_mean_ms = 10 / (1 - rho);
        w->md1_mean_ms = 10 + rho * 10 / (2 * (1 - rho));
        summary_of(&w->latency, w->md1_mean_ms, w->mm1_mean_ms * 3, w->md1_mean_ms);
        w->l_measured = w->l_little = rho;
        w->lag_p99_ms = 0.2;
    }
    return r;
}

/* The article's stats run, clean: every round valid, numbers that tell their story. */
static void stats_result(struct lab_stats_result *r)
{
    memset(r, 0, sizeof *r);
    r->nrounds = 3;
    const double rates[3][2] = {{0, 0}, {100, 300}, {100, 550}};
    for (int i = 0; i < 3; i++) {
        struct lab_stats_round *o = &r->round[i];
        snprintf(o->label, sizeof o->label, "round %d", i + 1);
        o->open_loop = i > 0;
        o->rate[0] = rates[i][0];
        o->rate[1] = rates[i][1];
        o->accounting_ok = true;
        o->lag_p99_ms[0] = o->lag_p99_ms[1] = i ? 0.4 : NAN;
        o->slow_a = 100;
        summary_of(&o->latency[LAB_A], 5, 217, 12);
        summary_of(&o->latency[LAB_B], 5, 20, 6);
        summary_of(&o->latency[LAB_AB], 5, 150, 8);
        memcpy(o->service, o->latency, sizeof o->service);
    }
    r->round[0].latency[LAB_A].p99 = 30; /* the closed loop hides the stalls */
    r->avg_of_p99s_ms = 118.5;
    r->real_p99_ms = 150;
    r->prom_p99_ms = 240;
    r->prom_p99_lo_ms = 100;
    r->prom_p99_hi_ms = 250;
}

static void test_change(void **state)
{
    (void)state;
    char b[48];
    assert_string_equal(lab_change(b, sizeof b, 217, 434), "+100% (2.00×)");
    assert_string_equal(lab_change(b, sizeof b, 434, 217), "−50% (0.50×)");
    assert_string_equal(lab_change(b, sizeof b, 10, 10.01), "±0% (1.00×)");
    assert_string_equal(lab_change(b, sizeof b, 0, 5), "-");
    assert_string_equal(lab_change(b, sizeof b, NAN, 5), "-");
}

static void test_validity_of(void **state)
{
    (void)state;
    struct run_record res;
    memset(&res, 0, sizeof res);
    char *w[3] = {"interrupted: planning stopped early at 1.00 s; the numbers cover what ran",
                  "GENERATOR-LIMITED: the generator, not the service, shaped this run: lag p99 150.000 ms",
                  "warm-up: 100 requests planned in the first 1 s are left out of these statistics"};
    res.warnings.items = w;
    res.warnings.n = 3;
    struct lab_validity v;
    lab_validity_of(&res, &v); /* not generator-limited: nothing to say, whatever the warnings */
    assert_false(v.generator_limited);
    assert_string_equal(v.warning, "");
    res.generator_limited = true;
    lab_validity_of(&res, &v);
    assert_true(v.generator_limited);
    assert_string_equal(v.warning, w[1]);
    res.warnings.n = 0; /* the engine's verdict without a warning still counts */
    lab_validity_of(&res, &v);
    assert_true(v.generator_limited);
    assert_non_null(strstr(v.warning, "GENERATOR-LIMITED"));

    /* the round's warnings as knee run prints them, announced first, warm-up note left out */
    res.warnings.n = 3;
    char *text = NULL;
    CAPTURE(text, lab_print_round_warnings(out, "  ", "round 3", &res));
    assert_non_null(strstr(text, "  ! round 3 is GENERATOR-LIMITED"));
    assert_true(strstr(text, "round 3 is GENERATOR-LIMITED") < strstr(text, "! GENERATOR-LIMITED: the generator"));
    assert_non_null(strstr(text, "no conclusion about the servers is drawn from it"));
    assert_null(strstr(text, "warm-up:"));
    free(text);
}

/* The stats experiment's fill reads knee run's verdict off the round, never a rule of its own. */
static void test_stats_fill_reads_verdict(void **state)
{
    (void)state;
    struct run_target_result t[2];
    memset(t, 0, sizeof t);
    struct lab_req req[4];
    memset(req, 0, sizeof req);
    for (int i = 0; i < 4; i++) {
        req[i].start_s = i * 0.01;
        req[i].latency_ms = 160 + i;
        req[i].service_ms = 10;
        req[i].lag_ms = 150 + i;
        req[i].target = (uint32_t)(i % 2);
    }
    struct lab_round rd;
    memset(&rd, 0, sizeof rd);
    rd.res.targets = t;
    rd.res.ntargets = 2;
    rd.res.window_s = 1;
    rd.req = req;
    rd.nreq = 4;
    const double rate[2] = {100, 550};
    const unsigned clients[2] = {0, 0};
    struct lab_stats_round o;
    lab_stats_fill_round(&rd, true, rate, clients, "busy", &o);
    assert_false(o.valid.generator_limited); /* 150 ms of lag, yet the engine said nothing: neither does the lab */
    assert_true(o.lag_p99_ms[1] > 150);
    rd.res.generator_limited = true;
    lab_stats_fill_round(&rd, true, rate, clients, "busy", &o);
    assert_true(o.valid.generator_limited);
}

static void test_stats_generator_limited_round(void **state)
{
    (void)state;
    struct lab_stats_result r;
    stats_result(&r);
    /* round 3 at 550/s: lag p99 150 ms, A's p99 doubled, B's planned p99 far above its sent p99 */
    struct lab_stats_round *bz = &r.round[2];
    gl(&bz->valid);
    bz->lag_p99_ms[0] = bz->lag_p99_ms[1] = 150;
    bz->latency[LAB_A].p99 = 434;
    bz->latency[LAB_B].p99 = 170;
    bz->service[LAB_B].p99 = 20;
    char *text = NULL;
    CAPTURE(text, lab_stats_explain(out, &r, 800));
    unwrap(text);
    /* said first: the first sentence names the round and its verdict */
    char *first = strstr(text, "\n- ");
    assert_non_null(first);
    assert_true(strncmp(first, "\n- round 3 (round 3) was GENERATOR-LIMITED", 42) == 0);
    assert_non_null(strstr(text, "lag p99 150.000 ms")); /* knee run's own warning, quoted */
    /* no conclusion from it as if it were clean */
    assert_null(strstr(text, "kept its plan"));
    assert_null(strstr(text, "round-to-round noise"));
    assert_null(strstr(text, "noise alone"));
    assert_null(strstr(text, "grew faster than the load"));
    assert_null(strstr(text, "apart"));
    assert_non_null(strstr(text, "the change is put down neither to noise nor to the servers"));
    assert_non_null(strstr(text, "+100% (2.00×)")); /* 217 -> 434 */
    assert_non_null(strstr(text, "knee run: GENERATOR-LIMITED"));
    free(text);
}

static void test_stats_clean_rounds(void **state)
{
    (void)state;
    struct lab_stats_result r;
    stats_result(&r);
    r.round[2].latency[LAB_A].p99 = 434; /* A doubled with its own load unchanged */
    char *text = NULL;
    CAPTURE(text, lab_stats_explain(out, &r, 800));
    unwrap(text);
    assert_null(strstr(text, "GENERATOR-LIMITED"));
    assert_non_null(strstr(text, "its p99 was 217.0 and 434.0 ms (+100% (2.00×))"));
    assert_null(strstr(text, "noise alone"));
    assert_null(strstr(text, "% apart"));
    assert_non_null(strstr(text, "only repeated runs can tell"));
    assert_non_null(strstr(text, "the generator kept its plan")); /* lag 0.4 ms, p99s equal */
    assert_non_null(strstr(text, "coordinated omission"));
    free(text);

    /* a small change is called noise, with its percentage */
    r.round[2].latency[LAB_A].p99 = 227;
    CAPTURE(text, lab_stats_explain(out, &r, 800));
    unwrap(text);
    assert_non_null(strstr(text, "(+5% (1.05×)) — round-to-round noise"));
    free(text);
}

static void test_queue(void **state)
{
    (void)state;
    struct lab_queue_result r;
    memset(&r, 0, sizeof r);
    r.nrounds = 4;
    for (int i = 0; i < 4; i++) {
        struct lab_queue_round *o = &r.round[i];
        o->demand_rate = 40;
        o->counts.planned = 400;
        o->counts.sent = 400;
        o->counts.outcome[OUTCOME_OK] = 400;
        o->sent_rate = 40;
        o->goodput_rate = 40;
        o->client_identity = o->server_identity = o->cross_identity = true;
    }
    r.round[1].sent_rate = 20;
    r.round[2].counts.outcome[OUTCOME_OK] = 200;
    r.round[2].counts.outcome[OUTCOME_REJECTED] = 200;
    struct lab_queue_round *d = &r.round[3];
    d->counts.sent = 50;
    d->counts.dropped = 350;
    d->counts.outcome[OUTCOME_OK] = 50;
    d->counts.outcome[OUTCOME_DROPPED] = 350;
    char *text = NULL;
    /* the starved round without knee run's verdict: the lab does not claim the generator failed */
    CAPTURE(text, lab_queue_explain(out, &r));
    unwrap(text);
    assert_null(strstr(text, "the service, failed"));
    assert_non_null(strstr(text, "not generator-limited"));
    free(text);
    gl(&d->valid);
    CAPTURE(text, lab_queue_explain(out, &r));
    unwrap(text);
    assert_non_null(strstr(text, "knee run's verdict is GENERATOR-LIMITED"));
    assert_non_null(strstr(text, "because most of the plan"));
    free(text);
    /* a generator-limited first round: "all succeed" is not concluded */
    gl(&r.round[0].valid);
    CAPTURE(text, lab_queue_explain(out, &r));
    unwrap(text);
    assert_null(strstr(text, "so 40/s all succeed"));
    assert_non_null(strstr(text, "the round was GENERATOR-LIMITED"));
    free(text);
}

static void test_knee(void **state)
{
    (void)state;
    struct lab_knee_result *r = knee_ladder_new();
    r->row[3].lag_p99_ms = 150;
    r->row[3].latency.p99 = 900;
    r->row[3].latency.mean = 400;
    gl(&r->row[3].valid);
    char *text = NULL;
    CAPTURE(text, lab_knee_explain(out, r));
    unwrap(text);
    assert_non_null(strstr(text, "generator-limited (knee run's verdict, under the table): 90/s"));
    assert_non_null(strstr(text, "from 10/s to 70/s")); /* the trend stops at the last clean row */
    assert_null(strstr(text, "to 90/s"));
    assert_non_null(strstr(text, "where knee run calls the round GENERATOR-LIMITED"));
    free(text);
    for (size_t i = 0; i < 4; i++)
        gl(&r->row[i].valid);
    CAPTURE(text, lab_knee_explain(out, r));
    unwrap(text);
    assert_non_null(strstr(text, "which leaves nothing to conclude from"));
    assert_null(strstr(text, "grew"));
    free(text);
    free(r);
}

/* knee's own CPU per round: a line under the budget, a warning above it that keeps the round
 * valid (no verdict, conclusions still drawn), nothing when it was not measured; the
 * experiment's summary line names the rounds over the budget. */
static void test_generator_cpu(void **state)
{
    (void)state;
    struct run_generator_cpu gc = {.user_s = 0.02, .sys_s = 0.03, .wall_s = 1.0, .threads = 3};
    char *text = NULL;
    CAPTURE(text, lab_print_generator_cpu(out, "  ", "round 2", &gc));
    assert_string_equal(text, "  generator CPU: knee's own threads took 5.0% of one core over round 2 (budget 10%)\n");
    free(text);
    gc.user_s = 0.2;
    CAPTURE(text, lab_print_generator_cpu(out, "  ", "round 2", &gc));
    assert_non_null(strstr(text, "  ! round 2: knee's own threads took 23.0% of one core (0.23 s of CPU in 1.0 s), "
                                 "over the lab's 10% budget"));
    assert_non_null(strstr(text, "the round stands"));
    free(text);
    struct run_generator_cpu none = {.user_s = 0.2, .wall_s = 1.0, .threads = 0};
    CAPTURE(text, lab_print_generator_cpu(out, "  ", "round 2", &none));
    assert_string_equal(text, "");
    free(text);

    /* in the round's validity: a share and a flag, never the generator-limited verdict */
    struct run_record res;
    memset(&res, 0, sizeof res);
    res.env.gen_cpu = gc;
    struct lab_validity v;
    lab_validity_of(&res, &v);
    assert_true(fabs(v.gen_cpu_share - 0.23) < 1e-9);
    assert_true(v.gen_cpu_over);
    assert_false(v.generator_limited);
    res.env.gen_cpu.threads = 0;
    lab_validity_of(&res, &v);
    assert_true(isnan(v.gen_cpu_share));
    assert_false(v.gen_cpu_over);
    /* printed with the round's warnings */
    res.env.gen_cpu.threads = 3;
    CAPTURE(text, lab_print_round_warnings(out, "  ", "round 4", &res));
    assert_non_null(strstr(text, "  ! round 4: knee's own threads took 23.0% of one core"));
    assert_null(strstr(text, "GENERATOR-LIMITED"));
    free(text);

    /* knee: the rows over the budget are named, and the trend is still concluded from them */
    struct lab_knee_result *r = knee_ladder_new();
    for (size_t i = 0; i < r->nrows; i++) {
        r->row[i].valid.gen_cpu_share = 0.01 * (double)(i + 1);
        r->row[i].sampler_cpu_share = 0.005;
    }
    CAPTURE(text, lab_knee_explain(out, r));
    unwrap(text);
    assert_non_null(strstr(text, "knee's own threads took at most 4.0% of one core per round (at 90/s), under the "
                                 "lab's 10% budget, and the in-flight sampler at most 0.5%"));
    free(text);
    r->row[2].valid.gen_cpu_share = 0.15;
    r->row[2].valid.gen_cpu_over = true;
    CAPTURE(text, lab_knee_explain(out, r));
    unwrap(text);
    assert_non_null(strstr(text, "knee's own threads took more than the lab's 10% budget of one core at 70/s (15.0%)"));
    assert_non_null(strstr(text, "from 10/s to 90/s, p99 grew")); /* a warning, not a verdict */
    assert_null(strstr(text, "GENERATOR-LIMITED"));
    free(text);
    free(r);

    /* the experiment's line */
    struct lab_ctx c;
    memset(&c, 0, sizeof c);
    const double shares[] = {0.01, 0.2, 0.05};
    const char *names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        res.env.gen_cpu.user_s = shares[i];
        res.env.gen_cpu.sys_s = 0;
        res.env.gen_cpu.wall_s = 1;
        lab_cpu_note(&c, names[i], &res);
    }
    CAPTURE(text, lab_print_cpu_summary(out, &c));
    assert_non_null(strstr(text, "  generator CPU: knee's own threads took 1.0% to 20.0% of one core per round over 3 "
                                 "rounds (most: b); 1 round over the lab's 10% budget\n"));
    assert_non_null(strstr(text, "  ! over the budget: b 20.0% — "));
    free(text);
    memset(&c, 0, sizeof c);
    CAPTURE(text, lab_print_cpu_summary(out, &c)); /* nothing measured: nothing said */
    assert_string_equal(text, "");
    free(text);
}

static void test_fanout_and_nagle(void **state)
{
    (void)state;
    struct lab_fanout_result f;
    memset(&f, 0, sizeof f);
    f.nrows = 2;
    f.p_slow = 0.02;
    f.slow_ms = 200;
    f.row[0] =
        (struct lab_fanout_row){.n = 1, .pages = 1000, .share = 0.02, .ci_lo = 0.01, .ci_hi = 0.03, .predicted = 0.02};
    f.row[1] = (struct lab_fanout_row){
        .n = 20, .pages = 1000, .share = 0.33, .ci_lo = 0.30, .ci_hi = 0.36, .predicted = 0.332};
    char *text = NULL;
    CAPTURE(text, lab_fanout_explain(out, &f));
    unwrap(text);
    assert_non_null(strstr(text, "inside the interval"));
    free(text);
    gl(&f.valid);
    f.lag_p99_ms = 150;
    CAPTURE(text, lab_fanout_explain(out, &f));
    unwrap(text);
    assert_non_null(strstr(text, "the round was GENERATOR-LIMITED"));
    assert_non_null(strstr(text, "the prediction is not checked against them"));
    assert_null(strstr(text, "inside the interval"));
    free(text);

    struct lab_nagle_result n;
    memset(&n, 0, sizeof n);
    n.clients = 8;
    summary_of(&n.nagle, 42, 45, 40);
    summary_of(&n.nodelay, 2, 4, 2);
    CAPTURE(text, lab_nagle_explain(out, &n));
    unwrap(text);
    assert_non_null(strstr(text, "the body waited for the ACK"));
    free(text);
    gl(&n.valid);
    CAPTURE(text, lab_nagle_explain(out, &n));
    unwrap(text);
    assert_null(strstr(text, "the body waited for the ACK"));
    assert_non_null(strstr(text, "not read as the servers'"));
    free(text);
}

/* The lab's rates are knee run's (docs/FORMATS.md, "Rates"), never counts / window: a
 * generator asked for 400/s over a 2 s window that sent its 800 requests over 7.75 s. Every
 * planned request was sent and ended ok, so counts / window say 400/s; the events inside the
 * window say ~103/s. The stats, queue and knee experiments must print the latter. */
static void test_rates_are_knee_runs(void **state)
{
    (void)state;
    const uint64_t ms = 1000000, w0 = 0, w1 = 2000 * ms;
    struct run_target_result t[2];
    memset(t, 0, sizeof t);
    struct run_record res;
    memset(&res, 0, sizeof res);
    record_events_init(&res.all.events, w0, w1);
    for (int k = 0; k < 2; k++) {
        record_events_init(&t[k].events, w0, w1);
        for (uint64_t i = 0; i < 800; i++) {
            uint64_t planned = i * w1 / 800, sent = planned * 31 / 8 + 1, done = sent + 5 * ms;
            record_events_count(&t[k].events, planned, sent, done, OUTCOME_OK);
        }
        t[k].counts.planned = t[k].counts.sent = t[k].counts.outcome[OUTCOME_OK] = 800;
        record_rates_of(&t[k].events, &t[k].rates);
        record_events_merge(&res.all.events, &t[k].events);
    }
    record_rates_of(&res.all.events, &res.all.rates);
    res.targets = t;
    res.ntargets = 2;
    res.window_s = 2;
    struct lab_round rd;
    memset(&rd, 0, sizeof rd);
    rd.res = res;
    const struct run_rates *rt = &t[0].rates;
    /* knee run's own numbers: the plan kept in the window, the sends not */
    assert_true(fabs(rt->planned - 400) < 1e-9);
    assert_true(rt->sent > 100 && rt->sent < 106);
    assert_true(rt->completed < rt->sent && rt->goodput == rt->completed);
    assert_true(lab_rates(&rd, 1) == &t[1].rates && lab_rates(&rd, LAB_ALL_TARGETS) == &rd.res.all.rates);

    const double rate[2] = {400, 400};
    const unsigned clients[2] = {0, 0};
    struct lab_stats_round so;
    lab_stats_fill_round(&rd, true, rate, clients, "behind", &so);
    for (int k = 0; k < 2; k++)
        assert_true(so.sent_rate[k] == t[k].rates.sent); /* not 800 / 2 s */

    struct serve_counters zero;
    memset(&zero, 0, sizeof zero);
    struct lab_queue_round qo;
    lab_queue_fill_round(&rd, "behind", true, 20, &zero, &zero, &qo);
    assert_true(qo.planned_rate == rt->planned);
    assert_true(qo.sent_rate == rt->sent);
    assert_true(qo.goodput_rate == rt->goodput);

    struct lab_knee_row kw;
    lab_knee_fill_row(&rd, 400, 0, NAN, &kw);
    assert_true(kw.sent_rate == rt->sent);
    assert_true(kw.completed_rate == rt->completed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_change),
        cmocka_unit_test(test_validity_of),
        cmocka_unit_test(test_stats_fill_reads_verdict),
        cmocka_unit_test(test_stats_generator_limited_round),
        cmocka_unit_test(test_stats_clean_rounds),
        cmocka_unit_test(test_queue),
        cmocka_unit_test(test_knee),
        cmocka_unit_test(test_generator_cpu),
        cmocka_unit_test(test_fanout_and_nagle),
        cmocka_unit_test(test_rates_are_knee_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
