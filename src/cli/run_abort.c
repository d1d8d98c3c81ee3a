/* knee run --abort-if: the rules from the command line, the evaluator fed from the run's
 * per-second callbacks (chained in front of whoever else listens: the hlog writer, --until-ci,
 * the progress line, the metrics endpoint), and the stop handle asked to drain when one fires. */
#include "cli/run_abort.h"

#include "core/clock.h"
#include "core/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int cli_abort_parse(struct cli_abort *a, const struct runopts *o, const struct cmd_spec *spec,
                    const struct run_config *cfg)
{
    memset(a, 0, sizeof *a);
    if (o->abort_ifs.n > ABORT_MAX_RULES)
        return opt_fail(spec, "--abort-if: at most %d rules (%zu given)", ABORT_MAX_RULES, o->abort_ifs.n);
    if (o->abort_after_ns && !o->abort_ifs.n)
        return opt_fail(spec, "--abort-after: arms the --abort-if rules, and none was given");
    for (size_t i = 0; i < o->abort_ifs.n; i++) {
        char why[384];
        const char *text = o->abort_ifs.v[i];
        struct abort_rule *r = &a->rules[i];
        if (abort_rule_parse(text, r, why, sizeof why))
            return opt_fail(spec, "--abort-if '%s': %s", text, why);
        /* the stages' edges go to abort_eval_set_stages in cli_abort_install */
        if (r->stage && !cfg->plan.nstages)
            return opt_fail(spec, "--abort-if '%s': needs --stages (stage%u names a stage of --stages)", text,
                            r->stage);
        if (r->stage > cfg->plan.nstages)
            return opt_fail(spec, "--abort-if '%s': stage%u, and --stages has %zu stage%s", text, r->stage,
                            cfg->plan.nstages, cfg->plan.nstages == 1 ? "" : "s");
        if (r->kind == ABORT_GENERATOR_LIMITED && !cfg->plan.open_loop)
            return opt_fail(spec,
                            "--abort-if '%s': only an open loop (--rate) can be generator-limited: a closed loop "
                            "sends when its clients are ready",
                            text);
    }
    a->n = o->abort_ifs.n;
    a->after_ns = o->abort_after_ns;
    return 0;
}

/* ------------------------------------------------------------------ the callbacks */

static void on_interval(void *ctx, size_t target, double start_s, double length_s, const struct hdr *latency)
{
    struct cli_abort *a = ctx;
    abort_eval_add_latency(a->ev, latency);
    if (a->next_interval)
        a->next_interval(a->next_interval_ctx, target, start_s, length_s, latency);
}

static void on_stream_interval(void *ctx, size_t target, double start_s, double length_s, const struct run_stream *st)
{
    struct cli_abort *a = ctx;
    abort_eval_add_stream(a->ev, &st->first_event, &st->event_gap);
    if (a->next_stream_interval)
        a->next_stream_interval(a->next_stream_interval_ctx, target, start_s, length_s, st);
}

/* A rule fired: say so on stderr (where the progress line is), then stop planning and drain, as
 * a first Ctrl-C does; a stop already asked for (Ctrl-C) is left as it is. */
static void fired(struct cli_abort *a, int i, double at_s, double measured)
{
    const struct abort_rule *r = &a->rules[i];
    char m[64] = "";
    if (r->kind == ABORT_LATENCY)
        snprintf(m, sizeof m, " (%.3f ms over the last %u s)", measured, r->window_s);
    else if (r->kind == ABORT_PER_S)
        snprintf(m, sizeof m, " (%.1f/s over the last %u s)", measured, r->window_s);
    else if (r->kind != ABORT_GENERATOR_LIMITED)
        snprintf(m, sizeof m, " (%.2f%% over the last %u s)", measured * 100, r->window_s);
    fprintf(stderr,
            "\nknee run: ABORTED at %.1f s: --abort-if %s holds%s: planning stops, the requests in flight "
            "drain\n",
            at_s, r->text, m);
    if (a->cfg->stop && run_stop_level(a->cfg->stop) == 0)
        run_stop_request(a->cfg->stop, false);
}

static void on_progress(void *ctx, const struct run_progress *p)
{
    struct cli_abort *a = ctx;
    struct abort_second sec = {
        .start_s = p->start_s,
        .length_s = p->length_s,
        .planned = p->planned,
        .sent = p->sent,
        .completed = p->completed,
        .ok = p->ok,
        .errors = p->errors,
        .dropped = p->dropped,
    };
    double measured = NAN;
    int i = abort_eval_second(a->ev, &sec, &measured);
    if (a->next_progress)
        a->next_progress(a->next_progress_ctx, p);
    if (i >= 0)
        fired(a, i, p->start_s + p->length_s, measured);
}

