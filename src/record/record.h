/* The run record: everything a finished run is, as data (its counts, histograms, events and
 * rates, verdicts, warnings, environment, the plan it ran, thresholds), whoever produced it:
 * the engine (run_execute), knee merge (the shards' records added up), or the run's JSON read
 * back (record_read_json). Reporters (runreport, html, compare, capacity, runcheck, metrics)
 * take a struct run_record and need nothing of the engine.
 *
 * Lifecycle: a producer fills the counts, histograms and events, then calls record_finish
 * (record/finish.c), the one derivation of the window, rates, shares, identities, the generator
 * verdict, the per-target statistics and the warnings; record_write_json (record/json_write.c)
 * and record_read_json (record/json_read.c) are the one writer and the one reader of the run
 * JSON (docs/FORMATS.md, "knee run JSON"); record_release frees it all.
 *
 * Names keep the engine's run_ prefix for now (a rename is a separate pass); functions of the
 * record as a whole are record_*. Threads: a record is plain data, owned by one thread at a
 * time; nothing here takes a lock. */
#ifndef KNEE_RECORD_RECORD_H
#define KNEE_RECORD_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/warn.h"
#include "hist/hdr.h"
#include "record/entries.h"
#include "record/status.h"
#include "reqlog/reqlog.h"

#define RUN_DEFAULT_LAG_LIMIT_NS 1000000ULL /* "sent on schedule": sent by the window's end + this */
#define RUN_SEND_RATE_FLOOR 0.99            /* sent on schedule below this → generator-limited */
/* The generator-limited rule (record_generator_judge): without --lag-limit, a lag p99 at or below
 * RUN_LAG_FLOOR_NS never marks a run (timer and scheduler jitter of a busy machine); above it,
 * the lag counts when it is more than RUN_LAG_LATENCY_SHARE of the latency it is part of. */
#define RUN_LAG_FLOOR_NS 1000000ULL
#define RUN_LAG_LATENCY_SHARE 0.10
#define RUN_LAG_BURST_GAPS 10 /* a lag p99 of this many inter-send gaps sends planned requests in bursts */
#define RUN_MAX_TIMER_SLACK_NS (100ULL * 1000000ULL) /* --timer-slack's bound: 100 ms */
/* --timer-slack auto (load/run.h run_auto_slack_ns): a send may be up to RUN_AUTO_SLACK_SHARE of
 * the median service time its thread has measured so far late, at most RUN_AUTO_SLACK_MAX_NS,
 * so the lag it adds stays below that share of the latency; recomputed every
 * RUN_AUTO_SLACK_EVERY_NS. */
#define RUN_AUTO_SLACK_SHARE 0.01
#define RUN_AUTO_SLACK_MAX_NS 1000000ULL
#define RUN_AUTO_SLACK_EVERY_NS 100000000ULL
/* A summary says above its tables when this share of the requests sent failed
 * (record_outcome_failed); no ok request at all is a failed run (knee run exits 3). */
#define RUN_HIGH_FAILED_SHARE 0.10
#define RUN_MAX_TARGETS 64
#define RUN_MAX_CONNECTING 64 /* open loop: connects in progress per thread (a GENERATOR-LIMITED warning names it) */

/* Histogram parameters for every latency-like metric: 1 ns .. 1 h, 3 significant digits. */
#define RUN_HDR_LOWEST 1
#define RUN_HDR_HIGHEST 3600000000000LL
#define RUN_HDR_SIGDIGITS 3

/* The plan's words, as the engine takes them (load/run.h struct run_config) and the record
 * echoes them (struct record_config below). */
enum run_arrivals { RUN_ARRIVALS_CONSTANT, RUN_ARRIVALS_POISSON };
/* --io: how the load threads talk to the kernel. auto picks by the run (run_io_choose); epoll is
 * readiness (write and read per request); uring is io_uring (the closed loop over cleartext
 * HTTP/1.1: sends and multishot receives batched into one io_uring_enter per loop iteration). */
enum run_io { RUN_IO_AUTO, RUN_IO_EPOLL, RUN_IO_URING };
/* The HTTP version over TLS: ALPN offers h2 and http/1.1 (AUTO, the server chooses), or one. */
enum run_http { RUN_HTTP_AUTO, RUN_HTTP_1, RUN_HTTP_2 };
enum run_when_busy { RUN_BUSY_QUEUE, RUN_BUSY_DROP };

/* One stage of --stages: the rate goes linearly from `from` to `to` requests/s (open loop) or,
 * with `clients` (closed-loop stages, Nc), the client count does (plan/clients.h: the count at
 * time t is the floor of the line); equal: a hold; 0 allowed; over duration_ns, the stages one
 * after the other from t0. A plan's stages are all rates or all clients. */
struct run_stage {
    double from, to;
    uint64_t duration_ns;
    bool clients;
};
#define RUN_MAX_STAGES 64 /* plan/schedule.h SCHED_MAX_SEGS */

