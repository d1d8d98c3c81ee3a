/* Computing the `knee stats` report: every number the printers show (report_text.c,
 * report_json.c), from exact sorted arrays or, with --approx, from HDR histograms, and the
 * warnings in the order a reader should see them. */
#include "analyze/report.h"

#include "core/err.h"
#include "core/units.h"
#include "core/warn.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const double report_pcts[REPORT_NPCT] = {
    [REPORT_P50] = 50, [REPORT_P90] = 90, [REPORT_P95] = 95, [REPORT_P99] = 99, [REPORT_P999] = 99.9};
const char *const report_pct_names[REPORT_NPCT] = {
    [REPORT_P50] = "p50", [REPORT_P90] = "p90", [REPORT_P95] = "p95", [REPORT_P99] = "p99", [REPORT_P999] = "p99.9"};
const double report_prom_pcts[REPORT_NPROM] = {[REPORT_PROM_P50] = 50, [REPORT_PROM_P95] = 95, [REPORT_PROM_P99] = 99};
const char *const report_prom_names[REPORT_NPROM] = {
    [REPORT_PROM_P50] = "p50", [REPORT_PROM_P95] = "p95", [REPORT_PROM_P99] = "p99"};

/* A warning of the report, cut at 511 bytes (core/warn.h). */
static void warn(struct report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct report *rep, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    warn_strv_vadd(&rep->warnings, &rep->nwarnings, 512, fmt, ap);
    va_end(ap);
}

const char *report_column_unit(const char *column)
{
    size_t n = strlen(column);
    if (n > 3 && strcmp(column + n - 3, "_ms") == 0)
        return "ms";
    if (n > 3 && strcmp(column + n - 3, "_us") == 0)
        return "us";
    if (n > 2 && strcmp(column + n - 2, "_s") == 0)
        return "s";
    return "";
}

long report_small_window_group(const struct dataset *d, const struct report_opts *opts)
{
    if (opts->window_group) {
        for (size_t i = 0; i < d->ng; i++)
            if (strcmp(d->g[i]->name, opts->window_group) == 0)
                return (long)i;
        return REPORT_NO_GROUP;
    }
    if (d->ng == 0)
        return REPORT_NO_GROUP;
    size_t *ord = dataset_name_order(d);
    long gi = (long)ord[0];
    free(ord);
    return gi;
}

/* ---------------------------------------------------------------- exact mode */

static void exact_group(struct group_result *r, const double *sorted, size_t n)
{
    stats_summarize(sorted, n, &r->s);
    r->has_ci = true;
    for (int i = 0; i < REPORT_NPCT; i++)
        stats_percentile_ci(sorted, n, report_pcts[i], REPORT_CONFIDENCE, &r->ci[i]);
    analyze_mean_2sd(r->s.mean, r->s.stdev, r->s.p99, &r->m2s);
}

/* Merge k sorted arrays into one (a binary heap of array heads): O(n log k). */
struct head {
    const double *p, *end;
};

static void sift_down(struct head *h, size_t k, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < k && *h[l].p < *h[m].p)
            m = l;
        if (l + 1 < k && *h[l + 1].p < *h[m].p)
            m = l + 1;
        if (m == i)
            return;
        struct head t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static double *merge_sorted(struct dataset *d, size_t total)
{
    double *all = xmalloc((total ? total : 1) * sizeof *all);
    struct head *h = xmalloc((d->ng ? d->ng : 1) * sizeof *h);
    size_t k = 0;
    for (size_t i = 0; i < d->ng; i++)
        if (d->g[i]->n)
            h[k++] = (struct head){d->g[i]->v, d->g[i]->v + d->g[i]->n};
    for (size_t i = k / 2; i-- > 0;)
        sift_down(h, k, i);
    size_t w = 0;
    while (k > 0) {
        all[w++] = *h[0].p++;
        if (h[0].p == h[0].end)
            h[0] = h[--k];
        sift_down(h, k, 0);
    }
    free(h);
    return all;
}

/* The summary knee run prints for these values (ms, sorted), from the histogram it uses:
 * the same integer nanoseconds recorded, the same HdrHistogram percentiles, mean and stdev. */
