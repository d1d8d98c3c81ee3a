/* `knee run`: flags → struct run_config → run_execute → summary, JSON, thresholds. All
 * checking of user input happens here or in run_execute before any request is sent; a bad
 * flag is one line naming it and exit code 2. */
#include "cli/commands.h"
#include "cli/opt.h"
#include "core/units.h"
#include "core/clock.h"
#include "core/err.h"
#include "hlog/hlog.h"
#include "http/client.h"
#include "load/run.h"
#include "load/threshold.h"
#include "net/url.h"
#include "runreport/runreport.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct run_flags {
    double rate;
    const char *arrivals, *ramp, *when_busy, *json, *out, *hlog, *expect_body, *mix;
    uint64_t seed, connections, requests, threads;
    uint64_t think_ns, duration_ns, timeout_ns, drain_ns, warmup_ns, spin_ns, lag_limit_ns;
    struct strlist targets, methods, headers, bodies, rejects, thresholds;
    bool no_keepalive, progress;
};

static struct run_flags F;

static struct opt run_opts[] = {
    {"rate", 'R', OPT_RATE, &F.rate, "R",
     "open loop: planned requests per second in total (5000, 10k); without it the run is a closed loop", 0, 0, 0},
    {"arrivals", 0, OPT_STR, &F.arrivals, "KIND", "open loop: constant (default) or poisson inter-arrival times", 0, 0,
     0},
    {"seed", 0, OPT_COUNT, &F.seed, "N", "seed of the Poisson arrivals (default 1): the same seed, the same plan", 0, 0,
     0},
    {"ramp", 0, OPT_STR, &F.ramp, "FROM:TO", "open loop: rate rising (or falling) linearly over the duration", 0, 0, 0},
    {"connections", 'c', OPT_COUNT, &F.connections, "N",
     "closed loop: concurrent clients (default 8); open loop: connection pool cap (default 10000)", 0, 0, 0},
    {"think", 0, OPT_DURATION, &F.think_ns, "D", "closed loop: pause between a response and the next request", 0, 0, 0},
    {"duration", 'd', OPT_DURATION, &F.duration_ns, "D",
     "how long requests are planned (default 10s; with --requests, no limit)", 0, 0, 0},
    {"requests", 'n', OPT_COUNT, &F.requests, "N", "plan exactly N requests in total", 0, 0, 0},
    {"target", 0, OPT_LIST, &F.targets, "NAME=URL[@R|@Nc]",
     "a named target (repeatable); @R its own rate (open loop), @Nc its own connections (closed loop)", 0, 0, 0},
    {"mix", 0, OPT_STR, &F.mix, "NAME=W,...", "weights of targets sharing --rate or --connections (default 1 each)", 0,
     0, 0},
    {"method", 'm', OPT_LIST, &F.methods, "[T=]M", "request method (default GET); T= for one target only", 0, 0, 0},
    {"header", 'H', OPT_LIST, &F.headers, "[T=]'K: V'", "request header (repeatable); T= for one target only", 0, 0, 0},
    {"body", 'b', OPT_LIST, &F.bodies, "[T=]STR|@FILE", "request body, inline or from a file; T= for one target", 0, 0,
     0},
    {"no-keepalive", 0, OPT_FLAG, &F.no_keepalive, NULL, "a new connection for every request (Connection: close)", 0, 0,
     0},
    {"timeout", 0, OPT_DURATION, &F.timeout_ns, "D", "per request, from its send (default 10s)", 0, 0, 0},
    {"drain", 0, OPT_DURATION, &F.drain_ns, "D",
     "after planning ends, how long in-flight requests may finish (default: the timeout)", 0, 0, 0},
    {"warmup", 0, OPT_DURATION, &F.warmup_ns, "D",
     "requests planned in the first D are logged but left out of the statistics", 0, 0, 0},
    {"when-busy", 0, OPT_STR, &F.when_busy, "queue|drop",
     "open loop, pool exhausted: wait for a connection (default) or drop the request", 0, 0, 0},
    {"reject", 0, OPT_LIST, &F.rejects, "STATUS[:TEXT]",
     "a business rejection, not an error: that status (with TEXT in the body)", 0, 0, 0},
    {"expect-body", 0, OPT_STR, &F.expect_body, "TEXT", "ok also requires TEXT in the body (else: invalid)", 0, 0, 0},
    {"threads", 't', OPT_COUNT, &F.threads, "T", "load threads, each with its own loop (default: CPUs)", 0, 0, 0},
    {"json", 0, OPT_STR, &F.json, "FILE|-", "write the summary as JSON (- = stdout; the text goes to stderr)", 0, 0, 0},
    {"out", 'o', OPT_STR, &F.out, "FILE", "one row per request: *.csv as CSV, else the binary log", 0, 0, 0},
    {"hlog", 0, OPT_STR, &F.hlog, "FILE",
     "HdrHistogram interval log: per second and target, latency in ns (tag = target name)", 0, 0, 0},
    {"progress", 0, OPT_FLAG, &F.progress, NULL, "live progress on stderr even when it is not a terminal", 0, 0, 0},
    {"threshold", 0, OPT_LIST, &F.thresholds, "EXPR",
     "pass/fail check, e.g. p99<250ms, read.p99.9<=1s, error_rate<1%, dropped==0 (exit 99)", 0, 0, 0},
    {"spin", 0, OPT_DURATION, &F.spin_ns, "D", "busy-wait the last D before each planned send (e.g. 20us)", NS_PER_US,
     0, 0},
    {"lag-limit", 0, OPT_DURATION, &F.lag_limit_ns, "D", "lag p99 above D marks the run generator-limited (1ms)",
     NS_PER_MS, 0, 0},
};

