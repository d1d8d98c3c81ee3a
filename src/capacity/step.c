/* One step judged: did the generator deliver the planned rate, and did every SLO term pass?
 * capacity_step_delivered is the one reader of the engine's rate fields (see capacity.h). */
#include "capacity/capacity.h"

#include "core/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double capacity_delivered_floor(const struct run_record *res)
{
    /* The window's edges are hard and a send is late by its lag: a request planned in the last
     * lag of the window is sent after it, while a warm-up request sent late lands inside it.
     * The two cancel when the lag is the same at both ends; when it grew, the end loses up to
     * planned x lag_max requests, which are not a shortfall of the generator (its verdict
     * judges the lag itself). 1 s at 287/s with the lag at 10 ms near the end: 3 requests, 1%. */
    const struct run_rates *r = &res->all.rates;
    struct run_summary lag;
    record_summary_of(&res->all.lag, &lag);
    double edge = isfinite(lag.max) && r->window_s > 0 ? lag.max / 1e3 / r->window_s : 0;
    return CAPACITY_DELIVERED - edge;
}

bool capacity_step_delivered(const struct run_record *res, const struct run_generator_verdict *gen,
                             double *achieved_per_s, char *why, size_t whylen)
{
    /* The merge point with the engine's rate definitions (docs/FORMATS.md, "Rates"): the sends
     * inside the window against the plan's own events inside the same window, both counted by
     * event time (record/rates.c). rates.achieved_send, the generator's pace from its first to its
     * last send, is not used: it counts late sends after the window, and over a Poisson plan its
     * two end gaps move it by about sqrt(2)/n, a percent at 200 requests, enough to cross the
     * 99% floor by chance. The generator's verdict (record_generator_judge) is the engine's, or the
     * caller's (the probe judges its lag against its own limit). */
    if (!gen)
        gen = &res->generator;
    double planned = res->all.rates.planned, sent = res->all.rates.sent;
    double floor_share = capacity_delivered_floor(res);
    if (achieved_per_s)
        *achieved_per_s = sent;
    bool short_send = !(planned > 0 && sent >= floor_share * planned);
    bool delivered = !short_send && !gen->limited;
    if (why && whylen) {
        why[0] = '\0';
        if (!(planned > 0))
            snprintf(why, whylen, "not delivered: nothing was planned in the window");
        else if (short_send)
            snprintf(why, whylen,
                     "not delivered: sent %.1f%% of the plan in the window (%.1f of %.1f/s; floor %.1f%%: %.0f%% "
                     "less what the lag carries past its end)",
                     100 * (isfinite(sent) ? sent / planned : 0), isfinite(sent) ? sent : 0, planned, 100 * floor_share,
                     100 * CAPACITY_DELIVERED);
        else if (!delivered)
            snprintf(why, whylen, "not delivered: generator-limited: %.*s", (int)(whylen > 40 ? whylen - 40 : 0),
                     gen->why);
    }
    return delivered;
}

int capacity_latency_group(const struct run_threshold *slo, size_t nslo)
{
    for (size_t i = 0; i < nslo; i++)
        if (slo[i].kind == THR_STAT && slo[i].metric == THR_LATENCY)
            return slo[i].group;
    return RUN_GROUP_OK;
}

const char *capacity_latency_group_name(int group)
{
    return group == THR_GROUP_ALL ? "all" : record_group_name((enum run_group)group);
}

/* "p99 123.4 ms (SLO p99<100ms)" for a failed term. */
static void term_text(const struct run_threshold *t, char *buf, size_t len)
{
    const char *unit = record_threshold_unit(t);
    char mv[48];
    if (!isfinite(t->measured))
        snprintf(mv, sizeof mv, "no samples");
    else if (strcmp(unit, "%") == 0)
        units_fmt_share(t->measured, 4, mv, sizeof mv);
    else
        snprintf(mv, sizeof mv, "%.4g%s%s", t->measured, *unit && strcmp(unit, "/s") ? " " : "", unit);
    snprintf(buf, len, "%s measured %s", t->expr, mv);
}