static void as_run_summary(const double *sorted, size_t n, struct summary *s)
{
    memset(s, 0, sizeof *s);
    s->count = n;
    struct hdr h;
    if (n == 0 || hdr_init(&h, REPORT_RUN_HDR_LOWEST, REPORT_RUN_HDR_HIGHEST, REPORT_RUN_HDR_DIGITS) != 0) {
        s->min = s->max = s->mean = s->stdev = s->p50 = s->p90 = s->p95 = s->p99 = s->p999 = NAN;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double ns = sorted[i] * 1e6;
        hdr_record(&h, ns < 9e18 ? llround(ns) : INT64_MAX, 1);
    }
    s->count = (size_t)h.total_count; /* beyond an hour a value is not in knee run's histogram either */
    s->mean = hdr_mean(&h) / 1e6;
    s->stdev = hdr_stdev(&h) / 1e6;
    s->min = (double)hdr_min(&h) / 1e6;
    s->max = (double)hdr_max(&h) / 1e6;
    s->p50 = (double)hdr_value_at_percentile(&h, 50) / 1e6;
    s->p90 = (double)hdr_value_at_percentile(&h, 90) / 1e6;
    s->p95 = (double)hdr_value_at_percentile(&h, 95) / 1e6;
    s->p99 = (double)hdr_value_at_percentile(&h, 99) / 1e6;
    s->p999 = (double)hdr_value_at_percentile(&h, 99.9) / 1e6;
    hdr_release(&h);
}

static void build_exact(struct report *rep, struct dataset *d, const size_t *ord, long small_gi, double **all_out)
{
    size_t maxn = 0;
    for (size_t i = 0; i < d->ng; i++)
        if (d->g[i]->n > maxn)
            maxn = (size_t)d->g[i]->n;
    double *scratch = d->has_time ? xmalloc((maxn ? maxn : 1) * sizeof *scratch) : NULL;
    for (size_t r = 0; r < d->ng; r++) {
        struct dataset_group *g = d->g[ord[r]];
        struct group_result *gr = &rep->groups[r];
        size_t n = (size_t)g->n;
        if ((long)ord[r] == small_gi) /* in row order: before sorting */
            rep->nsmall = analyze_small_windows(g->v, n, REPORT_SMALL_WINDOWS, REPORT_SMALL_WINDOW_LEN, rep->small);
        if (d->has_time && n > 0) {
            /* the whole-run p99 comes from the sorted values below; 0 is a placeholder */
            analyze_window_p99(g->v, g->sec, n, scratch, 0, &gr->win);
            gr->has_windows = true;
        }
        free(g->sec);
        g->sec = NULL;
        stats_sort(g->v, n);
        exact_group(gr, g->v, n);
        if (rep->has_as_run)
            as_run_summary(g->v, n, &gr->as_run);
        gr->win.whole = gr->s.p99;
    }
    free(scratch);
    size_t total = (size_t)d->kept;
    double *all;
    if (d->ng == 1) {
        all = d->g[0]->v; /* one group: it is the whole */
        d->g[0]->v = NULL;
    } else {
        all = merge_sorted(d, total);
        for (size_t i = 0; i < d->ng; i++) {
            free(d->g[i]->v);
            d->g[i]->v = NULL;
        }
    }
    exact_group(&rep->all, all, total);
    if (rep->has_as_run)
        as_run_summary(all, total, &rep->all.as_run);
    rep->p99_nearest = rep->all.s.p99;
    rep->p99_exclusive = analyze_python_quantile(all, total, 99, 100, true);
    rep->p99_inclusive = analyze_python_quantile(all, total, 99, 100, false);
    for (int i = 0; i < REPORT_NPROM; i++)
        rep->prom_exact[i] = stats_nearest_rank(all, total, report_prom_pcts[i]);
    *all_out = all;
}

/* ---------------------------------------------------------------- approx mode */

