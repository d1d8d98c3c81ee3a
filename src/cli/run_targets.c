/* Target collection and per-target flags of the load options: NAME=URL[@R|@Nc] specs and
 * bare URLs become named targets; --mix, --method, --header and --body land on all targets
 * or, with a T= prefix, on one. Only syntax is checked here (run_validate checks the rest). */
#include "cli/run_targets.h"
#include "cli/run_setup.h"
#include "load/variant.h"

#include "core/err.h"
#include "core/units.h"
#include "http/client.h"
#include "net/url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The target named name[0..len), if any. */
static bool find_target(const struct cli_target *t, size_t n, const char *name, size_t len, size_t *idx)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].name) == len && strncmp(t[i].name, name, len) == 0) {
            *idx = i;
            return true;
        }
    return false;
}

/* "NAME=rest" where NAME is a target: true with its index and *rest; else false and
 * *rest = s. `stop` is a character that may not occur in the prefix (':' for headers). */
static bool target_prefix(const struct cli_target *t, size_t n, const char *s, char stop, size_t *idx,
                          const char **rest)
{
    *rest = s;
    const char *eq = strchr(s, '=');
    if (!eq || (stop && memchr(s, stop, (size_t)(eq - s))))
        return false;
    if (!find_target(t, n, s, (size_t)(eq - s), idx))
        return false;
    *rest = eq + 1;
    return true;
}

int cli_read_body(const struct cmd_spec *spec, const char *flag, const char *arg, char **out, size_t *len)
{
    if (arg[0] != '@') {
        *len = strlen(arg);
        *out = xmalloc(*len + 1);
        memcpy(*out, arg, *len + 1);
        return 0;
    }
    FILE *f = fopen(arg + 1, "rb");
    if (!f)
        return opt_fail(spec, "%s: %s: %s", flag, arg + 1, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (n == cap) {
            if (cap >= HTTP_CLIENT_MAX_BODY) {
                fclose(f);
                free(buf);
                return opt_fail(spec, "%s: %s: larger than %u bytes", flag, arg + 1, HTTP_CLIENT_MAX_BODY);
            }
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return opt_fail(spec, "%s: %s: read error", flag, arg + 1);
    }
    *out = buf;
    *len = n;
    return 0;
}

/* NAME=URL[@RATE|@Nc] */
static int parse_target(const struct cmd_spec *spec, const char *arg, struct cli_target *t)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return opt_fail(spec, "--target '%s': expected NAME=URL", arg);
    if (strstr(arg, "://") && strstr(arg, "://") < eq)
        return opt_fail(spec, "--target '%s': expected NAME=URL (the name comes first)", arg);
    t->name = xmalloc((size_t)(eq - arg) + 1);
    memcpy(t->name, arg, (size_t)(eq - arg));
    t->name[eq - arg] = '\0';
    for (const char *p = t->name; *p; p++)
        if ((unsigned char)*p < 0x21 || *p == '.' || *p == ',' || *p == '=' || *p == '"')
            return opt_fail(spec, "--target '%s': a name may not hold spaces, '.', ',', '=' or quotes", arg);
    const char *url = eq + 1;
    const char *at = strrchr(url, '@');
    const char *slash = strstr(url, "://");
    if (!(at && slash && at > slash)) {
        t->url = xstrdup(url);
        return 0;
    }
    const char *suf = at + 1;
    size_t sl = strlen(suf);
    uint64_t n;
    double r;
    char tmp[64];
    if (sl > 1 && sl < sizeof tmp && suf[sl - 1] == 'c') {
        memcpy(tmp, suf, sl - 1);
        tmp[sl - 1] = '\0';
        if (units_parse_count(tmp, &n) || n == 0 || n > PLAN_MAX_CONNECTIONS)
            return opt_fail(spec, "--target '%s': '@%s' is not a connection count such as @8c", arg, suf);
        t->connections = (uint32_t)n;
    } else if (units_parse_rate(suf, &r) == 0) {
        t->rate = r;
    } else {
        return opt_fail(spec, "--target '%s': '@%s' is neither a rate (@100, @1k) nor connections (@8c)", arg, suf);
    }
    t->url = xmalloc((size_t)(at - url) + 1);
    memcpy(t->url, url, (size_t)(at - url));
    t->url[at - url] = '\0';
    return 0;
}

static int check_url(const struct cmd_spec *spec, const char *url)
{
    struct url u;
    char why[256];
    int r = url_parse(url, &u, why, sizeof why);
    url_release(&u);
    if (r)
        return opt_fail(spec, "%s: %s", url, why);
    return 0;
}

