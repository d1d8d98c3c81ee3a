/* URL parsing for targets (RFC 3986 §3, restricted to what an HTTP load generator sends):
 * scheme "http" or "https" (RFC 9110 §4.2), a reg-name, IPv4 or bracketed IPv6 host, an optional port and an
 * origin-form target. Anything outside that is refused with a reason rather than guessed. */
#include "net/url.h"

#include "core/err.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *dup_range(const char *a, size_t n)
{
    char *s = xmalloc(n + 1);
    memcpy(s, a, n);
    s[n] = '\0';
    return s;
}

/* reg-name characters we accept in a host: unreserved plus sub-delims would allow far more,
 * but nothing a resolver takes uses them; a stray character is more likely a typo. */
static bool host_char_ok(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

/* Characters allowed in the request target as sent on the wire: visible ASCII except
 * those that would break the request line. Percent-encoding is the user's business. */
static bool target_char_ok(char c)
{
    unsigned char u = (unsigned char)c;
    return u > 0x20 && u < 0x7f && c != '#';
}

/* A URL without "://": "127.0.0.1:8080/" and "localhost/x" are typed by habit (curl takes
 * them), so when http:// in front makes a URL of it, the message says so rather than guess. */
static int no_scheme(const char *s, char *err, size_t errlen)
{
    char with[URL_MAX_LEN + 8];
    snprintf(with, sizeof with, "http://%s", s);
    struct url u;
    int r = url_parse(with, &u, NULL, 0);
    url_release(&u);
    if (r == 0 && (isalnum((unsigned char)s[0]) || s[0] == '['))
        return knee_fail(err, errlen, KNEE_EFORMAT, "not a URL (no scheme): did you mean %s?", with);
    return knee_fail(err, errlen, KNEE_EFORMAT, "not a URL (expected http://host[:port]/path)");
}

int url_parse(const char *s, struct url *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    if (!s || !*s)
        return knee_fail(err, errlen, KNEE_EFORMAT, "empty URL");
    size_t slen = strlen(s);
    if (slen > URL_MAX_LEN)
        return knee_fail(err, errlen, KNEE_ETOOBIG, "URL longer than %d bytes", URL_MAX_LEN);
    const char *sep = strstr(s, "://");
    if (!sep)
        return no_scheme(s, err, errlen);
    size_t schemelen = (size_t)(sep - s);
    bool tls = schemelen == 5 && strncasecmp(s, "https", 5) == 0;
    if (!tls && !(schemelen == 4 && strncasecmp(s, "http", 4) == 0))
        return knee_fail(err, errlen, KNEE_EUNSUPPORTED, "scheme '%.*s' is not supported (only http:// and https://)",
                         (int)schemelen, s);
    const char *p = sep + 3;
    /* authority ends at the first '/', '?' or '#' */
    const char *aend = p + strcspn(p, "/?#");
    if (aend == p)
        return knee_fail(err, errlen, KNEE_EFORMAT, "no host");
    if (memchr(p, '@', (size_t)(aend - p)))
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "credentials in the URL are not supported (send them with --header 'Authorization: ...')");
    const char *hstart = p, *hend, *portp = NULL;
    if (*p == '[') {
        const char *rb = memchr(p, ']', (size_t)(aend - p));
        if (!rb)
            return knee_fail(err, errlen, KNEE_EFORMAT, "unterminated IPv6 literal '['");
        hstart = p + 1;
        hend = rb;
        for (const char *q = hstart; q < hend; q++)
            if (!(isxdigit((unsigned char)*q) || *q == ':' || *q == '.'))
                return knee_fail(err, errlen, KNEE_EFORMAT, "bad character '%c' in IPv6 literal", *q);
        if (hend == hstart)
            return knee_fail(err, errlen, KNEE_EFORMAT, "empty IPv6 literal");
        out->ipv6_literal = true;
        if (rb + 1 < aend) {
            if (rb[1] != ':')
                return knee_fail(err, errlen, KNEE_EFORMAT, "unexpected '%c' after ']'", rb[1]);
            portp = rb + 2;
        }
    } else {
        const char *colon = memchr(p, ':', (size_t)(aend - p));
        hend = colon ? colon : aend;
        if (colon)
            portp = colon + 1;
        if (hend == hstart)
            return knee_fail(err, errlen, KNEE_EFORMAT, "no host");
        for (const char *q = hstart; q < hend; q++)
            if (!host_char_ok(*q))
                return knee_fail(err, errlen, KNEE_EFORMAT, "bad character '%c' in host", *q);
    }
    unsigned long port = tls ? 443 : 80;
    if (portp) {
        size_t plen = (size_t)(aend - portp);
        if (plen == 0 || plen > 5)
            return knee_fail(err, errlen, KNEE_EFORMAT, "bad port '%.*s'", (int)plen, portp);
        port = 0;
        for (const char *q = portp; q < aend; q++) {
            if (!isdigit((unsigned char)*q))
                return knee_fail(err, errlen, KNEE_EFORMAT, "bad port '%.*s'", (int)plen, portp);
            port = port * 10 + (unsigned long)(*q - '0');
        }
        if (port == 0 || port > 65535)
            return knee_fail(err, errlen, KNEE_EFORMAT, "port %lu out of range 1..65535", port);
    }
    /* target: path and query, fragment dropped (never sent, RFC 9110 §4.2.4 note) */
    const char *tstart = aend;
    const char *tend = tstart + strcspn(tstart, "#");
    for (const char *q = tstart; q < tend; q++)
        if (!target_char_ok(*q))
            return knee_fail(err, errlen, KNEE_EFORMAT, "character 0x%02x in the path must be percent-encoded",
                             (unsigned char)*q);
    out->host = dup_range(hstart, (size_t)(hend - hstart));
    char pbuf[8];
    snprintf(pbuf, sizeof pbuf, "%lu", port);
    out->port_str = dup_range(pbuf, strlen(pbuf));
    out->port = (uint16_t)port;
    out->tls = tls;
    out->authority = dup_range(p, (size_t)(aend - p));
    if (tend == tstart)
        out->target = dup_range("/", 1);
    else if (*tstart == '?') {
        /* "http://h?x" → "/?x" (an empty path becomes "/", RFC 9112 §3.2.1) */
        out->target = xmalloc((size_t)(tend - tstart) + 2);
        out->target[0] = '/';
        memcpy(out->target + 1, tstart, (size_t)(tend - tstart));
        out->target[tend - tstart + 1] = '\0';
    } else
        out->target = dup_range(tstart, (size_t)(tend - tstart));
    return 0;
}

void url_release(struct url *u)
{
    free(u->host);
    free(u->port_str);
    free(u->authority);
    free(u->target);
    memset(u, 0, sizeof *u);
}
