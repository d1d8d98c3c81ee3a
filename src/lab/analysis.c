/* The `knee stats` analyses the lab prints for a round with two servers (MISSION.md §1):
 * per-group tables, the doubling histogram, p99 by three methods, averaged p99s against the
 * real one, per-second p99s, Prometheus estimates, shares under 100 ms and p99 of ten
 * 100-request windows. Every number comes from src/stats and src/hist over the round's
 * per-request values; nothing here is a statistic of its own. */
#include "lab/internal.h"

#include "core/err.h"
#include "hist/dbl.h"
#include "hist/prom.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SHARE_THRESHOLD_MS 100.0
#define WINDOWS 10
#define WINDOW_SIZE 100

const char *lab_ms(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f", v);
    return buf;
}

void lab_print_table_head(FILE *out, const char *indent)
{
    fprintf(out, "%s%-8s%8s%9s%9s%9s%9s%9s%9s%9s%9s\n", indent, "", "count", "mean", "stdev", "p50", "p90", "p95",
            "p99", "p99.9", "max");
}

void lab_print_table_row(FILE *out, const char *indent, const char *name, const struct summary *s)
{
    char b[9][32];
    fprintf(out, "%s%-8s%8zu%9s%9s%9s%9s%9s%9s%9s%9s\n", indent, name, s->count, lab_ms(s->mean, b[0], 32),
            lab_ms(s->stdev, b[1], 32), lab_ms(s->p50, b[2], 32), lab_ms(s->p90, b[3], 32), lab_ms(s->p95, b[4], 32),
            lab_ms(s->p99, b[5], 32), lab_ms(s->p999, b[6], 32), lab_ms(s->max, b[7], 32));
}

static const char *const group_names[LAB_NGROUPS] = {"A", "B", "A+B"};

static double *group_values(const struct lab_round *rd, int g, enum lab_col col, size_t *n)
{
    return lab_values(rd, g == LAB_AB ? LAB_ALL_TARGETS : (size_t)g, OUTCOME_OK, col, n);
}

void lab_two_server_summaries(const struct lab_round *rd, enum lab_col col, struct summary out[LAB_NGROUPS])
{
    for (int g = 0; g < LAB_NGROUPS; g++) {
        size_t n;
        double *v = group_values(rd, g, col, &n);
        lab_summarize(v, n, &out[g]);
        free(v);
    }
}

/* p99 of each whole second of A's requests (by planned send), averaged: what a dashboard
 * that averages per-interval percentiles would show. */
static void per_second_p99(const struct lab_round *rd, enum lab_col col, double *avg, double *max, size_t *nsec)
{
    *avg = *max = NAN;
    *nsec = 0;
    double *buf = xmalloc((rd->nreq ? rd->nreq : 1) * sizeof *buf);
    double *p99s = xmalloc((rd->nreq ? rd->nreq : 1) * sizeof *p99s);
    size_t i = 0, np = 0;
    while (i < rd->nreq) {
        long sec = (long)floor(rd->req[i].start_s);
        size_t k = 0;
        for (; i < rd->nreq && (long)floor(rd->req[i].start_s) == sec; i++) {
            const struct lab_req *q = &rd->req[i];
            double x = col == LAB_COL_LATENCY ? q->latency_ms : q->service_ms;
            if (!q->warmup && q->target == LAB_A && q->outcome == OUTCOME_OK && !isnan(x))
                buf[k++] = x;
        }
        if (k) {
            stats_sort(buf, k);
            p99s[np++] = stats_nearest_rank(buf, k, 99);
        }
    }
    if (np) {
        *avg = stats_mean(p99s, np);
        double *s = lab_sorted_copy(p99s, np);
        *max = s[np - 1];
        free(s);
    }
    *nsec = np;
    free(buf);
    free(p99s);
}

static void print_histogram(FILE *out, const double *v, size_t n)
{
    struct dbl_hist d;
    dbl_init(&d, 1.0);
    for (size_t i = 0; i < n; i++)
        dbl_add(&d, v[i], 1);
    fprintf(out, "  histogram of A+B, buckets double in size\n");
    dbl_print(out, &d, "ms", 50);
}

