/* The presets of knee serve (the servers of the statistics-lab, queueing and knee articles)
 * and the checks every configuration passes before a server starts. */
#include "serve/serve.h"

#include "core/clock.h"
#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const char *const serve_preset_names[] = {"report", "quiet", "queue",  "flat", "fanout",
                                          "null",   "stall", "stream", NULL};

static const char *const summaries[] = {
    "server A: pool 4, 2 ms work (40 ms on a 10% miss), lock held 250 ms every 4 s",
    "server B: the same without the report job",
    "4 slots, 503 QUEUE_TIMEOUT after 250 ms waiting, work from /work?ms=N (default 20 ms)",
    "10 ms of real CPU per request on 1 worker: capacity 100 rps",
    "N parallel dependencies (default 1, ?fanout=N), each 200 ms with p=2%, else 1 ms",
    "a tiny fixed 200 response, no work: the calibration-probe target",
    "pool 4, 2 ms work (capacity 2,000 rps); a lock held 300 ms at random moments, every 20 s on average",
    "SSE: 8 slots, 20 events, the first after 50 ms, then every 10 ms, a 500 ms stall with p=1% (?events= ...)",
};
_Static_assert(sizeof summaries / sizeof summaries[0] + 1 == sizeof serve_preset_names / sizeof serve_preset_names[0],
               "one summary per preset name, by position");

static void defaults(struct serve_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->listen, sizeof c->listen, "127.0.0.1:0");
    c->seed = 1;
    c->workers = 1;
    c->max_conns = 10000;
    c->header_timeout_ns = 10 * NS_PER_S;
    c->idle_timeout_ns = 60 * NS_PER_S;
    c->grace_ns = 5 * NS_PER_S;
    c->max_header_bytes = 8192;
    c->max_body_bytes = 1024 * 1024;
    c->max_work_ns = 60 * NS_PER_S;
}

int serve_preset(const char *name, struct serve_config *c)
{
    defaults(c);
    if (!name)
        return KNEE_ENOTFOUND;
    if (strcmp(name, "report") == 0 || strcmp(name, "quiet") == 0) {
        c->pool = 4;
        c->hit_ns = 2 * NS_PER_MS;
        c->miss_ns = 40 * NS_PER_MS;
        c->miss_rate = 0.10;
        if (name[0] == 'r') {
            c->pause_every_ns = 4 * NS_PER_S;
            c->pause_for_ns = 250 * NS_PER_MS;
        }
    } else if (strcmp(name, "queue") == 0) {
        c->pool = 4;
        c->acquire_timeout_ns = 250 * NS_PER_MS;
        c->hit_ns = c->miss_ns = 20 * NS_PER_MS;
    } else if (strcmp(name, "flat") == 0) {
        c->cpu_ns = 10 * NS_PER_MS;
        c->workers = 1;
    } else if (strcmp(name, "fanout") == 0) {
        c->fanout = 1;
        c->dep_slow_prob = 0.02;
        c->dep_slow_ns = 200 * NS_PER_MS;
        c->dep_ns = 1 * NS_PER_MS;
    } else if (strcmp(name, "null") == 0) {
        c->null_response = true;
    } else if (strcmp(name, "stall") == 0) {
        /* The capacity article's occasional bad window: a service with a clear capacity whose
         * table lock is taken now and then, at moments nobody planned. */
        c->pool = 4;
        c->hit_ns = c->miss_ns = 2 * NS_PER_MS;
        c->pause_every_ns = 20 * NS_PER_S;
        c->pause_for_ns = 300 * NS_PER_MS;
        c->pause_random = true;
    } else if (strcmp(name, "stream") == 0) {
        /* A token stream behind a few model slots: a request waits for a slot (no timeout), so
         * load shows first in the time to the first event; the gaps after it do not queue. */
        c->pool = 8;
        c->stream = true;
        c->stream_events = 20;
        c->stream_first_ns = 50 * NS_PER_MS;
        c->stream_gap_ns = 10 * NS_PER_MS;
        c->stream_stall_ns = 500 * NS_PER_MS;
        c->stream_stall_p = 0.01;
    } else {
        return KNEE_ENOTFOUND;
    }
    snprintf(c->preset, sizeof c->preset, "%s", name);
    return 0;
}

const char *serve_preset_summary(const char *name)
{
    for (size_t i = 0; serve_preset_names[i]; i++)
        if (name && strcmp(name, serve_preset_names[i]) == 0)
            return summaries[i];
    return NULL;
}

static int bad(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "%s", msg);
    return KNEE_EINVAL;
}

/* A label is printed in lines and JSON: keep it to name characters. */
static bool label_ok(const char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
              *s == '_' || *s == '.'))
            return false;
    return true;
}

