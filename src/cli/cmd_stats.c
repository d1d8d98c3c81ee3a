/* `knee stats FILE...`: every number a latency dashboard shows, and the ones it hides, from
 * per-request CSV files or knee's binary request logs. The flags are checked into the
 * options of a dataset and a report (stats_plan), the files loaded (load_inputs), the report
 * built and printed; the work is in src/analyze. Files named *.hlog go to knee hlog stats. */
#include "analyze/dataset.h"
#include "analyze/report.h"
#include "cli/commands.h"
#include "cli/io_check.h"
#include "cli/opt.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "html/html.h"
#include "merge/merge.h"
#include "record/record.h"

#include <jansson.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char epilog[] =
    "Input: CSV with a header (comma, quoted fields, CRLF) or knee's binary request log\n"
    "(knee run --out x.bin); several files are concatenated in order; '-' reads standard input\n"
    "(stored in a temporary file first, removed at once, so --approx can read it twice). Rows\n"
    "may come in any order (knee run writes them as requests complete): the values are put in\n"
    "time order (the time column) before the ten 100-row windows are cut. Rows knee marked\n"
    "warm-up (the binary flag, the CSV's warmup column) are left out and counted unless\n"
    "--keep-warmup. On knee's own logs (the binary log, or a CSV with knee's warmup column) and\n"
    "a _ms column, section 1 also shows the numbers as knee run summarises them (HdrHistogram,\n"
    "3 significant digits: at most 1/1024 above the exact ones). Files named *.hlog are\n"
    "HdrHistogram interval logs: they go to knee hlog stats (--from/--to/--json); several: the\n"
    "hlogs of every shard of one run, summarised as knee merge --hlog merges them. Empty cells\n"
    "in the column (a dropped request has no latency) are counted and left out; every other bad\n"
    "cell stops with FILE:LINE, exit 2.\n"
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
    "--html FILE replaces an existing file only once the report is written whole (a failure\n"
    "keeps the old one); a device or FIFO is written in place, never removed.\n"
    "exit codes: 0 ok, 1 an output that could not be written, 2 usage or bad input (the message\n"
    "names the file and line)\n";

/* The flags as given. */
struct stats_flags {
    const char *column, *by, *time_col, *buckets, *under, *window_group, *expect_median, *html;
    uint64_t skip_ns, until_ns;
    bool json, approx, keep_warmup;
    struct strlist where;
};

/* What the flags ask for, checked: how to load (lo) and what to report (ro). */
struct stats_plan {
    struct load_opts lo;
    struct report_opts ro;
    double prom_bounds[PROM_MAX_BOUNDS];
    struct where *where; /* lo.where; each where[i].col is a heap copy */
};

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

/* --expect-median: milliseconds (a bare number or a duration), for a column in ms only. */
static int parse_expect_median(const struct cmd_spec *spec, const struct stats_flags *f, struct report_opts *ro)
{
    uint64_t ns;
    double v;
    ro->expect_median = true;
    if (units_parse_double(f->expect_median, &v) == 0 && v > 0)
        ro->expect_median_ms = v;
    else if (units_parse_duration_ns(f->expect_median, NS_PER_MS, &ns) == 0 && ns > 0)
        ro->expect_median_ms = (double)ns / 1e6;
    else
        return opt_fail(spec, "--expect-median: '%s' is not a duration such as 7ms", f->expect_median);
    if (strcmp(report_column_unit(f->column), "ms") != 0)
        return opt_fail(spec, "--expect-median needs a column in milliseconds (this one is %s)", f->column);
    return 0;
}

/* --where COL=VALUE, every one of them, into p->where. */
static int parse_where(const struct cmd_spec *spec, const struct strlist *where, struct stats_plan *p)
{
    for (size_t i = 0; i < where->n; i++) {
        if (where_parse(where->v[i], &p->where[p->lo.nwhere]) != 0)
            return opt_fail(spec, "--where: '%s' is not COL=VALUE or COL!=VALUE", where->v[i]);
        p->lo.nwhere++;
    }
    return 0;
}

