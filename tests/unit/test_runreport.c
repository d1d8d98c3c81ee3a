/* Unit tests for src/runreport: knee run's terminal summary (compact and full forms, and
 * what switches to the full one), the record's JSON document, the --dry-run plan and the
 * progress line (src/cli/run_print.c), over struct run_record values built by hand (one and
 * several targets, failures, warnings, thresholds). The JSON is checked for values here and
 * parsed by python3 when it is installed; and the summary printed from the record read back
 * from the JSON (record_read_json, as knee report prints it) equals the terminal's byte for
 * byte, in every form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "cli/run_print.h"
#include "core/units.h"
#include "load/run.h"
#include "record/threshold.h"
#include "runreport/runreport.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ building results */

static void target_init(struct run_target_result *t, const char *name, const char *url)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->url, sizeof t->url, "%s", url);
    snprintf(t->address, sizeof t->address, "127.0.0.1:8080");
    t->resolve_ns = 12000;
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        assert_int_equal(hdr_init(&t->latency[g], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    struct hdr *hs[] = {&t->latency_all, &t->service, &t->ttfb, &t->lag, &t->connect};
    for (size_t i = 0; i < sizeof hs / sizeof *hs; i++)
        assert_int_equal(hdr_init(hs[i], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
}

/* n requests of outcome o, each with latency lat_ns (service half of it, lag a tenth). */
static void record(struct run_target_result *t, enum reqlog_outcome o, uint64_t n, int64_t lat_ns)
{
    t->counts.planned += n;
    t->counts.sent_on_time += n;
    t->events.planned += n; /* every event inside the window */
    if (o == OUTCOME_DROPPED) {
        t->counts.dropped += n;
        t->counts.outcome[o] += n;
        return;
    }
    t->counts.sent += n;
    t->counts.outcome[o] += n;
    t->events.sent += n;
    t->events.sends += n;
    if (o == OUTCOME_CANCELLED)
        return;
    t->events.completed += n;
    if (o == OUTCOME_OK)
        t->events.ok += n;
    hdr_record(&t->latency[o], lat_ns, (int64_t)n);
    hdr_record(&t->latency_all, lat_ns, (int64_t)n);
    hdr_record(&t->service, lat_ns / 2, (int64_t)n);
    hdr_record(&t->ttfb, lat_ns / 3, (int64_t)n);
    hdr_record(&t->lag, lat_ns / 10, (int64_t)n);
}

static void add_counts(struct run_counts *d, const struct run_counts *s)
{
    d->planned += s->planned;
    d->sent += s->sent;
    d->dropped += s->dropped;
    d->sent_on_time += s->sent_on_time;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        d->outcome[o] += s->outcome[o];
    d->bytes_in += s->bytes_in;
    d->conns_opened += s->conns_opened;
}

static void merge_all(struct run_record *r)
{
    target_init(&r->all, "all", "");
    for (size_t i = 0; i < r->ntargets; i++) {
        struct run_target_result *t = &r->targets[i];
        add_counts(&r->all.counts, &t->counts);
        add_counts(&r->all.warmup_counts, &t->warmup_counts);
        for (int g = 0; g < RUN_GROUP_COUNT; g++)
            hdr_add(&r->all.latency[g], &t->latency[g]);
        hdr_add(&r->all.latency_all, &t->latency_all);
        hdr_add(&r->all.service, &t->service);
        hdr_add(&r->all.ttfb, &t->ttfb);
        hdr_add(&r->all.lag, &t->lag);
    }
    const struct run_counts *c = &r->all.counts;
    /* the events as the engine counts them: sends spread evenly over the window */
    uint64_t wns = (uint64_t)(r->window_s * 1e9);
    r->window_end_s = r->window_start_s + r->window_s;
    record_events_init(&r->all.events, 0, wns);
    for (size_t i = 0; i < r->ntargets; i++) {
        struct run_events *ev = &r->targets[i].events;
        ev->window_start_ns = 0;
        ev->window_end_ns = wns;
        ev->first_send_ns = 1;
        ev->last_send_ns = ev->sends > 1 ? 1 + (ev->sends - 1) * (wns / ev->sends) : 1;
        record_events_merge(&r->all.events, ev);
        record_rates_of(ev, &r->targets[i].rates);
    }
    record_rates_of(&r->all.events, &r->all.rates);
    r->sent_on_schedule = c->planned ? (double)c->sent_on_time / (double)c->planned : NAN;
    r->failed_share = NAN;
    if (c->sent) {
        uint64_t failed = 0;
        for (int o = 0; o < OUTCOME_COUNT; o++)
            if (record_outcome_failed((enum reqlog_outcome)o))
                failed += c->outcome[o];
        r->failed_share = (double)failed / (double)c->sent;
    }
    r->no_ok = c->outcome[OUTCOME_OK] == 0;
    r->accounting_ok = record_counts_hold(c);
}

static void warn(struct run_record *r, bool attention, const char *text)
{
    warn_add(&r->warnings, attention, "%s", text);
}

static struct run_record *result_new(size_t ntargets)
{
    struct run_record *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->ntargets = ntargets;
    r->targets = calloc(ntargets, sizeof *r->targets);
    r->threads = 2;
    r->pool_cap = 10000;
    r->window_s = 10;
    r->elapsed_s = 10.25;
    snprintf(r->env.version, sizeof r->env.version, "0.1.0");
    r->env.loadavg_before[0] = r->env.loadavg_after[0] = NAN;
    return r;
}

static void result_free(struct run_record *r)
{
    record_release(r);
    free(r);
}

/* The open-loop result of 1,000/s for 10 s against one target, every request ok. */
static struct run_record *one_target_ok(void)
{
    struct run_record *r = result_new(1);
    target_init(&r->targets[0], "api", "http://127.0.0.1:8080/");
    r->targets[0].planned_rate = 1000;
    record(&r->targets[0], OUTCOME_OK, 9000, 1000000);
    record(&r->targets[0], OUTCOME_OK, 990, 2000000);
    record(&r->targets[0], OUTCOME_OK, 10, 50000000);
    r->targets[0].counts.conns_opened = 3;
    r->targets[0].counts.bytes_in = 1170000;
    merge_all(r);
    return r;
}

static const struct run_config open_cfg = {.plan.ntargets = 1,
                                           .plan.open_loop = true,
                                           .plan.rate = 1000,
                                           .plan.duration_ns = 10 * NS_PER_S,
                                           .timeout_ns = 10 * NS_PER_S,
                                           .drain_ns = 10 * NS_PER_S,
                                           .keepalive = true,
                                           .plan.seed = 1};

/* ------------------------------------------------------------------ capture */

/* The record as the engine leaves it for the reports: the plan echoed from cfg (each target's
 * own rate from cfg's targets), the statistics of its histograms as they are now, the
 * thresholds' verdicts. */
static void prepare(const struct run_config *cfg, struct run_record *r, const struct run_threshold *thr, size_t nthr,
                    bool verbose)
{
    record_config_from_run(&r->config, cfg);
    for (size_t i = 0; i < r->ntargets; i++)
        r->targets[i].own_rate = cfg->plan.targets && i < cfg->plan.ntargets && cfg->plan.targets[i].rate > 0
                                     ? cfg->plan.targets[i].rate
                                     : 0;
    record_summarize(r);
    record_set_thresholds(r, thr, nthr);
    r->verbose = verbose;
}

static bool needs_full(const struct run_config *cfg, struct run_record *r, const struct run_threshold *thr, size_t nthr)
{
    prepare(cfg, r, thr, nthr, false);
    return runreport_needs_full(r);
}

static char *text_of(const struct run_config *cfg, struct run_record *r, const struct run_threshold *thr, size_t nthr,
                     bool verbose)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    prepare(cfg, r, thr, nthr, verbose);
    runreport_print_summary(f, r, verbose);
    fclose(f);
    return buf;
}

static char *json_of(const struct run_config *cfg, struct run_record *r, const struct run_threshold *thr, size_t nthr)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    prepare(cfg, r, thr, nthr, false);
    record_write_json(f, r, false);
    fclose(f);
    return buf;
}

/* The widest line, in characters (UTF-8: continuation bytes do not count). */
static int max_width(const char *s)
{
    int w = 0, max = 0;
    for (; *s; s++) {
        if (*s == '\n')
            w = 0;
        else if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
        if (w > max)
            max = w;
    }
    return max;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The line starting with prefix, or a failed test. */
static void assert_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            return;
    fail_msg("no line '%s' in:\n%s", line, text);
}

static void assert_has(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("no '%s' in:\n%s", needle, text);
}

static void assert_lacks(const char *text, const char *needle)
{
    if (strstr(text, needle))
        fail_msg("'%s' should not be in:\n%s", needle, text);
}

/* JSON that python3 parses (when it is there) and that satisfies a python expression over d. */
static void assert_json(const char *json, const char *expr)
{
    if (access("/usr/bin/python3", X_OK) != 0)
        return;
    char path[] = "/tmp/knee_test_runreport_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    char cmd[1024];
    assert_null(strpbrk(expr, "\"$`\\")); /* passed inside double quotes */
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "
             "%s \"%s\"",
             path, expr);
    int rc = system(cmd);
    unlink(path);
    if (rc != 0)
        fail_msg("JSON fails '%s':\n%s", expr, json);
}

