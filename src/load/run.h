/* The load engine behind `knee run`, usable in-process (the lab and capacity search call it
 * directly). A struct run_config says what to send (its plan: plan/plan.h) and how;
 * run_execute() resolves the targets once, runs one event loop per thread (each with its own
 * connections, schedule share and histograms: nothing shared on the request path), merges
 * every second (for progress and the per-interval callback) and at the end, and fills a
 * struct run_record: the run record (record/record.h), of which the engine is one producer;
 * record_finish derives the rest, and the reports read the record, not this header.
 *
 * Times are CLOCK_MONOTONIC nanoseconds. Every planned request ends in exactly one outcome
 * (enum reqlog_outcome: the engine, its logs and `knee stats` share the binary request log's
 * vocabulary); the record checks planned = sent + dropped and
 * sent = ok + rejected + http_error + invalid + transport + timeout + cancelled. */
#ifndef KNEE_LOAD_RUN_H
#define KNEE_LOAD_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hist/hdr.h"
#include "hist/native.h"
#include "hist/prom.h"
#include "plan/plan.h"
#include "record/record.h"
#include "reqlog/reqlog.h"

/* Defaults of how a plan runs (documented in `knee run --help` and docs/REFERENCE.md); the plan's own
 * defaults and bounds are plan/plan.h's (PLAN_DEFAULT_*, PLAN_MAX_*). */
#define RUN_DEFAULT_TIMEOUT_NS (10ULL * 1000000000ULL)
#define RUN_MAX_REJECTS 8
#define RUN_MAX_THREADS 1024
#define RUN_QUEUE_CAP (1u << 20) /* queued requests per thread before they count as dropped */
/* HTTP/2: streams per connection without --streams (the server's SETTINGS_MAX_CONCURRENT_STREAMS,
 * capped here), and --streams' largest value (H2_MAX_STREAMS of src/h2). */
#define RUN_H2_DEFAULT_STREAMS 128
#define RUN_H2_MAX_STREAMS 1024
/* knee run ends a run early when every request that ended in its first 2 s ended in a refused
 * connection (run_config.refused_end_ns; --keep-going: never). */
#define RUN_DEFAULT_REFUSED_END_NS (2ULL * 1000000000ULL)

/* Called once per second of the run (and for the final partial second) per target with the
 * merged latency histogram of the requests completed in that interval (warm-up excluded).
 * start_s is seconds since t0. Runs on the thread that called run_execute. */
typedef void run_interval_fn(void *ctx, size_t target, double start_s, double length_s, const struct hdr *latency);
/* Streamed responses (--stream): called after run_interval_fn for a target whose interval had
 * events, with that interval's first-event and event-gap histograms (ns; struct run_stream's
 * first_event and event_gap, either may be unallocated: counts NULL) and its event count, by
 * arrival time (warm-up included, as the interval's latency). Same thread as run_interval_fn. */
typedef void run_stream_interval_fn(void *ctx, size_t target, double start_s, double length_s,
                                    const struct run_stream *s);

/* A one-second progress snapshot across all threads (for a live line on a terminal). */
#define RUN_PROGRESS_STATUS_MAX 8 /* distinct status codes an interval lists (run_progress.status) */
struct run_progress {
    double elapsed_s, total_s;                              /* total_s is 0 when unknown (--requests) */
    double start_s, length_s;                               /* the interval */
    uint64_t planned, sent, completed, ok, errors, dropped; /* in the interval */
    uint64_t in_flight, queued;                             /* at the end of the interval */
    double p50_ms, p99_ms; /* latency of requests completed in the interval; NAN if none */
    /* For knee run --live (src/live), over the interval, warm-up included as above: */
    uint64_t outcome[OUTCOME_COUNT]; /* requests that ended, by outcome (dropped and cancelled too) */
    struct run_progress_status {
        uint16_t code;                 /* 100..599; 0 ends the list */
        uint64_t count;                /* responses with it */
    } status[RUN_PROGRESS_STATUS_MAX]; /* in the order first seen; codes past the last go to status_other */
    uint64_t status_other;
    uint64_t late;       /* sends whose lag (planned -> actual send) exceeded lag_limit_ms */
    double lag_max_ms;   /* the largest lag of a send; NAN when nothing was sent */
    double lag_limit_ms; /* "sent on schedule": --lag-limit (or RUN_DEFAULT_LAG_LIMIT_NS) + --timer-slack */
    double cpu_cores;    /* the load threads' CPU time / the interval's length: 1.0 = one core busy */
    double cpu_busiest;  /* the busiest load thread's share of one core (0..1) */
    uint32_t threads;    /* load threads */
    bool warmup;         /* the interval is part of the warm-up */
};
typedef void run_progress_fn(void *ctx, const struct run_progress *p);

