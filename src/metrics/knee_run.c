/* knee run's families over the registry: a table of counters, gauges and histograms, one
 * series per target (and per outcome for knee_requests), declared once; a publication copies
 * a struct metrics_run_sample into a snapshot and publishes it under one lock. */
#include "metrics/knee_run.h"

#include "core/err.h"

#include <stdlib.h>
#include <string.h>

/* Per-target families, in exposition order. */
enum tfam {
    T_PLANNED,
    T_SENT,
    T_DROPPED,
    T_CONNS_OPENED,
    T_CONNS_FAILED,
    T_BYTES_SENT,
    T_BYTES_RECEIVED,
    T_LATENCY,
    T_SERVICE,
    T_LAG,
    T_IN_FLIGHT,
    T_QUEUED,
    T_TTFB,
    T_COUNT
};

static const struct {
    const char *name;
    enum metrics_type type;
    const char *unit;
    const char *help;
} tfams[T_COUNT] = {
    [T_PLANNED] = {"knee_planned_requests", METRICS_COUNTER, NULL,
                   "Requests whose planned send time has come (after the warm-up)."},
    [T_SENT] = {"knee_sent_requests", METRICS_COUNTER, NULL, "Requests written to a connection (after the warm-up)."},
    [T_DROPPED] = {"knee_dropped_requests", METRICS_COUNTER, NULL,
                   "Planned requests never sent: no connection in time, --when-busy drop (after the warm-up)."},
    [T_CONNS_OPENED] = {"knee_connections_opened", METRICS_COUNTER, NULL,
                        "Connections established (warm-up included)."},
    [T_CONNS_FAILED] = {"knee_connections_failed", METRICS_COUNTER, NULL,
                        "Connection attempts that failed (warm-up included)."},
    [T_BYTES_SENT] = {"knee_sent_bytes", METRICS_COUNTER, "bytes",
                      "Request bytes written, counted when a request ends (warm-up included)."},
    [T_BYTES_RECEIVED] = {"knee_received_bytes", METRICS_COUNTER, "bytes", "Response bytes read (warm-up included)."},
    [T_LATENCY] = {"knee_latency_seconds", METRICS_HISTOGRAM, "seconds",
                   "Planned send to full response (closed loop: send to full response), every completed request "
                   "(after the warm-up)."},
    [T_SERVICE] = {"knee_service_seconds", METRICS_HISTOGRAM, "seconds",
                   "Actual send to full response (after the warm-up)."},
    [T_LAG] = {"knee_lag_seconds", METRICS_HISTOGRAM, "seconds",
               "Generator lag: planned send to actual send, the generator's own delay (after the warm-up)."},
    [T_IN_FLIGHT] = {"knee_in_flight_requests", METRICS_GAUGE, NULL,
                     "Requests sent and not yet answered, at the last merge (warm-up included)."},
    [T_QUEUED] = {"knee_queued_requests", METRICS_GAUGE, NULL,
                  "Requests waiting for a connection (open loop), at the last merge (warm-up included)."},
    [T_TTFB] = {"knee_ttfb_seconds", METRICS_HISTOGRAM, "seconds",
                "Actual send to the first response byte, requests that got one (after the warm-up)."},
};

enum gfam { G_WARMUP, G_FINISHED, G_LIMITED, G_COUNT };

static const struct {
    const char *name;
    const char *help;
} gfams[G_COUNT] = {
    [G_WARMUP] = {"knee_warmup", "1 while the warm-up runs: requests planned in it are not counted."},
    [G_FINISHED] = {"knee_run_finished", "1 once the run is over: every value is final (--metrics-linger)."},
    [G_LIMITED] = {"knee_generator_limited",
                   "1 when the generator could not keep to the plan (lag or on-time sends, as the summary warns)."},
};

struct metrics_run {
    struct metrics_registry *reg;
    size_t ntargets, nbounds;
    double bounds[METRICS_MAX_BOUNDS];
    int (*outcome_ids)[OUTCOME_COUNT];
    int (*ids)[T_COUNT];
    int resp_fid;                      /* knee_responses{target,code} */
    int (*code_ids)[RUN_STATUS_SLOTS]; /* its series per target and status slot, declared when first seen (0: none yet)
                                        */
    int proto_fid;                     /* knee_protocol_connections{target,protocol} */
    int (*proto_ids)[METRICS_PROTOCOLS]; /* its series, declared when first non-zero (as code_ids) */
    const char **names;                  /* the targets' names (copied) */
    bool new_series;                     /* a series was declared since the snapshot was made */
    int gids[G_COUNT];
    struct metrics_snapshot *snap;
};

