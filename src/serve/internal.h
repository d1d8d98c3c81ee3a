/* Private structures of knee serve, shared by its three files (not an API: use serve/serve.h):
 *
 *   conn.c    connections and parsing: accept, read, parse, answer, write, timeouts
 *   work.c    the request pipeline: the slot queue, the report lock, the timers that
 *             simulate the presets' waits (work, dependencies, acquire timeout), CPU work
 *   server.c  the server's life: start, the loop thread, the Date header, drain and stop,
 *             counters; the public API
 *
 * Everything runs on the server's loop thread, except the CPU workers (serve/cpu) and the
 * readers of the counters (serve_counters, from any thread).
 *
 * A connection runs one request at a time: the parser stops after each request, so
 * pipelined requests are answered strictly in order, and the input buffer only holds the
 * bytes that follow the request in progress. A request's life:
 *
 *   parsed ─▶ [slot queue, FIFO] ─▶ [report lock] ─▶ work (timer or CPU worker)
 *          ─▶ [dependencies: one timer for the slowest] ─▶ release slot ─▶ response
 *
 * as in the source articles' servers, where a request takes its pool slot first and then
 * waits for the table lock while holding it. A client that disconnects (EOF or reset)
 * while its request waits is dropped from the queue (cancelled). An EOF once the work
 * runs is a half-close (shutdown(SHUT_WR) after the request): the request and every
 * complete request before the EOF are answered, then the connection is closed. A client
 * that reset the connection leaves the work running, as a real server would, and its
 * response counts as a write failure. While a request is in flight the connection is
 * still read (up to the input buffer), so a departure is seen at once.
 *
 * Closing after a response (an error, Connection: close, HTTP/1.0) is a lingering close,
 * as nginx does: shut down the write side, then read and discard what the client still
 * sends for up to LINGER_TIME_NS (LINGER_IDLE_NS without input) or LINGER_MAX_BYTES, then
 * close. A plain close() with unread input makes the kernel send a reset, and the
 * client's kernel then discards the response before the client reads it. */
#ifndef KNEE_SERVE_INTERNAL_H
#define KNEE_SERVE_INTERNAL_H

#include "core/clock.h"
#include "core/loop.h"
#include "core/rng.h"
#include "http/request.h"
#include "http/server_response.h"
#include "serve/cpu.h"
#include "serve/serve.h"
#include "tls/tls.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONN_IN_CAP 4096  /* unparsed bytes after the request in progress */
#define CONN_OUT_CAP 4096 /* responses not yet written */
#define RESP_MAX 1024     /* the largest single response this server formats */
#define MAX_CUTS 64       /* write boundaries kept for --nagle (two per response) */
#define LISTEN_BACKLOG 4096
#define ACCEPT_BATCH 64
#define MAX_FANOUT 1000
/* The lingering close (above): its bounds, the read size and the bytes read per event. */
#define LINGER_TIME_NS (5 * NS_PER_S)
#define LINGER_IDLE_NS (1 * NS_PER_S)
#define LINGER_MAX_BYTES (64u << 20)
#define LINGER_READ 65536
#define LINGER_READ_PER_EVENT (4 * LINGER_READ)
/* Connections turned away by --max-conns (503 CONN_LIMIT) linger too, up to this many at
 * once; beyond it they are closed at once. */
#define REFUSED_LINGER_MAX 256
/* accept() failing for lack of file descriptors (EMFILE, ENFILE) or memory: stop
 * accepting this long (the connections wait in the backlog) instead of spinning. */
#define ACCEPT_PAUSE_NS (100 * NS_PER_MS)

/* Where a work request is in its life (the drawing above). */
enum phase { PH_NONE, PH_WAIT_SLOT, PH_WAIT_LOCK, PH_WORK, PH_CPU, PH_DEPS, PH_STREAM };

struct conn;

/* The one request a connection has in flight. */
struct work {
    struct conn *conn;
    enum phase phase;
    bool holds_slot;
    bool keep_alive, head_only;
    bool miss;
    unsigned fanout, slow_deps;
    uint64_t work_ns;  /* planned work (simulated wait or CPU time) */
    uint64_t deps_ns;  /* the slowest dependency */
    uint64_t entry_ns; /* request complete (server entry) */
    uint64_t slot_ns;  /* slot taken */
    uint64_t start_ns; /* processing start: slot and lock passed (CPU: a worker took it) */
    uint64_t end_ns;   /* work and dependencies done */
    struct loop_timer timer;
    struct work *prev, *next; /* slot queue or lock queue */
    struct cpu_job job;
    /* a streamed answer (cfg.stream, stream.c): its plan, drawn at entry, and its progress */
    bool stream;           /* answered as events (not HEAD) */
    bool stream_started;   /* the head went out: the end is the last chunk, not a JSON body */
    unsigned events, sent; /* events planned, and written */
    uint64_t gap_ns, stall_ns;
    double stall_p;
    struct rng srng; /* the stalls' draws: seeded from the server's stream at entry */
};

