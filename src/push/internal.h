/* What the push module's files share (src/push/): the parsed endpoint and one HTTP POST. */
#ifndef KNEE_PUSH_INTERNAL_H
#define KNEE_PUSH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/url.h"

struct ssl_ctx_st;

/* Where the pushes go, parsed once. */
struct push_endpoint {
    struct url url;
    const char *auth_header; /* Authorization value or NULL (the caller's memory) */
    struct ssl_ctx_st *ssl;  /* https: the client context; NULL for http */
};

/* Make the endpoint (and for https the TLS context: cafile or the system store; insecure: no
 * verification). Returns 0 or KNEE_EINVAL with the reason in err. */
int push_endpoint_init(struct push_endpoint *e, const char *url, const char *cafile, bool insecure, char *err,
                       size_t errlen);
void push_endpoint_release(struct push_endpoint *e);

/* POST body (len bytes, snappy-compressed WriteRequest) to the endpoint on a new connection,
 * everything before deadline_ns (clock_now_ns). Returns the HTTP status (>= 100), or -1 for a
 * network error (refused, reset, timeout, TLS, a response that is not HTTP) with the reason in
 * err; for a status >= 300 err holds "HTTP <status>: <first line of the body>". Blocking; on
 * the push thread only. */
int push_http_post(const struct push_endpoint *e, const uint8_t *body, size_t len, uint64_t deadline_ns, char *err,
                   size_t errlen);

#endif
