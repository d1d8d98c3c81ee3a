/* Reading a `knee run --json` document (schema knee-run/2 or /1, docs/FORMATS.md) through the run
 * record's reader (record_read_json): the summary block (runreport's printer over the record), the
 * plan (open or closed loop, warm-up, the generator-limited threshold) and the per-second timeline. */
#include "html/internal.h"
#include "record/record.h"
#include "runreport/runreport.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --lag-limit as given on the command line the JSON records (knee run's option: a bare number
 * is milliseconds). false when absent or unreadable. */
static bool lag_limit_from_args(const struct record_config *c, uint64_t *ns)
{
    for (int i = 0; i < c->argc; i++) {
        const char *a = c->argv[i];
        const char *v = NULL;
        if (strcmp(a, "--lag-limit") == 0 && i + 1 < c->argc)
            v = c->argv[i + 1];
        else if (strncmp(a, "--lag-limit=", 12) == 0)
            v = a + 12;
        if (v && units_parse_duration_ns(v, NS_PER_MS, ns) == 0)
            return true;
    }
    return false;
}

/* knee run's terminal summary of the record, by its own printer. */
static char *summary_text(const struct run_record *rec)
{
    char *text = NULL;
    size_t text_len = 0;
    FILE *mem = open_memstream(&text, &text_len);
    if (!mem)
        knee_oom();
    runreport_print_summary(mem, rec, rec->verbose);
    fclose(mem);
    return text;
}

/* The plan and timeline the charts need, from the record. */
static void plan_and_timeline(struct html_run *run, const struct run_record *rec, const json_t *root)
{
    /* a document that does not say its mode leaves it unknown (the record reads it as open) */
    if (json_is_string(json_object_get(json_object_get(root, "config"), "mode")))
        run->closed_loop = !rec->config.open_loop;
    double warm = (double)rec->config.warmup_ns / 1e9;
    run->warmup_s = warm <= 1e9 ? warm : 0;
    run->nstages = 0; /* --stages: their starts, for the time charts */
    for (uint64_t i = 0, t = 0; i < rec->config.nstages && i < RUN_MAX_STAGES; i++) {
        run->stage_start_s[run->nstages++] = (double)t / 1e9;
        t += rec->config.stages[i].duration_ns;
    }
    uint64_t lag_ns;
    if (!run->lag_limit_known && lag_limit_from_args(&rec->config, &lag_ns))
        html_run_set_lag_limit(run, lag_ns);
    /* --timer-slack: the verdict judged the lag beyond it, so the lag chart's threshold moves up by it */
    uint64_t slack = rec->config.open_loop ? rec->config.timer_slack_ns : 0;
    run->timer_slack_ns = slack <= RUN_MAX_TIMER_SLACK_NS ? slack : 0;
    run->json_generator_limited = rec->generator_limited;
    run->status = rec->all.status; /* the run's own count, whatever a log read before added */
    run->json_status = true;
    record_entries_release(&run->entries);
    record_entries_copy(&run->entries, &rec->entries);
    run->json_window_s = rec->window_s;
    free(run->jtl);
    run->jtl = xcalloc(rec->nticks ? rec->nticks : 1, sizeof *run->jtl);
    run->njtl = rec->nticks;
    for (size_t i = 0; i < rec->nticks; i++) {
        const struct run_tick *t = &rec->ticks[i];
        run->jtl[i] = (struct html_tlpoint){.start_s = t->start_s,
                                            .length_s = t->length_s,
                                            .planned = (double)t->planned,
                                            .sent = (double)t->sent,
                                            .completed = (double)t->completed,
                                            .ok = (double)t->ok,
                                            .errors = (double)t->errors,
                                            .dropped = (double)t->dropped,
                                            .p50_ms = t->p50_ms,
                                            .p99_ms = t->p99_ms,
                                            .max_ms = t->max_ms};
    }
}

/* The run from a parsed document (root: borrowed). path names it in messages. */
static int load_root(struct html_run *run, json_t *root, const char *path, char *err, size_t errlen)
{
    const char *schema = json_string_value(json_object_get(root, "schema"));
    char why[512];
    if (record_schema_check(root,
                            " as `knee run --json` writes; knee report also reads knee-compare/1, knee-capacity/1 and "
                            "knee-repeat/1 documents",
                            why, sizeof why))
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s: %s", path, why);
    struct run_record rec;
    if (record_read_json(root, &rec, why, sizeof why))
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s: %s", path, why);
    char *text = summary_text(&rec);
    if (!run->summary_text) {
        run->summary_text = text;
        free(run->summary_origin);
        run->summary_origin = xstrdup("the terminal summary, rebuilt word for word from the run's JSON");
    } else {
        free(text);
    }
    run->json_path = xstrdup(path);
    run->have_json = true;
    plan_and_timeline(run, &rec, root);
    html_stream_load(run, root);
    char src[1200];
    snprintf(src, sizeof src, "%s (JSON, %s, %s loop, %zu target%s)", path, schema,
             run->closed_loop == 1 ? "closed" : "open", rec.ntargets, rec.ntargets == 1 ? "" : "s");
    html_run_add_source(run, src);
    record_release(&rec);
    return 0;
}

int html_run_load_json(struct html_run *run, const char *path, char *err, size_t errlen)
{
    if (run->json_path)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "%s: run '%s' already has a JSON input (%s): one of each kind per run", path, run->name,
                         run->json_path);
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", path, je.line, je.text);
    int r = load_root(run, root, path, err, errlen);
    json_decref(root);
    return r;
}

int html_run_load_json_mem(struct html_run *run, const void *data, size_t size, const char *name, char *err,
                           size_t errlen)
{
    if (run->json_path)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "%s: run '%s' already has a JSON input (%s): one of each kind per run", name, run->name,
                         run->json_path);
    json_error_t je;
    json_t *root = json_loadb(data, size, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", name, je.line, je.text);
    int r = load_root(run, root, name, err, errlen);
    json_decref(root);
    return r;
}
