/* The terminal summary of a run. Every table names the interval it measures (T0 planned send,
 * T1 actual send, T5 full response), because "latency" means different things in an open and
 * a closed loop; outcomes come with the accounting identities so nothing can go missing
 * unnoticed. */
#include "runreport/runreport.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"

#include <math.h>
#include <string.h>

/* Text that came from the command line or the network (names, URLs, paths in warnings,
 * threshold expressions) with control bytes escaped (core/err knee_escape): a summary line
 * is never a terminal control sequence. */
static const char *esc(const char *s, char *buf, size_t len)
{
    knee_escape(buf, len, s, strlen(s));
    return buf;
}

static void table_header(FILE *out)
{
    fprintf(out, "  %-12s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n", "", "count", "mean", "stdev", "p50", "p90", "p95",
            "p99", "p99.9", "max");
}

static void table_row(FILE *out, const char *label, const struct hdr *h)
{
    struct run_summary s;
    run_summarize(h, &s);
    char c[32], v[9][24];
    fprintf(out, "  %-12s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n", label, units_fmt_count(s.count, c, sizeof c),
            units_fmt_ms(s.mean, v[0], 24), units_fmt_ms(s.stdev, v[1], 24), units_fmt_ms(s.p50, v[2], 24),
            units_fmt_ms(s.p90, v[3], 24), units_fmt_ms(s.p95, v[4], 24), units_fmt_ms(s.p99, v[5], 24),
            units_fmt_ms(s.p999, v[6], 24), units_fmt_ms(s.max, v[7], 24));
}

static void latency_tables(FILE *out, const struct run_config *cfg, const struct run_target_result *r)
{
    if (cfg->open_loop)
        fprintf(out, "\nlatency (ms): planned send -> full response (T5 - T0), by outcome\n");
    else
        fprintf(out, "\nlatency (ms): send -> full response (T5 - T1), by outcome; closed loop\n");
    table_header(out);
    table_row(out, "all", &r->latency_all);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        if (r->latency[g].total_count)
            table_row(out, run_group_name((enum run_group)g), &r->latency[g]);
    if (cfg->open_loop) {
        fprintf(out, "service (ms): send -> full response (T5 - T1)\n");
        table_row(out, "all", &r->service);
    }
    fprintf(out, "ttfb (ms): send -> first response byte\n");
    table_row(out, "all", &r->ttfb);
    if (cfg->open_loop) {
        fprintf(out, "lag (ms): planned send -> actual send (T1 - T0), the generator's own delay\n");
        table_row(out, "all", &r->lag);
    }
    if (r->connect.total_count) {
        fprintf(out, "connect (ms): connect start -> established, per new connection\n");
        table_row(out, "all", &r->connect);
    }
    if (r->tls.total_count) {
        fprintf(out, "tls (ms): connected -> TLS handshake done, per new connection\n");
        table_row(out, "all", &r->tls);
    }
}

static void accounting(FILE *out, const struct run_counts *c, const char *indent)
{
    char a[32], b[32], d[32];
    bool plan_ok = c->planned == c->sent + c->dropped;
    fprintf(out, "%splanned %s = sent %s + dropped %s  [%s]\n", indent, units_fmt_count(c->planned, a, sizeof a),
            units_fmt_count(c->sent, b, sizeof b), units_fmt_count(c->dropped, d, sizeof d),
            plan_ok ? "holds" : "BROKEN");
    uint64_t sum = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            sum += c->outcome[o];
    fprintf(out, "%ssent %s =", indent, units_fmt_count(c->sent, a, sizeof a));
    bool first = true;
    for (int o = 0; o < OUTCOME_COUNT; o++) {
        if (o == OUTCOME_DROPPED)
            continue;
        fprintf(out, "%s %s %s", first ? "" : " +", reqlog_outcome_name((enum reqlog_outcome)o),
                units_fmt_count(c->outcome[o], b, sizeof b));
        first = false;
    }
    fprintf(out, "  [%s]\n", sum == c->sent ? "holds" : "BROKEN");
}

