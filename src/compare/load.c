/* Loading a side of a comparison: repetitions from a `knee run --repeat` directory or from
 * listed run outputs (binary request log, CSV, hlog) grouped by file stem, each with the load
 * model from its run JSON (jansson). The warm-up is left out by the logs' own metadata: the
 * binary log's per-record flag, the JSON's warmup_s for a CSV (start_s < warm-up), and an
 * hlog from knee run never holds it. Every error names the file (and the line or record). */
#include "compare/internal.h"

#include "core/err.h"
#include "csv/csv.h"
#include "hist/hdr.h"
#include "hlog/hlog.h"
#include "record/record.h"
#include "reqlog/reqlog.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void compare_side_init(struct compare_side *s, const char *name)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
}

void compare_side_release(struct compare_side *s)
{
    for (size_t i = 0; i < s->nreps; i++) {
        struct compare_rep *r = &s->reps[i];
        for (size_t t = 0; t < COMPARE_MAX_TARGETS; t++)
            compare_dist_release(&r->dist[t]);
        compare_dist_release(&r->stream[0]);
        compare_dist_release(&r->stream[1]);
        compare_strv_free(r->warnings, r->nwarnings);
    }
    free(s->reps);
    s->reps = NULL;
    s->nreps = 0;
}

struct compare_rep *compare_rep_add(struct compare_side *s, const char *label)
{
    s->reps = xrealloc(s->reps, (s->nreps + 1) * sizeof *s->reps);
    struct compare_rep *r = &s->reps[s->nreps++];
    memset(r, 0, sizeof *r);
    snprintf(r->label, sizeof r->label, "%s", label);
    r->model.arrivals[0] = '\0';
    r->model.rate = r->model.duration_s = r->model.think_s = NAN;
    r->warmup_known = true;
    return r;
}

void compare_rep_warn(struct compare_rep *r, const char *fmt, ...)
{
    char buf[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    compare_strv_add(&r->warnings, &r->nwarnings, "%s", buf);
}

/* ---- the run JSON ----------------------------------------------------------------------------- */

/* "http://host:port/path?q" → authority and request target. */
static void split_url(const char *url, struct compare_model_target *t)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *slash = strchr(p, '/');
    size_t alen = slash ? (size_t)(slash - p) : strlen(p);
    snprintf(t->authority, sizeof t->authority, "%.*s", (int)alen, p);
    snprintf(t->path, sizeof t->path, "%s", slash ? slash : "/");
}

/* The load model of a run's record (what the run JSON says of its plan): the open loop's settings
 * unknown (NAN, "") in a closed loop and the other way round, as the JSON leaves them out. */
static void model_of(struct compare_model *m, const struct run_record *rec)
{
    const struct record_config *c = &rec->config;
    m->known = m->closed_known = true;
    m->closed_loop = !c->open_loop;
    snprintf(m->arrivals, sizeof m->arrivals, "%s",
             m->closed_loop                        ? ""
             : c->arrivals == RUN_ARRIVALS_POISSON ? "poisson"
                                                   : "constant");
    m->ramp = c->ramp;
    m->ramp_from = c->ramp_from;
    m->ramp_to = c->ramp_to;
    m->rate = !m->closed_loop && !c->ramp && c->rate > 0 ? c->rate : NAN;
    m->nstages = c->nstages < RUN_MAX_STAGES ? c->nstages : RUN_MAX_STAGES;
    for (size_t i = 0; i < m->nstages; i++)
        m->stages[i] = c->stages[i];
    m->pool_cap = rec->pool_cap;
    snprintf(m->when_busy, sizeof m->when_busy, "%s",
             m->closed_loop                  ? ""
             : c->when_busy == RUN_BUSY_DROP ? "drop"
                                             : "queue");
    m->think_s = m->closed_loop ? (double)c->think_ns / 1e9 : NAN;
    m->duration_s = c->duration_ns ? (double)c->duration_ns / 1e9 : NAN;
    m->requests = c->requests;
    m->timeout_s = (double)c->timeout_ns / 1e9;
    m->warmup_s = (double)c->warmup_ns / 1e9;
    m->keepalive = c->keepalive;
    m->seed = c->seed;
    m->threads = rec->threads;
    m->ntargets = 0;
    for (size_t i = 0; i < rec->ntargets && m->ntargets < COMPARE_MAX_TARGETS; i++) {
        const struct run_target_result *t = &rec->targets[i];
        struct compare_model_target *mt = &m->targets[m->ntargets++];
        snprintf(mt->name, sizeof mt->name, "%s", t->name);
        split_url(t->url, mt);
        mt->planned_rate = t->planned_rate;
        mt->clients = t->connections;
    }
}

