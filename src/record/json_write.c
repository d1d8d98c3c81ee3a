/* The one writer of the run JSON (docs/FORMATS.md, "knee run JSON"): a record as one object.
 * Milliseconds everywhere, as the text; a statistic without samples is null. The scalar fields
 * come from the lists of record/fields.h, which the reader (json_read.c) expands too. */
#include "record/record.h"

#include "core/clock.h"
#include "core/json.h"
#include "hlog/codec.h"
#include "record/fields.h"
#include "record/stages.h"

#include <math.h>
#include <string.h>

/* ---- the kinds of record/fields.h ---- */

static void put_f64(struct jw *j, const char *key, const double *v)
{
    jw_kv_double(j, key, *v);
}

static void put_pos(struct jw *j, const char *key, const double *v)
{
    jw_kv_double(j, key, *v > 0 ? *v : NAN);
}

static void put_flag(struct jw *j, const char *key, const bool *v)
{
    jw_kv_bool(j, key, *v);
}

static void put_u64(struct jw *j, const char *key, const uint64_t *v)
{
    jw_kv_uint(j, key, *v);
}

static void put_u32(struct jw *j, const char *key, const uint32_t *v)
{
    jw_kv_uint(j, key, *v);
}

static void put_lng(struct jw *j, const char *key, const long *v)
{
    jw_kv_int(j, key, *v);
}

static void put_s_ns(struct jw *j, const char *key, const uint64_t *ns)
{
    jw_kv_double(j, key, (double)*ns / 1e9);
}

static void put_s_ns0(struct jw *j, const char *key, const uint64_t *ns)
{
    jw_kv_double(j, key, *ns ? (double)*ns / 1e9 : NAN);
}

static void put_ms_ns(struct jw *j, const char *key, const uint64_t *ns)
{
    jw_kv_double(j, key, (double)*ns / 1e6);
}

static void put_ms_ns0(struct jw *j, const char *key, const uint64_t *ns)
{
    jw_kv_double(j, key, *ns ? (double)*ns / 1e6 : NAN);
}

static void put_triple(struct jw *j, const char *key, const double (*v)[3])
{
    jw_key(j, key);
    jw_array_begin(j);
    for (int i = 0; i < 3; i++)
        jw_double(j, (*v)[i]);
    jw_array_end(j);
}

static void put_text(struct jw *j, const char *key, const char *s)
{
    jw_kv_string(j, key, s);
}

static void kv_null(struct jw *j, const char *key)
{
    jw_key(j, key);
    jw_null(j);
}

static void kv_string_or_null(struct jw *j, const char *key, const char *s)
{
    if (s)
        jw_kv_string(j, key, s);
    else
        kv_null(j, key);
}

/* ---- targets ---- */

static void summary(struct jw *j, const char *key, const struct run_summary *s)
{
    jw_key(j, key);
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_SUMMARY_FIELDS, j, struct run_summary, s);
    jw_object_end(j);
}

/* Beside every "outcomes": why the transport ones failed (the causes add up to outcomes.
 * transport) and how many requests --retry-stale sent a second time (not in "sent"). */
static void outcomes(struct jw *j, const struct run_counts *c)
{
    jw_key(j, "outcomes");
    jw_object_begin(j);
    for (int o = 0; o < OUTCOME_COUNT; o++)
        jw_kv_uint(j, reqlog_outcome_name((enum reqlog_outcome)o), c->outcome[o]);
    jw_object_end(j);
    jw_key(j, "transport_causes");
    jw_object_begin(j);
    for (int k = 0; k < RUN_TC_COUNT; k++)
        jw_kv_uint(j, record_transport_cause_name((enum run_transport_cause)k), c->transport_cause[k]);
    jw_object_end(j);
    jw_kv_uint(j, "retries", c->retries);
}