static void plan_release(struct stats_plan *p)
{
    for (size_t i = 0; i < p->lo.nwhere; i++)
        free((void *)p->where[i].col);
    free(p->where);
    p->where = NULL;
}

/* Check the flags, in the order of the first fault reported, into *p (always release it).
 * 0, or 2 after the message. */
static int plan_init(const struct cmd_spec *spec, const struct stats_flags *f, struct stats_plan *p)
{
    memset(p, 0, sizeof *p);
    p->where = xcalloc(f->where.n ? f->where.n : 1, sizeof *p->where);
    p->ro.window_group = f->window_group;
    int rc = parse_in_unit(spec, "under", f->under, report_column_unit(f->column), &p->ro.under);
    if (rc == 0 && f->expect_median)
        rc = parse_expect_median(spec, f, &p->ro);
    if (rc == 0 && f->buckets) {
        if (prom_parse_bounds(f->buckets, p->prom_bounds, &p->lo.nprom) != 0)
            rc = opt_fail(spec, "--buckets: '%s' is not an increasing list of at most %d numbers such as 5,10,25",
                          f->buckets, PROM_MAX_BOUNDS);
        else if (p->prom_bounds[0] < 0) /* increasing: the first is the smallest */
            rc = opt_fail(spec,
                          "--buckets: '%s': a bound below 0 (%g) can count nothing, since knee stats refuses "
                          "negative values",
                          f->buckets, p->prom_bounds[0]);
        p->ro.custom_buckets = true;
        p->lo.prom_bounds = p->prom_bounds;
    }
    if (rc == 0)
        rc = parse_where(spec, &f->where, p);
    if (rc == 0 && f->until_ns && f->until_ns <= f->skip_ns)
        rc = opt_fail(spec, "--until must be later than --skip");
    p->lo.column = f->column;
    p->lo.by = f->by;
    p->lo.time = f->time_col;
    p->lo.skip_s = opt_find(spec, "skip")->seen ? (double)f->skip_ns / 1e9 : -INFINITY;
    p->lo.until_s = opt_find(spec, "until")->seen ? (double)f->until_ns / 1e9 : INFINITY;
    p->lo.where = p->where;
    p->lo.approx = f->approx;
    p->lo.keep_warmup = f->keep_warmup;
    p->lo.first_bound = 1.0;
    p->lo.under = p->ro.under;
    return rc;
}

/* "no values left to analyse", with where every row went. */
static int fail_empty(const struct cmd_spec *spec, const struct dataset *d, const struct strlist *files,
                      const char *column)
{
    if (d->rows == 0 && d->missing == 0)
        return opt_fail(spec, "%s: no data rows (only a header)", files->n == 1 ? files->v[0] : "the inputs");
    return opt_fail(spec,
                    "no values left to analyse: %llu row%s read, %llu left out by --where, %llu by --skip/--until, "
                    "%llu warm-up, %llu without a %s value",
                    (unsigned long long)d->rows, d->rows == 1 ? "" : "s", (unsigned long long)d->filtered_where,
                    (unsigned long long)d->filtered_time, (unsigned long long)d->filtered_warmup,
                    (unsigned long long)d->missing, column);
}

/* Standard input ("-") is copied once into a temporary file that is unlinked at once (so
 * nothing is left behind, whatever happens) and read through /proc/self/fd: the readers then
 * see a file, --approx can read it twice, and messages still say "-". */
struct spool {
    int fd;
    char path[64];
};

/* Copy standard input into s. 0, or the exit code after the message (1: it could not be
 * stored). */
