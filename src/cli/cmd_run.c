/* `knee run`: the load options (cli/runopts) plus knee run's outputs → one struct run_config
 * → run_execute → the summary (runreport), the JSON and the thresholds' verdict. Every check
 * of user input happens before the first request: a bad flag is one line naming it and exit
 * code 2. */
#include "cli/commands.h"
#include "cli/io_check.h"
#include "cli/opt.h"
#include "cli/run_abort.h"
#include "cli/push_flags.h"
#include "cli/run_metrics.h"
#include "cli/run_output.h"
#include "cli/run_live.h"
#include "cli/run_repeat.h"
#include "cli/run_setup.h"
#include "cli/runopts.h"
#include "load/variant.h"
#include "core/err.h"
#include "cli/run_print.h"
#include "load/run.h"
#include "record/threshold.h"
#include "runreport/runreport.h"
#include "core/units.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* knee run's own flags, beside the load options. */
struct run_flags {
    const char *json, *hlog, *html;
    bool progress, verbose, dry_run;
    bool live;                       /* --live: the full-screen view (cli/run_live.c) */
    struct metrics_flags metrics;    /* --metrics-listen, --metrics-linger, --metrics-buckets */
    bool latency;                    /* wrk's --latency: knee always prints the distribution */
    const char *script;              /* wrk's -s: refused with a pointer to knee's flags */
    struct cli_abort *abort;         /* --abort-if, --abort-after (parsed after the load options) */
    struct push_flags push;          /* --remote-write and its companions */
    struct run_metrics *run_metrics; /* the registry and the pushes (cli_metrics_start), or NULL */
};

static struct opt row(const char *name, char short_name, enum opt_kind kind, void *dst, const char *metavar,
                      const char *help)
{
    return (struct opt){
        .name = name, .short_name = short_name, .kind = kind, .dst = dst, .metavar = metavar, .help = help};
}

/* The table: the load options with knee run's own rows among them, in --help order. */
static size_t run_rows(struct runopts *o, struct run_flags *f, struct opt *rows)
{
    size_t n = 0;
    for (int id = RUNOPT_RATE; id <= RUNOPT_CAPTURE; id++) /* the load flags, the requests that vary, --setup */
        rows[n++] = runopts_row(o, (enum runopt_id)id);
    for (int id = RUNOPT_CERT; id <= RUNOPT_CONNECT_TO; id++) /* mutual TLS, where connections go */
        rows[n++] = runopts_row(o, (enum runopt_id)id);
    rows[n++] =
        row("json", 0, OPT_STR, &f->json, "FILE|-", "write the summary as JSON (- = stdout; the text goes to stderr)");
    rows[n++] = runopts_row(o, RUNOPT_OUT);
    rows[n++] = row("hlog", 0, OPT_STR, &f->hlog, "FILE",
                    "HdrHistogram interval log: per second and target, latency in ns (tag = target name)");
    rows[n++] = row("html", 0, OPT_STR, &f->html, "FILE",
                    "the report with charts at the end (knee report of the run; with --out, every request)");
    rows[n++] =
        row("progress", 0, OPT_FLAG, &f->progress, NULL, "live progress on stderr even when it is not a terminal");
    rows[n++] = row("live", 0, OPT_FLAG, &f->live, NULL,
                    "a full-screen view of the run, redrawn every second (stdout must be a terminal; "
                    "the summary follows)");
    rows[n++] = runopts_row(o, RUNOPT_THRESHOLD);
    rows[n++] = runopts_row(o, RUNOPT_SPIN);
    rows[n++] = runopts_row(o, RUNOPT_IO);
    rows[n++] = runopts_row(o, RUNOPT_LAG_LIMIT);
    rows[n++] = runopts_row(o, RUNOPT_TIMER_SLACK);
    rows[n++] = runopts_row(o, RUNOPT_PROMPT_READS);
    for (int id = RUNOPT_PROXY; id <= RUNOPT_CONNECT_RATE; id++) /* how connections are made */
        rows[n++] = runopts_row(o, (enum runopt_id)id);
    for (int id = RUNOPT_SHARD; id <= RUNOPT_START_AT; id++) /* one plan as N processes */
        rows[n++] = runopts_row(o, (enum runopt_id)id);
    rows[n++] = runopts_row(o, RUNOPT_ABORT_IF);
    rows[n++] = runopts_row(o, RUNOPT_ABORT_AFTER);
    rows[n++] = runopts_row(o, RUNOPT_HTTP3);
    rows[n++] = runopts_row(o, RUNOPT_QLOG);
    for (int id = 0; id < METRICS_FLAG_COUNT; id++)
        rows[n++] = metrics_flags_row(&f->metrics, (enum metrics_flag_id)id, METRICS_FOR_RUN);
    for (int id = 0; id < PUSH_FLAG_COUNT; id++)
        rows[n++] = push_flags_row(&f->push, (enum push_flag_id)id);
    rows[n++] = row("verbose", 'v', OPT_FLAG, &f->verbose, NULL,
                    "the full summary: every table, per target, by outcome (default when something is wrong)");
    rows[n++] = row("dry-run", 0, OPT_FLAG, &f->dry_run, NULL,
                    "check every flag, resolve the targets, print the plan and exit: send nothing");
    rows[n++] = row("latency", 'L', OPT_FLAG, &f->latency, NULL,
                    "wrk's flag, accepted and without effect: knee always prints the latency distribution");
    rows[n++] = row("script", 's', OPT_STR, &f->script, "FILE",
                    "wrk's Lua script: refused; knee's flags describe requests (see docs/COMING_FROM.md)");
    return n;
}
#define RUN_NROWS (RUNOPT_COUNT + 9 + METRICS_FLAG_COUNT + PUSH_FLAG_COUNT)

