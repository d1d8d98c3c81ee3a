/* Benchmarks of the hlog codec and merge, and the generator of the knee-written logs they
 * (and the Java interop test) use.
 *   bench_hlog                 encode/decode a 3-digit histogram; merge 1,000 one-second intervals
 *   bench_hlog gen OUT [--seed S] [--intervals N] [--start EPOCH_S] [--tags a,b] [--digits D]
 *                              write a log with knee's writer: one untagged interval per second plus
 *                              one per tag, seeded values in ns (lognormal body, a slow 10%, a rare
 *                              heavy tail) in a 1 ns..1 h histogram */
#include "core/clock.h"
#include "core/err.h"
#include "core/rng.h"
#include "hlog/codec.h"
#include "hlog/hlog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOUR_NS 3600000000000LL

static int64_t draw_ns(struct rng *r)
{
    double u = rng_uniform(r);
    double v;
    if (u < 0.001)
        v = rng_pareto(r, 50e6, 1.1); /* a rare stall */
    else if (u < 0.1)
        v = rng_lognormal(r, log(40e6), 0.3); /* the slow path */
    else
        v = rng_lognormal(r, log(2e6), 0.5);
    if (v > 3.0e12)
        v = 3.0e12;
    return (int64_t)v;
}

static void fill(struct hdr *h, struct rng *r, int n)
{
    for (int i = 0; i < n; i++)
        hdr_record(h, draw_ns(r), 1);
}

static int gen(int argc, char **argv)
{
    const char *out = argv[0];
    uint64_t seed = 1;
    long intervals = 60;
    double start = 1700000000.0;
    const char *tags = "";
    int digits = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--intervals"))
            intervals = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--start"))
            start = strtod(argv[i + 1], NULL);
        else if (!strcmp(argv[i], "--tags"))
            tags = argv[i + 1];
        else if (!strcmp(argv[i], "--digits"))
            digits = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "bench_hlog gen: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
    if (!f) {
        perror(out);
        return 1;
    }
    char *tagbuf = xstrdup(tags);
    const char *names[16] = {NULL};
    size_t nt = 1; /* names[0] = untagged */
    for (char *save = NULL, *t = strtok_r(tagbuf, ",", &save); t && nt < 16; t = strtok_r(NULL, ",", &save))
        names[nt++] = t;
    struct rng r;
    rng_seed(&r, seed);
    struct hlog_writer *w;
    int rc = hlog_writer_open(&w, f, start, "Logged by bench_hlog gen (knee's writer)");
    struct hdr h;
    if (!rc)
        rc = hdr_init(&h, 1, HOUR_NS, digits);
    for (long i = 0; i < intervals && !rc; i++) {
        for (size_t t = 0; t < nt && !rc; t++) {
            hdr_reset(&h);
            fill(&h, &r, 200 + (int)rng_below(&r, 800));
            rc = hlog_writer_write(w, names[t], (double)i, 1.0, &h);
        }
    }
    hdr_release(&h);
    int rc2 = hlog_writer_close(w);
    if (f != stdout)
        fclose(f);
    free(tagbuf);
    if (rc || rc2) {
        fprintf(stderr, "bench_hlog gen: %s\n", knee_strerror(rc ? rc : rc2));
        return 1;
    }
    return 0;
}

static double per_op_us(uint64_t t0, uint64_t t1, long n) { return (double)(t1 - t0) / 1e3 / (double)n; }

