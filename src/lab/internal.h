/* Shared by the lab's experiment files: the context of one experiment (output streams, the
 * temporary directory for request logs, --out), one round of load kept in memory, and the
 * `knee stats`-style analyses over it. Not part of the public API (lab.h). */
#ifndef KNEE_LAB_INTERNAL_H
#define KNEE_LAB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/dataset.h"
#include "analyze/report.h"
#include "core/clock.h"
#include "lab/lab.h"
#include "load/run.h"
#include "serve/serve.h"
#include "stats/stats.h"

#define LAB_PATH_MAX 1024
#define LAB_ALL_TARGETS SIZE_MAX

/* One request as the analyses need it (times relative to the run start). */
struct lab_req {
    double start_s;    /* planned send */
    double latency_ms; /* planned send -> full response; NAN when none */
    double service_ms; /* actual send -> full response; NAN when none */
    double lag_ms;     /* actual send - planned send; NAN when never sent */
    uint32_t target;
    uint8_t outcome; /* enum reqlog_outcome */
    bool warmup;
};

struct lab_ctx {
    const struct lab_options *o;
    FILE *out, *err;
    const char *experiment;    /* "stats", ... : the prefix of --out files */
    char tmpdir[LAB_PATH_MAX]; /* request logs live here until read back */
    /* knee's own CPU share of one core per round (lab_cpu_note, by lab_round_run) */
    size_t gen_n, gen_over;
    double gen_min, gen_max;
    char gen_max_round[48];
    char gen_over_rounds[256]; /* the names of the rounds over the budget, ", "-separated (cut short) */
};

struct lab_round {
    char name[48];
    struct run_record res;
    bool have_res;
    struct lab_req *req; /* every planned request, sorted by planned send */
    size_t nreq;
    char log_path[LAB_PATH_MAX + 64]; /* the same requests as a binary log, sorted; removed on release */
};

/* Prepare the context: streams from o, a private temporary directory, out_dir created.
 * Returns 0 or -errno (message printed). */
int lab_ctx_init(struct lab_ctx *c, const struct lab_options *o, const char *experiment);
void lab_ctx_release(struct lab_ctx *c);

/* serve_start with the error printed as "knee lab: server PRESET: why". */
int lab_server_start(struct lab_ctx *c, const struct serve_config *cfg, struct serve_handle **h);
/* The server of `preset` with `seed`: *cfg is filled from the preset (also when starting
 * fails, so the caller may read it), then lab_server_start. Returns what that returns. */
int lab_preset_start(struct lab_ctx *c, const char *preset, uint64_t seed, struct serve_config *cfg,
                     struct serve_handle **h);

/* Run one round: cfg->out_path is set to a log in the temporary directory, run_execute runs,
 * the log is read back, sorted by planned send, into r->req and r->log_path (and, with
 * --out, written as DIR/<exp>-<name>.csv next to DIR/<exp>-<name>.json). `what` is the
 * progress note. Returns 0 or a negative code (message printed); r is always safe to
 * release. */
int lab_round_run(struct lab_ctx *c, const char *name, const char *what, struct run_config *cfg, struct lab_round *r);
void lab_round_release(struct lab_round *r);

/* A round's measured length: --duration if given, else quick_ns under --quick, else default_ns. */
uint64_t lab_duration_ns(const struct lab_options *o, uint64_t quick_ns, uint64_t default_ns);
/* A round's warm-up: --warmup if given (0 included), else quick_ns under --quick, else
 * default_ns. Most experiments pass LAB_WARMUP_QUICK_NS and LAB_WARMUP_NS. */
#define LAB_WARMUP_QUICK_NS (NS_PER_S / 2)
#define LAB_WARMUP_NS NS_PER_S
uint64_t lab_warmup_ns(const struct lab_options *o, uint64_t quick_ns, uint64_t default_ns);

/* The lab's load threads: one. The lab's rates (at most a few thousand per second) are a
 * small part of what one thread sends, and the servers share the process and its 2 cores: a
 * second thread only adds its own wake-ups, ticks and connections (measured in
 * docs/INTERNALS.md, "knee lab: choices"). */
#define LAB_LOAD_THREADS 1

/* The run configuration every experiment starts from: cfg zeroed, then `ntargets` targets,
 * `seed`, the run lasting warmup_ns + duration_ns with the first warmup_ns marked warm-up,
 * RUN_DEFAULT_TIMEOUT_NS as both request timeout and drain, keep-alive on, LAB_LOAD_THREADS
 * load threads. The caller sets the load shape (open loop, rate, connections, ...)
 * afterwards; targets must outlive cfg. */
