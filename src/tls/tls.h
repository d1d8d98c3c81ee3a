/* TLS for knee over OpenSSL: the client side of https:// targets and the server side of knee
 * serve --tls, both over non-blocking sockets that an epoll loop drives.
 *
 * Three kinds of object:
 *   struct tls_ctx           an SSL_CTX with knee's settings (verification, versions, ciphers,
 *                            ALPN, resumption; or the server's certificate). Built once before
 *                            the threads start, then shared read-only by every thread.
 *   struct tls_session_cache the session (ticket) a client reuses for one target. One per
 *                            target per thread: no lock, ever.
 *   struct tls_conn          one TLS connection over a socket the caller owns. Caller memory
 *                            (embed it in the connection); OpenSSL allocates its SSL object.
 *
 * A client connection's life, as the worker drives it (docs/INTERNALS.md "TLS and HTTP/2"):
 *
 *     net_connect_start ─► EPOLLOUT ─► net_connect_finish        (the connect phase)
 *     tls_conn_client ─► tls_conn_handshake until TLS_IO_OK      (the tls phase)
 *         TLS_IO_WANT_READ: wait for EPOLLIN; TLS_IO_WANT_WRITE: for EPOLLOUT; then call again
 *     tls_conn_write / tls_conn_read (same results) ─► tls_conn_shutdown ─► tls_conn_release
 *     ─► close(fd)
 *
 * Every failure is data: TLS_IO_ERROR leaves the reason (enum tls_reason) and OpenSSL's words
 * for it in the connection; nothing here prints, aborts (except on out-of-memory) or raises
 * a signal (OpenSSL reads and writes through knee's own socket BIO: send() with MSG_NOSIGNAL,
 * so a reset peer never raises SIGPIPE). Not thread-safe per connection: one thread drives a
 * connection; contexts are shared. */
#ifndef KNEE_TLS_TLS_H
#define KNEE_TLS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ssl_st;         /* OpenSSL's SSL */
struct ssl_session_st; /* OpenSSL's SSL_SESSION */

/* Longest --ciphers list and --cacert path accepted (they come from the command line). */
#define TLS_CIPHERS_MAX 2048
#define TLS_DETAIL_MAX 120

/* ---- versions (--tls-version) ---------------------------------------------------------------- */

/* Protocol versions by their OpenSSL numbers (TLS1_VERSION 0x0301 .. TLS1_3_VERSION 0x0304). */
#define TLS_V1_0 0x0301
#define TLS_V1_1 0x0302
#define TLS_V1_2 0x0303
#define TLS_V1_3 0x0304

/* Parse --tls-version "MIN[:MAX]" ("1.2", "1.3", "1.2:1.3", "1.0:1.2"; a bare version is the
 * minimum, the maximum stays the library's). *min and *max receive TLS_V1_x, 0 for "not set".
 * Returns 0 or KNEE_EINVAL with the reason in err ("--tls-version: ..."). */
int tls_parse_versions(const char *s, int *min, int *max, char *err, size_t errlen);

/* "TLSv1.2", "TLSv1.3", ...; "unknown" for anything else. */
const char *tls_version_name(int version);

/* ---- contexts ------------------------------------------------------------------------------- */

/* What the client offers in ALPN. */
enum tls_alpn {
    TLS_ALPN_ANY,   /* "h2" then "http/1.1": the server chooses (knee run's default) */
    TLS_ALPN_HTTP1, /* "http/1.1" only (--http1.1) */
    TLS_ALPN_H2,    /* "h2" only (--http2): a server that does not agree fails with TLS_R_ALPN */
};

/* The application protocol a connection agreed on. */
enum tls_proto {
    TLS_PROTO_HTTP1, /* "http/1.1", or no ALPN at all (HTTP/1.1 is what such a server speaks) */
    TLS_PROTO_H2,    /* "h2" */
};

struct tls_client_config {
    const char *cafile;    /* --cacert: PEM file of trusted certificates; NULL: the system store */
    bool insecure;         /* --insecure: no verification at all (chain, name or dates) */
    int min_version;       /* TLS_V1_x, 0: OpenSSL's default */
    int max_version;       /* TLS_V1_x, 0: OpenSSL's default */
    const char *ciphers;   /* --ciphers: OpenSSL names joined by ':'; TLS 1.3 suites (TLS_*) and
                              TLS <= 1.2 ciphers may be mixed; NULL: OpenSSL's defaults */
    enum tls_alpn alpn;    /* what ALPN offers */
    bool resume;           /* --tls-resume: offer the cached session (ticket) on new connections */
    const char *cert_file; /* --cert: PEM client certificate (then its chain); NULL: none */
    const char *key_file;  /* --key: PEM private key of cert_file; NULL: cert_file holds it */
};

