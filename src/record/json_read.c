/* The one reader of the run JSON (docs/FORMATS.md, "knee run JSON"), with jansson: a document
 * back into a record. Lenient where a report only prints (a missing number is NAN, a count 0),
 * strict where numbers are added up (record_read_json_strict and record_read_histograms check
 * what knee merge adds, in its words); the shard identity knee merge groups files by. The
 * scalar fields come from the lists of record/fields.h, which the writer expands too; the JSON
 * holds every number the text prints as the double the run computed (core/json writes the
 * shortest form that reads back exactly), and integers in ns where the text formats ns
 * (resolve, think, lag limit) are recovered with llround, exact below 2^53 ns. */
#include "record/record.h"

#include "core/err.h"
#include "hlog/codec.h"
#include "record/fields.h"
#include "record/stages.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EVENT_NS 4000000000000000000ULL /* an event time a document may give (126 years) */

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
    return isfinite(d) && d > 0 && d * unit_s < 9e9 ? (uint64_t)llround(d * unit_s * 1e9) : 0;
}

static const char *str(const json_t *o, const char *key)
{
    const json_t *v = get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* A string member, or NULL when it is not a string. */
static char *dup_str(const json_t *o, const char *key)
{
    const json_t *v = get(o, key);
    return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

/* ---- the kinds of record/fields.h ---- */

static void get_f64(const json_t *o, const char *key, double *v)
{
    *v = num(o, key);
}

static void get_pos(const json_t *o, const char *key, double *v)
{
    double d = num(o, key);
    *v = isfinite(d) && d > 0 ? d : 0;
}

static void get_flag(const json_t *o, const char *key, bool *v)
{
    *v = json_is_true(get(o, key));
}

static void get_u64(const json_t *o, const char *key, uint64_t *v)
{
    *v = count(o, key);
}

static void get_u32(const json_t *o, const char *key, uint32_t *v)
{
    *v = (uint32_t)count(o, key);
}

static void get_lng(const json_t *o, const char *key, long *v)
{
    double d = num(o, key);
    *v = isfinite(d) && d > -9e18 && d < 9e18 ? (long)d : 0;
}

static void get_s_ns(const json_t *o, const char *key, uint64_t *ns)
{
    *ns = ns_of(o, key, 1);
}

static void get_s_ns0(const json_t *o, const char *key, uint64_t *ns)
{
    *ns = ns_of(o, key, 1);
}

static void get_ms_ns(const json_t *o, const char *key, uint64_t *ns)
{
    *ns = ns_of(o, key, 1e-3);
}

static void get_ms_ns0(const json_t *o, const char *key, uint64_t *ns)
{
    *ns = ns_of(o, key, 1e-3);
}

static void get_triple(const json_t *o, const char *key, double (*v)[3])
{
    const json_t *a = get(o, key);
    for (size_t i = 0; i < 3; i++) {
        const json_t *e = json_is_array(a) ? json_array_get(a, i) : NULL;
        (*v)[i] = json_is_number(e) ? json_number_value(e) : NAN;
    }
}

static void get_text(const json_t *o, const char *key, char *buf, size_t len)
{
    snprintf(buf, len, "%s", str(o, key));
}

/* ---- targets ---- */

static void summary(const json_t *s, struct run_summary *d)
{
    FIELDS_READ(RECORD_SUMMARY_FIELDS, s, struct run_summary, d);
}

/* An "accounting" object: the counts, the outcomes, the transport causes and retries. */
static void counts(const json_t *acc, struct run_counts *c)
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
        c->transport_cause[k] = count(tc, record_transport_cause_name((enum run_transport_cause)k));
    c->retries = count(acc, "retries");
}

bool record_read_transport(const json_t *t, struct run_proto_counts *pc)
{
    memset(pc, 0, sizeof *pc);
    const json_t *p = get(t, "protocols");
    pc->http1 = count(p, "http/1.1");
    pc->h2 = count(p, "h2");
    pc->h3 = count(p, "h3");
    const json_t *q = get(t, "quic");
    FIELDS_READ(RECORD_QUIC_FIELDS, q, struct run_quic_counts, &pc->quic);
    for (int k = 0; k < RUN_QC_COUNT; k++) {
        pc->quic.reset_codes[k] = count(get(q, "reset_codes"), record_quic_code_name(k));
        pc->quic.close_codes[k] = count(get(q, "close_codes"), record_quic_code_name(k));
    }
    const json_t *tv = get(t, "tls_versions");
    for (int k = 0; k < RUN_TLS_VERSIONS; k++)
        pc->tls_version[k] = count(tv, record_tls_version_name(k));
    FIELDS_READ(RECORD_HANDSHAKE_FIELDS, get(t, "tls_handshakes"), struct run_proto_counts, pc);
    const json_t *h2 = get(t, "h2");
    pc->h2_streams = count(h2, "streams");
    /* a number: the limit (0 included); null: unlimited, or no HTTP/2 connection (the text prints
     * no h2 line then); "none seen" (any other value): no connection had the server's SETTINGS */
    const json_t *mc = get(h2, "max_concurrent");
    pc->h2_max_concurrent = json_is_number(mc) ? count(h2, "max_concurrent") : UINT64_MAX;
    pc->h2_limit_seen = json_is_number(mc) || (json_is_null(mc) && pc->h2 > 0);
    FIELDS_READ(RECORD_H2_FIELDS, h2, struct run_proto_counts, pc);
    const json_t *pr = get(t, "proxy_refused"); /* --proxy: {"407": n, ...}; absent before it */
    for (int k = 0; k < RUN_PROXY_STATUS_N && json_is_object(pr); k++) {
        char code[8];
        snprintf(code, sizeof code, "%d", k + RUN_PROXY_STATUS_MIN);
        pc->proxy_refused[k] = count(pr, code);
    }
    return json_is_object(get(t, "tls"));
}

static void target_stats(const json_t *t, struct run_target_result *d)
{
    summary(get(t, "latency"), &d->sum.latency_all);
    const json_t *by = get(t, "latency_by_outcome");
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        summary(get(by, record_group_name((enum run_group)g)), &d->sum.latency[g]);
    summary(get(t, "service"), &d->sum.service);
    summary(get(t, "ttfb"), &d->sum.ttfb);
    summary(get(t, "lag"), &d->sum.lag);
    summary(get(t, "connect"), &d->sum.connect);
    summary(get(t, "tls"), &d->sum.tls);
    const json_t *st = get(t, "server_timing");
    const char *key;
    const json_t *s;
    if (json_is_object(st))
        json_object_foreach((json_t *)st, key, s)
        {
            if (d->nst == RUN_ST_MAX_NAMES)
                break;
            snprintf(d->st[d->nst].name, sizeof d->st[d->nst].name, "%s", key);
            summary(s, &d->st[d->nst].sum);
            d->nst++;
        }
}

/* A target object ("all" has only the name of the head fields). Bytes received are the
 * document's total (warm-up included), kept in counts.bytes_in. */
/* "stream" (absent: nothing was streamed). */
static void stream_read(const json_t *s, struct run_stream_sum *d)
{
    if (!s || !json_is_object(s))
        return;
    d->present = true;
    summary(get(s, "first_event"), &d->first_event);
    summary(get(s, "event_gap"), &d->event_gap);
    summary(get(s, "events_per_response"), &d->per_response);
    d->events = count(s, "events");
    d->responses = count(s, "responses");
    d->not_sse = count(s, "not_sse");
    d->partial = count(s, "partial");
    d->events_per_s = num(s, "events_per_s");
}

static void target(const json_t *t, struct run_target_result *d)
{
    get_text(t, "name", d->name, sizeof d->name);
    FIELDS_READ(RECORD_TARGET_FIELDS, t, struct run_target_result, d);
    counts(get(t, "accounting"), &d->counts);
    counts(get(t, "warmup"), &d->warmup_counts);
    stream_read(get(t, "stream"), &d->stream_sum);
    record_status_read_json(get(t, "status_codes"), &d->status, false, NULL, 0);
    FIELDS_READ(RECORD_CONNECTIONS_FIELDS, get(t, "connections"), struct run_counts, &d->counts);
    d->counts.bytes_in = count(t, "bytes_in");
    FIELDS_READ(RECORD_EVENTS_FIELDS, get(t, "events"), struct run_events, &d->events);
    FIELDS_READ(RECORD_RATES_FIELDS, get(t, "rates"), struct run_rates, &d->rates);
    d->rates.sent_late = d->events.sent_late;
    d->rates.completed_late = d->events.completed_late;
    target_stats(t, d);
    d->https = record_read_transport(t, &d->pc);
}

/* ---- environment and plan ---- */

static void environment(const json_t *env, struct run_record *rec)
{
    get_text(env, "version", rec->env.version, sizeof rec->env.version);
    const json_t *args = get(env, "args");
    size_t n = json_array_size(args);
    if (n > (size_t)INT32_MAX)
        n = (size_t)INT32_MAX;
    const char **v = xcalloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(args, i);
        v[i] = json_is_string(a) ? json_string_value(a) : "";
    }
    /* a file written before knee redacted credentials is redacted as it is read */
    record_config_set_args(&rec->config, (int)n, v);
    free(v);
    FIELDS_READ(RECORD_ENV_FIELDS, env, struct run_env, &rec->env);
    get_lng(env, "peak_rss_kb", &rec->env.peak_rss_kb);
    const json_t *gc = get(env, "generator_cpu");
    struct run_generator_cpu *g = &rec->env.gen_cpu;
    if (json_is_object(gc)) {
        FIELDS_READ(RECORD_GEN_CPU_FIELDS, gc, struct run_generator_cpu, g);
        if (!isfinite(g->user_s) || !isfinite(g->sys_s) || !isfinite(g->wall_s))
            g->threads = 0;
    }
    get_text(env, "openssl", rec->env.openssl, sizeof rec->env.openssl);
    get_text(env, "nghttp2", rec->env.nghttp2, sizeof rec->env.nghttp2);
}

