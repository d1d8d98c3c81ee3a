/* The metrics registry: families and their bounded series, the published values behind a
 * mutex, producers' snapshots, and the exposition in both text formats. Label pairs are
 * escaped once, when a series is declared (the escaping is the same in both formats), and
 * histogram "le" values are formatted once per family, so a scrape only formats numbers. */
#include "metrics/metrics.h"

#include "core/err.h"
#include "core/grow.h"
#include "metrics/internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- names and values ------------------------------------------------------------------ */

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > METRICS_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* Suffixes the expositions append to sample names; a family named with one could collide
 * with another family's samples (OpenMetrics forbids the ambiguity). */
static const char *const reserved_suffixes[] = {"_total", "_created", "_bucket", "_count",
                                                "_sum",   "_gcount",  "_gsum",   "_info"};

static int check_spec(const struct metrics_family_spec *s, char *err, size_t errlen)
{
    const char *name = s->name ? s->name : "";
    if (!name_ok(name))
        return knee_fail(err, errlen, KNEE_EINVAL, "metrics: family name '%.*s' is not [a-zA-Z_][a-zA-Z0-9_]*",
                         METRICS_NAME_MAX, name);
    for (size_t i = 0; i < sizeof reserved_suffixes / sizeof *reserved_suffixes; i++)
        if (ends_with(name, reserved_suffixes[i]))
            return knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: a family name must not end in %s%s", name,
                             reserved_suffixes[i],
                             s->type == METRICS_COUNTER ? " (counters get _total on exposition)" : "");
    if (!s->help || !*s->help || strlen(s->help) > METRICS_HELP_MAX || !metrics_utf8_valid(s->help, strlen(s->help)))
        return knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: help must be 1..%d bytes of UTF-8", name,
                         METRICS_HELP_MAX);
    if (s->unit) {
        char suffix[METRICS_NAME_MAX + 2];
        if (!name_ok(s->unit) || (size_t)snprintf(suffix, sizeof suffix, "_%s", s->unit) >= sizeof suffix ||
            !ends_with(name, suffix))
            return knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: the name must end in _%s, its unit", name,
                             s->unit);
    }
    if (s->type != METRICS_COUNTER && s->type != METRICS_GAUGE && s->type != METRICS_HISTOGRAM)
        return knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: unknown type", name);
    if (s->nlabels > METRICS_MAX_LABELS || (s->nlabels && !s->labels))
        return knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: at most %d label names", name, METRICS_MAX_LABELS);
    for (size_t i = 0; i < s->nlabels; i++) {
        const char *l = s->labels[i] ? s->labels[i] : "";
        if (!name_ok(l) || strncmp(l, "__", 2) == 0 || strcmp(l, "le") == 0 || strcmp(l, "quantile") == 0)
            return knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: label name '%.*s' is not allowed", name,
                             METRICS_NAME_MAX, l);
        for (size_t j = 0; j < i; j++)
            if (strcmp(l, s->labels[j]) == 0)
                return knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: label '%s' twice", name, l);
    }
    if (s->type == METRICS_HISTOGRAM) {
        if (s->nbounds == 0 || s->nbounds > METRICS_MAX_BOUNDS || !s->bounds)
            return knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: a histogram needs 1..%d bucket bounds", name,
                             METRICS_MAX_BOUNDS);
        for (size_t i = 0; i < s->nbounds; i++)
            if (!isfinite(s->bounds[i]) || (i > 0 && !(s->bounds[i] > s->bounds[i - 1])))
                return knee_fail(err, errlen, KNEE_EINVAL,
                                 "metrics: %s: bucket bounds must be finite and strictly increasing", name);
    }
    if (s->max_series > METRICS_SERIES_MAX)
        return knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: max_series above %d", name, METRICS_SERIES_MAX);
    return 0;
}

/* ---- registry ---------------------------------------------------------------------------- */

