/* The closed loop of a load thread: each client sends a request, waits for its full response,
 * thinks (--think) and sends again, until the duration or its target's --requests run out.
 * Clients share connections in groups (--streams clients per HTTP/2 connection, one per
 * HTTP/1.1 connection); a client whose connection has no free stream waits in its group
 * before it plans its request, so the wait is never counted as latency.
 *
 * Closed-loop stages (--stages 4c:30s,4..64c:2m; plan/clients.h): every client of the stages'
 * peak exists from the start with its rank, and a timer of its own toggles it when the count
 * crosses its rank. Activated, an idle client starts its loop (its group's connection is opened
 * then, or joined); retired, it plans nothing more: waiting or thinking, it parks at once; with
 * a request in flight, the request finishes and is counted, and the client parks when it ends. */
#include "load/worker.h"

#include "core/clock.h"
#include "core/err.h"
#include "plan/clients.h"
#include "plan/shard.h"

#include <stdlib.h>

/* ------------------------------------------------------------------ clients */

static void on_think(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    client_next(timer->data);
}

static bool all_clients_done(const struct worker *w)
{
    for (size_t i = 0; i < w->nclients; i++)
        if (!w->clients[i].done)
            return false;
    return true;
}

static void client_finish(struct client *cl)
{
    struct worker *w = cl->w;
    cl->done = true;
    loop_timer_cancel(&w->loop, &cl->think);
    if (w->planning && all_clients_done(w))
        worker_end_planning(w, clock_now_ns());
}

static void client_wait(struct cgroup *g, struct client *cl)
{
    cl->waiting = true;
    cl->wnext = NULL;
    if (g->wait_tail)
        g->wait_tail->wnext = cl;
    else
        g->wait_head = cl;
    g->wait_tail = cl;
}

/* The target's budget (--requests) is spent: the clients still waiting for a stream will
 * send nothing more. */
static void finish_waiters(struct target_rt *t)
{
    for (size_t i = 0; i < t->ngroups; i++) {
        struct cgroup *g = &t->groups[i];
        struct client *cl = g->wait_head;
        g->wait_head = g->wait_tail = NULL;
        while (cl) {
            struct client *next = cl->wnext;
            cl->waiting = false;
            client_finish(cl);
            cl = next;
        }
    }
}

static _Thread_local bool in_client_next;

/* The client's request goes out (planned now): on its group's connection when it has room, or
 * bound to it while it connects, or on a new one. */
static void client_send(struct client *cl, struct conn *c, bool room)
{
    struct worker *w = cl->w;
    struct target_rt *t = cl->t;
    uint64_t planned = clock_now_ns();
    bool warm = planned < w->e->warmup_end_ns;
    if (t->budget != UINT64_MAX)
        t->budget--;
    counts_of(t, warm)->planned++;
    w->ic.planned++;
    bool ok = true;
    if (room) {
        ok = worker_dispatch(w, t, cl, c, planned, warm);
    } else if (c) {
        /* the connect started before this request: T1 is now; the write follows the connect */
        conn_bind(w, c, req_begin(w, t, cl, planned, warm, planned));
    } else {
        ok = worker_dispatch(w, t, cl, NULL, planned, warm);
    }
    if (!ok) /* failed at once: the next request comes from the loop (see client_next) */
        worker_after_request(w, t, cl, NULL);
}

void client_next(struct client *cl)
{
    struct worker *w = cl->w;
    struct target_rt *t = cl->t;
    if (cl->done || cl->waiting)
        return;
    if (!w->planning || t->budget == 0) {
        client_finish(cl);
        return;
    }
    if (!cl->active) { /* retired by the stages: it parks until they activate it again */
        cl->idle = true;
        return;
    }
    if (in_client_next) {
        /* a request failed synchronously inside a send: continue from the loop, not by
         * recursion (a refusing server would otherwise never let the loop run) */
        loop_timer_arm(&w->loop, &cl->think, clock_now_ns() + 1);
        return;
    }
    struct cgroup *g = cl->g;
    struct conn *c = g->conn;
    if (c && conn_unusable(c)) {
        g->conn = NULL; /* after a GOAWAY it finishes its streams; new ones need a new connection */
        c = NULL;
    }
    bool room = c && conn_room(w, c) > 0;
    bool bindable = c && (c->state == CONN_CONNECTING || c->state == CONN_HANDSHAKING) && !c->req;
    if (c && !room && !bindable) {
        /* every stream of the group's connection is busy (or it is being opened for another
         * client): wait, before planning, for one to come free */
        client_wait(g, cl);
        return;
    }
    if (t->vr.slot && !vring_ready(w, t)) { /* the request source has no more */
        client_finish(cl);
        return;
    }
    in_client_next = true;
    client_send(cl, room || bindable ? c : NULL, room);
    in_client_next = false;
    if (t->budget == 0)
        finish_waiters(t);
}

/* ------------------------------------------------------------------ stages */