/* Under the outcomes, when there is something to say: why the transport failures failed
 * ("transport 25: refused 3, stale 22") and how many requests --retry-stale sent again. */
static void transport_line(FILE *out, const struct run_config *cfg, const struct run_counts *c, const char *indent)
{
    char a[32];
    if (c->outcome[OUTCOME_TRANSPORT]) {
        fprintf(out, "%stransport %s:", indent, units_fmt_count(c->outcome[OUTCOME_TRANSPORT], a, sizeof a));
        bool first = true;
        for (int k = 0; k < RUN_TC_COUNT; k++) {
            if (!c->transport_cause[k])
                continue;
            char name[40];
            snprintf(name, sizeof name, "%s", run_transport_cause_name((enum run_transport_cause)k));
            for (char *p = name; *p; p++)
                if (*p == '_')
                    *p = ' ';
            fprintf(out, "%s %s %s", first ? "" : ",", name, units_fmt_count(c->transport_cause[k], a, sizeof a));
            first = false;
        }
        if (c->transport_cause[RUN_TC_STALE] && !cfg->retry_stale)
            fprintf(out, " (stale: a reused keep-alive connection closed before any byte of the response; "
                         "--retry-stale sends such a request again)");
        fputc('\n', out);
    }
    if (c->retries) {
        char n[48];
        snprintf(n, sizeof n, "%s request%s", units_fmt_count(c->retries, a, sizeof a), c->retries == 1 ? "" : "s");
        fprintf(out,
                "%sretried %s once on a new connection: the reused keep-alive connection went stale "
                "(--retry-stale)\n",
                indent, n);
    }
}

/* ------------------------------------------------------------------ TLS and HTTP/2 */

/* "TLSv1.3", or "TLSv1.2 12, TLSv1.3 88" when connections differed. */
static const char *tls_versions(const struct run_proto_counts *pc, char *buf, size_t len)
{
    int kinds = 0;
    for (int v = 0; v < RUN_TLS_VERSIONS; v++)
        kinds += pc->tls_version[v] > 0;
    size_t off = 0;
    buf[0] = '\0';
    for (int v = 0; v < RUN_TLS_VERSIONS && off < len; v++) {
        if (!pc->tls_version[v])
            continue;
        char n[32];
        off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", run_tls_version_name(v));
        if (kinds > 1 && off < len)
            off += (size_t)snprintf(buf + off, len - off, " %s", units_fmt_count(pc->tls_version[v], n, sizeof n));
    }
    return buf;
}

/* "h2", "http/1.1", or both with their counts. */
static const char *protocols(const struct run_proto_counts *pc, char *buf, size_t len)
{
    char a[32], b[32];
    if (pc->h2 && pc->http1)
        snprintf(buf, len, "h2 %s, http/1.1 %s connections", units_fmt_count(pc->h2, a, sizeof a),
                 units_fmt_count(pc->http1, b, sizeof b));
    else
        snprintf(buf, len, "%s", pc->h2 ? "h2" : pc->http1 ? "http/1.1" : "no protocol agreed");
    return buf;
}

/* One target's TLS and HTTP/2 lines, when it spoke either:
 *   tls: TLSv1.3, h2 (ALPN); handshakes 1,000: 950 resumed (95.0%); tls p50 1.210 ms, p99 3.400 ms
 *   h2: 5,000 streams on 2 connections (server limit 128); RST_STREAM 0, GOAWAY 0, ... */
