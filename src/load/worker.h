/* The request path of a load thread, private to its files: a connection (struct conn) with its
 * transport row (struct conn_ops: how its bytes move) and, once it is ready, its protocol row
 * (struct proto_ops: what the bytes mean), the requests in flight (struct req), the closed
 * loop's clients, and the functions the files share. Everything here runs on the thread that
 * owns the worker; nothing takes a lock.
 *
 *   worker.c      dispatch, the timeout FIFO, the due list, the phases, the thread
 *   conn.c        the connection pool and lifecycle: open, connect, handshake, ready, close
 *   transport.c   the transport rows: plain sockets and TLS (uring.c: the io_uring row)
 *   h1.c, h2.c    the protocol rows: HTTP/1.1, HTTP/2 (sessions over src/h2)
 *   openloop.c    the schedule, the queue and the pool of the open loop
 *   closedloop.c  the clients and their groups of the closed loop
 *   account.c     recording: counts, histograms, the log, events; the cause classifiers
 *
 * "Sent" (T1) is when knee began sending a request: the write (HTTP/1.1) or the submit of its
 * HEADERS (HTTP/2: they leave with the connection's flush once the callback that submitted
 * them returns, worker_settle) on an open connection, or the start of the connect when a connection was opened for
 * it (its connect and handshake are then part of its latency). Every planned request reaches
 * exactly one of: dropped (never sent), or one outcome after being sent. */
#ifndef KNEE_LOAD_WORKER_H
#define KNEE_LOAD_WORKER_H

#include "h3/h3.h"
#include "load/internal.h"

/* A connection's life (conn.c draws it): FREE -> CONNECTING -> HANDSHAKING (a transport with
 * a handshake: TLS) -> READY (its protocol row chosen: HTTP/1.1 idle or busy, HTTP/2 with any
 * number of streams) -> FREE. */
enum conn_state { CONN_FREE, CONN_CONNECTING, CONN_HANDSHAKING, CONN_READY };

/* How a request ends when the worker ends it itself (a timeout, the cancel at the end). */
enum req_end { REQ_END_NONE, REQ_END_TIMEOUT, REQ_END_CANCEL };

/* A request from its send (T1) to its outcome. Taken from the thread's pool when sent,
 * returned at its outcome: an HTTP/1.1 connection carries one at a time (conn.req), an HTTP/2
 * connection one per open stream (its h2_stream is embedded: stream.user points back). */
struct req {
    struct conn *c;        /* the connection it rides; NULL while it waits for one (pending) */
    struct target_rt *t;   /* its target */
    struct client *client; /* closed loop: the client that sent it */
    struct variant *var;   /* a target with a request source: what it sends (NULL: the target's request) */
    bool warm;             /* planned during the warm-up */
    bool reused;           /* not its connection's first request */
    bool retried;          /* already sent once (--retry-stale, or HTTP/2 GOAWAY/REFUSED_STREAM) */
    bool pending;          /* on its target's pending list (waits for a stream to be sent again) */
    uint8_t end;           /* enum req_end */
    uint8_t tcause;        /* enum run_transport_cause, when it ends in transport */
    uint8_t proto;         /* REQLOG_PROTO_* of the connection it went on */
    uint8_t tls_kind;      /* REQLOG_TLS_* of that connection */
    uint32_t conn_id;
    uint64_t planned_ns, sent_ns, first_byte_ns;
    uint64_t connect_ns, tls_ns; /* the connect and handshake it waited for (0: none) */
    const char *buf;             /* HTTP/1.1: the bytes to write */
    size_t len, write_off;
    struct req *tprev, *tnext; /* timeout FIFO */
    struct req *next;          /* free list, pending list */
    struct h2_stream stream;   /* HTTP/2 */
    struct h3_stream h3s;      /* HTTP/3 */
    struct http_response resp; /* HTTP/1.1: the parser; HTTP/2: status, bytes, matches, Server-Timing */
    /* its gaps between events as they arrive, for a log that carries them (engine_target.log_gaps;
     * else never allocated): the first REQLOG_MAX_GAPS, the histograms get every one */
    uint64_t *gaps;
    uint32_t ngaps, gaps_cap;
};

