/* knee serve: run one or more lab target servers (src/serve) until SIGINT/SIGTERM or
 * --duration, printing "listening on ADDR (PRESET)" for each as soon as it accepts, and
 * its final counters when it stops. */
#include "cli/commands.h"
#include "cli/metrics_flags.h"
#include "cli/push_flags.h"
#include "cli/opt.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "metrics/endpoint.h"
#include "metrics/knee_serve.h"
#include "serve/serve.h"
#include "tls/tls.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_SERVERS 64
/* Descriptors a server needs besides its connections (listening socket, epoll, eventfds,
 * CPU workers' wake-ups), and the process besides its servers (stdio, metrics). */
#define FDS_PER_SERVER 16
#define FDS_PROCESS 64

struct serve_args {
    const char *preset;
    struct strlist listen;
    uint64_t count;
    uint64_t pool, workers, fanout, seed, max_conns, max_header_bytes;
    uint64_t hit_ns, miss_ns, pause_every_ns, pause_for_ns, acquire_timeout_ns, cpu_ns, dep_slow_ns, dep_ns;
    uint64_t header_timeout_ns, idle_timeout_ns, grace_ns, duration_ns;
    double miss_rate, dep_slow_prob;
    bool nagle;
    bool tls, h2;
    const char *cert, *key;
    bool h3;
};

static struct serve_args a;

/* --metrics-listen / --metrics-linger / --metrics-buckets (cli/metrics_flags): kept apart
 * from the server flags. */
static struct metrics_flags ma;
/* --remote-write and its companions (cli/push_flags): rows filled by cmd_serve (push_flags_row). */
static struct push_flags pa;
#define PUSH_ROW_SLOT                                                                                                  \
    {                                                                                                                  \
        "remote-write", 0, OPT_FLAG, NULL, NULL, NULL, 0, 0, 0                                                         \
    }

static struct opt opts[] = {
    {"preset", 'p', OPT_STR, &a.preset, "NAME", NULL /* preset_help */, 0, 0, 0},
    {"listen", 'l', OPT_LIST, &a.listen, "[PRESET@]ADDR:PORT",
     "repeatable; PRESET@ sets its preset (default 127.0.0.1:0)", 0, 0, 0},
    {"count", 'n', OPT_COUNT, &a.count, "N", "N servers per --listen: ports PORT, PORT+1, ... (or all free)", 0, 0, 0},
    {"pool", 0, OPT_COUNT, &a.pool, "N", "N slots; requests wait for one in FIFO order (0 = unlimited; at most 100k)",
     0, 0, 0},
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
    {"workers", 0, OPT_COUNT, &a.workers, "N", "CPU worker threads for --cpu-ms / flat (1..256, default 1)", 0, 0, 0},
    {"fanout", 0, OPT_COUNT, &a.fanout, "N", "wait for N parallel dependencies (?fanout=N per request; at most 1000)",
     0, 0, 0},
    {"dep-slow-prob", 0, OPT_SHARE, &a.dep_slow_prob, "P", "each dependency is slow with probability P", 0, 0, 0},
    {"dep-slow-ms", 0, OPT_DURATION, &a.dep_slow_ns, "D", "time of a slow dependency (bare number: ms)", NS_PER_MS, 0,
     0},
    {"dep-ms", 0, OPT_DURATION, &a.dep_ns, "D", "time of a normal dependency (bare number: ms)", NS_PER_MS, 0, 0},
    {"nagle", 0, OPT_FLAG, &a.nagle, NULL, "Nagle on, head and body in two writes (the 40 ms stall)", 0, 0, 0},
    {"tls", 0, OPT_FLAG, &a.tls, NULL, "speak TLS (https); a self-signed certificate is made at start", 0, 0, 0},
    {"cert", 0, OPT_STR, &a.cert, "FILE", "PEM certificate (and chain) instead of a self-signed one (implies --tls)", 0,
     0, 0},
    {"key", 0, OPT_STR, &a.key, "FILE", "PEM private key of --cert", 0, 0, 0},
    {"h2", 0, OPT_FLAG, &a.h2, NULL, "HTTP/2 too: ALPN h2 with --tls, h2c (prior knowledge) without", 0, 0, 0},
    {"h3", 0, OPT_FLAG, &a.h3, NULL, "HTTP/3 too (needs --tls): QUIC on UDP, the same port number", 0, 0, 0},
    {"seed", 0, OPT_COUNT, &a.seed, "N", "seed of every random choice (default 1; server i: N+i)", 0, 0, 0},
    {"max-conns", 0, OPT_COUNT, &a.max_conns, "N", "connection limit, then 503 CONN_LIMIT (1..1M, default 10000)", 0, 0,
     0},
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
     "Prometheus metrics (every server's counters and server time) at http://ADDR:PORT/metrics; :PORT is "
     "loopback" METRICS_EP_LIMITS_HELP,
     0, 0, 0},
    {"metrics-linger", 0, OPT_DURATION, &ma.linger_ns, "D",
     "after the servers stop, keep serving their final counters for D (bare number: s)", NS_PER_S, 0, 0},
    {"metrics-buckets", 0, OPT_STR, &ma.buckets, "LIST",
     "bounds of the server-time histogram, durations (default 1ms,2.5ms,5ms,...,10s)", 0, 0, 0},
    PUSH_ROW_SLOT,
    PUSH_ROW_SLOT,
    PUSH_ROW_SLOT,
    PUSH_ROW_SLOT,
    PUSH_ROW_SLOT,
    PUSH_ROW_SLOT, /* PUSH_FLAG_COUNT */
};
#define PUSH_ROWS_AT (OPT_COUNT_OF(opts) - PUSH_FLAG_COUNT)