static void transport_target(FILE *out, const struct run_config *cfg, const struct run_target_result *t,
                             const char *indent)
{
    const struct run_proto_counts *pc = &t->pc;
    char a[32], b[32], c[64], v[128];
    if (t->https) {
        uint64_t hs = pc->tls_full + pc->tls_resumed;
        fprintf(out, "%stls: %s, %s (%s)", indent, tls_versions(pc, v, sizeof v), protocols(pc, c, sizeof c),
                cfg->http == RUN_HTTP_1   ? "--http1.1"
                : cfg->http == RUN_HTTP_2 ? "--http2"
                                          : "ALPN");
        fprintf(out, "; handshakes %s", units_fmt_count(hs, a, sizeof a));
        if (hs)
            fprintf(out, ": %s resumed (%s)", units_fmt_count(pc->tls_resumed, b, sizeof b),
                    units_fmt_share((double)pc->tls_resumed / (double)hs, 3, c, sizeof c));
        if (cfg->tls_no_resume)
            fprintf(out, " (--tls-resume off)");
        if (pc->tls_failed)
            fprintf(out, ", %s failed", units_fmt_count(pc->tls_failed, a, sizeof a));
        if (t->tls.total_count) {
            struct run_summary s;
            run_summarize(&t->tls, &s);
            fprintf(out, "; tls p50 %s ms, p99 %s ms", units_fmt_ms(s.p50, a, sizeof a),
                    units_fmt_ms(s.p99, b, sizeof b));
        }
        fputc('\n', out);
    }
    if (pc->h2 || pc->h2_streams) {
        fprintf(out, "%s%s: %s streams on %s connection%s", indent, t->https ? "h2" : "h2c",
                units_fmt_count(pc->h2_streams, a, sizeof a), units_fmt_count(pc->h2, b, sizeof b),
                pc->h2 == 1 ? "" : "s");
        if (pc->h2_max_concurrent == UINT64_MAX)
            fprintf(out, " (server limit: none");
        else
            fprintf(out, " (server limit %s", units_fmt_count(pc->h2_max_concurrent, a, sizeof a));
        if (cfg->streams)
            fprintf(out, ", --streams %u", cfg->streams);
        fputc(')', out);
        if (pc->h2_rst || pc->h2_goaway || pc->h2_retried || pc->h2_stalls)
            fprintf(out,
                    "; RST_STREAM %llu (refused %llu), GOAWAY %llu (%llu streams refused), sent again %llu, "
                    "flow-control stalls %llu",
                    (unsigned long long)pc->h2_rst, (unsigned long long)pc->h2_refused,
                    (unsigned long long)pc->h2_goaway, (unsigned long long)pc->h2_goaway_streams,
                    (unsigned long long)pc->h2_retried, (unsigned long long)pc->h2_stalls);
        fputc('\n', out);
    }
}

/* Under the connections line: whether certificates were verified, then each target's TLS and
 * HTTP/2 lines (prefixed by its name when there are several). */
static void transport_lines(FILE *out, const struct run_config *cfg, const struct run_result *res)
{
    if (res->all.https && cfg->tls_insecure)
        fprintf(out, "tls: certificate verification OFF (--insecure): the server's identity was not checked\n");
    for (size_t i = 0; i < res->ntargets; i++) {
        const struct run_target_result *t = &res->targets[i];
        if (!t->https && !t->pc.h2)
            continue;
        if (res->ntargets > 1) {
            char n[256];
            fprintf(out, "target %s:\n", esc(t->name, n, sizeof n));
            transport_target(out, cfg, t, "  ");
        } else {
            transport_target(out, cfg, t, "");
        }
    }
}

