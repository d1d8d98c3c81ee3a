/* Computing and printing the `knee stats` report. The text follows the article's analysis
 * layout section by section (so its published output can be read side by side), then adds
 * what the article only says in words: confidence intervals, the mean+2sd check, a heatmap
 * and the expected-median check. JSON carries every number the text shows. */
#include "analyze/report.h"

#include "core/err.h"
#include "core/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const double report_pcts[REPORT_NPCT] = {50, 90, 95, 99, 99.9};
const char *const report_pct_names[REPORT_NPCT] = {"p50", "p90", "p95", "p99", "p99.9"};

static void warn(struct report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct report *rep, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rep->warnings = xrealloc(rep->warnings, (rep->nwarnings + 1) * sizeof *rep->warnings);
    rep->warnings[rep->nwarnings++] = xstrdup(buf);
}

static const char *unit_of(const char *column)
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
        return -1;
    }
    if (d->ng == 0)
        return -1;
    size_t *ord = dataset_name_order(d);
    long gi = (long)ord[0];
    free(ord);
    return gi;
}

/* ---------------------------------------------------------------- exact mode */

static void exact_group(struct report *rep, struct group_result *r, double *sorted, size_t n)
{
    stats_summarize(sorted, n, &r->s);
    r->has_ci = true;
    for (int i = 0; i < REPORT_NPCT; i++)
        stats_percentile_ci(sorted, n, report_pcts[i], REPORT_CONFIDENCE, &r->ci[i]);
    analyze_mean_2sd(r->s.mean, r->s.stdev, r->s.p99, &r->m2s);
    (void)rep;
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
        exact_group(rep, gr, g->v, n);
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
    exact_group(rep, &rep->all, all, total);
    rep->p99_nearest = rep->all.s.p99;
    rep->p99_exclusive = analyze_python_quantile(all, total, 99, 100, true);
    rep->p99_inclusive = analyze_python_quantile(all, total, 99, 100, false);
    for (int i = 0; i < 3; i++)
        rep->prom_exact[i] = stats_nearest_rank(all, total, i == 0 ? 50 : i == 1 ? 95 : 99);
    *all_out = all;
}

/* ---------------------------------------------------------------- approx mode */

static double hdr_pct(const struct hdr *h, double p, double min, double max)
{
    double v = (double)hdr_value_at_percentile(h, p) / DATASET_HDR_SCALE;
    /* HDR reports a bucket's highest equivalent value; the exact extremes bound it */
    return v > max ? max : v < min ? min : v;
}