/* --reject STATUS[:SUBSTR]: a response with this status (and, when body is set, containing
 * it) is a business rejection, not an http_error. */
struct run_reject {
    int status;
    const char *body; /* NULL: the status alone */
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
 * per-request log; record_events_count() is the one rule, for the engine and for anything that
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
void record_events_init(struct run_events *ev, uint64_t window_start_ns, uint64_t window_end_ns);
/* Count one request: planned_ns, sent_ns, done_ns since t0 (0: never sent / not done), its
 * outcome. A closed loop's planned time is its send time (as in the log). */
void record_events_count(struct run_events *ev, uint64_t planned_ns, uint64_t sent_ns, uint64_t done_ns,
                         enum reqlog_outcome o);
/* The same from a per-request log record (its warm-up flag plays no part: events are counted
 * by time). */
void record_events_add_reqlog(struct run_events *ev, const struct reqlog_record *r);
/* d += s; the window becomes the union of both. */
void record_events_merge(struct run_events *d, const struct run_events *s);
/* Rates from events: counts / window, and the achieved send rate. */
void record_rates_of(const struct run_events *ev, struct run_rates *out);

/* ---- Generator-limited: did the generator, not the service, shape the numbers? ----
 *
 * The one rule (knee run prints it; the lab and knee capacity take run_record.generator as it
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
bool record_generator_judge(const struct run_generator_input *in, struct run_generator_verdict *v);
/* The lag the generator owes beyond the slack the user asked for: max(0, lag - slack) (lag
 * itself when slack <= 0; NAN stays NAN). */
double record_lag_beyond_slack(double lag_ms, double slack_ms);

#define RUN_ST_MAX_NAMES 16
struct run_server_timing {
    char name[32];
    struct hdr dur;         /* ns */
    struct run_summary sum; /* of dur, ms (record_summarize; from the JSON when read) */
};

/* Why a request ended in `transport` (the outcome says only that it got no complete response
 * for a reason below HTTP). Each transport outcome has exactly one cause, so the causes add up
 * to outcome[OUTCOME_TRANSPORT]. Names in record_transport_cause_name(). TLS failures (handshake,
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
    RUN_TC_TLS_CERT_REQUIRED,     /* the server's alert: a client certificate is required (--cert, --key) */
    RUN_TC_TLS_BAD_CERT,          /* the server's alert refusing the client certificate (bad, unknown CA, expired) */
    RUN_TC_H2_RST_STREAM,         /* the server reset the request's HTTP/2 stream */
    RUN_TC_H2_REFUSED,            /* refused twice with RST_STREAM(REFUSED_STREAM) (the first is sent again) */
    RUN_TC_H2_GOAWAY,             /* refused twice by a GOAWAY (the first is sent again) */
    RUN_TC_H2_PROTOCOL,           /* the server broke HTTP/2 */
    RUN_TC_H2_NOT_H2,             /* the server answered HTTP/2 in HTTP/1.x (--h2c to a server without h2c) */
    RUN_TC_OTHER,                 /* any other socket error */
    RUN_TC_PROXY_REFUSED,         /* --proxy: the proxy answered the CONNECT with a status other than 2xx
                                     (its statuses: run_proto_counts.proxy_refused) */
    RUN_TC_QUIC_HANDSHAKE,        /* --http3: the QUIC handshake failed (no answer but ICMP, an alert, a close) */
    RUN_TC_QUIC_IDLE_TIMEOUT,     /* --http3: the QUIC idle timeout closed the connection under the request */
    RUN_TC_H3_STREAM_RESET,       /* --http3: the server reset the request's stream (codes in quic.reset_codes) */
    RUN_TC_QUIC_CLOSE,            /* --http3: the server closed the connection (codes in quic.close_codes) */
    RUN_TC_QUIC_VERSION,          /* --http3: version negotiation: no QUIC version in common */
    RUN_TC_H3_PROTOCOL,           /* --http3: the server broke QUIC or HTTP/3 */
    RUN_TC_COUNT
};

/* "refused", "connect", "reset", "closed_before_response", "closed_mid_response", "stale",
 * "tls_verify", "tls_hostname", "tls_expired", "tls_alert", "tls_protocol", "tls_alpn",
 * "tls_handshake_timeout", "tls_alert_certificate_required", "tls_alert_bad_certificate", "h2_rst_stream",
 * "h2_refused", "h2_goaway", "h2_protocol", "h2_not_h2", "other", "proxy_refused", "quic_handshake",
 * "quic_idle_timeout", "h3_stream_reset", "quic_close", "quic_version_negotiation", "h3_protocol" (JSON
 * keys; the text summary replaces '_' with ' ').
 */
const char *record_transport_cause_name(enum run_transport_cause c);

