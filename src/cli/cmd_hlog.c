/* knee hlog: HdrHistogram interval logs — show a log's percentile distribution in the
 * reference layout, summarise it per tag, list its tags, and merge logs from several
 * processes or machines into one exact log. `knee stats FILE.hlog` lands in cmd_hlog_stats;
 * stats given every shard's hlog of one run summarises the log knee merge --hlog writes of them
 * (src/merge: merge_hlog_inputs checks and merges the set).
 * The scan (read a log, sum the selected intervals per tag) serves show, stats and tags; then
 * one section per subcommand, and the dispatch. Bad input: one line naming the file and
 * line (a missing file included), exit 2; a read error midway or an output that cannot be
 * written, exit 1. */
#include "cli/commands.h"
#include "cli/io_check.h"

#include "cli/opt.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/json.h"
#include "core/outfile.h"
#include "hlog/hlog.h"
#include "merge/merge.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Java's "%.Nf" (hdr_java_fixed) as an expression. */
static const char *jf(char *buf, size_t len, double v, int decimals)
{
    hdr_java_fixed(buf, len, v, decimals);
    return buf;
}

/* Accumulators hold one histogram per tag; a hostile log could name many tags with huge
 * ranges, so their total memory is capped. */
#define SCAN_MAX_ACC_BYTES ((size_t)256 << 20)
#define SCAN_MAX_TAGS 1024

struct tagsum {
    char *name; /* NULL: untagged */
    struct hlog_acc acc;
    size_t intervals;
    double first_offset_s, last_end_offset_s;
};

struct scan {
    struct tagsum *t;
    size_t n;
    double start_time_s;
    size_t intervals;
    double first_offset_s, last_end_offset_s;
    size_t acc_bytes;
};

struct filter {
    double from_s, to_s; /* offsets from the log's StartTime, inclusive */
    const char *tag;     /* only this tag */
    bool untagged_only;
    bool one_sum; /* all selected intervals into one sum (--all-tags) */
    bool decode;  /* false: only list tags and count intervals */
};

static void scan_release(struct scan *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->t[i].name);
        hlog_acc_release(&s->t[i].acc);
    }
    free(s->t);
    memset(s, 0, sizeof *s);
}

static const char *tag_label(const struct tagsum *t)
{
    return t->name ? t->name : "(untagged)";
}

static struct tagsum *find_tag(struct scan *s, const struct hlog_entry *e, bool create)
{
    for (size_t i = 0; i < s->n; i++) {
        struct tagsum *t = &s->t[i];
        if (t->name ? (e->tagged && strcmp(t->name, e->tag) == 0) : !e->tagged)
            return t;
    }
    if (!create || s->n == SCAN_MAX_TAGS)
        return NULL;
    s->t = xrealloc(s->t, (s->n + 1) * sizeof *s->t);
    struct tagsum *t = &s->t[s->n++];
    memset(t, 0, sizeof *t);
    t->name = e->tagged ? xstrdup(e->tag) : NULL;
    hlog_acc_init(&t->acc);
    return t;
}

static bool selected(const struct filter *flt, const struct hlog_entry *e)
{
    if (e->offset_s < flt->from_s || e->offset_s > flt->to_s)
        return false;
    if (flt->untagged_only && e->tagged)
        return false;
    return !flt->tag || (e->tagged && strcmp(flt->tag, e->tag) == 0);
}

/* Decode entry e (into h, reused) and add it to t's sum. 0, or 2 after the message. */
static int scan_add(const struct cmd_spec *spec, struct hlog_reader *r, const char *path, const struct hlog_entry *e,
                    const struct filter *flt, struct scan *s, struct tagsum *t, struct hdr *h, bool *h_ready)
{
    if (hlog_reader_decode_reuse(r, e, h, h_ready) != 0)
        return opt_fail(spec, "%s", hlog_reader_error(r));
    size_t before = t->acc.used ? t->acc.h.counts_len : 0;
    char why[256];
    if (hlog_acc_add(&t->acc, h, why, sizeof why) != 0) {
        if (flt->one_sum || !t->name)
            return opt_fail(spec, "%s:%zu: %s", path, e->line, why);
        return opt_fail(spec, "%s:%zu: %s (tag %s)", path, e->line, why, t->name);
    }
    s->acc_bytes += (t->acc.h.counts_len - before) * sizeof(int64_t);
    if (s->acc_bytes > SCAN_MAX_ACC_BYTES)
        return opt_fail(spec, "%s:%zu: the per-tag sums would need more than %zu MiB", path, e->line,
                        SCAN_MAX_ACC_BYTES >> 20);
    return 0;
}

