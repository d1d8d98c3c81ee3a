/* The client side of HTTP/2 for the load engine, over nghttp2 (libnghttp2): one session per
 * connection, over any byte stream (TLS with ALPN "h2", or cleartext h2c with prior
 * knowledge). Frames, HPACK header compression and flow control are nghttp2's; what is knee's
 * is the accounting around them: a cap on concurrent streams, per-stream timestamps, and a
 * reason for every stream that did not end in a complete response.
 *
 * Data flow (the worker drives it; docs/INTERNALS.md "TLS and HTTP/2"):
 *
 *     h2_client_submit(stream) ──► h2_client_flush ──► write_fn(io, bytes) ──► socket / TLS
 *     socket / TLS ──► bytes ──► h2_client_feed ──► callbacks per stream: on_response,
 *                                                   on_header, on_data, on_close
 *
 * Reading is the caller's (into any buffer, then h2_client_feed), so one read buffer per thread
 * serves every connection; writing goes through the caller's write_fn, which takes what the
 * socket takes and returns 0 when it would block: the rest waits and h2_client_flush says
 * H2_IO_WANT_WRITE (wait for EPOLLOUT, flush again). A flush gathers the frames nghttp2 has
 * (about 16 KiB at a time) into one buffer per session and writes them together: every stream
 * submitted since the last flush leaves in one write (one syscall, one TLS record), not one
 * write per frame.
 *
 * Streams are caller memory (struct h2_stream), so the worker can keep them with its requests;
 * a stream belongs to the session from h2_client_submit until its on_close, which is called
 * exactly once per submitted stream: complete, reset, refused by GOAWAY, or failed with the
 * connection (h2_client_fail). Callbacks run inside h2_client_feed, h2_client_flush and
 * h2_client_fail; inside them the caller may submit new streams (they go out with the next
 * flush) but must not feed, flush, fail or free the session. Not thread-safe: one session, one
 * thread. */
#ifndef KNEE_H2_H2_H
#define KNEE_H2_H2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/client.h"

/* Caps: streams a session keeps open at once (whatever the server allows), and the windows
 * knee advertises (large: the generator must never be the one that stalls a response). */
#define H2_MAX_STREAMS 1024
#define H2_WINDOW_BYTES ((1u << 30) - 1)
/* A stream's budget of response header fields, HTTP/1.1's cap on a response head
 * (http-parser's HTTP_MAX_HEADER_SIZE, 80 KiB: http/response.h), counted as RFC 9113 counts
 * SETTINGS_MAX_HEADER_LIST_SIZE (each field's name and value plus 32 bytes) over every header
 * block of the stream (interim responses, the response, trailers). HPACK lets a server send a
 * field once and refer to it in one byte: a 20 KB block can decode to 64 MiB, which nghttp2
 * hands over field by field without a limit of its own. Past the budget the stream is reset
 * (RST_STREAM CANCEL) and closes with H2_R_HEADERS; knee advertises the budget in its
 * SETTINGS (SETTINGS_MAX_HEADER_LIST_SIZE, advisory). */
#define H2_MAX_HEADER_BYTES (80u * 1024)

/* ---- requests ----------------------------------------------------------------------------- */

/* A target's request as HTTP/2 header fields, built once before the run (the h2 counterpart of
 * http_client_build_request's bytes): :method, :scheme, :authority, :path, user-agent, the
 * user's headers with lower-cased names (Host becomes :authority), content-length when there is
 * a body or the method carries one. Read-only while sessions use it. */
struct h2_request {
    void *nva; /* nghttp2_nv[nnv], pointing into storage */
    size_t nnv;
    char *storage;
    const char *body; /* the spec's body (not copied: it must outlive the request) */
    size_t body_len;
};

/* Build from the same spec as HTTP/1.1 (the same checks and messages, plus: the
 * connection-specific headers Keep-Alive, Proxy-Connection, Upgrade and TE other than
 * "trailers" are refused, RFC 9113 §8.2.2). Returns 0 or KNEE_EINVAL with the reason in err. */
int h2_request_build(const struct http_request_spec *spec, struct h2_request *out, char *err, size_t errlen);
void h2_request_release(struct h2_request *r);

/* ---- reasons ------------------------------------------------------------------------------ */

/* Why a stream ended without a complete response, or a session failed. The names
 * (h2_reason_name) are keys of the run JSON's transport causes (docs/FORMATS.md). */
