/* How a load thread's connections are made: to the target or to --proxy, from the kernel's source
 * address or the next of --local-address, now or when --connect-rate gives the thread its turn.
 * The checks before a run (route_validate: syntax; route_prepare: the proxy resolved, every
 * source address test-bound) make every mistake exit 2 before anything is sent.
 *
 * --connect-rate paces each thread at its share of the rate (one new connection every
 * threads / R seconds). A connection that must wait is a connection all the same: it is counted
 * as connecting, takes the request it was opened for (whose latency from its planned send, and
 * its service time from the moment knee decided to connect for it, include the wait: the honest
 * number, as a queue's wait is), and dials when its turn comes (conn_dial_late). Its connect
 * phase (connect_ns) starts at the dial. */
#include "load/worker.h"

#include "core/clock.h"
#include "core/err.h"
#include "net/bind.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int route_validate(const struct run_config *cfg, char *err, size_t errlen)
{
    if (cfg->proxy) {
        struct net_proxy p;
        int r = net_proxy_parse(cfg->proxy, &p, err, errlen);
        net_proxy_release(&p);
        if (r)
            return KNEE_EINVAL;
        if (cfg->h2c)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--h2c and --proxy: a proxy forwards http:// requests as HTTP/1.1 (https:// targets "
                             "speak h2 inside the tunnel)");
    }
    if (cfg->local_addresses) {
        struct net_addr a[NET_LOCAL_MAX];
        size_t n;
        if (net_local_parse(cfg->local_addresses, a, NET_LOCAL_MAX, &n, err, errlen))
            return KNEE_EINVAL;
    }
    if (cfg->connect_rate < 0 || !isfinite(cfg->connect_rate))
        return knee_fail(err, errlen, KNEE_EINVAL, "--connect-rate must be > 0 (new connections per second)");
    return 0;
}

