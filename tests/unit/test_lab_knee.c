/* knee lab knee in short rounds, the exact tier: two Poisson rates (20/s and 80/s, 1 s each)
 * against the flat server. Whatever the machine did to the latencies, the table has its rows and
 * its gen column, the model column is src/model's M/M/1 and M/D/1 for μ = 100/s to the last
 * digit, and a row is marked over the CPU budget exactly when its share is. The shapes (p99
 * against the mean, Little's law), from 8 s rounds, are test_lab_knee_timing.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/lab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_knee_table(void **state)
{
    (void)state;
    struct lab_options o;
    lab_options_init(&o);
    o.duration_ns = NS_PER_S;
    o.warmup_ns = 200 * NS_PER_MS;
    o.seed = 11;
    const double rates[] = {20, 80};
    o.rates = rates;
    o.nrates = 2;
    char *text = NULL;
    size_t textlen = 0;
    o.out = open_memstream(&text, &textlen);
    struct lab_knee_result *r = malloc(sizeof *r);
    assert_non_null(r);
    assert_int_equal(lab_knee(&o, r), 0);
    fclose(o.out);
    assert_int_equal(r->nrows, 2);
    for (size_t i = 0; i < r->nrows; i++) {
        const struct lab_knee_row *w = &r->row[i];
        assert_true(w->rate == rates[i]);
        assert_true(w->valid.gen_cpu_share > 0 && isfinite(w->valid.gen_cpu_share)); /* the load threads ran */
        assert_true(w->valid.gen_cpu_over == (w->valid.gen_cpu_share > RUN_GENERATOR_CPU_BUDGET));
        char cell[32];
        snprintf(cell, sizeof cell, "%.1f%%%s |", 100 * w->valid.gen_cpu_share, w->valid.gen_cpu_over ? "!" : "");
        assert_non_null(strstr(text, cell));
    }
    assert_non_null(strstr(text, "|   gen |"));
    assert_non_null(strstr(text, "  generator CPU: knee's own threads took "));
    assert_non_null(strstr(text, "of one core per round over 2 rounds"));
    free(text);
    /* The model column is src/model's M/M/1 and M/D/1 for μ = 100/s. */
    assert_true(fabs(r->row[0].mm1_mean_ms - 1000.0 / 80) < 1e-9);
    assert_true(fabs(r->row[1].md1_mean_ms - (10 + 0.8 * 10 / (2 * 0.2))) < 1e-9);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_knee_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
