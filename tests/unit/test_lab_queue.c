/* knee lab queue in short rounds (1 s), the exact tier: four rounds, every accounting identity
 * holding on the client, on the server and between them, nothing lost in transport or to a
 * timeout, every round drained, and the counts the plan fixes (40/s for 1 s: 40 planned, sent
 * or dropped). How the rounds split into ok, rejected and dropped, and at what rates and
 * latencies, is test_lab_queue_timing.c's (3 s rounds). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/lab.h"

static void test_queue_rounds_account(void **state)
{
    (void)state;
    struct lab_options o;
    lab_options_init(&o);
    o.duration_ns = NS_PER_S;
    o.seed = 3;
    struct lab_queue_result r;
    assert_int_equal(lab_queue(&o, &r), 0);
    assert_int_equal(r.nrounds, 4);
    for (size_t i = 0; i < 4; i++) {
        const struct lab_queue_round *q = &r.round[i];
        assert_true(q->client_identity);
        assert_true(q->server_identity);
        assert_true(q->cross_identity);
        assert_int_equal(q->counts.outcome[OUTCOME_TRANSPORT], 0);
        assert_int_equal(q->counts.outcome[OUTCOME_TIMEOUT], 0);
        assert_int_equal(q->server.active + q->server.waiting, 0); /* drained */
    }
    /* 1: 40/s with 20 ms of work on 4 slots: every planned request ok. */
    assert_int_equal(r.round[0].counts.planned, 40);
    assert_int_equal(r.round[0].counts.outcome[OUTCOME_OK], 40);
    /* 2: a closed loop of 4 clients on 4 slots never waits for one: nothing rejected. */
    assert_int_equal(r.round[1].counts.outcome[OUTCOME_REJECTED], 0);
    /* 3: 40/s on 200 ms of work: every request sent ends ok or rejected. */
    const struct lab_queue_round *c = &r.round[2];
    assert_int_equal(c->counts.sent, 40);
    assert_int_equal(c->counts.outcome[OUTCOME_OK] + c->counts.outcome[OUTCOME_REJECTED], 40);
    /* 4: one connection, drop when busy: what was not sent was dropped, the server saw the rest. */
    const struct lab_queue_round *d = &r.round[3];
    assert_int_equal(d->counts.planned, 40);
    assert_int_equal(d->counts.sent + d->counts.dropped, 40);
    assert_int_equal(d->server.requests, d->counts.sent);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_rounds_account),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