/* The run's own verdicts on itself, as this repetition's warnings. */
static void verdicts_of(struct compare_rep *r, const struct run_record *rec)
{
    if (rec->interrupted)
        compare_rep_warn(r, "the run was interrupted (Ctrl-C): it covers less than its plan");
    if (rec->generator_limited)
        compare_rep_warn(r, "GENERATOR-LIMITED: the generator, not the service, shaped this run");
    if (!rec->accounting_ok)
        compare_rep_warn(r, "the run's accounting identities do not hold");
    for (size_t i = 0; i < rec->warnings.n; i++) {
        const char *s = rec->warnings.items[i];
        /* the kind of problem, so the report can list the repetitions that have it (the
         * numbers are in the run's own JSON) */
        if (strncmp(s, "self-check:", 11) != 0)
            continue;
        if (strstr(s, "not a Poisson process"))
            compare_rep_warn(r, "self-check: the actual sends were not a Poisson process (Anderson-Darling at 1%%)");
        else if (strstr(s, "not stationary"))
            compare_rep_warn(r, "self-check: not stationary (a trend in the per-second p50 or p99)");
        else
            compare_rep_warn(r, "%s", s);
    }
}

static int load_root(struct compare_rep *r, json_t *root, const char *path, char *err, size_t errlen);

static int load_json(struct compare_rep *r, const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", path, je.line, je.text);
    return load_root(r, root, path, err, errlen);
}

int compare_rep_load_json_mem(struct compare_rep *r, const void *data, size_t size, const char *name, char *err,
                              size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(data, size, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", name, je.line, je.text);
    return load_root(r, root, name, err, errlen);
}

/* The model and the run's own flags from a parsed run JSON (root: owned, released here), read by
 * the run record's reader. */
static int load_root(struct compare_rep *r, json_t *root, const char *path, char *err, size_t errlen)
{
    int rc = 0;
    struct run_record rec;
    char why[512];
    if ((rc = record_schema_check(root, " as `knee run --json` writes", why, sizeof why)) != 0)
        knee_fail(err, errlen, rc, "%s: %s", path, why);
    else if ((rc = record_read_json(root, &rec, why, sizeof why)) != 0)
        knee_fail(err, errlen, rc, "%s: %s", path, why);
    json_decref(root);
    if (rc)
        return rc;
    model_of(&r->model, &rec);
    verdicts_of(r, &rec);
    compare_stage_points_of(r->stage_points, &r->nstage_points, &rec);
    record_release(&rec);
    return 0;
}

/* ---- per-target values while reading ---------------------------------------------------------- */

struct values {
    double *v;
    size_t n, cap;
};

static void push(struct values *vs, double x)
{
    if (vs->n == vs->cap) {
        vs->cap = vs->cap ? vs->cap * 2 : 1024;
        vs->v = xrealloc(vs->v, vs->cap * sizeof *vs->v);
    }
    vs->v[vs->n++] = x;
}

/* The target index of name, adding it (up to COMPARE_MAX_TARGETS); -1 when full. */
static int target_of(struct compare_rep *r, const char *name)
{
    for (size_t i = 0; i < r->ntargets; i++)
        if (strcmp(r->names[i], name) == 0)
            return (int)i;
    if (r->ntargets == COMPARE_MAX_TARGETS)
        return -1;
    snprintf(r->names[r->ntargets], sizeof r->names[0], "%s", name);
    return (int)r->ntargets++;
}

static int finish_values(struct compare_rep *r, struct values *vals, const char *path, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t t = 0; t < r->ntargets; t++) {
        if (!rc && compare_dist_from_values(&r->dist[t], vals[t].v, vals[t].n))
            rc = knee_fail(err, errlen, KNEE_ERANGE, "%s: a negative or infinite latency (corrupt input)", path);
        free(vals[t].v);
    }
    return rc;
}

/* ---- binary request log ------------------------------------------------------------------------ */

