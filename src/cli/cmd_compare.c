/* `knee compare`: two sides of repetitions (directories written by knee run --repeat, or
 * lists of run outputs) → the load models checked → src/compare → the report, --json and
 * the exit code (0; 2 bad input or different load models without --force; 99 --fail-if;
 * 1 an output that could not be written). */
#include "cli/commands.h"
#include "cli/io_check.h"
#include "cli/opt.h"
#include "compare/compare.h"
#include "core/err.h"
#include "core/outfile.h"
#include "html/html.h"

#include <stdlib.h>
#include <string.h>

struct compare_flags {
    struct strlist before, after, fail_if;
    uint64_t under_ns, resamples, seed;
    double confidence;
    const char *json, *html;
    bool force, verbose;
};

static const char compare_epilog[] =
    "Each side is a directory written by `knee run --repeat N --out-dir DIR`, or files: binary\n"
    "request logs, CSVs or hlogs (a log's run JSON, STEM.json, is read beside it for the load\n"
    "model and the warm-up). Files with the same stem are one repetition.\n"
    "The difference is AFTER - BEFORE, pooled over each side's repetitions, with an interval\n"
    "from a hierarchical bootstrap (repetitions, then requests within each). A verdict needs\n"
    "3 repetitions a side, an interval without 0, and a difference larger than the spread of\n"
    "one side's repetitions. Exit codes: 0, 2 bad input or different load models (--force),\n"
    "99 a --fail-if regression, 1 an output that could not be written. --json and --html replace\n"
    "an existing file only once it is written whole (a failure keeps the old one); a device or\n"
    "FIFO is written in place, never removed.\n\n"
    "examples:\n"
    "  knee run -R 1000 -d 20s --warmup 2s --repeat 3 --out-dir before http://127.0.0.1:8080/\n"
    "  knee run -R 1000 -d 20s --warmup 2s --repeat 3 --out-dir after http://127.0.0.1:8080/\n"
    "  knee compare before after\n"
    "  knee compare --under 100ms --fail-if slower --fail-if p99+5% --json cmp.json before after\n"
    "  knee compare --before a1.bin a2.bin a3.bin --after b1.bin b2.bin b3.bin\n";

/* --before A B C → --before A --before B --before C, so one table row takes a list. */
static char **expand_lists(int argc, char **argv, int *out_argc)
{
    char **v = xcalloc((size_t)argc * 2 + 1, sizeof *v);
    int n = 0;
    const char *list = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i > 0 && strcmp(a, "--") == 0) {
            while (i < argc)
                v[n++] = argv[i++];
            break;
        }
        if (i > 0 && (strcmp(a, "--before") == 0 || strcmp(a, "--after") == 0)) {
            list = a;
            v[n++] = argv[i];
            if (i + 1 < argc)
                v[n++] = argv[++i];
            continue;
        }
        if (list && a[0] != '-') {
            v[n++] = (char *)list;
            v[n++] = argv[i];
            continue;
        }
        list = NULL;
        v[n++] = argv[i];
    }
    *out_argc = n;
    return v;
}

static int load_side(const struct cmd_spec *spec, struct compare_side *s, const char *name, const struct strlist *files)
{
    compare_side_init(s, name);
    char err[1024];
    if (compare_side_load(s, files->v, files->n, err, sizeof err) != 0)
        return opt_fail(spec, "%s: %s", name, err);
    for (size_t i = 0; i < s->nreps; i++)
        if (s->reps[i].data_beside)
            knee_report(stderr, "knee compare: ", "%s: read %s (the log beside the run JSON given)", name,
                        s->reps[i].source);
    return 0;
}

static int write_json(const char *path, const struct compare_result *r, const struct compare_side *b,
                      const struct compare_side *a)
{
    struct outfile of;
    char err[512];
    if (outfile_open(&of, path, err, sizeof err) != 0) {
        fprintf(stderr, "knee compare: --json %s\n", err); /* err names the path */
        return 1;
    }
    compare_write_json(of.f, r, b, a); /* "-": outfile_commit flushes stdout and names it on failure */
    if (outfile_commit(&of, err, sizeof err) != 0) {
        fprintf(stderr, "knee compare: --json %s\n", err); /* err names the path */
        return 1;
    }
    return 0;
}