static void on_live(void *ctx, const struct run_live *live)
{
    struct cli_abort *a = ctx;
    if (a->next_live)
        a->next_live(a->next_live_ctx, live);
    if (live->final)
        return;
    int i = abort_eval_limited(a->ev, live->elapsed_s, live->generator_limited);
    if (i >= 0)
        fired(a, i, live->elapsed_s, NAN);
}

/* ------------------------------------------------------------------ around the run */

void cli_abort_install(struct cli_abort *a, struct run_config *cfg)
{
    if (!a->n)
        return;
    a->cfg = cfg;
    a->ev = abort_eval_new(a->rules, a->n, (double)a->after_ns / 1e9, (double)cfg->plan.warmup_ns / 1e9);
    if (cfg->plan.duration_ns)
        abort_eval_set_plan_end(a->ev, (double)cfg->plan.duration_ns / 1e9);
    if (cfg->plan.nstages) {
        double edges_s[RUN_MAX_STAGES + 1];
        edges_s[0] = (double)plan_stage_start_ns(&cfg->plan, 0) / 1e9;
        for (size_t j = 0; j < cfg->plan.nstages; j++)
            edges_s[j + 1] = (double)plan_stage_end_ns(&cfg->plan, j) / 1e9;
        abort_eval_set_stages(a->ev, edges_s, cfg->plan.nstages);
    }
    a->next_interval = cfg->on_interval;
    a->next_interval_ctx = cfg->interval_ctx;
    cfg->on_interval = on_interval;
    cfg->interval_ctx = a;
    a->next_stream_interval = cfg->on_stream_interval;
    a->next_stream_interval_ctx = cfg->stream_interval_ctx;
    cfg->on_stream_interval = on_stream_interval;
    cfg->stream_interval_ctx = a;
    a->next_progress = cfg->on_progress;
    a->next_progress_ctx = cfg->progress_ctx;
    cfg->on_progress = on_progress;
    cfg->progress_ctx = a;
    bool limited_rule = false;
    for (size_t i = 0; i < a->n; i++)
        limited_rule |= a->rules[i].kind == ABORT_GENERATOR_LIMITED;
    if (!limited_rule)
        return;
    /* the generator's verdict so far comes with the live numbers: gathered once a second from
     * the threads' own totals (load/live.c), with one bucket when the metrics endpoint is off */
    a->next_live = cfg->on_live;
    a->next_live_ctx = cfg->live_ctx;
    if (!cfg->on_live) {
        a->live_bound_ns = (int64_t)NS_PER_S;
        cfg->live_bounds_ns = &a->live_bound_ns;
        cfg->live_nbounds = 1;
    }
    cfg->on_live = on_live;
    cfg->live_ctx = a;
}

bool cli_abort_finish(struct cli_abort *a, struct run_config *cfg, struct run_record *res)
{
    if (!a->ev)
        return false;
    cfg->on_interval = a->next_interval;
    cfg->interval_ctx = a->next_interval_ctx;
    cfg->on_stream_interval = a->next_stream_interval;
    cfg->stream_interval_ctx = a->next_stream_interval_ctx;
    cfg->on_progress = a->next_progress;
    cfg->progress_ctx = a->next_progress_ctx;
    if (cfg->on_live == on_live) {
        cfg->on_live = a->next_live;
        cfg->live_ctx = a->next_live_ctx;
        if (cfg->live_bounds_ns == &a->live_bound_ns) {
            cfg->live_bounds_ns = NULL;
            cfg->live_nbounds = 0;
        }
    }
    size_t rule;
    double at_s;
    bool fired_one = abort_eval_fired(a->ev, &rule, &at_s);
    if (fired_one && res)
        record_set_aborted(res, a->rules[rule].text, at_s);
    abort_eval_free(a->ev);
    a->ev = NULL;
    a->cfg = NULL;
    return fired_one;
}

void cli_abort_print(FILE *out, const struct cli_abort *a)
{
    char d[32];
    for (size_t i = 0; i < a->n; i++)
        fprintf(out, "  --abort-if %s (checked once a second%s%s; exit 99 when it fires)\n", a->rules[i].text,
                a->after_ns ? " after " : "", a->after_ns ? units_fmt_duration(a->after_ns, d, sizeof d) : "");
}
