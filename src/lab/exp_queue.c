/* knee lab queue (the queueing article): the queue server (4 slots, 503 QUEUE_TIMEOUT after 250 ms
 * waiting for one) under four rounds, with every outcome counted on both sides and the
 * accounting identities checked: what the client planned, sent and got back, and what the
 * server took in, finished, turned away or still holds. */
#include "lab/internal.h"

#include "core/clock.h"
#include "core/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE_DEFAULT_NS (10 * NS_PER_S)
#define QUEUE_QUICK_NS (5 * NS_PER_S)
#define DEMAND 40.0

static const struct lab_lengths lengths = {QUEUE_QUICK_NS, QUEUE_DEFAULT_NS, 0, 0}; /* no warm-up unless --warmup */

struct round_plan {
    const char *name, *label;
    bool open_loop;
    unsigned work_ms;
    unsigned clients; /* closed loop: clients; open loop: the pool cap (0 = default) */
    bool drop;
};

static const struct round_plan plans[4] = {
    {"open-20ms", "open loop 40/s, 20 ms of work", true, 20, 0, false},
    {"closed-200ms", "closed loop, 4 clients, 200 ms of work", false, 200, 4, false},
    {"open-200ms", "open loop 40/s, 200 ms of work", true, 200, 0, false},
    {"starved", "open loop 40/s, 200 ms, 1 connection, drop when busy", true, 200, 1, true},
};

static const struct run_reject queue_reject = {503, "QUEUE_TIMEOUT"};

void lab_queue_fill_round(const struct lab_round *rd, const char *label, bool open_loop, unsigned work_ms,
                          const struct serve_counters *before, const struct serve_counters *after,
                          struct lab_queue_round *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->label, sizeof o->label, "%s", label);
    o->open_loop = open_loop;
    o->demand_rate = DEMAND;
    o->work_ms = work_ms;
    lab_validity_of(&rd->res, &o->valid);
    const struct run_target_result *t = &rd->res.targets[0];
    o->counts = t->counts;
    const struct run_rates *rt = lab_rates(rd, 0);
    o->planned_rate = rt->planned;
    o->sent_rate = rt->sent;
    o->goodput_rate = rt->goodput;

    struct serve_counters *s = &o->server;
    s->executed = after->executed - before->executed;
    s->ok = after->ok - before->ok;
    s->rejected = after->rejected - before->rejected;
    s->cancelled = after->cancelled - before->cancelled;
    s->write_failures = after->write_failures - before->write_failures;
    s->requests = after->requests - before->requests;
    s->bad_requests = after->bad_requests - before->bad_requests;
    s->connections_total = after->connections_total - before->connections_total;
    s->active = after->active;
    s->waiting = after->waiting;
    s->connections = after->connections;

    lab_summarize_values(rd, 0, OUTCOME_OK, LAB_COL_LATENCY, &o->ok_latency);
    lab_summarize_values(rd, 0, OUTCOME_REJECTED, LAB_COL_LATENCY, &o->rejected_latency);
    /* The run merges Server-Timing over every response of a target, rejections included
     * (they carry their 250 ms of waiting): the output says "all responses". */
    const struct hdr *q = lab_server_timing(&rd->res, 0, "queue");
    o->queue_mean_ms = q && q->total_count ? hdr_mean(q) / 1e6 : NAN;

    /* The identities. The client's counts include its warm-up (if any) for the cross check:
     * the server cannot tell warm-up requests apart. */
    struct run_counts all = t->counts;
    record_counts_add(&all, &t->warmup_counts);
    o->client_identity = record_counts_hold(&t->counts) && record_counts_hold(&t->warmup_counts);
    uint64_t in_flight_before = before->active + before->waiting;
    o->server_identity =
        s->requests + in_flight_before == s->ok + s->rejected + s->cancelled + s->bad_requests + s->active + s->waiting;
    o->cross_identity =
        all.sent == s->requests && all.outcome[OUTCOME_OK] == s->ok && all.outcome[OUTCOME_REJECTED] == s->rejected;
}

