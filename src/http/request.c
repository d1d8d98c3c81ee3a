/* Request parsing on top of http-parser: knee's framing scanner (http/framing.h) first
 * decides where the request ends and refuses what is ambiguous; http-parser then parses
 * exactly those bytes (method, target, version, keep-alive, the body) and must agree on
 * where the request ended. Its callbacks only copy the target and count body bytes, and
 * on_message_complete pauses the parser so each call stops after exactly one request
 * (pipelined requests are then answered one by one, in order). */
#include "http/request.h"

#include "core/err.h"

#include <stdlib.h>
#include <string.h>

/* Above this http-parser's own (compile-time 80 KiB) limit would fire first. */
#define HEADER_CAP_MAX (64 * 1024)

static struct http_request_parser *from(http_parser *hp)
{
    return hp->data;
}

static int on_message_begin(http_parser *hp)
{
    struct http_request_parser *p = from(hp);
    p->in_message = true;
    p->body_bytes = 0;
    p->req.url_len = 0;
    p->req.url[0] = '\0';
    return 0;
}

/* The scanner caps the target at HTTP_REQUEST_URL_MAX already; the check guards the copy. */
static int on_url(http_parser *hp, const char *at, size_t len)
{
    struct http_request_parser *p = from(hp);
    if (p->req.url_len + len > HTTP_REQUEST_URL_MAX) {
        p->error_status = 414;
        return 1;
    }
    memcpy(p->req.url + p->req.url_len, at, len);
    p->req.url_len += len;
    p->req.url[p->req.url_len] = '\0';
    return 0;
}

/* Returning nonzero (other than 1 and 2, which skip the body) stops http-parser with
 * HPE_CB_headers_complete. The scanner has seen every byte http-parser has: if it has not
 * reached the end of the head, the two read the message differently. */
static int on_headers_complete(http_parser *hp)
{
    struct http_request_parser *p = from(hp);
    if (!http_framing_head_done(&p->framing)) {
        p->error_status = 400;
        return -1;
    }
    p->headers_done = true;
    p->req.method = (enum http_method)hp->method;
    p->req.http_major = hp->http_major;
    p->req.http_minor = hp->http_minor;
    return 0;
}

static int on_body(http_parser *hp, const char *at, size_t len)
{
    (void)at;
    struct http_request_parser *p = from(hp);
    p->body_bytes += len;
    if (p->body_bytes > p->max_body_bytes) {
        p->error_status = 413;
        return 1;
    }
    return 0;
}

