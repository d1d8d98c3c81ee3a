/* knee serve: run one or more lab target servers (src/serve) until SIGINT/SIGTERM or
 * --duration, printing "listening on ADDR (PRESET)" for each as soon as it accepts, and
 * its final counters when it stops. */
#include "cli/commands.h"
#include "cli/opt.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "metrics/endpoint.h"
#include "metrics/knee_serve.h"
#include "serve/serve.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SERVERS 64

struct serve_args {
    const char *preset;
    struct strlist listen;
    uint64_t count;
    uint64_t pool, workers, fanout, seed, max_conns, max_header_bytes;
    uint64_t hit_ns, miss_ns, pause_every_ns, pause_for_ns, acquire_timeout_ns, cpu_ns, dep_slow_ns, dep_ns;
    uint64_t header_timeout_ns, idle_timeout_ns, grace_ns, duration_ns;
    double miss_rate, dep_slow_prob;
    bool nagle;
};

static struct serve_args a;

/* --metrics-listen / --metrics-linger (src/metrics): kept apart from the server flags. */
static struct {
    const char *listen;
    uint64_t linger_ns;
} ma;

static struct opt opts[] = {
    {"preset", 'p', OPT_STR, &a.preset, "NAME", "report quiet queue flat fanout null stall (default quiet)", 0, 0, 0},
    {"listen", 'l', OPT_LIST, &a.listen, "[PRESET@]ADDR:PORT",
     "repeatable; PRESET@ sets its preset (default 127.0.0.1:0)", 0, 0, 0},
    {"count", 'n', OPT_COUNT, &a.count, "N", "N servers per --listen: ports PORT, PORT+1, ... (or all free)", 0, 0, 0},
    {"pool", 0, OPT_COUNT, &a.pool, "N", "N slots; requests wait for one in FIFO order (0 = unlimited)", 0, 0, 0},
    {"hit-ms", 0, OPT_DURATION, &a.hit_ns, "D", "work time on a cache hit (bare number: ms)", NS_PER_MS, 0, 0},
    {"miss-ms", 0, OPT_DURATION, &a.miss_ns, "D", "work time on a cache miss (bare number: ms)", NS_PER_MS, 0, 0},
    {"miss-rate", 0, OPT_SHARE, &a.miss_rate, "P", "share of requests that miss the cache (10% or 0.1)", 0, 0, 0},
    {"pause-every", 0, OPT_DURATION, &a.pause_every_ns, "D",
     "a report job takes the table lock every D (bare number: s)", NS_PER_S, 0, 0},
    {"pause-for", 0, OPT_DURATION, &a.pause_for_ns, "D", "... and holds it for D (default 250ms; bare number: ms)",
     NS_PER_MS, 0, 0},
    {"acquire-timeout", 0, OPT_DURATION, &a.acquire_timeout_ns, "D",
     "no slot within D: 503 QUEUE_TIMEOUT (bare number: ms)", NS_PER_MS, 0, 0},
    {"cpu-ms", 0, OPT_DURATION, &a.cpu_ns, "D", "burn D of real CPU per request on a worker (ms)", NS_PER_MS, 0, 0},
    {"workers", 0, OPT_COUNT, &a.workers, "N", "CPU worker threads for --cpu-ms (default 1)", 0, 0, 0},
    {"fanout", 0, OPT_COUNT, &a.fanout, "N", "wait for N parallel dependencies (?fanout=N per request)", 0, 0, 0},
    {"dep-slow-prob", 0, OPT_SHARE, &a.dep_slow_prob, "P", "each dependency is slow with probability P", 0, 0, 0},
    {"dep-slow-ms", 0, OPT_DURATION, &a.dep_slow_ns, "D", "time of a slow dependency (bare number: ms)", NS_PER_MS, 0,
     0},
    {"dep-ms", 0, OPT_DURATION, &a.dep_ns, "D", "time of a normal dependency (bare number: ms)", NS_PER_MS, 0, 0},
    {"nagle", 0, OPT_FLAG, &a.nagle, NULL, "Nagle on, head and body in two writes (the 40 ms stall)", 0, 0, 0},
    {"seed", 0, OPT_COUNT, &a.seed, "N", "seed of every random choice (default 1; server i: N+i)", 0, 0, 0},
    {"max-conns", 0, OPT_COUNT, &a.max_conns, "N", "connection limit, then 503 CONN_LIMIT (default 10000)", 0, 0, 0},
    {"header-timeout", 0, OPT_DURATION, &a.header_timeout_ns, "D",
     "a request head must arrive within D, else 408 (default 10s)", NS_PER_S, 0, 0},
    {"idle-timeout", 0, OPT_DURATION, &a.idle_timeout_ns, "D", "close keep-alive connections idle for D (default 60s)",
     NS_PER_S, 0, 0},
    {"max-header-bytes", 0, OPT_COUNT, &a.max_header_bytes, "N",
     "request line + headers above N bytes: 431 (default 8192)", 0, 0, 0},
    {"grace", 0, OPT_DURATION, &a.grace_ns, "D", "on stop, in-flight requests get D to finish (default 5s)", NS_PER_S,
     0, 0},
    {"duration", 'd', OPT_DURATION, &a.duration_ns, "D", "stop by itself after D (default: until SIGINT/SIGTERM)",
     NS_PER_S, 0, 0},
    /* metrics */
    {"metrics-listen", 0, OPT_STR, &ma.listen, "ADDR:PORT",
     "Prometheus metrics (every server's counters) at http://ADDR:PORT/metrics; :PORT is loopback", 0, 0, 0},
    {"metrics-linger", 0, OPT_DURATION, &ma.linger_ns, "D",
     "after the servers stop, keep serving their final counters for D (bare number: s)", NS_PER_S, 0, 0},
};

