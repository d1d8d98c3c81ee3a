/* The engine's part of a run record (record/record.h): the plan echoed into it, the per-thread
 * counters and histograms merged per target, the timeline by event time and the environment,
 * gathered on the thread that runs run_execute after the workers are joined; record_finish
 * (record/finish.c) then derives everything else, as it does for every producer. */
#include "load/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "record/stages.h"
#include "record/threshold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void record_config_from_run(struct record_config *c, const struct run_config *cfg)
{
    record_config_release(c);
    c->open_loop = cfg->plan.open_loop;
    c->arrivals = cfg->plan.arrivals;
    c->seed = cfg->plan.seed;
    c->rate = cfg->plan.rate > 0 ? cfg->plan.rate : 0;
    c->ramp = cfg->plan.ramp;
    c->ramp_from = cfg->plan.ramp_from;
    c->ramp_to = cfg->plan.ramp_to;
    c->nstages = cfg->plan.nstages;
    c->stages = c->nstages ? xcalloc(c->nstages, sizeof *c->stages) : NULL;
    for (size_t i = 0; i < c->nstages; i++)
        c->stages[i] = cfg->plan.stages[i];
    c->think_ns = cfg->plan.think_ns;
    c->duration_ns = cfg->plan.duration_ns;
    c->requests = cfg->plan.requests;
    c->timeout_ns = cfg->timeout_ns;
    c->drain_ns = cfg->drain_ns;
    c->warmup_ns = cfg->plan.warmup_ns;
    c->lag_limit_ns = cfg->lag_limit_ns;
    c->timer_slack_ns = cfg->timer_slack_auto ? 0 : cfg->timer_slack_ns;
    c->timer_slack_auto = cfg->timer_slack_auto;
    c->when_busy = cfg->when_busy;
    c->keepalive = cfg->keepalive;
    c->retry_stale = cfg->retry_stale;
    c->retry_stale_all = cfg->retry_stale_all;
    c->io = cfg->io;
    c->out_log = cfg->out_path != NULL;
    c->tls_insecure = cfg->tls_insecure;
    c->tls_no_resume = cfg->tls_no_resume;
    c->tls_cacert = dup_or_null(cfg->tls_cacert);
    c->tls_ciphers = dup_or_null(cfg->tls_ciphers);
    c->tls_min_version = cfg->tls_min_version;
    c->tls_max_version = cfg->tls_max_version;
    c->http = cfg->http;
    c->h2c = cfg->h2c;
    c->http3 = cfg->http3;
    c->streams = cfg->streams;
    c->requests_per_connection = cfg->requests_per_connection;
    c->expect_body = dup_or_null(cfg->expect_body);
    c->nrejects = cfg->nrejects;
    c->rejects = xcalloc(cfg->nrejects ? cfg->nrejects : 1, sizeof *c->rejects);
    for (size_t i = 0; i < cfg->nrejects; i++)
        c->rejects[i] = (struct run_reject){cfg->rejects[i].status, dup_or_null(cfg->rejects[i].body)};
    record_config_set_args(c, cfg->argc, cfg->argv); /* credentials redacted */
    record_setup_copy(&c->setup, cfg->setup);
    struct net_proxy px;
    if (cfg->proxy && net_proxy_parse(cfg->proxy, &px, NULL, 0) == 0) { /* its host:port alone */
        c->proxy = xstrdup(px.shown);
        net_proxy_release(&px);
    }
    c->local_addresses = dup_or_null(cfg->local_addresses);
    c->connect_rate = cfg->connect_rate > 0 ? cfg->connect_rate : 0;
    c->tls_cert = dup_or_null(cfg->tls_cert);
    c->tls_key = dup_or_null(cfg->tls_key);
    c->unix_socket = dup_or_null(cfg->unix_socket);
    c->connect_to = xcalloc(cfg->nconnect_to ? cfg->nconnect_to : 1, sizeof *c->connect_to);
    for (size_t i = 0; i < cfg->nconnect_to; i++)
        c->connect_to[i] = xstrdup(cfg->connect_to[i]);
    c->nconnect_to = cfg->nconnect_to;
}

int run_threshold_parse(const char *expr, const struct run_config *cfg, struct run_threshold *out, char *err,
                        size_t errlen)
{
    const char *names[RUN_MAX_TARGETS];
    size_t n = 0;
    for (size_t i = 0; cfg->plan.targets && i < cfg->plan.ntargets && n < RUN_MAX_TARGETS; i++)
        names[n++] = cfg->plan.targets[i].name;
    return record_threshold_parse_names(expr, names, n, out, err, errlen);
}

