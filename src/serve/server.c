/* The knee serve event loop: accept, parse, and answer on one thread per server; every
 * simulated wait (slot queue, report lock, work, dependencies, acquire timeout) is a timer
 * on the loop, so a thousand waiting requests cost a thousand timers, not threads.
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
 * while its request waits is dropped from the queue (cancelled); one that disconnects
 * while the work runs leaves the work running, as a real server would, and its response
 * counts as a write failure. While a request is in flight the connection is still read
 * (up to the input buffer), so a departure is seen at once. */
#include "serve/serve.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/rng.h"
#include "http/request.h"
#include "http/server_response.h"
#include "serve/cpu.h"
#include "serve/listen.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONN_IN_CAP 4096  /* unparsed bytes after the request in progress */
#define CONN_OUT_CAP 4096 /* responses not yet written */
#define RESP_MAX 1024     /* the largest single response this server formats */
#define MAX_CUTS 64       /* write boundaries kept for --nagle (two per response) */
#define LISTEN_BACKLOG 4096
#define ACCEPT_BATCH 64
#define MAX_FANOUT 1000

enum phase { PH_NONE, PH_WAIT_SLOT, PH_WAIT_LOCK, PH_WORK, PH_CPU, PH_DEPS };

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
    uint64_t nreq;
    bool busy;    /* a work request is in flight; parsing is paused */
    bool closing; /* close once the output is written */
    bool dead;    /* socket closed; the struct lives until the work in flight ends */
    bool peer_eof;
    bool parsing; /* inside process_input(): a request finishing at once must not re-enter it */
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
        connections_total, conn_refused, pauses;
    _Atomic int64_t active, waiting;
};

struct serve_handle {
    struct serve_config cfg;
    struct loop loop;
    pthread_t thread;
    bool thread_started;
    int listen_fd;
    struct loop_io listen_io;
    char bound[SERVE_ADDR_MAX];
    int port;
    struct rng rng;

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

    char date[HTTP_DATE_LEN + 1];
    struct loop_timer date_timer;
    /* The null target's responses, prebuilt: keep-alive and close variants. */
    char null_resp[2][256];
    size_t null_len[2], null_head_len[2];

    struct conn *conns; /* every live struct conn (open or dead) */
    struct conn *free_conns;
    uint64_t nconn_structs;

    struct counters c;
    uint64_t start_ns;
    _Atomic uint64_t stop_ns;
    _Atomic bool stop_requested;
    bool draining;
    struct loop_timer drain_timer;
    bool drain_expired;
};

static const char null_body[] = "ok";

/* ---- counters ---------------------------------------------------------------------- */

/* One writer (the loop thread): a relaxed load and store is enough and compiles to a
 * plain increment, which matters on the null target's path. */
static inline void inc(_Atomic uint64_t *v)
{
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + 1, memory_order_relaxed);
}

static inline void dec(_Atomic uint64_t *v)
{
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) - 1, memory_order_relaxed);
}

static inline void gauge_add(_Atomic int64_t *g, int64_t d)
{
    atomic_fetch_add_explicit(g, d, memory_order_relaxed);
}

