/* What knee run --metrics-listen costs a load thread once per second, per target, before and
 * after issue 32. Before: the thread converted its HdrHistograms itself (prom_add_hdr for
 * latency, service, lag, TTFB and the lag limit's count; with native histograms also
 * native_from_hdr for the four). Now (src/load/live.c): it only copies each histogram's
 * recorded range (a memcpy of the used counters into a buffer it reuses) and the main thread
 * converts. This times both over the recorded ranges of typical and extreme runs (knee's
 * 1 ns .. 1 h, 3 digits histograms), four histograms of one shape standing for one target.
 * Not a test: prints measurements only.
 *   bench_live [repeats]      default 200 (best and median) */
#include "core/clock.h"
#include "core/rng.h"
#include "hist/hdr.h"
#include "hist/native.h"
#include "hist/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* knee's default buckets, in ns */
static const double bounds_ns[] = {1e6, 2.5e6, 5e6, 1e7, 2.5e7, 5e7, 1e8, 2.5e8, 5e8, 1e9, 2.5e9, 5e9, 1e10};
#define NB (sizeof bounds_ns / sizeof *bounds_ns)

/* The old per-target work: 4 classic conversions, the lag limit's, 4 native ones when native. */
static uint64_t convert_target(const struct hdr *h, struct native_hist *nat, bool native)
{
    uint64_t check = 0;
    for (int k = 0; k < 4; k++) {
        struct prom_hist p;
        prom_init(&p, bounds_ns, NB);
        prom_add_hdr(&p, h);
        check += p.total;
        if (native) {
            native_from_hdr(nat, h, 1e-9);
            check += nat->count;
        }
    }
    double limit_ns = 5e6;
    struct prom_hist within;
    prom_init(&within, &limit_ns, 1);
    prom_add_hdr(&within, h);
    return check + within.counts[0];
}

/* The new per-target work: the recorded range of 4 histograms copied (as live.c's range_copy). */
static uint64_t copy_target(const struct hdr *h, int64_t *buf)
{
    size_t first = h->counts[0] || h->min_value == INT64_MAX ? 0 : hdr_index_of(h, h->min_value);
    size_t last = hdr_index_of(h, h->max_value);
    for (int k = 0; k < 4; k++)
        memcpy(buf + (size_t)k * h->counts_len, h->counts + first, (last - first + 1) * sizeof *buf);
    return (uint64_t)buf[last - first];
}

static void report(const char *what, uint64_t *t, int reps)
{
    qsort(t, (size_t)reps, sizeof *t, cmp_u64);
    printf("  %-26s best %8.2f us  median %8.2f us\n", what, (double)t[0] / 1e3, (double)t[reps / 2] / 1e3);
}

/* One shape: n log-uniform values between lo_ns and hi_ns. */
static void one(const char *what, double lo_ns, double hi_ns, size_t n, int reps)
{
    struct hdr h;
    hdr_init(&h, 1, 3600000000000LL, 3);
    struct rng r;
    rng_seed(&r, 1);
    for (size_t i = 0; i < n; i++)
        hdr_record(&h, (int64_t)exp(log(lo_ns) + (log(hi_ns) - log(lo_ns)) * rng_uniform(&r)), 1);
    size_t nonzero = 0;
    for (size_t i = 0; i < h.counts_len; i++)
        nonzero += h.counts[i] != 0;
    printf("%s: %zu HDR buckets used, %zu in its recorded range\n", what, nonzero,
           hdr_index_of(&h, h.max_value) - hdr_index_of(&h, h.min_value) + 1);
    uint64_t *t = malloc((size_t)reps * sizeof *t);
    int64_t *buf = calloc(4 * h.counts_len, sizeof *buf);
    struct native_hist nat;
    native_init(&nat, NATIVE_SCHEMA);
    uint64_t sink = 0;
    for (int native = 0; native <= 1; native++) {
        for (int k = 0; k < reps; k++) {
            uint64_t t0 = clock_now_ns();
            sink += convert_target(&h, &nat, native);
            t[k] = clock_now_ns() - t0;
        }
        report(native ? "before, classic + native" : "before, classic", t, reps);
    }
    for (int k = 0; k < reps; k++) {
        uint64_t t0 = clock_now_ns();
        sink += copy_target(&h, buf);
        t[k] = clock_now_ns() - t0;
    }
    report("now, range copies", t, reps);
    if (!sink)
        printf("(nothing converted)\n");
    native_release(&nat);
    free(buf);
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
    printf("one target's work on its load thread per publish (4 histograms of one shape)\n");
    one("lag 5us..200us (a healthy run)", 5e3, 2e5, 1000000, reps);
    one("latency 50us..5ms (nginx, loopback)", 5e4, 5e6, 1000000, reps);
    one("latency 1ms..1s (a slow service)", 1e6, 1e9, 1000000, reps);
    one("latency 20us..10s (worst: overload)", 2e4, 1e10, 1000000, reps);
    return 0;
}