static double hdr_pct(const struct hdr *h, double p, double min, double max)
{
    double v = (double)hdr_value_at_percentile(h, p) / DATASET_HDR_SCALE;
    /* HDR reports a bucket's highest equivalent value; the exact extremes bound it */
    return v > max ? max : v < min ? min : v;
}

static void approx_summary(struct summary *s, const struct hdr *h, uint64_t n, double min, double max,
                           const struct stats_running *w)
{
    memset(s, 0, sizeof *s);
    s->count = (size_t)n;
    if (n == 0) {
        s->min = s->max = s->mean = s->stdev = s->p50 = s->p90 = s->p95 = s->p99 = s->p999 = NAN;
        return;
    }
    s->min = min;
    s->max = max;
    s->mean = stats_running_mean(w);
    s->stdev = stats_running_stdev(w);
    s->p50 = hdr_pct(h, 50, min, max);
    s->p90 = hdr_pct(h, 90, min, max);
    s->p95 = hdr_pct(h, 95, min, max);
    s->p99 = hdr_pct(h, 99, min, max);
    s->p999 = hdr_pct(h, 99.9, min, max);
}

static void build_approx(struct report *rep, struct dataset *d, const size_t *ord, long small_gi)
{
    struct hdr all;
    hdr_init(&all, 1, DATASET_HDR_HIGHEST, DATASET_HDR_DIGITS);
    double amin = INFINITY, amax = -INFINITY;
    struct stats_running aw;
    stats_running_init(&aw);
    uint64_t an = 0;
    for (size_t r = 0; r < d->ng; r++) {
        struct dataset_group *g = d->g[ord[r]];
        struct group_result *gr = &rep->groups[r];
        approx_summary(&gr->s, &g->hdr, g->n, g->min, g->max, &g->w);
        analyze_mean_2sd(gr->s.mean, gr->s.stdev, gr->s.p99, &gr->m2s);
        if (d->has_time && g->nwin > 0) {
            gr->has_windows = true;
            gr->win.nwindows = g->nwin;
            gr->win.mean = stats_mean(g->win_p99, g->nwin);
            gr->win.max = g->win_p99[0];
            for (size_t i = 1; i < g->nwin; i++)
                if (g->win_p99[i] > gr->win.max)
                    gr->win.max = g->win_p99[i];
            gr->win.whole = gr->s.p99;
            gr->late = g->late;
        }
        if ((long)ord[r] == small_gi && g->sw) {
            rep->nsmall = g->nsw;
            double *tmp = xmalloc((g->sw_len ? g->sw_len : 1) * sizeof *tmp);
            for (size_t i = 0; i < g->nsw && i < REPORT_SMALL_WINDOWS; i++) {
                rep->small[i] = g->sw[i];
                if (g->sw[i].len == 0)
                    continue;
                memcpy(tmp, g->sw_values + i * g->sw_len, g->sw[i].len * sizeof *tmp);
                stats_sort(tmp, g->sw[i].len);
                rep->small[i].p99 = stats_nearest_rank(tmp, g->sw[i].len, 99);
            }
            free(tmp);
        }
        if (g->n == 0)
            continue;
        hdr_add(&all, &g->hdr);
        stats_running_merge(&aw, &g->w);
        an += g->n;
        if (g->min < amin)
            amin = g->min;
        if (g->max > amax)
            amax = g->max;
    }
    approx_summary(&rep->all.s, &all, an, amin, amax, &aw);
    analyze_mean_2sd(rep->all.s.mean, rep->all.s.stdev, rep->all.s.p99, &rep->all.m2s);
    rep->p99_nearest = rep->all.s.p99;
    rep->p99_exclusive = rep->p99_inclusive = NAN;
    rep->prom_exact[REPORT_PROM_P50] = rep->all.s.p50;
    rep->prom_exact[REPORT_PROM_P95] = hdr_pct(&all, report_prom_pcts[REPORT_PROM_P95], amin, amax);
    rep->prom_exact[REPORT_PROM_P99] = rep->all.s.p99;
    if (rep->has_median_check) {
        struct median_check *m = &rep->median;
        m->median_ms = rep->all.s.p50;
        m->ratio = m->expected_ms > 0 ? m->median_ms / m->expected_ms : NAN;
        m->off = m->ratio > ANALYZE_MEDIAN_FACTOR || m->ratio < 1 / ANALYZE_MEDIAN_FACTOR;
        m->share_near_40 = NAN;
        double excess = m->median_ms - m->expected_ms;
        m->nagle_like = m->off && excess >= 30 && excess <= 50;
    }
    hdr_release(&all);
}

