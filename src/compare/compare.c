/* The comparison: the load models checked, per target and for all targets the pooled
 * statistics of each side, the repetitions' own values and their spread, the bootstrap
 * intervals of the differences, the verdicts and --fail-if. The verdict rules are in
 * docs/INTERNALS.md ("knee compare"). */
#include "compare/internal.h"

#include "core/err.h"
#include "core/units.h"
#include "stats/checks.h"
#include "stats/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const compare_metric_names[CMP_NMETRICS] = {"p50", "p90", "p99", "p99.9", "mean", "under"};

const char *compare_verdict_name(enum compare_verdict v)
{
    switch (v) {
    case CMP_V_NONE:
        return "-";
    case CMP_V_NO_DIFFERENCE:
        return "no detectable difference";
    case CMP_V_FASTER:
        return "faster";
    case CMP_V_SLOWER:
        return "slower";
    case CMP_V_SPREAD:
        return "spread within exceeds difference between";
    case CMP_V_FEW_REPS:
        return "not enough repetitions (N<3)";
    case CMP_V_FEW_SAMPLES:
        return "not enough samples";
    case CMP_V_MIXED:
        return "mixed";
    }
    return "?";
}

void compare_opts_init(struct compare_opts *o)
{
    memset(o, 0, sizeof *o);
    o->resamples = COMPARE_DEFAULT_RESAMPLES;
    o->confidence = COMPARE_DEFAULT_CONFIDENCE;
    o->seed = 1;
}

/* "p50, p90, p99, p99.9, mean": the metrics --fail-if takes, from compare_metric_names. */
static const char *fail_if_metrics(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int m = CMP_P50; m <= CMP_MEAN && n < len; m++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", compare_metric_names[m]);
    return buf;
}

int compare_fail_if_parse(const char *s, struct compare_fail_if *f, char *err, size_t errlen)
{
    char names[64];
    memset(f, 0, sizeof *f);
    snprintf(f->expr, sizeof f->expr, "%s", s);
    if (strcmp(s, "slower") == 0) {
        f->any_slower = true;
        return 0;
    }
    const char *plus = strchr(s, '+');
    if (!plus)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "expected 'slower' or METRIC+LIMIT such as p99+5%% or p50+2ms (METRIC: %s)",
                         fail_if_metrics(names, sizeof names));
    size_t mlen = (size_t)(plus - s);
    int metric = -1;
    for (int m = CMP_P50; m <= CMP_MEAN; m++)
        if (strlen(compare_metric_names[m]) == mlen && strncmp(s, compare_metric_names[m], mlen) == 0)
            metric = m;
    if (metric < 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "unknown metric '%.*s' (%s)", (int)mlen, s,
                         fail_if_metrics(names, sizeof names));
    f->metric = (enum compare_metric)metric;
    const char *v = plus + 1;
    size_t vlen = strlen(v);
    if (vlen > 1 && v[vlen - 1] == '%') {
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)(vlen - 1), v);
        double pct;
        if (units_parse_double(num, &pct) || !(pct >= 0))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is not a percentage such as 5%%", v);
        f->relative = true;
        f->limit = pct / 100;
        return 0;
    }
    uint64_t ns;
    if (units_parse_duration_ns(v, 1000000ULL, &ns))
        return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is neither a percentage (5%%) nor a duration (2ms)", v);
    f->limit = (double)ns / 1e6;
    return 0;
}

/* ---- one target ------------------------------------------------------------------------------ */

static double metric_of(const struct compare_dist *d, int m, double under_ms)
{
    if (m == CMP_MEAN)
        return compare_dist_mean(d);
    if (m == CMP_UNDER)
        return compare_dist_share_under(d, under_ms);
    return compare_dist_percentile(d, compare_metric_pct[m]);
}

static size_t count_above(const struct compare_dist *d, double v)
{
    size_t n = 0;
    for (size_t i = d->m; i-- > 0 && d->x[i] > v;)
        n += d->c[i];
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The percentile interval of the finite replicates; NAN when more than 1% are not finite. */
static void interval(double *v, size_t n, double confidence, double *lo, double *hi)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            v[k++] = v[i];
    *lo = *hi = NAN;
    if (k < 2 || (double)(n - k) > 0.01 * (double)n)
        return;
    qsort(v, k, sizeof *v, cmp_double);
    double a = (1 - confidence) / 2;
    *lo = stats_quantile(v, k, a, 7);
    *hi = stats_quantile(v, k, 1 - a, 7);
}

