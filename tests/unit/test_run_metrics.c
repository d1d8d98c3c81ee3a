/* Unit tests for knee run's live metrics: the engine's run_config.on_live (cumulative, monotonic,
 * tick by tick; its final call equal to the result: counts, and histograms bucket for bucket
 * the conversion of the result's merged HdrHistograms; request bytes; nothing in flight), and
 * the glue cli/run_metrics (thresholds as bucket bounds, flag checks, a real scrape after a run
 * and after a second run through the same configuration, as knee capacity's steps). Against
 * knee serve's null target in-process, on loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/run_metrics.h"
#include "core/clock.h"
#include "core/err.h"
#include "hist/native.h"
#include "hist/prom.h"
#include "load/run.h"
#include "record/threshold.h"
#include "metrics/metrics.h"
#include "serve/serve.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct serve_handle *null_server(void)
{
    struct serve_config cfg;
    assert_int_equal(serve_preset("null", &cfg), 0);
    snprintf(cfg.listen, sizeof cfg.listen, "127.0.0.1:0");
    struct serve_handle *h;
    assert_int_equal(serve_start(&cfg, &h), 0);
    return h;
}

/* ---- the engine's on_live --------------------------------------------------------------- */

struct seen {
    size_t calls, finals, warm_calls;
    bool monotonic;
    struct run_live_target last[2];
    struct run_live final;
    struct run_live_target final_t[2];
    struct native_hist final_native[2][4]; /* deep copies: the engine's memory is valid during the call only */
};

static void on_live(void *ctx, const struct run_live *l)
{
    struct seen *s = ctx;
    assert_int_equal(l->ntargets, 2);
    assert_false(s->finals); /* nothing after the final call */
    for (size_t t = 0; t < 2; t++) {
        const struct run_live_target *a = &s->last[t], *b = &l->targets[t];
        if (s->calls) {
            s->monotonic &= b->counts.planned >= a->counts.planned && b->counts.sent >= a->counts.sent;
            for (int o = 0; o < OUTCOME_COUNT; o++)
                s->monotonic &= b->counts.outcome[o] >= a->counts.outcome[o];
            for (size_t i = 0; i <= b->latency.nbounds; i++)
                s->monotonic &= b->latency.counts[i] >= a->latency.counts[i] && b->lag.counts[i] >= a->lag.counts[i];
            s->monotonic &= b->bytes_sent >= a->bytes_sent;
            s->monotonic &=
                b->latency_native.count >= a->latency_native.count && b->lag_native.count >= a->lag_native.count;
        }
        s->last[t] = *b;
        /* the histograms cover the requests counted */
        assert_true(b->lag.total <= b->counts.sent);
        assert_true(b->latency.total <= b->counts.sent);
    }
    if (l->warmup) {
        s->warm_calls++;
        assert_int_equal(l->targets[0].counts.planned + l->targets[1].counts.planned, 0);
    }
    if (l->final) {
        s->finals++;
        s->final = *l;
        memcpy(s->final_t, l->targets, sizeof s->final_t);
        s->final.targets = s->final_t;
        for (size_t t = 0; t < 2; t++) {
            const struct native_hist *n[] = {&l->targets[t].latency_native, &l->targets[t].service_native,
                                             &l->targets[t].lag_native, &l->targets[t].ttfb_native};
            for (int k = 0; k < 4; k++) {
                native_init(&s->final_native[t][k], NATIVE_SCHEMA);
                native_copy(&s->final_native[t][k], n[k]);
            }
        }
    }
    s->calls++;
}

/* The result's merged HdrHistogram converted by the same rule. */
static void assert_hist_is(const struct prom_hist *live, const struct hdr *h, const int64_t *bounds_ns, size_t n)
{
    struct prom_hist want;
    double b[PROM_MAX_BOUNDS];
    for (size_t i = 0; i < n; i++)
        b[i] = (double)bounds_ns[i];
    assert_int_equal(prom_init(&want, b, n), 0);
    prom_add_hdr(&want, h);
    assert_int_equal(live->nbounds, n);
    for (size_t i = 0; i <= n; i++)
        assert_int_equal(live->counts[i], want.counts[i]);
    assert_int_equal(live->total, (uint64_t)h->total_count);
    assert_true(fabs(live->sum - want.sum) <= 1e-9 * want.sum);
    /* and the mean is the result's (median-equivalent values, as hdr_mean) */
    if (h->total_count)
        assert_true(fabs(live->sum / (double)live->total - hdr_mean(h)) <= 1e-9 * hdr_mean(h));
}

