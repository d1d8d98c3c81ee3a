/* The state of an HTTP/3 client connection, shared by the files of src/h3: quic.c (the QUIC
 * connection, the socket, the handshake) and http.c (nghttp3 and the streams). */
#ifndef KNEE_H3_INTERNAL_H
#define KNEE_H3_INTERNAL_H

#include "h3/h3.h"

#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <sys/socket.h>

struct h3_tls {
    gnutls_certificate_credentials_t cred;
    bool insecure;
};

struct h3_session {
    gnutls_datum_t ticket;      /* gnutls_session_get_data2's (gnutls_free); size 0: none */
    ngtcp2_transport_params tp; /* the server's, from the connection that got the ticket */
    bool has_tp;
};

struct h3_client {
    ngtcp2_crypto_conn_ref conn_ref; /* gnutls_session_get_ptr: how ngtcp2's crypto finds the connection */
    ngtcp2_conn *q;
    nghttp3_conn *h;
    gnutls_session_t tls;
    int fd;
    struct sockaddr_storage local, remote;
    socklen_t local_len, remote_len;
    const struct h3_callbacks *cb;
    uint32_t max_streams;
    uint32_t open; /* streams submitted and not closed (queued ones included) */
    bool in_cb;    /* inside ngtcp2/nghttp3 (a submit or cancel is queued, not done) */
    bool goaway;   /* the server's GOAWAY: no new streams */
    bool handshake_done;
    bool closing;               /* CONNECTION_CLOSE sent or received: nothing more goes out */
    bool early;                 /* 0-RTT: HTTP/3 started before the handshake with the ticket's parameters */
    bool early_sent;            /* ... and GnuTLS installed the 0-RTT key (early data went out) */
    bool early_accepted;        /* the server took the early data */
    struct h3_session *session; /* --tls-resume: where tickets go (borrowed) */
    FILE *qlog;                 /* borrowed */
    enum h3_reason reason;      /* the connection's failure */
    uint64_t error_code;
    bool close_app;
    int sys_errno;
    char detail[160];
    struct h3_stream *head;   /* open streams that reached ngtcp2 */
    struct h3_stream *queued; /* submitted inside a callback, waiting for the next flush (FIFO via next) */
    struct h3_stream *queued_tail;
    int64_t *cancels; /* streams cancelled inside a callback: reset at the next flush */
    size_t ncancels, cancels_cap;
    nghttp3_nv *nv; /* scratch: a request's header fields for nghttp3 */
    size_t nv_cap;
    struct h3_client_stats stats;
};

/* ---- quic.c */
/* Mark the connection failed (the first reason stays). */
void h3_set_failed(struct h3_client *c, enum h3_reason r, const char *detail);

/* ---- http.c */
/* The handshake completed: the HTTP/3 connection and its control and QPACK streams. 0 or < 0. */
int h3_http_start(struct h3_client *c);
/* ngtcp2's callbacks that belong to HTTP/3 (stream data, acks, stream close, reset), installed
 * into cb. */
void h3_http_callbacks(ngtcp2_callbacks *cb);
/* Streams queued inside a callback reach nghttp3 (before a flush writes). */
void h3_http_submit_queued(struct h3_client *c);
/* Close s with reason r (on_close), unless already closed. */
void h3_stream_finish(struct h3_client *c, struct h3_stream *s, enum h3_reason r);
/* The server rejected 0-RTT: the HTTP/3 connection starts again and every open stream is
 * queued to be sent again (in 1-RTT) with the next flush. 0 or < 0. */
int h3_http_restart(struct h3_client *c);

#endif
