/* The transport probe (probe.h): one connection, an epoll loop, the byte-stream vtable (plain or
 * TLS), HTTP/1.1 or HTTP/2 above it. Written the way knee run's worker drives src/tls and
 * src/h2 (load/transport, load/worker), so the tests exercise the APIs as the engine uses them. */
#include "probe.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/loop.h"
#include "http/client.h"
#include "http/response.h"
#include "net/net.h"
#include "net/url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROBE_RBUF 65536
#define PROBE_MAX_STREAMS 256

enum pstate { S_CONNECTING, S_HANDSHAKE, S_H1, S_H2, S_DONE };

struct probe;

/* The per-connection byte stream: the vtable knee run's connections have (load/transport's conn_ops). */
struct xops {
    enum tls_io (*read)(struct probe *p, void *buf, size_t cap, size_t *got);
    enum tls_io (*write)(struct probe *p, const void *buf, size_t len, size_t *put);
};

struct probe {
    const struct probe_config *cfg;
    struct probe_result *res;
    struct loop loop;
    struct loop_io io;
    struct loop_timer hs_timer, all_timer;
    struct url url;
    struct net_addr addr;
    const struct xops *ops;
    struct tls_conn tls;
    bool tls_used;
    int sys_errno;
    enum pstate state;
    uint64_t connect_start_ns, connected_ns;
    unsigned requests, streams;
    /* HTTP/1.1 */
    char *req;
    size_t req_len, off;
    struct http_response resp;
    uint64_t t1_ns, first_byte_ns;
    unsigned remaining;
    /* HTTP/2 */
    struct h2_client *h2;
    struct h2_request h2req;
    bool h2req_built;
    struct h2_stream st[PROBE_MAX_STREAMS];
    bool busy[PROBE_MAX_STREAMS];
    unsigned to_submit;
    bool want_out, write_err;
    char rbuf[PROBE_RBUF];
};

/* ---- the two byte streams ------------------------------------------------------------------ */

static enum tls_io plain_read(struct probe *p, void *buf, size_t cap, size_t *got)
{
    *got = 0;
    for (;;) {
        ssize_t n = read(p->io.fd, buf, cap);
        if (n > 0) {
            *got = (size_t)n;
            return TLS_IO_OK;
        }
        if (n == 0)
            return TLS_IO_EOF;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return TLS_IO_WANT_READ;
        p->sys_errno = errno;
        return TLS_IO_ERROR;
    }
}

