/* The merged summary: the shards' knee run JSON documents read back as records (record/ strict
 * reader, with the histograms each shard carries in its "shard" object), added up (record_add: counts,
 * histograms with their exact extremes, events) on one time axis, and derived by the record's own
 * pieces as one process's run is (record/finish.c): the total as the sum of the targets, the window and
 * the rates over it, the statistics, the shares and identities, knee run's FAILED or ERRORS sentence.
 * What only a merge knows (failed shards, the plan check, generator-limited as any shard's own
 * verdict, the start skew, rates without a shared start instant) is judged in verdict.c. */
#include "merge/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "record/stages.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHARD_WARNINGS 20 /* per-shard warnings carried into the merge (the rest: in the shards' JSON) */
#define MAX_TICKS 1000000     /* seconds of merged timeline (11.5 days): a document cannot ask for more */
#define MAX_SHARD_OFFSET_NS (1000000ULL * NS_PER_S) /* t0s further apart than MAX_TICKS: not one run */

int merge_fail(struct merge_ctx *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (c->err && c->errlen)
        vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    return code;
}

/* A number of a document within [lo, hi] (0 when not a number). */
static double within(double v, double lo, double hi)
{
    return !(v == v) ? 0 : v < lo ? lo : v > hi ? hi : v;
}

/* ---- reading the shards ---- */

/* Every shard's record without its histograms (the strict reader: what a merge adds up must be
 * there), and where each one sits in time. */
static int read_docs(struct merge_ctx *c, json_t *const *roots, const char *const *names)
{
    for (uint32_t k = 0; k < c->count; k++) {
        struct merge_doc *d = &c->docs[k];
        d->path = names[k];
        char why[512];
        if (record_read_json_strict(roots[k], &c->recs[k], why, sizeof why))
            return merge_fail(c, KNEE_EFORMAT, "%s: %s", d->path, why);
        const struct run_record *r = &c->recs[k];
        d->t0_unix_ns = r->shard.t0_unix_ns;
        d->window_s = r->window_s;
        d->elapsed_s = r->elapsed_s;
        d->planned = r->all.counts.planned + r->all.warmup_counts.planned;
    }
    return 0;
}

/* Every shard names shard 0's targets in its order. */
static int check_targets(struct merge_ctx *c)
{
    const struct run_record *r0 = &c->recs[0];
    if (r0->ntargets == 0 || r0->ntargets > RUN_MAX_TARGETS)
        return merge_fail(c, KNEE_EFORMAT, "%s: %zu targets", c->docs[0].path, r0->ntargets);
    for (uint32_t k = 0; k < c->count; k++) {
        const struct run_record *r = &c->recs[k];
        if (r->ntargets != r0->ntargets)
            return merge_fail(c, KNEE_EFORMAT, "%s: %zu targets, but %s has %zu", c->docs[k].path, r->ntargets,
                              c->docs[0].path, r0->ntargets);
        for (size_t i = 0; i < r->ntargets; i++) {
            const char *name = r->targets[i].name, *want = r0->targets[i].name[0] ? r0->targets[i].name : "?";
            if (!name[0] || strcmp(name, want) != 0)
                return merge_fail(c, KNEE_EFORMAT, "%s: target %zu is '%s', but %s names it '%s'", c->docs[k].path,
                                  i + 1, name[0] ? name : "?", c->docs[0].path, want);
        }
    }
    return 0;
}

/* The shards' t0s on the wall clock, the merged axis from the earliest. */
static int place_docs(struct merge_ctx *c)
{
    uint64_t t0_min = UINT64_MAX;
    for (uint32_t k = 0; k < c->count; k++)
        if (c->docs[k].t0_unix_ns < t0_min)
            t0_min = c->docs[k].t0_unix_ns;
    c->m->res.shard.t0_unix_ns = t0_min;
    c->same_t0 = true;
    for (uint32_t k = 0; k < c->count; k++) {
        struct merge_doc *d = &c->docs[k];
        d->off_ns = d->t0_unix_ns - t0_min;
        c->same_t0 &= d->off_ns == 0;
        if (d->off_ns > MAX_SHARD_OFFSET_NS)
            return merge_fail(c, KNEE_EFORMAT, "%s: its t0 is %.0f s after %s's: not the shards of one run", d->path,
                              (double)d->off_ns / 1e9, c->docs[0].path);
    }
    return 0;
}

/* The merged record before any shard is added: shard 0's targets and plan, the merge's own command
 * line and shard record. */
