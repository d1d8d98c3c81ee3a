/* Prometheus remote-write transport: a thread of its own that, every interval and once more at
 * the end, asks a renderer for a WriteRequest (uncompressed protobuf), snappy-compresses it and
 * POSTs it over HTTP/1.1 (http:// or https://) with a timeout, retrying with exponential
 * backoff on 5xx, 429 and network errors, from a bounded queue that drops its oldest payload
 * when full. The load threads never see any of it: the renderer reads the metrics registry's
 * published snapshot (metrics_render_remote_write) on the push thread.
 *
 *   struct push_config pc = {.url = "http://127.0.0.1:9090/api/v1/write", .interval_ns = 5 * NS_PER_S,
 *                            .timeout_ns = 5 * NS_PER_S, .render = my_render, .render_ctx = reg};
 *   struct push *p;
 *   if (push_start(&pc, &p, err, sizeof err)) ...;   // the thread runs from now on
 *   ... the run ...
 *   struct push_stats st;
 *   push_finish(p, &st);                             // the final push, the flush, join, free
 *
 * Remote-write samples are cumulative (counters, histograms since the start): a payload that is
 * dropped or lost only costs resolution, the next one carries the totals. */
#ifndef KNEE_PUSH_PUSH_H
#define KNEE_PUSH_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PUSH_QUEUE_DEFAULT 16              /* payloads waiting to be sent, at most (then drop oldest) */
#define PUSH_QUEUE_MAX 1024                /* cap on push_config.queue_max */
#define PUSH_RESPONSE_MAX 4096             /* bytes of a response read, at most (status line, headers, error text) */
#define PUSH_ERROR_MAX 192                 /* push_stats.last_error, bytes with the NUL */
#define PUSH_AUTH_FILE_MAX 4096            /* bytes of an --remote-write-auth-file, at most */
#define PUSH_BACKOFF_FIRST_NS 200000000ULL /* the first retry's wait: 200 ms, then doubling */
#define PUSH_LABEL_VALUE_MAX 128           /* bytes of a --remote-write-label value */

/* The renderer: fill *data and *len with a WriteRequest (uncompressed protobuf) whose samples are
 * stamped ts_ms (Unix time, ms). The memory is the renderer's and must stay valid until its
 * next call or push_finish returns. Called on the push thread only. Returns 0, or a negative
 * code with a reason in err (that push is counted failed). */
typedef int push_render_fn(void *ctx, int64_t ts_ms, const uint8_t **data, size_t *len, char *err, size_t errlen);

struct push_config {
    const char *url;         /* http[s]://host[:port][/path]; no user:pass@ (push_url_check) */
    const char *auth_header; /* the Authorization header's value (push_auth_load) or NULL; never printed */
    const char *cafile;      /* https: PEM file of trusted certificates; NULL = the system store */
    bool insecure;           /* https: no certificate verification */
    uint64_t interval_ns;    /* between pushes; > 0 */
    uint64_t timeout_ns;     /* one request at most (connect to last response byte); also the final
                                flush's whole window at the end; > 0 */
    size_t queue_max;        /* 0 = PUSH_QUEUE_DEFAULT; at most PUSH_QUEUE_MAX */
    push_render_fn *render;
    void *render_ctx;
};

/* What the pushes did. Every rendered payload ends as exactly one of ok, failed, dropped:
 * pushes == ok + failed + dropped after push_finish. */
struct push_stats {
    uint64_t pushes;  /* payloads rendered */
    uint64_t ok;      /* accepted (2xx) */
    uint64_t failed;  /* refused for good (4xx other than 429), not rendered, or still unsent at the end */
    uint64_t retried; /* attempts after the first of a payload (5xx, 429, network errors) */
    uint64_t dropped; /* thrown out of a full queue (the oldest first) */
    uint64_t bytes;   /* compressed bytes of the accepted payloads */
    char last_error[PUSH_ERROR_MAX]; /* the last failure's words ("" = none): "HTTP 500: ...",
                                        "connect: Connection refused", "timeout after 5s" */
};

struct push;

/* Check a remote-write URL: http:// or https://, a host, no credentials (user:pass@: use
 * --remote-write-auth-file), no fragment. Returns 0 or KNEE_EINVAL with the reason in err. */
int push_url_check(const char *url, char *err, size_t errlen);

/* Read an auth file into the value of an Authorization header (heap; free it). The file holds
 * one line, "bearer TOKEN" or "basic USER:PASSWORD" (the keyword in any case; a final newline
 * and surrounding blanks ignored; the token and password are taken as they are, never printed).
 * Returns 0, or KNEE_EINVAL with a reason naming the file (and line) in err: unreadable, empty,
 * more than one line, an unknown keyword, basic without ':', control characters, longer than
 * PUSH_AUTH_FILE_MAX. The reason never quotes the file's secret. */
int push_auth_load(const char *path, char **header, char *err, size_t errlen);

/* Check one --remote-write-label "k=v": k a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not
 * starting "__"), v non-empty UTF-8 without control characters, at most PUSH_LABEL_VALUE_MAX
 * bytes. *eq is the offset of '='. Returns 0 or KNEE_EINVAL with the reason in err. */
int push_label_check(const char *kv, size_t *eq, char *err, size_t errlen);

/* Start the push thread (the first push one interval from now). Returns 0, KNEE_EINVAL (bad
 * config; the URL as push_url_check), or -errno (the thread or TLS context could not be made),
 * with the reason in err. */
int push_start(const struct push_config *cfg, struct push **out, char *err, size_t errlen);

/* A copy of the numbers so far (any thread). */
void push_stats_get(struct push *p, struct push_stats *out);

/* The end: render once more (the final values must be published before), then send what the
 * queue holds within timeout_ns (retries included); what is left counts failed. Joins the
 * thread, fills *out (may be NULL) and frees p. NULL p is a no-op (out zeroed). Blocks at most
 * about timeout_ns plus one request's timeout. */
void push_finish(struct push *p, struct push_stats *out);

/* The URL without what must not be shown (there is nothing to strip: push_url_check refuses
 * credentials; kept for callers that print it). */
const char *push_url(const struct push *p);

/* ---- pieces, exported for their tests --------------------------------------------------------- */

/* Base64 (RFC 4648, with padding) of n bytes into out (cap bytes, NUL included). Returns the
 * length, or 0 when cap is too small. */
size_t push_base64(const void *in, size_t n, char *out, size_t cap);

/* Parse an HTTP/1.x status line at the head of buf (len bytes): the status code, or -1. */
int push_http_status(const char *buf, size_t len);

/* Whether a status is worth retrying (5xx, 429); network errors always are. */
bool push_status_retry(int status);

/* The wait before attempt k+1 (k >= 1 failed attempts): PUSH_BACKOFF_FIRST_NS * 2^(k-1), at most cap_ns. */
uint64_t push_backoff_ns(unsigned k, uint64_t cap_ns);

#endif
