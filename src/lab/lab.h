/* knee lab as a library: the source articles' experiments (the statistics-lab, queueing and knee articles) run on
 * this machine with in-process lab servers (src/serve) and the in-process load engine
 * (src/load), each printing its tables and a few sentences whose numbers come from the run
 * it just made. The results are also returned as structs, so tests assert on shapes.
 *
 * Every experiment: starts its servers on free 127.0.0.1 ports, runs its rounds one after
 * another (run_execute is not reentrant: never call two experiments at once in a process),
 * reads every round's per-request log back into memory, analyses it with src/stats and
 * src/hist, prints, and stops its servers. With opts->out_dir each round also leaves
 * DIR/<experiment>-<round>.csv (one row per request, REQLOG_CSV_HEADER columns) and
 * DIR/<experiment>-<round>.json (the `knee run --json` summary).
 *
 * Errors: 0, or a negative code (core/err.h, -errno) when a server could not start, a run
 * failed to execute or a file could not be written; a one-line reason is printed to
 * opts->err. A measurement that does not show the expected effect is not an error: the
 * sentences say so, and the result structs carry the numbers. */
#ifndef KNEE_LAB_LAB_H
#define KNEE_LAB_LAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze.h"
#include "load/run.h"
#include "serve/serve.h"
#include "stats/stats.h"

#define LAB_MAX_RATES 32
#define LAB_MAX_FANOUTS 16

/* What `knee run` itself says about a round: its verdict copied from struct run_record (never
 * a rule of the lab's own, so the lab follows the engine when the engine's rule changes).
 * Every sentence that would draw a conclusion from a round checks this first. */
struct lab_validity {
    bool generator_limited; /* run_record.generator_limited */
    char warning[512];      /* the warning knee run prints for it ("GENERATOR-LIMITED: ..."), or "" */
    /* knee's own threads' CPU over the round (record_generator_cpu_share of run_record.env.gen_cpu,
     * a share of one core; NAN: not measured). Above RUN_GENERATOR_CPU_BUDGET the round says so
     * as a warning, not a verdict: it stays valid (docs/INTERNALS.md, "knee lab: choices"). */
    double gen_cpu_share;
    bool gen_cpu_over;
};

/* Progress during a round (the rounds last seconds to minutes). */
enum lab_live {
    LAB_LIVE_OFF,   /* nothing during a round */
    LAB_LIVE_TTY,   /* one line on err, rewritten in place with \r every second (a terminal) */
    LAB_LIVE_LINES, /* a plain line every LAB_LIVE_LINE_S seconds (a pipe or a file, when asked) */
};
#define LAB_LIVE_LINE_S 5

struct lab_options {
    uint64_t duration_ns; /* every round's measured length; 0 = the experiment's default */
    uint64_t warmup_ns;   /* UINT64_MAX = the experiment's default (1 s, quick 0.5 s) */
    bool quick;           /* shorter defaults: `knee lab --quick` stays under a minute */
    const char *out_dir;  /* keep per-round CSV + JSON here (created if missing); NULL = none */
    uint64_t seed;        /* servers and Poisson arrivals derive every random choice from it */
    FILE *out;            /* tables and sentences; NULL = stdout */
    FILE *err;            /* errors and the one-line progress notes; NULL = stderr */
    bool progress;        /* a "running round ..." note on err before each round */
    enum lab_live live;   /* progress during a round (cmd_lab: a terminal, or --progress) */
    const double *rates;  /* knee: the ladder of rates (/s); NULL = the default ladder */
    size_t nrates;
    const unsigned *fanouts; /* fanout: the N values; NULL = 1, 2, 5, 10, 20 */
    size_t nfanouts;
};

/* Defaults: duration 0, warm-up UINT64_MAX, seed 1, stdout/stderr, no out_dir. */
void lab_options_init(struct lab_options *o);

/* ---- stats: servers A (report) and B (quiet), three rounds (the statistics-lab article) ---------- */

enum { LAB_A, LAB_B, LAB_AB, LAB_NGROUPS };

