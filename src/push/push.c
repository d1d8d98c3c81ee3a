/* The push thread (push/push.h): render, compress and queue a payload every interval, send the
 * queue's head with retries and backoff, and at the end one last payload and a bounded flush.
 * Everything but the numbers is the thread's own; the numbers are under a mutex that
 * push_stats_get also takes. */
#include "push/push.h"

#include "core/clock.h"
#include "core/err.h"
#include "push/internal.h"

#include <errno.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct payload {
    uint8_t *data; /* snappy-compressed WriteRequest */
    size_t len;
    unsigned attempts;
};

struct push {
    struct push_config cfg;
    struct push_endpoint ep;
    char *url;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;            /* push_finish asked (under mu) */
    struct push_stats st; /* under mu */
    /* The thread's own: a ring of payloads, oldest at head. */
    struct payload *q;
    size_t qhead, qlen, qcap;
    uint64_t retry_at_ns; /* when the head may be tried again (0: now) */
};

static void stat_error(struct push *p, const char *why)
{
    pthread_mutex_lock(&p->mu);
    snprintf(p->st.last_error, sizeof p->st.last_error, "%s", why);
    pthread_mutex_unlock(&p->mu);
}

/* Count one payload's end (one of ok, failed, dropped) under the mutex. */
static void stat_end(struct push *p, uint64_t *which, size_t bytes)
{
    pthread_mutex_lock(&p->mu);
    (*which)++;
    p->st.bytes += bytes;
    pthread_mutex_unlock(&p->mu);
}

static void queue_pop(struct push *p)
{
    free(p->q[p->qhead].data);
    p->qhead = (p->qhead + 1) % p->qcap;
    p->qlen--;
    p->retry_at_ns = 0;
}

/* Render, compress and append a payload; the oldest goes when the queue is full. */
static void produce(struct push *p)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* a sample's timestamp is wall time; intervals are monotonic */
    int64_t ts_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    const uint8_t *raw = NULL;
    size_t rawlen = 0;
    char err[PUSH_ERROR_MAX];
    pthread_mutex_lock(&p->mu);
    p->st.pushes++;
    pthread_mutex_unlock(&p->mu);
    if (p->cfg.render(p->cfg.render_ctx, ts_ms, &raw, &rawlen, err, sizeof err)) {
        stat_error(p, err);
        stat_end(p, &p->st.failed, 0);
        return;
    }
    size_t clen = snappy_max_compressed_length(rawlen);
    uint8_t *c = xmalloc(clen ? clen : 1);
    if (snappy_compress((const char *)raw, rawlen, (char *)c, &clen) != SNAPPY_OK) {
        free(c);
        stat_error(p, "snappy compression failed");
        stat_end(p, &p->st.failed, 0);
        return;
    }
    if (p->qlen == p->qcap) {
        queue_pop(p);
        stat_end(p, &p->st.dropped, 0);
    }
    p->q[(p->qhead + p->qlen) % p->qcap] = (struct payload){.data = c, .len = clen};
    p->qlen++;
}

/* One attempt at the queue's head, the request bounded by deadline_ns. */
static void attempt(struct push *p, uint64_t deadline_ns)
{
    struct payload *h = &p->q[p->qhead];
    char err[PUSH_ERROR_MAX] = "";
    if (h->attempts++) {
        pthread_mutex_lock(&p->mu);
        p->st.retried++;
        pthread_mutex_unlock(&p->mu);
    }
    int status = push_http_post(&p->ep, h->data, h->len, deadline_ns, err, sizeof err);
    if (status >= 200 && status < 300) {
        stat_end(p, &p->st.ok, h->len);
        queue_pop(p);
        return;
    }
    if (!err[0] && status > 0)
        snprintf(err, sizeof err, "HTTP %d", status);
    stat_error(p, err[0] ? err : "network error");
    if (status > 0 && !push_status_retry(status)) {
        stat_end(p, &p->st.failed, 0); /* 4xx: the same bytes would be refused again */
        queue_pop(p);
        return;
    }
    uint64_t cap = p->cfg.interval_ns > PUSH_BACKOFF_FIRST_NS ? p->cfg.interval_ns : PUSH_BACKOFF_FIRST_NS;
    p->retry_at_ns = clock_now_ns() + push_backoff_ns(h->attempts, cap);
}

