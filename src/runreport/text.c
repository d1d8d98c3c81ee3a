/* The pieces of the terminal summary of a run (summary.c puts them together): the tables, each
 * naming the interval it measures (T0 planned send, T1 actual send, T5 full response), because
 * "latency" means different things in an open and a closed loop; the accounting identities, so
 * nothing can go missing unnoticed; the outcomes' causes and statuses; TLS and HTTP/2; the plan. */
#include "runreport/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Text that came from the command line or the network (names, URLs, paths in warnings,
 * threshold expressions) with control bytes escaped (core/err knee_escape): a summary line
 * is never a terminal control sequence. */
const char *rr_esc(const char *s, char *buf, size_t len)
{
    knee_escape(buf, len, s, strlen(s));
    return buf;
}

void runreport_print_table_header(FILE *out)
{
    fprintf(out, "  %-12s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n", "", "count", "mean", "stdev", "p50", "p90", "p95",
            "p99", "p99.9", "max");
}

void runreport_print_table_row(FILE *out, const char *label, const struct run_summary *s)
{
    char c[32], v[9][24];
    fprintf(out, "  %-12s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n", label, units_fmt_count(s->count, c, sizeof c),
            units_fmt_ms(s->mean, v[0], 24), units_fmt_ms(s->stdev, v[1], 24), units_fmt_ms(s->p50, v[2], 24),
            units_fmt_ms(s->p90, v[3], 24), units_fmt_ms(s->p95, v[4], 24), units_fmt_ms(s->p99, v[5], 24),
            units_fmt_ms(s->p999, v[6], 24), units_fmt_ms(s->max, v[7], 24));
}

void runreport_print_latency_tables(FILE *out, bool open_loop, const struct run_target_result *t)
{
    if (open_loop)
        fprintf(out, "\nlatency (ms): planned send -> full response (T5 - T0), by outcome\n");
    else
        fprintf(out, "\nlatency (ms): send -> full response (T5 - T1), by outcome; closed loop\n");
    runreport_print_table_header(out);
    runreport_print_table_row(out, "all", &t->sum.latency_all);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        if (t->sum.latency[g].count)
            runreport_print_table_row(out, record_group_name((enum run_group)g), &t->sum.latency[g]);
    if (open_loop) {
        fprintf(out, "service (ms): send -> full response (T5 - T1)\n");
        runreport_print_table_row(out, "all", &t->sum.service);
    }
    fprintf(out, "ttfb (ms): send -> first response byte\n");
    runreport_print_table_row(out, "all", &t->sum.ttfb);
    if (open_loop) {
        fprintf(out, "lag (ms): planned send -> actual send (T1 - T0), the generator's own delay\n");
        runreport_print_table_row(out, "all", &t->sum.lag);
    }
    if (t->sum.connect.count) {
        fprintf(out, "connect (ms): connect start -> established, per new connection\n");
        runreport_print_table_row(out, "all", &t->sum.connect);
    }
    if (t->sum.tls.count) {
        fprintf(out, "tls (ms): connected -> TLS handshake done, per new connection\n");
        runreport_print_table_row(out, "all", &t->sum.tls);
    }
}

void runreport_print_accounting(FILE *out, const struct run_counts *c, const char *indent)
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

/* What a TLS failure of cause k means and the flag that fixes it, when a flag does: long, for
 * the transport line, and short, for the tls line (NULL: no flag fixes it: an alert, a broken
 * peer, a timeout). */
static const char *tls_fix(enum run_transport_cause k, bool brief)
{
    switch (k) {
    case RUN_TC_TLS_VERIFY:
        return brief ? "--cacert FILE or --insecure"
                     : "the server's certificate did not verify against the trusted CAs (self-signed, or signed "
                       "by a CA unknown here); --cacert FILE trusts the CA that signed it, --insecure skips the check";
    case RUN_TC_TLS_HOSTNAME:
        return brief ? "--insecure"
                     : "the server's certificate does not name the URL's host; --insecure skips the check";
    case RUN_TC_TLS_EXPIRED:
        return brief ? "--insecure"
                     : "the server's certificate expired or is not valid yet; --insecure skips the check";
    case RUN_TC_TLS_ALPN:
        return brief ? "without --http2"
                     : "--http2 forced h2 and the server does not speak it; without --http2 the server chooses";
    case RUN_TC_TLS_CERT_REQUIRED:
        return brief ? "--cert FILE --key FILE"
                     : "the server requires a client certificate and none was sent; --cert FILE --key FILE gives one";
    case RUN_TC_TLS_BAD_CERT:
        return brief ? "another --cert"
                     : "the server refused the client certificate (--cert: not signed by a CA it trusts, expired, or "
                       "not for this use)";
    default:
        return NULL;
    }
}

