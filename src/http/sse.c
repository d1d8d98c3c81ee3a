/* Events of a streamed body: the SSE scanner (a byte-at-a-time state machine, so a split at any
 * byte is the same as no split) and the per-response event counts and times. */
#include "http/sse.h"

#include "core/clock.h"
#include "core/err.h"

#include <string.h>
#include <strings.h>

static const char *const MODES[] = {"auto", "sse", "chunks", "off"};

int http_stream_mode_parse(const char *s, enum http_stream_mode *out)
{
    for (size_t i = 0; i < sizeof MODES / sizeof MODES[0]; i++)
        if (s && strcmp(s, MODES[i]) == 0) {
            *out = (enum http_stream_mode)i;
            return 0;
        }
    return KNEE_EINVAL;
}

const char *http_stream_mode_name(enum http_stream_mode m)
{
    return (size_t)m < sizeof MODES / sizeof MODES[0] ? MODES[m] : "?";
}

/* A line ended: a blank one dispatches the block's event when it had data. */
static uint32_t end_line(struct sse_scan *s)
{
    uint32_t ev = 0;
    if (!s->line) {
        ev = s->data ? 1 : 0;
        s->data = false;
    } else if (!s->other && s->match == 4) {
        s->data = true; /* "data" alone: a data field with an empty value */
    }
    s->line = s->other = false;
    s->match = 0;
    return ev;
}

uint32_t sse_scan_feed(struct sse_scan *s, const char *p, size_t n)
{
    uint32_t events = 0;
    for (size_t i = 0; i < n; i++) {
        char b = p[i];
        if (s->cr) {
            s->cr = false;
            if (b == '\n')
                continue; /* the LF of a CRLF: the line ended at its CR */
        }
        if (b == '\r' || b == '\n') {
            events += end_line(s);
            s->cr = b == '\r';
            continue;
        }
        s->line = true;
        if (s->other)
            continue;
        if (s->match < 4 && b == "data"[s->match]) {
            s->match++;
        } else {
            if (s->match == 4 && b == ':')
                s->data = true;
            s->other = true;
        }
    }
    return events;
}

bool sse_scan_partial(const struct sse_scan *s)
{
    return s->line || s->data;
}

bool http_content_type_is_sse(const char *v, size_t len)
{
    static const char want[] = "text/event-stream";
    const size_t wl = sizeof want - 1;
    while (len && (*v == ' ' || *v == '\t'))
        v++, len--;
    if (len < wl || strncasecmp(v, want, wl) != 0)
        return false;
    return len == wl || v[wl] == ';' || v[wl] == ' ' || v[wl] == '\t';
}

void http_events_start(struct http_events *e, enum http_stream_mode mode)
{
    memset(e, 0, sizeof *e);
    e->mode = (uint8_t)mode;
}

void http_events_head(struct http_events *e, bool is_sse)
{
    switch ((enum http_stream_mode)e->mode) {
    case HTTP_STREAM_AUTO:
        e->on = is_sse;
        break;
    case HTTP_STREAM_SSE:
        e->on = true;
        e->not_sse = !is_sse;
        break;
    case HTTP_STREAM_CHUNKS:
        e->on = e->chunks = true;
        break;
    case HTTP_STREAM_OFF:
        break;
    }
}

void http_events_add(struct http_events *e, uint32_t n)
{
    if (!n)
        return;
    uint64_t now = e->now_ns ? e->now_ns : clock_now_ns();
    e->now_ns = now; /* the rest of these bytes arrived at the same time */
    if (!e->count)
        e->first_ns = now;
    e->last_ns = now;
    e->count += n;
}

void http_events_body(struct http_events *e, const char *p, size_t n)
{
    if (e->on && !e->chunks)
        http_events_add(e, sse_scan_feed(&e->scan, p, n));
}

void http_events_chunk(struct http_events *e)
{
    if (e->on && e->chunks)
        http_events_add(e, 1);
}

bool http_events_partial(const struct http_events *e)
{
    return e->on && !e->chunks && sse_scan_partial(&e->scan);
}