static void accounting(struct jw *j, const char *key, const struct run_counts *c)
{
    jw_key(j, key);
    jw_object_begin(j);
    jw_kv_uint(j, "planned", c->planned);
    jw_kv_uint(j, "sent", c->sent);
    jw_kv_uint(j, "dropped", c->dropped);
    uint64_t sum = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            sum += c->outcome[o];
    jw_kv_bool(j, "planned_eq_sent_plus_dropped", c->planned == c->sent + c->dropped);
    jw_kv_bool(j, "sent_eq_outcomes", c->sent == sum);
    jw_kv_uint(j, "queued", c->queued);
    jw_kv_uint(j, "queue_overflow", c->queue_overflow);
    outcomes(j, c);
    jw_object_end(j);
}

/* "rates" (per second over the window, by event time) and "events" (the counts behind them
 * and what happened outside the window): docs/FORMATS.md, "Rates". */
static void rates(struct jw *j, const struct run_target_result *t)
{
    jw_key(j, "rates");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_RATES_FIELDS, j, struct run_rates, &t->rates);
    jw_object_end(j);
    jw_key(j, "events");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_EVENTS_FIELDS, j, struct run_events, &t->events);
    jw_object_end(j);
}

/* A target's "quic" (--http3; docs/FORMATS.md): the counters, then the stream resets and the
 * connection closes by code (only the codes seen). */
static void quic_codes(struct jw *j, const char *key, const uint64_t *codes)
{
    jw_key(j, key);
    jw_object_begin(j);
    for (int k = 0; k < RUN_QC_COUNT; k++)
        if (codes[k])
            jw_kv_uint(j, record_quic_code_name(k), codes[k]);
    jw_object_end(j);
}

static void quic_target(struct jw *j, const struct run_quic_counts *q)
{
    jw_key(j, "quic");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_QUIC_FIELDS, j, struct run_quic_counts, q);
    quic_codes(j, "reset_codes", q->reset_codes);
    quic_codes(j, "close_codes", q->close_codes);
    jw_object_end(j);
}

/* A target's "tls" (handshake time; null for plain targets), "protocols", "tls_versions",
 * "tls_handshakes" and "h2" (docs/FORMATS.md, "knee run over TLS and HTTP/2"). */
static void transport_target(struct jw *j, const struct run_target_result *t)
{
    const struct run_proto_counts *pc = &t->pc;
    if (t->https)
        summary(j, "tls", &t->sum.tls);
    else
        kv_null(j, "tls");
    jw_key(j, "protocols");
    jw_object_begin(j);
    jw_kv_uint(j, "http/1.1", pc->http1);
    jw_kv_uint(j, "h2", pc->h2);
    bool quic = pc->h3 || pc->quic.datagrams_sent; /* a QUIC run (--http3): the keys of HTTP/3 */
    if (quic)
        jw_kv_uint(j, "h3", pc->h3);
    jw_object_end(j);
    jw_key(j, "tls_versions");
    jw_object_begin(j);
    for (int v = 0; v < RUN_TLS_VERSIONS; v++)
        if (pc->tls_version[v])
            jw_kv_uint(j, record_tls_version_name(v), pc->tls_version[v]);
    jw_object_end(j);
    jw_key(j, "tls_handshakes");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_HANDSHAKE_FIELDS, j, struct run_proto_counts, pc);
    uint64_t hs = pc->tls_full + pc->tls_resumed;
    jw_kv_double(j, "resumption_ratio", hs ? (double)pc->tls_resumed / (double)hs : NAN);
    jw_object_end(j);
    jw_key(j, "h2");
    jw_object_begin(j);
    jw_kv_uint(j, "streams", pc->h2_streams);
    /* a reader before "none seen" takes any value but a number for unlimited */
    if (pc->h2 && !pc->h2_limit_seen)
        jw_kv_string(j, "max_concurrent", "none seen");
    else if (pc->h2_max_concurrent == UINT64_MAX || !pc->h2)
        kv_null(j, "max_concurrent");
    else
        jw_kv_uint(j, "max_concurrent", pc->h2_max_concurrent);
    FIELDS_WRITE(RECORD_H2_FIELDS, j, struct run_proto_counts, pc);
    jw_object_end(j);
    jw_key(j, "proxy_refused"); /* --proxy: CONNECTs refused, by the proxy's status */
    jw_object_begin(j);
    for (int k = 0; k < RUN_PROXY_STATUS_N; k++)
        if (pc->proxy_refused[k]) {
            char code[8];
            snprintf(code, sizeof code, "%d", k + RUN_PROXY_STATUS_MIN);
            jw_kv_uint(j, code, pc->proxy_refused[k]);
        }
    jw_object_end(j);
    if (quic)
        quic_target(j, &pc->quic);
}