struct metrics_registry *metrics_new(void)
{
    struct metrics_registry *r = xcalloc(1, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    r->classic_rw = true;
    return r;
}

void metrics_free(struct metrics_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->nseries; i++) {
        struct series *s = &reg->series[i];
        for (size_t k = 0; k < reg->fam[s->family]->nlabels; k++)
            free(s->values[k]);
        free(s->values);
        free(s->labels);
    }
    for (size_t i = 0; i < reg->nfam; i++) {
        free(reg->fam[i]->ids);
        free(reg->fam[i]);
    }
    metrics_snapshot_free(reg->csnap);
    for (size_t i = 0; i < reg->nseries; i++)
        native_release(&reg->pubnat[i]);
    free(reg->pubnat);
    free(reg->series);
    free(reg->pub);
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

int metrics_family_add(struct metrics_registry *reg, const struct metrics_family_spec *spec, char *err, size_t errlen)
{
    int rc = check_spec(spec, err, errlen);
    if (rc)
        return rc;
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < reg->nfam; i++) {
        if (strcmp(reg->fam[i]->name, spec->name) == 0) {
            rc = knee_fail(err, errlen, KNEE_EINVAL, "metrics: family %s declared twice", spec->name);
            goto out;
        }
    }
    if (reg->nfam == METRICS_MAX_FAMILIES) {
        rc = knee_fail(err, errlen, KNEE_ETOOBIG, "metrics: more than %d families", METRICS_MAX_FAMILIES);
        goto out;
    }
    struct family *f = xcalloc(1, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", spec->name);
    snprintf(f->help, sizeof f->help, "%s", spec->help);
    snprintf(f->unit, sizeof f->unit, "%s", spec->unit ? spec->unit : "");
    f->type = spec->type;
    f->nlabels = spec->nlabels;
    for (size_t i = 0; i < spec->nlabels; i++)
        snprintf(f->labels[i], sizeof f->labels[i], "%s", spec->labels[i]);
    if (spec->type == METRICS_HISTOGRAM) {
        f->nbounds = spec->nbounds;
        for (size_t i = 0; i < spec->nbounds; i++) {
            f->bounds[i] = spec->bounds[i];
            metrics_format_le(spec->bounds[i], f->le[i], sizeof f->le[i]);
        }
    }
    f->max_series = spec->max_series ? spec->max_series : METRICS_SERIES_DEFAULT;
    f->native = spec->type == METRICS_HISTOGRAM && spec->native;
    reg->fam[reg->nfam] = f;
    rc = (int)reg->nfam++;
out:
    pthread_mutex_unlock(&reg->mu);
    return rc;
}

/* `name="value"` pairs, escaped as both formats want label values. */
static char *format_labels(const struct family *f, const char *const *values)
{
    size_t cap = 1;
    for (size_t i = 0; i < f->nlabels; i++)
        cap += strlen(f->labels[i]) + 4 + 2 * strlen(values[i]);
    char *buf = xmalloc(cap);
    size_t n = 0;
    for (size_t i = 0; i < f->nlabels; i++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=\"", i ? "," : "", f->labels[i]);
        n += metrics_escape(values[i], strlen(values[i]), false, buf + n, cap - n);
        buf[n++] = '"';
    }
    buf[n] = '\0';
    return buf;
}

static bool same_values(const struct series *s, const char *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s->values[i], values[i]) != 0)
            return false;
    return true;
}