/* z with P(Z > z) = tail, by bisection on the normal tail. */
static double normal_upper(double tail)
{
    double lo = 0, hi = 40;
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (stats_normal_sf(mid) > tail)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

double compare_widening(size_t nb, size_t na, double confidence)
{
    size_t r = nb < na ? nb : na;
    if (r < 2)
        return NAN;
    double a = (1 - confidence) / 2;
    return sqrt((double)r / (double)(r - 1)) * stats_t_quantile(1 - a, (double)(nb + na - 2)) / normal_upper(a);
}

/* The interval widened around the point estimate by factor k (see compare_widening). */
static void widen(double est, double k, double *lo, double *hi)
{
    if (!isfinite(*lo) || !isfinite(*hi) || !isfinite(est))
        return;
    *lo = est - k * fmax(0, est - *lo);
    *hi = est + k * fmax(0, *hi - est);
}

static enum compare_verdict metric_verdict(const struct compare_metric_result *mr, bool higher_better, bool few_reps,
                                           bool few_samples)
{
    if (few_reps)
        return CMP_V_FEW_REPS;
    if (few_samples || !isfinite(mr->ci_lo) || !isfinite(mr->ci_hi))
        return CMP_V_FEW_SAMPLES;
    if (mr->ci_lo <= 0 && mr->ci_hi >= 0)
        return CMP_V_NO_DIFFERENCE;
    double within = fmax(mr->spread_before, mr->spread_after);
    if (fabs(mr->diff) <= within)
        return CMP_V_SPREAD;
    bool worse = higher_better ? mr->ci_hi < 0 : mr->ci_lo > 0;
    return worse ? CMP_V_SLOWER : CMP_V_FASTER;
}

/* "p50, mean" from a set of metrics. */
static void list_names(const bool *set, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int m = 0; m < CMP_NMETRICS && off < len; m++)
        if (set[m])
            off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
                                    m == CMP_UNDER ? "share under" : compare_metric_names[m]);
}

/* The target's overall verdict from its metrics (docs/INTERNALS.md, "knee compare"). */
static void overall(struct compare_target_result *tr)
{
    bool better[CMP_NMETRICS] = {0}, worse[CMP_NMETRICS] = {0};
    bool any_better = false, any_worse = false, few_reps = false, spread = false, decided = false;
    for (int m = 0; m < CMP_NMETRICS; m++) {
        const struct compare_metric_result *mr = &tr->m[m];
        if (!mr->used)
            continue;
        few_reps |= mr->verdict == CMP_V_FEW_REPS;
        spread |= mr->verdict == CMP_V_SPREAD;
        better[m] = mr->verdict == CMP_V_FASTER;
        worse[m] = mr->verdict == CMP_V_SLOWER;
        any_better |= better[m];
        any_worse |= worse[m];
        decided |= mr->verdict != CMP_V_FEW_SAMPLES;
    }
    if (few_reps) {
        tr->verdict = CMP_V_FEW_REPS;
    } else if (any_better && any_worse) {
        tr->verdict = CMP_V_MIXED;
        /* the articles' shape first: the median one way, the tail (p99, p99.9) the other */
        bool tail_w = worse[CMP_P99] || worse[CMP_P999], tail_b = better[CMP_P99] || better[CMP_P999];
        if (better[CMP_P50] && tail_w) {
            snprintf(tr->verdict_text, sizeof tr->verdict_text, "median better, tail worse");
        } else if (worse[CMP_P50] && tail_b) {
            snprintf(tr->verdict_text, sizeof tr->verdict_text, "median worse, tail better");
        } else {
            char b[64], w[64];
            list_names(better, b, sizeof b);
            list_names(worse, w, sizeof w);
            snprintf(tr->verdict_text, sizeof tr->verdict_text, "%s better, %s worse", b, w);
        }
        return;
    } else if (any_worse) {
        tr->verdict = CMP_V_SLOWER;
    } else if (any_better) {
        tr->verdict = CMP_V_FASTER;
    } else if (spread) {
        tr->verdict = CMP_V_SPREAD;
    } else if (!decided) {
        tr->verdict = CMP_V_FEW_SAMPLES;
    } else {
        tr->verdict = CMP_V_NO_DIFFERENCE;
    }
    snprintf(tr->verdict_text, sizeof tr->verdict_text, "%s", compare_verdict_name(tr->verdict));
}

