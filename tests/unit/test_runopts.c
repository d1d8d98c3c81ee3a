/* Unit tests for src/cli/runopts: the load options' rows parsed by a command's table and the
 * builder to struct run_config — defaults, targets and per-target flags, the open/closed
 * choice, checks left to run_validate (still exit 2, naming the flag), and a command that
 * takes only some of the rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/opt.h"
#include "cli/run_setup.h"
#include "cli/runopts.h"
#include "core/clock.h"

#include <stdio.h>
#include <string.h>

struct cmd {
    struct runopts o;
    struct opt rows[RUNOPT_COUNT];
    struct cmd_spec spec;
    struct strlist urls;
    struct runopts_config rc;
};

/* Parse argv with the rows `ids` (all of them when n is 0), then build. Returns the builder's
 * code (0 or 2), or 10 + opt_parse's code when parsing failed. */
static int build(struct cmd *c, const enum runopt_id *ids, size_t n, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    runopts_init(&c->o);
    size_t k = 0;
    for (size_t i = 0; i < (n ? n : (size_t)RUNOPT_COUNT); i++)
        c->rows[k++] = runopts_row(&c->o, n ? ids[i] : (enum runopt_id)i);
    c->spec = (struct cmd_spec){.name = "test",
                                .usage = "[options] URL...",
                                .summary = "test",
                                .opts = c->rows,
                                .nopts = k,
                                .min_args = 0,
                                .max_args = SIZE_MAX};
    int r = opt_parse(&c->spec, argc, argv, &c->urls);
    if (r)
        return 10 + r;
    return runopts_build(&c->o, &c->spec, &c->urls, &c->rc);
}

static void release(struct cmd *c)
{
    runopts_config_release(&c->rc);
    strlist_release(&c->urls);
    runopts_release(&c->o);
}

static void test_rows_complete(void **state)
{
    (void)state;
    struct runopts o;
    runopts_init(&o);
    for (int id = 0; id < RUNOPT_COUNT; id++) {
        struct opt r = runopts_row(&o, (enum runopt_id)id);
        assert_non_null(r.name);
        assert_non_null(r.help);
        assert_non_null(r.dst);
        assert_false(r.seen);
    }
    assert_null(runopts_row(&o, RUNOPT_COUNT).name);
    runopts_release(&o);
}

static void test_defaults_closed_loop(void **state)
{
    (void)state;
    struct cmd c;
    char *argv[] = {"test", "http://127.0.0.1:1/x", NULL};
    assert_int_equal(build(&c, NULL, 0, 2, argv), 0);
    const struct run_config *cfg = &c.rc.cfg;
    assert_false(cfg->plan.open_loop);
    assert_int_equal(cfg->plan.ntargets, 1);
    assert_string_equal(cfg->plan.targets[0].name, "127.0.0.1:1");
    assert_int_equal(cfg->plan.duration_ns, PLAN_DEFAULT_DURATION_NS);
    assert_int_equal(cfg->timeout_ns, RUN_DEFAULT_TIMEOUT_NS);
    assert_int_equal(cfg->drain_ns, cfg->timeout_ns);
    assert_int_equal(cfg->plan.connections, 0); /* the engine's default */
    assert_int_equal(cfg->plan.seed, 1);
    assert_true(cfg->keepalive);
    assert_null(cfg->out_path);
    assert_int_equal(c.rc.nthr, 0);
    release(&c);
}

static void test_targets_and_per_target_flags(void **state)
{
    (void)state;
    struct cmd c;
    char *argv[] = {"test",
                    "-R",
                    "500",
                    "-d",
                    "2s",
                    "--target",
                    "a=http://127.0.0.1:1/@100",
                    "--target",
                    "b=http://127.0.0.1:1/x",
                    "--mix",
                    "b=3",
                    "-m",
                    "b=POST",
                    "-H",
                    "X-A: 1",
                    "-b",
                    "b=hello",
                    "--reject",
                    "503:Q",
                    "--threshold",
                    "b.p99<1s",
                    "--drain",
                    "0",
                    "-o",
                    "log.csv",
                    NULL};
    assert_int_equal(build(&c, NULL, 0, 25, argv), 0);
    const struct run_config *cfg = &c.rc.cfg;
    assert_true(cfg->plan.open_loop);
    assert_true(cfg->plan.rate == 500);
    assert_int_equal(cfg->plan.duration_ns, 2 * NS_PER_S);
    assert_int_equal(cfg->drain_ns, 0); /* given: 0 means no drain */
    assert_string_equal(cfg->out_path, "log.csv");
    assert_int_equal(cfg->plan.ntargets, 2);
    const struct plan_target *a = &cfg->plan.targets[0], *b = &cfg->plan.targets[1];
    assert_string_equal(a->url, "http://127.0.0.1:1/");
    assert_true(a->rate == 100);
    assert_null(a->method);
    assert_null(a->body);
    assert_true(b->weight == 3);
    assert_string_equal(b->method, "POST");
    assert_int_equal(b->body_len, 5);
    assert_memory_equal(b->body, "hello", 5);
    assert_int_equal(a->nheaders, 1); /* no T= prefix: every target */
    assert_int_equal(b->nheaders, 1);
    assert_string_equal(b->headers[0], "X-A: 1");
    assert_int_equal(cfg->nrejects, 1);
    assert_int_equal(cfg->rejects[0].status, 503);
    assert_string_equal(cfg->rejects[0].body, "Q");
    assert_int_equal(c.rc.nthr, 1);
    assert_int_equal(c.rc.thr[0].target, 1);
    release(&c);
}

