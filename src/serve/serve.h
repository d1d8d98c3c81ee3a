/* knee serve as a library: lab target servers with known sources of tail latency (a pool
 * of slots, cache hits and misses, a periodic lock-holding job, an acquire timeout, real
 * CPU work, fan-out to slow dependencies, Nagle's algorithm) and a null target that does
 * no work. Each server runs its own event loop on a background thread; simulated waits are
 * timers on that loop, CPU work runs on worker threads.
 *
 * Typical use (a test, the lab):
 *     struct serve_config cfg;
 *     serve_preset("queue", &cfg);          // defaults of a named preset
 *     cfg.seed = 7;                         // override what you need
 *     struct serve_handle *h;
 *     if (serve_start(&cfg, &h) == 0) {     // bound and accepting when it returns
 *         int port = serve_port(h);
 *         ...
 *         serve_stop(h, NULL);              // drain, join, free
 *     }
 *
 * HTTP surface (docs/FORMATS.md "knee serve"), over HTTP/1.1 and, with cfg.h2, HTTP/2 (h2 over
 * TLS, h2c in cleartext); with cfg.tls over TLS: any path runs the profile's work;
 * /work?ms=N sets this request's work time; ?fanout=N this request's fan-out; /health and
 * /stats answer at once. Work responses carry Server-Timing (queue, work; lock when the
 * profile has a pause) and a small JSON body. */
#ifndef KNEE_SERVE_SERVE_H
#define KNEE_SERVE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SERVE_NAME_MAX 32
#define SERVE_ADDR_MAX 96
/* Bounds serve_config_check() enforces (documented in knee serve --help and docs/REFERENCE.md). */
#define SERVE_POOL_MAX 100000u
#define SERVE_WORKERS_MAX 256u
#define SERVE_FANOUT_MAX 1000u
#define SERVE_MAX_CONNS_MAX 1000000u
#define SERVE_DURATION_MAX_NS (3600ULL * 1000000000ULL) /* every wait and timeout: 1 h */
#define SERVE_TIME_MAX_BOUNDS 64                        /* bounds of the server-time histogram */
#define SERVE_STREAM_EVENTS_MAX 100000u                 /* events of one streamed answer */

/* Everything that shapes one server. Durations in ns; 0 means "none" unless noted. */
struct serve_config {
    char preset[SERVE_NAME_MAX]; /* label printed in "listening on ... (PRESET)": letters, digits, - _ . */
    char listen[SERVE_ADDR_MAX]; /* "127.0.0.1:0", "[::1]:8080", "localhost:9000" */

    bool null_response;          /* the null target: a fixed tiny 200, no work at all */
    unsigned pool;               /* slots ("database connections"); 0 = unlimited */
    uint64_t acquire_timeout_ns; /* waiting longer for a slot → 503 QUEUE_TIMEOUT; 0 = forever */
    uint64_t hit_ns, miss_ns;    /* simulated work: miss_ns with probability miss_rate, else hit_ns */
    double miss_rate;
    uint64_t pause_every_ns;      /* a background job holds the table lock for pause_for_ns */
    uint64_t pause_for_ns;        /*   every pause_every_ns (first one at start + every) */
    bool pause_random;            /* the pauses come at random: the idle time between two is exponential
                                     with mean pause_every_ns − pause_for_ns (seeded), not periodic */
    uint64_t cpu_ns;              /* > 0: work is real CPU burnt on a worker thread */
    unsigned workers;             /* CPU worker threads (>= 1 when cpu_ns > 0) */
    unsigned fanout;              /* parallel simulated dependencies per request; 0 = none */
    double dep_slow_prob;         /* each dependency is slow with this probability */
    uint64_t dep_slow_ns, dep_ns; /* slow and normal dependency times */
    bool nagle;                   /* Nagle on, head and body in two writes (default: TCP_NODELAY, one write) */
    uint64_t seed;                /* every random choice derives from it */

