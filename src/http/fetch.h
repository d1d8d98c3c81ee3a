/* One blocking HTTP/1.1 exchange, for a request made before a run starts (knee run --setup): the
 * name resolved, a connection made (over TLS for https://, through src/tls), the request written
 * (serialised by http_client_build_request, with Connection: close), the whole response read
 * and kept (status, reason, headers, body), all within one deadline. Not for the load: the
 * engine's path is load/h1.c. HTTP/2 is not spoken here (ALPN offers http/1.1 only). Sizes
 * the peer controls are capped: the head by http-parser (HTTP_MAX_HEADER_SIZE, 80 KiB), the
 * headers kept by HTTP_FETCH_MAX_HEADERS, the body by HTTP_FETCH_MAX_BODY. Thread-safe: no
 * shared state (each call its own socket and buffers). */
#ifndef KNEE_HTTP_FETCH_H
#define KNEE_HTTP_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_FETCH_MAX_HEADERS 100
#define HTTP_FETCH_MAX_BODY (1u << 20)

struct tls_ctx;
struct net_route;

struct http_fetch_request {
    const char *method;         /* NULL: GET */
    const char *url;            /* http:// or https:// */
    const char *const *headers; /* "Name: value" lines, as http_client_build_request takes them */
    size_t nheaders;
    const char *body; /* may hold NULs; NULL when body_len is 0 */
    size_t body_len;
    uint64_t timeout_ns;           /* the whole exchange: resolve excepted, connect to the last byte */
    struct tls_ctx *tls;           /* https://: a client context (tls_client_new, ALPN http/1.1); ignored for http:// */
    const struct net_route *route; /* --unix-socket, --connect-to (net/route.h); NULL: the URL's host */
};

struct http_fetch_response {
    int status;
    char reason[128]; /* the reason phrase as sent ("" when none) */
    char **names;     /* header names and values as received (trimmed), nheaders of each */
    char **values;
    size_t nheaders;
    char *body; /* NUL-terminated (the NUL not counted); may hold NULs; the decoded body when chunked */
    size_t body_len;
    char address[64];    /* the address connected to: "127.0.0.1:8080" */
    uint64_t elapsed_ns; /* connect start to the response's last byte */
};

/* Send req and read its response into *res (release it with http_fetch_response_release, also
 * after an error). 0 once a complete response was read, whatever its status; else an error with
 * a one-line reason in err: KNEE_EINVAL (the URL, a header or the method refused, an https://
 * URL without a TLS context), KNEE_ENOTFOUND (the name does not resolve), -errno (connect, read
 * or write: "connect 127.0.0.1:9: Connection refused"), -ETIMEDOUT (no complete response
 * within timeout_ns), KNEE_EFORMAT (not an HTTP/1.1 response, or the connection closed before
 * its end), KNEE_ETOOBIG (a body over HTTP_FETCH_MAX_BODY, more than HTTP_FETCH_MAX_HEADERS
 * headers), or a TLS failure (KNEE_EINVAL with its reason: "TLS: tls_verify: ..."). Blocking. */
int http_fetch(const struct http_fetch_request *req, struct http_fetch_response *res, char *err, size_t errlen);
void http_fetch_response_release(struct http_fetch_response *res);

#endif