/* The first bound of the overlay's doubling buckets: a power of two in ms at or below the
 * smaller p0.1 of the two sides, at most 1 ms. */
static double first_bound(const struct compare_dist *b, const struct compare_dist *a)
{
    double lo = fmin(compare_dist_percentile(b, 0.1), compare_dist_percentile(a, 0.1));
    double f = 1;
    while (isfinite(lo) && f > 1e-3 && f > lo)
        f /= 2;
    return f;
}

static void compute_target(struct compare_target_result *tr, const struct compare_dist *const *db, size_t nb,
                           const struct compare_dist *const *da, size_t na, const struct compare_opts *o, uint64_t seed)
{
    struct compare_dist pb, pa;
    compare_dist_merge(&pb, db, nb);
    compare_dist_merge(&pa, da, na);
    tr->n_before = pb.n;
    tr->n_after = pa.n;
    bool few_reps = nb < COMPARE_MIN_REPS || na < COMPARE_MIN_REPS;
    bool want[CMP_NMETRICS];
    double *diff[CMP_NMETRICS] = {0}, *rel[CMP_NMETRICS] = {0};
    for (int m = 0; m < CMP_NMETRICS; m++) {
        struct compare_metric_result *mr = &tr->m[m];
        want[m] = mr->used = m != CMP_UNDER || o->under_ms > 0;
        mr->ci_lo = mr->ci_hi = mr->ci_lo_rel = mr->ci_hi_rel = NAN;
        if (!mr->used)
            continue;
        mr->before = metric_of(&pb, m, o->under_ms);
        mr->after = metric_of(&pa, m, o->under_ms);
        mr->diff = mr->after - mr->before;
        mr->rel = mr->before != 0 ? mr->after / mr->before - 1 : NAN;
        mr->reps_before = xmalloc(nb * sizeof(double));
        mr->reps_after = xmalloc(na * sizeof(double));
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < nb; i++) {
            mr->reps_before[i] = metric_of(db[i], m, o->under_ms);
            lo = fmin(lo, mr->reps_before[i]);
            hi = fmax(hi, mr->reps_before[i]);
        }
        mr->spread_before = hi - lo;
        lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < na; i++) {
            mr->reps_after[i] = metric_of(da[i], m, o->under_ms);
            lo = fmin(lo, mr->reps_after[i]);
            hi = fmax(hi, mr->reps_after[i]);
        }
        mr->spread_after = hi - lo;
        if (m <= CMP_P999) {
            mr->beyond_before = count_above(&pb, mr->before);
            mr->beyond_after = count_above(&pa, mr->after);
        }
        if (!few_reps) {
            diff[m] = xmalloc(o->resamples * sizeof(double));
            rel[m] = xmalloc(o->resamples * sizeof(double));
        } else {
            want[m] = false;
        }
    }
    if (!few_reps && pb.n && pa.n) {
        struct compare_boot b = {.resamples = o->resamples, .seed = seed, .under_ms = o->under_ms};
        compare_bootstrap(&b, db, nb, da, na, want, diff, rel);
        double k = compare_widening(nb, na, o->confidence);
        for (int m = 0; m < CMP_NMETRICS; m++)
            if (want[m]) {
                struct compare_metric_result *mr = &tr->m[m];
                interval(diff[m], o->resamples, o->confidence, &mr->ci_lo, &mr->ci_hi);
                interval(rel[m], o->resamples, o->confidence, &mr->ci_lo_rel, &mr->ci_hi_rel);
                if (!o->no_widening) {
                    widen(mr->diff, k, &mr->ci_lo, &mr->ci_hi);
                    widen(mr->rel, k, &mr->ci_lo_rel, &mr->ci_hi_rel);
                }
                /* a latency cannot fall below 0, nor a share leave [0, 1]: neither can the interval */
                double floor_ = -mr->before, ceil_ = m == CMP_UNDER ? 1 - mr->before : INFINITY;
                if (isfinite(mr->ci_lo) && isfinite(mr->ci_hi)) {
                    mr->ci_lo = fmax(mr->ci_lo, floor_);
                    mr->ci_hi = fmin(mr->ci_hi, ceil_);
                }
                if (isfinite(mr->ci_lo_rel))
                    mr->ci_lo_rel = fmax(mr->ci_lo_rel, -1);
            }
    }
    for (int m = 0; m < CMP_NMETRICS; m++) {
        struct compare_metric_result *mr = &tr->m[m];
        free(diff[m]);
        free(rel[m]);
        if (!mr->used)
            continue;
        bool few = pb.n == 0 || pa.n == 0;
        if (m <= CMP_P999)
            few |= mr->beyond_before < COMPARE_MIN_BEYOND || mr->beyond_after < COMPARE_MIN_BEYOND;
        mr->verdict = metric_verdict(mr, m == CMP_UNDER, few_reps, few);
    }
    overall(tr);
    double f = first_bound(&pb, &pa);
    dbl_init(&tr->hist_before, f);
    dbl_init(&tr->hist_after, f);
    for (size_t i = 0; i < pb.m; i++)
        dbl_add(&tr->hist_before, pb.x[i], pb.c[i]);
    for (size_t i = 0; i < pa.m; i++)
        dbl_add(&tr->hist_after, pa.x[i], pa.c[i]);
    compare_dist_release(&pb);
    compare_dist_release(&pa);
}