/* Off g's wait list (a waiting client the stages retire). */
static void group_unwait(struct cgroup *g, struct client *cl)
{
    struct client *prev = NULL;
    for (struct client *x = g->wait_head; x; prev = x, x = x->wnext) {
        if (x != cl)
            continue;
        if (prev)
            prev->wnext = x->wnext;
        else
            g->wait_head = x->wnext;
        if (g->wait_tail == x)
            g->wait_tail = prev;
        break;
    }
    cl->wnext = NULL;
    cl->waiting = false;
}

/* The stages retire cl: it plans nothing more. Waiting for a stream or thinking, it parks now;
 * with a request in flight (or queued to be sent again), that request finishes and client_next
 * parks it. */
static void client_retire(struct client *cl)
{
    struct worker *w = cl->w;
    cl->active = false;
    if (cl->waiting) {
        group_unwait(cl->g, cl);
        cl->idle = true;
    } else if (loop_timer_armed(&cl->think)) {
        loop_timer_cancel(&w->loop, &cl->think);
        cl->idle = true;
    }
}

/* cl's state by the stages now, applied, and its timer armed for the next toggle. */
static void client_stage(struct client *cl)
{
    struct worker *w = cl->w;
    if (cl->done || !w->planning)
        return;
    const struct plan *p = &w->e->cfg->plan;
    uint64_t now = clock_now_ns(), t0 = w->e->t0_ns, next;
    bool on = plan_client_active(p->stages, p->nstages, cl->rank, now > t0 ? now - t0 : 0, &next);
    if (next != UINT64_MAX)
        loop_timer_arm(&w->loop, &cl->stage, t0 + next);
    if (on && !cl->active) {
        cl->active = true;
        if (cl->idle) {
            cl->idle = false;
            client_next(cl);
        }
    } else if (!on && cl->active) {
        client_retire(cl);
    }
}

static void on_stage(struct loop *loop, struct loop_timer *timer)
{
    (void)loop;
    client_stage(timer->data);
}

/* ------------------------------------------------------------------ groups */

void group_wake(struct worker *w, struct cgroup *g)
{
    (void)w;
    /* they open the next connection: the first opens it, the others wait for it */
    struct client *cl = g->wait_head;
    g->wait_head = g->wait_tail = NULL;
    while (cl) {
        struct client *next = cl->wnext;
        cl->waiting = false;
        client_next(cl);
        cl = next;
    }
}

/* Requests to send again first, then the waiting clients, one per free stream, in the order
 * they began to wait. */
void group_refill(struct worker *w, struct conn *c)
{
    struct cgroup *g = c->group;
    struct target_rt *t = c->t;
    if (c->state == CONN_FREE)
        return;
    while (t->npend && c->state != CONN_FREE && conn_room(w, c))
        pend_send(w, c);
    size_t n = 0;
    for (struct client *cl = g->wait_head; cl; cl = cl->wnext)
        n++;
    while (n-- && g->wait_head && c->state != CONN_FREE && g->conn == c && conn_room(w, c)) {
        struct client *cl = g->wait_head;
        g->wait_head = cl->wnext;
        if (!g->wait_head)
            g->wait_tail = NULL;
        cl->waiting = false;
        client_next(cl);
    }
}

void group_grow(struct worker *w, struct target_rt *t)
{
    for (struct req *r = t->pend_head; r; r = r->next) {
        struct cgroup *g = r->client->g;
        if (g->conn && conn_unusable(g->conn))
            g->conn = NULL; /* after a GOAWAY: it finishes its streams, new ones need a new connection */
        if (g->conn)
            continue;
        struct conn *c;
        int rc = conn_open(w, t, &c, false);
        if (rc) {
            struct client *cl = r->client;
            pend_remove(t, r);
            r->tcause = (uint8_t)account_connect_cause(rc);
            req_complete(w, r, OUTCOME_TRANSPORT, clock_now_ns());
            worker_after_request(w, t, cl, NULL);
            return; /* the list changed: the next request's turn comes with the next change */
        }
        c->group = g;
        g->conn = c;
    }
}

/* ------------------------------------------------------------------ the thread's share */

/* Group gi of a target's groups in this shard: its clients (--streams each; the last one of the
 * target fewer, when the clients were capped by --requests or by the stages' peak). ranks: the
 * target's ranks (closed-loop stages) or NULL (every client active). */
static void closed_group(struct worker *w, struct target_rt *t, uint32_t gi, const uint32_t *ranks, size_t *k)
{
    const struct engine_target *et = t->et;
    uint32_t S = w->e->group_streams;
    struct cgroup *g = &w->groups[w->ngroups++];
    g->t = t;
    uint32_t n = et->share->clients - gi * S < S ? et->share->clients - gi * S : S;
    for (uint32_t m = 0; m < n; m++) {
        struct client *cl = &w->clients[(*k)++];
        cl->w = w;
        cl->t = t;
        cl->g = g;
        cl->rank = ranks ? ranks[gi * S + m] : 0;
        cl->active = !ranks;
        loop_timer_init(&cl->think, on_think, cl);
        loop_timer_init(&cl->stage, on_stage, cl);
    }
}

