/* knee lab tls: what TLS handshakes and connection churn do to the tail. The same
 * open-loop load (HTTP/1.1, the null server: no work, so what is measured is the connection)
 * in four rounds: keep-alive over TLS, a new TLS connection per request resuming the last
 * session, a new TLS connection per request with a full handshake each time, and a new plain
 * TCP connection per request (the churn without TLS); then a new QUIC connection per request
 * (HTTP/3, a full handshake each: TLS 1.3 inside QUIC's own handshake, next to the full round's
 * TLS over TCP). Each round's handshakes are timed by the engine (the tls phase: connected ->
 * handshake done; over QUIC, the first datagram -> handshake done) and counted full or resumed. */
#include "lab/internal.h"

#include "core/clock.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TLS_DEFAULT_NS (10 * NS_PER_S)
#define TLS_QUICK_NS (5 * NS_PER_S)
#define TLS_RATE 200.0

static const struct lab_lengths lengths = {TLS_QUICK_NS, TLS_DEFAULT_NS, LAB_WARMUP_QUICK_NS, LAB_WARMUP_NS};

enum { R_KEEP, R_RESUME, R_FULL, R_PLAIN, R_QUIC };

static const struct {
    const char *name, *what;
    bool tls, keepalive, resume, quic;
} rounds[LAB_TLS_ROUNDS] = {
    [R_KEEP] = {"keepalive", "TLS, keep-alive: a handshake per connection, then requests reuse it", true, true, true},
    [R_RESUME] = {"resumed", "TLS, a new connection per request, resuming the last session (a ticket)", true, false,
                  true},
    [R_FULL] = {"full", "TLS, a new connection per request, a full handshake each (--tls-resume off)", true, false,
                false},
    [R_PLAIN] = {"tcp", "no TLS, a new TCP connection per request (the churn alone)", false, false, false},
    [R_QUIC] = {"quic", "HTTP/3, a new QUIC connection per request, a full handshake each (--http3)", true, false,
                false, true},
};

/* The quic round next to the full one: the handshake over QUIC against TLS over TCP. */
static void explain_quic(struct lab_say *s, FILE *out, const struct lab_tls_round *fu, const struct lab_tls_round *qu)
{
    if (!qu->latency.count || !fu->latency.count || !qu->tls.count || !fu->tls.count)
        return;
    lab_say_add(s,
                "a new QUIC connection per request (HTTP/3): p50 %.3f ms, p99 %.3f ms, against %.3f and %.3f ms "
                "for TLS over TCP with a full handshake; the handshake itself (tls phase) p50 %.3f ms over QUIC, "
                "%.3f ms over TCP",
                qu->latency.p50, qu->latency.p99, fu->latency.p50, fu->latency.p99, qu->tls.p50, fu->tls.p50);
    lab_say_verdict(s, out, qu->latency.p50 < fu->latency.p50,
                    ": QUIC's handshake carries the transport's and TLS's together, one round trip fewer, and that "
                    "showed.",
                    ": on loopback the round trip QUIC saves is nearly free, while its user-space packets, "
                    "encryption and acknowledgements cost CPU on both sides: that showed instead.");
}

