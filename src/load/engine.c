/* run_execute: prepares the targets (parse, resolve once and time it, serialise the request,
 * take each one's share of the plan from plan_shares), starts the load threads, merges their
 * intervals every second on the calling thread, then hands their totals to result.c (the
 * merged result, the accounting identities, the warnings); run_dryrun stops after the
 * preparation. The checks are validate.c's, the plan's arithmetic plan/'s. */
#include "load/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "h3/h3.h"
#include "http/client.h"
#include "load/shard_hooks.h"
#include "load/uring.h"
#include "net/route.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

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

/* ------------------------------------------------------------------ preparation */

static int prepare_target(struct engine_target *et, const struct run_config *cfg, const struct net_route *route,
                          char *err, size_t errlen)
{
    const struct plan_target *tc = et->target;
    char why[256];
    int r = url_parse(tc->url, &et->url, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "target %s: %s: %s", tc->name, tc->url, why);
    et->tls = et->url.tls;
    et->h2_known = et->tls ? cfg->http == RUN_HTTP_2 : cfg->h2c;
    et->h2_able = et->tls ? cfg->http != RUN_HTTP_1 : cfg->h2c;
    et->h3 = et->tls && cfg->http3;
    r = net_route_resolve(route, et->url.host, et->url.port_str, &et->addr, &et->resolve_ns, why, sizeof why);
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
    if (tc->source) {
        r = variant_prepare(tc->source, cfg->keepalive, cfg->keepalive && cfg->requests_per_connection, et->h2_able,
                            why, sizeof why);
        if (r)
            return knee_fail(err, errlen, r, "target %s: %s", tc->name, why);
    }
    et->head = strcmp(method, "HEAD") == 0;
    et->stream_mode = cfg->stream_mode;
    et->log_gaps = outlog_wants_gaps(cfg);
    et->idempotent = http_method_idempotent(method);
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

uint64_t engine_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A thread's interval of --live numbers added to the slot's (under e->mu). */
static void ival_live_add(struct ival_live *to, const struct ival_live *from)
{
    for (size_t i = 0; i < OUTCOME_COUNT; i++)
        to->outcome[i] += from->outcome[i];
    for (size_t i = 0; i < RUN_PROGRESS_STATUS_MAX && from->status[i].code; i++)
        ival_live_status(to, from->status[i].code, from->status[i].count);
    to->status_other += from->status_other;
    to->late += from->late;
    if (from->lag_max_ns > to->lag_max_ns)
        to->lag_max_ns = from->lag_max_ns;
    to->cpu_ns += from->cpu_ns;
    if (from->cpu_ns > to->cpu_max_ns)
        to->cpu_max_ns = from->cpu_ns;
}

void engine_publish(struct worker *w, uint64_t end_ns)
{
    struct engine *e = w->e;
    uint64_t k = w->tick_index;
    uint64_t cpu_ns = engine_thread_cpu_ns(); /* once a second: the interval's CPU for --live */
    w->il.cpu_ns = cpu_ns > w->cpu_mark_ns ? cpu_ns - w->cpu_mark_ns : 0;
    w->cpu_mark_ns = cpu_ns;
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
        record_stream_add(&s->stream[i], &w->t[i].ival_stream);
        if (w->t[i].ival_max_ns > s->max_ns)
            s->max_ns = w->t[i].ival_max_ns;
    }
    s->c.planned += w->ic.planned;
    s->c.sent += w->ic.sent;
    s->c.completed += w->ic.completed;
    s->c.ok += w->ic.ok;
    s->c.errors += w->ic.errors;
    s->c.dropped += w->ic.dropped;
    ival_live_add(&s->l, &w->il);
    memset(&w->il, 0, sizeof w->il); /* handed over: the thread's next interval starts from zero */
    s->c.refused += w->ic.refused;
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

/* run_progress's --live fields from slot s (p's interval already set). */
static void progress_live(const struct engine *e, const struct ival_slot *s, struct run_progress *p)
{
    memcpy(p->outcome, s->l.outcome, sizeof p->outcome);
    memcpy(p->status, s->l.status, sizeof p->status);
    p->status_other = s->l.status_other;
    p->late = s->l.late;
    p->lag_max_ms = s->c.sent ? (double)s->l.lag_max_ns / 1e6 : NAN;
    p->lag_limit_ms = (double)(e->lag_limit_ns + e->timer_slack_ns) / 1e6;
    double len_ns = p->length_s * 1e9;
    p->cpu_cores = (double)s->l.cpu_ns / len_ns;
    p->cpu_busiest = (double)s->l.cpu_max_ns / len_ns;
    p->threads = e->nworkers;
    p->warmup = e->t0_ns + (uint64_t)llround(p->start_s * 1e9) < e->warmup_end_ns; /* intervals are cut there */
}

/* run_config.refused_end_ns: after each second, whether every request that ended so far ended
 * in a refused connection; when that still holds at refused_end_ns, stop planning as a stop
 * request would, through the engine's own level (the caller's handle stays untouched: a
 * sequence of runs sharing it goes on). */
static void refused_check(struct engine *e, const struct ival_counts *c, double end_s)
{
    if (!e->refused_armed)
        return;
    if (c->completed != c->refused) {
        e->refused_armed = false; /* something answered, or failed another way: the target is there */
        return;
    }
    e->refused_seen += c->refused;
    if (end_s * 1e9 < (double)e->cfg->refused_end_ns || !e->refused_seen)
        return;
    e->refused_armed = false;
    e->refused_end = true;
    atomic_store(&e->self_stop, 1);
    for (uint32_t i = 0; i < e->nworkers; i++)
        loop_wake(&e->workers[i].loop);
}

/* The main thread's job while workers run: take each second as soon as every thread has
 * published it, hand it to the callbacks and keep it for the timeline. */
static void consume_intervals(struct engine *e, struct run_record *res)
{
    const struct run_config *cfg = e->cfg;
    struct hdr all;
    hdr_init(&all, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    size_t cap = 0;
    double total_s = cfg->plan.duration_ns ? (double)cfg->plan.duration_ns / 1e9 : 0;
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
            if (cfg->on_stream_interval && s->stream[i].events)
                cfg->on_stream_interval(cfg->stream_interval_ctx, i, start_s, len_s, &s->stream[i]);
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
            progress_live(e, s, &p);
            cfg->on_progress(cfg->progress_ctx, &p);
        }
        refused_check(e, &s->c, start_s + len_s);
        live_tick(e, start_s + len_s);
        pthread_mutex_lock(&e->mu);
        for (size_t i = 0; i < e->nt; i++) {
            hdr_reset(&s->lat[i]);
            record_stream_reset(&s->stream[i]);
        }
        memset(&s->c, 0, sizeof s->c);
        memset(&s->l, 0, sizeof s->l);
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
    entries_release(e);
    if (e->workers) {
        for (uint32_t i = 0; i < e->nworkers; i++)
            worker_release(&e->workers[i]);
        free(e->workers);
    }
    for (int s = 0; s < IVAL_SLOTS; s++) {
        if (e->slots[s].lat) {
            for (size_t i = 0; i < e->nt; i++) {
                hdr_release(&e->slots[s].lat[i]);
                record_stream_release(&e->slots[s].stream[i]);
            }
            free(e->slots[s].lat);
            free(e->slots[s].stream);
        }
    }
    route_release(e);
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
    free(e->shares);
    free(e->published);
    free(e->done);
    free(e->worker_cpu);
    tls_ctx_free(e->tls);
    h3_tls_free(e->h3tls);
}

/* One client context for the run, shared read-only by every thread; what OpenSSL refuses here
 * (--cacert, --ciphers) is bad input. */
static int prepare_tls(struct engine *e, const struct run_config *cfg, char *err, size_t errlen)
{
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
        .cert_file = cfg->tls_cert,
        .key_file = cfg->tls_key,
    };
    return tls_client_new(&tc, &e->tls, err, errlen);
}

