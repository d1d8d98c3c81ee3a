/* --threshold parsing and evaluation. Percentiles come from the merged histograms (never an
 * average of per-thread or per-target percentiles). */
#include "record/threshold.h"

#include "record/stages.h"

#include "core/units.h"
#include "core/clock.h"
#include "core/err.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const METRICS[] = {"latency", "service", "ttfb", "lag", "connect", "first_event", "event_gap"};
_Static_assert(sizeof METRICS / sizeof *METRICS == THR_METRIC_COUNT, "METRICS is indexed by enum thr_metric");
static const char *const PER_S[] = {"planned_per_s", "sent_per_s", "completed_per_s", "goodput_per_s",
                                    "achieved_send_per_s"};

/* "GROUP." at *ls (all, or a latency group's name): consume it and set *group. */
static bool take_group(const char **ls, const char *le, int *group)
{
    for (int g = -1; g < RUN_GROUP_COUNT; g++) {
        const char *name = g < 0 ? "all" : record_group_name((enum run_group)g);
        size_t n = strlen(name);
        if ((size_t)(le - *ls) > n + 1 && strncmp(*ls, name, n) == 0 && (*ls)[n] == '.') {
            *group = g < 0 ? THR_GROUP_ALL : g;
            *ls += n + 1;
            return true;
        }
    }
    return false;
}

#define OUTCOME_UNKNOWN (-100)

/* An outcome index, THR_COUNT_PLANNED, THR_COUNT_SENT, or OUTCOME_UNKNOWN. */
static int outcome_by_name(const char *s, size_t n)
{
    if (n == 7 && strncmp(s, "planned", 7) == 0)
        return THR_COUNT_PLANNED;
    if (n == 4 && strncmp(s, "sent", 4) == 0)
        return THR_COUNT_SENT;
    if (n == 7 && strncmp(s, "goodput", 7) == 0)
        return OUTCOME_OK;
    enum reqlog_outcome o;
    return reqlog_outcome_parse(s, n, &o) ? (int)o : OUTCOME_UNKNOWN;
}

static void trim(const char **s, const char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

/* The comparison: t->op, and the quantity [*ls, *le) and the value [*vs, *ve) around it, trimmed. */
static int parse_op(const char *expr, struct run_threshold *t, const char **ls, const char **le, const char **vs,
                    const char **ve, char *err, size_t errlen)
{
    const char *opp = strpbrk(expr, "<>=!");
    if (!opp)
        return knee_fail(err, errlen, KNEE_EINVAL, "no comparison (use <, <=, >, >=, == or !=), e.g. p99<250ms");
    size_t oplen = 1;
    if (opp[0] == '<')
        t->op = opp[1] == '=' ? (oplen = 2, THR_LE) : THR_LT;
    else if (opp[0] == '>')
        t->op = opp[1] == '=' ? (oplen = 2, THR_GE) : THR_GT;
    else if (opp[0] == '=' && opp[1] == '=')
        t->op = THR_EQ, oplen = 2;
    else if (opp[0] == '!' && opp[1] == '=')
        t->op = THR_NE, oplen = 2;
    else
        return knee_fail(err, errlen, KNEE_EINVAL, "unknown comparison at '%s'", opp);
    *ls = expr;
    *le = opp;
    trim(ls, le);
    *vs = opp + oplen;
    *ve = *vs + strlen(*vs);
    trim(vs, ve);
    if (*ls == *le)
        return knee_fail(err, errlen, KNEE_EINVAL, "nothing to compare before '%.*s'", (int)oplen, opp);
    if (*vs == *ve)
        return knee_fail(err, errlen, KNEE_EINVAL, "no value after '%.*s'", (int)oplen, opp);
    return 0;
}

/* The prefixes TARGET. (the longest target name followed by '.'), GROUP. and METRIC. (and
 * latency.GROUP.), consumed from *ls. */
static int parse_prefix(const char **ls, const char *le, const char *const *names, size_t nnames,
                        struct run_threshold *t, bool *have_group, bool *have_metric, char *err, size_t errlen)
{
    size_t best = 0;
    for (size_t i = 0; i < nnames; i++) {
        size_t n = strlen(names[i]);
        if (n > best && (size_t)(le - *ls) > n + 1 && strncmp(*ls, names[i], n) == 0 && (*ls)[n] == '.') {
            best = n;
            t->target = (int)i;
        }
    }
    if (best)
        *ls += best + 1;
    t->group = RUN_GROUP_OK;
    *have_group = take_group(ls, le, &t->group);
    *have_metric = false;
    for (size_t m = 0; m < sizeof METRICS / sizeof *METRICS; m++) {
        size_t n = strlen(METRICS[m]);
        if ((size_t)(le - *ls) > n + 1 && strncmp(*ls, METRICS[m], n) == 0 && (*ls)[n] == '.') {
            t->metric = (enum thr_metric)m;
            *ls += n + 1;
            *have_metric = true;
            break;
        }
    }
    if (*have_metric && t->metric == THR_LATENCY && !*have_group)
        *have_group = take_group(ls, le, &t->group);
    if (*have_group && t->metric != THR_LATENCY)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "a group (all., ok., timeout., ...) applies to latency only: %s has one histogram of every "
                         "request",
                         METRICS[t->metric]);
    return 0;
}