/* ---- sides and models ------------------------------------------------------------------------ */

/* map[t] = the index in rep of target `name` */
static bool find_name(const struct compare_rep *rep, const char *name, size_t *at)
{
    for (size_t i = 0; i < rep->ntargets; i++)
        if (strcmp(rep->names[i], name) == 0) {
            *at = i;
            return true;
        }
    return false;
}

/* Every repetition of a side has the targets of its first. */
static int check_side(const struct compare_side *s, char *err, size_t errlen)
{
    if (s->nreps == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: no repetitions", s->name);
    const struct compare_rep *r0 = &s->reps[0];
    for (size_t i = 1; i < s->nreps; i++) {
        const struct compare_rep *r = &s->reps[i];
        size_t at;
        bool ok = r->ntargets == r0->ntargets;
        for (size_t t = 0; ok && t < r0->ntargets; t++)
            ok = find_name(r, r0->names[t], &at);
        if (!ok)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s: %s has other targets than %s (%zu vs %zu: %s ...)", s->name,
                             r->label, r0->label, r->ntargets, r0->ntargets, r0->names[0]);
    }
    return 0;
}

static void add_diff(struct compare_result *r, const char *what)
{
    if (r->ndiffs < sizeof r->diffs / sizeof r->diffs[0]) {
        size_t n = strlen(what), cap = sizeof r->diffs[0] - 1;
        memcpy(r->diffs[r->ndiffs], what, n < cap ? n : cap);
        r->diffs[r->ndiffs][n < cap ? n : cap] = '\0';
    }
    r->ndiffs++;
}

static void check_models(const struct compare_side *before, const struct compare_side *after, struct compare_result *r)
{
    char d[16][200];
    const struct compare_side *sides[2] = {before, after};
    for (int s = 0; s < 2; s++)
        for (size_t i = 1; i < sides[s]->nreps; i++) {
            size_t n = compare_model_diff(&sides[s]->reps[0].model, &sides[s]->reps[i].model, d, 16);
            for (size_t k = 0; k < n && k < 16; k++) {
                char what[400];
                if (snprintf(what, sizeof what, "%s: %s vs %s: %s", sides[s]->name, sides[s]->reps[0].label,
                             sides[s]->reps[i].label, d[k]) < 0)
                    continue;
                add_diff(r, what);
            }
        }
    size_t n = compare_model_diff(&before->reps[0].model, &after->reps[0].model, d, 16);
    for (size_t k = 0; k < n && k < 16; k++)
        add_diff(r, d[k]);
}

void compare_result_release(struct compare_result *r)
{
    if (r->targets)
        for (size_t t = 0; t <= r->ntargets; t++)
            for (int m = 0; m < CMP_NMETRICS; m++) {
                free(r->targets[t].m[m].reps_before);
                free(r->targets[t].m[m].reps_after);
            }
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < CMP_NMETRICS && r->has_stream[k]; m++) {
            free(r->stream[k].m[m].reps_before);
            free(r->stream[k].m[m].reps_after);
        }
    free(r->targets);
    compare_strv_free(r->warnings, r->nwarnings);
    memset(r, 0, sizeof *r);
}

