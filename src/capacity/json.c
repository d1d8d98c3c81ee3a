/* knee capacity --json: the document "knee-capacity/1" (docs/FORMATS.md#knee-capacity-json).
 * Rates are per second, latencies in ms, shares as fractions; a number that was not measured
 * is null (core/json writes non-finite doubles as null). */
#include "capacity/capacity.h"

#include "core/json.h"

#include <math.h>
#include <string.h>

static void step_fields(struct jw *j, const struct capacity_step *s)
{
    jw_kv_bool(j, "ran", s->ran);
    jw_kv_bool(j, "held", s->held);
    jw_kv_string(j, "reason", s->reason);
    jw_kv_double(j, "planned", s->planned);
    jw_kv_double(j, "achieved", s->achieved);
    jw_kv_double(j, "p50", s->p50_ms);
    jw_kv_double(j, "p99", s->p99_ms);
    jw_kv_double(j, "lag_p99", s->lag_p99_ms);
    jw_kv_double(j, "error_rate", s->error_rate);
    jw_kv_uint(j, "requests", s->requests);
}

static void write_config(struct jw *j, const struct capacity_config *cfg, const struct capacity_result *r)
{
    struct capacity_load b;
    capacity_load_of(cfg, &b);
    jw_key(j, "config");
    jw_object_begin(j);
    jw_key(j, "rates");
    jw_array_begin(j);
    for (size_t i = 0; i < cfg->nrates; i++)
        jw_double(j, cfg->rates[i]);
    jw_array_end(j);
    jw_kv_uint(j, "reps", cfg->reps);
    jw_kv_double(j, "step_s", (double)cfg->step_ns / 1e9);
    jw_kv_double(j, "warmup_s", (double)cfg->warmup_ns / 1e9);
    jw_kv_double(j, "settle_s", (double)cfg->settle_ns / 1e9);
    jw_kv_string(j, "arrivals", b.arrivals == RUN_ARRIVALS_POISSON ? "poisson" : "constant");
    jw_kv_uint(j, "seed", b.seed);
    jw_kv_uint(j, "threads", b.threads);
    jw_kv_bool(j, "http3", b.http3);                                   /* --http3: every window spoke h3 */
    jw_kv_double(j, "timer_slack_ms", (double)b.timer_slack_ns / 1e6); /* --timer-slack, 0: none */
    jw_kv_double(j, "probe_rate", r->probe_rate);
    jw_kv_string(j, "probe_target", r->probe_target);
    jw_kv_double(j, "probe_lag_limit", capacity_probe_lag_limit_ms(cfg, NULL, 0));
    jw_kv_string(j, "latency_group", capacity_latency_group_name(capacity_latency_group(cfg->slo, cfg->nslo)));
    if (cfg->between)
        jw_kv_string(j, "between", cfg->between);
    else {
        jw_key(j, "between");
        jw_null(j);
    }
    jw_kv_bool(j, "cross_check", cfg->cross_check);
    jw_kv_double(j, "agree", cfg->agree > 0 ? cfg->agree : CAPACITY_DEFAULT_AGREE);
    jw_kv_double(j, "delivered_floor", CAPACITY_DELIVERED);
    jw_key(j, "require");
    if (cfg->require > 0)
        jw_double(j, cfg->require);
    else
        jw_null(j);
    jw_key(j, "targets");
    jw_array_begin(j);
    for (size_t i = 0; i < b.ntargets; i++) {
        jw_object_begin(j);
        jw_kv_string(j, "name", b.targets[i].name);
        jw_kv_string(j, "url", b.targets[i].url);
        jw_kv_string(j, "method", b.targets[i].method ? b.targets[i].method : "GET");
        jw_kv_double(j, "weight", b.targets[i].weight > 0 ? b.targets[i].weight : 1);
        jw_object_end(j);
    }
    jw_array_end(j);
    jw_object_end(j);
}

static void write_ladder(struct jw *j, const struct capacity_result *r)
{
    jw_key(j, "ladder");
    jw_array_begin(j);
    for (size_t k = 0; k < r->nrates; k++) {
        const struct capacity_rung *g = &r->vote.rung[k];
        jw_object_begin(j);
        jw_kv_double(j, "rate", r->rates[k]);
        jw_kv_uint(j, "held_by", g->held_by);
        jw_kv_uint(j, "valid_reps", g->valid_reps);
        jw_kv_bool(j, "held", g->held);
        jw_key(j, "median");
        jw_object_begin(j);
        jw_kv_double(j, "achieved", g->achieved);
        jw_kv_double(j, "p50", g->p50_ms);
        jw_kv_double(j, "p99", g->p99_ms);
        jw_kv_double(j, "error_rate", g->error_rate);
        jw_object_end(j);
        jw_key(j, "reps");
        jw_array_begin(j);
        for (size_t i = 0; i < r->nreps; i++) {
            jw_object_begin(j);
            jw_kv_uint(j, "rep", i + 1);
            jw_kv_bool(j, "valid", r->reps[i].valid);
            step_fields(j, &r->reps[i].step[k]);
            jw_object_end(j);
        }
        jw_array_end(j);
        jw_object_end(j);
    }
    jw_array_end(j);
}

