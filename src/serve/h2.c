/* knee serve over HTTP/2 (nghttp2's server session): a connection that chose h2 (ALPN over
 * TLS, or the h2c preface in cleartext) keeps its socket, timers and counters in conn.c, and its
 * session and streams here. Each stream is a struct conn without a socket: its request is
 * filled from the HEADERS (:method, :path), answered by conn.c's handle_request exactly as an
 * HTTP/1.1 request (health, stats, the null target, or the pipeline of work.c with its pool,
 * lock, timers and Server-Timing), and its response goes out as frames. Frames, HPACK and flow
 * control are nghttp2's.
 *
 * Lifetimes, as for HTTP/1.1 (serve/internal.h): a stream whose client resets it while it
 * waits for a slot or the lock is cancelled; one whose work runs finishes, its answer counted as
 * a write failure. A connection closed with work in flight stays (dead) until its last stream
 * ends, so the drain waits for it and the struct is never freed under the pipeline.
 *
 * Deadlines, as for HTTP/1.1 (serve_h2_deadline): a request is timed from its first byte to its
 * END_STREAM by the header timeout, whatever else the connection carries. To know a request's
 * first byte, the received bytes go to nghttp2 one frame at a time (h2_feed), and each frame's
 * first byte is noted: a stream starts at its HEADERS frame's first byte, and a frame begun and
 * not finished is a request in progress too (a HEADERS frame trickled a byte at a time). */
#include "serve/internal.h"

#include "core/err.h"

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct serve_h2 {
    nghttp2_session *session;
    struct conn *conn;
    struct conn *streams; /* alive streams, through conn.prev/next */
    unsigned nstreams;
    unsigned nincomplete; /* streams whose request has begun and not ended (partial_since_ns set) */
    bool goaway;          /* GOAWAY submitted: no new streams, close when the last one ends */
    bool want_out;        /* the socket was full: wait for EPOLLOUT */
    bool releasing;       /* serve_h2_release is freeing the streams */
    bool timed_out;       /* a request outlived the header timeout: 408s, GOAWAY, close */
    uint64_t answer_ns;   /* last progress of an answer: submitted, or a frame of one sent */
    /* The frame being received (h2_feed): when its first byte came (0 between frames), the client
     * preface still to come, the 9-byte frame header so far, the payload still to come. */
    uint64_t frame_since_ns;
    uint32_t magic_left;
    uint32_t payload_left;
    unsigned fh_have;
    uint8_t fh[9];
};

/* ---- streams ------------------------------------------------------------------------------ */

static void stream_link(struct serve_h2 *h, struct conn *sc)
{
    sc->prev = NULL;
    sc->next = h->streams;
    if (h->streams)
        h->streams->prev = sc;
    h->streams = sc;
    h->nstreams++;
}

void serve_h2_stream_free(struct conn *sc)
{
    struct conn *parent = sc->h2_parent;
    if (!parent || !parent->h2)
        return;
    struct serve_h2 *h = parent->h2;
    if (sc->prev)
        sc->prev->next = sc->next;
    else
        h->streams = sc->next;
    if (sc->next)
        sc->next->prev = sc->prev;
    sc->prev = sc->next = NULL;
    sc->h2_parent = NULL;
    h->nstreams--;
    if (sc->partial_since_ns) {
        sc->partial_since_ns = 0;
        h->nincomplete--;
    }
    /* nghttp2 may still know the stream (a response not sent yet): it must not name it again */
    nghttp2_session_set_stream_user_data(h->session, sc->h2_id, NULL);
    if (h->nstreams == 0)
        parent->idle_since_ns = parent->srv->loop.now_ns;
    if (parent->dead && h->nstreams == 0 && !h->releasing)
        serve_conn_free(parent); /* the connection waited for its last stream */
}

/* The stream's client is gone (RST_STREAM, or the connection closed): a request waiting for a
 * slot or the lock is cancelled and the stream freed; one whose work runs keeps its stream
 * (dead) until the work ends; anything else is freed now. */
static void stream_gone(struct conn *sc)
{
    struct serve_handle *s = sc->srv;
    if (sc->busy) {
        switch (sc->w.phase) {
        case PH_WAIT_SLOT:
        case PH_WAIT_LOCK:
            serve_work_cancel(s, &sc->w);
            sc->busy = false;
            break;
        case PH_WORK:
        case PH_CPU:
        case PH_DEPS:
        case PH_STREAM:
            sc->dead = true;
            return;
        case PH_NONE:
            break;
        }
    }
    serve_conn_free(sc);
}

