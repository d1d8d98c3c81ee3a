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
#include "hist/prom.h"
#include "reqlog/reqlog.h"

/* Defaults (documented in `knee run --help` and the README). */
#define RUN_DEFAULT_DURATION_NS (10ULL * 1000000000ULL)
#define RUN_DEFAULT_TIMEOUT_NS (10ULL * 1000000000ULL)
#define RUN_DEFAULT_CLOSED_CONNECTIONS 8
#define RUN_DEFAULT_OPEN_CONNECTIONS 10000  /* the open-loop pool cap */
#define RUN_DEFAULT_LAG_LIMIT_NS 1000000ULL /* "sent on schedule": sent by the window's end + this */
#define RUN_SEND_RATE_FLOOR 0.99            /* sent on schedule below this → generator-limited */
/* The generator-limited rule (run_generator_judge): without --lag-limit, a lag p99 at or below
 * RUN_LAG_FLOOR_NS never marks a run (timer and scheduler jitter of a busy machine); above it,
 * the lag counts when it is more than RUN_LAG_LATENCY_SHARE of the latency it is part of. */
#define RUN_LAG_FLOOR_NS 1000000ULL
#define RUN_LAG_LATENCY_SHARE 0.10
#define RUN_LAG_BURST_GAPS 10 /* a lag p99 of this many inter-send gaps sends planned requests in bursts */
#define RUN_MAX_TIMER_SLACK_NS (100ULL * 1000000ULL) /* --timer-slack's bound: 100 ms */
/* The plan's bounds (run_validate): a load thread plans at most RUN_MAX_RATE_PER_THREAD
 * requests per second (several times what one thread can send: a higher rate cannot be kept
 * and would only make the run account for requests it never had a chance to send), and a
 * plan spans at most RUN_MAX_PLAN_NS (the --duration limit; --requests at --rate included). */
/* A summary says above its tables when this share of the requests sent failed
 * (run_outcome_failed); no ok request at all is a failed run (knee run exits 3). */
#define RUN_HIGH_FAILED_SHARE 0.10
#define RUN_MAX_RATE_PER_THREAD 1000000.0
#define RUN_MAX_PLAN_NS 1000000000000000000ULL
#define RUN_MAX_TARGETS 64
#define RUN_MAX_REJECTS 8
#define RUN_MAX_CONNECTIONS 1000000 /* --connections, a target's @Nc */
#define RUN_MAX_THREADS 1024
#define RUN_QUEUE_CAP (1u << 20) /* queued requests per thread before they count as dropped */
#define RUN_MAX_CONNECTING 64    /* open loop: connects in progress per thread */
/* HTTP/2: streams per connection without --streams (the server's SETTINGS_MAX_CONCURRENT_STREAMS,
 * capped here), and --streams' largest value (H2_MAX_STREAMS of src/h2). */
#define RUN_H2_DEFAULT_STREAMS 128
#define RUN_H2_MAX_STREAMS 1024

/* Histogram parameters for every latency-like metric: 1 ns .. 1 h, 3 significant digits. */
#define RUN_HDR_LOWEST 1
#define RUN_HDR_HIGHEST 3600000000000LL
#define RUN_HDR_SIGDIGITS 3

enum run_arrivals { RUN_ARRIVALS_CONSTANT, RUN_ARRIVALS_POISSON };
/* --io: how the load threads talk to the kernel. auto picks by the run (run_io_choose); epoll is
 * readiness (write and read per request); uring is io_uring (the closed loop over cleartext
 * HTTP/1.1: sends and multishot receives batched into one io_uring_enter per loop iteration). */
