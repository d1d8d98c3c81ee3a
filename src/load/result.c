/* The result of a run: the per-thread counters and histograms merged into struct run_result
 * (per target and across targets), the accounting identities checked, the rates over the
 * measurement window, the warnings (most important first) and the environment record.
 * Called by engine.c on the thread that runs run_execute, after the workers are joined. */
#include "load/internal.h"

#include "core/err.h"
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

static void counts_add(struct run_counts *d, const struct run_counts *s)
{
    d->planned += s->planned;
    d->sent += s->sent;
    d->dropped += s->dropped;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        d->outcome[o] += s->outcome[o];
    d->sent_on_time += s->sent_on_time;
    d->queued += s->queued;
    d->queue_overflow += s->queue_overflow;
    d->bytes_in += s->bytes_in;
    d->conns_opened += s->conns_opened;
    d->conns_failed += s->conns_failed;
    d->conns_closed_by_peer += s->conns_closed_by_peer;
    d->conns_unsolicited += s->conns_unsolicited;
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
}

static void target_result_release(struct run_target_result *r)
{
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_release(&r->latency[g]);
    hdr_release(&r->latency_all);
    hdr_release(&r->service);
    hdr_release(&r->ttfb);
    hdr_release(&r->lag);
    hdr_release(&r->connect);
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
    counts_add(&d->counts, &s->counts);
    counts_add(&d->warmup_counts, &s->warmup_counts);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_add(&d->latency[g], &s->latency[g]);
    hdr_add(&d->latency_all, &s->latency_all);
    hdr_add(&d->service, &s->service);
    hdr_add(&d->ttfb, &s->ttfb);
    hdr_add(&d->lag, &s->lag);
    hdr_add(&d->connect, &s->connect);
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
    }
    target_result_init(&res->all);
}

