/* HTTP/2 on a ready connection of a load thread (the protocol row proto_h2): one session of
 * src/h2 per connection, a request per stream, the session's counters, and the second try of a
 * stream the server refused (GOAWAY, REFUSED_STREAM).
 *
 * Re-entrancy: nghttp2 calls back (a stream closed, a GOAWAY) from inside h2_client_feed,
 * _flush, _fail and _cancel, and a callback goes on to the next request, which may submit a
 * stream on the same session. Nothing here flushes or frees a session from its own call: a
 * submit, a readiness event and a cancel put the connection on the worker's due list
 * (worker_due), and h2_settle, which worker_settle runs once the loop's callback has returned,
 * writes everything submitted meanwhile in one flush, closes the connection when it is over
 * and gives its free streams to whoever waits. */
#include "load/worker.h"

#include "core/clock.h"

#include <string.h>

/* ------------------------------------------------------------------ the session's callbacks */

/* The session's bytes go out through the connection's transport. */
static long h2_io_write(void *io, const uint8_t *data, size_t len)
{
    struct conn *c = io;
    size_t put;
    enum tls_io r = c->ops->write(c, data, len, &put);
    if (r == TLS_IO_OK) {
        c->t->bytes_out += put;
        return (long)put;
    }
    if (r == TLS_IO_WANT_WRITE) {
        c->want_out = true; /* h2_flush arms EPOLLOUT */
        return 0;
    }
    if (r == TLS_IO_WANT_READ)
        return 0; /* EPOLLIN is always armed */
    if (!c->fail_cause)
        c->fail_cause = (uint8_t)(1 + account_fail_cause(c, NULL, false));
    return -1;
}

static void h2_on_header(struct h2_stream *s, const uint8_t *name, size_t namelen, const uint8_t *value,
                         size_t valuelen)
{
    struct req *r = s->user;
    if (s->status >= 200 && namelen == 13 && memcmp(name, "server-timing", 13) == 0 && !r->resp.nst)
        r->resp.nst = http_parse_server_timing((const char *)value, valuelen, r->resp.st, HTTP_ST_MAX_ENTRIES);
    if (s->status >= 200 && namelen == 12 && memcmp(name, "content-type", 12) == 0)
        r->resp.ct_value = http_content_type_is_sse((const char *)value, valuelen); /* noted; decided at the head */
}

/* The head is complete: are the body's events timed? */
static void h2_on_response(struct h2_stream *s)
{
    struct req *r = s->user;
    if (!r->t->et->head)
        http_events_head(&r->resp.ev, r->resp.ct_value);
}

static void h2_on_data(struct h2_stream *s, const uint8_t *data, size_t len)
{
    struct req *r = s->user;
    if (r->t->et->matchers.n)
        http_matchers_feed(&r->t->et->matchers, r->resp.kmp, &r->resp.matched, (const char *)data, len);
    if (r->resp.ev.on && !r->resp.ev.chunks) {
        uint32_t events = r->resp.ev.count;
        uint64_t last_ns = r->resp.ev.last_ns;
        r->resp.ev.now_ns = 0;
        http_events_body(&r->resp.ev, (const char *)data, len);
        if (r->resp.ev.count != events)
            account_stream_gaps(r, events, last_ns);
    }
}

/* A DATA frame with data arrived whole: in chunks mode, one event. */
static void h2_on_data_frame(struct h2_stream *s)
{
    struct req *r = s->user;
    if (!r->resp.ev.on || !r->resp.ev.chunks)
        return;
    uint32_t events = r->resp.ev.count;
    uint64_t last_ns = r->resp.ev.last_ns;
    r->resp.ev.now_ns = 0;
    http_events_chunk(&r->resp.ev);
    account_stream_gaps(r, events, last_ns);
}

/* A refused stream (GOAWAY, REFUSED_STREAM) was not processed by the server (RFC 9113 §8.7,
 * §6.8): the request is sent once more on another connection, with --retry-stale's accounting
 * (one request: planned and sent once, its first send time kept, counts.retries + 1). It
 * waits on the target's pending list for a stream. */
