/* Rates by event time and the generator-limited rule (record/record.h). Both are pure functions of
 * counts and summaries, so the engine, the lab, knee capacity and anything that reads a
 * per-request log apply the same definitions (docs/FORMATS.md, "Rates"). */
#include "record/record.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void record_events_init(struct run_events *ev, uint64_t window_start_ns, uint64_t window_end_ns)
{
    memset(ev, 0, sizeof *ev);
    ev->window_start_ns = window_start_ns;
    ev->window_end_ns = window_end_ns;
}

void record_events_count(struct run_events *ev, uint64_t planned_ns, uint64_t sent_ns, uint64_t done_ns,
                         enum reqlog_outcome o)
{
    uint64_t ws = ev->window_start_ns, we = ev->window_end_ns;
    /* the planned time always exists (0 is t0 itself); sent and done are 0 when there is none */
    if (planned_ns >= ws && planned_ns < we)
        ev->planned++;
    if (sent_ns) {
        if (sent_ns < ws) {
            ev->sent_before++;
        } else {
            if (!ev->sends || sent_ns < ev->first_send_ns)
                ev->first_send_ns = sent_ns;
            if (!ev->sends || sent_ns > ev->last_send_ns)
                ev->last_send_ns = sent_ns;
            ev->sends++;
            if (sent_ns < we)
                ev->sent++;
            else
                ev->sent_late++;
        }
    }
    if (done_ns && o != OUTCOME_CANCELLED && o != OUTCOME_DROPPED) {
        if (done_ns >= we) {
            ev->completed_late++;
        } else if (done_ns >= ws) {
            ev->completed++;
            if (o == OUTCOME_OK)
                ev->ok++;
        }
    }
}

void record_events_add_reqlog(struct run_events *ev, const struct reqlog_record *r)
{
    record_events_count(ev, r->planned_ns, r->sent_ns, r->done_ns, (enum reqlog_outcome)r->outcome);
}

void record_events_merge(struct run_events *d, const struct run_events *s)
{
    if (s->window_start_ns < d->window_start_ns)
        d->window_start_ns = s->window_start_ns;
    if (s->window_end_ns > d->window_end_ns)
        d->window_end_ns = s->window_end_ns;
    d->planned += s->planned;
    d->sent += s->sent;
    d->completed += s->completed;
    d->ok += s->ok;
    d->sent_before += s->sent_before;
    d->sent_late += s->sent_late;
    d->completed_late += s->completed_late;
    if (s->sends) {
        if (!d->sends || s->first_send_ns < d->first_send_ns)
            d->first_send_ns = s->first_send_ns;
        if (!d->sends || s->last_send_ns > d->last_send_ns)
            d->last_send_ns = s->last_send_ns;
    }
    d->sends += s->sends;
}

void record_rates_of(const struct run_events *ev, struct run_rates *r)
{
    memset(r, 0, sizeof *r);
    bool bounded = ev->window_end_ns != UINT64_MAX && ev->window_end_ns > ev->window_start_ns;
    r->window_s = bounded ? (double)(ev->window_end_ns - ev->window_start_ns) / 1e9 : NAN;
    double w = r->window_s > 0 ? r->window_s : NAN;
    r->planned = (double)ev->planned / w;
    r->sent = (double)ev->sent / w;
    r->completed = (double)ev->completed / w;
    r->goodput = (double)ev->ok / w;
    r->sending_s = ev->sends ? (double)(ev->last_send_ns - ev->first_send_ns) / 1e9 : NAN;
    /* n sends span n - 1 gaps: the pace of a steady sender, whatever n */
    r->achieved_send = ev->sends >= 2 && r->sending_s > 0 ? (double)(ev->sends - 1) / r->sending_s : NAN;
    r->sent_late = ev->sent_late;
    r->completed_late = ev->completed_late;
}

/* "a" then "; b": append one clause to the verdict's reasons. */
static void why_add(struct run_generator_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void why_add(struct run_generator_verdict *v, const char *fmt, ...)
{
    size_t off = strlen(v->why);
    if (off + 3 >= sizeof v->why)
        return;
    if (off)
        off += (size_t)snprintf(v->why + off, sizeof v->why - off, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->why + off, sizeof v->why - off, fmt, ap);
    va_end(ap);
}

/* a > share * b, with both measured */
static bool above_share(double a, double b)
{
    return isfinite(a) && isfinite(b) && a > RUN_LAG_LATENCY_SHARE * b;
}

double record_lag_beyond_slack(double lag_ms, double slack_ms)
{
    if (!isfinite(lag_ms) || !(slack_ms > 0))
        return lag_ms;
    return lag_ms > slack_ms ? lag_ms - slack_ms : 0;
}

bool record_generator_judge(const struct run_generator_input *in, struct run_generator_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->gap_ms = in->planned_rate > 0 ? 1e3 / in->planned_rate : NAN;
    if (!in->open_loop)
        return false;
    if (isfinite(in->sent_on_schedule) && in->sent_on_schedule < RUN_SEND_RATE_FLOOR) {
        v->short_send = true;
        why_add(v, "sent %.1f%% of planned requests on schedule (floor %.0f%%)", 100 * in->sent_on_schedule,
                100 * RUN_SEND_RATE_FLOOR);
    }
    /* the lateness the user asked for (--timer-slack) is not the generator's fault: the rules
     * see the lag beyond it (a percentile less a constant is the percentile of the excess) */
    double slack = in->timer_slack_ms > 0 ? in->timer_slack_ms : 0;
    double lag99 = record_lag_beyond_slack(in->lag_p99_ms, slack);
    double lag50 = record_lag_beyond_slack(in->lag_p50_ms, slack);
    const char *beyond = slack > 0 ? " beyond --timer-slack" : "";
    if (in->lag_limit_ms > 0) {
        if (isfinite(lag99) && lag99 > in->lag_limit_ms) {
            v->over_limit = true;
            why_add(v, "lag p99 %.3f ms%s above --lag-limit %.3f ms", lag99, beyond, in->lag_limit_ms);
        }
    } else if (isfinite(lag99) && lag99 > (double)RUN_LAG_FLOOR_NS / 1e6) {
        if (above_share(lag99, in->latency_p99_ms)) {
            v->shapes_tail = true;
            why_add(v, "lag p99 %.3f ms%s is %.0f%% of the latency p99 %.3f ms", lag99, beyond,
                    100 * lag99 / in->latency_p99_ms, in->latency_p99_ms);
        }
        if (lag50 > (double)RUN_LAG_FLOOR_NS / 1e6 && above_share(lag50, in->latency_p50_ms)) {
            v->shapes_median = true;
            why_add(v, "lag p50 %.3f ms%s is %.0f%% of the latency p50 %.3f ms", lag50, beyond,
                    100 * lag50 / in->latency_p50_ms, in->latency_p50_ms);
        }
        v->bursts =
            isfinite(v->gap_ms) && lag99 >= RUN_LAG_BURST_GAPS * v->gap_ms && above_share(lag99, in->latency_p50_ms);
        if (v->bursts && !v->shapes_tail)
            why_add(v,
                    "lag p99 %.3f ms%s spans %.0f planned sends (one every %.3g ms), which leave together; it is "
                    "%.0f%% of the latency p50 %.3f ms",
                    lag99, beyond, lag99 / v->gap_ms, v->gap_ms, 100 * lag99 / in->latency_p50_ms, in->latency_p50_ms);
    }
    v->limited = v->short_send || v->over_limit || v->shapes_tail || v->shapes_median || v->bursts;
    return v->limited;
}