static int load_reqlog(struct compare_rep *r, const char *path, char *err, size_t errlen)
{
    struct reqlog_reader *rd;
    char why[512];
    int rc = reqlog_reader_open(&rd, path, why, sizeof why);
    if (rc)
        return knee_fail(err, errlen, rc, "%s: %s", path, why);
    size_t nt = reqlog_reader_ntargets(rd);
    if (nt > COMPARE_MAX_TARGETS) {
        reqlog_reader_close(rd);
        return knee_fail(err, errlen, KNEE_ETOOBIG, "%s: %zu targets (knee compare takes up to %d)", path, nt,
                         COMPARE_MAX_TARGETS);
    }
    for (size_t i = 0; i < nt; i++)
        target_of(r, reqlog_reader_target(rd, i));
    if (!r->model.known) {
        r->model.closed_known = true;
        r->model.closed_loop = reqlog_reader_closed_loop(rd);
    }
    struct values vals[COMPARE_MAX_TARGETS];
    memset(vals, 0, sizeof vals);
    struct reqlog_record rec;
    while ((rc = reqlog_read(rd, &rec)) == 1) {
        if (rec.flags & REQLOG_FLAG_WARMUP)
            continue;
        r->requests++;
        r->not_ok += rec.outcome != OUTCOME_OK;
        if (!rec.done_ns || rec.outcome == OUTCOME_DROPPED || rec.outcome == OUTCOME_CANCELLED)
            continue;
        if (rec.done_ns < rec.planned_ns) {
            rc = knee_fail(err, errlen, KNEE_EFORMAT, "%s: record %llu: done before the planned send (corrupt log)",
                           path, (unsigned long long)reqlog_reader_record_index(rd));
            break;
        }
        struct reqlog_derived d;
        reqlog_derive(&rec, &d);
        push(&vals[rec.target], d.latency_ms);
    }
    if (rc < 0 && !err[0])
        knee_fail(err, errlen, rc, "%s: %s", path, reqlog_reader_error(rd));
    reqlog_reader_close(rd);
    r->outcomes_known = true;
    int rc2 = finish_values(r, vals, path, err, errlen);
    return rc < 0 ? rc : rc2;
}

/* ---- CSV ------------------------------------------------------------------------------------ */

static long column(const struct csv_record *rec, const char *name)
{
    for (size_t i = 0; i < rec->n; i++)
        if (strcmp(rec->field[i], name) == 0)
            return (long)i;
    return -1;
}