/* The repetitions' own problems, one line per problem with the repetitions that have it:
 * "GENERATOR-LIMITED: ... (3 of 6 repetitions: before rep-2, rep-3; after rep-1)". */
static void warn_reps(struct compare_result *r, const struct compare_side *const sides[2])
{
    size_t total = sides[0]->nreps + sides[1]->nreps;
    for (int s0 = 0; s0 < 2; s0++)
        for (size_t i0 = 0; i0 < sides[s0]->nreps; i0++)
            for (size_t w0 = 0; w0 < sides[s0]->reps[i0].nwarnings; w0++) {
                const char *text = sides[s0]->reps[i0].warnings[w0];
                bool seen = false; /* listed already, with an earlier repetition */
                for (int s = 0; s <= s0 && !seen; s++)
                    for (size_t i = 0; i < (s == s0 ? i0 : sides[s]->nreps) && !seen; i++)
                        for (size_t w = 0; w < sides[s]->reps[i].nwarnings && !seen; w++)
                            seen = strcmp(sides[s]->reps[i].warnings[w], text) == 0;
                if (seen)
                    continue;
                char who[1024];
                size_t off = 0, count = 0;
                for (int s = 0; s < 2; s++) {
                    bool first = true;
                    for (size_t i = 0; i < sides[s]->nreps && off < sizeof who; i++)
                        for (size_t w = 0; w < sides[s]->reps[i].nwarnings; w++)
                            if (strcmp(sides[s]->reps[i].warnings[w], text) == 0) {
                                const char *label = sides[s]->reps[i].label;
                                if (first)
                                    off += (size_t)snprintf(who + off, sizeof who - off, "%s%s %s", off ? "; " : "",
                                                            sides[s]->name, label);
                                else
                                    off += (size_t)snprintf(who + off, sizeof who - off, ", %s", label);
                                first = false;
                                count++;
                                break;
                            }
                }
                compare_strv_add(&r->warnings, &r->nwarnings, "%s (%zu of %zu repetitions: %s)", text, count, total,
                                 who);
            }
}

static void warn_sides(struct compare_result *r, const struct compare_side *before, const struct compare_side *after)
{
    const struct compare_side *sides[2] = {before, after};
    warn_reps(r, sides);
    for (int s = 0; s < 2; s++) {
        uint64_t req = 0, not_ok = 0;
        bool known = true, approx = false;
        for (size_t i = 0; i < sides[s]->nreps; i++) {
            const struct compare_rep *rep = &sides[s]->reps[i];
            req += rep->requests;
            not_ok += rep->not_ok;
            known &= rep->outcomes_known;
            for (size_t t = 0; t < rep->ntargets; t++)
                approx |= rep->dist[t].approx;
        }
        if (approx)
            compare_strv_add(&r->warnings, &r->nwarnings,
                             "%s: read from hlog histograms: values are HdrHistogram bucket values (3 significant "
                             "digits), outcomes unknown",
                             sides[s]->name);
        if (known && not_ok)
            compare_strv_add(&r->warnings, &r->nwarnings,
                             "%s: %llu of %llu measured requests (%.2f%%) did not end ok; their latencies are in "
                             "these numbers",
                             sides[s]->name, (unsigned long long)not_ok, (unsigned long long)req,
                             100.0 * (double)not_ok / (double)req);
    }
    if (r->nreps_before < COMPARE_MIN_REPS || r->nreps_after < COMPARE_MIN_REPS)
        compare_strv_add(&r->warnings, &r->nwarnings,
                         "%zu repetition%s before and %zu after: one run of each says nothing about the spread "
                         "between runs, so there is no interval and no verdict (knee run --repeat 3)",
                         r->nreps_before, r->nreps_before == 1 ? "" : "s", r->nreps_after);
    /* the servers under test may live at different addresses: say so */
    const struct compare_model *mb = &before->reps[0].model, *ma = &after->reps[0].model;
    if (mb->known && ma->known && mb->ntargets == ma->ntargets)
        for (size_t t = 0; t < mb->ntargets; t++)
            if (strcmp(mb->targets[t].authority, ma->targets[t].authority) != 0)
                compare_strv_add(&r->warnings, &r->nwarnings,
                                 "target %s: before %s, after %s (compared as the same "
                                 "target: the same request to another server)",
                                 mb->targets[t].name, mb->targets[t].authority, ma->targets[t].authority);
}

