/* Streamed responses in the record: the first-event, event-gap and events-per-response
 * histograms of a target, their merge and their statistics. */
#include "record/record.h"

#include <math.h>

void record_stream_hist(struct hdr *h, int64_t value, int64_t count)
{
    if (!h->counts) /* most runs stream nothing: allocated on first use */
        hdr_init(h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_record(h, value, count);
}

static void add_hist(struct hdr *d, const struct hdr *s)
{
    if (!s->counts)
        return;
    if (!d->counts)
        hdr_init(d, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_add(d, s);
}

void record_stream_add(struct run_stream *d, const struct run_stream *s)
{
    add_hist(&d->first_event, &s->first_event);
    add_hist(&d->event_gap, &s->event_gap);
    add_hist(&d->per_response, &s->per_response);
    d->events += s->events;
    d->responses += s->responses;
    d->not_sse += s->not_sse;
    d->partial += s->partial;
}

void record_stream_release(struct run_stream *s)
{
    if (s->first_event.counts)
        hdr_release(&s->first_event);
    if (s->event_gap.counts)
        hdr_release(&s->event_gap);
    if (s->per_response.counts)
        hdr_release(&s->per_response);
}

void record_stream_reset(struct run_stream *s)
{
    if (s->first_event.counts)
        hdr_reset(&s->first_event);
    if (s->event_gap.counts)
        hdr_reset(&s->event_gap);
    if (s->per_response.counts)
        hdr_reset(&s->per_response);
    s->events = s->responses = s->not_sse = s->partial = 0;
}

void record_stream_summarize(const struct run_stream *s, double window_s, struct run_stream_sum *out)
{
    out->present = s->responses > 0;
    record_summary_of(&s->first_event, &out->first_event);
    record_summary_of(&s->event_gap, &out->event_gap);
    record_summary_of(&s->per_response, &out->per_response);
    /* a count, not ns: undo record_summary_of's ns -> ms */
    struct run_summary *c = &out->per_response;
    c->mean *= 1e6, c->stdev *= 1e6, c->min *= 1e6, c->max *= 1e6;
    c->p50 *= 1e6, c->p90 *= 1e6, c->p95 *= 1e6, c->p99 *= 1e6, c->p999 *= 1e6;
    out->events = s->events;
    out->responses = s->responses;
    out->not_sse = s->not_sse;
    out->partial = s->partial;
    out->events_per_s = window_s > 0 ? (double)s->events / window_s : NAN;
}
