/* The request sources of load/variant.h: a targets file or a single target with placeholders,
 * opened and checked before the run (the source), and each load thread's ring of requests
 * prepared ahead of their sends (the rings: load/worker.h, "variants"). The send itself takes a
 * prepared request from its thread's ring; the ring is topped up after every loop callback
 * (worker.c, settle_after), so parsing, expansion and serialisation never happen at the send
 * instant unless the ring ran dry (counted: run_counts has no field for it yet; a dry ring only
 * costs the send's lateness, which the lag histogram shows). */
#include "load/variant.h"

#include "core/err.h"
#include "http/client.h"
#include "load/worker.h"
#include "net/url.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One entry compiled: its templates (an entry without placeholders also has them, literal). */
struct ventry {
    char *method;
    struct wl_template *url;
    struct wl_template **hdr; /* the entry's headers, then the -H lines */
    size_t nhdr;
    struct wl_template *body; /* NULL: none */
    bool literal;             /* no placeholder anywhere: built once (table) */
    bool idempotent, head;
    uint64_t index, line;
    uint64_t repeat; /* sequential order: sends of it per cycle (its weight) */
    double weight;
    /* table, literal: the request built once (variant_prepare) */
    char *h1, *h1_close;
    size_t h1_len, h1_close_len;
    struct h2_request h2;
    bool h2_built;
    struct wl_buf keep_body; /* the body h2 points into */
    /* with placeholders, over HTTP/1.1: the serialised head as a template (wire_compile), so a
     * request is the head and body expanded, nothing parsed or allocated per send */
    char *url_text;
    char **hdr_text;
    struct wl_template *wire[2]; /* the head without Content-Length and its end: keep-alive, close */
    bool wire_cl;                /* a Content-Length line is due (a body, or POST, PUT, PATCH) */
};

struct variant_source {
    struct variant_opts o;
    char feed_name[300]; /* "--feed users.csv", for messages */
    char *first_url;     /* the first entry's URL, as written */
    char *first_method;
    struct url origin; /* of the first entry */
    struct wl_feed *feed;
    const char **cols;
    size_t *bad_url, *bad_head; /* per column: the first row whose value cannot go into a URL, a header (or SIZE_MAX) */
    struct wl_names names;
    uint64_t entries; /* in the file (0: a pipe) */
    /* a table */
    bool table;
    struct ventry *rows;
    size_t nrows;
    double *cum; /* cumulative weights (random) or repeats (sequential), rows of them */
    double total;
    /* a stream: one reader under mu */
    pthread_mutex_t mu;
    struct wl_reader *rd;
    bool seekable;
    struct ventry cur; /* the entry being sent (repeat times) */
    bool have_cur;
    bool restart; /* a file: the next entry is the first (read_at 0), not the reader's next */
    uint64_t cur_left;
    /* the engine's settings, from variant_prepare */
    bool keepalive, want_close, h2_able, prepared;
    /* the end of a stream and why a run stopped on an entry */
    atomic_bool ended;
    atomic_bool failed;
    char error[2048];
};

static int wire_compile(const struct variant_source *s, struct ventry *v, char *why, size_t whylen);

/* ------------------------------------------------------------------ helpers */