static const char epilog_head[] =
    "HTTP: any path runs the work; /work?ms=N sets this request's work time; ?fanout=N its\n"
    "fan-out; /health -> {\"status\":\"UP\"}; /stats -> JSON counters. Work responses carry\n"
    "Server-Timing: queue;dur=MS, work;dur=MS (and lock;dur=MS with a pause). Keep-alive,\n"
    "pipelining (answered in order) and Connection: close; 400 malformed, 431 headers too large.\n"
    "On start each server prints `listening on ADDR:PORT (PRESET)`; on SIGINT/SIGTERM it stops\n"
    "accepting, finishes in-flight requests and prints `stopped ADDR:PORT (PRESET) {counters}`.\n"
    "Flags override the preset's settings.\n\npresets:\n";

static const char epilog_tail[] =
    "\nexamples:\n"
    "  knee serve --preset report --listen 127.0.0.1:19300\n"
    "  knee serve --listen report@127.0.0.1:19300 --listen quiet@127.0.0.1:19301\n"
    "  knee serve --preset queue --seed 7          # then: curl '127.0.0.1:PORT/work?ms=200'\n"
    "  knee serve --preset fanout --dep-slow-prob 2% --fanout 20\n";

static char epilog[2048];

static struct cmd_spec spec = {
    .name = "serve",
    .usage = "[options]",
    .summary = "Run lab target servers with known sources of tail latency (and a null target).",
    .opts = opts,
    .nopts = OPT_COUNT_OF(opts),
    .epilog = epilog,
    .min_args = 0,
    .max_args = 0,
};

static void build_epilog(void)
{
    size_t n = (size_t)snprintf(epilog, sizeof epilog, "%s", epilog_head);
    for (size_t i = 0; serve_preset_names[i] && n < sizeof epilog; i++)
        n += (size_t)snprintf(epilog + n, sizeof epilog - n, "  %-7s %s\n", serve_preset_names[i],
                              serve_preset_summary(serve_preset_names[i]));
    if (n < sizeof epilog)
        snprintf(epilog + n, sizeof epilog - n, "%s", epilog_tail);
}

static bool seen(const char *name)
{
    return opt_find(&spec, name)->seen;
}

/* Flags override the preset: only those given on the command line are applied. */
static void apply_flags(struct serve_config *c)
{
    if (seen("pool"))
        c->pool = (unsigned)a.pool;
    if (seen("hit-ms"))
        c->hit_ns = a.hit_ns;
    if (seen("miss-ms"))
        c->miss_ns = a.miss_ns;
    if (seen("miss-rate"))
        c->miss_rate = a.miss_rate;
    if (seen("pause-every")) {
        c->pause_every_ns = a.pause_every_ns;
        if (a.pause_every_ns == 0 && !seen("pause-for"))
            c->pause_for_ns = 0;
        if (a.pause_every_ns && !c->pause_for_ns && !seen("pause-for"))
            c->pause_for_ns = 250 * NS_PER_MS;
    }
    if (seen("pause-for"))
        c->pause_for_ns = a.pause_for_ns;
    if (seen("acquire-timeout"))
        c->acquire_timeout_ns = a.acquire_timeout_ns;
    if (seen("cpu-ms"))
        c->cpu_ns = a.cpu_ns;
    if (seen("workers"))
        c->workers = (unsigned)a.workers;
    if (seen("fanout"))
        c->fanout = (unsigned)a.fanout;
    if (seen("dep-slow-prob"))
        c->dep_slow_prob = a.dep_slow_prob;
    if (seen("dep-slow-ms"))
        c->dep_slow_ns = a.dep_slow_ns;
    if (seen("dep-ms"))
        c->dep_ns = a.dep_ns;
    if (seen("nagle"))
        c->nagle = a.nagle;
    if (seen("seed"))
        c->seed = a.seed;
    if (seen("max-conns"))
        c->max_conns = (unsigned)a.max_conns;
    if (seen("header-timeout"))
        c->header_timeout_ns = a.header_timeout_ns;
    if (seen("idle-timeout"))
        c->idle_timeout_ns = a.idle_timeout_ns;
    if (seen("grace"))
        c->grace_ns = a.grace_ns;
    if (seen("max-header-bytes"))
        c->max_header_bytes = (size_t)a.max_header_bytes;
}