/* A FIFO of requests waiting for a slot or for the lock, linked through work.prev/next. */
struct workq {
    struct work *head, *tail;
};

struct conn {
    struct serve_handle *srv;
    struct loop_io io;
    struct loop_timer timer; /* header-read and idle timeouts, re-armed lazily */
    struct conn *prev, *next;
    struct http_request_parser parser;
    struct work w;
    uint64_t accepted_ns, idle_since_ns, partial_since_ns;
    uint64_t linger_start_ns, linger_input_ns, linger_bytes;
    uint64_t nreq;
    bool busy;         /* a work request is in flight; parsing is paused */
    bool closing;      /* close once the output is written */
    bool linger_after; /* ... with a lingering close: a response went out before the close */
    bool lingering;    /* write side shut down; reading and discarding until EOF or a bound */
    bool refused;      /* turned away by the connection limit: not counted as open */
    bool dead;         /* socket closed; the struct lives until the work in flight ends */
    bool peer_eof;
    bool parsing;       /* inside process_input(): a request finishing at once must not re-enter it */
    bool h2_timed_out;  /* a stream: answered 408 by the header timeout; reset once that answer is out */
    bool h2_events;     /* a stream answered as events: its body grows after the head (serve_h2_events_*) */
    bool h2_events_eof; /* ... and its last event is in out */
    /* TLS and HTTP/2 (conn.c, h2.c). A connection speaks TLS when tls.ssl is set (handshaking
     * until tls.handshake_done). An HTTP/2 connection has h2 (its nghttp2 session and streams);
     * each of its streams is a struct conn of its own without a socket (h2_parent set): the
     * request pipeline (work.c) answers a stream exactly as it answers a connection. */
    struct tls_conn tls;
    struct serve_h2 *h2;
    struct conn *h2_parent; /* a stream: its connection (NULL once the connection is gone) */
    int32_t h2_id;          /* a stream: its id */
    /* An HTTP/3 request stream (h3.c) is a socket-less struct conn too: its QUIC connection
     * (NULL once the stream is unlinked) and its stream id (0 is a valid one: test h3_parent). */
    struct serve_h3_conn *h3_parent;
    int64_t h3_id;
    size_t h3_acked;    /* bytes of out the client acknowledged: out is reused only once all are */
    bool h3_events_eof; /* an events answer's last event is in out (serve_h3_events_*) */
    size_t in_start, in_end;
    size_t out_start, out_end;
    unsigned ncuts, cut0;
    size_t cuts[MAX_CUTS];
    char in[CONN_IN_CAP];
    char out[CONN_OUT_CAP];
};

/* Counters written by the loop thread (plain increments, relaxed atomics so other threads
 * may read them) and gauges also touched by CPU workers (atomic read-modify-write). */
struct counters {
    _Atomic uint64_t executed, ok, rejected, cancelled, write_failures, requests, bad_requests, timeouts, connections,
        connections_total, conn_refused, pauses, tls_failed, h3_requests;
    _Atomic int64_t active, waiting;
    /* server time (cfg.time_bounds_ns), by enum serve_time_class: per bucket, and the sum */
    _Atomic uint64_t time_counts[SERVE_TIME_CLASSES][SERVE_TIME_MAX_BOUNDS + 1];
    _Atomic uint64_t time_sum_ns[SERVE_TIME_CLASSES];
};

struct serve_handle {
    struct serve_config cfg;
    struct loop loop;
    pthread_t thread;
    bool thread_started, joined;
    int listen_fd;
    struct loop_io listen_io;
    char bound[SERVE_ADDR_MAX];
    int port;
    struct rng rng;

    /* work.c: the pipeline */
    unsigned slots_free;
    bool granting;
    struct workq slotq;
    bool paused;
    uint64_t pause_start_ns;
    struct workq lockq;
    struct loop_timer pause_timer;
    bool have_cpu;
    struct cpu_pool cpu;
    struct loop_io cpu_io;

    /* server.c: the Date header, refreshed every second, and the null target's responses,
     * prebuilt with it: keep-alive and close variants */
    char date[HTTP_DATE_LEN + 1];
    struct loop_timer date_timer;
    char null_resp[2][256];
    size_t null_len[2], null_head_len[2];

