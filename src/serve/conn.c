/* knee serve's connections and parsing: accept, read, parse one request at a time, answer
 * at once (/health, /stats, the null target, a bad request) or hand a work request to the
 * pipeline (work.c), write the responses (with --nagle, head and body in separate writes),
 * and close on EOF, error, or the header-read and idle timeouts; after a response, with a
 * lingering close. A connection's life and a request's are described in serve/internal.h.
 * With --tls every byte goes through the connection's TLS (after a handshake bounded by the
 * header timeout); with --h2, a connection that chose HTTP/2 (ALPN, or the h2c preface) is
 * handed to h2.c, whose streams come back here as socket-less connections to be answered. */
#include "serve/internal.h"

#include "core/clock.h"
#include "core/err.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- output ----------------------------------------------------------------------------- */

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
    if (c->h3_parent) { /* an HTTP/3 stream */
        serve_h3_respond(c, status, ctype, body, body_len, extra, head_only);
        return;
    }
    char extra_alt[256]; /* with --h3, the TCP side's answers advertise it (Alt-Svc) */
    if (c->srv->alt_svc[0]) {
        snprintf(extra_alt, sizeof extra_alt, "%s%s", extra ? extra : "", c->srv->alt_svc);
        extra = extra_alt;
    }
    if (c->h2_id) { /* an HTTP/2 stream: the same answer as frames */
        serve_h2_respond(c, status, ctype, body, body_len, extra, head_only);
        return;
    }
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

bool serve_conn_out_write(struct conn *c, const char *p, size_t n)
{
    if (out_room(c) < n)
        return false;
    out_append(c, p, n);
    return true;
}

/* ---- connection lifecycle --------------------------------------------------------------- */

