/* knee lab compare, declared apart from lab.h while other experiments change
 * there; registry.c includes it. See exp_compare.c. */
#ifndef KNEE_LAB_LAB_COMPARE_H
#define KNEE_LAB_LAB_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "compare/compare.h"
#include "lab/lab.h"

#define LAB_COMPARE_PAIRS 3      /* single-run pairs of the unchanged server = 3 repetitions a side */
#define LAB_COMPARE_ADDED_MS 3.0 /* the real change: ms added to every cache hit */

struct lab_compare_pair {
    double before_p50, before_p99, after_p50, after_p99; /* ms, one run each */
    double p99_rel;                                      /* after/before - 1 */
    bool plain_p50_differs; /* a plain bootstrap over the two runs' requests: the p50 interval excludes 0 */
    bool plain_p99_differs;
};

struct lab_compare_result {
    size_t npairs;
    struct lab_compare_pair pair[LAB_COMPARE_PAIRS];
    /* the same runs, 3 repetitions a side */
    enum compare_verdict same_verdict;
    char same_verdict_text[160];
    /* a real change: 3 ms added to every hit, 3 repetitions */
    enum compare_verdict changed_verdict;
    char changed_verdict_text[160];
    double changed_p50_diff, changed_p50_lo, changed_p50_hi; /* ms */
    bool changed_contains;                                   /* the p50 interval contains LAB_COMPARE_ADDED_MS */
};

int lab_compare(const struct lab_options *o, struct lab_compare_result *r);

#endif
