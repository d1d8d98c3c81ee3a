/* Fuzz target for src/http/request: the input is a byte stream a client might send,
 * fed in chunks whose size the first byte picks (so split tokens are exercised), with
 * http_request_next() after each complete request, as the server does. Checks the caps
 * and that consumption never runs past the input. */
#include "core/err.h"
#include "http/request.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (size_t)(data[0] % 64) + 1;
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    struct http_request_parser p;
    http_request_parser_init(&p, 1024, 4096);
    size_t off = 0;
    int requests = 0;
    while (off < len) {
        size_t avail = len - off < chunk ? len - off : chunk;
        enum http_request_state st;
        size_t n = http_request_parse(&p, in + off, avail, &st);
        if (n > avail)
            abort();
        off += n;
        if (st == HTTP_REQUEST_ERROR) {
            if (p.error_status != 400 && p.error_status != 413 && p.error_status != 414 && p.error_status != 431)
                abort();
            break;
        }
        if (st == HTTP_REQUEST_DONE) {
            if (p.req.url_len > HTTP_REQUEST_URL_MAX || strlen(p.req.url) != p.req.url_len)
                abort();
            if (p.header_bytes > p.max_header_bytes || p.body_bytes > p.max_body_bytes)
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
            requests++;
            if (!p.req.keep_alive || p.req.upgrade)
                break; /* the server closes here */
            http_request_next(&p);
        } else if (n < avail) {
            abort(); /* MORE must consume everything it was given */
        }
    }
    (void)requests;
    return 0;
}
