/* knee compare by stage: when both sides ran the same --stages, a table of each stage's point
 * values (requests, ok p50 and p99, error rate) from each run's JSON "stages", side by side with
 * the ratio after/before. No intervals: the verdict stays the whole run's (compare.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare.h"
#include "core/json.h"
#include "record/stages.h"

void compare_stage_points_of(struct compare_stage_point *pts, size_t *npts, const struct run_record *rec)
{
    size_t n = rec->nstages < RUN_MAX_STAGES ? rec->nstages : RUN_MAX_STAGES;
    for (size_t i = 0; i < n; i++) {
        const struct run_stage_result *s = &rec->stages[i];
        pts[i].planned = s->counts.planned;
        pts[i].ok = s->counts.outcome[OUTCOME_OK];
        pts[i].p50_ms = pts[i].ok ? s->lat.p50 : NAN;
        pts[i].p99_ms = pts[i].ok ? s->lat.p99 : NAN;
    }
    *npts = n;
}

static bool same_stages(const struct compare_model *a, const struct compare_model *b)
{
    if (!a->known || !b->known || a->nstages == 0 || a->nstages != b->nstages)
        return false;
    for (size_t i = 0; i < a->nstages; i++)
        if (a->stages[i].from != b->stages[i].from || a->stages[i].to != b->stages[i].to ||
            a->stages[i].duration_ns != b->stages[i].duration_ns || a->stages[i].clients != b->stages[i].clients)
            return false;
    return true;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of the repetitions' values of one stage (NAN skipped; NAN when none). */
static double median_of(const struct compare_side *s, size_t stage, bool p99)
{
    double *v = malloc((s->nreps ? s->nreps : 1) * sizeof *v);
    size_t m = 0;
    for (size_t r = 0; v && r < s->nreps; r++) {
        double x = p99 ? s->reps[r].stage_points[stage].p99_ms : s->reps[r].stage_points[stage].p50_ms;
        if (!isnan(x))
            v[m++] = x;
    }
    double med = NAN;
    if (m) {
        qsort(v, m, sizeof *v, cmp_double);
        med = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
    }
    free(v);
    return med;
}

/* Requests summed over a side's repetitions and the share of them not ok. */
static void side_counts(const struct compare_side *s, size_t stage, uint64_t *req, double *err)
{
    uint64_t planned = 0, ok = 0;
    for (size_t r = 0; r < s->nreps; r++) {
        planned += s->reps[r].stage_points[stage].planned;
        ok += s->reps[r].stage_points[stage].ok;
    }
    *req = planned;
    *err = planned ? 1 - (double)ok / (double)planned : NAN;
}

size_t compare_stage_rows(const struct compare_side *before, const struct compare_side *after,
                          struct compare_stage_row *rows, size_t max)
{
    if (!before->nreps || !after->nreps)
        return 0;
    const struct compare_model *m = &before->reps[0].model;
    const struct compare_side *sides[2] = {before, after};
    for (int k = 0; k < 2; k++)
        for (size_t r = 0; r < sides[k]->nreps; r++)
            if (!same_stages(m, &sides[k]->reps[r].model) || sides[k]->reps[r].nstage_points != m->nstages)
                return 0;
    size_t n = m->nstages < max ? m->nstages : max;
    for (size_t i = 0; i < n; i++) {
        struct compare_stage_row *w = &rows[i];
        w->from = m->stages[i].from;
        w->to = m->stages[i].to;
        w->duration_s = (double)m->stages[i].duration_ns / 1e9;
        w->clients = m->stages[i].clients;
        side_counts(before, i, &w->req_before, &w->err_before);
        side_counts(after, i, &w->req_after, &w->err_after);
        w->p50_before = median_of(before, i, false);
        w->p50_after = median_of(after, i, false);
        w->p99_before = median_of(before, i, true);
        w->p99_after = median_of(after, i, true);
    }
    return n;
}

static void fmt_rate(const struct compare_stage_row *w, char *buf, size_t len)
{
    const char *unit = w->clients ? "c" : "/s";
    if (w->from == w->to)
        snprintf(buf, len, "%g%s %gs", w->from, unit, w->duration_s);
    else
        snprintf(buf, len, "%g..%g%s %gs", w->from, w->to, unit, w->duration_s);
}