/* ------------------------------------------------------------------ the transport row */

/* What a connection's bytes go through, after wrk's `sock` table: plain sockets, TLS
 * (transport.c), an io_uring (uring.c). A row is chosen when the connection is opened (TLS for
 * https) and may be swapped once when it is ready (conn_ready: cleartext HTTP/1.1 on a thread
 * with a ring). read and write return TLS_IO_OK (bytes moved), TLS_IO_WANT_READ /
 * TLS_IO_WANT_WRITE (wait for that readiness; a completion row's queued send answers
 * WANT_READ: its completion calls the protocol's on_io with EPOLLOUT), TLS_IO_EOF (read: the
 * peer closed) or TLS_IO_ERROR (conn.sys_errno or conn.tls say why). NULL members: the row
 * has nothing to do there (the io_uring row only takes over ready connections: no connect, no
 * handshake). */
struct conn_ops {
    /* Start a non-blocking connect of c to addr: c->io.fd set, 0; or -errno (nothing open). */
    int (*connect)(struct conn *c, const struct net_addr *addr);
    /* After a readiness event of a connecting c: 0 (connected, or not yet: the caller checks the
     * events) or -errno (the connect failed). */
    int (*connected)(struct conn *c);
    /* The connect finished: set up the handshake's state (0, or < 0: it could not begin). NULL:
     * no handshake, the connection is ready at once. */
    int (*start)(struct conn *c);
    /* One step of the handshake (TLS_IO_OK: done). */
    enum tls_io (*handshake)(struct conn *c);
    /* The handshake ran out of time (--timeout): mark it failed. */
    void (*timeout)(struct conn *c);
    /* After the handshake: counts what it negotiated into pc, sets c->log_tls, and returns the
     * protocol ALPN chose (TLS_PROTO_*; -1: none, prior knowledge decides). */
    int (*opened)(struct conn *c, struct run_proto_counts *pc);
    /* This row takes over a ready connection (the io_uring row leaves epoll). */
    void (*attach)(struct conn *c);
    enum tls_io (*read)(struct conn *c, void *buf, size_t cap, size_t *got);
    enum tls_io (*write)(struct conn *c, const void *buf, size_t len, size_t *put);
    /* Bytes the row holds that readiness will not announce (TLS records OpenSSL read ahead).
     * NULL: it holds none, so a short read emptied the socket. */
    bool (*pending)(const struct conn *c);
    /* Close: a goodbye where the row has one (TLS close_notify, one try), then free its state;
     * the descriptor is the caller's. */
    void (*close)(struct conn *c);
    /* Free its state without a goodbye (the thread's end). */
    void (*release)(struct conn *c);
    /* After the TCP connect, an exchange before the connection counts as connected (a proxy's
     * CONNECT, proxy.c): 1 not done yet (wait for readiness), 0 done, or < 0 failed (-errno;
     * proxy_fail_cause says why). NULL: none. */
    int (*tunnel)(struct conn *c);
    /* A row that fixes its protocol (QUIC: HTTP/3); NULL: ALPN or prior knowledge decides. */
    const struct proto_ops *proto;
};
/* conn_proxy_tls_ops: TLS inside a proxy's CONNECT tunnel (transport.c, proxy.c); conn_quic_ops:
 * QUIC (h3.c) */
extern const struct conn_ops conn_plain_ops, conn_tls_ops, conn_ring_ops, conn_proxy_tls_ops, conn_quic_ops;
/* conn_stamped_ops: cleartext HTTP/1.1 read with the kernel's receive timestamps (deferred
 * reads, transport.c); rx_at: when the bytes of c's last read arrived, for a request sent at
 * sent_ns: that timestamp when the row took one (never before the send), else now */
