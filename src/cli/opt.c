/* Table-driven option parsing: --name VALUE, --name=VALUE, -x VALUE, and flags. */
#include "cli/opt.h"

#include "core/units.h"
#include "core/clock.h"
#include "core/grow.h"
#include "core/err.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void strlist_push(struct strlist *l, const char *s)
{
    l->v = grow_array(l->v, &l->cap, l->n + 1, sizeof *l->v, 8);
    l->v[l->n++] = s;
}

void strlist_release(struct strlist *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int opt_fail(const struct cmd_spec *spec, const char *fmt, ...)
{
    char prefix[96];
    snprintf(prefix, sizeof prefix, "knee %s: ", spec->name);
    va_list ap;
    va_start(ap, fmt);
    knee_vreport(stderr, prefix, fmt, ap); /* input quoted in the message is escaped there */
    va_end(ap);
    return 2;
}

int opt_stdout_done(const struct cmd_spec *spec)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    int e = errno ? errno : EIO;
    clearerr(stdout);
    opt_fail(spec, "standard output: %s", strerror(e));
    return 1;
}

static const char *kind_example(enum opt_kind k)
{
    switch (k) {
    case OPT_COUNT:
        return "a whole number such as 1000 or 10k";
    case OPT_DOUBLE:
        return "a number";
    case OPT_SHARE:
        return "a share such as 1% or 0.01";
    case OPT_RATE:
        return "a rate such as 5000, 10k or 100/s";
    case OPT_DURATION:
        return "a duration such as 250ms, 10s or 2m";
    default:
        return "a value";
    }
}

static int set_value(struct cmd_spec *spec, struct opt *o, const char *val)
{
    int r = 0;
    switch (o->kind) {
    case OPT_FLAG:
        *(bool *)o->dst = true;
        return 0;
    case OPT_STR:
        *(const char **)o->dst = val;
        return 0;
    case OPT_LIST:
        strlist_push(o->dst, val);
        return 0;
    case OPT_COUNT:
        r = units_parse_count(val, o->dst);
        break;
    case OPT_DOUBLE:
        r = units_parse_double(val, o->dst);
        break;
    case OPT_SHARE:
        r = units_parse_share(val, o->dst);
        break;
    case OPT_RATE:
        r = units_parse_rate(val, o->dst);
        break;
    case OPT_DURATION:
        r = units_parse_duration_ns(val, o->unit_ns ? o->unit_ns : NS_PER_S, o->dst);
        break;
    case OPT_CUSTOM: {
        char err[256] = "";
        if (o->parse(val, o->dst, err, sizeof err) != 0)
            return opt_fail(spec, "--%s: '%s': %s", o->name, val, err[0] ? err : "invalid value");
        return 0;
    }
    }
    if (r)
        return opt_fail(spec, "--%s: '%s' is not %s (%s)", o->name, val, kind_example(o->kind), knee_strerror(r));
    return 0;
}

static struct opt *find_long(struct cmd_spec *spec, const char *name, size_t len)
{
    for (size_t i = 0; i < spec->nopts; i++)
        if (strlen(spec->opts[i].name) == len && strncmp(spec->opts[i].name, name, len) == 0)
            return &spec->opts[i];
    return NULL;
}

static struct opt *find_short(struct cmd_spec *spec, char c)
{
    for (size_t i = 0; i < spec->nopts; i++)
        if (spec->opts[i].short_name == c)
            return &spec->opts[i];
    return NULL;
}

const struct opt *opt_find(const struct cmd_spec *spec, const char *name)
{
    return find_long((struct cmd_spec *)spec, name, strlen(name));
}

/* ------------------------------------------------------------------ did you mean */

/* A byte as the distance compares it: case and '_' against '-' do not count as typos. */
static int fold(char c)
{
    return c == '_' ? '-' : tolower((unsigned char)c);
}

size_t opt_edit_distance(const char *a, size_t alen, const char *b)
{
    enum { MAXN = 63 };
    size_t blen = strlen(b);
    if (alen > MAXN || blen > MAXN)
        return SIZE_MAX;
    /* three rows of the dynamic programme: two back for a swap of neighbours */
    size_t rows[3][MAXN + 1];
    for (size_t j = 0; j <= blen; j++)
        rows[0][j] = j;
    for (size_t i = 1; i <= alen; i++) {
        size_t *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= blen; j++) {
            size_t cost = fold(a[i - 1]) != fold(b[j - 1]);
            size_t d = prev[j - 1] + cost;
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
                prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
        }
    }
    return rows[alen % 3][blen];
}

void opt_suggest_init(struct opt_suggest *s, const char *typed, size_t len)
{
    *s = (struct opt_suggest){.typed = typed, .len = len, .dist = SIZE_MAX};
}

static bool folded_prefix(const char *typed, size_t len, const char *cand)
{
    for (size_t i = 0; i < len; i++)
        if (!cand[i] || fold(typed[i]) != fold(cand[i]))
            return false;
    return true;
}

void opt_suggest_add(struct opt_suggest *s, const char *candidate)
{
    if (!candidate || !*candidate)
        return;
    if (s->len >= 2 && folded_prefix(s->typed, s->len, candidate)) {
        s->prefix_of = candidate;
        s->nprefix++;
    }
    size_t d = opt_edit_distance(s->typed, s->len, candidate);
    if (d < s->dist) {
        s->dist = d;
        s->nearest = candidate;
        s->nnearest = 1;
    } else if (d == s->dist && d != SIZE_MAX && strcmp(candidate, s->nearest) != 0) {
        s->nnearest++;
    }
}

