/* The `knee stats` report: every number of the eleven analyses computed once from a loaded
 * dataset into struct report, then printed as text (the article's layout) or as one JSON
 * object (schema in docs/FORMATS.md, "knee stats JSON"). Three files, one concern each:
 *
 *   report.c       report_build: every number, and the warnings (nothing is printed)
 *   report_text.c  report_print_text: one printer per numbered analysis, 1 to 11, in order
 *   report_json.c  report_print_json: the same analyses, in the same order, as JSON
 *
 * The printers only read struct report: a number that is not in it is not printed. The
 * analysis depends on csv/, reqlog/, stats/, hist/ and core/ only, never on the load engine
 * or the lab (which use it). Not thread-safe. */
#ifndef KNEE_ANALYZE_REPORT_H
#define KNEE_ANALYZE_REPORT_H

#include "analyze/analyze.h"
#include "analyze/dataset.h"
#include "hist/prom.h"
#include "stats/stats.h"

#include <stdbool.h>
#include <stdio.h>

/* The percentiles of the confidence intervals (8.), by position. */
enum report_pct { REPORT_P50, REPORT_P90, REPORT_P95, REPORT_P99, REPORT_P999, REPORT_NPCT };
extern const double report_pcts[REPORT_NPCT];
extern const char *const report_pct_names[REPORT_NPCT];

/* The quantiles of the Prometheus estimates (5.), by position. */
enum report_prom { REPORT_PROM_P50, REPORT_PROM_P95, REPORT_PROM_P99, REPORT_NPROM };
extern const double report_prom_pcts[REPORT_NPROM];
extern const char *const report_prom_names[REPORT_NPROM];

/* knee run's latency histograms (load/run.h RUN_HDR_*; test_analyze checks they agree): the
 * "as knee run summarises them" numbers of a knee log are computed with the same histogram
 * over the same integer nanoseconds, so they equal knee run's own summary. */
#define REPORT_RUN_HDR_LOWEST 1
#define REPORT_RUN_HDR_HIGHEST 3600000000000LL
#define REPORT_RUN_HDR_DIGITS 3

#define REPORT_SMALL_WINDOWS 10
#define REPORT_SMALL_WINDOW_LEN 100
#define REPORT_CONFIDENCE 0.95
#define REPORT_HEAT_COLS 60
#define REPORT_BAR_WIDTH 50

struct report_opts {
    double under;             /* share-under threshold in the column's unit */
    const char *window_group; /* NULL: the first group in name order */
    bool expect_median;
    double expect_median_ms;
    bool custom_buckets; /* --buckets given */
};

struct group_result {
    char *name;
    struct summary s;
    bool has_ci;                   /* exact mode only */
    struct pct_ci ci[REPORT_NPCT]; /* one per report_pcts: value, beyond, too_few, interval */
    bool has_windows;
    struct window_p99 win;
    uint64_t late;  /* approx: rows outside the per-second windows */
    uint64_t under; /* values < threshold */
    struct mean_2sd m2s;
    struct summary as_run; /* has_as_run: knee run's HdrHistogram summary of the same values (ms) */
};

struct report {
    const char *column, *unit; /* unit: "ms", "s" or "" from the column's suffix */
    bool approx;
    const char *by_col, *time_col;
    size_t nfiles;
    char **files; /* borrowed from the dataset */
    /* accounting */
    uint64_t rows, kept, missing, filtered_where, filtered_time, filtered_warmup, hdr_overflow;
    uint64_t unordered; /* rows earlier in time than the row before them (put in order in exact mode) */
    /* 1. on knee's own logs, a _ms column, exact mode: every group's values summarised as knee
     * run does (HdrHistogram, REPORT_RUN_HDR_*, percentiles as bucket highest equivalents) */
    bool has_as_run;
    /* 1. */
    size_t ng;
    struct group_result *groups; /* in name order */
    struct group_result all;     /* all.name: the groups joined by '+' */
    /* 2. */
    struct dbl_hist hist;
    /* 3. */
    double p99_nearest, p99_exclusive, p99_inclusive;
    /* 4. */
    double groups_mean_p99;
    /* 5. */
    struct prom_hist prom;
    bool custom_buckets;
    struct prom_estimate prom_est[REPORT_NPROM]; /* histogram_quantile at report_prom_pcts */
    double prom_exact[REPORT_NPROM];             /* the nearest-rank values they estimate */
    /* 6. */
    double under;
    /* 7. */
    const char *small_group; /* NULL when no group has values */
    size_t small_n;          /* values in that group */
    size_t nsmall;
    struct small_window small[REPORT_SMALL_WINDOWS];
    /* 10. */
    bool has_heatmap;
    const struct heatmap *heat; /* borrowed from the dataset */
    /* 11. */
    bool has_median_check;
    struct median_check median;
    /* messages worth a reader's attention, in order */
    char **warnings;
    size_t nwarnings;
};

/* ---- report.c ---- */

/* "ms", "us" or "s" from a column name's suffix (latency_ms, start_s), else "". */
const char *report_column_unit(const char *column);

/* Compute every number. Consumes the dataset's value arrays (sorted in place and freed), so
 * the dataset is only good for dataset_release afterwards; borrowed pointers (files,
 * heatmap) stay valid until then. In approx mode the caller has run the second pass for
 * report_small_window_group(). 0, or KNEE_EEMPTY when no value was kept, or KNEE_ENOTFOUND
 * when opts->window_group names no group. */
int report_build(struct report *rep, struct dataset *d, const struct report_opts *opts);
/* The group whose small windows are shown: opts->window_group, else the first in name
 * order; REPORT_NO_GROUP when the named group does not exist (or there are no groups). An
 * index, not an error code. */
#define REPORT_NO_GROUP (-1L)
long report_small_window_group(const struct dataset *d, const struct report_opts *opts);
void report_release(struct report *rep);

/* ---- report_text.c ---- */

/* The article's layout: a title and the rows left out, then the numbered sections 1 to 11
 * (10 only with a time column, 11 only with --expect-median), then the warnings. */
void report_print_text(FILE *out, const struct report *rep);
/* Below the text on a terminal (termplot_detect(fd): a TTY wide enough; nothing on a pipe or
 * a file): the doubling-bucket histogram of 2. as coloured bars with the p99's bucket marked,
 * and, with a time column, the p99 of each heatmap bin (10.) as a sparkline, each bin's p99
 * read off its doubling buckets (the upper bound of the bucket holding rank ceil(0.99 n)). */
void report_print_pictures(FILE *out, int fd, const struct report *rep);

/* ---- report_json.c ---- */

/* One JSON object with every number the text shows (and the ranks and counts behind them);
 * pretty: indented, one key per line. */
void report_print_json(FILE *out, const struct report *rep, bool pretty);

#endif
