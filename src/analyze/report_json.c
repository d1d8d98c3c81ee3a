/* The `knee stats` report as one JSON object (docs/FORMATS.md, "knee stats JSON"): the
 * header (column, files, rows), then one writer per numbered analysis in the order of the
 * text, then the warnings. Every number the text shows is here, with the ranks and counts
 * behind it; every number comes from struct report (report.c). */
#include "analyze/report.h"

#include "core/json.h"

#include <math.h>
#include <stdlib.h>

static void json_summary(struct json *j, const struct summary *s)
{
    json_object_begin(j);
    json_kv_uint(j, "count", s->count);
    json_kv_double(j, "mean", s->mean);
    json_kv_double(j, "stdev", s->stdev);
    json_kv_double(j, "min", s->min);
    json_kv_double(j, "max", s->max);
    json_kv_double(j, "p50", s->p50);
    json_kv_double(j, "p90", s->p90);
    json_kv_double(j, "p95", s->p95);
    json_kv_double(j, "p99", s->p99);
    json_kv_double(j, "p99.9", s->p999);
    json_object_end(j);
}

static void json_ci(struct json *j, const struct group_result *g)
{
    json_object_begin(j);
    for (int k = 0; k < REPORT_NPCT; k++) {
        const struct pct_ci *c = &g->ci[k];
        json_key(j, report_pct_names[k]);
        json_object_begin(j);
        json_kv_double(j, "value", c->value);
        json_kv_bool(j, "defined", c->defined);
        if (c->defined) {
            json_kv_double(j, "lo", c->lo);
            json_kv_double(j, "hi", c->hi);
            json_kv_uint(j, "lo_rank", c->lo_rank);
            json_kv_uint(j, "hi_rank", c->hi_rank);
        } else {
            json_key(j, "lo");
            json_null(j);
            json_key(j, "hi");
            json_null(j);
        }
        json_kv_double(j, "coverage", c->coverage);
        json_kv_uint(j, "beyond", c->beyond);
        json_kv_bool(j, "too_few", c->too_few);
        json_object_end(j);
    }
    json_object_end(j);
}

static void json_m2s(struct json *j, const struct mean_2sd *m)
{
    json_object_begin(j);
    json_kv_double(j, "mean_plus_2sd", m->mean_plus_2sd);
    json_kv_double(j, "p99", m->p99);
    json_kv_double(j, "rel_diff", m->rel_diff);
    json_kv_bool(j, "flagged", m->flagged);
    json_object_end(j);
}

static void json_share(struct json *j, uint64_t under, size_t count)
{
    json_object_begin(j);
    json_kv_uint(j, "under", under);
    json_kv_uint(j, "count", count);
    json_kv_double(j, "share", count ? (double)under / (double)count : NAN);
    json_object_end(j);
}

static void json_str_or_null(struct json *j, const char *key, const char *s)
{
    json_key(j, key);
    if (s)
        json_string(j, s);
    else
        json_null(j);
}

/* column, unit, mode, files, by, time and the accounting of rows */
static void put_header(struct json *j, const struct report *rep)
{
    json_kv_string(j, "column", rep->column);
    json_kv_string(j, "unit", rep->unit);
    json_kv_string(j, "mode", rep->approx ? "approx" : "exact");
    json_key(j, "files");
    json_array_begin(j);
    for (size_t i = 0; i < rep->nfiles; i++)
        json_string(j, rep->files[i]);
    json_array_end(j);
    json_str_or_null(j, "by", rep->by_col);
    json_str_or_null(j, "time", rep->time_col);
    json_key(j, "rows");
    json_object_begin(j);
    json_kv_uint(j, "read", rep->rows);
    json_kv_uint(j, "kept", rep->kept);
    json_kv_uint(j, "missing_value", rep->missing);
    json_kv_uint(j, "filtered_where", rep->filtered_where);
    json_kv_uint(j, "filtered_time", rep->filtered_time);
    json_kv_uint(j, "filtered_warmup", rep->filtered_warmup);
    json_kv_uint(j, "hdr_overflow", rep->hdr_overflow);
    json_kv_uint(j, "out_of_time_order", rep->unordered);
    json_object_end(j);
}