static int tls_version_number(const json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    for (int k = 0; s && k < RUN_TLS_VERSIONS; k++)
        if (strcmp(s, record_tls_version_name(k)) == 0)
            return 0x0301 + k; /* RUN_TLS_V10 .. RUN_TLS_V13: TLS 1.0 .. 1.3 */
    return 0;
}

/* config.tls (https targets), "h2c", "streams", "requests_per_connection" */
static void transport_config(const json_t *cfg, struct record_config *c)
{
    const json_t *tls = get(cfg, "tls");
    const char *alpn = str(tls, "alpn");
    c->http = strcmp(alpn, "http/1.1") == 0 ? RUN_HTTP_1 : strcmp(alpn, "h2") == 0 ? RUN_HTTP_2 : RUN_HTTP_AUTO;
    c->tls_insecure = json_is_false(get(tls, "verify"));
    c->tls_no_resume = json_is_false(get(tls, "resume"));
    c->tls_cacert = dup_str(tls, "cacert");
    c->tls_ciphers = dup_str(tls, "ciphers");
    c->tls_cert = dup_str(tls, "cert");
    c->tls_key = dup_str(tls, "key");
    c->unix_socket = dup_str(cfg, "unix_socket");
    const json_t *ct = get(cfg, "connect_to");
    c->connect_to = xcalloc(json_array_size(ct) + 1, sizeof *c->connect_to);
    for (size_t i = 0; i < json_array_size(ct); i++)
        if (json_is_string(json_array_get(ct, i)))
            c->connect_to[c->nconnect_to++] = xstrdup(json_string_value(json_array_get(ct, i)));
    const json_t *vs = get(tls, "versions");
    c->tls_min_version = tls_version_number(json_is_array(vs) ? json_array_get(vs, 0) : NULL);
    c->tls_max_version = tls_version_number(json_is_array(vs) ? json_array_get(vs, 1) : NULL);
    get_flag(cfg, "h2c", &c->h2c);
    get_flag(cfg, "http3", &c->http3);
    get_u32(cfg, "streams", &c->streams);
    get_u32(cfg, "requests_per_connection", &c->requests_per_connection);
    c->proxy = dup_str(cfg, "proxy");
    c->local_addresses = dup_str(cfg, "local_addresses");
    const json_t *cr = get(cfg, "connect_rate");
    c->connect_rate = json_is_number(cr) ? json_number_value(cr) : 0;
}

static enum run_io io_of(const char *s)
{
    return strcmp(s, "uring") == 0 ? RUN_IO_URING : strcmp(s, "epoll") == 0 ? RUN_IO_EPOLL : RUN_IO_AUTO;
}

