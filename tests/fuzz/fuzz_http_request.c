/* Fuzz target for src/http/request (and the framing scanner under it): the input is a byte
 * stream a client might send, fed in chunks whose size the first byte picks (so split
 * tokens are exercised), with http_request_next() after each complete request, as the
 * server does. Checks the caps, that consumption never runs past the input, that an error
 * carries one of the statuses the server answers, and that the split does not matter: the
 * same stream fed whole gives the same requests and the same final outcome. */
#include "core/err.h"
#include "http/request.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a stream parsed into: a hash over each request's target, method and keep-alive,
 * the number of requests, and how it ended (0: more input wanted or all consumed,
 * else the error status, or -1 when the server would close after a request). */
struct outcome {
    uint64_t hash;
    int requests;
    int end;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ULL;
}

static struct outcome run(const char *in, size_t len, size_t chunk)
{
    struct outcome o = {0xcbf29ce484222325ULL, 0, 0};
    struct http_request_parser p;
    http_request_parser_init(&p, 1024, 4096);
    size_t off = 0;
    while (off < len) {
        size_t avail = len - off < chunk ? len - off : chunk;
        enum http_request_state st;
        size_t n = http_request_parse(&p, in + off, avail, &st);
        if (n > avail)
            abort();
        off += n;
        if (st == HTTP_REQUEST_ERROR) {
            int s = p.error_status;
            if (s != 400 && s != 413 && s != 414 && s != 431 && s != 501 && s != 505)
                abort();
            enum http_request_state again;
            if (http_request_parse(&p, in + off, len - off, &again) != 0 || again != HTTP_REQUEST_ERROR)
                abort(); /* the error is sticky */
            o.end = s;
            break;
        }
        if (st == HTTP_REQUEST_DONE) {
            if (p.req.url_len > HTTP_REQUEST_URL_MAX || strlen(p.req.url) != p.req.url_len)
                abort();
            if (p.header_bytes > p.max_header_bytes || p.body_bytes > p.max_body_bytes)
                abort();
            if (!p.framing.done || p.req.http_major != 1)
                abort();
            size_t plen;
            const char *path = http_request_path(&p.req, &plen);
            if (path < p.req.url || path + plen > p.req.url + p.req.url_len)
                abort();
            double v;
            int rc = http_request_query_double(&p.req, "ms", 1e9, &v);
            if (rc == 0 && !(v >= 0 && v <= 1e9))
                abort();
            (void)http_request_path_is(&p.req, "/health");
            for (size_t i = 0; i < p.req.url_len; i++)
                o.hash = mix(o.hash, (unsigned char)p.req.url[i]);
            o.hash = mix(o.hash, (uint64_t)p.req.method * 2 + p.req.keep_alive);
            o.requests++;
            if (!p.req.keep_alive || p.req.upgrade) {
                o.end = -1;
                break; /* the server closes here */
            }
            http_request_next(&p);
        } else if (n < avail) {
            abort(); /* MORE must consume everything it was given */
        }
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (size_t)(data[0] % 64) + 1;
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    struct outcome a = run(in, len, chunk);
    struct outcome b = run(in, len, len ? len : 1);
    if (a.hash != b.hash || a.requests != b.requests || a.end != b.end)
        abort();
    return 0;
}
