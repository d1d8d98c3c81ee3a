/* Unit tests for src/analyze: per-second windows (dense and sparse seconds), the small
 * windows' placement, Python's exclusive quantile where it extrapolates, the mean+2sd and
 * median checks, the heatmap's coarsening (nothing lost, bounded bins), and the loader:
 * filters, groups, missing cells, warm-up, and the file:line of every bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "analyze/analyze.h"
#include "analyze/dataset.h"
#include "analyze/report.h"
#include "core/err.h"
#include "core/rng.h"
#include "hist/hdr.h"
#include "load/run.h"
#include "reqlog/reqlog.h"
#include "stats/stats.h"
#include "unit/fixture_tmpdir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* knee stats' as-knee-run numbers use knee run's histogram: the parameters must agree */
_Static_assert(REPORT_RUN_HDR_LOWEST == RUN_HDR_LOWEST && REPORT_RUN_HDR_HIGHEST == RUN_HDR_HIGHEST &&
                   REPORT_RUN_HDR_DIGITS == RUN_HDR_SIGDIGITS,
               "report.h's REPORT_RUN_HDR_* must equal load/run.h's RUN_HDR_*");

static const char *write_file_n(const char *name, const char *text, size_t n)
{
    static char path[8][512];
    static int k;
    char *p = path[k++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    return p;
}

static const char *write_file(const char *name, const char *text)
{
    return write_file_n(name, text, strlen(text));
}

/* p99 per whole second by brute force: for each second, sort that second's values. */
static void brute_windows(const double *v, const int32_t *sec, size_t n, double *mean, double *max, size_t *nw)
{
    double p99s[4096];
    size_t k = 0;
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        lo = sec[i] < lo ? sec[i] : lo;
        hi = sec[i] > hi ? sec[i] : hi;
    }
    double *tmp = malloc(n * sizeof *tmp);
    for (int64_t s = lo; s <= hi; s++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (sec[i] == s)
                tmp[m++] = v[i];
        if (!m)
            continue;
        stats_sort(tmp, m);
        p99s[k++] = stats_nearest_rank(tmp, m, 99);
    }
    free(tmp);
    *nw = k;
    *mean = stats_mean(p99s, k);
    *max = p99s[0];
    for (size_t i = 1; i < k; i++)
        *max = p99s[i] > *max ? p99s[i] : *max;
}

static void test_window_p99_dense_and_sparse(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 5);
    enum { N = 3000 };
    static double v[N];
    static int32_t sec[N];
    for (int sparse = 0; sparse < 2; sparse++) {
        for (size_t i = 0; i < N; i++) {
            v[i] = rng_exp(&r, 20);
            /* dense: 0..29 s; sparse: a few far-apart epochs (forces the pair sort) */
            sec[i] = sparse ? (int32_t)(1700000000 + 100000 * (int32_t)rng_below(&r, 7)) : (int32_t)rng_below(&r, 30);
        }
        struct window_p99 w;
        assert_int_equal(analyze_window_p99(v, sec, N, NULL, NAN, &w), 0);
        double mean, max;
        size_t nw;
        brute_windows(v, sec, N, &mean, &max, &nw);
        assert_int_equal(w.nwindows, nw);
        assert_true(w.mean == mean);
        assert_true(w.max == max);
        double sorted[N];
        memcpy(sorted, v, sizeof sorted);
        stats_sort(sorted, N);
        assert_true(w.whole == stats_nearest_rank(sorted, N, 99));
        double scratch[N];
        assert_int_equal(analyze_window_p99(v, sec, N, scratch, 123.0, &w), 0);
        assert_true(w.whole == 123.0); /* the caller's whole-run p99 is kept */
        assert_true(w.mean == mean);
    }
    struct window_p99 w;
    assert_int_equal(analyze_window_p99(v, sec, 0, NULL, NAN, &w), KNEE_EEMPTY);
    assert_int_equal(w.nwindows, 0);
}

