/* Recording of a load thread: what a request's outcome adds to its target's counts and
 * histograms, to the interval, to the events by time (record/rates.c) and to the per-request
 * log; and the pure classifiers that name an outcome or a transport failure's cause. */
#include "load/worker.h"

#include "core/clock.h"
#include "core/err.h"
#include "record/stages.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ the log and the events */

/* Times since t0 in the log; an event that happened is never 0 there (0 means "none"). */
static uint64_t since_t0(uint64_t t, uint64_t t0)
{
    return t > t0 ? t - t0 : 1;
}

static void log_record(struct worker *w, const struct target_rt *t, const struct req *r, uint64_t planned_ns, bool warm,
                       enum reqlog_outcome o, uint64_t done_ns)
{
    if (!w->chunk)
        return;
    uint64_t t0 = w->e->t0_ns;
    struct reqlog_record *rec = &w->chunk->rec[w->chunk->n++];
    memset(rec, 0, sizeof *rec);
    rec->planned_ns = planned_ns - t0;
    rec->target = (uint32_t)t->index;
    rec->outcome = (uint8_t)o;
    rec->flags = warm ? REQLOG_FLAG_WARMUP : 0;
    if (r) {
        rec->sent_ns = since_t0(r->sent_ns, t0);
        if (!w->e->cfg->plan.open_loop)
            rec->planned_ns = rec->sent_ns; /* closed loop: latency is measured from the send */
        rec->first_byte_ns = r->first_byte_ns ? since_t0(r->first_byte_ns, t0) : 0;
        rec->done_ns = o == OUTCOME_CANCELLED ? 0 : since_t0(done_ns, t0);
        rec->connect_ns = r->connect_ns;
        rec->tls_ns = r->tls_ns;
        rec->protocol = r->proto;
        rec->tls = r->tls_kind;
        rec->bytes = r->resp.bytes;
        rec->connection = r->conn_id;
        rec->status = (uint16_t)(r->resp.status > 0 && r->resp.status < 1000 ? r->resp.status : 0);
        rec->entry = r->var ? r->var->entry + 1 : 0;
        if (r->resp.ev.on) {
            rec->events = r->resp.ev.count + 1;
            rec->first_event_ns = r->resp.ev.count ? since_t0(r->resp.ev.first_ns, t0) : 0;
        }
    }
    if (t->et->log_gaps) /* every record of such a log has a gap list, empty when it has no gaps */
        outlog_chunk_gaps(w->chunk, w->chunk->n - 1, r ? r->gaps : NULL, r ? r->ngaps : 0);
    if (w->chunk->n == OUTLOG_CHUNK_RECORDS || w->chunk->gaps_used >= OUTLOG_CHUNK_GAPS) {
        outlog_submit(w->e->log, w->chunk);
        w->chunk = outlog_take(w->e->log, &w->log_slowed);
    }
}

/* The timeline's counts of the interval holding t (ns since t0), grown on demand. */
static struct ival_counts *tick_at(struct worker *w, uint64_t t)
{
    uint64_t k = engine_tick_of(w->e, t);
    if (k >= w->ntk) {
        size_t n = w->ntk ? w->ntk : 16;
        while (n <= k)
            n *= 2;
        w->tk = xrealloc(w->tk, n * sizeof *w->tk);
        memset(w->tk + w->ntk, 0, (n - w->ntk) * sizeof *w->tk);
        w->ntk = n;
    }
    return &w->tk[k];
}

/* A request has its outcome: count its events by their times (record/rates.c) and in the
 * timeline's intervals, from the nanoseconds since t0 the log gets (closed loop: planned =
 * sent), so the rates, the timeline and the log agree to the request. */
static void count_events(struct worker *w, struct target_rt *t, const struct req *r, uint64_t planned_ns,
                         enum reqlog_outcome o, uint64_t done_ns)
{
    uint64_t t0 = w->e->t0_ns;
    uint64_t planned = planned_ns > t0 ? planned_ns - t0 : 0;
    uint64_t sent = r ? since_t0(r->sent_ns, t0) : 0;
    if (r && !w->e->cfg->plan.open_loop)
        planned = sent;
    uint64_t done = r && o != OUTCOME_CANCELLED ? since_t0(done_ns, t0) : 0;
    record_events_count(&t->ev, planned, sent, done, o);
    if (w->nstg)
        record_stages_count(w->stg, w->nstg, planned, sent, done, o);
    struct ival_counts *k = tick_at(w, planned);
    k->planned++;
    if (o == OUTCOME_DROPPED)
        k->dropped++;
    if (sent)
        tick_at(w, sent)->sent++;
    if (done) {
        k = tick_at(w, done);
        k->completed++;
        if (o == OUTCOME_OK)
            k->ok++;
        else
            k->errors++;
    }
}

