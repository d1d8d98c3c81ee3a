/* Unit tests for the registry in protobuf (metrics/metrics.h): the remote-write WriteRequest
 * and the delimited MetricFamily exposition, decoded by the test-side reader (unit/pb_decode.h)
 * and compared field by field with the values published: names (counters NAME_total), sorted
 * labels with the extra ones, timestamps, classic buckets cumulative, native histograms'
 * spans and deltas back into the same buckets; metrics_set_classic; the extra labels' errors;
 * the Accept header of a Prometheus 2.42 that asks for native histograms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/pb.h"
#include "hist/native.h"
#include "metrics/metrics.h"
#include "unit/pb_decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS_MS 1700000000123LL

/* A registry with one family of each kind, published once. */
struct fixture {
    struct metrics_registry *reg;
    int req_ok, req_err, up, classic, native;
    struct native_hist nh;
};

static const double bounds[] = {0.01, 0.1, 1};

static void fixture_init(struct fixture *fx)
{
    char err[256];
    fx->reg = metrics_new();
    static const char *const two[] = {"target", "outcome"};
    static const char *const one[] = {"target"};
    struct metrics_family_spec c = {
        .name = "knee_requests", .help = "Requests.", .type = METRICS_COUNTER, .labels = two, .nlabels = 2};
    struct metrics_family_spec g = {.name = "knee_warmup", .help = "Warm-up.", .type = METRICS_GAUGE};
    struct metrics_family_spec h = {.name = "knee_serve_seconds",
                                    .help = "Classic.",
                                    .unit = "seconds",
                                    .type = METRICS_HISTOGRAM,
                                    .labels = one,
                                    .nlabels = 1,
                                    .bounds = bounds,
                                    .nbounds = 3};
    struct metrics_family_spec n = h;
    n.name = "knee_latency_seconds";
    n.help = "Native.";
    n.native = true;
    int fc = metrics_family_add(fx->reg, &c, err, sizeof err);
    int fg = metrics_family_add(fx->reg, &g, err, sizeof err);
    int fh = metrics_family_add(fx->reg, &h, err, sizeof err);
    int fn = metrics_family_add(fx->reg, &n, err, sizeof err);
    assert_true(fc >= 0 && fg >= 0 && fh >= 0 && fn >= 0);
    fx->req_ok = metrics_series_add(fx->reg, fc, (const char *[]){"api", "ok"}, err, sizeof err);
    fx->req_err = metrics_series_add(fx->reg, fc, (const char *[]){"api", "timeout"}, err, sizeof err);
    fx->up = metrics_series_add(fx->reg, fg, NULL, err, sizeof err);
    fx->classic = metrics_series_add(fx->reg, fh, (const char *[]){"api"}, err, sizeof err);
    fx->native = metrics_series_add(fx->reg, fn, (const char *[]){"api"}, err, sizeof err);
    struct metrics_snapshot *snap = metrics_snapshot_new(fx->reg);
    assert_int_equal(metrics_snapshot_set(snap, fx->req_ok, 41), 0);
    assert_int_equal(metrics_snapshot_set(snap, fx->req_err, 2), 0);
    assert_int_equal(metrics_snapshot_set(snap, fx->up, 1), 0);
    const uint64_t counts[] = {1, 2, 3, 4};
    assert_int_equal(metrics_snapshot_set_hist(snap, fx->classic, counts, 4, 7.5), 0);
    assert_int_equal(metrics_snapshot_set_hist(snap, fx->native, counts, 4, 7.5), 0);
    native_init(&fx->nh, NATIVE_SCHEMA);
    native_observe(&fx->nh, 0.005, 1);
    native_observe(&fx->nh, 0.05, 2);
    native_observe(&fx->nh, 0.0501, 1);
    native_observe(&fx->nh, 0.5, 3);
    native_observe(&fx->nh, 2.0, 3);
    assert_int_equal(metrics_snapshot_set_native(snap, fx->native, &fx->nh), 0);
    /* Native values only for native families, of knee's schema. */
    assert_int_equal(metrics_snapshot_set_native(snap, fx->classic, &fx->nh), KNEE_EINVAL);
    struct native_hist other;
    native_init(&other, 3);
    assert_int_equal(metrics_snapshot_set_native(snap, fx->native, &other), KNEE_EINVAL);
    assert_int_equal(metrics_publish(fx->reg, snap), 0);
    metrics_snapshot_free(snap);
}

static void fixture_release(struct fixture *fx)
{
    native_release(&fx->nh);
    metrics_free(fx->reg);
}

