/* `knee capacity`: how much load a service carries within its SLO (src/capacity). The load
 * options are knee run's (cli/runopts: the rows that make sense without a rate or a duration
 * of its own), plus the ladder, the repetitions, the SLO, the probe and the outputs. Every
 * check of user input happens before the first request: one line naming the flag, exit 2.
 * Exit codes: 0 a valid capacity, 99 --require not met, 3 INVALID, 1 a failure to run or an
 * output not written, 2 bad input. */
#include "capacity/capacity.h"
#include "cli/commands.h"
#include "cli/io_check.h"
#include "cli/metrics_flags.h"
#include "cli/push_flags.h"
#include "cli/opt.h"
#include "cli/run_metrics.h"
#include "cli/runopts.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/outfile.h"
#include "html/html.h"
#include "load/run.h"
#include "record/threshold.h"

#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* knee capacity's own flags. */
struct cap_flags {
    const char *rates, *between, *probe, *json, *out, *hlog, *html;
    double max, min, probe_rate, agree, require;
    uint64_t steps, reps, step_ns, settle_ns, probe_lag_limit_ns, service_ns;
    bool linear, no_cross_check, progress, dry_run;
    struct strlist slo;
    struct metrics_flags metrics; /* --metrics-listen, --metrics-linger, --metrics-buckets */
    struct push_flags push;       /* --remote-write and its companions */
};

static struct opt row(const char *name, char short_name, enum opt_kind kind, void *dst, const char *metavar,
                      const char *help)
{
    return (struct opt){
        .name = name, .short_name = short_name, .kind = kind, .dst = dst, .metavar = metavar, .help = help};
}

/* The load options knee capacity takes from knee run: everything but the rate, the ramp, the
 * closed loop's think time, the run's length and knee run's outputs and thresholds. */
/* clang-format off */
static const enum runopt_id load_rows[] = {
    RUNOPT_TARGET,
    RUNOPT_MIX,
    RUNOPT_METHOD,
    RUNOPT_HEADER,
    RUNOPT_HEADER_SECRET,
    RUNOPT_BODY,
    RUNOPT_ARRIVALS,
    RUNOPT_SEED,
    RUNOPT_CONNECTIONS,
    RUNOPT_NO_KEEPALIVE,
    RUNOPT_TIMEOUT,
    RUNOPT_DRAIN,
    RUNOPT_WARMUP,
    RUNOPT_WHEN_BUSY,
    RUNOPT_REJECT,
    RUNOPT_EXPECT_BODY,
    RUNOPT_THREADS,
    RUNOPT_SPIN,
    RUNOPT_IO,
    RUNOPT_LAG_LIMIT,
    RUNOPT_TIMER_SLACK,
    RUNOPT_REQUESTS_PER_CONNECTION,
    RUNOPT_RETRY_STALE,
    RUNOPT_NO_RETRY_STALE,
    RUNOPT_CACERT,
    RUNOPT_INSECURE,
    RUNOPT_TLS_VERSION,
    RUNOPT_CIPHERS,
    RUNOPT_TLS_RESUME,
    RUNOPT_HTTP1,
    RUNOPT_HTTP2,
    RUNOPT_H2C,
    RUNOPT_HTTP3, /* every step's run, the probe and the closed loop over QUIC */
    RUNOPT_STREAMS,
    RUNOPT_CERT,
    RUNOPT_KEY,
    RUNOPT_UNIX_SOCKET,
    RUNOPT_CONNECT_TO,
    RUNOPT_TARGETS_FILE, /* the targets file's workload at every step (a file: each step reads it again) */
    RUNOPT_TARGETS_FORMAT,
    RUNOPT_TARGETS_ORDER,
    RUNOPT_FEED,
    RUNOPT_FEED_ORDER,
};
/* clang-format on */
#define NLOAD (sizeof load_rows / sizeof load_rows[0])
#define CAP_NROWS (NLOAD + 26 + PUSH_FLAG_COUNT)

