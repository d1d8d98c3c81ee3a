/* How often this CPU stops running a thread that never sleeps (bench/vcpu_stalls.sh): reads
 * CLOCK_MONOTONIC in a loop for SECONDS and counts the gaps between two reads by size. On a
 * VM a gap is the host running something else (or the guest kernel an interrupt): the time
 * a load generator's wake can come late by, whatever its loop does.
 *   vcpu_stalls SECONDS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 5;
    static const uint64_t edge_us[] = {50, 100, 200, 500, 1000, 2000, 5000};
    enum { N = sizeof edge_us / sizeof edge_us[0] };
    uint64_t over[N] = {0}, max = 0;
    uint64_t start = now_ns(), prev = start, end = start + (uint64_t)(secs * 1e9);
    for (;;) {
        uint64_t t = now_ns(), gap = t - prev;
        prev = t;
        if (gap > max)
            max = gap;
        for (int i = 0; i < N && gap > edge_us[i] * 1000; i++)
            over[i]++;
        if (t >= end)
            break;
    }
    printf("%.0f s:", secs);
    for (int i = 0; i < N; i++)
        printf(" >%lu us %lu,", (unsigned long)edge_us[i], (unsigned long)over[i]);
    printf(" longest %.3f ms\n", (double)max / 1e6);
    return 0;
}