/* One decoded TimeSeries. */
struct ts {
    char labels[512]; /* "name=value," sorted as they came */
    size_t nsamples;
    double value;
    int64_t ts_ms;
    bool histogram;
    struct native_hist h; /* rebuilt from spans and deltas */
    int64_t h_ts_ms;
};

static void copy_str(char *dst, size_t cap, const struct pbd_field *f)
{
    size_t n = f->len < cap - 1 ? f->len : cap - 1;
    memcpy(dst, f->data, n);
    dst[n] = '\0';
}

/* Read a native histogram's fields (fields: the schema's numbers) into h. */
static void decode_native(const uint8_t *p, size_t n, const struct native_pb_fields *fl, struct native_hist *h,
                          int64_t *ts_ms)
{
    native_init(h, 0);
    struct pbd d = pbd_of(p, n);
    struct pbd_field f;
    int32_t key = 0;
    int32_t offs[16];
    uint32_t lens[16];
    size_t nspans = 0;
    int64_t deltas[256];
    long nd = 0;
    while (pbd_next(&d, &f) == 1) {
        if (f.field == fl->count)
            h->count = f.u;
        else if (f.field == fl->sum)
            h->sum = pbd_double(&f);
        else if (f.field == fl->schema)
            h->schema = (int32_t)pbd_zigzag(f.u);
        else if (f.field == fl->zero_threshold)
            h->zero_threshold = pbd_double(&f);
        else if (f.field == fl->zero_count)
            h->zero_count = f.u;
        else if (f.field == fl->positive_span) {
            struct pbd s = pbd_of(f.data, f.len);
            struct pbd_field g;
            offs[nspans] = 0;
            lens[nspans] = 0;
            while (pbd_next(&s, &g) == 1)
                if (g.field == 1)
                    offs[nspans] = (int32_t)pbd_zigzag(g.u);
                else if (g.field == 2)
                    lens[nspans] = (uint32_t)g.u;
            nspans++;
        } else if (f.field == fl->positive_delta)
            nd = pbd_packed_sint(&f, deltas, 256);
        else if (f.field == 15 && ts_ms)
            *ts_ms = (int64_t)f.u;
    }
    /* Rebuild: keys from the spans, counts from the deltas. */
    long di = 0;
    int64_t cur = 0;
    uint64_t count = h->count;
    double sum = h->sum;
    for (size_t s = 0; s < nspans; s++) {
        key += offs[s];
        for (uint32_t k = 0; k < lens[s]; k++, key++) {
            assert_true(di < nd);
            cur += deltas[di++];
            assert_true(cur >= 0);
            if (cur)
                native_observe(h, native_upper(h->schema, key), (uint64_t)cur);
        }
    }
    assert_int_equal(di, nd);
    h->count = count; /* as sent, not as re-observed */
    h->sum = sum;
}

static size_t decode_write_request(const struct pb_buf *b, struct ts *out, size_t cap)
{
    struct pbd d = pbd_of(b->data, b->len);
    struct pbd_field f;
    size_t n = 0;
    while (pbd_next(&d, &f) == 1) {
        assert_int_equal(f.field, 1);
        assert_true(n < cap);
        struct ts *t = &out[n++];
        memset(t, 0, sizeof *t);
        struct pbd s = pbd_of(f.data, f.len);
        struct pbd_field g;
        while (pbd_next(&s, &g) == 1) {
            if (g.field == 1) {
                struct pbd l = pbd_of(g.data, g.len);
                struct pbd_field lf;
                char name[128] = "", value[160] = "";
                while (pbd_next(&l, &lf) == 1)
                    copy_str(lf.field == 1 ? name : value, lf.field == 1 ? sizeof name : sizeof value, &lf);
                size_t len = strlen(t->labels);
                snprintf(t->labels + len, sizeof t->labels - len, "%s=%s,", name, value);
            } else if (g.field == 2) {
                t->nsamples++;
                struct pbd sm = pbd_of(g.data, g.len);
                struct pbd_field sf;
                while (pbd_next(&sm, &sf) == 1)
                    if (sf.field == 1)
                        t->value = pbd_double(&sf);
                    else if (sf.field == 2)
                        t->ts_ms = (int64_t)sf.u;
            } else if (g.field == 4) {
                t->histogram = true;
                decode_native(g.data, g.len, &native_pb_remote, &t->h, &t->h_ts_ms);
            }
        }
    }
    assert_int_equal(pbd_next(&d, &f), 0);
    return n;
}

static const struct ts *find(const struct ts *t, size_t n, const char *labels)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].labels, labels) == 0)
            return &t[i];
    fail_msg("no series %s", labels);
    return NULL;
}

