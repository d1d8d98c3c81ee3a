/* The registry in protobuf: the delimited io.prometheus.client.MetricFamily exposition (what
 * Prometheus scrapes for native histograms) and the remote-write 1.0 WriteRequest. Both read
 * the published values under the registry's mutex, as the text exposition does. */
#include "metrics/metrics.h"

#include "core/err.h"
#include "metrics/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* io.prometheus.client.MetricType */
enum { PB_COUNTER = 0, PB_GAUGE = 1, PB_HISTOGRAM = 4 };

#define RW_EXTRA_MAX 32 /* extra labels of a WriteRequest, at most */

/* ---- the exposition ----------------------------------------------------------------------- */

static void put_classic_buckets(struct pb_buf *b, const struct family *f, const double *v)
{
    double cum = 0;
    for (size_t i = 0; i < f->nbounds; i++) { /* +Inf is implied by sample_count */
        cum += v[i];
        size_t m = pb_begin(b, 3);
        pb_uint(b, 1, (uint64_t)cum);
        pb_double(b, 2, f->bounds[i]);
        pb_end(b, m);
    }
}

/* One Metric: labels, then its value by type. */
static void put_metric(struct pb_buf *b, const struct metrics_registry *reg, const struct family *f, int id)
{
    const struct series *s = &reg->series[id];
    const double *v = reg->pub + s->off;
    size_t m = pb_begin(b, 4);
    for (size_t i = 0; i < f->nlabels; i++) {
        size_t l = pb_begin(b, 1);
        pb_string(b, 1, f->labels[i]);
        pb_string(b, 2, s->values[i]);
        pb_end(b, l);
    }
    size_t inner = pb_begin(b, f->type == METRICS_COUNTER ? 3 : f->type == METRICS_GAUGE ? 2 : 7);
    if (f->type != METRICS_HISTOGRAM) {
        pb_double(b, 1, v[0]);
    } else if (f->native) {
        native_pb_write(&reg->pubnat[id], &native_pb_exposition, b);
        if (reg->classic_pb)
            put_classic_buckets(b, f, v);
    } else {
        double count = 0;
        for (size_t i = 0; i <= f->nbounds; i++)
            count += v[i];
        pb_uint(b, 1, (uint64_t)count);
        pb_double(b, 2, v[f->nbounds + 1]);
        put_classic_buckets(b, f, v);
    }
    pb_end(b, inner);
    pb_end(b, m);
}

int metrics_render_protobuf_locked(struct metrics_registry *reg, struct pb_buf *out)
{
    for (size_t i = 0; i < reg->nfam; i++) {
        const struct family *f = reg->fam[i];
        if (f->nids == 0)
            continue;
        size_t m = pb_begin_delimited(out);
        if (f->type == METRICS_COUNTER) {
            char name[METRICS_NAME_MAX + 8];
            snprintf(name, sizeof name, "%s_total", f->name);
            pb_string(out, 1, name);
        } else {
            pb_string(out, 1, f->name);
        }
        pb_string(out, 2, f->help);
        pb_uint(out, 3, f->type == METRICS_COUNTER ? PB_COUNTER : f->type == METRICS_GAUGE ? PB_GAUGE : PB_HISTOGRAM);
        for (size_t k = 0; k < f->nids; k++)
            put_metric(out, reg, f, f->ids[k]);
        pb_end(out, m);
    }
    return out->failed ? -ENOMEM : 0;
}

/* ---- remote-write --------------------------------------------------------------------------- */

struct label {
    const char *name, *value;
    size_t name_len; /* extra labels point into "name=value" */
};

static int label_cmp(const void *a, const void *b)
{
    const struct label *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

static bool label_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > METRICS_NAME_MAX || (n >= 2 && s[0] == '_' && s[1] == '_') || (n == 2 && !memcmp(s, "le", 2)))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}

/* Parse the extra labels into x (nextra entries). */
static int parse_extra(const struct metrics_registry *reg, const char *const *kv, size_t n, struct label *x, char *err,
                       size_t errlen)
{
    if (n > RW_EXTRA_MAX)
        return knee_fail(err, errlen, KNEE_EINVAL, "remote-write: at most %d extra labels", RW_EXTRA_MAX);
    for (size_t i = 0; i < n; i++) {
        const char *eq = kv[i] ? strchr(kv[i], '=') : NULL;
        if (!eq || !label_name_ok(kv[i], (size_t)(eq - kv[i])))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "remote-write label '%.*s': not NAME=VALUE with NAME [a-zA-Z_][a-zA-Z0-9_]* (not __*, "
                             "not le)",
                             METRICS_NAME_MAX, kv[i] ? kv[i] : "");
        if (strlen(eq + 1) > METRICS_LABEL_VALUE_MAX || !metrics_utf8_valid(eq + 1, strlen(eq + 1)))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "remote-write label '%.*s': the value must be 0..%d bytes of UTF-8", (int)(eq - kv[i]),
                             kv[i], METRICS_LABEL_VALUE_MAX);
        x[i] = (struct label){.name = kv[i], .name_len = (size_t)(eq - kv[i]), .value = eq + 1};
        for (size_t j = 0; j < i; j++)
            if (label_cmp(&x[i], &x[j]) == 0)
                return knee_fail(err, errlen, KNEE_EINVAL, "remote-write label '%.*s' given twice", (int)x[i].name_len,
                                 x[i].name);
        for (size_t f = 0; f < reg->nfam; f++)
            for (size_t l = 0; l < reg->fam[f]->nlabels; l++)
                if (strlen(reg->fam[f]->labels[l]) == x[i].name_len &&
                    !memcmp(reg->fam[f]->labels[l], x[i].name, x[i].name_len))
                    return knee_fail(err, errlen, KNEE_EINVAL,
                                     "remote-write label '%.*s': %s already has a label of that name",
                                     (int)x[i].name_len, x[i].name, reg->fam[f]->name);
    }
    return 0;
}

