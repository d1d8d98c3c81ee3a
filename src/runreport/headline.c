/* The summary's first lines, what a wrk user looks for: requests per second completed over the
 * measured window, p50 and p99, the errors with their status codes, and the verdict on the run,
 * each line naming what it covers. Everything here is derived from the record, so knee report
 * prints the same lines from the run's JSON. */
#include "runreport/internal.h"

#define HEADLINE_CODES 3 /* status codes named on the errors line; the rest are "+N more" */

static bool failed_outcome(int o)
{
    return record_outcome_failed((enum reqlog_outcome)o);
}

static bool want_not_ok(int status, void *ctx)
{
    (void)ctx;
    return status < 200 || status >= 400;
}

/* "127.0.0.1:8080" or "127.0.0.1:8080, 10.0.0.2:80": the addresses of the targets whose
 * requests were refused (up to 3). */
static void refused_by(const struct run_record *v, char *buf, size_t len)
{
    size_t off = 0, named = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < v->ntargets && off < len; i++) {
        const struct run_target_result *t = &v->targets[i];
        if (!t->counts.transport_cause[RUN_TC_REFUSED] && !t->warmup_counts.transport_cause[RUN_TC_REFUSED])
            continue;
        if (strstr(buf, t->address))
            continue;
        if (named++ == 3) {
            snprintf(buf + off, len - off, ", ...");
            return;
        }
        off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", t->address);
    }
}

/* Why nothing succeeded, in the words that point at the fix. */
static void failed_cause(const struct run_record *v, char *buf, size_t len)
{
    const struct run_counts *c = &v->all.counts;
    uint64_t failed = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (failed_outcome(o))
            failed += c->outcome[o];
    char who[256], d[256];
    if (failed && c->transport_cause[RUN_TC_REFUSED] == failed) {
        refused_by(v, who, sizeof who);
        if (v->config.proxy) /* every connection went to the proxy */
            snprintf(who, sizeof who, "the proxy %s", v->config.proxy);
        snprintf(buf, len, "connection refused by %s: is the server up?", who[0] ? who : "the target");
    } else if (failed && c->outcome[OUTCOME_TIMEOUT] == failed) {
        snprintf(buf, len, "every request timed out (--timeout %s)",
                 units_fmt_duration(v->config.timeout_ns, who, sizeof who));
    } else {
        snprintf(buf, len, "not one request succeeded (%s)", record_describe_failures(c, d, sizeof d));
    }
}

static size_t failed_thresholds(const struct run_record *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->nthresholds; i++)
        n += !v->thresholds[i].pass;
    return n;
}

/* Both identities on the run's counts (a merge may fail its plan check with both holding). */
static bool identities_hold(const struct run_record *v)
{
    const struct run_counts *c = &v->all.counts;
    uint64_t sum = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            sum += c->outcome[o];
    return c->planned == c->sent + c->dropped && sum == c->sent;
}

const char *runreport_verdict(const struct run_record *v, char *buf, size_t len)
{
    char a[320], b[32];
    const struct record_remote_write *rw = &v->remote_write;
    if (rw->set && rw->required && rw->ok == 0) { /* --remote-write-required decides the exit code: first */
        snprintf(buf, len, "PUSH FAILED: not one --remote-write push was accepted (%s); exit 1",
                 rw->last_error[0] ? rw->last_error : "none was sent");
        return buf;
    }
    if (!v->accounting_ok && v->shard.index == RUN_SHARD_MERGED && !v->shard.complete && identities_hold(v)) {
        snprintf(buf, len,
                 "INCOMPLETE: a shard did not run its part to the end; the numbers are the other "
                 "parts' (below)");
    } else if (!v->accounting_ok) {
        snprintf(buf, len, "BROKEN: the accounting identities do not hold (a bug: please report this run)");
    } else if (v->no_ok) {
        failed_cause(v, a, sizeof a);
        snprintf(buf, len, "FAILED: %s", a);
    } else if (v->generator_limited) {
        snprintf(buf, len, "GENERATOR-LIMITED: the generator, not the service, shaped this run (warnings below)");
    } else if (isfinite(v->failed_share) && v->failed_share >= RUN_HIGH_FAILED_SHARE) {
        snprintf(buf, len, "ERRORS: %.1f%% of the requests sent failed; the latency above is of the ok ones",
                 100 * v->failed_share);
    } else if (v->aborted.set) {
        snprintf(buf, len, "ABORTED at %.1f s by --abort-if %s; the numbers cover what ran", v->aborted.at_s,
                 v->aborted.rule);
    } else if (v->interrupted) {
        snprintf(buf, len, "INTERRUPTED: planning stopped early; the numbers cover what ran");
    } else if (failed_thresholds(v)) {
        snprintf(buf, len, "THRESHOLDS FAILED: %zu of %zu (below)", failed_thresholds(v), v->nthresholds);
    } else if (v->warnings.attention) {
        snprintf(buf, len, "valid, with warnings (below)");
    } else if (v->config.open_loop && isfinite(v->sent_on_schedule)) {
        snprintf(buf, len, "valid: the generator kept its plan (%.2f%% sent on schedule, lag p99 %s ms)",
                 100 * v->sent_on_schedule, units_fmt_ms(v->all.sum.lag.p99, b, sizeof b));
    } else if (!v->config.open_loop) {
        snprintf(buf, len, "valid; closed loop: a slow server slows the load and hides stalls (coordinated omission)");
    } else {
        snprintf(buf, len, "valid");
    }
    return buf;
}

