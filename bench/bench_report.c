/* knee report at scale. Two uses:
 *   bench_report                  ingest 2,000,000 synthetic requests into the report model
 *                                 and write the HTML to /dev/null; prints the time of each
 *   bench_report gen N FILE [R]   write a synthetic binary request log of N requests at R/s
 *                                 (default 10,000/s) with the shape of the statistics lab's
 *                                 server A: ~2 ms of work, 10% cache misses at 40 ms, a stall
 *                                 of 250 ms every 4 s, a few rejections, timeouts and drops
 * bench/report_load.sh uses the second form for the 1M/10M load times in docs/BENCHMARKS.md;
 * tests/e2e/report_browser.sh for its million-request page. Seeded: the same file every time. */
#include "core/clock.h"
#include "core/rng.h"
#include "html/html.h"
#include "reqlog/reqlog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Request i of a run at rate_per_s: its log record. */
static void synth(struct rng *r, uint64_t i, double rate_per_s, struct reqlog_record *rec)
{
    memset(rec, 0, sizeof *rec);
    uint64_t planned = (uint64_t)llround((double)i * 1e9 / rate_per_s);
    rec->planned_ns = planned;
    rec->target = (uint32_t)(i % 4 == 3); /* "api" 3/4, "web" 1/4 */
    rec->connection = (uint32_t)(i % 64);
    if (rng_bernoulli(r, 0.0005)) {
        rec->outcome = OUTCOME_DROPPED;
        return;
    }
    uint64_t lag = 20000 + rng_below(r, 60000);
    rec->sent_ns = planned + lag;
    double work_ms = rng_bernoulli(r, 0.1) ? 40 + rng_exp(r, 1) : 2 + rng_exp(r, 0.3);
    /* the report job: every 4 s the lock is held for 250 ms; a request arriving then waits */
    uint64_t period = 4000000000ULL, hold = 250000000ULL;
    uint64_t phase = (planned + period - 1000000000ULL) % period;
    uint64_t wait = phase < hold ? hold - phase : 0;
    uint64_t service = wait + (uint64_t)llround(work_ms * 1e6);
    rec->first_byte_ns = rec->sent_ns + service - 30000;
    rec->done_ns = rec->sent_ns + service;
    rec->status = 200;
    rec->bytes = 41;
    if (rng_bernoulli(r, 0.002)) {
        rec->outcome = OUTCOME_REJECTED;
        rec->status = 503;
    } else if (rng_bernoulli(r, 0.0002)) {
        rec->outcome = OUTCOME_TIMEOUT;
        rec->status = 0;
        rec->first_byte_ns = 0;
        rec->done_ns = rec->sent_ns + 10000000000ULL;
    } else {
        rec->outcome = OUTCOME_OK;
    }
    if (planned < 1000000000ULL)
        rec->flags = REQLOG_FLAG_WARMUP;
}

static int gen(uint64_t n, const char *path, double rate)
{
    const char *names[] = {"api", "web"};
    struct reqlog_writer *w;
    if (reqlog_writer_open(&w, path, names, 2, 0) != 0) {
        fprintf(stderr, "bench_report: cannot write %s\n", path);
        return 1;
    }
    struct rng r;
    rng_seed(&r, 42);
    for (uint64_t i = 0; i < n; i++) {
        struct reqlog_record rec;
        synth(&r, i, rate, &rec);
        if (reqlog_write(w, &rec) != 0)
            break;
    }
    if (reqlog_writer_close(w) != 0) {
        fprintf(stderr, "bench_report: write error on %s\n", path);
        return 1;
    }
    return 0;
}

static int inprocess(void)
{
    const uint64_t n = 2000000;
    struct html_report *rep = html_report_new();
    struct html_run *run = html_report_add_run(rep, "bench");
    const char *names[] = {"api", "web"};
    html_run_begin_requests(run, names, 2, false);
    struct rng r;
    rng_seed(&r, 42);
    uint64_t t0 = clock_now_ns();
    for (uint64_t i = 0; i < n; i++) {
        struct reqlog_record rec;
        struct html_request rq;
        synth(&r, i, 10000, &rec);
        html_request_from_reqlog(&rec, &rq);
        html_run_add_request(run, &rq);
    }
    uint64_t t1 = clock_now_ns();
    FILE *f = fopen("/dev/null", "w");
    char err[256];
    int rc = f ? html_report_write(rep, f, err, sizeof err) : 1;
    if (f)
        fclose(f);
    uint64_t t2 = clock_now_ns();
    printf("report model: %llu requests in %.3f s (%.0f ns/request, synthesis included); HTML written in %.3f s\n",
           (unsigned long long)n, (double)(t1 - t0) / 1e9, (double)(t1 - t0) / (double)n, (double)(t2 - t1) / 1e9);
    html_report_free(rep);
    return rc != 0;
}

int main(int argc, char **argv)
{
    if (argc == 1)
        return inprocess();
    if (argc >= 4 && strcmp(argv[1], "gen") == 0) {
        char *end;
        unsigned long long n = strtoull(argv[2], &end, 10);
        double rate = argc > 4 ? strtod(argv[4], NULL) : 10000;
        if (*end || !n || !(rate > 0)) {
            fprintf(stderr, "bench_report gen N FILE [RATE]: N and RATE must be positive numbers\n");
            return 2;
        }
        return gen(n, argv[3], rate);
    }
    fprintf(stderr, "usage: bench_report | bench_report gen N FILE [RATE]\n");
    return 2;
}