/* ---------------------------------------------------------------- build */

static char *join_names(const struct report *rep)
{
    if (rep->ng == 1)
        return xstrdup(rep->groups[0].name);
    size_t len = 0;
    for (size_t i = 0; i < rep->ng; i++)
        len += strlen(rep->groups[i].name) + 1;
    if (len > 40)
        return xstrdup("all");
    char *s = xmalloc(len + 1);
    s[0] = '\0';
    for (size_t i = 0; i < rep->ng; i++) {
        if (i)
            strcat(s, "+");
        strcat(s, rep->groups[i].name);
    }
    return s;
}

/* One line per group naming every printed percentile with fewer than STATS_MIN_BEYOND values
 * above it: such a percentile rests on a handful of requests and moves with each of them. */
static void tail_warnings(struct report *rep, const struct group_result *r)
{
    if (!r->has_ci)
        return;
    char list[256] = "";
    size_t k = 0;
    for (int i = 0; i < REPORT_NPCT; i++) {
        if (!r->ci[i].too_few)
            continue;
        char v[40];
        int n = snprintf(list + k, sizeof list - k, "%s%s = %s (%zu)", k ? ", " : "", report_pct_names[i],
                         units_fmt_cell(r->ci[i].value, 1, v, sizeof v), r->ci[i].beyond);
        if (n > 0 && (size_t)n < sizeof list - k)
            k += (size_t)n;
    }
    if (k)
        warn(rep,
             "%s: fewer than %d values lie above %s: such a percentile is mostly noise "
             "(%zu value%s in all; p99 wants thousands, p99.9 tens of thousands)",
             r->name, STATS_MIN_BEYOND, list, r->s.count, r->s.count == 1 ? "" : "s");
}

