/* The result of a run: the per-thread counters and histograms merged into struct run_result
 * (per target and across targets), the accounting identities checked, the rates over the
 * measurement window, the warnings (most important first) and the environment record.
 * Called by engine.c on the thread that runs run_execute, after the workers are joined. */
#include "load/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "load/shard.h"
#include "stats/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

const char *run_group_name(enum run_group g)
{
    return reqlog_outcome_name((enum reqlog_outcome)g);
}

bool run_outcome_failed(enum reqlog_outcome o)
{
    return o == OUTCOME_HTTP_ERROR || o == OUTCOME_INVALID || o == OUTCOME_TRANSPORT || o == OUTCOME_TIMEOUT;
}

void run_summarize(const struct hdr *h, struct run_summary *s)
{
    s->count = h && h->counts ? (uint64_t)h->total_count : 0;
    if (!s->count) {
        s->mean = s->stdev = s->min = s->max = s->p50 = s->p90 = s->p95 = s->p99 = s->p999 = NAN;
        return;
    }
    s->mean = hdr_mean(h) / 1e6;
    s->stdev = hdr_stdev(h) / 1e6;
    s->min = (double)hdr_min(h) / 1e6;
    s->max = (double)hdr_max(h) / 1e6;
    s->p50 = (double)hdr_value_at_percentile(h, 50) / 1e6;
    s->p90 = (double)hdr_value_at_percentile(h, 90) / 1e6;
    s->p95 = (double)hdr_value_at_percentile(h, 95) / 1e6;
    s->p99 = (double)hdr_value_at_percentile(h, 99) / 1e6;
    s->p999 = (double)hdr_value_at_percentile(h, 99.9) / 1e6;
}

