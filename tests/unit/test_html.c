/* Unit tests for src/html (knee report): the scatter's decimation keeps every column's exact
 * minimum and maximum per series through any number of merges and its counts add up; the
 * timeline coarsens exactly; the model's statistics and accounting; CSV, binary-log, hlog and
 * JSON inputs and their errors; grouping of inputs into runs; the HTML writer's document is
 * well formed and its data object parses; knee compare, capacity and --repeat documents (the
 * SLO's latency terms, the M/M/1 and M/D/1 predictions, what is refused, natural order). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/rng.h"
#include "hlog/hlog.h"
#include "html/html.h"
#include "html/internal.h"
#include "model/model.h"
#include "reqlog/reqlog.h"
#include "unit/fixture_tmpdir.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *path_of(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
    return p[k];
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* ---- decimation ------------------------------------------------------------------------------- */

static void test_band_of(void **state)
{
    (void)state;
    assert_int_equal(html_band_of(0), 0);
    assert_int_equal(html_band_of(-5), 0);
    assert_int_equal(html_band_of(1), 1);                 /* 2^0, first quarter */
    assert_int_equal(html_band_of(1024), 1 + 10 * 4);     /* a power of two starts its doubling */
    assert_int_equal(html_band_of(1279), 1 + 10 * 4);     /* below 1.25 * 1024 */
    assert_int_equal(html_band_of(1280), 1 + 10 * 4 + 1); /* 1.25 * 1024 */
    assert_int_equal(html_band_of(2047), 1 + 10 * 4 + 3);
    assert_int_equal(html_band_of(2048), 1 + 11 * 4);
    assert_true(html_band_of(3) > html_band_of(2) && html_band_of(2) > html_band_of(1));
    for (int64_t v = 1; v < 100000; v++)
        assert_true(html_band_of(v + 1) >= html_band_of(v)); /* monotone */
}

struct pt {
    int64_t t, v;
    int s;
};

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Random points (any order, negative times too), then: for every final column and series the
 * kept points include the exact minimum and maximum of the points that fell there, every kept
 * point is an input point, and the counts add up to what was added. */
static void check_decimation(uint64_t seed, size_t npts, size_t ncols, int64_t t_lo, int64_t t_span)
{
    struct rng r;
    rng_seed(&r, seed);
    struct pt *p = calloc(npts, sizeof *p);
    struct html_decim d;
    html_decim_init(&d, ncols, 1000);
    for (size_t i = 0; i < npts; i++) {
        p[i].t = t_lo + (int64_t)rng_below(&r, (uint64_t)t_span);
        double x = rng_uniform(&r);
        p[i].v = (int64_t)(exp(x * 20)) + (int64_t)rng_below(&r, 7); /* 1 .. ~5e8 */
        if (rng_bernoulli(&r, 0.001))
            p[i].v = 4000000000LL; /* a rare stall */
        p[i].s = (int)rng_below(&r, 3);
        html_decim_add(&d, (enum html_series)p[i].s, p[i].t, p[i].v);
    }
    /* the window covers every point, in at most ncols columns */
    assert_true(d.hi - d.lo < (int64_t)ncols);
    uint64_t total = 0;
    for (int s = 0; s < 3; s++) {
        size_t n;
        int64_t *kept = html_decim_points(&d, (enum html_series)s, &n);
        uint64_t cells_count = 0;
        for (size_t c = 0; c < d.ncols; c++)
            for (uint32_t k = 0; k < d.cols[c].s[s].n; k++)
                cells_count += d.cols[c].s[s].v[k].count;
        assert_int_equal(cells_count, d.count[s]);
        total += cells_count;
        for (size_t i = 1; i < n; i++) /* time order */
            assert_true(kept[2 * i] >= kept[2 * (i - 1)]);
        /* brute force per column */
        int64_t ncol = d.hi - d.lo + 1;
        int64_t *mn = malloc((size_t)ncol * sizeof *mn), *mx = malloc((size_t)ncol * sizeof *mx);
        for (int64_t c = 0; c < ncol; c++)
            mn[c] = INT64_MAX, mx[c] = INT64_MIN;
        for (size_t i = 0; i < npts; i++) {
            if (p[i].s != s)
                continue;
            int64_t c = floor_div(p[i].t, d.width_ns) - d.lo;
            assert_true(c >= 0 && c < ncol);
            if (p[i].v < mn[c])
                mn[c] = p[i].v;
            if (p[i].v > mx[c])
                mx[c] = p[i].v;
        }
        int64_t *kmn = malloc((size_t)ncol * sizeof *kmn), *kmx = malloc((size_t)ncol * sizeof *kmx);
        for (int64_t c = 0; c < ncol; c++)
            kmn[c] = INT64_MAX, kmx[c] = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            int64_t c = floor_div(kept[2 * i], d.width_ns) - d.lo;
            assert_true(c >= 0 && c < ncol);
            if (kept[2 * i + 1] < kmn[c])
                kmn[c] = kept[2 * i + 1];
            if (kept[2 * i + 1] > kmx[c])
                kmx[c] = kept[2 * i + 1];
            /* a kept point is an input point of this series */
            bool found = false;
            for (size_t j = 0; j < npts && !found; j++)
                found = p[j].s == s && p[j].t == kept[2 * i] && p[j].v == kept[2 * i + 1];
            assert_true(found);
        }
        for (int64_t c = 0; c < ncol; c++) {
            assert_int_equal(kmn[c], mn[c]);
            assert_int_equal(kmx[c], mx[c]);
        }
        free(mn);
        free(mx);
        free(kmn);
        free(kmx);
        free(kept);
    }
    assert_int_equal(total, npts);
    html_decim_release(&d);
    free(p);
}

static void test_decimation_exact_extremes(void **state)
{
    (void)state;
    check_decimation(1, 3000, 64, 0, 1000000000LL);                      /* many merges */
    check_decimation(2, 3000, 64, -5000000000LL, 9000000000LL);          /* negative times: floor division */
    check_decimation(3, 2000, 2048, 0, 500000);                          /* no merge at all */
    check_decimation(4, 4000, 16, 1700000000000000000LL, 60000000000LL); /* epoch-like times */
}