/* The name of a transport cause as the summary prints it ("tls verify"). */
const char *rr_cause_name(enum run_transport_cause k, char *buf, size_t len)
{
    snprintf(buf, len, "%s", record_transport_cause_name(k));
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = ' ';
    return buf;
}

/* " (the proxy answered 407 ×3, 403 ×2)": the statuses of the CONNECTs the proxy refused, of the
 * target whose counts c are (or of every target). */
static void rr_proxy_refusals(FILE *out, const struct run_record *r, const struct run_counts *c)
{
    const struct run_proto_counts *pc = &r->all.pc;
    for (size_t i = 0; i < r->ntargets; i++)
        if (c == &r->targets[i].counts || c == &r->targets[i].warmup_counts)
            pc = &r->targets[i].pc;
    char a[32];
    const char *sep = " (the proxy answered";
    for (int k = 0; k < RUN_PROXY_STATUS_N; k++)
        if (pc->proxy_refused[k]) {
            fprintf(out, "%s %d ×%s", sep, k + RUN_PROXY_STATUS_MIN,
                    units_fmt_count(pc->proxy_refused[k], a, sizeof a));
            sep = ",";
        }
    if (*sep == ',')
        fputc(')', out);
}

/* Under the outcomes, when there is something to say: why the transport failures failed
 * ("transport 25: refused 3, stale 22") and how many requests --retry-stale sent again. */
void rr_transport_line(FILE *out, const struct run_record *r, const struct run_counts *c, const char *indent)
{
    char a[32];
    if (c->outcome[OUTCOME_TRANSPORT]) {
        fprintf(out, "%stransport %s:", indent, units_fmt_count(c->outcome[OUTCOME_TRANSPORT], a, sizeof a));
        bool first = true;
        for (int k = 0; k < RUN_TC_COUNT; k++) {
            if (!c->transport_cause[k])
                continue;
            char name[40];
            fprintf(out, "%s %s %s", first ? "" : ",", rr_cause_name((enum run_transport_cause)k, name, sizeof name),
                    units_fmt_count(c->transport_cause[k], a, sizeof a));
            first = false;
        }
        if (c->transport_cause[RUN_TC_STALE] && !r->config.retry_stale)
            fprintf(out, " (stale: a reused keep-alive connection closed before any byte of the response; "
                         "--retry-stale sends such a request again)");
        else if (c->transport_cause[RUN_TC_STALE] && !r->config.retry_stale_all)
            fprintf(out, " (stale: a reused keep-alive connection closed before any byte of the response; "
                         "POST, PATCH and other methods that are not idempotent are sent again only with "
                         "--retry-stale)");
        if (c->transport_cause[RUN_TC_PROXY_REFUSED])
            rr_proxy_refusals(out, r, c);
        for (int k = 0; k < RUN_TC_COUNT; k++) {
            const char *fix = tls_fix((enum run_transport_cause)k, false);
            char name[40];
            if (c->transport_cause[k] && fix)
                fprintf(out, " (%s: %s)", rr_cause_name((enum run_transport_cause)k, name, sizeof name), fix);
        }
        fputc('\n', out);
    }
    if (c->retries) {
        char n[48];
        snprintf(n, sizeof n, "%s request%s", units_fmt_count(c->retries, a, sizeof a), c->retries == 1 ? "" : "s");
        fprintf(out, "%sretried %s once on a new connection: the reused keep-alive connection went stale (%s)\n",
                indent, n,
                r->config.retry_stale_all ? "--retry-stale: every method"
                                          : "idempotent methods by default; --no-retry-stale: never");
    }
}