static size_t cap_rows(struct runopts *o, struct cap_flags *f, struct opt *rows)
{
    size_t n = 0;
    rows[n++] = row("slo", 0, OPT_LIST, &f->slo, "EXPR",
                    "a step holds only if EXPR holds (repeatable; knee run --threshold's grammar: p99<10ms, "
                    "read.p99<20ms, error_rate<1%)");
    rows[n++] = row("rates", 0, OPT_STR, &f->rates, "R,R,...", "the ladder: rates per second, increasing");
    rows[n++] = row("max", 0, OPT_RATE, &f->max, "R", "or a ladder up to R (its top rate) ...");
    rows[n++] = row("steps", 0, OPT_COUNT, &f->steps, "K", "... of K rates (default 7) ...");
    rows[n++] = row("min", 0, OPT_RATE, &f->min, "R", "... from R (default: max/8 geometric, max/K linear) ...");
    rows[n++] =
        row("linear", 0, OPT_FLAG, &f->linear, NULL, "... evenly spaced (default: geometric, a constant ratio)");
    rows[n++] = row("reps", 0, OPT_COUNT, &f->reps, "N", "repetitions of the whole ladder (default 3)");
    rows[n++] = row("step", 0, OPT_DURATION, &f->step_ns, "D", "the measured window of each step (default 5s)");
    rows[n++] =
        row("settle", 0, OPT_DURATION, &f->settle_ns, "D", "idle time before each step so queues drain (default 1s)");
    rows[n++] = row("between", 0, OPT_STR, &f->between, "CMD",
                    "a reset command (/bin/sh -c) before every repetition, timed, never inside a window");
    rows[n++] = row("probe", 0, OPT_STR, &f->probe, "URL",
                    "the calibration probe's target (default: knee serve --preset null in this process)");
    rows[n++] = row("probe-rate", 0, OPT_RATE, &f->probe_rate, "R", "the probe's rate (default 115% of the top rate)");
    rows[n++] = (struct opt){
        .name = "probe-lag-limit",
        .kind = OPT_DURATION,
        .dst = &f->probe_lag_limit_ns,
        .metavar = "D",
        .help = "the probe fails when its lag p99 is above D (default: --lag-limit, else 10% of the SLO's "
                "tightest latency bound, at least 1ms)",
        .unit_ns = NS_PER_MS,
    };
    rows[n++] = row("agree", 0, OPT_SHARE, &f->agree, "P",
                    "the ladder and the second method may differ by P (default 10%), else INVALID");
    rows[n++] = row("no-cross-check", 0, OPT_FLAG, &f->no_cross_check, NULL,
                    "skip the closed-loop cross-check (the verdict says so)");
    rows[n++] =
        row("require", 0, OPT_RATE, &f->require, "R", "exit 99 unless a valid capacity of at least R was found");
    for (size_t i = 0; i < NLOAD; i++) {
        struct opt r = runopts_row(o, load_rows[i]);
        if (load_rows[i] == RUNOPT_WARMUP)
            r.help = "before each window, left out of its statistics (default 1s)";
        else if (load_rows[i] == RUNOPT_CONNECTIONS)
            r.help = "the open loop's connection pool cap (default 10000)";
        else if (load_rows[i] == RUNOPT_TARGET)
            r.help = "a named target (repeatable); the targets share each rate of the ladder by --mix";
        else if (load_rows[i] == RUNOPT_MIX)
            r.help = "weights of the targets sharing each rate (default 1 each)";
        rows[n++] = r;
    }
    rows[n++] =
        row("json", 0, OPT_STR, &f->json, "FILE|-", "the whole result as JSON (- = stdout; the text goes to stderr)");
    rows[n++] = row("out", 'o', OPT_STR, &f->out, "DIR",
                    "keep every window's per-request log (.bin) and hlog (.hlog) in DIR (created)");
    rows[n++] = row("hlog", 0, OPT_STR, &f->hlog, "FILE",
                    "one HdrHistogram interval log of every window (tag rep<N>/<rate>/<target>)");
    rows[n++] = row("html", 0, OPT_STR, &f->html, "FILE",
                    "the report with charts at the end (knee report of the --json document)");
    rows[n++] = (struct opt){
        .name = "service",
        .kind = OPT_DURATION,
        .dst = &f->service_ns,
        .metavar = "D",
        .help = "with --html: the service time whose M/M/1 and M/D/1 the knee curve also draws (bare number: ms)",
        .unit_ns = NS_PER_MS,
    };
    for (int id = 0; id < METRICS_FLAG_COUNT; id++)
        rows[n++] = metrics_flags_row(&f->metrics, (enum metrics_flag_id)id, METRICS_FOR_RUN);
    for (int id = 0; id < PUSH_FLAG_COUNT; id++)
        rows[n++] = push_flags_row(&f->push, (enum push_flag_id)id);
    rows[n++] = row("progress", 0, OPT_FLAG, &f->progress, NULL,
                    "progress on stderr even when it is not a terminal (a plain line as each window starts)");
    rows[n++] = row("dry-run", 0, OPT_FLAG, &f->dry_run, NULL,
                    "check every flag, resolve the targets, print the ladder and the plan: send nothing");
    return n;
}

