/* The terminal reports of a run record (record/record.h): knee run's summary, which knee report
 * and knee merge print too, from a record the engine produced, a merge added up or the reader
 * took back from the run's JSON (record_read_json: knee-run/2's numbers round-trip exactly, so
 * the text is the terminal's byte for byte). They write to a FILE * the caller owns and print
 * only measured values (a statistic without samples is "-"). The JSON document is the record's
 * own (record_write_json). */
#ifndef KNEE_RUNREPORT_H
#define KNEE_RUNREPORT_H

/* Beyond this many targets the summary gives each one row (per-target tables with --verbose). */
#define RUNREPORT_TARGETS_FULL 4

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/record.h"

/* True when the summary must be the full form even without --verbose: several targets, a
 * warning that needs attention, failed requests (anything but ok and rejected), a broken
 * identity, an interrupted or generator-limited run, a failed threshold. */
bool runreport_needs_full(const struct run_record *rec);

/* The human summary of rec (its statistics, rec->all.sum and every target's: record_finish
 * or the reader fills them): the plan, the headline (runreport_print_headline), then one of
 * three forms. The full form (verbose, or runreport_needs_full): the accounting identities with
 * every outcome (warm-up apart), rates, latency by outcome and the service/ttfb/lag/connect
 * tables (each labelled with its interval), per target when there are several, Server-Timing,
 * connections, the generator's CPU. The failed form (not one request succeeded, one target,
 * not verbose): every outcome, the transport causes and statuses, the connections; no latency
 * tables. The default form, within 100 columns and about 20 lines for a clean run: the
 * accounting with the outcomes that occurred, latency p50/p90/p99/p99.9/max (and the
 * generator's lag in an open loop), Server-Timing packed in 100 columns, connections. Every
 * form ends with the warnings by cause, the most consequential first (notes that change no
 * conclusion only when verbose), and the thresholds. The JSON holds everything any form
 * leaves out. A run an --abort-if rule stopped (rec->aborted) says so first, on a line of its
 * own. */
void runreport_print_summary(FILE *out, const struct run_record *rec, bool verbose);

/* The summary's first lines, a wrk user's headline: requests/s completed over the measured
 * window (planned and sent beside it in an open loop), p50, p99 and max (of the ok requests when
 * some failed), the errors with their outcomes and status codes, and the verdict. */
void runreport_print_headline(FILE *out, const struct run_record *rec);

/* The verdict on a run, the most consequential first, into buf (returned): "BROKEN: ..." (the
 * accounting), "FAILED: connection refused by ADDR: is the server up?" (or why else nothing
 * succeeded), "GENERATOR-LIMITED: ...", "ERRORS: ...", "ABORTED ...", "INTERRUPTED: ...", "THRESHOLDS FAILED:
 * ...", "valid, with warnings (below)", or "valid: ..." with the share sent on schedule. */
const char *runreport_verdict(const struct run_record *rec, char *buf, size_t len);

/* --stages: one row per stage (its rate, length, requests planned in it, ok, failed, dropped, ok
 * latency p50/p99/max, completions per second over the stage); nothing without stages
 * (runreport/stages.c; runreport_print_summary calls it after the latency tables). */
void runreport_print_stages(FILE *out, const struct run_record *rec);

/* A targets file held as a table (rec->entries): one row per entry (its requests sent, ok,
 * failed, latency mean and max, status codes, and its name or method and path), within 100
 * columns; every entry in file order when verbose or when there are at most
 * RUNREPORT_ENTRIES_ROWS, else the worst RUNREPORT_ENTRIES_ROWS (most failed, then the largest
 * max) and "... M more". Nothing without entries (runreport/entries.c). */
#define RUNREPORT_ENTRIES_ROWS 10
void runreport_print_entries(FILE *out, const struct run_record *rec, bool verbose);

/* Pieces of it, for summaries of inputs that hold only part of a run (knee report of a
 * per-request log or an hlog without the JSON): the accounting identities of a set of counts
 * (every outcome named), the latency tables of one target (its statistics, t->sum; open or
 * closed loop's intervals), and one table's header and rows. */
void runreport_print_accounting(FILE *out, const struct run_counts *c, const char *indent);
void runreport_print_latency_tables(FILE *out, bool open_loop, const struct run_target_result *t);
void runreport_print_table_header(FILE *out);
void runreport_print_table_row(FILE *out, const char *label, const struct run_summary *s);

/* What the plan's head line says, from a record or from a configuration (knee run --dry-run,
 * src/cli). */
struct runreport_head {
    bool open_loop, poisson, ramp, drop_when_busy, keepalive;
    bool shared; /* some target runs at the shared rate (or ramp) */
    uint64_t seed, think_ns, requests;
    uint64_t timer_slack_ns; /* --timer-slack: sends may leave up to this late */
    double rate, ramp_from, ramp_to, duration_s;
    double own; /* the targets' own @R rates, summed */
    uint32_t threads, pool_cap, conns;
    uint32_t streams;      /* --streams: closed-loop clients per connection */
    const char *io;        /* the I/O engine that ran ("epoll", "uring"; NULL or "": not known) */
    const char *io_asked;  /* --dry-run: the --io that chose it ("auto", "epoll", "uring"); NULL: not said */
    bool brief;            /* the default summary's head: the connection pool only when it drops */
    size_t client_stages;  /* closed-loop stages (--stages Nc): their number (0: none) and */
    uint32_t clients_peak; /* their peak of clients: "closed loop, 3 stages up to 64 clients" */
    bool timer_slack_auto; /* --timer-slack auto: the slack follows the service time (timer_slack_ns unused) */
};

/* "knee run: open loop, constant arrivals, 500.0/s, pool up to ..., 2 s, 2 threads": the
 * total rate is the shared rate (or ramp) plus the targets' own @R rates. */
void runreport_print_head(FILE *out, const struct runreport_head *h);
/* "  name url -> address (resolved in 12us)" without the line's end: the caller adds its share. */
void runreport_print_target_head(FILE *out, const char *name, const char *url, const char *address,
                                 uint64_t resolve_ns);

/* Below the summary on a terminal (termplot_detect(fd): a TTY wide enough; nothing on a pipe
 * or file): the latency of the requests after the warm-up as a histogram of doubling buckets
 * with the p99's bucket marked, and the p99 of each second (knee run's timeline, by completion
 * time, warm-up included) as a sparkline. Needs the record's histograms (nothing without). */
void runreport_print_pictures(FILE *out, int fd, const struct run_record *rec);

/* After the summary: the shard's skew against the start instant and the clock's state, or a
 * merge's shards (skews, generator-limited and failed shards). Nothing without a shard record. */
void runreport_print_shard(FILE *out, const struct run_record *res);

#endif