/* ------------------------------------------------------------------ text */

static void test_compact_one_target(void **state)
{
    (void)state;
    struct run_record *r = one_target_ok();
    r->env.gen_cpu = (struct run_generator_cpu){.user_s = 0.2, .sys_s = 0.1, .wall_s = 10, .threads = 3};
    assert_false(needs_full(&open_cfg, r, NULL, 0));
    char *t = text_of(&open_cfg, r, NULL, 0, false);
    assert_line(t, "knee run: open loop, constant arrivals, 1,000.0/s, 10 s, 2 threads");
    assert_line(t, "  api http://127.0.0.1:8080/ -> 127.0.0.1:8080");
    /* the precision the run kept and its price: 0.3 s of CPU over 10,000 sends */
    char prec[160], lp[24];
    snprintf(prec, sizeof prec, "  precision: lag p99 %s ms; generator CPU 30.0 us per request sent",
             units_fmt_ms(r->all.sum.lag.p99, lp, sizeof lp));
    assert_line(t, prec);
    /* the headline first: requests/s over the window, p50/p99, errors, the verdict */
    assert_true(strstr(t, "\n\nrequests/s  1,000.0 completed in the window 0.000 .. 10.000 s (planned 1,000.0, "
                          "sent 1,000.0)\nlatency     p50 ") != NULL);
    assert_line(t, "errors      none (10,000 sent)");
    assert_has(t, "\nverdict     valid: the generator kept its plan (100.00% sent on schedule, lag p99 ");
    assert_line(t, "requests");
    assert_line(t, "  planned 10,000 = sent 10,000 + dropped 0  [holds]");
    assert_line(t, "  sent 10,000 = ok 10,000  [holds]");
    assert_lacks(t, "rates per second"); /* the headline's */
    assert_lacks(t, "of sending");
    assert_lacks(t, "after the window");
    assert_lacks(t, "sent on schedule:");
    assert_line(t, "                    count       p50       p90       p99     p99.9       max");
    /* p50 and p90 in the 1 ms bucket, p99 in the 2 ms one, p99.9 and max at 50 ms */
    struct run_summary s;
    record_summary_of(&r->all.latency_all, &s);
    char want[160], v[5][24];
    snprintf(want, sizeof want, "  latency (ms)     10,000 %9s %9s %9s %9s %9s", units_fmt_ms(s.p50, v[0], 24),
             units_fmt_ms(s.p90, v[1], 24), units_fmt_ms(s.p99, v[2], 24), units_fmt_ms(s.p999, v[3], 24),
             units_fmt_ms(s.max, v[4], 24));
    assert_line(t, want);
    /* ranks 5,000 and 9,000 fall in the 1 ms bucket, 9,900 and 9,990 in the 2 ms one */
    assert_has(want, " 1.000     1.000     2.001     2.001    50.004");
    assert_has(t, "  lag (ms)         10,000");
    assert_line(t, "  latency: planned send -> full response (T5 - T0); lag: planned send -> actual send (T1 - T0)");
    assert_line(t, "connections: 3 opened, 0 failed, 0 closed by the server; 1,170,000 bytes received");
    assert_line(t, "percentiles: HdrHistogram, 3 significant digits; elapsed 10.250 s; --verbose: every table");
    assert_lacks(t, "service (ms)");
    assert_lacks(t, "warnings");
    assert_lacks(t, "notes");
    assert_true(count_lines(t) <= 20);
    assert_true(max_width(t) <= 100);
    free(t);

    /* the same result with --verbose: the full tables, every outcome named */
    t = text_of(&open_cfg, r, NULL, 0, true);
    assert_line(t, "  sent 10,000 = ok 10,000 + rejected 0 + http_error 0 + invalid 0 + transport 0 + timeout 0 + "
                   "cancelled 0  [holds]");
    assert_line(t, "latency (ms): planned send -> full response (T5 - T0), by outcome");
    assert_has(t, "\n  all              10,000 ");
    assert_has(t, "\n  ok               10,000 ");
    assert_line(t, "service (ms): send -> full response (T5 - T1)");
    assert_line(t, "ttfb (ms): send -> first response byte");
    assert_line(t, "lag (ms): planned send -> actual send (T1 - T0), the generator's own delay");
    assert_line(t, "  rates per second over the window 0.000 .. 10.000 s (events inside it):");
    assert_line(t, "    planned 1,000.0  sent 1,000.0  completed 1,000.0  goodput 1,000.0");
    assert_line(t, "  sent 1,000.0/s over 9.999 s of sending (first to last send)");
    assert_line(t, "  sent on schedule: 100.00% of the planned requests, sent by the window's end (+1ms)");
    assert_lacks(t, "connect (ms)"); /* no connection was timed */
    assert_line(t, "percentiles: HdrHistogram, 3 significant digits (value at rank ceil(p*n)); elapsed 10.250 s");
    free(t);
    result_free(r);
}

static void test_closed_loop_compact(void **state)
{
    (void)state;
    struct run_record *r = one_target_ok();
    r->targets[0].connections = 8;
    r->targets[0].planned_rate = 0;
    struct run_config cfg = open_cfg;
    cfg.plan.open_loop = false;
    cfg.plan.rate = 0;
    cfg.plan.requests = 10000;
    cfg.plan.duration_ns = 0;
    char *t = text_of(&cfg, r, NULL, 0, false);
    assert_line(t, "knee run: closed loop, 8 connections, 10,000 requests, 2 threads");
    assert_line(t, "  api http://127.0.0.1:8080/ -> 127.0.0.1:8080");
    assert_has(t, "\nrequests/s  1,000.0 completed in the window 0.000 .. 10.000 s (sent 1,000.0)\n");
    assert_has(t, "   (10,000 requests, from the send)\n");
    assert_line(t,
                "verdict     valid; closed loop: a slow server slows the load and hides stalls (coordinated omission)");
    assert_line(t, "  latency: send -> full response (T5 - T1); closed loop");
    assert_lacks(t, "lag (ms)");
    assert_lacks(t, "sent on schedule");
    assert_lacks(t, "precision:"); /* a closed loop has no plan to keep */
    assert_true(max_width(t) <= 100);
    free(t);
    t = text_of(&cfg, r, NULL, 0, true); /* the full note with --verbose */
    assert_has(t, "\nnote: closed loop: each connection waits for its answer before sending again");
    free(t);
    result_free(r);
}