static const char run_epilog[] =
    "Intervals: T0 planned send, T1 actual send (the write, or the connect start for a new\n"
    "connection), T5 full response. latency = T5-T0 in the open loop (T5-T1 closed),\n"
    "service = T5-T1, ttfb = first byte - T1, lag = T1-T0.\n"
    "Outcomes: ok (2xx/3xx, and --expect-body), rejected (--reject), http_error, invalid,\n"
    "transport, timeout, dropped (never sent), cancelled (in flight after --drain).\n"
    "Ctrl-C stops planning and drains; a second Ctrl-C cancels what is in flight.\n"
    "Rates count events inside the measurement window (warm-up end .. end of the plan) by\n"
    "when they happened; later sends and completions are reported apart (docs/FORMATS.md).\n"
    "Thresholds: [TARGET.][GROUP.][METRIC.]STAT OP VALUE; latency statistics are of ok\n"
    "requests unless GROUP says all. or another outcome (all.p99<1s, timeout.count==0).\n"
    "Outputs (--json, --out, --hlog, --html) replace an existing file once written whole\n"
    "(a failed run keeps the old one); devices and FIFOs are written in place, never removed.\n"
    "Exit: 0 ok, 1 an output not written or the accounting broke, 2 bad input, 3 not one\n"
    "request succeeded (the target is down or every request failed) or --setup failed, 99 a\n"
    "threshold failed or an --abort-if rule stopped the run (the summary says ABORTED first).\n\n"
    "examples:\n"
    "  knee run -c 8 -d 10s http://127.0.0.1:8080/\n"
    "  knee run --dry-run -R 5000 -d 30s --warmup 5s http://127.0.0.1:8080/   (the plan; nothing is sent)\n"
    "  knee run -R 5000 --arrivals poisson -d 30s --json run.json http://127.0.0.1:8080/\n"
    "  knee run -R 200 --target read=http://h/r --target write=http://h/w --mix read=3,write=1 \\\n"
    "           -m write=POST -b write=@payload.json --reject 503:QUEUE_TIMEOUT --threshold 'p99<250ms'\n";

static bool progress_terminal; /* stderr is a terminal: one line rewritten in place */

static void on_progress(void *ctx, const struct run_progress *p)
{
    (void)ctx;
    cli_print_progress(stderr, p, progress_terminal);
}

static volatile sig_atomic_t signals_seen;
static struct run_stop run_stop; /* the signal handler's way to the run */

static void on_signal(int sig)
{
    (void)sig;
    signals_seen++;
    run_stop_request(&run_stop, signals_seen > 1);
}

/* Run with Ctrl-C (and SIGTERM) wired to the stop handle: the first stops planning and
 * drains, the second cancels what is in flight. */
static int run_with_signals(struct run_config *cfg, struct run_record *res, char *err, size_t errlen)
{
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    signals_seen = 0;
    run_stop_init(&run_stop);
    cfg->stop = &run_stop;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int r = run_execute(cfg, res, err, errlen);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    cfg->stop = NULL;
    return r;
}

/* The exit code of a run_execute or run_dryrun failure: bad input (2) or a failure to run (1). */
static int failure_code(int r)
{
    return (r == KNEE_EINVAL || r == KNEE_EUNSUPPORTED || r == KNEE_ENOTFOUND) ? 2 : 1;
}

