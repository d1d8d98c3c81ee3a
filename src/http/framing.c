/* A byte-at-a-time scanner over one HTTP/1.1 request with RFC 9112's grammar: it decides
 * where the message ends, and refuses (with the status) every framing that two HTTP
 * implementations could read differently. The rules, and why http-parser alone is not
 * enough, are in http/framing.h. Body bytes are skipped in bulk; everything else costs a
 * switch per byte, on at most the head cap plus the chunk lines. */
#include "http/framing.h"

#include <string.h>

/* A chunk-size line (size, extensions) longer than this is refused: http-parser reads
 * extensions without a bound. */
#define CHUNK_LINE_MAX 4096

enum scan_state {
    S_START,    /* before the request line: empty lines (CRLF) are skipped [RFC 9112 2.2] */
    S_START_LF, /* a CR before the request line: LF must follow */
    S_METHOD,
    S_TARGET0, /* the first byte of the request target */
    S_TARGET,
    S_VERSION, /* "HTTP/d.d", idx bytes matched */
    S_RL_LF,   /* after the version's CR */
    S_LINE,    /* the start of a field line, or of the empty line that ends the fields */
    S_NAME,
    S_VALUE,
    S_VALUE_LF, /* a CR in a field line: LF must follow */
    S_END_LF,   /* the CR of the empty line: LF must follow */
    S_BODY,     /* Content-Length bytes left */
    S_CHUNK_SIZE0,
    S_CHUNK_SIZE,
    S_CHUNK_WS, /* whitespace after the size: only before ';' (BWS) */
    S_CHUNK_EXT,
    S_CHUNK_SIZE_LF,
    S_CHUNK_DATA,
    S_CHUNK_DATA_CR,
    S_CHUNK_DATA_LF,
    S_DONE,
    S_ERROR,
};

enum field_kind { F_OTHER, F_CONTENT_LENGTH, F_TRANSFER_ENCODING, F_HOST };

/* tchar of RFC 9110 5.6.2: "!#$%&'*+-.^_`|~", digits and letters. */
static bool is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* field-vchar / SP / HTAB / obs-text: everything but the control bytes and DEL. */
static bool is_value_byte(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\t';
}

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

void http_framing_init(struct http_framing *f, size_t max_head_bytes, size_t max_target_bytes, uint64_t max_body_bytes)
{
    memset(f, 0, sizeof *f);
    f->max_head_bytes = max_head_bytes;
    f->max_target_bytes = max_target_bytes;
    f->max_body_bytes = max_body_bytes;
}

void http_framing_next(struct http_framing *f)
{
    size_t h = f->max_head_bytes, t = f->max_target_bytes;
    uint64_t b = f->max_body_bytes;
    http_framing_init(f, h, t, b);
}

bool http_framing_head_done(const struct http_framing *f)
{
    return f->head_complete;
}

static void fail(struct http_framing *f, int status)
{
    f->error_status = status;
    f->state = S_ERROR;
}

/* ---- field values that decide the framing ----------------------------------------------- */

static void field_begin(struct http_framing *f)
{
    f->field = F_OTHER;
    if (f->in_trailers || f->name_len > HTTP_FRAMING_NAME_MAX)
        return; /* trailer fields never decide the framing [RFC 9112 7.1.2] */
    size_t n = f->name_len;
    if (n == 14 && memcmp(f->name, "content-length", 14) == 0) {
        if (f->has_cl) { /* twice, even with the same value [RFC 9112 6.3] */
            fail(f, 400);
            return;
        }
        f->has_cl = true;
        f->field = F_CONTENT_LENGTH;
        f->cl_state = 0;
        f->idx = 0;
    } else if (n == 17 && memcmp(f->name, "transfer-encoding", 17) == 0) {
        f->has_te = true;
        f->field = F_TRANSFER_ENCODING;
        f->coding_len = f->coding_ws = 0;
        f->coding_long = false;
    } else if (n == 4 && memcmp(f->name, "host", 4) == 0) {
        f->field = F_HOST;
        f->host_fields++;
    }
}

