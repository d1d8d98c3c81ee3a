/* knee run --repeat, --until-ci and the self-checks of every run (see run_repeat.h). */
#include "cli/run_repeat.h"
#include "cli/run_output.h"
#include "cli/run_print.h"

#include "compare/compare.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/outfile.h"
#include "core/units.h"
#include "hlog/hlog.h"
#include "html/html.h"
#include "record/threshold.h"
#include "runcheck/runcheck.h"
#include "runreport/runreport.h"
#include "stats/stats.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the rows ---------------------------------------------------------------------------------- */

static int parse_percent(const char *v, void *dst, char *err, size_t errlen)
{
    double f;
    if (units_parse_share(v, &f) || !(f > 0 && f < 1))
        return knee_fail(err, errlen, KNEE_EINVAL, "expected a width such as 5%% (between 0 and 100%%)");
    *(double *)dst = f;
    return 0;
}

size_t cli_repeat_rows(struct cli_repeat_flags *f, struct opt *rows)
{
    rows[0] = (struct opt){.name = "repeat",
                           .kind = OPT_COUNT,
                           .dst = &f->repeat,
                           .metavar = "N",
                           .help = "run the same plan N times (same seed, same schedule) into --out-dir, for knee "
                                   "compare"};
    rows[1] = (struct opt){.name = "settle",
                           .kind = OPT_DURATION,
                           .dst = &f->settle_ns,
                           .metavar = "D",
                           .help = "with --repeat: idle time between repetitions (default 0)"};
    rows[2] = (struct opt){.name = "out-dir",
                           .kind = OPT_STR,
                           .dst = &f->out_dir,
                           .metavar = "DIR",
                           .help = "with --repeat: rep-K.bin, rep-K.hlog, rep-K.json and repeat.json go here (a new "
                                   "or empty directory)"};
    rows[3] = (struct opt){.name = "until-ci",
                           .kind = OPT_CUSTOM,
                           .dst = &f->until_ci,
                           .metavar = "P",
                           .parse = parse_percent,
                           .help = "open loop: stop once the p99's 95% interval is narrower than P of it (e.g. 5%); "
                                   "--duration is the cap"};
    return RUN_REPEAT_NROWS;
}

static bool given(const struct cmd_spec *spec, const char *name)
{
    const struct opt *o = opt_find(spec, name);
    return o && o->seen;
}

int cli_repeat_check(const struct cli_repeat_flags *f, const struct cmd_spec *spec, const struct run_config *cfg,
                     const char *hlog_path)
{
    bool sharded =
        cfg->plan.shard.count || cfg->plan.shard.start_at_unix_ns; /* --shard, --start-at (cli/shard_flags.c) */
    if (sharded && (f->repeat || f->until_ci > 0))
        return opt_fail(spec,
                        "%s with %s: a shard runs its part of one plan once, from one start instant, to its end "
                        "(knee merge adds the shards up); repeat the whole sharded run instead",
                        f->repeat ? "--repeat" : "--until-ci", cfg->plan.shard.count ? "--shard" : "--start-at");
    if (f->until_ci > 0) {
        if (!cfg->plan.open_loop)
            return opt_fail(spec,
                            "--until-ci needs an open loop (--rate): a closed loop's sample rate is the server's");
        if (!cfg->plan.duration_ns)
            return opt_fail(spec, "--until-ci needs --duration (the cap), not --requests");
        if (f->repeat)
            return opt_fail(spec, "--until-ci and --repeat: repetitions must be the same plan, so none may stop early");
    }
    if (given(spec, "repeat") && f->repeat == 0)
        return opt_fail(spec, "--repeat must be at least 1");
    if (!f->repeat) {
        if (given(spec, "settle"))
            return opt_fail(spec, "--settle needs --repeat");
        if (given(spec, "out-dir"))
            return opt_fail(spec, "--out-dir needs --repeat");
        return 0;
    }
    if (f->repeat > RUN_REPEAT_MAX)
        return opt_fail(spec, "--repeat %llu: at most %d", (unsigned long long)f->repeat, RUN_REPEAT_MAX);
    if (!f->out_dir || !f->out_dir[0])
        return opt_fail(spec, "--repeat needs --out-dir DIR (each repetition's log, hlog and JSON go there)");
    if (cfg->out_path)
        return opt_fail(spec, "--out with --repeat: each repetition's log is DIR/rep-K.bin");
    if (hlog_path)
        return opt_fail(spec, "--hlog with --repeat: each repetition's hlog is DIR/rep-K.hlog");
    for (size_t i = 0; i < cfg->plan.ntargets; i++)
        if (!hlog_tag_valid(cfg->plan.targets[i].name))
            return opt_fail(spec, "--repeat: target name '%s' cannot be an hlog tag (no ',', spaces or tabs)",
                            cfg->plan.targets[i].name);
    return 0;
}

