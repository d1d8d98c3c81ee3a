/* The HTTP/2 client session over nghttp2: knee's streams (caller memory) attached to nghttp2's
 * as stream user data, a list of the open ones so a failed connection can close each exactly
 * once, the concurrency cap, timestamps from nghttp2's frame callbacks, and the reason a
 * stream ended. nghttp2 does the protocol: framing, HPACK, flow control, SETTINGS and PING
 * acknowledgements, GOAWAY handling. */
#include "h2/h2.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/grow.h"

#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Streams opened before the server's SETTINGS arrive. RFC 9113 allows any number (the limit is
 * unlimited until SETTINGS), but a server with a lower limit then refuses the excess with
 * RST_STREAM(REFUSED_STREAM): nginx with http2_max_concurrent_streams 2 refused 6 of 8 streams
 * opened at once. One stream goes at once; the rest wait for the server's SETTINGS, which it
 * sends first thing, so the wait is at most one round trip per connection (and is measured: the
 * requests wait for a stream like any request waiting for a connection). */
#define H2_STREAMS_BEFORE_SETTINGS 1

/* Frames are gathered into one buffer of about this size before they are written: nghttp2
 * serialises one frame at a time, and a write per frame would be a syscall (and over TLS a
 * record) per request. With the buffer, everything submitted in one turn of the worker's loop
 * leaves in one write. */
#define H2_WRITE_GATHER 16384

struct h2_client {
    nghttp2_session *session;
    struct h2_callbacks cb;
    h2_write_fn *write_fn;
    void *io;
    void *user;
    uint32_t max_streams;
    uint32_t open;
    struct h2_stream *head; /* open streams */
    bool got_settings;      /* the server's SETTINGS arrived */
    bool got_bytes;
    bool goaway;         /* received */
    int32_t goaway_last; /* its last stream id */
    bool failed;         /* the session is over (h2_client_fail, or a protocol error) */
    bool write_failed;
    uint8_t *wbuf; /* frames serialised and not yet written: wbuf[woff..wlen) */
    size_t wcap, wlen, woff;
    uint32_t pending_bodies; /* open streams with request body left to send */
    enum h2_reason reason;
    char detail[200];
    struct h2_client_stats stats;
};

static const char *const reason_names[H2_R_COUNT] = {
    [H2_R_NONE] = "none",          [H2_R_RST_STREAM] = "h2_rst_stream",
    [H2_R_GOAWAY] = "h2_goaway",   [H2_R_PROTOCOL] = "h2_protocol",
    [H2_R_NOT_H2] = "h2_not_h2",   [H2_R_CLOSED] = "h2_closed",
    [H2_R_TIMEOUT] = "h2_timeout", [H2_R_REFUSED] = "h2_refused",
    [H2_R_HEADERS] = "h2_headers",
};

const char *h2_reason_name(enum h2_reason r)
{
    return (unsigned)r < H2_R_COUNT ? reason_names[r] : "unknown";
}

const char *h2_error_code_name(uint32_t code)
{
    return nghttp2_http2_strerror(code);
}

const char *h2_library_version(void)
{
    return nghttp2_version(0)->version_str;
}

/* ---- the open streams --------------------------------------------------------------------- */

static void link_stream(struct h2_client *h, struct h2_stream *s)
{
    s->prev = NULL;
    s->next = h->head;
    if (h->head)
        h->head->prev = s;
    h->head = s;
    h->open++;
}

static void unlink_stream(struct h2_client *h, struct h2_stream *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        h->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    h->open--;
    if (s->req && s->body_off < s->req->body_len)
        h->pending_bodies--;
}

/* The stream is over for knee: detach it from nghttp2 (no callback will name it again), then
 * tell the caller. A complete response stays complete whatever reason the caller gives. */
static void close_stream(struct h2_client *h, struct h2_stream *s, enum h2_reason r)
{
    unlink_stream(h, s);
    if (s->id > 0)
        nghttp2_session_set_stream_user_data(h->session, s->id, NULL);
    s->reason = s->done_ns ? H2_R_NONE : r;
    h->cb.on_close(s);
}

