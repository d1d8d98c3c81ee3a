/* Streaming HTTP/1.1 response parsing for the load engine, over http-parser
 * (libhttp-parser). Bytes are fed as they arrive and are never stored: the engine reads into
 * one per-thread buffer and hands it here. What is kept per response is fixed-size: the
 * status, completion and keep-alive, byte counts, which body substrings were seen (for
 * --expect-body and --reject STATUS:SUBSTR, matched across reads with KMP) and the
 * Server-Timing metrics. No allocation per response.
 *
 * The common response (HTTP/1.1, a Content-Length, nothing http-parser would treat specially)
 * takes a hand-written fast path when its head arrives whole in the first bytes fed: it gives
 * exactly what http-parser gives, and it declines (http-parser parses the response from its
 * first byte) on anything else. See response.c and docs/DESIGN.md "Hand-written".
 *
 * Peer-controlled sizes are capped: header bytes by http-parser's HTTP_MAX_HEADER_SIZE
 * (80 KiB; larger is an error), Server-Timing text by HTTP_ST_MAX_TEXT (the rest is ignored),
 * entries by HTTP_ST_MAX_ENTRIES, metric names by HTTP_ST_NAME_MAX. Not thread-safe: one
 * struct per connection, used by one thread. */
#ifndef KNEE_HTTP_RESPONSE_H
#define KNEE_HTTP_RESPONSE_H

#include "http/sse.h"

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_MATCH_MAX 8
#define HTTP_MATCH_NEEDLE_MAX 1024
#define HTTP_ST_MAX_TEXT 1024
#define HTTP_ST_MAX_ENTRIES 8
#define HTTP_ST_NAME_MAX 32

/* Substrings to look for in response bodies, prepared once per target (KMP tables). */
struct http_matchers {
    size_t n;
    char *needle[HTTP_MATCH_MAX];
    size_t len[HTTP_MATCH_MAX];
    uint16_t *fail[HTTP_MATCH_MAX]; /* KMP failure function */
};

void http_matchers_init(struct http_matchers *m);
/* Add a needle (copied); returns its index (bit in http_response.matched), or KNEE_ERANGE when
 * HTTP_MATCH_MAX needles exist or KNEE_EINVAL when empty or longer than HTTP_MATCH_NEEDLE_MAX. */
int http_matchers_add(struct http_matchers *m, const char *needle, size_t len);
void http_matchers_release(struct http_matchers *m);
/* Feed body bytes to the matchers (KMP across calls): kmp[] is the state per needle (zero at a
 * body's start), bit i of *matched is set once needle i occurred. For bodies that do not come
 * through http_response_feed (HTTP/2 DATA frames). m may be NULL (nothing to match). */
void http_matchers_feed(const struct http_matchers *m, size_t kmp[HTTP_MATCH_MAX], uint32_t *matched, const char *data,
                        size_t len);

struct http_server_timing {
    char name[HTTP_ST_NAME_MAX];
    double dur_ms; /* NAN when the metric had no dur */
};

enum http_feed {
    HTTP_FEED_MORE,  /* consumed everything; the response is not complete yet */
    HTTP_FEED_DONE,  /* the response is complete; *consumed may be < len (bytes after it) */
    HTTP_FEED_ERROR, /* not a valid HTTP/1.1 response: r->error_name says why */
};

struct http_response {
    http_parser parser;
    const struct http_matchers *matchers;
    bool head; /* the request was HEAD: a response without body */
    /* results */
    int status; /* 0 until the status line is parsed */
    bool headers_done;
    bool complete;
    bool keep_alive; /* valid once complete: the connection may carry another request */
    uint64_t bytes;  /* bytes consumed (status line, headers, body, framing) */
    uint64_t body_bytes;
    uint32_t matched;       /* bit i set when needle i occurred in the body */
    bool fast;              /* the head was parsed by the fast path (http-parser was not used) */
    bool slow_only;         /* set after init to always use http-parser (the differential tests) */
    const char *error_name; /* http-parser's errno name on HTTP_FEED_ERROR */
    size_t nst;
    struct http_server_timing st[HTTP_ST_MAX_ENTRIES];
    /* private: header-in-progress and matcher state */
    size_t kmp[HTTP_MATCH_MAX];
    uint64_t fast_left; /* fast path: body bytes still to come */
    bool fast_close;    /* fast path: Connection: close */
    char field[16];
    size_t field_len;
    bool field_long, in_value, st_value, st_sep;
    size_t st_len;
    /* the events of a streamed body (http/sse.h): set ev.mode after init (0 is auto); the
     * Content-Type's first bytes (to tell text/event-stream) and the chunk in progress */
    struct http_events ev;
    bool ct_value;
    uint8_t ct_len;
    char ct[24];
    uint64_t chunk_len;
    char st_text[HTTP_ST_MAX_TEXT];
};

/* Prepare for a new response (the request was HEAD when head is true). matchers may be NULL
 * and must outlive the response. */
void http_response_init(struct http_response *r, const struct http_matchers *matchers, bool head);

/* Feed len bytes; *consumed receives how many were used (all of them unless DONE or ERROR). */
enum http_feed http_response_feed(struct http_response *r, const char *data, size_t len, size_t *consumed);
/* The same for bytes that arrived at at_ns (CLOCK_MONOTONIC; their events get that time): a
 * caller that reads late on purpose knows when (load/h1's deferred reads). 0: now. */
enum http_feed http_response_feed_at(struct http_response *r, const char *data, size_t len, size_t *consumed,
                                     uint64_t at_ns);

/* The peer closed the connection. DONE when that ends a body delimited by the close (no
 * Content-Length, not chunked); otherwise ERROR with error_name "eof" before any byte
 * ("eof_before_response") or mid-response ("eof_mid_response"). */
enum http_feed http_response_eof(struct http_response *r);

/* Parse a Server-Timing field value ("db;dur=53, app;dur=47.2;desc=x, cache") into out
 * (at most max entries); returns the count. Exposed for tests. */
size_t http_parse_server_timing(const char *s, size_t len, struct http_server_timing *out, size_t max);

#endif
