/* Self-checks of a finished run (what Lancet checks: its arrivals, stationarity, precision),
 * so that a comparison never rests on a broken run:
 *   - Poisson: with --arrivals poisson, an Anderson–Darling test that the actual inter-send
 *     gaps (from the binary request log) are exponential;
 *   - stationarity: a Mann–Kendall trend test with Sen's slope on the per-second p50 and p99
 *     of the measured window (the run's timeline);
 *   - precision: the exact 95% binomial confidence interval of the run's p99 and its width.
 * The statistics are src/stats (checks.h, stats.h); this module reads the run and its log
 * and words the results. A failed check is a warning prefixed "self-check:" in the run's
 * warnings (runcheck_annotate), so knee run's summary and JSON carry it, and knee compare
 * repeats it for the repetition it concerns. A Poisson run whose check could not be made (no
 * binary log: the run's result keeps no send times, only histograms and per-second counts)
 * gets a "self-check:" note saying so and why, never silence.
 *
 *   struct runcheck c;
 *   runcheck_run(&res, cfg->out_path, &c);  (log_path may be NULL: no Poisson check,
 *                                            the p99 interval from the histogram)
 *   runcheck_annotate(&c, &res);            (before the summary and the JSON print)
 */
#ifndef KNEE_RUNCHECK_RUNCHECK_H
#define KNEE_RUNCHECK_RUNCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/record.h"
#include "stats/checks.h"

#define RUNCHECK_AD_MAX_GAPS 5000 /* gaps tested (an even subsample beyond: gaps of a Poisson process are iid) */
#define RUNCHECK_AD_LEVEL 1.0     /* % : exponentiality rejected at this level → warning */
#define RUNCHECK_TREND_MIN_SECONDS 10
#define RUNCHECK_TREND_P 0.01     /* Mann–Kendall two-sided p below this ... */
#define RUNCHECK_TREND_DRIFT 0.10 /* ... and a drift over the run of at least 10% of the median → warning */
#define RUNCHECK_P99_CI_WIDE 0.20 /* the p99's 95% interval wider than 20% of the p99 → warning */

struct runcheck_trend {
    bool tested;
    size_t n;        /* seconds (or windows of seconds) in the series */
    double window_s; /* length of one point of the series */
    struct stats_mk mk;
    double median_ms; /* of the series */
    double drift_ms;  /* Sen's slope × the series' span: the change over the run */
    bool trend;       /* significant and large: the warning */
};

struct runcheck {
    /* Poisson arrivals */
    bool poisson_applies; /* open-loop Poisson arrivals without --ramp: the check is owed */
    bool poisson_tested;
    char poisson_note[160]; /* why it was not tested ("" when tested) */
    struct stats_ad ad;
    size_t gaps_total; /* gaps in the run; ad.n of them were tested */
    bool poisson_rejected;
    /* stationarity */
    struct runcheck_trend p50, p99;
    /* the p99 and its exact 95% interval (ms) */
    bool p99_known, p99_ci_defined, p99_exact;
    uint64_t n;
    double p99_ms, p99_lo_ms, p99_hi_ms, p99_width_rel; /* (hi - lo) / p99 */
    bool p99_wide;
};

/* Check a finished run's record (its plan: res->config, its shard record; its timeline and
 * histograms: a record the engine or knee merge produced, not one read back from JSON, which
 * holds no histograms). log_path: the run's binary request log (--out, not CSV) or NULL.
 * Returns 0, or a negative code with the reason in err when the log cannot be read (the
 * checks that do not need it are filled in anyway). */
int runcheck_run(const struct run_record *res, const char *log_path, struct runcheck *out, char *err, size_t errlen);

/* Append the failed checks to res->warnings as "self-check: ..." (attention set: the run
 * needs a look), and as notes (attention unchanged) a Poisson check that was owed but not
 * made, with c->poisson_note as the reason, and the p99 interval. */
void runcheck_annotate(const struct runcheck *c, struct run_record *res);

/* One line per check ("  poisson: ...", "  stationary: ...", "  p99 interval: ..."). */
void runcheck_print(FILE *out, const struct runcheck *c, const char *indent);

/* The p99's exact 95% interval from a latency histogram (ns): for --until-ci, which checks
 * it every second. Returns false when it is not defined (too few samples). */
bool runcheck_p99_ci(const struct hdr *h, double *p99_ms, double *lo_ms, double *hi_ms);

#endif
