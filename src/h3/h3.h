/* The client side of HTTP/3 for the load engine: one QUIC connection (ngtcp2, TLS 1.3 through
 * GnuTLS with ALPN "h3") over a connected non-blocking UDP socket, HTTP/3 and QPACK over it
 * (nghttp3), a request per bidirectional stream. As src/h2, what is knee's is the accounting:
 * a cap on concurrent streams, per-stream timestamps, a reason for every stream that did not end
 * in a complete response, and the connection's datagram counters.
 *
 * Driving (the caller's loop owns the socket and a timer; load/h3.c does it):
 *
 *     socket readable ──► h3_client_read ──► ngtcp2 ──► nghttp3 ──► callbacks per stream
 *     h3_client_flush ──► nghttp3 frames ──► ngtcp2 packets ──► send(2) on the socket
 *     timer at h3_client_expiry_ns ──► h3_client_expire (retransmission, idle timeout)
 *
 * After any of the three, flush, then re-arm the timer at h3_client_expiry_ns. Requests
 * (h3_client_submit) and cancels may be issued inside a stream's callback: they are queued and
 * reach the libraries at the next flush. Streams are caller memory; a stream belongs to the
 * client from h3_client_submit until its on_close, called exactly once. Not thread-safe: one
 * client, one thread; the credentials (struct h3_tls) are shared read-only by every thread. */
#ifndef KNEE_H3_H3_H
#define KNEE_H3_H3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "h2/h2.h"
#include "net/net.h"

/* Streams a client keeps open at once, whatever the server allows. */
#define H3_MAX_STREAMS 1024
/* The QUIC idle timeout knee offers (the smaller of both sides' applies). */
#define H3_IDLE_TIMEOUT_NS (30ull * 1000000000ull)

/* ---- reasons ------------------------------------------------------------------------------ */

/* Why a stream ended without a complete response, or a connection failed. */
enum h3_reason {
    H3_R_NONE,         /* complete */
    H3_R_HANDSHAKE,    /* the QUIC/TLS handshake failed (not a certificate: an alert, no answer, refused) */
    H3_R_VERIFY,       /* the server's certificate chain did not verify */
    H3_R_HOSTNAME,     /* the certificate does not name the host */
    H3_R_EXPIRED,      /* the certificate expired or is not valid yet */
    H3_R_HS_TIMEOUT,   /* the handshake did not finish in time (ngtcp2's, or the caller's) */
    H3_R_IDLE_TIMEOUT, /* the QUIC idle timeout closed the connection */
    H3_R_STREAM_RESET, /* the server reset the stream (error_code: its HTTP/3 code) */
    H3_R_CLOSE,        /* the server closed the connection (CONNECTION_CLOSE; error_code, close_app) */
    H3_R_VERSION,      /* version negotiation: the server speaks no version knee offers */
    H3_R_PROTOCOL,     /* the server broke QUIC or HTTP/3 (knee closed the connection) */
    H3_R_SOCKET,       /* the UDP socket failed (sys_errno) */
    H3_R_TIMEOUT,      /* the caller gave up on the stream (h3_client_cancel) */
    H3_R_CLOSED,       /* the caller ended the connection with the stream open (h3_client_fail) */
    H3_R_COUNT
};

/* "none", "quic_handshake", "tls_verify", "tls_hostname", "tls_expired",
 * "tls_handshake_timeout", "quic_idle_timeout", "h3_stream_reset", "quic_close",
 * "quic_version_negotiation", "h3_protocol", "quic_socket", "h3_timeout", "h3_closed". */
const char *h3_reason_name(enum h3_reason r);

/* The name of an HTTP/3 error code (RFC 9114 §8.1: "H3_NO_ERROR" .. "H3_VERSION_FALLBACK",
 * QPACK's three), or NULL for another code. */
const char *h3_error_code_name(uint64_t code);
/* The name of a QUIC transport error code (RFC 9000 §20.1: "NO_ERROR" .. "NO_VIABLE_PATH",
 * "CRYPTO_ERROR" for 0x100-0x1ff), or NULL for another code. */
const char *quic_error_code_name(uint64_t code);

/* ---- credentials -------------------------------------------------------------------------- */

struct h3_tls;

/* The trust for every connection of a run: the PEM file cafile (NULL: the system's store), or
 * no verification at all (insecure). Returns 0, or KNEE_EINVAL with the file and GnuTLS's
 * words in err. */
