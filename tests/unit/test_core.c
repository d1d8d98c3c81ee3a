/* Unit tests for src/core: the event loop (timers in order, cancel, fd readiness, wake),
 * the seeded RNG (reproducible, distributions with the right means) and error messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/rng.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fired[16];
static int nfired;

static void record_cb(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    fired[nfired++] = (int)(intptr_t)t->data;
}

static void test_timers_fire_in_deadline_order(void **state)
{
    (void)state;
    struct loop loop;
    assert_int_equal(loop_init(&loop), 0);
    struct loop_timer t[5];
    uint64_t now = clock_now_ns();
    int order[5] = {3, 0, 4, 1, 2};
    for (int i = 0; i < 5; i++) {
        loop_timer_init(&t[i], record_cb, (void *)(intptr_t)i);
        loop_timer_arm(&loop, &t[i], now + (uint64_t)(order[i] + 1) * 200000);
    }
    loop_timer_cancel(&loop, &t[2]); /* order 4: never fires */
    loop_timer_cancel(&loop, &t[2]); /* harmless twice */
    assert_false(loop_timer_armed(&t[2]));
    loop_timer_arm(&loop, &t[0], now + 50000); /* re-arm earlier: fires first */
    nfired = 0;
    while (loop.nheap)
        assert_true(loop_run_once(&loop, NS_PER_S) >= 0);
    assert_int_equal(nfired, 4);
    assert_int_equal(fired[0], 0);
    assert_int_equal(fired[1], 1);
    assert_int_equal(fired[2], 3);
    assert_int_equal(fired[3], 4);
    assert_true(clock_now_ns() >= now + 3 * 200000); /* the latest live deadline */
    loop_release(&loop);
}

/* loop_set_after: the hook runs once after each callback (here timers; descriptors likewise),
 * before the next callback runs, and never without one. */
static int after_seen[16];
static int nafter;

static void after_cb(void *data)
{
    (void)data;
    after_seen[nafter++] = nfired;
}