/* A bare URL: a target named after its host:port, or host:port/path when that is taken. */
static int name_url(const struct cmd_spec *spec, const char *arg, struct cli_target *t, size_t k)
{
    struct url u;
    char why[256];
    int r = url_parse(arg, &u, why, sizeof why);
    if (r) {
        url_release(&u);
        return opt_fail(spec, "%s: %s", arg, why);
    }
    t[k].url = xstrdup(arg);
    t[k].name = xstrdup(u.authority);
    size_t idx;
    if (find_target(t, k, t[k].name, strlen(t[k].name), &idx)) {
        free(t[k].name);
        size_t n = strlen(u.authority) + strlen(u.target) + 1;
        t[k].name = xmalloc(n);
        snprintf(t[k].name, n, "%s%s", u.authority, u.target);
    }
    url_release(&u);
    if (find_target(t, k, t[k].name, strlen(t[k].name), &idx))
        return opt_fail(spec, "%s: the same URL twice (use --target NAME=URL to name them)", arg);
    return 0;
}

int cli_targets_collect(const struct cmd_spec *spec, const struct strlist *specs, const struct strlist *urls,
                        struct cli_target **out, size_t *n)
{
    size_t nt = specs->n + urls->n, k = 0;
    struct cli_target *t = xcalloc(nt ? nt : 1, sizeof *t);
    *out = t;
    *n = nt;
    for (size_t i = 0; i < specs->n; i++, k++)
        if (parse_target(spec, specs->v[i], &t[k]))
            return 2;
    for (size_t i = 0; i < urls->n; i++, k++)
        if (name_url(spec, urls->v[i], t, k))
            return 2;
    for (size_t i = 0; i < nt; i++)
        if (check_url(spec, t[i].url))
            return 2;
    return 0;
}

static int apply_mix(const struct cmd_spec *spec, const char *arg, struct cli_target *t, size_t n)
{
    char *mix = xstrdup(arg), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(mix, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        double w;
        size_t ti;
        if (!eq || !find_target(t, n, tok, (size_t)(eq - tok), &ti))
            rc = opt_fail(spec, "--mix: '%s' is not NAME=WEIGHT for a --target name", tok);
        else if (units_parse_double(eq + 1, &w) || w <= 0)
            rc = opt_fail(spec, "--mix: weight '%s' must be a number > 0", eq + 1);
        else
            t[ti].weight = w;
    }
    free(mix);
    return rc;
}

int cli_targets_apply(const struct cmd_spec *spec, const struct runopts *o, struct cli_target *t, size_t n,
                      struct strlist *body_files)
{
    if (o->mix && apply_mix(spec, o->mix, t, n))
        return 2;
    size_t ti;
    for (size_t i = 0; i < o->methods.n; i++) {
        const char *m;
        bool one = target_prefix(t, n, o->methods.v[i], 0, &ti, &m);
        for (size_t j = 0; j < n; j++)
            if (!one || ti == j)
                t[j].method = m;
    }
    for (size_t i = 0; i < o->headers.n; i++) {
        const char *h;
        bool one = target_prefix(t, n, o->headers.v[i], ':', &ti, &h);
        for (size_t j = 0; j < n; j++)
            if (!one || ti == j)
                strlist_push(&t[j].headers, h);
    }
    for (size_t i = 0; i < o->bodies.n; i++) {
        const char *b;
        bool one = target_prefix(t, n, o->bodies.v[i], 0, &ti, &b);
        char *buf = NULL;
        size_t len = 0;
        if (cli_read_body(spec, "--body", b, &buf, &len))
            return 2;
        if (b[0] == '@')
            strlist_push(body_files, b + 1);
        for (size_t j = 0; j < n; j++)
            if (!one || ti == j) {
                free(t[j].body);
                t[j].body = xmalloc(len + 1);
                memcpy(t[j].body, buf, len);
                t[j].body_len = len;
            }
        free(buf);
    }
    return 0;
}

/* ------------------------------------------------------------------ requests that vary */

int cli_targets_file(const struct cmd_spec *spec, const struct runopts *o, const struct strlist *urls,
                     struct cli_target **out, size_t *n)
{
    *out = xcalloc(1, sizeof **out);
    *n = 1;
    if (urls->n || o->targets.n)
        return opt_fail(spec, "--targets %s: the file gives the requests: no URL or --target with it", o->targets_file);
    if (o->methods.n || o->bodies.n || o->mix)
        return opt_fail(spec,
                        "--targets %s: give methods and bodies in the file (--method, --body and --mix "
                        "apply to URLs)",
                        o->targets_file);
    /* a file whose entries have names: one target per name, its share the sum of its weights */
    struct variant_opts vo = {.targets_path = o->targets_file, .format = wl_format_for_path(o->targets_file)};
    int fmt = (int)vo.format;
    if (o->targets_format && opt_parse_word(spec, "targets-format", o->targets_format, runopt_format_words, &fmt))
        return 2;
    vo.format = (enum wl_format)fmt;
    struct variant_group *g;
    size_t ng;
    char err[1024];
    if (variant_names(&vo, &g, &ng, err, sizeof err) != 0)
        return opt_fail(spec, "%s", err);
    if (ng) {
        free(*out);
        *out = xcalloc(ng, sizeof **out);
        *n = ng;
        for (size_t i = 0; i < ng; i++) {
            (*out)[i].name = xstrdup(g[i].name);
            (*out)[i].weight = g[i].weight;
            (*out)[i].file_group = true;
        }
        variant_groups_free(g, ng);
        return 0;
    }
    /* the name reports use: the file's base name without its extension, made a valid target name */
    const char *base = strrchr(o->targets_file, '/');
    base = base ? base + 1 : o->targets_file;
    if (strcmp(base, "-") == 0)
        base = "stdin";
    char name[64];
    size_t k = 0;
    for (const char *p = base; *p && *p != '.' && k + 1 < sizeof name; p++)
        name[k++] = (unsigned char)*p < 0x21 || *p == ',' || *p == '=' || *p == '"' ? '_' : *p;
    name[k] = '\0';
    (*out)[0].name = xstrdup(k ? name : "targets");
    return 0;
}