static int bench(void)
{
    struct rng r;
    rng_seed(&r, 7);
    struct hdr h, d;
    hdr_init(&h, 1, HOUR_NS, 3);
    fill(&h, &r, 100000);
    struct hlog_codec *c = hlog_codec_new();
    const uint8_t *bin;
    size_t n;
    const char *text;
    size_t tn;
    hlog_encode(c, &h, false, &bin, &n);
    size_t raw = n;
    hlog_encode(c, &h, true, &bin, &n);
    printf("histogram: 3 digits, 1 ns..1 h (%zu counts), 100000 values; V2 %zu bytes, compressed %zu bytes\n",
           h.counts_len, raw, n);

    long reps = 2000;
    uint64_t t0 = clock_now_ns();
    for (long i = 0; i < reps; i++)
        hlog_encode(c, &h, false, &bin, &n);
    uint64_t t1 = clock_now_ns();
    printf("encode V2 (uncompressed)          %8.1f us/histogram\n", per_op_us(t0, t1, reps));
    t0 = clock_now_ns();
    for (long i = 0; i < reps; i++)
        hlog_encode_base64(c, &h, &text, &tn);
    t1 = clock_now_ns();
    printf("encode V2 compressed + base64     %8.1f us/histogram\n", per_op_us(t0, t1, reps));
    char *copy = xstrdup(text);
    t0 = clock_now_ns();
    for (long i = 0; i < reps; i++) {
        if (hlog_decode_base64(c, copy, tn, &d, NULL, 0) != 0)
            return 1;
        hdr_release(&d);
    }
    t1 = clock_now_ns();
    printf("decode base64 + V2 compressed     %8.1f us/histogram\n", per_op_us(t0, t1, reps));
    free(copy);
    hlog_codec_free(c);
    hdr_release(&h);

    /* merging 1,000 one-second intervals: two "machines", 1,000 intervals each, offset 0.25 s */
    char a[] = "/tmp/bench_hlog_aXXXXXX", b[] = "/tmp/bench_hlog_bXXXXXX";
    int fa = mkstemp(a), fb = mkstemp(b);
    if (fa < 0 || fb < 0)
        return 1;
    close(fa);
    close(fb);
    char *ga[] = {a, "--seed", "1", "--intervals", "1000", "--start", "1700000000"};
    char *gb[] = {b, "--seed", "2", "--intervals", "1000", "--start", "1700000000.25"};
    if (gen(7, ga) || gen(7, gb))
        return 1;
    const char *one[] = {a}, *two[] = {a, b};
    char err[512];
    FILE *devnull = fopen("/dev/null", "w");
    t0 = clock_now_ns();
    int rc = hlog_merge(devnull, one, 1, 1.0, err, sizeof err);
    t1 = clock_now_ns();
    printf("merge 1 log x 1000 intervals      %8.1f ms%s\n", (double)(t1 - t0) / 1e6, rc ? " (FAILED)" : "");
    t0 = clock_now_ns();
    rc = hlog_merge(devnull, two, 2, 1.0, err, sizeof err);
    t1 = clock_now_ns();
    printf("merge 2 logs x 1000 intervals     %8.1f ms%s\n", (double)(t1 - t0) / 1e6, rc ? " (FAILED)" : "");
    /* summing all 1,000 intervals into one histogram (what show/stats do) */
    FILE *f = fopen(a, "r");
    struct hlog_reader *rd = hlog_reader_new(f, a);
    struct hlog_entry e;
    struct hlog_acc acc;
    hlog_acc_init(&acc);
    t0 = clock_now_ns();
    while (hlog_reader_next(rd, &e) == 1) {
        if (hlog_reader_decode(rd, &e, &d) != 0)
            return 1;
        hlog_acc_add(&acc, &d, NULL, 0);
        hdr_release(&d);
    }
    t1 = clock_now_ns();
    printf("read + sum 1000 intervals         %8.1f ms (total count %lld)\n", (double)(t1 - t0) / 1e6,
           (long long)acc.h.total_count);
    hlog_acc_release(&acc);
    hlog_reader_free(rd);
    fclose(f);
    fclose(devnull);
    unlink(a);
    unlink(b);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "gen") == 0)
        return gen(argc - 2, argv + 2);
    if (argc > 1) {
        fprintf(stderr, "usage: bench_hlog | bench_hlog gen OUT [--seed S] [--intervals N] [--start EPOCH_S] "
                        "[--tags a,b] [--digits D]\n");
        return 2;
    }
    return bench();
}
