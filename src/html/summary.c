/* The summary block of the report: `knee run`'s terminal summary, word for word, rebuilt from
 * the numbers of its --json document (which round-trip every double exactly, so every printed
 * digit is the terminal's); or, without a JSON, the parts a per-request log or an hlog can
 * back (accounting identities and latency tables), said to be so. The layout follows
 * runreport/text.c line for line; tests/e2e/report_browser.sh compares the two byte for byte,
 * so a change there that is not made here fails a test. */
#include "html/internal.h"

#include "core/err.h"
#include "core/units.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- number formats (runreport/text.c's) ----------------------------------------------------- */

static char *fmt_count(char *buf, size_t len, uint64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < len; i++) {
        buf[o++] = tmp[i];
        int left = n - 1 - i;
        if (left > 0 && left % 3 == 0)
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

static char *fmt_rate(char *buf, size_t len, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "-");
        return buf;
    }
    uint64_t tenths = (uint64_t)llround(v * 10);
    char whole[28];
    fmt_count(whole, sizeof whole, tenths / 10);
    snprintf(buf, len, "%.27s.%u", whole, (unsigned)(tenths % 10));
    return buf;
}

static char *fmt_ms(char *buf, size_t len, double ms)
{
    if (!isfinite(ms))
        snprintf(buf, len, "-");
    else if (ms >= 100000)
        snprintf(buf, len, "%.0f", ms);
    else
        snprintf(buf, len, "%.3f", ms);
    return buf;
}

/* One row of a latency table (ms). */
struct srow {
    uint64_t count;
    double mean, stdev, p50, p90, p95, p99, p999, max;
};

static void table_header(FILE *out)
{
    fprintf(out, "  %-12s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n", "", "count", "mean", "stdev", "p50", "p90", "p95",
            "p99", "p99.9", "max");
}

static void table_row(FILE *out, const char *label, const struct srow *s)
{
    char c[32], v[9][24];
    fprintf(out, "  %-12s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n", label, fmt_count(c, sizeof c, s->count),
            fmt_ms(v[0], 24, s->mean), fmt_ms(v[1], 24, s->stdev), fmt_ms(v[2], 24, s->p50), fmt_ms(v[3], 24, s->p90),
            fmt_ms(v[4], 24, s->p95), fmt_ms(v[5], 24, s->p99), fmt_ms(v[6], 24, s->p999), fmt_ms(v[7], 24, s->max));
}

static const char *const group_names[HTML_GROUPS] = {"ok", "rejected", "http_error", "invalid", "transport", "timeout"};

/* Accounting identities over counts indexed by outcome. */
static void accounting(FILE *out, uint64_t planned, uint64_t sent, uint64_t dropped, const uint64_t *outcome,
                       const char *indent)
{
    char a[32], b[32], d[32];
    fprintf(out, "%splanned %s = sent %s + dropped %s  [%s]\n", indent, fmt_count(a, sizeof a, planned),
            fmt_count(b, sizeof b, sent), fmt_count(d, sizeof d, dropped),
            planned == sent + dropped ? "holds" : "BROKEN");
    uint64_t sum = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            sum += outcome[o];
    fprintf(out, "%ssent %s =", indent, fmt_count(a, sizeof a, sent));
    bool first = true;
    for (int o = 0; o < OUTCOME_COUNT; o++) {
        if (o == OUTCOME_DROPPED)
            continue;
        fprintf(out, "%s %s %s", first ? "" : " +", reqlog_outcome_name((enum reqlog_outcome)o),
                fmt_count(b, sizeof b, outcome[o]));
        first = false;
    }
    fprintf(out, "  [%s]\n", sum == sent ? "holds" : "BROKEN");
}

/* ---- from the run JSON --------------------------------------------------------------------------- */

static double num(const json_t *o, const char *key)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static uint64_t u64(const json_t *o, const char *key)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    if (json_is_integer(v))
        return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
    if (json_is_real(v)) {
        double d = json_real_value(v);
        return d > 0 ? (d < 1.8e19 ? (uint64_t)d : UINT64_MAX) : 0;
    }
    return 0;
}

static const char *str(const json_t *o, const char *key)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : "";
}

static bool boolean(const json_t *o, const char *key)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_true(v);
}

static void jrow(const json_t *s, struct srow *r)
{
    r->count = u64(s, "count");
    r->mean = num(s, "mean");
    r->stdev = num(s, "stdev");
    r->p50 = num(s, "p50");
    r->p90 = num(s, "p90");
    r->p95 = num(s, "p95");
    r->p99 = num(s, "p99");
    r->p999 = num(s, "p99.9");
    r->max = num(s, "max");
}