/* "config"."setup" (knee run --setup), when the run had one. */
static void setup(const json_t *cfg, struct record_setup *s)
{
    const json_t *sj = get(cfg, "setup");
    if (!json_is_object(sj) || !json_is_string(get(sj, "url")))
        return;
    s->url = dup_str(sj, "url");
    s->method = dup_str(sj, "method");
    double st = num(sj, "status"), ms = num(sj, "ms");
    s->status = isfinite(st) && st >= 0 && st < 1000 ? (int)st : 0;
    s->duration_ns = isfinite(ms) && ms >= 0 && ms < 1e12 ? (uint64_t)(ms * 1e6) : 0;
    const json_t *cj = get(sj, "captured");
    s->captured = xcalloc(json_array_size(cj) + 1, sizeof *s->captured);
    for (size_t i = 0; i < json_array_size(cj); i++)
        if (json_is_string(json_array_get(cj, i)))
            s->captured[s->ncaptured++] = xstrdup(json_string_value(json_array_get(cj, i)));
}

/* "config", and the two fields of the plan the document keeps elsewhere: --lag-limit (in
 * "generator"), and --timer-slack also there (config has it in an open loop only). */
/* config.stages: the plan's stages as written (a stage of a bad duration reads as 0 s). */
static void config_stages(const json_t *a, struct record_config *c)
{
    size_t n = json_is_array(a) ? json_array_size(a) : 0;
    if (n > RUN_MAX_STAGES)
        n = RUN_MAX_STAGES;
    c->stages = n ? xcalloc(n, sizeof *c->stages) : NULL;
    c->nstages = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(a, i);
        c->stages[i].from = num(e, "from");
        c->stages[i].to = num(e, "to");
        c->stages[i].duration_ns = ns_of(e, "duration_s", 1);
        const char *unit = json_string_value(json_object_get(e, "unit"));
        c->stages[i].clients = unit && strcmp(unit, "clients") == 0; /* absent (older runs): rps */
    }
}

static void config(const json_t *root, struct run_record *rec)
{
    const json_t *cfg = get(root, "config");
    struct record_config *c = &rec->config;
    c->open_loop = strcmp(str(cfg, "mode"), "closed") != 0;
    c->arrivals = strcmp(str(cfg, "arrivals"), "poisson") == 0 ? RUN_ARRIVALS_POISSON : RUN_ARRIVALS_CONSTANT;
    get_u64(cfg, "seed", &c->seed);
    const json_t *ramp = get(cfg, "ramp");
    c->ramp = json_is_object(ramp);
    get_f64(ramp, "from", &c->ramp_from);
    get_f64(ramp, "to", &c->ramp_to);
    get_pos(cfg, "rate", &c->rate);
    config_stages(get(cfg, "stages"), c);
    get_u32(cfg, "pool_cap", &rec->pool_cap);
    c->when_busy = strcmp(str(cfg, "when_busy"), "drop") == 0 ? RUN_BUSY_DROP : RUN_BUSY_QUEUE;
    const json_t *gen = get(root, "generator");
    get_ms_ns(get(cfg, "timer_slack_ms") ? cfg : gen, "timer_slack_ms", &c->timer_slack_ns);
    c->timer_slack_auto = json_is_true(get(cfg, "timer_slack_auto"));
    get_ms_ns0(gen, "lag_limit_ms", &c->lag_limit_ns);
    get_s_ns(cfg, "think_s", &c->think_ns);
    get_u32(cfg, "threads", &rec->threads);
    c->io = io_of(str(cfg, "io"));
    rec->io = io_of(str(cfg, "io_engine"));
    FIELDS_READ(RECORD_CONFIG_FIELDS, cfg, struct run_record, rec);
    if (!get(cfg, "retry_stale_all")) /* before it: --retry-stale was the only way on, for every method */
        c->retry_stale_all = c->retry_stale;
    transport_config(cfg, c);
    c->expect_body = dup_str(cfg, "expect_body");
    const json_t *rj = get(cfg, "reject");
    size_t nr = json_array_size(rj);
    c->rejects = xcalloc(nr ? nr : 1, sizeof *c->rejects);
    for (size_t i = 0; i < nr; i++) {
        const json_t *e = json_array_get(rj, i);
        double status = num(e, "status");
        c->rejects[c->nrejects++] =
            (struct run_reject){isfinite(status) && status > 0 && status < 1000 ? (int)status : 0, dup_str(e, "body")};
    }
    setup(cfg, &c->setup);
}

/* ---- the verdicts, timeline, warnings and thresholds ---- */

static void verdicts(const json_t *root, struct run_record *rec)
{
    FIELDS_READ(RECORD_TOP_FIELDS, root, struct run_record, rec);
    const json_t *gen = get(root, "generator");
    FIELDS_READ(RECORD_GENERATOR_FIELDS, gen, struct run_record, rec);
    get_f64(gen, "gap_ms", &rec->generator.gap_ms);
    FIELDS_READ(RECORD_VERDICT_FIELDS, root, struct run_record, rec);
    if (!get(root, "sent_on_schedule")) /* knee-run/1 */
        get_f64(root, "send_ratio", &rec->sent_on_schedule);
}

/* "aborted": missing or null (no --abort-if fired), or {rule: a string, at_s: a number >= 0};
 * anything else is not a run record knee wrote. */
static int aborted(const json_t *root, struct run_record *rec, char *err, size_t errlen)
{
    const json_t *a = get(root, "aborted");
    if (!a || json_is_null(a))
        return 0;
    const json_t *rule = get(a, "rule");
    double at_s = num(a, "at_s");
    if (!json_is_object(a) || !json_is_string(rule) || !json_string_value(rule)[0] ||
        strlen(json_string_value(rule)) >= sizeof rec->aborted.rule || !isfinite(at_s) || at_s < 0)
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "\"aborted\" must be null or {\"rule\": the --abort-if rule, \"at_s\": seconds}");
    rec->aborted.set = true;
    snprintf(rec->aborted.rule, sizeof rec->aborted.rule, "%s", json_string_value(rule));
    rec->aborted.at_s = at_s;
    return 0;
}

static void timeline(const json_t *root, struct run_record *rec)
{
    const json_t *tl = get(root, "timeline");
    size_t n = json_array_size(tl);
    rec->ticks = xcalloc(n ? n : 1, sizeof *rec->ticks);
    rec->nticks = n;
    for (size_t i = 0; i < n; i++)
        FIELDS_READ(RECORD_TICK_FIELDS, json_array_get(tl, i), struct run_tick, &rec->ticks[i]);
}

