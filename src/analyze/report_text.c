/* The `knee stats` report as text. It follows the article's analysis layout section by
 * section (so its published output can be read side by side), then adds what the article
 * only says in words: confidence intervals, the mean+2sd check, a heatmap and the
 * expected-median check. One printer per numbered section, called in order by
 * report_print_text; every number comes from struct report (report.c). */
#include "analyze/report.h"
#include "core/err.h"
#include "termplot/termplot.h"

#include "core/err.h"
#include "core/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Values with one (F1) or three (F3) decimals through units_fmt_cell ("-" when there is no
 * value, huge ones in at most 8 characters); the buffer is a compound literal of the calling
 * statement, so several can share one printf. */
#define F1(v) units_fmt_cell((v), 1, (char[40]){0}, 40)
#define F3(v) units_fmt_cell((v), 3, (char[40]){0}, 40)

static int digits(uint64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

static const char *group_label(const struct report *rep)
{
    return rep->by_col ? rep->by_col : "group";
}

/* Width of the name column of the tables (1. and 8.): the longest name plus two, at least 6. */
static int name_width(const struct report *rep)
{
    int nw = 6;
    for (size_t i = 0; i < rep->ng; i++)
        if ((int)strlen(rep->groups[i].name) + 2 > nw)
            nw = (int)strlen(rep->groups[i].name) + 2;
    if ((int)strlen(rep->all.name) + 2 > nw)
        nw = (int)strlen(rep->all.name) + 2;
    return nw;
}

/* " (ms)" after a title, or nothing for a column without a unit. */
static void print_unit_suffix(FILE *out, const char *u)
{
    fprintf(out, "%s%s%s", u[0] ? " (" : "", u, u[0] ? ")" : "");
}

/* The article's "== open.csv (latency_ms)", then the rows left out and why. */
static void text_title(FILE *out, const struct report *rep)
{
    fputs("== ", out);
    for (size_t i = 0; i < rep->nfiles; i++)
        fprintf(out, "%s%s", i ? " + " : "", rep->files[i]);
    fprintf(out, " (%s)%s\n", rep->column,
            rep->approx ? "  [--approx: percentiles from HDR histograms, 3 significant digits]" : "");
    uint64_t left_out = rep->filtered_where + rep->filtered_time + rep->filtered_warmup + rep->missing;
    if (!left_out)
        return;
    fprintf(out, "rows: %llu read, %llu analysed; left out:", (unsigned long long)rep->rows,
            (unsigned long long)rep->kept);
    const char *sep = " ";
    if (rep->filtered_where) {
        fprintf(out, "%s%llu by --where", sep, (unsigned long long)rep->filtered_where);
        sep = ", ";
    }
    if (rep->filtered_time) {
        fprintf(out, "%s%llu by --skip/--until", sep, (unsigned long long)rep->filtered_time);
        sep = ", ";
    }
    if (rep->filtered_warmup) {
        fprintf(out, "%s%llu warm-up (--keep-warmup keeps them)", sep, (unsigned long long)rep->filtered_warmup);
        sep = ", ";
    }
    if (rep->missing)
        fprintf(out, "%s%llu without a %s value", sep, (unsigned long long)rep->missing, rep->column);
    fputc('\n', out);
}

static void print_summary_row(FILE *out, const struct group_result *r, int nw, int cw)
{
    const struct summary *s = &r->s;
    fprintf(out, "%-*s%*zu%9s%9s%9s%9s%9s%9s%9s%9s\n", nw, r->name, cw, s->count, F1(s->mean), F1(s->stdev), F1(s->p50),
            F1(s->p90), F1(s->p95), F1(s->p99), F1(s->p999), F1(s->max));
}

/* 1. count, mean, stdev, nearest-rank percentiles and max per group, then all together */
static void text_summary(FILE *out, const struct report *rep)
{
    int nw = name_width(rep);
    int cw = digits(rep->all.s.count) + 2;
    if (cw < 7)
        cw = 7;
    fprintf(out, "%-*s%*s%9s%9s%9s%9s%9s%9s%9s%9s\n", nw, "", cw, "count", "mean", "stdev", "p50", "p90", "p95", "p99",
            "p99.9", "max");
    for (size_t i = 0; i < rep->ng; i++)
        print_summary_row(out, &rep->groups[i], nw, cw);
    if (rep->ng > 1)
        print_summary_row(out, &rep->all, nw, cw);
    if (!rep->has_as_run)
        return;
    /* the same values as knee run summarises them: its histogram, three decimals so the
     * (at most 1/1024) difference shows */
    fprintf(out,
            "as knee run summarises them (HdrHistogram, 3 significant digits: a percentile is its bucket's highest "
            "value, at most 1/1024 above the exact one; mean and stdev from bucket midpoints):\n");
    for (size_t i = 0; i <= rep->ng; i++) {
        if (i == rep->ng && rep->ng == 1)
            break;
        const struct group_result *g = i < rep->ng ? &rep->groups[i] : &rep->all;
        const struct summary *a = &g->as_run;
        fprintf(out, "%-*s%*zu%9s%9s%9s%9s%9s%9s%9s%9s\n", nw, g->name, cw, a->count, F3(a->mean), F3(a->stdev),
                F3(a->p50), F3(a->p90), F3(a->p95), F3(a->p99), F3(a->p999), F3(a->max));
    }
}

/* 2. the doubling-bucket histogram */
static void text_histogram(FILE *out, const struct report *rep)
{
    fprintf(out, "\n-- histogram of %s, buckets double in size", rep->all.name);
    print_unit_suffix(out, rep->unit);
    fputc('\n', out);
    dbl_print(out, &rep->hist, rep->unit, REPORT_BAR_WIDTH);
}

/* 3. p99 by nearest rank and by Python's statistics.quantiles */
static void text_p99_methods(FILE *out, const struct report *rep)
{
    fprintf(out, "\n-- p99 from different methods, %s\n", rep->all.name);
    if (rep->approx)
        fprintf(out,
                "nearest rank %s (HDR) | statistics.quantiles exclusive and inclusive need every value: run without "
                "--approx\n",
                F1(rep->p99_nearest));
    else
        fprintf(out, "nearest rank %s | statistics.quantiles exclusive %s | inclusive %s\n", F1(rep->p99_nearest),
                F1(rep->p99_exclusive), F1(rep->p99_inclusive));
}

/* 4. the average of the groups' p99s and of per-second p99s against the real p99 */
static void text_averaging(FILE *out, const struct report *rep)
{
    fprintf(out, "\n-- averaging percentiles\n");
    if (rep->ng > 1) {
        for (size_t i = 0; i < rep->ng; i++)
            fprintf(out, "p99 %s = %s  ", rep->groups[i].name, F1(rep->groups[i].s.p99));
        if (rep->ng == 2)
            fprintf(out, "average of the two = %s", F1(rep->groups_mean_p99));
        else
            fprintf(out, "average of the %zu = %s", rep->ng, F1(rep->groups_mean_p99));
        fprintf(out, "  real p99 of all requests = %s\n", F1(rep->all.s.p99));
    } else {
        fprintf(out, "one %s only: no averaging across %ss (use --by to split)\n", group_label(rep), group_label(rep));
    }
    if (!rep->time_col)
        fprintf(out, "per-second windows need a time column (start_s, or --time COL)\n");
    for (size_t i = 0; i < rep->ng; i++) {
        const struct group_result *g = &rep->groups[i];
        if (!g->has_windows)
            continue;
        fprintf(out,
                "%s %s: average of %zu per-second p99 value%s = %s  max of them = %s  real p99 over the whole run = "
                "%s\n",
                group_label(rep), g->name, g->win.nwindows, g->win.nwindows == 1 ? "" : "s", F1(g->win.mean),
                F1(g->win.max), F1(g->win.whole));
    }
}

static void fmt_bound(char *buf, size_t len, double v)
{
    if (isinf(v))
        snprintf(buf, len, "+Inf");
    else
        snprintf(buf, len, "%g", v);
}

/* 5. what Prometheus' histogram_quantile would estimate from the buckets */
static void text_prometheus(FILE *out, const struct report *rep)
{
    fprintf(out, "\n-- what a Prometheus histogram with %s would estimate (%s)\n",
            rep->custom_buckets ? "these buckets" : "the default buckets", rep->all.name);
    if (rep->custom_buckets) {
        fputs("buckets:", out);
        for (size_t i = 0; i < rep->prom.nbounds; i++)
            fprintf(out, "%s%g", i ? "," : " ", rep->prom.bounds[i]);
        fputc('\n', out);
    }
    for (int i = 0; i < REPORT_NPROM; i++) {
        const struct prom_estimate *e = &rep->prom_est[i];
        char lo[32], hi[32];
        fmt_bound(lo, sizeof lo, e->low);
        fmt_bound(hi, sizeof hi, e->high);
        fprintf(out, "%s: bucket (%s, %s] -> estimate %s  exact %s%s\n", report_prom_names[i], lo, hi, F1(e->estimate),
                F1(rep->prom_exact[i]),
                isinf(e->high) ? "  (rank in +Inf: Prometheus answers the highest finite bound)" : "");
    }
}

/* 6. the share under a threshold: counts add up where percentiles do not */
static void text_share_under(FILE *out, const struct report *rep)
{
    const char *u = rep->unit;
    fprintf(out, "\n-- share of requests under %g%s%s (this one CAN be combined)\n", rep->under, u[0] ? " " : "", u);
    for (size_t i = 0; i < rep->ng; i++) {
        const struct group_result *g = &rep->groups[i];
        fprintf(out, "%s: %llu of %zu = %.2f%%\n", g->name, (unsigned long long)g->under, g->s.count,
                100.0 * (double)g->under / (double)g->s.count);
    }
    if (rep->ng > 1)
        fprintf(out, "%s: %llu of %zu = %.2f%%  (the counts add up, the percentiles do not)\n", rep->all.name,
                (unsigned long long)rep->all.under, rep->all.s.count,
                100.0 * (double)rep->all.under / (double)rep->all.s.count);
}

/* 7. p99 of ten windows of 100 requests of one group */
static void text_small_windows(FILE *out, const struct report *rep)
{
    fprintf(out, "\n-- p99 from only %d requests, ten different windows of %s\n", REPORT_SMALL_WINDOW_LEN,
            rep->small_group);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < rep->nsmall; i++) {
        fprintf(out, "%s%s", i ? " " : "", F1(rep->small[i].p99));
        if (rep->small[i].p99 < lo)
            lo = rep->small[i].p99;
        if (rep->small[i].p99 > hi)
            hi = rep->small[i].p99;
    }
    if (rep->nsmall)
        fprintf(out, "\n(from %s to %s; window i starts at row i*%zu of %s)\n", F1(lo), F1(hi),
                rep->small_n / REPORT_SMALL_WINDOWS, rep->small_group);
}