static void expect_sample(const struct ts *t, size_t n, const char *labels, double v)
{
    const struct ts *s = find(t, n, labels);
    assert_int_equal(s->nsamples, 1);
    assert_false(s->histogram);
    if (s->value != v)
        fail_msg("%s: %g, want %g", labels, s->value, v);
    assert_true(s->ts_ms == TS_MS);
}

static void expect_same_native(const struct native_hist *got, const struct native_hist *want)
{
    assert_int_equal(got->schema, want->schema);
    assert_true(got->zero_threshold == want->zero_threshold);
    assert_int_equal(got->zero_count, want->zero_count);
    assert_int_equal(got->count, want->count);
    assert_true(got->sum == want->sum);
    assert_int_equal(got->first, want->first);
    assert_int_equal(got->n, want->n);
    assert_memory_equal(got->counts, want->counts, want->n * sizeof *want->counts);
}

static void test_remote_write(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx);
    struct pb_buf b;
    pb_buf_init(&b);
    char err[256] = "";
    const char *const extra[] = {"shard=2", "Zone=eu"};
    assert_int_equal(metrics_render_remote_write(fx.reg, extra, 2, TS_MS, &b, err, sizeof err), 0);
    struct ts *t = calloc(64, sizeof *t);
    size_t n = decode_write_request(&b, t, 64);
    /* 2 counters + 1 gauge + classic (4 buckets, sum, count) + native (1 + 6 classic) */
    assert_int_equal(n, 2 + 1 + 6 + 1 + 6);
    /* Labels sorted by name, bytewise: Z < _ < lowercase. */
    expect_sample(t, n, "Zone=eu,__name__=knee_requests_total,outcome=ok,shard=2,target=api,", 41);
    expect_sample(t, n, "Zone=eu,__name__=knee_requests_total,outcome=timeout,shard=2,target=api,", 2);
    expect_sample(t, n, "Zone=eu,__name__=knee_warmup,shard=2,", 1);
    expect_sample(t, n, "Zone=eu,__name__=knee_serve_seconds_bucket,le=0.01,shard=2,target=api,", 1);
    expect_sample(t, n, "Zone=eu,__name__=knee_serve_seconds_bucket,le=0.1,shard=2,target=api,", 3);
    expect_sample(t, n, "Zone=eu,__name__=knee_serve_seconds_bucket,le=1.0,shard=2,target=api,", 6);
    expect_sample(t, n, "Zone=eu,__name__=knee_serve_seconds_bucket,le=+Inf,shard=2,target=api,", 10);
    expect_sample(t, n, "Zone=eu,__name__=knee_serve_seconds_sum,shard=2,target=api,", 7.5);
    expect_sample(t, n, "Zone=eu,__name__=knee_serve_seconds_count,shard=2,target=api,", 10);
    expect_sample(t, n, "Zone=eu,__name__=knee_latency_seconds_bucket,le=+Inf,shard=2,target=api,", 10);
    const struct ts *h = find(t, n, "Zone=eu,__name__=knee_latency_seconds,shard=2,target=api,");
    assert_true(h->histogram);
    assert_int_equal(h->nsamples, 0);
    assert_true(h->h_ts_ms == TS_MS);
    expect_same_native(&h->h, &fx.nh);
    for (size_t i = 0; i < n; i++)
        native_release(&t[i].h);

    /* Native only: no classic series for the native family (the classic family keeps its). */
    metrics_set_classic(fx.reg, false, false);
    pb_buf_reset(&b);
    assert_int_equal(metrics_render_remote_write(fx.reg, NULL, 0, TS_MS, &b, err, sizeof err), 0);
    n = decode_write_request(&b, t, 64);
    assert_int_equal(n, 2 + 1 + 6 + 1);
    find(t, n, "__name__=knee_latency_seconds,target=api,");
    for (size_t i = 0; i < n; i++)
        native_release(&t[i].h);
    free(t);
    pb_buf_release(&b);
    fixture_release(&fx);
}

static void test_remote_write_bad_labels(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx);
    struct pb_buf b;
    pb_buf_init(&b);
    char err[256];
    const char *bad[][2] = {{"le=1", NULL}, {"__name__=x", NULL}, {"noequals", NULL},  {"target=x", NULL},
                            {"9x=1", NULL}, {"a=1", "a=2"},       {"a=\xff\xfe", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = bad[i][1] ? 2 : 1;
        err[0] = '\0';
        assert_int_equal(metrics_render_remote_write(fx.reg, bad[i], n, TS_MS, &b, err, sizeof err), KNEE_EINVAL);
        assert_non_null(strstr(err, "remote-write label"));
        assert_int_equal(b.len, 0);
    }
    const char *empty_value[] = {"run="};
    assert_int_equal(metrics_render_remote_write(fx.reg, empty_value, 1, TS_MS, &b, err, sizeof err), 0);
    pb_buf_release(&b);
    fixture_release(&fx);
}