/* 1. "groups", "all_name", "all" */
static void put_summaries(struct json *j, const struct report *rep)
{
    json_key(j, "groups");
    json_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        json_key(j, rep->groups[i].name);
        json_summary(j, &rep->groups[i].s);
    }
    json_object_end(j);
    json_kv_string(j, "all_name", rep->all.name);
    json_key(j, "all");
    json_summary(j, &rep->all.s);
    /* knee run's own summary of the same values (knee logs, _ms column, exact mode), or null */
    json_key(j, "as_knee_run");
    if (!rep->has_as_run) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    json_key(j, "groups");
    json_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        json_key(j, rep->groups[i].name);
        json_summary(j, &rep->groups[i].as_run);
    }
    json_object_end(j);
    json_key(j, "all");
    json_summary(j, &rep->all.as_run);
    json_object_end(j);
}

/* 2. "histogram": the doubling buckets from the first to the last non-empty one */
static void put_histogram(struct json *j, const struct report *rep)
{
    json_key(j, "histogram");
    json_object_begin(j);
    json_kv_double(j, "first_bound", rep->hist.first);
    json_key(j, "buckets");
    json_array_begin(j);
    size_t first = DBL_MAX_BUCKETS, last = 0;
    for (size_t i = 0; i < DBL_MAX_BUCKETS; i++)
        if (rep->hist.counts[i]) {
            if (first == DBL_MAX_BUCKETS)
                first = i;
            last = i;
        }
    for (size_t i = first; i <= last && first < DBL_MAX_BUCKETS; i++) {
        json_object_begin(j);
        json_kv_double(j, "lo", dbl_lower(&rep->hist, i));
        json_kv_double(j, "hi", dbl_upper(&rep->hist, i)); /* null for the last, open bucket */
        json_kv_uint(j, "count", rep->hist.counts[i]);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

/* 3. "p99_methods" */
static void put_p99_methods(struct json *j, const struct report *rep)
{
    json_key(j, "p99_methods");
    json_object_begin(j);
    json_kv_double(j, "nearest_rank", rep->p99_nearest);
    json_kv_double(j, "exclusive", rep->p99_exclusive);
    json_kv_double(j, "inclusive", rep->p99_inclusive);
    json_object_end(j);
}

/* 4. "averaged_p99" and "window_p99" */
static void put_averaging(struct json *j, const struct report *rep)
{
    json_key(j, "averaged_p99");
    json_object_begin(j);
    json_key(j, "groups");
    json_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++)
        json_kv_double(j, rep->groups[i].name, rep->groups[i].s.p99);
    json_object_end(j);
    json_kv_double(j, "groups_mean", rep->groups_mean_p99);
    json_kv_double(j, "all", rep->all.s.p99);
    json_object_end(j);
    json_key(j, "window_p99");
    json_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        const struct group_result *g = &rep->groups[i];
        if (!g->has_windows)
            continue;
        json_key(j, g->name);
        json_object_begin(j);
        json_kv_uint(j, "windows", g->win.nwindows);
        json_kv_double(j, "mean", g->win.mean);
        json_kv_double(j, "max", g->win.max);
        json_kv_double(j, "whole", g->win.whole);
        if (rep->approx)
            json_kv_uint(j, "late_rows", g->late);
        json_object_end(j);
    }
    json_object_end(j);
}

/* 5. "prometheus": the bounds and each estimate with its bucket */
static void put_prometheus(struct json *j, const struct report *rep)
{
    json_key(j, "prometheus");
    json_object_begin(j);
    json_key(j, "bounds");
    json_array_begin(j);
    for (size_t i = 0; i < rep->prom.nbounds; i++)
        json_double(j, rep->prom.bounds[i]);
    json_array_end(j);
    for (int i = 0; i < REPORT_NPROM; i++) {
        json_key(j, report_prom_names[i]);
        json_object_begin(j);
        json_kv_double(j, "low", rep->prom_est[i].low);
        json_kv_double(j, "high", rep->prom_est[i].high); /* null for +Inf */
        json_kv_double(j, "estimate", rep->prom_est[i].estimate);
        json_kv_double(j, "exact", rep->prom_exact[i]);
        json_object_end(j);
    }
    json_object_end(j);
}

/* 6. "share_under" */
static void put_share_under(struct json *j, const struct report *rep)
{
    json_key(j, "share_under");
    json_object_begin(j);
    json_kv_double(j, "threshold", rep->under);
    json_key(j, "groups");
    json_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        json_key(j, rep->groups[i].name);
        json_share(j, rep->groups[i].under, rep->groups[i].s.count);
    }
    json_object_end(j);
    json_key(j, "all");
    json_share(j, rep->all.under, rep->all.s.count);
    json_object_end(j);
}

