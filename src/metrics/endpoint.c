/* The scrape endpoint: a small HTTP/1.1 server on its own thread and event loop. Requests
 * are framed and capped by http/request; the bytes of the request being answered stay in the
 * connection's buffer, so its Accept header can be read by a second http-parser pass over
 * them (http/request keeps no header values, and a scrape a second is no cost to parse
 * twice). A scrape renders the registry into memory (open_memstream) and writes it with
 * keep-alive; nothing here touches a producer's thread.
 *
 * Closing after a response (an error, Connection: close, a connection over the cap) is a
 * lingering close, as knee serve and nginx do: shut down the sending side, then read and
 * discard what the client still sends until its EOF or a bound (LINGER_*), then close. A plain
 * close() with unread input sends a reset, and the client's kernel may then drop the answer
 * before the client reads it. */
#include "metrics/endpoint.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/loop.h"
#include "http/request.h"
#include "http/server_response.h"
#include "serve/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define IN_CAP 16384    /* a request (head <= 8 KiB, body <= 1 KiB) and what was pipelined after it */
#define ACCEPT_MAX 1024 /* bytes of Accept header kept for negotiation; the rest is ignored */
#define HEAD_MAX 512    /* a response head */
/* The lingering close: at most this long in all, this long without input, this many bytes. */
#define LINGER_TIME_NS (2 * NS_PER_S)
#define LINGER_IDLE_NS (1 * NS_PER_S)
#define LINGER_MAX_BYTES (1u << 20)
#define LINGER_READ_PER_EVENT (4 * IN_CAP)

struct mconn {
    struct metrics_endpoint *ep;
    struct mconn *prev, *next;
    struct loop_io io;
    struct loop_timer timer;
    struct http_request_parser parser;
    uint64_t active_ns;    /* last byte read or written */
    uint64_t accepted_ns;  /* the first request must be whole METRICS_EP_FIRST_REQUEST_TIMEOUT_NS after */
    uint64_t req_first_ns; /* first byte of the request being parsed; 0 before it comes */
    uint64_t recv_ns;      /* the last recv() that brought bytes */
    uint64_t answer_by_ns; /* the response in out must be written by then */
    uint64_t nrequests;    /* requests parsed on this connection */
    char *out;             /* the response being written, or NULL */
    size_t out_len, out_off;
    bool closing;   /* close once out is written (lingering first) */
    bool lingering; /* sending side shut down; reading and discarding until EOF or a bound */
    bool refused;   /* over METRICS_EP_MAX_CONNS: answered 503, not counted in nconns */
    uint64_t linger_start_ns, linger_bytes;
    size_t in_len;    /* bytes in `in` */
    size_t req_start; /* first byte of the request being parsed */
    size_t parsed;    /* bytes handed to the parser */
    char in[IN_CAP];
};

struct metrics_endpoint {
    struct metrics_registry *reg;
    struct loop loop;
    pthread_t thread;
    int listen_fd;
    struct loop_io listen_io;
    char address[96];
    int port;
    bool loopback;
    atomic_bool stop;
    struct mconn *conns;
    size_t nconns;
    size_t nrefused; /* refused connections lingering (at most METRICS_EP_MAX_CONNS) */
    _Atomic uint64_t scrapes, openmetrics, requests, errors, refused, connections, evicted;
};

static void count(_Atomic uint64_t *v)
{
    atomic_fetch_add_explicit(v, 1, memory_order_relaxed);
}

/* ---- connections ------------------------------------------------------------------------- */

static void conn_close(struct mconn *c)
{
    struct metrics_endpoint *ep = c->ep;
    loop_io_del(&ep->loop, &c->io);
    loop_timer_cancel(&ep->loop, &c->timer);
    close(c->io.fd);
    if (c->prev)
        c->prev->next = c->next;
    else
        ep->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->refused)
        ep->nrefused--;
    else
        ep->nconns--;
    free(c->out);
    free(c);
}

/* The deadlines are fixed instants that no byte moves, so a client that trickles holds its
 * slot no longer than one that sends nothing: the first request must be whole within the
 * first-request timeout of the accept; any request must be whole and answered within the
 * request timeout of its first byte; an idle keep-alive connection may wait for the next
 * scrape. */
