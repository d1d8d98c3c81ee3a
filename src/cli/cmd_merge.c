/* `knee merge SHARD_OUTPUTS...`: the outputs of the shards of one plan (knee run --shard I/N)
 * added up exactly: the summary in knee run's text and JSON, the per-request log, the hlog.
 * The work is in src/merge; this file parses the flags, opens the outputs and picks the exit
 * code. */
#include "cli/commands.h"
#include "cli/io_check.h"
#include "cli/opt.h"
#include "core/err.h"
#include "core/outfile.h"
#include "core/units.h"
#include "merge/merge.h"
#include "runreport/runreport.h"
#include "runcheck/runcheck.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char epilog[] =
    "Inputs: what the shards of one plan wrote (knee run --shard I/N with --json, --out x.bin,\n"
    "--hlog), in any order, or directories of them. Each file names its shard; the set must be\n"
    "whole: every shard once, one plan (count, targets, rates, seed, start instant), and each\n"
    "kind of output for every shard or for none. Otherwise nothing is merged (exit 2).\n"
    "\n"
    "The summary (from the shards' JSON, which carry their histograms): counts summed and the\n"
    "accounting identities checked, the total planned checked against the whole plan, every\n"
    "percentile computed from the added histograms (never an average of percentiles), rates by\n"
    "event time as knee run counts them (the shards' events added up, or counted again from\n"
    "their binary logs when given) over the shards' window (without a shared start instant: the\n"
    "window they share), generator-limited when any shard was, the start skew of the shards, and\n"
    "a shard that failed named with the result marked INCOMPLETE (exit 1). With the hlogs, the\n"
    "timeline's per-second percentiles.\n"
    "\n"
    "examples:\n"
    "  knee merge shard-*.json\n"
    "  knee merge results/ --json merged.json -o merged.bin --hlog merged.hlog\n"
    "  srun -n 4 knee run --shard auto --start-at +10s@$PWD/start -R 40k -d 60s --json s%t.json URL\n"
    "  knee merge s*.json\n"
    "\n"
    "exit codes: 0 merged, 1 incomplete (a shard failed) or an output could not be written,\n"
    "2 usage or bad input (a missing, duplicate or foreign shard)\n";

static const char *const input_ext[] = {".json", ".bin", ".hlog", ".log"};

/* Files, and the files of directories with an output's extension (in name order). */
static int collect(const struct cmd_spec *spec, const struct strlist *args, struct strlist *paths, char ***owned,
                   size_t *nowned)
{
    for (size_t i = 0; i < args->n; i++) {
        struct stat st;
        if (stat(args->v[i], &st) != 0)
            return opt_fail(spec, "%s: %s", args->v[i], strerror(errno));
        if (!S_ISDIR(st.st_mode)) {
            strlist_push(paths, args->v[i]);
            continue;
        }
        struct dirent **list;
        int n = scandir(args->v[i], &list, NULL, alphasort);
        if (n < 0)
            return opt_fail(spec, "%s: %s", args->v[i], strerror(errno));
        for (int k = 0; k < n; k++) {
            const char *name = list[k]->d_name;
            const char *dot = strrchr(name, '.');
            bool want = false;
            for (size_t e = 0; dot && name[0] != '.' && e < sizeof input_ext / sizeof *input_ext; e++)
                want |= strcmp(dot, input_ext[e]) == 0;
            if (want) {
                size_t len = strlen(args->v[i]) + strlen(name) + 2;
                char *p = xmalloc(len);
                snprintf(p, len, "%s/%s", args->v[i], name);
                struct merge_probe pr;
                char why[256];
                if (merge_probe_file(p, &pr, why, sizeof why) == 0 && pr.merged) {
                    /* an earlier merge's output in the shards' directory */
                    fprintf(stderr, "knee merge: skipping %s (already a merge of %u shards)\n", p, pr.count);
                    free(p);
                    free(list[k]);
                    continue;
                }
                *owned = xrealloc(*owned, (*nowned + 1) * sizeof **owned);
                (*owned)[(*nowned)++] = p;
                strlist_push(paths, p);
            }
            free(list[k]);
        }
        free(list);
    }
    return 0;
}

/* The exit code of a merge error: bad input 2, a failed write 1. */
static int code_of(int r)
{
    return r == KNEE_EINVAL || r == KNEE_EFORMAT || r == KNEE_ETRUNC || r == KNEE_EMISMATCH || r == KNEE_EVERSION ||
                   r == KNEE_ECOOKIE || r == KNEE_ERANGE || r == KNEE_EEMPTY || r == KNEE_ETOOBIG
               ? 2
               : 1;
}