/* 7. "small_window_p99" (the values) and "small_windows" (where each window lies) */
static void put_small_windows(struct json *j, const struct report *rep)
{
    json_key(j, "small_window_p99");
    json_array_begin(j);
    for (size_t i = 0; i < rep->nsmall; i++)
        json_double(j, rep->small[i].p99);
    json_array_end(j);
    json_key(j, "small_windows");
    json_object_begin(j);
    json_kv_string(j, "group", rep->small_group);
    json_kv_uint(j, "size", REPORT_SMALL_WINDOW_LEN);
    json_key(j, "windows");
    json_array_begin(j);
    for (size_t i = 0; i < rep->nsmall; i++) {
        json_object_begin(j);
        json_kv_uint(j, "start", rep->small[i].start);
        json_kv_uint(j, "len", rep->small[i].len);
        json_kv_double(j, "p99", rep->small[i].p99);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

/* 8. "confidence": null in approx mode */
static void put_confidence(struct json *j, const struct report *rep)
{
    json_key(j, "confidence");
    if (rep->approx) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    json_kv_double(j, "level", REPORT_CONFIDENCE);
    json_key(j, "groups");
    json_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        json_key(j, rep->groups[i].name);
        json_ci(j, &rep->groups[i]);
    }
    json_object_end(j);
    json_key(j, "all");
    json_ci(j, &rep->all);
    json_object_end(j);
}

/* 9. "mean_2sd" */
static void put_mean_2sd(struct json *j, const struct report *rep)
{
    json_key(j, "mean_2sd");
    json_object_begin(j);
    json_key(j, "groups");
    json_object_begin(j);
    for (size_t i = 0; i < rep->ng; i++) {
        json_key(j, rep->groups[i].name);
        json_m2s(j, &rep->groups[i].m2s);
    }
    json_object_end(j);
    json_key(j, "all");
    json_m2s(j, &rep->all.m2s);
    json_object_end(j);
}

/* 10. "heatmap": null without a time column */
static void put_heatmap(struct json *j, const struct report *rep)
{
    json_key(j, "heatmap");
    struct heatmap_shape sh;
    uint64_t *cells = rep->has_heatmap ? heatmap_cells(rep->heat, REPORT_HEAT_COLS, &sh) : NULL;
    if (!cells) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    json_kv_int(j, "start_s", sh.start_s);
    json_kv_int(j, "column_s", sh.col_width_s);
    json_key(j, "bucket_lo");
    json_array_begin(j);
    for (size_t b = sh.bmin; b <= sh.bmax; b++)
        json_double(j, dbl_lower(&rep->heat->shape, b));
    json_array_end(j);
    json_key(j, "counts");
    json_array_begin(j);
    for (size_t c = 0; c < sh.ncols; c++) {
        json_array_begin(j);
        for (size_t b = sh.bmin; b <= sh.bmax; b++)
            json_uint(j, cells[c * DBL_MAX_BUCKETS + b]);
        json_array_end(j);
    }
    json_array_end(j);
    json_object_end(j);
    free(cells);
}

/* 11. "expect_median": null without --expect-median */
static void put_median_check(struct json *j, const struct report *rep)
{
    json_key(j, "expect_median");
    if (!rep->has_median_check) {
        json_null(j);
        return;
    }
    const struct median_check *m = &rep->median;
    json_object_begin(j);
    json_kv_double(j, "expected", m->expected_ms);
    json_kv_double(j, "median", m->median_ms);
    json_kv_double(j, "ratio", m->ratio);
    json_kv_bool(j, "off", m->off);
    json_kv_bool(j, "nagle_like", m->nagle_like);
    json_kv_double(j, "share_near_40", m->share_near_40);
    json_object_end(j);
}

static void put_warnings(struct json *j, const struct report *rep)
{
    json_key(j, "warnings");
    json_array_begin(j);
    for (size_t i = 0; i < rep->nwarnings; i++)
        json_string(j, rep->warnings[i]);
    json_array_end(j);
}

void report_print_json(FILE *out, const struct report *rep, bool pretty)
{
    struct json j;
    json_init(&j, out, pretty);
    json_object_begin(&j);
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
    json_object_end(&j);
    json_end(&j);
}