/* A stream whose HEADERS never left knee was never seen by the server: after a GOAWAY it is as
 * refused as the streams above the GOAWAY's last id (RFC 9113 §6.8), whatever ends it. */
static enum h2_reason unsent_reason(const struct h2_client *h, const struct h2_stream *s, enum h2_reason r)
{
    return h->goaway && !s->headers_ns ? H2_R_GOAWAY : r;
}

static void fail_all(struct h2_client *h, enum h2_reason r)
{
    while (h->head)
        close_stream(h, h->head, unsent_reason(h, h->head, r));
}

static void set_failed(struct h2_client *h, enum h2_reason r, const char *detail)
{
    if (!h->failed) {
        h->failed = true;
        h->reason = r;
        snprintf(h->detail, sizeof h->detail, "%s", detail);
    }
}

/* ---- nghttp2 callbacks -------------------------------------------------------------------- */

static struct h2_stream *stream_of(nghttp2_session *session, int32_t id)
{
    return id > 0 ? nghttp2_session_get_stream_user_data(session, id) : NULL;
}

static int on_begin_frame(nghttp2_session *session, const nghttp2_frame_hd *hd, void *ud)
{
    (void)ud;
    struct h2_stream *s = stream_of(session, hd->stream_id);
    if (s) {
        if (!s->first_byte_ns && (hd->type == NGHTTP2_HEADERS || hd->type == NGHTTP2_DATA))
            s->first_byte_ns = clock_now_ns();
        s->bytes += 9 + hd->length;
    }
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
    (void)flags;
    struct h2_client *h = ud;
    struct h2_stream *s = stream_of(session, frame->hd.stream_id);
    if (!s || frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    s->header_bytes += namelen + valuelen + 32;
    if (s->header_bytes > H2_MAX_HEADER_BYTES) {
        /* the stream is over for knee now; nghttp2 goes on decoding the block (its HPACK
         * table must stay in step) without calling back for it, and sends the reset */
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
        close_stream(h, s, H2_R_HEADERS);
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
        /* nghttp2 has checked it is three digits (RFC 9113 §8.3.2) */
        int st = 0;
        for (size_t i = 0; i < valuelen && i < 3; i++)
            st = st * 10 + (value[i] - '0');
        s->status = st;
    }
    if (h->cb.on_header)
        h->cb.on_header(s, name, namelen, value, valuelen);
    return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
    (void)flags;
    struct h2_client *h = ud;
    struct h2_stream *s = stream_of(session, id);
    if (!s)
        return 0;
    s->body_bytes += len;
    if (h->cb.on_data)
        h->cb.on_data(s, data, len);
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    struct h2_client *h = ud;
    switch (frame->hd.type) {
    case NGHTTP2_SETTINGS:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK))
            h->got_settings = true;
        return 0;
    case NGHTTP2_GOAWAY:
        h->stats.goaway++;
        if (!h->goaway || frame->goaway.last_stream_id < h->goaway_last)
            h->goaway_last = frame->goaway.last_stream_id;
        h->goaway = true;
        if (h->cb.on_goaway)
            h->cb.on_goaway(h->user, frame->goaway.last_stream_id, frame->goaway.error_code);
        return 0;
    default:
        break;
    }
    struct h2_stream *s = stream_of(session, frame->hd.stream_id);
    if (!s)
        return 0;
    if (frame->hd.type == NGHTTP2_RST_STREAM) {
        h->stats.rst_received++;
        if (!s->done_ns) {
            /* REFUSED_STREAM: the server guarantees it did nothing with the request (RFC 9113
             * §8.7), so it may be sent again, as after GOAWAY */
            s->reason = frame->rst_stream.error_code == NGHTTP2_REFUSED_STREAM ? H2_R_REFUSED : H2_R_RST_STREAM;
            s->error_code = frame->rst_stream.error_code;
        }
        return 0;
    }
    if (frame->hd.type == NGHTTP2_DATA && frame->hd.length > frame->data.padlen && h->cb.on_data_frame)
        h->cb.on_data_frame(s);
    /* the final response's header block (1xx interim ones come first; trailers after) */
    if (frame->hd.type == NGHTTP2_HEADERS && s->status >= 200 && !s->responded) {
        s->responded = true;
        if (h->cb.on_response)
            h->cb.on_response(s);
    }
    if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) && s->status >= 200)
        s->done_ns = clock_now_ns();
    return 0;
}

