/* Unit tests for src/metrics: number formatting (OpenMetrics' canonical le values, round
 * trips), escaping, the two expositions against golden text, bounded labels and name rules,
 * bucket bounds merged with SLO thresholds, content negotiation, snapshots and collectors,
 * the run and serve families, and the scrape endpoint over real sockets. promtool and a real
 * Prometheus read the expositions in tests/e2e/metrics_prometheus.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/rng.h"
#include "hist/prom.h"
#include "metrics/endpoint.h"
#include "metrics/internal.h"
#include "metrics/knee_run.h"
#include "metrics/knee_serve.h"
#include "metrics/metrics.h"
#include "serve/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char *render(struct metrics_registry *reg, enum metrics_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(metrics_render(reg, fmt, f), 0);
    fclose(f);
    return buf;
}

/* ---- numbers ------------------------------------------------------------------------------ */

static void test_le_canonical_examples(void **state)
{
    (void)state;
    /* The examples of OpenMetrics 1.0 "Considerations: Canonical Numbers". */
    const struct {
        double v;
        const char *s;
    } ex[] = {
        {0.0, "0.0"},         {0.001, "0.001"},
        {0.002, "0.002"},     {0.01, "0.01"},
        {0.1, "0.1"},         {0.9, "0.9"},
        {0.95, "0.95"},       {0.99, "0.99"},
        {0.999, "0.999"},     {1.0, "1.0"},
        {1.7, "1.7"},         {10.0, "10.0"},
        {1e-10, "1e-10"},     {1e-9, "1e-09"},
        {1e-5, "1e-05"},      {1e-4, "0.0001"},
        {1e5, "100000.0"},    {1e6, "1e+06"},
        {1e10, "1e+10"},      {INFINITY, "+Inf"},
        {1e23, "1e+23"},      {1.1e23, "1.1e+23"},
        {0.0025, "0.0025"},   {2.5, "2.5"},
        {123456, "123456.0"}, {1234567, "1.234567e+06"},
    };
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        char buf[32];
        metrics_format_le(ex[i].v, buf, sizeof buf);
        assert_string_equal(buf, ex[i].s);
    }
}

/* Every value 0.000 .. 10.000 in steps of 0.001 renders as its shortest decimal (the spec's
 * SHOULD); the expectation is built from the integer, independently of the formatter. */
static void test_le_canonical_range(void **state)
{
    (void)state;
    for (int k = 0; k <= 10000; k++) {
        char want[32], got[32];
        int n = snprintf(want, sizeof want, "%d.%03d", k / 1000, k % 1000);
        while (want[n - 1] == '0' && want[n - 2] != '.')
            want[--n] = '\0';
        metrics_format_le(k / 1000.0, got, sizeof got);
        assert_string_equal(got, want);
    }
}

static void test_value_format(void **state)
{
    (void)state;
    const struct {
        double v;
        const char *s;
    } ex[] = {
        {0, "0"},
        {-0.0, "0"},
        {1234, "1234"},
        {-7, "-7"},
        {0.5, "0.5"},
        {NAN, "NaN"},
        {INFINITY, "+Inf"},
        {-INFINITY, "-Inf"},
        {1e15, "1e+15"},
        {999999999999999, "999999999999999"},
        {0.1 + 0.2, "0.30000000000000004"},
        {1.0 / 3, "0.3333333333333333"},
        {6.02e23, "6.02e+23"},
        {-2.5e-7, "-2.5e-07"},
        {123.456, "123.456"},
    };
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        char buf[32];
        metrics_format_value(ex[i].v, buf, sizeof buf);
        assert_string_equal(buf, ex[i].s);
    }
    /* Random doubles of every magnitude read back exactly. */
    struct rng r;
    rng_seed(&r, 42);
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = rng_next(&r);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        char buf[32];
        size_t n = metrics_format_value(v, buf, sizeof buf);
        assert_true(n > 0 && n < sizeof buf);
        assert_true(strtod(buf, NULL) == v);
        metrics_format_le(v, buf, sizeof buf);
        assert_true(strtod(buf, NULL) == v);
    }
}

/* ---- escaping and UTF-8 ------------------------------------------------------------------- */