static const char epilog_head[] =
    "HTTP: any path runs the work; /work?ms=N sets this request's work time; ?fanout=N its\n"
    "fan-out; /health -> {\"status\":\"UP\"}; /stats -> JSON counters. Work responses carry\n"
    "Server-Timing: queue;dur=MS, work;dur=MS (and lock;dur=MS with a pause). Keep-alive,\n"
    "pipelining (answered in order), Connection: close and half-close. Refused and closed:\n"
    "400 malformed or ambiguous framing (RFC 9112: smuggling), 413 body above 1 MiB, 414\n"
    "target above 2 KiB, 431 head above --max-header-bytes, 501 a coding before chunked,\n"
    "505 not HTTP/1.x; the close lingers (reads on up to 5 s) so the client reads the answer.\n"
    "--tls: HTTPS (TLS 1.2/1.3; without --cert a self-signed EC certificate for localhost,\n"
    "127.0.0.1, ::1 and the listen host, printed by its SHA-256 fingerprint). --h2: HTTP/2\n"
    "besides HTTP/1.1, by ALPN over TLS or by the client's preface in cleartext (h2c);\n"
    "up to 128 concurrent streams, each answered like a request (same counters, Server-Timing).\n"
    "--h3 (with --tls): HTTP/3 over QUIC on a UDP socket of the same port (TCP answers then\n"
    "carry Alt-Svc); the handshake bounded by --header-timeout, idle connections closed after\n"
    "--idle-timeout, 128 request streams at once; /stats counts its requests in \"h3\".\n"
    "A flag no server uses is refused (--workers without CPU work, --hit-ms with it); every\n"
    "wait and timeout is at most 1h.\n"
    "On start each server prints `listening on ADDR:PORT (PRESET)` (then `https`, `h2` or `h2c`\n"
    "with --tls/--h2, and a line with a generated certificate's fingerprint); on SIGINT/SIGTERM it stops\n"
    "accepting, finishes in-flight requests and prints `stopped ADDR:PORT (PRESET) {counters}`.\n"
    "Flags override the preset's settings.\n\npresets:\n";

static const char epilog_tail[] =
    "\nexamples:\n"
    "  knee serve --preset report --listen 127.0.0.1:19300\n"
    "  knee serve --listen report@127.0.0.1:19300 --listen quiet@127.0.0.1:19301\n"
    "  knee serve --preset queue --seed 7          # then: curl '127.0.0.1:PORT/work?ms=200'\n"
    "  knee serve --preset fanout --dep-slow-prob 2% --fanout 20\n"
    "  knee serve --preset null --tls --h2          # https with h2 and http/1.1 (ALPN)\n"
    "  knee serve --preset null --tls --h2 --h3     # and HTTP/3 on UDP, the same port\n"
    "  knee serve --preset stream                   # then: curl -N '127.0.0.1:PORT/?events=5&gap_ms=100'\n";

