/* HTTP URLs as knee's targets: http://host[:port][/path][?query] and https://... Parsed once at
 * start into the pieces a request needs (the Host header value, the origin-form request target)
 * and the pieces a connect needs (host, port, and whether it speaks TLS). */
#ifndef KNEE_NET_URL_H
#define KNEE_NET_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest URL knee accepts (a cap: URLs come from the user, but also from scenario files). */
#define URL_MAX_LEN 8192

struct url {
    char *host;     /* "127.0.0.1", "example.com", "::1" (IPv6 literal without brackets) */
    char *port_str; /* "80" (http) or "443" (https) when the URL gave none */
    uint16_t port;
    char *authority; /* the Host header value: host as written (brackets kept) plus ":port" if given */
    char *target;    /* origin-form request target: "/path?query" ("/" when absent); no fragment */
    bool ipv6_literal;
    bool tls; /* https:// */
};

/* Parse s into *out (heap strings; url_release frees them). Returns 0, or:
 *   KNEE_EUNSUPPORTED  a scheme other than http:// and https://
 *   KNEE_EFORMAT       anything malformed
 * On error a one-line reason is written to err (never NULL-terminated beyond errlen) and
 * *out is left empty (safe to url_release). */
int url_parse(const char *s, struct url *out, char *err, size_t errlen);
void url_release(struct url *u);

#endif