static void print_round(FILE *out, size_t i, const struct lab_queue_round *o, double dur_s,
                        const struct run_record *res)
{
    const struct run_counts *k = &o->counts;
    lab_heading(out, "round %zu of 4: %s, %.0f s", i + 1, o->label, dur_s);
    char rname[16];
    snprintf(rname, sizeof rname, "round %zu", i + 1);
    lab_print_round_warnings(out, "  ", rname, res);
    fprintf(out, "  client: planned %llu = sent %llu + dropped %llu\n", (unsigned long long)k->planned,
            (unsigned long long)k->sent, (unsigned long long)k->dropped);
    fprintf(out,
            "          sent %llu = ok %llu + rejected %llu + http_error %llu + invalid %llu + transport %llu + "
            "timeout %llu + cancelled %llu   [%s]\n",
            (unsigned long long)k->sent, (unsigned long long)k->outcome[OUTCOME_OK],
            (unsigned long long)k->outcome[OUTCOME_REJECTED], (unsigned long long)k->outcome[OUTCOME_HTTP_ERROR],
            (unsigned long long)k->outcome[OUTCOME_INVALID], (unsigned long long)k->outcome[OUTCOME_TRANSPORT],
            (unsigned long long)k->outcome[OUTCOME_TIMEOUT], (unsigned long long)k->outcome[OUTCOME_CANCELLED],
            lab_holds(o->client_identity));
    const struct serve_counters *s = &o->server;
    fprintf(out,
            "  server: entered %llu = ok %llu + rejected %llu + cancelled %llu + bad %llu + still in flight %llu   "
            "[%s]\n",
            (unsigned long long)s->requests, (unsigned long long)s->ok, (unsigned long long)s->rejected,
            (unsigned long long)s->cancelled, (unsigned long long)s->bad_requests,
            (unsigned long long)(s->active + s->waiting), lab_holds(o->server_identity));
    fprintf(out, "  client sent = server entered, client ok = server ok, client rejected = server rejected   [%s]\n",
            lab_holds(o->cross_identity));
    char b[4][32];
    fprintf(out, "  rates (knee run's, by event time): planned %s/s, sent %s/s, goodput %s/s (the demand: %.0f/s)\n",
            units_fmt_rate(o->planned_rate, b[0], 32), units_fmt_rate(o->sent_rate, b[1], 32),
            units_fmt_rate(o->goodput_rate, b[2], 32), o->demand_rate);
    fprintf(out, "  ok latency ms: p50 %s, p99 %s, max %s", units_fmt_fixed(o->ok_latency.p50, 1, b[0], 32),
            units_fmt_fixed(o->ok_latency.p99, 1, b[1], 32), units_fmt_fixed(o->ok_latency.max, 1, b[2], 32));
    if (o->rejected_latency.count)
        fprintf(out, "; rejected: p50 %s", units_fmt_fixed(o->rejected_latency.p50, 1, b[3], 32));
    fprintf(out, "; server queue time mean %s ms (Server-Timing, all responses)\n",
            units_fmt_fixed(o->queue_mean_ms, 1, b[0], 32));
}

static void print_table(FILE *out, const struct lab_queue_result *r)
{
    lab_heading(out, "the four rounds side by side");
    fprintf(out, "  %-54s%8s%7s%8s%6s%9s%7s%8s%10s%9s\n", "round", "planned", "sent", "dropped", "ok", "rejected",
            "other", "sent/s", "goodput/s", "ok p50");
    for (size_t i = 0; i < r->nrounds; i++) {
        const struct lab_queue_round *o = &r->round[i];
        const struct run_counts *k = &o->counts;
        uint64_t other = k->sent - k->outcome[OUTCOME_OK] - k->outcome[OUTCOME_REJECTED];
        char lab[96], b[32], sr[32], gr[32];
        snprintf(lab, sizeof lab, "%zu %s", i + 1, o->label);
        fprintf(out, "  %-54s%8llu%7llu%8llu%6llu%9llu%7llu%8s%10s%9s\n", lab, (unsigned long long)k->planned,
                (unsigned long long)k->sent, (unsigned long long)k->dropped, (unsigned long long)k->outcome[OUTCOME_OK],
                (unsigned long long)k->outcome[OUTCOME_REJECTED], (unsigned long long)other,
                units_fmt_rate(o->sent_rate, sr, sizeof sr), units_fmt_rate(o->goodput_rate, gr, sizeof gr),
                units_fmt_fixed(o->ok_latency.p50, 1, b, sizeof b));
    }
}

