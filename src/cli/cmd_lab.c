/* `knee lab [EXPERIMENT]`: the source articles' experiments with one command. Checks the
 * flags against the experiment, fills struct lab_options and hands over to src/lab (its
 * registry runs the experiment by name); the experiments print their own tables and sentences
 * on stdout, one progress note per round on stderr. Bad flags: one line, exit 2; an
 * experiment that fails or is interrupted: exit 1. */
#include "cli/commands.h"
#include "cli/opt.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "html/html.h"
#include "lab/lab.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lab_flags {
    uint64_t duration_ns, warmup_ns, seed;
    bool quick, quiet, progress, html;
    const char *out, *rates;
};

static struct lab_flags F;

static struct opt lab_opts[] = {
    {"duration", 'd', OPT_DURATION, &F.duration_ns, "D",
     "every round's measured length (default per experiment: stats 60s, queue 10s, knee 20s per rate, fanout 30s, "
     "nagle 10s, compare 5s, capacity 1s per window, tls 10s per round, stream 10s per rate)",
     0, 0, 0},
    {"quick", 'q', OPT_FLAG, &F.quick, NULL,
     "short rounds (stats 15s, queue 5s, knee 6s x 4 rates, fanout 10s, nagle 5s, compare 2s, tls 5s, stream 4s x 4 "
     "rates): the default "
     "experiment in under a minute (capacity: 2 runs of 0.5s windows)",
     0, 0, 0},
    {"warmup", 0, OPT_DURATION, &F.warmup_ns, "D",
     "requests planned in the first D of each round are left out (default 1s, quick 0.5s; queue 0)", 0, 0, 0},
    {"out", 'o', OPT_STR, &F.out, "DIR",
     "keep every round's per-request CSV and JSON summary in DIR (<experiment>-<round>.csv/.json)", 0, 0, 0},
    {"html", 0, OPT_FLAG, &F.html, NULL,
     "with --out DIR: also DIR/<experiment>.html, the report with charts of each experiment's rounds (knee report)", 0,
     0, 0},
    {"seed", 0, OPT_COUNT, &F.seed, "N", "seed of the servers' random choices and the Poisson arrivals (default 1)", 0,
     0, 0},
    {"rates", 0, OPT_STR, &F.rates, "R,R,...",
     "knee: the ladder of rates (default 10,30,50,70,80,90,95; quick 10,50,70,90)", 0, 0, 0},
    {"quiet", 0, OPT_FLAG, &F.quiet, NULL, "no progress on stderr (no note per round, no live line)", 0, 0, 0},
    {"progress", 0, OPT_FLAG, &F.progress, NULL,
     "progress during each round even when stderr is not a terminal: a plain line every 5 s (on a terminal: one "
     "line rewritten every second, the default)",
     0, 0, 0},
};

static struct cmd_spec lab_spec = {
    .name = "lab",
    .usage = NULL, /* lab_usage: "[options] [stats|queue|...|all]" from the experiment table */
    .summary = "Reproduce the latency articles' experiments on this machine (in-process servers on 127.0.0.1, "
               "in-process load) and explain each from the numbers it just measured.",
    .opts = lab_opts,
    .nopts = OPT_COUNT_OF(lab_opts),
    .epilog = "experiments:\n"
              "  stats   (default) servers A (a job holds a lock 250 ms every 4 s) and B (no job): closed loop\n"
              "          8+8 clients, open loop A=100/s B=300/s, open loop A=100/s B=550/s; knee-stats tables,\n"
              "          a comparison across rounds (coordinated omission, averaged percentiles, the knee)\n"
              "  queue   4 slots, 503 after 250 ms waiting: open 40/s x 20 ms; closed 4 clients x 200 ms;\n"
              "          open 40/s x 200 ms; open 40/s on 1 connection dropping when busy; every outcome counted\n"
              "  knee    10 ms of CPU on 1 worker under a ladder of Poisson rates: percentiles, M/M/1 and\n"
              "          M/D/1 means, Little's law with L measured at the server\n"
              "  fanout  40 pages/s waiting for N = 1, 2, 5, 10, 20 calls, each 2% slow at 200 ms: share of\n"
              "          slow pages against 1-(1-p)^N\n"
              "  nagle   closed loop against a server with Nagle and two writes, and without: medians\n"
              "  compare one server measured as \"before\" and \"after\" 3 times each, through knee compare,\n"
              "          then with 3 ms added: single runs name a winner by noise, repetitions do not\n"
              "  capacity  a server that stalls 300 ms now and then: the article's search (double, bisect,\n"
              "          median of 3) against knee's fixed ladder with a majority vote, 3 runs of each\n"
              "  tls     200/s over TLS: keep-alive, a new connection per request (resumed, full handshake)\n"
              "          and a new plain TCP connection per request: the tail, the tls phase, resumption\n"
              "  stream  SSE streams behind 8 slots at 6, 12, 18, 22/s: the gaps' mean against their median and\n"
              "          p99 (a rare stall owns the tail), the first event rising with load before the gaps do\n"
              "  all     every experiment in turn (about 14 minutes; --quick about 6)\n\n"
              "--out DIR: an existing file there is replaced only once the new one is written whole\n"
              "(a failure keeps the old one); a device or FIFO is written in place, never removed.\n\n"
              "examples:\n"
              "  knee lab --quick\n"
              "  knee lab queue --out lab-out\n"
              "  knee lab knee --rates 20,60,90 --duration 30s\n",
    .min_args = 0,
    .max_args = 1,
};