static void add_warning(struct run_result *res, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void add_warning(struct run_result *res, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    res->warnings = xrealloc(res->warnings, (res->nwarnings + 1) * sizeof *res->warnings);
    res->warnings[res->nwarnings++] = xstrdup(buf);
}

void result_warn(struct run_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_warning(res, fmt, ap);
    va_end(ap);
    res->attention = true;
}

void result_note(struct run_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_warning(res, fmt, ap);
    va_end(ap);
}

void run_counts_add(struct run_counts *d, const struct run_counts *s)
{
#define ADD_S(name) d->name += s->name;
#define ADD_A(name, n)                                                                                                 \
    for (size_t i = 0; i < (n); i++)                                                                                   \
        d->name[i] += s->name[i];
    RUN_COUNTS_FIELDS(ADD_S, ADD_A)
#undef ADD_S
#undef ADD_A
}

const char *run_transport_cause_name(enum run_transport_cause c)
{
    static const char *const names[RUN_TC_COUNT] = {
        [RUN_TC_REFUSED] = "refused",
        [RUN_TC_CONNECT] = "connect",
        [RUN_TC_RESET] = "reset",
        [RUN_TC_CLOSED_BEFORE] = "closed_before_response",
        [RUN_TC_CLOSED_MID] = "closed_mid_response",
        [RUN_TC_STALE] = "stale",
        [RUN_TC_TLS_VERIFY] = "tls_verify",
        [RUN_TC_TLS_HOSTNAME] = "tls_hostname",
        [RUN_TC_TLS_EXPIRED] = "tls_expired",
        [RUN_TC_TLS_ALERT] = "tls_alert",
        [RUN_TC_TLS_PROTOCOL] = "tls_protocol",
        [RUN_TC_TLS_ALPN] = "tls_alpn",
        [RUN_TC_TLS_HANDSHAKE_TIMEOUT] = "tls_handshake_timeout",
        [RUN_TC_H2_RST_STREAM] = "h2_rst_stream",
        [RUN_TC_H2_REFUSED] = "h2_refused",
        [RUN_TC_H2_GOAWAY] = "h2_goaway",
        [RUN_TC_H2_PROTOCOL] = "h2_protocol",
        [RUN_TC_H2_NOT_H2] = "h2_not_h2",
        [RUN_TC_OTHER] = "other",
    };
    return (unsigned)c < RUN_TC_COUNT ? names[c] : "other";
}

const char *run_tls_version_name(int v)
{
    static const char *const names[RUN_TLS_VERSIONS] = {"TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"};
    return v >= 0 && v < RUN_TLS_VERSIONS ? names[v] : "unknown";
}

void run_proto_counts_add(struct run_proto_counts *d, const struct run_proto_counts *s)
{
    d->http1 += s->http1;
    d->h2 += s->h2;
    for (int v = 0; v < RUN_TLS_VERSIONS; v++)
        d->tls_version[v] += s->tls_version[v];
    d->tls_full += s->tls_full;
    d->tls_resumed += s->tls_resumed;
    d->tls_failed += s->tls_failed;
    d->h2_streams += s->h2_streams;
    d->h2_rst += s->h2_rst;
    d->h2_refused += s->h2_refused;
    d->h2_goaway += s->h2_goaway;
    d->h2_goaway_streams += s->h2_goaway_streams;
    d->h2_retried += s->h2_retried;
    d->h2_stalls += s->h2_stalls;
    if (s->h2_max_concurrent > d->h2_max_concurrent)
        d->h2_max_concurrent = s->h2_max_concurrent;
}

static void target_result_init(struct run_target_result *r)
{
    memset(r, 0, sizeof *r);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_init(&r->latency[g], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->latency_all, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->service, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->ttfb, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->lag, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->connect, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->tls, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
}

void run_target_result_release(struct run_target_result *r)
{
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_release(&r->latency[g]);
    hdr_release(&r->latency_all);
    hdr_release(&r->service);
    hdr_release(&r->ttfb);
    hdr_release(&r->lag);
    hdr_release(&r->connect);
    hdr_release(&r->tls);
    for (size_t i = 0; i < r->nst; i++)
        hdr_release(&r->st[i].dur);
    r->nst = 0;
}

static void st_merge(struct run_target_result *d, const struct run_server_timing *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < d->nst && strcmp(d->st[j].name, st[i].name) != 0)
            j++;
        if (j == d->nst) {
            if (d->nst == RUN_ST_MAX_NAMES)
                continue;
            memcpy(d->st[j].name, st[i].name, sizeof d->st[j].name);
            hdr_init(&d->st[j].dur, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
            d->nst++;
        }
        hdr_add(&d->st[j].dur, &st[i].dur);
    }
}

static void target_result_add(struct run_target_result *d, const struct run_target_result *s)
{
    run_counts_add(&d->counts, &s->counts);
    run_counts_add(&d->warmup_counts, &s->warmup_counts);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_add(&d->latency[g], &s->latency[g]);
    hdr_add(&d->latency_all, &s->latency_all);
    hdr_add(&d->service, &s->service);
    hdr_add(&d->ttfb, &s->ttfb);
    hdr_add(&d->lag, &s->lag);
    hdr_add(&d->connect, &s->connect);
    hdr_add(&d->tls, &s->tls);
    run_proto_counts_add(&d->pc, &s->pc);
    d->https |= s->https;
    st_merge(d, s->st, s->nst);
}

void result_begin(struct run_result *res, const struct engine *e)
{
    const struct run_config *cfg = e->cfg;
    res->ntargets = e->nt;
    res->targets = xcalloc(e->nt, sizeof *res->targets);
    for (size_t i = 0; i < e->nt; i++) {
        struct run_target_result *r = &res->targets[i];
        target_result_init(r);
        const struct engine_target *et = &e->targets[i];
        snprintf(r->name, sizeof r->name, "%s", et->cfg->name);
        snprintf(r->url, sizeof r->url, "%s", et->cfg->url);
        snprintf(r->address, sizeof r->address, "%s", et->addr.text);
        r->resolve_ns = et->resolve_ns;
        r->planned_rate = cfg->open_loop ? (et->rate_from + et->rate_to) / 2 / run_shard_count(cfg) : 0;
        r->connections = et->clients;
        r->https = et->tls;
    }
    target_result_init(&res->all);
}

bool run_counts_hold(const struct run_counts *c)
{
    uint64_t done = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            done += c->outcome[o];
    uint64_t causes = 0;
    for (int k = 0; k < RUN_TC_COUNT; k++)
        causes += c->transport_cause[k];
    return c->planned == c->sent + c->dropped && c->sent == done && c->dropped == c->outcome[OUTCOME_DROPPED] &&
           causes == c->outcome[OUTCOME_TRANSPORT] && c->retries <= c->sent;
}

static void read_loadavg(double out[3])
{
    if (getloadavg(out, 3) != 3)
        out[0] = out[1] = out[2] = NAN;
}

void result_env_begin(struct run_env *env)
{
    snprintf(env->version, sizeof env->version, "%s", KNEE_VERSION);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(env->kernel, sizeof env->kernel, "%s %s %s", u.sysname, u.release, u.machine);
        snprintf(env->hostname, sizeof env->hostname, "%s", u.nodename);
    }
    env->cpus = sysconf(_SC_NPROCESSORS_ONLN);
    read_loadavg(env->loadavg_before);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(env->start_wall, sizeof env->start_wall, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(env->openssl, sizeof env->openssl, "%s", tls_library_version());
    snprintf(env->nghttp2, sizeof env->nghttp2, "%s", h2_library_version());
}

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

void thread_cpu_now(struct run_generator_cpu *c)
{
    memset(c, 0, sizeof *c);
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        c->user_s = tv_s(ru.ru_utime);
        c->sys_s = tv_s(ru.ru_stime);
    }
}

