/* knee lab fanout (the knee article): pages that wait for N parallel dependencies, each slow
 * (200 ms) with probability 2%, at 40 pages/s for N = 1, 2, 5, 10, 20. The share of pages
 * that took 200 ms or more is set against 1 − (1 − p)^N (src/model), with its Wilson 95%
 * interval. All N run at once as separate targets of one open-loop run: the server's
 * dependencies are timers, so the pages do not compete for anything. */
#include "lab/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FANOUT_DEFAULT_NS (30 * NS_PER_S)
#define FANOUT_QUICK_NS (10 * NS_PER_S)
#define PAGES_PER_S 40.0

static const struct lab_lengths lengths = {FANOUT_QUICK_NS, FANOUT_DEFAULT_NS, LAB_WARMUP_QUICK_NS, LAB_WARMUP_NS};

static const unsigned default_n[] = {1, 2, 5, 10, 20};

static bool inside(const struct lab_fanout_row *w)
{
    return w->predicted >= w->ci_lo && w->predicted <= w->ci_hi;
}

void lab_fanout_explain(FILE *out, const struct lab_fanout_result *r)
{
    lab_heading(out, "what this run shows");
    if (r->nrows == 0)
        return;
    struct lab_say s = {.n = 0};
    const struct lab_fanout_row *a = &r->row[0], *z = &r->row[r->nrows - 1];
    if (lab_say_invalid(&s, &r->valid, "the round")) {
        /* a page's latency counts from its planned send: knee's lag would make pages look slow */
        lab_say_add(&s,
                    ": knee's lag p99 was %.1f ms, and a page's latency counts from its planned send, so the shares "
                    "of slow pages above are knee's as much as the dependencies'; the prediction is not checked "
                    "against them.",
                    r->lag_p99_ms);
        lab_say_end(&s, out);
        return;
    }
    lab_say_add(&s,
                "with N = %u, %.1f%% of pages took %.0f ms or more [95%% CI %.1f–%.1f%%]; 1 − (1 − %.2f)^%u "
                "predicts %.1f%%",
                z->n, 100 * z->share, r->slow_ms, 100 * z->ci_lo, 100 * z->ci_hi, r->p_slow, z->n, 100 * z->predicted);
    if (inside(z) && z->share > 0)
        lab_say_add(&s,
                    " — inside the interval: one slow call in %.0f, made %u times in parallel, slowed about one "
                    "page in %.0f.",
                    1 / r->p_slow, z->n, 1 / z->share);
    else
        lab_say_add(&s, " — outside the interval this time.");
    lab_say_end(&s, out);
    lab_say_add(&s,
                "from N = %u to N = %u the mean went from %.1f to %.1f ms and p95 from %.1f to %.1f ms: a page "
                "waits for its slowest call, so a dependency's p99 becomes the page's p95 or median.",
                a->n, z->n, a->mean_ms, z->mean_ms, a->p95_ms, z->p95_ms);
    lab_say_end(&s, out);
    size_t in = 0;
    for (size_t i = 0; i < r->nrows; i++)
        in += inside(&r->row[i]);
    if (in == r->nrows)
        lab_say_add(&s, "the prediction fell inside the measured 95%% interval for every N.");
    else
        lab_say_add(&s,
                    "the prediction fell inside the measured 95%% interval for %zu of %zu N (about 1 in 20 misses "
                    "by chance alone).",
                    in, r->nrows);
    lab_say_end(&s, out);
}

