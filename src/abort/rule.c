/* --abort-if RULE parsing: [stageN.]STAT[WINDOW] OP VALUE, or generator_limited. The names and
 * units are --threshold's (record/threshold.c) where the two overlap, so a rule reads like the
 * threshold it guards; every error says what was expected where. */
#include "abort/abort.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define GENERATOR_LIMITED "generator_limited"

static const char EXPECTED_STATS[] =
    "p50, p99, p99.9, mean, max, error_rate, dropped_rate, completed_per_s, goodput_per_s, sent_per_s, "
    "first_event.p99, event_gap.p99 or generator_limited";

/* [s, e) without the blanks around it. */
static void trim(const char **s, const char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

static bool word_is(const char *s, size_t n, const char *word)
{
    return n == strlen(word) && strncmp(s, word, n) == 0;
}

/* "stageN." at *s: consume it and set r->stage (N >= 1). */
static int parse_stage(const char **s, const char *e, struct abort_rule *r, char *err, size_t errlen)
{
    if ((size_t)(e - *s) < 6 || strncmp(*s, "stage", 5) != 0 || !isdigit((unsigned char)(*s)[5]))
        return 0;
    const char *p = *s + 5;
    uint64_t n = 0;
    while (p < e && isdigit((unsigned char)*p) && n < 1000000)
        n = n * 10 + (uint64_t)(*p++ - '0');
    if (p >= e || *p != '.')
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': expected stageN. before the statistic (stage2.p99[10s]>1s)",
                         (int)(p - *s + 1 < e - *s ? p - *s + 1 : e - *s), *s);
    if (n == 0 || n >= 1000000)
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': stages are numbered from 1", (int)(p - *s), *s);
    r->stage = (uint32_t)n;
    *s = p + 1;
    return 0;
}

/* The statistic's name (after any histogram prefix). */
static int parse_stat_name(const char *s, size_t n, struct abort_rule *r, char *err, size_t errlen)
{
    if (n >= 2 && s[0] == 'p' && isdigit((unsigned char)s[1])) {
        char num[32];
        if (n - 1 >= sizeof num)
            return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': bad percentile (use p50, p99, p99.9)", (int)n, s);
        memcpy(num, s + 1, n - 1);
        num[n - 1] = '\0';
        if (units_parse_double(num, &r->pct) || !(r->pct > 0) || r->pct > 100)
            return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': bad percentile (use p50, p99, p99.9)", (int)n, s);
        r->kind = ABORT_LATENCY;
        r->stat = ABORT_PCT;
        return 0;
    }
    static const struct {
        const char *name;
        enum abort_kind kind;
        enum abort_stat stat;
    } NAMES[] = {
        {"mean", ABORT_LATENCY, ABORT_MEAN},
        {"max", ABORT_LATENCY, ABORT_MAX},
        {"error_rate", ABORT_ERROR_RATE, ABORT_PCT},
        {"dropped_rate", ABORT_DROPPED_RATE, ABORT_PCT},
        {"completed_per_s", ABORT_PER_S, ABORT_COMPLETED},
        {"goodput_per_s", ABORT_PER_S, ABORT_GOODPUT},
        {"sent_per_s", ABORT_PER_S, ABORT_SENT},
    };
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++)
        if (word_is(s, n, NAMES[i].name)) {
            r->kind = NAMES[i].kind;
            r->stat = NAMES[i].stat;
            return 0;
        }
    if (n > 7 && strncmp(s, "status.", 7) == 0)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "'%.*s': status codes are not counted per second; use error_rate (a 5xx is an http_error)",
                         (int)n, s);
    return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': unknown statistic (expected %s)", (int)n, s, EXPECTED_STATS);
}

/* "first_event." or "event_gap." at the start of STAT: consume it and set r->hist. */
static void parse_hist(const char **s, size_t *n, struct abort_rule *r)
{
    static const struct {
        const char *prefix;
        enum abort_hist hist;
    } HISTS[] = {{"first_event.", ABORT_H_FIRST_EVENT}, {"event_gap.", ABORT_H_EVENT_GAP}};
    for (size_t i = 0; i < sizeof HISTS / sizeof *HISTS; i++) {
        size_t pl = strlen(HISTS[i].prefix);
        if (*n >= pl && strncmp(*s, HISTS[i].prefix, pl) == 0) {
            r->hist = HISTS[i].hist;
            *s += pl;
            *n -= pl;
            return;
        }
    }
}

/* STAT (the text before the window). */
static int parse_stat(const char *s, size_t n, struct abort_rule *r, char *err, size_t errlen)
{
    const char *s0 = s;
    size_t n0 = n;
    parse_hist(&s, &n, r);
    int rc = parse_stat_name(s, n, r, err, errlen);
    if (!rc && r->hist != ABORT_H_LATENCY && r->kind != ABORT_LATENCY)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "'%.*s': a stream histogram takes pNN, mean or max (first_event.p99, event_gap.max)", (int)n0,
                         s0);
    return rc;
}