    /* conn.c: every live struct conn (open or dead), and the free ones for reuse; the
     * refused ones lingering; accept paused for lack of descriptors; the discard buffer of
     * lingering closes */
    struct conn *conns;
    struct conn *free_conns;
    uint64_t nconn_structs;
    unsigned refused_lingering;
    struct loop_timer accept_timer;
    char discard[LINGER_READ];
    struct tls_ctx *tls; /* cfg.tls: the server's context (certificate, ALPN) */
    struct serve_h3 *h3; /* cfg.h3: the UDP listener and its QUIC connections (h3.c) */
    char alt_svc[48];    /* cfg.h3: "Alt-Svc: h3=\":PORT\"\r\n" for the TCP side's responses */

    struct counters c;
    uint64_t start_ns;
    _Atomic uint64_t stop_ns;
    _Atomic bool stop_requested;
    bool draining;
    struct loop_timer drain_timer;
    bool drain_expired;
};

/* ---- counters ---- */

/* One writer (the loop thread): a relaxed load and store is enough and compiles to a
 * plain increment, which matters on the null target's path. */
static inline void counter_inc(_Atomic uint64_t *v)
{
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + 1, memory_order_relaxed);
}

static inline void counter_dec(_Atomic uint64_t *v)
{
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) - 1, memory_order_relaxed);
}

static inline uint64_t counter_get(const _Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

/* Count a work request's server time (entry to response queued) in class cls, when the
 * configuration asks for the histogram. Loop thread only. */
static inline void serve_time_record(struct serve_handle *s, enum serve_time_class cls, uint64_t entry_ns)
{
    unsigned n = s->cfg.ntime_bounds;
    if (!n)
        return;
    uint64_t ns = clock_now_ns() - entry_ns;
    unsigned lo = 0, hi = n; /* the first bound >= ns (le), n for above every bound */
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (s->cfg.time_bounds_ns[mid] >= ns)
            hi = mid;
        else
            lo = mid + 1;
    }
    counter_inc(&s->c.time_counts[cls][lo]);
    _Atomic uint64_t *sum = &s->c.time_sum_ns[cls];
    atomic_store_explicit(sum, atomic_load_explicit(sum, memory_order_relaxed) + ns, memory_order_relaxed);
}

/* Gauges move on the loop thread and on CPU workers: a real atomic add. */
static inline void gauge_add(_Atomic int64_t *g, int64_t d)
{
    atomic_fetch_add_explicit(g, d, memory_order_relaxed);
}

/* ---- conn.c: connections and parsing ---- */

/* The listening socket's callback: accept up to ACCEPT_BATCH connections (or refuse them
 * beyond cfg.max_conns with 503 CONN_LIMIT). io->data is the server. Out of descriptors,
 * it stops accepting for ACCEPT_PAUSE_NS. */
void serve_conn_accept(struct loop *loop, struct loop_io *io, uint32_t events);
/* Prepare the accept-pause timer (once, at start). */
void serve_conn_accept_init(struct serve_handle *s);
/* Write what is pending. Returns false when the connection was closed (c may be freed). */
bool serve_conn_flush(struct conn *c);
/* After progress: close when nothing more can happen on c, else update its events and
 * timer. Returns false when the connection was closed. */
bool serve_conn_settle(struct conn *c);
/* Detach c from the server's list into the free list (its socket is closed already). */
void serve_conn_free(struct conn *c);
/* The response of a finished work request (200, Server-Timing) or of one that waited too
 * long for a slot (503 QUEUE_TIMEOUT), into c's output buffer. */
void serve_conn_respond_work(struct conn *c);
void serve_conn_respond_rejected(struct conn *c);
/* The request in flight has its response in the output buffer (or its client is gone): go
 * on with the pipelined bytes, write, settle. c may be freed. */
void serve_conn_request_done(struct conn *c);

/* Set up TLS (cfg.tls: load or generate the certificate) before the loop starts. 0 or
 * KNEE_EINVAL; serve_conn_release frees it at stop. */
int serve_conn_tls_init(struct serve_handle *s);
void serve_conn_tls_release(struct serve_handle *s);
/* A stream's request is complete in c->parser.req: answer it as conn.c answers a request. */
void serve_conn_request(struct conn *c);
/* Answer a request that was refused (400, 413, 414, 431, ...) as the parser's refusals are. */
void serve_conn_refuse_request(struct conn *c, int status);
/* Answer 408 HEADER_TIMEOUT: a request not complete --header-timeout after its first byte. */
void serve_conn_respond_timeout(struct conn *c);
/* A new stream of connection parent (a socket-less struct conn, linked into nothing). */
struct conn *serve_conn_stream_new(struct conn *parent);
/* A socket-less struct conn of server s for a stream of another kind (HTTP/3), linked into
 * nothing: the caller sets its parent. */