/* ------------------------------------------------------------------ histograms */

static struct hdr *group_hist(struct target_rt *t, enum run_group g)
{
    struct hdr *h = &t->latency[g];
    if (!h->counts) /* error groups are allocated on first use: most runs never need them */
        hdr_init(h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    return h;
}

static void record_server_timing(struct target_rt *t, const struct http_response *resp)
{
    for (size_t i = 0; i < resp->nst; i++) {
        const struct http_server_timing *m = &resp->st[i];
        if (isnan(m->dur_ms))
            continue;
        size_t j = 0;
        while (j < t->nst && strcmp(t->st[j].name, m->name) != 0)
            j++;
        if (j == t->nst) {
            if (t->nst == RUN_ST_MAX_NAMES)
                continue; /* a cap on names the server controls */
            snprintf(t->st[j].name, sizeof t->st[j].name, "%s", m->name);
            hdr_init(&t->st[j].dur, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
            t->nst++;
        }
        double ns = m->dur_ms * 1e6;
        hdr_record(&t->st[j].dur, ns < 1 ? 1 : (ns > 9e18 ? INT64_MAX : (int64_t)llround(ns)), 1);
    }
}

/* ------------------------------------------------------------------ streamed responses */

/* The gaps of one read into s: the one since the last event before it, then the events that
 * came in the same read (no time between them). */
static void stream_gaps(struct run_stream *s, const struct http_events *e, uint32_t before, uint64_t last_ns)
{
    if (before)
        record_stream_hist(&s->event_gap, (int64_t)(e->last_ns - last_ns), 1);
    if (e->count - before > 1)
        record_stream_hist(&s->event_gap, 0, (int64_t)(e->count - before - 1));
}

/* The same gaps onto the request's own list, for a log that carries them: its first
 * REQLOG_MAX_GAPS (a stream that never ends must not eat memory without bound). */
static void req_keep_gaps(struct req *r, const struct http_events *e, uint32_t before, uint64_t last_ns)
{
    uint32_t n = before ? e->count - before : e->count - 1;
    if (n > REQLOG_MAX_GAPS - r->ngaps)
        n = REQLOG_MAX_GAPS - r->ngaps;
    if (!n)
        return;
    if (n > r->gaps_cap - r->ngaps) {
        uint32_t cap = r->gaps_cap ? r->gaps_cap : 16;
        while (cap - r->ngaps < n) /* ngaps + n <= 2^24: no overflow */
            cap *= 2;
        r->gaps = xrealloc(r->gaps, (size_t)cap * sizeof *r->gaps);
        r->gaps_cap = cap;
    }
    uint64_t *g = r->gaps + r->ngaps;
    uint32_t i = 0;
    if (before)
        g[i++] = e->last_ns > last_ns ? e->last_ns - last_ns : 0;
    memset(g + i, 0, (size_t)(n - i) * sizeof *g);
    r->ngaps += n;
}

void account_stream_gaps(struct req *r, uint32_t before, uint64_t last_ns)
{
    const struct http_events *e = &r->resp.ev;
    if (e->count <= before)
        return;
    if (r->t->et->log_gaps)
        req_keep_gaps(r, e, before, last_ns);
    /* the interval's histograms (warm-up included, as the interval's latency): the gaps and the
     * first event as they arrive, so a stalled stream shows in the second it stalls */
    struct run_stream *iv = &r->t->ival_stream;
    stream_gaps(iv, e, before, last_ns);
    if (!before && r->c) {
        uint64_t from = r->c->w->e->cfg->plan.open_loop ? r->planned_ns : r->sent_ns;
        record_stream_hist(&iv->first_event, e->first_ns > from ? (int64_t)(e->first_ns - from) : 0, 1);
    }
    iv->events += e->count - before;
    if (!r->warm)
        stream_gaps(&r->t->stream, e, before, last_ns);
}

/* A response timed as events ended: its first event (from `from`, the latency's start), its count. */
static void stream_done(struct target_rt *t, const struct req *r, uint64_t from)
{
    const struct http_events *e = &r->resp.ev;
    struct run_stream *s = &t->stream;
    s->responses++;
    s->events += e->count;
    s->not_sse += e->not_sse;
    s->partial += http_events_partial(e);
    record_stream_hist(&s->per_response, e->count, 1);
    if (e->count)
        record_stream_hist(&s->first_event, e->first_ns > from ? (int64_t)(e->first_ns - from) : 0, 1);
}

/* ------------------------------------------------------------------ requests */

void ival_live_status(struct ival_live *l, uint16_t code, uint64_t n)
{
    for (size_t i = 0; i < RUN_PROGRESS_STATUS_MAX; i++) {
        if (l->status[i].code == code) {
            l->status[i].count += n;
            return;
        }
        if (l->status[i].code == 0) { /* a short list: a server rarely sends more than a few codes */
            l->status[i].code = code;
            l->status[i].count = n;
            return;
        }
    }
    l->status_other += n;
}

void account_dropped(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm)
{
    struct run_counts *rc = counts_of(t, warm);
    rc->dropped++;
    rc->outcome[OUTCOME_DROPPED]++;
    w->ic.dropped++;
    w->il.outcome[OUTCOME_DROPPED]++;
    log_record(w, t, NULL, planned_ns, warm, OUTCOME_DROPPED, 0);
    count_events(w, t, NULL, planned_ns, OUTCOME_DROPPED, 0);
}

void account_record(struct worker *w, struct req *r, enum reqlog_outcome o, uint64_t done_ns)
{
    struct target_rt *t = r->t;
    struct engine *e = w->e;
    struct run_counts *rc = counts_of(t, r->warm);
    rc->outcome[o]++;
    if (o == OUTCOME_TRANSPORT)
        rc->transport_cause[r->tcause < RUN_TC_COUNT ? r->tcause : RUN_TC_OTHER]++;
    rc->bytes_in += r->resp.bytes;
    t->bytes_out += r->write_off; /* the request's bytes written (live metrics; HTTP/2 counts its frames) */
    w->il.outcome[o]++;
    if (o <= OUTCOME_INVALID && r->resp.status >= 100 && r->resp.status <= 599)
        ival_live_status(&w->il, (uint16_t)r->resp.status, 1);
    int64_t lat = 0;
    if (o != OUTCOME_CANCELLED) {
        uint64_t from = e->cfg->plan.open_loop ? r->planned_ns : r->sent_ns;
        lat = (int64_t)(done_ns - from);
        w->ic.completed++;
        if (o == OUTCOME_OK)
            w->ic.ok++;
        else
            w->ic.errors++;
        if (o == OUTCOME_TRANSPORT && r->tcause == RUN_TC_REFUSED)
            w->ic.refused++;
        hdr_record(&t->ival, lat, 1);
        if (w->nstg && o == OUTCOME_OK)
            record_stages_latency(w->stg, w->nstg, r->planned_ns > e->t0_ns ? r->planned_ns - e->t0_ns : 0, lat);
        if ((uint64_t)lat > t->ival_max_ns)
            t->ival_max_ns = (uint64_t)lat;
        if (!r->warm) {
            if (o <= OUTCOME_INVALID) /* ok, rejected, http_error, invalid: a status line may have been read */
                record_status_count(&t->status, r->resp.status);
            hdr_record(group_hist(t, (enum run_group)o), lat, 1);
            hdr_record(&t->service, (int64_t)(done_ns - r->sent_ns), 1);
            if (r->first_byte_ns)
                hdr_record(&t->ttfb, (int64_t)(r->first_byte_ns - r->sent_ns), 1);
            if (r->resp.nst)
                record_server_timing(t, &r->resp);
            if (r->resp.ev.on)
                stream_done(t, r, from);
        }
    }
    /* the entry's row (a targets file held as a table): its own thread's array, no lock */
    if (w->ent && r->var && !r->warm && t->et->entries && r->var->entry < e->nent)
        record_entry_count(&w->ent[r->var->entry], o, lat > 0 ? (uint64_t)lat : 0, r->resp.status);
    log_record(w, t, r, r->planned_ns, r->warm, o, done_ns);
    count_events(w, t, r, r->planned_ns, o, done_ns);
}

void account_sent(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm, uint64_t sent_ns)
{
    struct engine *e = w->e;
    struct run_counts *rc = counts_of(t, warm);
    rc->sent++;
    if (sent_ns <= e->window_end_ns + e->lag_limit_ns + e->timer_slack_ns)
        rc->sent_on_time++;
    if (!warm)
        hdr_record(&t->lag, (int64_t)(sent_ns - planned_ns), 1);
    w->ic.sent++;
    uint64_t lag = sent_ns > planned_ns ? sent_ns - planned_ns : 0;
    if (lag > w->il.lag_max_ns)
        w->il.lag_max_ns = lag;
    if (lag > e->lag_limit_ns + e->timer_slack_ns)
        w->il.late++;
}

void account_unconnected(struct worker *w, struct target_rt *t, uint64_t planned_ns, bool warm, uint64_t sent_ns,
                         enum run_transport_cause cause, bool counted)
{
    struct req tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.t = t;
    tmp.conn_id = w->conn_seq++ * w->e->nworkers + w->index;
    tmp.planned_ns = planned_ns;
    tmp.sent_ns = sent_ns;
    tmp.warm = warm;
    tmp.tcause = (uint8_t)cause;
    if (!counted)
        account_sent(w, t, planned_ns, warm, sent_ns);
    account_record(w, &tmp, OUTCOME_TRANSPORT, clock_now_ns());
}

/* ------------------------------------------------------------------ classifiers */

enum reqlog_outcome account_classify(const struct engine_target *et, const struct http_response *r)
{
    for (size_t i = 0; i < et->nrejects; i++)
        if (et->reject_status[i] == r->status &&
            (et->reject_bit[i] == ENGINE_NO_NEEDLE || (r->matched & (1u << et->reject_bit[i]))))
            return OUTCOME_REJECTED;
    if (r->status >= 200 && r->status < 400) {
        if (et->expect_bit != ENGINE_NO_NEEDLE && !(r->matched & (1u << et->expect_bit)))
            return OUTCOME_INVALID;
        if (r->ev.on && http_events_partial(&r->ev))
            return OUTCOME_INVALID; /* a stream that ended inside an event */
        return OUTCOME_OK;
    }
    return OUTCOME_HTTP_ERROR;
}

enum run_transport_cause account_connect_cause(int err)
{
    return err == -ECONNREFUSED ? RUN_TC_REFUSED : RUN_TC_CONNECT;
}

enum run_transport_cause account_tls_cause(enum tls_reason r)
{
    switch (r) {
    case TLS_R_VERIFY:
        return RUN_TC_TLS_VERIFY;
    case TLS_R_HOSTNAME:
        return RUN_TC_TLS_HOSTNAME;
    case TLS_R_EXPIRED:
        return RUN_TC_TLS_EXPIRED;
    case TLS_R_ALERT:
        return RUN_TC_TLS_ALERT;
    case TLS_R_PROTOCOL:
        return RUN_TC_TLS_PROTOCOL;
    case TLS_R_ALPN:
        return RUN_TC_TLS_ALPN;
    case TLS_R_HANDSHAKE_TIMEOUT:
        return RUN_TC_TLS_HANDSHAKE_TIMEOUT;
    case TLS_R_ALERT_CERT_REQUIRED:
        return RUN_TC_TLS_CERT_REQUIRED;
    case TLS_R_ALERT_BAD_CERT:
        return RUN_TC_TLS_BAD_CERT;
    default:
        return RUN_TC_OTHER;
    }
}

enum run_transport_cause account_io_cause(const struct req *r, int err)
{
    bool reset = err == -ECONNRESET || err == -EPIPE;
    if ((reset || err == 0) && r && r->reused && !r->first_byte_ns)
        return RUN_TC_STALE;
    if (reset)
        return RUN_TC_RESET;
    if (err == 0)
        return r && r->first_byte_ns ? RUN_TC_CLOSED_MID : RUN_TC_CLOSED_BEFORE;
    return RUN_TC_OTHER;
}

enum run_transport_cause account_fail_cause(const struct conn *c, const struct req *r, bool eof)
{
    int err = 0;
    if (!eof && c->tls_on && c->tls.reason != TLS_R_NONE) {
        if (c->tls.reason == TLS_R_CLOSED)
            eof = true;
        else if (c->tls.reason == TLS_R_SOCKET)
            err = -(c->tls.sys_errno ? c->tls.sys_errno : EIO);
        else
            return account_tls_cause(c->tls.reason);
    } else if (!eof) {
        err = -(c->sys_errno ? c->sys_errno : EIO);
    }
    return account_io_cause(r, eof ? 0 : err);
}

enum run_transport_cause account_stream_cause(enum h2_reason reason, const struct conn *c, const struct req *r)
{
    switch (reason) {
    case H2_R_REFUSED:
        return RUN_TC_H2_REFUSED;
    case H2_R_GOAWAY:
        return RUN_TC_H2_GOAWAY;
    case H2_R_RST_STREAM:
        return RUN_TC_H2_RST_STREAM;
    case H2_R_PROTOCOL:
        return RUN_TC_H2_PROTOCOL;
    case H2_R_NOT_H2:
        return RUN_TC_H2_NOT_H2;
    default: /* H2_R_CLOSED: the connection ended under the stream */
        return c->fail_cause ? (enum run_transport_cause)(c->fail_cause - 1) : account_io_cause(r, 0);
    }
}
