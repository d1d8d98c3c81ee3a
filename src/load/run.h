/* The load engine behind `knee run`, usable in-process (the lab and capacity search call it
 * directly). A struct run_config says what to send and how; run_execute() resolves the
 * targets once, runs one event loop per thread (each with its own connections, schedule
 * share and histograms: nothing shared on the request path), merges every second (for
 * progress and the per-interval callback) and at the end, and fills a struct run_result.
 *
 * Times are CLOCK_MONOTONIC nanoseconds. Every planned request ends in exactly one outcome
 * (enum reqlog_outcome: the engine, its logs and `knee stats` share the binary request log's
 * vocabulary); run_execute checks planned = sent + dropped and
 * sent = ok + rejected + http_error + invalid + transport + timeout + cancelled. */
#ifndef KNEE_LOAD_RUN_H
#define KNEE_LOAD_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hist/hdr.h"
#include "reqlog/reqlog.h"

/* Defaults (documented in `knee run --help` and the README). */
#define RUN_DEFAULT_DURATION_NS (10ULL * 1000000000ULL)
#define RUN_DEFAULT_TIMEOUT_NS (10ULL * 1000000000ULL)
#define RUN_DEFAULT_CLOSED_CONNECTIONS 8
#define RUN_DEFAULT_OPEN_CONNECTIONS 10000  /* the open-loop pool cap */
#define RUN_DEFAULT_LAG_LIMIT_NS 1000000ULL /* lag p99 above this → generator-limited warning */
#define RUN_SEND_RATE_FLOOR 0.99            /* achieved/planned send rate below this → warning */
#define RUN_MAX_TARGETS 64
#define RUN_MAX_REJECTS 8
#define RUN_MAX_CONNECTIONS 1000000 /* --connections, a target's @Nc */
#define RUN_MAX_THREADS 1024
#define RUN_QUEUE_CAP (1u << 20) /* queued requests per thread before they count as dropped */
#define RUN_MAX_CONNECTING 64    /* open loop: connects in progress per thread */

/* Histogram parameters for every latency-like metric: 1 ns .. 1 h, 3 significant digits. */
#define RUN_HDR_LOWEST 1
#define RUN_HDR_HIGHEST 3600000000000LL
#define RUN_HDR_SIGDIGITS 3

enum run_arrivals { RUN_ARRIVALS_CONSTANT, RUN_ARRIVALS_POISSON };
enum run_when_busy { RUN_BUSY_QUEUE, RUN_BUSY_DROP };

/* --reject STATUS[:SUBSTR]: a response with this status (and, when body is set, containing
 * it) is a business rejection, not an http_error. */
struct run_reject {
    int status;
    const char *body; /* NULL: the status alone */
};

struct run_target_config {
    const char *name;           /* shown in reports; unique */
    const char *url;            /* http://host[:port]/path?query */
    const char *method;         /* NULL → GET */
    const char *const *headers; /* "Name: value" */
    size_t nheaders;
    const char *body; /* may be NULL */
    size_t body_len;
    double rate;          /* open loop: this target's own rate (/s); 0 = a weighted share of run_config.rate */
    uint32_t connections; /* closed loop: this target's own clients; 0 = a weighted share */
    double weight;        /* share weight (0 is read as 1) */
};

/* Called once per second of the run (and for the final partial second) per target with the
 * merged latency histogram of the requests completed in that interval (warm-up excluded).
 * start_s is seconds since t0. Runs on the thread that called run_execute. */
typedef void run_interval_fn(void *ctx, size_t target, double start_s, double length_s, const struct hdr *latency);

/* A one-second progress snapshot across all threads (for a live line on a terminal). */
struct run_progress {
    double elapsed_s, total_s;                              /* total_s is 0 when unknown (--requests) */
    double start_s, length_s;                               /* the interval */
    uint64_t planned, sent, completed, ok, errors, dropped; /* in the interval */
    uint64_t in_flight, queued;                             /* at the end of the interval */
    double p50_ms, p99_ms; /* latency of requests completed in the interval; NAN if none */
};
typedef void run_progress_fn(void *ctx, const struct run_progress *p);

/* A stop handle, owned by the caller and given to a run in run_config.stop, so that a signal
 * handler, another thread or a sequence of runs (capacity steps, --repeat) can end a run
 * early without any global state. Initialise it with run_stop_init() (a zeroed static one is
 * initialised). A request stays until the next run_stop_init(): a run started with a stopped
 * handle stops planning at once, so a caller running several runs in sequence sees one Ctrl-C
 * end them all. One handle serves one run at a time (run_execute refuses a handle in use);
 * concurrent runs need one handle each, and stopping one does not stop the others. The
 * fields are private to the engine. */
