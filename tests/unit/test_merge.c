/* Unit tests for src/merge: shards of one plan run in-process (knee serve in-process, a shared
 * start instant, a warm-up, two targets) and merged: the summary's counts equal the whole plan,
 * every percentile of the merged histograms equals the one of the union of the shards'
 * per-request logs (exact, never averaged), the merged log is ordered and complete, the
 * streamed hlog merge writes what knee hlog merge writes; refusals (duplicate, missing,
 * foreign, not a shard's), a failed shard (interrupted; a truncated log) named and the result
 * marked incomplete; shards without a shared start instant. Rates by event time: the shards'
 * events added up equal those counted from the union of their logs, and N shards run together
 * plan what one process plans in the same window; transport causes add up and are checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/rng.h"
#include "hlog/hlog.h"
#include "load/run.h"
#include "load/shard_hooks.h"
#include "merge/merge.h"
#include "reqlog/reqlog.h"
#include "runreport/runreport.h"
#include "cli/run_print.h"
#include "serve/serve.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/knee_test_merge_XXXXXX";
static struct serve_handle *srv;
static char url_a[128], url_b[128];

static const char *path_of(const char *name)
{
    static char buf[64][256];
    static atomic_uint next; /* shards run on threads call it too */
    unsigned k = atomic_fetch_add(&next, 1) % 64;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    struct serve_config sc;
    if (serve_preset("null", &sc) != 0)
        return -1;
    snprintf(sc.listen, sizeof sc.listen, "127.0.0.1:0");
    if (serve_start(&sc, &srv) != 0)
        return -1;
    snprintf(url_a, sizeof url_a, "http://%s/a", serve_address(srv));
    snprintf(url_b, sizeof url_b, "http://%s/b", serve_address(srv));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    serve_stop(srv, NULL);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ running shards */

struct hlog_out {
    FILE *f;
    struct hlog_writer *w;
    const struct run_config *cfg;
};

static void on_interval(void *ctx, size_t target, double start_s, double length_s, const struct hdr *h)
{
    struct hlog_out *o = ctx;
    assert_int_equal(hlog_writer_write(o->w, o->cfg->plan.targets[target].name, start_s, length_s, h), 0);
}

static const struct plan_target targets[] = {{.name = "a", .url = url_a, .weight = 3},
                                             {.name = "b", .url = url_b, .weight = 1}};

static struct run_config plan(uint32_t N, uint64_t start_at)
{
    return (struct run_config){
        .plan.targets = targets,
        .plan.ntargets = 2,
        .plan.open_loop = true,
        .plan.rate = 1500,
        .plan.duration_ns = 600 * NS_PER_MS,
        .plan.warmup_ns = 200 * NS_PER_MS,
        .timeout_ns = 2 * NS_PER_S,
        .drain_ns = 2 * NS_PER_S,
        .keepalive = true,
        .threads = 1,
        .plan.seed = 3,
        .plan.shard.count = N,
        .plan.shard.start_at_unix_ns = start_at,
    };
}

/* Run shard I (cfg's index) writing NAME.json, NAME.bin, NAME.hlog; stop: a handle already
 * stopped (an interrupted shard). */
static void run_shard(struct run_config cfg, uint32_t I, const char *name, bool stop)
{
    char json[64], bin[64], hl[64];
    snprintf(json, sizeof json, "%s.json", name);
    snprintf(bin, sizeof bin, "%s.bin", name);
    snprintf(hl, sizeof hl, "%s.hlog", name);
    cfg.plan.shard.index = I;
    cfg.out_path = path_of(bin);
    struct hlog_out ho = {.cfg = &cfg};
    ho.f = fopen(path_of(hl), "w");
    assert_non_null(ho.f);
    char comment[160];
    uint64_t start = cli_shard_hlog_comment(&cfg, comment, sizeof comment);
    assert_int_equal(hlog_writer_open(&ho.w, ho.f, (double)(start ? start : clock_wall_ns()) / 1e9, comment), 0);
    cfg.on_interval = on_interval;
    cfg.interval_ctx = &ho;
    struct run_stop st;
    run_stop_init(&st);
    if (stop) {
        run_stop_request(&st, false);
        cfg.stop = &st;
    }
    struct run_record res;
    char err[256];
    if (run_execute(&cfg, &res, err, sizeof err))
        fail_msg("run_execute: %s", err);
    assert_int_equal(hlog_writer_close(ho.w), 0);
    fclose(ho.f);
    FILE *f = fopen(path_of(json), "w");
    record_write_json(f, &res, true);
    fclose(f);
    record_release(&res);
}

/* Shards 0..N-1 of cfg run at the same time, on threads (as processes would), NAME<I>.*. */
struct shard_job {
    struct run_config cfg;
    uint32_t index;
    char name[16];
};

static void *shard_thread(void *arg)
{
    struct shard_job *j = arg;
    run_shard(j->cfg, j->index, j->name, false);
    return NULL;
}

