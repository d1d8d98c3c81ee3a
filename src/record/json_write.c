/* The one writer of the run JSON (docs/FORMATS.md, "knee run JSON"): a record as one object.
 * Milliseconds everywhere, as the text; a statistic without samples is null. The scalar fields
 * come from the lists of record/fields.h, which the reader (json_read.c) expands too. */
#include "record/record.h"

#include "core/json.h"
#include "hlog/codec.h"
#include "record/fields.h"

#include <math.h>
#include <string.h>

/* ---- the kinds of record/fields.h ---- */

static void put_f64(struct json *j, const char *key, const double *v)
{
    json_kv_double(j, key, *v);
}

static void put_pos(struct json *j, const char *key, const double *v)
{
    json_kv_double(j, key, *v > 0 ? *v : NAN);
}

static void put_flag(struct json *j, const char *key, const bool *v)
{
    json_kv_bool(j, key, *v);
}

static void put_u64(struct json *j, const char *key, const uint64_t *v)
{
    json_kv_uint(j, key, *v);
}

static void put_u32(struct json *j, const char *key, const uint32_t *v)
{
    json_kv_uint(j, key, *v);
}

static void put_lng(struct json *j, const char *key, const long *v)
{
    json_kv_int(j, key, *v);
}

static void put_s_ns(struct json *j, const char *key, const uint64_t *ns)
{
    json_kv_double(j, key, (double)*ns / 1e9);
}

static void put_s_ns0(struct json *j, const char *key, const uint64_t *ns)
{
    json_kv_double(j, key, *ns ? (double)*ns / 1e9 : NAN);
}

static void put_ms_ns(struct json *j, const char *key, const uint64_t *ns)
{
    json_kv_double(j, key, (double)*ns / 1e6);
}

static void put_ms_ns0(struct json *j, const char *key, const uint64_t *ns)
{
    json_kv_double(j, key, *ns ? (double)*ns / 1e6 : NAN);
}

static void put_triple(struct json *j, const char *key, const double (*v)[3])
{
    json_key(j, key);
    json_array_begin(j);
    for (int i = 0; i < 3; i++)
        json_double(j, (*v)[i]);
    json_array_end(j);
}

static void put_text(struct json *j, const char *key, const char *s)
{
    json_kv_string(j, key, s);
}

static void kv_null(struct json *j, const char *key)
{
    json_key(j, key);
    json_null(j);
}

static void kv_string_or_null(struct json *j, const char *key, const char *s)
{
    if (s)
        json_kv_string(j, key, s);
    else
        kv_null(j, key);
}

/* ---- targets ---- */

static void summary(struct json *j, const char *key, const struct run_summary *s)
{
    json_key(j, key);
    json_object_begin(j);
    FIELDS_WRITE(RECORD_SUMMARY_FIELDS, j, struct run_summary, s);
    json_object_end(j);
}

/* Beside every "outcomes": why the transport ones failed (the causes add up to outcomes.
 * transport) and how many requests --retry-stale sent a second time (not in "sent"). */
static void outcomes(struct json *j, const struct run_counts *c)
{
    json_key(j, "outcomes");
    json_object_begin(j);
    for (int o = 0; o < OUTCOME_COUNT; o++)
        json_kv_uint(j, reqlog_outcome_name((enum reqlog_outcome)o), c->outcome[o]);
    json_object_end(j);
    json_key(j, "transport_causes");
    json_object_begin(j);
    for (int k = 0; k < RUN_TC_COUNT; k++)
        json_kv_uint(j, run_transport_cause_name((enum run_transport_cause)k), c->transport_cause[k]);
    json_object_end(j);
    json_kv_uint(j, "retries", c->retries);
}

static void accounting(struct json *j, const char *key, const struct run_counts *c)
{
    json_key(j, key);
    json_object_begin(j);
    json_kv_uint(j, "planned", c->planned);
    json_kv_uint(j, "sent", c->sent);
    json_kv_uint(j, "dropped", c->dropped);
    uint64_t sum = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            sum += c->outcome[o];
    json_kv_bool(j, "planned_eq_sent_plus_dropped", c->planned == c->sent + c->dropped);
    json_kv_bool(j, "sent_eq_outcomes", c->sent == sum);
    json_kv_uint(j, "queued", c->queued);
    json_kv_uint(j, "queue_overflow", c->queue_overflow);
    outcomes(j, c);
    json_object_end(j);
}

/* "rates" (per second over the window, by event time) and "events" (the counts behind them
 * and what happened outside the window): docs/FORMATS.md, "Rates". */