int h3_tls_new(const char *cafile, bool insecure, struct h3_tls **out, char *err, size_t errlen);
/* A client certificate for every connection (--cert, --key: PEM files; key NULL: in the cert
 * file), offered when the server asks. Returns 0, or KNEE_EINVAL naming the flag and file with
 * GnuTLS's words in err. */
int h3_tls_set_client_cert(struct h3_tls *t, const char *cert, const char *key, char *err, size_t errlen);
void h3_tls_free(struct h3_tls *t);

/* ---- resumption ----------------------------------------------------------------------------- */

/* The newest session of a target on one thread (--tls-resume): the server's TLS 1.3 session
 * ticket and the QUIC transport parameters it sent with it (0-RTT needs both). Filled by the
 * clients given it, offered by the next ones. One thread. */
struct h3_session;
/* An empty session (NULL: out of memory). */
struct h3_session *h3_session_new(void);
/* NULL: no-op. */
void h3_session_free(struct h3_session *s);
/* A ticket is kept. */
bool h3_session_has_ticket(const struct h3_session *s);

/* ---- streams ------------------------------------------------------------------------------ */

/* One request in flight. The caller owns the memory and sets user; the client fills the rest. */
struct h3_stream {
    void *user;
    int64_t id;             /* -1 until it reached ngtcp2 */
    uint64_t submit_ns;     /* h3_client_submit */
    uint64_t first_byte_ns; /* the first STREAM bytes of the response arrived */
    uint64_t done_ns;       /* the response ended (FIN after a complete HTTP/3 message) */
    int status;             /* :status of the final response, 0 until then */
    uint64_t bytes;         /* response bytes of the stream (HTTP/3 frames) */
    uint64_t body_bytes;    /* DATA payload */
    enum h3_reason reason;  /* after on_close */
    uint64_t error_code;    /* H3_R_STREAM_RESET: the server's code */
    /* private */
    const struct h2_request *req;
    bool ended, closed;
    struct h3_stream *prev, *next;
};

struct h3_callbacks {
    /* One response header field (name lower-case), for Server-Timing. May be NULL. */
    void (*on_header)(struct h3_stream *s, const uint8_t *name, size_t namelen, const uint8_t *value, size_t valuelen);
    /* Body bytes as they arrive: DATA payload as nghttp3 hands it over (a frame, or the part of
     * one that arrived in one read; nghttp3 0.8 tells no frame's end). May be NULL. */
    void (*on_data)(struct h3_stream *s, const uint8_t *data, size_t len);
    /* The stream is over: s->reason says how. Required. */
    void (*on_close)(struct h3_stream *s);
    /* The final response's header section is complete (s->status set). May be NULL. */
    void (*on_response)(struct h3_stream *s);
};

/* ---- the connection ----------------------------------------------------------------------- */

struct h3_client;

/* Counters of a connection's life. */
struct h3_client_stats {
    uint64_t streams; /* requests submitted (a stream sent again after a rejected 0-RTT: once) */
    uint64_t datagrams_sent, datagrams_received;
    uint64_t bytes_sent, bytes_received; /* UDP payload bytes */
    uint64_t send_blocked;               /* datagrams the socket refused (EAGAIN): left to QUIC's loss recovery */
    uint64_t pto;                        /* probe timeouts: the loss timer fired with no acknowledgement */
    uint64_t resets;                     /* streams the server reset */
    uint64_t stream_packets_lost;        /* packets carrying request streams' data declared lost (ngtcp2's
                                            count per stream, spurious losses included), summed at each
                                            stream's close */
};

/* The path's estimates at this instant (ngtcp2_conn_get_conn_stat; ns and bytes). ngtcp2 0.12
 * keeps no count of lost packets for the connection: stream_packets_lost is what there is. */
struct h3_client_path {
    uint64_t min_rtt_ns, smoothed_rtt_ns, latest_rtt_ns; /* 0: no RTT sample yet */
    uint64_t cwnd, bytes_in_flight;
};

/* How a client starts. Zeroed: no resumption, no 0-RTT, no qlog, H3_MAX_STREAMS. */
struct h3_client_opts {
    uint32_t max_streams;       /* concurrent streams (0: H3_MAX_STREAMS) */
    struct h3_session *session; /* NULL: no resumption; else its ticket is offered (when it has one) and
                                   the server's newest ticket is kept in it (borrowed; outlives the client) */
    bool early_data;            /* with session's ticket and transport parameters: requests are accepted
                                   before the handshake ends and go as 0-RTT (sent again in 1-RTT when the
                                   server rejects them) */
    FILE *qlog;                 /* NULL: none; else ngtcp2's qlog of the connection (JSON text sequences)
                                   is written here (borrowed: the caller closes it after h3_client_free) */
};

