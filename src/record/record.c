/* The run record's plain parts (record/record.h): names, counts and their identities,
 * statistics of a histogram, targets' histograms added up, and releasing a record. */
#include "record/record.h"
#include "record/stages.h"

#include "core/err.h"
#include "core/units.h"
#include "h3/h3.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *record_group_name(enum run_group g)
{
    return reqlog_outcome_name((enum reqlog_outcome)g);
}

bool record_outcome_failed(enum reqlog_outcome o)
{
    return o == OUTCOME_HTTP_ERROR || o == OUTCOME_INVALID || o == OUTCOME_TRANSPORT || o == OUTCOME_TIMEOUT;
}

void record_summary_of(const struct hdr *h, struct run_summary *s)
{
    s->count = h && h->counts ? (uint64_t)h->total_count : 0;
    if (!s->count) {
        s->mean = s->stdev = s->min = s->max = s->p50 = s->p90 = s->p95 = s->p99 = s->p999 = NAN;
        return;
    }
    s->mean = hdr_mean(h) / 1e6;
    s->stdev = hdr_stdev(h) / 1e6;
    s->min = (double)hdr_min(h) / 1e6;
    s->max = (double)hdr_max(h) / 1e6;
    s->p50 = (double)hdr_value_at_percentile(h, 50) / 1e6;
    s->p90 = (double)hdr_value_at_percentile(h, 90) / 1e6;
    s->p95 = (double)hdr_value_at_percentile(h, 95) / 1e6;
    s->p99 = (double)hdr_value_at_percentile(h, 99) / 1e6;
    s->p999 = (double)hdr_value_at_percentile(h, 99.9) / 1e6;
}

void record_counts_add(struct run_counts *d, const struct run_counts *s)
{
#define ADD_S(name) d->name += s->name;
#define ADD_A(name, n)                                                                                                 \
    for (size_t i = 0; i < (n); i++)                                                                                   \
        d->name[i] += s->name[i];
    RUN_COUNTS_FIELDS(ADD_S, ADD_A)
#undef ADD_S
#undef ADD_A
}

const char *record_transport_cause_name(enum run_transport_cause c)
{
    static const char *const names[RUN_TC_COUNT] = {
        [RUN_TC_REFUSED] = "refused",
        [RUN_TC_CONNECT] = "connect",
        [RUN_TC_RESET] = "reset",
        [RUN_TC_CLOSED_BEFORE] = "closed_before_response",
        [RUN_TC_CLOSED_MID] = "closed_mid_response",
        [RUN_TC_STALE] = "stale",
        [RUN_TC_TLS_VERIFY] = "tls_verify",
        [RUN_TC_TLS_HOSTNAME] = "tls_hostname",
        [RUN_TC_TLS_EXPIRED] = "tls_expired",
        [RUN_TC_TLS_ALERT] = "tls_alert",
        [RUN_TC_TLS_PROTOCOL] = "tls_protocol",
        [RUN_TC_TLS_ALPN] = "tls_alpn",
        [RUN_TC_TLS_HANDSHAKE_TIMEOUT] = "tls_handshake_timeout",
        [RUN_TC_TLS_CERT_REQUIRED] = "tls_alert_certificate_required",
        [RUN_TC_TLS_BAD_CERT] = "tls_alert_bad_certificate",
        [RUN_TC_H2_RST_STREAM] = "h2_rst_stream",
        [RUN_TC_H2_REFUSED] = "h2_refused",
        [RUN_TC_H2_GOAWAY] = "h2_goaway",
        [RUN_TC_H2_PROTOCOL] = "h2_protocol",
        [RUN_TC_H2_NOT_H2] = "h2_not_h2",
        [RUN_TC_OTHER] = "other",
        [RUN_TC_PROXY_REFUSED] = "proxy_refused",
        [RUN_TC_QUIC_HANDSHAKE] = "quic_handshake",
        [RUN_TC_QUIC_IDLE_TIMEOUT] = "quic_idle_timeout",
        [RUN_TC_H3_STREAM_RESET] = "h3_stream_reset",
        [RUN_TC_QUIC_CLOSE] = "quic_close",
        [RUN_TC_QUIC_VERSION] = "quic_version_negotiation",
        [RUN_TC_H3_PROTOCOL] = "h3_protocol",
    };
    return (unsigned)c < RUN_TC_COUNT ? names[c] : "other";
}