/* The time an interval covers, in its tag's span and in the log's. */
static void scan_span(struct scan *s, struct tagsum *t, const struct hlog_entry *e)
{
    double end = e->offset_s + e->length_s;
    if (t->intervals == 0 || e->offset_s < t->first_offset_s)
        t->first_offset_s = e->offset_s;
    if (t->intervals == 0 || end > t->last_end_offset_s)
        t->last_end_offset_s = end;
    t->intervals++;
    s->intervals++;
    if (e->offset_s < s->first_offset_s)
        s->first_offset_s = e->offset_s;
    if (end > s->last_end_offset_s)
        s->last_end_offset_s = end;
}

/* Every selected interval of r into *s. Returns the exit code (0, 2 bad input, 1 read
 * failure) after printing the reason. */
static int scan_entries(const struct cmd_spec *spec, struct hlog_reader *r, const char *path, const struct filter *flt,
                        struct scan *s)
{
    struct hlog_entry e;
    struct hdr h; /* reused from interval to interval */
    bool h_ready = false;
    int rc = 0, code = 0;
    while (code == 0 && (rc = hlog_reader_next(r, &e)) == 1) {
        if (!selected(flt, &e))
            continue;
        struct tagsum *t = flt->one_sum && s->n ? &s->t[0] : find_tag(s, &e, true);
        if (!t)
            code = opt_fail(spec, "%s:%zu: more than %d tags", path, e.line, SCAN_MAX_TAGS);
        else if (flt->decode)
            code = scan_add(spec, r, path, &e, flt, s, t, &h, &h_ready);
        if (code == 0)
            scan_span(s, t, &e);
    }
    if (code == 0 && rc < 0) {
        /* a malformed or oversized log is bad input; anything else failed to read */
        opt_fail(spec, "%s", hlog_reader_error(r));
        code = rc == KNEE_EFORMAT || rc == KNEE_ETOOBIG ? 2 : 1;
    }
    if (h_ready)
        hdr_release(&h);
    return code;
}

/* Read f (named path in messages), summing the selected intervals per tag. Returns the exit
 * code as scan_file. */
static int scan_stream(const struct cmd_spec *spec, FILE *f, const char *path, const struct filter *flt, struct scan *s)
{
    memset(s, 0, sizeof *s);
    s->first_offset_s = INFINITY;
    s->last_end_offset_s = -INFINITY;
    struct hlog_reader *r = hlog_reader_new(f, path);
    int code = scan_entries(spec, r, path, flt, s);
    s->start_time_s = hlog_reader_start_time(r);
    hlog_reader_free(r);
    if (code)
        scan_release(s);
    return code;
}

/* Read path ("-": standard input), summing the selected intervals per tag. Returns the exit
 * code (0, 2 bad input, 1 read failure) after printing the reason; on failure *s is empty. */
static int scan_file(const struct cmd_spec *spec, const char *path, const struct filter *flt, struct scan *s)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) {
        memset(s, 0, sizeof *s);
        return opt_fail(spec, "%s: %s", path, strerror(errno));
    }
    int code = scan_stream(spec, f, path, flt, s);
    if (f != stdin)
        fclose(f);
    return code;
}

/* opt_parse for the subcommands: true to go on (the caller strlist_release()s *args); false
 * with *code the exit code (0 after --help, 2 after a usage error) and *args empty. */
static bool parse_args(struct cmd_spec *spec, int argc, char **argv, struct strlist *args, int *code)
{
    int r = opt_parse(spec, argc, argv, args);
    *code = r == 1 ? 0 : r;
    return r == 0;
}

/* Several files to stats (its spec takes any number): the hlogs of every shard of one run,
 * checked as knee merge checks them (in shards: their label), or, when none is a shard's, the
 * one-file refusal opt_parse gives. 0, or 2 after the message. */
static int check_shards(const struct cmd_spec *spec, const struct strlist *args, struct merge_hlog_input *shards)
{
    shards->label[0] = shards->name[0] = '\0';
    if (args->n < 2)
        return 0;
    char err[1024];
    int r = merge_hlog_inputs((const char *const *)args->v, args->n, NULL, shards, err, sizeof err);
    if (r < 0)
        return opt_fail(spec, "%s", err);
    if (r == 0)
        return opt_fail(spec, "unexpected argument '%s': usage: knee %s %s", args->v[1], spec->name, spec->usage);
    return 0;
}

