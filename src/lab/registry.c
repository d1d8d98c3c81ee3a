/* The experiment table: knee lab's experiments by name, for cmd_lab and "all". The one file
 * of src/lab that knows every experiment; the experiments (exp_*.c) know only the toolkit
 * (lab/internal.h: lab.c and analysis.c), never each other or this table. */
#include "lab/lab.h"
#include "lab/lab_capacity.h"
#include "lab/lab_compare.h"

#include "core/err.h"

#include <stdlib.h>
#include <string.h>

/* Each runner keeps its result only for the length of the run: the printed tables and
 * sentences are the output here (tests call lab_<name> for the structs). */
static int run_stats(const struct lab_options *o)
{
    struct lab_stats_result r;
    return lab_stats(o, &r);
}

static int run_queue(const struct lab_options *o)
{
    struct lab_queue_result r;
    return lab_queue(o, &r);
}

static int run_knee(const struct lab_options *o)
{
    struct lab_knee_result *r = xmalloc(sizeof *r); /* LAB_MAX_RATES rows: too big for the stack */
    int rc = lab_knee(o, r);
    free(r);
    return rc;
}

static int run_fanout(const struct lab_options *o)
{
    struct lab_fanout_result r;
    return lab_fanout(o, &r);
}

static int run_nagle(const struct lab_options *o)
{
    struct lab_nagle_result r;
    return lab_nagle(o, &r);
}

static int run_compare(const struct lab_options *o)
{
    struct lab_compare_result r;
    return lab_compare(o, &r);
}

static int run_capacity(const struct lab_options *o)
{
    struct lab_capacity_result *r = xmalloc(sizeof *r);
    int rc = lab_capacity(o, r);
    free(r);
    return rc;
}

static int run_tls(const struct lab_options *o)
{
    struct lab_tls_result r;
    return lab_tls(o, &r);
}

static int run_stream(const struct lab_options *o)
{
    struct lab_stream_result r;
    return lab_stream(o, &r);
}

static const struct experiment {
    const char *name;
    int (*run)(const struct lab_options *o);
} experiments[] = {
    {"stats", run_stats},       {"queue", run_queue}, {"knee", run_knee},
    {"fanout", run_fanout},     {"nagle", run_nagle}, {"compare", run_compare},
    {"capacity", run_capacity}, {"tls", run_tls},     {"stream", run_stream},
};
#define NEXPERIMENTS (sizeof experiments / sizeof experiments[0])

/* The names in the order of the table, then "all" (`knee lab all` runs them in this order). */
const char *const lab_experiment_names[] = {"stats",    "queue", "knee",   "fanout", "nagle", "compare",
                                            "capacity", "tls",   "stream", "all",    NULL};
_Static_assert(sizeof lab_experiment_names / sizeof lab_experiment_names[0] == NEXPERIMENTS + 2,
               "every experiment has its name, then \"all\" and the NULL end");

static const struct experiment *find(const char *name)
{
    for (size_t i = 0; i < NEXPERIMENTS; i++)
        if (strcmp(experiments[i].name, name) == 0)
            return &experiments[i];
    return NULL;
}

int lab_run_named(const char *name, const struct lab_options *o)
{
    if (strcmp(name, "all") != 0) {
        const struct experiment *e = find(name);
        return e ? e->run(o) : KNEE_ENOTFOUND;
    }
    FILE *out = o->out ? o->out : stdout;
    for (size_t i = 0; i < NEXPERIMENTS; i++) {
        if (i)
            fputs("\n", out);
        int rc = experiments[i].run(o);
        if (rc)
            return rc;
    }
    return 0;
}