enum run_io { RUN_IO_AUTO, RUN_IO_EPOLL, RUN_IO_URING };
/* The HTTP version over TLS: ALPN offers h2 and http/1.1 (AUTO, the server chooses), or one. */
enum run_http { RUN_HTTP_AUTO, RUN_HTTP_1, RUN_HTTP_2 };
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
    /* A request whose reused keep-alive connection was closed or reset before any byte of its
     * response (RUN_TC_STALE) is sent once more on a new connection, as HTTP clients do. The
     * request keeps its planned and first send times (its latency and timeout run from them),
     * is planned and sent once in the accounting, ends in one outcome (that of the second
     * attempt), and adds 1 to run_counts.retries. Never retried twice. */
    bool retry_stale;
    const struct run_reject *rejects;
    size_t nrejects;
    const char *expect_body; /* NULL: status alone decides ok */
    uint32_t threads;        /* 0 = number of online CPUs */
    uint64_t spin_ns;        /* busy-wait this close to a planned send instead of sleeping */
    enum run_io io;          /* --io (RUN_IO_AUTO: the engine chooses; run_result.io says what ran) */
    uint64_t lag_limit_ns;   /* a hard limit on the lag p99 (run_generator_judge); 0 = the relative rule */
    /* Open loop, --timer-slack: the load threads' kernel timer slack (PR_SET_TIMERSLACK; 0 = 1 ns,
     * precise). A send may go out up to this late so that sends falling due within it share
     * one wake-up; lag still records the truth, and run_generator_judge counts only the lag
     * beyond it. At most RUN_MAX_TIMER_SLACK_NS. */
    uint64_t timer_slack_ns;
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
    const char *const *argv;          /* the command line, for the environment record (may be NULL) */
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

/* ---- Rates: events counted by when they happened (docs/FORMATS.md, "Rates") ----
 *
 * A rate is a count of events that happened inside the measurement window divided by the
 * window's length: planned sends by their planned time (T0), sends by their send (T1),
 * completions and goodput by their end (T5). Events before the window (the warm-up) or after
 * it (catch-up sends of a generator that fell behind, completions during the drain) are
 * counted apart and never raise a rate, so no rate can exceed what happened in the window it
 * names. The engine counts every request this way from the same nanoseconds it writes to the
 * per-request log; run_events_count() is the one rule, for the engine and for anything that
 * reads a log (knee stats, lab, capacity, compare, merge). Times are ns since t0, 0 = none
 * (the log's convention). */
struct run_events {
    uint64_t window_start_ns, window_end_ns; /* [start, end): since t0; end UINT64_MAX = open */
    uint64_t planned;                        /* T0 inside the window */
    uint64_t sent;                           /* T1 inside the window */
    uint64_t completed;                      /* T5 inside the window, every outcome but dropped/cancelled */
    uint64_t ok;                             /* of which ok (goodput) */
    uint64_t sent_before;                    /* T1 before the window (the warm-up) */
    uint64_t sent_late;                      /* T1 at or after the window's end (catch-up, drain) */
    uint64_t completed_late;                 /* T5 at or after the window's end (during the drain) */
    uint64_t sends;                          /* T1 at or after the window's start: sent + sent_late */
    uint64_t first_send_ns, last_send_ns;    /* the first and last of those sends (when sends > 0) */
};

/* The rates of a set of events, per second over window_s (NAN when the window is empty). */
struct run_rates {
    double window_s;
    double planned, sent, completed, goodput;
    double sending_s;     /* last - first send at or after the window's start: time spent sending */
    double achieved_send; /* (sends - 1) / sending_s: the generator's own pace while it sent (NAN < 2 sends) */
    uint64_t sent_late, completed_late;
};

/* Empty events over the window [start_ns, end_ns) (ns since t0). */
void run_events_init(struct run_events *ev, uint64_t window_start_ns, uint64_t window_end_ns);
/* Count one request: planned_ns, sent_ns, done_ns since t0 (0: never sent / not done), its
 * outcome. A closed loop's planned time is its send time (as in the log). */
void run_events_count(struct run_events *ev, uint64_t planned_ns, uint64_t sent_ns, uint64_t done_ns,
                      enum reqlog_outcome o);
/* The same from a per-request log record (its warm-up flag plays no part: events are counted
 * by time). */