extern const struct conn_ops conn_stamped_ops;
uint64_t conn_rx_at(const struct conn *c, uint64_t sent_ns);

/* ------------------------------------------------------------------ the protocol row */

/* What a ready connection speaks, chosen once when it becomes ready (ALPN, or prior knowledge:
 * --h2c, --http2 over TLS), after h2o's httpclient: h1.c, h2.c. NULL members: see each. */
struct proto_ops {
    uint8_t log_proto; /* REQLOG_PROTO_* of its requests */
    /* c just became ready; r: the request bound to it while it connected (NULL: none). Counts
     * the connection's protocol, then sends r or takes whatever waits. */
    void (*begin)(struct worker *w, struct conn *c, struct req *r);
    /* Requests c can take now (before --requests-per-connection, which conn_room applies). */
    uint32_t (*room)(const struct conn *c);
    /* Send r (in flight, not on a connection) on c, which has room. false: it failed at once
     * (accounted, c closed); the caller goes on as after any failed request. */
    bool (*send)(struct worker *w, struct conn *c, struct req *r);
    /* Readiness of the socket (EPOLLIN, EPOLLOUT, ...): the loop's callback of a ready
     * connection (io.data is the conn; a completion row calls it with EPOLLOUT when a send
     * completed). */
    loop_io_fn *on_io;
    /* Bytes a completion row received: n > 0 bytes at buf, 0 the peer's end-of-file, < 0 a
     * failed receive (-errno). NULL: the protocol reads through readiness only. */
    void (*input)(struct worker *w, struct conn *c, const char *buf, long n);
    /* End r (r->end says why) without closing c: the protocol accounts it (HTTP/2: RST_STREAM).
     * NULL: the connection is closed under the request (the response may still come). */
    void (*cancel)(struct worker *w, struct conn *c, struct req *r);
    /* No request open on c: it may be closed to make room for another target's. */
    bool (*idle)(const struct conn *c);
    /* false once c takes no new requests ever (HTTP/2 after GOAWAY). NULL: always usable. */
    bool (*usable)(const struct conn *c);
    /* The work deferred for c (worker_due), after the callback that asked for it returned: write
     * what was queued (one flush for everything submitted meanwhile), close c when it is over,
     * give its room to whoever waits. NULL: the protocol defers nothing, closes at once. */
    void (*settle)(struct worker *w, struct conn *c);
    /* Free the protocol's state of c and add its counters to the target's (conn_close). */
    void (*close)(struct worker *w, struct conn *c);
    /* Free it without counting (the thread's end). */
    void (*release)(struct conn *c);
};
extern const struct proto_ops proto_h1, proto_h2, proto_h3;

/* ------------------------------------------------------------------ connections */

/* conn.due: what waits for the due list (worker_settle). */
#define DUE_LISTED 1u /* on the worker's due list (or being settled) */
#define DUE_FLUSH 2u  /* frames were submitted and wait for a flush */
#define DUE_CLOSE 4u  /* close it once its settle runs */

