/* Fuzz target for the response parser (peer-controlled bytes): a response fed whole and fed
 * in pieces must give the same verdict, counts must stay within what was fed, and nothing may
 * crash, read out of bounds or allocate. The first byte chooses the split size and whether the
 * request was HEAD; the rest is the response. Body substrings and Server-Timing are exercised
 * on the same bytes. */
#include "http/response.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct http_matchers matchers;
static int ready;

static enum http_feed run_first(const char *p, size_t n, size_t first, size_t step, bool head, bool slow,
                                struct http_response *r, size_t *used)
{
    http_response_init(r, &matchers, head);
    r->slow_only = slow;
    size_t off = 0;
    enum http_feed f = HTTP_FEED_MORE;
    while (off < n) {
        size_t want = off == 0 ? first : step;
        size_t k = n - off < want ? n - off : want;
        size_t u = 0;
        f = http_response_feed(r, p + off, k, &u);
        if (u > k)
            abort();
        off += u;
        if (f != HTTP_FEED_MORE)
            break;
        if (u != k)
            abort(); /* MORE means every byte was used */
    }
    if (f == HTTP_FEED_MORE)
        f = http_response_eof(r);
    *used = off;
    return f;
}

static enum http_feed run(const char *p, size_t n, size_t step, bool head, struct http_response *r, size_t *used)
{
    return run_first(p, n, step, step, head, false, r, used);
}

/* The same bytes fed the same way, with and without the fast path: everything the engine
 * reads must be equal. */
static void differential(const char *p, size_t n, size_t first, size_t step, bool head)
{
    static struct http_response fast, slow;
    size_t uf, us;
    enum http_feed ff = run_first(p, n, first, step, head, false, &fast, &uf);
    enum http_feed fs = run_first(p, n, first, step, head, true, &slow, &us);
    if (slow.fast)
        abort();
    if (ff != fs || uf != us || fast.status != slow.status || fast.headers_done != slow.headers_done ||
        fast.complete != slow.complete || fast.bytes != slow.bytes || fast.body_bytes != slow.body_bytes ||
        fast.matched != slow.matched || fast.nst != slow.nst)
        abort();
    if (fast.complete && fast.keep_alive != slow.keep_alive)
        abort();
    if (ff == HTTP_FEED_ERROR && strcmp(fast.error_name, slow.error_name) != 0)
        abort();
    for (size_t i = 0; i < fast.nst; i++) {
        if (strcmp(fast.st[i].name, slow.st[i].name) != 0)
            abort();
        if (isnan(fast.st[i].dur_ms) != isnan(slow.st[i].dur_ms) ||
            (!isnan(fast.st[i].dur_ms) && fast.st[i].dur_ms != slow.st[i].dur_ms))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        http_matchers_init(&matchers);
        http_matchers_add(&matchers, "QUEUE_TIMEOUT", 13);
        http_matchers_add(&matchers, "abab", 4);
        ready = 1;
    }
    if (size < 1)
        return 0;
    size_t step = (size_t)(data[0] & 0x3f) + 1;
    bool head = data[0] & 0x40;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    static struct http_response whole, split;
    size_t uw, us;
    enum http_feed fw = run(p, n, n ? n : 1, head, &whole, &uw);
    enum http_feed fs = run(p, n, step, head, &split, &us);
    if (whole.bytes > n || split.bytes > n || whole.body_bytes > whole.bytes)
        abort();
    /* the verdict does not depend on how the bytes arrived */
    if (fw != fs || whole.status != split.status || whole.matched != split.matched)
        abort();
    if (fw == HTTP_FEED_DONE && (uw != us || whole.body_bytes != split.body_bytes || whole.nst != split.nst))
        abort();
    for (size_t i = 0; i < whole.nst; i++)
        if (!isnan(whole.st[i].dur_ms) && !(whole.st[i].dur_ms >= 0))
            abort();
    size_t whole_step = n ? n : 1;
    differential(p, n, whole_step, whole_step, head);
    differential(p, n, step, step, head);
    differential(p, n, n / 2 ? n / 2 : 1, step, head);
    struct http_server_timing st[HTTP_ST_MAX_ENTRIES];
    size_t k = http_parse_server_timing(p, n, st, HTTP_ST_MAX_ENTRIES);
    if (k > HTTP_ST_MAX_ENTRIES)
        abort();
    return 0;
}