/* The labels of one TimeSeries, sorted by name: __name__ = name+suffix, the series' own, le
 * (when not NULL), the extra ones. */
struct rw_ctx {
    struct pb_buf *b;
    const struct label *extra;
    size_t nextra;
    int64_t ts_ms;
};

static void put_labels(const struct rw_ctx *c, const struct family *f, const struct series *s, const char *name,
                       const char *le)
{
    struct label l[1 + METRICS_MAX_LABELS + 1 + RW_EXTRA_MAX];
    size_t n = 0;
    l[n++] = (struct label){.name = "__name__", .name_len = 8, .value = name};
    for (size_t i = 0; i < f->nlabels; i++)
        l[n++] = (struct label){.name = f->labels[i], .name_len = strlen(f->labels[i]), .value = s->values[i]};
    if (le)
        l[n++] = (struct label){.name = "le", .name_len = 2, .value = le};
    for (size_t i = 0; i < c->nextra; i++)
        l[n++] = c->extra[i];
    qsort(l, n, sizeof *l, label_cmp);
    for (size_t i = 0; i < n; i++) {
        size_t m = pb_begin(c->b, 1);
        pb_bytes(c->b, 1, l[i].name, l[i].name_len);
        pb_string(c->b, 2, l[i].value);
        pb_end(c->b, m);
    }
}

/* One TimeSeries with one Sample. */
static void put_sample(const struct rw_ctx *c, const struct family *f, const struct series *s, const char *suffix,
                       const char *le, double v)
{
    char name[METRICS_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s%s", f->name, suffix);
    size_t m = pb_begin(c->b, 1);
    put_labels(c, f, s, name, le);
    size_t sm = pb_begin(c->b, 2);
    pb_double(c->b, 1, v);
    pb_int(c->b, 2, c->ts_ms);
    pb_end(c->b, sm);
    pb_end(c->b, m);
}

static void put_native(const struct rw_ctx *c, const struct family *f, const struct series *s,
                       const struct native_hist *h)
{
    size_t m = pb_begin(c->b, 1);
    put_labels(c, f, s, f->name, NULL);
    size_t hm = pb_begin(c->b, 4);
    native_pb_write(h, &native_pb_remote, c->b);
    pb_int(c->b, 15, c->ts_ms);
    pb_end(c->b, hm);
    pb_end(c->b, m);
}

static void put_series_rw(const struct rw_ctx *c, const struct metrics_registry *reg, const struct family *f, int id)
{
    const struct series *s = &reg->series[id];
    const double *v = reg->pub + s->off;
    if (f->type == METRICS_COUNTER) {
        put_sample(c, f, s, "_total", NULL, v[0]);
        return;
    }
    if (f->type == METRICS_GAUGE) {
        put_sample(c, f, s, "", NULL, v[0]);
        return;
    }
    if (f->native)
        put_native(c, f, s, &reg->pubnat[id]);
    if (f->native && !reg->classic_rw)
        return;
    double cum = 0;
    for (size_t i = 0; i < f->nbounds; i++) {
        cum += v[i];
        put_sample(c, f, s, "_bucket", f->le[i], cum);
    }
    cum += v[f->nbounds];
    put_sample(c, f, s, "_bucket", "+Inf", cum);
    put_sample(c, f, s, "_sum", NULL, v[f->nbounds + 1]);
    put_sample(c, f, s, "_count", NULL, cum);
}

int metrics_render_remote_write(struct metrics_registry *reg, const char *const *extra_kv, size_t nextra, int64_t ts_ms,
                                struct pb_buf *out, char *err, size_t errlen)
{
    struct label extra[RW_EXTRA_MAX];
    pthread_mutex_lock(&reg->mu);
    int rc = parse_extra(reg, extra_kv, nextra, extra, err, errlen);
    if (rc == 0) {
        metrics_run_collector_locked(reg);
        struct rw_ctx c = {.b = out, .extra = extra, .nextra = nextra, .ts_ms = ts_ms};
        for (size_t i = 0; i < reg->nfam; i++)
            for (size_t k = 0; k < reg->fam[i]->nids; k++)
                put_series_rw(&c, reg, reg->fam[i], reg->fam[i]->ids[k]);
        if (out->failed)
            rc = knee_fail(err, errlen, -ENOMEM, "remote-write: out of memory for the WriteRequest");
    }
    pthread_mutex_unlock(&reg->mu);
    return rc;
}