static void run_shards_together(struct run_config cfg, uint32_t N, const char *name)
{
    struct shard_job jobs[8];
    pthread_t tid[8];
    assert_true(N <= 8);
    for (uint32_t I = 0; I < N; I++) {
        jobs[I] = (struct shard_job){.cfg = cfg, .index = I};
        snprintf(jobs[I].name, sizeof jobs[I].name, "%s%u", name, I);
        assert_int_equal(pthread_create(&tid[I], NULL, shard_thread, &jobs[I]), 0);
    }
    for (uint32_t I = 0; I < N; I++)
        pthread_join(tid[I], NULL);
}

/* ------------------------------------------------------------------ the union of the logs */

struct union_hists {
    struct hdr latency[2], all, lag;
    uint64_t records, planned_measured;
};

static void union_of_logs(const char *const *paths, size_t n, struct union_hists *u)
{
    memset(u, 0, sizeof *u);
    for (int t = 0; t < 2; t++)
        hdr_init(&u->latency[t], RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&u->all, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_init(&u->lag, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    for (size_t i = 0; i < n; i++) {
        struct reqlog_reader *rd;
        char err[256];
        assert_int_equal(reqlog_reader_open(&rd, paths[i], err, sizeof err), 0);
        struct reqlog_record r;
        while (reqlog_read(rd, &r) == 1) {
            u->records++;
            if (r.flags & REQLOG_FLAG_WARMUP)
                continue;
            u->planned_measured++;
            if (r.done_ns && r.outcome < RUN_GROUP_COUNT) {
                hdr_record(&u->latency[r.target], (int64_t)(r.done_ns - r.planned_ns), 1);
                hdr_record(&u->all, (int64_t)(r.done_ns - r.planned_ns), 1);
            }
            if (r.sent_ns)
                hdr_record(&u->lag, (int64_t)(r.sent_ns - r.planned_ns), 1);
        }
        reqlog_reader_close(rd);
    }
}

/* The events of the union of the logs over [ws, we) (ns since the shared t0), as the engine counts them. */
static void events_of_logs(const char *const *paths, size_t n, uint64_t ws, uint64_t we, struct run_events *ev)
{
    record_events_init(ev, ws, we);
    for (size_t i = 0; i < n; i++) {
        struct reqlog_reader *rd;
        char err[256];
        assert_int_equal(reqlog_reader_open(&rd, paths[i], err, sizeof err), 0);
        struct reqlog_record r;
        while (reqlog_read(rd, &r) == 1)
            record_events_add_reqlog(ev, &r);
        reqlog_reader_close(rd);
    }
}

/* Every interval of the hlogs whose offset from StartTime is `start_s` (each target's),
 * summed: the shards' own per-interval histograms, read with the hlog reader. */
static void hlog_interval_sum(const char *const *paths, size_t n, double start_s, struct hdr *h)
{
    hdr_init(h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    for (size_t i = 0; i < n; i++) {
        FILE *f = fopen(paths[i], "r");
        assert_non_null(f);
        struct hlog_reader *r = hlog_reader_new(f, paths[i]);
        struct hlog_entry e;
        while (hlog_reader_next(r, &e) == 1) {
            if (fabs(e.offset_s - start_s) > 5e-4)
                continue;
            struct hdr x;
            assert_int_equal(hlog_reader_decode(r, &e, &x), 0);
            assert_int_equal(hdr_add(h, &x), 0);
            hdr_release(&x);
        }
        hlog_reader_free(r);
        fclose(f);
    }
}

static void assert_same_events(const struct run_events *a, const struct run_events *b)
{
    if (a->window_start_ns != b->window_start_ns || a->window_end_ns != b->window_end_ns || a->planned != b->planned ||
        a->sent != b->sent || a->completed != b->completed || a->ok != b->ok || a->sent_before != b->sent_before ||
        a->sent_late != b->sent_late || a->completed_late != b->completed_late || a->sends != b->sends ||
        a->first_send_ns != b->first_send_ns || a->last_send_ns != b->last_send_ns)
        fail_msg("events differ: planned %llu/%llu sent %llu/%llu completed %llu/%llu ok %llu/%llu sends %llu/%llu",
                 (unsigned long long)a->planned, (unsigned long long)b->planned, (unsigned long long)a->sent,
                 (unsigned long long)b->sent, (unsigned long long)a->completed, (unsigned long long)b->completed,
                 (unsigned long long)a->ok, (unsigned long long)b->ok, (unsigned long long)a->sends,
                 (unsigned long long)b->sends);
}

static void assert_same_hist(const struct hdr *a, const struct hdr *b, const char *what)
{
    if (a->total_count != b->total_count || hdr_min(a) != hdr_min(b) || hdr_max(a) != hdr_max(b) ||
        hdr_mean(a) != hdr_mean(b))
        fail_msg("%s: count %lld/%lld, min %lld/%lld, max %lld/%lld", what, (long long)a->total_count,
                 (long long)b->total_count, (long long)hdr_min(a), (long long)hdr_min(b), (long long)hdr_max(a),
                 (long long)hdr_max(b));
    const double ps[] = {1, 50, 90, 99, 99.9, 100};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
        if (hdr_value_at_percentile(a, ps[i]) != hdr_value_at_percentile(b, ps[i]))
            fail_msg("%s: p%g differs", what, ps[i]);
}

/* ------------------------------------------------------------------ tests */

static void test_merge_exact(void **state)
{
    (void)state;
    const uint32_t N = 3;
    struct run_config cfg = plan(N, clock_wall_ns() + 300 * NS_PER_MS);
    for (uint32_t I = 0; I < N; I++) {
        char name[16];
        snprintf(name, sizeof name, "x%u", I);
        run_shard(cfg, I, name, false);
    }
    const char *paths[] = {path_of("x2.hlog"), path_of("x0.json"), path_of("x1.json"),
                           path_of("x2.json"), path_of("x0.bin"),  path_of("x1.bin"),
                           path_of("x2.bin"),  path_of("x0.hlog"), path_of("x1.hlog")};
    struct merge_set set;
    char err[512];
    if (merge_set_build(&set, paths, 9, false, err, sizeof err))
        fail_msg("merge_set_build: %s", err);
    assert_int_equal(set.count, N);
    assert_true(set.plan_id == run_shard_plan_id(&cfg));
    struct merge_summary m;
    const char *argv[] = {"merge"};
    if (merge_summary_build(&m, &set, argv, 1, err, sizeof err))
        fail_msg("merge_summary_build: %s", err);
    assert_int_equal(merge_summary_ticks_from_hlogs(&m, &set, err, sizeof err), 0);
    /* the whole plan, exactly */
    struct run_config whole = cfg;
    whole.plan.shard.count = 0;
    whole.plan.shard.start_at_unix_ns = 0;
    struct run_dryrun p;
    assert_int_equal(run_dryrun(&whole, &p, err, sizeof err), 0);
    assert_true(m.plan_checked);
    assert_true(m.plan_ok);
    assert_int_equal(m.plan_expected, (uint64_t)p.all.planned);
    assert_int_equal(m.res.all.counts.planned + m.res.all.warmup_counts.planned, (uint64_t)p.all.planned);
    assert_int_equal(m.res.all.warmup_counts.planned, (uint64_t)p.all.warmup_planned);
    run_dryrun_release(&p);
    assert_true(m.res.accounting_ok);
    assert_false(m.incomplete);
    assert_true(m.windows_equal);
    assert_true(m.res.shard.complete);
    assert_int_equal(m.res.shard.index, RUN_SHARD_MERGED);
    assert_true(fabs(m.res.window_s - 0.4) < 1e-9);
    assert_true(fabs(m.res.targets[0].planned_rate - 1125) < 1e-6);
    /* percentiles: those of the union of the per-request logs */
    struct union_hists u;
    union_of_logs(paths + 4, 3, &u);
    assert_int_equal(u.planned_measured, m.res.all.counts.planned);
    assert_same_hist(&m.res.all.latency_all, &u.all, "all.latency");
    assert_same_hist(&m.res.targets[0].latency_all, &u.latency[0], "a.latency");
    assert_same_hist(&m.res.targets[1].latency_all, &u.latency[1], "b.latency");
    assert_same_hist(&m.res.all.lag, &u.lag, "all.lag");
    /* the generators' own CPU: summed over the shards, over the longest shard's wall time */
    double gu = 0, gs = 0, gw = 0;
    uint64_t gt = 0;
    for (int k = 0; k < 3; k++) {
        json_error_t je;
        json_t *root = json_load_file(paths[1 + k], 0, &je);
        assert_non_null(root);
        json_t *g = json_object_get(json_object_get(root, "environment"), "generator_cpu");
        assert_true(json_is_object(g));
        gu += json_number_value(json_object_get(g, "user_s"));
        gs += json_number_value(json_object_get(g, "sys_s"));
        gw = fmax(gw, json_number_value(json_object_get(g, "wall_s")));
        gt += (uint64_t)json_integer_value(json_object_get(g, "threads"));
        json_decref(root);
    }
    const struct run_generator_cpu *mg = &m.res.env.gen_cpu;
    assert_int_equal(mg->threads, gt);
    assert_true(gt >= 3 * 3); /* a load thread, the log writer and the run's thread at least, per shard */
    assert_true(fabs(mg->user_s - gu) < 1e-9 && fabs(mg->sys_s - gs) < 1e-9 && fabs(mg->wall_s - gw) < 1e-9);
    /* rates by event time: counted again from the logs, equal to the shards' events added up */
    assert_true(m.same_t0);
    assert_true(m.rates_from_logs);
    assert_false(m.logs_disagree);
    assert_int_equal(m.log_records, u.records);
    struct run_events ev;
    events_of_logs(paths + 4, 3, 200 * NS_PER_MS, 600 * NS_PER_MS, &ev);
    assert_same_events(&m.res.all.events, &ev);
    assert_int_equal(m.res.all.events.planned, u.planned_measured);
    assert_true(m.res.all.rates.planned == (double)ev.planned / 0.4);
    assert_true(m.res.all.rates.goodput == (double)ev.ok / 0.4);
    assert_true(isfinite(m.res.all.rates.achieved_send));
    assert_true(fabs(m.res.window_start_s - 0.2) < 1e-9 && fabs(m.res.window_end_s - 0.6) < 1e-9);
    assert_false(m.res.no_ok);
    /* the JSON alone gives the same events (the shards' run_events added up) */
    const char *jsons[] = {paths[1], paths[2], paths[3]};
    struct merge_set js;
    struct merge_summary mj;
    assert_int_equal(merge_set_build(&js, jsons, 3, false, err, sizeof err), 0);
    if (merge_summary_build(&mj, &js, argv, 1, err, sizeof err))
        fail_msg("merge_summary_build (JSON only): %s", err);
    assert_false(mj.rates_from_logs);
    assert_same_events(&mj.res.all.events, &ev);
    for (size_t i = 0; i < 2; i++)
        assert_same_events(&mj.res.targets[i].events, &m.res.targets[i].events);
    assert_true(mj.res.all.rates.sent == m.res.all.rates.sent);
    merge_summary_release(&mj);
    merge_set_release(&js);
    /* the timeline from the hlogs: every interval's percentiles are those of the shards' same
     * intervals added up (the engine's intervals: whole seconds cut at the window's edges) */
    assert_true(m.res.nticks >= 2);
    const char *hlogs[] = {path_of("x0.hlog"), path_of("x1.hlog"), path_of("x2.hlog")};
    uint64_t tl_planned = 0;
    size_t with_p50 = 0;
    for (size_t i = 0; i < m.res.nticks; i++) {
        const struct run_tick *t = &m.res.ticks[i];
        tl_planned += t->planned;
        struct hdr h;
        hlog_interval_sum(hlogs, 3, t->start_s, &h);
        if (!h.total_count) {
            assert_true(isnan(t->p50_ms));
        } else {
            with_p50++;
            assert_true(t->p50_ms == (double)hdr_value_at_percentile(&h, 50) / 1e6);
            assert_true(t->p99_ms == (double)hdr_value_at_percentile(&h, 99) / 1e6);
        }
        hdr_release(&h);
    }
    assert_true(with_p50 >= 1);
    assert_int_equal(tl_planned, u.records);
    /* the merged log */
    struct merge_log_stats st;
    if (merge_logs(&set, &m, path_of("merged.bin"), &st, err, sizeof err))
        fail_msg("merge_logs: %s", err);
    assert_int_equal(st.records, u.records);
    struct reqlog_reader *rd;
    assert_int_equal(reqlog_reader_open(&rd, path_of("merged.bin"), err, sizeof err), 0);
    struct reqlog_shard sh;
    assert_int_equal(reqlog_reader_shard(rd, &sh), 1);
    assert_int_equal(sh.index, REQLOG_SHARD_MERGED);
    assert_int_equal(sh.count, N);
    struct reqlog_record r;
    uint64_t last = 0, n = 0;
    while (reqlog_read(rd, &r) == 1) {
        assert_true(r.planned_ns >= last);
        last = r.planned_ns;
        n++;
    }
    assert_int_equal(n, u.records);
    reqlog_reader_close(rd);
    /* the merged log is itself refused as a shard's output */
    struct merge_probe pr;
    assert_int_equal(merge_probe_file(path_of("merged.bin"), &pr, err, sizeof err), 0);
    assert_true(pr.merged);
    /* the merged hlog */
    FILE *f = fopen(path_of("merged.hlog"), "w");
    assert_int_equal(merge_hlogs(&set, f, err, sizeof err), 0);
    fclose(f);
    assert_int_equal(merge_probe_file(path_of("merged.hlog"), &pr, err, sizeof err), 0);
    assert_int_equal(pr.kind, MERGE_HLOG);
    assert_true(pr.merged);
    assert_int_equal(pr.count, N);
    /* the merged JSON: knee run's schema, with the merge's shard record */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    record_write_json(mem, &m.res, false);
    fclose(mem);
    json_error_t je;
    json_t *root = json_loadb(buf, len, 0, &je);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "schema")), RUN_JSON_SCHEMA);
    assert_true(record_schema_readable(json_string_value(json_object_get(root, "schema"))));
    assert_true(json_number_value(json_object_get(json_object_get(root, "rates"), "planned")) ==
                m.res.all.rates.planned);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "events"), "sent")),
                     m.res.all.events.sent);
    json_t *jsh = json_object_get(root, "shard");
    assert_true(json_is_true(json_object_get(jsh, "merged")));
    assert_int_equal(json_integer_value(json_object_get(jsh, "count")), N);
    assert_int_equal(json_array_size(json_object_get(jsh, "shards")), N);
    assert_true(json_is_true(json_object_get(jsh, "complete")));
    json_t *lat = json_object_get(json_object_get(root, "all"), "latency");
    assert_true(json_real_value(json_object_get(lat, "p99")) == (double)hdr_value_at_percentile(&u.all, 99) / 1e6);
    json_decref(root);
    free(buf);
    for (int t = 0; t < 2; t++)
        hdr_release(&u.latency[t]);
    hdr_release(&u.all);
    hdr_release(&u.lag);
    merge_summary_release(&m);
    merge_set_release(&set);
}