static void test_decimation_order_independent(void **state)
{
    (void)state;
    /* the same points in opposite orders keep the same points */
    struct html_decim a, b;
    html_decim_init(&a, 32, 1000);
    html_decim_init(&b, 32, 1000);
    struct rng r;
    rng_seed(&r, 9);
    int64_t t[500], v[500];
    for (int i = 0; i < 500; i++) {
        t[i] = (int64_t)rng_below(&r, 100000000);
        v[i] = 1 + (int64_t)rng_below(&r, 1000);
    }
    for (int i = 0; i < 500; i++)
        html_decim_add(&a, HTML_S_OK, t[i], v[i]);
    for (int i = 499; i >= 0; i--)
        html_decim_add(&b, HTML_S_OK, t[i], v[i]);
    /* the widths may differ (the first point sets the grid's origin), so compare the global
     * extremes and counts, which are exact in both */
    size_t na, nb;
    int64_t *pa = html_decim_points(&a, HTML_S_OK, &na), *pb = html_decim_points(&b, HTML_S_OK, &nb);
    int64_t amin = INT64_MAX, amax = 0, bmin = INT64_MAX, bmax = 0;
    for (size_t i = 0; i < na; i++)
        amin = pa[2 * i + 1] < amin ? pa[2 * i + 1] : amin, amax = pa[2 * i + 1] > amax ? pa[2 * i + 1] : amax;
    for (size_t i = 0; i < nb; i++)
        bmin = pb[2 * i + 1] < bmin ? pb[2 * i + 1] : bmin, bmax = pb[2 * i + 1] > bmax ? pb[2 * i + 1] : bmax;
    assert_int_equal(amin, bmin);
    assert_int_equal(amax, bmax);
    assert_int_equal(a.count[HTML_S_OK], 500);
    assert_int_equal(b.count[HTML_S_OK], 500);
    free(pa);
    free(pb);
    html_decim_release(&a);
    html_decim_release(&b);
}

static void test_decimation_dropped(void **state)
{
    (void)state;
    struct html_decim d;
    html_decim_init(&d, 8, 1000);
    for (int i = 0; i < 100; i++)
        html_decim_add_dropped(&d, (int64_t)i * 1000000);
    uint64_t n = 0;
    for (size_t c = 0; c < d.ncols; c++)
        n += d.cols[c].dropped;
    assert_int_equal(n, 100);
    assert_int_equal(d.dropped, 100);
    html_decim_release(&d);
}

/* ---- timeline ----------------------------------------------------------------------------------- */

static void test_timeline_coarsens_exactly(void **state)
{
    (void)state;
    struct html_timeline tl;
    html_timeline_init(&tl);
    uint64_t n = 0;
    for (int64_t s = 0; s < 3000; s++) { /* 3000 s: more than HTML_MAX_TICKS intervals of 1 s */
        struct html_tick *t = html_timeline_at(&tl, s * 1000000000LL + 500000000LL);
        t->planned += (uint64_t)(s % 7) + 1;
        n += (uint64_t)(s % 7) + 1;
    }
    assert_true(tl.n <= HTML_MAX_TICKS);
    assert_int_equal(tl.interval_ns, 4000000000LL); /* 1 s -> 2 s -> 4 s */
    uint64_t sum = 0;
    for (size_t i = 0; i < tl.n; i++)
        sum += tl.ticks[i].planned;
    assert_int_equal(sum, n);
    /* the first interval holds seconds 0..3 */
    assert_int_equal(tl.base, 0);
    assert_int_equal(tl.ticks[0].planned, 1 + 2 + 3 + 4);
    html_timeline_release(&tl);
}

/* ---- the model ------------------------------------------------------------------------------------ */

static struct html_request rq(uint32_t target, int64_t planned_ms, double lat_ms, double lag_ms, int outcome, bool warm)
{
    struct html_request r = {.target = target,
                             .planned_ns = planned_ms * 1000000,
                             .outcome = (uint8_t)outcome,
                             .warmup = warm,
                             .lag_ns = -1,
                             .latency_ns = -1,
                             .service_ns = -1,
                             .ttfb_ns = -1};
    if (lag_ms >= 0)
        r.lag_ns = (int64_t)llround(lag_ms * 1e6);
    if (lat_ms >= 0 && outcome != OUTCOME_DROPPED) {
        r.latency_ns = (int64_t)llround(lat_ms * 1e6);
        r.service_ns = r.latency_ns - r.lag_ns;
        r.ttfb_ns = r.service_ns;
    }
    return r;
}

static void test_model_accounting(void **state)
{
    (void)state;
    struct html_report *rep = html_report_new();
    struct html_run *run = html_report_add_run(rep, "m");
    const char *names[] = {"a", "b"};
    assert_int_equal(html_run_begin_requests(run, names, 2, false), 0);
    assert_int_equal(html_run_begin_requests(run, names, 2, false), KNEE_EINVAL); /* once */
    for (int i = 0; i < 1000; i++) {
        struct html_request r =
            rq((uint32_t)(i % 2), i, 2.0 + (i % 10), 0.05, i % 50 == 0 ? OUTCOME_HTTP_ERROR : OUTCOME_OK, i < 100);
        assert_int_equal(html_run_add_request(run, &r), 0);
    }
    struct html_request d = rq(0, 1001, -1, -1, OUTCOME_DROPPED, false);
    assert_int_equal(html_run_add_request(run, &d), 0);
    struct html_request bad = rq(5, 1, 1, 0, OUTCOME_OK, false);
    assert_int_equal(html_run_add_request(run, &bad), KNEE_EINVAL);
    bad = rq(0, 1, 1, 0, OUTCOME_OK, false);
    bad.outcome = OUTCOME_COUNT;
    assert_int_equal(html_run_add_request(run, &bad), KNEE_EINVAL);

    assert_int_equal(run->nrequests, 1001);
    assert_int_equal(run->nwarm, 100);
    const struct html_target *a = &run->targets[0];
    assert_int_equal(a->planned, 451); /* 450 after the warm-up + the dropped one */
    assert_int_equal(a->sent, 450);
    assert_int_equal(a->outcome[OUTCOME_DROPPED], 1);
    assert_int_equal(a->latency.total_count, 450);
    assert_int_equal(a->warm_planned, 50);
    /* the timeline counts every request once, by its plan */
    uint64_t planned = 0, done = 0;
    for (size_t i = 0; i < run->tl.n; i++)
        planned += run->tl.ticks[i].planned, done += run->tl.ticks[i].done;
    assert_int_equal(planned, 1001);
    assert_int_equal(done, 1000);
    char *text = html_summary_from_model(run);
    assert_non_null(strstr(text, "requests (planned after the warm-up)\n"));
    assert_non_null(strstr(text, "  planned 901 = sent 900 + dropped 1  [holds]\n"));
    assert_non_null(strstr(text,
                           "  sent 900 = ok 882 + rejected 0 + http_error 18 + invalid 0 + transport 0 + timeout 0 + "
                           "cancelled 0  [holds]\n"));
    assert_non_null(strstr(text, "--- target b\n"));
    free(text);
    html_report_free(rep);
}

/* ---- inputs ---------------------------------------------------------------------------------------- */

