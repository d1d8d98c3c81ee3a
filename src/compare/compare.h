/* knee compare: before/after with repetitions, the same load model and a verdict with its
 * uncertainty. A side is a set of repetitions of one run plan; each repetition is
 * the latency distribution of its measured requests (warm-up left out) per target, plus the
 * load model read from the run's JSON. Two sides are compared per target and for all
 * targets: p50, p90, p99, p99.9, mean (and the share under --under) with the difference
 * AFTER - BEFORE, a confidence interval from a hierarchical bootstrap (repetitions, then
 * requests within each; docs/INTERNALS.md "knee compare"), the spread of the repetitions
 * within each side against the difference between the sides, and a verdict in words.
 *
 *   struct compare_side b, a;
 *   compare_side_load(&b, "before", paths, n, err, sizeof err);   (or fill it in memory:
 *   compare_side_init + compare_rep_add + compare_dist_from_values, as knee lab does)
 *   struct compare_opts o; compare_opts_init(&o);
 *   struct compare_result r;
 *   compare_run(&b, &a, &o, &r, err, sizeof err);   (refuses different load models unless o.force)
 *   compare_print_text(stdout, &r); compare_write_json(f, &r);
 *   compare_result_release(&r); compare_side_release(&b); ...
 *
 * Times are milliseconds. Not thread-safe (one comparison per thread); no global state. */
#ifndef KNEE_COMPARE_COMPARE_H
#define KNEE_COMPARE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hist/dbl.h"
#include "record/record.h" /* struct run_stage */

#define COMPARE_MAX_TARGETS 64
#define COMPARE_MAX_REPS 1000
#define COMPARE_MIN_REPS 3              /* fewer on either side: no verdict */
#define COMPARE_DEFAULT_RESAMPLES 2000  /* bootstrap replicates */
#define COMPARE_DEFAULT_CONFIDENCE 0.95 /* two-sided */
#define COMPARE_MIN_BEYOND 10           /* a percentile needs this many requests above it per side */
/* The bootstrap works on the distinct values of a side while there are at most this many;
 * beyond, on bins of COMPARE_GRID_PER_OCTAVE per doubling (relative width 2^(1/512)-1 =
 * 0.135%): the replicates' resolution; the point estimates are always exact. */
#define COMPARE_GRID_EXACT_MAX 4096
#define COMPARE_GRID_PER_OCTAVE 512

/* ---- distributions ------------------------------------------------------------------------ */

/* A latency distribution in ms: sorted distinct values x[i] (or, from an hlog, bucket values:
 * the highest equivalent value) with counts c[i] and sums s[i] (x[i]*c[i] for exact values;
 * the bucket's median equivalent times its count from an hlog, so the mean is HdrHistogram's). */
struct compare_dist {
    size_t m;
    double *x, *s;
    uint64_t *c;
    uint64_t n;   /* Σ c */
    double sum;   /* Σ s */
    bool approx;  /* from histograms (hlog): values are bucket values */
    uint64_t bad; /* requests without a latency are not here; this counts values refused (negative) */
};
/* From unsorted values (copied, sorted, ties merged). NaN values are skipped; negative or
 * infinite values are refused (KNEE_ERANGE). */
int compare_dist_from_values(struct compare_dist *d, const double *v, size_t n);
/* d = the union of the distributions (merged, ties merged). */
void compare_dist_merge(struct compare_dist *d, const struct compare_dist *const *parts, size_t nparts);
void compare_dist_release(struct compare_dist *d);
/* Nearest-rank percentile (as stats_nearest_rank: rank ceil(p/100*n), p*n/100 within 1e-12 of
 * an integer taken as that integer); NAN when empty. */
double compare_dist_percentile(const struct compare_dist *d, double p_percent);
double compare_dist_mean(const struct compare_dist *d);
/* Share of values < threshold_ms; NAN when empty. */
double compare_dist_share_under(const struct compare_dist *d, double threshold_ms);

/* ---- the load model ------------------------------------------------------------------------ */