/* Row i of the tables 8. and 9.: the groups, then all of them together unless there is
 * only one group (then that row would repeat it); NULL past the end. */
static const struct group_result *group_or_all(const struct report *rep, size_t i)
{
    if (i < rep->ng)
        return &rep->groups[i];
    return i == rep->ng && rep->ng != 1 ? &rep->all : NULL;
}

/* 8. confidence intervals of p99 and p99.9 (exact mode only) */
static void text_confidence(FILE *out, const struct report *rep)
{
    fprintf(out, "\n-- %.0f%% confidence intervals of the tail (order statistics, no assumption on the shape)\n",
            REPORT_CONFIDENCE * 100);
    if (rep->approx) {
        fputs("need every value: run without --approx\n", out);
        return;
    }
    int nw = name_width(rep);
    const struct group_result *g;
    for (size_t i = 0; (g = group_or_all(rep, i)) != NULL; i++) {
        fprintf(out, "%-*s", nw, g->name);
        for (int k = REPORT_P99; k < REPORT_NPCT; k++) {
            const struct pct_ci *c = &g->ci[k];
            char iv[64];
            if (c->defined)
                snprintf(iv, sizeof iv, "[%s, %s]", F1(c->lo), F1(c->hi));
            else
                snprintf(iv, sizeof iv, "(too few values)");
            if (k + 1 < REPORT_NPCT)
                fprintf(out, "%-6s%9s %-24s", report_pct_names[k], F1(c->value), iv);
            else
                fprintf(out, "%-6s%9s %s", report_pct_names[k], F1(c->value), iv);
        }
        fputc('\n', out);
    }
}