/* "knee run: open loop, constant arrivals, 500.0/s, pool up to ..., 2 s, 2 threads" */
static void plan_head(FILE *out, const struct run_config *cfg, uint32_t threads, uint32_t pool_cap, uint32_t conns)
{
    char a[32], b[32];
    fprintf(out, "knee run: ");
    if (cfg->open_loop) {
        /* the total: the shared rate (or ramp) plus the targets' own @R rates */
        double own = 0;
        bool shared = !cfg->targets;
        for (size_t i = 0; cfg->targets && i < cfg->ntargets; i++) {
            if (cfg->targets[i].rate > 0)
                own += cfg->targets[i].rate;
            else
                shared = true;
        }
        double from = own + (shared ? (cfg->ramp ? cfg->ramp_from : cfg->rate) : 0);
        double to = own + (shared ? (cfg->ramp ? cfg->ramp_to : cfg->rate) : 0);
        fprintf(out, "open loop, %s arrivals", cfg->arrivals == RUN_ARRIVALS_POISSON ? "Poisson" : "constant");
        if (cfg->ramp && shared)
            fprintf(out, ", ramp %s -> %s /s", units_fmt_rate(from, a, sizeof a), units_fmt_rate(to, b, sizeof b));
        else if (from > 0)
            fprintf(out, ", %s/s", units_fmt_rate(from, a, sizeof a));
        if (own > 0 && shared)
            fprintf(out, " in total");
        if (cfg->arrivals == RUN_ARRIVALS_POISSON)
            fprintf(out, " (seed %llu)", (unsigned long long)cfg->seed);
        fprintf(out, ", pool up to %s connection%s (%s when busy)", units_fmt_count(pool_cap, a, sizeof a),
                pool_cap == 1 ? "" : "s", cfg->when_busy == RUN_BUSY_DROP ? "drop" : "queue");
    } else if (cfg->streams > 1) {
        fprintf(out, "closed loop, %u clients, %u per connection (--streams)", conns, cfg->streams);
    } else {
        fprintf(out, "closed loop, %u connection%s", conns, conns == 1 ? "" : "s");
        if (cfg->think_ns)
            fprintf(out, ", think %s", units_fmt_ms((double)cfg->think_ns / 1e6, a, sizeof a)), fprintf(out, " ms");
    }
    if (cfg->duration_ns)
        fprintf(out, ", %.3g s", (double)cfg->duration_ns / 1e9);
    if (cfg->requests)
        fprintf(out, ", %s request%s", units_fmt_count(cfg->requests, a, sizeof a), cfg->requests == 1 ? "" : "s");
    fprintf(out, ", %u thread%s%s\n", threads, threads == 1 ? "" : "s", cfg->keepalive ? "" : ", no keep-alive");
}

/* "  name url -> address (resolved in 12us)" without the line's end: the caller adds its share. */
static void target_head(FILE *out, const char *name, const char *url, const char *address, uint64_t resolve_ns)
{
    char rt[32], n[256], u[1024];
    fprintf(out, "  %-10s %s -> %s (resolved in %s)", esc(name, n, sizeof n), esc(url, u, sizeof u), address,
            units_fmt_duration(resolve_ns, rt, sizeof rt));
}

static void plan_line(FILE *out, const struct run_config *cfg, const struct run_result *res)
{
    char a[32];
    uint32_t conns = 0;
    for (size_t i = 0; i < res->ntargets; i++)
        conns += res->targets[i].connections;
    plan_head(out, cfg, res->threads, res->pool_cap, conns);
    for (size_t i = 0; i < res->ntargets; i++) {
        const struct run_target_result *t = &res->targets[i];
        target_head(out, t->name, t->url, t->address, t->resolve_ns);
        if (cfg->open_loop)
            fprintf(out, ", %s/s", units_fmt_rate(t->planned_rate, a, sizeof a));
        else if (cfg->streams > 1)
            fprintf(out, ", %u clients", t->connections);
        else
            fprintf(out, ", %u connection%s", t->connections, t->connections == 1 ? "" : "s");
        fputc('\n', out);
    }
}

/* Anything the compact form would leave to --verbose that needs a reader's eyes: then the
 * full form is printed. Notes about few samples or the warm-up do not count (they print in
 * both forms); rejections are data the user asked for (--reject), not failures. */
bool run_summary_needs_full(const struct run_config *cfg, const struct run_result *res, const struct run_threshold *thr,
                            size_t nthr)
{
    (void)cfg;
    if (res->ntargets != 1 || res->attention || res->generator_limited || !res->accounting_ok || res->interrupted)
        return true;
    const struct run_counts *cs[2] = {&res->all.counts, &res->all.warmup_counts};
    for (int k = 0; k < 2; k++)
        for (int o = 0; o < OUTCOME_COUNT; o++)
            if (o != OUTCOME_OK && o != OUTCOME_REJECTED && cs[k]->outcome[o])
                return true;
    for (size_t i = 0; i < nthr; i++)
        if (!thr[i].pass)
            return true;
    return false;
}

