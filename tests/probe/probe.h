/* The transport probe: one client connection to one URL, driven by an epoll loop (core/loop)
 * through the non-blocking APIs of src/tls and src/h2 as knee run's worker drives them
 * (docs/INTERNALS.md "TLS and HTTP/2"): a per-connection vtable (plain or TLS)
 * for the bytes, HTTP/1.1 (http/client + http/response) or HTTP/2 (h2/) above it, the connect
 * and tls phases timed apart, every failure turned into a reason.
 *
 * It is the unit tests' driver (tests/unit/test_tls.c, test_h2.c) and, as the knee_probe tool
 * (tests/probe/main.c), the client of the end-to-end tests against nginx and knee serve. Not
 * part of knee: test code, linked only into the tests. */
#ifndef KNEE_TESTS_PROBE_H
#define KNEE_TESTS_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "h2/h2.h"
#include "tls/tls.h"

enum probe_proto {
    PROBE_AUTO, /* https: what ALPN agreed on; http: HTTP/1.1 */
    PROBE_H1,   /* HTTP/1.1 (https: the context should offer http/1.1 only) */
    PROBE_H2C,  /* http:// with HTTP/2 prior knowledge */
};

struct probe_config {
    const char *url;                 /* http://... or https://... */
    struct tls_ctx *tls;             /* client context for https (required then) */
    struct tls_session_cache *cache; /* resumption cache (may be NULL) */
    enum probe_proto proto;
    const char *method; /* NULL: GET */
    const char *body;   /* request body (may be NULL) */
    size_t body_len;
    unsigned requests;             /* requests on this one connection (0: 1); HTTP/1.1 keep-alive */
    unsigned streams;              /* HTTP/2: concurrent streams (0: 1) */
    uint64_t handshake_timeout_ns; /* connect + TLS handshake (0: 5 s) */
    uint64_t timeout_ns;           /* everything (0: 10 s) */
};

struct probe_result {
    const char *phase;  /* where it ended: "connect", "tls", "http", "done" */
    const char *reason; /* "none" or why it failed: "connect", "tls_*", "h2_*", "http_invalid",
                           "closed", "timeout", ... (the first failure) */
    char detail[240];
    int sys_errno;
    uint64_t connect_ns, tls_ns; /* the two phases of a new connection */
    bool resumed;
    char version[16]; /* "TLSv1.3" */
    char proto[16];   /* "h2", "http/1.1" */
    char cipher[64];
    unsigned sent, completed, ok; /* requests submitted, complete responses, 2xx among them */
    unsigned failed_streams;      /* h2 streams that ended without a response */
    unsigned by_reason[H2_R_COUNT];
    int last_status;
    uint64_t body_bytes;
    uint64_t max_service_ns; /* T1 (HEADERS written / write start) to the full response */
    uint64_t min_t1_to_first_byte_ns;
    uint32_t server_max_streams, max_open; /* h2: the server's limit, the most streams open at once */
    struct h2_client_stats h2;
    char server_timing[128]; /* the last response's Server-Timing value */
};

/* Run the exchange. Returns 0 when it ran (the result says how it went, failures included), or
 * a negative code when it could not start (a bad URL, no TLS context for https). */
int probe_run(const struct probe_config *cfg, struct probe_result *res);

#endif
