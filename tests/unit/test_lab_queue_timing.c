/* knee lab queue in a reduced form (3 s rounds), the timing tier: rejections at 200 ms of work
 * after about 250 ms, drops in the starved mode, the closed loop halving the demand, with every
 * accounting identity holding on the client, on the server and between them. Counts are exact;
 * rates and shares have margins. The exact checks in short rounds are test_lab_queue.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/lab.h"
#include "unit/timing.h"

#include <stdio.h>
#include <string.h>

static void test_queue_rounds(void **state)
{
    (void)state;
    struct lab_options o;
    lab_options_init(&o);
    o.duration_ns = 3 * NS_PER_S;
    o.seed = 3;
    static struct lab_queue_result r;
    for (int attempt = 1;; attempt++) {
        assert_int_equal(lab_queue(&o, &r), 0);
        assert_int_equal(r.nrounds, 4);
        char why[4 * 512 + 16] = "";
        for (size_t i = 0; i < 4; i++) {
            const struct lab_queue_round *q = &r.round[i];
            assert_true(q->client_identity);
            assert_true(q->server_identity);
            assert_true(q->cross_identity);
            assert_int_equal(q->counts.outcome[OUTCOME_TRANSPORT], 0);
            assert_int_equal(q->counts.outcome[OUTCOME_TIMEOUT], 0);
            assert_int_equal(q->server.active + q->server.waiting, 0); /* drained */
            if (q->open_loop && q->valid.generator_limited)            /* knee run's verdict (timing_verdict) */
                snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s", why[0] ? "; " : "", q->valid.warning);
        }
        /* 1: 40/s with 20 ms of work, 4 slots: every planned request ok. */
        const struct lab_queue_round *a = &r.round[0];
        assert_int_equal(a->counts.planned, 120);
        assert_int_equal(a->counts.outcome[OUTCOME_OK], 120);
        char problem[256] = "";
        /* 2: a closed loop of 4 clients on 200 ms of work sends about 20/s, not 40. */
        const struct lab_queue_round *b = &r.round[1];
        printf("# closed loop sent %.1f/s\n", b->sent_rate);
        TIMING_CHECK(problem, b->sent_rate > 10 && b->sent_rate < 25);
        assert_int_equal(b->counts.outcome[OUTCOME_REJECTED], 0);
        /* 3: 40/s on 200 ms of work: goodput about 20/s, the rest rejected with 503 QUEUE_TIMEOUT. */
        const struct lab_queue_round *c = &r.round[2];
        printf("# open 200 ms: ok %llu rejected %llu of %llu\n", (unsigned long long)c->counts.outcome[OUTCOME_OK],
               (unsigned long long)c->counts.outcome[OUTCOME_REJECTED], (unsigned long long)c->counts.sent);
        assert_int_equal(c->counts.sent, 120);
        assert_int_equal(c->counts.outcome[OUTCOME_OK] + c->counts.outcome[OUTCOME_REJECTED], 120);
        TIMING_CHECK(problem, c->counts.outcome[OUTCOME_REJECTED] > 20);
        TIMING_CHECK(problem, c->counts.outcome[OUTCOME_OK] > 40);
        TIMING_CHECK(problem, c->rejected_latency.p50 >= 240 && c->rejected_latency.p50 < 400);
        /* 4: one connection, drop when busy: most of the plan never leaves the generator. */
        const struct lab_queue_round *d = &r.round[3];
        printf("# starved: sent %llu dropped %llu\n", (unsigned long long)d->counts.sent,
               (unsigned long long)d->counts.dropped);
        assert_int_equal(d->counts.planned, 120);
        assert_int_equal(d->server.requests, d->counts.sent);
        TIMING_CHECK(problem, d->counts.dropped > 60);
        TIMING_CHECK(problem, d->counts.sent <= 20); /* 5/s at most through one connection */
        if (timing_verdict(attempt, problem, why))
            break;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_rounds),
    };
    return timing_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