unsigned serve_h2_streams(const struct conn *c)
{
    return c->h2 ? c->h2->nstreams : 0;
}

/* ---- requests from HEADERS -------------------------------------------------------------- */

enum http_method serve_h2_method(const uint8_t *v, size_t n)
{
    static const struct {
        const char *name;
        enum http_method m;
    } methods[] = {{"GET", HTTP_GET},       {"HEAD", HTTP_HEAD},       {"POST", HTTP_POST},   {"PUT", HTTP_PUT},
                   {"DELETE", HTTP_DELETE}, {"OPTIONS", HTTP_OPTIONS}, {"PATCH", HTTP_PATCH}, {"TRACE", HTTP_TRACE}};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strlen(methods[i].name) == n && memcmp(methods[i].name, v, n) == 0)
            return methods[i].m;
    return HTTP_GET; /* knee serve answers any method alike; only HEAD changes the answer */
}

static struct conn *stream_of(nghttp2_session *session, int32_t id)
{
    return id > 0 ? nghttp2_session_get_stream_user_data(session, id) : NULL;
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    struct serve_h2 *h = ud;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    struct conn *sc = serve_conn_stream_new(h->conn);
    sc->h2_id = frame->hd.stream_id;
    /* the request is timed from its HEADERS frame's first byte (h2_feed feeds frame by frame) */
    sc->partial_since_ns = h->frame_since_ns ? h->frame_since_ns : h->conn->srv->loop.now_ns;
    h->nincomplete++;
    stream_link(h, sc);
    nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, sc);
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
    (void)flags, (void)ud;
    struct conn *sc = stream_of(session, frame->hd.stream_id);
    if (!sc || frame->hd.type != NGHTTP2_HEADERS)
        return 0;
    struct http_request_parser *p = &sc->parser;
    /* RFC 9113 §6.5.2's size of a header list: name, value and 32 per field */
    p->header_bytes += namelen + valuelen + 32;
    if (p->header_bytes > sc->srv->cfg.max_header_bytes && !p->error_status)
        p->error_status = 431;
    if (namelen == 7 && memcmp(name, ":method", 7) == 0) {
        p->req.method = serve_h2_method(value, valuelen);
    } else if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
        if (valuelen > HTTP_REQUEST_URL_MAX) {
            if (!p->error_status)
                p->error_status = 414;
        } else {
            memcpy(p->req.url, value, valuelen);
            p->req.url[valuelen] = '\0';
            p->req.url_len = valuelen;
        }
    }
    return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *ud)
{
    (void)flags, (void)data, (void)ud;
    struct conn *sc = stream_of(session, id);
    if (!sc)
        return 0;
    sc->parser.body_bytes += len;
    if (sc->parser.body_bytes > sc->srv->cfg.max_body_bytes && !sc->parser.error_status)
        sc->parser.error_status = 413;
    return 0;
}

/* The request is complete (END_STREAM): answer it, refused or not. */
static void dispatch(struct serve_h2 *h, struct conn *sc)
{
    struct conn *c = h->conn;
    c->nreq++;
    c->partial_since_ns = 0;
    if (sc->partial_since_ns) {
        sc->partial_since_ns = 0;
        h->nincomplete--;
    }
    if (!sc->parser.error_status && sc->parser.req.url_len == 0)
        sc->parser.error_status = 400; /* no :path (nghttp2 checks the pseudo-headers' form) */
    if (sc->parser.error_status) {
        serve_conn_refuse_request(sc, sc->parser.error_status);
        return;
    }
    serve_conn_request(sc);
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    struct serve_h2 *h = ud;
    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    struct conn *sc = stream_of(session, frame->hd.stream_id);
    if (sc && !sc->busy && !sc->h2_timed_out) /* END_STREAM comes once per stream */
        dispatch(h, sc);
    return 0;
}

/* An answer's frame went out: progress (serve_h2_deadline). A 408 of the header timeout is
 * followed by RST_STREAM(NO_ERROR), so the client stops sending the request (RFC 9113 §8.1). */
