/* knee report: one self-contained HTML file with the pictures of one or more runs (histogram
 * with doubling buckets, percentile spectrum, latency over time, heatmap, rates/outcomes/lag
 * over time, the summary block; for streamed responses the first-event and event-gap spectra).
 * The chart library (uPlot), knee's chart script, its CSS and
 * the data are inlined, so the file opens anywhere without a network.
 *
 * Two layers: a data model (struct html_run) built in ONE streaming pass over whatever the
 * caller has — per-request records (binary log, CSV, or fed directly), HdrHistogram intervals
 * (.hlog), a run's --json summary — into bounded memory (a 10-million-request log needs the
 * same few MB as a small one), and a writer that turns the model into the HTML file.
 *
 * Usage (knee report; `knee run --html` feeds records and its summary text the same way):
 *
 *     struct html_report *rep = html_report_new();
 *     struct html_run *run = html_report_add_run(rep, "open loop");
 *     if (html_run_load_file(run, "run.json", err, sizeof err) ||
 *         html_run_load_file(run, "run.bin", err, sizeof err))
 *         ... exit 2 with err ...
 *     if (html_report_write_file(rep, "report.html", err, sizeof err))
 *         ... exit 1 with err ...
 *     html_report_free(rep);
 *
 * Times in the model are nanoseconds (int64) since the run start; the HTML shows ms and s.
 * Nothing here is thread-safe: one report per thread. Out of memory aborts (core/err.h). */
#ifndef KNEE_HTML_HTML_H
#define KNEE_HTML_HTML_H

#include "hist/hdr.h"
#include "reqlog/reqlog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct html_report;
struct html_run;

/* One request as the model takes it. A value that does not exist is -1 (a dropped request has
 * no sent, latency or service; a request without a first byte no ttfb). */
struct html_request {
    uint32_t target;    /* index into the run's target names */
    int64_t planned_ns; /* T0 since the run start (closed loop: = T1) */
    int64_t lag_ns;     /* T1 - T0; -1 when never sent */
    int64_t latency_ns; /* T5 - T0; -1 when never done */
    int64_t service_ns; /* T5 - T1; -1 when not sent or not done */
    int64_t ttfb_ns;    /* first byte - T1; -1 when none */
    uint8_t outcome;    /* enum reqlog_outcome */
    uint16_t status;    /* HTTP status, 0 when none (a request without a response, an old CSV) */
    bool warmup;        /* planned inside --warmup: drawn, left out of the statistics */
};

/* A binary-log record in the model's terms (reqlog_derive's rules, in integer ns). */
void html_request_from_reqlog(const struct reqlog_record *r, struct html_request *out);

/* ---- the report ---------------------------------------------------------------------- */

struct html_report *html_report_new(void);
void html_report_free(struct html_report *rep); /* NULL is a no-op */

/* A new, empty run (name copied; shown as the run's title). The report owns it. */
struct html_run *html_report_add_run(struct html_report *rep, const char *name);
size_t html_report_nruns(const struct html_report *rep);
size_t html_report_ndocuments(const struct html_report *rep); /* compare, capacity, repeat sections */
struct html_run *html_report_run(struct html_report *rep, size_t i);

/* ---- inputs: files ------------------------------------------------------------------- */

enum html_input_kind { HTML_INPUT_REQLOG, HTML_INPUT_CSV, HTML_INPUT_HLOG, HTML_INPUT_JSON };
const char *html_input_kind_name(enum html_input_kind k); /* "binary log", "CSV", "hlog", "JSON" */

/* The kind of a file, from its first bytes (binary-log magic, '{', "#[" or an hlog line) and,
 * for .hlog, its name. 0 and *kind, or -errno (with a message in err). */
int html_detect_kind(const char *path, enum html_input_kind *kind, char *err, size_t errlen);

/* Load a file into run, by its detected kind. A run takes at most one per-request log (binary
 * or CSV), one hlog and one JSON; a second of a kind is KNEE_EINVAL. Bad input is a negative
 * code with "FILE:LINE: why" (or "FILE: record N: why") in err: exit 2 material. */
int html_run_load_file(struct html_run *run, const char *path, char *err, size_t errlen);
int html_run_load_reqlog(struct html_run *run, const char *path, char *err, size_t errlen);
int html_run_load_csv(struct html_run *run, const char *path, char *err, size_t errlen);
int html_run_load_hlog(struct html_run *run, const char *path, char *err, size_t errlen);
/* A `knee run --json` document (schema knee-run/2, or /1 from an older knee): the summary block word for word as the
 * terminal printed it, the plan (open/closed loop, warm-up), the per-second timeline and, from
 * knee run --stream, the "stream" objects (first event, event gaps, their spectra) as written. */
int html_run_load_json(struct html_run *run, const char *path, char *err, size_t errlen);
/* The same from memory (name labels messages). For fuzzing and in-process producers. */
int html_run_load_json_mem(struct html_run *run, const void *data, size_t size, const char *name, char *err,
                           size_t errlen);

/* Runs from command-line inputs (knee report): each spec "NAME=FILE[,FILE...]" is one run;
 * the positional paths — files, or directories whose .json/.bin/.csv/.hlog/.log files are
 * taken in name order — are grouped into runs by their path without the extension, so
 * run.json and run.bin are one run named "run" (the whole path when two directories hold the
 * same name). Within a run the JSON is read first. Errors as html_run_load_file. */
