/* The summary across the repetitions of `knee run --repeat`: per metric the median of the
 * repetitions' own values and their min–max (each repetition's percentiles are its own; a
 * median of percentiles describes the repetitions, it is not a percentile of the union —
 * knee compare pools the requests for that). */
#include "compare/internal.h"

#include "core/err.h"
#include "core/json.h"
#include "core/units.h"
#include "record/record.h"
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>

void compare_repeat_row_of(struct compare_repeat_row *row, const struct run_record *rec)
{
    struct run_summary s;
    record_summary_of(&rec->all.latency_all, &s);
    *row = (struct compare_repeat_row){.requests = rec->all.counts.planned,
                                       .p50 = s.p50,
                                       .p99 = s.p99,
                                       .p999 = s.p999,
                                       .mean = s.mean,
                                       .rate = rec->all.rates.sent,
                                       .interrupted = rec->interrupted,
                                       .attention = rec->warnings.attention};
}

enum { R_P50, R_P99, R_P999, R_MEAN, R_RATE, R_N };
static const char *const row_names[R_N] = {"p50", "p99", "p99.9", "mean", "rate"};

static double field(const struct compare_repeat_row *r, int k)
{
    switch (k) {
    case R_P50:
        return r->p50;
    case R_P99:
        return r->p99;
    case R_P999:
        return r->p999;
    case R_MEAN:
        return r->mean;
    default:
        return r->rate;
    }
}

struct agg {
    double median, min, max;
    size_t n;
};

static struct agg aggregate(const struct compare_repeat_row *rows, size_t n, int k)
{
    double *v = xmalloc((n ? n : 1) * sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(field(&rows[i], k)))
            v[m++] = field(&rows[i], k);
    struct agg a = {NAN, NAN, NAN, m};
    if (m) {
        stats_sort(v, m);
        a.median = stats_quantile(v, m, 0.5, 7);
        a.min = v[0];
        a.max = v[m - 1];
    }
    free(v);
    return a;
}

void compare_repeat_print(FILE *out, const struct compare_repeat_row *rows, size_t n)
{
    size_t interrupted = 0;
    for (size_t i = 0; i < n; i++)
        interrupted += rows[i].interrupted;
    fprintf(out, "\nacross %zu repetition%s%s\n", n, n == 1 ? "" : "s",
            interrupted ? " (an interrupted one included: it covers less than the plan)" : "");
    fprintf(out, "  %-10s %10s %23s %8s\n", "", "median", "min .. max", "spread");
    for (int k = 0; k < R_N; k++) {
        struct agg a = aggregate(rows, n, k);
        char med[32], lo[32], hi[32], sp[32], label[32];
        snprintf(label, sizeof label, "%s %s", row_names[k], k == R_RATE ? "/s" : "ms");
        if (k == R_RATE) {
            units_fmt_rate(a.median, med, sizeof med);
            units_fmt_rate(a.min, lo, sizeof lo);
            units_fmt_rate(a.max, hi, sizeof hi);
        } else {
            units_fmt_ms(a.median, med, sizeof med);
            units_fmt_ms(a.min, lo, sizeof lo);
            units_fmt_ms(a.max, hi, sizeof hi);
        }
        if (a.median > 0 && isfinite(a.max - a.min))
            snprintf(sp, sizeof sp, "%.1f%%", 100 * (a.max - a.min) / a.median);
        else
            snprintf(sp, sizeof sp, "-");
        char range[80];
        snprintf(range, sizeof range, "%s .. %s", lo, hi);
        fprintf(out, "  %-10s %10s %23s %8s\n", label, med, range, sp);
    }
    if (n < COMPARE_MIN_REPS)
        fprintf(out, "  (knee compare needs at least %d repetitions a side for a verdict)\n", COMPARE_MIN_REPS);
}

void compare_repeat_json(FILE *out, const struct compare_repeat_row *rows, size_t n, size_t planned, uint64_t settle_ns,
                         const char *dir)
{
    struct jw j;
    jw_init(&j, out, true);
    jw_object_begin(&j);
    jw_kv_string(&j, "schema", "knee-repeat/1");
    jw_kv_string(&j, "dir", dir);
    jw_kv_uint(&j, "planned", planned);
    jw_kv_uint(&j, "completed", n);
    jw_kv_double(&j, "settle_s", (double)settle_ns / 1e9);
    jw_key(&j, "repetitions");
    jw_array_begin(&j);
    for (size_t i = 0; i < n; i++) {
        char stem[32], f[48];
        snprintf(stem, sizeof stem, COMPARE_REP_FMT, i + 1);
        jw_object_begin(&j);
        jw_kv_uint(&j, "repetition", i + 1);
        snprintf(f, sizeof f, "%s.bin", stem);
        jw_kv_string(&j, "log", f);
        snprintf(f, sizeof f, "%s.hlog", stem);
        jw_kv_string(&j, "hlog", f);
        snprintf(f, sizeof f, "%s.json", stem);
        jw_kv_string(&j, "json", f);
        jw_kv_uint(&j, "requests", rows[i].requests);
        jw_kv_double(&j, "p50_ms", rows[i].p50);
        jw_kv_double(&j, "p99_ms", rows[i].p99);
        jw_kv_double(&j, "p99.9_ms", rows[i].p999);
        jw_kv_double(&j, "mean_ms", rows[i].mean);
        jw_kv_double(&j, "rate", rows[i].rate);
        jw_kv_bool(&j, "interrupted", rows[i].interrupted);
        jw_kv_bool(&j, "attention", rows[i].attention);
        jw_object_end(&j);
    }
    jw_array_end(&j);
    jw_key(&j, "summary");
    jw_object_begin(&j);
    for (int k = 0; k < R_N; k++) {
        struct agg a = aggregate(rows, n, k);
        char key[32];
        snprintf(key, sizeof key, "%s%s", row_names[k], k == R_RATE ? "" : "_ms");
        jw_key(&j, key);
        jw_object_begin(&j);
        jw_kv_double(&j, "median", a.median);
        jw_kv_double(&j, "min", a.min);
        jw_kv_double(&j, "max", a.max);
        jw_object_end(&j);
    }
    jw_object_end(&j);
    jw_object_end(&j);
    jw_end(&j);
}