static void expect_refused(const char *const *paths, size_t n, const char *needle)
{
    struct merge_set set;
    char err[512] = "";
    assert_int_equal(merge_set_build(&set, paths, n, false, err, sizeof err), KNEE_EINVAL);
    if (!strstr(err, needle))
        fail_msg("expected '%s' in: %s", needle, err);
}

static void test_merge_refusals(void **state)
{
    (void)state;
    /* x0..x2 exist from test_merge_exact (shards of 3) */
    const char *dup[] = {path_of("x0.json"), path_of("x1.json"), path_of("x2.json"), path_of("x1.json")};
    expect_refused(dup, 4, "two JSONs");
    const char *missing[] = {path_of("x0.json"), path_of("x2.json")};
    expect_refused(missing, 2, "missing shards 1 of 3");
    const char *kind_missing[] = {path_of("x0.json"), path_of("x1.json"), path_of("x2.json"), path_of("x0.bin")};
    expect_refused(kind_missing, 4, "the binary log of shards 1, 2 of 3 is missing");
    /* another plan: a shard of 2 */
    struct run_config other = plan(2, 0);
    run_shard(other, 0, "y0", false);
    const char *foreign[] = {path_of("x0.json"), path_of("x1.json"), path_of("x2.json"), path_of("y0.json")};
    expect_refused(foreign, 4, "not the shards of one plan");
    /* not a shard's output */
    struct run_config plain = plan(0, 0);
    struct run_record res;
    char err[256];
    assert_int_equal(run_execute(&plain, &res, err, sizeof err), 0);
    FILE *f = fopen(path_of("plain.json"), "w");
    record_write_json(f, &res, true);
    fclose(f);
    record_release(&res);
    const char *notshard[] = {path_of("plain.json")};
    expect_refused(notshard, 1, "not a shard's output");
    f = fopen(path_of("x.csv"), "w");
    fputs(REQLOG_CSV_HEADER "\n", f);
    fclose(f);
    const char *csv[] = {path_of("x.csv")};
    expect_refused(csv, 1, "CSV");
    const char *merged[] = {path_of("merged.bin")};
    expect_refused(merged, 1, "already a merge");
}