/* A statistic of a histogram (pNN, mean, stdev, min, max, count) compared with a duration (a
 * count with a number). *is_stat false: ls is not one. */
static int parse_stat(const char *ls, size_t sl, const char *value, struct run_threshold *t, bool *is_stat, char *err,
                      size_t errlen)
{
    bool is_pct = sl >= 2 && ls[0] == 'p' && (isdigit((unsigned char)ls[1]));
    *is_stat = is_pct;
    static const char *const STATS[] = {"mean", "stdev", "min", "max", "count"};
    for (size_t i = 0; i < 5 && !*is_stat; i++)
        if (sl == strlen(STATS[i]) && strncmp(ls, STATS[i], sl) == 0)
            *is_stat = true;
    if (!*is_stat)
        return 0;
    t->kind = THR_STAT;
    snprintf(t->stat, sizeof t->stat, "%.*s", (int)(sl < 15 ? sl : 15), ls);
    if (is_pct) {
        char num[32];
        if (sl - 1 >= sizeof num)
            return knee_fail(err, errlen, KNEE_EINVAL, "bad percentile '%.*s'", (int)sl, ls);
        memcpy(num, ls + 1, sl - 1);
        num[sl - 1] = '\0';
        if (units_parse_double(num, &t->pct) || t->pct <= 0 || t->pct > 100)
            return knee_fail(err, errlen, KNEE_EINVAL, "bad percentile '%.*s' (use p50, p99, p99.9)", (int)sl, ls);
        snprintf(t->stat, sizeof t->stat, "p");
    }
    if (strcmp(t->stat, "count") == 0) {
        if (units_parse_double(value, &t->value))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a number", value);
    } else {
        uint64_t ns;
        if (units_parse_duration_ns(value, NS_PER_MS, &ns))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a duration such as 250ms or 1s", value);
        t->value = (double)ns / 1e6;
    }
    return 0;
}

/* status.CODE or status.CODE_rate (CODE: 404, 5xx, other) at ls (sl bytes, after "status."). */
static int parse_status(const char *ls, size_t sl, const char *value, struct run_threshold *t, char *err, size_t errlen)
{
    bool share = sl > 5 && strncmp(ls + sl - 5, "_rate", 5) == 0;
    size_t cl = share ? sl - 5 : sl;
    if (cl == 5 && strncmp(ls, "other", 5) == 0) {
        t->status_lo = t->status_hi = -1;
    } else if (cl == 3 && ls[0] >= '1' && ls[0] <= '5' &&
               ((ls[1] == 'x' && ls[2] == 'x') || (ls[1] == 'X' && ls[2] == 'X'))) {
        t->status_lo = (ls[0] - '0') * 100;
        t->status_hi = t->status_lo + 99;
    } else if (cl == 3 && isdigit((unsigned char)ls[0]) && isdigit((unsigned char)ls[1]) &&
               isdigit((unsigned char)ls[2]) && atoi(ls) >= RUN_STATUS_MIN && atoi(ls) <= RUN_STATUS_MAX) {
        t->status_lo = t->status_hi = (ls[0] - '0') * 100 + (ls[1] - '0') * 10 + (ls[2] - '0');
    } else {
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "unknown status 'status.%.*s' (use a status 100 .. 599, a class 1xx .. 5xx or other, e.g. "
                         "status.5xx==0, status.404<10, status.5xx_rate<1%%)",
                         (int)sl, ls);
    }
    snprintf(t->stat, sizeof t->stat, "status.%.*s", (int)(sl < 16 ? sl : 16), ls);
    if (share) {
        t->kind = THR_STATUS_SHARE;
        if (units_parse_share(value, &t->value))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a share such as 1%% or 0.01", value);
        return 0;
    }
    t->kind = THR_STATUS;
    uint64_t n;
    if (units_parse_count(value, &n))
        return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a count", value);
    t->value = (double)n;
    return 0;
}

