/* knee capacity as a library: how much load a service carries within its SLO, measured so
 * that one bad window cannot steer the answer (the capacity article, docs/INTERNALS.md).
 *
 *   - a fixed ladder of rates, the same in every repetition (no search);
 *   - before each repetition a calibration probe: 115% of the ladder's top rate sent to a
 *     target that runs no application code; a repetition whose probe falls short measured
 *     the generator, not the candidate, and is excluded from the vote;
 *   - a rate is held when a strict majority of the valid repetitions held it; the capacity is
 *     the highest held rate with every lower rate held (a held rate above a failed one is
 *     named as non-monotone, never used);
 *   - an environment record next to every repetition (/proc: CPU shares, load, the busiest
 *     other processes, knee's own CPU time);
 *   - a second method: a closed loop at 1, 2, 4, ... connections, whose highest throughput
 *     within the SLO must agree with the ladder, else the verdict is INVALID.
 *
 * A step is one open-loop run of the load engine (load/run.h, in-process, run_execute) at one
 * rate of the ladder, judged on its run record (record/record.h): held when the generator
 * delivered it (capacity_step_delivered) and every SLO term passed (record/threshold.h,
 * evaluated on the record). Only capacity/run.c drives the engine; the rest reads records.
 *
 * The vote, the cross-check's comparison and the verdict are pure functions over a struct
 * capacity_result, so they are tested with synthetic step results. capacity_run does the
 * measuring; the printers (capacity_print_text, capacity_write_json) only print.
 *
 * Rates are per second, times in the names' units. Nothing here is thread-safe: one
 * capacity_run at a time per struct. */
#ifndef KNEE_CAPACITY_CAPACITY_H
#define KNEE_CAPACITY_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/record.h"
#include "record/threshold.h"

struct capacity_config;
struct run_config;  /* load/run.h: the engine's configuration (capacity/run.c drives the engine) */
struct plan_target; /* load/run.h */
struct run_stop;    /* load/run.h */

#define CAPACITY_MAX_RATES 32                             /* rungs of a ladder */
#define CAPACITY_MAX_REPS 25                              /* --reps */
#define CAPACITY_DEFAULT_STEPS 7                          /* --steps (the article's seven rates per cell) */
#define CAPACITY_DEFAULT_REPS 3                           /* --reps */
#define CAPACITY_DEFAULT_STEP_NS (5ULL * 1000000000ULL)   /* --step */
#define CAPACITY_DEFAULT_WARMUP_NS (1ULL * 1000000000ULL) /* --warmup */
#define CAPACITY_DEFAULT_SETTLE_NS (1ULL * 1000000000ULL) /* --settle */
#define CAPACITY_PROBE_SHARE 1.15                         /* the probe's rate: 115% of the ladder's top rate */
#define CAPACITY_DELIVERED 0.99                           /* achieved send rate / planned below this: not delivered */
#define CAPACITY_DEFAULT_AGREE 0.10                       /* --agree: the methods may differ by 10% */
#define CAPACITY_GEOMETRIC_SPAN 8.0                       /* --max alone, geometric: the lowest rate is max / 8 */
#define CAPACITY_BUSY_SHARE 0.25                          /* other processes above this share of all CPUs: "busy" */
#define CAPACITY_STEAL_SHARE 0.05                         /* steal above this share of a CPU's time: "busy" */
#define CAPACITY_TOP_PROCS 3                              /* the busiest other processes kept per repetition */
#define CAPACITY_MAX_CPUS 64                              /* CPUs kept in an environment record (the rest summed) */
#define CAPACITY_CLOSED_MAX_STEPS 12                      /* closed loop: 1, 2, 4, ... 2048 connections at most */
#define CAPACITY_CLOSED_BEYOND 4.0                        /* closed loop stops beyond 4x the ladder's top rate */
#define CAPACITY_MAX_REASONS 8
#define CAPACITY_REASON_MAX 480

