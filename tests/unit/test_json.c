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

static char *render(void (*fn)(struct json *), bool pretty)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct json j;
    json_init(&j, f, pretty);
    fn(&j);
    fclose(f);
    return buf;
}

static void doc(struct json *j)
{
    json_object_begin(j);
    json_kv_string(j, "name", "a\"b\\c\n\x01");
    json_kv_double(j, "mean", 38.2);
    json_kv_double(j, "nan", NAN);
    json_kv_int(j, "neg", -3);
    json_kv_uint(j, "big", 18446744073709551615ULL);
    json_kv_bool(j, "ok", true);
    json_key(j, "list");
    json_array_begin(j);
    json_double(j, 0.1);
    json_double(j, 1e300);
    json_object_begin(j);
    json_object_end(j);
    json_array_end(j);
    json_key(j, "empty");
    json_array_begin(j);
    json_array_end(j);
    json_object_end(j);
    json_end(j);
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
