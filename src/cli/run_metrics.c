/* Live metrics of knee run and knee capacity: run_config.on_live -> struct metrics_run_sample
 * -> the endpoint's registry (cli/run_metrics.h). */
#include "cli/run_metrics.h"

#include "cli/push_flags.h"

#include "core/err.h"
#include "core/units.h"
#include "metrics/endpoint.h"
#include "metrics/knee_run.h"
#include "metrics/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run_metrics {
    struct metrics_registry *reg;
    struct metrics_run *mr;
    struct metrics_endpoint *ep;
    const char *cmd;
    uint64_t linger_ns;
    size_t nt, nbounds;
    int64_t bounds_ns[METRICS_MAX_BOUNDS];
    struct metrics_run_sample base; /* the final values of the runs before this one */
    struct metrics_run_sample cur;  /* the values published last */
    struct cli_push *push;          /* --remote-write, or NULL */
    char shard_kv[32];              /* "shard=I" for a shard's pushes */
    bool push_recorded;             /* cli_metrics_push_end gave the numbers to a run record */
};

size_t cli_metrics_thresholds(const struct run_threshold *thr, size_t nthr, double *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < nthr && n < cap; i++) {
        const struct run_threshold *t = &thr[i];
        bool exposed = t->metric == THR_LATENCY || t->metric == THR_SERVICE || t->metric == THR_LAG;
        bool duration = strcmp(t->stat, "p") == 0 || strcmp(t->stat, "mean") == 0 || strcmp(t->stat, "min") == 0 ||
                        strcmp(t->stat, "max") == 0;
        if (t->kind == THR_STAT && exposed && duration && t->value > 0 && isfinite(t->value))
            out[n++] = t->value / 1e3; /* ms -> s */
    }
    return n;
}

int cli_metrics_check(const struct metrics_flags *f, const struct cmd_spec *spec, const struct run_threshold *thr,
                      size_t nthr, double *bounds_s, size_t *nbounds)
{
    double extra[METRICS_MAX_BOUNDS];
    size_t nextra = cli_metrics_thresholds(thr, nthr, extra, METRICS_MAX_BOUNDS);
    return metrics_flags_check(f, spec, extra, nextra, bounds_s, nbounds);
}

/* ---- run_live -> sample --------------------------------------------------------------------- */

static void sample_copy(struct metrics_run_sample *dst, const struct metrics_run_sample *src)
{
    size_t n = src->ntargets;
    memcpy(dst->outcome, src->outcome, n * sizeof *src->outcome);
    memcpy(dst->status, src->status, n * sizeof *src->status);
    memcpy(dst->conns_proto, src->conns_proto, n * sizeof *src->conns_proto);
    uint64_t *const d[] = {dst->planned,    dst->sent,           dst->dropped,   dst->conns_opened, dst->conns_failed,
                           dst->bytes_sent, dst->bytes_received, dst->in_flight, dst->queued};
    const uint64_t *const s[] = {src->planned,        src->sent,         src->dropped,
                                 src->conns_opened,   src->conns_failed, src->bytes_sent,
                                 src->bytes_received, src->in_flight,    src->queued};
    for (size_t k = 0; k < sizeof d / sizeof *d; k++)
        memcpy(d[k], s[k], n * sizeof *s[k]);
    memcpy(dst->latency, src->latency, n * sizeof *src->latency);
    memcpy(dst->service, src->service, n * sizeof *src->service);
    memcpy(dst->lag, src->lag, n * sizeof *src->lag);
    memcpy(dst->ttfb, src->ttfb, n * sizeof *src->ttfb);
    for (size_t t = 0; t < n; t++) {
        native_copy(&dst->latency_native[t], &src->latency_native[t]);
        native_copy(&dst->service_native[t], &src->service_native[t]);
        native_copy(&dst->lag_native[t], &src->lag_native[t]);
        native_copy(&dst->ttfb_native[t], &src->ttfb_native[t]);
    }
    dst->warmup = src->warmup;
    dst->finished = src->finished;
    dst->generator_limited = src->generator_limited;
}

/* dst = base + h (both native, seconds). */
static void native_set(struct native_hist *dst, const struct native_hist *base, const struct native_hist *h)
{
    native_copy(dst, base);
    native_add(dst, h);
}