/* Semantic checks are run_validate's, syntax and "given as 0" the builder's: both exit 2. */
static void test_bad_input_is_2(void **state)
{
    (void)state;
    char *cases[][6] = {
        {"test", "-c", "0", "http://127.0.0.1:1/", NULL},                 /* 0 = default in the config */
        {"test", "-R", "10", "--think", "1s", "http://127.0.0.1:1/"},     /* run_validate */
        {"test", "--ramp", "0:0", "http://127.0.0.1:1/", NULL},           /* run_validate */
        {"test", "--ramp", "x", "http://127.0.0.1:1/", NULL},             /* syntax */
        {"test", "-t", "99999999999", "http://127.0.0.1:1/", NULL},       /* saturated, then refused */
        {"test", "--threshold", "p99<soon", "http://127.0.0.1:1/", NULL}, /* thresholds */
        {"test", NULL},                                                   /* no target */
        {"test", "-t", "2", "-R", "1e8", "http://127.0.0.1:1/"},          /* above 1M/s per thread */
        {"test", "-t", "2", "-R", "1e12", "http://127.0.0.1:1/"},
        {"test", "-t", "2", "-R", "1e20", "http://127.0.0.1:1/"},
        {"test", "-t", "2", "-R", "1.79e308", "http://127.0.0.1:1/"},
        {"test", "-R", "1e-300", "-n", "5", "http://127.0.0.1:1/"},                 /* a plan that never ends */
        {"test", "--threshold", "all.service.p99<1s", "http://127.0.0.1:1/", NULL}, /* groups: latency only */
        {"test", "--http3", "http://127.0.0.1:1/", NULL},                           /* QUIC is https only */
        {"test", "--http3", "--http2", "https://127.0.0.1:1/", NULL},               /* one HTTP version */
        {"test", "--http3", "--http1.1", "https://127.0.0.1:1/", NULL},
        {"test", "--http3", "--h2c", "https://127.0.0.1:1/", "http://127.0.0.1:1/"},
        {"test", "--http3", "--ciphers", "AES128", "https://127.0.0.1:1/", NULL}, /* QUIC's own suites */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int argc = 0;
        while (argc < 6 && cases[i][argc])
            argc++;
        struct cmd c;
        int r = build(&c, NULL, 0, argc, cases[i]);
        if (r != 2)
            fail_msg("case %zu: %d, not 2", i, r);
        release(&c);
    }
}

/* --http3 on https:// targets: the config says so, --streams applies (requests per QUIC
 * connection), --cacert and --insecure as over TCP. */
static void test_http3(void **state)
{
    (void)state;
    char *argv[] = {"test", "--http3", "--streams", "8", "--insecure", "-R", "10", "https://127.0.0.1:1/"};
    struct cmd c;
    assert_int_equal(build(&c, NULL, 0, 8, argv), 0);
    assert_true(c.rc.cfg.http3);
    assert_int_equal(c.rc.cfg.streams, 8);
    assert_true(c.rc.cfg.tls_insecure);
    release(&c);
    char *plain[] = {"test", "-R", "10", "https://127.0.0.1:1/"};
    assert_int_equal(build(&c, NULL, 0, 4, plain), 0);
    assert_false(c.rc.cfg.http3);
    assert_null(c.rc.cfg.qlog_dir);
    release(&c);
    char *qlog[] = {"test", "--http3", "--qlog", "/tmp", "-n", "1", "https://127.0.0.1:1/"};
    assert_int_equal(build(&c, NULL, 0, 7, qlog), 0);
    assert_string_equal(c.rc.cfg.qlog_dir, "/tmp"); /* whether DIR is writable: run_validate (exit 2) */
    release(&c);
}

/* A stale connection's request is sent again by default when its method is idempotent (as
 * curl and browsers do), for every method with --retry-stale, never with --no-retry-stale; both
 * at once are refused. --header-secret is a header like -H, in the order given. */
