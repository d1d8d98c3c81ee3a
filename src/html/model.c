/* The report's data model: runs, their targets' histograms, the timeline and the scatter, fed
 * one request (or one histogram interval) at a time. */
#include "html/internal.h"

#include "core/err.h"
#include "core/warn.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void html_request_from_reqlog(const struct reqlog_record *r, struct html_request *o)
{
    o->target = r->target;
    o->planned_ns = (int64_t)r->planned_ns;
    o->lag_ns = r->sent_ns ? (int64_t)(r->sent_ns - r->planned_ns) : -1;
    o->latency_ns = r->done_ns ? (int64_t)(r->done_ns - r->planned_ns) : -1;
    o->service_ns = r->sent_ns && r->done_ns ? (int64_t)(r->done_ns - r->sent_ns) : -1;
    o->ttfb_ns = r->sent_ns && r->first_byte_ns ? (int64_t)(r->first_byte_ns - r->sent_ns) : -1;
    o->outcome = r->outcome;
    o->status = r->status;
    o->warmup = (r->flags & REQLOG_FLAG_WARMUP) != 0;
}

int html_status_class(int status)
{
    if (status <= 0)
        return HTML_ST_NONE;
    return status >= 100 && status <= 599 ? HTML_ST_1XX + status / 100 - 1 : HTML_ST_OTHER;
}

/* ---- report and runs ------------------------------------------------------------------- */

struct html_report *html_report_new(void)
{
    return xcalloc(1, sizeof(struct html_report));
}

static void target_release(struct html_target *t)
{
    free(t->name);
    hdr_release(&t->latency);
    for (int g = 0; g < HTML_GROUPS; g++)
        hdr_release(&t->group[g]);
    hdr_release(&t->service);
    hdr_release(&t->ttfb);
    hdr_release(&t->lag);
}

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void run_free(struct html_run *run)
{
    free(run->name);
    free_strings(run->sources, run->nsources);
    free_strings(run->notes, run->nnotes);
    free(run->json_path);
    free(run->log_path);
    free(run->hlog_path);
    for (size_t i = 0; i < run->ntargets; i++)
        target_release(&run->targets[i]);
    free(run->targets);
    html_decim_release(&run->scatter);
    html_timeline_release(&run->tl);
    free(run->summary_text);
    free(run->summary_origin);
    free(run->jtl);
    json_decref(run->stream);
    record_entries_release(&run->entries);
    free(run);
}

void html_report_free(struct html_report *rep)
{
    if (!rep)
        return;
    for (size_t i = 0; i < rep->nruns; i++)
        run_free(rep->runs[i]);
    free(rep->runs);
    for (size_t i = 0; i < rep->ndocs; i++)
        html_doc_free(rep->docs[i]);
    free(rep->docs);
    free(rep);
}

struct html_run *html_report_add_run(struct html_report *rep, const char *name)
{
    struct html_run *run = xcalloc(1, sizeof *run);
    run->name = xstrdup(name ? name : "run");
    run->closed_loop = -1;
    run->warmup_s = NAN;
    run->lag_limit_ns = 1000000; /* knee run's default --lag-limit */
    run->json_window_s = NAN;
    html_decim_init(&run->scatter, HTML_SCATTER_COLUMNS, HTML_SCATTER_FIRST_WIDTH_NS);
    html_timeline_init(&run->tl);
    rep->runs = xrealloc(rep->runs, (rep->nruns + 1) * sizeof *rep->runs);
    rep->runs[rep->nruns++] = run;
    return run;
}

size_t html_report_nruns(const struct html_report *rep)
{
    return rep->nruns;
}

size_t html_report_ndocuments(const struct html_report *rep)
{
    return rep->ndocs;
}

struct html_run *html_report_run(struct html_report *rep, size_t i)
{
    return i < rep->nruns ? rep->runs[i] : NULL;
}

void html_run_note(struct html_run *run, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    warn_strv_vadd(&run->notes, &run->nnotes, 1024, fmt, ap);
    va_end(ap);
}

void html_run_add_source(struct html_run *run, const char *text)
{
    run->sources = xrealloc(run->sources, (run->nsources + 1) * sizeof *run->sources);
    run->sources[run->nsources++] = xstrdup(text);
}

void html_run_set_summary_text(struct html_run *run, const char *text)
{
    free(run->summary_text);
    run->summary_text = xstrdup(text);
    free(run->summary_origin);
    run->summary_origin = xstrdup("as the terminal printed it");
}

void html_run_set_lag_limit(struct html_run *run, uint64_t lag_limit_ns)
{
    run->lag_limit_ns = lag_limit_ns;
    run->lag_limit_known = true;
}

