/* knee serve's families: one per field of struct serve_counters, label set {server, preset}
 * per server, and the server-time histogram by outcome (ok, rejected) when the servers record
 * it. Polled by a collector on the endpoint's thread (serve_counters() and serve_time() are
 * safe from any thread), so a scrape always sees the values of that moment. */
#include "metrics/knee_serve.h"

#include "core/err.h"

#include <stdlib.h>
#include <string.h>

enum fam {
    F_ACTIVE,
    F_WAITING,
    F_OPEN_CONNECTIONS,
    F_UPTIME,
    F_EXECUTED,
    F_OK,
    F_REJECTED,
    F_CANCELLED,
    F_WRITE_FAILURES,
    F_REQUESTS,
    F_BAD_REQUESTS,
    F_HEADER_TIMEOUTS,
    F_CONNECTIONS,
    F_REFUSED,
    F_PAUSES,
    F_TLS_FAILED,
    F_H3_REQUESTS,
    F_COUNT
};

static const struct {
    const char *name;
    enum metrics_type type;
    const char *unit;
    const char *help;
} fams[F_COUNT] = {
    [F_ACTIVE] = {"knee_serve_active_requests", METRICS_GAUGE, NULL,
                  "Requests holding their turn now: working (sleep, CPU, dependencies)."},
    [F_WAITING] = {"knee_serve_waiting_requests", METRICS_GAUGE, NULL,
                   "Requests waiting now for a slot, the report lock or a CPU worker."},
    [F_OPEN_CONNECTIONS] = {"knee_serve_open_connections", METRICS_GAUGE, NULL, "Connections open now."},
    [F_UPTIME] = {"knee_serve_uptime_seconds", METRICS_GAUGE, "seconds", "Time since the server started."},
    [F_EXECUTED] = {"knee_serve_executed_requests", METRICS_COUNTER, NULL, "Work requests whose work ran to the end."},
    [F_OK] = {"knee_serve_ok_requests", METRICS_COUNTER, NULL, "Work requests answered 200."},
    [F_REJECTED] = {"knee_serve_rejected_requests", METRICS_COUNTER, NULL,
                    "Work requests answered 503 QUEUE_TIMEOUT (no slot within the acquire timeout)."},
    [F_CANCELLED] = {"knee_serve_cancelled_requests", METRICS_COUNTER, NULL,
                     "Work requests dropped while waiting because the client left."},
    [F_WRITE_FAILURES] = {"knee_serve_write_failures", METRICS_COUNTER, NULL,
                          "Responses that could not be written (the client was gone)."},
    [F_REQUESTS] = {"knee_serve_requests", METRICS_COUNTER, NULL, "Requests parsed, /health and /stats included."},
    [F_BAD_REQUESTS] = {"knee_serve_bad_requests", METRICS_COUNTER, NULL,
                        "Requests answered 400, 413, 414, 431, 501 or 505."},
    [F_HEADER_TIMEOUTS] = {"knee_serve_header_timeouts", METRICS_COUNTER, NULL,
                           "Connections closed by the header-read timeout (408)."},
    [F_CONNECTIONS] = {"knee_serve_connections", METRICS_COUNTER, NULL, "Connections accepted."},
    [F_REFUSED] = {"knee_serve_refused_connections", METRICS_COUNTER, NULL,
                   "Connections turned away by the connection limit (503 CONN_LIMIT)."},
    [F_PAUSES] = {"knee_serve_pauses", METRICS_COUNTER, NULL, "Report-job pauses started (the table lock taken)."},
    [F_TLS_FAILED] = {"knee_serve_tls_handshake_failures", METRICS_COUNTER, NULL,
                      "TLS handshakes that failed (an alert, a protocol error, the client gone)."},
    [F_H3_REQUESTS] = {"knee_serve_h3_requests", METRICS_COUNTER, NULL, "Requests that came over HTTP/3 (--h3)."},
};

static double value_of(const struct serve_counters *c, enum fam f)
{
    switch (f) {
    case F_ACTIVE:
        return (double)c->active;
    case F_WAITING:
        return (double)c->waiting;
    case F_OPEN_CONNECTIONS:
        return (double)c->connections;
    case F_UPTIME:
        return c->uptime_s;
    case F_EXECUTED:
        return (double)c->executed;
    case F_OK:
        return (double)c->ok;
    case F_REJECTED:
        return (double)c->rejected;
    case F_CANCELLED:
        return (double)c->cancelled;
    case F_WRITE_FAILURES:
        return (double)c->write_failures;
    case F_REQUESTS:
        return (double)c->requests;
    case F_BAD_REQUESTS:
        return (double)c->bad_requests;
    case F_HEADER_TIMEOUTS:
        return (double)c->timeouts;
    case F_CONNECTIONS:
        return (double)c->connections_total;
    case F_REFUSED:
        return (double)c->conn_refused;
    case F_PAUSES:
        return (double)c->pauses;
    case F_TLS_FAILED:
        return (double)c->tls_failed;
    case F_H3_REQUESTS:
        return (double)c->h3;
    case F_COUNT:
        break;
    }
    return 0;
}

struct metrics_serve {
    struct metrics_registry *reg;
    size_t n;
    struct serve_handle **h;
    int (*ids)[F_COUNT];
    int (*time_ids)[SERVE_TIME_CLASSES]; /* knee_serve_time_seconds; NULL without bounds */
    bool attached;
};

static const char *const time_class_names[SERVE_TIME_CLASSES] = {
    [SERVE_TIME_OK] = "ok", [SERVE_TIME_REJECTED] = "rejected"};

