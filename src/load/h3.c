/* HTTP/3 on a load thread (--http3): the QUIC transport row (conn_quic_ops: a connected UDP
 * socket, the QUIC handshake as the connection's `tls` phase) and the protocol row proto_h3 (a
 * request per stream over src/h3, as h2.c does over src/h2), with the connection's timer (QUIC
 * needs one: retransmissions, probes, the idle timeout) in the thread's loop.
 *
 * Re-entrancy is h2.c's: src/h3 calls back (a stream closed) from inside h3_client_read and
 * h3_client_fail, and a callback may send the next request on the same connection (src/h3
 * queues it). Nothing here flushes or frees a client from its own call: reads and timers put
 * the connection on the worker's due list, and h3_settle sends what is due, re-arms the timer,
 * closes the connection when it is over and gives its free streams to whoever waits. */
#include "load/worker.h"

#include "core/clock.h"
#include "core/err.h"
#include "h3/h3.h"
#include "net/bind.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const struct h3_callbacks h3_callbacks_of_load;

/* A connection's QUIC state in the load engine: its client, its timer, its qlog file. */
struct h3_link {
    struct h3_client *cli;
    struct loop_timer timer;
    struct conn *c;
    FILE *qlog;   /* --qlog: this connection's file; NULL: none */
    bool counted; /* its handshake is counted (at once, or after 0-RTT when the handshake ends) */
};

static void h3_arm(struct worker *w, struct conn *c)
{
    uint64_t at = h3_client_expiry_ns(c->h3->cli);
    if (at == UINT64_MAX)
        loop_timer_cancel(&w->loop, &c->h3->timer);
    else
        loop_timer_arm(&w->loop, &c->h3->timer, at);
}

/* The timer went off: ngtcp2's expiry, then what the connection's state does with events (the
 * handshake's step, or the protocol's readiness callback with nothing to read). */
static void h3_on_timer(struct loop *loop, struct loop_timer *timer)
{
    struct h3_link *l = timer->data;
    struct conn *c = l->c;
    h3_client_expire(l->cli);
    c->io.cb(loop, &c->io, 0);
}

/* The request's cause when its connection failed: the client's reason. */
static enum run_transport_cause h3_cause(enum h3_reason r)
{
    switch (r) {
    case H3_R_VERIFY:
        return RUN_TC_TLS_VERIFY;
    case H3_R_HOSTNAME:
        return RUN_TC_TLS_HOSTNAME;
    case H3_R_EXPIRED:
        return RUN_TC_TLS_EXPIRED;
    case H3_R_HS_TIMEOUT:
        return RUN_TC_TLS_HANDSHAKE_TIMEOUT;
    case H3_R_HANDSHAKE:
        return RUN_TC_QUIC_HANDSHAKE;
    case H3_R_IDLE_TIMEOUT:
        return RUN_TC_QUIC_IDLE_TIMEOUT;
    case H3_R_STREAM_RESET:
        return RUN_TC_H3_STREAM_RESET;
    case H3_R_CLOSE:
        return RUN_TC_QUIC_CLOSE;
    case H3_R_VERSION:
        return RUN_TC_QUIC_VERSION;
    case H3_R_PROTOCOL:
        return RUN_TC_H3_PROTOCOL;
    default:
        return RUN_TC_OTHER;
    }
}

/* The connection failed: its cause for conn_fail, its close code counted once. */
static void h3_note_failure(struct conn *c)
{
    enum h3_reason r = h3_client_reason(c->h3->cli);
    if (!c->fail_cause)
        c->fail_cause = (uint8_t)(1 + h3_cause(r));
    if (r == H3_R_CLOSE || r == H3_R_HANDSHAKE) {
        bool app = false;
        uint64_t code = h3_client_error_code(c->h3->cli, &app);
        if (r == H3_R_CLOSE || code)
            record_quic_close_add(&c->t->pc.quic, code, app);
    }
}

/* ------------------------------------------------------------------ the transport row */

/* A connected UDP socket to addr (the target's, --connect-to's included), from the next
 * --local-address when there are some. */