static void test_merge_failed_shard(void **state)
{
    (void)state;
    struct run_config cfg = plan(2, clock_wall_ns() + 200 * NS_PER_MS);
    run_shard(cfg, 0, "f0", false);
    run_shard(cfg, 1, "f1", true); /* interrupted before it planned anything */
    const char *paths[] = {path_of("f0.json"), path_of("f1.json"), path_of("f0.bin"), path_of("f1.bin")};
    struct merge_set set;
    char err[512];
    assert_int_equal(merge_set_build(&set, paths, 4, false, err, sizeof err), 0);
    struct merge_summary m;
    assert_int_equal(merge_summary_build(&m, &set, NULL, 0, err, sizeof err), 0);
    assert_true(m.incomplete);
    assert_false(m.res.shard.complete);
    assert_false(m.res.shard.parts[0].failed);
    assert_true(m.res.shard.parts[1].failed);
    assert_non_null(strstr(m.res.shard.parts[1].failure, "interrupted"));
    assert_true(m.plan_checked);
    assert_false(m.plan_ok);
    assert_true(m.res.warnings.n > 0);
    assert_non_null(strstr(m.res.warnings.items[0], "INCOMPLETE: shard 1 of 2"));
    merge_summary_release(&m);
    merge_set_release(&set);

    /* a truncated log fails its shard too */
    struct run_config ok = plan(2, clock_wall_ns() + 200 * NS_PER_MS);
    run_shard(ok, 0, "g0", false);
    run_shard(ok, 1, "g1", false);
    struct stat sb;
    assert_int_equal(stat(path_of("g1.bin"), &sb), 0);
    assert_int_equal(truncate(path_of("g1.bin"), sb.st_size - 7), 0);
    const char *g[] = {path_of("g0.json"), path_of("g1.json"), path_of("g0.bin"), path_of("g1.bin")};
    assert_int_equal(merge_set_build(&set, g, 4, false, err, sizeof err), 0);
    assert_int_equal(merge_summary_build(&m, &set, NULL, 0, err, sizeof err), 0);
    assert_true(m.incomplete); /* the summary counts the logs again: the truncation is seen there */
    assert_true(m.res.shard.parts[1].failed);
    assert_non_null(strstr(m.res.shard.parts[1].failure, "truncated"));
    assert_non_null(strstr(m.res.warnings.items[0], "INCOMPLETE: shard 1 of 2"));
    struct merge_log_stats st;
    assert_int_equal(merge_logs(&set, &m, NULL, &st, err, sizeof err), 0);
    assert_int_equal(st.truncated_shards, 1);
    merge_summary_release(&m);
    merge_set_release(&set);
}