/* What switches the compact form to the full one. */
static void test_full_when_something_needs_attention(void **state)
{
    (void)state;
    /* a note (few samples) does not switch the form; one that leaves the headline's p99 alone
     * (the p99.9, the warm-up, the Poisson check not made) prints with --verbose only */
    struct run_record *r = one_target_ok();
    warn(r, false, "only 10000 latency samples: p99.9 rests on fewer than 10 samples above it; read it as rough");
    warn(r, false, "self-check: the Poisson arrivals were not checked: it needs the actual send times");
    char *t = text_of(&open_cfg, r, NULL, 0, false);
    assert_has(t, "--verbose: every table");
    assert_lacks(t, "notes");
    assert_lacks(t, "p99.9 rests");
    free(t);
    t = text_of(&open_cfg, r, NULL, 0, true);
    assert_line(t, "notes");
    assert_line(t, "  - only 10000 latency samples: p99.9 rests on fewer than 10 samples above it; read it as rough");
    assert_line(t, "  - self-check: the Poisson arrivals were not checked: it needs the actual send times");
    free(t);
    /* a note that the p99 rests on too few samples changes what the headline says: printed */
    warn(r, false, "self-check (precision): p99 2.001 ms has no 95% confidence interval with 200 samples (needs 299)");
    t = text_of(&open_cfg, r, NULL, 0, false);
    assert_line(t, "notes");
    assert_line(t,
                "  - self-check (precision): p99 2.001 ms has no 95% confidence interval with 200 samples (needs 299)");
    assert_lacks(t, "p99.9 rests");
    free(t);
    /* a warning that needs attention switches to the full form */
    warn(r, true, "12 connection attempts failed (refused, unreachable or out of descriptors)");
    assert_true(needs_full(&open_cfg, r, NULL, 0));
    t = text_of(&open_cfg, r, NULL, 0, false);
    assert_lacks(t, "--verbose");
    assert_line(t, "warnings, by cause (the most consequential first)");
    assert_line(t, "  ! 12 connection attempts failed (refused, unreachable or out of descriptors)");
    assert_line(t, "verdict     valid, with warnings (below)");
    free(t);
    result_free(r);

    /* failed requests: the latency by outcome matters */
    r = one_target_ok();
    record(&r->targets[0], OUTCOME_TIMEOUT, 5, 10000000000LL);
    record(&r->all, OUTCOME_TIMEOUT, 5, 10000000000LL);
    r->accounting_ok = true;
    assert_true(needs_full(&open_cfg, r, NULL, 0));
    t = text_of(&open_cfg, r, NULL, 0, false);
    assert_line(t, "  sent 10,005 = ok 10,000 + rejected 0 + http_error 0 + invalid 0 + transport 0 + timeout 5 + "
                   "cancelled 0  [holds]");
    assert_has(t, "\n  timeout               5 ");
    free(t);
    result_free(r);

    /* rejections are what --reject asked for: still compact, named in the accounting */
    r = one_target_ok();
    record(&r->targets[0], OUTCOME_REJECTED, 7, 3000000);
    record(&r->all, OUTCOME_REJECTED, 7, 3000000);
    assert_false(needs_full(&open_cfg, r, NULL, 0));
    t = text_of(&open_cfg, r, NULL, 0, false);
    assert_line(t, "  sent 10,007 = ok 10,000 + rejected 7  [holds]");
    free(t);
    /* a broken identity, a generator-limited or interrupted run */
    r->all.counts.sent++;
    r->accounting_ok = false;
    t = text_of(&open_cfg, r, NULL, 0, false);
    assert_line(t, "  planned 10,007 = sent 10,008 + dropped 0  [BROKEN]");
    assert_has(t, "+ cancelled 0  [BROKEN]");
    free(t);
    r->all.counts.sent--;
    r->accounting_ok = true;
    r->generator_limited = true;
    assert_true(needs_full(&open_cfg, r, NULL, 0));
    r->generator_limited = false;
    r->interrupted = true;
    assert_true(needs_full(&open_cfg, r, NULL, 0));
    result_free(r);
}

static void test_several_targets(void **state)
{
    (void)state;
    struct run_record *r = result_new(2);
    target_init(&r->targets[0], "read", "http://h/r");
    target_init(&r->targets[1], "write", "http://h/w");
    r->targets[0].planned_rate = 150;
    r->targets[1].planned_rate = 50;
    record(&r->targets[0], OUTCOME_OK, 1500, 1000000);
    record(&r->targets[1], OUTCOME_OK, 490, 4000000);
    record(&r->targets[1], OUTCOME_DROPPED, 10, 0);
    merge_all(r);
    struct run_config cfg = open_cfg;
    cfg.plan.rate = 200;
    cfg.plan.ntargets = 2;
    assert_true(needs_full(&cfg, r, NULL, 0));
    char *t = text_of(&cfg, r, NULL, 0, false);
    assert_line(t, "  read       http://h/r -> 127.0.0.1:8080 (resolved in 12us), 150.0/s");
    assert_line(t, "  write      http://h/w -> 127.0.0.1:8080 (resolved in 12us), 50.0/s");
    assert_line(t, "  planned 2,000 = sent 1,990 + dropped 10  [holds]");
    assert_line(t, "--- target read (http://h/r)");
    assert_line(t, "--- target write (http://h/w)");
    assert_line(t, "  planned 500 = sent 490 + dropped 10  [holds]");
    assert_line(t, "  rates per second: planned 50.0  sent 49.0  goodput 49.0");
    free(t);

    char *j = json_of(&cfg, r, NULL, 0);
    assert_has(j, "\"schema\":\"knee-run/2\"");
    assert_has(j, "\"mode\":\"open\"");
    assert_json(j, "len(d['targets']) == 2 and d['targets'][1]['name'] == 'write' and "
                   "d['targets'][1]['accounting']['dropped'] == 10 and d['all']['accounting']['planned'] == 2000 and "
                   "d['outcomes']['dropped'] == 10 and d['all']['accounting']['planned_eq_sent_plus_dropped'] and "
                   "d['targets'][0]['planned_rate'] == 150 and abs(d['rates']['goodput'] - 199) < 1e-9 and "
                   "d['events']['sent'] == 1990 and d['targets'][1]['events']['planned'] == 500 and "
                   "abs(d['targets'][1]['rates']['sent'] - 49) < 1e-9 and d['sent_on_schedule'] == 1 and "
                   "'send_ratio' not in d and d['window_start_s'] == 0 and d['window_end_s'] == 10");
    free(j);
    result_free(r);
}

static void statuses(struct run_target_result *t, int status, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++)
        record_status_count(&t->status, status);
}

/* The outcome lines name the statuses of responses that were not ok: http_error's top codes
 * then "+N more", rejected's (a --reject STATUS takes them whole; a single --reject STATUS:BODY
 * status is split by what the others leave), for all and per target; a clean run prints none. */
static void test_status_lines(void **state)
{
    (void)state;
    struct run_record *r = result_new(2);
    target_init(&r->targets[0], "read", "http://h/r");
    target_init(&r->targets[1], "write", "http://h/w");
    record(&r->targets[0], OUTCOME_OK, 1000, 1000000);
    statuses(&r->targets[0], 200, 990);
    statuses(&r->targets[0], 302, 10);
    record(&r->targets[0], OUTCOME_HTTP_ERROR, 1106, 1000000);
    statuses(&r->targets[0], 404, 1000);
    statuses(&r->targets[0], 500, 100);
    static const int few[] = {400, 401, 403, 502, 504, 999};
    for (size_t k = 0; k < sizeof few / sizeof *few; k++)
        statuses(&r->targets[0], few[k], 1);
    record(&r->targets[1], OUTCOME_REJECTED, 30, 1000000);
    statuses(&r->targets[1], 429, 20);
    statuses(&r->targets[1], 503, 10);
    record(&r->targets[1], OUTCOME_HTTP_ERROR, 5, 1000000);
    statuses(&r->targets[1], 503, 5);
    merge_all(r);
    for (size_t i = 0; i < 2; i++)
        record_status_add(&r->all.status, &r->targets[i].status);
    const struct run_reject rejects[] = {{429, NULL}, {503, "QUEUE"}};
    struct run_config cfg = open_cfg;
    cfg.plan.ntargets = 2;
    cfg.rejects = rejects;
    cfg.nrejects = 2;
    char *t = text_of(&cfg, r, NULL, 0, false);
    assert_line(t, "  http_error 1,111: 404 ×1,000, 500 ×100, 503 ×5, 400 ×1, +5 more");
    assert_line(t, "  rejected 30: 429 ×20, 503 ×10");
    assert_line(t, "  http_error 1,106: 404 ×1,000, 500 ×100, 400 ×1, 401 ×1, +4 more");
    assert_line(t, "  http_error 5: 503 ×5");
    free(t);
    /* two split statuses: the split is unknown, said with a mark */
    const struct run_reject two[] = {{429, "SLOW"}, {503, "QUEUE"}};
    cfg.rejects = two;
    t = text_of(&cfg, r, NULL, 0, false);
    assert_has(t, "  rejected 30: 429* ×20, 503* ×15 (*: every response of that status, rejected by --reject "
                  "STATUS:BODY or not)\n");
    free(t);
    char *j = json_of(&cfg, r, NULL, 0);
    assert_has(j, "\"status_codes\":{\"200\":990,\"302\":10,\"400\":1,\"401\":1,\"403\":1,\"404\":1000,\"500\":100,"
                  "\"502\":1,\"504\":1,\"other\":1}");
    assert_has(j, "\"status_codes\":{\"429\":20,\"503\":15}");
    free(j);
    result_free(r);

    /* a clean run (2xx/3xx only) says nothing of statuses */
    r = one_target_ok();
    statuses(&r->targets[0], 200, 9990);
    statuses(&r->targets[0], 304, 10);
    record_status_add(&r->all.status, &r->targets[0].status);
    t = text_of(&open_cfg, r, NULL, 0, false);
    assert_lacks(t, "×");
    free(t);
    result_free(r);
}

