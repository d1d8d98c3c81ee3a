/* Unit tests for src/cli/shard_flags: --shard I/N and auto (Slurm, Kubernetes Indexed Jobs with
 * --shards or KNEE_SHARDS, Open MPI, PMI), --start-at (Unix seconds, RFC 3339 with offsets and
 * fractions, +D after $KNEE_START_BASE, +D@FILE: processes started at different moments agree,
 * the first one writing the base), and the refusals (bad syntax, index >= count, a plan wholly in
 * the past, a day ahead). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/shard_flags.h"
#include "core/clock.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static struct cmd_spec spec = {.name = "run"};

static void clear_env(void)
{
    const char *vars[] = {"SLURM_PROCID",
                          "SLURM_NTASKS",
                          "JOB_COMPLETION_INDEX",
                          "KNEE_SHARDS",
                          "OMPI_COMM_WORLD_RANK",
                          "OMPI_COMM_WORLD_SIZE",
                          "PMI_RANK",
                          "PMI_SIZE",
                          "KNEE_START_BASE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

static void test_shard_flag(void **state)
{
    (void)state;
    clear_env();
    struct run_config c = {0};
    assert_int_equal(cli_shard_args(&spec, NULL, 0, &c), 0);
    assert_int_equal(c.plan.shard.count, 0);
    assert_int_equal(cli_shard_args(&spec, "2/4", 0, &c), 0);
    assert_int_equal(c.plan.shard.index, 2);
    assert_int_equal(c.plan.shard.count, 4);
    assert_string_equal(c.plan.shard.source, "--shard");
    const char *bad[] = {"4/4", "1", "a/4", "1/", "/4", "1/0", "-1/4", "1/4x", "1/99999999999", "1/65537"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct run_config d = {0};
        if (cli_shard_args(&spec, bad[i], 0, &d) != 2)
            fail_msg("--shard %s accepted", bad[i]);
    }
    struct run_config d = {0};
    assert_int_equal(cli_shard_args(&spec, "1/4", 5, &d), 2);  /* two counts */
    assert_int_equal(cli_shard_args(&spec, "auto", 0, &d), 2); /* no scheduler */
}