enum h2_reason {
    H2_R_NONE,       /* the stream completed: END_STREAM received */
    H2_R_RST_STREAM, /* the server reset the stream (error_code: its code; REFUSED_STREAM is H2_R_REFUSED) */
    H2_R_GOAWAY,     /* refused by the server's GOAWAY (the stream id was above its last one: the
                        server did not process it, RFC 9113 §6.8, so it may be sent again) */
    H2_R_PROTOCOL,   /* a protocol error: the server broke HTTP/2 (bad frames, bad headers, a
                        broken preface), or nghttp2 reset the stream for it */
    H2_R_NOT_H2,     /* the server answered in HTTP/1.x (h2c to a server that does not speak it) */
    H2_R_CLOSED,     /* the connection ended with the stream open (set through h2_client_fail) */
    H2_R_TIMEOUT,    /* the caller gave up on the stream (h2_client_cancel) */
    H2_R_REFUSED,    /* RST_STREAM(REFUSED_STREAM): the server did not process it (RFC 9113 §8.7),
                        so it may be sent again */
    H2_R_HEADERS,    /* the response's header fields went past H2_MAX_HEADER_BYTES: knee reset the
                        stream (the response is invalid, as an HTTP/1.1 head over its cap) */
    H2_R_COUNT
};

/* "none", "h2_rst_stream", "h2_goaway", "h2_protocol", "h2_not_h2", "h2_closed", "h2_timeout",
 * "h2_refused", "h2_headers" */
const char *h2_reason_name(enum h2_reason r);

/* nghttp2's name of an HTTP/2 error code ("NO_ERROR", "REFUSED_STREAM", ...). */
const char *h2_error_code_name(uint32_t code);

/* ---- streams ------------------------------------------------------------------------------ */

/* One request in flight. The caller owns the memory and sets user; the session fills the rest. */
struct h2_stream {
    void *user;
    int32_t id; /* 0 until submitted */
    /* times (CLOCK_MONOTONIC ns; 0 = has not happened) */
    uint64_t submit_ns;     /* h2_client_submit */
    uint64_t headers_ns;    /* the request's HEADERS frame was serialised by the flush that writes it */
    uint64_t first_byte_ns; /* the first frame of the response began */
    uint64_t done_ns;       /* END_STREAM received: the full response */
    int status;             /* :status, 0 until the response's headers */
    uint64_t bytes;         /* response bytes on the wire: frame headers and payloads */
    uint64_t body_bytes;    /* DATA payload (the body) */
    uint64_t header_bytes;  /* response header fields so far, as H2_MAX_HEADER_BYTES counts them */
    bool stalled;           /* the request body waited for the server's flow-control window */
    enum h2_reason reason;  /* after on_close */
    uint32_t error_code;    /* RST_STREAM's or GOAWAY's code */
    /* private */
    bool responded; /* on_response was called */
    const struct h2_request *req;
    size_t body_off;
    struct h2_stream *prev, *next;
};

struct h2_callbacks {
    /* The response's header block is complete (s->status set). May be NULL. */
    void (*on_response)(struct h2_stream *s);
    /* One response header field (name lower-case; pseudo-headers included), for Server-Timing.
     * May be NULL. */
    void (*on_header)(struct h2_stream *s, const uint8_t *name, size_t namelen, const uint8_t *value, size_t valuelen);
    /* Body bytes, as they arrive (for body matchers). May be NULL. */
    void (*on_data)(struct h2_stream *s, const uint8_t *data, size_t len);
    /* The stream is over: s->reason says how (H2_R_NONE with done_ns set: complete). Required. */
    void (*on_close)(struct h2_stream *s);
    /* The server sent GOAWAY: no new streams on this session; streams up to last_stream_id
     * still complete, the others close with H2_R_GOAWAY. May be NULL. */
    void (*on_goaway)(void *user, int32_t last_stream_id, uint32_t error_code);
    /* A response DATA frame with data has arrived whole (after on_data for its bytes), for timing
     * each frame as an event (knee run --stream chunks). May be NULL. */
    void (*on_data_frame)(struct h2_stream *s);
};

/* Write up to len bytes to the connection. Returns the count taken (> 0), 0 when the socket
 * would block (the caller arms EPOLLOUT, or EPOLLIN when TLS wants to read), or < 0 when the
 * connection failed (the caller knows why and calls h2_client_fail). */
typedef long h2_write_fn(void *io, const uint8_t *data, size_t len);

