/* knee lab knee in a reduced form, the timing tier: two Poisson rates against the flat server
 * (10 ms of CPU, one worker). As the rate rises p99 grows faster than the mean, and Little's law
 * holds at the low rate with L counted at the server and λ, W at the client. Shapes only: the
 * machine is shared, so absolute times are never asserted. The exact checks (the table, the
 * model column) in short rounds are test_lab_knee.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/lab.h"
#include "unit/timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_knee_shapes(void **state)
{
    (void)state;
    struct lab_options o;
    lab_options_init(&o);
    o.duration_ns = 8 * NS_PER_S;
    o.warmup_ns = NS_PER_S / 2;
    o.seed = 11;
    const double rates[] = {20, 80};
    o.rates = rates;
    o.nrates = 2;
    struct lab_knee_result *r = malloc(sizeof *r);
    assert_non_null(r);
    for (int attempt = 1;; attempt++) {
        char *text = NULL;
        size_t textlen = 0;
        o.out = open_memstream(&text, &textlen);
        assert_int_equal(lab_knee(&o, r), 0);
        fclose(o.out);
        assert_int_equal(r->nrows, 2);
        /* knee's own CPU per round: measured, above zero (requests were sent), printed in the
         * table's gen column and summed up under it; above the budget the row is marked. No
         * absolute figure: the machine is shared. */
        char why[2 * 512 + 8] = "";
        for (size_t i = 0; i < r->nrows; i++) {
            const struct lab_knee_row *w = &r->row[i];
            printf("# %.0f/s: generator CPU %.2f%% of one core\n", w->rate, 100 * w->valid.gen_cpu_share);
            assert_true(w->valid.gen_cpu_share > 0 && isfinite(w->valid.gen_cpu_share));
            assert_true(w->valid.gen_cpu_over == (w->valid.gen_cpu_share > RUN_GENERATOR_CPU_BUDGET));
            char cell[32];
            snprintf(cell, sizeof cell, "%.1f%%%s |", 100 * w->valid.gen_cpu_share, w->valid.gen_cpu_over ? "!" : "");
            assert_non_null(strstr(text, cell));
            if (w->valid.generator_limited) /* knee run's verdict on the round (timing_verdict) */
                snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s", why[0] ? "; " : "", w->valid.warning);
        }
        assert_non_null(strstr(text, "|   gen |"));
        assert_non_null(strstr(text, "  generator CPU: knee's own threads took "));
        assert_non_null(strstr(text, "of one core per round over 2 rounds"));
        free(text);
        const struct lab_knee_row *lo = &r->row[0], *hi = &r->row[1];
        printf("# 20/s: p99 %.1f mean %.1f L %.3f λW %.3f | 80/s: p99 %.1f mean %.1f\n", lo->latency.p99,
               lo->latency.mean, lo->l_measured, lo->l_little, hi->latency.p99, hi->latency.mean);
        /* The model column is src/model's M/M/1 and M/D/1 for μ = 100/s. */
        assert_true(fabs(lo->mm1_mean_ms - 1000.0 / 80) < 1e-9);
        assert_true(fabs(hi->md1_mean_ms - (10 + 0.8 * 10 / (2 * 0.2))) < 1e-9);
        char problem[256] = "";
        TIMING_CHECK(problem, lo->latency.count > 100 && hi->latency.count > 400);
        /* p99 moves first: its growth from 20/s to 80/s exceeds the mean's. */
        TIMING_CHECK(problem, hi->latency.p99 - lo->latency.p99 > hi->latency.mean - lo->latency.mean);
        TIMING_CHECK(problem, hi->latency.p99 > lo->latency.p99);
        /* Little's law at low load: the server's time-averaged in-flight count against λ·W. */
        TIMING_CHECK(problem, lo->l_samples > 1000);
        double m = fmax(lo->l_measured, lo->l_little);
        TIMING_CHECK(problem, m > 0.1); /* 20/s × at least 10 ms */
        TIMING_CHECK(problem, fabs(lo->l_measured - lo->l_little) <= 0.25 * m + 0.02);
        if (timing_verdict(attempt, problem, why))
            break;
    }
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_knee_shapes),
    };
    return timing_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