/* ---- --until-ci ---------------------------------------------------------------------------------- */

static void until_ci_interval(void *ctx, size_t target, double start_s, double length_s, const struct hdr *latency)
{
    struct cli_until_ci *u = ctx;
    if (u->next)
        u->next(u->next_ctx, target, start_s, length_s, latency);
    hdr_add(&u->h, latency);
    if (target + 1 != u->cfg->plan.ntargets || u->stopped)
        return;
    double warm_s = (double)u->cfg->plan.warmup_ns / 1e9;
    if (start_s + length_s < warm_s + RUN_UNTIL_CI_MIN_S)
        return;
    /* knee's rule for a tail percentile: at least STATS_MIN_BEYOND samples above it */
    if ((double)u->h.total_count * 0.01 < STATS_MIN_BEYOND)
        return;
    double p99, lo, hi;
    if (!runcheck_p99_ci(&u->h, &p99, &lo, &hi) || !(p99 > 0))
        return;
    if ((hi - lo) / p99 < u->fraction && u->cfg->stop) {
        u->stopped = true;
        u->stopped_at_s = start_s + length_s;
        u->p99_ms = p99;
        u->lo_ms = lo;
        u->hi_ms = hi;
        run_stop_request(u->cfg->stop, false);
    }
}

void cli_until_ci_install(struct cli_until_ci *u, struct run_config *cfg, double fraction)
{
    memset(u, 0, sizeof *u);
    u->fraction = fraction;
    if (!(fraction > 0))
        return;
    u->cfg = cfg;
    u->next = cfg->on_interval;
    u->next_ctx = cfg->interval_ctx;
    if (hdr_init(&u->h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS) != 0)
        knee_oom();
    cfg->on_interval = until_ci_interval;
    cfg->interval_ctx = u;
}

void cli_until_ci_release(struct cli_until_ci *u)
{
    if (!(u->fraction > 0))
        return;
    hdr_release(&u->h);
    if (u->cfg && u->cfg->on_interval == until_ci_interval) {
        u->cfg->on_interval = u->next;
        u->cfg->interval_ctx = u->next_ctx;
    }
    memset(u, 0, sizeof *u);
}

/* ---- self-checks ----------------------------------------------------------------------------------- */

#define SELFCHECK_MAX_LOG_BYTES (300ull << 20) /* ~5M records: reading back more is not worth the wait */

