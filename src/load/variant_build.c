/* The bytes of one request that varies: expanded field by field and serialised (HTTP/2, and the
 * checks before a run), or over HTTP/1.1 its serialised head as one template expanded into the
 * variant's reused buffer (no parse, no allocation per send). */
#include "core/err.h"
#include "http/client.h"
#include "load/variant_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ one request */

/* NUL-terminate b's bytes (not counted in len). */
static void buf_nul(struct wl_buf *b)
{
    if (b->len + 1 > b->cap) {
        b->cap = b->len + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    b->p[b->len] = '\0';
}

/* Expand v for request seq and serialise it: *h1 (and *h1_close when the engine wants one, *h2
 * when it may speak HTTP/2). 0, or KNEE_EINVAL with the reason (an expanded URL or header that
 * is not valid). */
int variant_build(const struct variant_source *s, const struct ventry *v, uint64_t seq, struct variant_bufs *b,
                  char **h1, size_t *h1_len, char **h1_close, size_t *h1_close_len, struct h2_request *h2,
                  bool *h2_built, char *why, size_t whylen)
{
    struct wl_value vals[256];
    size_t nvals = 0;
    if (s->feed) {
        uint64_t row = wl_pick(s->o.feed_order, wl_feed_rows(s->feed), s->o.seed, seq);
        nvals = wl_feed_columns(s->feed);
        if (nvals > sizeof vals / sizeof *vals)
            nvals = sizeof vals / sizeof *vals;
        for (size_t c = 0; c < nvals; c++)
            vals[c].s = wl_feed_cell(s->feed, (size_t)row, c, &vals[c].len);
    }
    nvals = vvars_values(s, vals, nvals); /* --capture's values after the columns (variant_vars.c) */
    struct wl_ctx ctx = {.seq = seq, .seed = s->o.seed, .values = vals, .nvalues = nvals};
    b->url.len = b->hdr.len = b->body.len = 0;
    if (wl_template_expand(v->url, &ctx, &b->url) != 0)
        return -ENOMEM;
    buf_nul(&b->url);
    if (b->hdr_cap < v->nhdr) {
        b->hdr_off = xrealloc(b->hdr_off, v->nhdr * sizeof *b->hdr_off);
        b->hdr_lines = xrealloc(b->hdr_lines, v->nhdr * sizeof *b->hdr_lines);
        b->hdr_cap = v->nhdr;
    }
    for (size_t i = 0; i < v->nhdr; i++) {
        b->hdr_off[i] = b->hdr.len;
        if (wl_template_expand(v->hdr[i], &ctx, &b->hdr) != 0)
            return -ENOMEM;
        buf_nul(&b->hdr);
        b->hdr.len++;
    }
    for (size_t i = 0; i < v->nhdr; i++)
        b->hdr_lines[i] = b->hdr.p + b->hdr_off[i];
    if (v->body && wl_template_expand(v->body, &ctx, &b->body) != 0)
        return -ENOMEM;
    struct url u;
    int r = url_parse(b->url.p, &u, why, whylen);
    if (r)
        return KNEE_EINVAL;
    struct http_request_spec spec = {
        .method = v->method,
        .url = &u,
        .headers = b->hdr_lines,
        .nheaders = v->nhdr,
        .body = v->body ? b->body.p : NULL,
        .body_len = v->body ? b->body.len : 0,
        .keepalive = s->keepalive,
    };
    r = http_client_build_request(&spec, h1, h1_len, why, whylen);
    if (!r && s->want_close) {
        spec.keepalive = false;
        r = http_client_build_request(&spec, h1_close, h1_close_len, why, whylen);
        spec.keepalive = true;
    }
    if (!r && s->h2_able) {
        spec.keepalive = true;
        r = h2_request_build(&spec, h2, why, whylen);
        *h2_built = r == 0;
    }
    url_release(&u);
    return r ? KNEE_EINVAL : 0;
}

void variant_drop_own(struct variant *v)
{
    free(v->own_h1);
    free(v->own_h1_close);
    v->own_h1 = v->own_h1_close = NULL;
    if (v->own_h2_built)
        h2_request_release(&v->own_h2);
    v->own_h2_built = false;
}

/* v's head serialised once with its placeholders in place (http/client's checks and order of
 * fields), the Content-Length line and the blank line left out, compiled as one template: for
 * keep-alive (k 0) and Connection: close (k 1). Over HTTP/1.1 only: HTTP/2 needs the fields
 * apart (build). 0 or KNEE_EINVAL with the reason. */
int variant_wire_compile(const struct variant_source *s, struct ventry *v, char *why, size_t whylen)
{
    struct url u;
    int r = url_parse(v->url_text, &u, why, whylen);
    for (int k = 0; k < 2 && !r; k++) {
        if (k == 1 && !s->want_close)
            break;
        struct http_request_spec spec = {
            .method = v->method,
            .url = &u,
            .headers = (const char *const *)v->hdr_text,
            .nheaders = v->nhdr,
            .keepalive = k == 0 && s->keepalive,
        };
        char *head = NULL;
        size_t len = 0;
        r = http_client_build_request(&spec, &head, &len, why, whylen);
        if (r)
            break;
        char *cl = strstr(head, "\r\nContent-Length: ");
        v->wire_cl = cl || v->body;
        if (cl) { /* ours (a user's is refused): the one line out, it is written per request */
            char *end = strstr(cl + 2, "\r\n");
            memmove(cl, end, len - (size_t)(end - head) + 1);
            len -= (size_t)(end - cl);
        }
        len -= 2; /* the blank line ending the head */
        r = wl_template_compile(head, len, &s->names, &v->wire[k], why, whylen);
        free(head);
    }
    url_release(&u);
    return r ? KNEE_EINVAL : 0;
}

/* Append the decimal n to b (no printf on the send path). */
static void buf_u64(struct wl_buf *b, uint64_t n)
{
    char d[24];
    int k = 0;
    do
        d[k++] = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    if (b->len + (size_t)k > b->cap) {
        b->cap = b->len + (size_t)k + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    while (k)
        b->p[b->len++] = d[--k];
}

static void buf_add(struct wl_buf *b, const char *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = b->len + n + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Request seq of row from its wire templates into v's buffers: the head, Content-Length, the
 * blank line, the body. */
static int fill_wire(const struct variant_source *s, const struct ventry *row, uint64_t seq, struct variant *v)
{
    struct wl_value vals[256];
    size_t nvals = 0;
    if (s->feed) {
        uint64_t r = wl_pick(s->o.feed_order, wl_feed_rows(s->feed), s->o.seed, seq);
        nvals = wl_feed_columns(s->feed);
        for (size_t c = 0; c < nvals; c++)
            vals[c].s = wl_feed_cell(s->feed, (size_t)r, c, &vals[c].len);
    }
    nvals = vvars_values(s, vals, nvals); /* --capture's values after the columns (variant_vars.c) */
    struct wl_ctx ctx = {.seq = seq, .seed = s->o.seed, .values = vals, .nvalues = nvals};
    struct wl_buf *body = &v->b.body, *out[2] = {&v->b.url, &v->b.hdr};
    body->len = 0;
    if (row->body && wl_template_expand(row->body, &ctx, body) != 0)
        return -ENOMEM;
    for (int k = 0; k < 2 && row->wire[k]; k++) {
        out[k]->len = 0;
        if (wl_template_expand(row->wire[k], &ctx, out[k]) != 0)
            return -ENOMEM;
        if (row->wire_cl) {
            buf_add(out[k], "Content-Length: ", 16);
            buf_u64(out[k], body->len);
            buf_add(out[k], "\r\n", 2);
        }
        buf_add(out[k], "\r\n", 2);
        buf_add(out[k], body->p ? body->p : "", body->len);
    }
    v->h1 = out[0]->p;
    v->h1_len = out[0]->len;
    v->h1_close = row->wire[1] ? out[1]->p : NULL;
    v->h1_close_len = row->wire[1] ? out[1]->len : 0;
    v->h2 = NULL;
    return 0;
}

/* Point v at what it sends: the row's shared bytes, or its own built now. */
int variant_fill(struct variant_source *s, const struct ventry *row, uint64_t seq, struct variant *v, char *why,
                 size_t whylen)
{
    v->entry = row->index;
    v->idempotent = row->idempotent;
    v->head = row->head;
    if (row->h1) {
        v->h1 = row->h1;
        v->h1_len = row->h1_len;
        v->h1_close = row->h1_close;
        v->h1_close_len = row->h1_close_len;
        v->h2 = row->h2_built ? &row->h2 : NULL;
        return 0;
    }
    if (row->wire[0])
        return fill_wire(s, row, seq, v);
    int r = variant_build(s, row, seq, &v->b, &v->own_h1, &v->h1_len, &v->own_h1_close, &v->h1_close_len, &v->own_h2,
                          &v->own_h2_built, why, whylen);
    v->h1 = v->own_h1;
    v->h1_close = v->own_h1_close;
    v->h2 = v->own_h2_built ? &v->own_h2 : NULL;
    return r;
}
