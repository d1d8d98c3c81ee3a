/* knee compare's printers: the text report (tables, verdicts, the two distributions side by
 * side) and the JSON document (schema knee-compare/1, docs/FORMATS.md). Both print only
 * what compare_run computed; a value without data is "-" in text and null in JSON. */
#include "compare/internal.h"

#include "core/err.h"
#include "core/json.h"
#include "core/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers --------------------------------------------------------------------------------- */

/* A metric's value: ms with three decimals, the share under as a percentage. */
static const char *val(int m, double v, char *buf, size_t len)
{
    if (!isfinite(v))
        return "-";
    if (m == CMP_UNDER)
        snprintf(buf, len, "%.2f%%", 100 * v);
    else
        snprintf(buf, len, "%.3f", v);
    return buf;
}

/* A signed difference: ms, or percentage points for the share under. */
static const char *sdiff(int m, double v, char *buf, size_t len)
{
    if (!isfinite(v))
        return "-";
    if (m == CMP_UNDER)
        snprintf(buf, len, "%+.2f pts", 100 * v);
    else
        snprintf(buf, len, "%+.3f", v);
    return buf;
}

static const char *ci(int m, double lo, double hi, char *buf, size_t len)
{
    if (!isfinite(lo) || !isfinite(hi))
        return "-";
    char a[32], b[32];
    snprintf(buf, len, "[%s, %s]", sdiff(m, lo, a, sizeof a), sdiff(m, hi, b, sizeof b));
    return buf;
}

static const char *pct(double rel, char *buf, size_t len)
{
    if (!isfinite(rel))
        return "-";
    snprintf(buf, len, "%+.1f%%", 100 * rel);
    return buf;
}

static const char *metric_label(int m, double under_ms, char *buf, size_t len)
{
    if (m == CMP_UNDER) {
        char t[32];
        snprintf(buf, len, "< %s", units_fmt_seconds(under_ms / 1e3, 4, t, sizeof t));
    } else {
        snprintf(buf, len, "%s ms", compare_metric_names[m]);
    }
    return buf;
}

/* ---- text ------------------------------------------------------------------------------------ */

static void print_table(FILE *out, const struct compare_result *r, const struct compare_target_result *tr,
                        const struct compare_side *before, const struct compare_side *after, bool verbose)
{
    char n1[32], n2[32];
    bool stream = tr == &r->stream[0] || tr == &r->stream[1]; /* first events or gaps, not requests */
    fprintf(out, "\n%s (%s %s before, %s after)\n", tr->name, units_fmt_count(tr->n_before, n1, sizeof n1),
            stream ? "values" : "requests", units_fmt_count(tr->n_after, n2, sizeof n2));
    fprintf(out, "  %-10s %10s %10s %11s  %-24s %8s %8s  %s\n", "", "before", "after", "difference", "interval",
            "relative", "spread", "verdict");
    for (int m = 0; m < CMP_NMETRICS; m++) {
        const struct compare_metric_result *mr = &tr->m[m];
        if (!mr->used)
            continue;
        char l[32], b[32], a[32], d[32], c[80], p[32], s[32];
        double spread = fmax(mr->spread_before, mr->spread_after);
        fprintf(out, "  %-10s %10s %10s %11s  %-24s %8s %8s  %s\n", metric_label(m, r->opts.under_ms, l, sizeof l),
                val(m, mr->before, b, sizeof b), val(m, mr->after, a, sizeof a), sdiff(m, mr->diff, d, sizeof d),
                ci(m, mr->ci_lo, mr->ci_hi, c, sizeof c), m == CMP_UNDER ? "" : pct(mr->rel, p, sizeof p),
                m == CMP_UNDER ? (isfinite(spread) ? (snprintf(s, sizeof s, "%.1f pts", 100 * spread), s) : "-")
                               : (isfinite(spread) ? (snprintf(s, sizeof s, "%.3f", spread), s) : "-"),
                compare_verdict_name(mr->verdict));
    }
    if (!verbose)
        return;
    for (int m = 0; m < CMP_NMETRICS; m++) {
        const struct compare_metric_result *mr = &tr->m[m];
        if (!mr->used)
            continue;
        char l[32], v[32];
        fprintf(out, "  %-10s before:", metric_label(m, r->opts.under_ms, l, sizeof l));
        for (size_t i = 0; i < before->nreps; i++)
            fprintf(out, " %s", val(m, mr->reps_before[i], v, sizeof v));
        fprintf(out, "   after:");
        for (size_t i = 0; i < after->nreps; i++)
            fprintf(out, " %s", val(m, mr->reps_after[i], v, sizeof v));
        fputc('\n', out);
    }
}