static void begin(struct merge_ctx *c, uint64_t plan_id, uint64_t start_at_unix_ns, const char *const *argv, int argc)
{
    struct run_record *res = &c->m->res, *r0 = &c->recs[0];
    res->ntargets = r0->ntargets;
    res->targets = xcalloc(res->ntargets, sizeof *res->targets);
    for (size_t i = 0; i < res->ntargets; i++) {
        struct run_target_result *t = &res->targets[i];
        record_target_init(t);
        memcpy(t->name, r0->targets[i].name, sizeof t->name);
        memcpy(t->url, r0->targets[i].url, sizeof t->url);
        memcpy(t->address, r0->targets[i].address, sizeof t->address);
        t->own_rate = r0->targets[i].own_rate;
    }
    record_target_init(&res->all);
    res->config = r0->config; /* the plan (the plan id says every shard's is this one) */
    memset(&r0->config, 0, sizeof r0->config);
    record_config_set_args(&res->config, argc, argv); /* credentials redacted */
    res->nstages = res->config.nstages;               /* --stages: the plan's, added up from every shard's */
    res->stages = record_stages_new(res->config.stages, res->config.nstages);
    record_entries_copy(&res->entries, &r0->entries); /* the file's entries, added up from every shard's */
    for (size_t i = 0; i < res->entries.n; i++)
        memset(&res->entries.e[i].c, 0, sizeof res->entries.e[i].c);
    snprintf(res->env.version, sizeof res->env.version, "%s", KNEE_VERSION);
    for (int i = 0; i < 3; i++)
        res->env.loadavg_before[i] = res->env.loadavg_after[i] = NAN;
    struct run_shard *sh = &res->shard;
    *sh = (struct run_shard){.index = RUN_SHARD_MERGED,
                             .count = c->count,
                             .plan_id = plan_id,
                             .start_at_unix_ns = start_at_unix_ns,
                             .lag_limit_ns = r0->shard.lag_limit_ns ? r0->shard.lag_limit_ns : RUN_DEFAULT_LAG_LIMIT_NS,
                             .nstreams = r0->shard.nstreams,
                             .nparts = c->count,
                             .parts = xcalloc(c->count, sizeof *sh->parts),
                             .complete = true,
                             .clock_synced = true,
                             .clock_maxerror_ms = NAN,
                             .clock_esterror_ms = NAN};
    snprintf(sh->source, sizeof sh->source, "knee merge");
    memcpy(sh->streams, r0->shard.streams, sizeof sh->streams);
    for (uint32_t k = 0; k < c->count; k++)
        sh->parts[k].index = k;
}

/* ---- adding one shard ---- */

