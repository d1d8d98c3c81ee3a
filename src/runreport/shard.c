/* The shard record in knee run's text and JSON. The JSON carries the histograms themselves
 * (compressed as in an .hlog), not only their percentiles: percentiles of shards cannot be
 * averaged into the percentiles of the whole, histograms can be added exactly. */
#include "runreport/shard.h"

#include "core/clock.h"
#include "core/json.h"
#include "core/units.h"
#include "hlog/codec.h"
#include "load/shard.h"

#include <math.h>
#include <string.h>
#include <time.h>

const char *run_shard_plan_hex(uint64_t plan_id, char *buf, size_t len)
{
    snprintf(buf, len, "%016llx", (unsigned long long)plan_id);
    return buf;
}

/* "2026-11-30T13:00:00.250Z" */
static const char *utc(uint64_t unix_ns, char *buf, size_t len)
{
    time_t s = (time_t)(unix_ns / NS_PER_S);
    struct tm tm;
    char day[40] = "?";
    if (gmtime_r(&s, &tm))
        strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03lluZ", day, (unsigned long long)(unix_ns % NS_PER_S / NS_PER_MS));
    return buf;
}

void run_print_shard_start(FILE *out, const struct run_config *cfg)
{
    if (!cfg->shard_count && !cfg->start_at_unix_ns)
        return;
    char hex[24], when[48];
    if (cfg->shard_count)
        fprintf(out, "shard %u/%u (%s), plan %s", cfg->shard_index, cfg->shard_count,
                cfg->shard_source ? cfg->shard_source : "--shard",
                run_shard_plan_hex(run_shard_plan_id(cfg), hex, sizeof hex));
    else
        fprintf(out, "one process");
    if (cfg->start_at_unix_ns) {
        double in_s = ((double)cfg->start_at_unix_ns - (double)clock_wall_ns()) / 1e9;
        fprintf(out, ", start at %s (%s %.3f s)", utc(cfg->start_at_unix_ns, when, sizeof when),
                in_s >= 0 ? "in" : "LATE by", fabs(in_s));
    }
    fputc('\n', out);
}

static void print_clock(FILE *out, const struct run_shard *s)
{
    if (s->clock_synced)
        fprintf(out, "clock synchronised (max error %.3f ms)", s->clock_maxerror_ms);
    else
        fprintf(out, "clock NOT reported synchronised");
}

void run_print_shard_result(FILE *out, const struct run_result *res)
{
    const struct run_shard *s = &res->shard;
    if (!s->count)
        return;
    char hex[24];
    if (s->index == RUN_SHARD_MERGED) {
        fprintf(out, "\nshards: %zu of %u merged (plan %s), %s\n", s->nparts, s->count,
                run_shard_plan_hex(s->plan_id, hex, sizeof hex),
                s->complete ? "every shard ran its part" : "INCOMPLETE: a shard did not run its part to the end");
        if (s->start_at_unix_ns)
            fprintf(out, "  start skew (ready minus the shared instant; below 0: waited for it): %+.3f .. %+.3f ms\n",
                    (double)s->skew_min_ns / 1e6, (double)s->skew_max_ns / 1e6);
        for (size_t i = 0; i < s->nparts; i++) {
            const struct run_shard_part *p = &s->parts[i];
            if (!p->failed && !p->generator_limited &&
                !(s->start_at_unix_ns && p->start_skew_ns > (int64_t)s->lag_limit_ns))
                continue;
            fprintf(out, "  shard %u (%s):", p->index, p->host);
            if (p->failed)
                fprintf(out, " FAILED: %s;", p->failure);
            if (p->generator_limited)
                fprintf(out, " generator-limited;");
            if (s->start_at_unix_ns && p->start_skew_ns > (int64_t)s->lag_limit_ns)
                fprintf(out, " started %.3f ms late;", (double)p->start_skew_ns / 1e6);
            fputc('\n', out);
        }
        return;
    }
    fprintf(out, "\nshard %u/%u (%s), plan %s: ", s->index, s->count, s->source,
            run_shard_plan_hex(s->plan_id, hex, sizeof hex));
    if (s->start_at_unix_ns)
        fprintf(out, "ready %.3f ms %s the shared start instant, ", fabs((double)s->start_skew_ns / 1e6),
                s->start_skew_ns > 0 ? "AFTER" : "before");
    else
        fprintf(out, "no shared start instant (--start-at), ");
    print_clock(out, s);
    fprintf(out, "\n  merge the shards' outputs with: knee merge --json merged.json SHARD_FILES...\n");
}