/* Shards started one after the other, no shared start instant: merged on the wall clock. */
static void test_merge_unaligned(void **state)
{
    (void)state;
    struct run_config cfg = plan(2, 0);
    run_shard(cfg, 0, "u0", false);
    run_shard(cfg, 1, "u1", false);
    const char *paths[] = {path_of("u0.json"), path_of("u1.json"), path_of("u0.bin"), path_of("u1.bin")};
    struct merge_set set;
    char err[512];
    assert_int_equal(merge_set_build(&set, paths, 4, false, err, sizeof err), 0);
    struct merge_summary m;
    assert_int_equal(merge_summary_build(&m, &set, NULL, 0, err, sizeof err), 0);
    assert_false(m.windows_equal);
    assert_false(m.same_t0);
    assert_true(m.plan_ok);
    assert_true(m.shard_t0_unix_ns[1] > m.shard_t0_unix_ns[0]);
    bool noted = false;
    for (size_t i = 0; i < m.res.warnings.n; i++)
        noted |= strstr(m.res.warnings.items[i], "no shared start instant") != NULL;
    assert_true(noted);
    /* one after the other: no common window, so the rates are the shards' own, summed (each
     * planned half of the 1,500/s over its window) */
    assert_false(m.rates_from_logs);
    assert_true(m.res.window_s == 0);
    assert_true(fabs(m.res.all.rates.planned - 1500) < 1500 * 0.01);
    assert_int_equal(m.res.all.events.planned, m.res.all.counts.planned);
    struct merge_log_stats st;
    assert_int_equal(merge_logs(&set, &m, path_of("u.csv"), &st, err, sizeof err), 0);
    /* shard 1's requests sit after shard 0's on the merged axis (it started later) */
    FILE *f = fopen(path_of("u.csv"), "r");
    char line[512];
    size_t rows = 0;
    while (fgets(line, sizeof line, f))
        rows++;
    fclose(f);
    assert_int_equal(rows, st.records + 1);
    merge_summary_release(&m);
    merge_set_release(&set);
}

