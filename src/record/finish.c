/* The one derivation of a run record (record/record.h record_finish): once a producer has put
 * in the targets' counts, histograms and events, everything else a report shows is derived
 * here, the same way for every producer — the window and the rates over it, the statistics,
 * the shares and identities, the generator verdict and the warnings, in knee run's words. */
#include "record/record.h"
#include "record/stages.h"

#include "core/units.h"
#include "stats/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

void record_sum_targets(struct run_record *rec)
{
    record_target_release(&rec->all);
    record_target_init(&rec->all);
    snprintf(rec->all.name, sizeof rec->all.name, "all");
    for (size_t i = 0; i < rec->ntargets; i++)
        record_target_add(&rec->all, &rec->targets[i]);
}

void record_window(const struct run_record *rec, const struct record_finish_in *in, uint64_t *start_ns,
                   uint64_t *end_ns)
{
    uint64_t wend = in->plan_end_ns;
    if (wend == UINT64_MAX)
        wend = in->finish_ns; /* a closed loop with --requests: until its last thread finished */
    else if (rec->interrupted && in->stop_ns < wend)
        wend = in->stop_ns;
    *start_ns = rec->config.warmup_ns;
    *end_ns = wend < *start_ns ? *start_ns : wend;
}

void record_set_window(struct run_record *rec, uint64_t ws_ns, uint64_t we_ns)
{
    rec->window_start_s = (double)ws_ns / 1e9;
    rec->window_end_s = (double)we_ns / 1e9;
    rec->window_s = (double)(we_ns - ws_ns) / 1e9;
    /* rates: every event counted by its time against this window (record/rates.c) */
    record_events_init(&rec->all.events, ws_ns, we_ns);
    for (size_t i = 0; i < rec->ntargets; i++) {
        struct run_target_result *r = &rec->targets[i];
        r->events.window_start_ns = ws_ns;
        r->events.window_end_ns = we_ns;
        record_events_merge(&rec->all.events, &r->events);
        record_rates_of(&r->events, &r->rates);
    }
    rec->all.events.window_start_ns = ws_ns;
    rec->all.events.window_end_ns = we_ns;
    record_rates_of(&rec->all.events, &rec->all.rates);
}

static void target_summarize(struct run_target_result *t)
{
    struct run_target_stats *s = &t->sum;
    record_summary_of(&t->latency_all, &s->latency_all);
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        record_summary_of(&t->latency[g], &s->latency[g]);
    record_summary_of(&t->service, &s->service);
    record_summary_of(&t->ttfb, &s->ttfb);
    record_summary_of(&t->lag, &s->lag);
    record_summary_of(&t->connect, &s->connect);
    record_summary_of(&t->tls, &s->tls);
    for (size_t i = 0; i < t->nst; i++)
        record_summary_of(&t->st[i].dur, &t->st[i].sum);
}

void record_summarize(struct run_record *rec)
{
    for (size_t i = 0; i < rec->ntargets; i++) {
        target_summarize(&rec->targets[i]);
        record_stream_summarize(&rec->targets[i].stream, rec->window_s, &rec->targets[i].stream_sum);
    }
    target_summarize(&rec->all);
    record_stream_summarize(&rec->all.stream, rec->window_s, &rec->all.stream_sum);
    record_stages_summarize(rec);
}

void record_derive(struct run_record *rec)
{
    const struct run_counts *c = &rec->all.counts;
    rec->sent_on_schedule = c->planned ? (double)c->sent_on_time / (double)c->planned : NAN;
    uint64_t failed = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (record_outcome_failed((enum reqlog_outcome)o))
            failed += c->outcome[o];
    rec->failed_share = c->sent ? (double)failed / (double)c->sent : NAN;
    rec->no_ok = c->outcome[OUTCOME_OK] == 0;
    rec->accounting_ok = record_counts_hold(&rec->all.counts) && record_counts_hold(&rec->all.warmup_counts);
    for (size_t i = 0; i < rec->ntargets; i++)
        rec->accounting_ok &=
            record_counts_hold(&rec->targets[i].counts) && record_counts_hold(&rec->targets[i].warmup_counts);
}

void record_warn_failures(struct run_record *rec)
{
    char failures[256];
    const struct run_counts *c = &rec->all.counts;
    if (rec->no_ok)
        warn_add(&rec->warnings, true,
                 "FAILED: not one request succeeded (%s): there is no latency of a working service to report",
                 record_describe_failures(c, failures, sizeof failures));
    else if (rec->failed_share >= RUN_HIGH_FAILED_SHARE)
        warn_add(&rec->warnings, true,
                 "ERRORS: %.1f%% of the requests sent failed (%s): the latency of all requests mixes "
                 "failures in; thresholds on latency use ok requests",
                 100 * rec->failed_share, record_describe_failures(c, failures, sizeof failures));
}