const char *opt_suggest_best(const struct opt_suggest *s)
{
    if (s->nprefix == 1)
        return s->prefix_of;
    if (s->nearest && s->nnearest == 1 && s->dist <= 2 && s->dist * 2 <= s->len)
        return s->nearest;
    return NULL;
}

const char *opt_suggest_word(const char *typed, const char *const *words)
{
    struct opt_suggest s;
    opt_suggest_init(&s, typed, strlen(typed));
    for (size_t i = 0; words[i]; i++)
        opt_suggest_add(&s, words[i]);
    return opt_suggest_best(&s);
}

/* The long option of spec that name[0..len) most likely meant, or NULL. */
static const char *suggest_option(const struct cmd_spec *spec, const char *name, size_t len)
{
    struct opt_suggest s;
    opt_suggest_init(&s, name, len);
    for (size_t i = 0; i < spec->nopts; i++)
        opt_suggest_add(&s, spec->opts[i].name);
    opt_suggest_add(&s, "help");
    return opt_suggest_best(&s);
}

const char *opt_word_list(const char *const *words, char *buf, size_t len)
{
    size_t n = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; words[i] && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", words[i]);
    return buf;
}

int opt_parse_word(const struct cmd_spec *spec, const char *flag, const char *value, const char *const *words, int *out)
{
    for (int i = 0; words[i]; i++)
        if (strcmp(value, words[i]) == 0) {
            *out = i;
            return 0;
        }
    char list[512];
    const char *near = opt_suggest_word(value, words);
    if (near)
        return opt_fail(spec, "--%s '%s': expected one of %s; did you mean %s?", flag, value,
                        opt_word_list(words, list, sizeof list), near);
    return opt_fail(spec, "--%s '%s': expected one of %s", flag, value, opt_word_list(words, list, sizeof list));
}

/* "unknown option '--rat': did you mean --rate?" or "... (see knee run --help)". */
static int unknown_option(const struct cmd_spec *spec, const char *shown, const char *name, size_t len)
{
    const char *near = suggest_option(spec, name, len);
    if (near)
        return opt_fail(spec, "unknown option '%s': did you mean --%s?", shown, near);
    return opt_fail(spec, "unknown option '%s' (see knee %s --help)", shown, spec->name);
}

static int parse_args(struct cmd_spec *spec, int argc, char **argv, struct strlist *args)
{
    bool only_args = false;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (only_args || a[0] != '-' || a[1] == '\0') {
            strlist_push(args, a);
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_args = true;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            opt_print_help(spec, stdout);
            return 1;
        }
        struct opt *o;
        const char *val = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_long(spec, name, len);
            if (!o) {
                char shown[256];
                snprintf(shown, sizeof shown, "--%.*s", (int)(len < 250 ? len : 250), name);
                return unknown_option(spec, shown, name, len);
            }
            if (eq)
                val = eq + 1;
        } else {
            if (a[2] != '\0' && !find_short(spec, a[1])) {
                /* -rate, -duration: Go-style flags (vegeta, hey) typed by habit */
                size_t len = strcspn(a + 1, "=");
                if (find_long(spec, a + 1, len))
                    return opt_fail(spec, "unknown option '%s': did you mean --%.*s?", a, (int)len, a + 1);
                return unknown_option(spec, a, a + 1, len);
            }
            o = find_short(spec, a[1]);
            if (!o)
                return opt_fail(spec, "unknown option '%s' (see knee %s --help)", a, spec->name);
            if (a[2] != '\0')
                val = a + 2;
        }
        if (o->kind == OPT_FLAG) {
            if (val)
                return opt_fail(spec, "--%s takes no value", o->name);
        } else if (!val) {
            if (i + 1 >= argc)
                return opt_fail(spec, "--%s needs a value (%s)", o->name, o->metavar ? o->metavar : "VALUE");
            val = argv[++i];
        }
        o->seen = true;
        int r = set_value(spec, o, val);
        if (r)
            return r;
    }
    if (args->n < spec->min_args)
        return opt_fail(spec, "missing argument: usage: knee %s %s", spec->name, spec->usage);
    if (args->n > spec->max_args)
        return opt_fail(spec, "unexpected argument '%s': usage: knee %s %s", args->v[spec->max_args], spec->name,
                        spec->usage);
    return 0;
}

/* Releasing the positional arguments here, on every path that ends the command, spares each
 * caller an easily forgotten strlist_release before its early return. */
int opt_parse(struct cmd_spec *spec, int argc, char **argv, struct strlist *args)
{
    int r = parse_args(spec, argc, argv, args);
    if (r)
        strlist_release(args);
    return r;
}

void opt_print_help(const struct cmd_spec *spec, FILE *out)
{
    fprintf(out, "usage: knee %s %s\n\n%s\n\noptions:\n", spec->name, spec->usage, spec->summary);
    for (size_t i = 0; i < spec->nopts; i++) {
        const struct opt *o = &spec->opts[i];
        char left[64];
        if (o->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        if (strlen(left) > 26)
            fprintf(out, "  %s\n  %-26s  %s\n", left, "", o->help);
        else
            fprintf(out, "  %-26s  %s\n", left, o->help);
    }
    fprintf(out, "  %-26s  %s\n", "-h, --help", "show this help");
    if (spec->epilog)
        fprintf(out, "\n%s", spec->epilog);
}