void metrics_run_free(struct metrics_run *m)
{
    if (!m)
        return;
    metrics_snapshot_free(m->snap);
    free(m->outcome_ids);
    free(m->ids);
    free(m->code_ids);
    free(m->proto_ids);
    for (size_t t = 0; m->names && t < m->ntargets; t++)
        free((char *)m->names[t]);
    free(m->names);
    free(m);
}

int metrics_run_new(struct metrics_registry *reg, const char *const *targets, size_t ntargets, const double *bounds_s,
                    size_t nbounds, struct metrics_run **out, char *err, size_t errlen)
{
    static const char *const target_label[] = {"target"};
    static const char *const outcome_labels[] = {"target", "outcome"};
    *out = NULL;
    if (nbounds == 0 || nbounds > METRICS_MAX_BOUNDS)
        return knee_fail(err, errlen, KNEE_EINVAL, "metrics: 1..%d bucket bounds", METRICS_MAX_BOUNDS);
    struct metrics_run *m = xcalloc(1, sizeof *m);
    m->reg = reg;
    m->ntargets = ntargets;
    m->nbounds = nbounds;
    memcpy(m->bounds, bounds_s, nbounds * sizeof *bounds_s);
    m->outcome_ids = xcalloc(ntargets ? ntargets : 1, sizeof *m->outcome_ids);
    m->ids = xcalloc(ntargets ? ntargets : 1, sizeof *m->ids);
    int rc;

    struct metrics_family_spec req = {.name = "knee_requests",
                                      .help = "Planned requests by outcome (after the warm-up): ok, rejected, "
                                              "http_error, invalid, transport, timeout, dropped, cancelled.",
                                      .type = METRICS_COUNTER,
                                      .labels = outcome_labels,
                                      .nlabels = 2,
                                      .max_series = ntargets * OUTCOME_COUNT};
    int fid = rc = metrics_family_add(reg, &req, err, errlen);
    for (size_t t = 0; rc >= 0 && t < ntargets; t++) {
        for (int o = 0; rc >= 0 && o < OUTCOME_COUNT; o++) {
            const char *values[] = {targets[t], reqlog_outcome_name((enum reqlog_outcome)o)};
            rc = m->outcome_ids[t][o] = metrics_series_add(reg, fid, values, err, errlen);
        }
    }
    for (int f = 0; rc >= 0 && f < T_COUNT; f++) {
        struct metrics_family_spec spec = {.name = tfams[f].name,
                                           .help = tfams[f].help,
                                           .unit = tfams[f].unit,
                                           .type = tfams[f].type,
                                           .labels = target_label,
                                           .nlabels = 1,
                                           .bounds = m->bounds,
                                           .nbounds = tfams[f].type == METRICS_HISTOGRAM ? nbounds : 0,
                                           .max_series = ntargets,
                                           .native = tfams[f].type == METRICS_HISTOGRAM};
        fid = rc = metrics_family_add(reg, &spec, err, errlen);
        for (size_t t = 0; rc >= 0 && t < ntargets; t++)
            rc = m->ids[t][f] = metrics_series_add(reg, fid, &targets[t], err, errlen);
    }
    static const char *const code_labels[] = {"target", "code"};
    struct metrics_family_spec resp = {.name = "knee_responses",
                                       .help = "Responses by HTTP status (after the warm-up; a status line was read: "
                                               "ok, rejected, http_error, invalid); code other: outside 100..599.",
                                       .type = METRICS_COUNTER,
                                       .labels = code_labels,
                                       .nlabels = 2,
                                       .max_series = METRICS_SERIES_MAX};
    if (rc >= 0)
        rc = m->resp_fid = metrics_family_add(reg, &resp, err, errlen);
    static const char *const proto_labels[] = {"target", "protocol"};
    struct metrics_family_spec proto = {.name = "knee_protocol_connections",
                                        .help = "Connections that became ready, by protocol: h1 (HTTP/1.1), h2, "
                                                "h3 (QUIC) (warm-up included).",
                                        .type = METRICS_COUNTER,
                                        .labels = proto_labels,
                                        .nlabels = 2,
                                        .max_series = (ntargets ? ntargets : 1) * METRICS_PROTOCOLS};
    if (rc >= 0)
        rc = m->proto_fid = metrics_family_add(reg, &proto, err, errlen);
    m->proto_ids = xcalloc(ntargets ? ntargets : 1, sizeof *m->proto_ids);
    m->code_ids = xcalloc(ntargets ? ntargets : 1, sizeof *m->code_ids);
    m->names = xcalloc(ntargets ? ntargets : 1, sizeof *m->names);
    for (size_t t = 0; t < ntargets; t++)
        m->names[t] = xstrdup(targets[t]);
    for (int g = 0; rc >= 0 && g < G_COUNT; g++) {
        struct metrics_family_spec spec = {.name = gfams[g].name, .help = gfams[g].help, .type = METRICS_GAUGE};
        fid = rc = metrics_family_add(reg, &spec, err, errlen);
        if (rc >= 0)
            rc = m->gids[g] = metrics_series_add(reg, fid, NULL, err, errlen);
    }
    if (rc < 0) {
        metrics_run_free(m);
        return rc;
    }
    m->snap = metrics_snapshot_new(reg);
    *out = m;
    return 0;
}