/* "sent N = ok N + rejected M  [holds]": the compact accounting line names only the outcomes
 * that occurred (the full line names every one). */
static void accounting_compact(FILE *out, const struct run_counts *c)
{
    char a[32], b[32];
    uint64_t sum = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            sum += c->outcome[o];
    fprintf(out, "  sent %s =", units_fmt_count(c->sent, a, sizeof a));
    bool first = true;
    for (int o = 0; o < OUTCOME_COUNT; o++) {
        if (o == OUTCOME_DROPPED || (!c->outcome[o] && !(o == OUTCOME_OK && sum == 0)))
            continue;
        fprintf(out, "%s %s %s", first ? "" : " +", reqlog_outcome_name((enum reqlog_outcome)o),
                units_fmt_count(c->outcome[o], b, sizeof b));
        first = false;
    }
    fprintf(out, "  [%s]\n", sum == c->sent ? "holds" : "BROKEN");
}

static void compact_row(FILE *out, const char *label, const struct hdr *h)
{
    struct run_summary s;
    run_summarize(h, &s);
    char c[32], v[5][24];
    fprintf(out, "  %-12s %10s %9s %9s %9s %9s %9s\n", label, units_fmt_count(s.count, c, sizeof c),
            units_fmt_ms(s.p50, v[0], 24), units_fmt_ms(s.p90, v[1], 24), units_fmt_ms(s.p99, v[2], 24),
            units_fmt_ms(s.p999, v[3], 24), units_fmt_ms(s.max, v[4], 24));
}

/* The rates by event time over the window it names, the generator's own pace while it sent,
 * what happened after the window (in no rate), and in an open loop the share sent on schedule
 * (docs/FORMATS.md, "Rates"). */
static void rates_lines(FILE *out, const struct run_config *cfg, const struct run_result *res)
{
    char a[32], b[32], c[32], d[32];
    const struct run_rates *r = &res->all.rates;
    fprintf(out,
            "  rates per second over the window %.3f .. %.3f s (events inside it): planned %s  sent %s  "
            "completed %s  goodput %s\n",
            res->window_start_s, res->window_end_s, units_fmt_rate(r->planned, a, sizeof a),
            units_fmt_rate(r->sent, b, sizeof b), units_fmt_rate(r->completed, c, sizeof c),
            units_fmt_rate(r->goodput, d, sizeof d));
    if (isfinite(r->achieved_send))
        fprintf(out, "  sent %s/s over %.3f s of sending (first to last send)\n",
                units_fmt_rate(r->achieved_send, a, sizeof a), r->sending_s);
    if (r->sent_late || r->completed_late) {
        fprintf(out, "  after the window (in no rate): %s late send%s, %s completed during the drain\n",
                units_fmt_count(r->sent_late, a, sizeof a), r->sent_late == 1 ? "" : "s",
                units_fmt_count(r->completed_late, b, sizeof b));
    }
    if (cfg->open_loop && isfinite(res->sent_on_schedule))
        fprintf(out, "  sent on schedule: %.2f%% of the planned requests, sent by the window's end (+%s)\n",
                100 * res->sent_on_schedule,
                units_fmt_duration(cfg->lag_limit_ns ? cfg->lag_limit_ns : RUN_DEFAULT_LAG_LIMIT_NS, a, sizeof a));
}

/* Above the latency tables, where a reader looks first: a run in which nothing succeeded, or
 * whose failures are many, says so (the same sentence as in the warnings). */
static void alert(FILE *out, const struct run_result *res)
{
    char line[4096];
    for (size_t i = 0; i < res->nwarnings; i++)
        if (strncmp(res->warnings[i], "FAILED:", 7) == 0 || strncmp(res->warnings[i], "ERRORS:", 7) == 0)
            fprintf(out, "\n! %s\n", esc(res->warnings[i], line, sizeof line));
}