/* --html: the report of the comparison (its JSON document, as knee report draws it). */
static int write_html(const char *path, const struct compare_result *r, const struct compare_side *b,
                      const struct compare_side *a)
{
    char *json = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&json, &len);
    if (!mem)
        knee_oom();
    compare_write_json(mem, r, b, a);
    fclose(mem);
    struct html_write_opts h = {.name = "compare", .json = json, .json_len = len};
    char err[1024];
    int rc = html_write_report(path, &h, NULL, err, sizeof err);
    free(json);
    if (rc)
        fprintf(stderr, "knee compare: --html %s\n", err);
    return rc ? 1 : 0;
}

/* Add a side's inputs: its files and directories, and a log's STEM.json, which compare reads
 * beside it. stems keeps the STEM.json strings alive until the check is done. */
static void side_inputs(struct cli_io *io, const char *flag, const struct strlist *side, struct strlist *stems)
{
    static const char *const logs[] = {".bin", ".csv", ".hlog"};
    for (size_t i = 0; i < side->n; i++) {
        const char *p = side->v[i];
        cli_io_input(io, flag, p);
        size_t n = strlen(p);
        for (size_t k = 0; k < sizeof logs / sizeof *logs; k++) {
            size_t e = strlen(logs[k]);
            if (n > e && strcmp(p + n - e, logs[k]) == 0) {
                char *j = xmalloc(n - e + 6);
                snprintf(j, n - e + 6, "%.*s.json", (int)(n - e), p);
                strlist_push(stems, j);
                cli_io_input(io, flag, j);
            }
        }
    }
}

/* --json and --html are none of the inputs (a directory's .bin, .csv, .hlog and .json files
 * are), nor one file: 0, or 2 after one line. */
static int check_outputs(const struct cmd_spec *spec, const struct compare_flags *f, const struct strlist *b,
                         const struct strlist *a, bool positional)
{
    static const char *const exts[] = {".bin", ".csv", ".hlog", ".json", NULL}; /* compare/load reads these */
    struct cli_io io = {.dir_exts = exts};
    struct strlist stems = {0};
    side_inputs(&io, positional ? NULL : "--before", b, &stems);
    side_inputs(&io, positional ? NULL : "--after", a, &stems);
    cli_io_output(&io, "--json", f->json);
    cli_io_output(&io, "--html", f->html);
    int code = cli_io_check(&io, spec);
    cli_io_release(&io);
    for (size_t i = 0; i < stems.n; i++)
        free((char *)stems.v[i]);
    strlist_release(&stems);
    return code;
}

static int run_compare(const struct cmd_spec *spec, struct compare_flags *f, const struct strlist *args)
{
    struct strlist b = f->before, a = f->after;
    if (args->n == 2 && !b.n && !a.n) {
        b = (struct strlist){.v = &args->v[0], .n = 1};
        a = (struct strlist){.v = &args->v[1], .n = 1};
    } else if (args->n || !b.n || !a.n) {
        return opt_fail(spec, "give two sides: BEFORE AFTER (directories or files), or --before FILE... --after "
                              "FILE...");
    }
    if (check_outputs(spec, f, &b, &a, args->n == 2))
        return 2;
    struct compare_opts o;
    compare_opts_init(&o);
    if (opt_find(spec, "resamples")->seen) {
        if (f->resamples < 100 || f->resamples > 1000000)
            return opt_fail(spec, "--resamples must be between 100 and 1,000,000");
        o.resamples = (size_t)f->resamples;
    }
    if (opt_find(spec, "confidence")->seen) {
        if (!(f->confidence >= 0.5 && f->confidence < 1))
            return opt_fail(spec, "--confidence must be at least 50%% and below 100%%");
        o.confidence = f->confidence;
    }
    o.seed = f->seed;
    o.force = f->force;
    if (opt_find(spec, "under")->seen) {
        if (f->under_ns == 0)
            return opt_fail(spec, "--under must be > 0");
        o.under_ms = (double)f->under_ns / 1e6;
    }
    struct compare_fail_if *fi = xcalloc(f->fail_if.n ? f->fail_if.n : 1, sizeof *fi);
    for (size_t i = 0; i < f->fail_if.n; i++) {
        char err[256];
        if (compare_fail_if_parse(f->fail_if.v[i], &fi[i], err, sizeof err) != 0) {
            free(fi);
            return opt_fail(spec, "--fail-if '%s': %s", f->fail_if.v[i], err);
        }
    }
    o.fail_if = fi;
    o.nfail_if = f->fail_if.n;
    int code = 0;
    struct compare_side sb, sa;
    if (load_side(spec, &sb, "before", &b)) {
        compare_side_release(&sb);
        free(fi);
        return 2;
    }
    if (load_side(spec, &sa, "after", &a)) {
        compare_side_release(&sb);
        compare_side_release(&sa);
        free(fi);
        return 2;
    }
    struct compare_result r;
    char err[4096];
    int rc = compare_run(&sb, &sa, &o, &r, err, sizeof err);
    if (rc) {
        code = opt_fail(spec, "%s", err);
    } else {
        bool json_stdout = f->json && strcmp(f->json, "-") == 0;
        compare_print_text(json_stdout ? stderr : stdout, &r, &sb, &sa, f->verbose);
        if (f->json && write_json(f->json, &r, &sb, &sa))
            code = 1;
        if (f->html && write_html(f->html, &r, &sb, &sa))
            code = 1;
        if (code == 0 && r.fail_unevaluated)
            code = opt_fail(spec,
                            "--fail-if needs at least %d repetitions on each side (before %zu, after %zu): "
                            "there is no verdict to judge",
                            COMPARE_MIN_REPS, r.nreps_before, r.nreps_after);
        else if (code == 0 && r.fail)
            code = 99;
        compare_result_release(&r);
    }
    compare_side_release(&sb);
    compare_side_release(&sa);
    free(fi);
    return code;
}