int metrics_series_add(struct metrics_registry *reg, int family, const char *const *values, char *err, size_t errlen)
{
    int rc;
    pthread_mutex_lock(&reg->mu);
    if (family < 0 || (size_t)family >= reg->nfam) {
        rc = knee_fail(err, errlen, KNEE_EINVAL, "metrics: no family %d", family);
        goto out;
    }
    struct family *f = reg->fam[family];
    for (size_t i = 0; i < f->nlabels; i++) {
        const char *v = values ? values[i] : NULL;
        if (!v || strlen(v) > METRICS_LABEL_VALUE_MAX || !metrics_utf8_valid(v, strlen(v))) {
            rc = knee_fail(err, errlen, KNEE_EINVAL, "metrics: %s: label %s: the value must be 0..%d bytes of UTF-8",
                           f->name, f->labels[i], METRICS_LABEL_VALUE_MAX);
            goto out;
        }
    }
    for (size_t i = 0; i < f->nids; i++) {
        if (same_values(&reg->series[f->ids[i]], values, f->nlabels)) {
            rc = f->ids[i];
            goto out;
        }
    }
    if (f->nids >= f->max_series || reg->nseries >= METRICS_TOTAL_SERIES_MAX) {
        rc = knee_fail(err, errlen, KNEE_ETOOBIG,
                       "metrics: %s: more than %zu label sets; labels must come from bounded sets (targets, "
                       "outcome classes, servers), never from per-request values",
                       f->name, f->nids >= f->max_series ? f->max_series : (size_t)METRICS_TOTAL_SERIES_MAX);
        goto out;
    }
    reg->series = grow_array(reg->series, &reg->capseries, reg->nseries + 1, sizeof *reg->series, 64);
    reg->pubnat = grow_array(reg->pubnat, &reg->capnat, reg->nseries + 1, sizeof *reg->pubnat, 64);
    native_init(&reg->pubnat[reg->nseries], NATIVE_SCHEMA);
    f->ids = grow_array(f->ids, &f->capids, f->nids + 1, sizeof *f->ids, 16);
    size_t need = reg->nvalues + slots_of(f);
    reg->pub = grow_array(reg->pub, &reg->capvalues, need, sizeof *reg->pub, 256);
    memset(reg->pub + reg->nvalues, 0, slots_of(f) * sizeof *reg->pub);
    struct series *s = &reg->series[reg->nseries];
    s->family = family;
    s->off = reg->nvalues;
    s->labels = format_labels(f, values);
    s->values = xcalloc(f->nlabels ? f->nlabels : 1, sizeof *s->values);
    for (size_t i = 0; i < f->nlabels; i++)
        s->values[i] = xstrdup(values[i]);
    reg->nvalues = need;
    f->ids[f->nids++] = (int)reg->nseries;
    rc = (int)reg->nseries++;
out:
    pthread_mutex_unlock(&reg->mu);
    return rc;
}

size_t metrics_series_count(struct metrics_registry *reg)
{
    pthread_mutex_lock(&reg->mu);
    size_t n = reg->nseries;
    pthread_mutex_unlock(&reg->mu);
    return n;
}

/* ---- snapshots --------------------------------------------------------------------------- */

/* Caller holds reg->mu. */
static struct metrics_snapshot *snapshot_build(const struct metrics_registry *reg)
{
    struct metrics_snapshot *s = xcalloc(1, sizeof *s);
    s->reg = reg;
    s->nseries = reg->nseries;
    s->slots = xcalloc(s->nseries ? s->nseries : 1, sizeof *s->slots);
    for (size_t i = 0; i < s->nseries; i++) {
        const struct family *f = reg->fam[reg->series[i].family];
        s->slots[i] = (struct slot){.off = reg->series[i].off, .type = f->type, .fam = f};
    }
    s->nvalues = reg->nvalues;
    s->v = xcalloc(s->nvalues ? s->nvalues : 1, sizeof *s->v);
    s->nat = xcalloc(s->nseries ? s->nseries : 1, sizeof *s->nat);
    for (size_t i = 0; i < s->nseries; i++)
        native_init(&s->nat[i], NATIVE_SCHEMA);
    return s;
}

struct metrics_snapshot *metrics_snapshot_new(struct metrics_registry *reg)
{
    pthread_mutex_lock(&reg->mu);
    struct metrics_snapshot *s = snapshot_build(reg);
    pthread_mutex_unlock(&reg->mu);
    return s;
}

void metrics_snapshot_free(struct metrics_snapshot *snap)
{
    if (!snap)
        return;
    for (size_t i = 0; i < snap->nseries; i++)
        native_release(&snap->nat[i]);
    free(snap->nat);
    free(snap->slots);
    free(snap->v);
    free(snap);
}

int metrics_snapshot_set(struct metrics_snapshot *snap, int series, double v)
{
    if (series < 0 || (size_t)series >= snap->nseries)
        return KNEE_EINVAL;
    const struct slot *sl = &snap->slots[series];
    if (sl->type == METRICS_HISTOGRAM || (sl->type == METRICS_COUNTER && !(isfinite(v) && v >= 0)))
        return KNEE_EINVAL;
    snap->v[sl->off] = v;
    snap->slots[series].touched = true;
    return 0;
}