/* 9. mean + 2 stdev against the real p99 */
static void text_mean_2sd(FILE *out, const struct report *rep)
{
    fprintf(out, "\n-- mean + 2 stdev is not a percentile (it assumes a bell curve)\n");
    const struct group_result *g;
    for (size_t i = 0; (g = group_or_all(rep, i)) != NULL; i++)
        fprintf(out, "%s: mean + 2 stdev = %s  real p99 = %s  (%+.0f%%)%s\n", g->name, F1(g->m2s.mean_plus_2sd),
                F1(g->m2s.p99), 100 * g->m2s.rel_diff,
                g->m2s.flagged ? "  <- off by more than 20%: do not alert on mean + 2 stdev" : "");
}

/* 10. the heatmap over time (with a time column) */
static void text_heatmap(FILE *out, const struct report *rep)
{
    if (!rep->has_heatmap)
        return;
    fprintf(out, "\n-- %s over time (%s): rows are the histogram's buckets", rep->column, rep->all.name);
    print_unit_suffix(out, rep->unit);
    fputs(", columns are time\n", out);
    heatmap_print(out, rep->heat, REPORT_HEAT_COLS, rep->unit);
}

/* 11. the median against what the code should take (--expect-median) */
static void text_median_check(FILE *out, const struct report *rep)
{
    if (!rep->has_median_check)
        return;
    const struct median_check *m = &rep->median;
    fprintf(out, "\n-- median check (--expect-median %g ms)\n", m->expected_ms);
    if (!m->off) {
        fprintf(out, "median %s ms is within 3× of the expected %g ms\n", F1(m->median_ms), m->expected_ms);
        return;
    }
    fprintf(out,
            "! the median %s ms is %s× what the code should take (%g ms): something between the code and "
            "the network adds time\n",
            F1(m->median_ms), F1(m->ratio), m->expected_ms);
    if (m->nagle_like)
        fputs("  hint: a cluster near 40 ms above the expectation is the signature of Nagle's algorithm with "
              "delayed ACK "
              "(a response written in two writes): set TCP_NODELAY or write once\n",
              out);
    else if (m->ratio > 1)
        fputs("  hint: if many requests sit near +40 ms, suspect Nagle's algorithm with delayed ACK (two "
              "writes per response)\n",
              out);
}

