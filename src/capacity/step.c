/* One step judged: did the generator deliver the planned rate, and did every SLO term pass?
 * capacity_step_delivered is the one reader of the engine's rate fields (see capacity.h). */
#include "capacity/capacity.h"

#include "core/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool capacity_step_delivered(const struct run_result *res, double *achieved_per_s, char *why, size_t whylen)
{
    /* The merge point with the engine's rate definitions: planned_rate and send_ratio
     * (requests sent on schedule / planned) give the achieved send rate of the window;
     * generator_limited is the engine's own verdict (short sends or lag p99 over the limit). */
    double planned = res->planned_rate;
    double achieved = isfinite(res->send_ratio) ? planned * res->send_ratio : NAN;
    struct run_summary lag;
    run_summarize(&res->all.lag, &lag);
    if (achieved_per_s)
        *achieved_per_s = achieved;
    bool short_send = !(achieved >= CAPACITY_DELIVERED * planned);
    bool delivered = !short_send && !res->generator_limited;
    if (why && whylen) {
        why[0] = '\0';
        if (short_send)
            snprintf(why, whylen, "not delivered: sent %.1f%% of the plan on schedule (%.1f of %.1f/s, floor %.0f%%)",
                     100 * (isfinite(achieved) && planned > 0 ? achieved / planned : 0),
                     isfinite(achieved) ? achieved : 0, planned, 100 * CAPACITY_DELIVERED);
        else if (!delivered)
            snprintf(why, whylen, "not delivered: the generator was limited (lag p99 %.3g ms)", lag.p99);
    }
    return delivered;
}

/* "p99 123.4 ms (SLO p99<100ms)" for a failed term. */
static void term_text(const struct run_threshold *t, char *buf, size_t len)
{
    const char *unit = run_threshold_unit(t);
    char mv[48];
    if (!isfinite(t->measured))
        snprintf(mv, sizeof mv, "no samples");
    else if (strcmp(unit, "%") == 0)
        units_fmt_share(t->measured, 4, mv, sizeof mv);
    else
        snprintf(mv, sizeof mv, "%.4g%s%s", t->measured, *unit && strcmp(unit, "/s") ? " " : "", unit);
    snprintf(buf, len, "%s measured %s", t->expr, mv);
}

static void add_reason(struct capacity_step *s, const char *text)
{
    size_t n = strlen(s->reason);
    if (n + 3 >= sizeof s->reason)
        return;
    int room = (int)(sizeof s->reason - n - 3); /* a long reason is cut, not overflowed */
    snprintf(s->reason + n, sizeof s->reason - n, "%s%.*s", n ? "; " : "", room, text);
}

void capacity_step_eval(const struct run_result *res, bool open_loop, const struct run_threshold *slo, size_t nslo,
                        struct capacity_step *out)
{
    memset(out, 0, sizeof *out);
    const struct run_counts *c = &res->all.counts;
    out->requests = c->planned;
    struct run_summary lat, lag;
    run_summarize(&res->all.latency_all, &lat);
    run_summarize(&res->all.lag, &lag);
    out->p50_ms = lat.p50;
    out->p99_ms = lat.p99;
    out->lag_p99_ms = lag.p99;
    uint64_t failed = c->outcome[OUTCOME_REJECTED] + c->outcome[OUTCOME_HTTP_ERROR] + c->outcome[OUTCOME_INVALID] +
                      c->outcome[OUTCOME_TRANSPORT] + c->outcome[OUTCOME_TIMEOUT];
    out->error_rate = c->sent ? (double)failed / (double)c->sent : NAN;
    out->ran = !res->interrupted && res->accounting_ok;
    if (res->interrupted)
        add_reason(out, "interrupted");
    else if (!res->accounting_ok)
        add_reason(out, "the accounting identities broke (a bug: please report it)");
    bool ok = out->ran;
    char why[CAPACITY_REASON_MAX];
    if (open_loop) {
        out->planned = res->planned_rate;
        out->delivered = capacity_step_delivered(res, &out->achieved, why, sizeof why);
        if (!out->delivered) {
            add_reason(out, why);
            ok = false;
        }
    } else {
        out->planned = 0;
        out->achieved = res->completed_rate;
        out->delivered = true;
    }
    for (size_t i = 0; i < nslo; i++) {
        struct run_threshold t = slo[i];
        run_threshold_eval(&t, res);
        if (t.pass)
            continue;
        ok = false;
        term_text(&t, why, sizeof why);
        add_reason(out, why);
    }
    out->held = ok;
}