/* The merge of N shards run at the same time is the run one process makes of the whole plan:
 * the same requests planned in the same window (rates by event time: planned exactly equal),
 * the same accounting. */
static void test_merge_equals_one_process(void **state)
{
    (void)state;
    const uint32_t N = 3;
    struct run_config cfg = plan(N, clock_wall_ns() + 300 * NS_PER_MS);
    run_shards_together(cfg, N, "p");
    const char *paths[] = {path_of("p0.json"), path_of("p1.json"), path_of("p2.json"),
                           path_of("p0.bin"),  path_of("p1.bin"),  path_of("p2.bin")};
    struct merge_set set;
    char err[512];
    assert_int_equal(merge_set_build(&set, paths, 6, false, err, sizeof err), 0);
    struct merge_summary m;
    if (merge_summary_build(&m, &set, NULL, 0, err, sizeof err))
        fail_msg("merge_summary_build: %s", err);
    assert_true(m.same_t0);
    assert_true(m.rates_from_logs);
    assert_false(m.logs_disagree);
    assert_true(m.res.accounting_ok);
    assert_false(m.incomplete);
    struct run_config one = plan(0, clock_wall_ns() + 100 * NS_PER_MS);
    struct run_record res;
    assert_int_equal(run_execute(&one, &res, err, sizeof err), 0);
    assert_true(m.res.window_s == res.window_s);
    assert_true(m.res.window_start_s == res.window_start_s && m.res.window_end_s == res.window_end_s);
    for (size_t i = 0; i <= 2; i++) {
        const struct run_target_result *a = i < 2 ? &m.res.targets[i] : &m.res.all;
        const struct run_target_result *b = i < 2 ? &res.targets[i] : &res.all;
        assert_int_equal(a->events.planned, b->events.planned);
        assert_true(a->rates.planned == b->rates.planned);
        assert_int_equal(a->counts.planned, b->counts.planned);
        assert_int_equal(a->warmup_counts.planned, b->warmup_counts.planned);
        /* every request planned is accounted for in both: sent or dropped, one outcome each */
        assert_int_equal(a->counts.sent + a->counts.dropped, b->counts.sent + b->counts.dropped);
    }
    assert_true(res.accounting_ok);
    record_release(&res);
    merge_summary_release(&m);
    merge_set_release(&set);
}