/* Every connection is a file descriptor: raise the limit as far as allowed; the open loop's
 * pool shrinks to fit (a warning says so), the closed loop's connections must fit. */
static int prepare_descriptors(struct engine *e, char *err, size_t errlen)
{
    uint64_t T = e->nworkers, clients = 0; /* closed loop: connections (groups of --streams clients) */
    for (size_t i = 0; i < e->nt; i++)
        clients += e->shares[i].groups;
    bool open = e->cfg->plan.open_loop;
    uint64_t need = (open ? e->pool_cap : clients) + 64 + 4 * T;
    uint64_t have = 0;
    net_raise_nofile(need, &have);
    e->fd_limit = have;
    e->pool_asked = e->pool_cap;
    if (have < need) {
        if (!open)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "%llu connections need %llu file descriptors but the limit is %llu (raise ulimit -n)",
                             (unsigned long long)clients, (unsigned long long)need, (unsigned long long)have);
        e->pool_cap = have > 64 + 4 * T ? (uint32_t)(have - 64 - 4 * T) : (uint32_t)T;
    }
    return 0;
}

/* Everything before the threads, shared by run_execute and run_dryrun: check cfg, parse,
 * resolve and serialise each target, take each target's share of the plan (plan_shares), choose
 * the thread count and the connection pool within the file descriptor limit (raised as far as
 * allowed). On failure the caller still calls engine_release. */
