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
#include <stdlib.h>
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

/* Runs call with stderr in memory; returns what it printed (the caller frees it). */
#define STDERR_OF(text, call)                                                                                          \
    do {                                                                                                               \
        FILE *saved_ = stderr;                                                                                         \
        FILE *tmp_ = tmpfile();                                                                                        \
        assert_non_null(tmp_);                                                                                         \
        stderr = tmp_;                                                                                                 \
        call;                                                                                                          \
        stderr = saved_;                                                                                               \
        long n_ = ftell(tmp_);                                                                                         \
        rewind(tmp_);                                                                                                  \
        (text) = calloc((size_t)n_ + 1, 1);                                                                            \
        assert_int_equal(fread((text), 1, (size_t)n_, tmp_), (size_t)n_);                                              \
        fclose(tmp_);                                                                                                  \
    } while (0)

static void test_edit_distance(void **state)
{
    (void)state;
    assert_int_equal(opt_edit_distance("rate", 4, "rate"), 0);
    assert_int_equal(opt_edit_distance("rat", 3, "rate"), 1);            /* a deletion */
    assert_int_equal(opt_edit_distance("raate", 5, "rate"), 1);          /* an insertion */
    assert_int_equal(opt_edit_distance("rote", 4, "rate"), 1);           /* a substitution */
    assert_int_equal(opt_edit_distance("rtae", 4, "rate"), 1);           /* two neighbours swapped */
    assert_int_equal(opt_edit_distance("RATE", 4, "rate"), 0);           /* case does not count */
    assert_int_equal(opt_edit_distance("miss_rate", 9, "miss-rate"), 0); /* nor '_' for '-' */
    assert_int_equal(opt_edit_distance("", 0, "rate"), 4);
    assert_int_equal(opt_edit_distance("rate=5", 4, "rate"), 0); /* only alen bytes of a count */
    assert_int_equal(opt_edit_distance("abc", 3, "xyz"), 3);
    char big[80];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_true(opt_edit_distance(big, strlen(big), "a") == SIZE_MAX);
}

static void test_suggest(void **state)
{
    (void)state;
    static const char *const opts[] = {"rate", "rates", "duration", "ramp", "requests", "seed", NULL};
    assert_string_equal(opt_suggest_word("rat", opts), "rate");     /* prefix of two, nearest one */
    assert_string_equal(opt_suggest_word("dur", opts), "duration"); /* the unique prefix */
    assert_string_equal(opt_suggest_word("rtae", opts), "rate");
    assert_string_equal(opt_suggest_word("sede", opts), "seed");
    assert_null(opt_suggest_word("zzz", opts));
    assert_null(opt_suggest_word("r", opts)); /* one letter: no prefix, no typo of distance 1 */
    assert_null(opt_suggest_word("x", opts));
    assert_null(opt_suggest_word("ra", opts));                     /* a prefix of three, two of them at distance 2 */
    assert_string_equal(opt_suggest_word("re", opts), "requests"); /* a prefix of one */
    static const char *const calcs[] = {"mm1", "mmc", "md1", "little", "fanout", "ladder", NULL};
    assert_null(opt_suggest_word("mmc1", calcs)); /* mm1 and mmc equally near: no guess */
    assert_string_equal(opt_suggest_word("fanot", calcs), "fanout");
    struct opt_suggest sg;
    opt_suggest_init(&sg, "quee", 4);
    opt_suggest_add(&sg, NULL); /* ignored */
    opt_suggest_add(&sg, "");
    opt_suggest_add(&sg, "queue");
    opt_suggest_add(&sg, "queue"); /* the same name twice is not a tie */
    assert_string_equal(opt_suggest_best(&sg), "queue");

    char buf[64];
    assert_string_equal(opt_word_list(calcs, buf, sizeof buf), "mm1, mmc, md1, little, fanout, ladder");
    static const char *const none[] = {NULL};
    assert_string_equal(opt_word_list(none, buf, sizeof buf), "");
    char small[8];
    assert_string_equal(opt_word_list(calcs, small, sizeof small), "mm1, mm"); /* truncated, terminated */
}

