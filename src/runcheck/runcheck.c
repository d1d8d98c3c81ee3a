/* Self-checks of a finished run: Poisson sends, a stationary timeline, a precise p99. */
#include "runcheck/runcheck.h"

#include "core/err.h"
#include "core/units.h"
#include "reqlog/reqlog.h"
#include "stats/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the p99 and its interval --------------------------------------------------------------- */

bool runcheck_p99_ci(const struct hdr *h, double *p99_ms, double *lo_ms, double *hi_ms)
{
    uint64_t n = h->total_count > 0 ? (uint64_t)h->total_count : 0;
    *p99_ms = *lo_ms = *hi_ms = NAN;
    if (n == 0)
        return false;
    *p99_ms = (double)hdr_value_at_percentile(h, 99) / 1e6;
    size_t lo, hi;
    double cov;
    if (n < 2 || stats_binomial_ci_ranks((size_t)n, 99, 0.95, &lo, &hi, &cov) != 0)
        return false;
    /* the value of rank r: the percentile 100 r / n (hdr's rank is ceil(p/100 n) = r) */
    *lo_ms = (double)hdr_value_at_percentile(h, 100.0 * (double)lo / (double)n) / 1e6;
    *hi_ms = (double)hdr_value_at_percentile(h, 100.0 * (double)hi / (double)n) / 1e6;
    return true;
}

static void p99_exact(struct runcheck *c, double *lat, size_t n)
{
    stats_sort(lat, n);
    struct pct_ci ci;
    c->n = n;
    if (stats_percentile_ci(lat, n, 99, 0.95, &ci) != 0)
        return;
    c->p99_known = c->p99_exact = true;
    c->p99_ms = ci.value;
    c->p99_ci_defined = ci.defined;
    c->p99_lo_ms = ci.lo;
    c->p99_hi_ms = ci.hi;
}

/* ---- stationarity ---------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void trend(struct runcheck_trend *t, const struct run_record *res, bool p99)
{
    memset(t, 0, sizeof *t);
    double warm_s = (double)res->config.warmup_ns / 1e9;
    double *v = xmalloc((res->nticks ? res->nticks : 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < res->nticks; i++) {
        const struct run_tick *k = &res->ticks[i];
        double x = p99 ? k->p99_ms : k->p50_ms;
        /* whole seconds of the measured window with requests in them */
        if (k->start_s < warm_s || k->length_s < 0.5 || !isfinite(x))
            continue;
        v[n++] = x;
    }
    t->window_s = 1;
    if (n > STATS_MK_MAX) {
        /* windows of whole seconds, their mean, so the series fits the test */
        size_t w = (n + STATS_MK_MAX - 1) / STATS_MK_MAX, m = 0;
        for (size_t i = 0; i + w <= n; i += w) {
            double s = 0;
            for (size_t j = 0; j < w; j++)
                s += v[i + j];
            v[m++] = s / (double)w;
        }
        n = m;
        t->window_s = (double)w;
    }
    t->n = n;
    if (n >= RUNCHECK_TREND_MIN_SECONDS && stats_mann_kendall(v, n, &t->mk) == 0) {
        t->tested = true;
        qsort(v, n, sizeof *v, cmp_double);
        t->median_ms = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        t->drift_ms = t->mk.sen_slope * (double)(n - 1);
        t->trend = t->mk.p < RUNCHECK_TREND_P && fabs(t->drift_ms) >= RUNCHECK_TREND_DRIFT * t->median_ms;
    }
    free(v);
}

/* ---- the log: send times and latencies ------------------------------------------------------- */

/* A shard's run (not a merge's) of a plan split in more than one: it sends one arrival in count of
 * the plan's (plan/shard.h). 0 otherwise. */
static uint32_t shard_of(const struct run_record *res)
{
    const struct run_shard *s = &res->shard;
    return s->count > 1 && s->index != RUN_SHARD_MERGED ? s->count : 0;
}