static int engine_prepare(struct engine *e, const struct run_config *cfg, char *err, size_t errlen)
{
    int rc = run_validate(cfg, err, errlen);
    if (rc)
        return rc;
    const struct plan *p = &cfg->plan;
    e->cfg = cfg;
    e->nt = p->ntargets;
    e->rpc = cfg->requests_per_connection ? cfg->requests_per_connection : cfg->keepalive ? UINT32_MAX : 1;
    e->h2_streams = cfg->streams ? cfg->streams : RUN_H2_DEFAULT_STREAMS;
    e->group_streams = !p->open_loop && cfg->streams ? cfg->streams : 1;
    e->targets = xcalloc(e->nt, sizeof *e->targets);
    bool any_tls = false;
    struct net_route route; /* --unix-socket, --connect-to: only the addresses resolved here change */
    if ((rc = net_route_init(&route, cfg->unix_socket, cfg->connect_to, cfg->nconnect_to, err, errlen)) != 0)
        return rc;
    for (size_t i = 0; i < e->nt && rc == 0; i++) {
        e->targets[i].target = &p->targets[i];
        rc = prepare_target(&e->targets[i], cfg, &route, err, errlen);
        any_tls |= e->targets[i].tls;
    }
    net_route_release(&route);
    if (rc)
        return rc;
    if ((rc = route_prepare(e, cfg, err, errlen)) != 0) /* --proxy, --local-address */
        return rc;
    if (any_tls && (rc = prepare_tls(e, cfg, err, errlen)) != 0)
        return rc;
    if ((rc = entries_prepare(e, err, errlen)) != 0)
        return rc;
    if (cfg->http3 && (rc = h3_tls_new(cfg->tls_cacert, cfg->tls_insecure, &e->h3tls, err, errlen)) != 0)
        return rc;
    if (cfg->http3 && cfg->tls_cert &&
        (rc = h3_tls_set_client_cert(e->h3tls, cfg->tls_cert, cfg->tls_key, err, errlen)) != 0)
        return rc;
    rc = choose_io(e, cfg, any_tls, err, errlen);
    if (rc)
        return rc;
    e->shares = xcalloc(e->nt ? e->nt : 1, sizeof *e->shares);
    for (size_t i = 0; i < e->nt; i++)
        e->targets[i].share = &e->shares[i];
    rc = plan_shares(p, e->group_streams, e->shares, err, errlen);
    if (rc)
        return rc;
    e->nworkers = plan_threads(p, cfg->threads, e->shares);
    route_pace_init(e, cfg); /* --connect-rate: each thread's share */
    e->pool_cap = plan_pool(p);
    e->timeout_ns = cfg->timeout_ns;
    e->drain_ns = cfg->drain_ns;
    e->spin_ns = cfg->spin_ns;
    e->lag_limit_ns = cfg->lag_limit_ns ? cfg->lag_limit_ns : RUN_DEFAULT_LAG_LIMIT_NS;
    e->timer_slack_auto = p->open_loop && cfg->timer_slack_auto;
    e->timer_slack_ns = e->timer_slack_auto ? RUN_AUTO_SLACK_MAX_NS : p->open_loop ? cfg->timer_slack_ns : 0;
    e->defer_reads = p->open_loop && e->io == RUN_IO_EPOLL && !cfg->unix_socket && !cfg->prompt_reads &&
                     cfg->stream_mode != HTTP_STREAM_SSE && cfg->stream_mode != HTTP_STREAM_CHUNKS;
    for (size_t i = 0; i < e->nt; i++)
        e->defer_reads &= !e->targets[i].tls && !e->targets[i].h2_known && !e->targets[i].h3;
    return prepare_descriptors(e, err, errlen);
}