static void text_warnings(FILE *out, const struct report *rep)
{
    if (!rep->nwarnings)
        return;
    fputs("\n-- warnings\n", out);
    for (size_t i = 0; i < rep->nwarnings; i++)
        fprintf(out, "! %s\n", rep->warnings[i]);
}

/* A heap copy of s with control bytes escaped (core/err's knee_escape); NULL stays NULL. */
static char *esc_dup(const char *s)
{
    if (!s)
        return NULL;
    unsigned long n = knee_escape(NULL, 0, s, strlen(s));
    char *e = xmalloc(n + 1);
    knee_escape(e, n + 1, s, strlen(s));
    return e;
}

/* The text of a report as a reader's terminal shows it: every name that came from the input
 * (group names from a CSV cell, file and column names, the warnings quoting them) escaped,
 * so a CR, LF or ESC in a cell prints as \r, \n, \x1b and cannot rewrite the screen. The
 * report is not changed: the JSON writer escapes on its own. */
struct text_names {
    struct report v;
    char *col, *by, *time, *all, *small;
};

static void names_escape(struct text_names *t, const struct report *rep)
{
    t->v = *rep;
    t->v.column = t->col = esc_dup(rep->column);
    t->v.by_col = t->by = esc_dup(rep->by_col);
    t->v.time_col = t->time = esc_dup(rep->time_col);
    t->v.all.name = t->all = esc_dup(rep->all.name);
    t->v.small_group = t->small = esc_dup(rep->small_group);
    t->v.groups = xmalloc((rep->ng ? rep->ng : 1) * sizeof *t->v.groups);
    for (size_t i = 0; i < rep->ng; i++) {
        t->v.groups[i] = rep->groups[i];
        t->v.groups[i].name = esc_dup(rep->groups[i].name);
    }
    t->v.files = xmalloc((rep->nfiles ? rep->nfiles : 1) * sizeof *t->v.files);
    for (size_t i = 0; i < rep->nfiles; i++)
        t->v.files[i] = esc_dup(rep->files[i]);
    t->v.warnings = xmalloc((rep->nwarnings ? rep->nwarnings : 1) * sizeof *t->v.warnings);
    for (size_t i = 0; i < rep->nwarnings; i++)
        t->v.warnings[i] = esc_dup(rep->warnings[i]);
}

