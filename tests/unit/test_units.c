/* Unit tests for the printers of src/core/units: counts with thousands separators, rates,
 * milliseconds, plain decimals, times with a unit, percentages and percentile names, with
 * the edges (0, rounding carries, NaN for "no samples", truncation to the buffer). The
 * parsers are tested in test_cli.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/units.h"

#include <math.h>
#include <string.h>

static void test_fmt_count(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(units_fmt_count(0, b, sizeof b), "0");
    assert_string_equal(units_fmt_count(999, b, sizeof b), "999");
    assert_string_equal(units_fmt_count(1000, b, sizeof b), "1,000");
    assert_string_equal(units_fmt_count(1234567, b, sizeof b), "1,234,567");
    assert_string_equal(units_fmt_count(100000, b, sizeof b), "100,000");
    assert_string_equal(units_fmt_count(UINT64_MAX, b, sizeof b), "18,446,744,073,709,551,615");
    /* truncated like snprintf: never past the buffer, always terminated */
    char s[6];
    memset(s, 'x', sizeof s);
    assert_string_equal(units_fmt_count(1234567, s, sizeof s), "1,234");
    assert_string_equal(units_fmt_count(1234567, s, 1), "");
}

static void test_fmt_rate(void **state)
{
    (void)state;
    char b[40];
    assert_string_equal(units_fmt_rate(0, b, sizeof b), "0.0");
    assert_string_equal(units_fmt_rate(500, b, sizeof b), "500.0");
    assert_string_equal(units_fmt_rate(12345.67, b, sizeof b), "12,345.7");
    assert_string_equal(units_fmt_rate(999.96, b, sizeof b), "1,000.0"); /* the rounding carries */
    assert_string_equal(units_fmt_rate(0.04, b, sizeof b), "0.0");
    assert_string_equal(units_fmt_rate(-2.5, b, sizeof b), "-2.5");
    assert_string_equal(units_fmt_rate(NAN, b, sizeof b), "-");
    assert_string_equal(units_fmt_rate(INFINITY, b, sizeof b), "-");
    assert_string_equal(units_fmt_rate(1.79e308, b, sizeof b), "1.79e+308");
}

static void test_fmt_ms(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(units_fmt_ms(0, b, sizeof b), "0.000");
    assert_string_equal(units_fmt_ms(0.1234, b, sizeof b), "0.123");
    assert_string_equal(units_fmt_ms(12.3456, b, sizeof b), "12.346");
    assert_string_equal(units_fmt_ms(99999.9994, b, sizeof b), "99999.999");
    assert_string_equal(units_fmt_ms(100000, b, sizeof b), "100000");
    assert_string_equal(units_fmt_ms(123456.7, b, sizeof b), "123457");
    assert_string_equal(units_fmt_ms(NAN, b, sizeof b), "-");
    assert_string_equal(units_fmt_ms(-INFINITY, b, sizeof b), "-");
    /* a huge value: never a wall of 309 digits */
    assert_string_equal(units_fmt_ms(1.79e308, b, sizeof b), "1.79e+308");
    assert_string_equal(units_fmt_ms(1e15, b, sizeof b), "1e+15");
    assert_string_equal(units_fmt_ms(999999999999999, b, sizeof b), "999999999999999");
}

static void test_fmt_fixed(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(units_fmt_fixed(12.34, 1, b, sizeof b), "12.3");
    assert_string_equal(units_fmt_fixed(0.05, 1, b, sizeof b), "0.1");
    assert_string_equal(units_fmt_fixed(7, 0, b, sizeof b), "7");
    assert_string_equal(units_fmt_fixed(NAN, 1, b, sizeof b), "-");
    assert_string_equal(units_fmt_fixed(1.79e308, 1, b, sizeof b), "1.79e+308");
    assert_string_equal(units_fmt_fixed(-2e20, 3, b, sizeof b), "-2e+20");
}

/* knee stats' table cells (formerly analyze's report_fmt): "-" where there is no value. */
static void test_fmt_cell(void **state)
{
    (void)state;
    char b[40];
    assert_string_equal(units_fmt_cell(12.25, 1, b, sizeof b), "12.2");
    assert_string_equal(units_fmt_cell(1.79e308, 1, b, sizeof b), "1.8e+308");
    assert_string_equal(units_fmt_cell(-1.79e308, 3, b, sizeof b), "-1.8e+308");
    assert_string_equal(units_fmt_cell(999999999999.0, 1, b, sizeof b), "999999999999.0");
    assert_string_equal(units_fmt_cell(1e12, 1, b, sizeof b), "1e+12");
    assert_string_equal(units_fmt_cell(NAN, 1, b, sizeof b), "-");
    assert_string_equal(units_fmt_cell(INFINITY, 1, b, sizeof b), "inf");
}

static void test_text_width(void **state)
{
    (void)state;
    assert_int_equal(units_text_width("", 0), 0);
    assert_int_equal(units_text_width("abc", 3), 3);
    const char *s = "λ·W − 1";
    assert_int_equal(units_text_width(s, strlen(s)), 7);
    assert_int_equal(units_text_width(s, 2), 1); /* λ is two bytes, one column */
}

static void test_fmt_seconds(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(units_fmt_seconds(0, 4, b, sizeof b), "0");
    assert_string_equal(units_fmt_seconds(812e-9, 4, b, sizeof b), "812ns");
    assert_string_equal(units_fmt_seconds(23.333e-6, 4, b, sizeof b), "23.33us");
    assert_string_equal(units_fmt_seconds(0.02333333, 4, b, sizeof b), "23.33ms");
    assert_string_equal(units_fmt_seconds(1.5, 4, b, sizeof b), "1.5s");
    assert_string_equal(units_fmt_seconds(250, 4, b, sizeof b), "250s");
    assert_string_equal(units_fmt_seconds(-0.002, 4, b, sizeof b), "-2ms");
    assert_string_equal(units_fmt_seconds(0.0123456, 3, b, sizeof b), "12.3ms");
}

static void test_fmt_duration(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(units_fmt_duration(812, b, sizeof b), "812ns");
    assert_string_equal(units_fmt_duration(12300, b, sizeof b), "12.3us");
    assert_string_equal(units_fmt_duration(4560000, b, sizeof b), "4.56ms");
    assert_string_equal(units_fmt_duration(1230000000, b, sizeof b), "1.23s");
    assert_string_equal(units_fmt_duration(123000000000ULL, b, sizeof b), "2m03s");
}

static void test_fmt_share_and_percentile(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(units_fmt_share(0, 4, b, sizeof b), "0%");
    assert_string_equal(units_fmt_share(0.012345, 4, b, sizeof b), "1.234%");
    assert_string_equal(units_fmt_share(1, 4, b, sizeof b), "100%");
    assert_string_equal(units_fmt_share(0.5, 2, b, sizeof b), "50%");
    assert_string_equal(units_fmt_percentile(0.5, b, sizeof b), "p50");
    assert_string_equal(units_fmt_percentile(0.99, b, sizeof b), "p99");
    assert_string_equal(units_fmt_percentile(0.999, b, sizeof b), "p99.9");
    assert_string_equal(units_fmt_percentile(0.99999, b, sizeof b), "p99.999");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_count),
        cmocka_unit_test(test_fmt_rate),
        cmocka_unit_test(test_fmt_ms),
        cmocka_unit_test(test_fmt_fixed),
        cmocka_unit_test(test_fmt_cell),
        cmocka_unit_test(test_text_width),
        cmocka_unit_test(test_fmt_seconds),
        cmocka_unit_test(test_fmt_duration),
        cmocka_unit_test(test_fmt_share_and_percentile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