const char *record_tls_version_name(int v)
{
    static const char *const names[RUN_TLS_VERSIONS] = {"TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"};
    return v >= 0 && v < RUN_TLS_VERSIONS ? names[v] : "unknown";
}

void record_proto_counts_add(struct run_proto_counts *d, const struct run_proto_counts *s)
{
    d->http1 += s->http1;
    d->h2 += s->h2;
    for (int v = 0; v < RUN_TLS_VERSIONS; v++)
        d->tls_version[v] += s->tls_version[v];
    d->tls_full += s->tls_full;
    d->tls_resumed += s->tls_resumed;
    d->tls_failed += s->tls_failed;
    d->h2_streams += s->h2_streams;
    d->h2_rst += s->h2_rst;
    d->h2_refused += s->h2_refused;
    d->h2_goaway += s->h2_goaway;
    d->h2_goaway_streams += s->h2_goaway_streams;
    d->h2_retried += s->h2_retried;
    d->h2_stalls += s->h2_stalls;
    d->tls_cert_requested += s->tls_cert_requested;
    if (s->h2_limit_seen)
        record_h2_limit_add(d, s->h2_max_concurrent);
    for (int k = 0; k < RUN_PROXY_STATUS_N; k++)
        d->proxy_refused[k] += s->proxy_refused[k];
    d->h3 += s->h3;
    struct run_quic_counts *dq = &d->quic;
    const struct run_quic_counts *sq = &s->quic;
    dq->streams += sq->streams;
    dq->datagrams_sent += sq->datagrams_sent;
    dq->datagrams_received += sq->datagrams_received;
    dq->bytes_sent += sq->bytes_sent;
    dq->bytes_received += sq->bytes_received;
    dq->send_blocked += sq->send_blocked;
    dq->pto += sq->pto;
    dq->zero_rtt_accepted += sq->zero_rtt_accepted;
    dq->zero_rtt_rejected += sq->zero_rtt_rejected;
    dq->stream_packets_lost += sq->stream_packets_lost;
    if (sq->rtt_connections && (!dq->rtt_connections || sq->rtt_min_us < dq->rtt_min_us))
        dq->rtt_min_us = sq->rtt_min_us;
    dq->rtt_connections += sq->rtt_connections;
    dq->rtt_smoothed_sum_us += sq->rtt_smoothed_sum_us;
    if (sq->rtt_smoothed_max_us > dq->rtt_smoothed_max_us)
        dq->rtt_smoothed_max_us = sq->rtt_smoothed_max_us;
    dq->cwnd_sum_bytes += sq->cwnd_sum_bytes;
    for (int k = 0; k < RUN_QC_COUNT; k++) {
        dq->reset_codes[k] += sq->reset_codes[k];
        dq->close_codes[k] += sq->close_codes[k];
    }
}

/* The slot of an HTTP/3 code, or of a transport one. */
static int quic_slot(uint64_t code, bool app)
{
    if (app)
        return code >= 0x100 && code < 0x100 + RUN_H3_CODES ? RUN_QC_H3 + (int)(code - 0x100) : RUN_QC_OTHER;
    if (code < RUN_QUIC_CODES)
        return RUN_QC_TRANSPORT + (int)code;
    return code >= 0x100 && code <= 0x1ff ? RUN_QC_CRYPTO : RUN_QC_OTHER;
}

void record_quic_reset_add(struct run_quic_counts *q, uint64_t code)
{
    q->reset_codes[quic_slot(code, true)]++;
}

void record_quic_close_add(struct run_quic_counts *q, uint64_t code, bool app)
{
    q->close_codes[quic_slot(code, app)]++;
}