static void test_thresholds(void **state)
{
    (void)state;
    struct run_record *r = one_target_ok();
    struct run_config cfg = open_cfg;
    struct plan_target tc = {.name = "api", .url = "http://127.0.0.1:8080/"};
    cfg.plan.targets = &tc;
    struct run_threshold thr[3];
    char err[256];
    assert_int_equal(run_threshold_parse("p99<250ms", &cfg, &thr[0], err, sizeof err), 0);
    assert_int_equal(run_threshold_parse("error_rate<1%", &cfg, &thr[1], err, sizeof err), 0);
    assert_int_equal(run_threshold_parse("max<=10ms", &cfg, &thr[2], err, sizeof err), 0);
    for (int i = 0; i < 2; i++)
        record_threshold_eval(&thr[i], r);
    /* passing thresholds keep the compact form */
    char *t = text_of(&cfg, r, thr, 2, false);
    assert_has(t, "--verbose: every table");
    assert_line(t, "thresholds");
    assert_has(t, "\n  pass p99<250ms ");
    assert_line(t, "  pass error_rate<1%                measured 0%");
    free(t);
    /* a failed one switches to the full form */
    record_threshold_eval(&thr[2], r);
    assert_false(thr[2].pass);
    assert_true(needs_full(&cfg, r, thr, 3));
    t = text_of(&cfg, r, thr, 3, false);
    assert_lacks(t, "--verbose");
    assert_has(t, "\n  FAIL max<=10ms ");
    free(t);
    char *j = json_of(&cfg, r, thr, 3);
    assert_has(j, "\"thresholds_pass\":false");
    assert_json(j, "[t['pass'] for t in d['thresholds']] == [True, True, False] and "
                   "d['thresholds'][1]['unit'] == 'fraction' and d['thresholds'][0]['unit'] == 'ms'");
    free(j);
    result_free(r);
}

/* --abort-if: the summary's first line says which rule stopped the run and when. */
static void test_aborted_first(void **state)
{
    (void)state;
    struct run_record *r = one_target_ok();
    r->interrupted = true;
    warn(r, true, "interrupted: planning stopped early at 4.00 s; the numbers cover what ran");
    record_set_aborted(r, "p99[30s]>500ms", 4);
    char *t = text_of(&open_cfg, r, NULL, 0, false);
    const char *first = "ABORTED at 4.0 s: --abort-if p99[30s]>500ms fired; planning stopped and the requests in "
                        "flight drained\n\nknee run: ";
    if (strncmp(t, first, strlen(first)) != 0)
        fail_msg("the summary does not start with the abort:\n%.300s", t);
    assert_lacks(t, "interrupted:");
    assert_has(t, "  ! ABORTED: --abort-if p99[30s]>500ms fired at 4.0 s");
    free(t);
    char *j = json_of(&open_cfg, r, NULL, 0);
    assert_json(j, "d['aborted'] == {'rule': 'p99[30s]>500ms', 'at_s': 4} and d['interrupted']");
    free(j);
    result_free(r);
}

/* ------------------------------------------------------------------ JSON */

static void test_json_document(void **state)
{
    (void)state;
    struct run_record *r = one_target_ok();
    warn(r, true, "a \"quoted\" warning");
    r->targets[0].counts.outcome[OUTCOME_OK] += 0;
    struct run_config cfg = open_cfg;
    cfg.plan.warmup_ns = NS_PER_S;
    const char *argv[] = {"knee", "run", "-R", "1000", "http://127.0.0.1:8080/"};
    cfg.argv = argv;
    cfg.argc = 5;
    struct run_reject rej = {503, "QUEUE_TIMEOUT"};
    cfg.rejects = &rej;
    cfg.nrejects = 1;
    char *j = json_of(&cfg, r, NULL, 0);
    assert_has(j, "\"warnings\":[\"a \\\"quoted\\\" warning\"]");
    assert_has(j, "\"args\":[\"knee\",\"run\",\"-R\",\"1000\",\"http://127.0.0.1:8080/\"]");
    assert_has(j, "\"latency_interval\":\"T5-T0 (planned send to full response)\"");
    assert_has(j, "\"thresholds\":[],\"thresholds_pass\":true");
    /* a histogram without samples: count 0, every statistic null */
    assert_has(j, "\"connect\":{\"count\":0,\"mean\":null,\"stdev\":null,\"min\":null,\"max\":null,\"p50\":null");
    assert_json(j, "d['config']['rate'] == 1000 and d['config']['warmup_s'] == 1 and d['config']['reject'] == "
                   "[{'status': 503, 'body': 'QUEUE_TIMEOUT'}] and d['all']['latency']['count'] == 10000 and "
                   "d['all']['latency_by_outcome']['ok']['count'] == 10000 and 'timeout' not in "
                   "d['all']['latency_by_outcome'] and d['all']['accounting']['outcomes']['ok'] == 10000 and "
                   "d['environment']['loadavg_before'][0] is None and d['accounting_ok'] and d['timeline'] == []");
    free(j);
    result_free(r);
}

/* ------------------------------------------------------------------ plan and progress */

