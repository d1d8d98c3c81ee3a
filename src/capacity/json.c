/* knee capacity --json: the document "knee-capacity/1" (docs/FORMATS.md#knee-capacity-json).
 * Rates are per second, latencies in ms, shares as fractions; a number that was not measured
 * is null (core/json writes non-finite doubles as null). */
#include "capacity/capacity.h"

#include "core/json.h"

#include <math.h>
#include <string.h>

static void step_fields(struct json *j, const struct capacity_step *s)
{
    json_kv_bool(j, "ran", s->ran);
    json_kv_bool(j, "held", s->held);
    json_kv_string(j, "reason", s->reason);
    json_kv_double(j, "planned", s->planned);
    json_kv_double(j, "achieved", s->achieved);
    json_kv_double(j, "p50", s->p50_ms);
    json_kv_double(j, "p99", s->p99_ms);
    json_kv_double(j, "lag_p99", s->lag_p99_ms);
    json_kv_double(j, "error_rate", s->error_rate);
    json_kv_uint(j, "requests", s->requests);
}

static void write_config(struct json *j, const struct capacity_config *cfg, const struct capacity_result *r)
{
    const struct run_config *b = &cfg->base;
    json_key(j, "config");
    json_object_begin(j);
    json_key(j, "rates");
    json_array_begin(j);
    for (size_t i = 0; i < cfg->nrates; i++)
        json_double(j, cfg->rates[i]);
    json_array_end(j);
    json_kv_uint(j, "reps", cfg->reps);
    json_kv_double(j, "step_s", (double)cfg->step_ns / 1e9);
    json_kv_double(j, "warmup_s", (double)cfg->warmup_ns / 1e9);
    json_kv_double(j, "settle_s", (double)cfg->settle_ns / 1e9);
    json_kv_string(j, "arrivals", b->plan.arrivals == RUN_ARRIVALS_POISSON ? "poisson" : "constant");
    json_kv_uint(j, "seed", b->plan.seed);
    json_kv_uint(j, "threads", b->threads);
    json_kv_double(j, "timer_slack_ms", (double)b->timer_slack_ns / 1e6); /* --timer-slack, 0: none */
    json_kv_double(j, "probe_rate", r->probe_rate);
    json_kv_string(j, "probe_target", r->probe_target);
    json_kv_double(j, "probe_lag_limit", capacity_probe_lag_limit_ms(cfg, NULL, 0));
    json_kv_string(j, "latency_group", capacity_latency_group_name(capacity_latency_group(cfg->slo, cfg->nslo)));
    if (cfg->between)
        json_kv_string(j, "between", cfg->between);
    else {
        json_key(j, "between");
        json_null(j);
    }
    json_kv_bool(j, "cross_check", cfg->cross_check);
    json_kv_double(j, "agree", cfg->agree > 0 ? cfg->agree : CAPACITY_DEFAULT_AGREE);
    json_kv_double(j, "delivered_floor", CAPACITY_DELIVERED);
    json_key(j, "require");
    if (cfg->require > 0)
        json_double(j, cfg->require);
    else
        json_null(j);
    json_key(j, "targets");
    json_array_begin(j);
    for (size_t i = 0; i < b->plan.ntargets; i++) {
        json_object_begin(j);
        json_kv_string(j, "name", b->plan.targets[i].name);
        json_kv_string(j, "url", b->plan.targets[i].url);
        json_kv_string(j, "method", b->plan.targets[i].method ? b->plan.targets[i].method : "GET");
        json_kv_double(j, "weight", b->plan.targets[i].weight > 0 ? b->plan.targets[i].weight : 1);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

static void write_ladder(struct json *j, const struct capacity_result *r)
{
    json_key(j, "ladder");
    json_array_begin(j);
    for (size_t k = 0; k < r->nrates; k++) {
        const struct capacity_rung *g = &r->vote.rung[k];
        json_object_begin(j);
        json_kv_double(j, "rate", r->rates[k]);
        json_kv_uint(j, "held_by", g->held_by);
        json_kv_uint(j, "valid_reps", g->valid_reps);
        json_kv_bool(j, "held", g->held);
        json_key(j, "median");
        json_object_begin(j);
        json_kv_double(j, "achieved", g->achieved);
        json_kv_double(j, "p50", g->p50_ms);
        json_kv_double(j, "p99", g->p99_ms);
        json_kv_double(j, "error_rate", g->error_rate);
        json_object_end(j);
        json_key(j, "reps");
        json_array_begin(j);
        for (size_t i = 0; i < r->nreps; i++) {
            json_object_begin(j);
            json_kv_uint(j, "rep", i + 1);
            json_kv_bool(j, "valid", r->reps[i].valid);
            step_fields(j, &r->reps[i].step[k]);
            json_object_end(j);
        }
        json_array_end(j);
        json_object_end(j);
    }
    json_array_end(j);
}

static void write_reps(struct json *j, const struct capacity_result *r)
{
    json_key(j, "probes");
    json_array_begin(j);
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_step *p = &r->reps[i].probe;
        json_object_begin(j);
        json_kv_uint(j, "rep", i + 1);
        json_kv_bool(j, "ok", p->held);
        json_kv_double(j, "planned", p->planned);
        json_kv_double(j, "achieved", p->achieved);
        json_kv_double(j, "lag_p99", p->lag_p99_ms);
        json_kv_string(j, "reason", p->reason);
        json_object_end(j);
    }
    json_array_end(j);

    json_key(j, "repetitions");
    json_array_begin(j);
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_rep *p = &r->reps[i];
        json_object_begin(j);
        json_kv_uint(j, "rep", i + 1);
        json_kv_bool(j, "ran", p->ran);
        json_kv_bool(j, "valid", p->valid);
        json_kv_string(j, "excluded", p->excluded);
        json_key(j, "between");
        if (p->between_ran) {
            json_object_begin(j);
            json_kv_int(j, "status", p->between_status);
            json_kv_double(j, "seconds", p->between_s);
            json_object_end(j);
        } else {
            json_null(j);
        }
        json_object_end(j);
    }
    json_array_end(j);

    json_key(j, "environment");
    json_array_begin(j);
    for (size_t i = 0; i < r->nreps; i++) {
        const struct capacity_env *e = &r->reps[i].env;
        json_object_begin(j);
        json_kv_uint(j, "rep", i + 1);
        json_kv_bool(j, "recorded", e->have);
        json_kv_string(j, "start", e->start_wall);
        json_kv_double(j, "wall_s", e->wall_s);
        json_key(j, "loadavg_before");
        json_array_begin(j);
        for (int k = 0; k < 3; k++)
            json_double(j, e->loadavg_before[k]);
        json_array_end(j);
        json_key(j, "loadavg_after");
        json_array_begin(j);
        for (int k = 0; k < 3; k++)
            json_double(j, e->loadavg_after[k]);
        json_array_end(j);
        json_key(j, "cpus");
        json_array_begin(j);
        for (size_t c = 0; c < e->ncpus; c++) {
            json_object_begin(j);
            json_kv_uint(j, "cpu", c);
            json_kv_double(j, "busy", e->cpu[c].busy);
            json_kv_double(j, "iowait", e->cpu[c].iowait);
            json_kv_double(j, "steal", e->cpu[c].steal);
            json_object_end(j);
        }
        json_array_end(j);
        json_kv_double(j, "knee_cpu_s", e->knee_cpu_s);
        json_kv_double(j, "others_share", e->others_share);
        json_key(j, "top");
        json_array_begin(j);
        for (size_t k = 0; k < e->nprocs; k++) {
            json_object_begin(j);
            json_kv_int(j, "pid", e->top[k].pid);
            json_kv_string(j, "comm", e->top[k].comm);
            json_kv_double(j, "cpu_s", e->top[k].cpu_s);
            json_object_end(j);
        }
        json_array_end(j);
        json_kv_bool(j, "busy", e->busy);
        json_object_end(j);
    }
    json_array_end(j);
}