/* Sleep until t_ns or until push_finish wakes the thread. Returns true when asked to stop. */
static bool wait_until(struct push *p, uint64_t t_ns)
{
    pthread_mutex_lock(&p->mu);
    while (!p->stop && clock_now_ns() < t_ns) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t left = t_ns - clock_now_ns();
        if (left > t_ns)
            left = 0;
        uint64_t abs = (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec + left;
        struct timespec at = {.tv_sec = (time_t)(abs / NS_PER_S), .tv_nsec = (long)(abs % NS_PER_S)};
        pthread_cond_timedwait(&p->cv, &p->mu, &at);
    }
    bool stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    return stop;
}

/* The end: one more payload, then the queue within timeout_ns; the rest fails. */
static void flush(struct push *p)
{
    produce(p);
    uint64_t end_ns = clock_now_ns() + p->cfg.timeout_ns;
    p->retry_at_ns = 0;
    while (p->qlen) {
        uint64_t now = clock_now_ns();
        if (p->retry_at_ns > now) {
            if (p->retry_at_ns >= end_ns)
                break;
            struct timespec ts = {.tv_sec = (time_t)((p->retry_at_ns - now) / NS_PER_S),
                                  .tv_nsec = (long)((p->retry_at_ns - now) % NS_PER_S)};
            nanosleep(&ts, NULL);
            continue;
        }
        if (now >= end_ns)
            break;
        attempt(p, end_ns);
    }
    while (p->qlen) {
        stat_end(p, &p->st.failed, 0);
        queue_pop(p);
    }
}

static void *push_main(void *arg)
{
    struct push *p = arg;
    uint64_t next_ns = clock_now_ns() + p->cfg.interval_ns;
    for (;;) {
        uint64_t wake = next_ns;
        if (p->qlen && p->retry_at_ns < wake)
            wake = p->retry_at_ns;
        if (wait_until(p, wake))
            break;
        uint64_t now = clock_now_ns();
        if (now >= next_ns) {
            produce(p);
            next_ns += p->cfg.interval_ns;
            if (next_ns <= now) /* a slow push: the next one an interval from now, not a burst */
                next_ns = now + p->cfg.interval_ns;
        }
        if (p->qlen && clock_now_ns() >= p->retry_at_ns)
            attempt(p, clock_now_ns() + p->cfg.timeout_ns);
    }
    flush(p);
    return NULL;
}

int push_start(const struct push_config *cfg, struct push **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!cfg->url || !cfg->render || !cfg->interval_ns || !cfg->timeout_ns || cfg->queue_max > PUSH_QUEUE_MAX)
        return knee_fail(err, errlen, KNEE_EINVAL, "incomplete push configuration");
    int rc = push_url_check(cfg->url, err, errlen);
    if (rc)
        return rc;
    struct push *p = xcalloc(1, sizeof *p);
    p->cfg = *cfg;
    p->url = xstrdup(cfg->url);
    p->cfg.url = p->url;
    p->qcap = cfg->queue_max ? cfg->queue_max : PUSH_QUEUE_DEFAULT;
    p->q = xcalloc(p->qcap, sizeof *p->q);
    rc = push_endpoint_init(&p->ep, cfg->url, cfg->cafile, cfg->insecure, err, errlen);
    p->ep.auth_header = cfg->auth_header;
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    int e = rc ? 0 : pthread_create(&p->thread, NULL, push_main, p);
    if (rc || e) {
        if (e)
            rc = knee_fail(err, errlen, -e, "cannot start the push thread: %s", strerror(e));
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        push_endpoint_release(&p->ep);
        free(p->q);
        free(p->url);
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void push_stats_get(struct push *p, struct push_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->st;
    pthread_mutex_unlock(&p->mu);
}

const char *push_url(const struct push *p)
{
    return p->url;
}

void push_finish(struct push *p, struct push_stats *out)
{
    if (!p) {
        if (out)
            memset(out, 0, sizeof *out);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    if (out)
        *out = p->st;
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    push_endpoint_release(&p->ep);
    free(p->q);
    free(p->url);
    free(p);
}
