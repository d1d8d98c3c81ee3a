/* The `knee stats` report as one JSON object (docs/FORMATS.md, "knee stats JSON"): the
 * header (column, files, rows), then one writer per numbered analysis in the order of the
 * text, then the warnings. Every number the text shows is here, with the ranks and counts
 * behind it; every number comes from struct report (report.c). */
#include "analyze/report.h"

#include "core/json.h"

#include <math.h>
#include <stdlib.h>

static void json_summary(struct jw *j, const struct summary *s)
{
    jw_object_begin(j);
    jw_kv_uint(j, "count", s->count);
    jw_kv_double(j, "mean", s->mean);
    jw_kv_double(j, "stdev", s->stdev);
    jw_kv_double(j, "min", s->min);
    jw_kv_double(j, "max", s->max);
    jw_kv_double(j, "p50", s->p50);
    jw_kv_double(j, "p90", s->p90);
    jw_kv_double(j, "p95", s->p95);
    jw_kv_double(j, "p99", s->p99);
    jw_kv_double(j, "p99.9", s->p999);
    jw_object_end(j);
}

static void json_ci(struct jw *j, const struct group_result *g)
{
    jw_object_begin(j);
    for (int k = 0; k < REPORT_NPCT; k++) {
        const struct pct_ci *c = &g->ci[k];
        jw_key(j, report_pct_names[k]);
        jw_object_begin(j);
        jw_kv_double(j, "value", c->value);
        jw_kv_bool(j, "defined", c->defined);
        if (c->defined) {
            jw_kv_double(j, "lo", c->lo);
            jw_kv_double(j, "hi", c->hi);
            jw_kv_uint(j, "lo_rank", c->lo_rank);
            jw_kv_uint(j, "hi_rank", c->hi_rank);
        } else {
            jw_key(j, "lo");
            jw_null(j);
            jw_key(j, "hi");
            jw_null(j);
        }
        jw_kv_double(j, "coverage", c->coverage);
        jw_kv_uint(j, "beyond", c->beyond);
        jw_kv_bool(j, "too_few", c->too_few);
        jw_object_end(j);
    }
    jw_object_end(j);
}

static void json_m2s(struct jw *j, const struct mean_2sd *m)
{
    jw_object_begin(j);
    jw_kv_double(j, "mean_plus_2sd", m->mean_plus_2sd);
    jw_kv_double(j, "p99", m->p99);
    jw_kv_double(j, "rel_diff", m->rel_diff);
    jw_kv_bool(j, "flagged", m->flagged);
    jw_object_end(j);
}

static void json_share(struct jw *j, uint64_t under, size_t count)
{
    jw_object_begin(j);
    jw_kv_uint(j, "under", under);
    jw_kv_uint(j, "count", count);
    jw_kv_double(j, "share", count ? (double)under / (double)count : NAN);
    jw_object_end(j);
}

static void json_str_or_null(struct jw *j, const char *key, const char *s)
{
    jw_key(j, key);
    if (s)
        jw_string(j, s);
    else
        jw_null(j);
}

/* column, unit, mode, files, by, time and the accounting of rows */
static void put_header(struct jw *j, const struct report *rep)
{
    jw_kv_string(j, "column", rep->column);
    jw_kv_string(j, "unit", rep->unit);
    jw_kv_string(j, "mode", rep->approx ? "approx" : "exact");
    jw_key(j, "files");
    jw_array_begin(j);
    for (size_t i = 0; i < rep->nfiles; i++)
        jw_string(j, rep->files[i]);
    jw_array_end(j);
    json_str_or_null(j, "by", rep->by_col);
    json_str_or_null(j, "time", rep->time_col);
    jw_key(j, "rows");
    jw_object_begin(j);
    jw_kv_uint(j, "read", rep->rows);
    jw_kv_uint(j, "kept", rep->kept);
    jw_kv_uint(j, "missing_value", rep->missing);
    jw_kv_uint(j, "filtered_where", rep->filtered_where);
    jw_kv_uint(j, "filtered_time", rep->filtered_time);
    jw_kv_uint(j, "filtered_warmup", rep->filtered_warmup);
    jw_kv_uint(j, "hdr_overflow", rep->hdr_overflow);
    jw_kv_uint(j, "out_of_time_order", rep->unordered);
    jw_object_end(j);
}

/* 1. "groups", "all_name", "all" */
static void put_summaries(struct jw *j, const struct report *rep)
{
    jw_key(j, "groups");
    jw_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        jw_key(j, rep->groups[i].name);
        json_summary(j, &rep->groups[i].s);
    }
    jw_object_end(j);
    jw_kv_string(j, "all_name", rep->all.name);
    jw_key(j, "all");
    json_summary(j, &rep->all.s);
    /* knee run's own summary of the same values (knee logs, _ms column, exact mode), or null */
    jw_key(j, "as_knee_run");
    if (!rep->has_as_run) {
        jw_null(j);
        return;
    }
    jw_object_begin(j);
    jw_key(j, "groups");
    jw_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        jw_key(j, rep->groups[i].name);
        json_summary(j, &rep->groups[i].as_run);
    }
    jw_object_end(j);
    jw_key(j, "all");
    json_summary(j, &rep->all.as_run);
    jw_object_end(j);
}