uint64_t run_shard_hlog_comment(const struct run_config *cfg, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!cfg->shard_count && !cfg->start_at_unix_ns)
        return 0;
    char hex[24];
    snprintf(buf, len, "Logged with knee %s, shard %u/%u, plan %s, start at %llu.%09llu", KNEE_VERSION,
             run_shard_index(cfg), run_shard_count(cfg), run_shard_plan_hex(run_shard_plan_id(cfg), hex, sizeof hex),
             (unsigned long long)(cfg->start_at_unix_ns / NS_PER_S),
             (unsigned long long)(cfg->start_at_unix_ns % NS_PER_S));
    return cfg->start_at_unix_ns;
}

/* ---- JSON ---- */

static void hist(struct json *j, struct hlog_codec *c, const char *key, const struct hdr *h)
{
    json_key(j, key);
    json_object_begin(j);
    json_kv_int(j, "count", h->total_count);
    if (h->total_count) {
        json_kv_int(j, "min_ns", h->min_value);
        json_kv_int(j, "max_ns", h->max_value);
    }
    if (h->overflow_count) {
        json_kv_int(j, "overflow", h->overflow_count);
        json_kv_int(j, "overflow_max_ns", h->overflow_max);
    }
    const char *text;
    size_t len;
    if (h->counts && hlog_encode_base64(c, h, &text, &len) == 0)
        json_kv_string(j, "hdr", text);
    json_object_end(j);
}

/* The run's events exactly (load/run.h struct run_events, ns since t0): what the document's
 * "events" and "rates" are computed from, with the window and the first and last send, so a
 * merge adds the shards' events up as the engine adds its threads'. */
static void events_json(struct json *j, const struct run_events *ev)
{
    json_key(j, "events");
    json_object_begin(j);
    json_kv_uint(j, "window_start_ns", ev->window_start_ns);
    json_kv_uint(j, "window_end_ns", ev->window_end_ns);
    json_kv_uint(j, "planned", ev->planned);
    json_kv_uint(j, "sent", ev->sent);
    json_kv_uint(j, "completed", ev->completed);
    json_kv_uint(j, "ok", ev->ok);
    json_kv_uint(j, "sent_before", ev->sent_before);
    json_kv_uint(j, "sent_late", ev->sent_late);
    json_kv_uint(j, "completed_late", ev->completed_late);
    json_kv_uint(j, "sends", ev->sends);
    json_kv_uint(j, "first_send_ns", ev->first_send_ns);
    json_kv_uint(j, "last_send_ns", ev->last_send_ns);
    json_object_end(j);
}

static void target_hists(struct json *j, struct hlog_codec *c, const struct run_target_result *t)
{
    json_object_begin(j);
    json_kv_string(j, "name", t->name);
    json_kv_uint(j, "sent_on_time", t->counts.sent_on_time);
    events_json(j, &t->events);
    hist(j, c, "latency", &t->latency_all);
    json_key(j, "by_outcome");
    json_object_begin(j);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        if (t->latency[g].total_count)
            hist(j, c, run_group_name((enum run_group)g), &t->latency[g]);
    json_object_end(j);
    hist(j, c, "service", &t->service);
    hist(j, c, "ttfb", &t->ttfb);
    hist(j, c, "lag", &t->lag);
    hist(j, c, "connect", &t->connect);
    if (t->https)
        hist(j, c, "tls", &t->tls);
    json_key(j, "server_timing");
    json_object_begin(j);
    for (size_t i = 0; i < t->nst; i++)
        hist(j, c, t->st[i].name, &t->st[i].dur);
    json_object_end(j);
    json_object_end(j);
}