void lab_tls_explain(FILE *out, const struct lab_tls_result *r)
{
    lab_heading(out, "what this run shows");
    const struct lab_tls_round *k = &r->round[R_KEEP], *re = &r->round[R_RESUME], *fu = &r->round[R_FULL],
                               *pl = &r->round[R_PLAIN];
    struct lab_say s = {.n = 0};
    bool valid = true;
    for (size_t i = 0; i < r->nrounds; i++) {
        if (lab_say_invalid(&s, &r->round[i].valid, r->round[i].label)) {
            lab_say_add(&s, ": its percentiles carry knee's own delay, so the rounds are not compared.");
            lab_say_end(&s, out);
            valid = false;
        }
    }
    if (!valid || r->nrounds < R_QUIC)
        return;
    char c1[48], c2[48], c3[48];
    lab_say_add(&s,
                "p99 with keep-alive: %.2f ms; with a new TLS connection per request: %.2f ms when the session was "
                "resumed (%s), %.2f ms with a full handshake each time (%s); a new plain TCP connection per request: "
                "%.2f ms (%s)",
                k->latency.p99, re->latency.p99, lab_change(c1, sizeof c1, k->latency.p99, re->latency.p99),
                fu->latency.p99, lab_change(c2, sizeof c2, k->latency.p99, fu->latency.p99), pl->latency.p99,
                lab_change(c3, sizeof c3, k->latency.p99, pl->latency.p99));
    bool tls_costs = fu->latency.p99 > k->latency.p99 && fu->latency.p50 > k->latency.p50;
    lab_say_verdict(&s, out, tls_costs,
                    ": churn puts the handshake on every request, so it moves the median as well as the tail; "
                    "keep-alive pays it once per connection.",
                    ": the churn did not show in this run's percentiles.");
    if (fu->tls.count && re->tls.count) {
        lab_say_add(&s,
                    "the tls phase (connected -> handshake done) took p50 %.3f ms for a full handshake and %.3f ms "
                    "for a resumed one, p99 %.3f and %.3f ms",
                    fu->tls.p50, re->tls.p50, fu->tls.p99, re->tls.p99);
        lab_say_verdict(&s, out, re->tls.p50 < fu->tls.p50,
                        ": resumption skips the certificate and its signature, and that is what it saved.",
                        ": resumption saved nothing measurable here.");
    }
    uint64_t hs = re->full + re->resumed;
    if (hs) {
        lab_say_add(&s,
                    "with resumption on, %llu of the %llu handshakes were resumed (%.2f%%; the first connection and "
                    "any that found no ticket yet were full)",
                    (unsigned long long)re->resumed, (unsigned long long)hs, 100.0 * (double)re->resumed / (double)hs);
        lab_say_end(&s, out);
    }
    if (pl->latency.count && fu->latency.count) {
        lab_say_add(&s,
                    "the TCP connect alone (the plain round) moved p50 from %.3f to %.3f ms; the rest of a full "
                    "round's p50 (%.3f ms) is TLS",
                    k->latency.p50, pl->latency.p50, fu->latency.p50);
        lab_say_verdict(&s, out, fu->latency.p50 > pl->latency.p50, ": the handshake costs more than the connect.",
                        ": here the handshake did not cost more than the connect.");
    }
    if (r->nrounds > R_QUIC)
        explain_quic(&s, out, fu, &r->round[R_QUIC]);
}

/* The handshake-time summary of a round (ms) from the engine's histogram. */
static void tls_summary(const struct run_record *res, struct summary *out)
{
    struct run_summary s;
    record_summary_of(&res->all.tls, &s);
    memset(out, 0, sizeof *out);
    out->count = (size_t)s.count;
    out->mean = s.mean;
    out->stdev = s.stdev;
    out->min = s.min;
    out->max = s.max;
    out->p50 = s.p50;
    out->p90 = s.p90;
    out->p95 = s.p95;
    out->p99 = s.p99;
    out->p999 = s.p999;
}