/* show and stats take the same --from/--to window and --unit-ratio: parse argv (the flags land
 * in *from_ns, *to_ns and *ratio), then check the window before the ratio, so the first fault is
 * the one reported. Returns true to go on, with the window in *flt and *args for the caller to
 * strlist_release(); false with *code the exit code (0 after --help, 2 after a usage error) and
 * *args already empty. */
static bool parse_window_args(struct cmd_spec *spec, int argc, char **argv, struct strlist *args,
                              const uint64_t *from_ns, const uint64_t *to_ns, const double *ratio, struct filter *flt,
                              struct merge_hlog_input *shards, int *code)
{
    if (!parse_args(spec, argc, argv, args, code))
        return false;
    if (shards && (*code = check_shards(spec, args, shards)) != 0) {
        strlist_release(args);
        return false;
    }
    flt->from_s = (double)*from_ns / 1e9;
    flt->to_s = opt_find(spec, "to")->seen ? (double)*to_ns / 1e9 : INFINITY;
    if (flt->to_s < flt->from_s)
        *code = opt_fail(spec, "--to: must not be before --from");
    else if (!(*ratio > 0) || !isfinite(*ratio))
        *code = opt_fail(spec, "--unit-ratio: must be a positive number (1e6 prints ns as ms)");
    if (*code)
        strlist_release(args);
    return *code == 0;
}

/* Whether --from/--to narrowed the log (the messages about empty selections say so). */
static bool windowed(const struct filter *flt)
{
    return flt->from_s > 0 || flt->to_s < INFINITY;
}

/* Every tag merged (those of streamed events, first_event/ and event_gap/, left out when a
 * latency tag is there: they are not latencies). The "all" row is impossible (and said so in
 * why) when the tags' histograms cannot be summed exactly (their precisions differ). */
struct all_tags {
    struct hlog_acc acc;
    size_t intervals; /* of the tags summed */
    bool ok;
    char why[256];
    char label[64]; /* the tags joined by '+', or "all" */
    bool same_digits;
};

/* Whether tag i goes into the "all" row. */
static bool in_all(const struct scan *s, size_t i)
{
    bool latency = false;
    for (size_t k = 0; k < s->n; k++)
        latency |= hlog_tag_kind(s->t[k].name, NULL) == HLOG_TAG_LATENCY;
    return !latency || hlog_tag_kind(s->t[i].name, NULL) == HLOG_TAG_LATENCY;
}

static void all_tags_init(struct all_tags *a, const struct scan *s)
{
    hlog_acc_init(&a->acc);
    a->ok = true;
    a->why[0] = '\0';
    a->intervals = 0;
    for (size_t i = 0; i < s->n && a->ok; i++) {
        if (!in_all(s, i))
            continue;
        a->intervals += s->t[i].intervals;
        char reason[200];
        if (hlog_acc_add(&a->acc, &s->t[i].acc.h, reason, sizeof reason) != 0) {
            snprintf(a->why, sizeof a->why, "tag %s has %s", tag_label(&s->t[i]), reason);
            a->ok = false;
        }
    }
    a->same_digits = true;
    for (size_t i = 1; i < s->n; i++)
        a->same_digits = a->same_digits && s->t[i].acc.h.sig_digits == s->t[0].acc.h.sig_digits;
    a->label[0] = '\0';
    for (size_t i = 0; i < s->n; i++) {
        if (!in_all(s, i))
            continue;
        size_t used = strlen(a->label);
        const char *l = tag_label(&s->t[i]);
        if (s->n > 4 || used + strlen(l) + 2 > sizeof a->label) {
            snprintf(a->label, sizeof a->label, "all");
            break;
        }
        snprintf(a->label + used, sizeof a->label - used, "%s%s", i ? "+" : "", l);
    }
}

/* ---- show -------------------------------------------------------------------------------- */

/* The two lines HistogramLogProcessor puts above its .hgrm table (the date in local time, as
 * Java's Date.toString). */
static void print_range_header(double from_s, double to_s, double start_time_s)
{
    char a[64], b[64], st[64], date[64] = "";
    printf("#[Overall percentile distribution between %s and %s seconds (relative to StartTime)]\n",
           jf(a, sizeof a, from_s, 3), to_s < INFINITY ? jf(b, sizeof b, to_s, 3) : "<Infinite>");
    time_t t = (time_t)floor(start_time_s);
    struct tm tm;
    if (isfinite(start_time_s) && localtime_r(&t, &tm))
        strftime(date, sizeof date, "%a %b %d %H:%M:%S %Z %Y", &tm);
    printf("#[StartTime: %s (seconds since epoch), %s]\n", jf(st, sizeof st, start_time_s, 3), date);
}

