/* Fuzz target for the SSE scanner (peer-controlled bytes, http/sse.h): any bytes fed whole, fed
 * in pieces and fed one at a time must give the same events and the same partial verdict, and
 * both must equal a line-by-line reading of the event stream written here from the WHATWG rules
 * (a blank line dispatches a block with a "data" field). The same bytes then go through the
 * response parser as an SSE body (chunked, in pieces): its event count must equal the scanner's
 * over the body it accepted, in every --stream mode. The first byte chooses the split size. */
#include "http/response.h"
#include "http/sse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reference: split into lines (CRLF, LF or CR), a line whose field name is "data" (the text
 * up to the first ':', or the whole line) marks the block; a blank line ends it. */
static uint32_t reference(const char *p, size_t n, bool *partial)
{
    uint32_t events = 0;
    bool data = false;
    size_t i = 0, start = 0;
    bool open_line = false;
    while (i < n) {
        if (p[i] != '\r' && p[i] != '\n') {
            open_line = true;
            i++;
            continue;
        }
        size_t len = i - start;
        if (len == 0) {
            events += data;
            data = false;
        } else {
            const char *colon = memchr(p + start, ':', len);
            size_t name = colon ? (size_t)(colon - (p + start)) : len;
            if (name == 4 && memcmp(p + start, "data", 4) == 0)
                data = true;
        }
        open_line = false;
        i += p[i] == '\r' && i + 1 < n && p[i + 1] == '\n' ? 2 : 1;
        start = i;
    }
    *partial = open_line || data;
    return events;
}

static uint32_t scan_pieces(const char *p, size_t n, size_t step, bool *partial)
{
    struct sse_scan s;
    memset(&s, 0, sizeof s);
    uint32_t events = 0;
    for (size_t off = 0; off < n; off += step)
        events += sse_scan_feed(&s, p + off, n - off < step ? n - off : step);
    *partial = sse_scan_partial(&s);
    return events;
}

/* body as one chunked SSE response, fed in pieces of step: the events the parser counted. */
static void through_parser(const char *body, size_t n, size_t step, enum http_stream_mode mode)
{
    static char buf[8192];
    static struct http_matchers none;
    static struct http_response r;
    int head = snprintf(buf, sizeof buf,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "%zx\r\n",
                        n);
    if (head < 0 || (size_t)head + n + 7 > sizeof buf || n == 0)
        return;
    memcpy(buf + head, body, n);
    memcpy(buf + (size_t)head + n, "\r\n0\r\n\r\n", 7);
    size_t total = (size_t)head + n + 7;
    static bool ready;
    if (!ready)
        http_matchers_init(&none), ready = true;
    http_response_init(&r, &none, false);
    http_events_start(&r.ev, mode);
    r.ev.now_ns = 1; /* no clock: the times are not under test */
    enum http_feed f = HTTP_FEED_MORE;
    for (size_t off = 0; off < total && f == HTTP_FEED_MORE;) {
        size_t k = total - off < step ? total - off : step, u = 0;
        f = http_response_feed(&r, buf + off, k, &u);
        if (u > k)
            abort();
        off += u;
    }
    if (f != HTTP_FEED_DONE)
        abort(); /* a well-formed chunked response whatever its body */
    bool partial = false;
    uint32_t want = 0;
    if (mode == HTTP_STREAM_CHUNKS)
        want = 1; /* one chunk with data, however it was split */
    else if (mode != HTTP_STREAM_OFF)
        want = scan_pieces(body, n, n, &partial);
    if (r.ev.count != want || r.ev.on != (mode != HTTP_STREAM_OFF) || http_events_partial(&r.ev) != partial)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t step = (size_t)(data[0] & 0x3f) + 1;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    bool pw, pp, p1, pr;
    uint32_t whole = scan_pieces(p, n, n ? n : 1, &pw);
    uint32_t pieces = scan_pieces(p, n, step, &pp);
    uint32_t bytes = scan_pieces(p, n, 1, &p1);
    uint32_t ref = reference(p, n, &pr);
    if (whole != pieces || whole != bytes || whole != ref || pw != pp || pw != p1 || pw != pr)
        abort();
    (void)http_content_type_is_sse(p, n);
    for (int m = HTTP_STREAM_AUTO; m <= HTTP_STREAM_OFF; m++)
        through_parser(p, n, step, (enum http_stream_mode)m);
    return 0;
}
