/* TLS connections over non-blocking sockets: handshake, read and write steps that report
 * what to wait for, and every failure classified into a reason with OpenSSL's words for it
 * (a verification error's string, an alert's description, the reason of the first error on
 * the thread's queue). OpenSSL keeps errors on a per-thread queue; each step clears it first
 * and leaves it empty, so one connection's failure never shows up as another's. */
#include "tls/internal.h"

#include "core/err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static const char *const reason_names[TLS_R_COUNT] = {
    [TLS_R_NONE] = "none",
    [TLS_R_VERIFY] = "tls_verify",
    [TLS_R_HOSTNAME] = "tls_hostname",
    [TLS_R_EXPIRED] = "tls_expired",
    [TLS_R_ALERT] = "tls_alert",
    [TLS_R_PROTOCOL] = "tls_protocol",
    [TLS_R_CLOSED] = "tls_closed",
    [TLS_R_SOCKET] = "tls_socket",
    [TLS_R_ALPN] = "tls_alpn",
    [TLS_R_HANDSHAKE_TIMEOUT] = "tls_handshake_timeout",
    [TLS_R_ALERT_CERT_REQUIRED] = "tls_alert_certificate_required",
    [TLS_R_ALERT_BAD_CERT] = "tls_alert_bad_certificate",
};

const char *tls_reason_name(enum tls_reason r)
{
    return (unsigned)r < TLS_R_COUNT ? reason_names[r] : "unknown";
}

static bool is_ip(const char *s)
{
    unsigned char b[16];
    return inet_pton(AF_INET, s, b) == 1 || inet_pton(AF_INET6, s, b) == 1;
}

/* ---- the socket BIO ------------------------------------------------------------------------- */

/* OpenSSL's own socket BIO writes with write(), which raises SIGPIPE on a connection the peer
 * has closed; knee run does not ignore SIGPIPE (its plain writes use send(MSG_NOSIGNAL)), so a
 * reset server would kill the generator. This BIO is OpenSSL's minus that: send() with
 * MSG_NOSIGNAL, recv(), errno kept for SSL_get_error(), EAGAIN and EINTR as retries. */
static BIO_METHOD *sock_method;
static pthread_once_t sock_once = PTHREAD_ONCE_INIT;

static int sock_write(BIO *b, const char *data, int len)
{
    int fd = (int)(intptr_t)BIO_get_data(b);
    BIO_clear_retry_flags(b);
    ssize_t n = send(fd, data, (size_t)len, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_write(b);
    return (int)n;
}

static int sock_read(BIO *b, char *data, int len)
{
    int fd = (int)(intptr_t)BIO_get_data(b);
    BIO_clear_retry_flags(b);
    ssize_t n = recv(fd, data, (size_t)len, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_read(b);
    return (int)n;
}

static long sock_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b, (void)num, (void)ptr;
    /* a flush writes nothing (every write went to the socket); the rest is not asked of a
     * socket by libssl, or may fail harmlessly */
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int sock_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void sock_method_init(void)
{
    int type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR;
    sock_method = BIO_meth_new(type, "knee socket");
    if (!sock_method || !BIO_meth_set_write(sock_method, sock_write) || !BIO_meth_set_read(sock_method, sock_read) ||
        !BIO_meth_set_ctrl(sock_method, sock_ctrl) || !BIO_meth_set_create(sock_method, sock_create))
        knee_oom();
}

static int conn_start(struct tls_conn *c, struct tls_ctx *ctx, int fd)
{
    memset(c, 0, sizeof *c);
    pthread_once(&sock_once, sock_method_init);
    c->ssl = SSL_new(ctx->ssl);
    BIO *bio = BIO_new(sock_method);
    if (!c->ssl || !bio) {
        ERR_clear_error();
        SSL_free(c->ssl);
        BIO_free(bio);
        c->ssl = NULL;
        return -ENOMEM;
    }
    BIO_set_data(bio, (void *)(intptr_t)fd);
    SSL_set_bio(c->ssl, bio, bio); /* the SSL owns the BIO from here */
    SSL_set_app_data(c->ssl, c);
    return 0;
}

int tls_conn_client(struct tls_conn *c, struct tls_ctx *ctx, int fd, const char *host, struct tls_session_cache *cache)
{
    int r = conn_start(c, ctx, fd);
    if (r)
        return r;
    SSL_set_connect_state(c->ssl);
    bool ip = host && is_ip(host);
    /* SNI carries host names only (RFC 6066 §3: "Literal IPv4 and IPv6 addresses are not
     * permitted") */
    bool ok = !host || ip || SSL_set_tlsext_host_name(c->ssl, host);
    if (ok && host && !ctx->insecure) {
        if (ip)
            ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), host);
        else
            ok = SSL_set1_host(c->ssl, host);
    }
    if (!ok) {
        ERR_clear_error();
        tls_conn_release(c);
        return KNEE_EINVAL;
    }
    c->alpn_required = ctx->alpn == TLS_ALPN_H2;
    if (ctx->resume && cache) {
        c->cache = cache;
        if (cache->session)
            SSL_set_session(c->ssl, cache->session);
    }
    return 0;
}