static struct cmd_spec run_spec = {
    .name = "run",
    .usage = "[options] [URL...]",
    .summary = "Send HTTP/1.1 load in an open loop (--rate) or a closed loop (--connections) and report "
               "latency from the planned send, service time, outcomes and generator lag.",
    .opts = run_opts,
    .nopts = OPT_COUNT_OF(run_opts),
    .epilog = "Intervals: T0 planned send, T1 actual send (the write, or the connect start for a new\n"
              "connection), T5 full response. latency = T5-T0 in the open loop (T5-T1 closed),\n"
              "service = T5-T1, ttfb = first byte - T1, lag = T1-T0.\n"
              "Outcomes: ok (2xx/3xx, and --expect-body), rejected (--reject), http_error, invalid,\n"
              "transport, timeout, dropped (never sent), cancelled (in flight after --drain).\n"
              "Ctrl-C stops planning and drains; a second Ctrl-C cancels what is in flight.\n\n"
              "examples:\n"
              "  knee run -c 8 -d 10s http://127.0.0.1:8080/\n"
              "  knee run -R 5000 --arrivals poisson -d 30s --json run.json http://127.0.0.1:8080/\n"
              "  knee run -R 200 --target read=http://h/r --target write=http://h/w --mix read=3,write=1 \\\n"
              "           -m write=POST -b write=@payload.json --reject 503:QUEUE_TIMEOUT --threshold 'p99<250ms'\n",
    .min_args = 0,
    .max_args = SIZE_MAX,
};

/* Per-target request parts gathered from the flags. */
struct tgt {
    char *name, *url;
    const char *method;
    struct strlist headers;
    char *body;
    size_t body_len;
    bool body_set;
    double rate;
    uint32_t connections;
    double weight;
};

