/* What merging shards costs (knee merge), and what splitting a Poisson plan costs each shard.
 *   bench_merge hlog [--shards N] [--seconds S] [--dir D] [--keep] [--whole]
 *       writes N shard hlogs of S one-second intervals (one target tag, 100 requests a second per
 *       shard, latencies of a lognormal body with a slow 10%; 64 distinct histograms, encoded
 *       once and cycled), then merges them in a child process with knee merge's streamed merge
 *       (and, with --whole, knee hlog merge's whole-file merge) and prints the wall time, CPU time
 *       and peak RSS of each merge. Default: 1,000 shards x 3,600 s (an hour).
 *   bench_merge                (both, at their defaults: what bench/run.sh runs)
 *   bench_merge poisson [--rate R] [--seconds S]
 *       the schedule's cost per shard: every shard of N draws the whole Poisson sequence and keeps
 *       1/N of it; prints ns per kept request for N = 1, 4, 16, 64. */
#include "core/clock.h"
#include "core/err.h"
#include "core/rng.h"
#include "hlog/codec.h"
#include "hlog/hlog.h"
#include "load/run.h"
#include "merge/merge.h"
#include "plan/schedule.h"
#include "plan/shard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DISTINCT 64

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int64_t draw_ns(struct rng *r)
{
    double v = rng_uniform(r) < 0.1 ? rng_lognormal(r, log(40e6), 0.3) : rng_lognormal(r, log(2e6), 0.5);
    return (int64_t)(v < 3e12 ? v : 3e12);
}

/* Run fn(arg) in a child; print its wall time, CPU time and peak RSS. */
static int measure(const char *label, int (*fn)(void *), void *arg, size_t intervals)
{
    double t0 = (double)clock_now_ns() / 1e9;
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn(arg) == 0 ? 0 : 1);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: the merge failed\n", label);
        return 1;
    }
    double wall = (double)clock_now_ns() / 1e9 - t0;
    double cpu = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    printf("%-38s wall %8.1f s  cpu %8.1f s  peak RSS %8.1f MB  %6.2f us/interval\n", label, wall, cpu,
           (double)ru.ru_maxrss / 1024.0, cpu * 1e6 / (double)intervals);
    return 0;
}

struct job {
    const char **paths;
    size_t n;
    const char *out;
};

static int run_stream(void *arg)
{
    struct job *j = arg;
    FILE *f = fopen(j->out, "w");
    char err[512];
    int r = merge_hlog_files(j->paths, j->n, 1.0, f, NULL, NULL, NULL, err, sizeof err);
    if (r)
        fprintf(stderr, "%s\n", err);
    fclose(f);
    return r;
}

static int run_whole(void *arg)
{
    struct job *j = arg;
    FILE *f = fopen(j->out, "w");
    char err[512];
    int r = hlog_merge(f, j->paths, j->n, 1.0, err, sizeof err);
    if (r)
        fprintf(stderr, "%s\n", err);
    fclose(f);
    return r;
}