void cli_selfcheck(const struct run_config *cfg, struct run_record *res)
{
    if (cfg->on_interval == until_ci_interval) {
        const struct cli_until_ci *u = cfg->interval_ctx;
        if (u->stopped && res->interrupted) {
            /* the engine saw a stop request; it was --until-ci's, so say that instead */
            char l[32], h[32], p[32];
            record_stopped_on_purpose(res,
                                      "--until-ci: planning stopped at %.0f s: the p99 %s ms has its 95%% interval "
                                      "[%s, %s] within %.1f%% of it (asked: %.1f%%)",
                                      u->stopped_at_s, units_fmt_ms(u->p99_ms, p, sizeof p),
                                      units_fmt_ms(u->lo_ms, l, sizeof l), units_fmt_ms(u->hi_ms, h, sizeof h),
                                      100 * (u->hi_ms - u->lo_ms) / u->p99_ms, 100 * u->fraction);
        } else if (!u->stopped && res->all.latency_all.total_count) {
            double p99, lo, hi;
            char buf[512];
            bool ok = runcheck_p99_ci(&res->all.latency_all, &p99, &lo, &hi);
            snprintf(buf, sizeof buf,
                     "--until-ci: the run reached its cap (--duration) before the p99's 95%% interval was within "
                     "%.1f%% of it (now %s)",
                     100 * u->fraction, ok ? "" : "undefined");
            if (ok)
                snprintf(buf + strlen(buf) - 1, sizeof buf - strlen(buf) + 1, "%.1f%%)", 100 * (hi - lo) / p99);
            warn_add(&res->warnings, true, "%s", buf);
        }
    }
    const char *log = cfg->out_path;
    struct stat st;
    const char *skipped = NULL; /* why a log that was written is not read back */
    if (log && stat(log, &st) != 0)
        skipped = "is gone";
    else if (log && !S_ISREG(st.st_mode))
        skipped = "is not a regular file (a device or FIFO is not read back)";
    else if (log && (uint64_t)st.st_size > SELFCHECK_MAX_LOG_BYTES)
        skipped = "is over 300 MB (not read back)";
    if (skipped)
        log = NULL;
    struct runcheck c;
    char err[512];
    runcheck_run(res, log, &c, err, sizeof err); /* a log that cannot be read: the checks without it */
    if (skipped && c.poisson_applies && !c.poisson_tested)
        snprintf(c.poisson_note, sizeof c.poisson_note, "the request log %s", skipped);
    runcheck_annotate(&c, res);
}

/* ---- --repeat -------------------------------------------------------------------------------------- */

static struct run_stop repeat_stop;
static volatile sig_atomic_t repeat_signals;

static void on_signal(int sig)
{
    (void)sig;
    repeat_signals++;
    run_stop_request(&repeat_stop, repeat_signals > 1);
}

static void on_progress(void *ctx, const struct run_progress *p)
{
    (void)ctx;
    cli_print_progress(stderr, p, isatty(STDERR_FILENO));
}

struct rep_hlog {
    struct outfile of;
    struct hlog_writer *w;
    const struct plan_target *targets;
    int err;
};

static void rep_interval(void *ctx, size_t target, double start_s, double length_s, const struct hdr *latency)
{
    struct rep_hlog *h = ctx;
    if (!h->err)
        h->err = hlog_writer_write(h->w, h->targets[target].name, start_s, length_s, latency);
}

/* With --stream: a target's first events and gaps as the --hlog tags them (first_event/NAME,
 * event_gap/NAME), which knee compare reads for its stream rows. */
static void rep_stream_interval(void *ctx, size_t target, double start_s, double length_s, const struct run_stream *st)
{
    struct rep_hlog *h = ctx;
    const struct hdr *hs[2] = {&st->first_event, &st->event_gap};
    const char *prefix[2] = {HLOG_TAG_FIRST_EVENT, HLOG_TAG_EVENT_GAP};
    for (int k = 0; k < 2 && !h->err; k++) {
        if (!hs[k]->counts || !hs[k]->total_count)
            continue;
        char tag[HLOG_TAG_MAX + 1];
        snprintf(tag, sizeof tag, "%s%s", prefix[k], h->targets[target].name);
        h->err = hlog_writer_write(h->w, tag, start_s, length_s, hs[k]);
    }
}

/* DIR exists and is empty (0), does not exist (1), or is unusable (-errno / KNEE_EINVAL). */
static int dir_state(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT ? 1 : -errno;
    if (!S_ISDIR(st.st_mode))
        return KNEE_EINVAL;
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    struct dirent *de;
    int r = 0;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            r = -ENOTEMPTY;
    closedir(d);
    return r;
}

/* mkdir -p */
static int make_dir(const char *dir)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n >= sizeof buf)
        return -ENAMETOOLONG;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++)
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -errno;
            buf[i] = c;
        }
    return 0;
}