static void test_small_windows(void **state)
{
    (void)state;
    double v[1234];
    for (size_t i = 0; i < 1234; i++)
        v[i] = (double)(i % 100) + (double)(i / 100) * 1000; /* window i: rows 123i .. 123i+99 */
    struct small_window w[10];
    assert_int_equal(analyze_small_windows(v, 1234, 10, 100, w), 10);
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal(w[i].start, i * 123);
        assert_int_equal(w[i].len, 100);
        double sorted[100];
        memcpy(sorted, v + i * 123, sizeof sorted);
        stats_sort(sorted, 100);
        assert_true(w[i].p99 == sorted[98]);
    }
    /* short series: Python's a[i*step : i*step+100] with step = n // 10 */
    assert_int_equal(analyze_small_windows(v, 7, 10, 100, w), 10);
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal(w[i].start, 0);
        assert_int_equal(w[i].len, 7);
    }
    assert_int_equal(analyze_small_windows(v, 150, 10, 100, w), 10);
    assert_int_equal(w[9].start, 135);
    assert_int_equal(w[9].len, 15);
    assert_int_equal(analyze_small_windows(v, 0, 10, 100, w), 0);
}

static void test_python_quantile(void **state)
{
    (void)state;
    double d[200];
    for (int i = 0; i < 37; i++)
        d[i] = (double)((i + 1) * (i + 1));
    /* values from Python 3.11 statistics.quantiles(d, n=100, method=...) */
    assert_true(analyze_python_quantile(d, 37, 99, 100, true) == 1414.26); /* extrapolated */
    assert_true(analyze_python_quantile(d, 37, 99, 100, false) == 1342.72);
    assert_true(fabs(analyze_python_quantile(d, 37, 1, 100, true) - -0.86) < 1e-12);
    double two[2] = {1.5, 7.25};
    assert_true(analyze_python_quantile(two, 2, 99, 100, true) == 12.8275);
    assert_true(analyze_python_quantile(two, 2, 1, 100, true) == -4.0775);
    for (int i = 0; i < 200; i++)
        d[i] = i + 1;
    assert_true(analyze_python_quantile(d, 200, 99, 100, true) == 198.99);
    assert_true(analyze_python_quantile(d, 1, 99, 100, true) == 1.0);
    assert_true(isnan(analyze_python_quantile(d, 0, 99, 100, true)));
    assert_true(isnan(analyze_python_quantile(d, 10, 100, 100, true)));
}

static void test_checks(void **state)
{
    (void)state;
    struct mean_2sd m;
    analyze_mean_2sd(23.2, 38.5, 222.9, &m); /* the article's server A */
    assert_true(fabs(m.mean_plus_2sd - 100.2) < 1e-9);
    assert_true(m.flagged);
    assert_true(m.rel_diff < -0.5);
    analyze_mean_2sd(10, 2, 14.5, &m);
    assert_false(m.flagged);

    /* the article's first run: code takes ~2 ms, the median is 50 ms (Nagle + delayed ACK) */
    double v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = i < 700 ? 50.3 + (i % 10) * 0.1 : 2.0 + (i % 7) * 0.1;
    stats_sort(v, 1000);
    struct median_check c;
    analyze_median_check(v, 1000, 7, &c);
    assert_true(c.off);
    assert_true(c.nagle_like);
    assert_true(c.share_near_40 >= 0.69);
    analyze_median_check(v, 1000, 45, &c);
    assert_false(c.off);
    analyze_median_check(v, 1000, 400, &c); /* 8x too fast: off, not Nagle */
    assert_true(c.off);
    assert_false(c.nagle_like);
}

static uint64_t heat_sum(const struct heatmap *h)
{
    uint64_t s = 0;
    for (size_t i = 0; i < h->nbins * DBL_MAX_BUCKETS; i++)
        s += h->counts[i];
    return s;
}