static bool has_placeholder(const struct cli_target *t)
{
    if (strstr(t->url, "{{") || (t->body && memmem(t->body, t->body_len, "{{", 2)))
        return true;
    for (size_t i = 0; i < t->headers.n; i++)
        if (strstr(t->headers.v[i], "{{"))
            return true;
    return false;
}

/* The file target's URL: the first entry's as written, or its origin when it holds a placeholder. */
static char *target_url(const char *u)
{
    struct url pu = {0};
    char why[256];
    bool whole = !strstr(u, "{{") && url_parse(u, &pu, why, sizeof why) == 0;
    url_release(&pu);
    if (whole)
        return xstrdup(u);
    const char *p = strstr(u, "://");
    size_t len = p ? (size_t)(p + 3 - u) + strcspn(p + 3, "/?#") : strlen(u);
    char *out = xmalloc(len + 2);
    memcpy(out, u, len);
    memcpy(out + len, "/", 2);
    return out;
}

static int parse_orders(const struct cmd_spec *spec, const struct runopts *o, struct variant_opts *v)
{
    _Static_assert(WL_FORMAT_HTTP == 0 && WL_FORMAT_JSONL == 1, "runopt_format_words follows enum wl_format");
    _Static_assert(WL_ORDER_SEQUENTIAL == 0 && WL_ORDER_RANDOM == 1 && WL_ORDER_SHUFFLE == 2,
                   "the order words follow enum wl_order");
    int f = 0, to = 0, fo = 0;
    if ((o->targets_format && opt_parse_word(spec, "targets-format", o->targets_format, runopt_format_words, &f)) ||
        (o->targets_order &&
         opt_parse_word(spec, "targets-order", o->targets_order, runopt_targets_order_words, &to)) ||
        (o->feed_order && opt_parse_word(spec, "feed-order", o->feed_order, runopt_feed_order_words, &fo)))
        return 2;
    v->format = (enum wl_format)f;
    v->order = (enum wl_order)to;
    v->feed_order = (enum wl_order)fo;
    if ((o->targets_format || o->targets_order) && !o->targets_file)
        return opt_fail(spec, "--%s needs --targets FILE", o->targets_format ? "targets-format" : "targets-order");
    if (o->feed_order && !o->feed)
        return opt_fail(spec, "--feed-order needs --feed FILE");
    return 0;
}

int cli_targets_sources(const struct cmd_spec *spec, const struct runopts *o, const struct cli_setup *setup,
                        struct cli_target *t, size_t n, struct variant_source ***out)
{
    *out = xcalloc(n ? n : 1, sizeof **out);
    struct variant_opts base = {.order = WL_ORDER_SEQUENTIAL, .feed_order = WL_ORDER_SEQUENTIAL};
    if (parse_orders(spec, o, &base))
        return 2;
    base.feed_path = o->feed;
    base.seed = o->seed;
    base.var_names = cli_setup_names(setup, &base.nvars); /* --capture: names beside the feed's columns */
    char err[1024];
    for (size_t i = 0; i < n; i++) {
        bool file = o->targets_file && (i == 0 || t[i].file_group);
        if (!file && !o->feed && !has_placeholder(&t[i]))
            continue;
        struct variant_opts v = base;
        v.headers = t[i].headers.v; /* -H: every entry's (a single target's placeholders expand in them) */
        v.nheaders = t[i].headers.n;
        if (file) {
            v.targets_path = o->targets_file;
            v.group = t[i].file_group ? t[i].name : NULL;
            if (!o->targets_format)
                v.format = wl_format_for_path(o->targets_file);
        } else {
            v.method = t[i].method;
            v.url = t[i].url;
            v.body = t[i].body;
            v.body_len = t[i].body_len;
        }
        if (variant_source_open(&(*out)[i], &v, err, sizeof err) != 0)
            return opt_fail(spec, "%s", err);
        if (file)
            t[i].url = target_url(variant_source_url((*out)[i]));
    }
    return 0;
}

void cli_targets_sources_free(struct variant_source **s, size_t n)
{
    if (!s)
        return;
    for (size_t i = 0; i < n; i++)
        variant_source_free(s[i]);
    free(s);
}

void cli_targets_free(struct cli_target *t, size_t n)
{
    if (!t)
        return;
    for (size_t i = 0; i < n; i++) {
        free(t[i].name);
        free(t[i].url);
        free(t[i].body);
        strlist_release(&t[i].headers);
    }
    free(t);
}
