/* knee lab capacity in a reduced form (--quick, 200 ms windows): the shapes of the result,
 * never the measured capacity (the machine is shared). Every search repetition follows the
 * article's rule — double while windows pass, halve while the first ones fail, then bisect
 * until the bracket is 125/s wide — re-derived here from its recorded pass/fail sequence; its
 * answer is the highest rate that passed and a run's answer the median of three; every
 * ladder repetition climbs the same seven rates; the votes are capacity_vote's over the
 * recorded held flags (per run and pooled). The regime part (the flat server, two SLOs): each
 * SLO's cross-check is knee capacity's, printed with its regime, its second method and the
 * closed loop's bound; which regime each lands in is the machine's to decide (a timing matter),
 * the shape of what is said is not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "lab/lab.h"
#include "capacity/capacity.h"
#include "lab/lab_capacity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The vote: the highest rate held by a strict majority with every lower rate so held. */
static double vote(const struct lab_capacity_result *r, size_t run0, size_t nruns)
{
    double cap = 0;
    for (size_t k = 0; k < r->nrates; k++) {
        size_t held = 0, n = 0;
        for (size_t run = run0; run < run0 + nruns; run++)
            for (size_t rep = 0; rep < LAB_CAP_REPS; rep++) {
                held += r->held[run][rep][k];
                n++;
            }
        if (2 * held <= n)
            break;
        cap = r->rates[k];
    }
    return cap;
}

static void check_search(const struct lab_cap_search *s)
{
    double r = 250, lo = 0, hi = INFINITY;
    assert_true(s->nwindows >= 1 && s->nwindows <= LAB_CAP_MAX_WINDOWS);
    for (size_t w = 0; w < s->nwindows; w++) {
        assert_true(fabs(s->rate[w] - r) < 1e-9);
        if (s->pass[w])
            lo = r;
        else
            hi = r;
        bool done = lo > 0 && isfinite(hi) && hi - lo <= 125;
        r = isinf(hi) ? 2 * r : lo == 0 ? r / 2 : (lo + hi) / 2;
        if (done || r < 1) {
            assert_int_equal(w + 1, s->nwindows); /* it stops exactly there */
            break;
        }
    }
    assert_true(s->answer == lo);
}

static void test_capacity_shapes(void **state)
{
    (void)state;
    struct lab_options o;
    lab_options_init(&o);
    o.quick = true;
    o.duration_ns = 200 * NS_PER_MS;
    o.warmup_ns = 50 * NS_PER_MS;
    o.seed = 3;
    char *text = NULL;
    size_t len = 0;
    o.out = open_memstream(&text, &len);
    assert_non_null(o.out);
    struct lab_capacity_result *r = malloc(sizeof *r);
    assert_int_equal(lab_capacity(&o, r), 0);
    fclose(o.out);
    for (const char *want = "== the article's method\0== knee's ladder\0== side by side\0== what this run shows\0"
                            "every repetition pooled\0== the cross-check's regime\0  SLO p90<50ms:\0"
                            "  SLO p90<100ms:\0  regime: \0  second method: the \0  upper bound: the closed loop's "
                            "highest throughput \0";
         *want; want += strlen(want) + 1)
        if (!strstr(text, want))
            fail_msg("'%s' not in:\n%s", want, text);
    assert_int_equal(r->nruns, 2);
    assert_int_equal(r->nrates, 7);
    assert_true(r->slo_p99_ms == 50);
    for (size_t k = 0; k < r->nrates; k++)
        assert_true(r->rates[k] == 250.0 * (double)(k + 1));
    for (size_t run = 0; run < r->nruns; run++) {
        double a[LAB_CAP_REPS];
        for (size_t rep = 0; rep < LAB_CAP_REPS; rep++) {
            check_search(&r->search[run][rep]);
            a[rep] = r->search[run][rep].answer;
            /* each ladder repetition alone: the highest rate of its unbroken run of holds */
            double alone = 0;
            for (size_t k = 0; k < r->nrates && r->held[run][rep][k]; k++)
                alone = r->rates[k];
            assert_true(r->ladder_rep[run][rep] == alone);
        }
        double med = fmax(fmin(a[0], a[1]), fmin(fmax(a[0], a[1]), a[2]));
        assert_true(r->search_median[run] == med);
        assert_true(r->ladder_vote[run] == vote(r, run, 1));
        printf("# run %zu: search %g %g %g -> %g; ladder vote %g\n", run + 1, a[0], a[1], a[2], med,
               r->ladder_vote[run]);
    }
    assert_true(r->pooled == vote(r, 0, r->nruns));
    for (size_t i = 0; i < LAB_CAP_NSLO; i++) {
        const struct lab_cap_regime *g = &r->regime[i];
        printf("# %s: ladder %g, closed loop %g (bound %g), queue %g (%u server%s), regime %s, %s\n", g->slo, g->ladder,
               g->closed_loop, g->bound, g->queue, g->servers, g->servers == 1 ? "" : "s",
               capacity_regime_name((enum capacity_regime)g->regime), g->agree ? "agree" : "DISAGREE");
        assert_true(g->regime == CAPACITY_REGIME_LATENCY || g->regime == CAPACITY_REGIME_THROUGHPUT);
        /* Shapes only: a machine slow enough (ASan, a busy host) that one connection already breaks
         * the SLO gives a queue capacity of 0 and no closed-loop answer, and the lab says so. */
        assert_true(isfinite(g->queue) && g->queue >= 0 && g->servers >= 1);
        assert_true(g->bound > 0 && !(g->closed_loop > g->bound));
        if (!g->valid || !isfinite(g->closed_loop)) {
            char why[96];
            snprintf(why, sizeof why, "  %s: ", g->slo);
            assert_non_null(strstr(text, why));
            assert_non_null(strstr(text, "so nothing is concluded from it."));
        } else {
            assert_non_null(strstr(text, i == 0 ? "(five service times)" : "(ten service times)"));
        }
        assert_true(g->ladder == 0 || g->ladder == r->flat_rates[0] || g->ladder > r->flat_rates[0]);
        char line[64];
        snprintf(line, sizeof line, "  regime: %s", capacity_regime_name((enum capacity_regime)g->regime));
        assert_non_null(strstr(text, line));
    }
    assert_true(r->flat_rates[0] == 50 && r->flat_rates[LAB_CAP_FLAT_RATES - 1] == 110);
    free(text);
    assert_true(r->loadavg_before >= 0 && r->loadavg_after >= 0);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