static void h2_retry(struct worker *w, struct req *r)
{
    struct target_rt *t = r->t;
    struct req *n = req_alloc(w);
    req_init(n, t, r->client, r->var, r->planned_ns, r->warm, r->sent_ns);
    r->var = NULL; /* the same request: its bytes go with it */
    n->retried = true;
    req_replace(w, r, n);
    counts_of(t, n->warm)->retries++;
    t->pc.h2_retried++;
    pend_push(t, n);
    if (w->e->cfg->plan.open_loop) {
        for (struct conn *c = t->avail; c && t->npend;) {
            struct conn *next = c->anext;
            if (conn_room(w, c))
                pool_refill(w, t, c);
            c = next;
        }
        if (t->npend)
            pool_grow(w, t);
        return;
    }
    struct cgroup *g = n->client->g;
    if (g->conn && g->conn->state != CONN_FREE && conn_room(w, g->conn))
        group_refill(w, g->conn);
    if (t->npend)
        group_grow(w, t);
}

/* A stream refused by GOAWAY or REFUSED_STREAM is counted, and sent again the first time:
 * true when it was (r is gone). */
static bool h2_refused(struct worker *w, struct req *r, enum h2_reason reason)
{
    if (reason != H2_R_GOAWAY && reason != H2_R_REFUSED)
        return false;
    if (reason == H2_R_REFUSED)
        r->t->pc.h2_refused++;
    else
        r->t->pc.h2_goaway_streams++;
    if (r->retried)
        return false;
    h2_retry(w, r);
    return true;
}

static void h2_on_close(struct h2_stream *s)
{
    struct req *r = s->user;
    struct conn *c = r->c;
    struct worker *w = c->w;
    struct target_rt *t = r->t;
    struct client *cl = r->client;
    r->first_byte_ns = s->first_byte_ns;
    r->resp.status = s->status;
    r->resp.bytes = s->bytes;
    r->resp.body_bytes = s->body_bytes;
    uint64_t done = clock_now_ns();
    enum reqlog_outcome o = OUTCOME_TRANSPORT;
    if (r->end == REQ_END_CANCEL) {
        o = OUTCOME_CANCELLED;
    } else if (r->end == REQ_END_TIMEOUT || s->reason == H2_R_TIMEOUT) {
        o = OUTCOME_TIMEOUT; /* H2_R_TIMEOUT: only through h2_client_cancel, which set r->end */
    } else if (s->reason == H2_R_NONE) {
        o = account_classify(t->et, &r->resp);
        done = s->done_ns;
    } else if (s->reason == H2_R_HEADERS) {
        o = OUTCOME_INVALID; /* its header fields went past the budget, as an HTTP/1.1 head past its cap */
    } else if (h2_refused(w, r, s->reason)) {
        return;
    } else {
        r->tcause = (uint8_t)account_stream_cause(s->reason, c, r);
    }
    bool cancelled = r->end == REQ_END_CANCEL;
    req_complete(w, r, o, done);
    if (cancelled)
        return; /* the drain is over: nothing more is sent (finish_now) */
    worker_after_request(w, t, cl, conn_room(w, c) ? c : NULL);
    worker_maybe_finish(w);
}

static void h2_on_goaway(void *user, int32_t last_stream_id, uint32_t error_code)
{
    (void)last_stream_id, (void)error_code;
    struct conn *c = user;
    avail_remove(c->t, c); /* no new streams; h2_settle lets its group open the next connection */
}

static const struct h2_callbacks h2_callbacks = {
    .on_response = h2_on_response,
    .on_header = h2_on_header,
    .on_data = h2_on_data,
    .on_close = h2_on_close,
    .on_goaway = h2_on_goaway,
    .on_data_frame = h2_on_data_frame,
};

/* ------------------------------------------------------------------ the deferred work */

/* Write what nghttp2 has: every stream submitted since the last flush, in one write. */
static void h2_flush(struct worker *w, struct conn *c)
{
    c->due &= (uint8_t)~DUE_FLUSH;
    c->want_out = false;
    enum h2_io io = h2_client_flush(c->h2);
    if (io == H2_IO_ERROR && h2_client_reason(c->h2) == H2_R_NONE)
        h2_client_fail(c->h2, H2_R_CLOSED); /* the write failed: every open stream fails */
    bool out = io == H2_IO_WANT_WRITE || c->want_out;
    loop_io_mod(&w->loop, &c->io, EPOLLIN | (out ? EPOLLOUT : 0));
    c->want_out = out;
}

