/* `knee stats FILE...`: every number a latency dashboard shows, and the ones it hides, from
 * per-request CSV files or knee's binary request logs. Parsing options and orchestrating
 * load -> report -> print; the work is in src/analyze. */
#include "analyze/dataset.h"
#include "analyze/report.h"
#include "cli/commands.h"
#include "cli/opt.h"
#include "core/units.h"
#include "core/clock.h"
#include "core/err.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char epilog[] =
    "Input: CSV with a header (comma, quoted fields, CRLF) or knee's binary request log\n"
    "(knee run --out x.bin); several files are concatenated in order. Files named *.hlog are\n"
    "HdrHistogram interval logs: they go to knee hlog stats (--from/--to/--json). Empty cells in the column (a dropped "
    "request has no\n"
    "latency) are counted and left out; every other bad cell stops with FILE:LINE, exit 2.\n"
    "\n"
    "Output, per group and for all groups together (named A+B...): 1 count, mean, stdev and\n"
    "nearest-rank percentiles; 2 a doubling-bucket histogram; 3 p99 by nearest rank and Python's\n"
    "statistics.quantiles exclusive/inclusive; 4 the average of the groups' p99s and of per-second\n"
    "p99s against the real p99; 5 Prometheus histogram_quantile estimates; 6 the share under a\n"
    "threshold; 7 p99 of ten 100-row windows; 8 95% confidence intervals of p99 and p99.9 and a\n"
    "warning when fewer than 10 values lie beyond a percentile; 9 mean + 2 stdev against p99;\n"
    "10 a heatmap over time; 11 with --expect-median, a check of the median against the code.\n"
    "--json prints all of it as one object (docs/FORMATS.md).\n"
    "\n"
    "examples:\n"
    "  knee stats open.csv\n"
    "  knee stats open.csv --column service_ms --skip 2s\n"
    "  knee stats run.bin --where outcome=ok --by server --json\n"
    "  knee stats a.csv b.csv --by file --under 250ms --buckets 5,10,25,50,100,250,500\n"
    "  knee stats huge.csv --approx\n"
    "\n"
    "exit codes: 0 ok, 2 usage or bad input (the message names the file and line)\n";

/* A threshold in the column's unit: a plain number, or a duration converted to that unit. */
static int parse_in_unit(const struct cmd_spec *spec, const char *flag, const char *s, const char *unit, double *out)
{
    if (units_parse_double(s, out) == 0) {
        if (!(*out >= 0))
            return opt_fail(spec, "--%s: '%s' must not be negative", flag, s);
        return 0;
    }
    uint64_t ns;
    if (units_parse_duration_ns(s, NS_PER_MS, &ns) != 0)
        return opt_fail(spec, "--%s: '%s' is not a number or a duration such as 100ms", flag, s);
    if (strcmp(unit, "ms") == 0)
        *out = (double)ns / 1e6;
    else if (strcmp(unit, "s") == 0)
        *out = (double)ns / 1e9;
    else if (strcmp(unit, "us") == 0)
        *out = (double)ns / 1e3;
    else
        return opt_fail(spec, "--%s: '%s' is a duration, but the column has no time unit: give a plain number", flag,
                        s);
    return 0;
}

static const char *column_unit(const char *column)
{
    size_t n = strlen(column);
    if (n > 3 && strcmp(column + n - 3, "_ms") == 0)
        return "ms";
    if (n > 3 && strcmp(column + n - 3, "_us") == 0)
        return "us";
    if (n > 2 && strcmp(column + n - 2, "_s") == 0)
        return "s";
    return "";
}

static bool is_hlog(const char *arg)
{
    size_t n = strlen(arg);
    return arg[0] != '-' && n > 5 && strcmp(arg + n - 5, ".hlog") == 0;
}