struct lab_stats_round {
    char label[64];
    bool open_loop;
    double rate[2];                      /* open loop: planned rate of A and B (/s) */
    unsigned clients[2];                 /* closed loop: clients of A and B */
    double sent_rate[2];                 /* knee run's rates.sent (/s): sends inside the window */
    struct summary latency[LAB_NGROUPS]; /* ms from the planned send (closed loop: from the send) */
    struct summary service[LAB_NGROUPS]; /* ms from the actual send */
    double lag_p99_ms[2];                /* generator lag (send − plan), p99; NAN in a closed loop */
    uint64_t slow_a;                     /* requests to A with latency >= 100 ms */
    uint64_t not_ok;                     /* requests that completed with another outcome than ok */
    bool accounting_ok;                  /* planned = sent + dropped and sent = Σ outcomes (both targets) */
    struct lab_validity valid;           /* knee run's verdict on the round */
};

struct lab_stats_result {
    size_t nrounds; /* 3 */
    struct lab_stats_round round[3];
    /* from round 2 (open loop, A=100/s, B=300/s), latency column */
    double avg_of_p99s_ms, real_p99_ms;                  /* (p99 A + p99 B)/2 vs p99 of A+B */
    double per_second_p99_avg_ms, per_second_p99_max_ms; /* A's per-second p99s */
    size_t per_second_n;
    double prom_p99_ms;                          /* histogram_quantile(0.99) over the default buckets, A+B */
    double prom_p99_lo_ms, prom_p99_hi_ms;       /* the bucket it fell in (hi = INFINITY for +Inf) */
    double window_p99_min_ms, window_p99_max_ms; /* ten windows of 100 requests of A */
    size_t nwindows;
};

int lab_stats(const struct lab_options *o, struct lab_stats_result *r);

/* ---- queue: the 4-slot server with a 250 ms acquire timeout (the queueing article) --------- */

struct lab_queue_round {
    char label[64];
    bool open_loop;
    double demand_rate;                           /* the demand the round stands for (/s): 40 */
    double planned_rate, sent_rate, goodput_rate; /* knee run's rates (/s, by event time) */
    uint64_t work_ms;
    struct run_counts counts;     /* the client's accounting */
    struct serve_counters server; /* the server's counters over this round (deltas; gauges at the end) */
    struct summary ok_latency;    /* ms, ok outcomes */
    struct summary rejected_latency;
    double queue_mean_ms; /* Server-Timing queue over all responses, mean; NAN when none */
    bool client_identity; /* planned = sent + dropped, sent = Σ outcomes */
    bool server_identity; /* entered = ok + rejected + cancelled + in flight */
    bool cross_identity;  /* client ok = server ok, client rejected = server rejected,
                             client sent = server entered */
    struct lab_validity valid;
};

struct lab_queue_result {
    size_t nrounds; /* 4 */
    struct lab_queue_round round[4];
};

int lab_queue(const struct lab_options *o, struct lab_queue_result *r);

/* ---- knee: the flat server (10 ms CPU, 1 worker) under a ladder of rates (the knee article) */

struct lab_knee_row {
    double rate;                      /* planned (/s), Poisson arrivals */
    double sent_rate, completed_rate; /* knee run's rates (/s, by event time) */
    struct summary latency;           /* ms from the planned send, ok outcomes */
    double service_mean_ms;           /* ms from the actual send (the W of Little's law) */
    double work_mean_ms;              /* Server-Timing work: the server's own service time */
    double mm1_mean_ms;               /* 1/(μ−λ) with μ = 100/s; NAN when λ >= μ */
    double md1_mean_ms;               /* M/D/1 (Pollaczek–Khinchine) with D = 10 ms; NAN when λ >= μ */
    double l_measured;                /* time-averaged in-flight count at the server (sampled) */
    double l_little;                  /* λ·W: sent rate × mean service time */
    uint64_t l_samples;
    double lag_p99_ms;
    uint64_t not_ok;
    struct lab_validity valid;
    double sampler_cpu_share; /* the in-flight sampler thread's CPU over the round, share of one core (0 or NAN:
                                 unknown) */
};

