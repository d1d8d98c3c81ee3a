/* Response parsing over http-parser 2.9. The parser pauses itself at the end of each final
 * response so bytes after it (a server that sent more than its Content-Length, or a response
 * nobody asked for) are visible to the caller instead of silently starting a next message. */
#include "http/response.h"

#include "core/err.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void http_matchers_init(struct http_matchers *m)
{
    memset(m, 0, sizeof *m);
}

int http_matchers_add(struct http_matchers *m, const char *needle, size_t len)
{
    if (len == 0 || len > HTTP_MATCH_NEEDLE_MAX)
        return KNEE_EINVAL;
    for (size_t i = 0; i < m->n; i++)
        if (m->len[i] == len && memcmp(m->needle[i], needle, len) == 0)
            return (int)i;
    if (m->n == HTTP_MATCH_MAX)
        return KNEE_ERANGE;
    size_t i = m->n++;
    m->needle[i] = xmalloc(len);
    memcpy(m->needle[i], needle, len);
    m->len[i] = len;
    /* fail[k] = length of the longest proper border of needle[0..k] */
    uint16_t *f = xmalloc(len * sizeof *f);
    f[0] = 0;
    size_t k = 0;
    for (size_t q = 1; q < len; q++) {
        while (k > 0 && needle[k] != needle[q])
            k = f[k - 1];
        if (needle[k] == needle[q])
            k++;
        f[q] = (uint16_t)k;
    }
    m->fail[i] = f;
    return (int)i;
}

void http_matchers_release(struct http_matchers *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->needle[i]);
        free(m->fail[i]);
    }
    memset(m, 0, sizeof *m);
}

/* --- Server-Timing (W3C Server Timing, §3: metric *( ";" param ), params name=value) --- */