void lab_run_config_init(struct run_config *cfg, struct plan_target *targets, size_t ntargets, uint64_t seed,
                         uint64_t duration_ns, uint64_t warmup_ns);

/* ---- one experiment's frame: context, servers, round, lengths ---- */
/* Every experiment opens and closes the same way: the context, up to LAB_EXP_SERVERS servers
 * (stopped in order on close), the round being run and the round lengths.
 *
 *   struct lab_exp x;
 *   int rc = lab_exp_open(&x, o, "queue", &lengths);   // prints why on failure
 *   if (rc)
 *       return rc;                                     // nothing to close
 *   if ((rc = lab_exp_preset(&x, "queue", o->seed, &cfg)) != 0)
 *       goto out;
 *   ... rounds into x.rd, printing to x.out ...
 * out:
 *   lab_exp_close(&x);
 *   return rc; */
#define LAB_EXP_SERVERS 2
/* A round's lengths: lab_duration_ns(o, quick_ns, default_ns) and lab_warmup_ns(o,
 * warm_quick_ns, warm_default_ns). */
struct lab_lengths {
    uint64_t quick_ns, default_ns;
    uint64_t warm_quick_ns, warm_default_ns;
};
struct lab_exp {
    struct lab_ctx c;
    struct serve_handle *srv[LAB_EXP_SERVERS]; /* in the order started; NULL: not (yet) started */
    size_t nsrv;
    struct lab_round rd; /* zeroed; released on close */
    uint64_t dur_ns, warm_ns;
    FILE *out; /* c.out */
};
/* lab_ctx_init for `experiment`, and the lengths from o and len. Returns 0, or what
 * lab_ctx_init returns (message printed; nothing to close). */
int lab_exp_open(struct lab_exp *x, const struct lab_options *o, const char *experiment, const struct lab_lengths *len);
/* Start the next server (at most LAB_EXP_SERVERS): lab_preset_start, or lab_server_start with
 * cfg as it is. The slot is used also when starting fails (it stays NULL). Returns what those
 * return. */
int lab_exp_preset(struct lab_exp *x, const char *preset, uint64_t seed, struct serve_config *cfg);
int lab_exp_server(struct lab_exp *x, const struct serve_config *cfg);
/* Release the round, stop the servers, release the context. */
void lab_exp_close(struct lab_exp *x);

/* True after lab_request_stop(). */
bool lab_stopped(void);

enum lab_col { LAB_COL_LATENCY, LAB_COL_SERVICE, LAB_COL_LAG };

/* The column values (ms) of measured (not warm-up) requests of `target` (LAB_ALL_TARGETS:
 * every target) whose outcome is `outcome` (-1: any outcome that has the value), in planned
 * order. Heap array (free()); *n may be 0 (then the array is still freeable). */
double *lab_values(const struct lab_round *r, size_t target, int outcome, enum lab_col col, size_t *n);

/* Sorted copy of v (heap). */
double *lab_sorted_copy(const double *v, size_t n);

/* Summary of unsorted values (copies and sorts). */
void lab_summarize(const double *v, size_t n, struct summary *out);

/* lab_summarize over lab_values(r, target, outcome, col): the summary of those requests
 * (count 0 when there are none). */
void lab_summarize_values(const struct lab_round *r, size_t target, int outcome, enum lab_col col, struct summary *out);

/* The p-th percentile (nearest rank) of lab_values(r, target, outcome, col); NAN when there
 * is no value. */
double lab_percentile(const struct lab_round *r, size_t target, int outcome, enum lab_col col, double p);

/* knee run's own rates of `target` (LAB_ALL_TARGETS: every target together): events counted
 * by when they happened inside the measured window (docs/FORMATS.md, "Rates"), so the lab
 * prints what knee run prints. Never counts / window: a generator that fell behind sends
 * after the window, and those sends are in no rate. */
const struct run_rates *lab_rates(const struct lab_round *r, size_t target);

/* Count of v[i] >= threshold. */
uint64_t lab_count_at_least(const double *v, size_t n, double threshold);

/* The Server-Timing metric `name` of target t (LAB_ALL_TARGETS: merged result), or NULL. */
const struct hdr *lab_server_timing(const struct run_record *res, size_t target, const char *name);

/* Wilson score interval for k successes in n trials at 95%. */
void lab_wilson95(uint64_t k, uint64_t n, double *lo, double *hi);