int metrics_snapshot_set_hist(struct metrics_snapshot *snap, int series, const uint64_t *counts, size_t n, double sum)
{
    if (series < 0 || (size_t)series >= snap->nseries)
        return KNEE_EINVAL;
    const struct slot *sl = &snap->slots[series];
    if (sl->type != METRICS_HISTOGRAM || n != sl->fam->nbounds + 1)
        return KNEE_EINVAL;
    for (size_t i = 0; i < n; i++)
        snap->v[sl->off + i] = (double)counts[i];
    snap->v[sl->off + n] = sum;
    snap->slots[series].touched = true;
    return 0;
}

int metrics_snapshot_set_prom(struct metrics_snapshot *snap, int series, const struct prom_hist *p, double scale)
{
    if (series < 0 || (size_t)series >= snap->nseries || !(scale > 0) || !isfinite(scale))
        return KNEE_EINVAL;
    const struct slot *sl = &snap->slots[series];
    if (sl->type != METRICS_HISTOGRAM)
        return KNEE_EINVAL;
    if (p->nbounds != sl->fam->nbounds)
        return KNEE_EMISMATCH;
    for (size_t i = 0; i < p->nbounds; i++) {
        double want = sl->fam->bounds[i], have = p->bounds[i] * scale;
        if (fabs(have - want) > 1e-9 * fmax(fabs(want), fabs(have)))
            return KNEE_EMISMATCH;
    }
    return metrics_snapshot_set_hist(snap, series, p->counts, p->nbounds + 1, p->sum * scale);
}

int metrics_snapshot_set_native(struct metrics_snapshot *snap, int series, const struct native_hist *h)
{
    if (series < 0 || (size_t)series >= snap->nseries)
        return KNEE_EINVAL;
    struct slot *sl = &snap->slots[series];
    if (!sl->fam->native || h->schema != NATIVE_SCHEMA)
        return KNEE_EINVAL;
    native_copy(&snap->nat[series], h);
    sl->native_touched = true;
    return 0;
}

void metrics_set_classic(struct metrics_registry *reg, bool in_protobuf, bool in_remote_write)
{
    pthread_mutex_lock(&reg->mu);
    reg->classic_pb = in_protobuf;
    reg->classic_rw = in_remote_write;
    pthread_mutex_unlock(&reg->mu);
}

int metrics_publish(struct metrics_registry *reg, const struct metrics_snapshot *snap)
{
    if (snap->reg != reg)
        return KNEE_EMISMATCH;
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < snap->nseries; i++) {
        const struct slot *sl = &snap->slots[i];
        if (sl->touched)
            memcpy(reg->pub + sl->off, snap->v + sl->off, slots_of(sl->fam) * sizeof *snap->v);
        if (sl->native_touched) /* the registry's copy keeps its memory: no allocation once grown */
            native_copy(&reg->pubnat[i], &snap->nat[i]);
    }
    pthread_mutex_unlock(&reg->mu);
    return 0;
}

void metrics_set_collector(struct metrics_registry *reg, metrics_collect_fn *fn, void *ctx)
{
    pthread_mutex_lock(&reg->mu);
    reg->collect = fn;
    reg->collect_ctx = ctx;
    pthread_mutex_unlock(&reg->mu);
}

/* Caller holds reg->mu. The collector sees the published values and changes what it sets. */
void metrics_run_collector_locked(struct metrics_registry *reg)
{
    if (!reg->collect)
        return;
    if (!reg->csnap || reg->csnap->nseries != reg->nseries) {
        metrics_snapshot_free(reg->csnap);
        reg->csnap = snapshot_build(reg);
    }
    memcpy(reg->csnap->v, reg->pub, reg->nvalues * sizeof *reg->pub);
    reg->collect(reg->collect_ctx, reg->csnap);
    memcpy(reg->pub, reg->csnap->v, reg->nvalues * sizeof *reg->pub);
}

/* ---- exposition -------------------------------------------------------------------------- */

const char *metrics_content_type(enum metrics_format fmt)
{
    if (fmt == METRICS_FORMAT_PROTOBUF)
        return "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";
    return fmt == METRICS_FORMAT_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                             : "text/plain; version=0.0.4; charset=utf-8";
}