static const char *skip_ows(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

static bool tchar(char c)
{
    return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

size_t http_parse_server_timing(const char *s, size_t len, struct http_server_timing *out, size_t max)
{
    const char *p = s, *end = s + len;
    size_t n = 0;
    while (p < end && n < max) {
        p = skip_ows(p, end);
        const char *name = p;
        while (p < end && tchar(*p))
            p++;
        size_t nlen = (size_t)(p - name);
        double dur = NAN;
        /* params until the next top-level comma (commas inside quoted strings do not count) */
        while (p < end && *p != ',') {
            p = skip_ows(p, end);
            if (p < end && *p == ';') {
                p = skip_ows(p + 1, end);
                const char *pn = p;
                while (p < end && tchar(*p))
                    p++;
                size_t pnlen = (size_t)(p - pn);
                p = skip_ows(p, end);
                if (p < end && *p == '=') {
                    p = skip_ows(p + 1, end);
                    char val[64];
                    size_t vl = 0;
                    if (p < end && *p == '"') {
                        p++;
                        while (p < end && *p != '"') {
                            if (*p == '\\' && p + 1 < end)
                                p++;
                            if (vl + 1 < sizeof val)
                                val[vl++] = *p;
                            p++;
                        }
                        if (p < end)
                            p++;
                    } else {
                        while (p < end && tchar(*p)) {
                            if (vl + 1 < sizeof val)
                                val[vl++] = *p;
                            p++;
                        }
                    }
                    val[vl] = '\0';
                    if (pnlen == 3 && strncasecmp(pn, "dur", 3) == 0 && isnan(dur)) {
                        char *e;
                        double d = strtod(val, &e);
                        if (e != val && *e == '\0' && isfinite(d) && d >= 0)
                            dur = d;
                    }
                }
            } else if (p < end && *p != ',') {
                p++; /* junk: skip a byte and keep looking for the next ';' or ',' */
            }
        }
        if (p < end && *p == ',')
            p++;
        if (nlen == 0)
            continue;
        size_t cl = nlen < HTTP_ST_NAME_MAX - 1 ? nlen : HTTP_ST_NAME_MAX - 1;
        memcpy(out[n].name, name, cl);
        out[n].name[cl] = '\0';
        out[n].dur_ms = dur;
        n++;
    }
    return n;
}

/* --- http-parser callbacks --- */

static const char ST_NAME[] = "server-timing";

static const char CT_NAME[] = "content-type";

static void end_field(struct http_response *r)
{
    r->ct_value =
        !r->field_long && r->field_len == sizeof CT_NAME - 1 && strncasecmp(r->field, CT_NAME, sizeof CT_NAME - 1) == 0;
    r->st_value =
        !r->field_long && r->field_len == sizeof ST_NAME - 1 && strncasecmp(r->field, ST_NAME, sizeof ST_NAME - 1) == 0;
    r->field_len = 0;
    r->field_long = false;
    r->st_sep = r->st_value && r->st_len > 0; /* several Server-Timing fields join with ',' */
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    struct http_response *r = p->data;
    if (r->in_value)
        r->in_value = false;
    if (r->field_len + len > sizeof r->field) {
        r->field_long = true;
        return 0;
    }
    memcpy(r->field + r->field_len, at, len);
    r->field_len += len;
    return 0;
}

static void st_append(struct http_response *r, const char *s, size_t len)
{
    size_t room = sizeof r->st_text - r->st_len;
    if (len > room)
        len = room;
    memcpy(r->st_text + r->st_len, s, len);
    r->st_len += len;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    struct http_response *r = p->data;
    if (!r->in_value) {
        end_field(r);
        r->in_value = true;
        if (r->st_sep)
            st_append(r, ",", 1);
    }
    if (r->st_value)
        st_append(r, at, len);
    if (r->ct_value) { /* only its first bytes matter */
        size_t room = sizeof r->ct - r->ct_len;
        size_t n = len < room ? len : room;
        memcpy(r->ct + r->ct_len, at, n);
        r->ct_len = (uint8_t)(r->ct_len + n);
    }
    return 0;
}

/* on_headers_complete's answers to http-parser: 0 a body may follow, 1 no body follows, any
 * other value stops the parse with an error (2 would mean an upgrade). */
#define HP_BODY 0
#define HP_NO_BODY 1
#define HP_STOP 3

static int on_headers_complete(http_parser *p)
{
    struct http_response *r = p->data;
    r->status = p->status_code;
    r->headers_done = true;
    r->in_value = false;
    if (r->status == 101)
        return HP_STOP; /* knee never asks to switch protocols: not a response to our request */
    if (r->st_len && r->status >= 200)
        r->nst = http_parse_server_timing(r->st_text, r->st_len, r->st, HTTP_ST_MAX_ENTRIES);
    if (r->status >= 200 && !r->head)
        http_events_head(&r->ev, http_content_type_is_sse(r->ct, r->ct_len));
    /* a response to HEAD has no body (RFC 9110 §9.3.2) */
    return (r->head && r->status >= 200) ? HP_NO_BODY : HP_BODY;
}

void http_matchers_feed(const struct http_matchers *m, size_t kmp[HTTP_MATCH_MAX], uint32_t *matched, const char *at,
                        size_t len)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        if (*matched & (1u << i))
            continue;
        const char *nd = m->needle[i];
        const uint16_t *f = m->fail[i];
        size_t k = kmp[i], nl = m->len[i];
        for (size_t j = 0; j < len; j++) {
            while (k > 0 && nd[k] != at[j])
                k = f[k - 1];
            if (nd[k] == at[j])
                k++;
            if (k == nl) {
                *matched |= 1u << i;
                break;
            }
        }
        kmp[i] = k;
    }
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    struct http_response *r = p->data;
    r->body_bytes += len;
    http_matchers_feed(r->matchers, r->kmp, &r->matched, at, len);
    if (r->ev.on)
        http_events_body(&r->ev, at, len);
    return 0;
}

static int on_chunk_header(http_parser *p)
{
    struct http_response *r = p->data;
    r->chunk_len = p->content_length;
    return 0;
}

/* A chunk with data ended: in chunks mode, an event (the last, empty chunk is none). */
static int on_chunk_complete(http_parser *p)
{
    struct http_response *r = p->data;
    if (r->chunk_len && r->ev.on)
        http_events_chunk(&r->ev);
    r->chunk_len = 0;
    return 0;
}

static int on_message_complete(http_parser *p)
{
    struct http_response *r = p->data;
    if (r->status >= 100 && r->status < 200) {
        /* an interim response (100 Continue, 103 Early Hints): the final one follows */
        r->status = 0;
        r->headers_done = false;
        r->nst = 0;
        r->st_len = 0;
        r->ct_len = 0;
        return 0;
    }
    r->complete = true;
    r->keep_alive = http_should_keep_alive(p) != 0;
    http_parser_pause(p, 1);
    return 0;
}