static const char cap_epilog[] =
    "A step is held when the generator delivered it (>= 99% of the window's plan sent in it, less\n"
    "what the lag carries past its end; not generator-limited by knee run's rule), a request ended\n"
    "ok and every --slo term passed. A rate is held when a strict majority of the\n"
    "valid repetitions held it; the capacity is the highest held rate with every lower rate held.\n"
    "Before each repetition a probe sends 115% of the top rate to a target that runs no code; a\n"
    "repetition whose probe falls short measured the generator and is excluded. Then a closed loop\n"
    "(1, 2, 4, ... connections) measures the highest throughput within the SLO, an upper bound: a\n"
    "ladder above it is INVALID. Its service times, fed through the ladder's planned arrivals in a\n"
    "simulated queue, predict the capacity: well below the closed loop, the capacity is latency-bound\n"
    "and that prediction is the second method; else throughput-bound and the closed loop is. When\n"
    "the second method and the ladder differ by more than --agree, the verdict is INVALID. No\n"
    "search: the ladder is fixed.\n"
    "Exit codes: 0 a valid capacity, 99 --require not met, 3 INVALID, 1 failure, 2 bad input.\n"
    "Ctrl-C stops the window in progress and prints what was measured.\n\n"
    "examples:\n"
    "  knee capacity --max 2000 --slo 'p99<10ms' http://127.0.0.1:8080/\n"
    "  knee capacity --rates 50,70,90,110 --reps 5 --arrivals poisson --slo 'p99<100ms' --json cap.json URL\n"
    "  knee capacity --max 4k --target read=http://h/r --target write=http://h/w --mix read=1,write=1 \\\n"
    "                -m write=POST --slo 'read.p99<10ms' --slo 'write.p99<20ms' --between ./reset.sh\n";

static volatile sig_atomic_t signals_seen;
static struct run_stop cap_stop;

static void on_signal(int sig)
{
    (void)sig;
    signals_seen++;
    run_stop_request(&cap_stop, signals_seen > 1);
}

static bool progress_terminal; /* stderr is a terminal: a live line; else plain lines */

static void on_progress(void *ctx, const struct capacity_progress *p)
{
    (void)ctx;
    capacity_print_progress(stderr, p, progress_terminal);
}

static bool given(const struct cmd_spec *spec, const char *name)
{
    const struct opt *o = opt_find(spec, name);
    return o && o->seen;
}