static void conn_arm(struct mconn *c)
{
    uint64_t d;
    if (c->lingering) {
        uint64_t total = c->linger_start_ns + LINGER_TIME_NS, idle = c->active_ns + LINGER_IDLE_NS;
        d = total < idle ? total : idle;
    } else if (c->out) {
        d = c->answer_by_ns;
    } else if (c->nrequests == 0) {
        d = c->accepted_ns + METRICS_EP_FIRST_REQUEST_TIMEOUT_NS;
    } else if (c->req_first_ns) {
        d = c->req_first_ns + METRICS_EP_REQUEST_TIMEOUT_NS;
    } else {
        d = c->active_ns + METRICS_EP_IDLE_TIMEOUT_NS;
    }
    loop_timer_arm(&c->ep->loop, &c->timer, d);
}

static void on_conn_timer(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    conn_close(t->data);
}

/* Queue a response: head (and body unless head_only) in one buffer. */
static void respond(struct mconn *c, int status, const char *ctype, const char *body, size_t body_len,
                    const char *extra, bool head_only)
{
    char date[HTTP_DATE_LEN + 1], head[HEAD_MAX];
    http_date_format(clock_wall_ns(), date);
    size_t hn = http_response_head(head, sizeof head, status, date, ctype, body_len, extra, c->closing);
    size_t n = hn + (head_only ? 0 : body_len);
    c->out = xmalloc(n ? n : 1);
    memcpy(c->out, head, hn);
    if (!head_only && body_len)
        memcpy(c->out + hn, body, body_len);
    c->out_len = n;
    c->out_off = 0;
    c->answer_by_ns = (c->req_first_ns ? c->req_first_ns : c->ep->loop.now_ns) + METRICS_EP_REQUEST_TIMEOUT_NS;
    if (status >= 400)
        count(&c->ep->errors);
}

static void respond_text(struct mconn *c, int status, const char *text, const char *extra, bool head_only)
{
    respond(c, status, "text/plain; charset=utf-8", text, strlen(text), extra, head_only);
}

/* ---- the Accept header --------------------------------------------------------------------- */

struct accept_scan {
    char field[16];
    size_t field_len;
    bool field_long; /* longer than any name we look for */
    bool in_value;
    char value[ACCEPT_MAX];
    size_t value_len;
};

static int on_field(http_parser *hp, const char *at, size_t len)
{
    struct accept_scan *a = hp->data;
    if (a->in_value) {
        a->in_value = false;
        a->field_len = 0;
        a->field_long = false;
    }
    if (a->field_len + len >= sizeof a->field) {
        a->field_long = true;
        return 0;
    }
    memcpy(a->field + a->field_len, at, len);
    a->field_len += len;
    return 0;
}

static int on_value(http_parser *hp, const char *at, size_t len)
{
    struct accept_scan *a = hp->data;
    bool first_piece = !a->in_value;
    a->in_value = true;
    if (a->field_long || a->field_len != 6 || strncasecmp(a->field, "accept", 6) != 0)
        return 0;
    /* Several Accept fields are one list (RFC 9110 §5.3). */
    if (first_piece && a->value_len && a->value_len < sizeof a->value)
        a->value[a->value_len++] = ',';
    size_t room = sizeof a->value - a->value_len;
    size_t n = len < room ? len : room;
    memcpy(a->value + a->value_len, at, n);
    a->value_len += n;
    return 0;
}

/* Read the Accept header of the complete request in data[0..len) (bytes http/request has
 * already accepted). Returns its length; 0 when there is none. */
static size_t find_accept(const char *data, size_t len, struct accept_scan *a)
{
    static const http_parser_settings settings = {.on_header_field = on_field, .on_header_value = on_value};
    http_parser hp;
    memset(a, 0, sizeof *a);
    http_parser_init(&hp, HTTP_REQUEST);
    hp.data = a;
    http_parser_execute(&hp, &settings, data, len);
    return a->value_len;
}

/* ---- requests ---------------------------------------------------------------------------- */

static const char index_text[] =
    "knee metrics: GET /metrics (Prometheus text format 0.0.4, or OpenMetrics 1.0 when the "
    "Accept header asks for it)\n";