void record_generator_input(const struct run_record *rec, struct run_generator_input *in)
{
    struct run_summary lag, latency;
    record_summary_of(&rec->all.lag, &lag);
    record_summary_of(&rec->all.latency_all, &latency);
    *in = (struct run_generator_input){
        .open_loop = rec->config.open_loop,
        .sent_on_schedule = rec->sent_on_schedule,
        .lag_p50_ms = lag.p50,
        .lag_p99_ms = lag.p99,
        .latency_p50_ms = latency.p50,
        .latency_p99_ms = latency.p99,
        .planned_rate = rec->all.rates.planned,
        .lag_limit_ms = (double)rec->config.lag_limit_ns / 1e6,
        .timer_slack_ms = (double)rec->config.timer_slack_ns / 1e6,
    };
}

/* Every HTTP/2 server limit knee heard was 0 (SETTINGS_MAX_CONCURRENT_STREAMS: a server shedding
 * load): the requests waited for the server to allow a stream, not for the generator. */
static bool h2_server_allowed_none(const struct run_record *rec)
{
    return rec->all.pc.h2_limit_seen && rec->all.pc.h2_max_concurrent == 0;
}

/* Open loop: the generator verdict (record_generator_judge) and, when limited, its warning with
 * what the generator knows of why (requests that waited for a connection, dropped ones, its
 * timers' lateness). */
static void judge_generator(struct run_record *rec, const struct record_finish_in *in)
{
    const struct run_counts *c = &rec->all.counts;
    if (!rec->config.open_loop || !c->planned)
        return;
    struct run_generator_input gin;
    record_generator_input(rec, &gin);
    if (!record_generator_judge(&gin, &rec->generator))
        return;
    /* not one request succeeded: the target is the story (FAILED says so), not the generator; the
     * lag of requests that fail at once (refused connections) is a large share of their latency */
    if (h2_server_allowed_none(rec) || rec->no_ok) { /* the lag and the drops are the server's (warn_losses says so) */
        rec->generator.limited = false;
        rec->generator.why[0] = '\0';
        return;
    }
    rec->generator_limited = true;
    char why[384] = "", n[32];
    size_t off = 0;
    if (c->queued)
        off += (size_t)snprintf(why + off, sizeof why - off,
                                "; %s request%s waited for a connection (pool cap %u, at most %d "
                                "connects at a time per thread)",
                                units_fmt_count(c->queued, n, sizeof n), plural(c->queued), rec->pool_cap,
                                RUN_MAX_CONNECTING);
    if (c->dropped && off < sizeof why)
        off += (size_t)snprintf(why + off, sizeof why - off, "; %s dropped", units_fmt_count(c->dropped, n, sizeof n));
    if (isfinite(in->late_p99_ms) && off < sizeof why)
        snprintf(why + off, sizeof why - off, "; timer lateness p99 %.3f ms", in->late_p99_ms);
    warn_add(&rec->warnings, true, "GENERATOR-LIMITED: the generator, not the service, shaped this run: %s%s",
             rec->generator.why, why);
}

/* Requests the generator never sent (dropped) or never saw answered (cancelled), and
 * connections that failed or carried bytes nobody asked for. */
static void warn_losses(struct run_record *rec)
{
    const struct run_counts *c = &rec->all.counts;
    char n[32];
    if (c->dropped) {
        uint64_t other = c->dropped - (rec->unreached < c->dropped ? rec->unreached : c->dropped);
        if (rec->unreached)
            warn_add(&rec->warnings, true,
                     "%s planned request%s never sent (dropped): the generator had not reached %s when the "
                     "drain ended (--duration + --drain bound the run)",
                     units_fmt_count(rec->unreached, n, sizeof n), rec->unreached == 1 ? " was" : "s were",
                     rec->unreached == 1 ? "it" : "them");
        if (other)
            warn_add(&rec->warnings, true, "%s planned request%s never sent (dropped)%s",
                     units_fmt_count(other, n, sizeof n), other == 1 ? " was" : "s were",
                     c->queue_overflow                        ? ": the wait queue overflowed"
                     : rec->config.when_busy == RUN_BUSY_DROP ? ": every connection was busy (--when-busy drop)"
                     : h2_server_allowed_none(rec)
                         ? ": still waiting for a stream when the drain ended: the server allowed none (HTTP/2 "
                           "SETTINGS_MAX_CONCURRENT_STREAMS 0)"
                         : ": still waiting for a connection when the drain ended");
    }
    uint64_t cancelled = c->outcome[OUTCOME_CANCELLED];
    if (cancelled)
        warn_add(&rec->warnings, true, "%s request%s still in flight when the drain ended and %s cancelled",
                 units_fmt_count(cancelled, n, sizeof n), cancelled == 1 ? " was" : "s were",
                 cancelled == 1 ? "was" : "were");
    if (c->conns_failed)
        warn_add(&rec->warnings, true, "%s connection attempt%s failed (refused, unreachable or out of descriptors)",
                 units_fmt_count(c->conns_failed, n, sizeof n), plural(c->conns_failed));
    if (c->conns_unsolicited)
        warn_add(&rec->warnings, true,
                 "%s time%s the server sent bytes nobody asked for (e.g. more than its Content-Length)",
                 units_fmt_count(c->conns_unsolicited, n, sizeof n), plural(c->conns_unsolicited));
}