static void test_heatmap(void **state)
{
    (void)state;
    struct heatmap h;
    heatmap_init(&h, 1.0);
    for (int t = 0; t < 60; t++)
        heatmap_add(&h, t + 0.5, t == 30 ? 300.0 : 5.0);
    assert_int_equal(h.width_s, 1);
    assert_int_equal(h.nbins, 60);
    assert_int_equal(heat_sum(&h), 60);
    struct heatmap_shape sh;
    uint64_t *cells = heatmap_cells(&h, 60, &sh);
    assert_int_equal(sh.ncols, 60);
    assert_int_equal(sh.bmin, 3); /* 4..8 */
    assert_int_equal(sh.bmax, 9); /* 256..512 */
    assert_int_equal(cells[30 * DBL_MAX_BUCKETS + 9], 1);
    free(cells);
    cells = heatmap_cells(&h, 20, &sh); /* three seconds per column */
    assert_int_equal(sh.ncols, 20);
    assert_int_equal(sh.col_width_s, 3);
    assert_int_equal(cells[10 * DBL_MAX_BUCKETS + 9], 1);
    assert_int_equal(cells[10 * DBL_MAX_BUCKETS + 3], 2);
    free(cells);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    heatmap_print(f, &h, 60, "ms");
    fclose(f);
    assert_non_null(strstr(buf, "256..512 ms |"));
    assert_non_null(strstr(buf, "one column = 1 s"));
    free(buf);

    /* a week, then earlier times: the bins coarsen, nothing is lost */
    for (int i = 0; i < 10000; i++)
        heatmap_add(&h, i * 60.0, 1.5);
    heatmap_add(&h, -86400.0 * 3, 0.5);
    assert_true(h.nbins <= HEATMAP_MAX_BINS);
    assert_true(h.width_s >= 256);
    assert_int_equal(heat_sum(&h), 10061);
    assert_int_equal(h.total, 10061);
    assert_true(h.lo * h.width_s <= -86400 * 3);
    heatmap_release(&h);
}

static void opts_default(struct load_opts *o)
{
    memset(o, 0, sizeof *o);
    o->column = "latency_ms";
    o->skip_s = -INFINITY;
    o->until_s = INFINITY;
    o->first_bound = 1;
    o->under = 100;
}

static void expect_load_error_n(const char *text, size_t n, const struct load_opts *o, const char *msg)
{
    struct dataset d;
    assert_int_equal(dataset_init(&d, o), 0);
    const char *p = write_file_n("bad.csv", text, n);
    int e = dataset_load(&d, p);
    if (e == 0 || !strstr(d.err, msg))
        fail_msg("'%s': got %d '%s', want '%s'", text, e, d.err, msg);
    dataset_release(&d);
}

#define expect_load_error(text, o, msg) expect_load_error_n(text, sizeof(text) - 1, o, msg)

static void test_load_errors(void **state)
{
    (void)state;
    struct load_opts o;
    opts_default(&o);
    expect_load_error("server,start_s,service_ms\nA,0,1\n", &o,
                      "bad.csv:1: no column 'latency_ms' in the header (columns: server, start_s, service_ms)");
    expect_load_error("server,start_s,latency_ms\nA,0,1\nA,0.1,abc\n", &o,
                      "bad.csv:3: latency_ms: 'abc' is not a number");
    expect_load_error("server,start_s,latency_ms\nA,0,NaN\n", &o, "bad.csv:2: latency_ms: 'NaN' is not a number (NaN)");
    expect_load_error("server,start_s,latency_ms\nA,0,inf\n", &o, "bad.csv:2: latency_ms: 'inf' is infinite");
    expect_load_error("server,start_s,latency_ms\n\nA,0,-1.5\n", &o, "bad.csv:3: latency_ms: -1.5 is negative");
    expect_load_error("server,start_s,latency_ms\nA,0,1\nA,0\n", &o, "bad.csv:3: 2 fields, but the header has 3");
    expect_load_error("", &o, "bad.csv: empty file");
    expect_load_error("server,start_s,latency_ms\nA,x,1\n", &o, "bad.csv:2: time column start_s: 'x' is not a number");
    expect_load_error("server,start_s,latency_ms\nA,0,\"1\n", &o, "bad.csv:2: end of input inside a quoted field");
    expect_load_error("a,b\n1,\0\n", &o, "unknown file type: not CSV text");
    expect_load_error("\x1f\x8b\x08\x00", &o, "gzip");
    o.by = "host";
    expect_load_error("server,start_s,latency_ms\nA,0,1\n", &o, "bad.csv:1: --by: no column 'host'");
    o.by = NULL;
    o.time = "t";
    expect_load_error("server,start_s,latency_ms\nA,0,1\n", &o, "--time: no column 't'");
    o.time = NULL;
    struct where w = {"outcome", "ok", false};
    o.where = &w;
    o.nwhere = 1;
    expect_load_error("server,start_s,latency_ms\nA,0,1\n", &o, "--where: no column 'outcome'");
    o.nwhere = 0;
    o.skip_s = 1;
    expect_load_error("server,latency_ms\nA,1\n", &o, "--skip/--until need a time column");

    struct dataset d;
    opts_default(&o);
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, "/nonexistent/x.csv"), -2);
    assert_non_null(strstr(d.err, "No such file"));
    assert_int_equal(dataset_load(&d, "run.hlog"), KNEE_EUNSUPPORTED);
    assert_non_null(strstr(d.err, "hlog input: use knee hlog"));
    dataset_release(&d);
}