/* Content-Length = 1*DIGIT, with optional whitespace around it; no list, no sign. */
static void cl_byte(struct http_framing *f, unsigned char c)
{
    if (c >= '0' && c <= '9') {
        if (f->cl_state == 2 || f->idx >= 19) { /* digits after a space, or 10^19 and up */
            fail(f, 400);
            return;
        }
        f->cl_state = 1;
        f->idx++;
        f->content_length = f->content_length * 10 + (uint64_t)(c - '0');
    } else if (is_ws(c)) {
        if (f->cl_state == 1)
            f->cl_state = 2;
    } else {
        fail(f, 400);
    }
}

/* One transfer coding of the list has ended: "chunked" or some other. */
static void coding_end(struct http_framing *f)
{
    if (f->coding_len == 0 && !f->coding_long)
        return; /* an empty list element */
    if (!f->coding_long && f->coding_len == 7 && memcmp(f->coding, "chunked", 7) == 0) {
        f->te_chunked++;
        f->te_last_chunked = true;
    } else {
        f->te_other++;
        f->te_last_chunked = false;
    }
    f->coding_len = f->coding_ws = 0;
    f->coding_long = false;
}

static void coding_append(struct http_framing *f, unsigned char c)
{
    if (f->coding_len < HTTP_FRAMING_CODING_MAX)
        f->coding[f->coding_len++] = (char)c;
    else
        f->coding_long = true;
}

static void te_byte(struct http_framing *f, unsigned char c)
{
    if (c == ',') {
        coding_end(f);
    } else if (is_ws(c)) {
        if ((f->coding_len || f->coding_long) && f->coding_ws < UINT8_MAX)
            f->coding_ws++; /* kept only if the coding goes on after it (saturating: any
                               inner whitespace makes the coding some other one) */
    } else {
        for (; f->coding_ws; f->coding_ws--)
            coding_append(f, ' ');
        coding_append(f, lower(c));
    }
}

static void value_byte(struct http_framing *f, unsigned char c)
{
    if (f->field == F_CONTENT_LENGTH)
        cl_byte(f, c);
    else if (f->field == F_TRANSFER_ENCODING)
        te_byte(f, c);
}

static void value_end(struct http_framing *f)
{
    if (f->field == F_CONTENT_LENGTH && f->cl_state == 0)
        fail(f, 400); /* an empty Content-Length */
    else if (f->field == F_TRANSFER_ENCODING)
        coding_end(f);
}

/* The empty line after the fields: check the framing fields together, then decide how the
 * body is delimited [RFC 9112 6.3]. */
static void head_end(struct http_framing *f)
{
    if (f->host_fields > 1 || (f->has_te && f->has_cl)) {
        fail(f, 400);
        return;
    }
    if (f->has_te) {
        if (f->http_minor_digit == '0') { /* HTTP/1.0 has no Transfer-Encoding */
            fail(f, 400);
            return;
        }
        if (f->te_chunked != 1 || !f->te_last_chunked) {
            fail(f, 400);
            return;
        }
        if (f->te_other) {
            fail(f, 501);
            return;
        }
    }
    f->head_complete = true;
    bool connect = f->method_len == 7 && memcmp(f->method, "CONNECT", 7) == 0;
    if (connect) { /* no content; what follows is a tunnel */
        f->state = S_DONE;
    } else if (f->has_te) {
        f->state = S_CHUNK_SIZE0;
        f->idx = 0;
    } else if (f->has_cl && f->content_length > 0) {
        if (f->content_length > f->max_body_bytes) {
            fail(f, 413);
            return;
        }
        f->body_bytes = f->content_length;
        f->remaining = f->content_length;
        f->state = S_BODY;
    } else {
        f->state = S_DONE;
    }
}

/* ---- the head: request line and fields (and the trailer fields, same grammar) ----------- */