/* The counters of struct run_counts, every one a uint64_t that adds up across threads and
 * targets: S(name) a scalar, A(name, n) an array. The struct and record_counts_add() are built
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
#define RUN_PROXY_STATUS_MIN 100 /* the statuses run_proto_counts.proxy_refused keeps: 100..599 */
#define RUN_PROXY_STATUS_N 500
/* QUIC's error codes by kind, for the counts of stream resets and connection closes: the
 * HTTP/3 codes 0x100..0x110 (RFC 9114 §8.1), the QUIC transport codes 0x0..0x10 (RFC 9000
 * §20.1), CRYPTO_ERROR (0x100..0x1ff of the transport space), and any other code. */
#define RUN_H3_CODES 17
#define RUN_QUIC_CODES 17
enum {
    RUN_QC_H3 = 0,
    RUN_QC_TRANSPORT = RUN_H3_CODES,
    RUN_QC_CRYPTO = RUN_QC_TRANSPORT + RUN_QUIC_CODES,
    RUN_QC_OTHER,
    RUN_QC_COUNT
};
/* The QUIC connections of a target (--http3), from ngtcp2 and knee's socket calls. */
struct run_quic_counts {
    uint64_t streams; /* requests submitted */
    uint64_t datagrams_sent, datagrams_received;
    uint64_t bytes_sent, bytes_received; /* UDP payload bytes */
    uint64_t send_blocked;               /* datagrams the socket refused (EAGAIN): left to loss recovery */
    uint64_t pto;                        /* probe timeouts: the loss timer fired without an acknowledgement */
    uint64_t reset_codes[RUN_QC_COUNT];  /* streams the server reset, by code */
    uint64_t close_codes[RUN_QC_COUNT];  /* connections the server closed, by code */
    uint64_t zero_rtt_accepted;          /* connections whose 0-RTT requests the server took (--tls-resume) */
    uint64_t zero_rtt_rejected;          /* ... and refused (the requests went again in 1-RTT) */
    uint64_t stream_packets_lost;        /* packets with request streams' data declared lost (ngtcp2) */
    uint64_t rtt_connections;            /* connections with an RTT sample (the rtt_ fields are theirs) */
    uint64_t rtt_min_us;                 /* the smallest minimum RTT of them (0: none) */
    uint64_t rtt_smoothed_sum_us;        /* the sum of their smoothed RTT at close (the mean: / rtt_connections) */
    uint64_t rtt_smoothed_max_us;        /* the largest of them */
    uint64_t cwnd_sum_bytes;             /* the sum of their congestion windows at close */
};
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
    uint64_t h2_max_concurrent;                 /* the largest SETTINGS_MAX_CONCURRENT_STREAMS a server
                                                   sent (0: it allowed no stream; UINT64_MAX: unlimited),
                                                   meaningful only with h2_limit_seen */
    bool h2_limit_seen; /* a server's SETTINGS reached one of the HTTP/2 connections (false: none did, or
                           there was none: every one closed before them) */
    /* --proxy: CONNECTs the proxy refused, by its status (index status - RUN_PROXY_STATUS_MIN) */
    uint64_t proxy_refused[RUN_PROXY_STATUS_N];
    uint64_t tls_cert_requested; /* TLS connections whose server asked for a client certificate (with
                                    --cert or without): a 400 may be its refusal */
    uint64_t h3;                 /* QUIC connections that became ready (HTTP/3) */
    struct run_quic_counts quic; /* their counters */
};
/* A stream reset (code: its HTTP/3 code) and a connection close (code; app: an HTTP/3
 * application code, else a QUIC transport code) counted by code in q. */
void record_quic_reset_add(struct run_quic_counts *q, uint64_t code);
void record_quic_close_add(struct run_quic_counts *q, uint64_t code, bool app);
/* The JSON key of slot k of reset_codes/close_codes: "H3_NO_ERROR" .., "NO_ERROR" ..,
 * "CRYPTO_ERROR", "other". */
const char *record_quic_code_name(int k);
/* "TLSv1.0" .. "TLSv1.3" for RUN_TLS_V10 .. RUN_TLS_V13. */
const char *record_tls_version_name(int v);
/* d += s (h2_max_concurrent: the larger of those seen). */
void record_proto_counts_add(struct run_proto_counts *d, const struct run_proto_counts *s);
/* One HTTP/2 connection's server limit (SETTINGS_MAX_CONCURRENT_STREAMS; UINT64_MAX: unlimited)
 * into pc: the largest seen, and seen. */
void record_h2_limit_add(struct run_proto_counts *pc, uint64_t limit);

/* Streamed responses (knee run --stream, http/sse.h): the events of the bodies timed as events,
 * after the warm-up. The histograms are allocated on first use (counts NULL: none yet). */
struct run_stream {
    struct hdr first_event;  /* planned send (closed loop: the send) -> first event, ns */
    struct hdr event_gap;    /* every gap between two successive events of a response, ns */
    struct hdr per_response; /* events per timed response (a count) */
    uint64_t events;         /* events in all */
    uint64_t responses;      /* responses timed as events (with or without one) */
    uint64_t not_sse;        /* --stream sse: responses whose Content-Type was not text/event-stream */
    uint64_t partial;        /* bodies that ended inside an event (counted invalid) */
};
/* The statistics of a struct run_stream (first_event and event_gap in ms, per_response a count),
 * what the JSON's "stream" object holds; present when a response was timed. */
