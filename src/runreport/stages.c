/* The summary's per-stage rows of a --stages run: one row per stage (its rate, or its clients
 * for closed-loop stages), its requests (by planned time in the stage: a closed loop plans a
 * request when it sends it), their outcomes, their ok latency and the stage's own rates, within
 * the summary's 100 columns (a stage's max is in the JSON). */
#include "runreport/runreport.h"

#include "core/units.h"
#include "record/stages.h"

#include <math.h>

void runreport_print_stages(FILE *out, const struct run_record *v)
{
    if (!v->nstages)
        return;
    fprintf(out, "\nstages (requests by planned time; latency of ok requests, ms; rates over the stage)\n");
    fprintf(out, "  %-3s %-20s %7s %9s %9s %7s %7s %8s %8s %8s\n", "#", v->stages[0].clients ? "clients" : "rate",
            "length", "planned", "ok", "failed", "dropped", "p50", "p99", "done/s");
    for (size_t i = 0; i < v->nstages; i++) {
        const struct run_stage_result *s = &v->stages[i];
        char r[64], a[32], b[32], d[32], p[32], o[32], f[32], x[32], l50[32], l99[32], rt[32];
        if (s->clients && s->from != s->to)
            snprintf(r, sizeof r, "%.0f -> %.0f clients", s->from, s->to);
        else if (s->clients)
            snprintf(r, sizeof r, "%.0f client%s", s->from, s->from == 1 ? "" : "s");
        else if (s->from != s->to)
            snprintf(r, sizeof r, "%s -> %s/s", units_fmt_rate(s->from, a, sizeof a),
                     units_fmt_rate(s->to, b, sizeof b));
        else
            snprintf(r, sizeof r, "%s/s", units_fmt_rate(s->from, a, sizeof a));
        uint64_t failed = 0;
        for (int k = 0; k < OUTCOME_COUNT; k++)
            if (record_outcome_failed((enum reqlog_outcome)k))
                failed += s->counts.outcome[k];
        fprintf(out, "  %-3zu %-20s %7s %9s %9s %7s %7s %8s %8s %8s\n", i + 1, r,
                units_fmt_duration(s->end_ns - s->start_ns, d, sizeof d),
                units_fmt_count(s->counts.planned, p, sizeof p),
                units_fmt_count(s->counts.outcome[OUTCOME_OK], o, sizeof o), units_fmt_count(failed, f, sizeof f),
                units_fmt_count(s->counts.dropped, x, sizeof x), units_fmt_ms(s->lat.p50, l50, sizeof l50),
                units_fmt_ms(s->lat.p99, l99, sizeof l99), units_fmt_rate(s->rates.completed, rt, sizeof rt));
    }
}
