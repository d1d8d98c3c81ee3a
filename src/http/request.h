/* Server-side HTTP/1.1 request parsing over http-parser (libhttp-parser): one request at a
 * time, with caps on everything the peer controls, so a server can answer pipelined
 * requests in order and reject malformed, ambiguous or oversized input with the right
 * status. knee's framing scanner (http/framing.h) runs first and refuses what http-parser
 * would accept leniently (request smuggling's raw material: see framing.h for the list).
 *
 * The parser is streaming: bytes handed to http_request_parse() are consumed even when
 * they end mid-token, so the caller's input buffer only has to hold what follows a
 * complete request (pipelined bytes). Nothing here allocates. */
#ifndef KNEE_HTTP_REQUEST_H
#define KNEE_HTTP_REQUEST_H

#include "http/framing.h"

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest request target (path + query) kept; a longer one is answered 414. */
#define HTTP_REQUEST_URL_MAX 2048
/* Defaults for the caps on the header block (request line + fields) and the body. */
#define HTTP_REQUEST_HEADER_MAX_DEFAULT 8192
#define HTTP_REQUEST_BODY_MAX_DEFAULT (1024 * 1024)

/* What one call to http_request_parse() ended with. */
enum http_request_state {
    HTTP_REQUEST_MORE,  /* every byte consumed, the request is not complete yet */
    HTTP_REQUEST_DONE,  /* one request complete; bytes after it were not consumed */
    HTTP_REQUEST_ERROR, /* malformed, ambiguous or too large: answer error_status and close */
};

/* The parsed request; valid after HTTP_REQUEST_DONE until http_request_next(). */
struct http_request {
    enum http_method method;
    unsigned short http_major, http_minor;
    bool keep_alive; /* false: answer with Connection: close and close after it */
    bool upgrade;    /* Upgrade/CONNECT: nothing after this request is HTTP */
    size_t url_len;
    char url[HTTP_REQUEST_URL_MAX + 1]; /* NUL-terminated request target as sent */
};

struct http_request_parser {
    http_parser parser;
    struct http_framing framing;
    struct http_request req;
    size_t header_bytes;     /* bytes of the head so far: request line, fields, CRLFs (and trailers) */
    size_t max_header_bytes; /* cap: above it, error 431 */
    uint64_t body_bytes;
    uint64_t max_body_bytes; /* cap: above it, error 413 */
    int error_status;        /* 400, 413, 414, 431, 501 or 505 after HTTP_REQUEST_ERROR */
    bool in_message;         /* at least one byte of the current request was parsed */
    bool headers_done;
    bool complete;
};

/* Prepare a parser for a new connection. max_header_bytes 0 → the default; it is clamped to
 * 64 KiB (below http-parser's own 80 KiB limit, so ours always speaks first). */
void http_request_parser_init(struct http_request_parser *p, size_t max_header_bytes, uint64_t max_body_bytes);

/* Parse from data[0..len). Stops right after one complete request. Returns the number of
 * bytes consumed and sets *state. After HTTP_REQUEST_DONE read p->req, answer it, then call
 * http_request_next() before parsing more. After HTTP_REQUEST_ERROR, p->error_status says
 * how to answer; the connection must then be closed (the stream position is lost), and
 * later calls consume nothing and report the error again. */
size_t http_request_parse(struct http_request_parser *p, const char *data, size_t len, enum http_request_state *state);

/* Forget the completed request and get ready for the next one on the same connection. */
void http_request_next(struct http_request_parser *p);

/* True when part of a request has arrived but not all of it (a slow or stalled client). */
static inline bool http_request_partial(const struct http_request_parser *p)
{
    return p->in_message && !p->complete;
}

/* The path part of the request target (up to '?'), and its length. For "http://h/p?q"
 * absolute forms the scheme and authority are skipped. */
const char *http_request_path(const struct http_request *r, size_t *len);

/* True when the path equals s exactly. */
bool http_request_path_is(const struct http_request *r, const char *s);

/* Look up query parameter `name` and parse it as a non-negative decimal number
 * ("20", "0.5"). Returns 0 and sets *out, KNEE_ENOTFOUND when absent, KNEE_EFORMAT when
 * the value is not a plain number, KNEE_ERANGE when above max. */
int http_request_query_double(const struct http_request *r, const char *name, double max, double *out);

#endif
