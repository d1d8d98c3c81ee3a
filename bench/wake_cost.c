/* What one wake-up costs a thread on this machine (docs/INTERNALS.md "Open loop: what a send
 * costs"), the way knee run's load thread wakes: epoll_pwait2 with a nanosecond timeout on an
 * epoll set (a timer wake), or with no timeout until another thread writes an eventfd (an IO
 * wake, as a response arrives), or polling the clock until the deadline (--spin). Reports the
 * waiting thread's CPU time (CLOCK_THREAD_CPUTIME_ID: user + system) per wake and how late
 * the wakes were. Not part of knee: built and run by bench/wake_cost.sh.
 *
 *   wake_cost MODE GAP_US COUNT [SLACK_US]
 *   MODE: sleep (timer wake every GAP), io (eventfd written every GAP by another thread),
 *         spin (poll the clock until each deadline) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct writer {
    int efd;
    uint64_t gap_ns;
    long count;
};

static void *write_every_gap(void *arg)
{
    struct writer *w = arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    uint64_t t = now_ns(CLOCK_MONOTONIC);
    for (long i = 0; i < w->count; i++) {
        t += w->gap_ns;
        struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ULL), .tv_nsec = (long)(t % 1000000000ULL)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        uint64_t one = 1;
        if (write(w->efd, &one, sizeof one) != sizeof one)
            return NULL;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: wake_cost sleep|io|spin GAP_US COUNT [SLACK_US]\n");
        return 2;
    }
    const char *mode = argv[1];
    uint64_t gap_ns = (uint64_t)(atof(argv[2]) * 1000);
    long count = atol(argv[3]);
    uint64_t slack_ns = argc > 4 ? (uint64_t)(atof(argv[4]) * 1000) : 1;
    prctl(PR_SET_TIMERSLACK, slack_ns ? (unsigned long)slack_ns : 1UL, 0UL, 0UL, 0UL);
    int ep = epoll_create1(0);
    int efd = eventfd(0, EFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN}, out[8];
    epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
    pthread_t th;
    struct writer wr = {.efd = efd, .gap_ns = gap_ns, .count = count};
    bool io = strcmp(mode, "io") == 0, spin = strcmp(mode, "spin") == 0;
    if (io)
        pthread_create(&th, NULL, write_every_gap, &wr);
    uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID), t = now_ns(CLOCK_MONOTONIC), late = 0, wakes = 0;
    for (long i = 0; i < count; i++) {
        t += gap_ns;
        uint64_t now;
        if (io) {
            epoll_pwait2(ep, out, 8, NULL, NULL);
            uint64_t v;
            if (read(efd, &v, sizeof v) < 0)
                continue;
            wakes++;
            i += (long)v - 1; /* writes that came together count as one wake */
            t += (v - 1) * gap_ns;
            now = now_ns(CLOCK_MONOTONIC);
        } else if (spin) {
            while ((now = now_ns(CLOCK_MONOTONIC)) < t) {
            }
        } else {
            for (;;) {
                now = now_ns(CLOCK_MONOTONIC);
                if (now >= t)
                    break;
                uint64_t w = t - now;
                struct timespec ts = {.tv_sec = (time_t)(w / 1000000000ULL), .tv_nsec = (long)(w % 1000000000ULL)};
                epoll_pwait2(ep, out, 8, &ts, NULL);
                wakes++;
            }
        }
        late += now - t;
    }
    uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    if (io)
        pthread_join(th, NULL);
    printf("%s gap %.0f us slack %.0f us: %ld periods, %.2f wakes each, CPU %.2f us per period, %.2f us per "
           "wake, late %.1f us on average\n",
           mode, gap_ns / 1e3, slack_ns / 1e3, count, (double)wakes / (double)count, cpu / 1e3 / (double)count,
           wakes ? cpu / 1e3 / (double)wakes : 0.0, late / 1e3 / (double)count);
    return 0;
}
