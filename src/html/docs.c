/* The documents a report draws besides runs: knee compare's (knee-compare/1: chart 7, the two
 * distributions overlaid and the differences with their intervals), knee capacity's
 * (knee-capacity/1: chart 6, the knee curve, the ladder x repetition grid, the probes) and
 * knee run --repeat's summary (knee-repeat/1). Each is read with jansson, checked for the
 * parts its charts need, and written into the data object as it is, so every number the page
 * shows is the document's; knee adds only what the document cannot hold: the SLO's latency
 * terms parsed (record/threshold.h, knee capacity's own grammar) and, with a service time, the
 * queueing predictions of src/model (M/M/1 and M/D/1, or M/M/c for c servers). */
#include "html/internal.h"

#include "core/err.h"
#include "record/threshold.h"
#include "model/model.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *schema;
    enum html_doc_kind kind;
    const char *what;
} kinds[] = {
    {"knee-compare/1", HTML_DOC_COMPARE, "knee compare"},
    {"knee-capacity/1", HTML_DOC_CAPACITY, "knee capacity"},
    {"knee-repeat/1", HTML_DOC_REPEAT, "knee run --repeat's summary"},
};

bool html_document_schema(const char *schema)
{
    for (size_t i = 0; schema && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(schema, kinds[i].schema) == 0)
            return true;
    return false;
}

int html_json_schema(const char *path, char *schema, size_t len, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", path, je.line, je.text);
    const char *s = json_string_value(json_object_get(root, "schema"));
    snprintf(schema, len, "%s", s ? s : "");
    json_decref(root);
    return 0;
}

/* The parts a kind's charts read, with the right types (the page reads the rest defensively). */
static int check(const json_t *root, enum html_doc_kind kind, const char *name, char *err, size_t errlen)
{
    static const struct {
        enum html_doc_kind kind;
        const char *key;
        json_type type;
    } need[] = {
        {HTML_DOC_COMPARE, "all", JSON_OBJECT},         {HTML_DOC_COMPARE, "metrics", JSON_OBJECT},
        {HTML_DOC_COMPARE, "repetitions", JSON_OBJECT}, {HTML_DOC_CAPACITY, "config", JSON_OBJECT},
        {HTML_DOC_CAPACITY, "ladder", JSON_ARRAY},      {HTML_DOC_CAPACITY, "repetitions", JSON_ARRAY},
        {HTML_DOC_CAPACITY, "reasons", JSON_ARRAY},     {HTML_DOC_REPEAT, "repetitions", JSON_ARRAY},
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (need[i].kind != kind)
            continue;
        const json_t *v = json_object_get(root, need[i].key);
        if (!v || json_typeof(v) != need[i].type)
            return knee_fail(err, errlen, KNEE_EFORMAT, "%s: \"%s\" missing or not an %s", name, need[i].key,
                             need[i].type == JSON_ARRAY ? "array" : "object");
    }
    const json_t *ladder = json_object_get(root, "ladder");
    for (size_t i = 0; kind == HTML_DOC_CAPACITY && i < json_array_size(ladder); i++) {
        const json_t *g = json_array_get(ladder, i);
        if (!json_is_number(json_object_get(g, "rate")) || !json_is_array(json_object_get(g, "reps")))
            return knee_fail(err, errlen, KNEE_EFORMAT, "%s: ladder step %zu: \"rate\" and \"reps\" expected", name,
                             i + 1);
    }
    return 0;
}