static void add_reason(struct capacity_step *s, const char *text)
{
    size_t n = strlen(s->reason);
    if (n + 3 >= sizeof s->reason)
        return;
    int room = (int)(sizeof s->reason - n - 3); /* a long reason is cut, not overflowed */
    snprintf(s->reason + n, sizeof s->reason - n, "%s%.*s", n ? "; " : "", room, text);
}

/* A TLS verification failure has a flag that fixes it: name the cause and the flag (an https
 * target with a self-signed certificate otherwise looks like a target that is down). */
static void tls_reason(struct capacity_step *s, const struct run_counts *c)
{
    static const struct {
        enum run_transport_cause k;
        const char *fix;
    } fixes[] = {
        {RUN_TC_TLS_VERIFY, "the certificate did not verify: --cacert FILE or --insecure"},
        {RUN_TC_TLS_HOSTNAME, "the certificate does not name the host: --insecure"},
        {RUN_TC_TLS_EXPIRED, "the certificate expired or is not valid yet: --insecure"},
        {RUN_TC_TLS_CERT_REQUIRED, "the server requires a client certificate: --cert FILE --key FILE"},
        {RUN_TC_TLS_BAD_CERT, "the server refused the client certificate (--cert)"},
    };
    for (size_t i = 0; i < sizeof fixes / sizeof fixes[0]; i++) {
        uint64_t n = c->transport_cause[fixes[i].k];
        if (!n)
            continue;
        char text[160];
        snprintf(text, sizeof text, "%s %llu: %s", record_transport_cause_name(fixes[i].k), (unsigned long long)n,
                 fixes[i].fix);
        for (char *p = text; *p && *p != ' '; p++) /* "tls_verify" as the summary writes it */
            if (*p == '_')
                *p = ' ';
        add_reason(s, text);
    }
}

static void step_eval(const struct run_record *res, bool open_loop, const struct run_generator_verdict *gen,
                      const struct run_threshold *slo, size_t nslo, struct capacity_step *out)
{
    memset(out, 0, sizeof *out);
    const struct run_counts *c = &res->all.counts;
    out->requests = c->planned;
    int group = capacity_latency_group(slo, nslo);
    struct run_summary lat, lag;
    record_summary_of(group == THR_GROUP_ALL ? &res->all.latency_all : &res->all.latency[group], &lat);
    record_summary_of(&res->all.lag, &lag);
    out->p50_ms = lat.p50;
    out->p99_ms = lat.p99;
    out->lag_p99_ms = lag.p99;
    uint64_t failed = c->outcome[OUTCOME_REJECTED] + c->outcome[OUTCOME_HTTP_ERROR] + c->outcome[OUTCOME_INVALID] +
                      c->outcome[OUTCOME_TRANSPORT] + c->outcome[OUTCOME_TIMEOUT];
    out->error_rate = c->sent ? (double)failed / (double)c->sent : NAN;
    out->ran = !res->interrupted && res->accounting_ok;
    if (res->interrupted)
        add_reason(out, "interrupted");
    else if (!res->accounting_ok)
        add_reason(out, "the accounting identities broke (a bug: please report it)");
    bool ok = out->ran;
    char why[CAPACITY_REASON_MAX];
    if (open_loop) {
        out->planned = res->all.rates.planned;
        out->delivered = capacity_step_delivered(res, gen, &out->achieved, why, sizeof why);
        if (!out->delivered) {
            add_reason(out, why);
            ok = false;
        }
    } else {
        out->planned = 0;
        out->achieved = res->all.rates.completed;
        out->delivered = true;
    }
    if (out->ran && res->no_ok) {
        add_reason(out, "not one request ended ok (the target is down, refuses, or every request failed)");
        tls_reason(out, c);
        ok = false;
    }
    for (size_t i = 0; i < nslo; i++) {
        struct run_threshold t = slo[i];
        record_threshold_eval(&t, res);
        if (t.pass)
            continue;
        ok = false;
        term_text(&t, why, sizeof why);
        add_reason(out, why);
    }
    out->held = ok;
}

