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

/* The benchmark state shared by the timed steps. */
struct bench {
    struct hdr h, d;
    bool d_ready;
    struct hlog_codec *c;
    char *text;
    size_t text_len;
    const char *one[1], *two[2];
    FILE *devnull;
    const char *log_a;
};

static int step_encode_plain(struct bench *b)
{
    const uint8_t *bin;
    size_t n;
    return hlog_encode(b->c, &b->h, false, &bin, &n);
}

static int step_encode_b64(struct bench *b)
{
    const char *t;
    size_t n;
    return hlog_encode_base64(b->c, &b->h, &t, &n);
}

static int step_decode(struct bench *b)
{
    return hlog_decode_base64_reuse(b->c, b->text, b->text_len, &b->d, &b->d_ready, NULL, 0);
}

static int step_merge1(struct bench *b)
{
    char err[512];
    return hlog_merge(b->devnull, b->one, 1, 1.0, err, sizeof err);
}

static int step_merge2(struct bench *b)
{
    char err[512];
    return hlog_merge(b->devnull, b->two, 2, 1.0, err, sizeof err);
}

static int step_sum(struct bench *b)
{
    FILE *f = fopen(b->log_a, "r");
    struct hlog_reader *rd = hlog_reader_new(f, b->log_a);
    struct hlog_entry e;
    struct hlog_acc acc;
    hlog_acc_init(&acc);
    int rc = 0;
    while (!rc && hlog_reader_next(rd, &e) == 1)
        if (!(rc = hlog_reader_decode_reuse(rd, &e, &b->d, &b->d_ready)))
            rc = hlog_acc_add(&acc, &b->d, NULL, 0);
    hlog_acc_release(&acc);
    hlog_reader_free(rd);
    fclose(f);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Run step reps times per round, `rounds` rounds; print the best and median per-call cost. */
static int timed(struct bench *b, const char *label, int (*step)(struct bench *), long reps, double unit_ns,
                 const char *unit)
{
    enum { ROUNDS = 5 };
    double t[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
        uint64_t t0 = clock_now_ns();
        for (long i = 0; i < reps; i++)
            if (step(b) != 0) {
                fprintf(stderr, "bench_hlog: %s failed\n", label);
                return 1;
            }
        t[k] = (double)(clock_now_ns() - t0) / (double)reps / unit_ns;
    }
    qsort(t, ROUNDS, sizeof t[0], cmp_double);
    printf("%-40s best %9.1f  median %9.1f %s\n", label, t[0], t[ROUNDS / 2], unit);
    return 0;
}

static int bench(void)
{
    struct bench b = {0};
    struct rng r;
    rng_seed(&r, 7);
    hdr_init(&b.h, 1, HOUR_NS, 3);
    fill(&b.h, &r, 100000);
    b.c = hlog_codec_new();
    const uint8_t *bin;
    size_t raw, n;
    hlog_encode(b.c, &b.h, false, &bin, &raw);
    hlog_encode(b.c, &b.h, true, &bin, &n);
    const char *text;
    hlog_encode_base64(b.c, &b.h, &text, &b.text_len);
    b.text = xstrdup(text);
    printf("histogram: 3 digits, 1 ns..1 h (%zu counts), 100000 values; V2 %zu bytes, compressed %zu bytes\n"
           "5 rounds each; best and median of the rounds\n",
           b.h.counts_len, raw, n);
    int rc = timed(&b, "encode V2 (uncompressed)", step_encode_plain, 500, 1e3, "us/histogram");
    rc = rc || timed(&b, "encode V2 compressed + base64", step_encode_b64, 500, 1e3, "us/histogram");
    rc = rc || timed(&b, "decode base64 + V2 compressed", step_decode, 500, 1e3, "us/histogram");

    /* merging 1,000 one-second intervals: two "machines", 1,000 intervals each, 0.25 s apart */
    char a[] = "/tmp/bench_hlog_aXXXXXX", bb[] = "/tmp/bench_hlog_bXXXXXX";
    int fa = mkstemp(a), fb = mkstemp(bb);
    if (fa < 0 || fb < 0)
        return 1;
    close(fa);
    close(fb);
    char *ga[] = {a, "--seed", "1", "--intervals", "1000", "--start", "1700000000"};
    char *gb[] = {bb, "--seed", "2", "--intervals", "1000", "--start", "1700000000.25"};
    if (gen(7, ga) || gen(7, gb))
        return 1;
    b.one[0] = a;
    b.two[0] = a;
    b.two[1] = bb;
    b.log_a = a;
    b.devnull = fopen("/dev/null", "w");
    rc = rc || timed(&b, "merge 1 log x 1000 intervals", step_merge1, 1, 1e6, "ms");
    rc = rc || timed(&b, "merge 2 logs x 1000 intervals (-> 1000)", step_merge2, 1, 1e6, "ms");
    rc = rc || timed(&b, "read + sum 1000 intervals (show/stats)", step_sum, 1, 1e6, "ms");
    fclose(b.devnull);
    unlink(a);
    unlink(bb);
    if (b.d_ready)
        hdr_release(&b.d);
    hdr_release(&b.h);
    hlog_codec_free(b.c);
    free(b.text);
    return rc;
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