static void warnings_and_thresholds(const json_t *root, struct run_record *rec)
{
    bool attention = rec->warnings.attention; /* as the document says it */
    const json_t *w = get(root, "warnings");
    for (size_t i = 0; i < json_array_size(w); i++) {
        const json_t *e = json_array_get(w, i);
        warn_add_text(&rec->warnings, false, json_is_string(e) ? json_string_value(e) : "");
    }
    rec->warnings.attention = attention;
    const json_t *thr = get(root, "thresholds");
    size_t nt = json_array_size(thr);
    rec->thresholds = xcalloc(nt ? nt : 1, sizeof *rec->thresholds);
    for (size_t i = 0; i < nt; i++) {
        const json_t *e = json_array_get(thr, i);
        struct record_threshold *t = &rec->thresholds[rec->nthresholds++];
        get_text(e, "expr", t->expr, sizeof t->expr);
        const char *unit = str(e, "unit");
        snprintf(t->unit, sizeof t->unit, "%s", strcmp(unit, "fraction") == 0 ? "%" : unit);
        get_f64(e, "measured", &t->measured);
        get_flag(e, "pass", &t->pass);
    }
}

/* ---- the shard record ---- */

static void shard_parts(const json_t *sh, struct run_shard *s)
{
    if (s->index == RUN_SHARD_MERGED) {
        get_flag(sh, "complete", &s->complete);
        const json_t *sk = get(sh, "start_skew_ms");
        double mn = num(sk, "min"), mx = num(sk, "max");
        s->skew_min_ns = isfinite(mn) && fabs(mn) < 9e12 ? (int64_t)llround(mn * 1e6) : 0;
        s->skew_max_ns = isfinite(mx) && fabs(mx) < 9e12 ? (int64_t)llround(mx * 1e6) : 0;
        const json_t *parts = get(sh, "shards");
        size_t n = json_array_size(parts);
        s->parts = xcalloc(n ? n : 1, sizeof *s->parts);
        for (size_t i = 0; i < n; i++) {
            const json_t *e = json_array_get(parts, i);
            struct run_shard_part *p = &s->parts[s->nparts++];
            get_u32(e, "index", &p->index);
            get_text(e, "host", p->host, sizeof p->host);
            double skew = num(e, "start_skew_ms");
            p->start_skew_ns = isfinite(skew) && fabs(skew) < 9e12 ? (int64_t)llround(skew * 1e6) : 0;
            get_flag(e, "generator_limited", &p->generator_limited);
            get_flag(e, "failed", &p->failed);
            get_text(e, "failure", p->failure, sizeof p->failure);
        }
        return;
    }
    get_text(sh, "source", s->source, sizeof s->source);
    double skew = num(sh, "start_skew_ms");
    s->start_skew_ns = isfinite(skew) && fabs(skew) < 9e12 ? (int64_t)llround(skew * 1e6) : 0;
    const json_t *clock = get(sh, "clock");
    get_flag(clock, "synced", &s->clock_synced);
    get_f64(clock, "maxerror_ms", &s->clock_maxerror_ms);
    get_f64(clock, "esterror_ms", &s->clock_esterror_ms);
}

/* "shard": the record of a shard (or of a merge), without its histograms (record_read_histograms). */
static void shard(const json_t *root, struct run_record *rec)
{
    const json_t *sh = get(root, "shard");
    struct run_shard *s = &rec->shard;
    if (!json_is_object(sh))
        return;
    s->clock_maxerror_ms = s->clock_esterror_ms = NAN; /* unknown unless the document says (a merge's does not) */
    get_u32(sh, "count", &s->count);
    if (json_is_true(get(sh, "merged")))
        s->index = RUN_SHARD_MERGED;
    else
        get_u32(sh, "index", &s->index);
    s->plan_id = strtoull(str(sh, "plan_id"), NULL, 16);
    get_u64(sh, "start_at_unix_ns", &s->start_at_unix_ns);
    get_u64(sh, "t0_unix_ns", &s->t0_unix_ns);
    get_ms_ns(sh, "lag_limit_ms", &s->lag_limit_ns);
    shard_parts(sh, s);
    const json_t *streams = get(sh, "streams");
    for (size_t i = 0; i < json_array_size(streams) && i < RUN_MAX_TARGETS; i++) {
        const json_t *e = json_array_get(streams, i);
        uint64_t lim = UINT64_MAX;
        if (json_is_integer(get(e, "limit")))
            lim = count(e, "limit");
        double share = num(e, "stage_share");
        s->streams[s->nstreams++] = (struct run_shard_stream){.rate_from = num(e, "rate_from"),
                                                              .rate_to = num(e, "rate_to"),
                                                              .stage_share = share > 0 ? share : 0,
                                                              .limit = lim};
    }
}

int record_schema_check(const json_t *root, const char *hint, char *err, size_t errlen)
{
    const char *schema = json_string_value(get(root, "schema"));
    if (json_is_object(root) && record_schema_readable(schema))
        return 0;
    return knee_fail(err, errlen, KNEE_EFORMAT,
                     "not a knee run JSON (schema \"%s\", expected \"" RUN_JSON_SCHEMA "\"%s)",
                     schema ? schema : "none", hint);
}

int record_read_json(const json_t *root, struct run_record *rec, char *err, size_t errlen)
{
    memset(rec, 0, sizeof *rec);
    int rc = record_schema_check(root, "", err, errlen);
    if (rc)
        return rc;
    const json_t *targets = get(root, "targets");
    const json_t *all = get(root, "all");
    if (!json_is_array(targets) || !json_is_object(all))
        return knee_fail(err, errlen, KNEE_EFORMAT, "\"targets\" must be an array and \"all\" an object");
    if ((rc = aborted(root, rec, err, errlen)) != 0) /* before anything is allocated */
        return rc;
    environment(get(root, "environment"), rec);
    config(root, rec);
    rec->ntargets = json_array_size(targets);
    rec->targets = xcalloc(rec->ntargets ? rec->ntargets : 1, sizeof *rec->targets);
    for (size_t i = 0; i < rec->ntargets; i++)
        target(json_array_get(targets, i), &rec->targets[i]);
    target(all, &rec->all);
    verdicts(root, rec);
    for (size_t i = 0; i < rec->ntargets; i++)
        rec->targets[i].rates.window_s = rec->window_s;
    rec->all.rates.window_s = rec->window_s;
    timeline(root, rec);
    warnings_and_thresholds(root, rec);
    shard(root, rec);
    rc = record_stages_read_json(root, rec, false, err, errlen);
    char why[256]; /* lenient: an entry that does not read is left at zero */
    if (!rc)
        record_entries_read_json(root, &rec->entries, false, why, sizeof why);
    return rc;
}

