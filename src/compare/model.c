/* The load model of a run and the differences that make two runs different experiments. */
#include "compare/internal.h"

#include "core/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Two measured settings that should be equal: equal, or both unknown (NAN). Rates and times
 * written by knee are round-trip doubles, so a relative 1e-9 is only rounding. */
static bool same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

static const char *secs(double s, char *buf, size_t len)
{
    if (isnan(s))
        return "none";
    return units_fmt_seconds(s, 4, buf, len);
}

/* One difference, cut to its 200 bytes. */
static void add_diff(char diffs[][200], size_t max, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_diff(char diffs[][200], size_t max, size_t *n, const char *fmt, ...)
{
    if (*n < max) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(diffs[*n], 200, fmt, ap);
        va_end(ap);
    }
    (*n)++;
}
#define ADD(...) add_diff(diffs, max, &n, __VA_ARGS__)

/* --stages: the same stages in the same order, or the first that differs. */
static void stages_diff(const struct compare_model *a, const struct compare_model *b, char diffs[][200], size_t max,
                        size_t *np)
{
    size_t n = *np;
    if (a->nstages != b->nstages) {
        ADD("stages: %zu vs %zu", a->nstages, b->nstages);
    } else {
        for (size_t i = 0; i < a->nstages; i++) {
            const struct run_stage *p = &a->stages[i], *q = &b->stages[i];
            if (p->clients != q->clients) {
                ADD("stage %zu: %s vs %s", i + 1, p->clients ? "clients" : "a rate", q->clients ? "clients" : "a rate");
                break;
            }
            if (!same(p->from, q->from) || !same(p->to, q->to) || p->duration_ns != q->duration_ns) {
                char x[64], y[64], u[64], v[64];
                ADD("stage %zu: %s..%s/s for %.6g s vs %s..%s/s for %.6g s", i + 1,
                    units_fmt_rate(p->from, x, sizeof x), units_fmt_rate(p->to, y, sizeof y),
                    (double)p->duration_ns / 1e9, units_fmt_rate(q->from, u, sizeof u),
                    units_fmt_rate(q->to, v, sizeof v), (double)q->duration_ns / 1e9);
                break;
            }
        }
    }
    *np = n;
}

size_t compare_model_diff(const struct compare_model *a, const struct compare_model *b, char diffs[][200], size_t max)
{
    size_t n = 0;
    char x[64], y[64];
    if (a->closed_known && b->closed_known && a->closed_loop != b->closed_loop)
        ADD("loop: %s vs %s", a->closed_loop ? "closed" : "open", b->closed_loop ? "closed" : "open");
    if (!a->known || !b->known) {
        if (!a->known && !b->known)
            ADD("load model unknown on both sides (no run JSON)");
        else
            ADD("load model unknown on one side (no run JSON)");
    }
    if (a->known && b->known && a->closed_loop == b->closed_loop) {
        if (!a->closed_loop) {
            if (strcmp(a->arrivals, b->arrivals) != 0)
                ADD("arrivals: %s vs %s", a->arrivals, b->arrivals);
            if (a->ramp != b->ramp || (a->ramp && (!same(a->ramp_from, b->ramp_from) || !same(a->ramp_to, b->ramp_to))))
                ADD("ramp: %s vs %s", a->ramp ? "yes" : "no", b->ramp ? "yes" : "no");
            else if (a->nstages || b->nstages)
                stages_diff(a, b, diffs, max, &n);
            else if (!a->ramp && !same(a->rate, b->rate))
                ADD("rate: %s/s vs %s/s", units_fmt_rate(a->rate, x, sizeof x), units_fmt_rate(b->rate, y, sizeof y));
            if (a->pool_cap != b->pool_cap)
                ADD("connections (pool cap): %llu vs %llu", (unsigned long long)a->pool_cap,
                    (unsigned long long)b->pool_cap);
            if (strcmp(a->when_busy, b->when_busy) != 0)
                ADD("when busy: %s vs %s", a->when_busy, b->when_busy);
        } else if (!same(a->think_s, b->think_s)) {
            ADD("think time: %s vs %s", secs(a->think_s, x, sizeof x), secs(b->think_s, y, sizeof y));
        }
        if (!same(a->duration_s, b->duration_s))
            ADD("duration: %s vs %s", secs(a->duration_s, x, sizeof x), secs(b->duration_s, y, sizeof y));
        if (a->requests != b->requests)
            ADD("requests: %llu vs %llu", (unsigned long long)a->requests, (unsigned long long)b->requests);
        if (!same(a->warmup_s, b->warmup_s))
            ADD("warm-up: %s vs %s", secs(a->warmup_s, x, sizeof x), secs(b->warmup_s, y, sizeof y));
        if (!same(a->timeout_s, b->timeout_s))
            ADD("timeout: %s vs %s", secs(a->timeout_s, x, sizeof x), secs(b->timeout_s, y, sizeof y));
        if (a->keepalive != b->keepalive)
            ADD("keep-alive: %s vs %s", a->keepalive ? "on" : "off", b->keepalive ? "on" : "off");
    }
    if (a->ntargets != b->ntargets) {
        ADD("targets: %zu vs %zu", a->ntargets, b->ntargets);
        return n;
    }
    for (size_t i = 0; i < a->ntargets; i++) {
        const struct compare_model_target *p = &a->targets[i], *q = &b->targets[i];
        /* a target is the same when its name or its request target (path?query) is */
        bool named = strcmp(p->name, q->name) == 0;
        bool pathed = p->path[0] && q->path[0] && strcmp(p->path, q->path) == 0;
        if (!named && !pathed)
            ADD("target %zu: %s (%s) vs %s (%s)", i + 1, p->name, p->path[0] ? p->path : "?", q->name,
                q->path[0] ? q->path : "?");
        else if (named && p->path[0] && q->path[0] && !pathed)
            ADD("target %s: path %s vs %s", p->name, p->path, q->path);
        if (!a->known || !b->known)
            continue;
        if (!a->closed_loop && !same(p->planned_rate, q->planned_rate))
            ADD("target %s: rate (mix) %s/s vs %s/s", p->name, units_fmt_rate(p->planned_rate, x, sizeof x),
                units_fmt_rate(q->planned_rate, y, sizeof y));
        if (a->closed_loop && p->clients != q->clients)
            ADD("target %s: clients (mix) %llu vs %llu", p->name, (unsigned long long)p->clients,
                (unsigned long long)q->clients);
    }
    return n;
}