static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    struct serve_h2 *h = ud;
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
        return 0;
    h->answer_ns = h->conn->srv->loop.now_ns;
    struct conn *sc = stream_of(session, frame->hd.stream_id);
    if (sc && sc->h2_timed_out && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_NO_ERROR);
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t id, uint32_t error_code, void *ud)
{
    (void)error_code, (void)ud;
    struct conn *sc = stream_of(session, id);
    if (sc) {
        nghttp2_session_set_stream_user_data(session, id, NULL);
        stream_gone(sc);
    }
    return 0;
}

static ssize_t on_send(nghttp2_session *session, const uint8_t *data, size_t len, int flags, void *ud)
{
    (void)session, (void)flags;
    struct serve_h2 *h = ud;
    ssize_t n = serve_conn_send(h->conn, data, len);
    if (n > 0)
        return n;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        h->want_out = true;
        return NGHTTP2_ERR_WOULDBLOCK;
    }
    counter_inc(&h->conn->srv->c.write_failures);
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* ---- responses ---------------------------------------------------------------------------- */

static ssize_t body_read(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
                         nghttp2_data_source *source, void *ud)
{
    (void)source, (void)ud;
    struct conn *sc = stream_of(session, id);
    if (!sc)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    size_t left = sc->out_end - sc->out_start;
    size_t n = left < length ? left : length;
    memcpy(buf, sc->out + sc->out_start, n);
    sc->out_start += n;
    if (sc->out_start == sc->out_end)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static nghttp2_nv nv(const char *name, const char *value, size_t vlen)
{
    nghttp2_nv f = {(uint8_t *)name, (uint8_t *)value, strlen(name), vlen, NGHTTP2_NV_FLAG_NONE};
    return f;
}

void serve_h2_respond(struct conn *sc, int status, const char *ctype, const char *body, size_t body_len,
                      const char *extra, bool head_only)
{
    struct conn *parent = sc->h2_parent;
    if (sc->dead || !parent || parent->dead || !parent->h2)
        return;
    if (body_len > sizeof sc->out)
        body_len = sizeof sc->out; /* cannot happen: responses are at most RESP_MAX */
    memcpy(sc->out, body, body_len);
    sc->out_start = 0;
    sc->out_end = body_len;
    char st[8], len[24];
    snprintf(st, sizeof st, "%d", status);
    int ln = snprintf(len, sizeof len, "%zu", body_len);
    nghttp2_nv nva[8];
    size_t n = 0;
    nva[n++] = nv(":status", st, strlen(st));
    nva[n++] = nv("server", "knee", 4);
    nva[n++] = nv("date", sc->srv->date, strlen(sc->srv->date));
    nva[n++] = nv("content-type", ctype, strlen(ctype));
    nva[n++] = nv("content-length", len, (size_t)ln);
    /* extra: "Server-Timing: queue;dur=1.0\r\n" lines; HTTP/2 wants lower-case names */
    char names[2][32];
    for (const char *p = extra; p && *p && n < 7;) {
        const char *eol = strstr(p, "\r\n");
        const char *colon = strchr(p, ':');
        if (!eol || !colon || colon > eol || (size_t)(colon - p) >= sizeof names[0])
            break;
        char *nm = names[n - 5];
        size_t nl = (size_t)(colon - p);
        for (size_t i = 0; i < nl; i++)
            nm[i] = (char)((p[i] >= 'A' && p[i] <= 'Z') ? p[i] - 'A' + 'a' : p[i]);
        nm[nl] = '\0';
        const char *v = colon + 1;
        while (*v == ' ')
            v++;
        nva[n++] = nv(nm, v, (size_t)(eol - v));
        p = eol + 2;
    }
    nghttp2_data_provider prd = {.source.ptr = NULL, .read_callback = body_read};
    nghttp2_submit_response(parent->h2->session, sc->h2_id, nva, n, head_only || !body_len ? NULL : &prd);
    parent->h2->answer_ns = sc->srv->loop.now_ns;
}

/* An events answer's body: what is in out now, one DATA frame per call (nghttp2 asks again while
 * the window allows); nothing yet and more to come: deferred until serve_h2_events_push resumes
 * it. */
static ssize_t events_read(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length, uint32_t *flags,
                           nghttp2_data_source *source, void *ud)
{
    (void)source, (void)ud;
    struct conn *sc = stream_of(session, id);
    if (!sc)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    size_t left = sc->out_end - sc->out_start;
    if (!left && !sc->h2_events_eof)
        return NGHTTP2_ERR_DEFERRED;
    size_t n = left < length ? left : length;
    memcpy(buf, sc->out + sc->out_start, n);
    sc->out_start += n;
    if (sc->out_start == sc->out_end) {
        sc->out_start = sc->out_end = 0;
        if (sc->h2_events_eof)
            *flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    return (ssize_t)n;
}

void serve_h2_events_begin(struct conn *sc, const char *extra)
{
    struct conn *parent = sc->h2_parent;
    if (sc->dead || !parent || parent->dead || !parent->h2)
        return;
    sc->out_start = sc->out_end = 0;
    sc->h2_events = true;
    sc->h2_events_eof = false;
    nghttp2_nv nva[6];
    size_t n = 0;
    nva[n++] = nv(":status", "200", 3);
    nva[n++] = nv("server", "knee", 4);
    nva[n++] = nv("date", sc->srv->date, strlen(sc->srv->date));
    nva[n++] = nv("content-type", "text/event-stream", 17);
    nva[n++] = nv("cache-control", "no-cache", 8);
    /* extra: one "Server-Timing: v\r\n" line */
    const char *colon = extra ? strchr(extra, ':') : NULL;
    const char *eol = extra ? strstr(extra, "\r\n") : NULL;
    if (colon && eol && colon < eol) {
        const char *v = colon + 1;
        while (*v == ' ')
            v++;
        nva[n++] = nv("server-timing", v, (size_t)(eol - v));
    }
    nghttp2_data_provider prd = {.source.ptr = NULL, .read_callback = events_read};
    nghttp2_submit_response(parent->h2->session, sc->h2_id, nva, n, &prd);
    parent->h2->answer_ns = sc->srv->loop.now_ns;
}

bool serve_h2_events_push(struct conn *sc, const char *p, size_t n, bool eof)
{
    struct conn *parent = sc->h2_parent;
    if (sc->dead || !parent || parent->dead || !parent->h2)
        return true; /* nobody to write to: the caller's end comes as for a gone client */
    if (sc->out_start > 0 && sc->out_start == sc->out_end)
        sc->out_start = sc->out_end = 0;
    if (sizeof sc->out - sc->out_end < n)
        return false;
    memcpy(sc->out + sc->out_end, p, n);
    sc->out_end += n;
    sc->h2_events_eof = eof;
    nghttp2_session_resume_data(parent->h2->session, sc->h2_id);
    parent->h2->answer_ns = sc->srv->loop.now_ns;
    return true;
}

void serve_h2_stream_done(struct conn *sc)
{
    if (sc->parsing)
        return; /* answered at once, inside nghttp2's callbacks: the read path writes it */
    struct conn *parent = sc->h2_parent;
    if (!parent || parent->dead)
        return;
    if (serve_h2_flush(parent))
        serve_h2_settle(parent);
}

/* ---- input, frame by frame ------------------------------------------------------------------ */

/* Hand n received bytes to nghttp2 a frame at a time, so that its callbacks see, in
 * frame_since_ns, when the frame they are about began (the first byte of a stream's request;
 * serve_h2_deadline). The frame length is read from each 9-byte header; the client preface
 * counts as a frame. nghttp2 still checks everything. Returns nghttp2's error, or 0. */
static int h2_feed(struct serve_h2 *h, const uint8_t *p, size_t n)
{
    uint64_t now = h->conn->srv->loop.now_ns;
    while (n) {
        if (!h->frame_since_ns)
            h->frame_since_ns = now;
        size_t take = 0;
        bool ends = false;
        if (h->magic_left) {
            take = n < h->magic_left ? n : h->magic_left;
            h->magic_left -= (uint32_t)take;
            ends = h->magic_left == 0;
        } else {
            if (h->fh_have < sizeof h->fh) {
                while (h->fh_have < sizeof h->fh && take < n)
                    h->fh[h->fh_have++] = p[take++];
                if (h->fh_have == sizeof h->fh)
                    h->payload_left = (uint32_t)h->fh[0] << 16 | (uint32_t)h->fh[1] << 8 | h->fh[2];
            }
            if (h->fh_have == sizeof h->fh) {
                size_t more = n - take < h->payload_left ? n - take : h->payload_left;
                take += more;
                h->payload_left -= (uint32_t)more;
                ends = h->payload_left == 0;
            }
        }
        ssize_t r = nghttp2_session_mem_recv(h->session, p, take);
        if (r < 0)
            return (int)r;
        p += take;
        n -= take;
        if (ends) {
            h->frame_since_ns = 0;
            h->fh_have = 0;
        }
    }
    return 0;
}

/* ---- the connection ----------------------------------------------------------------------- */

bool serve_h2_start(struct conn *c, const char *pre, size_t len)
{
    struct serve_handle *s = c->srv;
    struct serve_h2 *h = xcalloc(1, sizeof *h);
    h->conn = c;
    nghttp2_session_callbacks *cbs;
    if (nghttp2_session_callbacks_new(&cbs))
        knee_oom();
    nghttp2_session_callbacks_set_send_callback(cbs, on_send);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
    nghttp2_option *opt;
    if (nghttp2_option_new(&opt))
        knee_oom();
    nghttp2_option_set_no_closed_streams(opt, 1); /* no priority tree of closed streams to keep */
    int r = nghttp2_session_server_new2(&h->session, cbs, h, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    if (r)
        knee_oom();
    c->h2 = h;
    c->partial_since_ns = 0;
    h->magic_left = SERVE_H2_PREFACE_LEN; /* the client's preface: in pre (h2c), or still to come (TLS) */
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, SERVE_H2_STREAMS},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, (uint32_t)s->cfg.max_header_bytes},
    };
    nghttp2_submit_settings(h->session, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0]);
    if (len && h2_feed(h, (const uint8_t *)pre, len) < 0) {
        serve_conn_close(c);
        return false;
    }
    if (!serve_h2_flush(c))
        return false;
    return serve_h2_settle(c);
}

