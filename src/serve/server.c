/* knee serve's life: start (bind, the loop, the pipeline's timers and CPU workers, the loop
 * thread), the Date header refreshed every second with the null target's prebuilt responses,
 * graceful drain and stop, and the counters; the public API of serve/serve.h. Connections
 * are conn.c, the request pipeline work.c, the structures serve/internal.h. */
#include "serve/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "serve/listen.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char null_body[] = "ok";

/* ---- the Date header and the null target's responses ------------------------------------ */

static void build_null(struct serve_handle *s)
{
    for (int v = 0; v < 2; v++) {
        size_t n = http_response_head(s->null_resp[v], sizeof s->null_resp[v] - sizeof null_body, 200, s->date,
                                      "text/plain", sizeof null_body - 1, s->alt_svc[0] ? s->alt_svc : NULL, v == 1);
        memcpy(s->null_resp[v] + n, null_body, sizeof null_body - 1);
        s->null_head_len[v] = n;
        s->null_len[v] = n + sizeof null_body - 1;
    }
}

static void on_date_timer(struct loop *loop, struct loop_timer *t)
{
    struct serve_handle *s = t->data;
    uint64_t wall = clock_wall_ns();
    http_date_format(wall, s->date);
    build_null(s);
    /* Next tick just after the next whole wall-clock second. */
    loop_timer_arm(loop, t, loop->now_ns + (NS_PER_S - wall % NS_PER_S) + NS_PER_MS);
}

/* ---- drain and the server thread -------------------------------------------------------- */

static void begin_drain(struct serve_handle *s)
{
    s->draining = true;
    loop_timer_cancel(&s->loop, &s->accept_timer);
    if (s->listen_fd >= 0) {
        loop_io_del(&s->loop, &s->listen_io);
        close(s->listen_fd);
        s->listen_fd = -1;
    }
    serve_pause_stop(s);
    loop_timer_arm(&s->loop, &s->drain_timer, clock_now_ns() + s->cfg.grace_ns);
    serve_h3_drain(s);
    struct conn *c = s->conns;
    while (c) {
        struct conn *next = c->next;
        if (c->busy) {
            c->w.keep_alive = false; /* answer with Connection: close */
        } else if (!c->dead && !c->lingering) {
            c->closing = true;
            if (serve_conn_flush(c))
                serve_conn_settle(c);
        }
        c = next;
    }
}

static void on_drain_timer(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    struct serve_handle *s = t->data;
    s->drain_expired = true;
}

static void *server_main(void *arg)
{
    struct serve_handle *s = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        int r = loop_run_once(&s->loop, UINT64_MAX);
        if (r < 0)
            break;
        if (!s->draining && atomic_load(&s->stop_requested))
            begin_drain(s);
        if (s->draining && (s->nconn_structs == 0 || s->drain_expired))
            break;
    }
    atomic_store(&s->stop_ns, clock_now_ns());
    /* Workers first: a job in their hands points into a connection. */
    serve_cpu_stop(s);
    while (s->conns) {
        struct conn *c = s->conns;
        if (!c->dead) {
            close(c->io.fd);
            c->dead = true;
            if (!c->refused)
                counter_dec(&s->c.connections);
        }
        c->w.phase = PH_NONE;
        serve_conn_free(c);
    }
    serve_h3_release(s);
    if (s->listen_fd >= 0) {
        close(s->listen_fd);
        s->listen_fd = -1;
    }
    return NULL;
}

/* ---- public API ------------------------------------------------------------------------- */

int serve_start(const struct serve_config *cfg, struct serve_handle **out)
{
    char err[160];
    if (serve_config_check(cfg, err, sizeof err))
        return KNEE_EINVAL;
    struct serve_handle *s = xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    if (!s->cfg.preset[0])
        snprintf(s->cfg.preset, sizeof s->cfg.preset, "custom");
    s->listen_fd = -1;
    int r = loop_init(&s->loop);
    if (r) {
        free(s);
        return r;
    }
    int fd = listen_open(cfg->listen, LISTEN_BACKLOG, s->bound, sizeof s->bound, &s->port);
    char host[SERVE_ADDR_MAX];
    int want_port = -1;
    listen_split(cfg->listen, host, sizeof host, &want_port);
    /* --h3: the UDP socket takes the TCP port's number; a port the kernel chose (":0") may be
     * taken on UDP (a client's ephemeral port): then another one */
    for (int tries = 0; fd >= 0 && cfg->h3; tries++) {
        r = serve_h3_open(s, fd);
        if (r == 0)
            break;
        close(fd);
        fd = r;
        if (r != -EADDRINUSE || want_port != 0 || tries == 32)
            break;
        fd = listen_open(cfg->listen, LISTEN_BACKLOG, s->bound, sizeof s->bound, &s->port);
    }
    if (fd < 0) {
        serve_h3_release(s);
        loop_release(&s->loop);
        free(s);
        return fd;
    }
    s->listen_fd = fd;
    s->listen_io.fd = fd;
    s->listen_io.cb = serve_conn_accept;
    s->listen_io.data = s;
    loop_io_add(&s->loop, &s->listen_io, EPOLLIN);

    if (cfg->h3)
        snprintf(s->alt_svc, sizeof s->alt_svc, "Alt-Svc: h3=\":%d\"\r\n", s->port);
    rng_seed(&s->rng, cfg->seed);
    s->slots_free = cfg->pool;
    s->start_ns = clock_now_ns();
    s->loop.now_ns = s->start_ns;
    loop_timer_init(&s->date_timer, on_date_timer, s);
    on_date_timer(&s->loop, &s->date_timer);
    serve_pause_start(s);
    loop_timer_init(&s->drain_timer, on_drain_timer, s);
    serve_conn_accept_init(s);
    if (cfg->tls && (r = serve_conn_tls_init(s)) != 0)
        goto fail;
    /* cfg (the caller's) still holds the certificate paths serve_conn_tls_init took out of s->cfg */
    if (cfg->h3 && (r = serve_h3_start(s, cfg->cert_file, cfg->key_file)) != 0)
        goto fail;

    if (cfg->cpu_ns && (r = serve_cpu_start(s)) != 0)
        goto fail;
    r = pthread_create(&s->thread, NULL, server_main, s);
    if (r) {
        r = -r;
        goto fail;
    }
    s->thread_started = true;
    *out = s;
    return 0;
fail:
    serve_cpu_stop(s);
    serve_h3_release(s);
    serve_conn_tls_release(s);
    close(s->listen_fd);
    loop_release(&s->loop);
    free(s);
    return r;
}