static enum tls_io plain_write(struct probe *p, const void *buf, size_t len, size_t *put)
{
    *put = 0;
    for (;;) {
        ssize_t n = send(p->io.fd, buf, len, MSG_NOSIGNAL);
        if (n >= 0) {
            *put = (size_t)n;
            return TLS_IO_OK;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return TLS_IO_WANT_WRITE;
        p->sys_errno = errno;
        return TLS_IO_ERROR;
    }
}

static enum tls_io tls_read(struct probe *p, void *buf, size_t cap, size_t *got)
{
    return tls_conn_read(&p->tls, buf, cap, got);
}

static enum tls_io tls_write(struct probe *p, const void *buf, size_t len, size_t *put)
{
    return tls_conn_write(&p->tls, buf, len, put);
}

static const struct xops plain_ops = {plain_read, plain_write};
static const struct xops tls_ops = {tls_read, tls_write};

/* ---- ending -------------------------------------------------------------------------------- */

static void finish(struct probe *p, const char *phase, const char *reason, const char *detail)
{
    if (p->state == S_DONE)
        return;
    p->res->phase = phase;
    if (strcmp(p->res->reason, "none") == 0) {
        p->res->reason = reason;
        snprintf(p->res->detail, sizeof p->res->detail, "%s", detail ? detail : "");
    }
    p->state = S_DONE;
}

/* A read or write of the byte stream failed: the reason of the layer that failed. */
static void transport_failed(struct probe *p, const char *phase)
{
    if (p->tls_used && p->tls.reason != TLS_R_NONE) {
        finish(p, phase, tls_reason_name(p->tls.reason), p->tls.detail);
        p->res->sys_errno = p->tls.sys_errno;
        return;
    }
    p->res->sys_errno = p->sys_errno;
    finish(p, phase, p->sys_errno == ECONNRESET ? "reset" : "socket", strerror(p->sys_errno));
}

static void set_mask(struct probe *p, uint32_t ev)
{
    loop_io_mod(&p->loop, &p->io, ev);
}

/* ---- HTTP/1.1 ------------------------------------------------------------------------------- */

static void h1_send_next(struct probe *p);

static void record_server_timing(struct probe *p, const struct http_response *r)
{
    size_t n = 0;
    p->res->server_timing[0] = '\0';
    for (size_t i = 0; i < r->nst && n < sizeof p->res->server_timing; i++)
        n += (size_t)snprintf(p->res->server_timing + n, sizeof p->res->server_timing - n, "%s%s;dur=%.3f",
                              i ? ", " : "", r->st[i].name, r->st[i].dur_ms);
}

static void h1_done(struct probe *p)
{
    uint64_t now = clock_now_ns();
    struct probe_result *res = p->res;
    res->completed++;
    res->last_status = p->resp.status;
    if (p->resp.status >= 200 && p->resp.status < 300)
        res->ok++;
    res->body_bytes += p->resp.body_bytes;
    if (now - p->t1_ns > res->max_service_ns)
        res->max_service_ns = now - p->t1_ns;
    record_server_timing(p, &p->resp);
    p->remaining--;
    if (p->remaining && p->resp.keep_alive)
        h1_send_next(p);
    else
        finish(p, "done", "none", NULL);
}

static void h1_write(struct probe *p)
{
    while (p->off < p->req_len) {
        size_t put;
        enum tls_io r = p->ops->write(p, p->req + p->off, p->req_len - p->off, &put);
        if (r == TLS_IO_OK) {
            p->off += put;
            continue;
        }
        if (r == TLS_IO_WANT_WRITE || r == TLS_IO_WANT_READ) {
            set_mask(p, EPOLLIN | (r == TLS_IO_WANT_WRITE ? EPOLLOUT : 0));
            return;
        }
        transport_failed(p, "http");
        return;
    }
    set_mask(p, EPOLLIN);
}

static void h1_read(struct probe *p)
{
    for (;;) {
        size_t got;
        enum tls_io r = p->ops->read(p, p->rbuf, sizeof p->rbuf, &got);
        if (r == TLS_IO_OK) {
            if (!p->first_byte_ns) {
                p->first_byte_ns = clock_now_ns();
                uint64_t d = p->first_byte_ns - p->t1_ns;
                if (!p->res->min_t1_to_first_byte_ns || d < p->res->min_t1_to_first_byte_ns)
                    p->res->min_t1_to_first_byte_ns = d;
            }
            size_t used;
            enum http_feed f = http_response_feed(&p->resp, p->rbuf, got, &used);
            if (f == HTTP_FEED_DONE) {
                h1_done(p);
                return;
            }
            if (f == HTTP_FEED_ERROR) {
                finish(p, "http", "http_invalid", p->resp.error_name);
                return;
            }
            continue;
        }
        if (r == TLS_IO_WANT_READ)
            return;
        if (r == TLS_IO_WANT_WRITE) {
            set_mask(p, EPOLLIN | EPOLLOUT);
            return;
        }
        if (r == TLS_IO_EOF) {
            if (http_response_eof(&p->resp) == HTTP_FEED_DONE)
                h1_done(p);
            else
                finish(p, "http", p->resp.bytes ? "closed_mid_response" : "closed_before_response",
                       p->tls_used && !p->tls.eof_clean ? "EOF without close_notify" : "EOF");
            return;
        }
        transport_failed(p, "http");
        return;
    }
}

static void h1_send_next(struct probe *p)
{
    http_response_init(&p->resp, NULL, p->cfg->method && strcmp(p->cfg->method, "HEAD") == 0);
    p->t1_ns = clock_now_ns();
    p->first_byte_ns = 0;
    p->off = 0;
    p->res->sent++;
    h1_write(p);
}

static void h1_start(struct probe *p)
{
    struct http_request_spec spec = {
        .method = p->cfg->method,
        .url = &p->url,
        .body = p->cfg->body,
        .body_len = p->cfg->body_len,
        .keepalive = p->requests > 1,
    };
    char why[200];
    if (http_client_build_request(&spec, &p->req, &p->req_len, why, sizeof why)) {
        finish(p, "http", "request", why);
        return;
    }
    snprintf(p->res->proto, sizeof p->res->proto, "http/1.1");
    p->state = S_H1;
    p->remaining = p->requests;
    h1_send_next(p);
}

/* ---- HTTP/2 --------------------------------------------------------------------------------- */

static long h2_write(void *io, const uint8_t *data, size_t len)
{
    struct probe *p = io;
    size_t put;
    enum tls_io r = p->ops->write(p, data, len, &put);
    if (r == TLS_IO_OK)
        return (long)put;
    if (r == TLS_IO_WANT_WRITE) {
        p->want_out = true;
        return 0;
    }
    if (r == TLS_IO_WANT_READ)
        return 0; /* EPOLLIN is always armed */
    p->write_err = true;
    return -1;
}

static void on_stream_header(struct h2_stream *s, const uint8_t *name, size_t namelen, const uint8_t *value,
                             size_t valuelen)
{
    struct probe *p = s->user;
    if (namelen == 13 && memcmp(name, "server-timing", 13) == 0)
        snprintf(p->res->server_timing, sizeof p->res->server_timing, "%.*s", (int)valuelen, value);
}

static void on_stream_close(struct h2_stream *s)
{
    struct probe *p = s->user;
    struct probe_result *res = p->res;
    p->busy[s - p->st] = false;
    res->by_reason[s->reason]++;
    if (s->reason == H2_R_NONE) {
        res->completed++;
        res->last_status = s->status;
        if (s->status >= 200 && s->status < 300)
            res->ok++;
        res->body_bytes += s->body_bytes;
        uint64_t t1 = s->headers_ns ? s->headers_ns : s->submit_ns;
        if (s->done_ns - t1 > res->max_service_ns)
            res->max_service_ns = s->done_ns - t1;
        if (s->first_byte_ns) {
            uint64_t d = s->first_byte_ns - t1;
            if (!res->min_t1_to_first_byte_ns || d < res->min_t1_to_first_byte_ns)
                res->min_t1_to_first_byte_ns = d;
        }
        return;
    }
    res->failed_streams++;
    if (strcmp(res->reason, "none") == 0) {
        res->reason = h2_reason_name(s->reason);
        snprintf(res->detail, sizeof res->detail, "stream %d: %s%s%s", s->id, h2_reason_name(s->reason),
                 s->error_code ? " " : "", s->error_code ? h2_error_code_name(s->error_code) : "");
    }
}

static void h2_check_end(struct probe *p)
{
    struct probe_result *res = p->res;
    if (res->completed + res->failed_streams >= p->requests) {
        finish(p, res->failed_streams ? "http" : "done", "none", NULL);
        return;
    }
    if (h2_client_done(p->h2) && !h2_client_open_streams(p->h2)) {
        enum h2_reason r = h2_client_reason(p->h2);
        finish(p, "http", r != H2_R_NONE ? h2_reason_name(r) : "h2_goaway", h2_client_detail(p->h2));
    }
}

/* Submit what the stream cap allows, then write. */
static void h2_pump(struct probe *p)
{
    while (p->to_submit && h2_client_capacity(p->h2) > 0) {
        unsigned k = 0;
        while (k < p->streams && p->busy[k])
            k++;
        if (k == p->streams)
            break;
        p->st[k].user = p;
        if (h2_client_submit(p->h2, &p->h2req, &p->st[k]) != 0)
            break;
        p->busy[k] = true;
        p->to_submit--;
        p->res->sent++;
        uint32_t open = h2_client_open_streams(p->h2);
        if (open > p->res->max_open)
            p->res->max_open = open;
    }
    p->want_out = false;
    enum h2_io r = h2_client_flush(p->h2);
    p->res->server_max_streams = h2_client_server_max_streams(p->h2);
    if (r == H2_IO_ERROR) {
        if (p->write_err) {
            h2_client_fail(p->h2, H2_R_CLOSED);
            transport_failed(p, "http");
            return;
        }
        h2_check_end(p);
        return;
    }
    set_mask(p, EPOLLIN | (r == H2_IO_WANT_WRITE || p->want_out ? EPOLLOUT : 0));
    h2_check_end(p);
}

static void h2_read(struct probe *p)
{
    for (;;) {
        size_t got;
        enum tls_io r = p->ops->read(p, p->rbuf, sizeof p->rbuf, &got);
        if (r == TLS_IO_OK) {
            if (h2_client_feed(p->h2, (const uint8_t *)p->rbuf, got) != 0) {
                h2_check_end(p);
                finish(p, "http", h2_reason_name(h2_client_reason(p->h2)), h2_client_detail(p->h2));
                return;
            }
            continue;
        }
        if (r == TLS_IO_WANT_READ || r == TLS_IO_WANT_WRITE)
            break;
        h2_client_fail(p->h2, H2_R_CLOSED);
        if (r == TLS_IO_EOF)
            finish(p, "http", "h2_closed", "the server closed the connection");
        else
            transport_failed(p, "http");
        return;
    }
    h2_pump(p);
}

static void h2_start(struct probe *p)
{
    struct http_request_spec spec = {
        .method = p->cfg->method,
        .url = &p->url,
        .body = p->cfg->body,
        .body_len = p->cfg->body_len,
        .keepalive = true,
    };
    char why[200];
    if (h2_request_build(&spec, &p->h2req, why, sizeof why)) {
        finish(p, "http", "request", why);
        return;
    }
    p->h2req_built = true;
    static const struct h2_callbacks cb = {.on_header = on_stream_header, .on_close = on_stream_close};
    p->h2 = h2_client_new(&cb, h2_write, p, p, p->streams);
    snprintf(p->res->proto, sizeof p->res->proto, "h2");
    p->state = S_H2;
    p->to_submit = p->requests;
    h2_pump(p);
}

/* ---- connect and handshake ------------------------------------------------------------------ */

static void start_http(struct probe *p)
{
    bool h2 = p->tls_used ? p->tls.proto == TLS_PROTO_H2 : p->cfg->proto == PROBE_H2C;
    if (h2)
        h2_start(p);
    else
        h1_start(p);
}

static void handshake(struct probe *p)
{
    enum tls_io r = tls_conn_handshake(&p->tls);
    if (r == TLS_IO_WANT_READ) {
        set_mask(p, EPOLLIN);
        return;
    }
    if (r == TLS_IO_WANT_WRITE) {
        set_mask(p, EPOLLOUT);
        return;
    }
    if (r != TLS_IO_OK) {
        transport_failed(p, "tls");
        return;
    }
    p->res->tls_ns = clock_now_ns() - p->connected_ns;
    p->res->resumed = p->tls.resumed;
    snprintf(p->res->version, sizeof p->res->version, "%s", tls_conn_version(&p->tls));
    snprintf(p->res->cipher, sizeof p->res->cipher, "%s", tls_conn_cipher(&p->tls));
    loop_timer_cancel(&p->loop, &p->hs_timer);
    start_http(p);
}

static void on_io(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    struct probe *p = io->data;
    switch (p->state) {
    case S_CONNECTING: {
        int r = net_connect_finish(p->io.fd);
        if (r == 0 && !(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        if (r) {
            p->res->sys_errno = -r;
            finish(p, "connect", r == -ECONNREFUSED ? "refused" : "connect", strerror(-r));
            return;
        }
        p->connected_ns = clock_now_ns();
        p->res->connect_ns = p->connected_ns - p->connect_start_ns;
        if (!p->tls_used) {
            loop_timer_cancel(&p->loop, &p->hs_timer);
            start_http(p);
            return;
        }
        if (tls_conn_client(&p->tls, p->cfg->tls, p->io.fd, p->url.host, p->cfg->cache)) {
            finish(p, "tls", "tls_setup", "SSL_new failed");
            return;
        }
        p->state = S_HANDSHAKE;
        handshake(p);
        return;
    }
    case S_HANDSHAKE:
        handshake(p);
        return;
    case S_H1:
        if ((events & EPOLLOUT) && p->off < p->req_len)
            h1_write(p);
        if (p->state == S_H1 && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
            h1_read(p);
        return;
    case S_H2:
        if (events & EPOLLOUT)
            h2_pump(p);
        if (p->state == S_H2 && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
            h2_read(p);
        return;
    case S_DONE:
        return;
    }
}

static void on_hs_timer(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct probe *p = t->data;
    if (p->state == S_CONNECTING) {
        finish(p, "connect", "connect_timeout", "no connection within the handshake timeout");
    } else if (p->state == S_HANDSHAKE) {
        tls_conn_fail(&p->tls, TLS_R_HANDSHAKE_TIMEOUT, "the handshake did not finish in time");
        finish(p, "tls", tls_reason_name(TLS_R_HANDSHAKE_TIMEOUT), p->tls.detail);
    }
}

static void on_all_timer(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct probe *p = t->data;
    if (p->state == S_H2) {
        for (unsigned k = 0; k < p->streams; k++)
            if (p->busy[k])
                h2_client_cancel(p->h2, &p->st[k], H2_R_TIMEOUT);
    }
    finish(p, p->state == S_H1 || p->state == S_H2 ? "http" : "connect", "timeout", "the probe's timeout");
}

int probe_run(const struct probe_config *cfg, struct probe_result *res)
{
    memset(res, 0, sizeof *res);
    res->phase = "connect";
    res->reason = "none";
    struct probe *p = xcalloc(1, sizeof *p);
    p->cfg = cfg;
    p->res = res;
    p->requests = cfg->requests ? cfg->requests : 1;
    p->streams = cfg->streams ? cfg->streams : 1;
    if (p->streams > PROBE_MAX_STREAMS)
        p->streams = PROBE_MAX_STREAMS;
    char why[256];
    int r = url_parse(cfg->url, &p->url, why, sizeof why);
    if (r == 0 && p->url.tls && !cfg->tls)
        r = KNEE_EINVAL;
    if (r == 0)
        r = net_resolve(p->url.host, p->url.port_str, &p->addr, &(uint64_t){0}, why, sizeof why);
    if (r) {
        url_release(&p->url);
        free(p);
        return r;
    }
    p->tls_used = p->url.tls;
    p->ops = p->tls_used ? &tls_ops : &plain_ops;
    if ((r = loop_init(&p->loop)) != 0) {
        url_release(&p->url);
        free(p);
        return r;
    }
    loop_timer_init(&p->hs_timer, on_hs_timer, p);
    loop_timer_init(&p->all_timer, on_all_timer, p);
    p->connect_start_ns = clock_now_ns();
    int fd = -1;
    r = net_connect_start(&p->addr, &fd);
    if (r) {
        res->sys_errno = -r;
        finish(p, "connect", r == -ECONNREFUSED ? "refused" : "connect", strerror(-r));
    } else {
        p->io.fd = fd;
        p->io.cb = on_io;
        p->io.data = p;
        loop_io_add(&p->loop, &p->io, EPOLLIN | EPOLLOUT);
        uint64_t hs = cfg->handshake_timeout_ns ? cfg->handshake_timeout_ns : 5 * NS_PER_S;
        uint64_t all = cfg->timeout_ns ? cfg->timeout_ns : 10 * NS_PER_S;
        loop_timer_arm(&p->loop, &p->hs_timer, p->connect_start_ns + hs);
        loop_timer_arm(&p->loop, &p->all_timer, p->connect_start_ns + all);
    }
    while (p->state != S_DONE)
        if (loop_run_once(&p->loop, 100 * NS_PER_MS) < 0)
            break;
    if (p->h2) {
        res->h2 = *h2_client_stats(p->h2);
        h2_client_fail(p->h2, H2_R_CLOSED);
        h2_client_free(p->h2);
    }
    if (p->h2req_built)
        h2_request_release(&p->h2req);
    free(p->req);
    if (p->tls_used) {
        tls_conn_shutdown(&p->tls);
        tls_conn_release(&p->tls);
    }
    if (fd >= 0)
        close(fd);
    loop_release(&p->loop);
    url_release(&p->url);
    free(p);
    return 0;
}
