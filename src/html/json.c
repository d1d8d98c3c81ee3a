/* Reading a `knee run --json` document (schema knee-run/2 or /1, docs/FORMATS.md) with jansson: the
 * summary block (runreport's printer over the document's numbers), the plan (open or closed loop, warm-up, the
 * generator-limited threshold) and the per-second timeline. */
#include "runreport/runreport.h"
#include "html/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double num(const json_t *o, const char *key)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* --lag-limit as given on the command line the JSON records (knee run's option: a bare number
 * is milliseconds). false when absent or unreadable. */
static bool lag_limit_from_args(const json_t *args, uint64_t *ns)
{
    size_t n = json_array_size(args);
    for (size_t i = 0; i < n; i++) {
        const char *a = json_string_value(json_array_get(args, i));
        const char *v = NULL;
        if (!a)
            continue;
        if (strcmp(a, "--lag-limit") == 0 && i + 1 < n)
            v = json_string_value(json_array_get(args, i + 1));
        else if (strncmp(a, "--lag-limit=", 12) == 0)
            v = a + 12;
        if (v && units_parse_duration_ns(v, NS_PER_MS, ns) == 0)
            return true;
    }
    return false;
}

/* The run from a parsed document (root: borrowed). path names it in messages. */
static int load_root(struct html_run *run, json_t *root, const char *path, char *err, size_t errlen)
{
    int r = 0;
    const char *schema = json_string_value(json_object_get(root, "schema"));
    /* knee-run/2 (rates by event time) and the knee-run/1 files written before it */
    if (!json_is_object(root) || !schema || !run_json_schema_readable(schema))
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s: not a knee run JSON (schema \"%s\", expected \"" RUN_JSON_SCHEMA
                         "\" as `knee run --json` writes; knee report also reads knee-compare/1, "
                         "knee-capacity/1 and knee-repeat/1 documents)",
                         path, schema ? schema : "none");
    char why[256];
    struct run_view view;
    if (run_view_init_json(&view, root, why, sizeof why))
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s: %s", path, why);
    char *text = NULL;
    size_t text_len = 0;
    FILE *mem = open_memstream(&text, &text_len);
    if (!mem)
        knee_oom();
    run_view_print(mem, &view); /* knee run's terminal summary, by its own printer */
    fclose(mem);
    run_view_release(&view);
    if (!run->summary_text) {
        run->summary_text = text;
        free(run->summary_origin);
        run->summary_origin = xstrdup("the terminal summary, rebuilt word for word from the run's JSON");
    } else {
        free(text);
    }
    run->json_path = xstrdup(path);
    run->have_json = true;

    const json_t *cfg = json_object_get(root, "config");
    const char *mode = json_string_value(json_object_get(cfg, "mode"));
    if (mode)
        run->closed_loop = strcmp(mode, "closed") == 0;
    double warm = num(cfg, "warmup_s");
    run->warmup_s = warm >= 0 && warm <= 1e9 ? warm : 0;
    uint64_t lag_ns;
    if (!run->lag_limit_known &&
        lag_limit_from_args(json_object_get(json_object_get(root, "environment"), "args"), &lag_ns))
        html_run_set_lag_limit(run, lag_ns);
    /* --timer-slack: the verdict judged the lag beyond it, so the lag chart's threshold moves up by it */
    double slack_ms = num(cfg, "timer_slack_ms");
    run->timer_slack_ns =
        slack_ms > 0 && slack_ms <= (double)RUN_MAX_TIMER_SLACK_NS / 1e6 ? (uint64_t)llround(slack_ms * 1e6) : 0;
    run->json_generator_limited = json_is_true(json_object_get(root, "generator_limited"));
    run->json_window_s = num(root, "window_s");

    const json_t *tl = json_object_get(root, "timeline");
    size_t n = json_array_size(tl);
    free(run->jtl);
    run->jtl = xcalloc(n ? n : 1, sizeof *run->jtl);
    run->njtl = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(tl, i);
        struct html_tlpoint *p = &run->jtl[i];
        p->start_s = num(e, "start_s");
        p->length_s = num(e, "length_s");
        p->planned = num(e, "planned");
        p->sent = num(e, "sent");
        p->completed = num(e, "completed");
        p->ok = num(e, "ok");
        p->errors = num(e, "errors");
        p->dropped = num(e, "dropped");
        p->p50_ms = num(e, "p50_ms");
        p->p99_ms = num(e, "p99_ms");
        p->max_ms = num(e, "max_ms");
    }
    char src[1200];
    snprintf(src, sizeof src, "%s (JSON, %s, %s loop, %zu target%s)", path, schema,
             run->closed_loop == 1 ? "closed" : "open", json_array_size(json_object_get(root, "targets")),
             json_array_size(json_object_get(root, "targets")) == 1 ? "" : "s");
    html_run_add_source(run, src);
    return r;
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