/* The threads and their interval slots, before any starts (on failure, what was set up stays
 * for engine_release). */
static int engine_threads_init(struct engine *e, char *err, size_t errlen)
{
    uint32_t T = e->nworkers;
    for (int s = 0; s < IVAL_SLOTS; s++) {
        e->slots[s].lat = xcalloc(e->nt, sizeof *e->slots[s].lat);
        e->slots[s].stream = xcalloc(e->nt, sizeof *e->slots[s].stream);
        for (size_t i = 0; i < e->nt; i++)
            hdr_init(&e->slots[s].lat[i], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    }
    e->published = xcalloc(T, sizeof *e->published);
    e->done = xcalloc(T, sizeof *e->done);
    e->workers = xcalloc(T, sizeof *e->workers);
    for (uint32_t i = 0; i < T; i++) {
        int rc = worker_init(&e->workers[i], e, i);
        if (rc) {
            for (uint32_t j = 0; j < i; j++)
                worker_release(&e->workers[j]);
            free(e->workers);
            e->workers = NULL;
            return knee_fail(err, errlen, rc, "event loop: %s", knee_strerror(rc));
        }
    }
    e->worker_cpu = xcalloc(T, sizeof *e->worker_cpu);
    return 0;
}

/* Once every thread waits at the gate (under e->mu): t0 a little ahead, so every thread has
 * armed its timers before the first send (or the shared start instant), the warm-up's and the
 * plan's ends, the measurement window (plan_window_ns), the cutoff and the interval edges. */
static void engine_window(struct engine *e, struct run_record *res)
{
    const struct plan *p = &e->cfg->plan;
    e->t0_ns = clock_now_ns() + 2 * NS_PER_MS;
    shard_start(e, res); /* --start-at: t0 is the shared instant */
    e->warmup_end_ns = e->t0_ns + p->warmup_ns;
    e->plan_end_ns = p->duration_ns ? e->t0_ns + p->duration_ns : UINT64_MAX;
    uint64_t window_ns = plan_window_ns(p, e->shares);
    e->window_end_ns = window_ns == UINT64_MAX ? UINT64_MAX : e->t0_ns + window_ns;
    /* a duration run ends by plan end + drain: what the generator has not sent by then is
     * dropped (accounted and logged), so a plan it cannot keep cannot stretch the run */
    e->cutoff_ns = e->plan_end_ns == UINT64_MAX ? UINT64_MAX : e->plan_end_ns + e->drain_ns;
    /* the window's edges cut the timeline's seconds */
    uint64_t edges[2] = {p->warmup_ns, e->window_end_ns == UINT64_MAX ? 0 : e->window_end_ns - e->t0_ns};
    for (int i = 0; i < 2; i++)
        if (edges[i] % NS_PER_S && (e->ntick_extra == 0 || e->tick_extra[e->ntick_extra - 1] != edges[i]))
            e->tick_extra[e->ntick_extra++] = edges[i];
    if (e->ntick_extra == 2 && e->tick_extra[0] > e->tick_extra[1]) {
        uint64_t x = e->tick_extra[0];
        e->tick_extra[0] = e->tick_extra[1];
        e->tick_extra[1] = x;
    }
}

/* Start the load threads and open the gate once all are ready (engine_window in between).
 * When a thread cannot be created, those started are sent home and joined: an error. */
static int engine_start(struct engine *e, struct run_record *res, char *err, size_t errlen)
{
    getrusage(RUSAGE_SELF, &e->ru0);
    thread_cpu_now(&e->main_cpu0);
    e->cpu_wall0_ns = clock_now_ns();
    if (stop_attach(e->stop, e))
        return knee_fail(err, errlen, KNEE_EINVAL, "run_config.stop: the stop handle is in use by another run");
    /* workers take no signals: Ctrl-C reaches the caller's handler, which calls
     * run_stop_request() and wakes their loops */
    uint32_t T = e->nworkers, started = 0;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int pr = 0;
    for (; started < T; started++)
        if ((pr = pthread_create(&e->workers[started].tid, NULL, worker_main, &e->workers[started])) != 0)
            break;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_lock(&e->mu);
    while (e->nready < started)
        pthread_cond_wait(&e->cv, &e->mu);
    if (started < T) {
        /* the threads that did start are waiting at the gate: send them home */
        e->aborted = true;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
        for (uint32_t i = 0; i < started; i++)
            pthread_join(e->workers[i].tid, NULL);
        stop_detach(e->stop);
        return knee_fail(err, errlen, -pr, "cannot start load thread %u of %u: %s", started + 1, T, strerror(pr));
    }
    engine_window(e, res);
    e->go = true;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->mu);
    return 0;
}

