/* Benchmarks of the statistics core: HDR record cost (ns/value, plain and corrected), HDR
 * value-at-percentile cost, and the exact path over raw samples (radix sort, exact mean, stdev,
 * nearest rank, the binomial CI). Not a test: prints measurements only.
 *   bench_hist [n_values] [repeats]      defaults: 10000000 values, 5 repeats (best and median) */
#include "core/clock.h"
#include "core/err.h"
#include "core/rng.h"
#include "hist/hdr.h"
#include "stats/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* best and median of r timings, in ns */
static void summarize(const char *what, uint64_t *t, int r, double per, const char *unit)
{
    qsort(t, (size_t)r, sizeof *t, cmp_u64);
    printf("%-44s best %10.3f  median %10.3f %s\n", what, (double)t[0] / per, (double)t[r / 2] / per, unit);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1000 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: bench_hist [n_values >= 1000] [repeats 1..100]\n");
        return 2;
    }
    uint64_t t[100];
    struct rng r;
    rng_seed(&r, 1);
    /* latencies in ns: log-normal around 2.7 ms with a long tail */
    int64_t *ns = xmalloc(n * sizeof *ns);
    double *ms = xmalloc(n * sizeof *ms), *work = xmalloc(n * sizeof *work);
    for (size_t i = 0; i < n; i++) {
        double v = rng_lognormal(&r, 1, 1);
        ns[i] = (int64_t)(v * 1e6);
        ms[i] = v;
    }
    printf("statistics core benchmark: %zu values, %d repeats\n", n, reps);

    struct hdr h;
    if (hdr_init(&h, 1, 3600000000000LL, 3) != 0)
        return 1;
    for (int k = 0; k < reps; k++) {
        hdr_reset(&h);
        uint64_t t0 = clock_now_ns();
        for (size_t i = 0; i < n; i++)
            hdr_record(&h, ns[i], 1);
        t[k] = clock_now_ns() - t0;
    }
    summarize("hdr_record (1 ns..1 h, 3 digits)", t, reps, (double)n, "ns/value");

    for (int k = 0; k < reps; k++) {
        hdr_reset(&h);
        uint64_t t0 = clock_now_ns();
        for (size_t i = 0; i < n; i++)
            hdr_record_corrected(&h, ns[i], 1, 10000000); /* 10 ms: back-fills the tail */
        t[k] = clock_now_ns() - t0;
    }
    summarize("hdr_record_corrected (interval 10 ms)", t, reps, (double)n, "ns/value");

    hdr_reset(&h);
    for (size_t i = 0; i < n; i++)
        hdr_record(&h, ns[i], 1);
    static const double ps[] = {50, 90, 99, 99.9, 99.99, 100};
    int64_t sink = 0;
    int q = 2000;
    for (int k = 0; k < reps; k++) {
        uint64_t t0 = clock_now_ns();
        for (int i = 0; i < q; i++)
            sink += hdr_value_at_percentile(&h, ps[i % 6]);
        t[k] = clock_now_ns() - t0;
    }
    summarize("hdr_value_at_percentile (p50..p100 mix)", t, reps, (double)q * 1000, "us/query");
    for (int k = 0; k < reps; k++) {
        uint64_t t0 = clock_now_ns();
        sink += (int64_t)hdr_mean(&h) + (int64_t)hdr_stdev(&h);
        t[k] = clock_now_ns() - t0;
    }
    summarize("hdr_mean + hdr_stdev", t, reps, 1000, "us");
    for (int k = 0; k < reps; k++) {
        struct hdr h2;
        hdr_init(&h2, 1, 3600000000000LL, 3);
        uint64_t t0 = clock_now_ns();
        hdr_add(&h2, &h);
        t[k] = clock_now_ns() - t0;
        hdr_release(&h2);
    }
    summarize("hdr_add (33792 counts)", t, reps, 1000, "us");
    hdr_release(&h);

    /* the exact path */
    for (int k = 0; k < reps; k++) {
        memcpy(work, ms, n * sizeof *ms);
        uint64_t t0 = clock_now_ns();
        stats_sort(work, n);
        t[k] = clock_now_ns() - t0;
    }
    summarize("stats_sort (radix)", t, reps, 1e6, "ms");
    {
        memcpy(work, ms, n * sizeof *ms);
        uint64_t t0 = clock_now_ns();
        qsort(work, n, sizeof *work, cmp_double);
        uint64_t q_ns = clock_now_ns() - t0;
        printf("%-44s once %10.3f ms\n", "qsort (libc, for comparison)", (double)q_ns / 1e6);
    }
    stats_sort(work, n);
    for (int k = 0; k < reps; k++) {
        uint64_t t0 = clock_now_ns();
        volatile double m = stats_mean(work, n);
        (void)m;
        t[k] = clock_now_ns() - t0;
    }
    summarize("stats_mean (exactly rounded sum)", t, reps, 1e6, "ms");
    for (int k = 0; k < reps; k++) {
        uint64_t t0 = clock_now_ns();
        volatile double s = stats_stdev(work, n);
        (void)s;
        t[k] = clock_now_ns() - t0;
    }
    summarize("stats_stdev", t, reps, 1e6, "ms");
    for (int k = 0; k < reps; k++) {
        memcpy(work, ms, n * sizeof *ms);
        uint64_t t0 = clock_now_ns();
        stats_sort(work, n);
        struct summary s;
        stats_summarize(work, n, &s);
        sink += (int64_t)s.p99;
        t[k] = clock_now_ns() - t0;
    }
    summarize("exact percentiles: sort + summarize", t, reps, 1e6, "ms");
    for (int k = 0; k < reps; k++) {
        struct pct_ci ci;
        uint64_t t0 = clock_now_ns();
        stats_percentile_ci(work, n, 99, 0.95, &ci);
        t[k] = clock_now_ns() - t0;
    }
    summarize("stats_percentile_ci p99 95%", t, reps, 1000, "us");
    for (int k = 0; k < reps; k++) {
        size_t lo, hi;
        double cov;
        uint64_t t0 = clock_now_ns();
        stats_binomial_ci_ranks(100000000, 50, 0.95, &lo, &hi, &cov);
        t[k] = clock_now_ns() - t0;
    }
    summarize("stats_binomial_ci_ranks n=1e8 p50 (worst p)", t, reps, 1000, "us");
    printf("(checksum %lld)\n", (long long)sink);
    free(ns);
    free(ms);
    free(work);
    return 0;
}