/* This thread's share of a target's connections (groups of clients) and of its --requests.
 * Connections are split over the threads, in blocks; with closed-loop stages, dealt round robin
 * (group g to thread g mod T), so that the lowest ranks, the ones that run first, spread over
 * the threads. */
static void closed_share(struct worker *w, struct target_rt *t, uint32_t T, uint32_t index, const uint32_t *ranks,
                         size_t *k)
{
    const struct engine_target *et = t->et;
    uint32_t G = et->share->groups;
    uint32_t mine = G / T + (index < G % T ? 1 : 0);
    uint32_t first = index * (G / T) + (index < G % T ? index : G % T);
    t->groups = w->groups + w->ngroups;
    t->ngroups = mine;
    for (uint32_t j = 0; j < mine; j++)
        closed_group(w, t, ranks ? index + j * T : first + j, ranks, k);
    /* --requests: split over the threads that have connections for this target */
    uint32_t teff = G < T ? G : T;
    uint64_t limit = et->share->limit;
    if (limit == UINT64_MAX)
        t->budget = UINT64_MAX;
    else if (index < teff)
        t->budget = limit / teff + (index < limit % teff ? 1 : 0);
    else
        t->budget = 0;
}

/* Closed-loop stages: every target's ranks in this shard (plan/clients.h), out[i] owned. */
static uint32_t **stage_ranks(const struct engine *e)
{
    const struct plan *p = &e->cfg->plan;
    uint32_t **out = xcalloc(e->nt ? e->nt : 1, sizeof *out);
    uint32_t *n = xcalloc(e->nt ? e->nt : 1, sizeof *n);
    double *wt = xcalloc(e->nt ? e->nt : 1, sizeof *wt);
    for (size_t i = 0; i < e->nt; i++) {
        n[i] = e->shares[i].clients;
        out[i] = xcalloc(n[i] ? n[i] : 1, sizeof **out);
    }
    plan_clients_weights(p, wt);
    plan_clients_ranks(wt, e->nt, plan_clients_peak(p->stages, p->nstages), plan_shard_index(p), plan_shard_count(p),
                       out, n);
    free(wt);
    free(n);
    return out;
}

void closed_init(struct worker *w)
{
    const struct engine *e = w->e;
    uint32_t T = e->nworkers;
    /* each target's connections spread over the threads, --streams clients each */
    size_t ngroups = 0;
    for (size_t i = 0; i < e->nt; i++) {
        uint32_t G = e->shares[i].groups;
        ngroups += G / T + (w->index < G % T ? 1 : 0);
    }
    w->groups = xcalloc(ngroups ? ngroups : 1, sizeof *w->groups);
    w->clients = xcalloc(ngroups ? ngroups * e->group_streams : 1, sizeof *w->clients);
    uint32_t **ranks = plan_stages_clients(&e->cfg->plan) ? stage_ranks(e) : NULL;
    size_t k = 0;
    for (size_t i = 0; i < e->nt; i++)
        closed_share(w, &w->t[i], T, w->index, ranks ? ranks[i] : NULL, &k);
    w->nclients = k;
    for (size_t i = 0; ranks && i < e->nt; i++)
        free(ranks[i]);
    free(ranks);
}

void closed_preconnect(struct worker *w)
{
    /* one connection per group of clients (per client over HTTP/1.1); with stages, per group
     * of a client the first stage runs (the others open theirs when they start) */
    const struct plan *p = &w->e->cfg->plan;
    uint32_t at0 = plan_stages_clients(p) ? plan_clients_at(p->stages, p->nstages, 0) : UINT32_MAX;
    for (size_t i = 0; i < w->nclients; i++) {
        struct cgroup *g = w->clients[i].g;
        struct conn *c;
        if (g->conn || (w->clients[i].rank > at0))
            continue;
        if (conn_open(w, g->t, &c, false) == 0) {
            c->group = g;
            g->conn = c;
        }
    }
}

void closed_start(struct worker *w)
{
    const struct engine *e = w->e;
    if (!w->nclients) {
        worker_end_planning(w, clock_now_ns());
        return;
    }
    if (e->plan_end_ns != UINT64_MAX)
        loop_timer_arm(&w->loop, &w->end_timer, e->plan_end_ns);
    bool stages = plan_stages_clients(&e->cfg->plan);
    for (size_t i = 0; i < w->nclients && w->planning; i++) {
        struct client *cl = &w->clients[i];
        if (stages) {
            cl->idle = true;  /* until its stage activates it, now or later */
            client_stage(cl); /* sends the first request of an active client */
        } else {
            client_next(cl);
        }
    }
}

void closed_stop(struct worker *w)
{
    for (size_t i = 0; i < w->nclients; i++) {
        struct client *cl = &w->clients[i];
        loop_timer_cancel(&w->loop, &cl->think);
        loop_timer_cancel(&w->loop, &cl->stage);
        cl->done = true;
    }
}
