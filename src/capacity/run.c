/* The measurement: the probe target, the repetitions (--between, the environment record,
 * the probe, every rung of the ladder with a settle before each), the closed loop, then the
 * vote, the comparison and the verdict. Every window is one run_execute of the load engine
 * in this process with the caller's stop handle, so Ctrl-C ends the window in progress and
 * no further one starts; what was measured is kept and judged. */
#include "capacity/capacity.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/outfile.h"
#include "hlog/hlog.h"
#include "load/run.h"
#include "serve/serve.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int capacity_config_check(const struct capacity_config *cfg, char *err, size_t errlen)
{
    if (cfg->nrates == 0 || cfg->nrates > CAPACITY_MAX_RATES)
        return knee_fail(err, errlen, KNEE_EINVAL, "the ladder needs 1 to %d rates (--rates, or --max and --steps)",
                         CAPACITY_MAX_RATES);
    for (size_t i = 0; i < cfg->nrates; i++)
        if (!(cfg->rates[i] > 0) || !isfinite(cfg->rates[i]) || (i && !(cfg->rates[i] > cfg->rates[i - 1])))
            return knee_fail(err, errlen, KNEE_EINVAL, "--rates: positive rates that increase");
    if (cfg->reps < 1 || cfg->reps > CAPACITY_MAX_REPS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--reps must be between 1 and %d", CAPACITY_MAX_REPS);
    if (cfg->step_ns < NS_PER_MS * 100)
        return knee_fail(err, errlen, KNEE_EINVAL, "--step must be at least 100ms (a window needs requests behind it)");
    if (cfg->probe_rate < 0 || !isfinite(cfg->probe_rate))
        return knee_fail(err, errlen, KNEE_EINVAL, "--probe-rate must be a rate > 0");
    if (cfg->agree < 0 || !isfinite(cfg->agree) || cfg->agree >= 1)
        return knee_fail(err, errlen, KNEE_EINVAL, "--agree must be a share below 100%%, e.g. 10%%");
    if (cfg->require < 0 || !isfinite(cfg->require))
        return knee_fail(err, errlen, KNEE_EINVAL, "--require must be a rate > 0");
    if (cfg->nslo == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "at least one --slo is needed, e.g. --slo 'p99<10ms'");
    for (size_t i = 0; i < cfg->base->plan.ntargets; i++) {
        const struct plan_target *t = &cfg->base->plan.targets[i];
        if (t->rate > 0)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--target %s: @R sets its own rate, but the ladder sets the rate (share it with --mix)",
                             t->name);
        if (t->connections)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--target %s: @Nc sets closed-loop connections; knee capacity runs the open loop "
                             "(and the closed-loop cross-check picks its own connections)",
                             t->name);
    }
    if (cfg->base->plan.ramp)
        return knee_fail(err, errlen, KNEE_EINVAL, "--ramp: the ladder sets the rate");
    if (cfg->base->plan.think_ns)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--think applies to a closed loop; knee capacity runs the open loop");
    struct run_config probe = *cfg->base;
    probe.plan.open_loop = true;
    probe.plan.rate = cfg->rates[cfg->nrates - 1];
    probe.plan.duration_ns = cfg->warmup_ns + cfg->step_ns;
    probe.plan.warmup_ns = cfg->warmup_ns;
    probe.plan.requests = 0;
    return run_validate(&probe, err, errlen);
}