struct run_live;
/* Live numbers for a metrics endpoint (run_config.on_live; struct run_live is below). */
typedef void run_live_fn(void *ctx, const struct run_live *live);

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

/* A run: its plan (what to send and when: plan/plan.h, validated by plan_validate, shared out
 * by plan_shares) and how to run it (everything below: timeouts, the transport, outputs,
 * callbacks, the stop handle). Builders fill cfg->plan (cli/runopts.c, capacity, lab). */
struct run_config {
    struct plan plan;
    uint64_t timeout_ns; /* per request, from connect start or send */
    uint64_t drain_ns;   /* after planning ends, how long in-flight requests may finish */
    enum run_when_busy when_busy;
    bool keepalive;
    /* A request whose reused keep-alive connection was closed or reset before any byte of its
     * response (RUN_TC_STALE) is sent once more on a new connection, as HTTP clients do: when its
     * method is idempotent (GET, HEAD, PUT, DELETE, OPTIONS, TRACE: RFC 9110 §9.2.2), or any
     * method with retry_stale_all (POST, PATCH: the server may have acted on the first send).
     * The request keeps its planned and first send times (its latency and timeout run from them),
     * is planned and sent once in the accounting, ends in one outcome (that of the second
     * attempt), and adds 1 to run_counts.retries. Never retried twice. knee run turns it on by
     * default (cli/runopts.c); a zeroed config has it off. */
    bool retry_stale, retry_stale_all;
    const struct run_reject *rejects;
    size_t nrejects;
    const char *expect_body; /* NULL: status alone decides ok */
    uint32_t threads;        /* 0 = number of online CPUs */
    uint64_t spin_ns;        /* busy-wait this close to a planned send instead of sleeping */
    enum run_io io;          /* --io (RUN_IO_AUTO: the engine chooses; run_record.io says what ran) */
    uint64_t lag_limit_ns;   /* a hard limit on the lag p99 (record_generator_judge); 0 = the relative rule */
    /* Open loop, --timer-slack: sends may go out up to this late (0: precise) so that the sends
     * planned within it of the first one due share one wake-up (load/openloop.c arms the
     * schedule for that first send + the slack); lag still records the truth, and
     * record_generator_judge counts only the lag beyond it. At most RUN_MAX_TIMER_SLACK_NS.
     * timer_slack_auto (--timer-slack auto): each load thread chooses its slack from the service
     * times it measured (run_auto_slack_ns); timer_slack_ns is then ignored. */
    uint64_t timer_slack_ns;
    bool timer_slack_auto;
    /* --prompt-reads: the open loop wakes for every response (else, over cleartext HTTP/1.1 on
     * epoll, responses are read at the next send's wake, timed by the kernel's receive
     * timestamps: load/worker.c worker_hold) */
    bool prompt_reads;
    /* End planning early (then drain, as a stop request does) when, refused_end_ns after t0,
     * every request that has ended (warm-up included) ended in a refused connection and at least
     * one did: nobody listens on the target's port. A request that ends any other way first
     * disarms it. The record then says so in a warning ("stopped early after 2 s: connection
     * refused by 127.0.0.1:9: is the server up? ..."), not "interrupted". 0 = never. */
    uint64_t refused_end_ns;
    const char *out_path; /* per-request log: *.csv = CSV, else binary reqlog; NULL = none */
    run_interval_fn *on_interval;
    void *interval_ctx;
    run_progress_fn *on_progress;
    void *progress_ctx;
    /* Live numbers (knee run --metrics-listen): once per second from the merge and once at the
     * end, on the thread of run_execute; NULL = nothing is gathered (no cost). live_bounds_ns
     * are the histograms' upper bounds (ns, 1..PROM_MAX_BOUNDS, strictly increasing). */
    run_live_fn *on_live;
    void *live_ctx;
    const int64_t *live_bounds_ns;
    size_t live_nbounds;
    /* TLS (https:// targets) and HTTP/2. Zero is the default everywhere. */
    const char *tls_cacert; /* --cacert: PEM file of trusted certificates; NULL = the system store */
    bool tls_insecure;      /* --insecure: no certificate verification at all */
    int tls_min_version;    /* --tls-version: 0x0301 (TLS 1.0) .. 0x0304 (TLS 1.3); 0 = OpenSSL's default */
    int tls_max_version;
    const char *tls_ciphers;          /* --ciphers: OpenSSL names joined by ':'; NULL = OpenSSL's defaults */
    bool tls_no_resume;               /* --tls-resume off: every handshake is a full one */
    enum run_http http;               /* --http1.1 / --http2 over TLS */
    bool h2c;                         /* --h2c: http:// targets speak HTTP/2 by prior knowledge */
    uint32_t streams;                 /* --streams: concurrent HTTP/2 streams per connection (open loop: at
                                         most; closed loop: clients per connection); 0 = the server's
                                         limit up to RUN_H2_DEFAULT_STREAMS (open), 1 (closed) */
    uint32_t requests_per_connection; /* --requests-per-connection: close after N; 0 = no limit */
    bool http3;                       /* --http3: https:// targets speak HTTP/3 over QUIC (UDP) */
    const char *const *argv;          /* the command line, for the environment record (may be NULL) */
    int argc;
    struct run_stop *stop;            /* how the caller can stop this run early; NULL = it runs to its end */
    const struct record_setup *setup; /* knee run --setup as it went (cli/run_setup.c), echoed in the
                                         record; NULL = none */
    /* How connections are made (load/proxy.c, load/route.c). --proxy: every connection goes to an
     * HTTP proxy, http:// requests in absolute form, https:// through a CONNECT tunnel (the
     * credentials never reach the record); --local-address: source addresses taken round-robin
     * per new connection; --connect-rate: new connections per second at most, over all threads. */
    const char *proxy;           /* http://[user:pass@]host:port; NULL = connect to the targets */
    const char *local_addresses; /* "A[,B...]" numeric addresses; NULL = the kernel's choice */
    double connect_rate;         /* 0 = no limit */
    /* Mutual TLS and where connections go (net/route.h); zero: none. */
    const char *tls_cert;          /* --cert: PEM client certificate for https targets; NULL = none */
    const char *tls_key;           /* --key: its PEM private key; NULL = in the --cert file */
    const char *unix_socket;       /* --unix-socket PATH: every connection goes to this Unix stream socket */
    const char *const *connect_to; /* --connect-to HOST:PORT:ADDR:PORT rules as given (the first match wins) */
    size_t nconnect_to;
    uint8_t stream_mode; /* --stream: enum http_stream_mode (http/sse.h); 0 = auto */
    /* --stream given, not off: a binary --out log carries each request's gaps (version 2) */
    bool stream_gaps;
    bool live_native;                           /* on_live also gets native histograms (run_live_target's *_native) */
    run_stream_interval_fn *on_stream_interval; /* per second, per target with events; NULL = none */
    void *stream_interval_ctx;
    const char *qlog_dir; /* --qlog DIR (--http3): one qlog file per QUIC connection; NULL = none */
};

