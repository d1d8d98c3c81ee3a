/* The timing tier's policy for the cmocka timing programs (tests/unit/test_*_timing.c), the same
 * as tests/e2e/timing.bash's (docs/INTERNALS.md, "Tests: two tiers"): a timing check that fails
 * on a measurement knee itself calls not valid (knee run's GENERATOR-LIMITED, a lab round that
 * knee run called so) measured the machine, not the engine or the target. That measurement is
 * repeated once; when knee again calls it not valid, the test is skipped with the reason on
 * stderr and the program exits 77 (ctest's SKIP_RETURN_CODE): never a pass, never a red. A
 * timing check that fails on a measurement knee calls valid fails at once; exact checks are
 * never repeated and never skipped. Test code, header-only; one program, one thread. */
#ifndef KNEE_TESTS_TIMING_H
#define KNEE_TESTS_TIMING_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>

/* How many tests of this program were skipped by timing_verdict (timing_exit reads it). */
static int timing_skipped;

/* After measurement `attempt` (1 or 2) of a timing check: `problem` is what its timing checks
 * found (NULL or "": they passed), `machine_why` knee's own verdict that the machine was
 * measured (NULL or "": knee called the measurement valid). Returns true when the checks passed,
 * false when the measurement is to be repeated (attempt 1, knee called it not valid); fails the
 * test (a problem on a valid measurement) or skips it (a second measurement knee calls not
 * valid) otherwise. The loop it ends:
 *     for (int attempt = 1;; attempt++) {
 *         measure(...);
 *         if (timing_verdict(attempt, problem, why))
 *             break;
 *     }
 * Neither string is kept. */
static inline bool timing_verdict(int attempt, const char *problem, const char *machine_why)
{
    if (!problem || !*problem)
        return true;
    if (!machine_why || !*machine_why)
        fail_msg("%s (attempt %d; knee called the measurement valid)", problem, attempt);
    if (attempt == 1) {
        printf("# attempt 1: %s; knee says the machine was measured (%s): once more\n", problem, machine_why);
        return false;
    }
    fprintf(stderr, "SKIP: %s; knee said twice that the machine, not the target, was measured (%s)\n", problem,
            machine_why);
    timing_skipped++;
    skip();
    return true; /* not reached: skip() leaves the test */
}

/* TIMING_CHECK(problem, cond): when the char array `problem` is still empty and cond is false,
 * problem names cond (file, line and text): the chain of a measurement's timing checks, which
 * timing_verdict then judges. */
#define TIMING_CHECK(problem, cond)                                                                                    \
    do {                                                                                                               \
        if (!(problem)[0] && !(cond))                                                                                  \
            snprintf((problem), sizeof(problem), "%s:%d: %s", __FILE__, __LINE__, #cond);                              \
    } while (0)

/* main's exit code: the failed tests' count from cmocka_run_group_tests, else 77 when a test was
 * skipped by timing_verdict, else 0. */
static inline int timing_exit(int failed)
{
    if (failed)
        return failed;
    return timing_skipped ? 77 : 0;
}

#endif