static void on_signal(int sig)
{
    (void)sig;
    lab_request_stop();
}

/* "10,50,90": up to LAB_MAX_RATES positive rates (each as --rate takes it), no empty item. */
static bool parse_rates(const char *s, double *out, size_t *n)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (len == 0 || len >= sizeof item || *n == LAB_MAX_RATES)
            return false;
        memcpy(item, p, len);
        item[len] = '\0';
        if (units_parse_rate(item, &out[*n]) != 0 || !(out[*n] > 0))
            return false;
        (*n)++;
        p = comma ? comma + 1 : p + len;
        if (comma && !*p)
            return false;
    }
    return *n > 0;
}

static bool known_experiment(const char *name)
{
    for (size_t i = 0; lab_experiment_names[i]; i++)
        if (strcmp(name, lab_experiment_names[i]) == 0)
            return true;
    return false;
}

/* The flags against the experiment, in the order of the first fault reported; --rates into
 * rates[*nrates]. 0, or 2 after the message. */
static int check_flags(const char *name, double *rates, size_t *nrates)
{
    *nrates = 0;
    if (!known_experiment(name)) {
        char list[200];
        const char *near = opt_suggest_word(name, lab_experiment_names);
        return opt_fail(&lab_spec, "unknown experiment '%s' (one of %s)%s%s%s", name,
                        opt_word_list(lab_experiment_names, list, sizeof list), near ? ": did you mean " : "",
                        near ? near : "", near ? "?" : "");
    }
    if (F.quiet && F.progress)
        return opt_fail(&lab_spec, "--quiet and --progress exclude each other");
    if (opt_find(&lab_spec, "duration")->seen && F.duration_ns < NS_PER_S)
        return opt_fail(&lab_spec,
                        "--duration: at least 1s (a round needs seconds of requests behind its percentiles)");
    if (F.rates && !parse_rates(F.rates, rates, nrates))
        return opt_fail(&lab_spec,
                        "--rates '%s': expected a comma-separated list of up to %d positive rates, e.g. 10,50,90",
                        F.rates, LAB_MAX_RATES);
    if (F.html && !F.out)
        return opt_fail(&lab_spec,
                        "--html needs --out DIR (the report is DIR/<experiment>.html, of the rounds kept there)");
    if (F.rates && strcmp(name, "knee") != 0 && strcmp(name, "all") != 0)
        return opt_fail(&lab_spec, "--rates applies to the knee experiment (knee lab knee --rates ...)");
    return 0;
}

/* The checked flags as the lab's options (rates must outlive o). */
static void options_from_flags(struct lab_options *o, const double *rates, size_t nrates)
{
    lab_options_init(o);
    o->duration_ns = F.duration_ns;
    if (opt_find(&lab_spec, "warmup")->seen)
        o->warmup_ns = F.warmup_ns;
    o->quick = F.quick;
    o->out_dir = F.out;
    o->seed = F.seed;
    o->progress = !F.quiet;
    if (F.quiet)
        o->live = LAB_LIVE_OFF;
    else if (isatty(STDERR_FILENO))
        o->live = LAB_LIVE_TTY;
    else
        o->live = F.progress ? LAB_LIVE_LINES : LAB_LIVE_OFF;
    if (nrates) {
        o->rates = rates;
        o->nrates = nrates;
    }
}