/* ---- the ladder ------------------------------------------------------------------------- */

/* "500,1000,2k": up to CAPACITY_MAX_RATES rates (each as --rate takes it), strictly
 * increasing. Returns 0 with rates[0..*n) or KNEE_EINVAL with a reason in err. */
int capacity_ladder_parse(const char *list, double *rates, size_t *n, char *err, size_t errlen);

/* steps rates from min to max, both included: geometric (each rate the previous times a
 * constant) or linear (a constant difference). min 0 means the default lowest rate: max / 8
 * for a geometric ladder, max / steps for a linear one. Rates are rounded to 3 significant
 * digits (max and min exactly as given) and must stay strictly increasing. Returns 0 or
 * KNEE_EINVAL with a reason naming --max, --min or --steps. */
int capacity_ladder_make(double min, double max, size_t steps, bool linear, double *rates, char *err, size_t errlen);

/* ---- one step --------------------------------------------------------------------------- */

/* One measured window: a rate of the ladder in one repetition, a probe, or one concurrency of
 * the closed loop. Rates are the record's, by event time over the window (record/rates.c). */
struct capacity_step {
    bool ran;              /* measured to its end: not skipped, not interrupted, accounting intact */
    bool held;             /* ran, some request ok, delivered (open loop) and every SLO term passed */
    bool delivered;        /* open loop: the generator sent what was planned (capacity_step_delivered) */
    double planned;        /* open loop: requests planned in the window per second (rates.planned: the plan's
                              own draws, so a Poisson plan varies around the rung's rate); closed loop: 0 */
    double achieved;       /* open loop: requests sent in the window per second (rates.sent); closed loop:
                              responses completed in the window per second (rates.completed) */
    double p50_ms, p99_ms; /* latency of the SLO's group (capacity_latency_group: ok by default) */
    double lag_p99_ms;
    double error_rate;                /* failed among sent (record/threshold's error_rate); NAN when nothing was sent */
    uint64_t requests;                /* requests measured (planned after the warm-up) */
    char reason[CAPACITY_REASON_MAX]; /* why it was not held (empty when held) */
};

/* Did the generator deliver this open-loop run? The one place that reads the engine's rate
 * fields, so that a change of their definitions is a one-place change. It reads
 * run_record.all.rates (docs/FORMATS.md, "Rates": events counted by time over the window),
 * all.lag and a generator verdict: delivered when the sends inside the window are at least
 * capacity_delivered_floor of the requests planned inside it (rates.sent >= floor x
 * rates.planned) and the verdict is not "limited". gen NULL: the engine's own, res->generator
 * (record_generator_judge: short sends, or a lag that shapes the latency, or over --lag-limit).
 * *achieved_per_s gets rates.sent; why (may be NULL) the reason when not delivered. */
bool capacity_step_delivered(const struct run_record *res, const struct run_generator_verdict *gen,
                             double *achieved_per_s, char *why, size_t whylen);

/* The share of the window's plan that must be sent inside it: 99% (CAPACITY_DELIVERED) less
 * the share that the lag carries past the window's end (lag max / window: requests planned
 * in the window's last lag are sent after it; at a steady lag the warm-up's late sends make up
 * for them, when the lag grew they do not). The lag itself is the generator verdict's. */
double capacity_delivered_floor(const struct run_record *res);

/* The latency group whose p50 and p99 a step shows: that of the first SLO term on latency
 * (p99<10ms: ok; all.p99<10ms: every completed request), RUN_GROUP_OK without one, so a
 * failed step's printed p99 is the value its SLO term measured (on the merged targets).
 * THR_GROUP_ALL or an enum run_group; its name ("ok", "all", "timeout", ...). */
int capacity_latency_group(const struct run_threshold *slo, size_t nslo);
const char *capacity_latency_group_name(int group);

