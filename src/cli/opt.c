/* Table-driven option parsing: --name VALUE, --name=VALUE, -x VALUE, and flags. */
#include "cli/opt.h"

#include "core/units.h"
#include "core/clock.h"
#include "core/grow.h"
#include "core/err.h"

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
            if (!o)
                return opt_fail(spec, "unknown option '--%.*s' (see knee %s --help)", (int)len, name, spec->name);
            if (eq)
                val = eq + 1;
        } else {
            if (a[2] != '\0' && !find_short(spec, a[1])) {
                /* -rate, -duration: Go-style flags (vegeta, hey) typed by habit */
                size_t len = strcspn(a + 1, "=");
                if (find_long(spec, a + 1, len))
                    return opt_fail(spec, "unknown option '%s': did you mean --%.*s?", a, (int)len, a + 1);
                return opt_fail(spec, "unknown option '%s' (see knee %s --help)", a, spec->name);
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
