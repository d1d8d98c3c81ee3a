/* `knee run --json`: the summary as one JSON object (docs/FORMATS.md, "knee run JSON").
 * Milliseconds everywhere, as the text; a statistic without samples is null. */
#include "runreport/runreport.h"

#include "core/json.h"
#include "runreport/shard.h"

#include <math.h>
#include <string.h>

static void summary(struct json *j, const char *key, const struct hdr *h)
{
    struct run_summary s;
    run_summarize(h, &s);
    json_key(j, key);
    json_object_begin(j);
    json_kv_uint(j, "count", s.count);
    json_kv_double(j, "mean", s.mean);
    json_kv_double(j, "stdev", s.stdev);
    json_kv_double(j, "min", s.min);
    json_kv_double(j, "max", s.max);
    json_kv_double(j, "p50", s.p50);
    json_kv_double(j, "p90", s.p90);
    json_kv_double(j, "p95", s.p95);
    json_kv_double(j, "p99", s.p99);
    json_kv_double(j, "p99.9", s.p999);
    json_object_end(j);
}

/* Beside every "outcomes": why the transport ones failed (the causes add up to outcomes.
 * transport) and how many requests --retry-stale sent a second time (not in "sent"). */
static void transport_causes(struct json *j, const struct run_counts *c)
{
    json_key(j, "transport_causes");
    json_object_begin(j);
    for (int k = 0; k < RUN_TC_COUNT; k++)
        json_kv_uint(j, run_transport_cause_name((enum run_transport_cause)k), c->transport_cause[k]);
    json_object_end(j);
    json_kv_uint(j, "retries", c->retries);
}

static void outcomes(struct json *j, const struct run_counts *c)
{
    json_key(j, "outcomes");
    json_object_begin(j);
    for (int o = 0; o < OUTCOME_COUNT; o++)
        json_kv_uint(j, reqlog_outcome_name((enum reqlog_outcome)o), c->outcome[o]);
    json_object_end(j);
    transport_causes(j, c);
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
    const struct run_rates *r = &t->rates;
    const struct run_events *ev = &t->events;
    json_key(j, "rates");
    json_object_begin(j);
    json_kv_double(j, "planned", r->planned);
    json_kv_double(j, "sent", r->sent);
    json_kv_double(j, "completed", r->completed);
    json_kv_double(j, "goodput", r->goodput);
    json_kv_double(j, "achieved_send", r->achieved_send);
    json_kv_double(j, "sending_s", r->sending_s);
    json_object_end(j);
    json_key(j, "events");
    json_object_begin(j);
    json_kv_uint(j, "planned", ev->planned);
    json_kv_uint(j, "sent", ev->sent);
    json_kv_uint(j, "completed", ev->completed);
    json_kv_uint(j, "ok", ev->ok);
    json_kv_uint(j, "sent_before_window", ev->sent_before);
    json_kv_uint(j, "sent_late", ev->sent_late);
    json_kv_uint(j, "completed_late", ev->completed_late);
    json_object_end(j);
}

/* ------------------------------------------------------------------ TLS and HTTP/2 */

static void kv_null(struct json *j, const char *key)
{
    json_key(j, key);
    json_null(j);
}

static const char *tls_version_text(int v)
{
    switch (v) {
    case 0x0301:
        return "TLSv1.0";
    case 0x0302:
        return "TLSv1.1";
    case 0x0303:
        return "TLSv1.2";
    case 0x0304:
        return "TLSv1.3";
    default:
        return NULL;
    }
}

/* config: "tls" when a target is https; "h2c", "streams", "requests_per_connection". */
static void transport_config(struct json *j, const struct run_config *cfg, const struct run_result *res)
{
    if (res->all.https) {
        json_key(j, "tls");
        json_object_begin(j);
        json_kv_bool(j, "verify", !cfg->tls_insecure);
        if (cfg->tls_cacert)
            json_kv_string(j, "cacert", cfg->tls_cacert);
        else
            kv_null(j, "cacert");
        json_key(j, "versions");
        json_array_begin(j);
        for (int k = 0; k < 2; k++) {
            const char *v = tls_version_text(k ? cfg->tls_max_version : cfg->tls_min_version);
            if (v)
                json_string(j, v);
            else
                json_null(j);
        }
        json_array_end(j);
        if (cfg->tls_ciphers)
            json_kv_string(j, "ciphers", cfg->tls_ciphers);
        else
            kv_null(j, "ciphers");
        json_kv_string(j, "alpn",
                       cfg->http == RUN_HTTP_1   ? "http/1.1"
                       : cfg->http == RUN_HTTP_2 ? "h2"
                                                 : "h2,http/1.1");
        json_kv_bool(j, "resume", !cfg->tls_no_resume);
        json_object_end(j);
    }
    json_kv_bool(j, "h2c", cfg->h2c);
    if (cfg->streams)
        json_kv_uint(j, "streams", cfg->streams);
    else
        kv_null(j, "streams");
    if (cfg->requests_per_connection)
        json_kv_uint(j, "requests_per_connection", cfg->requests_per_connection);
    else
        kv_null(j, "requests_per_connection");
}