void result_begin(struct run_record *res, const struct engine *e)
{
    const struct run_config *cfg = e->cfg;
    record_config_from_run(&res->config, cfg);
    res->ntargets = e->nt;
    res->targets = xcalloc(e->nt, sizeof *res->targets);
    for (size_t i = 0; i < e->nt; i++) {
        struct run_target_result *r = &res->targets[i];
        record_target_init(r);
        const struct engine_target *et = &e->targets[i];
        snprintf(r->name, sizeof r->name, "%s", et->target->name);
        snprintf(r->url, sizeof r->url, "%s", et->target->url);
        snprintf(r->address, sizeof r->address, "%s", et->addr.text);
        r->resolve_ns = et->resolve_ns;
        r->planned_rate = plan_share_rate(&cfg->plan, et->share);
        r->own_rate = et->target->rate > 0 ? et->target->rate : 0;
        r->connections = et->share->clients;
        r->https = et->tls;
    }
    record_target_init(&res->all);
    res->nstages = cfg->plan.nstages;
    res->stages = record_stages_new(cfg->plan.stages, cfg->plan.nstages);
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

/* The timeline's counts by event time: the threads' per-interval counts
 * (account.c) replace the live ones, so the intervals inside the window add up to the
 * window's events. An event past the last interval (none is expected) gets an interval. */
static void timeline_by_event_time(const struct engine *e, struct run_record *res)
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

/* Every thread's totals added into its targets; the latest plan end and finish, and the
 * timers' lateness, across threads. */
static void merge_workers(struct engine *e, struct run_record *res, struct hdr *late, uint64_t *plan_end,
                          uint64_t *finish)
{
    *plan_end = *finish = 0;
    for (size_t i = 0; i < e->nt; i++)
        record_events_init(&res->targets[i].events, UINT64_MAX, 0); /* merging widens it */
    for (uint32_t k = 0; k < e->nworkers; k++) {
        struct worker *w = &e->workers[k];
        if (w->plan_end_ns > *plan_end)
            *plan_end = w->plan_end_ns;
        if (w->finish_ns > *finish)
            *finish = w->finish_ns;
        res->log_slowed |= w->log_slowed;
        res->unreached += w->unreached;
        hdr_add(late, &w->late);
        if (w->stg)
            record_stages_add(res->stages, w->stg, res->nstages);
        for (size_t i = 0; i < e->nt; i++) {
            struct target_rt *t = &w->t[i];
            struct run_target_result *r = &res->targets[i];
            record_events_merge(&r->events, &t->ev);
            record_counts_add(&r->counts, &t->counts[0]);
            record_counts_add(&r->warmup_counts, &t->counts[1]);
            record_status_add(&r->status, &t->status);
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
            record_proto_counts_add(&r->pc, &t->pc);
            record_server_timing_merge(r, t->st, t->nst);
            record_stream_add(&r->stream, &t->stream);
        }
    }
}

/* ns since t0 of an instant of the engine's clock (0 before t0; UINT64_MAX stays). */
static uint64_t since_t0(const struct engine *e, uint64_t t)
{
    return t == UINT64_MAX ? t : t > e->t0_ns ? t - e->t0_ns : 0;
}

/* A server that asks for a client certificate may refuse it, or its absence, with a 400 (nginx:
 * "No required SSL certificate was sent", "The SSL certificate error") rather than an alert:
 * when both happened, say so, since the statuses alone do not. */
static void client_cert_warning(const struct engine *e, struct run_record *res)
{
    uint64_t asked = 0, conns = 0, st400 = 0;
    for (size_t i = 0; i < res->ntargets; i++) {
        asked += res->targets[i].pc.tls_cert_requested;
        conns += res->targets[i].pc.tls_full + res->targets[i].pc.tls_resumed;
        st400 += res->targets[i].status.n[400 - RUN_STATUS_MIN];
    }
    if (!asked || !st400)
        return;
    if (!e->cfg->tls_cert)
        warn_add(&res->warnings, true,
                 "400 x%llu: the server asked for a client certificate on %llu of %llu TLS connections and the run "
                 "had none: give --cert FILE --key FILE (nginx answers 400 \"No required SSL certificate was sent\")",
                 (unsigned long long)st400, (unsigned long long)asked, (unsigned long long)conns);
    else
        warn_add(&res->warnings, true,
                 "400 x%llu: the server asked for a client certificate on %llu of %llu TLS connections and was sent "
                 "--cert %s: it may refuse it (nginx answers 400 \"The SSL certificate error\" for a certificate "
                 "its CA did not sign, or expired)",
                 (unsigned long long)st400, (unsigned long long)asked, (unsigned long long)conns, e->cfg->tls_cert);
}

void result_finish(struct engine *e, struct run_record *res)
{
    struct rusage ru1;
    getrusage(RUSAGE_SELF, &ru1);
    res->env.cpu_user_s = tv_s(ru1.ru_utime) - tv_s(e->ru0.ru_utime);
    res->env.cpu_sys_s = tv_s(ru1.ru_stime) - tv_s(e->ru0.ru_stime);
    res->env.peak_rss_kb = ru1.ru_maxrss;
    generator_cpu(e, &res->env.gen_cpu);
    read_loadavg(res->env.loadavg_after);

    struct hdr late;
    hdr_init(&late, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    uint64_t plan_end, finish;
    merge_workers(e, res, &late, &plan_end, &finish);
    if (e->timer_slack_auto) /* the slack the threads kept: what the generator verdict allows */
        for (uint32_t k = 0; k < e->nworkers; k++)
            if (e->workers[k].slack_max_ns > res->config.timer_slack_ns)
                res->config.timer_slack_ns = e->workers[k].slack_max_ns;
    entries_collect(e, res);
    timeline_by_event_time(e, res);
    struct record_finish_in in = {
        .plan_end_ns = since_t0(e, e->window_end_ns),
        .finish_ns = since_t0(e, finish),
        .stop_ns = since_t0(e, plan_end),
        .late_p99_ms = late.total_count ? (double)hdr_value_at_percentile(&late, 99) / 1e6 : NAN,
    };
    record_finish(res, &in);
    client_cert_warning(e, res);
    hdr_release(&late);
}