/* The run's --reject statuses, for the status lines' filters; shared: mark the statuses a
 * --reject STATUS:BODY splits between two outcomes (their split is not known). */
struct reject_codes {
    const struct record_config *cfg;
    bool shared;
};

static bool rejects_status(const struct record_config *c, int status, bool with_body)
{
    for (size_t i = 0; i < c->nrejects; i++)
        if (c->rejects[i].status == status && (!with_body || c->rejects[i].body))
            return true;
    return false;
}

/* http_error's statuses: outside 2xx/3xx and not always a rejection (a --reject without a body
 * condition takes every response of its status). */
static bool want_http_error(int status, void *ctx)
{
    const struct record_config *c = ((const struct reject_codes *)ctx)->cfg;
    if (status >= 200 && status <= 399)
        return false;
    return !rejects_status(c, status, false) || rejects_status(c, status, true);
}

static bool want_rejected(int status, void *ctx)
{
    return status > 0 && rejects_status(((const struct reject_codes *)ctx)->cfg, status, false);
}

#define STATUS_LINE_TOP 4 /* codes named on a status line; the rest are "+N more" */

/* "  http_error 100: 404 ×90, 500 ×10" (top codes by count, then "+N more"). With rc->shared,
 * a status that a --reject STATUS:BODY splits is marked "*": its count is every response of
 * that status. */
static void status_line(FILE *out, const char *indent, const char *what, uint64_t n, const struct run_status_counts *s,
                        bool (*want)(int, void *), struct reject_codes *rc)
{
    struct run_status_entry top[STATUS_LINE_TOP];
    size_t all = record_status_top(s, want, rc, top, STATUS_LINE_TOP);
    if (!all)
        return;
    char a[32];
    bool any_shared = false;
    fprintf(out, "%s%s %s:", indent, what, units_fmt_count(n, a, sizeof a));
    for (size_t k = 0; k < all && k < STATUS_LINE_TOP; k++) {
        bool sh = rc->shared && top[k].status > 0 && rejects_status(rc->cfg, top[k].status, true);
        any_shared |= sh;
        if (top[k].status < 0)
            fprintf(out, "%s other ×%s", k ? "," : "", units_fmt_count(top[k].count, a, sizeof a));
        else
            fprintf(out, "%s %d%s ×%s", k ? "," : "", top[k].status, sh ? "*" : "",
                    units_fmt_count(top[k].count, a, sizeof a));
    }
    if (all > STATUS_LINE_TOP)
        fprintf(out, ", +%zu more", all - STATUS_LINE_TOP);
    if (any_shared)
        fprintf(out, " (*: every response of that status, rejected by --reject STATUS:BODY or not)");
    fputc('\n', out);
}

/* Under the outcomes: the statuses of the responses that were not ok, when some were not
 * 2xx/3xx or were rejected (a run of 2xx/3xx only prints nothing here). The table counts
 * responses by status, not by outcome: a --reject STATUS takes every response of its status,
 * and when one --reject STATUS:BODY status is present its share of the rejections is what the
 * status-only ones leave; with several such statuses the split is unknown and marked. */
void rr_status_lines(FILE *out, const struct run_record *r, const struct run_target_result *t, const char *indent)
{
    const struct run_counts *c = &t->counts;
    if (!c->outcome[OUTCOME_HTTP_ERROR] && !c->outcome[OUTCOME_REJECTED])
        return;
    struct reject_codes rc = {&r->config, false};
    struct run_status_counts *he = xmalloc(sizeof *he), *rj = xmalloc(sizeof *rj);
    *he = *rj = t->status;
    uint64_t only = 0; /* responses of the statuses a --reject without body takes whole */
    size_t nsplit = 0, split = 0;
    for (size_t k = 0; k < RUN_STATUS_OTHER; k++) {
        int st = record_status_of_slot(k);
        if (!t->status.n[k] || !rejects_status(&r->config, st, false))
            continue;
        if (rejects_status(&r->config, st, true))
            nsplit++, split = k;
        else
            only += t->status.n[k];
    }
    uint64_t rejected = c->outcome[OUTCOME_REJECTED];
    if (nsplit == 1 && rejected >= only && rejected - only <= t->status.n[split]) {
        rj->n[split] = rejected - only;
        he->n[split] = t->status.n[split] - rj->n[split];
    } else {
        rc.shared = nsplit > 0;
    }
    if (c->outcome[OUTCOME_HTTP_ERROR])
        status_line(out, indent, "http_error", c->outcome[OUTCOME_HTTP_ERROR], he, want_http_error, &rc);
    if (rejected)
        status_line(out, indent, "rejected", rejected, rj, want_rejected, &rc);
    free(he);
    free(rj);
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
        off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", record_tls_version_name(v));
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
        snprintf(buf, len, "%s", pc->h3 ? "h3 (QUIC)" : pc->h2 ? "h2" : pc->http1 ? "http/1.1" : "no protocol agreed");
    return buf;
}