static void names_release(struct text_names *t)
{
    for (size_t i = 0; i < t->v.ng; i++)
        free(t->v.groups[i].name);
    for (size_t i = 0; i < t->v.nfiles; i++)
        free(t->v.files[i]);
    for (size_t i = 0; i < t->v.nwarnings; i++)
        free(t->v.warnings[i]);
    free(t->v.groups);
    free(t->v.files);
    free(t->v.warnings);
    free(t->col);
    free(t->by);
    free(t->time);
    free(t->all);
    free(t->small);
}

void report_print_text(FILE *out, const struct report *report)
{
    struct text_names names;
    names_escape(&names, report);
    const struct report *rep = &names.v;
    text_title(out, rep);
    text_summary(out, rep);       /* 1 */
    text_histogram(out, rep);     /* 2 */
    text_p99_methods(out, rep);   /* 3 */
    text_averaging(out, rep);     /* 4 */
    text_prometheus(out, rep);    /* 5 */
    text_share_under(out, rep);   /* 6 */
    text_small_windows(out, rep); /* 7 */
    text_confidence(out, rep);    /* 8 */
    text_mean_2sd(out, rep);      /* 9 */
    text_heatmap(out, rep);       /* 10 */
    text_median_check(out, rep);  /* 11 */
    text_warnings(out, rep);
    names_release(&names);
}

void report_print_pictures(FILE *out, int fd, const struct report *rep)
{
    struct termplot tp;
    termplot_detect(&tp, fd);
    if (!tp.enabled || !rep->hist.total)
        return;
    char title[256];
    snprintf(title, sizeof title, "%s, doubling buckets (all groups)", rep->column);
    termplot_histogram(out, &tp, title, &rep->hist, rep->unit, rep->all.s.p99);
    const struct heatmap *h = rep->heat;
    if (!rep->has_heatmap || !h || !h->nbins)
        return;
    double *p99 = xcalloc(h->nbins, sizeof *p99);
    for (size_t b = 0; b < h->nbins; b++) {
        const uint64_t *c = &h->counts[b * DBL_MAX_BUCKETS];
        uint64_t n = 0, seen = 0;
        for (size_t k = 0; k < DBL_MAX_BUCKETS; k++)
            n += c[k];
        p99[b] = NAN;
        uint64_t rank = (uint64_t)ceil(0.99 * (double)n);
        for (size_t k = 0; n && k < DBL_MAX_BUCKETS; k++) {
            seen += c[k];
            if (seen >= rank) {
                double hi = dbl_upper(&h->shape, k);
                p99[b] = isfinite(hi) ? hi : dbl_lower(&h->shape, k);
                break;
            }
        }
    }
    snprintf(title, sizeof title, "p99 per %llu s (bucket bound)", (unsigned long long)h->width_s);
    termplot_sparkline(out, &tp, title, p99, h->nbins, rep->unit);
    free(p99);
}