/* "slower (p50, p99 slower; p99.9 no detectable difference)" */
static void print_verdict(FILE *out, const char *lead, const struct compare_target_result *tr)
{
    fprintf(out, "%s%s", lead, tr->verdict_text);
    if (tr->verdict == CMP_V_FEW_REPS) {
        fputc('\n', out);
        return;
    }
    const enum compare_verdict order[] = {CMP_V_SLOWER, CMP_V_FASTER, CMP_V_NO_DIFFERENCE, CMP_V_SPREAD,
                                          CMP_V_FEW_SAMPLES};
    bool open = false;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        bool first = true;
        for (int m = 0; m < CMP_NMETRICS; m++) {
            if (!tr->m[m].used || tr->m[m].verdict != order[k])
                continue;
            fprintf(out, "%s%s", first ? (open ? "; " : " (") : ", ",
                    m == CMP_UNDER ? "share under" : compare_metric_names[m]);
            first = false;
            open = true;
        }
        if (!first)
            fprintf(out, " %s", compare_verdict_name(order[k]));
    }
    fprintf(out, "%s\n", open ? ")" : "");
}

void compare_print_overlay(FILE *out, const struct dbl_hist *before, const struct dbl_hist *after, int width)
{
    size_t first = DBL_MAX_BUCKETS, last = 0;
    double max = 0;
    for (size_t i = 0; i < DBL_MAX_BUCKETS; i++) {
        if (!before->counts[i] && !after->counts[i])
            continue;
        if (first == DBL_MAX_BUCKETS)
            first = i;
        last = i;
        double sb = before->total ? (double)before->counts[i] / (double)before->total : 0;
        double sa = after->total ? (double)after->counts[i] / (double)after->total : 0;
        max = fmax(max, fmax(sb, sa));
    }
    if (first == DBL_MAX_BUCKETS || !(max > 0))
        return;
    char label[DBL_MAX_BUCKETS][48];
    int lw = 0;
    for (size_t i = first; i <= last; i++) {
        double hi = dbl_upper(before, i);
        int n = isinf(hi) ? snprintf(label[i], sizeof label[i], "%g..", dbl_lower(before, i))
                          : snprintf(label[i], sizeof label[i], "%g..%g", dbl_lower(before, i), hi);
        if (n > lw)
            lw = n;
    }
    fprintf(out, "  %*s     %-*s  %s\n", lw, "", width + 8, "before", "after");
    for (size_t i = first; i <= last; i++) {
        const struct dbl_hist *h[2] = {before, after};
        fprintf(out, "  %*s ms", lw, label[i]);
        for (int s = 0; s < 2; s++) {
            double share = h[s]->total ? (double)h[s]->counts[i] / (double)h[s]->total : 0;
            int bar = (int)(share * width / max + 0.5);
            if (h[s]->counts[i] && bar == 0)
                bar = 1;
            fprintf(out, "  %5.1f%% ", 100 * share);
            for (int k = 0; k < bar; k++)
                fputc('#', out);
            if (s == 0)
                for (int k = bar; k < width; k++)
                    fputc(' ', out);
        }
        fputc('\n', out);
    }
}