size_t html_run_target(struct html_run *run, const char *name)
{
    for (size_t i = 0; i < run->ntargets; i++)
        if (strcmp(run->targets[i].name, name) == 0)
            return i;
    run->targets = xrealloc(run->targets, (run->ntargets + 1) * sizeof *run->targets);
    struct html_target *t = &run->targets[run->ntargets];
    memset(t, 0, sizeof *t);
    t->name = xstrdup(name);
    dbl_init(&t->dbl, HTML_DBL_FIRST_MS);
    return run->ntargets++;
}

/* ---- requests ---------------------------------------------------------------------------- */

int html_run_begin_requests(struct html_run *run, const char *const *targets, size_t ntargets, bool closed_loop)
{
    if (run->have_requests || run->have_hlog)
        return KNEE_EINVAL;
    run->have_requests = true;
    for (size_t i = 0; i < ntargets; i++)
        if (html_run_target(run, targets[i]) != i)
            return KNEE_EINVAL; /* duplicate names */
    if (run->closed_loop < 0)
        run->closed_loop = closed_loop;
    return 0;
}

static void record(struct hdr *h, int64_t v, int digits)
{
    if (!h->counts && hdr_init(h, HTML_HDR_LOWEST, HTML_HDR_HIGHEST, digits) != 0)
        knee_oom();
    hdr_record(h, v, 1); /* above 1 h: counted as overflow by hdr, reported with the histogram */
}

static struct hdr *new_hdr(int digits)
{
    struct hdr *h = xcalloc(1, sizeof *h);
    if (hdr_init(h, HTML_HDR_LOWEST, HTML_HDR_HIGHEST, digits) != 0)
        knee_oom();
    return h;
}

static const enum html_series series_of[OUTCOME_COUNT] = {
    [OUTCOME_OK] = HTML_S_OK,
    [OUTCOME_REJECTED] = HTML_S_REJECTED,
    [OUTCOME_HTTP_ERROR] = HTML_S_HTTP_ERROR,
    [OUTCOME_INVALID] = HTML_S_INVALID,
    [OUTCOME_TRANSPORT] = HTML_S_TRANSPORT,
    [OUTCOME_TIMEOUT] = HTML_S_TIMEOUT,
    [OUTCOME_DROPPED] = HTML_S_COUNT, /* no latency */
    [OUTCOME_CANCELLED] = HTML_S_CANCELLED,
};

int html_run_add_request(struct html_run *run, const struct html_request *rq)
{
    if (!run->have_requests || rq->target >= run->ntargets || rq->outcome >= OUTCOME_COUNT)
        return KNEE_EINVAL;
    if (rq->planned_ns < 0 || rq->planned_ns > HTML_MAX_NS || rq->lag_ns > HTML_MAX_NS ||
        rq->latency_ns > HTML_MAX_NS || rq->service_ns > HTML_MAX_NS || rq->ttfb_ns > HTML_MAX_NS)
        return KNEE_ERANGE;
    struct html_target *t = &run->targets[rq->target];
    int64_t t0 = rq->planned_ns;
    run->nrequests++;

    struct html_tick *tk = html_timeline_at(&run->tl, t0);
    tk->planned++;
    tk->warmup |= rq->warmup;
    if (rq->lag_ns >= 0) {
        if (!tk->lag)
            tk->lag = new_hdr(HTML_LAG_DIGITS);
        hdr_record(tk->lag, rq->lag_ns, 1);
    }
    if (rq->latency_ns >= 0)
        dbl_add(&tk->heat, (double)rq->latency_ns / 1e6, 1);
    if (rq->outcome == OUTCOME_DROPPED) {
        tk->dropped++;
        tk->outcome[OUTCOME_DROPPED]++;
        html_decim_add_dropped(&run->scatter, t0);
    }
    /* tk may move when the timeline grows: look the others up afterwards */
    if (rq->lag_ns >= 0)
        html_timeline_at(&run->tl, t0 + rq->lag_ns)->sent++;
    if (rq->outcome != OUTCOME_DROPPED) {
        struct html_tick *te = html_timeline_at(&run->tl, rq->latency_ns >= 0 ? t0 + rq->latency_ns : t0);
        if (rq->latency_ns >= 0)
            te->done++;
        te->outcome[rq->outcome]++;
        te->status_class[html_status_class(rq->status)]++;
    }

    enum html_series s = series_of[rq->outcome];
    if (rq->latency_ns >= 0 && s != HTML_S_COUNT)
        html_decim_add(&run->scatter, s, t0, rq->latency_ns);
    if (rq->service_ns >= 0 && run->closed_loop != 1)
        html_decim_add(&run->scatter, HTML_S_SERVICE, t0, rq->service_ns);

    if (rq->warmup) {
        run->nwarm++;
        t->warm_planned++;
        t->warm_outcome[rq->outcome]++;
        if (rq->lag_ns >= 0)
            t->warm_sent++;
        return 0;
    }
    if (!run->t_any || t0 < run->t_min_ns)
        run->t_min_ns = t0;
    if (!run->t_any || t0 > run->t_max_ns)
        run->t_max_ns = t0;
    run->t_any = true;
    t->planned++;
    t->outcome[rq->outcome]++;
    if (!run->json_status)
        record_status_count(&run->status, rq->status);
    if (rq->lag_ns >= 0) {
        t->sent++;
        record(&t->lag, rq->lag_ns, HTML_HDR_DIGITS);
    }
    if (rq->latency_ns >= 0 && rq->outcome != OUTCOME_DROPPED && rq->outcome != OUTCOME_CANCELLED) {
        record(&t->latency, rq->latency_ns, HTML_HDR_DIGITS);
        record(&t->group[rq->outcome], rq->latency_ns, HTML_HDR_DIGITS);
        dbl_add(&t->dbl, (double)rq->latency_ns / 1e6, 1);
        if (rq->service_ns >= 0)
            record(&t->service, rq->service_ns, HTML_HDR_DIGITS);
        if (rq->ttfb_ns >= 0)
            record(&t->ttfb, rq->ttfb_ns, HTML_HDR_DIGITS);
    }
    return 0;
}