static void test_plan(void **state)
{
    (void)state;
    struct run_dryrun plan = {0};
    struct run_dryrun_target t = {.name = "api",
                                  .url = "http://127.0.0.1:8080/",
                                  .address = "127.0.0.1:8080",
                                  .resolve_ns = 12000,
                                  .request_bytes = 64,
                                  .rate_from = 500,
                                  .rate_to = 500,
                                  .planned = 5000,
                                  .warmup_planned = 1000,
                                  .planned_exact = true};
    plan.ntargets = 1;
    plan.targets = &t;
    plan.all = t;
    plan.threads = 2;
    plan.pool_cap = plan.pool_asked = 10000;
    struct run_config cfg = open_cfg;
    cfg.plan.rate = 500;
    cfg.plan.warmup_ns = 2 * NS_PER_S;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_print_dryrun(f, &cfg, &plan);
    fclose(f);
    assert_line(buf,
                "knee run: open loop, constant arrivals, 500.0/s, pool up to 10,000 connections (queue when busy), "
                "10 s, 2 threads");
    assert_line(buf,
                "  api        http://127.0.0.1:8080/ -> 127.0.0.1:8080 (resolved in 12us), 500.0/s, 5,000 planned; "
                "request 64 bytes");
    assert_line(buf, "  5,000 requests planned over 10 s");
    assert_line(buf, "  warm-up: 1,000 of them in the first 2 s, logged but left out of the statistics");
    assert_line(buf, "  timeout 10s per request, drain 10s after planning ends");
    free(buf);

    /* Poisson: an expectation; a pool capped by the descriptor limit is said */
    t.planned_exact = false;
    plan.all = t;
    plan.pool_cap = 1000;
    cfg.plan.arrivals = RUN_ARRIVALS_POISSON;
    f = open_memstream(&buf, &len);
    cli_print_dryrun(f, &cfg, &plan);
    fclose(f);
    assert_line(buf, "  about 5,000 requests planned over 10 s (Poisson arrivals: the count varies from seed to seed)");
    assert_line(buf, "  ! the connection pool is capped at 1000 (file descriptor limit 0; asked for 10000)");
    free(buf);
    /* one of a kind: singular */
    t.planned = 1;
    t.planned_exact = true;
    plan.all = t;
    plan.pool_cap = plan.pool_asked = 1;
    cfg.plan.arrivals = RUN_ARRIVALS_CONSTANT;
    cfg.plan.requests = 1;
    f = open_memstream(&buf, &len);
    cli_print_dryrun(f, &cfg, &plan);
    fclose(f);
    assert_has(buf, "pool up to 1 connection (queue when busy), 10 s, 1 request, 2 threads");
    assert_line(buf, "  1 request planned over 10 s");
    free(buf);
    /* the I/O engine the run would take and the --io that chose it; --timer-slack when set */
    plan.io = RUN_IO_EPOLL;
    cfg.io = RUN_IO_AUTO;
    cfg.plan.requests = 0;
    cfg.timer_slack_ns = 1500 * NS_PER_US;
    f = open_memstream(&buf, &len);
    cli_print_dryrun(f, &cfg, &plan);
    fclose(f);
    assert_line(buf,
                "knee run: open loop, constant arrivals, 500.0/s, pool up to 1 connection (queue when busy), sends up "
                "to 1.500 ms late by --timer-slack, 10 s, 2 threads on epoll (--io auto)");
    free(buf);
    cfg.plan.open_loop = false;
    cfg.timer_slack_ns = 0;
    cfg.io = RUN_IO_URING;
    plan.io = RUN_IO_URING;
    plan.all.connections = 4;
    f = open_memstream(&buf, &len);
    cli_print_dryrun(f, &cfg, &plan);
    fclose(f);
    assert_line(buf, "knee run: closed loop, 4 connections, 10 s, 2 threads on io_uring (--io uring)");
    free(buf);
}

static void test_progress(void **state)
{
    (void)state;
    struct run_progress p = {.elapsed_s = 3,
                             .total_s = 10,
                             .start_s = 2,
                             .length_s = 1,
                             .sent = 1000,
                             .completed = 998,
                             .in_flight = 2,
                             .errors = 1,
                             .p50_ms = 1.25,
                             .p99_ms = NAN};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_print_progress(f, &p, true);
    fclose(f);
    assert_string_equal(
        buf, "\r[   3.0s/10s] sent 1,000.0/s  done 998.0/s  in flight 2  p50 1.250 p99 - ms  errors 1\033[K");
    free(buf);
    /* not a terminal (a pipe, a file): one plain line, no carriage return, no escape code */
    f = open_memstream(&buf, &len);
    cli_print_progress(f, &p, false);
    fclose(f);
    assert_string_equal(buf, "[   3.0s/10s] sent 1,000.0/s  done 998.0/s  in flight 2  p50 1.250 p99 - ms  errors 1\n");
    free(buf);
}

/* ------------------------------------------------------------------ headline, verdict, warnings */

/* The headline's errors line names the failed outcomes and the status codes; its latency is of
 * the ok requests when some failed; the verdict names the most consequential problem. */
static void test_headline_and_verdicts(void **state)
{
    (void)state;
    struct run_record *r = one_target_ok();
    record(&r->targets[0], OUTCOME_HTTP_ERROR, 30, 3000000);
    record(&r->all, OUTCOME_HTTP_ERROR, 30, 3000000);
    r->failed_share = 30.0 / 10030;
    statuses(&r->targets[0], 404, 20);
    statuses(&r->targets[0], 500, 10);
    statuses(&r->targets[0], 200, 10000);
    record_status_add(&r->all.status, &r->targets[0].status);
    char *t = text_of(&open_cfg, r, NULL, 0, false);
    assert_has(t, "\nerrors      30 of 10,030 sent (");
    assert_has(t, "): http_error 30; status 404 ×20, 500 ×10\n");
    assert_has(t, "   (10,000 requests, the ok ones, from the planned send)\n");
    /* 0.3% failed: a measurement still valid, its errors on the line above */
    assert_has(t, "\nverdict     valid: the generator kept its plan (100.00% sent on schedule, lag p99 ");
    free(t);
    char v[512];
    r->failed_share = 0.25;
    assert_string_equal(runreport_verdict(r, v, sizeof v),
                        "ERRORS: 25.0% of the requests sent failed; the latency above is of the ok ones");
    r->generator_limited = true; /* the generator first: it shaped the errors too */
    assert_true(strncmp(runreport_verdict(r, v, sizeof v), "GENERATOR-LIMITED: ", 19) == 0);
    r->generator_limited = false;
    r->failed_share = 0;
    r->interrupted = true;
    assert_true(strncmp(runreport_verdict(r, v, sizeof v), "INTERRUPTED: ", 13) == 0);
    r->interrupted = false;
    r->accounting_ok = false;
    assert_true(strncmp(runreport_verdict(r, v, sizeof v), "BROKEN: ", 8) == 0);
    r->accounting_ok = true;
    struct run_threshold thr[2] = {{.pass = true}, {.pass = false}};
    snprintf(thr[0].expr, sizeof thr[0].expr, "p99<1s");
    snprintf(thr[1].expr, sizeof thr[1].expr, "max<1us");
    prepare(&open_cfg, r, thr, 2, false);
    assert_string_equal(runreport_verdict(r, v, sizeof v), "THRESHOLDS FAILED: 1 of 2 (below)");
    result_free(r);
}

/* A target that refused every connection: the failed form (no latency tables), its verdict
 * naming the address, the warnings by cause (FAILED and what goes with it together). */
static void test_failed_form(void **state)
{
    (void)state;
    struct run_record *r = result_new(1);
    target_init(&r->targets[0], "127.0.0.1:8080", "http://127.0.0.1:8080/");
    record(&r->targets[0], OUTCOME_TRANSPORT, 400, 100000);
    r->targets[0].counts.transport_cause[RUN_TC_REFUSED] = 400;
    r->targets[0].counts.conns_failed = 400;
    merge_all(r);
    r->all.counts.transport_cause[RUN_TC_REFUSED] = 400;
    r->accounting_ok = true;
    warn(r, true, "FAILED: not one request succeeded (transport 400): there is no latency of a working service");
    warn(r, true, "stopped early after 2 s: connection refused by 127.0.0.1:8080: is the server up?");
    warn(r, true, "400 connection attempts failed (refused, unreachable or out of descriptors)");
    warn(r, false, "only 400 latency samples: p99 rests on fewer than 10 samples above it, p99.9 on none");
    char *t = text_of(&open_cfg, r, NULL, 0, false);
    assert_line(t, "  http://127.0.0.1:8080/ -> 127.0.0.1:8080");
    assert_line(t, "latency     none: not one request succeeded");
    assert_line(t, "errors      400 of 400 sent (100%): transport 400 (refused 400)");
    assert_line(t, "verdict     FAILED: connection refused by 127.0.0.1:8080: is the server up?");
    assert_line(t, "  sent 400 = ok 0 + rejected 0 + http_error 0 + invalid 0 + transport 400 + timeout 0 + "
                   "cancelled 0  [holds]");
    assert_line(t, "  transport 400: refused 400");
    assert_lacks(t, "latency (ms)");
    assert_lacks(t, "rates per second");
    assert_has(t, "\nwarnings, by cause (the most consequential first)\n"
                  "  ! FAILED: not one request succeeded (transport 400): there is no latency of a working service\n"
                  "    stopped early after 2 s: connection refused by 127.0.0.1:8080: is the server up?\n"
                  "    400 connection attempts failed (refused, unreachable or out of descriptors)\n");
    assert_lacks(t, "p99 rests"); /* no latency of a working service to doubt */
    assert_lacks(t, "GENERATOR-LIMITED");
    free(t);
    t = text_of(&open_cfg, r, NULL, 0, true); /* --verbose: the tables, the note */
    assert_has(t, "\n  transport           400 ");
    assert_line(t, "  - only 400 latency samples: p99 rests on fewer than 10 samples above it, p99.9 on none");
    free(t);
    result_free(r);
}