/* A target's "tls" (handshake time; null for plain targets), "protocols", "tls_versions",
 * "tls_handshakes" and "h2" (docs/FORMATS.md, "knee run over TLS and HTTP/2"). */
static void transport_target(struct json *j, const struct run_target_result *t)
{
    const struct run_proto_counts *pc = &t->pc;
    if (t->https)
        summary(j, "tls", &t->tls);
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
    json_kv_uint(j, "full", pc->tls_full);
    json_kv_uint(j, "resumed", pc->tls_resumed);
    json_kv_uint(j, "failed", pc->tls_failed);
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
    json_kv_uint(j, "rst_received", pc->h2_rst);
    json_kv_uint(j, "refused", pc->h2_refused);
    json_kv_uint(j, "goaway", pc->h2_goaway);
    json_kv_uint(j, "goaway_refused", pc->h2_goaway_streams);
    json_kv_uint(j, "retried", pc->h2_retried);
    json_kv_uint(j, "flow_control_stalls", pc->h2_stalls);
    json_object_end(j);
}

/* own_rate: the target's own @R rate (NAN: it shares the run's rate; ignored for "all"). */
static void target(struct json *j, const struct run_target_result *t, bool is_all, double own_rate)
{
    json_object_begin(j);
    json_kv_string(j, "name", t->name);
    if (!is_all) {
        json_kv_string(j, "url", t->url);
        json_kv_string(j, "address", t->address);
        json_kv_double(j, "resolve_ms", (double)t->resolve_ns / 1e6);
        json_kv_double(j, "planned_rate", t->planned_rate);
        json_kv_double(j, "own_rate", own_rate);
        json_kv_uint(j, "clients", t->connections);
    }
    rates(j, t);
    outcomes(j, &t->counts);
    accounting(j, "accounting", &t->counts);
    accounting(j, "warmup", &t->warmup_counts);
    summary(j, "latency", &t->latency_all);
    json_key(j, "latency_by_outcome");
    json_object_begin(j);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        if (t->latency[g].total_count)
            summary(j, run_group_name((enum run_group)g), &t->latency[g]);
    json_object_end(j);
    summary(j, "service", &t->service);
    summary(j, "ttfb", &t->ttfb);
    summary(j, "lag", &t->lag);
    summary(j, "connect", &t->connect);
    transport_target(j, t);
    json_key(j, "server_timing");
    json_object_begin(j);
    for (size_t i = 0; i < t->nst; i++)
        summary(j, t->st[i].name, &t->st[i].dur);
    json_object_end(j);
    json_key(j, "connections");
    json_object_begin(j);
    json_kv_uint(j, "opened", t->counts.conns_opened);
    json_kv_uint(j, "failed", t->counts.conns_failed);
    json_kv_uint(j, "closed_by_server", t->counts.conns_closed_by_peer);
    json_kv_uint(j, "unsolicited_bytes", t->counts.conns_unsolicited);
    json_object_end(j);
    json_kv_uint(j, "bytes_in", t->counts.bytes_in + t->warmup_counts.bytes_in);
    json_object_end(j);
}

/* "generator": run_generator_judge's verdict, each rule apart. */
static void generator(struct json *j, const struct run_config *cfg, const struct run_generator_verdict *v)
{
    json_key(j, "generator");
    json_object_begin(j);
    json_kv_bool(j, "limited", v->limited);
    json_kv_string(j, "reasons", v->why);
    json_kv_bool(j, "short_send", v->short_send);
    json_kv_bool(j, "over_lag_limit", v->over_limit);
    json_kv_bool(j, "lag_shapes_tail", v->shapes_tail);
    json_kv_bool(j, "lag_shapes_median", v->shapes_median);
    json_kv_bool(j, "sends_in_bursts", v->bursts);
    json_kv_double(j, "lag_limit_ms", cfg->lag_limit_ns ? (double)cfg->lag_limit_ns / 1e6 : NAN);
    json_kv_double(j, "timer_slack_ms", (double)cfg->timer_slack_ns / 1e6);
    json_kv_double(j, "gap_ms", v->gap_ms);
    json_object_end(j);
}