/* The proxy resolved, and what each target sends it. */
static int prepare_proxy(struct engine *e, const struct run_config *cfg, char *err, size_t errlen)
{
    e->proxy = xcalloc(1, sizeof *e->proxy);
    char why[512];
    int r = net_proxy_parse(cfg->proxy, e->proxy, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s", why);
    r = net_resolve(e->proxy->host, e->proxy->port_str, &e->proxy_addr, NULL, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "--proxy %s: %s", e->proxy->shown, why);
    for (size_t i = 0; i < e->nt; i++) {
        struct engine_target *et = &e->targets[i];
        const char *auth = et->url.authority;
        char hp[300];
        if (!strchr(auth + (auth[0] == '[' ? strcspn(auth, "]") : 0), ':')) { /* CONNECT needs the port */
            snprintf(hp, sizeof hp, "%s:%u", auth, et->url.port);
            auth = hp;
        }
        if (et->tls) {
            et->proxy_connect = net_proxy_connect_request(e->proxy, auth, &et->proxy_connect_len);
        } else {
            size_t n = strlen(et->url.authority) + 8;
            et->proxy_origin = xmalloc(n);
            et->proxy_origin_len = (size_t)snprintf(et->proxy_origin, n, "http://%s", et->url.authority);
        }
    }
    return 0;
}

/* Every source address parsed, bound once (a foreign one is an error now, not a run of failed
 * connects), and of the family of every address a connection goes to. */
static int prepare_local(struct engine *e, const struct run_config *cfg, char *err, size_t errlen)
{
    e->local = xcalloc(NET_LOCAL_MAX, sizeof *e->local);
    int r = net_local_parse(cfg->local_addresses, e->local, NET_LOCAL_MAX, &e->nlocal, err, errlen);
    if (r)
        return r;
    for (size_t k = 0; k < e->nlocal; k++) {
        const struct net_addr *a = &e->local[k];
        r = net_local_check(a);
        if (r)
            return knee_fail(err, errlen, KNEE_EINVAL, "--local-address %s: cannot send from it (%s)%s", a->text,
                             knee_strerror(r), r == -EADDRNOTAVAIL ? ": not an address of this host" : "");
        for (size_t i = 0; i < e->nt; i++) {
            const struct net_addr *d = e->proxy ? &e->proxy_addr : &e->targets[i].addr;
            if (d->family != a->family)
                return knee_fail(err, errlen, KNEE_EINVAL, "--local-address %s: %s is %s, %s is %s", a->text, a->text,
                                 a->family == AF_INET ? "IPv4" : "IPv6", d->text,
                                 d->family == AF_INET ? "IPv4" : "IPv6");
        }
    }
    return 0;
}

int route_prepare(struct engine *e, const struct run_config *cfg, char *err, size_t errlen)
{
    int r = 0;
    if (cfg->proxy && (r = prepare_proxy(e, cfg, err, errlen)) != 0)
        return r;
    if (cfg->local_addresses && (r = prepare_local(e, cfg, err, errlen)) != 0)
        return r;
    return 0;
}

void route_pace_init(struct engine *e, const struct run_config *cfg)
{
    if (cfg->connect_rate > 0) {
        double gap = (double)e->nworkers * 1e9 / cfg->connect_rate;
        e->connect_gap_ns = gap > 1 ? (uint64_t)gap : 1;
    }
}

void route_release(struct engine *e)
{
    for (size_t i = 0; e->targets && i < e->nt; i++) {
        free(e->targets[i].proxy_connect);
        free(e->targets[i].proxy_origin);
        e->targets[i].proxy_connect = e->targets[i].proxy_origin = NULL;
    }
    if (e->proxy)
        net_proxy_release(e->proxy);
    free(e->proxy);
    free(e->local);
    e->proxy = NULL;
    e->local = NULL;
    e->nlocal = 0;
}

/* ------------------------------------------------------------------ the request path */

const struct conn_ops *route_ops(const struct engine *e, const struct target_rt *t)
{
    if (t->et->h3)
        return &conn_quic_ops; /* --http3: no proxy, no source address (refused in validate.c) */
    if (!t->et->tls)
        return &conn_plain_ops;
    return e->proxy ? &conn_proxy_tls_ops : &conn_tls_ops;
}

const struct net_addr *route_dest(const struct conn *c, const struct net_addr *addr)
{
    return c->w->e->proxy ? &c->w->e->proxy_addr : addr;
}

const struct net_addr *route_source(struct worker *w)
{
    const struct engine *e = w->e;
    if (!e->nlocal)
        return NULL;
    /* round-robin per thread, each from its own offset: with T threads the addresses are used
     * evenly even when each thread opens few connections */
    return &e->local[(w->conn_seq + w->index) % e->nlocal];
}

bool route_pace(uint64_t *next_ns, uint64_t gap_ns, uint64_t now)
{
    if (now < *next_ns)
        return false;
    /* a turn taken a little late keeps the schedule; after a pause the schedule starts again */
    uint64_t base = *next_ns && now - *next_ns < gap_ns ? *next_ns : now;
    *next_ns = base + gap_ns;
    return true;
}

bool route_must_wait(struct worker *w, uint64_t now)
{
    uint64_t gap = w->e->connect_gap_ns;
    if (!gap)
        return false;
    return w->rate_head || !route_pace(&w->connect_next_ns, gap, now);
}

void route_wait(struct worker *w, struct conn *c)
{
    c->rate_wait = true;
    c->rnext = NULL;
    c->rprev = w->rate_tail;
    if (w->rate_tail)
        w->rate_tail->rnext = c;
    else
        w->rate_head = c;
    w->rate_tail = c;
    if (w->rate_head == c)
        loop_timer_arm(&w->loop, &w->rate_timer, w->connect_next_ns);
}

void route_unwait(struct worker *w, struct conn *c)
{
    if (!c->rate_wait)
        return;
    c->rate_wait = false;
    if (c->rprev)
        c->rprev->rnext = c->rnext;
    else
        w->rate_head = c->rnext;
    if (c->rnext)
        c->rnext->rprev = c->rprev;
    else
        w->rate_tail = c->rprev;
    c->rprev = c->rnext = NULL;
    if (!w->rate_head)
        loop_timer_cancel(&w->loop, &w->rate_timer);
}

void route_on_timer(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    struct worker *w = timer->data;
    while (w->rate_head && route_pace(&w->connect_next_ns, w->e->connect_gap_ns, clock_now_ns())) {
        struct conn *c = w->rate_head;
        route_unwait(w, c);
        conn_dial_late(w, c);
    }
    if (w->rate_head)
        loop_timer_arm(&w->loop, &w->rate_timer, w->connect_next_ns);
    worker_maybe_finish(w);
}