static int read_log(struct runcheck *c, const struct run_record *res, const char *path, char *err, size_t errlen)
{
    struct reqlog_reader *rd;
    char why[512];
    int rc = reqlog_reader_open(&rd, path, why, sizeof why);
    if (rc)
        return knee_fail(err, errlen, rc, "%s: %s", path, why);
    size_t cap = 4096, ns = 0, nl = 0;
    double *sent = xmalloc(cap * sizeof *sent), *lat = xmalloc(cap * sizeof *lat);
    struct reqlog_record r;
    while ((rc = reqlog_read(rd, &r)) == 1) {
        if (r.flags & REQLOG_FLAG_WARMUP)
            continue;
        if (ns == cap || nl == cap) {
            cap *= 2;
            sent = xrealloc(sent, cap * sizeof *sent);
            lat = xrealloc(lat, cap * sizeof *lat);
        }
        if (r.sent_ns)
            sent[ns++] = (double)r.sent_ns;
        if (r.done_ns && r.done_ns >= r.planned_ns && r.outcome != OUTCOME_DROPPED && r.outcome != OUTCOME_CANCELLED)
            lat[nl++] = (double)(r.done_ns - r.planned_ns) / 1e6;
    }
    if (rc < 0)
        knee_fail(err, errlen, rc, "%s: %s", path, reqlog_reader_error(rd));
    reqlog_reader_close(rd);
    if (rc == 0) {
        p99_exact(c, lat, nl);
        const struct record_config *cfg = &res->config;
        bool poisson = cfg->open_loop && cfg->arrivals == RUN_ARRIVALS_POISSON && !cfg->ramp && !shard_of(res);
        if (poisson && ns >= 6) {
            stats_sort(sent, ns);
            size_t ngaps = ns - 1, step = (ngaps + RUNCHECK_AD_MAX_GAPS - 1) / RUNCHECK_AD_MAX_GAPS, m = 0;
            for (size_t i = 0; i < ngaps; i += step) {
                double g = sent[i + 1] - sent[i];
                sent[m++] = g > 0 ? g : 0.5; /* two sends in one ns: half the clock's resolution */
            }
            stats_sort(sent, m);
            c->gaps_total = ngaps;
            if (stats_ad_exponential(sent, m, &c->ad) == 0) {
                c->poisson_tested = true;
                c->poisson_note[0] = '\0';
                c->poisson_rejected = c->ad.rejected_at > 0 && c->ad.rejected_at <= RUNCHECK_AD_LEVEL;
            } else {
                snprintf(c->poisson_note, sizeof c->poisson_note, "the Anderson-Darling statistic is not defined");
            }
        } else if (poisson) {
            snprintf(c->poisson_note, sizeof c->poisson_note, "%zu measured sends, too few to test (needs 6)", ns);
        }
    }
    free(sent);
    free(lat);
    return rc < 0 ? rc : 0;
}

int runcheck_run(const struct run_record *res, const char *log_path, struct runcheck *out, char *err, size_t errlen)
{
    const struct record_config *cfg = &res->config;
    memset(out, 0, sizeof *out);
    out->p99_ms = out->p99_lo_ms = out->p99_hi_ms = out->p99_width_rel = NAN;
    size_t len = log_path ? strlen(log_path) : 0;
    bool binary = log_path && !(len >= 4 && strcmp(log_path + len - 4, ".csv") == 0);
    if (!cfg->open_loop || cfg->arrivals != RUN_ARRIVALS_POISSON)
        snprintf(out->poisson_note, sizeof out->poisson_note, "not Poisson arrivals");
    else if (cfg->ramp)
        snprintf(out->poisson_note, sizeof out->poisson_note, "--ramp changes the rate over the run");
    else if (shard_of(res)) /* plan/shard.h: every N-th arrival of one Poisson process */
        snprintf(out->poisson_note, sizeof out->poisson_note,
                 "a shard sends one arrival in %u of the plan's (gaps not exponential); knee merge -o checks them all",
                 shard_of(res));
    else {
        out->poisson_applies = true;
        /* the run's result holds histograms and per-second counts, not the send times */
        snprintf(out->poisson_note, sizeof out->poisson_note, "it needs the actual send times, from %s",
                 log_path ? "a binary request log (--out FILE.bin), not a CSV"
                          : "the binary request log (--out FILE.bin)");
    }
    trend(&out->p50, res, false);
    trend(&out->p99, res, true);
    int rc = 0;
    if (binary) {
        rc = read_log(out, res, log_path, err, errlen);
        if (rc < 0 && out->poisson_applies && !out->poisson_tested)
            snprintf(out->poisson_note, sizeof out->poisson_note, "the request log could not be read back (%s)", err);
    }
    if (!out->p99_known) {
        out->n = (uint64_t)res->all.latency_all.total_count;
        out->p99_ci_defined = runcheck_p99_ci(&res->all.latency_all, &out->p99_ms, &out->p99_lo_ms, &out->p99_hi_ms);
        out->p99_known = out->n > 0;
    }
    if (out->p99_ci_defined && out->p99_ms > 0) {
        out->p99_width_rel = (out->p99_hi_ms - out->p99_lo_ms) / out->p99_ms;
        out->p99_wide = out->p99_width_rel > RUNCHECK_P99_CI_WIDE;
    } else {
        out->p99_wide = out->p99_known;
    }
    return rc;
}

/* ---- words ----------------------------------------------------------------------------------- */

