/* The plan's checks and everything derived from it: the targets' shares of the rate, of the
 * clients and of --requests (this shard's part), the counts --dry-run expects, the load
 * threads, the window's end and a thread's schedule. plan/plan.h says what each one is. */
#include "plan/plan.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "http/client.h"
#include "plan/clients.h"
#include "plan/shard.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ checks */

static int validate_target(const struct plan *p, size_t i, char *err, size_t errlen)
{
    const struct plan_target *t = &p->targets[i];
    if (!t->name || !*t->name || !t->url)
        return knee_fail(err, errlen, KNEE_EINVAL, "target %zu has no name or URL (--target NAME=URL)", i + 1);
    for (size_t j = 0; j < i; j++)
        if (strcmp(p->targets[j].name, t->name) == 0)
            return knee_fail(err, errlen, KNEE_EINVAL, "--target: two targets are named '%s'", t->name);
    if (t->rate < 0 || !isfinite(t->rate))
        return knee_fail(err, errlen, KNEE_EINVAL, "--target %s: its rate (@R) must be a finite number >= 0", t->name);
    if (t->weight < 0 || !isfinite(t->weight))
        return knee_fail(err, errlen, KNEE_EINVAL, "--mix: the weight of %s must be a finite number >= 0", t->name);
    if (t->connections && p->open_loop)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--target NAME=URL@Nc sets closed-loop connections, but --rate makes this an open loop");
    if (t->connections > PLAN_MAX_CONNECTIONS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--target %s: @Nc must be between 1 and %d", t->name,
                         PLAN_MAX_CONNECTIONS);
    if (t->method && !http_is_token(t->method, strlen(t->method)))
        return knee_fail(err, errlen, KNEE_EINVAL, "--method '%s' is not an HTTP method", t->method);
    return 0;
}

/* Closed-loop stages: whole client counts within the connection limit, and nothing else that
 * sets the clients. */
static int validate_client_stages(const struct plan *p, char *err, size_t errlen)
{
    if (p->open_loop)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--stages of clients (Nc) make a closed loop: no --rate, --ramp or target @RATE");
    if (p->connections)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--stages of clients and --connections: give one (the stages give the clients)");
    for (size_t i = 0; i < p->ntargets; i++)
        if (p->targets[i].connections)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--target %s: @Nc and --stages of clients: give one (the stages give the clients)",
                             p->targets[i].name);
    for (size_t j = 0; j < p->nstages; j++) {
        const struct run_stage *st = &p->stages[j];
        if (!(st->from >= 0 && st->to >= 0 && st->from <= PLAN_MAX_CONNECTIONS && st->to <= PLAN_MAX_CONNECTIONS &&
              st->from == floor(st->from) && st->to == floor(st->to)))
            return knee_fail(err, errlen, KNEE_EINVAL, "--stages: stage %zu: clients must be whole numbers 0..%d",
                             j + 1, PLAN_MAX_CONNECTIONS);
    }
    return 0;
}

/* --stages: the rates and durations (the command line names the stage of a malformed one), and
 * no other flag that sets the rate or the length. */
static int validate_stages(const struct plan *p, char *err, size_t errlen)
{
    if (p->nstages > RUN_MAX_STAGES)
        return knee_fail(err, errlen, KNEE_EINVAL, "--stages: at most %d stages", RUN_MAX_STAGES);
    if (p->rate > 0 || p->ramp)
        return knee_fail(err, errlen, KNEE_EINVAL, "--stages and %s: give one (the stages set the rate over time)",
                         p->ramp ? "--ramp" : "--rate");
    if (p->requests)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--stages and --requests cannot be combined (the stages end the run)");
    bool clients = plan_stages_clients(p);
    if (!clients && !p->open_loop)
        return knee_fail(err, errlen, KNEE_EINVAL, "--stages of rates make an open loop");
    if (clients) {
        int rc = validate_client_stages(p, err, errlen);
        if (rc)
            return rc;
    }
    uint64_t sum = 0;
    bool any = false;
    for (size_t j = 0; j < p->nstages; j++) {
        const struct run_stage *st = &p->stages[j];
        if (st->clients != clients)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--stages: stage %zu: give all stages as rates or all as clients (Nc), not a mix", j + 1);
        if (!(st->from >= 0 && st->to >= 0 && isfinite(st->from) && isfinite(st->to)))
            return knee_fail(err, errlen, KNEE_EINVAL, "--stages: stage %zu: rates must be finite and >= 0", j + 1);
        if (!st->duration_ns || st->duration_ns > PLAN_MAX_NS)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--stages: stage %zu: the duration must be > 0 and at most %.0f s", j + 1,
                             (double)PLAN_MAX_NS / 1e9);
        sum += st->duration_ns;
        if (sum > PLAN_MAX_NS)
            return knee_fail(err, errlen, KNEE_EINVAL, "--stages: the stages last more than %.0f s",
                             (double)PLAN_MAX_NS / 1e9);
        any |= st->from > 0 || st->to > 0;
    }
    if (!any)
        return knee_fail(err, errlen, KNEE_EINVAL, "--stages: every stage has %s 0: nothing would be sent",
                         clients ? "clients" : "rate");
    if (p->duration_ns != sum)
        return knee_fail(err, errlen, KNEE_EINVAL, "--stages and --duration: give one (the stages set the duration)");
    return 0;
}

