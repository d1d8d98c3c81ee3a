/* Per-stage results: counted by planned time, summarized over each stage's own window, written
 * to and read from the run JSON's "stages" (record/stages.h). */
#include "record/stages.h"

#include "core/err.h"
#include "core/json.h"
#include "hlog/codec.h"
#include "record/fields.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct run_stage_result *record_stages_new(const struct run_stage *st, size_t n)
{
    if (!n)
        return NULL;
    struct run_stage_result *s = xcalloc(n, sizeof *s);
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        s[i].from = st[i].from;
        s[i].to = st[i].to;
        s[i].clients = st[i].clients;
        s[i].start_ns = t;
        t += st[i].duration_ns;
        s[i].end_ns = t;
        record_events_init(&s[i].events, s[i].start_ns, s[i].end_ns);
        hdr_init(&s[i].latency, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        record_summary_of(NULL, &s[i].lat);
    }
    return s;
}

void record_stages_free(struct run_stage_result *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        hdr_release(&s[i].latency);
    free(s);
}

size_t record_stage_of(const struct run_stage_result *s, size_t n, uint64_t planned_ns)
{
    size_t lo = 0, hi = n; /* the first stage ending after planned_ns */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].end_ns <= planned_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void record_stages_count(struct run_stage_result *s, size_t n, uint64_t planned_ns, uint64_t sent_ns, uint64_t done_ns,
                         enum reqlog_outcome o)
{
    size_t i = record_stage_of(s, n, planned_ns);
    if (i >= n)
        return;
    struct run_counts *c = &s[i].counts;
    c->planned++;
    c->outcome[o]++;
    if (o == OUTCOME_DROPPED)
        c->dropped++;
    else
        c->sent++;
    record_events_count(&s[i].events, planned_ns, sent_ns, done_ns, o);
}

void record_stages_latency(struct run_stage_result *s, size_t n, uint64_t planned_ns, int64_t latency_ns)
{
    size_t i = record_stage_of(s, n, planned_ns);
    if (i < n)
        hdr_record(&s[i].latency, latency_ns, 1);
}

void record_stages_add(struct run_stage_result *d, const struct run_stage_result *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        record_counts_add(&d[i].counts, &s[i].counts);
        record_events_merge(&d[i].events, &s[i].events);
        if (s[i].latency.counts)
            hdr_add(&d[i].latency, &s[i].latency);
    }
}

void record_stages_summarize(struct run_record *rec)
{
    for (size_t i = 0; i < rec->nstages; i++) {
        struct run_stage_result *s = &rec->stages[i];
        s->events.window_start_ns = s->start_ns; /* a merge widens windows: the stage's is fixed */
        s->events.window_end_ns = s->end_ns;
        record_rates_of(&s->events, &s->rates);
        if (s->latency.counts && s->latency.total_count) /* a record read back keeps the JSON's */
            record_summary_of(&s->latency, &s->lat);
    }
}

/* ------------------------------------------------------------------ JSON */

/* The kinds of record/fields.h these lists use (f64, u64), for FIELDS_WRITE and FIELDS_READ. */
static void put_f64(struct jw *j, const char *key, const double *v)
{
    jw_kv_double(j, key, *v);
}

static void put_u64(struct jw *j, const char *key, const uint64_t *v)
{
    jw_kv_uint(j, key, *v);
}

static uint64_t completed_of(const struct run_counts *c)
{
    uint64_t n = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED && o != OUTCOME_CANCELLED)
            n += c->outcome[o];
    return n;
}

static void stage_hist(struct jw *j, struct hlog_codec *c, const struct run_stage_result *s)
{
    jw_key(j, "shard");
    jw_object_begin(j);
    jw_key(j, "events");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_SHARD_EVENTS_FIELDS, j, struct run_events, &s->events);
    jw_object_end(j);
    jw_kv_int(j, "latency_count", s->latency.total_count);
    const char *text;
    size_t len;
    if (s->latency.counts && s->latency.total_count && hlog_encode_base64(c, &s->latency, &text, &len) == 0) {
        jw_kv_int(j, "latency_min_ns", s->latency.min_value);
        jw_kv_int(j, "latency_max_ns", s->latency.max_value);
        jw_kv_string(j, "latency_hdr", text);
    }
    jw_object_end(j);
}