static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    struct h2_client *h = ud;
    if (frame->hd.type == NGHTTP2_GOAWAY) {
        /* knee never says goodbye by itself: nghttp2 ended the session over the server's
         * protocol error (the detail came through on_error) */
        char d[200];
        snprintf(d, sizeof d, "%.150s (knee sent GOAWAY %s)", h->detail[0] ? h->detail : "protocol error",
                 nghttp2_http2_strerror(frame->goaway.error_code));
        set_failed(h, H2_R_PROTOCOL, d);
        return 0;
    }
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        struct h2_stream *s = stream_of(session, frame->hd.stream_id);
        if (s)
            s->headers_ns = clock_now_ns();
    }
    return 0;
}

/* A request's HEADERS that nghttp2 will not send: a stream submitted (from a callback, before
 * the flush) in the same turn a GOAWAY arrived is never opened, so on_stream_close never names
 * it; it is closed here, refused like the streams the GOAWAY names. */
static int on_frame_not_send(nghttp2_session *session, const nghttp2_frame *frame, int lib_error_code, void *ud)
{
    (void)session;
    struct h2_client *h = ud;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    struct h2_stream *s = h->head;
    while (s && s->id != frame->hd.stream_id)
        s = s->next;
    if (s)
        close_stream(h, s,
                     lib_error_code == NGHTTP2_ERR_START_STREAM_NOT_ALLOWED ? H2_R_GOAWAY
                                                                            : unsent_reason(h, s, H2_R_CLOSED));
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t id, uint32_t error_code, void *ud)
{
    struct h2_client *h = ud;
    struct h2_stream *s = stream_of(session, id);
    if (!s)
        return 0; /* closed for knee already (cancelled, failed) */
    enum h2_reason r = s->reason;
    if (r == H2_R_NONE && !s->done_ns) {
        if (h->goaway && id > h->goaway_last)
            r = H2_R_GOAWAY;
        else
            r = H2_R_PROTOCOL;
        s->error_code = error_code;
    }
    close_stream(h, s, r);
    return 0;
}

static int on_error(nghttp2_session *session, int lib_error_code, const char *msg, size_t len, void *ud)
{
    (void)session, (void)lib_error_code;
    struct h2_client *h = ud;
    if (!h->detail[0])
        snprintf(h->detail, sizeof h->detail, "%.*s", (int)len, msg);
    return 0;
}

static ssize_t body_read(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
                         nghttp2_data_source *source, void *ud)
{
    (void)source;
    struct h2_client *h = ud;
    struct h2_stream *s = stream_of(session, id);
    if (!s)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* cancelled: nghttp2 resets the stream */
    size_t left = s->req->body_len - s->body_off;
    size_t n = left < length ? left : length;
    memcpy(buf, s->req->body + s->body_off, n);
    s->body_off += n;
    if (s->body_off == s->req->body_len) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        h->pending_bodies--;
    }
    return (ssize_t)n;
}

/* ---- the session ---------------------------------------------------------------------------- */