static inline uint64_t get(const _Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

/* ---- output ------------------------------------------------------------------------ */

static void out_compact(struct conn *c)
{
    if (c->out_start == 0)
        return;
    size_t n = c->out_end - c->out_start;
    memmove(c->out, c->out + c->out_start, n);
    for (unsigned i = c->cut0; i < c->ncuts; i++)
        c->cuts[i] -= c->out_start;
    c->out_start = 0;
    c->out_end = n;
}

static size_t out_room(struct conn *c)
{
    if (CONN_OUT_CAP - c->out_end < RESP_MAX)
        out_compact(c);
    return CONN_OUT_CAP - c->out_end;
}

/* With --nagle, a response's head and body must leave in separate send() calls: remember
 * where each write has to stop. Without room for a cut, the bytes merge into one write. */
static void out_cut(struct conn *c)
{
    if (!c->srv->cfg.nagle)
        return;
    if (c->ncuts == MAX_CUTS && c->cut0 > 0) {
        memmove(c->cuts, c->cuts + c->cut0, (c->ncuts - c->cut0) * sizeof *c->cuts);
        c->ncuts -= c->cut0;
        c->cut0 = 0;
    }
    if (c->ncuts < MAX_CUTS)
        c->cuts[c->ncuts++] = c->out_end;
}

static void out_append(struct conn *c, const char *p, size_t n)
{
    memcpy(c->out + c->out_end, p, n);
    c->out_end += n;
}

/* Append a response with a JSON (or text) body; head_only leaves the body out (HEAD). */
static void out_response(struct conn *c, int status, const char *ctype, const char *body, size_t body_len,
                         const char *extra, bool close, bool head_only)
{
    size_t room = out_room(c);
    size_t n = http_response_head(c->out + c->out_end, room, status, c->srv->date, ctype, body_len, extra, close);
    if (n == 0 || n + body_len > room) {
        /* Cannot happen with RESP_MAX reserved before each request; fail loudly in tests. */
        c->closing = true;
        return;
    }
    c->out_end += n;
    out_cut(c);
    if (!head_only && body_len) {
        out_append(c, body, body_len);
        out_cut(c);
    }
}

/* ---- connection lifecycle ------------------------------------------------------------ */

static void conn_free(struct conn *c)
{
    struct serve_handle *s = c->srv;
    loop_timer_cancel(&s->loop, &c->timer);
    loop_timer_cancel(&s->loop, &c->w.timer);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconn_structs--;
    c->next = s->free_conns;
    s->free_conns = c;
}

static void release_slot(struct serve_handle *s);

static void workq_push(struct workq *q, struct work *w)
{
    w->next = NULL;
    w->prev = q->tail;
    if (q->tail)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
}

static void workq_remove(struct workq *q, struct work *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        q->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        q->tail = w->prev;
    w->prev = w->next = NULL;
}

/* Close the socket. A request waiting for a slot or the lock is dropped; work already
 * running keeps the struct alive until it ends (see the top of the file). */
static void conn_close(struct conn *c)
{
    struct serve_handle *s = c->srv;
    if (!c->dead) {
        loop_io_del(&s->loop, &c->io);
        close(c->io.fd);
        c->io.fd = -1;
        c->dead = true;
        dec(&s->c.connections);
    }
    struct work *w = &c->w;
    switch (w->phase) {
    case PH_WAIT_SLOT:
    case PH_WAIT_LOCK:
        loop_timer_cancel(&s->loop, &w->timer);
        workq_remove(w->phase == PH_WAIT_SLOT ? &s->slotq : &s->lockq, w);
        gauge_add(&s->c.waiting, -1);
        inc(&s->c.cancelled);
        w->phase = PH_NONE;
        if (w->holds_slot) {
            w->holds_slot = false;
            release_slot(s);
        }
        break;
    case PH_WORK:
    case PH_CPU:
    case PH_DEPS:
        return; /* freed when the work ends */
    case PH_NONE:
        break;
    }
    conn_free(c);
}

/* Write what is pending. Returns false when the connection was closed (c may be freed). */
static bool conn_flush(struct conn *c)
{
    while (c->out_start < c->out_end) {
        size_t end = c->out_end;
        while (c->cut0 < c->ncuts && c->cuts[c->cut0] <= c->out_start)
            c->cut0++;
        if (c->cut0 < c->ncuts && c->cuts[c->cut0] < end)
            end = c->cuts[c->cut0];
        ssize_t n = send(c->io.fd, c->out + c->out_start, end - c->out_start, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_start += (size_t)n;
            c->idle_since_ns = c->srv->loop.now_ns;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n < 0 && errno == EINTR)
            continue;
        inc(&c->srv->c.write_failures);
        conn_close(c);
        return false;
    }
    c->out_start = c->out_end = 0;
    c->ncuts = c->cut0 = 0;
    return true;
}

static uint64_t conn_deadline(const struct conn *c)
{
    const struct serve_config *cfg = &c->srv->cfg;
    if (c->dead || c->busy)
        return UINT64_MAX; /* the server is the slow party: no timeout */
    if (c->partial_since_ns)
        return c->partial_since_ns + cfg->header_timeout_ns;
    if (c->nreq == 0)
        return c->accepted_ns + cfg->header_timeout_ns;
    return c->idle_since_ns + cfg->idle_timeout_ns;
}

/* Arm only when the deadline moved earlier: on the hot path (a whole request per read,
 * answered at once) the deadline only moves later, and the timer re-arms itself when it
 * fires early. So keep-alive traffic does no timer-heap work per request. */
static void conn_arm_timer(struct conn *c)
{
    uint64_t d = conn_deadline(c);
    if (d == UINT64_MAX)
        return;
    if (!loop_timer_armed(&c->timer) || c->timer.deadline_ns > d)
        loop_timer_arm(&c->srv->loop, &c->timer, d);
}

static void conn_update_events(struct conn *c)
{
    if (c->dead)
        return;
    uint32_t ev = 0;
    bool can_read = !c->peer_eof && !c->closing && c->in_end < CONN_IN_CAP;
    if (can_read)
        ev |= EPOLLIN;
    if (c->out_start < c->out_end)
        ev |= EPOLLOUT;
    loop_io_mod(&c->srv->loop, &c->io, ev);
}

/* After output or input progress: close when nothing more can happen on this connection. */
static bool conn_settle(struct conn *c)
{
    if (c->dead)
        return false;
    bool idle = !c->busy && c->out_start == c->out_end;
    if (idle && (c->closing || c->peer_eof)) {
        conn_close(c);
        return false;
    }
    conn_update_events(c);
    conn_arm_timer(c);
    return true;
}

/* ---- responses ----------------------------------------------------------------------- */

static void respond_error(struct conn *c, int status, const char *reason)
{
    char body[96];
    int n = snprintf(body, sizeof body, "{\"ok\":false,\"reason\":\"%s\"}\n", reason);
    out_response(c, status, "application/json", body, (size_t)n, NULL, true, false);
    c->closing = true;
}

static void respond_stats(struct conn *c, bool close, bool head_only)
{
    struct serve_counters sc;
    serve_counters(c->srv, &sc);
    char body[640];
    size_t n = serve_counters_json(&sc, c->srv->cfg.preset, body, sizeof body - 1);
    body[n++] = '\n';
    out_response(c, 200, "application/json", body, n, NULL, close, head_only);
}

static void respond_null(struct conn *c, bool close, bool head_only)
{
    struct serve_handle *s = c->srv;
    int v = close ? 1 : 0;
    out_room(c);
    if (s->cfg.nagle || head_only) {
        out_append(c, s->null_resp[v], s->null_head_len[v]);
        out_cut(c);
        if (!head_only) {
            out_append(c, s->null_resp[v] + s->null_head_len[v], s->null_len[v] - s->null_head_len[v]);
            out_cut(c);
        }
    } else {
        out_append(c, s->null_resp[v], s->null_len[v]);
    }
}

static double ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

static void respond_work(struct conn *c)
{
    struct serve_handle *s = c->srv;
    struct work *w = &c->w;
    char body[256], timing[160];
    int n = snprintf(body, sizeof body, "{\"ok\":true,\"work_ms\":%.3f", ms(w->work_ns));
    if (!s->cfg.cpu_ns && s->cfg.miss_rate > 0)
        n += snprintf(body + n, sizeof body - (size_t)n, ",\"miss\":%s", w->miss ? "true" : "false");
    if (w->fanout)
        n += snprintf(body + n, sizeof body - (size_t)n, ",\"fanout\":%u,\"slow_deps\":%u,\"deps_ms\":%.3f", w->fanout,
                      w->slow_deps, ms(w->deps_ns));
    n += snprintf(body + n, sizeof body - (size_t)n, "}\n");
    int t = snprintf(timing, sizeof timing, "Server-Timing: queue;dur=%.3f, work;dur=%.3f",
                     ms(w->start_ns - w->entry_ns), ms(w->end_ns - w->start_ns));
    if (s->cfg.pause_every_ns)
        t += snprintf(timing + t, sizeof timing - (size_t)t, ", lock;dur=%.3f", ms(w->start_ns - w->slot_ns));
    snprintf(timing + t, sizeof timing - (size_t)t, "\r\n");
    out_response(c, 200, "application/json", body, (size_t)n, timing, !w->keep_alive, w->head_only);
}

static void respond_rejected(struct conn *c)
{
    struct work *w = &c->w;
    char body[128], timing[64];
    uint64_t waited = c->srv->loop.now_ns - w->entry_ns;
    int n = snprintf(body, sizeof body, "{\"ok\":false,\"reason\":\"QUEUE_TIMEOUT\",\"queue_ms\":%.3f}\n", ms(waited));
    snprintf(timing, sizeof timing, "Server-Timing: queue;dur=%.3f\r\n", ms(waited));
    out_response(c, 503, "application/json", body, (size_t)n, timing, !w->keep_alive, w->head_only);
}

/* ---- the request pipeline --------------------------------------------------------------- */

static bool process_input(struct conn *c);

/* The request in flight has its response in the output buffer: go on with the bytes that
 * followed it (pipelining), write, and settle the connection. When the request ended
 * inside process_input() (no wait at all), that loop goes on by itself. */
static void request_done(struct conn *c)
{
    struct work *w = &c->w;
    w->phase = PH_NONE;
    c->busy = false;
    if (c->dead) {
        inc(&c->srv->c.write_failures);
        conn_free(c);
        return;
    }
    if (!w->keep_alive)
        c->closing = true;
    c->idle_since_ns = c->srv->loop.now_ns;
    if (c->parsing)
        return;
    http_request_next(&c->parser);
    if (process_input(c) && conn_flush(c))
        conn_settle(c);
}

static void finish(struct serve_handle *s, struct work *w)
{
    w->end_ns = clock_now_ns();
    gauge_add(&s->c.active, -1);
    inc(&s->c.executed);
    if (w->holds_slot) {
        w->holds_slot = false;
        release_slot(s);
    }
    if (!w->conn->dead) {
        inc(&s->c.ok);
        respond_work(w->conn);
    }
    request_done(w->conn);
}

static void on_deps_done(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct work *w = t->data;
    finish(w->conn->srv, w);
}

static void work_done(struct serve_handle *s, struct work *w)
{
    if (w->deps_ns > 0) {
        w->phase = PH_DEPS;
        w->timer.cb = on_deps_done;
        loop_timer_arm(&s->loop, &w->timer, clock_now_ns() + w->deps_ns);
        return;
    }
    finish(s, w);
}

static void on_work_timer(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct work *w = t->data;
    work_done(w->conn->srv, w);
}

static void begin_work(struct serve_handle *s, struct work *w)
{
    w->start_ns = clock_now_ns();
    if (s->cfg.cpu_ns && w->work_ns > 0) {
        /* Waiting for a CPU worker still counts as waiting; the worker moves the gauge. */
        w->phase = PH_CPU;
        gauge_add(&s->c.waiting, 1);
        w->job.cpu_ns = w->work_ns;
        w->job.data = w;
        cpu_pool_submit(&s->cpu, &w->job);
        return;
    }
    gauge_add(&s->c.active, 1);
    if (w->work_ns > 0) {
        w->phase = PH_WORK;
        w->timer.cb = on_work_timer;
        loop_timer_arm(&s->loop, &w->timer, w->start_ns + w->work_ns);
        return;
    }
    w->phase = PH_WORK;
    work_done(s, w);
}

static void after_slot(struct serve_handle *s, struct work *w)
{
    w->slot_ns = clock_now_ns();
    if (s->paused) {
        w->phase = PH_WAIT_LOCK;
        gauge_add(&s->c.waiting, 1);
        workq_push(&s->lockq, w);
        return;
    }
    begin_work(s, w);
}

/* Hand freed slots to waiters in FIFO order. A waiter's work may end at once (0 ms) and
 * release again; the `granting` guard turns that recursion into this loop. */
static void release_slot(struct serve_handle *s)
{
    s->slots_free++;
    if (s->granting)
        return;
    s->granting = true;
    while (s->slots_free > 0 && s->slotq.head) {
        struct work *w = s->slotq.head;
        workq_remove(&s->slotq, w);
        s->slots_free--;
        loop_timer_cancel(&s->loop, &w->timer);
        gauge_add(&s->c.waiting, -1);
        w->holds_slot = true;
        after_slot(s, w);
    }
    s->granting = false;
}

static void on_acquire_timeout(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct work *w = t->data;
    struct serve_handle *s = w->conn->srv;
    workq_remove(&s->slotq, w);
    gauge_add(&s->c.waiting, -1);
    inc(&s->c.rejected);
    respond_rejected(w->conn);
    request_done(w->conn);
}

static void acquire_slot(struct serve_handle *s, struct work *w)
{
    if (s->slots_free > 0 && !s->slotq.head) {
        s->slots_free--;
        w->holds_slot = true;
        after_slot(s, w);
        return;
    }
    w->phase = PH_WAIT_SLOT;
    gauge_add(&s->c.waiting, 1);
    workq_push(&s->slotq, w);
    if (s->cfg.acquire_timeout_ns) {
        w->timer.cb = on_acquire_timeout;
        loop_timer_arm(&s->loop, &w->timer, w->entry_ns + s->cfg.acquire_timeout_ns);
    }
}

/* Draw everything random for this request at entry, in arrival order, so a seed fixes
 * the whole sequence whatever the timing. Returns false (after a 400) on a bad parameter. */
static bool plan_work(struct conn *c, struct work *w)
{
    struct serve_handle *s = c->srv;
    const struct serve_config *cfg = &s->cfg;
    const struct http_request *r = &c->parser.req;
    double v;
    int rc = http_request_query_double(r, "ms", ms(cfg->max_work_ns), &v);
    if (rc == 0) {
        w->work_ns = (uint64_t)llround(v * 1e6);
        w->miss = false;
    } else if (rc != KNEE_ENOTFOUND) {
        return false;
    } else if (cfg->cpu_ns) {
        w->work_ns = cfg->cpu_ns;
        w->miss = false;
    } else {
        w->miss = cfg->miss_rate > 0 && rng_bernoulli(&s->rng, cfg->miss_rate);
        w->work_ns = w->miss ? cfg->miss_ns : cfg->hit_ns;
    }
    w->fanout = cfg->fanout;
    rc = http_request_query_double(r, "fanout", MAX_FANOUT, &v);
    if (rc == 0) {
        if (v != floor(v))
            return false;
        w->fanout = (unsigned)v;
    } else if (rc != KNEE_ENOTFOUND) {
        return false;
    }
    w->slow_deps = 0;
    w->deps_ns = 0;
    for (unsigned i = 0; i < w->fanout; i++) {
        bool slow = cfg->dep_slow_prob > 0 && rng_bernoulli(&s->rng, cfg->dep_slow_prob);
        uint64_t d = slow ? cfg->dep_slow_ns : cfg->dep_ns;
        w->slow_deps += slow;
        if (d > w->deps_ns)
            w->deps_ns = d;
    }
    return true;
}

/* One complete request is in c->parser.req. Answers at once, or starts work (c->busy). */
static void handle_request(struct conn *c)
{
    struct serve_handle *s = c->srv;
    const struct http_request *r = &c->parser.req;
    inc(&s->c.requests);
    c->nreq++;
    c->partial_since_ns = 0;
    bool keep = r->keep_alive && !r->upgrade && !s->draining && !c->peer_eof;
    bool head_only = r->method == HTTP_HEAD;
    if (!keep)
        c->closing = true;
    if (http_request_path_is(r, "/health")) {
        static const char up[] = "{\"status\":\"UP\"}\n";
        out_response(c, 200, "application/json", up, sizeof up - 1, NULL, !keep, head_only);
        return;
    }
    if (http_request_path_is(r, "/stats")) {
        respond_stats(c, !keep, head_only);
        return;
    }
    if (s->cfg.null_response) {
        inc(&s->c.executed);
        inc(&s->c.ok);
        respond_null(c, !keep, head_only);
        return;
    }
    struct work *w = &c->w;
    w->keep_alive = keep;
    w->head_only = head_only;
    w->entry_ns = clock_now_ns();
    w->slot_ns = w->start_ns = w->end_ns = w->entry_ns;
    w->holds_slot = false;
    if (!plan_work(c, w)) {
        inc(&s->c.bad_requests);
        static const char bad[] = "{\"ok\":false,\"reason\":\"BAD_PARAMETER\"}\n";
        out_response(c, 400, "application/json", bad, sizeof bad - 1, NULL, !keep, head_only);
        return;
    }
    c->busy = true;
    if (s->cfg.pool)
        acquire_slot(s, w);
    else
        after_slot(s, w);
}

/* Parse and answer requests from the input buffer until it is empty, a request goes to
 * work, the connection is closing, or the output buffer needs writing first. Returns false
 * when the connection was closed (c must not be used). */
static bool process_input(struct conn *c)
{
    struct serve_handle *s = c->srv;
    while (!c->busy && !c->closing && c->in_start < c->in_end) {
        if (out_room(c) < RESP_MAX) {
            if (!conn_flush(c))
                return false;
            if (out_room(c) < RESP_MAX)
                break; /* EPOLLOUT resumes us */
        }
        enum http_request_state st;
        size_t n = http_request_parse(&c->parser, c->in + c->in_start, c->in_end - c->in_start, &st);
        c->in_start += n;
        if (st == HTTP_REQUEST_MORE)
            break;
        if (st == HTTP_REQUEST_ERROR) {
            int status = c->parser.error_status;
            inc(&s->c.bad_requests);
            respond_error(c, status,
                          status == 431   ? "HEADERS_TOO_LARGE"
                          : status == 414 ? "URI_TOO_LONG"
                          : status == 413 ? "BODY_TOO_LARGE"
                                          : "BAD_REQUEST");
            c->in_start = c->in_end; /* the stream position is lost: nothing more is read */
            break;
        }
        c->parsing = true;
        handle_request(c);
        c->parsing = false;
        if (!c->busy)
            http_request_next(&c->parser);
    }
    if (c->in_start == c->in_end)
        c->in_start = c->in_end = 0;
    if (!c->busy && !c->partial_since_ns && http_request_partial(&c->parser))
        c->partial_since_ns = s->loop.now_ns;
    return true;
}

/* One recv() per readiness event (level-triggered: more data means another event), then
 * parse. Returns false when the connection was closed. */
static bool conn_read(struct conn *c)
{
    if (c->in_end == CONN_IN_CAP && c->in_start > 0) {
        memmove(c->in, c->in + c->in_start, c->in_end - c->in_start);
        c->in_end -= c->in_start;
        c->in_start = 0;
    }
    if (c->in_end == CONN_IN_CAP)
        return true;
    ssize_t n = recv(c->io.fd, c->in + c->in_end, CONN_IN_CAP - c->in_end, 0);
    if (n > 0) {
        c->in_end += (size_t)n;
    } else if (n == 0) {
        c->peer_eof = true;
        /* EOF with a request in flight: the client gave up (a half-closing client is
         * treated the same; HTTP/1.1 clients do not half-close while waiting). */
        if (c->busy) {
            conn_close(c);
            return false;
        }
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        conn_close(c);
        return false;
    }
    return c->busy || process_input(c);
}

static void on_conn_io(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    struct conn *c = io->data;
    if (events & EPOLLERR) {
        conn_close(c);
        return;
    }
    if (events & EPOLLOUT) {
        if (!conn_flush(c))
            return;
        if (!c->busy && !process_input(c))
            return;
    }
    if (events & (EPOLLIN | EPOLLHUP)) {
        if (!conn_read(c))
            return;
        if ((events & EPOLLHUP) && !(events & EPOLLIN)) {
            conn_close(c);
            return;
        }
    }
    if (!conn_flush(c))
        return;
    conn_settle(c);
}

static void on_conn_timer(struct loop *loop, struct loop_timer *t)
{
    struct conn *c = t->data;
    uint64_t d = conn_deadline(c);
    if (d == UINT64_MAX)
        return;
    if (loop->now_ns < d) {
        loop_timer_arm(loop, t, d);
        return;
    }
    if (c->partial_since_ns || c->nreq == 0) {
        inc(&c->srv->c.timeouts);
        if (c->partial_since_ns && out_room(c) >= RESP_MAX) {
            respond_error(c, 408, "HEADER_TIMEOUT");
            if (!conn_flush(c)) /* best effort: the client is slow by definition */
                return;
        }
    }
    conn_close(c);
}

/* ---- accepting ----------------------------------------------------------------------- */

static struct conn *conn_get(struct serve_handle *s)
{
    struct conn *c = s->free_conns;
    if (c)
        s->free_conns = c->next;
    else
        c = xmalloc(sizeof *c);
    /* Only the header fields are reset; the buffers are overwritten as they fill. */
    memset(c, 0, offsetof(struct conn, in));
    return c;
}

static void refuse(struct serve_handle *s, int fd)
{
    static const char body[] = "{\"ok\":false,\"reason\":\"CONN_LIMIT\"}\n";
    char buf[RESP_MAX];
    size_t n = http_response_head(buf, sizeof buf - sizeof body, 503, s->date, "application/json", sizeof body - 1,
                                  NULL, true);
    memcpy(buf + n, body, sizeof body - 1);
    ssize_t w = send(fd, buf, n + sizeof body - 1, MSG_NOSIGNAL);
    (void)w;
    close(fd);
    inc(&s->c.conn_refused);
}

static void on_accept(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)events;
    struct serve_handle *s = io->data;
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or EMFILE and friends: try again on the next event */
        if (get(&s->c.connections) >= s->cfg.max_conns) {
            refuse(s, fd);
            continue;
        }
        if (!s->cfg.nagle) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        struct conn *c = conn_get(s);
        c->srv = s;
        c->io.fd = fd;
        c->io.cb = on_conn_io;
        c->io.data = c;
        loop_timer_init(&c->timer, on_conn_timer, c);
        loop_timer_init(&c->w.timer, on_work_timer, &c->w);
        c->w.conn = c;
        http_request_parser_init(&c->parser, s->cfg.max_header_bytes, s->cfg.max_body_bytes);
        c->accepted_ns = c->idle_since_ns = loop->now_ns;
        if (loop_io_add(loop, &c->io, EPOLLIN) < 0) {
            close(fd);
            c->next = s->free_conns;
            s->free_conns = c;
            continue;
        }
        c->next = s->conns;
        if (s->conns)
            s->conns->prev = c;
        s->conns = c;
        s->nconn_structs++;
        inc(&s->c.connections);
        inc(&s->c.connections_total);
        conn_arm_timer(c);
    }
}