int lab_fanout(const struct lab_options *o, struct lab_fanout_result *r)
{
    memset(r, 0, sizeof *r);
    const unsigned *ns = o->fanouts ? o->fanouts : default_n;
    size_t nn = o->fanouts ? o->nfanouts : sizeof default_n / sizeof *default_n;
    if (nn == 0 || nn > LAB_MAX_FANOUTS)
        return KNEE_EINVAL;
    struct lab_exp x;
    int rc = lab_exp_open(&x, o, "fanout", &lengths);
    if (rc)
        return rc;
    struct serve_config cfg;
    rc = lab_exp_preset(&x, "fanout", o->seed, &cfg);
    r->p_slow = cfg.dep_slow_prob;
    r->slow_ms = (double)cfg.dep_slow_ns / 1e6;
    r->rate = PAGES_PER_S;
    if (rc)
        goto out;
    struct serve_handle *srv = x.srv[0];
    FILE *out = x.out;
    fprintf(out,
            "knee lab fanout: a page is as slow as its slowest call (%.0f pages/s per N, %.0f s after a %.1f s "
            "warm-up)\n",
            PAGES_PER_S, (double)x.dur_ns / 1e9, (double)x.warm_ns / 1e9);
    fprintf(out, "  fanout server %s: each dependency %.0f ms with probability %.0f%%, else %.0f ms\n",
            serve_address(srv), r->slow_ms, 100 * r->p_slow, (double)cfg.dep_ns / 1e6);
    fflush(out);

    struct plan_target t[LAB_MAX_FANOUTS];
    char names[LAB_MAX_FANOUTS][16], urls[LAB_MAX_FANOUTS][160];
    memset(t, 0, sizeof t);
    for (size_t i = 0; i < nn; i++) {
        snprintf(names[i], sizeof names[i], "N=%u", ns[i]);
        snprintf(urls[i], sizeof urls[i], "http://%s/page?fanout=%u", serve_address(srv), ns[i]);
        t[i].name = names[i];
        t[i].url = urls[i];
        t[i].rate = PAGES_PER_S;
    }
    struct run_config rc_cfg;
    lab_run_config_init(&rc_cfg, t, nn, o->seed, x.dur_ns, x.warm_ns);
    rc_cfg.plan.open_loop = true;
    char what[128];
    snprintf(what, sizeof what, "N = %u..%u at %.0f pages/s each, %.0f s", ns[0], ns[nn - 1], PAGES_PER_S,
             (double)(x.dur_ns + x.warm_ns) / 1e9);
    if ((rc = lab_round_run(&x.c, "pages", what, &rc_cfg, &x.rd)) != 0)
        goto out;

    fprintf(out, "\n  %4s%8s%9s%9s%9s%9s   %-22s%12s%9s\n", "N", "pages", "mean", "p95", "p99", ">=200ms",
            "share [95% CI]", "1-(1-p)^N", "");
    for (size_t i = 0; i < nn; i++) {
        struct lab_fanout_row *w = &r->row[i];
        w->n = ns[i];
        size_t n;
        double *v = lab_values(&x.rd, i, OUTCOME_OK, LAB_COL_LATENCY, &n);
        struct summary s;
        lab_summarize(v, n, &s);
        w->pages = n;
        w->mean_ms = s.mean;
        w->p95_ms = s.p95;
        w->p99_ms = s.p99;
        w->slow = lab_count_at_least(v, n, r->slow_ms);
        free(v);
        w->share = n ? (double)w->slow / (double)n : NAN;
        lab_wilson95(w->slow, n, &w->ci_lo, &w->ci_hi);
        w->predicted = model_fanout_any(r->p_slow, ns[i]);
        char ci[48], b[3][32];
        snprintf(ci, sizeof ci, "%5.1f%% [%.1f, %.1f]", 100 * w->share, 100 * w->ci_lo, 100 * w->ci_hi);
        fprintf(out, "  %4u%8llu%9s%9s%9s%9llu   %-22s%11.1f%%%9s\n", w->n, (unsigned long long)w->pages,
                units_fmt_fixed(w->mean_ms, 1, b[0], 32), units_fmt_fixed(w->p95_ms, 1, b[1], 32),
                units_fmt_fixed(w->p99_ms, 1, b[2], 32), (unsigned long long)w->slow, ci, 100 * w->predicted,
                inside(w) ? "inside" : "OUTSIDE");
        r->nrows = i + 1;
    }
    fprintf(out, "  (ms from the planned send; share = pages >= %.0f ms; the interval is Wilson's at 95%%)\n",
            r->slow_ms);
    const struct run_counts *k = &x.rd.res.all.counts;
    if (k->sent != k->outcome[OUTCOME_OK] || k->dropped)
        fprintf(out, "  note: %llu page%s did not end ok and %llu %s dropped; the table holds the ok ones\n",
                (unsigned long long)(k->sent - k->outcome[OUTCOME_OK]),
                k->sent - k->outcome[OUTCOME_OK] == 1 ? "" : "s", (unsigned long long)k->dropped,
                k->dropped == 1 ? "was" : "were");
    lab_validity_of(&x.rd.res, &r->valid);
    r->lag_p99_ms = lab_percentile(&x.rd, LAB_ALL_TARGETS, -1, LAB_COL_LAG, 99);
    lab_print_round_warnings(out, "  ", "the round", &x.rd.res);
    lab_fanout_explain(out, r);
    fflush(out);
out:
    lab_exp_close(&x);
    return rc;
}