/* --- the fast path ---
 *
 * http-parser walks a response head byte by byte through a state machine (about 29
 * instructions per byte on nginx's 153-byte answer, more than the rest of the load thread's
 * work per request together). Most responses a load test sees have one shape, which this path
 * parses in one pass over a head that arrived whole in the first bytes fed:
 *
 *   HTTP/1.1 SP 3DIGIT SP reason CRLF *( name ":" OWS value CRLF ) CRLF body
 *
 * with a status of 200-599 other than 204 and 304, names of RFC 9110 token characters, values
 * of the bytes http-parser allows in a value (HTAB, 0x20-0xFF but DEL) without leading or
 * trailing whitespace, one Content-Length of at most 18 digits (or none for a response to
 * HEAD), at most one Connection of exactly "close" or "keep-alive", no Transfer-Encoding,
 * Upgrade or Proxy-Connection, no obs-fold, every line ending in CRLF, a head of at most
 * FAST_HEAD_MAX bytes. Anything else (or a head not yet complete) declines without touching
 * the response, and http-parser parses it from its first byte. What the fast path sets is
 * what http-parser's callbacks set for the same bytes (status, keep-alive, counts, matches,
 * Server-Timing, bytes consumed); tests/fuzz/fuzz_http_response.c and test_http_client.c
 * compare the two on every input. */

#define FAST_HEAD_MAX 8192

/* RFC 9110 tchar: ALPHA DIGIT ! # $ % & ' * + - . ^ _ ` | ~ */
static const unsigned char TCHAR[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0,
};