struct h2_client *h2_client_new(const struct h2_callbacks *cb, h2_write_fn *write_fn, void *io, void *user,
                                uint32_t max_streams)
{
    struct h2_client *h = xcalloc(1, sizeof *h);
    h->cb = *cb;
    h->write_fn = write_fn;
    h->io = io;
    h->user = user;
    h->max_streams = max_streams && max_streams < H2_MAX_STREAMS ? max_streams : H2_MAX_STREAMS;
    nghttp2_session_callbacks *cbs;
    if (nghttp2_session_callbacks_new(&cbs))
        knee_oom();
    nghttp2_session_callbacks_set_on_begin_frame_callback(cbs, on_begin_frame);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_not_send_callback(cbs, on_frame_not_send);
    nghttp2_session_callbacks_set_error_callback2(cbs, on_error);
    int r = nghttp2_session_client_new(&h->session, cbs, h);
    nghttp2_session_callbacks_del(cbs);
    if (r)
        knee_oom();
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_WINDOW_BYTES},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_MAX_HEADER_BYTES},
    };
    if (nghttp2_submit_settings(h->session, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0]) ||
        nghttp2_session_set_local_window_size(h->session, NGHTTP2_FLAG_NONE, 0, (int32_t)H2_WINDOW_BYTES))
        knee_oom();
    return h;
}

void h2_client_free(struct h2_client *h)
{
    if (!h)
        return;
    nghttp2_session_del(h->session);
    free(h->wbuf);
    free(h);
}

uint32_t h2_client_server_max_streams(const struct h2_client *h)
{
    if (!h->got_settings)
        return H2_STREAMS_BEFORE_SETTINGS;
    return nghttp2_session_get_remote_settings(h->session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
}

bool h2_client_settings_seen(const struct h2_client *h)
{
    return h->got_settings;
}

bool h2_client_no_room(const struct h2_client *h)
{
    return h2_client_usable(h) && h->got_settings &&
           nghttp2_session_get_remote_settings(h->session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) == 0;
}

bool h2_client_usable(const struct h2_client *h)
{
    return !h->failed && !h->goaway && !h->write_failed;
}

uint32_t h2_client_capacity(const struct h2_client *h)
{
    if (!h2_client_usable(h))
        return 0;
    uint32_t cap = h2_client_server_max_streams(h);
    if (cap > h->max_streams)
        cap = h->max_streams;
    return cap > h->open ? cap - h->open : 0;
}

uint32_t h2_client_open_streams(const struct h2_client *h)
{
    return h->open;
}

int h2_client_submit(struct h2_client *h, const struct h2_request *req, struct h2_stream *s)
{
    if (h2_client_capacity(h) == 0)
        return KNEE_ERANGE;
    void *user = s->user;
    memset(s, 0, sizeof *s);
    s->user = user;
    s->req = req;
    s->submit_ns = clock_now_ns();
    nghttp2_data_provider prd = {.source.ptr = NULL, .read_callback = body_read};
    int32_t id = nghttp2_submit_request(h->session, NULL, req->nva, req->nnv, req->body_len ? &prd : NULL, s);
    if (id < 0) /* NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE: 2^31 streams on one connection */
        return KNEE_ERANGE;
    s->id = id;
    link_stream(h, s);
    if (req->body_len)
        h->pending_bodies++;
    h->stats.streams++;
    return 0;
}

/* Streams whose request body cannot go on because the server's window is closed (the stream's
 * or the connection's): a flow-control stall, counted once per stream. */
static void check_stalls(struct h2_client *h)
{
    if (!h->pending_bodies)
        return;
    bool conn_closed = nghttp2_session_get_remote_window_size(h->session) <= 0;
    for (struct h2_stream *s = h->head; s; s = s->next) {
        if (s->stalled || !s->req || s->body_off >= s->req->body_len)
            continue;
        if (conn_closed || nghttp2_session_get_stream_remote_window_size(h->session, s->id) <= 0) {
            s->stalled = true;
            h->stats.stalls++;
        }
    }
}

/* After nghttp2 ran: a session it ended (its GOAWAY over a protocol error) closes what is left. */
static bool settle(struct h2_client *h)
{
    if (!h->failed && !nghttp2_session_want_read(h->session) && !h2_client_want_write(h) &&
        !(h->goaway && h->open == 0))
        set_failed(h, H2_R_PROTOCOL, h->detail[0] ? h->detail : "the session ended");
    if (h->failed) {
        fail_all(h, h->reason);
        return false;
    }
    return true;
}

/* Write wbuf[woff..wlen) through write_fn: true when it is all out, false when the socket is
 * full (the rest waits) or the write failed (write_failed). */
static bool write_out(struct h2_client *h)
{
    while (h->woff < h->wlen) {
        long n = h->write_fn(h->io, h->wbuf + h->woff, h->wlen - h->woff);
        if (n > 0) {
            h->woff += (size_t)n;
            continue;
        }
        if (n < 0)
            h->write_failed = true;
        return false;
    }
    h->woff = h->wlen = 0;
    return true;
}

/* Serialise what nghttp2 has into wbuf, up to about H2_WRITE_GATHER bytes. 0 or nghttp2's
 * error. Callbacks (on_frame_send: a request's HEADERS, its T1) run from here. */
static int gather(struct h2_client *h)
{
    while (h->wlen < H2_WRITE_GATHER) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(h->session, &data);
        if (n < 0)
            return (int)n;
        if (n == 0)
            break;
        h->wbuf = grow_array(h->wbuf, &h->wcap, h->wlen + (size_t)n, 1, H2_WRITE_GATHER * 2);
        memcpy(h->wbuf + h->wlen, data, (size_t)n);
        h->wlen += (size_t)n;
    }
    return 0;
}

