/* One blocking HTTP/1.1 exchange (http/fetch.h): the socket is non-blocking, as every socket of
 * knee's, and poll() waits for it against one deadline, so a server that accepts and never
 * answers costs the timeout and no more. The response is parsed by http-parser with callbacks
 * that keep what the engine's parser throws away: the reason, the headers and the body. */
#include "http/fetch.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/grow.h"
#include "http/client.h"
#include "net/net.h"
#include "net/route.h"
#include "net/url.h"
#include "tls/tls.h"

#include <errno.h>
#include <http_parser.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A growable byte string (the header being read, the body). */
struct bytes {
    char *p;
    size_t len, cap;
};

static void bytes_add(struct bytes *b, const char *s, size_t n)
{
    b->p = grow_array(b->p, &b->cap, b->len + n + 1, 1, 64);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

struct fetch {
    int fd;
    struct tls_ctx *ctx; /* https:// */
    const struct net_route *route;
    struct tls_conn tls;
    bool tls_on;
    uint64_t deadline_ns;
    http_parser parser;
    struct http_fetch_response *res;
    struct bytes field, value, body;
    bool in_value; /* the last callback was a header value: a new field starts a new header */
    bool head;     /* a HEAD request: no body follows */
    bool done;
    bool too_many, too_big;
};

/* ------------------------------------------------------------------ the response's callbacks */

static int header_done(struct fetch *f)
{
    if (!f->in_value && !f->field.len)
        return 0;
    struct http_fetch_response *r = f->res;
    if (r->nheaders == HTTP_FETCH_MAX_HEADERS) {
        f->too_many = true;
        return 1;
    }
    r->names = xrealloc(r->names, (r->nheaders + 1) * sizeof *r->names);
    r->values = xrealloc(r->values, (r->nheaders + 1) * sizeof *r->values);
    const char *v = f->value.p ? f->value.p : "";
    size_t n = f->value.len;
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t')) /* http-parser keeps a value's trailing spaces */
        n--;
    r->names[r->nheaders] = xstrdup(f->field.p ? f->field.p : "");
    r->values[r->nheaders] = xmalloc(n + 1);
    memcpy(r->values[r->nheaders], v, n);
    r->values[r->nheaders][n] = '\0';
    r->nheaders++;
    f->field.len = f->value.len = 0;
    f->in_value = false;
    return 0;
}

static int on_status(http_parser *p, const char *at, size_t len)
{
    struct http_fetch_response *r = ((struct fetch *)p->data)->res;
    size_t have = strlen(r->reason), room = sizeof r->reason - 1 - have;
    size_t n = len < room ? len : room;
    memcpy(r->reason + have, at, n);
    r->reason[have + n] = '\0';
    return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    struct fetch *f = p->data;
    if (f->in_value && header_done(f))
        return 1;
    bytes_add(&f->field, at, len);
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    struct fetch *f = p->data;
    f->in_value = true;
    bytes_add(&f->value, at, len);
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    struct fetch *f = p->data;
    if (header_done(f))
        return -1;
    f->res->status = p->status_code;
    return f->head ? 1 : 0; /* 1: no body follows (RFC 9110 §9.3.2) */
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    struct fetch *f = p->data;
    if (f->body.len + len > HTTP_FETCH_MAX_BODY) {
        f->too_big = true;
        return 1;
    }
    bytes_add(&f->body, at, len);
    return 0;
}

/* Drop what a 1xx interim response left (RFC 9110 §15.2): the final response follows it. */
static void interim_reset(struct fetch *f)
{
    struct http_fetch_response *r = f->res;
    for (size_t i = 0; i < r->nheaders; i++) {
        free(r->names[i]);
        free(r->values[i]);
    }
    r->nheaders = 0;
    r->reason[0] = '\0';
    r->status = 0;
    f->body.len = 0;
}

static int on_message_complete(http_parser *p)
{
    struct fetch *f = p->data;
    if (p->status_code >= 100 && p->status_code < 200 && p->status_code != 101) {
        interim_reset(f);
        return 0;
    }
    f->done = true;
    http_parser_pause(p, 1); /* bytes after the response are not ours */
    return 0;
}

static const http_parser_settings SETTINGS = {
    .on_status = on_status,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* ------------------------------------------------------------------ the socket, against the deadline */

/* Wait until fd is ready for ev or the deadline passes. 0, -ETIMEDOUT or -errno. */
static int wait_fd(struct fetch *f, short ev)
{
    for (;;) {
        uint64_t now = clock_now_ns();
        if (now >= f->deadline_ns)
            return -ETIMEDOUT;
        uint64_t left_ms = (f->deadline_ns - now + NS_PER_MS - 1) / NS_PER_MS;
        struct pollfd pfd = {.fd = f->fd, .events = ev};
        int n = poll(&pfd, 1, left_ms > 60000 ? 60000 : (int)left_ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
    }
}

static int tls_failed(const struct fetch *f, char *err, size_t errlen)
{
    return knee_fail(err, errlen, KNEE_EINVAL, "TLS: %s%s%s", tls_reason_name(f->tls.reason),
                     f->tls.detail[0] ? ": " : "", f->tls.detail);
}

/* A TLS step's want as a poll event; 0 for anything else. */
static short tls_want(enum tls_io r)
{
    return r == TLS_IO_WANT_READ ? POLLIN : r == TLS_IO_WANT_WRITE ? POLLOUT : 0;
}

static int connect_to(struct fetch *f, const struct url *u, char *err, size_t errlen)
{
    struct net_addr addr;
    uint64_t resolve_ns;
    char why[256];
    if (net_route_resolve(f->route, u->host, u->port_str, &addr, &resolve_ns, why, sizeof why) != 0)
        return knee_fail(err, errlen, KNEE_ENOTFOUND, "%s: %s", u->host, why);
    snprintf(f->res->address, sizeof f->res->address, "%s", addr.text);
    int r = net_connect_start(&addr, &f->fd);
    if (r == 0 && (r = wait_fd(f, POLLOUT)) == 0)
        r = net_connect_finish(f->fd);
    if (r)
        return knee_fail(err, errlen, r, "connect %s: %s", addr.text,
                         r == -ETIMEDOUT ? "no connection within the timeout" : strerror(-r));
    if (!u->tls)
        return 0;
    if (tls_conn_client(&f->tls, f->ctx, f->fd, u->host, NULL) != 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "TLS: the connection could not be set up");
    f->tls_on = true;
    for (;;) {
        enum tls_io t = tls_conn_handshake(&f->tls);
        if (t == TLS_IO_OK)
            return 0;
        if (!tls_want(t))
            return tls_failed(f, err, errlen);
        if ((r = wait_fd(f, tls_want(t))) != 0)
            return knee_fail(err, errlen, r, "TLS handshake with %s: %s", addr.text,
                             r == -ETIMEDOUT ? "not done within the timeout" : strerror(-r));
    }
}

static int write_all(struct fetch *f, const char *p, size_t n, char *err, size_t errlen)
{
    while (n) {
        size_t put = 0;
        short want = POLLOUT;
        if (f->tls_on) {
            enum tls_io t = tls_conn_write(&f->tls, p, n, &put);
            if (t != TLS_IO_OK && !tls_want(t))
                return tls_failed(f, err, errlen);
            want = tls_want(t);
        } else {
            ssize_t w = send(f->fd, p, n, MSG_NOSIGNAL);
            if (w < 0 && errno != EAGAIN && errno != EINTR)
                return knee_fail(err, errlen, -errno, "writing the request to %s: %s", f->res->address,
                                 strerror(errno));
            put = w > 0 ? (size_t)w : 0;
        }
        p += put;
        n -= put;
        int r = n && !put ? wait_fd(f, want) : 0;
        if (r)
            return knee_fail(err, errlen, r, "writing the request to %s: %s", f->res->address,
                             r == -ETIMEDOUT ? "not written within the timeout" : strerror(-r));
    }
    return 0;
}

/* Some bytes of the response: 0 with *got (0: the peer closed), or an error. */
static int read_some(struct fetch *f, char *buf, size_t cap, size_t *got, char *err, size_t errlen)
{
    for (;;) {
        short want = POLLIN;
        if (f->tls_on) {
            enum tls_io t = tls_conn_read(&f->tls, buf, cap, got);
            if (t == TLS_IO_OK)
                return 0;
            if (t == TLS_IO_EOF) {
                *got = 0;
                return 0;
            }
            if (!tls_want(t))
                return tls_failed(f, err, errlen);
            want = tls_want(t);
        } else {
            ssize_t n = recv(f->fd, buf, cap, 0);
            if (n >= 0) {
                *got = (size_t)n;
                return 0;
            }
            if (errno != EAGAIN && errno != EINTR)
                return knee_fail(err, errlen, -errno, "reading the response from %s: %s", f->res->address,
                                 strerror(errno));
        }
        int r = wait_fd(f, want);
        if (r)
            return knee_fail(err, errlen, r, "reading the response from %s: %s", f->res->address,
                             r == -ETIMEDOUT ? "no complete response within the timeout" : strerror(-r));
    }
}

/* Read and parse until the response is complete. */
static int read_response(struct fetch *f, char *err, size_t errlen)
{
    char buf[16384];
    while (!f->done) {
        size_t got;
        int r = read_some(f, buf, sizeof buf, &got, err, errlen);
        if (r)
            return r;
        size_t used = http_parser_execute(&f->parser, &SETTINGS, buf, got); /* 0 bytes: the close ends the body */
        enum http_errno e = HTTP_PARSER_ERRNO(&f->parser);
        if (f->too_big)
            return knee_fail(err, errlen, KNEE_ETOOBIG, "the response's body is larger than %u bytes",
                             HTTP_FETCH_MAX_BODY);
        if (f->too_many)
            return knee_fail(err, errlen, KNEE_ETOOBIG, "the response has more than %d headers",
                             HTTP_FETCH_MAX_HEADERS);
        if (got == 0 && !f->done) /* http-parser says HPE_INVALID_EOF_STATE: this says more */
            return knee_fail(err, errlen, KNEE_EFORMAT, "%s closed the connection before the response's end",
                             f->res->address);
        if (e != HPE_OK && e != HPE_PAUSED)
            return knee_fail(err, errlen, KNEE_EFORMAT, "not an HTTP/1.1 response from %s (%s)", f->res->address,
                             http_errno_name(e));
        if (used < got && !f->done)
            return knee_fail(err, errlen, KNEE_EFORMAT, "not an HTTP/1.1 response from %s", f->res->address);
    }
    return 0;
}

int http_fetch(const struct http_fetch_request *req, struct http_fetch_response *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    struct url u;
    char why[256];
    int r = url_parse(req->url, &u, why, sizeof why);
    if (r) {
        url_release(&u);
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: %s", req->url, why);
    }
    struct http_request_spec spec = {
        .method = req->method ? req->method : "GET",
        .url = &u,
        .headers = req->headers,
        .nheaders = req->nheaders,
        .body = req->body,
        .body_len = req->body_len,
        .keepalive = false, /* Connection: close: one request on this connection */
    };
    char *bytes = NULL;
    size_t nbytes = 0;
    struct fetch f = {
        .fd = -1, .ctx = req->tls, .route = req->route, .res = res, .head = strcmp(spec.method, "HEAD") == 0};
    if ((r = http_client_build_request(&spec, &bytes, &nbytes, err, errlen)) != 0)
        goto out;
    if (u.tls && !req->tls) {
        r = knee_fail(err, errlen, KNEE_EINVAL, "%s: https:// without a TLS context", req->url);
        goto out;
    }
    http_parser_init(&f.parser, HTTP_RESPONSE);
    f.parser.data = &f;
    uint64_t start = clock_now_ns();
    f.deadline_ns = start + req->timeout_ns;
    if ((r = connect_to(&f, &u, err, errlen)) != 0)
        goto out;
    if ((r = write_all(&f, bytes, nbytes, err, errlen)) != 0 || (r = read_response(&f, err, errlen)) != 0)
        goto out;
    res->elapsed_ns = clock_now_ns() - start;
    res->body = f.body.p ? f.body.p : xcalloc(1, 1);
    res->body_len = f.body.len;
    f.body.p = NULL;
out:
    if (f.tls_on) {
        tls_conn_shutdown(&f.tls);
        tls_conn_release(&f.tls);
    }
    if (f.fd >= 0)
        close(f.fd);
    free(bytes);
    free(f.field.p);
    free(f.value.p);
    free(f.body.p);
    url_release(&u);
    return r;
}

void http_fetch_response_release(struct http_fetch_response *res)
{
    for (size_t i = 0; i < res->nheaders; i++) {
        free(res->names[i]);
        free(res->values[i]);
    }
    free(res->names);
    free(res->values);
    free(res->body);
    memset(res, 0, sizeof *res);
}
