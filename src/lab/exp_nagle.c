/* knee lab nagle (the statistics-lab article, its first run): the same quiet server twice, once
 * with Nagle's algorithm on and the response written as head and body in two writes, once
 * with TCP_NODELAY and one write, both under a closed loop. With Nagle the body waits for
 * the ACK of the head, which the client delays (RFC 1122): the median shows it. */
#include "lab/internal.h"

#include "analyze/analyze.h"
#include "core/clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAGLE_DEFAULT_NS (10 * NS_PER_S)
#define NAGLE_QUICK_NS (5 * NS_PER_S)
#define CLIENTS 8

static const struct lab_lengths lengths = {NAGLE_QUICK_NS, NAGLE_DEFAULT_NS, LAB_WARMUP_QUICK_NS, LAB_WARMUP_NS};

void lab_nagle_explain(FILE *out, const struct lab_nagle_result *r)
{
    lab_heading(out, "what this run shows");
    struct lab_say say = {.n = 0};
    if (lab_say_invalid(&say, &r->valid, "the round")) {
        lab_say_add(&say, ": the medians (%.1f ms with Nagle, %.1f ms without) are not read as the servers'.",
                    r->nagle.p50, r->nodelay.p50);
        lab_say_end(&say, out);
        return;
    }
    lab_say_add(&say,
                "median with Nagle and two writes: %.1f ms; with TCP_NODELAY and one write: %.1f ms (%.0f vs %.0f "
                "requests/s from %d clients each)",
                r->nagle.p50, r->nodelay.p50, r->rate_nagle, r->rate_nodelay, (int)r->clients);
    bool stalled = r->nagle.p50 > 3 * r->nodelay.p50 && r->nagle.p50 - r->nodelay.p50 > 20;
    lab_say_verdict(&say, out, stalled,
                    ": the body waited for the ACK of the head, and the client delayed that ACK (Nagle, RFC 896; "
                    "delayed ACK, RFC 1122) — a fixed stall on most requests. The fix: TCP_NODELAY, or the "
                    "whole response in one write.",
                    " — the delayed-ACK stall did not show in this run (the kernel may have acknowledged at once).");
    if (stalled) {
        lab_say_add(&say,
                    "the mean with Nagle (%.1f ms) would pass for a slow server; the median, set against the ~2 "
                    "ms of work most requests do, gives it away.",
                    r->nagle.mean);
        lab_say_end(&say, out);
    }
    lab_say_add(&say,
                "knee stats --expect-median %.1fms on the Nagle server's requests: median %.1f× the expectation, "
                "%.0f%% of requests 30–50 ms above it",
                r->median.expected_ms, r->median.ratio, 100 * r->median.share_near_40);
    lab_say_verdict(&say, out, r->median.nagle_like,
                    " — it names Nagle's algorithm with delayed ACK as the likely cause.",
                    " — it does not see the delayed-ACK pattern here.");
}

int lab_nagle(const struct lab_options *o, struct lab_nagle_result *r)
{
    memset(r, 0, sizeof *r);
    r->clients = CLIENTS;
    struct lab_exp x;
    int rc = lab_exp_open(&x, o, "nagle", &lengths);
    if (rc)
        return rc;
    struct serve_config cfg[2];
    for (int i = 0; i < 2; i++) {
        serve_preset("quiet", &cfg[i]);
        cfg[i].seed = o->seed + (uint64_t)i;
        cfg[i].nagle = i == 0;
        if ((rc = lab_exp_server(&x, &cfg[i])) != 0)
            goto out;
    }
    FILE *out = x.out;
    fprintf(out,
            "knee lab nagle: the median that gave it away (closed loop, %d clients per server, %.0f s after a "
            "%.1f s warm-up)\n",
            CLIENTS, (double)x.dur_ns / 1e9, (double)x.warm_ns / 1e9);
    fprintf(out, "  nagle   %s: server B, Nagle on, head and body in two writes\n", serve_address(x.srv[0]));
    fprintf(out, "  nodelay %s: server B, TCP_NODELAY, one write\n", serve_address(x.srv[1]));
    fflush(out);

    char url[2][160];
    struct plan_target t[2];
    memset(t, 0, sizeof t);
    for (int i = 0; i < 2; i++) {
        snprintf(url[i], sizeof url[i], "http://%s/product?id=42", serve_address(x.srv[i]));
        t[i].name = i == 0 ? "nagle" : "nodelay";
        t[i].url = url[i];
        t[i].connections = CLIENTS;
    }
    struct run_config rc_cfg;
    lab_run_config_init(&rc_cfg, t, 2, o->seed, x.dur_ns, x.warm_ns);
    char what[128];
    snprintf(what, sizeof what, "closed loop against both servers, %.0f s", (double)(x.dur_ns + x.warm_ns) / 1e9);
    if ((rc = lab_round_run(&x.c, "closed", what, &rc_cfg, &x.rd)) != 0)
        goto out;
    struct summary *s[2] = {&r->nagle, &r->nodelay};
    double *rate[2] = {&r->rate_nagle, &r->rate_nodelay};
    double *sorted[2] = {NULL, NULL};
    size_t ns[2];
    fputs("\n", out);
    lab_print_table_head(out, "  ");
    for (int i = 0; i < 2; i++) {
        double *v = lab_values(&x.rd, (size_t)i, OUTCOME_OK, LAB_COL_LATENCY, &ns[i]);
        sorted[i] = lab_sorted_copy(v, ns[i]);
        free(v);
        stats_summarize(sorted[i], ns[i], s[i]);
        *rate[i] = lab_rates(&x.rd, (size_t)i)->goodput;
        lab_print_table_row(out, "  ", i == 0 ? "nagle" : "nodelay", s[i]);
    }
    /* knee stats' median check, with what the same server takes without Nagle as the
     * expectation: does the rule recognise the delayed-ACK pattern? */
    analyze_median_check(sorted[0], ns[0], r->nodelay.p50, &r->median);
    free(sorted[0]);
    free(sorted[1]);
    fprintf(out, "  (ms, send -> full response)\n");

    lab_validity_of(&x.rd.res, &r->valid);
    lab_print_round_warnings(out, "  ", "the round", &x.rd.res);
    lab_nagle_explain(out, r);
    fflush(out);
out:
    lab_exp_close(&x);
    return rc;
}