static void test_parse_word(void **state)
{
    (void)state;
    struct cmd_spec spec = {.name = "test", .usage = "", .summary = ""};
    static const char *const ios[] = {"auto", "epoll", "uring", NULL};
    int at = -1, r = 0;
    char *err = NULL;
    STDERR_OF(err, r = opt_parse_word(&spec, "io", "uring", ios, &at));
    assert_int_equal(r, 0);
    assert_int_equal(at, 2);
    assert_string_equal(err, "");
    free(err);
    STDERR_OF(err, r = opt_parse_word(&spec, "io", "epol", ios, &at));
    assert_int_equal(r, 2);
    assert_int_equal(at, 2);
    assert_string_equal(err, "knee test: --io 'epol': expected one of auto, epoll, uring; did you mean epoll?\n");
    free(err);
    STDERR_OF(err, r = opt_parse_word(&spec, "io", "kqueue", ios, &at));
    assert_int_equal(r, 2);
    assert_string_equal(err, "knee test: --io 'kqueue': expected one of auto, epoll, uring\n");
    free(err);
}

static void test_unknown_option_hints(void **state)
{
    (void)state;
    uint64_t dur = 0;
    double rate = 0;
    bool flag = false;
    struct strlist hdrs = {0}, args = {0};
    struct {
        const char *arg, *want;
    } cases[] = {
        {"--rat", "knee test: unknown option '--rat': did you mean --rate?\n"},
        {"--rat=5", "knee test: unknown option '--rat': did you mean --rate?\n"},
        {"--durtion", "knee test: unknown option '--durtion': did you mean --duration?\n"},
        {"--hepl", "knee test: unknown option '--hepl': did you mean --help?\n"},
        {"-header", "knee test: unknown option '-header': did you mean --header?\n"},
        {"-heade", "knee test: unknown option '-heade': did you mean --header?\n"},
        {"--nope", "knee test: unknown option '--nope' (see knee test --help)\n"},
        {"-x", "knee test: unknown option '-x' (see knee test --help)\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[] = {"test", (char *)cases[i].arg, "u", NULL};
        char *err = NULL;
        int r = 0;
        STDERR_OF(err, r = parse_with(3, argv, &dur, &rate, &flag, &hdrs, &args));
        assert_int_equal(r, 2);
        assert_string_equal(err, cases[i].want);
        free(err);
        strlist_release(&args);
    }
}

static void test_unknown_command(void **state)
{
    (void)state;
    static const struct command table[] = {{"show", NULL, ""}, {"stats", NULL, ""}, {"merge", NULL, ""}, {0, 0, 0}};
    char *err = NULL;
    int r = 0;
    STDERR_OF(err, r = cli_unknown_command("hlog", "command", table, "shw"));
    assert_int_equal(r, 2);
    assert_string_equal(err, "knee hlog: unknown command 'shw': did you mean show?\n");
    free(err);
    STDERR_OF(err, r = cli_unknown_command("", "command", table, "frob"));
    assert_int_equal(r, 2);
    assert_string_equal(err, "knee: unknown command 'frob' (one of show, stats, merge)\n");
    free(err);
    STDERR_OF(err, r = cli_unknown_command("", "command", table, "s")); /* s: show or stats */
    assert_string_equal(err, "knee: unknown command 's' (one of show, stats, merge)\n");
    free(err);
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
    char *values[] = {"knee", "--list-values", NULL};
    int r_values = knee_main(2, values);
    char *values_extra[] = {"knee", "--list-values", "x", NULL};
    int r_values_extra = knee_main(3, values_extra);
    fclose(stdout);
    fclose(stderr);
    stdout = saved_out;
    stderr = saved_err;
    assert_int_equal(r_version, 0);
    assert_int_equal(r_help, 0);
    assert_int_equal(r_unknown, 2);
    assert_int_equal(r_badopt, 2);
    assert_int_equal(r_none, 2);
    assert_int_equal(r_values, 0);
    assert_int_equal(r_values_extra, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_rates_counts_shares),
        cmocka_unit_test(test_opt_parse),
        cmocka_unit_test(test_edit_distance),
        cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_parse_word),
        cmocka_unit_test(test_unknown_option_hints),
        cmocka_unit_test(test_unknown_command),
        cmocka_unit_test(test_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