/* A quantity of the run without a metric: a status code's count or share, sent_on_schedule, a rate per second,
 * error_rate, an outcome's share (<outcome>_rate) or a count. */
static int parse_quantity(const char *ls, const char *le, const char *value, struct run_threshold *t, char *err,
                          size_t errlen)
{
    size_t sl = (size_t)(le - ls);
    if (sl > 7 && strncmp(ls, "status.", 7) == 0)
        return parse_status(ls + 7, sl - 7, value, t, err, errlen);
    if (sl == 16 && strncmp(ls, "sent_on_schedule", 16) == 0) {
        t->kind = THR_SCHEDULE;
        snprintf(t->stat, sizeof t->stat, "on_schedule");
        if (units_parse_share(value, &t->value))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a share such as 99%% or 0.99", value);
        return 0;
    }
    for (size_t i = 0; i < sizeof PER_S / sizeof *PER_S; i++)
        if (sl == strlen(PER_S[i]) && strncmp(ls, PER_S[i], sl) == 0) {
            t->kind = THR_PER_S;
            snprintf(t->stat, sizeof t->stat, "%s", PER_S[i]);
            if (units_parse_rate(value, &t->value) && units_parse_double(value, &t->value))
                return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a rate", value);
            return 0;
        }
    if (sl == 10 && strncmp(ls, "error_rate", 10) == 0) {
        t->kind = THR_ERROR_RATE;
        snprintf(t->stat, sizeof t->stat, "error_rate");
        if (units_parse_share(value, &t->value))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a share such as 1%% or 0.01", value);
        return 0;
    }
    if (sl > 5 && strncmp(le - 5, "_rate", 5) == 0) {
        int o = outcome_by_name(ls, sl - 5);
        if (o == OUTCOME_UNKNOWN || o == THR_COUNT_PLANNED)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "unknown share '%.*s' (use goodput_rate, error_rate, dropped_rate, ...)", (int)sl, ls);
        t->kind = THR_SHARE;
        t->outcome = o;
        snprintf(t->stat, sizeof t->stat, "%.*s", (int)(sl < 15 ? sl : 15), ls);
        if (units_parse_share(value, &t->value))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a share such as 1%% or 0.01", value);
        return 0;
    }
    int o = outcome_by_name(ls, sl);
    if (o != OUTCOME_UNKNOWN) {
        t->kind = THR_COUNT;
        t->outcome = o;
        snprintf(t->stat, sizeof t->stat, "%.*s", (int)(sl < 15 ? sl : 15), ls);
        uint64_t n;
        if (units_parse_count(value, &n))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a count", value);
        t->value = (double)n;
        return 0;
    }
    return knee_fail(err, errlen, KNEE_EINVAL,
                     "unknown quantity '%.*s' (use p99, mean, max, error_rate, goodput_rate, dropped, "
                     "sent_per_s, status.5xx, ... with an optional TARGET., all./ok./timeout. ... and "
                     "latency./service./ttfb./lag./connect./first_event./event_gap. prefix)",
                     (int)sl, ls);
}

/* "stageN." before anything else (unless a target has that name): t->stage = N - 1. */
static int parse_stage_prefix(const char **ls, const char *le, const char *const *names, size_t nnames,
                              struct run_threshold *t, char *err, size_t errlen)
{
    const char *s = *ls;
    if (le - s < 7 || strncmp(s, "stage", 5) != 0 || !isdigit((unsigned char)s[5]))
        return 0;
    const char *p = s + 5;
    unsigned long n = 0;
    while (p < le && isdigit((unsigned char)*p) && n < 100000)
        n = n * 10 + (unsigned long)(*p++ - '0');
    if (p >= le || *p != '.')
        return 0;
    for (size_t i = 0; i < nnames; i++)
        if (strlen(names[i]) == (size_t)(p - s) && strncmp(names[i], s, (size_t)(p - s)) == 0)
            return 0; /* the target's name */
    if (n < 1 || n > RUN_MAX_STAGES)
        return knee_fail(err, errlen, KNEE_EINVAL, "stage%lu: stages count from 1 (stage1.p99<250ms), at most %d", n,
                         RUN_MAX_STAGES);
    t->stage = (int)(n - 1);
    *ls = p + 1;
    return 0;
}