/* Server: the certificate from files, or a self-signed one generated at start. */
struct tls_server_config {
    const char *cert_file; /* PEM: the certificate, then its chain; NULL with key_file NULL: generate */
    const char *key_file;  /* PEM private key matching cert_file */
    const char *host;      /* a name or address added to the generated certificate (the listen
                              host); localhost, 127.0.0.1 and ::1 are always in it. May be NULL */
    bool h2;               /* ALPN accepts "h2" (preferred) besides "http/1.1" */
};

struct tls_ctx;

/* Build a client context. Returns 0, or KNEE_EINVAL with a reason naming the flag in err
 * (--cacert that cannot be read or holds no certificate, --ciphers that OpenSSL does not know,
 * --tls-version MIN above MAX, --cert/--key as tls_client_cert_check says). The system store is located, not read,
 * here: when it is missing, every verification fails (TLS_R_VERIFY, "unable to get local issuer certificate"). */
int tls_client_new(const struct tls_client_config *cfg, struct tls_ctx **out, char *err, size_t errlen);

/* Check a client certificate and its key (--cert, --key; key_file NULL: in cert_file) as
 * tls_client_new would load them, before anything is sent. Returns 0, or KNEE_EINVAL with one
 * line naming the flag and file: a file that cannot be opened ("--cert F: No such file or
 * directory"), no PEM certificate or key in it (an encrypted key is refused: no passphrase
 * prompt), a key that does not match ("--key K does not match the certificate of --cert C"). */
int tls_client_cert_check(const char *cert_file, const char *key_file, char *err, size_t errlen);

/* Build a server context: load cert_file and key_file (and check they match), or generate an
 * EC P-256 key and a self-signed certificate valid from one hour ago for 30 days, with the
 * names above in subjectAltName. Session tickets on; renegotiation off. Returns 0 or
 * KNEE_EINVAL with the reason in err ("--cert FILE: ..."). */
int tls_server_new(const struct tls_server_config *cfg, struct tls_ctx **out, char *err, size_t errlen);

/* The server certificate's SHA-256 fingerprint ("AB:CD:...", 95 characters), and whether it was
 * generated; "" and false for a client context. */
const char *tls_ctx_fingerprint(const struct tls_ctx *ctx);
bool tls_ctx_self_signed(const struct tls_ctx *ctx);

/* NULL is a no-op. Only after every connection made from it is released. */
void tls_ctx_free(struct tls_ctx *ctx);

/* A self-signed certificate and its key as PEM text (heap strings, caller frees), for tests and
 * tools: EC P-256, names in subjectAltName (DNS names, or IP addresses when they parse as one),
 * valid from not_before_s to not_after_s (seconds relative to now; negative is the past, so an
 * expired certificate is -7200, -3600). Returns 0 or KNEE_EINVAL (a name that is neither). */
int tls_cert_self_signed(const char *const *names, size_t nnames, int64_t not_before_s, int64_t not_after_s,
                         char **cert_pem, char **key_pem, char *err, size_t errlen);

/* A server context's certificate (the leaf) and private key as PEM text (heap strings, caller
 * frees), so another TLS stack can serve the same identity (knee serve --h3's GnuTLS, whose
 * QUIC helper OpenSSL 3.0 lacks). Returns 0, or KNEE_EINVAL for a client context. */
int tls_ctx_pem(const struct tls_ctx *ctx, char **cert_pem, char **key_pem);

/* OpenSSL's version text, "OpenSSL 3.0.19 27 Jan 2026" (for the environment record). */
const char *tls_library_version(void);

/* ---- session resumption --------------------------------------------------------------------- */

/* The session a client offers on its next connection to one target. The newest ticket the
 * server sent replaces the one before. Thread-confined: one per target per thread. */
struct tls_session_cache {
    struct ssl_session_st *session; /* NULL until a server sent a ticket */
    uint64_t stored;                /* tickets received */
};

void tls_session_cache_init(struct tls_session_cache *c);
void tls_session_cache_release(struct tls_session_cache *c);

/* ---- connections ------------------------------------------------------------------------------ */

/* The result of every step. */
enum tls_io {
    TLS_IO_OK,         /* done: the handshake finished, or bytes were read or written */
    TLS_IO_WANT_READ,  /* call again once the socket is readable */
    TLS_IO_WANT_WRITE, /* call again once the socket is writable */
    TLS_IO_EOF,        /* read: the peer closed (close_notify, or a plain EOF: tls_conn.eof_clean) */
    TLS_IO_ERROR,      /* failed: tls_conn.reason and .detail say why; the connection is unusable */
};

/* Why a connection failed. The names (tls_reason_name) are the keys of the run JSON's
 * transport causes (docs/FORMATS.md). */