static void test_after_each_callback(void **state)
{
    (void)state;
    struct loop loop;
    assert_int_equal(loop_init(&loop), 0);
    loop_set_after(&loop, after_cb, NULL);
    struct loop_timer t[3];
    uint64_t now = clock_now_ns();
    for (int i = 0; i < 3; i++) {
        loop_timer_init(&t[i], record_cb, (void *)(intptr_t)i);
        loop_timer_arm(&loop, &t[i], now); /* all due at once: one iteration runs them */
    }
    nfired = nafter = 0;
    assert_int_equal(loop_run_once(&loop, 0), 3);
    assert_int_equal(nafter, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(after_seen[i], i + 1);
    assert_int_equal(loop_run_once(&loop, 0), 0);
    assert_int_equal(nafter, 3);
    loop_release(&loop);
}

static void test_timer_heap_many(void **state)
{
    (void)state;
    struct loop loop;
    assert_int_equal(loop_init(&loop), 0);
    enum { N = 1000 };
    static struct loop_timer t[N];
    struct rng r;
    rng_seed(&r, 7);
    uint64_t base = clock_now_ns();
    for (int i = 0; i < N; i++) {
        loop_timer_init(&t[i], record_cb, NULL);
        loop_timer_arm(&loop, &t[i], base + rng_below(&r, 1000000));
    }
    for (int i = 0; i < N; i += 3)
        loop_timer_cancel(&loop, &t[i]);
    /* The heap property: popping yields non-decreasing deadlines. */
    uint64_t last = 0;
    size_t left = loop.nheap;
    assert_int_equal(left, N - (N + 2) / 3);
    while (loop.nheap) {
        struct loop_timer *top = loop.heap[0];
        assert_true(top->deadline_ns >= last);
        last = top->deadline_ns;
        loop_timer_cancel(&loop, top);
    }
    loop_release(&loop);
}

static int io_events;
static void io_cb(struct loop *loop, struct loop_io *io, uint32_t events)
{
    (void)loop;
    char buf[16];
    if (events & EPOLLIN)
        io_events += (int)read(io->fd, buf, sizeof buf);
}

static void test_fd_readiness_and_wake(void **state)
{
    (void)state;
    struct loop loop;
    assert_int_equal(loop_init(&loop), 0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct loop_io io = {.fd = p[0], .cb = io_cb};
    assert_int_equal(loop_io_add(&loop, &io, EPOLLIN), 0);
    assert_int_equal(write(p[1], "abc", 3), 3);
    io_events = 0;
    assert_int_equal(loop_run_once(&loop, NS_PER_S), 1);
    assert_int_equal(io_events, 3);
    /* A wake returns promptly without running any callback. */
    uint64_t t0 = clock_now_ns();
    loop_wake(&loop);
    assert_int_equal(loop_run_once(&loop, 5 * NS_PER_S), 0);
    assert_true(clock_now_ns() - t0 < 2 * NS_PER_S);
    assert_int_equal(loop_io_del(&loop, &io), 0);
    close(p[0]);
    close(p[1]);
    loop_release(&loop);
}

static int held_timer_fired;
static void held_timer_cb(struct loop *loop, struct loop_timer *t)
{
    (void)loop;
    (void)t;
    held_timer_fired++;
}

/* loop_run_once_held: a readable descriptor does not end the sleep (the timer, the bound or a
 * wake does), and what it has is run in the same call as the timer. */
static void test_held_wait(void **state)
{
    (void)state;
    struct loop loop;
    assert_int_equal(loop_init(&loop), 0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct loop_io io = {.fd = p[0], .cb = io_cb};
    assert_int_equal(loop_io_add(&loop, &io, EPOLLIN), 0);
    /* readable before the call, a timer 20 ms ahead: both run in one call, not before the timer */
    struct loop_timer t;
    loop_timer_init(&t, held_timer_cb, NULL);
    uint64_t t0 = clock_now_ns();
    loop_timer_arm(&loop, &t, t0 + 20 * NS_PER_MS);
    assert_int_equal(write(p[1], "abcd", 4), 4);
    io_events = held_timer_fired = 0;
    assert_int_equal(loop_run_once_held(&loop, NS_PER_S), 2);
    assert_true(clock_now_ns() >= t0 + 20 * NS_PER_MS);
    assert_int_equal(io_events, 4);
    assert_int_equal(held_timer_fired, 1);
    /* no timer: the bound ends the sleep, then the descriptor's bytes are read */
    assert_int_equal(write(p[1], "ab", 2), 2);
    io_events = 0;
    t0 = clock_now_ns();
    assert_int_equal(loop_run_once_held(&loop, 10 * NS_PER_MS), 1);
    assert_true(clock_now_ns() >= t0 + 10 * NS_PER_MS);
    assert_int_equal(io_events, 2);
    /* a wake ends it early, nothing to run */
    t0 = clock_now_ns();
    loop_wake(&loop);
    assert_int_equal(loop_run_once_held(&loop, 5 * NS_PER_S), 0);
    assert_true(clock_now_ns() - t0 < 2 * NS_PER_S);
    assert_int_equal(loop_io_del(&loop, &io), 0);
    close(p[0]);
    close(p[1]);
    loop_release(&loop);
}

static void test_rng_reproducible_and_distributions(void **state)
{
    (void)state;
    struct rng a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    for (int i = 0; i < 100; i++)
        assert_int_equal(rng_next(&a), rng_next(&b));
    rng_seed(&b, 43);
    assert_int_not_equal(rng_next(&a), rng_next(&b));

    enum { N = 200000 };
    double sum_u = 0, sum_e = 0;
    int hits = 0;
    for (int i = 0; i < N; i++) {
        double u = rng_uniform(&a);
        assert_true(u >= 0.0 && u < 1.0);
        sum_u += u;
        sum_e += rng_exp(&a, 10.0);
        hits += rng_bernoulli(&a, 0.1);
        assert_true(rng_below(&a, 7) < 7);
    }
    /* Tolerances are ~6 standard errors: the test fails only if the generator is wrong. */
    assert_true(fabs(sum_u / N - 0.5) < 6 * sqrt(1.0 / 12 / N));
    assert_true(fabs(sum_e / N - 10.0) < 6 * 10.0 / sqrt(N));
    assert_true(fabs((double)hits / N - 0.1) < 6 * sqrt(0.09 / N));
    assert_true(rng_pareto(&a, 2.0, 1.5) >= 2.0);
    assert_true(rng_lognormal(&a, 0, 1) > 0);
}

static void test_strerror(void **state)
{
    (void)state;
    assert_string_equal(knee_strerror(KNEE_ENAN), "value is not a number");
    assert_string_equal(knee_strerror(-ENOENT), strerror(ENOENT));
    assert_string_equal(knee_strerror(0), "success");
    assert_string_equal(knee_strerror(-999999), "unknown error");
}

static void test_escape(void **state)
{
    (void)state;
    char buf[128];
    /* CR, LF, TAB by name; ESC, DEL, NUL-free C0 and a C1 control as \xNN; UTF-8 kept */
    const char in[] = "a\r\nb\tc\x1b[31md\x7f \xc2\x9b \xe2\x80\x94 \\x";
    unsigned long n = knee_escape(buf, sizeof buf, in, sizeof in - 1);
    assert_string_equal(buf, "a\\r\\nb\\tc\\x1b[31md\\x7f \\xc2\\x9b \xe2\x80\x94 \\x");
    assert_int_equal(n, strlen(buf));
    /* invalid UTF-8: a lone continuation byte, a truncated sequence, an overlong form, a surrogate */
    const char bad[] = "\x80|\xe2\x80|\xc0\xaf|\xed\xa0\x80";
    knee_escape(buf, sizeof buf, bad, sizeof bad - 1);
    assert_string_equal(buf, "\\x80|\\xe2\\x80|\\xc0\\xaf|\\xed\\xa0\\x80");
    /* too small: cut, NUL-terminated, the needed length returned */
    char small[4];
    assert_int_equal(knee_escape(small, sizeof small, "\n\n", 2), 4);
    assert_string_equal(small, "\\n\\");
    assert_int_equal(knee_escape(NULL, 0, "\x1b", 1), 4);

    /* knee_report: one line, prefix as given, the message escaped */
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    assert_non_null(f);
    knee_report(f, "knee stats: ", "x.csv:3: latency_ms: '%s' is not a number", "1\r\n2\x1b");
    fclose(f);
    assert_string_equal(mem, "knee stats: x.csv:3: latency_ms: '1\\r\\n2\\x1b' is not a number\n");
    free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timers_fire_in_deadline_order),
        cmocka_unit_test(test_after_each_callback),
        cmocka_unit_test(test_timer_heap_many),
        cmocka_unit_test(test_fd_readiness_and_wake),
        cmocka_unit_test(test_held_wait),
        cmocka_unit_test(test_rng_reproducible_and_distributions),
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