static void test_shard_auto(void **state)
{
    (void)state;
    clear_env();
    struct run_config c = {0};
    setenv("SLURM_PROCID", "3", 1);
    setenv("SLURM_NTASKS", "8", 1);
    assert_int_equal(cli_shard_args(&spec, "auto", 0, &c), 0);
    assert_int_equal(c.plan.shard.index, 3);
    assert_int_equal(c.plan.shard.count, 8);
    assert_string_equal(c.plan.shard.source, "SLURM_PROCID/SLURM_NTASKS");
    assert_int_equal(cli_shard_args(&spec, "auto", 7, &c), 2); /* --shards disagrees with Slurm */
    clear_env();
    /* Kubernetes: the index alone, the count from --shards or KNEE_SHARDS */
    setenv("JOB_COMPLETION_INDEX", "5", 1);
    memset(&c, 0, sizeof c);
    assert_int_equal(cli_shard_args(&spec, "auto", 0, &c), 2);
    assert_int_equal(cli_shard_args(&spec, NULL, 6, &c), 0);
    assert_int_equal(c.plan.shard.index, 5);
    assert_int_equal(c.plan.shard.count, 6);
    assert_string_equal(c.plan.shard.source, "JOB_COMPLETION_INDEX/--shards");
    setenv("KNEE_SHARDS", "10", 1);
    assert_int_equal(cli_shard_args(&spec, "auto", 0, &c), 0);
    assert_int_equal(c.plan.shard.count, 10);
    assert_string_equal(c.plan.shard.source, "JOB_COMPLETION_INDEX/KNEE_SHARDS");
    setenv("KNEE_SHARDS", "5", 1); /* index 5 of 5 */
    assert_int_equal(cli_shard_args(&spec, "auto", 0, &c), 2);
    clear_env();
    setenv("OMPI_COMM_WORLD_RANK", "0", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    assert_int_equal(cli_shard_args(&spec, "auto", 0, &c), 0);
    assert_int_equal(c.plan.shard.count, 2);
    clear_env();
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_SIZE", "3", 1);
    assert_int_equal(cli_shard_args(&spec, "auto", 0, &c), 0);
    assert_int_equal(c.plan.shard.index, 1);
    assert_string_equal(c.plan.shard.source, "PMI_RANK/PMI_SIZE");
    setenv("PMI_SIZE", "x", 1);
    assert_int_equal(cli_shard_args(&spec, "auto", 0, &c), 2);
    clear_env();
}

static void test_instants(void **state)
{
    (void)state;
    uint64_t t;
    assert_int_equal(cli_instant_parse("1764507600", &t), 0);
    assert_int_equal(t, 1764507600ULL * NS_PER_S);
    assert_int_equal(cli_instant_parse(" 1764507600.25\n", &t), 0);
    assert_int_equal(t, 1764507600250000000ULL);
    assert_int_equal(cli_instant_parse("2025-11-30T13:00:00Z", &t), 0);
    assert_int_equal(t, 1764507600ULL * NS_PER_S);
    assert_int_equal(cli_instant_parse("2025-11-30t14:00:00.5+01:00", &t), 0);
    assert_int_equal(t, 1764507600500000000ULL);
    assert_int_equal(cli_instant_parse("2025-11-30 08:30:00-04:30", &t), 0);
    assert_int_equal(t, 1764507600ULL * NS_PER_S);
    assert_int_equal(cli_instant_parse("1970-01-01T00:00:00.000000001Z", &t), 0);
    assert_int_equal(t, 1);
    const char *bad[] = {"",
                         "x",
                         "1.",
                         "-5",
                         "2025-11-30T13:00:00",
                         "2025-02-30T13:00:00Z",
                         "2025-11-30T25:00:00Z",
                         "2025-11-30T13:00:00+0100",
                         "1969-12-31T23:59:59Z",
                         "2025-11-30T13:00:00Zjunk",
                         "1e9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (cli_instant_parse(bad[i], &t) == 0)
            fail_msg("instant '%s' accepted", bad[i]);
}

static void test_start_at(void **state)
{
    (void)state;
    clear_env();
    char err[512];
    uint64_t t, now = 1764507600ULL * NS_PER_S;
    assert_int_equal(cli_start_at_parse("1764507610", now, &t, err, sizeof err), 0);
    assert_int_equal(t, now + 10 * NS_PER_S);
    assert_int_equal(cli_start_at_parse("+5s", now, &t, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "KNEE_START_BASE"));
    setenv("KNEE_START_BASE", "2025-11-30T13:00:00Z", 1);
    assert_int_equal(cli_start_at_parse("+5s", now + 123, &t, err, sizeof err), 0);
    assert_int_equal(t, now + 5 * NS_PER_S);
    assert_int_equal(cli_start_at_parse("+250ms", now, &t, err, sizeof err), 0);
    assert_int_equal(t, now + 250 * NS_PER_MS);
    setenv("KNEE_START_BASE", "soon", 1);
    assert_int_equal(cli_start_at_parse("+5s", now, &t, err, sizeof err), KNEE_EINVAL);
    clear_env();
    assert_int_equal(cli_start_at_parse("+", now, &t, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(cli_start_at_parse("+5x", now, &t, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(cli_start_at_parse("+5s@", now, &t, err, sizeof err), KNEE_EINVAL);
    assert_int_equal(cli_start_at_parse("tomorrow", now, &t, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "RFC 3339"));
}

/* +D@FILE: the first process writes the base, all agree; 16 processes racing for it. */
static void test_start_at_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/knee_test_shard_flags_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[256], err[512];
    snprintf(file, sizeof file, "%s/start", dir);
    uint64_t t1, t2, now = clock_wall_ns();
    char arg[300];
    snprintf(arg, sizeof arg, "+10s@%s", file);
    assert_int_equal(cli_start_at_parse(arg, now, &t1, err, sizeof err), 0);
    assert_int_equal(t1, now + 10 * NS_PER_S);
    /* a later process, 3 s later, agrees on the instant */
    assert_int_equal(cli_start_at_parse(arg, now + 3 * NS_PER_S, &t2, err, sizeof err), 0);
    assert_int_equal(t2, t1);
    unlink(file);
    /* the race: every child reports its instant through a pipe */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    enum { KIDS = 16 };
    for (int k = 0; k < KIDS; k++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            uint64_t t = 0;
            char e[256];
            int r = cli_start_at_parse(arg, clock_wall_ns() + (uint64_t)k, &t, e, sizeof e);
            if (r)
                t = 0;
            ssize_t w = write(fds[1], &t, sizeof t);
            _exit(w == (ssize_t)sizeof t ? 0 : 1);
        }
    }
    close(fds[1]);
    uint64_t first = 0;
    for (int k = 0; k < KIDS; k++) {
        uint64_t t;
        assert_int_equal(read(fds[0], &t, sizeof t), (ssize_t)sizeof t);
        assert_true(t != 0);
        if (k == 0)
            first = t;
        assert_true(t == first);
    }
    close(fds[0]);
    for (int k = 0; k < KIDS; k++)
        wait(NULL);
    /* no temporary files left behind */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
    /* a file without an instant */
    FILE *f = fopen(file, "w");
    fputs("hello\n", f);
    fclose(f);
    assert_int_equal(cli_start_at_parse(arg, now, &t1, err, sizeof err), KNEE_EINVAL);
    assert_non_null(strstr(err, "does not hold an instant"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_start_at_against_plan(void **state)
{
    (void)state;
    char arg[64];
    uint64_t now = clock_wall_ns();
    struct run_config c = {.plan.duration_ns = 10 * NS_PER_S};
    snprintf(arg, sizeof arg, "%llu", (unsigned long long)(now / NS_PER_S + 5));
    assert_int_equal(cli_start_at_args(&spec, arg, &c), 0);
    assert_true(c.plan.shard.start_at_unix_ns > now);
    /* late, but within the plan: run it (the lag will say how late) */
    snprintf(arg, sizeof arg, "%llu", (unsigned long long)(now / NS_PER_S - 3));
    assert_int_equal(cli_start_at_args(&spec, arg, &c), 0);
    /* the whole plan in the past, or more than a day ahead */
    snprintf(arg, sizeof arg, "%llu", (unsigned long long)(now / NS_PER_S - 30));
    assert_int_equal(cli_start_at_args(&spec, arg, &c), 2);
    snprintf(arg, sizeof arg, "%llu", (unsigned long long)(now / NS_PER_S + 2 * 86400));
    assert_int_equal(cli_start_at_args(&spec, arg, &c), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_flag),    cmocka_unit_test(test_shard_auto),
        cmocka_unit_test(test_instants),      cmocka_unit_test(test_start_at),
        cmocka_unit_test(test_start_at_file), cmocka_unit_test(test_start_at_against_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