static int on_message_complete(http_parser *hp)
{
    struct http_request_parser *p = from(hp);
    p->complete = true;
    p->req.keep_alive = http_should_keep_alive(hp) != 0;
    p->req.upgrade = hp->upgrade || hp->method == HTTP_CONNECT;
    http_parser_pause(hp, 1);
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void http_request_parser_init(struct http_request_parser *p, size_t max_header_bytes, uint64_t max_body_bytes)
{
    memset(p, 0, sizeof *p);
    http_parser_init(&p->parser, HTTP_REQUEST);
    p->parser.data = p;
    if (max_header_bytes == 0)
        max_header_bytes = HTTP_REQUEST_HEADER_MAX_DEFAULT;
    p->max_header_bytes = max_header_bytes > HEADER_CAP_MAX ? HEADER_CAP_MAX : max_header_bytes;
    p->max_body_bytes = max_body_bytes;
    http_framing_init(&p->framing, p->max_header_bytes, HTTP_REQUEST_URL_MAX, max_body_bytes);
}

static size_t fail(struct http_request_parser *p, int status, size_t consumed, enum http_request_state *state)
{
    if (p->error_status == 0)
        p->error_status = status;
    p->in_message = true;
    *state = HTTP_REQUEST_ERROR;
    return consumed;
}

size_t http_request_parse(struct http_request_parser *p, const char *data, size_t len, enum http_request_state *state)
{
    if (p->complete) { /* the caller has not called http_request_next() */
        *state = HTTP_REQUEST_DONE;
        return 0;
    }
    if (p->error_status) { /* the stream position is lost after an error */
        *state = HTTP_REQUEST_ERROR;
        return 0;
    }
    /* The scanner first: it stops at the request's end or at the first bad byte, and
     * http-parser gets exactly the bytes it accepted. Whichever finds the first bad byte
     * decides the status, so the answer never depends on how the input was split. */
    size_t end = http_framing_scan(&p->framing, data, len);
    p->header_bytes = (size_t)p->framing.head_bytes;
    /* Never zero bytes: http-parser takes a zero length for the end of the stream. */
    size_t n = end ? http_parser_execute(&p->parser, &settings, data, end) : 0;
    enum http_errno e = HTTP_PARSER_ERRNO(&p->parser);
    if (e != HPE_OK && e != HPE_PAUSED)
        return fail(p, e == HPE_HEADER_OVERFLOW ? 431 : 400, n, state);
    if (p->framing.error_status)
        return fail(p, p->framing.error_status, end, state);
    if (p->complete) {
        if (!p->framing.done || n != end)
            return fail(p, 400, n, state); /* the two disagree on where the request ends */
        *state = HTTP_REQUEST_DONE;
        return n;
    }
    if (p->framing.done || n != end)
        return fail(p, 400, n, state);
    *state = HTTP_REQUEST_MORE;
    return n;
}

void http_request_next(struct http_request_parser *p)
{
    http_parser_pause(&p->parser, 0);
    http_framing_next(&p->framing);
    p->complete = false;
    p->in_message = false;
    p->headers_done = false;
    p->header_bytes = 0;
    p->body_bytes = 0;
}

const char *http_request_path(const struct http_request *r, size_t *len)
{
    const char *u = r->url;
    const char *end = r->url + r->url_len;
    size_t scheme = strncmp(u, "http://", 7) == 0 ? 7 : strncmp(u, "https://", 8) == 0 ? 8 : 0;
    if (scheme) {
        u = strchr(u + scheme, '/');
        if (!u) { /* "http://host" alone: the path is empty */
            *len = 0;
            return end;
        }
    }
    const char *q = u;
    while (q < end && *q != '?' && *q != '#')
        q++;
    *len = (size_t)(q - u);
    return u;
}

bool http_request_path_is(const struct http_request *r, const char *s)
{
    size_t len;
    const char *path = http_request_path(r, &len);
    return strlen(s) == len && memcmp(path, s, len) == 0;
}

/* Plain non-negative decimals only: digits with at most one '.', 1..24 characters. */
static int parse_plain_number(const char *v, size_t len, double *out)
{
    if (len == 0 || len > 24)
        return KNEE_EFORMAT;
    char buf[25];
    int dots = 0, digits = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] == '.')
            dots++;
        else if (v[i] >= '0' && v[i] <= '9')
            digits++;
        else
            return KNEE_EFORMAT;
        buf[i] = v[i];
    }
    if (dots > 1 || digits == 0)
        return KNEE_EFORMAT;
    buf[len] = '\0';
    *out = strtod(buf, NULL);
    return 0;
}

int http_request_query_double(const struct http_request *r, const char *name, double max, double *out)
{
    const char *end = r->url + r->url_len;
    const char *q = memchr(r->url, '?', r->url_len);
    if (!q)
        return KNEE_ENOTFOUND;
    size_t nlen = strlen(name);
    for (const char *s = q + 1; s < end;) {
        const char *amp = s;
        while (amp < end && *amp != '&' && *amp != '#')
            amp++;
        const char *eq = memchr(s, '=', (size_t)(amp - s));
        if (eq && (size_t)(eq - s) == nlen && memcmp(s, name, nlen) == 0) {
            double v;
            int rc = parse_plain_number(eq + 1, (size_t)(amp - eq - 1), &v);
            if (rc)
                return rc;
            if (v > max)
                return KNEE_ERANGE;
            *out = v;
            return 0;
        }
        if (amp >= end || *amp == '#')
            break;
        s = amp + 1;
    }
    return KNEE_ENOTFOUND;
}
