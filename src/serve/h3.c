/* knee serve over HTTP/3 (cfg.h3, with --tls): a UDP socket on the TCP listener's address and
 * port, QUIC by ngtcp2 with GnuTLS (the same certificate and key as the TCP side), HTTP/3 by
 * nghttp3. Each request stream is a struct conn without a socket, as an HTTP/2 stream is
 * (h2.c): its request is filled from the HEADERS (:method, :path) and answered by conn.c
 * exactly as over TCP (health, stats, the null target, or the pipeline of work.c), so every
 * preset, counter and Server-Timing works alike; its response goes out through nghttp3.
 *
 * The QUIC connections are found by the Destination Connection ID of each datagram in a hash
 * table (every ID the server issued for a connection, and the client's first one). Bounds:
 * a handshake not done within the header timeout is dropped (counted in timeouts, as a TCP
 * connection without a request is); the idle timeout is QUIC's max_idle_timeout; at most
 * SERVE_H3_STREAMS request streams at once per connection (QUIC's MAX_STREAMS, extended as
 * each stream closes); beyond --max-conns (QUIC and TCP connections together) a new
 * connection is refused with CONNECTION_REFUSED. Every timer of a connection is ngtcp2's
 * expiry, armed on the server's loop.
 *
 * Lifetimes, as for HTTP/2: a stream whose client resets it while its request waits for a slot
 * or the lock is cancelled; one whose work runs finishes, its answer counted as a write
 * failure. A connection closed with work in flight stays (dead, its QUIC state freed) until
 * its last stream ends, so the drain waits for it. */
#include "serve/internal.h"

#include "core/err.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define H3_SCID_LEN 18     /* the length of every connection ID the server issues */
#define H3_CIDS 12         /* IDs of one connection in the table: the client's, ours, 8 more */
#define H3_BUCKETS 4096    /* the connection-ID table's buckets */
#define H3_RECV_BATCH 64   /* datagrams read per readiness event */
#define H3_DGRAM_MAX 65536 /* the largest datagram read */
#define H3_TX_MAX 1452     /* the largest datagram written (ngtcp2 shapes to what the path takes) */
#define H3_STREAM_WINDOW (256u * 1024u)
#define H3_CONN_WINDOW (1024u * 1024u)
/* GnuTLS's ciphers and groups for QUIC: TLS 1.3 only, no middlebox compatibility mode. */
#define H3_PRIORITY                                                                                                    \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-CCM:"             \
    "-GROUP-ALL:+GROUP-SECP256R1:+GROUP-X25519:+GROUP-SECP384R1:+GROUP-SECP521R1:%DISABLE_TLS13_COMPAT_MODE"

struct h3_entry {
    struct h3_entry *next;
    ngtcp2_cid cid;
    struct serve_h3_conn *q;
};

/* The UDP listener and every QUIC connection. */
struct serve_h3 {
    struct serve_handle *srv;
    int fd;
    struct loop_io io;
    struct sockaddr_storage local;
    socklen_t local_len;
    gnutls_certificate_credentials_t cred;
    gnutls_priority_t prio;
    struct serve_h3_conn *conns; /* alive and dead ones, through prev/next */
    struct h3_entry *table[H3_BUCKETS];
    uint8_t reset_secret[32]; /* stateless reset tokens derive from it */
    uint8_t rx[H3_DGRAM_MAX];
    uint8_t tx[H3_TX_MAX];
};

struct serve_h3_conn {
    struct serve_h3 *h;
    struct serve_h3_conn *prev, *next;
    ngtcp2_conn *qc;
    nghttp3_conn *h3;
    gnutls_session_t tls;
    ngtcp2_crypto_conn_ref ref;
    struct sockaddr_storage remote;
    socklen_t remote_len;
    struct loop_timer timer;
    struct conn *streams; /* alive streams, through conn.prev/next */
    unsigned nstreams;
    ngtcp2_cid cids[H3_CIDS];
    unsigned ncids;
    bool dead;      /* QUIC state gone; waits for its streams at work */
    bool goaway;    /* draining: close once no stream works */
    bool releasing; /* its streams are being freed: the last one must not free it */
    bool in_lib;    /* inside ngtcp2's read or expiry (their callbacks must not write) */
    int h3_error;   /* nghttp3's error that failed a callback: the connection closes with it */
};

/* ---- the connection-ID table --------------------------------------------------------------- */

static size_t cid_hash(const uint8_t *p, size_t n)
{
    uint64_t x = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        x = (x ^ p[i]) * 1099511628211ULL;
    return (size_t)(x % H3_BUCKETS);
}

static struct serve_h3_conn *table_find(struct serve_h3 *h, const uint8_t *p, size_t n)
{
    for (struct h3_entry *e = h->table[cid_hash(p, n)]; e; e = e->next)
        if (e->cid.datalen == n && memcmp(e->cid.data, p, n) == 0)
            return e->q;
    return NULL;
}

static void table_add(struct serve_h3_conn *q, const ngtcp2_cid *cid)
{
    if (q->ncids == H3_CIDS)
        return; /* cannot happen: ngtcp2 keeps at most 8 IDs of ours alive */
    struct h3_entry *e = xcalloc(1, sizeof *e);
    e->cid = *cid;
    e->q = q;
    size_t b = cid_hash(cid->data, cid->datalen);
    e->next = q->h->table[b];
    q->h->table[b] = e;
    q->cids[q->ncids++] = *cid;
}