static void test_load_filters_and_groups(void **state)
{
    (void)state;
    const char *p = write_file("ok.csv", "server,start_s,latency_ms,outcome\n"
                                         "B,0.5,10,ok\n"
                                         "A,1.0,20,ok\n"
                                         "\"A\",1.5,,dropped\n"
                                         "A,2.5,30,timeout\n"
                                         "B,3.0,40,ok\n"
                                         "B,9.0,50,ok\n");
    struct load_opts o;
    opts_default(&o);
    struct where w = {"outcome", "timeout", true};
    o.where = &w;
    o.nwhere = 1;
    o.skip_s = 0.75;
    o.until_s = 5;
    o.under = 25;
    struct dataset d;
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, p), 0);
    assert_int_equal(d.rows, 6);
    assert_int_equal(d.filtered_where, 1);
    assert_int_equal(d.filtered_time, 2); /* 0.5 and 9.0 */
    assert_int_equal(d.missing, 1);
    assert_int_equal(d.kept, 2);
    assert_string_equal(d.by_col, "server");
    assert_string_equal(d.time_col, "start_s");
    size_t *ord = dataset_name_order(&d);
    assert_string_equal(d.g[ord[0]]->name, "A");
    assert_string_equal(d.g[ord[1]]->name, "B");
    assert_int_equal(d.g[ord[0]]->n, 1);
    assert_int_equal(d.g[ord[0]]->under, 1);
    assert_int_equal(d.g[ord[1]]->under, 0);
    free(ord);

    struct report rep;
    struct report_opts ro = {.under = 25};
    assert_int_equal(report_build(&rep, &d, &ro), 0);
    assert_string_equal(rep.all.name, "A+B");
    assert_true(rep.all.s.p50 == 20);
    assert_true(rep.all.s.max == 40);
    assert_true(rep.groups_mean_p99 == 30);
    assert_true(rep.nwarnings >= 1);
    assert_non_null(strstr(rep.warnings[0], "1 row had no latency_ms value"));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_print_text(f, &rep);
    fclose(f);
    assert_non_null(strstr(
        buf, "rows: 6 read, 2 analysed; left out: 1 by --where, 2 by --skip/--until, 1 without a latency_ms value"));
    assert_non_null(
        strstr(buf, "p99 A = 20.0  p99 B = 40.0  average of the two = 30.0  real p99 of all requests = 40.0"));
    assert_non_null(strstr(buf, "A+B: 1 of 2 = 50.00%"));
    free(buf);
    report_release(&rep);
    dataset_release(&d);

    /* --by file, and a file without a group or time column */
    const char *p2 = write_file("plain.csv", "latency_ms\n1\n2\n3\n");
    opts_default(&o);
    o.by = "file";
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, p), 0);
    assert_int_equal(dataset_load(&d, p2), 0);
    assert_int_equal(d.ng, 2);
    assert_false(d.has_time);
    assert_string_equal(d.g[1]->name, p2);
    assert_int_equal(d.g[1]->n, 3);
    dataset_release(&d);
    opts_default(&o);
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, p2), 0);
    assert_int_equal(d.ng, 1);
    assert_string_equal(d.g[0]->name, DATASET_ALL_GROUP);
    assert_int_equal(dataset_load(&d, p), KNEE_EMISMATCH); /* now a server column appears */
    dataset_release(&d);
}