/* splitmix64: a uniform double in [0, 1) from (seed, seq) for the weighted random pick. */
static double hash01(uint64_t seed, uint64_t seq)
{
    uint64_t z = seed ^ (seq * 0x9e3779b97f4a7c15ULL) ^ 0xa0761d6478bd642fULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static void ventry_release(struct ventry *v)
{
    free(v->method);
    wl_template_free(v->url);
    for (size_t i = 0; i < v->nhdr; i++)
        wl_template_free(v->hdr[i]);
    free(v->hdr);
    wl_template_free(v->body);
    free(v->h1);
    free(v->h1_close);
    if (v->h2_built)
        h2_request_release(&v->h2);
    wl_buf_release(&v->keep_body);
    free(v->url_text);
    for (size_t i = 0; v->hdr_text && i < v->nhdr; i++)
        free(v->hdr_text[i]);
    free(v->hdr_text);
    wl_template_free(v->wire[0]);
    wl_template_free(v->wire[1]);
    memset(v, 0, sizeof *v);
}

/* The scheme and authority of a URL as written ("http://a:8080"): its length, or 0 when a
 * placeholder sits in it (the origin is the connections': it must be fixed). */
static size_t origin_len(const char *url)
{
    const char *p = strstr(url, "://");
    if (!p)
        return 0;
    p += 3;
    size_t n = strcspn(p, "/?#");
    const char *brace = strstr(url, "{{");
    if (brace && brace < p + n)
        return 0;
    return (size_t)(p + n - url);
}

/* url's origin is the first entry's (scheme, host, port). */
static int check_origin(const struct variant_source *s, const char *url, char *why, size_t whylen)
{
    size_t n = origin_len(url);
    if (!n)
        return knee_fail(why, whylen, KNEE_EINVAL, "%s: the scheme, host and port cannot hold a placeholder", url);
    char buf[URL_MAX_LEN];
    if (n >= sizeof buf)
        return knee_fail(why, whylen, KNEE_EINVAL, "URL longer than %d bytes", URL_MAX_LEN);
    memcpy(buf, url, n);
    buf[n] = '\0';
    struct url u;
    char e[256];
    if (url_parse(buf, &u, e, sizeof e) != 0)
        return knee_fail(why, whylen, KNEE_EINVAL, "%s: %s", url, e);
    bool same = u.tls == s->origin.tls && u.port == s->origin.port && strcasecmp(u.host, s->origin.host) == 0;
    url_release(&u);
    if (!same)
        return knee_fail(why, whylen, KNEE_EINVAL,
                         "%s: every entry must go to the first entry's origin %s://%s (one run, one origin: run "
                         "one knee per origin)",
                         url, s->origin.tls ? "https" : "http", s->origin.authority);
    return 0;
}

/* Compile one entry (e: as read, or a single target's fields) into v. where: "FILE:LINE" or the
 * flag, for messages. */
static int ventry_compile(const struct variant_source *s, const struct wl_entry *e, struct ventry *v, const char *where,
                          char *err, size_t errlen)
{
    char why[512];
    memset(v, 0, sizeof *v);
    v->method = xstrdup(e->method ? e->method : "GET");
    v->index = e->index;
    v->line = e->line;
    v->weight = e->weight > 0 ? e->weight : 1;
    v->idempotent = http_method_idempotent(v->method);
    v->head = strcmp(v->method, "HEAD") == 0;
    v->url_text = xstrdup(e->url);
    int r = wl_template_compile(e->url, strlen(e->url), &s->names, &v->url, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: URL: %s", where, why);
    if (s->first_url && check_origin(s, e->url, why, sizeof why) != 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: %s", where, why);
    v->nhdr = e->nheaders + s->o.nheaders;
    v->hdr = xcalloc(v->nhdr ? v->nhdr : 1, sizeof *v->hdr);
    v->hdr_text = xcalloc(v->nhdr ? v->nhdr : 1, sizeof *v->hdr_text);
    for (size_t i = 0; i < v->nhdr; i++) {
        const char *h = i < e->nheaders ? e->headers[i] : s->o.headers[i - e->nheaders];
        v->hdr_text[i] = xstrdup(h);
        r = wl_template_compile(h, strlen(h), &s->names, &v->hdr[i], why, sizeof why);
        if (r)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s: header \"%s\": %s", where, h, why);
    }
    if (e->body) {
        r = wl_template_compile(e->body, e->body_len, &s->names, &v->body, why, sizeof why);
        if (r)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s: body: %s", where, why);
    }
    for (size_t c = 0; c < s->names.n && s->feed; c++) {
        bool in_head = false;
        for (size_t i = 0; i < v->nhdr; i++)
            in_head |= wl_template_uses(v->hdr[i], c);
        if (wl_template_uses(v->url, c) && s->bad_url[c] != SIZE_MAX)
            return knee_fail(
                err, errlen, KNEE_EINVAL,
                "%s: {{%s}} in the URL: row %zu of %s holds a space, '#' or a control byte (percent-encode "
                "it in the feed)",
                where, s->cols[c], s->bad_url[c] + 1, s->o.feed_path);
        if (in_head && s->bad_head[c] != SIZE_MAX)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s: {{%s}} in a header: row %zu of %s holds a control byte",
                             where, s->cols[c], s->bad_head[c] + 1, s->o.feed_path);
    }
    v->literal = wl_template_literal(v->url) && (!v->body || wl_template_literal(v->body));
    for (size_t i = 0; i < v->nhdr; i++)
        v->literal &= wl_template_literal(v->hdr[i]);
    return 0;
}

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
static int build(const struct variant_source *s, const struct ventry *v, uint64_t seq, struct variant_bufs *b,
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

/* ------------------------------------------------------------------ the source */

#define VARIANT_MAX_COLUMNS 256

static int open_feed(struct variant_source *s, char *err, size_t errlen)
{
    static const char *const none[1] = {NULL};
    s->names = (struct wl_names){.names = none, .n = 0, .source = "no --feed"};
    if (!s->o.feed_path)
        return 0;
    char why[512];
    if (wl_feed_load(&s->feed, s->o.feed_path, why, sizeof why) != 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--feed: %s", why);
    size_t n = wl_feed_columns(s->feed);
    if (n > VARIANT_MAX_COLUMNS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--feed %s: %zu columns (at most %d)", s->o.feed_path, n,
                         VARIANT_MAX_COLUMNS);
    s->cols = xcalloc(n ? n : 1, sizeof *s->cols);
    s->bad_url = xcalloc(n ? n : 1, sizeof *s->bad_url);
    s->bad_head = xcalloc(n ? n : 1, sizeof *s->bad_head);
    for (size_t i = 0; i < n; i++) {
        s->cols[i] = wl_feed_column(s->feed, i);
        s->bad_url[i] = s->bad_head[i] = SIZE_MAX;
        /* once per value, so a send never checks: a space or a control byte cannot go into a
         * request line, a line break or NUL not into a header */
        for (size_t row = 0; row < wl_feed_rows(s->feed); row++) {
            size_t len;
            const unsigned char *p = (const unsigned char *)wl_feed_cell(s->feed, row, i, &len);
            for (size_t k = 0; k < len; k++) {
                if ((p[k] <= 0x20 || p[k] == 0x7f || p[k] == '#') && s->bad_url[i] == SIZE_MAX)
                    s->bad_url[i] = row;
                if (((p[k] < 0x20 && p[k] != '\t') || p[k] == 0x7f) && s->bad_head[i] == SIZE_MAX)
                    s->bad_head[i] = row;
            }
        }
    }
    snprintf(s->feed_name, sizeof s->feed_name, "--feed %s", s->o.feed_path);
    s->names = (struct wl_names){.names = s->cols, .n = n, .source = s->feed_name};
    return 0;
}

/* The first entry fixes the origin of every connection. */
static int set_origin(struct variant_source *s, const struct wl_entry *e, const char *where, char *err, size_t errlen)
{
    char why[256];
    size_t n = origin_len(e->url);
    if (!n)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "%s: %s: an http:// or https:// URL without a placeholder in its "
                         "scheme, host or port",
                         where, e->url);
    char buf[URL_MAX_LEN];
    if (n >= sizeof buf)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: URL longer than %d bytes", where, URL_MAX_LEN);
    memcpy(buf, e->url, n);
    buf[n] = '\0';
    if (url_parse(buf, &s->origin, why, sizeof why) != 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: %s: %s", where, e->url, why);
    s->first_url = xstrdup(e->url);
    s->first_method = xstrdup(e->method ? e->method : "GET");
    return 0;
}

/* Check one compiled entry the way a send will build it: expanded for request 0 (row 0 of the
 * feed), serialised with the engine's defaults. */
static int check_entry(struct variant_source *s, const struct ventry *v, const char *where, char *err, size_t errlen)
{
    struct variant_bufs b = {0};
    char *h1 = NULL, *h1c = NULL;
    size_t n1 = 0, n2 = 0;
    struct h2_request h2;
    bool h2b = false;
    char why[512] = "";
    bool kept[3] = {s->keepalive, s->want_close, s->h2_able};
    s->keepalive = true;
    s->want_close = false;
    s->h2_able = true;
    int r = build(s, v, 0, &b, &h1, &n1, &h1c, &n2, &h2, &h2b, why, sizeof why);
    s->keepalive = kept[0];
    s->want_close = kept[1];
    s->h2_able = kept[2];
    free(h1);
    free(h1c);
    if (h2b)
        h2_request_release(&h2);
    wl_buf_release(&b.url);
    wl_buf_release(&b.hdr);
    wl_buf_release(&b.body);
    free(b.hdr_off);
    free(b.hdr_lines);
    if (r)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: %s", where, why[0] ? why : "out of memory");
    return 0;
}

static void where_of(const struct variant_source *s, const struct wl_entry *e, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%llu", s->o.targets_path, (unsigned long long)e->line);
}

/* Sequential order sends an entry `weight` times per cycle: a whole number. */
static int entry_repeat(const struct variant_source *s, const struct wl_entry *e, uint64_t *out, char *err,
                        size_t errlen)
{
    double w = e->weight > 0 ? e->weight : 1;
    if (s->o.order == WL_ORDER_SEQUENTIAL && (w != (double)(uint64_t)w || w > 1e6)) {
        char where[300];
        where_of(s, e, where, sizeof where);
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "%s: \"weight\" %g: with --targets-order sequential a weight is a whole number of sends per "
                         "cycle (1..1000000); --targets-order random takes any weight > 0",
                         where, w);
    }
    *out = (uint64_t)w;
    return 0;
}

/* The entry belongs to this source: every entry, or those named o.group. */
static bool in_group(const struct variant_source *s, const struct wl_entry *e)
{
    return !s->o.group || (e->name && strcmp(e->name, s->o.group) == 0);
}

/* Read the whole file once: every entry checked; a small file kept as a table. */
static int scan_file(struct variant_source *s, char *err, size_t errlen)
{
    char why[1024], where[300];
    struct wl_entry e;
    size_t cap = 0;
    int r;
    while ((r = wl_reader_next(s->rd, &e, why, sizeof why)) == 0) {
        if (!in_group(s, &e))
            continue;
        where_of(s, &e, where, sizeof where);
        if (!s->first_url && (r = set_origin(s, &e, where, err, errlen)) != 0)
            return r;
        uint64_t rep;
        if ((r = entry_repeat(s, &e, &rep, err, errlen)) != 0)
            return r;
        struct ventry v;
        r = ventry_compile(s, &e, &v, where, err, errlen);
        if (!r)
            r = check_entry(s, &v, where, err, errlen);
        if (r) {
            ventry_release(&v);
            return r;
        }
        v.repeat = rep;
        s->entries++;
        if (s->table && s->nrows < VARIANT_TABLE_MAX) {
            if (s->nrows == cap) {
                cap = cap ? cap * 2 : 64;
                s->rows = xrealloc(s->rows, cap * sizeof *s->rows);
            }
            s->rows[s->nrows++] = v;
        } else {
            ventry_release(&v);
            if (s->table) { /* too many for a table: the file is streamed */
                for (size_t i = 0; i < s->nrows; i++)
                    ventry_release(&s->rows[i]);
                free(s->rows);
                s->rows = NULL;
                s->nrows = 0;
                s->table = false;
            }
        }
    }
    if (r != WL_END)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s", why);
    if (s->entries == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--targets %s: no entry in the file", s->o.targets_path);
    return 0;
}

static void table_weights(struct variant_source *s)
{
    s->cum = xcalloc(s->nrows, sizeof *s->cum);
    double acc = 0;
    for (size_t i = 0; i < s->nrows; i++) {
        acc += s->o.order == WL_ORDER_SEQUENTIAL ? (double)s->rows[i].repeat : s->rows[i].weight;
        s->cum[i] = acc;
    }
    s->total = acc;
}

static int open_targets(struct variant_source *s, char *err, size_t errlen)
{
    char why[1024];
    if (wl_reader_open(&s->rd, s->o.targets_path, s->o.format, why, sizeof why) != 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--targets: %s", why);
    s->seekable = wl_reader_seekable(s->rd);
    if (!s->seekable) {
        if (s->o.order != WL_ORDER_SEQUENTIAL)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--targets-order random needs a file (a pipe is read once, in order)");
        /* a pipe: its first entry now (the origin), the rest as the run goes */
        struct wl_entry e;
        char where[300];
        int r = wl_reader_next(s->rd, &e, why, sizeof why);
        if (r == WL_END)
            return knee_fail(err, errlen, KNEE_EINVAL, "--targets %s: no entry in the input", s->o.targets_path);
        if (r)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s", why);
        where_of(s, &e, where, sizeof where);
        if ((r = set_origin(s, &e, where, err, errlen)) != 0 || (r = entry_repeat(s, &e, &s->cur_left, err, errlen)))
            return r;
        if ((r = ventry_compile(s, &e, &s->cur, where, err, errlen)) != 0 ||
            (r = check_entry(s, &s->cur, where, err, errlen)) != 0)
            return r;
        s->have_cur = true;
        return 0;
    }
    s->table = true;
    int r = scan_file(s, err, errlen);
    if (r)
        return r;
    if (!s->table && s->o.order != WL_ORDER_SEQUENTIAL)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--targets-order random: %s has %llu entries; random order holds at most %u (use "
                         "sequential, or shuffle the file)",
                         s->o.targets_path, (unsigned long long)s->entries, VARIANT_TABLE_MAX);
    if (s->table)
        table_weights(s);
    s->restart = true; /* a streamed file starts again from its first entry */
    return 0;
}

/* A target name as the CLI allows it (cli/run_targets.c parse_target): no space, control
 * byte, '.', ',', '=' or quote. */
static bool name_ok(const char *n)
{
    if (!*n || strlen(n) > 64)
        return false;
    for (const char *p = n; *p; p++)
        if ((unsigned char)*p < 0x21 || *p == '.' || *p == ',' || *p == '=' || *p == '"' || *p == 0x7f)
            return false;
    return true;
}

int variant_names(const struct variant_opts *o, struct variant_group **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    struct wl_reader *rd;
    char why[1024];
    if (wl_reader_open(&rd, o->targets_path, o->format, why, sizeof why) != 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--targets: %s", why);
    if (!wl_reader_seekable(rd)) { /* a pipe is read once, by the run: its names are not known first */
        wl_reader_close(rd);
        return 0;
    }
    struct variant_group *g = NULL;
    size_t ng = 0;
    uint64_t unnamed_line = 0, named_line = 0;
    struct wl_entry e;
    int r, rc = 0;
    while (!rc && (r = wl_reader_next(rd, &e, why, sizeof why)) == 0) {
        double w = e.weight > 0 ? e.weight : 1;
        if (!e.name) {
            unnamed_line = unnamed_line ? unnamed_line : e.line;
            continue;
        }
        named_line = named_line ? named_line : e.line;
        size_t k = 0;
        while (k < ng && strcmp(g[k].name, e.name) != 0)
            k++;
        if (k == ng) {
            if (!name_ok(e.name)) {
                rc = knee_fail(err, errlen, KNEE_EINVAL,
                               "%s:%llu: \"name\" \"%s\": a name is a target's: at most 64 characters, no space, "
                               "'.', ',', '=' or quote",
                               o->targets_path, (unsigned long long)e.line, e.name);
                break;
            }
            if (ng == VARIANT_MAX_GROUPS) {
                rc = knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: more than %d names (each is a target)",
                               o->targets_path, (unsigned long long)e.line, VARIANT_MAX_GROUPS);
                break;
            }
            g = xrealloc(g, (ng + 1) * sizeof *g);
            g[ng].name = xstrdup(e.name);
            g[ng].weight = 0;
            ng++;
        }
        g[k].weight += w;
    }
    wl_reader_close(rd);
    if (!rc && r != WL_END)
        rc = knee_fail(err, errlen, KNEE_EINVAL, "%s", why);
    if (!rc && named_line && unnamed_line)
        rc = knee_fail(err, errlen, KNEE_EINVAL,
                       "%s:%llu: an entry without a \"name\" in a file that names its entries (line %llu): name "
                       "every entry or none",
                       o->targets_path, (unsigned long long)unnamed_line, (unsigned long long)named_line);
    if (rc) {
        variant_groups_free(g, ng);
        return rc;
    }
    *out = g;
    *n = ng;
    return 0;
}

void variant_groups_free(struct variant_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(g[i].name);
    free(g);
}

/* A single target (its URL, -H and --body) with placeholders: a table of one entry. */
static int open_single(struct variant_source *s, char *err, size_t errlen)
{
    struct wl_entry e = {
        .index = 0,
        .line = 1,
        .method = s->o.method ? s->o.method : "GET",
        .url = s->o.url,
        .body = s->o.body,
        .body_len = s->o.body_len,
        .weight = 1,
    };
    struct variant_opts o = s->o;
    s->o.targets_path = "the target";
    int r = set_origin(s, &e, "the target URL", err, errlen);
    if (r)
        return r;
    s->rows = xcalloc(1, sizeof *s->rows);
    r = ventry_compile(s, &e, &s->rows[0], "the target", err, errlen);
    s->nrows = 1;
    if (!r)
        r = check_entry(s, &s->rows[0], "the target", err, errlen);
    s->o = o;
    s->rows[0].repeat = 1;
    s->table = true;
    s->entries = 1;
    table_weights(s);
    return r;
}

int variant_source_open(struct variant_source **out, const struct variant_opts *o, char *err, size_t errlen)
{
    struct variant_source *s = xcalloc(1, sizeof *s);
    s->o = *o;
    pthread_mutex_init(&s->mu, NULL);
    int r = open_feed(s, err, errlen);
    if (!r)
        r = o->targets_path ? open_targets(s, err, errlen) : open_single(s, err, errlen);
    if (r) {
        variant_source_free(s);
        *out = NULL;
        return r;
    }
    *out = s;
    return 0;
}

void variant_source_free(struct variant_source *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nrows; i++)
        ventry_release(&s->rows[i]);
    free(s->rows);
    free(s->cum);
    if (s->have_cur)
        ventry_release(&s->cur);
    if (s->rd)
        wl_reader_close(s->rd);
    wl_feed_free(s->feed);
    free(s->cols);
    free(s->bad_url);
    free(s->bad_head);
    free(s->first_url);
    free(s->first_method);
    url_release(&s->origin);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

const char *variant_source_url(const struct variant_source *s)
{
    return s->first_url;
}

const char *variant_source_method(const struct variant_source *s)
{
    return s->first_method;
}

uint64_t variant_source_entries(const struct variant_source *s)
{
    return s->seekable || s->table ? s->entries : 0;
}

void variant_source_describe(const struct variant_source *s, char *buf, size_t len)
{
    static const char *const orders[] = {"sequential", "random", "shuffle"};
    int n;
    if (s->o.targets_path && s->entries && (s->seekable || s->table))
        n = snprintf(buf, len, "%s: %llu entries (%s, %s%s)", s->o.targets_path, (unsigned long long)s->entries,
                     s->o.format == WL_FORMAT_JSONL ? "jsonl" : "http", orders[s->o.order],
                     s->table ? "" : ", streamed");
    else if (s->o.targets_path)
        n = snprintf(buf, len, "%s: entries read as they come (%s, in order, once)", s->o.targets_path,
                     s->o.format == WL_FORMAT_JSONL ? "jsonl" : "http");
    else
        n = snprintf(buf, len, "%s with placeholders", s->o.url);
    if (n < 0 || (size_t)n >= len || !s->feed)
        return;
    snprintf(buf + n, len - (size_t)n, "; feed %s: %zu rows (%s)", s->o.feed_path, wl_feed_rows(s->feed),
             orders[s->o.feed_order]);
}

const char *variant_source_error(const struct variant_source *s)
{
    return atomic_load(&s->failed) ? s->error : "";
}

bool variant_source_ended(const struct variant_source *s)
{
    return atomic_load(&s->ended);
}

/* The engine's settings for serialising (engine.c, per run): literal table entries are built
 * now, once. 0 or KNEE_EINVAL with the reason. */
int variant_prepare(struct variant_source *s, bool keepalive, bool want_close, bool h2_able, char *err, size_t errlen)
{
    if (s->prepared && s->keepalive == keepalive && s->want_close == want_close && s->h2_able == h2_able)
        return 0;
    s->keepalive = keepalive;
    s->want_close = want_close;
    s->h2_able = h2_able;
    s->prepared = true;
    atomic_store(&s->ended, false);
    atomic_store(&s->failed, false);
    char why[512];
    struct variant_bufs b = {0};
    int r = 0;
    for (size_t i = 0; i < s->nrows && !r; i++) {
        struct ventry *v = &s->rows[i];
        free(v->h1);
        free(v->h1_close);
        v->h1 = v->h1_close = NULL;
        if (v->h2_built)
            h2_request_release(&v->h2);
        v->h2_built = false;
        wl_template_free(v->wire[0]);
        wl_template_free(v->wire[1]);
        v->wire[0] = v->wire[1] = NULL;
        if (!v->literal) {
            if (!h2_able && (r = wire_compile(s, v, why, sizeof why)) != 0)
                knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: %s", s->o.targets_path ? s->o.targets_path : "the target",
                          (unsigned long long)v->line, why);
            continue;
        }
        /* the body stays the entry's: its HTTP/2 request points into it */
        b.body = v->keep_body;
        r = build(s, v, 0, &b, &v->h1, &v->h1_len, &v->h1_close, &v->h1_close_len, &v->h2, &v->h2_built, why,
                  sizeof why);
        v->keep_body = b.body;
        b.body = (struct wl_buf){0};
        if (r)
            knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: %s", s->o.targets_path ? s->o.targets_path : "the target",
                      (unsigned long long)v->line, why);
    }
    wl_buf_release(&b.url);
    wl_buf_release(&b.hdr);
    free(b.hdr_off);
    free(b.hdr_lines);
    return r;
}

/* ------------------------------------------------------------------ the threads' rings */

#define VRING_CAP 1024 /* requests prepared ahead per thread and target */
#define VRING_START 16 /* of a stream, before the run starts (the loop fills the rest) */

/* The row of the table request seq uses: its place in the cycle (sequential: an entry of weight
 * w takes w places) or a weighted draw from (seed, seq). */
static const struct ventry *table_row(const struct variant_source *s, uint64_t seq)
{
    double x =
        s->o.order == WL_ORDER_SEQUENTIAL ? (double)(seq % (uint64_t)s->total) : hash01(s->o.seed, seq) * s->total;
    size_t lo = 0, hi = s->nrows - 1;
    while (lo < hi) { /* the first row whose cumulative weight exceeds x */
        size_t mid = lo + (hi - lo) / 2;
        if (s->cum[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return &s->rows[lo];
}

static void variant_drop_own(struct variant *v)
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
static int wire_compile(const struct variant_source *s, struct ventry *v, char *why, size_t whylen)
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
static int fill_from(struct variant_source *s, const struct ventry *row, uint64_t seq, struct variant *v, char *why,
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
    int r = build(s, row, seq, &v->b, &v->own_h1, &v->h1_len, &v->own_h1_close, &v->h1_close_len, &v->own_h2,
                  &v->own_h2_built, why, whylen);
    v->h1 = v->own_h1;
    v->h1_close = v->own_h1_close;
    v->h2 = v->own_h2_built ? &v->own_h2 : NULL;
    return r;
}

/* A stream's next entry for this shard into s->cur (under s->mu). 0, WL_END (a pipe's end), or
 * KNEE_EINVAL with the reason in s->error. */
static int stream_advance(struct variant_source *s, uint32_t nshards, uint32_t shard)
{
    char why[1024], where[300];
    struct wl_entry e;
    for (;;) {
        int r = s->restart ? wl_reader_read_at(s->rd, 0, 0, 1, &e, why, sizeof why)
                           : wl_reader_next(s->rd, &e, why, sizeof why);
        s->restart = false;
        if (r == WL_END) {
            if (!s->seekable)
                return WL_END;
            r = wl_reader_read_at(s->rd, 0, 0, 1, &e, why, sizeof why); /* a file cycles */
        }
        if (r) {
            snprintf(s->error, sizeof s->error, "%s", why);
            return KNEE_EINVAL;
        }
        if ((nshards > 1 && e.index % nshards != shard) || !in_group(s, &e))
            continue;
        if (s->have_cur)
            ventry_release(&s->cur);
        s->have_cur = false;
        where_of(s, &e, where, sizeof where);
        if ((r = entry_repeat(s, &e, &s->cur_left, s->error, sizeof s->error)) != 0 ||
            (r = ventry_compile(s, &e, &s->cur, where, s->error, sizeof s->error)) != 0) {
            ventry_release(&s->cur);
            return KNEE_EINVAL;
        }
        if (s->prepared && !s->h2_able && wire_compile(s, &s->cur, why, sizeof why) != 0) {
            snprintf(s->error, sizeof s->error, "%s: %s", where, why);
            ventry_release(&s->cur);
            return KNEE_EINVAL;
        }
        s->have_cur = true;
        return 0;
    }
}

/* Prepare v as request seq. false when the source has no more (a pipe's end, or an entry that
 * could not be used: the source says which). */
static bool prepare(struct variant_source *s, const struct plan *p, uint64_t seq, struct variant *v)
{
    char why[512];
    int r;
    if (s->table) {
        r = fill_from(s, table_row(s, seq), seq, v, why, sizeof why);
    } else {
        pthread_mutex_lock(&s->mu);
        r = 0;
        if (atomic_load(&s->ended))
            r = WL_END;
        else if (s->have_cur && p->shard.count > 1 && s->cur.index % p->shard.count != p->shard.index)
            s->cur_left = 0; /* a pipe's first entry, read before the shard was known: another shard's */
        if (!r && (!s->have_cur || s->cur_left == 0))
            r = stream_advance(s, p->shard.count, p->shard.index);
        if (!r) {
            s->cur_left--;
            r = fill_from(s, &s->cur, seq, v, why, sizeof why);
            if (r) {
                char where[300];
                snprintf(where, sizeof where, "%s:%llu", s->o.targets_path, (unsigned long long)s->cur.line);
                snprintf(s->error, sizeof s->error, "%s: %s", where, why);
            }
        }
        if (r) {
            if (r != WL_END)
                atomic_store(&s->failed, true);
            atomic_store(&s->ended, true);
        }
        pthread_mutex_unlock(&s->mu);
        return r == 0;
    }
    if (r) {
        snprintf(s->error, sizeof s->error, "%s", why);
        atomic_store(&s->failed, true);
        atomic_store(&s->ended, true);
    }
    return r == 0;
}

static struct variant *variant_get(struct vring *vr)
{
    struct variant *v = vr->free;
    if (v) {
        vr->free = v->next;
        return v;
    }
    return xcalloc(1, sizeof *v);
}

void variant_put(struct target_rt *t, struct variant *v)
{
    variant_drop_own(v);
    v->next = t->vr.free;
    t->vr.free = v;
}

/* Top t's ring up to its capacity (or the source's end). */
static void vring_fill(struct worker *w, struct target_rt *t)
{
    struct vring *vr = &t->vr;
    struct variant_source *s = t->et->target->source;
    while (vr->len < vr->cap && !vr->done) {
        struct variant *v = variant_get(vr);
        uint64_t seq = vr->base + vr->step * vr->j;
        if (!prepare(s, &w->e->cfg->plan, seq, v)) {
            variant_put(t, v);
            vr->done = true;
            break;
        }
        v->seq = seq;
        vr->j++;
        vr->slot[(vr->head + vr->len) % vr->cap] = v;
        vr->len++;
    }
}

void vring_init(struct worker *w, struct target_rt *t)
{
    struct vring *vr = &t->vr;
    const struct plan *p = &w->e->cfg->plan;
    uint64_t T = w->e->nworkers, N = p->shard.count ? p->shard.count : 1, I = p->shard.count ? p->shard.index : 0;
    vr->cap = VRING_CAP;
    vr->slot = xcalloc(vr->cap, sizeof *vr->slot);
    vr->base = I + N * w->index; /* the open loop's global index of this thread's j-th request */
    vr->step = N * T;
    /* a stream (a pipe) fills a little now, the rest from the thread's loop, so the threads
     * take its entries as they go rather than the first thread all of them */
    struct variant_source *s = t->et->target->source;
    size_t cap = vr->cap;
    if (!s->table)
        vr->cap = VRING_START;
    vring_fill(w, t);
    vr->cap = cap;
    if (!s->table)
        w->vneed = true;
}

void vring_release(struct target_rt *t)
{
    struct vring *vr = &t->vr;
    for (size_t i = 0; i < vr->len; i++)
        variant_put(t, vr->slot[(vr->head + i) % vr->cap]);
    vr->len = 0;
    while (vr->free) {
        struct variant *v = vr->free;
        vr->free = v->next;
        wl_buf_release(&v->b.url);
        wl_buf_release(&v->b.hdr);
        wl_buf_release(&v->b.body);
        free(v->b.hdr_off);
        free(v->b.hdr_lines);
        free(v);
    }
    free(vr->slot);
    vr->slot = NULL;
}

/* t's source has no more for this thread: an entry that could not be used stops the whole run
 * (it drains as after Ctrl-C, and knee run exits 2 naming the entry); a pipe's end only ends
 * this thread's planning of t (the other threads send what they prepared). */
static void source_spent(struct worker *w, const struct target_rt *t)
{
    if (variant_source_error(t->et->target->source)[0])
        run_stop_request(w->e->stop, false);
}

struct variant *vring_pop(struct worker *w, struct target_rt *t)
{
    struct vring *vr = &t->vr;
    if (vr->reserved)
        vr->reserved--;
    if (!vr->len)
        vring_fill(w, t); /* ran dry: prepared at the send, late */
    if (!vr->len) {
        source_spent(w, t);
        return NULL;
    }
    struct variant *v = vr->slot[vr->head];
    vr->head = (vr->head + 1) % vr->cap;
    vr->len--;
    if (vr->len < vr->cap / 2)
        w->vneed = true;
    return v;
}

bool vring_ready(struct worker *w, struct target_rt *t)
{
    struct vring *vr = &t->vr;
    if (vr->len <= vr->reserved)
        vring_fill(w, t);
    if (vr->len <= vr->reserved) {
        source_spent(w, t);
        return false;
    }
    vr->reserved++;
    return true;
}

void vring_unreserve(struct target_rt *t)
{
    if (t->vr.reserved)
        t->vr.reserved--;
}

void vring_refill(struct worker *w)
{
    w->vneed = false;
    for (size_t i = 0; i < w->nt; i++)
        if (w->t[i].vr.slot)
            vring_fill(w, &w->t[i]);
}