struct engine;
struct run_stop {
    atomic_int level;                /* 0 none, 1 stop planning and drain, 2 also cancel in flight */
    _Atomic(struct engine *) engine; /* the run using the handle, NULL between runs */
    atomic_int waking;               /* run_stop_request calls still touching that run */
};

/* Clear a handle (no stop requested, no run). Not safe while a run uses it. */
void run_stop_init(struct run_stop *s);

/* Ask the run using s to stop planning and drain (hard = also cancel the requests in flight
 * now), and remember the request for runs that start later with s. Async-signal-safe (atomic
 * operations and write(2) on the run's wake-up eventfds): call it from a SIGINT handler, or
 * from any thread. */
void run_stop_request(struct run_stop *s, bool hard);

/* The level requested so far: 0 none, 1 drain, 2 cancel. Async-signal-safe. */
int run_stop_level(struct run_stop *s);

struct run_config {
    const struct run_target_config *targets;
    size_t ntargets;
    bool open_loop;
    double rate; /* total rate shared by targets without their own (/s) */
    bool ramp;   /* --ramp FROM:TO over the duration (shared targets) */
    double ramp_from, ramp_to;
    enum run_arrivals arrivals;
    uint64_t seed;
    uint32_t connections; /* closed: clients in total; open: pool cap (0 = default) */
    uint64_t think_ns;    /* closed loop: pause between a response and the next request */
    uint64_t duration_ns; /* how long requests are planned; 0 when `requests` bounds the run */
    uint64_t requests;    /* total planned requests; 0 = bounded by duration */
    uint64_t timeout_ns;  /* per request, from connect start or send */
    uint64_t drain_ns;    /* after planning ends, how long in-flight requests may finish */
    uint64_t warmup_ns;   /* requests planned before t0 + warmup are logged, not counted */
    enum run_when_busy when_busy;
    bool keepalive;
    const struct run_reject *rejects;
    size_t nrejects;
    const char *expect_body; /* NULL: status alone decides ok */
    uint32_t threads;        /* 0 = number of online CPUs */
    uint64_t spin_ns;        /* busy-wait this close to a planned send instead of sleeping */
    uint64_t lag_limit_ns;   /* 0 = RUN_DEFAULT_LAG_LIMIT_NS */
    const char *out_path;    /* per-request log: *.csv = CSV, else binary reqlog; NULL = none */
    run_interval_fn *on_interval;
    void *interval_ctx;
    run_progress_fn *on_progress;
    void *progress_ctx;
    const char *const *argv; /* the command line, for the environment record (may be NULL) */
    int argc;
    struct run_stop *stop; /* how the caller can stop this run early; NULL = it runs to its end */
    /* --shard I/N (load/shard.h): shard_count 0 runs the whole plan; 1..RUN_MAX_SHARDS runs
     * shard shard_index's part of it. shard_source says where I/N came from (for reports). */
    uint32_t shard_index, shard_count;
    const char *shard_source;
    uint64_t start_at_unix_ns; /* --start-at: t0 at this wall-clock instant (ns since the epoch); 0 = when ready */
};

/* Summary of one histogram in milliseconds (HdrHistogram percentiles: the highest
 * equivalent value of the bucket holding rank ceil(p/100 * count)). count 0 → NAN fields. */
struct run_summary {
    uint64_t count;
    double mean, stdev, min, max, p50, p90, p95, p99, p999;
};

/* The latency groups reported (outcomes that carry a latency). Group g is outcome g: the
 * engine records an outcome's latency in group (enum run_group)outcome, so the two enums
 * must agree by position (checked below); dropped and cancelled requests have no latency. */
enum run_group {
    RUN_GROUP_OK,
    RUN_GROUP_REJECTED,
    RUN_GROUP_HTTP_ERROR,
    RUN_GROUP_INVALID,
    RUN_GROUP_TRANSPORT,
    RUN_GROUP_TIMEOUT,
    RUN_GROUP_COUNT
};
_Static_assert((int)RUN_GROUP_OK == (int)OUTCOME_OK && (int)RUN_GROUP_REJECTED == (int)OUTCOME_REJECTED &&
                   (int)RUN_GROUP_HTTP_ERROR == (int)OUTCOME_HTTP_ERROR &&
                   (int)RUN_GROUP_INVALID == (int)OUTCOME_INVALID &&
                   (int)RUN_GROUP_TRANSPORT == (int)OUTCOME_TRANSPORT && (int)RUN_GROUP_TIMEOUT == (int)OUTCOME_TIMEOUT,
               "enum run_group must list the outcomes that carry a latency in enum reqlog_outcome's order");
