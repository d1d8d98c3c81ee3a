/* The plan of a run: what to send and when, as one value. Targets (each a request and its own
 * rate, connections or weight), the loop (open: arrivals on a schedule; closed: clients that
 * wait for their answers), the rate or ramp, arrivals and seed, connections, think time, the
 * bounds (duration, requests), the warm-up and the shard partition. How a plan runs (timeouts,
 * drain, transport, TLS, HTTP/2, I/O, outputs, callbacks, the stop handle) is the engine's
 * struct run_config (load/run.h), which embeds a plan as cfg->plan.
 *
 * Everything derived from a plan is derived here, once, for every reader: plan_validate (every
 * check of a plan, each message naming the `knee run` flag to fix), plan_shares (each target's
 * part of the rate, of the clients and of --requests for this shard), plan_expected (the
 * counts --dry-run prints), plan_threads (the load threads a plan takes), plan_window_ns (the
 * measurement window's end), plan_sched_init (a load thread's arrival schedule, plan/schedule.h);
 * the shard arithmetic and the plan's fingerprint are in plan/shard.h.
 *
 *   struct plan p = {.targets = t, .ntargets = 2, .open_loop = true, .rate = 1000,
 *                    .duration_ns = 10 * NS_PER_S, .seed = 1};
 *   if (plan_validate(&p, 0, err, sizeof err) == 0 &&
 *       plan_shares(&p, 1, shares, err, sizeof err) == 0) ... shares[i].rate_from ...
 *
 * A plan is built from flags (cli/runopts.c, cli/run_targets.c); --stages is the list of rate
 * segments (plan.stages: plan_stage_start_ns/plan_stage_end_ns say where each lies, for the
 * per-stage results and the abort rules), and a targets file a source of targets (plan_target.
 * source); the functions above stay the only readers of them. A plan is plain data that
 * points into its builder's memory (targets, strings); nothing here allocates for the caller
 * or keeps state: every function is reentrant. */
#ifndef KNEE_PLAN_PLAN_H
#define KNEE_PLAN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/schedule.h"
#include "record/record.h" /* the plan's words the record echoes: enum run_arrivals, RUN_MAX_TARGETS, RUN_MAX_SHARDS */

struct variant_source;

/* Defaults (documented in `knee run --help` and docs/REFERENCE.md). */
#define PLAN_DEFAULT_DURATION_NS (10ULL * 1000000000ULL)
#define PLAN_DEFAULT_CLOSED_CONNECTIONS 8
#define PLAN_DEFAULT_OPEN_CONNECTIONS 10000 /* the open-loop pool cap */
/* The plan's bounds (plan_validate): a load thread plans at most PLAN_MAX_RATE_PER_THREAD
 * requests per second (several times what one thread can send: a higher rate cannot be kept
 * and would only make the run account for requests it never had a chance to send), and a
 * plan spans at most PLAN_MAX_NS (the --duration limit; --requests at --rate included). */
#define PLAN_MAX_RATE_PER_THREAD 1000000.0
#define PLAN_MAX_NS 1000000000000000000ULL
#define PLAN_MAX_CONNECTIONS 1000000 /* --connections, a target's @Nc */

/* One target: the request every send of it writes, and its part of the load. */
struct plan_target {
    const char *name;           /* shown in reports; unique */
    const char *url;            /* http://host[:port]/path?query */
    const char *method;         /* NULL → GET */
    const char *const *headers; /* "Name: value" */
    size_t nheaders;
    const char *body; /* may be NULL */
    size_t body_len;
    double rate;          /* open loop: this target's own rate (/s); 0 = a weighted share of plan.rate */
    uint32_t connections; /* closed loop: this target's own clients; 0 = a weighted share */
    double weight;        /* share weight (0 is read as 1) */
    /* requests that differ per send (--targets, --feed, placeholders: load/variant.h); NULL: the
     * fixed request above. The URL above is then the source's first (its origin). */
    struct variant_source *source;
};

/* --shard I/N and --start-at (plan/shard.h): count 0 runs the whole plan; 1..RUN_MAX_SHARDS
 * runs shard `index`'s part of it. source says where I/N came from (for reports). */
struct plan_shard {
    uint32_t index, count;
    const char *source;        /* NULL: "--shard" */
    uint64_t start_at_unix_ns; /* --start-at: t0 at this wall-clock instant (ns since the epoch); 0 = when ready */
};

struct plan {
    const struct plan_target *targets;
    size_t ntargets;
    bool open_loop;
    double rate; /* total rate shared by targets without their own (/s) */
    bool ramp;   /* --ramp FROM:TO over the duration (shared targets) */
    double ramp_from, ramp_to;
    /* --stages: the shared rate as stages one after the other (open loop; no --rate or --ramp,
     * duration_ns their sum); targets with their own @R keep it throughout */
    const struct run_stage *stages;
    size_t nstages;
    enum run_arrivals arrivals;
    uint64_t seed;
    uint32_t connections; /* closed: clients in total; open: pool cap (0 = default) */
    uint64_t think_ns;    /* closed loop: pause between a response and the next request */
    uint64_t duration_ns; /* how long requests are planned; 0 when `requests` bounds the run */
    uint64_t requests;    /* total planned requests; 0 = bounded by duration */
    uint64_t warmup_ns;   /* requests planned before t0 + warmup are logged, not counted */
    struct plan_shard shard;
};

/* Check p without touching the network: targets named and unique, rates and weights finite,
 * @Nc only in the closed loop, a bound on the run, the --ramp/--rate rules, --think and
 * --arrivals only where they apply, the connection limit, warm-up shorter than the duration,
 * the shard fields, and a rate the load threads can plan (threads: --threads, 0 = the CPUs)
 * within PLAN_MAX_NS. Returns 0 or KNEE_EINVAL with one line in err naming the flag to fix
 * ("--warmup must be shorter than --duration"). run_validate (load/run.h) calls it first. */