/* ---- background timers: the report job, the Date header, CPU completions ---------------- */

static void on_pause_start(struct loop *loop, struct loop_timer *t);

static void on_pause_end(struct loop *loop, struct loop_timer *t)
{
    struct serve_handle *s = t->data;
    s->paused = false;
    if (!s->draining) {
        t->cb = on_pause_start;
        loop_timer_arm(loop, t, s->pause_start_ns + s->cfg.pause_every_ns);
    }
    /* Detach the queue first: begin_work never re-queues (the lock is free now), but a
     * request finishing synchronously may parse a pipelined one that must not see a
     * half-walked list. */
    struct work *w = s->lockq.head;
    s->lockq.head = s->lockq.tail = NULL;
    while (w) {
        struct work *next = w->next;
        w->prev = w->next = NULL;
        gauge_add(&s->c.waiting, -1);
        begin_work(s, w);
        w = next;
    }
}

static void on_pause_start(struct loop *loop, struct loop_timer *t)
{
    struct serve_handle *s = t->data;
    s->paused = true;
    s->pause_start_ns = t->deadline_ns;
    inc(&s->c.pauses);
    t->cb = on_pause_end;
    loop_timer_arm(loop, t, s->pause_start_ns + s->cfg.pause_for_ns);
}

static void build_null(struct serve_handle *s)
{
    for (int v = 0; v < 2; v++) {
        size_t n = http_response_head(s->null_resp[v], sizeof s->null_resp[v] - sizeof null_body, 200, s->date,
                                      "text/plain", sizeof null_body - 1, NULL, v == 1);
        memcpy(s->null_resp[v] + n, null_body, sizeof null_body - 1);
        s->null_head_len[v] = n;
        s->null_len[v] = n + sizeof null_body - 1;
    }
}

