/* The data object inlined into the report (schema "knee-report/1", docs/FORMATS.md): written
 * compactly by hand because the page parses it at load time — times as exact decimals of their
 * integer nanoseconds (ms with up to 6 decimals, s to the microsecond), every string safe
 * inside a <script> element ('<', '>' and '&' escaped as \u003c, \u003e, \u0026). */
#include "html/internal.h"

#include "core/err.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small writer: commas by nesting level ---------------------------------------------------- */

struct jw {
    FILE *f;
    int depth;
    bool first[32];
};

static void sep(struct jw *w)
{
    if (!w->first[w->depth])
        fputc(',', w->f);
    w->first[w->depth] = false;
}

static void open_(struct jw *w, char c)
{
    sep(w);
    fputc(c, w->f);
    w->depth++;
    w->first[w->depth] = true;
}

static void close_(struct jw *w, char c)
{
    w->depth--;
    fputc(c, w->f);
}

static void str_raw(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void key(struct jw *w, const char *k)
{
    sep(w);
    str_raw(w->f, k);
    fputc(':', w->f);
    w->first[w->depth] = true; /* the value follows without a comma */
}

static void obj(struct jw *w, const char *k)
{
    if (k)
        key(w, k);
    open_(w, '{');
}

static void arr(struct jw *w, const char *k)
{
    if (k)
        key(w, k);
    open_(w, '[');
}

static void end_obj(struct jw *w)
{
    close_(w, '}');
    w->first[w->depth] = false;
}

static void end_arr(struct jw *w)
{
    close_(w, ']');
    w->first[w->depth] = false;
}

static void v_str(struct jw *w, const char *s)
{
    sep(w);
    if (s)
        str_raw(w->f, s);
    else
        fputs("null", w->f);
}

static void v_num(struct jw *w, double v)
{
    sep(w);
    if (isfinite(v))
        fprintf(w->f, "%.10g", v);
    else
        fputs("null", w->f);
}

static void v_u64(struct jw *w, uint64_t v)
{
    sep(w);
    fprintf(w->f, "%" PRIu64, v);
}

static void v_bool(struct jw *w, bool v)
{
    sep(w);
    fputs(v ? "true" : "false", w->f);
}

static void v_null(struct jw *w)
{
    sep(w);
    fputs("null", w->f);
}

/* An exact decimal of ns / 10^digits, trailing zeros trimmed (ns >= 0 in practice). */
static void v_fixed(struct jw *w, int64_t ns, int64_t div, int digits)
{
    sep(w);
    if (ns < 0) {
        fputc('-', w->f);
        ns = -ns;
    }
    int64_t ip = ns / div, fp = ns % div;
    if (!fp) {
        fprintf(w->f, "%" PRId64, ip);
        return;
    }
    char frac[24];
    snprintf(frac, sizeof frac, "%0*" PRId64, digits, fp);
    size_t n = strlen(frac);
    while (n > 0 && frac[n - 1] == '0')
        frac[--n] = '\0';
    fprintf(w->f, "%" PRId64 ".%s", ip, frac);
}

static void v_ms(struct jw *w, int64_t ns)
{
    v_fixed(w, ns, 1000000, 6);
}

/* seconds, to the microsecond */
static void v_s(struct jw *w, int64_t ns)
{
    int64_t us = ns >= 0 ? (ns + 500) / 1000 : -((-ns + 500) / 1000);
    v_fixed(w, us, 1000000, 6);
}

static void kv_str(struct jw *w, const char *k, const char *s)
{
    key(w, k);
    v_str(w, s);
}

static void kv_num(struct jw *w, const char *k, double v)
{
    key(w, k);
    v_num(w, v);
}

static void kv_u64(struct jw *w, const char *k, uint64_t v)
{
    key(w, k);
    v_u64(w, v);
}

/* ---- histograms ------------------------------------------------------------------------------------ */

static void dbl_out(struct jw *w, const struct dbl_hist *d)
{
    size_t first = DBL_MAX_BUCKETS, last = 0;
    for (size_t i = 0; i < DBL_MAX_BUCKETS; i++)
        if (d->counts[i]) {
            if (first == DBL_MAX_BUCKETS)
                first = i;
            last = i;
        }
    obj(w, "hist");
    kv_num(w, "first_ms", d->first);
    arr(w, "lo_ms"); /* lower bounds, then the last bucket's upper bound */
    for (size_t i = first; first < DBL_MAX_BUCKETS && i <= last + 1; i++)
        v_num(w, i <= last ? dbl_lower(d, i)
                           : (isfinite(dbl_upper(d, last)) ? dbl_upper(d, last) : 2 * dbl_lower(d, last)));
    end_arr(w);
    arr(w, "n");
    for (size_t i = first; first < DBL_MAX_BUCKETS && i <= last; i++)
        v_u64(w, d->counts[i]);
    end_arr(w);
    end_obj(w);
}

static void marks_out(struct jw *w, const struct hdr *h)
{
    obj(w, "marks");
    if (h->counts && h->total_count) {
        static const double ps[] = {50, 90, 99, 99.9};
        static const char *const names[] = {"p50", "p90", "p99", "p99.9"};
        for (int i = 0; i < 4; i++) {
            key(w, names[i]);
            v_ms(w, hdr_value_at_percentile(h, ps[i]));
        }
        key(w, "max");
        v_ms(w, hdr_max(h));
    }
    end_obj(w);
}

/* The percentile spectrum as the HdrHistogram plotter draws it: the percentile iterator's
 * steps (5 per halving of the distance to 100%), x = 1/(1-p). */
static void spectrum_out(struct jw *w, const char *k, const struct hdr *h)
{
    obj(w, k);
    arr(w, "p");
    struct hdr_iter it;
    if (h->counts && h->total_count) {
        hdr_iter_percentile_init(&it, h, 5);
        while (hdr_iter_next(&it))
            if (it.percentile_level_iterated_to < 100)
                v_num(w, it.percentile_level_iterated_to / 100);
    }
    end_arr(w);
    arr(w, "v");
    if (h->counts && h->total_count) {
        hdr_iter_percentile_init(&it, h, 5);
        while (hdr_iter_next(&it))
            if (it.percentile_level_iterated_to < 100)
                v_ms(w, it.value_iterated_to);
    }
    end_arr(w);
    end_obj(w);
}

static void target_out(struct jw *w, const char *name, const struct hdr *lat, const struct hdr *service,
                       const struct dbl_hist *d, bool from_hist, bool with_service)
{
    open_(w, '{');
    kv_str(w, "name", name);
    kv_u64(w, "count", lat->counts ? (uint64_t)lat->total_count : 0);
    kv_u64(w, "overflow", lat->counts ? (uint64_t)lat->overflow_count : 0);
    key(w, "from_hist");
    v_bool(w, from_hist);
    dbl_out(w, d);
    marks_out(w, lat);
    spectrum_out(w, "spectrum", lat);
    if (with_service && service->counts && service->total_count)
        spectrum_out(w, "service_spectrum", service);
    end_obj(w);
}

/* ---- timeline, heatmap, scatter ------------------------------------------------------------------- */

static void timeline_out(struct jw *w, const struct html_run *run)
{
    const struct html_timeline *tl = &run->tl;
    if (!tl->n) {
        key(w, "timeline");
        v_null(w);
        return;
    }
    obj(w, "timeline");
    kv_num(w, "interval_s", (double)tl->interval_ns / 1e9);
    arr(w, "t");
    for (size_t i = 0; i < tl->n; i++)
        v_s(w, (tl->base + (int64_t)i) * tl->interval_ns);
    end_arr(w);
#define COL(name, expr)                                                                                                \
    do {                                                                                                               \
        arr(w, name);                                                                                                  \
        for (size_t i = 0; i < tl->n; i++) {                                                                           \
            const struct html_tick *t = &tl->ticks[i];                                                                 \
            (void)t;                                                                                                   \
            v_u64(w, (expr));                                                                                          \
        }                                                                                                              \
        end_arr(w);                                                                                                    \
    } while (0)
    COL("warm", t->warmup ? 1u : 0u);
    COL("done", t->done);
    if (run->have_requests) {
        COL("planned", t->planned);
        COL("sent", t->sent);
        COL("ok", t->outcome[OUTCOME_OK]);
        COL("dropped", t->dropped);
        obj(w, "fail");
        for (int o = 1; o < OUTCOME_COUNT; o++) {
            if (o == OUTCOME_DROPPED)
                continue;
            uint64_t any = 0;
            for (size_t i = 0; i < tl->n; i++)
                any += tl->ticks[i].outcome[o];
            if (any)
                COL(reqlog_outcome_name((enum reqlog_outcome)o), t->outcome[o]);
        }
        end_obj(w);
        /* responses by status class at completion: drawn when one was not 2xx/3xx */
        static const char *const st_names[HTML_ST_CLASSES] = {"none", "1xx", "2xx", "3xx", "4xx", "5xx", "other"};
        obj(w, "status");
        for (int c = 0; c < HTML_ST_CLASSES; c++) {
            uint64_t any = 0;
            for (size_t i = 0; i < tl->n; i++)
                any += tl->ticks[i].status_class[c];
            if (any)
                COL(st_names[c], t->status_class[c]);
        }
        end_obj(w);
        arr(w, "in_flight");
        int64_t cum = 0;
        for (size_t i = 0; i < tl->n; i++) {
            cum += (int64_t)tl->ticks[i].sent - (int64_t)tl->ticks[i].done;
            v_num(w, (double)cum);
        }
        end_arr(w);
        arr(w, "lag_p99_ms");
        for (size_t i = 0; i < tl->n; i++) {
            const struct hdr *h = tl->ticks[i].lag;
            if (h && h->total_count)
                v_ms(w, hdr_value_at_percentile(h, 99));
            else
                v_null(w);
        }
        end_arr(w);
    }
#undef COL
    if (run->have_hlog) {
        static const char *const names[] = {"lat_p50_ms", "lat_p99_ms", "lat_max_ms"};
        static const double ps[] = {50, 99, 100};
        for (int k = 0; k < 3; k++) {
            arr(w, names[k]);
            for (size_t i = 0; i < tl->n; i++) {
                const struct hdr *h = tl->ticks[i].lat;
                if (h && h->total_count)
                    v_ms(w, k == 2 ? hdr_max(h) : hdr_value_at_percentile(h, ps[k]));
                else
                    v_null(w);
            }
            end_arr(w);
        }
    }
    end_obj(w);
}

static void heatmap_out(struct jw *w, const struct html_run *run)
{
    const struct html_timeline *tl = &run->tl;
    size_t first = DBL_MAX_BUCKETS, last = 0;
    for (size_t i = 0; i < tl->n; i++)
        for (size_t b = 0; b < DBL_MAX_BUCKETS; b++)
            if (tl->ticks[i].heat.counts[b]) {
                if (b < first)
                    first = b;
                if (b > last)
                    last = b;
            }
    if (first == DBL_MAX_BUCKETS) {
        key(w, "heatmap");
        v_null(w);
        return;
    }
    struct dbl_hist d;
    dbl_init(&d, HTML_DBL_FIRST_MS);
    obj(w, "heatmap");
    kv_num(w, "interval_s", (double)tl->interval_ns / 1e9);
    arr(w, "t");
    for (size_t i = 0; i < tl->n; i++)
        v_s(w, (tl->base + (int64_t)i) * tl->interval_ns);
    end_arr(w);
    arr(w, "lo_ms");
    for (size_t b = first; b <= last + 1; b++)
        v_num(w, b <= last ? dbl_lower(&d, b)
                           : (isfinite(dbl_upper(&d, last)) ? dbl_upper(&d, last) : 2 * dbl_lower(&d, last)));
    end_arr(w);
    arr(w, "counts");
    for (size_t i = 0; i < tl->n; i++) {
        arr(w, NULL);
        for (size_t b = first; b <= last; b++)
            v_u64(w, tl->ticks[i].heat.counts[b]);
        end_arr(w);
    }
    end_arr(w);
    end_obj(w);
}

static const char *const series_key[HTML_S_COUNT] = {"ok",        "rejected", "http_error", "invalid",
                                                     "transport", "timeout",  "cancelled",  "service"};

static void scatter_out(struct jw *w, const struct html_run *run)
{
    const struct html_decim *d = &run->scatter;
    if (!run->have_requests || !d->any) {
        key(w, "scatter");
        v_null(w);
        return;
    }
    obj(w, "scatter");
    kv_num(w, "column_s", (double)d->width_ns / 1e9);
    kv_u64(w, "columns", (uint64_t)(d->hi - d->lo + 1));
    arr(w, "series");
    for (int s = 0; s < HTML_S_COUNT; s++) {
        if (!d->count[s])
            continue;
        size_t n;
        int64_t *p = html_decim_points(d, (enum html_series)s, &n);
        open_(w, '{');
        kv_str(w, "key", series_key[s]);
        kv_u64(w, "n", d->count[s]);
        arr(w, "t");
        for (size_t i = 0; i < n; i++)
            v_s(w, p[2 * i]);
        end_arr(w);
        arr(w, "v");
        for (size_t i = 0; i < n; i++)
            v_ms(w, p[2 * i + 1]);
        end_arr(w);
        end_obj(w);
        free(p);
    }
    end_arr(w);
    obj(w, "dropped");
    kv_u64(w, "n_total", d->dropped);
    arr(w, "t");
    for (size_t i = 0; d->dropped && i < d->ncols; i++)
        if (d->cols[i].dropped)
            v_s(w, (d->base + (int64_t)i) * d->width_ns);
    end_arr(w);
    arr(w, "n");
    for (size_t i = 0; d->dropped && i < d->ncols; i++)
        if (d->cols[i].dropped)
            v_u64(w, d->cols[i].dropped);
    end_arr(w);
    end_obj(w);
    end_obj(w);
}

static void jtimeline_out(struct jw *w, const struct html_run *run)
{
    if (!run->njtl) {
        key(w, "jtimeline");
        v_null(w);
        return;
    }
    obj(w, "jtimeline");
#define JCOL(name, field)                                                                                              \
    do {                                                                                                               \
        arr(w, name);                                                                                                  \
        for (size_t i = 0; i < run->njtl; i++)                                                                         \
            v_num(w, run->jtl[i].field);                                                                               \
        end_arr(w);                                                                                                    \
    } while (0)
    JCOL("t", start_s);
    JCOL("len", length_s);
    JCOL("planned", planned);
    JCOL("sent", sent);
    JCOL("completed", completed);
    JCOL("ok", ok);
    JCOL("errors", errors);
    JCOL("dropped", dropped);
    JCOL("p50_ms", p50_ms);
    JCOL("p99_ms", p99_ms);
    JCOL("max_ms", max_ms);
#undef JCOL
    end_obj(w);
}

/* ---- a run --------------------------------------------------------------------------------------- */

static void run_out(struct jw *w, const struct html_run *run)
{
    open_(w, '{');
    kv_str(w, "name", run->name);
    arr(w, "sources");
    for (size_t i = 0; i < run->nsources; i++)
        v_str(w, run->sources[i]);
    end_arr(w);
    kv_str(w, "mode", run->closed_loop == 1 ? "closed" : run->closed_loop == 0 ? "open" : NULL);
    kv_str(w, "interval",
           run->closed_loop == 1   ? "send -> full response (T5 - T1), closed loop"
           : run->closed_loop == 0 ? "planned send -> full response (T5 - T0)"
           : run->have_hlog        ? "as recorded in the hlog (knee run --hlog: T5 - T0 in an open loop)"
                                   : "latency_ms: T5 - T0 (in a closed loop T0 = T1)");
    kv_num(w, "warmup_s", run->warmup_s);
    if (run->nstages) { /* --stages: the time charts mark where each begins */
        arr(w, "stage_starts_s");
        for (size_t i = 0; i < run->nstages; i++)
            v_num(w, run->stage_start_s[i]);
        end_arr(w);
    }
    key(w, "window_s");
    if (run->t_any) {
        arr(w, NULL);
        v_s(w, run->t_min_ns);
        v_s(w, run->t_max_ns);
        end_arr(w);
    } else {
        v_null(w);
    }
    kv_u64(w, "requests", run->nrequests);
    kv_u64(w, "warmup_requests", run->nwarm);
    key(w, "have");
    obj(w, NULL);
    key(w, "requests");
    v_bool(w, run->have_requests);
    key(w, "hlog");
    v_bool(w, run->have_hlog);
    key(w, "json");
    v_bool(w, run->have_json);
    end_obj(w);
    key(w, "lag_limit_ms");
    v_ms(w, (int64_t)run->lag_limit_ns);
    key(w, "lag_limit_known");
    v_bool(w, run->lag_limit_known);
    /* the threshold the generator verdict used: the lag limit on top of the --timer-slack the
     * run allowed (record_generator_judge judges the lag beyond the slack) */
    key(w, "timer_slack_ms");
    v_ms(w, (int64_t)run->timer_slack_ns);
    key(w, "lag_threshold_ms");
    v_ms(w, (int64_t)(run->lag_limit_ns + run->timer_slack_ns));
    key(w, "generator_limited");
    if (run->have_json)
        v_bool(w, run->json_generator_limited);
    else
        v_null(w);
    if (run->summary_text) {
        obj(w, "summary");
        kv_str(w, "text", run->summary_text);
        kv_str(w, "origin", run->summary_origin);
        end_obj(w);
    } else {
        key(w, "summary");
        v_null(w);
    }
    /* responses by status after the warm-up (the JSON's, else the log's) */
    obj(w, "status_codes");
    for (size_t k = 0; k < RUN_STATUS_SLOTS; k++) {
        char code[16];
        int st = record_status_of_slot(k);
        if (!run->status.n[k])
            continue;
        if (st < 0)
            snprintf(code, sizeof code, "other");
        else
            snprintf(code, sizeof code, "%d", st);
        kv_u64(w, code, run->status.n[k]);
    }
    end_obj(w);
    arr(w, "notes");
    for (size_t i = 0; i < run->nnotes; i++)
        v_str(w, run->notes[i]);
    end_arr(w);

    bool open_loop = run->closed_loop != 1;
    arr(w, "targets");
    for (size_t i = 0; i < run->ntargets; i++) {
        const struct html_target *t = &run->targets[i];
        target_out(w, t->name, &t->latency, &t->service, &t->dbl, t->from_hist, open_loop && run->ntargets == 1);
    }
    end_arr(w);
    /* all targets together (exact: histograms of one layout add index by index) */
    key(w, "all");
    if (run->ntargets > 1) {
        struct hdr lat, svc;
        memset(&lat, 0, sizeof lat);
        memset(&svc, 0, sizeof svc);
        struct dbl_hist d;
        dbl_init(&d, HTML_DBL_FIRST_MS);
        bool ok = true;
        for (size_t i = 0; i < run->ntargets; i++) {
            const struct html_target *t = &run->targets[i];
            if (t->latency.counts) {
                if (!lat.counts && hdr_init(&lat, t->latency.lowest, t->latency.highest, t->latency.sig_digits))
                    knee_oom();
                ok &= hdr_add(&lat, &t->latency) == 0;
            }
            if (t->service.counts) {
                if (!svc.counts && hdr_init(&svc, t->service.lowest, t->service.highest, t->service.sig_digits))
                    knee_oom();
                ok &= hdr_add(&svc, &t->service) == 0;
            }
            for (size_t b = 0; b < DBL_MAX_BUCKETS; b++)
                d.counts[b] += t->dbl.counts[b];
            d.total += t->dbl.total;
        }
        if (ok) {
            char name[64];
            snprintf(name, sizeof name, "all");
            target_out(w, name, &lat, &svc, &d, run->have_hlog, open_loop);
        } else {
            v_null(w);
        }
        hdr_release(&lat);
        hdr_release(&svc);
    } else {
        v_null(w);
    }
    timeline_out(w, run);
    heatmap_out(w, run);
    scatter_out(w, run);
    jtimeline_out(w, run);
    key(w, "stream"); /* streamed responses (knee run --stream): the JSON's, as it has them */
    if (run->stream) {
        sep(w);
        html_json_out(w->f, run->stream);
    } else {
        v_null(w);
    }
    end_obj(w);
}

void html_write_data(FILE *out, const struct html_report *rep)
{
    struct jw w = {.f = out};
    w.first[0] = true;
    obj(&w, NULL);
    kv_str(&w, "schema", "knee-report/1");
    kv_str(&w, "knee", KNEE_VERSION);
    kv_str(&w, "uplot", html_asset_uplot_version);
    arr(&w, "runs");
    for (size_t i = 0; i < rep->nruns; i++)
        run_out(&w, rep->runs[i]);
    end_arr(&w);
    arr(&w, "documents");
    for (size_t i = 0; i < rep->ndocs; i++) {
        sep(&w);
        json_t *d = html_doc_data(rep, rep->docs[i]);
        html_json_out(w.f, d);
        json_decref(d);
    }
    end_arr(&w);
    end_obj(&w);
}
