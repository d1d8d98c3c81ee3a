/* The data model of knee report, shared by its files (not an API: html.h is). A run holds
 * per-target histograms, a per-interval timeline and the per-column scatter, all bounded in
 * memory whatever the number of requests; the writer reads them once at the end. */
#ifndef KNEE_HTML_INTERNAL_H
#define KNEE_HTML_INTERNAL_H

#include "hist/dbl.h"
#include "hist/hdr.h"
#include "html/html.h"
#include "record/record.h"
#include "record/status.h"
#include "reqlog/reqlog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- the scatter: per pixel column, per series, exact extremes ---------------------------
 * Points are binned into columns of width_ns on the time axis; a column keeps, per series and
 * per quarter-doubling band of the value, the request with the smallest and the one with the
 * largest value (time and value exactly as recorded) and how many fell there. So the exact
 * minimum and maximum of every column and series survive, the cloud between them is drawn from
 * real requests, and nothing is sampled at random. When a point falls outside the columns'
 * span, the width doubles and neighbouring columns merge (min of minima, max of maxima, counts
 * added): one pass, any input order, between ncols/2 and ncols columns over the data. */

enum html_series {
    HTML_S_OK, /* latency (T5 - T0, or T5 - T1 in a closed loop) by outcome class */
    HTML_S_REJECTED,
    HTML_S_HTTP_ERROR,
    HTML_S_INVALID,
    HTML_S_TRANSPORT,
    HTML_S_TIMEOUT,
    HTML_S_CANCELLED,
    HTML_S_SERVICE, /* service time T5 - T1, every outcome with one */
    HTML_S_COUNT
};

#define HTML_SCATTER_COLUMNS 2048
#define HTML_SCATTER_FIRST_WIDTH_NS 1000000LL /* 1 ms: a short run keeps ms resolution */
#define HTML_BANDS_PER_DOUBLING 4

struct html_cell {
    int32_t band;
    uint64_t count;
    int64_t min_t, min_v, max_t, max_v;
};

struct html_cellvec {
    struct html_cell *v;
    uint32_t n, cap;
};

struct html_column {
    struct html_cellvec s[HTML_S_COUNT];
    uint64_t dropped; /* requests never sent, planned in this column */
};

struct html_decim {
    size_t ncols;
    int64_t width_ns;
    int64_t base; /* absolute index (t / width) of cols[0] */
    bool any;
    int64_t lo, hi; /* occupied absolute indices */
    struct html_column *cols;
    uint64_t count[HTML_S_COUNT]; /* points added per series */
    uint64_t dropped;
};

void html_decim_init(struct html_decim *d, size_t ncols, int64_t first_width_ns);
void html_decim_release(struct html_decim *d);
/* One point of a series (t and v in ns, v >= 0). */
void html_decim_add(struct html_decim *d, enum html_series s, int64_t t_ns, int64_t v_ns);
void html_decim_add_dropped(struct html_decim *d, int64_t t_ns);
/* The band of a value: 0 for v <= 0, else 1 + 4*floor(log2 v) + quarter of the doubling. */
int32_t html_band_of(int64_t v_ns);
/* The kept points of series s in time order (t, v pairs, ns); *n points. Caller frees. */
int64_t *html_decim_points(const struct html_decim *d, enum html_series s, size_t *n);

/* ---- the timeline: per interval counts, lag, heatmap ------------------------------------
 * Intervals of interval_ns (1 s at first; doubled, merging neighbours, when a run needs more
 * than HTML_MAX_TICKS of them). Events land in the interval of their own time: planned and
 * dropped at T0, sent at T1, completions and their outcome at T5; the heatmap and the lag at T0. */

#define HTML_MAX_TICKS 1024
#define HTML_FIRST_TICK_NS 1000000000LL
#define HTML_DBL_FIRST_MS (1.0 / 1024) /* doubling buckets ..., 1/1024, ..., 0.5, 1, 2, 4 ms */
#define HTML_LAG_DIGITS 2

/* Responses by status class over time: none (no status: transport, timeout, cancelled), 1xx ..
 * 5xx, other (a status outside 100 .. 599). */
enum { HTML_ST_NONE, HTML_ST_1XX, HTML_ST_2XX, HTML_ST_3XX, HTML_ST_4XX, HTML_ST_5XX, HTML_ST_OTHER, HTML_ST_CLASSES };
/* The class of a status (0: none). */
int html_status_class(int status);
struct html_tick {
    uint64_t planned, sent, done, dropped;
    uint64_t outcome[OUTCOME_COUNT];        /* by completion time (dropped: by plan) */
    uint64_t status_class[HTML_ST_CLASSES]; /* requests sent, by their status's class at completion (or T0) */
    bool warmup;                            /* holds requests planned inside --warmup */
    struct hdr *lag;                        /* NULL until a request planned here was sent */
    struct dbl_hist heat;                   /* latency by T0 */
    /* from histograms only (hlog): latency percentiles of the interval */
    struct hdr *lat;
};

struct html_timeline {
    int64_t interval_ns;
    int64_t base; /* absolute index of ticks[0] */
    size_t n;     /* ticks in use */
    size_t cap;
    struct html_tick *ticks;
    bool any;
};

void html_timeline_init(struct html_timeline *tl);
void html_timeline_release(struct html_timeline *tl);
/* The interval holding t (growing or coarsening the timeline as needed). */
struct html_tick *html_timeline_at(struct html_timeline *tl, int64_t t_ns);

/* ---- per target ------------------------------------------------------------------------- */

/* knee run's histogram parameters (1 ns .. 1 h, 3 significant digits), so the report's
 * percentiles of a run's log are the ones its summary printed. */