const char *metrics_protocol_name(int protocol)
{
    static const char *const names[METRICS_PROTOCOLS] = {"h1", "h2", "h3"};
    return protocol >= 0 && protocol < METRICS_PROTOCOLS ? names[protocol] : NULL;
}

void metrics_run_sample_init(const struct metrics_run *m, struct metrics_run_sample *s)
{
    size_t n = m->ntargets ? m->ntargets : 1;
    memset(s, 0, sizeof *s);
    s->ntargets = m->ntargets;
    s->outcome = xcalloc(n, sizeof *s->outcome);
    s->status = xcalloc(n, sizeof *s->status);
    s->conns_proto = xcalloc(n, sizeof *s->conns_proto);
    uint64_t **counts[] = {&s->planned,    &s->sent,      &s->dropped,        &s->conns_opened, &s->conns_failed,
                           &s->bytes_sent, &s->in_flight, &s->bytes_received, &s->queued};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        *counts[i] = xcalloc(n, sizeof **counts[i]);
    struct prom_hist **hists[] = {&s->latency, &s->service, &s->lag, &s->ttfb};
    struct native_hist **nat[] = {&s->latency_native, &s->service_native, &s->lag_native, &s->ttfb_native};
    for (size_t i = 0; i < 4; i++) {
        *hists[i] = xcalloc(n, sizeof **hists[i]);
        *nat[i] = xcalloc(n, sizeof **nat[i]);
        for (size_t t = 0; t < m->ntargets; t++) {
            prom_init(&(*hists[i])[t], m->bounds, m->nbounds);
            native_init(&(*nat[i])[t], NATIVE_SCHEMA);
        }
    }
}

void metrics_run_sample_release(struct metrics_run_sample *s)
{
    struct native_hist *nat[] = {s->latency_native, s->service_native, s->lag_native, s->ttfb_native};
    for (size_t i = 0; i < 4; i++) {
        for (size_t t = 0; nat[i] && t < s->ntargets; t++)
            native_release(&nat[i][t]);
        free(nat[i]);
    }
    free(s->outcome);
    free(s->status);
    free(s->conns_proto);
    free(s->planned);
    free(s->sent);
    free(s->dropped);
    free(s->conns_opened);
    free(s->conns_failed);
    free(s->bytes_sent);
    free(s->bytes_received);
    free(s->in_flight);
    free(s->queued);
    free(s->latency);
    free(s->service);
    free(s->lag);
    free(s->ttfb);
    memset(s, 0, sizeof *s);
}

/* knee_responses: a series for every (target, code) seen so far, declared when first seen; a
 * code beyond the family's cap is left out (labels stay bounded). knee_protocol_connections
 * alike: a series once a target has a connection of that protocol. */
