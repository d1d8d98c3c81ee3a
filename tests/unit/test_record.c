/* Unit tests for src/record: the one derivation (record_finish) on hand-built counts,
 * histograms and events — window, rates, shares, identities, the generator verdict and every
 * warning in knee run's words and order; the one writer and reader of the run JSON (a record
 * with every field set, written, read back with its histograms and written again: the same
 * bytes, so no field is written and not read); record_add (two records added are the record of
 * the union) and the strict reader knee merge reads shards with; the thresholds parsed against
 * names and kept in the record; and core/warn, the one warning appender. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/json.h"
#include "core/warn.h"
#include "record/record.h"
#include "record/threshold.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ building records */

/* A record of ntargets empty targets named t0, t1, ... (histograms initialised). */
static void record_new(struct run_record *r, size_t ntargets)
{
    memset(r, 0, sizeof *r);
    r->ntargets = ntargets;
    r->targets = calloc(ntargets, sizeof *r->targets);
    assert_non_null(r->targets);
    for (size_t i = 0; i < ntargets; i++) {
        record_target_init(&r->targets[i]);
        snprintf(r->targets[i].name, sizeof r->targets[i].name, "t%zu", i);
        snprintf(r->targets[i].url, sizeof r->targets[i].url, "http://127.0.0.1:80%02zu/", i);
        record_events_init(&r->targets[i].events, 0, 10 * NS_PER_S); /* as the engine counts them */
    }
    record_target_init(&r->all);
    r->threads = 2;
    r->pool_cap = 100;
    r->io = RUN_IO_EPOLL;
    r->config.open_loop = true;
    r->config.rate = 100;
    r->config.duration_ns = 10 * NS_PER_S;
}

/* n requests of target t planned at planned_ns (ns since t0), sent lag_ns later and done
 * lat_ns after the plan, ending in outcome o (dropped: never sent; cancelled: never done). */
static void add_requests(struct run_target_result *t, uint64_t n, uint64_t planned_ns, uint64_t lag_ns, uint64_t lat_ns,
                         enum reqlog_outcome o, bool warmup)
{
    struct run_counts *c = warmup ? &t->warmup_counts : &t->counts;
    c->planned += n;
    c->outcome[o] += n;
    if (o == OUTCOME_DROPPED)
        c->dropped += n;
    else
        c->sent += n;
    if (o != OUTCOME_DROPPED && lag_ns < NS_PER_MS)
        c->sent_on_time += n;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t sent = o == OUTCOME_DROPPED ? 0 : planned_ns + lag_ns;
        uint64_t done = o == OUTCOME_DROPPED || o == OUTCOME_CANCELLED ? 0 : planned_ns + lat_ns;
        record_events_count(&t->events, planned_ns, sent, done, o);
    }
    if (warmup || o == OUTCOME_DROPPED || o == OUTCOME_CANCELLED)
        return;
    /* the statuses as the engine counts them: ok and invalid 200, rejected 429, http_error 404
     * and one 500 in four, none for transport and timeout */
    static const int status_of[] = {
        [OUTCOME_OK] = 200, [OUTCOME_REJECTED] = 429, [OUTCOME_HTTP_ERROR] = 404, [OUTCOME_INVALID] = 200};
    for (uint64_t k = 0; k < n && o <= OUTCOME_INVALID; k++)
        record_status_count(&t->status, o == OUTCOME_HTTP_ERROR && k % 4 == 3 ? 500 : status_of[o]);
    hdr_record(&t->latency[o], (int64_t)lat_ns, (int64_t)n);
    hdr_record(&t->latency_all, (int64_t)lat_ns, (int64_t)n);
    hdr_record(&t->service, (int64_t)(lat_ns - lag_ns), (int64_t)n);
    hdr_record(&t->ttfb, (int64_t)(lat_ns - lag_ns) / 2, (int64_t)n);
    hdr_record(&t->lag, (int64_t)lag_ns, (int64_t)n);
}

static const struct record_finish_in done_at_10s = {.plan_end_ns = 10 * NS_PER_S,
                                                    .finish_ns = 10 * NS_PER_S + 5 * NS_PER_MS,
                                                    .stop_ns = 10 * NS_PER_S,
                                                    .late_p99_ms = NAN};

static bool has_warning(const struct run_record *r, const char *text)
{
    for (size_t i = 0; i < r->warnings.n; i++)
        if (strcmp(r->warnings.items[i], text) == 0)
            return true;
    return false;
}

static void assert_warnings(const struct run_record *r, const char *const *want, size_t n)
{
    if (r->warnings.n != n) {
        for (size_t i = 0; i < r->warnings.n; i++)
            print_message("warning %zu: %s\n", i, r->warnings.items[i]);
        fail_msg("%zu warnings, want %zu", r->warnings.n, n);
    }
    for (size_t i = 0; i < n; i++)
        assert_string_equal(r->warnings.items[i], want[i]);
}

/* ------------------------------------------------------------------ record_finish */

static void test_finish_ok_run(void **state)
{
    (void)state;
    struct run_record r;
    record_new(&r, 2);
    for (uint64_t s = 0; s < 10; s++) {
        add_requests(&r.targets[0], 60, s * NS_PER_S, 100 * NS_PER_US, 2 * NS_PER_MS, OUTCOME_OK, false);
        add_requests(&r.targets[1], 40, s * NS_PER_S + 1, 100 * NS_PER_US, 3 * NS_PER_MS, OUTCOME_OK, false);
    }
    r.targets[0].counts.conns_opened = 3;
    record_finish(&r, &done_at_10s);
    /* all is the sum of the targets; the window is the plan's */
    assert_string_equal(r.all.name, "all");
    assert_int_equal(r.all.counts.planned, 1000);
    assert_int_equal(r.all.latency_all.total_count, 1000);
    assert_int_equal(r.all.counts.conns_opened, 3);
    assert_true(r.window_start_s == 0 && r.window_end_s == 10 && r.window_s == 10);
    assert_true(fabs(r.elapsed_s - 10.005) < 1e-12);
    assert_int_equal(r.all.events.window_end_ns, 10 * NS_PER_S);
    assert_int_equal(r.all.events.planned, 1000);
    assert_true(r.all.rates.planned == 100 && r.all.rates.goodput == 100);
    assert_true(r.targets[1].rates.sent == 40);
    /* statistics from the histograms */
    assert_int_equal(r.all.sum.latency_all.count, 1000);
    assert_true(r.all.sum.latency_all.p50 > 1.99 && r.all.sum.latency_all.p50 < 2.01);
    assert_int_equal(r.targets[1].sum.latency[RUN_GROUP_OK].count, 400);
    assert_int_equal(r.targets[1].sum.tls.count, 0);
    /* shares and identities */
    assert_true(r.sent_on_schedule == 1);
    assert_true(r.failed_share == 0);
    assert_false(r.no_ok);
    assert_true(r.accounting_ok);
    assert_false(r.generator_limited);
    assert_false(r.warnings.attention);
    const char *want[] = {
        "only 1,000 latency samples: p99.9 rests on fewer than 10 samples above it; read it as rough"};
    assert_warnings(&r, want, 1);
    record_release(&r);
}

/* Everything goes wrong at once: the warnings come in knee run's order and words, after the
 * ones the producer added before. Not one request succeeded (after the warm-up: ok_after 0),
 * so the target, not the generator, is the story: no GENERATOR-LIMITED however late the sends
 * (the judge still says why it would have); with one ok request the generator's warning is
 * there, in its place. */