void capacity_window_config(const struct capacity_config *cfg, enum capacity_window kind, double rate,
                            uint32_t connections, const struct plan_target *probe, double probe_lag_limit_ms,
                            struct run_config *c)
{
    *c = *cfg->base;
    if (kind == CAPACITY_WINDOW_CLOSED) {
        /* a closed loop has no plan: no arrivals, no pool, no spin and no slack on its sends */
        c->plan.open_loop = false;
        c->plan.rate = 0;
        c->plan.arrivals = RUN_ARRIVALS_CONSTANT;
        c->when_busy = RUN_BUSY_QUEUE;
        c->spin_ns = 0;
        c->timer_slack_ns = 0;
        c->plan.connections = connections;
        return;
    }
    c->plan.open_loop = true;
    c->plan.rate = rate;
    if (kind != CAPACITY_WINDOW_PROBE)
        return;
    c->plan.targets = probe;
    c->plan.ntargets = 1;
    c->rejects = NULL;
    c->nrejects = 0;
    c->expect_body = NULL;
    /* its sends on schedule counted with its own lag limit (and the same --timer-slack as the
     * steps); no live metrics: the endpoint shows the candidate's targets, and the probe's
     * requests are not theirs */
    c->lag_limit_ns = (uint64_t)llround(probe_lag_limit_ms * 1e6);
    c->on_live = NULL;
    c->live_ctx = NULL;
    if (!cfg->probe_url) {
        /* the in-process probe listens on loopback: --unix-socket and --connect-to are the
         * candidate's routes, not its; it asks for no client certificate */
        c->unix_socket = NULL;
        c->connect_to = NULL;
        c->nconnect_to = 0;
    }
    if (!cfg->probe_url && strncmp(probe->url, "https://", 8) == 0) {
        c->tls_insecure = true; /* the in-process probe's own self-signed certificate */
        c->tls_cacert = NULL;
    }
}

void capacity_load_of(const struct capacity_config *cfg, struct capacity_load *out)
{
    const struct run_config *b = cfg->base;
    memset(out, 0, sizeof *out);
    out->arrivals = b->plan.arrivals;
    out->seed = b->plan.seed;
    out->threads = b->threads;
    out->timer_slack_ns = b->timer_slack_ns;
    out->lag_limit_ns = b->lag_limit_ns;
    out->http3 = b->http3;
    for (size_t i = 0; i < b->plan.ntargets && i < RUN_MAX_TARGETS; i++)
        out->targets[out->ntargets++] = (struct capacity_load_target){
            b->plan.targets[i].name, b->plan.targets[i].method, b->plan.targets[i].url, b->plan.targets[i].weight};
}

static double probe_rate(const struct capacity_config *cfg)
{
    return cfg->probe_rate > 0 ? cfg->probe_rate : CAPACITY_PROBE_SHARE * cfg->rates[cfg->nrates - 1];
}

void capacity_plan(const struct capacity_config *cfg, uint64_t *windows, double *seconds)
{
    uint64_t per_window = cfg->warmup_ns + cfg->step_ns + cfg->settle_ns;
    *windows = (uint64_t)cfg->reps * (cfg->nrates + 1);
    *seconds = (double)(*windows * per_window) / 1e9;
}

/* ---- small pieces ---- */

static bool stopped(const struct capacity_config *cfg)
{
    return cfg->stop && run_stop_level(cfg->stop) > 0;
}

/* Sleep ns, in short slices so that a stop request ends it. */
static void idle(const struct capacity_config *cfg, uint64_t ns)
{
    uint64_t end = clock_now_ns() + ns;
    while (!stopped(cfg)) {
        uint64_t now = clock_now_ns();
        if (now >= end)
            return;
        uint64_t slice = end - now < 20 * NS_PER_MS ? end - now : 20 * NS_PER_MS;
        struct timespec ts = {(time_t)(slice / NS_PER_S), (long)(slice % NS_PER_S)};
        nanosleep(&ts, NULL);
    }
}

/* --between: /bin/sh -c CMD, its output on stderr (stdout may carry --json -). Returns the
 * exit status, or -1 when it could not run or ended by a signal. */
