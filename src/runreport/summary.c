/* The terminal summary of a run (runreport.h), printed from its record (the engine's, a merge's, or
 * one read back from the run's JSON: knee run and knee report print this one text), in one of
 * three forms after the same head and headline (headline.c):
 *   - the default: within 100 columns and about 20 lines for a clean run: the accounting, one
 *     latency table, the connections, and only the notes that change a conclusion;
 *   - a failed run (not one request succeeded, one target): what failed and why, no latency
 *     tables (there is no latency of a working service to show);
 *   - the full form (--verbose, or anything that needs a reader's eyes): every table and note. */
#include "runreport/internal.h"

/* Anything the compact form would leave to --verbose that needs a reader's eyes: then the
 * full form is printed. Notes about few samples or the warm-up do not count (they print in
 * both forms); rejections are data the user asked for (--reject), not failures. */
bool runreport_needs_full(const struct run_record *v)
{
    if (v->ntargets != 1 || v->warnings.attention || v->generator_limited || !v->accounting_ok || v->interrupted)
        return true;
    const struct run_counts *cs[2] = {&v->all.counts, &v->all.warmup_counts};
    for (int k = 0; k < 2; k++)
        for (int o = 0; o < OUTCOME_COUNT; o++)
            if (o != OUTCOME_OK && o != OUTCOME_REJECTED && cs[k]->outcome[o])
                return true;
    for (size_t i = 0; i < v->nthresholds; i++)
        if (!v->thresholds[i].pass)
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

static void compact_row(FILE *out, const char *label, const struct run_summary *s)
{
    char c[32], v[5][24];
    fprintf(out, "  %-12s %10s %9s %9s %9s %9s %9s\n", label, units_fmt_count(s->count, c, sizeof c),
            units_fmt_ms(s->p50, v[0], 24), units_fmt_ms(s->p90, v[1], 24), units_fmt_ms(s->p99, v[2], 24),
            units_fmt_ms(s->p999, v[3], 24), units_fmt_ms(s->max, v[4], 24));
}

/* The rates by event time over the window it names, the generator's own pace while it sent,
 * what happened after the window (in no rate), and in an open loop the share sent on schedule
 * (docs/FORMATS.md, "Rates"). */
static void rates_lines(FILE *out, const struct run_record *v)
{
    char a[32], b[32], c[32], d[32];
    const struct run_rates *r = &v->all.rates;
    fprintf(out,
            "  rates per second over the window %.3f .. %.3f s (events inside it):\n"
            "    planned %s  sent %s  completed %s  goodput %s\n",
            v->window_start_s, v->window_end_s, units_fmt_rate(r->planned, a, sizeof a),
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
    if (v->config.open_loop && isfinite(v->sent_on_schedule))
        fprintf(out, "  sent on schedule: %.2f%% of the planned requests, sent by the window's end (+%s)\n",
                100 * v->sent_on_schedule,
                units_fmt_duration(v->config.lag_limit_ns ? v->config.lag_limit_ns : RUN_DEFAULT_LAG_LIMIT_NS, a,
                                   sizeof a));
}

/* Above the latency tables, where a reader looks first: a run in which nothing succeeded, or
 * whose failures are many, says so (the same sentence as in the warnings). */
static void alert(FILE *out, const struct run_record *v)
{
    char line[4096];
    for (size_t i = 0; i < v->warnings.n; i++)
        if (strncmp(v->warnings.items[i], "FAILED:", 7) == 0 || strncmp(v->warnings.items[i], "ERRORS:", 7) == 0)
            fprintf(out, "\n! %s\n", rr_esc(v->warnings.items[i], line, sizeof line));
}

/* The accounting: in the full form every outcome, the warm-up's apart, and the rates; in the
 * default one the outcomes that occurred (the headline has the rates). */
static void requests_and_rates(FILE *out, const struct run_record *v, bool full)
{
    char a[32], b[32], c[32];
    const struct run_counts *all = &v->all.counts;
    fprintf(out, "\nrequests%s\n", v->config.warmup_ns ? " (planned after the warm-up)" : "");
    if (full) {
        runreport_print_accounting(out, all, "  ");
        rr_transport_line(out, v, all, "  ");
        rr_status_lines(out, v, &v->all, "  ");
        if (v->config.warmup_ns) {
            fprintf(out, "  warm-up (not in the statistics below):\n");
            runreport_print_accounting(out, &v->all.warmup_counts, "    ");
            rr_transport_line(out, v, &v->all.warmup_counts, "    ");
        }
    } else {
        bool plan_ok = all->planned == all->sent + all->dropped;
        fprintf(out, "  planned %s = sent %s + dropped %s  [%s]\n", units_fmt_count(all->planned, a, sizeof a),
                units_fmt_count(all->sent, b, sizeof b), units_fmt_count(all->dropped, c, sizeof c),
                plan_ok ? "holds" : "BROKEN");
        accounting_compact(out, all);
        rr_transport_line(out, v, all, "  ");
        rr_status_lines(out, v, &v->all, "  ");
        return;
    }
    rates_lines(out, v);
}

/* The default form's Server-Timing (one target): its names one after the other, on as many
 * lines of at most 100 columns as they need (a name longer than a line has one of its own). */
static void server_timing_brief(FILE *out, const struct run_target_result *t)
{
    static const char head[] = "server timing (ms): ";
    const size_t indent = sizeof head - 1, width = 99; /* a line may end with ";" */
    char seg[256], sn[128], f[3][24];
    size_t col = indent;
    fputs(head, out);
    for (size_t j = 0; j < t->nst; j++) {
        const struct run_summary *s = &t->st[j].sum;
        int n =
            snprintf(seg, sizeof seg, "%s p50 %s p99 %s max %s", rr_esc(t->st[j].name, sn, sizeof sn),
                     units_fmt_ms(s->p50, f[0], 24), units_fmt_ms(s->p99, f[1], 24), units_fmt_ms(s->max, f[2], 24));
        size_t len = n < 0 ? 0 : (size_t)n;
        if (j && col + 2 + len > width) {
            fprintf(out, ";\n%*s", (int)indent, "");
            col = indent;
        } else if (j) {
            fputs("; ", out);
            col += 2;
        }
        fputs(seg, out);
        col += len;
    }
    fputc('\n', out);
}

static void server_timing(FILE *out, const struct run_record *v, bool full)
{
    bool any_st = false;
    for (size_t i = 0; i < v->ntargets; i++)
        any_st |= v->targets[i].nst > 0;
    if (!any_st)
        return;
    if (!full && v->ntargets == 1) {
        server_timing_brief(out, &v->targets[0]);
        return;
    }
    fprintf(out, "\nserver timing (ms, from Server-Timing response headers; server-side time)\n");
    fprintf(out, "  %-10s %-12s %10s %9s %9s %9s %9s %9s\n", "target", "name", "count", "mean", "p50", "p90", "p99",
            "max");
    for (size_t i = 0; i < v->ntargets; i++)
        for (size_t j = 0; j < v->targets[i].nst; j++) {
            const struct run_summary *s = &v->targets[i].st[j].sum;
            char n[256], sn[128], f[6][24];
            fprintf(out, "  %-10s %-12s %10s %9s %9s %9s %9s %9s\n", rr_esc(v->targets[i].name, n, sizeof n),
                    rr_esc(v->targets[i].st[j].name, sn, sizeof sn), units_fmt_count(s->count, f[0], 24),
                    units_fmt_ms(s->mean, f[1], 24), units_fmt_ms(s->p50, f[2], 24), units_fmt_ms(s->p90, f[3], 24),
                    units_fmt_ms(s->p99, f[4], 24), units_fmt_ms(s->max, f[5], 24));
        }
}

static void per_target(FILE *out, const struct run_record *v)
{
    char a[32], b[32], c[32];
    for (size_t i = 0; i < v->ntargets; i++) {
        const struct run_target_result *t = &v->targets[i];
        char n[256], u[1024];
        fprintf(out, "\n--- target %s (%s)\n", rr_esc(t->name, n, sizeof n), rr_esc(t->url, u, sizeof u));
        runreport_print_accounting(out, &t->counts, "  ");
        rr_transport_line(out, v, &t->counts, "  ");
        rr_status_lines(out, v, t, "  ");
        double win = v->window_s > 0 ? v->window_s : NAN;
        fprintf(out, "  rates per second: planned %s  sent %s  goodput %s\n",
                units_fmt_rate((double)t->events.planned / win, a, sizeof a),
                units_fmt_rate((double)t->events.sent / win, b, sizeof b),
                units_fmt_rate((double)t->events.ok / win, c, sizeof c));
        runreport_print_latency_tables(out, v->config.open_loop, t);
    }
}

/* More targets than RUNREPORT_TARGETS_FULL: one row each (--verbose prints every target's
 * tables), so fifty URLs make fifty lines, not a thousand. Latency of every completed request
 * (all.latency_all's rule); "failed" is what error_rate counts (http_error, invalid, transport,
 * timeout); the codes are the most frequent statuses that were not 2xx/3xx. */
static bool want_not_ok(int status, void *ctx)
{
    (void)ctx;
    return status < 200 || status >= 400;
}

static void per_target_compact(FILE *out, const struct run_record *v)
{
    char n[256], f[6][24], codes[96];
    fprintf(out, "\ntargets: %zu, one row each (--verbose: every target's tables)\n", v->ntargets);
    fprintf(out, "  %-24s %9s %9s %9s %9s %9s %9s  %s\n", "target", "sent", "ok", "failed", "p50 ms", "p99 ms",
            "max ms", "not 2xx/3xx");
    for (size_t i = 0; i < v->ntargets; i++) {
        const struct run_target_result *t = &v->targets[i];
        const struct run_counts *c = &t->counts;
        uint64_t failed = c->outcome[OUTCOME_HTTP_ERROR] + c->outcome[OUTCOME_INVALID] + c->outcome[OUTCOME_TRANSPORT] +
                          c->outcome[OUTCOME_TIMEOUT];
        struct run_status_entry top[2];
        size_t all = record_status_top(&t->status, want_not_ok, NULL, top, 2);
        size_t k = 0;
        codes[0] = '\0';
        for (size_t j = 0; j < all && j < 2; j++) {
            char num[32];
            if (top[j].status < 0)
                k += (size_t)snprintf(codes + k, sizeof codes - k, "%sother ×%s", j ? ", " : "",
                                      units_fmt_count(top[j].count, num, sizeof num));
            else
                k += (size_t)snprintf(codes + k, sizeof codes - k, "%s%d ×%s", j ? ", " : "", top[j].status,
                                      units_fmt_count(top[j].count, num, sizeof num));
        }
        if (all > 2)
            snprintf(codes + k, sizeof codes - k, ", +%zu more", all - 2);
        fprintf(out, "  %-24s %9s %9s %9s %9s %9s %9s%s%s\n", rr_esc(t->name, n, sizeof n),
                units_fmt_count(c->sent, f[0], 24), units_fmt_count(c->outcome[OUTCOME_OK], f[1], 24),
                units_fmt_count(failed, f[2], 24), units_fmt_ms(t->sum.latency_all.p50, f[3], 24),
                units_fmt_ms(t->sum.latency_all.p99, f[4], 24), units_fmt_ms(t->sum.latency_all.max, f[5], 24),
                codes[0] ? "  " : "", codes);
    }
}

/* The connections, TLS and HTTP/2 lines; in the full form the generator's CPU. */
static void connections(FILE *out, const struct run_record *v, bool full)
{
    char a[32], b[32], c[32], d[32];
    const struct run_counts *all = &v->all.counts;
    fprintf(out, "connections: %s opened, %s failed, %s closed by the server",
            units_fmt_count(all->conns_opened, a, sizeof a), units_fmt_count(all->conns_failed, b, sizeof b),
            units_fmt_count(all->conns_closed_by_peer, c, sizeof c));
    if (all->conns_unsolicited)
        fprintf(out, ", %s with unsolicited bytes", units_fmt_count(all->conns_unsolicited, d, sizeof d));
    fprintf(out, "; %s bytes received\n",
            units_fmt_count(v->all.counts.bytes_in + v->all.warmup_counts.bytes_in, a, sizeof a));
    rr_transport_lines(out, v);
    const struct run_generator_cpu *g = &v->env.gen_cpu;
    if (full && g->threads)
        fprintf(out, "generator CPU: %.3f s user + %.3f s system in %u thread%s over %.3f s: %.1f%% of one core\n",
                g->user_s, g->sys_s, g->threads, g->threads == 1 ? "" : "s", g->wall_s,
                100 * record_generator_cpu_share(g));
}

/* Streamed responses (--stream): the first event and the gaps, a row each in the latency table's
 * columns, and what was counted. Nothing when no response was timed as events. */
static void stream_rows(FILE *out, const struct run_record *v, bool head)
{
    const struct run_stream_sum *s = &v->all.stream_sum;
    if (!s->present)
        return;
    if (head)
        fprintf(out, "\n  %-12s %10s %9s %9s %9s %9s %9s\n", "", "count", "p50", "p90", "p99", "p99.9", "max");
    compact_row(out, "first event", &s->first_event);
    compact_row(out, "event gap", &s->event_gap);
    char a[32], b[32];
    fprintf(out, "  stream (ms): first event from the %s; gap between two events of a response\n",
            v->config.open_loop ? "planned send" : "send");
    fprintf(out, "  stream: %s events in %s responses (mean %.1f, max %.0f each), %.1f/s\n",
            units_fmt_count(s->events, a, sizeof a), units_fmt_count(s->responses, b, sizeof b), s->per_response.mean,
            s->per_response.max, s->events_per_s);
    if (s->not_sse)
        fprintf(out, "  --stream sse: %s responses were not text/event-stream (scanned as SSE all the same)\n",
                units_fmt_count(s->not_sse, a, sizeof a));
    if (s->partial)
        fprintf(out, "  %s streams ended inside an event (counted invalid)\n",
                units_fmt_count(s->partial, a, sizeof a));
}

/* The default form's latency: one table of every completed request, and the lag in an open loop. */
static void latency_brief(FILE *out, const struct run_record *v)
{
    fprintf(out, "\n  %-12s %10s %9s %9s %9s %9s %9s\n", "", "count", "p50", "p90", "p99", "p99.9", "max");
    compact_row(out, "latency (ms)", &v->all.sum.latency_all);
    if (v->config.open_loop) {
        compact_row(out, "lag (ms)", &v->all.sum.lag);
        fprintf(out,
                "  latency: planned send -> full response (T5 - T0); lag: planned send -> actual send (T1 - T0)\n");
    } else {
        fprintf(out, "  latency: send -> full response (T5 - T1); closed loop\n");
    }
    stream_rows(out, v, false);
}

static void print_full(FILE *out, const struct run_record *v, bool verbose)
{
    requests_and_rates(out, v, true);
    alert(out, v);
    runreport_print_latency_tables(out, v->config.open_loop, &v->all);
    if (v->ntargets > 1 && (verbose || v->ntargets <= RUNREPORT_TARGETS_FULL))
        per_target(out, v);
    else if (v->ntargets > 1)
        per_target_compact(out, v);
    stream_rows(out, v, true);
    runreport_print_stages(out, v);
    runreport_print_entries(out, v, verbose);
    server_timing(out, v, true);
    fputc('\n', out);
    connections(out, v, true);
    fprintf(out, "percentiles: HdrHistogram, 3 significant digits (value at rank ceil(p*n)); elapsed %.3f s\n",
            v->elapsed_s);
    if (!v->config.open_loop)
        fprintf(out, "note: closed loop: each connection waits for its answer before sending again, so a slow "
                     "server slows the load and its stalls are hidden from the latency (coordinated omission); "
                     "--rate R measures from the planned send instead\n");
}

void runreport_print_summary(FILE *out, const struct run_record *v, bool verbose)
{
    bool failed = !verbose && v->no_ok && v->ntargets == 1 && v->accounting_ok;
    bool full = !failed && (verbose || runreport_needs_full(v));
    if (v->aborted.set) /* before anything else: the run did not run its plan */
        fprintf(out, "ABORTED at %.1f s: --abort-if %s fired; planning stopped and the requests in flight drained\n\n",
                v->aborted.at_s, v->aborted.rule);
    rr_plan_line(out, v, !full);
    fputc('\n', out);
    runreport_print_headline(out, v);
    if (full) {
        print_full(out, v, verbose);
    } else if (failed) {
        /* what failed and why; the verdict above and the warnings below say FAILED */
        fprintf(out, "\nrequests%s\n", v->config.warmup_ns ? " (planned after the warm-up)" : "");
        runreport_print_accounting(out, &v->all.counts, "  ");
        rr_transport_line(out, v, &v->all.counts, "  ");
        rr_status_lines(out, v, &v->all, "  ");
        runreport_print_entries(out, v, false);
        fputc('\n', out);
        connections(out, v, false);
        fprintf(out, "elapsed %.3f s; --verbose: every table (the failures' times)\n", v->elapsed_s);
    } else {
        requests_and_rates(out, v, false);
        latency_brief(out, v);
        runreport_print_stages(out, v);
        runreport_print_entries(out, v, false);
        fputc('\n', out);
        server_timing(out, v, false);
        connections(out, v, false);
        fprintf(out, "percentiles: HdrHistogram, 3 significant digits; elapsed %.3f s; --verbose: every table\n",
                v->elapsed_s);
    }
    rr_print_warnings(out, v, verbose);
}
