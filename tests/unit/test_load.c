/* Unit tests for src/load: planned-time schedules (exact constant spacing, no drift, the
 * same global sequence for any number of threads, seeded Poisson, ramps), thresholds, and
 * the engine in-process against a tiny server thread: accounting, the request log, and no
 * allocation per request (allocations counted by interposing malloc; not under ASan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "load/run.h"
#include "plan/schedule.h"
#include "record/threshold.h"
#include "reqlog/reqlog.h"
#include "serve/serve.h"
#include "unit/fixture_server.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ malloc counting */

#if defined(__SANITIZE_ADDRESS__)
#define COUNT_ALLOCS 0
#else
#define COUNT_ALLOCS 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static atomic_ulong alloc_calls;
void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);
void free(void *p);
void *malloc(size_t n)
{
    atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t m)
{
    atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
    return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n)
{
    atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
    return __libc_realloc(p, n);
}
void free(void *p)
{
    __libc_free(p);
}
#endif

/* ------------------------------------------------------------------ schedules */

static void test_constant_exact(void **state)
{
    (void)state;
    struct sched s;
    uint64_t t0 = 5 * NS_PER_S;
    sched_init(&s, false, 1000, 1000, 0, t0, UINT64_MAX, UINT64_MAX, 1, 0, 1);
    for (uint64_t i = 0; i < 100000; i++) {
        uint64_t t;
        assert_true(sched_next(&s, &t));
        assert_int_equal(t, t0 + i * NS_PER_MS); /* from t0 every time: no drift */
    }
    /* a rate that is not a whole number of ns apart: still computed from t0 */
    sched_init(&s, false, 3, 3, 0, 0, UINT64_MAX, UINT64_MAX, 1, 0, 1);
    uint64_t t = 0;
    for (int i = 0; i <= 3000; i++)
        assert_true(sched_next(&s, &t));
    assert_int_equal(t, 1000 * NS_PER_S);
}