static int load_csv(struct compare_rep *r, const char *path, char *err, size_t errlen)
{
    struct csv_reader *cr;
    int rc = csv_reader_open(&cr, path, NULL);
    if (rc)
        return knee_fail(err, errlen, rc, "%s: %s", path, knee_strerror(rc));
    struct csv_record rec;
    rc = csv_next(cr, &rec);
    if (rc <= 0) {
        rc = rc ? knee_fail(err, errlen, rc, "%s:%llu: %s", path, (unsigned long long)csv_reader_line(cr),
                            csv_reader_error(cr))
                : knee_fail(err, errlen, KNEE_EEMPTY, "%s: the file is empty", path);
        csv_reader_close(cr);
        return rc;
    }
    long c_server = column(&rec, "server"), c_start = column(&rec, "start_s"), c_lat = column(&rec, "latency_ms"),
         c_out = column(&rec, "outcome");
    if (c_lat < 0) {
        csv_reader_close(cr);
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s:1: needs a latency_ms column (knee run --out x.csv)", path);
    }
    double warm = r->model.known && r->model.warmup_s > 0 ? r->model.warmup_s : 0;
    if (!r->model.known && c_start >= 0) {
        r->warmup_known = false;
        compare_rep_warn(r,
                         "%s: a CSV has no warm-up flag and there is no run JSON beside it (%s): no row was left out "
                         "as warm-up",
                         path, "STEM.json");
    }
    if (c_start < 0 && r->model.known && warm > 0) {
        r->warmup_known = false;
        compare_rep_warn(r, "%s: no start_s column: the warm-up could not be left out", path);
    }
    r->outcomes_known = c_out >= 0;
    struct values vals[COMPARE_MAX_TARGETS];
    memset(vals, 0, sizeof vals);
    while ((rc = csv_next(cr, &rec)) == 1) {
        const char *server = c_server >= 0 && (size_t)c_server < rec.n ? rec.field[c_server] : "all";
        int t = target_of(r, server);
        if (t < 0) {
            rc = knee_fail(err, errlen, KNEE_ETOOBIG, "%s:%llu: more than %d targets", path,
                           (unsigned long long)rec.line, COMPARE_MAX_TARGETS);
            break;
        }
        double start = 0, lat = NAN;
        if (c_start >= 0 && (size_t)c_start < rec.n && rec.len[c_start] &&
            csv_parse_double(rec.field[c_start], rec.len[c_start], &start)) {
            rc = knee_fail(err, errlen, KNEE_EFORMAT, "%s:%llu: start_s: '%s' is not a number", path,
                           (unsigned long long)rec.line, rec.field[c_start]);
            break;
        }
        if (warm > 0 && start < warm)
            continue;
        r->requests++;
        if (c_out >= 0 && (size_t)c_out < rec.n) {
            enum reqlog_outcome o;
            if (!reqlog_outcome_parse(rec.field[c_out], rec.len[c_out], &o)) {
                rc = knee_fail(err, errlen, KNEE_EFORMAT, "%s:%llu: outcome: '%s' is not one of knee's outcomes", path,
                               (unsigned long long)rec.line, rec.field[c_out]);
                break;
            }
            r->not_ok += o != OUTCOME_OK;
        }
        if ((size_t)c_lat >= rec.n || rec.len[c_lat] == 0)
            continue;
        if (csv_parse_double(rec.field[c_lat], rec.len[c_lat], &lat) || !(lat >= 0)) {
            rc = knee_fail(err, errlen, KNEE_EFORMAT, "%s:%llu: latency_ms: '%s' is not a latency", path,
                           (unsigned long long)rec.line, rec.field[c_lat]);
            break;
        }
        push(&vals[t], lat);
    }
    if (rc < 0 && !err[0])
        knee_fail(err, errlen, rc, "%s:%llu: %s", path, (unsigned long long)csv_reader_line(cr), csv_reader_error(cr));
    csv_reader_close(cr);
    int rc2 = finish_values(r, vals, path, err, errlen);
    return rc < 0 ? rc : rc2;
}

/* ---- hlog ------------------------------------------------------------------------------------- */

/* A histogram in ns into a distribution in ms: each bucket's highest equivalent value (as
 * HdrHistogram reports percentiles), its median equivalent for the mean (as its mean). */
static void dist_from_hdr(struct compare_dist *d, const struct hdr *h)
{
    memset(d, 0, sizeof *d);
    size_t cap = 64;
    d->x = xmalloc(cap * sizeof *d->x);
    d->s = xmalloc(cap * sizeof *d->s);
    d->c = xmalloc(cap * sizeof *d->c);
    d->approx = true;
    struct hdr_iter it;
    hdr_iter_recorded_init(&it, h);
    while (hdr_iter_next(&it)) {
        if (it.count_added_in_step <= 0)
            continue;
        if (d->m == cap) {
            cap *= 2;
            d->x = xrealloc(d->x, cap * sizeof *d->x);
            d->s = xrealloc(d->s, cap * sizeof *d->s);
            d->c = xrealloc(d->c, cap * sizeof *d->c);
        }
        uint64_t c = (uint64_t)it.count_added_in_step;
        d->x[d->m] = (double)it.value_iterated_to / 1e6;
        d->s[d->m] = (double)hdr_median_equivalent(h, it.value_iterated_to) / 1e6 * (double)c;
        d->c[d->m] = c;
        d->n += c;
        d->sum += d->s[d->m];
        d->m++;
    }
}

/* The stream tags of an hlog go to r->stream; streams_only: the latency tags are skipped (the
 * repetition's latency came from a more exact file). */
static int load_hlog_tags(struct compare_rep *r, const char *path, bool streams_only, char *err, size_t errlen);

static int load_hlog(struct compare_rep *r, const char *path, char *err, size_t errlen)
{
    return load_hlog_tags(r, path, false, err, errlen);
}