/* "report@127.0.0.1:0" → preset "report", address "127.0.0.1:0". */
static int split_listen(const char *arg, const char *default_preset, char *preset, size_t plen, char *addr, size_t alen)
{
    const char *at = strchr(arg, '@');
    const char *p = default_preset;
    size_t pl = strlen(default_preset);
    const char *ad = arg;
    if (at) {
        p = arg;
        pl = (size_t)(at - arg);
        ad = at + 1;
    }
    if (pl + 1 > plen || strlen(ad) + 1 > alen || pl == 0)
        return KNEE_EINVAL;
    memcpy(preset, p, pl);
    preset[pl] = '\0';
    snprintf(addr, alen, "%s", ad);
    return 0;
}

/* ADDR:PORT with PORT+i (or 0 stays 0) for --count. */
static int nth_address(const char *addr, uint64_t i, char *out, size_t outlen)
{
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return KNEE_EINVAL;
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || errno || port > 65535 || (port && port + i > 65535))
        return KNEE_EINVAL;
    unsigned long p = port ? port + i : 0;
    snprintf(out, outlen, "%.*s:%lu", (int)(colon - addr), addr, p);
    return 0;
}

/* ---- --metrics-listen: the servers' counters for Prometheus (src/metrics) ---------------- */

struct serve_metrics {
    struct metrics_registry *reg;
    struct metrics_serve *ms;
    struct metrics_endpoint *ep;
};

/* Expose the started servers. Returns 0, or the exit code when the endpoint cannot start. */
static int metrics_start(struct serve_metrics *m, struct serve_handle *const *h, size_t n)
{
    char err[256];
    if (!ma.listen)
        return 0;
    m->reg = metrics_new();
    int e = metrics_serve_new(m->reg, h, n, &m->ms, err, sizeof err);
    if (e == 0)
        e = metrics_endpoint_start(m->reg, ma.listen, &m->ep, err, sizeof err);
    if (e) {
        fprintf(stderr, "knee serve: --metrics-listen %s\n", err);
        return e == KNEE_EINVAL ? 2 : 1;
    }
    printf("metrics on http://%s/metrics\n", metrics_endpoint_address(m->ep));
    fflush(stdout);
    if (!metrics_endpoint_loopback(m->ep))
        fprintf(
            stderr,
            "knee serve: --metrics-listen %s is not a loopback address: whoever can reach it can read the metrics\n",
            metrics_endpoint_address(m->ep));
    return 0;
}

/* Publish the final counters, serve them for --metrics-linger (or until SIGINT/SIGTERM), stop. */
static void metrics_finish(struct serve_metrics *m, const struct serve_counters *finals, const sigset_t *stop_sigs)
{
    if (!m->reg)
        return;
    if (m->ms && m->ep) {
        metrics_serve_publish(m->ms, finals);
        if (ma.linger_ns) {
            char d[32];
            printf("metrics: final counters on http://%s/metrics for %s\n", metrics_endpoint_address(m->ep),
                   units_fmt_duration(ma.linger_ns, d, sizeof d));
            fflush(stdout);
            uint64_t deadline = clock_now_ns() + ma.linger_ns;
            for (uint64_t now = clock_now_ns(); now < deadline; now = clock_now_ns()) {
                uint64_t wait = deadline - now;
                struct timespec ts = {.tv_sec = (time_t)(wait / NS_PER_S), .tv_nsec = (long)(wait % NS_PER_S)};
                int sig = sigtimedwait(stop_sigs, NULL, &ts);
                if (sig == SIGINT || sig == SIGTERM)
                    break;
            }
        }
    }
    metrics_endpoint_stop(m->ep);
    metrics_serve_free(m->ms);
    metrics_free(m->reg);
}