bool serve_h2_flush(struct conn *c)
{
    struct serve_h2 *h = c->h2;
    if (c->dead)
        return false;
    h->want_out = false;
    if (nghttp2_session_send(h->session) != 0) {
        serve_conn_close(c);
        return false;
    }
    return true;
}

/* The first byte of the oldest request not complete: a stream without its END_STREAM, or a
 * frame begun and not finished; 0 when there is none. */
static uint64_t request_since(const struct serve_h2 *h)
{
    uint64_t t = h->frame_since_ns;
    for (const struct conn *sc = h->nincomplete ? h->streams : NULL; sc; sc = sc->next)
        if (sc->partial_since_ns && (!t || sc->partial_since_ns < t))
            t = sc->partial_since_ns;
    return t;
}

/* A stream's work is in flight (waiting for a slot or the lock, working, or finishing after
 * its client left). */
static bool streams_working(const struct serve_h2 *h)
{
    for (const struct conn *sc = h->streams; sc; sc = sc->next)
        if (sc->busy)
            return true;
    return false;
}

uint64_t serve_h2_deadline(const struct conn *c)
{
    const struct serve_h2 *h = c->h2;
    const struct serve_config *cfg = &c->srv->cfg;
    uint64_t since = h->timed_out ? 0 : request_since(h);
    uint64_t req = since ? since + cfg->header_timeout_ns : UINT64_MAX, other;
    bool ending = h->goaway || c->closing;
    if (h->nstreams) {
        if (streams_working(h))
            return req; /* the server or the pipeline is the slow party */
        uint64_t last = h->answer_ns > c->idle_since_ns ? h->answer_ns : c->idle_since_ns;
        if (ending)
            other = last + LINGER_TIME_NS;
        else if (h->nstreams > h->nincomplete) /* answers the client does not take */
            other = h->answer_ns + cfg->idle_timeout_ns;
        else
            other = UINT64_MAX; /* only requests in progress: their header timeout */
    } else if (ending) {
        other = c->idle_since_ns + LINGER_TIME_NS;
    } else if (since) {
        other = UINT64_MAX; /* a request in progress (a frame begun): the header timeout only */
    } else if (c->nreq == 0) {
        other = c->accepted_ns + cfg->header_timeout_ns;
    } else {
        other = c->idle_since_ns + cfg->idle_timeout_ns;
    }
    return req < other ? req : other;
}