static void requests_and_rates(FILE *out, const struct run_config *cfg, const struct run_result *res, bool full)
{
    char a[32], b[32], c[32];
    const struct run_counts *all = &res->all.counts;
    fprintf(out, "\nrequests%s\n", cfg->warmup_ns ? " (planned after the warm-up)" : "");
    if (full) {
        accounting(out, all, "  ");
        transport_line(out, cfg, all, "  ");
        if (cfg->warmup_ns) {
            fprintf(out, "  warm-up (not in the statistics below):\n");
            accounting(out, &res->all.warmup_counts, "    ");
            transport_line(out, cfg, &res->all.warmup_counts, "    ");
        }
    } else {
        bool plan_ok = all->planned == all->sent + all->dropped;
        fprintf(out, "  planned %s = sent %s + dropped %s  [%s]\n", units_fmt_count(all->planned, a, sizeof a),
                units_fmt_count(all->sent, b, sizeof b), units_fmt_count(all->dropped, c, sizeof c),
                plan_ok ? "holds" : "BROKEN");
        accounting_compact(out, all);
        transport_line(out, cfg, all, "  ");
    }
    rates_lines(out, cfg, res);
}

static void server_timing(FILE *out, const struct run_result *res)
{
    bool any_st = false;
    for (size_t i = 0; i < res->ntargets; i++)
        any_st |= res->targets[i].nst > 0;
    if (!any_st)
        return;
    fprintf(out, "\nserver timing (ms, from Server-Timing response headers; server-side time)\n");
    fprintf(out, "  %-10s %-12s %10s %9s %9s %9s %9s %9s\n", "target", "name", "count", "mean", "p50", "p90", "p99",
            "max");
    for (size_t i = 0; i < res->ntargets; i++)
        for (size_t j = 0; j < res->targets[i].nst; j++) {
            struct run_summary s;
            run_summarize(&res->targets[i].st[j].dur, &s);
            char v[6][24];
            fprintf(out, "  %-10s %-12s %10s %9s %9s %9s %9s %9s\n", res->targets[i].name, res->targets[i].st[j].name,
                    units_fmt_count(s.count, v[0], 24), units_fmt_ms(s.mean, v[1], 24), units_fmt_ms(s.p50, v[2], 24),
                    units_fmt_ms(s.p90, v[3], 24), units_fmt_ms(s.p99, v[4], 24), units_fmt_ms(s.max, v[5], 24));
        }
}

static void per_target(FILE *out, const struct run_config *cfg, const struct run_result *res)
{
    char a[32], b[32], c[32];
    for (size_t i = 0; i < res->ntargets; i++) {
        const struct run_target_result *t = &res->targets[i];
        char n[256], u[1024];
        fprintf(out, "\n--- target %s (%s)\n", esc(t->name, n, sizeof n), esc(t->url, u, sizeof u));
        accounting(out, &t->counts, "  ");
        transport_line(out, cfg, &t->counts, "  ");
        double win = res->window_s > 0 ? res->window_s : NAN;
        fprintf(out, "  rates per second: planned %s  sent %s  goodput %s\n",
                units_fmt_rate((double)t->events.planned / win, a, sizeof a),
                units_fmt_rate((double)t->events.sent / win, b, sizeof b),
                units_fmt_rate((double)t->events.ok / win, c, sizeof c));
        latency_tables(out, cfg, t);
    }
}