/* What run_config.on_live receives. Counters and histograms are cumulative since the start
 * and cover the requests planned after the warm-up, as run_record's counts do (during the
 * warm-up they stay 0), except the transport totals (bytes; connections, which run_counts
 * never splits), which include it as the JSON's do; at the final call they are the run's
 * totals (equal to run_record's counts and histogram counts). They come from every thread's own totals, copied
 * with its per-second interval (engine_publish), so the load threads' request path does nothing for them and their
 * publish only copies. Histograms: struct prom_hist in ns over run_config.live_bounds_ns, converted on the calling
 * (main) thread from the threads' HdrHistograms added together by prom_add_hdr (hist/prom.h states the rule and its
 * error: a value within 0.1% below a bound may be counted above it; none above is counted below). */
struct run_live_target {
    struct run_counts counts;        /* requests planned after the warm-up */
    uint64_t bytes_sent;             /* request bytes written (counted when a request ends), and */
    uint64_t bytes_received;         /* response bytes read: warm-up included, as the JSON's bytes_in */
    uint64_t in_flight;              /* now: sent and not yet ended (warm-up requests included) */
    uint64_t queued;                 /* now: planned, waiting for a connection (open loop) */
    struct prom_hist latency;        /* every completed request (all outcomes but dropped, cancelled) */
    struct prom_hist service;        /* actual send -> full response */
    struct prom_hist lag;            /* planned send -> actual send */
    struct run_status_counts status; /* responses by status (after the warm-up, as counts) */
    /* With run_config.live_native: the same histograms (and ttfb) as native ones (hist/native.h) in
     * seconds, converted from the same added HdrHistograms by native_add_hdr on the same thread;
     * empty otherwise. Their memory is the engine's: valid during the on_live call. */
    struct native_hist latency_native, service_native, lag_native;
    struct prom_hist ttfb;          /* actual send -> first response byte (requests that got one) */
    struct native_hist ttfb_native; /* the same, native (with run_config.live_native) */
    uint64_t conns_proto[3];        /* connections that became ready, by protocol: http/1.1, h2, h3
                                       (warm-up included, as the JSON's protocols) */
};