static bool fast_vchar(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static inline uint64_t fast_load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint32_t fast_load32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* name (len bytes) is `lower` (lower case letters and '-', at least 4 bytes) but for the case
 * of its letters. OR 0x20 folds exactly the ASCII capitals onto their lower case letters, and
 * of the other bytes only CR onto '-', which a name (tchar) or a value (it ends at CR) never
 * holds: the answer strncasecmp gives in the C locale knee runs in. Compared 8 (or 4) bytes at
 * a time, the last word overlapping the one before, rather than by strncasecmp: libc's vector
 * code takes a slower path when a string lies near the end of a page, so the instructions per
 * response would change with where the linker happens to put a literal. */
static inline bool fast_name_is(const unsigned char *name, size_t len, const char *lower, size_t lower_len)
{
    const unsigned char *lo = (const unsigned char *)lower;
    const uint64_t fold64 = 0x2020202020202020u;
    const uint32_t fold32 = 0x20202020u;
    if (len != lower_len)
        return false;
    if (len >= 8) {
        for (size_t i = 0; i + 8 < len; i += 8)
            if ((fast_load64(name + i) | fold64) != fast_load64(lo + i))
                return false;
        return (fast_load64(name + len - 8) | fold64) == fast_load64(lo + len - 8);
    }
    return (fast_load32(name) | fold32) == fast_load32(lo) &&
           (fast_load32(name + len - 4) | fold32) == fast_load32(lo + len - 4);
}

/* The body bytes of a response the fast path parsed (the whole of it or the part fed). */
static void fast_body(struct http_response *r, const char *at, size_t len)
{
    r->body_bytes += len;
    http_matchers_feed(r->matchers, r->kmp, &r->matched, at, len);
    if (r->ev.on)
        http_events_body(&r->ev, at, len);
}

/* What the field lines of a head say, as far as the fast path reads them. */
struct fast_fields {
    uint64_t cl;
    bool have_cl, have_conn, close;
    bool sse; /* Content-Type: text/event-stream */
    /* Server-Timing values, copied into r->st_text only once the head is accepted */
    size_t nst;
    const unsigned char *st_at[HTTP_ST_MAX_ENTRIES];
    size_t st_n[HTTP_ST_MAX_ENTRIES];
};

/* "HTTP/1.1 SP 3DIGIT SP reason CRLF" at *p: the status, *p past the line; -1 to decline. */
static inline int fast_status_line(const unsigned char **pp, const unsigned char *end)
{
    const unsigned char *p = *pp;
    if (end - p < 13 || memcmp(p, "HTTP/1.1 ", 9) != 0)
        return -1;
    p += 9;
    if (p[0] < '2' || p[0] > '5' || p[1] < '0' || p[1] > '9' || p[2] < '0' || p[2] > '9' || p[3] != ' ')
        return -1;
    int status = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
    if (status == 204 || status == 304)
        return -1;
    p += 4;
    while (p < end && *p != '\r') {
        if (*p == '\t' || *p < 0x20 || *p == 0x7f)
            return -1;
        p++;
    }
    if (end - p < 2 || p[1] != '\n')
        return -1;
    *pp = p + 2;
    return status;
}

/* One field line "name:" OWS value CRLF at *pp (not the empty line): its name and value, *pp
 * past the CRLF; false to decline. */
static inline bool fast_field_line(const unsigned char **pp, const unsigned char *end, const unsigned char **name,
                                   size_t *nlen, const unsigned char **value, size_t *vlen)
{
    const unsigned char *p = *pp;
    *name = p;
    while (p < end && TCHAR[*p])
        p++;
    *nlen = (size_t)(p - *name);
    if (*nlen == 0 || p >= end || *p != ':')
        return false;
    p++;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    const unsigned char *v = p;
    while (p < end && *p != '\r') {
        if (!fast_vchar(*p))
            return false;
        p++;
    }
    size_t n = (size_t)(p - v);
    /* CRLF, and the next line must not start with whitespace (obs-fold) */
    if (n == 0 || v[n - 1] == ' ' || v[n - 1] == '\t' || end - p < 3 || p[1] != '\n' || p[2] == ' ' || p[2] == '\t')
        return false;
    *value = v;
    *vlen = n;
    *pp = p + 2;
    return true;
}

/* What one field means to the fast path, kept in f; false to decline (a field it leaves to
 * http-parser, or one it cannot take twice). Names are told apart by length first. */
static inline bool fast_field(struct fast_fields *f, const unsigned char *name, size_t nlen, const unsigned char *v,
                              size_t vlen)
{
    switch (nlen) {
    case 14:
        if (fast_name_is(name, nlen, "content-length", 14)) {
            if (f->have_cl || vlen > 18)
                return false;
            for (size_t i = 0; i < vlen; i++) {
                if (v[i] < '0' || v[i] > '9')
                    return false;
                f->cl = f->cl * 10 + (uint64_t)(v[i] - '0');
            }
            f->have_cl = true;
        }
        return true;
    case 10:
        if (fast_name_is(name, nlen, "connection", 10)) {
            if (f->have_conn)
                return false;
            f->have_conn = true;
            if (fast_name_is(v, vlen, "close", 5))
                f->close = true;
            else if (!fast_name_is(v, vlen, "keep-alive", 10))
                return false;
        }
        return true;
    case 17:
        return !fast_name_is(name, nlen, "transfer-encoding", 17);
    case 12:
        if (fast_name_is(name, nlen, "content-type", 12))
            f->sse = http_content_type_is_sse((const char *)v, vlen);
        return true;
    case 7:
        return !fast_name_is(name, nlen, "upgrade", 7);
    case 16:
        return !fast_name_is(name, nlen, "proxy-connection", 16);
    case sizeof ST_NAME - 1:
        if (fast_name_is(name, nlen, ST_NAME, sizeof ST_NAME - 1)) {
            if (f->nst == HTTP_ST_MAX_ENTRIES)
                return false;
            f->st_at[f->nst] = v;
            f->st_n[f->nst++] = vlen;
        }
        return true;
    default:
        return true;
    }
}

/* The head (head bytes of data) is accepted: r takes the status, the fields and the body bytes
 * fed with the head. */
static inline enum http_feed fast_accept(struct http_response *r, int status, const struct fast_fields *f,
                                         const char *data, size_t len, size_t head, size_t *consumed)
{
    for (size_t i = 0; i < f->nst; i++) {
        if (r->st_len > 0) /* several Server-Timing fields join with ',' (as in on_header_value) */
            st_append(r, ",", 1);
        st_append(r, (const char *)f->st_at[i], f->st_n[i]);
    }
    r->fast = true;
    r->status = status;
    r->headers_done = true;
    if (r->st_len)
        r->nst = http_parse_server_timing(r->st_text, r->st_len, r->st, HTTP_ST_MAX_ENTRIES);
    if (!r->head)
        http_events_head(&r->ev, f->sse);
    size_t avail = len - head;
    uint64_t cl = r->head ? 0 : f->cl; /* a response to HEAD has no body (RFC 9110 §9.3.2) */
    size_t take = cl < avail ? (size_t)cl : avail;
    fast_body(r, data + head, take);
    r->bytes = head + take;
    *consumed = head + take;
    r->fast_left = cl - take;
    r->fast_close = f->close;
    if (r->fast_left)
        return HTTP_FEED_MORE;
    r->complete = true;
    r->keep_alive = !f->close;
    return HTTP_FEED_DONE;
}

/* A response's first bytes: DONE or MORE when the fast path parsed the head (and the body
 * fed with it), ERROR when it declines (nothing in r changed). */
static enum http_feed fast_head(struct http_response *r, const char *data, size_t len, size_t *consumed)
{
    const unsigned char *p = (const unsigned char *)data, *end = p + len;
    if (len > FAST_HEAD_MAX)
        end = p + FAST_HEAD_MAX; /* the head must end before this */
    int status = fast_status_line(&p, end);
    if (status < 0)
        return HTTP_FEED_ERROR;
    struct fast_fields f;
    f.cl = 0;
    f.have_cl = f.have_conn = f.close = f.sse = false;
    f.nst = 0;
    for (;;) {
        if (p >= end)
            return HTTP_FEED_ERROR;
        if (*p == '\r') { /* the empty line */
            if (end - p < 2 || p[1] != '\n')
                return HTTP_FEED_ERROR;
            p += 2;
            break;
        }
        const unsigned char *name, *v;
        size_t nlen, vlen;
        if (!fast_field_line(&p, end, &name, &nlen, &v, &vlen) || !fast_field(&f, name, nlen, v, vlen))
            return HTTP_FEED_ERROR;
    }
    if (!f.have_cl && !r->head)
        return HTTP_FEED_ERROR; /* a body delimited by the close: http-parser's */
    return fast_accept(r, status, &f, data, len, (size_t)(p - (const unsigned char *)data), consumed);
}

static const http_parser_settings SETTINGS = {
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
    .on_chunk_header = on_chunk_header,
    .on_chunk_complete = on_chunk_complete,
};

void http_response_init(struct http_response *r, const struct http_matchers *matchers, bool head)
{
    /* Only the fixed part is cleared; st_text is overwritten before it is read. */
    memset(r, 0, offsetof(struct http_response, st_text));
    http_parser_init(&r->parser, HTTP_RESPONSE);
    r->parser.data = r;
    r->matchers = matchers;
    r->head = head;
}

enum http_feed http_response_feed(struct http_response *r, const char *data, size_t len, size_t *consumed)
{
    return http_response_feed_at(r, data, len, consumed, 0);
}

enum http_feed http_response_feed_at(struct http_response *r, const char *data, size_t len, size_t *consumed,
                                     uint64_t at_ns)
{
    r->ev.now_ns = at_ns; /* these bytes' events get one time (0: one clock reading, when there are any) */
    if (r->fast_left) {
        size_t take = r->fast_left < len ? (size_t)r->fast_left : len;
        fast_body(r, data, take);
        r->bytes += take;
        r->fast_left -= take;
        *consumed = take;
        if (r->fast_left)
            return HTTP_FEED_MORE;
        r->complete = true;
        r->keep_alive = !r->fast_close;
        return HTTP_FEED_DONE;
    }
    if (r->bytes == 0 && !r->slow_only && !r->complete) {
        enum http_feed f = fast_head(r, data, len, consumed);
        if (f != HTTP_FEED_ERROR)
            return f;
    }
    size_t n = http_parser_execute(&r->parser, &SETTINGS, data, len);
    r->bytes += n;
    *consumed = n;
    enum http_errno e = HTTP_PARSER_ERRNO(&r->parser);
    if (r->complete)
        return HTTP_FEED_DONE;
    if (e != HPE_OK) {
        r->error_name = http_errno_name(e);
        return HTTP_FEED_ERROR;
    }
    return HTTP_FEED_MORE;
}

enum http_feed http_response_eof(struct http_response *r)
{
    if (r->complete)
        return HTTP_FEED_DONE;
    if (r->bytes == 0) {
        r->error_name = "eof_before_response";
        return HTTP_FEED_ERROR;
    }
    if (!r->fast && HTTP_PARSER_ERRNO(&r->parser) == HPE_OK) {
        http_parser_execute(&r->parser, &SETTINGS, NULL, 0);
        if (r->complete)
            return HTTP_FEED_DONE;
    }
    r->error_name = "eof_mid_response";
    return HTTP_FEED_ERROR;
}