/* Group names come from CSV cells: a CR, LF or ESC in one prints escaped in the text (never a
 * raw control byte on the terminal), stays exact in the report, and the JSON escapes it. */
static void test_text_escapes_names(void **state)
{
    (void)state;
    const char *p = write_file("ctl.csv", "server,latency_ms\n"
                                          "\"a\r\nb\",1\n"
                                          "\"a\r\nb\",2\n"
                                          "\x1b[2Jx,3\n"
                                          "\x1b[2Jx,4\n");
    struct load_opts o;
    opts_default(&o);
    struct dataset d;
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, p), 0);
    struct report rep;
    struct report_opts ro = {.under = 25};
    assert_int_equal(report_build(&rep, &d, &ro), 0);
    assert_int_equal(rep.ng, 2);
    assert_string_equal(rep.groups[0].name, "\x1b[2Jx"); /* name order: ESC sorts first */
    assert_string_equal(rep.groups[1].name, "a\r\nb");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_print_text(f, &rep);
    fclose(f);
    assert_null(strchr(buf, '\x1b'));
    assert_null(strchr(buf, '\r'));
    assert_non_null(strstr(buf, "\n\\x1b[2Jx "));       /* the table's first row */
    assert_non_null(strstr(buf, "\na\\r\\nb "));        /* the second */
    assert_non_null(strstr(buf, "\\x1b[2Jx+a\\r\\nb")); /* all together */
    for (char *line = buf; (line = strchr(line, '\n')) != NULL; line++)
        assert_true(line[1] != 'b'); /* no line begins with the tail of a split name */
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    report_print_json(f, &rep, false);
    fclose(f);
    assert_null(strchr(buf, '\x1b'));
    assert_non_null(strstr(buf, "\"a\\r\\nb\""));
    assert_non_null(strstr(buf, "\\u001b[2Jx"));
    free(buf);
    report_release(&rep);
    dataset_release(&d);
}

static void test_load_binary_log(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/run.bin", tmpdir);
    const char *names[] = {"api", "db"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path, names, 2, 0), 0);
    for (uint32_t i = 0; i < 100; i++) {
        struct reqlog_record r = {
            .planned_ns = (uint64_t)i * 100000000ull,
            .sent_ns = (uint64_t)i * 100000000ull + 1000,
            .first_byte_ns = (uint64_t)i * 100000000ull + 2000000,
            .done_ns = (uint64_t)i * 100000000ull + 5000000 + i * 1000000ull,
            .target = i % 2,
            .status = 200,
            .outcome = i == 8 ? OUTCOME_DROPPED : OUTCOME_OK,
            .flags = i < 10 ? REQLOG_FLAG_WARMUP : 0,
        };
        if (i == 8)
            r.sent_ns = r.first_byte_ns = r.done_ns = 0;
        assert_int_equal(reqlog_write(w, &r), 0);
    }
    assert_int_equal(reqlog_writer_close(w), 0);
    struct load_opts o;
    opts_default(&o);
    struct dataset d;
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, path), 0);
    assert_int_equal(d.rows, 100);
    assert_int_equal(d.filtered_warmup, 10);
    assert_int_equal(d.kept, 90);
    assert_int_equal(d.ng, 2);
    assert_string_equal(d.g[0]->name, "api"); /* record 10 (the first after warm-up) targets api */
    assert_true(d.g[0]->v[0] == 15.0);        /* 5 ms + 10 ms */
    dataset_release(&d);

    o.keep_warmup = true;
    o.column = "ttfb_ms";
    struct where wh = {"server", "api", false};
    o.where = &wh;
    o.nwhere = 1;
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, path), 0);
    assert_int_equal(d.kept, 49); /* 50 api requests, one dropped (no ttfb) */
    assert_int_equal(d.missing, 1);
    assert_true(d.g[0]->v[0] == 1.999);
    dataset_release(&d);

    o.column = "outcome";
    o.nwhere = 0;
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, path), KNEE_ENOTFOUND);
    assert_non_null(strstr(d.err, "no numeric column 'outcome'"));
    dataset_release(&d);
}