/* Warnings print by cause, the most consequential first, whatever order they were found in;
 * the notes after them. */
static void test_warnings_ranked(void **state)
{
    (void)state;
    struct run_record *r = one_target_ok();
    warn(r, false, "only 500 latency samples: p99 rests on fewer than 10 samples above it, p99.9 on none");
    warn(r, true, "12 connection attempts failed (refused, unreachable or out of descriptors)");
    warn(r, true, "ERRORS: 12.0% of the requests sent failed (timeout 1,200): the latency of all requests mixes");
    warn(r, false, "warm-up: 100 requests planned in the first 1 s are left out of these statistics");
    warn(r, true, "self-check: not stationary: the per-second p99 rises from about 1 to 9 ms over the run");
    warn(r, true, "GENERATOR-LIMITED: the generator, not the service, shaped this run: lag p99 9 ms");
    warn(r, true, "3 planned requests were never sent (dropped): still waiting for a connection");
    char *t = text_of(&open_cfg, r, NULL, 0, false);
    assert_has(t, "\nwarnings, by cause (the most consequential first)\n"
                  "  ! GENERATOR-LIMITED: the generator, not the service, shaped this run: lag p99 9 ms\n"
                  "    3 planned requests were never sent (dropped): still waiting for a connection\n"
                  "  ! 12 connection attempts failed (refused, unreachable or out of descriptors)\n"
                  "    ERRORS: 12.0% of the requests sent failed (timeout 1,200): the latency of all requests mixes\n"
                  "  ! self-check: not stationary: the per-second p99 rises from about 1 to 9 ms over the run\n"
                  "\nnotes\n"
                  "  - only 500 latency samples: p99 rests on fewer than 10 samples above it, p99.9 on none\n");
    assert_lacks(t, "warm-up:");
    free(t);
    result_free(r);
}

/* ------------------------------------------------------------------ rates by event time */

/* A generator that fell behind: the rates count what happened inside the window, the sends
 * and completions after it are on their own line, the achieved pace beside them. */
static void test_rates_after_the_window(void **state)
{
    (void)state;
    struct run_record *r = one_target_ok();
    struct run_events *ev = &r->targets[0].events;
    /* of 10,000 planned in 10 s, 2,500 left inside the window, 7,500 after it */
    ev->sent = 2500;
    ev->sent_late = 7500;
    ev->completed = 2400;
    ev->ok = 2400;
    ev->completed_late = 7600;
    ev->first_send_ns = 1000000;
    ev->last_send_ns = 40001000000ULL; /* 40 s of sending */
    ev->sends = 10001;
    r->all.events = *ev;
    record_rates_of(ev, &r->targets[0].rates);
    record_rates_of(&r->all.events, &r->all.rates);
    r->sent_on_schedule = 0.25;
    char *t = text_of(&open_cfg, r, NULL, 0, true);
    assert_line(t, "  rates per second over the window 0.000 .. 10.000 s (events inside it):");
    assert_line(t, "    planned 1,000.0  sent 250.0  completed 240.0  goodput 240.0");
    assert_line(t, "  sent 250.0/s over 40.000 s of sending (first to last send)");
    assert_line(t, "  after the window (in no rate): 7,500 late sends, 7,600 completed during the drain");
    assert_line(t, "  sent on schedule: 25.00% of the planned requests, sent by the window's end (+1ms)");
    free(t);
    char *j = json_of(&open_cfg, r, NULL, 0);
    assert_json(j, "d['rates']['sent'] == 250 and d['rates']['achieved_send'] == 250 and d['rates']['sending_s'] == 40 "
                   "and d['events']['sent_late'] == 7500 and d['events']['completed_late'] == 7600 and "
                   "d['sent_on_schedule'] == 0.25");
    free(j);
    result_free(r);
}

/* Nothing succeeded, or many failed: said above the latency table, not only at the end; names
 * and warnings from input are printed with their control bytes escaped. */
static void test_failed_and_escaped(void **state)
{
    (void)state;
    struct run_record *r = result_new(1);
    target_init(&r->targets[0], "a\r\nb", "http://127.0.0.1:1/\x1b[2J");
    record(&r->targets[0], OUTCOME_TRANSPORT, 1000, 100000);
    merge_all(r);
    warn(r, true,
         "FAILED: not one request succeeded (transport 1,000): there is no latency of a working service to "
         "report");
    warn(r, true, "--out x\ry: writing failed");
    char *t = text_of(&open_cfg, r, NULL, 0, false);
    const char *banner = strstr(t, "\n! FAILED: not one request succeeded");
    const char *table = strstr(t, "\nlatency (ms)");
    assert_non_null(banner);
    assert_non_null(table);
    assert_true(banner < table);
    assert_has(t, "  a\\r\\nb ");
    assert_has(t, "http://127.0.0.1:1/\\x1b[2J");
    assert_line(t, "  ! --out x\\ry: writing failed");
    assert_lacks(t, "\r");
    assert_lacks(t, "\033");
    free(t);
    char *j = json_of(&open_cfg, r, NULL, 0);
    assert_json(j, "d['no_ok'] and d['failed_share'] == 1");
    free(j);
    result_free(r);
}

/* The plan's head names the total rate: the shared --rate plus the targets' own @R. */
static void test_banner_total(void **state)
{
    (void)state;
    struct run_record *r = result_new(2);
    target_init(&r->targets[0], "a", "http://h/a");
    target_init(&r->targets[1], "b", "http://h/b");
    r->targets[0].planned_rate = 20;
    r->targets[1].planned_rate = 100;
    record(&r->targets[0], OUTCOME_OK, 200, 1000000);
    record(&r->targets[1], OUTCOME_OK, 1000, 1000000);
    merge_all(r);
    struct plan_target tc[2] = {{.name = "a", .url = "http://h/a", .rate = 20}, {.name = "b", .url = "http://h/b"}};
    struct run_config cfg = open_cfg;
    cfg.plan.rate = 100;
    cfg.plan.targets = tc;
    cfg.plan.ntargets = 2;
    char *t = text_of(&cfg, r, NULL, 0, false);
    assert_has(t, "knee run: open loop, constant arrivals, 120.0/s in total, pool up to 10,000 connections");
    free(t);
    result_free(r);
}

/* ------------------------------------------------------------------ the summary from the JSON */

/* The summary printed from the run equals the one printed from its JSON, byte for byte, with
 * and without --verbose (the JSON records it). */
static void assert_roundtrip(const struct run_config *cfg, struct run_record *r, const struct run_threshold *thr,
                             size_t nthr)
{
    for (int verbose = 0; verbose <= 1; verbose++) {
        char *term = text_of(cfg, r, thr, nthr, verbose);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        record_write_json(f, r, verbose);
        fclose(f);
        json_error_t je;
        json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
        if (!root)
            fail_msg("the JSON does not parse: %d: %s\n%s", je.line, je.text, buf);
        struct run_record v;
        char err[256];
        assert_int_equal(record_read_json(root, &v, err, sizeof err), 0);
        char *page = NULL;
        size_t plen = 0;
        f = open_memstream(&page, &plen);
        runreport_print_summary(f, &v, v.verbose);
        fclose(f);
        if (strcmp(term, page) != 0)
            fail_msg("the summary from the JSON differs:\n--- terminal\n%s--- from the JSON\n%s", term, page);
        assert_int_equal(runreport_needs_full(&v), needs_full(cfg, r, thr, nthr));
        record_release(&v);
        json_decref(root);
        free(page);
        free(buf);
        free(term);
    }
}

/* merge_all again after more records: the merged target's histograms are made anew */
static void remerge(struct run_record *r)
{
    struct run_target_result *a = &r->all;
    for (int g = 0; g < RUN_GROUP_COUNT; g++)
        hdr_release(&a->latency[g]);
    struct hdr *hs[] = {&a->latency_all, &a->service, &a->ttfb, &a->lag, &a->connect};
    for (size_t i = 0; i < sizeof hs / sizeof *hs; i++)
        hdr_release(hs[i]);
    merge_all(r);
}