/* A histogram's percentile spectrum, as the HdrHistogram plotter draws it (knee report's
 * stream charts): the percentile iterator's levels, 5 per halving of the distance to 100 %, as
 * fractions below 1 in "p" and the value there in ms in "ms" (the maximum is the summary's). */
static void spectrum(struct jw *j, const char *key, const struct hdr *h)
{
    if (!h->counts || !h->total_count)
        return;
    struct hdr_iter it;
    jw_key(j, key);
    jw_object_begin(j);
    jw_key(j, "p");
    jw_array_begin(j);
    hdr_iter_percentile_init(&it, h, 5);
    while (hdr_iter_next(&it))
        if (it.percentile_level_iterated_to < 100)
            jw_double(j, it.percentile_level_iterated_to / 100);
    jw_array_end(j);
    jw_key(j, "ms");
    jw_array_begin(j);
    hdr_iter_percentile_init(&it, h, 5);
    while (hdr_iter_next(&it))
        if (it.percentile_level_iterated_to < 100)
            jw_double(j, (double)it.value_iterated_to / 1e6);
    jw_array_end(j);
    jw_object_end(j);
}

/* "stream": the events of streamed responses (absent when none was timed); "spectrum" only
 * when the histograms are at hand (a run's own result, not a record read back from JSON). */
static void stream(struct jw *j, const struct run_stream_sum *s, const struct run_stream *h)
{
    if (!s->present)
        return;
    jw_key(j, "stream");
    jw_object_begin(j);
    summary(j, "first_event", &s->first_event);
    summary(j, "event_gap", &s->event_gap);
    jw_kv_uint(j, "events", s->events);
    jw_kv_uint(j, "responses", s->responses);
    summary(j, "events_per_response", &s->per_response);
    jw_kv_double(j, "events_per_s", s->events_per_s);
    jw_kv_uint(j, "not_sse", s->not_sse);
    jw_kv_uint(j, "partial", s->partial);
    if ((h->first_event.counts && h->first_event.total_count) || (h->event_gap.counts && h->event_gap.total_count)) {
        jw_key(j, "spectrum");
        jw_object_begin(j);
        spectrum(j, "first_event", &h->first_event);
        spectrum(j, "event_gap", &h->event_gap);
        jw_object_end(j);
    }
    jw_object_end(j);
}

static void target(struct jw *j, const struct run_target_result *t, bool is_all)
{
    jw_object_begin(j);
    jw_kv_string(j, "name", t->name);
    if (!is_all)
        FIELDS_WRITE(RECORD_TARGET_FIELDS, j, struct run_target_result, t);
    rates(j, t);
    outcomes(j, &t->counts);
    accounting(j, "accounting", &t->counts);
    accounting(j, "warmup", &t->warmup_counts);
    record_status_write_json(j, "status_codes", &t->status);
    summary(j, "latency", &t->sum.latency_all);
    jw_key(j, "latency_by_outcome");
    jw_object_begin(j);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        if (t->sum.latency[g].count)
            summary(j, record_group_name((enum run_group)g), &t->sum.latency[g]);
    jw_object_end(j);
    summary(j, "service", &t->sum.service);
    summary(j, "ttfb", &t->sum.ttfb);
    summary(j, "lag", &t->sum.lag);
    summary(j, "connect", &t->sum.connect);
    transport_target(j, t);
    jw_key(j, "server_timing");
    jw_object_begin(j);
    for (size_t i = 0; i < t->nst; i++)
        summary(j, t->st[i].name, &t->st[i].sum);
    jw_object_end(j);
    jw_key(j, "connections");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_CONNECTIONS_FIELDS, j, struct run_counts, &t->counts);
    jw_object_end(j);
    jw_kv_uint(j, "bytes_in", t->counts.bytes_in + t->warmup_counts.bytes_in);
    stream(j, &t->stream_sum, &t->stream);
    jw_object_end(j);
}

