/* Fuzz target for the HTTP/2 client session (src/h2): the bytes are what a server sends. The
 * parsing is nghttp2's; what is fuzzed is knee's glue around it: streams attached and detached,
 * reasons, the cap, callbacks that submit new streams from inside on_close (as the closed loop
 * will). Invariants: every submitted stream is closed exactly once, a stream closed as complete
 * has a final status and a done time, the open count never passes the cap. The first byte picks
 * the read size and the stream cap. */
#include "h2/h2.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NSTREAMS 6

struct state {
    struct h2_client *h;
    struct h2_request *req;
    struct h2_stream st[NSTREAMS];
    int closes[NSTREAMS];
    bool submitted[NSTREAMS];
    unsigned next, cap;
};

static long sink(void *io, const uint8_t *p, size_t n)
{
    (void)io, (void)p;
    return (long)n;
}

static void submit_more(struct state *s)
{
    while (s->next < NSTREAMS && h2_client_capacity(s->h) > 0) {
        struct h2_stream *st = &s->st[s->next];
        st->user = s;
        if (h2_client_submit(s->h, s->req, st) != 0)
            break;
        s->submitted[s->next++] = true;
        if (h2_client_open_streams(s->h) > s->cap)
            abort();
    }
}

static void on_close(struct h2_stream *st)
{
    struct state *s = st->user;
    size_t k = (size_t)(st - s->st);
    if (k >= NSTREAMS || !s->submitted[k] || ++s->closes[k] != 1)
        abort();
    if (st->reason == H2_R_NONE && (st->status < 200 || !st->done_ns))
        abort();
    submit_more(s); /* the next request from inside the callback, as a closed-loop client does */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (size_t)(data[0] & 0x0f) * 7 + 1;
    struct url u;
    char err[128];
    if (url_parse("http://127.0.0.1:8080/x", &u, err, sizeof err))
        abort();
    static const char body[] = "hello";
    struct http_request_spec spec = {.method = (data[0] & 0x10) ? "POST" : "GET",
                                     .url = &u,
                                     .body = (data[0] & 0x10) ? body : NULL,
                                     .body_len = (data[0] & 0x10) ? 5 : 0,
                                     .keepalive = true};
    struct h2_request req;
    if (h2_request_build(&spec, &req, err, sizeof err))
        abort();
    struct state s = {0};
    s.req = &req;
    s.cap = (data[0] & 0x20) ? 2 : NSTREAMS;
    static const struct h2_callbacks cb = {.on_close = on_close};
    s.h = h2_client_new(&cb, sink, NULL, NULL, s.cap);
    submit_more(&s);
    h2_client_flush(s.h);
    for (size_t off = 1; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        if (h2_client_feed(s.h, data + off, n) != 0)
            break;
        submit_more(&s);
        h2_client_flush(s.h);
    }
    h2_client_fail(s.h, H2_R_CLOSED);
    if (h2_client_open_streams(s.h) != 0 || h2_client_capacity(s.h) != 0)
        abort();
    for (unsigned k = 0; k < s.next; k++)
        if (s.closes[k] != 1)
            abort();
    h2_client_free(s.h);
    h2_request_release(&req);
    url_release(&u);
    return 0;
}