/* Where the requests of targets with a request source come from (--targets, --feed). */
static void print_sources(FILE *f, const struct runopts_config *rc)
{
    for (size_t i = 0; i < rc->ntg; i++)
        if (rc->sources && rc->sources[i]) {
            char d[512];
            variant_source_describe(rc->sources[i], d, sizeof d);
            fprintf(f, "  %s: requests from %s\n", rc->tc[i].name, d);
        }
}

/* After the run: a request source that stopped it says why (an entry that could not be used:
 * exit 2, as bad input; a pipe's end: a note). true when one failed. */
static bool sources_report(const struct runopts_config *rc)
{
    bool failed = false;
    for (size_t i = 0; i < rc->ntg; i++) {
        const struct variant_source *s = rc->sources ? rc->sources[i] : NULL;
        if (!s)
            continue;
        if (variant_source_error(s)[0]) {
            knee_report(stderr, "knee run: ", "%s (the run stopped there; every request sent is accounted)",
                        variant_source_error(s));
            failed = true;
        } else if (variant_source_ended(s)) {
            knee_report(stderr, "knee run: ", "--targets %s: the input ended; the run stopped planning there",
                        rc->targets_path);
        }
    }
    return failed;
}

/* --dry-run: everything a run checks before its first request, then the plan; nothing is
 * sent and no file is created (outputs are only checked for write access). */
static int dry_run(const struct cmd_spec *spec, const struct runopts_config *rc, const struct run_flags *f)
{
    const struct run_config *cfg = &rc->cfg;
    struct cli_output out = {.json_path = f->json, .hlog_path = f->hlog, .html_path = f->html};
    if (cli_output_check(&out, spec, cfg))
        return 2;
    double bounds[METRICS_MAX_BOUNDS];
    size_t nbounds;
    if (cli_metrics_check(&f->metrics, spec, rc->thr, rc->nthr, bounds, &nbounds))
        return 2;
    struct run_dryrun dry;
    char err[512];
    int r = run_dryrun(cfg, &dry, err, sizeof err);
    if (r) {
        knee_report(stderr, "knee run: ", "%s", err[0] ? err : knee_strerror(r));
        return failure_code(r);
    }
    cli_print_dryrun(stdout, cfg, &dry);
    print_sources(stdout, rc);
    cli_setup_print_plan(stdout, rc->setup);
    cli_print_shard_start(stdout, cfg);
    run_dryrun_release(&dry);
    if (f->json || cfg->out_path || f->hlog || f->html || rc->nthr || f->abort->n || f->metrics.listen || f->push.url)
        printf("\noutputs\n");
    if (f->json)
        printf("  --json %s: the summary as JSON\n", strcmp(f->json, "-") == 0 ? "- (stdout)" : f->json);
    if (cfg->out_path) {
        size_t n = strlen(cfg->out_path);
        bool csv = n >= 4 && strcmp(cfg->out_path + n - 4, ".csv") == 0;
        printf("  --out %s: one row per request (%s)\n", cfg->out_path, csv ? "CSV" : "knee's binary request log");
    }
    if (f->hlog)
        printf("  --hlog %s: HdrHistogram interval log, one interval per second and target\n", f->hlog);
    if (f->html)
        printf("  --html %s: the report with charts (knee report)\n", f->html);
    for (size_t i = 0; i < rc->nthr; i++)
        printf("  --threshold %s (exit 99 when it fails)\n", rc->thr[i].expr);
    cli_abort_print(stdout, f->abort);
    if (f->metrics.listen) {
        char b[METRICS_MAX_BOUNDS * 12];
        printf("  --metrics-listen %s: Prometheus metrics, histogram buckets %s\n", f->metrics.listen,
               metrics_flags_format_bounds(bounds, nbounds, b, sizeof b));
    }
    if (f->push.url) {
        char d[32];
        printf("  --remote-write %s: Prometheus remote-write every %s%s\n", f->push.url,
               units_fmt_duration(f->push.interval_ns ? f->push.interval_ns : PUSH_INTERVAL_DEFAULT_NS, d, sizeof d),
               f->push.required ? " (exit 1 when not one push is accepted)" : "");
    }
    printf("\ndry run: every flag checked, every target resolved; nothing was sent\n");
    return opt_stdout_done(spec);
}

/* The run, the reports and the exit code (cli/commands.h): 0; 1 when the accounting broke,
 * an output that was asked for (--json, --hlog, --out, the summary on stdout) could not be
 * written whole, or the run could not start; 2 for bad input found by the engine (a name that
 * does not resolve); 3 when not one request succeeded; 99 when a threshold failed. */
