/* A target's request as HTTP/2 header fields (RFC 9113 §8.3.1 pseudo-headers, §8.2 field
 * names in lower case, §8.2.2 no connection-specific fields), built once before the run like
 * the HTTP/1.1 bytes of http/client.c, whose checks it reuses so both protocols refuse the same
 * input with the same words. */
#include "h2/h2.h"

#include "core/err.h"
#include "core/grow.h"

#include <ctype.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Name and value offsets into the storage while it grows; pointers are set at the end. */
struct field {
    size_t name, namelen, value, valuelen;
};

struct builder {
    char *p;
    size_t len, cap;
    struct field f[HTTP_CLIENT_MAX_HEADERS + 8];
    size_t n;
};

static size_t put(struct builder *b, const char *s, size_t n, bool lower)
{
    b->p = grow_array(b->p, &b->cap, b->len + n + 1, 1, 256);
    size_t at = b->len;
    for (size_t i = 0; i < n; i++)
        b->p[at + i] = lower ? (char)tolower((unsigned char)s[i]) : s[i];
    b->p[at + n] = '\0';
    b->len += n + 1;
    return at;
}

static void add(struct builder *b, const char *name, size_t nlen, const char *value, size_t vlen)
{
    struct field *f = &b->f[b->n++];
    f->name = put(b, name, nlen, true);
    f->namelen = nlen;
    f->value = put(b, value, vlen, false);
    f->valuelen = vlen;
}

static bool name_is(const char *h, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(h, name, n) == 0;
}

int h2_request_build(const struct http_request_spec *spec, struct h2_request *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    /* the HTTP/1.1 checks (method token, header syntax, caps, Content-Length/Connection set by
     * knee): one set of rules and messages for both protocols */
    char *h1;
    size_t h1len;
    int r = http_client_build_request(spec, &h1, &h1len, err, errlen);
    if (r)
        return r;
    free(h1);
    const char *method = spec->method ? spec->method : "GET";
    const char *authority = spec->url->authority;
    size_t alen = strlen(authority);
    bool have_ua = false;
    for (size_t i = 0; i < spec->nheaders; i++) {
        const char *h = spec->headers[i];
        size_t nlen = (size_t)(strchr(h, ':') - h);
        const char *v = h + nlen + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        if (name_is(h, nlen, "keep-alive") || name_is(h, nlen, "proxy-connection") || name_is(h, nlen, "upgrade") ||
            (name_is(h, nlen, "te") && strcasecmp(v, "trailers") != 0))
            return knee_fail(err, errlen, KNEE_EINVAL, "header '%.*s' is connection-specific: HTTP/2 forbids it",
                             (int)nlen, h);
        if (name_is(h, nlen, "host")) {
            authority = v;
            alen = strlen(v);
            while (alen && (v[alen - 1] == ' ' || v[alen - 1] == '\t'))
                alen--;
        }
        if (name_is(h, nlen, "user-agent"))
            have_ua = true;
    }
    struct builder b = {0};
    add(&b, ":method", 7, method, strlen(method));
    add(&b, ":scheme", 7, spec->url->tls ? "https" : "http", spec->url->tls ? 5 : 4);
    add(&b, ":authority", 10, authority, alen);
    add(&b, ":path", 5, spec->url->target, strlen(spec->url->target));
    if (!have_ua) {
        static const char ua[] = "knee/" KNEE_VERSION;
        add(&b, "user-agent", 10, ua, sizeof ua - 1);
    }
    for (size_t i = 0; i < spec->nheaders; i++) {
        const char *h = spec->headers[i];
        size_t nlen = (size_t)(strchr(h, ':') - h);
        if (name_is(h, nlen, "host"))
            continue;
        const char *v = h + nlen + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vlen = strlen(v);
        while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
            vlen--;
        add(&b, h, nlen, v, vlen);
    }
    bool body_method = strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0;
    if (spec->body_len || body_method) {
        char cl[32];
        int n = snprintf(cl, sizeof cl, "%zu", spec->body_len);
        add(&b, "content-length", 14, cl, (size_t)n);
    }
    nghttp2_nv *nva = xcalloc(b.n, sizeof *nva);
    for (size_t i = 0; i < b.n; i++) {
        nva[i].name = (uint8_t *)b.p + b.f[i].name;
        nva[i].namelen = b.f[i].namelen;
        nva[i].value = (uint8_t *)b.p + b.f[i].value;
        nva[i].valuelen = b.f[i].valuelen;
        /* the storage lives as long as the request: nghttp2 need not copy it per stream */
        nva[i].flags = NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE;
    }
    out->nva = nva;
    out->nnv = b.n;
    out->storage = b.p;
    out->body = spec->body;
    out->body_len = spec->body_len;
    return 0;
}

void h2_request_release(struct h2_request *r)
{
    free(r->nva);
    free(r->storage);
    memset(r, 0, sizeof *r);
}
