/* The reports of `knee run`: the terminal summary and the JSON document (schema in
 * docs/FORMATS.md, "knee run JSON"). Both read a finished struct run_result and write to a
 * FILE * the caller owns; they print only measured values (a statistic without samples is
 * "-" in text and null in JSON). */
#ifndef KNEE_RUNREPORT_H
#define KNEE_RUNREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "load/run.h"
#include "load/threshold.h"

/* The JSON document's schema name. Version 2: rates by event time (docs/FORMATS.md, "Rates"),
 * events, the window's edges, the generator verdict, sent_on_schedule (was send_ratio). */
#define RUN_JSON_SCHEMA "knee-run/2"

/* True for a knee run JSON schema that readers (report, compare, merge) accept: this version
 * and knee-run/1 (written before the rates were by event time). NULL is false. */
bool run_json_schema_readable(const char *schema);

/* ---- the summary model -------------------------------------------------------------------
 *
 * Everything knee run's terminal summary prints, as plain values: the plan, the counts, the
 * rates, each histogram's statistics (struct run_summary, ms), the warnings and thresholds.
 * It is filled either from a finished run (run_view_init, as knee run does) or from the
 * run's JSON document (run_view_init_json: knee-run/2, whose numbers round-trip exactly, so
 * the text is the terminal's byte for byte; knee-run/1 as far as it holds the numbers), and
 * printed by the one printer (run_view_print), which also makes the one compact-or-full
 * choice (run_view_needs_full). knee report shows that text. */

struct run_view_st {
    char name[32];
    struct run_summary dur; /* ms */
};

struct run_view_target {
    char name[64];
    char url[256];
    char address[64];
    uint64_t resolve_ns;
    double planned_rate;      /* open loop: the plan for this target, per second */
    double own_rate;          /* the target's own @R rate (0: it shares the run's rate) */
    uint32_t connections;     /* closed loop: clients */
    struct run_counts counts; /* after the warm-up (sent_on_time, queued: not used) */
    struct run_counts warmup_counts;
    uint64_t bytes_in_total;  /* bytes received, warm-up included */
    struct run_events events; /* planned, sent, ok inside the window */
    struct run_rates rates;   /* per second over the window; achieved send; late events */
    struct run_summary latency_all, latency[RUN_GROUP_COUNT], service, ttfb, lag, connect;
    struct run_summary tls;     /* the TLS handshake per new connection */
    bool https;                 /* an https target (all: any is) */
    struct run_proto_counts pc; /* protocols, TLS versions and handshakes, HTTP/2 */
    size_t nst;
    struct run_view_st st[RUN_ST_MAX_NAMES];
};

struct run_view_threshold {
    char expr[160];
    char unit[8]; /* "ms", "", "/s", or "%" (a fraction, printed as a share) */
    double measured;
    bool pass;
};

struct run_view {
    /* the plan (run_config) */
    bool open_loop, poisson, ramp, drop_when_busy, keepalive, retry_stale;
    uint64_t seed;
    double rate;               /* the shared --rate (0: none) */
    double ramp_from, ramp_to; /* --ramp */
    uint64_t think_ns, warmup_ns, lag_limit_ns, requests;
    uint64_t timer_slack_ns; /* --timer-slack (0: none) */
    double duration_s;       /* 0: bounded by --requests */
    uint32_t threads, pool_cap;
    enum run_http http;               /* --http1.1 / --http2 over TLS (RUN_HTTP_AUTO: ALPN) */
    bool tls_insecure, tls_no_resume; /* --insecure, --tls-resume off */
    uint32_t streams;                 /* --streams (0: not given) */
    char io[8];                       /* the I/O engine that ran: "epoll", "uring" ("": not recorded) */
    /* the result */
    size_t ntargets;
    struct run_view_target *targets;
    struct run_view_target all;
    double window_start_s, window_end_s, window_s, elapsed_s, sent_on_schedule;
    struct run_generator_cpu gen_cpu; /* environment.generator_cpu (threads 0: not known) */
    bool interrupted, accounting_ok, generator_limited, attention;
    bool verbose; /* knee run --verbose: the full form whatever run_view_needs_full says */
    size_t nwarnings;
    char **warnings;
    size_t nthresholds;
    struct run_view_threshold *thresholds;
};