int record_read_shard_id(const json_t *root, struct run_shard *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    int rc = record_schema_check(root, "", err, errlen);
    if (rc)
        return rc;
    const json_t *sh = get(root, "shard"), *cnt = get(sh, "count"), *idx = get(sh, "index");
    if (!sh)
        return 0;
    uint64_t plan = 0;
    if (!json_is_integer(cnt) || json_integer_value(cnt) < 1 || json_integer_value(cnt) > RUN_MAX_SHARDS ||
        !record_shard_plan_parse(json_string_value(get(sh, "plan_id")), &plan))
        return knee_fail(err, errlen, KNEE_EFORMAT, "the \"shard\" object has no valid count or plan_id");
    bool merged = json_is_true(get(sh, "merged"));
    if (!merged &&
        (!json_is_integer(idx) || json_integer_value(idx) < 0 || json_integer_value(idx) >= json_integer_value(cnt)))
        return knee_fail(err, errlen, KNEE_EFORMAT, "the \"shard\" object's index is not below its count");
    s->count = (uint32_t)json_integer_value(cnt);
    s->index = merged ? RUN_SHARD_MERGED : (uint32_t)json_integer_value(idx);
    s->plan_id = plan;
    const json_t *at = get(sh, "start_at_unix_ns");
    s->start_at_unix_ns = json_is_integer(at) && json_integer_value(at) > 0 ? (uint64_t)json_integer_value(at) : 0;
    return 0;
}

/* ---- the histograms a shard's document carries ---- */

/* dst += the histogram in entry e ({"count", "min_ns", "max_ns", "hdr"}); none when absent or
 * empty. The encoding keeps the counts; the exact extremes come from min_ns/max_ns, which
 * must lie in the extreme buckets (else the document was altered). */
static int add_hist(struct hlog_codec *c, const json_t *e, const char *what, struct hdr *dst, char *err, size_t errlen)
{
    if (!e || (json_is_integer(get(e, "count")) && json_integer_value(get(e, "count")) == 0))
        return 0;
    const char *text = json_string_value(get(e, "hdr"));
    const json_t *jmn = get(e, "min_ns"), *jmx = get(e, "max_ns"), *jc = get(e, "count");
    if (!text || !json_is_integer(jmn) || json_integer_value(jmn) < 0 || !json_is_integer(jmx) ||
        json_integer_value(jmx) < 0)
        return knee_fail(err, errlen, KNEE_EFORMAT, "histogram %s has no hdr, min_ns or max_ns", what);
    struct hdr h;
    char why[256] = "";
    int r = hlog_decode_base64(c, text, strlen(text), &h, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "histogram %s: %s", what, why[0] ? why : knee_strerror(r));
    int64_t mn = json_integer_value(jmn), mx = json_integer_value(jmx);
    if (!json_is_integer(jc) || json_integer_value(jc) < 0 || h.total_count != json_integer_value(jc) ||
        !hdr_values_equivalent(&h, mn, h.min_value) || !hdr_values_equivalent(&h, mx, h.max_value)) {
        hdr_release(&h);
        return knee_fail(err, errlen, KNEE_EFORMAT, "histogram %s: its count or extremes disagree with its buckets",
                         what);
    }
    h.min_value = mn;
    h.max_value = mx;
    const json_t *of = get(e, "overflow");
    if (json_is_integer(of) && json_integer_value(of) >= 0) {
        const json_t *ofm = get(e, "overflow_max_ns");
        h.overflow_count = json_integer_value(of);
        h.overflow_max = json_is_integer(ofm) && json_integer_value(ofm) >= 0 ? json_integer_value(ofm) : 0;
    }
    if (!dst->counts)
        hdr_init(dst, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    r = hdr_add(dst, &h);
    hdr_release(&h);
    if (r)
        return knee_fail(err, errlen, r, "histogram %s: %s", what, knee_strerror(r));
    return 0;
}

/* A target's exact events ("events" of its histograms entry), checked: every count there, the
 * times (the window's edges, the first and last send) within MAX_EVENT_NS and in order. */
static int read_events(const json_t *e, const char *name, struct run_events *ev, char *err, size_t errlen)
{
    if (!json_is_object(e))
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "histograms of %s: no events (a shard's JSON from a knee before the knee-run/2 schema; run "
                         "the shards with this knee)",
                         name);
    struct run_events x;
#define EVENT_KEY(key, kind, m) key,
#define EVENT_PTR(key, kind, m) &x.m,
    static const char *const keys[] = {RECORD_SHARD_EVENTS_FIELDS(EVENT_KEY, EVENT_KEY)};
    uint64_t *const vals[] = {RECORD_SHARD_EVENTS_FIELDS(EVENT_PTR, EVENT_PTR)};
#undef EVENT_KEY
#undef EVENT_PTR
    const uint64_t *const times[] = {&x.window_start_ns, &x.window_end_ns, &x.first_send_ns, &x.last_send_ns};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const json_t *v = get(e, keys[k]);
        bool ok = json_is_integer(v) && json_integer_value(v) >= 0;
        *vals[k] = ok ? (uint64_t)json_integer_value(v) : 0;
        for (size_t t = 0; t < 4 && ok; t++)
            ok = !(vals[k] == times[t] && *vals[k] > MAX_EVENT_NS);
        if (!ok)
            return knee_fail(err, errlen, KNEE_EFORMAT, "histograms of %s: events.%s is missing or out of range", name,
                             keys[k]);
    }
    if (x.window_start_ns > x.window_end_ns || x.first_send_ns > x.last_send_ns)
        return knee_fail(err, errlen, KNEE_EFORMAT, "histograms of %s: events out of order", name);
    if (!x.sends)
        x.first_send_ns = x.last_send_ns = 0;
    *ev = x;
    return 0;
}

/* A "histograms" entry's "stream" (absent: nothing was streamed) into s: counts and histograms. */
static int stream_hists(struct hlog_codec *c, const json_t *st, const char *name, struct run_stream *s, char *err,
                        size_t errlen)
{
    if (!st)
        return 0;
    static const char *const ckeys[] = {"responses", "events", "not_sse", "partial"};
    uint64_t *cdst[] = {&s->responses, &s->events, &s->not_sse, &s->partial};
    for (size_t k = 0; k < 4; k++) {
        const json_t *v = get(st, ckeys[k]);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return knee_fail(err, errlen, KNEE_EFORMAT, "histograms of %s: stream.%s is missing or not a count", name,
                             ckeys[k]);
        *cdst[k] += (uint64_t)json_integer_value(v);
    }
    static const char *const hkeys[] = {"first_event", "event_gap", "events_per_response"};
    struct hdr *hdst[] = {&s->first_event, &s->event_gap, &s->per_response};
    char what[128];
    int rc = 0;
    for (size_t k = 0; k < 3 && !rc; k++) {
        snprintf(what, sizeof what, "%s.stream.%s", name, hkeys[k]);
        rc = add_hist(c, get(st, hkeys[k]), what, hdst[k], err, errlen);
    }
    return rc;
}

