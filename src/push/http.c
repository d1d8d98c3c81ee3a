/* One remote-write POST over HTTP/1.1 on a connection of its own (http:// or https:// through
 * OpenSSL), every step bounded by one deadline. A push every few seconds does not need
 * keep-alive, and a fresh connection cannot inherit a half-read response from a failed one. */
#include "core/clock.h"
#include "core/err.h"
#include "push/internal.h"
#include "push/push.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int push_endpoint_init(struct push_endpoint *e, const char *url, const char *cafile, bool insecure, char *err,
                       size_t errlen)
{
    memset(e, 0, sizeof *e);
    char why[160];
    if (url_parse(url, &e->url, why, sizeof why))
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: %s", url, why);
    if (!e->url.tls)
        return 0;
    e->ssl = SSL_CTX_new(TLS_client_method());
    if (!e->ssl)
        return knee_fail(err, errlen, KNEE_EINVAL, "cannot make a TLS context");
    SSL_CTX_set_min_proto_version(e->ssl, TLS1_2_VERSION);
    if (insecure) {
        SSL_CTX_set_verify(e->ssl, SSL_VERIFY_NONE, NULL);
        return 0;
    }
    SSL_CTX_set_verify(e->ssl, SSL_VERIFY_PEER, NULL);
    int ok = cafile ? SSL_CTX_load_verify_locations(e->ssl, cafile, NULL) : SSL_CTX_set_default_verify_paths(e->ssl);
    if (!ok)
        return knee_fail(err, errlen, KNEE_EINVAL, "cannot load the trusted certificates%s%s", cafile ? " of " : "",
                         cafile ? cafile : "");
    return 0;
}

void push_endpoint_release(struct push_endpoint *e)
{
    if (e->ssl)
        SSL_CTX_free(e->ssl);
    url_release(&e->url);
    memset(e, 0, sizeof *e);
}

/* Wait for fd to be ready for ev until deadline_ns. 0, or -ETIMEDOUT / -errno. */
static int wait_fd(int fd, short ev, uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = clock_now_ns();
        if (now >= deadline_ns)
            return -ETIMEDOUT;
        uint64_t left_ms = (deadline_ns - now + NS_PER_MS - 1) / NS_PER_MS;
        struct pollfd p = {.fd = fd, .events = ev};
        int n = poll(&p, 1, left_ms > 60000 ? 60000 : (int)left_ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
    }
}

/* A connected non-blocking socket to one of the host's addresses, or -1 with err. */
static int dial(const struct url *u, uint64_t deadline_ns, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int g = getaddrinfo(u->host, u->port_str, &hints, &ai);
    if (g) {
        snprintf(err, errlen, "resolve %s: %s", u->host, gai_strerror(g));
        return -1;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        e = errno;
        if (e == EINPROGRESS) {
            int w = wait_fd(fd, POLLOUT, deadline_ns);
            socklen_t sl = sizeof e;
            if (w == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) == 0 && e == 0)
                break;
            if (w)
                e = -w;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0)
        snprintf(err, errlen, "connect %s:%s: %s", u->host, u->port_str,
                 e == ETIMEDOUT ? "timed out" : strerror(e ? e : ECONNREFUSED));
    return fd;
}

/* The connection: a socket, and over it an SSL object for https. */
struct conn {
    int fd;
    SSL *ssl;
};

/* Drive an SSL call's WANT_* until deadline: 1 again, 0 gave up (err set). */
static int ssl_again(struct conn *c, int r, uint64_t deadline_ns, char *err, size_t errlen)
{
    int e = SSL_get_error(c->ssl, r);
    short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (ev && wait_fd(c->fd, ev, deadline_ns) == 0)
        return 1;
    if (ev) {
        snprintf(err, errlen, "timed out");
        return 0;
    }
    unsigned long q = ERR_get_error();
    char buf[120];
    ERR_error_string_n(q, buf, sizeof buf);
    snprintf(err, errlen, "TLS: %s", q ? buf : e == SSL_ERROR_ZERO_RETURN ? "closed" : "connection lost");
    ERR_clear_error();
    return 0;
}

static int conn_tls(struct conn *c, const struct push_endpoint *e, uint64_t deadline_ns, char *err, size_t errlen)
{
    c->ssl = SSL_new(e->ssl);
    if (!c->ssl || !SSL_set_fd(c->ssl, c->fd)) {
        snprintf(err, errlen, "TLS: cannot start");
        return -1;
    }
    if (!e->url.ipv6_literal)
        SSL_set_tlsext_host_name(c->ssl, e->url.host);
    if (SSL_CTX_get_verify_mode(e->ssl) != SSL_VERIFY_NONE)
        SSL_set1_host(c->ssl, e->url.host);
    for (;;) {
        int r = SSL_connect(c->ssl);
        if (r == 1)
            return 0;
        if (!ssl_again(c, r, deadline_ns, err, errlen))
            return -1;
    }
}