static int load_hlog_tags(struct compare_rep *r, const char *path, bool streams_only, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return knee_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
    struct hlog_reader *hr = hlog_reader_new(f, path);
    struct hlog_acc acc[COMPARE_MAX_TARGETS], sacc[2];
    for (size_t i = 0; i < COMPARE_MAX_TARGETS; i++)
        hlog_acc_init(&acc[i]);
    hlog_acc_init(&sacc[0]);
    hlog_acc_init(&sacc[1]);
    struct hlog_entry e;
    struct hdr h;
    memset(&h, 0, sizeof h);
    bool ready = false;
    int rc;
    size_t intervals = 0;
    while ((rc = hlog_reader_next(hr, &e)) == 1) {
        enum hlog_tag_kind kind = hlog_tag_kind(e.tagged ? e.tag : NULL, NULL);
        if (streams_only && kind == HLOG_TAG_LATENCY)
            continue;
        if ((rc = hlog_reader_decode_reuse(hr, &e, &h, &ready)))
            break;
        if (kind != HLOG_TAG_LATENCY) { /* all targets' first events or gaps together */
            char why[256];
            if ((rc = hlog_acc_add(&sacc[kind == HLOG_TAG_KIND_EVENT_GAP], &h, why, sizeof why))) {
                knee_fail(err, errlen, rc, "%s:%zu: %s", path, e.line, why);
                break;
            }
            continue;
        }
        int t = target_of(r, e.tagged ? e.tag : "all");
        if (t < 0) {
            rc = knee_fail(err, errlen, KNEE_ETOOBIG, "%s:%zu: more than %d tags", path, e.line, COMPARE_MAX_TARGETS);
            break;
        }
        char why[256];
        if ((rc = hlog_acc_add(&acc[t], &h, why, sizeof why))) {
            knee_fail(err, errlen, rc, "%s:%zu: %s", path, e.line, why);
            break;
        }
        intervals++;
    }
    if (rc < 0 && !err[0])
        knee_fail(err, errlen, rc, "%s", hlog_reader_error(hr));
    if (ready)
        hdr_release(&h);
    hlog_reader_free(hr);
    fclose(f);
    if (rc == 0 && intervals == 0 && !streams_only)
        rc = knee_fail(err, errlen, KNEE_EEMPTY, "%s: no intervals", path);
    for (int k = 0; k < 2; k++) {
        if (rc == 0 && sacc[k].used && !r->stream[k].n)
            dist_from_hdr(&r->stream[k], &sacc[k].h);
        hlog_acc_release(&sacc[k]);
    }
    for (size_t t = 0; t < COMPARE_MAX_TARGETS; t++) {
        if (rc == 0 && t < r->ntargets && acc[t].used) {
            dist_from_hdr(&r->dist[t], &acc[t].h);
            r->requests += r->dist[t].n;
        }
        hlog_acc_release(&acc[t]);
    }
    return rc;
}

/* ---- files ------------------------------------------------------------------------------------ */

enum kind { K_NONE, K_REQLOG, K_CSV, K_HLOG, K_JSON };

