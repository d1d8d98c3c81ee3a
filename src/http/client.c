/* Request serialisation (RFC 9112 §3 request line, §5 field lines, RFC 9110 §7.2 Host).
 * Built once per target; the load engine writes the bytes verbatim on every send. */
#include "http/client.h"

#include "core/err.h"
#include "core/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool http_is_token(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            continue;
        if (!strchr("!#$%&'*+-.^_`|~", c) || c == '\0')
            return false;
    }
    return true;
}

/* A growable byte buffer used only while building (never on the request path). */
struct buf {
    char *p;
    size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
    b->p = grow_array(b->p, &b->cap, b->len + n + 1, 1, 256);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static bool name_is(const char *line, size_t namelen, const char *name)
{
    return strlen(name) == namelen && strncasecmp(line, name, namelen) == 0;
}

int http_client_build_request(const struct http_request_spec *spec, char **out, size_t *out_len, char *err,
                              size_t errlen)
{
    *out = NULL;
    *out_len = 0;
    const char *method = spec->method ? spec->method : "GET";
    if (!http_is_token(method, strlen(method)))
        return knee_fail(err, errlen, KNEE_EINVAL, "method '%s' is not an HTTP token", method);
    if (spec->nheaders > HTTP_CLIENT_MAX_HEADERS)
        return knee_fail(err, errlen, KNEE_EINVAL, "more than %d headers", HTTP_CLIENT_MAX_HEADERS);
    if (spec->body_len > HTTP_CLIENT_MAX_BODY)
        return knee_fail(err, errlen, KNEE_EINVAL, "body larger than %u bytes", HTTP_CLIENT_MAX_BODY);
    bool have_host = false, have_ua = false;
    for (size_t i = 0; i < spec->nheaders; i++) {
        const char *h = spec->headers[i];
        const char *colon = strchr(h, ':');
        if (!colon)
            return knee_fail(err, errlen, KNEE_EINVAL, "header '%s' has no ':' (expected 'Name: value')", h);
        size_t nlen = (size_t)(colon - h);
        if (!http_is_token(h, nlen))
            return knee_fail(err, errlen, KNEE_EINVAL, "header name '%.*s' is not an HTTP token", (int)nlen, h);
        for (const char *v = colon + 1; *v; v++)
            if ((unsigned char)*v < 0x20 && *v != '\t')
                return knee_fail(err, errlen, KNEE_EINVAL, "header '%.*s' has a control character in its value",
                                 (int)nlen, h);
        if (name_is(h, nlen, "content-length") || name_is(h, nlen, "transfer-encoding"))
            return knee_fail(err, errlen, KNEE_EINVAL, "header '%.*s' is set by knee from --body", (int)nlen, h);
        if (name_is(h, nlen, "connection"))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "header 'Connection' is set by knee (use --no-keepalive for close)");
        if (name_is(h, nlen, "host"))
            have_host = true;
        if (name_is(h, nlen, "user-agent"))
            have_ua = true;
    }
    struct buf b = {0};
    buf_str(&b, method);
    buf_str(&b, " ");
    buf_str(&b, spec->url->target);
    buf_str(&b, " HTTP/1.1\r\n");
    if (!have_host) {
        buf_str(&b, "Host: ");
        buf_str(&b, spec->url->authority);
        buf_str(&b, "\r\n");
    }
    if (!have_ua)
        buf_str(&b, "User-Agent: knee/" KNEE_VERSION "\r\n");
    for (size_t i = 0; i < spec->nheaders; i++) {
        /* normalise "Name:value" and "Name:   value" to "Name: value" */
        const char *h = spec->headers[i];
        const char *colon = strchr(h, ':');
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vlen = strlen(v);
        while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
            vlen--;
        buf_add(&b, h, (size_t)(colon - h));
        buf_str(&b, ": ");
        buf_add(&b, v, vlen);
        buf_str(&b, "\r\n");
    }
    if (!spec->keepalive)
        buf_str(&b, "Connection: close\r\n");
    bool body_method = strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0;
    if (spec->body_len || body_method) {
        char cl[48];
        snprintf(cl, sizeof cl, "Content-Length: %zu\r\n", spec->body_len);
        buf_str(&b, cl);
    }
    buf_str(&b, "\r\n");
    if (spec->body_len)
        buf_add(&b, spec->body, spec->body_len);
    *out = b.p;
    *out_len = b.len;
    return 0;
}

bool http_method_idempotent(const char *method)
{
    static const char *const idem[] = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"};
    for (size_t i = 0; i < sizeof idem / sizeof *idem; i++)
        if (strcmp(method, idem[i]) == 0)
            return true;
    return false;
}