static void eval_fail_if(struct compare_result *r)
{
    const struct compare_target_result *all = r->all;
    bool evaluable = r->nreps_before >= COMPARE_MIN_REPS && r->nreps_after >= COMPARE_MIN_REPS;
    for (size_t i = 0; i < r->opts.nfail_if; i++) {
        struct compare_fail_if *f = &r->opts.fail_if[i];
        f->evaluated = evaluable;
        f->failed = false;
        if (!evaluable) {
            r->fail_unevaluated = true;
            continue;
        }
        if (f->any_slower) {
            for (int m = 0; m < CMP_NMETRICS; m++)
                f->failed |= all->m[m].used && all->m[m].verdict == CMP_V_SLOWER;
        } else {
            const struct compare_metric_result *mr = &all->m[f->metric];
            double lo = f->relative ? mr->ci_lo_rel : mr->ci_lo;
            f->failed = mr->verdict == CMP_V_SLOWER && lo > f->limit;
        }
        r->fail |= f->failed;
    }
}

/* The stream rows: all targets' first events and gaps, when every repetition has them. */
static void compute_streams(struct compare_result *r, const struct compare_side *before,
                            const struct compare_side *after, const struct compare_opts *o)
{
    static const char *const names[2] = {"first event", "event gap"};
    const struct compare_dist **db = xmalloc(before->nreps * sizeof *db);
    const struct compare_dist **da = xmalloc(after->nreps * sizeof *da);
    for (int k = 0; k < 2; k++) {
        bool all = true;
        for (size_t i = 0; i < before->nreps; i++)
            all &= (db[i] = &before->reps[i].stream[k])->n > 0;
        for (size_t i = 0; i < after->nreps; i++)
            all &= (da[i] = &after->reps[i].stream[k])->n > 0;
        if (!all)
            continue;
        r->has_stream[k] = true;
        snprintf(r->stream[k].name, sizeof r->stream[k].name, "%s", names[k]);
        compute_target(&r->stream[k], db, before->nreps, da, after->nreps, o,
                       o->seed + 0x5851f42d4c957f2dULL * (k + 1));
    }
    free(db);
    free(da);
}