/* Where the rates by event time came from. */
static void print_rates_source(FILE *out, const struct merge_summary *m)
{
    char n[32];
    if (m->rates_from_logs)
        fprintf(out, "rates: every event counted again from the shards' %s per-request records (binary logs)%s\n",
                units_fmt_count(m->log_records, n, sizeof n),
                m->logs_disagree ? "; they DIFFER from the shards' own events (see the warnings)" : "");
    else if (m->same_t0)
        fprintf(out, "rates: the shards' events added up (from their JSON)\n");
    else
        fprintf(out, "rates: the shards' rates added up, each over its own window (from their JSON)\n");
}

static void print_plan_check(FILE *out, const struct merge_summary *m)
{
    char a[32], b[32];
    if (!m->plan_checked)
        fprintf(out, "plan check: not made (a closed loop without --requests, or Poisson arrivals too many to draw)\n");
    else
        fprintf(out, "plan check: the shards planned %s requests, the whole plan has %s [%s]\n",
                units_fmt_count(m->plan_merged, a, sizeof a), units_fmt_count(m->plan_expected, b, sizeof b),
                m->plan_ok ? "equal" : "DIFFERENT");
}

/* Write the merged summary as JSON to path ("-": stdout). verbose: the summary was printed in
 * its full form (--verbose), recorded so the JSON rebuilds it. true when written whole. */
static bool write_json(const char *path, struct merge_summary *m, bool verbose)
{
    struct outfile o;
    char why[512];
    if (outfile_open(&o, path, why, sizeof why)) {
        fprintf(stderr, "knee merge: --json %s\n", why);
        return false;
    }
    m->res.verbose = verbose;
    record_write_json(o.f, &m->res, true);
    if (outfile_commit(&o, why, sizeof why)) {
        fprintf(stderr, "knee merge: --json %s\n", why);
        return false;
    }
    return true;
}

static bool write_hlog(const char *path, const struct merge_set *s, int *code)
{
    struct outfile o;
    char why[512];
    if (outfile_open(&o, path, why, sizeof why)) {
        fprintf(stderr, "knee merge: --hlog %s\n", why);
        *code = 1;
        return false;
    }
    int r = merge_hlogs(s, o.f, why, sizeof why);
    if (r) {
        outfile_abort(&o);
        fprintf(stderr, "knee merge: %s\n", why);
        *code = code_of(r);
        return false;
    }
    if (outfile_commit(&o, why, sizeof why)) {
        fprintf(stderr, "knee merge: --hlog %s\n", why);
        *code = 1;
        return false;
    }
    return true;
}

/* The flags of one knee merge. */
struct merge_args {
    const char *out_path, *hlog_path, *json_path;
    bool verbose;
};

/* What was asked against what was given: 0, or 2 after one line. */
static int check_kinds(const struct cmd_spec *spec, const struct merge_set *set, const struct merge_args *a)
{
    if (a->out_path && !set->have[MERGE_LOG])
        return opt_fail(spec, "-o %s: give the shards' binary logs (knee run --out x.bin)", a->out_path);
    if (a->hlog_path && !set->have[MERGE_HLOG])
        return opt_fail(spec, "--hlog %s: give the shards' hlogs (knee run --hlog FILE)", a->hlog_path);
    if (a->json_path && !set->have[MERGE_JSON])
        return opt_fail(spec, "--json %s: give the shards' JSON (knee run --json FILE)", a->json_path);
    if (!set->have[MERGE_JSON] && !a->out_path && !a->hlog_path)
        return opt_fail(spec, "nothing to merge into: give the shards' JSON for the summary, or -o LOG / --hlog FILE");
    return 0;
}

/* No output is one of the shards' files (a directory's files as collected), nor another output:
 * 0, or 2 after one line. */
static int check_outputs(const struct cmd_spec *spec, const struct strlist *paths, const struct merge_args *a)
{
    struct cli_io io = {0};
    for (size_t i = 0; i < paths->n; i++)
        cli_io_input(&io, NULL, paths->v[i]);
    cli_io_output(&io, "--json", a->json_path);
    cli_io_output(&io, "-o", a->out_path);
    cli_io_output(&io, "--hlog", a->hlog_path);
    int code = cli_io_check(&io, spec);
    cli_io_release(&io);
    return code;
}

/* knee run's self-checks on the merged run: its p99 interval, its timeline's trend, and Poisson
 * arrivals on the merged log (a shard's own are thinned). */
static void selfcheck(struct merge_summary *m, const char *out_path)
{
    size_t len = out_path ? strlen(out_path) : 0;
    bool binary = out_path && !(len >= 4 && strcmp(out_path + len - 4, ".csv") == 0) && !outfile_is_special(out_path);
    struct runcheck checks;
    char err[512];
    runcheck_run(&m->res, binary ? out_path : NULL, &checks, err, sizeof err);
    runcheck_annotate(&checks, &m->res);
}

