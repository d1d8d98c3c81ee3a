/* knee lab stream: what a mean of token latencies hides. The stream server (knee serve --preset
 * stream: 8 slots, 20 events, the first 50 ms after a slot, then every 10 ms, a 500 ms stall with
 * probability 1%) at four rising rates, one open-loop round each, every event timed (knee run's
 * stream histograms): the gaps' mean against their median and p99 (a rare stall owns the tail of
 * the gaps), and the first event against the gaps as the load rises (a request waits for a slot
 * before its first event; once it streams, its gaps do not queue). */
#include "lab/internal.h"

#include "core/clock.h"
#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define STREAM_DEFAULT_NS (10 * NS_PER_S)
#define STREAM_QUICK_NS (4 * NS_PER_S)

static const struct lab_lengths lengths = {STREAM_QUICK_NS, STREAM_DEFAULT_NS, LAB_WARMUP_QUICK_NS, LAB_WARMUP_NS};

/* The server holds a slot about 50 + 19 x (0.99 x 10 + 0.01 x 500) = 333 ms: 8 slots serve about
 * 24 streams/s. The rates go from a quarter of that to just below it. */
static const double rates[LAB_STREAM_RATES] = {6, 12, 18, 22};

static void explain(FILE *out, const struct lab_stream_result *r)
{
    lab_heading(out, "what this run shows");
    if (!r->nrows)
        return;
    struct lab_say s = {.n = 0};
    const struct lab_stream_row *a = &r->row[0], *z = &r->row[r->nrows - 1];
    if (lab_say_invalid(&s, &a->valid, "the first round"))
        lab_say_add(&s, ": its numbers are knee's as much as the server's.");
    else
        lab_say_add(&s,
                    "at %.0f/s the gaps' mean was %.1f ms, their median %.1f ms and their p99 %.1f ms: the server "
                    "sends every %.0f ms and stalls %.0f ms once in %.0f gaps, so the mean is neither what a reader "
                    "usually waits nor what the slowest 1%% wait; the stall owns the tail.",
                    a->rate, a->gap_mean_ms, a->gap_p50_ms, a->gap_p99_ms, r->gap_ms, r->stall_ms, 1 / r->stall_p);
    lab_say_end(&s, out);
    lab_say_add(&s,
                "from %.0f/s to %.0f/s the first event's p99 went from %.1f to %.1f ms while the gaps' median went "
                "from %.1f to %.1f ms: a stream waits for a slot before its first token, so load shows first in "
                "the time to the first event; a benchmark that averages token times over the stream misses it.",
                a->rate, z->rate, a->first_p99_ms, z->first_p99_ms, a->gap_p50_ms, z->gap_p50_ms);
    lab_say_end(&s, out);
}

/* One round at rate: the stream histograms of every response after the warm-up into w. */
static int round_at(struct lab_exp *x, const struct lab_options *o, double rate, struct lab_stream_row *w)
{
    char url[160], what[96], name[32];
    snprintf(url, sizeof url, "http://%s/chat", serve_address(x->srv[0]));
    struct plan_target t;
    memset(&t, 0, sizeof t);
    t.name = "stream";
    t.url = url;
    t.rate = rate;
    struct run_config cfg;
    lab_run_config_init(&cfg, &t, 1, o->seed, x->dur_ns, x->warm_ns);
    cfg.plan.open_loop = true;
    snprintf(name, sizeof name, "rate%.0f", rate);
    snprintf(what, sizeof what, "%.0f streams/s, %.0f s", rate, (double)(x->dur_ns + x->warm_ns) / 1e9);
    lab_round_release(&x->rd);
    int rc = lab_round_run(&x->c, name, what, &cfg, &x->rd);
    if (rc)
        return rc;
    const struct run_stream_sum *s = &x->rd.res.all.stream_sum;
    w->rate = rate;
    w->responses = s->responses;
    w->events = s->events;
    w->first_p50_ms = s->first_event.p50;
    w->first_p99_ms = s->first_event.p99;
    w->gap_mean_ms = s->event_gap.mean;
    w->gap_p50_ms = s->event_gap.p50;
    w->gap_p99_ms = s->event_gap.p99;
    w->gap_max_ms = s->event_gap.max;
    lab_validity_of(&x->rd.res, &w->valid);
    lab_print_round_warnings(x->out, "  ", name, &x->rd.res);
    return 0;
}

int lab_stream(const struct lab_options *o, struct lab_stream_result *r)
{
    memset(r, 0, sizeof *r);
    struct lab_exp x;
    int rc = lab_exp_open(&x, o, "stream", &lengths);
    if (rc)
        return rc;
    struct serve_config cfg;
    if ((rc = lab_exp_preset(&x, "stream", o->seed, &cfg)) != 0)
        goto out;
    r->gap_ms = (double)cfg.stream_gap_ns / 1e6;
    r->stall_ms = (double)cfg.stream_stall_ns / 1e6;
    r->stall_p = cfg.stream_stall_p;
    FILE *out = x.out;
    fprintf(out,
            "knee lab stream: what a mean of token latencies hides (%d rates, %.0f s each after a %.1f s warm-up)\n",
            LAB_STREAM_RATES, (double)x.dur_ns / 1e9, (double)x.warm_ns / 1e9);
    fprintf(out,
            "  stream server %s: %u slots, %u events, the first after %.0f ms, then every %.0f ms, a %.0f ms stall "
            "with p=%.0f%%\n",
            serve_address(x.srv[0]), cfg.pool, cfg.stream_events, (double)cfg.stream_first_ns / 1e6, r->gap_ms,
            r->stall_ms, 100 * r->stall_p);
    fflush(out);
    for (size_t i = 0; i < LAB_STREAM_RATES && !lab_stopped(); i++) {
        if ((rc = round_at(&x, o, rates[i], &r->row[i])) != 0)
            goto out;
        r->nrows = i + 1;
    }
    fprintf(out, "\n  %6s%8s%9s   %-19s   %-37s\n", "rate/s", "streams", "events", "first event p50  p99",
            "event gap mean    p50     p99     max");
    for (size_t i = 0; i < r->nrows; i++) {
        const struct lab_stream_row *w = &r->row[i];
        fprintf(out, "  %6.0f%8llu%9llu   %9.1f%10.1f   %9.1f%8.1f%8.1f%8.1f\n", w->rate,
                (unsigned long long)w->responses, (unsigned long long)w->events, w->first_p50_ms, w->first_p99_ms,
                w->gap_mean_ms, w->gap_p50_ms, w->gap_p99_ms, w->gap_max_ms);
    }
    fprintf(out, "  (ms; first event from the planned send; every gap between two events of a stream)\n");
    explain(out, r);
    fflush(out);
out:
    lab_exp_close(&x);
    return rc;
}