struct run_live {
    double elapsed_s;       /* since t0: the end of the interval just merged */
    bool warmup;            /* the warm-up is still running */
    bool final;             /* the run is over: these are its totals, in_flight and queued 0 */
    bool generator_limited; /* open loop: the summary's GENERATOR-LIMITED test on the numbers so
                               far (send ratio, lag p99 against the lag limit); final: the result's */
    size_t ntargets;
    const struct run_live_target *targets; /* in run_config order */
};

/* Check cfg without touching the network: the plan first (plan_validate: targets, the load
 * model, bounds, shards), then how it runs (--when-busy and --timer-slack only in the open
 * loop, --threads, --timeout, --expect-body, --reject, the TLS and HTTP/2 flags against the
 * targets' schemes, --io, --key without --cert, --unix-socket's length, --connect-to's syntax;
 * the certificate files are read later, by tls_client_new). Returns 0 or KNEE_EINVAL with one line in err that names
 * the `knee run` flag to fix ("--timeout must be > 0"). run_execute and run_dryrun call it first; the command line
 * calls it before it opens any output file. */
int run_validate(const struct run_config *cfg, char *err, size_t errlen);

/* Validate cfg and run it. Prints nothing (progress only through cfg->on_progress). Returns 0
 * with *res filled (release with record_release), or a negative code with a one-line
 * reason in err: KNEE_EINVAL (bad configuration; a TLS flag OpenSSL refuses), KNEE_ENOTFOUND
 * (a name did not resolve), -errno (files, threads). Request failures are data in *res,
 * never an error here. Reentrant: runs may follow each other or run concurrently in one
 * process (each with its own cfg, res and stop handle); a run uses no global state. */
int run_execute(const struct run_config *cfg, struct run_record *res, char *err, size_t errlen);

/* What run_execute would do with a configuration, worked out without sending anything (knee
 * run --dry-run): the targets resolved and their requests serialised, each target's share of
 * the rate or of the clients and of --requests, the threads and the connection pool. */
struct run_dryrun_target {
    char name[64];
    char url[256];
    char address[64]; /* resolved address */
    uint64_t resolve_ns;
    size_t request_bytes;      /* the serialised request every send writes (head and body); 0: they vary */
    double rate_from, rate_to; /* open loop: requests/s (equal unless --ramp); 0 in the closed loop */
    uint32_t connections;      /* closed loop: clients; 0 in the open loop */
    double planned;            /* requests planned, warm-up included; NAN when the closed loop runs for a time */
    double warmup_planned;     /* of which in the warm-up (0 without one; NAN when unknown) */
    bool planned_exact;        /* false: an expectation (Poisson arrivals) */
};

struct run_dryrun {
    size_t ntargets;
    struct run_dryrun_target *targets;
    struct run_dryrun_target all; /* the totals (name "all"; rates and connections summed) */
    uint32_t threads;
    uint32_t pool_cap;   /* open loop: the connection pool across threads */
    uint32_t pool_asked; /* pool_cap < pool_asked: capped by the file descriptor limit */
    uint64_t fd_limit;   /* RLIMIT_NOFILE, raised as far as allowed */
    enum run_io io;      /* the I/O engine the threads would run (--io resolved: RUN_IO_EPOLL or RUN_IO_URING;
                            RUN_IO_AUTO only in one not filled by run_dryrun) */
};

/* Fill *dry for cfg: run_validate, then every step run_execute takes before its threads
 * start (URL parsing, name resolution, request building, shares, thread count, descriptor
 * limit), the counts from plan_expected. Sends nothing and opens no file. Returns 0 (release
 * with run_dryrun_release) or the same errors as run_execute with a reason in err. */
int run_dryrun(const struct run_config *cfg, struct run_dryrun *dry, char *err, size_t errlen);
void run_dryrun_release(struct run_dryrun *dry);

/* --threshold EXPR parsed against cfg's target names (record/threshold.h
 * record_threshold_parse_names). 0, or KNEE_EINVAL with a reason in err. */
struct run_threshold;
int run_threshold_parse(const char *expr, const struct run_config *cfg, struct run_threshold *out, char *err,
                        size_t errlen);

/* The record's echo of the plan (record.h struct record_config) from cfg, strings copied
 * (released first: c is zeroed or filled before). run_execute fills res->config with it. */
void record_config_from_run(struct record_config *c, const struct run_config *cfg);

/* The slack --timer-slack auto keeps for a median service time of service_p50_ns (ns):
 * RUN_AUTO_SLACK_SHARE of it, rounded down, at most RUN_AUTO_SLACK_MAX_NS; 0 for 0. Pure. */
uint64_t run_auto_slack_ns(uint64_t service_p50_ns);

#endif