static void warnings_and_thresholds(FILE *out, const struct run_result *res, const struct run_threshold *thr,
                                    size_t nthr)
{
    char line[4096];
    if (res->nwarnings) {
        fprintf(out, "\nwarnings\n");
        for (size_t i = 0; i < res->nwarnings; i++)
            fprintf(out, "  ! %s\n", esc(res->warnings[i], line, sizeof line));
    }
    if (!nthr)
        return;
    fprintf(out, "\nthresholds\n");
    for (size_t i = 0; i < nthr; i++) {
        const struct run_threshold *t = &thr[i];
        const char *unit = run_threshold_unit(t);
        char mv[40];
        if (!isfinite(t->measured))
            snprintf(mv, sizeof mv, "no samples");
        else if (strcmp(unit, "%") == 0)
            units_fmt_share(t->measured, 4, mv, sizeof mv);
        else
            snprintf(mv, sizeof mv, "%.6g%s%s", t->measured, *unit && strcmp(unit, "/s") ? " " : "", unit);
        fprintf(out, "  %-4s %-28s measured %s\n", t->pass ? "pass" : "FAIL", esc(t->expr, line, sizeof line), mv);
    }
}

void run_print_summary(FILE *out, const struct run_config *cfg, const struct run_result *res,
                       const struct run_threshold *thr, size_t nthr, bool verbose)
{
    char a[32], b[32], c[32], d[32];
    bool full = verbose || run_summary_needs_full(cfg, res, thr, nthr);
    plan_line(out, cfg, res);
    requests_and_rates(out, cfg, res, full);
    alert(out, res);
    if (full) {
        latency_tables(out, cfg, &res->all);
        if (res->ntargets > 1)
            per_target(out, cfg, res);
    } else {
        fprintf(out, "\n  %-12s %10s %9s %9s %9s %9s %9s\n", "", "count", "p50", "p90", "p99", "p99.9", "max");
        compact_row(out, "latency (ms)", &res->all.latency_all);
        if (cfg->open_loop) {
            compact_row(out, "lag (ms)", &res->all.lag);
            fprintf(out, "  latency: planned send -> full response (T5 - T0); lag: planned send -> actual send (T1 - "
                         "T0)\n");
        } else {
            fprintf(out, "  latency: send -> full response (T5 - T1); closed loop\n");
        }
    }
    server_timing(out, res);
    const struct run_counts *all = &res->all.counts;
    fprintf(out, "\nconnections: %s opened, %s failed, %s closed by the server",
            units_fmt_count(all->conns_opened, a, sizeof a), units_fmt_count(all->conns_failed, b, sizeof b),
            units_fmt_count(all->conns_closed_by_peer, c, sizeof c));
    if (all->conns_unsolicited)
        fprintf(out, ", %s with unsolicited bytes", units_fmt_count(all->conns_unsolicited, d, sizeof d));
    fprintf(out, "; %s bytes received\n",
            units_fmt_count(all->bytes_in + res->all.warmup_counts.bytes_in, a, sizeof a));
    transport_lines(out, cfg, res);
    fprintf(out, "percentiles: HdrHistogram, 3 significant digits (value at rank ceil(p*n)); elapsed %.3f s%s\n",
            res->elapsed_s, full ? "" : "; --verbose: every table");
    if (!cfg->open_loop)
        fprintf(out, "note: closed loop: each connection waits for its answer before sending again, so a slow "
                     "server slows the load and its stalls are hidden from the latency (coordinated omission); "
                     "--rate R measures from the planned send instead\n");
    warnings_and_thresholds(out, res, thr, nthr);
}

void run_print_progress(FILE *out, const struct run_progress *p, bool terminal)
{
    char a[32], b[32], c[32];
    char tot[32] = "";
    if (p->total_s > 0)
        snprintf(tot, sizeof tot, "/%.0fs", p->total_s);
    double len = p->length_s > 0 ? p->length_s : 1;
    fprintf(out, "%s[%6.1fs%s] sent %s/s  done %s/s  in flight %s", terminal ? "\r" : "", p->elapsed_s, tot,
            units_fmt_rate((double)p->sent / len, a, sizeof a), units_fmt_rate((double)p->completed / len, b, sizeof b),
            units_fmt_count(p->in_flight, c, sizeof c));
    if (p->queued)
        fprintf(out, " (+%llu queued)", (unsigned long long)p->queued);
    fprintf(out, "  p50 %s p99 %s ms  errors %llu", units_fmt_ms(p->p50_ms, a, sizeof a),
            units_fmt_ms(p->p99_ms, b, sizeof b), (unsigned long long)p->errors);
    if (p->dropped)
        fprintf(out, "  dropped %llu", (unsigned long long)p->dropped);
    fputs(terminal ? "\033[K" : "\n", out);
    fflush(out);
}

