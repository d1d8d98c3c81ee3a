/* Below the summary: the terminal's pictures of a run (its latency histogram and the p99 of each
 * second, on a terminal only) and the shard record's lines (a shard's skew and clock, a merge's
 * shards). */
#include "runreport/internal.h"

#include "termplot/termplot.h"

/* The doubling buckets of a histogram in ns, in ms from the power of two at or below its
 * smallest value (1 us at the least), each recorded value at its bucket's median equivalent. */
static void dbl_of_hdr(const struct hdr *h, struct dbl_hist *d)
{
    double min_ms = h->counts && h->total_count ? (double)hdr_min(h) / 1e6 : 1;
    double first = 1.0 / 1024;
    while (first * 2 <= min_ms && first < 1e6)
        first *= 2;
    dbl_init(d, first);
    if (!h->counts || !h->total_count)
        return;
    struct hdr_iter it;
    hdr_iter_recorded_init(&it, h);
    while (hdr_iter_next(&it))
        dbl_add(d, (double)hdr_median_equivalent(h, it.value_iterated_to) / 1e6, (uint64_t)it.count_added_in_step);
}

void runreport_print_pictures(FILE *out, int fd, const struct run_record *res)
{
    struct termplot tp;
    termplot_detect(&tp, fd);
    if (!tp.enabled || !res->all.latency_all.counts || !res->all.latency_all.total_count)
        return;
    struct dbl_hist d;
    dbl_of_hdr(&res->all.latency_all, &d);
    struct run_summary s;
    record_summary_of(&res->all.latency_all, &s);
    termplot_histogram(out, &tp,
                       res->config.open_loop ? "latency (ms), planned send -> full response (T5 - T0), doubling buckets"
                                             : "latency (ms), send -> full response (T5 - T1), doubling buckets",
                       &d, "ms", s.p99);
    double *p99 = xcalloc(res->nticks ? res->nticks : 1, sizeof *p99);
    for (size_t i = 0; i < res->nticks; i++)
        p99[i] = res->ticks[i].p99_ms;
    termplot_sparkline(out, &tp, "p99 per second", p99, res->nticks, "ms");
    free(p99);
}

/* ---- the shard record: a shard's skew and clock, a merge's shards ---- */

static void print_clock(FILE *out, const struct run_shard *s)
{
    if (s->clock_synced)
        fprintf(out, "clock synchronised (max error %.3f ms)", s->clock_maxerror_ms);
    else
        fprintf(out, "clock NOT reported synchronised");
}

void runreport_print_shard(FILE *out, const struct run_record *res)
{
    const struct run_shard *s = &res->shard;
    if (!s->count)
        return;
    char hex[24];
    if (s->index == RUN_SHARD_MERGED) {
        fprintf(out, "\nshards: %zu of %u merged (plan %s), %s\n", s->nparts, s->count,
                record_shard_plan_hex(s->plan_id, hex, sizeof hex),
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
            const char *sep = " "; /* the items joined by "; " */
            if (p->failed) {
                fprintf(out, "%sFAILED: %s", sep, p->failure);
                sep = "; ";
            }
            if (p->generator_limited) {
                fprintf(out, "%sgenerator-limited", sep);
                sep = "; ";
            }
            if (s->start_at_unix_ns && p->start_skew_ns > (int64_t)s->lag_limit_ns)
                fprintf(out, "%sstarted %.3f ms late", sep, (double)p->start_skew_ns / 1e6);
            fputc('\n', out);
        }
        return;
    }
    fprintf(out, "\nshard %u/%u (%s), plan %s: ", s->index, s->count, s->source,
            record_shard_plan_hex(s->plan_id, hex, sizeof hex));
    if (s->start_at_unix_ns)
        fprintf(out, "ready %.3f ms %s the shared start instant, ", fabs((double)s->start_skew_ns / 1e6),
                s->start_skew_ns > 0 ? "AFTER" : "before");
    else
        fprintf(out, "no shared start instant (--start-at), ");
    print_clock(out, s);
    fprintf(out, "\n  merge the shards' outputs with: knee merge --json merged.json SHARD_FILES...\n");
}
