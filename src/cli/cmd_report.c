/* `knee report INPUT... -o FILE`: one self-contained HTML file with the pictures of one or more
 * runs. Parsing options and orchestration; the work is in src/html. */
#include "cli/commands.h"
#include "cli/opt.h"
#include "core/err.h"
#include "html/html.h"
#include "merge/merge.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char epilog[] =
    "Inputs: what knee run writes — the --json summary, the per-request log (--out x.bin or\n"
    "x.csv), the --hlog file — or a directory of them (knee lab --out DIR). Files whose names\n"
    "differ only in the extension are one run (run.json + run.bin: the run \"run\"); --run\n"
    "names a run and its files explicitly. Several runs are shown side by side.\n"
    "\n"
    "Charts, each titled with the interval it covers: the summary block (word for word as the\n"
    "terminal printed it, from the JSON), a latency histogram with doubling buckets and markers\n"
    "at p50/p90/p99/p99.9/max, the percentile spectrum (latency against 1/(1-p)), latency over\n"
    "time (every request, decimated per pixel column keeping each column's exact minimum and\n"
    "maximum), a heatmap of time x doubling buckets, and rates, outcomes, in-flight requests\n"
    "and the generator's lag per second with the generator-limited threshold. A chart an input\n"
    "cannot back (an hlog has no per-request times) is left out with a note saying why.\n"
    "\n"
    "The file embeds the chart library (uPlot, MIT) and the data: it opens without a network.\n"
    "\n"
    "examples:\n"
    "  knee run -R 200 -d 10s --json run.json --out run.bin http://127.0.0.1:8080/\n"
    "  knee report run.json run.bin -o report.html\n"
    "  knee report --run before=a.json,a.bin --run after=b.json,b.bin -o compare.html\n"
    "  knee report lab-out/ -o lab.html\n"
    "\n"
    "exit codes: 0 written, 1 the report could not be written, 2 usage or bad input\n";

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cmd_report(int argc, char **argv)
{
    const char *out_path = NULL;
    struct strlist runs = {0};
    struct opt opts[] = {
        {.name = "output",
         .short_name = 'o',
         .kind = OPT_STR,
         .dst = &out_path,
         .metavar = "FILE",
         .help = "the HTML file to write; required"},
        {.name = "run",
         .kind = OPT_LIST,
         .dst = &runs,
         .metavar = "NAME=FILE[,FILE...]",
         .help = "one run named NAME from these files (repeatable; e.g. --run before=a.json,a.bin)"},
    };
    struct cmd_spec spec = {
        .name = "report",
        .usage = "[options] [INPUT...] -o FILE",
        .summary = "Write one self-contained HTML report (charts and summary) of one or more runs.",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = epilog,
        .min_args = 0,
        .max_args = SIZE_MAX,
    };
    struct strlist args = {0};
    int r = opt_parse(&spec, argc, argv, &args);
    if (r) {
        strlist_release(&runs);
        return r == 1 ? 0 : r;
    }
    int code = 0;
    struct html_report *rep = NULL;
    if (!out_path) {
        code = opt_fail(&spec, "-o FILE is required");
        goto out;
    }
    if (!args.n && !runs.n) {
        code = opt_fail(&spec, "no inputs: give the run's files (run.json run.bin ...) or --run NAME=FILES");
        goto out;
    }
    for (size_t i = 0; i < args.n; i++)
        if (same_file(args.v[i], out_path)) {
            code = opt_fail(&spec, "-o %s: is also an input", out_path);
            goto out;
        }
    rep = html_report_new();
    char err[1024] = "";
    /* the shards of one plan (knee run --shard) are one run, merged as knee merge merges them */
    bool *used = xcalloc(args.n ? args.n : 1, sizeof *used);
    r = merge_report_runs(rep, args.v, args.n, used, err, sizeof err);
    size_t kept = 0;
    for (size_t i = 0; i < args.n; i++)
        if (!used[i])
            args.v[kept++] = args.v[i];
    args.n = kept;
    free(used);
    if (!r)
        r = html_report_add_inputs(rep, runs.v, runs.n, args.v, args.n, err, sizeof err);
    if (r) {
        code = opt_fail(&spec, "%s", err[0] ? err : knee_strerror(r));
        goto out;
    }
    r = html_report_write_file(rep, out_path, err, sizeof err);
    if (r) {
        opt_fail(&spec, "-o %s", err);
        code = 1;
        goto out;
    }
    struct stat st;
    size_t nr = html_report_nruns(rep);
    printf("knee report: wrote %s (%zu run%s, %.1f MB)\n", out_path, nr, nr == 1 ? "" : "s",
           stat(out_path, &st) == 0 ? (double)st.st_size / 1e6 : 0.0);
out:
    html_report_free(rep);
    strlist_release(&args);
    strlist_release(&runs);
    return code;
}