/* "[30s]" at [s, e): the window in whole seconds. */
static int parse_window(const char *s, const char *e, struct abort_rule *r, char *err, size_t errlen)
{
    char w[32];
    const char *ws = s + 1, *we = e - 1;
    trim(&ws, &we);
    if (we <= ws || (size_t)(we - ws) >= sizeof w)
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': expected a window such as [30s]", (int)(e - s), s);
    memcpy(w, ws, (size_t)(we - ws));
    w[we - ws] = '\0';
    uint64_t ns;
    if (units_parse_duration_ns(w, NS_PER_S, &ns) || ns % NS_PER_S || ns == 0 ||
        ns > (uint64_t)ABORT_MAX_WINDOW_S * NS_PER_S)
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': the window is whole seconds from 1s to %ds, e.g. [30s]",
                         (int)(e - s), s, ABORT_MAX_WINDOW_S);
    r->window_s = (uint32_t)(ns / NS_PER_S);
    return 0;
}

/* "OP VALUE" at [s, e). */
static int parse_comparison(const char *s, const char *e, struct abort_rule *r, char *err, size_t errlen)
{
    trim(&s, &e);
    size_t oplen = 1;
    if (s < e && s[0] == '<')
        r->op = s + 1 < e && s[1] == '=' ? (oplen = 2, THR_LE) : THR_LT;
    else if (s < e && s[0] == '>')
        r->op = s + 1 < e && s[1] == '=' ? (oplen = 2, THR_GE) : THR_GT;
    else if (e - s >= 2 && s[0] == '=' && s[1] == '=')
        r->op = THR_EQ, oplen = 2;
    else if (e - s >= 2 && s[0] == '!' && s[1] == '=')
        r->op = THR_NE, oplen = 2;
    else
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "expected a comparison (<, <=, >, >=, == or !=) after the window%s%.*s%s",
                         s < e ? " at '" : "", (int)(e - s), s, s < e ? "'" : "");
    const char *vs = s + oplen;
    trim(&vs, &e);
    char v[64];
    if (vs >= e || (size_t)(e - vs) >= sizeof v)
        return knee_fail(err, errlen, KNEE_EINVAL, "expected a value after '%.*s'", (int)oplen, s);
    memcpy(v, vs, (size_t)(e - vs));
    v[e - vs] = '\0';
    uint64_t ns;
    switch (r->kind) {
    case ABORT_LATENCY:
        if (units_parse_duration_ns(v, NS_PER_MS, &ns))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s': expected a duration such as 500ms or 1s", v);
        r->value = (double)ns / 1e6;
        return 0;
    case ABORT_ERROR_RATE:
    case ABORT_DROPPED_RATE:
        if (units_parse_share(v, &r->value))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s': expected a share such as 5%% or 0.05", v);
        return 0;
    case ABORT_PER_S:
        if (units_parse_rate(v, &r->value) && (units_parse_double(v, &r->value) || r->value != 0))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s': expected a rate per second such as 100 or 10k", v);
        return 0;
    case ABORT_GENERATOR_LIMITED:
        break;
    }
    return 0;
}

int abort_rule_parse(const char *text, struct abort_rule *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(text);
    if (len >= sizeof out->text)
        return knee_fail(err, errlen, KNEE_EINVAL, "longer than %zu characters", sizeof out->text - 1);
    memcpy(out->text, text, len + 1);
    const char *s = text, *e = text + len;
    trim(&s, &e);
    if (s == e)
        return knee_fail(err, errlen, KNEE_EINVAL, "empty (expected e.g. p99[30s]>500ms)");
    int rc = parse_stage(&s, e, out, err, errlen);
    if (rc)
        return rc;
    size_t gl = strlen(GENERATOR_LIMITED);
    if ((size_t)(e - s) >= gl && strncmp(s, GENERATOR_LIMITED, gl) == 0) {
        if ((size_t)(e - s) != gl)
            return knee_fail(err, errlen, KNEE_EINVAL, "generator_limited takes no window and no comparison");
        if (out->stage)
            return knee_fail(err, errlen, KNEE_EINVAL, "generator_limited is a verdict on the whole run: no stageN.");
        out->kind = ABORT_GENERATOR_LIMITED;
        return 0;
    }
    const char *lb = memchr(s, '[', (size_t)(e - s));
    const char *cmp = strpbrk(s, "<>=!");
    if (!lb || (cmp && cmp < lb)) {
        const char *se = cmp ? cmp : e;
        trim(&s, &se);
        rc = parse_stat(s, (size_t)(se - s), out, err, errlen); /* an unknown name says so first */
        if (rc)
            return rc;
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': expected a trailing window in brackets, e.g. %.*s[30s]",
                         (int)(se - s), s, (int)(se - s), s);
    }
    const char *se = lb;
    trim(&s, &se);
    if ((rc = parse_stat(s, (size_t)(se - s), out, err, errlen)) != 0)
        return rc;
    const char *rb = memchr(lb, ']', (size_t)(e - lb));
    if (!rb)
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': expected ']' after the window", (int)(e - lb), lb);
    if ((rc = parse_window(lb, rb + 1, out, err, errlen)) != 0)
        return rc;
    return parse_comparison(rb + 1, e, out, err, errlen);
}

const char *abort_rule_unit(const struct abort_rule *r)
{
    switch (r->kind) {
    case ABORT_LATENCY:
        return "ms";
    case ABORT_PER_S:
        return "/s";
    default:
        return "";
    }
}
