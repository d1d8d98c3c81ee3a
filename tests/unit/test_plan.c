/* Unit tests for src/plan: plan_validate's refusals (a table of bad plans and the exact line
 * each gets), plan_shares over several targets (weights, own rates, @Nc, --streams, --requests
 * apportioned; the shards' shares add up to the whole), plan_expected against what the
 * schedule actually draws (constant: exact, warm-up included; Poisson: the expectation against
 * the seed's sequence), the threads, pool and window rules, and the plan's fingerprint as
 * literals (the ids `knee run --shard` printed before the plan layer: old shards still merge).
 * Nothing here is timed or touches the network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "plan/plan.h"
#include "plan/schedule.h"
#include "plan/shard.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define U "http://127.0.0.1:1/x"

static const struct plan_target ONE[] = {{.name = "a", .url = U}};
static const struct plan_target THREE[] = {
    {.name = "a", .url = U, .rate = 300},
    {.name = "b", .url = U, .weight = 2},
    {.name = "c", .url = U},
};

static struct plan open_plan(void)
{
    return (struct plan){
        .targets = ONE, .ntargets = 1, .open_loop = true, .rate = 1000, .seed = 1, .duration_ns = 5 * NS_PER_S};
}

static struct plan closed_plan(void)
{
    return (struct plan){.targets = ONE, .ntargets = 1, .seed = 1, .duration_ns = 5 * NS_PER_S};
}

/* ------------------------------------------------------------------ plan_validate */

struct refusal {
    struct plan p;
    uint32_t threads;
    const char *msg;
};