/* 2. "histogram": the doubling buckets from the first to the last non-empty one */
static void put_histogram(struct jw *j, const struct report *rep)
{
    jw_key(j, "histogram");
    jw_object_begin(j);
    jw_kv_double(j, "first_bound", rep->hist.first);
    jw_key(j, "buckets");
    jw_array_begin(j);
    size_t first = DBL_MAX_BUCKETS, last = 0;
    for (size_t i = 0; i < DBL_MAX_BUCKETS; i++)
        if (rep->hist.counts[i]) {
            if (first == DBL_MAX_BUCKETS)
                first = i;
            last = i;
        }
    for (size_t i = first; i <= last && first < DBL_MAX_BUCKETS; i++) {
        jw_object_begin(j);
        jw_kv_double(j, "lo", dbl_lower(&rep->hist, i));
        jw_kv_double(j, "hi", dbl_upper(&rep->hist, i)); /* null for the last, open bucket */
        jw_kv_uint(j, "count", rep->hist.counts[i]);
        jw_object_end(j);
    }
    jw_array_end(j);
    jw_object_end(j);
}

/* 3. "p99_methods" */
static void put_p99_methods(struct jw *j, const struct report *rep)
{
    jw_key(j, "p99_methods");
    jw_object_begin(j);
    jw_kv_double(j, "nearest_rank", rep->p99_nearest);
    jw_kv_double(j, "exclusive", rep->p99_exclusive);
    jw_kv_double(j, "inclusive", rep->p99_inclusive);
    jw_object_end(j);
}

/* 4. "averaged_p99" and "window_p99" */
static void put_averaging(struct jw *j, const struct report *rep)
{
    jw_key(j, "averaged_p99");
    jw_object_begin(j);
    jw_key(j, "groups");
    jw_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++)
        jw_kv_double(j, rep->groups[i].name, rep->groups[i].s.p99);
    jw_object_end(j);
    jw_kv_double(j, "groups_mean", rep->groups_mean_p99);
    jw_kv_double(j, "all", rep->all.s.p99);
    jw_object_end(j);
    jw_key(j, "window_p99");
    jw_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        const struct group_result *g = &rep->groups[i];
        if (!g->has_windows)
            continue;
        jw_key(j, g->name);
        jw_object_begin(j);
        jw_kv_uint(j, "windows", g->win.nwindows);
        jw_kv_double(j, "mean", g->win.mean);
        jw_kv_double(j, "max", g->win.max);
        jw_kv_double(j, "whole", g->win.whole);
        if (rep->approx)
            jw_kv_uint(j, "late_rows", g->late);
        jw_object_end(j);
    }
    jw_object_end(j);
}

/* 5. "prometheus": the bounds and each estimate with its bucket */
static void put_prometheus(struct jw *j, const struct report *rep)
{
    jw_key(j, "prometheus");
    jw_object_begin(j);
    jw_key(j, "bounds");
    jw_array_begin(j);
    for (size_t i = 0; i < rep->prom.nbounds; i++)
        jw_double(j, rep->prom.bounds[i]);
    jw_array_end(j);
    for (int i = 0; i < REPORT_NPROM; i++) {
        jw_key(j, report_prom_names[i]);
        jw_object_begin(j);
        jw_kv_double(j, "low", rep->prom_est[i].low);
        jw_kv_double(j, "high", rep->prom_est[i].high); /* null for +Inf */
        jw_kv_double(j, "estimate", rep->prom_est[i].estimate);
        jw_kv_double(j, "exact", rep->prom_exact[i]);
        jw_object_end(j);
    }
    jw_object_end(j);
}

/* 6. "share_under" */
static void put_share_under(struct jw *j, const struct report *rep)
{
    jw_key(j, "share_under");
    jw_object_begin(j);
    jw_kv_double(j, "threshold", rep->under);
    jw_key(j, "groups");
    jw_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        jw_key(j, rep->groups[i].name);
        json_share(j, rep->groups[i].under, rep->groups[i].s.count);
    }
    jw_object_end(j);
    jw_key(j, "all");
    json_share(j, rep->all.under, rep->all.s.count);
    jw_object_end(j);
}