static char epilog[4096];

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

/* The presets' names in --preset's help, from the preset table. */
static char preset_help[256];

static void build_epilog(void)
{
    char list[200];
    snprintf(preset_help, sizeof preset_help, "the preset (one of: %s; default quiet)",
             opt_word_list(serve_preset_names, list, sizeof list));
    for (size_t i = 0; i < OPT_COUNT_OF(opts); i++)
        if (strcmp(opts[i].name, "preset") == 0)
            opts[i].help = preset_help;
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
    c->tls = a.tls || a.cert || a.key;
    c->cert_file = a.cert;
    c->key_file = a.key;
    c->h2 = a.h2;
    c->h3 = a.h3;
}

/* Command-line text echoed into an error line, with control bytes escaped (\r, \n, \xHH)
 * so input cannot forge or break lines. Returns out. */
static const char *printable(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && n + 5 < cap; p++) {
        if (*p == '\r' || *p == '\n' || *p == '\t') {
            out[n++] = '\\';
            out[n++] = *p == '\r' ? 'r' : *p == '\n' ? 'n' : 't';
        } else if (*p < 0x20 || *p == 0x7f) {
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", *p);
        } else {
            out[n++] = (char)*p;
        }
    }
    out[n] = '\0';
    return out;
}

/* The raw counts are uint64 and the configuration's fields narrower: bound them here, so
 * a value cannot wrap into range (--workers 4294967297 is not 1). */
static int check_counts(void)
{
    if (seen("pool") && a.pool > SERVE_POOL_MAX)
        return opt_fail(&spec, "--pool: at most %u slots", SERVE_POOL_MAX);
    if (seen("workers") && (a.workers < 1 || a.workers > SERVE_WORKERS_MAX))
        return opt_fail(&spec, "--workers: between 1 and %u", SERVE_WORKERS_MAX);
    if (seen("fanout") && a.fanout > SERVE_FANOUT_MAX)
        return opt_fail(&spec, "--fanout: at most %u", SERVE_FANOUT_MAX);
    if (seen("max-conns") && (a.max_conns < 1 || a.max_conns > SERVE_MAX_CONNS_MAX))
        return opt_fail(&spec, "--max-conns: between 1 and %u", SERVE_MAX_CONNS_MAX);
    if (seen("max-header-bytes") && (a.max_header_bytes < 64 || a.max_header_bytes > 65536))
        return opt_fail(&spec, "--max-header-bytes: between 64 and 65536");
    return 0;
}

/* A flag given on the command line must change something on at least one server: one that
 * no server uses is refused rather than silently ignored (--workers for a preset without
 * CPU work). */
struct flag_use {
    const char *flag;
    bool (*used)(const struct serve_config *c);
    const char *why;
};

static bool uses_sim_work(const struct serve_config *c)
{
    return !c->null_response && !c->cpu_ns;
}
static bool uses_miss_ms(const struct serve_config *c)
{
    return uses_sim_work(c) && c->miss_rate > 0;
}
static bool uses_cpu(const struct serve_config *c)
{
    return c->cpu_ns > 0;
}
static bool uses_deps(const struct serve_config *c)
{
    return !c->null_response;
}
static bool uses_slow_deps(const struct serve_config *c)
{
    return !c->null_response && c->dep_slow_prob > 0;
}

static const struct flag_use flag_uses[] = {
    {"hit-ms", uses_sim_work, "the work is CPU time (--cpu-ms) or none (null)"},
    {"miss-rate", uses_sim_work, "the work is CPU time (--cpu-ms) or none (null): there is no cache"},
    {"miss-ms", uses_miss_ms, "no request misses the cache: --miss-rate is 0 (or the work is CPU time)"},
    {"workers", uses_cpu, "only CPU work (--cpu-ms, preset flat) runs on worker threads"},
    {"dep-ms", uses_deps, "the null target has no dependencies"},
    {"dep-slow-prob", uses_deps, "the null target has no dependencies"},
    {"dep-slow-ms", uses_slow_deps, "no dependency is slow: --dep-slow-prob is 0"},
    {"seed", uses_deps, "the null target makes no random choice"},
};