/* What a stage keeps: its ok latency, its counts, shares, error_rate and rates (no other metric,
 * group or status, no sent_on_schedule); the quantity is parsed as the run's would be. */
static int stage_check(struct run_threshold *t, bool is_stat, const char *value, const char *ls, const char *le,
                       char *err, size_t errlen)
{
    if (is_stat && (t->metric != THR_LATENCY || t->group != RUN_GROUP_OK))
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "a stage keeps the latency of its ok requests only (stage2.p99, stage2.max, ...)");
    if (t->target != THR_ALL_TARGETS)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "a stage's results are of every target together: no TARGET. after it");
    if (is_stat)
        return 0;
    int r = parse_quantity(ls, le, value, t, err, errlen);
    if (!r && (t->kind == THR_STATUS || t->kind == THR_STATUS_SHARE || t->kind == THR_SCHEDULE))
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "a stage keeps counts, shares, error_rate, latency and rates per second, not %s", t->stat);
    return r;
}

int record_threshold_parse_names(const char *expr, const char *const *names, size_t nnames, struct run_threshold *t,
                                 char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->target = THR_ALL_TARGETS;
    t->stage = THR_NO_STAGE;
    t->measured = NAN;
    snprintf(t->expr, sizeof t->expr, "%s", expr);
    const char *ls, *le, *vs, *ve;
    int r = parse_op(expr, t, &ls, &le, &vs, &ve, err, errlen);
    bool have_group = false, have_metric = false;
    if (!r)
        r = parse_stage_prefix(&ls, le, names, nnames, t, err, errlen);
    if (!r)
        r = parse_prefix(&ls, le, names, nnames, t, &have_group, &have_metric, err, errlen);
    if (r)
        return r;
    size_t sl = (size_t)(le - ls);
    char value[64];
    if ((size_t)(ve - vs) >= sizeof value)
        return knee_fail(err, errlen, KNEE_EINVAL, "value '%.*s' too long", (int)(ve - vs), vs);
    memcpy(value, vs, (size_t)(ve - vs));
    value[ve - vs] = '\0';
    bool is_stat;
    r = parse_stat(ls, sl, value, t, &is_stat, err, errlen);
    if (!r && t->stage != THR_NO_STAGE)
        return stage_check(t, is_stat, value, ls, le, err, errlen);
    if (r || is_stat)
        return r;
    if (have_metric || have_group)
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s' is not a statistic (pNN, mean, stdev, min, max, count)",
                         (int)sl, ls);
    return parse_quantity(ls, le, value, t, err, errlen);
}

static const struct hdr *metric_hist(const struct run_target_result *r, enum thr_metric m, int group)
{
    switch (m) {
    case THR_SERVICE:
        return &r->service;
    case THR_TTFB:
        return &r->ttfb;
    case THR_LAG:
        return &r->lag;
    case THR_CONNECT:
        return &r->connect;
    case THR_FIRST_EVENT:
        return &r->stream.first_event;
    case THR_EVENT_GAP:
        return &r->stream.event_gap;
    case THR_LATENCY:
    default:
        return group == THR_GROUP_ALL ? &r->latency_all : &r->latency[group];
    }
}

static uint64_t count_of(const struct run_counts *c, int o)
{
    if (o == THR_COUNT_PLANNED)
        return c->planned;
    if (o == THR_COUNT_SENT)
        return c->sent;
    return c->outcome[o];
}

/* The responses of the statuses t counts (status_lo .. status_hi; -1: "other"). */
static uint64_t status_count(const struct run_threshold *t, const struct run_status_counts *s)
{
    if (t->status_lo < 0)
        return s->n[RUN_STATUS_OTHER];
    uint64_t n = 0;
    for (int st = t->status_lo; st <= t->status_hi; st++)
        n += s->n[record_status_slot(st)];
    return n;
}

/* Completed requests: every outcome but dropped and cancelled. */
static uint64_t completed_of(const struct run_counts *c)
{
    uint64_t n = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED && o != OUTCOME_CANCELLED)
            n += c->outcome[o];
    return n;
}

/* A stage's results as a target's, for the evaluation below: its counts, rates and ok latency
 * (histogram or, read back from JSON, statistics). */
static void stage_view(const struct run_stage_result *s, struct run_target_result *v)
{
    memset(v, 0, sizeof *v);
    v->counts = s->counts;
    v->rates = s->rates;
    v->latency[RUN_GROUP_OK] = s->latency; /* shallow: read only */
}