static int run_and_report(const struct cmd_spec *spec, struct runopts_config *rc, struct cli_output *out,
                          const struct run_flags *f)
{
    struct run_config *cfg = &rc->cfg;
    progress_terminal = isatty(STDERR_FILENO);
    bool progress = !f->live && (f->progress || progress_terminal);
    if (progress)
        cfg->on_progress = on_progress;
    struct run_record res;
    char err[512];
    cli_print_shard_start(stderr, cfg);
    struct cli_live live = {0};
    if (f->live)
        cli_live_start(&live, cfg, STDOUT_FILENO);
    cli_abort_install(f->abort, cfg); /* after on_progress (and --live's): it chains in front of them */
    int r = run_with_signals(cfg, &res, err, sizeof err);
    bool aborted = cli_abort_finish(f->abort, cfg, r ? NULL : &res); /* the record says it before any report */
    cli_live_finish(&live); /* the main screen back before anything prints: the summary stays in the scrollback */
    if (progress && progress_terminal)
        fputs("\r\033[K", stderr);
    if (r) {
        cli_output_abort(out);
        knee_report(stderr, "knee run: ", "%s", err[0] ? err : knee_strerror(r));
        return failure_code(r);
    }
    bool written = cli_output_close_hlog(out);
    cli_metrics_push_end(f->run_metrics, &res.remote_write); /* the final push: after the last second's merge */
    cli_push_warn(&res.remote_write, &res.warnings);
    bool all_pass = true;
    for (size_t i = 0; i < rc->nthr; i++) {
        record_threshold_eval(&rc->thr[i], &res);
        all_pass &= rc->thr[i].pass;
    }
    record_set_thresholds(&res, rc->thr, rc->nthr);
    res.verbose = f->verbose;
    bool json_stdout = out->json_path && strcmp(out->json_path, "-") == 0;
    cli_selfcheck(cfg, &res); /* self-checks and --until-ci as warnings (cli/run_repeat.c) */
    runreport_print_summary(json_stdout ? stderr : stdout, &res, f->verbose);
    runreport_print_shard(json_stdout ? stderr : stdout, &res);
    runreport_print_pictures(json_stdout ? stderr : stdout, json_stdout ? STDERR_FILENO : STDOUT_FILENO, &res);
    if (!json_stdout)
        written &= opt_stdout_done(spec) == 0;
    written &= cli_output_json(out, &res);
    written &= cli_output_html(out, cfg, &res);
    if (res.out_error) /* the summary's warnings said why; the error line says it where it is seen */
        knee_report(stderr, "knee run: ", "--out %s: %s", cfg->out_path, knee_strerror(res.out_error));
    written &= res.out_error == 0;
    bool source_failed = sources_report(rc);
    int code = !res.accounting_ok || !written || cli_push_failed_required(&res.remote_write) ? 1
               : source_failed                                                               ? 2
               : aborted                                                                     ? 99
               : res.no_ok                                                                   ? KNEE_EXIT_NO_OK
               : !all_pass                                                                   ? 99
                                                                                             : 0;
    record_release(&res);
    return code;
}

/* No output is a file the flags read (--body @FILE, --cacert), nor another output (--json X
 * --out X would keep one of the two): 0, or 2 after one line. */
static int check_outputs(const struct cmd_spec *spec, const struct runopts_config *rc, const struct run_flags *f)
{
    struct cli_io io = {0};
    runopts_inputs(rc, &io);
    cli_io_output(&io, "--json", f->json);
    cli_io_output(&io, "--out", rc->cfg.out_path);
    cli_io_output(&io, "--hlog", f->hlog);
    cli_io_output(&io, "--html", f->html);
    int code = cli_io_check(&io, spec);
    cli_io_release(&io);
    return code;
}