/* A client over fd (a connected non-blocking UDP socket, the caller's; it is not closed here):
 * the Initial packet is built (it leaves with the first flush), SNI and verification for host,
 * the rest by o (NULL: zeroed). Returns 0, or KNEE_EINVAL with the library's words in err. */
int h3_client_new(const struct h3_tls *tls, int fd, const char *host, const struct h3_callbacks *cb,
                  const struct h3_client_opts *o, struct h3_client **out, char *err, size_t errlen);
/* Free without a goodbye; streams still open are not called back. NULL: no-op. */
void h3_client_free(struct h3_client *h);
/* CONNECTION_CLOSE (H3_NO_ERROR) in one datagram, one try, when the connection is established
 * and not already closing. */
void h3_client_goodbye(struct h3_client *h);

/* Read every datagram waiting on the socket into ngtcp2 (callbacks run from here). */
void h3_client_read(struct h3_client *h);
/* The timer went off: ngtcp2's retransmissions, probes, idle timeout. */
void h3_client_expire(struct h3_client *h);
/* Send what is due: queued requests and cancels, then every packet ngtcp2 builds. Returns true
 * when the socket refused a datagram (wait for writability). */
bool h3_client_flush(struct h3_client *h);
/* When the timer must go off (CLOCK_MONOTONIC ns; UINT64_MAX: never). */
uint64_t h3_client_expiry_ns(const struct h3_client *h);

/* Requests may be submitted: the handshake completed, or 0-RTT is under way (h3_client_early). */
bool h3_client_ready(const struct h3_client *h);
/* The handshake completed. */
bool h3_client_handshake_done(const struct h3_client *h);
/* 0-RTT: the client offered a ticket with early data (requests before the handshake's end).
 * After the handshake, h3_client_early_accepted says whether the server took them. */
bool h3_client_early(const struct h3_client *h);
bool h3_client_early_accepted(const struct h3_client *h);
/* The TLS session was resumed (a ticket; known once the handshake completed). */
bool h3_client_resumed(const struct h3_client *h);
/* The server asked for a client certificate (known once the handshake completed). */
bool h3_client_cert_requested(const struct h3_client *h);
/* Streams that may be submitted now: min(max_streams, the server's bidirectional stream credit)
 * minus those open; 0 before the handshake, after GOAWAY or a failure. */
uint32_t h3_client_capacity(const struct h3_client *h);
uint32_t h3_client_open_streams(const struct h3_client *h);

/* Queue a request on a new stream (s is reset, then filled; s->user is kept). Returns 0, or
 * KNEE_ERANGE when h3_client_capacity() is 0 (nothing queued, no callback). */
int h3_client_submit(struct h3_client *h, const struct h2_request *req, struct h3_stream *s);
/* Give up on one stream: on_close at once with reason r; the stream is reset
 * (H3_REQUEST_CANCELLED) with the next flush. */
void h3_client_cancel(struct h3_client *h, struct h3_stream *s, enum h3_reason r);
/* The connection is over for the caller: every open stream is closed with reason r (when the
 * connection itself failed, with its reason instead). */
void h3_client_fail(struct h3_client *h, enum h3_reason r);

/* Usable for new streams: no GOAWAY, no failure. */
bool h3_client_usable(const struct h3_client *h);
/* Over: failed, closed by the server, or GOAWAY with nothing open. */
bool h3_client_done(const struct h3_client *h);
/* Why the connection failed (H3_R_NONE: it has not), its error code (H3_R_CLOSE: the server's;
 * close_app: an HTTP/3 application code, else a QUIC transport code), its errno (H3_R_SOCKET),
 * and the words for it. */
enum h3_reason h3_client_reason(const struct h3_client *h);
uint64_t h3_client_error_code(const struct h3_client *h, bool *close_app);
int h3_client_errno(const struct h3_client *h);
const char *h3_client_detail(const struct h3_client *h);
const struct h3_client_stats *h3_client_stats(const struct h3_client *h);
void h3_client_path(const struct h3_client *h, struct h3_client_path *out);

/* "ngtcp2 0.12.1, nghttp3 0.8.0" (the environment record). */
const char *h3_library_version(void);

#endif