/* Is c over: failed, GOAWAY with nothing open, its requests per connection done, the worker
 * finished, or its close asked for (conn_close_soon)? */
static bool h2_over(const struct worker *w, const struct conn *c)
{
    uint32_t open = h2_client_open_streams(c->h2);
    return (c->due & DUE_CLOSE) || h2_client_done(c->h2) || (!open && (c->nreq >= w->e->rpc || w->finished));
}

/* c is over: closed, and whoever needs a connection hears of it. */
static void h2_end(struct worker *w, struct conn *c)
{
    struct target_rt *t = c->t;
    struct cgroup *g = c->group;
    conn_close(w, c);
    if (w->finished)
        return;
    if (g) {
        group_wake(w, g);
        group_grow(w, t);
    } else {
        pool_refill(w, t, NULL);
    }
}

/* Whether c's server allows no stream now (SETTINGS_MAX_CONCURRENT_STREAMS 0: a server shedding
 * load), kept in its target's counts: while such a connection is open the open loop dials the
 * target no more, since a new connection would hear the same (openloop.c, may_dial), and the
 * requests wait for the server to raise the limit (new SETTINGS: this connection has room
 * again) or for the drain's end. A connection with room resets the reports. */
static void h2_track_room(struct conn *c)
{
    struct target_rt *t = c->t;
    bool none = h2_client_no_room(c->h2);
    if (none && !c->h2_noroom) {
        c->h2_noroom = true;
        t->h2_noroom++;
        t->h2_noroom_seen++;
        avail_remove(t, c);
    } else if (!none && c->h2_noroom) {
        c->h2_noroom = false;
        t->h2_noroom--;
    }
    if (!none && t->h2_noroom_seen && h2_client_settings_seen(c->h2) && h2_client_server_max_streams(c->h2) > 0)
        t->h2_noroom_seen = 0;
}

/* Everything that waited for the session's callbacks to return, in a loop until nothing
 * changes: the flush, the close when c is over, new requests elsewhere after a GOAWAY, free
 * streams to whoever waits (which may submit, and so flush again). */
static void h2_settle(struct worker *w, struct conn *c)
{
    struct target_rt *t = c->t;
    for (;;) {
        if ((c->due & DUE_FLUSH) || h2_client_want_write(c->h2))
            h2_flush(w, c);
        h2_track_room(c);
        if (h2_over(w, c)) {
            h2_end(w, c);
            return;
        }
        if (!h2_client_usable(c->h2)) {
            /* GOAWAY: its streams finish here, new requests need a new connection */
            avail_remove(t, c);
            if (c->group && c->group->conn == c) {
                c->group->conn = NULL;
                group_wake(w, c->group);
                group_grow(w, t);
            }
            return;
        }
        /* a new connection takes one stream before the server's SETTINGS arrive, whatever
         * they say: with a limit of 0, pool_grow still opens one connect per waiting request */
        uint32_t m = h2_client_server_max_streams(c->h2);
        t->per_conn = m == 0 ? 1 : m < w->e->h2_streams ? m : w->e->h2_streams;
        if (!conn_room(w, c) || w->finished) {
            avail_remove(t, c); /* the server lowered its limit: no room left to offer */
            return;
        }
        if (c->group)
            group_refill(w, c);
        else
            pool_refill(w, t, c);
        if (!((c->due & (DUE_FLUSH | DUE_CLOSE)) || h2_client_want_write(c->h2)))
            return;
    }
}

/* ------------------------------------------------------------------ the row */

static bool h2_send(struct worker *w, struct conn *c, struct req *r)
{
    if (!r->c)
        req_attach(c, r);
    req_protocol(c, r);
    r->stream.user = r;
    if (h2_client_submit(c->h2, r->var ? r->var->h2 : &c->t->et->h2req, &r->stream) != 0) {
        /* no free stream after all (stream ids of the connection used up): the request goes
         * back to wait for one */
        c->nreq--;
        pend_push(c->t, r);
        return true;
    }
    if (!conn_room(w, c))
        avail_remove(c->t, c);
    worker_due(w, c, DUE_FLUSH);
    return true;
}