int plan_validate(const struct plan *p, uint32_t threads, char *err, size_t errlen);

/* A target's part of the plan, for this shard (plan_shares). */
struct plan_share {
    /* open loop: the target's arrival stream in the whole plan, requests/s (equal unless
     * --ramp); every shard draws from this one stream and keeps its indices (plan/shard.h) */
    double rate_from, rate_to;
    /* open loop with --stages: the target's share of every stage's rate (its weight among the
     * targets that share; rate_from = rate_to = its mean rate over the stages); 0: its own rate */
    double stage_share;
    /* open loop: the stream's global index bound (its part of --requests); closed loop: this
     * shard's requests for the target. UINT64_MAX: bounded by the duration */
    uint64_t limit;
    uint32_t clients; /* closed loop, this shard: clients (connections x streams, at most limit) */
    uint32_t groups;  /* closed loop, this shard: connections, each shared by up to `streams` clients */
};

/* Each target's share (out: p->ntargets of them): open loop, its own rate or a weighted share of
 * --rate/--ramp, and --requests apportioned by rate (largest remainders: the parts add up);
 * closed loop, its own @Nc or a weighted share of --connections, times streams (--streams: the
 * clients per connection, 1 without) for clients, --requests apportioned by connections, then
 * this shard's part of both. Call after plan_validate. 0, or KNEE_EINVAL with a line naming
 * the target or --shard when a target gets no rate or no connection, or the shard none. */
int plan_shares(const struct plan *p, uint32_t streams, struct plan_share *out, char *err, size_t errlen);

/* This shard's mean planned rate of a target (requests/s; 0 in the closed loop): the stream's
 * mean over the ramp, divided among the shards. */
double plan_share_rate(const struct plan *p, const struct plan_share *s);

/* What --dry-run says of a target, for this shard. */
struct plan_expect {
    double rate_from, rate_to; /* open loop: requests/s (equal unless --ramp); 0 in the closed loop */
    double planned;            /* requests planned, warm-up included; NAN when the closed loop runs for a time */
    double warmup_planned;     /* of which in the warm-up (0 without one; NAN when unknown) */
    bool exact;                /* false: an expectation (Poisson arrivals) */
};

/* The counts of s (a plan_shares entry) for this shard: exact for constant arrivals (the
 * schedule's own arithmetic, plan/schedule.h sched_constant_count) and for any --requests
 * bound; for Poisson arrivals bounded by the duration, the expectation Λ(duration). */
void plan_expected(const struct plan *p, const struct plan_share *s, struct plan_expect *out);

/* --stages: where stage j (0-based, < p->nstages) starts and ends, ns after t0 (the sums of the
 * durations before it, and with it). What the per-stage results and the abort rules key on. */
uint64_t plan_stage_start_ns(const struct plan *p, size_t j);
uint64_t plan_stage_end_ns(const struct plan *p, size_t j);

/* What --dry-run says of stage j of a target's stream (s: a plan_shares entry), for this shard:
 * its requests planned in [start, end) of the stage (warm-up included), exact for constant
 * arrivals (the schedule's own count at both ends: the stage's integral ±1), for Poisson its
 * expectation; rate_from/rate_to this shard's. Nothing is planned outside the stages. */
void plan_stage_expected(const struct plan *p, const struct plan_share *s, size_t j, struct plan_expect *out);

/* The load threads: --threads (threads; 0 = the CPUs online), in the open loop at most one per
 * connection of the pool (each thread owns its connections: --connections 1 means one thread),
 * in the closed loop at most one per connection (shares: plan_shares' entries; may be NULL in
 * the open loop). At least 1. */
uint32_t plan_threads(const struct plan *p, uint32_t threads, const struct plan_share *shares);

/* The open loop's connection pool asked for (--connections, else PLAN_DEFAULT_OPEN_CONNECTIONS);
 * 0 in the closed loop. */
uint32_t plan_pool(const struct plan *p);

/* Where the measurement window ends, ns after t0: the duration; with --requests in the open
 * loop, the requests at the streams' total rate (shares: plan_shares' entries); UINT64_MAX for a
 * closed loop bounded by --requests (it ends when the clients are done). */
uint64_t plan_window_ns(const struct plan *p, const struct plan_share *shares);

/* A target's open-loop stream as every shard draws it: its rates (or its share of the stages) and
 * its global index bound, with the plan's stages and duration. What plan_sched_init and knee
 * merge's check of the planned counts (plan/shard.h plan_stream_planned) build a schedule from. */
struct plan_stream {
    double rate_from, rate_to, stage_share;
    uint64_t limit;
    const struct run_stage *stages;
    size_t nstages;
    uint64_t duration_ns;
};

/* sc for thread k of `stride` of the stream st: the stages at st->stage_share when it has both,
 * else the constant rate or the ramp over the duration (plan/schedule.h sched_init). */
void plan_stream_init(struct sched *sc, bool poisson, const struct plan_stream *st, uint64_t t0_ns, uint64_t end_ns,
                      uint64_t stride, uint64_t k, uint64_t seed);

/* Open loop: thread k of `threads` load threads of this shard, its schedule of target `target`
 * (s: the target's plan_shares entry), planned from t0_ns until end_ns (UINT64_MAX: none).
 * Every thread of every shard draws the same seeded global sequence and keeps its indices. */
void plan_sched_init(struct sched *sc, const struct plan *p, const struct plan_share *s, size_t target, uint64_t t0_ns,
                     uint64_t end_ns, uint32_t threads, uint32_t k);

#endif