int report_build(struct report *rep, struct dataset *d, const struct report_opts *o)
{
    memset(rep, 0, sizeof *rep);
    rep->column = d->o.column;
    rep->unit = report_column_unit(d->o.column);
    rep->approx = d->o.approx;
    rep->by_col = d->by_col;
    rep->time_col = d->has_time ? d->time_col : NULL;
    rep->nfiles = d->nfiles;
    rep->files = d->files;
    rep->rows = d->rows;
    rep->kept = d->kept;
    rep->missing = d->missing;
    rep->filtered_where = d->filtered_where;
    rep->filtered_time = d->filtered_time;
    rep->filtered_warmup = d->filtered_warmup;
    rep->hdr_overflow = d->hdr_overflow;
    rep->unordered = d->unordered;
    rep->has_as_run = d->knee_log && !d->o.approx && strcmp(rep->unit, "ms") == 0;
    rep->hist = d->hist;
    rep->prom = d->prom;
    rep->custom_buckets = o->custom_buckets;
    rep->under = o->under;
    if (d->kept == 0)
        return KNEE_EEMPTY;
    dataset_finish(d); /* idempotent: the rows in time order even when the caller did not ask */
    long small_gi = report_small_window_group(d, o);
    if (small_gi == REPORT_NO_GROUP)
        return KNEE_ENOTFOUND;
    rep->small_group = d->g[small_gi]->name;
    rep->small_n = (size_t)d->g[small_gi]->n;
    if (o->expect_median) {
        rep->has_median_check = true;
        rep->median.expected_ms = o->expect_median_ms;
    }

    size_t *ord = dataset_name_order(d);
    /* groups without a kept value (every row filtered out) are left out of the report */
    size_t ng = 0;
    for (size_t i = 0; i < d->ng; i++)
        if (d->g[ord[i]]->n > 0)
            ord[ng++] = ord[i];
    rep->ng = ng;
    rep->groups = xcalloc(ng ? ng : 1, sizeof *rep->groups);
    for (size_t i = 0; i < ng; i++) {
        rep->groups[i].name = xstrdup(d->g[ord[i]]->name);
        rep->groups[i].under = d->g[ord[i]]->under;
    }
    rep->all.name = join_names(rep);
    rep->all.under = 0;
    for (size_t i = 0; i < ng; i++)
        rep->all.under += rep->groups[i].under;

    struct dataset sub = *d; /* the builders walk only the groups that have values */
    struct dataset_group **gs = xmalloc((ng ? ng : 1) * sizeof *gs);
    size_t *ident = xmalloc((ng ? ng : 1) * sizeof *ident);
    long sub_small = REPORT_NO_GROUP;
    for (size_t i = 0; i < ng; i++) {
        gs[i] = d->g[ord[i]];
        ident[i] = i;
        if ((long)ord[i] == small_gi)
            sub_small = (long)i;
    }
    sub.g = gs;
    sub.ng = ng;
    if (rep->approx) {
        build_approx(rep, &sub, ident, sub_small);
    } else {
        double *all;
        build_exact(rep, &sub, ident, sub_small, &all);
        if (rep->has_median_check)
            analyze_median_check(all, (size_t)d->kept, o->expect_median_ms, &rep->median);
        free(all);
    }
    free(gs);
    free(ident);
    free(ord);

    double sum = 0;
    for (size_t i = 0; i < ng; i++)
        sum += rep->groups[i].s.p99;
    rep->groups_mean_p99 = ng ? sum / (double)ng : NAN;
    for (int i = 0; i < REPORT_NPROM; i++)
        prom_quantile(&rep->prom, report_prom_pcts[i] / 100, &rep->prom_est[i]);

    rep->has_heatmap = d->has_time && d->heat.total > 0;
    rep->heat = &d->heat;

    /* warnings, in the order a reader should see them */
    if (rep->missing)
        warn(rep,
             "%llu row%s had no %s value (a dropped or failed request has none) and %s left out; "
             "filter by outcome to look at them",
             (unsigned long long)rep->missing, rep->missing == 1 ? "" : "s", rep->column,
             rep->missing == 1 ? "is" : "are");
    if (rep->hdr_overflow)
        warn(rep, "%llu value%s above the HDR range (%g %s) are not in the approximate percentiles",
             (unsigned long long)rep->hdr_overflow, rep->hdr_overflow == 1 ? "" : "s",
             (double)DATASET_HDR_HIGHEST / DATASET_HDR_SCALE, rep->unit);
    for (size_t i = 0; i < ng; i++)
        if (rep->groups[i].late)
            warn(rep, "%s: %llu row%s came more than %d s out of time order and %s not in its per-second windows",
                 rep->groups[i].name, (unsigned long long)rep->groups[i].late, rep->groups[i].late == 1 ? "" : "s",
                 DATASET_RING, rep->groups[i].late == 1 ? "is" : "are");
    for (size_t i = 0; i < ng; i++)
        tail_warnings(rep, &rep->groups[i]);
    if (ng > 1)
        tail_warnings(rep, &rep->all);
    if (rep->approx && rep->unordered)
        warn(rep,
             "%llu row%s came earlier in time than the row before (knee run writes rows as requests complete): "
             "--approx cuts its ten small windows in file order; without --approx they follow the time column",
             (unsigned long long)rep->unordered, rep->unordered == 1 ? "" : "s");
    if (rep->small_n < REPORT_SMALL_WINDOW_LEN)
        warn(rep, "%s has only %zu value%s: its small windows are shorter than %d", rep->small_group, rep->small_n,
             rep->small_n == 1 ? "" : "s", REPORT_SMALL_WINDOW_LEN);
    return 0;
}

void report_release(struct report *rep)
{
    for (size_t i = 0; i < rep->ng; i++)
        free(rep->groups[i].name);
    free(rep->groups);
    free(rep->all.name);
    for (size_t i = 0; i < rep->nwarnings; i++)
        free(rep->warnings[i]);
    free(rep->warnings);
    memset(rep, 0, sizeof *rep);
}