static int quic_connect(struct conn *c, const struct net_addr *addr)
{
    int fd = socket(addr->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    const struct net_addr *src = route_source(c->w);
    if ((src && bind(fd, (const struct sockaddr *)&src->ss, src->len) != 0) ||
        connect(fd, (const struct sockaddr *)&addr->ss, addr->len) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    c->io.fd = fd;
    return 0;
}

static int quic_connected(struct conn *c)
{
    (void)c;
    return 0; /* a connected UDP socket: the connect phase is the socket's setup, the handshake is `tls` */
}

/* --qlog DIR: DIR/t<thread>-c<connection id>.sqlog (the id of the request log's conn column).
 * A file that cannot be made is a connection without qlog, said once per thread. */
static FILE *qlog_open(struct worker *w, const struct conn *c)
{
    const char *dir = w->e->cfg->qlog_dir;
    if (!dir)
        return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/t%u-c%" PRIu64 ".sqlog", dir, (unsigned)w->index, (uint64_t)c->id);
    FILE *f = fopen(path, "we");
    if (!f && !w->qlog_warned) {
        w->qlog_warned = true;
        fprintf(stderr, "knee: --qlog %s: %s (the connections go on without qlog)\n", path, strerror(errno));
    }
    return f;
}

static int quic_start(struct conn *c)
{
    struct worker *w = c->w;
    struct target_rt *t = c->t;
    struct h3_link *l = xcalloc(1, sizeof *l);
    bool resume = !w->e->cfg->tls_no_resume;
    if (resume && !t->h3_session && !(t->h3_session = h3_session_new()))
        resume = false;
    l->qlog = qlog_open(w, c);
    /* 0-RTT data can be replayed by an attacker or a retrying path (RFC 9001 §9.2, RFC 8470):
     * only requests that may be sent twice go early, as for a stale connection's retry: the
     * target's single request with an idempotent method, or anything with --retry-stale-all. A
     * request source's methods vary per entry: it resumes but waits for the handshake. */
    const struct run_config *cfg = w->e->cfg;
    bool replay_safe = cfg->retry_stale_all || (!t->et->target->source && t->et->idempotent);
    struct h3_client_opts o = {
        .max_streams = w->e->h2_streams,
        .session = resume ? t->h3_session : NULL,
        .early_data = resume && replay_safe,
        .qlog = l->qlog,
    };
    char why[200];
    int r = h3_client_new(w->e->h3tls, c->io.fd, t->et->url.host, &h3_callbacks_of_load, &o, &l->cli, why, sizeof why);
    if (r) {
        if (l->qlog)
            fclose(l->qlog);
        free(l);
        return r;
    }
    l->c = c;
    loop_timer_init(&l->timer, h3_on_timer, l);
    c->h3 = l;
    c->tls_on = false;
    return 0;
}

/* One step of the handshake: whatever arrived, whatever is due, then the timer. */
static enum tls_io quic_handshake(struct conn *c)
{
    struct h3_client *h = c->h3->cli;
    h3_client_read(h);
    bool blocked = h3_client_flush(h);
    if (h3_client_reason(h) != H3_R_NONE) {
        h3_note_failure(c);
        return TLS_IO_ERROR;
    }
    h3_arm(c->w, c);
    if (h3_client_ready(h))
        return TLS_IO_OK;
    return blocked ? TLS_IO_WANT_WRITE : TLS_IO_WANT_READ;
}

static void quic_timeout(struct conn *c)
{
    (void)c; /* conn.c counts it as tls_handshake_timeout */
}

/* The handshake is over: full or resumed, and what became of 0-RTT. */
static void quic_count_handshake(struct conn *c)
{
    struct h3_client *h = c->h3->cli;
    struct run_proto_counts *pc = &c->t->pc;
    bool resumed = h3_client_resumed(h);
    if (resumed)
        pc->tls_resumed++;
    else
        pc->tls_full++;
    pc->tls_version[RUN_TLS_V13]++;
    if (h3_client_cert_requested(h))
        pc->tls_cert_requested++;
    if (h3_client_early(h) && h3_client_early_accepted(h))
        pc->quic.zero_rtt_accepted++;
    else if (h3_client_early(h))
        pc->quic.zero_rtt_rejected++;
    c->log_tls = resumed ? REQLOG_TLS_RESUMED : REQLOG_TLS_FULL;
    c->h3->counted = true;
}

/* Ready: after the handshake, or at once with 0-RTT (its handshake is counted when it ends:
 * h3_settle). */
static int quic_opened(struct conn *c, struct run_proto_counts *pc)
{
    (void)pc;
    if (h3_client_handshake_done(c->h3->cli))
        quic_count_handshake(c);
    else
        c->log_tls = REQLOG_TLS_RESUMED; /* a ticket was offered; the handshake says whether it was taken */
    return -1;
}

/* Free c's QUIC state; at the thread's end (closing false) the loop runs no more and may be
 * gone, so its timer is left alone. */
static void quic_free(struct conn *c, bool closing)
{
    struct h3_link *l = c->h3;
    if (!l)
        return;
    if (closing)
        loop_timer_cancel(&c->w->loop, &l->timer);
    h3_client_free(l->cli); /* ngtcp2's last qlog chunk goes out here */
    if (l->qlog)
        fclose(l->qlog);
    free(l);
    c->h3 = NULL;
}

/* The connection's counters go to its target's (after the goodbye's datagram). */
static void quic_count(struct conn *c)
{
    const struct h3_client_stats *s = h3_client_stats(c->h3->cli);
    struct run_quic_counts *q = &c->t->pc.quic;
    q->streams += s->streams;
    q->datagrams_sent += s->datagrams_sent;
    q->datagrams_received += s->datagrams_received;
    q->bytes_sent += s->bytes_sent;
    q->bytes_received += s->bytes_received;
    q->send_blocked += s->send_blocked;
    q->pto += s->pto;
    q->stream_packets_lost += s->stream_packets_lost;
    struct h3_client_path p;
    h3_client_path(c->h3->cli, &p);
    if (p.smoothed_rtt_ns) {
        uint64_t min_us = p.min_rtt_ns / 1000, srtt_us = p.smoothed_rtt_ns / 1000;
        if (!q->rtt_connections || min_us < q->rtt_min_us)
            q->rtt_min_us = min_us;
        q->rtt_connections++;
        q->rtt_smoothed_sum_us += srtt_us;
        if (srtt_us > q->rtt_smoothed_max_us)
            q->rtt_smoothed_max_us = srtt_us;
        q->cwnd_sum_bytes += p.cwnd;
    }
    if (!c->h3->counted && h3_client_handshake_done(c->h3->cli))
        quic_count_handshake(c);
    else if (!c->h3->counted && c->state == CONN_READY) /* 0-RTT whose handshake never ended */
        c->t->pc.tls_failed++;
    c->t->bytes_out += s->bytes_sent;
}

static void quic_close(struct conn *c)
{
    if (!c->h3)
        return;
    h3_client_goodbye(c->h3->cli);
    quic_count(c);
    quic_free(c, true);
}

static void quic_release(struct conn *c)
{
    quic_free(c, false);
}

const struct conn_ops conn_quic_ops = {
    .connect = quic_connect,
    .connected = quic_connected,
    .start = quic_start,
    .handshake = quic_handshake,
    .timeout = quic_timeout,
    .opened = quic_opened,
    .close = quic_close,
    .release = quic_release,
    .proto = &proto_h3,
};

/* ------------------------------------------------------------------ the streams' callbacks */

static void h3_on_header(struct h3_stream *s, const uint8_t *name, size_t namelen, const uint8_t *value,
                         size_t valuelen)
{
    struct req *r = s->user;
    if (namelen == 13 && memcmp(name, "server-timing", 13) == 0 && !r->resp.nst)
        r->resp.nst = http_parse_server_timing((const char *)value, valuelen, r->resp.st, HTTP_ST_MAX_ENTRIES);
    if (namelen == 12 && memcmp(name, "content-type", 12) == 0)
        r->resp.ct_value = http_content_type_is_sse((const char *)value, valuelen); /* noted; decided at the head */
}

/* The head is complete: are the body's events timed (--stream)? */
static void h3_on_response(struct h3_stream *s)
{
    struct req *r = s->user;
    if (!r->t->et->head)
        http_events_head(&r->resp.ev, r->resp.ct_value);
}

/* Body bytes: the matchers, then the events (SSE scanned; chunks: one per piece of DATA
 * nghttp3 hands over, as h2.c counts one per DATA frame). */
static void h3_on_data(struct h3_stream *s, const uint8_t *data, size_t len)
{
    struct req *r = s->user;
    if (r->t->et->matchers.n)
        http_matchers_feed(&r->t->et->matchers, r->resp.kmp, &r->resp.matched, (const char *)data, len);
    if (!r->resp.ev.on || !len)
        return;
    uint32_t events = r->resp.ev.count;
    uint64_t last_ns = r->resp.ev.last_ns;
    r->resp.ev.now_ns = 0;
    if (r->resp.ev.chunks)
        http_events_chunk(&r->resp.ev);
    else
        http_events_body(&r->resp.ev, (const char *)data, len);
    if (r->resp.ev.count != events)
        account_stream_gaps(r, events, last_ns);
}

static void h3_on_close(struct h3_stream *s)
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
    } else if (r->end == REQ_END_TIMEOUT || s->reason == H3_R_TIMEOUT) {
        o = OUTCOME_TIMEOUT;
    } else if (s->reason == H3_R_NONE) {
        o = account_classify(t->et, &r->resp);
        done = s->done_ns;
    } else if (s->reason == H3_R_STREAM_RESET) {
        r->tcause = RUN_TC_H3_STREAM_RESET;
        record_quic_reset_add(&t->pc.quic, s->error_code);
    } else if (s->reason == H3_R_CLOSED || s->reason == H3_R_SOCKET) {
        r->tcause = c->fail_cause ? (uint8_t)(c->fail_cause - 1) : (uint8_t)account_fail_cause(c, r, true);
    } else {
        r->tcause = (uint8_t)h3_cause(s->reason);
    }
    bool cancelled = r->end == REQ_END_CANCEL;
    req_complete(w, r, o, done);
    if (cancelled)
        return;
    worker_after_request(w, t, cl, conn_room(w, c) ? c : NULL);
    worker_maybe_finish(w);
}