static int add_root(struct html_report *rep, const char *name, json_t *root, const char *source, char *err,
                    size_t errlen)
{
    const char *schema = json_string_value(json_object_get(root, "schema"));
    size_t k = 0;
    while (k < sizeof kinds / sizeof kinds[0] && !(schema && strcmp(schema, kinds[k].schema) == 0))
        k++;
    if (!json_is_object(root) || k == sizeof kinds / sizeof kinds[0])
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: schema \"%s\" is none of knee-run/2, knee-compare/1, knee-capacity/1, knee-repeat/1",
                         source, schema ? schema : "none");
    int r = check(root, kinds[k].kind, source, err, errlen);
    if (r)
        return r;
    struct html_doc *d = xcalloc(1, sizeof *d);
    d->kind = kinds[k].kind;
    d->name = xstrdup(name);
    char src[1200];
    snprintf(src, sizeof src, "%s (%s, %s)", source, kinds[k].what, schema);
    d->source = xstrdup(src);
    d->root = json_incref(root);
    rep->docs = xrealloc(rep->docs, (rep->ndocs + 1) * sizeof *rep->docs);
    rep->docs[rep->ndocs++] = d;
    return 0;
}

int html_report_add_document(struct html_report *rep, const char *name, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", path, je.line, je.text);
    int r = add_root(rep, name, root, path, err, errlen);
    json_decref(root);
    return r;
}

int html_report_add_document_mem(struct html_report *rep, const char *name, const void *data, size_t size,
                                 const char *source, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(data, size, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", source, je.line, je.text);
    int r = add_root(rep, name, root, source, err, errlen);
    json_decref(root);
    return r;
}

void html_doc_free(struct html_doc *d)
{
    if (!d)
        return;
    free(d->name);
    free(d->source);
    json_decref(d->root);
    free(d);
}

void html_report_set_service_time(struct html_report *rep, double service_s)
{
    rep->service_s = isfinite(service_s) && service_s > 0 ? service_s : 0;
}

void html_report_set_servers(struct html_report *rep, unsigned servers)
{
    rep->servers = servers ? servers : 1;
}

/* ---- what knee adds to a capacity document ----------------------------------------------------- */

/* The SLO's latency terms ("p99<250ms", "api.p50<=20ms"): parsed with knee capacity's grammar
 * (knee run's thresholds) against the document's target names. */
static json_t *slo_terms(const json_t *root)
{
    const json_t *targets = json_object_get(json_object_get(root, "config"), "targets");
    const char *names[RUN_MAX_TARGETS];
    size_t nt = 0;
    size_t i;
    const json_t *t;
    json_array_foreach(targets, i, t)
    {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n && nt < RUN_MAX_TARGETS)
            names[nt++] = n;
    }
    json_t *out = json_array();
    const json_t *e;
    json_array_foreach(json_object_get(root, "slo"), i, e)
    {
        const char *expr = json_string_value(e);
        struct run_threshold thr;
        char why[256];
        if (!expr || record_threshold_parse_names(expr, names, nt, &thr, why, sizeof why) != 0)
            continue;
        if (thr.kind != THR_STAT || thr.metric != THR_LATENCY ||
            !(thr.op == THR_LT || thr.op == THR_LE || thr.op == THR_EQ))
            continue;
        const char *stat = thr.stat;
        char pname[24];
        if (strcmp(stat, "p") == 0) {
            snprintf(pname, sizeof pname, "p%g", thr.pct);
            stat = pname;
        }
        if (strcmp(stat, "count") == 0)
            continue;
        json_array_append_new(out,
                              json_pack("{s:s, s:s, s:f, s:s?}", "expr", expr, "stat", stat, "ms", thr.value, "target",
                                        thr.target >= 0 && (size_t)thr.target < nt ? names[thr.target] : NULL));
    }
    return out;
}

/* One model's response-time p50 and p99 (ms) at each rate, appended to two arrays; null where
 * the model gives none (unstable, or M/D/1's exact distribution too large). M/D/1 when
 * deterministic (one server only), else M/M/c. */