/* "no intervals" for show's selection, naming what was selected. 2 after the message. */
static int show_fail_empty(const struct cmd_spec *spec, const char *path, const char *tag, bool all_tags,
                           const struct filter *flt)
{
    if (tag)
        return opt_fail(spec, "%s: no intervals tagged '%s'%s (see knee hlog tags)", path, tag,
                        windowed(flt) ? " in the --from/--to window" : "");
    return opt_fail(spec, "%s: no %sintervals%s (see knee hlog tags; --tag T or --all-tags)", path,
                    all_tags ? "" : "untagged ", windowed(flt) ? " in the window" : "");
}

static int hlog_show(int argc, char **argv)
{
    const char *tag = NULL;
    bool all_tags = false, csv = false;
    uint64_t ticks = 5, from_ns = 0, to_ns = 0;
    double ratio = 1e6;
    struct opt opts[] = {
        {.name = "tag",
         .short_name = 't',
         .kind = OPT_STR,
         .dst = &tag,
         .metavar = "T",
         .help = "only intervals tagged T (default: the untagged ones, as the reference tool; a log that has none, "
                 "such as knee run --hlog writes, shows every tag merged and says so on stderr)"},
        {.name = "all-tags",
         .kind = OPT_FLAG,
         .dst = &all_tags,
         .help = "all intervals, whatever their tag, in one distribution"},
        {.name = "ticks",
         .kind = OPT_COUNT,
         .dst = &ticks,
         .metavar = "N",
         .help = "percentile ticks per half distance to 100% (default 5)"},
        {.name = "unit-ratio",
         .kind = OPT_DOUBLE,
         .dst = &ratio,
         .metavar = "R",
         .help = "divide values by R when printing (default 1e6: ns shown as ms)"},
        {.name = "from",
         .kind = OPT_DURATION,
         .dst = &from_ns,
         .metavar = "S",
         .help = "skip intervals that start before S after the log's StartTime"},
        {.name = "to",
         .kind = OPT_DURATION,
         .dst = &to_ns,
         .metavar = "S",
         .help = "skip intervals that start after S after the log's StartTime"},
        {.name = "csv", .kind = OPT_FLAG, .dst = &csv, .help = "the reference's CSV variant"},
    };
    struct cmd_spec spec = {
        .name = "hlog show",
        .usage = "[options] FILE",
        .summary = "Print a log's percentile distribution in the HdrHistogram reference layout: the .hgrm file "
                   "HistogramLogProcessor writes, line for line.",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = "example:\n  knee hlog show run.hlog --tag api\n",
        .min_args = 1,
        .max_args = 1,
    };
    struct strlist args = {0};
    struct filter flt = {.decode = true};
    int code;
    if (!parse_window_args(&spec, argc, argv, &args, &from_ns, &to_ns, &ratio, &flt, NULL, &code))
        return code;
    if (ticks < 1 || ticks > 1000)
        code = opt_fail(&spec, "--ticks: must be 1..1000");
    else if (tag && all_tags)
        code = opt_fail(&spec, "--tag and --all-tags exclude each other");
    if (code)
        goto out;
    flt.tag = tag;
    /* --tag or --all-tags: one distribution, a mismatch reported at its line. Neither: sum per
     * tag in one read (standard input cannot be read twice), then show the untagged intervals
     * as the reference tool does, or, when the log has none (knee run's logs tag every
     * interval with its target), every tag merged, and say so on stderr. */
    flt.one_sum = tag || all_tags;
    struct scan s;
    if ((code = scan_file(&spec, args.v[0], &flt, &s)))
        goto out;
    const struct hdr *h = NULL;
    struct all_tags all = {.ok = false};
    bool merged = false;
    if (flt.one_sum) {
        h = s.intervals ? &s.t[0].acc.h : NULL;
    } else {
        for (size_t i = 0; i < s.n && !h; i++)
            if (!s.t[i].name)
                h = &s.t[i].acc.h;
        if (!h && s.n) {
            all_tags_init(&all, &s);
            merged = true;
            if (!all.ok) {
                code = opt_fail(&spec, "%s: no untagged intervals, and its tags cannot be merged (%s): use --tag T",
                                args.v[0], all.why);
                goto show_done;
            }
            h = &all.acc.h;
            knee_report(stderr, "knee hlog show: ",
                        "%s has no untagged intervals: showing all %zu tag%s merged (%s); --tag T for one", args.v[0],
                        s.n, s.n == 1 ? "" : "s", all.label);
        }
    }
    if (!h) {
        code = show_fail_empty(&spec, args.v[0], tag, all_tags, &flt);
    } else {
        print_range_header(flt.from_s, flt.to_s, s.start_time_s);
        hdr_percentiles_print(stdout, h, (int)ticks, ratio, csv);
        code = opt_stdout_done(&spec);
    }
show_done:
    if (merged)
        hlog_acc_release(&all.acc);
    scan_release(&s);
out:
    strlist_release(&args);
    return code;
}

