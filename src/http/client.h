/* The client side of HTTP/1.1 for the load engine: each target's request is serialised
 * once, before the run, into one buffer that every send writes as is (no formatting, no
 * allocation per request). Response parsing is in http/response.h. */
#ifndef KNEE_HTTP_CLIENT_H
#define KNEE_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "net/url.h"

/* Caps on what the user may put in a request (they come from flags and files). */
#define HTTP_CLIENT_MAX_HEADERS 64
#define HTTP_CLIENT_MAX_BODY (64u * 1024 * 1024)

struct http_request_spec {
    const char *method;         /* a token: "GET", "POST", ... */
    const struct url *url;      /* host, authority and target */
    const char *const *headers; /* "Name: value" lines without CRLF; may be NULL when nheaders is 0 */
    size_t nheaders;
    const char *body; /* may contain NULs; NULL when body_len is 0 */
    size_t body_len;
    bool keepalive; /* false adds "Connection: close" */
};

/* Serialise the request into a new heap buffer (*out, *out_len; caller frees). Adds
 * Host (from the URL) and User-Agent unless given, and Content-Length when there is a body
 * or the method normally carries one (POST, PUT, PATCH). Refuses (KNEE_EINVAL, reason in err)
 * a malformed method or header, a user Content-Length/Transfer-Encoding (knee frames the
 * body itself) and a user Connection header (use keepalive). Returns 0 or a KNEE_ code. */
int http_client_build_request(const struct http_request_spec *spec, char **out, size_t *out_len, char *err,
                              size_t errlen);

/* True when method may be sent twice (RFC 9110 §9.2.2, case-sensitive): GET, HEAD, PUT, DELETE,
 * OPTIONS, TRACE; a request on a keep-alive connection that closed before any byte of its
 * response is sent again only then (--retry-stale). */
bool http_method_idempotent(const char *method);

/* True when s is an HTTP token (RFC 9110 §5.6.2): method names and header field names. */
bool http_is_token(const char *s, size_t len);

#endif