/* The load model: a bound, the rate or the ramp, and the flags of one loop only. */
static int validate_model(const struct plan *p, char *err, size_t errlen)
{
    if (p->nstages) {
        int rc = validate_stages(p, err, errlen);
        if (rc)
            return rc;
    }
    if (!p->duration_ns && !p->requests)
        return knee_fail(err, errlen, KNEE_EINVAL, "neither --duration nor --requests bounds the run");
    if (p->rate < 0 || !isfinite(p->rate))
        return knee_fail(err, errlen, KNEE_EINVAL, "--rate must be a finite number > 0");
    if (p->ramp) {
        if (p->rate > 0)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--ramp and --rate: give one (the ramp sets the rate over time)");
        if (!p->duration_ns)
            return knee_fail(err, errlen, KNEE_EINVAL, "--ramp needs --duration (it ramps over the duration)");
        if (p->requests)
            return knee_fail(err, errlen, KNEE_EINVAL, "--ramp and --requests cannot be combined");
        if (!(p->ramp_from >= 0 && p->ramp_to >= 0 && isfinite(p->ramp_from) && isfinite(p->ramp_to)) ||
            (p->ramp_from == 0 && p->ramp_to == 0))
            return knee_fail(err, errlen, KNEE_EINVAL, "--ramp: FROM and TO must be rates >= 0, not both 0");
        if (!p->open_loop)
            return knee_fail(err, errlen, KNEE_EINVAL, "--ramp applies to the open loop");
    }
    if (p->open_loop && p->think_ns)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--think applies to the closed loop (no --rate): an open loop sends on its schedule");
    if (!p->open_loop && p->arrivals != RUN_ARRIVALS_CONSTANT)
        return knee_fail(err, errlen, KNEE_EINVAL, "--arrivals applies to the open loop: give --rate");
    if (p->connections > PLAN_MAX_CONNECTIONS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--connections must be between 1 and %d", PLAN_MAX_CONNECTIONS);
    if (p->duration_ns && p->warmup_ns >= p->duration_ns && p->nstages)
        return knee_fail(err, errlen, KNEE_EINVAL, "--warmup must be shorter than the stages (%.3g s)",
                         (double)p->duration_ns / 1e9);
    if (p->duration_ns && p->warmup_ns >= p->duration_ns)
        return knee_fail(err, errlen, KNEE_EINVAL, "--warmup must be shorter than --duration");
    return 0;
}

/* The plan's bounds: a rate each thread can plan (PLAN_MAX_RATE_PER_THREAD) and a plan that
 * ends (PLAN_MAX_NS), so every run ends within its duration + drain + the time to account the
 * requests the generator did not reach, and nothing overflows on the way. */
static int validate_bounds(const struct plan *p, uint32_t threads, char *err, size_t errlen)
{
    if (p->duration_ns > PLAN_MAX_NS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--duration must be at most %.0f s", (double)PLAN_MAX_NS / 1e9);
    if (!p->open_loop)
        return 0;
    double shared = p->ramp ? fmax(p->ramp_from, p->ramp_to) : p->rate, own = 0;
    for (size_t j = 0; j < p->nstages; j++)
        shared = fmax(shared, fmax(p->stages[j].from, p->stages[j].to));
    bool any_shared = false;
    for (size_t i = 0; i < p->ntargets; i++) {
        if (p->targets[i].rate > 0)
            own += p->targets[i].rate;
        else
            any_shared = true;
    }
    double peak = own + (any_shared ? shared : 0);
    double start = own + (any_shared ? (p->ramp ? p->ramp_from : p->rate) : 0);
    /* a shard's thread plans every (N·T)-th send of the whole plan (plan/shard.h): N shards of T
     * threads share the bound */
    uint32_t T = plan_threads(p, threads, NULL), N = plan_shard_count(p);
    double cap = PLAN_MAX_RATE_PER_THREAD * T * N;
    char a[32], b[32];
    if (peak > cap && N > 1)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--rate: %.6g/s is more than %u shards of %u load thread%s can plan (at most %s/s per "
                         "thread, %s/s here); give --threads or more shards",
                         peak, N, T, T == 1 ? "" : "s",
                         units_fmt_count((uint64_t)PLAN_MAX_RATE_PER_THREAD, a, sizeof a),
                         units_fmt_count((uint64_t)cap, b, sizeof b));
    if (peak > cap)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--rate: %.6g/s is more than %u load thread%s can plan (at most %s/s per thread, %s/s "
                         "here); give --threads or spread the load over several generators",
                         peak, T, T == 1 ? "" : "s", units_fmt_count((uint64_t)PLAN_MAX_RATE_PER_THREAD, a, sizeof a),
                         units_fmt_count((uint64_t)cap, b, sizeof b));
    if (p->requests && !p->duration_ns && start > 0 && (double)p->requests / start * 1e9 > (double)PLAN_MAX_NS)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--requests %llu at %.6g/s would take %.3g s to plan: a plan spans at most %s s (--duration's "
                         "limit); raise --rate or lower --requests",
                         (unsigned long long)p->requests, start, (double)p->requests / start,
                         units_fmt_count(PLAN_MAX_NS / NS_PER_S, a, sizeof a));
    return 0;
}

/* Every message names the flag of `knee run` that sets the field, so the command line can
 * leave these checks here and still tell the user which flag to fix. */
int plan_validate(const struct plan *p, uint32_t threads, char *err, size_t errlen)
{
    if (p->ntargets == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "no target: give a URL or --target NAME=URL (see knee run --help)");
    if (p->ntargets > RUN_MAX_TARGETS)
        return knee_fail(err, errlen, KNEE_EINVAL, "at most %d targets (URLs and --target)", RUN_MAX_TARGETS);
    int rc = 0;
    for (size_t i = 0; i < p->ntargets && !rc; i++)
        rc = validate_target(p, i, err, errlen);
    if (!rc)
        rc = validate_model(p, err, errlen);
    if (!rc)
        rc = plan_shard_validate(p, err, errlen);
    return rc ? rc : validate_bounds(p, threads, err, errlen);
}

/* ------------------------------------------------------------------ shares */

/* Split total into n parts proportional to w (largest remainder; the parts sum to total). */
static void apportion(uint64_t total, const double *w, size_t n, uint64_t *out)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += w[i];
    uint64_t given = 0;
    double *rem = xcalloc(n ? n : 1, sizeof *rem);
    for (size_t i = 0; i < n; i++) {
        double exact = sum > 0 ? (double)total * w[i] / sum : 0;
        out[i] = (uint64_t)floor(exact);
        rem[i] = exact - (double)out[i];
        given += out[i];
    }
    while (given < total && n) {
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (rem[i] > rem[best])
                best = i;
        out[best]++;
        rem[best] = -1;
        given++;
    }
    free(rem);
}

static double weight_of(const struct plan_target *t)
{
    return t->weight > 0 ? t->weight : 1;
}

/* The stages' integral over their duration: their mean rate (/s). */
static double plan_stages_mean_rate(const struct plan *p)
{
    double n = 0, d = 0;
    for (size_t j = 0; j < p->nstages; j++) {
        double s = (double)p->stages[j].duration_ns / 1e9;
        n += (p->stages[j].from + p->stages[j].to) / 2 * s;
        d += s;
    }
    return d > 0 ? n / d : 0;
}

/* Open loop: each target's own rate or its weighted share of --rate/--ramp; --requests by the
 * streams' mean rates. w and parts: scratch of p->ntargets. */
static int open_shares(const struct plan *p, struct plan_share *out, double *w, uint64_t *parts, char *err,
                       size_t errlen)
{
    size_t n = p->ntargets;
    double shared_w = 0;
    for (size_t i = 0; i < n; i++)
        if (p->targets[i].rate <= 0)
            shared_w += weight_of(&p->targets[i]);
    double from = p->ramp ? p->ramp_from : p->rate, to = p->ramp ? p->ramp_to : p->rate;
    if (p->nstages) /* the stages' mean rate: what a target's planned rate says */
        from = to = plan_stages_mean_rate(p);
    for (size_t i = 0; i < n; i++) {
        const struct plan_target *t = &p->targets[i];
        struct plan_share *s = &out[i];
        if (t->rate > 0) {
            s->rate_from = s->rate_to = t->rate;
        } else {
            if (from <= 0 && to <= 0)
                return knee_fail(err, errlen, KNEE_EINVAL,
                                 "target %s has no rate: give --rate R (shared by weight) or %s=URL@RATE", t->name,
                                 t->name);
            double share = weight_of(t) / shared_w;
            s->rate_from = from * share;
            s->rate_to = to * share;
            s->stage_share = p->nstages ? share : 0;
        }
        w[i] = (s->rate_from + s->rate_to) / 2;
    }
    if (p->requests)
        apportion(p->requests, w, n, parts);
    for (size_t i = 0; i < n; i++)
        out[i].limit = p->requests ? parts[i] : UINT64_MAX;
    return 0;
}

/* Closed-loop stages: the stages' peak of clients dealt to the targets by weight (plan/clients.h);
 * a client is a client, `streams` of them per connection. w: scratch of p->ntargets. */
static int stage_shares(const struct plan *p, uint32_t streams, struct plan_share *out, double *w, char *err,
                        size_t errlen)
{
    size_t n = p->ntargets;
    uint32_t peak = plan_clients_peak(p->stages, p->nstages), S = streams ? streams : 1;
    uint32_t *split = xcalloc(n ? n : 1, sizeof *split);
    plan_clients_weights(p, w);
    plan_clients_split(w, n, peak, split);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        out[i].clients = split[i];
        out[i].groups = (uint32_t)(((uint64_t)split[i] + S - 1) / S);
        out[i].limit = UINT64_MAX;
        if (!split[i] && !rc)
            rc = knee_fail(err, errlen, KNEE_EINVAL,
                           "target %s gets no client: the stages' peak of %u clients is shared by %zu targets (raise "
                           "it in --stages)",
                           p->targets[i].name, peak, n);
    }
    free(split);
    return rc;
}