struct conn {
    struct loop_io io; /* io.data = this conn */
    struct worker *w;
    struct target_rt *t;
    const struct conn_ops *ops;    /* its transport row */
    const struct proto_ops *proto; /* its protocol row, once READY (NULL before) */
    struct cgroup *group;          /* closed loop: the clients sharing it; NULL in the open loop */
    enum conn_state state;
    uint32_t id;
    uint64_t freed_iter; /* loop iteration it was freed in: not reused in the same batch */
    uint64_t connect_start_ns, connected_ns;
    uint64_t connect_ns, tls_ns; /* how long its connect and handshake took */
    uint32_t nreq;               /* requests begun on this connection */
    bool want_out;               /* EPOLLOUT is armed */
    bool close_after;            /* HTTP/1.1: out of step, close after this response */
    bool avail;                  /* open loop: on its target's list of connections with room */
    bool in_cfifo;               /* on the deadline FIFO of connections without a request */
    bool for_queue;              /* open loop: opened for the queue, counted in connecting_unbound until ready */
    bool h2_noroom;              /* HTTP/2: its server allows no stream now (counted in its target's h2_noroom) */
    bool tls_on;                 /* the TLS row's state (tls) is set up */
    uint8_t due;                 /* DUE_*: deferred work (worker_due) */
    uint8_t log_proto, log_tls;  /* REQLOG_PROTO_* and REQLOG_TLS_* of its requests, once READY */
    uint8_t fail_cause;          /* enum run_transport_cause + 1 when the connection failed (0: it did not) */
    int sys_errno;               /* the plain transport's failed read or write */
    uint64_t rx_ns;              /* the stamped row: the kernel's receive time of the last read (0: none) */
    /* the io_uring row (uring.c) */
    bool ring;                  /* its bytes go through the thread's ring, not epoll */
    bool ring_recv;             /* its multishot receive is armed */
    bool ring_sent;             /* a send completed: ring_res is what the next write returns */
    uint16_t ring_gen;          /* in its ring requests' user_data: an earlier life's completions are stale */
    int32_t ring_res;           /* that send's result: bytes, or -errno */
    struct req *req;            /* HTTP/1.1: the request in flight; CONNECTING/HANDSHAKING: the one bound to it */
    struct conn *next;          /* free list */
    struct conn *aprev, *anext; /* open loop: the target's list of connections with room */
    struct conn *cprev, *cnext; /* the deadline FIFO of connections without a request */
    struct conn *dnext;         /* the worker's due list */
    struct tls_conn tls;
    struct h2_client *h2;
    /* --proxy (proxy.c): the TCP connect is done (a tunnel's exchange follows), the CONNECT bytes
     * written, the proxy's answer so far; http:// requests rewritten to absolute form (kept
     * across the connection's lives, freed with the thread) */
    bool tcp_up;
    uint32_t proxy_sent;
    struct net_proxy_head phead;
    char *pxbuf;
    size_t pxcap;
    /* --connect-rate (route.c): waiting for its turn to connect (no socket yet), its queue */
    bool rate_wait;
    struct conn *rprev, *rnext;
    struct h3_link *h3; /* HTTP/3 (h3.c): its QUIC client and timer */
};

/* A closed-loop client: sends, waits for the full response, (thinks), sends again. */
struct client {
    struct worker *w;
    struct target_rt *t;
    struct cgroup *g;
    struct loop_timer think;
    bool done;
    bool waiting; /* on its group's wait list: every stream of the connection is busy */
    struct client *wnext;
    /* closed-loop stages (plan/clients.h): the client's rank, whether the stages have it run now
     * (always without stages), whether it is parked (retired: nothing in flight, no think, not
     * waiting; a new activation starts its loop again), and the timer of its next toggle */
    uint32_t rank;
    bool active, idle;
    struct loop_timer stage;
};

/* Closed loop: the clients that share one connection (--streams of them; one for HTTP/1.1). A
 * client whose connection has no free stream waits here, before planning its request. */
struct cgroup {
    struct target_rt *t;
    struct conn *conn; /* the connection new requests go on (NULL: the next one opens it) */
    struct client *wait_head, *wait_tail;
};

static inline struct run_counts *counts_of(struct target_rt *t, bool warm)
{
    return &t->counts[warm ? 1 : 0];
}

/* c holds bytes readiness will not announce. */
static inline bool conn_pending(const struct conn *c)
{
    return c->ops->pending && c->ops->pending(c);
}

/* After a read of got bytes into the thread's buffer: read again now? Over a row that holds
 * nothing a short read emptied the socket; over TLS a read returns one record at most, so
 * read on, and never leave while the row holds bytes. At most WORKER_READS buffers a turn, so
 * a peer that sends faster than we parse cannot keep the loop from its timers (epoll is
 * level-triggered: the rest waits for the next turn). */