/* knee's CSV marks the warm-up in its warmup column: left out and counted by default, kept
 * with keep_warmup; a cell other than 0, 1 or empty is an error naming the line. A foreign
 * CSV without the column is not a knee log. */
static void test_csv_warmup_column(void **state)
{
    (void)state;
    struct load_opts o;
    opts_default(&o);
    const char *p = write_file("warm.csv", "server,start_s,latency_ms,warmup\n"
                                           "A,0.1,50,1\n"
                                           "A,0.2,40,1\n"
                                           "A,1.1,3,0\n"
                                           "A,1.2,4,\n"
                                           "A,1.3,5,0\n");
    struct dataset d;
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, p), 0);
    assert_int_equal(d.rows, 5);
    assert_int_equal(d.filtered_warmup, 2);
    assert_int_equal(d.kept, 3);
    assert_true(d.knee_log);
    dataset_release(&d);
    o.keep_warmup = true;
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, p), 0);
    assert_int_equal(d.kept, 5);
    assert_int_equal(d.filtered_warmup, 0);
    dataset_release(&d);
    opts_default(&o);
    expect_load_error("server,start_s,latency_ms,warmup\nA,0,1,0\nA,0,1,yes\n", &o,
                      "bad.csv:3: warmup: 'yes' is not 0 or 1");
    p = write_file("plain.csv", "server,start_s,latency_ms\nA,0.1,3\n");
    assert_int_equal(dataset_init(&d, &o), 0);
    assert_int_equal(dataset_load(&d, p), 0);
    assert_false(d.knee_log);
    dataset_release(&d);
}

/* Rows in completion order (as knee run writes them) are put in time order before the small
 * windows are cut, stably; the report is the same as from the rows in order. The as-knee-run
 * numbers appear only for knee logs and equal an HdrHistogram of the same nanoseconds. */
static void test_time_order_and_as_run(void **state)
{
    (void)state;
    /* 300 rows of one server; value = 1 + row index in time order; written with every pair
     * of neighbours swapped */
    char *text = malloc(300 * 64 + 64), *ordered = malloc(300 * 64 + 64);
    size_t k = 0, m = 0;
    k += (size_t)sprintf(text, "server,start_s,latency_ms,warmup\n");
    m += (size_t)sprintf(ordered, "server,start_s,latency_ms,warmup\n");
    for (int i = 0; i < 300; i++) {
        int j = i % 2 ? i - 1 : i + 1; /* 1,0,3,2,... */
        k += (size_t)sprintf(text + k, "A,%.3f,%d.25,0\n", j * 0.01, j + 1);
        m += (size_t)sprintf(ordered + m, "A,%.3f,%d.25,0\n", i * 0.01, i + 1);
    }
    const char *p1 = write_file("swapped.csv", text), *p2 = write_file("ordered.csv", ordered);
    struct load_opts o;
    opts_default(&o);
    struct report rep[2];
    struct report_opts ro = {.under = 100};
    for (int f = 0; f < 2; f++) {
        struct dataset d;
        assert_int_equal(dataset_init(&d, &o), 0);
        assert_int_equal(dataset_load(&d, f ? p2 : p1), 0);
        assert_int_equal(d.unordered, f ? 0 : 150);
        dataset_finish(&d);
        for (size_t i = 0; i < d.g[0]->n; i++)
            assert_true(d.g[0]->v[i] == (double)i + 1.25); /* time order */
        assert_int_equal(report_build(&rep[f], &d, &ro), 0);
        assert_true(rep[f].has_as_run);
        dataset_release(&d);
    }
    assert_int_equal(rep[0].nsmall, rep[1].nsmall);
    for (size_t i = 0; i < rep[0].nsmall; i++)
        assert_true(rep[0].small[i].p99 == rep[1].small[i].p99);
    assert_int_equal(rep[0].unordered, 150);
    /* knee run's numbers: HdrHistogram of the integer ns, 3 digits */
    struct hdr h;
    assert_int_equal(hdr_init(&h, REPORT_RUN_HDR_LOWEST, REPORT_RUN_HDR_HIGHEST, REPORT_RUN_HDR_DIGITS), 0);
    for (int i = 0; i < 300; i++)
        hdr_record(&h, (int64_t)(i + 1) * 1000000 + 250000, 1);
    const struct summary *a = &rep[0].all.as_run;
    assert_int_equal(a->count, 300);
    assert_true(a->p99 == (double)hdr_value_at_percentile(&h, 99) / 1e6);
    assert_true(a->max == (double)hdr_max(&h) / 1e6);
    assert_true(a->min == (double)hdr_min(&h) / 1e6);
    assert_true(a->p99 >= rep[0].all.s.p99 && a->p99 <= rep[0].all.s.p99 * (1 + 1.0 / 1024));
    hdr_release(&h);
    report_release(&rep[0]);
    report_release(&rep[1]);
    free(text);
    free(ordered);
}