static const struct h3_callbacks h3_callbacks_of_load = {
    .on_header = h3_on_header,
    .on_data = h3_on_data,
    .on_close = h3_on_close,
    .on_response = h3_on_response,
};

/* ------------------------------------------------------------------ the protocol row */

static bool h3_send(struct worker *w, struct conn *c, struct req *r)
{
    if (!r->c)
        req_attach(c, r);
    req_protocol(c, r);
    r->h3s.user = r;
    if (h3_client_submit(c->h3->cli, r->var ? r->var->h2 : &c->t->et->h2req, &r->h3s) != 0) {
        c->nreq--;
        pend_push(c->t, r);
        return true;
    }
    if (!conn_room(w, c))
        avail_remove(c->t, c);
    worker_due(w, c, DUE_FLUSH);
    return true;
}

static void h3_begin(struct worker *w, struct conn *c, struct req *r)
{
    c->t->pc.h3++;
    loop_io_mod(&w->loop, &c->io, EPOLLIN);
    c->want_out = false;
    c->req = NULL;
    worker_due(w, c, DUE_FLUSH);
    if (r)
        h3_send(w, c, r);
}

/* Datagrams arrived, the socket can take more, or the timer went off (events 0): c settles
 * after this callback. */
static void h3_on_io(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    struct conn *c = io->data;
    struct worker *w = c->w;
    worker_due(w, c, DUE_FLUSH);
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        h3_client_read(c->h3->cli);
}