static void trend_text(const struct runcheck_trend *t, const char *name, char *buf, size_t len)
{
    char a[32], b[32];
    snprintf(buf, len,
             "the per-second %s %s from about %s to %s ms over the run (Mann-Kendall p = %.2g, Sen's slope %+.3g ms/s)",
             name, t->drift_ms > 0 ? "rises" : "falls", units_fmt_ms(t->median_ms - t->drift_ms / 2, a, sizeof a),
             units_fmt_ms(t->median_ms + t->drift_ms / 2, b, sizeof b), t->mk.p, t->mk.sen_slope / t->window_s);
}

void runcheck_annotate(const struct runcheck *c, struct run_record *res)
{
    char buf[512];
    if (c->poisson_rejected)
        warn_add(
            &res->warnings, true,
            "self-check: the actual sends are not a Poisson process (Anderson-Darling A2* = %.3g on %zu inter-send "
            "gaps, "
            "above %.3g, the %g%% critical value): the generator did not keep the schedule (see the lag)",
            c->ad.a2_modified, c->ad.n, stats_ad_exp_crit[STATS_AD_NLEVELS - 1], RUNCHECK_AD_LEVEL);
    else if (c->poisson_applies && !c->poisson_tested)
        warn_add(&res->warnings, false, "self-check: the Poisson arrivals were not checked: %s", c->poisson_note);
    const struct runcheck_trend *ts[2] = {&c->p50, &c->p99};
    const char *names[2] = {"p50", "p99"};
    for (int i = 0; i < 2; i++)
        if (ts[i]->trend) {
            trend_text(ts[i], names[i], buf, sizeof buf);
            warn_add(&res->warnings, true,
                     "self-check: not stationary: %s; a longer --warmup, or a server that changes under load", buf);
        }
    char p[32], l[32], h[32];
    if (c->p99_known && !c->p99_ci_defined)
        warn_add(&res->warnings, false,
                 "self-check (precision): p99 %s ms has no 95%% confidence interval with %llu samples (needs 299)",
                 units_fmt_ms(c->p99_ms, p, sizeof p), (unsigned long long)c->n);
    else if (c->p99_wide)
        warn_add(
            &res->warnings, false,
            "self-check (precision): the p99's 95%% confidence interval is wide: %s ms in [%s, %s] (%.0f%% of it); run "
            "longer "
            "(--until-ci) for a p99 to compare",
            units_fmt_ms(c->p99_ms, p, sizeof p), units_fmt_ms(c->p99_lo_ms, l, sizeof l),
            units_fmt_ms(c->p99_hi_ms, h, sizeof h), 100 * c->p99_width_rel);
}

void runcheck_print(FILE *out, const struct runcheck *c, const char *indent)
{
    char buf[512];
    if (c->poisson_tested)
        fprintf(out, "%spoisson: %s (Anderson-Darling A2* = %.3g on %zu of %zu gaps; 1%% critical value %.3g)\n",
                indent, c->poisson_rejected ? "NO, the sends are not a Poisson process" : "yes", c->ad.a2_modified,
                c->ad.n, c->gaps_total, stats_ad_exp_crit[STATS_AD_NLEVELS - 1]);
    else
        fprintf(out, "%spoisson: not tested (%s)\n", indent, c->poisson_note);
    const struct runcheck_trend *ts[2] = {&c->p50, &c->p99};
    const char *names[2] = {"p50", "p99"};
    for (int i = 0; i < 2; i++) {
        const struct runcheck_trend *t = ts[i];
        if (!t->tested)
            fprintf(out, "%sstationary %s: not tested (%zu seconds; needs %d)\n", indent, names[i], t->n,
                    RUNCHECK_TREND_MIN_SECONDS);
        else if (t->trend) {
            trend_text(t, names[i], buf, sizeof buf);
            fprintf(out, "%sstationary %s: NO, %s\n", indent, names[i], buf);
        } else
            fprintf(out, "%sstationary %s: yes (Mann-Kendall p = %.2g over %zu seconds)\n", indent, names[i], t->mk.p,
                    t->n);
    }
    char p[32], l[32], h[32];
    if (!c->p99_known)
        fprintf(out, "%sp99 interval: no latency samples\n", indent);
    else if (!c->p99_ci_defined)
        fprintf(out, "%sp99 interval: none with %llu samples (needs 299)\n", indent, (unsigned long long)c->n);
    else
        fprintf(out, "%sp99 interval: %s ms in [%s, %s] at 95%% (%.1f%% of it%s)\n", indent,
                units_fmt_ms(c->p99_ms, p, sizeof p), units_fmt_ms(c->p99_lo_ms, l, sizeof l),
                units_fmt_ms(c->p99_hi_ms, h, sizeof h), 100 * c->p99_width_rel,
                c->p99_exact ? "" : "; from the histogram");
}