_Static_assert((int)RUN_GROUP_COUNT == (int)OUTCOME_DROPPED && (int)OUTCOME_CANCELLED == (int)OUTCOME_DROPPED + 1 &&
                   (int)OUTCOME_COUNT == (int)OUTCOME_CANCELLED + 1,
               "the outcomes without a latency (dropped, cancelled) must come last");

#define RUN_ST_MAX_NAMES 16
struct run_server_timing {
    char name[32];
    struct hdr dur; /* ns */
};

struct run_counts {
    uint64_t planned, sent, dropped;
    uint64_t outcome[OUTCOME_COUNT];
    uint64_t sent_on_time;   /* sent before the end of the planning window (+ lag limit) */
    uint64_t queued;         /* waited for a connection (open loop, --when-busy queue) */
    uint64_t queue_overflow; /* dropped because the wait queue was full */
    uint64_t bytes_in;
    uint64_t conns_opened, conns_failed, conns_closed_by_peer, conns_unsolicited;
};

struct run_target_result {
    char name[64];
    char url[256];
    char address[64]; /* resolved address */
    uint64_t resolve_ns;
    double planned_rate;             /* the plan: requests/s for this target (open loop); 0 in closed loop */
    uint32_t connections;            /* closed loop: clients; open loop: 0 */
    struct run_counts counts;        /* requests planned after the warm-up */
    struct run_counts warmup_counts; /* requests planned during the warm-up */
    struct hdr latency[RUN_GROUP_COUNT];
    struct hdr latency_all; /* the union of the groups */
    struct hdr service, ttfb, lag, connect;
    size_t nst;
    struct run_server_timing st[RUN_ST_MAX_NAMES];
};

/* One second of the run across all targets (the timeline in the JSON). */
struct run_tick {
    double start_s, length_s;
    uint64_t planned, sent, completed, ok, errors, dropped;
    double p50_ms, p99_ms, max_ms;
};

#define RUN_MAX_SHARDS 65536
#define RUN_SHARD_MERGED UINT32_MAX /* run_shard.index of a result merged from count shards */

/* One shard of a merged result (knee merge), as its outputs described it. */
struct run_shard_part {
    uint32_t index;
    char host[64];
    int64_t start_skew_ns;
    bool generator_limited;
    bool failed;       /* interrupted, broken accounting, a truncated log, a thread stopped early */
    char failure[160]; /* why, when failed */
};

/* A target's open-loop stream as the whole plan has it (every shard draws from it). */
struct run_shard_stream {
    double rate_from, rate_to; /* requests/s of the whole plan */
    uint64_t limit;            /* global index bound (--requests share); UINT64_MAX: by duration */
};

/* The shard record of a run (run_config.shard_count > 0 or a start instant), or of a merge. */
struct run_shard {
    uint32_t index, count;     /* count 0: not a shard run; index RUN_SHARD_MERGED: a merge of count shards */
    char source[64];           /* where index and count came from: "--shard", "SLURM_PROCID/SLURM_NTASKS", ... */
    uint64_t plan_id;          /* run_shard_plan_id: equal in every shard of one plan */
    uint64_t start_at_unix_ns; /* the shared start instant; 0 when none was given */
    uint64_t t0_unix_ns;       /* the wall-clock instant of t0 (the start instant when given) */
    int64_t start_skew_ns;     /* wall clock when the threads were ready minus the start instant: > 0 late */
    bool clock_synced;         /* the kernel says NTP/PTP keeps the clock synchronised */
    double clock_maxerror_ms, clock_esterror_ms; /* adjtimex(2); NAN when unknown */
    uint64_t lag_limit_ns;                       /* the run's lag limit (for a merge's verdict) */
    size_t nstreams;                             /* open loop: one per target */
    struct run_shard_stream streams[RUN_MAX_TARGETS];
    /* a merge only */
    size_t nparts;
    const struct run_shard_part *parts; /* nparts, by index; owned by the merge */
    bool complete;                      /* every shard ran its part to the end */
    int64_t skew_min_ns, skew_max_ns;
};

struct run_env {
    char version[32];
    char kernel[256];
    char hostname[128];
    long cpus;
    double loadavg_before[3], loadavg_after[3];
    double cpu_user_s, cpu_sys_s; /* the generator's own CPU time during the run */
    long peak_rss_kb;
    char start_wall[40]; /* ISO 8601 UTC */
};