static void fill(const struct metrics_serve *m, struct metrics_snapshot *snap, size_t i, const struct serve_counters *c)
{
    for (int f = 0; f < F_COUNT; f++)
        metrics_snapshot_set(snap, m->ids[i][f], value_of(c, (enum fam)f));
}

static void collect(void *ctx, struct metrics_snapshot *snap)
{
    const struct metrics_serve *m = ctx;
    for (size_t i = 0; i < m->n; i++) {
        struct serve_counters c;
        serve_counters(m->h[i], &c);
        fill(m, snap, i, &c);
        for (int k = 0; m->time_ids && k < SERVE_TIME_CLASSES; k++) {
            struct serve_time_hist t;
            serve_time(m->h[i], (enum serve_time_class)k, &t);
            metrics_snapshot_set_hist(snap, m->time_ids[i][k], t.counts, t.nbounds + 1, (double)t.sum_ns / 1e9);
        }
    }
}

/* knee_serve_time_seconds over the servers' time_bounds_ns (every server's the same), when
 * they record it. Returns 0 or an error of metrics_family_add/_series_add. */
static int time_family(struct metrics_serve *m, char *err, size_t errlen)
{
    static const char *const labels[] = {"server", "preset", "outcome"};
    const struct serve_config *c0 = serve_config_of(m->h[0]);
    if (!c0->ntime_bounds)
        return 0;
    double bounds[SERVE_TIME_MAX_BOUNDS];
    for (unsigned b = 0; b < c0->ntime_bounds; b++)
        bounds[b] = (double)c0->time_bounds_ns[b] / 1e9;
    for (size_t i = 1; i < m->n; i++) {
        const struct serve_config *c = serve_config_of(m->h[i]);
        if (c->ntime_bounds != c0->ntime_bounds ||
            memcmp(c->time_bounds_ns, c0->time_bounds_ns, c0->ntime_bounds * sizeof *c0->time_bounds_ns) != 0)
            return knee_fail(err, errlen, KNEE_EINVAL, "knee_serve_time_seconds: the servers' bounds differ");
    }
    struct metrics_family_spec spec = {
        .name = "knee_serve_time_seconds",
        .help = "Server time of work requests: request complete to response queued (ok: 200, rejected: 503 "
                "QUEUE_TIMEOUT).",
        .unit = "seconds",
        .type = METRICS_HISTOGRAM,
        .labels = labels,
        .nlabels = 3,
        .bounds = bounds,
        .nbounds = c0->ntime_bounds,
        .max_series = m->n * SERVE_TIME_CLASSES};
    int fid = metrics_family_add(m->reg, &spec, err, errlen);
    if (fid < 0)
        return fid;
    m->time_ids = xcalloc(m->n, sizeof *m->time_ids);
    for (size_t i = 0; i < m->n; i++)
        for (int k = 0; k < SERVE_TIME_CLASSES; k++) {
            const char *values[] = {serve_address(m->h[i]), serve_config_of(m->h[i])->preset, time_class_names[k]};
            int id = metrics_series_add(m->reg, fid, values, err, errlen);
            if (id < 0)
                return id;
            m->time_ids[i][k] = id;
        }
    return 0;
}

int metrics_serve_new(struct metrics_registry *reg, struct serve_handle *const *handles, size_t n,
                      struct metrics_serve **out, char *err, size_t errlen)
{
    static const char *const labels[] = {"server", "preset"};
    *out = NULL;
    int fid[F_COUNT];
    for (int f = 0; f < F_COUNT; f++) {
        struct metrics_family_spec spec = {.name = fams[f].name,
                                           .help = fams[f].help,
                                           .unit = fams[f].unit,
                                           .type = fams[f].type,
                                           .labels = labels,
                                           .nlabels = 2,
                                           .max_series = n};
        fid[f] = metrics_family_add(reg, &spec, err, errlen);
        if (fid[f] < 0)
            return fid[f];
    }
    struct metrics_serve *m = xcalloc(1, sizeof *m);
    m->reg = reg;
    m->n = n;
    m->h = xcalloc(n ? n : 1, sizeof *m->h);
    m->ids = xcalloc(n ? n : 1, sizeof *m->ids);
    for (size_t i = 0; i < n; i++) {
        m->h[i] = handles[i];
        const char *values[] = {serve_address(handles[i]), serve_config_of(handles[i])->preset};
        for (int f = 0; f < F_COUNT; f++) {
            int id = metrics_series_add(reg, fid[f], values, err, errlen);
            if (id < 0) {
                metrics_serve_free(m);
                return id;
            }
            m->ids[i][f] = id;
        }
    }
    int rc = n ? time_family(m, err, errlen) : 0;
    if (rc < 0) {
        metrics_serve_free(m);
        return rc;
    }
    metrics_set_collector(reg, collect, m);
    m->attached = true;
    *out = m;
    return 0;
}

void metrics_serve_detach(struct metrics_serve *m)
{
    if (!m->attached)
        return;
    metrics_set_collector(m->reg, NULL, NULL);
    m->attached = false;
    struct metrics_snapshot *snap = metrics_snapshot_new(m->reg);
    collect(m, snap);
    metrics_publish(m->reg, snap);
    metrics_snapshot_free(snap);
}

void metrics_serve_publish(struct metrics_serve *m, const struct serve_counters *c)
{
    struct metrics_snapshot *snap = metrics_snapshot_new(m->reg);
    for (size_t i = 0; i < m->n; i++)
        fill(m, snap, i, &c[i]);
    metrics_publish(m->reg, snap);
    metrics_snapshot_free(snap);
}

void metrics_serve_free(struct metrics_serve *m)
{
    if (!m)
        return;
    if (m->attached)
        metrics_set_collector(m->reg, NULL, NULL);
    free(m->h);
    free(m->ids);
    free(m->time_ids);
    free(m);
}