static void rates(struct json *j, const struct run_target_result *t)
{
    json_key(j, "rates");
    json_object_begin(j);
    FIELDS_WRITE(RECORD_RATES_FIELDS, j, struct run_rates, &t->rates);
    json_object_end(j);
    json_key(j, "events");
    json_object_begin(j);
    FIELDS_WRITE(RECORD_EVENTS_FIELDS, j, struct run_events, &t->events);
    json_object_end(j);
}

/* A target's "tls" (handshake time; null for plain targets), "protocols", "tls_versions",
 * "tls_handshakes" and "h2" (docs/FORMATS.md, "knee run over TLS and HTTP/2"). */
static void transport_target(struct json *j, const struct run_target_result *t)
{
    const struct run_proto_counts *pc = &t->pc;
    if (t->https)
        summary(j, "tls", &t->sum.tls);
    else
        kv_null(j, "tls");
    json_key(j, "protocols");
    json_object_begin(j);
    json_kv_uint(j, "http/1.1", pc->http1);
    json_kv_uint(j, "h2", pc->h2);
    json_object_end(j);
    json_key(j, "tls_versions");
    json_object_begin(j);
    for (int v = 0; v < RUN_TLS_VERSIONS; v++)
        if (pc->tls_version[v])
            json_kv_uint(j, run_tls_version_name(v), pc->tls_version[v]);
    json_object_end(j);
    json_key(j, "tls_handshakes");
    json_object_begin(j);
    FIELDS_WRITE(RECORD_HANDSHAKE_FIELDS, j, struct run_proto_counts, pc);
    uint64_t hs = pc->tls_full + pc->tls_resumed;
    json_kv_double(j, "resumption_ratio", hs ? (double)pc->tls_resumed / (double)hs : NAN);
    json_object_end(j);
    json_key(j, "h2");
    json_object_begin(j);
    json_kv_uint(j, "streams", pc->h2_streams);
    if (pc->h2_max_concurrent == UINT64_MAX || !pc->h2)
        kv_null(j, "max_concurrent");
    else
        json_kv_uint(j, "max_concurrent", pc->h2_max_concurrent);
    FIELDS_WRITE(RECORD_H2_FIELDS, j, struct run_proto_counts, pc);
    json_object_end(j);
}

static void target(struct json *j, const struct run_target_result *t, bool is_all)
{
    json_object_begin(j);
    json_kv_string(j, "name", t->name);
    if (!is_all)
        FIELDS_WRITE(RECORD_TARGET_FIELDS, j, struct run_target_result, t);
    rates(j, t);
    outcomes(j, &t->counts);
    accounting(j, "accounting", &t->counts);
    accounting(j, "warmup", &t->warmup_counts);
    summary(j, "latency", &t->sum.latency_all);
    json_key(j, "latency_by_outcome");
    json_object_begin(j);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        if (t->sum.latency[g].count)
            summary(j, run_group_name((enum run_group)g), &t->sum.latency[g]);
    json_object_end(j);
    summary(j, "service", &t->sum.service);
    summary(j, "ttfb", &t->sum.ttfb);
    summary(j, "lag", &t->sum.lag);
    summary(j, "connect", &t->sum.connect);
    transport_target(j, t);
    json_key(j, "server_timing");
    json_object_begin(j);
    for (size_t i = 0; i < t->nst; i++)
        summary(j, t->st[i].name, &t->st[i].sum);
    json_object_end(j);
    json_key(j, "connections");
    json_object_begin(j);
    FIELDS_WRITE(RECORD_CONNECTIONS_FIELDS, j, struct run_counts, &t->counts);
    json_object_end(j);
    json_kv_uint(j, "bytes_in", t->counts.bytes_in + t->warmup_counts.bytes_in);
    json_object_end(j);
}

/* ---- environment and plan ---- */

static void environment(struct json *j, const struct run_result *r)
{
    const struct run_env *env = &r->env;
    json_key(j, "environment");
    json_object_begin(j);
    json_kv_string(j, "version", env->version);
    json_key(j, "args");
    json_array_begin(j);
    for (int i = 0; i < r->config.argc; i++)
        json_string(j, r->config.argv[i]);
    json_array_end(j);
    FIELDS_WRITE(RECORD_ENV_FIELDS, j, struct run_env, env);
    uint64_t sent = r->all.counts.sent + r->all.warmup_counts.sent;
    json_kv_double(j, "cpu_us_per_request", sent ? (env->cpu_user_s + env->cpu_sys_s) * 1e6 / (double)sent : NAN);
    json_kv_int(j, "peak_rss_kb", env->peak_rss_kb);
    const struct run_generator_cpu *gc = &env->gen_cpu;
    if (gc->threads) {
        json_key(j, "generator_cpu");
        json_object_begin(j);
        FIELDS_WRITE(RECORD_GEN_CPU_FIELDS, j, struct run_generator_cpu, gc);
        json_kv_double(j, "core_share", run_generator_cpu_share(gc));
        json_object_end(j);
    } else {
        kv_null(j, "generator_cpu");
    }
    json_kv_string(j, "openssl", env->openssl);
    json_kv_string(j, "nghttp2", env->nghttp2);
    json_object_end(j);
}