/* The ladder from --rates or --max/--min/--steps/--linear. 0 or 2 after the message. */
static int make_ladder(const struct cmd_spec *spec, const struct cap_flags *f, double *rates, size_t *n)
{
    char why[256];
    if (f->rates && given(spec, "max"))
        return opt_fail(spec, "--rates and --max: give one (a list, or a ladder up to --max)");
    if (f->rates) {
        if (given(spec, "steps") || given(spec, "min") || f->linear)
            return opt_fail(spec, "--steps, --min and --linear shape a ladder made from --max, not --rates");
        if (capacity_ladder_parse(f->rates, rates, n, why, sizeof why))
            return opt_fail(spec, "%s", why);
        return 0;
    }
    if (!given(spec, "max"))
        return opt_fail(spec, "no ladder: give --rates R,R,... or --max R (with --steps K)");
    if (given(spec, "steps") && (f->steps < 2 || f->steps > CAPACITY_MAX_RATES))
        return opt_fail(spec, "--steps must be between 2 and %d", CAPACITY_MAX_RATES);
    size_t steps = given(spec, "steps") ? (size_t)f->steps : CAPACITY_DEFAULT_STEPS;
    if (capacity_ladder_make(given(spec, "min") ? f->min : 0, f->max, steps, f->linear, rates, why, sizeof why))
        return opt_fail(spec, "%s", why);
    *n = steps;
    return 0;
}

/* The run options into a run_config: knee run's builder, with the ladder's top rate standing
 * in for --rate (the builder then checks the open loop: --arrivals, --when-busy, ...). */
static int build_load(struct runopts *o, const struct cmd_spec *spec, const struct strlist *urls, double top,
                      uint64_t window_ns, struct runopts_config *rc)
{
    struct opt rows[CAP_NROWS + 2];
    memcpy(rows, spec->opts, spec->nopts * sizeof *rows);
    o->rate = top;
    o->duration_ns = o->warmup_ns + window_ns; /* one step: what run_validate checks the warm-up against */
    rows[spec->nopts] = runopts_row(o, RUNOPT_RATE);
    rows[spec->nopts + 1] = runopts_row(o, RUNOPT_DURATION);
    rows[spec->nopts].seen = rows[spec->nopts + 1].seen = true;
    struct cmd_spec b = *spec;
    b.opts = rows;
    b.nopts = spec->nopts + 2;
    if (o->targets_file && strcmp(o->targets_file, "-") == 0)
        return opt_fail(spec, "--targets -: knee capacity runs the workload at every step of its ladder: give a "
                              "file (standard input is read once)");
    if (o->timer_slack && strcmp(o->timer_slack, "auto") == 0) /* each window would choose its own */
        return opt_fail(spec, "--timer-slack auto is knee run's: a ladder compares its steps at one precision, "
                              "give a duration (e.g. 1ms)");
    return runopts_build(o, &b, urls, rc);
}

/* An existing path must be writable, else its directory (--dry-run checks, nothing created). */
static int writable(const char *path)
{
    if (access(path, F_OK) == 0)
        return access(path, W_OK) == 0 ? 0 : -errno;
    char *copy = xstrdup(path);
    int r = access(dirname(copy), W_OK | X_OK) == 0 ? 0 : -errno;
    free(copy);
    return r;
}

/* The outputs writable (nothing created), none of them a file the flags read nor another
 * output (cli/io_check.h). 0 or 2 after one line. */
static int check_outputs(const struct cmd_spec *spec, const struct cap_flags *f, const struct runopts_config *rc)
{
    struct cli_io io = {0};
    runopts_inputs(rc, &io);
    cli_io_output(&io, "--json", f->json);
    cli_io_output(&io, "--hlog", f->hlog);
    cli_io_output(&io, "--html", f->html);
    int r = cli_io_check(&io, spec);
    cli_io_release(&io);
    if (r)
        return r;
    if (f->json && strcmp(f->json, "-") != 0 && (r = writable(f->json)))
        return opt_fail(spec, "--json %s: %s", f->json, knee_strerror(r));
    if (f->hlog && (r = writable(f->hlog)))
        return opt_fail(spec, "--hlog %s: %s", f->hlog, knee_strerror(r));
    if (f->out) {
        struct stat st;
        if (stat(f->out, &st) == 0 && !S_ISDIR(st.st_mode))
            return opt_fail(spec, "--out %s: not a directory", f->out);
        if ((r = writable(f->out)))
            return opt_fail(spec, "--out %s: %s", f->out, knee_strerror(r));
    }
    if (f->html && strcmp(f->html, "-") == 0)
        return opt_fail(spec, "--html -: the report needs a file (stdout carries the report)");
    if (f->html && (r = writable(f->html)))
        return opt_fail(spec, "--html %s: %s", f->html, knee_strerror(r));
    if (given(spec, "service") && !f->html)
        return opt_fail(spec, "--service draws on the --html report: give --html FILE");
    if (given(spec, "service") && f->service_ns == 0)
        return opt_fail(spec, "--service must be > 0");
    return 0;
}