static int bench_hlog(int argc, char **argv)
{
    long shards = 1000, seconds = 3600;
    const char *dir = NULL;
    bool keep = false, whole = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--shards") && i + 1 < argc)
            shards = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--keep"))
            keep = true;
        else if (!strcmp(argv[i], "--whole"))
            whole = true;
    }
    char tmpl[] = "/tmp/knee-bench-merge-XXXXXX";
    if (!dir && !(dir = mkdtemp(tmpl))) {
        perror("mkdtemp");
        return 1;
    }
    mkdir(dir, 0755);
    /* 64 distinct one-second histograms, encoded once */
    struct rng r;
    rng_seed(&r, 17);
    struct hlog_codec *c = hlog_codec_new();
    char *text[DISTINCT];
    double max_ms[DISTINCT];
    size_t bytes = 0;
    for (int k = 0; k < DISTINCT; k++) {
        struct hdr h;
        hdr_init(&h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        for (int i = 0; i < 100; i++)
            hdr_record(&h, draw_ns(&r), 1);
        const char *t;
        size_t len;
        if (hlog_encode_base64(c, &h, &t, &len) != 0)
            return 1;
        text[k] = xstrdup(t);
        bytes += len;
        max_ms[k] = (double)hdr_max(&h) / 1e6;
        hdr_release(&h);
    }
    hlog_codec_free(c);
    const char **paths = xcalloc((size_t)shards, sizeof *paths);
    double g0 = (double)clock_now_ns() / 1e9;
    for (long s = 0; s < shards; s++) {
        char *p = xmalloc(strlen(dir) + 32);
        sprintf(p, "%s/shard-%ld.hlog", dir, s);
        paths[s] = p;
        FILE *f = fopen(p, "w");
        struct hlog_writer *w;
        if (!f || hlog_writer_open(&w, f, 1764507600.0, "bench shard") != 0)
            return 1;
        hlog_writer_close(w);
        for (long t = 0; t < seconds; t++) {
            int k = (int)((s * 7 + t) % DISTINCT);
            fprintf(f, "Tag=t,%ld.000,1.000,%.3f,%s\n", t, max_ms[k], text[k]);
        }
        fclose(f);
    }
    size_t intervals = (size_t)shards * (size_t)seconds;
    printf("inputs: %ld shard hlogs x %ld one-second intervals = %zu intervals, %.1f MB (written in %.1f s)\n", shards,
           seconds, intervals, (double)intervals * ((double)bytes / DISTINCT + 40) / 1e6,
           (double)clock_now_ns() / 1e9 - g0);
    char out[512];
    snprintf(out, sizeof out, "%s/merged.hlog", dir);
    struct job j = {paths, (size_t)shards, out};
    int rc = measure("knee merge --hlog (streamed)", run_stream, &j, intervals);
    if (!rc && whole)
        rc = measure("knee hlog merge (whole files)", run_whole, &j, intervals);
    if (!keep) {
        for (long s = 0; s < shards; s++)
            unlink(paths[s]);
        unlink(out);
        rmdir(dir);
    }
    for (long s = 0; s < shards; s++)
        free((void *)paths[s]);
    free(paths);
    for (int k = 0; k < DISTINCT; k++)
        free(text[k]);
    return rc;
}

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench_poisson(int argc, char **argv)
{
    double rate = 100000, seconds = 10;
    for (int i = 0; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rate"))
            rate = strtod(argv[i + 1], NULL);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = strtod(argv[i + 1], NULL);
    }
    printf("Poisson plan of %.0f/s for %.0f s: the schedule's CPU time per shard (one thread each)\n", rate, seconds);
    const uint32_t counts[] = {1, 4, 16, 64};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        struct run_config cfg = {.plan.shard.count = counts[k], .plan.shard.index = 0};
        struct sched s;
        uint64_t end = (uint64_t)(seconds * 1e9);
        sched_init(&s, true, rate, rate, seconds, 0, end, UINT64_MAX, plan_shard_stride(&cfg.plan, 1),
                   plan_shard_offset(&cfg.plan, 1, 0), 1);
        uint64_t t, n = 0;
        double t0 = thread_cpu_ns();
        while (sched_next(&s, &t))
            n++;
        double ns = thread_cpu_ns() - t0; /* CPU time: the machine may be shared */
        printf("  %2u shards: %9llu requests kept of %9llu drawn, %7.1f ns per kept request, %5.1f ms per second of "
               "plan\n",
               counts[k], (unsigned long long)n, (unsigned long long)s.generated, ns / (double)n, ns / 1e6 / seconds);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "hlog"))
        return bench_hlog(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "poisson"))
        return bench_poisson(argc - 2, argv + 2);
    if (argc == 1) /* bench/run.sh: both, at their defaults */
        return bench_poisson(0, NULL) || bench_hlog(0, NULL);
    fprintf(stderr, "usage: bench_merge hlog [--shards N] [--seconds S] [--dir D] [--keep] [--whole]\n"
                    "       bench_merge poisson [--rate R] [--seconds S]\n");
    return 2;
}