/* ---- stats ------------------------------------------------------------------------------- */

static const double stat_pcts[] = {50, 90, 95, 99, 99.9};
static const char *const stat_names[] = {"p50", "p90", "p95", "p99", "p99.9"};
#define NSTAT (sizeof stat_pcts / sizeof stat_pcts[0])
_Static_assert(sizeof stat_names / sizeof stat_names[0] == NSTAT, "one name per percentile, by position");

/* The name of the printed unit for a --unit-ratio. */
static const char *ratio_unit(double ratio)
{
    return ratio == 1e6 ? "ms" : ratio == 1e3 ? "us" : ratio == 1.0 ? "ns" : "units";
}

/* A tag or path from the log or the command line as text output shows it: control bytes
 * escaped (core/err's knee_escape), so a tag holding ESC or CR cannot rewrite the terminal.
 * The JSON writer escapes on its own. */
static const char *esc(const char *s, char *buf, size_t len)
{
    knee_escape(buf, len, s, strlen(s));
    return buf;
}

static void print_row(const char *label, const struct hdr *h, double ratio)
{
    char b[64], l[256];
    printf("%-14s %10lld", esc(label, l, sizeof l), (long long)h->total_count);
    printf(" %10s", jf(b, sizeof b, hdr_mean(h) / ratio, 3));
    printf(" %10s", jf(b, sizeof b, hdr_stdev(h) / ratio, 3));
    for (size_t k = 0; k < NSTAT; k++)
        printf(" %10s", jf(b, sizeof b, (double)hdr_value_at_percentile(h, stat_pcts[k]) / ratio, 3));
    printf(" %10s\n", jf(b, sizeof b, (double)hdr_max(h) / ratio, 3));
}

static void stats_print_text(const char *path, const struct scan *s, const struct all_tags *all, double ratio)
{
    char t0[64], t1[64], st[64], date[64] = "";
    time_t tt = (time_t)s->start_time_s;
    struct tm tm;
    if (isfinite(s->start_time_s) && gmtime_r(&tt, &tm))
        strftime(date, sizeof date, " (%Y-%m-%d %H:%M:%S UTC)", &tm);
    char p[1024], l[256], w[1024];
    printf("%s: %zu interval%s from %s s to %s s after StartTime %s%s\n", esc(path, p, sizeof p), s->intervals,
           s->intervals == 1 ? "" : "s", jf(t0, sizeof t0, s->first_offset_s, 3),
           jf(t1, sizeof t1, s->last_end_offset_s, 3), jf(st, sizeof st, s->start_time_s, 3), date);
    if (ratio == 1e6)
        printf("values in ms (recorded ns / 1e6)");
    else
        printf("values are recorded values / %g (%s)", ratio, ratio_unit(ratio));
    if (all->same_digits)
        printf("; HdrHistogram percentiles, %d significant digits\n\n", s->t[0].acc.h.sig_digits);
    else
        printf("; HdrHistogram percentiles (significant digits differ by tag)\n\n");
    printf("%-14s %10s %10s %10s", "tag", "count", "mean", "stdev");
    for (size_t k = 0; k < NSTAT; k++)
        printf(" %10s", stat_names[k]);
    printf(" %10s\n", "max");
    for (size_t i = 0; i < s->n; i++)
        print_row(tag_label(&s->t[i]), &s->t[i].acc.h, ratio);
    if (s->n > 1) {
        if (all->ok)
            print_row(all->label, &all->acc.h, ratio);
        else
            printf("%-14s not shown: %s\n", esc(all->label, l, sizeof l), esc(all->why, w, sizeof w));
    }
}