void record_threshold_eval(struct run_threshold *t, const struct run_record *res)
{
    struct run_target_result view;
    const struct run_target_result *r = t->target != THR_ALL_TARGETS ? &res->targets[t->target] : &res->all;
    if (t->stage != THR_NO_STAGE) {
        if ((size_t)t->stage >= res->nstages) {
            t->measured = NAN;
            t->pass = false;
            return;
        }
        stage_view(&res->stages[t->stage], &view);
        r = &view;
    }
    const struct run_counts *c = &r->counts;
    double v = NAN;
    switch (t->kind) {
    case THR_STAT: {
        const struct hdr *h = metric_hist(r, t->metric, t->group);
        if (strcmp(t->stat, "count") == 0) {
            v = h->counts ? (double)h->total_count : 0;
            break;
        }
        if (!h->counts || !h->total_count)
            break;
        if (strcmp(t->stat, "p") == 0)
            v = (double)hdr_value_at_percentile(h, t->pct) / 1e6;
        else if (strcmp(t->stat, "mean") == 0)
            v = hdr_mean(h) / 1e6;
        else if (strcmp(t->stat, "stdev") == 0)
            v = hdr_stdev(h) / 1e6;
        else if (strcmp(t->stat, "min") == 0)
            v = (double)hdr_min(h) / 1e6;
        else if (strcmp(t->stat, "max") == 0)
            v = (double)hdr_max(h) / 1e6;
        break;
    }
    case THR_COUNT:
        v = (double)count_of(c, t->outcome);
        break;
    case THR_SHARE:
        if (c->planned)
            v = (double)count_of(c, t->outcome) / (double)c->planned;
        break;
    case THR_ERROR_RATE: {
        uint64_t failed = c->outcome[OUTCOME_REJECTED] + c->outcome[OUTCOME_HTTP_ERROR] + c->outcome[OUTCOME_INVALID] +
                          c->outcome[OUTCOME_TRANSPORT] + c->outcome[OUTCOME_TIMEOUT];
        if (c->sent)
            v = (double)failed / (double)c->sent;
        break;
    }
    case THR_PER_S: /* by event time over the window (record/rates.c) */
        if (strcmp(t->stat, "planned_per_s") == 0)
            v = r->rates.planned;
        else if (strcmp(t->stat, "sent_per_s") == 0)
            v = r->rates.sent;
        else if (strcmp(t->stat, "completed_per_s") == 0)
            v = r->rates.completed;
        else if (strcmp(t->stat, "achieved_send_per_s") == 0)
            v = r->rates.achieved_send;
        else
            v = r->rates.goodput;
        break;
    case THR_SCHEDULE:
        if (c->planned)
            v = (double)c->sent_on_time / (double)c->planned;
        break;
    case THR_STATUS:
        v = (double)status_count(t, &r->status);
        break;
    case THR_STATUS_SHARE:
        if (completed_of(c))
            v = (double)status_count(t, &r->status) / (double)completed_of(c);
        break;
    }
    t->measured = v;
    if (isnan(v)) {
        t->pass = false;
        return;
    }
    switch (t->op) {
    case THR_LT:
        t->pass = v < t->value;
        break;
    case THR_LE:
        t->pass = v <= t->value;
        break;
    case THR_GT:
        t->pass = v > t->value;
        break;
    case THR_GE:
        t->pass = v >= t->value;
        break;
    case THR_EQ:
        t->pass = v == t->value;
        break;
    case THR_NE:
        t->pass = v != t->value;
        break;
    }
}

const char *record_threshold_unit(const struct run_threshold *t)
{
    switch (t->kind) {
    case THR_STAT:
        return strcmp(t->stat, "count") == 0 ? "" : "ms";
    case THR_SHARE:
    case THR_ERROR_RATE:
    case THR_SCHEDULE:
    case THR_STATUS_SHARE:
        return "%";
    case THR_PER_S:
        return "/s";
    default:
        return "";
    }
}

void record_set_thresholds(struct run_record *rec, const struct run_threshold *thr, size_t n)
{
    free(rec->thresholds);
    rec->thresholds = xcalloc(n ? n : 1, sizeof *rec->thresholds);
    rec->nthresholds = n;
    for (size_t i = 0; i < n; i++) {
        struct record_threshold *t = &rec->thresholds[i];
        snprintf(t->expr, sizeof t->expr, "%s", thr[i].expr);
        snprintf(t->unit, sizeof t->unit, "%s", record_threshold_unit(&thr[i]));
        t->measured = thr[i].measured;
        t->pass = thr[i].pass;
    }
}