/* The request target: visible ASCII up to the space before the version, at most
 * max_target_bytes of it. */
static inline void target_byte(struct http_framing *f, unsigned char c)
{
    if (c == ' ' && f->state == S_TARGET) {
        f->state = S_VERSION;
        f->idx = 0;
    } else if (c < 0x21 || c > 0x7e) {
        fail(f, 400);
    } else if (++f->target_bytes > f->max_target_bytes) {
        fail(f, 414);
    } else {
        f->state = S_TARGET;
    }
}

/* "HTTP/1.d" then the CR that ends the request line; idx bytes matched so far. */
static inline void version_byte(struct http_framing *f, unsigned char c)
{
    static const char want[] = "HTTP/";
    unsigned i = f->idx++;
    if (i < 5) {
        if (c != (unsigned char)want[i])
            fail(f, 400);
    } else if (i == 5 || i == 7) {
        if (c < '0' || c > '9')
            fail(f, 400);
        else if (i == 5 && c != '1')
            fail(f, 505); /* HTTP/2 and up are not spoken in this syntax [RFC 9112 2.3] */
        else if (i == 5)
            f->http_major_digit = c;
        else
            f->http_minor_digit = c;
    } else if (i == 6) {
        if (c != '.')
            fail(f, 400);
    } else if (c == '\r') {
        f->state = S_RL_LF;
    } else {
        fail(f, 400);
    }
}

/* A field name, kept lower-cased up to HTTP_FRAMING_NAME_MAX bytes (the framing fields are
 * shorter), until its colon. */
static inline void name_byte(struct http_framing *f, unsigned char c)
{
    if (c == ':') {
        field_begin(f);
        if (f->state != S_ERROR)
            f->state = S_VALUE;
    } else if (!is_tchar(c)) {
        fail(f, 400); /* a space before the colon, a space inside the name */
    } else if (f->name_len < HTTP_FRAMING_NAME_MAX) {
        f->name[f->name_len++] = (char)lower(c);
    } else {
        f->name_len = HTTP_FRAMING_NAME_MAX + 1; /* longer than any framing field */
    }
}

static void head_byte(struct http_framing *f, unsigned char c)
{
    switch ((enum scan_state)f->state) {
    case S_START:
        if (c == '\r')
            f->state = S_START_LF;
        else if (is_tchar(c)) {
            f->method[f->method_len++] = (char)c;
            f->state = S_METHOD;
        } else
            fail(f, 400);
        break;
    case S_START_LF:
        if (c == '\n')
            f->state = S_START;
        else
            fail(f, 400);
        break;
    case S_METHOD:
        if (c == ' ')
            f->state = S_TARGET0;
        else if (!is_tchar(c))
            fail(f, 400);
        else if (f->method_len < sizeof f->method)
            f->method[f->method_len++] = (char)c;
        else
            f->method_len = UINT8_MAX; /* longer than any method with a meaning here */
        break;
    case S_TARGET0:
    case S_TARGET:
        target_byte(f, c);
        break;
    case S_VERSION:
        version_byte(f, c);
        break;
    case S_RL_LF:
    case S_VALUE_LF:
        if (c == '\n')
            f->state = S_LINE;
        else
            fail(f, 400);
        break;
    case S_LINE:
        if (c == '\r') {
            f->state = S_END_LF;
        } else if (is_tchar(c)) {
            f->name_len = 1;
            f->name[0] = (char)lower(c);
            f->state = S_NAME;
        } else {
            fail(f, 400); /* SP/HTAB: obs-fold or whitespace before the first field; ':' */
        }
        break;
    case S_NAME:
        name_byte(f, c);
        break;
    case S_VALUE:
        if (c == '\r') {
            value_end(f);
            if (f->state != S_ERROR)
                f->state = S_VALUE_LF;
        } else if (!is_value_byte(c)) {
            fail(f, 400); /* NUL, a bare LF, other control bytes */
        } else {
            value_byte(f, c);
        }
        break;
    case S_END_LF:
        if (c != '\n')
            fail(f, 400);
        else if (f->in_trailers)
            f->state = S_DONE;
        else
            head_end(f);
        break;
    default:
        fail(f, 400);
        break;
    }
}

