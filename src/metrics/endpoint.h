/* The HTTP endpoint Prometheus scrapes (--metrics-listen ADDR:PORT): one thread with its own
 * event loop (core/loop), HTTP/1.1 parsed by http/request (http-parser), keep-alive.
 *   GET|HEAD /metrics  the registry's exposition: OpenMetrics 1.0 when the Accept header asks
 *                      for it (as Prometheus does), else the text format 0.0.4
 *   GET|HEAD /         a short text pointing at /metrics
 *   other paths        404; other methods on those two paths 405 (Allow: GET, HEAD)
 * Caps on what a scraper may send: METRICS_EP_MAX_CONNS connections (when all are taken, the
 * one idle the longest between scrapes is closed for the newcomer; without one, the newcomer
 * is answered 503 and closed), request line + headers 8 KiB (431), a body 1 KiB (413). The
 * deadlines are fixed instants that no trickled byte moves (then the connection is closed):
 * the first request whole 5 s after the accept, any request whole and answered 10 s after its
 * first byte; 120 s idle keep-alive between requests. A close after an answer (errors,
 * Connection: close, the 503) lingers: the sending side is shut down and what the client
 * still sends is read and discarded until its EOF (2 s, 1 s idle, 1 MiB), so the answer
 * arrives instead of a reset.
 *
 * Typical use:
 *     struct metrics_endpoint *ep;
 *     if (metrics_endpoint_start(reg, "127.0.0.1:9464", &ep, err, sizeof err) == 0) {
 *         printf("metrics on http://%s/metrics\n", metrics_endpoint_address(ep));
 *         ... the work, publishing to reg ...
 *         metrics_endpoint_stop(ep);   // then metrics_free(reg)
 *     } */
#ifndef KNEE_METRICS_ENDPOINT_H
#define KNEE_METRICS_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/metrics.h"

#define METRICS_EP_MAX_CONNS 32
#define METRICS_EP_HEADER_MAX 8192
#define METRICS_EP_BODY_MAX 1024
#define METRICS_EP_FIRST_REQUEST_TIMEOUT_NS (5ULL * 1000000000ULL)
#define METRICS_EP_REQUEST_TIMEOUT_NS (10ULL * 1000000000ULL)
#define METRICS_EP_IDLE_TIMEOUT_NS (120ULL * 1000000000ULL)
/* The caps and deadlines above as --metrics-listen's help says them (keep the two in step). */
#define METRICS_EP_LIMITS_HELP                                                                                         \
    "; 32 connections, each closed unless its first request is whole 5 s after the connect and any request is "        \
    "answered 10 s after its first byte (idle: 120 s)"

struct metrics_endpoint;

/* What the endpoint has answered so far (any thread may read it while it runs). */
struct metrics_endpoint_stats {
    uint64_t scrapes;     /* /metrics answered 200 (GET or HEAD) */
    uint64_t openmetrics; /* ... of them in OpenMetrics */
    uint64_t requests;    /* every request parsed */
    uint64_t errors;      /* answered 400, 404, 405, 413, 414, 431, 501 or 505 */
    uint64_t refused;     /* connections over METRICS_EP_MAX_CONNS */
    uint64_t connections; /* accepted in all */
    uint64_t evicted;     /* idle keep-alive connections closed for a newcomer (cap reached) */
};

/* Check that listen is ADDR:PORT (or :PORT) without binding it, so a command can refuse a bad
 * --metrics-listen before it starts anything. Returns 0 or KNEE_EINVAL with a reason. */
int metrics_endpoint_check(const char *listen, char *err, size_t errlen);

/* Bind listen ("127.0.0.1:9464", "[::1]:0", ":9464" = loopback; port 0 picks a free one),
 * start the thread and return once it accepts. The thread blocks every signal. reg must
 * outlive the endpoint. Returns 0 and *out, KNEE_EINVAL (the address does not parse or
 * resolve), or -errno (EADDRINUSE, ...), with a reason in err. */
int metrics_endpoint_start(struct metrics_registry *reg, const char *listen, struct metrics_endpoint **out, char *err,
                           size_t errlen);

/* "127.0.0.1:PORT" or "[::1]:PORT", the bound address; valid until metrics_endpoint_stop(). */
const char *metrics_endpoint_address(const struct metrics_endpoint *ep);
int metrics_endpoint_port(const struct metrics_endpoint *ep);

/* True when the bound address is a loopback one (127.0.0.0/8, ::1); false for 0.0.0.0, [::]
 * or an interface address, which anyone who can reach the host may scrape. */
bool metrics_endpoint_loopback(const struct metrics_endpoint *ep);

void metrics_endpoint_stats(const struct metrics_endpoint *ep, struct metrics_endpoint_stats *out);

/* Close every connection, stop and join the thread, free. NULL is a no-op. */
void metrics_endpoint_stop(struct metrics_endpoint *ep);

#endif