static int spool_stdin(const struct cmd_spec *spec, struct spool *s)
{
    const char *dir = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/knee-stats-stdin-XXXXXX", dir && *dir ? dir : "/tmp");
    s->fd = mkostemp(tmpl, O_CLOEXEC);
    if (s->fd < 0) {
        opt_fail(spec, "-: cannot store standard input in %s: %s", dir && *dir ? dir : "/tmp", strerror(errno));
        return 1;
    }
    unlink(tmpl); /* ours alone: made with O_EXCL by mkostemp, gone when the descriptor closes */
    snprintf(s->path, sizeof s->path, "/proc/self/fd/%d", s->fd);
    char buf[1 << 16];
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            opt_fail(spec, "-: reading standard input: %s", strerror(errno));
            return 1;
        }
        if (n == 0)
            return 0;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(s->fd, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                opt_fail(spec, "-: cannot store standard input in %s: %s", dir && *dir ? dir : "/tmp",
                         w < 0 ? strerror(errno) : "short write");
                return 1;
            }
            off += w;
        }
    }
}

/* One input: a file, or "-" through its spool. */
static int load_one(struct dataset *d, const char *arg, const struct spool *s)
{
    return strcmp(arg, "-") == 0 ? dataset_load_named(d, s->path, "-") : dataset_load(d, arg);
}

/* The log of the run whose JSON is at path: STEM.bin or STEM.csv beside it, else the --out
 * its environment.args name (args: the JSON's root); "" when neither. */
static void run_log_of(const char *path, json_t *root, char *log, size_t len)
{
    log[0] = '\0';
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dot = strrchr(base, '.');
    int stem = (int)(dot && dot != base ? (size_t)(dot - path) : strlen(path));
    static const char *const exts[] = {".bin", ".csv"};
    for (size_t i = 0; i < 2; i++) {
        struct stat st;
        snprintf(log, len, "%.*s%s", stem, path, exts[i]);
        if (stat(log, &st) == 0 && S_ISREG(st.st_mode))
            return;
    }
    log[0] = '\0';
    json_t *args = json_object_get(json_object_get(root, "environment"), "args");
    for (size_t i = 0; i + 1 < json_array_size(args); i++) {
        const char *a = json_string_value(json_array_get(args, i));
        const char *v = json_string_value(json_array_get(args, i + 1));
        if (a && v && strcmp(a, "--out") == 0)
            snprintf(log, len, "%s", v);
    }
}

/* A JSON given as input: knee stats reads per-request data, which no JSON holds; say what to
 * give it instead. 0 when path is not JSON, else 2 after the message. */
static int json_input(const struct cmd_spec *spec, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* the loader says why */
    char head[64];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    size_t i = n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    while (i < n && strchr(" \t\r\n", head[i]))
        i++;
    if (i >= n || head[i] != '{')
        return 0;
    json_t *root = json_load_file(path, 0, NULL);
    const char *schema = json_string_value(json_object_get(root, "schema"));
    int rc;
    if (record_schema_readable(schema)) {
        char log[4200];
        run_log_of(path, root, log, sizeof log);
        if (log[0])
            rc = opt_fail(
                spec, "%s: a knee run's JSON summary holds no per-request data: give knee stats that run's log (%s)",
                path, log);
        else
            rc = opt_fail(spec,
                          "%s: a knee run's JSON summary holds no per-request data: give knee stats that run's log "
                          "(knee run --out FILE.bin or FILE.csv writes it)",
                          path);
    } else {
        rc = opt_fail(spec,
                      "%s: a JSON file%s%s%s holds no per-request data: give knee stats a CSV or knee's binary log",
                      path, schema ? " (schema " : "", schema ? schema : "", schema ? ")" : "");
    }
    json_decref(root);
    return rc;
}

/* Every file into *d (dataset_init'ed by the caller), then, with --approx, the second pass
 * for the small windows. 0, or 2 after a message naming the file and line. */