/* The TLS causes among t's failed requests, warm-up included, after a count of failed
 * handshakes: " (tls verify 10: --cacert FILE or --insecure)"; nothing when there is none. */
static void tls_failure_causes(FILE *out, const struct run_target_result *t)
{
    bool first = true;
    for (int k = 0; k < RUN_TC_COUNT; k++) {
        enum run_transport_cause tc = (enum run_transport_cause)k;
        uint64_t n = t->counts.transport_cause[k] + t->warmup_counts.transport_cause[k];
        if (!n || strncmp(record_transport_cause_name(tc), "tls_", 4) != 0)
            continue;
        char a[32], name[40];
        const char *fix = tls_fix(tc, true);
        fprintf(out, "%s%s %s%s%s", first ? " (" : ", ", rr_cause_name(tc, name, sizeof name),
                units_fmt_count(n, a, sizeof a), fix ? ": " : "", fix ? fix : "");
        first = false;
    }
    if (!first)
        fputc(')', out);
}

/* One target's TLS and HTTP/2 lines, when it spoke either:
 *   tls: TLSv1.3, h2 (ALPN); handshakes 1,000: 950 resumed (95.0%); tls p50 1.210 ms, p99 3.400 ms
 *   tls: no handshake completed: 11 failed (tls verify 10: --cacert FILE or --insecure)
 *   h2: 5,000 streams on 2 connections (server limit 128); RST_STREAM 0, GOAWAY 0, ... */