void run_events_add_record(struct run_events *ev, const struct reqlog_record *r);
/* d += s; the window becomes the union of both. */
void run_events_merge(struct run_events *d, const struct run_events *s);
/* Rates from events: counts / window, and the achieved send rate. */
void run_rates_of(const struct run_events *ev, struct run_rates *out);

/* ---- Generator-limited: did the generator, not the service, shape the numbers? ----
 *
 * The one rule (knee run prints it; the lab and knee capacity take run_result.generator as it
 * is). Open loop only: a closed loop has no plan to keep. The run is generator-limited when
 *  - fewer than RUN_SEND_RATE_FLOOR of the planned requests were sent on schedule (by the
 *    window's end + 1 ms), or
 *  - with --lag-limit D (a hard limit): the lag p99 is above D, or
 *  - without it: the lag p99 is above RUN_LAG_FLOOR_NS and the lag is a share above
 *    RUN_LAG_LATENCY_SHARE of the latency it is part of: lag p99 against latency p99 (the
 *    tail), lag p50 (itself above the floor) against latency p50 (the median), or, when the
 *    lag p99 spans RUN_LAG_BURST_GAPS inter-send gaps (planned sends leave together, in
 *    bursts), lag p99 against latency p50.
 * A 1.8 ms lag at 10/s under a 50 ms latency is none of these; a 150 ms lag under a 400 ms
 * p99 is. With --timer-slack S the user asked for sends up to S late: every lag rule above
 * (the hard limit, the floor, the shares) is applied to the lag beyond the slack, max(0,
 * lag - S) (a percentile of it is the lag's percentile less S, since subtracting a constant
 * keeps the order), and "sent on schedule" counts the sends by the window's end + S + 1 ms
 * (or + S + --lag-limit). Lag beyond what the slack explains still marks the run. */
struct run_generator_input {
    bool open_loop;
    double sent_on_schedule;               /* share of planned requests sent on schedule (NAN: none planned) */
    double lag_p50_ms, lag_p99_ms;         /* NAN without samples */
    double latency_p50_ms, latency_p99_ms; /* every completed request (NAN without samples) */
    double planned_rate;                   /* per second, for the inter-send gap */
    double lag_limit_ms;                   /* --lag-limit, 0 = the relative rule */
    double timer_slack_ms;                 /* --timer-slack, 0 = none: the rules see max(0, lag - it) */
};
struct run_generator_verdict {
    bool limited;
    bool short_send;    /* sent on schedule below RUN_SEND_RATE_FLOOR */
    bool over_limit;    /* lag p99 above the --lag-limit */
    bool shapes_tail;   /* lag p99 > share of latency p99 */
    bool shapes_median; /* lag p50 > share of latency p50 */
    bool bursts;        /* lag p99 >= RUN_LAG_BURST_GAPS gaps and > share of latency p50 */
    double gap_ms;      /* 1000 / planned_rate (NAN when unknown) */
    char why[320];      /* the reasons as one clause ("" when not limited) */
};
/* Fill *v from *in; returns v->limited. */
bool run_generator_judge(const struct run_generator_input *in, struct run_generator_verdict *v);
/* The lag the generator owes beyond the slack the user asked for: max(0, lag - slack) (lag
 * itself when slack <= 0; NAN stays NAN). */
double run_lag_beyond_slack(double lag_ms, double slack_ms);

#define RUN_ST_MAX_NAMES 16
struct run_server_timing {
    char name[32];
    struct hdr dur; /* ns */
};

/* Why a request ended in `transport` (the outcome says only that it got no complete response
 * for a reason below HTTP). Each transport outcome has exactly one cause, so the causes add up
 * to outcome[OUTCOME_TRANSPORT]. Names in run_transport_cause_name(). TLS failures (handshake,
 * certificate) get causes of their own before RUN_TC_OTHER when TLS lands: the JSON object is
 * keyed by name, so a new cause breaks no reader. */
