/* The shard record in knee run's text: a shard's skew and clock, a merge's shards. */
#include "runreport/shard.h"

#include <math.h>
#include <string.h>

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