int lab_tls(const struct lab_options *o, struct lab_tls_result *r)
{
    memset(r, 0, sizeof *r);
    r->rate = TLS_RATE;
    struct lab_exp x;
    int rc = lab_exp_open(&x, o, "tls", &lengths);
    if (rc)
        return rc;
    for (int i = 0; i < 2; i++) { /* x.srv[0] TLS, x.srv[1] plain */
        struct serve_config cfg;
        serve_preset("null", &cfg);
        cfg.seed = o->seed + (uint64_t)i;
        cfg.tls = i == 0;
        cfg.h3 = i == 0; /* the quic round's HTTP/3 on the same port number */
        if ((rc = lab_exp_server(&x, &cfg)) != 0)
            goto out;
    }
    FILE *out = x.out;
    fprintf(out,
            "knee lab tls: what handshakes and connection churn do to the tail (open loop %.0f/s, HTTP/1.1; HTTP/3 in "
            "the quic round; %.0f s "
            "per round after a %.1f s warm-up)\n",
            TLS_RATE, (double)x.dur_ns / 1e9, (double)x.warm_ns / 1e9);
    fprintf(out,
            "  https %s: the null server over TLS and over QUIC (self-signed, EC P-256; knee runs with --insecure)\n",
            serve_address(x.srv[0]));
    fprintf(out, "  http  %s: the same without TLS\n", serve_address(x.srv[1]));
    fflush(out);
    for (size_t i = 0; i < LAB_TLS_ROUNDS && !lab_stopped(); i++) {
        char url[160];
        snprintf(url, sizeof url, "%s://%s/", rounds[i].tls ? "https" : "http",
                 serve_address(x.srv[rounds[i].tls ? 0 : 1]));
        struct plan_target t = {.name = rounds[i].name, .url = url};
        struct run_config cfg;
        lab_run_config_init(&cfg, &t, 1, o->seed, x.dur_ns, x.warm_ns);
        cfg.plan.open_loop = true;
        cfg.plan.rate = TLS_RATE;
        cfg.keepalive = rounds[i].keepalive;
        if (rounds[i].tls) {
            cfg.tls_insecure = true;
            cfg.http = rounds[i].quic ? RUN_HTTP_AUTO : RUN_HTTP_1; /* --http3 takes no ALPN choice */
            cfg.tls_no_resume = !rounds[i].resume;
            cfg.http3 = rounds[i].quic;
        }
        char what[160];
        snprintf(what, sizeof what, "%s, %.0f/s for %.0f s", rounds[i].name, TLS_RATE,
                 (double)(x.dur_ns + x.warm_ns) / 1e9);
        lab_round_release(&x.rd);
        memset(&x.rd, 0, sizeof x.rd);
        if ((rc = lab_round_run(&x.c, rounds[i].name, what, &cfg, &x.rd)) != 0)
            goto out;
        struct lab_tls_round *w = &r->round[i];
        snprintf(w->label, sizeof w->label, "the %s round", rounds[i].name);
        w->tls_on = rounds[i].tls;
        w->keepalive = rounds[i].keepalive;
        w->resume = rounds[i].resume;
        w->quic = rounds[i].quic;
        lab_summarize_values(&x.rd, LAB_ALL_TARGETS, OUTCOME_OK, LAB_COL_LATENCY, &w->latency);
        tls_summary(&x.rd.res, &w->tls);
        const struct run_counts *cn = &x.rd.res.all.counts;
        w->conns = rounds[i].quic ? x.rd.res.all.pc.h3 : cn->conns_opened;
        w->full = x.rd.res.all.pc.tls_full;
        w->resumed = x.rd.res.all.pc.tls_resumed;
        w->not_ok = cn->sent - cn->outcome[OUTCOME_OK];
        w->accounting_ok = x.rd.res.accounting_ok;
        w->sent_rate = x.rd.res.all.rates.sent;
        lab_validity_of(&x.rd.res, &w->valid);
        r->nrounds = i + 1;
        if (i == 0) {
            fputs("\n", out);
            fprintf(out, "  %-10s %-8s", "", "");
            lab_print_table_head(out, "");
        }
        fprintf(out, "  %-10s %-8s", rounds[i].name, "latency");
        lab_print_table_row(out, "", "", &w->latency);
        if (w->tls.count) {
            fprintf(out, "  %-10s %-8s", "", "tls");
            lab_print_table_row(out, "", "", &w->tls);
        }
        fprintf(out, "  %-10s %llu connections, handshakes %llu full + %llu resumed; %llu not ok; accounting %s\n", "",
                (unsigned long long)w->conns, (unsigned long long)w->full, (unsigned long long)w->resumed,
                (unsigned long long)w->not_ok, lab_holds(w->accounting_ok));
        lab_print_round_warnings(out, "  ", w->label, &x.rd.res);
        fflush(out);
    }
    fprintf(out, "  (ms; latency: planned send -> full response of ok requests; tls: connected -> handshake done, "
                 "per new connection)\n");
    lab_tls_explain(out, r);
    fputc('\n', out);
    lab_print_cpu_summary(out, &x.c);
    fflush(out);
out:
    lab_exp_close(&x);
    return rc;
}