enum run_transport_cause {
    RUN_TC_REFUSED,               /* connect refused: nobody listens on the port */
    RUN_TC_CONNECT,               /* any other failed connect: unreachable, out of descriptors or ports */
    RUN_TC_RESET,                 /* reset by the peer (RST), or a write to a connection the peer closed */
    RUN_TC_CLOSED_BEFORE,         /* closed before any byte of the response, on the connection's first request */
    RUN_TC_CLOSED_MID,            /* closed in the middle of a response (fewer bytes than its framing said) */
    RUN_TC_STALE,                 /* a reused keep-alive connection closed or reset before any byte of the
                                     response: the server closed it while idle (the case --retry-stale retries) */
    RUN_TC_TLS_VERIFY,            /* the server's certificate chain did not verify (--cacert, --insecure) */
    RUN_TC_TLS_HOSTNAME,          /* the certificate does not name the URL's host */
    RUN_TC_TLS_EXPIRED,           /* the certificate expired or is not valid yet */
    RUN_TC_TLS_ALERT,             /* the server sent a fatal TLS alert (versions, ciphers or ALPN that do not meet) */
    RUN_TC_TLS_PROTOCOL,          /* not TLS, or TLS broken (a plain HTTP server, garbage after the handshake) */
    RUN_TC_TLS_ALPN,              /* --http2 was forced and the server did not agree on h2 */
    RUN_TC_TLS_HANDSHAKE_TIMEOUT, /* the connection's TLS handshake did not finish within --timeout */
    RUN_TC_H2_RST_STREAM,         /* the server reset the request's HTTP/2 stream */
    RUN_TC_H2_REFUSED,            /* refused twice with RST_STREAM(REFUSED_STREAM) (the first is sent again) */
    RUN_TC_H2_GOAWAY,             /* refused twice by a GOAWAY (the first is sent again) */
    RUN_TC_H2_PROTOCOL,           /* the server broke HTTP/2 */
    RUN_TC_H2_NOT_H2,             /* the server answered HTTP/2 in HTTP/1.x (--h2c to a server without h2c) */
    RUN_TC_OTHER,                 /* any other socket error */
    RUN_TC_COUNT
};

/* "refused", "connect", "reset", "closed_before_response", "closed_mid_response", "stale",
 * "tls_verify", "tls_hostname", "tls_expired", "tls_alert", "tls_protocol", "tls_alpn",
 * "tls_handshake_timeout", "h2_rst_stream", "h2_refused", "h2_goaway", "h2_protocol",
 * "h2_not_h2", "other" (JSON keys; the text summary replaces '_' with ' '). */
const char *run_transport_cause_name(enum run_transport_cause c);

/* The counters of struct run_counts, every one a uint64_t that adds up across threads and
 * targets: S(name) a scalar, A(name, n) an array. The struct and run_counts_add() are built
 * from this one list, so a field cannot be declared and then left out of the sums; anything
 * that does not add up (a double, a flag, a maximum) belongs elsewhere, and the size check
 * below the struct refuses it here. */
/* clang-format off */
#define RUN_COUNTS_FIELDS(S, A)                                                                                    \
    S(planned) S(sent) S(dropped)                                                                                  \
    A(outcome, OUTCOME_COUNT)                                                                                      \
    S(sent_on_time)   /* sent before the end of the planning window (+ lag limit) */                               \
    S(queued)         /* waited for a connection (open loop, --when-busy queue) */                                 \
    S(queue_overflow) /* dropped because the wait queue was full */                                                \
    S(bytes_in)                                                                                                    \
    S(conns_opened) S(conns_failed) S(conns_closed_by_peer) S(conns_unsolicited)                                   \
    A(transport_cause, RUN_TC_COUNT) /* adds up to outcome[OUTCOME_TRANSPORT] */                                   \
    S(retries) /* --retry-stale: requests sent a second time (not new requests: see run_config) */
/* clang-format on */

