/* Unit tests for knee lab tls (src/lab/exp_tls.c): its sentences driven with synthetic results
 * (the verdicts follow the numbers; a generator-limited round is named and nothing is
 * compared), and the experiment itself in short rounds, asserting what the engine counted:
 * one handshake per connection, resumed ones only with resumption, none without TLS, and the
 * accounting of every round. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/internal.h"
#include "lab/lab.h"
#include "unit/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void summary_of(struct summary *s, double p50, double p99)
{
    memset(s, 0, sizeof *s);
    s->count = 2000;
    s->p50 = p50;
    s->p99 = p99;
    s->mean = p50;
}

static void synthetic(struct lab_tls_result *r)
{
    memset(r, 0, sizeof *r);
    r->nrounds = LAB_TLS_ROUNDS;
    r->rate = 200;
    const char *labels[] = {"the keepalive round", "the resumed round", "the full round", "the tcp round",
                            "the quic round"};
    double p50[] = {0.2, 1.0, 2.5, 0.4, 3.0}, p99[] = {0.8, 3.0, 6.0, 1.2, 7.0};
    for (int i = 0; i < LAB_TLS_ROUNDS; i++) {
        snprintf(r->round[i].label, sizeof r->round[i].label, "%s", labels[i]);
        summary_of(&r->round[i].latency, p50[i], p99[i]);
    }
    summary_of(&r->round[1].tls, 0.7, 2.0);
    summary_of(&r->round[2].tls, 2.0, 4.5);
    summary_of(&r->round[4].tls, 2.4, 5.0);
    r->round[4].quic = true;
    r->round[1].full = 1;
    r->round[1].resumed = 1999;
}

static void test_explain(void **state)
{
    (void)state;
    struct lab_tls_result r;
    synthetic(&r);
    char *text = NULL;
    CAPTURE(text, lab_tls_explain(out, &r));
    unwrap(text);
    assert_non_null(strstr(text, "p99 with keep-alive: 0.80 ms"));
    assert_non_null(strstr(text, "3.00 ms when the session was resumed (+275% (3.75×))"));
    assert_non_null(strstr(text, "churn puts the handshake on every request"));
    assert_non_null(strstr(text, "p50 2.000 ms for a full handshake and 0.700 ms for a resumed one"));
    assert_non_null(strstr(text, "that is what it saved"));
    assert_non_null(strstr(text, "1999 of the 2000 handshakes were resumed (99.95%;"));
    assert_non_null(strstr(text, "the handshake costs more than the connect"));
    assert_non_null(strstr(text, "a new QUIC connection per request (HTTP/3): p50 3.000 ms, p99 7.000 ms, against "
                                 "2.500 and 6.000 ms for TLS over TCP with a full handshake; the handshake itself "
                                 "(tls phase) p50 2.400 ms over QUIC, 2.000 ms over TCP"));
    assert_non_null(strstr(text, "on loopback the round trip QUIC saves is nearly free"));
    free(text);
    /* QUIC ahead: the other verdict; a run stopped before the quic round: no sentence on it */
    r.round[4].latency.p50 = 2.0;
    CAPTURE(text, lab_tls_explain(out, &r));
    unwrap(text);
    assert_non_null(strstr(text, "one round trip fewer, and that showed"));
    free(text);
    r.nrounds = 4;
    CAPTURE(text, lab_tls_explain(out, &r));
    unwrap(text);
    assert_non_null(strstr(text, "the handshake costs more than the connect"));
    assert_null(strstr(text, "QUIC"));
    free(text);
    synthetic(&r);

    /* numbers that show nothing: the verdicts say so */
    r.round[2].latency = r.round[0].latency;
    r.round[1].tls.p50 = 2.5;
    CAPTURE(text, lab_tls_explain(out, &r));
    unwrap(text);
    assert_non_null(strstr(text, "the churn did not show in this run's percentiles"));
    assert_non_null(strstr(text, "resumption saved nothing measurable here"));
    free(text);

    /* a generator-limited round: named, and no round is compared */
    synthetic(&r);
    r.round[2].valid.generator_limited = true;
    snprintf(r.round[2].valid.warning, sizeof r.round[2].valid.warning, "GENERATOR-LIMITED: lag p99 150 ms");
    CAPTURE(text, lab_tls_explain(out, &r));
    unwrap(text);
    assert_non_null(strstr(text, "the full round was GENERATOR-LIMITED"));
    assert_non_null(strstr(text, "the rounds are not compared"));
    assert_null(strstr(text, "p99 with keep-alive"));
    free(text);
}

/* The experiment in rounds of 1 s: what the engine counted, whatever the machine's load (that
 * keep-alive carries the round on a few connections is test_lab_tls_timing.c's: a loaded
 * machine's slow handshakes make the open loop open more). */
static void test_rounds(void **state)
{
    (void)state;
    struct lab_options o;
    lab_options_init(&o);
    o.duration_ns = NS_PER_S;
    o.warmup_ns = 0;
    o.seed = 7;
    FILE *devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    o.out = devnull;
    struct lab_tls_result *r = calloc(1, sizeof *r);
    assert_int_equal(lab_tls(&o, r), 0);
    fclose(devnull);
    assert_int_equal(r->nrounds, LAB_TLS_ROUNDS);
    for (int i = 0; i < LAB_TLS_ROUNDS; i++) {
        const struct lab_tls_round *w = &r->round[i];
        print_message("%s: %zu ok, p99 %.3f ms, %llu connections, %llu full + %llu resumed, tls p50 %.3f ms\n",
                      w->label, w->latency.count, w->latency.p99, (unsigned long long)w->conns,
                      (unsigned long long)w->full, (unsigned long long)w->resumed, w->tls.p50);
        assert_true(w->accounting_ok);
        assert_true(w->latency.count > 100); /* 200/s for 1 s, nothing fails */
        assert_int_equal(w->not_ok, 0);
    }
    const struct lab_tls_round *k = &r->round[0], *re = &r->round[1], *fu = &r->round[2], *pl = &r->round[3];
    assert_int_equal(k->full + k->resumed, k->conns); /* one handshake per connection */
    assert_true(re->conns >= re->latency.count);      /* a connection per request */
    /* the tickets were offered and taken; how many connections open before the first ticket
     * arrives depends on how fast the handshakes are (a loaded machine: most), so only "some" */
    assert_true(re->resumed > 0);
    assert_int_equal(fu->resumed, 0); /* --tls-resume off */
    assert_int_equal(fu->full, fu->conns);
    assert_int_equal(fu->tls.count, fu->conns);
    assert_int_equal(pl->full + pl->resumed, 0); /* no TLS */
    assert_int_equal(pl->tls.count, 0);
    const struct lab_tls_round *qu = &r->round[4]; /* a QUIC connection per request, a full handshake each */
    assert_true(qu->quic);
    assert_true(qu->conns >= qu->latency.count);
    assert_int_equal(qu->resumed, 0);
    assert_int_equal(qu->tls.count, qu->conns);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_rounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