/* Fill *out from a finished open-loop (open_loop true) or closed-loop run: the latency
 * summary of the SLO's group (p50, p99), lag, error rate, delivery (open loop only) and each
 * SLO term evaluated on a copy of slo[i] (the caller's terms are not changed). held needs
 * a request that ended ok (run_record.no_ok false) and every term to pass; reason names the
 * terms that failed, with their measured values. */
void capacity_step_eval(const struct run_record *res, bool open_loop, const struct run_threshold *slo, size_t nslo,
                        struct capacity_step *out);

/* A probe window judged: delivered as a step is, but its generator verdict is
 * record_generator_judge's with lag_limit_ms as the hard limit (the probe's own latency is the
 * null target's, nothing the relative rule could weigh the lag against), and no SLO.
 * timer_slack_ms: the --timer-slack the probe ran with (0: none); as in every step's verdict,
 * only the lag beyond it counts. */
void capacity_probe_eval(const struct run_record *res, double lag_limit_ms, double timer_slack_ms,
                         struct capacity_step *out);

/* The probe's lag limit in ms: --probe-lag-limit, else --lag-limit, else 10%
 * (RUN_LAG_LATENCY_SHARE, knee run's share for a lag that shapes the latency) of the SLO's
 * tightest latency bound, else (no latency term) the time of RUN_LAG_BURST_GAPS planned sends
 * at the probe rate (knee run's burst rule); never below RUN_LAG_FLOOR_NS. source (may be
 * NULL) gets where it came from, for people. */
double capacity_probe_lag_limit_ms(const struct capacity_config *cfg, char *source, size_t len);

/* ---- the environment record --------------------------------------------------------------- */

struct capacity_cpu_share {
    double busy, iowait, steal; /* shares of the CPU's time over the repetition */
};

struct capacity_proc {
    int pid;
    char comm[32];
    double cpu_s; /* CPU time used during the repetition */
};

struct capacity_env {
    bool have;           /* recorded (false: /proc unreadable, or the repetition never ran) */
    char start_wall[40]; /* ISO 8601 UTC, the repetition's start */
    double wall_s;       /* the repetition's length */
    double loadavg_before[3], loadavg_after[3];
    size_t ncpus; /* CPUs in cpu[] (at most CAPACITY_MAX_CPUS) */
    struct capacity_cpu_share cpu[CAPACITY_MAX_CPUS];
    double knee_cpu_s;   /* this process (the generator and an in-process probe target) */
    double others_share; /* CPU time of everything else / (wall × CPUs) */
    size_t nprocs;
    struct capacity_proc top[CAPACITY_TOP_PROCS]; /* the busiest other processes */
    bool busy; /* others_share > CAPACITY_BUSY_SHARE, or a CPU's steal > CAPACITY_STEAL_SHARE */
};

/* A snapshot at the start of a repetition (heap inside; release it with capacity_env_end). */
struct capacity_snap_proc;
struct capacity_env_snap {
    uint64_t mono_ns, wall_ns;
    double loadavg[3];
    double self_cpu_s;
    size_t ncpus;
    uint64_t *cpu_ticks; /* per CPU: busy, iowait, steal, total (4 per CPU) */
    size_t nprocs;
    struct capacity_snap_proc *procs; /* sorted by pid */
};

/* Take the start snapshot (/proc/stat, /proc/loadavg, /proc/[pid]/stat, getrusage). Never
 * fails: what cannot be read is left out. */
void capacity_env_begin(struct capacity_env_snap *s);
/* Take the end snapshot, fill *out with the differences, and release s. */
void capacity_env_end(struct capacity_env_snap *s, struct capacity_env *out);

/* ---- repetitions and the vote -------------------------------------------------------------- */

struct capacity_rep {
    bool ran;                           /* started (the probe at least) */
    bool valid;                         /* the probe passed and every step ran */
    char excluded[CAPACITY_REASON_MAX]; /* why it does not vote (empty when valid) */
    struct capacity_step probe;         /* planned = the probe rate */
    bool between_ran;                   /* --between ran before it */
    int between_status;                 /* its exit status (-1: killed by a signal or not run) */
    double between_s;                   /* its wall time */
    struct capacity_env env;
    struct capacity_step step[CAPACITY_MAX_RATES]; /* by rung */
};