static void test_validate(void **state)
{
    (void)state;
    static const struct plan_target two_a[] = {{.name = "a", .url = U}, {.name = "a", .url = U}};
    static const struct plan_target unnamed[] = {{.name = "", .url = U}};
    static const struct plan_target bad_rate[] = {{.name = "a", .url = U, .rate = -1}};
    static const struct plan_target bad_weight[] = {{.name = "a", .url = U, .weight = NAN}};
    static const struct plan_target conns[] = {{.name = "a", .url = U, .connections = 3}};
    static const struct plan_target many_conns[] = {{.name = "a", .url = U, .connections = PLAN_MAX_CONNECTIONS + 1}};
    static const struct plan_target bad_method[] = {{.name = "a", .url = U, .method = "GE T"}};
    struct plan o = open_plan(), c = closed_plan();
    struct refusal table[32];
    size_t n = 0;
#define REFUSE(base, field_changes, thr, text)                                                                         \
    do {                                                                                                               \
        struct plan p_ = base;                                                                                         \
        field_changes;                                                                                                 \
        table[n++] = (struct refusal){p_, thr, text};                                                                  \
    } while (0)
    REFUSE(o, p_.ntargets = 0, 0, "no target: give a URL or --target NAME=URL (see knee run --help)");
    REFUSE(o, p_.ntargets = RUN_MAX_TARGETS + 1, 0, "at most 64 targets (URLs and --target)");
    REFUSE(o, p_.targets = unnamed, 0, "target 1 has no name or URL (--target NAME=URL)");
    REFUSE(o, (p_.targets = two_a, p_.ntargets = 2), 0, "--target: two targets are named 'a'");
    REFUSE(o, p_.targets = bad_rate, 0, "--target a: its rate (@R) must be a finite number >= 0");
    REFUSE(o, p_.targets = bad_weight, 0, "--mix: the weight of a must be a finite number >= 0");
    REFUSE(o, p_.targets = conns, 0,
           "--target NAME=URL@Nc sets closed-loop connections, but --rate makes this an open loop");
    REFUSE(c, p_.targets = many_conns, 0, "--target a: @Nc must be between 1 and 1000000");
    REFUSE(o, p_.targets = bad_method, 0, "--method 'GE T' is not an HTTP method");
    REFUSE(o, p_.duration_ns = 0, 0, "neither --duration nor --requests bounds the run");
    REFUSE(o, p_.rate = INFINITY, 0, "--rate must be a finite number > 0");
    REFUSE(o, p_.ramp = true, 0, "--ramp and --rate: give one (the ramp sets the rate over time)");
    REFUSE(o, (p_.rate = 0, p_.ramp = true, p_.ramp_to = 5, p_.duration_ns = 0, p_.requests = 9), 0,
           "--ramp needs --duration (it ramps over the duration)");
    REFUSE(o, (p_.rate = 0, p_.ramp = true, p_.ramp_to = 5, p_.requests = 9), 0,
           "--ramp and --requests cannot be combined");
    REFUSE(o, (p_.rate = 0, p_.ramp = true), 0, "--ramp: FROM and TO must be rates >= 0, not both 0");
    REFUSE(c, (p_.ramp = true, p_.ramp_to = 5), 0, "--ramp applies to the open loop");
    REFUSE(o, p_.think_ns = NS_PER_MS, 0,
           "--think applies to the closed loop (no --rate): an open loop sends on its schedule");
    REFUSE(c, p_.arrivals = RUN_ARRIVALS_POISSON, 0, "--arrivals applies to the open loop: give --rate");
    REFUSE(c, p_.connections = PLAN_MAX_CONNECTIONS + 1, 0, "--connections must be between 1 and 1000000");
    REFUSE(c, p_.warmup_ns = 5 * NS_PER_S, 0, "--warmup must be shorter than --duration");
    REFUSE(o, p_.shard.count = RUN_MAX_SHARDS + 1, 0, "--shard I/N: N must be between 1 and 65536");
    REFUSE(o, (p_.shard.index = 3, p_.shard.count = 3), 0, "--shard 3/3: the index counts from 0 and must be below 3");
    REFUSE(o, p_.shard.index = 1, 0, "--shard: an index without a shard count");
    REFUSE(o, p_.duration_ns = PLAN_MAX_NS + 1, 0, "--duration must be at most 1000000000 s");
    REFUSE(o, p_.rate = 1e7, 2,
           "--rate: 1e+07/s is more than 2 load threads can plan (at most 1,000,000/s per "
           "thread, 2,000,000/s here); give --threads or spread the load over several generators");
    REFUSE(o, (p_.rate = 1e7, p_.connections = 1), 8,
           "--rate: 1e+07/s is more than 1 load thread can plan (at most 1,000,000/s per thread, 1,000,000/s here); "
           "give --threads or spread the load over several generators");
    REFUSE(o, (p_.rate = 1e7, p_.shard.count = 2), 2,
           "--rate: 1e+07/s is more than 2 shards of 2 load threads can plan (at most 1,000,000/s per thread, "
           "4,000,000/s here); give --threads or more shards");
    REFUSE(o, (p_.rate = 1, p_.duration_ns = 0, p_.requests = 2000000000000000000ULL), 1,
           "--requests 2000000000000000000 at 1/s would take 2e+18 s to plan: a plan spans at most "
           "1,000,000,000 s (--duration's limit); raise --rate or lower --requests");
#undef REFUSE
    for (size_t i = 0; i < n; i++) {
        char err[512] = "";
        int rc = plan_validate(&table[i].p, table[i].threads, err, sizeof err);
        if (rc != KNEE_EINVAL || strcmp(err, table[i].msg) != 0)
            fail_msg("case %zu: rc %d, '%s'; expected '%s'", i, rc, err, table[i].msg);
    }
    /* the good ones */
    char err[256];
    struct plan p = open_plan();
    assert_int_equal(plan_validate(&p, 0, err, sizeof err), 0);
    p = closed_plan();
    p.connections = 10;
    p.think_ns = NS_PER_MS;
    assert_int_equal(plan_validate(&p, 0, err, sizeof err), 0);
    p = open_plan();
    p.rate = 0;
    p.ramp = true;
    p.ramp_to = 500;
    p.warmup_ns = NS_PER_S;
    p.shard.count = 4;
    p.shard.index = 3;
    assert_int_equal(plan_validate(&p, 0, err, sizeof err), 0);
}

/* ------------------------------------------------------------------ plan_shares */