void compare_model_describe(const struct compare_model *m, char *buf, size_t len)
{
    char r[64], d[64], w[64];
    if (!m->known) {
        snprintf(buf, len, "%s loop (no run JSON: the rest of the load model is unknown), %zu target%s",
                 !m->closed_known ? "unknown"
                 : m->closed_loop ? "closed"
                                  : "open",
                 m->ntargets, m->ntargets == 1 ? "" : "s");
        return;
    }
    char shape[160];
    if (m->closed_loop) {
        uint64_t clients = 0;
        for (size_t i = 0; i < m->ntargets; i++)
            clients += m->targets[i].clients;
        if (m->nstages) /* closed-loop stages: clients is their peak */
            snprintf(shape, sizeof shape, "closed loop, %zu stage%s (--stages) up to %llu clients, think %s",
                     m->nstages, m->nstages == 1 ? "" : "s", (unsigned long long)clients,
                     units_fmt_seconds(m->think_s, 4, w, sizeof w));
        else
            snprintf(shape, sizeof shape, "closed loop, %llu clients, think %s", (unsigned long long)clients,
                     units_fmt_seconds(m->think_s, 4, w, sizeof w));
    } else if (m->nstages) {
        snprintf(shape, sizeof shape, "open loop, %zu stage%s (--stages), %s arrivals", m->nstages,
                 m->nstages == 1 ? "" : "s", m->arrivals);
    } else if (m->ramp) {
        char f[64];
        snprintf(shape, sizeof shape, "open loop, ramp %s/s to %s/s, %s arrivals",
                 units_fmt_rate(m->ramp_from, f, sizeof f), units_fmt_rate(m->ramp_to, r, sizeof r), m->arrivals);
    } else {
        snprintf(shape, sizeof shape, "open loop, %s/s %s arrivals", units_fmt_rate(m->rate, r, sizeof r), m->arrivals);
    }
    char bound[80];
    if (!isnan(m->duration_s) && m->duration_s > 0)
        snprintf(bound, sizeof bound, "%s", units_fmt_seconds(m->duration_s, 4, d, sizeof d));
    else
        snprintf(bound, sizeof bound, "%llu requests", (unsigned long long)m->requests);
    snprintf(buf, len, "%s, %s, warm-up %s, %zu target%s", shape, bound,
             m->warmup_s > 0 ? units_fmt_seconds(m->warmup_s, 4, w, sizeof w) : "none", m->ntargets,
             m->ntargets == 1 ? "" : "s");
}