void merge_summary_fail_shardf(struct merge_summary *m, uint32_t index, const char *fmt, ...)
{
    char buf[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    merge_summary_fail_shard(m, index, buf);
}

void merge_summary_fail_shard(struct merge_summary *m, uint32_t index, const char *why)
{
    if (index < m->res.shard.nparts) { /* parts are by index */
        struct run_shard_part *p = &m->res.shard.parts[index];
        if (!p->failed)
            snprintf(p->failure, sizeof p->failure, "%s", why);
        p->failed = true;
    }
    m->incomplete = true;
    m->res.shard.complete = false;
}

/* Events of a shard moved onto the merged axis (off_ns later when the shards have no common t0). */
static void shift_events(struct run_events *ev, uint64_t off_ns)
{
    ev->window_start_ns += off_ns;
    ev->window_end_ns += off_ns;
    if (ev->sends) {
        ev->first_send_ns += off_ns;
        ev->last_send_ns += off_ns;
    }
}

/* A shard's events of target slot (ntargets: all) where the merge needs them: its window, and its
 * rates over its own window added to the sums (the rates without a common t0). */
static void note_events(struct merge_ctx *c, uint32_t k, size_t slot, struct run_events *ev)
{
    shift_events(ev, c->docs[k].off_ns);
    if (slot == c->m->res.ntargets) {
        c->docs[k].ws_ns = ev->window_start_ns;
        c->docs[k].we_ns = ev->window_end_ns;
    }
    struct run_rates own, *sum = &c->sums[slot];
    record_rates_of(ev, &own);
    double *to[] = {&sum->planned, &sum->sent, &sum->completed, &sum->goodput, &sum->achieved_send};
    const double from[] = {own.planned, own.sent, own.completed, own.goodput, own.achieved_send};
    for (size_t i = 0; i < 5; i++)
        *to[i] += isfinite(from[i]) ? from[i] : 0;
}

/* A shard's timeline, kept on the merged axis for merge_ticks (the intervals a timeline can hold). */
static void keep_ticks(struct merge_ctx *c, uint32_t k, const struct run_record *r)
{
    double off = c->same_t0 ? 0 : (double)llround((double)c->docs[k].off_ns / 1e9);
    for (size_t i = 0; i < r->nticks; i++) {
        const struct run_tick *t = &r->ticks[i];
        if (!(t->start_s >= 0 && t->start_s + off < MAX_TICKS) || !(t->length_s >= 0 && t->length_s <= 1))
            continue;
        if (c->nticks == c->cap_ticks) {
            if (c->cap_ticks >= (size_t)MAX_TICKS * 4)
                return; /* more intervals than one run's timeline can hold */
            c->cap_ticks = c->cap_ticks ? 2 * c->cap_ticks : 64;
            c->ticks = xrealloc(c->ticks, c->cap_ticks * sizeof *c->ticks);
        }
        c->ticks[c->nticks++] = (struct merge_tick){t->start_s + off, *t};
    }
}

/* The merged verdict is the shards' (any shard): their rules' flags or'ed, their reasons named by
 * shard. A lag that shaped one shard's numbers shaped the merged numbers too, even where the merged
 * histograms would dilute it below the rule. */
static void generator_of_shard(struct run_record *res, uint32_t k, const struct run_generator_verdict *g)
{
    struct run_generator_verdict *v = &res->generator;
    v->limited = true;
    v->short_send |= g->short_send;
    v->over_limit |= g->over_limit;
    v->shapes_tail |= g->shapes_tail;
    v->shapes_median |= g->shapes_median;
    v->bursts |= g->bursts;
    size_t off = strlen(v->why);
    if (off + 16 < sizeof v->why)
        snprintf(v->why + off, sizeof v->why - off, "%sshard %u: %.*s", off ? "; " : "", k, (int)(sizeof v->why - off),
                 g->why[0] ? g->why : "limited"); /* cut where it ends */
}

/* The environment of the shards: sums and extremes. The generators' own CPU is summed over the
 * longest shard's wall time, and known only when every shard says it (threads stays 0 from the
 * first shard without it). */
static void add_env(struct run_env *env, uint32_t k, const struct run_env *e)
{
    env->cpus += (long)within((double)e->cpus, 0, 1e9);
    env->cpu_user_s += isfinite(e->cpu_user_s) ? e->cpu_user_s : 0;
    env->cpu_sys_s += isfinite(e->cpu_sys_s) ? e->cpu_sys_s : 0;
    if ((long)within((double)e->peak_rss_kb, 0, 1e15) > env->peak_rss_kb)
        env->peak_rss_kb = (long)within((double)e->peak_rss_kb, 0, 1e15);
    struct run_generator_cpu *g = &env->gen_cpu;
    const struct run_generator_cpu *s = &e->gen_cpu;
    if (k == 0 || g->threads) {
        if (s->threads) {
            g->user_s += within(s->user_s, 0, 1e12);
            g->sys_s += within(s->sys_s, 0, 1e12);
            g->wall_s = fmax(g->wall_s, within(s->wall_s, 0, 1e12));
            g->threads += s->threads;
        } else {
            memset(g, 0, sizeof *g);
        }
    }
    if (e->start_wall[0] && (!env->start_wall[0] || strcmp(e->start_wall, env->start_wall) < 0))
        snprintf(env->start_wall, sizeof env->start_wall, "%s", e->start_wall);
    if (e->kernel[0] && !env->kernel[0])
        snprintf(env->kernel, sizeof env->kernel, "%s", e->kernel);
    else if (e->kernel[0] && strcmp(e->kernel, env->kernel) != 0)
        snprintf(env->kernel, sizeof env->kernel, "several kernels");
}

/* The shard's own record in the merge: its part (host, skew, verdict), why it failed, its clock,
 * its warnings that the merge carries. */
static void part_of(struct merge_ctx *c, uint32_t k, const struct run_record *r)
{
    struct merge_summary *m = c->m;
    struct run_record *res = &m->res;
    struct run_shard_part *p = &res->shard.parts[k];
    snprintf(p->host, sizeof p->host, "%.*s", (int)sizeof p->host - 1, r->env.hostname[0] ? r->env.hostname : "?");
    p->start_skew_ns = r->shard.start_skew_ns;
    p->generator_limited = r->generator_limited;
    res->generator_limited |= p->generator_limited;
    if (p->generator_limited)
        generator_of_shard(res, k, &r->generator);
    res->shard.clock_synced &= r->shard.clock_synced;
    double me = r->shard.clock_maxerror_ms;
    if (isfinite(me) && !(me <= res->shard.clock_maxerror_ms))
        res->shard.clock_maxerror_ms = me;
    if (r->aborted.set && (!res->aborted.set || r->aborted.at_s < res->aborted.at_s))
        res->aborted = r->aborted; /* the first rule to fire in any shard stopped the whole */
    if (r->interrupted) {
        res->interrupted = true;
        if (r->aborted.set)
            merge_summary_fail_shardf(m, k, "aborted at %.1f s: --abort-if %s", r->aborted.at_s, r->aborted.rule);
        else
            merge_summary_fail_shardf(m, k, "interrupted before the end of its plan");
    }
    c->shards_ok &= r->accounting_ok;
    if (!r->accounting_ok)
        merge_summary_fail_shardf(m, k, "its accounting identities do not hold");
    for (size_t i = 0; i < r->warnings.n; i++) {
        const char *text = r->warnings.items[i];
        if (strstr(text, "stopped early"))
            merge_summary_fail_shardf(m, k, "%s", text);
        else if (strstr(text, "writing failed"))
            merge_summary_fail_shardf(m, k, "its request log could not be written whole (%s)", text);
        /* said once for the whole (knee merge checks the merged run itself) */
        if (!text[0] || strncmp(text, "only ", 5) == 0 || strncmp(text, "warm-up: ", 9) == 0 ||
            strstr(text, "synchronised") || strncmp(text, "self-check", 10) == 0)
            continue;
        if (c->carried.n < MAX_SHARD_WARNINGS)
            warn_add(&c->carried, false, "shard %u: %s", k, text);
        else
            c->more++;
    }
}

/* Shard k's per-entry tables added by index when it ran the same targets file as shard 0 (the
 * count of entries and the hash of their methods, URLs and names); else none are kept, with a
 * warning. */
static void add_entries(struct merge_ctx *c, uint32_t k, const struct run_record *r)
{
    struct run_entries *d = &c->m->res.entries;
    if (c->entries_off)
        return;
    if (record_entries_same(d, &r->entries)) {
        record_entries_add(d, &r->entries);
        return;
    }
    warn_add(&c->carried, false,
             "shard %u ran another targets file than shard 0 (%zu entries, hash %016" PRIx64
             "; shard 0: %zu, %016" PRIx64 "): the per-entry tables are left out",
             k, r->entries.n, r->entries.hash, d->n, d->hash);
    record_entries_release(d);
    c->entries_off = true;
}

/* Shard k's histograms read, its events moved onto the merged axis, its record added. */
static int add_shard(struct merge_ctx *c, uint32_t k, const json_t *root)
{
    struct run_record *r = &c->recs[k], *res = &c->m->res;
    char why[512];
    int rc = record_read_histograms(root, r, why, sizeof why);
    if (!rc)
        rc = record_check_events(r, why, sizeof why);
    if (rc)
        return merge_fail(c, rc, "%s: %s", c->docs[k].path, why);
    for (size_t i = 0; i <= r->ntargets; i++) {
        struct run_target_result *t = i < r->ntargets ? &r->targets[i] : &r->all;
        note_events(c, k, i, &t->events);
        if (i < r->ntargets)
            c->planned[(size_t)k * r->ntargets + i] = t->counts.planned + t->warmup_counts.planned;
    }
    keep_ticks(c, k, r);
    record_add(res, r);
    if (res->nstages && r->nstages == res->nstages) /* the same plan (its id): the same stages */
        record_stages_add(res->stages, r->stages, res->nstages);
    add_entries(c, k, r);
    part_of(c, k, r);
    add_env(&res->env, k, &r->env);
    record_release(r);
    return 0;
}

/* ---- the merged window, rates and timeline ---- */

/* The merged window and the rates over it. With one t0 the window is the union of the shards' (the
 * same window in an open loop; a closed loop with --requests ends with the last shard's last thread,
 * as one process's ends with its last thread), and the shards' events add up as the engine adds its
 * threads'. Without one, the window is the common one (where every shard measured), and the rates are
 * the shards' rates summed, each over its own window (counted again over the common window when the
 * logs are given: merge_count_logs). */
static void merge_window(struct merge_ctx *c)
{
    struct merge_summary *m = c->m;
    struct run_record *res = &m->res;
    uint64_t ws = c->same_t0 ? UINT64_MAX : 0, we = c->same_t0 ? 0 : UINT64_MAX;
    for (uint32_t k = 0; k < c->count; k++) {
        const struct merge_doc *d = &c->docs[k];
        if (c->same_t0) {
            ws = d->ws_ns < ws ? d->ws_ns : ws;
            we = d->we_ns > we ? d->we_ns : we;
        } else {
            ws = d->ws_ns > ws ? d->ws_ns : ws;
            we = d->we_ns < we ? d->we_ns : we;
        }
    }
    if (ws > we) /* no common window */
        we = ws;
    m->window_start_ns = ws;
    m->window_end_ns = we;
    record_set_window(res, ws, we);
    for (size_t i = 0; i <= res->ntargets && !c->same_t0; i++) {
        struct run_rates *r = i < res->ntargets ? &res->targets[i].rates : &res->all.rates;
        const struct run_rates *sum = &c->sums[i];
        r->planned = sum->planned;
        r->sent = sum->sent;
        r->completed = sum->completed;
        r->goodput = sum->goodput;
        r->achieved_send = sum->achieved_send > 0 ? sum->achieved_send : NAN;
    }
}

static int cmp_tick_in(const void *pa, const void *pb)
{
    const struct merge_tick *a = pa, *b = pb;
    return a->start_s < b->start_s ? -1 : a->start_s > b->start_s;
}

/* Every shard's timeline on the merged axis, summed interval by interval. With one t0 the shards cut
 * their seconds at the same edges (whole seconds and the window's edges: record/record.h struct
 * run_tick), so intervals that start together are one interval of the merge; without, each shard's
 * timeline moves by its offset rounded to whole seconds. An interval of one shard that another
 * shard's edge cuts (a window that ends earlier) stays whole in the merged interval where it starts. */
static void merge_ticks(struct merge_ctx *c)
{
    struct run_record *res = &c->m->res;
    qsort(c->ticks, c->nticks, sizeof *c->ticks, cmp_tick_in);
    res->ticks = xcalloc(c->nticks ? c->nticks : 1, sizeof *res->ticks);
    res->nticks = 0;
    for (size_t i = 0; i < c->nticks; i++) {
        const struct merge_tick *in = &c->ticks[i];
        struct run_tick *t = res->nticks ? &res->ticks[res->nticks - 1] : NULL;
        if (!t || in->start_s - t->start_s > 1e-6) {
            t = &res->ticks[res->nticks++];
            *t = (struct run_tick){.start_s = in->start_s, .p50_ms = NAN, .p99_ms = NAN, .max_ms = NAN};
        }
        if (in->t.length_s > t->length_s)
            t->length_s = in->t.length_s;
        t->planned += in->t.planned;
        t->sent += in->t.sent;
        t->completed += in->t.completed;
        t->ok += in->t.ok;
        t->errors += in->t.errors;
        t->dropped += in->t.dropped;
        if (isfinite(in->t.max_ms) && !(in->t.max_ms <= t->max_ms))
            t->max_ms = in->t.max_ms;
    }
    /* intervals follow each other: one that another shard's edge cut ends there */
    for (size_t i = 0; i + 1 < res->nticks; i++)
        if (res->ticks[i].start_s + res->ticks[i].length_s > res->ticks[i + 1].start_s)
            res->ticks[i].length_s = res->ticks[i + 1].start_s - res->ticks[i].start_s;
}

/* Everything derived once every shard is added: the total (the sum of the targets, as in one
 * process), the window and rates (counted again from the logs when given), the timeline, the
 * statistics, the shares and identities, the plan check and the warnings. */
static int derive(struct merge_ctx *c, const char *const *log_paths)
{
    struct merge_summary *m = c->m;
    struct run_record *res = &m->res;
    record_sum_targets(res);
    m->same_t0 = c->same_t0;
    m->windows_equal = c->same_t0;
    double end_max = 0;
    int64_t skew_min = INT64_MAX, skew_max = INT64_MIN;
    for (uint32_t k = 0; k < c->count; k++) {
        const struct merge_doc *d = &c->docs[k];
        m->shard_t0_unix_ns[k] = d->t0_unix_ns;
        m->windows_equal &= fabs(d->window_s - c->docs[0].window_s) <= 1e-6;
        end_max = fmax(end_max, (double)d->off_ns / 1e9 + d->elapsed_s);
        skew_min = res->shard.parts[k].start_skew_ns < skew_min ? res->shard.parts[k].start_skew_ns : skew_min;
        skew_max = res->shard.parts[k].start_skew_ns > skew_max ? res->shard.parts[k].start_skew_ns : skew_max;
    }
    res->shard.skew_min_ns = skew_min;
    res->shard.skew_max_ns = skew_max;
    res->elapsed_s = end_max;
    merge_window(c);
    /* the logs count the events again over the window (not over an empty common window: the shards'
     * own rates, summed, are all there is then) */
    bool common = c->same_t0 || m->window_end_ns > m->window_start_ns;
    int rc = log_paths && common ? merge_count_logs(c, log_paths) : 0;
    if (rc)
        return rc;
    res->generator.gap_ms = res->all.rates.planned > 0 ? 1e3 / res->all.rates.planned : NAN;
    merge_ticks(c);
    merge_hostnames(res);
    record_summarize(res);
    record_derive(res);
    bool identities_ok = res->accounting_ok;
    /* the result accounts for the whole plan only when the sums hold, every shard's own accounting
     * held and the shards planned the whole plan (a failed shard says why not) */
    merge_plan_check(c);
    res->accounting_ok = identities_ok && c->shards_ok && (!m->plan_checked || m->plan_ok);
    merge_verdicts(c, identities_ok);
    merge_notes(c);
    return 0;
}

int merge_summary_from_docs(struct merge_summary *m, json_t *const *roots, const char *const *names, uint32_t count,
                            uint64_t plan_id, uint64_t start_at_unix_ns, const char *const *log_paths,
                            const char *const *argv, int argc, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    struct merge_ctx c = {.m = m, .count = count, .shards_ok = true, .err = err, .errlen = errlen};
    c.docs = xcalloc(count ? count : 1, sizeof *c.docs);
    c.recs = xcalloc(count ? count : 1, sizeof *c.recs);
    int rc = read_docs(&c, roots, names);
    if (!rc)
        rc = check_targets(&c);
    if (!rc) {
        begin(&c, plan_id, start_at_unix_ns, argv, argc);
        rc = place_docs(&c);
    }
    if (!rc) {
        size_t nt = m->res.ntargets;
        c.sums = xcalloc(nt + 1, sizeof *c.sums);
        c.planned = xcalloc((size_t)count * nt, sizeof *c.planned);
        m->shard_t0_unix_ns = xcalloc(count, sizeof *m->shard_t0_unix_ns);
    }
    for (uint32_t k = 0; k < count && !rc; k++)
        rc = add_shard(&c, k, roots[k]);
    if (!rc)
        rc = derive(&c, log_paths);
    for (uint32_t k = 0; k < count; k++)
        record_release(&c.recs[k]);
    free(c.recs);
    free(c.docs);
    free(c.sums);
    free(c.planned);
    free(c.ticks);
    warn_list_release(&c.carried);
    if (rc)
        merge_summary_release(m);
    return rc;
}

int merge_summary_build(struct merge_summary *m, const struct merge_set *s, const char *const *argv, int argc,
                        char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (!merge_set_complete(s, MERGE_JSON))
        return knee_fail(err, errlen, KNEE_EINVAL, "the merged summary needs every shard's JSON (knee run --json)");
    json_t **roots = xcalloc(s->count, sizeof *roots);
    const char **names = xcalloc(s->count, sizeof *names);
    int rc = 0;
    for (uint32_t k = 0; k < s->count && !rc; k++) {
        names[k] = s->shards[k].path[MERGE_JSON];
        json_error_t je;
        roots[k] = json_load_file(names[k], JSON_REJECT_DUPLICATES, &je);
        if (!roots[k])
            rc = knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", names[k], je.line, je.text);
    }
    /* the shards' binary logs, when given, count the events again (merge_count_logs) */
    const char **logs = NULL;
    if (merge_set_complete(s, MERGE_LOG)) {
        logs = xcalloc(s->count, sizeof *logs);
        for (uint32_t k = 0; k < s->count; k++)
            logs[k] = s->shards[k].path[MERGE_LOG];
    }
    if (!rc)
        rc = merge_summary_from_docs(m, roots, names, s->count, s->plan_id, s->start_at_unix_ns, logs, argv, argc, err,
                                     errlen);
    free(logs);
    for (uint32_t k = 0; k < s->count; k++)
        if (roots[k])
            json_decref(roots[k]);
    free(roots);
    free(names);
    return rc;
}

void merge_summary_release(struct merge_summary *m)
{
    record_release(&m->res);
    free(m->shard_t0_unix_ns);
    memset(m, 0, sizeof *m);
}