/* ---- environment and plan ---- */

static void environment(struct jw *j, const struct run_record *r)
{
    const struct run_env *env = &r->env;
    jw_key(j, "environment");
    jw_object_begin(j);
    jw_kv_string(j, "version", env->version);
    jw_key(j, "args");
    jw_array_begin(j);
    for (int i = 0; i < r->config.argc; i++)
        jw_string(j, r->config.argv[i]);
    jw_array_end(j);
    FIELDS_WRITE(RECORD_ENV_FIELDS, j, struct run_env, env);
    uint64_t sent = r->all.counts.sent + r->all.warmup_counts.sent;
    jw_kv_double(j, "cpu_us_per_request", sent ? (env->cpu_user_s + env->cpu_sys_s) * 1e6 / (double)sent : NAN);
    jw_kv_int(j, "peak_rss_kb", env->peak_rss_kb);
    const struct run_generator_cpu *gc = &env->gen_cpu;
    if (gc->threads) {
        jw_key(j, "generator_cpu");
        jw_object_begin(j);
        FIELDS_WRITE(RECORD_GEN_CPU_FIELDS, j, struct run_generator_cpu, gc);
        jw_kv_double(j, "core_share", record_generator_cpu_share(gc));
        jw_object_end(j);
    } else {
        kv_null(j, "generator_cpu");
    }
    jw_kv_string(j, "openssl", env->openssl);
    jw_kv_string(j, "nghttp2", env->nghttp2);
    jw_object_end(j);
}

static const char *tls_version_text(int v)
{
    return v >= 0x0301 && v <= 0x0304 ? record_tls_version_name(v - 0x0301) : NULL;
}

/* config: "tls" when a target is https; "unix_socket" and "connect_to" when given; "h2c",
 * "streams", "requests_per_connection". */
static void transport_config(struct jw *j, const struct run_record *r)
{
    const struct record_config *c = &r->config;
    if (r->all.https) {
        jw_key(j, "tls");
        jw_object_begin(j);
        jw_kv_bool(j, "verify", !c->tls_insecure);
        kv_string_or_null(j, "cacert", c->tls_cacert);
        jw_key(j, "versions");
        jw_array_begin(j);
        for (int k = 0; k < 2; k++) {
            const char *v = tls_version_text(k ? c->tls_max_version : c->tls_min_version);
            if (v)
                jw_string(j, v);
            else
                jw_null(j);
        }
        jw_array_end(j);
        kv_string_or_null(j, "ciphers", c->tls_ciphers);
        jw_kv_string(j, "alpn", c->http == RUN_HTTP_1 ? "http/1.1" : c->http == RUN_HTTP_2 ? "h2" : "h2,http/1.1");
        jw_kv_bool(j, "resume", !c->tls_no_resume);
        kv_string_or_null(j, "cert", c->tls_cert);
        kv_string_or_null(j, "key", c->tls_key);
        jw_object_end(j);
    }
    if (c->unix_socket) /* --unix-socket, --connect-to: only when given */
        jw_kv_string(j, "unix_socket", c->unix_socket);
    if (c->nconnect_to) {
        jw_key(j, "connect_to");
        jw_array_begin(j);
        for (size_t i = 0; i < c->nconnect_to; i++)
            jw_string(j, c->connect_to[i]);
        jw_array_end(j);
    }
    jw_kv_bool(j, "h2c", c->h2c);
    jw_kv_bool(j, "http3", c->http3);
    if (c->streams)
        jw_kv_uint(j, "streams", c->streams);
    else
        kv_null(j, "streams");
    if (c->requests_per_connection)
        jw_kv_uint(j, "requests_per_connection", c->requests_per_connection);
    else
        kv_null(j, "requests_per_connection");
    kv_string_or_null(j, "proxy", c->proxy); /* host:port, never the credentials */
    kv_string_or_null(j, "local_addresses", c->local_addresses);
    if (c->connect_rate > 0)
        jw_kv_double(j, "connect_rate", c->connect_rate);
    else
        kv_null(j, "connect_rate");
}