/* Read the delimited MetricFamily stream: checks every family's name, type and metrics. */
static void test_protobuf_exposition(void **state)
{
    (void)state;
    struct fixture fx;
    fixture_init(&fx);
    for (int classic = 0; classic < 2; classic++) {
        metrics_set_classic(fx.reg, classic, true);
        char *body = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&body, &len);
        assert_int_equal(metrics_render(fx.reg, METRICS_FORMAT_PROTOBUF, f), 0);
        fclose(f);
        struct pbd d = pbd_of(body, len);
        const char *names[] = {"knee_requests_total", "knee_warmup", "knee_serve_seconds", "knee_latency_seconds"};
        const uint64_t types[] = {0, 1, 4, 4};
        const size_t nmetrics[] = {2, 1, 1, 1};
        for (int fam = 0; fam < 4; fam++) {
            uint64_t mlen = 0;
            assert_true(pbd_varint(&d, &mlen));
            assert_true(mlen <= (uint64_t)(d.end - d.p));
            struct pbd m = pbd_of(d.p, (size_t)mlen);
            d.p += mlen;
            struct pbd_field mf;
            char name[128] = "";
            uint64_t type = 99;
            size_t metrics = 0;
            while (pbd_next(&m, &mf) == 1) {
                if (mf.field == 1)
                    copy_str(name, sizeof name, &mf);
                else if (mf.field == 3)
                    type = mf.u;
                else if (mf.field == 4) {
                    metrics++;
                    struct pbd mm = pbd_of(mf.data, mf.len);
                    struct pbd_field x;
                    while (pbd_next(&mm, &x) == 1) {
                        if (fam == 0 && x.field == 3) { /* Counter{value} */
                            struct pbd c = pbd_of(x.data, x.len);
                            struct pbd_field v;
                            assert_int_equal(pbd_next(&c, &v), 1);
                            assert_true(pbd_double(&v) == (metrics == 1 ? 41 : 2));
                        }
                        if (fam == 3 && x.field == 7) { /* Histogram, native */
                            struct native_hist got;
                            decode_native(x.data, x.len, &native_pb_exposition, &got, NULL);
                            expect_same_native(&got, &fx.nh);
                            native_release(&got);
                            struct pbd hb = pbd_of(x.data, x.len);
                            struct pbd_field y;
                            int buckets = 0;
                            while (pbd_next(&hb, &y) == 1)
                                buckets += y.field == 3;
                            assert_int_equal(buckets, classic ? 3 : 0);
                        }
                        if (fam == 2 && x.field == 7) { /* Histogram, classic: count, sum, 3 buckets */
                            struct pbd hb = pbd_of(x.data, x.len);
                            struct pbd_field y;
                            int buckets = 0;
                            while (pbd_next(&hb, &y) == 1) {
                                if (y.field == 1)
                                    assert_int_equal(y.u, 10);
                                if (y.field == 2)
                                    assert_true(pbd_double(&y) == 7.5);
                                buckets += y.field == 3;
                                assert_true(y.field != 5); /* no schema: a classic histogram */
                            }
                            assert_int_equal(buckets, 3);
                        }
                    }
                }
            }
            assert_string_equal(name, names[fam]);
            assert_int_equal(type, types[fam]);
            assert_int_equal(metrics, nmetrics[fam]);
        }
        assert_true(d.p == d.end);
        free(body);
    }
    fixture_release(&fx);
}

static enum metrics_format neg(const char *s)
{
    return metrics_negotiate(s, strlen(s));
}

static void test_negotiate_protobuf(void **state)
{
    (void)state;
    /* Prometheus 2.42 with --enable-feature=native-histograms (from its binary). */
    assert_int_equal(neg("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,"
                         "application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;"
                         "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
                     METRICS_FORMAT_PROTOBUF);
    assert_int_equal(neg("application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=text"),
                     METRICS_FORMAT_TEXT);
    assert_int_equal(neg("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily"),
                     METRICS_FORMAT_TEXT);
    assert_int_equal(
        neg("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0"),
        METRICS_FORMAT_TEXT);
    assert_int_equal(neg("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;"
                         "q=0.5,application/openmetrics-text;version=1.0.0"),
                     METRICS_FORMAT_OPENMETRICS);
    assert_string_equal(metrics_content_type(METRICS_FORMAT_PROTOBUF),
                        "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remote_write),
        cmocka_unit_test(test_remote_write_bad_labels),
        cmocka_unit_test(test_protobuf_exposition),
        cmocka_unit_test(test_negotiate_protobuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