int serve_port(const struct serve_handle *h)
{
    return h->port;
}

const char *serve_address(const struct serve_handle *h)
{
    return h->bound;
}

const struct serve_config *serve_config_of(const struct serve_handle *h)
{
    return &h->cfg;
}

void serve_counters(const struct serve_handle *h, struct serve_counters *o)
{
    const struct counters *c = &h->c;
    int64_t active = atomic_load_explicit(&c->active, memory_order_relaxed);
    int64_t waiting = atomic_load_explicit(&c->waiting, memory_order_relaxed);
    o->active = active > 0 ? (uint64_t)active : 0;
    o->waiting = waiting > 0 ? (uint64_t)waiting : 0;
    o->executed = counter_get(&c->executed);
    o->ok = counter_get(&c->ok);
    o->rejected = counter_get(&c->rejected);
    o->cancelled = counter_get(&c->cancelled);
    o->write_failures = counter_get(&c->write_failures);
    o->requests = counter_get(&c->requests);
    o->bad_requests = counter_get(&c->bad_requests);
    o->timeouts = counter_get(&c->timeouts);
    o->connections = counter_get(&c->connections);
    o->connections_total = counter_get(&c->connections_total);
    o->conn_refused = counter_get(&c->conn_refused);
    o->pauses = counter_get(&c->pauses);
    o->tls_failed = counter_get(&c->tls_failed);
    o->h3 = counter_get(&c->h3_requests);
    uint64_t end = atomic_load(&h->stop_ns);
    o->uptime_s = (double)((end ? end : clock_now_ns()) - h->start_ns) / 1e9;
}

size_t serve_counters_json(const struct serve_counters *c, const char *preset, char *buf, size_t cap)
{
    int n = snprintf(
        buf, cap,
        "{\"preset\":\"%s\",\"active\":%llu,\"waiting\":%llu,\"executed\":%llu,\"ok\":%llu,"
        "\"rejected\":%llu,\"cancelled\":%llu,\"write_failures\":%llu,\"requests\":%llu,"
        "\"bad_requests\":%llu,\"timeouts\":%llu,\"connections\":%llu,\"connections_total\":%llu,"
        "\"conn_refused\":%llu,\"pauses\":%llu,\"tls_failed\":%llu,\"h3\":%llu,\"uptime_s\":%.3f}",
        preset ? preset : "", (unsigned long long)c->active, (unsigned long long)c->waiting,
        (unsigned long long)c->executed, (unsigned long long)c->ok, (unsigned long long)c->rejected,
        (unsigned long long)c->cancelled, (unsigned long long)c->write_failures, (unsigned long long)c->requests,
        (unsigned long long)c->bad_requests, (unsigned long long)c->timeouts, (unsigned long long)c->connections,
        (unsigned long long)c->connections_total, (unsigned long long)c->conn_refused, (unsigned long long)c->pauses,
        (unsigned long long)c->tls_failed, (unsigned long long)c->h3, c->uptime_s);
    if (n < 0 || (size_t)n >= cap)
        return 0;
    return (size_t)n;
}

void serve_shutdown(struct serve_handle *h)
{
    atomic_store(&h->stop_requested, true);
    loop_wake(&h->loop);
}

void serve_time(const struct serve_handle *h, enum serve_time_class c, struct serve_time_hist *out)
{
    memset(out, 0, sizeof *out);
    out->nbounds = h->cfg.ntime_bounds;
    memcpy(out->bounds_ns, h->cfg.time_bounds_ns, sizeof out->bounds_ns);
    for (unsigned i = 0; i <= out->nbounds; i++) {
        out->counts[i] = counter_get(&h->c.time_counts[c][i]);
        out->total += out->counts[i];
    }
    out->sum_ns = counter_get(&h->c.time_sum_ns[c]);
}

void serve_join(struct serve_handle *h)
{
    serve_shutdown(h);
    if (h->thread_started && !h->joined)
        pthread_join(h->thread, NULL);
    h->joined = true;
}

void serve_stop(struct serve_handle *h, struct serve_counters *final)
{
    if (!h)
        return;
    serve_join(h);
    if (final)
        serve_counters(h, final);
    while (h->free_conns) {
        struct conn *c = h->free_conns;
        h->free_conns = c->next;
        free(c);
    }
    serve_conn_tls_release(h);
    loop_release(&h->loop);
    free(h);
}