static void approx_summary(struct summary *s, const struct hdr *h, uint64_t n, double min, double max, double mean,
                           double m2)
{
    memset(s, 0, sizeof *s);
    s->count = (size_t)n;
    if (n == 0) {
        s->min = s->max = s->mean = s->stdev = s->p50 = s->p90 = s->p95 = s->p99 = s->p999 = NAN;
        return;
    }
    s->min = min;
    s->max = max;
    s->mean = mean;
    s->stdev = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
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
    double amin = INFINITY, amax = -INFINITY, amean = 0, am2 = 0;
    uint64_t an = 0;
    for (size_t r = 0; r < d->ng; r++) {
        struct dataset_group *g = d->g[ord[r]];
        struct group_result *gr = &rep->groups[r];
        approx_summary(&gr->s, &g->hdr, g->n, g->min, g->max, g->w_mean, g->w_m2);
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
        /* merge running means and sums of squares (Chan, Golub & LeVeque) */
        uint64_t nn = an + g->n;
        double delta = g->w_mean - amean;
        amean += delta * (double)g->n / (double)nn;
        am2 += g->w_m2 + delta * delta * (double)an * (double)g->n / (double)nn;
        an = nn;
        if (g->min < amin)
            amin = g->min;
        if (g->max > amax)
            amax = g->max;
    }
    approx_summary(&rep->all.s, &all, an, amin, amax, amean, am2);
    analyze_mean_2sd(rep->all.s.mean, rep->all.s.stdev, rep->all.s.p99, &rep->all.m2s);
    rep->p99_nearest = rep->all.s.p99;
    rep->p99_exclusive = rep->p99_inclusive = NAN;
    rep->prom_exact[0] = rep->all.s.p50;
    rep->prom_exact[1] = hdr_pct(&all, 95, amin, amax);
    rep->prom_exact[2] = rep->all.s.p99;
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
        int n = snprintf(list + k, sizeof list - k, "%s%s = %.1f (%zu)", k ? ", " : "", report_pct_names[i],
                         r->ci[i].value, r->ci[i].beyond);
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
    rep->unit = unit_of(d->o.column);
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
    rep->hist = d->hist;
    rep->prom = d->prom;
    rep->custom_buckets = o->custom_buckets;
    rep->under = o->under;
    if (d->kept == 0)
        return KNEE_EEMPTY;
    long small_gi = report_small_window_group(d, o);
    if (small_gi < 0)
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
    long sub_small = -1;
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
    static const double qs[3] = {0.5, 0.95, 0.99};
    for (int i = 0; i < 3; i++)
        prom_quantile(&rep->prom, qs[i], &rep->prom_est[i]);

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
            warn(rep, "%s: %llu rows came more than %d s out of time order and are not in its per-second windows",
                 rep->groups[i].name, (unsigned long long)rep->groups[i].late, DATASET_RING);
    for (size_t i = 0; i < ng; i++)
        tail_warnings(rep, &rep->groups[i]);
    if (ng > 1)
        tail_warnings(rep, &rep->all);
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

/* ---------------------------------------------------------------- text */

static int digits(uint64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

static void print_summary_row(FILE *out, const struct group_result *r, int nw, int cw)
{
    const struct summary *s = &r->s;
    fprintf(out, "%-*s%*zu%9.1f%9.1f%9.1f%9.1f%9.1f%9.1f%9.1f%9.1f\n", nw, r->name, cw, s->count, s->mean, s->stdev,
            s->p50, s->p90, s->p95, s->p99, s->p999, s->max);
}

static const char *group_label(const struct report *rep)
{
    return rep->by_col ? rep->by_col : "group";
}

static void fmt_bound(char *buf, size_t len, double v)
{
    if (isinf(v))
        snprintf(buf, len, "+Inf");
    else
        snprintf(buf, len, "%g", v);
}

void report_print_text(FILE *out, const struct report *rep)
{
    const char *u = rep->unit;
    const char *sp = u[0] ? " " : "";
    /* title: the article's "== open.csv (latency_ms)" */
    fputs("== ", out);
    for (size_t i = 0; i < rep->nfiles; i++)
        fprintf(out, "%s%s", i ? " + " : "", rep->files[i]);
    fprintf(out, " (%s)%s\n", rep->column,
            rep->approx ? "  [--approx: percentiles from HDR histograms, 3 significant digits]" : "");
    uint64_t left_out = rep->filtered_where + rep->filtered_time + rep->filtered_warmup + rep->missing;
    if (left_out) {
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

    /* 1. the table */
    int nw = 6;
    for (size_t i = 0; i < rep->ng; i++)
        if ((int)strlen(rep->groups[i].name) + 2 > nw)
            nw = (int)strlen(rep->groups[i].name) + 2;
    if ((int)strlen(rep->all.name) + 2 > nw)
        nw = (int)strlen(rep->all.name) + 2;
    int cw = digits(rep->all.s.count) + 2;
    if (cw < 7)
        cw = 7;
    fprintf(out, "%-*s%*s%9s%9s%9s%9s%9s%9s%9s%9s\n", nw, "", cw, "count", "mean", "stdev", "p50", "p90", "p95", "p99",
            "p99.9", "max");
    for (size_t i = 0; i < rep->ng; i++)
        print_summary_row(out, &rep->groups[i], nw, cw);
    if (rep->ng > 1)
        print_summary_row(out, &rep->all, nw, cw);

    /* 2. histogram */
    fprintf(out, "\n-- histogram of %s, buckets double in size%s%s%s\n", rep->all.name, u[0] ? " (" : "", u,
            u[0] ? ")" : "");
    dbl_print(out, &rep->hist, u, REPORT_BAR_WIDTH);

    /* 3. methods */
    fprintf(out, "\n-- p99 from different methods, %s\n", rep->all.name);
    if (rep->approx)
        fprintf(out,
                "nearest rank %.1f (HDR) | statistics.quantiles exclusive and inclusive need every value: run without "
                "--approx\n",
                rep->p99_nearest);
    else
        fprintf(out, "nearest rank %.1f | statistics.quantiles exclusive %.1f | inclusive %.1f\n", rep->p99_nearest,
                rep->p99_exclusive, rep->p99_inclusive);

    /* 4. averaging percentiles */
    fprintf(out, "\n-- averaging percentiles\n");
    if (rep->ng > 1) {
        for (size_t i = 0; i < rep->ng; i++)
            fprintf(out, "p99 %s = %.1f  ", rep->groups[i].name, rep->groups[i].s.p99);
        if (rep->ng == 2)
            fprintf(out, "average of the two = %.1f", rep->groups_mean_p99);
        else
            fprintf(out, "average of the %zu = %.1f", rep->ng, rep->groups_mean_p99);
        fprintf(out, "  real p99 of all requests = %.1f\n", rep->all.s.p99);
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
                "%s %s: average of %zu per-second p99 values = %.1f  max of them = %.1f  real p99 over the whole run = "
                "%.1f\n",
                group_label(rep), g->name, g->win.nwindows, g->win.mean, g->win.max, g->win.whole);
    }

    /* 5. Prometheus */
    fprintf(out, "\n-- what a Prometheus histogram with %s would estimate (%s)\n",
            rep->custom_buckets ? "these buckets" : "the default buckets", rep->all.name);
    if (rep->custom_buckets) {
        fputs("buckets:", out);
        for (size_t i = 0; i < rep->prom.nbounds; i++)
            fprintf(out, "%s%g", i ? "," : " ", rep->prom.bounds[i]);
        fputc('\n', out);
    }
    static const int qp[3] = {50, 95, 99};
    for (int i = 0; i < 3; i++) {
        const struct prom_estimate *e = &rep->prom_est[i];
        char lo[32], hi[32];
        fmt_bound(lo, sizeof lo, e->low);
        fmt_bound(hi, sizeof hi, e->high);
        fprintf(out, "p%d: bucket (%s, %s] -> estimate %.1f  exact %.1f%s\n", qp[i], lo, hi, e->estimate,
                rep->prom_exact[i],
                isinf(e->high) ? "  (rank in +Inf: Prometheus answers the highest finite bound)" : "");
    }

    /* 6. share under */
    fprintf(out, "\n-- share of requests under %g%s%s (this one CAN be combined)\n", rep->under, sp, u);
    for (size_t i = 0; i < rep->ng; i++) {
        const struct group_result *g = &rep->groups[i];
        fprintf(out, "%s: %llu of %zu = %.2f%%\n", g->name, (unsigned long long)g->under, g->s.count,
                100.0 * (double)g->under / (double)g->s.count);
    }
    if (rep->ng > 1)
        fprintf(out, "%s: %llu of %zu = %.2f%%  (the counts add up, the percentiles do not)\n", rep->all.name,
                (unsigned long long)rep->all.under, rep->all.s.count,
                100.0 * (double)rep->all.under / (double)rep->all.s.count);

    /* 7. small windows */
    fprintf(out, "\n-- p99 from only %d requests, ten different windows of %s\n", REPORT_SMALL_WINDOW_LEN,
            rep->small_group);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < rep->nsmall; i++) {
        fprintf(out, "%s%.1f", i ? " " : "", rep->small[i].p99);
        if (rep->small[i].p99 < lo)
            lo = rep->small[i].p99;
        if (rep->small[i].p99 > hi)
            hi = rep->small[i].p99;
    }
    if (rep->nsmall)
        fprintf(out, "\n(from %.1f to %.1f; window i starts at row i*%zu of %s)\n", lo, hi,
                rep->small_n / REPORT_SMALL_WINDOWS, rep->small_group);

    /* 8. confidence intervals */
    fprintf(out, "\n-- %.0f%% confidence intervals of the tail (order statistics, no assumption on the shape)\n",
            REPORT_CONFIDENCE * 100);
    if (rep->approx) {
        fputs("need every value: run without --approx\n", out);
    } else {
        for (size_t i = 0; i <= rep->ng; i++) {
            const struct group_result *g = i < rep->ng ? &rep->groups[i] : &rep->all;
            if (i == rep->ng && rep->ng == 1)
                break;
            fprintf(out, "%-*s", nw, g->name);
            for (int k = 3; k < REPORT_NPCT; k++) {
                const struct pct_ci *c = &g->ci[k];
                char iv[64];
                if (c->defined)
                    snprintf(iv, sizeof iv, "[%.1f, %.1f]", c->lo, c->hi);
                else
                    snprintf(iv, sizeof iv, "(too few values)");
                if (k + 1 < REPORT_NPCT)
                    fprintf(out, "%-6s%9.1f %-24s", report_pct_names[k], c->value, iv);
                else
                    fprintf(out, "%-6s%9.1f %s", report_pct_names[k], c->value, iv);
            }
            fputc('\n', out);
        }
    }

    /* 9. mean + 2 stdev */
    fprintf(out, "\n-- mean + 2 stdev is not a percentile (it assumes a bell curve)\n");
    for (size_t i = 0; i <= rep->ng; i++) {
        const struct group_result *g = i < rep->ng ? &rep->groups[i] : &rep->all;
        if (i == rep->ng && rep->ng == 1)
            break;
        fprintf(out, "%s: mean + 2 stdev = %.1f  real p99 = %.1f  (%+.0f%%)%s\n", g->name, g->m2s.mean_plus_2sd,
                g->m2s.p99, 100 * g->m2s.rel_diff,
                g->m2s.flagged ? "  <- off by more than 20%: do not alert on mean + 2 stdev" : "");
    }

    /* 10. heatmap */
    if (rep->has_heatmap) {
        fprintf(out, "\n-- %s over time (%s): rows are the histogram's buckets%s%s%s, columns are time\n", rep->column,
                rep->all.name, u[0] ? " (" : "", u, u[0] ? ")" : "");
        heatmap_print(out, rep->heat, REPORT_HEAT_COLS, u);
    }

    /* 11. median check */
    if (rep->has_median_check) {
        const struct median_check *m = &rep->median;
        fprintf(out, "\n-- median check (--expect-median %g ms)\n", m->expected_ms);
        if (m->off) {
            fprintf(out,
                    "! the median %.1f ms is %.1fx what the code should take (%g ms): something between the code and "
                    "the network adds time\n",
                    m->median_ms, m->ratio, m->expected_ms);
            if (m->nagle_like)
                fputs("  hint: a cluster near 40 ms above the expectation is the signature of Nagle's algorithm with "
                      "delayed ACK "
                      "(a response written in two writes): set TCP_NODELAY or write once\n",
                      out);
            else if (m->ratio > 1)
                fputs("  hint: if many requests sit near +40 ms, suspect Nagle's algorithm with delayed ACK (two "
                      "writes per response)\n",
                      out);
        } else {
            fprintf(out, "median %.1f ms is within 3x of the expected %g ms\n", m->median_ms, m->expected_ms);
        }
    }

    if (rep->nwarnings) {
        fputs("\n-- warnings\n", out);
        for (size_t i = 0; i < rep->nwarnings; i++)
            fprintf(out, "! %s\n", rep->warnings[i]);
    }
}

/* ---------------------------------------------------------------- JSON */

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

void report_print_json(FILE *out, const struct report *rep, bool pretty)
{
    struct json j;
    json_init(&j, out, pretty);
    json_object_begin(&j);
    json_kv_string(&j, "column", rep->column);
    json_kv_string(&j, "unit", rep->unit);
    json_kv_string(&j, "mode", rep->approx ? "approx" : "exact");
    json_key(&j, "files");
    json_array_begin(&j);
    for (size_t i = 0; i < rep->nfiles; i++)
        json_string(&j, rep->files[i]);
    json_array_end(&j);
    json_str_or_null(&j, "by", rep->by_col);
    json_str_or_null(&j, "time", rep->time_col);
    json_key(&j, "rows");
    json_object_begin(&j);
    json_kv_uint(&j, "read", rep->rows);
    json_kv_uint(&j, "kept", rep->kept);
    json_kv_uint(&j, "missing_value", rep->missing);
    json_kv_uint(&j, "filtered_where", rep->filtered_where);
    json_kv_uint(&j, "filtered_time", rep->filtered_time);
    json_kv_uint(&j, "filtered_warmup", rep->filtered_warmup);
    json_kv_uint(&j, "hdr_overflow", rep->hdr_overflow);
    json_object_end(&j);

    /* 1 */
    json_key(&j, "groups");
    json_object_begin(&j);
    for (size_t i = 0; i < rep->ng; i++) {
        json_key(&j, rep->groups[i].name);
        json_summary(&j, &rep->groups[i].s);
    }
    json_object_end(&j);
    json_kv_string(&j, "all_name", rep->all.name);
    json_key(&j, "all");
    json_summary(&j, &rep->all.s);

    /* 2 */
    json_key(&j, "histogram");
    json_object_begin(&j);
    json_kv_double(&j, "first_bound", rep->hist.first);
    json_key(&j, "buckets");
    json_array_begin(&j);
    size_t first = DBL_MAX_BUCKETS, last = 0;
    for (size_t i = 0; i < DBL_MAX_BUCKETS; i++)
        if (rep->hist.counts[i]) {
            if (first == DBL_MAX_BUCKETS)
                first = i;
            last = i;
        }
    for (size_t i = first; i <= last && first < DBL_MAX_BUCKETS; i++) {
        json_object_begin(&j);
        json_kv_double(&j, "lo", dbl_lower(&rep->hist, i));
        json_kv_double(&j, "hi", dbl_upper(&rep->hist, i)); /* null for the last, open bucket */
        json_kv_uint(&j, "count", rep->hist.counts[i]);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);

    /* 3 */
    json_key(&j, "p99_methods");
    json_object_begin(&j);
    json_kv_double(&j, "nearest_rank", rep->p99_nearest);
    json_kv_double(&j, "exclusive", rep->p99_exclusive);
    json_kv_double(&j, "inclusive", rep->p99_inclusive);
    json_object_end(&j);

    /* 4 */
    json_key(&j, "averaged_p99");
    json_object_begin(&j);
    json_key(&j, "groups");
    json_object_begin(&j);
    for (size_t i = 0; i < rep->ng; i++)
        json_kv_double(&j, rep->groups[i].name, rep->groups[i].s.p99);
    json_object_end(&j);
    json_kv_double(&j, "groups_mean", rep->groups_mean_p99);
    json_kv_double(&j, "all", rep->all.s.p99);
    json_object_end(&j);
    json_key(&j, "window_p99");
    json_object_begin(&j);
    for (size_t i = 0; i < rep->ng; i++) {
        const struct group_result *g = &rep->groups[i];
        if (!g->has_windows)
            continue;
        json_key(&j, g->name);
        json_object_begin(&j);
        json_kv_uint(&j, "windows", g->win.nwindows);
        json_kv_double(&j, "mean", g->win.mean);
        json_kv_double(&j, "max", g->win.max);
        json_kv_double(&j, "whole", g->win.whole);
        if (rep->approx)
            json_kv_uint(&j, "late_rows", g->late);
        json_object_end(&j);
    }
    json_object_end(&j);

    /* 5 */
    json_key(&j, "prometheus");
    json_object_begin(&j);
    json_key(&j, "bounds");
    json_array_begin(&j);
    for (size_t i = 0; i < rep->prom.nbounds; i++)
        json_double(&j, rep->prom.bounds[i]);
    json_array_end(&j);
    static const char *const qn[3] = {"p50", "p95", "p99"};
    for (int i = 0; i < 3; i++) {
        json_key(&j, qn[i]);
        json_object_begin(&j);
        json_kv_double(&j, "low", rep->prom_est[i].low);
        json_kv_double(&j, "high", rep->prom_est[i].high); /* null for +Inf */
        json_kv_double(&j, "estimate", rep->prom_est[i].estimate);
        json_kv_double(&j, "exact", rep->prom_exact[i]);
        json_object_end(&j);
    }
    json_object_end(&j);

    /* 6 */
    json_key(&j, "share_under");
    json_object_begin(&j);
    json_kv_double(&j, "threshold", rep->under);
    json_key(&j, "groups");
    json_object_begin(&j);
    for (size_t i = 0; i < rep->ng; i++) {
        json_key(&j, rep->groups[i].name);
        json_share(&j, rep->groups[i].under, rep->groups[i].s.count);
    }
    json_object_end(&j);
    json_key(&j, "all");
    json_share(&j, rep->all.under, rep->all.s.count);
    json_object_end(&j);

    /* 7 */
    json_key(&j, "small_window_p99");
    json_array_begin(&j);
    for (size_t i = 0; i < rep->nsmall; i++)
        json_double(&j, rep->small[i].p99);
    json_array_end(&j);
    json_key(&j, "small_windows");
    json_object_begin(&j);
    json_kv_string(&j, "group", rep->small_group);
    json_kv_uint(&j, "size", REPORT_SMALL_WINDOW_LEN);
    json_key(&j, "windows");
    json_array_begin(&j);
    for (size_t i = 0; i < rep->nsmall; i++) {
        json_object_begin(&j);
        json_kv_uint(&j, "start", rep->small[i].start);
        json_kv_uint(&j, "len", rep->small[i].len);
        json_kv_double(&j, "p99", rep->small[i].p99);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);

    /* 8 */
    json_key(&j, "confidence");
    if (rep->approx) {
        json_null(&j);
    } else {
        json_object_begin(&j);
        json_kv_double(&j, "level", REPORT_CONFIDENCE);
        json_key(&j, "groups");
        json_object_begin(&j);
        for (size_t i = 0; i < rep->ng; i++) {
            json_key(&j, rep->groups[i].name);
            json_ci(&j, &rep->groups[i]);
        }
        json_object_end(&j);
        json_key(&j, "all");
        json_ci(&j, &rep->all);
        json_object_end(&j);
    }

    /* 9 */
    json_key(&j, "mean_2sd");
    json_object_begin(&j);
    json_key(&j, "groups");
    json_object_begin(&j);
    for (size_t i = 0; i < rep->ng; i++) {
        json_key(&j, rep->groups[i].name);
        json_m2s(&j, &rep->groups[i].m2s);
    }
    json_object_end(&j);
    json_key(&j, "all");
    json_m2s(&j, &rep->all.m2s);
    json_object_end(&j);

    /* 10 */
    json_key(&j, "heatmap");
    struct heatmap_shape sh;
    uint64_t *cells = rep->has_heatmap ? heatmap_cells(rep->heat, REPORT_HEAT_COLS, &sh) : NULL;
    if (!cells) {
        json_null(&j);
    } else {
        json_object_begin(&j);
        json_kv_int(&j, "start_s", sh.start_s);
        json_kv_int(&j, "column_s", sh.col_width_s);
        json_key(&j, "bucket_lo");
        json_array_begin(&j);
        for (size_t b = sh.bmin; b <= sh.bmax; b++)
            json_double(&j, dbl_lower(&rep->heat->shape, b));
        json_array_end(&j);
        json_key(&j, "counts");
        json_array_begin(&j);
        for (size_t c = 0; c < sh.ncols; c++) {
            json_array_begin(&j);
            for (size_t b = sh.bmin; b <= sh.bmax; b++)
                json_uint(&j, cells[c * DBL_MAX_BUCKETS + b]);
            json_array_end(&j);
        }
        json_array_end(&j);
        json_object_end(&j);
        free(cells);
    }

    /* 11 */
    json_key(&j, "expect_median");
    if (!rep->has_median_check) {
        json_null(&j);
    } else {
        const struct median_check *m = &rep->median;
        json_object_begin(&j);
        json_kv_double(&j, "expected", m->expected_ms);
        json_kv_double(&j, "median", m->median_ms);
        json_kv_double(&j, "ratio", m->ratio);
        json_kv_bool(&j, "off", m->off);
        json_kv_bool(&j, "nagle_like", m->nagle_like);
        json_kv_double(&j, "share_near_40", m->share_near_40);
        json_object_end(&j);
    }

    json_key(&j, "warnings");
    json_array_begin(&j);
    for (size_t i = 0; i < rep->nwarnings; i++)
        json_string(&j, rep->warnings[i]);
    json_array_end(&j);
    json_object_end(&j);
    json_end(&j);
}