static void h2_begin(struct worker *w, struct conn *c, struct req *r)
{
    c->t->pc.h2++;
    c->h2_noroom = false;
    c->h2 = h2_client_new(&h2_callbacks, h2_io_write, c, c, w->e->h2_streams);
    loop_io_mod(&w->loop, &c->io, EPOLLIN);
    c->want_out = false;
    c->req = NULL;
    worker_due(w, c, DUE_FLUSH); /* the preface and SETTINGS go out with the first flush */
    if (r)
        h2_send(w, c, r); /* the one stream allowed before the server's SETTINGS */
}

/* Read what arrived and feed it to the session (its callbacks run from here). */
static void h2_read(struct worker *w, struct conn *c)
{
    for (int reads = 0;;) {
        size_t got;
        enum tls_io io = c->ops->read(c, w->rbuf, WORKER_RBUF, &got);
        if (io == TLS_IO_OK) {
            if (h2_client_feed(c->h2, (const uint8_t *)w->rbuf, got) != 0)
                return; /* the session failed: its streams were closed with its reason */
            if (!conn_read_again(c, got, &reads))
                return;
            continue;
        }
        if (io == TLS_IO_WANT_READ)
            return;
        if (io == TLS_IO_WANT_WRITE) {
            c->due |= DUE_FLUSH;
            c->want_out = true;
            return;
        }
        if (io == TLS_IO_EOF)
            c->t->counts[0].conns_closed_by_peer++;
        else if (!c->fail_cause)
            c->fail_cause = (uint8_t)(1 + account_fail_cause(c, NULL, false));
        h2_client_fail(c->h2, H2_R_CLOSED);
        return;
    }
}

/* Bytes arrived (or the socket can take more): c settles after this callback, in any case. */
static void h2_on_io(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    struct conn *c = io->data;
    struct worker *w = c->w;
    worker_due(w, c, (events & EPOLLOUT) ? DUE_FLUSH : 0);
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        h2_read(w, c);
}

/* The stream of r is reset (RST_STREAM CANCEL) and the connection goes on; on_close accounts
 * the request at once. */
static void h2_cancel(struct worker *w, struct conn *c, struct req *r)
{
    worker_due(w, c, 0);
    h2_client_cancel(c->h2, &r->stream, H2_R_TIMEOUT);
}

static uint32_t h2_room(const struct conn *c)
{
    return h2_client_capacity(c->h2);
}

static bool h2_idle(const struct conn *c)
{
    return !h2_client_open_streams(c->h2);
}

static bool h2_usable(const struct conn *c)
{
    return h2_client_usable(c->h2);
}

/* The session's counters go to its target's at the end of the connection. */
static void h2_close(struct worker *w, struct conn *c)
{
    (void)w;
    struct target_rt *t = c->t;
    const struct h2_client_stats *s = h2_client_stats(c->h2);
    t->pc.h2_streams += s->streams;
    t->pc.h2_rst += s->rst_received;
    t->pc.h2_goaway += s->goaway;
    t->pc.h2_stalls += s->stalls;
    if (c->h2_noroom) {
        c->h2_noroom = false;
        t->h2_noroom--;
    }
    if (h2_client_settings_seen(c->h2)) { /* a session closed before the server's SETTINGS knows no limit */
        uint32_t m = h2_client_server_max_streams(c->h2);
        record_h2_limit_add(&t->pc, m == UINT32_MAX ? UINT64_MAX : m);
    }
    h2_client_free(c->h2);
    c->h2 = NULL;
}

static void h2_release(struct conn *c)
{
    h2_client_free(c->h2); /* streams still open are not called back */
    c->h2 = NULL;
}

const struct proto_ops proto_h2 = {
    .log_proto = REQLOG_PROTO_H2,
    .begin = h2_begin,
    .room = h2_room,
    .send = h2_send,
    .on_io = h2_on_io,
    .cancel = h2_cancel,
    .idle = h2_idle,
    .usable = h2_usable,
    .settle = h2_settle,
    .close = h2_close,
    .release = h2_release,
};