static void json_group(struct jw *j, const char *key, const struct hdr *h, double ratio, size_t intervals)
{
    jw_key(j, key);
    jw_object_begin(j);
    jw_kv_int(j, "count", h->total_count);
    jw_kv_uint(j, "intervals", intervals);
    jw_kv_double(j, "mean", hdr_mean(h) / ratio);
    jw_kv_double(j, "stdev", hdr_stdev(h) / ratio);
    jw_kv_double(j, "min", (double)hdr_min(h) / ratio);
    jw_kv_double(j, "max", (double)hdr_max(h) / ratio);
    for (size_t k = 0; k < NSTAT; k++)
        jw_kv_double(j, stat_names[k], (double)hdr_value_at_percentile(h, stat_pcts[k]) / ratio);
    jw_kv_int(j, "sig_digits", h->sig_digits);
    jw_object_end(j);
}

static void stats_print_json(const char *path, const struct scan *s, const struct all_tags *all, double ratio)
{
    struct jw j;
    jw_init(&j, stdout, true);
    jw_object_begin(&j);
    jw_kv_string(&j, "file", path);
    jw_kv_string(&j, "unit", ratio_unit(ratio));
    jw_kv_double(&j, "unit_ratio", ratio);
    jw_kv_double(&j, "start_time_s", s->start_time_s);
    jw_kv_double(&j, "from_s", s->first_offset_s);
    jw_kv_double(&j, "to_s", s->last_end_offset_s);
    jw_kv_uint(&j, "intervals", s->intervals);
    jw_key(&j, "groups");
    jw_object_begin(&j);
    for (size_t i = 0; i < s->n; i++)
        json_group(&j, tag_label(&s->t[i]), &s->t[i].acc.h, ratio, s->t[i].intervals);
    jw_object_end(&j);
    if (all->ok)
        json_group(&j, "all", &all->acc.h, ratio, all->intervals);
    else
        jw_kv_string(&j, "all_error", all->why);
    jw_object_end(&j);
    jw_end(&j);
}

/* The shards' hlogs (check_shards passed) merged into a temporary file, unlinked at once, as
 * knee merge --hlog writes them, and that log scanned under the name shards->name. Returns the
 * exit code as scan_file (1 also when the temporary file cannot be written). */
static int scan_shards(const struct cmd_spec *spec, const struct strlist *args, const struct filter *flt,
                       struct merge_hlog_input *shards, struct scan *s)
{
    memset(s, 0, sizeof *s);
    const char *dir = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/knee-hlog-stats-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkostemp(tmpl, O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) {
            unlink(tmpl);
            close(fd);
        }
        opt_fail(spec, "cannot store the merged log in %s: %s", dir && *dir ? dir : "/tmp", strerror(e));
        return 1;
    }
    unlink(tmpl); /* ours alone (O_EXCL), gone when f closes */
    char err[1024];
    int r = merge_hlog_inputs((const char *const *)args->v, args->n, f, shards, err, sizeof err);
    int code;
    if (r != 1) { /* the inputs changed since check_shards, or the log could not be written */
        opt_fail(spec, "%s", r == 0 ? "the inputs are no longer shards' hlogs" : err);
        code = r < 0 && r > KNEE_EINVAL ? 1 : 2; /* -errno: the temporary log; KNEE_*: the inputs */
    } else if (fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0) {
        opt_fail(spec, "the merged log: %s", strerror(errno));
        code = 1;
    } else {
        code = scan_stream(spec, f, shards->name, flt, s);
    }
    fclose(f);
    return code;
}