static enum kind kind_of(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return K_NONE;
    char head[512];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    if (reqlog_is_log(head, n))
        return K_REQLOG;
    size_t i = 0;
    if (n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    while (i < n && strchr(" \t\r\n", head[i]))
        i++;
    if (i < n && head[i] == '{')
        return K_JSON;
    size_t len = strlen(path);
    if ((len > 5 && strcmp(path + len - 5, ".hlog") == 0) || strncmp(head + i, "#[", 2) == 0 || strstr(head, ",HISTF"))
        return K_HLOG;
    return K_CSV;
}

/* A rank for the data file kinds: lower is more exact. */
static int exactness(enum kind k)
{
    return k == K_REQLOG ? 0 : k == K_CSV ? 1 : k == K_HLOG ? 2 : 3;
}

/* STEM.hlog beside a binary log or CSV (as knee run --repeat writes them): its stream tags. */
static int load_stream_beside(struct compare_rep *r, const char *data_path, char *err, size_t errlen)
{
    char path[4096];
    const char *slash = strrchr(data_path, '/'), *dot = strrchr(data_path, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - data_path) : strlen(data_path);
    if (snprintf(path, sizeof path, "%.*s.hlog", (int)stem, data_path) >= (int)sizeof path ||
        strcmp(path, data_path) == 0 || access(path, R_OK) != 0 || kind_of(path) != K_HLOG)
        return 0;
    return load_hlog_tags(r, path, true, err, errlen);
}

int compare_rep_load(struct compare_rep *r, const char *data_path, const char *json_path, char *err, size_t errlen)
{
    int rc = 0;
    if (errlen)
        err[0] = '\0';
    if (json_path && (rc = load_json(r, json_path, err, errlen)))
        return rc;
    enum kind k = kind_of(data_path);
    switch (k) {
    case K_REQLOG:
        rc = load_reqlog(r, data_path, err, errlen);
        break;
    case K_CSV:
        rc = load_csv(r, data_path, err, errlen);
        break;
    case K_HLOG:
        rc = load_hlog(r, data_path, err, errlen);
        break;
    case K_JSON:
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: a run JSON holds no per-request data (give its --out log)",
                         data_path);
    case K_NONE:
        return knee_fail(err, errlen, -errno, "%s: %s", data_path, strerror(errno ? errno : ENOENT));
    }
    if (!rc && k != K_HLOG)
        rc = load_stream_beside(r, data_path, err, errlen);
    if (rc)
        return rc;
    snprintf(r->source, sizeof r->source, "%s%s%s", data_path, json_path ? " + " : "", json_path ? json_path : "");
    /* the model's target order when the JSON names them all (a CSV lists them as they come) */
    if (r->model.known && r->model.ntargets == r->ntargets) {
        char names[COMPARE_MAX_TARGETS][64];
        struct compare_dist d[COMPARE_MAX_TARGETS];
        bool all = true;
        size_t at[COMPARE_MAX_TARGETS];
        for (size_t i = 0; i < r->ntargets && all; i++) {
            all = false;
            for (size_t j = 0; j < r->ntargets; j++)
                if (strcmp(r->model.targets[i].name, r->names[j]) == 0) {
                    at[i] = j;
                    all = true;
                }
        }
        if (all) {
            memcpy(names, r->names, sizeof names);
            memcpy(d, r->dist, sizeof d);
            for (size_t i = 0; i < r->ntargets; i++) {
                memcpy(r->names[i], names[at[i]], sizeof names[0]);
                r->dist[i] = d[at[i]];
            }
        }
    } else if (!r->model.known) {
        /* without a JSON: targets from the data */
        r->model.ntargets = r->ntargets;
        for (size_t i = 0; i < r->ntargets; i++)
            snprintf(r->model.targets[i].name, sizeof r->model.targets[i].name, "%s", r->names[i]);
    }
    if (r->ntargets == 0)
        return knee_fail(err, errlen, KNEE_EEMPTY, "%s: no requests", data_path);
    return 0;
}

/* ---- grouping files into repetitions ------------------------------------------------------------ */

struct group {
    char *stem;  /* path without its extension */
    char *label; /* the stem's file name */
    char *data;  /* the most exact data file */
    int data_rank;
    char *json;
};

static struct group *group_of(struct group **g, size_t *ng, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t stem_len = dot && dot != base ? (size_t)(dot - path) : strlen(path);
    for (size_t i = 0; i < *ng; i++)
        if (strlen((*g)[i].stem) == stem_len && strncmp((*g)[i].stem, path, stem_len) == 0)
            return &(*g)[i];
    *g = xrealloc(*g, (*ng + 1) * sizeof **g);
    struct group *n = &(*g)[(*ng)++];
    memset(n, 0, sizeof *n);
    n->stem = xmalloc(stem_len + 1);
    memcpy(n->stem, path, stem_len);
    n->stem[stem_len] = '\0';
    const char *lb = strrchr(n->stem, '/');
    n->label = xstrdup(lb ? lb + 1 : n->stem);
    n->data_rank = 99;
    return n;
}

static void groups_free(struct group *g, size_t ng)
{
    for (size_t i = 0; i < ng; i++) {
        free(g[i].stem);
        free(g[i].label);
        free(g[i].data);
        free(g[i].json);
    }
    free(g);
}

static int cmp_group(const void *a, const void *b)
{
    return strverscmp(((const struct group *)a)->label, ((const struct group *)b)->label);
}

static bool has_ext(const char *name, const char *ext)
{
    size_t n = strlen(name), m = strlen(ext);
    return n > m && strcmp(name + n - m, ext) == 0;
}