static void write_reqlog(const char *path, int n)
{
    const char *names[] = {"api"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path, names, 1, 0), 0);
    for (int i = 0; i < n; i++) {
        struct reqlog_record r = {.planned_ns = (uint64_t)i * 10000000ULL + 1,
                                  .sent_ns = (uint64_t)i * 10000000ULL + 1001,
                                  .first_byte_ns = (uint64_t)i * 10000000ULL + 2000000,
                                  .done_ns = (uint64_t)i * 10000000ULL + 2000000 + (i % 100 == 0 ? 250000000ULL : 0),
                                  .target = 0,
                                  .status = 200,
                                  .outcome = OUTCOME_OK,
                                  .flags = i < 10 ? REQLOG_FLAG_WARMUP : 0};
        if (i % 97 == 5) {
            r.sent_ns = r.first_byte_ns = r.done_ns = 0;
            r.outcome = OUTCOME_DROPPED;
        }
        assert_int_equal(reqlog_write(w, &r), 0);
    }
    assert_int_equal(reqlog_writer_close(w), 0);
}

static void test_load_reqlog(void **state)
{
    (void)state;
    const char *p = path_of("r.bin");
    write_reqlog(p, 500);
    struct html_report *rep = html_report_new();
    struct html_run *run = html_report_add_run(rep, "r");
    char err[512] = "";
    enum html_input_kind k;
    assert_int_equal(html_detect_kind(p, &k, err, sizeof err), 0);
    assert_int_equal(k, HTML_INPUT_REQLOG);
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), 0);
    assert_int_equal(run->nrequests, 500);
    assert_int_equal(run->nwarm, 10);
    assert_int_equal(run->scatter.count[HTML_S_OK] + run->scatter.dropped, 500);
    assert_int_equal(run->targets[0].latency.total_count + run->targets[0].outcome[OUTCOME_DROPPED], 490);
    /* a second per-request log for the same run is refused */
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "one of each kind"));
    html_report_free(rep);

    /* a truncated log names the record */
    FILE *f = fopen(p, "r+");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_int_equal(truncate(p, size - 7), 0);
    rep = html_report_new();
    run = html_report_add_run(rep, "t");
    assert_true(html_run_load_file(run, p, err, sizeof err) < 0);
    assert_non_null(strstr(err, "r.bin"));
    assert_non_null(strstr(err, "record 499"));
    html_report_free(rep);
}

static json_t *data_of(struct html_report *rep, char **html);

static void test_load_csv(void **state)
{
    (void)state;
    const char *p = path_of("c.csv");
    write_text(p, "server,start_s,latency_ms,service_ms,ttfb_ms,lag_ms,status,outcome,bytes,connection\n"
                  "A,0.000000000,2.500000,2.400000,2.300000,0.100000,200,ok,10,1\n"
                  "B,0.500000000,250.000000,249.000000,,1.000000,503,rejected,10,2\n"
                  "A,1.000000000,,,,,0,dropped,0,0\n"
                  "A,1.500000000,3.000000,3.000000,3.000000,0.000000,200,ok,10,1\n");
    struct html_report *rep = html_report_new();
    struct html_run *run = html_report_add_run(rep, "c");
    char err[512] = "";
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), 0);
    assert_int_equal(run->ntargets, 2);
    assert_int_equal(run->nrequests, 4);
    assert_int_equal(run->targets[0].outcome[OUTCOME_OK], 2);
    assert_int_equal(run->targets[0].outcome[OUTCOME_DROPPED], 1);
    assert_int_equal(run->targets[1].outcome[OUTCOME_REJECTED], 1);
    assert_int_equal(hdr_max(&run->targets[1].latency), hdr_highest_equivalent(&run->targets[1].latency, 250000000));
    assert_int_equal(run->nnotes, 1); /* no warm-up flag in a CSV */
    /* the status column: responses by status (the table) and by class over time (the chart) */
    assert_int_equal(run->status.n[record_status_slot(200)], 2);
    assert_int_equal(run->status.n[record_status_slot(503)], 1);
    assert_int_equal(record_status_total(&run->status), 3);
    uint64_t cls[HTML_ST_CLASSES] = {0};
    for (size_t i = 0; i < run->tl.n; i++)
        for (int c = 0; c < HTML_ST_CLASSES; c++)
            cls[c] += run->tl.ticks[i].status_class[c];
    assert_int_equal(cls[HTML_ST_2XX], 2);
    assert_int_equal(cls[HTML_ST_5XX], 1);
    assert_int_equal(cls[HTML_ST_NONE], 0); /* the dropped request is not a response */
    char *page = NULL;
    json_t *root = data_of(rep, &page);
    assert_non_null(strstr(page, "<tr><td>200</td><td>2</td><td>66.67%</td></tr>"));
    assert_non_null(strstr(page, "<tr><td class=\"bad\">503</td><td>1</td><td>33.33%</td></tr>"));
    json_t *r0 = json_array_get(json_object_get(root, "runs"), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r0, "status_codes"), "503")), 1);
    json_t *st = json_object_get(json_object_get(r0, "timeline"), "status");
    assert_int_equal(json_object_size(st), 2); /* 2xx and 5xx */
    assert_true(json_is_array(json_object_get(st, "5xx")));
    json_decref(root);
    free(page);
    html_report_free(rep);
    assert_int_equal(html_status_class(0), HTML_ST_NONE);
    assert_int_equal(html_status_class(103), HTML_ST_1XX);
    assert_int_equal(html_status_class(599), HTML_ST_5XX);
    assert_int_equal(html_status_class(600), HTML_ST_OTHER);

    /* a status that is not one: the file and line named */
    write_text(p, "server,start_s,latency_ms,status\nA,0.1,1.0,200\nA,0.2,1.0,OK\n");
    rep = html_report_new();
    run = html_report_add_run(rep, "c");
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "c.csv:3: status: 'OK' is not an HTTP status"));
    html_report_free(rep);

    /* bad cells name the file and line */
    write_text(p, "server,start_s,latency_ms\nA,0.1,1.0\nA,0.2,-3\n");
    rep = html_report_new();
    run = html_report_add_run(rep, "c");
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), KNEE_ERANGE);
    assert_non_null(strstr(err, "c.csv:3:"));
    assert_non_null(strstr(err, "negative"));
    html_report_free(rep);
    write_text(p, "server,start_s,latency_ms,outcome\nA,0.1,1.0,fine\n");
    rep = html_report_new();
    run = html_report_add_run(rep, "c");
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "c.csv:2: outcome: 'fine'"));
    html_report_free(rep);
    write_text(p, "a,b\n1,2\n");
    rep = html_report_new();
    run = html_report_add_run(rep, "c");
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "start_s and latency_ms"));
    html_report_free(rep);
}