/* One "histograms" entry (a target's or all's) into r: its histograms, events and sent_on_time. */
static int target_hists(struct hlog_codec *c, const json_t *th, struct run_target_result *r, char *err, size_t errlen)
{
    char what[128];
    const char *name = json_string_value(get(th, "name"));
    name = name ? name : "?";
    snprintf(what, sizeof what, "%s.latency", name);
    int rc = add_hist(c, get(th, "latency"), what, &r->latency_all, err, errlen);
    const json_t *bo = get(th, "by_outcome");
    for (int g = 0; g < RUN_GROUP_COUNT && !rc; g++) {
        snprintf(what, sizeof what, "%s.by_outcome.%s", name, record_group_name((enum run_group)g));
        rc = add_hist(c, get(bo, record_group_name((enum run_group)g)), what, &r->latency[g], err, errlen);
    }
    /* "tls": an https target's handshake times (absent for a plain one) */
    static const char *const keys[] = {"service", "ttfb", "lag", "connect", "tls"};
    struct hdr *dst[] = {&r->service, &r->ttfb, &r->lag, &r->connect, &r->tls};
    for (size_t k = 0; k < 5 && !rc; k++) {
        snprintf(what, sizeof what, "%s.%s", name, keys[k]);
        rc = add_hist(c, get(th, keys[k]), what, dst[k], err, errlen);
    }
    const char *st_name;
    json_t *st_h;
    const json_t *sts = get(th, "server_timing");
    if (json_is_object(sts))
        json_object_foreach((json_t *)sts, st_name, st_h)
        {
            if (rc)
                break;
            size_t j = 0;
            while (j < r->nst && strcmp(r->st[j].name, st_name) != 0)
                j++;
            if (j == r->nst) {
                if (r->nst == RUN_ST_MAX_NAMES)
                    continue;
                snprintf(r->st[j].name, sizeof r->st[j].name, "%s", st_name);
                r->nst++;
            }
            snprintf(what, sizeof what, "%s.server_timing.%s", name, st_name);
            rc = add_hist(c, st_h, what, &r->st[j].dur, err, errlen);
        }
    const json_t *on_time = get(th, "sent_on_time");
    if (!rc && (!json_is_integer(on_time) || json_integer_value(on_time) < 0))
        rc = knee_fail(err, errlen, KNEE_EFORMAT, "histograms of %s: no sent_on_time", name);
    if (!rc)
        r->counts.sent_on_time = (uint64_t)json_integer_value(on_time);
    if (!rc)
        rc = read_events(get(th, "events"), name, &r->events, err, errlen);
    if (!rc)
        rc = stream_hists(c, get(th, "stream"), name, &r->stream, err, errlen);
    return rc;
}

int record_read_histograms(const json_t *root, struct run_record *rec, char *err, size_t errlen)
{
    const json_t *hs = get(get(root, "shard"), "histograms");
    if (!json_is_object(hs))
        return 0;
    const json_t *ts = get(hs, "targets");
    if (json_array_size(ts) != rec->ntargets)
        return knee_fail(err, errlen, KNEE_EFORMAT, "shard.histograms.targets does not list the %zu targets",
                         rec->ntargets);
    struct hlog_codec *c = hlog_codec_new();
    int rc = target_hists(c, get(hs, "all"), &rec->all, err, errlen);
    for (size_t i = 0; i < rec->ntargets && !rc; i++)
        rc = target_hists(c, json_array_get(ts, i), &rec->targets[i], err, errlen);
    hlog_codec_free(c);
    return rc;
}

/* ---- knee merge's strict reading ---- */

static bool is_count(const json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0;
}

static int not_a_count(char *err, size_t errlen, const char *where, const char *key)
{
    return knee_fail(err, errlen, KNEE_EFORMAT, "%s.%s is missing or not a count", where, key);
}

/* An "accounting" or "warmup" object as knee merge adds it up: every count there. */
static int need_counts(const json_t *acc, const char *where, char *err, size_t errlen)
{
    if (!json_is_object(acc))
        return knee_fail(err, errlen, KNEE_EFORMAT, "no %s object", where);
    static const char *const keys[] = {"planned", "sent", "dropped"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        if (!is_count(get(acc, keys[k])))
            return not_a_count(err, errlen, where, keys[k]);
    char w[64];
    snprintf(w, sizeof w, "%s.outcomes", where);
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (!is_count(get(get(acc, "outcomes"), reqlog_outcome_name((enum reqlog_outcome)o))))
            return not_a_count(err, errlen, w, reqlog_outcome_name((enum reqlog_outcome)o));
    snprintf(w, sizeof w, "%s.transport_causes", where);
    for (int k = 0; k < RUN_TC_COUNT; k++)
        if ((k != RUN_TC_PROXY_REFUSED ||
             get(get(acc, "transport_causes"), "proxy_refused")) && /* newer than --proxy */
            !is_count(get(get(acc, "transport_causes"), record_transport_cause_name((enum run_transport_cause)k))))
            return not_a_count(err, errlen, w, record_transport_cause_name((enum run_transport_cause)k));
    return is_count(get(acc, "retries")) ? 0 : not_a_count(err, errlen, where, "retries");
}

/* What every shard's document must have before anything is added up. */
static int strict_head(const json_t *root, char *err, size_t errlen)
{
    if (!json_is_object(root))
        return knee_fail(err, errlen, KNEE_EFORMAT, "not a JSON object");
    const char *schema = json_string_value(get(root, "schema"));
    if (!schema || strcmp(schema, RUN_JSON_SCHEMA) != 0)
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "schema \"%s\": knee merge adds up shards of the \"" RUN_JSON_SCHEMA
                         "\" schema (rates by event time); run the shards with this knee",
                         schema ? schema : "none");
    if (!is_count(get(get(root, "shard"), "t0_unix_ns")))
        return knee_fail(err, errlen, KNEE_EFORMAT, "shard.t0_unix_ns is missing");
    if (!(num(root, "window_s") >= 0 && num(root, "elapsed_s") >= 0))
        return knee_fail(err, errlen, KNEE_EFORMAT, "no window_s or elapsed_s");
    if (!json_is_string(get(get(root, "config"), "mode")))
        return knee_fail(err, errlen, KNEE_EFORMAT, "no config.mode");
    return 0;
}

