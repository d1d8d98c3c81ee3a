/* Unit tests for src/core/json: the JSON writer's nesting, commas, escaping and numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *render(void (*fn)(struct jw *), bool pretty)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct jw j;
    jw_init(&j, f, pretty);
    fn(&j);
    fclose(f);
    return buf;
}

static void doc(struct jw *j)
{
    jw_object_begin(j);
    jw_kv_string(j, "name", "a\"b\\c\n\x01");
    jw_kv_double(j, "mean", 38.2);
    jw_kv_double(j, "nan", NAN);
    jw_kv_int(j, "neg", -3);
    jw_kv_uint(j, "big", 18446744073709551615ULL);
    jw_kv_bool(j, "ok", true);
    jw_key(j, "list");
    jw_array_begin(j);
    jw_double(j, 0.1);
    jw_double(j, 1e300);
    jw_object_begin(j);
    jw_object_end(j);
    jw_array_end(j);
    jw_key(j, "empty");
    jw_array_begin(j);
    jw_array_end(j);
    jw_object_end(j);
    jw_end(j);
}

static void test_json_compact(void **state)
{
    (void)state;
    char *s = render(doc, false);
    assert_string_equal(s, "{\"name\":\"a\\\"b\\\\c\\n\\u0001\",\"mean\":38.2,\"nan\":null,\"neg\":-3,"
                           "\"big\":18446744073709551615,\"ok\":true,\"list\":[0.1,1e+300,{}],\"empty\":[]}\n");
    free(s);
}

static void test_json_pretty_parses_same(void **state)
{
    (void)state;
    char *s = render(doc, true);
    assert_non_null(strstr(s, "\n  \"mean\": 38.2,"));
    assert_non_null(strstr(s, "\"empty\": []"));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_compact),
        cmocka_unit_test(test_json_pretty_parses_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