void compare_print_text(FILE *out, const struct compare_result *r, const struct compare_side *before,
                        const struct compare_side *after, bool verbose)
{
    if (r->forced) {
        fprintf(out, "FORCED: the two sides were not run with the same load model (%s", r->diffs[0]);
        for (size_t k = 1; k < r->ndiffs && k < sizeof r->diffs / sizeof r->diffs[0]; k++)
            fprintf(out, "; %s", r->diffs[k]);
        fprintf(out, "): this is not a like-for-like comparison\n");
    }
    char n1[32], n2[32];
    uint64_t rb = 0, ra = 0;
    for (size_t i = 0; i < before->nreps; i++)
        rb += before->reps[i].requests;
    for (size_t i = 0; i < after->nreps; i++)
        ra += after->reps[i].requests;
    fprintf(out, "before: %zu repetition%s, %s measured requests (%s", before->nreps, before->nreps == 1 ? "" : "s",
            units_fmt_count(rb, n1, sizeof n1), before->reps[0].label);
    if (before->nreps > 1)
        fprintf(out, " .. %s", before->reps[before->nreps - 1].label);
    fprintf(out, ")\nafter:  %zu repetition%s, %s measured requests (%s", after->nreps, after->nreps == 1 ? "" : "s",
            units_fmt_count(ra, n2, sizeof n2), after->reps[0].label);
    if (after->nreps > 1)
        fprintf(out, " .. %s", after->reps[after->nreps - 1].label);
    fprintf(out, ")\nload model: %s%s\n", r->model_text, r->forced ? "" : " (the same on both sides)");
    if (r->nreps_before >= COMPARE_MIN_REPS && r->nreps_after >= COMPARE_MIN_REPS)
        fprintf(out,
                "difference = after - before; %.0f%% intervals: hierarchical bootstrap (repetitions, then requests; "
                "%s resamples, seed %llu), widened x%.2f for %zu and %zu repetitions; spread = the widest max - min "
                "of one side's repetitions\n",
                100 * r->opts.confidence, units_fmt_count(r->opts.resamples, n1, sizeof n1),
                (unsigned long long)r->opts.seed,
                r->opts.no_widening ? 1.0 : compare_widening(r->nreps_before, r->nreps_after, r->opts.confidence),
                r->nreps_before, r->nreps_after);
    else
        fprintf(out,
                "difference = after - before; no interval: fewer than %d repetitions on a side; spread = the "
                "widest max - min of one side's repetitions\n",
                COMPARE_MIN_REPS);
    for (size_t t = 0; t < r->ntargets && r->ntargets > 1; t++) {
        print_table(out, r, &r->targets[t], before, after, verbose);
        print_verdict(out, "  verdict: ", &r->targets[t]);
    }
    print_table(out, r, r->all, before, after, verbose);
    fputc('\n', out);
    print_verdict(out, "verdict: ", r->all);
    for (int k = 0; k < 2; k++) /* streamed responses: the same table, events instead of requests */
        if (r->has_stream[k]) {
            print_table(out, r, &r->stream[k], before, after, verbose);
            print_verdict(out, "  verdict: ", &r->stream[k]);
        }
    fprintf(out, "\nlatency distribution (all targets; share of requests per doubling bucket)\n");
    compare_print_overlay(out, &r->all->hist_before, &r->all->hist_after, 24);
    compare_print_stages(out, before, after);
    for (size_t i = 0; i < r->opts.nfail_if; i++) {
        const struct compare_fail_if *f = &r->opts.fail_if[i];
        fprintf(out, "%s--fail-if %s: %s\n", i == 0 ? "\n" : "", f->expr,
                !f->evaluated ? "NOT EVALUATED (no verdict without 3 repetitions a side)"
                : f->failed   ? "FAILED"
                              : "passed");
    }
    if (r->nwarnings) {
        fprintf(out, "\nwarnings\n");
        for (size_t i = 0; i < r->nwarnings; i++)
            fprintf(out, "  - %s\n", r->warnings[i]);
    }
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_metrics(struct jw *j, const struct compare_target_result *tr, size_t nb, size_t na)
{
    jw_key(j, "metrics");
    jw_object_begin(j);
    for (int m = 0; m < CMP_NMETRICS; m++) {
        const struct compare_metric_result *mr = &tr->m[m];
        if (!mr->used)
            continue;
        jw_key(j, compare_metric_names[m]);
        jw_object_begin(j);
        jw_kv_string(j, "unit", m == CMP_UNDER ? "fraction" : "ms");
        jw_kv_double(j, "before", mr->before);
        jw_kv_double(j, "after", mr->after);
        jw_kv_double(j, "difference", mr->diff);
        jw_kv_double(j, "relative", mr->rel);
        jw_kv_double(j, "ci_low", mr->ci_lo);
        jw_kv_double(j, "ci_high", mr->ci_hi);
        jw_kv_double(j, "ci_low_relative", mr->ci_lo_rel);
        jw_kv_double(j, "ci_high_relative", mr->ci_hi_rel);
        jw_kv_double(j, "spread_before", mr->spread_before);
        jw_kv_double(j, "spread_after", mr->spread_after);
        jw_key(j, "repetitions_before");
        jw_array_begin(j);
        for (size_t i = 0; i < nb; i++)
            jw_double(j, mr->reps_before[i]);
        jw_array_end(j);
        jw_key(j, "repetitions_after");
        jw_array_begin(j);
        for (size_t i = 0; i < na; i++)
            jw_double(j, mr->reps_after[i]);
        jw_array_end(j);
        if (m <= CMP_P999) {
            jw_kv_uint(j, "beyond_before", mr->beyond_before);
            jw_kv_uint(j, "beyond_after", mr->beyond_after);
        }
        jw_kv_string(j, "verdict", compare_verdict_name(mr->verdict));
        jw_object_end(j);
    }
    jw_object_end(j);
}

static void json_hist(struct jw *j, const char *key, const struct dbl_hist *h)
{
    jw_key(j, key);
    jw_array_begin(j);
    for (size_t i = 0; i < DBL_MAX_BUCKETS; i++) {
        if (!h->counts[i])
            continue;
        jw_object_begin(j);
        jw_kv_double(j, "from_ms", dbl_lower(h, i));
        jw_kv_double(j, "to_ms", dbl_upper(h, i));
        jw_kv_uint(j, "count", h->counts[i]);
        jw_object_end(j);
    }
    jw_array_end(j);
}

/* The percentile spectrum of a side: every repetition's requests of every target pooled, the
 * nearest-rank percentile at p = 1 - 2^(-k/5) (five steps per halving of 1 - p, as the
 * HdrHistogram plotter's) while at least one request lies beyond the level. */
static void json_spectrum(struct jw *j, const char *key, const struct compare_side *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nreps; i++)
        n += s->reps[i].ntargets;
    const struct compare_dist **parts = xcalloc(n ? n : 1, sizeof *parts);
    n = 0;
    for (size_t i = 0; i < s->nreps; i++)
        for (size_t t = 0; t < s->reps[i].ntargets; t++)
            parts[n++] = &s->reps[i].dist[t];
    struct compare_dist d;
    compare_dist_merge(&d, parts, n);
    free(parts);
    jw_key(j, key);
    jw_object_begin(j);
    jw_kv_uint(j, "requests", d.n);
    double p[256];
    size_t m = 0;
    for (int k = 0; m < sizeof p / sizeof p[0]; k++) {
        double beyond = exp2(-(double)k / 5);
        if (d.n == 0 || beyond * (double)d.n < 1)
            break;
        p[m++] = 1 - beyond;
    }
    jw_key(j, "p");
    jw_array_begin(j);
    for (size_t i = 0; i < m; i++)
        jw_double(j, p[i]);
    jw_array_end(j);
    jw_key(j, "v");
    jw_array_begin(j);
    for (size_t i = 0; i < m; i++)
        jw_double(j, compare_dist_percentile(&d, 100 * p[i]));
    jw_array_end(j);
    jw_kv_double(j, "max", d.m ? d.x[d.m - 1] : NAN);
    jw_object_end(j);
    compare_dist_release(&d);
}