void thread_cpu_since(const struct run_generator_cpu *from, struct run_generator_cpu *out)
{
    struct run_generator_cpu now;
    thread_cpu_now(&now);
    /* the kernel's split of a thread's time into user and system is an estimate that it may
     * revise between two reads (its sum only grows): never a negative part */
    out->user_s = fmax(0, now.user_s - from->user_s);
    out->sys_s = fmax(0, now.sys_s - from->sys_s);
    out->wall_s = 0;
    out->threads = 1;
}

double run_generator_cpu_share(const struct run_generator_cpu *c)
{
    if (!c->threads || !(c->wall_s > 0))
        return NAN;
    return (c->user_s + c->sys_s) / c->wall_s;
}

/* The generator's threads' CPU summed over the wall time since the load threads started. */
static void generator_cpu(const struct engine *e, struct run_generator_cpu *g)
{
    memset(g, 0, sizeof *g);
    thread_cpu_since(&e->main_cpu0, g);
    for (uint32_t k = 0; k < e->nworkers; k++) {
        g->user_s += e->worker_cpu[k].user_s;
        g->sys_s += e->worker_cpu[k].sys_s;
        g->threads += e->worker_cpu[k].threads;
    }
    g->user_s += e->log_cpu.user_s;
    g->sys_s += e->log_cpu.sys_s;
    g->threads += e->log_cpu.threads;
    uint64_t now = clock_now_ns();
    g->wall_s = now > e->cpu_wall0_ns ? (double)(now - e->cpu_wall0_ns) / 1e9 : 0;
}

const char *run_describe_failures(const struct run_counts *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int o = 0; o < OUTCOME_COUNT && off + 1 < len; o++) {
        if (!run_outcome_failed((enum reqlog_outcome)o) || !c->outcome[o])
            continue;
        char n[32];
        off +=
            (size_t)snprintf(buf + off, len - off, "%s%s %s", off ? ", " : "",
                             reqlog_outcome_name((enum reqlog_outcome)o), units_fmt_count(c->outcome[o], n, sizeof n));
    }
    if (!buf[0])
        snprintf(buf, len,
                 !c->sent                       ? "nothing was sent"
                 : c->outcome[OUTCOME_REJECTED] ? "every answer was a rejection"
                                                : "every request was cancelled");
    return buf;
}

/* The timeline's counts by event time: the threads' per-interval counts (worker.c
 * count_events) replace the live ones, so the intervals inside the window add up to the
 * window's events. An event past the last interval (none is expected) gets an interval. */