static void fmt_ms(double x, char *buf, size_t len)
{
    if (isnan(x))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.3g ms", x);
}

static void fmt_ratio(double b, double a, char *buf, size_t len)
{
    if (isnan(a) || isnan(b) || b <= 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2fx", a / b);
}

static void fmt_pct(double x, char *buf, size_t len)
{
    if (isnan(x))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f%%", 100 * x);
}

void compare_print_stages(FILE *out, const struct compare_side *before, const struct compare_side *after)
{
    struct compare_stage_row rows[RUN_MAX_STAGES];
    size_t n = compare_stage_rows(before, after, rows, RUN_MAX_STAGES);
    if (!n)
        return;
    fprintf(out, "\nby stage (per stage: point values from each run's JSON, no intervals; ratio = after/before)\n");
    fprintf(out, "  %5s  %-16s %9s %9s  %10s %10s %6s  %10s %10s %6s  %7s %7s\n", "stage", "rate", "req bef", "req aft",
            "p50 bef", "p50 aft", "ratio", "p99 bef", "p99 aft", "ratio", "err bef", "err aft");
    for (size_t i = 0; i < n; i++) {
        const struct compare_stage_row *w = &rows[i];
        char rate[48], pb[24], pa[24], pr[16], qb[24], qa[24], qr[16], eb[16], ea[16];
        fmt_rate(w, rate, sizeof rate);
        fmt_ms(w->p50_before, pb, sizeof pb);
        fmt_ms(w->p50_after, pa, sizeof pa);
        fmt_ratio(w->p50_before, w->p50_after, pr, sizeof pr);
        fmt_ms(w->p99_before, qb, sizeof qb);
        fmt_ms(w->p99_after, qa, sizeof qa);
        fmt_ratio(w->p99_before, w->p99_after, qr, sizeof qr);
        fmt_pct(w->err_before, eb, sizeof eb);
        fmt_pct(w->err_after, ea, sizeof ea);
        fprintf(out, "  %5zu  %-16s %9llu %9llu  %10s %10s %6s  %10s %10s %6s  %7s %7s\n", i + 1, rate,
                (unsigned long long)w->req_before, (unsigned long long)w->req_after, pb, pa, pr, qb, qa, qr, eb, ea);
    }
}

static double ratio(double b, double a)
{
    return isnan(a) || isnan(b) || b <= 0 ? NAN : a / b;
}

void compare_write_stages_json(struct jw *j, const struct compare_side *before, const struct compare_side *after)
{
    struct compare_stage_row rows[RUN_MAX_STAGES];
    size_t n = compare_stage_rows(before, after, rows, RUN_MAX_STAGES);
    if (!n)
        return;
    jw_key(j, "stages");
    jw_array_begin(j);
    for (size_t i = 0; i < n; i++) {
        const struct compare_stage_row *w = &rows[i];
        jw_object_begin(j);
        jw_kv_uint(j, "index", i + 1);
        jw_kv_double(j, "from", w->from);
        jw_kv_double(j, "to", w->to);
        jw_kv_string(j, "unit", w->clients ? "clients" : "rps");
        jw_kv_double(j, "duration_s", w->duration_s);
        jw_kv_uint(j, "requests_before", w->req_before);
        jw_kv_uint(j, "requests_after", w->req_after);
        jw_kv_double(j, "p50_before", w->p50_before);
        jw_kv_double(j, "p50_after", w->p50_after);
        jw_kv_double(j, "p50_ratio", ratio(w->p50_before, w->p50_after));
        jw_kv_double(j, "p99_before", w->p99_before);
        jw_kv_double(j, "p99_after", w->p99_after);
        jw_kv_double(j, "p99_ratio", ratio(w->p99_before, w->p99_after));
        jw_kv_double(j, "error_rate_before", w->err_before);
        jw_kv_double(j, "error_rate_after", w->err_after);
        jw_object_end(j);
    }
    jw_array_end(j);
}