static void serve_metrics(struct mconn *c, bool head_only)
{
    struct metrics_endpoint *ep = c->ep;
    struct accept_scan a;
    size_t alen = find_accept(c->in + c->req_start, c->parsed - c->req_start, &a);
    enum metrics_format fmt = metrics_negotiate(alen ? a.value : NULL, alen);
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f)
        knee_oom();
    int rc = metrics_render(ep->reg, fmt, f);
    if (fclose(f) != 0 || rc != 0) {
        free(body);
        c->closing = true;
        respond_text(c, 500, "knee metrics: rendering failed\n", NULL, head_only);
        return;
    }
    respond(c, 200, metrics_content_type(fmt), body, len, NULL, head_only);
    free(body);
    count(&ep->scrapes);
    if (fmt == METRICS_FORMAT_OPENMETRICS)
        count(&ep->openmetrics);
}

static void handle_request(struct mconn *c)
{
    const struct http_request *r = &c->parser.req;
    count(&c->ep->requests);
    c->nrequests++;
    if (!r->keep_alive || r->upgrade)
        c->closing = true;
    bool head_only = r->method == HTTP_HEAD;
    bool get = r->method == HTTP_GET || head_only;
    bool metrics = http_request_path_is(r, "/metrics");
    if (!metrics && !http_request_path_is(r, "/")) {
        respond_text(c, 404, "not found: knee serves its metrics at /metrics\n", NULL, head_only);
        return;
    }
    if (!get) {
        respond_text(c, 405, "method not allowed: GET or HEAD\n", "Allow: GET, HEAD\r\n", head_only);
        return;
    }
    if (metrics)
        serve_metrics(c, head_only);
    else
        respond_text(c, 200, index_text, NULL, head_only);
}

/* Parse requests from the buffer while no response is pending (pipelined requests are
 * answered in order, one at a time). */
static void process_input(struct mconn *c)
{
    while (!c->out && !c->closing && c->parsed < c->in_len) {
        enum http_request_state st;
        size_t n = http_request_parse(&c->parser, c->in + c->parsed, c->in_len - c->parsed, &st);
        c->parsed += n;
        if (st == HTTP_REQUEST_MORE)
            break;
        if (st == HTTP_REQUEST_ERROR) {
            c->closing = true;
            respond_text(c, c->parser.error_status, "bad request\n", NULL, false);
            break;
        }
        handle_request(c);
        http_request_next(&c->parser);
        c->req_start = c->parsed;
        /* The next request's bytes, if any are here, came with the last recv(): no recv()
         * happens while a request is answered, nor before the buffer is parsed. */
        c->req_first_ns = c->parsed < c->in_len ? c->recv_ns : 0;
    }
    if (c->req_start == c->in_len)
        c->in_len = c->req_start = c->parsed = 0;
}

/* The answer is all in the kernel's hands: send FIN after it, and from now on read and discard
 * (the lingering close above). */
static void conn_linger(struct mconn *c)
{
    shutdown(c->io.fd, SHUT_WR);
    c->lingering = true;
    c->linger_start_ns = c->active_ns = c->ep->loop.now_ns;
    c->linger_bytes = 0;
    loop_io_mod(&c->ep->loop, &c->io, EPOLLIN);
    conn_arm(c);
}

/* Read and discard, up to LINGER_READ_PER_EVENT bytes per readiness event. Returns false when
 * the connection was closed: EOF (the client read its answer and closed), an error, or more
 * than LINGER_MAX_BYTES. The time bounds are the timer's (conn_arm). */
static bool linger_read(struct mconn *c)
{
    size_t got = 0;
    while (got < LINGER_READ_PER_EVENT) {
        ssize_t n = recv(c->io.fd, c->in, IN_CAP, 0);
        if (n > 0) {
            got += (size_t)n;
            c->linger_bytes += (uint64_t)n;
            c->active_ns = c->ep->loop.now_ns;
            if (c->linger_bytes > LINGER_MAX_BYTES)
                break;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            conn_arm(c);
            return true;
        }
        break;
    }
    if (got >= LINGER_READ_PER_EVENT && c->linger_bytes <= LINGER_MAX_BYTES) {
        conn_arm(c);
        return true; /* level-triggered: the rest comes with the next event */
    }
    conn_close(c);
    return false;
}

/* Write what is pending. Returns false when the connection was closed or now lingers. */
static bool conn_flush(struct mconn *c)
{
    while (c->out && c->out_off < c->out_len) {
        ssize_t n = send(c->io.fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            c->active_ns = c->ep->loop.now_ns;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n < 0 && errno == EINTR)
            continue;
        conn_close(c);
        return false;
    }
    if (c->out) {
        free(c->out);
        c->out = NULL;
        if (c->closing) {
            conn_linger(c);
            return false;
        }
    }
    return true;
}