struct capacity_rung {
    double rate;
    size_t held_by;    /* valid repetitions that held it */
    size_t valid_reps; /* valid repetitions that measured it */
    bool held;         /* held_by > valid_reps / 2 */
    /* medians over the valid repetitions (NAN when none) */
    double achieved, p50_ms, p99_ms, error_rate;
};

struct capacity_vote {
    struct capacity_rung rung[CAPACITY_MAX_RATES];
    size_t nvalid;     /* valid repetitions */
    int cap_index;     /* the capacity's rung; -1: not even the lowest rate was held */
    double capacity;   /* rates[cap_index], NAN when cap_index is -1 */
    double bracket_hi; /* the next rung (the first not held above), INFINITY when the top held */
    bool top_held;     /* the capacity is the top of the ladder: the real one may be higher */
    size_t nnonmono;   /* rungs held above a failed one */
    int nonmono[CAPACITY_MAX_RATES];
};

/* ---- the closed-loop cross-check ------------------------------------------------------------ */

struct capacity_closed_step {
    uint32_t connections;
    struct capacity_step s; /* achieved = completed responses per second */
};

/* ---- the queue model: the second method where the capacity is latency-bound (capacity/queue.c) */

/* A closed loop never builds the queue that open-loop arrivals build: where the SLO is within a
 * few service times, the open loop's capacity lies below the closed loop's throughput, which then
 * only bounds it from above. There the second method is a trace-driven queue: the service times
 * the closed loop measured (its first step: each request alone in the service, or nearly) drawn
 * for the arrivals the ladder planned (the same --arrivals and --seed, each target's share of a
 * rate) in a simulated FCFS queue of `servers` servers, each window as the ladder's windows are
 * (a warm-up, then the measured window, from an empty queue, the ladder's own planned arrivals:
 * its repetitions differ only by the service), the SLO's response-time terms evaluated as a
 * step's are, and a rate held when a strict majority of the windows meet them. */

#define CAPACITY_QUEUE_WINDOWS 21 /* simulated windows per rate (the first replays the ladder's own arrivals) */
#define CAPACITY_QUEUE_MAX_ARRIVALS 400000 /* per rate over its windows: fewer windows above it (at least one) */
#define CAPACITY_QUEUE_MAX_SERVERS 100000  /* servers the model may assume */
#define CAPACITY_QUEUE_SEARCH_STEPS                                                                                    \
    18 /* bisections for the predicted capacity (a resolution of 2^-18 of its range)                                   \
        */

/* An empirical distribution of service times: an HdrHistogram's buckets, each at its median
 * equivalent value (heap; capacity_service_release). n 0: no samples. */
struct capacity_service {
    size_t n;          /* distinct values */
    int64_t *value_ns; /* ascending */
    uint64_t *cum;     /* cum[i]: samples at or below value_ns[i]; cum[n-1] the total */
    double mean_ms, p50_ms, p99_ms;
};

/* The distribution of h's recorded values (values above its range left out). 0, or KNEE_EINVAL
 * with *out empty (n 0) when h holds nothing. */
int capacity_service_from_hdr(const struct hdr *h, struct capacity_service *out);
void capacity_service_release(struct capacity_service *s);

/* Is this SLO term one the queue can predict: a statistic (a percentile, mean, stdev, min or max,
 * not a count) of the response time (latency, service or ttfb; not lag or connect)? */
bool capacity_queue_predicts(const struct run_threshold *t);