int cmd_serve(int argc, char **argv)
{
    memset(&a, 0, sizeof a);
    memset(&ma, 0, sizeof ma);
    for (size_t i = 0; i < OPT_COUNT_OF(opts); i++)
        opts[i].seen = false;
    a.preset = "quiet";
    a.count = 1;
    build_epilog();
    struct strlist args = {0};
    int r = opt_parse(&spec, argc, argv, &args);
    strlist_release(&args);
    if (r) {
        strlist_release(&a.listen);
        return r == 1 ? 0 : 2;
    }
    int rc = 0;
    if (ma.linger_ns && !ma.listen) {
        rc = opt_fail(&spec, "--metrics-linger: needs --metrics-listen");
        goto out;
    }
    char merr[160];
    if (ma.listen && metrics_endpoint_check(ma.listen, merr, sizeof merr)) {
        rc = opt_fail(&spec, "--metrics-listen: %s", merr);
        goto out;
    }
    struct serve_config cfgs[MAX_SERVERS];
    size_t ncfg = 0;
    const char *deflt[] = {"127.0.0.1:0"};
    size_t nlisten = a.listen.n ? a.listen.n : 1;
    const char *const *listens = a.listen.n ? a.listen.v : deflt;
    if (a.count < 1 || a.count > MAX_SERVERS || nlisten * a.count > MAX_SERVERS) {
        rc = opt_fail(&spec, "--count: between 1 and %d servers in all", MAX_SERVERS);
        goto out;
    }
    for (size_t i = 0; i < nlisten; i++) {
        char preset[SERVE_NAME_MAX], addr[SERVE_ADDR_MAX];
        if (split_listen(listens[i], a.preset, preset, sizeof preset, addr, sizeof addr)) {
            rc = opt_fail(&spec, "--listen: '%s' is not [PRESET@]ADDR:PORT", listens[i]);
            goto out;
        }
        for (uint64_t k = 0; k < a.count; k++) {
            struct serve_config *c = &cfgs[ncfg];
            if (serve_preset(preset, c)) {
                rc = opt_fail(&spec, "%s: unknown preset '%s' (report, quiet, queue, flat, fanout, null)",
                              a.listen.n ? "--listen" : "--preset", preset);
                goto out;
            }
            apply_flags(c);
            c->seed += ncfg;
            if (nth_address(addr, k, c->listen, sizeof c->listen)) {
                rc = opt_fail(&spec, "--listen: '%s' is not ADDR:PORT", addr);
                goto out;
            }
            char err[160];
            if (serve_config_check(c, err, sizeof err)) {
                rc = opt_fail(&spec, "%s", err);
                goto out;
            }
            ncfg++;
        }
    }

    /* Server threads inherit this mask, so SIGINT/SIGTERM reach only sigtimedwait below.
     * A shell starts background jobs with SIGINT ignored, and an ignored signal is
     * discarded before it can be waited for: restore the default disposition first (the
     * signals stay blocked, so the default action never runs). */
    sigset_t stop_sigs, old;
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGINT);
    sigaddset(&stop_sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_sigs, &old);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);

    struct serve_handle *h[MAX_SERVERS] = {0};
    struct serve_counters finals[MAX_SERVERS];
    struct serve_metrics metrics = {0};
    size_t started = 0;
    for (; started < ncfg; started++) {
        int e = serve_start(&cfgs[started], &h[started]);
        if (e) {
            fprintf(stderr, "knee serve: --listen %s: %s\n", cfgs[started].listen,
                    e == KNEE_EINVAL ? "address does not parse or resolve" : knee_strerror(e));
            rc = e == KNEE_EINVAL ? 2 : 1;
            break;
        }
        printf("listening on %s (%s)\n", serve_address(h[started]), cfgs[started].preset);
        fflush(stdout);
    }
    if (started == ncfg && (rc = metrics_start(&metrics, h, started)) == 0) {
        uint64_t deadline = a.duration_ns ? clock_now_ns() + a.duration_ns : UINT64_MAX;
        for (;;) {
            uint64_t now = clock_now_ns();
            if (now >= deadline)
                break;
            uint64_t wait = deadline - now;
            if (wait > NS_PER_S)
                wait = NS_PER_S;
            struct timespec ts = {.tv_sec = (time_t)(wait / NS_PER_S), .tv_nsec = (long)(wait % NS_PER_S)};
            int sig = sigtimedwait(&stop_sigs, NULL, &ts);
            if (sig == SIGINT || sig == SIGTERM)
                break;
        }
    }
    for (size_t i = 0; i < started; i++)
        serve_shutdown(h[i]);
    if (metrics.ms)
        metrics_serve_detach(metrics.ms); /* before serve_stop() frees the handles */
    for (size_t i = 0; i < started; i++) {
        struct serve_counters fc;
        char addr[SERVE_ADDR_MAX], json[640];
        snprintf(addr, sizeof addr, "%s", serve_address(h[i]));
        serve_stop(h[i], &fc);
        finals[i] = fc;
        if (serve_counters_json(&fc, cfgs[i].preset, json, sizeof json))
            printf("stopped %s (%s) %s\n", addr, cfgs[i].preset, json);
    }
    fflush(stdout);
    metrics_finish(&metrics, finals, &stop_sigs);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
    strlist_release(&a.listen);
    return rc;
}