/* "none (1,000 sent)", or "25 of 1,000 sent (2.5%): http_error 20, timeout 5 (status 404 ×15,
 * 500 ×5)"; transport failures with their leading cause; rejections apart (asked for). */
static void errors_line(FILE *out, const struct run_record *v)
{
    const struct run_counts *c = &v->all.counts;
    char a[32], b[32], n[40];
    uint64_t failed = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (failed_outcome(o))
            failed += c->outcome[o];
    fprintf(out, "errors      ");
    if (!failed) {
        fprintf(out, "none (%s sent)", units_fmt_count(c->sent, a, sizeof a));
    } else {
        fprintf(out, "%s of %s sent (%s):", units_fmt_count(failed, a, sizeof a), units_fmt_count(c->sent, b, sizeof b),
                units_fmt_share((double)failed / (double)(c->sent ? c->sent : 1), 3, n, sizeof n));
        bool first = true;
        for (int o = 0; o < OUTCOME_COUNT; o++) {
            if (!failed_outcome(o) || !c->outcome[o])
                continue;
            fprintf(out, "%s %s %s", first ? "" : ",", reqlog_outcome_name((enum reqlog_outcome)o),
                    units_fmt_count(c->outcome[o], a, sizeof a));
            first = false;
            if (o != OUTCOME_TRANSPORT)
                continue;
            int top = -1;
            for (int k = 0; k < RUN_TC_COUNT; k++)
                if (c->transport_cause[k] && (top < 0 || c->transport_cause[k] > c->transport_cause[top]))
                    top = k;
            if (top >= 0)
                fprintf(out, " (%s %s%s)", rr_cause_name((enum run_transport_cause)top, n, sizeof n),
                        units_fmt_count(c->transport_cause[top], a, sizeof a),
                        c->transport_cause[top] < c->outcome[o] ? ", ..." : "");
        }
    }
    struct run_status_entry top[HEADLINE_CODES];
    /* the codes of the failures (a rejection's are on its own line below) */
    size_t all = failed ? record_status_top(&v->all.status, want_not_ok, NULL, top, HEADLINE_CODES) : 0;
    for (size_t k = 0; k < all && k < HEADLINE_CODES; k++) {
        if (top[k].status < 0)
            fprintf(out, "%s other ×%s", k ? "," : "; status", units_fmt_count(top[k].count, a, sizeof a));
        else
            fprintf(out, "%s %d ×%s", k ? "," : "; status", top[k].status, units_fmt_count(top[k].count, a, sizeof a));
    }
    if (all > HEADLINE_CODES)
        fprintf(out, ", +%zu more", all - HEADLINE_CODES);
    if (c->outcome[OUTCOME_REJECTED])
        fprintf(out, "; rejected %s (--reject)", units_fmt_count(c->outcome[OUTCOME_REJECTED], a, sizeof a));
    fputc('\n', out);
}

/* p50 and p99 of the ok requests when some failed (a refused connection's 0.1 ms is no
 * latency of the service), else of every completed one, as the table below. */
static void latency_line(FILE *out, const struct run_record *v)
{
    char a[24], b[24], c[24], n[32];
    const char *from = v->config.open_loop ? "from the planned send" : "from the send";
    if (v->no_ok) {
        fprintf(out, "latency     none: not one request succeeded\n");
        return;
    }
    bool failures = isfinite(v->failed_share) && v->failed_share > 0;
    const struct run_summary *s = failures ? &v->all.sum.latency[RUN_GROUP_OK] : &v->all.sum.latency_all;
    fprintf(out, "latency     p50 %s ms   p99 %s ms   max %s ms   (%s requests, %s%s)\n",
            units_fmt_ms(s->p50, a, sizeof a), units_fmt_ms(s->p99, b, sizeof b), units_fmt_ms(s->max, c, sizeof c),
            units_fmt_count(s->count, n, sizeof n), failures ? "the ok ones, " : "", from);
}

void runreport_print_headline(FILE *out, const struct run_record *v)
{
    char a[32], b[32], c[32], d[32], w[512];
    const struct run_rates *r = &v->all.rates;
    fprintf(out, "requests/s  %s completed", units_fmt_rate(r->completed, a, sizeof a));
    if (isfinite(r->goodput) && isfinite(r->completed) && fabs(r->goodput - r->completed) > 1e-9)
        fprintf(out, ", %s ok", units_fmt_rate(r->goodput, b, sizeof b));
    if (v->window_end_s > v->window_start_s)
        fprintf(out, " in the window %.3f .. %.3f s", v->window_start_s, v->window_end_s);
    else /* a merge of shards without a shared start: no common window */
        fprintf(out, ", the shards' rates added up");
    if (v->config.open_loop)
        fprintf(out, " (planned %s, sent %s)\n", units_fmt_rate(r->planned, c, sizeof c),
                units_fmt_rate(r->sent, d, sizeof d));
    else
        fprintf(out, " (sent %s)\n", units_fmt_rate(r->sent, c, sizeof c));
    latency_line(out, v);
    errors_line(out, v);
    fprintf(out, "verdict     %s\n", runreport_verdict(v, w, sizeof w));
}