static void table_remove(struct serve_h3_conn *q, const ngtcp2_cid *cid)
{
    struct h3_entry **pp = &q->h->table[cid_hash(cid->data, cid->datalen)];
    for (; *pp; pp = &(*pp)->next) {
        struct h3_entry *e = *pp;
        if (e->q == q && ngtcp2_cid_eq(&e->cid, cid)) {
            *pp = e->next;
            free(e);
            break;
        }
    }
    for (unsigned i = 0; i < q->ncids; i++)
        if (ngtcp2_cid_eq(&q->cids[i], cid)) {
            q->cids[i] = q->cids[--q->ncids];
            break;
        }
}

/* ---- sending ------------------------------------------------------------------------------- */

/* One datagram to the connection's peer. A full socket buffer drops it: QUIC's loss recovery
 * sends it again, as it would after a loss on the path. */
static void send_to(struct serve_h3 *h, const struct sockaddr_storage *to, socklen_t tolen, const uint8_t *p, size_t n)
{
    ssize_t w;
    do
        w = sendto(h->fd, p, n, MSG_DONTWAIT, (const struct sockaddr *)to, tolen);
    while (w < 0 && errno == EINTR);
}

static void h3_conn_close(struct serve_h3_conn *q);

/* Close with a CONNECTION_CLOSE that carries ccerr (a transport or an application error). */
static void close_with(struct serve_h3_conn *q, const ngtcp2_connection_close_error *ccerr)
{
    if (!q->dead && !ngtcp2_conn_is_in_closing_period(q->qc) && !ngtcp2_conn_is_in_draining_period(q->qc)) {
        ngtcp2_path_storage ps;
        ngtcp2_path_storage_zero(&ps);
        ngtcp2_pkt_info pi;
        ngtcp2_ssize n =
            ngtcp2_conn_write_connection_close(q->qc, &ps.path, &pi, q->h->tx, sizeof q->h->tx, ccerr, clock_now_ns());
        if (n > 0)
            send_to(q->h, &q->remote, q->remote_len, q->h->tx, (size_t)n);
    }
    h3_conn_close(q);
}

static void close_liberr(struct serve_h3_conn *q, int liberr, bool h3err)
{
    ngtcp2_connection_close_error ccerr;
    ngtcp2_connection_close_error_default(&ccerr);
    if (h3err)
        ngtcp2_connection_close_error_set_application_error(&ccerr, nghttp3_err_infer_quic_app_error_code(liberr), NULL,
                                                            0);
    else
        ngtcp2_connection_close_error_set_transport_error_liberr(&ccerr, liberr, NULL, 0);
    close_with(q, &ccerr);
}

/* Write what ngtcp2 and nghttp3 have, up to the send quantum (pacing: the rest at the next
 * expiry). Returns false when the connection was closed. */
static bool h3_write(struct serve_h3_conn *q)
{
    struct serve_h3 *h = q->h;
    if (q->in_lib)
        return true; /* the read or expiry in progress writes when it returns */
    uint64_t now = clock_now_ns();
    size_t quantum = ngtcp2_conn_get_send_quantum(q->qc), sent = 0;
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    while (sent < quantum) {
        int64_t sid = -1;
        int fin = 0;
        nghttp3_vec vec[16];
        nghttp3_ssize nvec = 0;
        if (q->h3 && ngtcp2_conn_get_max_data_left(q->qc)) {
            nvec = nghttp3_conn_writev_stream(q->h3, &sid, &fin, vec, sizeof vec / sizeof vec[0]);
            if (nvec < 0) {
                close_liberr(q, (int)nvec, true);
                return false;
            }
        }
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
        ngtcp2_ssize ndatalen = -1;
        ngtcp2_pkt_info pi;
        ngtcp2_ssize n = ngtcp2_conn_writev_stream(q->qc, &ps.path, &pi, h->tx, sizeof h->tx, &ndatalen, flags, sid,
                                                   (const ngtcp2_vec *)vec, (size_t)nvec, now);
        if (n < 0) {
            if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
                nghttp3_conn_block_stream(q->h3, sid);
                continue;
            }
            if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
                nghttp3_conn_shutdown_stream_write(q->h3, sid);
                continue;
            }
            if (n == NGTCP2_ERR_WRITE_MORE) {
                if (nghttp3_conn_add_write_offset(q->h3, sid, (size_t)ndatalen) != 0) {
                    close_liberr(q, NGTCP2_ERR_INTERNAL, false);
                    return false;
                }
                continue;
            }
            close_liberr(q, (int)n, false);
            return false;
        }
        if (ndatalen >= 0 && nghttp3_conn_add_write_offset(q->h3, sid, (size_t)ndatalen) != 0) {
            close_liberr(q, NGTCP2_ERR_INTERNAL, false);
            return false;
        }
        if (n == 0)
            break;
        send_to(h, &q->remote, q->remote_len, h->tx, (size_t)n);
        sent += (size_t)n;
    }
    ngtcp2_conn_update_pkt_tx_time(q->qc, now);
    return true;
}

/* After progress: arm the expiry; a draining connection whose streams rest closes. */
static void h3_settle(struct serve_h3_conn *q)
{
    if (q->dead)
        return;
    if (q->goaway) {
        bool working = false;
        for (const struct conn *sc = q->streams; sc; sc = sc->next)
            working |= sc->busy;
        if (!working) {
            ngtcp2_connection_close_error ccerr;
            ngtcp2_connection_close_error_default(&ccerr);
            ngtcp2_connection_close_error_set_application_error(&ccerr, NGHTTP3_H3_NO_ERROR, NULL, 0);
            close_with(q, &ccerr);
            return;
        }
    }
    uint64_t d = ngtcp2_conn_get_expiry(q->qc);
    if (d != UINT64_MAX)
        loop_timer_arm(&q->h->srv->loop, &q->timer, d);
    else
        loop_timer_cancel(&q->h->srv->loop, &q->timer);
}