static void test_retry_stale_and_secret_headers(void **state)
{
    (void)state;
    struct cmd c;
    char *def[] = {"test", "http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, NULL, 0, 2, def), 0);
    assert_true(c.rc.cfg.retry_stale);
    assert_false(c.rc.cfg.retry_stale_all);
    release(&c);
    char *all[] = {"test", "--retry-stale", "http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, NULL, 0, 3, all), 0);
    assert_true(c.rc.cfg.retry_stale && c.rc.cfg.retry_stale_all);
    release(&c);
    char *off[] = {"test", "--no-retry-stale", "http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, NULL, 0, 3, off), 0);
    assert_false(c.rc.cfg.retry_stale || c.rc.cfg.retry_stale_all);
    release(&c);
    char *both[] = {"test", "--retry-stale", "--no-retry-stale", "http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, NULL, 0, 4, both), 2);
    release(&c);

    char *hdr[] = {"test", "-H", "A: 1", "--header-secret", "X-Key: k", "-H", "B: 2", "http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, NULL, 0, 8, hdr), 0);
    const struct plan_target *t = &c.rc.cfg.plan.targets[0];
    assert_int_equal(t->nheaders, 3);
    assert_string_equal(t->headers[0], "A: 1");
    assert_string_equal(t->headers[1], "X-Key: k");
    assert_string_equal(t->headers[2], "B: 2");
    release(&c);
}

/* --keep-going: a command with the row ends a run whose every request was refused after
 * RUN_DEFAULT_REFUSED_END_NS unless it is given; one without the row (knee capacity) never. */
static void test_keep_going(void **state)
{
    (void)state;
    struct cmd c;
    char *def[] = {"test", "http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, NULL, 0, 2, def), 0);
    assert_true(c.rc.cfg.refused_end_ns == RUN_DEFAULT_REFUSED_END_NS);
    release(&c);
    char *kg[] = {"test", "--keep-going", "http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, NULL, 0, 3, kg), 0);
    assert_true(c.rc.cfg.refused_end_ns == 0);
    release(&c);
    static const enum runopt_id ids[] = {RUNOPT_DURATION, RUNOPT_TARGET};
    char *sub[] = {"test", "--target", "a=http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, ids, 2, 3, sub), 0);
    assert_true(c.rc.cfg.refused_end_ns == 0);
    release(&c);
}

/* A command that takes only some rows (a capacity search sets the rate itself): the missing
 * rows are unknown options there and count as not given. */
static void test_subset_of_rows(void **state)
{
    (void)state;
    static const enum runopt_id ids[] = {RUNOPT_DURATION, RUNOPT_TARGET, RUNOPT_TIMEOUT};
    struct cmd c;
    char *argv[] = {"test", "-d", "3s", "--target", "a=http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, ids, 3, 5, argv), 0);
    assert_false(c.rc.cfg.plan.open_loop);
    assert_int_equal(c.rc.cfg.plan.duration_ns, 3 * NS_PER_S);
    release(&c);
    char *bad[] = {"test", "-R", "5", "http://127.0.0.1:1/", NULL};
    assert_int_equal(build(&c, ids, 3, 4, bad), 12); /* opt_parse: unknown option */
    release(&c);
}

/* --setup and --capture: the names reach the request sources (a placeholder naming one is
 * fine, naming nothing is 2), and each flag needs --setup. */
static void test_setup_flags(void **state)
{
    (void)state;
    struct cmd c;
    char *ok[] = {"t",          "--setup", "POST http://127.0.0.1:9/login", "--setup-body",        "{}", "--capture",
                  "tok=json:a", "-H",      "Authorization: Bearer {{tok}}", "http://127.0.0.1:9/x"};
    assert_int_equal(build(&c, NULL, 0, 10, ok), 0);
    size_t n;
    const char *const *names = cli_setup_names(c.rc.setup, &n);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "tok");
    assert_non_null(c.rc.sources[0]); /* the placeholder made a request source */
    release(&c);
    char *unknown[] = {"t",         "--setup",    "http://127.0.0.1:9/login",
                       "--capture", "tok=status", "http://127.0.0.1:9/{{tk}}"};
    assert_int_equal(build(&c, NULL, 0, 6, unknown), 2);
    release(&c);
    char *alone[] = {"t", "--setup-header", "X: 1", "http://127.0.0.1:9/"};
    assert_int_equal(build(&c, NULL, 0, 4, alone), 2);
    release(&c);
    char *method[] = {"t", "--setup", "P/ST http://127.0.0.1:9/login", "http://127.0.0.1:9/"};
    assert_int_equal(build(&c, NULL, 0, 4, method), 2);
    release(&c);
    char *none[] = {"t", "http://127.0.0.1:9/"};
    assert_int_equal(build(&c, NULL, 0, 2, none), 0);
    assert_null(c.rc.setup);
    assert_null(cli_setup_names(c.rc.setup, &n));
    assert_int_equal(n, 0);
    release(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_complete),
        cmocka_unit_test(test_defaults_closed_loop),
        cmocka_unit_test(test_targets_and_per_target_flags),
        cmocka_unit_test(test_bad_input_is_2),
        cmocka_unit_test(test_http3),
        cmocka_unit_test(test_subset_of_rows),
        cmocka_unit_test(test_retry_stale_and_secret_headers),
        cmocka_unit_test(test_setup_flags),
        cmocka_unit_test(test_keep_going),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