/* Approx mode against exact mode on the same data: HDR's 3 digits bound the difference. */
static void test_approx_close_to_exact(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 11);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fputs("server,start_s,latency_ms\n", f);
    for (int i = 0; i < 20000; i++)
        fprintf(f, "%s,%.4f,%.3f\n", i % 3 ? "B" : "A", i * 0.003, rng_lognormal(&r, 2.5, 0.8));
    fclose(f);
    const char *p = write_file("approx.csv", text);
    free(text);
    struct report rep[2];
    struct dataset d[2];
    for (int m = 0; m < 2; m++) {
        struct load_opts o;
        opts_default(&o);
        o.approx = m == 1;
        assert_int_equal(dataset_init(&d[m], &o), 0);
        assert_int_equal(dataset_load(&d[m], p), 0);
        dataset_finish(&d[m]);
        struct report_opts ro = {.under = 100};
        if (m == 1) {
            dataset_begin_pass2(&d[m], (size_t)report_small_window_group(&d[m], &ro), 10, 100);
            assert_int_equal(dataset_load(&d[m], p), 0);
            assert_int_equal(d[m].rows, 20000); /* the second pass does not count again */
        }
        assert_int_equal(report_build(&rep[m], &d[m], &ro), 0);
    }
    const struct summary *e = &rep[0].all.s, *a = &rep[1].all.s;
    assert_int_equal(a->count, e->count);
    assert_true(a->min == e->min && a->max == e->max);
    assert_true(fabs(a->mean - e->mean) < 1e-9 * e->mean);
    assert_true(fabs(a->stdev - e->stdev) < 1e-9 * e->stdev);
    double ev[5] = {e->p50, e->p90, e->p95, e->p99, e->p999}, av[5] = {a->p50, a->p90, a->p95, a->p99, a->p999};
    for (int i = 0; i < 5; i++)
        assert_true(fabs(av[i] - ev[i]) <= 1e-3 * ev[i] + 1e-3);
    for (int i = 0; i < 10; i++) /* the small windows are exact in both modes */
        assert_true(rep[1].small[i].p99 == rep[0].small[i].p99);
    for (size_t g = 0; g < 2; g++) {
        assert_int_equal(rep[1].groups[g].win.nwindows, rep[0].groups[g].win.nwindows);
        assert_true(fabs(rep[1].groups[g].win.mean - rep[0].groups[g].win.mean) <= 0.01 * rep[0].groups[g].win.mean);
        assert_int_equal(rep[1].groups[g].under, rep[0].groups[g].under);
    }
    assert_true(rep[1].prom_est[2].estimate == rep[0].prom_est[2].estimate); /* buckets are exact */
    for (int m = 0; m < 2; m++) {
        report_release(&rep[m]);
        dataset_release(&d[m]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_p99_dense_and_sparse),
        cmocka_unit_test(test_small_windows),
        cmocka_unit_test(test_python_quantile),
        cmocka_unit_test(test_checks),
        cmocka_unit_test(test_heatmap),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_load_filters_and_groups),
        cmocka_unit_test(test_text_escapes_names),
        cmocka_unit_test(test_load_binary_log),
        cmocka_unit_test(test_approx_close_to_exact),
        cmocka_unit_test(test_csv_warmup_column),
        cmocka_unit_test(test_time_order_and_as_run),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