int tls_conn_server(struct tls_conn *c, struct tls_ctx *ctx, int fd)
{
    int r = conn_start(c, ctx, fd);
    if (r)
        return r;
    SSL_set_accept_state(c->ssl);
    return 0;
}

/* ---- failures ------------------------------------------------------------------------------- */

static void set_reason(struct tls_conn *c, enum tls_reason r, const char *detail)
{
    c->reason = r;
    snprintf(c->detail, sizeof c->detail, "%s", detail ? detail : "");
}

static enum tls_reason verify_reason(long v)
{
    switch (v) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
    case X509_V_ERR_EMAIL_MISMATCH:
        return TLS_R_HOSTNAME;
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
    case X509_V_ERR_CRL_HAS_EXPIRED:
    case X509_V_ERR_CRL_NOT_YET_VALID:
        return TLS_R_EXPIRED;
    default:
        return TLS_R_VERIFY;
    }
}

/* A step failed with SSL_get_error() = e (and errno as the call left it): classify it. Returns
 * TLS_IO_EOF for a read that met the end of the stream, else TLS_IO_ERROR. */
static enum tls_io failed(struct tls_conn *c, int e, int saved_errno, bool reading)
{
    if (e == SSL_ERROR_ZERO_RETURN) { /* close_notify */
        ERR_clear_error();
        c->eof_clean = true;
        if (reading && c->handshake_done)
            return TLS_IO_EOF;
        set_reason(c, TLS_R_CLOSED, "the peer closed the connection during the handshake");
        return TLS_IO_ERROR;
    }
    unsigned long code = ERR_peek_error();
    if (e == SSL_ERROR_SYSCALL && code == 0) {
        ERR_clear_error();
        if (saved_errno == 0) { /* a bare EOF (OpenSSL 1.1's way of saying it) */
            if (reading && c->handshake_done)
                return TLS_IO_EOF;
            set_reason(c, TLS_R_CLOSED, "the peer closed the connection during the handshake");
            return TLS_IO_ERROR;
        }
        c->sys_errno = saved_errno;
        set_reason(c, TLS_R_SOCKET, strerror(saved_errno));
        return TLS_IO_ERROR;
    }
    int lib = ERR_GET_LIB(code), why = ERR_GET_REASON(code);
    if (lib == ERR_LIB_SSL && why == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        ERR_clear_error();
        if (reading && c->handshake_done)
            return TLS_IO_EOF; /* no close_notify: the HTTP framing decides whether that is complete */
        set_reason(c, TLS_R_CLOSED, "the peer closed the connection during the handshake");
        return TLS_IO_ERROR;
    }
    long v = SSL_get_verify_result(c->ssl);
    if (lib == ERR_LIB_SSL && why == SSL_R_CERTIFICATE_VERIFY_FAILED && v != X509_V_OK) {
        set_reason(c, verify_reason(v), X509_verify_cert_error_string(v));
    } else if (lib == ERR_LIB_SSL && why >= SSL_AD_REASON_OFFSET && why < SSL_AD_REASON_OFFSET + 256) {
        /* "sslv3 alert handshake failure": the peer's fatal alert, by its description */
        char d[TLS_DETAIL_MAX];
        snprintf(d, sizeof d, "the peer sent alert %s", SSL_alert_desc_string_long(why - SSL_AD_REASON_OFFSET));
        set_reason(
            c, tls_alert_reason(why - SSL_AD_REASON_OFFSET, c->cert_requested, SSL_get_certificate(c->ssl) != NULL), d);
    } else if (code) {
        const char *s = ERR_reason_error_string(code);
        set_reason(c, TLS_R_PROTOCOL, s ? s : "TLS protocol error");
    } else if (e == SSL_ERROR_SYSCALL && saved_errno) {
        c->sys_errno = saved_errno;
        set_reason(c, TLS_R_SOCKET, strerror(saved_errno));
    } else {
        set_reason(c, TLS_R_PROTOCOL, "TLS protocol error");
    }
    ERR_clear_error();
    return TLS_IO_ERROR;
}