/* Closed loop: each target's own @Nc or its weighted share of --connections, `streams` clients
 * per connection, --requests by connections (a client sends at least one request: no more
 * clients than the target's requests, -n 5 -c 8 opens 5). */
static int closed_shares(const struct plan *p, uint32_t streams, struct plan_share *out, double *w, uint64_t *parts,
                         char *err, size_t errlen)
{
    size_t n = p->ntargets;
    if (plan_stages_clients(p))
        return stage_shares(p, streams, out, w, err, errlen);
    uint32_t total = p->connections ? p->connections : PLAN_DEFAULT_CLOSED_CONNECTIONS;
    size_t nshared = 0;
    for (size_t i = 0; i < n; i++)
        if (!p->targets[i].connections) {
            w[i] = weight_of(&p->targets[i]);
            nshared++;
        }
    if (nshared) {
        apportion(total, w, n, parts);
        for (size_t i = 0; i < n; i++)
            if (!p->targets[i].connections && parts[i] == 0)
                return knee_fail(err, errlen, KNEE_EINVAL,
                                 "target %s gets no connection: %u connections shared by %zu targets (raise "
                                 "--connections)",
                                 p->targets[i].name, total, nshared);
    }
    uint64_t S = streams ? streams : 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t conns = p->targets[i].connections ? p->targets[i].connections : parts[i];
        uint64_t clients = conns * S;
        out[i].clients = clients > UINT32_MAX ? UINT32_MAX : (uint32_t)clients;
        w[i] = (double)conns;
    }
    if (p->requests)
        apportion(p->requests, w, n, parts);
    for (size_t i = 0; i < n; i++) {
        out[i].limit = p->requests ? parts[i] : UINT64_MAX;
        if (out[i].clients > out[i].limit)
            out[i].clients = (uint32_t)out[i].limit;
        out[i].groups = (uint32_t)((out[i].clients + S - 1) / S);
    }
    return 0;
}

