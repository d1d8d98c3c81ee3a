/* The metrics flags shared by knee run, knee capacity and knee serve (cli/metrics_flags.h). */
#include "cli/metrics_flags.h"

#include "cli/push_flags.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "metrics/endpoint.h"
#include "metrics/metrics.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct opt metrics_flags_row(struct metrics_flags *f, enum metrics_flag_id id, enum metrics_for who)
{
    bool run = who == METRICS_FOR_RUN;
    switch (id) {
    case METRICS_FLAG_LISTEN:
        return (struct opt){.name = "metrics-listen",
                            .kind = OPT_STR,
                            .dst = &f->listen,
                            .metavar = "ADDR:PORT",
                            .help = run ? "Prometheus metrics of the run at http://ADDR:PORT/metrics (:PORT is "
                                          "loopback)" METRICS_EP_LIMITS_HELP
                                        : "Prometheus metrics (every server's counters and server time) at "
                                          "http://ADDR:PORT/metrics; :PORT is loopback" METRICS_EP_LIMITS_HELP};
    case METRICS_FLAG_LINGER:
        return (struct opt){.name = "metrics-linger",
                            .kind = OPT_DURATION,
                            .dst = &f->linger_ns,
                            .metavar = "D",
                            .help = run ? "after the run, keep serving its final values for D, so the last scrape "
                                          "sees them (SIGINT/SIGTERM ends the wait)"
                                        : "after the servers stop, keep serving their final counters for D (bare "
                                          "number: s)",
                            .unit_ns = NS_PER_S};
    case METRICS_FLAG_BUCKETS:
    case METRICS_FLAG_COUNT:
        break;
    }
    return (struct opt){.name = "metrics-buckets",
                        .kind = OPT_STR,
                        .dst = &f->buckets,
                        .metavar = "LIST",
                        .help = run ? "histogram bounds, durations (default 1ms,2.5ms,5ms,...,10s); every --threshold "
                                      "duration is added as a bound"
                                    : "bounds of the server-time histogram, durations (default 1ms,2.5ms,5ms,...,10s)"};
}

bool metrics_flags_wanted(const struct metrics_flags *f)
{
    return f->listen || (f->push && f->push->url);
}

int metrics_flags_check(const struct metrics_flags *f, const struct cmd_spec *spec, const double *extra_s,
                        size_t nextra, double *bounds_s, size_t *nbounds)
{
    char err[256];
    *nbounds = 0;
    if (f->push && push_flags_check(f->push, spec))
        return 2;
    if (!f->listen && f->linger_ns)
        return opt_fail(spec, "--metrics-linger: needs --metrics-listen");
    if (!metrics_flags_wanted(f)) {
        if (f->buckets)
            return opt_fail(spec, "--metrics-buckets: needs --metrics-listen or --remote-write");
        return 0;
    }
    if (f->listen && metrics_endpoint_check(f->listen, err, sizeof err))
        return opt_fail(spec, "--metrics-listen: %s", err);
    double given[METRICS_MAX_BOUNDS];
    size_t ngiven = METRICS_DEFAULT_NBOUNDS;
    const double *base = metrics_default_bounds_s;
    if (f->buckets) {
        if (metrics_bounds_parse(f->buckets, given, METRICS_MAX_BOUNDS, &ngiven, err, sizeof err))
            return opt_fail(spec, "--metrics-buckets: %s", err);
        base = given;
    }
    if (metrics_bounds_merge(base, ngiven, extra_s, nextra, bounds_s, METRICS_MAX_BOUNDS, nbounds, err, sizeof err))
        return opt_fail(spec, "--metrics-buckets: %s", err);
    return 0;
}

const char *metrics_flags_format_bounds(const double *bounds_s, size_t n, char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < cap; i++) {
        char d[32];
        units_fmt_duration((uint64_t)llround(bounds_s[i] * 1e9), d, sizeof d);
        off += (size_t)snprintf(buf + off, cap - off, "%s%s", i ? "," : "", d);
    }
    return buf;
}

bool metrics_flags_linger(uint64_t linger_ns)
{
    sigset_t sigs, old;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, &old);
    bool ended = false;
    uint64_t deadline = clock_now_ns() + linger_ns;
    for (uint64_t now = clock_now_ns(); now < deadline && !ended; now = clock_now_ns()) {
        uint64_t wait = deadline - now;
        struct timespec ts = {.tv_sec = (time_t)(wait / NS_PER_S), .tv_nsec = (long)(wait % NS_PER_S)};
        int sig = sigtimedwait(&sigs, NULL, &ts);
        ended = sig == SIGINT || sig == SIGTERM;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ended;
}