struct compare_model_target {
    char name[64];
    char path[256];      /* the URL's request target (path?query); "" when unknown */
    char authority[96];  /* host:port (may differ between sides: the servers under test) */
    double planned_rate; /* open loop: requests/s */
    uint64_t clients;    /* closed loop */
};

/* What decides whether two runs measured the same thing, from a `knee run --json` document (read
 * by the run record's reader, record_read_json: knee-run/2 or /1). known = false when there was
 * no JSON: then only closed_loop (from a binary log's header) and the target names are known. */
struct compare_model {
    bool known;
    bool closed_loop, closed_known;
    char arrivals[16]; /* open loop: constant, poisson */
    double rate;       /* open loop: total rate (/s), NAN with a ramp */
    bool ramp;
    double ramp_from, ramp_to;
    size_t nstages; /* open loop, --stages: the rate as stages (rate NAN) */
    struct run_stage stages[RUN_MAX_STAGES];
    uint64_t pool_cap; /* open loop: the connection pool */
    char when_busy[8]; /* open loop: queue, drop */
    double think_s;    /* closed loop */
    double duration_s; /* NAN when bounded by requests */
    uint64_t requests;
    double timeout_s, warmup_s;
    bool keepalive;
    uint64_t seed;
    uint64_t threads;
    size_t ntargets;
    struct compare_model_target targets[COMPARE_MAX_TARGETS];
};

/* The first difference between two load models that makes them different experiments, as
 * one phrase ("rate: 1,000/s vs 2,000/s"), or "" when they are the same load model. Compared:
 * open vs closed loop, arrivals, rate, ramp or stages, connections (pool cap, clients), think time,
 * duration, requests, timeout, warm-up, keep-alive, when-busy, the targets (count, names or
 * request targets, their shares). Not compared: seed, threads, host:port. Returns the
 * number of differences (all of them are listed in diffs[0..max), each up to 200 bytes). */
size_t compare_model_diff(const struct compare_model *a, const struct compare_model *b, char diffs[][200], size_t max);
/* A one-line description: "open loop, 1,000/s poisson, 10 s, warm-up 1 s, 1 target". */
void compare_model_describe(const struct compare_model *m, char *buf, size_t len);

/* ---- per stage (stages.c) ---------------------------------------------------------------- */
/* One stage of one repetition, as its run JSON's "stages" gives it (warm-up included). */
struct compare_stage_point {
    uint64_t planned, ok;  /* requests planned in the stage; those that ended ok */
    double p50_ms, p99_ms; /* their ok latency; NAN without ok requests */
};
/* One row of the by-stage table: point values, no intervals. With several repetitions a side's
 * requests are summed, its p50 and p99 are the median of the repetitions' values and its error
 * rate is 1 - ok / planned over the summed counts. */
struct compare_stage_row {
    double from, to, duration_s; /* the stage as planned (the same on both sides) */
    uint64_t req_before, req_after;
    double p50_before, p50_after, p99_before, p99_after; /* ms; NAN without ok requests */
    double err_before, err_after;                        /* share of planned requests not ok; NAN when none */
    bool clients;                                        /* closed-loop stages: from and to are clients */
};
struct run_record;
struct jw;
struct compare_side;
/* The stage points of a run record read from its JSON (rec->stages; none: 0 points). */
void compare_stage_points_of(struct compare_stage_point *pts, size_t *npts, const struct run_record *rec);
/* The by-stage rows of two sides into rows[0..max): their number, or 0 when the sides do not share
 * the same stages (count, rates and durations of every repetition's load model) or a repetition
 * lacks its per-stage results. */
size_t compare_stage_rows(const struct compare_side *before, const struct compare_side *after,
                          struct compare_stage_row *rows, size_t max);
/* The by-stage table (nothing when compare_stage_rows gives none). */
void compare_print_stages(FILE *out, const struct compare_side *before, const struct compare_side *after);
/* "stages": [{index, from, to, duration_s, requests_before, ..., ratio}] (nothing when none). */
void compare_write_stages_json(struct jw *j, const struct compare_side *before, const struct compare_side *after);
/* ---- sides -------------------------------------------------------------------------------- */