/* --shard, closed loop: this shard's part of each target's clients, of their connections
 * (groups of `streams` clients) and of its requests (the open loop's split is the schedule's
 * interleave). */
static int closed_shard_part(const struct plan *p, uint32_t streams, struct plan_share *out, char *err, size_t errlen)
{
    uint64_t S = streams ? streams : 1;
    uint32_t I = p->shard.index, N = p->shard.count;
    uint64_t mine = 0, all = 0;
    for (size_t i = 0; i < p->ntargets; i++) {
        struct plan_share *s = &out[i];
        uint32_t c = s->clients;
        all += c;
        s->clients = (uint32_t)plan_shard_share(c, I, N);
        s->groups = (uint32_t)((s->clients + S - 1) / S);
        if (s->limit != UINT64_MAX)
            s->limit = plan_shard_share_by(s->limit, c, I, N);
        mine += s->clients;
    }
    if (!mine && p->requests && p->requests < N) /* the connections were capped at one per request */
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--shard %u/%u: --requests %llu leaves this shard no request, and so no connection (give "
                         "--requests >= %u)",
                         I, N, (unsigned long long)p->requests, N);
    if (!mine)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--shard %u/%u: %llu closed-loop %s leave this shard none (give %s >= %u)", I, N,
                         (unsigned long long)all, p->nstages ? "clients" : "connections",
                         p->nstages ? "a --stages peak" : "--connections", N);
    return 0;
}