static void jtable_row(FILE *out, const char *label, const json_t *s)
{
    struct srow r;
    jrow(s, &r);
    table_row(out, label, &r);
}

static void jaccounting(FILE *out, const json_t *acc, const char *indent)
{
    const json_t *oc = json_object_get(acc, "outcomes");
    uint64_t o[OUTCOME_COUNT];
    for (int i = 0; i < OUTCOME_COUNT; i++)
        o[i] = u64(oc, reqlog_outcome_name((enum reqlog_outcome)i));
    accounting(out, u64(acc, "planned"), u64(acc, "sent"), u64(acc, "dropped"), o, indent);
}

static void jlatency_tables(FILE *out, bool open_loop, const json_t *t)
{
    if (open_loop)
        fprintf(out, "\nlatency (ms): planned send -> full response (T5 - T0), by outcome\n");
    else
        fprintf(out, "\nlatency (ms): send -> full response (T5 - T1), by outcome; closed loop\n");
    table_header(out);
    jtable_row(out, "all", json_object_get(t, "latency"));
    const json_t *by = json_object_get(t, "latency_by_outcome");
    for (int g = 0; g < HTML_GROUPS; g++) {
        const json_t *s = json_object_get(by, group_names[g]);
        if (s && u64(s, "count"))
            jtable_row(out, group_names[g], s);
    }
    if (open_loop) {
        fprintf(out, "service (ms): send -> full response (T5 - T1)\n");
        jtable_row(out, "all", json_object_get(t, "service"));
    }
    fprintf(out, "ttfb (ms): send -> first response byte\n");
    jtable_row(out, "all", json_object_get(t, "ttfb"));
    if (open_loop) {
        fprintf(out, "lag (ms): planned send -> actual send (T1 - T0), the generator's own delay\n");
        jtable_row(out, "all", json_object_get(t, "lag"));
    }
    const json_t *conn = json_object_get(t, "connect");
    if (u64(conn, "count")) {
        fprintf(out, "connect (ms): connect start -> established, per new connection\n");
        jtable_row(out, "all", conn);
    }
}

static void jplan_line(FILE *out, const json_t *cfg, const json_t *targets, bool open_loop)
{
    char a[32], b[32];
    fprintf(out, "knee run: ");
    bool poisson = strcmp(str(cfg, "arrivals"), "poisson") == 0;
    if (open_loop) {
        fprintf(out, "open loop, %s arrivals", poisson ? "Poisson" : "constant");
        const json_t *ramp = json_object_get(cfg, "ramp");
        double rate = num(cfg, "rate");
        if (ramp)
            fprintf(out, ", ramp %s -> %s /s", fmt_rate(a, sizeof a, num(ramp, "from")),
                    fmt_rate(b, sizeof b, num(ramp, "to")));
        else if (rate > 0)
            fprintf(out, ", %s/s", fmt_rate(a, sizeof a, rate));
        if (poisson)
            fprintf(out, " (seed %llu)", (unsigned long long)u64(cfg, "seed"));
        fprintf(out, ", pool up to %s connections (%s when busy)", fmt_count(a, sizeof a, u64(cfg, "pool_cap")),
                strcmp(str(cfg, "when_busy"), "drop") == 0 ? "drop" : "queue");
    } else {
        uint64_t conns = 0;
        size_t i;
        const json_t *t;
        json_array_foreach(targets, i, t) conns += u64(t, "clients");
        fprintf(out, "closed loop, %u connection%s", (unsigned)conns, conns == 1 ? "" : "s");
        double think_s = num(cfg, "think_s");
        uint64_t think_ns = think_s > 0 ? (uint64_t)llround(think_s * 1e9) : 0;
        if (think_ns)
            fprintf(out, ", think %s ms", fmt_ms(a, sizeof a, (double)think_ns / 1e6));
    }
    double dur = num(cfg, "duration_s");
    if (dur > 0)
        fprintf(out, ", %.3g s", dur);
    if (u64(cfg, "requests"))
        fprintf(out, ", %s requests", fmt_count(a, sizeof a, u64(cfg, "requests")));
    unsigned threads = (unsigned)u64(cfg, "threads");
    fprintf(out, ", %u thread%s%s\n", threads, threads == 1 ? "" : "s",
            boolean(cfg, "keepalive") ? "" : ", no keep-alive");
    size_t i;
    const json_t *t;
    json_array_foreach(targets, i, t)
    {
        char rt[32];
        double rms = num(t, "resolve_ms");
        uint64_t rns = rms > 0 ? (uint64_t)llround(rms * 1e6) : 0;
        fprintf(out, "  %-10s %s -> %s (resolved in %s)", str(t, "name"), str(t, "url"), str(t, "address"),
                units_fmt_duration(rns, rt, sizeof rt));
        if (open_loop)
            fprintf(out, ", %s/s", fmt_rate(a, sizeof a, num(t, "planned_rate")));
        else {
            unsigned c = (unsigned)u64(t, "clients");
            fprintf(out, ", %u connection%s", c, c == 1 ? "" : "s");
        }
        fputc('\n', out);
    }
}