/* The flags into cfg (the SLO terms parsed against the targets into *slo). 0 or 2. */
static int fill_config(const struct cmd_spec *spec, const struct cap_flags *f, struct runopts_config *rc,
                       const double *rates, size_t nrates, struct run_threshold **slo, struct capacity_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    if (!f->slo.n)
        return opt_fail(spec, "no --slo: give at least one, e.g. --slo 'p99<10ms'");
    *slo = xcalloc(f->slo.n, sizeof **slo);
    char why[512];
    for (size_t i = 0; i < f->slo.n; i++)
        if (run_threshold_parse(f->slo.v[i], &rc->cfg, &(*slo)[i], why, sizeof why))
            return opt_fail(spec, "--slo '%s': %s", f->slo.v[i], why);
    if (given(spec, "reps") && (f->reps < 1 || f->reps > CAPACITY_MAX_REPS))
        return opt_fail(spec, "--reps must be between 1 and %d", CAPACITY_MAX_REPS);
    if (given(spec, "agree") && !(f->agree > 0 && f->agree < 1))
        return opt_fail(spec, "--agree must be a share above 0 and below 100%%, e.g. 10%%");
    if (f->between && !f->between[strspn(f->between, " \t")])
        return opt_fail(spec, "--between: empty: give the command to run between repetitions (or leave the flag "
                              "out)");
    if (f->probe && strncmp(f->probe, "http://", 7) != 0)
        return opt_fail(spec, "--probe '%s': expected an http:// URL%s%s%s", f->probe,
                        strstr(f->probe, "://") ? "" : ": did you mean http://",
                        strstr(f->probe, "://") ? "" : f->probe, strstr(f->probe, "://") ? "" : "?");
    cfg->base = &rc->cfg;
    cfg->rates = rates;
    cfg->nrates = nrates;
    cfg->reps = given(spec, "reps") ? (size_t)f->reps : CAPACITY_DEFAULT_REPS;
    cfg->step_ns = given(spec, "step") ? f->step_ns : CAPACITY_DEFAULT_STEP_NS;
    cfg->warmup_ns = given(spec, "warmup") ? rc->cfg.plan.warmup_ns : CAPACITY_DEFAULT_WARMUP_NS;
    cfg->settle_ns = given(spec, "settle") ? f->settle_ns : CAPACITY_DEFAULT_SETTLE_NS;
    cfg->between = f->between;
    cfg->probe_rate = f->probe_rate;
    if (given(spec, "probe-lag-limit") && f->probe_lag_limit_ns == 0)
        return opt_fail(spec, "--probe-lag-limit must be > 0");
    cfg->probe_lag_limit_ns = f->probe_lag_limit_ns;
    cfg->probe_url = f->probe;
    cfg->slo = *slo;
    cfg->nslo = f->slo.n;
    cfg->cross_check = !f->no_cross_check;
    cfg->agree = given(spec, "agree") ? f->agree : CAPACITY_DEFAULT_AGREE;
    cfg->require = f->require;
    cfg->out_dir = f->out;
    cfg->hlog_path = f->hlog;
    if (capacity_config_check(cfg, why, sizeof why))
        return opt_fail(spec, "%s", why);
    return check_outputs(spec, f, rc);
}

