/* Unit tests for src/plan/shard and src/load/shard_hooks: the union of N shard schedules is the one-process schedule,
 * request for request (constant, Poisson, ramps, --requests limits; any threads per shard),
 * the shares of connections and requests add up, the dry-run plan of the shards adds up to
 * the whole plan, the engine itself run as N shards (mixes, Poisson, --requests; against an
 * in-process knee serve) logs exactly the planned times one process logs, the plan id, and
 * the shared start instant (on time and late); the engine's bounds with shards (the rate per
 * load thread, the closed loop's connections capped by --requests). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "load/run.h"
#include "load/shard_hooks.h"
#include "plan/schedule.h"
#include "reqlog/reqlog.h"
#include "serve/serve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define assert_close(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (double)(tol))

/* ------------------------------------------------------------------ shares */

static void test_share(void **state)
{
    (void)state;
    uint64_t totals[] = {0, 1, 2, 7, 8, 9, 1000, 1001, 123456789};
    uint32_t counts[] = {1, 2, 3, 4, 7, 8, 100};
    for (size_t a = 0; a < sizeof totals / sizeof *totals; a++)
        for (size_t b = 0; b < sizeof counts / sizeof *counts; b++) {
            uint64_t sum = 0, sum_by = 0;
            uint64_t conns = totals[a] % 50 + counts[b]; /* every shard has one */
            for (uint32_t i = 0; i < counts[b]; i++) {
                uint64_t s = plan_shard_share(totals[a], i, counts[b]);
                assert_true(s == totals[a] / counts[b] || s == totals[a] / counts[b] + 1);
                sum += s;
                uint64_t by = plan_shard_share_by(totals[a], conns, i, counts[b]);
                /* within one of the proportional part */
                double exact = (double)totals[a] * (double)plan_shard_share(conns, i, counts[b]) / (double)conns;
                assert_true(fabs((double)by - exact) < 1.0 + 1e-9 * exact);
                sum_by += by;
            }
            assert_int_equal(sum, totals[a]);
            assert_int_equal(sum_by, totals[a]);
        }
    /* the first total mod N shards take the remainder */
    assert_int_equal(plan_shard_share(10, 0, 4), 3);
    assert_int_equal(plan_shard_share(10, 1, 4), 3);
    assert_int_equal(plan_shard_share(10, 2, 4), 2);
    assert_int_equal(plan_shard_share(10, 3, 4), 2);
    /* no overflow with large totals */
    assert_int_equal(plan_shard_share_by(UINT64_MAX / 2, 1000000, 0, 1), UINT64_MAX / 2);
}

/* ------------------------------------------------------------------ schedules */

struct stream {
    const char *name;
    bool poisson;
    double from, to, duration_s;
    uint64_t limit;
};

struct times {
    uint64_t *v;
    size_t n, cap;
};

static void times_push(struct times *t, uint64_t v)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->v = realloc(t->v, t->cap * sizeof *t->v);
        assert_non_null(t->v);
    }
    t->v[t->n++] = v;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every planned time of shard I of N with T threads (thread k interleaved as the engine does). */
static void shard_times(const struct stream *s, uint32_t I, uint32_t N, uint32_t T, struct times *out, size_t *count)
{
    struct run_config cfg = {.plan.shard.index = I, .plan.shard.count = N};
    const uint64_t t0 = 1000000000ULL;
    uint64_t end = s->duration_s > 0 ? t0 + (uint64_t)llround(s->duration_s * 1e9) : UINT64_MAX;
    size_t before = out->n;
    for (uint32_t k = 0; k < T; k++) {
        struct sched sc;
        sched_init(&sc, s->poisson, s->from, s->to, s->duration_s, t0, end, s->limit, plan_shard_stride(&cfg.plan, T),
                   plan_shard_offset(&cfg.plan, T, k), 42);
        uint64_t p;
        while (sched_next(&sc, &p))
            times_push(out, p);
    }
    *count = out->n - before;
}