/* config.stages: --stages as given, each with its unit ("rps", or "clients" for closed-loop
 * stages). Nothing without stages. */
static void config_stages(struct jw *j, const struct record_config *c)
{
    if (!c->nstages)
        return;
    jw_key(j, "stages");
    jw_array_begin(j);
    for (size_t i = 0; i < c->nstages; i++) {
        jw_object_begin(j);
        jw_kv_double(j, "from", c->stages[i].from);
        jw_kv_double(j, "to", c->stages[i].to);
        jw_kv_double(j, "duration_s", (double)c->stages[i].duration_ns / 1e9);
        jw_kv_string(j, "unit", c->stages[i].clients ? "clients" : "rps");
        jw_object_end(j);
    }
    jw_array_end(j);
}

/* "setup" (knee run --setup): the request, its status and time, the names captured (never the
 * values); absent without one. */
static void setup(struct jw *j, const struct record_setup *s)
{
    if (!s->url)
        return;
    jw_key(j, "setup");
    jw_object_begin(j);
    jw_kv_string(j, "method", s->method ? s->method : "GET");
    jw_kv_string(j, "url", s->url);
    jw_kv_int(j, "status", s->status);
    jw_kv_double(j, "ms", ns_to_ms(s->duration_ns));
    jw_key(j, "captured");
    jw_array_begin(j);
    for (size_t i = 0; i < s->ncaptured; i++)
        jw_string(j, s->captured[i]);
    jw_array_end(j);
    jw_object_end(j);
}

static void config(struct jw *j, const struct run_record *r)
{
    const struct record_config *c = &r->config;
    jw_key(j, "config");
    jw_object_begin(j);
    jw_kv_string(j, "mode", c->open_loop ? "open" : "closed");
    if (c->open_loop) {
        jw_kv_string(j, "arrivals", c->arrivals == RUN_ARRIVALS_POISSON ? "poisson" : "constant");
        jw_kv_uint(j, "seed", c->seed);
        config_stages(j, c);
        if (c->ramp) {
            jw_key(j, "ramp");
            jw_object_begin(j);
            jw_kv_double(j, "from", c->ramp_from);
            jw_kv_double(j, "to", c->ramp_to);
            jw_object_end(j);
        } else {
            put_pos(j, "rate", &c->rate);
        }
        jw_kv_uint(j, "pool_cap", r->pool_cap);
        jw_kv_string(j, "when_busy", c->when_busy == RUN_BUSY_DROP ? "drop" : "queue");
        put_ms_ns(j, "timer_slack_ms", &c->timer_slack_ns);
        if (c->timer_slack_auto)
            jw_kv_bool(j, "timer_slack_auto", true);
    } else {
        put_s_ns(j, "think_s", &c->think_ns);
        config_stages(j, c); /* closed-loop stages (clients) */
    }
    jw_kv_uint(j, "threads", r->threads);
    jw_kv_string(j, "io", record_io_name(c->io)); /* as asked (--io) */
    if (r->io != RUN_IO_AUTO)
        jw_kv_string(j, "io_engine", record_io_name(r->io)); /* what ran */
    FIELDS_WRITE(RECORD_CONFIG_FIELDS, j, struct run_record, r);
    transport_config(j, r);
    if (c->expect_body)
        jw_kv_string(j, "expect_body", c->expect_body);
    jw_key(j, "reject");
    jw_array_begin(j);
    for (size_t i = 0; i < c->nrejects; i++) {
        jw_object_begin(j);
        jw_kv_int(j, "status", c->rejects[i].status);
        if (c->rejects[i].body)
            jw_kv_string(j, "body", c->rejects[i].body);
        jw_object_end(j);
    }
    jw_array_end(j);
    setup(j, &c->setup);
    jw_object_end(j);
}