static inline bool conn_read_again(const struct conn *c, size_t got, int *reads)
{
    if (!c->ops->pending)
        return got == WORKER_RBUF && ++*reads < WORKER_READS;
    return ++*reads < WORKER_READS || c->ops->pending(c);
}

/* c takes no new requests ever (HTTP/2 after GOAWAY): its group opens the next connection. */
static inline bool conn_unusable(const struct conn *c)
{
    return c->proto && c->proto->usable && !c->proto->usable(c);
}

/* Requests c can take now: its protocol's room, none before it is ready or once it has begun
 * --requests-per-connection of them. */
static inline uint32_t conn_room(const struct worker *w, const struct conn *c)
{
    if (c->nreq >= w->e->rpc || !c->proto)
        return 0;
    uint32_t cap = c->proto->room(c), left = w->e->rpc - c->nreq;
    return cap < left ? cap : left;
}

/* Arm EPOLLOUT (out) or not, besides EPOLLIN; no call when nothing changes. */
static inline void conn_want_out(struct worker *w, struct conn *c, bool out)
{
    if (out != c->want_out) {
        loop_io_mod(&w->loop, &c->io, EPOLLIN | (out ? EPOLLOUT : 0));
        c->want_out = out;
    }
}

/* The open loop's connections with room, most recently freed first (a warm connection, and
 * the cold ones age out by the server's keep-alive timeout, as a stack of idle ones did). */
static inline void avail_push(struct target_rt *t, struct conn *c)
{
    if (c->avail)
        return;
    c->avail = true;
    c->aprev = NULL;
    c->anext = t->avail;
    if (t->avail)
        t->avail->aprev = c;
    t->avail = c;
}

static inline void avail_remove(struct target_rt *t, struct conn *c)
{
    if (!c->avail)
        return;
    c->avail = false;
    if (c->aprev)
        c->aprev->anext = c->anext;
    else
        t->avail = c->anext;
    if (c->anext)
        c->anext->aprev = c->aprev;
    c->aprev = c->anext = NULL;
}

/* Send r on c (it has room): c's protocol row's send. */
static inline bool conn_send(struct worker *w, struct conn *c, struct req *r)
{
    return c->proto->send(w, c, r);
}

/* ---- conn.c */
/* Start a connect. 0 with *out CONNECTING (on the deadline FIFO until a request is bound to
 * it), or -errno (nothing allocated stays). for_queue: an open-loop connection for the queue. */
int conn_open(struct worker *w, struct target_rt *t, struct conn **out, bool for_queue);
/* Close c (it carries no request any more; an HTTP/2 session has no open stream) and free what
 * it holds: its protocol's state, then its transport's. */
void conn_close(struct worker *w, struct conn *c);
/* Close c once nothing of it is running: at once, or through its settle (a protocol that
 * defers). */
void conn_close_soon(struct worker *w, struct conn *c);
/* A request is bound to a connection that is not ready yet (CONNECTING, HANDSHAKING): it goes
 * out as soon as the connection is (conn_ready), and its timeout covers the connection's. */
void conn_bind(struct worker *w, struct conn *c, struct req *r);
/* The request on c (c->req) ends with outcome o at done_ns and c is closed. Dispatches
 * nothing. */
void conn_drop(struct worker *w, struct conn *c, enum reqlog_outcome o, uint64_t done_ns);
/* A connection failed before it was ready: its bound request fails with the cause, or,
 * without one, whoever waited for it hears of it (conn_failed). */
void conn_fail(struct worker *w, struct conn *c, enum run_transport_cause cause);
/* A connection that carries no request closed or failed (cause: why, when it failed before
 * it was ready). Whoever needs a connection hears of it. */
void conn_failed(struct worker *w, struct conn *c, enum run_transport_cause cause);
/* The timer of the deadline FIFO of connections that carry no request while they connect or
 * handshake (worker.conn_timer). */
