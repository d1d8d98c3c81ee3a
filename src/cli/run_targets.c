/* Target collection and per-target flags of the load options: NAME=URL[@R|@Nc] specs and
 * bare URLs become named targets; --mix, --method, --header and --body land on all targets
 * or, with a T= prefix, on one. Only syntax is checked here (run_validate checks the rest). */
#include "cli/run_targets.h"

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

static int read_body(const struct cmd_spec *spec, const char *arg, char **out, size_t *len)
{
    if (arg[0] != '@') {
        *len = strlen(arg);
        *out = xmalloc(*len + 1);
        memcpy(*out, arg, *len + 1);
        return 0;
    }
    FILE *f = fopen(arg + 1, "rb");
    if (!f)
        return opt_fail(spec, "--body: %s: %s", arg + 1, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (n == cap) {
            if (cap >= HTTP_CLIENT_MAX_BODY) {
                fclose(f);
                free(buf);
                return opt_fail(spec, "--body: %s: larger than %u bytes", arg + 1, HTTP_CLIENT_MAX_BODY);
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
        return opt_fail(spec, "--body: %s: read error", arg + 1);
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
        if (read_body(spec, b, &buf, &len))
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