/* ---- the chunked body ------------------------------------------------------------------- */

static void chunk_byte(struct http_framing *f, unsigned char c)
{
    if (++f->line_bytes > CHUNK_LINE_MAX) {
        fail(f, 400);
        return;
    }
    int v = hex_value(c);
    switch ((enum scan_state)f->state) {
    case S_CHUNK_SIZE0:
        if (v < 0) {
            fail(f, 400);
            return;
        }
        f->content_length = (uint64_t)v;
        f->idx = v ? 1 : 0; /* significant digits: leading zeros do not count */
        f->state = S_CHUNK_SIZE;
        break;
    case S_CHUNK_SIZE:
        if (v >= 0) {
            if ((f->content_length || v) && ++f->idx > 15) { /* 16^15 bytes and up: above any cap */
                fail(f, 413);
                return;
            }
            f->content_length = f->content_length * 16 + (uint64_t)v;
        } else if (is_ws(c)) {
            f->state = S_CHUNK_WS;
        } else if (c == ';') {
            f->state = S_CHUNK_EXT;
        } else if (c == '\r') {
            f->state = S_CHUNK_SIZE_LF;
        } else {
            fail(f, 400);
        }
        break;
    case S_CHUNK_WS:
        if (c == ';')
            f->state = S_CHUNK_EXT;
        else if (!is_ws(c))
            fail(f, 400); /* whitespace is allowed only before an extension [RFC 9112 7.1.1] */
        break;
    case S_CHUNK_EXT:
        if (c == '\r')
            f->state = S_CHUNK_SIZE_LF;
        else if (!is_value_byte(c))
            fail(f, 400);
        break;
    case S_CHUNK_SIZE_LF:
        if (c != '\n') {
            fail(f, 400);
        } else if (f->content_length == 0) {
            f->in_trailers = true; /* the last chunk: trailer fields, then the empty line */
            f->state = S_LINE;
        } else if (f->content_length > f->max_body_bytes - f->body_bytes) {
            fail(f, 413);
        } else {
            f->body_bytes += f->content_length;
            f->remaining = f->content_length;
            f->state = S_CHUNK_DATA;
            f->line_bytes = 0;
        }
        break;
    case S_CHUNK_DATA_CR:
        if (c == '\r')
            f->state = S_CHUNK_DATA_LF;
        else
            fail(f, 400); /* chunk data must end exactly at its size, with CRLF */
        break;
    case S_CHUNK_DATA_LF:
        if (c == '\n') {
            f->state = S_CHUNK_SIZE0;
            f->line_bytes = 0;
        } else {
            fail(f, 400);
        }
        break;
    default:
        fail(f, 400);
        break;
    }
}

size_t http_framing_scan(struct http_framing *f, const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t i = 0;
    while (i < len && f->state != S_DONE && f->state != S_ERROR) {
        enum scan_state s = f->state;
        if (s == S_BODY || s == S_CHUNK_DATA) {
            uint64_t take = f->remaining < len - i ? f->remaining : len - i;
            i += (size_t)take;
            f->remaining -= take;
            if (f->remaining == 0)
                f->state = s == S_BODY ? S_DONE : S_CHUNK_DATA_CR;
            continue;
        }
        if (s >= S_CHUNK_SIZE0) {
            chunk_byte(f, p[i]);
            if (f->state == S_ERROR)
                break;
            i++;
            continue;
        }
        /* The head, and the trailer fields: every byte counts against the head cap. */
        if (++f->head_bytes > f->max_head_bytes) {
            fail(f, 431);
            break;
        }
        head_byte(f, p[i]);
        if (f->state == S_ERROR)
            break;
        i++;
    }
    f->done = f->state == S_DONE;
    return i;
}