static void triple(struct json *j, const char *key, const double v[3])
{
    json_key(j, key);
    json_array_begin(j);
    for (int i = 0; i < 3; i++)
        json_double(j, v[i]);
    json_array_end(j);
}

void run_write_json(FILE *out, const struct run_config *cfg, const struct run_result *res,
                    const struct run_threshold *thr, size_t nthr, bool verbose, bool pretty)
{
    struct json j;
    json_init(&j, out, pretty);
    json_object_begin(&j);
    json_kv_string(&j, "schema", RUN_JSON_SCHEMA);

    json_key(&j, "environment");
    json_object_begin(&j);
    json_kv_string(&j, "version", res->env.version);
    json_key(&j, "args");
    json_array_begin(&j);
    for (int i = 0; cfg->argv && i < cfg->argc; i++)
        json_string(&j, cfg->argv[i]);
    json_array_end(&j);
    json_kv_int(&j, "cpus", res->env.cpus);
    json_kv_string(&j, "kernel", res->env.kernel);
    json_kv_string(&j, "hostname", res->env.hostname);
    json_kv_string(&j, "start_utc", res->env.start_wall);
    triple(&j, "loadavg_before", res->env.loadavg_before);
    triple(&j, "loadavg_after", res->env.loadavg_after);
    json_kv_double(&j, "cpu_user_s", res->env.cpu_user_s);
    json_kv_double(&j, "cpu_sys_s", res->env.cpu_sys_s);
    uint64_t sent = res->all.counts.sent + res->all.warmup_counts.sent;
    json_kv_double(&j, "cpu_us_per_request",
                   sent ? (res->env.cpu_user_s + res->env.cpu_sys_s) * 1e6 / (double)sent : NAN);
    json_kv_int(&j, "peak_rss_kb", res->env.peak_rss_kb);
    const struct run_generator_cpu *gc = &res->env.gen_cpu;
    if (gc->threads) {
        json_key(&j, "generator_cpu");
        json_object_begin(&j);
        json_kv_double(&j, "user_s", gc->user_s);
        json_kv_double(&j, "sys_s", gc->sys_s);
        json_kv_double(&j, "wall_s", gc->wall_s);
        json_kv_uint(&j, "threads", gc->threads);
        json_kv_double(&j, "core_share", run_generator_cpu_share(gc));
        json_object_end(&j);
    } else {
        kv_null(&j, "generator_cpu");
    }
    json_kv_string(&j, "openssl", res->env.openssl);
    json_kv_string(&j, "nghttp2", res->env.nghttp2);
    json_object_end(&j);

    json_key(&j, "config");
    json_object_begin(&j);
    json_kv_string(&j, "mode", cfg->open_loop ? "open" : "closed");
    if (cfg->open_loop) {
        json_kv_string(&j, "arrivals", cfg->arrivals == RUN_ARRIVALS_POISSON ? "poisson" : "constant");
        json_kv_uint(&j, "seed", cfg->seed);
        if (cfg->ramp) {
            json_key(&j, "ramp");
            json_object_begin(&j);
            json_kv_double(&j, "from", cfg->ramp_from);
            json_kv_double(&j, "to", cfg->ramp_to);
            json_object_end(&j);
        } else {
            json_kv_double(&j, "rate", cfg->rate > 0 ? cfg->rate : NAN);
        }
        json_kv_uint(&j, "pool_cap", res->pool_cap);
        json_kv_string(&j, "when_busy", cfg->when_busy == RUN_BUSY_DROP ? "drop" : "queue");
        json_kv_double(&j, "timer_slack_ms", (double)cfg->timer_slack_ns / 1e6);
    } else {
        json_kv_double(&j, "think_s", (double)cfg->think_ns / 1e9);
    }
    json_kv_uint(&j, "threads", res->threads);
    json_kv_string(&j, "io", run_io_name(cfg->io)); /* as asked (--io) */
    if (res->io != RUN_IO_AUTO)
        json_kv_string(&j, "io_engine", run_io_name(res->io)); /* what ran */
    json_kv_double(&j, "duration_s", cfg->duration_ns ? (double)cfg->duration_ns / 1e9 : NAN);
    json_kv_uint(&j, "requests", cfg->requests);
    json_kv_double(&j, "timeout_s", (double)cfg->timeout_ns / 1e9);
    json_kv_double(&j, "drain_s", (double)cfg->drain_ns / 1e9);
    json_kv_double(&j, "warmup_s", (double)cfg->warmup_ns / 1e9);
    json_kv_bool(&j, "keepalive", cfg->keepalive);
    json_kv_bool(&j, "retry_stale", cfg->retry_stale);
    transport_config(&j, cfg, res);
    if (cfg->expect_body)
        json_kv_string(&j, "expect_body", cfg->expect_body);
    json_key(&j, "reject");
    json_array_begin(&j);
    for (size_t i = 0; i < cfg->nrejects; i++) {
        json_object_begin(&j);
        json_kv_int(&j, "status", cfg->rejects[i].status);
        if (cfg->rejects[i].body)
            json_kv_string(&j, "body", cfg->rejects[i].body);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);

    json_kv_double(&j, "window_s", res->window_s);
    json_kv_double(&j, "window_start_s", res->window_start_s);
    json_kv_double(&j, "window_end_s", res->window_end_s);
    json_kv_double(&j, "elapsed_s", res->elapsed_s);
    json_kv_bool(&j, "interrupted", res->interrupted);
    json_kv_bool(&j, "accounting_ok", res->accounting_ok);
    json_kv_bool(&j, "generator_limited", res->generator_limited);
    json_kv_bool(&j, "attention", res->attention);
    json_kv_bool(&j, "verbose", verbose);
    generator(&j, cfg, &res->generator);
    json_kv_double(&j, "sent_on_schedule", res->sent_on_schedule);
    json_kv_bool(&j, "no_ok", res->no_ok);
    json_kv_double(&j, "failed_share", res->failed_share);
    json_key(&j, "latency_interval");
    json_string(&j, cfg->open_loop ? "T5-T0 (planned send to full response)" : "T5-T1 (send to full response)");
    rates(&j, &res->all);
    outcomes(&j, &res->all.counts);
    json_key(&j, "all");
    target(&j, &res->all, true, NAN);
    json_key(&j, "targets");
    json_array_begin(&j);
    for (size_t i = 0; i < res->ntargets; i++)
        target(&j, &res->targets[i], false,
               cfg->targets && i < cfg->ntargets && cfg->targets[i].rate > 0 ? cfg->targets[i].rate : NAN);
    json_array_end(&j);

    json_key(&j, "timeline");
    json_array_begin(&j);
    for (size_t i = 0; i < res->nticks; i++) {
        const struct run_tick *t = &res->ticks[i];
        json_object_begin(&j);
        json_kv_double(&j, "start_s", t->start_s);
        json_kv_double(&j, "length_s", t->length_s);
        json_kv_uint(&j, "planned", t->planned);
        json_kv_uint(&j, "sent", t->sent);
        json_kv_uint(&j, "completed", t->completed);
        json_kv_uint(&j, "ok", t->ok);
        json_kv_uint(&j, "errors", t->errors);
        json_kv_uint(&j, "dropped", t->dropped);
        json_kv_double(&j, "p50_ms", t->p50_ms);
        json_kv_double(&j, "p99_ms", t->p99_ms);
        json_kv_double(&j, "max_ms", t->max_ms);
        json_object_end(&j);
    }
    json_array_end(&j);

    json_key(&j, "warnings");
    json_array_begin(&j);
    for (size_t i = 0; i < res->nwarnings; i++)
        json_string(&j, res->warnings[i]);
    json_array_end(&j);

    json_key(&j, "thresholds");
    json_array_begin(&j);
    bool all_pass = true;
    for (size_t i = 0; i < nthr; i++) {
        json_object_begin(&j);
        json_kv_string(&j, "expr", thr[i].expr);
        json_kv_double(&j, "measured", thr[i].measured);
        json_kv_string(&j, "unit",
                       strcmp(run_threshold_unit(&thr[i]), "%") == 0 ? "fraction" : run_threshold_unit(&thr[i]));
        json_kv_bool(&j, "pass", thr[i].pass);
        json_object_end(&j);
        all_pass &= thr[i].pass;
    }
    json_array_end(&j);
    json_kv_bool(&j, "thresholds_pass", all_pass);
    run_write_json_shard(&j, res); /* --shard / --start-at, or a merge: the shard record and histograms */
    json_object_end(&j);
    json_end(&j);
}

bool run_json_schema_readable(const char *schema)
{
    return schema && (strcmp(schema, RUN_JSON_SCHEMA) == 0 || strcmp(schema, "knee-run/1") == 0);
}