enum h2_io h2_client_flush(struct h2_client *h)
{
    if (h->failed || h->write_failed)
        return H2_IO_ERROR;
    bool blocked = false;
    for (;;) {
        if (!write_out(h)) {
            blocked = !h->write_failed;
            break;
        }
        int r = gather(h);
        if (r != 0) {
            set_failed(h, H2_R_PROTOCOL, nghttp2_strerror(r));
            fail_all(h, h->reason);
            return H2_IO_ERROR;
        }
        if (h->wlen == 0)
            break;
    }
    if (h->write_failed) {
        if (h->failed)
            fail_all(h, h->reason);
        return H2_IO_ERROR;
    }
    check_stalls(h);
    if (!settle(h))
        return H2_IO_ERROR;
    return blocked ? H2_IO_WANT_WRITE : H2_IO_OK;
}

bool h2_client_want_write(const struct h2_client *h)
{
    return !h->failed && (h->woff < h->wlen || nghttp2_session_want_write(h->session));
}

int h2_client_feed(struct h2_client *h, const uint8_t *data, size_t len)
{
    if (h->failed)
        return KNEE_EFORMAT;
    if (!h->got_bytes && len) {
        h->got_bytes = true;
        /* a server that does not speak h2c answers the preface in HTTP/1.x (often a 400) */
        if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
            size_t n = 0; /* the status line, up to its end or the bytes read (no NUL here) */
            while (n < len && n < 60 && data[n] != '\r' && data[n] != '\n')
                n++;
            char d[160];
            snprintf(d, sizeof d, "the server answered in HTTP/1.x: '%.*s'", (int)n, data);
            set_failed(h, H2_R_NOT_H2, d);
            fail_all(h, H2_R_NOT_H2);
            return KNEE_EFORMAT;
        }
    }
    ssize_t n = nghttp2_session_mem_recv(h->session, data, len);
    if (n < 0) {
        set_failed(h, H2_R_PROTOCOL, nghttp2_strerror((int)n));
        fail_all(h, h->reason);
        return KNEE_EFORMAT;
    }
    return settle(h) ? 0 : KNEE_EFORMAT;
}

void h2_client_fail(struct h2_client *h, enum h2_reason r)
{
    set_failed(h, r, h2_reason_name(r));
    fail_all(h, r);
}

void h2_client_cancel(struct h2_client *h, struct h2_stream *s, enum h2_reason r)
{
    if (!h->failed && s->id > 0)
        nghttp2_submit_rst_stream(h->session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
    close_stream(h, s, r);
}

bool h2_client_done(const struct h2_client *h)
{
    return h->failed || (h->goaway && h->open == 0);
}

enum h2_reason h2_client_reason(const struct h2_client *h)
{
    return h->failed ? h->reason : H2_R_NONE;
}

const char *h2_client_detail(const struct h2_client *h)
{
    return h->detail;
}

const struct h2_client_stats *h2_client_stats(const struct h2_client *h)
{
    return &h->stats;
}