static void write_reps(struct jw *j, const struct capacity_result *r)
{
    jw_key(j, "probes");
    jw_array_begin(j);
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_step *p = &r->reps[i].probe;
        jw_object_begin(j);
        jw_kv_uint(j, "rep", i + 1);
        jw_kv_bool(j, "ok", p->held);
        jw_kv_double(j, "planned", p->planned);
        jw_kv_double(j, "achieved", p->achieved);
        jw_kv_double(j, "lag_p99", p->lag_p99_ms);
        jw_kv_string(j, "reason", p->reason);
        jw_object_end(j);
    }
    jw_array_end(j);

    jw_key(j, "repetitions");
    jw_array_begin(j);
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_rep *p = &r->reps[i];
        jw_object_begin(j);
        jw_kv_uint(j, "rep", i + 1);
        jw_kv_bool(j, "ran", p->ran);
        jw_kv_bool(j, "valid", p->valid);
        jw_kv_string(j, "excluded", p->excluded);
        jw_key(j, "between");
        if (p->between_ran) {
            jw_object_begin(j);
            jw_kv_int(j, "status", p->between_status);
            jw_kv_double(j, "seconds", p->between_s);
            jw_object_end(j);
        } else {
            jw_null(j);
        }
        jw_object_end(j);
    }
    jw_array_end(j);

    jw_key(j, "environment");
    jw_array_begin(j);
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_env *e = &r->reps[i].env;
        jw_object_begin(j);
        jw_kv_uint(j, "rep", i + 1);
        jw_kv_bool(j, "recorded", e->have);
        jw_kv_string(j, "start", e->start_wall);
        jw_kv_double(j, "wall_s", e->wall_s);
        jw_key(j, "loadavg_before");
        jw_array_begin(j);
        for (int k = 0; k < 3; k++)
            jw_double(j, e->loadavg_before[k]);
        jw_array_end(j);
        jw_key(j, "loadavg_after");
        jw_array_begin(j);
        for (int k = 0; k < 3; k++)
            jw_double(j, e->loadavg_after[k]);
        jw_array_end(j);
        jw_key(j, "cpus");
        jw_array_begin(j);
        for (size_t c = 0; c < e->ncpus; c++) {
            jw_object_begin(j);
            jw_kv_uint(j, "cpu", c);
            jw_kv_double(j, "busy", e->cpu[c].busy);
            jw_kv_double(j, "iowait", e->cpu[c].iowait);
            jw_kv_double(j, "steal", e->cpu[c].steal);
            jw_object_end(j);
        }
        jw_array_end(j);
        jw_kv_double(j, "knee_cpu_s", e->knee_cpu_s);
        jw_kv_double(j, "others_share", e->others_share);
        jw_key(j, "top");
        jw_array_begin(j);
        for (size_t k = 0; k < e->nprocs; k++) {
            jw_object_begin(j);
            jw_kv_int(j, "pid", e->top[k].pid);
            jw_kv_string(j, "comm", e->top[k].comm);
            jw_kv_double(j, "cpu_s", e->top[k].cpu_s);
            jw_object_end(j);
        }
        jw_array_end(j);
        jw_kv_bool(j, "busy", e->busy);
        jw_object_end(j);
    }
    jw_array_end(j);
}

static void write_queue(struct jw *j, const struct capacity_result *r)
{
    const struct capacity_queue *q = &r->cross.queue;
    jw_key(j, "queue");
    jw_object_begin(j);
    jw_kv_bool(j, "ran", q->ran);
    jw_kv_string(j, "why_not", q->ran ? "" : q->why_not);
    if (q->ran) {
        jw_kv_string(j, "arrivals", q->poisson ? "poisson" : "constant");
        jw_kv_uint(j, "seed", q->seed);
        jw_kv_string(j, "term", q->term_stat);
        jw_kv_uint(j, "connections", q->connections);
        jw_kv_double(j, "one_connection_mean", q->one_conn_ms);
        jw_kv_double(j, "saturation", q->saturation);
        jw_kv_uint(j, "servers", q->servers);
        jw_kv_double(j, "scale", q->scale);
        jw_key(j, "service");
        jw_object_begin(j);
        jw_kv_double(j, "mean", q->service_mean_ms);
        jw_kv_double(j, "p50", q->service_p50_ms);
        jw_kv_double(j, "p99", q->service_p99_ms);
        jw_object_end(j);
        jw_kv_uint(j, "windows", q->windows);
        jw_kv_double(j, "window_s", q->window_s);
        jw_kv_double(j, "warmup_s", q->warmup_s);
        jw_key(j, "rungs");
        jw_array_begin(j);
        for (size_t k = 0; k < r->nrates; k++) {
            const struct capacity_queue_point *p = &q->rung[k];
            jw_object_begin(j);
            jw_kv_double(j, "rate", p->rate);
            jw_kv_double(j, "predicted", p->value_ms);
            jw_kv_uint(j, "windows", p->windows);
            jw_kv_uint(j, "held_by", p->held_by);
            jw_kv_bool(j, "held", p->held);
            jw_object_end(j);
        }
        jw_array_end(j);
        jw_kv_double(j, "capacity", q->capacity);
        jw_kv_bool(j, "capacity_at_least", q->capacity_at_hi);
    }
    jw_object_end(j);
}