struct compare_rep {
    char label[128];   /* the file stem or a name */
    char source[1024]; /* the files read */
    struct compare_model model;
    size_t ntargets;
    char names[COMPARE_MAX_TARGETS][64];
    struct compare_dist dist[COMPARE_MAX_TARGETS]; /* per target, warm-up left out */
    uint64_t requests;                             /* measured requests (with and without a latency) */
    uint64_t not_ok;                               /* measured requests with another outcome than ok */
    bool outcomes_known;
    bool warmup_known; /* false: a CSV without its JSON (warm-up rows could not be left out) */
    bool data_beside;  /* only the JSON was given: the data is STEM.bin/.csv/.hlog found beside it */
    char **warnings;   /* this repetition's problems (the run's own flags and self-checks) */
    size_t nwarnings;
    size_t nstage_points; /* --stages: the run JSON's "stages" (0: none or no JSON) */
    struct compare_stage_point stage_points[RUN_MAX_STAGES];
    /* --stream: every target's first events [COMPARE_FIRST_EVENT] and event gaps
     * [COMPARE_EVENT_GAP] in ms, from the hlog's first_event/ and event_gap/ tags (the data file
     * when it is the hlog, else STEM.hlog beside it); n 0: none (warm-up included, as the hlog) */
    struct compare_dist stream[2];
};
enum { COMPARE_FIRST_EVENT, COMPARE_EVENT_GAP };

struct compare_side {
    char name[16]; /* "before", "after" */
    size_t nreps;
    struct compare_rep *reps;
};