static int stats_main(const char *name, int argc, char **argv)
{
    uint64_t from_ns = 0, to_ns = 0;
    double ratio = 1e6;
    bool json = false;
    struct opt opts[] = {
        {.name = "from",
         .kind = OPT_DURATION,
         .dst = &from_ns,
         .metavar = "S",
         .help = "only intervals starting at or after S from the log's StartTime (10s, 2m; bare = seconds)"},
        {.name = "to",
         .kind = OPT_DURATION,
         .dst = &to_ns,
         .metavar = "S",
         .help = "only intervals starting at or before S from the log's StartTime"},
        {.name = "unit-ratio",
         .kind = OPT_DOUBLE,
         .dst = &ratio,
         .metavar = "R",
         .help = "divide values by R (default 1e6: knee's ns shown as ms)"},
        {.name = "json", .kind = OPT_FLAG, .dst = &json, .help = "one JSON object with every number"},
    };
    struct cmd_spec spec = {
        .name = name,
        .usage = "[options] FILE.hlog",
        .summary = "Summarise an HdrHistogram interval log (or every shard's log of one run, merged): count, mean, "
                   "stdev, p50, p90, p95, p99, p99.9 and max "
                   "per tag and for all tags merged (exact sums of the interval histograms).",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = "Percentiles are HdrHistogram's: nearest rank over the buckets, reported as the bucket's highest\n"
                  "equivalent value (within the log's significant digits). Mean and stdev (population) use each\n"
                  "bucket's median equivalent value, as the reference does.\n\n"
                  "Several files: the hlogs of every shard of one run (knee run --shard I/N --hlog), summarised\n"
                  "as the log knee merge --hlog writes from them (the same numbers, interval for interval);\n"
                  "a shard given twice, shards of two plans, a missing shard or a file that is not a shard's\n"
                  "hlog is refused (exit 2).\n\nexamples:\n"
                  "  knee hlog stats run.hlog --from 10s\n"
                  "  knee hlog stats shard-0.hlog shard-1.hlog shard-2.hlog\n",
        .min_args = 1,
        .max_args = SIZE_MAX, /* one file, or the shards' hlogs (check_shards) */
    };
    struct strlist args = {0};
    struct filter flt = {.decode = true};
    int code;
    struct merge_hlog_input shards;
    if (!parse_window_args(&spec, argc, argv, &args, &from_ns, &to_ns, &ratio, &flt, &shards, &code))
        return code;
    struct scan s;
    const char *path = shards.label[0] ? shards.name : args.v[0];
    if ((code = shards.label[0] ? scan_shards(&spec, &args, &flt, &shards, &s) : scan_file(&spec, path, &flt, &s)))
        goto out;
    if (s.intervals == 0) {
        code = opt_fail(&spec, "%s: no intervals%s", path, windowed(&flt) ? " in the --from/--to window" : "");
    } else {
        struct all_tags all;
        all_tags_init(&all, &s);
        if (shards.label[0])
            fprintf(json ? stderr : stdout, "%s\n\n", shards.label);
        if (json)
            stats_print_json(path, &s, &all, ratio);
        else
            stats_print_text(path, &s, &all, ratio);
        hlog_acc_release(&all.acc);
        code = opt_stdout_done(&spec);
    }
    scan_release(&s);
out:
    strlist_release(&args);
    return code;
}

/* `knee stats FILE.hlog` (the stats command routes here; messages then say "knee stats") */
int cmd_hlog_stats(int argc, char **argv)
{
    return stats_main("stats", argc, argv);
}

static int hlog_stats_sub(int argc, char **argv)
{
    return stats_main("hlog stats", argc, argv);
}

/* ---- tags -------------------------------------------------------------------------------- */

static int hlog_tags(int argc, char **argv)
{
    struct cmd_spec spec = {
        .name = "hlog tags",
        .usage = "FILE",
        .summary = "List the tags of a log's intervals, with how many intervals each has and the time they span.",
        .min_args = 1,
        .max_args = 1,
    };
    struct strlist args = {0};
    int code;
    if (!parse_args(&spec, argc, argv, &args, &code))
        return code;
    struct filter flt = {.from_s = -INFINITY, .to_s = INFINITY, .decode = false};
    struct scan s;
    code = scan_file(&spec, args.v[0], &flt, &s);
    if (!code) {
        printf("%-20s %10s %12s %12s\n", "tag", "intervals", "from_s", "to_s");
        for (size_t i = 0; i < s.n; i++) {
            char a[64], b[64], l[256];
            printf("%-20s %10zu %12s %12s\n", esc(tag_label(&s.t[i]), l, sizeof l), s.t[i].intervals,
                   jf(a, sizeof a, s.t[i].first_offset_s, 3), jf(b, sizeof b, s.t[i].last_end_offset_s, 3));
        }
        scan_release(&s);
        code = opt_stdout_done(&spec);
    }
    strlist_release(&args);
    return code;
}

/* ---- merge ------------------------------------------------------------------------------- */

/* -o given, --slot positive, and the output is none of the inputs. 0, or 2 after the message. */
static int merge_check(const struct cmd_spec *spec, const struct strlist *in, const char *out_path, uint64_t slot_ns)
{
    if (!out_path)
        return opt_fail(spec, "-o OUT is required");
    if (slot_ns == 0)
        return opt_fail(spec, "--slot: must be longer than 0");
    struct cli_io io = {0};
    for (size_t i = 0; i < in->n; i++)
        cli_io_input(&io, NULL, in->v[i]);
    cli_io_output(&io, "-o", out_path);
    int code = cli_io_check(&io, spec);
    cli_io_release(&io);
    return code;
}