    /* TLS and HTTP/2 (--tls, --h2). The paths are read by serve_start only (they need not outlive
     * it). With h2, HTTP/2 is spoken besides HTTP/1.1: chosen by ALPN ("h2") over TLS, or by
     * the client's connection preface (h2c with prior knowledge) in cleartext; every request,
     * whichever protocol carried it, goes through the same pipeline, counters and Server-Timing. */
    bool tls;              /* speak TLS (https://) */
    const char *cert_file; /* PEM certificate (and chain); NULL: a self-signed one generated at start */
    const char *key_file;  /* PEM private key of cert_file */
    bool h2;               /* HTTP/2 too */

    unsigned max_conns;         /* connection limit; beyond it: 503 CONN_LIMIT and close */
    uint64_t header_timeout_ns; /* a request's head must arrive within this (from its first byte,
                                   or from accept); else 408 and close */
    uint64_t idle_timeout_ns;   /* a keep-alive connection idle this long is closed */
    uint64_t grace_ns;          /* on stop, in-flight requests get this long to finish */
    size_t max_header_bytes;    /* request line + fields above this → 431 */
    uint64_t max_body_bytes;    /* request body above this → 413 */
    uint64_t max_work_ns;       /* cap on /work?ms=N */

    /* Server time (request complete -> response queued) of work requests, counted in a
     * histogram with these upper bounds (ns, strictly increasing) when ntime_bounds > 0
     * (knee serve --metrics-listen; serve_time() reads it). 0 bounds: not recorded. */
    uint64_t time_bounds_ns[SERVE_TIME_MAX_BOUNDS];
    unsigned ntime_bounds;

    /* Streamed answers (the stream preset): a work request is answered with server-sent events
     * (text/event-stream; chunked over HTTP/1.1, one chunk per event; one DATA frame per event
     * over HTTP/2). The request holds its slot from its first event to its last. The first
     * event comes stream_first_ns after the slot is taken, then one every stream_gap_ns, a gap
     * being stream_stall_ns instead with probability stream_stall_p (seeded per request); a
     * request's ?events=N&first_ms=F&gap_ms=G&stall_ms=S&stall_p=P override them. */
    bool stream;
    unsigned stream_events;
    uint64_t stream_first_ns, stream_gap_ns, stream_stall_ns;
    double stream_stall_p;
    /* HTTP/3 (--h3, needs tls): a UDP socket on the same address and port, QUIC (ngtcp2 with
     * GnuTLS, the same certificate), every request through the same pipeline and counters. The
     * handshake is bounded by header_timeout_ns, an idle connection by idle_timeout_ns (QUIC's
     * max_idle_timeout), its open request streams by 128; QUIC and TCP connections together by
     * max_conns. TCP responses then carry Alt-Svc: h3=":PORT". */
    bool h3;
};

/* Counters of one server. Gauges (active, waiting, connections) are "now"; the rest count
 * since start. Every request parsed counts in `requests`; a work request is exactly one of
 * ok, rejected, cancelled (client left while waiting), executed for a client that reset
 * during the work (its response is a write failure), or still in flight. */
struct serve_counters {
    uint64_t active;         /* requests holding their turn: working (sleep, CPU, dependencies) */
    uint64_t waiting;        /* requests waiting for a slot, the report lock or a CPU worker */
    uint64_t executed;       /* work requests whose work ran to the end */
    uint64_t ok;             /* work requests answered 200 */
    uint64_t rejected;       /* work requests answered 503 QUEUE_TIMEOUT */
    uint64_t cancelled;      /* work requests dropped while waiting: the client closed or reset */
    uint64_t write_failures; /* responses that could not be written: the client reset */
    uint64_t requests;       /* every request parsed, /health and /stats included */
    uint64_t bad_requests;   /* answered 400, 413, 414, 431, 501 or 505 (the request was refused) */
    uint64_t timeouts;       /* connections closed by the header-read timeout (408) */
    uint64_t connections;    /* open now */
    uint64_t connections_total;
    uint64_t conn_refused; /* turned away by the connection limit */
    uint64_t pauses;       /* report-job pauses started */
    uint64_t tls_failed;   /* --tls: handshakes that failed (an alert, a protocol error, the client gone) */
    uint64_t h3;           /* --h3: requests that came over HTTP/3 (counted in requests too) */
    double uptime_s;
};