/* A target nobody listens on: the transport causes add up across shards (refused), the
 * accounting with them holds, and the merged run says FAILED as knee run would. */
static void test_merge_transport(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd); /* the port is free now: connects are refused */
    char dead[64];
    snprintf(dead, sizeof dead, "http://127.0.0.1:%u/", ntohs(a.sin_port));
    const struct plan_target down[] = {{.name = "down", .url = dead}};
    struct run_config cfg = plan(2, clock_wall_ns() + 200 * NS_PER_MS);
    cfg.plan.targets = down;
    cfg.plan.ntargets = 1;
    cfg.plan.rate = 200;
    cfg.plan.warmup_ns = 0;
    run_shards_together(cfg, 2, "d");
    const char *paths[] = {path_of("d0.json"), path_of("d1.json")};
    struct merge_set set;
    char err[512];
    assert_int_equal(merge_set_build(&set, paths, 2, false, err, sizeof err), 0);
    struct merge_summary m;
    if (merge_summary_build(&m, &set, NULL, 0, err, sizeof err))
        fail_msg("merge_summary_build: %s", err);
    const struct run_counts *c = &m.res.all.counts;
    assert_true(c->outcome[OUTCOME_TRANSPORT] > 0);
    assert_int_equal(c->transport_cause[RUN_TC_REFUSED], c->outcome[OUTCOME_TRANSPORT]);
    assert_int_equal(m.res.targets[0].counts.transport_cause[RUN_TC_REFUSED], c->outcome[OUTCOME_TRANSPORT]);
    assert_true(m.res.accounting_ok);
    assert_true(m.res.no_ok);
    assert_true(m.res.failed_share == 1.0);
    assert_true(m.res.warnings.n > 0);
    bool failed = false;
    for (size_t i = 0; i < m.res.warnings.n; i++)
        failed |= strncmp(m.res.warnings.items[i], "FAILED: not one request succeeded (transport", 44) == 0;
    assert_true(failed);
    /* a cause taken away breaks the accounting: the merge checks it */
    m.res.all.counts.transport_cause[RUN_TC_REFUSED]--;
    assert_false(record_counts_hold(&m.res.all.counts));
    merge_summary_release(&m);
    merge_set_release(&set);
}

/* The streamed merge writes what knee hlog merge writes, line for line. */
static void test_hlog_stream_equals_merge(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 11);
    const char *names[3] = {path_of("h0.hlog"), path_of("h1.hlog"), path_of("h2.hlog")};
    for (int k = 0; k < 3; k++) {
        FILE *f = fopen(names[k], "w");
        struct hlog_writer *w;
        assert_int_equal(hlog_writer_open(&w, f, 1700000000.0 + 0.001 * k, NULL), 0);
        struct hdr h;
        hdr_init(&h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
        for (int s = 0; s < 20; s++)
            for (int t = 0; t < 2; t++) {
                hdr_reset(&h);
                int n = (int)rng_below(&r, 200);
                for (int i = 0; i < n; i++)
                    hdr_record(&h, (int64_t)(rng_exp(&r, 1e6) + 1), 1);
                assert_int_equal(hlog_writer_write(w, t ? "b" : "a", s, 1.0, &h), 0);
            }
        hdr_release(&h);
        assert_int_equal(hlog_writer_close(w), 0);
        fclose(f);
    }
    char err[512];
    FILE *a = fopen(path_of("ref.hlog"), "w");
    assert_int_equal(hlog_merge(a, names, 3, 1.0, err, sizeof err), 0);
    fclose(a);
    FILE *b = fopen(path_of("stream.hlog"), "w");
    assert_int_equal(merge_hlog_files(names, 3, 1.0, b, NULL, NULL, NULL, err, sizeof err), 0);
    fclose(b);
    FILE *fa = fopen(path_of("ref.hlog"), "r"), *fb = fopen(path_of("stream.hlog"), "r");
    char la[65536], lb[65536];
    size_t line = 0;
    for (;;) {
        char *x = fgets(la, sizeof la, fa), *y = fgets(lb, sizeof lb, fb);
        line++;
        if (!x || !y) {
            assert_true(!x && !y);
            break;
        }
        if (strcmp(la, lb) != 0)
            fail_msg("line %zu differs:\n%s%s", line, la, lb);
    }
    assert_true(line > 40);
    fclose(fa);
    fclose(fb);
    /* an input out of time order is refused with the file and line */
    FILE *f = fopen(path_of("back.hlog"), "w");
    struct hlog_writer *w;
    struct hdr h;
    hdr_init(&h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS);
    hdr_record(&h, 1000, 1);
    assert_int_equal(hlog_writer_open(&w, f, 1700000000.0, NULL), 0);
    hlog_writer_write(w, "a", 5, 1, &h);
    hlog_writer_write(w, "a", 2, 1, &h);
    hlog_writer_close(w);
    fclose(f);
    hdr_release(&h);
    const char *back[] = {path_of("back.hlog")};
    assert_int_equal(merge_hlog_files(back, 1, 1.0, NULL, NULL, NULL, NULL, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "not in time order"));
}