static int load_inputs(const struct cmd_spec *spec, const struct stats_plan *p, const struct strlist *files,
                       struct dataset *d, const struct spool *s)
{
    for (size_t i = 0; i < files->n; i++) {
        if (strcmp(files->v[i], "-") != 0 && json_input(spec, files->v[i]))
            return 2;
        if (load_one(d, files->v[i], s) != 0)
            return opt_fail(spec, "%s", d->err);
    }
    if (d->kept == 0)
        return fail_empty(spec, d, files, p->lo.column);
    dataset_finish(d);
    long small_gi = report_small_window_group(d, &p->ro);
    if (small_gi == REPORT_NO_GROUP)
        return opt_fail(spec, "--window-group: no group named '%s'", p->ro.window_group);
    if (!p->lo.approx)
        return 0;
    /* the ten windows sit at fractions of the group's length, known only now: read again */
    dataset_begin_pass2(d, (size_t)small_gi, REPORT_SMALL_WINDOWS, REPORT_SMALL_WINDOW_LEN);
    for (size_t i = 0; i < files->n; i++)
        if (load_one(d, files->v[i], s) != 0)
            return opt_fail(spec, "%s (second pass)", d->err);
    return 0;
}

/* --html FILE: the report of the inputs (knee report's charts) with the text knee stats printed
 * as the summary of a single input. 0, 2 (an input the report cannot read) or 1 (the file
 * could not be written), after one line naming the flag. */
static int write_html(const struct cmd_spec *spec, const struct stats_flags *f, const struct strlist *files,
                      const struct spool *s, const char *text)
{
    const char **paths = xcalloc(files->n + 1, sizeof *paths);
    for (size_t i = 0; i < files->n; i++)
        paths[i] = strcmp(files->v[i], "-") == 0 ? s->path : files->v[i];
    char name[256] = "";
    if (files->n == 1) { /* the file's name without its directory and extension */
        const char *base = strrchr(files->v[0], '/') ? strrchr(files->v[0], '/') + 1 : files->v[0];
        snprintf(name, sizeof name, "%s", strcmp(base, "-") == 0 ? "stdin" : base);
        char *dot = strrchr(name, '.');
        if (dot && dot != name)
            *dot = '\0';
    }
    struct html_write_opts h = {.name = files->n == 1 ? name : NULL, .summary_text = text, .files = paths};
    char err[1024];
    bool output_failed;
    int r = html_write_report(f->html, &h, &output_failed, err, sizeof err);
    free(paths);
    if (r == 0)
        return 0;
    opt_fail(spec, "--html %s", err);
    return output_failed ? 1 : 2;
}

/* Load, build and print. Returns the exit code: 0, 2 (bad input, message printed) or 1 (stdout
 * could not be written). */
static int stats_run(const struct cmd_spec *spec, const struct stats_flags *f, const struct strlist *files)
{
    struct stats_plan p;
    struct dataset d;
    bool d_init = false;
    struct report rep;
    bool rep_init = false;
    struct spool s = {.fd = -1, .path = ""};
    int rc = plan_init(spec, f, &p);
    if (rc)
        goto out;
    size_t ndash = 0;
    for (size_t i = 0; i < files->n; i++)
        ndash += strcmp(files->v[i], "-") == 0;
    if (ndash > 1) {
        rc = opt_fail(spec, "'-' (standard input) may be given once");
        goto out;
    }
    if (ndash && (rc = spool_stdin(spec, &s)) != 0)
        goto out;
    if (dataset_init(&d, &p.lo) != 0) {
        rc = opt_fail(spec, "--buckets: invalid bounds");
        goto out;
    }
    d_init = true;
    if ((rc = load_inputs(spec, &p, files, &d, &s)) != 0)
        goto out;
    int e = report_build(&rep, &d, &p.ro);
    rep_init = true;
    if (e) {
        rc = opt_fail(spec, "%s", knee_strerror(e));
        goto out;
    }
    char *text = NULL; /* --html: the text as printed, for the report's summary */
    size_t text_len = 0;
    if (f->json) {
        report_print_json(stdout, &rep, true);
    } else if (f->html) {
        FILE *mem = open_memstream(&text, &text_len);
        if (!mem)
            knee_oom();
        report_print_text(mem, &rep);
        fclose(mem);
        fwrite(text, 1, text_len, stdout);
    } else {
        report_print_text(stdout, &rep);
    }
    if (!f->json)
        report_print_pictures(stdout, STDOUT_FILENO, &rep);
    rc = opt_stdout_done(spec);
    if (rc == 0 && f->html)
        rc = write_html(spec, f, files, &s, text);
    free(text);
out:
    if (rep_init)
        report_release(&rep);
    if (d_init)
        dataset_release(&d);
    if (s.fd >= 0)
        close(s.fd);
    plan_release(&p);
    return rc;
}