static void h3_cancel(struct worker *w, struct conn *c, struct req *r)
{
    worker_due(w, c, DUE_FLUSH);
    h3_client_cancel(c->h3->cli, &r->h3s, H3_R_TIMEOUT);
}

static uint32_t h3_room(const struct conn *c)
{
    return h3_client_capacity(c->h3->cli);
}

static bool h3_idle(const struct conn *c)
{
    return !h3_client_open_streams(c->h3->cli);
}

static bool h3_usable(const struct conn *c)
{
    return h3_client_usable(c->h3->cli);
}

static bool h3_over(const struct worker *w, const struct conn *c)
{
    uint32_t open = h3_client_open_streams(c->h3->cli);
    return (c->due & DUE_CLOSE) || h3_client_done(c->h3->cli) || (!open && (c->nreq >= w->e->rpc || w->finished));
}

static void h3_end(struct worker *w, struct conn *c)
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

/* What waited for the client's callbacks to return: a failure fails the open streams, the
 * packets go out, the timer is re-armed, the connection closes when it is over, free streams
 * go to whoever waits (which may submit: flush again). */
static void h3_settle(struct worker *w, struct conn *c)
{
    struct target_rt *t = c->t;
    struct h3_client *h = c->h3->cli;
    for (int round = 0; round < 8; round++) {
        c->due &= (uint8_t)~DUE_FLUSH;
        bool blocked = h3_client_flush(h);
        if (!c->h3->counted && h3_client_handshake_done(h)) /* a 0-RTT connection's handshake ended */
            quic_count_handshake(c);
        if (h3_client_reason(h) != H3_R_NONE) {
            h3_note_failure(c);
            h3_client_fail(h, H3_R_CLOSED);
        }
        if (h3_over(w, c)) {
            h3_end(w, c);
            return;
        }
        conn_want_out(w, c, blocked);
        h3_arm(w, c);
        if (!h3_client_usable(h)) {
            avail_remove(t, c);
            if (c->group && c->group->conn == c) {
                c->group->conn = NULL;
                group_wake(w, c->group);
                group_grow(w, t);
            }
            return;
        }
        t->per_conn = w->e->h2_streams;
        if (!conn_room(w, c) || w->finished) {
            avail_remove(t, c);
            return;
        }
        if (c->group)
            group_refill(w, c);
        else
            pool_refill(w, t, c);
        if (!(c->due & (DUE_FLUSH | DUE_CLOSE)))
            return;
    }
}

/* Nothing to count here: the transport row counts the connection's datagrams when it closes,
 * a failed handshake's too (quic_close). */
static void h3_close(struct worker *w, struct conn *c)
{
    (void)w, (void)c;
}

static void h3_release(struct conn *c)
{
    (void)c; /* the transport row frees the client */
}

const struct proto_ops proto_h3 = {
    .log_proto = REQLOG_PROTO_H3,
    .begin = h3_begin,
    .room = h3_room,
    .send = h3_send,
    .on_io = h3_on_io,
    .cancel = h3_cancel,
    .idle = h3_idle,
    .usable = h3_usable,
    .settle = h3_settle,
    .close = h3_close,
    .release = h3_release,
};