/* The view of a finished run (heap parts owned by v: run_view_release). */
void run_view_init(struct run_view *v, const struct run_config *cfg, const struct run_result *res,
                   const struct run_threshold *thr, size_t nthr, bool verbose);

struct json_t; /* jansson's */
/* The view of a knee run JSON document, parsed by jansson (root: borrowed). 0, or
 * KNEE_EFORMAT with a reason in err (not a knee-run document, "all" or "targets" missing or
 * of the wrong type); a number that is missing prints as "-" (or 0 for a count). */
int run_view_init_json(struct run_view *v, const struct json_t *root, char *err, size_t errlen);
void run_view_release(struct run_view *v);
/* A target object's "protocols", "tls_versions", "tls_handshakes" and "h2" read into *pc
 * (missing: zero; h2 "max_concurrent" null: UINT64_MAX); true when its "tls" is an object (an
 * https target). knee merge adds the shards' with run_proto_counts_add. */
bool run_view_read_transport(const struct json_t *target, struct run_proto_counts *pc);

/* True when the summary must be the full form even without --verbose: several targets, a
 * warning that needs attention, failed requests (anything but ok and rejected), a broken
 * identity, an interrupted or generator-limited run, a failed threshold. */
bool run_view_needs_full(const struct run_view *v);

/* The terminal summary (the full form when v->verbose or run_view_needs_full). */
void run_view_print(FILE *out, const struct run_view *v);

/* Pieces of it, for summaries of inputs that hold only part of a run (knee report of a
 * per-request log or an hlog without the JSON): the accounting identities of a set of counts
 * (every outcome named), the latency tables of one target (open or closed loop's intervals),
 * and one table's header and rows. */
void run_print_accounting(FILE *out, const struct run_counts *c, const char *indent);
void run_print_latency_tables(FILE *out, bool open_loop, const struct run_view_target *t);
void run_print_table_header(FILE *out);
void run_print_table_row(FILE *out, const char *label, const struct run_summary *s);

/* The human summary (run_view_init + run_view_print). The full form: the plan, the accounting identities with every
 * outcome (warm-up apart), rates, latency by outcome and the service/ttfb/lag/connect tables (each labelled with its
 * interval), per target when there are several, Server-Timing, connections, warnings and the thresholds. The compact
 * form (one target, nothing that needs attention, !verbose): the plan, the accounting with the outcomes that occurred,
 * rates, latency p50/p90/p99/p99.9/max (and the generator's lag in an open loop), Server-Timing when the server sent
 * it, connections, warnings and thresholds in ~15 lines. The JSON holds everything either form leaves out. */
void run_print_summary(FILE *out, const struct run_config *cfg, const struct run_result *res,
                       const struct run_threshold *thr, size_t nthr, bool verbose);

/* run_view_needs_full of the run's view. */
bool run_summary_needs_full(const struct run_config *cfg, const struct run_result *res, const struct run_threshold *thr,
                            size_t nthr);

/* The whole summary as one JSON object (pretty when `pretty`). verbose: the terminal summary
 * was asked in its full form (knee run --verbose), recorded so the JSON rebuilds it. */
void run_write_json(FILE *out, const struct run_config *cfg, const struct run_result *res,
                    const struct run_threshold *thr, size_t nthr, bool verbose, bool pretty);

/* The plan of a run that is not run (knee run --dry-run): the same head as the summary, each
 * target with its share and its planned count and the size of its request, then the planned
 * requests (exact, or "about" for Poisson arrivals), the warm-up, timeout and drain. */
void run_print_plan(FILE *out, const struct run_config *cfg, const struct run_plan *plan);

/* Below the summary on a terminal (termplot_detect(fd): a TTY wide enough; nothing on a pipe
 * or file): the latency of the requests after the warm-up as a histogram of doubling buckets
 * with the p99's bucket marked, and the p99 of each second (knee run's timeline, by completion
 * time, warm-up included) as a sparkline. */
void run_print_pictures(FILE *out, int fd, const struct run_config *cfg, const struct run_result *res);

/* One progress line: on a terminal "\r" + text + erase-to-end-of-line, no newline (the next
 * one overwrites it); elsewhere (a pipe, a file) the plain text and "\n", one line per second,
 * without control bytes. */
void run_print_progress(FILE *out, const struct run_progress *p, bool terminal);

#endif