static void transport_target(FILE *out, const struct run_record *r, const struct run_target_result *t,
                             const char *indent)
{
    const struct run_proto_counts *pc = &t->pc;
    char a[32], b[32], c[64], vs[128];
    uint64_t hs = pc->tls_full + pc->tls_resumed;
    if (t->https && !hs) {
        /* no version, no protocol, no time to show: why, and what fixes it */
        fprintf(out, "%stls: no handshake completed", indent);
        if (pc->tls_failed)
            fprintf(out, ": %s failed", units_fmt_count(pc->tls_failed, a, sizeof a));
        tls_failure_causes(out, t);
        fputc('\n', out);
    } else if (t->https) {
        fprintf(out, "%stls: %s, %s (%s)", indent, tls_versions(pc, vs, sizeof vs), protocols(pc, c, sizeof c),
                r->config.http == RUN_HTTP_1   ? "--http1.1"
                : r->config.http == RUN_HTTP_2 ? "--http2"
                                               : "ALPN");
        fprintf(out, "; handshakes %s", units_fmt_count(hs, a, sizeof a));
        if (hs)
            fprintf(out, ": %s resumed (%s)", units_fmt_count(pc->tls_resumed, b, sizeof b),
                    units_fmt_share((double)pc->tls_resumed / (double)hs, 3, c, sizeof c));
        if (r->config.tls_no_resume)
            fprintf(out, " (--tls-resume off)");
        if (pc->tls_failed) {
            fprintf(out, ", %s failed", units_fmt_count(pc->tls_failed, a, sizeof a));
            tls_failure_causes(out, t);
        }
        if (t->sum.tls.count)
            fprintf(out, "; tls p50 %s ms, p99 %s ms", units_fmt_ms(t->sum.tls.p50, a, sizeof a),
                    units_fmt_ms(t->sum.tls.p99, b, sizeof b));
        fputc('\n', out);
    }
    if (pc->h2 || pc->h2_streams) {
        fprintf(out, "%s%s: %s stream%s on %s connection%s", indent, t->https ? "h2" : "h2c",
                units_fmt_count(pc->h2_streams, a, sizeof a), pc->h2_streams == 1 ? "" : "s",
                units_fmt_count(pc->h2, b, sizeof b), pc->h2 == 1 ? "" : "s");
        if (!pc->h2_limit_seen)
            fprintf(out, " (server limit: none seen");
        else if (pc->h2_max_concurrent == UINT64_MAX)
            fprintf(out, " (server limit: none");
        else
            fprintf(out, " (server limit %s", units_fmt_count(pc->h2_max_concurrent, a, sizeof a));
        if (r->config.streams)
            fprintf(out, ", --streams %u", r->config.streams);
        fputc(')', out);
        if (pc->h2_limit_seen && pc->h2_max_concurrent == 0)
            fprintf(out, "; the server allowed no stream (SETTINGS_MAX_CONCURRENT_STREAMS 0): no new connection "
                         "while one said so, at most one per waiting request after");
        if (pc->h2_rst || pc->h2_goaway || pc->h2_retried || pc->h2_stalls)
            fprintf(out,
                    "; RST_STREAM %llu (refused %llu), GOAWAY %llu (%llu streams refused), sent again %llu, "
                    "flow-control stalls %llu",
                    (unsigned long long)pc->h2_rst, (unsigned long long)pc->h2_refused,
                    (unsigned long long)pc->h2_goaway, (unsigned long long)pc->h2_goaway_streams,
                    (unsigned long long)pc->h2_retried, (unsigned long long)pc->h2_stalls);
        fputc('\n', out);
    }
    const struct run_quic_counts *q = &pc->quic;
    if (pc->h3 || q->streams) {
        char ds[32], dr[32];
        fprintf(out, "%sh3: %s stream%s on %s QUIC connection%s; datagrams %s sent, %s received; probe timeouts %llu",
                indent, units_fmt_count(q->streams, a, sizeof a), q->streams == 1 ? "" : "s",
                units_fmt_count(pc->h3, b, sizeof b), pc->h3 == 1 ? "" : "s",
                units_fmt_count(q->datagrams_sent, ds, sizeof ds),
                units_fmt_count(q->datagrams_received, dr, sizeof dr), (unsigned long long)q->pto);
        if (q->send_blocked)
            fprintf(out, ", %llu refused by the socket", (unsigned long long)q->send_blocked);
        if (q->zero_rtt_accepted || q->zero_rtt_rejected)
            fprintf(out, "; 0-RTT %llu accepted, %llu rejected", (unsigned long long)q->zero_rtt_accepted,
                    (unsigned long long)q->zero_rtt_rejected);
        if (q->rtt_connections)
            fprintf(out, "; rtt min %.3f ms, smoothed mean %.3f ms", (double)q->rtt_min_us / 1e3,
                    (double)q->rtt_smoothed_sum_us / 1e3 / (double)q->rtt_connections);
        fputc('\n', out);
    }
}

/* Under the connections line: whether certificates were verified, then each target's TLS and
 * HTTP/2 lines (prefixed by its name when there are several). */
void rr_transport_lines(FILE *out, const struct run_record *v)
{
    if (v->all.https && v->config.tls_insecure)
        fprintf(out, "tls: certificate verification OFF (--insecure): the server's identity was not checked\n");
    for (size_t i = 0; i < v->ntargets; i++) {
        const struct run_target_result *t = &v->targets[i];
        if (!t->https && !t->pc.h2)
            continue;
        if (v->ntargets > 1) {
            char n[256];
            fprintf(out, "target %s:\n", rr_esc(t->name, n, sizeof n));
            transport_target(out, v, t, "  ");
        } else {
            transport_target(out, v, t, "");
        }
    }
}

