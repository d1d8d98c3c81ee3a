/* `knee report INPUT... -o FILE`: one self-contained HTML file with the pictures of one or more
 * runs. Parsing options and orchestration; the work is in src/html. */
#include "cli/commands.h"
#include "cli/io_check.h"
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
    "x.csv), the --hlog file — or a directory of them (knee lab --out DIR, knee run --repeat's\n"
    "--out-dir, knee capacity --out); and the JSON of knee compare, knee capacity and knee run\n"
    "--repeat (repeat.json). Files whose names differ only in the extension are one run\n"
    "(run.json + run.bin: the run \"run\"); --run names a run and its files explicitly. Several\n"
    "runs are shown side by side.\n"
    "\n"
    "Charts, each titled with the interval it covers: the summary block (word for word as the\n"
    "terminal printed it, from the JSON), a latency histogram with doubling buckets and markers\n"
    "at p50/p90/p99/p99.9/max, the percentile spectrum (latency against 1/(1-p)), latency over\n"
    "time (every request, decimated per pixel column keeping each column's exact minimum and\n"
    "maximum), a heatmap of time x doubling buckets, and rates, outcomes, in-flight requests\n"
    "and the generator's lag per second with the generator-limited threshold. A chart an input\n"
    "cannot back (an hlog has no per-request times) is left out with a note saying why.\n"
    "A knee compare JSON: the two distributions overlaid (histogram and percentile spectrum)\n"
    "and each metric's difference with its interval. A knee capacity JSON: the knee curve\n"
    "(p50/p99 per offered rate, each repetition a dot, the SLO; with --service the M/M/1 and\n"
    "M/D/1 predictions, with --servers N too M/M/N's), achieved against offered, the ladder x\n"
    "repetition grid, the probes.\n"
    "\n"
    "Side by side, the runs' charts of one kind share their axes (the same x and y ranges), so\n"
    "a taller line is a larger number; rates are drawn from zero.\n"
    "\n"
    "The file embeds the chart library (uPlot, MIT) and the data: it opens without a network.\n"
    "\n"
    "examples:\n"
    "  knee run -R 200 -d 10s --json run.json --out run.bin http://127.0.0.1:8080/\n"
    "  knee report run.json run.bin -o report.html\n"
    "  knee report --run before=a.json,a.bin --run after=b.json,b.bin -o compare.html\n"
    "  knee report lab-out/ -o lab.html\n"
    "  knee report before/ -o repeat.html          (a knee run --repeat directory)\n"
    "  knee compare before after --json cmp.json && knee report cmp.json -o cmp.html\n"
    "  knee report cap.json --service 10ms -o capacity.html\n"
    "  knee report cap.json --service 40ms --servers 4 -o capacity.html   (M/M/4)\n"
    "\n"
    "-o FILE replaces an existing file only once the report is written whole (a failure keeps\n"
    "the old one); a device or FIFO is written in place, never removed.\n"
    "exit codes: 0 written, 1 the report could not be written, 2 usage or bad input\n";

/* -o is none of the inputs: the files given, a directory's run files, --run's files. 0, or 2
 * after one line. */
static int check_output(const struct cmd_spec *spec, const struct strlist *args, const struct strlist *runs,
                        const char *out_path)
{
    static const char *const exts[] = {".json", ".bin", ".csv", ".hlog", ".log", NULL}; /* html/inputs.c reads these */
    struct cli_io io = {.dir_exts = exts};
    for (size_t i = 0; i < args->n; i++)
        cli_io_input(&io, NULL, args->v[i]);
    char **lists = xcalloc(runs->n ? runs->n : 1, sizeof *lists);
    for (size_t i = 0; i < runs->n; i++) { /* NAME=FILE[,FILE...] */
        const char *eq = strchr(runs->v[i], '=');
        lists[i] = xstrdup(eq ? eq + 1 : runs->v[i]);
        char *save = NULL;
        for (char *f = strtok_r(lists[i], ",", &save); f; f = strtok_r(NULL, ",", &save))
            cli_io_input(&io, "--run", f);
    }
    cli_io_output(&io, "-o", out_path);
    int code = cli_io_check(&io, spec);
    cli_io_release(&io);
    for (size_t i = 0; i < runs->n; i++)
        free(lists[i]);
    free(lists);
    return code;
}

/* The most servers --servers takes: Erlang C's recurrence is O(N) per point of the curve. */
#define REPORT_MAX_SERVERS 100000

/* --servers N: 1..REPORT_MAX_SERVERS, and only with --service (the model needs a service
 * time). 0, or 2 after one line. */
static int check_servers(const struct cmd_spec *spec, uint64_t servers, uint64_t service_ns)
{
    if (servers < 1 || servers > REPORT_MAX_SERVERS)
        return opt_fail(spec, "--servers %llu: must be 1..%d", (unsigned long long)servers, REPORT_MAX_SERVERS);
    if (!service_ns)
        return opt_fail(spec, "--servers needs --service D: the M/M/c curves need the service time of one request");
    return 0;
}

int cmd_report(int argc, char **argv)
{
    const char *out_path = NULL;
    uint64_t service_ns = 0, servers = 1;
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
        {.name = "service",
         .kind = OPT_DURATION,
         .dst = &service_ns,
         .metavar = "D",
         .unit_ns = 1000000,
         .help = "a knee capacity JSON's service time: draw M/M/1 and M/D/1 on its knee curve (bare number: ms)"},
        {.name = "servers",
         .short_name = 'c',
         .kind = OPT_COUNT,
         .dst = &servers,
         .metavar = "N",
         .help = "with --service: N servers share one queue, draw M/M/N (Erlang C) instead (default 1)"},
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
    if ((code = check_output(&spec, &args, &runs, out_path)))
        goto out;
    if (opt_find(&spec, "service")->seen && service_ns == 0) {
        code = opt_fail(&spec, "--service must be > 0");
        goto out;
    }
    if (opt_find(&spec, "servers")->seen && (code = check_servers(&spec, servers, service_ns)))
        goto out;
    rep = html_report_new();
    html_report_set_service_time(rep, (double)service_ns / 1e9);
    html_report_set_servers(rep, (unsigned)servers);
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
    size_t nr = html_report_nruns(rep), nd = html_report_ndocuments(rep);
    printf("knee report: wrote %s (", out_path);
    if (nd)
        printf("%zu document%s, ", nd, nd == 1 ? "" : "s");
    printf("%zu run%s, %.1f MB)\n", nr, nr == 1 ? "" : "s", stat(out_path, &st) == 0 ? (double)st.st_size / 1e6 : 0.0);
out:
    html_report_free(rep);
    strlist_release(&args);
    strlist_release(&runs);
    return code;
}
