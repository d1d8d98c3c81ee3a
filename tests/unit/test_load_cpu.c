/* The generator's own CPU (run_record.env.gen_cpu): measured from the threads of the run
 * only, so a server in the same process (knee lab's situation) is not in it. A run against
 * the in-process flat server (10 ms of real CPU per request): the generator's CPU is above
 * zero, at most wall × threads counted, below the whole process's, and the server's burnt CPU
 * shows in the process's figure, not the generator's. The JSON carries it and the summary
 * rebuilt from the JSON prints it. Invariants and shares only: never an absolute CPU time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/clock.h"
#include "load/run.h"
#include "runreport/runreport.h"
#include "serve/serve.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_share_rule(void **state)
{
    (void)state;
    struct run_generator_cpu c = {.user_s = 0.02, .sys_s = 0.03, .wall_s = 1.0, .threads = 3};
    assert_true(fabs(record_generator_cpu_share(&c) - 0.05) < 1e-12);
    c.threads = 0; /* not measured */
    assert_true(isnan(record_generator_cpu_share(&c)));
    c.threads = 3;
    c.wall_s = 0;
    assert_true(isnan(record_generator_cpu_share(&c)));
}

static void test_generator_cpu_apart_from_server(void **state)
{
    (void)state;
    struct serve_config sc;
    assert_int_equal(serve_preset("flat", &sc), 0);
    snprintf(sc.listen, sizeof sc.listen, "127.0.0.1:0");
    struct serve_handle *srv = NULL;
    assert_int_equal(serve_start(&sc, &srv), 0);
    char url[96];
    snprintf(url, sizeof url, "http://%s/", serve_address(srv));
    char logpath[] = "/tmp/knee-test-load-cpu-XXXXXX";
    int fd = mkstemp(logpath);
    assert_true(fd >= 0);
    close(fd);

    struct plan_target tc = {.name = "flat", .url = url};
    struct run_config cfg = {.plan.targets = &tc,
                             .plan.ntargets = 1,
                             .plan.open_loop = true,
                             .plan.rate = 50,
                             .plan.duration_ns = 2 * NS_PER_S,
                             .timeout_ns = 5 * NS_PER_S,
                             .drain_ns = 5 * NS_PER_S,
                             .keepalive = true,
                             .threads = 2,
                             .out_path = logpath};
    struct run_record res;
    char err[256];
    assert_int_equal(run_execute(&cfg, &res, err, sizeof err), 0);
    serve_stop(srv, NULL);
    unlink(logpath);

    const struct run_generator_cpu *g = &res.env.gen_cpu;
    double gen = g->user_s + g->sys_s, proc = res.env.cpu_user_s + res.env.cpu_sys_s;
    uint64_t ok = res.all.counts.outcome[OUTCOME_OK] + res.all.warmup_counts.outcome[OUTCOME_OK];
    printf("# %llu ok; generator %.3f s (%.3f user + %.3f sys) in %u threads over %.3f s = %.1f%% of a core; "
           "process %.3f s\n",
           (unsigned long long)ok, gen, g->user_s, g->sys_s, g->threads, g->wall_s, 100 * record_generator_cpu_share(g),
           proc);
    /* two load threads, the log writer, the thread of run_execute */
    assert_int_equal(g->threads, 4);
    assert_true(ok > 50);
    assert_true(g->user_s >= 0 && g->sys_s >= 0);
    assert_true(gen > 0); /* requests were sent: the load threads ran */
    /* wall time: from the threads' start (before t0) to the end, at least the plan's span (the
     * 100th send is planned at 1.98 s; the run ends with its response, so not always at 2 s) */
    assert_true(g->wall_s >= 1.98 && g->wall_s >= res.elapsed_s - 0.01);
    /* no thread can use more than the wall time: at most wall × threads (µs rounding aside) */
    assert_true(gen <= g->wall_s * g->threads + 0.001);
    double share = record_generator_cpu_share(g);
    assert_true(share > 0 && share <= g->threads + 1e-3);
    /* the server burnt ~10 ms of CPU per request in this process: in the process's CPU, not
     * the generator's. Half of it is a tolerance for a machine that stretches wall against
     * CPU time (the burn loop counts thread CPU time, so it is never less). */
    assert_true(proc - gen >= 0.5 * (double)ok * 0.010);
    assert_true(gen < proc);

    /* the JSON holds it, and the summary rebuilt from the JSON prints its line */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    res.verbose = true;
    record_write_json(f, &res, false);
    fclose(f);
    json_error_t je;
    json_t *root = json_loads(buf, 0, &je);
    assert_non_null(root);
    json_t *gj = json_object_get(json_object_get(root, "environment"), "generator_cpu");
    assert_true(json_is_object(gj));
    assert_true(fabs(json_number_value(json_object_get(gj, "core_share")) - share) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(gj, "threads")), 4);
    struct run_record v;
    assert_int_equal(record_read_json(root, &v, err, sizeof err), 0);
    assert_int_equal(v.env.gen_cpu.threads, 4);
    char *text = NULL;
    f = open_memstream(&text, &len);
    runreport_print_summary(f, &v, v.verbose); /* verbose: the full form */
    fclose(f);
    char want[128];
    snprintf(want, sizeof want, "in 4 threads over %.3f s: %.1f%% of one core\n", g->wall_s, 100 * share);
    assert_non_null(strstr(text, "\ngenerator CPU: "));
    assert_non_null(strstr(text, want));
    free(text);
    record_release(&v);
    json_decref(root);
    free(buf);
    record_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share_rule),
        cmocka_unit_test(test_generator_cpu_apart_from_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