/* Write all of p; 0 or -1 with err. */
static int conn_write(struct conn *c, const void *p, size_t n, uint64_t deadline_ns, char *err, size_t errlen)
{
    const char *b = p;
    while (n) {
        ssize_t w;
        if (c->ssl) {
            int r = SSL_write(c->ssl, b, n > 1 << 30 ? 1 << 30 : (int)n);
            if (r <= 0) {
                if (!ssl_again(c, r, deadline_ns, err, errlen))
                    return -1;
                continue;
            }
            w = r;
        } else {
            w = send(c->fd, b, n, MSG_NOSIGNAL);
            if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
                if (wait_fd(c->fd, POLLOUT, deadline_ns)) {
                    snprintf(err, errlen, "send: timed out");
                    return -1;
                }
                continue;
            }
            if (w < 0) {
                snprintf(err, errlen, "send: %s", strerror(errno));
                return -1;
            }
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read into buf (cap) until the peer closes, the cap is reached or the headers and
 * Content-Length bytes are in. The length read, or -1 with err. */
static ssize_t conn_read(struct conn *c, char *buf, size_t cap, uint64_t deadline_ns, char *err, size_t errlen)
{
    size_t n = 0;
    while (n < cap) {
        ssize_t r;
        if (c->ssl) {
            int k = SSL_read(c->ssl, buf + n, (int)(cap - n));
            if (k <= 0) {
                int e = SSL_get_error(c->ssl, k);
                if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && n > 0))
                    break;
                if (!ssl_again(c, k, deadline_ns, err, errlen))
                    return n > 0 ? (ssize_t)n : -1;
                continue;
            }
            r = k;
        } else {
            r = recv(c->fd, buf + n, cap - n, 0);
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
                if (wait_fd(c->fd, POLLIN, deadline_ns)) {
                    snprintf(err, errlen, "timed out waiting for the response");
                    return n > 0 ? (ssize_t)n : -1;
                }
                continue;
            }
            if (r < 0) {
                snprintf(err, errlen, "recv: %s", strerror(errno));
                return n > 0 ? (ssize_t)n : -1;
            }
            if (r == 0)
                break;
        }
        n += (size_t)r;
        buf[n < cap ? n : cap - 1] = '\0';
        const char *end = memmem(buf, n, "\r\n\r\n", 4);
        const char *cl = end ? strcasestr(buf, "\r\ncontent-length:") : NULL;
        if (end && cl && cl < end && (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10) <= n)
            break;
    }
    return (ssize_t)n;
}

/* "HTTP <status>: <the body's first line>" into err. */
static void status_error(int status, const char *buf, size_t n, char *err, size_t errlen)
{
    const char *end = memmem(buf, n, "\r\n\r\n", 4);
    const char *body = end ? end + 4 : buf + n;
    size_t blen = (size_t)(buf + n - body);
    size_t line = strcspn(body, "\r\n");
    if (line > blen)
        line = blen;
    if (line > 120)
        line = 120;
    snprintf(err, errlen, "HTTP %d%s%.*s", status, line ? ": " : "", (int)line, body);
}

static int post_on(struct conn *c, const struct push_endpoint *e, const uint8_t *body, size_t len, uint64_t deadline_ns,
                   char *err, size_t errlen)
{
    if (c->ssl == NULL && e->ssl && conn_tls(c, e, deadline_ns, err, errlen))
        return -1;
    char head[1024 + URL_MAX_LEN];
    int hn = snprintf(head, sizeof head,
                      "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: knee/" KNEE_VERSION "\r\n"
                      "Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\n"
                      "X-Prometheus-Remote-Write-Version: 0.1.0\r\nContent-Length: %zu\r\nConnection: close\r\n",
                      e->url.target, e->url.authority, len);
    if (hn < 0 || (size_t)hn >= sizeof head) {
        snprintf(err, errlen, "URL too long");
        return -1;
    }
    /* The credentials are written straight to the connection, never into a string kept or shown. */
    if (conn_write(c, head, (size_t)hn, deadline_ns, err, errlen) ||
        (e->auth_header && (conn_write(c, "Authorization: ", 15, deadline_ns, err, errlen) ||
                            conn_write(c, e->auth_header, strlen(e->auth_header), deadline_ns, err, errlen) ||
                            conn_write(c, "\r\n", 2, deadline_ns, err, errlen))) ||
        conn_write(c, "\r\n", 2, deadline_ns, err, errlen) || conn_write(c, body, len, deadline_ns, err, errlen))
        return -1;
    char buf[PUSH_RESPONSE_MAX + 1];
    ssize_t n = conn_read(c, buf, PUSH_RESPONSE_MAX, deadline_ns, err, errlen);
    if (n <= 0) {
        if (n == 0)
            snprintf(err, errlen, "the connection closed without a response");
        return -1;
    }
    buf[n] = '\0';
    int status = push_http_status(buf, (size_t)n);
    if (status < 0) {
        snprintf(err, errlen, "not an HTTP response");
        return -1;
    }
    if (status >= 300)
        status_error(status, buf, (size_t)n, err, errlen);
    return status;
}

int push_http_post(const struct push_endpoint *e, const uint8_t *body, size_t len, uint64_t deadline_ns, char *err,
                   size_t errlen)
{
    struct conn c = {.fd = dial(&e->url, deadline_ns, err, errlen)};
    if (c.fd < 0)
        return -1;
    int status = post_on(&c, e, body, len, deadline_ns, err, errlen);
    if (c.ssl) {
        if (status > 0)
            SSL_shutdown(c.ssl);
        SSL_free(c.ssl);
    }
    ERR_clear_error();
    close(c.fd);
    return status;
}