/* The result's merged HdrHistogram converted to a native histogram: the live one, bucket for
 * bucket (the threads' conversions added = the conversion of the merge). */
static void assert_native_is(struct native_hist *live, const struct hdr *h)
{
    struct native_hist want;
    native_init(&want, NATIVE_SCHEMA);
    native_from_hdr(&want, h, 1e-9);
    assert_int_equal(live->count, (uint64_t)h->total_count);
    assert_int_equal(live->count, want.count);
    assert_int_equal(live->zero_count, want.zero_count);
    assert_true(fabs(live->sum - want.sum) <= 1e-9 * want.sum);
    /* the same non-empty buckets (the live array may be wider, with empty ends) */
    for (size_t i = 0; i < live->n; i++) {
        int32_t k = live->first + (int32_t)i;
        uint64_t w = k >= want.first && k < want.first + (int32_t)want.n ? want.counts[k - want.first] : 0;
        assert_int_equal(live->counts[i], w);
    }
    assert_true(native_quantile(live, 0.99) == native_quantile(&want, 0.99));
    native_release(&want);
    native_release(live);
}

static void test_engine_live(void **state)
{
    (void)state;
    struct serve_handle *srv = null_server();
    char ua[64], ub[64];
    snprintf(ua, sizeof ua, "http://127.0.0.1:%d/a", serve_port(srv));
    snprintf(ub, sizeof ub, "http://127.0.0.1:%d/bb", serve_port(srv));
    struct plan_target tc[2] = {{.name = "a", .url = ua}, {.name = "b", .url = ub, .weight = 3}};
    /* 1000.5 us: inside an HDR bucket (not a boundary), and sub-microsecond bounds (exact) */
    const int64_t bounds[] = {500, 2047, 50000, 100000, 250000, 1000500, 10000000};
    struct seen s = {.monotonic = true};
    struct run_config cfg = {.plan.targets = tc,
                             .plan.ntargets = 2,
                             .plan.open_loop = true,
                             .plan.rate = 2000,
                             .plan.duration_ns = 3 * NS_PER_S,
                             .plan.warmup_ns = 1500 * NS_PER_MS,
                             .timeout_ns = 5 * NS_PER_S,
                             .drain_ns = 5 * NS_PER_S,
                             .keepalive = true,
                             .threads = 2,
                             .on_live = on_live,
                             .live_ctx = &s,
                             .live_bounds_ns = bounds,
                             .live_nbounds = sizeof bounds / sizeof *bounds,
                             .live_native = true};
    struct run_record res;
    char err[256];
    assert_int_equal(run_execute(&cfg, &res, err, sizeof err), 0);
    assert_true(res.accounting_ok);
    assert_true(s.calls >= 3); /* seconds 1, 2, 3 (and the drain's), then the final call */
    assert_int_equal(s.finals, 1);
    assert_true(s.warm_calls >= 1); /* the first second is inside the 1.5 s warm-up */
    assert_true(s.monotonic);
    assert_true(s.final.final);
    assert_false(s.final.warmup);
    assert_int_equal(s.final.generator_limited, res.generator_limited);
    struct run_dryrun plan;
    assert_int_equal(run_dryrun(&cfg, &plan, err, sizeof err), 0);
    for (size_t t = 0; t < 2; t++) {
        const struct run_live_target *l = &s.final_t[t];
        const struct run_target_result *r = &res.targets[t];
        assert_memory_equal(&l->counts, &r->counts, sizeof l->counts);
        assert_true(r->counts.planned > 0);
        assert_int_equal(l->in_flight, 0);
        assert_int_equal(l->queued, 0);
        assert_hist_is(&l->latency, &r->latency_all, bounds, cfg.live_nbounds);
        assert_hist_is(&l->service, &r->service, bounds, cfg.live_nbounds);
        assert_hist_is(&l->lag, &r->lag, bounds, cfg.live_nbounds);
        assert_native_is(&s.final_native[t][0], &r->latency_all);
        assert_native_is(&s.final_native[t][1], &r->service);
        assert_native_is(&s.final_native[t][2], &r->lag);
        assert_hist_is(&l->ttfb, &r->ttfb, bounds, cfg.live_nbounds);
        assert_native_is(&s.final_native[t][3], &r->ttfb);
        assert_true(r->ttfb.total_count > 0);
        /* bytes include the warm-up, as the JSON's bytes_in; every request was written whole */
        assert_int_equal(l->bytes_received, r->counts.bytes_in + r->warmup_counts.bytes_in);
        uint64_t sent = r->counts.sent + r->warmup_counts.sent;
        if (r->counts.outcome[OUTCOME_OK] + r->warmup_counts.outcome[OUTCOME_OK] == sent)
            assert_int_equal(l->bytes_sent, sent * plan.targets[t].request_bytes);
    }
    run_dryrun_release(&plan);
    record_release(&res);

    /* Bounds the engine cannot use are refused before anything starts. */
    const int64_t bad[] = {1000, 1000};
    cfg.live_bounds_ns = bad;
    cfg.live_nbounds = 2;
    assert_int_equal(run_execute(&cfg, &res, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "live_bounds_ns"));
    cfg.live_nbounds = 0;
    assert_int_equal(run_execute(&cfg, &res, err, sizeof err), KNEE_EINVAL);
    serve_stop(srv, NULL);
}