/* The warning of an early end for refused connections, in place of "interrupted": the
 * addresses that refused (up to 3). */
static void refused_say(struct engine *e, struct run_record *res)
{
    char who[256] = "";
    size_t off = 0, named = 0;
    for (size_t i = 0; i < res->ntargets && i < e->nt && off < sizeof who; i++) {
        const struct run_counts *c = &res->targets[i].counts, *w = &res->targets[i].warmup_counts;
        if (!c->transport_cause[RUN_TC_REFUSED] && !w->transport_cause[RUN_TC_REFUSED])
            continue;
        if (strstr(who, e->targets[i].addr.text)) /* several targets on one address */
            continue;
        if (named++ == 3) {
            snprintf(who + off, sizeof who - off, ", ...");
            break;
        }
        off += (size_t)snprintf(who + off, sizeof who - off, "%s%s", off ? ", " : "", e->targets[i].addr.text);
    }
    if (e->proxy) /* every connection went to the proxy */
        snprintf(who, sizeof who, "the proxy %.200s", e->proxy->shown);
    record_stopped_on_purpose(
        res, "stopped early after %.3g s: connection refused by %s: is the server up? (--keep-going runs on)",
        (double)e->cfg->refused_end_ns / 1e9, who[0] ? who : "the target");
}

/* After the last interval: join the threads, close the request log, say what the threads could
 * not do (io_uring, a fatal error), then the result and the shard's and the live endpoint's
 * last words. */
static void engine_collect(struct engine *e, struct run_record *res)
{
    const struct run_config *cfg = e->cfg;
    uint32_t T = e->nworkers;
    for (uint32_t i = 0; i < T; i++)
        pthread_join(e->workers[i].tid, NULL);
    stop_detach(e->stop);
    res->interrupted = atomic_load(&e->stop->level) > 0 || e->refused_end;
    if (e->log) {
        int lr = outlog_close(e->log, &e->log_cpu);
        e->log = NULL;
        if (lr) {
            res->out_error = lr;
            warn_add(&res->warnings, true, "--out %s: writing failed: %s", cfg->out_path, knee_strerror(lr));
        }
    }
    res->io = e->io;
    uint32_t deferred_off = atomic_load(&e->deferred_off);
    /* the stamped row timed every read of a thread that kept it (held or not) */
    res->reads_deferred = e->defer_reads && deferred_off < T;
    if (e->defer_reads && deferred_off)
        warn_add(&res->warnings, false,
                 "%u of %u load threads read a response without the kernel's receive timestamp and read promptly "
                 "from then on (that read's times may include up to %g ms of deliberate delay)",
                 deferred_off, T, (double)WORKER_HOLD_MAX_NS / 1e6);
    uint32_t ring_failed = atomic_load(&e->ring_failed);
    if (ring_failed == T) {
        res->io = RUN_IO_EPOLL;
        warn_add(&res->warnings, true, "--io %s: no load thread could set up its io_uring: the run used epoll",
                 record_io_name(cfg->io));
    } else if (ring_failed) {
        warn_add(&res->warnings, true, "--io %s: %u of %u load threads could not set up their io_uring and used epoll",
                 record_io_name(cfg->io), ring_failed, T);
    }
    for (uint32_t i = 0; i < T; i++)
        if (e->workers[i].fatal)
            warn_add(&res->warnings, true, "load thread %u stopped early: %s", i, knee_strerror(e->workers[i].fatal));
    result_finish(e, res);
    if (e->refused_end && atomic_load(&e->stop->level) == 0)
        refused_say(e, res);
    shard_finish(e, res);
    live_final(e, res);
}