static void test_shares_open(void **state)
{
    (void)state;
    char err[256];
    struct plan_share s[3];
    struct plan p = open_plan();
    p.targets = THREE;
    p.ntargets = 3;
    p.requests = 1001;
    p.duration_ns = 0;
    assert_int_equal(plan_validate(&p, 0, err, sizeof err), 0);
    assert_int_equal(plan_shares(&p, 1, s, err, sizeof err), 0);
    /* a: its own 300/s; b and c share --rate 1000 by weight 2:1 */
    assert_true(s[0].rate_from == 300 && s[0].rate_to == 300);
    assert_true(fabs(s[1].rate_from - 2000.0 / 3) < 1e-9 && s[1].rate_to == s[1].rate_from);
    assert_true(fabs(s[2].rate_from - 1000.0 / 3) < 1e-9);
    /* --requests by mean rate, largest remainder: 231, 513.3, 256.7 → 231, 513, 257 */
    assert_int_equal(s[0].limit, 231);
    assert_int_equal(s[1].limit, 513);
    assert_int_equal(s[2].limit, 257);
    assert_int_equal(s[0].clients + s[1].clients + s[0].groups, 0);
    /* the window: 1001 requests at the streams' 1,300/s */
    double total = s[0].rate_from + s[1].rate_from + s[2].rate_from;
    assert_true(fabs(total - 1300) < 1e-9);
    assert_int_equal(plan_window_ns(&p, s), (uint64_t)llround(1001 / total * 1e9));
    /* by duration: no limit; a ramp shares FROM and TO */
    p.requests = 0;
    p.duration_ns = 10 * NS_PER_S;
    p.rate = 0;
    p.ramp = true;
    p.ramp_from = 300;
    p.ramp_to = 600;
    assert_int_equal(plan_shares(&p, 1, s, err, sizeof err), 0);
    assert_true(s[0].limit == UINT64_MAX && s[2].limit == UINT64_MAX);
    assert_true(fabs(s[1].rate_from - 200) < 1e-9 && fabs(s[1].rate_to - 400) < 1e-9);
    assert_true(s[0].rate_from == 300 && s[0].rate_to == 300);
    assert_int_equal(plan_window_ns(&p, s), 10 * NS_PER_S);
    /* this shard's mean rate: the ramp's mean over the shards */
    p.shard.count = 2;
    assert_true(fabs(plan_share_rate(&p, &s[1]) - 150) < 1e-9);
    /* own rates only, no --rate for the others */
    p.ramp = false;
    p.ramp_from = p.ramp_to = 0;
    assert_int_equal(plan_shares(&p, 1, s, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "target b has no rate: give --rate R (shared by weight) or b=URL@RATE");
}

static void test_shares_closed(void **state)
{
    (void)state;
    static const struct plan_target t[] = {
        {.name = "a", .url = U, .connections = 2},
        {.name = "b", .url = U, .weight = 3},
        {.name = "c", .url = U},
    };
    char err[256];
    struct plan_share s[3];
    struct plan p = closed_plan();
    p.targets = t;
    p.ntargets = 3;
    p.connections = 10;
    p.requests = 100;
    assert_int_equal(plan_shares(&p, 1, s, err, sizeof err), 0);
    /* b and c share 10 connections 3:1 (7.5, 2.5: the tie goes to the first) */
    assert_int_equal(s[0].clients, 2);
    assert_int_equal(s[1].clients, 8);
    assert_int_equal(s[2].clients, 2);
    assert_int_equal(s[1].groups, 8);
    /* --requests by connections 2:8:2 (16.7, 66.7, 16.7 → 17, 67, 16) */
    assert_int_equal(s[0].limit, 17);
    assert_int_equal(s[1].limit, 67);
    assert_int_equal(s[2].limit, 16);
    assert_int_equal(s[0].limit + s[1].limit + s[2].limit, 100);
    assert_true(s[0].rate_from == 0 && s[1].rate_to == 0);
    assert_int_equal(plan_window_ns(&p, s), 5 * NS_PER_S);
    /* --streams 4: four clients per connection */
    assert_int_equal(plan_shares(&p, 4, s, err, sizeof err), 0);
    assert_int_equal(s[1].clients, 32);
    assert_int_equal(s[1].groups, 8);
    /* no more clients than requests: -n 5 -c 8 opens 5, and 2 streams of 3 connections */
    p.targets = ONE;
    p.ntargets = 1;
    p.connections = 8;
    p.requests = 5;
    p.duration_ns = 0;
    assert_int_equal(plan_shares(&p, 1, s, err, sizeof err), 0);
    assert_true(s[0].clients == 5 && s[0].groups == 5 && s[0].limit == 5);
    assert_int_equal(plan_window_ns(&p, s), UINT64_MAX);
    assert_int_equal(plan_shares(&p, 2, s, err, sizeof err), 0);
    assert_true(s[0].clients == 5 && s[0].groups == 3);
    /* a shared target left without a connection */
    p.targets = t + 1;
    p.ntargets = 2;
    p.connections = 1;
    assert_int_equal(plan_shares(&p, 1, s, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "target c gets no connection: 1 connections shared by 2 targets (raise --connections)");
}

/* The shards' shares add up to the whole plan: the closed loop's clients and requests, the open
 * loop's planned counts (every shard draws from the whole stream and keeps its indices). */
static void test_shares_shards(void **state)
{
    (void)state;
    static const struct plan_target t[] = {{.name = "a", .url = U, .connections = 5}, {.name = "b", .url = U}};
    char err[256];
    struct plan p = closed_plan();
    p.targets = t;
    p.ntargets = 2;
    p.connections = 7;
    p.requests = 1003;
    p.duration_ns = 0;
    struct plan_share whole[2], part[2];
    assert_int_equal(plan_shares(&p, 1, whole, err, sizeof err), 0);
    for (uint32_t N = 1; N <= 5; N++) {
        uint64_t clients[2] = {0, 0}, groups[2] = {0, 0}, limit[2] = {0, 0};
        for (uint32_t I = 0; I < N; I++) {
            p.shard.count = N;
            p.shard.index = I;
            assert_int_equal(plan_shares(&p, 1, part, err, sizeof err), 0);
            for (int k = 0; k < 2; k++) {
                clients[k] += part[k].clients;
                groups[k] += part[k].groups; /* a shard opens its own connections, not the plan's */
                limit[k] += part[k].limit;
            }
        }
        for (int k = 0; k < 2; k++) {
            assert_int_equal(clients[k], whole[k].clients);
            assert_int_equal(groups[k], whole[k].groups);
            assert_int_equal(limit[k], whole[k].limit);
        }
    }
    /* a shard left without a connection */
    p.targets = ONE;
    p.ntargets = 1;
    p.connections = 2;
    p.requests = 0;
    p.duration_ns = NS_PER_S;
    p.shard.count = 3;
    p.shard.index = 2;
    assert_int_equal(plan_shares(&p, 1, part, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--shard 2/3: 2 closed-loop connections leave this shard none (give --connections >= 3)");
    p.requests = 2;
    p.duration_ns = 0;
    assert_int_equal(plan_shares(&p, 1, part, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "--shard 2/3: --requests 2 leaves this shard no request, and so no connection (give "
                             "--requests >= 3)");

    /* the open loop: this shard's planned counts add up to the whole plan's, exactly */
    struct plan o = open_plan();
    o.targets = THREE;
    o.ntargets = 3;
    o.rate = 777;
    o.duration_ns = 3 * NS_PER_S + 123;
    o.warmup_ns = NS_PER_S / 3;
    for (int bounded = 0; bounded < 2; bounded++) {
        o.requests = bounded ? 2345 : 0;
        o.duration_ns = bounded ? 0 : o.duration_ns;
        o.warmup_ns = bounded ? 0 : o.warmup_ns;
        o.shard.count = 0;
        o.shard.index = 0;
        struct plan_share s[3];
        struct plan_expect x, y;
        assert_int_equal(plan_shares(&o, 1, s, err, sizeof err), 0);
        for (size_t i = 0; i < 3; i++) {
            plan_expected(&o, &s[i], &x);
            assert_true(x.exact && isfinite(x.planned));
            for (uint32_t N = 2; N <= 4; N++) {
                double planned = 0, warm = 0, rate = 0;
                for (uint32_t I = 0; I < N; I++) {
                    o.shard.count = N;
                    o.shard.index = I;
                    plan_expected(&o, &s[i], &y);
                    planned += y.planned;
                    warm += y.warmup_planned;
                    rate += y.rate_from;
                }
                o.shard.count = 0;
                o.shard.index = 0;
                assert_true(planned == x.planned && warm == x.warmup_planned);
                assert_true(fabs(rate - x.rate_from) < 1e-9);
            }
        }
    }
}

/* ------------------------------------------------------------------ plan_expected vs the schedule */

/* Requests target i's schedule plans over every thread of every shard: in all, and in the warm-up. */
static void drawn(const struct plan *p, const struct plan_share *s, size_t target, uint32_t threads, uint64_t *all,
                  uint64_t *warm)
{
    const uint64_t t0 = 1000 * NS_PER_S;
    uint64_t end = p->duration_ns ? t0 + p->duration_ns : UINT64_MAX;
    *all = *warm = 0;
    struct plan q = *p;
    uint32_t N = plan_shard_count(p);
    for (uint32_t I = 0; I < N; I++) {
        q.shard.index = I;
        for (uint32_t k = 0; k < threads; k++) {
            struct sched sc;
            plan_sched_init(&sc, &q, s, target, t0, end, threads, k);
            uint64_t at;
            while (sched_next(&sc, &at)) {
                (*all)++;
                *warm += at < t0 + p->warmup_ns;
            }
        }
    }
}

static void test_expected(void **state)
{
    (void)state;
    char err[256];
    struct plan p = open_plan();
    p.targets = THREE;
    p.ntargets = 3;
    p.rate = 901;
    p.duration_ns = 2 * NS_PER_S + 7;
    p.warmup_ns = NS_PER_S / 7;
    struct plan_share s[3];
    struct plan_expect x;
    /* constant arrivals, a constant rate and a ramp, over shards and threads: exact */
    for (int ramp = 0; ramp < 2; ramp++) {
        p.ramp = ramp;
        p.rate = ramp ? 0 : 901;
        p.ramp_from = 50;
        p.ramp_to = 1250;
        assert_int_equal(plan_shares(&p, 1, s, err, sizeof err), 0);
        for (size_t i = 0; i < 3; i++) {
            p.shard.count = 0;
            plan_expected(&p, &s[i], &x);
            uint64_t all, warm;
            drawn(&p, &s[i], i, 3, &all, &warm);
            assert_true(x.exact);
            assert_int_equal((uint64_t)x.planned, all);
            assert_int_equal((uint64_t)x.warmup_planned, warm);
            p.shard.count = 3; /* the shards together draw the same */
            drawn(&p, &s[i], i, 2, &all, &warm);
            assert_int_equal((uint64_t)x.planned, all);
            assert_int_equal((uint64_t)x.warmup_planned, warm);
        }
    }
    /* Poisson by duration: an expectation, Λ(duration); the seed's draw is within 5 sigma */
    p.ramp = false;
    p.rate = 4000;
    p.shard.count = 0;
    p.arrivals = RUN_ARRIVALS_POISSON;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        p.seed = seed;
        assert_int_equal(plan_shares(&p, 1, s, err, sizeof err), 0);
        for (size_t i = 0; i < 3; i++) {
            plan_expected(&p, &s[i], &x);
            assert_false(x.exact);
            double lam = s[i].rate_from * (double)p.duration_ns / 1e9;
            assert_true(fabs(x.planned - lam) < 1e-6);
            uint64_t all, warm;
            drawn(&p, &s[i], i, 2, &all, &warm);
            if (fabs((double)all - lam) > 5 * sqrt(lam))
                fail_msg("seed %llu target %zu: drew %llu, expected about %.1f", (unsigned long long)seed, i,
                         (unsigned long long)all, lam);
        }
    }
    /* Poisson bounded by --requests: exact */
    p.duration_ns = 0;
    p.warmup_ns = 0;
    p.requests = 999;
    assert_int_equal(plan_shares(&p, 1, s, err, sizeof err), 0);
    uint64_t sum = 0;
    for (size_t i = 0; i < 3; i++) {
        plan_expected(&p, &s[i], &x);
        assert_true(x.exact);
        uint64_t all, warm;
        drawn(&p, &s[i], i, 3, &all, &warm);
        assert_int_equal((uint64_t)x.planned, all);
        sum += all;
    }
    assert_int_equal(sum, 999);
    /* the closed loop plans none ahead by duration; its --requests share is exact */
    struct plan c = closed_plan();
    c.warmup_ns = NS_PER_S;
    assert_int_equal(plan_shares(&c, 1, s, err, sizeof err), 0);
    plan_expected(&c, &s[0], &x);
    assert_true(isnan(x.planned) && isnan(x.warmup_planned) && x.rate_from == 0);
}

/* ------------------------------------------------------------------ threads, pool */

static void test_threads(void **state)
{
    (void)state;
    char err[256];
    struct plan p = open_plan();
    assert_int_equal(plan_threads(&p, 3, NULL), 3);
    assert_int_equal(plan_pool(&p), PLAN_DEFAULT_OPEN_CONNECTIONS);
    p.connections = 2; /* each thread owns its connections: at most one per connection */
    assert_int_equal(plan_threads(&p, 3, NULL), 2);
    assert_int_equal(plan_pool(&p), 2);
    assert_true(plan_threads(&p, 0, NULL) >= 1);
    struct plan c = closed_plan();
    struct plan_share s[1];
    c.connections = 2;
    assert_int_equal(plan_shares(&c, 1, s, err, sizeof err), 0);
    assert_int_equal(plan_threads(&c, 8, s), 2); /* a thread without clients has nothing to do */
    assert_int_equal(plan_threads(&c, 1, s), 1);
    assert_int_equal(plan_pool(&c), 0);
}

/* ------------------------------------------------------------------ the fingerprint */

/* The ids knee run --dry-run --shard printed before the plan layer for the same plans (the
 * command lines beside each): the encoding is kept, so shards of older runs still merge. */
static void test_plan_id(void **state)
{
    (void)state;
    static const struct plan_terms defaults = {
        .timeout_ns = 10 * NS_PER_S, .drain_ns = 10 * NS_PER_S, .when_busy = RUN_BUSY_QUEUE, .keepalive = true};
    /* -R 1000 -d 5s --warmup 1s --shard 0/2 --target a=U */
    struct plan p = open_plan();
    p.warmup_ns = NS_PER_S;
    p.shard.count = 2;
    assert_true(plan_id(&p, &defaults) == 0x32630fa43d1970b0ULL);
    p.shard.index = 1; /* the same in every shard, whatever its index, source or threads */
    p.shard.source = "SLURM_PROCID/SLURM_NTASKS";
    assert_true(plan_id(&p, &defaults) == 0x32630fa43d1970b0ULL);
    p.connections = 77; /* the open loop's pool cap is a process's, not the plan's */
    assert_true(plan_id(&p, &defaults) == 0x32630fa43d1970b0ULL);
    p.shard.count = 3;
    assert_true(plan_id(&p, &defaults) != 0x32630fa43d1970b0ULL);

    /* -R 1000 -d 5s --warmup 1s --arrivals poisson --seed 7 --target a=U@300 --target b=U --mix b=2
     * -m b=POST -b b=hello -H 'a=X-A: 1' --reject 503:Q --reject 429 --expect-body ok --timeout 2s
     * --drain 1s --when-busy drop --shard 1/3 */
    static const char *const hdr[] = {"X-A: 1"};
    const struct plan_target t[] = {
        {.name = "a", .url = U, .headers = hdr, .nheaders = 1, .rate = 300},
        {.name = "b", .url = U, .method = "POST", .body = "hello", .body_len = 5, .weight = 2},
    };
    const struct run_reject rejects[] = {{503, "Q"}, {429, NULL}};
    const struct plan_terms terms = {.timeout_ns = 2 * NS_PER_S,
                                     .drain_ns = NS_PER_S,
                                     .when_busy = RUN_BUSY_DROP,
                                     .keepalive = true,
                                     .expect_body = "ok",
                                     .rejects = rejects,
                                     .nrejects = 2};
    p = open_plan();
    p.targets = t;
    p.ntargets = 2;
    p.warmup_ns = NS_PER_S;
    p.arrivals = RUN_ARRIVALS_POISSON;
    p.seed = 7;
    p.shard.count = 3;
    p.shard.index = 1;
    assert_true(plan_id(&p, &terms) == 0xb43e3eb518ac7509ULL);

    /* -c 6 -n 100 --think 5ms --no-keepalive --target a=U@2c --target b=U --shard 2/3 */
    const struct plan_target tc[] = {{.name = "a", .url = U, .connections = 2}, {.name = "b", .url = U}};
    struct plan_terms close = defaults;
    close.keepalive = false;
    p = closed_plan();
    p.targets = tc;
    p.ntargets = 2;
    p.connections = 6;
    p.requests = 100;
    p.duration_ns = 0;
    p.think_ns = 5 * NS_PER_MS;
    p.shard.count = 3;
    p.shard.index = 2;
    assert_true(plan_id(&p, &close) == 0xaef320c7011d2c5eULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate),      cmocka_unit_test(test_shares_open), cmocka_unit_test(test_shares_closed),
        cmocka_unit_test(test_shares_shards), cmocka_unit_test(test_expected),    cmocka_unit_test(test_threads),
        cmocka_unit_test(test_plan_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