/* A request outlived the header timeout: as HTTP/1.1's 408 (conn.c), counted once per
 * connection; each incomplete stream is answered 408 and reset after it (on_frame_send), and
 * the connection sends GOAWAY and closes once its streams at work are answered. */
static void request_timeout(struct conn *c)
{
    struct serve_h2 *h = c->h2;
    counter_inc(&c->srv->c.timeouts);
    h->timed_out = true;
    c->closing = true;
    for (struct conn *sc = h->streams; sc; sc = sc->next) {
        if (!sc->partial_since_ns)
            continue;
        sc->partial_since_ns = 0;
        h->nincomplete--;
        sc->h2_timed_out = true;
        serve_conn_respond_timeout(sc);
    }
    if (serve_h2_flush(c))
        serve_h2_settle(c);
}

void serve_h2_timeout(struct conn *c)
{
    struct serve_h2 *h = c->h2;
    uint64_t since = h->timed_out ? 0 : request_since(h);
    if (since && c->srv->loop.now_ns >= since + c->srv->cfg.header_timeout_ns) {
        request_timeout(c);
        return;
    }
    if (!c->closing && c->nreq == 0)
        counter_inc(&c->srv->c.timeouts); /* no request within the header timeout of accept */
    serve_conn_close(c);
}

/* Both sides are done with the session: from here the connection closes as an HTTP/1.1 one
 * that answered with Connection: close (conn.c's lingering close). */