static int check_flag_uses(const struct serve_config *cfgs, size_t n)
{
    for (size_t f = 0; f < sizeof flag_uses / sizeof flag_uses[0]; f++) {
        if (!seen(flag_uses[f].flag))
            continue;
        bool used = false;
        char presets[256] = "";
        size_t len = 0;
        for (size_t i = 0; i < n && !used; i++) {
            used = flag_uses[f].used(&cfgs[i]);
            if (!strstr(presets, cfgs[i].preset) && len + strlen(cfgs[i].preset) + 3 < sizeof presets)
                len += (size_t)snprintf(presets + len, sizeof presets - len, "%s%s", len ? ", " : "", cfgs[i].preset);
        }
        if (!used)
            return opt_fail(&spec, "--%s: has no effect on preset %s: %s", flag_uses[f].flag, presets,
                            flag_uses[f].why);
    }
    return 0;
}

/* Every connection is a descriptor: raise the soft open-file limit towards what the
 * servers' --max-conns add up to (never above the hard limit), and say so when it stays
 * short. Beyond the limit, accept() fails and the server pauses accepting for a moment;
 * the connections wait in the listen backlog. */
static void raise_nofile(const struct serve_config *cfgs, size_t n)
{
    uint64_t want = FDS_PROCESS, conns = 0;
    for (size_t i = 0; i < n; i++) {
        conns += cfgs[i].max_conns;
        want += (uint64_t)cfgs[i].max_conns + FDS_PER_SERVER;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    rlim_t target = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? (rlim_t)want : rl.rlim_max;
    if (target > rl.rlim_cur) {
        rl.rlim_cur = target;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < want)
        fprintf(stderr,
                "knee serve: open files are limited to %llu (hard limit %llu), fewer than the %llu that --max-conns "
                "asks for (%llu connections in all, plus the servers' own): connections beyond the limit wait in "
                "the listen backlog\n",
                (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, (unsigned long long)want,
                (unsigned long long)conns);
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
    struct cli_push *push; /* --remote-write, or NULL */
};

/* Expose the started servers. Returns 0, or the exit code when the endpoint cannot start. */
static int metrics_start(struct serve_metrics *m, struct serve_handle *const *h, size_t n)
{
    char err[256];
    if (!metrics_flags_wanted(&ma))
        return 0;
    m->reg = metrics_new();
    int e = metrics_serve_new(m->reg, h, n, &m->ms, err, sizeof err);
    if (e == 0 && ma.listen)
        e = metrics_endpoint_start(m->reg, ma.listen, &m->ep, err, sizeof err);
    if (e) {
        fprintf(stderr, "knee serve: --metrics-listen %s\n", err);
        return e == KNEE_EINVAL ? 2 : 1;
    }
    if ((e = cli_push_start(&pa, &spec, m->reg, NULL, &m->push)) != 0)
        return e;
    if (!m->ep)
        return 0;
    printf("metrics on http://%s/metrics\n", metrics_endpoint_address(m->ep));
    fflush(stdout);
    if (!metrics_endpoint_loopback(m->ep))
        fprintf(
            stderr,
            "knee serve: --metrics-listen %s is not a loopback address: whoever can reach it can read the metrics\n",
            metrics_endpoint_address(m->ep));
    return 0;
}

/* The final push (--remote-write): one line on stderr when pushes failed. Returns 1 when
 * --remote-write-required and not one was accepted, else 0. */
static int push_finish(struct serve_metrics *m)
{
    if (!m->push)
        return 0;
    struct record_remote_write rw;
    cli_push_end(m->push, &rw);
    struct warn_list w = {0};
    cli_push_warn(&rw, &w);
    for (size_t i = 0; i < w.n; i++)
        fprintf(stderr, "knee serve: %s\n", w.items[i]);
    warn_list_release(&w);
    cli_push_free(m->push);
    m->push = NULL;
    return cli_push_failed_required(&rw) ? 1 : 0;
}

/* Publish the final counters, push them (--remote-write), serve them for --metrics-linger (or
 * until SIGINT/SIGTERM), stop. Returns push_finish's code. */
static int metrics_finish(struct serve_metrics *m, const struct serve_counters *finals, const sigset_t *stop_sigs)
{
    if (!m->reg)
        return 0;
    if (m->ms)
        metrics_serve_publish(m->ms, finals);
    int code = push_finish(m);
    if (m->ms && m->ep) {
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
    return code;
}

/* The servers of one --listen value (PRESET@ADDR:PORT), --count of them on consecutive ports,
 * appended to cfgs at *n. Returns 0 or the exit code 2 (message printed). */
static int listen_configs(const char *listen, const double *bounds, size_t nbounds, struct serve_config *cfgs,
                          size_t *n)
{
    char preset[SERVE_NAME_MAX], addr[SERVE_ADDR_MAX];
    char shown[4 * SERVE_ADDR_MAX];
    if (split_listen(listen, a.preset, preset, sizeof preset, addr, sizeof addr))
        return opt_fail(&spec, "--listen: '%s' is not [PRESET@]ADDR:PORT", printable(listen, shown, sizeof shown));
    for (uint64_t k = 0; k < a.count; k++) {
        struct serve_config *c = &cfgs[*n];
        if (serve_preset(preset, c)) {
            char list[200];
            const char *near = opt_suggest_word(preset, serve_preset_names);
            return opt_fail(&spec, "%s: unknown preset '%s' (one of %s)%s%s%s", a.listen.n ? "--listen" : "--preset",
                            printable(preset, shown, sizeof shown),
                            opt_word_list(serve_preset_names, list, sizeof list), near ? ": did you mean " : "",
                            near ? near : "", near ? "?" : "");
        }
        apply_flags(c);
        c->seed += *n;
        for (size_t b = 0; b < nbounds; b++) /* --metrics-listen: server time as a histogram */
            c->time_bounds_ns[b] = (uint64_t)llround(bounds[b] * 1e9);
        c->ntime_bounds = (unsigned)nbounds;
        if (nth_address(addr, k, c->listen, sizeof c->listen))
            return opt_fail(&spec, "--listen: '%s' is not ADDR:PORT", printable(addr, shown, sizeof shown));
        char err[160];
        if (serve_config_check(c, err, sizeof err))
            return opt_fail(&spec, "%s", err);
        (*n)++;
    }
    return 0;
}

/* --cert and --key: a certificate that does not load is bad input, said before any server
 * starts. Returns 0 or the exit code 2 (message printed). */
static int check_cert(void)
{
    if (!a.cert || !a.key)
        return 0;
    struct tls_server_config tc = {.cert_file = a.cert, .key_file = a.key};
    struct tls_ctx *ctx;
    char terr[512];
    if (tls_server_new(&tc, &ctx, terr, sizeof terr))
        return opt_fail(&spec, "%s", terr);
    tls_ctx_free(ctx);
    return 0;
}

/* Every server's configuration from the parsed flags, checked as a whole. Returns 0 or the
 * exit code 2 (message printed). */
static int build_configs(struct serve_config cfgs[MAX_SERVERS], size_t *ncfg)
{
    double bounds[METRICS_MAX_BOUNDS];
    size_t nbounds;
    int rc = metrics_flags_check(&ma, &spec, NULL, 0, bounds, &nbounds);
    if (rc)
        return rc;
    const char *deflt[] = {"127.0.0.1:0"};
    size_t nlisten = a.listen.n ? a.listen.n : 1;
    const char *const *listens = a.listen.n ? a.listen.v : deflt;
    if (a.count < 1 || a.count > MAX_SERVERS || nlisten * a.count > MAX_SERVERS)
        return opt_fail(&spec, "--count: between 1 and %d servers in all", MAX_SERVERS);
    for (size_t i = 0; i < nlisten; i++)
        if ((rc = listen_configs(listens[i], bounds, nbounds, cfgs, ncfg)) != 0)
            return rc;
    if ((rc = check_flag_uses(cfgs, *ncfg)) != 0 || (rc = check_counts()) != 0)
        return rc;
    return check_cert();
}

/* Server threads inherit this mask, so SIGINT/SIGTERM reach only sigtimedwait (wait_for_stop).
 * A shell starts background jobs with SIGINT ignored, and an ignored signal is discarded before
 * it can be waited for: restore the default disposition first (the signals stay blocked, so the
 * default action never runs). */
static void block_stop_signals(sigset_t *stop_sigs, sigset_t *old)
{
    sigemptyset(stop_sigs);
    sigaddset(stop_sigs, SIGINT);
    sigaddset(stop_sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, stop_sigs, old);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
}

/* Start the servers in order, each announced ("listening on ...") once it accepts. *started
 * counts those running. Returns 0, or the exit code (2: an address that does not parse or
 * resolve, else 1) after the first that fails, with the message printed. */
static int start_servers(const struct serve_config *cfgs, size_t ncfg, struct serve_handle **h, size_t *started)
{
    for (; *started < ncfg; (*started)++) {
        const struct serve_config *c = &cfgs[*started];
        int e = serve_start(c, &h[*started]);
        if (e) {
            char shown[4 * SERVE_ADDR_MAX];
            fprintf(stderr, "knee serve: --listen %s: %s\n", printable(c->listen, shown, sizeof shown),
                    e == KNEE_EINVAL ? "address does not parse or resolve" : knee_strerror(e));
            return e == KNEE_EINVAL ? 2 : 1;
        }
        if (c->tls || c->h2)
            printf("listening on %s (%s) %s%s%s\n", serve_address(h[*started]), c->preset, c->tls ? "https" : "http",
                   c->h2 ? (c->tls ? " h2" : " h2c") : "", c->h3 ? " h3" : "");
        else
            printf("listening on %s (%s)\n", serve_address(h[*started]), c->preset);
        bool self_signed;
        const char *fp = serve_tls_fingerprint(h[*started], &self_signed);
        if (fp && self_signed)
            printf("tls: self-signed certificate, SHA-256 %s (clients need --insecure)\n", fp);
        fflush(stdout);
    }
    return 0;
}

/* Until SIGINT/SIGTERM or --duration, waking at least once a second. */
static void wait_for_stop(const sigset_t *stop_sigs)
{
    uint64_t deadline = a.duration_ns ? clock_now_ns() + a.duration_ns : UINT64_MAX;
    for (;;) {
        uint64_t now = clock_now_ns();
        if (now >= deadline)
            break;
        uint64_t wait = deadline - now;
        if (wait > NS_PER_S)
            wait = NS_PER_S;
        struct timespec ts = {.tv_sec = (time_t)(wait / NS_PER_S), .tv_nsec = (long)(wait % NS_PER_S)};
        int sig = sigtimedwait(stop_sigs, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM)
            break;
    }
}

/* Stop the started servers: all shut down, drained, then each stopped with its final counters
 * printed ("stopped ADDR (PRESET) {...}") and kept in finals. */
static void stop_servers(const struct serve_config *cfgs, struct serve_handle **h, size_t started,
                         struct serve_metrics *metrics, struct serve_counters *finals)
{
    for (size_t i = 0; i < started; i++)
        serve_shutdown(h[i]);
    for (size_t i = 0; i < started; i++)
        serve_join(h[i]); /* drained: the counters and server times are final */
    if (metrics->ms)
        metrics_serve_detach(metrics->ms); /* the last poll; before serve_stop() frees the handles */
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
}

int cmd_serve(int argc, char **argv)
{
    memset(&a, 0, sizeof a);
    memset(&ma, 0, sizeof ma);
    memset(&pa, 0, sizeof pa);
    ma.push = &pa;
    for (int id = 0; id < PUSH_FLAG_COUNT; id++)
        opts[PUSH_ROWS_AT + (size_t)id] = push_flags_row(&pa, (enum push_flag_id)id);
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
        push_flags_release(&pa);
        return r == 1 ? 0 : 2;
    }
    struct serve_config cfgs[MAX_SERVERS];
    size_t ncfg = 0;
    int rc = build_configs(cfgs, &ncfg);
    if (rc)
        goto out;
    raise_nofile(cfgs, ncfg);
    sigset_t stop_sigs, old;
    block_stop_signals(&stop_sigs, &old);
    struct serve_handle *h[MAX_SERVERS] = {0};
    struct serve_counters finals[MAX_SERVERS];
    struct serve_metrics metrics = {0};
    size_t started = 0;
    rc = start_servers(cfgs, ncfg, h, &started);
    if (rc == 0 && (rc = metrics_start(&metrics, h, started)) == 0)
        wait_for_stop(&stop_sigs);
    stop_servers(cfgs, h, started, &metrics, finals);
    int pc = metrics_finish(&metrics, finals, &stop_sigs);
    if (rc == 0)
        rc = pc; /* --remote-write-required and not one push accepted */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
    strlist_release(&a.listen);
    push_flags_release(&pa);
    return rc;
}