struct run_stream_sum {
    bool present;
    struct run_summary first_event, event_gap, per_response;
    uint64_t events, responses, not_sse, partial;
    double events_per_s; /* events / the window */
};
/* d += s (d's histograms allocated when s has any). */
void record_stream_add(struct run_stream *d, const struct run_stream *s);
/* Record into s's histogram h (one of its three), allocating it on first use. */
void record_stream_hist(struct hdr *h, int64_t value, int64_t count);
void record_stream_release(struct run_stream *s);
/* Empty s's histograms and counts, keeping their memory (an interval's, for the next one). */
void record_stream_reset(struct run_stream *s);
/* The statistics of s over a window of window_s seconds. */
void record_stream_summarize(const struct run_stream *s, double window_s, struct run_stream_sum *out);

/* A target's histograms as statistics in ms (struct run_summary), what the reports print: filled
 * from the histograms by record_summarize (record_finish calls it), or read from a run JSON,
 * which holds these and not the histograms (except a shard's). */
struct run_target_stats {
    struct run_summary latency_all, latency[RUN_GROUP_COUNT], service, ttfb, lag, connect, tls;
};

struct run_target_result {
    char name[64];
    char url[256];
    char address[64]; /* resolved address */
    uint64_t resolve_ns;
    double planned_rate;             /* the plan: requests/s for this target (open loop); 0 in closed loop */
    double own_rate;                 /* the target's own @R rate (/s); 0: a share of the run's rate */
    uint32_t connections;            /* closed loop: clients; open loop: 0 */
    struct run_counts counts;        /* requests planned after the warm-up */
    struct run_counts warmup_counts; /* requests planned during the warm-up */
    struct run_status_counts status; /* responses by status of the requests in counts (a status line was read:
                                        ok, rejected, http_error, invalid), the warm-up's left out */
    struct run_events events;        /* every request of the target by its events' times */
    struct run_rates rates;          /* from events */
    struct hdr latency[RUN_GROUP_COUNT];
    struct hdr latency_all; /* the union of the groups */
    struct hdr service, ttfb, lag, connect;
    struct hdr tls;              /* TLS handshake time (connected -> handshake done) per new connection */
    struct run_target_stats sum; /* the histograms' statistics (record_summarize; from the JSON when read) */
    struct run_proto_counts pc;  /* protocols, TLS versions and handshakes, HTTP/2 */
    bool https;                  /* an https target (all: any is) */
    size_t nst;
    struct run_server_timing st[RUN_ST_MAX_NAMES];
    struct run_stream stream;         /* streamed responses' events (--stream) */
    struct run_stream_sum stream_sum; /* their statistics (record_summarize; from the JSON when read) */
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
    double stage_share;        /* > 0: the stream follows config.stages at this share of their rates (last: {from,
                                  to, limit} initialisers stay as they were) */
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
    struct run_shard_part *parts; /* nparts, by index; owned by the record (record_release) */
    bool complete;                /* every shard ran its part to the end */
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
double record_generator_cpu_share(const struct run_generator_cpu *c);

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

/* ---- the plan as it ran (the "config" of the JSON) ---- */

/* knee run --setup: the one request sent before the load (cli/run_setup.c), as the JSON's
 * "config"."setup" keeps it: never a captured value (it is often a credential), only the names
 * of the variables it filled. Strings owned. */
struct record_setup {
    char *method, *url; /* url NULL: no setup request */
    int status;
    uint64_t duration_ns; /* connect to the response's last byte */
    size_t ncaptured;
    char **captured; /* the --capture names, in flag order */
};

/* dst (released first) a deep copy of src (NULL: none). */
void record_setup_copy(struct record_setup *dst, const struct record_setup *src);
/* Free s's strings and zero it. */
void record_setup_release(struct record_setup *s);

/* Everything the reports and the JSON's "config" say about the plan, so that no reader needs
 * the engine's struct run_config: filled by the engine (record_config_from_run, load/result.c),
 * or read from a run JSON. Strings are owned (record_config_release). Times in ns. */
struct record_config {
    bool open_loop;
    enum run_arrivals arrivals;
    uint64_t seed;
    double rate; /* the shared --rate (/s; 0: none) */
    bool ramp;   /* --ramp FROM:TO */
    double ramp_from, ramp_to;
    size_t nstages;           /* --stages (0: none); the duration is their sum */
    struct run_stage *stages; /* owned */
    uint64_t think_ns;        /* closed loop */
    uint64_t duration_ns, requests, timeout_ns, drain_ns, warmup_ns;
    uint64_t lag_limit_ns;   /* --lag-limit; 0: the relative rule */
    uint64_t timer_slack_ns; /* --timer-slack (open loop); 0: none; with auto the largest any thread kept */
    bool timer_slack_auto;   /* --timer-slack auto (run_auto_slack_ns) */
    enum run_when_busy when_busy;
    bool keepalive, retry_stale, retry_stale_all; /* run_config's */
    enum run_io io;                               /* --io as asked (run_record.io: what ran) */
    bool out_log; /* --out: a per-request log was written (the warm-up's note points at it) */
    /* TLS and HTTP/2 */
    bool tls_insecure, tls_no_resume;
    char *tls_cacert, *tls_ciphers;       /* NULL: not given */
    int tls_min_version, tls_max_version; /* 0x0301 .. 0x0304; 0: OpenSSL's default */
    enum run_http http;
    bool h2c;
    bool http3;                                /* --http3 */
    uint32_t streams, requests_per_connection; /* 0: not given */
    char *expect_body;                         /* NULL: status alone decides ok */
    size_t nrejects;
    struct run_reject *rejects; /* bodies owned */
    int argc;
    char **argv;               /* the command line (environment.args) */
    struct record_setup setup; /* --setup (url NULL: none) */
    char *proxy;               /* --proxy as host:port (never its credentials); NULL: none */
    char *local_addresses;     /* --local-address as given; NULL: none */
    double connect_rate;       /* --connect-rate (/s); 0: none */
    /* --cert/--key (paths, never what the files hold), --unix-socket, --connect-to; NULL / 0: none */
    char *tls_cert, *tls_key;
    char *unix_socket;
    char **connect_to; /* the rules as given */
    size_t nconnect_to;
};

/* Free the strings and arrays of c and zero it. */
void record_config_release(struct record_config *c);

/* What stands for a credential in the recorded command line. */
#define RECORD_REDACTED "<redacted>"

/* Set c's command line (environment.args) to a copy of argv (argc 0 or argv NULL: none), each
 * argument through record_redact_arg; the old one is freed. The one way a command line enters a
 * record (the engine's result, knee merge, the JSON reader), so no credential reaches a result
 * file. */
void record_config_set_args(struct record_config *c, int argc, const char *const *argv);

/* One argument as recorded (a new string; prev: the argument before it, NULL for the first). A
 * header value is replaced by RECORD_REDACTED, keeping "[T=]Name:", when the header is
 * Authorization, Proxy-Authorization, Cookie or Set-Cookie (any case; given as -H V, -HV,
 * --header=V, or anywhere on the line: redacting more is harmless), and whatever its name when
 * it is a --header-secret value (--header-secret V, --header-secret=V) or a --setup-header
 * value; a --setup-body given inline is replaced whole (from @FILE it stays); a --capture rule is
 * kept as it is; a URL's credentials (user:password@, as --proxy takes them) become
 * RECORD_REDACTED. Anything else is copied as it is. */
char *record_redact_arg(const char *prev, const char *arg);

/* A --threshold as judged (record/threshold.h record_threshold_eval): what the summary and the JSON
 * say of it. */
struct record_threshold {
    char expr[160];
    char unit[8];    /* "ms", "", "/s", or "%" (a fraction, printed as a share; "fraction" in JSON) */
    double measured; /* NAN: nothing to measure */
    bool pass;
};

/* knee run --abort-if: the rule that stopped the run and the end of the second it fired in
 * (seconds since t0); set false when no rule fired. The JSON's "aborted" (null, or {rule, at_s}). */
#define RUN_ABORT_RULE_MAX 160
struct run_abort {
    bool set;
    char rule[RUN_ABORT_RULE_MAX];
    double at_s;
};

/* knee run --remote-write: what the pushes did (cli/push_flags.h); the JSON's "remote_write"
 * (null when set is false). url never holds credentials (they are refused in it). */
#define RECORD_RW_URL_MAX 1024
#define RECORD_RW_ERROR_MAX 192
struct record_remote_write {
    bool set;
    bool required;                                        /* --remote-write-required */
    char url[RECORD_RW_URL_MAX];                          /* as given, cut at RECORD_RW_URL_MAX - 1 bytes */
    uint64_t pushes, ok, failed, retried, dropped, bytes; /* push/push.h struct push_stats */
    char last_error[RECORD_RW_ERROR_MAX];                 /* "" = none */
};

struct run_record {
    size_t ntargets;
    struct run_target_result *targets;
    struct run_target_result all; /* every target merged (record_finish sums the targets) */
    struct record_config config;  /* the plan as it ran */
    uint32_t threads;
    uint32_t pool_cap; /* open loop: connection cap in total */
    enum run_io io;    /* the engine that ran: RUN_IO_EPOLL or RUN_IO_URING (never AUTO) */
    /* responses were read at the load threads' next wake, timed by the kernel's receive
     * timestamps (deferred reads: the open loop with --timer-slack, load/worker.c) */
    bool reads_deferred;
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
    struct run_generator_verdict generator; /* why (record_generator_judge) */
    uint64_t unreached;  /* dropped: planned requests the generator had not reached when the drain ended */
    bool no_ok;          /* not one request planned after the warm-up ended ok: a failed run */
    double failed_share; /* failed (record_outcome_failed) among sent, after the warm-up (NAN: none sent) */
    size_t nticks;
    struct run_tick *ticks;
    /* most important first; attention: one says something went wrong (not only: few samples,
     * warm-up left out) */
    struct warn_list warnings;
    struct run_env env;
    bool log_slowed;        /* the request-log writer could not keep up */
    int out_error;          /* --out could not be written whole: the first error (-errno); also a warning */
    struct run_shard shard; /* --shard / --start-at (count 0 otherwise) */
    bool verbose;           /* the summary was asked in its full form (knee run --verbose; kept in the JSON) */
    size_t nthresholds;
    struct record_threshold *thresholds; /* --threshold verdicts (record_set_thresholds) */
    struct run_abort aborted;            /* --abort-if (record_set_aborted) */
    size_t nstages;                      /* --stages: one result per stage (record/stages.h); 0 without */
    struct run_stage_result *stages;
    struct run_entries entries;              /* --targets FILE held as a table: one row per entry (record/entries.h) */
    struct record_remote_write remote_write; /* --remote-write (cli/push_flags.h); set false without */
};

/* Free everything the record owns (targets, histograms, ticks, warnings, config, thresholds,
 * shard parts) and zero it. A zeroed record is released as nothing. */
void record_release(struct run_record *res);

/* ---- targets ---- */

/* r zeroed, every histogram initialised empty (RUN_HDR_*). Release with record_target_release. */
void record_target_init(struct run_target_result *r);
/* One target's histograms (initialised or still zeroed) released. */
void record_target_release(struct run_target_result *r);
/* Server-Timing histograms st[0..n) added to d's by name (a name beyond RUN_ST_MAX_NAMES is left out). */
void record_server_timing_merge(struct run_target_result *d, const struct run_server_timing *st, size_t n);
/* d += s: counts, status codes, histograms (Server-Timing by name, up to RUN_ST_MAX_NAMES), protocols, https
 * (not events, rates or statistics: record_finish derives those). */
void record_target_add(struct run_target_result *d, const struct run_target_result *s);

/* dst += src, two records of the same targets in the same order (the caller checks the names), for
 * every target and all: the counts and warm-up counts, the histograms (Server-Timing by name), the
 * protocol counts (HTTP/2's server limit only from a record with an HTTP/2 connection: a record read
 * back says "unlimited" for none), https, the events (record_events_merge: the window becomes the union,
 * until the derivation sets it: record_set_window), each target's planned rate and connections (each
 * record's part of the plan) and the longest resolve time; the load threads and the pool cap. dst's
 * histograms must be initialised (record_target_init); src's may be empty or zeroed (a record read
 * back). Everything derived (window, rates, statistics, shares, verdicts, warnings) is left to the
 * derivation: record_finish, or its pieces. */
void record_add(struct run_record *dst, const struct run_record *src);

/* The accounting identities of one set of counts: planned = sent + dropped, sent = the sum
 * of the outcomes other than dropped, and dropped = outcome[OUTCOME_DROPPED]; also transport
 * = the sum of its causes, and retries <= sent (a request is retried at most once, and a retry
 * is neither planned nor sent again). record_finish checks them for every target and the total
 * (run_record.accounting_ok). */
bool record_counts_hold(const struct run_counts *c);
/* d += s, field by field (RUN_COUNTS_FIELDS). */
void record_counts_add(struct run_counts *d, const struct run_counts *s);

/* Summaries in milliseconds of a histogram recorded in ns (NULL or uninitialised: no samples). */
void record_summary_of(const struct hdr *h, struct run_summary *out);

/* A failed request: http_error, invalid, transport or timeout (not ok, not a --reject
 * rejection, not dropped or cancelled, which the generator decided). */
bool record_outcome_failed(enum reqlog_outcome o);

/* "transport 173,909" or "timeout 12, http_error 3": the failed outcomes that occurred (or
 * "nothing was sent", ...), as the FAILED and ERRORS warnings say them. Returns buf. */
const char *record_describe_failures(const struct run_counts *c, char *buf, size_t len);

/* Human-readable name of a latency group ("ok", "rejected", ...). */
const char *record_group_name(enum run_group g);

/* --io's words: "auto", "epoll", "uring". */
const char *record_io_name(enum run_io io);

/* The plan id as 16 hex digits (buf of at least 17 bytes). Returns buf. */
const char *record_shard_plan_hex(uint64_t plan_id, char *buf, size_t len);
/* The plan id back from its 16 hex digits (record_shard_plan_hex's form, either case): false when s
 * is anything else. */
bool record_shard_plan_parse(const char *s, uint64_t *plan_id);
/* An instant as "2026-11-30T13:00:00.250Z" (UTC, milliseconds). Returns buf. */
const char *record_shard_utc(uint64_t unix_ns, char *buf, size_t len);

/* ---- the one derivation (record/finish.c) ---- */

/* What only the producer of a record knows about its times, as record_finish takes them (ns
 * since t0). */
struct record_finish_in {
    uint64_t plan_end_ns; /* the plan's end (--duration; an open loop's --requests at its rate); UINT64_MAX:
                             none of its own (a closed loop with --requests: the last thread ends it) */
    uint64_t finish_ns;   /* the last load thread finished */
    uint64_t stop_ns;     /* planning stopped (the latest thread's), what an interrupted run's window ends at */
    double late_p99_ms;   /* the load threads' timer lateness p99, named in a GENERATOR-LIMITED warning (NAN:
                             no sample) */
};

/* Everything derived once the targets' counts, histograms and events are in (every target's
 * events counted over any window; rec->config, interrupted, unreached, log_slowed, pool_cap
 * set), in this order: all = the sum of the targets; the window (record_window) and every rate
 * over it (record_set_window); the statistics (record_summarize); sent on schedule, the failed
 * share, no ok, the accounting identities (record_derive); then the warnings, appended after
 * any the producer added before, most important first: a broken identity, FAILED or ERRORS,
 * interrupted, GENERATOR-LIMITED (record_generator_judge, open loop), dropped, cancelled, failed
 * connects, unsolicited bytes, few samples, the warm-up, a slow request log. */
void record_finish(struct run_record *rec, const struct record_finish_in *in);

/* The pieces of record_finish, for producers that derive part of a record themselves (knee
 * merge: its window, its own verdicts): */
/* all = "all" and the sum of the targets (record_target_add), released first. */
void record_sum_targets(struct run_record *rec);
/* The measurement window by record_finish's rule: [config.warmup_ns, the plan's end) — the
 * last thread's end without a planned end, where planning stopped when interrupted before it;
 * never before its start. */
void record_window(const struct run_record *rec, const struct record_finish_in *in, uint64_t *start_ns,
                   uint64_t *end_ns);
/* The window [start_ns, end_ns) set (window_*_s, every target's events' window), all.events =
 * the targets' events merged, and every target's and all's rates over it. */
void record_set_window(struct run_record *rec, uint64_t start_ns, uint64_t end_ns);
/* Every target's (and all's) statistics from its histograms (record_summary_of), Server-Timing's too. */
void record_summarize(struct run_record *rec);
/* sent_on_schedule, failed_share, no_ok and accounting_ok from the counts. */
void record_derive(struct run_record *rec);
/* The generator rule's input (record_generator_judge) from a record's totals: sent on schedule, the lag
 * and the latency of every completed request from its histograms (all.lag, all.latency_all: a record
 * the engine or a merge produced, not one read back from JSON), the planned rate over the window,
 * the loop, --lag-limit and --timer-slack from its plan. record_finish judges with it; a caller with
 * its own limits (knee capacity's probe) sets them after. */
void record_generator_input(const struct run_record *rec, struct run_generator_input *in);
/* The FAILED (no ok request) or ERRORS (failed_share >= RUN_HIGH_FAILED_SHARE) warning, when
 * one applies, in the words knee run prints. */
void record_warn_failures(struct run_record *rec);
/* The notes on few latency samples (p99 or p99.9 resting on fewer than STATS_MIN_BEYOND samples
 * above it) and on the warm-up's requests left out. */
void record_note_samples(struct run_record *rec);
void record_note_warmup(struct run_record *rec);

/* Planning was stopped on purpose, not interrupted (knee run --until-ci stops a run once its p99 is
 * precise enough): interrupted cleared, and record_finish's "interrupted: ..." warning replaced by
 * the line formatted from fmt (attention unchanged). Nothing when the record was not interrupted. */
void record_stopped_on_purpose(struct run_record *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An --abort-if rule stopped the run at at_s (seconds since t0): rec->aborted set (the rule
 * truncated to RUN_ABORT_RULE_MAX - 1 bytes), interrupted kept (planning did stop early), and
 * record_finish's "interrupted: ..." warning replaced by one that says which rule fired when. */
void record_set_aborted(struct run_record *rec, const char *rule, double at_s);

/* The --threshold verdicts kept in the record (copied; replaces any before). */
struct run_threshold;
void record_set_thresholds(struct run_record *rec, const struct run_threshold *thr, size_t n);

/* ---- the run JSON (docs/FORMATS.md, "knee run JSON") ---- */

/* The document's schema name. Version 2: rates by event time (docs/FORMATS.md, "Rates"),
 * events, the window's edges, the generator verdict, sent_on_schedule (was send_ratio). */
#define RUN_JSON_SCHEMA "knee-run/2"

/* True for a knee run JSON schema that readers (report, compare, merge) accept: this version
 * and knee-run/1 (written before the rates were by event time). NULL is false. */
bool record_schema_readable(const char *schema);

struct json_t; /* jansson's */
/* The one schema check of the readers of a run JSON: 0 when root is an object of a readable
 * schema, else KNEE_EFORMAT with "not a knee run JSON (schema \"X\", expected \"knee-run/2\"" +
 * hint + ")" in err (X "none" when there is no schema; hint may be "", or say who writes or
 * reads it). */
int record_schema_check(const struct json_t *root, const char *hint, char *err, size_t errlen);

/* The record as one JSON object (pretty when `pretty`): the environment, the plan, the window
 * and verdicts, every target's counts, rates and statistics, the timeline, the warnings, the
 * thresholds, and with a shard record the "shard" object with every histogram (HdrHistogram V2
 * compressed, base64) so that knee merge adds shards up exactly. Reads the statistics
 * (record_summarize), never the histograms, except the shard's. */
void record_write_json(FILE *out, const struct run_record *rec, bool pretty);

/* The record of a knee run JSON document (knee-run/2, whose numbers round-trip exactly, so the
 * summary prints the same text and, with record_read_histograms, record_write_json writes the
 * same document again; knee-run/1 as far as it holds the numbers), parsed by jansson (root:
 * borrowed). The statistics are read as the document has them (the histograms stay empty); a
 * number that is missing reads as NAN (0 for a count, false for a flag). 0 with *rec filled
 * (release with record_release), or KNEE_EFORMAT with a reason in err (not a knee-run
 * document, "all" or "targets" missing or of the wrong type) and *rec zeroed. */
int record_read_json(const struct json_t *root, struct run_record *rec, char *err, size_t errlen);
/* The histograms and exact events a shard's (or a merge's) document carries in
 * "shard.histograms", added into rec (read from root by record_read_json), with each target's
 * sent_on_time: what knee merge adds up. A document without them is left as it is. Checked as
 * knee merge checks them: 0, or KNEE_EFORMAT (or the decoder's code) with a reason in err
 * ("histogram api.latency has no hdr, min_ns or max_ns", "histograms of api: events.sent is
 * missing or out of range", ...; rec keeps what was added before). */
int record_read_histograms(const struct json_t *root, struct run_record *rec, char *err, size_t errlen);
/* record_read_json as knee merge reads a shard's document, whose counts it adds up: refused (KNEE_EFORMAT,
 * *rec zeroed) unless the document is an object of this schema (knee-run/2: events and rates by event
 * time), with shard.t0_unix_ns, window_s and elapsed_s (>= 0), config.mode, every target's "accounting"
 * and "warmup" objects (and all's) with every count an integer >= 0 (planned, sent, dropped, each
 * outcome, each transport cause, retries), their identities holding (planned = sent + dropped, sent =
 * the outcomes but dropped, dropped = outcomes.dropped, transport = its causes, retries <= sent; all =
 * the sum of the targets), every rate it states (config.rate, config.ramp, shard.streams, each
 * target's "rates") absent, null or >= 0, and shard.histograms.targets listing every target. err says
 * why without a path ("accounting.outcomes.ok is missing or not a count", "target api: accounting: planned
 * 9 != sent 8 + dropped 0", "schema \"knee-run/1\": knee merge adds up shards of ..."): the caller names
 * the file. The histograms themselves: record_read_histograms, then record_check_events. */
int record_read_json_strict(const struct json_t *root, struct run_record *rec, char *err, size_t errlen);
/* The events a shard's document carries (record_read_histograms) against its counts, as knee merge
 * checks them before adding: for every target and all, events.sends = sent + sent_late, and no event
 * count above the requests it counts (events.planned <= planned, sent_before + sends <= sent,
 * completed + completed_late <= sent, ok <= completed and <= ok; accounting + warmup). 0, or
 * KNEE_EFORMAT naming the target and the identity ("target api: events.planned 4611686018427387904 > the
 * 40 requests planned (accounting + warmup)"). */
int record_check_events(const struct run_record *rec, char *err, size_t errlen);
/* Who wrote a run JSON, as knee merge groups files by it: its "shard" object's count, index (or
 * RUN_SHARD_MERGED for a merge), plan id and start instant into *s (zeroed first; count 0: the
 * document has no shard object, a run of the whole plan). KNEE_EFORMAT with a reason (without a
 * path) when it is not a knee run JSON of a readable schema (record_schema_readable), or its
 * shard object has no count in 1 .. RUN_MAX_SHARDS, no plan_id of 16 hex digits, or (not a merge)
 * no index below its count. */
int record_read_shard_id(const struct json_t *root, struct run_shard *s, char *err, size_t errlen);
/* A target object's "protocols", "tls_versions", "tls_handshakes" and "h2" read into *pc
 * (missing: zero; h2 "max_concurrent": a number is the limit seen, null is UINT64_MAX, seen when the
 * target had an HTTP/2 connection, anything else is none seen); true when its "tls" is an object (an
 * https target). knee merge adds the shards' with record_proto_counts_add. */
bool record_read_transport(const struct json_t *target, struct run_proto_counts *pc);

#endif