/* The names are src/h3's (one table each for HTTP/3 and QUIC codes); the slots are the record's. */
const char *record_quic_code_name(int k)
{
    const char *n = NULL;
    if (k >= RUN_QC_H3 && k < RUN_QC_TRANSPORT)
        n = h3_error_code_name(0x100 + (uint64_t)k);
    else if (k >= RUN_QC_TRANSPORT && k < RUN_QC_CRYPTO)
        n = quic_error_code_name((uint64_t)(k - RUN_QC_TRANSPORT));
    else if (k == RUN_QC_CRYPTO)
        n = quic_error_code_name(0x100);
    return n ? n : "other";
}

void record_h2_limit_add(struct run_proto_counts *pc, uint64_t limit)
{
    if (!pc->h2_limit_seen || limit > pc->h2_max_concurrent)
        pc->h2_max_concurrent = limit;
    pc->h2_limit_seen = true;
}

void record_target_init(struct run_target_result *r)
{
    memset(r, 0, sizeof *r);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_init(&r->latency[g], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->latency_all, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->service, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->ttfb, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->lag, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->connect, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&r->tls, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
}

void record_target_release(struct run_target_result *r)
{
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_release(&r->latency[g]);
    hdr_release(&r->latency_all);
    hdr_release(&r->service);
    hdr_release(&r->ttfb);
    hdr_release(&r->lag);
    hdr_release(&r->connect);
    hdr_release(&r->tls);
    for (size_t i = 0; i < r->nst; i++)
        hdr_release(&r->st[i].dur);
    r->nst = 0;
    record_stream_release(&r->stream);
}

void record_server_timing_merge(struct run_target_result *d, const struct run_server_timing *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < d->nst && strcmp(d->st[j].name, st[i].name) != 0)
            j++;
        if (j == d->nst) {
            if (d->nst == RUN_ST_MAX_NAMES)
                continue;
            memcpy(d->st[j].name, st[i].name, sizeof d->st[j].name);
            hdr_init(&d->st[j].dur, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
            d->nst++;
        }
        hdr_add(&d->st[j].dur, &st[i].dur);
    }
}

void record_target_add(struct run_target_result *d, const struct run_target_result *s)
{
    record_counts_add(&d->counts, &s->counts);
    record_counts_add(&d->warmup_counts, &s->warmup_counts);
    record_status_add(&d->status, &s->status);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_add(&d->latency[g], &s->latency[g]);
    hdr_add(&d->latency_all, &s->latency_all);
    hdr_add(&d->service, &s->service);
    hdr_add(&d->ttfb, &s->ttfb);
    hdr_add(&d->lag, &s->lag);
    hdr_add(&d->connect, &s->connect);
    hdr_add(&d->tls, &s->tls);
    record_proto_counts_add(&d->pc, &s->pc);
    d->https |= s->https;
    record_server_timing_merge(d, s->st, s->nst);
    record_stream_add(&d->stream, &s->stream);
}

/* d += s for one target of record_add. */
static void target_add(struct run_target_result *d, const struct run_target_result *s)
{
    struct run_target_result t = *s; /* a shallow copy, read only: its protocol counts adjusted */
    if (!t.pc.h2)
        t.pc.h2_limit_seen = false; /* no HTTP/2 connection saw no server limit */
    record_target_add(d, &t);
    record_events_merge(&d->events, &s->events);
    if (isfinite(s->planned_rate))
        d->planned_rate += s->planned_rate;
    d->connections += s->connections;
    if (s->resolve_ns > d->resolve_ns)
        d->resolve_ns = s->resolve_ns;
}

void record_add(struct run_record *dst, const struct run_record *src)
{
    for (size_t i = 0; i < dst->ntargets && i < src->ntargets; i++)
        target_add(&dst->targets[i], &src->targets[i]);
    target_add(&dst->all, &src->all);
    dst->threads += src->threads;
    dst->pool_cap += src->pool_cap;
}