/* The whole file as a string (the caller frees it). */
static char *slurp(FILE *f)
{
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *buf = calloc((size_t)n + 1, 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    return buf;
}

static void expect_hlog_refused(const char *const *paths, size_t n, const char *needle)
{
    struct merge_hlog_input in;
    char err[512] = "";
    int r = merge_hlog_inputs(paths, n, NULL, &in, err, sizeof err);
    if (r >= 0 || !strstr(err, needle))
        fail_msg("expected a refusal with '%s', got %d: %s", needle, r, err);
}

/* knee stats over every shard's hlog: the set checked as knee merge checks it, merged into the
 * log knee merge --hlog writes, byte for byte; anything else left to the command (0) or
 * refused by name. */
static void test_merge_hlog_inputs(void **state)
{
    (void)state;
    /* x0..x2 (shards of 3) and merged.hlog from test_merge_exact, y0 (a shard of another plan)
     * from test_merge_refusals, h0..h2 (not shards') from test_hlog_stream_equals_merge */
    const char *hl[] = {path_of("x1.hlog"), path_of("x2.hlog"), path_of("x0.hlog")};
    struct merge_hlog_input in;
    char err[512];
    FILE *f = tmpfile();
    assert_non_null(f);
    if (merge_hlog_inputs(hl, 3, f, &in, err, sizeof err) != 1)
        fail_msg("merge_hlog_inputs: %s", err);
    assert_non_null(strstr(in.label, "inputs: all 3 shards of one run (plan "));
    assert_string_equal(in.name, "x (3 shards merged)");
    FILE *ref = fopen(path_of("merged.hlog"), "r");
    assert_non_null(ref);
    char *a = slurp(f), *b = slurp(ref);
    assert_true(strlen(a) > 100);
    assert_string_equal(a, b);
    free(a);
    free(b);
    fclose(ref);
    fclose(f);
    /* checks alone */
    memset(&in, 0, sizeof in);
    assert_int_equal(merge_hlog_inputs(hl, 3, NULL, &in, err, sizeof err), 1);
    assert_string_equal(in.name, "x (3 shards merged)");
    /* not for this function: one file, or no shard's output among them */
    assert_int_equal(merge_hlog_inputs(hl, 1, NULL, &in, err, sizeof err), 0);
    assert_string_equal(in.label, "");
    const char *plain[] = {path_of("h0.hlog"), path_of("h1.hlog"), path_of("ref.hlog")};
    assert_int_equal(merge_hlog_inputs(plain, 3, NULL, &in, err, sizeof err), 0);
    /* refused */
    const char *dup[] = {path_of("x0.hlog"), path_of("x1.hlog"), path_of("x2.hlog"), path_of("x1.hlog")};
    expect_hlog_refused(dup, 4, "two hlogs");
    const char *missing[] = {path_of("x0.hlog"), path_of("x1.hlog")};
    expect_hlog_refused(missing, 2, "missing shards 2 of 3");
    const char *foreign[] = {path_of("x0.hlog"), path_of("x1.hlog"), path_of("x2.hlog"), path_of("y0.hlog")};
    expect_hlog_refused(foreign, 4, "not the shards of one plan");
    const char *mixed[] = {path_of("x0.hlog"), path_of("x1.hlog"), path_of("x2.hlog"), path_of("h0.hlog")};
    expect_hlog_refused(mixed, 4, "h0.hlog: not a shard's output");
    const char *merged[] = {path_of("x0.hlog"), path_of("x1.hlog"), path_of("x2.hlog"), path_of("merged.hlog")};
    expect_hlog_refused(merged, 4, "merged.hlog: already a merge");
    const char *kinds[] = {path_of("x0.hlog"), path_of("x1.hlog"), path_of("x2.hlog"), path_of("x1.json")};
    expect_hlog_refused(kinds, 4, "x1.json: a JSON, not an hlog");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_exact),
        cmocka_unit_test(test_merge_refusals),
        cmocka_unit_test(test_merge_failed_shard),
        cmocka_unit_test(test_merge_unaligned),
        cmocka_unit_test(test_merge_equals_one_process),
        cmocka_unit_test(test_merge_transport),
        cmocka_unit_test(test_hlog_stream_equals_merge),
        cmocka_unit_test(test_merge_hlog_inputs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