/* dst = base + h (h in ns over the same bounds, the sum converted to seconds). */
static void hist_set(struct prom_hist *dst, const struct prom_hist *base, const struct prom_hist *h)
{
    for (size_t i = 0; i <= dst->nbounds; i++)
        dst->counts[i] = base->counts[i] + h->counts[i];
    dst->total = base->total + h->total;
    dst->sum = base->sum + h->sum / 1e9;
}

static void on_live(void *ctx, const struct run_live *l)
{
    struct run_metrics *m = ctx;
    if (l->ntargets != m->nt)
        return; /* another configuration's run: not ours to show */
    const struct metrics_run_sample *b = &m->base;
    struct metrics_run_sample *s = &m->cur;
    for (size_t t = 0; t < m->nt; t++) {
        const struct run_live_target *lt = &l->targets[t];
        const struct run_counts *c = &lt->counts;
        for (int o = 0; o < OUTCOME_COUNT; o++)
            s->outcome[t][o] = b->outcome[t][o] + c->outcome[o];
        s->planned[t] = b->planned[t] + c->planned;
        s->status[t] = b->status[t];
        record_status_add(&s->status[t], &lt->status);
        s->sent[t] = b->sent[t] + c->sent;
        s->dropped[t] = b->dropped[t] + c->dropped;
        s->conns_opened[t] = b->conns_opened[t] + c->conns_opened;
        s->conns_failed[t] = b->conns_failed[t] + c->conns_failed;
        for (int k = 0; k < METRICS_PROTOCOLS; k++)
            s->conns_proto[t][k] = b->conns_proto[t][k] + lt->conns_proto[k];
        s->bytes_sent[t] = b->bytes_sent[t] + lt->bytes_sent;
        s->bytes_received[t] = b->bytes_received[t] + lt->bytes_received;
        s->in_flight[t] = lt->in_flight;
        s->queued[t] = lt->queued;
        hist_set(&s->latency[t], &b->latency[t], &lt->latency);
        hist_set(&s->service[t], &b->service[t], &lt->service);
        hist_set(&s->lag[t], &b->lag[t], &lt->lag);
        native_set(&s->latency_native[t], &b->latency_native[t], &lt->latency_native);
        native_set(&s->service_native[t], &b->service_native[t], &lt->service_native);
        native_set(&s->lag_native[t], &b->lag_native[t], &lt->lag_native);
        hist_set(&s->ttfb[t], &b->ttfb[t], &lt->ttfb);
        native_set(&s->ttfb_native[t], &b->ttfb_native[t], &lt->ttfb_native);
    }
    s->warmup = l->warmup;
    s->finished = false;
    s->generator_limited = l->generator_limited;
    metrics_run_publish(m->mr, s);
    if (l->final)
        sample_copy(&m->base, s); /* a later run (knee capacity's next step) adds to these */
}

/* ---- start and finish ----------------------------------------------------------------------- */

static void run_metrics_free(struct run_metrics *m)
{
    if (!m)
        return;
    cli_push_free(m->push);
    metrics_endpoint_stop(m->ep);
    if (m->mr) {
        metrics_run_sample_release(&m->base);
        metrics_run_sample_release(&m->cur);
        metrics_run_free(m->mr);
    }
    metrics_free(m->reg);
    free(m);
}