int serve_config_check(const struct serve_config *c, char *err, size_t errlen)
{
    if (c->null_response && (c->pool || c->hit_ns || c->miss_ns || c->miss_rate > 0 || c->pause_every_ns || c->cpu_ns ||
                             c->fanout || c->acquire_timeout_ns || c->dep_ns || c->dep_slow_ns || c->dep_slow_prob > 0))
        return bad(err, errlen,
                   "the null target does no work: it takes no pool, work, cache, pause, CPU or dependency settings");
    if (c->stream && (c->null_response || c->cpu_ns || c->fanout))
        return bad(err, errlen, "streamed answers take no null target, CPU work or fan-out");
    if (c->stream_events > SERVE_STREAM_EVENTS_MAX)
        return bad(err, errlen, "stream events: at most 100000");
    if (!(c->stream_stall_p >= 0 && c->stream_stall_p <= 1))
        return bad(err, errlen, "stream stall probability: must be between 0 and 1");
    if (c->pool > SERVE_POOL_MAX)
        return bad(err, errlen, "--pool: at most 100000 slots");
    if (c->acquire_timeout_ns && !c->pool)
        return bad(err, errlen, "--acquire-timeout needs a --pool to wait for");
    if (!(c->miss_rate >= 0 && c->miss_rate <= 1))
        return bad(err, errlen, "--miss-rate: must be between 0 and 1");
    if (!(c->dep_slow_prob >= 0 && c->dep_slow_prob <= 1))
        return bad(err, errlen, "--dep-slow-prob: must be between 0 and 1");
    if ((c->pause_every_ns == 0) != (c->pause_for_ns == 0))
        return bad(err, errlen, "--pause-every and --pause-for go together");
    if (c->pause_every_ns && c->pause_for_ns >= c->pause_every_ns)
        return bad(err, errlen, "--pause-for must be shorter than --pause-every");
    if (c->pause_random && !c->pause_every_ns)
        return bad(err, errlen, "random pauses need --pause-every and --pause-for");
    if (c->cpu_ns && (c->workers < 1 || c->workers > SERVE_WORKERS_MAX))
        return bad(err, errlen, "--workers: between 1 and 256");
    if (c->fanout > SERVE_FANOUT_MAX)
        return bad(err, errlen, "--fanout: at most 1000");
    if (c->max_conns < 1 || c->max_conns > SERVE_MAX_CONNS_MAX)
        return bad(err, errlen, "--max-conns: between 1 and 1000000");
    if (c->max_header_bytes < 64 || c->max_header_bytes > 65536)
        return bad(err, errlen, "--max-header-bytes: between 64 and 65536");
    if (c->header_timeout_ns == 0 || c->idle_timeout_ns == 0)
        return bad(err, errlen, "--header-timeout and --idle-timeout must be positive");
    if ((c->cert_file || c->key_file) && !c->tls)
        return bad(err, errlen, "--cert and --key are for TLS: add --tls");
    if (c->h3 && !c->tls)
        return bad(err, errlen, "--h3 is HTTP/3 over QUIC, which is TLS 1.3: add --tls");
    if ((c->cert_file == NULL) != (c->key_file == NULL))
        return bad(err, errlen, c->cert_file ? "--cert needs --key" : "--key needs --cert");
    static const struct {
        size_t offset;
        const char *flag;
    } waits[] = {
        {offsetof(struct serve_config, hit_ns), "--hit-ms"},
        {offsetof(struct serve_config, miss_ns), "--miss-ms"},
        {offsetof(struct serve_config, pause_every_ns), "--pause-every"},
        {offsetof(struct serve_config, acquire_timeout_ns), "--acquire-timeout"},
        {offsetof(struct serve_config, cpu_ns), "--cpu-ms"},
        {offsetof(struct serve_config, dep_slow_ns), "--dep-slow-ms"},
        {offsetof(struct serve_config, dep_ns), "--dep-ms"},
        {offsetof(struct serve_config, header_timeout_ns), "--header-timeout"},
        {offsetof(struct serve_config, idle_timeout_ns), "--idle-timeout"},
        {offsetof(struct serve_config, grace_ns), "--grace"},
        {offsetof(struct serve_config, max_work_ns), "max_work_ns"},
        {offsetof(struct serve_config, stream_first_ns), "stream first event"},
        {offsetof(struct serve_config, stream_gap_ns), "stream gap"},
        {offsetof(struct serve_config, stream_stall_ns), "stream stall"},
    };
    for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
        uint64_t v;
        memcpy(&v, (const char *)c + waits[i].offset, sizeof v);
        if (v > SERVE_DURATION_MAX_NS) {
            snprintf(err, errlen, "%s: at most 1h", waits[i].flag);
            return KNEE_EINVAL;
        }
    }
    if (!c->listen[0])
        return bad(err, errlen, "--listen: empty address");
    if (c->ntime_bounds > SERVE_TIME_MAX_BOUNDS)
        return bad(err, errlen, "server-time histogram: more than 64 bounds");
    for (unsigned i = 0; i < c->ntime_bounds; i++)
        if (c->time_bounds_ns[i] == 0 || (i && c->time_bounds_ns[i] <= c->time_bounds_ns[i - 1]))
            return bad(err, errlen, "server-time histogram: bounds must be > 0 and strictly increasing");
    if (!label_ok(c->preset))
        return bad(err, errlen, "preset label: letters, digits, '-', '_' and '.' only");
    return 0;
}