static int failure_code(int r)
{
    return (r == KNEE_EINVAL || r == KNEE_EUNSUPPORTED || r == KNEE_ENOTFOUND) ? 2 : 1;
}

/* --dry-run: the targets resolved (run_plan) and the ladder with what would run. */
static int dry_run(const struct cmd_spec *spec, const struct capacity_config *cfg, const struct cap_flags *f)
{
    double bounds[METRICS_MAX_BOUNDS];
    size_t nbounds;
    if (cli_metrics_check(&f->metrics, spec, cfg->slo, cfg->nslo, bounds, &nbounds))
        return 2;
    struct run_config c = *cfg->base;
    c.plan.open_loop = true;
    c.plan.rate = cfg->rates[cfg->nrates - 1];
    c.plan.duration_ns = cfg->warmup_ns + cfg->step_ns;
    c.plan.warmup_ns = cfg->warmup_ns;
    struct run_dryrun plan;
    char err[512];
    int r = run_dryrun(&c, &plan, err, sizeof err);
    if (r) {
        fprintf(stderr, "knee capacity: %s\n", err[0] ? err : knee_strerror(r));
        return failure_code(r);
    }
    run_dryrun_release(&plan);
    capacity_print_plan(stdout, cfg);
    if (f->metrics.listen) {
        char b[METRICS_MAX_BOUNDS * 12];
        printf("  metrics   --metrics-listen %s: Prometheus metrics of every step and closed-loop window "
               "(the probes left out), histogram buckets %s\n",
               f->metrics.listen, metrics_flags_format_bounds(bounds, nbounds, b, sizeof b));
    }
    printf("\ndry run: every flag checked, every target resolved; nothing was sent\n");
    return opt_stdout_done(spec);
}

/* --html: the report of the measurement (its JSON document, as knee report draws it). 0 or -1. */
static int write_html(const char *path, const struct capacity_config *cfg, const struct capacity_result *res,
                      uint64_t service_ns)
{
    char *json = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&json, &len);
    if (!mem)
        knee_oom();
    capacity_write_json(mem, cfg, res);
    fclose(mem);
    struct html_write_opts h = {
        .name = "capacity", .json = json, .json_len = len, .service_s = (double)service_ns / 1e9};
    char err[1024];
    int rc = html_write_report(path, &h, NULL, err, sizeof err);
    free(json);
    if (rc)
        knee_report(stderr, "knee capacity: ", "--html %s", err);
    return rc ? -1 : 0;
}

/* Measure with Ctrl-C and SIGTERM on the stop handle, then report. *ran: a measurement was
 * made and reported. */