static int check_dir(const struct cmd_spec *spec, const char *dir, bool create)
{
    int r = dir_state(dir);
    if (r == KNEE_EINVAL)
        return opt_fail(spec, "--out-dir %s: not a directory", dir);
    if (r == -ENOTEMPTY)
        return opt_fail(spec,
                        "--out-dir %s: not empty (knee writes repetitions only into a new or empty directory, so "
                        "nothing there is replaced; remove it or choose another)",
                        dir);
    if (r < 0)
        return opt_fail(spec, "--out-dir %s: %s", dir, knee_strerror(r));
    if (r == 1 && create && (r = make_dir(dir)) != 0)
        return opt_fail(spec, "--out-dir %s: %s", dir, knee_strerror(r));
    return 0;
}

static void path_of(char *buf, size_t len, const char *dir, size_t k, const char *ext)
{
    char stem[32];
    snprintf(stem, sizeof stem, COMPARE_REP_FMT, k);
    snprintf(buf, len, "%s/%s%s", dir, stem, ext);
}

static int dry_run(const struct cli_repeat_flags *f, const struct cmd_spec *spec, struct runopts_config *rc)
{
    if (check_dir(spec, f->out_dir, false))
        return 2;
    struct run_dryrun plan;
    char err[512];
    int r = run_dryrun(&rc->cfg, &plan, err, sizeof err);
    if (r) {
        knee_report(stderr, "knee run: ", "%s", err[0] ? err : knee_strerror(r));
        return r == KNEE_EINVAL || r == KNEE_EUNSUPPORTED || r == KNEE_ENOTFOUND ? 2 : 1;
    }
    cli_print_dryrun(stdout, &rc->cfg, &plan);
    run_dryrun_release(&plan);
    char settle[32];
    printf("\nrepetitions\n  %llu of this plan (the same seed and schedule each time), %s idle between them\n",
           (unsigned long long)f->repeat, units_fmt_duration(f->settle_ns, settle, sizeof settle));
    printf("  into %s: rep-1.bin, rep-1.hlog, rep-1.json ... rep-%llu.json, repeat.json (compare them with knee "
           "compare)\n",
           f->out_dir, (unsigned long long)f->repeat);
    for (size_t i = 0; i < rc->nthr; i++)
        printf("  --threshold %s: judged per repetition (exit 99 when any fails)\n", rc->thr[i].expr);
    printf("\ndry run: every flag checked, every target resolved; nothing was sent\n");
    return 0;
}

