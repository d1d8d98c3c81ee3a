/* run_execute: prepares the targets (parse, resolve once and time it, serialise the request,
 * share out rates, clients and counts), starts one worker thread per CPU, merges their
 * intervals every second on the calling thread, then hands their totals to result.c (the
 * merged result, the accounting identities, the warnings). */
#include "load/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "http/client.h"
#include "load/shard.h"
#include "load/uring.h"

#include <errno.h>
#include <sched.h>
#include <strings.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* A signal handler may only use lock-free atomics. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2 && ATOMIC_POINTER_LOCK_FREE == 2, "run_stop needs lock-free atomics");

void run_stop_init(struct run_stop *s)
{
    atomic_init(&s->level, 0);
    atomic_init(&s->engine, NULL);
    atomic_init(&s->waking, 0);
}

void run_stop_request(struct run_stop *s, bool hard)
{
    int lvl = hard ? 2 : 1;
    int cur = atomic_load(&s->level);
    while (cur < lvl && !atomic_compare_exchange_weak(&s->level, &cur, lvl))
        ;
    /* Announce ourselves before looking at the run: run_execute clears s->engine, then
     * waits for waking to drop to 0 before it frees the loops we are about to wake. */
    atomic_fetch_add(&s->waking, 1);
    struct engine *e = atomic_load(&s->engine);
    if (e)
        for (uint32_t i = 0; i < e->nworkers; i++)
            loop_wake(&e->workers[i].loop); /* a write(2): async-signal-safe */
    atomic_fetch_sub(&s->waking, 1);
}

int run_stop_level(struct run_stop *s)
{
    return atomic_load(&s->level);
}

/* Take the handle for this run (refused when another run holds it). */
static int stop_attach(struct run_stop *s, struct engine *e)
{
    struct engine *none = NULL;
    return atomic_compare_exchange_strong(&s->engine, &none, e) ? 0 : KNEE_EINVAL;
}

/* Give the handle back; afterwards no run_stop_request touches this run's loops. Spinning is
 * safe: a request made by a signal handler on this thread has finished before we run, and
 * one on another thread holds `waking` for a few loop_wake calls only. */
static void stop_detach(struct run_stop *s)
{
    atomic_store(&s->engine, NULL);
    while (atomic_load(&s->waking))
        sched_yield();
}

/* Split total into n parts proportional to w (largest remainder; the parts sum to total). */
static void apportion(uint64_t total, const double *w, size_t n, uint64_t *out)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += w[i];
    uint64_t given = 0;
    double *rem = xcalloc(n ? n : 1, sizeof *rem);
    for (size_t i = 0; i < n; i++) {
        double exact = sum > 0 ? (double)total * w[i] / sum : 0;
        out[i] = (uint64_t)floor(exact);
        rem[i] = exact - (double)out[i];
        given += out[i];
    }
    while (given < total && n) {
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (rem[i] > rem[best])
                best = i;
        out[best]++;
        rem[best] = -1;
        given++;
    }
    free(rem);
}

/* ------------------------------------------------------------------ preparation */

static int prepare_target(struct engine_target *et, const struct run_config *cfg, char *err, size_t errlen)
{
    const struct run_target_config *tc = et->cfg;
    char why[256];
    int r = url_parse(tc->url, &et->url, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "target %s: %s: %s", tc->name, tc->url, why);
    et->tls = et->url.tls;
    et->h2_known = et->tls ? cfg->http == RUN_HTTP_2 : cfg->h2c;
    et->h2_able = et->tls ? cfg->http != RUN_HTTP_1 : cfg->h2c;
    r = net_resolve(et->url.host, et->url.port_str, &et->addr, &et->resolve_ns, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "target %s: %s", tc->name, why);
    const char *method = tc->method ? tc->method : "GET";
    struct http_request_spec spec = {
        .method = method,
        .url = &et->url,
        .headers = tc->headers,
        .nheaders = tc->nheaders,
        .body = tc->body,
        .body_len = tc->body_len,
        .keepalive = cfg->keepalive,
    };
    r = http_client_build_request(&spec, &et->req, &et->req_len, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "target %s: %s", tc->name, why);
    if (cfg->keepalive && cfg->requests_per_connection) {
        /* the last request a connection carries says so (Connection: close) */
        spec.keepalive = false;
        r = http_client_build_request(&spec, &et->req_close, &et->req_close_len, why, sizeof why);
        if (r)
            return knee_fail(err, errlen, r, "target %s: %s", tc->name, why);
    }
    if (et->h2_able) {
        spec.keepalive = true;
        r = h2_request_build(&spec, &et->h2req, why, sizeof why);
        if (r)
            return knee_fail(err, errlen, r, "target %s: %s (HTTP/2)", tc->name, why);
    }
    et->head = strcmp(method, "HEAD") == 0;
    http_matchers_init(&et->matchers);
    et->expect_bit = ENGINE_NO_NEEDLE;
    if (cfg->expect_body) {
        r = http_matchers_add(&et->matchers, cfg->expect_body, strlen(cfg->expect_body));
        if (r < 0)
            return knee_fail(err, errlen, KNEE_EINVAL, "--expect-body: empty or longer than %d bytes",
                             HTTP_MATCH_NEEDLE_MAX);
        et->expect_bit = r;
    }
    et->nrejects = cfg->nrejects;
    for (size_t i = 0; i < cfg->nrejects; i++) {
        et->reject_status[i] = cfg->rejects[i].status;
        et->reject_bit[i] = ENGINE_NO_NEEDLE;
        if (cfg->rejects[i].body) {
            r = http_matchers_add(&et->matchers, cfg->rejects[i].body, strlen(cfg->rejects[i].body));
            if (r < 0)
                return knee_fail(err, errlen, KNEE_EINVAL, "--reject: body text empty, too long or too many");
            et->reject_bit[i] = r;
        }
    }
    return 0;
}