/* ---- histogram intervals ------------------------------------------------------------------ */

/* dst += src, initialising dst with src's layout (and knee's 1 h range at least). */
static int hdr_sum(struct hdr *dst, const struct hdr *src)
{
    if (!dst->counts) {
        int64_t hi = src->highest > HTML_HDR_HIGHEST ? src->highest : HTML_HDR_HIGHEST;
        int r = hdr_init(dst, src->lowest, hi, src->sig_digits);
        if (r)
            return r;
    }
    return hdr_add(dst, src);
}

int html_run_add_interval(struct html_run *run, const char *target, double start_s, double length_s,
                          const struct hdr *h, char *err, size_t errlen)
{
    if (run->have_requests)
        return knee_fail(err, errlen, KNEE_EINVAL, "the run already has per-request data");
    if (!(fabs(start_s) <= 1e9) || !(length_s >= 0 && length_s <= 1e9))
        return knee_fail(err, errlen, KNEE_ERANGE, "interval start %g s, length %g s: out of range", start_s, length_s);
    size_t ti = html_run_target(run, target);
    struct html_target *t = &run->targets[ti];
    t->from_hist = true;
    int r = hdr_sum(&t->latency, h);
    if (r)
        return knee_fail(err, errlen, r, "target %s: %s (its intervals must share one bucket layout)", target,
                         knee_strerror(r));
    int64_t mid_ns = (int64_t)llround((start_s + length_s / 2) * 1e9);
    struct html_tick *tk = html_timeline_at(&run->tl, mid_ns);
    if (!tk->lat) {
        tk->lat = xcalloc(1, sizeof *tk->lat);
        if (hdr_init(tk->lat, h->lowest, h->highest > HTML_HDR_HIGHEST ? h->highest : HTML_HDR_HIGHEST, h->sig_digits))
            knee_oom();
    }
    r = hdr_add(tk->lat, h);
    if (r)
        return knee_fail(err, errlen, r, "target %s: %s (intervals of one report must share one bucket layout)", target,
                         knee_strerror(r));
    tk->done += (uint64_t)h->total_count;
    t->planned += (uint64_t)h->total_count;
    struct hdr_iter it;
    hdr_iter_recorded_init(&it, h);
    while (hdr_iter_next(&it)) {
        double ms = (double)hdr_median_equivalent(h, it.value_iterated_to) / 1e6;
        dbl_add(&t->dbl, ms, (uint64_t)it.count_added_in_step);
        dbl_add(&tk->heat, ms, (uint64_t)it.count_added_in_step);
    }
    int64_t s_ns = (int64_t)llround(start_s * 1e9), e_ns = (int64_t)llround((start_s + length_s) * 1e9);
    if (!run->t_any || s_ns < run->t_min_ns)
        run->t_min_ns = s_ns;
    if (!run->t_any || e_ns > run->t_max_ns)
        run->t_max_ns = e_ns;
    run->t_any = true;
    run->have_hlog = true;
    return 0;
}