void record_note_samples(struct run_record *rec)
{
    char n[32];
    uint64_t n_all = (uint64_t)rec->all.latency_all.total_count;
    if (n_all && n_all < (uint64_t)(STATS_MIN_BEYOND / 0.01))
        warn_add(&rec->warnings, false,
                 "only %s latency sample%s: p99 rests on fewer than %d samples above it, p99.9 on none",
                 units_fmt_count(n_all, n, sizeof n), plural(n_all), STATS_MIN_BEYOND);
    else if (n_all && n_all < (uint64_t)(STATS_MIN_BEYOND / 0.001))
        warn_add(&rec->warnings, false,
                 "only %s latency samples: p99.9 rests on fewer than %d samples above it; read it as rough",
                 units_fmt_count(n_all, n, sizeof n), STATS_MIN_BEYOND);
}

void record_note_warmup(struct run_record *rec)
{
    char n[32];
    uint64_t warm_n = rec->all.warmup_counts.planned;
    if (rec->config.warmup_ns)
        warn_add(&rec->warnings, false,
                 "warm-up: %s request%s planned in the first %.3g s %s left out of these statistics%s",
                 units_fmt_count(warm_n, n, sizeof n), plural(warm_n), (double)rec->config.warmup_ns / 1e9,
                 warm_n == 1 ? "is" : "are",
                 rec->config.out_log ? (warm_n == 1 ? " (it is in --out)" : " (they are in --out)") : "");
}

void record_finish(struct run_record *rec, const struct record_finish_in *in)
{
    record_sum_targets(rec);
    rec->elapsed_s = (double)in->finish_ns / 1e9;
    uint64_t ws_ns, we_ns;
    record_window(rec, in, &ws_ns, &we_ns);
    record_set_window(rec, ws_ns, we_ns);
    record_summarize(rec);
    record_derive(rec);

    /* warnings, most important first */
    if (!rec->accounting_ok)
        warn_add(&rec->warnings, true,
                 "BUG: the accounting identities do not hold (planned = sent + dropped; sent = outcomes); "
                 "please report this run");
    record_warn_failures(rec);
    if (rec->interrupted)
        warn_add(&rec->warnings, true, "interrupted: planning stopped early at %.2f s; the numbers cover what ran",
                 (double)in->stop_ns / 1e9);
    judge_generator(rec, in);
    warn_losses(rec);
    record_note_samples(rec);
    record_note_warmup(rec);
    if (rec->log_slowed)
        warn_add(&rec->warnings, true,
                 "the request log writer could not keep up and held the load threads back: numbers may be "
                 "pessimistic (write --out to a faster disk)");
}

void record_stopped_on_purpose(struct run_record *rec, const char *fmt, ...)
{
    if (!rec->interrupted)
        return;
    rec->interrupted = false;
    char line[WARN_MAX_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < rec->warnings.n; i++)
        if (strncmp(rec->warnings.items[i], "interrupted:", 12) == 0)
            warn_replace(&rec->warnings, i, "%s", line);
}

void record_set_aborted(struct run_record *rec, const char *rule, double at_s)
{
    rec->aborted.set = true;
    snprintf(rec->aborted.rule, sizeof rec->aborted.rule, "%s", rule);
    rec->aborted.at_s = at_s;
    for (size_t i = 0; i < rec->warnings.n; i++)
        if (strncmp(rec->warnings.items[i], "interrupted:", 12) == 0)
            warn_replace(&rec->warnings, i,
                         "ABORTED: --abort-if %s fired at %.1f s: planning stopped there and the requests in flight "
                         "drained; the numbers cover what ran",
                         rec->aborted.rule, at_s);
}