struct lab_knee_result {
    size_t nrows;
    struct lab_knee_row row[LAB_MAX_RATES];
};

int lab_knee(const struct lab_options *o, struct lab_knee_result *r);

/* ---- fanout: pages that wait for N parallel dependencies, each 2% slow at 200 ms -------- */

struct lab_fanout_row {
    unsigned n;
    uint64_t pages; /* ok pages measured */
    double mean_ms, p95_ms, p99_ms;
    uint64_t slow;              /* pages with latency >= 200 ms */
    double share, ci_lo, ci_hi; /* slow / pages, Wilson 95% interval */
    double predicted;           /* 1 − (1 − p)^N */
};

struct lab_fanout_result {
    size_t nrows;
    struct lab_fanout_row row[LAB_MAX_FANOUTS];
    double rate;    /* pages/s per N */
    double p_slow;  /* per dependency */
    double slow_ms; /* a slow dependency's time: the threshold of a slow page */
    double lag_p99_ms;
    struct lab_validity valid; /* the one round's */
};

int lab_fanout(const struct lab_options *o, struct lab_fanout_result *r);

/* ---- nagle: the same server with Nagle's algorithm and two writes, and without --------- */

struct lab_nagle_result {
    struct summary nagle, nodelay;   /* ms, closed loop, ok outcomes */
    double rate_nagle, rate_nodelay; /* goodput /s: knee run's rates.goodput */
    unsigned clients;
    struct median_check median; /* knee stats' check of the Nagle median, expecting the other's */
    struct lab_validity valid;
};

int lab_nagle(const struct lab_options *o, struct lab_nagle_result *r);

/* ---- tls: handshakes and connection churn against the tail ------------------------------------ */

#define LAB_TLS_ROUNDS 5 /* keep-alive, a new connection per request resumed / full, plain TCP churn, QUIC churn */

struct lab_tls_round {
    char label[48]; /* "the keepalive round" */
    bool tls_on, keepalive, resume;
    bool quic;              /* HTTP/3 over QUIC (the last round) */
    struct summary latency; /* ms from the planned send, ok outcomes */
    struct summary tls;     /* ms, the tls phase per new connection (the engine's histogram) */
    uint64_t conns;         /* connections opened (QUIC ones in the quic round) */
    uint64_t full, resumed; /* handshakes */
    uint64_t not_ok;        /* sent and not ok */
    double sent_rate;       /* /s over the window */
    bool accounting_ok;
    struct lab_validity valid;
};

struct lab_tls_result {
    size_t nrounds; /* LAB_TLS_ROUNDS unless stopped */
    double rate;    /* the open loop's rate (/s) */
    struct lab_tls_round round[LAB_TLS_ROUNDS];
};

int lab_tls(const struct lab_options *o, struct lab_tls_result *r);

/* ---- stream: a token stream behind 8 slots, at rising rates ------------------------------ */

#define LAB_STREAM_RATES 4

struct lab_stream_row {
    double rate;                       /* planned responses/s */
    uint64_t responses, events;        /* timed responses (after the warm-up) and their events */
    double first_p50_ms, first_p99_ms; /* planned send -> first event */
    double gap_mean_ms, gap_p50_ms, gap_p99_ms, gap_max_ms;
    struct lab_validity valid;
};

struct lab_stream_result {
    size_t nrows;
    struct lab_stream_row row[LAB_STREAM_RATES];
    double gap_ms, stall_ms, stall_p; /* the server's gap, stall and its probability */
};

int lab_stream(const struct lab_options *o, struct lab_stream_result *r);

/* ---- by name (registry.c) ---------------------------------------------------------------- */

/* "stats queue knee fanout nagle compare capacity tls stream all", NULL-terminated. */
extern const char *const lab_experiment_names[];

/* Run an experiment by name ("all" runs every one in turn). Returns 0, KNEE_ENOTFOUND for an
 * unknown name, or the first experiment's error. */
int lab_run_named(const char *name, const struct lab_options *o);

/* Ask a running experiment to stop: the current round drains, no further round starts.
 * Async-signal-safe (for a SIGINT handler). */
void lab_request_stop(void);

#endif