struct serve_handle;

/* Server time by result: work requests answered 200, and 503 QUEUE_TIMEOUT. */
enum serve_time_class { SERVE_TIME_OK, SERVE_TIME_REJECTED, SERVE_TIME_CLASSES };

/* A snapshot of one class's server-time histogram (serve_config.time_bounds_ns). */
struct serve_time_hist {
    unsigned nbounds;
    uint64_t bounds_ns[SERVE_TIME_MAX_BOUNDS];
    uint64_t counts[SERVE_TIME_MAX_BOUNDS + 1]; /* per bucket: [i] times <= bounds_ns[i] (and above
                                                   the bound before); [nbounds] above every bound */
    uint64_t total;                             /* the sum of counts */
    uint64_t sum_ns;
};

/* Names of the presets, NULL-terminated: report quiet queue flat fanout null stall stream. */
extern const char *const serve_preset_names[];

/* Fill *cfg with the server defaults and then the preset's settings. Returns 0, or
 * KNEE_ENOTFOUND for an unknown name (cfg then holds the plain defaults). */
int serve_preset(const char *name, struct serve_config *cfg);

/* One-line description of a preset for --help, or NULL. */
const char *serve_preset_summary(const char *name);

/* Check a configuration: the bounds above, settings that contradict each other (the null
 * target with work settings, --acquire-timeout without a pool, ...). Returns 0, or
 * KNEE_EINVAL with a reason in err (naming the knee serve flag). */
int serve_config_check(const struct serve_config *cfg, char *err, size_t errlen);

/* Bind cfg->listen, start the server thread and return once it accepts connections.
 * Returns 0 and *out, KNEE_EINVAL for a bad configuration or address, or -errno (for
 * example -EADDRINUSE). Signals are not touched: block them in the caller beforehand if
 * the server threads must not receive them. */
int serve_start(const struct serve_config *cfg, struct serve_handle **out);

/* With cfg.tls: the certificate's SHA-256 fingerprint ("AB:CD:...") and whether it was generated
 * at start (self-signed); NULL without TLS. Valid until serve_stop(). */
const char *serve_tls_fingerprint(const struct serve_handle *h, bool *self_signed);

/* The bound port (the real one when the configuration asked for port 0). */
int serve_port(const struct serve_handle *h);

/* "127.0.0.1:PORT" or "[::1]:PORT": the bound address, valid until serve_stop(). */
const char *serve_address(const struct serve_handle *h);

/* The configuration the server runs with (a copy; valid until serve_stop()). */
const struct serve_config *serve_config_of(const struct serve_handle *h);

/* A snapshot of the counters; any thread may call it while the server runs. */
void serve_counters(const struct serve_handle *h, struct serve_counters *out);

/* A snapshot of the server-time histogram of class c; any thread may call it while the server
 * runs. The loop thread adds each time with relaxed atomic stores (one writer, no lock), so a
 * snapshot's bucket counts never go back between snapshots and total is their sum; sum_ns may
 * lag or lead them by the requests being recorded at that instant. The null target answers at
 * once and records nothing; neither do /health, /stats and refused requests. */
void serve_time(const struct serve_handle *h, enum serve_time_class c, struct serve_time_hist *out);

/* Format counters as one JSON object (no newline) into buf. Returns the length, or 0
 * when buf is too small (640 bytes always suffice). */
size_t serve_counters_json(const struct serve_counters *c, const char *preset, char *buf, size_t cap);

/* Begin a graceful stop without waiting: stop accepting, close idle connections, let
 * in-flight requests finish (up to grace_ns), then the thread ends. Any thread. */
void serve_shutdown(struct serve_handle *h);

/* serve_shutdown, then wait until the server's thread has ended (every request in flight
 * finished or the grace expired). The handle stays valid: serve_counters() and serve_time()
 * give the final values until serve_stop(). */
void serve_join(struct serve_handle *h);

/* Stop (serve_shutdown if not done yet), wait for the thread, store the final counters
 * in *final (may be NULL) and free everything. NULL h is a no-op. */
void serve_stop(struct serve_handle *h, struct serve_counters *final);

#endif