void lab_queue_explain(FILE *out, const struct lab_queue_result *r)
{
    lab_heading(out, "what this run shows");
    if (r->nrounds < 4)
        return;
    struct lab_say s = {.n = 0};
    const struct lab_queue_round *a = &r->round[0], *b = &r->round[1], *c = &r->round[2], *d = &r->round[3];
    uint64_t a_ok = a->counts.outcome[OUTCOME_OK];
    lab_say_add(&s, "open 40/s with 20 ms of work: %llu of %llu planned requests ok (p99 %.1f ms)",
                (unsigned long long)a_ok, (unsigned long long)a->counts.planned, a->ok_latency.p99);
    if (lab_say_invalid(&s, &a->valid, "; the round")) {
        lab_say_add(&s, ": whether 40/s all succeed is not read from it.");
        lab_say_end(&s, out);
    } else
        lab_say_verdict(&s, out, a_ok == a->counts.planned, " — 4 slots of 20 ms carry 200/s, so 40/s all succeed.",
                        " — not all succeeded, unlike the article's run; see the counts.");

    lab_say_add(&s, "closed loop, 4 clients, 200 ms of work: %.1f requests/s against a demand of %.0f/s", b->sent_rate,
                b->demand_rate);
    if (lab_say_invalid(&s, &b->valid, "; the round"))
        lab_say_add(&s, ": the shortfall is not read from it.");
    else if (b->sent_rate < 0.75 * b->demand_rate)
        lab_say_add(&s,
                    " — the generator waited for each answer and silently dropped %.0f%% of the demand; nothing "
                    "failed and nothing was rejected, so no error rate shows it.",
                    100 * (1 - b->sent_rate / b->demand_rate));
    else
        lab_say_add(&s, " — it kept up with the demand this time.");
    lab_say_end(&s, out);

    uint64_t c_ok = c->counts.outcome[OUTCOME_OK], c_rej = c->counts.outcome[OUTCOME_REJECTED];
    lab_say_add(&s,
                "open 40/s with 200 ms of work: of %llu sent, %llu ok (goodput %.1f/s) and %llu rejected with 503 "
                "QUEUE_TIMEOUT",
                (unsigned long long)c->counts.sent, (unsigned long long)c_ok, c->goodput_rate,
                (unsigned long long)c_rej);
    if (lab_say_invalid(&s, &c->valid, "; the round"))
        lab_say_add(&s, ": knee did not send the demand as planned, so the rejections are not read as the server's "
                        "answer to it.");
    else if (c_rej > 0)
        lab_say_add(&s,
                    " — 4 slots of 200 ms carry 20/s; the rest waited 250 ms for a slot and were turned away "
                    "(rejected p50 %.1f ms). Responses keep pace with the demand while goodput is %.0f%% of it: "
                    "a rejection is a completed failure, not an error of the generator.",
                    c->rejected_latency.p50, 100 * c->goodput_rate / c->demand_rate);
    else
        lab_say_add(&s, " — no rejection showed, unlike the article's run.");
    lab_say_end(&s, out);

    /* The round built to starve the generator: what it shows rests on knee run's verdict. */
    lab_say_add(&s, "open 40/s, one connection, drop when busy: %llu sent, %llu dropped of %llu planned",
                (unsigned long long)d->counts.sent, (unsigned long long)d->counts.dropped,
                (unsigned long long)d->counts.planned);
    if (d->valid.generator_limited)
        lab_say_add(&s,
                    " — knee run's verdict is GENERATOR-LIMITED, as this round is built to show: the generator, not "
                    "the service, failed; the requests that did go out look fine (ok p50 %.1f ms) because %s of the "
                    "plan never reached the server.",
                    d->ok_latency.p50, d->counts.dropped * 2 > d->counts.planned ? "most" : "part");
    else
        lab_say_add(&s, " — knee kept to its plan here (not generator-limited), unlike the article's run: fewer drops "
                        "than one connection should allow.");
    lab_say_end(&s, out);

    size_t bad = 0;
    for (size_t i = 0; i < r->nrounds; i++)
        bad += !r->round[i].client_identity + !r->round[i].server_identity + !r->round[i].cross_identity;
    if (bad == 0)
        lab_say_add(&s, "every accounting identity held in every round: on the client, on the server, and between "
                        "them.");
    else
        lab_say_add(&s, "%zu accounting identit%s did NOT hold (marked above): some attempt is unaccounted for.", bad,
                    bad == 1 ? "y" : "ies");
    lab_say_end(&s, out);
}