static int find_target(struct tgt *t, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].name) == len && strncmp(t[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

/* "NAME=rest" where NAME is a target: its index and *rest; else -1 and *rest = s. `stop` is a
 * character that may not occur in the prefix (':' for headers). */
static int target_prefix(struct tgt *t, size_t n, const char *s, char stop, const char **rest)
{
    *rest = s;
    const char *eq = strchr(s, '=');
    if (!eq)
        return -1;
    if (stop && memchr(s, stop, (size_t)(eq - s)))
        return -1;
    int i = find_target(t, n, s, (size_t)(eq - s));
    if (i >= 0)
        *rest = eq + 1;
    return i;
}

static int read_body(const char *spec, char **out, size_t *len)
{
    if (spec[0] != '@') {
        *len = strlen(spec);
        *out = xmalloc(*len + 1);
        memcpy(*out, spec, *len + 1);
        return 0;
    }
    FILE *f = fopen(spec + 1, "rb");
    if (!f)
        return opt_fail(&run_spec, "--body: %s: %s", spec + 1, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (n == cap) {
            if (cap >= HTTP_CLIENT_MAX_BODY) {
                fclose(f);
                free(buf);
                return opt_fail(&run_spec, "--body: %s: larger than %u bytes", spec + 1, HTTP_CLIENT_MAX_BODY);
            }
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return opt_fail(&run_spec, "--body: %s: read error", spec + 1);
    }
    *out = buf;
    *len = n;
    return 0;
}

/* NAME=URL[@RATE|@Nc] */
static int parse_target(const char *spec, struct tgt *t)
{
    memset(t, 0, sizeof *t);
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return opt_fail(&run_spec, "--target '%s': expected NAME=URL", spec);
    if (strstr(spec, "://") && strstr(spec, "://") < eq)
        return opt_fail(&run_spec, "--target '%s': expected NAME=URL (the name comes first)", spec);
    t->name = xmalloc((size_t)(eq - spec) + 1);
    memcpy(t->name, spec, (size_t)(eq - spec));
    t->name[eq - spec] = '\0';
    for (const char *p = t->name; *p; p++)
        if ((unsigned char)*p < 0x21 || *p == '.' || *p == ',' || *p == '=' || *p == '"')
            return opt_fail(&run_spec, "--target '%s': a name may not hold spaces, '.', ',', '=' or quotes", spec);
    const char *url = eq + 1;
    const char *at = strrchr(url, '@');
    const char *slash = strstr(url, "://");
    if (at && slash && at > slash) {
        const char *suf = at + 1;
        size_t sl = strlen(suf);
        uint64_t n;
        double r;
        char tmp[64];
        if (sl > 1 && sl < sizeof tmp && suf[sl - 1] == 'c') {
            memcpy(tmp, suf, sl - 1);
            tmp[sl - 1] = '\0';
            if (units_parse_count(tmp, &n) || n == 0 || n > 1000000)
                return opt_fail(&run_spec, "--target '%s': '@%s' is not a connection count such as @8c", spec, suf);
            t->connections = (uint32_t)n;
        } else if (units_parse_rate(suf, &r) == 0) {
            t->rate = r;
        } else {
            return opt_fail(&run_spec, "--target '%s': '@%s' is neither a rate (@100, @1k) nor connections (@8c)", spec,
                            suf);
        }
        t->url = xmalloc((size_t)(at - url) + 1);
        memcpy(t->url, url, (size_t)(at - url));
        t->url[at - url] = '\0';
    } else {
        t->url = xstrdup(url);
    }
    return 0;
}

static int check_url(const char *url)
{
    struct url u;
    char why[256];
    int r = url_parse(url, &u, why, sizeof why);
    url_release(&u);
    if (r)
        return opt_fail(&run_spec, "%s: %s", url, why);
    return 0;
}

static int parse_reject(const char *s, struct run_reject *out)
{
    char *end;
    errno = 0;
    long st = strtol(s, &end, 10);
    if (end == s || errno || st < 100 || st > 999 || (*end && *end != ':'))
        return opt_fail(&run_spec, "--reject '%s': expected STATUS or STATUS:TEXT, e.g. 503:QUEUE_TIMEOUT", s);
    out->status = (int)st;
    out->body = NULL;
    if (*end == ':') {
        if (!end[1])
            return opt_fail(&run_spec, "--reject '%s': empty text after ':'", s);
        out->body = end + 1;
    }
    return 0;
}

static void on_progress(void *ctx, const struct run_progress *p)
{
    (void)ctx;
    run_print_progress(stderr, p);
}

static volatile sig_atomic_t signals_seen;
static struct run_stop run_stop; /* the signal handler's way to the run */

static void on_signal(int sig)
{
    (void)sig;
    signals_seen++;
    run_stop_request(&run_stop, signals_seen > 1);
}

static void free_tgts(struct tgt *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].name);
        free(t[i].url);
        free(t[i].body);
        strlist_release(&t[i].headers);
    }
    free(t);
}