void compare_side_init(struct compare_side *s, const char *name);
void compare_side_release(struct compare_side *s);
/* A new empty repetition at the end of s (label copied). */
struct compare_rep *compare_rep_add(struct compare_side *s, const char *label);
/* Append a warning to a repetition (printf style). */
void compare_rep_warn(struct compare_rep *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Load a side from paths: one directory (every stem with a per-request log or an hlog is a
 * repetition, in natural order: rep-2 before rep-10; `knee run --repeat` writes them), or
 * files grouped by stem (a1.bin and a1.json are one repetition; a log's JSON is also looked
 * up beside it as STEM.json). Per repetition the most exact data wins: binary log, CSV,
 * hlog. Returns 0, or a negative code with "FILE: why" in err (bad input: exit 2). */
int compare_side_load(struct compare_side *s, const char *const *paths, size_t npaths, char *err, size_t errlen);
/* The load model and the run's own problems from a run JSON in memory (for fuzzing); name
 * labels messages. 0 or KNEE_EFORMAT with the reason in err. */
int compare_rep_load_json_mem(struct compare_rep *r, const void *data, size_t size, const char *name, char *err,
                              size_t errlen);
/* Load one repetition from its files (the stem's data file and optional JSON). */
int compare_rep_load(struct compare_rep *r, const char *data_path, const char *json_path, char *err, size_t errlen);

/* ---- the comparison ---------------------------------------------------------------------- */

enum compare_metric { CMP_P50, CMP_P90, CMP_P99, CMP_P999, CMP_MEAN, CMP_UNDER, CMP_NMETRICS };
extern const char *const compare_metric_names[CMP_NMETRICS]; /* "p50" ... "mean", "under" */

enum compare_verdict {
    CMP_V_NONE,          /* not computed (the metric is not asked for) */
    CMP_V_NO_DIFFERENCE, /* the interval contains 0 */
    CMP_V_FASTER,        /* the interval excludes 0 on the better side, and |difference| > spread within */
    CMP_V_SLOWER,        /* ... on the worse side */
    CMP_V_SPREAD,        /* the interval excludes 0, but the repetitions of a side spread more than that */
    CMP_V_FEW_REPS,      /* fewer than COMPARE_MIN_REPS repetitions on a side */
    CMP_V_FEW_SAMPLES,   /* fewer than COMPARE_MIN_BEYOND requests above the percentile on a side */
    CMP_V_MIXED,         /* overall only: some metrics better, some worse */
};
/* "no detectable difference", "faster", "slower", "spread within exceeds difference between",
 * "not enough repetitions (N<3)", "not enough samples", "mixed". */
const char *compare_verdict_name(enum compare_verdict v);

/* --fail-if: "slower" (any metric of all targets slower), or METRIC+X% / METRIC+Xms (the
 * metric slower and its whole interval above +X). */
struct compare_fail_if {
    char expr[64];
    bool any_slower;
    enum compare_metric metric;
    double limit; /* ms, or a fraction when relative */
    bool relative;
    bool failed;    /* set by compare_run */
    bool evaluated; /* false when there was no verdict to judge (N<3) */
};
/* Parse one --fail-if expression. 0 or KNEE_EINVAL with the reason in err. */
int compare_fail_if_parse(const char *s, struct compare_fail_if *f, char *err, size_t errlen);

struct compare_opts {
    size_t resamples;  /* >= 100 */
    double confidence; /* (0,1) */
    uint64_t seed;
    double under_ms;  /* > 0: the share under it is a metric; 0: none */
    bool force;       /* compare different load models anyway (the report says so first) */
    bool no_widening; /* tests: the bootstrap's percentile interval as it is (see compare_widening) */
    struct compare_fail_if *fail_if;
    size_t nfail_if;
};
void compare_opts_init(struct compare_opts *o); /* the defaults above, seed 1, no --under */

/* The factor by which knee widens the bootstrap's percentile interval around the point
 * estimate for nb and na repetitions: sqrt(R/(R-1)) * t(1-a/2, nb+na-2) / z(1-a/2) with R the
 * smaller side and a = 1 - confidence. With few repetitions the two-stage bootstrap sees only
 * (R-1)/R of the run-to-run variance and uses a normal quantile where a t quantile belongs
 * (Hesterberg's "expanded percentile interval", arXiv:1411.5279 / The American Statistician
 * 69(4), 2015, with the repetitions as the sample and the width scaled instead of the quantile
 * levels moved): 1.73 for 3 and 3 at 95%, 1.13 for 10 and 10. NAN below 2. */
double compare_widening(size_t nb, size_t na, double confidence);

struct compare_metric_result {
    bool used;
    double before, after;               /* pooled over the repetitions (exact) */
    double diff, rel;                   /* after - before; diff / before */
    double ci_lo, ci_hi;                /* interval of diff; NAN without one (N<3) */
    double ci_lo_rel, ci_hi_rel;        /* interval of after/before - 1 */
    double spread_before, spread_after; /* max - min of the repetitions' own values */
    double *reps_before, *reps_after;   /* each repetition's own value (nreps) */
    size_t beyond_before, beyond_after; /* requests above the percentile (percentiles only) */
    enum compare_verdict verdict;
};

struct compare_target_result {
    char name[140]; /* "name", or "before-name → after-name" when they differ */
    uint64_t n_before, n_after;
    struct compare_metric_result m[CMP_NMETRICS];
    enum compare_verdict verdict;
    char verdict_text[160];                  /* the overall verdict in words ("median better, tail worse") */
    struct dbl_hist hist_before, hist_after; /* doubling buckets from 1 ms, for the overlay */
};

struct compare_result {
    struct compare_opts opts;
    bool forced;
    size_t ndiffs;
    char diffs[16][200];  /* load-model differences (forced or refused) */
    char model_text[256]; /* the before side's load model, described */
    size_t nreps_before, nreps_after;
    size_t ntargets;
    struct compare_target_result *targets; /* [0..ntargets) per target, [ntargets] all */
    struct compare_target_result *all;
    char **warnings;
    size_t nwarnings;
    bool fail;             /* a --fail-if failed */
    bool fail_unevaluated; /* a --fail-if could not be judged (no verdict) */
    /* streamed responses: all targets' first events and gaps compared as latency is (the same
     * metrics, bootstrap and verdicts; named "first event", "event gap"), when every repetition
     * of both sides has them (has_stream) */
    bool has_stream[2];
    struct compare_target_result stream[2];
};

/* Compare two loaded sides. Returns 0 with *r filled (release it), KNEE_EMISMATCH when the
 * load models differ and !o->force (err names every difference, first the first), or
 * KNEE_EINVAL (a side without repetitions or without requests, targets that do not match)
 * with the reason in err. */
int compare_run(const struct compare_side *before, const struct compare_side *after, const struct compare_opts *o,
                struct compare_result *r, char *err, size_t errlen);
void compare_result_release(struct compare_result *r);

/* The report: the forced line first when forced, the load model, the method, a table per
 * target (all last) with before, after, difference [interval], spread within and verdict,
 * the overall verdict, the distributions side by side (doubling buckets) and the warnings. */
void compare_print_text(FILE *out, const struct compare_result *r, const struct compare_side *before,
                        const struct compare_side *after, bool verbose);
/* The JSON document (schema knee-compare/1, docs/FORMATS.md). */
void compare_write_json(FILE *out, const struct compare_result *r, const struct compare_side *before,
                        const struct compare_side *after);

/* The doubling buckets of two distributions side by side ("   2..4 ms  12.3% ####   10.1% ###"). */
void compare_print_overlay(FILE *out, const struct dbl_hist *before, const struct dbl_hist *after, int width);

/* ---- the bootstrap (boot.c), exposed for tests -------------------------------------------- */

/* The hierarchical bootstrap of one statistic's difference between two sides of
 * repetitions: each replicate draws R repetitions with replacement per side, then each
 * drawn repetition's requests with Poisson(1) weights (the Poisson bootstrap: each value's
 * count c becomes Poisson(c)), pools them and computes the statistic; the replicate is
 * after - before of the replicates. reps_*[i] is repetition i's distribution. Fills diff[0..resamples) and
 * rel[0..resamples) (the replicates' after / before - 1) for every metric in want (want[m] false: left
 * alone); rel may be NULL. plain = true resamples the pooled requests of a side instead
 * (no repetition level: the method compare does NOT use, kept to show why, in tests). */
struct compare_boot {
    size_t resamples;
    uint64_t seed;
    double under_ms;
    bool plain;
};
void compare_bootstrap(const struct compare_boot *b, const struct compare_dist *const *reps_before, size_t nb,
                       const struct compare_dist *const *reps_after, size_t na, const bool want[CMP_NMETRICS],
                       double *diff[CMP_NMETRICS], double *rel[CMP_NMETRICS]);

/* A Poisson(mean) variate (mean >= 0): multiplication of uniforms below 10, Hörmann's PTRS
 * transformed rejection from 10 on (W. Hörmann, "The transformed rejection method for
 * generating Poisson random variables", Insurance: Mathematics and Economics 12, 1993). */
struct rng;
uint64_t compare_poisson(struct rng *r, double mean);

/* ---- repetitions summary (knee run --repeat) --------------------------------------------- */

/* The layout of a `knee run --repeat N --out-dir DIR` directory (docs/FORMATS.md): for
 * repetition k (1-based) DIR/rep-k.bin (binary request log), DIR/rep-k.hlog and
 * DIR/rep-k.json (knee run's JSON), and DIR/repeat.json (the summary across repetitions,
 * schema knee-repeat/1). compare_side_load reads such a directory. */
#define COMPARE_REP_FMT "rep-%zu"
#define COMPARE_REPEAT_SUMMARY "repeat.json"

/* One repetition's headline numbers (ms, /s). */
struct compare_repeat_row {
    uint64_t requests;                 /* measured (after the warm-up) */
    double p50, p99, p999, mean, rate; /* latency of the measured requests; achieved send rate */
    bool interrupted, attention;
};
/* A repetition's row from its run record (record/record.h): the measured requests, the latency of
 * every completed one from its histogram (all.latency_all: a record the engine produced), the
 * achieved send rate, interrupted and attention. */
struct run_record;
void compare_repeat_row_of(struct compare_repeat_row *row, const struct run_record *rec);
/* Per metric (p50, p99, p99.9, mean, achieved rate): the median of the repetitions' values
 * and their min–max, then the spread as a share of the median. */
void compare_repeat_print(FILE *out, const struct compare_repeat_row *rows, size_t n);
/* The summary as JSON (schema knee-repeat/1): the repetitions with their files and numbers,
 * and per metric {median, min, max}. */
void compare_repeat_json(FILE *out, const struct compare_repeat_row *rows, size_t n, size_t planned, uint64_t settle_ns,
                         const char *dir);

#endif
