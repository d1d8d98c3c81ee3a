/* The HTTP/3 side of a client connection: nghttp3 over ngtcp2's streams (the control and QPACK
 * streams, a request per bidirectional stream), the requests' header fields and bodies, the
 * responses into struct h3_stream, and the one on_close per stream. */
#include "h3/internal.h"

#include "core/clock.h"
#include "core/err.h"

#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>

static void stream_unlink(struct h3_client *c, struct h3_stream *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else if (c->head == s)
        c->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
}

void h3_stream_finish(struct h3_client *c, struct h3_stream *s, enum h3_reason r)
{
    if (s->closed)
        return;
    s->closed = true;
    s->reason = r;
    stream_unlink(c, s);
    if (s->id >= 0) {
        c->stats.stream_packets_lost += ngtcp2_conn_get_stream_loss_count(c->q, s->id);
        ngtcp2_conn_set_stream_user_data(c->q, s->id, NULL);
        if (c->h)
            nghttp3_conn_set_stream_user_data(c->h, s->id, NULL);
    }
    c->open--;
    c->cb->on_close(s);
}

/* ------------------------------------------------------------------ nghttp3's callbacks */

static int h_stream_close(nghttp3_conn *h, int64_t id, uint64_t code, void *user, void *suser)
{
    (void)h, (void)id;
    struct h3_client *c = user;
    struct h3_stream *s = suser;
    if (!s)
        return 0;
    if (s->ended && s->status) {
        h3_stream_finish(c, s, H3_R_NONE);
    } else {
        if (!s->error_code)
            s->error_code = code;
        c->stats.resets++;
        h3_stream_finish(c, s, H3_R_STREAM_RESET);
    }
    return 0;
}

/* Consumed bytes give the server credit again, on the stream and the connection. */
static void consume(struct h3_client *c, int64_t id, size_t n)
{
    ngtcp2_conn_extend_max_stream_offset(c->q, id, n);
    ngtcp2_conn_extend_max_offset(c->q, n);
}

static int h_recv_data(nghttp3_conn *h, int64_t id, const uint8_t *data, size_t len, void *user, void *suser)
{
    (void)h;
    struct h3_client *c = user;
    struct h3_stream *s = suser;
    consume(c, id, len);
    if (!s)
        return 0;
    s->body_bytes += len;
    if (c->cb->on_data)
        c->cb->on_data(s, data, len);
    return 0;
}

static int h_deferred_consume(nghttp3_conn *h, int64_t id, size_t n, void *user, void *suser)
{
    (void)h, (void)suser;
    consume(user, id, n);
    return 0;
}

static int h_recv_header(nghttp3_conn *h, int64_t id, int32_t token, nghttp3_rcbuf *name, nghttp3_rcbuf *value,
                         uint8_t flags, void *user, void *suser)
{
    (void)h, (void)id, (void)flags;
    struct h3_client *c = user;
    struct h3_stream *s = suser;
    if (!s)
        return 0;
    nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
    if (token == NGHTTP3_QPACK_TOKEN__STATUS) {
        int st = 0;
        for (size_t i = 0; i < v.len && i < 3; i++)
            st = st * 10 + (v.base[i] - '0');
        s->status = st;
        return 0;
    }
    if (c->cb->on_header && s->status >= 200)
        c->cb->on_header(s, n.base, n.len, v.base, v.len);
    return 0;
}

static int h_end_headers(nghttp3_conn *h, int64_t id, int fin, void *user, void *suser)
{
    (void)h, (void)id, (void)fin;
    struct h3_client *c = user;
    struct h3_stream *s = suser;
    if (s && s->status >= 200 && c->cb->on_response)
        c->cb->on_response(s);
    return 0;
}

static int h_end_stream(nghttp3_conn *h, int64_t id, void *user, void *suser)
{
    (void)h, (void)id, (void)user;
    struct h3_stream *s = suser;
    if (s && s->status >= 200) {
        s->ended = true;
        s->done_ns = clock_now_ns();
    }
    return 0;
}

static int h_stop_sending(nghttp3_conn *h, int64_t id, uint64_t code, void *user, void *suser)
{
    (void)h, (void)suser;
    struct h3_client *c = user;
    ngtcp2_conn_shutdown_stream_read(c->q, id, code);
    return 0;
}

static int h_reset_stream(nghttp3_conn *h, int64_t id, uint64_t code, void *user, void *suser)
{
    (void)h, (void)suser;
    struct h3_client *c = user;
    ngtcp2_conn_shutdown_stream_write(c->q, id, code);
    return 0;
}

static int h_shutdown(nghttp3_conn *h, int64_t id, void *user)
{
    (void)h, (void)id;
    struct h3_client *c = user;
    c->goaway = true;
    return 0;
}