static void on_date_timer(struct loop *loop, struct loop_timer *t)
{
    struct serve_handle *s = t->data;
    uint64_t wall = clock_wall_ns();
    http_date_format(wall, s->date);
    build_null(s);
    /* Next tick just after the next whole wall-clock second. */
    loop_timer_arm(loop, t, loop->now_ns + (NS_PER_S - wall % NS_PER_S) + NS_PER_MS);
}

static void on_cpu_started(struct cpu_job *job, void *arg)
{
    (void)job;
    struct serve_handle *s = arg;
    gauge_add(&s->c.waiting, -1);
    gauge_add(&s->c.active, 1);
}

static void on_cpu_done(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    (void)events;
    struct serve_handle *s = io->data;
    struct cpu_job *j = cpu_pool_take_done(&s->cpu);
    while (j) {
        struct cpu_job *next = j->next;
        struct work *w = j->data;
        w->start_ns = j->start_ns; /* processing began when a worker took it */
        work_done(s, w);
        j = next;
    }
}

/* ---- the server thread ----------------------------------------------------------------- */

static void begin_drain(struct serve_handle *s)
{
    s->draining = true;
    if (s->listen_fd >= 0) {
        loop_io_del(&s->loop, &s->listen_io);
        close(s->listen_fd);
        s->listen_fd = -1;
    }
    if (s->pause_timer.cb == on_pause_start)
        loop_timer_cancel(&s->loop, &s->pause_timer);
    loop_timer_arm(&s->loop, &s->drain_timer, clock_now_ns() + s->cfg.grace_ns);
    struct conn *c = s->conns;
    while (c) {
        struct conn *next = c->next;
        if (c->busy) {
            c->w.keep_alive = false; /* answer with Connection: close */
        } else if (!c->dead) {
            c->closing = true;
            if (conn_flush(c))
                conn_settle(c);
        }
        c = next;
    }
}