static bool session_over(struct conn *c)
{
    nghttp2_session_del(c->h2->session);
    free(c->h2);
    c->h2 = NULL;
    c->closing = c->linger_after = true;
    c->in_start = c->in_end = c->out_start = c->out_end = 0;
    return serve_conn_settle(c);
}

bool serve_h2_settle(struct conn *c)
{
    struct serve_h2 *h = c->h2;
    struct serve_handle *s = c->srv;
    if (c->dead)
        return false;
    if ((s->draining || c->closing) && !h->goaway) {
        h->goaway = true;
        c->closing = true;
        c->idle_since_ns = s->loop.now_ns;
        nghttp2_submit_goaway(h->session, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(h->session),
                              NGHTTP2_NO_ERROR, NULL, 0);
        if (!serve_h2_flush(c))
            return false;
    }
    bool want_read = nghttp2_session_want_read(h->session), want_write = nghttp2_session_want_write(h->session);
    if (h->nstreams == 0 && ((!want_read && !want_write) || (h->goaway && !want_write)))
        return session_over(c);
    loop_io_mod(&s->loop, &c->io, EPOLLIN | (h->want_out ? EPOLLOUT : 0));
    uint64_t d = serve_h2_deadline(c);
    if (d != UINT64_MAX && (!loop_timer_armed(&c->timer) || c->timer.deadline_ns > d))
        loop_timer_arm(&s->loop, &c->timer, d);
    return true;
}

void serve_h2_io(struct conn *c, uint32_t events)
{
    struct serve_h2 *h = c->h2;
    struct serve_handle *s = c->srv;
    if (events & EPOLLERR) {
        serve_conn_close(c);
        return;
    }
    if ((events & EPOLLOUT) && !serve_h2_flush(c))
        return;
    if (events & (EPOLLIN | EPOLLHUP)) {
        /* read what is there, up to LINGER_READ_PER_EVENT (level-triggered: the rest comes with
         * the next event), but never leave bytes inside OpenSSL, which epoll cannot see */
        size_t got = 0;
        while (got < LINGER_READ_PER_EVENT || (c->tls.ssl && tls_conn_pending(&c->tls))) {
            ssize_t n = serve_conn_recv(c, s->discard, sizeof s->discard);
            if (n > 0) {
                got += (size_t)n;
                if (h2_feed(h, (const uint8_t *)s->discard, (size_t)n) < 0) {
                    serve_conn_close(c);
                    return;
                }
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                break;
            serve_conn_close(c); /* EOF or an error: the client is gone */
            return;
        }
    }
    if (serve_h2_flush(c))
        serve_h2_settle(c);
}

void serve_h2_close(struct conn *c)
{
    struct serve_h2 *h = c->h2;
    struct conn *sc = h->streams;
    while (sc) {
        struct conn *next = sc->next;
        if (!sc->dead)
            stream_gone(sc); /* frees it, or leaves it dead until its work ends */
        sc = next;
    }
}

void serve_h2_release(struct conn *c)
{
    struct serve_h2 *h = c->h2;
    struct serve_handle *s = c->srv;
    h->releasing = true;
    while (h->streams) {
        struct conn *sc = h->streams;
        if (sc->busy && (sc->w.phase == PH_WAIT_SLOT || sc->w.phase == PH_WAIT_LOCK))
            serve_work_cancel(s, &sc->w);
        sc->w.phase = PH_NONE;
        serve_conn_free(sc);
    }
    nghttp2_session_del(h->session);
    free(h);
    c->h2 = NULL;
}