#define RUN_COUNTS_DECL_S(name) uint64_t name;
#define RUN_COUNTS_DECL_A(name, n) uint64_t name[n];
struct run_counts {
    RUN_COUNTS_FIELDS(RUN_COUNTS_DECL_S, RUN_COUNTS_DECL_A)
};
#undef RUN_COUNTS_DECL_S
#undef RUN_COUNTS_DECL_A

#define RUN_COUNTS_N_S(name) +1
#define RUN_COUNTS_N_A(name, n) +(n)
_Static_assert(sizeof(struct run_counts) == (0 RUN_COUNTS_FIELDS(RUN_COUNTS_N_S, RUN_COUNTS_N_A)) * sizeof(uint64_t),
               "struct run_counts holds exactly the uint64_t counters of RUN_COUNTS_FIELDS");
#undef RUN_COUNTS_N_S
#undef RUN_COUNTS_N_A

/* Connections by what they spoke, TLS handshakes and HTTP/2 sessions (per target; warm-up
 * included, as the connection counters of run_counts). */
enum { RUN_TLS_V10, RUN_TLS_V11, RUN_TLS_V12, RUN_TLS_V13, RUN_TLS_VERSIONS };
struct run_proto_counts {
    uint64_t http1, h2;                         /* connections that became ready, by protocol */
    uint64_t tls_version[RUN_TLS_VERSIONS];     /* TLS connections by version */
    uint64_t tls_full, tls_resumed, tls_failed; /* handshakes: full, resumed (a ticket), failed */
    uint64_t h2_streams;                        /* streams submitted */
    uint64_t h2_rst;                            /* RST_STREAM frames received (REFUSED_STREAM included) */
    uint64_t h2_refused;                        /* streams refused by RST_STREAM(REFUSED_STREAM) */
    uint64_t h2_goaway;                         /* GOAWAY frames received */
    uint64_t h2_goaway_streams;                 /* streams refused by a GOAWAY */
    uint64_t h2_retried;                        /* refused streams sent again (also in counts.retries) */
    uint64_t h2_stalls;                         /* request bodies that waited for the flow-control window */
    uint64_t h2_max_concurrent;                 /* the largest SETTINGS_MAX_CONCURRENT_STREAMS seen
                                                   (UINT64_MAX: unlimited; 0: none seen) */
};
/* "TLSv1.0" .. "TLSv1.3" for RUN_TLS_V10 .. RUN_TLS_V13. */
const char *run_tls_version_name(int v);
/* d += s (h2_max_concurrent: the larger). */
void run_proto_counts_add(struct run_proto_counts *d, const struct run_proto_counts *s);

struct run_target_result {
    char name[64];
    char url[256];
    char address[64]; /* resolved address */
    uint64_t resolve_ns;
    double planned_rate;             /* the plan: requests/s for this target (open loop); 0 in closed loop */
    uint32_t connections;            /* closed loop: clients; open loop: 0 */
    struct run_counts counts;        /* requests planned after the warm-up */
    struct run_counts warmup_counts; /* requests planned during the warm-up */
    struct run_events events;        /* every request of the target by its events' times */
    struct run_rates rates;          /* from events */
    struct hdr latency[RUN_GROUP_COUNT];
    struct hdr latency_all; /* the union of the groups */
    struct hdr service, ttfb, lag, connect;
    struct hdr tls;             /* TLS handshake time (connected -> handshake done) per new connection */
    struct run_proto_counts pc; /* protocols, TLS versions and handshakes, HTTP/2 */
    bool https;                 /* an https target (all: any is) */
    size_t nst;
    struct run_server_timing st[RUN_ST_MAX_NAMES];
};

/* One interval of the run across all targets (the timeline in the JSON): seconds since t0,
 * cut also at the window's start and end when they fall inside a second, so every interval is
 * wholly before, inside or after the window and the sends of the intervals inside it add up
 * to all.events.sent. The counts are by event time, warm-up included: planned and dropped at
 * T0, sent at T1, completed, ok and errors (completed - ok) at T5. */
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