static void on_drain_timer(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct serve_handle *s = t->data;
    s->drain_expired = true;
}

static void *server_main(void *arg)
{
    struct serve_handle *s = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        int r = loop_run_once(&s->loop, UINT64_MAX);
        if (r < 0)
            break;
        if (!s->draining && atomic_load(&s->stop_requested))
            begin_drain(s);
        if (s->draining && (s->nconn_structs == 0 || s->drain_expired))
            break;
    }
    atomic_store(&s->stop_ns, clock_now_ns());
    /* Workers first: a job in their hands points into a connection. */
    if (s->have_cpu) {
        loop_io_del(&s->loop, &s->cpu_io);
        cpu_pool_release(&s->cpu);
        s->have_cpu = false;
    }
    while (s->conns) {
        struct conn *c = s->conns;
        if (!c->dead) {
            close(c->io.fd);
            c->dead = true;
            dec(&s->c.connections);
        }
        c->w.phase = PH_NONE;
        conn_free(c);
    }
    if (s->listen_fd >= 0) {
        close(s->listen_fd);
        s->listen_fd = -1;
    }
    return NULL;
}

/* ---- public API ------------------------------------------------------------------------ */

int serve_start(const struct serve_config *cfg, struct serve_handle **out)
{
    char err[160];
    if (serve_config_check(cfg, err, sizeof err))
        return KNEE_EINVAL;
    struct serve_handle *s = xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    if (!s->cfg.preset[0])
        snprintf(s->cfg.preset, sizeof s->cfg.preset, "custom");
    s->listen_fd = -1;
    int r = loop_init(&s->loop);
    if (r) {
        free(s);
        return r;
    }
    int fd = listen_open(cfg->listen, LISTEN_BACKLOG, s->bound, sizeof s->bound, &s->port);
    if (fd < 0) {
        loop_release(&s->loop);
        free(s);
        return fd;
    }
    s->listen_fd = fd;
    s->listen_io.fd = fd;
    s->listen_io.cb = on_accept;
    s->listen_io.data = s;
    loop_io_add(&s->loop, &s->listen_io, EPOLLIN);

    rng_seed(&s->rng, cfg->seed);
    s->slots_free = cfg->pool;
    s->start_ns = clock_now_ns();
    s->loop.now_ns = s->start_ns;
    loop_timer_init(&s->date_timer, on_date_timer, s);
    on_date_timer(&s->loop, &s->date_timer);
    loop_timer_init(&s->pause_timer, on_pause_start, s);
    if (cfg->pause_every_ns)
        loop_timer_arm(&s->loop, &s->pause_timer, s->start_ns + cfg->pause_every_ns);
    loop_timer_init(&s->drain_timer, on_drain_timer, s);

    if (cfg->cpu_ns) {
        r = cpu_pool_init(&s->cpu, cfg->workers, on_cpu_started, s);
        if (r)
            goto fail;
        s->have_cpu = true;
        s->cpu_io.fd = s->cpu.eventfd;
        s->cpu_io.cb = on_cpu_done;
        s->cpu_io.data = s;
        loop_io_add(&s->loop, &s->cpu_io, EPOLLIN);
    }
    r = pthread_create(&s->thread, NULL, server_main, s);
    if (r) {
        r = -r;
        goto fail;
    }
    s->thread_started = true;
    *out = s;
    return 0;
fail:
    if (s->have_cpu)
        cpu_pool_release(&s->cpu);
    close(s->listen_fd);
    loop_release(&s->loop);
    free(s);
    return r;
}