int h3_http_start(struct h3_client *c)
{
    nghttp3_callbacks cb = {
        .stream_close = h_stream_close,
        .recv_data = h_recv_data,
        .deferred_consume = h_deferred_consume,
        .recv_header = h_recv_header,
        .end_headers = h_end_headers,
        .end_stream = h_end_stream,
        .stop_sending = h_stop_sending,
        .reset_stream = h_reset_stream,
        .shutdown = h_shutdown,
    };
    nghttp3_settings settings;
    nghttp3_settings_default(&settings);
    settings.max_field_section_size = H2_MAX_HEADER_BYTES;
    if (nghttp3_conn_client_new(&c->h, &cb, &settings, NULL, c) != 0)
        return -1;
    int64_t ctrl, enc, dec;
    if (ngtcp2_conn_open_uni_stream(c->q, &ctrl, NULL) || nghttp3_conn_bind_control_stream(c->h, ctrl) ||
        ngtcp2_conn_open_uni_stream(c->q, &enc, NULL) || ngtcp2_conn_open_uni_stream(c->q, &dec, NULL) ||
        nghttp3_conn_bind_qpack_streams(c->h, enc, dec))
        return -1;
    return 0;
}

int h3_http_restart(struct h3_client *c)
{
    if (c->h)
        nghttp3_conn_del(c->h);
    c->h = NULL;
    c->ncancels = 0; /* their streams are closed already, and their ids are gone with the early data */
    /* the open streams go back to the queue's head, oldest first (c->head is newest first) */
    while (c->head) {
        struct h3_stream *s = c->head;
        stream_unlink(c, s);
        s->id = -1;
        s->first_byte_ns = s->done_ns = 0;
        s->status = 0;
        s->bytes = s->body_bytes = s->error_code = 0;
        s->ended = false;
        s->next = c->queued;
        c->queued = s;
        if (!c->queued_tail)
            c->queued_tail = s;
    }
    return h3_http_start(c);
}

/* ------------------------------------------------------------------ ngtcp2's stream callbacks */