enum tls_reason {
    TLS_R_NONE,
    TLS_R_VERIFY,              /* the certificate chain did not verify (untrusted, self-signed, bad signature) */
    TLS_R_HOSTNAME,            /* the certificate does not name the URL's host */
    TLS_R_EXPIRED,             /* the certificate (or one in its chain) expired or is not valid yet */
    TLS_R_ALERT,               /* the peer sent a fatal alert (detail: its description) */
    TLS_R_PROTOCOL,            /* not TLS, or TLS broken (wrong version number, bad record MAC, ...) */
    TLS_R_CLOSED,              /* the peer closed the connection during the handshake */
    TLS_R_SOCKET,              /* a socket error (tls_conn.sys_errno: ECONNRESET, EPIPE, ...) */
    TLS_R_ALPN,                /* a protocol was forced (TLS_ALPN_H2) and the server did not agree */
    TLS_R_HANDSHAKE_TIMEOUT,   /* set by the caller (tls_conn_fail): the handshake took too long */
    TLS_R_ALERT_CERT_REQUIRED, /* the server's alert: a client certificate is required and none was sent
                                  (certificate_required; TLS 1.2: handshake_failure after asking for one) */
    TLS_R_ALERT_BAD_CERT,      /* the server's alert refusing the client's certificate (bad_certificate,
                                  unknown_ca, certificate_expired, ...; detail: which) */
    TLS_R_COUNT
};

/* "tls_verify", "tls_hostname", "tls_expired", "tls_alert", "tls_protocol", "tls_closed",
 * "tls_socket", "tls_alpn", "tls_handshake_timeout", "tls_alert_certificate_required",
 * "tls_alert_bad_certificate" ("none" for TLS_R_NONE). */
const char *tls_reason_name(enum tls_reason r);

struct tls_conn {
    struct ssl_st *ssl;
    struct tls_session_cache *cache; /* client with resumption: where tickets go; else NULL */
    bool handshake_done;
    bool resumed;         /* after the handshake: the session was resumed (no full handshake) */
    bool eof_clean;       /* after TLS_IO_EOF: the peer sent close_notify (false: a bare EOF) */
    bool alpn_required;   /* client: TLS_ALPN_H2 was asked for */
    enum tls_proto proto; /* after the handshake */
    enum tls_reason reason;
    int sys_errno;               /* TLS_R_SOCKET: the errno */
    char detail[TLS_DETAIL_MAX]; /* OpenSSL's words: "certificate has expired", "handshake failure" */
    bool cert_requested;         /* client: the server asked for a client certificate (CertificateRequest) */
};

/* Start a client connection over fd (connected, non-blocking): SNI from host unless it is an
 * IP address, verification of host against the certificate (DNS name or IP address) unless
 * the context is insecure, the cached session offered when the context resumes and cache is
 * not NULL (new tickets are stored there; the cache must outlive the connection). Returns 0 or
 * -ENOMEM/KNEE_EINVAL (nothing to release then). */
int tls_conn_client(struct tls_conn *c, struct tls_ctx *ctx, int fd, const char *host, struct tls_session_cache *cache);

/* Start a server connection over an accepted socket. Returns 0 or -ENOMEM. */
int tls_conn_server(struct tls_conn *c, struct tls_ctx *ctx, int fd);

/* One step of the handshake. TLS_IO_OK once it is done (then proto, resumed and the version
 * are known; a client that required h2 and did not get it fails here with TLS_R_ALPN). */
enum tls_io tls_conn_handshake(struct tls_conn *c);

/* Read up to cap bytes of application data into buf; *got receives the count on TLS_IO_OK.
 * OpenSSL may hold more than one read returned (tls_conn_pending): epoll does not see those
 * bytes, so read until TLS_IO_WANT_READ, or check tls_conn_pending before waiting. A read may
 * want to write (TLS_IO_WANT_WRITE: a key update) and then needs EPOLLOUT. */
enum tls_io tls_conn_read(struct tls_conn *c, void *buf, size_t cap, size_t *got);

/* Write up to len bytes; *put receives how many were taken on TLS_IO_OK (partial writes are
 * allowed, and a retry after TLS_IO_WANT_* may pass a different buffer with the same bytes
 * first). */
enum tls_io tls_conn_write(struct tls_conn *c, const void *buf, size_t len, size_t *put);

/* Bytes OpenSSL has read from the socket but not yet returned (decrypted or not). */
bool tls_conn_pending(const struct tls_conn *c);

/* Mark the connection failed by the caller (TLS_R_HANDSHAKE_TIMEOUT) with a detail. */
void tls_conn_fail(struct tls_conn *c, enum tls_reason r, const char *detail);

/* Send close_notify if the handshake is done (best effort: one non-blocking attempt, no wait
 * for the peer's). */
void tls_conn_shutdown(struct tls_conn *c);

/* Free OpenSSL's state (the socket is the caller's to close). Safe on a zeroed struct. */
void tls_conn_release(struct tls_conn *c);

/* "TLSv1.3" after the handshake, else "". */
const char *tls_conn_version(const struct tls_conn *c);
/* The version as TLS_V1_x after the handshake, else 0. */
int tls_conn_version_number(const struct tls_conn *c);
/* The negotiated cipher's name ("TLS_AES_128_GCM_SHA256"), "" before the handshake. */
const char *tls_conn_cipher(const struct tls_conn *c);

#endif