/* What h2_client_flush achieved. */
enum h2_io {
    H2_IO_OK,         /* everything nghttp2 had is written */
    H2_IO_WANT_WRITE, /* the socket is full: flush again when it is writable */
    H2_IO_ERROR,      /* write_fn failed, or the session is over (h2_client_reason) */
};

struct h2_client;

/* A client session (the connection preface and SETTINGS go out with the first flush: no server
 * push, windows of H2_WINDOW_BYTES). max_streams caps concurrent streams besides the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS (0: H2_MAX_STREAMS). user is passed to on_goaway. */
struct h2_client *h2_client_new(const struct h2_callbacks *cb, h2_write_fn *write_fn, void *io, void *user,
                                uint32_t max_streams);
/* Free the session. Streams still open are not called back (fail them first). NULL: no-op. */
void h2_client_free(struct h2_client *h);

/* Streams that may be submitted now: min(max_streams, the server's limit) minus those open;
 * 0 after GOAWAY or a failure. */
uint32_t h2_client_capacity(const struct h2_client *h);
/* Streams submitted and not closed. */
uint32_t h2_client_open_streams(const struct h2_client *h);
/* The server's SETTINGS_MAX_CONCURRENT_STREAMS (UINT32_MAX: unlimited). Until its SETTINGS
 * arrive: 1, so one stream goes at once and the others wait for the server's limit (a server
 * with a lower limit would refuse the excess; see client.c). */
uint32_t h2_client_server_max_streams(const struct h2_client *h);
/* True once the server's SETTINGS arrived (h2_client_server_max_streams is then its limit). */
bool h2_client_settings_seen(const struct h2_client *h);
/* True while the session is usable and the server's SETTINGS allow no stream at all
 * (MAX_CONCURRENT_STREAMS 0: a server shedding load, RFC 9113 §5.1.2): no request can go on
 * it until the server raises the limit with new SETTINGS. */
bool h2_client_no_room(const struct h2_client *h);

/* Queue a request on a new stream (s is reset, then filled; s->user is kept). Its HEADERS go
 * out with the next flush. Returns 0, or KNEE_ERANGE when h2_client_capacity() is 0 (nothing
 * queued, no callback). */
int h2_client_submit(struct h2_client *h, const struct h2_request *req, struct h2_stream *s);

/* Write what nghttp2 has queued through write_fn. */
enum h2_io h2_client_flush(struct h2_client *h);
/* True when nghttp2 has something to write (arm EPOLLOUT after H2_IO_WANT_WRITE only). */
bool h2_client_want_write(const struct h2_client *h);

/* Hand bytes read from the connection to nghttp2; callbacks run from here. Returns 0, or
 * KNEE_EFORMAT when the session failed (h2_client_reason: H2_R_PROTOCOL or H2_R_NOT_H2);
 * streams still open are closed then with that reason, after the bytes that preceded the
 * failure were delivered. Then flush (SETTINGS and PING acknowledgements, WINDOW_UPDATE). */
int h2_client_feed(struct h2_client *h, const uint8_t *data, size_t len);

/* The connection is gone (EOF, a reset, a TLS failure) or the caller gives up on it: every
 * stream still open is closed with reason r (on_close for each), and the session takes no new
 * streams. */
void h2_client_fail(struct h2_client *h, enum h2_reason r);

/* Give up on one stream (a timeout): RST_STREAM(CANCEL) is queued, and on_close is called at
 * once with reason r; the session goes on. */
void h2_client_cancel(struct h2_client *h, struct h2_stream *s, enum h2_reason r);

/* True while the session can still be used for new streams: no GOAWAY, no failure. */
bool h2_client_usable(const struct h2_client *h);
/* True when the session is over: failed, or GOAWAY received and no stream left open. */
bool h2_client_done(const struct h2_client *h);

/* Why the session failed (H2_R_NONE while it has not), and nghttp2's words for it. */
enum h2_reason h2_client_reason(const struct h2_client *h);
const char *h2_client_detail(const struct h2_client *h);

/* Counters of the session's life (for the run's totals). */
struct h2_client_stats {
    uint64_t streams;      /* submitted */
    uint64_t rst_received; /* RST_STREAM frames from the server */
    uint64_t goaway;       /* GOAWAY frames from the server */
    uint64_t stalls;       /* streams whose request body waited for the flow-control window */
};
const struct h2_client_stats *h2_client_stats(const struct h2_client *h);

/* nghttp2's version text, "1.52.0" (for the environment record). */
const char *h2_library_version(void);

#endif