/* Rates (open loop) or clients (closed loop), and --requests, per target. */
static int plan_targets(struct engine *e, char *err, size_t errlen)
{
    const struct run_config *cfg = e->cfg;
    size_t n = e->nt;
    double *w = xcalloc(n, sizeof *w);
    uint64_t *parts = xcalloc(n, sizeof *parts);
    int rc = 0;
    if (cfg->open_loop) {
        double shared_w = 0;
        for (size_t i = 0; i < n; i++)
            if (e->targets[i].cfg->rate <= 0)
                shared_w += e->targets[i].cfg->weight > 0 ? e->targets[i].cfg->weight : 1;
        double from = cfg->ramp ? cfg->ramp_from : cfg->rate, to = cfg->ramp ? cfg->ramp_to : cfg->rate;
        for (size_t i = 0; i < n; i++) {
            struct engine_target *et = &e->targets[i];
            if (et->cfg->rate > 0) {
                et->rate_from = et->rate_to = et->cfg->rate;
            } else {
                if (from <= 0 && to <= 0) {
                    rc = knee_fail(err, errlen, KNEE_EINVAL,
                                   "target %s has no rate: give --rate R (shared by weight) or %s=URL@RATE",
                                   et->cfg->name, et->cfg->name);
                    goto out;
                }
                double share = (et->cfg->weight > 0 ? et->cfg->weight : 1) / shared_w;
                et->rate_from = from * share;
                et->rate_to = to * share;
            }
            w[i] = (et->rate_from + et->rate_to) / 2;
        }
        if (cfg->requests) {
            apportion(cfg->requests, w, n, parts);
            for (size_t i = 0; i < n; i++)
                e->targets[i].limit = parts[i];
        } else {
            for (size_t i = 0; i < n; i++)
                e->targets[i].limit = UINT64_MAX;
        }
    } else {
        uint32_t total = cfg->connections ? cfg->connections : RUN_DEFAULT_CLOSED_CONNECTIONS;
        uint64_t own = 0;
        size_t nshared = 0;
        for (size_t i = 0; i < n; i++) {
            if (e->targets[i].cfg->connections)
                own += e->targets[i].cfg->connections;
            else {
                w[i] = e->targets[i].cfg->weight > 0 ? e->targets[i].cfg->weight : 1;
                nshared++;
            }
        }
        if (nshared) {
            apportion(total, w, n, parts);
            for (size_t i = 0; i < n; i++)
                if (!e->targets[i].cfg->connections && parts[i] == 0) {
                    rc = knee_fail(err, errlen, KNEE_EINVAL,
                                   "target %s gets no connection: %u connections shared by %zu targets (raise "
                                   "--connections)",
                                   e->targets[i].cfg->name, total, nshared);
                    goto out;
                }
        }
        /* --streams S: each connection is shared by S clients (HTTP/2 streams) */
        uint64_t S = e->group_streams;
        for (size_t i = 0; i < n; i++) {
            struct engine_target *et = &e->targets[i];
            uint64_t conns = et->cfg->connections ? et->cfg->connections : parts[i];
            uint64_t clients = conns * S;
            et->clients = clients > UINT32_MAX ? UINT32_MAX : (uint32_t)clients;
            w[i] = (double)conns;
        }
        (void)own;
        if (cfg->requests) {
            apportion(cfg->requests, w, n, parts);
            for (size_t i = 0; i < n; i++)
                e->targets[i].limit = parts[i];
            /* a client sends at least one request: no more clients than the target's requests
             * (-n 5 -c 8 opens 5) */
            for (size_t i = 0; i < n; i++)
                if (e->targets[i].clients > e->targets[i].limit)
                    e->targets[i].clients = (uint32_t)e->targets[i].limit;
        } else {
            for (size_t i = 0; i < n; i++)
                e->targets[i].limit = UINT64_MAX;
        }
        for (size_t i = 0; i < n; i++)
            e->targets[i].groups = (uint32_t)((e->targets[i].clients + S - 1) / S);
    }
out:
    free(w);
    free(parts);
    return rc;
}

/* The open loop's load threads: --threads (default: the CPUs), at most one per connection of
 * the pool (each thread owns its connections: --connections 1 means one thread). */
static uint32_t open_loop_threads(const struct run_config *cfg)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t T = cfg->threads ? cfg->threads : (uint32_t)(ncpu > 0 ? ncpu : 1);
    uint32_t pool = cfg->connections ? cfg->connections : RUN_DEFAULT_OPEN_CONNECTIONS;
    if (pool < T)
        T = pool;
    return T ? T : 1;
}

/* The plan's bounds: a rate each thread can plan (RUN_MAX_RATE_PER_THREAD) and a plan that
 * ends (RUN_MAX_PLAN_NS), so every run ends within its duration + drain + the time to account
 * the requests the generator did not reach, and nothing overflows on the way. */