static void timeline_by_event_time(const struct engine *e, struct run_result *res)
{
    size_t n = res->nticks;
    for (uint32_t k = 0; k < e->nworkers; k++)
        for (size_t i = n; i < e->workers[k].ntk; i++) {
            const struct ival_counts *x = &e->workers[k].tk[i];
            if (x->planned || x->sent || x->completed || x->dropped)
                n = i + 1;
        }
    if (n > res->nticks) {
        res->ticks = xrealloc(res->ticks, n * sizeof *res->ticks);
        for (size_t i = res->nticks; i < n; i++) {
            struct run_tick *tk = &res->ticks[i];
            memset(tk, 0, sizeof *tk);
            tk->start_s = i ? (double)engine_tick_end(e, i - 1) / 1e9 : 0;
            tk->length_s = (double)engine_tick_end(e, i) / 1e9 - tk->start_s;
            tk->p50_ms = tk->p99_ms = tk->max_ms = NAN;
        }
        res->nticks = n;
    }
    for (size_t i = 0; i < res->nticks; i++) {
        struct run_tick *tk = &res->ticks[i];
        tk->planned = tk->sent = tk->completed = tk->ok = tk->errors = tk->dropped = 0;
        for (uint32_t k = 0; k < e->nworkers; k++) {
            const struct worker *w = &e->workers[k];
            if (i >= w->ntk)
                continue;
            tk->planned += w->tk[i].planned;
            tk->sent += w->tk[i].sent;
            tk->completed += w->tk[i].completed;
            tk->ok += w->tk[i].ok;
            tk->errors += w->tk[i].errors;
            tk->dropped += w->tk[i].dropped;
        }
    }
}