/* What the queue is fed (borrowed). Rates per second, times in ns. */
struct capacity_queue_model {
    bool poisson; /* --arrivals */
    uint64_t seed;
    size_t ntargets;
    double share[RUN_MAX_TARGETS];          /* each target's share of a rate (they add up to 1) */
    const struct capacity_service *service; /* [ntargets], each target's service times; NULL or n 0: `all` */
    const struct capacity_service *all;     /* every target's, merged */
    uint32_t servers;                       /* c >= 1: requests in service at once (FCFS, one queue) */
    double scale;                           /* every service time drawn is multiplied by it (> 0) */
    uint64_t warmup_ns, window_ns;          /* each simulated window: the ladder's warm-up and step */
    const struct run_threshold *slo;        /* the terms capacity_queue_predicts accepts are judged */
    size_t nslo;
    size_t windows; /* windows per rate; 0: CAPACITY_QUEUE_WINDOWS */
    bool replay;    /* every window plans the ladder's arrivals (seed); false: window w > 0 its own */
};

/* The prediction at one rate. */
struct capacity_queue_point {
    double rate;
    size_t windows, held_by; /* simulated, and meeting every predicted term */
    bool held;               /* held_by > windows / 2 */
    double value_ms;         /* the first predicted term's statistic: the median over the windows (NAN: none) */
};

/* Simulate m's windows at rate (> 0) into *out: window w replays the plan's arrival streams with
 * seed m->seed for w = 0 (exactly the ladder's requests: plan/schedule with plan_stream_seed per
 * target), and for the others too with m->replay, else a seed derived from it; service times
 * drawn with their own generator, seeded per window. Deterministic. 0, or KNEE_EINVAL (no
 * service times, no predicted term, rate <= 0). */
int capacity_queue_at(const struct capacity_queue_model *m, double rate, struct capacity_queue_point *out);

/* The highest rate in (0, hi] that capacity_queue_at holds, by bisection
 * (CAPACITY_QUEUE_SEARCH_STEPS; each rate's windows share their random draws, so a higher rate
 * only compresses the same arrivals); hi itself when held there (*at_hi true), 0 when no rate
 * above hi / 2^steps is. NAN on the errors of capacity_queue_at. */
double capacity_queue_capacity(const struct capacity_queue_model *m, double hi, bool *at_hi);

/* Which bound decides the capacity (capacity_compare). */
enum capacity_regime {
    CAPACITY_REGIME_UNDECIDED,  /* no queue model (no service times to draw): the closed loop is the second method */
    CAPACITY_REGIME_THROUGHPUT, /* the SLO tolerates the open loop's queue up to the closed loop's throughput */
    CAPACITY_REGIME_LATENCY,    /* the queue breaks the SLO well below that throughput */
};
const char *capacity_regime_name(enum capacity_regime g); /* "throughput-bound", "latency-bound", "undecided" */

/* The queue model of a measurement (capacity_queue_run). */
struct capacity_queue {
    bool ran;
    char why_not[CAPACITY_REASON_MAX]; /* when not ran */
    bool poisson;
    uint64_t seed;
    int term;               /* the first predicted SLO term (its index in the config's slo), -1 none */
    bool no_latency_term;   /* the SLO has no term the queue predicts (capacity_queue_predicts) */
    char term_stat[32];     /* its statistic for people: "p90", "mean" */
    uint32_t connections;   /* the closed loop's first step, whose latencies are the service times */
    double one_conn_ms;     /* their mean */
    double saturation;      /* the closed loop's highest throughput over its steps (/s) */
    uint32_t servers;       /* max(1, round(saturation x one_conn_ms)): requests in service at saturation (Little) */
    double scale;           /* servers / (saturation x one_conn_ms): the model's servers complete `saturation`/s */
    double service_mean_ms; /* the model's service time (after the scale) */
    double service_p50_ms, service_p99_ms;
    size_t windows;            /* per rate (fewer at a rate whose windows exceed CAPACITY_QUEUE_MAX_ARRIVALS) */
    double window_s, warmup_s; /* each window, as the ladder's */
    struct capacity_queue_point rung[CAPACITY_MAX_RATES];
    int cap_index;   /* the highest rung held with every lower one held, -1 none */
    double capacity; /* the highest rate the queue holds (capacity_queue_capacity up to 2 x saturation); NAN: not run */
    bool capacity_at_hi; /* held at 2 x saturation: at least that */
};