/* What SSL_get_error() says to wait for, or the failure. */
static enum tls_io step_result(struct tls_conn *c, int e, int saved_errno, bool reading)
{
    switch (e) {
    case SSL_ERROR_WANT_READ:
        return TLS_IO_WANT_READ;
    case SSL_ERROR_WANT_WRITE:
        return TLS_IO_WANT_WRITE;
    default:
        return failed(c, e, saved_errno, reading);
    }
}

/* ---- steps ---------------------------------------------------------------------------------- */

enum tls_io tls_conn_handshake(struct tls_conn *c)
{
    if (c->reason != TLS_R_NONE)
        return TLS_IO_ERROR;
    if (c->handshake_done)
        return TLS_IO_OK;
    ERR_clear_error();
    errno = 0;
    int r = SSL_do_handshake(c->ssl);
    if (r != 1) {
        int saved = errno;
        return step_result(c, SSL_get_error(c->ssl, r), saved, false);
    }
    c->handshake_done = true;
    c->resumed = SSL_session_reused(c->ssl) == 1;
    const unsigned char *alpn = NULL;
    unsigned alen = 0;
    SSL_get0_alpn_selected(c->ssl, &alpn, &alen);
    c->proto = alen == 2 && memcmp(alpn, "h2", 2) == 0 ? TLS_PROTO_H2 : TLS_PROTO_HTTP1;
    if (c->alpn_required && c->proto != TLS_PROTO_H2) {
        set_reason(c, TLS_R_ALPN,
                   alen ? "the server chose http/1.1 where h2 was required"
                        : "the server agreed on no protocol (ALPN)");
        return TLS_IO_ERROR;
    }
    return TLS_IO_OK;
}

enum tls_io tls_conn_read(struct tls_conn *c, void *buf, size_t cap, size_t *got)
{
    *got = 0;
    if (c->reason != TLS_R_NONE)
        return TLS_IO_ERROR;
    ERR_clear_error();
    errno = 0;
    if (SSL_read_ex(c->ssl, buf, cap, got) == 1)
        return TLS_IO_OK;
    int saved = errno;
    return step_result(c, SSL_get_error(c->ssl, 0), saved, true);
}

enum tls_io tls_conn_write(struct tls_conn *c, const void *buf, size_t len, size_t *put)
{
    *put = 0;
    if (c->reason != TLS_R_NONE)
        return TLS_IO_ERROR;
    if (len == 0)
        return TLS_IO_OK;
    ERR_clear_error();
    errno = 0;
    if (SSL_write_ex(c->ssl, buf, len, put) == 1)
        return TLS_IO_OK;
    int saved = errno;
    return step_result(c, SSL_get_error(c->ssl, 0), saved, false);
}

bool tls_conn_pending(const struct tls_conn *c)
{
    return c->ssl && SSL_has_pending(c->ssl);
}

void tls_conn_fail(struct tls_conn *c, enum tls_reason r, const char *detail)
{
    set_reason(c, r, detail);
}

void tls_conn_shutdown(struct tls_conn *c)
{
    if (!c->ssl || !c->handshake_done || c->reason != TLS_R_NONE)
        return;
    ERR_clear_error();
    SSL_shutdown(c->ssl);
    ERR_clear_error();
}

void tls_conn_release(struct tls_conn *c)
{
    if (c->ssl) {
        SSL_free(c->ssl);
        ERR_clear_error();
    }
    c->ssl = NULL;
    c->cache = NULL;
}

const char *tls_conn_version(const struct tls_conn *c)
{
    return c->ssl && c->handshake_done ? SSL_get_version(c->ssl) : "";
}

int tls_conn_version_number(const struct tls_conn *c)
{
    return c->ssl && c->handshake_done ? SSL_version(c->ssl) : 0;
}

const char *tls_conn_cipher(const struct tls_conn *c)
{
    return c->ssl && c->handshake_done ? SSL_get_cipher_name(c->ssl) : "";
}