static void test_load_hlog(void **state)
{
    (void)state;
    const char *p = path_of("h.hlog");
    FILE *f = fopen(p, "w");
    struct hlog_writer *w;
    assert_int_equal(hlog_writer_open(&w, f, 1700000000.0, NULL), 0);
    struct hdr h;
    assert_int_equal(hdr_init(&h, 1, 3600000000000LL, 3), 0);
    for (int s = 0; s < 5; s++) {
        hdr_reset(&h);
        for (int i = 0; i < 100; i++)
            hdr_record(&h, 1000000 + i * 10000 + s * 5000000, 1);
        assert_int_equal(hlog_writer_write(w, "A", s, 1.0, &h), 0);
        hdr_record(&h, 300000000, 1); /* B gets one slow one per second */
        assert_int_equal(hlog_writer_write(w, "B", s, 1.0, &h), 0);
        /* knee run --stream's per-target stream histograms: not targets, not requests */
        assert_int_equal(hlog_writer_write(w, HLOG_TAG_FIRST_EVENT "A", s, 1.0, &h), 0);
        assert_int_equal(hlog_writer_write(w, HLOG_TAG_EVENT_GAP "B", s, 1.0, &h), 0);
    }
    assert_int_equal(hlog_writer_close(w), 0);
    fclose(f);
    hdr_release(&h);
    struct html_report *rep = html_report_new();
    struct html_run *run = html_report_add_run(rep, "h");
    char err[512] = "";
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), 0);
    assert_true(run->have_hlog);
    assert_false(run->have_requests);
    assert_int_equal(run->ntargets, 2);
    assert_string_equal(run->targets[0].name, "A");
    assert_string_equal(run->targets[1].name, "B");
    assert_int_equal(run->nnotes, 1);
    assert_non_null(strstr(run->notes[0], "10 intervals of streamed-response histograms"));
    assert_int_equal(run->targets[0].latency.total_count, 500);
    assert_int_equal(run->targets[1].latency.total_count, 505);
    assert_int_equal(run->targets[1].dbl.total, 505);
    uint64_t done = 0;
    for (size_t i = 0; i < run->tl.n; i++)
        done += run->tl.ticks[i].done;
    assert_int_equal(done, 1005);
    html_report_free(rep);

    write_text(p, "#[StartTime: 1700000000.000 (seconds since epoch)]\nTag=A,0.000,1.000,1.0,HISTFAAAA!!\n");
    rep = html_report_new();
    run = html_report_add_run(rep, "h");
    assert_true(html_run_load_file(run, p, err, sizeof err) < 0);
    assert_non_null(strstr(err, "h.hlog:2:"));
    html_report_free(rep);
}

static json_t *data_of(struct html_report *rep, char **html);

static const char run_json[] =
    "{\"schema\":\"knee-run/1\",\"environment\":{\"args\":[\"-R\",\"10\",\"--lag-limit\",\"5ms\"]},"
    "\"config\":{\"mode\":\"open\",\"arrivals\":\"constant\",\"seed\":1,\"rate\":10,\"pool_cap\":100,"
    "\"when_busy\":\"queue\",\"threads\":1,\"duration_s\":1,\"requests\":0,\"warmup_s\":0.5,\"keepalive\":true},"
    "\"window_s\":0.5,\"elapsed_s\":1.01,\"generator_limited\":false,\"send_ratio\":1,"
    "\"rates\":{\"planned\":10,\"sent\":10,\"completed\":10,\"goodput\":10},"
    "\"all\":{\"name\":\"all\",\"accounting\":{\"planned\":5,\"sent\":5,\"dropped\":0,\"outcomes\":{\"ok\":5}},"
    "\"warmup\":{\"planned\":5,\"sent\":5,\"dropped\":0,\"outcomes\":{\"ok\":5}},"
    "\"latency\":{\"count\":5,\"mean\":2.5,\"stdev\":0.1,\"p50\":2.5,\"p90\":2.6,\"p95\":2.6,\"p99\":2.6,\"p99.9\":2.6,"
    "\"max\":2.6},\"latency_by_outcome\":{\"ok\":{\"count\":5,\"mean\":2.5,\"stdev\":0.1,\"p50\":2.5,\"p90\":2.6,"
    "\"p95\":2.6,\"p99\":2.6,\"p99.9\":2.6,\"max\":2.6}},\"service\":{\"count\":5},\"ttfb\":{\"count\":5},"
    "\"lag\":{\"count\":5},\"connect\":{\"count\":0},\"connections\":{\"opened\":1,\"failed\":0,\"closed_by_server\":0,"
    "\"unsolicited_bytes\":0},\"bytes_in\":100},"
    "\"targets\":[{\"name\":\"t\",\"url\":\"http://x/\",\"address\":\"127.0.0.1:1\",\"resolve_ms\":0.01,"
    "\"planned_rate\":10,\"clients\":0,\"server_timing\":{}}],"
    "\"timeline\":[{\"start_s\":0,\"length_s\":1,\"planned\":10,\"sent\":10,\"completed\":10,\"ok\":10,\"errors\":0,"
    "\"dropped\":0,\"p50_ms\":2.5,\"p99_ms\":2.6,\"max_ms\":2.6}],\"warnings\":[\"a warning\"],\"thresholds\":[]}\n";