/* 7. "small_window_p99" (the values) and "small_windows" (where each window lies) */
static void put_small_windows(struct jw *j, const struct report *rep)
{
    jw_key(j, "small_window_p99");
    jw_array_begin(j);
    for (size_t i = 0; i < rep->nsmall; i++)
        jw_double(j, rep->small[i].p99);
    jw_array_end(j);
    jw_key(j, "small_windows");
    jw_object_begin(j);
    jw_kv_string(j, "group", rep->small_group);
    jw_kv_uint(j, "size", REPORT_SMALL_WINDOW_LEN);
    jw_key(j, "windows");
    jw_array_begin(j);
    for (size_t i = 0; i < rep->nsmall; i++) {
        jw_object_begin(j);
        jw_kv_uint(j, "start", rep->small[i].start);
        jw_kv_uint(j, "len", rep->small[i].len);
        jw_kv_double(j, "p99", rep->small[i].p99);
        jw_object_end(j);
    }
    jw_array_end(j);
    jw_object_end(j);
}

/* 8. "confidence": null in approx mode */
static void put_confidence(struct jw *j, const struct report *rep)
{
    jw_key(j, "confidence");
    if (rep->approx) {
        jw_null(j);
        return;
    }
    jw_object_begin(j);
    jw_kv_double(j, "level", REPORT_CONFIDENCE);
    jw_key(j, "groups");
    jw_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        jw_key(j, rep->groups[i].name);
        json_ci(j, &rep->groups[i]);
    }
    jw_object_end(j);
    jw_key(j, "all");
    json_ci(j, &rep->all);
    jw_object_end(j);
}

/* 9. "mean_2sd" */
static void put_mean_2sd(struct jw *j, const struct report *rep)
{
    jw_key(j, "mean_2sd");
    jw_object_begin(j);
    jw_key(j, "groups");
    jw_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        jw_key(j, rep->groups[i].name);
        json_m2s(j, &rep->groups[i].m2s);
    }
    jw_object_end(j);
    jw_key(j, "all");
    json_m2s(j, &rep->all.m2s);
    jw_object_end(j);
}

/* 10. "heatmap": null without a time column */
static void put_heatmap(struct jw *j, const struct report *rep)
{
    jw_key(j, "heatmap");
    struct heatmap_shape sh;
    uint64_t *cells = rep->has_heatmap ? heatmap_cells(rep->heat, REPORT_HEAT_COLS, &sh) : NULL;
    if (!cells) {
        jw_null(j);
        return;
    }
    jw_object_begin(j);
    jw_kv_int(j, "start_s", sh.start_s);
    jw_kv_int(j, "column_s", sh.col_width_s);
    jw_key(j, "bucket_lo");
    jw_array_begin(j);
    for (size_t b = sh.bmin; b <= sh.bmax; b++)
        jw_double(j, dbl_lower(&rep->heat->shape, b));
    jw_array_end(j);
    jw_key(j, "counts");
    jw_array_begin(j);
    for (size_t c = 0; c < sh.ncols; c++) {
        jw_array_begin(j);
        for (size_t b = sh.bmin; b <= sh.bmax; b++)
            jw_uint(j, cells[c * DBL_MAX_BUCKETS + b]);
        jw_array_end(j);
    }
    jw_array_end(j);
    jw_object_end(j);
    free(cells);
}

/* 11. "expect_median": null without --expect-median */
static void put_median_check(struct jw *j, const struct report *rep)
{
    jw_key(j, "expect_median");
    if (!rep->has_median_check) {
        jw_null(j);
        return;
    }
    const struct median_check *m = &rep->median;
    jw_object_begin(j);
    jw_kv_double(j, "expected", m->expected_ms);
    jw_kv_double(j, "median", m->median_ms);
    jw_kv_double(j, "ratio", m->ratio);
    jw_kv_bool(j, "off", m->off);
    jw_kv_bool(j, "nagle_like", m->nagle_like);
    jw_kv_double(j, "share_near_40", m->share_near_40);
    jw_object_end(j);
}

static void put_warnings(struct jw *j, const struct report *rep)
{
    jw_key(j, "warnings");
    jw_array_begin(j);
    for (size_t i = 0; i < rep->nwarnings; i++)
        jw_string(j, rep->warnings[i]);
    jw_array_end(j);
}

void report_print_json(FILE *out, const struct report *rep, bool pretty)
{
    struct jw j;
    jw_init(&j, out, pretty);
    jw_object_begin(&j);
    put_header(&j, rep);
    put_summaries(&j, rep);     /* 1 */
    put_histogram(&j, rep);     /* 2 */
    put_p99_methods(&j, rep);   /* 3 */
    put_averaging(&j, rep);     /* 4 */
    put_prometheus(&j, rep);    /* 5 */
    put_share_under(&j, rep);   /* 6 */
    put_small_windows(&j, rep); /* 7 */
    put_confidence(&j, rep);    /* 8 */
    put_mean_2sd(&j, rep);      /* 9 */
    put_heatmap(&j, rep);       /* 10 */
    put_median_check(&j, rep);  /* 11 */
    put_warnings(&j, rep);
    jw_object_end(&j);
    jw_end(&j);
}