int cmd_stats(int argc, char **argv)
{
    /* Interval logs hold histograms, not requests: their summary is knee hlog stats. */
    for (int i = 1; i < argc; i++)
        if (is_hlog(argv[i]))
            return cmd_hlog_stats(argc, argv);
    const char *column = "latency_ms", *by = NULL, *time_col = NULL, *buckets = NULL, *under_s = "100";
    const char *window_group = NULL, *expect_median_s = NULL;
    uint64_t skip_ns = 0, until_ns = 0;
    bool json = false, approx = false, keep_warmup = false;
    struct strlist where = {0};
    struct opt opts[] = {
        {"column", 'c', OPT_STR, &column, "COL",
         "the value column (default latency_ms; service_ms, ttfb_ms, lag_ms ...)", 0, NULL, false},
        {"by", 0, OPT_STR, &by, "COL",
         "group by this column (default: server when present); 'file' groups by input file", 0, NULL, false},
        {"time", 0, OPT_STR, &time_col, "COL", "time column in seconds since the start (default: start_s when present)",
         0, NULL, false},
        {"skip", 0, OPT_DURATION, &skip_ns, "D", "leave out rows whose time is in the first D (warm-up), e.g. 2s", 0,
         NULL, false},
        {"until", 0, OPT_DURATION, &until_ns, "D", "leave out rows whose time is D or later", 0, NULL, false},
        {"where", 'w', OPT_LIST, &where, "COL=VALUE",
         "keep rows whose cell equals VALUE (COL!=VALUE: differs); repeatable, all must hold", 0, NULL, false},
        {"under", 0, OPT_STR, &under_s, "D",
         "threshold of the share-under section (default 100 = 100ms for a _ms column)", 0, NULL, false},
        {"buckets", 0, OPT_STR, &buckets, "LIST",
         "Prometheus bucket bounds in the column's unit (default 5,10,25,...,10000)", 0, NULL, false},
        {"window-group", 0, OPT_STR, &window_group, "G",
         "the group whose ten 100-row windows are shown (default: first by name)", 0, NULL, false},
        {"expect-median", 0, OPT_STR, &expect_median_s, "D",
         "what the code should take: warn when the median is 3x off", 0, NULL, false},
        {"approx", 0, OPT_FLAG, &approx, NULL,
         "HDR histograms in constant memory instead of every value (for inputs larger than memory)", 0, NULL, false},
        {"keep-warmup", 0, OPT_FLAG, &keep_warmup, NULL,
         "binary logs: keep requests flagged warm-up (left out by default)", 0, NULL, false},
        {"json", 0, OPT_FLAG, &json, NULL, "print every number as one JSON object", 0, NULL, false},
    };
    struct cmd_spec spec = {
        .name = "stats",
        .usage = "[options] FILE...",
        .summary = "Every number a latency dashboard shows, and the ones it hides, from per-request CSV or knee logs.",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = epilog,
        .min_args = 1,
        .max_args = SIZE_MAX,
    };
    struct strlist files = {0};
    int rc = opt_parse(&spec, argc, argv, &files);
    if (rc) {
        strlist_release(&files);
        strlist_release(&where);
        return rc == 1 ? 0 : rc;
    }

    const char *unit = column_unit(column);
    struct report_opts ropts = {.window_group = window_group};
    double prom_bounds[PROM_MAX_BOUNDS];
    size_t nprom = 0;
    struct where *w = xcalloc(where.n ? where.n : 1, sizeof *w);
    size_t nw = 0;
    struct dataset d;
    bool d_init = false;
    struct report rep;
    bool rep_init = false;
    rc = 2;

    if ((rc = parse_in_unit(&spec, "under", under_s, unit, &ropts.under)) != 0)
        goto out;
    rc = 2;
    if (expect_median_s) {
        ropts.expect_median = true;
        uint64_t ns;
        double v;
        if (units_parse_double(expect_median_s, &v) == 0 && v > 0) {
            ropts.expect_median_ms = v;
        } else if (units_parse_duration_ns(expect_median_s, NS_PER_MS, &ns) == 0 && ns > 0) {
            ropts.expect_median_ms = (double)ns / 1e6;
        } else {
            opt_fail(&spec, "--expect-median: '%s' is not a duration such as 7ms", expect_median_s);
            goto out;
        }
        if (strcmp(unit, "ms") != 0) {
            opt_fail(&spec, "--expect-median needs a column in milliseconds (this one is %s)", column);
            goto out;
        }
    }
    if (buckets) {
        if (prom_parse_bounds(buckets, prom_bounds, &nprom) != 0) {
            opt_fail(&spec, "--buckets: '%s' is not an increasing list of at most %d numbers such as 5,10,25", buckets,
                     PROM_MAX_BOUNDS);
            goto out;
        }
        ropts.custom_buckets = true;
    }
    for (size_t i = 0; i < where.n; i++) {
        if (where_parse(where.v[i], &w[nw]) != 0) {
            opt_fail(&spec, "--where: '%s' is not COL=VALUE or COL!=VALUE", where.v[i]);
            goto out;
        }
        nw++;
    }
    if (until_ns && until_ns <= skip_ns) {
        opt_fail(&spec, "--until must be later than --skip");
        goto out;
    }

    struct load_opts lo = {
        .column = column,
        .by = by,
        .time = time_col,
        .skip_s = opt_find(&spec, "skip")->seen ? (double)skip_ns / 1e9 : -INFINITY,
        .until_s = opt_find(&spec, "until")->seen ? (double)until_ns / 1e9 : INFINITY,
        .where = w,
        .nwhere = nw,
        .approx = approx,
        .keep_warmup = keep_warmup,
        .first_bound = 1.0,
        .under = ropts.under,
        .prom_bounds = buckets ? prom_bounds : NULL,
        .nprom = nprom,
    };
    if (dataset_init(&d, &lo) != 0) {
        opt_fail(&spec, "--buckets: invalid bounds");
        goto out;
    }
    d_init = true;
    for (size_t i = 0; i < files.n; i++) {
        if (dataset_load(&d, files.v[i]) != 0) {
            opt_fail(&spec, "%s", d.err);
            goto out;
        }
    }
    if (d.kept == 0) {
        if (d.rows == 0 && d.missing == 0)
            opt_fail(&spec, "%s: no data rows (only a header)", files.n == 1 ? files.v[0] : "the inputs");
        else
            opt_fail(&spec,
                     "no values left to analyse: %llu rows read, %llu left out by --where, %llu by --skip/--until, "
                     "%llu warm-up, %llu without a %s value",
                     (unsigned long long)d.rows, (unsigned long long)d.filtered_where,
                     (unsigned long long)d.filtered_time, (unsigned long long)d.filtered_warmup,
                     (unsigned long long)d.missing, column);
        goto out;
    }
    dataset_finish(&d);
    long small_gi = report_small_window_group(&d, &ropts);
    if (small_gi < 0) {
        opt_fail(&spec, "--window-group: no group named '%s'", window_group);
        goto out;
    }
    if (approx) {
        /* the ten windows sit at fractions of the group's length, known only now: read again */
        dataset_begin_pass2(&d, (size_t)small_gi, REPORT_SMALL_WINDOWS, REPORT_SMALL_WINDOW_LEN);
        for (size_t i = 0; i < files.n; i++) {
            if (dataset_load(&d, files.v[i]) != 0) {
                opt_fail(&spec, "%s (second pass)", d.err);
                goto out;
            }
        }
    }
    int e = report_build(&rep, &d, &ropts);
    rep_init = true;
    if (e) {
        opt_fail(&spec, "%s", knee_strerror(e));
        goto out;
    }
    if (json)
        report_print_json(stdout, &rep, true);
    else
        report_print_text(stdout, &rep);
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    if (rep_init)
        report_release(&rep);
    if (d_init)
        dataset_release(&d);
    for (size_t i = 0; i < nw; i++)
        free((void *)w[i].col);
    free(w);
    strlist_release(&files);
    strlist_release(&where);
    return rc;
}