static void test_load_json(void **state)
{
    (void)state;
    const char *p = path_of("j.json");
    write_text(p, run_json);
    struct html_report *rep = html_report_new();
    struct html_run *run = html_report_add_run(rep, "j");
    char err[512] = "";
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), 0);
    assert_int_equal(run->closed_loop, 0);
    assert_true(run->warmup_s == 0.5);
    assert_true(run->lag_limit_known);
    assert_int_equal(run->lag_limit_ns, 5000000);
    assert_int_equal(run->njtl, 1);
    const char *s = run->summary_text;
    assert_non_null(s);
    assert_non_null(strstr(s, "knee run: open loop, constant arrivals, 10.0/s, pool up to 100 connections (queue when "
                              "busy), 1 s, 1 thread\n"));
    assert_non_null(strstr(s, "  t          http://x/ -> 127.0.0.1:1 (resolved in 10us), 10.0/s\n"));
    assert_non_null(strstr(s, "requests (planned after the warm-up)\n  planned 5 = sent 5 + dropped 0  [holds]\n"));
    assert_non_null(strstr(s, "  all                   5     2.500     0.100     2.500     2.600"));
    assert_non_null(strstr(s, "\nwarnings, by cause (the most consequential first)\n  ! a warning\n"));
    assert_int_equal(run->timer_slack_ns, 0);
    char *html = NULL;
    json_t *root = data_of(rep, &html);
    json_t *r0 = json_array_get(json_object_get(root, "runs"), 0);
    assert_true(json_number_value(json_object_get(r0, "lag_limit_ms")) == 5);
    assert_true(json_number_value(json_object_get(r0, "timer_slack_ms")) == 0);
    assert_true(json_number_value(json_object_get(r0, "lag_threshold_ms")) == 5);
    json_decref(root);
    free(html);
    html_report_free(rep);

    /* --timer-slack 2ms: the verdict judged the lag beyond it, so the lag chart's threshold is
     * the limit plus the slack (report.js draws lag_threshold_ms and names both) */
    const char *k = strstr(run_json, "\"keepalive\":true}");
    assert_non_null(k);
    char with[sizeof run_json + 64];
    snprintf(with, sizeof with, "%.*s\"keepalive\":true,\"timer_slack_ms\":2}%s", (int)(k - run_json), run_json,
             k + strlen("\"keepalive\":true}"));
    write_text(p, with);
    rep = html_report_new();
    run = html_report_add_run(rep, "j");
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), 0);
    assert_int_equal(run->timer_slack_ns, 2000000);
    assert_non_null(strstr(run->summary_text, "sends up to 2.000 ms late by --timer-slack"));
    root = data_of(rep, &html);
    r0 = json_array_get(json_object_get(root, "runs"), 0);
    assert_true(json_number_value(json_object_get(r0, "lag_limit_ms")) == 5);
    assert_true(json_number_value(json_object_get(r0, "timer_slack_ms")) == 2);
    assert_true(json_number_value(json_object_get(r0, "lag_threshold_ms")) == 7);
    json_decref(root);
    free(html);
    html_report_free(rep);

    /* not a run JSON: said so */
    write_text(p, "{\"column\":\"latency_ms\"}");
    rep = html_report_new();
    run = html_report_add_run(rep, "j");
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "not a knee run JSON"));
    html_report_free(rep);
    /* broken JSON names the line */
    write_text(p, "{\n\"schema\": \"knee-run/1\",\n oops\n}");
    rep = html_report_new();
    run = html_report_add_run(rep, "j");
    assert_int_equal(html_run_load_file(run, p, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "j.json:3:"));
    html_report_free(rep);
}

/* A run JSON's "stream" objects (knee run --stream) reach the page as they are, with the target's
 * name; a spectrum the charts cannot draw is dropped with a note; a run without one has none. */
static void test_load_stream(void **state)
{
    (void)state;
    const char *k = strstr(run_json, "\"server_timing\":{}}]");
    assert_non_null(k);
    static const char stream[] =
        "\"server_timing\":{},\"stream\":{\"first_event\":{\"count\":4,\"mean\":11,\"p50\":10.5,\"p90\":12,"
        "\"p99\":12.25,\"p99.9\":12.25,\"max\":12.25},\"event_gap\":{\"count\":12,\"p50\":5,\"max\":31},"
        "\"events\":16,\"responses\":4,\"spectrum\":{\"first_event\":{\"p\":[0,0.5,0.75],\"ms\":[9,10.5,12]},"
        "\"event_gap\":{\"p\":[0,1.5],\"ms\":[1,2]}}}}]";
    char with[sizeof run_json + sizeof stream];
    snprintf(with, sizeof with, "%.*s%s%s", (int)(k - run_json), run_json, stream,
             k + strlen("\"server_timing\":{}}]"));
    struct html_report *rep = html_report_new();
    struct html_run *run = html_report_add_run(rep, "s");
    char err[512] = "";
    assert_int_equal(html_run_load_json_mem(run, with, strlen(with), "s.json", err, sizeof err), 0);
    assert_non_null(run->stream);
    char *html = NULL;
    json_t *root = data_of(rep, &html);
    json_t *st = json_object_get(json_array_get(json_object_get(root, "runs"), 0), "stream");
    assert_true(json_is_null(json_object_get(st, "all"))); /* one target: all is the target */
    json_t *t = json_array_get(json_object_get(st, "targets"), 0);
    assert_string_equal(json_string_value(json_object_get(t, "name")), "t");
    assert_true(json_number_value(json_object_get(json_object_get(t, "first_event"), "p99")) == 12.25);
    json_t *sp = json_object_get(t, "spectrum");
    assert_int_equal(json_array_size(json_object_get(json_object_get(sp, "first_event"), "ms")), 3);
    assert_null(json_object_get(sp, "event_gap")); /* p 1.5: not a level below 1 */
    json_t *notes = json_object_get(json_array_get(json_object_get(root, "runs"), 0), "notes");
    assert_int_equal(json_array_size(notes), 1);
    assert_non_null(strstr(json_string_value(json_array_get(notes, 0)), "stream.spectrum.event_gap of target 't'"));
    json_decref(root);
    free(html);
    html_report_free(rep);

    /* no stream: null in the page */
    rep = html_report_new();
    run = html_report_add_run(rep, "n");
    assert_int_equal(html_run_load_json_mem(run, run_json, strlen(run_json), "n.json", err, sizeof err), 0);
    assert_null(run->stream);
    root = data_of(rep, &html);
    assert_true(json_is_null(json_object_get(json_array_get(json_object_get(root, "runs"), 0), "stream")));
    json_decref(root);
    free(html);
    html_report_free(rep);
}

static void test_inputs_grouping(void **state)
{
    (void)state;
    write_text(path_of("g1.json"), run_json);
    write_reqlog(path_of("g1.bin"), 50);
    write_reqlog(path_of("g2.bin"), 30);
    const char *paths[] = {path_of("g1.bin"), path_of("g2.bin"), path_of("g1.json")};
    const char *specs[] = {"explicit=" /* filled below */};
    char spec[600];
    snprintf(spec, sizeof spec, "explicit=%s", path_of("g2.bin"));
    specs[0] = spec;
    struct html_report *rep = html_report_new();
    char err[512] = "";
    assert_int_equal(html_report_add_inputs(rep, specs, 1, paths, 3, err, sizeof err), 0);
    assert_int_equal(html_report_nruns(rep), 3);
    assert_string_equal(html_report_run(rep, 0)->name, "explicit");
    assert_string_equal(html_report_run(rep, 1)->name, "g1");
    assert_string_equal(html_report_run(rep, 2)->name, "g2");
    struct html_run *g1 = html_report_run(rep, 1);
    assert_true(g1->have_json && g1->have_requests);
    assert_true(g1->warmup_s == 0.5); /* the JSON was read first */
    assert_int_equal(g1->nrequests, 50);
    html_report_free(rep);

    const char *bad[] = {"nameonly"};
    rep = html_report_new();
    assert_int_equal(html_report_add_inputs(rep, bad, 1, NULL, 0, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "NAME=FILE"));
    html_report_free(rep);
    const char *missing[] = {path_of("nope.bin")};
    rep = html_report_new();
    assert_true(html_report_add_inputs(rep, NULL, 0, missing, 1, err, sizeof err) < 0);
    assert_non_null(strstr(err, "nope.bin"));
    html_report_free(rep);
}