static const char *tls_version_text(int v)
{
    return v >= 0x0301 && v <= 0x0304 ? run_tls_version_name(v - 0x0301) : NULL;
}

/* config: "tls" when a target is https; "h2c", "streams", "requests_per_connection". */
static void transport_config(struct json *j, const struct run_result *r)
{
    const struct record_config *c = &r->config;
    if (r->all.https) {
        json_key(j, "tls");
        json_object_begin(j);
        json_kv_bool(j, "verify", !c->tls_insecure);
        kv_string_or_null(j, "cacert", c->tls_cacert);
        json_key(j, "versions");
        json_array_begin(j);
        for (int k = 0; k < 2; k++) {
            const char *v = tls_version_text(k ? c->tls_max_version : c->tls_min_version);
            if (v)
                json_string(j, v);
            else
                json_null(j);
        }
        json_array_end(j);
        kv_string_or_null(j, "ciphers", c->tls_ciphers);
        json_kv_string(j, "alpn", c->http == RUN_HTTP_1 ? "http/1.1" : c->http == RUN_HTTP_2 ? "h2" : "h2,http/1.1");
        json_kv_bool(j, "resume", !c->tls_no_resume);
        json_object_end(j);
    }
    json_kv_bool(j, "h2c", c->h2c);
    if (c->streams)
        json_kv_uint(j, "streams", c->streams);
    else
        kv_null(j, "streams");
    if (c->requests_per_connection)
        json_kv_uint(j, "requests_per_connection", c->requests_per_connection);
    else
        kv_null(j, "requests_per_connection");
}