/* "generator": record_generator_judge's verdict, each rule apart. */
static void generator(struct jw *j, const struct run_record *r)
{
    jw_key(j, "generator");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_GENERATOR_FIELDS, j, struct run_record, r);
    put_ms_ns0(j, "lag_limit_ms", &r->config.lag_limit_ns);
    put_ms_ns(j, "timer_slack_ms", &r->config.timer_slack_ns);
    jw_kv_double(j, "gap_ms", r->generator.gap_ms);
    jw_object_end(j);
}

/* ---- the timeline, warnings and thresholds ---- */

static void timeline(struct jw *j, const struct run_record *r)
{
    jw_key(j, "timeline");
    jw_array_begin(j);
    for (size_t i = 0; i < r->nticks; i++) {
        jw_object_begin(j);
        FIELDS_WRITE(RECORD_TICK_FIELDS, j, struct run_tick, &r->ticks[i]);
        jw_object_end(j);
    }
    jw_array_end(j);
}

static void warnings_and_thresholds(struct jw *j, const struct run_record *r)
{
    jw_key(j, "warnings");
    jw_array_begin(j);
    for (size_t i = 0; i < r->warnings.n; i++)
        jw_string(j, r->warnings.items[i]);
    jw_array_end(j);
    jw_key(j, "thresholds");
    jw_array_begin(j);
    bool all_pass = true;
    for (size_t i = 0; i < r->nthresholds; i++) {
        const struct record_threshold *t = &r->thresholds[i];
        jw_object_begin(j);
        jw_kv_string(j, "expr", t->expr);
        jw_kv_double(j, "measured", t->measured);
        jw_kv_string(j, "unit", strcmp(t->unit, "%") == 0 ? "fraction" : t->unit);
        jw_kv_bool(j, "pass", t->pass);
        jw_object_end(j);
        all_pass &= t->pass;
    }
    jw_array_end(j);
    jw_kv_bool(j, "thresholds_pass", all_pass);
}

/* ---- the shard record: the histograms themselves, so shards add up exactly ---- */

static void hist(struct jw *j, struct hlog_codec *c, const char *key, const struct hdr *h)
{
    jw_key(j, key);
    jw_object_begin(j);
    jw_kv_int(j, "count", h->total_count);
    if (h->total_count) {
        jw_kv_int(j, "min_ns", h->min_value);
        jw_kv_int(j, "max_ns", h->max_value);
    }
    if (h->overflow_count) {
        jw_kv_int(j, "overflow", h->overflow_count);
        jw_kv_int(j, "overflow_max_ns", h->overflow_max);
    }
    const char *text;
    size_t len;
    if (h->counts && hlog_encode_base64(c, h, &text, &len) == 0)
        jw_kv_string(j, "hdr", text);
    jw_object_end(j);
}

/* A target's streamed events (--stream; absent when none was timed): the counts and the three
 * histograms, so a merge adds the shards' up exactly. */
static void shard_stream(struct jw *j, struct hlog_codec *c, const struct run_stream *s)
{
    if (!s->responses)
        return;
    jw_key(j, "stream");
    jw_object_begin(j);
    jw_kv_uint(j, "responses", s->responses);
    jw_kv_uint(j, "events", s->events);
    jw_kv_uint(j, "not_sse", s->not_sse);
    jw_kv_uint(j, "partial", s->partial);
    hist(j, c, "first_event", &s->first_event);
    hist(j, c, "event_gap", &s->event_gap);
    hist(j, c, "events_per_response", &s->per_response);
    jw_object_end(j);
}

/* One target's histograms and its events exactly (ns since t0: what "events" and "rates" are
 * computed from, with the window and the first and last send, so a merge adds the shards'
 * events up as the engine adds its threads'). */
