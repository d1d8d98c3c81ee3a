/* Time sources. Intervals use CLOCK_MONOTONIC only; the wall clock exists solely to stamp
 * outputs (hlog StartTime, JSON environment) with a date a human can read. */
#ifndef KNEE_CORE_CLOCK_H
#define KNEE_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NS_PER_US 1000ULL
#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL

/* Monotonic time in nanoseconds (CLOCK_MONOTONIC). Thread-safe. */
static inline uint64_t clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Wall-clock time in nanoseconds since the Unix epoch (CLOCK_REALTIME). For labels only. */
static inline uint64_t clock_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Nanoseconds to milliseconds as a double (the unit every report prints). */
static inline double ns_to_ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

#endif