static void test_escape_and_utf8(void **state)
{
    (void)state;
    char out[64];
    const char in[] = "a\\b\"c\nd";
    metrics_escape(in, strlen(in), false, out, sizeof out);
    assert_string_equal(out, "a\\\\b\\\"c\\nd");
    metrics_escape(in, strlen(in), true, out, sizeof out);
    assert_string_equal(out, "a\\\\b\"c\\nd");
    assert_true(metrics_utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14));
    assert_false(metrics_utf8_valid("\xc3", 1));             /* cut off */
    assert_false(metrics_utf8_valid("\xc0\xaf", 2));         /* overlong */
    assert_false(metrics_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
    assert_false(metrics_utf8_valid("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
    assert_false(metrics_utf8_valid("\xff", 1));
}

/* ---- the expositions ---------------------------------------------------------------------- */

/* A registry with every kind: a labelled counter with a value that needs escaping, an
 * unlabelled gauge, a labelled histogram with a unit. */
static struct metrics_registry *sample_registry(void)
{
    char err[256];
    struct metrics_registry *reg = metrics_new();
    static const char *const lab2[] = {"target", "outcome"};
    static const char *const lab1[] = {"target"};
    static const double bounds[] = {0.005, 0.1, 1};
    struct metrics_family_spec c = {.name = "knee_requests",
                                    .help = "Requests by \"outcome\"\nsecond line \\ backslash.",
                                    .type = METRICS_COUNTER,
                                    .labels = lab2,
                                    .nlabels = 2};
    struct metrics_family_spec g = {.name = "knee_in_flight_requests", .help = "In flight.", .type = METRICS_GAUGE};
    struct metrics_family_spec h = {.name = "knee_latency_seconds",
                                    .help = "Latency.",
                                    .unit = "seconds",
                                    .type = METRICS_HISTOGRAM,
                                    .labels = lab1,
                                    .nlabels = 1,
                                    .bounds = bounds,
                                    .nbounds = 3};
    int fc = metrics_family_add(reg, &c, err, sizeof err);
    int fg = metrics_family_add(reg, &g, err, sizeof err);
    int fh = metrics_family_add(reg, &h, err, sizeof err);
    assert_true(fc == 0 && fg == 1 && fh == 2);
    int s0 = metrics_series_add(reg, fc, (const char *[]){"api", "ok"}, err, sizeof err);
    int s1 = metrics_series_add(reg, fc, (const char *[]){"a\"b\\c\nd", "timeout"}, err, sizeof err);
    int s2 = metrics_series_add(reg, fg, NULL, err, sizeof err);
    int s3 = metrics_series_add(reg, fh, (const char *[]){"api"}, err, sizeof err);
    assert_true(s0 == 0 && s1 == 1 && s2 == 2 && s3 == 3);
    struct metrics_snapshot *snap = metrics_snapshot_new(reg);
    assert_int_equal(metrics_snapshot_set(snap, s0, 1234), 0);
    assert_int_equal(metrics_snapshot_set(snap, s1, 0), 0);
    assert_int_equal(metrics_snapshot_set(snap, s2, 3), 0);
    const uint64_t counts[] = {2, 5, 1, 1};
    assert_int_equal(metrics_snapshot_set_hist(snap, s3, counts, 4, 3.25), 0);
    assert_int_equal(metrics_publish(reg, snap), 0);
    metrics_snapshot_free(snap);
    return reg;
}

static void test_golden_text(void **state)
{
    (void)state;
    struct metrics_registry *reg = sample_registry();
    char *text = render(reg, METRICS_FORMAT_TEXT);
    assert_string_equal(text, "# HELP knee_requests_total Requests by \"outcome\"\\nsecond line \\\\ backslash.\n"
                              "# TYPE knee_requests_total counter\n"
                              "knee_requests_total{target=\"api\",outcome=\"ok\"} 1234\n"
                              "knee_requests_total{target=\"a\\\"b\\\\c\\nd\",outcome=\"timeout\"} 0\n"
                              "# HELP knee_in_flight_requests In flight.\n"
                              "# TYPE knee_in_flight_requests gauge\n"
                              "knee_in_flight_requests 3\n"
                              "# HELP knee_latency_seconds Latency.\n"
                              "# TYPE knee_latency_seconds histogram\n"
                              "knee_latency_seconds_bucket{target=\"api\",le=\"0.005\"} 2\n"
                              "knee_latency_seconds_bucket{target=\"api\",le=\"0.1\"} 7\n"
                              "knee_latency_seconds_bucket{target=\"api\",le=\"1.0\"} 8\n"
                              "knee_latency_seconds_bucket{target=\"api\",le=\"+Inf\"} 9\n"
                              "knee_latency_seconds_sum{target=\"api\"} 3.25\n"
                              "knee_latency_seconds_count{target=\"api\"} 9\n");
    free(text);
    metrics_free(reg);
}

static void test_golden_openmetrics(void **state)
{
    (void)state;
    struct metrics_registry *reg = sample_registry();
    char *text = render(reg, METRICS_FORMAT_OPENMETRICS);
    assert_string_equal(text, "# TYPE knee_requests counter\n"
                              "# HELP knee_requests Requests by \\\"outcome\\\"\\nsecond line \\\\ backslash.\n"
                              "knee_requests_total{target=\"api\",outcome=\"ok\"} 1234\n"
                              "knee_requests_total{target=\"a\\\"b\\\\c\\nd\",outcome=\"timeout\"} 0\n"
                              "# TYPE knee_in_flight_requests gauge\n"
                              "# HELP knee_in_flight_requests In flight.\n"
                              "knee_in_flight_requests 3\n"
                              "# TYPE knee_latency_seconds histogram\n"
                              "# UNIT knee_latency_seconds seconds\n"
                              "# HELP knee_latency_seconds Latency.\n"
                              "knee_latency_seconds_bucket{target=\"api\",le=\"0.005\"} 2\n"
                              "knee_latency_seconds_bucket{target=\"api\",le=\"0.1\"} 7\n"
                              "knee_latency_seconds_bucket{target=\"api\",le=\"1.0\"} 8\n"
                              "knee_latency_seconds_bucket{target=\"api\",le=\"+Inf\"} 9\n"
                              "knee_latency_seconds_sum{target=\"api\"} 3.25\n"
                              "knee_latency_seconds_count{target=\"api\"} 9\n"
                              "# EOF\n");
    free(text);
    metrics_free(reg);
}

static void test_empty_registry(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_new();
    char err[128];
    struct metrics_family_spec g = {.name = "x", .help = "x.", .type = METRICS_GAUGE};
    assert_int_equal(metrics_family_add(reg, &g, err, sizeof err), 0);
    char *t = render(reg, METRICS_FORMAT_TEXT);
    assert_string_equal(t, ""); /* a family without series is not exposed */
    free(t);
    t = render(reg, METRICS_FORMAT_OPENMETRICS);
    assert_string_equal(t, "# EOF\n");
    free(t);
    metrics_free(reg);
}

/* ---- rules: names, units, bounded labels --------------------------------------------------- */

static void test_family_rules(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_new();
    char err[256];
    static const char *const le[] = {"le"};
    static const char *const dunder[] = {"__x"};
    static const char *const twice[] = {"a", "a"};
    static const double down[] = {1, 0.5};
    struct {
        struct metrics_family_spec spec;
        const char *msg;
    } bad[] = {
        {{.name = "knee_requests_total", .help = "h", .type = METRICS_COUNTER}, "must not end in _total"},
        {{.name = "x_bucket", .help = "h", .type = METRICS_GAUGE}, "must not end in _bucket"},
        {{.name = "9x", .help = "h", .type = METRICS_GAUGE}, "is not [a-zA-Z_]"},
        {{.name = "x-y", .help = "h", .type = METRICS_GAUGE}, "is not [a-zA-Z_]"},
        {{.name = "x", .help = "", .type = METRICS_GAUGE}, "help must be"},
        {{.name = "x_ms", .help = "h", .unit = "seconds", .type = METRICS_GAUGE}, "must end in _seconds"},
        {{.name = "x", .help = "h", .type = METRICS_GAUGE, .labels = le, .nlabels = 1}, "label name 'le'"},
        {{.name = "x", .help = "h", .type = METRICS_GAUGE, .labels = dunder, .nlabels = 1}, "label name '__x'"},
        {{.name = "x", .help = "h", .type = METRICS_GAUGE, .labels = twice, .nlabels = 2}, "label 'a' twice"},
        {{.name = "x", .help = "h", .type = METRICS_HISTOGRAM}, "needs 1.."},
        {{.name = "x", .help = "h", .type = METRICS_HISTOGRAM, .bounds = down, .nbounds = 2}, "strictly increasing"},
        {{.name = "x", .help = "h", .type = METRICS_GAUGE, .max_series = METRICS_SERIES_MAX + 1}, "max_series"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        assert_int_equal(metrics_family_add(reg, &bad[i].spec, err, sizeof err), KNEE_EINVAL);
        if (!strstr(err, bad[i].msg))
            fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i].msg);
    }
    struct metrics_family_spec ok = {.name = "x", .help = "h", .type = METRICS_GAUGE};
    assert_int_equal(metrics_family_add(reg, &ok, err, sizeof err), 0);
    assert_int_equal(metrics_family_add(reg, &ok, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "declared twice"));
    for (int i = 1; i < METRICS_MAX_FAMILIES; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        struct metrics_family_spec f = {.name = name, .help = "h", .type = METRICS_GAUGE};
        assert_int_equal(metrics_family_add(reg, &f, err, sizeof err), i);
    }
    struct metrics_family_spec more = {.name = "one_more", .help = "h", .type = METRICS_GAUGE};
    assert_int_equal(metrics_family_add(reg, &more, err, sizeof err), KNEE_ETOOBIG);
    metrics_free(reg);
}

static void test_bounded_labels(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_new();
    char err[256];
    static const char *const lab[] = {"target"};
    struct metrics_family_spec s = {
        .name = "x", .help = "h", .type = METRICS_COUNTER, .labels = lab, .nlabels = 1, .max_series = 3};
    int f = metrics_family_add(reg, &s, err, sizeof err);
    assert_int_equal(f, 0);
    assert_int_equal(metrics_series_add(reg, f, (const char *[]){"a"}, err, sizeof err), 0);
    assert_int_equal(metrics_series_add(reg, f, (const char *[]){"b"}, err, sizeof err), 1);
    assert_int_equal(metrics_series_add(reg, f, (const char *[]){"a"}, err, sizeof err), 0); /* the same series */
    assert_int_equal(metrics_series_add(reg, f, (const char *[]){"c"}, err, sizeof err), 2);
    assert_int_equal(metrics_series_add(reg, f, (const char *[]){"d"}, err, sizeof err), KNEE_ETOOBIG);
    assert_non_null(strstr(err, "x: more than 3 label sets"));
    assert_non_null(strstr(err, "never from per-request values"));
    char longv[METRICS_LABEL_VALUE_MAX + 2];
    memset(longv, 'v', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    struct metrics_family_spec s2 = {.name = "y", .help = "h", .type = METRICS_GAUGE, .labels = lab, .nlabels = 1};
    int f2 = metrics_family_add(reg, &s2, err, sizeof err);
    assert_int_equal(metrics_series_add(reg, f2, (const char *[]){longv}, err, sizeof err), KNEE_EINVAL);
    longv[METRICS_LABEL_VALUE_MAX] = '\0';
    assert_true(metrics_series_add(reg, f2, (const char *[]){longv}, err, sizeof err) >= 0);
    assert_int_equal(metrics_series_add(reg, f2, (const char *[]){"\xff"}, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(metrics_series_add(reg, f2, NULL, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(metrics_series_add(reg, 99, NULL, err, sizeof err), KNEE_EINVAL);
    /* The registry-wide cap: many families at the per-family maximum. */
    int fam = 0, id = 0;
    for (int i = 0; id >= 0; i++) {
        if (i % METRICS_SERIES_MAX == 0) {
            char name[16];
            snprintf(name, sizeof name, "z%d", i / METRICS_SERIES_MAX);
            struct metrics_family_spec z = {.name = name,
                                            .help = "h",
                                            .type = METRICS_GAUGE,
                                            .labels = lab,
                                            .nlabels = 1,
                                            .max_series = METRICS_SERIES_MAX};
            fam = metrics_family_add(reg, &z, err, sizeof err);
        }
        char v[16];
        snprintf(v, sizeof v, "%d", i);
        id = metrics_series_add(reg, fam, (const char *[]){v}, err, sizeof err);
    }
    assert_int_equal(id, KNEE_ETOOBIG);
    assert_int_equal(metrics_series_count(reg), METRICS_TOTAL_SERIES_MAX);
    metrics_free(reg);
}

/* ---- snapshots, publishing, collectors ---------------------------------------------------- */

static void test_snapshots(void **state)
{
    (void)state;
    char err[256];
    struct metrics_registry *reg = sample_registry();
    struct metrics_snapshot *snap = metrics_snapshot_new(reg);
    assert_int_equal(metrics_snapshot_set(snap, 0, -1), KNEE_EINVAL); /* counters never go negative */
    assert_int_equal(metrics_snapshot_set(snap, 0, NAN), KNEE_EINVAL);
    assert_int_equal(metrics_snapshot_set(snap, 2, NAN), 0); /* a gauge may be NaN */
    assert_int_equal(metrics_snapshot_set(snap, 3, 1), KNEE_EINVAL);
    assert_int_equal(metrics_snapshot_set(snap, 4, 1), KNEE_EINVAL);
    const uint64_t c3[] = {1, 1, 1};
    assert_int_equal(metrics_snapshot_set_hist(snap, 3, c3, 3, 0), KNEE_EINVAL);
    assert_int_equal(metrics_snapshot_set_hist(snap, 0, c3, 3, 0), KNEE_EINVAL);
    /* Only what this snapshot set is published: the counters keep their values. */
    assert_int_equal(metrics_publish(reg, snap), 0);
    char *t = render(reg, METRICS_FORMAT_TEXT);
    assert_non_null(strstr(t, "knee_in_flight_requests NaN\n"));
    assert_non_null(strstr(t, "knee_requests_total{target=\"api\",outcome=\"ok\"} 1234\n"));
    free(t);
    /* A prom_hist in milliseconds, scaled to seconds. */
    struct prom_hist p;
    const double ms[] = {5, 100, 1000};
    assert_int_equal(prom_init(&p, ms, 3), 0);
    prom_observe(&p, 3);
    prom_observe(&p, 50);
    prom_observe(&p, 5000);
    assert_int_equal(metrics_snapshot_set_prom(snap, 3, &p, 1e-3), 0);
    assert_int_equal(metrics_snapshot_set_prom(snap, 3, &p, 1), KNEE_EMISMATCH);
    assert_int_equal(metrics_publish(reg, snap), 0);
    t = render(reg, METRICS_FORMAT_TEXT);
    assert_non_null(strstr(t, "knee_latency_seconds_bucket{target=\"api\",le=\"0.1\"} 2\n"));
    assert_non_null(strstr(t, "knee_latency_seconds_bucket{target=\"api\",le=\"+Inf\"} 3\n"));
    assert_non_null(strstr(t, "knee_latency_seconds_sum{target=\"api\"} 5.053\n"));
    free(t);
    /* A series declared after the snapshot is not in it; another registry's snapshot is refused. */
    int late = metrics_series_add(reg, 0, (const char *[]){"late", "ok"}, err, sizeof err);
    assert_int_equal(metrics_snapshot_set(snap, late, 1), KNEE_EINVAL);
    struct metrics_registry *other = metrics_new();
    assert_int_equal(metrics_publish(other, snap), KNEE_EMISMATCH);
    metrics_free(other);
    t = render(reg, METRICS_FORMAT_TEXT);
    assert_non_null(strstr(t, "knee_requests_total{target=\"late\",outcome=\"ok\"} 0\n"));
    free(t);
    metrics_snapshot_free(snap);
    metrics_free(reg);
}

struct collect_ctx {
    int calls;
};

static void collect(void *ctx, struct metrics_snapshot *snap)
{
    struct collect_ctx *c = ctx;
    c->calls++;
    metrics_snapshot_set(snap, 2, 100 + c->calls);
}

static void test_collector(void **state)
{
    (void)state;
    struct metrics_registry *reg = sample_registry();
    struct collect_ctx c = {0};
    metrics_set_collector(reg, collect, &c);
    char *t = render(reg, METRICS_FORMAT_TEXT);
    assert_int_equal(c.calls, 1);
    assert_non_null(strstr(t, "knee_in_flight_requests 101\n"));
    assert_non_null(strstr(t, "outcome=\"ok\"} 1234\n")); /* what it did not set stays */
    free(t);
    metrics_set_collector(reg, NULL, NULL);
    t = render(reg, METRICS_FORMAT_TEXT);
    assert_int_equal(c.calls, 1);
    assert_non_null(strstr(t, "knee_in_flight_requests 101\n")); /* the last collected value */
    free(t);
    metrics_free(reg);
}

/* ---- bucket bounds ------------------------------------------------------------------------- */

static void test_bounds_parse_and_merge(void **state)
{
    (void)state;
    double b[METRICS_MAX_BOUNDS];
    size_t n;
    char err[160];
    assert_int_equal(metrics_bounds_parse(" 5ms, 10ms,1s ,250ms", b, METRICS_MAX_BOUNDS, &n, err, sizeof err), 0);
    assert_int_equal(n, 4);
    assert_true(b[0] == 0.005 && b[1] == 0.01 && b[2] == 0.25 && b[3] == 1); /* sorted, exact */
    assert_int_equal(metrics_bounds_parse("2.5ms,0.5,2.5ms", b, METRICS_MAX_BOUNDS, &n, err, sizeof err), 0);
    assert_true(n == 2 && b[0] == 0.0025 && b[1] == 0.5); /* a bare number is seconds; duplicates go */
    assert_int_equal(metrics_bounds_parse("5ms,,1s", b, METRICS_MAX_BOUNDS, &n, err, sizeof err), KNEE_EFORMAT);
    assert_int_equal(metrics_bounds_parse("5ms,fast", b, METRICS_MAX_BOUNDS, &n, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "'fast' is not a duration"));
    assert_int_equal(metrics_bounds_parse("0ms", b, METRICS_MAX_BOUNDS, &n, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(metrics_bounds_parse("", b, METRICS_MAX_BOUNDS, &n, err, sizeof err), KNEE_EFORMAT);
    assert_int_equal(metrics_bounds_parse("1ms,2ms,3ms", b, 2, &n, err, sizeof err), KNEE_ETOOBIG);

    /* SLO thresholds become bounds: 100 ms is there already, 200 ms and 1.5 s are added. */
    const double thr[] = {0.2, 0.1, 1.5, 0.1 * (1 + 1e-14)};
    assert_int_equal(metrics_bounds_merge(metrics_default_bounds_s, METRICS_DEFAULT_NBOUNDS, thr, 4, b,
                                          METRICS_MAX_BOUNDS, &n, err, sizeof err),
                     0);
    assert_int_equal(n, METRICS_DEFAULT_NBOUNDS + 2);
    const double want[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 1.5, 2.5, 5, 10};
    for (size_t i = 0; i < n; i++)
        assert_true(b[i] == want[i]);
    assert_int_equal(metrics_bounds_merge(want, 15, thr, 4, b, 15, &n, err, sizeof err), 0);
    assert_int_equal(metrics_bounds_merge(want, 15, (double[]){0.3}, 1, b, 15, &n, err, sizeof err), KNEE_ETOOBIG);
    assert_int_equal(metrics_bounds_merge(want, 15, (double[]){-1}, 1, b, 32, &n, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(metrics_bounds_merge(want, 15, (double[]){INFINITY}, 1, b, 32, &n, err, sizeof err), KNEE_EINVAL);
}

/* ---- negotiation -------------------------------------------------------------------------- */

static enum metrics_format nego(const char *s)
{
    return metrics_negotiate(s, s ? strlen(s) : 0);
}

static void test_negotiation(void **state)
{
    (void)state;
    /* What Prometheus 2.x sends. */
    assert_int_equal(nego("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
                          "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
                     METRICS_FORMAT_OPENMETRICS);
    assert_int_equal(nego(NULL), METRICS_FORMAT_TEXT);
    assert_int_equal(nego(""), METRICS_FORMAT_TEXT);
    assert_int_equal(nego("*/*"), METRICS_FORMAT_TEXT);
    assert_int_equal(nego("text/plain;version=0.0.4"), METRICS_FORMAT_TEXT);
    assert_int_equal(nego("application/json"), METRICS_FORMAT_TEXT);
    assert_int_equal(nego("Application/OpenMetrics-Text; Version=1.0.0"), METRICS_FORMAT_OPENMETRICS);
    assert_int_equal(nego("application/openmetrics-text"), METRICS_FORMAT_OPENMETRICS);
    assert_int_equal(nego("application/openmetrics-text; version=0.0.1"), METRICS_FORMAT_TEXT);
    assert_int_equal(nego("application/openmetrics-text; version=2.0.0"), METRICS_FORMAT_TEXT);
    assert_int_equal(nego("application/openmetrics-text;q=0.5, text/plain;q=0.9"), METRICS_FORMAT_TEXT);
    assert_int_equal(nego("text/plain;q=0.5, application/openmetrics-text;q=0.9"), METRICS_FORMAT_OPENMETRICS);
    assert_int_equal(nego("application/openmetrics-text;q=0"), METRICS_FORMAT_TEXT);
    assert_int_equal(nego("application/openmetrics-text;q=abc"), METRICS_FORMAT_TEXT);
    assert_int_equal(nego("*/*, application/openmetrics-text"), METRICS_FORMAT_OPENMETRICS);
    assert_int_equal(nego("text/*;q=1, application/openmetrics-text;q=0.99"), METRICS_FORMAT_TEXT);
    /* A comma inside a quoted parameter does not split the element. */
    assert_int_equal(nego("text/plain;foo=\"a,application/openmetrics-text\";q=0.1, "
                          "application/openmetrics-text;q=0.2"),
                     METRICS_FORMAT_OPENMETRICS);
    assert_int_equal(nego("text/plain;foo=\"a, application/openmetrics-text;q=0.2"), METRICS_FORMAT_TEXT);
    assert_int_equal(nego(",,,;;;===\"\"\\"), METRICS_FORMAT_TEXT);
    /* Only len bytes count. */
    const char *s = "text/plain, application/openmetrics-text";
    assert_int_equal(metrics_negotiate(s, 10), METRICS_FORMAT_TEXT);
}

/* ---- the run and serve families ------------------------------------------------------------ */

static void test_run_families(void **state)
{
    (void)state;
    char err[256];
    struct metrics_registry *reg = metrics_new();
    struct metrics_run *mr;
    const char *targets[] = {"read", "write"};
    const double bounds[] = {0.01, 0.1};
    assert_int_equal(metrics_run_new(reg, targets, 2, bounds, 2, &mr, err, sizeof err), 0);
    struct metrics_run_sample s;
    metrics_run_sample_init(mr, &s);
    s.outcome[0][OUTCOME_OK] = 90;
    s.outcome[0][OUTCOME_TIMEOUT] = 10;
    s.outcome[1][OUTCOME_REJECTED] = 7;
    s.planned[0] = 100;
    s.sent[0] = 100;
    s.bytes_received[1] = 4096;
    prom_observe(&s.latency[0], 0.005);
    prom_observe(&s.latency[0], 0.05);
    prom_observe(&s.latency[0], 2);
    s.in_flight[0] = 3;
    s.queued[1] = 2;
    s.finished = true;
    s.generator_limited = true;
    assert_int_equal(metrics_run_publish(mr, &s), 0);
    char *t = render(reg, METRICS_FORMAT_TEXT);
    const char *want[] = {
        "knee_requests_total{target=\"read\",outcome=\"ok\"} 90\n",
        "knee_requests_total{target=\"read\",outcome=\"timeout\"} 10\n",
        "knee_requests_total{target=\"write\",outcome=\"rejected\"} 7\n",
        "knee_requests_total{target=\"write\",outcome=\"cancelled\"} 0\n",
        "knee_planned_requests_total{target=\"read\"} 100\n",
        "knee_sent_requests_total{target=\"read\"} 100\n",
        "knee_dropped_requests_total{target=\"write\"} 0\n",
        "knee_connections_opened_total{target=\"read\"} 0\n",
        "knee_received_bytes_total{target=\"write\"} 4096\n",
        "# TYPE knee_latency_seconds histogram\n",
        "knee_latency_seconds_bucket{target=\"read\",le=\"0.01\"} 1\n",
        "knee_latency_seconds_bucket{target=\"read\",le=\"0.1\"} 2\n",
        "knee_latency_seconds_bucket{target=\"read\",le=\"+Inf\"} 3\n",
        "knee_latency_seconds_sum{target=\"read\"} 2.055\n",
        "knee_latency_seconds_count{target=\"read\"} 3\n",
        "knee_service_seconds_count{target=\"write\"} 0\n",
        "knee_lag_seconds_bucket{target=\"write\",le=\"+Inf\"} 0\n",
        "knee_in_flight_requests{target=\"read\"} 3\n",
        "knee_in_flight_requests{target=\"write\"} 0\n",
        "knee_queued_requests{target=\"write\"} 2\n",
        "knee_warmup 0\n",
        "knee_run_finished 1\n",
        "knee_generator_limited 1\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(t, want[i]))
            fail_msg("missing: %s", want[i]);
    free(t);
    t = render(reg, METRICS_FORMAT_OPENMETRICS);
    assert_non_null(strstr(t, "# TYPE knee_received_bytes counter\n# UNIT knee_received_bytes bytes\n"));
    free(t);
    /* knee_responses_total{target,code}: a series once a target saw the code, "other" beyond 599 */
    assert_null(strstr(t = render(reg, METRICS_FORMAT_TEXT), "knee_responses_total{"));
    free(t);
    record_status_count(&s.status[0], 200);
    record_status_count(&s.status[0], 200);
    record_status_count(&s.status[1], 404);
    record_status_count(&s.status[1], 777);
    assert_int_equal(metrics_run_publish(mr, &s), 0);
    record_status_count(&s.status[1], 404); /* a later publication: the same series, the new value */
    assert_int_equal(metrics_run_publish(mr, &s), 0);
    t = render(reg, METRICS_FORMAT_TEXT);
    const char *codes[] = {
        "knee_responses_total{target=\"read\",code=\"200\"} 2\n",
        "knee_responses_total{target=\"write\",code=\"404\"} 2\n",
        "knee_responses_total{target=\"write\",code=\"other\"} 1\n",
        "knee_requests_total{target=\"read\",outcome=\"ok\"} 90\n", /* the rest still published */
    };
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (!strstr(t, codes[i]))
            fail_msg("missing: %s", codes[i]);
    assert_null(strstr(t, "code=\"404\"} 1"));
    assert_null(strstr(t, "target=\"read\",code=\"404\""));
    free(t);
    /* knee_protocol_connections{target,protocol}: a series once a target has a connection of the
     * protocol (none before), the counts as given */
    assert_null(strstr(t = render(reg, METRICS_FORMAT_TEXT), "knee_protocol_connections_total{"));
    free(t);
    s.conns_proto[0][METRICS_PROTO_H3] = 2;
    s.conns_proto[1][METRICS_PROTO_H1] = 1;
    assert_int_equal(metrics_run_publish(mr, &s), 0);
    s.conns_proto[1][METRICS_PROTO_H1] = 3;
    s.conns_proto[1][METRICS_PROTO_H2] = 1;
    assert_int_equal(metrics_run_publish(mr, &s), 0);
    t = render(reg, METRICS_FORMAT_TEXT);
    const char *protos[] = {
        "# TYPE knee_protocol_connections_total counter\n",
        "knee_protocol_connections_total{target=\"read\",protocol=\"h3\"} 2\n",
        "knee_protocol_connections_total{target=\"write\",protocol=\"h1\"} 3\n",
        "knee_protocol_connections_total{target=\"write\",protocol=\"h2\"} 1\n",
        "knee_connections_opened_total{target=\"read\"} ", /* the existing family stays */
    };
    for (size_t i = 0; i < sizeof protos / sizeof *protos; i++)
        if (!strstr(t, protos[i]))
            fail_msg("missing: %s", protos[i]);
    assert_null(strstr(t, "target=\"read\",protocol=\"h1\""));
    assert_null(strstr(t, "target=\"write\",protocol=\"h3\""));
    free(t);
    assert_string_equal(metrics_protocol_name(METRICS_PROTO_H1), "h1");
    assert_null(metrics_protocol_name(METRICS_PROTOCOLS));
    struct metrics_run_sample other = s;
    other.ntargets = 1;
    assert_int_equal(metrics_run_publish(mr, &other), KNEE_EMISMATCH);
    metrics_run_sample_release(&s);
    metrics_run_free(mr);
    /* A target name that is not a bounded, valid label value is refused at set-up. */
    struct metrics_registry *reg2 = metrics_new();
    const char *bad[] = {"\xff"};
    assert_int_equal(metrics_run_new(reg2, bad, 1, bounds, 2, &mr, err, sizeof err), KNEE_EINVAL);
    metrics_free(reg2);
    metrics_free(reg);
}

/* ---- the endpoint, over real sockets -------------------------------------------------------- */

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    assert_int_equal(send(fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

struct http_resp {
    int status;
    char head[1024];
    char *body;
    size_t body_len;
};

/* Read one response (Content-Length framed) from fd with a carry-over buffer. Returns false at
 * EOF before a response. */
static bool read_resp(int fd, char *buf, size_t cap, size_t *have, struct http_resp *r, bool head_request)
{
    for (;;) {
        char *end = memmem(buf, *have, "\r\n\r\n", 4);
        if (end) {
            size_t hlen = (size_t)(end - buf) + 4;
            char *cl = memmem(buf, hlen, "Content-Length: ", 16);
            assert_non_null(cl);
            size_t blen = head_request ? 0 : strtoul(cl + 16, NULL, 10);
            if (*have >= hlen + blen) {
                memset(r, 0, sizeof *r);
                r->status = atoi(buf + 9);
                snprintf(r->head, sizeof r->head, "%.*s", (int)hlen, buf);
                r->body = malloc(blen + 1);
                memcpy(r->body, buf + hlen, blen);
                r->body[blen] = '\0';
                r->body_len = blen;
                memmove(buf, buf + hlen + blen, *have - hlen - blen);
                *have -= hlen + blen;
                return true;
            }
        }
        assert_true(*have < cap);
        ssize_t n = recv(fd, buf + *have, cap - *have, 0);
        if (n <= 0)
            return false;
        *have += (size_t)n;
    }
}

static void test_endpoint(void **state)
{
    (void)state;
    char err[256];
    struct metrics_registry *reg = sample_registry();
    struct metrics_endpoint *ep;
    assert_int_equal(metrics_endpoint_check("127.0.0.1", err, sizeof err), KNEE_EINVAL);
    assert_int_equal(metrics_endpoint_start(reg, "nonsense", &ep, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(metrics_endpoint_start(reg, "127.0.0.1:0", &ep, err, sizeof err), 0);
    assert_true(metrics_endpoint_loopback(ep));
    int port = metrics_endpoint_port(ep);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    assert_string_equal(metrics_endpoint_address(ep), addr);

    static char buf[1 << 16];
    size_t have = 0;
    struct http_resp r;
    int fd = connect_to(port);
    /* Three pipelined requests in one write: answered in order on one connection. */
    send_all(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text; version=1.0.0\r\n\r\n"
                 "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"
                 "HEAD /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain;q=0.1\r\nAccept: "
                 "application/openmetrics-text\r\n\r\n");
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.head, "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n"));
    char *om = render(reg, METRICS_FORMAT_OPENMETRICS);
    assert_string_equal(r.body, om);
    free(om);
    free(r.body);
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.head, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
    assert_non_null(strstr(r.body, "knee_requests_total{target=\"api\",outcome=\"ok\"} 1234\n"));
    free(r.body);
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, true)); /* two Accept fields are one list */
    assert_non_null(strstr(r.head, "application/openmetrics-text"));
    free(r.body);
    /* Other paths and methods. */
    send_all(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_true(r.status == 200 && strstr(r.body, "/metrics"));
    free(r.body);
    send_all(fd, "GET /stats HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 404);
    free(r.body);
    send_all(fd, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 405);
    assert_non_null(strstr(r.head, "Allow: GET, HEAD\r\n"));
    free(r.body);
    /* Connection: close is honoured. */
    send_all(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 200);
    free(r.body);
    assert_false(read_resp(fd, buf, sizeof buf, &have, &r, false));
    close(fd);

    /* Caps: headers above 8 KiB → 431 and close; a body above 1 KiB → 413; garbage → 400. */
    fd = connect_to(port);
    have = 0;
    char big[10000];
    int n = snprintf(big, sizeof big, "GET /metrics HTTP/1.1\r\nX: ");
    memset(big + n, 'a', 9000);
    snprintf(big + n + 9000, sizeof big - (size_t)n - 9000, "\r\n\r\n");
    send_all(fd, big);
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 431);
    free(r.body);
    assert_false(read_resp(fd, buf, sizeof buf, &have, &r, false));
    close(fd);
    fd = connect_to(port);
    have = 0;
    n = snprintf(big, sizeof big, "POST /metrics HTTP/1.1\r\nContent-Length: 5000\r\n\r\n");
    memset(big + n, 'b', 2000); /* the cap counts body bytes as they arrive */
    big[n + 2000] = '\0';
    send_all(fd, big);
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 413);
    free(r.body);
    close(fd);
    fd = connect_to(port);
    have = 0;
    send_all(fd, "NOT HTTP AT ALL\r\n\r\n");
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 400);
    free(r.body);
    close(fd);

    /* Connection cap: METRICS_EP_MAX_CONNS connections that have asked nothing yet (each has
     * the first-request timeout, 5 s, to do so) hold every slot: the next one gets 503. */
    int held[METRICS_EP_MAX_CONNS];
    for (int i = 0; i < METRICS_EP_MAX_CONNS; i++)
        held[i] = connect_to(port);
    fd = connect_to(port);
    have = 0;
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 503);
    free(r.body);
    close(fd);
    /* Each then scrapes once and stays idle: a newcomer takes the slot of the one idle the
     * longest (held[0], answered first), which is closed; the others stay. */
    for (int i = 0; i < METRICS_EP_MAX_CONNS; i++) {
        have = 0;
        send_all(held[i], "GET / HTTP/1.1\r\n\r\n");
        assert_true(read_resp(held[i], buf, sizeof buf, &have, &r, false));
        assert_int_equal(r.status, 200);
        free(r.body);
    }
    fd = connect_to(port);
    have = 0;
    send_all(fd, "GET / HTTP/1.1\r\n\r\n");
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 200);
    free(r.body);
    have = 0;
    assert_false(read_resp(held[0], buf, sizeof buf, &have, &r, false)); /* EOF: evicted */
    send_all(held[1], "GET / HTTP/1.1\r\n\r\n");
    assert_true(read_resp(held[1], buf, sizeof buf, &have, &r, false));
    assert_int_equal(r.status, 200);
    free(r.body);
    close(fd);
    for (int i = 0; i < METRICS_EP_MAX_CONNS; i++)
        close(held[i]);

    struct metrics_endpoint_stats st;
    metrics_endpoint_stats(ep, &st);
    assert_int_equal(st.scrapes, 4);
    assert_int_equal(st.openmetrics, 2);
    assert_int_equal(st.refused, 1);
    assert_int_equal(st.evicted, 1);
    assert_int_equal(st.errors, 5); /* 404, 405, 431, 413, 400 */
    metrics_endpoint_stop(ep);
    metrics_free(reg);
}

/* Send all of n bytes, stopping quietly when the server resets (its answer is what matters). */
static void send_quietly(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        p += k;
        n -= (size_t)k;
    }
}

/* An error answer must reach a client that is still sending: the endpoint shuts down its
 * sending side, reads and discards, and closes after the client's EOF (a lingering close).
 * A plain close with unread input sends a reset, and the client's kernel then drops the
 * answer before the client reads it. Each case: the status, then a clean EOF (not a reset),
 * many times over (the reset is a race the old code lost most of the time). */
static void test_endpoint_error_delivery(void **state)
{
    (void)state;
    char err[256];
    struct metrics_registry *reg = sample_registry();
    struct metrics_endpoint *ep;
    assert_int_equal(metrics_endpoint_start(reg, "127.0.0.1:0", &ep, err, sizeof err), 0);
    int port = metrics_endpoint_port(ep);
    size_t junk_len = 256 * 1024;
    char *junk = malloc(junk_len);
    memset(junk, 'j', junk_len);
    static char buf[1 << 16];
    struct http_resp r;
    const struct {
        const char *head;
        int status;
    } cases[] = {
        {"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 262144\r\n\r\n", 413},
        {"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Long: ", 431}, /* the junk makes the head too long */
        {"NOT HTTP\r\n\r\n", 400},
    };
    for (int round = 0; round < 20; round++) {
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            int fd = connect_to(port);
            send_quietly(fd, cases[c].head, strlen(cases[c].head));
            send_quietly(fd, junk, junk_len);
            size_t have = 0;
            if (!read_resp(fd, buf, sizeof buf, &have, &r, false))
                fail_msg("round %d, case %d: no %d answer (errno %d: %s)", round, cases[c].status, cases[c].status,
                         errno, strerror(errno));
            assert_int_equal(r.status, cases[c].status);
            assert_non_null(strstr(r.head, "Connection: close\r\n"));
            free(r.body);
            shutdown(fd, SHUT_WR); /* the client is done: the endpoint sees EOF and closes */
            char x;
            ssize_t n = recv(fd, &x, 1, 0);
            if (n != 0)
                fail_msg("round %d, case %d: after the answer %zd (errno %d: %s), not EOF", round, cases[c].status, n,
                         errno, strerror(errno));
            close(fd);
        }
    }
    /* A connection over the cap: 503, delivered the same way. Each held connection has begun
     * a second request (10 s to finish it), so none is idle, none is closed for a newcomer. */
    int held[METRICS_EP_MAX_CONNS];
    for (int i = 0; i < METRICS_EP_MAX_CONNS; i++) {
        held[i] = connect_to(port);
        size_t have = 0;
        send_all(held[i], "GET / HTTP/1.1\r\n\r\n");
        assert_true(read_resp(held[i], buf, sizeof buf, &have, &r, false));
        free(r.body);
        send_all(held[i], "GET / HTTP/1.1\r\n");
    }
    for (int round = 0; round < 10; round++) {
        int fd = connect_to(port);
        static const char get[] = "GET /metrics HTTP/1.1\r\n\r\n";
        send_quietly(fd, get, sizeof get - 1);
        send_quietly(fd, junk, 64 * 1024);
        size_t have = 0;
        if (!read_resp(fd, buf, sizeof buf, &have, &r, false))
            fail_msg("round %d: no 503 (errno %d: %s)", round, errno, strerror(errno));
        assert_int_equal(r.status, 503);
        free(r.body);
        close(fd);
    }
    for (int i = 0; i < METRICS_EP_MAX_CONNS; i++)
        close(held[i]);
    /* A client that never sends its EOF is closed by the endpoint after the linger bounds;
     * the endpoint stops at once whatever lingers. */
    static const char bad[] = "NOT HTTP\r\n\r\n";
    int fd = -1;
    for (int tries = 0;; tries++) { /* until the endpoint has seen the held connections close */
        fd = connect_to(port);
        send_quietly(fd, bad, sizeof bad - 1);
        size_t have = 0;
        assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
        free(r.body);
        if (r.status != 503 || tries == 1000)
            break;
        close(fd);
        struct timespec nap = {.tv_nsec = 10000000};
        nanosleep(&nap, NULL);
    }
    assert_int_equal(r.status, 400);
    metrics_endpoint_stop(ep);
    close(fd);
    free(junk);
    metrics_free(reg);
}

static void test_endpoint_non_loopback(void **state)
{
    (void)state;
    char err[256];
    struct metrics_registry *reg = metrics_new();
    struct metrics_endpoint *ep;
    assert_int_equal(metrics_endpoint_start(reg, "0.0.0.0:0", &ep, err, sizeof err), 0);
    assert_false(metrics_endpoint_loopback(ep));
    metrics_endpoint_stop(ep);
    /* The same port twice: the second bind fails with the system's reason. */
    assert_int_equal(metrics_endpoint_start(reg, "127.0.0.1:0", &ep, err, sizeof err), 0);
    struct metrics_endpoint *ep2;
    char spec[64];
    snprintf(spec, sizeof spec, "127.0.0.1:%d", metrics_endpoint_port(ep));
    assert_true(metrics_endpoint_start(reg, spec, &ep2, err, sizeof err) < 0);
    assert_non_null(strstr(err, spec));
    metrics_endpoint_stop(ep);
    metrics_endpoint_stop(NULL);
    metrics_free(reg);
}

static void test_serve_families(void **state)
{
    (void)state;
    char err[256];
    struct serve_config cfg;
    assert_int_equal(serve_preset("null", &cfg), 0);
    struct serve_handle *h;
    assert_int_equal(serve_start(&cfg, &h), 0);
    struct metrics_registry *reg = metrics_new();
    struct metrics_serve *ms;
    assert_int_equal(metrics_serve_new(reg, &h, 1, &ms, err, sizeof err), 0);
    /* Three work requests on one connection. */
    int fd = connect_to(serve_port(h));
    static char buf[8192];
    size_t have = 0;
    struct http_resp r;
    for (int i = 0; i < 3; i++) {
        send_all(fd, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
        free(r.body);
    }
    char *t = render(reg, METRICS_FORMAT_TEXT);
    char want[256];
    snprintf(want, sizeof want, "knee_serve_ok_requests_total{server=\"%s\",preset=\"null\"} 3\n", serve_address(h));
    if (!strstr(t, want))
        fail_msg("missing %s in\n%s", want, t);
    snprintf(want, sizeof want, "knee_serve_open_connections{server=\"%s\",preset=\"null\"} 1\n", serve_address(h));
    assert_non_null(strstr(t, want));
    free(t);
    close(fd);
    serve_shutdown(h);
    metrics_serve_detach(ms);
    struct serve_counters fin;
    char addr[SERVE_ADDR_MAX];
    snprintf(addr, sizeof addr, "%s", serve_address(h));
    serve_stop(h, &fin);
    fin.ok = 42; /* whatever the caller publishes is what scrapes see */
    metrics_serve_publish(ms, &fin);
    t = render(reg, METRICS_FORMAT_OPENMETRICS);
    snprintf(want, sizeof want, "knee_serve_ok_requests_total{server=\"%s\",preset=\"null\"} 42\n", addr);
    assert_non_null(strstr(t, want));
    free(t);
    metrics_serve_free(ms);
    metrics_free(reg);

    /* Servers that record server time: knee_serve_time_seconds by outcome, polled; the null
     * target above records none (no such family). */
    struct serve_handle *q[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(serve_preset("queue", &cfg), 0);
        cfg.time_bounds_ns[0] = 1000000;
        cfg.time_bounds_ns[1] = 10000000000ULL;
        cfg.ntime_bounds = 2;
        assert_int_equal(serve_start(&cfg, &q[i]), 0);
    }
    reg = metrics_new();
    assert_int_equal(metrics_serve_new(reg, q, 2, &ms, err, sizeof err), 0);
    fd = connect_to(serve_port(q[1]));
    have = 0;
    send_all(fd, "GET /work?ms=2 HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_true(read_resp(fd, buf, sizeof buf, &have, &r, false));
    free(r.body);
    close(fd);
    t = render(reg, METRICS_FORMAT_TEXT);
    const char *lines[] = {"outcome=\"ok\",le=\"0.001\"} 0\n", "outcome=\"ok\",le=\"10.0\"} 1\n", "outcome=\"ok\"} 1\n",
                           "outcome=\"rejected\"} 0\n"};
    const char *fams[] = {"_bucket", "_bucket", "_count", "_count"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(want, sizeof want, "knee_serve_time_seconds%s{server=\"%s\",preset=\"queue\",%s", fams[i],
                 serve_address(q[1]), lines[i]);
        if (!strstr(t, want))
            fail_msg("missing %s in\n%s", want, t);
    }
    assert_non_null(strstr(t, "# TYPE knee_serve_time_seconds histogram\n"));
    free(t);
    metrics_serve_detach(ms);
    metrics_serve_free(ms);
    metrics_free(reg);
    serve_stop(q[0], NULL);
    /* Servers with different bounds cannot share the family. */
    assert_int_equal(serve_preset("queue", &cfg), 0);
    cfg.time_bounds_ns[0] = 2000000;
    cfg.ntime_bounds = 1;
    assert_int_equal(serve_start(&cfg, &q[0]), 0);
    reg = metrics_new();
    assert_int_equal(metrics_serve_new(reg, q, 2, &ms, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "bounds differ"));
    metrics_free(reg);
    serve_stop(q[0], NULL);
    serve_stop(q[1], NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_le_canonical_examples),
        cmocka_unit_test(test_le_canonical_range),
        cmocka_unit_test(test_value_format),
        cmocka_unit_test(test_escape_and_utf8),
        cmocka_unit_test(test_golden_text),
        cmocka_unit_test(test_golden_openmetrics),
        cmocka_unit_test(test_empty_registry),
        cmocka_unit_test(test_family_rules),
        cmocka_unit_test(test_bounded_labels),
        cmocka_unit_test(test_snapshots),
        cmocka_unit_test(test_collector),
        cmocka_unit_test(test_bounds_parse_and_merge),
        cmocka_unit_test(test_negotiation),
        cmocka_unit_test(test_run_families),
        cmocka_unit_test(test_endpoint),
        cmocka_unit_test(test_endpoint_error_delivery),
        cmocka_unit_test(test_endpoint_non_loopback),
        cmocka_unit_test(test_serve_families),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