void runreport_print_head(FILE *out, const struct runreport_head *h)
{
    char a[32], b[32];
    fprintf(out, "knee run: ");
    if (h->open_loop) {
        double from = h->own + (h->shared ? (h->ramp ? h->ramp_from : h->rate) : 0);
        double to = h->own + (h->shared ? (h->ramp ? h->ramp_to : h->rate) : 0);
        fprintf(out, "open loop, %s arrivals", h->poisson ? "Poisson" : "constant");
        if (h->ramp && h->shared)
            fprintf(out, ", ramp %s -> %s /s", units_fmt_rate(from, a, sizeof a), units_fmt_rate(to, b, sizeof b));
        else if (from > 0)
            fprintf(out, ", %s/s", units_fmt_rate(from, a, sizeof a));
        if (h->own > 0 && h->shared)
            fprintf(out, " in total");
        if (h->poisson)
            fprintf(out, " (seed %llu)", (unsigned long long)h->seed);
        if (!h->brief || h->drop_when_busy)
            fprintf(out, ", pool up to %s connection%s (%s when busy)", units_fmt_count(h->pool_cap, a, sizeof a),
                    h->pool_cap == 1 ? "" : "s", h->drop_when_busy ? "drop" : "queue");
        if (h->timer_slack_auto)
            fprintf(out, ", sends up to %g%% of the service p50 late (at most %s ms) by --timer-slack auto",
                    100 * RUN_AUTO_SLACK_SHARE, units_fmt_ms((double)RUN_AUTO_SLACK_MAX_NS / 1e6, a, sizeof a));
        else if (h->timer_slack_ns)
            fprintf(out, ", sends up to %s ms late by --timer-slack",
                    units_fmt_ms((double)h->timer_slack_ns / 1e6, a, sizeof a));
    } else if (h->client_stages) {
        fprintf(out, "closed loop, %zu stage%s up to %u client%s", h->client_stages, h->client_stages == 1 ? "" : "s",
                h->clients_peak, h->clients_peak == 1 ? "" : "s");
        if (h->streams > 1)
            fprintf(out, ", %u per connection (--streams)", h->streams);
        if (h->think_ns)
            fprintf(out, ", think %s ms", units_fmt_ms((double)h->think_ns / 1e6, a, sizeof a));
    } else if (h->streams > 1) {
        fprintf(out, "closed loop, %u clients, %u per connection (--streams)", h->conns, h->streams);
    } else {
        fprintf(out, "closed loop, %u connection%s", h->conns, h->conns == 1 ? "" : "s");
        if (h->think_ns)
            fprintf(out, ", think %s", units_fmt_ms((double)h->think_ns / 1e6, a, sizeof a)), fprintf(out, " ms");
    }
    if (h->duration_s > 0)
        fprintf(out, ", %.3g s", h->duration_s);
    if (h->requests)
        fprintf(out, ", %s request%s", units_fmt_count(h->requests, a, sizeof a), h->requests == 1 ? "" : "s");
    fprintf(out, ", %u thread%s", h->threads, h->threads == 1 ? "" : "s");
    if (h->io && *h->io)
        fprintf(out, " on %s", strcmp(h->io, "uring") == 0 ? "io_uring" : h->io);
    if (h->io && *h->io && h->io_asked)
        fprintf(out, " (--io %s)", h->io_asked);
    fprintf(out, "%s\n", h->keepalive ? "" : ", no keep-alive");
}

void runreport_print_target_head(FILE *out, const char *name, const char *url, const char *address, uint64_t resolve_ns)
{
    char rt[32], n[256], u[1024];
    fprintf(out, "  %-10s %s -> %s (resolved in %s)", rr_esc(name, n, sizeof n), rr_esc(url, u, sizeof u), address,
            units_fmt_duration(resolve_ns, rt, sizeof rt));
}