void serve_conn_free(struct conn *c)
{
    struct serve_handle *s = c->srv;
    loop_timer_cancel(&s->loop, &c->timer);
    loop_timer_cancel(&s->loop, &c->w.timer);
    tls_conn_release(&c->tls);
    if (c->h3_parent) { /* an HTTP/3 stream */
        serve_h3_stream_free(c);
        c->next = s->free_conns;
        s->free_conns = c;
        return;
    }
    if (c->h2_id) { /* a stream: in its connection's list, not the server's */
        serve_h2_stream_free(c);
        c->next = s->free_conns;
        s->free_conns = c;
        return;
    }
    if (c->h2)
        serve_h2_release(c);
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

/* Close the socket. A request waiting for a slot or the lock is dropped; work already
 * running keeps the struct alive until it ends (serve/internal.h). */
static void conn_close(struct conn *c)
{
    struct serve_handle *s = c->srv;
    if (c->h2)
        serve_h2_close(c);
    if (!c->dead) {
        loop_io_del(&s->loop, &c->io);
        close(c->io.fd);
        c->io.fd = -1;
        c->dead = true;
        if (c->refused)
            s->refused_lingering--;
        else
            counter_dec(&s->c.connections);
    }
    if (c->h2 && serve_h2_streams(c))
        return; /* freed with its last stream (work in flight: serve/internal.h) */
    switch (c->w.phase) {
    case PH_WAIT_SLOT:
    case PH_WAIT_LOCK:
        serve_work_cancel(s, &c->w);
        break;
    case PH_WORK:
    case PH_CPU:
    case PH_DEPS:
    case PH_STREAM:
        return; /* freed when the work ends */
    case PH_NONE:
        break;
    }
    serve_conn_free(c);
}

void serve_conn_close(struct conn *c)
{
    conn_close(c);
}

/* ---- bytes through TLS or not ----------------------------------------------------------- */

ssize_t serve_conn_recv(struct conn *c, void *buf, size_t len)
{
    if (!c->tls.ssl)
        return recv(c->io.fd, buf, len, 0);
    size_t got;
    switch (tls_conn_read(&c->tls, buf, len, &got)) {
    case TLS_IO_OK:
        return (ssize_t)got;
    case TLS_IO_EOF:
        return 0;
    case TLS_IO_WANT_READ:
    case TLS_IO_WANT_WRITE: /* a key update's answer waits for the next write */
        errno = EAGAIN;
        return -1;
    case TLS_IO_ERROR:
        break;
    }
    errno = c->tls.reason == TLS_R_SOCKET && c->tls.sys_errno ? c->tls.sys_errno : ECONNRESET;
    return -1;
}

ssize_t serve_conn_send(struct conn *c, const void *buf, size_t len)
{
    if (!c->tls.ssl)
        return send(c->io.fd, buf, len, MSG_NOSIGNAL);
    size_t put;
    switch (tls_conn_write(&c->tls, buf, len, &put)) {
    case TLS_IO_OK:
        return (ssize_t)put;
    case TLS_IO_WANT_READ:
    case TLS_IO_WANT_WRITE:
        errno = EAGAIN;
        return -1;
    case TLS_IO_EOF:
    case TLS_IO_ERROR:
        break;
    }
    errno = c->tls.reason == TLS_R_SOCKET && c->tls.sys_errno ? c->tls.sys_errno : ECONNRESET;
    return -1;
}

/* Write what is pending. Returns false when the connection was closed (c may be freed). */
bool serve_conn_flush(struct conn *c)
{
    if (c->h2)
        return serve_h2_flush(c);
    while (c->out_start < c->out_end) {
        size_t end = c->out_end;
        while (c->cut0 < c->ncuts && c->cuts[c->cut0] <= c->out_start)
            c->cut0++;
        if (c->cut0 < c->ncuts && c->cuts[c->cut0] < end)
            end = c->cuts[c->cut0];
        ssize_t n = serve_conn_send(c, c->out + c->out_start, end - c->out_start);
        if (n > 0) {
            c->out_start += (size_t)n;
            c->idle_since_ns = c->srv->loop.now_ns;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n < 0 && errno == EINTR)
            continue;
        counter_inc(&c->srv->c.write_failures);
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
    if (c->lingering) {
        uint64_t total = c->linger_start_ns + LINGER_TIME_NS, idle = c->linger_input_ns + LINGER_IDLE_NS;
        return total < idle ? total : idle;
    }
    if (c->dead || c->busy)
        return UINT64_MAX; /* the server is the slow party: no timeout */
    if (c->h2)
        return serve_h2_deadline(c);
    if (c->closing) /* a last response the client is slow to take */
        return c->idle_since_ns + LINGER_TIME_NS;
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
    if (c->lingering) {
        loop_io_mod(&c->srv->loop, &c->io, EPOLLIN);
        return;
    }
    uint32_t ev = 0;
    bool can_read = !c->peer_eof && !c->closing && c->in_end < CONN_IN_CAP;
    if (can_read)
        ev |= EPOLLIN;
    if (c->out_start < c->out_end)
        ev |= EPOLLOUT;
    loop_io_mod(&c->srv->loop, &c->io, ev);
}

/* The response is all in the kernel's hands: send FIN after it, and from now on read and
 * discard (serve/internal.h: the lingering close). */
void serve_conn_linger(struct conn *c)
{
    tls_conn_shutdown(&c->tls); /* close_notify first, inside TLS (a no-op without it) */
    shutdown(c->io.fd, SHUT_WR);
    c->lingering = true;
    c->linger_start_ns = c->linger_input_ns = c->srv->loop.now_ns;
    c->linger_bytes = 0;
    c->in_start = c->in_end = 0;
}

static bool tls_read_pending(struct conn *c);

/* After output or input progress: close when nothing more can happen on this connection;
 * after a response, linger first unless the client has already finished sending (EOF). */
bool serve_conn_settle(struct conn *c)
{
    if (c->dead)
        return false;
    if (c->h2_id || c->h3_parent)
        return true; /* a stream: its connection settles */
    if (c->h2)
        return serve_h2_settle(c);
    if (!tls_read_pending(c))
        return false;
    bool idle = !c->busy && c->out_start == c->out_end;
    if (idle && !c->lingering && (c->closing || c->peer_eof)) {
        if (c->peer_eof || !c->linger_after) {
            conn_close(c);
            return false;
        }
        serve_conn_linger(c);
    }
    conn_update_events(c);
    conn_arm_timer(c);
    return true;
}

static bool conn_read(struct conn *c);

/* TLS: bytes OpenSSL has already taken from the socket raise no epoll event, so read them now
 * while there is room for them (a record longer than the input buffer's room, pipelined
 * requests after a long wait). */
static bool tls_read_pending(struct conn *c)
{
    while (c->tls.ssl && c->tls.handshake_done && !c->dead && !c->lingering && !c->busy && !c->closing &&
           !c->peer_eof && c->in_end < CONN_IN_CAP && tls_conn_pending(&c->tls)) {
        size_t before = c->in_end - c->in_start;
        if (!conn_read(c) || !serve_conn_flush(c))
            return false;
        if (c->in_end - c->in_start == before && !c->busy && out_room(c) < RESP_MAX)
            break; /* no progress: the output must drain first (EPOLLOUT resumes) */
    }
    return true;
}

/* Read and discard, up to LINGER_READ_PER_EVENT bytes per readiness event (so one fast
 * sender cannot hold the loop; level-triggered, the rest comes with the next event).
 * Returns false when the connection was closed: EOF (the client has read its answer and
 * closed), an error, or more than LINGER_MAX_BYTES discarded. The time bounds are the
 * connection's timer (conn_deadline). */
static bool linger_read(struct conn *c)
{
    struct serve_handle *s = c->srv;
    size_t got = 0;
    while (got < LINGER_READ_PER_EVENT) {
        ssize_t n = recv(c->io.fd, s->discard, sizeof s->discard, 0);
        if (n > 0) {
            got += (size_t)n;
            c->linger_bytes += (uint64_t)n;
            c->linger_input_ns = s->loop.now_ns;
            if (c->linger_bytes > LINGER_MAX_BYTES)
                break;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        break;
    }
    if (got >= LINGER_READ_PER_EVENT && c->linger_bytes <= LINGER_MAX_BYTES)
        return true;
    conn_close(c);
    return false;
}

/* ---- responses -------------------------------------------------------------------------- */

static const char *parse_error_reason(int status);

static void respond_error(struct conn *c, int status, const char *reason)
{
    char body[96];
    int n = snprintf(body, sizeof body, "{\"ok\":false,\"reason\":\"%s\"}\n", reason);
    out_response(c, status, "application/json", body, (size_t)n, NULL, true, false);
    c->closing = true;
    c->linger_after = true;
}

void serve_conn_refuse_request(struct conn *c, int status)
{
    counter_inc(&c->srv->c.bad_requests);
    respond_error(c, status, parse_error_reason(status));
}

void serve_conn_respond_timeout(struct conn *c)
{
    respond_error(c, 408, "HEADER_TIMEOUT");
}

/* The reason in the body of a response to a request the parser refused. */
static const char *parse_error_reason(int status)
{
    switch (status) {
    case 413:
        return "BODY_TOO_LARGE";
    case 414:
        return "URI_TOO_LONG";
    case 431:
        return "HEADERS_TOO_LARGE";
    case 501:
        return "TRANSFER_CODING_NOT_IMPLEMENTED";
    case 505:
        return "HTTP_VERSION_NOT_SUPPORTED";
    default:
        return "BAD_REQUEST";
    }
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
    if (c->h3_parent) {
        serve_h3_respond(c, 200, "text/plain", s->null_resp[v] + s->null_head_len[v],
                         s->null_len[v] - s->null_head_len[v], NULL, head_only);
        return;
    }
    if (c->h2_id) { /* the same body, as frames */
        serve_h2_respond(c, 200, "text/plain", s->null_resp[v] + s->null_head_len[v],
                         s->null_len[v] - s->null_head_len[v], s->alt_svc[0] ? s->alt_svc : NULL, head_only);
        return;
    }
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

void serve_conn_respond_work(struct conn *c)
{
    struct serve_handle *s = c->srv;
    struct work *w = &c->w;
    char body[256], timing[160];
    int n = snprintf(body, sizeof body, "{\"ok\":true,\"work_ms\":%.3f", ns_to_ms(w->work_ns));
    if (!s->cfg.cpu_ns && s->cfg.miss_rate > 0)
        n += snprintf(body + n, sizeof body - (size_t)n, ",\"miss\":%s", w->miss ? "true" : "false");
    if (w->fanout)
        n += snprintf(body + n, sizeof body - (size_t)n, ",\"fanout\":%u,\"slow_deps\":%u,\"deps_ms\":%.3f", w->fanout,
                      w->slow_deps, ns_to_ms(w->deps_ns));
    n += snprintf(body + n, sizeof body - (size_t)n, "}\n");
    int t = snprintf(timing, sizeof timing, "Server-Timing: queue;dur=%.3f, work;dur=%.3f",
                     ns_to_ms(w->start_ns - w->entry_ns), ns_to_ms(w->end_ns - w->start_ns));
    if (s->cfg.pause_every_ns)
        t += snprintf(timing + t, sizeof timing - (size_t)t, ", lock;dur=%.3f", ns_to_ms(w->start_ns - w->slot_ns));
    snprintf(timing + t, sizeof timing - (size_t)t, "\r\n");
    out_response(c, 200, "application/json", body, (size_t)n, timing, !w->keep_alive, w->head_only);
}

void serve_conn_respond_rejected(struct conn *c)
{
    struct work *w = &c->w;
    char body[128], timing[64];
    uint64_t waited = c->srv->loop.now_ns - w->entry_ns;
    int n = snprintf(body, sizeof body, "{\"ok\":false,\"reason\":\"QUEUE_TIMEOUT\",\"queue_ms\":%.3f}\n",
                     ns_to_ms(waited));
    snprintf(timing, sizeof timing, "Server-Timing: queue;dur=%.3f\r\n", ns_to_ms(waited));
    out_response(c, 503, "application/json", body, (size_t)n, timing, !w->keep_alive, w->head_only);
}

/* ---- requests: parse, answer or hand to the pipeline ------------------------------------ */

/* One complete request is in c->parser.req. Answers at once, or starts work (c->busy). */
static void handle_request(struct conn *c)
{
    struct serve_handle *s = c->srv;
    const struct http_request *r = &c->parser.req;
    counter_inc(&s->c.requests);
    c->nreq++;
    c->partial_since_ns = 0;
    /* After the client's EOF (a half-close) the remaining complete requests are still
     * answered; the connection closes once they are. */
    bool keep = r->keep_alive && !r->upgrade && !s->draining;
    bool head_only = r->method == HTTP_HEAD;
    if (!keep)
        c->closing = c->linger_after = true;
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
        counter_inc(&s->c.executed);
        counter_inc(&s->c.ok);
        respond_null(c, !keep, head_only);
        return;
    }
    struct work *w = &c->w;
    w->keep_alive = keep;
    w->head_only = head_only;
    w->entry_ns = clock_now_ns();
    w->slot_ns = w->start_ns = w->end_ns = w->entry_ns;
    w->holds_slot = false;
    if (!serve_work_plan(s, r, w)) {
        counter_inc(&s->c.bad_requests);
        static const char bad[] = "{\"ok\":false,\"reason\":\"BAD_PARAMETER\"}\n";
        out_response(c, 400, "application/json", bad, sizeof bad - 1, NULL, !keep, head_only);
        return;
    }
    c->busy = true;
    serve_work_start(s, w);
}

void serve_conn_request(struct conn *c)
{
    c->parsing = true;
    handle_request(c);
    c->parsing = false;
}

/* Parse and answer requests from the input buffer until it is empty, a request goes to
 * work, the connection is closing, or the output buffer needs writing first. Returns false
 * when the connection was closed (c must not be used). */
static bool process_input(struct conn *c)
{
    struct serve_handle *s = c->srv;
    while (!c->busy && !c->closing && c->in_start < c->in_end) {
        if (out_room(c) < RESP_MAX) {
            if (!serve_conn_flush(c))
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
            counter_inc(&s->c.bad_requests);
            respond_error(c, status, parse_error_reason(status));
            c->in_start = c->in_end; /* the stream position is lost: the rest is discarded */
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

/* The request in flight has its response in the output buffer: go on with the bytes that
 * followed it (pipelining), write, and settle the connection. When the request ended
 * inside process_input() (no wait at all), that loop goes on by itself. */
void serve_conn_request_done(struct conn *c)
{
    struct work *w = &c->w;
    w->phase = PH_NONE;
    c->busy = false;
    if (c->dead) {
        counter_inc(&c->srv->c.write_failures);
        serve_conn_free(c);
        return;
    }
    if (c->h2_id) {
        serve_h2_stream_done(c);
        return;
    }
    if (c->h3_parent) {
        serve_h3_stream_done(c);
        return;
    }
    if (!w->keep_alive)
        c->closing = c->linger_after = true;
    c->idle_since_ns = c->srv->loop.now_ns;
    if (c->parsing)
        return;
    http_request_next(&c->parser);
    if (process_input(c) && serve_conn_flush(c))
        serve_conn_settle(c);
}

/* ---- reading and timeouts --------------------------------------------------------------- */

/* One recv() per readiness event (level-triggered: more data means another event), then
 * parse. Returns false when the connection was closed. */
static bool conn_read(struct conn *c)
{
    if (c->lingering)
        return linger_read(c);
    if (c->in_end == CONN_IN_CAP && c->in_start > 0) {
        memmove(c->in, c->in + c->in_start, c->in_end - c->in_start);
        c->in_end -= c->in_start;
        c->in_start = 0;
    }
    if (c->in_end == CONN_IN_CAP)
        return true;
    ssize_t n = serve_conn_recv(c, c->in + c->in_end, CONN_IN_CAP - c->in_end);
    if (n > 0) {
        c->in_end += (size_t)n;
        if (c->srv->cfg.h2 && !c->tls.ssl && c->nreq == 0 && c->in_start == 0 && !c->busy) {
            /* h2c with prior knowledge: the connection opens with the HTTP/2 preface */
            size_t have = c->in_end < SERVE_H2_PREFACE_LEN ? c->in_end : SERVE_H2_PREFACE_LEN;
            if (memcmp(c->in, SERVE_H2_PREFACE, have) == 0) {
                if (have < SERVE_H2_PREFACE_LEN)
                    return true; /* a prefix so far: wait for the rest (the header timeout runs) */
                size_t len = c->in_end;
                c->in_start = c->in_end = 0;
                serve_h2_start(c, c->in, len);
                return false; /* the connection is HTTP/2's now (or closed) */
            }
        }
    } else if (n == 0) {
        c->peer_eof = true;
        /* EOF while the request waits for a slot or the lock: the client is taken for
         * gone (a half-close cannot be told from a close, and a queue of abandoned
         * requests would hold up everyone after them). Once the work runs, it is a
         * half-close: the answer is still written. */
        if (c->busy && (c->w.phase == PH_WAIT_SLOT || c->w.phase == PH_WAIT_LOCK)) {
            conn_close(c);
            return false;
        }
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        conn_close(c);
        return false;
    }
    return c->busy || process_input(c);
}

/* One step of the TLS handshake; then HTTP/2 when ALPN chose it, else HTTP/1.1. A failed
 * handshake closes the connection (the client has its alert). */
static void conn_handshake(struct conn *c)
{
    switch (tls_conn_handshake(&c->tls)) {
    case TLS_IO_WANT_READ:
        loop_io_mod(&c->srv->loop, &c->io, EPOLLIN);
        return;
    case TLS_IO_WANT_WRITE:
        loop_io_mod(&c->srv->loop, &c->io, EPOLLOUT);
        return;
    case TLS_IO_OK:
        break;
    default:
        counter_inc(&c->srv->c.tls_failed);
        conn_close(c);
        return;
    }
    c->idle_since_ns = c->srv->loop.now_ns;
    if (c->tls.proto == TLS_PROTO_H2) {
        serve_h2_start(c, NULL, 0);
        return;
    }
    /* the client may have sent its request with the handshake's last flight */
    if (conn_read(c) && serve_conn_flush(c))
        serve_conn_settle(c);
}

static void on_conn_io(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    struct conn *c = io->data;
    if (c->h2) {
        serve_h2_io(c, events);
        return;
    }
    if (c->tls.ssl && !c->tls.handshake_done && !(events & EPOLLERR)) {
        conn_handshake(c);
        return;
    }
    if (events & EPOLLERR) {
        conn_close(c);
        return;
    }
    if (events & EPOLLOUT) {
        if (!serve_conn_flush(c))
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
    if (!serve_conn_flush(c))
        return;
    serve_conn_settle(c);
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
    if (c->h2) {
        serve_h2_timeout(c);
        return;
    }
    if (c->lingering || c->closing) { /* lingering, or a response the client does not read */
        conn_close(c);
        return;
    }
    if (c->partial_since_ns || c->nreq == 0) {
        counter_inc(&c->srv->c.timeouts);
        if (c->partial_since_ns && out_room(c) >= RESP_MAX) {
            /* The 408, then a lingering close (the slow client may still be sending). */
            serve_conn_respond_timeout(c);
            c->partial_since_ns = 0;
            c->idle_since_ns = loop->now_ns;
            if (serve_conn_flush(c))
                serve_conn_settle(c);
            return;
        }
    }
    conn_close(c);
}

/* ---- accepting -------------------------------------------------------------------------- */

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

/* Register an accepted socket as a connection. Returns NULL (the socket closed) when epoll
 * refuses it. */
static struct conn *conn_open(struct serve_handle *s, int fd)
{
    struct loop *loop = &s->loop;
    struct conn *c = conn_get(s);
    c->srv = s;
    c->io.fd = fd;
    c->io.cb = on_conn_io;
    c->io.data = c;
    loop_timer_init(&c->timer, on_conn_timer, c);
    serve_work_init(&c->w, c);
    http_request_parser_init(&c->parser, s->cfg.max_header_bytes, s->cfg.max_body_bytes);
    c->accepted_ns = c->idle_since_ns = loop->now_ns;
    if ((s->tls && tls_conn_server(&c->tls, s->tls, fd) != 0) || loop_io_add(loop, &c->io, EPOLLIN) < 0) {
        tls_conn_release(&c->tls);
        close(fd);
        c->next = s->free_conns;
        s->free_conns = c;
        return NULL;
    }
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconn_structs++;
    return c;
}

/* Beyond --max-conns: 503 CONN_LIMIT, then a lingering close (the client may have sent
 * its request already; a plain close would reset the connection and lose the 503). Up
 * to REFUSED_LINGER_MAX refused connections linger at once; beyond, the 503 is sent and
 * the socket closed at once. Refused connections are not counted as open. */
static void refuse(struct serve_handle *s, int fd)
{
    static const char body[] = "{\"ok\":false,\"reason\":\"CONN_LIMIT\"}\n";
    counter_inc(&s->c.conn_refused);
    if (s->refused_lingering < REFUSED_LINGER_MAX) {
        struct conn *c = conn_open(s, fd);
        if (!c)
            return;
        c->refused = true;
        s->refused_lingering++;
        size_t n = http_response_head(c->out, sizeof c->out - sizeof body, 503, s->date, "application/json",
                                      sizeof body - 1, NULL, true);
        memcpy(c->out + n, body, sizeof body - 1);
        c->out_end = n + sizeof body - 1;
        c->closing = c->linger_after = true;
        if (serve_conn_flush(c))
            serve_conn_settle(c);
        return;
    }
    char buf[RESP_MAX];
    size_t n = http_response_head(buf, sizeof buf - sizeof body, 503, s->date, "application/json", sizeof body - 1,
                                  NULL, true);
    memcpy(buf + n, body, sizeof body - 1);
    ssize_t w = send(fd, buf, n + sizeof body - 1, MSG_NOSIGNAL);
    (void)w;
    close(fd);
}

static void on_accept_timer(struct loop *loop, struct loop_timer *t)
{
    struct serve_handle *s = t->data;
    if (s->listen_fd >= 0)
        loop_io_mod(loop, &s->listen_io, EPOLLIN);
}

void serve_conn_accept_init(struct serve_handle *s)
{
    loop_timer_init(&s->accept_timer, on_accept_timer, s);
}

void serve_conn_accept(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)events;
    struct serve_handle *s = io->data;
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* Level-triggered: the pending connection would wake us at once, forever.
                 * Stop listening for a while; the connections wait in the backlog. */
                loop_io_mod(loop, &s->listen_io, 0);
                loop_timer_arm(loop, &s->accept_timer, loop->now_ns + ACCEPT_PAUSE_NS);
            }
            return; /* EAGAIN, or an aborted connection: the next event */
        }
        if (counter_get(&s->c.connections) >= s->cfg.max_conns) {
            if (s->tls) { /* a 503 in cleartext would be garbage to a TLS client: close */
                counter_inc(&s->c.conn_refused);
                close(fd);
                continue;
            }
            refuse(s, fd);
            continue;
        }
        if (!s->cfg.nagle) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        struct conn *c = conn_open(s, fd);
        if (!c)
            continue;
        counter_inc(&s->c.connections);
        counter_inc(&s->c.connections_total);
        conn_arm_timer(c);
    }
}

/* ---- TLS and HTTP/2 streams --------------------------------------------------------------- */

int serve_conn_tls_init(struct serve_handle *s)
{
    const char *host = NULL;
    char h[SERVE_ADDR_MAX];
    /* the listen host goes into a generated certificate: "[::1]:0" -> "::1", "name:80" -> "name" */
    snprintf(h, sizeof h, "%s", s->cfg.listen);
    char *colon = strrchr(h, ':');
    if (colon) {
        *colon = '\0';
        host = h;
        if (h[0] == '[') {
            host = h + 1;
            char *rb = strchr(h, ']');
            if (rb)
                *rb = '\0';
        }
    }
    struct tls_server_config tc = {
        .cert_file = s->cfg.cert_file, .key_file = s->cfg.key_file, .host = host, .h2 = s->cfg.h2};
    char err[256];
    int r = tls_server_new(&tc, &s->tls, err, sizeof err);
    /* the paths were for this moment: the configuration the server keeps holds no pointer */
    s->cfg.cert_file = s->cfg.key_file = NULL;
    return r;
}

void serve_conn_tls_release(struct serve_handle *s)
{
    tls_ctx_free(s->tls);
    s->tls = NULL;
}

const char *serve_tls_fingerprint(const struct serve_handle *h, bool *self_signed)
{
    if (self_signed)
        *self_signed = h->tls && tls_ctx_self_signed(h->tls);
    return h->tls ? tls_ctx_fingerprint(h->tls) : NULL;
}

struct conn *serve_conn_stream_new(struct conn *parent)
{
    struct conn *c = serve_conn_stream_alloc(parent->srv);
    c->h2_parent = parent;
    return c;
}

struct conn *serve_conn_stream_alloc(struct serve_handle *s)
{
    struct conn *c = conn_get(s);
    c->srv = s;
    c->io.fd = -1;
    loop_timer_init(&c->timer, on_conn_timer, c);
    serve_work_init(&c->w, c);
    c->accepted_ns = c->idle_since_ns = s->loop.now_ns;
    c->parser.req.keep_alive = true;
    c->parser.req.http_major = 2;
    return c;
}