/* The summary (when there is one) and what was written. written: every output so far was; returned
 * false when the --json could not be written either. */
static bool report(FILE *text, const struct merge_set *set, struct merge_summary *m, const struct merge_args *a,
                   const struct merge_log_stats *st, bool written)
{
    char desc[256], n[32];
    merge_set_describe(set, desc, sizeof desc);
    fprintf(text, "knee merge: %s, %zu files\n", desc, set->nfiles);
    if (m) {
        runreport_print_summary(text, &m->res, a->verbose);
        runreport_print_shard(text, &m->res);
        print_plan_check(text, m);
        print_rates_source(text, m);
        if (a->json_path)
            written &= write_json(a->json_path, m, a->verbose);
    }
    if (a->out_path)
        fprintf(text, "wrote %s: %s requests of %u shards, ordered by planned time\n", a->out_path,
                units_fmt_count(st->records, n, sizeof n), set->count);
    if (a->hlog_path && written)
        fprintf(text, "wrote %s: the shards' intervals summed per second and target\n", a->hlog_path);
    return written;
}

int cmd_merge(int argc, char **argv)
{
    struct merge_args a = {0};
    struct opt opts[] = {
        {.name = "output",
         .short_name = 'o',
         .kind = OPT_STR,
         .dst = &a.out_path,
         .metavar = "LOG",
         .help = "the merged per-request log from the shards' binary logs (*.csv as CSV), ordered by planned time"},
        {.name = "hlog",
         .kind = OPT_STR,
         .dst = &a.hlog_path,
         .metavar = "FILE",
         .help = "the merged HdrHistogram interval log from the shards' hlogs (exact, streamed)"},
        {.name = "json",
         .kind = OPT_STR,
         .dst = &a.json_path,
         .metavar = "FILE|-",
         .help = "the merged summary in knee run's JSON schema (- = stdout; the text goes to stderr)"},
        {.name = "verbose",
         .short_name = 'v',
         .kind = OPT_FLAG,
         .dst = &a.verbose,
         .help = "the full summary: every table, per target, by outcome"},
    };
    struct cmd_spec spec = {
        .name = "merge",
        .usage = "[options] SHARD_OUTPUT...",
        .summary = "Add up the outputs of the shards of one plan (knee run --shard I/N) exactly: the summary, the "
                   "per-request log, the hlog.",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = epilog,
        .min_args = 1,
        .max_args = SIZE_MAX,
    };
    struct strlist args = {0}, paths = {0};
    int rc = opt_parse(&spec, argc, argv, &args);
    if (rc)
        return rc == 1 ? 0 : rc;
    char **owned = NULL;
    size_t nowned = 0;
    struct merge_set set = {0};
    struct merge_summary m = {0};
    bool have_summary = false, written = true;
    char err[1024] = "";
    int code = collect(&spec, &args, &paths, &owned, &nowned);
    if (!code)
        code = check_outputs(&spec, &paths, &a);
    if (!code && merge_set_build(&set, paths.v, paths.n, false, err, sizeof err))
        code = opt_fail(&spec, "%s", err);
    if (!code)
        code = check_kinds(&spec, &set, &a);
    if (!code && set.have[MERGE_JSON]) {
        int r = merge_summary_build(&m, &set, (const char *const *)argv, argc, err, sizeof err);
        have_summary = r == 0;
        if (!r)
            r = merge_summary_ticks_from_hlogs(&m, &set, err, sizeof err);
        if (r)
            code = opt_fail(&spec, "%s", err);
    }
    struct merge_log_stats st = {0};
    if (!code && set.have[MERGE_LOG] && (a.out_path || have_summary)) {
        int r = merge_logs(&set, have_summary ? &m : NULL, a.out_path, &st, err, sizeof err);
        if (r) {
            fprintf(stderr, "knee merge: %s\n", err);
            code = code_of(r);
        }
    }
    if (!code && a.hlog_path)
        written = write_hlog(a.hlog_path, &set, &code);
    if (!code) {
        if (have_summary)
            selfcheck(&m, a.out_path);
        FILE *text = a.json_path && strcmp(a.json_path, "-") == 0 ? stderr : stdout;
        written = report(text, &set, have_summary ? &m : NULL, &a, &st, written);
        code = !written ? 1 : (have_summary && (m.incomplete || !m.res.accounting_ok)) ? 1 : 0;
    }
    if (have_summary)
        merge_summary_release(&m);
    merge_set_release(&set);
    for (size_t i = 0; i < nowned; i++)
        free(owned[i]);
    free(owned);
    strlist_release(&paths);
    strlist_release(&args);
    return code;
}