struct capacity_config;
struct capacity_result;
/* The queue model of r (after the closed loop ran, before capacity_compare): the servers and
 * scale from the closed loop's steps, r->service as the service times, cfg's arrivals, seed,
 * targets' weights, windows and SLO; every rung predicted, then the capacity. When it cannot
 * (no cross-check, no predicted SLO term, no latency in the closed loop's first step) ran stays
 * false with why_not. */
void capacity_queue_run(const struct capacity_config *cfg, struct capacity_result *r);

struct run_record;
/* Keep the service times of the closed loop's first step rr into res (once: nothing when res
 * already has them): the latencies of the SLO's group (capacity_latency_group), per target and
 * merged (owned by res, capacity_result_release). */
void capacity_service_keep(const struct capacity_config *cfg, const struct run_record *rr, struct capacity_result *res);

struct capacity_cross {
    bool ran; /* false: --no-cross-check, or never reached (interrupted) */
    size_t nsteps;
    struct capacity_closed_step step[CAPACITY_CLOSED_MAX_STEPS];
    double closed_loop; /* the highest throughput whose step held the SLO; NAN when none held */
    int best;           /* its step, or -1 */
    bool beyond;        /* stopped because it exceeded CAPACITY_CLOSED_BEYOND × the top rate */
    struct capacity_queue queue;
    /* the comparison (capacity_compare) */
    double bound;     /* the closed loop's highest throughput over every step that ran: no open loop carries more */
    int bound_step;   /* its step, or -1 (NAN bound) */
    bool above_bound; /* the ladder's capacity exceeds bound by more than agree_share: INVALID in every regime */
    enum capacity_regime regime;
    char regime_why[CAPACITY_REASON_MAX]; /* the regime with the numbers that decided it */
    double second;     /* what the ladder is compared with: the queue's capacity (latency-bound), else closed_loop */
    double relative;   /* second / capacity − 1 (NAN without both) */
    double difference; /* second's distance from the ladder's bracket [capacity, bracket_hi] relative to it; 0 inside */
    double agree_share; /* the threshold it was compared with */
    bool agree;         /* |difference| ≤ agree_share and not above_bound */
};

/* ---- the whole result --------------------------------------------------------------------- */

struct capacity_verdict {
    bool valid;
    double capacity; /* per second; NAN when invalid or below the ladder */
    bool require_given, require_met;
    int exit_code; /* 0 valid, 99 --require not met, 3 invalid */
    size_t nreasons;
    char reasons[CAPACITY_MAX_REASONS][CAPACITY_REASON_MAX]; /* why invalid, or notes when valid */
};

struct capacity_result {
    size_t nrates;
    double rates[CAPACITY_MAX_RATES];
    size_t nreps;
    struct capacity_rep *reps; /* heap, nreps */
    struct capacity_vote vote;
    struct capacity_cross cross;
    struct capacity_verdict verdict;
    /* the service times: the latencies (of the SLO's group) of the closed loop's first step, per
     * target and merged (capacity/run.c; owned, capacity_result_release) */
    size_t nservice;
    struct capacity_service *service;
    struct capacity_service service_all;
    bool interrupted; /* Ctrl-C (the stop handle): what was measured is kept */
    double probe_rate;
    double probe_lag_limit_ms; /* capacity_probe_lag_limit_ms */
    char probe_target[256];    /* the probe's URL, and "(in-process knee serve --preset null)" */
    double elapsed_s;
    uint64_t steps_done, steps_total; /* the ladder's windows (probes and rungs): measured / planned */
    int out_error;                    /* the first error writing --out DIR or --hlog (-errno); 0 none */
    char out_error_msg[256];
};