int html_report_add_inputs(struct html_report *rep, const char *const *specs, size_t nspecs, const char *const *paths,
                           size_t npaths, char *err, size_t errlen);

/* ---- inputs: documents ---------------------------------------------------------------- */

/* True for the schemas of the documents a report draws besides runs: knee compare's
 * (knee-compare/1), knee capacity's (knee-capacity/1) and knee run --repeat's summary
 * (knee-repeat/1). */
bool html_document_schema(const char *schema);
/* Such a document as a section of the report named name: compare (the two distributions
 * overlaid, the differences with their intervals), capacity (the knee curve, the ladder x
 * repetition grid, the probes), repeat (the repetitions side by side). 0, or KNEE_EFORMAT with
 * "FILE[:LINE]: why" in err (not JSON, another schema, a part the charts need missing). */
int html_report_add_document(struct html_report *rep, const char *name, const char *path, char *err, size_t errlen);
/* The same from memory (source names it in messages and on the page). */
int html_report_add_document_mem(struct html_report *rep, const char *name, const void *data, size_t size,
                                 const char *source, char *err, size_t errlen);
/* A service time (s) for capacity documents: their knee curve also draws the M/M/1 and M/D/1
 * predictions of src/model (Poisson arrivals, one server). 0 = none. */
void html_report_set_service_time(struct html_report *rep, double service_s);
/* The servers c sharing one queue in those predictions: 1 (the default) draws M/M/1 and M/D/1,
 * more draws M/M/c (Erlang C; src/model has no M/D/c), saturating at c/S. 0 is taken as 1. */
void html_report_set_servers(struct html_report *rep, unsigned servers);

/* ---- inputs: direct feeding (in-process producers) ------------------------------------ */

/* Start the per-request part of a run: the target names (copied) and whether latency is
 * T5 - T1 (closed loop). Once per run; KNEE_EINVAL when records were already added. */
int html_run_begin_requests(struct html_run *run, const char *const *targets, size_t ntargets, bool closed_loop);
/* One request (any order; O(1) amortised, no per-request allocation after warm-up).
 * KNEE_EINVAL when the target index or outcome is out of range (nothing recorded). */
int html_run_add_request(struct html_run *run, const struct html_request *rq);
/* One histogram interval of a target (values in ns, start_s since the run start): the route of
 * .hlog files and of producers that only keep histograms. KNEE_EMISMATCH when its bucket layout
 * differs from the target's earlier intervals (exact sums only). */
int html_run_add_interval(struct html_run *run, const char *target, double start_s, double length_s,
                          const struct hdr *h, char *err, size_t errlen);
/* The summary block as the terminal printed it (copied): shown verbatim, in place of the one
 * built from a JSON or from the records. */
void html_run_set_summary_text(struct html_run *run, const char *text);
/* A source line under the run's title ("run.bin (binary log, 10,000 records)"). */
void html_run_add_source(struct html_run *run, const char *text);
/* The generator-limited threshold drawn on the lag chart (ns; default 1 ms, knee run's). */
void html_run_set_lag_limit(struct html_run *run, uint64_t lag_limit_ns);

/* ---- output ----------------------------------------------------------------------------- */

/* Write the whole HTML document to out. 0, or KNEE_EINVAL (no runs) / -errno (write failed:
 * ferror) with a message in err. */
int html_report_write(struct html_report *rep, FILE *out, char *err, size_t errlen);
/* The same into path through core/outfile: an existing file is replaced only once the report
 * is whole, a device or FIFO is written in place, "-" is stdout. Errors name the path. */
int html_report_write_file(struct html_report *rep, const char *path, char *err, size_t errlen);

/* What a command's --html FILE reports (html_write_report). */
struct html_write_opts {
    /* The section's name. With a name, json and files are one run (or one document) of that
     * name; without (NULL), files are grouped into runs as knee report's inputs are. */
    const char *name;
    /* A knee document in memory, by its schema: a run (knee-run/2), a comparison
     * (knee-compare/1), a capacity search (knee-capacity/1); NULL when none. */
    const char *json;
    size_t json_len;
    const char *summary_text; /* a run's summary as the command printed it (NULL: from the JSON) */
    const char *const *files; /* per-request logs, hlogs, directories (NULL-terminated; may be NULL) */
    double service_s;         /* capacity: the service time of the queueing predictions (0: none) */
    unsigned servers;         /* and its servers (0 or 1: M/M/1 and M/D/1; more: M/M/c) */
};
/* One call for a command's --html FILE (knee run, stats, compare, capacity, lab): the report
 * of what the command has, the same as knee report makes of the files the command wrote.
 * Written whole or not at all. Errors as html_run_load_file (bad input) and
 * html_report_write_file (the output), with the reason in err; *output_failed (may be NULL)
 * is true when the inputs were read and the file could not be written (exit 1, not 2). */
int html_write_report(const char *out_path, const struct html_write_opts *o, bool *output_failed, char *err,
                      size_t errlen);
/* html_write_report of one run: its knee-run JSON (NULL when none), the summary it printed
 * (NULL: from the JSON) and its files. */
int html_write_run_report(const char *out_path, const char *name, const char *json, size_t json_len,
                          const char *summary_text, const char *const *files, char *err, size_t errlen);

/* The version of the embedded chart library ("1.6.32"). */
const char *html_chart_library_version(void);

#endif