struct conn *serve_conn_stream_alloc(struct serve_handle *s);
/* Read and write on a socket through TLS when the connection speaks it: recv()/send()
 * semantics (-1 with errno EAGAIN to wait, ECONNRESET for a TLS failure). */
ssize_t serve_conn_recv(struct conn *c, void *buf, size_t len);
ssize_t serve_conn_send(struct conn *c, const void *buf, size_t len);
/* After a response: close now, or shut down the sending side and read on (the lingering close). */
void serve_conn_linger(struct conn *c);
/* Close the socket (and its streams, or its request), as on an error. */
void serve_conn_close(struct conn *c);

/* Append n bytes to c's output when they fit (an HTTP/1.1 connection's buffer): false when the
 * client has not taken enough of what went before (the caller tries again later). */
bool serve_conn_out_write(struct conn *c, const char *p, size_t n);

/* ---- h2.c: HTTP/2 connections (cfg.h2) ---- */

/* Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
#define SERVE_H2_STREAMS 128
/* The HTTP/2 client connection preface (RFC 9113 §3.4). */
#define SERVE_H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define SERVE_H2_PREFACE_LEN 24

/* Make c an HTTP/2 connection (after ALPN "h2", or a cleartext preface) and feed it the bytes
 * already read (the preface among them; NULL/0 over TLS). false when it was closed. */
bool serve_h2_start(struct conn *c, const char *pre, size_t len);
/* Events on an HTTP/2 connection. */
void serve_h2_io(struct conn *c, uint32_t events);
/* Write what the session has; false when the connection was closed. */
bool serve_h2_flush(struct conn *c);
/* After progress: GOAWAY when closing, close when done, events and timer. false: closed. */
bool serve_h2_settle(struct conn *c);
/* The connection's timeout deadline, the earliest of: the header timeout from the first byte of
 * the oldest request not complete (a stream without END_STREAM, or a frame begun and not
 * finished); with streams open and none working, the idle timeout from the last progress of an
 * answer (the client does not take it); without streams, the header timeout from accept before
 * the first request, else the idle timeout from the last stream's end. None while a stream's
 * work runs and no request is incomplete: the pipeline is the slow party. Frames that carry no
 * request (PING, SETTINGS, WINDOW_UPDATE) extend no deadline. */
uint64_t serve_h2_deadline(const struct conn *c);
/* The connection's deadline passed (conn.c's timer): a request past the header timeout is
 * counted in timeouts and answered 408 on each incomplete stream, then GOAWAY and a lingering
 * close once the streams at work are answered; any other deadline closes the connection. */
void serve_h2_timeout(struct conn *c);
/* Submit a stream's response (status, content type, body, extra header lines "Name: v\r\n"). */
void serve_h2_respond(struct conn *stream, int status, const char *ctype, const char *body, size_t body_len,
                      const char *extra, bool head_only);
/* A stream's request is answered (or its client left): write, and free the stream when its
 * connection is gone. */
void serve_h2_stream_done(struct conn *stream);
/* The connection's socket is closing: detach or cancel its streams (work in flight keeps its
 * stream alive, answered into nothing, as an HTTP/1.1 request whose client reset). */
void serve_h2_close(struct conn *c);
/* A stream answered as events: submit the head (200, text/event-stream, extra header lines), its
 * body to follow through serve_h2_events_push. */
void serve_h2_events_begin(struct conn *stream, const char *extra);
/* Add n bytes of body (one event: one DATA frame when the client reads as fast as it comes);
 * eof: they end the body. false when they do not fit (the client is slow): try again later.
 * Nothing is written here: serve_h2_stream_done writes (after serve_work_end for the last). */
bool serve_h2_events_push(struct conn *stream, const char *p, size_t n, bool eof);
/* Streams of connection c still alive (open, or finishing their work after the socket closed). */
unsigned serve_h2_streams(const struct conn *c);
/* Free the session and every stream left (serve_conn_free of the connection). */
void serve_h2_release(struct conn *c);
/* A stream is freed: unlink it from its connection. */
void serve_h2_stream_free(struct conn *stream);
/* The method named by an HTTP/2 or HTTP/3 :method value (any other: GET, answered alike). */
enum http_method serve_h2_method(const uint8_t *v, size_t n);

