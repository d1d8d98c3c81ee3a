/* knee lab capacity (the capacity article): against a server that stalls now and then (knee
 * serve's stall preset: pool 4 × 2 ms, capacity 2,000/s, a lock held 300 ms at random
 * moments), the article's method — double the rate while a window passes, then bisect; the
 * median of the repetitions — is run several times, then knee's fixed ladder with a majority
 * vote as many times; both sets of answers are printed side by side with their spread, and
 * sentences computed from this run; then the closed-loop cross-check against knee serve's flat
 * preset in both regimes (latency-bound and throughput-bound) with the second method each
 * uses. The search exists here only to be shown failing: it is
 * not an option of knee capacity. Kept out of lab.h so that this experiment's file and its
 * registry row are the whole change to src/lab. */
#ifndef KNEE_LAB_LAB_CAPACITY_H
#define KNEE_LAB_LAB_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lab/lab.h"

#define LAB_CAP_MAX_RUNS 5
#define LAB_CAP_REPS 3
#define LAB_CAP_MAX_WINDOWS 16 /* per search repetition (a safety cap; a search needs about 7) */
#define LAB_CAP_MAX_RATES 8

/* One search repetition: the windows it asked for, in order, and its answer. */
struct lab_cap_search {
    size_t nwindows;
    double rate[LAB_CAP_MAX_WINDOWS];
    bool pass[LAB_CAP_MAX_WINDOWS];
    bool stalled[LAB_CAP_MAX_WINDOWS]; /* the server's lock was held >= 100 ms during it (Server-Timing lock) */
    double answer;                     /* the highest rate that passed (0: none) */
};

/* The cross-check's regime (issue 25): knee serve's flat preset (10 ms on one worker) under one
 * ladder of Poisson windows and one closed loop (2 s windows, 1 s with --quick), both judged
 * against two SLOs: p90<50ms (five service times: latency-bound) and p90<100ms (ten: within a
 * window's queue nearly to the service's rate, throughput-bound). Per SLO: knee
 * capacity's own cross-check over those windows (capacity_queue_run, capacity_compare,
 * capacity_judge). */
#define LAB_CAP_FLAT_RATES 7
#define LAB_CAP_CLOSED_STEPS 7 /* 1, 2, 4, ... 64 connections */
#define LAB_CAP_NSLO 2
struct lab_cap_regime {
    char slo[32];
    double ladder;      /* the ladder's capacity (0: not even the lowest rate held) */
    double closed_loop; /* the closed loop's highest throughput within the SLO (NAN: none) */
    double bound;       /* the closed loop's highest throughput */
    double queue;       /* the queue model's capacity (NAN: not run) */
    uint32_t servers;   /* the queue model's servers */
    int regime;         /* enum capacity_regime */
    bool agree, valid;  /* the cross-check, the verdict */
};

struct lab_capacity_result {
    size_t nruns; /* runs of each method */
    double slo_p99_ms;
    double lag_limit_ms;
    /* the article's method */
    struct lab_cap_search search[LAB_CAP_MAX_RUNS][LAB_CAP_REPS];
    double search_median[LAB_CAP_MAX_RUNS];
    /* knee's ladder */
    size_t nrates;
    double rates[LAB_CAP_MAX_RATES];
    bool held[LAB_CAP_MAX_RUNS][LAB_CAP_REPS][LAB_CAP_MAX_RATES];
    bool stalled[LAB_CAP_MAX_RUNS][LAB_CAP_REPS][LAB_CAP_MAX_RATES];
    double ladder_rep[LAB_CAP_MAX_RUNS][LAB_CAP_REPS]; /* each repetition alone: highest held, every lower held */
    double ladder_vote[LAB_CAP_MAX_RUNS];              /* the vote's capacity (0: not even the lowest rate) */
    size_t ladder_nonmono[LAB_CAP_MAX_RUNS];           /* rates held above a failed one */
    double pooled;                                     /* the vote over every ladder repetition of every run */
    uint64_t stalls;                                   /* pauses the server made during the experiment */
    double loadavg_before, loadavg_after;              /* the machine's 1-minute load average */
    /* the cross-check's regime on the flat server */
    double flat_rates[LAB_CAP_FLAT_RATES];
    struct lab_cap_regime regime[LAB_CAP_NSLO];
};

/* Run the experiment (o->quick: 2 runs of each method with 0.5 s windows; default 3 runs, 1 s
 * windows; o->duration_ns sets the window), then the regime part on a second server. 0 or a
 * negative code (message printed). */
int lab_capacity(const struct lab_options *o, struct lab_capacity_result *r);

#endif