static void json_model(struct jw *j, const struct compare_model *m)
{
    jw_object_begin(j);
    jw_kv_bool(j, "known", m->known);
    jw_kv_string(j, "mode", !m->closed_known ? "unknown" : m->closed_loop ? "closed" : "open");
    if (m->known) {
        if (!m->closed_loop) {
            jw_kv_string(j, "arrivals", m->arrivals);
            jw_kv_double(j, "rate", m->rate);
            if (m->ramp) {
                jw_kv_double(j, "ramp_from", m->ramp_from);
                jw_kv_double(j, "ramp_to", m->ramp_to);
            }
            jw_kv_uint(j, "pool_cap", m->pool_cap);
            jw_kv_string(j, "when_busy", m->when_busy);
        } else {
            jw_kv_double(j, "think_s", m->think_s);
        }
        jw_kv_double(j, "duration_s", m->duration_s);
        jw_kv_uint(j, "requests", m->requests);
        jw_kv_double(j, "warmup_s", m->warmup_s);
        jw_kv_double(j, "timeout_s", m->timeout_s);
        jw_kv_bool(j, "keepalive", m->keepalive);
        jw_kv_uint(j, "seed", m->seed);
    }
    jw_key(j, "targets");
    jw_array_begin(j);
    for (size_t i = 0; i < m->ntargets; i++) {
        jw_object_begin(j);
        jw_kv_string(j, "name", m->targets[i].name);
        if (m->known) {
            jw_kv_string(j, "path", m->targets[i].path);
            jw_kv_string(j, "authority", m->targets[i].authority);
            if (m->closed_loop)
                jw_kv_uint(j, "clients", m->targets[i].clients);
            else
                jw_kv_double(j, "planned_rate", m->targets[i].planned_rate);
        }
        jw_object_end(j);
    }
    jw_array_end(j);
    jw_object_end(j);
}

