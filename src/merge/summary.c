/* The merged summary: the shards' knee run JSON documents added up into one struct run_config
 * and struct run_result, which knee run's own printers then print. Counts are summed, the
 * histograms each shard carries in its "shard" object are added index by index (with the
 * exact minimum and maximum), the shards' events (struct run_events, also in the "shard"
 * object) are added as the engine adds its threads' — or counted again from the shards'
 * per-request logs over the merged window — and every verdict is re-derived from the sums:
 * the accounting identities, the plan check, failed shards; generator-limited is the shards'
 * own verdict (any shard). */
#include "merge/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "hlog/codec.h"
#include "plan/shard.h"
#include "reqlog/reqlog.h"
#include "runreport/runreport.h"
#include "stats/stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHARD_WARNINGS 20 /* per-shard warnings carried into the merge (the rest: in the shards' JSON) */
#define MAX_PLAN_DRAWS 200000000ULL
#define MAX_TICKS 1000000 /* seconds of merged timeline (11.5 days): a document cannot ask for more */

#define MAX_SHARD_OFFSET_NS (1000000ULL * NS_PER_S) /* t0s further apart than MAX_TICKS: not one run */
#define MAX_EVENT_NS 4000000000000000000ULL         /* an event time a document may give (126 years) */

struct doc {
    json_t *root;
    const char *path;
    uint32_t index;
    uint64_t t0_unix_ns;
    uint64_t off_ns;       /* t0 - the earliest t0: where this shard's times sit on the merged axis */
    uint64_t ws_ns, we_ns; /* its window on the merged axis */
    double window_s, elapsed_s;
};

struct ctx {
    struct merge_summary *m;
    uint32_t count;
    struct doc *docs;
    struct hlog_codec *codec;
    bool same_t0;           /* every shard's t0 is one instant (a shared start instant) */
    bool identities_ok;     /* the merged counts' accounting identities hold */
    struct run_rates *sums; /* without: the shards' rates summed, per target and [ntargets] for all */
    char *err;
    size_t errlen;
};

