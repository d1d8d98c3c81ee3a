/* Response heads for knee serve. snprintf into a bounded buffer: every response is a few
 * hundred bytes, and the hot path (the null target) never comes here: it copies a response
 * prebuilt with this function. */
#include "http/server_response.h"

#include <http_parser.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void http_date_format(uint64_t wall_ns, char out[HTTP_DATE_LEN + 1])
{
    /* Day and month names are fixed by the RFC, not the locale, so no strftime. */
    static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)(wall_ns / 1000000000ULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday % 7], tm.tm_mday % 100,
             months[tm.tm_mon % 12], (tm.tm_year + 1900) % 10000, tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100);
    memcpy(out, tmp, HTTP_DATE_LEN);
    out[HTTP_DATE_LEN] = '\0';
}

const char *http_reason(int status)
{
    const char *s = http_status_str((enum http_status)status);
    return s && *s && strcmp(s, "<unknown>") != 0 ? s : "Unknown";
}

size_t http_response_head(char *buf, size_t cap, int status, const char *date, const char *content_type,
                          size_t content_length, const char *extra, bool close)
{
    int n = snprintf(buf, cap,
                     "HTTP/1.1 %d %s\r\n"
                     "%s%s%s"
                     "Server: knee\r\n"
                     "%s%s%s"
                     "Content-Length: %zu\r\n"
                     "%s"
                     "%s"
                     "\r\n",
                     status, http_reason(status), date ? "Date: " : "", date ? date : "", date ? "\r\n" : "",
                     content_type ? "Content-Type: " : "", content_type ? content_type : "", content_type ? "\r\n" : "",
                     content_length, extra ? extra : "", close ? "Connection: close\r\n" : "");
    if (n < 0 || (size_t)n >= cap)
        return 0;
    return (size_t)n;
}