/* ---- the glue: cli/run_metrics ------------------------------------------------------------ */

static void test_thresholds_as_bounds(void **state)
{
    (void)state;
    struct plan_target tc[1] = {{.name = "api", .url = "http://127.0.0.1:1/"}};
    struct run_config cfg = {.plan.targets = tc, .plan.ntargets = 1};
    const char *exprs[] = {"p99<250ms",   "api.service.p50<=7ms", "ttfb.p99<3s", "error_rate<1%",
                           "lag.max<2ms", "latency.mean<0.5s",    "count>5",     "p99.9<250ms"};
    struct run_threshold thr[8];
    char err[256];
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(run_threshold_parse(exprs[i], &cfg, &thr[i], err, sizeof err), 0);
    double s[8];
    size_t n = cli_metrics_thresholds(thr, 8, s, 8);
    assert_int_equal(
        n, 5); /* ttfb (exposed, but its thresholds are not bounds), error_rate, count are not latency bounds */
    const double want[] = {0.25, 0.007, 0.002, 0.5, 0.25};
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(s[i] - want[i]) < 1e-15);
    /* merged into the buckets: 7 ms and 2 ms are new bounds, 250 ms and 500 ms already are */
    struct opt rows[1];
    struct cmd_spec spec = {.name = "run", .opts = rows, .nopts = 0};
    struct metrics_flags f = {.listen = "127.0.0.1:0", .buckets = "1ms,250ms,500ms"};
    double b[METRICS_MAX_BOUNDS];
    size_t nb;
    assert_int_equal(cli_metrics_check(&f, &spec, thr, 8, b, &nb), 0);
    assert_int_equal(nb, 5);
    const double merged[] = {0.001, 0.002, 0.007, 0.25, 0.5};
    for (size_t i = 0; i < nb; i++)
        assert_true(fabs(b[i] - merged[i]) < 1e-15);
    /* without --metrics-listen: nothing; the other two flags need it; bad values exit 2 */
    struct metrics_flags none = {0};
    assert_int_equal(cli_metrics_check(&none, &spec, thr, 8, b, &nb), 0);
    assert_int_equal(nb, 0);
    struct metrics_flags linger_only = {.linger_ns = NS_PER_S};
    assert_int_equal(cli_metrics_check(&linger_only, &spec, NULL, 0, b, &nb), 2);
    struct metrics_flags buckets_only = {.buckets = "5ms"};
    assert_int_equal(cli_metrics_check(&buckets_only, &spec, NULL, 0, b, &nb), 2);
    struct metrics_flags bad_listen = {.listen = "nowhere"};
    assert_int_equal(cli_metrics_check(&bad_listen, &spec, NULL, 0, b, &nb), 2);
    struct metrics_flags bad_buckets = {.listen = ":0", .buckets = "5ms,fast"};
    assert_int_equal(cli_metrics_check(&bad_buckets, &spec, NULL, 0, b, &nb), 2);
}