/* ---- printing ---- */
/* "  name   count  mean  stdev  p50 ... max" (ms, one decimal as the article's stats.py). */
void lab_print_table_head(FILE *out, const char *indent);
void lab_print_table_row(FILE *out, const char *indent, const char *name, const struct summary *s);
/* A section: a blank line, then "== " and the formatted title on a line of its own. */
void lab_heading(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An accounting identity's verdict as the tables print it: "holds" or "DOES NOT HOLD". */
const char *lab_holds(bool ok);
/* A round's `knee stats` report: src/analyze over r->log_path for one column, ok outcomes
 * only, warm-up left out, share-under threshold LAB_UNDER_MS; its title names the round
 * (title must outlive the report). 0 or a negative code (message printed); always release. */
#define LAB_UNDER_MS 100.0
struct lab_report {
    struct dataset d;
    struct report rep;
    bool d_init, rep_init;
    char *label[1];
};
int lab_report_build(struct lab_ctx *c, const struct lab_round *rd, const char *column, const char *title,
                     struct lab_report *lr);
void lab_report_release(struct lab_report *lr);
/* The group named `name` of a report, or NULL. */
const struct group_result *lab_report_group(const struct report *rep, const char *name);

/* One sentence of "what this run shows", built in pieces and printed as a wrapped bullet. */
#define LAB_SAY_WIDTH 110
struct lab_say {
    char buf[2048];
    size_t n;
};
void lab_say_add(struct lab_say *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lab_say_end(struct lab_say *s, FILE *out);
/* The last piece of a sentence, chosen by what the run measured: if_true when cond holds,
 * else if_false (both added as they are, not as formats), then lab_say_end. */
void lab_say_verdict(struct lab_say *s, FILE *out, bool cond, const char *if_true, const char *if_false);

/* ---- a round's validity: knee run's own verdict, said first ---- */
/* Copy knee run's verdict on res into *v: generator_limited and the warning knee run prints
 * for it (the first warning naming GENERATOR-LIMITED; when the engine words it otherwise, its
 * first warning; a fixed line when it gave none). */
void lab_validity_of(const struct run_record *res, struct lab_validity *v);
/* A round's warnings as knee run prints them ("<indent>! ..."), except the warm-up note (the
 * lab says how it treats the warm-up itself). A generator-limited round is announced first,
 * on a line of its own, saying that no conclusion is drawn from it. */
void lab_print_round_warnings(FILE *out, const char *indent, const char *round, const struct run_record *res);
/* The generator's CPU over a round, as a line: "<indent>generator CPU: knee's own threads took
 * 1.2% of one core over <round> (budget 10%)", or above RUN_GENERATOR_CPU_BUDGET a warning
 * ("<indent>! <round>: ... over the lab's 10% budget ..."); nothing when it was not measured.
 * lab_print_round_warnings prints it with every round. */
void lab_print_generator_cpu(FILE *out, const char *indent, const char *round, const struct run_generator_cpu *gc);
/* Keep a round's generator CPU share in c (lab_round_run does, for every round), and print the
 * experiment's rounds in one line: lowest and highest share, the round of the highest, how
 * many were over the budget (nothing when no round was measured). */
void lab_cpu_note(struct lab_ctx *c, const char *round, const struct run_record *res);
void lab_print_cpu_summary(FILE *out, const struct lab_ctx *c);
/* When v says the round is generator-limited: add "<what> was GENERATOR-LIMITED (knee run's
 * verdict, printed with the round)" to s and return true, so the caller says what it will not
 * conclude; false (nothing added) for a clean round. */
bool lab_say_invalid(struct lab_say *s, const struct lab_validity *v, const char *what);
/* How `to` compares with `from` as a reader expects: "+100% (2.00×)", "−50% (0.50×)", "±0%
 * (1.00×)"; "-" when from is 0 or either is not a number. Into buf, returned. */
const char *lab_change(char *buf, size_t len, double from, double to);

/* ---- the experiments' printers, for tests that drive them with synthetic results ---- */
void lab_stats_fill_round(const struct lab_round *rd, bool open_loop, const double rate[2], const unsigned clients[2],
                          const char *label, struct lab_stats_round *o);
void lab_stats_explain(FILE *out, const struct lab_stats_result *r, double capacity_b);
void lab_queue_fill_round(const struct lab_round *rd, const char *label, bool open_loop, unsigned work_ms,
                          const struct serve_counters *before, const struct serve_counters *after,
                          struct lab_queue_round *o);
void lab_queue_explain(FILE *out, const struct lab_queue_result *r);
/* l_samples, l_measured: the in-flight sampler's count and time average. */
void lab_knee_fill_row(const struct lab_round *rd, double rate, uint64_t l_samples, double l_measured,
                       struct lab_knee_row *w);
void lab_knee_explain(FILE *out, const struct lab_knee_result *r);
void lab_fanout_explain(FILE *out, const struct lab_fanout_result *r);
void lab_nagle_explain(FILE *out, const struct lab_nagle_result *r);
void lab_tls_explain(FILE *out, const struct lab_tls_result *r);

#endif