bool run_counts_hold(const struct run_counts *c)
{
    uint64_t done = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            done += c->outcome[o];
    return c->planned == c->sent + c->dropped && c->sent == done && c->dropped == c->outcome[OUTCOME_DROPPED];
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
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

void result_finish(struct engine *e, struct run_result *res)
{
    const struct run_config *cfg = e->cfg;
    struct rusage ru1;
    getrusage(RUSAGE_SELF, &ru1);
    res->env.cpu_user_s = tv_s(ru1.ru_utime) - tv_s(e->ru0.ru_utime);
    res->env.cpu_sys_s = tv_s(ru1.ru_stime) - tv_s(e->ru0.ru_stime);
    res->env.peak_rss_kb = ru1.ru_maxrss;
    read_loadavg(res->env.loadavg_after);

    struct hdr late;
    hdr_init(&late, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    uint64_t plan_end = 0, finish = 0;
    bool slowed = false;
    for (uint32_t k = 0; k < e->nworkers; k++) {
        struct worker *w = &e->workers[k];
        if (w->plan_end_ns > plan_end)
            plan_end = w->plan_end_ns;
        if (w->finish_ns > finish)
            finish = w->finish_ns;
        slowed |= w->log_slowed;
        hdr_add(&late, &w->late);
        for (size_t i = 0; i < e->nt; i++) {
            struct target_rt *t = &w->t[i];
            struct run_target_result *r = &res->targets[i];
            counts_add(&r->counts, &t->counts[0]);
            counts_add(&r->warmup_counts, &t->counts[1]);
            for (int g = 0; g < RUN_GROUP_COUNT; g++)
                if (t->latency[g].counts) {
                    hdr_add(&r->latency[g], &t->latency[g]);
                    hdr_add(&r->latency_all, &t->latency[g]);
                }
            hdr_add(&r->service, &t->service);
            hdr_add(&r->ttfb, &t->ttfb);
            hdr_add(&r->lag, &t->lag);
            hdr_add(&r->connect, &t->connect);
            st_merge(r, t->st, t->nst);
        }
    }
    snprintf(res->all.name, sizeof res->all.name, "all");
    for (size_t i = 0; i < e->nt; i++)
        target_result_add(&res->all, &res->targets[i]);
    res->log_slowed = slowed;
    res->elapsed_s = finish > e->t0_ns ? (double)(finish - e->t0_ns) / 1e9 : 0;

    /* the measurement window: warm-up end .. end of planning */
    uint64_t wend = e->window_end_ns;
    if (!cfg->open_loop || wend == UINT64_MAX || (res->interrupted && plan_end < wend))
        wend = plan_end;
    res->window_s = wend > e->warmup_end_ns ? (double)(wend - e->warmup_end_ns) / 1e9 : 0;
    const struct run_counts *c = &res->all.counts;
    double win = res->window_s > 0 ? res->window_s : NAN;
    res->planned_rate = (double)c->planned / win;
    res->sent_rate = (double)c->sent / win;
    uint64_t completed = c->sent - c->outcome[OUTCOME_CANCELLED];
    res->completed_rate = (double)completed / win;
    res->goodput_rate = (double)c->outcome[OUTCOME_OK] / win;
    res->send_ratio = c->planned ? (double)c->sent_on_time / (double)c->planned : NAN;

    res->accounting_ok = run_counts_hold(&res->all.counts) && run_counts_hold(&res->all.warmup_counts);
    for (size_t i = 0; i < e->nt; i++)
        res->accounting_ok &=
            run_counts_hold(&res->targets[i].counts) && run_counts_hold(&res->targets[i].warmup_counts);

    /* warnings, most important first */
    if (!res->accounting_ok)
        result_warn(res, "BUG: the accounting identities do not hold (planned = sent + dropped; sent = outcomes); "
                         "please report this run");
    if (res->interrupted)
        result_warn(res, "interrupted: planning stopped early at %.2f s; the numbers cover what ran",
                    plan_end > e->t0_ns ? (double)(plan_end - e->t0_ns) / 1e9 : 0.0);
    if (cfg->open_loop && c->planned) {
        struct run_summary lag;
        run_summarize(&res->all.lag, &lag);
        double lag_limit_ms = (double)e->lag_limit_ns / 1e6;
        bool short_send = res->send_ratio < RUN_SEND_RATE_FLOOR;
        bool late_send = lag.count && lag.p99 > lag_limit_ms;
        if (short_send || late_send) {
            res->generator_limited = true;
            char why[384] = "";
            size_t off = 0;
            if (c->queued)
                off += (size_t)snprintf(why + off, sizeof why - off,
                                        "; %llu requests waited for a connection (pool cap %u, at most %d "
                                        "connects at a time per thread)",
                                        (unsigned long long)c->queued, e->pool_cap, RUN_MAX_CONNECTING);
            if (c->dropped)
                off += (size_t)snprintf(why + off, sizeof why - off, "; %llu dropped", (unsigned long long)c->dropped);
            if (late.total_count && off < sizeof why)
                snprintf(why + off, sizeof why - off, "; timer lateness p99 %.3f ms",
                         (double)hdr_value_at_percentile(&late, 99) / 1e6);
            result_warn(res,
                        "GENERATOR-LIMITED: the generator, not the service, shaped this run: sent %.1f%% of planned "
                        "requests on time (floor %.0f%%), lag p99 %.3f ms (limit %.3f ms)%s",
                        100 * res->send_ratio, 100 * RUN_SEND_RATE_FLOOR, lag.p99, lag_limit_ms, why);
        }
    }
    if (c->dropped)
        result_warn(res, "%llu planned requests were never sent (dropped)%s", (unsigned long long)c->dropped,
                    c->queue_overflow                 ? ": the wait queue overflowed"
                    : cfg->when_busy == RUN_BUSY_DROP ? ": every connection was busy (--when-busy drop)"
                                                      : ": still waiting for a connection when the drain ended");
    if (c->outcome[OUTCOME_CANCELLED])
        result_warn(res, "%llu requests were still in flight when the drain ended and were cancelled",
                    (unsigned long long)c->outcome[OUTCOME_CANCELLED]);
    if (c->conns_failed)
        result_warn(res, "%llu connection attempts failed (refused, unreachable or out of descriptors)",
                    (unsigned long long)c->conns_failed);
    if (c->conns_unsolicited)
        result_warn(res, "%llu times the server sent bytes nobody asked for (e.g. more than its Content-Length)",
                    (unsigned long long)c->conns_unsolicited);
    uint64_t n_all = (uint64_t)res->all.latency_all.total_count;
    if (n_all && n_all < (uint64_t)(STATS_MIN_BEYOND / 0.01))
        result_note(res, "only %llu latency samples: p99 rests on fewer than %d samples above it, p99.9 on none",
                    (unsigned long long)n_all, STATS_MIN_BEYOND);
    else if (n_all && n_all < (uint64_t)(STATS_MIN_BEYOND / 0.001))
        result_note(res, "only %llu latency samples: p99.9 rests on fewer than %d samples above it; read it as rough",
                    (unsigned long long)n_all, STATS_MIN_BEYOND);
    uint64_t warm_n = res->all.warmup_counts.planned;
    if (cfg->warmup_ns)
        result_note(res, "warm-up: %llu requests planned in the first %.3g s are left out of these statistics%s",
                    (unsigned long long)warm_n, (double)cfg->warmup_ns / 1e9,
                    cfg->out_path ? " (they are in --out)" : "");
    if (slowed)
        result_warn(res, "the request log writer could not keep up and held the load threads back: numbers may be "
                         "pessimistic (write --out to a faster disk)");
    hdr_release(&late);
}

void run_result_release(struct run_result *res)
{
    if (res->targets) {
        for (size_t i = 0; i < res->ntargets; i++)
            target_result_release(&res->targets[i]);
        free(res->targets);
        target_result_release(&res->all);
    }
    for (size_t i = 0; i < res->nwarnings; i++)
        free(res->warnings[i]);
    free(res->warnings);
    free(res->ticks);
    memset(res, 0, sizeof *res);
}