static void clock_json(struct json *j, const struct run_shard *s)
{
    json_key(j, "clock");
    json_object_begin(j);
    json_kv_bool(j, "synced", s->clock_synced);
    json_kv_double(j, "maxerror_ms", s->clock_maxerror_ms);
    json_kv_double(j, "esterror_ms", s->clock_esterror_ms);
    json_object_end(j);
}

/* The whole plan's streams (open loop), for the merge's check that the shards planned it all. */
static void plan_json(struct json *j, const struct run_shard *s)
{
    json_key(j, "streams");
    json_array_begin(j);
    for (size_t i = 0; i < s->nstreams; i++) {
        json_object_begin(j);
        json_kv_double(j, "rate_from", s->streams[i].rate_from);
        json_kv_double(j, "rate_to", s->streams[i].rate_to);
        if (s->streams[i].limit == UINT64_MAX) {
            json_key(j, "limit");
            json_null(j);
        } else {
            json_kv_uint(j, "limit", s->streams[i].limit);
        }
        json_object_end(j);
    }
    json_array_end(j);
}

void run_write_json_shard(struct json *j, const struct run_result *res)
{
    const struct run_shard *s = &res->shard;
    if (!s->count)
        return;
    char hex[24], when[48];
    bool merged = s->index == RUN_SHARD_MERGED;
    json_key(j, "shard");
    json_object_begin(j);
    json_kv_bool(j, "merged", merged);
    if (merged) {
        json_key(j, "index");
        json_null(j);
    } else {
        json_kv_uint(j, "index", s->index);
    }
    json_kv_uint(j, "count", s->count);
    json_kv_string(j, "plan_id", run_shard_plan_hex(s->plan_id, hex, sizeof hex));
    if (s->start_at_unix_ns) {
        json_kv_double(j, "start_at_unix_s", (double)s->start_at_unix_ns / 1e9);
        json_kv_uint(j, "start_at_unix_ns", s->start_at_unix_ns);
        json_kv_string(j, "start_at_utc", utc(s->start_at_unix_ns, when, sizeof when));
    } else {
        json_key(j, "start_at_unix_s");
        json_null(j);
    }
    json_kv_uint(j, "t0_unix_ns", s->t0_unix_ns);
    json_kv_double(j, "lag_limit_ms", (double)s->lag_limit_ns / 1e6);
    if (merged) {
        json_kv_bool(j, "complete", s->complete);
        json_key(j, "start_skew_ms");
        json_object_begin(j);
        json_kv_double(j, "min", (double)s->skew_min_ns / 1e6);
        json_kv_double(j, "max", (double)s->skew_max_ns / 1e6);
        json_object_end(j);
        json_key(j, "shards");
        json_array_begin(j);
        for (size_t i = 0; i < s->nparts; i++) {
            const struct run_shard_part *p = &s->parts[i];
            json_object_begin(j);
            json_kv_uint(j, "index", p->index);
            json_kv_string(j, "host", p->host);
            json_kv_double(j, "start_skew_ms", (double)p->start_skew_ns / 1e6);
            json_kv_bool(j, "generator_limited", p->generator_limited);
            json_kv_bool(j, "failed", p->failed);
            if (p->failed)
                json_kv_string(j, "failure", p->failure);
            json_object_end(j);
        }
        json_array_end(j);
    } else {
        json_kv_string(j, "source", s->source);
        json_kv_double(j, "start_skew_ms", (double)s->start_skew_ns / 1e6);
        clock_json(j, s);
    }
    plan_json(j, s);
    struct hlog_codec *c = hlog_codec_new();
    json_key(j, "histograms");
    json_object_begin(j);
    json_key(j, "all");
    target_hists(j, c, &res->all);
    json_key(j, "targets");
    json_array_begin(j);
    for (size_t i = 0; i < res->ntargets; i++)
        target_hists(j, c, &res->targets[i]);
    json_array_end(j);
    json_object_end(j);
    hlog_codec_free(c);
    json_object_end(j);
}