static void finish_everything(struct run_record *r, uint64_t ok_after)
{
    record_new(r, 1);
    warn_add(&r->warnings, true, "the connection pool is capped at 100 (file descriptor limit 200; asked for 1000)");
    r->config.warmup_ns = 1 * NS_PER_S;
    r->config.out_log = true;
    r->config.when_busy = RUN_BUSY_DROP;
    r->interrupted = true;
    r->unreached = 3;
    r->log_slowed = true;
    struct run_target_result *t = &r->targets[0];
    add_requests(t, 1, 0, 10 * NS_PER_US, NS_PER_MS, OUTCOME_OK, true);
    add_requests(t, ok_after, 2 * NS_PER_S, 200 * NS_PER_MS, 400 * NS_PER_MS, OUTCOME_OK, false);
    add_requests(t, 5, 2 * NS_PER_S, 200 * NS_PER_MS, 400 * NS_PER_MS, OUTCOME_TRANSPORT, false);
    t->counts.transport_cause[RUN_TC_REFUSED] = 5;
    add_requests(t, 4, 3 * NS_PER_S, 0, 0, OUTCOME_DROPPED, false);
    add_requests(t, 2, 3 * NS_PER_S, 200 * NS_PER_MS, 0, OUTCOME_CANCELLED, false);
    t->counts.queued = 2;
    t->counts.conns_failed = 5;
    t->counts.conns_unsolicited = 1;
    struct record_finish_in in = done_at_10s;
    in.stop_ns = 4 * NS_PER_S;
    in.late_p99_ms = 0.25;
    record_finish(r, &in);
}

static void test_finish_generator_when_some_succeeded(void **state)
{
    (void)state;
    struct run_record r;
    finish_everything(&r, 1);
    assert_true(!r.no_ok && r.generator_limited);
    bool found = false;
    for (size_t i = 0; i < r.warnings.n; i++)
        found |= strcmp(r.warnings.items[i],
                        "GENERATOR-LIMITED: the generator, not the service, shaped this run: sent 0.0% of planned "
                        "requests on schedule (floor 99%); lag p99 200.016 ms is 50% of the latency p99 400.032 ms; "
                        "lag p50 200.016 ms is 50% of the latency p50 400.032 ms; 2 requests waited for a "
                        "connection (pool cap 100, at most 64 connects at a time per thread); 4 dropped; timer "
                        "lateness p99 0.250 ms") == 0;
    if (!found)
        for (size_t i = 0; i < r.warnings.n; i++)
            print_message("warning %zu: %s\n", i, r.warnings.items[i]);
    assert_true(found);
    record_release(&r);
}

static void test_finish_warnings_in_order(void **state)
{
    (void)state;
    struct run_record r;
    finish_everything(&r, 0);
    assert_true(r.window_start_s == 1 && r.window_end_s == 4); /* interrupted: where planning stopped */
    assert_true(r.no_ok && r.accounting_ok && !r.generator_limited && r.warnings.attention);
    assert_true(r.generator.short_send); /* judged, but the target is the story */
    const char *want[] = {
        "the connection pool is capped at 100 (file descriptor limit 200; asked for 1000)",
        "FAILED: not one request succeeded (transport 5): there is no latency of a working service to report",
        "interrupted: planning stopped early at 4.00 s; the numbers cover what ran",
        "3 planned requests were never sent (dropped): the generator had not reached them when the drain ended "
        "(--duration + --drain bound the run)",
        "1 planned request was never sent (dropped): every connection was busy (--when-busy drop)",
        "2 requests were still in flight when the drain ended and were cancelled",
        "5 connection attempts failed (refused, unreachable or out of descriptors)",
        "1 time the server sent bytes nobody asked for (e.g. more than its Content-Length)",
        "only 5 latency samples: p99 rests on fewer than 10 samples above it, p99.9 on none",
        "warm-up: 1 request planned in the first 1 s is left out of these statistics (it is in --out)",
        "the request log writer could not keep up and held the load threads back: numbers may be pessimistic (write "
        "--out to a faster disk)",
    };
    assert_warnings(&r, want, sizeof want / sizeof *want);
    record_release(&r);
}

static void test_finish_errors_and_broken_counts(void **state)
{
    (void)state;
    struct run_record r;
    record_new(&r, 1);
    r.config.open_loop = false; /* a closed loop: no generator verdict, no lag */
    add_requests(&r.targets[0], 80, NS_PER_S, 0, NS_PER_MS, OUTCOME_OK, false);
    add_requests(&r.targets[0], 20, NS_PER_S, 0, NS_PER_MS, OUTCOME_HTTP_ERROR, false);
    struct record_finish_in in = {
        .plan_end_ns = UINT64_MAX, .finish_ns = 3 * NS_PER_S, .stop_ns = 0, .late_p99_ms = NAN};
    record_finish(&r, &in);
    assert_true(r.window_end_s == 3); /* --requests in a closed loop: until the last thread finished */
    assert_true(r.failed_share == 0.2);
    assert_true(has_warning(&r, "ERRORS: 20.0% of the requests sent failed (http_error 20): the latency of all "
                                "requests mixes failures in; thresholds on latency use ok requests"));
    assert_false(r.generator_limited);
    record_release(&r);

    record_new(&r, 1);
    add_requests(&r.targets[0], 10, NS_PER_S, 0, NS_PER_MS, OUTCOME_OK, false);
    r.targets[0].counts.sent++; /* planned = sent + dropped no longer holds */
    record_finish(&r, &done_at_10s);
    assert_false(r.accounting_ok);
    assert_string_equal(r.warnings.items[0], "BUG: the accounting identities do not hold (planned = sent + dropped; "
                                             "sent = outcomes); please report this run");
    record_release(&r);
}

/* ------------------------------------------------------------------ the JSON, both ways */