/* --hlog: each second's merged latency histogram of each target becomes one interval,
 * tagged with the target's name; the first write error is kept and reported at the end. */
struct hlog_sink {
    struct hlog_writer *w;
    const struct run_target_config *targets;
    int err;
};

static void on_interval(void *ctx, size_t target, double start_s, double length_s, const struct hdr *latency)
{
    struct hlog_sink *sink = ctx;
    if (sink->err)
        return;
    sink->err = hlog_writer_write(sink->w, sink->targets[target].name, start_s, length_s, latency);
}

int cmd_run(int argc, char **argv)
{
    memset(&F, 0, sizeof F);
    for (size_t i = 0; i < run_spec.nopts; i++)
        run_opts[i].seen = false;
    F.seed = 1;
    struct strlist args = {0};
    int rc = opt_parse(&run_spec, argc, argv, &args);
    if (rc) {
        strlist_release(&args);
        return rc == 1 ? 0 : rc;
    }
    size_t nt = F.targets.n + args.n;
    struct tgt *tg = xcalloc(nt ? nt : 1, sizeof *tg);
    struct run_target_config *tc = NULL;
    struct run_reject *rejects = NULL;
    struct run_threshold *thr = NULL;
    const char **hdrs = NULL;
    struct run_config cfg;
    memset(&cfg, 0, sizeof cfg);
    rc = 2;
    size_t k = 0;
    if (nt == 0) {
        opt_fail(&run_spec, "no target: give a URL or --target NAME=URL (see knee run --help)");
        goto out;
    }
    for (size_t i = 0; i < F.targets.n; i++, k++) {
        if (parse_target(F.targets.v[i], &tg[k]))
            goto out;
        if (find_target(tg, k, tg[k].name, strlen(tg[k].name)) >= 0) {
            opt_fail(&run_spec, "--target: two targets are named '%s'", tg[k].name);
            goto out;
        }
    }
    for (size_t i = 0; i < args.n; i++, k++) {
        /* a bare URL: a target named after its host:port (and path when that is taken) */
        struct url u;
        char why[256];
        int r = url_parse(args.v[i], &u, why, sizeof why);
        if (r) {
            url_release(&u);
            opt_fail(&run_spec, "%s: %s", args.v[i], why);
            goto out;
        }
        tg[k].url = xstrdup(args.v[i]);
        tg[k].name = xstrdup(u.authority);
        if (find_target(tg, k, tg[k].name, strlen(tg[k].name)) >= 0) {
            free(tg[k].name);
            size_t n = strlen(u.authority) + strlen(u.target) + 1;
            tg[k].name = xmalloc(n);
            snprintf(tg[k].name, n, "%s%s", u.authority, u.target);
        }
        url_release(&u);
        if (find_target(tg, k, tg[k].name, strlen(tg[k].name)) >= 0) {
            opt_fail(&run_spec, "%s: the same URL twice (use --target NAME=URL to name them)", args.v[i]);
            goto out;
        }
    }
    for (size_t i = 0; i < nt; i++) {
        if (check_url(tg[i].url))
            goto out;
        tg[i].method = NULL;
    }
    /* --mix */
    if (F.mix) {
        char *mix = xstrdup(F.mix), *save = NULL;
        for (char *tok = strtok_r(mix, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(tok, '=');
            double wv;
            int ti = eq ? find_target(tg, nt, tok, (size_t)(eq - tok)) : -1;
            if (!eq || ti < 0) {
                opt_fail(&run_spec, "--mix: '%s' is not NAME=WEIGHT for a --target name", tok);
                free(mix);
                goto out;
            }
            if (units_parse_double(eq + 1, &wv) || wv <= 0) {
                opt_fail(&run_spec, "--mix: weight '%s' must be a number > 0", eq + 1);
                free(mix);
                goto out;
            }
            tg[ti].weight = wv;
        }
        free(mix);
    }
    /* --method, --header, --body: all targets, or T= for one */
    for (size_t i = 0; i < F.methods.n; i++) {
        const char *m;
        int ti = target_prefix(tg, nt, F.methods.v[i], 0, &m);
        if (!http_is_token(m, strlen(m))) {
            opt_fail(&run_spec, "--method '%s' is not an HTTP method", m);
            goto out;
        }
        for (size_t j = 0; j < nt; j++)
            if (ti < 0 || (size_t)ti == j)
                tg[j].method = m;
    }
    for (size_t i = 0; i < F.headers.n; i++) {
        const char *h;
        int ti = target_prefix(tg, nt, F.headers.v[i], ':', &h);
        for (size_t j = 0; j < nt; j++)
            if (ti < 0 || (size_t)ti == j)
                strlist_push(&tg[j].headers, h);
    }
    for (size_t i = 0; i < F.bodies.n; i++) {
        const char *b;
        int ti = target_prefix(tg, nt, F.bodies.v[i], 0, &b);
        char *buf = NULL;
        size_t len = 0;
        if (read_body(b, &buf, &len))
            goto out;
        for (size_t j = 0; j < nt; j++)
            if (ti < 0 || (size_t)ti == j) {
                free(tg[j].body);
                tg[j].body = xmalloc(len + 1);
                memcpy(tg[j].body, buf, len);
                tg[j].body_len = len;
                tg[j].body_set = true;
            }
        free(buf);
    }

    /* the load model */
    bool any_rate = false, any_conns = false;
    for (size_t i = 0; i < nt; i++) {
        any_rate |= tg[i].rate > 0;
        any_conns |= tg[i].connections > 0;
    }
    cfg.open_loop = opt_find(&run_spec, "rate")->seen || F.ramp || any_rate;
    if (cfg.open_loop && any_conns) {
        opt_fail(&run_spec, "--target NAME=URL@Nc sets closed-loop connections, but --rate makes this an open loop");
        goto out;
    }
    cfg.rate = F.rate;
    if (F.ramp) {
        const char *colon = strchr(F.ramp, ':');
        char from[64];
        if (!colon || (size_t)(colon - F.ramp) >= sizeof from) {
            opt_fail(&run_spec, "--ramp '%s': expected FROM:TO, e.g. 100:2000", F.ramp);
            goto out;
        }
        memcpy(from, F.ramp, (size_t)(colon - F.ramp));
        from[colon - F.ramp] = '\0';
        double a = 0, b = 0;
        if ((strcmp(from, "0") != 0 && units_parse_rate(from, &a)) ||
            (strcmp(colon + 1, "0") != 0 && units_parse_rate(colon + 1, &b)) || (a == 0 && b == 0)) {
            opt_fail(&run_spec, "--ramp '%s': FROM and TO must be rates such as 100 or 2k (not both 0)", F.ramp);
            goto out;
        }
        if (opt_find(&run_spec, "rate")->seen) {
            opt_fail(&run_spec, "--ramp and --rate: give one (the ramp sets the rate over time)");
            goto out;
        }
        cfg.ramp = true;
        cfg.ramp_from = a;
        cfg.ramp_to = b;
    }
    cfg.arrivals = RUN_ARRIVALS_CONSTANT;
    if (F.arrivals) {
        if (strcmp(F.arrivals, "poisson") == 0)
            cfg.arrivals = RUN_ARRIVALS_POISSON;
        else if (strcmp(F.arrivals, "constant") != 0) {
            opt_fail(&run_spec, "--arrivals '%s': expected constant or poisson", F.arrivals);
            goto out;
        }
        if (!cfg.open_loop) {
            opt_fail(&run_spec, "--arrivals applies to the open loop: give --rate");
            goto out;
        }
    }
    cfg.when_busy = RUN_BUSY_QUEUE;
    if (F.when_busy) {
        if (strcmp(F.when_busy, "drop") == 0)
            cfg.when_busy = RUN_BUSY_DROP;
        else if (strcmp(F.when_busy, "queue") != 0) {
            opt_fail(&run_spec, "--when-busy '%s': expected queue or drop", F.when_busy);
            goto out;
        }
        if (!cfg.open_loop) {
            opt_fail(&run_spec, "--when-busy applies to the open loop: give --rate");
            goto out;
        }
    }
    if (F.think_ns && cfg.open_loop) {
        opt_fail(&run_spec, "--think applies to the closed loop (no --rate): an open loop sends on its schedule");
        goto out;
    }
    if (opt_find(&run_spec, "connections")->seen && (F.connections == 0 || F.connections > 1000000)) {
        opt_fail(&run_spec, "--connections must be between 1 and 1000000");
        goto out;
    }
    if (opt_find(&run_spec, "threads")->seen && (F.threads == 0 || F.threads > 1024)) {
        opt_fail(&run_spec, "--threads must be between 1 and 1024");
        goto out;
    }
    if (opt_find(&run_spec, "requests")->seen && F.requests == 0) {
        opt_fail(&run_spec, "--requests must be > 0");
        goto out;
    }
    if (opt_find(&run_spec, "duration")->seen && F.duration_ns == 0) {
        opt_fail(&run_spec, "--duration must be > 0");
        goto out;
    }
    if (opt_find(&run_spec, "timeout")->seen && F.timeout_ns == 0) {
        opt_fail(&run_spec, "--timeout must be > 0");
        goto out;
    }
    cfg.seed = F.seed;
    cfg.connections = (uint32_t)F.connections;
    cfg.think_ns = F.think_ns;
    cfg.requests = F.requests;
    cfg.duration_ns = opt_find(&run_spec, "duration")->seen ? F.duration_ns : F.requests ? 0 : RUN_DEFAULT_DURATION_NS;
    cfg.timeout_ns = F.timeout_ns ? F.timeout_ns : RUN_DEFAULT_TIMEOUT_NS;
    cfg.drain_ns = opt_find(&run_spec, "drain")->seen ? F.drain_ns : cfg.timeout_ns;
    cfg.warmup_ns = F.warmup_ns;
    if (cfg.duration_ns && cfg.warmup_ns >= cfg.duration_ns) {
        opt_fail(&run_spec, "--warmup must be shorter than --duration");
        goto out;
    }
    cfg.keepalive = !F.no_keepalive;
    cfg.expect_body = F.expect_body;
    if (F.expect_body && !*F.expect_body) {
        opt_fail(&run_spec, "--expect-body: empty text");
        goto out;
    }
    cfg.threads = (uint32_t)F.threads;
    cfg.spin_ns = F.spin_ns;
    cfg.lag_limit_ns = F.lag_limit_ns;
    cfg.out_path = F.out;
    cfg.argv = (const char *const *)argv;
    cfg.argc = argc;
    if (F.rejects.n > RUN_MAX_REJECTS) {
        opt_fail(&run_spec, "--reject: at most %d", RUN_MAX_REJECTS);
        goto out;
    }
    rejects = xcalloc(F.rejects.n ? F.rejects.n : 1, sizeof *rejects);
    for (size_t i = 0; i < F.rejects.n; i++)
        if (parse_reject(F.rejects.v[i], &rejects[i]))
            goto out;
    cfg.rejects = rejects;
    cfg.nrejects = F.rejects.n;

    tc = xcalloc(nt, sizeof *tc);
    size_t nh = 0;
    for (size_t i = 0; i < nt; i++)
        nh += tg[i].headers.n;
    hdrs = xcalloc(nh ? nh : 1, sizeof *hdrs);
    size_t hk = 0;
    for (size_t i = 0; i < nt; i++) {
        tc[i].name = tg[i].name;
        tc[i].url = tg[i].url;
        tc[i].method = tg[i].method;
        tc[i].headers = hdrs + hk;
        tc[i].nheaders = tg[i].headers.n;
        for (size_t j = 0; j < tg[i].headers.n; j++)
            hdrs[hk++] = tg[i].headers.v[j];
        tc[i].body = tg[i].body;
        tc[i].body_len = tg[i].body_len;
        tc[i].rate = tg[i].rate;
        tc[i].connections = tg[i].connections;
        tc[i].weight = tg[i].weight;
    }
    cfg.targets = tc;
    cfg.ntargets = nt;

    thr = xcalloc(F.thresholds.n ? F.thresholds.n : 1, sizeof *thr);
    for (size_t i = 0; i < F.thresholds.n; i++) {
        char why[256];
        if (run_threshold_parse(F.thresholds.v[i], &cfg, &thr[i], why, sizeof why)) {
            opt_fail(&run_spec, "--threshold '%s': %s", F.thresholds.v[i], why);
            goto out;
        }
    }

    bool json_stdout = F.json && strcmp(F.json, "-") == 0;
    FILE *jf = NULL;
    if (F.json && !json_stdout) {
        jf = fopen(F.json, "w");
        if (!jf) {
            opt_fail(&run_spec, "--json %s: %s", F.json, strerror(errno));
            goto out;
        }
    }
    FILE *hf = NULL;
    struct hlog_sink sink = {.targets = tc};
    if (F.hlog) {
        for (size_t i = 0; i < nt; i++)
            if (!hlog_tag_valid(tc[i].name)) {
                opt_fail(&run_spec, "--hlog: target name '%s' cannot be an hlog tag (no ',', spaces or tabs)",
                         tc[i].name);
                if (jf)
                    fclose(jf);
                goto out;
            }
        hf = fopen(F.hlog, "w");
        int hr = hf ? hlog_writer_open(&sink.w, hf, (double)clock_wall_ns() / 1e9, NULL) : -errno;
        if (hr) {
            opt_fail(&run_spec, "--hlog %s: %s", F.hlog, knee_strerror(hr));
            if (hf)
                fclose(hf);
            if (jf)
                fclose(jf);
            goto out;
        }
        cfg.on_interval = on_interval;
        cfg.interval_ctx = &sink;
    }
    bool progress = F.progress || isatty(STDERR_FILENO);
    if (progress) {
        cfg.on_progress = on_progress;
        cfg.progress_ctx = NULL;
    }

    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    signals_seen = 0;
    run_stop_init(&run_stop);
    cfg.stop = &run_stop;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    struct run_result res;
    char err[512];
    int r = run_execute(&cfg, &res, err, sizeof err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (progress)
        fputs("\r\033[K", stderr);
    if (hf) {
        int cr = hlog_writer_close(sink.w);
        if (fclose(hf) != 0 && !cr)
            cr = -errno;
        if (!sink.err)
            sink.err = cr;
        if (sink.err)
            fprintf(stderr, "knee run: --hlog %s: %s\n", F.hlog, knee_strerror(sink.err));
    }
    if (r) {
        if (jf)
            fclose(jf);
        fprintf(stderr, "knee run: %s\n", err[0] ? err : knee_strerror(r));
        rc = (r == KNEE_EINVAL || r == KNEE_EUNSUPPORTED || r == KNEE_ENOTFOUND) ? 2 : 1;
        goto out;
    }
    bool all_pass = true;
    for (size_t i = 0; i < F.thresholds.n; i++) {
        run_threshold_eval(&thr[i], &res);
        all_pass &= thr[i].pass;
    }
    run_print_summary(json_stdout ? stderr : stdout, &cfg, &res, thr, F.thresholds.n);
    if (json_stdout)
        run_write_json(stdout, &cfg, &res, thr, F.thresholds.n, true);
    if (jf) {
        run_write_json(jf, &cfg, &res, thr, F.thresholds.n, true);
        if (fclose(jf) != 0)
            fprintf(stderr, "knee run: --json %s: %s\n", F.json, strerror(errno));
    }
    rc = !res.accounting_ok ? 1 : !all_pass ? 99 : 0;
    run_result_release(&res);
    goto out;

out:
    free_tgts(tg, nt);
    free(tc);
    free(hdrs);
    free(rejects);
    free(thr);
    strlist_release(&args);
    strlist_release(&F.targets);
    strlist_release(&F.methods);
    strlist_release(&F.headers);
    strlist_release(&F.bodies);
    strlist_release(&F.rejects);
    strlist_release(&F.thresholds);
    return rc;
}