/* Ctrl-C and SIGTERM stop the experiment between rounds (the servers drain); a closed pipe is
 * a write error, not a signal. */
static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static int cmp_names(const void *a, const void *b)
{
    return strverscmp(*(const char *const *)a, *(const char *const *)b);
}

/* --html: DIR/<experiment>.html from the rounds the experiment left in DIR (<experiment>-*.csv
 * and .json, grouped into runs by knee report's rule). 0, or 1 after a line naming the file. */
static int write_report(const char *experiment)
{
    DIR *d = opendir(F.out);
    if (!d)
        return 0;
    char **files = NULL;
    size_t n = 0, plen = strlen(experiment);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        bool ours = strncmp(e->d_name, experiment, plen) == 0 && e->d_name[plen] == '-';
        bool kind = len > 5 && (strcmp(e->d_name + len - 4, ".csv") == 0 || strcmp(e->d_name + len - 5, ".json") == 0);
        if (!ours || !kind)
            continue;
        files = xrealloc(files, (n + 2) * sizeof *files);
        size_t plen2 = strlen(F.out) + len + 2;
        files[n] = xmalloc(plen2);
        snprintf(files[n++], plen2, "%s/%s", F.out, e->d_name);
    }
    closedir(d);
    int rc = 0;
    if (n) {
        qsort(files, n, sizeof *files, cmp_names);
        files[n] = NULL;
        char out[4200], err[1024];
        snprintf(out, sizeof out, "%s/%s.html", F.out, experiment);
        struct html_write_opts h = {.files = (const char *const *)files};
        if (html_write_report(out, &h, NULL, err, sizeof err) != 0) {
            knee_report(stderr, "knee lab: ", "--html %s", err);
            rc = 1;
        } else {
            knee_report(stderr, "knee lab: ", "wrote %s (knee report of the %s rounds)", out, experiment);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    return rc;
}

static int write_reports(const char *name)
{
    int rc = 0;
    for (size_t i = 0; lab_experiment_names[i]; i++)
        if (strcmp(lab_experiment_names[i], "all") != 0 &&
            (strcmp(name, "all") == 0 || strcmp(name, lab_experiment_names[i]) == 0))
            rc |= write_report(lab_experiment_names[i]);
    return rc;
}

/* The exit code of an experiment's result, after its last line on stderr. */
static int finish(int lrc)
{
    fflush(stdout);
    if (lrc == -EINTR) {
        fprintf(stderr, "knee lab: interrupted; the servers are stopped\n");
        return 1;
    }
    if (lrc)
        return 1; /* the experiment printed its one-line reason (a path and why, a server, a round) */
    if (F.out)
        knee_report(stderr, "knee lab: ",
                    "per-request CSV and JSON summaries are in %s/ (each round's warm-up rows are marked in the "
                    "CSV's warmup column; knee stats leaves them out)",
                    F.out);
    return 0;
}

int cmd_lab(int argc, char **argv)
{
    memset(&F, 0, sizeof F);
    F.seed = 1;
    for (size_t i = 0; i < lab_spec.nopts; i++)
        lab_opts[i].seen = false;
    static char lab_usage[256];
    size_t n = (size_t)snprintf(lab_usage, sizeof lab_usage, "[options] [");
    for (size_t i = 0; lab_experiment_names[i] && n < sizeof lab_usage; i++)
        n += (size_t)snprintf(lab_usage + n, sizeof lab_usage - n, "%s%s", i ? "|" : "", lab_experiment_names[i]);
    if (n < sizeof lab_usage)
        snprintf(lab_usage + n, sizeof lab_usage - n, "]");
    lab_spec.usage = lab_usage;
    struct strlist args = {0};
    int rc = opt_parse(&lab_spec, argc, argv, &args);
    if (rc) {
        strlist_release(&args);
        return rc == 1 ? 0 : 2;
    }
    const char *name = args.n ? args.v[0] : "stats";
    double rates[LAB_MAX_RATES];
    size_t nrates;
    if ((rc = check_flags(name, rates, &nrates)) == 0) {
        struct lab_options o;
        options_from_flags(&o, rates, nrates);
        catch_stop_signals();
        rc = finish(lab_run_named(name, &o));
        if (rc == 0 && F.html)
            rc = write_reports(name);
    }
    strlist_release(&args);
    return rc;
}
