/* Request sources (load/variant.h): a targets file or a single target with placeholders, opened
 * and every entry checked before the run, held as a table of compiled entries or read as a
 * stream, and the names that make a file's targets. The threads' rings are variant.c's, the
 * bytes of one request variant_build.c's. */
#include "core/err.h"
#include "http/client.h"
#include "load/variant_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ventry_release(struct ventry *v)
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
    free(v->body_text);
    free(v->cols);
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
                         "%s: every entry must go to the first entry's origin %s://%s (a target's connections "
                         "are to one origin: give entries names, each name is a target of its own)",
                         url, s->origin.tls ? "https" : "http", s->origin.authority);
    return 0;
}

/* Compile one entry (e: as read, or a single target's fields) into v. where: "FILE:LINE" or the
 * flag, for messages. */
int ventry_compile(const struct variant_source *s, const struct wl_entry *e, struct ventry *v, const char *where,
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
        v->body_text = xmalloc(e->body_len ? e->body_len : 1);
        memcpy(v->body_text, e->body, e->body_len);
        v->body_text_len = e->body_len;
        r = wl_template_compile(e->body, e->body_len, &s->names, &v->body, why, sizeof why);
        if (r)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s: body: %s", where, why);
    }
    for (size_t c = 0; c < s->vars.ncols && s->feed; c++) {
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
    if ((r = vvars_check(s, v, where, err, errlen)) != 0) /* --capture's values, once bound */
        return r;
    v->literal = wl_template_literal(v->url) && (!v->body || wl_template_literal(v->body));
    for (size_t i = 0; i < v->nhdr; i++)
        v->literal &= wl_template_literal(v->hdr[i]);
    return 0;
}

/* ------------------------------------------------------------------ the source */

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
    s->origin_n = n;
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
    int r = variant_build(s, v, 0, &b, &h1, &n1, &h1c, &n2, &h2, &h2b, why, sizeof why);
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

void ventry_where(const struct variant_source *s, const struct wl_entry *e, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%llu", s->o.targets_path, (unsigned long long)e->line);
}

/* Sequential order sends an entry `weight` times per cycle: a whole number. */
int ventry_repeat(const struct variant_source *s, const struct wl_entry *e, uint64_t *out, char *err, size_t errlen)
{
    double w = e->weight > 0 ? e->weight : 1;
    if (s->o.order == WL_ORDER_SEQUENTIAL && (w != (double)(uint64_t)w || w > 1e6)) {
        char where[300];
        ventry_where(s, e, where, sizeof where);
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "%s: \"weight\" %g: with --targets-order sequential a weight is a whole number of sends per "
                         "cycle (1..1000000); --targets-order random takes any weight > 0",
                         where, w);
    }
    *out = (uint64_t)w;
    return 0;
}

/* The entry belongs to this source: every entry, or those named o.group. */
bool vsource_in_group(const struct variant_source *s, const struct wl_entry *e)
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
        if (!vsource_in_group(s, &e))
            continue;
        ventry_where(s, &e, where, sizeof where);
        if (!s->first_url && (r = set_origin(s, &e, where, err, errlen)) != 0)
            return r;
        uint64_t rep;
        if ((r = ventry_repeat(s, &e, &rep, err, errlen)) != 0)
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
    s->unit = s->o.order == WL_ORDER_SEQUENTIAL && acc == (double)s->nrows;
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
        ventry_where(s, &e, where, sizeof where);
        if ((r = set_origin(s, &e, where, err, errlen)) != 0 || (r = ventry_repeat(s, &e, &s->cur_left, err, errlen)))
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
    if (!s->table)
        wl_reader_checked(s->rd); /* every entry was: the run's reads parse no URL twice */
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
    s->opt_literal = true;
    for (size_t i = 0; i < o->nheaders; i++)
        s->opt_literal &= strstr(o->headers[i], "{{") == NULL;
    pthread_mutex_init(&s->mu, NULL);
    int r = open_feed(s, err, errlen);
    if (!r)
        r = vvars_open(s, err, errlen); /* --capture's names after the feed's columns */
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
    vshape_release(&s->shape);
    variant_rendered_free(s);
    free(s->spans);
    wl_buf_release(&s->target);
    if (s->rd)
        wl_reader_close(s->rd);
    wl_feed_free(s->feed);
    vvars_release(&s->vars);
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
        n = snprintf(buf, len, "%s: %llu entries%s%s (%s, %s%s)", s->o.targets_path, (unsigned long long)s->entries,
                     s->o.group ? " named " : "", s->o.group ? s->o.group : "",
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
    vshape_release(&s->shape); /* built for the settings before */
    if (s->lean) {             /* its bytes were the shape's: the next entry comes */
        s->have_cur = s->lean = false;
        ventry_release(&s->cur);
    }
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
        free(v->cols);
        v->cols = NULL;
        v->ncols = 0;
        if (!v->literal) {
            if (!h2_able && (r = variant_wire_compile(s, v, why, sizeof why)) != 0)
                knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: %s", s->o.targets_path ? s->o.targets_path : "the target",
                          (unsigned long long)v->line, why);
            continue;
        }
        /* the body stays the entry's: its HTTP/2 request points into it */
        b.body = v->keep_body;
        r = variant_build(s, v, 0, &b, &v->h1, &v->h1_len, &v->h1_close, &v->h1_close_len, &v->h2, &v->h2_built, why,
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
    if (!r)
        variant_choose_prep(s);
    return r;
}