static void predict_at(double lambda, double service_s, unsigned servers, bool deterministic, json_t *p50, json_t *p99)
{
    double q50 = NAN, q99 = NAN;
    if (deterministic) {
        struct model_md1_dist d;
        if (model_md1_dist_init(&d, lambda, service_s) == 0) {
            double w50, w99;
            if (model_md1_wait_quantile(&d, 0.5, &w50) == 0)
                q50 = w50 + service_s;
            if (model_md1_wait_quantile(&d, 0.99, &w99) == 0)
                q99 = w99 + service_s;
            model_md1_dist_release(&d);
        }
    } else {
        struct model_mmc m;
        if (model_mmc(servers, lambda, 1 / service_s, &m) == 0 &&
            (model_mmc_response_quantile(&m, 0.5, &q50) != 0 || model_mmc_response_quantile(&m, 0.99, &q99) != 0))
            q50 = q99 = NAN;
    }
    json_array_append_new(p50, isfinite(q50) ? json_real(q50 * 1e3) : json_null());
    json_array_append_new(p99, isfinite(q99) ? json_real(q99 * 1e3) : json_null());
}

/* Response-time percentiles of the queueing models for Poisson arrivals and service time S
 * over the ladder's range of rates, up to just below saturation (c/S): one server, M/M/1
 * (exponential service) and M/D/1 (constant); c servers sharing one queue, M/M/c. */
static json_t *prediction(const json_t *root, double service_s, unsigned servers)
{
    double top = 0;
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(root, "ladder"), i, g)
    {
        double r = json_number_value(json_object_get(g, "rate"));
        if (isfinite(r) && r > top)
            top = r;
    }
    if (servers < 1)
        servers = 1;
    double saturation = servers / service_s;
    double hi = fmin(top > 0 ? 1.15 * top : 0.99 * saturation, 0.995 * saturation);
    enum { N = 160 };
    json_t *rate = json_array(), *m50 = json_array(), *m99 = json_array(), *d50 = json_array(), *d99 = json_array();
    for (int k = 1; k <= N; k++) {
        double lambda = hi * k / N;
        json_array_append_new(rate, json_real(lambda));
        predict_at(lambda, service_s, servers, false, m50, m99);
        if (servers == 1)
            predict_at(lambda, service_s, 1, true, d50, d99);
    }
    json_t *p = json_pack("{s:f, s:I, s:f, s:o}", "service_ms", service_s * 1e3, "servers", (json_int_t)servers,
                          "saturation_rate", saturation, "rate", rate);
    if (servers == 1) {
        json_object_set_new(p, "mm1", json_pack("{s:o, s:o}", "p50", m50, "p99", m99));
        json_object_set_new(p, "md1", json_pack("{s:o, s:o}", "p50", d50, "p99", d99));
    } else {
        json_object_set_new(p, "mmc", json_pack("{s:o, s:o}", "p50", m50, "p99", m99));
        json_decref(d50);
        json_decref(d99);
    }
    return p;
}

/* ---- writing ----------------------------------------------------------------------------------- */

/* A jansson value as compact JSON safe inside a <script> element: '<', '>' and '&' occur only in
 * strings, where \u escapes mean the same characters. */
void html_json_out(FILE *out, const struct json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
    if (!s)
        knee_oom();
    for (const char *p = s; *p; p++) {
        if (*p == '<' || *p == '>' || *p == '&')
            fprintf(out, "\\u%04x", (unsigned)*p);
        else
            fputc(*p, out);
    }
    free(s);
}

json_t *html_doc_data(const struct html_report *rep, const struct html_doc *d)
{
    static const char *const kind_names[] = {"compare", "capacity", "repeat"};
    json_t *knee = json_object();
    if (d->kind == HTML_DOC_CAPACITY) {
        json_object_set_new(knee, "slo", slo_terms(d->root));
        if (rep->service_s > 0)
            json_object_set_new(knee, "prediction", prediction(d->root, rep->service_s, rep->servers));
    }
    return json_pack("{s:s, s:s, s:s, s:O, s:o}", "kind", kind_names[d->kind], "name", d->name, "source", d->source,
                     "doc", d->root, "knee", knee);
}