#define HTML_HDR_LOWEST 1
#define HTML_HDR_HIGHEST 3600000000000LL
#define HTML_HDR_DIGITS 3
#define HTML_GROUPS 6
/* Times and durations beyond this (about 31 years in ns) are refused as corrupt input, so sums
 * of a time and a duration never overflow. */
#define HTML_MAX_NS                                                                                                    \
    1000000000000000000LL /* latency rows of the summary: ok, rejected, http_error, invalid, transport, timeout */

struct html_target {
    char *name;
    /* statistics over requests planned after the warm-up, as knee run's summary; histograms
     * are allocated when first used (counts == NULL before) */
    struct hdr latency; /* every outcome that carries a latency (not dropped, not cancelled) */
    struct hdr group[HTML_GROUPS];
    struct hdr service, ttfb, lag;
    struct dbl_hist dbl; /* the latencies in doubling buckets */
    uint64_t outcome[OUTCOME_COUNT];
    uint64_t warm_outcome[OUTCOME_COUNT];
    uint64_t planned, warm_planned, sent, warm_sent;
    bool from_hist; /* filled from histogram intervals (hlog), not requests */
};

/* ---- the run JSON, as far as the report uses it ----------------------------------------- */

struct html_tlpoint {
    double start_s, length_s;
    double planned, sent, completed, ok, errors, dropped, p50_ms, p99_ms, max_ms;
};

struct html_run {
    char *name;
    char **sources;
    size_t nsources;
    bool have_requests, have_hlog, have_json;
    char *json_path, *log_path, *hlog_path;
    /* the plan */
    int closed_loop; /* -1 unknown, 0 open, 1 closed */
    double warmup_s; /* NAN unknown */
    /* --stages: where each stage starts, s since t0 (the time charts mark them); 0 stages: none */
    double stage_start_s[RUN_MAX_STAGES];
    size_t nstages;
    uint64_t lag_limit_ns;
    bool lag_limit_known;
    uint64_t timer_slack_ns; /* --timer-slack of the run (its JSON's config; 0 none or unknown) */
    /* per-request model */
    struct html_target *targets;
    size_t ntargets;
    struct html_decim scatter;
    struct html_timeline tl;
    uint64_t nrequests, nwarm;
    int64_t t_min_ns, t_max_ns; /* planned times seen (statistics window) */
    /* responses by status after the warm-up: the JSON's all.status_codes when the run has one (json_status),
       else the per-request log's (every request with a status) */
    struct run_status_counts status;
    bool json_status;
    struct run_entries entries; /* the JSON's per-entry tables of a targets file (none: n 0) */
    bool t_any;
    /* summary */
    char *summary_text;
    char *summary_origin; /* "the run's JSON", "the per-request log", ... */
    /* from the JSON */
    struct html_tlpoint *jtl;
    size_t njtl;
    bool json_generator_limited;
    double json_window_s;
    /* notes: charts left out and why, inputs not used */
    char **notes;
    size_t nnotes;
    /* streamed responses (stream.c): {targets: [the JSON's "stream" of each target that has
       one, with its "name"], all: the same of "all" or null}; NULL when the run streamed none */
    struct json_t *stream;
};

/* ---- streamed responses (stream.c) ---------------------------------------------------------- */

/* The "stream" objects of a run JSON's targets and all (root borrowed) into run->stream, replacing
 * any; a spectrum the charts cannot draw is dropped with a note. Nothing when none streamed. */
void html_stream_load(struct html_run *run, const struct json_t *root);

/* ---- documents: knee compare, knee capacity, knee run --repeat's summary (docs.c) ----------- */

enum html_doc_kind { HTML_DOC_COMPARE, HTML_DOC_CAPACITY, HTML_DOC_REPEAT };

struct json_t; /* jansson's */

struct html_doc {
    enum html_doc_kind kind;
    char *name;
    char *source;
    struct json_t *root; /* the document, checked (one reference owned) */
};

void html_doc_free(struct html_doc *d); /* NULL is a no-op */
/* The schema of a JSON file ("" when it has none). 0, or KNEE_EFORMAT "FILE:LINE: why". */
int html_json_schema(const char *path, char *schema, size_t len, char *err, size_t errlen);
/* The document's entry of the data object: {kind, name, source, doc, knee {slo, prediction}}
 * (a new reference). */
struct json_t *html_doc_data(const struct html_report *rep, const struct html_doc *d);
/* v as compact JSON safe inside a <script> element. */
void html_json_out(FILE *out, const struct json_t *v);

struct html_report {
    struct html_run **runs;
    size_t nruns;
    struct html_doc **docs;
    size_t ndocs;
    double service_s; /* capacity: the service time of the queueing predictions (0: none) */
    unsigned servers; /* and the servers sharing one queue (0 or 1: one; more: M/M/c) */
};

void html_run_note(struct html_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Find or add a target by name (for histogram inputs); its index. */
size_t html_run_target(struct html_run *run, const char *name);

/* The parts of the terminal summary the records can back (accounting, latency tables). */
char *html_summary_from_model(const struct html_run *run);

/* Write the report's data object (the JSON inside the page). */
void html_write_data(FILE *out, const struct html_report *rep);

/* The embedded assets (generated at build time from the pinned uPlot and src/html/report.*). */
extern const unsigned char html_asset_uplot_js[]; /* NUL-terminated text */
extern const unsigned char html_asset_uplot_css[];
extern const unsigned char html_asset_uplot_license[];
extern const unsigned char html_asset_report_js[];
extern const unsigned char html_asset_report_css[];
extern const char html_asset_uplot_version[];
#define HTML_ASSET(name) ((const char *)(name))

#endif
