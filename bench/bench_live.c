/* What knee run --metrics-listen costs a load thread: once per second each thread turns its
 * HdrHistograms into Prometheus bucket counts (prom_add_hdr, hist/prom.h) for every target:
 * latency, service, lag, and the lag limit's count. This times one conversion over the
 * recorded ranges of typical and extreme runs (knee's 1 ns .. 1 h, 3 digits histograms).
 * Not a test: prints measurements only.
 *   bench_live [repeats]      default 200 (best and median) */
#include "core/clock.h"
#include "core/rng.h"
#include "hist/hdr.h"
#include "hist/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* One histogram of n log-uniform values between lo_ns and hi_ns, converted reps times. */
static void one(const char *what, double lo_ns, double hi_ns, size_t n, int reps)
{
    struct hdr h;
    hdr_init(&h, 1, 3600000000000LL, 3);
    struct rng r;
    rng_seed(&r, 1);
    for (size_t i = 0; i < n; i++)
        hdr_record(&h, (int64_t)exp(log(lo_ns) + (log(hi_ns) - log(lo_ns)) * rng_uniform(&r)), 1);
    /* knee's default buckets, in ns */
    const double b[] = {1e6, 2.5e6, 5e6, 1e7, 2.5e7, 5e7, 1e8, 2.5e8, 5e8, 1e9, 2.5e9, 5e9, 1e10};
    uint64_t *t = malloc((size_t)reps * sizeof *t);
    size_t nonzero = 0;
    for (size_t i = 0; i < h.counts_len; i++)
        nonzero += h.counts[i] != 0;
    uint64_t check = 0;
    for (int k = 0; k < reps; k++) {
        struct prom_hist p;
        prom_init(&p, b, sizeof b / sizeof *b);
        uint64_t t0 = clock_now_ns();
        prom_add_hdr(&p, &h);
        t[k] = clock_now_ns() - t0;
        check += p.total;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_u64);
    printf("%-34s %6zu HDR buckets used  best %8.2f us  median %8.2f us%s\n", what, nonzero, (double)t[0] / 1e3,
           (double)t[reps / 2] / 1e3, check == (uint64_t)reps * n ? "" : "  (COUNT MISMATCH)");
    free(t);
    hdr_release(&h);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 200;
    if (reps < 1 || reps > 100000) {
        fprintf(stderr, "usage: bench_live [repeats 1..100000]\n");
        return 2;
    }
    printf("prom_add_hdr: one histogram -> 13 buckets (a thread converts ~4 per target per second)\n");
    one("lag 5us..200us (a healthy run)", 5e3, 2e5, 1000000, reps);
    one("latency 50us..5ms (nginx, loopback)", 5e4, 5e6, 1000000, reps);
    one("latency 1ms..1s (a slow service)", 1e6, 1e9, 1000000, reps);
    one("latency 20us..10s (worst: overload)", 2e4, 1e10, 1000000, reps);
    return 0;
}