int plan_shares(const struct plan *p, uint32_t streams, struct plan_share *out, char *err, size_t errlen)
{
    size_t n = p->ntargets;
    memset(out, 0, n * sizeof *out);
    double *w = xcalloc(n ? n : 1, sizeof *w);
    uint64_t *parts = xcalloc(n ? n : 1, sizeof *parts);
    int rc = p->open_loop ? open_shares(p, out, w, parts, err, errlen)
                          : closed_shares(p, streams, out, w, parts, err, errlen);
    if (!rc && !p->open_loop && p->shard.count)
        rc = closed_shard_part(p, streams, out, err, errlen);
    free(w);
    free(parts);
    return rc;
}

double plan_share_rate(const struct plan *p, const struct plan_share *s)
{
    return p->open_loop ? (s->rate_from + s->rate_to) / 2 / plan_shard_count(p) : 0;
}

/* ------------------------------------------------------------------ counts, threads, window */

void plan_stream_init(struct sched *sc, bool poisson, const struct plan_stream *st, uint64_t t0_ns, uint64_t end_ns,
                      uint64_t stride, uint64_t k, uint64_t seed)
{
    if (st->nstages && st->stage_share > 0) {
        struct sched_seg segs[SCHED_MAX_SEGS];
        size_t n = st->nstages < SCHED_MAX_SEGS ? st->nstages : SCHED_MAX_SEGS;
        for (size_t j = 0; j < n; j++)
            segs[j] = (struct sched_seg){st->stages[j].from, st->stages[j].to, (double)st->stages[j].duration_ns / 1e9};
        sched_init_segs(sc, poisson, segs, n, st->stage_share, t0_ns, end_ns, st->limit, stride, k, seed);
        return;
    }
    sched_init(sc, poisson, st->rate_from, st->rate_to, (double)st->duration_ns / 1e9, t0_ns, end_ns, st->limit, stride,
               k, seed);
}

static struct plan_stream stream_of(const struct plan *p, const struct plan_share *s)
{
    return (struct plan_stream){.rate_from = s->rate_from,
                                .rate_to = s->rate_to,
                                .stage_share = s->stage_share,
                                .limit = s->limit,
                                .stages = p->stages,
                                .nstages = p->nstages,
                                .duration_ns = p->duration_ns};
}

/* The whole plan's stream of a target (every shard's), as one thread would draw it. */
static void whole_sched(struct sched *sc, const struct plan *p, const struct plan_share *s)
{
    struct plan_stream st = stream_of(p, s);
    plan_stream_init(sc, p->arrivals == RUN_ARRIVALS_POISSON, &st, 0, p->duration_ns ? p->duration_ns : UINT64_MAX, 1,
                     0, p->seed);
}

/* The whole plan's counts of a target (every shard's): exact, or an expectation. */
static void whole_counts(const struct plan *p, const struct plan_share *s, struct plan_expect *out)
{
    bool bounded = s->limit != UINT64_MAX;
    out->warmup_planned = p->warmup_ns ? NAN : 0;
    out->exact = true;
    if (!p->open_loop) {
        out->planned = bounded ? (double)s->limit : NAN;
        return;
    }
    struct sched sc;
    whole_sched(&sc, p, s);
    if (sc.poisson) {
        double lam = bounded ? (double)s->limit : sched_expected_count(&sc, (double)p->duration_ns / 1e9);
        double warm = sched_expected_count(&sc, (double)p->warmup_ns / 1e9);
        out->planned = lam;
        out->warmup_planned = warm < lam ? warm : lam;
        out->exact = bounded;
        return;
    }
    out->planned = (double)(bounded ? s->limit : sched_constant_count(&sc, p->duration_ns));
    out->warmup_planned = (double)sched_constant_count(&sc, p->warmup_ns);
}