int compare_run(const struct compare_side *before, const struct compare_side *after, const struct compare_opts *o,
                struct compare_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    int rc;
    if ((rc = check_side(before, err, errlen)) || (rc = check_side(after, err, errlen)))
        return rc;
    if (o->resamples < 100 || !(o->confidence > 0 && o->confidence < 1))
        return knee_fail(err, errlen, KNEE_EINVAL, "resamples must be >= 100 and the confidence in (0, 1)");
    r->opts = *o;
    r->nreps_before = before->nreps;
    r->nreps_after = after->nreps;
    check_models(before, after, r);
    if (r->ndiffs && !o->force) {
        size_t off =
            (size_t)snprintf(err, errlen, "the two sides were not run with the same load model: %s", r->diffs[0]);
        for (size_t k = 1; k < r->ndiffs && k < 16 && off < errlen; k++)
            off += (size_t)snprintf(err + off, errlen - off, "; %s", r->diffs[k]);
        if (off < errlen)
            snprintf(err + off, errlen - off, " (--force compares them anyway)");
        return KNEE_EMISMATCH;
    }
    r->forced = r->ndiffs > 0;
    compare_model_describe(&before->reps[0].model, r->model_text, sizeof r->model_text);

    /* the targets, matched by name when both sides have the same names, else by position */
    const struct compare_rep *b0 = &before->reps[0], *a0 = &after->reps[0];
    size_t nt = b0->ntargets == a0->ntargets ? b0->ntargets : 0;
    size_t amap[COMPARE_MAX_TARGETS];
    bool by_name = nt > 0;
    for (size_t t = 0; t < nt && by_name; t++)
        by_name = find_name(a0, b0->names[t], &amap[t]);
    for (size_t t = 0; t < nt && !by_name; t++)
        amap[t] = t;
    if (b0->ntargets != a0->ntargets)
        compare_strv_add(&r->warnings, &r->nwarnings,
                         "the sides have %zu and %zu targets: only all of them together are compared", b0->ntargets,
                         a0->ntargets);
    r->ntargets = nt;
    r->targets = xcalloc(nt + 1, sizeof *r->targets);
    r->all = &r->targets[nt];
    const struct compare_dist **db = xmalloc(before->nreps * sizeof *db);
    const struct compare_dist **da = xmalloc(after->nreps * sizeof *da);
    /* one target is all of them: computed once below, copied here */
    for (size_t t = 0; t < nt && nt > 1; t++) {
        struct compare_target_result *tr = &r->targets[t];
        const char *an = a0->names[amap[t]];
        if (strcmp(b0->names[t], an) == 0)
            snprintf(tr->name, sizeof tr->name, "%s", b0->names[t]);
        else
            snprintf(tr->name, sizeof tr->name, "%s -> %s", b0->names[t], an);
        for (size_t i = 0; i < before->nreps; i++) {
            size_t at = t;
            find_name(&before->reps[i], b0->names[t], &at);
            db[i] = &before->reps[i].dist[at];
        }
        for (size_t i = 0; i < after->nreps; i++) {
            size_t at = amap[t];
            find_name(&after->reps[i], an, &at);
            da[i] = &after->reps[i].dist[at];
        }
        compute_target(tr, db, before->nreps, da, after->nreps, o, o->seed + 0x9e3779b97f4a7c15ULL * (t + 1));
    }
    /* all: each repetition's targets merged */
    struct compare_dist *mb = xcalloc(before->nreps, sizeof *mb), *ma = xcalloc(after->nreps, sizeof *ma);
    for (size_t i = 0; i < before->nreps; i++) {
        const struct compare_dist *parts[COMPARE_MAX_TARGETS];
        for (size_t t = 0; t < before->reps[i].ntargets; t++)
            parts[t] = &before->reps[i].dist[t];
        compare_dist_merge(&mb[i], parts, before->reps[i].ntargets);
        db[i] = &mb[i];
    }
    for (size_t i = 0; i < after->nreps; i++) {
        const struct compare_dist *parts[COMPARE_MAX_TARGETS];
        for (size_t t = 0; t < after->reps[i].ntargets; t++)
            parts[t] = &after->reps[i].dist[t];
        compare_dist_merge(&ma[i], parts, after->reps[i].ntargets);
        da[i] = &ma[i];
    }
    snprintf(r->all->name, sizeof r->all->name, "all");
    compute_target(r->all, db, before->nreps, da, after->nreps, o, o->seed);
    if (nt == 1) {
        struct compare_target_result *t0 = &r->targets[0];
        *t0 = *r->all;
        for (int m = 0; m < CMP_NMETRICS; m++)
            if (t0->m[m].used) {
                t0->m[m].reps_before = xmalloc(before->nreps * sizeof(double));
                t0->m[m].reps_after = xmalloc(after->nreps * sizeof(double));
                memcpy(t0->m[m].reps_before, r->all->m[m].reps_before, before->nreps * sizeof(double));
                memcpy(t0->m[m].reps_after, r->all->m[m].reps_after, after->nreps * sizeof(double));
            }
        const char *an = a0->names[amap[0]];
        if (strcmp(b0->names[0], an) == 0)
            snprintf(t0->name, sizeof t0->name, "%s", b0->names[0]);
        else
            snprintf(t0->name, sizeof t0->name, "%s -> %s", b0->names[0], an);
    }
    for (size_t i = 0; i < before->nreps; i++)
        compare_dist_release(&mb[i]);
    for (size_t i = 0; i < after->nreps; i++)
        compare_dist_release(&ma[i]);
    free(mb);
    free(ma);
    free(db);
    free(da);
    if (r->all->n_before == 0 || r->all->n_after == 0) {
        const char *side = r->all->n_before == 0 ? "before" : "after";
        compare_result_release(r);
        return knee_fail(err, errlen, KNEE_EINVAL, "the %s side has no request with a latency", side);
    }
    compute_streams(r, before, after, o);
    warn_sides(r, before, after);
    eval_fail_if(r);
    return 0;
}