void conn_on_timeout(struct loop *loop, struct loop_timer *timer);

/* ---- worker.c */
/* --connect-rate: r, bound to a connection that waited for its turn, is sent (T1) only now, at the
 * start of that connect: its send time and its deadline move (conn_dial_late). */
void req_sent_at(struct worker *w, struct req *r, uint64_t sent_ns);
/* Requests in flight come from a pool that grows by REQ_CHUNK (req_alloc_chunk, when it is
 * empty) and is never shrunk. */
struct req *req_alloc_chunk(struct worker *w);
static inline struct req *req_alloc(struct worker *w)
{
    struct req *r = w->req_free;
    if (!r)
        return req_alloc_chunk(w);
    w->req_free = r->next;
    return r;
}
void req_release(struct worker *w, struct req *r);
void req_init(struct req *r, struct target_rt *t, struct client *cl, struct variant *v, uint64_t planned_ns, bool warm,
              uint64_t sent_ns);
/* A new response: no gaps kept; a list grown past REQ_GAPS_KEEP is freed. */
#define REQ_GAPS_KEEP 65536u
void req_gaps_reset(struct req *r);
/* A new request, sent at sent_ns: counted as sent, in flight, on the timeout FIFO. */
struct req *req_begin(struct worker *w, struct target_rt *t, struct client *cl, uint64_t planned_ns, bool warm,
                      uint64_t sent_ns);
/* r goes on c: the connection's number, whether it is reused. The connection's first request
 * carries its connect and handshake times: here when c was ready before a request came for it
 * (a closed-loop connection whose handshake finished first), in conn_ready when the request
 * waited for c. */
static inline void req_attach(struct conn *c, struct req *r)
{
    r->c = c;
    r->conn_id = c->id;
    r->reused = c->nreq++ > 0;
    if (!r->reused) {
        r->connect_ns = c->connect_ns;
        r->tls_ns = c->tls_ns;
    }
}
/* n (new, from req_alloc) takes r's place in the timeout FIFO; r goes back to the pool. */
void req_replace(struct worker *w, struct req *r, struct req *n);
/* The request r ends with outcome o: accounted, out of the FIFO, back to the pool. The caller
 * has detached it from its connection. */
void req_complete(struct worker *w, struct req *r, enum reqlog_outcome o, uint64_t done_ns);
/* r leaves the FIFO and the requests in flight without an outcome of its own (the caller
 * accounted it) and goes back to the pool. */
void req_discard(struct worker *w, struct req *r);
/* What c speaks, into r (its log record's protocol and TLS). */
static inline void req_protocol(const struct conn *c, struct req *r)
{
    r->proto = c->log_proto;
    r->tls_kind = c->log_tls;
}
/* Requests sent once that wait for a stream to be sent again (HTTP/2 GOAWAY, REFUSED_STREAM),
 * in order; pend_send sends the first on c (which has room). */
void pend_push(struct target_rt *t, struct req *r);
void pend_remove(struct target_rt *t, struct req *r);
void pend_send(struct worker *w, struct conn *c);
/* Send a planned request: on c when given (it has room), else on a new connection. Returns
 * true when the request is in flight, false when it already failed (accounted, connection
 * gone). */
bool worker_dispatch(struct worker *w, struct target_rt *t, struct client *cl, struct conn *c, uint64_t planned_ns,
                     bool warm);
/* A request of t ended (cl: its closed-loop client; alive: its connection when it still has
 * room, else NULL): the next request goes out. */
void worker_after_request(struct worker *w, struct target_rt *t, struct client *cl, struct conn *alive);
/* Stop planning at at_ns: the drain begins. */
void worker_end_planning(struct worker *w, uint64_t at_ns);
/* The second that ended by now is published first, when its tick has not run yet: a send at
 * now then counts in its own second (the open loop's early wake runs before the tick's
 * timer and may poll past the second's end, openloop.c sched_wait_out). */