static void test_end_and_limit(void **state)
{
    (void)state;
    struct sched s;
    uint64_t t, n = 0;
    sched_init(&s, false, 100, 100, 0, 0, NS_PER_S, UINT64_MAX, 1, 0, 1);
    while (sched_next(&s, &t))
        n++;
    assert_int_equal(n, 100); /* [0, 1 s) at 100/s */
    n = 0;
    sched_init(&s, false, 100, 100, 0, 0, UINT64_MAX, 42, 1, 0, 1);
    while (sched_next(&s, &t))
        n++;
    assert_int_equal(n, 42);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* T threads together plan exactly the sequence one thread plans. */
static void interleave(bool poisson, double from, double to, double ramp_s)
{
    enum { N = 3000 };
    uint64_t one[N], many[N];
    struct sched s;
    sched_init(&s, poisson, from, to, ramp_s, 77, UINT64_MAX, N, 1, 0, 42);
    for (int i = 0; i < N; i++)
        assert_true(sched_next(&s, &one[i]));
    for (uint64_t T = 2; T <= 5; T++) {
        size_t k = 0;
        for (uint64_t th = 0; th < T; th++) {
            sched_init(&s, poisson, from, to, ramp_s, 77, UINT64_MAX, N, T, th, 42);
            uint64_t t;
            while (sched_next(&s, &t)) {
                assert_true(k < N);
                many[k++] = t;
            }
        }
        assert_int_equal(k, N);
        qsort(many, N, sizeof *many, cmp_u64);
        assert_memory_equal(one, many, sizeof one);
    }
}

static void test_interleaved_threads(void **state)
{
    (void)state;
    interleave(false, 1000, 1000, 0);
    interleave(true, 1000, 1000, 0);
    interleave(false, 100, 900, 10);
    interleave(true, 900, 100, 10);
}

static void test_poisson(void **state)
{
    (void)state;
    struct sched a, b;
    sched_init(&a, true, 2000, 2000, 0, 0, UINT64_MAX, UINT64_MAX, 1, 0, 9);
    sched_init(&b, true, 2000, 2000, 0, 0, UINT64_MAX, UINT64_MAX, 1, 0, 9);
    uint64_t ta = 0, tb = 0, prev = 0;
    const int n = 200000;
    double sumsq = 0;
    for (int i = 0; i < n; i++) {
        assert_true(sched_next(&a, &ta));
        assert_true(sched_next(&b, &tb));
        assert_int_equal(ta, tb);
        assert_true(ta >= prev);
        double gap = (double)(ta - prev) / 1e9;
        sumsq += gap * gap;
        prev = ta;
    }
    double mean = (double)ta / 1e9 / n;
    assert_true(fabs(mean - 1.0 / 2000) < 0.01 / 2000); /* 200k draws: well within 1% */
    /* exponential gaps: variance = mean², so E[gap²] = 2 mean² */
    double m2 = sumsq / n;
    assert_true(fabs(m2 / (2 * mean * mean) - 1) < 0.05);
    /* another seed, another plan */
    sched_init(&b, true, 2000, 2000, 0, 0, UINT64_MAX, UINT64_MAX, 1, 0, 10);
    sched_init(&a, true, 2000, 2000, 0, 0, UINT64_MAX, UINT64_MAX, 1, 0, 9);
    sched_next(&a, &ta);
    sched_next(&b, &tb);
    assert_true(ta != tb);
}

static void test_ramp(void **state)
{
    (void)state;
    struct sched s;
    uint64_t t, prev = 0, n = 0, first_s = 0, last_s = 0;
    sched_init(&s, false, 100, 300, 10, 0, 10 * NS_PER_S, UINT64_MAX, 1, 0, 1);
    while (sched_next(&s, &t)) {
        assert_true(t >= prev);
        prev = t;
        n++;
        if (t < NS_PER_S)
            first_s++;
        if (t >= 9 * NS_PER_S)
            last_s++;
    }
    assert_true(n >= 1999 && n <= 2001);           /* (100 + 300) / 2 × 10 s */
    assert_true(first_s >= 108 && first_s <= 112); /* ∫0..1 (100 + 20t) = 110 */
    assert_true(last_s >= 288 && last_s <= 292);   /* ∫9..10 = 290 */
    /* from zero */
    sched_init(&s, false, 0, 1000, 2, 0, 2 * NS_PER_S, UINT64_MAX, 1, 0, 1);
    n = 0;
    while (sched_next(&s, &t))
        n++;
    assert_true(n >= 999 && n <= 1001);
}

/* ------------------------------------------------------------------ thresholds */

static const struct plan_target TC[2] = {{.name = "A", .url = "http://127.0.0.1/"},
                                         {.name = "read.x", .url = "http://127.0.0.1/"}};

static void test_threshold_parse(void **state)
{
    (void)state;
    struct run_config cfg = {.plan.targets = TC, .plan.ntargets = 2};
    struct run_threshold t;
    char err[256];
    assert_int_equal(run_threshold_parse("p99<250ms", &cfg, &t, err, sizeof err), 0);
    assert_int_equal(t.kind, THR_STAT);
    assert_true(t.pct == 99 && t.value == 250 && t.op == THR_LT && t.target == -1);
    assert_int_equal(run_threshold_parse("A.p99.9<=1s", &cfg, &t, err, sizeof err), 0);
    assert_true(t.pct == 99.9 && t.value == 1000 && t.op == THR_LE && t.target == 0);
    assert_int_equal(run_threshold_parse("read.x.service.mean > 2", &cfg, &t, err, sizeof err), 0);
    assert_true(t.target == 1 && t.metric == THR_SERVICE && t.value == 2 && t.op == THR_GT);
    assert_int_equal(run_threshold_parse("error_rate<1%", &cfg, &t, err, sizeof err), 0);
    assert_true(t.kind == THR_ERROR_RATE && fabs(t.value - 0.01) < 1e-15);
    assert_int_equal(run_threshold_parse("goodput_rate>=99%", &cfg, &t, err, sizeof err), 0);
    assert_true(t.kind == THR_SHARE && t.outcome == OUTCOME_OK && t.op == THR_GE);
    assert_int_equal(run_threshold_parse("dropped==0", &cfg, &t, err, sizeof err), 0);
    assert_true(t.kind == THR_COUNT && t.outcome == OUTCOME_DROPPED && t.op == THR_EQ);
    assert_int_equal(run_threshold_parse("sent_per_s>=1k", &cfg, &t, err, sizeof err), 0);
    assert_true(t.kind == THR_PER_S && t.value == 1000);
    assert_int_equal(run_threshold_parse("lag.p99 < 1ms", &cfg, &t, err, sizeof err), 0);
    assert_true(t.metric == THR_LAG && t.value == 1);
    const char *bad[] = {"p99",   "p99<",         "<5",      "p99<abc",         "foo<1",        "latency.ok<1",
                         "p0x<1", "error_rate<2", "p101<1s", "planned_rate<1%", "dropped==1.5", "p99=<1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (run_threshold_parse(bad[i], &cfg, &t, err, sizeof err) == 0)
            fail_msg("accepted '%s'", bad[i]);
}

static void test_threshold_eval(void **state)
{
    (void)state;
    struct run_record res;
    memset(&res, 0, sizeof res);
    struct run_target_result tr[2];
    memset(tr, 0, sizeof tr);
    res.targets = tr;
    res.ntargets = 2;
    res.window_s = 10;
    struct hdr *h = &res.all.latency_all;
    assert_int_equal(hdr_init(h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    for (int i = 1; i <= 1000; i++)
        hdr_record(h, (int64_t)i * 1000000, 1); /* 1..1000 ms */
    res.all.counts.planned = 1000;
    res.all.counts.sent = 990;
    res.all.counts.dropped = 10;
    res.all.counts.outcome[OUTCOME_OK] = 980;
    res.all.counts.outcome[OUTCOME_TIMEOUT] = 10;
    res.all.counts.outcome[OUTCOME_DROPPED] = 10;
    res.all.rates.goodput = 98; /* rates come from events by time (record/rates.c) */
    struct run_config cfg = {.plan.targets = TC, .plan.ntargets = 2};
    struct {
        const char *expr;
        bool pass;
        double measured;
    } cases[] = {
        {"all.p99<=991ms", true, 990},  {"all.p99<990ms", false, 990},       {"all.max>=1000ms", true, 1000},
        {"dropped==0", false, 10},      {"error_rate<2%", true, 10.0 / 990}, {"goodput_rate>=99%", false, 0.98},
        {"goodput_per_s>90", true, 98}, {"all.count>=1000", true, 1000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct run_threshold t;
        char err[256];
        assert_int_equal(run_threshold_parse(cases[i].expr, &cfg, &t, err, sizeof err), 0);
        record_threshold_eval(&t, &res);
        if (t.pass != cases[i].pass || fabs(t.measured - cases[i].measured) > 1e-3 * fabs(cases[i].measured) + 1e-12)
            fail_msg("%s: pass %d measured %g", cases[i].expr, t.pass, t.measured);
    }
    /* a statistic without samples fails */
    struct run_threshold t;
    char err[256];
    assert_int_equal(run_threshold_parse("A.p50<1s", &cfg, &t, err, sizeof err), 0);
    record_threshold_eval(&t, &res);
    assert_false(t.pass);
    assert_true(isnan(t.measured));
    hdr_release(h);
}

/* ------------------------------------------------------------------ the engine in-process */

/* record_counts_hold: both identities, and dropped counted once as an outcome. */
static void test_counts_hold(void **state)
{
    (void)state;
    struct run_counts c;
    memset(&c, 0, sizeof c);
    assert_true(record_counts_hold(&c)); /* nothing planned, nothing missing */
    c.planned = 200;
    c.sent = 23;
    c.dropped = 177;
    c.outcome[OUTCOME_DROPPED] = 177;
    c.outcome[OUTCOME_OK] = 20;
    c.outcome[OUTCOME_REJECTED] = 3;
    assert_true(record_counts_hold(&c));
    c.outcome[OUTCOME_OK] = 19; /* one request unaccounted for */
    assert_false(record_counts_hold(&c));
    c.outcome[OUTCOME_OK] = 20;
    c.planned = 201; /* planned != sent + dropped */
    assert_false(record_counts_hold(&c));
    c.planned = 200;
    c.outcome[OUTCOME_DROPPED] = 176; /* dropped disagrees with its outcome count */
    assert_false(record_counts_hold(&c));
    c.outcome[OUTCOME_DROPPED] = 177;
    c.outcome[OUTCOME_CANCELLED] = 1; /* cancelled counts among the sent */
    assert_false(record_counts_hold(&c));
    c.sent = 24;
    c.planned = 201;
    assert_true(record_counts_hold(&c));
    /* transport = the sum of its causes; a request is retried at most once */
    c.outcome[OUTCOME_TRANSPORT] = 2;
    c.sent = 26;
    c.planned = 203;
    assert_false(record_counts_hold(&c));
    c.transport_cause[RUN_TC_REFUSED] = 1;
    c.transport_cause[RUN_TC_STALE] = 1;
    assert_true(record_counts_hold(&c));
    c.retries = 26;
    assert_true(record_counts_hold(&c));
    c.retries = 27;
    assert_false(record_counts_hold(&c));
}

static void check_identity(const struct run_counts *c)
{
    assert_true(record_counts_hold(c));
    uint64_t done = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            done += c->outcome[o];
    assert_int_equal(c->planned, c->sent + c->dropped);
    assert_int_equal(c->sent, done);
}

static void test_engine_closed_and_open(void **state)
{
    struct fixture_server *s = *state;
    struct plan_target tc = {.name = "t", .url = s->url};
    struct run_config cfg = fixture_run_config(&tc, 2);
    cfg.plan.connections = 3;
    cfg.plan.requests = 999;
    struct run_record res;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(res.all.counts.planned, 999);
    assert_int_equal(res.all.counts.outcome[OUTCOME_OK], 999);
    assert_int_equal(res.all.latency_all.total_count, 999);
    assert_int_equal(res.all.counts.bytes_in, 999 * 40);
    assert_int_equal(res.threads, 2);
    check_identity(&res.all.counts);
    record_release(&res);

    /* open loop with a request log */
    char path[] = "/tmp/knee_test_load_XXXXXX.csv";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    cfg.plan.connections = 0;
    cfg.plan.open_loop = true;
    cfg.plan.rate = 2000;
    cfg.plan.requests = 500;
    cfg.out_path = path;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(res.all.counts.planned, 500);
    assert_int_equal(res.all.counts.outcome[OUTCOME_OK] + res.all.counts.dropped, 500);
    assert_int_equal(res.all.lag.total_count, res.all.counts.sent);
    record_release(&res);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    int lines = 0;
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, REQLOG_CSV_HEADER "\n");
    while (fgets(line, sizeof line, f))
        lines++;
    fclose(f);
    unlink(path);
    assert_int_equal(lines, 500);
}

struct ival_seen {
    int calls;
    double last_start_s, last_len_s, total_len_s;
    double start_s[16]; /* the first 16 intervals' starts */
    int64_t count;
    bool ordered;
};

static void on_ival(void *ctx, size_t target, double start_s, double length_s, const struct hdr *lat)
{
    struct ival_seen *v = ctx;
    assert_int_equal(target, 0);
    if (v->calls && fabs(start_s - (v->last_start_s + v->last_len_s)) > 1e-6)
        v->ordered = false; /* each interval starts where the previous one ended */
    if (v->calls < 16)
        v->start_s[v->calls] = start_s;
    v->last_start_s = start_s;
    v->last_len_s = length_s;
    v->total_len_s += length_s;
    v->count += lat->total_count;
    v->calls++;
}

/* The per-second merge (what --hlog and the lab consume): one call per second per target,
 * in order, whose histograms add up to every completed request. The intervals are cut at every
 * whole second and at the window's edges (0.5 s, 2.5 s), up to the run's end: [0,0.5) [0.5,1)
 * [1,2) when the last response (planned at 2.4975 s) is in by 2.5 s, then [2,2.5+), else [2,2.5)
 * [2.5,3+) and so on. Which of them depends on the machine: under load the last response came
 * after 2.5 s in 3 of 4 runs (5 intervals, where the test expected 4 at most 2.5 ms of lag), so
 * the test derives the count from the run's own end (elapsed_s) and checks every start. */
static void test_intervals(void **state)
{
    struct fixture_server *s = *state;
    struct plan_target tc = {.name = "t", .url = s->url};
    struct ival_seen v = {.ordered = true};
    struct run_config cfg = fixture_run_config(&tc, 2);
    cfg.plan.open_loop = true;
    cfg.plan.rate = 400;
    cfg.plan.duration_ns = 2500 * NS_PER_MS;
    cfg.plan.warmup_ns = 500 * NS_PER_MS;
    cfg.on_interval = on_ival;
    cfg.interval_ctx = &v;
    struct run_record res;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(res.all.counts.planned + res.all.warmup_counts.planned, 1000);
    /* the run ends with its last response: after the last planned send, within the drain */
    printf("# the last response at %.4f s\n", res.elapsed_s);
    assert_true(res.elapsed_s > 2.4975 && res.elapsed_s < 2.5 + 5);
    const double edges[] = {0.5, 1, 2, 2.5, 3, 4, 5, 6, 7};
    int want = 1; /* one interval, and one more for every edge the run passed */
    for (size_t i = 0; i < sizeof edges / sizeof edges[0] && edges[i] < res.elapsed_s; i++) {
        assert_true(v.calls > want);
        assert_true(fabs(v.start_s[want] - edges[i]) < 1e-6); /* each interval starts at its edge */
        want++;
    }
    assert_int_equal(v.calls, want);
    assert_true(v.start_s[0] == 0);
    assert_true(v.ordered);
    assert_int_equal(v.count, 1000); /* intervals include the warm-up */
    assert_int_equal(res.nticks, (size_t)want);
    assert_true(fabs(v.total_len_s - res.elapsed_s) < 1e-3); /* the last interval ends with the run */
    record_release(&res);
}

/* ------------------------------------------------------------------ several runs per process */

/* Runs one after another in one process, sharing nothing but the stop handle: each has its
 * own exact accounting, and a handle that was never stopped leaves every run alone. */
static void test_runs_back_to_back(void **state)
{
    struct fixture_server *s = *state;
    struct plan_target tc = {.name = "t", .url = s->url};
    struct run_stop stop;
    run_stop_init(&stop);
    struct run_config cfg = fixture_run_config(&tc, 1);
    cfg.plan.connections = 2;
    cfg.plan.requests = 300;
    cfg.stop = &stop;
    for (int k = 0; k < 3; k++) {
        struct run_record res;
        cfg.plan.open_loop = k == 1;
        cfg.plan.rate = k == 1 ? 2000 : 0;
        cfg.plan.connections = k == 1 ? 0 : 2;
        run_once(&cfg, &res);
        assert_true(res.accounting_ok);
        assert_false(res.interrupted);
        assert_int_equal(res.all.counts.planned, 300);
        assert_int_equal(res.all.counts.outcome[OUTCOME_OK], 300);
        assert_int_equal(res.all.latency_all.total_count, 300);
        record_release(&res);
    }
    assert_int_equal(run_stop_level(&stop), 0);

    /* a handle stopped before the run: the run stops planning at once, and says so */
    run_stop_request(&stop, false);
    cfg.plan.open_loop = true;
    cfg.plan.rate = 100;
    cfg.plan.requests = 0;
    cfg.plan.duration_ns = 60 * NS_PER_S;
    struct run_record res;
    run_once(&cfg, &res);
    assert_true(res.interrupted);
    assert_true(res.accounting_ok);
    assert_true(res.all.counts.planned < 100 * 60);
    record_release(&res);
}

struct conc_run {
    struct run_config cfg;
    struct plan_target tc;
    struct run_stop stop;
    struct run_record res;
    atomic_int ticks;
    int rc;
    char err[256];
};

static void conc_progress(void *ctx, const struct run_progress *p)
{
    (void)p;
    struct conc_run *c = ctx;
    atomic_fetch_add(&c->ticks, 1);
}

static void *conc_main(void *arg)
{
    struct conc_run *c = arg;
    c->rc = run_execute(&c->cfg, &c->res, c->err, sizeof c->err);
    return NULL;
}

static void conc_init(struct conc_run *c, const char *name, const char *url, double rate, uint64_t duration_ns)
{
    memset(c, 0, sizeof *c);
    c->tc = (struct plan_target){.name = name, .url = url};
    run_stop_init(&c->stop);
    atomic_init(&c->ticks, 0);
    c->cfg = fixture_run_config(&c->tc, 1);
    c->cfg.plan.open_loop = true;
    c->cfg.plan.rate = rate;
    c->cfg.plan.duration_ns = duration_ns;
    c->cfg.on_progress = conc_progress;
    c->cfg.stop = &c->stop;
    c->cfg.progress_ctx = c;
}

/* Two runs at the same time in two threads: each keeps its own accounting, and a stop on one
 * handle ends that run only. While a run holds its handle, another run cannot take it. */
static void test_runs_concurrent(void **state)
{
    struct fixture_server *s = *state;
    const char *url = s->url;
    struct conc_run *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    conc_init(a, "a", url, 200, 60 * NS_PER_S); /* stopped early below */
    conc_init(b, "b", url, 250, 4 * NS_PER_S);  /* runs to its end: 1000 requests */
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, conc_main, a), 0);
    assert_int_equal(pthread_create(&tb, NULL, conc_main, b), 0);
    /* both runs are under way once each has reported a second */
    while (atomic_load(&a->ticks) < 1 || atomic_load(&b->ticks) < 1)
        usleep(10000);

    /* a's handle is taken: a third run using it is refused before it sends anything */
    struct run_config c3 = b->cfg;
    c3.stop = &a->stop;
    c3.on_progress = NULL;
    struct run_record r3;
    char err[256];
    assert_int_equal(run_execute(&c3, &r3, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "in use"));

    run_stop_request(&a->stop, false);
    pthread_join(ta, NULL);
    assert_int_equal(a->rc, 0);
    assert_true(a->res.interrupted);
    assert_true(a->res.accounting_ok);
    assert_true(a->res.all.counts.planned > 0);
    assert_true(a->res.all.counts.planned < 200 * 60);
    assert_int_equal(run_stop_level(&b->stop), 0);

    pthread_join(tb, NULL);
    if (b->rc)
        fail_msg("run b: %s", b->err);
    assert_false(b->res.interrupted);
    assert_true(b->res.accounting_ok);
    assert_int_equal(b->res.all.counts.planned, 1000);
    assert_int_equal(b->res.all.counts.outcome[OUTCOME_OK], 1000);
    assert_int_equal(b->res.all.latency_all.total_count, 1000);
    record_release(&a->res);
    record_release(&b->res);
    free(a);
    free(b);
}

/* ------------------------------------------------------------------ transport failures */

/* The closed loop opens no more connections than it has requests for. */
static void test_closed_loop_connections(void **state)
{
    struct fixture_server *s = *state;
    struct plan_target tc[2] = {{.name = "a", .url = s->url}, {.name = "b", .url = s->url}};
    struct run_config cfg = fixture_run_config(tc, 2);
    cfg.plan.requests = 5; /* and the default 8 connections */
    struct run_record res;
    run_once(&cfg, &res);
    assert_int_equal(res.all.counts.outcome[OUTCOME_OK], 5);
    assert_int_equal(res.all.counts.conns_opened, 5);
    assert_int_equal(res.targets[0].connections, 5);
    record_release(&res);
    /* two targets sharing 8 connections and 3 requests: 2 + 1 */
    cfg.plan.ntargets = 2;
    cfg.plan.requests = 3;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(res.all.counts.outcome[OUTCOME_OK], 3);
    assert_int_equal(res.all.counts.conns_opened, 3);
    assert_int_equal(res.targets[0].connections + res.targets[1].connections, 3);
    record_release(&res);
}

/* A port nobody listens on: every request fails in transport, cause refused. */
static void test_transport_refused(void **state)
{
    (void)state;
    char url[64];
    fixture_refused_url(url, sizeof url);
    struct plan_target tc = {.name = "t", .url = url};
    struct run_config cfg = fixture_run_config(&tc, 1);
    cfg.plan.connections = 2;
    cfg.plan.requests = 40;
    for (int open = 0; open < 2; open++) {
        cfg.plan.open_loop = open;
        cfg.plan.rate = open ? 2000 : 0;
        cfg.plan.connections = open ? 0 : 2;
        struct run_record res;
        run_once(&cfg, &res);
        assert_true(res.accounting_ok);
        assert_int_equal(res.all.counts.outcome[OUTCOME_TRANSPORT], 40);
        assert_int_equal(res.all.counts.transport_cause[RUN_TC_REFUSED], 40);
        record_release(&res);
    }
    assert_string_equal(record_transport_cause_name(RUN_TC_STALE), "stale");
    assert_string_equal(record_transport_cause_name(RUN_TC_CLOSED_BEFORE), "closed_before_response");
}

/* refused_end_ns: a run whose every request was refused ends there (planning stops, the rest
 * drains), says why instead of "interrupted", and the accounting holds; in both loops. */
static void test_refused_ends_early(void **state)
{
    (void)state;
    char url[64];
    fixture_refused_url(url, sizeof url);
    struct plan_target tc = {.name = "t", .url = url};
    struct run_config cfg = fixture_run_config(&tc, 1);
    cfg.plan.duration_ns = 20 * NS_PER_S;
    cfg.plan.requests = 0;
    cfg.refused_end_ns = NS_PER_S;
    for (int open = 0; open < 2; open++) {
        cfg.plan.open_loop = open;
        cfg.plan.rate = open ? 100 : 0;
        cfg.plan.connections = open ? 0 : 1;
        struct run_record res;
        run_once(&cfg, &res);
        assert_true(res.accounting_ok && res.no_ok && !res.interrupted && !res.generator_limited);
        assert_true(res.window_s < 10); /* not the 20 s planned */
        assert_true(res.all.counts.transport_cause[RUN_TC_REFUSED] > 0);
        bool said = false;
        for (size_t i = 0; i < res.warnings.n; i++)
            said |=
                strncmp(res.warnings.items[i], "stopped early after 1 s: connection refused by 127.0.0.1:", 57) == 0;
        assert_true(said);
        record_release(&res);
    }
}

/* A server that serves one request per connection without saying so: every reuse of a
 * connection goes stale. Without retry_stale those requests fail (cause stale); with it each
 * GET is sent once more on a new connection, counted in retries, and every request is ok; the
 * accounting identities hold either way. A POST is sent again only with retry_stale_all. */
static void test_retry_stale(void **state)
{
    struct fixture_server *s = *state; /* one request per connection */
    struct plan_target tc = {.name = "t", .url = s->url};
    struct run_config cfg = fixture_run_config(&tc, 1);
    cfg.plan.requests = 200;
    for (int open = 0; open < 2; open++) {
        cfg.plan.open_loop = open;
        cfg.plan.rate = open ? 1000 : 0;
        cfg.plan.connections = open ? 0 : 2;
        for (int retry = 0; retry < 2; retry++) {
            cfg.retry_stale = retry;
            struct run_record res;
            run_once(&cfg, &res);
            const struct run_counts *c = &res.all.counts;
            assert_true(res.accounting_ok);
            assert_int_equal(c->planned, 200);
            assert_int_equal(c->sent, 200);
            if (!retry) {
                assert_true(c->outcome[OUTCOME_TRANSPORT] > 0);
                assert_int_equal(c->transport_cause[RUN_TC_STALE], c->outcome[OUTCOME_TRANSPORT]);
                assert_int_equal(c->outcome[OUTCOME_OK] + c->outcome[OUTCOME_TRANSPORT], 200);
                assert_int_equal(c->retries, 0);
            } else {
                assert_int_equal(c->outcome[OUTCOME_OK], 200);
                assert_true(c->retries > 0 && c->retries <= 200);
                assert_int_equal(res.all.latency_all.total_count, 200);
            }
            print_message("%s loop, --retry-stale %s: ok %llu, stale %llu, retries %llu\n", open ? "open" : "closed",
                          retry ? "on" : "off", (unsigned long long)c->outcome[OUTCOME_OK],
                          (unsigned long long)c->transport_cause[RUN_TC_STALE], (unsigned long long)c->retries);
            record_release(&res);
        }
    }
    /* POST is not idempotent: not sent again unless every method is (retry_stale_all) */
    tc.method = "POST";
    cfg.plan.open_loop = false;
    cfg.plan.rate = 0;
    cfg.plan.connections = 2;
    for (int all = 0; all < 2; all++) {
        cfg.retry_stale = true;
        cfg.retry_stale_all = all;
        struct run_record res;
        run_once(&cfg, &res);
        const struct run_counts *c = &res.all.counts;
        assert_true(res.accounting_ok);
        assert_true(res.config.retry_stale_all == (bool)all);
        if (!all) {
            assert_true(c->transport_cause[RUN_TC_STALE] > 0);
            assert_int_equal(c->retries, 0);
        } else {
            assert_int_equal(c->outcome[OUTCOME_OK], 200);
            assert_true(c->retries > 0);
        }
        record_release(&res);
    }
}

/* --io: the closed loop gives the same counts and outcomes on epoll and on io_uring (a
 * keep-alive server, and one that serves one request per connection: stale reuses); the result
 * names the engine that ran; auto takes io_uring where it applies and epoll in the open loop;
 * an explicit uring where it does not apply is refused. Without io_uring here (a container's
 * seccomp) only epoll and the refusals are checked. */
static void test_io_engines(void **state)
{
    struct plan_target tc = {.name = "t", .url = NULL};
    struct run_config cfg = fixture_run_config(&tc, 1);
    cfg.plan.connections = 3;
    cfg.plan.requests = 300;
    char err[256], url[64]; /* the URL outlives the servers: the checks below validate it */
    for (int mode = 0; mode < 2; mode++) {
        /* in *state while it runs: the teardown stops it if an assertion fails */
        struct fixture_server *s = fixture_server_new(mode ? FIXTURE_SERVER_ONE_SHOT : FIXTURE_SERVER_OK);
        assert_non_null(s);
        *state = s;
        snprintf(url, sizeof url, "%s", s->url);
        tc.url = url;
        uint64_t ok[2] = {0, 0};
        for (int io = RUN_IO_EPOLL; io <= RUN_IO_URING; io++) {
            cfg.io = (enum run_io)io;
            cfg.requests_per_connection = mode ? 0 : 7;
            struct run_record res;
            int r = run_execute(&cfg, &res, err, sizeof err);
            if (r && io == RUN_IO_URING && strstr(err, "cannot set up an io_uring")) {
                print_message("io_uring unavailable here: %s\n", err);
                break;
            }
            assert_int_equal(r, 0);
            const struct run_counts *c = &res.all.counts;
            assert_int_equal(res.io, io);
            assert_true(res.accounting_ok);
            check_identity(c);
            assert_int_equal(c->sent, 300);
            if (mode) {
                assert_int_equal(c->outcome[OUTCOME_OK] + c->outcome[OUTCOME_TRANSPORT], 300);
                assert_int_equal(c->transport_cause[RUN_TC_STALE], c->outcome[OUTCOME_TRANSPORT]);
            } else {
                assert_int_equal(c->outcome[OUTCOME_OK], 300);
                assert_true(c->conns_opened >= 300 / 7);
            }
            ok[io - RUN_IO_EPOLL] = c->outcome[OUTCOME_OK];
            record_release(&res);
        }
        print_message("%s: ok epoll %llu, uring %llu\n", mode ? "one request per connection" : "keep-alive",
                      (unsigned long long)ok[0], (unsigned long long)ok[1]);
        fixture_server_free(s);
        *state = NULL;
    }
    assert_string_equal(record_io_name(RUN_IO_URING), "uring");
    assert_string_equal(record_io_name(RUN_IO_EPOLL), "epoll");
    assert_string_equal(record_io_name(RUN_IO_AUTO), "auto");
    cfg.io = RUN_IO_URING;
    cfg.requests_per_connection = 0;
    cfg.plan.open_loop = true;
    cfg.plan.rate = 100;
    cfg.plan.connections = 0;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--io uring"));
    cfg.plan.open_loop = false;
    cfg.plan.rate = 0;
    cfg.plan.connections = 3;
    cfg.h2c = true;
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--io uring"));
    cfg.h2c = false;
    tc.url = "https://127.0.0.1:1/";
    assert_int_equal(run_validate(&cfg, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "https"));
}

/* ------------------------------------------------------------------ HTTP/2 and TLS */

/* A knee serve (in-process) for the HTTP/2 tests: `preset`, HTTP/2 (h2c in cleartext, ALPN h2
 * over TLS unless h1_only) and TLS as asked; the URL of `path` in url. */
static struct serve_handle *h2_server(const char *preset, bool tls, bool h1_only, const char *path, char *url,
                                      size_t len)
{
    struct serve_config sc;
    assert_int_equal(serve_preset(preset, &sc), 0);
    sc.tls = tls;
    sc.h2 = !h1_only;
    struct serve_handle *h;
    assert_int_equal(serve_start(&sc, &h), 0);
    snprintf(url, len, "%s://127.0.0.1:%d%s", tls ? "https" : "http", serve_port(h), path);
    return h;
}

static struct run_config h2_config(struct plan_target *tc, bool open_loop)
{
    struct run_config cfg = fixture_run_config(tc, 1);
    cfg.plan.open_loop = open_loop;
    if (tc->url[4] == ':')
        cfg.h2c = true; /* http:// */
    else
        cfg.tls_insecure = true; /* the server's certificate is self-signed */
    return cfg;
}

/* HTTP/2 streams: --connections x --streams clients share the connections (closed loop), the
 * open loop's requests ride the free streams of a capped pool, every stream is one request
 * with one outcome, and the session's counters add up. */
static void test_h2_streams(void **state)
{
    (void)state;
    char url[128];
    struct serve_handle *h = h2_server("null", false, false, "/", url, sizeof url);
    struct plan_target tc = {.name = "t", .url = url};
    struct run_config cfg = h2_config(&tc, false);
    cfg.plan.connections = 2;
    cfg.streams = 8;
    cfg.plan.requests = 3000;
    struct run_record res;
    run_once(&cfg, &res);
    const struct run_counts *c = &res.all.counts;
    assert_true(res.accounting_ok);
    assert_int_equal(res.targets[0].connections, 16); /* clients */
    assert_int_equal(c->outcome[OUTCOME_OK], 3000);
    assert_int_equal(c->conns_opened, 2);
    assert_int_equal(res.all.pc.h2, 2);
    assert_int_equal(res.all.pc.http1, 0);
    assert_int_equal(res.all.pc.h2_streams, 3000);
    assert_int_equal(res.all.pc.h2_max_concurrent, 128); /* knee serve's SETTINGS */
    assert_int_equal(res.all.connect.total_count, 2);
    assert_int_equal(res.all.tls.total_count, 0);
    record_release(&res);

    /* open loop, a pool of 2 connections with 4 streams each: never more than 8 at once */
    cfg = h2_config(&tc, true);
    cfg.plan.rate = 4000;
    cfg.plan.requests = 2000;
    cfg.plan.connections = 2;
    cfg.streams = 4;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(c->planned, 2000);
    assert_int_equal(c->outcome[OUTCOME_OK] + c->dropped, 2000);
    assert_true(c->conns_opened <= 2);
    assert_int_equal(res.all.pc.h2_streams, c->sent);
    print_message("h2 open loop: %llu ok on %llu connections, %llu waited for a stream\n",
                  (unsigned long long)c->outcome[OUTCOME_OK], (unsigned long long)c->conns_opened,
                  (unsigned long long)c->queued);
    record_release(&res);
    serve_stop(h, NULL);
}

/* An HTTP/2 request that outlives --timeout is reset (RST_STREAM) and counted as a timeout;
 * its connection carries on: one connection for every request. At the end of the drain a
 * stream still open is cancelled the same way. */
static void test_h2_stream_timeouts(void **state)
{
    (void)state;
    char url[128];
    struct serve_handle *h = h2_server("quiet", false, false, "/work?ms=400", url, sizeof url);
    struct plan_target tc = {.name = "t", .url = url};
    struct run_config cfg = h2_config(&tc, false);
    cfg.plan.connections = 1;
    cfg.streams = 4;
    cfg.plan.requests = 12;
    cfg.timeout_ns = 50 * NS_PER_MS;
    cfg.drain_ns = cfg.timeout_ns;
    struct run_record res;
    run_once(&cfg, &res);
    const struct run_counts *c = &res.all.counts;
    assert_true(res.accounting_ok);
    assert_int_equal(c->outcome[OUTCOME_TIMEOUT], 12);
    assert_int_equal(c->conns_opened, 1); /* the streams were reset, the connection lived on */
    assert_int_equal(res.all.pc.h2_streams, 12);
    record_release(&res);

    /* the drain ends with 4 streams open: each is cancelled, the run ends on time */
    cfg.plan.requests = 0;
    cfg.plan.duration_ns = 100 * NS_PER_MS;
    cfg.timeout_ns = 5 * NS_PER_S;
    cfg.drain_ns = 50 * NS_PER_MS;
    uint64_t t0 = clock_now_ns();
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(c->outcome[OUTCOME_CANCELLED], 4);
    assert_int_equal(c->sent, 4);
    assert_true(clock_now_ns() - t0 < 2 * NS_PER_S);
    record_release(&res);
    serve_stop(h, NULL);
}

/* --when-busy drop over HTTP/2: a request is dropped only when every stream of every
 * connection of the pool is busy. One connection, 2 streams, each request 200 ms: at 40/s
 * for 0.5 s about 4 go out, the rest are dropped; the accounting holds. */
static void test_h2_when_busy_drop(void **state)
{
    (void)state;
    char url[128];
    struct serve_handle *h = h2_server("quiet", false, false, "/work?ms=200", url, sizeof url);
    struct plan_target tc = {.name = "t", .url = url};
    struct run_config cfg = h2_config(&tc, true);
    cfg.plan.rate = 40;
    cfg.plan.duration_ns = 500 * NS_PER_MS;
    cfg.plan.connections = 1;
    cfg.streams = 2;
    cfg.when_busy = RUN_BUSY_DROP;
    struct run_record res;
    run_once(&cfg, &res);
    const struct run_counts *c = &res.all.counts;
    assert_true(res.accounting_ok);
    assert_int_equal(c->planned, 20);
    assert_int_equal(c->conns_opened, 1);
    assert_true(c->dropped > 0);
    assert_true(c->sent >= 2 && c->sent <= 8); /* 2 at once, 200 ms each, over 0.5 s */
    assert_int_equal(c->outcome[OUTCOME_OK], c->sent);
    print_message("h2 --when-busy drop: %llu sent, %llu dropped\n", (unsigned long long)c->sent,
                  (unsigned long long)c->dropped);
    record_release(&res);
    serve_stop(h, NULL);
}

static int read_log(const char *path, struct reqlog_record *out, size_t cap, size_t *n)
{
    struct reqlog_reader *rd;
    if (reqlog_reader_open(&rd, path, NULL, 0))
        return -1;
    *n = 0;
    int k;
    while (*n < cap && (k = reqlog_read(rd, &out[*n])) == 1)
        (*n)++;
    reqlog_reader_close(rd);
    return 0;
}

/* Over TLS: the tls phase per new connection (histogram, handshakes, versions), ALPN's choice
 * (h2, or http/1.1 with RUN_HTTP_1), and in the request log the handshake and the connect on
 * the first request of each connection, protocol and TLS kind on every one. With
 * requests_per_connection the connections churn and resume their sessions. */
static void test_tls_phase_and_log(void **state)
{
    (void)state;
    char url[128];
    struct serve_handle *h = h2_server("null", true, false, "/", url, sizeof url);
    struct plan_target tc = {.name = "t", .url = url};
    char path[] = "/tmp/knee_test_load_XXXXXX.bin";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    static struct reqlog_record rec[400];
    for (int http1 = 0; http1 < 2; http1++) {
        struct run_config cfg = h2_config(&tc, false);
        cfg.plan.connections = 1; /* one client: its 400 requests on exactly 8 connections */
        cfg.plan.requests = 400;
        cfg.requests_per_connection = 50;
        cfg.http = http1 ? RUN_HTTP_1 : RUN_HTTP_AUTO;
        cfg.out_path = path;
        struct run_record res;
        run_once(&cfg, &res);
        const struct run_proto_counts *pc = &res.all.pc;
        assert_true(res.accounting_ok);
        assert_int_equal(res.all.counts.outcome[OUTCOME_OK], 400);
        assert_int_equal(res.all.counts.conns_opened, 8); /* 400 / 50 */
        assert_int_equal(http1 ? pc->http1 : pc->h2, 8);
        assert_int_equal(pc->tls_version[RUN_TLS_V13], 8);
        assert_int_equal(pc->tls_full + pc->tls_resumed, 8);
        assert_true(pc->tls_resumed >= 4); /* the later connections offer the first ones' tickets */
        assert_int_equal(res.all.tls.total_count, 8);
        assert_true(res.all.https);
        record_release(&res);
        size_t n = 0;
        assert_int_equal(read_log(path, rec, 400, &n), 0);
        assert_int_equal(n, 400);
        size_t with_tls = 0, resumed = 0;
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(rec[i].protocol, http1 ? REQLOG_PROTO_HTTP1 : REQLOG_PROTO_H2);
            assert_true(rec[i].tls == REQLOG_TLS_FULL || rec[i].tls == REQLOG_TLS_RESUMED);
            resumed += rec[i].tls == REQLOG_TLS_RESUMED;
            if (rec[i].tls_ns) {
                with_tls++;
                assert_true(rec[i].connect_ns > 0);
                /* inside its latency when the connection was opened for it: every connection
                 * after the first (opened before t0, its handshake began before the first send) */
                if (i > 0)
                    assert_true(rec[i].tls_ns < rec[i].done_ns - rec[i].sent_ns);
            }
        }
        /* the first request of each connection opened for one (2..8); the first connection,
         * opened before t0, gives its handshake to the first request only when it was still
         * handshaking at t0 */
        assert_true(with_tls >= 7 && with_tls <= 8);
        assert_true(resumed >= 4 * 50);
    }
    unlink(path);
    serve_stop(h, NULL);
}

/* --streams in a closed loop when the server turns out to speak HTTP/1.1 (ALPN): the clients
 * of a connection take turns on it (they wait before planning), and every request is ok. */
static void test_h2_clients_wait_on_http1(void **state)
{
    (void)state;
    char url[128];
    struct serve_handle *h = h2_server("null", true, true, "/", url, sizeof url);
    struct plan_target tc = {.name = "t", .url = url};
    struct run_config cfg = h2_config(&tc, false);
    cfg.plan.connections = 2;
    cfg.streams = 4;
    cfg.plan.requests = 800;
    struct run_record res;
    run_once(&cfg, &res);
    assert_true(res.accounting_ok);
    assert_int_equal(res.all.counts.outcome[OUTCOME_OK], 800);
    assert_int_equal(res.all.counts.conns_opened, 2);
    assert_int_equal(res.all.pc.http1, 2);
    assert_int_equal(res.all.pc.h2, 0);
    record_release(&res);
    serve_stop(h, NULL);
}

/* The request path allocates nothing: ten times the requests, (almost) the same allocations. */
static void test_no_allocation_per_request(void **state)
{
#if COUNT_ALLOCS
    struct fixture_server *s = *state;
    struct plan_target tc = {.name = "t", .url = s->url};
    struct run_config cfg = fixture_run_config(&tc, 1);
    cfg.plan.connections = 2;
    struct run_record res;
    unsigned long counts[2];
    uint64_t n[2] = {2000, 20000};
    for (int k = 0; k < 2; k++) {
        cfg.plan.requests = n[k];
        unsigned long before = atomic_load(&alloc_calls);
        run_once(&cfg, &res);
        counts[k] = atomic_load(&alloc_calls) - before;
        assert_int_equal(res.all.counts.outcome[OUTCOME_OK], n[k]);
        record_release(&res);
    }
    print_message("closed loop: %lu allocations for %llu requests, %lu for %llu\n", counts[0], (unsigned long long)n[0],
                  counts[1], (unsigned long long)n[1]);
    assert_true(counts[1] < counts[0] + 64);
    cfg.plan.open_loop = true;
    cfg.plan.rate = 5000;
    cfg.plan.connections = 0;
    uint64_t m[2] = {500, 5000};
    for (int k = 0; k < 2; k++) {
        cfg.plan.requests = m[k];
        unsigned long before = atomic_load(&alloc_calls);
        run_once(&cfg, &res);
        counts[k] = atomic_load(&alloc_calls) - before;
        print_message("open loop: %llu requests on %llu connections (%llu waited for one)\n",
                      (unsigned long long)res.all.counts.sent, (unsigned long long)res.all.counts.conns_opened,
                      (unsigned long long)res.all.counts.queued);
        /* every planned request was sent and answered: the counts below are of a real run */
        assert_true(res.accounting_ok);
        assert_int_equal(res.all.counts.planned, m[k]);
        assert_int_equal(res.all.counts.outcome[OUTCOME_OK], m[k]);
        record_release(&res);
    }
    print_message("open loop: %lu allocations for %llu requests, %lu for %llu\n", counts[0], (unsigned long long)m[0],
                  counts[1], (unsigned long long)m[1]);
    /* the pool may grow by a chunk or the queue by a step more in the longer run */
    assert_true(counts[1] < counts[0] + 64);
#else
    (void)state;
    print_message("skipped: AddressSanitizer owns malloc, so allocations cannot be counted here\n");
    skip();
#endif
}

/* record_counts_add adds every counter of RUN_COUNTS_FIELDS, named fields and arrays alike. */
static void test_counts_add(void **state)
{
    (void)state;
    struct run_counts d, s;
    memset(&d, 0, sizeof d);
    memset(&s, 0, sizeof s);
    uint64_t k = 0;
#define SET_S(name) s.name = ++k;
#define SET_A(name, n)                                                                                                 \
    for (size_t i = 0; i < (n); i++)                                                                                   \
        s.name[i] = ++k;
    RUN_COUNTS_FIELDS(SET_S, SET_A)
#undef SET_S
#undef SET_A
    assert_int_equal(k * sizeof(uint64_t), sizeof s); /* every byte is a counter */
    record_counts_add(&d, &s);
    record_counts_add(&d, &s);
    k = 0;
#define CHECK_S(name) assert_int_equal(d.name, 2 * ++k);
#define CHECK_A(name, n)                                                                                               \
    for (size_t i = 0; i < (n); i++)                                                                                   \
        assert_int_equal(d.name[i], 2 * ++k);
    RUN_COUNTS_FIELDS(CHECK_S, CHECK_A)
#undef CHECK_S
#undef CHECK_A
    assert_int_equal(d.planned, 2);
    assert_int_equal(d.retries, 2 * k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_add),
        cmocka_unit_test(test_constant_exact),
        cmocka_unit_test(test_end_and_limit),
        cmocka_unit_test(test_interleaved_threads),
        cmocka_unit_test(test_poisson),
        cmocka_unit_test(test_ramp),
        cmocka_unit_test(test_threshold_parse),
        cmocka_unit_test(test_threshold_eval),
        cmocka_unit_test(test_counts_hold),
        fixture_server_test(test_engine_closed_and_open),
        fixture_server_test(test_intervals),
        fixture_server_test(test_runs_back_to_back),
        fixture_server_test(test_runs_concurrent),
        fixture_server_test(test_closed_loop_connections),
        cmocka_unit_test(test_transport_refused),
        cmocka_unit_test(test_refused_ends_early),
        cmocka_unit_test_setup_teardown(test_retry_stale, fixture_server_setup_one_shot, fixture_server_teardown),
        cmocka_unit_test(test_h2_streams),
        cmocka_unit_test(test_h2_stream_timeouts),
        cmocka_unit_test(test_h2_when_busy_drop),
        cmocka_unit_test(test_tls_phase_and_log),
        cmocka_unit_test(test_h2_clients_wait_on_http1),
        fixture_server_test(test_no_allocation_per_request),
        cmocka_unit_test_teardown(test_io_engines, fixture_server_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