static void test_write_run_report(void **state)
{
    (void)state;
    write_reqlog(path_of("w.bin"), 40);
    const char *files[] = {path_of("w.bin"), NULL};
    char err[512] = "";
    const char *out = path_of("w.html");
    assert_int_equal(
        html_write_run_report(out, "one call", run_json, strlen(run_json), "the summary\n", files, err, sizeof err), 0);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_non_null(strstr(buf, "<h2>one call</h2>"));
    assert_non_null(strstr(buf, ">the summary\n</pre>")); /* the given text wins over the JSON's */
    /* bad input: an error, and no file */
    unlink(out);
    assert_int_equal(html_write_run_report(out, "x", "{", 1, NULL, NULL, err, sizeof err), KNEE_EFORMAT);
    assert_int_equal(access(out, F_OK), -1);
}

/* ---- documents: knee compare, knee capacity, knee run --repeat ------------------------------------ */

static const char capacity_json[] =
    "{\"schema\":\"knee-capacity/1\",\"capacity\":60,\"verdict\":\"valid\",\"reasons\":[\"a <note>\"],"
    "\"slo\":[\"p99<100ms\",\"api.p50<=20ms\",\"error_rate<1%\"],\"config\":{\"targets\":[{\"name\":\"api\"}],"
    "\"delivered_floor\":0.99},\"ladder\":[{\"rate\":40,\"held\":true,\"reps\":[{\"rep\":1,\"p99\":12}]},"
    "{\"rate\":80,\"held\":false,\"reps\":[{\"rep\":1,\"p99\":300}]}],\"repetitions\":[{\"rep\":1,\"valid\":true}]}";

/* The data object of a report written to memory (a new reference). */
static json_t *data_of(struct html_report *rep, char **html)
{
    size_t len = 0;
    FILE *f = open_memstream(html, &len);
    char err[256];
    assert_int_equal(html_report_write(rep, f, err, sizeof err), 0);
    fclose(f);
    const char *open_tag = "<script type=\"application/json\" id=\"knee-data\">";
    char *a = strstr(*html, open_tag);
    assert_non_null(a);
    a += strlen(open_tag);
    char *b = strstr(a, "</script>");
    assert_non_null(b);
    char *copy = strndup(a, (size_t)(b - a));
    assert_null(strchr(copy, '<')); /* safe inside the script element */
    json_error_t je;
    json_t *root = json_loads(copy, 0, &je);
    if (!root)
        fail_msg("data object: %d: %s", je.line, je.text);
    free(copy);
    return root;
}

/* --servers: c servers sharing one queue draw M/M/c (no M/D/c), saturating at c/S; 0 is 1. */
static void test_prediction_servers(void **state)
{
    (void)state;
    char err[512];
    struct html_report *rep = html_report_new();
    html_report_set_service_time(rep, 0.040);
    html_report_set_servers(rep, 4);
    assert_int_equal(
        html_report_add_document_mem(rep, "cap", capacity_json, strlen(capacity_json), "cap.json", err, sizeof err), 0);
    char *html = NULL;
    json_t *root = data_of(rep, &html);
    json_t *pred =
        json_object_get(json_object_get(json_array_get(json_object_get(root, "documents"), 0), "knee"), "prediction");
    assert_int_equal(json_integer_value(json_object_get(pred, "servers")), 4);
    assert_true(json_number_value(json_object_get(pred, "saturation_rate")) == 100); /* 4 / 40 ms */
    assert_null(json_object_get(pred, "mm1"));
    assert_null(json_object_get(pred, "md1"));
    json_t *rate = json_object_get(pred, "rate");
    json_t *p50 = json_object_get(json_object_get(pred, "mmc"), "p50");
    json_t *p99 = json_object_get(json_object_get(pred, "mmc"), "p99");
    assert_true(json_array_size(rate) > 100 && json_array_size(p50) == json_array_size(rate) &&
                json_array_size(p99) == json_array_size(rate));
    /* every point is src/model's M/M/4 response-time quantile at that rate */
    for (size_t k = 0; k < json_array_size(rate); k += 37) {
        struct model_mmc m;
        double q50, q99;
        assert_int_equal(model_mmc(4, json_number_value(json_array_get(rate, k)), 25, &m), 0);
        assert_int_equal(model_mmc_response_quantile(&m, 0.5, &q50), 0);
        assert_int_equal(model_mmc_response_quantile(&m, 0.99, &q99), 0);
        assert_true(fabs(json_number_value(json_array_get(p50, k)) - q50 * 1e3) < 1e-9 * q50 * 1e3);
        assert_true(fabs(json_number_value(json_array_get(p99, k)) - q99 * 1e3) < 1e-9 * q99 * 1e3);
    }
    /* near zero load nobody waits: the p50 is the exponential service's, S ln 2 */
    assert_true(fabs(json_number_value(json_array_get(p50, 0)) - 40 * log(2)) < 0.05);
    json_decref(root);
    free(html);
    html_report_free(rep);

    /* 0 servers is one: M/M/1 and M/D/1 */
    rep = html_report_new();
    html_report_set_service_time(rep, 0.010);
    html_report_set_servers(rep, 0);
    assert_int_equal(
        html_report_add_document_mem(rep, "cap", capacity_json, strlen(capacity_json), "cap.json", err, sizeof err), 0);
    root = data_of(rep, &html);
    pred =
        json_object_get(json_object_get(json_array_get(json_object_get(root, "documents"), 0), "knee"), "prediction");
    assert_int_equal(json_integer_value(json_object_get(pred, "servers")), 1);
    assert_non_null(json_object_get(pred, "mm1"));
    assert_non_null(json_object_get(pred, "md1"));
    json_decref(root);
    free(html);
    html_report_free(rep);
}