static void stage_write(struct jw *j, struct hlog_codec *c, const struct run_stage_result *s, size_t i, bool with_hist)
{
    jw_object_begin(j);
    jw_kv_uint(j, "index", i + 1);
    jw_kv_double(j, "from", s->from);
    jw_kv_double(j, "to", s->to);
    jw_kv_string(j, "unit", s->clients ? "clients" : "rps");
    jw_kv_double(j, "start_s", (double)s->start_ns / 1e9);
    jw_kv_double(j, "duration_s", (double)(s->end_ns - s->start_ns) / 1e9);
    jw_kv_uint(j, "planned", s->counts.planned);
    jw_kv_uint(j, "sent", s->counts.sent);
    jw_kv_uint(j, "dropped", s->counts.dropped);
    jw_kv_uint(j, "completed", completed_of(&s->counts));
    jw_key(j, "outcomes");
    jw_object_begin(j);
    for (int o = 0; o < OUTCOME_COUNT; o++)
        jw_kv_uint(j, reqlog_outcome_name((enum reqlog_outcome)o), s->counts.outcome[o]);
    jw_object_end(j);
    jw_key(j, "latency");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_SUMMARY_FIELDS, j, struct run_summary, &s->lat);
    jw_object_end(j);
    jw_key(j, "rates");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_RATES_FIELDS, j, struct run_rates, &s->rates);
    jw_object_end(j);
    jw_key(j, "events");
    jw_object_begin(j);
    FIELDS_WRITE(RECORD_EVENTS_FIELDS, j, struct run_events, &s->events);
    jw_object_end(j);
    if (with_hist)
        stage_hist(j, c, s);
    jw_object_end(j);
}

void record_stages_write_json(struct jw *j, const struct run_record *rec, bool with_hist)
{
    if (!rec->nstages)
        return;
    struct hlog_codec *c = with_hist ? hlog_codec_new() : NULL;
    jw_key(j, "stages");
    jw_array_begin(j);
    for (size_t i = 0; i < rec->nstages; i++)
        stage_write(j, c, &rec->stages[i], i, with_hist);
    jw_array_end(j);
    hlog_codec_free(c);
}

static const json_t *get(const json_t *o, const char *key)
{
    return json_is_object(o) ? json_object_get(o, key) : NULL;
}

static bool is_count(const json_t *v)
{
    return json_is_integer(v) && json_integer_value(v) >= 0;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void get_f64(const json_t *o, const char *key, double *v)
{
    *v = num(o, key);
}

static void get_u64(const json_t *o, const char *key, uint64_t *v)
{
    const json_t *x = get(o, key);
    *v = is_count(x) ? (uint64_t)json_integer_value(x) : 0;
}

/* A count of o, checked when strict (what: the key as the message names it). */
static int count_of(const json_t *o, const char *key, size_t i, bool strict, uint64_t *out, char *err, size_t errlen)
{
    const json_t *v = get(o, key);
    if (is_count(v)) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    *out = 0;
    return strict ? knee_fail(err, errlen, KNEE_EFORMAT, "stages[%zu]: %s is missing or not a count", i + 1, key) : 0;
}

static int stage_counts(const json_t *e, size_t i, bool strict, struct run_counts *c, char *err, size_t errlen)
{
    int rc = count_of(e, "planned", i, strict, &c->planned, err, errlen);
    if (!rc)
        rc = count_of(e, "sent", i, strict, &c->sent, err, errlen);
    if (!rc)
        rc = count_of(e, "dropped", i, strict, &c->dropped, err, errlen);
    const json_t *oc = get(e, "outcomes");
    for (int o = 0; o < OUTCOME_COUNT && !rc; o++) {
        const char *name = reqlog_outcome_name((enum reqlog_outcome)o);
        const json_t *v = get(oc, name);
        if (is_count(v))
            c->outcome[o] = (uint64_t)json_integer_value(v);
        else if (strict)
            rc =
                knee_fail(err, errlen, KNEE_EFORMAT, "stages[%zu]: outcomes.%s is missing or not a count", i + 1, name);
    }
    if (rc || !strict)
        return rc;
    uint64_t sum = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            sum += c->outcome[o];
    if (c->planned != c->sent + c->dropped || c->sent != sum || c->dropped != c->outcome[OUTCOME_DROPPED])
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "stages[%zu]: planned %llu != sent %llu + dropped %llu, or the outcomes do not add up", i + 1,
                         (unsigned long long)c->planned, (unsigned long long)c->sent, (unsigned long long)c->dropped);
    return 0;
}