int cli_metrics_start(const struct metrics_flags *f, const struct cmd_spec *spec, struct run_config *cfg,
                      const struct run_threshold *thr, size_t nthr, struct run_metrics **out)
{
    *out = NULL;
    double bounds[METRICS_MAX_BOUNDS];
    size_t nb;
    int rc = cli_metrics_check(f, spec, thr, nthr, bounds, &nb);
    if (rc || !metrics_flags_wanted(f))
        return rc;
    struct run_metrics *m = xcalloc(1, sizeof *m);
    m->cmd = spec->name;
    m->linger_ns = f->linger_ns;
    m->nt = cfg->plan.ntargets;
    m->nbounds = nb;
    /* Bounds are whole nanoseconds (durations parse to ns): the engine's histograms count a
     * value v (ns) at le=B when v's HDR bucket ends at or below B (hist/prom.h). */
    for (size_t i = 0; i < nb; i++)
        m->bounds_ns[i] = (int64_t)llround(bounds[i] * 1e9);
    m->reg = metrics_new();
    const char **names = xcalloc(m->nt ? m->nt : 1, sizeof *names);
    for (size_t i = 0; i < m->nt; i++)
        names[i] = cfg->plan.targets[i].name;
    char err[256];
    int e = metrics_run_new(m->reg, names, m->nt, bounds, nb, &m->mr, err, sizeof err);
    free(names);
    if (e == 0) {
        metrics_run_sample_init(m->mr, &m->base);
        metrics_run_sample_init(m->mr, &m->cur);
        if (f->listen)
            e = metrics_endpoint_start(m->reg, f->listen, &m->ep, err, sizeof err);
    }
    if (e) {
        knee_report(stderr, "", "knee %s: --metrics-listen %s", spec->name, err);
        run_metrics_free(m);
        return e == KNEE_EINVAL ? 2 : 1;
    }
    if (f->push && f->push->url) {
        const struct plan_shard *sh = &cfg->plan.shard;
        if (sh->count)
            snprintf(m->shard_kv, sizeof m->shard_kv, "shard=%u", (unsigned)sh->index);
        e = cli_push_start(f->push, spec, m->reg, m->shard_kv[0] ? m->shard_kv : NULL, &m->push);
        if (e) {
            run_metrics_free(m);
            return e;
        }
    }
    if (m->ep)
        fprintf(stderr, "metrics on http://%s/metrics\n", metrics_endpoint_address(m->ep));
    if (m->ep && !metrics_endpoint_loopback(m->ep))
        fprintf(stderr,
                "knee %s: --metrics-listen %s is not a loopback address: whoever can reach it can read the metrics\n",
                spec->name, metrics_endpoint_address(m->ep));
    cfg->on_live = on_live;
    cfg->live_ctx = m;
    cfg->live_bounds_ns = m->bounds_ns;
    cfg->live_nbounds = nb;
    cfg->live_native = true; /* latency, service, lag and TTFB as native histograms too */
    /* Classic buckets beside the native ones in the protobuf exposition only when asked for
     * (--metrics-buckets); remote-write carries both. */
    metrics_set_classic(m->reg, f->buckets != NULL, true);
    *out = m;
    return 0;
}

const char *cli_metrics_address(const struct run_metrics *m)
{
    return m->ep ? metrics_endpoint_address(m->ep) : "";
}

int cli_metrics_port(const struct run_metrics *m)
{
    return m->ep ? metrics_endpoint_port(m->ep) : 0;
}

/* The final values: nothing in flight or queued, knee_run_finished 1. */
static void publish_final(struct run_metrics *m)
{
    struct metrics_run_sample *s = &m->cur;
    for (size_t t = 0; t < m->nt; t++)
        s->in_flight[t] = s->queued[t] = 0;
    s->warmup = false;
    s->finished = true;
    metrics_run_publish(m->mr, s);
}

void cli_metrics_push_end(struct run_metrics *m, struct record_remote_write *rw)
{
    memset(rw, 0, sizeof *rw);
    if (!m || !m->push)
        return;
    publish_final(m);
    cli_push_end(m->push, rw);
    m->push_recorded = true;
}

int cli_metrics_finish(struct run_metrics *m, bool linger)
{
    if (!m)
        return 0;
    publish_final(m);
    int code = 0;
    if (m->push &&
        !m->push_recorded) { /* a command that keeps no run record of the pushes: one line says what failed */
        struct record_remote_write rw;
        cli_push_end(m->push, &rw);
        struct warn_list w = {0};
        cli_push_warn(&rw, &w);
        for (size_t i = 0; i < w.n; i++)
            fprintf(stderr, "knee %s: %s\n", m->cmd, w.items[i]);
        warn_list_release(&w);
        code = cli_push_failed_required(&rw) ? 1 : 0;
    }
    if (linger && m->linger_ns && m->ep) {
        char d[32];
        fprintf(stderr, "metrics: final values on http://%s/metrics for %s (Ctrl-C ends it)\n",
                metrics_endpoint_address(m->ep), units_fmt_duration(m->linger_ns, d, sizeof d));
        metrics_flags_linger(m->linger_ns);
    }
    run_metrics_free(m);
    return code;
}