static int run_between(const char *cmd, double *seconds)
{
    uint64_t t0 = clock_now_ns();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        *seconds = 0;
        return -1;
    }
    if (pid == 0) {
        dup2(STDERR_FILENO, STDOUT_FILENO);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    *seconds = (double)(clock_now_ns() - t0) / 1e9;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- one window ---- */

/* The per-window outputs (--out DIR: the request log and an hlog; --hlog: one log of every
 * window) and the progress line, behind the engine's callbacks. */
struct window {
    const struct capacity_config *cfg;
    struct capacity_result *res;
    struct capacity_progress prog;
    /* hlogs */
    struct hlog_writer *all; /* --hlog (whole measurement), or NULL */
    uint64_t all_base_ns;    /* its time 0 (monotonic) */
    double offset_s;         /* this window's start within it */
    char tag_prefix[64];     /* "rep2/800" or "closed/c8" */
    struct outfile step_file;
    struct hlog_writer *step; /* DIR/<name>.hlog, or NULL */
    const struct plan_target *targets;
};

static void out_error(struct capacity_result *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void out_error(struct capacity_result *r, int code, const char *fmt, ...)
{
    if (r->out_error)
        return;
    r->out_error = code ? code : -EIO;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->out_error_msg, sizeof r->out_error_msg, fmt, ap);
    va_end(ap);
}

static void on_interval(void *ctx, size_t target, double start_s, double length_s, const struct hdr *latency)
{
    struct window *w = ctx;
    const char *name = w->targets[target].name;
    if (w->step) {
        int rc = hlog_writer_write(w->step, name, start_s, length_s, latency);
        if (rc)
            out_error(w->res, rc, "--out %s: an hlog interval: %s", w->cfg->out_dir, knee_strerror(rc));
    }
    if (w->all) {
        char tag[HLOG_TAG_MAX + 1];
        snprintf(tag, sizeof tag, "%s/%s", w->tag_prefix, name);
        int rc = hlog_tag_valid(tag) ? hlog_writer_write(w->all, tag, w->offset_s + start_s, length_s, latency) : 0;
        if (rc)
            out_error(w->res, rc, "--hlog %s: %s", w->cfg->hlog_path, knee_strerror(rc));
    }
}

static void on_run_progress(void *ctx, const struct run_progress *p)
{
    struct window *w = ctx;
    w->prog.elapsed_s = p->elapsed_s;
    w->prog.total_s = p->total_s;
    w->prog.now_p99_ms = p->p99_ms;
    if (w->cfg->on_progress)
        w->cfg->on_progress(w->cfg->progress_ctx, &w->prog);
}

/* Open DIR/<name>.hlog for this window (--out DIR). */
static void open_step_hlog(struct window *w, const char *name)
{
    if (!w->cfg->out_dir || w->res->out_error)
        return;
    char path[4096], why[512];
    snprintf(path, sizeof path, "%s/%s.hlog", w->cfg->out_dir, name);
    int rc = outfile_open(&w->step_file, path, why, sizeof why);
    if (rc == 0)
        rc = hlog_writer_open(&w->step, w->step_file.f, (double)clock_wall_ns() / 1e9, NULL);
    if (rc) {
        out_error(w->res, rc, "--out: %s", why[0] ? why : knee_strerror(rc));
        outfile_abort(&w->step_file);
        w->step = NULL;
    }
}

static void close_step_hlog(struct window *w)
{
    if (!w->step)
        return;
    int rc = hlog_writer_close(w->step);
    w->step = NULL;
    char why[512] = "";
    if (rc) {
        outfile_abort(&w->step_file);
        out_error(w->res, rc, "--out %s: an hlog: %s", w->cfg->out_dir, knee_strerror(rc));
        return;
    }
    if ((rc = outfile_commit(&w->step_file, why, sizeof why)) != 0)
        out_error(w->res, rc, "--out: %s", why);
}

enum window_kind { WINDOW_STEP, WINDOW_PROBE, WINDOW_CLOSED };

/* Run one window with run config c (already shaped: open or closed loop, rate or
 * connections) and judge it into *s: a step or the closed loop against the SLO, the probe
 * against its lag limit. name: the files' base name under --out. Returns 0, or a negative
 * code with err when the engine could not run at all. */
static int run_window(struct window *w, struct run_config *c, const char *name, enum window_kind kind,
                      struct capacity_step *s, char *err, size_t errlen)
{
    const struct capacity_config *cfg = w->cfg;
    c->plan.duration_ns = cfg->warmup_ns + cfg->step_ns;
    c->plan.warmup_ns = cfg->warmup_ns;
    c->plan.requests = 0;
    c->stop = cfg->stop;
    c->on_interval = (cfg->out_dir || w->all) ? on_interval : NULL;
    c->interval_ctx = w;
    c->on_progress = cfg->on_progress ? on_run_progress : NULL;
    c->progress_ctx = w;
    w->targets = c->plan.targets;
    char log[4096];
    c->out_path = NULL;
    if (cfg->out_dir) {
        snprintf(log, sizeof log, "%s/%s.bin", cfg->out_dir, name);
        c->out_path = log;
    }
    open_step_hlog(w, name);
    w->offset_s = (double)(clock_now_ns() - w->all_base_ns) / 1e9;
    w->prog.elapsed_s = 0;
    w->prog.total_s = (double)c->plan.duration_ns / 1e9;
    w->prog.now_p99_ms = NAN;
    if (cfg->on_progress)
        cfg->on_progress(cfg->progress_ctx, &w->prog);
    struct run_record rr;
    int rc = run_execute(c, &rr, err, errlen);
    close_step_hlog(w);
    c->out_path = NULL;
    if (rc)
        return rc;
    if (kind == WINDOW_PROBE)
        capacity_probe_eval(&rr, w->res->probe_lag_limit_ms, (double)c->timer_slack_ns / 1e6, s);
    else
        capacity_step_eval(&rr, kind == WINDOW_STEP, cfg->slo, cfg->nslo, s);
    if (kind == WINDOW_CLOSED)
        capacity_service_keep(cfg, &rr, w->res);
    if (rr.out_error)
        out_error(w->res, rr.out_error, "--out %s: %s", log, knee_strerror(rr.out_error));
    if (rr.interrupted)
        w->res->interrupted = true;
    w->prog.last_p99_ms = s->p99_ms;
    record_release(&rr);
    return 0;
}

/* "800" for 800/s, "12.5" for 12.5/s: a rate in file names and tags. */
static void rate_name(double rate, char *buf, size_t len)
{
    snprintf(buf, len, "%.15g", rate);
}

/* ---- the phases ---- */

/* The probe of repetition i: the probe rate to the probe URL, same load options. */
static int run_probe(struct window *w, const char *url, size_t i, char *err, size_t errlen)
{
    const struct capacity_config *cfg = w->cfg;
    struct capacity_rep *rep = &w->res->reps[i];
    struct plan_target t = {.name = "probe", .url = url};
    struct run_config c;
    capacity_window_config(cfg, CAPACITY_WINDOW_PROBE, w->res->probe_rate, 0, &t, w->res->probe_lag_limit_ms, &c);
    char name[64];
    snprintf(name, sizeof name, "rep%zu-probe", i + 1);
    snprintf(w->tag_prefix, sizeof w->tag_prefix, "rep%zu/probe", i + 1);
    w->prog.phase = "probe";
    w->prog.rate = c.plan.rate;
    w->prog.step = 0;
    int rc = run_window(w, &c, name, WINDOW_PROBE, &rep->probe, err, errlen);
    if (rc)
        return rc;
    if (!rep->probe.held && !rep->excluded[0])
        snprintf(rep->excluded, sizeof rep->excluded, "probe failed (%.*s)", (int)sizeof rep->excluded - 20,
                 rep->probe.reason);
    return 0;
}

static int run_rep(struct window *w, const char *probe_url, size_t i, char *err, size_t errlen)
{
    const struct capacity_config *cfg = w->cfg;
    struct capacity_result *res = w->res;
    struct capacity_rep *rep = &res->reps[i];
    w->prog.rep = i + 1;
    w->prog.nreps = res->nreps;
    w->prog.nsteps = res->nrates;
    w->prog.connections = 0;
    if (cfg->between) {
        w->prog.phase = "between";
        w->prog.elapsed_s = w->prog.total_s = 0;
        w->prog.now_p99_ms = NAN;
        if (cfg->on_progress)
            cfg->on_progress(cfg->progress_ctx, &w->prog);
        rep->between_ran = true;
        rep->between_status = run_between(cfg->between, &rep->between_s);
        if (rep->between_status != 0)
            snprintf(rep->excluded, sizeof rep->excluded,
                     "--between exited %d: the repetition did not start from the reset state", rep->between_status);
        idle(cfg, cfg->settle_ns);
    }
    if (stopped(cfg))
        return 0;
    rep->ran = true;
    struct capacity_env_snap snap;
    capacity_env_begin(&snap);
    int rc = run_probe(w, probe_url, i, err, errlen);
    bool all_ran = rc == 0 && rep->probe.ran;
    res->steps_done += all_ran;
    for (size_t k = 0; rc == 0 && k < res->nrates && !stopped(cfg); k++) {
        idle(cfg, cfg->settle_ns);
        if (stopped(cfg))
            break;
        struct run_config c;
        capacity_window_config(cfg, CAPACITY_WINDOW_STEP, res->rates[k], 0, NULL, 0, &c);
        char rn[32], name[64];
        rate_name(res->rates[k], rn, sizeof rn);
        snprintf(name, sizeof name, "rep%zu-%s", i + 1, rn);
        snprintf(w->tag_prefix, sizeof w->tag_prefix, "rep%zu/%s", i + 1, rn);
        w->prog.phase = "step";
        w->prog.step = k + 1;
        w->prog.rate = c.plan.rate;
        rc = run_window(w, &c, name, WINDOW_STEP, &rep->step[k], err, errlen);
        res->steps_done += rc == 0 && rep->step[k].ran;
    }
    capacity_env_end(&snap, &rep->env);
    if (rc)
        return rc;
    for (size_t k = 0; k < res->nrates; k++)
        all_ran &= rep->step[k].ran;
    if (!all_ran && !rep->excluded[0])
        snprintf(rep->excluded, sizeof rep->excluded, "incomplete (interrupted)");
    rep->valid = all_ran && rep->probe.held && !rep->excluded[0];
    return 0;
}

/* The closed loop: 1 (or one per target), 2, 4, ... connections until a step fails the SLO,
 * the throughput passes CAPACITY_CLOSED_BEYOND × the top rate, or CAPACITY_CLOSED_MAX_STEPS. */
static int run_closed(struct window *w, char *err, size_t errlen)
{
    const struct capacity_config *cfg = w->cfg;
    struct capacity_result *res = w->res;
    struct capacity_cross *x = &res->cross;
    uint32_t conns = cfg->base->plan.ntargets > 1 ? (uint32_t)cfg->base->plan.ntargets : 1;
    double top = res->rates[res->nrates - 1];
    x->ran = true;
    w->prog.phase = "closed loop";
    w->prog.rep = 0;
    w->prog.nsteps = CAPACITY_CLOSED_MAX_STEPS;
    w->prog.rate = 0;
    for (size_t k = 0; k < CAPACITY_CLOSED_MAX_STEPS && !stopped(cfg); k++, conns *= 2) {
        idle(cfg, cfg->settle_ns);
        if (stopped(cfg))
            break;
        struct run_config c;
        capacity_window_config(cfg, CAPACITY_WINDOW_CLOSED, 0, conns, NULL, 0, &c);
        char name[64];
        snprintf(name, sizeof name, "closed-c%u", conns);
        snprintf(w->tag_prefix, sizeof w->tag_prefix, "closed/c%u", conns);
        w->prog.step = k + 1;
        w->prog.connections = conns;
        struct capacity_closed_step *cs = &x->step[x->nsteps];
        cs->connections = conns;
        int rc = run_window(w, &c, name, WINDOW_CLOSED, &cs->s, err, errlen);
        if (rc)
            return rc;
        x->nsteps++;
        if (!cs->s.ran)
            break;
        if (cs->s.held && (x->best < 0 || cs->s.achieved > x->closed_loop)) {
            x->best = (int)k;
            x->closed_loop = cs->s.achieved;
        }
        if (!cs->s.held)
            break;
        if (cs->s.achieved > CAPACITY_CLOSED_BEYOND * top) {
            x->beyond = true;
            break;
        }
    }
    return 0;
}

/* The probe target: --probe URL, or knee serve --preset null here on 127.0.0.1:0 (its threads
 * start with SIGINT and SIGTERM blocked: the caller's handler runs on its own threads). */
static int start_probe(const struct capacity_config *cfg, struct serve_handle **srv, char *url, size_t len, char *err,
                       size_t errlen)
{
    if (cfg->probe_url) {
        snprintf(url, len, "%s", cfg->probe_url);
        return 0;
    }
    struct serve_config sc;
    serve_preset("null", &sc);
    /* the same transport as the candidate's: the generator's cost of TLS and HTTP/2 is part of
     * what the probe checks (a self-signed certificate: run_probe trusts it without checking) */
    for (size_t i = 0; i < cfg->base->plan.ntargets; i++)
        if (strncasecmp(cfg->base->plan.targets[i].url, "https://", 8) == 0)
            sc.tls = true;
    sc.h2 = sc.tls ? cfg->base->http != RUN_HTTP_1 : cfg->base->h2c;
    sc.h3 = sc.tls && cfg->base->http3; /* an --http3 probe speaks QUIC to it, as the steps do */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = serve_start(&sc, srv);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc)
        return knee_fail(err, errlen, rc, "the probe target (knee serve --preset null on 127.0.0.1:0): %s",
                         knee_strerror(rc));
    snprintf(url, len, "%s://%s/", sc.tls ? "https" : "http", serve_address(*srv));
    return 0;
}