static int failf(struct ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(struct ctx *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (c->err && c->errlen)
        vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    return code;
}

static char *keep(struct merge_summary *m, const char *s)
{
    m->strings = xrealloc(m->strings, (m->nstrings + 1) * sizeof *m->strings);
    return m->strings[m->nstrings++] = xstrdup(s ? s : "");
}

/* ---- reading numbers ---- */

static const char *str_or(const char *s, const char *otherwise)
{
    return s ? s : otherwise;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static bool u64(const json_t *o, const char *key, uint64_t *out)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

/* A count that must be there. */
static int need_u64(struct ctx *c, const struct doc *d, const json_t *o, const char *where, const char *key,
                    uint64_t *out)
{
    if (!u64(o, key, out))
        return failf(c, KNEE_EFORMAT, "%s: %s.%s is missing or not a count", d->path, where, key);
    return 0;
}

/* A number of the document as an integer within [lo, hi] (0 when not a number): hostile
 * documents must not reach a float-to-integer conversion out of range. */
static double within(double v, double lo, double hi)
{
    return !(v == v) ? 0 : v < lo ? lo : v > hi ? hi : v;
}

static uint64_t ns_of_s(double s)
{
    return (uint64_t)llround(within(s * 1e9, 0, 9e18));
}

/* ---- histograms ---- */

static void result_hdr_init(struct hdr *h)
{
    hdr_init(h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
}

static void target_init(struct run_target_result *r)
{
    memset(r, 0, sizeof *r);
    run_events_init(&r->events, UINT64_MAX, 0); /* merging widens it */
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        result_hdr_init(&r->latency[g]);
    result_hdr_init(&r->latency_all);
    result_hdr_init(&r->service);
    result_hdr_init(&r->ttfb);
    result_hdr_init(&r->lag);
    result_hdr_init(&r->connect);
}

/* dst += the histogram in entry e ({"count", "min_ns", "max_ns", "hdr"}); none when absent or
 * empty. The encoding keeps the counts; the exact extremes come from min_ns/max_ns, which
 * must lie in the extreme buckets (else the document was altered). */
static int add_hist(struct ctx *c, const struct doc *d, const json_t *e, const char *what, struct hdr *dst)
{
    uint64_t count = 0;
    if (!e || (u64(e, "count", &count) && count == 0))
        return 0;
    const char *text = json_string_value(json_object_get(e, "hdr"));
    uint64_t mn, mx;
    if (!text || !u64(e, "min_ns", &mn) || !u64(e, "max_ns", &mx))
        return failf(c, KNEE_EFORMAT, "%s: histogram %s has no hdr, min_ns or max_ns", d->path, what);
    struct hdr h;
    char why[256] = "";
    int r = hlog_decode_base64(c->codec, text, strlen(text), &h, why, sizeof why);
    if (r)
        return failf(c, r, "%s: histogram %s: %s", d->path, what, why[0] ? why : knee_strerror(r));
    if ((uint64_t)h.total_count != count || !hdr_values_equivalent(&h, (int64_t)mn, h.min_value) ||
        !hdr_values_equivalent(&h, (int64_t)mx, h.max_value)) {
        hdr_release(&h);
        return failf(c, KNEE_EFORMAT, "%s: histogram %s: its count or extremes disagree with its buckets", d->path,
                     what);
    }
    h.min_value = (int64_t)mn;
    h.max_value = (int64_t)mx;
    uint64_t of = 0, ofmax = 0;
    if (u64(e, "overflow", &of)) {
        u64(e, "overflow_max_ns", &ofmax);
        h.overflow_count = (int64_t)of;
        h.overflow_max = (int64_t)ofmax;
    }
    if (!dst->counts)
        result_hdr_init(dst);
    r = hdr_add(dst, &h);
    hdr_release(&h);
    if (r)
        return failf(c, r, "%s: histogram %s: %s", d->path, what, knee_strerror(r));
    return 0;
}

/* The shard's events of one target (or all) from its "events" object, moved onto the merged
 * time axis: d->off_ns later when the shards have no common t0. */
static int read_events(struct ctx *c, const struct doc *d, const json_t *e, const char *name, struct run_events *ev)
{
    static const char *const keys[] = {
        "window_start_ns", "window_end_ns", "planned",        "sent",  "completed",     "ok",
        "sent_before",     "sent_late",     "completed_late", "sends", "first_send_ns", "last_send_ns"};
    uint64_t v[12];
    if (!json_is_object(e))
        return failf(c, KNEE_EFORMAT,
                     "%s: histograms of %s: no events (a shard's JSON from a knee before the knee-run/2 schema; run "
                     "the shards with this knee)",
                     d->path, name);
    for (size_t k = 0; k < 12; k++)
        if (!u64(e, keys[k], &v[k]) || (k < 2 || k >= 10 ? v[k] > MAX_EVENT_NS : false))
            return failf(c, KNEE_EFORMAT, "%s: histograms of %s: events.%s is missing or out of range", d->path, name,
                         keys[k]);
    if (v[0] > v[1] || v[10] > v[11])
        return failf(c, KNEE_EFORMAT, "%s: histograms of %s: events out of order", d->path, name);
    *ev = (struct run_events){.window_start_ns = v[0] + d->off_ns,
                              .window_end_ns = v[1] + d->off_ns,
                              .planned = v[2],
                              .sent = v[3],
                              .completed = v[4],
                              .ok = v[5],
                              .sent_before = v[6],
                              .sent_late = v[7],
                              .completed_late = v[8],
                              .sends = v[9],
                              .first_send_ns = v[9] ? v[10] + d->off_ns : 0,
                              .last_send_ns = v[9] ? v[11] + d->off_ns : 0};
    return 0;
}

/* A shard's events of target slot (ntargets: all) added to r's; without a common t0, its
 * rates over its own window added to the sums. */
static int add_events(struct ctx *c, const struct doc *d, const json_t *th, size_t slot, struct run_target_result *r)
{
    const char *name = json_string_value(json_object_get(th, "name"));
    struct run_events ev;
    int rc = read_events(c, d, json_object_get(th, "events"), name ? name : "?", &ev);
    if (rc)
        return rc;
    run_events_merge(&r->events, &ev);
    if (slot == c->m->res.ntargets) {
        c->docs[d->index].ws_ns = ev.window_start_ns;
        c->docs[d->index].we_ns = ev.window_end_ns;
    }
    struct run_rates own, *sum = &c->sums[slot];
    run_rates_of(&ev, &own);
    double *to[] = {&sum->planned, &sum->sent, &sum->completed, &sum->goodput, &sum->achieved_send};
    const double from[] = {own.planned, own.sent, own.completed, own.goodput, own.achieved_send};
    for (size_t k = 0; k < 5; k++)
        *to[k] += isfinite(from[k]) ? from[k] : 0;
    return 0;
}

static int add_target_hists(struct ctx *c, const struct doc *d, const json_t *th, size_t slot,
                            struct run_target_result *r)
{
    char what[128];
    const char *name = json_string_value(json_object_get(th, "name"));
    snprintf(what, sizeof what, "%s.latency", name ? name : "?");
    int rc = add_hist(c, d, json_object_get(th, "latency"), what, &r->latency_all);
    const json_t *bo = json_object_get(th, "by_outcome");
    for (int g = 0; g < RUN_GROUP_COUNT && !rc; g++) {
        snprintf(what, sizeof what, "%s.by_outcome.%s", name ? name : "?", run_group_name((enum run_group)g));
        rc = add_hist(c, d, json_object_get(bo, run_group_name((enum run_group)g)), what, &r->latency[g]);
    }
    /* "tls": an https target's handshake times (absent for a plain one) */
    static const char *const keys[] = {"service", "ttfb", "lag", "connect", "tls"};
    struct hdr *dst[] = {&r->service, &r->ttfb, &r->lag, &r->connect, &r->tls};
    for (size_t k = 0; k < 5 && !rc; k++) {
        snprintf(what, sizeof what, "%s.%s", name ? name : "?", keys[k]);
        rc = add_hist(c, d, json_object_get(th, keys[k]), what, dst[k]);
    }
    const char *st_name;
    json_t *st_h;
    json_object_foreach(json_object_get(th, "server_timing"), st_name, st_h)
    {
        if (rc)
            break;
        size_t j = 0;
        while (j < r->nst && strcmp(r->st[j].name, st_name) != 0)
            j++;
        if (j == r->nst) {
            if (r->nst == RUN_ST_MAX_NAMES)
                continue;
            snprintf(r->st[j].name, sizeof r->st[j].name, "%s", st_name);
            result_hdr_init(&r->st[j].dur);
            r->nst++;
        }
        snprintf(what, sizeof what, "%s.server_timing.%s", name ? name : "?", st_name);
        rc = add_hist(c, d, st_h, what, &r->st[j].dur);
    }
    uint64_t on_time = 0;
    if (!rc && !u64(th, "sent_on_time", &on_time))
        rc = failf(c, KNEE_EFORMAT, "%s: histograms of %s: no sent_on_time", d->path, name ? name : "?");
    r->counts.sent_on_time += on_time;
    if (!rc)
        rc = add_events(c, d, th, slot, r);
    return rc;
}

/* ---- counts ---- */

/* One shard's accounting object read into *out (zeroed by the caller); the caller adds it to
 * the sums with run_counts_add, so every counter of RUN_COUNTS_FIELDS is summed one way. */
static int read_counts(struct ctx *c, const struct doc *d, const json_t *acc, const char *where, struct run_counts *out)
{
    if (!json_is_object(acc))
        return failf(c, KNEE_EFORMAT, "%s: no %s object", d->path, where);
    uint64_t v = 0, planned = 0, sent = 0, dropped = 0;
    int r = need_u64(c, d, acc, where, "planned", &planned);
    if (!r)
        r = need_u64(c, d, acc, where, "sent", &sent);
    if (!r)
        r = need_u64(c, d, acc, where, "dropped", &dropped);
    if (r)
        return r;
    out->planned = planned;
    out->sent = sent;
    out->dropped = dropped;
    if (u64(acc, "queued", &v))
        out->queued = v;
    if (u64(acc, "queue_overflow", &v))
        out->queue_overflow = v;
    const json_t *oc = json_object_get(acc, "outcomes");
    char w[96];
    snprintf(w, sizeof w, "%s.outcomes", where);
    for (int o = 0; o < OUTCOME_COUNT && !r; o++) {
        v = 0;
        r = need_u64(c, d, oc, w, reqlog_outcome_name((enum reqlog_outcome)o), &v);
        out->outcome[o] = v;
    }
    /* why the transport outcomes failed (they add up to outcomes.transport) and --retry-stale's
     * second attempts: summed like the outcomes, checked by run_counts_hold */
    const json_t *tc = json_object_get(acc, "transport_causes");
    snprintf(w, sizeof w, "%s.transport_causes", where);
    for (int k = 0; k < RUN_TC_COUNT && !r; k++) {
        v = 0;
        r = need_u64(c, d, tc, w, run_transport_cause_name((enum run_transport_cause)k), &v);
        out->transport_cause[k] = v;
    }
    if (!r)
        r = need_u64(c, d, acc, where, "retries", &v);
    if (!r)
        out->retries = v;
    return r;
}

static int add_target(struct ctx *c, const struct doc *d, const json_t *t, struct run_target_result *r)
{
    struct run_counts after = {0}, warm = {0};
    int rc = read_counts(c, d, json_object_get(t, "accounting"), "accounting", &after);
    if (!rc)
        rc = read_counts(c, d, json_object_get(t, "warmup"), "warmup", &warm);
    if (rc)
        return rc;
    const json_t *cn = json_object_get(t, "connections");
    uint64_t v;
    if (u64(cn, "opened", &v))
        after.conns_opened = v;
    if (u64(cn, "failed", &v))
        after.conns_failed = v;
    if (u64(cn, "closed_by_server", &v))
        after.conns_closed_by_peer = v;
    if (u64(cn, "unsolicited_bytes", &v))
        after.conns_unsolicited = v;
    if (u64(t, "bytes_in", &v))
        after.bytes_in = v;
    /* protocols, TLS versions and handshakes, HTTP/2 streams: summed (a shard with no HTTP/2
     * connection saw no server limit) */
    struct run_proto_counts pc;
    r->https |= record_read_transport(t, &pc);
    if (!pc.h2)
        pc.h2_max_concurrent = 0;
    run_proto_counts_add(&r->pc, &pc);
    run_counts_add(&r->counts, &after);
    run_counts_add(&r->warmup_counts, &warm);
    double pr = num(t, "planned_rate");
    if (isfinite(pr))
        r->planned_rate += pr;
    if (u64(t, "clients", &v))
        r->connections += (uint32_t)v;
    double res_ms = num(t, "resolve_ms");
    uint64_t res_ns = (uint64_t)within(res_ms * 1e6, 0, 9e18);
    if (res_ns > r->resolve_ns)
        r->resolve_ns = res_ns;
    return 0;
}

/* ---- configuration (shard 0's; the plan id says the others agree) ---- */

static int tls_version_number(const json_t *v)
{
    const char *s = json_string_value(v);
    for (int k = 0; s && k < RUN_TLS_VERSIONS; k++)
        if (strcmp(s, run_tls_version_name(k)) == 0)
            return 0x0301 + k; /* RUN_TLS_V10 .. RUN_TLS_V13: TLS 1.0 .. 1.3 */
    return 0;
}

/* config.tls (https targets), "h2c", "streams", "requests_per_connection" */
static void read_transport_config(struct merge_summary *m, const json_t *jc)
{
    struct run_config *cfg = &m->cfg;
    const json_t *tls = json_object_get(jc, "tls");
    uint64_t v;
    if (json_is_object(tls)) {
        cfg->tls_insecure = json_is_false(json_object_get(tls, "verify"));
        cfg->tls_no_resume = json_is_false(json_object_get(tls, "resume"));
        const char *s = json_string_value(json_object_get(tls, "cacert"));
        cfg->tls_cacert = s ? keep(m, s) : NULL;
        s = json_string_value(json_object_get(tls, "ciphers"));
        cfg->tls_ciphers = s ? keep(m, s) : NULL;
        const json_t *vs = json_object_get(tls, "versions");
        cfg->tls_min_version = tls_version_number(json_array_get(vs, 0));
        cfg->tls_max_version = tls_version_number(json_array_get(vs, 1));
        s = str_or(json_string_value(json_object_get(tls, "alpn")), "");
        cfg->http = strcmp(s, "http/1.1") == 0 ? RUN_HTTP_1 : strcmp(s, "h2") == 0 ? RUN_HTTP_2 : RUN_HTTP_AUTO;
    }
    cfg->h2c = json_is_true(json_object_get(jc, "h2c"));
    cfg->streams = u64(jc, "streams", &v) && v <= UINT32_MAX ? (uint32_t)v : 0;
    cfg->requests_per_connection = u64(jc, "requests_per_connection", &v) && v <= UINT32_MAX ? (uint32_t)v : 0;
}

static int read_config(struct ctx *c, const struct doc *d)
{
    struct merge_summary *m = c->m;
    struct run_config *cfg = &m->cfg;
    const json_t *jc = json_object_get(d->root, "config");
    const char *mode = json_string_value(json_object_get(jc, "mode"));
    if (!mode)
        return failf(c, KNEE_EFORMAT, "%s: no config.mode", d->path);
    cfg->plan.open_loop = strcmp(mode, "open") == 0;
    const char *arr = json_string_value(json_object_get(jc, "arrivals"));
    cfg->plan.arrivals = arr && strcmp(arr, "poisson") == 0 ? RUN_ARRIVALS_POISSON : RUN_ARRIVALS_CONSTANT;
    uint64_t v;
    cfg->plan.seed = u64(jc, "seed", &v) ? v : 1;
    const json_t *ramp = json_object_get(jc, "ramp");
    if (ramp) {
        cfg->plan.ramp = true;
        cfg->plan.ramp_from = num(ramp, "from");
        cfg->plan.ramp_to = num(ramp, "to");
    } else {
        double rate = num(jc, "rate");
        cfg->plan.rate = isfinite(rate) ? rate : 0;
    }
    const char *busy = json_string_value(json_object_get(jc, "when_busy"));
    cfg->when_busy = busy && strcmp(busy, "drop") == 0 ? RUN_BUSY_DROP : RUN_BUSY_QUEUE;
    cfg->plan.think_ns = ns_of_s(num(jc, "think_s"));
    cfg->plan.duration_ns = ns_of_s(num(jc, "duration_s"));
    cfg->plan.requests = u64(jc, "requests", &v) ? v : 0;
    cfg->timeout_ns = ns_of_s(num(jc, "timeout_s"));
    cfg->drain_ns = ns_of_s(num(jc, "drain_s"));
    cfg->plan.warmup_ns = ns_of_s(num(jc, "warmup_s"));
    cfg->keepalive = json_is_true(json_object_get(jc, "keepalive"));
    const char *eb = json_string_value(json_object_get(jc, "expect_body"));
    cfg->expect_body = eb ? keep(m, eb) : NULL;
    const json_t *rj = json_object_get(jc, "reject");
    size_t nr = json_array_size(rj);
    m->rejects = xcalloc(nr ? nr : 1, sizeof *m->rejects);
    for (size_t i = 0; i < nr && i < RUN_MAX_REJECTS; i++) {
        const json_t *e = json_array_get(rj, i);
        m->rejects[i].status = (int)within(num(e, "status"), 0, 999);
        const char *b = json_string_value(json_object_get(e, "body"));
        m->rejects[i].body = b ? keep(m, b) : NULL;
        cfg->nrejects = i + 1;
    }
    cfg->rejects = m->rejects;
    read_transport_config(m, jc);
    return 0;
}

/* ---- the shards one by one ---- */

static void fail_shard(struct merge_summary *m, uint32_t index, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_shard(struct merge_summary *m, uint32_t index, const char *fmt, ...)
{
    char buf[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    merge_summary_fail_shard(m, index, buf);
}

void merge_summary_fail_shard(struct merge_summary *m, uint32_t index, const char *why)
{
    if (index < m->res.shard.nparts) { /* parts are by index */
        struct run_shard_part *p = &m->parts[index];
        if (!p->failed)
            snprintf(p->failure, sizeof p->failure, "%s", why);
        p->failed = true;
    }
    m->incomplete = true;
    m->res.shard.complete = false;
}

/* The merged verdict is the shards' (any shard): their rules' flags or'ed, their reasons named
 * by shard. A lag that shaped one shard's numbers shaped the merged numbers too, even where
 * the merged histograms would dilute it below the rule. */
static void generator_of_shard(struct merge_summary *m, const struct doc *d, const json_t *g, bool limited)
{
    struct run_generator_verdict *v = &m->res.generator;
    if (!limited)
        return;
    v->limited = true;
    v->short_send |= json_is_true(json_object_get(g, "short_send"));
    v->over_limit |= json_is_true(json_object_get(g, "over_lag_limit"));
    v->shapes_tail |= json_is_true(json_object_get(g, "lag_shapes_tail"));
    v->shapes_median |= json_is_true(json_object_get(g, "lag_shapes_median"));
    v->bursts |= json_is_true(json_object_get(g, "sends_in_bursts"));
    const char *why = json_string_value(json_object_get(g, "reasons"));
    size_t off = strlen(v->why);
    if (off + 16 < sizeof v->why)
        snprintf(v->why + off, sizeof v->why - off, "%sshard %u: %s", off ? "; " : "", d->index,
                 why && *why ? why : "limited");
}

static int read_shard(struct ctx *c, struct doc *d, size_t k)
{
    struct merge_summary *m = c->m;
    struct run_result *res = &m->res;
    const json_t *root = d->root;
    const json_t *sh = json_object_get(root, "shard");
    const json_t *targets = json_object_get(root, "targets");
    if (json_array_size(targets) != res->ntargets)
        return failf(c, KNEE_EFORMAT, "%s: %zu targets, but %s has %zu", d->path, json_array_size(targets),
                     c->docs[0].path, res->ntargets);
    const json_t *hs = json_object_get(json_object_get(sh, "histograms"), "targets");
    if (json_array_size(hs) != res->ntargets)
        return failf(c, KNEE_EFORMAT, "%s: shard.histograms.targets does not list the %zu targets", d->path,
                     res->ntargets);
    for (size_t i = 0; i < res->ntargets; i++) {
        const json_t *t = json_array_get(targets, i);
        const char *name = json_string_value(json_object_get(t, "name"));
        if (!name || strcmp(name, res->targets[i].name) != 0)
            return failf(c, KNEE_EFORMAT, "%s: target %zu is '%s', but %s names it '%s'", d->path, i + 1,
                         name ? name : "?", c->docs[0].path, res->targets[i].name);
        int r = add_target(c, d, t, &res->targets[i]);
        if (!r)
            r = add_target_hists(c, d, json_array_get(hs, i), i, &res->targets[i]);
        if (r)
            return r;
    }
    int r = add_target_hists(c, d, json_object_get(json_object_get(sh, "histograms"), "all"), res->ntargets, &res->all);
    if (r)
        return r;
    /* the shard's own record */
    struct run_shard_part *p = &m->parts[k];
    p->index = d->index;
    const json_t *env = json_object_get(root, "environment");
    snprintf(p->host, sizeof p->host, "%s", str_or(json_string_value(json_object_get(env, "hostname")), "?"));
    double skew = num(sh, "start_skew_ms");
    p->start_skew_ns = (int64_t)llround(within(skew * 1e6, -9e18, 9e18));
    p->generator_limited = json_is_true(json_object_get(root, "generator_limited"));
    res->generator_limited |= p->generator_limited;
    generator_of_shard(m, d, json_object_get(root, "generator"), p->generator_limited);
    if (!json_is_true(json_object_get(sh, "clock") ? json_object_get(json_object_get(sh, "clock"), "synced") : NULL))
        res->shard.clock_synced = false;
    double me = num(json_object_get(sh, "clock"), "maxerror_ms");
    if (isfinite(me) && !(me <= res->shard.clock_maxerror_ms))
        res->shard.clock_maxerror_ms = me;
    if (json_is_true(json_object_get(root, "interrupted"))) {
        res->interrupted = true;
        fail_shard(m, d->index, "interrupted before the end of its plan");
    }
    if (!json_is_true(json_object_get(root, "accounting_ok")))
        fail_shard(m, d->index, "its accounting identities do not hold");
    const json_t *w = json_object_get(root, "warnings");
    for (size_t i = 0; i < json_array_size(w); i++) {
        const char *text = json_string_value(json_array_get(w, i));
        if (text && strstr(text, "stopped early"))
            fail_shard(m, d->index, "%s", text);
        else if (text && strstr(text, "writing failed"))
            fail_shard(m, d->index, "its request log could not be written whole (%s)", text);
    }
    /* environment: sums and extremes */
    res->env.cpus += (long)within(num(env, "cpus"), 0, 1e9);
    double cu = num(env, "cpu_user_s"), cs = num(env, "cpu_sys_s"), rss = num(env, "peak_rss_kb");
    res->env.cpu_user_s += isfinite(cu) ? cu : 0;
    res->env.cpu_sys_s += isfinite(cs) ? cs : 0;
    if ((long)within(rss, 0, 1e15) > res->env.peak_rss_kb)
        res->env.peak_rss_kb = (long)within(rss, 0, 1e15);
    /* the generators' own CPU: summed, over the longest shard's wall time; known only when
     * every shard says it (threads stays 0 from the first shard without it) */
    const json_t *gc = json_object_get(env, "generator_cpu");
    double gu = num(gc, "user_s"), gs = num(gc, "sys_s"), gw = num(gc, "wall_s"), gt = num(gc, "threads");
    struct run_generator_cpu *g = &res->env.gen_cpu;
    if (k == 0 || g->threads) {
        if (isfinite(gu) && isfinite(gs) && isfinite(gw) && gt >= 1) {
            g->user_s += within(gu, 0, 1e12);
            g->sys_s += within(gs, 0, 1e12);
            g->wall_s = fmax(g->wall_s, within(gw, 0, 1e12));
            g->threads += (uint32_t)within(gt, 1, RUN_MAX_THREADS + 2);
        } else {
            memset(g, 0, sizeof *g);
        }
    }
    const char *st = json_string_value(json_object_get(env, "start_utc"));
    if (st && (!res->env.start_wall[0] || strcmp(st, res->env.start_wall) < 0))
        snprintf(res->env.start_wall, sizeof res->env.start_wall, "%s", st);
    const char *kern = json_string_value(json_object_get(env, "kernel"));
    if (kern && !res->env.kernel[0])
        snprintf(res->env.kernel, sizeof res->env.kernel, "%s", kern);
    else if (kern && strcmp(kern, res->env.kernel) != 0)
        snprintf(res->env.kernel, sizeof res->env.kernel, "several kernels");
    const json_t *jc = json_object_get(root, "config");
    uint64_t v;
    if (u64(jc, "threads", &v))
        res->threads += (uint32_t)v;
    if (u64(jc, "pool_cap", &v))
        res->pool_cap += (uint32_t)v;
    return 0;
}

/* One interval of a shard's timeline placed on the merged axis. */
struct tick_in {
    double start_s, length_s;
    const json_t *e;
};

static int cmp_tick_in(const void *pa, const void *pb)
{
    const struct tick_in *a = pa, *b = pb;
    return a->start_s < b->start_s ? -1 : a->start_s > b->start_s;
}

/* Every shard's timeline on the merged axis, summed interval by interval. With one t0 the
 * shards cut their seconds at the same edges (whole seconds and the window's edges: load/run.h
 * struct run_tick), so intervals that start together are one interval of the merge; without,
 * each shard's timeline moves by its offset rounded to whole seconds. An interval of one shard
 * that another shard's edge cuts (a window that ends earlier) stays whole in the merged
 * interval where it starts. */
static void merge_ticks(struct ctx *c)
{
    struct run_result *res = &c->m->res;
    struct tick_in *in = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t k = 0; k < c->count; k++) {
        const struct doc *d = &c->docs[k];
        double off = c->same_t0 ? 0 : (double)llround((double)d->off_ns / 1e9);
        const json_t *tl = json_object_get(d->root, "timeline");
        for (size_t i = 0; i < json_array_size(tl); i++) {
            const json_t *e = json_array_get(tl, i);
            double st = num(e, "start_s"), len = num(e, "length_s");
            if (!(st >= 0 && st + off < MAX_TICKS) || !(len >= 0 && len <= 1))
                continue;
            if (n == cap) {
                if (cap >= (size_t)MAX_TICKS * 4)
                    break; /* more intervals than one run's timeline can hold */
                cap = cap ? 2 * cap : 64;
                in = xrealloc(in, cap * sizeof *in);
            }
            in[n++] = (struct tick_in){st + off, len, e};
        }
    }
    qsort(in, n, sizeof *in, cmp_tick_in);
    res->ticks = xcalloc(n ? n : 1, sizeof *res->ticks);
    res->nticks = 0;
    for (size_t i = 0; i < n; i++) {
        struct run_tick *t = res->nticks ? &res->ticks[res->nticks - 1] : NULL;
        if (!t || in[i].start_s - t->start_s > 1e-6) {
            t = &res->ticks[res->nticks++];
            *t = (struct run_tick){.start_s = in[i].start_s, .p50_ms = NAN, .p99_ms = NAN, .max_ms = NAN};
        }
        const json_t *e = in[i].e;
        if (in[i].length_s > t->length_s)
            t->length_s = in[i].length_s;
        uint64_t v;
        t->planned += u64(e, "planned", &v) ? v : 0;
        t->sent += u64(e, "sent", &v) ? v : 0;
        t->completed += u64(e, "completed", &v) ? v : 0;
        t->ok += u64(e, "ok", &v) ? v : 0;
        t->errors += u64(e, "errors", &v) ? v : 0;
        t->dropped += u64(e, "dropped", &v) ? v : 0;
        double mx = num(e, "max_ms");
        if (isfinite(mx) && !(mx <= t->max_ms))
            t->max_ms = mx;
    }
    /* intervals follow each other: one that another shard's edge cut ends there */
    for (size_t i = 0; i + 1 < res->nticks; i++)
        if (res->ticks[i].start_s + res->ticks[i].length_s > res->ticks[i + 1].start_s)
            res->ticks[i].length_s = res->ticks[i + 1].start_s - res->ticks[i].start_s;
    free(in);
}

/* The merged window and the rates over it. With one t0 the window is the union of the shards'
 * (the same window in an open loop; a closed loop with --requests ends with the last shard's
 * last thread, as one process's ends with its last thread), and the shards' events add up as
 * the engine adds its threads'. Without one, the window is the common one (where every shard
 * measured), and the rates are the shards' rates summed, each over its own window (counted
 * again over the common window when the logs are given: rates_from_logs). */
static void merge_window(struct ctx *c)
{
    struct merge_summary *m = c->m;
    struct run_result *res = &m->res;
    uint64_t ws = 0, we = UINT64_MAX;
    if (c->same_t0) {
        ws = res->all.events.window_start_ns;
        we = res->all.events.window_end_ns;
    } else {
        for (uint32_t k = 0; k < c->count; k++) {
            ws = c->docs[k].ws_ns > ws ? c->docs[k].ws_ns : ws;
            we = c->docs[k].we_ns < we ? c->docs[k].we_ns : we;
        }
    }
    if (ws > we) /* no common window */
        we = ws;
    m->window_start_ns = ws;
    m->window_end_ns = we;
    m->window_start_s = (double)ws / 1e9;
    res->window_start_s = (double)ws / 1e9;
    res->window_end_s = (double)we / 1e9;
    res->window_s = (double)(we - ws) / 1e9;
    for (size_t i = 0; i <= res->ntargets; i++) {
        struct run_target_result *r = i < res->ntargets ? &res->targets[i] : &res->all;
        r->events.window_start_ns = ws;
        r->events.window_end_ns = we;
        run_rates_of(&r->events, &r->rates);
        if (c->same_t0)
            continue;
        const struct run_rates *sum = &c->sums[i];
        r->rates.planned = sum->planned;
        r->rates.sent = sum->sent;
        r->rates.completed = sum->completed;
        r->rates.goodput = sum->goodput;
        r->rates.achieved_send = sum->achieved_send > 0 ? sum->achieved_send : NAN;
    }
}

/* The events counted again from the shards' per-request logs over the merged window (every
 * record moved onto the merged axis), as the engine counts them (run_events_add_record): with
 * one t0 they must equal the shards' events added up; without, they are the common window's.
 * A truncated log, or one that holds another number of requests than its JSON planned, fails
 * its shard. */
static int rates_from_logs(struct ctx *c, const char *const *paths)
{
    struct merge_summary *m = c->m;
    struct run_result *res = &m->res;
    size_t nt = res->ntargets;
    struct run_events *ev = xcalloc(nt + 1, sizeof *ev);
    for (size_t i = 0; i <= nt; i++)
        run_events_init(&ev[i], m->window_start_ns, m->window_end_ns);
    int rc = 0;
    for (uint32_t k = 0; k < c->count && !rc; k++) {
        const struct doc *d = &c->docs[k];
        struct reqlog_reader *rd;
        char why[256];
        if ((rc = reqlog_reader_open(&rd, paths[k], why, sizeof why))) {
            rc = failf(c, rc, "%s: %s", paths[k], why);
            break;
        }
        bool same = reqlog_reader_ntargets(rd) == nt;
        for (size_t i = 0; same && i < nt; i++)
            same = strcmp(reqlog_reader_target(rd, i), res->targets[i].name) == 0;
        if (!same) {
            reqlog_reader_close(rd);
            rc = failf(c, KNEE_EFORMAT, "%s: its targets are not those of %s", paths[k], d->path);
            break;
        }
        struct reqlog_record r;
        uint64_t n = 0;
        int got;
        while ((got = reqlog_read(rd, &r)) == 1) {
            if (d->off_ns) {
                r.planned_ns += d->off_ns;
                r.sent_ns += r.sent_ns ? d->off_ns : 0;
                r.done_ns += r.done_ns ? d->off_ns : 0;
            }
            run_events_add_record(&ev[r.target], &r);
            run_events_add_record(&ev[nt], &r);
            n++;
        }
        const json_t *all = json_object_get(d->root, "all");
        uint64_t a = 0, b = 0;
        u64(json_object_get(all, "accounting"), "planned", &a);
        u64(json_object_get(all, "warmup"), "planned", &b);
        if (got == KNEE_ETRUNC)
            fail_shard(m, d->index, "its request log is truncated after %" PRIu64 " records (%s)", n, paths[k]);
        else if (got < 0)
            rc = failf(c, got, "%s: %s", paths[k], reqlog_reader_error(rd));
        else if (n != a + b)
            fail_shard(m, d->index, "its request log %s holds %" PRIu64 " requests, its JSON planned %" PRIu64,
                       paths[k], n, a + b);
        reqlog_reader_close(rd);
        m->log_records += n;
    }
    if (!rc) {
        for (size_t i = 0; i <= nt; i++) {
            struct run_target_result *t = i < nt ? &res->targets[i] : &res->all;
            const struct run_events *x = &t->events, *y = &ev[i];
            bool same = x->planned == y->planned && x->sent == y->sent && x->completed == y->completed &&
                        x->ok == y->ok && x->sent_before == y->sent_before && x->sent_late == y->sent_late &&
                        x->completed_late == y->completed_late && x->sends == y->sends &&
                        (!x->sends || (x->first_send_ns == y->first_send_ns && x->last_send_ns == y->last_send_ns));
            m->logs_disagree |= c->same_t0 && !same;
            t->events = *y;
            run_rates_of(&t->events, &t->rates);
        }
        m->rates_from_logs = true;
    }
    free(ev);
    return rc;
}

/* The whole plan's count against the shards' (open loop: every stream, each shard's exact
 * share of the global indices; closed loop with --requests: the total). */
static void plan_check(struct ctx *c)
{
    struct merge_summary *m = c->m;
    struct run_result *res = &m->res;
    const struct run_config *cfg = &m->cfg;
    if (!cfg->plan.open_loop) {
        if (!cfg->plan.requests)
            return;
        m->plan_checked = true;
        m->plan_expected = cfg->plan.requests;
        m->plan_merged = res->all.counts.planned + res->all.warmup_counts.planned;
        m->plan_ok = m->plan_expected == m->plan_merged;
        return;
    }
    const json_t *streams = json_object_get(json_object_get(c->docs[0].root, "shard"), "streams");
    if (json_array_size(streams) != res->ntargets)
        return;
    bool poisson = cfg->plan.arrivals == RUN_ARRIVALS_POISSON;
    uint64_t expected = 0;
    for (size_t i = 0; i < res->ntargets; i++) {
        const json_t *e = json_array_get(streams, i);
        struct run_shard_stream st = {num(e, "rate_from"), num(e, "rate_to"), UINT64_MAX};
        uint64_t lim;
        if (u64(e, "limit", &lim))
            st.limit = lim;
        double top = st.rate_from > st.rate_to ? st.rate_from : st.rate_to;
        if (!(st.rate_from >= 0 && st.rate_to >= 0 && top > 0 && top < 1e10) ||
            (st.limit == UINT64_MAX && top * (double)cfg->plan.duration_ns / 1e9 > 1e12))
            return; /* not a plan a generator runs: no check (and no endless count) */
        uint64_t n;
        if (!plan_stream_planned(&st, poisson, cfg->plan.seed, i, cfg->plan.duration_ns, MAX_PLAN_DRAWS, &n))
            return;
        expected += n;
        /* each shard: exactly its share of this stream's global indices */
        for (uint32_t k = 0; k < c->count; k++) {
            const struct doc *d = &c->docs[k];
            const json_t *t = json_array_get(json_object_get(d->root, "targets"), i);
            uint64_t a = 0, b = 0;
            u64(json_object_get(t, "accounting"), "planned", &a);
            u64(json_object_get(t, "warmup"), "planned", &b);
            uint64_t want = plan_shard_share(n, d->index, c->count);
            if (a + b != want)
                fail_shard(m, d->index, "planned %" PRIu64 " requests of target %s, its share of the plan is %" PRIu64,
                           a + b, res->targets[i].name, want);
        }
    }
    m->plan_checked = true;
    m->plan_expected = expected;
    m->plan_merged = res->all.counts.planned + res->all.warmup_counts.planned;
    m->plan_ok = expected == m->plan_merged;
}

static void hostnames(struct ctx *c)
{
    struct run_env *env = &c->m->res.env;
    size_t off = 0, shown = 0, distinct = 0;
    env->hostname[0] = '\0';
    for (uint32_t k = 0; k < c->count; k++) {
        const char *h = c->m->parts[k].host;
        bool seen = false;
        for (uint32_t j = 0; j < k && !seen; j++)
            seen = strcmp(c->m->parts[j].host, h) == 0;
        if (seen)
            continue;
        distinct++;
        if (off + strlen(h) + 24 < sizeof env->hostname) {
            off += (size_t)snprintf(env->hostname + off, sizeof env->hostname - off, "%s%s", shown ? "," : "", h);
            shown++;
        }
    }
    if (distinct > shown)
        snprintf(env->hostname + off, sizeof env->hostname - off, ",+%zu more", distinct - shown);
}

/* "1, 3, 7" of the shards for which pick() holds (a few, then "and N more"). */
static size_t shard_list(const struct merge_summary *m, bool (*pick)(const struct run_shard_part *, int64_t),
                         int64_t arg, char *buf, size_t len)
{
    size_t off = 0, n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->res.shard.nparts; i++) {
        if (!pick(&m->parts[i], arg))
            continue;
        if (n < 10 && off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%u", n ? ", " : "", m->parts[i].index);
        else if (n == 10 && off < len)
            off += (size_t)snprintf(buf + off, len - off, " ...");
        n++;
    }
    return n;
}

static bool pick_limited(const struct run_shard_part *p, int64_t arg)
{
    (void)arg;
    return p->generator_limited;
}

static bool pick_late(const struct run_shard_part *p, int64_t lag_limit_ns)
{
    return p->start_skew_ns > lag_limit_ns;
}

static void verdicts(struct ctx *c)
{
    struct merge_summary *m = c->m;
    struct run_result *res = &m->res;
    struct run_shard *sh = &res->shard;
    char list[128];
    size_t nfailed = 0;
    for (size_t i = 0; i < sh->nparts; i++)
        if (m->parts[i].failed) {
            if (nfailed++ < 10)
                warn_add(
                    &res->warnings, true,
                    "INCOMPLETE: shard %u of %u (%s) failed: %s; the merged numbers are the other shards' parts and "
                    "what this shard did, not the whole plan",
                    m->parts[i].index, sh->count, m->parts[i].host, m->parts[i].failure);
        }
    if (nfailed > 10)
        warn_add(&res->warnings, true, "INCOMPLETE: %zu more shards failed (see the shard list)", nfailed - 10);
    if (!c->identities_ok)
        warn_add(&res->warnings, true,
                 "BUG: the accounting identities do not hold for the merged counts (planned = sent + dropped; "
                 "sent = outcomes; transport = its causes; retries <= sent)");
    char failures[256];
    if (res->no_ok) /* knee run's sentences (load/result.c), on the merged counts */
        warn_add(&res->warnings, true,
                 "FAILED: not one request succeeded (%s): there is no latency of a working service to report",
                 run_describe_failures(&res->all.counts, failures, sizeof failures));
    else if (res->failed_share >= RUN_HIGH_FAILED_SHARE)
        warn_add(&res->warnings, true,
                 "ERRORS: %.1f%% of the requests sent failed (%s): the latency of all requests mixes failures in; "
                 "thresholds on latency use ok requests",
                 100 * res->failed_share, run_describe_failures(&res->all.counts, failures, sizeof failures));
    if (m->logs_disagree && !nfailed)
        warn_add(
            &res->warnings, true,
            "the shards' per-request logs and their JSON disagree on the events (the rates are the logs'): are they "
            "the outputs of one run?");
    char a[32], b[32];
    if (m->plan_checked && !m->plan_ok)
        warn_add(&res->warnings, true, "the shards planned %s requests, the whole plan has %s%s",
                 units_fmt_count(m->plan_merged, a, sizeof a), units_fmt_count(m->plan_expected, b, sizeof b),
                 nfailed ? " (a shard failed)" : "");
    size_t nlim = shard_list(m, pick_limited, 0, list, sizeof list);
    if (nlim)
        warn_add(&res->warnings, true,
                 "GENERATOR-LIMITED: shard%s %s of %u could not keep %s plan (%s warnings follow): the merged lag and "
                 "latency include that",
                 nlim == 1 ? "" : "s", list, sh->count, nlim == 1 ? "its" : "their", nlim == 1 ? "its" : "their");
    if (sh->start_at_unix_ns) {
        size_t nlate = shard_list(m, pick_late, (int64_t)sh->lag_limit_ns, list, sizeof list);
        if (nlate)
            warn_add(&res->warnings, true,
                     "shard%s %s started up to %.3f ms after the shared start instant: %s requests planned before then "
                     "were sent late, and the lag counts them",
                     nlate == 1 ? "" : "s", list, (double)sh->skew_max_ns / 1e6, nlate == 1 ? "its" : "their");
    }
    if (!m->same_t0) {
        if (m->rates_from_logs)
            warn_add(
                &res->warnings, false,
                "no shared start instant (--start-at): each shard measured its own window; the rates count the "
                "shards' per-request logs over the common window %.3f .. %.3f s (since the earliest start), and the "
                "timeline is aligned to whole seconds of their starts",
                res->window_start_s, res->window_end_s);
        else if (!(m->window_end_ns > m->window_start_ns))
            warn_add(
                &res->warnings, false,
                "no shared start instant (--start-at), and the shards' windows do not overlap: the rates are the sum "
                "of the shards' rates, each over its own window, and the timeline is aligned to whole seconds of "
                "their starts");
        else
            warn_add(
                &res->warnings, false,
                "no shared start instant (--start-at): each shard measured its own window; the rates are the sum of "
                "the shards' rates (each over its own window; give their binary logs to count the common window), "
                "and the timeline is aligned to whole seconds of their starts");
    }
    if (!sh->clock_synced && sh->start_at_unix_ns)
        warn_add(&res->warnings, false,
                 "not every shard's kernel reports a synchronised clock (NTP/PTP; largest error bound %.3f ms): the "
                 "shared start instant is only as good as the clocks agree",
                 sh->clock_maxerror_ms);
    /* the notes of load/result.c, in its words */
    char n[32];
    uint64_t warm_n = res->all.warmup_counts.planned;
    if (m->cfg.plan.warmup_ns)
        warn_add(&res->warnings, false,
                 "warm-up: %s request%s planned in the first %.3g s %s left out of these statistics",
                 units_fmt_count(warm_n, n, sizeof n), warm_n == 1 ? "" : "s", (double)m->cfg.plan.warmup_ns / 1e9,
                 warm_n == 1 ? "is" : "are");
    uint64_t n_all = (uint64_t)res->all.latency_all.total_count;
    if (n_all && n_all < (uint64_t)(STATS_MIN_BEYOND / 0.01))
        warn_add(&res->warnings, false,
                 "only %s latency sample%s: p99 rests on fewer than %d samples above it, p99.9 on none",
                 units_fmt_count(n_all, n, sizeof n), n_all == 1 ? "" : "s", STATS_MIN_BEYOND);
    else if (n_all && n_all < (uint64_t)(STATS_MIN_BEYOND / 0.001))
        warn_add(&res->warnings, false,
                 "only %s latency samples: p99.9 rests on fewer than %d samples above it; read it as rough",
                 units_fmt_count(n_all, n, sizeof n), STATS_MIN_BEYOND);
    /* the shards' own warnings that need attention, prefixed */
    size_t carried = 0, more = 0;
    for (uint32_t k = 0; k < c->count; k++) {
        const json_t *w = json_object_get(c->docs[k].root, "warnings");
        for (size_t i = 0; i < json_array_size(w); i++) {
            const char *text = json_string_value(json_array_get(w, i));
            if (!text || strncmp(text, "only ", 5) == 0 || strncmp(text, "warm-up: ", 9) == 0 ||
                strstr(text, "synchronised") || strncmp(text, "self-check", 10) == 0)
                continue; /* said once for the whole (knee merge checks the merged run itself) */
            if (carried < MAX_SHARD_WARNINGS) {
                warn_add(&res->warnings, false, "shard %u: %s", c->docs[k].index, text);
                carried++;
            } else {
                more++;
            }
        }
    }
    if (more)
        warn_add(&res->warnings, false, "%zu more warnings of the shards are in their JSON", more);
}

int merge_summary_from_docs(struct merge_summary *m, json_t *const *roots, const char *const *names, uint32_t count,
                            uint64_t plan_id, uint64_t start_at_unix_ns, const char *const *log_paths,
                            const char *const *argv, int argc, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    struct ctx c = {.m = m, .count = count, .err = err, .errlen = errlen};
    int rc = 0;
    c.docs = xcalloc(count ? count : 1, sizeof *c.docs);
    for (uint32_t k = 0; k < count && !rc; k++) {
        struct doc *d = &c.docs[k];
        d->path = names[k];
        d->index = k;
        d->root = roots[k];
        if (!json_is_object(d->root)) {
            rc = failf(&c, KNEE_EFORMAT, "%s: not a JSON object", d->path);
            break;
        }
        const char *schema = json_string_value(json_object_get(d->root, "schema"));
        if (!schema || strcmp(schema, RUN_JSON_SCHEMA) != 0) {
            rc = failf(&c, KNEE_EFORMAT,
                       "%s: schema \"%s\": knee merge adds up shards of the \"" RUN_JSON_SCHEMA
                       "\" schema (rates by event time); run the shards with this knee",
                       d->path, schema ? schema : "none");
            break;
        }
        const json_t *sh = json_object_get(d->root, "shard");
        if (!u64(sh, "t0_unix_ns", &d->t0_unix_ns))
            rc = failf(&c, KNEE_EFORMAT, "%s: shard.t0_unix_ns is missing", d->path);
        d->window_s = num(d->root, "window_s");
        d->elapsed_s = num(d->root, "elapsed_s");
        if (!rc && !(d->window_s >= 0 && d->elapsed_s >= 0))
            rc = failf(&c, KNEE_EFORMAT, "%s: no window_s or elapsed_s", d->path);
    }
    if (rc)
        goto out;
    struct run_result *res = &m->res;
    struct run_config *cfg = &m->cfg;
    const struct doc *d0 = &c.docs[0];
    rc = read_config(&c, d0);
    if (rc)
        goto out;
    const json_t *targets = json_object_get(d0->root, "targets");
    res->ntargets = json_array_size(targets);
    if (res->ntargets == 0 || res->ntargets > RUN_MAX_TARGETS) {
        rc = failf(&c, KNEE_EFORMAT, "%s: %zu targets", d0->path, res->ntargets);
        goto out;
    }
    res->targets = xcalloc(res->ntargets, sizeof *res->targets);
    m->tc = xcalloc(res->ntargets, sizeof *m->tc);
    for (size_t i = 0; i < res->ntargets; i++) {
        const json_t *t = json_array_get(targets, i);
        struct run_target_result *r = &res->targets[i];
        target_init(r);
        snprintf(r->name, sizeof r->name, "%s", str_or(json_string_value(json_object_get(t, "name")), "?"));
        snprintf(r->url, sizeof r->url, "%s", str_or(json_string_value(json_object_get(t, "url")), ""));
        snprintf(r->address, sizeof r->address, "%s", str_or(json_string_value(json_object_get(t, "address")), ""));
        m->tc[i].name = keep(m, r->name);
        m->tc[i].url = keep(m, r->url);
    }
    cfg->plan.targets = m->tc;
    cfg->plan.ntargets = res->ntargets;
    cfg->argv = argv;
    cfg->argc = argc;
    target_init(&res->all);
    snprintf(res->all.name, sizeof res->all.name, "all");
    snprintf(res->env.version, sizeof res->env.version, "%s", KNEE_VERSION);
    for (int i = 0; i < 3; i++)
        res->env.loadavg_before[i] = res->env.loadavg_after[i] = NAN;
    /* the shard record of the merge */
    struct run_shard *sh = &res->shard;
    m->parts = xcalloc(count, sizeof *m->parts);
    for (uint32_t k = 0; k < count; k++)
        m->parts[k].index = k;
    sh->index = RUN_SHARD_MERGED;
    sh->count = count;
    sh->plan_id = plan_id;
    sh->start_at_unix_ns = start_at_unix_ns;
    sh->nparts = count;
    sh->parts = m->parts;
    sh->complete = true;
    sh->clock_synced = true;
    sh->clock_maxerror_ms = NAN;
    sh->clock_esterror_ms = NAN;
    snprintf(sh->source, sizeof sh->source, "knee merge");
    const json_t *sh0 = json_object_get(d0->root, "shard");
    double ll = num(sh0, "lag_limit_ms");
    sh->lag_limit_ns = ll > 0 ? (uint64_t)llround(within(ll * 1e6, 1, 9e18)) : RUN_DEFAULT_LAG_LIMIT_NS;
    /* --lag-limit as the shards were given it (null: the relative rule) */
    double given = num(json_object_get(d0->root, "generator"), "lag_limit_ms");
    cfg->lag_limit_ns = given > 0 ? (uint64_t)llround(within(given * 1e6, 1, 9e18)) : 0;
    /* --timer-slack as the shards were given it (the merged JSON and summary name it) */
    double slack = num(json_object_get(d0->root, "config"), "timer_slack_ms");
    cfg->timer_slack_ns = slack > 0 ? (uint64_t)llround(within(slack * 1e6, 1, (double)RUN_MAX_TIMER_SLACK_NS)) : 0;
    const json_t *streams = json_object_get(sh0, "streams");
    for (size_t i = 0; i < json_array_size(streams) && i < RUN_MAX_TARGETS; i++) {
        const json_t *e = json_array_get(streams, i);
        uint64_t lim = UINT64_MAX;
        u64(e, "limit", &lim);
        sh->streams[i] = (struct run_shard_stream){num(e, "rate_from"), num(e, "rate_to"), lim};
        sh->nstreams = i + 1;
    }
    /* time: the shards' t0s on the wall clock, the merged axis from the earliest */
    uint64_t t0_min = UINT64_MAX;
    for (uint32_t k = 0; k < count; k++)
        if (c.docs[k].t0_unix_ns < t0_min)
            t0_min = c.docs[k].t0_unix_ns;
    sh->t0_unix_ns = t0_min;
    c.same_t0 = true;
    for (uint32_t k = 0; k < count && !rc; k++) {
        c.docs[k].off_ns = c.docs[k].t0_unix_ns - t0_min;
        c.same_t0 &= c.docs[k].off_ns == 0;
        if (c.docs[k].off_ns > MAX_SHARD_OFFSET_NS)
            rc = failf(&c, KNEE_EFORMAT, "%s: its t0 is %.0f s after %s's: not the shards of one run", c.docs[k].path,
                       (double)c.docs[k].off_ns / 1e9, c.docs[0].path);
    }
    c.sums = xcalloc(res->ntargets + 1, sizeof *c.sums);
    c.codec = hlog_codec_new();
    for (uint32_t k = 0; k < count && !rc; k++)
        rc = read_shard(&c, &c.docs[k], k);
    if (rc)
        goto out;
    if (!cfg->plan.open_loop) {
        cfg->plan.connections = 0;
        for (size_t i = 0; i < res->ntargets; i++)
            cfg->plan.connections += res->targets[i].connections;
    } else {
        cfg->plan.connections = res->pool_cap;
    }
    cfg->threads = res->threads;
    /* counts: the total is the sum of the targets, as in one process */
    uint64_t on_time = res->all.counts.sent_on_time; /* from the shards' "all" entries */
    for (size_t i = 0; i < res->ntargets; i++) {
        run_counts_add(&res->all.counts, &res->targets[i].counts);
        run_counts_add(&res->all.warmup_counts, &res->targets[i].warmup_counts);
        run_proto_counts_add(&res->all.pc, &res->targets[i].pc);
        res->all.https |= res->targets[i].https;
    }
    res->all.counts.sent_on_time = on_time;
    m->same_t0 = c.same_t0;
    m->shard_t0_unix_ns = xcalloc(count, sizeof *m->shard_t0_unix_ns);
    double end_max = 0;
    int64_t skew_min = INT64_MAX, skew_max = INT64_MIN;
    m->windows_equal = c.same_t0;
    for (uint32_t k = 0; k < count; k++) {
        const struct doc *d = &c.docs[k];
        m->shard_t0_unix_ns[k] = d->t0_unix_ns;
        if (fabs(d->window_s - c.docs[0].window_s) > 1e-6)
            m->windows_equal = false;
        double t0 = (double)d->off_ns / 1e9;
        if (t0 + d->elapsed_s > end_max)
            end_max = t0 + d->elapsed_s;
        int64_t skew = m->parts[k].start_skew_ns;
        skew_min = skew < skew_min ? skew : skew_min;
        skew_max = skew > skew_max ? skew : skew_max;
    }
    sh->skew_min_ns = skew_min;
    sh->skew_max_ns = skew_max;
    res->elapsed_s = end_max;
    merge_window(&c);
    const struct run_counts *tot = &res->all.counts;
    res->sent_on_schedule = tot->planned ? (double)tot->sent_on_time / (double)tot->planned : NAN;
    uint64_t failed = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (run_outcome_failed((enum reqlog_outcome)o))
            failed += tot->outcome[o];
    res->failed_share = tot->sent ? (double)failed / (double)tot->sent : NAN;
    res->no_ok = tot->outcome[OUTCOME_OK] == 0;
    /* the logs count the events again over the window (not over an empty common window: the
     * shards' own rates, summed, are all there is then) */
    bool common = c.same_t0 || m->window_end_ns > m->window_start_ns;
    if (log_paths && common && (rc = rates_from_logs(&c, log_paths)))
        goto out;
    res->generator.gap_ms = res->all.rates.planned > 0 ? 1e3 / res->all.rates.planned : NAN;
    merge_ticks(&c);
    hostnames(&c);
    /* verdicts */
    c.identities_ok = run_counts_hold(&res->all.counts) && run_counts_hold(&res->all.warmup_counts);
    for (size_t i = 0; i < res->ntargets; i++)
        c.identities_ok &= run_counts_hold(&res->targets[i].counts) && run_counts_hold(&res->targets[i].warmup_counts);
    /* the result accounts for the whole plan only when the sums hold, every shard's own
     * accounting held and the shards planned the whole plan (a failed shard says why not) */
    res->accounting_ok = c.identities_ok;
    bool shards_ok = true;
    for (uint32_t k = 0; k < count; k++)
        shards_ok &= json_is_true(json_object_get(c.docs[k].root, "accounting_ok"));
    plan_check(&c);
    res->accounting_ok &= shards_ok && (!m->plan_checked || m->plan_ok);
    verdicts(&c);
    record_config_from_run(&res->config, cfg); /* the plan as the record's reports echo it */
    record_summarize(res);
out:
    hlog_codec_free(c.codec);
    free(c.sums);
    free(c.docs);
    if (rc)
        merge_summary_release(m);
    return rc;
}

int merge_summary_build(struct merge_summary *m, const struct merge_set *s, const char *const *argv, int argc,
                        char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (!merge_set_complete(s, MERGE_JSON))
        return knee_fail(err, errlen, KNEE_EINVAL, "the merged summary needs every shard's JSON (knee run --json)");
    json_t **roots = xcalloc(s->count, sizeof *roots);
    const char **names = xcalloc(s->count, sizeof *names);
    int rc = 0;
    for (uint32_t k = 0; k < s->count && !rc; k++) {
        names[k] = s->shards[k].path[MERGE_JSON];
        json_error_t je;
        roots[k] = json_load_file(names[k], JSON_REJECT_DUPLICATES, &je);
        if (!roots[k])
            rc = knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", names[k], je.line, je.text);
    }
    /* the shards' binary logs, when given, count the events again (rates_from_logs) */
    const char **logs = NULL;
    if (merge_set_complete(s, MERGE_LOG)) {
        logs = xcalloc(s->count, sizeof *logs);
        for (uint32_t k = 0; k < s->count; k++)
            logs[k] = s->shards[k].path[MERGE_LOG];
    }
    if (!rc)
        rc = merge_summary_from_docs(m, roots, names, s->count, s->plan_id, s->start_at_unix_ns, logs, argv, argc, err,
                                     errlen);
    free(logs);
    for (uint32_t k = 0; k < s->count; k++)
        if (roots[k])
            json_decref(roots[k]);
    free(roots);
    free(names);
    return rc;
}

void merge_summary_release(struct merge_summary *m)
{
    run_result_release(&m->res); /* its shard parts are m->parts */
    for (size_t i = 0; i < m->nstrings; i++)
        free(m->strings[i]);
    free(m->strings);
    free(m->tc);
    free(m->rejects);
    free(m->shard_t0_unix_ns);
    memset(m, 0, sizeof *m);
}