/* The "shard" part of a stage: its exact events and its latency histogram. */
static int stage_shard(struct hlog_codec *c, const json_t *sh, size_t i, struct run_stage_result *s, char *err,
                       size_t errlen)
{
    const json_t *ev = get(sh, "events");
#define READ_EV(key, kind, field)                                                                                      \
    if (!is_count(get(ev, key)))                                                                                       \
        return knee_fail(err, errlen, KNEE_EFORMAT, "stages[%zu]: shard.events.%s is missing or not a count", i + 1,   \
                         key);                                                                                         \
    s->events.field = (uint64_t)json_integer_value(get(ev, key));
#define READ_EV_T(key, field)
    RECORD_SHARD_EVENTS_FIELDS(READ_EV, READ_EV_T)
#undef READ_EV
#undef READ_EV_T
    const char *text = json_string_value(get(sh, "latency_hdr"));
    if (!text)
        return 0;
    struct hdr h;
    char why[200] = "";
    int r = hlog_decode_base64(c, text, strlen(text), &h, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "stages[%zu]: shard.latency_hdr: %s", i + 1, why[0] ? why : knee_strerror(r));
    const json_t *mn = get(sh, "latency_min_ns"), *mx = get(sh, "latency_max_ns");
    if (is_count(mn) && is_count(mx) && h.total_count) {
        h.min_value = json_integer_value(mn);
        h.max_value = json_integer_value(mx);
    }
    r = hdr_add(&s->latency, &h);
    hdr_release(&h);
    return r ? knee_fail(err, errlen, r, "stages[%zu]: shard.latency_hdr: %s", i + 1, knee_strerror(r)) : 0;
}

static int stage_read(struct hlog_codec *c, const json_t *e, size_t i, bool strict, struct run_stage_result *s,
                      char *err, size_t errlen)
{
    s->from = num(e, "from");
    s->to = num(e, "to");
    const json_t *unit = get(e, "unit");
    const char *u = json_string_value(unit);
    if (strict && unit && !(u && (strcmp(u, "rps") == 0 || strcmp(u, "clients") == 0)))
        return knee_fail(err, errlen, KNEE_EFORMAT, "stages[%zu]: unit is neither \"rps\" nor \"clients\"", i + 1);
    s->clients = u && strcmp(u, "clients") == 0; /* absent (older runs): rps */
    double st = num(e, "start_s"), d = num(e, "duration_s");
    if (strict && !(st >= 0 && d > 0 && st < 1e12 && d < 1e12))
        return knee_fail(err, errlen, KNEE_EFORMAT, "stages[%zu]: start_s or duration_s is missing or out of range",
                         i + 1);
    s->start_ns = st >= 0 && st < 1e12 ? (uint64_t)llround(st * 1e9) : 0;
    s->end_ns = d > 0 && d < 1e12 ? s->start_ns + (uint64_t)llround(d * 1e9) : s->start_ns;
    record_events_init(&s->events, s->start_ns, s->end_ns);
    int rc = stage_counts(e, i, strict, &s->counts, err, errlen);
    if (rc)
        return rc;
    const json_t *lat = get(e, "latency");
    FIELDS_READ(RECORD_SUMMARY_FIELDS, lat, struct run_summary, &s->lat);
    const json_t *rt = get(e, "rates");
    FIELDS_READ(RECORD_RATES_FIELDS, rt, struct run_rates, &s->rates);
    s->rates.window_s = (double)(s->end_ns - s->start_ns) / 1e9;
    const json_t *ev = get(e, "events");
    FIELDS_READ(RECORD_EVENTS_FIELDS, ev, struct run_events, &s->events);
    const json_t *sh = get(e, "shard");
    return strict && sh ? stage_shard(c, sh, i, s, err, errlen) : 0;
}

int record_stages_read_json(const json_t *root, struct run_record *rec, bool strict, char *err, size_t errlen)
{
    const json_t *a = get(root, "stages");
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) > RUN_MAX_STAGES)
        return strict
                   ? knee_fail(err, errlen, KNEE_EFORMAT, "stages is not a list of at most %d stages", RUN_MAX_STAGES)
                   : 0;
    size_t n = json_array_size(a);
    struct run_stage_result *s = xcalloc(n ? n : 1, sizeof *s);
    struct hlog_codec *c = hlog_codec_new();
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        hdr_init(&s[i].latency, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        rc = stage_read(c, json_array_get(a, i), i, strict, &s[i], err, errlen);
    }
    hlog_codec_free(c);
    if (rc) {
        record_stages_free(s, n);
        return rc;
    }
    record_stages_free(rec->stages, rec->nstages);
    rec->stages = s;
    rec->nstages = n;
    return 0;
}