static void target_hists(struct jw *j, struct hlog_codec *c, const struct run_target_result *t)
{
    jw_object_begin(j);
    jw_kv_string(j, "name", t->name);
    jw_kv_uint(j, "sent_on_time", t->counts.sent_on_time);
    jw_key(j, "events");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_SHARD_EVENTS_FIELDS, j, struct run_events, &t->events);
    jw_object_end(j);
    hist(j, c, "latency", &t->latency_all);
    jw_key(j, "by_outcome");
    jw_object_begin(j);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        if (t->latency[g].total_count)
            hist(j, c, record_group_name((enum run_group)g), &t->latency[g]);
    jw_object_end(j);
    hist(j, c, "service", &t->service);
    hist(j, c, "ttfb", &t->ttfb);
    hist(j, c, "lag", &t->lag);
    hist(j, c, "connect", &t->connect);
    if (t->https)
        hist(j, c, "tls", &t->tls);
    jw_key(j, "server_timing");
    jw_object_begin(j);
    for (size_t i = 0; i < t->nst; i++)
        hist(j, c, t->st[i].name, &t->st[i].dur);
    jw_object_end(j);
    shard_stream(j, c, &t->stream);
    jw_object_end(j);
}

/* A merge's shards; a shard's own source, skew and clock. */
static void shard_parts(struct jw *j, const struct run_shard *s)
{
    if (s->index == RUN_SHARD_MERGED) {
        jw_kv_bool(j, "complete", s->complete);
        jw_key(j, "start_skew_ms");
        jw_object_begin(j);
        jw_kv_double(j, "min", (double)s->skew_min_ns / 1e6);
        jw_kv_double(j, "max", (double)s->skew_max_ns / 1e6);
        jw_object_end(j);
        jw_key(j, "shards");
        jw_array_begin(j);
        for (size_t i = 0; i < s->nparts; i++) {
            const struct run_shard_part *p = &s->parts[i];
            jw_object_begin(j);
            jw_kv_uint(j, "index", p->index);
            jw_kv_string(j, "host", p->host);
            jw_kv_double(j, "start_skew_ms", (double)p->start_skew_ns / 1e6);
            jw_kv_bool(j, "generator_limited", p->generator_limited);
            jw_kv_bool(j, "failed", p->failed);
            if (p->failed)
                jw_kv_string(j, "failure", p->failure);
            jw_object_end(j);
        }
        jw_array_end(j);
        return;
    }
    jw_kv_string(j, "source", s->source);
    jw_kv_double(j, "start_skew_ms", (double)s->start_skew_ns / 1e6);
    jw_key(j, "clock");
    jw_object_begin(j);
    jw_kv_bool(j, "synced", s->clock_synced);
    jw_kv_double(j, "maxerror_ms", s->clock_maxerror_ms);
    jw_kv_double(j, "esterror_ms", s->clock_esterror_ms);
    jw_object_end(j);
}

/* The whole plan's streams (open loop), for the merge's check that the shards planned it all. */
static void shard_streams(struct jw *j, const struct run_shard *s)
{
    jw_key(j, "streams");
    jw_array_begin(j);
    for (size_t i = 0; i < s->nstreams; i++) {
        jw_object_begin(j);
        jw_kv_double(j, "rate_from", s->streams[i].rate_from);
        jw_kv_double(j, "rate_to", s->streams[i].rate_to);
        if (s->streams[i].stage_share > 0)
            jw_kv_double(j, "stage_share", s->streams[i].stage_share);
        if (s->streams[i].limit == UINT64_MAX)
            kv_null(j, "limit");
        else
            jw_kv_uint(j, "limit", s->streams[i].limit);
        jw_object_end(j);
    }
    jw_array_end(j);
}

/* "shard" (--shard / --start-at, or a merge): index, count, source, plan id, start instant, t0,
 * skew, clock, and every histogram of the record per target and in total. */