/* GET /metrics (Connection: close) into a malloc'd string. */
static char *scrape(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_int_equal(send(fd, req, sizeof req - 1, MSG_NOSIGNAL), (ssize_t)(sizeof req - 1));
    size_t cap = 1 << 20, have = 0;
    char *buf = malloc(cap);
    for (ssize_t n; (n = recv(fd, buf + have, cap - 1 - have, 0)) > 0;)
        have += (size_t)n;
    buf[have] = '\0';
    close(fd);
    assert_non_null(strstr(buf, "HTTP/1.1 200"));
    return buf;
}

static double sample_of(const char *text, const char *series)
{
    char key[256];
    snprintf(key, sizeof key, "\n%s ", series);
    const char *p = strstr(text, key);
    if (!p)
        fail_msg("no sample %s", series);
    return strtod(p + strlen(key), NULL);
}

static void test_glue_scrape(void **state)
{
    (void)state;
    struct serve_handle *srv = null_server();
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", serve_port(srv));
    struct plan_target tc[1] = {{.name = "api", .url = url}};
    struct run_config cfg = {.plan.targets = tc,
                             .plan.ntargets = 1,
                             .plan.connections = 2,
                             .plan.requests = 300,
                             .timeout_ns = 5 * NS_PER_S,
                             .drain_ns = 5 * NS_PER_S,
                             .keepalive = true,
                             .threads = 1};
    struct run_threshold thr;
    char err[256];
    assert_int_equal(run_threshold_parse("p99<7ms", &cfg, &thr, err, sizeof err), 0);
    struct opt rows[1];
    struct cmd_spec spec = {.name = "run", .opts = rows, .nopts = 0};
    struct metrics_flags f = {.listen = "127.0.0.1:0"};
    struct run_metrics *m;
    assert_int_equal(cli_metrics_start(&f, &spec, &cfg, &thr, 1, &m), 0);
    assert_non_null(m);
    assert_true(cfg.on_live != NULL && cfg.live_nbounds == METRICS_DEFAULT_NBOUNDS + 1); /* 7 ms added */
    int port = cli_metrics_port(m);
    char *t = scrape(port); /* before any run: the families exist, at 0 */
    assert_true(sample_of(t, "knee_requests_total{target=\"api\",outcome=\"ok\"}") == 0);
    free(t);
    uint64_t ok = 0, lat = 0;
    for (int round = 0; round < 2; round++) { /* two runs through one cfg: the counts add up */
        struct run_record res;
        assert_int_equal(run_execute(&cfg, &res, err, sizeof err), 0);
        ok += res.all.counts.outcome[OUTCOME_OK];
        lat += (uint64_t)res.all.latency_all.total_count;
        t = scrape(port);
        assert_true(sample_of(t, "knee_requests_total{target=\"api\",outcome=\"ok\"}") == (double)ok);
        assert_true(sample_of(t, "knee_planned_requests_total{target=\"api\"}") == (double)(300 * (round + 1)));
        assert_true(sample_of(t, "knee_latency_seconds_count{target=\"api\"}") == (double)lat);
        assert_true(sample_of(t, "knee_latency_seconds_bucket{target=\"api\",le=\"0.007\"}") <= (double)lat);
        assert_true(sample_of(t, "knee_in_flight_requests{target=\"api\"}") == 0);
        assert_true(sample_of(t, "knee_run_finished") == 0);
        free(t);
        record_release(&res);
    }
    assert_int_equal(ok, 600);
    cli_metrics_finish(m, false);
    serve_stop(srv, NULL);
    /* A port in use: exit code 1 and nothing started. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 1), 0);
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    char busy[32];
    snprintf(busy, sizeof busy, "127.0.0.1:%d", ntohs(a.sin_port));
    struct metrics_flags taken = {.listen = busy};
    struct run_config cfg2 = cfg;
    cfg2.on_live = NULL;
    assert_int_equal(cli_metrics_start(&taken, &spec, &cfg2, NULL, 0, &m), 1);
    assert_null(m);
    assert_null(cfg2.on_live);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_live),
        cmocka_unit_test(test_thresholds_as_bounds),
        cmocka_unit_test(test_glue_scrape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