void worker_tick_due(struct worker *w, uint64_t now);
/* Nothing planned, in flight or queued: the thread is done (publishes its last interval). */
void worker_maybe_finish(struct worker *w);
/* c (ready, with a settle) has work deferred until the current callback returns: what (DUE_*
 * bits, 0: only a settle) is added, and c goes on the due list once. */
void worker_due(struct worker *w, struct conn *c, uint8_t what);
/* Run the due list until it is empty (the loop calls it after every callback). */
void worker_settle(struct worker *w);

/* ---- openloop.c */
/* On the start: the first planned request of each target (none: planning ends). */
void open_start(struct worker *w);
/* The schedule timer (worker.sched_timer): every request due now is issued. */
void open_on_sched(struct loop *loop, struct loop_timer *timer);
/* Before t0: about a millisecond's worth of connections per target. */
void open_preconnect(struct worker *w);
/* A connection of the pool has room (c), or went away (NULL): requests to send again, then
 * the queue, then connects for what is left. */
void pool_refill(struct worker *w, struct target_rt *t, struct conn *c);
/* Open connections for the queued requests (one connect in progress per request). */
void pool_grow(struct worker *w, struct target_rt *t);
/* The connect opened for the queue failed (cause, attempted at attempt_ns): the request at its
 * head fails with it. */
void pool_fail_queued(struct worker *w, struct target_rt *t, uint64_t attempt_ns, enum run_transport_cause cause);
/* The drain is over: every queued request is dropped. */
void pool_drop_queued(struct worker *w);

/* ---- closedloop.c */
/* This thread's clients and groups (worker_init). */
void closed_init(struct worker *w);
/* On the start: every client sends its first request. */
void closed_start(struct worker *w);
/* Before t0: one connection per group. */
void closed_preconnect(struct worker *w);
/* Planning ended: no client sends again. */
void closed_stop(struct worker *w);
/* The client's next request (or its end: the budget is spent, planning is over). */
void client_next(struct client *cl);
/* c (of a closed-loop group) has room: requests to send again first, then the waiting
 * clients, one per free stream. */
void group_refill(struct worker *w, struct conn *c);
/* g's connection went away: the clients waiting on it get their turn. */
void group_wake(struct worker *w, struct cgroup *g);
/* Requests to send again need a connection of their client's group. */
void group_grow(struct worker *w, struct target_rt *t);

/* ---- account.c */
/* Account a finished request (any outcome but dropped): counts, histograms, log, events. */
void account_record(struct worker *w, struct req *r, enum reqlog_outcome o, uint64_t done_ns);
/* A planned request that was never sent. */
void account_dropped(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm);
/* Count a request as sent at sent_ns (T1). */
void account_sent(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm, uint64_t sent_ns);
/* A request that failed in transport before it had a connection of its own (its connect failed
 * at once, or the connect opened for the queue it waited in failed). It was attempted: counted
 * as sent at sent_ns unless `counted` (a request sent again already is), and accounted. */
void account_unconnected(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm, uint64_t sent_ns,
                         enum run_transport_cause cause, bool counted);
/* A read brought events to r's response (http_events: `before` events so far, the last at
 * last_ns): every gap since that one into its target's event_gap histogram (not in the warm-up). */
void account_stream_gaps(struct req *r, uint32_t before, uint64_t last_ns);
/* The outcome of a complete response: rejected (--reject), ok (2xx/3xx with --expect-body
 * found), invalid (its body lacks it) or http_error. Pure. */
enum reqlog_outcome account_classify(const struct engine_target *et, const struct http_response *r);
/* The cause of a failed connect (-errno). Pure. */
enum run_transport_cause account_connect_cause(int err);
/* The cause of a TLS failure by its reason. Pure. */
enum run_transport_cause account_tls_cause(enum tls_reason r);
/* The cause of a failed read or write (-errno, or 0 for end-of-file) for request r (may be
 * NULL). Before any byte of the response, on a reused connection, whatever ended it is the
 * server's close of a connection it thought idle: stale. Pure. */