/* Put one file into its stem's group; a JSON that is not a run's (repeat.json) is skipped. */
static int add_file(struct group **g, size_t *ng, const char *path, bool listed, char *err, size_t errlen)
{
    enum kind k = kind_of(path);
    if (k == K_NONE)
        return knee_fail(err, errlen, -errno, "%s: %s", path, strerror(errno ? errno : ENOENT));
    if (k == K_JSON) {
        json_t *root = json_load_file(path, 0, NULL);
        const char *schema = root ? json_string_value(json_object_get(root, "schema")) : NULL;
        bool run = record_schema_readable(schema);
        json_decref(root);
        if (!run) {
            if (listed)
                return knee_fail(err, errlen, KNEE_EFORMAT, "%s: not a knee run JSON (schema " RUN_JSON_SCHEMA ")",
                                 path);
            return 0;
        }
    }
    struct group *gr = group_of(g, ng, path);
    if (k == K_JSON) {
        free(gr->json);
        gr->json = xstrdup(path);
    } else if (exactness(k) < gr->data_rank) {
        free(gr->data);
        gr->data = xstrdup(path);
        gr->data_rank = exactness(k);
    }
    return 0;
}

static int scan_dir(struct group **g, size_t *ng, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return knee_fail(err, errlen, -errno, "%s: %s", dir, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d))) {
        const char *n = de->d_name;
        if (n[0] == '.' || !(has_ext(n, ".bin") || has_ext(n, ".csv") || has_ext(n, ".hlog") || has_ext(n, ".json")))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, n);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            rc = add_file(g, ng, path, false, err, errlen);
    }
    closedir(d);
    return rc;
}

/* A group with only a run JSON: its data from STEM.bin, STEM.csv or STEM.hlog, the first that
 * exists (the most exact first). True when one was found (g->data set). */
static bool data_beside(struct group *g)
{
    static const char *const exts[] = {".bin", ".csv", ".hlog"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s%s", g->stem, exts[i]);
        struct stat st;
        enum kind k = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? kind_of(path) : K_NONE;
        if (k != K_NONE && k != K_JSON) {
            g->data = xstrdup(path);
            g->data_rank = exactness(k);
            return true;
        }
    }
    return false;
}

int compare_side_load(struct compare_side *s, const char *const *paths, size_t npaths, char *err, size_t errlen)
{
    struct group *g = NULL;
    size_t ng = 0;
    int rc = 0;
    for (size_t i = 0; i < npaths && rc == 0; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0)
            rc = knee_fail(err, errlen, -errno, "%s: %s", paths[i], strerror(errno));
        else if (S_ISDIR(st.st_mode))
            rc = scan_dir(&g, &ng, paths[i], err, errlen);
        else
            rc = add_file(&g, &ng, paths[i], true, err, errlen);
    }
    if (rc) {
        groups_free(g, ng);
        return rc;
    }
    qsort(g, ng, sizeof *g, cmp_group);
    for (size_t i = 0; i < ng && rc == 0; i++) {
        bool beside = false;
        if (!g[i].data && g[i].json) {
            /* a JSON alone holds no per-request data: its log beside it, when there is one */
            if (!data_beside(&g[i]))
                continue;
            beside = true;
        }
        if (!g[i].json) {
            char j[4200];
            snprintf(j, sizeof j, "%s.json", g[i].stem);
            if (kind_of(j) == K_JSON)
                g[i].json = xstrdup(j);
        }
        if (s->nreps == COMPARE_MAX_REPS) {
            rc = knee_fail(err, errlen, KNEE_ETOOBIG, "%s: more than %d repetitions", g[i].data, COMPARE_MAX_REPS);
            break;
        }
        struct compare_rep *r = compare_rep_add(s, g[i].label);
        r->data_beside = beside;
        rc = compare_rep_load(r, g[i].data, g[i].json, err, errlen);
    }
    if (rc == 0 && s->nreps == 0 && ng && !g[0].data && g[0].json)
        rc = knee_fail(err, errlen, KNEE_EEMPTY,
                       "%s: a run JSON holds no per-request data, and none of %s.bin, %s.csv, %s.hlog is beside it "
                       "(knee run --out FILE writes the log; give it with the JSON)",
                       g[0].json, g[0].stem, g[0].stem, g[0].stem);
    else if (rc == 0 && s->nreps == 0)
        rc = knee_fail(err, errlen, KNEE_EEMPTY,
                       "%s: no per-request log or hlog found (knee run --repeat N --out-dir DIR writes them)",
                       npaths ? paths[0] : "(no input)");
    groups_free(g, ng);
    return rc;
}
