/* --proxy's URL, its Basic credentials, the CONNECT request and its answer, and the absolute
 * form of a request (net/proxy.h). Credentials are decoded once and kept only as the ready
 * Proxy-Authorization line; every message about the URL prints it redacted. */
#include "net/proxy.h"

#include "core/err.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void net_proxy_redact(const char *s, char *out, size_t outlen)
{
    const char *scheme = strstr(s, "://");
    const char *auth = scheme ? scheme + 3 : NULL;
    const char *at = NULL;
    for (const char *q = auth; q && *q && *q != '/' && *q != '?' && *q != '#'; q++)
        if (*q == '@')
            at = q; /* the last '@' before the path ends the userinfo */
    if (!at) {
        snprintf(out, outlen, "%s", s);
        return;
    }
    snprintf(out, outlen, "%.*s<redacted>%s", (int)(auth - s), s, at);
}

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* userinfo (n bytes) percent-decoded into out (cap bytes); false when malformed or too long. */
static bool decode_userinfo(const char *s, size_t n, char *out, size_t cap, size_t *outlen)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n)
                return false;
            int hi = hexval((unsigned char)s[i + 1]), lo = hexval((unsigned char)s[i + 2]);
            if (hi < 0 || lo < 0)
                return false;
            c = hi * 16 + lo;
            i += 2;
        }
        if (k + 1 >= cap)
            return false;
        out[k++] = (char)c;
    }
    out[k] = '\0';
    *outlen = k;
    return true;
}

/* The Proxy-Authorization line of userinfo (RFC 7617: base64 of "user:password"). */
static char *basic_line(const char *cred, size_t n, size_t *len)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    static const char head[] = "Proxy-Authorization: Basic ";
    size_t cap = sizeof head + (n + 2) / 3 * 4 + 3;
    char *out = xmalloc(cap);
    size_t k = sizeof head - 1;
    memcpy(out, head, k);
    const unsigned char *u = (const unsigned char *)cred;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)u[i] << 16 | (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0) | (i + 2 < n ? u[i + 2] : 0);
        out[k++] = b64[v >> 18 & 63];
        out[k++] = b64[v >> 12 & 63];
        out[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[k++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[k++] = '\r';
    out[k++] = '\n';
    out[k] = '\0';
    *len = k;
    return out;
}

/* host[:port] (n bytes at s) into p. */
static int parse_hostport(const char *s, size_t n, struct net_proxy *p, const char *shown, char *err, size_t errlen)
{
    const char *colon = NULL, *hend = s + n;
    const char *h = s;
    if (n && *s == '[') {
        const char *rb = memchr(s, ']', n);
        if (!rb)
            return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': an IPv6 address without its ']'", shown);
        h = s + 1;
        hend = rb;
        colon = rb + 1 < s + n && rb[1] == ':' ? rb + 1 : NULL;
        if (!colon && rb + 1 != s + n)
            return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': ':' expected after ']'", shown);
    } else {
        colon = memchr(s, ':', n);
        if (colon)
            hend = colon;
    }
    size_t hl = (size_t)(hend - h);
    if (hl == 0 || hl >= sizeof p->host)
        return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': no host", shown);
    for (size_t i = 0; i < hl; i++)
        if ((unsigned char)h[i] <= 0x20 || h[i] == '@' || h[i] == '/' || (unsigned char)h[i] >= 0x7f)
            return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': a bad character in the host", shown);
    if (!colon || colon + 1 == s + n)
        return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': give the proxy's port (http://host:port)", shown);
    unsigned long port = 0;
    for (const char *q = colon + 1; q < s + n; q++) {
        if (!isdigit((unsigned char)*q) || port > 65535)
            return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': the port is not a number", shown);
        port = port * 10 + (unsigned long)(*q - '0');
    }
    if (port == 0 || port > 65535)
        return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': the port must be 1 to 65535", shown);
    memcpy(p->host, h, hl);
    p->host[hl] = '\0';
    p->port = (uint16_t)port;
    snprintf(p->port_str, sizeof p->port_str, "%lu", port);
    bool v6 = memchr(h, ':', hl) != NULL;
    snprintf(p->shown, sizeof p->shown, v6 ? "[%s]:%s" : "%s:%s", p->host, p->port_str);
    return 0;
}

