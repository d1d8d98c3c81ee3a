/* Unit tests for src/termplot: the histogram's rows, the p99 mark in words and in red, colour
 * only when asked, ASCII where the locale is not UTF-8, the sparkline's levels, merging and
 * gaps, and no pictures on a pipe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "termplot/termplot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *capture_hist(const struct termplot *t, const struct dbl_hist *h, double mark)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    termplot_histogram(f, t, "title", h, "ms", mark);
    fclose(f);
    return buf;
}

static char *capture_spark(const struct termplot *t, const double *v, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    termplot_sparkline(f, t, "p99 per second", v, n, "ms");
    fclose(f);
    return buf;
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

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + strlen(needle), needle))
        n++;
    return n;
}

static void test_histogram(void **state)
{
    (void)state;
    struct dbl_hist h;
    dbl_init(&h, 1);
    dbl_add(&h, 1.5, 900); /* 1..2 */
    dbl_add(&h, 3, 90);    /* 2..4 */
    dbl_add(&h, 40, 10);   /* 32..64 */
    struct termplot t = {.enabled = true, .color = false, .utf8 = false, .columns = 80};
    char *s = capture_hist(&t, &h, 40);
    assert_has(s, "\ntitle\n");
    assert_has(s, "\n    1..2 ms  900   90.0% #");
    assert_has(s, "\n  32..64 ms   10    1.0% # <- p99\n");
    assert_has(s, "\n   8..16 ms    0    0.0% \n"); /* an empty bucket inside the range: a row, no bar */
    assert_has(s, "# <- p99\n");
    assert_int_equal(count_of(s, "<- p99"), 1);
    assert_lacks(s, "\033[");
    assert_lacks(s, "\u2588");
    /* the widest bar fills the width left after the labels: every line fits in 80 columns */
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
        assert_true(strlen(line) <= 80);
    free(s);

    /* colours and blocks: the marked bucket and those above it red, the others cyan */
    t.color = t.utf8 = true;
    s = capture_hist(&t, &h, 3);
    assert_has(s, "\033[36m\u2588");              /* 1..2 in cyan */
    assert_has(s, "\033[0m <- p99\n");            /* 2..4 is the p99's */
    assert_int_equal(count_of(s, "\033[31m"), 2); /* 2..4 and 32..64 in red */
    free(s);
    /* no mark: nothing red, nothing labelled */
    s = capture_hist(&t, &h, NAN);
    assert_lacks(s, "\033[31m");
    assert_lacks(s, "p99");
    free(s);
    /* an empty histogram prints nothing */
    dbl_init(&h, 1);
    s = capture_hist(&t, &h, 1);
    assert_string_equal(s, "");
    free(s);
}

static void test_sparkline(void **state)
{
    (void)state;
    struct termplot t = {.enabled = true, .color = false, .utf8 = true, .columns = 100};
    double v[] = {1, 2, 4, 8, 16, 32, 64, 128, NAN, 1};
    char *s = capture_spark(&t, v, 10);
    /* log scale from 1 to 128: eight levels, a gap for the missing value */
    assert_string_equal(
        s, "  p99 per second  \u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588 \u2581  1 .. 128 ms (log)\n");
    free(s);
    t.utf8 = false;
    t.color = true;
    s = capture_spark(&t, v, 10);
    assert_has(s, "  p99 per second  .:-=+*#\033[31m@\033[0m .  \033[2m1 .. 128 ms (log)\033[0m\n");
    free(s);
    /* more values than fit: merged by their maximum, said so */
    t.color = false;
    double many[400];
    for (int i = 0; i < 400; i++)
        many[i] = i == 321 ? 500 : 10;
    s = capture_spark(&t, many, 400);
    assert_int_equal(count_of(s, "@"), 1);
    assert_has(s, "10 .. 500 ms (log), the largest of 14 a cell\n");
    assert_true(strlen(s) <= 101);
    free(s);
    /* all equal; nothing finite */
    double same[] = {5, 5, 5};
    s = capture_spark(&t, same, 3);
    assert_has(s, "@@@  all 5 ms\n");
    free(s);
    double none[] = {NAN, NAN};
    s = capture_spark(&t, none, 2);
    assert_string_equal(s, "");
    free(s);
}

/* A pipe is not a terminal: no pictures, whatever the environment says. */
static void test_detect(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    setenv("COLUMNS", "200", 1);
    struct termplot t;
    termplot_detect(&t, p[1]);
    assert_false(t.enabled);
    assert_false(t.color);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_sparkline),
        cmocka_unit_test(test_detect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