static void print_prometheus(FILE *out, const double *sorted, size_t n, struct lab_stats_result *r)
{
    struct prom_hist p;
    prom_init(&p, prom_default_bounds_ms, PROM_DEFAULT_NBOUNDS);
    for (size_t i = 0; i < n; i++)
        prom_observe(&p, sorted[i]);
    fprintf(out, "  what a Prometheus histogram with the default buckets would estimate (A+B)\n");
    static const double qs[] = {0.50, 0.95, 0.99};
    for (size_t k = 0; k < 3; k++) {
        struct prom_estimate e;
        double est = prom_quantile(&p, qs[k], &e);
        double exact = stats_nearest_rank(sorted, n, qs[k] * 100);
        char lo[32], hi[32];
        snprintf(lo, sizeof lo, "%g", e.low);
        if (isinf(e.high))
            snprintf(hi, sizeof hi, "+Inf");
        else
            snprintf(hi, sizeof hi, "%g", e.high);
        fprintf(out, "    p%g: bucket (%s, %s] -> estimate %.1f  exact %.1f\n", qs[k] * 100, lo, hi, est, exact);
        if (k == 2 && r) {
            r->prom_p99_ms = est;
            r->prom_p99_lo_ms = e.low;
            r->prom_p99_hi_ms = e.high;
        }
    }
}

static void print_windows(FILE *out, const double *a, size_t n, struct lab_stats_result *r)
{
    if (n < WINDOW_SIZE) {
        fprintf(out, "  p99 from only 100 requests: A has %zu measured requests, fewer than one window\n", n);
        return;
    }
    /* Ten windows spread evenly over the round (they overlap when A has under 1000). */
    size_t step = (n - WINDOW_SIZE) / (WINDOWS - 1);
    double lo = INFINITY, hi = -INFINITY;
    double w[WINDOW_SIZE];
    fprintf(out, "  p99 from only 100 requests, ten windows of server A:");
    for (size_t i = 0; i < WINDOWS; i++) {
        memcpy(w, a + i * step, sizeof w);
        stats_sort(w, WINDOW_SIZE);
        double p = stats_nearest_rank(w, WINDOW_SIZE, 99);
        fprintf(out, " %.0f", p);
        lo = fmin(lo, p);
        hi = fmax(hi, p);
    }
    fprintf(out, "%s\n", n < WINDOWS * WINDOW_SIZE ? "  (overlapping: fewer than 1000 requests)" : "");
    if (r) {
        r->window_p99_min_ms = lo;
        r->window_p99_max_ms = hi;
        r->nwindows = WINDOWS;
    }
}

static void print_ci(FILE *out, double *const sorted[LAB_NGROUPS], const size_t n[LAB_NGROUPS])
{
    fprintf(out, "  p99 with its 95%% confidence interval (order statistics, exact binomial):");
    for (int g = 0; g < LAB_NGROUPS; g++) {
        struct pct_ci ci;
        if (n[g] == 0 || stats_percentile_ci(sorted[g], n[g], 99, 0.95, &ci) != 0)
            continue;
        if (ci.defined)
            fprintf(out, "  %s %.1f [%.1f, %.1f]", group_names[g], ci.value, ci.lo, ci.hi);
        else
            fprintf(out, "  %s %.1f [too few requests for an interval]", group_names[g], ci.value);
    }
    fputs("\n", out);
}

void lab_print_two_server_analysis(struct lab_ctx *c, const struct lab_round *rd, enum lab_col col, bool full,
                                   struct lab_stats_result *r)
{
    FILE *out = c->out;
    double *v[LAB_NGROUPS], *s[LAB_NGROUPS];
    size_t n[LAB_NGROUPS];
    struct summary sum[LAB_NGROUPS];
    for (int g = 0; g < LAB_NGROUPS; g++) {
        v[g] = group_values(rd, g, col, &n[g]);
        s[g] = lab_sorted_copy(v[g], n[g]);
        stats_summarize(s[g], n[g], &sum[g]);
    }
    lab_print_table_head(out, "  ");
    for (int g = 0; g < LAB_NGROUPS; g++)
        lab_print_table_row(out, "  ", group_names[g], &sum[g]);
    if (!full || n[LAB_AB] == 0)
        goto out;