/* Space for nreps repetitions of nrates rungs (zeroed) in *r. Returns 0 or KNEE_EINVAL. */
int capacity_result_init(struct capacity_result *r, const double *rates, size_t nrates, size_t nreps);
void capacity_result_release(struct capacity_result *r);

/* The vote over r->reps (valid repetitions only): every rung's held_by, valid_reps, held and
 * medians, the capacity, its bracket and the non-monotone rungs, into r->vote. */
void capacity_vote(struct capacity_result *r);

/* Compare r->cross.closed_loop with the vote (capacity_vote first): relative, difference and
 * agree (|difference| ≤ agree_share) into r->cross. The ladder only says that the capacity
 * lies in [capacity, bracket_hi) — its rungs are coarser than any agreement threshold — so
 * the difference is the closed loop's distance from that bracket: 0 inside it, else relative
 * to the nearer end. No capacity (the lowest rung failed): the bracket is [0, rates[0]). */
void capacity_compare(struct capacity_result *r, double agree_share);

/* The verdict (after capacity_vote and capacity_compare): INVALID when interrupted, when
 * fewer than a strict majority of the repetitions are valid, or when the cross-check ran and
 * the methods disagree; else valid, with the capacity (NAN below the ladder). require > 0:
 * exit 99 when a valid capacity is below it (or none was found). Reasons are sentences. */
void capacity_judge(struct capacity_result *r, double require);

/* ---- the measurement -------------------------------------------------------------------------- */

/* Progress while measuring (for a line on a terminal). */
struct capacity_progress {
    const char *phase; /* "probe", "step", "closed loop", "between", "settle" */
    size_t rep, nreps; /* 1-based; 0 in the closed loop */
    size_t step, nsteps;
    double rate;               /* open loop: the planned rate; closed loop: 0 */
    uint32_t connections;      /* closed loop */
    double elapsed_s, total_s; /* within the window */
    double last_p99_ms;        /* the last finished step's p99 (NAN before the first) */
    double now_p99_ms;         /* this second's p99 (NAN when none) */
};
typedef void capacity_progress_fn(void *ctx, const struct capacity_progress *p);

struct capacity_config {
    /* The load: targets, arrivals, threads, timeouts, ... as knee run builds them (cli/runopts;
     * borrowed, it must outlive the config; the command's live metrics install their callbacks
     * on it). Per step: open_loop, rate, duration (warm-up + step), warmup, out_path,
     * on_interval, on_progress and stop are set by capacity_run on a copy; targets must not have
     * their own rate or connections (the ladder shares its rate by weight). The reports read what
     * they print of it through capacity_load_of. */
    struct run_config *base;
    const double *rates; /* the ladder, strictly increasing */
    size_t nrates;
    size_t reps;
    uint64_t step_ns, warmup_ns, settle_ns;
    const char *between;             /* a /bin/sh command before every repetition, or NULL */
    double probe_rate;               /* 0: CAPACITY_PROBE_SHARE × the top rate */
    uint64_t probe_lag_limit_ns;     /* 0: capacity_probe_lag_limit_ms's rule */
    const char *probe_url;           /* NULL: knee serve --preset null started in-process on 127.0.0.1:0 */
    const struct run_threshold *slo; /* parsed against base (run_threshold_parse) */
    size_t nslo;
    bool cross_check;
    double agree;          /* 0: CAPACITY_DEFAULT_AGREE */
    double require;        /* 0: none */
    const char *out_dir;   /* every step's per-request log (binary) and hlog here; NULL none */
    const char *hlog_path; /* one hlog of every step (tags rep<N>/<rate>/<target>); NULL none */
    struct run_stop *stop; /* NULL: cannot be stopped early */
    capacity_progress_fn *on_progress;
    void *progress_ctx;
};

/* What the reports say of the load every window shares (capacity_load_of reads it from cfg->base,
 * so that the printers need nothing of the engine's configuration). Strings borrowed from it. */