/* The generator's own CPU: the thread CPU time (getrusage RUSAGE_THREAD, read by each thread
 * at its start and end) of every thread the engine runs a run on: the load threads, the
 * request log's writer and the thread that called run_execute (it merges the intervals and
 * runs the callbacks). Unlike run_env.cpu_user_s/cpu_sys_s (the whole process), this leaves
 * out whatever else shares the process: knee lab's in-process servers. wall_s is the wall
 * time the CPU was measured over (the load threads' start .. the run's end). */
struct run_generator_cpu {
    double user_s, sys_s, wall_s;
    uint32_t threads; /* threads counted; 0: not measured (then the figures mean nothing) */
};

/* The generator's CPU as a share of one core over its wall time ((user + sys) / wall: 0.05 is
 * 5% of one core; it may exceed 1 with several load threads). NAN when not measured. */
double run_generator_cpu_share(const struct run_generator_cpu *c);

/* Above this share of one core, the generator is said to compete with an in-process target on
 * a small machine (knee lab's budget; docs/INTERNALS.md, "knee lab: choices"). */
#define RUN_GENERATOR_CPU_BUDGET 0.10

struct run_env {
    char version[32];
    char kernel[256];
    char hostname[128];
    long cpus;
    double loadavg_before[3], loadavg_after[3];
    double cpu_user_s, cpu_sys_s; /* the whole process's CPU time during the run (getrusage RUSAGE_SELF) */
    long peak_rss_kb;
    struct run_generator_cpu gen_cpu; /* the generator's own threads only (in-process servers excluded) */
    char start_wall[40];              /* ISO 8601 UTC */
    char openssl[64];                 /* OpenSSL's version text */
    char nghttp2[32];                 /* nghttp2's version */
};