struct run_result {
    size_t ntargets;
    struct run_target_result *targets;
    struct run_target_result all; /* every target merged */
    uint32_t threads;
    uint32_t pool_cap; /* open loop: connection cap in total */
    double window_s;   /* measurement window: warm-up end .. end of planning */
    double elapsed_s;  /* t0 .. last thread finished */
    double planned_rate, sent_rate, completed_rate, goodput_rate; /* per second over window_s */
    double send_ratio;                                            /* requests sent on time / planned (open loop) */
    bool interrupted;                                             /* stopped by run_stop_request (Ctrl-C) */
    bool accounting_ok;
    bool generator_limited;
    size_t nticks;
    struct run_tick *ticks;
    size_t nwarnings;
    char **warnings; /* most important first */
    bool attention;  /* a warning says something went wrong (not only: few samples, warm-up left out) */
    struct run_env env;
    bool log_slowed;        /* the request-log writer could not keep up */
    int out_error;          /* --out could not be written whole: the first error (-errno); also a warning */
    struct run_shard shard; /* --shard / --start-at (count 0 otherwise) */
};

/* Check cfg without touching the network: targets named and unique, the load model consistent
 * (--think, --arrivals, --when-busy, @Nc only where they apply; --ramp alone), a bound on the
 * run, limits on connections, threads and --reject. Returns 0 or KNEE_EINVAL with one line in
 * err that names the `knee run` flag to fix ("--timeout must be > 0"). run_execute and
 * run_plan call it first; the command line calls it before it opens any output file. */
int run_validate(const struct run_config *cfg, char *err, size_t errlen);

/* Validate cfg and run it. Prints nothing (progress only through cfg->on_progress). Returns 0
 * with *res filled (release with run_result_release), or a negative code with a one-line
 * reason in err: KNEE_EINVAL (bad configuration), KNEE_EUNSUPPORTED (https), KNEE_ENOTFOUND
 * (a name did not resolve), -errno (files, threads). Request failures are data in *res,
 * never an error here. Reentrant: runs may follow each other or run concurrently in one
 * process (each with its own cfg, res and stop handle); a run uses no global state. */
int run_execute(const struct run_config *cfg, struct run_result *res, char *err, size_t errlen);
void run_result_release(struct run_result *res);

/* What run_execute would do with a configuration, worked out without sending anything (knee
 * run --dry-run): the targets resolved and their requests serialised, each target's share of
 * the rate or of the clients and of --requests, the threads and the connection pool. */
struct run_plan_target {
    char name[64];
    char url[256];
    char address[64]; /* resolved address */
    uint64_t resolve_ns;
    size_t request_bytes;      /* the serialised request every send writes (head and body) */
    double rate_from, rate_to; /* open loop: requests/s (equal unless --ramp); 0 in the closed loop */
    uint32_t connections;      /* closed loop: clients; 0 in the open loop */
    double planned;            /* requests planned, warm-up included; NAN when the closed loop runs for a time */
    double warmup_planned;     /* of which in the warm-up (0 without one; NAN when unknown) */
    bool planned_exact;        /* false: an expectation (Poisson arrivals) */
};

struct run_plan {
    size_t ntargets;
    struct run_plan_target *targets;
    struct run_plan_target all; /* the totals (name "all"; rates and connections summed) */
    uint32_t threads;
    uint32_t pool_cap;   /* open loop: the connection pool across threads */
    uint32_t pool_asked; /* pool_cap < pool_asked: capped by the file descriptor limit */
    uint64_t fd_limit;   /* RLIMIT_NOFILE, raised as far as allowed */
};

/* Fill *plan for cfg: run_validate, then every step run_execute takes before its threads
 * start (URL parsing, name resolution, request building, shares, thread count, descriptor
 * limit). Sends nothing and opens no file. Returns 0 (release with run_plan_release) or the
 * same errors as run_execute with a reason in err. */
int run_plan(const struct run_config *cfg, struct run_plan *plan, char *err, size_t errlen);
void run_plan_release(struct run_plan *plan);

/* The accounting identities of one set of counts: planned = sent + dropped, sent = the sum
 * of the outcomes other than dropped, and dropped = outcome[OUTCOME_DROPPED]. run_execute
 * checks them for every target and the total (run_result.accounting_ok). */
bool run_counts_hold(const struct run_counts *c);

/* Summaries in milliseconds of a histogram recorded in ns. */
void run_summarize(const struct hdr *h, struct run_summary *out);

/* Human-readable name of a latency group ("ok", "rejected", ...). */
const char *run_group_name(enum run_group g);

#endif