static int validate_plan_bounds(const struct run_config *cfg, char *err, size_t errlen)
{
    if (cfg->duration_ns > RUN_MAX_PLAN_NS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--duration must be at most %.0f s", (double)RUN_MAX_PLAN_NS / 1e9);
    if (!cfg->open_loop)
        return 0;
    double shared = cfg->ramp ? fmax(cfg->ramp_from, cfg->ramp_to) : cfg->rate, own = 0, start = 0;
    bool any_shared = false;
    for (size_t i = 0; i < cfg->ntargets; i++) {
        if (cfg->targets[i].rate > 0)
            own += cfg->targets[i].rate;
        else
            any_shared = true;
    }
    double peak = own + (any_shared ? shared : 0);
    start = own + (any_shared ? (cfg->ramp ? cfg->ramp_from : cfg->rate) : 0);
    /* a shard's thread plans every (N·T)-th send of the whole plan (load/shard.h): N shards of T
     * threads share the bound */
    uint32_t T = open_loop_threads(cfg), N = run_shard_count(cfg);
    double cap = RUN_MAX_RATE_PER_THREAD * T * N;
    char a[32], b[32];
    if (peak > cap && N > 1)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--rate: %.6g/s is more than %u shards of %u load thread%s can plan (at most %s/s per "
                         "thread, %s/s here); give --threads or more shards",
                         peak, N, T, T == 1 ? "" : "s", units_fmt_count((uint64_t)RUN_MAX_RATE_PER_THREAD, a, sizeof a),
                         units_fmt_count((uint64_t)cap, b, sizeof b));
    if (peak > cap)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--rate: %.6g/s is more than %u load thread%s can plan (at most %s/s per thread, %s/s "
                         "here); give --threads or spread the load over several generators",
                         peak, T, T == 1 ? "" : "s", units_fmt_count((uint64_t)RUN_MAX_RATE_PER_THREAD, a, sizeof a),
                         units_fmt_count((uint64_t)cap, b, sizeof b));
    if (cfg->requests && !cfg->duration_ns && start > 0 &&
        (double)cfg->requests / start * 1e9 > (double)RUN_MAX_PLAN_NS)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--requests %llu at %.6g/s would take %.3g s to plan: a plan spans at most %s s (--duration's "
                         "limit); raise --rate or lower --requests",
                         (unsigned long long)cfg->requests, start, (double)cfg->requests / start,
                         units_fmt_count(RUN_MAX_PLAN_NS / NS_PER_S, a, sizeof a));
    return 0;
}

/* The TLS and HTTP/2 flags: each applies to some targets (https://, or http:// for --h2c) and
 * is refused where it would change nothing, so a typo in a URL's scheme is not a silent
 * cleartext run. */
static int validate_transport(const struct run_config *cfg, char *err, size_t errlen)
{
    bool any_tls = false, any_plain = false;
    for (size_t i = 0; i < cfg->ntargets; i++) {
        if (strncasecmp(cfg->targets[i].url, "https://", 8) == 0)
            any_tls = true;
        else
            any_plain = true;
    }
    const char *tls_flag = cfg->tls_cacert                                ? "--cacert"
                           : cfg->tls_insecure                            ? "--insecure"
                           : cfg->tls_min_version || cfg->tls_max_version ? "--tls-version"
                           : cfg->tls_ciphers                             ? "--ciphers"
                           : cfg->tls_no_resume                           ? "--tls-resume off"
                           : cfg->http == RUN_HTTP_1                      ? "--http1.1"
                           : cfg->http == RUN_HTTP_2                      ? "--http2"
                                                                          : NULL;
    if (tls_flag && !any_tls)
        return knee_fail(
            err, errlen, KNEE_EINVAL, "%s applies to https:// targets, and every target is http://%s", tls_flag,
            cfg->http == RUN_HTTP_2 && !cfg->tls_cacert && !cfg->tls_insecure ? " (HTTP/2 in cleartext is --h2c)" : "");
    if (cfg->h2c && !any_plain)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--h2c applies to http:// targets (https:// ones agree on h2 by ALPN; --http2 forces it)");
    if (cfg->tls_insecure && cfg->tls_cacert)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--insecure and --cacert: give one (--insecure verifies no certificate at all)");
    for (int k = 0; k < 2; k++) {
        int v = k ? cfg->tls_max_version : cfg->tls_min_version;
        if (v && (v < 0x0301 || v > 0x0304))
            return knee_fail(err, errlen, KNEE_EINVAL, "--tls-version: versions are 1.0 to 1.3");
    }
    if (cfg->tls_min_version && cfg->tls_max_version && cfg->tls_min_version > cfg->tls_max_version)
        return knee_fail(err, errlen, KNEE_EINVAL, "--tls-version: MIN is above MAX");
    bool h2_possible = (any_tls && cfg->http != RUN_HTTP_1) || (any_plain && cfg->h2c);
    if (cfg->streams > RUN_H2_MAX_STREAMS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--streams must be between 1 and %d", RUN_H2_MAX_STREAMS);
    if (cfg->streams && !h2_possible)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--streams applies to HTTP/2: https:// targets (ALPN h2, without --http1.1) or --h2c");
    if (cfg->requests_per_connection && !cfg->keepalive)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--requests-per-connection and --no-keepalive: give one (--no-keepalive is one request per "
                         "connection)");
    if (cfg->io == RUN_IO_URING) {
        const char *why = cfg->open_loop ? "the open loop (--rate) runs on epoll"
                          : any_tls      ? "https:// targets run on epoll"
                          : cfg->h2c     ? "HTTP/2 (--h2c) runs on epoll"
                                         : NULL;
        if (why)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--io uring applies to the closed loop over cleartext HTTP/1.1: %s (--io epoll or auto)",
                             why);
    }
    return 0;
}

/* Whether --io auto takes io_uring where it applies (docs/INTERNALS.md, "The io_uring engine":
 * measured against epoll on this project's machine, io_uring cost less CPU per request but gave
 * no more throughput, less in the quietest run: auto stays epoll). */
#define RUN_IO_AUTO_URING false

/* The engine the threads run: io_uring where it was asked for (or auto prefers it) and applies
 * (the closed loop, cleartext HTTP/1.1) and this process may set up a ring; else epoll. An
 * explicit --io uring that the kernel refuses is an error. */
static int choose_io(struct engine *e, const struct run_config *cfg, bool any_tls, char *err, size_t errlen)
{
    e->io = RUN_IO_EPOLL;
    bool applies = !cfg->open_loop && !any_tls && !cfg->h2c;
    if (!applies || cfg->io == RUN_IO_EPOLL || (cfg->io == RUN_IO_AUTO && !RUN_IO_AUTO_URING))
        return 0;
    int r = uring_probe();
    if (r == 0)
        e->io = RUN_IO_URING;
    else if (cfg->io == RUN_IO_URING)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--io uring: this process cannot set up an io_uring (%s); --io epoll", knee_strerror(r));
    return 0;
}

/* Every message names the flag of `knee run` that sets the field, so the command line can
 * leave these checks here and still tell the user which flag to fix. */
int run_validate(const struct run_config *cfg, char *err, size_t errlen)
{
    if (cfg->ntargets == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "no target: give a URL or --target NAME=URL (see knee run --help)");
    if (cfg->ntargets > RUN_MAX_TARGETS)
        return knee_fail(err, errlen, KNEE_EINVAL, "at most %d targets (URLs and --target)", RUN_MAX_TARGETS);
    for (size_t i = 0; i < cfg->ntargets; i++) {
        const struct run_target_config *t = &cfg->targets[i];
        if (!t->name || !*t->name || !t->url)
            return knee_fail(err, errlen, KNEE_EINVAL, "target %zu has no name or URL (--target NAME=URL)", i + 1);
        for (size_t j = 0; j < i; j++)
            if (strcmp(cfg->targets[j].name, t->name) == 0)
                return knee_fail(err, errlen, KNEE_EINVAL, "--target: two targets are named '%s'", t->name);
        if (t->rate < 0 || !isfinite(t->rate))
            return knee_fail(err, errlen, KNEE_EINVAL, "--target %s: its rate (@R) must be a finite number >= 0",
                             t->name);
        if (t->weight < 0 || !isfinite(t->weight))
            return knee_fail(err, errlen, KNEE_EINVAL, "--mix: the weight of %s must be a finite number >= 0", t->name);
        if (t->connections && cfg->open_loop)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--target NAME=URL@Nc sets closed-loop connections, but --rate makes this an open loop");
        if (t->connections > RUN_MAX_CONNECTIONS)
            return knee_fail(err, errlen, KNEE_EINVAL, "--target %s: @Nc must be between 1 and %d", t->name,
                             RUN_MAX_CONNECTIONS);
        if (t->method && !http_is_token(t->method, strlen(t->method)))
            return knee_fail(err, errlen, KNEE_EINVAL, "--method '%s' is not an HTTP method", t->method);
    }
    if (!cfg->duration_ns && !cfg->requests)
        return knee_fail(err, errlen, KNEE_EINVAL, "neither --duration nor --requests bounds the run");
    if (cfg->rate < 0 || !isfinite(cfg->rate))
        return knee_fail(err, errlen, KNEE_EINVAL, "--rate must be a finite number > 0");
    if (cfg->ramp) {
        if (cfg->rate > 0)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--ramp and --rate: give one (the ramp sets the rate over time)");
        if (!cfg->duration_ns)
            return knee_fail(err, errlen, KNEE_EINVAL, "--ramp needs --duration (it ramps over the duration)");
        if (cfg->requests)
            return knee_fail(err, errlen, KNEE_EINVAL, "--ramp and --requests cannot be combined");
        if (!(cfg->ramp_from >= 0 && cfg->ramp_to >= 0 && isfinite(cfg->ramp_from) && isfinite(cfg->ramp_to)) ||
            (cfg->ramp_from == 0 && cfg->ramp_to == 0))
            return knee_fail(err, errlen, KNEE_EINVAL, "--ramp: FROM and TO must be rates >= 0, not both 0");
        if (!cfg->open_loop)
            return knee_fail(err, errlen, KNEE_EINVAL, "--ramp applies to the open loop");
    }
    if (cfg->open_loop && cfg->think_ns)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--think applies to the closed loop (no --rate): an open loop sends on its schedule");
    if (!cfg->open_loop && cfg->arrivals != RUN_ARRIVALS_CONSTANT)
        return knee_fail(err, errlen, KNEE_EINVAL, "--arrivals applies to the open loop: give --rate");
    if (!cfg->open_loop && cfg->when_busy != RUN_BUSY_QUEUE)
        return knee_fail(err, errlen, KNEE_EINVAL, "--when-busy applies to the open loop: give --rate");
    if (!cfg->open_loop && cfg->timer_slack_ns)
        return knee_fail(err, errlen, KNEE_EINVAL, "--timer-slack applies to the open loop: give --rate");
    if (cfg->timer_slack_ns > RUN_MAX_TIMER_SLACK_NS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--timer-slack must be at most %llu ms",
                         (unsigned long long)(RUN_MAX_TIMER_SLACK_NS / 1000000ULL));
    if (cfg->timer_slack_ns && cfg->spin_ns)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--timer-slack and --spin contradict each other (late sends for fewer wake-ups, or a "
                         "busy core for punctual ones): give one");
    if (cfg->connections > RUN_MAX_CONNECTIONS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--connections must be between 1 and %d", RUN_MAX_CONNECTIONS);
    if (cfg->threads > RUN_MAX_THREADS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--threads must be between 1 and %d", RUN_MAX_THREADS);
    if (cfg->timeout_ns == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--timeout must be > 0");
    if (cfg->duration_ns && cfg->warmup_ns >= cfg->duration_ns)
        return knee_fail(err, errlen, KNEE_EINVAL, "--warmup must be shorter than --duration");
    if (cfg->expect_body && !*cfg->expect_body)
        return knee_fail(err, errlen, KNEE_EINVAL, "--expect-body: empty text");
    if (cfg->nrejects > RUN_MAX_REJECTS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--reject: at most %d", RUN_MAX_REJECTS);
    int rc = validate_transport(cfg, err, errlen);
    if (rc)
        return rc;
    rc = run_shard_validate(cfg, err, errlen);
    return rc ? rc : validate_plan_bounds(cfg, err, errlen);
}

/* ------------------------------------------------------------------ intervals */

/* Interval k ends at the (k+1)-th edge in time order; the edges are the whole seconds after
 * t0 and the extra edges (the window's start and end when they are not whole seconds). */
uint64_t engine_tick_end(const struct engine *e, uint64_t k)
{
    uint64_t c = 0;
    while (c < (uint64_t)e->ntick_extra && c <= k && e->tick_extra[c] < (k + 1 - c) * NS_PER_S)
        c++;
    uint64_t sec = (k + 1 - c) * NS_PER_S;
    if (c && e->tick_extra[c - 1] > sec)
        return e->tick_extra[c - 1];
    return c == k + 1 ? e->tick_extra[c - 1] : sec;
}

uint64_t engine_tick_of(const struct engine *e, uint64_t t)
{
    uint64_t k = t / NS_PER_S;
    for (int i = 0; i < e->ntick_extra; i++)
        if (e->tick_extra[i] <= t)
            k++;
    return k;
}

bool engine_start_gate(struct engine *e)
{
    pthread_mutex_lock(&e->mu);
    e->nready++;
    pthread_cond_broadcast(&e->cv);
    while (!e->go && !e->aborted)
        pthread_cond_wait(&e->cv, &e->mu);
    bool go = e->go;
    pthread_mutex_unlock(&e->mu);
    return go;
}

void engine_publish(struct worker *w, uint64_t end_ns)
{
    struct engine *e = w->e;
    uint64_t k = w->tick_index;
    if (e->live)
        live_snapshot(w); /* outside the lock: the thread's own totals */
    pthread_mutex_lock(&e->mu);
    struct ival_slot *s = &e->slots[k % IVAL_SLOTS];
    while (s->used && s->index != k)
        pthread_cond_wait(&e->cv, &e->mu);
    if (!s->used) {
        s->used = true;
        s->index = k;
    }
    for (size_t i = 0; i < e->nt; i++) {
        hdr_add(&s->lat[i], &w->t[i].ival);
        if (w->t[i].ival_max_ns > s->max_ns)
            s->max_ns = w->t[i].ival_max_ns;
    }
    s->c.planned += w->ic.planned;
    s->c.sent += w->ic.sent;
    s->c.completed += w->ic.completed;
    s->c.ok += w->ic.ok;
    s->c.errors += w->ic.errors;
    s->c.dropped += w->ic.dropped;
    s->inflight += w->inflight;
    s->queued += w->queued;
    if (end_ns > s->end_ns)
        s->end_ns = end_ns;
    if (e->live)
        live_post(w);
    e->published[w->index] = k + 1;
    if (w->finished)
        e->done[w->index] = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

static bool interval_ready(const struct engine *e, uint64_t k)
{
    for (uint32_t i = 0; i < e->nworkers; i++)
        if (e->published[i] <= k && !e->done[i])
            return false;
    return true;
}

static bool all_done(const struct engine *e)
{
    for (uint32_t i = 0; i < e->nworkers; i++)
        if (!e->done[i])
            return false;
    return true;
}

/* The main thread's job while workers run: take each second as soon as every thread has
 * published it, hand it to the callbacks and keep it for the timeline. */
static void consume_intervals(struct engine *e, struct run_result *res)
{
    const struct run_config *cfg = e->cfg;
    struct hdr all;
    hdr_init(&all, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    size_t cap = 0;
    double total_s = cfg->duration_ns ? (double)cfg->duration_ns / 1e9 : 0;
    pthread_mutex_lock(&e->mu);
    for (uint64_t k = 0;; k++) {
        while (!interval_ready(e, k)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 200 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&e->cv, &e->mu, &ts);
        }
        struct ival_slot *s = &e->slots[k % IVAL_SLOTS];
        if (!(s->used && s->index == k)) {
            if (all_done(e))
                break;
            continue; /* cannot happen: a worker publishes every second until it is done */
        }
        /* Workers never write a slot whose index they have already published; this one is
         * ours until we mark it free, so the callbacks run without the lock. */
        pthread_mutex_unlock(&e->mu);
        uint64_t start_ns = k ? engine_tick_end(e, k - 1) : 0;
        double start_s = (double)start_ns / 1e9;
        double len_s = (double)((int64_t)(s->end_ns - e->t0_ns) - (int64_t)start_ns) / 1e9;
        if (len_s <= 0)
            len_s = 1e-9;
        hdr_reset(&all);
        for (size_t i = 0; i < e->nt; i++) {
            hdr_add(&all, &s->lat[i]);
            if (cfg->on_interval)
                cfg->on_interval(cfg->interval_ctx, i, start_s, len_s, &s->lat[i]);
        }
        if (res->nticks == cap) {
            cap = cap ? cap * 2 : 64;
            res->ticks = xrealloc(res->ticks, cap * sizeof *res->ticks);
        }
        struct run_tick *tk = &res->ticks[res->nticks++];
        tk->start_s = start_s;
        tk->length_s = len_s;
        tk->planned = s->c.planned;
        tk->sent = s->c.sent;
        tk->completed = s->c.completed;
        tk->ok = s->c.ok;
        tk->errors = s->c.errors;
        tk->dropped = s->c.dropped;
        tk->p50_ms = all.total_count ? (double)hdr_value_at_percentile(&all, 50) / 1e6 : NAN;
        tk->p99_ms = all.total_count ? (double)hdr_value_at_percentile(&all, 99) / 1e6 : NAN;
        tk->max_ms = all.total_count ? (double)s->max_ns / 1e6 : NAN;
        if (cfg->on_progress) {
            struct run_progress p = {
                .elapsed_s = start_s + len_s,
                .total_s = total_s,
                .start_s = start_s,
                .length_s = len_s,
                .planned = tk->planned,
                .sent = tk->sent,
                .completed = tk->completed,
                .ok = tk->ok,
                .errors = tk->errors,
                .dropped = tk->dropped,
                .in_flight = s->inflight,
                .queued = s->queued,
                .p50_ms = tk->p50_ms,
                .p99_ms = tk->p99_ms,
            };
            cfg->on_progress(cfg->progress_ctx, &p);
        }
        live_tick(e, start_s + len_s);
        pthread_mutex_lock(&e->mu);
        for (size_t i = 0; i < e->nt; i++)
            hdr_reset(&s->lat[i]);
        memset(&s->c, 0, sizeof s->c);
        s->inflight = s->queued = s->max_ns = s->end_ns = 0;
        s->used = false;
        pthread_cond_broadcast(&e->cv);
    }
    pthread_mutex_unlock(&e->mu);
    hdr_release(&all);
}

/* ------------------------------------------------------------------ run */

static void engine_release(struct engine *e)
{
    live_release(e);
    if (e->workers) {
        for (uint32_t i = 0; i < e->nworkers; i++)
            worker_release(&e->workers[i]);
        free(e->workers);
    }
    for (int s = 0; s < IVAL_SLOTS; s++) {
        if (e->slots[s].lat) {
            for (size_t i = 0; i < e->nt; i++)
                hdr_release(&e->slots[s].lat[i]);
            free(e->slots[s].lat);
        }
    }
    if (e->targets) {
        for (size_t i = 0; i < e->nt; i++) {
            url_release(&e->targets[i].url);
            free(e->targets[i].req);
            free(e->targets[i].req_close);
            if (e->targets[i].h2_able)
                h2_request_release(&e->targets[i].h2req);
            http_matchers_release(&e->targets[i].matchers);
        }
        free(e->targets);
    }
    free(e->published);
    free(e->done);
    free(e->worker_cpu);
    tls_ctx_free(e->tls);
}

/* Everything before the threads, shared by run_execute and run_plan: check cfg, parse,
 * resolve and serialise each target, share out rates, clients and --requests, choose the
 * thread count and the connection pool within the file descriptor limit (raised as far as
 * allowed). On failure the caller still calls engine_release. */
static int engine_prepare(struct engine *e, const struct run_config *cfg, char *err, size_t errlen)
{
    int rc = run_validate(cfg, err, errlen);
    if (rc)
        return rc;
    e->cfg = cfg;
    e->nt = cfg->ntargets;
    e->rpc = cfg->requests_per_connection ? cfg->requests_per_connection : cfg->keepalive ? UINT32_MAX : 1;
    e->h2_streams = cfg->streams ? cfg->streams : RUN_H2_DEFAULT_STREAMS;
    e->group_streams = !cfg->open_loop && cfg->streams ? cfg->streams : 1;
    e->targets = xcalloc(e->nt, sizeof *e->targets);
    bool any_tls = false;
    for (size_t i = 0; i < e->nt; i++) {
        e->targets[i].cfg = &cfg->targets[i];
        rc = prepare_target(&e->targets[i], cfg, err, errlen);
        if (rc)
            return rc;
        any_tls |= e->targets[i].tls;
    }
    if (any_tls) {
        /* one client context for the run, shared read-only by every thread; what OpenSSL
         * refuses here (--cacert, --ciphers) is bad input */
        struct tls_client_config tc = {
            .cafile = cfg->tls_cacert,
            .insecure = cfg->tls_insecure,
            .min_version = cfg->tls_min_version,
            .max_version = cfg->tls_max_version,
            .ciphers = cfg->tls_ciphers,
            .alpn = cfg->http == RUN_HTTP_1   ? TLS_ALPN_HTTP1
                    : cfg->http == RUN_HTTP_2 ? TLS_ALPN_H2
                                              : TLS_ALPN_ANY,
            .resume = !cfg->tls_no_resume,
        };
        rc = tls_client_new(&tc, &e->tls, err, errlen);
        if (rc)
            return rc;
    }
    rc = choose_io(e, cfg, any_tls, err, errlen);
    if (rc)
        return rc;
    rc = plan_targets(e, err, errlen);
    if (rc)
        return rc;
    rc = shard_apply(e, err, errlen); /* --shard: this shard's part of the connections */
    if (rc)
        return rc;

    /* threads */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t T = cfg->threads ? cfg->threads : (uint32_t)(ncpu > 0 ? ncpu : 1);
    uint64_t clients = 0; /* closed loop: connections (groups of --streams clients) */
    for (size_t i = 0; i < e->nt; i++)
        clients += e->targets[i].groups;
    if (!cfg->open_loop && clients < T)
        T = (uint32_t)clients; /* a thread without clients would have nothing to do */
    e->pool_cap = cfg->open_loop ? (cfg->connections ? cfg->connections : RUN_DEFAULT_OPEN_CONNECTIONS) : 0;
    if (cfg->open_loop)
        T = open_loop_threads(cfg); /* the count run_validate bounded the rate with */
    if (T == 0)
        T = 1;
    e->nworkers = T;
    e->timeout_ns = cfg->timeout_ns;
    e->drain_ns = cfg->drain_ns;
    e->spin_ns = cfg->spin_ns;
    e->lag_limit_ns = cfg->lag_limit_ns ? cfg->lag_limit_ns : RUN_DEFAULT_LAG_LIMIT_NS;
    e->timer_slack_ns = cfg->open_loop ? cfg->timer_slack_ns : 0;

    /* descriptors: every connection is one */
    uint64_t need = (cfg->open_loop ? e->pool_cap : clients) + 64 + 4 * (uint64_t)T;
    uint64_t have = 0;
    net_raise_nofile(need, &have);
    e->fd_limit = have;
    e->pool_asked = e->pool_cap;
    if (have < need) {
        if (!cfg->open_loop)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "%llu connections need %llu file descriptors but the limit is %llu (raise ulimit -n)",
                             (unsigned long long)clients, (unsigned long long)need, (unsigned long long)have);
        e->pool_cap = have > 64 + 4 * (uint64_t)T ? (uint32_t)(have - 64 - 4 * (uint64_t)T) : T;
    }
    return 0;
}

int run_execute(const struct run_config *cfg, struct run_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    if (err && errlen)
        err[0] = '\0';
    struct engine e;
    memset(&e, 0, sizeof e);
    struct run_stop own_stop; /* without a handle from the caller, nobody can stop the run */
    run_stop_init(&own_stop);
    e.stop = cfg->stop ? cfg->stop : &own_stop;
    result_env_begin(&res->env);
    int rc = engine_prepare(&e, cfg, err, errlen);
    if (rc == 0)
        rc = live_init(&e, err, errlen);
    if (rc)
        goto out;
    if (e.pool_cap < e.pool_asked)
        result_warn(res, "the connection pool is capped at %u (file descriptor limit %llu; asked for %u)", e.pool_cap,
                    (unsigned long long)e.fd_limit, e.pool_asked);
    uint32_t T = e.nworkers;
    res->threads = T;
    res->pool_cap = e.pool_cap;

    if (cfg->out_path) {
        rc = outlog_open(&e.log, cfg->out_path, &e, err, errlen);
        if (rc)
            goto out;
    }

    pthread_mutex_init(&e.mu, NULL);
    pthread_cond_init(&e.cv, NULL);
    for (int s = 0; s < IVAL_SLOTS; s++) {
        e.slots[s].lat = xcalloc(e.nt, sizeof *e.slots[s].lat);
        for (size_t i = 0; i < e.nt; i++)
            hdr_init(&e.slots[s].lat[i], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    }
    e.published = xcalloc(T, sizeof *e.published);
    e.done = xcalloc(T, sizeof *e.done);
    e.workers = xcalloc(T, sizeof *e.workers);
    for (uint32_t i = 0; i < T; i++) {
        rc = worker_init(&e.workers[i], &e, i);
        if (rc) {
            knee_fail(err, errlen, rc, "event loop: %s", knee_strerror(rc));
            for (uint32_t j = 0; j < i; j++)
                worker_release(&e.workers[j]);
            free(e.workers);
            e.workers = NULL;
            goto out_sync;
        }
    }

    e.worker_cpu = xcalloc(T, sizeof *e.worker_cpu);
    getrusage(RUSAGE_SELF, &e.ru0);
    thread_cpu_now(&e.main_cpu0);
    e.cpu_wall0_ns = clock_now_ns();
    rc = stop_attach(e.stop, &e);
    if (rc) {
        knee_fail(err, errlen, rc, "run_config.stop: the stop handle is in use by another run");
        goto out_sync;
    }
    /* workers take no signals: Ctrl-C reaches the caller's handler, which calls
     * run_stop_request() and wakes their loops */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    uint32_t started = 0;
    int pr = 0;
    for (; started < T; started++)
        if ((pr = pthread_create(&e.workers[started].tid, NULL, worker_main, &e.workers[started])) != 0)
            break;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_lock(&e.mu);
    while (e.nready < started)
        pthread_cond_wait(&e.cv, &e.mu);
    if (started < T) {
        /* the threads that did start are waiting at the gate: send them home */
        e.aborted = true;
        pthread_cond_broadcast(&e.cv);
        pthread_mutex_unlock(&e.mu);
        for (uint32_t i = 0; i < started; i++)
            pthread_join(e.workers[i].tid, NULL);
        stop_detach(e.stop);
        rc = knee_fail(err, errlen, -pr, "cannot start load thread %u of %u: %s", started + 1, T, strerror(pr));
        goto out_sync;
    }
    /* t0 a little ahead, so every thread has armed its timers before the first send */
    e.t0_ns = clock_now_ns() + 2 * NS_PER_MS;
    shard_start(&e, res); /* --start-at: t0 is the shared instant */
    e.warmup_end_ns = e.t0_ns + cfg->warmup_ns;
    e.plan_end_ns = cfg->duration_ns ? e.t0_ns + cfg->duration_ns : UINT64_MAX;
    if (cfg->open_loop && !cfg->duration_ns) {
        double total_rate = 0;
        for (size_t i = 0; i < e.nt; i++)
            total_rate += e.targets[i].rate_from;
        e.window_end_ns = e.t0_ns + (uint64_t)llround((double)cfg->requests / total_rate * 1e9);
    } else {
        e.window_end_ns = e.plan_end_ns;
    }
    /* a duration run ends by plan end + drain: what the generator has not sent by then is
     * dropped (accounted and logged), so a plan it cannot keep cannot stretch the run */
    e.cutoff_ns = e.plan_end_ns == UINT64_MAX ? UINT64_MAX : e.plan_end_ns + e.drain_ns;
    /* the window's edges cut the timeline's seconds */
    uint64_t edges[2] = {cfg->warmup_ns, e.window_end_ns == UINT64_MAX ? 0 : e.window_end_ns - e.t0_ns};
    for (int i = 0; i < 2; i++)
        if (edges[i] % NS_PER_S && (e.ntick_extra == 0 || e.tick_extra[e.ntick_extra - 1] != edges[i]))
            e.tick_extra[e.ntick_extra++] = edges[i];
    if (e.ntick_extra == 2 && e.tick_extra[0] > e.tick_extra[1]) {
        uint64_t x = e.tick_extra[0];
        e.tick_extra[0] = e.tick_extra[1];
        e.tick_extra[1] = x;
    }
    e.go = true;
    pthread_cond_broadcast(&e.cv);
    pthread_mutex_unlock(&e.mu);

    result_begin(res, &e);

    consume_intervals(&e, res);
    for (uint32_t i = 0; i < T; i++)
        pthread_join(e.workers[i].tid, NULL);
    stop_detach(e.stop);
    res->interrupted = atomic_load(&e.stop->level) > 0;
    if (e.log) {
        int lr = outlog_close(e.log, &e.log_cpu);
        e.log = NULL;
        if (lr) {
            res->out_error = lr;
            result_warn(res, "--out %s: writing failed: %s", cfg->out_path, knee_strerror(lr));
        }
    }
    res->io = e.io;
    uint32_t ring_failed = atomic_load(&e.ring_failed);
    if (ring_failed == T) {
        res->io = RUN_IO_EPOLL;
        result_warn(res, "--io %s: no load thread could set up its io_uring: the run used epoll", run_io_name(cfg->io));
    } else if (ring_failed) {
        result_warn(res, "--io %s: %u of %u load threads could not set up their io_uring and used epoll",
                    run_io_name(cfg->io), ring_failed, T);
    }
    for (uint32_t i = 0; i < T; i++)
        if (e.workers[i].fatal)
            result_warn(res, "load thread %u stopped early: %s", i, knee_strerror(e.workers[i].fatal));
    result_finish(&e, res);
    shard_finish(&e, res);
    live_final(&e, res);
    rc = 0;
out_sync:
    pthread_mutex_destroy(&e.mu);
    pthread_cond_destroy(&e.cv);
out:
    if (e.log)
        outlog_abort(e.log);
    engine_release(&e);
    if (rc)
        run_result_release(res);
    return rc;
}

/* ------------------------------------------------------------------ plan (no run) */

static void plan_counts(const struct engine *e, const struct engine_target *et, struct run_plan_target *pt)
{
    const struct run_config *cfg = e->cfg;
    bool bounded = et->limit != UINT64_MAX;
    pt->warmup_planned = cfg->warmup_ns ? NAN : 0;
    pt->planned_exact = true;
    if (!cfg->open_loop) {
        pt->planned = bounded ? (double)et->limit : NAN;
        return;
    }
    struct sched s;
    sched_init(&s, cfg->arrivals == RUN_ARRIVALS_POISSON, et->rate_from, et->rate_to, (double)cfg->duration_ns / 1e9, 0,
               cfg->duration_ns ? cfg->duration_ns : UINT64_MAX, et->limit, 1, 0, cfg->seed);
    if (s.poisson) {
        double lam = bounded ? (double)et->limit : sched_expected_count(&s, (double)cfg->duration_ns / 1e9);
        double warm = sched_expected_count(&s, (double)cfg->warmup_ns / 1e9);
        pt->planned = lam;
        pt->warmup_planned = warm < lam ? warm : lam;
        pt->planned_exact = bounded;
        return;
    }
    pt->planned = (double)(bounded ? et->limit : sched_constant_count(&s, cfg->duration_ns));
    pt->warmup_planned = (double)sched_constant_count(&s, cfg->warmup_ns);
}

int run_plan(const struct run_config *cfg, struct run_plan *plan, char *err, size_t errlen)
{
    memset(plan, 0, sizeof *plan);
    if (err && errlen)
        err[0] = '\0';
    struct engine e;
    memset(&e, 0, sizeof e);
    int rc = engine_prepare(&e, cfg, err, errlen);
    if (rc)
        goto out;
    plan->ntargets = e.nt;
    plan->targets = xcalloc(e.nt, sizeof *plan->targets);
    struct run_plan_target *all = &plan->all;
    snprintf(all->name, sizeof all->name, "all");
    all->planned_exact = true;
    for (size_t i = 0; i < e.nt; i++) {
        const struct engine_target *et = &e.targets[i];
        struct run_plan_target *pt = &plan->targets[i];
        snprintf(pt->name, sizeof pt->name, "%s", et->cfg->name);
        snprintf(pt->url, sizeof pt->url, "%s", et->cfg->url);
        snprintf(pt->address, sizeof pt->address, "%s", et->addr.text);
        pt->resolve_ns = et->resolve_ns;
        pt->request_bytes = et->req_len;
        pt->rate_from = cfg->open_loop ? et->rate_from : 0;
        pt->rate_to = cfg->open_loop ? et->rate_to : 0;
        pt->connections = et->clients;
        plan_counts(&e, et, pt);
        shard_plan_target(cfg, pt);
        all->rate_from += pt->rate_from;
        all->rate_to += pt->rate_to;
        all->connections += pt->connections;
        all->planned += pt->planned;
        all->warmup_planned += pt->warmup_planned;
        all->planned_exact &= pt->planned_exact;
    }
    plan->threads = e.nworkers;
    plan->pool_cap = e.pool_cap;
    plan->pool_asked = e.pool_asked;
    plan->fd_limit = e.fd_limit;
    plan->io = e.io; /* choose_io's answer: --io auto resolved, --io uring probed */
out:
    engine_release(&e);
    return rc;
}

void run_plan_release(struct run_plan *plan)
{
    free(plan->targets);
    memset(plan, 0, sizeof *plan);
}