    fputs("\n", out);
    print_histogram(out, s[LAB_AB], n[LAB_AB]);

    fputs("\n", out);
    fprintf(out,
            "  p99 of A+B by method: nearest rank %.1f | exclusive (Python's default, type 6) %.1f | inclusive "
            "(type 7) %.1f\n",
            stats_nearest_rank(s[LAB_AB], n[LAB_AB], 99), stats_quantile(s[LAB_AB], n[LAB_AB], 0.99, 6),
            stats_quantile(s[LAB_AB], n[LAB_AB], 0.99, 7));
    print_ci(out, s, n);

    double pa = sum[LAB_A].p99, pb = sum[LAB_B].p99, pab = sum[LAB_AB].p99;
    fprintf(out,
            "  averaging percentiles: p99 A = %.1f  p99 B = %.1f  average of the two = %.1f  real p99 of all "
            "requests = %.1f\n",
            pa, pb, (pa + pb) / 2, pab);
    double avg, max;
    size_t nsec;
    per_second_p99(rd, col, &avg, &max, &nsec);
    if (nsec)
        fprintf(out,
                "  server A: average of %zu per-second p99 values = %.1f  max of them = %.1f  real p99 over the "
                "whole round = %.1f\n",
                nsec, avg, max, pa);
    if (r) {
        r->avg_of_p99s_ms = (pa + pb) / 2;
        r->real_p99_ms = pab;
        r->per_second_p99_avg_ms = avg;
        r->per_second_p99_max_ms = max;
        r->per_second_n = nsec;
    }

    fputs("\n", out);
    print_prometheus(out, s[LAB_AB], n[LAB_AB], r);

    fputs("\n", out);
    fprintf(out, "  share of requests under %g ms (this one CAN be combined)\n", SHARE_THRESHOLD_MS);
    for (int g = 0; g < LAB_NGROUPS; g++) {
        struct share sh;
        stats_share(s[g], n[g], SHARE_THRESHOLD_MS, &sh);
        fprintf(out, "    %-4s %zu of %zu = %.2f%%%s\n", group_names[g], sh.under, sh.count,
                sh.count ? 100.0 * (double)sh.under / (double)sh.count : NAN,
                g == LAB_AB ? "  (the counts add up, the percentiles do not)" : "");
    }

    fputs("\n", out);
    print_windows(out, v[LAB_A], n[LAB_A], r);
out:
    for (int g = 0; g < LAB_NGROUPS; g++) {
        free(v[g]);
        free(s[g]);
    }
}

/* ---- sentences ---- */

void lab_say_add(struct lab_say *s, const char *fmt, ...)
{
    if (s->n >= sizeof s->buf - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(s->buf + s->n, sizeof s->buf - s->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        s->n = s->n + (size_t)k < sizeof s->buf ? s->n + (size_t)k : sizeof s->buf - 1;
}

/* Columns of a UTF-8 byte range (continuation bytes take none). */
static size_t columns(const char *p, size_t len)
{
    size_t w = 0;
    for (size_t i = 0; i < len; i++)
        w += ((unsigned char)p[i] & 0xC0) != 0x80;
    return w;
}

void lab_say_end(struct lab_say *s, FILE *out)
{
    /* "- " then words, wrapped at LAB_SAY_WIDTH columns, continuation lines indented. */
    const char *p = s->buf;
    size_t col = 0;
    fputs("- ", out);
    col = 2;
    bool first = true;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        size_t len = (size_t)(e - p), w = columns(p, len);
        if (!len)
            break;
        if (!first && col + 1 + w > LAB_SAY_WIDTH) {
            fputs("\n  ", out);
            col = 2;
        } else if (!first) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, len, out);
        col += w;
        first = false;
        p = e;
    }
    fputc('\n', out);
    s->n = 0;
    s->buf[0] = '\0';
}