/* Who target slot i is in a message: "target NAME", or "all" (i == ntargets). */
static void target_who(const struct run_record *rec, size_t i, char *who, size_t len)
{
    if (i < rec->ntargets)
        snprintf(who, len, "target %s", rec->targets[i].name[0] ? rec->targets[i].name : "?");
    else
        snprintf(who, len, "all");
}

/* a + b, UINT64_MAX when it does not fit (a document's counts may be anything up to 2^63). */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The accounting identities of one set of counts (record_counts_hold, with sums that cannot
 * wrap): 0, or KNEE_EFORMAT naming the first that does not hold ("api: accounting: planned 9 !=
 * sent 8 + dropped 0"). */
static int counts_identities(const struct run_counts *c, const char *who, const char *where, char *err, size_t errlen)
{
    uint64_t done = 0, causes = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            done = sat_add(done, c->outcome[o]);
    for (int k = 0; k < RUN_TC_COUNT; k++)
        causes = sat_add(causes, c->transport_cause[k]);
    if (c->planned != sat_add(c->sent, c->dropped))
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: %s: planned %" PRIu64 " != sent %" PRIu64 " + dropped %" PRIu64, who, where, c->planned,
                         c->sent, c->dropped);
    if (c->sent != done)
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: %s: sent %" PRIu64 " != the outcomes' sum %" PRIu64 " (dropped aside)", who, where,
                         c->sent, done);
    if (c->dropped != c->outcome[OUTCOME_DROPPED])
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s: %s: dropped %" PRIu64 " != outcomes.dropped %" PRIu64, who,
                         where, c->dropped, c->outcome[OUTCOME_DROPPED]);
    if (causes != c->outcome[OUTCOME_TRANSPORT])
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: %s: outcomes.transport %" PRIu64 " != the transport causes' sum %" PRIu64, who, where,
                         c->outcome[OUTCOME_TRANSPORT], causes);
    if (c->retries > c->sent)
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s: %s: retries %" PRIu64 " > sent %" PRIu64, who, where,
                         c->retries, c->sent);
    return 0;
}

/* "all" is the sum of the targets in every accounted count. */
static int all_is_sum(const struct run_record *rec, bool warmup, char *err, size_t errlen)
{
    struct run_counts sum;
    memset(&sum, 0, sizeof sum);
    for (size_t i = 0; i < rec->ntargets; i++) {
        const struct run_counts *c = warmup ? &rec->targets[i].warmup_counts : &rec->targets[i].counts;
        sum.planned = sat_add(sum.planned, c->planned);
        sum.sent = sat_add(sum.sent, c->sent);
        sum.dropped = sat_add(sum.dropped, c->dropped);
        sum.retries = sat_add(sum.retries, c->retries);
        for (int o = 0; o < OUTCOME_COUNT; o++)
            sum.outcome[o] = sat_add(sum.outcome[o], c->outcome[o]);
    }
    const struct run_counts *all = warmup ? &rec->all.warmup_counts : &rec->all.counts;
    const char *key = NULL;
    uint64_t have = 0, want = 0;
    const char *const keys[] = {"planned", "sent", "dropped", "retries"};
    const uint64_t alls[] = {all->planned, all->sent, all->dropped, all->retries};
    const uint64_t sums[] = {sum.planned, sum.sent, sum.dropped, sum.retries};
    for (size_t k = 0; k < 4 && !key; k++)
        if (alls[k] != sums[k])
            key = keys[k], have = alls[k], want = sums[k];
    for (int o = 0; o < OUTCOME_COUNT && !key; o++)
        if (all->outcome[o] != sum.outcome[o])
            key = reqlog_outcome_name((enum reqlog_outcome)o), have = all->outcome[o], want = sum.outcome[o];
    if (!key)
        return 0;
    return knee_fail(err, errlen, KNEE_EFORMAT, "all: %s: %s %" PRIu64 " != the targets' sum %" PRIu64,
                     warmup ? "warmup" : "accounting", key, have, want);
}

/* A number the merge takes as a rate: absent, null, or finite and >= 0. */
static int rate_ok(const json_t *o, const char *key, const char *where, char *err, size_t errlen)
{
    const json_t *v = get(o, key);
    if (!v || json_is_null(v) || (json_is_number(v) && json_number_value(v) >= 0))
        return 0;
    return knee_fail(err, errlen, KNEE_EFORMAT, "%s.%s is negative or not a number", where, key);
}

/* The rates a shard states: the plan's (config.rate, config.ramp, shard.streams) and every
 * target's "rates" over its window. */
static int rates_ok(const json_t *root, char *err, size_t errlen)
{
    const json_t *cfg = get(root, "config"), *ramp = get(cfg, "ramp");
    int rc = rate_ok(cfg, "rate", "config", err, errlen);
    if (!rc && ramp)
        rc = rate_ok(ramp, "from", "config.ramp", err, errlen);
    if (!rc && ramp)
        rc = rate_ok(ramp, "to", "config.ramp", err, errlen);
    const json_t *streams = get(get(root, "shard"), "streams");
    for (size_t i = 0; i < json_array_size(streams) && !rc; i++) {
        rc = rate_ok(json_array_get(streams, i), "rate_from", "shard.streams[]", err, errlen);
        if (!rc)
            rc = rate_ok(json_array_get(streams, i), "rate_to", "shard.streams[]", err, errlen);
    }
    const json_t *ts = get(root, "targets");
    for (size_t i = 0; i <= json_array_size(ts) && !rc; i++) {
        const json_t *t = i < json_array_size(ts) ? json_array_get(ts, i) : get(root, "all");
        char where[96];
        if (i < json_array_size(ts))
            snprintf(where, sizeof where, "target %s: rates", str(t, "name"));
        else
            snprintf(where, sizeof where, "all: rates");
        const json_t *rates = get(t, "rates");
        const char *key;
        json_t *v;
        if (json_is_object(rates))
            json_object_foreach((json_t *)rates, key, v)
            {
                if (json_is_number(v) && (rc = rate_ok(rates, key, where, err, errlen)))
                    break;
            }
    }
    return rc;
}

/* A target's "status_codes" as knee merge adds them: every value a count, every key a status
 * (record_status_read_json, strict), and no more responses with a status than requests that could
 * have read one (ok + rejected + http_error + invalid); all's are the targets' sum. */