void rr_plan_line(FILE *out, const struct run_record *v, bool brief)
{
    char a[32];
    const struct record_config *c = &v->config;
    struct runreport_head h = {.open_loop = c->open_loop,
                               .poisson = c->arrivals == RUN_ARRIVALS_POISSON,
                               .ramp = c->ramp,
                               .drop_when_busy = c->when_busy == RUN_BUSY_DROP,
                               .keepalive = c->keepalive,
                               .seed = c->seed,
                               .rate = c->rate,
                               .ramp_from = c->ramp_from,
                               .ramp_to = c->ramp_to,
                               .think_ns = c->think_ns,
                               .timer_slack_ns = c->open_loop ? c->timer_slack_ns : 0,
                               .timer_slack_auto = c->open_loop && c->timer_slack_auto,
                               .requests = c->requests,
                               .duration_s = c->duration_ns ? (double)c->duration_ns / 1e9 : 0,
                               .threads = v->threads,
                               .pool_cap = v->pool_cap,
                               .streams = c->streams,
                               .io = v->io != RUN_IO_AUTO ? record_io_name(v->io) : "",
                               .shared = v->ntargets == 0,
                               .brief = brief};
    if (!c->open_loop && c->nstages && c->stages[0].clients) {
        h.client_stages = c->nstages;
        for (size_t j = 0; j < c->nstages; j++)
            h.clients_peak = (uint32_t)fmax(h.clients_peak, fmax(c->stages[j].from, c->stages[j].to));
    }
    for (size_t i = 0; i < v->ntargets; i++) {
        h.conns += v->targets[i].connections;
        if (v->targets[i].own_rate > 0)
            h.own += v->targets[i].own_rate;
        else
            h.shared = true;
    }
    runreport_print_head(out, &h);
    for (size_t i = 0; i < v->ntargets; i++) {
        const struct run_target_result *t = &v->targets[i];
        if (brief && v->ntargets == 1) { /* the head said the rate; a name made of the URL says nothing */
            char n[256], u[1024];
            bool named = !strstr(t->url, t->name);
            fprintf(out, "  %s%s%s -> %s\n", named ? rr_esc(t->name, n, sizeof n) : "", named ? " " : "",
                    rr_esc(t->url, u, sizeof u), t->address);
            continue;
        }
        runreport_print_target_head(out, t->name, t->url, t->address, t->resolve_ns);
        if (c->open_loop)
            fprintf(out, ", %s/s", units_fmt_rate(t->planned_rate, a, sizeof a));
        else if (c->streams > 1)
            fprintf(out, ", %u clients", t->connections);
        else
            fprintf(out, ", %u connection%s", t->connections, t->connections == 1 ? "" : "s");
        fputc('\n', out);
    }
    rr_route_line(out, c);
    rr_precision_line(out, v);
}

void rr_precision_line(FILE *out, const struct run_record *v)
{
    const struct record_config *c = &v->config;
    if (!c->open_loop || !v->all.sum.lag.count || !isfinite(v->all.sum.lag.p99))
        return;
    char a[32];
    fprintf(out, "  precision: lag p99 %s ms", units_fmt_ms(v->all.sum.lag.p99, a, sizeof a));
    if (c->timer_slack_auto)
        fprintf(out, " (--timer-slack auto kept at most %s ms)",
                units_fmt_ms((double)c->timer_slack_ns / 1e6, a, sizeof a));
    const struct run_generator_cpu *g = &v->env.gen_cpu;
    uint64_t sent = v->all.counts.sent + v->all.warmup_counts.sent;
    if (g->threads && sent)
        fprintf(out, "; generator CPU %.1f us per request sent", (g->user_s + g->sys_s) * 1e6 / (double)sent);
    if (v->reads_deferred) /* responses read at the next send's wake, timed by the kernel */
        fprintf(out, "; kernel-timed reads");
    fputc('\n', out);
}

void rr_route_line(FILE *out, const struct record_config *c)
{
    if (!c->proxy && !c->local_addresses && !(c->connect_rate > 0))
        return;
    char a[32];
    const char *sep = "  connections:";
    if (c->proxy) {
        fprintf(out, "%s through the proxy %s", sep, c->proxy);
        sep = ";";
    }
    if (c->local_addresses) {
        fprintf(out, "%s from %s (round-robin)", sep, c->local_addresses);
        sep = ";";
    }
    if (c->connect_rate > 0)
        fprintf(out, "%s at most %s new/s", sep, units_fmt_rate(c->connect_rate, a, sizeof a));
    fputc('\n', out);
}
