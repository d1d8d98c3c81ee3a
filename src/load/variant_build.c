/* The bytes of one request that varies: expanded field by field and serialised (HTTP/2, and the
 * checks before a run), or over HTTP/1.1 its serialised head as one template expanded into the
 * variant's reused buffer (no parse, no allocation per send), or, for a feed's small table,
 * every request rendered before the run and shared. */
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
    b->marks[0].id = b->marks[1].id = 0; /* url and hdr are this build's now */
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

void variant_bufs_release(struct variant *v)
{
    variant_drop_own(v);
    wl_buf_release(&v->b.url);
    wl_buf_release(&v->b.hdr);
    wl_buf_release(&v->b.body);
    wl_marks_release(&v->b.marks[0]);
    wl_marks_release(&v->b.marks[1]);
    free(v->b.hdr_off);
    free(v->b.hdr_lines);
    v->b.hdr_off = NULL;
    v->b.hdr_lines = NULL;
    v->b.hdr_cap = 0;
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

/* Append n bytes at p to b. */
static void buf_add(struct wl_buf *b, const char *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = b->len + n + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
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

/* The feed's columns v's wire and body use, into v->cols (the rest are never looked up). */
static void wire_columns(const struct variant_source *s, struct ventry *v)
{
    size_t n = s->feed ? wl_feed_columns(s->feed) : 0;
    v->cols = xcalloc(n ? n : 1, sizeof *v->cols);
    v->ncols = 0;
    for (size_t c = 0; c < n; c++)
        if (wl_template_uses(v->wire[0], c) || (v->body && wl_template_uses(v->body, c)))
            v->cols[v->ncols++] = (uint16_t)c;
}

/* The source of v's whole request over HTTP/1.1 when its body has no placeholder: head (its
 * Content-Length line left out, and its blank line), the Content-Length of the body, the blank
 * line and the body as written, into src. Concatenated sources compile to the concatenated
 * expansions: the head ends in a line break, so no placeholder straddles the join. */
static void whole_source(const struct ventry *v, const char *head, size_t len, size_t body_len, struct wl_buf *src)
{
    src->len = 0;
    buf_add(src, head, len);
    if (body_len || v->body_method) {
        buf_add(src, "Content-Length: ", 16);
        buf_u64(src, body_len);
        buf_add(src, "\r\n", 2);
    }
    buf_add(src, "\r\n", 2);
    if (v->body)
        buf_add(src, v->body_text, v->body_text_len);
}

/* v serialised once with its placeholders in place (http/client's checks and order of fields)
 * and compiled as templates: for keep-alive (k 0) and Connection: close (k 1). A body without
 * placeholders goes in whole (its length is known now); a body with them leaves the head
 * without Content-Length and its blank line, added per request. Over HTTP/1.1 only: HTTP/2
 * needs the fields apart (build). 0 or KNEE_EINVAL with the reason. */
int variant_wire_compile(const struct variant_source *s, struct ventry *v, char *why, size_t whylen)
{
    struct url u;
    int r = url_parse(v->url_text, &u, why, whylen);
    v->body_method = strcmp(v->method, "POST") == 0 || strcmp(v->method, "PUT") == 0 || strcmp(v->method, "PATCH") == 0;
    v->wire_whole = !v->body || wl_template_literal(v->body);
    struct wl_buf lit = {0}, src = {0};
    if (v->body && v->wire_whole) { /* its bytes ("{{{{" is "{{"), for their length */
        struct wl_ctx ctx = {0};
        if (wl_template_expand(v->body, &ctx, &lit) != 0 && !r)
            r = knee_fail(why, whylen, -ENOMEM, "out of memory");
    }
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
        if (cl) { /* ours (a user's is refused): the one line out, it is written per request */
            char *end = strstr(cl + 2, "\r\n");
            memmove(cl, end, len - (size_t)(end - head) + 1);
            len -= (size_t)(end - cl);
        }
        len -= 2; /* the blank line ending the head */
        if (v->wire_whole) {
            whole_source(v, head, len, lit.len, &src);
            r = wl_template_compile(src.p, src.len, &s->names, &v->wire[k], why, whylen);
        } else {
            r = wl_template_compile(head, len, &s->names, &v->wire[k], why, whylen);
        }
        free(head);
    }
    url_release(&u);
    wl_buf_release(&lit);
    wl_buf_release(&src);
    if (!r)
        wire_columns(s, v);
    for (int k = 0; k < 2 && !r; k++)
        v->wire_id[k] = v->wire[k] ? wl_template_id(v->wire[k]) : 0;
    return r ? KNEE_EINVAL : 0;
}

/* The feed's row request seq uses (wl_pick; sequential inline). */
static inline size_t feed_row(const struct variant_source *s, uint64_t seq)
{
    size_t n = wl_feed_rows(s->feed);
    return n > 1 && s->o.feed_order == WL_ORDER_SEQUENTIAL ? (size_t)(seq % n)
                                                           : (size_t)wl_pick(s->o.feed_order, n, s->o.seed, seq);
}

/* row's wire templates expanded under ctx into v's buffers: one expansion each (wire_whole), or
 * the body, then the head, its Content-Length, the blank line and the body. Inlined into its
 * callers, so a send's preparation is one call deep while the buffers hold the last request of
 * the row (the placeholders rewritten in place, wl_marks_rewrite). */
static inline __attribute__((always_inline)) int wire_expand(const struct ventry *row, const struct wl_ctx *ctx,
                                                             struct variant *v)
{
    struct wl_buf *body = &v->b.body, *out[2] = {&v->b.url, &v->b.hdr};
    if (row->wire_whole) {
        out[0]->len = 0;
        if (!wl_marks_rewrite(&v->b.marks[0], row->wire_id[0], ctx, out[0]) &&
            wl_template_expand_marked(row->wire[0], ctx, out[0], &v->b.marks[0]) != 0)
            return -ENOMEM;
        if (row->wire[1]) {
            out[1]->len = 0;
            if (!wl_marks_rewrite(&v->b.marks[1], row->wire_id[1], ctx, out[1]) &&
                wl_template_expand_marked(row->wire[1], ctx, out[1], &v->b.marks[1]) != 0)
                return -ENOMEM;
        }
    } else {
        body->len = 0;
        if (wl_template_expand(row->body, ctx, body) != 0)
            return -ENOMEM;
        for (int k = 0; k < 2 && row->wire[k]; k++) {
            out[k]->len = 0;
            if (wl_template_expand_marked(row->wire[k], ctx, out[k], &v->b.marks[k]) != 0)
                return -ENOMEM;
            if (body->len || row->body_method) {
                buf_add(out[k], "Content-Length: ", 16);
                buf_u64(out[k], body->len);
                buf_add(out[k], "\r\n", 2);
            }
            buf_add(out[k], "\r\n", 2);
            if (body->len)
                buf_add(out[k], body->p, body->len);
        }
    }
    v->entry = row->index;
    v->idempotent = row->idempotent;
    v->head = row->head;
    v->h1 = out[0]->p;
    v->h1_len = out[0]->len;
    v->h1_close = row->wire[1] ? out[1]->p : NULL;
    v->h1_close_len = row->wire[1] ? out[1]->len : 0;
    v->h2 = NULL;
    return 0;
}

/* fill_wire with the feed's cells and --capture's values: the values array (a few kB of stack)
 * only in this path, so a request without any keeps a small frame. */
static __attribute__((noinline)) int fill_wire_values(const struct variant_source *s, const struct ventry *row,
                                                      uint64_t seq, const struct wl_dec *dec, struct variant *v)
{
    struct wl_value vals[VARIANT_MAX_COLUMNS];
    size_t nvals = 0;
    if (row->ncols) { /* only the cells the request uses */
        size_t r = feed_row(s, seq);
        for (size_t i = 0; i < row->ncols; i++) {
            size_t c = row->cols[i];
            vals[c].s = wl_feed_cell(s->feed, r, c, &vals[c].len);
        }
    }
    if (s->feed)
        nvals = wl_feed_columns(s->feed); /* --capture's values are numbered after every column */
    nvals = vvars_values(s, vals, nvals); /* --capture's values after the columns (variant_vars.c) */
    struct wl_ctx ctx = {.seq = seq, .seed = s->o.seed, .values = vals, .nvalues = nvals, .seq_dec = dec};
    return wire_expand(row, &ctx, v);
}

/* Request seq of row from its wire (variant_fill_wire), inlined into variant_prep_wire. */
static inline __attribute__((always_inline)) int fill_wire(const struct variant_source *s, const struct ventry *row,
                                                           uint64_t seq, const struct wl_dec *dec, struct variant *v)
{
    struct wl_ctx ctx = {.seq = seq, .seed = s->o.seed, .seq_dec = dec};
    if (s->spans) { /* the row's cells as they are, no gathering */
        ctx.values = s->spans + feed_row(s, seq) * s->spans_cols;
        ctx.nvalues = s->spans_cols;
    } else if (row->ncols || s->vars.values) {
        return fill_wire_values(s, row, seq, dec, v);
    }
    return wire_expand(row, &ctx, v);
}

void variant_spans(struct variant_source *s)
{
    free(s->spans);
    s->spans = NULL;
    s->spans_cols = 0;
    /* --capture's values come after the cells (gathered); HTTP/2 builds field by field */
    if (!s->feed || s->o.nvars || s->rend || s->h2_able)
        return;
    size_t rows = wl_feed_rows(s->feed), cols = wl_feed_columns(s->feed);
    if (cols == 0 || rows > VARIANT_SPANS_BYTES / sizeof *s->spans / cols)
        return;
    s->spans = xcalloc(rows * cols, sizeof *s->spans);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            s->spans[r * cols + c].s = wl_feed_cell(s->feed, r, c, &s->spans[r * cols + c].len);
    s->spans_cols = cols;
}

int variant_fill_wire(const struct variant_source *s, const struct ventry *row, uint64_t seq, const struct wl_dec *dec,
                      struct variant *v)
{
    return fill_wire(s, row, seq, dec, v);
}

bool variant_prep_wire(struct variant_source *s, uint64_t seq, const struct wl_dec *dec, struct variant *v)
{
    int r = fill_wire(s, table_row(s, seq), seq, dec, v);
    return r == 0 || variant_prep_failed(s, r, "");
}

/* ------------------------------------------------------------------ rendered before the run */

void variant_rendered_free(struct variant_source *s)
{
    free(s->rend);
    free(s->rend_off);
    s->rend = NULL;
    s->rend_off = NULL;
    s->rend_rows = 0;
}

/* Every (row, feed row) request of s's table into s->rend: 0, or 1 when it is not worth it or
 * too large (s keeps none; the wire is expanded per request). */
static int render_all(struct variant_source *s, size_t feed_rows)
{
    size_t n = s->nrows * feed_rows, ways = s->want_close ? 2 : 1, used = 0, cap = 0;
    if (n > VARIANT_RENDER_MAX)
        return 1;
    s->rend_off = xcalloc(n * ways + 1, sizeof *s->rend_off);
    struct variant v = {0};
    struct wl_value vals[VARIANT_MAX_COLUMNS];
    size_t ncols = wl_feed_columns(s->feed);
    int r = 0;
    for (size_t i = 0; i < s->nrows && !r; i++) {
        for (size_t f = 0; f < feed_rows && !r; f++) {
            for (size_t c = 0; c < ncols; c++)
                vals[c].s = wl_feed_cell(s->feed, f, c, &vals[c].len);
            struct wl_ctx ctx = {.seed = s->o.seed, .values = vals, .nvalues = ncols};
            if ((r = wire_expand(&s->rows[i], &ctx, &v)) != 0)
                break;
            for (size_t k = 0; k < ways; k++) {
                const char *p = k ? v.h1_close : v.h1;
                size_t len = k ? v.h1_close_len : v.h1_len;
                if (used + len > VARIANT_RENDER_BYTES) {
                    r = 1;
                    break;
                }
                if (used + len > cap) {
                    cap = (used + len) * 2 < VARIANT_RENDER_BYTES ? (used + len) * 2 : VARIANT_RENDER_BYTES;
                    s->rend = xrealloc(s->rend, cap);
                }
                memcpy(s->rend + used, p, len);
                s->rend_off[(i * feed_rows + f) * ways + k] = used;
                used += len;
            }
        }
    }
    s->rend_off[n * ways] = used;
    variant_bufs_release(&v);
    if (r) {
        variant_rendered_free(s);
        return 1;
    }
    s->rend_rows = feed_rows;
    s->rend_ways = ways;
    return 0;
}

/* s->prep of a rendered table: request seq's bytes, found by its row and its feed row. */
static bool prep_rendered(struct variant_source *s, uint64_t seq, const struct wl_dec *dec, struct variant *v)
{
    (void)dec;
    const struct ventry *row = table_row(s, seq);
    size_t i = ((size_t)(row - s->rows) * s->rend_rows + feed_row(s, seq)) * s->rend_ways;
    const size_t *off = s->rend_off + i;
    v->entry = row->index;
    v->idempotent = row->idempotent;
    v->head = row->head;
    v->h1 = s->rend + off[0];
    v->h1_len = off[1] - off[0];
    v->h1_close = s->rend_ways > 1 ? s->rend + off[1] : NULL;
    v->h1_close_len = s->rend_ways > 1 ? off[2] - off[1] : 0;
    v->h2 = NULL;
    return true;
}

bool variant_render(struct variant_source *s)
{
    variant_rendered_free(s);
    /* only the feed's row tells one request from another: no {{seq}}, {{rand}} or {{uuid}};
     * --capture's values are bound before the run but may be bound again (knee run --repeat) */
    if (!s->table || !s->feed || s->o.nvars || s->h2_able || s->nrows == 0)
        return false;
    for (size_t i = 0; i < s->nrows; i++) {
        const struct ventry *row = &s->rows[i];
        if (!row->wire[0])
            return false;
        for (int k = 0; k < 2 && row->wire[k]; k++)
            if (wl_template_uses_seq(row->wire[k]) || wl_template_uses_draw(row->wire[k]))
                return false;
        if (row->body && (wl_template_uses_seq(row->body) || wl_template_uses_draw(row->body)))
            return false;
    }
    if (render_all(s, wl_feed_rows(s->feed)) != 0)
        return false;
    s->prep = prep_rendered;
    return true;
}

/* Point v at what it sends: the row's shared bytes, or its own built now. */
int variant_fill(struct variant_source *s, const struct ventry *row, uint64_t seq, struct variant *v, char *why,
                 size_t whylen)
{
    v->entry = row->index;
    v->idempotent = row->idempotent;
    v->head = row->head;
    if (row->h1) {
        variant_share(row, v);
        return 0;
    }
    if (row->wire[0])
        return variant_fill_wire(s, row, seq, NULL, v);
    int r = variant_build(s, row, seq, &v->b, &v->own_h1, &v->h1_len, &v->own_h1_close, &v->h1_close_len, &v->own_h2,
                          &v->own_h2_built, why, whylen);
    v->h1 = v->own_h1;
    v->h1_close = v->own_h1_close;
    v->h2 = v->own_h2_built ? &v->own_h2 : NULL;
    return r;
}

/* ------------------------------------------------------------------ a stream's lean entries */

void vshape_release(struct vshape *sh)
{
    free(sh->method);
    for (size_t i = 0; i < sh->nhdr; i++)
        free(sh->hdr[i]);
    free(sh->hdr);
    free(sh->body);
    free(sh->rest[0]);
    free(sh->rest[1]);
    memset(sh, 0, sizeof *sh);
}

/* e's method, headers and body are the shape's. */
static bool shape_same(const struct vshape *sh, const struct wl_entry *e, const char *method)
{
    if (!sh->valid || strcmp(sh->method, method) != 0 || sh->nhdr != e->nheaders || !sh->body != !e->body)
        return false;
    if (e->body && (sh->body_len != e->body_len || memcmp(sh->body, e->body, e->body_len) != 0))
        return false;
    for (size_t i = 0; i < e->nheaders; i++)
        if (strcmp(sh->hdr[i], e->headers[i]) != 0)
            return false;
    return true;
}

/* The shape of e: serialised by http/client with an empty target (its checks, its order of
 * fields), what follows "METHOD " kept. */
static int shape_build(struct variant_source *s, const struct wl_entry *e, const char *method, char *why, size_t whylen)
{
    struct vshape *sh = &s->shape;
    vshape_release(sh);
    size_t n = e->nheaders + s->o.nheaders;
    const char **hdr = xcalloc(n ? n : 1, sizeof *hdr);
    for (size_t i = 0; i < n; i++)
        hdr[i] = i < e->nheaders ? e->headers[i] : s->o.headers[i - e->nheaders];
    char empty[1] = "";
    struct url u = {.authority = s->origin.authority, .target = empty};
    int r = 0;
    for (int k = 0; k < 2 && !r; k++) {
        if (k == 1 && !s->want_close)
            break;
        struct http_request_spec spec = {
            .method = method,
            .url = &u,
            .headers = hdr,
            .nheaders = n,
            .body = e->body,
            .body_len = e->body ? e->body_len : 0,
            .keepalive = k == 0 && s->keepalive,
        };
        char *req = NULL;
        size_t len = 0;
        r = http_client_build_request(&spec, &req, &len, why, whylen);
        if (r)
            break;
        size_t skip = strlen(method) + 1; /* "METHOD " */
        memmove(req, req + skip, len - skip + 1);
        sh->rest[k] = req;
        sh->rest_len[k] = len - skip;
    }
    free(hdr);
    if (r) {
        vshape_release(sh);
        return KNEE_EINVAL;
    }
    sh->method = xstrdup(method);
    sh->method_len = strlen(method);
    sh->nhdr = e->nheaders;
    sh->hdr = xcalloc(e->nheaders ? e->nheaders : 1, sizeof *sh->hdr);
    for (size_t i = 0; i < e->nheaders; i++)
        sh->hdr[i] = xstrdup(e->headers[i]);
    if (e->body) {
        sh->body = xmalloc(e->body_len ? e->body_len : 1);
        memcpy(sh->body, e->body, e->body_len);
        sh->body_len = e->body_len;
    }
    sh->idempotent = http_method_idempotent(method);
    sh->head = strcmp(method, "HEAD") == 0;
    sh->valid = true;
    return 0;
}

/* The request target url_parse would give for rest (what follows the origin), into t; false
 * when it would refuse it (the caller's full path says why). */
static bool lean_target(const char *rest, size_t len, struct wl_buf *t)
{
    if (*rest && *rest != '/' && *rest != '?' && *rest != '#')
        return false; /* the authority goes on: another origin */
    /* eight bytes at a time while none is a space or below, '#', DEL or above (the "has a byte
     * less than" and "has a zero byte" tests); from a word with one, byte by byte */
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    size_t n = 0;
    for (; n + 8 <= len; n += 8) {
        uint64_t x, h, d;
        memcpy(&x, rest + n, 8);
        h = x ^ (ones * '#');
        d = x ^ (ones * 0x7f);
        if ((((x - ones * 0x21) & ~x) | ((h - ones) & ~h) | ((d - ones) & ~d) | x) & highs)
            break;
    }
    for (; n < len && rest[n] != '#'; n++) /* the fragment is never sent */
        if ((unsigned char)rest[n] <= 0x20 || (unsigned char)rest[n] >= 0x7f)
            return false;
    t->len = 0;
    if (n == 0 || *rest == '?') /* an empty path is "/" (RFC 9112 §3.2.1) */
        buf_add(t, "/", 1);
    buf_add(t, rest, n);
    return true;
}

int variant_lean(struct variant_source *s, const struct wl_entry *e, char *why, size_t whylen)
{
    /* a '{' is rare in a URL or a header: looked for first, "{{" only then */
    if (!s->opt_literal || (strchr(e->url, '{') && strstr(e->url, "{{")) ||
        (e->body && memmem(e->body, e->body_len, "{{", 2)))
        return 0;
    for (size_t i = 0; i < e->nheaders; i++)
        if (strchr(e->headers[i], '{') && strstr(e->headers[i], "{{"))
            return 0;
    size_t ulen = strlen(e->url);
    if (ulen > URL_MAX_LEN || ulen < s->origin_n || memcmp(e->url, s->first_url, s->origin_n) != 0 ||
        !lean_target(e->url + s->origin_n, ulen - s->origin_n, &s->target))
        return 0;
    const char *method = e->method ? e->method : "GET";
    if (!shape_same(&s->shape, e, method) && shape_build(s, e, method, why, whylen) != 0)
        return KNEE_EINVAL;
    return 1;
}

void variant_fill_lean(const struct variant_source *s, struct variant *v)
{
    const struct vshape *sh = &s->shape;
    struct wl_buf *out[2] = {&v->b.url, &v->b.hdr};
    for (int k = 0; k < 2 && sh->rest[k]; k++) {
        struct wl_buf *b = out[k];
        size_t need = sh->method_len + 1 + s->target.len + sh->rest_len[k];
        if (need > b->cap) {
            b->cap = need + 64;
            b->p = xrealloc(b->p, b->cap);
        }
        memcpy(b->p, sh->method, sh->method_len);
        b->p[sh->method_len] = ' ';
        memcpy(b->p + sh->method_len + 1, s->target.p, s->target.len);
        memcpy(b->p + sh->method_len + 1 + s->target.len, sh->rest[k], sh->rest_len[k]);
        b->len = need;
        v->b.marks[k].id = 0; /* these bytes are not a template's */
    }
    v->entry = s->cur.index;
    v->idempotent = sh->idempotent;
    v->head = sh->head;
    v->h1 = out[0]->p;
    v->h1_len = out[0]->len;
    v->h1_close = sh->rest[1] ? out[1]->p : NULL;
    v->h1_close_len = sh->rest[1] ? out[1]->len : 0;
    v->h2 = NULL;
}