/* ---- h3.c: HTTP/3 over QUIC (cfg.h3) ---- */

/* Request streams one QUIC connection may have open at once (its MAX_STREAMS). */
#define SERVE_H3_STREAMS 128

/* Bind the UDP socket to the address and port of TCP listener listen_fd. 0 or -errno (a failed
 * bind leaves nothing open: it may be tried again on another port). */
int serve_h3_open(struct serve_handle *s, int listen_fd);
/* After serve_h3_open: load the certificate into GnuTLS (the files, or the TCP side's generated
 * pair from s->tls) and watch the socket, before the loop starts. 0, KNEE_EINVAL or -errno;
 * serve_h3_release frees what was made, whatever failed. */
int serve_h3_start(struct serve_handle *s, const char *cert_file, const char *key_file);
/* The server drains: GOAWAY on every QUIC connection, each closed once no stream works. */
void serve_h3_drain(struct serve_handle *s);
/* Free every connection and stream left, and the listener (the loop thread has ended). */
void serve_h3_release(struct serve_handle *s);
/* Submit a stream's response, as serve_h2_respond. */
void serve_h3_respond(struct conn *stream, int status, const char *ctype, const char *body, size_t body_len,
                      const char *extra, bool head_only);
/* A stream's request is answered (or its client left): write it out. */
void serve_h3_stream_done(struct conn *stream);
/* A stream is freed: unlink it from its connection (which goes when it waited for it). */
void serve_h3_stream_free(struct conn *stream);
/* A stream answered as events: submit the head (200, text/event-stream, extra header lines), its
 * body to come through serve_h3_events_push. Nothing is written here. */
void serve_h3_events_begin(struct conn *stream, const char *extra);
/* Append n bytes (one event: one DATA frame) to the events body, eof with the last. false when
 * out has no room yet (bytes sent and not acknowledged stay in it: try again later); true when
 * written or when nobody is left to write to. Nothing is written here: serve_h3_stream_done
 * writes (after serve_work_end for the last). */
bool serve_h3_events_push(struct conn *stream, const char *p, size_t n, bool eof);

/* ---- work.c: the request pipeline ---- */

/* Prepare a connection's work slot (once, at accept). */
void serve_work_init(struct work *w, struct conn *c);
/* Draw everything random for request r at entry, in arrival order, so a seed fixes the
 * whole sequence whatever the timing: work time, hit or miss, the dependencies. Returns
 * false on a bad ?ms= or ?fanout= (the caller answers 400). */
bool serve_work_plan(struct serve_handle *s, const struct http_request *r, struct work *w);
/* Send a planned request down the pipeline: slot (with a pool), lock, work, dependencies;
 * it ends in serve_conn_respond_work/_rejected and serve_conn_request_done, at once or
 * from a timer or a CPU completion. */
void serve_work_start(struct serve_handle *s, struct work *w);
/* The request's work and its answer are over (a streamed answer's last event is written): release
 * its slot, count it, answer (unless the answer was streamed) and go on with the connection. */
void serve_work_end(struct serve_handle *s, struct work *w);
/* Drop a request waiting for a slot or the lock (its client left): counted as cancelled,
 * its slot (if it holds one) handed on. */
void serve_work_cancel(struct serve_handle *s, struct work *w);
/* The report job: the first pause at start + cfg.pause_every_ns (none when 0); stop keeps
 * a pause in progress to its end but starts no other. */
void serve_pause_start(struct serve_handle *s);
void serve_pause_stop(struct serve_handle *s);
/* The CPU workers (cfg.cpu_ns > 0) and the eventfd their results come back through. 0 or
 * a negative code; stop waits for the workers (a job in their hands points into a
 * connection) and is a no-op when they never started. */
int serve_cpu_start(struct serve_handle *s);
void serve_cpu_stop(struct serve_handle *s);

/* ---- stream.c: answers as server-sent events (cfg.stream) ---- */

/* Read a stream request's plan from its query (?events=&first_ms=&gap_ms=&stall_ms=&stall_p=)
 * over the configuration's defaults into w, the stall draws seeded from the server's generator.
 * false on a bad value (the caller answers 400). */
bool serve_stream_plan(struct serve_handle *s, const struct http_request *r, struct work *w);
/* The first event's wait is over (the slot is held): write the head and the first event, then
 * each next one from a timer; the last ends in serve_work_end. A client gone ends it early. */
void serve_stream_begin(struct serve_handle *s, struct work *w);

#endif