int serve_port(const struct serve_handle *h)
{
    return h->port;
}

const char *serve_address(const struct serve_handle *h)
{
    return h->bound;
}

const struct serve_config *serve_config_of(const struct serve_handle *h)
{
    return &h->cfg;
}

void serve_counters(const struct serve_handle *h, struct serve_counters *o)
{
    const struct counters *c = &h->c;
    int64_t active = atomic_load_explicit(&c->active, memory_order_relaxed);
    int64_t waiting = atomic_load_explicit(&c->waiting, memory_order_relaxed);
    o->active = active > 0 ? (uint64_t)active : 0;
    o->waiting = waiting > 0 ? (uint64_t)waiting : 0;
    o->executed = get(&c->executed);
    o->ok = get(&c->ok);
    o->rejected = get(&c->rejected);
    o->cancelled = get(&c->cancelled);
    o->write_failures = get(&c->write_failures);
    o->requests = get(&c->requests);
    o->bad_requests = get(&c->bad_requests);
    o->timeouts = get(&c->timeouts);
    o->connections = get(&c->connections);
    o->connections_total = get(&c->connections_total);
    o->conn_refused = get(&c->conn_refused);
    o->pauses = get(&c->pauses);
    uint64_t end = atomic_load(&h->stop_ns);
    o->uptime_s = (double)((end ? end : clock_now_ns()) - h->start_ns) / 1e9;
}