int capacity_run(const struct capacity_config *cfg, struct capacity_result *res, char *err, size_t errlen)
{
    uint64_t t0 = clock_now_ns();
    int rc = capacity_config_check(cfg, err, errlen);
    if (rc) {
        memset(res, 0, sizeof *res);
        return rc;
    }
    capacity_result_init(res, cfg->rates, cfg->nrates, cfg->reps);
    res->probe_rate = probe_rate(cfg);
    res->probe_lag_limit_ms = capacity_probe_lag_limit_ms(cfg, NULL, 0);
    /* every target resolved and every request built before the first window: a name that does
     * not resolve is bad input now, not after the probe */
    struct run_config top = *cfg->base;
    top.plan.open_loop = true;
    top.plan.rate = cfg->rates[cfg->nrates - 1];
    top.plan.duration_ns = cfg->warmup_ns + cfg->step_ns;
    top.plan.warmup_ns = cfg->warmup_ns;
    top.plan.requests = 0;
    struct run_dryrun plan;
    if ((rc = run_dryrun(&top, &plan, err, errlen)) != 0)
        return rc;
    run_dryrun_release(&plan);
    res->steps_total = (uint64_t)cfg->reps * (cfg->nrates + 1);
    if (cfg->out_dir && mkdir(cfg->out_dir, 0777) != 0 && errno != EEXIST)
        return knee_fail(err, errlen, -errno, "--out %s: %s", cfg->out_dir, strerror(errno));
    struct serve_handle *srv = NULL;
    char url[512];
    if ((rc = start_probe(cfg, &srv, url, sizeof url, err, errlen)) != 0)
        return rc;
    snprintf(res->probe_target, sizeof res->probe_target, "%.*s%s", 200, url,
             cfg->probe_url ? "" : " (knee serve --preset null, in-process)");

    struct window w;
    memset(&w, 0, sizeof w);
    w.cfg = cfg;
    w.res = res;
    w.prog.last_p99_ms = NAN;
    w.all_base_ns = clock_now_ns();
    struct outfile all_file;
    memset(&all_file, 0, sizeof all_file);
    if (cfg->hlog_path) {
        char why[512] = "";
        rc = outfile_open(&all_file, cfg->hlog_path, why, sizeof why);
        if (rc == 0)
            rc = hlog_writer_open(&w.all, all_file.f, (double)clock_wall_ns() / 1e9, NULL);
        if (rc) {
            outfile_abort(&all_file);
            serve_stop(srv, NULL);
            return knee_fail(err, errlen, rc, "--hlog %s: %s", cfg->hlog_path, why[0] ? why : knee_strerror(rc));
        }
    }
    for (size_t i = 0; rc == 0 && i < cfg->reps && !stopped(cfg); i++)
        rc = run_rep(&w, url, i, err, errlen);
    if (rc == 0 && cfg->cross_check && !stopped(cfg))
        rc = run_closed(&w, err, errlen);
    if (stopped(cfg))
        res->interrupted = true;
    serve_stop(srv, NULL);
    if (w.all) {
        int hr = hlog_writer_close(w.all);
        char why[512] = "";
        if (hr) {
            outfile_abort(&all_file);
            out_error(res, hr, "--hlog %s: %s", cfg->hlog_path, knee_strerror(hr));
        } else if ((hr = outfile_commit(&all_file, why, sizeof why)) != 0) {
            out_error(res, hr, "--hlog: %s", why);
        }
    }
    res->elapsed_s = (double)(clock_now_ns() - t0) / 1e9;
    if (rc)
        return rc;
    capacity_vote(res);
    capacity_queue_run(cfg, res);
    capacity_compare(res, cfg->agree > 0 ? cfg->agree : CAPACITY_DEFAULT_AGREE);
    capacity_judge(res, cfg->require);
    return 0;
}