/* Shards' logs (knee run --shard) are one run's requests together: say so, and refuse a shard
 * given twice or shards of two plans (counted as one run, they would be wrong). 0 or 2. */
static int stats_label_shards(const struct cmd_spec *spec, const struct strlist *files, bool json)
{
    char label[512], err[512];
    int r = merge_label_inputs(files->v, files->n, label, sizeof label, err, sizeof err);
    if (r < 0)
        return opt_fail(spec, "%s", err);
    if (r == 1)
        fprintf(json ? stderr : stdout, "%s\n\n", label);
    return 0;
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
    struct stats_flags f = {.column = "latency_ms", .under = "100"};
    struct opt opts[] = {
        {"column", 'c', OPT_STR, &f.column, "COL",
         "the value column (default latency_ms; service_ms, ttfb_ms, lag_ms ...)", 0, NULL, false},
        {"by", 0, OPT_STR, &f.by, "COL",
         "group by this column (default: server when present); 'file' groups by input file", 0, NULL, false},
        {"time", 0, OPT_STR, &f.time_col, "COL",
         "time column in seconds since the start (default: start_s when present)", 0, NULL, false},
        {"skip", 0, OPT_DURATION, &f.skip_ns, "D", "leave out rows whose time is in the first D (warm-up), e.g. 2s", 0,
         NULL, false},
        {"until", 0, OPT_DURATION, &f.until_ns, "D", "leave out rows whose time is D or later", 0, NULL, false},
        {"where", 'w', OPT_LIST, &f.where, "COL=VALUE",
         "keep rows whose cell equals VALUE (COL!=VALUE: differs); repeatable, all must hold", 0, NULL, false},
        {"under", 0, OPT_STR, &f.under, "D",
         "threshold of the share-under section (default 100 = 100ms for a _ms column)", 0, NULL, false},
        {"buckets", 0, OPT_STR, &f.buckets, "LIST",
         "Prometheus bucket bounds in the column's unit (default 5,10,25,...,10000)", 0, NULL, false},
        {"window-group", 0, OPT_STR, &f.window_group, "G",
         "the group whose ten 100-row windows are shown (default: first by name)", 0, NULL, false},
        {"expect-median", 0, OPT_STR, &f.expect_median, "D",
         "what the code should take: warn when the median is 3x off", 0, NULL, false},
        {"approx", 0, OPT_FLAG, &f.approx, NULL,
         "HDR histograms in constant memory instead of every value (for inputs larger than memory)", 0, NULL, false},
        {"keep-warmup", 0, OPT_FLAG, &f.keep_warmup, NULL,
         "keep requests marked warm-up (knee's logs: the binary log's flag, the CSV's warmup column = 1); left out "
         "and counted by default",
         0, NULL, false},
        {"json", 0, OPT_FLAG, &f.json, NULL, "print every number as one JSON object", 0, NULL, false},
        {"html", 0, OPT_STR, &f.html, "FILE",
         "also write the report with charts of the inputs (knee report; a CSV needs start_s and latency_ms)", 0, NULL,
         false},
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
    if (rc == 0 && f.html) { /* --html is none of the inputs */
        struct cli_io io = {0};
        for (size_t i = 0; i < files.n; i++)
            cli_io_input(&io, NULL, files.v[i]);
        cli_io_output(&io, "--html", f.html);
        rc = cli_io_check(&io, &spec);
        cli_io_release(&io);
    }
    if (rc == 0)
        rc = stats_label_shards(&spec, &files, f.json);
    if (rc == 0)
        rc = stats_run(&spec, &f, &files);
    else if (rc == 1)
        rc = 0; /* --help */
    strlist_release(&files);
    strlist_release(&f.where);
    return rc;
}
