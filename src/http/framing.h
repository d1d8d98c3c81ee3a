/* knee's strict check of HTTP/1.1 request framing (RFC 9112), run over the bytes before
 * http-parser sees them. Debian's libhttp-parser is built with HTTP_PARSER_STRICT=0, and
 * even its strict mode accepts what request smuggling relies on: a space before the
 * colon ("Transfer-Encoding : chunked" is still Transfer-Encoding), spaces inside field
 * names, obs-folded lines, any "HTTP/d.d" version, transfer codings before "chunked",
 * "chunked" twice, and any two bytes in place of the CRLF after chunk data. This scanner
 * follows the whole message (request line, fields, then the body by Content-Length or by
 * chunks) with the RFC's grammar and decides where it ends; http_request_parse() then lets
 * http-parser parse exactly those bytes and checks that both agree.
 *
 * What is refused, with the status (RFC 9112 section in brackets):
 *   400  a request line that is not METHOD SP TARGET SP HTTP/d.d CRLF [3]; a target with
 *        bytes outside %x21-7E [3.2]; a field name that is not a token, a space before the
 *        colon, an empty name [5.1]; a line starting with SP or HTAB: obs-fold, or
 *        whitespace before the first field [5.2, 2.2]; a control byte (NUL included) in a
 *        field value; a bare CR or a bare LF anywhere [2.2]; Content-Length twice, or not a
 *        plain decimal [6.3]; Content-Length with Transfer-Encoding [6.1, 6.3];
 *        Transfer-Encoding in an HTTP/1.0 request [6.1]; "chunked" not last or twice
 *        [6.3, 7]; Host twice [3.2]; a chunk line that is not HEXDIG [; ext] CRLF, or
 *        chunk data not followed by CRLF [7.1]
 *   501  a transfer coding other than "chunked" (before a final "chunked") [6.1]
 *   505  an HTTP major version other than 1 [2.3]
 *   414  a target above HTTP_REQUEST_URL_MAX bytes
 *   431  a head (request line + fields, CRLFs included) above the head cap
 *   413  a Content-Length, or chunk sizes adding up, above the body cap
 * Nothing here allocates; state carries over between calls, so any split of the input
 * gives the same answer. */
#ifndef KNEE_HTTP_FRAMING_H
#define KNEE_HTTP_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_FRAMING_NAME_MAX 20 /* field names kept (lower case) to recognise the framing ones */
#define HTTP_FRAMING_CODING_MAX 16

struct http_framing {
    /* limits */
    size_t max_head_bytes, max_target_bytes;
    uint64_t max_body_bytes;
    /* where the scan is */
    unsigned char state;
    unsigned char idx;   /* position inside "HTTP/d.d", or digits seen in a number */
    unsigned char field; /* which framing field the current line is */
    unsigned char name_len;
    char name[HTTP_FRAMING_NAME_MAX];
    char method[8]; /* the method's first bytes: CONNECT has no body */
    unsigned char method_len;
    unsigned char http_minor_digit, http_major_digit;
    size_t target_bytes;
    uint64_t head_bytes; /* request line + fields so far, CRLFs included */
    /* framing fields seen */
    bool has_cl, has_te, in_trailers;
    bool head_complete; /* the empty line after the fields was scanned and passed */
    unsigned host_fields;
    uint64_t content_length;
    unsigned char cl_state; /* inside a Content-Length value: before, digits, after */
    /* Transfer-Encoding: the coding being read, then the verdict over all of them */
    char coding[HTTP_FRAMING_CODING_MAX];
    unsigned char coding_len, coding_ws;
    bool coding_long;
    unsigned te_chunked, te_other;
    bool te_last_chunked;
    /* the body */
    uint64_t remaining;  /* bytes of Content-Length body or of the current chunk left */
    unsigned line_bytes; /* bytes of the current chunk-size line (capped) */
    uint64_t body_bytes; /* declared so far (Content-Length, or chunk sizes) */
    /* the verdict */
    bool done;        /* the message ended at the last byte scanned */
    int error_status; /* 0, or the status to answer (see above) */
};

/* Prepare for a new connection. */
void http_framing_init(struct http_framing *f, size_t max_head_bytes, size_t max_target_bytes, uint64_t max_body_bytes);

/* Forget the finished message; the next byte starts a new request (limits are kept). */
void http_framing_next(struct http_framing *f);

/* Scan data[0..len). Stops right after the message's last byte (f->done), at the first
 * byte that breaks a rule (f->error_status set; the byte is not counted), or at len.
 * Returns the number of bytes scanned. After done or an error it scans nothing more. */
size_t http_framing_scan(struct http_framing *f, const char *data, size_t len);

/* True once the request line and the fields (the head) have all been scanned and passed
 * (it stays true when the body breaks a rule later). */
bool http_framing_head_done(const struct http_framing *f);

#endif