struct run_result {
    size_t ntargets;
    struct run_target_result *targets;
    struct run_target_result all; /* every target merged */
    uint32_t threads;
    uint32_t pool_cap; /* open loop: connection cap in total */
    enum run_io io;    /* the engine that ran: RUN_IO_EPOLL or RUN_IO_URING (never AUTO) */
    /* The measurement window, seconds since t0: the warm-up's end .. the end of the plan
     * (--duration; with --requests in an open loop the plan's length at its rate; a closed
     * loop with --requests: when the last thread finished; interrupted: when planning
     * stopped). Every rate is over it: all.rates, targets[i].rates. */
    double window_start_s, window_end_s;
    double window_s;  /* window_end_s - window_start_s */
    double elapsed_s; /* t0 .. last thread finished */
    /* open loop: requests planned after the warm-up that were sent by the window's end + 1 ms
     * (--lag-limit when given), as a share of them ("sent on schedule"; NAN when none) */
    double sent_on_schedule;
    bool interrupted; /* stopped by run_stop_request (Ctrl-C) */
    bool accounting_ok;
    bool generator_limited;                 /* = generator.limited */
    struct run_generator_verdict generator; /* why (run_generator_judge) */
    uint64_t unreached;  /* dropped: planned requests the generator had not reached when the drain ended */
    bool no_ok;          /* not one request planned after the warm-up ended ok: a failed run */
    double failed_share; /* failed (run_outcome_failed) among sent, after the warm-up (NAN: none sent) */
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

/* What run_config.on_live receives. Counters and histograms are cumulative since the start
 * and cover the requests planned after the warm-up, as run_result's counts do (during the
 * warm-up they stay 0), except the transport totals (bytes; connections, which run_counts
 * never splits), which include it as the JSON's do; at the final call they are the run's
 * totals (equal to run_result's counts and histogram counts). They come from every thread's own totals, handed over
 * with its per-second interval (engine_publish), so the load threads' request path does nothing for them. Histograms:
 * struct prom_hist in ns over run_config.live_bounds_ns, filled from the threads' HdrHistograms by prom_add_hdr
 * (hist/prom.h states the rule and its error: a value within 0.1% below a bound may be counted above it; none above is
 * counted below). */
struct run_live_target {
    struct run_counts counts; /* requests planned after the warm-up */
    uint64_t bytes_sent;      /* request bytes written (counted when a request ends), and */
    uint64_t bytes_received;  /* response bytes read: warm-up included, as the JSON's bytes_in */
    uint64_t in_flight;       /* now: sent and not yet ended (warm-up requests included) */
    uint64_t queued;          /* now: planned, waiting for a connection (open loop) */
    struct prom_hist latency; /* every completed request (all outcomes but dropped, cancelled) */
    struct prom_hist service; /* actual send -> full response */
    struct prom_hist lag;     /* planned send -> actual send */
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

/* Check cfg without touching the network: targets named and unique, the load model consistent
 * (--think, --arrivals, --when-busy, @Nc only where they apply; --ramp alone), a bound on the
 * run, limits on connections, threads and --reject. Returns 0 or KNEE_EINVAL with one line in
 * err that names the `knee run` flag to fix ("--timeout must be > 0"). run_execute and
 * run_plan call it first; the command line calls it before it opens any output file. */
int run_validate(const struct run_config *cfg, char *err, size_t errlen);

/* --io's words: "auto", "epoll", "uring". */
const char *run_io_name(enum run_io io);

/* Validate cfg and run it. Prints nothing (progress only through cfg->on_progress). Returns 0
 * with *res filled (release with run_result_release), or a negative code with a one-line
 * reason in err: KNEE_EINVAL (bad configuration; a TLS flag OpenSSL refuses), KNEE_ENOTFOUND
 * (a name did not resolve), -errno (files, threads). Request failures are data in *res,
 * never an error here. Reentrant: runs may follow each other or run concurrently in one
 * process (each with its own cfg, res and stop handle); a run uses no global state. */
int run_execute(const struct run_config *cfg, struct run_result *res, char *err, size_t errlen);
void run_result_release(struct run_result *res);
/* One target's histograms (initialised or still zeroed) released; knee merge builds its own. */
void run_target_result_release(struct run_target_result *r);

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
    enum run_io io;      /* the I/O engine the threads would run (--io resolved: RUN_IO_EPOLL or RUN_IO_URING;
                            RUN_IO_AUTO only in a plan not filled by run_plan) */
};

/* Fill *plan for cfg: run_validate, then every step run_execute takes before its threads
 * start (URL parsing, name resolution, request building, shares, thread count, descriptor
 * limit). Sends nothing and opens no file. Returns 0 (release with run_plan_release) or the
 * same errors as run_execute with a reason in err. */
int run_plan(const struct run_config *cfg, struct run_plan *plan, char *err, size_t errlen);
void run_plan_release(struct run_plan *plan);

/* The accounting identities of one set of counts: planned = sent + dropped, sent = the sum
 * of the outcomes other than dropped, and dropped = outcome[OUTCOME_DROPPED]; also transport
 * = the sum of its causes, and retries <= sent (a request is retried at most once, and a retry
 * is neither planned nor sent again). run_execute checks them for every target and the total
 * (run_result.accounting_ok). */
bool run_counts_hold(const struct run_counts *c);
/* d += s, field by field (RUN_COUNTS_FIELDS). */
void run_counts_add(struct run_counts *d, const struct run_counts *s);

/* Summaries in milliseconds of a histogram recorded in ns. */
void run_summarize(const struct hdr *h, struct run_summary *out);

/* A failed request: http_error, invalid, transport or timeout (not ok, not a --reject
 * rejection, not dropped or cancelled, which the generator decided). */
bool run_outcome_failed(enum reqlog_outcome o);

/* "transport 173,909" or "timeout 12, http_error 3": the failed outcomes that occurred (or
 * "nothing was sent", ...), as the FAILED and ERRORS warnings say them. Returns buf. */
const char *run_describe_failures(const struct run_counts *c, char *buf, size_t len);

/* Human-readable name of a latency group ("ok", "rejected", ...). */
const char *run_group_name(enum run_group g);

#endif