int cmd_run(int argc, char **argv)
{
    struct runopts o;
    runopts_init(&o);
    struct run_flags f = {0};
    f.metrics.push = &f.push;
    struct cli_repeat_flags rep = {0}; /* --repeat, --settle, --out-dir, --until-ci */
    struct opt rows[RUN_NROWS + RUN_REPEAT_NROWS];
    struct cmd_spec spec = {
        .name = "run",
        .usage = "[options] [URL...]",
        .summary = "Send HTTP/1.1 load in an open loop (--rate) or a closed loop (--connections) and report "
                   "latency from the planned send, service time, outcomes and generator lag.",
        .opts = rows,
        .nopts = run_rows(&o, &f, rows),
        .epilog = run_epilog,
        .min_args = 0,
        .max_args = SIZE_MAX,
    };
    spec.nopts += cli_repeat_rows(&rep, rows + spec.nopts);
    struct strlist urls = {0};
    int rc = opt_parse(&spec, argc, argv, &urls);
    if (rc) {
        push_flags_release(&f.push);
        runopts_release(&o);
        return rc == 1 ? 0 : rc;
    }
    if (f.script) {
        rc = opt_fail(&spec,
                      "-s/--script %s: knee runs no Lua scripts; say what to send with flags: methods "
                      "(-m [T=]POST), headers (-H), bodies (-b [T=]@FILE), several targets (--target "
                      "NAME=URL) and their mix (--mix); docs/COMING_FROM.md maps wrk's scripts",
                      f.script);
        strlist_release(&urls);
        push_flags_release(&f.push);
        runopts_release(&o);
        return rc;
    }
    if (f.live && !f.dry_run) { /* --dry-run draws nothing: --live is ignored there */
        rc = f.progress   ? opt_fail(&spec, "--live and --progress: choose one (--live draws the whole screen)")
             : rep.repeat ? opt_fail(&spec, "--live shows one run: not with --repeat")
                          : cli_live_check(&spec, STDOUT_FILENO);
        if (rc) {
            strlist_release(&urls);
            push_flags_release(&f.push);
            runopts_release(&o);
            return rc;
        }
    }
    if (f.latency)
        fprintf(stderr, "knee run: --latency: accepted for wrk users and ignored: knee always prints the latency "
                        "distribution (p50 .. p99.9 and max)\n");
    struct runopts_config cfg;
    struct cli_abort abort_rules;
    f.abort = &abort_rules;
    rc = runopts_build(&o, &spec, &urls, &cfg);
    if (rc == 0) {
        rc = cli_abort_parse(&abort_rules, &o, &spec, &cfg.cfg);
        if (rc == 0 && rep.repeat && abort_rules.n)
            rc = opt_fail(&spec, "--abort-if: not with --repeat (each repetition would stop on its own)");
        if (rc)
            runopts_config_release(&cfg);
    }
    if (rc == 0) {
        cfg.cfg.argv = (const char *const *)argv;
        cfg.cfg.argc = argc;
        struct cli_output out = {.json_path = f.json, .hlog_path = f.hlog, .html_path = f.html};
        struct run_metrics *metrics = NULL; /* --metrics-listen: every run below publishes to it */
        bool ran = false;
        rep.html = f.html; /* with --repeat: the report of DIR once the repetitions ran */
        rc = check_outputs(&spec, &cfg, &f);
        if (rc == 0)
            rc = cli_repeat_check(&rep, &spec, &cfg.cfg, f.hlog);
        if (rc == 0 && f.dry_run && rep.repeat) { /* dry_run() checks them itself */
            double bounds[METRICS_MAX_BOUNDS];
            size_t nbounds;
            rc = cli_metrics_check(&f.metrics, &spec, cfg.thr, cfg.nthr, bounds, &nbounds);
        }
        if (rc == 0 && !f.dry_run)
            rc = cli_metrics_start(&f.metrics, &spec, &cfg.cfg, cfg.thr, cfg.nthr, &metrics);
        f.run_metrics = metrics;
        if (rc == 0 && !f.dry_run) /* every check made: the setup request, then the load */
            rc = cli_setup_run(&spec, cfg.setup, &cfg, stderr);
        if (rc == 0 && rep.repeat) {
            ran = !f.dry_run;
            rc = cli_repeat_main(&rep, &spec, &cfg, f.json, f.progress, f.verbose, f.dry_run);
        } else if (rc == 0 && f.dry_run) {
            rc = dry_run(&spec, &cfg, &f);
        } else if (rc == 0 && (rc = cli_output_open(&out, &spec, &cfg.cfg)) == 0) {
            struct cli_until_ci u;
            cli_until_ci_install(&u, &cfg.cfg, rep.until_ci);
            ran = true;
            rc = run_and_report(&spec, &cfg, &out, &f);
            cli_until_ci_release(&u);
        }
        int mrc =
            cli_metrics_finish(metrics, ran && rc != 2); /* --metrics-linger: the last scrape sees the final values */
        if (rc == 0)
            rc = mrc; /* --remote-write-required over --repeat: no record said it */
        runopts_config_release(&cfg);
    }
    strlist_release(&urls);
    push_flags_release(&f.push);
    runopts_release(&o);
    return rc;
}