static int status_codes_ok(const json_t *root, const struct run_record *rec, char *err, size_t errlen)
{
    const json_t *ts = get(root, "targets");
    struct run_status_counts sum, one;
    memset(&sum, 0, sizeof sum);
    for (size_t i = 0; i <= rec->ntargets; i++) {
        const json_t *t = i < rec->ntargets ? json_array_get(ts, i) : get(root, "all");
        const struct run_target_result *r = i < rec->ntargets ? &rec->targets[i] : &rec->all;
        char who[80], why[160];
        target_who(rec, i, who, sizeof who);
        if (record_status_read_json(get(t, "status_codes"), &one, true, why, sizeof why))
            return knee_fail(err, errlen, KNEE_EFORMAT, "%s: %s", who, why);
        const uint64_t *oc = r->counts.outcome;
        uint64_t can = sat_add(sat_add(oc[OUTCOME_OK], oc[OUTCOME_REJECTED]),
                               sat_add(oc[OUTCOME_HTTP_ERROR], oc[OUTCOME_INVALID]));
        uint64_t have = record_status_total(&one);
        if (have > can)
            return knee_fail(err, errlen, KNEE_EFORMAT,
                             "%s: status_codes add up to %" PRIu64 " > the %" PRIu64
                             " responses of accounting (ok + rejected + http_error + invalid)",
                             who, have, can);
        if (i < rec->ntargets) {
            record_status_add(&sum, &one);
            continue;
        }
        for (size_t k = 0; k < RUN_STATUS_SLOTS; k++)
            if (sum.n[k] != one.n[k]) {
                int st = record_status_of_slot(k);
                char key[16];
                if (st < 0)
                    snprintf(key, sizeof key, "other");
                else
                    snprintf(key, sizeof key, "%d", st);
                return knee_fail(err, errlen, KNEE_EFORMAT,
                                 "all: status_codes.%s %" PRIu64 " != the targets' sum %" PRIu64, key, one.n[k],
                                 sum.n[k]);
            }
    }
    return 0;
}

/* The identities of what record_read_json read: every target's counts and warm-up counts, all's
 * as their sum, the status codes, and the stated rates. */
static int strict_identities(const json_t *root, const struct run_record *rec, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; i <= rec->ntargets && !rc; i++) {
        const struct run_target_result *t = i < rec->ntargets ? &rec->targets[i] : &rec->all;
        char who[80];
        target_who(rec, i, who, sizeof who);
        rc = counts_identities(&t->counts, who, "accounting", err, errlen);
        if (!rc)
            rc = counts_identities(&t->warmup_counts, who, "warmup", err, errlen);
    }
    if (!rc)
        rc = all_is_sum(rec, false, err, errlen);
    if (!rc)
        rc = all_is_sum(rec, true, err, errlen);
    if (!rc)
        rc = status_codes_ok(root, rec, err, errlen);
    return rc ? rc : rates_ok(root, err, errlen);
}

int record_read_json_strict(const json_t *root, struct run_record *rec, char *err, size_t errlen)
{
    memset(rec, 0, sizeof *rec);
    int rc = strict_head(root, err, errlen);
    if (!rc)
        rc = record_read_json(root, rec, err, errlen);
    const json_t *ts = get(root, "targets");
    for (size_t i = 0; i <= rec->ntargets && !rc; i++) {
        const json_t *t = i < rec->ntargets ? json_array_get(ts, i) : get(root, "all");
        rc = need_counts(get(t, "accounting"), i < rec->ntargets ? "accounting" : "all.accounting", err, errlen);
        if (!rc)
            rc = need_counts(get(t, "warmup"), i < rec->ntargets ? "warmup" : "all.warmup", err, errlen);
    }
    if (!rc)
        rc = strict_identities(root, rec, err, errlen);
    if (!rc)
        rc = record_stages_read_json(root, rec, true, err, errlen);
    if (!rc) {
        record_entries_release(&rec->entries);
        rc = record_entries_read_json(root, &rec->entries, true, err, errlen);
    }
    if (!rc && json_array_size(get(get(get(root, "shard"), "histograms"), "targets")) != rec->ntargets)
        rc = knee_fail(err, errlen, KNEE_EFORMAT, "shard.histograms.targets does not list the %zu targets",
                       rec->ntargets);
    if (rc)
        record_release(rec);
    return rc;
}

/* One target's events against its counts: each request is counted once by its events' times
 * (record_events_count), so no event count exceeds the requests it counts. */
static int events_fit(const struct run_target_result *t, const char *who, char *err, size_t errlen)
{
    const struct run_events *e = &t->events;
    const struct run_counts *c = &t->counts, *w = &t->warmup_counts;
    uint64_t planned = sat_add(c->planned, w->planned), sent = sat_add(c->sent, w->sent);
    uint64_t ok = sat_add(c->outcome[OUTCOME_OK], w->outcome[OUTCOME_OK]);
    if (e->sends != sat_add(e->sent, e->sent_late))
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: events.sends %" PRIu64 " != events.sent %" PRIu64 " + events.sent_late %" PRIu64, who,
                         e->sends, e->sent, e->sent_late);
    if (e->planned > planned)
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: events.planned %" PRIu64 " > the %" PRIu64 " requests planned (accounting + warmup)", who,
                         e->planned, planned);
    if (sat_add(e->sent_before, e->sends) > sent)
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: events.sent_before %" PRIu64 " + events.sends %" PRIu64 " > the %" PRIu64
                         " requests sent (accounting + warmup)",
                         who, e->sent_before, e->sends, sent);
    if (sat_add(e->completed, e->completed_late) > sent)
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: events.completed %" PRIu64 " + events.completed_late %" PRIu64 " > the %" PRIu64
                         " requests sent (accounting + warmup)",
                         who, e->completed, e->completed_late, sent);
    if (e->ok > e->completed || e->ok > ok)
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: events.ok %" PRIu64 " > events.completed %" PRIu64 " or the %" PRIu64
                         " ok (accounting + warmup)",
                         who, e->ok, e->completed, ok);
    return 0;
}

int record_check_events(const struct run_record *rec, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; i <= rec->ntargets && !rc; i++) {
        const struct run_target_result *t = i < rec->ntargets ? &rec->targets[i] : &rec->all;
        char who[80];
        target_who(rec, i, who, sizeof who);
        rc = events_fit(t, who, err, errlen);
    }
    return rc;
}