enum run_transport_cause account_io_cause(const struct req *r, int err);
/* Why the byte stream of c failed for request r (r may be NULL): end-of-file (eof), the TLS
 * layer's reason (a TLS close or socket error is the plain one), or the socket's errno. Pure. */
enum run_transport_cause account_fail_cause(const struct conn *c, const struct req *r, bool eof);
/* Why an HTTP/2 stream that did not complete failed (r: its request, for H2_R_CLOSED with its
 * connection's cause). Pure. */
enum run_transport_cause account_stream_cause(enum h2_reason reason, const struct conn *c, const struct req *r);

/* ---- variant.c: the requests of a target with a request source, prepared ahead */
/* The target's ring, filled (t->et->target->source), on the thread that will use it. */
void vring_init(struct worker *w, struct target_rt *t);
void vring_release(struct target_rt *t);
/* The next prepared request (prepared now when the ring ran dry); NULL when the source has no
 * more: the run is asked to stop (a pipe's end, or an entry that could not be used). */
struct variant *vring_pop(struct worker *w, struct target_rt *t);
/* A request can be taken (vring_pop will not return NULL); false asks the run to stop. */
bool vring_ready(struct worker *w, struct target_rt *t);
/* A request that vring_ready counted will not take one after all (dropped before its send). */
void vring_unreserve(struct target_rt *t);
/* Give a request's variant back to its target's ring. */
void variant_put(struct target_rt *t, struct variant *v);
/* After a loop callback (w->vneed): top every ring up. */
void vring_refill(struct worker *w);

/* ---- route.c: how a connection is made (--proxy, --local-address, --connect-rate) */
/* The transport row of a new connection to t: TLS for https (inside a tunnel with --proxy),
 * plain for http. */
const struct conn_ops *route_ops(const struct engine *e, const struct target_rt *t);
/* Where c's TCP connect goes (the proxy, or addr) and from where (NULL: the kernel's choice; else
 * the next source address, round-robin per thread from an offset of its own). */
const struct net_addr *route_dest(const struct conn *c, const struct net_addr *addr);
const struct net_addr *route_source(struct worker *w);
/* --connect-rate: true when a new connection must wait for its turn (then route_wait queues it:
 * conn.c's conn_dial runs when it comes); false: connect now (the turn is taken). */
bool route_must_wait(struct worker *w, uint64_t now);
void route_wait(struct worker *w, struct conn *c);
/* c leaves the queue of connections waiting for their turn (it closed before its connect). */
void route_unwait(struct worker *w, struct conn *c);
/* The pacing rule (pure): may a connect start at now, given *next_ns (the earliest time of the
 * next one, 0 at first) and gap_ns (the least gap)? true: *next_ns moves on by the gap. */
bool route_pace(uint64_t *next_ns, uint64_t gap_ns, uint64_t now);
/* Timer callback: the connections whose turn came are dialled. */
void route_on_timer(struct loop *loop, struct loop_timer *timer);

/* ---- conn.c, for route.c: start the TCP connect of c, which waited for its turn (a failure is
 * accounted as any failed connect) */
void conn_dial_late(struct worker *w, struct conn *c);

/* ---- proxy.c: --proxy on the request path */
/* The tunnel row's exchange (conn_ops.tunnel): write the CONNECT, read the proxy's answer. */
int proxy_tunnel(struct conn *c);
/* The cause of a failed connect of c (-errno r): proxy_refused when the proxy answered its
 * CONNECT with a status other than 2xx (counted by status in the target's pc), else as
 * account_connect_cause. */
enum run_transport_cause proxy_fail_cause(const struct conn *c, int r);
/* http:// through a proxy: r's bytes (set by h1.c) rewritten to the absolute form with the
 * proxy's credentials, into c's own buffer. */
void proxy_request_bytes(struct conn *c, struct req *r);

#endif