static void write_cross(struct jw *j, const struct capacity_result *r)
{
    const struct capacity_cross *x = &r->cross;
    jw_key(j, "cross_check");
    jw_object_begin(j);
    jw_kv_bool(j, "ran", x->ran);
    jw_kv_double(j, "closed_loop", x->closed_loop);
    jw_key(j, "agree");
    if (x->ran)
        jw_bool(j, x->agree);
    else
        jw_null(j);
    jw_kv_double(j, "difference", x->ran ? x->difference : NAN);
    jw_kv_double(j, "relative", x->ran ? x->relative : NAN);
    jw_kv_double(j, "agree_threshold", x->agree_share);
    jw_kv_bool(j, "beyond", x->beyond);
    jw_key(j, "regime");
    if (x->ran)
        jw_string(j, capacity_regime_name(x->regime));
    else
        jw_null(j);
    jw_kv_string(j, "regime_reason", x->ran ? x->regime_why : "");
    jw_key(j, "method");
    if (x->ran)
        jw_string(j, x->regime == CAPACITY_REGIME_LATENCY ? "queue" : "closed loop");
    else
        jw_null(j);
    jw_kv_double(j, "second", x->ran ? x->second : NAN);
    jw_kv_double(j, "bound", x->ran ? x->bound : NAN);
    jw_kv_bool(j, "above_bound", x->ran && x->above_bound);
    write_queue(j, r);
    jw_key(j, "steps");
    jw_array_begin(j);
    for (size_t k = 0; k < x->nsteps; k++) {
        jw_object_begin(j);
        jw_kv_uint(j, "connections", x->step[k].connections);
        jw_kv_double(j, "throughput", x->step[k].s.achieved);
        step_fields(j, &x->step[k].s);
        jw_object_end(j);
    }
    jw_array_end(j);
    jw_object_end(j);
}

void capacity_write_json(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r)
{
    struct jw j;
    jw_init(&j, out, true);
    jw_object_begin(&j);
    jw_kv_string(&j, "schema", "knee-capacity/1");
    const struct capacity_verdict *v = &r->verdict;
    jw_kv_double(&j, "capacity", v->capacity);
    jw_kv_string(&j, "verdict", v->valid ? "valid" : "invalid");
    jw_kv_int(&j, "exit_code", v->exit_code);
    jw_key(&j, "reasons");
    jw_array_begin(&j);
    for (size_t i = 0; i < v->nreasons; i++)
        jw_string(&j, v->reasons[i]);
    jw_array_end(&j);
    jw_key(&j, "slo");
    jw_array_begin(&j);
    for (size_t i = 0; i < cfg->nslo; i++)
        jw_string(&j, cfg->slo[i].expr);
    jw_array_end(&j);
    const struct capacity_vote *vo = &r->vote;
    jw_kv_double(&j, "ladder_capacity", vo->capacity);
    jw_key(&j, "bracket");
    jw_array_begin(&j);
    jw_double(&j, vo->cap_index >= 0 ? vo->capacity : 0);
    jw_double(&j, vo->bracket_hi); /* null when the top held (infinite) */
    jw_array_end(&j);
    jw_kv_bool(&j, "top_held", vo->top_held);
    jw_key(&j, "nonmonotone");
    jw_array_begin(&j);
    for (size_t i = 0; i < vo->nnonmono; i++)
        jw_double(&j, r->rates[vo->nonmono[i]]);
    jw_array_end(&j);
    jw_kv_uint(&j, "valid_reps", vo->nvalid);
    jw_kv_uint(&j, "reps", r->nreps);
    jw_key(&j, "require_met");
    if (v->require_given)
        jw_bool(&j, v->require_met);
    else
        jw_null(&j);
    jw_kv_bool(&j, "interrupted", r->interrupted);
    jw_kv_double(&j, "elapsed_s", r->elapsed_s);
    write_config(&j, cfg, r);
    write_ladder(&j, r);
    write_reps(&j, r);
    write_cross(&j, r);
    jw_object_end(&j);
    jw_end(&j);
}