/* ------------------------------------------------------------------ the plan (--dry-run) */

/* "1,000", or "about 1,000" for an expectation. */
static const char *planned_count(double n, bool exact, char *buf, size_t len)
{
    char c[32];
    snprintf(buf, len, "%s%s", exact ? "" : "about ", units_fmt_count((uint64_t)llround(n), c, sizeof c));
    return buf;
}

static void plan_target(FILE *out, const struct run_config *cfg, const struct run_plan_target *t)
{
    char a[32], b[32], n[48];
    target_head(out, t->name, t->url, t->address, t->resolve_ns);
    if (cfg->open_loop && t->rate_from != t->rate_to)
        fprintf(out, ", %s -> %s/s", units_fmt_rate(t->rate_from, a, sizeof a),
                units_fmt_rate(t->rate_to, b, sizeof b));
    else if (cfg->open_loop)
        fprintf(out, ", %s/s", units_fmt_rate(t->rate_from, a, sizeof a));
    else if (cfg->streams > 1)
        fprintf(out, ", %u clients", t->connections);
    else
        fprintf(out, ", %u connection%s", t->connections, t->connections == 1 ? "" : "s");
    if (isfinite(t->planned))
        fprintf(out, ", %s planned", planned_count(t->planned, t->planned_exact, n, sizeof n));
    fprintf(out, "; request %s bytes\n", units_fmt_count(t->request_bytes, a, sizeof a));
}

void run_print_plan(FILE *out, const struct run_config *cfg, const struct run_plan *plan)
{
    char a[32], b[32], n[48];
    plan_head(out, cfg, plan->threads, plan->pool_cap, plan->all.connections);
    for (size_t i = 0; i < plan->ntargets; i++)
        plan_target(out, cfg, &plan->targets[i]);
    const struct run_plan_target *all = &plan->all;
    fprintf(out, "\nplan\n");
    if (isfinite(all->planned)) {
        fprintf(out, "  %s request%s planned", planned_count(all->planned, all->planned_exact, n, sizeof n),
                all->planned_exact && llround(all->planned) == 1 ? "" : "s");
        if (cfg->duration_ns)
            fprintf(out, " over %.3g s", (double)cfg->duration_ns / 1e9);
        if (cfg->open_loop && !all->planned_exact)
            fprintf(out, " (Poisson arrivals: the count varies from seed to seed)");
        if (!cfg->open_loop)
            fprintf(out, ", shared by %u connection%s", all->connections, all->connections == 1 ? "" : "s");
        fputc('\n', out);
    } else {
        fprintf(out, "  as many requests as %u connection%s complete in %.3g s (a closed loop plans none ahead)\n",
                all->connections, all->connections == 1 ? "" : "s", (double)cfg->duration_ns / 1e9);
    }
    if (cfg->warmup_ns) {
        if (isfinite(all->warmup_planned))
            fprintf(out, "  warm-up: %s of them in the first %.3g s, logged but left out of the statistics\n",
                    planned_count(all->warmup_planned, all->planned_exact, n, sizeof n), (double)cfg->warmup_ns / 1e9);
        else
            fprintf(out, "  warm-up: the requests of the first %.3g s, logged but left out of the statistics\n",
                    (double)cfg->warmup_ns / 1e9);
    }
    fprintf(out, "  timeout %s per request, drain %s after planning ends\n",
            units_fmt_duration(cfg->timeout_ns, a, sizeof a), units_fmt_duration(cfg->drain_ns, b, sizeof b));
    if (plan->pool_cap < plan->pool_asked)
        fprintf(out, "  ! the connection pool is capped at %u (file descriptor limit %llu; asked for %u)\n",
                plan->pool_cap, (unsigned long long)plan->fd_limit, plan->pool_asked);
}
