/* The timing tier of test_lab_tls.c: knee lab tls in rounds of 1 s, whose keep-alive round is
 * carried by a few connections. The open loop opens a connection when every one it has is busy,
 * so how many it opens depends on how fast the handshakes and the answers come: on a loaded
 * machine (handshakes of 1 s under ASan beside other tests) the round opened 156. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/lab.h"
#include "unit/timing.h"

#include <stdio.h>
#include <stdlib.h>

static void test_keepalive_few_connections(void **state)
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
    assert_non_null(r);
    assert_int_equal(lab_tls(&o, r), 0);
    fclose(devnull);
    const struct lab_tls_round *k = &r->round[0];
    unsigned long long conns = k->conns;
    free(r);
    print_message("the keep-alive round: %llu connections\n", conns);
    assert_true(conns < 50); /* keep-alive: a few connections carry every request */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keepalive_few_connections),
    };
    return timing_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