int cmd_compare(int argc, char **argv)
{
    struct compare_flags f = {.seed = 1};
    struct opt rows[] = {
        {.name = "before",
         .kind = OPT_LIST,
         .dst = &f.before,
         .metavar = "FILE...",
         .help = "the before side as files (logs, CSVs, hlogs; one or more)"},
        {.name = "after", .kind = OPT_LIST, .dst = &f.after, .metavar = "FILE...", .help = "the after side as files"},
        {.name = "under",
         .kind = OPT_DURATION,
         .dst = &f.under_ns,
         .metavar = "D",
         .unit_ns = 1000000,
         .help = "also compare the share of requests faster than D (e.g. 100ms; a bare number is ms)"},
        {.name = "fail-if",
         .kind = OPT_LIST,
         .dst = &f.fail_if,
         .metavar = "EXPR",
         .help = "exit 99 on a regression: 'slower' (any metric), or METRIC+X% / METRIC+Xms (its whole interval "
                 "above +X); repeatable"},
        {.name = "force",
         .kind = OPT_FLAG,
         .dst = &f.force,
         .help = "compare runs with different load models anyway (the report's first line says so)"},
        {.name = "json",
         .kind = OPT_STR,
         .dst = &f.json,
         .metavar = "FILE|-",
         .help = "the comparison as JSON (- = stdout; the text goes to stderr)"},
        {.name = "html",
         .kind = OPT_STR,
         .dst = &f.html,
         .metavar = "FILE",
         .help = "the report with charts: both distributions overlaid, the differences with their intervals"},
        {.name = "resamples",
         .kind = OPT_COUNT,
         .dst = &f.resamples,
         .metavar = "N",
         .help = "bootstrap resamples (default 2000)"},
        {.name = "seed", .kind = OPT_COUNT, .dst = &f.seed, .metavar = "N", .help = "bootstrap seed (default 1)"},
        {.name = "confidence",
         .kind = OPT_SHARE,
         .dst = &f.confidence,
         .metavar = "P",
         .help = "confidence of the intervals (default 95%)"},
        {.name = "verbose",
         .short_name = 'v',
         .kind = OPT_FLAG,
         .dst = &f.verbose,
         .help = "also each repetition's own value of every metric"},
    };
    struct cmd_spec spec = {
        .name = "compare",
        .usage = "[options] BEFORE AFTER | --before FILE... --after FILE...",
        .summary = "Compare two sets of repeated runs (before/after a change): the same load model, "
                   "differences with intervals from a hierarchical bootstrap, and a verdict the data backs.",
        .opts = rows,
        .nopts = OPT_COUNT_OF(rows),
        .epilog = compare_epilog,
        .min_args = 0,
        .max_args = 2,
    };
    int n;
    char **v = expand_lists(argc, argv, &n);
    struct strlist args = {0};
    int rc = opt_parse(&spec, n, v, &args);
    if (rc == 0)
        rc = run_compare(&spec, &f, &args);
    else if (rc == 1)
        rc = 0;
    strlist_release(&args);
    strlist_release(&f.before);
    strlist_release(&f.after);
    strlist_release(&f.fail_if);
    free(v);
    return rc;
}