size_t serve_counters_json(const struct serve_counters *c, const char *preset, char *buf, size_t cap)
{
    int n =
        snprintf(buf, cap,
                 "{\"preset\":\"%s\",\"active\":%llu,\"waiting\":%llu,\"executed\":%llu,\"ok\":%llu,"
                 "\"rejected\":%llu,\"cancelled\":%llu,\"write_failures\":%llu,\"requests\":%llu,"
                 "\"bad_requests\":%llu,\"timeouts\":%llu,\"connections\":%llu,\"connections_total\":%llu,"
                 "\"conn_refused\":%llu,\"pauses\":%llu,\"uptime_s\":%.3f}",
                 preset ? preset : "", (unsigned long long)c->active, (unsigned long long)c->waiting,
                 (unsigned long long)c->executed, (unsigned long long)c->ok, (unsigned long long)c->rejected,
                 (unsigned long long)c->cancelled, (unsigned long long)c->write_failures,
                 (unsigned long long)c->requests, (unsigned long long)c->bad_requests, (unsigned long long)c->timeouts,
                 (unsigned long long)c->connections, (unsigned long long)c->connections_total,
                 (unsigned long long)c->conn_refused, (unsigned long long)c->pauses, c->uptime_s);
    if (n < 0 || (size_t)n >= cap)
        return 0;
    return (size_t)n;
}

void serve_shutdown(struct serve_handle *h)
{
    atomic_store(&h->stop_requested, true);
    loop_wake(&h->loop);
}

void serve_stop(struct serve_handle *h, struct serve_counters *final)
{
    if (!h)
        return;
    serve_shutdown(h);
    if (h->thread_started)
        pthread_join(h->thread, NULL);
    if (final)
        serve_counters(h, final);
    while (h->free_conns) {
        struct conn *c = h->free_conns;
        h->free_conns = c->next;
        free(c);
    }
    loop_release(&h->loop);
    free(h);
}
