/* knee serve's streamed answers (the stream preset): a work request answered as server-sent
 * events, the shape of a token stream. The request waits for its slot and for the first event's
 * delay as any work does (work.c); then the head and the first event go out, and each next event
 * comes from a timer on the server's loop (never a sleep), the slot held until the last. Over
 * HTTP/1.1 each event is one chunk; over HTTP/2 and HTTP/3 one DATA frame (when the client keeps
 * up). */
#include "serve/internal.h"

#include "core/clock.h"
#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One event's bytes, chunk framing included: "id: N\ndata: {...}\n\n" is well under this. */
#define EVENT_MAX 128
/* A client that has not taken the previous events: try the next one again this much later. */
#define RETRY_NS (1 * NS_PER_MS)

static int query_ns(const struct http_request *r, const char *name, uint64_t *ns)
{
    double v;
    int rc = http_request_query_double(r, name, ns_to_ms(SERVE_DURATION_MAX_NS), &v);
    if (rc == 0)
        *ns = (uint64_t)llround(v * 1e6);
    return rc == KNEE_ENOTFOUND ? 0 : rc;
}

bool serve_stream_plan(struct serve_handle *s, const struct http_request *r, struct work *w)
{
    const struct serve_config *cfg = &s->cfg;
    w->events = cfg->stream_events;
    w->work_ns = cfg->stream_first_ns;
    w->gap_ns = cfg->stream_gap_ns;
    w->stall_ns = cfg->stream_stall_ns;
    w->stall_p = cfg->stream_stall_p;
    w->sent = 0;
    double v;
    int rc = http_request_query_double(r, "events", SERVE_STREAM_EVENTS_MAX, &v);
    if (rc == 0 && v == floor(v))
        w->events = (unsigned)v;
    else if (rc != KNEE_ENOTFOUND)
        return false;
    rc = http_request_query_double(r, "stall_p", 1, &v);
    if (rc == 0)
        w->stall_p = v;
    else if (rc != KNEE_ENOTFOUND)
        return false;
    if (query_ns(r, "first_ms", &w->work_ns) || query_ns(r, "gap_ms", &w->gap_ns) ||
        query_ns(r, "stall_ms", &w->stall_ns))
        return false;
    /* drawn now, in arrival order: the stalls of each request are fixed by the seed */
    rng_seed(&w->srng, rng_next(&s->rng));
    w->stream = !(r->method == HTTP_HEAD);
    return true;
}

/* The event after `sent` events: a gap, or a stall with probability stall_p. */
static uint64_t next_wait_ns(struct work *w)
{
    if (w->stall_p > 0 && rng_bernoulli(&w->srng, w->stall_p))
        return w->stall_ns;
    return w->gap_ns;
}

/* The response head of an HTTP/1.1 stream into c's output (it always fits: nothing is pending
 * before a request's answer beyond what RESP_MAX leaves room for). */
static void head_h1(struct conn *c, const char *timing)
{
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nDate: %s\r\nServer: knee\r\nContent-Type: text/event-stream\r\n"
                     "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n%s%s\r\n",
                     c->srv->date, timing, c->w.keep_alive ? "" : "Connection: close\r\n");
    if (n < 0 || (size_t)n >= sizeof head || !serve_conn_out_write(c, head, (size_t)n))
        c->closing = true;
}

/* An HTTP/2 or HTTP/3 stream: its events are DATA frames, not chunks (an HTTP/3 stream id may be
 * 0: its parent tells). */
static bool framed(const struct conn *c)
{
    return c->h2_id || c->h3_parent;
}

/* Event i of n ("id: i\ndata: {...}\n\n"), framed as a chunk over HTTP/1.1. Returns its length. */
static size_t event_bytes(const struct conn *c, unsigned i, unsigned n, char out[EVENT_MAX])
{
    char ev[96];
    int len = snprintf(ev, sizeof ev, "id: %u\ndata: {\"i\":%u,\"of\":%u}\n\n", i, i, n);
    if (framed(c)) {
        memcpy(out, ev, (size_t)len);
        return (size_t)len;
    }
    return (size_t)snprintf(out, EVENT_MAX, "%x\r\n%s\r\n", (unsigned)len, ev);
}

static void on_event_timer(struct loop *loop, struct loop_timer *t);

/* Write what the connection has (not from inside the parse: its caller writes then). */
static void stream_flush(struct conn *c)
{
    if (c->parsing)
        return;
    if (c->h2_id) {
        serve_h2_stream_done(c);
        return;
    }
    if (c->h3_parent) {
        serve_h3_stream_done(c);
        return;
    }
    if (serve_conn_flush(c))
        serve_conn_settle(c);
}

/* Write the next event (or the end) when there is room; then arm the timer of the one after. */
static void stream_step(struct serve_handle *s, struct work *w)
{
    struct conn *c = w->conn;
    if (c->dead) { /* the client left: the slot goes back now; counted as a write failure */
        serve_work_end(s, w);
        return;
    }
    bool last = w->sent + 1 >= w->events;
    char buf[EVENT_MAX];
    size_t n = 0;
    if (w->events > 0)
        n = event_bytes(c, w->sent, w->events, buf);
    if (last && !framed(c)) {
        memcpy(buf + n, "0\r\n\r\n", 5);
        n += 5;
    }
    bool put;
    if (c->h2_id)
        put = serve_h2_events_push(c, buf, n, last);
    else if (c->h3_parent)
        put = serve_h3_events_push(c, buf, n, last);
    else
        put = serve_conn_out_write(c, buf, n);
    if (!put) {
        loop_timer_arm(&s->loop, &w->timer, s->loop.now_ns + RETRY_NS);
        return;
    }
    if (w->events > 0)
        w->sent++;
    if (last) {
        serve_work_end(s, w); /* writes it, and goes on with the connection */
        return;
    }
    stream_flush(c); /* may close the connection: the next step sees it dead and ends */
    loop_timer_arm(&s->loop, &w->timer, clock_now_ns() + next_wait_ns(w));
}

static void on_event_timer(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct work *w = t->data;
    stream_step(w->conn->srv, w);
}

void serve_stream_begin(struct serve_handle *s, struct work *w)
{
    struct conn *c = w->conn;
    w->phase = PH_STREAM;
    w->stream_started = true;
    w->end_ns = clock_now_ns();
    char timing[96];
    snprintf(timing, sizeof timing, "Server-Timing: queue;dur=%.3f, first;dur=%.3f\r\n",
             ns_to_ms(w->start_ns - w->entry_ns), ns_to_ms(w->end_ns - w->start_ns));
    if (c->h2_id)
        serve_h2_events_begin(c, timing);
    else if (c->h3_parent)
        serve_h3_events_begin(c, timing);
    else
        head_h1(c, timing);
    w->timer.cb = on_event_timer;
    stream_step(s, w);
}