/* ---- streams ------------------------------------------------------------------------------- */

void serve_h3_stream_free(struct conn *sc)
{
    struct serve_h3_conn *q = sc->h3_parent;
    if (!q)
        return;
    if (sc->prev)
        sc->prev->next = sc->next;
    else
        q->streams = sc->next;
    if (sc->next)
        sc->next->prev = sc->prev;
    sc->prev = sc->next = NULL;
    sc->h3_parent = NULL;
    q->nstreams--;
    if (q->h3)
        nghttp3_conn_set_stream_user_data(q->h3, sc->h3_id, NULL);
    if (q->dead && q->nstreams == 0 && !q->releasing)
        h3_conn_close(q); /* the connection waited for its last stream */
}

/* The stream's client is gone (reset, or the connection closed): as h2.c's stream_gone. */
static void stream_gone(struct conn *sc)
{
    if (sc->busy) {
        switch (sc->w.phase) {
        case PH_WAIT_SLOT:
        case PH_WAIT_LOCK:
            serve_work_cancel(sc->srv, &sc->w);
            sc->busy = false;
            break;
        case PH_WORK:
        case PH_CPU:
        case PH_DEPS:
        case PH_STREAM: /* its next event sees it dead and ends it */
            sc->dead = true;
            return;
        case PH_NONE:
            break;
        }
    }
    serve_conn_free(sc);
}

static int on_begin_headers(nghttp3_conn *h3, int64_t id, void *ud, void *sud)
{
    (void)sud;
    struct serve_h3_conn *q = ud;
    struct conn *sc = serve_conn_stream_alloc(q->h->srv);
    sc->h3_parent = q;
    sc->h3_id = id;
    sc->parser.req.http_major = 3;
    sc->prev = NULL;
    sc->next = q->streams;
    if (q->streams)
        q->streams->prev = sc;
    q->streams = sc;
    q->nstreams++;
    nghttp3_conn_set_stream_user_data(h3, id, sc);
    return 0;
}

static int on_recv_header(nghttp3_conn *h3, int64_t id, int32_t token, nghttp3_rcbuf *name, nghttp3_rcbuf *value,
                          uint8_t flags, void *ud, void *sud)
{
    (void)h3, (void)id, (void)token, (void)flags, (void)ud;
    struct conn *sc = sud;
    if (!sc)
        return 0;
    nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
    struct http_request_parser *p = &sc->parser;
    p->header_bytes += n.len + v.len + 32; /* as HTTP/2 counts a field section (RFC 9114 §4.2.2) */
    if (p->header_bytes > sc->srv->cfg.max_header_bytes && !p->error_status)
        p->error_status = 431;
    if (n.len == 7 && memcmp(n.base, ":method", 7) == 0) {
        p->req.method = serve_h2_method(v.base, v.len);
    } else if (n.len == 5 && memcmp(n.base, ":path", 5) == 0) {
        if (v.len > HTTP_REQUEST_URL_MAX) {
            if (!p->error_status)
                p->error_status = 414;
        } else {
            memcpy(p->req.url, v.base, v.len);
            p->req.url[v.len] = '\0';
            p->req.url_len = v.len;
        }
    }
    return 0;
}

/* Received bytes nghttp3 has passed on (a request body, or what it consumed later) open the
 * flow-control windows again. */
static void consumed(struct serve_h3_conn *q, int64_t id, size_t n)
{
    ngtcp2_conn_extend_max_stream_offset(q->qc, id, n);
    ngtcp2_conn_extend_max_offset(q->qc, n);
}

static int on_recv_data(nghttp3_conn *h3, int64_t id, const uint8_t *data, size_t len, void *ud, void *sud)
{
    (void)h3, (void)data;
    struct conn *sc = sud;
    consumed(ud, id, len);
    if (sc) {
        sc->parser.body_bytes += len;
        if (sc->parser.body_bytes > sc->srv->cfg.max_body_bytes && !sc->parser.error_status)
            sc->parser.error_status = 413;
    }
    return 0;
}

static int on_deferred_consume(nghttp3_conn *h3, int64_t id, size_t n, void *ud, void *sud)
{
    (void)h3, (void)sud;
    consumed(ud, id, n);
    return 0;
}

/* The request is complete (FIN): answer it, refused or not. */
static int on_end_stream(nghttp3_conn *h3, int64_t id, void *ud, void *sud)
{
    (void)h3, (void)id, (void)ud;
    struct conn *sc = sud;
    if (!sc || sc->busy || sc->nreq)
        return 0;
    counter_inc(&sc->srv->c.h3_requests);
    sc->nreq = 1;
    if (!sc->parser.error_status && sc->parser.req.url_len == 0)
        sc->parser.error_status = 400; /* no :path (nghttp3 checks the pseudo-headers' form) */
    if (sc->parser.error_status) {
        sc->parsing = true;
        serve_conn_refuse_request(sc, sc->parser.error_status);
        sc->parsing = false;
        return 0;
    }
    serve_conn_request(sc);
    return 0;
}