int net_proxy_parse(const char *url, struct net_proxy *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    char shown[512];
    net_proxy_redact(url, shown, sizeof shown);
    const char *scheme = strstr(url, "://");
    if (!scheme)
        return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': give a URL, http://[user:pass@]host:port", shown);
    if ((size_t)(scheme - url) != 4 || strncasecmp(url, "http", 4) != 0)
        return knee_fail(err, errlen, KNEE_EUNSUPPORTED, "--proxy '%s': only http:// proxies (CONNECT tunnels https)",
                         shown);
    const char *a = scheme + 3;
    size_t n = strcspn(a, "/?#");
    if (a[n] && strcmp(a + n, "/") != 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': a proxy URL has no path", shown);
    const char *at = NULL;
    for (size_t i = 0; i < n; i++)
        if (a[i] == '@')
            at = a + i;
    int r = parse_hostport(at ? at + 1 : a, at ? n - (size_t)(at + 1 - a) : n, p, shown, err, errlen);
    if (r)
        return r;
    if (at) {
        char cred[512];
        size_t cl = 0;
        if (!decode_userinfo(a, (size_t)(at - a), cred, sizeof cred, &cl)) {
            memset(cred, 0, sizeof cred);
            return knee_fail(err, errlen, KNEE_EINVAL, "--proxy '%s': malformed or too long credentials", shown);
        }
        p->auth = basic_line(cred, cl, &p->auth_len);
        memset(cred, 0, sizeof cred);
    }
    return 0;
}

void net_proxy_release(struct net_proxy *p)
{
    if (p->auth)
        memset(p->auth, 0, p->auth_len);
    free(p->auth);
    memset(p, 0, sizeof *p);
}

char *net_proxy_connect_request(const struct net_proxy *p, const char *authority, size_t *len)
{
    size_t alen = strlen(authority);
    size_t cap = 2 * alen + p->auth_len + 64;
    char *out = xmalloc(cap);
    int k =
        snprintf(out, cap, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", authority, authority, p->auth ? p->auth : "");
    *len = (size_t)k;
    return out;
}

/* The status line kept so far is "HTTP/1.x NNN": its code, else 0. */
static uint16_t status_of(const struct net_proxy_head *h)
{
    if (h->nline < 12 || strncmp(h->line, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)h->line[7]) ||
        h->line[8] != ' ')
        return 0;
    unsigned v = 0;
    for (int i = 9; i < 12; i++) {
        if (!isdigit((unsigned char)h->line[i]))
            return 0;
        v = v * 10 + (unsigned)(h->line[i] - '0');
    }
    return v >= 100 && v <= 599 ? (uint16_t)v : 0;
}

int net_proxy_head_feed(struct net_proxy_head *h, const char *buf, size_t n, size_t *used)
{
    static const char end[] = "\r\n\r\n";
    size_t i = 0;
    int r = 0;
    while (i < n && !r) {
        char c = buf[i++];
        if (++h->seen > NET_PROXY_HEAD_MAX) {
            r = -1;
            break;
        }
        if (h->nline < 12) {
            h->line[h->nline++] = c;
            h->line[h->nline] = '\0';
            if (h->nline == 12 && (h->status = status_of(h)) == 0)
                r = -1;
            continue;
        }
        if (c == end[h->match])
            h->match++;
        else
            h->match = c == '\r' ? 1 : 0;
        /* the status line's own CRLF is the first half: a head without fields ends at 4 */
        if (h->match == 4)
            r = 1;
    }
    *used = i;
    return r;
}

size_t net_proxy_absolute(const char *req, size_t len, const char *origin, size_t olen, const char *extra,
                          size_t extra_len, char *out)
{
    const char *sp = memchr(req, ' ', len < 32 ? len : 32);
    if (!sp || (size_t)(sp - req) + 1 >= len || sp[1] != '/')
        return 0;
    const char *eol = memchr(sp, '\n', len - (size_t)(sp - req));
    if (!eol)
        return 0;
    size_t m = (size_t)(sp + 1 - req); /* "METHOD " */
    size_t line = (size_t)(eol + 1 - req);
    size_t k = 0;
    memcpy(out, req, m);
    k += m;
    memcpy(out + k, origin, olen);
    k += olen;
    memcpy(out + k, req + m, line - m);
    k += line - m;
    if (extra_len) {
        memcpy(out + k, extra, extra_len);
        k += extra_len;
    }
    memcpy(out + k, req + line, len - line);
    return k + len - line;
}