static const char *type_name(enum metrics_type t)
{
    return t == METRICS_COUNTER ? "counter" : t == METRICS_GAUGE ? "gauge" : "histogram";
}

/* One sample line: NAME{LABELS[,le="X"]} VALUE */
static void put_sample(FILE *out, const char *name, const char *suffix, const char *labels, const char *le, double v)
{
    char num[48];
    metrics_format_value(v, num, sizeof num);
    fputs(name, out);
    fputs(suffix, out);
    if (*labels || le) {
        fputc('{', out);
        fputs(labels, out);
        if (le)
            fprintf(out, "%sle=\"%s\"", *labels ? "," : "", le);
        fputc('}', out);
    }
    fputc(' ', out);
    fputs(num, out);
    fputc('\n', out);
}

static void put_meta(FILE *out, const struct family *f, enum metrics_format fmt)
{
    char help[2 * METRICS_HELP_MAX + 1];
    bool om = fmt == METRICS_FORMAT_OPENMETRICS;
    metrics_escape(f->help, strlen(f->help), !om, help, sizeof help);
    /* 0.0.4 names a counter's metadata after its samples (NAME_total); OpenMetrics after the
     * family, with the unit in its own line. */
    const char *suffix = !om && f->type == METRICS_COUNTER ? "_total" : "";
    if (om) {
        fprintf(out, "# TYPE %s %s\n", f->name, type_name(f->type));
        if (*f->unit)
            fprintf(out, "# UNIT %s %s\n", f->name, f->unit);
        fprintf(out, "# HELP %s %s\n", f->name, help);
    } else {
        fprintf(out, "# HELP %s%s %s\n", f->name, suffix, help);
        fprintf(out, "# TYPE %s%s %s\n", f->name, suffix, type_name(f->type));
    }
}

static void put_series(FILE *out, const struct family *f, const struct series *s, const double *v)
{
    if (f->type == METRICS_COUNTER) {
        put_sample(out, f->name, "_total", s->labels, NULL, v[0]);
        return;
    }
    if (f->type == METRICS_GAUGE) {
        put_sample(out, f->name, "", s->labels, NULL, v[0]);
        return;
    }
    double cum = 0;
    for (size_t i = 0; i < f->nbounds; i++) {
        cum += v[i];
        put_sample(out, f->name, "_bucket", s->labels, f->le[i], cum);
    }
    cum += v[f->nbounds];
    put_sample(out, f->name, "_bucket", s->labels, "+Inf", cum);
    put_sample(out, f->name, "_sum", s->labels, NULL, v[f->nbounds + 1]);
    put_sample(out, f->name, "_count", s->labels, NULL, cum);
}

/* The protobuf exposition, rendered into memory under the lock and written after it. */
static int render_protobuf(struct metrics_registry *reg, FILE *out)
{
    struct pb_buf b;
    pb_buf_init(&b);
    pthread_mutex_lock(&reg->mu);
    metrics_run_collector_locked(reg);
    int rc = metrics_render_protobuf_locked(reg, &b);
    pthread_mutex_unlock(&reg->mu);
    if (rc == 0 && b.len && fwrite(b.data, 1, b.len, out) != b.len)
        rc = -EIO;
    pb_buf_release(&b);
    return rc ? rc : ferror(out) ? -EIO : 0;
}

int metrics_render(struct metrics_registry *reg, enum metrics_format fmt, FILE *out)
{
    if (fmt == METRICS_FORMAT_PROTOBUF)
        return render_protobuf(reg, out);
    pthread_mutex_lock(&reg->mu);
    metrics_run_collector_locked(reg);
    for (size_t i = 0; i < reg->nfam; i++) {
        const struct family *f = reg->fam[i];
        if (f->nids == 0)
            continue;
        put_meta(out, f, fmt);
        for (size_t k = 0; k < f->nids; k++) {
            const struct series *s = &reg->series[f->ids[k]];
            put_series(out, f, s, reg->pub + s->off);
        }
    }
    pthread_mutex_unlock(&reg->mu);
    if (fmt == METRICS_FORMAT_OPENMETRICS)
        fputs("# EOF\n", out);
    return ferror(out) ? -EIO : 0;
}