static void test_documents(void **state)
{
    (void)state;
    char err[512];
    /* capacity: the document as it is, the SLO's latency terms parsed, the predictions with a
     * service time */
    struct html_report *rep = html_report_new();
    html_report_set_service_time(rep, 0.010);
    assert_int_equal(
        html_report_add_document_mem(rep, "cap", capacity_json, strlen(capacity_json), "cap.json", err, sizeof err), 0);
    assert_int_equal(html_report_ndocuments(rep), 1);
    assert_int_equal(html_report_nruns(rep), 0);
    char *html = NULL;
    json_t *root = data_of(rep, &html);
    assert_non_null(strstr(html, "1 capacity search"));
    assert_non_null(strstr(html, "verdict: valid"));
    assert_non_null(strstr(html, "<li>a &lt;note&gt;</li>")); /* the reasons, escaped, readable without scripts */
    json_t *d = json_array_get(json_object_get(root, "documents"), 0);
    assert_string_equal(json_string_value(json_object_get(d, "kind")), "capacity");
    json_t *ladder = json_object_get(json_object_get(d, "doc"), "ladder");
    assert_int_equal(json_array_size(ladder), 2);
    assert_true(json_number_value(json_object_get(json_array_get(ladder, 1), "rate")) == 80);
    json_t *slo = json_object_get(json_object_get(d, "knee"), "slo");
    assert_int_equal(json_array_size(slo), 2); /* error_rate is not a latency line */
    assert_string_equal(json_string_value(json_object_get(json_array_get(slo, 0), "stat")), "p99");
    assert_true(json_number_value(json_object_get(json_array_get(slo, 0), "ms")) == 100);
    assert_string_equal(json_string_value(json_object_get(json_array_get(slo, 1), "target")), "api");
    json_t *pred = json_object_get(json_object_get(d, "knee"), "prediction");
    assert_true(json_number_value(json_object_get(pred, "saturation_rate")) == 100);
    json_t *rate = json_object_get(pred, "rate");
    json_t *mm1 = json_object_get(json_object_get(pred, "mm1"), "p99");
    json_t *md1 = json_object_get(json_object_get(pred, "md1"), "p99");
    assert_true(json_array_size(rate) > 100 && json_array_size(mm1) == json_array_size(rate));
    /* at the first rate (near 0) M/M/1's p99 is -ln(0.01) S and M/D/1's about S; at the last,
     * below saturation, both grow, M/M/1 above M/D/1 */
    double l0 = json_number_value(json_array_get(rate, 0));
    double mu = 100;
    double want0 = -log(0.01) / (mu - l0) * 1e3;
    assert_true(fabs(json_number_value(json_array_get(mm1, 0)) - want0) < 1e-9 * want0);
    size_t last = json_array_size(rate) - 1;
    assert_true(json_number_value(json_array_get(rate, last)) <= 92.0 + 1e-9); /* 1.15 x the top rate */
    assert_true(json_number_value(json_array_get(mm1, last)) > json_number_value(json_array_get(md1, last)));
    assert_true(json_number_value(json_array_get(md1, last)) > 10);
    assert_int_equal(json_integer_value(json_object_get(pred, "servers")), 1);
    assert_null(json_object_get(pred, "mmc"));
    json_decref(root);
    free(html);
    html_report_free(rep);

    /* compare and repeat documents beside a run; without a service time no prediction */
    rep = html_report_new();
    const char *cmp = "{\"schema\":\"knee-compare/1\",\"verdict\":\"slower\",\"all\":{},\"metrics\":{\"p99\":{}},"
                      "\"repetitions\":{\"before\":3,\"after\":3},\"warnings\":[\"w1\"]}";
    const char *repeat = "{\"schema\":\"knee-repeat/1\",\"repetitions\":[{\"repetition\":1,\"p99_ms\":4.5}]}";
    assert_int_equal(html_report_add_document_mem(rep, "c", cmp, strlen(cmp), "c.json", err, sizeof err), 0);
    assert_int_equal(html_report_add_document_mem(rep, "r", repeat, strlen(repeat), "r.json", err, sizeof err), 0);
    assert_int_equal(
        html_report_add_document_mem(rep, "cap", capacity_json, strlen(capacity_json), "cap.json", err, sizeof err), 0);
    html_report_add_run(rep, "run");
    root = data_of(rep, &html);
    assert_non_null(strstr(html, "1 comparison, 1 capacity search, 1 repetition summary, 1 run"));
    assert_non_null(strstr(html, "verdict: slower"));
    assert_non_null(strstr(html, "id=\"doc-charts-1\""));
    json_t *docs = json_object_get(root, "documents");
    assert_string_equal(json_string_value(json_object_get(json_array_get(docs, 1), "kind")), "repeat");
    assert_null(json_object_get(json_object_get(json_array_get(docs, 2), "knee"), "prediction"));
    assert_int_equal(json_array_size(json_object_get(root, "runs")), 1);
    json_decref(root);
    free(html);

    /* refused: another schema, a missing part, not JSON */
    const char *bad[][2] = {{"{\"schema\":\"knee-stats/1\"}", "none of"},
                            {"{\"schema\":\"knee-capacity/1\",\"config\":{},\"ladder\":{}}", "\"ladder\" missing or"},
                            {"{\"schema\":\"knee-capacity/1\",\"config\":{},\"ladder\":[{\"rate\":\"x\",\"reps\":[]}],"
                             "\"repetitions\":[],\"reasons\":[]}",
                             "ladder step 1"},
                            {"{\"schema\":\"knee-compare/1\"", "x.json:1:"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(
            html_report_add_document_mem(rep, "x", bad[i][0], strlen(bad[i][0]), "x.json", err, sizeof err),
            KNEE_EFORMAT);
        if (!strstr(err, bad[i][1]))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i][1]);
    }
    assert_int_equal(html_report_ndocuments(rep), 3);
    html_report_free(rep);

    /* a knee run --repeat directory: the runs in natural order (rep-2 before rep-10), the
     * summary a document */
    char dir[600];
    snprintf(dir, sizeof dir, "%s", path_of("repdir"));
    assert_int_equal(mkdir(dir, 0755), 0);
    for (int k = 1; k <= 10; k++)
        if (k == 1 || k == 2 || k == 10) {
            char p[700];
            snprintf(p, sizeof p, "%s/rep-%d.bin", dir, k);
            write_reqlog(p, 20);
        }
    char p[700];
    snprintf(p, sizeof p, "%s/repeat.json", dir);
    write_text(p, repeat);
    rep = html_report_new();
    const char *paths[] = {dir};
    assert_int_equal(html_report_add_inputs(rep, NULL, 0, paths, 1, err, sizeof err), 0);
    assert_int_equal(html_report_nruns(rep), 3);
    assert_string_equal(html_report_run(rep, 1)->name, "rep-2");
    assert_string_equal(html_report_run(rep, 2)->name, "rep-10");
    assert_int_equal(html_report_ndocuments(rep), 1);
    html_report_free(rep);

    /* the one call with a document in memory: a section named by the caller */
    const char *out = path_of("c.html");
    struct html_write_opts o = {.name = "compare", .json = cmp, .json_len = strlen(cmp)};
    bool output_failed = true;
    assert_int_equal(html_write_report(out, &o, &output_failed, err, sizeof err), 0);
    assert_false(output_failed);
    assert_int_equal(html_write_report("/nonexistent-dir/c.html", &o, &output_failed, err, sizeof err) < 0, 1);
    assert_true(output_failed);
}