/* One recv per readiness event. Returns false when the connection was closed. */
static bool conn_read(struct mconn *c)
{
    if (c->in_len == IN_CAP && c->req_start > 0) {
        memmove(c->in, c->in + c->req_start, c->in_len - c->req_start);
        c->in_len -= c->req_start;
        c->parsed -= c->req_start;
        c->req_start = 0;
    }
    if (c->in_len == IN_CAP) {
        /* One request fills the buffer: more than the caps allow, however it was counted. */
        c->closing = true;
        respond_text(c, 431, "request too large\n", NULL, false);
        return true;
    }
    ssize_t n = recv(c->io.fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
    if (n > 0) {
        c->in_len += (size_t)n;
        c->active_ns = c->recv_ns = c->ep->loop.now_ns;
        if (!c->req_first_ns)
            c->req_first_ns = c->recv_ns;
        return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return true;
    conn_close(c); /* EOF or error: a scraper never half-closes while waiting */
    return false;
}

static void on_conn_io(struct loop *loop, struct loop_io *io, uint32_t events)
{
    struct mconn *c = io->data;
    if (events & EPOLLERR) {
        conn_close(c);
        return;
    }
    if (c->lingering) {
        if (events & (EPOLLIN | EPOLLHUP))
            linger_read(c);
        return;
    }
    if ((events & EPOLLOUT) && !conn_flush(c))
        return;
    if ((events & (EPOLLIN | EPOLLHUP)) && !c->out && !conn_read(c))
        return;
    /* Answer what is buffered, one request at a time, until the socket is full. */
    while (!c->out) {
        process_input(c);
        if (!c->out)
            break;
        if (!conn_flush(c))
            return;
        if (c->out)
            break; /* a partial write: EPOLLOUT resumes */
    }
    loop_io_mod(loop, &c->io, c->out ? EPOLLOUT : EPOLLIN);
    conn_arm(c);
}

/* ---- accepting --------------------------------------------------------------------------- */

static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

static struct mconn *conn_new(struct metrics_endpoint *ep, int fd)
{
    struct mconn *c = xcalloc(1, sizeof *c);
    c->ep = ep;
    c->io = (struct loop_io){.fd = fd, .cb = on_conn_io, .data = c};
    loop_timer_init(&c->timer, on_conn_timer, c);
    http_request_parser_init(&c->parser, METRICS_EP_HEADER_MAX, METRICS_EP_BODY_MAX);
    c->active_ns = c->accepted_ns = ep->loop.now_ns;
    if (loop_io_add(&ep->loop, &c->io, EPOLLIN) < 0) {
        close(fd);
        free(c);
        return NULL;
    }
    c->next = ep->conns;
    if (ep->conns)
        ep->conns->prev = c;
    ep->conns = c;
    return c;
}

/* Over the cap: 503, then a lingering close like any other (up to METRICS_EP_MAX_CONNS of
 * them at once; beyond, the 503 is sent and the socket closed at once). */
static void refuse(struct metrics_endpoint *ep, int fd)
{
    if (ep->nrefused >= METRICS_EP_MAX_CONNS) {
        ssize_t w = send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)w;
        close(fd);
        return;
    }
    struct mconn *c = conn_new(ep, fd);
    if (!c)
        return;
    c->refused = true;
    ep->nrefused++;
    c->closing = true;
    c->out = xmalloc(sizeof busy - 1);
    memcpy(c->out, busy, sizeof busy - 1);
    c->out_len = sizeof busy - 1;
    if (conn_flush(c)) { /* a partial write: EPOLLOUT resumes it */
        loop_io_mod(&ep->loop, &c->io, EPOLLOUT);
        conn_arm(c);
    }
}

/* The connection idle the longest between scrapes (one request answered at least, none begun,
 * nothing to write), or NULL. Closing it for a new client costs a scraper one reconnect, and
 * keeps clients that scrape once and stay idle from holding the slots for the idle timeout. */
static struct mconn *idle_victim(struct metrics_endpoint *ep)
{
    struct mconn *v = NULL;
    for (struct mconn *c = ep->conns; c; c = c->next)
        if (!c->refused && !c->lingering && !c->closing && !c->out && c->nrequests && !c->req_first_ns &&
            (!v || c->active_ns < v->active_ns))
            v = c;
    return v;
}

static void on_accept(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    (void)events;
    struct metrics_endpoint *ep = io->data;
    for (int i = 0; i < 16; i++) {
        int fd = accept4(ep->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        struct mconn *victim = ep->nconns >= METRICS_EP_MAX_CONNS ? idle_victim(ep) : NULL;
        if (victim) {
            count(&ep->evicted);
            conn_close(victim);
        }
        if (ep->nconns >= METRICS_EP_MAX_CONNS) {
            count(&ep->refused); /* before the answer: a client may read the stats right after it */
            refuse(ep, fd);
            continue;
        }
        struct mconn *c = conn_new(ep, fd);
        if (!c)
            continue;
        ep->nconns++;
        count(&ep->connections);
        conn_arm(c);
    }
}

/* ---- the thread -------------------------------------------------------------------------- */

static void *endpoint_main(void *arg)
{
    struct metrics_endpoint *ep = arg;
    while (!atomic_load(&ep->stop)) {
        int r = loop_run_once(&ep->loop, UINT64_MAX);
        if (r < 0)
            break;
    }
    return NULL;
}

static bool is_loopback(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return false;
    if (ss.ss_family == AF_INET)
        return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
    if (ss.ss_family == AF_INET6) {
        const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

int metrics_endpoint_check(const char *listen, char *err, size_t errlen)
{
    char host[256];
    int port;
    if (listen_split(listen, host, sizeof host, &port))
        return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not ADDR:PORT (127.0.0.1:9464, [::1]:9464, :9464)", listen);
    return 0;
}

int metrics_endpoint_start(struct metrics_registry *reg, const char *listen, struct metrics_endpoint **out, char *err,
                           size_t errlen)
{
    *out = NULL;
    struct metrics_endpoint *ep = xcalloc(1, sizeof *ep);
    ep->reg = reg;
    int fd = listen_open(listen, 64, ep->address, sizeof ep->address, &ep->port);
    if (fd < 0) {
        free(ep);
        if (fd == KNEE_EINVAL)
            return knee_fail(err, errlen, fd, "'%s' is not ADDR:PORT, or does not resolve", listen);
        return knee_fail(err, errlen, fd, "%s: %s", listen, knee_strerror(fd));
    }
    ep->listen_fd = fd;
    ep->loopback = is_loopback(fd);
    int rc = loop_init(&ep->loop);
    if (rc) {
        close(fd);
        free(ep);
        return knee_fail(err, errlen, rc, "event loop: %s", knee_strerror(rc));
    }
    ep->listen_io = (struct loop_io){.fd = fd, .cb = on_accept, .data = ep};
    rc = loop_io_add(&ep->loop, &ep->listen_io, EPOLLIN);
    /* The thread must never take a signal meant for the command (SIGINT, SIGTERM). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (rc == 0)
        rc = -pthread_create(&ep->thread, NULL, endpoint_main, ep);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        loop_release(&ep->loop);
        close(fd);
        free(ep);
        return knee_fail(err, errlen, rc, "starting the endpoint: %s", knee_strerror(rc));
    }
    *out = ep;
    return 0;
}

const char *metrics_endpoint_address(const struct metrics_endpoint *ep)
{
    return ep->address;
}

int metrics_endpoint_port(const struct metrics_endpoint *ep)
{
    return ep->port;
}

bool metrics_endpoint_loopback(const struct metrics_endpoint *ep)
{
    return ep->loopback;
}

void metrics_endpoint_stats(const struct metrics_endpoint *ep, struct metrics_endpoint_stats *out)
{
    out->scrapes = atomic_load(&ep->scrapes);
    out->openmetrics = atomic_load(&ep->openmetrics);
    out->requests = atomic_load(&ep->requests);
    out->errors = atomic_load(&ep->errors);
    out->refused = atomic_load(&ep->refused);
    out->connections = atomic_load(&ep->connections);
    out->evicted = atomic_load(&ep->evicted);
}

void metrics_endpoint_stop(struct metrics_endpoint *ep)
{
    if (!ep)
        return;
    atomic_store(&ep->stop, true);
    loop_wake(&ep->loop);
    pthread_join(ep->thread, NULL);
    while (ep->conns)
        conn_close(ep->conns);
    loop_io_del(&ep->loop, &ep->listen_io);
    close(ep->listen_fd);
    loop_release(&ep->loop);
    free(ep);
}