/* Merge the inputs into out_path ("-": standard output). Returns the exit code: 2 for input
 * that cannot be read or merged, 1 when the output cannot be written. The output goes through
 * core/outfile: a regular file is written to a temporary file renamed into place on success
 * (a failure leaves the old file whole and removes only the temporary file); a device, FIFO
 * or /dev/stdout is written in place and never removed. */
static int merge_to(const struct cmd_spec *spec, const struct strlist *in, const char *out_path, uint64_t slot_ns)
{
    struct outfile o;
    char err[768];
    if (outfile_open(&o, out_path, err, sizeof err) != 0) {
        opt_fail(spec, "-o %s", err);
        return 1;
    }
    int rc = hlog_merge(o.f, in->v, in->n, (double)slot_ns / 1e9, err, sizeof err);
    if (rc) {
        /* unreadable or malformed input is bad input (2); a failed write is a runtime failure */
        bool write_fail = strncmp(err, "writing", 7) == 0;
        int e = outfile_write_error(&o);
        outfile_abort(&o);
        if (write_fail && e)
            opt_fail(spec, "-o %s: %s", out_path, strerror(e));
        else if (write_fail)
            opt_fail(spec, "-o %s: %s", out_path, err);
        else
            opt_fail(spec, "%s", err);
        return write_fail ? 1 : 2;
    }
    if (outfile_commit(&o, err, sizeof err) != 0) {
        opt_fail(spec, "-o %s", err);
        return 1;
    }
    return 0;
}

static int hlog_merge_cmd(int argc, char **argv)
{
    const char *out_path = NULL;
    uint64_t slot_ns = NS_PER_S;
    struct opt opts[] = {
        {.name = "output",
         .short_name = 'o',
         .kind = OPT_STR,
         .dst = &out_path,
         .metavar = "OUT",
         .help = "the merged log ('-' for standard output); required"},
        {.name = "slot",
         .kind = OPT_DURATION,
         .dst = &slot_ns,
         .metavar = "D",
         .help = "width of the time slots intervals are summed in (default 1s, knee run's interval)"},
    };
    struct cmd_spec spec = {
        .name = "hlog merge",
        .usage = "IN... -o OUT",
        .summary = "Merge interval logs from several processes or machines into one exact log, aligned by absolute "
                   "time: per tag, intervals whose midpoints fall in the same slot are summed.",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = "Slots start at the earliest StartTime of the inputs. Histograms of one tag must share their\n"
                  "significant digits and lowest value (then the sum is exact); otherwise merge refuses.\n"
                  "-o OUT replaces an existing file only once the merged log is written whole (a failure\n"
                  "keeps the old one); a device, FIFO or '-' is written in place, never removed.\n\n"
                  "example:\n  knee hlog merge host1.hlog host2.hlog -o all.hlog\n",
        .min_args = 1,
        .max_args = SIZE_MAX,
    };
    struct strlist args = {0};
    int code;
    if (!parse_args(&spec, argc, argv, &args, &code))
        return code;
    code = merge_check(&spec, &args, out_path, slot_ns);
    if (code == 0)
        code = merge_to(&spec, &args, out_path, slot_ns);
    strlist_release(&args);
    return code;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

static const struct command subcommands[] = {
    {"show", hlog_show, "the percentile distribution in the reference (.hgrm) layout"},
    {"stats", hlog_stats_sub, "count, mean, stdev, p50..p99.9, max per tag and all tags merged"},
    {"tags", hlog_tags, "the tags in a log and their intervals"},
    {"merge", hlog_merge_cmd, "merge logs from several processes or machines, exactly"},
    {0, 0, 0},
};

static void hlog_usage(FILE *out)
{
    fputs("usage: knee hlog <show|stats|tags|merge> [options] FILE...\n\n"
          "HdrHistogram interval logs (.hlog, format 1.3), interoperable with the Java reference tools.\n\n"
          "commands:\n",
          out);
    for (const struct command *c = subcommands; c->name; c++)
        fprintf(out, "  %-6s  %s\n", c->name, c->summary);
    fputs("\nknee hlog <command> --help for its options.\n", out);
}

int cmd_hlog(int argc, char **argv)
{
    if (argc < 2) {
        hlog_usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        hlog_usage(stdout);
        return 0;
    }
    for (const struct command *c = subcommands; c->name; c++)
        if (strcmp(c->name, argv[1]) == 0)
            return c->fn(argc - 1, argv + 1);
    return cli_unknown_command("hlog", "command", subcommands, argv[1]);
}