/* ---- the writer ------------------------------------------------------------------------------------- */

/* Tags outside <script> and <style> must nest; returns false on the first mismatch. */
static bool tags_balanced(const char *html)
{
    const char *stack[64];
    int depth = 0;
    static const char *const voids[] = {"meta", "br", "img", "input", "link", "hr", "!DOCTYPE", "!--"};
    for (const char *p = html; (p = strchr(p, '<')) != NULL;) {
        if (strncmp(p, "<!--", 4) == 0) {
            p = strstr(p, "-->");
            if (!p)
                return false;
            continue;
        }
        bool close = p[1] == '/';
        const char *name = p + 1 + close;
        size_t n = strcspn(name, " >");
        const char *end = strchr(p, '>');
        if (!end)
            return false;
        bool is_void = false;
        for (size_t i = 0; i < sizeof voids / sizeof voids[0]; i++)
            if (strlen(voids[i]) == n && strncmp(name, voids[i], n) == 0)
                is_void = true;
        if (close) {
            if (depth == 0 || strlen(stack[depth - 1]) != n || strncmp(stack[depth - 1], name, n) != 0)
                return false;
            free((void *)stack[--depth]);
        } else if (!is_void) {
            if (depth == 64)
                return false;
            stack[depth++] = strndup(name, n);
            if ((n == 6 && strncmp(name, "script", 6) == 0) || (n == 5 && strncmp(name, "style", 5) == 0)) {
                char closing[16];
                snprintf(closing, sizeof closing, "</%.*s>", (int)n, name);
                end = strstr(end, closing);
                if (!end)
                    return false;
                end--; /* land on the closing tag next */
            }
        }
        p = end + 1;
    }
    while (depth)
        free((void *)stack[--depth]);
    return depth == 0;
}

static void test_writer(void **state)
{
    (void)state;
    struct html_report *rep = html_report_new();
    struct html_run *run = html_report_add_run(rep, "<b>&\"quoted\"</b>"); /* must be escaped everywhere */
    const char *names[] = {"a</script>b"};
    assert_int_equal(html_run_begin_requests(run, names, 1, false), 0);
    for (int i = 0; i < 3000; i++) {
        struct html_request r = rq(0, i, 1.0 + (i % 300 == 0 ? 200 : i % 5), 0.02, OUTCOME_OK, false);
        html_run_add_request(run, &r);
    }
    html_run_note(run, "a note with <tags>");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    char err[256];
    assert_int_equal(html_report_write(rep, f, err, sizeof err), 0);
    fclose(f);
    assert_true(strncmp(buf, "<!DOCTYPE html>\n<html lang=\"en\">", 32) == 0);
    assert_non_null(strstr(buf, "MIT License"));
    assert_null(strstr(buf, "<b>&")); /* the name is escaped in the HTML */
    assert_non_null(strstr(buf, "&lt;b&gt;&amp;&quot;quoted&quot;&lt;/b&gt;"));
    assert_true(tags_balanced(buf));
    /* exactly one data object, and it parses */
    const char *open_tag = "<script type=\"application/json\" id=\"knee-data\">";
    char *a = strstr(buf, open_tag);
    assert_non_null(a);
    assert_null(strstr(a + 1, open_tag));
    a += strlen(open_tag);
    char *b = strstr(a, "</script>");
    assert_non_null(b);
    *b = '\0';
    assert_null(strchr(a, '<'));
    json_error_t je;
    json_t *root = json_loads(a, 0, &je);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "schema")), "knee-report/1");
    json_t *r0 = json_array_get(json_object_get(root, "runs"), 0);
    assert_string_equal(json_string_value(json_object_get(r0, "name")), "<b>&\"quoted\"</b>");
    json_t *t0 = json_array_get(json_object_get(r0, "targets"), 0);
    assert_string_equal(json_string_value(json_object_get(t0, "name")), "a</script>b");
    assert_int_equal(json_integer_value(json_object_get(t0, "count")), 3000);
    /* histogram counts add up to the count */
    json_t *n = json_object_get(json_object_get(t0, "hist"), "n");
    json_int_t sum = 0;
    for (size_t i = 0; i < json_array_size(n); i++)
        sum += json_integer_value(json_array_get(n, i));
    assert_int_equal(sum, 3000);
    assert_int_equal(json_array_size(json_object_get(json_object_get(t0, "hist"), "lo_ms")), json_array_size(n) + 1);
    /* the max marker is the slowest request (HDR highest equivalent of 201 ms) */
    double mx = json_number_value(json_object_get(json_object_get(t0, "marks"), "max"));
    assert_true(mx >= 201.0 && mx < 201.0 * 1.001);
    /* the scatter kept the slowest request exactly */
    json_t *series = json_object_get(json_object_get(r0, "scatter"), "series");
    json_t *ok = json_array_get(series, 0);
    assert_string_equal(json_string_value(json_object_get(ok, "key")), "ok");
    assert_int_equal(json_integer_value(json_object_get(ok, "n")), 3000);
    double vmax = 0;
    json_t *v = json_object_get(ok, "v");
    for (size_t i = 0; i < json_array_size(v); i++)
        vmax = fmax(vmax, json_number_value(json_array_get(v, i)));
    assert_true(vmax == 201.0);
    json_decref(root);
    free(buf);
    html_report_free(rep);

    /* an empty report is refused; an unwritable file is an error with the path */
    rep = html_report_new();
    f = open_memstream(&buf, &len);
    assert_int_equal(html_report_write(rep, f, err, sizeof err), KNEE_EINVAL);
    fclose(f);
    free(buf);
    html_report_add_run(rep, "x");
    assert_true(html_report_write_file(rep, "/nonexistent-dir/r.html", err, sizeof err) < 0);
    assert_non_null(strstr(err, "/nonexistent-dir/r.html"));
    html_report_free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_band_of),
        cmocka_unit_test(test_decimation_exact_extremes),
        cmocka_unit_test(test_decimation_order_independent),
        cmocka_unit_test(test_decimation_dropped),
        cmocka_unit_test(test_timeline_coarsens_exactly),
        cmocka_unit_test(test_model_accounting),
        cmocka_unit_test(test_load_reqlog),
        cmocka_unit_test(test_load_csv),
        cmocka_unit_test(test_load_hlog),
        cmocka_unit_test(test_load_json),
        cmocka_unit_test(test_load_stream),
        cmocka_unit_test(test_inputs_grouping),
        cmocka_unit_test(test_write_run_report),
        cmocka_unit_test(test_writer),
        cmocka_unit_test(test_documents),
        cmocka_unit_test(test_prediction_servers),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