static void test_schedule_union(void **state)
{
    (void)state;
    const struct stream streams[] = {
        {"constant", false, 1000, 1000, 2.5, UINT64_MAX},       {"poisson", true, 700, 700, 3.0, UINT64_MAX},
        {"ramp up", false, 100, 900, 2.0, UINT64_MAX},          {"ramp from zero", false, 0, 500, 2.0, UINT64_MAX},
        {"ramp down, poisson", true, 800, 50, 2.0, UINT64_MAX}, {"constant --requests", false, 333, 333, 0, 1234},
        {"poisson --requests", true, 5000, 5000, 0, 999},       {"--requests and duration", false, 400, 400, 1.0, 250},
    };
    const uint32_t shapes[][2] = {{1, 1}, {1, 3}, {2, 1}, {3, 2}, {4, 1}, {7, 3}, {16, 2}};
    for (size_t a = 0; a < sizeof streams / sizeof *streams; a++) {
        const struct stream *s = &streams[a];
        struct times ref = {0};
        size_t n_ref;
        shard_times(s, 0, 0, 1, &ref, &n_ref);
        assert_true(n_ref > 100);
        qsort(ref.v, ref.n, sizeof *ref.v, cmp_u64);
        for (size_t b = 0; b < sizeof shapes / sizeof *shapes; b++) {
            uint32_t N = shapes[b][0], T = shapes[b][1];
            struct times all = {0};
            for (uint32_t I = 0; I < N; I++) {
                size_t n;
                shard_times(s, I, N, T, &all, &n);
                /* each shard plans exactly its share of the global indices */
                if (!s->poisson || s->limit != UINT64_MAX)
                    assert_int_equal(n, plan_shard_share(n_ref, I, N));
            }
            qsort(all.v, all.n, sizeof *all.v, cmp_u64);
            if (all.n != ref.n)
                fail_msg("%s, %u shards x %u threads: %zu planned, one process %zu", s->name, N, T, all.n, ref.n);
            for (size_t i = 0; i < ref.n; i++)
                if (all.v[i] != ref.v[i])
                    fail_msg("%s, %u shards x %u threads: request %zu at %llu ns, one process %llu ns", s->name, N, T,
                             i, (unsigned long long)all.v[i], (unsigned long long)ref.v[i]);
            free(all.v);
        }
        free(ref.v);
    }
}

/* ------------------------------------------------------------------ validation, plan id */

static const struct plan_target one_target[] = {{.name = "t", .url = "http://127.0.0.1:9/"}};

static struct run_config base_cfg(void)
{
    return (struct run_config){
        .plan.targets = one_target,
        .plan.ntargets = 1,
        .plan.open_loop = true,
        .plan.rate = 100,
        .plan.duration_ns = NS_PER_S,
        .timeout_ns = NS_PER_S,
        .keepalive = true,
        .plan.seed = 1,
    };
}