static void st_add(struct run_target_result *t, const char *name, int64_t ns, int64_t n)
{
    struct run_server_timing *st = &t->st[t->nst++];
    snprintf(st->name, sizeof st->name, "%s", name);
    assert_int_equal(hdr_init(&st->dur, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
    hdr_record(&st->dur, ns, n);
}

static void test_summary_from_json(void **state)
{
    (void)state;
    /* ok, compact; the same with a note */
    struct run_record *r = one_target_ok();
    assert_roundtrip(&open_cfg, r, NULL, 0);
    warn(r, false, "only 10000 latency samples: p99.9 rests on fewer than 10 samples above it; read it as rough");
    assert_roundtrip(&open_cfg, r, NULL, 0);

    /* thresholds: passing (compact), then one failing (full), a share and a rate among them */
    struct run_config cfg = open_cfg;
    struct plan_target tc = {.name = "api", .url = "http://127.0.0.1:8080/"};
    cfg.plan.targets = &tc;
    struct run_threshold thr[4];
    char err[256];
    assert_int_equal(run_threshold_parse("p99<250ms", &cfg, &thr[0], err, sizeof err), 0);
    assert_int_equal(run_threshold_parse("error_rate<1%", &cfg, &thr[1], err, sizeof err), 0);
    assert_int_equal(run_threshold_parse("goodput_per_s>10", &cfg, &thr[2], err, sizeof err), 0);
    assert_int_equal(run_threshold_parse("max<=10ms", &cfg, &thr[3], err, sizeof err), 0);
    for (int i = 0; i < 4; i++)
        record_threshold_eval(&thr[i], r);
    assert_roundtrip(&cfg, r, thr, 3);
    assert_roundtrip(&cfg, r, thr, 4);

    /* a warning that needs attention; a generator-limited, interrupted run with late events */
    warn(r, true, "12 connection attempts failed (refused, unreachable or out of descriptors)");
    assert_roundtrip(&open_cfg, r, NULL, 0);
    struct run_events *ev = &r->targets[0].events;
    ev->sent = 2500;
    ev->sent_late = 7500;
    ev->completed = 2400;
    ev->ok = 2400;
    ev->completed_late = 7600;
    ev->first_send_ns = 1000000;
    ev->last_send_ns = 40001000000ULL;
    ev->sends = 10001;
    r->all.events = *ev;
    record_rates_of(ev, &r->targets[0].rates);
    record_rates_of(&r->all.events, &r->all.rates);
    r->sent_on_schedule = 0.25;
    r->generator_limited = true;
    r->interrupted = true;
    cfg = open_cfg;
    cfg.lag_limit_ns = 3 * NS_PER_MS;
    assert_roundtrip(&cfg, r, NULL, 0);
    result_free(r);

    /* failures of every kind with a warm-up: transport causes (stale, without --retry-stale,
     * then with it and its retries), the FAILED/ERRORS line above the tables */
    r = one_target_ok();
    record(&r->targets[0], OUTCOME_TIMEOUT, 5, 10000000000LL);
    record(&r->targets[0], OUTCOME_TRANSPORT, 25, 100000);
    record(&r->targets[0], OUTCOME_HTTP_ERROR, 3, 700000);
    record(&r->targets[0], OUTCOME_DROPPED, 4, 0);
    r->targets[0].counts.transport_cause[RUN_TC_REFUSED] = 3;
    r->targets[0].counts.transport_cause[RUN_TC_STALE] = 22;
    r->targets[0].warmup_counts.planned = 100;
    r->targets[0].warmup_counts.sent = 100;
    r->targets[0].warmup_counts.outcome[OUTCOME_OK] = 99;
    r->targets[0].warmup_counts.outcome[OUTCOME_TRANSPORT] = 1;
    r->targets[0].warmup_counts.transport_cause[RUN_TC_RESET] = 1;
    r->targets[0].warmup_counts.bytes_in = 4096;
    r->targets[0].counts.conns_failed = 3;
    r->targets[0].counts.conns_closed_by_peer = 22;
    r->targets[0].counts.conns_unsolicited = 1;
    record(&r->targets[0], OUTCOME_OK, 0, 0);
    remerge(r);
    for (int k = 0; k < RUN_TC_COUNT; k++) {
        r->all.counts.transport_cause[k] = r->targets[0].counts.transport_cause[k];
        r->all.warmup_counts.transport_cause[k] = r->targets[0].warmup_counts.transport_cause[k];
    }
    r->all.counts.conns_failed = 3;
    r->all.counts.conns_closed_by_peer = 22;
    r->all.counts.conns_unsolicited = 1;
    warn(r, true, "ERRORS: 33 of 10,037 requests sent failed (0.33%)");
    cfg = open_cfg;
    cfg.plan.warmup_ns = NS_PER_S;
    assert_roundtrip(&cfg, r, NULL, 0);
    r->all.counts.retries = r->targets[0].counts.retries = 17;
    cfg.retry_stale = true;
    assert_roundtrip(&cfg, r, NULL, 0);
    result_free(r);

    /* nothing succeeded; names and URLs with control bytes */
    r = result_new(1);
    target_init(&r->targets[0], "a\r\nb", "http://127.0.0.1:1/\x1b[2J");
    record(&r->targets[0], OUTCOME_TRANSPORT, 1000, 100000);
    merge_all(r);
    warn(r, true, "FAILED: not one request succeeded (transport 1,000): there is no latency of a working service");
    assert_roundtrip(&open_cfg, r, NULL, 0);
    result_free(r);

    /* https over h2 (--http2, --insecure, --tls-resume off, --streams): the verification line,
     * the tls and h2 lines, the tls table; then h2c to a server without a stream limit */
    r = one_target_ok();
    for (int k = 0; k < 2; k++) {
        struct run_target_result *t = k ? &r->all : &r->targets[0];
        t->https = true;
        assert_int_equal(hdr_init(&t->tls, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS), 0);
        hdr_record(&t->tls, 1210000, 2);
        hdr_record(&t->tls, 3400000, 1);
        t->pc = (struct run_proto_counts){.h2 = 3,
                                          .tls_version = {[RUN_TLS_V13] = 3},
                                          .tls_full = 3,
                                          .h2_streams = 10004,
                                          .h2_max_concurrent = 128,
                                          .h2_limit_seen = true,
                                          .h2_goaway = 1,
                                          .h2_goaway_streams = 4,
                                          .h2_retried = 4};
    }
    cfg = open_cfg;
    cfg.http = RUN_HTTP_2;
    cfg.tls_insecure = true;
    cfg.tls_no_resume = true;
    cfg.streams = 8;
    assert_roundtrip(&cfg, r, NULL, 0);
    char *text = text_of(&cfg, r, NULL, 0, true);
    assert_has(text, "tls: certificate verification OFF (--insecure)");
    assert_has(text, "tls: TLSv1.3, h2 (--http2); handshakes 3: 0 resumed (0%) (--tls-resume off); tls p50 ");
    assert_has(text, "h2: 10,004 streams on 3 connections (server limit 128, --streams 8); RST_STREAM 0 (refused 0), "
                     "GOAWAY 1 (4 streams refused), sent again 4");
    assert_has(text, "tls (ms): connected -> TLS handshake done");
    free(text);
    for (int k = 0; k < 2; k++) {
        struct run_target_result *t = k ? &r->all : &r->targets[0];
        t->https = false;
        hdr_reset(&t->tls);
        t->pc = (struct run_proto_counts){
            .h2 = 1, .h2_streams = 10000, .h2_max_concurrent = UINT64_MAX, .h2_limit_seen = true};
    }
    cfg = open_cfg;
    cfg.h2c = true;
    assert_roundtrip(&cfg, r, NULL, 0);
    text = text_of(&cfg, r, NULL, 0, false);
    assert_has(text, "h2c: 10,000 streams on 1 connection (server limit: none)");
    assert_lacks(text, "tls");
    free(text);
    /* a server that allowed no stream (it printed "server limit 1"), then one whose SETTINGS
     * never came: each as the server said, through the JSON too */
    for (int k = 0; k < 2; k++)
        (k ? &r->all : &r->targets[0])->pc =
            (struct run_proto_counts){.h2 = 2, .h2_streams = 1, .h2_max_concurrent = 0, .h2_limit_seen = true};
    assert_roundtrip(&cfg, r, NULL, 0);
    text = text_of(&cfg, r, NULL, 0, false);
    assert_has(text, "h2c: 1 stream on 2 connections (server limit 0); the server allowed no stream "
                     "(SETTINGS_MAX_CONCURRENT_STREAMS 0): no new connection while one said so, at most one per "
                     "waiting request after\n");
    free(text);
    for (int k = 0; k < 2; k++)
        (k ? &r->all : &r->targets[0])->pc = (struct run_proto_counts){.h2 = 2, .h2_streams = 2};
    assert_roundtrip(&cfg, r, NULL, 0);
    text = text_of(&cfg, r, NULL, 0, false);
    assert_has(text, "h2c: 2 streams on 2 connections (server limit: none seen)\n");
    free(text);
    result_free(r);

    /* https where no handshake completed: the cause and the flag that fixes it (it printed
     * "tls: , no protocol agreed (ALPN)") */
    r = result_new(1);
    target_init(&r->targets[0], "t", "https://127.0.0.1:1/");
    record(&r->targets[0], OUTCOME_TRANSPORT, 20, 100000);
    r->targets[0].counts.transport_cause[RUN_TC_TLS_VERIFY] = 20;
    merge_all(r);
    for (int k = 0; k < 2; k++) {
        struct run_target_result *t = k ? &r->all : &r->targets[0];
        t->https = true;
        t->counts.transport_cause[RUN_TC_TLS_VERIFY] = 20;
        t->pc = (struct run_proto_counts){.tls_failed = 21};
    }
    warn(r, true, "FAILED: not one request succeeded (transport 20): there is no latency of a working service");
    assert_roundtrip(&open_cfg, r, NULL, 0);
    text = text_of(&open_cfg, r, NULL, 0, false);
    assert_has(text, "\ntls: no handshake completed: 21 failed (tls verify 20: --cacert FILE or --insecure)\n");
    assert_has(text, "  transport 20: tls verify 20 (tls verify: the server's certificate did not verify against the "
                     "trusted CAs (self-signed, or signed by a CA unknown here); --cacert FILE trusts the CA that "
                     "signed it, --insecure skips the check)\n");
    assert_lacks(text, "tls: , ");
    free(text);
    /* some handshakes done, some failed: the causes after the count */
    for (int k = 0; k < 2; k++) {
        struct run_target_result *t = k ? &r->all : &r->targets[0];
        t->counts.transport_cause[RUN_TC_TLS_VERIFY] = 0;
        t->counts.transport_cause[RUN_TC_TLS_HOSTNAME] = 20;
        t->pc =
            (struct run_proto_counts){.tls_version = {[RUN_TLS_V13] = 1}, .http1 = 1, .tls_full = 1, .tls_failed = 20};
    }
    assert_roundtrip(&open_cfg, r, NULL, 0);
    text = text_of(&open_cfg, r, NULL, 0, false);
    assert_has(text, ", 20 failed (tls hostname 20: --insecure)");
    free(text);
    result_free(r);

    /* several targets, own @R rates, server timing, connect times */
    r = result_new(2);
    target_init(&r->targets[0], "read", "http://h/r");
    target_init(&r->targets[1], "write", "http://h/w");
    r->targets[0].planned_rate = 20;
    r->targets[1].planned_rate = 100;
    record(&r->targets[0], OUTCOME_OK, 200, 1000000);
    record(&r->targets[1], OUTCOME_OK, 990, 4000000);
    record(&r->targets[1], OUTCOME_REJECTED, 10, 300000);
    st_add(&r->targets[0], "db", 700000, 200);
    st_add(&r->targets[0], "cache", 20000, 200);
    st_add(&r->targets[1], "db", 2500000, 1000);
    merge_all(r);
    hdr_record(&r->all.connect, 150000, 4);
    hdr_record(&r->targets[0].connect, 150000, 4);
    struct plan_target tcs[2] = {{.name = "read", .url = "http://h/r", .rate = 20},
                                 {.name = "write", .url = "http://h/w"}};
    cfg = open_cfg;
    cfg.plan.rate = 100;
    cfg.plan.targets = tcs;
    cfg.plan.ntargets = 2;
    assert_roundtrip(&cfg, r, NULL, 0);
    /* both with their own rate: no shared rate in the head */
    tcs[1].rate = 100;
    cfg.plan.rate = 0;
    assert_roundtrip(&cfg, r, NULL, 0);

    /* Poisson arrivals up a ramp, drop when busy, no keep-alive, bounded by --requests */
    cfg = open_cfg;
    cfg.plan.arrivals = RUN_ARRIVALS_POISSON;
    cfg.plan.seed = 12345678901234ULL;
    cfg.plan.ramp = true;
    cfg.plan.ramp_from = 10;
    cfg.plan.ramp_to = 990;
    cfg.plan.rate = 0;
    cfg.when_busy = RUN_BUSY_DROP;
    cfg.keepalive = false;
    cfg.plan.duration_ns = 0;
    cfg.plan.requests = 1200;
    cfg.plan.targets = NULL;
    cfg.plan.ntargets = 2;
    assert_roundtrip(&cfg, r, NULL, 0);
    result_free(r);

    /* the closed loop, compact and with think time */
    r = one_target_ok();
    r->targets[0].connections = 8;
    r->targets[0].planned_rate = 0;
    cfg = open_cfg;
    cfg.plan.open_loop = false;
    cfg.plan.rate = 0;
    cfg.plan.think_ns = 2500 * NS_PER_US + 1;
    cfg.plan.duration_ns = 7 * NS_PER_S + 123456789;
    assert_roundtrip(&cfg, r, NULL, 0);
    result_free(r);
}

/* A document that is not a knee run's is refused with a reason; one from an older knee
 * (knee-run/1: send_ratio, no events) still prints. */
static void test_view_of_other_documents(void **state)
{
    (void)state;
    struct run_record v;
    char err[256];
    json_t *doc = json_pack("{s:s}", "schema", "knee-compare/1");
    assert_int_equal(record_read_json(doc, &v, err, sizeof err), KNEE_EFORMAT);
    assert_has(err, "not a knee run JSON");
    json_decref(doc);
    doc = json_pack("{s:s, s:[]}", "schema", "knee-run/2", "targets");
    assert_int_equal(record_read_json(doc, &v, err, sizeof err), KNEE_EFORMAT);
    json_decref(doc);
    doc = json_pack("{s:s, s:{s:s}, s:f, s:[{s:s}], s:{s:{s:i}}}", "schema", "knee-run/1", "config", "mode", "open",
                    "send_ratio", 0.5, "targets", "name", "old", "all", "latency", "count", 3);
    assert_int_equal(record_read_json(doc, &v, err, sizeof err), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    runreport_print_summary(f, &v, v.verbose);
    fclose(f);
    assert_has(buf, "  sent on schedule: 50.00% of the planned requests");
    assert_has(buf, "\n  all                   3         -");
    free(buf);
    record_release(&v);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact_one_target),
        cmocka_unit_test(test_closed_loop_compact),
        cmocka_unit_test(test_full_when_something_needs_attention),
        cmocka_unit_test(test_several_targets),
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_aborted_first),
        cmocka_unit_test(test_status_lines),
        cmocka_unit_test(test_json_document),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_rates_after_the_window),
        cmocka_unit_test(test_failed_and_escaped),
        cmocka_unit_test(test_headline_and_verdicts),
        cmocka_unit_test(test_failed_form),
        cmocka_unit_test(test_warnings_ranked),
        cmocka_unit_test(test_banner_total),
        cmocka_unit_test(test_summary_from_json),
        cmocka_unit_test(test_view_of_other_documents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