static int measure_report(const struct cmd_spec *spec, struct capacity_config *cfg, const struct cap_flags *f,
                          bool *ran)
{
    struct outfile json = {0};
    char why[512] = "";
    bool json_stdout = f->json && strcmp(f->json, "-") == 0;
    *ran = false;
    if (f->json && !json_stdout && outfile_open(&json, f->json, why, sizeof why) != 0) {
        fprintf(stderr, "knee capacity: --json: %s\n", why);
        return 2;
    }
    progress_terminal = isatty(STDERR_FILENO);
    bool progress = f->progress || progress_terminal;
    if (progress)
        cfg->on_progress = on_progress;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    signals_seen = 0;
    run_stop_init(&cap_stop);
    cfg->stop = &cap_stop;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    struct capacity_result res;
    char err[512] = "";
    int r = capacity_run(cfg, &res, err, sizeof err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    cfg->stop = NULL;
    if (progress && progress_terminal)
        fputs("\r\033[K", stderr);
    if (r) {
        if (f->json && !json_stdout)
            outfile_abort(&json);
        capacity_result_release(&res);
        fprintf(stderr, "knee capacity: %s\n", err[0] ? err : knee_strerror(r));
        return failure_code(r);
    }
    *ran = true;
    capacity_print_text(json_stdout ? stderr : stdout, cfg, &res);
    int code = res.verdict.exit_code;
    if (res.out_error) {
        fprintf(stderr, "knee capacity: %s\n", res.out_error_msg);
        code = 1;
    }
    if (json_stdout) {
        capacity_write_json(stdout, cfg, &res);
    } else if (f->json) {
        capacity_write_json(json.f, cfg, &res);
        if (outfile_commit(&json, why, sizeof why) != 0) {
            fprintf(stderr, "knee capacity: --json: %s\n", why);
            code = 1;
        }
    }
    if (f->html && write_html(f->html, cfg, &res, f->service_ns))
        code = 1;
    capacity_result_release(&res);
    if (opt_stdout_done(spec)) /* the report (or --json -) did not reach standard output */
        code = 1;
    return code;
}

/* knee capacity's measurement and report. --metrics-listen: one
 * endpoint for the whole measurement (cli/run_metrics.h: started before the first window, its
 * counters adding up over the windows, finished after the report). */
static int measure(const struct cmd_spec *spec, struct capacity_config *cfg, const struct cap_flags *f)
{
    struct run_metrics *metrics = NULL;
    int mrc = cli_metrics_start(&f->metrics, spec, cfg->base, cfg->slo, cfg->nslo, &metrics);
    if (mrc)
        return mrc;
    bool ran = false;
    int code = measure_report(spec, cfg, f, &ran);
    int pc = cli_metrics_finish(metrics, ran); /* --metrics-linger: the last scrape sees the final values */
    return code ? code : pc;                   /* pc: --remote-write-required and not one push accepted */
}

int cmd_capacity(int argc, char **argv)
{
    struct runopts o;
    runopts_init(&o);
    struct cap_flags f;
    memset(&f, 0, sizeof f);
    f.metrics.push = &f.push;
    struct opt rows[CAP_NROWS];
    struct cmd_spec spec = {
        .name = "capacity",
        .usage = "--slo EXPR (--rates R,R,... | --max R) [options] [URL...]",
        .summary = "How much load a service carries within its SLO: a fixed ladder of rates, repeated, held by "
                   "majority vote, with a calibration probe of the generator and a closed-loop cross-check.",
        .opts = rows,
        .nopts = cap_rows(&o, &f, rows),
        .epilog = cap_epilog,
        .min_args = 0,
        .max_args = SIZE_MAX,
    };
    struct strlist urls = {0};
    int rc = opt_parse(&spec, argc, argv, &urls);
    if (rc) {
        runopts_release(&o);
        strlist_release(&f.slo);
        push_flags_release(&f.push);
        return rc == 1 ? 0 : rc;
    }
    double rates[CAPACITY_MAX_RATES];
    size_t nrates = 0;
    struct runopts_config lc;
    memset(&lc, 0, sizeof lc);
    struct run_threshold *slo = NULL;
    struct capacity_config cfg;
    if (given(&spec, "step") && f.step_ns < NS_PER_MS * 100)
        rc = opt_fail(&spec, "--step must be at least 100ms (a window needs requests behind it)");
    uint64_t window_ns = given(&spec, "step") ? f.step_ns : CAPACITY_DEFAULT_STEP_NS;
    if (rc == 0 && (rc = make_ladder(&spec, &f, rates, &nrates)) == 0 &&
        (rc = build_load(&o, &spec, &urls, rates[nrates - 1], window_ns, &lc)) == 0 &&
        (rc = fill_config(&spec, &f, &lc, rates, nrates, &slo, &cfg)) == 0) {
        lc.cfg.argv = (const char *const *)argv; /* cfg.base */
        lc.cfg.argc = argc;
        rc = f.dry_run ? dry_run(&spec, &cfg, &f) : measure(&spec, &cfg, &f);
    }
    free(slo);
    runopts_config_release(&lc);
    strlist_release(&urls);
    strlist_release(&f.slo);
    push_flags_release(&f.push);
    runopts_release(&o);
    return rc;
}