static void test_validate(void **state)
{
    (void)state;
    char err[256];
    struct run_config c = base_cfg();
    c.plan.shard.count = 4;
    c.plan.shard.index = 3;
    assert_int_equal(run_validate(&c, err, sizeof err), 0);
    c.plan.shard.index = 4;
    assert_int_equal(run_validate(&c, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--shard 4/4"));
    c.plan.shard.count = RUN_MAX_SHARDS + 1;
    c.plan.shard.index = 0;
    assert_int_equal(run_validate(&c, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--shard"));
    /* closed loop: a shard without a connection is refused */
    c = base_cfg();
    c.plan.open_loop = false;
    c.plan.rate = 0;
    c.plan.connections = 3;
    c.plan.shard.count = 4;
    c.plan.shard.index = 3;
    struct run_dryrun plan;
    assert_int_equal(run_dryrun(&c, &plan, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--connections >= 4"));
    c.plan.shard.index = 2;
    assert_int_equal(run_dryrun(&c, &plan, err, sizeof err), 0);
    assert_int_equal(plan.all.connections, 1);
    run_dryrun_release(&plan);
    /* the rate bound per load thread (PLAN_MAX_RATE_PER_THREAD): a shard's thread plans every
     * (N·T)-th send, so N shards of T threads plan N times what one process of T threads can */
    c = base_cfg();
    c.threads = 1;
    c.plan.rate = 3 * PLAN_MAX_RATE_PER_THREAD;
    assert_int_equal(run_validate(&c, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "1 load thread can plan"));
    c.plan.shard.count = 4;
    c.plan.shard.index = 3;
    assert_int_equal(run_validate(&c, err, sizeof err), 0);
    c.plan.rate = 4 * PLAN_MAX_RATE_PER_THREAD; /* the bound itself */
    assert_int_equal(run_validate(&c, err, sizeof err), 0);
    c.plan.rate = 5 * PLAN_MAX_RATE_PER_THREAD;
    assert_int_equal(run_validate(&c, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "4 shards of 1 load thread"));
}

/* A closed loop opens no more connections than --requests (one request each at least): the
 * whole plan's connections are capped first, then shared, so every shard holds at most as
 * many connections as requests, the shards' connections add up to the capped count and their
 * requests to --requests; a shard left without a request is refused naming --requests. */
static void test_closed_requests_cap(void **state)
{
    (void)state;
    char err[256];
    struct run_config c = base_cfg();
    c.plan.open_loop = false;
    c.plan.rate = 0;
    c.plan.connections = 8;
    c.plan.requests = 5;
    c.plan.duration_ns = 0;
    struct run_dryrun whole;
    assert_int_equal(run_dryrun(&c, &whole, err, sizeof err), 0);
    assert_int_equal(whole.all.connections, 5);
    for (uint32_t N = 1; N <= 5; N++) {
        uint64_t conns = 0;
        double planned = 0;
        for (uint32_t I = 0; I < N; I++) {
            struct run_config s = c;
            s.plan.shard.count = N;
            s.plan.shard.index = I;
            struct run_dryrun p;
            if (run_dryrun(&s, &p, err, sizeof err))
                fail_msg("%u/%u: %s", I, N, err);
            assert_true(p.all.connections >= 1);
            assert_true((double)p.all.connections <= p.all.planned);
            conns += p.all.connections;
            planned += p.all.planned;
            run_dryrun_release(&p);
        }
        assert_int_equal(conns, whole.all.connections);
        assert_true(planned == 5);
    }
    run_dryrun_release(&whole);
    c.plan.shard.count = 6;
    c.plan.shard.index = 5;
    struct run_dryrun p;
    assert_int_equal(run_dryrun(&c, &p, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "--requests >= 6"));
}

static void test_plan_id(void **state)
{
    (void)state;
    struct run_config a = base_cfg(), b = base_cfg();
    a.plan.shard.count = b.plan.shard.count = 4;
    a.plan.shard.index = 0;
    b.plan.shard.index = 3;
    b.threads = 7;
    b.out_path = "x.bin";
    assert_true(run_shard_plan_id(&a) == run_shard_plan_id(&b));
    b.plan.rate = 101;
    assert_true(run_shard_plan_id(&a) != run_shard_plan_id(&b));
    b = a;
    b.plan.shard.count = 5;
    assert_true(run_shard_plan_id(&a) != run_shard_plan_id(&b));
    b = a;
    b.plan.shard.start_at_unix_ns = 1;
    assert_true(run_shard_plan_id(&a) != run_shard_plan_id(&b));
    /* the seed makes the plan only for Poisson arrivals */
    b = a;
    b.plan.seed = 9;
    assert_true(run_shard_plan_id(&a) == run_shard_plan_id(&b));
    a.plan.arrivals = b.plan.arrivals = RUN_ARRIVALS_POISSON;
    assert_true(run_shard_plan_id(&a) != run_shard_plan_id(&b));
}

/* The dry-run plans of the shards add up to the plan (a mix, constant and Poisson
 * --requests, the closed loop's connections and requests). */
static void test_plan_adds_up(void **state)
{
    (void)state;
    static const struct plan_target mix[] = {
        {.name = "read", .url = "http://127.0.0.1:9/r", .weight = 3},
        {.name = "write", .url = "http://127.0.0.1:9/w", .weight = 1},
        {.name = "own", .url = "http://127.0.0.1:9/o", .rate = 77},
    };
    struct {
        bool open, poisson;
        uint64_t requests, duration_ns, warmup_ns;
        uint32_t connections;
    } cases[] = {
        {true, false, 0, 3 * NS_PER_S, NS_PER_S / 2, 0},
        {true, false, 10007, 0, 0, 0},
        {true, true, 5003, 0, 0, 0},
        {false, false, 1001, 0, 0, 13},
        {false, false, 0, NS_PER_S, 0, 29},
    };
    char err[256];
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        struct run_config c = base_cfg();
        c.plan.targets = mix;
        c.plan.ntargets = cases[k].open ? 3 : 2;
        c.plan.open_loop = cases[k].open;
        c.plan.rate = cases[k].open ? 1000 : 0;
        c.plan.arrivals = cases[k].poisson ? RUN_ARRIVALS_POISSON : RUN_ARRIVALS_CONSTANT;
        c.plan.requests = cases[k].requests;
        c.plan.duration_ns = cases[k].duration_ns;
        c.plan.warmup_ns = cases[k].warmup_ns;
        c.plan.connections = cases[k].connections;
        struct run_dryrun whole;
        assert_int_equal(run_dryrun(&c, &whole, err, sizeof err), 0);
        for (uint32_t N = 1; N <= 5; N++) {
            double planned[3] = {0}, warm[3] = {0}, rate[3] = {0};
            uint32_t conns[3] = {0};
            for (uint32_t I = 0; I < N; I++) {
                struct run_config s = c;
                s.plan.shard.count = N;
                s.plan.shard.index = I;
                struct run_dryrun p;
                assert_int_equal(run_dryrun(&s, &p, err, sizeof err), 0);
                for (size_t t = 0; t < p.ntargets; t++) {
                    planned[t] += p.targets[t].planned;
                    warm[t] += p.targets[t].warmup_planned;
                    rate[t] += p.targets[t].rate_from;
                    conns[t] += p.targets[t].connections;
                }
                run_dryrun_release(&p);
            }
            for (size_t t = 0; t < whole.ntargets; t++) {
                if (isfinite(whole.targets[t].planned))
                    assert_close(planned[t], whole.targets[t].planned, 1e-6 * whole.targets[t].planned);
                else
                    assert_false(isfinite(planned[t]));
                if (isfinite(whole.targets[t].warmup_planned))
                    assert_close(warm[t], whole.targets[t].warmup_planned, 1e-6 + 1e-9 * warm[t]);
                assert_close(rate[t], whole.targets[t].rate_from, 1e-9 * rate[t]);
                assert_int_equal(conns[t], whole.targets[t].connections);
            }
        }
        run_dryrun_release(&whole);
    }
}

/* ------------------------------------------------------------------ the engine as shards */

struct planned_rec {
    uint32_t target;
    uint64_t planned_ns;
};

static int cmp_rec(const void *a, const void *b)
{
    const struct planned_rec *x = a, *y = b;
    if (x->target != y->target)
        return x->target < y->target ? -1 : 1;
    return x->planned_ns < y->planned_ns ? -1 : x->planned_ns > y->planned_ns;
}

struct recs {
    struct planned_rec *v;
    size_t n, cap;
};

/* Run cfg with a binary log and append its records' (target, planned) to out. */
static void run_logged(struct run_config *cfg, struct recs *out, struct run_record *res)
{
    char path[] = "/tmp/knee_test_shard_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    cfg->out_path = path;
    char err[256];
    int r = run_execute(cfg, res, err, sizeof err);
    if (r)
        fail_msg("run_execute: %s", err);
    assert_true(res->accounting_ok);
    struct reqlog_reader *rd;
    assert_int_equal(reqlog_reader_open(&rd, path, err, sizeof err), 0);
    struct reqlog_shard sh;
    assert_int_equal(reqlog_reader_shard(rd, &sh), cfg->plan.shard.count ? 1 : 0);
    if (cfg->plan.shard.count) {
        assert_int_equal(sh.index, cfg->plan.shard.index);
        assert_int_equal(sh.count, cfg->plan.shard.count);
        assert_true(sh.plan_id == run_shard_plan_id(cfg));
    }
    struct reqlog_record rec;
    while ((r = reqlog_read(rd, &rec)) == 1) {
        if (out->n == out->cap) {
            out->cap = out->cap ? 2 * out->cap : 4096;
            out->v = realloc(out->v, out->cap * sizeof *out->v);
        }
        out->v[out->n++] = (struct planned_rec){rec.target, rec.planned_ns};
    }
    assert_int_equal(r, 0);
    reqlog_reader_close(rd);
    unlink(path);
    cfg->out_path = NULL;
}

static void test_engine_shards(void **state)
{
    (void)state;
    struct serve_config sc;
    assert_int_equal(serve_preset("null", &sc), 0);
    snprintf(sc.listen, sizeof sc.listen, "127.0.0.1:0");
    struct serve_handle *srv;
    assert_int_equal(serve_start(&sc, &srv), 0);
    char u1[128], u2[128];
    snprintf(u1, sizeof u1, "http://%s/read", serve_address(srv));
    snprintf(u2, sizeof u2, "http://%s/write", serve_address(srv));
    struct plan_target tg[] = {{.name = "read", .url = u1, .weight = 3}, {.name = "write", .url = u2}};
    struct {
        const char *name;
        enum run_arrivals arrivals;
        uint64_t requests, duration_ns, warmup_ns;
        uint32_t N, T;
    } cases[] = {
        {"constant mix", RUN_ARRIVALS_CONSTANT, 0, 600 * NS_PER_MS, 200 * NS_PER_MS, 3, 2},
        {"poisson mix", RUN_ARRIVALS_POISSON, 0, 600 * NS_PER_MS, 0, 4, 1},
        {"--requests", RUN_ARRIVALS_CONSTANT, 901, 0, 0, 2, 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        struct run_config c = {
            .plan.targets = tg,
            .plan.ntargets = 2,
            .plan.open_loop = true,
            .plan.rate = 1500,
            .plan.arrivals = cases[k].arrivals,
            .plan.seed = 5,
            .plan.duration_ns = cases[k].duration_ns,
            .plan.requests = cases[k].requests,
            .plan.warmup_ns = cases[k].warmup_ns,
            .timeout_ns = 2 * NS_PER_S,
            .drain_ns = 2 * NS_PER_S,
            .keepalive = true,
            .threads = 1,
        };
        struct recs one = {0}, all = {0};
        struct run_record res;
        run_logged(&c, &one, &res);
        uint64_t one_planned = res.all.counts.planned + res.all.warmup_counts.planned;
        record_release(&res);
        uint64_t sum_planned = 0;
        for (uint32_t I = 0; I < cases[k].N; I++) {
            struct run_config s = c;
            s.plan.shard.index = I;
            s.plan.shard.count = cases[k].N;
            s.threads = cases[k].T;
            run_logged(&s, &all, &res);
            assert_int_equal(res.shard.index, I);
            assert_int_equal(res.shard.count, cases[k].N);
            assert_true(res.shard.plan_id == run_shard_plan_id(&s));
            sum_planned += res.all.counts.planned + res.all.warmup_counts.planned;
            record_release(&res);
        }
        assert_int_equal(sum_planned, one_planned);
        qsort(one.v, one.n, sizeof *one.v, cmp_rec);
        qsort(all.v, all.n, sizeof *all.v, cmp_rec);
        if (one.n != all.n)
            fail_msg("%s: the shards logged %zu requests, one process %zu", cases[k].name, all.n, one.n);
        for (size_t i = 0; i < one.n; i++)
            if (cmp_rec(&one.v[i], &all.v[i]) != 0)
                fail_msg("%s: request %zu differs", cases[k].name, i);
        free(one.v);
        free(all.v);
    }
    serve_stop(srv, NULL);
}

/* --start-at: t0 is the instant; a late shard records its lag and a warning. */
static void test_start_at(void **state)
{
    (void)state;
    struct serve_config sc;
    assert_int_equal(serve_preset("null", &sc), 0);
    snprintf(sc.listen, sizeof sc.listen, "127.0.0.1:0");
    struct serve_handle *srv;
    assert_int_equal(serve_start(&sc, &srv), 0);
    char url[128];
    snprintf(url, sizeof url, "http://%s/", serve_address(srv));
    struct plan_target tg[] = {{.name = "t", .url = url}};
    struct run_config c = {
        .plan.targets = tg,
        .plan.ntargets = 1,
        .plan.open_loop = true,
        .plan.rate = 1000,
        .plan.duration_ns = 500 * NS_PER_MS,
        .timeout_ns = 2 * NS_PER_S,
        .drain_ns = 2 * NS_PER_S,
        .keepalive = true,
        .threads = 1,
        .plan.shard.count = 2,
        .plan.shard.index = 1,
    };
    char err[256];
    struct run_record res;
    /* on time: 300 ms ahead */
    c.plan.shard.start_at_unix_ns = clock_wall_ns() + 300 * NS_PER_MS;
    assert_int_equal(run_execute(&c, &res, err, sizeof err), 0);
    assert_true(clock_wall_ns() >= c.plan.shard.start_at_unix_ns + 500 * NS_PER_MS);
    assert_true(res.shard.t0_unix_ns == c.plan.shard.start_at_unix_ns);
    assert_true(res.shard.start_skew_ns < 0); /* it waited for the instant */
    assert_true(res.shard.start_skew_ns > -(int64_t)(300 * NS_PER_MS));
    assert_int_equal(res.all.counts.planned, 250);
    record_release(&res);
    /* late: the instant was 200 ms ago, so the first ~100 requests of this shard are due at once */
    c.plan.shard.start_at_unix_ns = clock_wall_ns() - 200 * NS_PER_MS;
    assert_int_equal(run_execute(&c, &res, err, sizeof err), 0);
    assert_true(res.shard.start_skew_ns >= (int64_t)(200 * NS_PER_MS));
    assert_int_equal(res.all.counts.planned, 250);
    struct run_summary lag;
    record_summary_of(&res.all.lag, &lag);
    assert_true(lag.max >= 190); /* ms: the lateness is lag, not hidden */
    bool warned = false;
    for (size_t i = 0; i < res.warnings.n; i++)
        warned |= strstr(res.warnings.items[i], "after the shared start instant") != NULL;
    assert_true(warned);
    record_release(&res);
    serve_stop(srv, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share),        cmocka_unit_test(test_schedule_union),
        cmocka_unit_test(test_validate),     cmocka_unit_test(test_plan_id),
        cmocka_unit_test(test_plan_adds_up), cmocka_unit_test(test_engine_shards),
        cmocka_unit_test(test_start_at),     cmocka_unit_test(test_closed_requests_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
