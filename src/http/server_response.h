/* Server-side HTTP/1.1 response writing: status line and headers formatted into a
 * caller's buffer (no allocation), the Date header kept as a cached string that the
 * caller refreshes once a second. */
#ifndef KNEE_HTTP_SERVER_RESPONSE_H
#define KNEE_HTTP_SERVER_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 §5.6.7 IMF-fixdate) is always 29 bytes. */
#define HTTP_DATE_LEN 29

/* Format wall-clock time (ns since the Unix epoch) as an IMF-fixdate into out (29 bytes
 * + NUL). Thread-safe. */
void http_date_format(uint64_t wall_ns, char out[HTTP_DATE_LEN + 1]);

/* The reason phrase for a status code ("OK", "Service Unavailable"); "Unknown" if none. */
const char *http_reason(int status);

/* Format a response head into buf[0..cap): the status line, Date (when date is not NULL),
 * "Server: knee", Content-Type (when not NULL), Content-Length, the caller's extra header
 * lines (each ending in CRLF; NULL for none), "Connection: close" when close is true, and
 * the blank line. Returns the length written, or 0 when it does not fit (nothing usable
 * is left in buf then). */
size_t http_response_head(char *buf, size_t cap, int status, const char *date, const char *content_type,
                          size_t content_length, const char *extra, bool close);

#endif
