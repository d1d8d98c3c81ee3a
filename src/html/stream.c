/* Streamed responses in the report (knee run --stream): the run JSON's "stream" objects, per
 * target and for all, kept as they are (so the page's numbers are the JSON's) with their
 * percentile spectra checked, for the first-event and event-gap charts. */
#include "html/internal.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

/* A spectrum the charts can draw: "p" levels in [0, 1), non-decreasing, and as many finite,
 * non-negative "ms" values. */
static bool spectrum_ok(const json_t *s)
{
    const json_t *p = json_object_get(s, "p"), *ms = json_object_get(s, "ms");
    if (!json_is_array(p) || !json_is_array(ms) || json_array_size(p) != json_array_size(ms) || json_array_size(p) == 0)
        return false;
    double last = 0;
    for (size_t i = 0; i < json_array_size(p); i++) {
        const json_t *pi = json_array_get(p, i), *vi = json_array_get(ms, i);
        if (!json_is_number(pi) || !json_is_number(vi))
            return false;
        double pv = json_number_value(pi), v = json_number_value(vi);
        if (!isfinite(pv) || pv < last || pv >= 1 || !isfinite(v) || v < 0)
            return false;
        last = pv;
    }
    return true;
}

/* A copy of a target's "stream" with its name, the spectra the charts cannot draw removed (a note
 * says which); NULL when the target has none. */
static json_t *stream_of(struct html_run *run, const json_t *target, const char *name)
{
    const json_t *s = json_object_get(target, "stream");
    if (!json_is_object(s))
        return NULL;
    json_t *c = json_deep_copy(s);
    json_object_set_new(c, "name", json_string(name));
    json_t *sp = json_object_get(c, "spectrum");
    if (sp && !json_is_object(sp)) {
        json_object_del(c, "spectrum");
        sp = NULL;
    }
    static const char *const keys[] = {"first_event", "event_gap"};
    for (size_t k = 0; sp && k < 2; k++) {
        const json_t *one = json_object_get(sp, keys[k]);
        if (one && !spectrum_ok(one)) {
            html_run_note(
                run, "%s: stream.spectrum.%s of target '%s' is malformed: its chart draws the summary's percentiles",
                run->json_path ? run->json_path : "the JSON", keys[k], name);
            json_object_del(sp, keys[k]);
        }
    }
    return c;
}

void html_stream_load(struct html_run *run, const json_t *root)
{
    json_decref(run->stream);
    run->stream = NULL;
    json_t *targets = json_array();
    const json_t *ts = json_object_get(root, "targets");
    for (size_t i = 0; i < json_array_size(ts); i++) {
        const json_t *t = json_array_get(ts, i);
        const char *name = json_string_value(json_object_get(t, "name"));
        json_t *c = stream_of(run, t, name ? name : "?");
        if (c)
            json_array_append_new(targets, c);
    }
    json_t *all = json_array_size(ts) > 1 ? stream_of(run, json_object_get(root, "all"), "all") : NULL;
    if (!json_array_size(targets) && !all) {
        json_decref(targets);
        return;
    }
    run->stream = json_object();
    json_object_set_new(run->stream, "targets", targets);
    json_object_set_new(run->stream, "all", all ? all : json_null());
}