static void shard(struct jw *j, const struct run_record *r)
{
    const struct run_shard *s = &r->shard;
    if (!s->count)
        return;
    char hex[24], when[48];
    jw_key(j, "shard");
    jw_object_begin(j);
    jw_kv_bool(j, "merged", s->index == RUN_SHARD_MERGED);
    if (s->index == RUN_SHARD_MERGED)
        kv_null(j, "index");
    else
        jw_kv_uint(j, "index", s->index);
    jw_kv_uint(j, "count", s->count);
    jw_kv_string(j, "plan_id", record_shard_plan_hex(s->plan_id, hex, sizeof hex));
    if (s->start_at_unix_ns) {
        jw_kv_double(j, "start_at_unix_s", (double)s->start_at_unix_ns / 1e9);
        jw_kv_uint(j, "start_at_unix_ns", s->start_at_unix_ns);
        jw_kv_string(j, "start_at_utc", record_shard_utc(s->start_at_unix_ns, when, sizeof when));
    } else {
        kv_null(j, "start_at_unix_s");
    }
    jw_kv_uint(j, "t0_unix_ns", s->t0_unix_ns);
    jw_kv_double(j, "lag_limit_ms", (double)s->lag_limit_ns / 1e6);
    shard_parts(j, s);
    shard_streams(j, s);
    struct hlog_codec *c = hlog_codec_new();
    jw_key(j, "histograms");
    jw_object_begin(j);
    jw_key(j, "all");
    target_hists(j, c, &r->all);
    jw_key(j, "targets");
    jw_array_begin(j);
    for (size_t i = 0; i < r->ntargets; i++)
        target_hists(j, c, &r->targets[i]);
    jw_array_end(j);
    jw_object_end(j);
    hlog_codec_free(c);
    jw_object_end(j);
}

/* "aborted": null, or the --abort-if rule that stopped the run and when (seconds since t0). */
static void aborted(struct jw *j, const struct run_record *r)
{
    jw_key(j, "aborted");
    if (!r->aborted.set) {
        jw_null(j);
        return;
    }
    jw_object_begin(j);
    jw_kv_string(j, "rule", r->aborted.rule);
    jw_kv_double(j, "at_s", r->aborted.at_s);
    jw_object_end(j);
}

/* "remote_write": null, or what the --remote-write pushes did (never a credential). */
static void remote_write(struct jw *j, const struct run_record *r)
{
    const struct record_remote_write *w = &r->remote_write;
    jw_key(j, "remote_write");
    if (!w->set) {
        jw_null(j);
        return;
    }
    jw_object_begin(j);
    jw_kv_string(j, "url", w->url);
    jw_kv_bool(j, "required", w->required);
    jw_kv_uint(j, "pushes", w->pushes);
    jw_kv_uint(j, "ok", w->ok);
    jw_kv_uint(j, "failed", w->failed);
    jw_kv_uint(j, "retried", w->retried);
    jw_kv_uint(j, "dropped", w->dropped);
    jw_kv_uint(j, "bytes", w->bytes);
    jw_key(j, "last_error");
    if (w->last_error[0])
        jw_string(j, w->last_error);
    else
        jw_null(j);
    jw_object_end(j);
}

void record_write_json(FILE *out, const struct run_record *r, bool pretty)
{
    struct jw j;
    jw_init(&j, out, pretty);
    jw_object_begin(&j);
    jw_kv_string(&j, "schema", RUN_JSON_SCHEMA);
    environment(&j, r);
    config(&j, r);
    FIELDS_WRITE(RECORD_TOP_FIELDS, &j, struct run_record, r);
    aborted(&j, r);
    remote_write(&j, r);
    generator(&j, r);
    FIELDS_WRITE(RECORD_VERDICT_FIELDS, &j, struct run_record, r);
    jw_key(&j, "latency_interval");
    jw_string(&j, r->config.open_loop ? "T5-T0 (planned send to full response)" : "T5-T1 (send to full response)");
    rates(&j, &r->all);
    outcomes(&j, &r->all.counts);
    jw_key(&j, "all");
    target(&j, &r->all, true);
    jw_key(&j, "targets");
    jw_array_begin(&j);
    for (size_t i = 0; i < r->ntargets; i++)
        target(&j, &r->targets[i], false);
    jw_array_end(&j);
    record_stages_write_json(&j, r, r->shard.count > 0); /* a shard's carry what knee merge adds up */
    timeline(&j, r);
    record_entries_write_json(&j, &r->entries);
    warnings_and_thresholds(&j, r);
    shard(&j, r); /* --shard / --start-at, or a merge: the shard record and histograms */
    jw_object_end(&j);
    jw_end(&j);
}