static void declare_series(struct metrics_run *m, const struct metrics_run_sample *s)
{
    for (size_t t = 0; t < m->ntargets; t++)
        for (size_t k = 0; k < RUN_STATUS_SLOTS; k++) {
            if (!s->status[t].n[k] || m->code_ids[t][k])
                continue;
            char code[16], why[160];
            int st = record_status_of_slot(k);
            if (st < 0)
                snprintf(code, sizeof code, "other");
            else
                snprintf(code, sizeof code, "%d", st);
            const char *values[] = {m->names[t], code};
            int id = metrics_series_add(m->reg, m->resp_fid, values, why, sizeof why);
            m->code_ids[t][k] = id >= 0 ? id + 1 : -1; /* -1: refused, never asked again */
            m->new_series |= id >= 0;
        }
    for (size_t t = 0; t < m->ntargets; t++)
        for (int k = 0; k < METRICS_PROTOCOLS; k++) {
            if (!s->conns_proto[t][k] || m->proto_ids[t][k])
                continue;
            char why[160];
            const char *values[] = {m->names[t], metrics_protocol_name(k)};
            int id = metrics_series_add(m->reg, m->proto_fid, values, why, sizeof why);
            m->proto_ids[t][k] = id >= 0 ? id + 1 : -1;
            m->new_series |= id >= 0;
        }
    if (m->new_series) { /* a snapshot holds the series declared before it */
        metrics_snapshot_free(m->snap);
        m->snap = metrics_snapshot_new(m->reg);
        m->new_series = false;
    }
}

int metrics_run_publish(struct metrics_run *m, const struct metrics_run_sample *s)
{
    if (s->ntargets != m->ntargets)
        return KNEE_EMISMATCH;
    declare_series(m, s);
    struct metrics_snapshot *snap = m->snap;
    for (size_t t = 0; t < m->ntargets; t++)
        for (size_t k = 0; k < RUN_STATUS_SLOTS; k++)
            if (m->code_ids[t][k] > 0)
                metrics_snapshot_set(snap, m->code_ids[t][k] - 1, (double)s->status[t].n[k]);
    for (size_t t = 0; t < m->ntargets; t++)
        for (int k = 0; k < METRICS_PROTOCOLS; k++)
            if (m->proto_ids[t][k] > 0)
                metrics_snapshot_set(snap, m->proto_ids[t][k] - 1, (double)s->conns_proto[t][k]);
    for (size_t t = 0; t < m->ntargets; t++) {
        for (int o = 0; o < OUTCOME_COUNT; o++)
            metrics_snapshot_set(snap, m->outcome_ids[t][o], (double)s->outcome[t][o]);
        const uint64_t counts[] = {s->planned[t],      s->sent[t],       s->dropped[t],       s->conns_opened[t],
                                   s->conns_failed[t], s->bytes_sent[t], s->bytes_received[t]};
        for (int f = T_PLANNED; f <= T_BYTES_RECEIVED; f++)
            metrics_snapshot_set(snap, m->ids[t][f], (double)counts[f]);
        metrics_snapshot_set(snap, m->ids[t][T_IN_FLIGHT], (double)s->in_flight[t]);
        metrics_snapshot_set(snap, m->ids[t][T_QUEUED], (double)s->queued[t]);
        const int fams[] = {T_LATENCY, T_SERVICE, T_LAG, T_TTFB};
        const struct prom_hist *h[] = {&s->latency[t], &s->service[t], &s->lag[t], &s->ttfb[t]};
        const struct native_hist *nh[] = {&s->latency_native[t], &s->service_native[t], &s->lag_native[t],
                                          &s->ttfb_native[t]};
        for (int k = 0; k < 4; k++) {
            int rc = metrics_snapshot_set_prom(snap, m->ids[t][fams[k]], h[k], 1.0);
            if (!rc)
                rc = metrics_snapshot_set_native(snap, m->ids[t][fams[k]], nh[k]);
            if (rc)
                return rc;
        }
    }
    metrics_snapshot_set(snap, m->gids[G_WARMUP], s->warmup ? 1 : 0);
    metrics_snapshot_set(snap, m->gids[G_FINISHED], s->finished ? 1 : 0);
    metrics_snapshot_set(snap, m->gids[G_LIMITED], s->generator_limited ? 1 : 0);
    return metrics_publish(m->reg, snap);
}