/* Sleep d, in steps, unless a stop is requested. false when stopped. */
static bool settle(uint64_t d_ns)
{
    uint64_t end = clock_now_ns() + d_ns;
    while (run_stop_level(&repeat_stop) == 0) {
        uint64_t now = clock_now_ns();
        if (now >= end)
            return true;
        uint64_t step = end - now < 50000000ULL ? end - now : 50000000ULL;
        struct timespec ts = {(time_t)(step / 1000000000ULL), (long)(step % 1000000000ULL)};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* An output's error line: outfile's reason names the path; flag (NULL for the files in DIR) the
 * flag that asked for it. */
static void report_error(const char *flag, const char *err)
{
    if (flag)
        knee_report(stderr, "knee run: ", "%s %s", flag, err);
    else
        knee_report(stderr, "knee run: ", "%s", err);
}

/* Write one output through core/outfile: 0, or 1 after a line on stderr. */
static int commit(struct outfile *of, const char *flag)
{
    char err[512];
    if (outfile_commit(of, err, sizeof err) != 0) {
        report_error(flag, err);
        return 1;
    }
    return 0;
}

/* flag: "--json" for knee run's own --json, NULL for DIR/repeat.json. */
static int write_summary(const char *path, const struct compare_repeat_row *rows, size_t n, size_t planned,
                         uint64_t settle_ns, const char *dir, const char *flag)
{
    struct outfile of;
    char err[512];
    if (outfile_open(&of, path, err, sizeof err) != 0) {
        report_error(flag, err);
        return 1;
    }
    compare_repeat_json(of.f, rows, n, planned, settle_ns, dir);
    if (of.kind == OUTFILE_STDOUT) {
        fflush(stdout);
        outfile_abort(&of); /* stdout is never closed here */
        return ferror(stdout) ? 1 : 0;
    }
    return commit(&of, flag);
}

/* One knee run --repeat: its flags, the plan every repetition runs, and what they gave. */
struct repeat_run {
    const struct cli_repeat_flags *f;
    struct runopts_config *rc;
    struct run_config cfg; /* rc's, with the repetitions' callbacks and outputs */
    FILE *text;
    bool progress, verbose;
    size_t n, done;
    struct compare_repeat_row *rows;
    bool accounting, written, pass;
};

/* Repetition k's hlog open in DIR: 0, or 1 after a line on stderr. */
static int open_rep_hlog(struct rep_hlog *h, const char *path)
{
    char err[512] = "";
    int r = outfile_open(&h->of, path, err, sizeof err);
    if (r == 0 && (r = hlog_writer_open(&h->w, h->of.f, (double)clock_wall_ns() / 1e9, NULL)) != 0)
        outfile_abort(&h->of);
    if (r && err[0])
        knee_report(stderr, "knee run: ", "%s", err); /* outfile's reason names the path */
    else if (r)
        knee_report(stderr, "knee run: ", "%s: %s", path, knee_strerror(r));
    return r ? 1 : 0;
}

/* A finished repetition's record judged (self-checks, thresholds) and written to DIR/rep-K.json. */
static void keep_rep(struct repeat_run *rr, struct run_record *res, const char *jsonp)
{
    cli_selfcheck(&rr->cfg, res);
    for (size_t i = 0; i < rr->rc->nthr; i++) {
        record_threshold_eval(&rr->rc->thr[i], res);
        rr->pass &= rr->rc->thr[i].pass;
    }
    record_set_thresholds(res, rr->rc->thr, rr->rc->nthr);
    res->verbose = rr->verbose;
    struct outfile jf;
    char err[512];
    if (outfile_open(&jf, jsonp, err, sizeof err) != 0) {
        report_error(NULL, err);
        rr->written = false;
    } else {
        record_write_json(jf.f, res, true);
        rr->written &= commit(&jf, NULL) == 0;
    }
    rr->written &= res->out_error == 0;
    rr->accounting &= res->accounting_ok;
}

/* A repetition's line (and its summary with --verbose, else its warnings but the warm-up's). */
static void print_rep(const struct repeat_run *rr, size_t k, const struct run_record *res,
                      const struct compare_repeat_row *row)
{
    char c[32], r50[32], r99[32], r999[32], mean[32], rate[32];
    fprintf(rr->text, "repetition %zu/%zu: %s requests, p50 %s ms, p99 %s ms, p99.9 %s ms, mean %s ms, %s/s sent%s\n",
            k, rr->n, units_fmt_count(row->requests, c, sizeof c), units_fmt_ms(row->p50, r50, sizeof r50),
            units_fmt_ms(row->p99, r99, sizeof r99), units_fmt_ms(row->p999, r999, sizeof r999),
            units_fmt_ms(row->mean, mean, sizeof mean), units_fmt_rate(row->rate, rate, sizeof rate),
            row->interrupted ? " (interrupted)" : "");
    if (rr->verbose)
        runreport_print_summary(rr->text, res, true);
    else
        for (size_t i = 0; i < res->warnings.n; i++)
            if (strncmp(res->warnings.items[i], "warm-up:", 8) != 0)
                fprintf(rr->text, "  - %s\n", res->warnings.items[i]);
}

/* Repetition k (1-based): its run into DIR (log, hlog, JSON) and its line. 0, or the exit code
 * that ends the repetitions. */
static int repetition(struct repeat_run *rr, size_t k)
{
    char logp[4200], hlogp[4200], jsonp[4200];
    path_of(logp, sizeof logp, rr->f->out_dir, k, ".bin");
    path_of(hlogp, sizeof hlogp, rr->f->out_dir, k, ".hlog");
    path_of(jsonp, sizeof jsonp, rr->f->out_dir, k, ".json");
    rr->cfg.out_path = logp;
    struct rep_hlog h = {.targets = rr->cfg.plan.targets};
    if (open_rep_hlog(&h, hlogp))
        return 1;
    rr->cfg.on_interval = rep_interval;
    rr->cfg.interval_ctx = &h;
    rr->cfg.on_stream_interval = rep_stream_interval;
    rr->cfg.stream_interval_ctx = &h;
    struct run_record res;
    char err[512];
    int r = run_execute(&rr->cfg, &res, err, sizeof err);
    if (rr->progress)
        fputs("\r\033[K", stderr);
    int hr = hlog_writer_close(h.w);
    if (r) {
        outfile_abort(&h.of);
        knee_report(stderr, "knee run: ", "repetition %zu: %s", k, err[0] ? err : knee_strerror(r));
        return (r == KNEE_EINVAL || r == KNEE_EUNSUPPORTED || r == KNEE_ENOTFOUND) && k == 1 ? 2 : 1;
    }
    if (hr || h.err) {
        outfile_abort(&h.of);
        knee_report(stderr, "knee run: ", "%s: %s", hlogp, knee_strerror(h.err ? h.err : hr));
        rr->written = false;
    } else if (commit(&h.of, NULL)) {
        rr->written = false;
    }
    keep_rep(rr, &res, jsonp);
    struct compare_repeat_row *row = &rr->rows[rr->done++];
    compare_repeat_row_of(row, &res);
    print_rep(rr, k, &res, row);
    record_release(&res);
    return 0;
}

/* The summary across the repetitions that ran: printed, DIR/repeat.json, --json, --html. */
static void summarize(struct repeat_run *rr, const char *json_path)
{
    const struct cli_repeat_flags *f = rr->f;
    compare_repeat_print(rr->text, rr->rows, rr->done);
    if (rr->done < rr->n)
        fprintf(rr->text, "  stopped: %zu of %zu repetitions ran\n", rr->done, rr->n);
    char sum[4200];
    snprintf(sum, sizeof sum, "%s/%s", f->out_dir, COMPARE_REPEAT_SUMMARY);
    rr->written &= write_summary(sum, rr->rows, rr->done, rr->n, f->settle_ns, f->out_dir, NULL) == 0;
    if (json_path)
        rr->written &= write_summary(json_path, rr->rows, rr->done, rr->n, f->settle_ns, f->out_dir, "--json") == 0;
    fprintf(rr->text, "\nwrote %s (compare two such directories: knee compare BEFORE AFTER)\n", f->out_dir);
    if (f->html) { /* knee report DIR: every repetition and the summary across them */
        const char *files[] = {f->out_dir, NULL};
        struct html_write_opts h = {.files = files};
        char err[1024];
        if (html_write_report(f->html, &h, NULL, err, sizeof err) != 0) {
            knee_report(stderr, "knee run: ", "--html %s", err);
            rr->written = false;
        }
    }
}

int cli_repeat_main(const struct cli_repeat_flags *f, const struct cmd_spec *spec, struct runopts_config *rc,
                    const char *json_path, bool progress, bool verbose, bool dry)
{
    if (dry)
        return dry_run(f, spec, rc);
    if (check_dir(spec, f->out_dir, true))
        return 2;
    struct cli_output html_check = {.html_path = f->html};
    struct run_config no_outputs = {0};
    if (f->html && cli_output_check(&html_check, spec, &no_outputs))
        return 2;
    struct repeat_run rr = {.f = f,
                            .rc = rc,
                            .cfg = rc->cfg,
                            .text = json_path && strcmp(json_path, "-") == 0 ? stderr : stdout,
                            .progress = progress || isatty(STDERR_FILENO),
                            .verbose = verbose,
                            .n = (size_t)f->repeat,
                            .accounting = true,
                            .written = true,
                            .pass = true};
    if (rr.progress)
        rr.cfg.on_progress = on_progress;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    repeat_signals = 0;
    run_stop_init(&repeat_stop);
    rr.cfg.stop = &repeat_stop;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rr.rows = xcalloc(rr.n, sizeof *rr.rows);
    int code = 0;
    for (size_t k = 1; k <= rr.n && !code; k++) {
        if (k > 1 && f->settle_ns && !settle(f->settle_ns))
            break;
        if (run_stop_level(&repeat_stop))
            break;
        code = repetition(&rr, k);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rr.done)
        summarize(&rr, json_path);
    free(rr.rows);
    if (code)
        return code;
    return !rr.accounting || !rr.written ? 1 : !rr.pass ? 99 : 0;
}
