/* The events of a streamed response body, for timing them: server-sent events (an event ends at
 * a blank line, WHATWG HTML §9.2.6 "event stream interpretation") or, in chunks mode, every
 * HTTP/1.1 chunk or HTTP/2 DATA frame. Nothing is stored: the scanner keeps a few bytes of state,
 * so an event split across reads at any byte is found once. One struct per response, used by one
 * thread; no allocation. */
#ifndef KNEE_HTTP_SSE_H
#define KNEE_HTTP_SSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --stream: auto times text/event-stream bodies as SSE; sse every body as SSE (a response of
 * another type is counted apart); chunks each chunk or DATA frame; off nothing. */
enum http_stream_mode { HTTP_STREAM_AUTO, HTTP_STREAM_SSE, HTTP_STREAM_CHUNKS, HTTP_STREAM_OFF };

/* "auto", "sse", "chunks", "off" → 0 and *out; KNEE_EINVAL for anything else. */
int http_stream_mode_parse(const char *s, enum http_stream_mode *out);
const char *http_stream_mode_name(enum http_stream_mode m);

/* The SSE scanner. An event is dispatched at a blank line when its block had a "data" field
 * (the spec dispatches nothing for a block of comments ":..." or of other fields only, which is
 * how servers keep a stream alive). Lines end in CRLF, LF or CR. Zero it to start a body. */
struct sse_scan {
    uint8_t match; /* bytes of "data" matched at the start of the current line */
    bool other;    /* the current line is not a data field (or its name is decided) */
    bool cr;       /* the last byte was CR: an LF right after it ends the same line */
    bool line;     /* the current line has a byte */
    bool data;     /* the current block has a data field */
};

/* Scan n bytes; returns the events they complete. */
uint32_t sse_scan_feed(struct sse_scan *s, const char *p, size_t n);
/* True when the bytes so far end inside an event (a line begun, or a data field not yet ended by
 * a blank line): a body that ends here ended mid-event. */
bool sse_scan_partial(const struct sse_scan *s);

/* True when a Content-Type value is text/event-stream (case-insensitive, parameters allowed). */
bool http_content_type_is_sse(const char *v, size_t len);

/* What a response's body told about its events. The caller sets mode (http_events_start) before
 * the response; the parser decides at the head whether the body is timed (on), then counts. */
struct http_events {
    uint8_t mode;               /* enum http_stream_mode */
    bool on;                    /* the body is timed as events */
    bool chunks;                /* ... one per chunk or DATA frame (else SSE scanning) */
    bool not_sse;               /* --stream sse and the Content-Type was not text/event-stream */
    uint32_t count;             /* events so far */
    uint64_t first_ns, last_ns; /* monotonic arrival of the first and the last */
    uint64_t now_ns;            /* the arrival time of the bytes being fed (0: read the clock when needed) */
    struct sse_scan scan;
};

/* Reset e for a new response with this mode. */
void http_events_start(struct http_events *e, enum http_stream_mode mode);
/* The head is parsed: is_sse says whether its Content-Type is text/event-stream. */
void http_events_head(struct http_events *e, bool is_sse);
/* Body bytes (SSE: scanned; chunks: nothing, see http_events_chunk). */
void http_events_body(struct http_events *e, const char *p, size_t n);
/* A chunk or DATA frame with data ended (chunks mode: one event). */
void http_events_chunk(struct http_events *e);
/* n events arrived now (e->now_ns, or the clock). */
void http_events_add(struct http_events *e, uint32_t n);
/* The body ended inside an SSE event (see sse_scan_partial); false when not timed as SSE. */
bool http_events_partial(const struct http_events *e);

#endif