int run_execute(const struct run_config *cfg, struct run_record *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    if (err && errlen)
        err[0] = '\0';
    struct engine e;
    memset(&e, 0, sizeof e);
    struct run_stop own_stop; /* without a handle from the caller, nobody can stop the run */
    run_stop_init(&own_stop);
    e.stop = cfg->stop ? cfg->stop : &own_stop;
    e.refused_armed = cfg->refused_end_ns > 0;
    atomic_init(&e.self_stop, 0);
    result_env_begin(&res->env);
    int rc = engine_prepare(&e, cfg, err, errlen);
    if (rc == 0)
        rc = live_init(&e, err, errlen);
    if (rc)
        goto out;
    if (e.pool_cap < e.pool_asked)
        warn_add(&res->warnings, true, "the connection pool is capped at %u (file descriptor limit %llu; asked for %u)",
                 e.pool_cap, (unsigned long long)e.fd_limit, e.pool_asked);
    res->threads = e.nworkers;
    res->pool_cap = e.pool_cap;
    if (cfg->out_path && (rc = outlog_open(&e.log, cfg->out_path, &e, err, errlen)) != 0)
        goto out;
    pthread_mutex_init(&e.mu, NULL);
    pthread_cond_init(&e.cv, NULL);
    rc = engine_threads_init(&e, err, errlen);
    if (rc == 0)
        rc = engine_start(&e, res, err, errlen);
    if (rc == 0) {
        result_begin(res, &e);
        consume_intervals(&e, res);
        engine_collect(&e, res);
    }
    pthread_mutex_destroy(&e.mu);
    pthread_cond_destroy(&e.cv);
out:
    if (e.log)
        outlog_abort(e.log);
    engine_release(&e);
    if (rc)
        record_release(res);
    return rc;
}

/* ------------------------------------------------------------------ dry run */

int run_dryrun(const struct run_config *cfg, struct run_dryrun *dry, char *err, size_t errlen)
{
    memset(dry, 0, sizeof *dry);
    if (err && errlen)
        err[0] = '\0';
    struct engine e;
    memset(&e, 0, sizeof e);
    int rc = engine_prepare(&e, cfg, err, errlen);
    if (rc)
        goto out;
    dry->ntargets = e.nt;
    dry->targets = xcalloc(e.nt, sizeof *dry->targets);
    struct run_dryrun_target *all = &dry->all;
    snprintf(all->name, sizeof all->name, "all");
    all->planned_exact = true;
    for (size_t i = 0; i < e.nt; i++) {
        const struct engine_target *et = &e.targets[i];
        struct run_dryrun_target *pt = &dry->targets[i];
        snprintf(pt->name, sizeof pt->name, "%s", et->target->name);
        snprintf(pt->url, sizeof pt->url, "%s", et->target->url);
        snprintf(pt->address, sizeof pt->address, "%s", et->addr.text);
        pt->resolve_ns = et->resolve_ns;
        pt->request_bytes = et->target->source ? 0 : et->req_len; /* a source's requests differ: none */
        struct plan_expect x;
        plan_expected(&cfg->plan, et->share, &x);
        pt->rate_from = x.rate_from;
        pt->rate_to = x.rate_to;
        pt->connections = et->share->clients;
        pt->planned = x.planned;
        pt->warmup_planned = x.warmup_planned;
        pt->planned_exact = x.exact;
        all->rate_from += pt->rate_from;
        all->rate_to += pt->rate_to;
        all->connections += pt->connections;
        all->planned += pt->planned;
        all->warmup_planned += pt->warmup_planned;
        all->planned_exact &= pt->planned_exact;
    }
    dry->threads = e.nworkers;
    dry->pool_cap = e.pool_cap;
    dry->pool_asked = e.pool_asked;
    dry->fd_limit = e.fd_limit;
    dry->io = e.io; /* choose_io's answer: --io auto resolved, --io uring probed */
out:
    engine_release(&e);
    return rc;
}

void run_dryrun_release(struct run_dryrun *dry)
{
    free(dry->targets);
    memset(dry, 0, sizeof *dry);
}