static void json_target(struct jw *j, const struct compare_target_result *tr, size_t nb, size_t na)
{
    jw_object_begin(j);
    jw_kv_string(j, "name", tr->name);
    jw_kv_uint(j, "requests_before", tr->n_before);
    jw_kv_uint(j, "requests_after", tr->n_after);
    jw_kv_string(j, "verdict", tr->verdict_text);
    json_metrics(j, tr, nb, na);
    jw_object_end(j);
}

void compare_write_json(FILE *out, const struct compare_result *r, const struct compare_side *before,
                        const struct compare_side *after)
{
    struct jw j;
    jw_init(&j, out, true);
    jw_object_begin(&j);
    jw_kv_string(&j, "schema", "knee-compare/1");
    jw_kv_string(&j, "verdict", r->all->verdict_text);
    jw_kv_bool(&j, "forced", r->forced);
    jw_key(&j, "load_model_differences");
    jw_array_begin(&j);
    for (size_t k = 0; k < r->ndiffs && k < sizeof r->diffs / sizeof r->diffs[0]; k++)
        jw_string(&j, r->diffs[k]);
    jw_array_end(&j);
    jw_key(&j, "repetitions");
    jw_object_begin(&j);
    jw_kv_uint(&j, "before", r->nreps_before);
    jw_kv_uint(&j, "after", r->nreps_after);
    jw_object_end(&j);
    const struct compare_side *sides[2] = {before, after};
    jw_key(&j, "inputs");
    jw_object_begin(&j);
    for (int s = 0; s < 2; s++) {
        jw_key(&j, sides[s]->name);
        jw_array_begin(&j);
        for (size_t i = 0; i < sides[s]->nreps; i++) {
            jw_object_begin(&j);
            jw_kv_string(&j, "label", sides[s]->reps[i].label);
            jw_kv_string(&j, "source", sides[s]->reps[i].source);
            jw_kv_uint(&j, "requests", sides[s]->reps[i].requests);
            jw_object_end(&j);
        }
        jw_array_end(&j);
    }
    jw_object_end(&j);
    jw_key(&j, "load_model");
    json_model(&j, &before->reps[0].model);
    jw_key(&j, "load_model_after");
    json_model(&j, &after->reps[0].model);
    jw_key(&j, "method");
    jw_object_begin(&j);
    jw_kv_string(&j, "interval",
                 "percentile bootstrap, hierarchical: repetitions with replacement, then "
                 "Poisson(1) weights on each drawn repetition's requests");
    jw_kv_uint(&j, "resamples", r->opts.resamples);
    jw_kv_double(&j, "widening",
                 r->opts.no_widening ? 1.0 : compare_widening(r->nreps_before, r->nreps_after, r->opts.confidence));
    jw_kv_uint(&j, "seed", r->opts.seed);
    jw_kv_double(&j, "confidence", r->opts.confidence);
    jw_kv_uint(&j, "min_repetitions", COMPARE_MIN_REPS);
    jw_kv_uint(&j, "min_beyond", COMPARE_MIN_BEYOND);
    jw_kv_string(&j, "percentile", "nearest rank");
    jw_object_end(&j);
    if (r->opts.under_ms > 0)
        jw_kv_double(&j, "under_ms", r->opts.under_ms);
    else {
        jw_key(&j, "under_ms");
        jw_null(&j);
    }
    json_metrics(&j, r->all, r->nreps_before, r->nreps_after);
    jw_key(&j, "all");
    json_target(&j, r->all, r->nreps_before, r->nreps_after);
    jw_key(&j, "targets");
    jw_array_begin(&j);
    for (size_t t = 0; t < r->ntargets; t++)
        json_target(&j, &r->targets[t], r->nreps_before, r->nreps_after);
    jw_array_end(&j);
    if (r->has_stream[0] || r->has_stream[1]) { /* first_event, event_gap: rows as "all" */
        jw_key(&j, "stream");
        jw_object_begin(&j);
        static const char *const keys[2] = {"first_event", "event_gap"};
        for (int k = 0; k < 2; k++)
            if (r->has_stream[k]) {
                jw_key(&j, keys[k]);
                json_target(&j, &r->stream[k], r->nreps_before, r->nreps_after);
            }
        jw_object_end(&j);
    }
    jw_key(&j, "distribution");
    jw_object_begin(&j);
    json_hist(&j, "before", &r->all->hist_before);
    json_hist(&j, "after", &r->all->hist_after);
    jw_object_end(&j);
    compare_write_stages_json(&j, before, after);
    jw_key(&j, "spectrum");
    jw_object_begin(&j);
    json_spectrum(&j, "before", before);
    json_spectrum(&j, "after", after);
    jw_object_end(&j);
    jw_key(&j, "fail_if");
    jw_array_begin(&j);
    for (size_t i = 0; i < r->opts.nfail_if; i++) {
        jw_object_begin(&j);
        jw_kv_string(&j, "expr", r->opts.fail_if[i].expr);
        jw_kv_bool(&j, "evaluated", r->opts.fail_if[i].evaluated);
        jw_kv_bool(&j, "failed", r->opts.fail_if[i].failed);
        jw_object_end(&j);
    }
    jw_array_end(&j);
    jw_key(&j, "warnings");
    jw_array_begin(&j);
    for (size_t i = 0; i < r->nwarnings; i++)
        jw_string(&j, r->warnings[i]);
    jw_array_end(&j);
    jw_object_end(&j);
    jw_end(&j);
}