uint64_t plan_stage_start_ns(const struct plan *p, size_t j)
{
    uint64_t t = 0;
    for (size_t i = 0; i < j && i < p->nstages; i++)
        t += p->stages[i].duration_ns;
    return t;
}

uint64_t plan_stage_end_ns(const struct plan *p, size_t j)
{
    return plan_stage_start_ns(p, j + 1);
}

void plan_stage_expected(const struct plan *p, const struct plan_share *s, size_t j, struct plan_expect *out)
{
    memset(out, 0, sizeof *out);
    uint32_t N = plan_shard_count(p), I = plan_shard_index(p);
    uint64_t a = plan_stage_start_ns(p, j), b = plan_stage_end_ns(p, j);
    struct sched sc;
    whole_sched(&sc, p, s);
    double share = s->stage_share > 0 ? s->stage_share : 0;
    out->rate_from = (share > 0 ? p->stages[j].from * share : s->rate_from) / N;
    out->rate_to = (share > 0 ? p->stages[j].to * share : s->rate_to) / N;
    out->warmup_planned = NAN;
    out->exact = !sc.poisson;
    if (sc.poisson) {
        out->planned = (sched_expected_count(&sc, (double)b / 1e9) - sched_expected_count(&sc, (double)a / 1e9)) / N;
        return;
    }
    uint64_t na = sched_constant_count(&sc, a), nb = sched_constant_count(&sc, b);
    out->planned = (double)(plan_shard_share(nb, I, N) - plan_shard_share(na, I, N));
}

void plan_expected(const struct plan *p, const struct plan_share *s, struct plan_expect *out)
{
    out->rate_from = p->open_loop ? s->rate_from : 0;
    out->rate_to = p->open_loop ? s->rate_to : 0;
    whole_counts(p, s, out);
    if (!p->shard.count || !p->open_loop)
        return; /* the closed loop's shares are already this shard's */
    uint32_t I = p->shard.index, N = p->shard.count;
    out->rate_from /= N;
    out->rate_to /= N;
    /* exact counts are the number of global indices below them that are this shard's; an
     * expectation (Poisson arrivals by duration, any Poisson warm-up) is divided */
    bool poisson = p->arrivals == RUN_ARRIVALS_POISSON;
    if (out->exact && isfinite(out->planned))
        out->planned = (double)plan_shard_share((uint64_t)out->planned, I, N);
    else
        out->planned /= N;
    if (!poisson && isfinite(out->warmup_planned))
        out->warmup_planned = (double)plan_shard_share((uint64_t)out->warmup_planned, I, N);
    else
        out->warmup_planned /= N;
}

uint32_t plan_pool(const struct plan *p)
{
    return p->open_loop ? (p->connections ? p->connections : PLAN_DEFAULT_OPEN_CONNECTIONS) : 0;
}

uint32_t plan_threads(const struct plan *p, uint32_t threads, const struct plan_share *shares)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t T = threads ? threads : (uint32_t)(ncpu > 0 ? ncpu : 1);
    if (p->open_loop) {
        uint32_t pool = plan_pool(p);
        if (pool < T)
            T = pool;
    } else {
        uint64_t groups = 0; /* a thread without clients would have nothing to do */
        for (size_t i = 0; i < p->ntargets; i++)
            groups += shares[i].groups;
        if (groups < T)
            T = (uint32_t)groups;
    }
    return T ? T : 1;
}

uint64_t plan_window_ns(const struct plan *p, const struct plan_share *shares)
{
    if (p->duration_ns)
        return p->duration_ns;
    if (!p->open_loop)
        return UINT64_MAX;
    double total_rate = 0;
    for (size_t i = 0; i < p->ntargets; i++)
        total_rate += shares[i].rate_from;
    return (uint64_t)llround((double)p->requests / total_rate * 1e9);
}

void plan_sched_init(struct sched *sc, const struct plan *p, const struct plan_share *s, size_t target, uint64_t t0_ns,
                     uint64_t end_ns, uint32_t threads, uint32_t k)
{
    struct plan_stream st = stream_of(p, s);
    plan_stream_init(sc, p->arrivals == RUN_ARRIVALS_POISSON, &st, t0_ns, end_ns, plan_shard_stride(p, threads),
                     plan_shard_offset(p, threads, k), plan_stream_seed(p->seed, target));
}