void result_finish(struct engine *e, struct run_result *res)
{
    char failures[256];
    const struct run_config *cfg = e->cfg;
    struct rusage ru1;
    getrusage(RUSAGE_SELF, &ru1);
    res->env.cpu_user_s = tv_s(ru1.ru_utime) - tv_s(e->ru0.ru_utime);
    res->env.cpu_sys_s = tv_s(ru1.ru_stime) - tv_s(e->ru0.ru_stime);
    res->env.peak_rss_kb = ru1.ru_maxrss;
    generator_cpu(e, &res->env.gen_cpu);
    read_loadavg(res->env.loadavg_after);

    struct hdr late;
    hdr_init(&late, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    uint64_t plan_end = 0, finish = 0;
    bool slowed = false;
    for (size_t i = 0; i < e->nt; i++)
        run_events_init(&res->targets[i].events, UINT64_MAX, 0); /* merging widens it */
    for (uint32_t k = 0; k < e->nworkers; k++) {
        struct worker *w = &e->workers[k];
        if (w->plan_end_ns > plan_end)
            plan_end = w->plan_end_ns;
        if (w->finish_ns > finish)
            finish = w->finish_ns;
        slowed |= w->log_slowed;
        res->unreached += w->unreached;
        hdr_add(&late, &w->late);
        for (size_t i = 0; i < e->nt; i++) {
            struct target_rt *t = &w->t[i];
            struct run_target_result *r = &res->targets[i];
            run_events_merge(&r->events, &t->ev);
            run_counts_add(&r->counts, &t->counts[0]);
            run_counts_add(&r->warmup_counts, &t->counts[1]);
            for (int g = 0; g < RUN_GROUP_COUNT; g++)
                if (t->latency[g].counts) {
                    hdr_add(&r->latency[g], &t->latency[g]);
                    hdr_add(&r->latency_all, &t->latency[g]);
                }
            hdr_add(&r->service, &t->service);
            hdr_add(&r->ttfb, &t->ttfb);
            hdr_add(&r->lag, &t->lag);
            hdr_add(&r->connect, &t->connect);
            hdr_add(&r->tls, &t->tls);
            run_proto_counts_add(&r->pc, &t->pc);
            st_merge(r, t->st, t->nst);
        }
    }
    snprintf(res->all.name, sizeof res->all.name, "all");
    for (size_t i = 0; i < e->nt; i++)
        target_result_add(&res->all, &res->targets[i]);
    res->log_slowed = slowed;
    res->elapsed_s = finish > e->t0_ns ? (double)(finish - e->t0_ns) / 1e9 : 0;

    /* the measurement window: warm-up end .. end of the plan (the planned end; a closed loop
     * with --requests: when its last thread finished, the end of the timeline's last
     * interval; interrupted: when planning stopped) */
    uint64_t wend = e->window_end_ns;
    if (wend == UINT64_MAX)
        wend = finish; /* a closed loop with --requests: until its last thread finished */
    else if (res->interrupted && plan_end < wend)
        wend = plan_end;
    uint64_t ws_ns = cfg->warmup_ns, we_ns = wend > e->t0_ns ? wend - e->t0_ns : 0;
    if (we_ns < ws_ns)
        we_ns = ws_ns;
    res->window_start_s = (double)ws_ns / 1e9;
    res->window_end_s = (double)we_ns / 1e9;
    res->window_s = (double)(we_ns - ws_ns) / 1e9;
    /* rates: every event counted by its time against this window (load/rates.c) */
    run_events_init(&res->all.events, ws_ns, we_ns);
    for (size_t i = 0; i < e->nt; i++) {
        struct run_target_result *r = &res->targets[i];
        r->events.window_start_ns = ws_ns;
        r->events.window_end_ns = we_ns;
        run_events_merge(&res->all.events, &r->events);
        run_rates_of(&r->events, &r->rates);
    }
    res->all.events.window_start_ns = ws_ns;
    res->all.events.window_end_ns = we_ns;
    run_rates_of(&res->all.events, &res->all.rates);
    timeline_by_event_time(e, res);
    const struct run_counts *c = &res->all.counts;
    res->sent_on_schedule = c->planned ? (double)c->sent_on_time / (double)c->planned : NAN;
    uint64_t failed = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (run_outcome_failed((enum reqlog_outcome)o))
            failed += c->outcome[o];
    res->failed_share = c->sent ? (double)failed / (double)c->sent : NAN;
    res->no_ok = c->outcome[OUTCOME_OK] == 0;

    res->accounting_ok = run_counts_hold(&res->all.counts) && run_counts_hold(&res->all.warmup_counts);
    for (size_t i = 0; i < e->nt; i++)
        res->accounting_ok &=
            run_counts_hold(&res->targets[i].counts) && run_counts_hold(&res->targets[i].warmup_counts);

    /* warnings, most important first */
    if (!res->accounting_ok)
        result_warn(res, "BUG: the accounting identities do not hold (planned = sent + dropped; sent = outcomes); "
                         "please report this run");
    if (res->no_ok)
        result_warn(res, "FAILED: not one request succeeded (%s): there is no latency of a working service to report",
                    run_describe_failures(c, failures, sizeof failures));
    else if (res->failed_share >= RUN_HIGH_FAILED_SHARE)
        result_warn(res,
                    "ERRORS: %.1f%% of the requests sent failed (%s): the latency of all requests mixes "
                    "failures in; thresholds on latency use ok requests",
                    100 * res->failed_share, run_describe_failures(c, failures, sizeof failures));
    if (res->interrupted)
        result_warn(res, "interrupted: planning stopped early at %.2f s; the numbers cover what ran",
                    plan_end > e->t0_ns ? (double)(plan_end - e->t0_ns) / 1e9 : 0.0);
    if (cfg->open_loop && c->planned) {
        struct run_summary lag, lat;
        run_summarize(&res->all.lag, &lag);
        run_summarize(&res->all.latency_all, &lat);
        struct run_generator_input gin = {
            .open_loop = true,
            .sent_on_schedule = res->sent_on_schedule,
            .lag_p50_ms = lag.p50,
            .lag_p99_ms = lag.p99,
            .latency_p50_ms = lat.p50,
            .latency_p99_ms = lat.p99,
            .planned_rate = res->all.rates.planned,
            .lag_limit_ms = (double)cfg->lag_limit_ns / 1e6,
            .timer_slack_ms = (double)cfg->timer_slack_ns / 1e6,
        };
        if (run_generator_judge(&gin, &res->generator)) {
            res->generator_limited = true;
            char why[384] = "", n[32];
            size_t off = 0;
            if (c->queued)
                off += (size_t)snprintf(why + off, sizeof why - off,
                                        "; %s request%s waited for a connection (pool cap %u, at most %d "
                                        "connects at a time per thread)",
                                        units_fmt_count(c->queued, n, sizeof n), plural(c->queued), e->pool_cap,
                                        RUN_MAX_CONNECTING);
            if (c->dropped && off < sizeof why)
                off += (size_t)snprintf(why + off, sizeof why - off, "; %s dropped",
                                        units_fmt_count(c->dropped, n, sizeof n));
            if (late.total_count && off < sizeof why)
                snprintf(why + off, sizeof why - off, "; timer lateness p99 %.3f ms",
                         (double)hdr_value_at_percentile(&late, 99) / 1e6);
            result_warn(res, "GENERATOR-LIMITED: the generator, not the service, shaped this run: %s%s",
                        res->generator.why, why);
        }
    }
    char n[32];
    if (c->dropped) {
        uint64_t other = c->dropped - (res->unreached < c->dropped ? res->unreached : c->dropped);
        if (res->unreached)
            result_warn(res,
                        "%s planned request%s never sent (dropped): the generator had not reached %s when the "
                        "drain ended (--duration + --drain bound the run)",
                        units_fmt_count(res->unreached, n, sizeof n), res->unreached == 1 ? " was" : "s were",
                        res->unreached == 1 ? "it" : "them");
        if (other)
            result_warn(res, "%s planned request%s never sent (dropped)%s", units_fmt_count(other, n, sizeof n),
                        other == 1 ? " was" : "s were",
                        c->queue_overflow                 ? ": the wait queue overflowed"
                        : cfg->when_busy == RUN_BUSY_DROP ? ": every connection was busy (--when-busy drop)"
                                                          : ": still waiting for a connection when the drain ended");
    }
    uint64_t cancelled = c->outcome[OUTCOME_CANCELLED];
    if (cancelled)
        result_warn(res, "%s request%s still in flight when the drain ended and %s cancelled",
                    units_fmt_count(cancelled, n, sizeof n), cancelled == 1 ? " was" : "s were",
                    cancelled == 1 ? "was" : "were");
    if (c->conns_failed)
        result_warn(res, "%s connection attempt%s failed (refused, unreachable or out of descriptors)",
                    units_fmt_count(c->conns_failed, n, sizeof n), plural(c->conns_failed));
    if (c->conns_unsolicited)
        result_warn(res, "%s time%s the server sent bytes nobody asked for (e.g. more than its Content-Length)",
                    units_fmt_count(c->conns_unsolicited, n, sizeof n), plural(c->conns_unsolicited));
    uint64_t n_all = (uint64_t)res->all.latency_all.total_count;
    if (n_all && n_all < (uint64_t)(STATS_MIN_BEYOND / 0.01))
        result_note(res, "only %s latency sample%s: p99 rests on fewer than %d samples above it, p99.9 on none",
                    units_fmt_count(n_all, n, sizeof n), plural(n_all), STATS_MIN_BEYOND);
    else if (n_all && n_all < (uint64_t)(STATS_MIN_BEYOND / 0.001))
        result_note(res, "only %s latency samples: p99.9 rests on fewer than %d samples above it; read it as rough",
                    units_fmt_count(n_all, n, sizeof n), STATS_MIN_BEYOND);
    uint64_t warm_n = res->all.warmup_counts.planned;
    if (cfg->warmup_ns)
        result_note(res, "warm-up: %s request%s planned in the first %.3g s %s left out of these statistics%s",
                    units_fmt_count(warm_n, n, sizeof n), plural(warm_n), (double)cfg->warmup_ns / 1e9,
                    warm_n == 1 ? "is" : "are",
                    cfg->out_path ? (warm_n == 1 ? " (it is in --out)" : " (they are in --out)") : "");
    if (slowed)
        result_warn(res, "the request log writer could not keep up and held the load threads back: numbers may be "
                         "pessimistic (write --out to a faster disk)");
    hdr_release(&late);
}

void run_result_release(struct run_result *res)
{
    if (res->targets) {
        for (size_t i = 0; i < res->ntargets; i++)
            run_target_result_release(&res->targets[i]);
        free(res->targets);
        run_target_result_release(&res->all);
    }
    for (size_t i = 0; i < res->nwarnings; i++)
        free(res->warnings[i]);
    free(res->warnings);
    free(res->ticks);
    memset(res, 0, sizeof *res);
}
