/* The summary model (struct run_view) filled from a finished run or from its JSON document.
 * The two fillers put the same values in the same fields; all the layout is in text.c, so the
 * terminal and knee report print one text from one printer. The JSON holds every number the
 * text prints as the double the run computed (core/json writes the shortest form that reads
 * back exactly), and integers in ns where the text formats ns (resolve, think, lag limit)
 * are recovered with llround, which is exact below 2^53 ns. */
#include "runreport/runreport.h"

#include "core/err.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- from a run ------------------------------------------------------------------------------ */

static void view_target(struct run_view_target *d, const struct run_target_result *t, double own_rate)
{
    snprintf(d->name, sizeof d->name, "%s", t->name);
    snprintf(d->url, sizeof d->url, "%s", t->url);
    snprintf(d->address, sizeof d->address, "%s", t->address);
    d->resolve_ns = t->resolve_ns;
    d->planned_rate = t->planned_rate;
    d->own_rate = own_rate;
    d->connections = t->connections;
    d->counts = t->counts;
    d->warmup_counts = t->warmup_counts;
    d->bytes_in_total = t->counts.bytes_in + t->warmup_counts.bytes_in;
    d->events = t->events;
    d->rates = t->rates;
    run_summarize(&t->latency_all, &d->latency_all);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        run_summarize(&t->latency[g], &d->latency[g]);
    run_summarize(&t->service, &d->service);
    run_summarize(&t->ttfb, &d->ttfb);
    run_summarize(&t->lag, &d->lag);
    run_summarize(&t->connect, &d->connect);
    run_summarize(&t->tls, &d->tls);
    d->https = t->https;
    d->pc = t->pc;
    d->nst = t->nst < RUN_ST_MAX_NAMES ? t->nst : RUN_ST_MAX_NAMES;
    for (size_t i = 0; i < d->nst; i++) {
        snprintf(d->st[i].name, sizeof d->st[i].name, "%s", t->st[i].name);
        run_summarize(&t->st[i].dur, &d->st[i].dur);
    }
}

void run_view_init(struct run_view *v, const struct run_config *cfg, const struct run_result *res,
                   const struct run_threshold *thr, size_t nthr, bool verbose)
{
    memset(v, 0, sizeof *v);
    v->open_loop = cfg->open_loop;
    v->poisson = cfg->arrivals == RUN_ARRIVALS_POISSON;
    v->ramp = cfg->ramp;
    v->drop_when_busy = cfg->when_busy == RUN_BUSY_DROP;
    v->keepalive = cfg->keepalive;
    v->retry_stale = cfg->retry_stale;
    v->seed = cfg->seed;
    v->rate = cfg->rate > 0 ? cfg->rate : 0;
    v->ramp_from = cfg->ramp_from;
    v->ramp_to = cfg->ramp_to;
    v->think_ns = cfg->think_ns;
    v->warmup_ns = cfg->warmup_ns;
    v->lag_limit_ns = cfg->lag_limit_ns;
    v->timer_slack_ns = cfg->open_loop ? cfg->timer_slack_ns : 0;
    v->requests = cfg->requests;
    v->duration_s = cfg->duration_ns ? (double)cfg->duration_ns / 1e9 : 0;
    v->threads = res->threads;
    v->pool_cap = res->pool_cap;
    if (res->io != RUN_IO_AUTO)
        snprintf(v->io, sizeof v->io, "%s", run_io_name(res->io));
    v->http = cfg->http;
    v->tls_insecure = cfg->tls_insecure;
    v->tls_no_resume = cfg->tls_no_resume;
    v->streams = cfg->streams;
    v->ntargets = res->ntargets;
    v->targets = xcalloc(res->ntargets ? res->ntargets : 1, sizeof *v->targets);
    for (size_t i = 0; i < res->ntargets; i++) {
        double own = cfg->targets && i < cfg->ntargets && cfg->targets[i].rate > 0 ? cfg->targets[i].rate : 0;
        view_target(&v->targets[i], &res->targets[i], own);
    }
    view_target(&v->all, &res->all, 0);
    v->window_start_s = res->window_start_s;
    v->window_end_s = res->window_end_s;
    v->window_s = res->window_s;
    v->elapsed_s = res->elapsed_s;
    v->gen_cpu = res->env.gen_cpu;
    v->sent_on_schedule = res->sent_on_schedule;
    v->interrupted = res->interrupted;
    v->accounting_ok = res->accounting_ok;
    v->generator_limited = res->generator_limited;
    v->attention = res->attention;
    v->verbose = verbose;
    v->nwarnings = res->nwarnings;
    v->warnings = xcalloc(res->nwarnings ? res->nwarnings : 1, sizeof *v->warnings);
    for (size_t i = 0; i < res->nwarnings; i++)
        v->warnings[i] = xstrdup(res->warnings[i]);
    v->nthresholds = nthr;
    v->thresholds = xcalloc(nthr ? nthr : 1, sizeof *v->thresholds);
    for (size_t i = 0; i < nthr; i++) {
        struct run_view_threshold *t = &v->thresholds[i];
        snprintf(t->expr, sizeof t->expr, "%s", thr[i].expr);
        snprintf(t->unit, sizeof t->unit, "%s", run_threshold_unit(&thr[i]));
        t->measured = thr[i].measured;
        t->pass = thr[i].pass;
    }
}