static void hist_fill(struct hdr *h, int64_t base_ns, int64_t n)
{
    if (!h->counts)
        assert_int_equal(hdr_init(h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    for (int64_t k = 1; k <= n; k++)
        hdr_record(h, base_ns * k, 1);
}

static void target_fill(struct run_target_result *t, int64_t base_ns, bool https)
{
    snprintf(t->address, sizeof t->address, "127.0.0.1:8443");
    t->resolve_ns = 12345;
    t->planned_rate = 50.5;
    t->own_rate = 25;
    t->connections = 0;
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        add_requests(t, (uint64_t)(3 + g), (uint64_t)g * NS_PER_S, 20 * NS_PER_US, (uint64_t)(g + 1) * 7 * NS_PER_MS,
                     (enum reqlog_outcome)g, false);
    add_requests(t, 2, 0, 0, 0, OUTCOME_DROPPED, false);
    add_requests(t, 1, 0, 5 * NS_PER_MS, 0, OUTCOME_CANCELLED, false);
    add_requests(t, 4, 0, 10 * NS_PER_US, NS_PER_MS, OUTCOME_OK, true);
    t->counts.transport_cause[RUN_TC_RESET] = 7;
    t->counts.queued = 3;
    t->counts.queue_overflow = 1;
    t->counts.retries = 2;
    t->warmup_counts.transport_cause[RUN_TC_RESET] = 0;
    t->counts.bytes_in = 1000;
    t->warmup_counts.bytes_in = 24;
    t->counts.conns_opened = 9;
    t->counts.conns_failed = 1;
    t->counts.conns_closed_by_peer = 2;
    t->counts.conns_unsolicited = 3;
    hist_fill(&t->connect, base_ns, 9);
    if (https) {
        t->https = true;
        hist_fill(&t->tls, 2 * base_ns, 9);
    }
    t->pc = (struct run_proto_counts){.http1 = 4,
                                      .h2 = 5,
                                      .tls_version = {0, 0, 2, 7},
                                      .tls_full = 3,
                                      .tls_resumed = 6,
                                      .tls_failed = 1,
                                      .h2_streams = 40,
                                      .h2_rst = 2,
                                      .h2_refused = 1,
                                      .h2_goaway = 1,
                                      .h2_goaway_streams = 3,
                                      .h2_retried = 2,
                                      .h2_stalls = 4,
                                      .h2_max_concurrent = 128,
                                      .h2_limit_seen = true};
    snprintf(t->st[0].name, sizeof t->st[0].name, "db");
    snprintf(t->st[1].name, sizeof t->st[1].name, "app");
    t->nst = 2;
    hist_fill(&t->st[0].dur, base_ns / 2, 5);
    hist_fill(&t->st[1].dur, base_ns / 3, 6);
}

static void config_fill(struct record_config *c)
{
    c->open_loop = true;
    c->arrivals = RUN_ARRIVALS_POISSON;
    c->seed = 42;
    c->ramp = true;
    c->ramp_from = 10;
    c->ramp_to = 90.5;
    c->duration_ns = 10 * NS_PER_S;
    c->requests = 0;
    c->timeout_ns = 2500 * NS_PER_MS;
    c->drain_ns = 3 * NS_PER_S;
    c->warmup_ns = NS_PER_S + 1;
    c->lag_limit_ns = 7 * NS_PER_MS;
    c->timer_slack_ns = 250 * NS_PER_US;
    c->timer_slack_auto = true;
    c->when_busy = RUN_BUSY_DROP;
    c->keepalive = true;
    c->retry_stale = true;
    c->io = RUN_IO_AUTO;
    c->tls_insecure = true;
    c->tls_no_resume = true;
    c->tls_cacert = strdup("ca.pem");
    c->tls_ciphers = strdup("TLS_AES_128_GCM_SHA256");
    c->tls_min_version = 0x0303;
    c->tls_max_version = 0x0304;
    c->http = RUN_HTTP_2;
    c->h2c = true;
    c->streams = 16;
    c->requests_per_connection = 100;
    c->expect_body = strdup("\"ok\"\n");
    c->nrejects = 2;
    c->rejects = calloc(2, sizeof *c->rejects);
    c->rejects[0] = (struct run_reject){503, strdup("QUEUE")};
    c->rejects[1] = (struct run_reject){429, NULL};
    c->argc = 3;
    c->argv = calloc(3, sizeof *c->argv);
    c->argv[0] = strdup("knee");
    c->argv[1] = strdup("run");
    c->argv[2] = strdup("--lag-limit=7ms");
}

/* A record with every field the JSON holds set to something other than its default. */
static void record_rich(struct run_record *r, bool merged)
{
    record_new(r, 2);
    config_fill(&r->config);
    r->io = RUN_IO_URING;
    target_fill(&r->targets[0], 1000 * 1000, true);
    target_fill(&r->targets[1], 3000 * 1000, false);
    r->targets[1].own_rate = 0;
    r->targets[1].connections = 4;
    r->interrupted = true;
    r->unreached = 1;
    r->verbose = true;
    record_finish(r, &done_at_10s);
    record_set_aborted(r, "p99[30s]>500ms", 7);
    r->generator.gap_ms = 9.9;
    snprintf(r->env.version, sizeof r->env.version, "9.9.9");
    snprintf(r->env.kernel, sizeof r->env.kernel, "Linux 6.1 x86_64");
    snprintf(r->env.hostname, sizeof r->env.hostname, "host\"1");
    snprintf(r->env.start_wall, sizeof r->env.start_wall, "2026-01-02T03:04:05Z");
    snprintf(r->env.openssl, sizeof r->env.openssl, "OpenSSL 3.0.2");
    snprintf(r->env.nghttp2, sizeof r->env.nghttp2, "1.43.0");
    r->env.cpus = 8;
    r->env.loadavg_before[0] = 0.5;
    r->env.loadavg_before[1] = NAN;
    r->env.loadavg_after[2] = 1.25;
    r->env.cpu_user_s = 0.125;
    r->env.cpu_sys_s = 0.5;
    r->env.peak_rss_kb = 12345;
    r->env.gen_cpu = (struct run_generator_cpu){.user_s = 0.1, .sys_s = 0.2, .wall_s = 1.5, .threads = 3};
    r->nticks = 2;
    r->ticks = calloc(2, sizeof *r->ticks);
    r->ticks[0] = (struct run_tick){0, 1, 10, 9, 8, 7, 1, 1, 1.5, 2.5, 3.5};
    r->ticks[1] = (struct run_tick){1, 0.5, 20, 19, 18, 17, 1, 1, NAN, NAN, NAN};
    struct run_threshold thr[2];
    const char *names[] = {"t0", "t1"};
    char err[256];
    assert_int_equal(record_threshold_parse_names("t1.p99<1s", names, 2, &thr[0], err, sizeof err), 0);
    assert_int_equal(record_threshold_parse_names("error_rate<1%", names, 2, &thr[1], err, sizeof err), 0);
    record_threshold_eval(&thr[0], r);
    record_threshold_eval(&thr[1], r);
    record_set_thresholds(r, thr, 2);
    struct run_shard *s = &r->shard;
    s->count = 3;
    s->index = merged ? RUN_SHARD_MERGED : 1;
    snprintf(s->source, sizeof s->source, "SLURM_PROCID/SLURM_NTASKS");
    s->plan_id = 0x1f0c00ff12345678ULL;
    s->start_at_unix_ns = 1767000000123456789ULL;
    s->t0_unix_ns = 1767000000123456789ULL;
    s->start_skew_ns = -1500000;
    s->clock_synced = true;
    s->clock_maxerror_ms = 16.5;
    s->clock_esterror_ms = 0.5;
    s->lag_limit_ns = 7 * NS_PER_MS;
    s->nstreams = 2;
    s->streams[0] = (struct run_shard_stream){10, 90.5, UINT64_MAX, 0};
    s->streams[1] = (struct run_shard_stream){5, 5, 1000, 0};
    if (merged) {
        s->complete = false;
        s->skew_min_ns = -2000000;
        s->skew_max_ns = 3000000;
        s->nparts = 2;
        s->parts = calloc(2, sizeof *s->parts);
        s->parts[0] = (struct run_shard_part){.index = 0, .host = "a", .start_skew_ns = -2000000};
        s->parts[1] = (struct run_shard_part){
            .index = 1, .host = "b", .start_skew_ns = 3000000, .generator_limited = true, .failed = true};
        snprintf(s->parts[1].failure, sizeof s->parts[1].failure, "interrupted before the end of its plan");
    }
}

static char *json_text(const struct run_record *r, bool pretty)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    record_write_json(f, r, pretty);
    fclose(f);
    return buf;
}

static void assert_round_trip(const struct run_record *r)
{
    char *first = json_text(r, true);
    json_error_t je;
    json_t *root = json_loads(first, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        fail_msg("the JSON does not parse: %d: %s\n%s", je.line, je.text, first);
    struct run_record back;
    char err[256];
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_int_equal(record_read_histograms(root, &back, err, sizeof err), 0);
    char *second = json_text(&back, true);
    if (strcmp(first, second) != 0) {
        for (size_t i = 0; first[i]; i++)
            if (first[i] != second[i]) {
                fail_msg("written, read and written again, the JSON differs at byte %zu:\n...%.300s\n---\n...%.300s", i,
                         first + (i > 100 ? i - 100 : 0), second + (i > 100 ? i - 100 : 0));
            }
        fail_msg("the second JSON is longer");
    }
    /* the histograms themselves came back (the shard object carries them) */
    assert_int_equal(back.all.latency_all.total_count, r->all.latency_all.total_count);
    assert_int_equal(back.targets[0].st[1].dur.total_count, r->targets[0].st[1].dur.total_count);
    assert_int_equal(back.targets[0].tls.max_value, r->targets[0].tls.max_value);
    assert_int_equal(back.targets[1].events.last_send_ns, r->targets[1].events.last_send_ns);
    assert_int_equal(back.targets[1].counts.sent_on_time, r->targets[1].counts.sent_on_time);
    /* the plan's strings */
    assert_string_equal(back.config.tls_cacert, "ca.pem");
    assert_string_equal(back.config.rejects[0].body, "QUEUE");
    assert_null(back.config.rejects[1].body);
    assert_int_equal(back.config.warmup_ns, r->config.warmup_ns);
    assert_int_equal(back.config.timer_slack_ns, r->config.timer_slack_ns);
    assert_true(back.config.timer_slack_auto);
    assert_string_equal(back.config.argv[2], "--lag-limit=7ms");
    record_release(&back);
    json_decref(root);
    free(first);
    free(second);
}

static void test_json_round_trip(void **state)
{
    (void)state;
    struct run_record r;
    record_rich(&r, false);
    assert_round_trip(&r);
    record_release(&r);
    record_rich(&r, true);
    assert_round_trip(&r);
    /* without the shard object: no histograms to read, the rest the same */
    r.shard.count = 0;
    char *first = json_text(&r, false);
    json_t *root = json_loads(first, 0, NULL);
    struct run_record back;
    char err[256];
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_int_equal(record_read_histograms(root, &back, err, sizeof err), 0);
    assert_null(back.all.latency_all.counts);
    char *second = json_text(&back, false);
    assert_string_equal(first, second);
    free(first);
    free(second);
    json_decref(root);
    record_release(&back);
    record_release(&r);
}

/* A closed loop's config and a knee-run/1 document's old names. */
/* "stream": the JSON carries each histogram's percentile spectrum (knee report's charts): the
 * levels rise from 0 below 1, the values never fall, and at p50 and p90 they are the summary's;
 * a record read back from JSON (statistics, no histograms) writes none. */
static void check_spectrum(const json_t *stream, const char *key)
{
    const json_t *sum = json_object_get(stream, key);
    const json_t *sp = json_object_get(json_object_get(stream, "spectrum"), key);
    const json_t *p = json_object_get(sp, "p"), *ms = json_object_get(sp, "ms");
    assert_true(json_array_size(p) > 10);
    assert_int_equal(json_array_size(p), json_array_size(ms));
    assert_true(json_number_value(json_array_get(p, 0)) == 0);
    int seen = 0;
    for (size_t i = 1; i < json_array_size(p); i++) {
        double pi = json_number_value(json_array_get(p, i)), v = json_number_value(json_array_get(ms, i));
        assert_true(pi > json_number_value(json_array_get(p, i - 1)) && pi < 1);
        assert_true(v >= json_number_value(json_array_get(ms, i - 1)));
        assert_true(v <= json_number_value(json_object_get(sum, "max")));
        if (pi == 0.5)
            seen += v == json_number_value(json_object_get(sum, "p50"));
        if (pi == 0.9)
            seen += v == json_number_value(json_object_get(sum, "p90"));
    }
    assert_int_equal(seen, 2);
}

static void test_json_stream_spectrum(void **state)
{
    (void)state;
    struct run_record r;
    record_new(&r, 2);
    for (uint64_t s = 0; s < 10; s++)
        add_requests(&r.targets[0], 100, s * NS_PER_S, 100 * NS_PER_US, 2 * NS_PER_MS, OUTCOME_OK, false);
    struct run_stream *st = &r.targets[0].stream;
    for (int64_t i = 0; i < 1000; i++) {
        record_stream_hist(&st->first_event, 10 * NS_PER_MS + i * 7919, 1);
        record_stream_hist(&st->event_gap, 1 * NS_PER_MS + (i % 100) * 20011, 3);
        record_stream_hist(&st->per_response, 4, 1);
    }
    st->events = 4000;
    st->responses = 1000;
    record_finish(&r, &done_at_10s);
    char *text = json_text(&r, false);
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    assert_non_null(root);
    const json_t *t0 = json_object_get(json_array_get(json_object_get(root, "targets"), 0), "stream");
    check_spectrum(t0, "first_event");
    check_spectrum(t0, "event_gap");
    check_spectrum(json_object_get(json_object_get(root, "all"), "stream"), "event_gap");
    assert_null(json_object_get(json_array_get(json_object_get(root, "targets"), 1), "stream"));
    /* read back: the statistics, no histograms, so no spectrum */
    struct run_record back;
    char err[256];
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    char *again = json_text(&back, false);
    json_t *root2 = json_loads(again, JSON_REJECT_DUPLICATES, &je);
    assert_non_null(root2);
    const json_t *b0 = json_object_get(json_array_get(json_object_get(root2, "targets"), 0), "stream");
    assert_non_null(b0);
    assert_null(json_object_get(b0, "spectrum"));
    assert_true(json_equal(json_object_get(b0, "first_event"), json_object_get(t0, "first_event")));
    json_decref(root2);
    json_decref(root);
    free(again);
    free(text);
    record_release(&back);
    record_release(&r);
}

static void test_json_closed_loop_and_old_schema(void **state)
{
    (void)state;
    struct run_record r;
    record_new(&r, 1);
    r.config.open_loop = false;
    r.config.think_ns = 2500 * NS_PER_US + 1;
    r.targets[0].connections = 8;
    add_requests(&r.targets[0], 10, NS_PER_S, 0, NS_PER_MS, OUTCOME_OK, false);
    record_finish(&r, &done_at_10s);
    char *first = json_text(&r, false);
    json_t *root = json_loads(first, 0, NULL);
    struct run_record back;
    char err[256];
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_false(back.config.open_loop);
    assert_int_equal(back.config.think_ns, r.config.think_ns);
    assert_int_equal(back.targets[0].connections, 8);
    char *second = json_text(&back, false);
    assert_string_equal(first, second);
    free(first);
    free(second);
    json_decref(root);
    record_release(&back);
    record_release(&r);

    root = json_pack("{s:s, s:f, s:[], s:{}}", "schema", "knee-run/1", "send_ratio", 0.25, "targets", "all");
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_true(back.sent_on_schedule == 0.25);
    assert_true(isnan(back.window_s));
    assert_true(back.config.open_loop);
    record_release(&back);
    json_decref(root);
}

/* A shard's histograms are checked as knee merge checks them. */
static void test_histograms_checked(void **state)
{
    (void)state;
    struct run_record r;
    record_rich(&r, false);
    char *text = json_text(&r, false);
    record_release(&r);
    json_t *root = json_loads(text, 0, NULL);
    free(text);
    json_t *t0 =
        json_array_get(json_object_get(json_object_get(json_object_get(root, "shard"), "histograms"), "targets"), 0);
    json_t *lat = json_object_get(t0, "latency");
    json_object_set_new(lat, "count", json_integer(json_integer_value(json_object_get(lat, "count")) + 1));
    struct run_record back;
    char err[256];
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_int_equal(record_read_histograms(root, &back, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "histogram t0.latency: its count or extremes disagree with its buckets");
    record_release(&back);
    json_object_del(lat, "hdr");
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_int_equal(record_read_histograms(root, &back, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "histogram t0.latency has no hdr, min_ns or max_ns");
    record_release(&back);
    json_object_del(json_object_get(t0, "events"), "sends");
    json_object_del(t0, "latency");
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_int_equal(record_read_histograms(root, &back, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "histograms of t0: events.sends is missing or out of range");
    record_release(&back);
    json_decref(root);
}

/* ------------------------------------------------------------------ record_add and the strict reader */

/* A Server-Timing sample of name on t (the entry made when new). */
static void st_record(struct run_target_result *t, const char *name, int64_t ns)
{
    size_t j = 0;
    while (j < t->nst && strcmp(t->st[j].name, name) != 0)
        j++;
    if (j == t->nst) {
        snprintf(t->st[j].name, sizeof t->st[j].name, "%s", name);
        assert_int_equal(hdr_init(&t->st[j].dur, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
        t->nst++;
    }
    hdr_record(&t->st[j].dur, ns, 1);
}

static void assert_same_hist(const struct hdr *a, const struct hdr *b)
{
    assert_int_equal(a->total_count, b->total_count);
    assert_int_equal(a->min_value, b->min_value);
    assert_int_equal(a->max_value, b->max_value);
    assert_int_equal(a->counts_len, b->counts_len);
    assert_memory_equal(a->counts, b->counts, a->counts_len * sizeof *a->counts);
}

/* Two records added equal one record of the union of their requests: counts, events,
 * histograms, protocols, Server-Timing, each target's planned rate and connections; finished,
 * the same JSON. */
static void test_record_add(void **state)
{
    (void)state;
    struct run_record a, b, u, sum;
    record_new(&a, 2);
    record_new(&b, 2);
    record_new(&u, 2);
    record_new(&sum, 2);
    sum.threads = sum.pool_cap = 0;
    for (uint64_t s = 0; s < 10; s++) {
        struct run_record *half = s % 2 ? &b : &a;
        for (int k = 0; k < 2; k++) {
            struct run_record *r = k ? &u : half;
            add_requests(&r->targets[0], 30, s * NS_PER_S, 100 * NS_PER_US, (2 + s) * NS_PER_MS, OUTCOME_OK, false);
            add_requests(&r->targets[0], 2, s * NS_PER_S + 7, 5 * NS_PER_MS, NS_PER_S, OUTCOME_TIMEOUT, false);
            add_requests(&r->targets[1], 1 + s % 3, s * NS_PER_S + 2, NS_PER_MS, 3 * NS_PER_MS, OUTCOME_HTTP_ERROR,
                         false);
            add_requests(&r->targets[1], 5, s * NS_PER_S + 1, 2 * NS_PER_MS, (5 + s) * NS_PER_MS, OUTCOME_OK, false);
            add_requests(&r->targets[1], 1, s * NS_PER_S + 3, 0, 0, OUTCOME_DROPPED, s == 0);
            st_record(&r->targets[0], "db", (int64_t)(s + 1) * NS_PER_MS);
            if (s % 2)
                st_record(&r->targets[0], "cache", (int64_t)s * NS_PER_US);
        }
    }
    for (int i = 0; i < 2; i++) {
        a.targets[i].planned_rate = b.targets[i].planned_rate = 50;
        u.targets[i].planned_rate = 100;
        a.targets[i].connections = 1;
        b.targets[i].connections = 2;
        u.targets[i].connections = 3;
    }
    /* HTTP/2's limit: from the record that had an HTTP/2 connection (one read back without says
     * "unlimited") */
    a.targets[0].pc =
        (struct run_proto_counts){.h2 = 1, .h2_streams = 40, .h2_max_concurrent = 100, .h2_limit_seen = true};
    b.targets[0].pc = (struct run_proto_counts){.http1 = 2, .h2_max_concurrent = UINT64_MAX};
    u.targets[0].pc = (struct run_proto_counts){
        .http1 = 2, .h2 = 1, .h2_streams = 40, .h2_max_concurrent = 100, .h2_limit_seen = true};
    a.targets[1].resolve_ns = 7;
    b.targets[1].resolve_ns = 9;
    u.targets[1].resolve_ns = 9;
    u.threads = 4;
    u.pool_cap = 200;
    record_add(&sum, &a);
    record_add(&sum, &b);
    for (int i = 0; i < 2; i++) {
        const struct run_target_result *x = &sum.targets[i], *y = &u.targets[i];
        assert_memory_equal(&x->counts, &y->counts, sizeof x->counts);
        assert_memory_equal(&x->warmup_counts, &y->warmup_counts, sizeof x->warmup_counts);
        assert_memory_equal(&x->events, &y->events, sizeof x->events);
        assert_memory_equal(&x->pc, &y->pc, sizeof x->pc);
        assert_memory_equal(&x->status, &y->status, sizeof x->status);
        for (int g = 0; g < RUN_GROUP_COUNT; g++)
            assert_same_hist(&x->latency[g], &y->latency[g]);
        assert_same_hist(&x->latency_all, &y->latency_all);
        assert_same_hist(&x->lag, &y->lag);
        assert_same_hist(&x->service, &y->service);
        assert_int_equal(x->nst, y->nst);
        for (size_t j = 0; j < x->nst; j++) {
            assert_string_equal(x->st[j].name, y->st[j].name);
            assert_same_hist(&x->st[j].dur, &y->st[j].dur);
        }
        assert_true(x->planned_rate == y->planned_rate);
        assert_int_equal(x->connections, y->connections);
        assert_int_equal(x->resolve_ns, y->resolve_ns);
    }
    assert_int_equal(sum.threads, 4);
    assert_int_equal(sum.pool_cap, 200);
    /* derived the same way, the same run */
    record_finish(&sum, &done_at_10s);
    record_finish(&u, &done_at_10s);
    char *x = json_text(&sum, true), *y = json_text(&u, true);
    assert_string_equal(x, y);
    free(x);
    free(y);
    record_release(&a);
    record_release(&b);
    record_release(&u);
    record_release(&sum);
}

/* root changed by edit(root), then read strictly: refused with want (or read when want is NULL). */
static void strict_refuses(const char *doc, void (*edit)(json_t *), const char *want)
{
    json_t *root = json_loads(doc, 0, NULL);
    assert_non_null(root);
    edit(root);
    struct run_record back;
    char err[256] = "";
    int rc = record_read_json_strict(root, &back, err, sizeof err);
    if (!want) {
        if (rc)
            fail_msg("refused: %s", err);
        record_release(&back);
    } else {
        assert_int_equal(rc, KNEE_EFORMAT);
        assert_string_equal(err, want);
        assert_null(back.targets); /* nothing kept */
    }
    json_decref(root);
}

static json_t *target0(json_t *root)
{
    return json_array_get(json_object_get(root, "targets"), 0);
}

static void edit_none(json_t *root)
{
    (void)root;
}
static void edit_schema(json_t *root)
{
    json_object_set_new(root, "schema", json_string("knee-run/1"));
}
static void edit_t0(json_t *root)
{
    json_object_del(json_object_get(root, "shard"), "t0_unix_ns");
}
static void edit_window(json_t *root)
{
    json_object_set_new(root, "elapsed_s", json_null());
}
static void edit_mode(json_t *root)
{
    json_object_del(json_object_get(root, "config"), "mode");
}
static void edit_outcome(json_t *root)
{
    json_object_set_new(json_object_get(json_object_get(target0(root), "accounting"), "outcomes"), "ok",
                        json_real(1.5));
}
static void edit_cause(json_t *root)
{
    json_object_del(json_object_get(json_object_get(target0(root), "warmup"), "transport_causes"), "h2_goaway");
}
static void edit_retries(json_t *root)
{
    json_object_set_new(json_object_get(target0(root), "accounting"), "retries", json_integer(-1));
}
static void edit_warmup(json_t *root)
{
    json_object_del(target0(root), "warmup");
}
static void edit_hists(json_t *root)
{
    json_array_remove(json_object_get(json_object_get(json_object_get(root, "shard"), "histograms"), "targets"), 1);
}
static void edit_root(json_t *root)
{
    json_object_clear(root); /* no schema at all */
}

/* root changed by edit(root), then read strictly: refused with an error that contains want. */
static void strict_says(const char *doc, void (*edit)(json_t *), const char *want)
{
    json_t *root = json_loads(doc, 0, NULL);
    edit(root);
    struct run_record back;
    char err[256] = "";
    assert_int_equal(record_read_json_strict(root, &back, err, sizeof err), KNEE_EFORMAT);
    if (!strstr(err, want))
        fail_msg("expected '%s' in: %s", want, err);
    assert_null(back.targets);
    json_decref(root);
}

static void bump(json_t *o, const char *key, json_int_t by)
{
    json_object_set_new(o, key, json_integer(json_integer_value(json_object_get(o, key)) + by));
}
static void edit_planned(json_t *root)
{
    bump(json_object_get(target0(root), "accounting"), "planned", 1);
}
static void edit_all_sent(json_t *root)
{
    json_t *acc = json_object_get(json_object_get(root, "all"), "accounting");
    bump(acc, "planned", 1); /* all's own identities hold; it is no longer the targets' sum */
    bump(acc, "sent", 1);
    bump(json_object_get(acc, "outcomes"), "ok", 1);
}
static void edit_status_more(json_t *root)
{
    bump(json_object_get(target0(root), "status_codes"), "200", 1000); /* more than the responses */
    bump(json_object_get(json_object_get(root, "all"), "status_codes"), "200", 1000);
}
static void edit_status_all(json_t *root)
{
    bump(json_object_get(json_object_get(root, "all"), "status_codes"), "404", -1);
}
static void edit_status_key(json_t *root)
{
    json_object_set_new(json_object_get(target0(root), "status_codes"), "2xx", json_integer(1));
}
static void edit_status_value(json_t *root)
{
    json_object_set_new(json_object_get(target0(root), "status_codes"), "404", json_real(1.5));
}
static void edit_transport(json_t *root)
{
    bump(json_object_get(json_object_get(target0(root), "warmup"), "transport_causes"), "refused", 1);
}
static void edit_all_outcomes(json_t *root)
{
    json_object_del(json_object_get(json_object_get(root, "all"), "accounting"), "outcomes");
}
static void edit_rate(json_t *root)
{
    json_object_set_new(json_object_get(root, "config"), "rate", json_real(-5));
}
static void edit_target_rate(json_t *root)
{
    json_object_set_new(json_object_get(target0(root), "rates"), "planned", json_real(-1));
}
static void edit_stream_rate(json_t *root)
{
    json_t *st = json_object_get(json_object_get(root, "shard"), "streams");
    json_object_set_new(json_array_get(st, 0), "rate_to", json_string("fast"));
}

/* knee merge checks a shard's own identities before it adds anything: its counts, all as the
 * targets' sum, its rates, then (with the histograms) its events against its counts. */
static void test_read_strict_identities(void **state)
{
    (void)state;
    struct run_record r;
    record_rich(&r, false);
    char *doc = json_text(&r, false);
    record_release(&r);
    strict_says(doc, edit_planned, ": accounting: planned ");
    strict_says(doc, edit_all_sent, "all: accounting: planned ");
    strict_says(doc, edit_transport, ": warmup: outcomes.transport ");
    strict_says(doc, edit_status_more,
                "target t0: status_codes add up to 1018 > the 18 responses of accounting (ok + rejected + "
                "http_error + invalid)");
    strict_says(doc, edit_status_all, "all: status_codes.404 7 != the targets' sum 8");
    strict_says(doc, edit_status_key, "target t0: status_codes has a key \"2xx\" that is not a status");
    strict_says(doc, edit_status_value, "target t0: status_codes.404 is not a count");
    strict_says(doc, edit_all_outcomes, "all.accounting.outcomes.ok is missing or not a count");
    strict_says(doc, edit_rate, "config.rate is negative or not a number");
    strict_says(doc, edit_target_rate, ": rates.planned is negative or not a number");
    json_t *root = json_loads(doc, 0, NULL);
    strict_says(doc, edit_stream_rate, "shard.streams[].rate_to is negative or not a number");
    struct run_record back;
    char err[256];
    assert_int_equal(record_read_json_strict(root, &back, err, sizeof err), 0);
    assert_int_equal(record_read_histograms(root, &back, err, sizeof err), 0);
    if (record_check_events(&back, err, sizeof err))
        fail_msg("a knee run's own events refused: %s", err);
    struct run_events keep = back.targets[0].events;
    back.targets[0].events.planned = 1ULL << 62;
    assert_int_equal(record_check_events(&back, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, ": events.planned 4611686018427387904 > the "));
    back.targets[0].events = keep;
    back.all.events.sends++;
    assert_int_equal(record_check_events(&back, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "all: events.sends "));
    back.all.events.sends--;
    back.all.events.ok = back.all.events.completed + 1;
    assert_int_equal(record_check_events(&back, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "all: events.ok "));
    record_release(&back);
    json_decref(root);
    free(doc);
}

/* The strict reader (knee merge's) refuses what a merge cannot add up, with merge's words; the
 * shard identity of a document as knee merge groups files by it. */
/* The server's HTTP/2 stream limit: 0 is a limit (a server shedding load), kept apart from
 * "none seen" (no connection had the server's SETTINGS; it printed "server limit 1"), from one
 * connection, across records and through the JSON, old files read as before. */
static void test_h2_limit(void **state)
{
    (void)state;
    struct run_proto_counts a = {0}, b = {0};
    record_h2_limit_add(&a, 0);
    assert_true(a.h2_limit_seen);
    assert_int_equal(a.h2_max_concurrent, 0);
    record_proto_counts_add(&a, &b); /* b saw none: a's 0 stays */
    assert_true(a.h2_limit_seen);
    assert_int_equal(a.h2_max_concurrent, 0);
    record_proto_counts_add(&b, &a); /* none seen + 0: 0 */
    assert_true(b.h2_limit_seen);
    assert_int_equal(b.h2_max_concurrent, 0);
    record_h2_limit_add(&a, 100);
    assert_int_equal(a.h2_max_concurrent, 100);
    record_h2_limit_add(&a, 0);
    assert_int_equal(a.h2_max_concurrent, 100);
    record_h2_limit_add(&a, UINT64_MAX);
    assert_int_equal(a.h2_max_concurrent, UINT64_MAX);

    static const struct {
        const char *json;
        bool seen;
        uint64_t limit;
    } cases[] = {
        {"{\"protocols\": {\"h2\": 2}, \"h2\": {\"max_concurrent\": 0}}", true, 0},
        {"{\"protocols\": {\"h2\": 2}, \"h2\": {\"max_concurrent\": 128}}", true, 128},
        {"{\"protocols\": {\"h2\": 2}, \"h2\": {\"max_concurrent\": null}}", true, UINT64_MAX},
        {"{\"protocols\": {\"h2\": 2}, \"h2\": {\"max_concurrent\": \"none seen\"}}", false, 0},
        {"{\"protocols\": {\"h2\": 0}, \"h2\": {\"max_concurrent\": null}}", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *t = json_loads(cases[i].json, 0, NULL);
        assert_non_null(t);
        struct run_proto_counts pc;
        record_read_transport(t, &pc);
        assert_int_equal(pc.h2_limit_seen, cases[i].seen);
        if (cases[i].seen)
            assert_int_equal(pc.h2_max_concurrent, cases[i].limit);
        json_decref(t);
    }
}

static void test_read_strict(void **state)
{
    (void)state;
    struct run_record r;
    record_rich(&r, false);
    char *doc = json_text(&r, false);
    record_release(&r);
    strict_refuses(doc, edit_none, NULL);
    strict_refuses(doc, edit_schema,
                   "schema \"knee-run/1\": knee merge adds up shards of the \"knee-run/2\" schema "
                   "(rates by event time); run the shards with this knee");
    strict_refuses(doc, edit_t0, "shard.t0_unix_ns is missing");
    strict_refuses(doc, edit_window, "no window_s or elapsed_s");
    strict_refuses(doc, edit_mode, "no config.mode");
    strict_refuses(doc, edit_outcome, "accounting.outcomes.ok is missing or not a count");
    strict_refuses(doc, edit_cause, "warmup.transport_causes.h2_goaway is missing or not a count");
    strict_refuses(doc, edit_retries, "accounting.retries is missing or not a count");
    strict_refuses(doc, edit_warmup, "no warmup object");
    strict_refuses(doc, edit_hists, "shard.histograms.targets does not list the 2 targets");
    strict_refuses(doc, edit_root,
                   "schema \"none\": knee merge adds up shards of the \"knee-run/2\" schema "
                   "(rates by event time); run the shards with this knee");
    json_t *arr = json_array();
    struct run_record back;
    char err[256];
    assert_int_equal(record_read_json_strict(arr, &back, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "not a JSON object");
    json_decref(arr);

    /* the shard identity */
    json_t *root = json_loads(doc, 0, NULL);
    struct run_shard sh;
    assert_int_equal(record_read_shard_id(root, &sh, err, sizeof err), 0);
    assert_true(sh.count == 3 && sh.index == 1 && sh.plan_id == 0x1f0c00ff12345678ULL);
    assert_int_equal(sh.start_at_unix_ns, 1767000000123456789ULL);
    json_t *js = json_object_get(root, "shard");
    json_object_set_new(js, "index", json_integer(3));
    assert_int_equal(record_read_shard_id(root, &sh, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "the \"shard\" object's index is not below its count");
    json_object_set_new(js, "plan_id", json_pack("s", "1f0c00ff1234567"));
    assert_int_equal(record_read_shard_id(root, &sh, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "the \"shard\" object has no valid count or plan_id");
    json_object_del(root, "shard");
    assert_int_equal(record_read_shard_id(root, &sh, err, sizeof err), 0);
    assert_int_equal(sh.count, 0);
    json_object_set_new(root, "schema", json_pack("s", "knee-stats/1"));
    assert_int_equal(record_read_shard_id(root, &sh, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "not a knee run JSON (schema \"knee-stats/1\", expected \"knee-run/2\")");
    json_decref(root);
    uint64_t plan;
    assert_true(record_shard_plan_parse("1F0C00FF12345678", &plan) && plan == 0x1f0c00ff12345678ULL);
    assert_false(record_shard_plan_parse("1f0c00ff1234567g", &plan));
    free(doc);
}

/* --abort-if: the record says which rule fired when, in place of the interrupted warning; the
 * JSON's "aborted" is null without one, and anything but null or {rule, at_s} is refused. */
static void test_aborted(void **state)
{
    (void)state;
    struct run_record r;
    record_rich(&r, false);
    assert_true(r.aborted.set && r.interrupted);
    assert_string_equal(r.aborted.rule, "p99[30s]>500ms");
    assert_true(r.aborted.at_s == 7);
    bool said = false;
    for (size_t i = 0; i < r.warnings.n; i++) {
        assert_false(strncmp(r.warnings.items[i], "interrupted:", 12) == 0);
        said |= strcmp(r.warnings.items[i], "ABORTED: --abort-if p99[30s]>500ms fired at 7.0 s: planning stopped "
                                            "there and the requests in flight drained; the numbers cover what "
                                            "ran") == 0;
    }
    assert_true(said);
    char *doc = json_text(&r, false);
    assert_non_null(strstr(doc, "\"aborted\":{\"rule\":\"p99[30s]>500ms\",\"at_s\":7}"));
    json_t *root = json_loads(doc, 0, NULL);
    struct run_record back;
    char err[256];
    const char *bad[] = {"[]",
                         "{\"rule\":\"\",\"at_s\":1}",
                         "{\"rule\":\"x\"}",
                         "{\"rule\":\"x\",\"at_s\":-1}",
                         "{\"rule\":1,\"at_s\":1}",
                         "true"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_object_set_new(root, "aborted", json_loads(bad[i], JSON_DECODE_ANY, NULL));
        assert_int_equal(record_read_json(root, &back, err, sizeof err), KNEE_EFORMAT);
        assert_string_equal(err, "\"aborted\" must be null or {\"rule\": the --abort-if rule, \"at_s\": seconds}");
        record_release(&back);
    }
    json_object_set_new(root, "aborted", json_null());
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_false(back.aborted.set);
    record_release(&back);
    json_object_del(root, "aborted"); /* a document from before --abort-if */
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_false(back.aborted.set);
    record_release(&back);
    json_decref(root);
    free(doc);
    record_release(&r);
    /* not aborted: null */
    record_new(&r, 1);
    config_fill(&r.config);
    record_finish(&r, &done_at_10s);
    doc = json_text(&r, false);
    assert_non_null(strstr(doc, "\"aborted\":null"));
    free(doc);
    record_release(&r);
}

/* ------------------------------------------------------------------ the recorded command line */

static void redacts(const char *prev, const char *arg, const char *want)
{
    char *got = record_redact_arg(prev, arg);
    assert_string_equal(got, want);
    free(got);
}

/* Credentials never reach environment.args: the secret headers' values in every spelling of
 * -H, any --header-secret value, the name kept; everything else copied as given. */
static void test_redact_args(void **state)
{
    (void)state;
    redacts("-H", "Authorization: Bearer abc.def", "Authorization: <redacted>");
    redacts("--header", "authorization:Basic dTpw", "authorization: <redacted>");
    redacts(NULL, "-HCookie: sid=1; x=2", "-HCookie: <redacted>");
    redacts(NULL, "--header=api=Proxy-Authorization: Basic x", "--header=api=Proxy-Authorization: <redacted>");
    redacts("-H", " SET-COOKIE : a=b", " SET-COOKIE : <redacted>");
    redacts("--header-secret", "X-Api-Key: k3y", "X-Api-Key: <redacted>");
    redacts("--header-secret", "api=X-Api-Key: k3y", "api=X-Api-Key: <redacted>");
    redacts(NULL, "--header-secret=X-Api-Key: k3y", "--header-secret=X-Api-Key: <redacted>");
    redacts("--header-secret", "no-colon-value", "<redacted>"); /* refused later; never kept */
    redacts("-H", "X-Api-Key: k3y", "X-Api-Key: k3y");          /* not marked: kept */
    redacts("-H", "Authorization:", "Authorization:");          /* no value: nothing to hide */
    redacts(NULL, "http://127.0.0.1:8080/a?b=c", "http://127.0.0.1:8080/a?b=c");
    redacts(NULL, "--lag-limit=7ms", "--lag-limit=7ms");

    /* the one way a command line enters a record, and the reader goes through it too */
    struct record_config c;
    memset(&c, 0, sizeof c);
    const char *argv[] = {"knee", "run", "-H", "Cookie: s=1", "--header-secret", "K: v", "-H", "A: b"};
    record_config_set_args(&c, 8, argv);
    assert_int_equal(c.argc, 8);
    assert_string_equal(c.argv[3], "Cookie: <redacted>");
    assert_string_equal(c.argv[5], "K: <redacted>");
    assert_string_equal(c.argv[7], "A: b");
    record_config_set_args(&c, 0, NULL);
    assert_int_equal(c.argc, 0);
    record_config_release(&c);

    struct run_record r;
    record_rich(&r, false);
    free(r.config.argv[2]);
    r.config.argv[2] = strdup("-HAuthorization: Bearer secret"); /* as a file from before redaction */
    char *doc = json_text(&r, false);
    record_release(&r);
    assert_non_null(strstr(doc, "Bearer secret"));
    json_t *root = json_loads(doc, 0, NULL);
    struct run_record back;
    char err[256];
    assert_int_equal(record_read_json(root, &back, err, sizeof err), 0);
    assert_string_equal(back.config.argv[2], "-HAuthorization: <redacted>");
    record_release(&back);
    json_decref(root);
    free(doc);
}

/* ------------------------------------------------------------------ thresholds and warnings */

static void test_thresholds_by_name(void **state)
{
    (void)state;
    const char *names[] = {"api", "api.v2"};
    struct run_threshold t;
    char err[256];
    assert_int_equal(record_threshold_parse_names("api.v2.p99<1s", names, 2, &t, err, sizeof err), 0);
    assert_int_equal(t.target, 1); /* the longest name that fits */
    assert_int_equal(record_threshold_parse_names("api.timeout.max<=2s", names, 2, &t, err, sizeof err), 0);
    assert_int_equal(t.target, 0);
    assert_int_equal(t.group, RUN_GROUP_TIMEOUT);
    assert_int_equal(record_threshold_parse_names("p99<1s", NULL, 0, &t, err, sizeof err), 0);
    assert_int_equal(t.target, THR_ALL_TARGETS);
    assert_int_equal(record_threshold_parse_names("nope<1", names, 2, &t, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "unknown quantity 'nope'"));
    struct run_record r;
    memset(&r, 0, sizeof r);
    struct run_threshold thr[2];
    assert_int_equal(record_threshold_parse_names("sent_on_schedule>99%", NULL, 0, &thr[0], err, sizeof err), 0);
    assert_int_equal(record_threshold_parse_names("count>=1", NULL, 0, &thr[1], err, sizeof err), 0);
    thr[0].measured = 0.5;
    thr[1].measured = 2;
    thr[1].pass = true;
    record_set_thresholds(&r, thr, 2);
    assert_int_equal(r.nthresholds, 2);
    assert_string_equal(r.thresholds[0].unit, "%");
    assert_string_equal(r.thresholds[1].unit, "");
    assert_false(r.thresholds[0].pass);
    assert_true(r.thresholds[1].pass);
    record_release(&r);
}

/* Responses by status: slots, classes, the top codes of a summary line, the JSON form written
 * and read back (lenient and strict). */
static void test_status_counts(void **state)
{
    (void)state;
    assert_int_equal(record_status_slot(100), 0);
    assert_int_equal(record_status_slot(599), RUN_STATUS_OTHER - 1);
    assert_int_equal(record_status_slot(99), RUN_STATUS_OTHER);
    assert_int_equal(record_status_slot(600), RUN_STATUS_OTHER);
    assert_int_equal(record_status_of_slot(record_status_slot(404)), 404);
    assert_int_equal(record_status_of_slot(RUN_STATUS_OTHER), -1);
    struct run_status_counts s, d;
    memset(&s, 0, sizeof s);
    memset(&d, 0, sizeof d);
    for (int k = 0; k < 90; k++)
        record_status_count(&s, 404);
    for (int k = 0; k < 10; k++)
        record_status_count(&s, 500);
    for (int k = 0; k < 10; k++)
        record_status_count(&s, 503);
    record_status_count(&s, 200);
    record_status_count(&s, 302);
    record_status_count(&s, 700);
    record_status_count(&s, 0); /* no status line: nothing */
    assert_false(record_status_any_failed(&d));
    record_status_count(&d, 204);
    assert_false(record_status_any_failed(&d));
    assert_true(record_status_any_failed(&s));
    assert_int_equal(record_status_total(&s), 113);
    assert_int_equal(record_status_class(&s, 4), 90);
    assert_int_equal(record_status_class(&s, 5), 20);
    assert_int_equal(record_status_class(&s, 2), 1);
    assert_int_equal(record_status_class(&s, 0), 1);
    assert_int_equal(record_status_class(&s, 6), 0);
    record_status_add(&d, &s);
    assert_int_equal(record_status_total(&d), 114);

    /* the top codes: by count, ties by status, "other" as -1; how many there are in all */
    struct run_status_entry top[3];
    assert_int_equal(record_status_top(&s, NULL, NULL, top, 3), 6);
    assert_int_equal(top[0].status, 404);
    assert_int_equal(top[0].count, 90);
    assert_int_equal(top[1].status, 500);
    assert_int_equal(top[2].status, 503);
    assert_int_equal(record_status_top(&s, NULL, NULL, top, 0), 6);
    struct run_status_counts one;
    memset(&one, 0, sizeof one);
    record_status_count(&one, 999);
    assert_int_equal(record_status_top(&one, NULL, NULL, top, 3), 1);
    assert_int_equal(top[0].status, -1);

    /* JSON: non-zero slots in numeric order, "other" last; read back the same */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct jw j;
    jw_init(&j, f, false);
    jw_object_begin(&j);
    record_status_write_json(&j, "status_codes", &s);
    jw_object_end(&j);
    jw_end(&j);
    fclose(f);
    assert_string_equal(buf, "{\"status_codes\":{\"200\":1,\"302\":1,\"404\":90,\"500\":10,\"503\":10,\"other\":1}}\n");
    json_t *root = json_loads(buf, 0, NULL);
    struct run_status_counts back;
    char err[200];
    assert_int_equal(record_status_read_json(json_object_get(root, "status_codes"), &back, true, err, sizeof err), 0);
    assert_memory_equal(&back, &s, sizeof s);
    json_decref(root);
    free(buf);
    /* lenient: what is not a status or a count is left out; strict: refused */
    root = json_loads("{\"404\": 3, \"x\": 1, \"500\": -1, \"650\": 2, \"other\": 1}", 0, NULL);
    assert_int_equal(record_status_read_json(root, &back, false, NULL, 0), 0);
    assert_int_equal(record_status_total(&back), 6);
    assert_int_equal(back.n[RUN_STATUS_OTHER], 3);
    assert_int_equal(record_status_read_json(root, &back, true, err, sizeof err), KNEE_EFORMAT);
    json_decref(root);
    root = json_loads("[1]", 0, NULL);
    assert_int_equal(record_status_read_json(root, &back, false, NULL, 0), 0);
    assert_int_equal(record_status_total(&back), 0);
    assert_int_equal(record_status_read_json(root, &back, true, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "status_codes is not an object");
    assert_int_equal(record_status_read_json(NULL, &back, true, err, sizeof err), 0);
    json_decref(root);
}

/* status.CODE thresholds: a status, a class or other, counted or as a share of the completed
 * requests; a TARGET. prefix; parse errors. */
static void test_thresholds_status(void **state)
{
    (void)state;
    const char *names[] = {"api"};
    struct run_record r;
    record_new(&r, 1);
    add_requests(&r.targets[0], 8, 0, 0, NS_PER_MS, OUTCOME_HTTP_ERROR, false); /* 404 x6, 500 x2 */
    add_requests(&r.targets[0], 10, 0, 0, NS_PER_MS, OUTCOME_OK, false);        /* 200 x10 */
    add_requests(&r.targets[0], 2, 0, 0, NS_PER_MS, OUTCOME_TIMEOUT, false);    /* no status */
    add_requests(&r.targets[0], 3, 0, 0, 0, OUTCOME_DROPPED, false);
    record_finish(&r, &done_at_10s);
    static const struct {
        const char *expr;
        double measured;
        bool pass;
    } cases[] = {
        {"status.5xx==0", 2, false},    {"status.404<10", 6, true},         {"status.2xx>=10", 10, true},
        {"api.status.500<=2", 2, true}, {"status.5xx_rate<1%", 0.1, false}, {"status.4xx_rate<=0.3", 0.3, true},
        {"status.other==0", 0, true},   {"status.200 != 10", 10, false},    {"api.status.2XX_rate>0.5", 0.5, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct run_threshold t;
        char err[256];
        if (record_threshold_parse_names(cases[i].expr, names, 1, &t, err, sizeof err))
            fail_msg("%s: %s", cases[i].expr, err);
        record_threshold_eval(&t, &r);
        if (fabs(t.measured - cases[i].measured) > 1e-12 || t.pass != cases[i].pass)
            fail_msg("%s: measured %g pass %d", cases[i].expr, t.measured, t.pass);
    }
    struct run_threshold t;
    char err[256];
    assert_int_equal(record_threshold_parse_names("status.6xx==0", names, 1, &t, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "unknown status 'status.6xx'"));
    assert_int_equal(record_threshold_parse_names("status.99<1", names, 1, &t, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(record_threshold_parse_names("status.404<1%", names, 1, &t, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "'1%' is not a count"));
    assert_int_equal(record_threshold_parse_names("status.5xx_rate<lots", names, 1, &t, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(record_threshold_parse_names("status.5xx_rate<1%", names, 1, &t, err, sizeof err), 0);
    assert_string_equal(record_threshold_unit(&t), "%");
    /* nothing completed: a share fails, a count is 0 */
    struct run_record empty;
    record_new(&empty, 1);
    record_finish(&empty, &done_at_10s);
    record_threshold_eval(&t, &empty);
    assert_true(isnan(t.measured));
    assert_false(t.pass);
    assert_int_equal(record_threshold_parse_names("status.5xx==0", names, 1, &t, err, sizeof err), 0);
    record_threshold_eval(&t, &empty);
    assert_true(t.pass);
    record_release(&empty);
    record_release(&r);
}

static void test_warn_list(void **state)
{
    (void)state;
    struct warn_list w;
    memset(&w, 0, sizeof w);
    warn_add(&w, false, "note %d", 1);
    assert_false(w.attention);
    warn_add(&w, true, "problem %s", "two");
    assert_true(w.attention);
    warn_add(&w, false, "note 3");
    assert_true(w.attention); /* a note does not clear it */
    assert_int_equal(w.n, 3);
    assert_string_equal(w.items[1], "problem two");
    warn_replace(&w, 1, "replaced %d", 2);
    assert_string_equal(w.items[1], "replaced 2");
    char *big = malloc(3000);
    memset(big, 'x', 2999);
    big[2999] = '\0';
    warn_add(&w, false, "%s", big);
    assert_int_equal(strlen(w.items[3]), WARN_MAX_LEN - 1);
    warn_add_text(&w, false, big); /* read back from a document: whole */
    assert_int_equal(strlen(w.items[4]), 2999);
    char **v = NULL;
    size_t n = 0;
    warn_strv_add(&v, &n, 8, "%s", big);
    assert_string_equal(v[0], "xxxxxxx");
    free(v[0]);
    free(v);
    free(big);
    warn_list_release(&w);
    assert_int_equal(w.n, 0);
    assert_null(w.items);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finish_ok_run),
        cmocka_unit_test(test_finish_warnings_in_order),
        cmocka_unit_test(test_finish_generator_when_some_succeeded),
        cmocka_unit_test(test_finish_errors_and_broken_counts),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_closed_loop_and_old_schema),
        cmocka_unit_test(test_histograms_checked),
        cmocka_unit_test(test_record_add),
        cmocka_unit_test(test_h2_limit),
        cmocka_unit_test(test_read_strict),
        cmocka_unit_test(test_aborted),
        cmocka_unit_test(test_read_strict_identities),
        cmocka_unit_test(test_redact_args),
        cmocka_unit_test(test_thresholds_by_name),
        cmocka_unit_test(test_status_counts),
        cmocka_unit_test(test_thresholds_status),
        cmocka_unit_test(test_warn_list),
        cmocka_unit_test(test_json_stream_spectrum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