int lab_queue(const struct lab_options *o, struct lab_queue_result *r)
{
    memset(r, 0, sizeof *r);
    struct lab_exp x;
    int rc = lab_exp_open(&x, o, "queue", &lengths);
    if (rc)
        return rc;
    struct serve_config cfg;
    if ((rc = lab_exp_preset(&x, "queue", o->seed, &cfg)) != 0)
        goto out;
    struct serve_handle *srv = x.srv[0];
    FILE *out = x.out;
    fprintf(out, "knee lab queue: outcomes and accounting (four rounds of %.0f s)\n", (double)x.dur_ns / 1e9);
    fprintf(out, "  queue server %s: %s\n", serve_address(srv), serve_preset_summary("queue"));
    fflush(out);
    for (size_t i = 0; i < 4; i++) {
        const struct round_plan *p = &plans[i];
        char url[160];
        snprintf(url, sizeof url, "http://%s/work?ms=%u", serve_address(srv), p->work_ms);
        struct plan_target t;
        memset(&t, 0, sizeof t);
        t.name = "queue";
        t.url = url;
        struct run_config rc_cfg;
        lab_run_config_init(&rc_cfg, &t, 1, o->seed, x.dur_ns, x.warm_ns);
        rc_cfg.plan.open_loop = p->open_loop;
        rc_cfg.plan.rate = p->open_loop ? DEMAND : 0;
        rc_cfg.plan.connections = p->clients;
        /* One load thread: 40/s needs no more, and the engine gives every thread at least
         * one connection, so "1 connection" must mean one thread too. */
        rc_cfg.threads = 1;
        rc_cfg.when_busy = p->drop ? RUN_BUSY_DROP : RUN_BUSY_QUEUE;
        rc_cfg.rejects = &queue_reject;
        rc_cfg.nrejects = 1;
        struct serve_counters before, after;
        serve_counters(srv, &before);
        char what[128];
        snprintf(what, sizeof what, "round %zu of 4: %s, %.0f s", i + 1, p->label,
                 (double)(x.dur_ns + x.warm_ns) / 1e9);
        if ((rc = lab_round_run(&x.c, p->name, what, &rc_cfg, &x.rd)) != 0)
            goto out;
        serve_counters(srv, &after);
        lab_queue_fill_round(&x.rd, p->label, p->open_loop, p->work_ms, &before, &after, &r->round[i]);
        r->nrounds = i + 1;
        print_round(out, i, &r->round[i], (double)x.dur_ns / 1e9, &x.rd.res);
        fflush(out);
        lab_round_release(&x.rd);
    }
    print_table(out, r);
    lab_queue_explain(out, r);
    fputc('\n', out);
    lab_print_cpu_summary(out, &x.c);
    fflush(out);
out:
    lab_exp_close(&x);
    return rc;
}
