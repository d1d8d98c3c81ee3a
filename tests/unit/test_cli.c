/* Unit tests for src/cli: unit parsing, the option tables and the top-level dispatch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/commands.h"
#include "cli/opt.h"
#include "core/units.h"
#include "core/clock.h"
#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void test_durations(void **state)
{
    (void)state;
    uint64_t ns;
    assert_int_equal(units_parse_duration_ns("250ms", NS_PER_S, &ns), 0);
    assert_int_equal(ns, 250 * NS_PER_MS);
    assert_int_equal(units_parse_duration_ns("10", NS_PER_S, &ns), 0);
    assert_int_equal(ns, 10 * NS_PER_S);
    assert_int_equal(units_parse_duration_ns("40", NS_PER_MS, &ns), 0);
    assert_int_equal(ns, 40 * NS_PER_MS);
    assert_int_equal(units_parse_duration_ns("1.5m", NS_PER_S, &ns), 0);
    assert_int_equal(ns, 90 * NS_PER_S);
    assert_int_equal(units_parse_duration_ns("100us", NS_PER_S, &ns), 0);
    assert_int_equal(ns, 100000);
    assert_int_equal(units_parse_duration_ns("2h", NS_PER_S, &ns), 0);
    assert_int_equal(ns, 7200 * NS_PER_S);
    assert_int_equal(units_parse_duration_ns("10x", NS_PER_S, &ns), KNEE_EFORMAT);
    assert_int_equal(units_parse_duration_ns("", NS_PER_S, &ns), KNEE_EFORMAT);
    assert_int_equal(units_parse_duration_ns("-1s", NS_PER_S, &ns), KNEE_ENEG);
    assert_int_equal(units_parse_duration_ns("nan", NS_PER_S, &ns), KNEE_EFORMAT);
    assert_int_equal(units_parse_duration_ns("0x10", NS_PER_S, &ns), KNEE_EFORMAT);
    char buf[32];
    assert_string_equal(units_fmt_duration(812, buf, sizeof buf), "812ns");
    assert_string_equal(units_fmt_duration(4560000, buf, sizeof buf), "4.56ms");
    assert_string_equal(units_fmt_duration(123 * NS_PER_S, buf, sizeof buf), "2m03s");
}

static void test_rates_counts_shares(void **state)
{
    (void)state;
    double r;
    assert_int_equal(units_parse_rate("5000", &r), 0);
    assert_true(r == 5000);
    assert_int_equal(units_parse_rate("10k", &r), 0);
    assert_true(r == 10000);
    assert_int_equal(units_parse_rate("1.5M", &r), 0);
    assert_true(r == 1.5e6);
    assert_int_equal(units_parse_rate("120/m", &r), 0);
    assert_true(r == 2);
    assert_int_equal(units_parse_rate("100/s", &r), 0);
    assert_true(r == 100);
    assert_int_equal(units_parse_rate("0", &r), KNEE_ERANGE);
    assert_int_equal(units_parse_rate("fast", &r), KNEE_EFORMAT);
    uint64_t c;
    assert_int_equal(units_parse_count("10k", &c), 0);
    assert_int_equal(c, 10000);
    assert_int_equal(units_parse_count("1.5k", &c), 0);
    assert_int_equal(c, 1500);
    assert_int_equal(units_parse_count("1.5", &c), KNEE_EFORMAT);
    double s;
    assert_int_equal(units_parse_share("1%", &s), 0);
    assert_true(fabs(s - 0.01) < 1e-15);
    assert_int_equal(units_parse_share("0.25", &s), 0);
    assert_true(s == 0.25);
    assert_int_equal(units_parse_share("120%", &s), KNEE_ERANGE);
}

static int parse_with(int argc, char **argv, uint64_t *dur, double *rate, bool *flag, struct strlist *hdrs,
                      struct strlist *args)
{
    struct opt opts[] = {
        {.name = "duration", .short_name = 'd', .kind = OPT_DURATION, .dst = dur, .metavar = "D", .help = "how long"},
        {.name = "rate", .short_name = 'r', .kind = OPT_RATE, .dst = rate, .metavar = "R", .help = "rate"},
        {.name = "quiet", .short_name = 'q', .kind = OPT_FLAG, .dst = flag, .help = "quiet"},
        {.name = "header", .short_name = 'H', .kind = OPT_LIST, .dst = hdrs, .metavar = "H", .help = "header"},
    };
    struct cmd_spec spec = {.name = "test",
                            .usage = "[options] URL",
                            .summary = "a test",
                            .opts = opts,
                            .nopts = OPT_COUNT_OF(opts),
                            .min_args = 1,
                            .max_args = 2};
    return opt_parse(&spec, argc, argv, args);
}

static void test_opt_parse(void **state)
{
    (void)state;
    uint64_t dur = 0;
    double rate = 0;
    bool flag = false;
    struct strlist hdrs = {0}, args = {0};
    char *argv[] = {"test", "--duration=2s", "-r", "10k", "-q", "-H", "A: 1", "--header", "B: 2", "http://x/", NULL};
    assert_int_equal(parse_with(10, argv, &dur, &rate, &flag, &hdrs, &args), 0);
    assert_int_equal(dur, 2 * NS_PER_S);
    assert_true(rate == 10000);
    assert_true(flag);
    assert_int_equal(hdrs.n, 2);
    assert_string_equal(hdrs.v[1], "B: 2");
    assert_int_equal(args.n, 1);
    assert_string_equal(args.v[0], "http://x/");
    strlist_release(&hdrs);
    strlist_release(&args);

    char *bad_flag[] = {"test", "--nope", "u", NULL};
    assert_int_equal(parse_with(3, bad_flag, &dur, &rate, &flag, &hdrs, &args), 2);
    strlist_release(&args);
    char *bad_value[] = {"test", "--rate", "lots", "u", NULL};
    assert_int_equal(parse_with(4, bad_value, &dur, &rate, &flag, &hdrs, &args), 2);
    strlist_release(&args);
    char *missing_value[] = {"test", "u", "--rate", NULL};
    assert_int_equal(parse_with(3, missing_value, &dur, &rate, &flag, &hdrs, &args), 2);
    strlist_release(&args);
    char *no_args[] = {"test", NULL};
    assert_int_equal(parse_with(1, no_args, &dur, &rate, &flag, &hdrs, &args), 2);
    strlist_release(&args);
    char *too_many[] = {"test", "a", "b", "c", NULL};
    assert_int_equal(parse_with(4, too_many, &dur, &rate, &flag, &hdrs, &args), 2);
    assert_int_equal(args.n, 0); /* a, b and c were collected, then released on the error ... */
    assert_null(args.v);
    strlist_release(&args);
    char *flag_value[] = {"test", "--quiet=yes", "u", NULL};
    assert_int_equal(parse_with(3, flag_value, &dur, &rate, &flag, &hdrs, &args), 2);
    strlist_release(&args);
    char *help[] = {"test", "--help", NULL};
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    assert_int_equal(parse_with(2, help, &dur, &rate, &flag, &hdrs, &args), 1);
    char *help_after_arg[] = {"test", "u", "--help", NULL};
    assert_int_equal(parse_with(3, help_after_arg, &dur, &rate, &flag, &hdrs, &args), 1);
    fclose(stdout);
    stdout = saved;
    assert_int_equal(args.n, 0); /* ... and after --help */
    assert_null(args.v);
    strlist_release(&args);
}

static void test_dispatch(void **state)
{
    (void)state;
    FILE *saved_out = stdout, *saved_err = stderr;
    stdout = fopen("/dev/null", "w");
    stderr = fopen("/dev/null", "w");
    char *version[] = {"knee", "--version", NULL};
    int r_version = knee_main(2, version);
    char *help[] = {"knee", "--help", NULL};
    int r_help = knee_main(2, help);
    char *unknown[] = {"knee", "frobnicate", NULL};
    int r_unknown = knee_main(2, unknown);
    char *badopt[] = {"knee", "--frobnicate", NULL};
    int r_badopt = knee_main(2, badopt);
    char *none[] = {"knee", NULL};
    int r_none = knee_main(1, none);
    fclose(stdout);
    fclose(stderr);
    stdout = saved_out;
    stderr = saved_err;
    assert_int_equal(r_version, 0);
    assert_int_equal(r_help, 0);
    assert_int_equal(r_unknown, 2);
    assert_int_equal(r_badopt, 2);
    assert_int_equal(r_none, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_rates_counts_shares),
        cmocka_unit_test(test_opt_parse),
        cmocka_unit_test(test_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