static void config(struct json *j, const struct run_result *r)
{
    const struct record_config *c = &r->config;
    json_key(j, "config");
    json_object_begin(j);
    json_kv_string(j, "mode", c->open_loop ? "open" : "closed");
    if (c->open_loop) {
        json_kv_string(j, "arrivals", c->arrivals == RUN_ARRIVALS_POISSON ? "poisson" : "constant");
        json_kv_uint(j, "seed", c->seed);
        if (c->ramp) {
            json_key(j, "ramp");
            json_object_begin(j);
            json_kv_double(j, "from", c->ramp_from);
            json_kv_double(j, "to", c->ramp_to);
            json_object_end(j);
        } else {
            put_pos(j, "rate", &c->rate);
        }
        json_kv_uint(j, "pool_cap", r->pool_cap);
        json_kv_string(j, "when_busy", c->when_busy == RUN_BUSY_DROP ? "drop" : "queue");
        put_ms_ns(j, "timer_slack_ms", &c->timer_slack_ns);
    } else {
        put_s_ns(j, "think_s", &c->think_ns);
    }
    json_kv_uint(j, "threads", r->threads);
    json_kv_string(j, "io", run_io_name(c->io)); /* as asked (--io) */
    if (r->io != RUN_IO_AUTO)
        json_kv_string(j, "io_engine", run_io_name(r->io)); /* what ran */
    FIELDS_WRITE(RECORD_CONFIG_FIELDS, j, struct run_result, r);
    transport_config(j, r);
    if (c->expect_body)
        json_kv_string(j, "expect_body", c->expect_body);
    json_key(j, "reject");
    json_array_begin(j);
    for (size_t i = 0; i < c->nrejects; i++) {
        json_object_begin(j);
        json_kv_int(j, "status", c->rejects[i].status);
        if (c->rejects[i].body)
            json_kv_string(j, "body", c->rejects[i].body);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

/* "generator": run_generator_judge's verdict, each rule apart. */
static void generator(struct json *j, const struct run_result *r)
{
    json_key(j, "generator");
    json_object_begin(j);
    FIELDS_WRITE(RECORD_GENERATOR_FIELDS, j, struct run_result, r);
    put_ms_ns0(j, "lag_limit_ms", &r->config.lag_limit_ns);
    put_ms_ns(j, "timer_slack_ms", &r->config.timer_slack_ns);
    json_kv_double(j, "gap_ms", r->generator.gap_ms);
    json_object_end(j);
}

/* ---- the timeline, warnings and thresholds ---- */

static void timeline(struct json *j, const struct run_result *r)
{
    json_key(j, "timeline");
    json_array_begin(j);
    for (size_t i = 0; i < r->nticks; i++) {
        json_object_begin(j);
        FIELDS_WRITE(RECORD_TICK_FIELDS, j, struct run_tick, &r->ticks[i]);
        json_object_end(j);
    }
    json_array_end(j);
}

static void warnings_and_thresholds(struct json *j, const struct run_result *r)
{
    json_key(j, "warnings");
    json_array_begin(j);
    for (size_t i = 0; i < r->warnings.n; i++)
        json_string(j, r->warnings.items[i]);
    json_array_end(j);
    json_key(j, "thresholds");
    json_array_begin(j);
    bool all_pass = true;
    for (size_t i = 0; i < r->nthresholds; i++) {
        const struct record_threshold *t = &r->thresholds[i];
        json_object_begin(j);
        json_kv_string(j, "expr", t->expr);
        json_kv_double(j, "measured", t->measured);
        json_kv_string(j, "unit", strcmp(t->unit, "%") == 0 ? "fraction" : t->unit);
        json_kv_bool(j, "pass", t->pass);
        json_object_end(j);
        all_pass &= t->pass;
    }
    json_array_end(j);
    json_kv_bool(j, "thresholds_pass", all_pass);
}

/* ---- the shard record: the histograms themselves, so shards add up exactly ---- */

static void hist(struct json *j, struct hlog_codec *c, const char *key, const struct hdr *h)
{
    json_key(j, key);
    json_object_begin(j);
    json_kv_int(j, "count", h->total_count);
    if (h->total_count) {
        json_kv_int(j, "min_ns", h->min_value);
        json_kv_int(j, "max_ns", h->max_value);
    }
    if (h->overflow_count) {
        json_kv_int(j, "overflow", h->overflow_count);
        json_kv_int(j, "overflow_max_ns", h->overflow_max);
    }
    const char *text;
    size_t len;
    if (h->counts && hlog_encode_base64(c, h, &text, &len) == 0)
        json_kv_string(j, "hdr", text);
    json_object_end(j);
}

/* One target's histograms and its events exactly (ns since t0: what "events" and "rates" are
 * computed from, with the window and the first and last send, so a merge adds the shards'
 * events up as the engine adds its threads'). */
static void target_hists(struct json *j, struct hlog_codec *c, const struct run_target_result *t)
{
    json_object_begin(j);
    json_kv_string(j, "name", t->name);
    json_kv_uint(j, "sent_on_time", t->counts.sent_on_time);
    json_key(j, "events");
    json_object_begin(j);
    FIELDS_WRITE(RECORD_SHARD_EVENTS_FIELDS, j, struct run_events, &t->events);
    json_object_end(j);
    hist(j, c, "latency", &t->latency_all);
    json_key(j, "by_outcome");
    json_object_begin(j);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        if (t->latency[g].total_count)
            hist(j, c, run_group_name((enum run_group)g), &t->latency[g]);
    json_object_end(j);
    hist(j, c, "service", &t->service);
    hist(j, c, "ttfb", &t->ttfb);
    hist(j, c, "lag", &t->lag);
    hist(j, c, "connect", &t->connect);
    if (t->https)
        hist(j, c, "tls", &t->tls);
    json_key(j, "server_timing");
    json_object_begin(j);
    for (size_t i = 0; i < t->nst; i++)
        hist(j, c, t->st[i].name, &t->st[i].dur);
    json_object_end(j);
    json_object_end(j);
}

/* A merge's shards; a shard's own source, skew and clock. */
static void shard_parts(struct json *j, const struct run_shard *s)
{
    if (s->index == RUN_SHARD_MERGED) {
        json_kv_bool(j, "complete", s->complete);
        json_key(j, "start_skew_ms");
        json_object_begin(j);
        json_kv_double(j, "min", (double)s->skew_min_ns / 1e6);
        json_kv_double(j, "max", (double)s->skew_max_ns / 1e6);
        json_object_end(j);
        json_key(j, "shards");
        json_array_begin(j);
        for (size_t i = 0; i < s->nparts; i++) {
            const struct run_shard_part *p = &s->parts[i];
            json_object_begin(j);
            json_kv_uint(j, "index", p->index);
            json_kv_string(j, "host", p->host);
            json_kv_double(j, "start_skew_ms", (double)p->start_skew_ns / 1e6);
            json_kv_bool(j, "generator_limited", p->generator_limited);
            json_kv_bool(j, "failed", p->failed);
            if (p->failed)
                json_kv_string(j, "failure", p->failure);
            json_object_end(j);
        }
        json_array_end(j);
        return;
    }
    json_kv_string(j, "source", s->source);
    json_kv_double(j, "start_skew_ms", (double)s->start_skew_ns / 1e6);
    json_key(j, "clock");
    json_object_begin(j);
    json_kv_bool(j, "synced", s->clock_synced);
    json_kv_double(j, "maxerror_ms", s->clock_maxerror_ms);
    json_kv_double(j, "esterror_ms", s->clock_esterror_ms);
    json_object_end(j);
}

/* The whole plan's streams (open loop), for the merge's check that the shards planned it all. */
static void shard_streams(struct json *j, const struct run_shard *s)
{
    json_key(j, "streams");
    json_array_begin(j);
    for (size_t i = 0; i < s->nstreams; i++) {
        json_object_begin(j);
        json_kv_double(j, "rate_from", s->streams[i].rate_from);
        json_kv_double(j, "rate_to", s->streams[i].rate_to);
        if (s->streams[i].limit == UINT64_MAX)
            kv_null(j, "limit");
        else
            json_kv_uint(j, "limit", s->streams[i].limit);
        json_object_end(j);
    }
    json_array_end(j);
}

/* "shard" (--shard / --start-at, or a merge): index, count, source, plan id, start instant, t0,
 * skew, clock, and every histogram of the record per target and in total. */
static void shard(struct json *j, const struct run_result *r)
{
    const struct run_shard *s = &r->shard;
    if (!s->count)
        return;
    char hex[24], when[48];
    json_key(j, "shard");
    json_object_begin(j);
    json_kv_bool(j, "merged", s->index == RUN_SHARD_MERGED);
    if (s->index == RUN_SHARD_MERGED)
        kv_null(j, "index");
    else
        json_kv_uint(j, "index", s->index);
    json_kv_uint(j, "count", s->count);
    json_kv_string(j, "plan_id", run_shard_plan_hex(s->plan_id, hex, sizeof hex));
    if (s->start_at_unix_ns) {
        json_kv_double(j, "start_at_unix_s", (double)s->start_at_unix_ns / 1e9);
        json_kv_uint(j, "start_at_unix_ns", s->start_at_unix_ns);
        json_kv_string(j, "start_at_utc", run_shard_utc(s->start_at_unix_ns, when, sizeof when));
    } else {
        kv_null(j, "start_at_unix_s");
    }
    json_kv_uint(j, "t0_unix_ns", s->t0_unix_ns);
    json_kv_double(j, "lag_limit_ms", (double)s->lag_limit_ns / 1e6);
    shard_parts(j, s);
    shard_streams(j, s);
    struct hlog_codec *c = hlog_codec_new();
    json_key(j, "histograms");
    json_object_begin(j);
    json_key(j, "all");
    target_hists(j, c, &r->all);
    json_key(j, "targets");
    json_array_begin(j);
    for (size_t i = 0; i < r->ntargets; i++)
        target_hists(j, c, &r->targets[i]);
    json_array_end(j);
    json_object_end(j);
    hlog_codec_free(c);
    json_object_end(j);
}

void record_write_json(FILE *out, const struct run_result *r, bool pretty)
{
    struct json j;
    json_init(&j, out, pretty);
    json_object_begin(&j);
    json_kv_string(&j, "schema", RUN_JSON_SCHEMA);
    environment(&j, r);
    config(&j, r);
    FIELDS_WRITE(RECORD_TOP_FIELDS, &j, struct run_result, r);
    generator(&j, r);
    FIELDS_WRITE(RECORD_VERDICT_FIELDS, &j, struct run_result, r);
    json_key(&j, "latency_interval");
    json_string(&j, r->config.open_loop ? "T5-T0 (planned send to full response)" : "T5-T1 (send to full response)");
    rates(&j, &r->all);
    outcomes(&j, &r->all.counts);
    json_key(&j, "all");
    target(&j, &r->all, true);
    json_key(&j, "targets");
    json_array_begin(&j);
    for (size_t i = 0; i < r->ntargets; i++)
        target(&j, &r->targets[i], false);
    json_array_end(&j);
    timeline(&j, r);
    warnings_and_thresholds(&j, r);
    shard(&j, r); /* --shard / --start-at, or a merge: the shard record and histograms */
    json_object_end(&j);
    json_end(&j);
}