static void write_cross(struct json *j, const struct capacity_result *r)
{
    const struct capacity_cross *x = &r->cross;
    json_key(j, "cross_check");
    json_object_begin(j);
    json_kv_bool(j, "ran", x->ran);
    json_kv_double(j, "closed_loop", x->closed_loop);
    json_key(j, "agree");
    if (x->ran)
        json_bool(j, x->agree);
    else
        json_null(j);
    json_kv_double(j, "difference", x->ran ? x->difference : NAN);
    json_kv_double(j, "relative", x->ran ? x->relative : NAN);
    json_kv_double(j, "agree_threshold", x->agree_share);
    json_kv_bool(j, "beyond", x->beyond);
    json_key(j, "steps");
    json_array_begin(j);
    for (size_t k = 0; k < x->nsteps; k++) {
        json_object_begin(j);
        json_kv_uint(j, "connections", x->step[k].connections);
        json_kv_double(j, "throughput", x->step[k].s.achieved);
        step_fields(j, &x->step[k].s);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

void capacity_write_json(FILE *out, const struct capacity_config *cfg, const struct capacity_result *r)
{
    struct json j;
    json_init(&j, out, true);
    json_object_begin(&j);
    json_kv_string(&j, "schema", "knee-capacity/1");
    const struct capacity_verdict *v = &r->verdict;
    json_kv_double(&j, "capacity", v->capacity);
    json_kv_string(&j, "verdict", v->valid ? "valid" : "invalid");
    json_kv_int(&j, "exit_code", v->exit_code);
    json_key(&j, "reasons");
    json_array_begin(&j);
    for (size_t i = 0; i < v->nreasons; i++)
        json_string(&j, v->reasons[i]);
    json_array_end(&j);
    json_key(&j, "slo");
    json_array_begin(&j);
    for (size_t i = 0; i < cfg->nslo; i++)
        json_string(&j, cfg->slo[i].expr);
    json_array_end(&j);
    const struct capacity_vote *vo = &r->vote;
    json_kv_double(&j, "ladder_capacity", vo->capacity);
    json_key(&j, "bracket");
    json_array_begin(&j);
    json_double(&j, vo->cap_index >= 0 ? vo->capacity : 0);
    json_double(&j, vo->bracket_hi); /* null when the top held (infinite) */
    json_array_end(&j);
    json_kv_bool(&j, "top_held", vo->top_held);
    json_key(&j, "nonmonotone");
    json_array_begin(&j);
    for (size_t i = 0; i < vo->nnonmono; i++)
        json_double(&j, r->rates[vo->nonmono[i]]);
    json_array_end(&j);
    json_kv_uint(&j, "valid_reps", vo->nvalid);
    json_kv_uint(&j, "reps", r->nreps);
    json_key(&j, "require_met");
    if (v->require_given)
        json_bool(&j, v->require_met);
    else
        json_null(&j);
    json_kv_bool(&j, "interrupted", r->interrupted);
    json_kv_double(&j, "elapsed_s", r->elapsed_s);
    write_config(&j, cfg, r);
    write_ladder(&j, r);
    write_reps(&j, r);
    write_cross(&j, r);
    json_object_end(&j);
    json_end(&j);
}