static int on_h3_stream_close(nghttp3_conn *h3, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h3, (void)code;
    struct serve_h3_conn *q = ud;
    if (ngtcp2_is_bidi_stream(id))
        ngtcp2_conn_extend_max_streams_bidi(q->qc, 1); /* the stream limit counts open streams */
    if (sud) {
        nghttp3_conn_set_stream_user_data(h3, id, NULL);
        stream_gone(sud);
    }
    return 0;
}

static int on_stop_sending(nghttp3_conn *h3, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h3, (void)sud;
    struct serve_h3_conn *q = ud;
    return ngtcp2_conn_shutdown_stream_read(q->qc, id, code) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

static int on_reset_stream(nghttp3_conn *h3, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h3, (void)sud;
    struct serve_h3_conn *q = ud;
    return ngtcp2_conn_shutdown_stream_write(q->qc, id, code) ? NGHTTP3_ERR_CALLBACK_FAILURE : 0;
}

static nghttp3_ssize body_read(nghttp3_conn *h3, int64_t id, nghttp3_vec *vec, size_t veccnt, uint32_t *flags, void *ud,
                               void *sud)
{
    (void)h3, (void)id, (void)ud, (void)veccnt;
    struct conn *sc = sud;
    *flags |= NGHTTP3_DATA_FLAG_EOF;
    if (!sc || sc->out_end == sc->out_start)
        return 0;
    /* the body stays in the stream's buffer until the stream closes (all of it acknowledged) */
    vec[0].base = (uint8_t *)sc->out + sc->out_start;
    vec[0].len = sc->out_end - sc->out_start;
    sc->out_start = sc->out_end;
    return 1;
}

/* An events answer's body: what is in out now, one DATA frame per call; nothing yet and more to
 * come: WOULDBLOCK until serve_h3_events_push resumes the stream. The bytes stay in out until
 * acknowledged (on_acked_data). */
static nghttp3_ssize events_read(nghttp3_conn *h3, int64_t id, nghttp3_vec *vec, size_t veccnt, uint32_t *flags,
                                 void *ud, void *sud)
{
    (void)h3, (void)id, (void)ud, (void)veccnt;
    struct conn *sc = sud;
    if (!sc)
        return 0;
    if (sc->out_start == sc->out_end) {
        if (!sc->h3_events_eof)
            return NGHTTP3_ERR_WOULDBLOCK;
        *flags |= NGHTTP3_DATA_FLAG_EOF;
        return 0;
    }
    vec[0].base = (uint8_t *)sc->out + sc->out_start;
    vec[0].len = sc->out_end - sc->out_start;
    sc->out_start = sc->out_end;
    if (sc->h3_events_eof)
        *flags |= NGHTTP3_DATA_FLAG_EOF;
    return 1;
}

/* The client acknowledged len more bytes of a stream's body (an events answer reuses out once
 * every byte written is acknowledged). */
static int on_acked_data(nghttp3_conn *h3, int64_t id, uint64_t len, void *ud, void *sud)
{
    (void)h3, (void)id, (void)ud;
    struct conn *sc = sud;
    if (sc)
        sc->h3_acked += (size_t)len;
    return 0;
}

static nghttp3_nv nv(const char *name, const char *value, size_t vlen)
{
    nghttp3_nv f = {(uint8_t *)name, (uint8_t *)value, strlen(name), vlen, NGHTTP3_NV_FLAG_NONE};
    return f;
}

void serve_h3_respond(struct conn *sc, int status, const char *ctype, const char *body, size_t body_len,
                      const char *extra, bool head_only)
{
    struct serve_h3_conn *q = sc->h3_parent;
    if (sc->dead || !q || q->dead || !q->h3)
        return;
    if (body_len > sizeof sc->out)
        body_len = sizeof sc->out; /* cannot happen: responses are at most RESP_MAX */
    memcpy(sc->out, body, body_len);
    sc->out_start = 0;
    sc->out_end = head_only ? 0 : body_len;
    char st[8], len[24];
    snprintf(st, sizeof st, "%d", status);
    int ln = snprintf(len, sizeof len, "%zu", body_len);
    nghttp3_nv nva[8];
    size_t n = 0;
    nva[n++] = nv(":status", st, strlen(st));
    nva[n++] = nv("server", "knee", 4);
    nva[n++] = nv("date", sc->srv->date, strlen(sc->srv->date));
    nva[n++] = nv("content-type", ctype, strlen(ctype));
    nva[n++] = nv("content-length", len, (size_t)ln);
    char names[2][32]; /* extra: "Server-Timing: ...\r\n" lines; HTTP/3 wants lower-case names */
    for (const char *p = extra; p && *p && n < 7;) {
        const char *eol = strstr(p, "\r\n"), *colon = strchr(p, ':');
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
    nghttp3_data_reader dr = {.read_data = body_read};
    if (nghttp3_conn_submit_response(q->h3, sc->h3_id, nva, n, &dr) != 0)
        counter_inc(&sc->srv->c.write_failures);
}

/* The Server-Timing line of extra ("Name: v\r\n"), if any, as a field with a lower-case name. */
static size_t timing_field(const char *extra, nghttp3_nv *f)
{
    const char *colon = extra ? strchr(extra, ':') : NULL;
    const char *eol = extra ? strstr(extra, "\r\n") : NULL;
    if (!colon || !eol || colon > eol)
        return 0;
    const char *v = colon + 1;
    while (*v == ' ')
        v++;
    *f = nv("server-timing", v, (size_t)(eol - v));
    return 1;
}

void serve_h3_events_begin(struct conn *sc, const char *extra)
{
    struct serve_h3_conn *q = sc->h3_parent;
    if (sc->dead || !q || q->dead || !q->h3)
        return;
    sc->out_start = sc->out_end = sc->h3_acked = 0;
    sc->h3_events_eof = false;
    nghttp3_nv nva[6];
    size_t n = 0;
    nva[n++] = nv(":status", "200", 3);
    nva[n++] = nv("server", "knee", 4);
    nva[n++] = nv("date", sc->srv->date, strlen(sc->srv->date));
    nva[n++] = nv("content-type", "text/event-stream", 17);
    nva[n++] = nv("cache-control", "no-cache", 8);
    n += timing_field(extra, &nva[n]);
    nghttp3_data_reader dr = {.read_data = events_read};
    if (nghttp3_conn_submit_response(q->h3, sc->h3_id, nva, n, &dr) != 0)
        counter_inc(&sc->srv->c.write_failures);
}

bool serve_h3_events_push(struct conn *sc, const char *p, size_t n, bool eof)
{
    struct serve_h3_conn *q = sc->h3_parent;
    if (sc->dead || !q || q->dead || !q->h3)
        return true; /* nobody to write to: the caller's end comes as for a gone client */
    if (sc->h3_acked == sc->out_end && sc->out_start == sc->out_end)
        sc->out_start = sc->out_end = sc->h3_acked = 0; /* all of it acknowledged: reuse out */
    if (sizeof sc->out - sc->out_end < n)
        return false;
    memcpy(sc->out + sc->out_end, p, n);
    sc->out_end += n;
    sc->h3_events_eof = eof;
    nghttp3_conn_resume_stream(q->h3, sc->h3_id);
    return true;
}

void serve_h3_stream_done(struct conn *sc)
{
    if (sc->parsing)
        return; /* answered inside nghttp3's callbacks: the read path writes it */
    struct serve_h3_conn *q = sc->h3_parent;
    if (!q || q->dead)
        return;
    if (h3_write(q))
        h3_settle(q);
}

/* ---- QUIC callbacks ------------------------------------------------------------------------ */

static void rand_bytes(uint8_t *dest, size_t len)
{
    if (gnutls_rnd(GNUTLS_RND_RANDOM, dest, len) != 0)
        knee_oom();
}

static void on_rand(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
    (void)ctx;
    rand_bytes(dest, len);
}

static int on_new_cid(ngtcp2_conn *qc, ngtcp2_cid *cid, uint8_t *token, size_t cidlen, void *ud)
{
    (void)qc;
    struct serve_h3_conn *q = ud;
    if (q->ncids == H3_CIDS)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    cid->datalen = cidlen;
    rand_bytes(cid->data, cidlen);
    if (ngtcp2_crypto_generate_stateless_reset_token(token, q->h->reset_secret, sizeof q->h->reset_secret, cid))
        return NGTCP2_ERR_CALLBACK_FAILURE;
    table_add(q, cid);
    return 0;
}

static int on_remove_cid(ngtcp2_conn *qc, const ngtcp2_cid *cid, void *ud)
{
    (void)qc;
    table_remove(ud, cid);
    return 0;
}

static int h3_setup(struct serve_h3_conn *q);

static int on_handshake_completed(ngtcp2_conn *qc, void *ud)
{
    (void)qc;
    return h3_setup(ud) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_recv_stream_data(ngtcp2_conn *qc, uint32_t flags, int64_t id, uint64_t offset, const uint8_t *data,
                               size_t len, void *ud, void *sud)
{
    (void)qc, (void)offset, (void)sud;
    struct serve_h3_conn *q = ud;
    if (!q->h3 && h3_setup(q))
        return NGTCP2_ERR_CALLBACK_FAILURE;
    nghttp3_ssize n = nghttp3_conn_read_stream(q->h3, id, data, len, flags & NGTCP2_STREAM_DATA_FLAG_FIN);
    if (n < 0) {
        q->h3_error = (int)n;
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    consumed(q, id, (size_t)n);
    return 0;
}

static int on_acked(ngtcp2_conn *qc, int64_t id, uint64_t offset, uint64_t len, void *ud, void *sud)
{
    (void)qc, (void)offset, (void)sud;
    struct serve_h3_conn *q = ud;
    return q->h3 && nghttp3_conn_add_ack_offset(q->h3, id, len) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_stream_close(ngtcp2_conn *qc, uint32_t flags, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)qc, (void)sud;
    struct serve_h3_conn *q = ud;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
        code = NGHTTP3_H3_NO_ERROR;
    if (!q->h3)
        return 0;
    int r = nghttp3_conn_close_stream(q->h3, id, code);
    return r && r != NGHTTP3_ERR_STREAM_NOT_FOUND ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_stream_reset(ngtcp2_conn *qc, int64_t id, uint64_t final_size, uint64_t code, void *ud, void *sud)
{
    (void)qc, (void)final_size, (void)code, (void)sud;
    struct serve_h3_conn *q = ud;
    return q->h3 && nghttp3_conn_shutdown_stream_read(q->h3, id) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_stream_stop_sending(ngtcp2_conn *qc, int64_t id, uint64_t code, void *ud, void *sud)
{
    return on_stream_reset(qc, id, 0, code, ud, sud);
}

static int on_extend_max_remote_bidi(ngtcp2_conn *qc, uint64_t max, void *ud)
{
    (void)qc;
    struct serve_h3_conn *q = ud;
    if (q->h3)
        nghttp3_conn_set_max_client_streams_bidi(q->h3, max);
    return 0;
}

static int on_extend_max_stream_data(ngtcp2_conn *qc, int64_t id, uint64_t max, void *ud, void *sud)
{
    (void)qc, (void)max, (void)sud;
    struct serve_h3_conn *q = ud;
    return q->h3 && nghttp3_conn_unblock_stream(q->h3, id) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
    return ((struct serve_h3_conn *)ref->user_data)->qc;
}

/* HTTP/3 on top of the handshaken connection: its session and the three streams a server
 * opens (control, QPACK encoder and decoder). 0 or -1. */
static int h3_setup(struct serve_h3_conn *q)
{
    if (q->h3)
        return 0;
    nghttp3_callbacks cb = {
        .acked_stream_data = on_acked_data,
        .stream_close = on_h3_stream_close,
        .recv_data = on_recv_data,
        .deferred_consume = on_deferred_consume,
        .begin_headers = on_begin_headers,
        .recv_header = on_recv_header,
        .stop_sending = on_stop_sending,
        .end_stream = on_end_stream,
        .reset_stream = on_reset_stream,
    };
    nghttp3_settings st;
    nghttp3_settings_default(&st);
    st.max_field_section_size = q->h->srv->cfg.max_header_bytes;
    if (nghttp3_conn_server_new(&q->h3, &cb, &st, NULL, q))
        return -1;
    nghttp3_conn_set_max_client_streams_bidi(q->h3, SERVE_H3_STREAMS);
    int64_t ctrl, enc, dec;
    if (ngtcp2_conn_open_uni_stream(q->qc, &ctrl, NULL) || nghttp3_conn_bind_control_stream(q->h3, ctrl) ||
        ngtcp2_conn_open_uni_stream(q->qc, &enc, NULL) || ngtcp2_conn_open_uni_stream(q->qc, &dec, NULL) ||
        nghttp3_conn_bind_qpack_streams(q->h3, enc, dec))
        return -1;
    return 0;
}

/* ---- connections --------------------------------------------------------------------------- */

static void on_h3_timer(struct loop *loop, struct loop_timer *t);

static int tls_session(struct serve_h3_conn *q)
{
    struct serve_h3 *h = q->h;
    if (gnutls_init(&q->tls, GNUTLS_SERVER | GNUTLS_NO_AUTO_SEND_TICKET | GNUTLS_NO_END_OF_EARLY_DATA))
        return -1;
    gnutls_datum_t alpn = {(unsigned char *)"h3", 2};
    if (ngtcp2_crypto_gnutls_configure_server_session(q->tls) || gnutls_priority_set(q->tls, h->prio) ||
        gnutls_credentials_set(q->tls, GNUTLS_CRD_CERTIFICATE, h->cred) ||
        gnutls_alpn_set_protocols(q->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY))
        return -1;
    q->ref.get_conn = get_conn;
    q->ref.user_data = q;
    gnutls_session_set_ptr(q->tls, &q->ref);
    ngtcp2_conn_set_tls_native_handle(q->qc, q->tls);
    return 0;
}

static const ngtcp2_callbacks quic_callbacks = {
    .recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
    .recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
    .handshake_completed = on_handshake_completed,
    .encrypt = ngtcp2_crypto_encrypt_cb,
    .decrypt = ngtcp2_crypto_decrypt_cb,
    .hp_mask = ngtcp2_crypto_hp_mask_cb,
    .recv_stream_data = on_recv_stream_data,
    .acked_stream_data_offset = on_acked,
    .stream_close = on_stream_close,
    .rand = on_rand,
    .get_new_connection_id = on_new_cid,
    .remove_connection_id = on_remove_cid,
    .update_key = ngtcp2_crypto_update_key_cb,
    .stream_reset = on_stream_reset,
    .extend_max_remote_streams_bidi = on_extend_max_remote_bidi,
    .extend_max_stream_data = on_extend_max_stream_data,
    .delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
    .delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
    .get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
    .stream_stop_sending = on_stream_stop_sending,
    .version_negotiation = ngtcp2_crypto_version_negotiation_cb,
};

/* A new connection from the client's first Initial (hd). NULL when it could not be made. */
static struct serve_h3_conn *h3_conn_new(struct serve_h3 *h, const ngtcp2_pkt_hd *hd,
                                         const struct sockaddr_storage *from, socklen_t fromlen)
{
    struct serve_handle *s = h->srv;
    struct serve_h3_conn *q = xcalloc(1, sizeof *q);
    q->h = h;
    q->remote = *from;
    q->remote_len = fromlen;
    loop_timer_init(&q->timer, on_h3_timer, q);
    ngtcp2_cid scid;
    scid.datalen = H3_SCID_LEN;
    rand_bytes(scid.data, scid.datalen);
    ngtcp2_settings st;
    ngtcp2_settings_default(&st);
    st.initial_ts = clock_now_ns();
    st.handshake_timeout = s->cfg.header_timeout_ns;
    st.max_tx_udp_payload_size = H3_TX_MAX;
    ngtcp2_transport_params p;
    ngtcp2_transport_params_default(&p);
    p.initial_max_stream_data_bidi_remote = H3_STREAM_WINDOW;
    p.initial_max_stream_data_uni = H3_STREAM_WINDOW;
    p.initial_max_data = H3_CONN_WINDOW;
    p.initial_max_streams_bidi = SERVE_H3_STREAMS;
    p.initial_max_streams_uni = 3;
    p.max_idle_timeout = s->cfg.idle_timeout_ns;
    p.original_dcid = hd->dcid;
    p.stateless_reset_token_present = 1;
    ngtcp2_crypto_generate_stateless_reset_token(p.stateless_reset_token, h->reset_secret, sizeof h->reset_secret,
                                                 &scid);
    ngtcp2_path path = {{(ngtcp2_sockaddr *)&h->local, h->local_len}, {(ngtcp2_sockaddr *)&q->remote, fromlen}, NULL};
    if (ngtcp2_conn_server_new(&q->qc, &hd->scid, &scid, &path, hd->version, &quic_callbacks, &st, &p, NULL, q)) {
        free(q);
        return NULL;
    }
    if (tls_session(q)) {
        if (q->tls)
            gnutls_deinit(q->tls);
        ngtcp2_conn_del(q->qc);
        free(q);
        return NULL;
    }
    table_add(q, &hd->dcid);
    table_add(q, &scid);
    q->next = h->conns;
    if (h->conns)
        h->conns->prev = q;
    h->conns = q;
    s->nconn_structs++;
    counter_inc(&s->c.connections);
    counter_inc(&s->c.connections_total);
    return q;
}

/* Free the QUIC state; the struct itself once no stream works any more. */
static void h3_conn_close(struct serve_h3_conn *q)
{
    struct serve_h3 *h = q->h;
    struct serve_handle *s = h->srv;
    if (!q->dead) {
        q->dead = true;
        counter_dec(&s->c.connections);
        loop_timer_cancel(&s->loop, &q->timer);
        while (q->ncids)
            table_remove(q, &q->cids[0]);
        bool releasing = q->releasing;
        q->releasing = true;
        struct conn *sc = q->streams;
        while (sc) {
            struct conn *next = sc->next;
            if (!sc->dead)
                stream_gone(sc); /* frees it, or leaves it dead until its work ends */
            sc = next;
        }
        q->releasing = releasing;
        if (q->h3)
            nghttp3_conn_del(q->h3);
        q->h3 = NULL;
        ngtcp2_conn_del(q->qc);
        q->qc = NULL;
        gnutls_deinit(q->tls);
        q->tls = NULL;
    }
    if (q->nstreams)
        return;
    if (q->prev)
        q->prev->next = q->next;
    else
        h->conns = q->next;
    if (q->next)
        q->next->prev = q->prev;
    s->nconn_structs--;
    free(q);
}

static void on_h3_timer(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct serve_h3_conn *q = t->data;
    q->in_lib = true;
    int r = ngtcp2_conn_handle_expiry(q->qc, clock_now_ns());
    q->in_lib = false;
    if (r == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
        counter_inc(&q->h->srv->c.timeouts); /* as a TCP connection without a request in time */
        h3_conn_close(q);
        return;
    }
    if (r || ngtcp2_conn_is_in_closing_period(q->qc) || ngtcp2_conn_is_in_draining_period(q->qc)) {
        h3_conn_close(q); /* the idle timeout, or the end of a close: silently */
        return;
    }
    if (h3_write(q))
        h3_settle(q);
}

/* One datagram of connection q. */
static void h3_read(struct serve_h3_conn *q, const uint8_t *p, size_t n)
{
    struct serve_h3 *h = q->h;
    ngtcp2_path path = {
        {(ngtcp2_sockaddr *)&h->local, h->local_len}, {(ngtcp2_sockaddr *)&q->remote, q->remote_len}, NULL};
    ngtcp2_pkt_info pi = {0};
    q->in_lib = true;
    int r = ngtcp2_conn_read_pkt(q->qc, &path, &pi, p, n, clock_now_ns());
    q->in_lib = false;
    if (r == 0) {
        if (h3_write(q))
            h3_settle(q);
        return;
    }
    if (r == NGTCP2_ERR_CRYPTO) {
        counter_inc(&h->srv->c.tls_failed);
        ngtcp2_connection_close_error ccerr;
        ngtcp2_connection_close_error_default(&ccerr);
        ngtcp2_connection_close_error_set_transport_error_tls_alert(&ccerr, ngtcp2_conn_get_tls_alert(q->qc), NULL, 0);
        close_with(q, &ccerr);
        return;
    }
    if (r == NGTCP2_ERR_DRAINING || r == NGTCP2_ERR_DROP_CONN || r == NGTCP2_ERR_RETRY) {
        h3_conn_close(q); /* the peer closed, or nothing worth answering */
        return;
    }
    if (q->h3_error)
        close_liberr(q, q->h3_error, true);
    else
        close_liberr(q, r, false);
}

/* A first packet the server will not serve (--max-conns reached, or draining): an Initial
 * CONNECTION_CLOSE with CONNECTION_REFUSED, which the client can read. */
static void refuse(struct serve_h3 *h, const ngtcp2_pkt_hd *hd, const struct sockaddr_storage *from, socklen_t fromlen)
{
    counter_inc(&h->srv->c.conn_refused);
    ngtcp2_ssize n = ngtcp2_crypto_write_connection_close(h->tx, sizeof h->tx, hd->version, &hd->scid, &hd->dcid,
                                                          NGTCP2_CONNECTION_REFUSED, NULL, 0);
    if (n > 0)
        send_to(h, from, fromlen, h->tx, (size_t)n);
}

static void datagram(struct serve_h3 *h, const uint8_t *p, size_t n, const struct sockaddr_storage *from,
                     socklen_t fromlen)
{
    struct serve_handle *s = h->srv;
    ngtcp2_version_cid vc;
    int r = ngtcp2_pkt_decode_version_cid(&vc, p, n, H3_SCID_LEN);
    if (r == NGTCP2_ERR_VERSION_NEGOTIATION) {
        uint32_t v1 = NGTCP2_PROTO_VER_V1;
        uint8_t unused;
        rand_bytes(&unused, 1);
        ngtcp2_ssize w = ngtcp2_pkt_write_version_negotiation(h->tx, sizeof h->tx, unused, vc.scid, vc.scidlen, vc.dcid,
                                                              vc.dcidlen, &v1, 1);
        if (w > 0)
            send_to(h, from, fromlen, h->tx, (size_t)w);
        return;
    }
    if (r)
        return; /* not QUIC */
    struct serve_h3_conn *q = table_find(h, vc.dcid, vc.dcidlen);
    if (!q) {
        ngtcp2_pkt_hd hd;
        if (ngtcp2_accept(&hd, p, n) != 0)
            return; /* not a first Initial: an old connection's packet, or garbage */
        if (s->draining || counter_get(&s->c.connections) >= s->cfg.max_conns) {
            refuse(h, &hd, from, fromlen);
            return;
        }
        q = h3_conn_new(h, &hd, from, fromlen);
        if (!q)
            return;
    }
    h3_read(q, p, n);
}

static void on_udp(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop, (void)events;
    struct serve_h3 *h = io->data;
    for (int i = 0; i < H3_RECV_BATCH; i++) {
        struct sockaddr_storage from;
        socklen_t fromlen = sizeof from;
        ssize_t n = recvfrom(h->fd, h->rx, sizeof h->rx, 0, (struct sockaddr *)&from, &fromlen);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return; /* EAGAIN; or an ICMP error of an earlier send: the next event */
        }
        datagram(h, h->rx, (size_t)n, &from, fromlen);
    }
}

/* ---- the listener -------------------------------------------------------------------------- */

/* The credentials GnuTLS serves: the files when given, else the TCP side's generated pair. */
static int load_credentials(struct serve_h3 *h, const char *cert_file, const char *key_file, char *err, size_t errlen)
{
    if (gnutls_certificate_allocate_credentials(&h->cred))
        knee_oom();
    int r;
    if (cert_file && key_file) {
        r = gnutls_certificate_set_x509_key_file(h->cred, cert_file, key_file, GNUTLS_X509_FMT_PEM);
    } else {
        char *cert, *key;
        if (!h->srv->tls || tls_ctx_pem(h->srv->tls, &cert, &key))
            return knee_fail(err, errlen, KNEE_EINVAL, "--h3: no certificate to serve");
        gnutls_datum_t c = {(unsigned char *)cert, (unsigned)strlen(cert)};
        gnutls_datum_t k = {(unsigned char *)key, (unsigned)strlen(key)};
        r = gnutls_certificate_set_x509_key_mem(h->cred, &c, &k, GNUTLS_X509_FMT_PEM);
        free(cert);
        free(key);
    }
    if (r < 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--h3: GnuTLS cannot load the certificate: %s", gnutls_strerror(r));
    if (gnutls_priority_init(&h->prio, H3_PRIORITY, NULL) < 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--h3: GnuTLS has no TLS 1.3 for QUIC");
    return 0;
}

int serve_h3_open(struct serve_handle *s, int listen_fd)
{
    struct serve_h3 *h = s->h3;
    if (!h) {
        h = xcalloc(1, sizeof *h);
        h->srv = s;
        h->fd = -1;
        s->h3 = h;
    }
    h->local_len = sizeof h->local;
    if (getsockname(listen_fd, (struct sockaddr *)&h->local, &h->local_len) < 0)
        return -errno;
    int fd = socket(h->local.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&h->local, h->local_len) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    h->fd = fd;
    return 0;
}

int serve_h3_start(struct serve_handle *s, const char *cert_file, const char *key_file)
{
    struct serve_h3 *h = s->h3;
    char err[256];
    int r = load_credentials(h, cert_file, key_file, err, sizeof err);
    if (r)
        return r;
    rand_bytes(h->reset_secret, sizeof h->reset_secret);
    h->io.fd = h->fd;
    h->io.cb = on_udp;
    h->io.data = h;
    r = loop_io_add(&s->loop, &h->io, EPOLLIN);
    return r < 0 ? r : 0;
}

void serve_h3_drain(struct serve_handle *s)
{
    struct serve_h3 *h = s->h3;
    if (!h)
        return;
    struct serve_h3_conn *q = h->conns;
    while (q) {
        struct serve_h3_conn *next = q->next;
        if (!q->dead && !q->goaway) {
            q->goaway = true;
            if (q->h3)
                nghttp3_conn_shutdown(q->h3); /* GOAWAY: no new requests */
            if (h3_write(q))
                h3_settle(q);
        }
        q = next;
    }
}

void serve_h3_release(struct serve_handle *s)
{
    struct serve_h3 *h = s->h3;
    if (!h)
        return;
    while (h->conns) {
        struct serve_h3_conn *q = h->conns;
        if (!q->dead)
            h3_conn_close(q);
        if (h->conns != q)
            continue;
        /* streams whose work was cut short by the end of the grace: free them with it */
        q->releasing = true;
        while (q->streams) {
            struct conn *sc = q->streams;
            sc->w.phase = PH_NONE;
            serve_conn_free(sc);
        }
        q->releasing = false;
        h3_conn_close(q);
    }
    if (h->fd >= 0) {
        if (h->io.cb)
            loop_io_del(&s->loop, &h->io);
        close(h->fd);
    }
    if (h->prio)
        gnutls_priority_deinit(h->prio);
    if (h->cred)
        gnutls_certificate_free_credentials(h->cred);
    free(h);
    s->h3 = NULL;
}