static void jthresholds(FILE *out, const json_t *thr)
{
    if (!json_array_size(thr))
        return;
    fprintf(out, "\nthresholds\n");
    size_t i;
    const json_t *t;
    json_array_foreach(thr, i, t)
    {
        const char *unit = str(t, "unit");
        double m = num(t, "measured");
        char mv[40];
        if (!isfinite(m))
            snprintf(mv, sizeof mv, "no samples");
        else if (strcmp(unit, "fraction") == 0)
            snprintf(mv, sizeof mv, "%.4g%%", 100 * m);
        else
            snprintf(mv, sizeof mv, "%.6g%s%s", m, *unit && strcmp(unit, "/s") ? " " : "", unit);
        fprintf(out, "  %-4s %-28s measured %s\n", boolean(t, "pass") ? "pass" : "FAIL", str(t, "expr"), mv);
    }
}

static void jsummary(FILE *out, const json_t *root)
{
    char a[32], b[32], c[32], d[32];
    const json_t *cfg = json_object_get(root, "config");
    const json_t *targets = json_object_get(root, "targets");
    const json_t *all = json_object_get(root, "all");
    bool open_loop = strcmp(str(cfg, "mode"), "closed") != 0;
    bool warm = num(cfg, "warmup_s") > 0;
    jplan_line(out, cfg, targets, open_loop);

    fprintf(out, "\nrequests%s\n", warm ? " (planned after the warm-up)" : "");
    jaccounting(out, json_object_get(all, "accounting"), "  ");
    if (warm) {
        fprintf(out, "  warm-up (not in the statistics below):\n");
        jaccounting(out, json_object_get(all, "warmup"), "    ");
    }
    const json_t *rates = json_object_get(root, "rates");
    fprintf(out, "  rates per second over the %.3f s window: planned %s  sent %s  completed %s  goodput %s\n",
            num(root, "window_s"), fmt_rate(a, sizeof a, num(rates, "planned")),
            fmt_rate(b, sizeof b, num(rates, "sent")), fmt_rate(c, sizeof c, num(rates, "completed")),
            fmt_rate(d, sizeof d, num(rates, "goodput")));
    double ratio = num(root, json_object_get(root, "sent_on_schedule") ? "sent_on_schedule" : "send_ratio");
    if (open_loop && isfinite(ratio))
        fprintf(out, "  sent on schedule: %.2f%% of planned requests left by the end of the plan\n", 100 * ratio);

    jlatency_tables(out, open_loop, all);

    size_t nt = json_array_size(targets);
    double window_s = num(root, "window_s");
    double win = window_s > 0 ? window_s : NAN;
    size_t i;
    const json_t *t;
    if (nt > 1) {
        json_array_foreach(targets, i, t)
        {
            fprintf(out, "\n--- target %s (%s)\n", str(t, "name"), str(t, "url"));
            const json_t *acc = json_object_get(t, "accounting");
            jaccounting(out, acc, "  ");
            fprintf(out, "  rates per second: planned %s  sent %s  goodput %s\n",
                    fmt_rate(a, sizeof a, (double)u64(acc, "planned") / win),
                    fmt_rate(b, sizeof b, (double)u64(acc, "sent") / win),
                    fmt_rate(c, sizeof c, (double)u64(json_object_get(acc, "outcomes"), "ok") / win));
            jlatency_tables(out, open_loop, t);
        }
    }

    bool any_st = false;
    json_array_foreach(targets, i, t) any_st |= json_object_size(json_object_get(t, "server_timing")) > 0;
    if (any_st) {
        fprintf(out, "\nserver timing (ms, from Server-Timing response headers; server-side time)\n");
        fprintf(out, "  %-10s %-12s %10s %9s %9s %9s %9s %9s\n", "target", "name", "count", "mean", "p50", "p90", "p99",
                "max");
        json_array_foreach(targets, i, t)
        {
            const char *key;
            const json_t *s;
            json_object_foreach((json_t *)json_object_get(t, "server_timing"), key, s)
            {
                char v[6][24];
                fprintf(out, "  %-10s %-12s %10s %9s %9s %9s %9s %9s\n", str(t, "name"), key,
                        fmt_count(v[0], 24, u64(s, "count")), fmt_ms(v[1], 24, num(s, "mean")),
                        fmt_ms(v[2], 24, num(s, "p50")), fmt_ms(v[3], 24, num(s, "p90")),
                        fmt_ms(v[4], 24, num(s, "p99")), fmt_ms(v[5], 24, num(s, "max")));
            }
        }
    }

    const json_t *conn = json_object_get(all, "connections");
    fprintf(out, "\nconnections: %s opened, %s failed, %s closed by the server",
            fmt_count(a, sizeof a, u64(conn, "opened")), fmt_count(b, sizeof b, u64(conn, "failed")),
            fmt_count(c, sizeof c, u64(conn, "closed_by_server")));
    if (u64(conn, "unsolicited_bytes"))
        fprintf(out, ", %s with unsolicited bytes", fmt_count(d, sizeof d, u64(conn, "unsolicited_bytes")));
    fprintf(out, "; %s bytes received\n", fmt_count(a, sizeof a, u64(all, "bytes_in")));
    fprintf(out, "percentiles: HdrHistogram, 3 significant digits (value at rank ceil(p*n)); elapsed %.3f s\n",
            num(root, "elapsed_s"));
    if (!open_loop)
        fprintf(out, "note: closed loop: each connection waits for its answer before sending again, so a slow "
                     "server slows the load and its stalls are hidden from the latency (coordinated omission); "
                     "--rate R measures from the planned send instead\n");
    const json_t *warnings = json_object_get(root, "warnings");
    if (json_array_size(warnings)) {
        fprintf(out, "\nwarnings\n");
        const json_t *w;
        json_array_foreach(warnings, i, w) fprintf(out, "  ! %s\n", json_is_string(w) ? json_string_value(w) : "");
    }
    jthresholds(out, json_object_get(root, "thresholds"));
}