struct capacity_load_target {
    const char *name, *method, *url; /* method NULL: GET */
    double weight;                   /* <= 0: 1 */
};
struct capacity_load {
    enum run_arrivals arrivals;
    uint64_t seed;
    uint32_t threads;
    uint64_t timer_slack_ns; /* --timer-slack; 0: none */
    uint64_t lag_limit_ns;   /* --lag-limit; 0: the relative rule */
    size_t ntargets;
    struct capacity_load_target targets[RUN_MAX_TARGETS];
    bool http3; /* --http3: every step, the probe and the closed loop speak HTTP/3 over QUIC */
};
void capacity_load_of(const struct capacity_config *cfg, struct capacity_load *out);

/* The kinds of window capacity_run measures. */
enum capacity_window { CAPACITY_WINDOW_STEP, CAPACITY_WINDOW_PROBE, CAPACITY_WINDOW_CLOSED };

/* The load model of one window, from cfg->base into *c: a rung of the ladder (the open loop at
 * rate), the probe (the open loop at rate to *probe, its lag limit probe_lag_limit_ms; probe
 * must outlive *c) or the closed loop at connections. The open-loop windows keep the base's
 * --timer-slack, --spin and arrivals; the closed loop has none of them. capacity_run adds the
 * window's length, outputs and callbacks. */
void capacity_window_config(const struct capacity_config *cfg, enum capacity_window kind, double rate,
                            uint32_t connections, const struct plan_target *probe, double probe_lag_limit_ms,
                            struct run_config *c);

/* Check cfg without sending anything (the ladder, reps, times, the probe, the targets). 0 or
 * KNEE_EINVAL with one line naming the flag. capacity_run calls it first. */
int capacity_config_check(const struct capacity_config *cfg, char *err, size_t errlen);

/* The ladder's windows (probes and rungs) and the time they take at least (warm-up, window
 * and settle each; drains, --between and the closed loop's up to CAPACITY_CLOSED_MAX_STEPS
 * windows not included). */
void capacity_plan(const struct capacity_config *cfg, uint64_t *windows, double *seconds);

/* Measure: start the probe target (unless --probe), then per repetition --between, the
 * environment record, the probe and every rung (settling before each), then the closed loop,
 * then vote, compare and judge. Returns 0 with *res filled (also when stopped early: the
 * verdict says so), or a negative code with a reason in err when it could not measure
 * (a bad configuration, the probe target could not start, a name did not resolve, --out
 * could not be created). Release *res in both cases. */
int capacity_run(const struct capacity_config *cfg, struct capacity_result *res, char *err, size_t errlen);

/* ---- printing ------------------------------------------------------------------------------ */

/* A rate for people: "1,000" when whole, else one decimal ("12.5"); "-" when not finite. */
const char *capacity_fmt_rate(double per_s, char *buf, size_t len);

/* The report: the ladder × repetitions table, why steps failed, the knee curve, probes,
 * environment, the cross-check and the verdict line. */
void capacity_print_text(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r);

/* The verdict line alone: "capacity 2,000/s at p99<10ms (...)" or "INVALID: ...". */
void capacity_print_verdict(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r);
/* The cross-check section of capacity_print_text alone (a blank line, then its heading): the closed
 * loop's steps, the queue model, the regime, the second method and the bound (knee lab capacity). */
void capacity_print_cross(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r);

/* The ladder and what will run (knee capacity --dry-run). */
void capacity_print_plan(FILE *out, const struct capacity_config *cfg);

/* One progress line: on a terminal it starts with \r, clears the line and ends without a
 * newline (rewritten every second); elsewhere (--progress in a pipe) a plain line as each
 * window starts, nothing in between, no control characters. */
void capacity_print_progress(FILE *out, const struct capacity_progress *p, bool terminal);

/* The JSON document (schema knee-capacity/1, docs/FORMATS.md). */
void capacity_write_json(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r);

#endif