static int q_recv_stream_data(ngtcp2_conn *q, uint32_t flags, int64_t id, uint64_t off, const uint8_t *data, size_t len,
                              void *user, void *suser)
{
    (void)q, (void)off;
    struct h3_client *c = user;
    struct h3_stream *s = suser;
    if (s) {
        if (!s->first_byte_ns && len)
            s->first_byte_ns = clock_now_ns();
        s->bytes += len;
    }
    if (!c->h)
        return 0;
    nghttp3_ssize n = nghttp3_conn_read_stream(c->h, id, data, len, (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0);
    if (n < 0) {
        h3_set_failed(c, H3_R_PROTOCOL, nghttp3_strerror((int)n));
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    consume(c, id, (size_t)n);
    return 0;
}

static int q_acked(ngtcp2_conn *q, int64_t id, uint64_t off, uint64_t len, void *user, void *suser)
{
    (void)q, (void)off, (void)suser;
    struct h3_client *c = user;
    if (c->h && nghttp3_conn_add_ack_offset(c->h, id, len) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_stream_close(ngtcp2_conn *q, uint32_t flags, int64_t id, uint64_t code, void *user, void *suser)
{
    (void)q, (void)suser;
    struct h3_client *c = user;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
        code = NGHTTP3_H3_NO_ERROR;
    if (!c->h)
        return 0;
    int rv = nghttp3_conn_close_stream(c->h, id, code);
    if (rv != 0 && rv != NGHTTP3_ERR_STREAM_NOT_FOUND)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_stream_reset(ngtcp2_conn *q, int64_t id, uint64_t size, uint64_t code, void *user, void *suser)
{
    (void)q, (void)size;
    struct h3_client *c = user;
    struct h3_stream *s = suser;
    if (s && !s->error_code)
        s->error_code = code;
    if (c->h && nghttp3_conn_shutdown_stream_read(c->h, id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_stop_sending(ngtcp2_conn *q, int64_t id, uint64_t code, void *user, void *suser)
{
    (void)q, (void)code, (void)suser;
    struct h3_client *c = user;
    if (c->h && nghttp3_conn_shutdown_stream_read(c->h, id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_extend_stream_data(ngtcp2_conn *q, int64_t id, uint64_t max, void *user, void *suser)
{
    (void)q, (void)max, (void)suser;
    struct h3_client *c = user;
    if (c->h && nghttp3_conn_unblock_stream(c->h, id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

void h3_http_callbacks(ngtcp2_callbacks *cb)
{
    cb->recv_stream_data = q_recv_stream_data;
    cb->acked_stream_data_offset = q_acked;
    cb->stream_close = q_stream_close;
    cb->stream_reset = q_stream_reset;
    cb->stream_stop_sending = q_stop_sending;
    cb->extend_max_stream_data = q_extend_stream_data;
}

/* ------------------------------------------------------------------ requests */

/* The request body: all of it at once (it outlives the stream). */
static nghttp3_ssize read_body(nghttp3_conn *h, int64_t id, nghttp3_vec *vec, size_t veccnt, uint32_t *pflags,
                               void *user, void *suser)
{
    (void)h, (void)id, (void)veccnt, (void)user;
    struct h3_stream *s = suser;
    *pflags |= NGHTTP3_DATA_FLAG_EOF;
    if (!s || !s->req->body_len)
        return 0;
    vec[0].base = (uint8_t *)s->req->body;
    vec[0].len = s->req->body_len;
    return 1;
}

/* s reaches ngtcp2 (a bidirectional stream) and nghttp3 (its HEADERS, its body). */
static void submit_now(struct h3_client *c, struct h3_stream *s)
{
    const struct h2_request *rq = s->req;
    if (rq->nnv > c->nv_cap) {
        c->nv_cap = rq->nnv + 8;
        c->nv = realloc(c->nv, c->nv_cap * sizeof *c->nv);
        if (!c->nv)
            abort();
    }
    const nghttp2_nv *in = rq->nva;
    for (size_t i = 0; i < rq->nnv; i++)
        c->nv[i] = (nghttp3_nv){in[i].name, in[i].value, in[i].namelen, in[i].valuelen, NGHTTP3_NV_FLAG_NONE};
    int64_t id = -1;
    int rv = ngtcp2_conn_open_bidi_stream(c->q, &id, s);
    if (rv == 0) {
        s->id = id;
        s->next = c->head;
        if (c->head)
            c->head->prev = s;
        c->head = s;
        static const nghttp3_data_reader reader = {.read_data = read_body};
        bool body = rq->body_len > 0;
        rv = nghttp3_conn_submit_request(c->h, id, c->nv, rq->nnv, body ? &reader : NULL, s);
    }
    if (rv != 0)
        h3_stream_finish(c, s, H3_R_PROTOCOL);
}

void h3_http_submit_queued(struct h3_client *c)
{
    while (c->queued) {
        struct h3_stream *s = c->queued;
        c->queued = s->next;
        if (!c->queued)
            c->queued_tail = NULL;
        s->next = NULL;
        submit_now(c, s);
    }
    for (size_t i = 0; i < c->ncancels; i++)
        ngtcp2_conn_shutdown_stream(c->q, c->cancels[i], NGHTTP3_H3_REQUEST_CANCELLED);
    c->ncancels = 0;
}

int h3_client_submit(struct h3_client *c, const struct h2_request *req, struct h3_stream *s)
{
    if (!h3_client_capacity(c))
        return KNEE_ERANGE;
    void *user = s->user;
    memset(s, 0, sizeof *s);
    s->user = user;
    s->id = -1;
    s->req = req;
    s->submit_ns = clock_now_ns();
    c->open++;
    c->stats.streams++;
    if (c->in_cb) {
        if (c->queued_tail)
            c->queued_tail->next = s;
        else
            c->queued = s;
        c->queued_tail = s;
        return 0;
    }
    submit_now(c, s);
    return 0;
}

/* s leaves the queue of streams not yet submitted (it is there when its id is -1). */
static void unqueue(struct h3_client *c, struct h3_stream *s)
{
    struct h3_stream *prev = NULL;
    for (struct h3_stream *q = c->queued; q; prev = q, q = q->next) {
        if (q != s)
            continue;
        if (prev)
            prev->next = q->next;
        else
            c->queued = q->next;
        if (c->queued_tail == q)
            c->queued_tail = prev;
        q->next = NULL;
        return;
    }
}

void h3_client_cancel(struct h3_client *c, struct h3_stream *s, enum h3_reason r)
{
    if (s->closed)
        return;
    int64_t id = s->id;
    if (id < 0)
        unqueue(c, s);
    h3_stream_finish(c, s, r);
    if (id < 0 || c->closing)
        return;
    if (!c->in_cb) {
        ngtcp2_conn_shutdown_stream(c->q, id, NGHTTP3_H3_REQUEST_CANCELLED);
        return;
    }
    if (c->ncancels == c->cancels_cap) {
        c->cancels_cap = c->cancels_cap ? 2 * c->cancels_cap : 8;
        c->cancels = realloc(c->cancels, c->cancels_cap * sizeof *c->cancels);
        if (!c->cancels)
            abort();
    }
    c->cancels[c->ncancels++] = id;
}

void h3_client_fail(struct h3_client *c, enum h3_reason r)
{
    if (c->reason != H3_R_NONE)
        r = c->reason;
    else
        h3_set_failed(c, r, "");
    while (c->queued) {
        struct h3_stream *s = c->queued;
        c->queued = s->next;
        s->next = NULL;
        h3_stream_finish(c, s, r);
    }
    c->queued_tail = NULL;
    while (c->head)
        h3_stream_finish(c, c->head, r);
}