char *html_summary_from_json(const void *root_v, char *err, size_t errlen)
{
    const json_t *root = root_v;
    static const char *const need[] = {"config", "all", "targets", "rates"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!json_object_get(root, need[i])) {
            knee_fail(err, errlen, KNEE_EFORMAT, "key \"%s\" missing", need[i]);
            return NULL;
        }
    if (!json_is_array(json_object_get(root, "targets")) || !json_is_object(json_object_get(root, "all"))) {
        knee_fail(err, errlen, KNEE_EFORMAT, "\"targets\" must be an array and \"all\" an object");
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        knee_oom();
    jsummary(out, root);
    fclose(out);
    return buf;
}

/* ---- from the model (no JSON) --------------------------------------------------------------------- */

static void hrow(const struct hdr *h, struct srow *r)
{
    memset(r, 0, sizeof *r);
    r->count = h->counts ? (uint64_t)h->total_count : 0;
    if (!r->count) {
        r->mean = r->stdev = r->p50 = r->p90 = r->p95 = r->p99 = r->p999 = r->max = NAN;
        return;
    }
    r->mean = hdr_mean(h) / 1e6;
    r->stdev = hdr_stdev(h) / 1e6;
    r->max = (double)hdr_max(h) / 1e6;
    r->p50 = (double)hdr_value_at_percentile(h, 50) / 1e6;
    r->p90 = (double)hdr_value_at_percentile(h, 90) / 1e6;
    r->p95 = (double)hdr_value_at_percentile(h, 95) / 1e6;
    r->p99 = (double)hdr_value_at_percentile(h, 99) / 1e6;
    r->p999 = (double)hdr_value_at_percentile(h, 99.9) / 1e6;
}

static void htable_row(FILE *out, const char *label, const struct hdr *h)
{
    struct srow r;
    hrow(h, &r);
    table_row(out, label, &r);
}

/* The targets of a run summed into one (histograms of one layout add exactly). */
static void sum_targets(const struct html_run *run, struct html_target *all)
{
    memset(all, 0, sizeof *all);
    struct hdr *const dst[] = {&all->latency,  &all->group[0], &all->group[1], &all->group[2], &all->group[3],
                               &all->group[4], &all->group[5], &all->service,  &all->ttfb,     &all->lag};
    for (size_t i = 0; i < run->ntargets; i++) {
        const struct html_target *t = &run->targets[i];
        const struct hdr *const src[] = {&t->latency,  &t->group[0], &t->group[1], &t->group[2], &t->group[3],
                                         &t->group[4], &t->group[5], &t->service,  &t->ttfb,     &t->lag};
        for (size_t k = 0; k < sizeof dst / sizeof dst[0]; k++) {
            if (!src[k]->counts)
                continue;
            if (!dst[k]->counts && hdr_init(dst[k], src[k]->lowest, src[k]->highest, src[k]->sig_digits))
                knee_oom();
            hdr_add(dst[k], src[k]);
        }
        all->planned += t->planned;
        all->sent += t->sent;
        all->warm_planned += t->warm_planned;
        all->warm_sent += t->warm_sent;
        for (int o = 0; o < OUTCOME_COUNT; o++) {
            all->outcome[o] += t->outcome[o];
            all->warm_outcome[o] += t->warm_outcome[o];
        }
    }
}

static void release_sum(struct html_target *all)
{
    hdr_release(&all->latency);
    for (int g = 0; g < HTML_GROUPS; g++)
        hdr_release(&all->group[g]);
    hdr_release(&all->service);
    hdr_release(&all->ttfb);
    hdr_release(&all->lag);
}

static void mtables(FILE *out, const struct html_run *run, const struct html_target *t)
{
    bool closed = run->closed_loop == 1;
    if (closed)
        fprintf(out, "\nlatency (ms): send -> full response (T5 - T1), by outcome; closed loop\n");
    else
        fprintf(out, "\nlatency (ms): planned send -> full response (T5 - T0), by outcome\n");
    table_header(out);
    htable_row(out, "all", &t->latency);
    for (int g = 0; g < HTML_GROUPS; g++)
        if (t->group[g].counts && t->group[g].total_count)
            htable_row(out, group_names[g], &t->group[g]);
    if (!closed) {
        fprintf(out, "service (ms): send -> full response (T5 - T1)\n");
        htable_row(out, "all", &t->service);
    }
    fprintf(out, "ttfb (ms): send -> first response byte\n");
    htable_row(out, "all", &t->ttfb);
    if (!closed) {
        fprintf(out, "lag (ms): planned send -> actual send (T1 - T0), the generator's own delay\n");
        htable_row(out, "all", &t->lag);
    }
}

static void mrequests(FILE *out, const struct html_run *run, const struct html_target *all)
{
    bool warm = run->nwarm > 0;
    fprintf(out, "requests%s\n", warm ? " (planned after the warm-up)" : "");
    accounting(out, all->planned, all->sent, all->outcome[OUTCOME_DROPPED], all->outcome, "  ");
    if (warm) {
        fprintf(out, "  warm-up (not in the statistics below):\n");
        accounting(out, all->warm_planned, all->warm_sent, all->warm_outcome[OUTCOME_DROPPED], all->warm_outcome,
                   "    ");
    }
}

/* hlog: one latency table, a row per tag and the tags together. */
static void hlog_summary(FILE *out, const struct html_run *run)
{
    fprintf(out, "latency (ms) per tag, from the hlog's HdrHistograms (interval as the writer recorded it; knee run "
                 "--hlog: T5 - T0 in an open loop)\n");
    table_header(out);
    struct hdr sum;
    memset(&sum, 0, sizeof sum);
    bool ok = true;
    for (size_t i = 0; i < run->ntargets; i++) {
        const struct hdr *h = &run->targets[i].latency;
        if (!h->counts)
            continue;
        char label[13];
        snprintf(label, sizeof label, "%.12s", run->targets[i].name);
        htable_row(out, label, h);
        if (!sum.counts && hdr_init(&sum, h->lowest, h->highest, h->sig_digits))
            knee_oom();
        ok &= hdr_add(&sum, h) == 0;
    }
    if (run->ntargets > 1 && ok)
        htable_row(out, "all", &sum);
    hdr_release(&sum);
    fprintf(out, "percentiles: HdrHistogram (value at rank ceil(p*n))\n");
}

char *html_summary_from_model(const struct html_run *run)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        knee_oom();
    if (run->have_hlog) {
        hlog_summary(out, run);
    } else {
        struct html_target all;
        sum_targets(run, &all);
        mrequests(out, run, &all);
        mtables(out, run, &all);
        if (run->ntargets > 1)
            for (size_t i = 0; i < run->ntargets; i++) {
                const struct html_target *t = &run->targets[i];
                fprintf(out, "\n--- target %s\n", t->name);
                accounting(out, t->planned, t->sent, t->outcome[OUTCOME_DROPPED], t->outcome, "  ");
                mtables(out, run, t);
            }
        fprintf(out, "percentiles: HdrHistogram, 3 significant digits (value at rank ceil(p*n))\n");
        release_sum(&all);
    }
    fclose(out);
    return buf;
}