void run_view_release(struct run_view *v)
{
    for (size_t i = 0; i < v->nwarnings; i++)
        free(v->warnings[i]);
    free(v->warnings);
    free(v->targets);
    free(v->thresholds);
    memset(v, 0, sizeof *v);
}

/* ---- from the JSON --------------------------------------------------------------------------- */

static const json_t *get(const json_t *o, const char *key)
{
    return o && json_is_object(o) ? json_object_get(o, key) : NULL;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A count: 0 when missing, negative or not a number. */
static uint64_t count(const json_t *o, const char *key)
{
    const json_t *v = get(o, key);
    if (json_is_integer(v))
        return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
    double d = json_is_real(v) ? json_real_value(v) : 0;
    return d > 0 ? (d < 1.8e19 ? (uint64_t)d : UINT64_MAX) : 0;
}

/* ns from a value the JSON holds in unit_s seconds (1e-3 for ms); 0 when missing. */
static uint64_t ns_of(const json_t *o, const char *key, double unit_s)
{
    double d = num(o, key);
    return isfinite(d) && d > 0 && d < 9e18 * unit_s / 1e9 ? (uint64_t)llround(d * unit_s * 1e9) : 0;
}

static const char *str(const json_t *o, const char *key)
{
    const json_t *v = get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static bool flag(const json_t *o, const char *key)
{
    return json_is_true(get(o, key));
}

static void jsummary(const json_t *s, struct run_summary *d)
{
    d->count = count(s, "count");
    d->mean = num(s, "mean");
    d->stdev = num(s, "stdev");
    d->min = num(s, "min");
    d->max = num(s, "max");
    d->p50 = num(s, "p50");
    d->p90 = num(s, "p90");
    d->p95 = num(s, "p95");
    d->p99 = num(s, "p99");
    d->p999 = num(s, "p99.9");
}

/* An "accounting" object: the counts, the outcomes, the transport causes and retries. */
static void jcounts(const json_t *acc, struct run_counts *c)
{
    c->planned = count(acc, "planned");
    c->sent = count(acc, "sent");
    c->dropped = count(acc, "dropped");
    c->queued = count(acc, "queued");
    c->queue_overflow = count(acc, "queue_overflow");
    const json_t *oc = get(acc, "outcomes");
    for (int o = 0; o < OUTCOME_COUNT; o++)
        c->outcome[o] = count(oc, reqlog_outcome_name((enum reqlog_outcome)o));
    const json_t *tc = get(acc, "transport_causes");
    for (int k = 0; k < RUN_TC_COUNT; k++)
        c->transport_cause[k] = count(tc, run_transport_cause_name((enum run_transport_cause)k));
    c->retries = count(acc, "retries");
}

/* A target's "tls" (null for a plain target), "protocols", "tls_versions", "tls_handshakes"
 * and "h2" (knee-run/2 with TLS and HTTP/2; missing: a plain HTTP/1.1 target). */
static void jtransport(struct run_view_target *d, const json_t *t)
{
    d->https = run_view_read_transport(t, &d->pc);
    jsummary(get(t, "tls"), &d->tls);
}

bool run_view_read_transport(const json_t *t, struct run_proto_counts *pc)
{
    memset(pc, 0, sizeof *pc);
    const json_t *p = get(t, "protocols");
    pc->http1 = count(p, "http/1.1");
    pc->h2 = count(p, "h2");
    const json_t *tv = get(t, "tls_versions");
    for (int k = 0; k < RUN_TLS_VERSIONS; k++)
        pc->tls_version[k] = count(tv, run_tls_version_name(k));
    const json_t *hs = get(t, "tls_handshakes");
    pc->tls_full = count(hs, "full");
    pc->tls_resumed = count(hs, "resumed");
    pc->tls_failed = count(hs, "failed");
    const json_t *h2 = get(t, "h2");
    pc->h2_streams = count(h2, "streams");
    /* null: unlimited (or no HTTP/2 connection, when the text prints no h2 line either) */
    pc->h2_max_concurrent = json_is_number(get(h2, "max_concurrent")) ? count(h2, "max_concurrent") : UINT64_MAX;
    pc->h2_rst = count(h2, "rst_received");
    pc->h2_refused = count(h2, "refused");
    pc->h2_goaway = count(h2, "goaway");
    pc->h2_goaway_streams = count(h2, "goaway_refused");
    pc->h2_retried = count(h2, "retried");
    pc->h2_stalls = count(h2, "flow_control_stalls");
    return json_is_object(get(t, "tls"));
}

static void jtarget(struct run_view_target *d, const json_t *t)
{
    snprintf(d->name, sizeof d->name, "%s", str(t, "name"));
    snprintf(d->url, sizeof d->url, "%s", str(t, "url"));
    snprintf(d->address, sizeof d->address, "%s", str(t, "address"));
    d->resolve_ns = ns_of(t, "resolve_ms", 1e-3);
    d->planned_rate = num(t, "planned_rate");
    double own = num(t, "own_rate");
    d->own_rate = isfinite(own) && own > 0 ? own : 0;
    d->connections = (uint32_t)count(t, "clients");
    jcounts(get(t, "accounting"), &d->counts);
    jcounts(get(t, "warmup"), &d->warmup_counts);
    const json_t *conn = get(t, "connections");
    d->counts.conns_opened = count(conn, "opened");
    d->counts.conns_failed = count(conn, "failed");
    d->counts.conns_closed_by_peer = count(conn, "closed_by_server");
    d->counts.conns_unsolicited = count(conn, "unsolicited_bytes");
    d->bytes_in_total = count(t, "bytes_in");
    const json_t *ev = get(t, "events");
    d->events.planned = count(ev, "planned");
    d->events.sent = count(ev, "sent");
    d->events.completed = count(ev, "completed");
    d->events.ok = count(ev, "ok");
    d->events.sent_before = count(ev, "sent_before_window");
    d->events.sent_late = count(ev, "sent_late");
    d->events.completed_late = count(ev, "completed_late");
    const json_t *r = get(t, "rates");
    d->rates.planned = num(r, "planned");
    d->rates.sent = num(r, "sent");
    d->rates.completed = num(r, "completed");
    d->rates.goodput = num(r, "goodput");
    d->rates.achieved_send = num(r, "achieved_send");
    d->rates.sending_s = num(r, "sending_s");
    d->rates.sent_late = d->events.sent_late;
    d->rates.completed_late = d->events.completed_late;
    jsummary(get(t, "latency"), &d->latency_all);
    const json_t *by = get(t, "latency_by_outcome");
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        jsummary(get(by, run_group_name((enum run_group)g)), &d->latency[g]);
    jsummary(get(t, "service"), &d->service);
    jsummary(get(t, "ttfb"), &d->ttfb);
    jsummary(get(t, "lag"), &d->lag);
    jsummary(get(t, "connect"), &d->connect);
    jtransport(d, t);
    const json_t *st = get(t, "server_timing");
    const char *key;
    const json_t *s;
    if (json_is_object(st))
        json_object_foreach((json_t *)st, key, s)
        {
            if (d->nst == RUN_ST_MAX_NAMES)
                break;
            snprintf(d->st[d->nst].name, sizeof d->st[d->nst].name, "%s", key);
            jsummary(s, &d->st[d->nst].dur);
            d->nst++;
        }
}

int run_view_init_json(struct run_view *v, const struct json_t *root, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    const char *schema = str(root, "schema");
    if (!json_is_object(root) || !run_json_schema_readable(schema))
        return knee_fail(err, errlen, KNEE_EFORMAT, "not a knee run JSON (schema \"%s\", expected \"%s\")", schema,
                         RUN_JSON_SCHEMA);
    const json_t *targets = get(root, "targets");
    const json_t *all = get(root, "all");
    if (!json_is_array(targets) || !json_is_object(all))
        return knee_fail(err, errlen, KNEE_EFORMAT, "\"targets\" must be an array and \"all\" an object");
    const json_t *cfg = get(root, "config");
    v->open_loop = strcmp(str(cfg, "mode"), "closed") != 0;
    v->poisson = strcmp(str(cfg, "arrivals"), "poisson") == 0;
    const json_t *ramp = get(cfg, "ramp");
    v->ramp = json_is_object(ramp);
    v->ramp_from = num(ramp, "from");
    v->ramp_to = num(ramp, "to");
    double rate = num(cfg, "rate");
    v->rate = isfinite(rate) && rate > 0 ? rate : 0;
    v->drop_when_busy = strcmp(str(cfg, "when_busy"), "drop") == 0;
    v->keepalive = flag(cfg, "keepalive");
    v->retry_stale = flag(cfg, "retry_stale");
    v->seed = count(cfg, "seed");
    v->think_ns = ns_of(cfg, "think_s", 1);
    v->warmup_ns = ns_of(cfg, "warmup_s", 1);
    v->lag_limit_ns = ns_of(get(root, "generator"), "lag_limit_ms", 1e-3);
    v->timer_slack_ns = ns_of(cfg, "timer_slack_ms", 1e-3);
    v->requests = count(cfg, "requests");
    double dur = num(cfg, "duration_s");
    v->duration_s = isfinite(dur) && dur > 0 ? dur : 0;
    v->threads = (uint32_t)count(cfg, "threads");
    v->pool_cap = (uint32_t)count(cfg, "pool_cap");
    snprintf(v->io, sizeof v->io, "%s", str(cfg, "io_engine"));
    const json_t *tls = get(cfg, "tls");
    const char *alpn = str(tls, "alpn");
    v->http = strcmp(alpn, "http/1.1") == 0 ? RUN_HTTP_1 : strcmp(alpn, "h2") == 0 ? RUN_HTTP_2 : RUN_HTTP_AUTO;
    v->tls_insecure = json_is_false(get(tls, "verify"));
    v->tls_no_resume = json_is_false(get(tls, "resume"));
    v->streams = (uint32_t)count(cfg, "streams");

    v->ntargets = json_array_size(targets);
    v->targets = xcalloc(v->ntargets ? v->ntargets : 1, sizeof *v->targets);
    for (size_t i = 0; i < v->ntargets; i++)
        jtarget(&v->targets[i], json_array_get(targets, i));
    jtarget(&v->all, all);
    v->window_start_s = num(root, "window_start_s");
    v->window_end_s = num(root, "window_end_s");
    v->window_s = num(root, "window_s");
    v->elapsed_s = num(root, "elapsed_s");
    const json_t *gc = get(get(root, "environment"), "generator_cpu");
    if (json_is_object(gc)) {
        v->gen_cpu.user_s = num(gc, "user_s");
        v->gen_cpu.sys_s = num(gc, "sys_s");
        v->gen_cpu.wall_s = num(gc, "wall_s");
        v->gen_cpu.threads = (uint32_t)count(gc, "threads");
        if (!isfinite(v->gen_cpu.user_s) || !isfinite(v->gen_cpu.sys_s) || !isfinite(v->gen_cpu.wall_s))
            v->gen_cpu.threads = 0;
    }
    v->sent_on_schedule = num(root, get(root, "sent_on_schedule") ? "sent_on_schedule" : "send_ratio");
    v->interrupted = flag(root, "interrupted");
    v->accounting_ok = flag(root, "accounting_ok");
    v->generator_limited = flag(root, "generator_limited");
    v->attention = flag(root, "attention");
    v->verbose = flag(root, "verbose");

    const json_t *w = get(root, "warnings");
    size_t nw = json_array_size(w);
    v->warnings = xcalloc(nw ? nw : 1, sizeof *v->warnings);
    for (size_t i = 0; i < nw; i++) {
        const json_t *e = json_array_get(w, i);
        v->warnings[v->nwarnings++] = xstrdup(json_is_string(e) ? json_string_value(e) : "");
    }
    const json_t *thr = get(root, "thresholds");
    size_t nt = json_array_size(thr);
    v->thresholds = xcalloc(nt ? nt : 1, sizeof *v->thresholds);
    for (size_t i = 0; i < nt; i++) {
        const json_t *e = json_array_get(thr, i);
        struct run_view_threshold *t = &v->thresholds[v->nthresholds++];
        snprintf(t->expr, sizeof t->expr, "%s", str(e, "expr"));
        const char *unit = str(e, "unit");
        snprintf(t->unit, sizeof t->unit, "%s", strcmp(unit, "fraction") == 0 ? "%" : unit);
        t->measured = num(e, "measured");
        t->pass = flag(e, "pass");
    }
    return 0;
}