void capacity_step_eval(const struct run_record *res, bool open_loop, const struct run_threshold *slo, size_t nslo,
                        struct capacity_step *out)
{
    step_eval(res, open_loop, NULL, slo, nslo, out);
}

void capacity_probe_eval(const struct run_record *res, double lag_limit_ms, double timer_slack_ms,
                         struct capacity_step *out)
{
    /* main's one rule, record_generator_judge, with the probe's lag limit as its hard limit: the
     * probe's own latency is the null target's (a tenth of a millisecond), so the relative
     * rule would hold the probe's lag against nothing the candidate's steps are judged on */
    struct run_generator_input in;
    record_generator_input(res, &in);
    in.open_loop = true; /* a probe is an open-loop window */
    in.lag_limit_ms = lag_limit_ms;
    in.timer_slack_ms = timer_slack_ms;
    struct run_generator_verdict v;
    record_generator_judge(&in, &v);
    if (v.over_limit) /* the judge names --lag-limit; the probe's limit may come from elsewhere */
        snprintf(v.why, sizeof v.why, "%slag p99 %.3f ms%s above the probe's lag limit %.3g ms",
                 v.short_send ? "short sends and " : "", record_lag_beyond_slack(in.lag_p99_ms, timer_slack_ms),
                 timer_slack_ms > 0 ? " beyond --timer-slack" : "", lag_limit_ms);
    step_eval(res, true, &v, NULL, 0, out);
}

static uint64_t lag_limit_ns_of(const struct capacity_config *cfg)
{
    struct capacity_load load;
    capacity_load_of(cfg, &load);
    return load.lag_limit_ns;
}

double capacity_probe_lag_limit_ms(const struct capacity_config *cfg, char *source, size_t len)
{
    const char *what = NULL;
    char buf[200];
    double ms = 0;
    if (cfg->probe_lag_limit_ns) {
        ms = (double)cfg->probe_lag_limit_ns / 1e6;
        what = "--probe-lag-limit";
    } else if (lag_limit_ns_of(cfg)) {
        ms = (double)lag_limit_ns_of(cfg) / 1e6;
        what = "--lag-limit";
    } else {
        const struct run_threshold *tight = NULL;
        for (size_t i = 0; i < cfg->nslo; i++) {
            const struct run_threshold *t = &cfg->slo[i];
            bool bound = t->kind == THR_STAT && t->metric == THR_LATENCY && (t->op == THR_LT || t->op == THR_LE) &&
                         strcmp(t->stat, "count") != 0 && strcmp(t->stat, "stdev") != 0 && t->value > 0;
            if (bound && (!tight || t->value < tight->value))
                tight = t;
        }
        if (tight) {
            ms = RUN_LAG_LATENCY_SHARE * tight->value;
            snprintf(buf, sizeof buf, "%.0f%% of the SLO's %s", 100 * RUN_LAG_LATENCY_SHARE, tight->expr);
        } else {
            double rate = cfg->probe_rate > 0 ? cfg->probe_rate : CAPACITY_PROBE_SHARE * cfg->rates[cfg->nrates - 1];
            ms = RUN_LAG_BURST_GAPS * 1e3 / rate;
            snprintf(buf, sizeof buf, "%d planned sends at the probe rate: no latency term in the SLO",
                     RUN_LAG_BURST_GAPS);
        }
        double floor_ms = (double)RUN_LAG_FLOOR_NS / 1e6;
        if (ms < floor_ms) {
            ms = floor_ms;
            snprintf(buf, sizeof buf, "the floor of knee run's lag rule");
        }
        what = buf;
    }
    if (source && len)
        snprintf(source, len, "%s", what);
    return ms;
}