bool record_counts_hold(const struct run_counts *c)
{
    uint64_t done = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            done += c->outcome[o];
    uint64_t causes = 0;
    for (int k = 0; k < RUN_TC_COUNT; k++)
        causes += c->transport_cause[k];
    return c->planned == c->sent + c->dropped && c->sent == done && c->dropped == c->outcome[OUTCOME_DROPPED] &&
           causes == c->outcome[OUTCOME_TRANSPORT] && c->retries <= c->sent;
}

double record_generator_cpu_share(const struct run_generator_cpu *c)
{
    if (!c->threads || !(c->wall_s > 0))
        return NAN;
    return (c->user_s + c->sys_s) / c->wall_s;
}

const char *record_describe_failures(const struct run_counts *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int o = 0; o < OUTCOME_COUNT && off + 1 < len; o++) {
        if (!record_outcome_failed((enum reqlog_outcome)o) || !c->outcome[o])
            continue;
        char n[32];
        off +=
            (size_t)snprintf(buf + off, len - off, "%s%s %s", off ? ", " : "",
                             reqlog_outcome_name((enum reqlog_outcome)o), units_fmt_count(c->outcome[o], n, sizeof n));
    }
    if (!buf[0])
        snprintf(buf, len,
                 !c->sent                       ? "nothing was sent"
                 : c->outcome[OUTCOME_REJECTED] ? "every answer was a rejection"
                                                : "every request was cancelled");
    return buf;
}

const char *record_io_name(enum run_io io)
{
    return io == RUN_IO_URING ? "uring" : io == RUN_IO_EPOLL ? "epoll" : "auto";
}

const char *record_shard_plan_hex(uint64_t plan_id, char *buf, size_t len)
{
    snprintf(buf, len, "%016llx", (unsigned long long)plan_id);
    return buf;
}

bool record_shard_plan_parse(const char *s, uint64_t *plan_id)
{
    if (!s || strlen(s) != 16)
        return false;
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        int c = tolower((unsigned char)s[i]);
        if (!isxdigit(c))
            return false;
        v = v * 16 + (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
    }
    *plan_id = v;
    return true;
}

const char *record_shard_utc(uint64_t unix_ns, char *buf, size_t len)
{
    time_t s = (time_t)(unix_ns / 1000000000ULL);
    struct tm tm;
    char day[40] = "?";
    if (gmtime_r(&s, &tm))
        strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03lluZ", day, (unsigned long long)(unix_ns % 1000000000ULL / 1000000ULL));
    return buf;
}

bool record_schema_readable(const char *schema)
{
    return schema && (strcmp(schema, RUN_JSON_SCHEMA) == 0 || strcmp(schema, "knee-run/1") == 0);
}

void record_config_release(struct record_config *c)
{
    free(c->tls_cacert);
    free(c->tls_ciphers);
    free(c->expect_body);
    free(c->proxy);
    free(c->local_addresses);
    for (size_t i = 0; i < c->nrejects; i++)
        free((char *)c->rejects[i].body);
    free(c->rejects);
    free(c->stages);
    for (int i = 0; i < c->argc; i++)
        free(c->argv[i]);
    free(c->argv);
    record_setup_release(&c->setup);
    free(c->tls_cert);
    free(c->tls_key);
    free(c->unix_socket);
    for (size_t i = 0; i < c->nconnect_to; i++)
        free(c->connect_to[i]);
    free(c->connect_to);
    memset(c, 0, sizeof *c);
}

void record_release(struct run_record *res)
{
    if (res->targets) {
        for (size_t i = 0; i < res->ntargets; i++)
            record_target_release(&res->targets[i]);
        free(res->targets);
    }
    record_target_release(&res->all);
    warn_list_release(&res->warnings);
    free(res->ticks);
    free(res->thresholds);
    free(res->shard.parts);
    record_config_release(&res->config);
    record_stages_free(res->stages, res->nstages);
    record_entries_release(&res->entries);
    memset(res, 0, sizeof *res);
}
