/* Unit tests for per-entry outcome tables (record/entries.h): the request path's counter (outcomes,
 * latency sum and max, the bounded status list and "other"), adding (codes merged by value),
 * sent/completed/failed/mean, the identity hash, the worst-first order, the JSON round trip and
 * the strict reader's refusals, and the summary's table (runreport_print_entries: the worst 10
 * and "... M more", every row with verbose, within 100 columns). Nothing here touches the
 * network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/json.h"
#include "record/entries.h"
#include "record/record.h"
#include "runreport/runreport.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_count(void **state)
{
    (void)state;
    struct run_entry_counts c;
    memset(&c, 0, sizeof c);
    record_entry_count(&c, OUTCOME_OK, 1000000, 200);
    record_entry_count(&c, OUTCOME_OK, 3000000, 200);
    record_entry_count(&c, OUTCOME_HTTP_ERROR, 2000000, 404);
    record_entry_count(&c, OUTCOME_HTTP_ERROR, 500000, 500);
    record_entry_count(&c, OUTCOME_HTTP_ERROR, 500000, 503);
    record_entry_count(&c, OUTCOME_HTTP_ERROR, 500000, 502); /* the fifth code: other */
    record_entry_count(&c, OUTCOME_TRANSPORT, 7000000, 0);   /* no status */
    record_entry_count(&c, OUTCOME_CANCELLED, 99000000, 0);  /* no latency */
    assert_int_equal(c.outcome[OUTCOME_OK], 2);
    assert_int_equal(c.code[0], 200);
    assert_int_equal(c.code_n[0], 2);
    assert_int_equal(c.code[3], 503);
    assert_int_equal(c.code_other, 1);
    assert_int_equal(c.latency_max_ns, 7000000);
    assert_int_equal(record_entry_sent(&c), 8);
    assert_int_equal(record_entry_completed(&c), 7);
    assert_int_equal(record_entry_failed(&c), 5);
    assert_true(fabs(record_entry_mean_ms(&c) - 14.5 / 7) < 1e-9);

    struct run_entry_counts d;
    memset(&d, 0, sizeof d);
    assert_true(isnan(record_entry_mean_ms(&d)));
    record_entry_count(&d, OUTCOME_OK, 9000000, 201);
    record_entry_count(&d, OUTCOME_HTTP_ERROR, 1, 404);
    record_entry_counts_add(&d, &c); /* d: 201, 404; then c's 200, 500 (503 has no room: other) */
    assert_int_equal(d.code[0], 201);
    assert_int_equal(d.code_n[1], 2); /* 404: 1 + 1 */
    assert_int_equal(d.code[2], 200);
    assert_int_equal(d.code[3], 500);
    assert_int_equal(d.code_other, 2); /* c's 503 and c's other */
    assert_int_equal(d.latency_max_ns, 9000000);
    assert_int_equal(record_entry_sent(&d), 10);
}

/* n entries "GET http://h/e/I"; entry i has i % 3 failed requests and max latency i ms. */
static void make(struct run_entries *es, size_t n)
{
    memset(es, 0, sizeof *es);
    es->n = n;
    es->e = xcalloc(n, sizeof *es->e);
    for (size_t i = 0; i < n; i++) {
        char u[64];
        snprintf(u, sizeof u, "http://h/e/%zu", i);
        es->e[i].index = i;
        es->e[i].method = xstrdup("GET");
        es->e[i].url = xstrdup(u);
        es->e[i].target = xstrdup("t");
        record_entry_count(&es->e[i].c, OUTCOME_OK, (uint64_t)(i + 1) * 1000000, 200);
        for (size_t k = 0; k < i % 3; k++)
            record_entry_count(&es->e[i].c, OUTCOME_HTTP_ERROR, 1000, 404);
    }
    es->hash = record_entries_hash(es);
}

static void test_hash_and_order(void **state)
{
    (void)state;
    struct run_entries a, b;
    make(&a, 6);
    make(&b, 6);
    assert_true(record_entries_same(&a, &b));
    free(b.e[5].url);
    b.e[5].url = xstrdup("http://h/other");
    b.hash = record_entries_hash(&b);
    assert_false(record_entries_same(&a, &b));
    size_t idx[6];
    record_entries_worst(&a, idx);
    /* failed 2: entries 5, 2 (larger max first); failed 1: 4, 1; failed 0: 3, 0 */
    size_t want[] = {5, 2, 4, 1, 3, 0};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(idx[i], want[i]);
    record_entries_add(&a, &a);
    assert_int_equal(a.e[5].c.outcome[OUTCOME_HTTP_ERROR], 4);
    record_entries_release(&a);
    record_entries_release(&b);
    assert_int_equal(a.n, 0);
}

static char *to_json(const struct run_entries *es)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct jw j;
    jw_init(&j, f, false);
    jw_object_begin(&j);
    record_entries_write_json(&j, es);
    jw_object_end(&j);
    jw_end(&j);
    fclose(f);
    return buf;
}

static void test_json(void **state)
{
    (void)state;
    struct run_entries a, r;
    make(&a, 4);
    free(a.e[1].method);
    a.e[1].method = xstrdup("POST");
    a.e[2].name = xstrdup("grp");
    record_entry_count(&a.e[3].c, OUTCOME_TIMEOUT, 5000000000ULL, 0);
    for (int k = 0; k < 5; k++) /* beyond the list: other */
        record_entry_count(&a.e[0].c, OUTCOME_HTTP_ERROR, 1, 500 + k);
    a.hash = record_entries_hash(&a);
    char *text = to_json(&a);
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    assert_non_null(root);
    char err[256];
    assert_int_equal(record_entries_read_json(root, &r, true, err, sizeof err), 0);
    assert_true(record_entries_same(&a, &r));
    for (size_t i = 0; i < a.n; i++) {
        assert_string_equal(a.e[i].url, r.e[i].url);
        assert_string_equal(a.e[i].method, r.e[i].method);
        assert_memory_equal(a.e[i].c.outcome, r.e[i].c.outcome, sizeof a.e[i].c.outcome);
        assert_int_equal(a.e[i].c.latency_sum_ns, r.e[i].c.latency_sum_ns);
        assert_int_equal(a.e[i].c.latency_max_ns, r.e[i].c.latency_max_ns);
        assert_int_equal(a.e[i].c.code_other, r.e[i].c.code_other);
    }
    assert_string_equal(r.e[2].name, "grp");
    assert_null(r.e[1].name);
    char *again = to_json(&r); /* written again: the same text */
    assert_string_equal(text, again);
    free(again);
    record_entries_release(&r);

    /* the strict reader's refusals */
    json_object_set_new(json_object_get(json_array_get(json_object_get(root, "entries"), 2), "outcomes"), "ok",
                        json_string("x"));
    assert_int_equal(record_entries_read_json(root, &r, true, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "entries[2].outcomes.ok is not a count");
    assert_int_equal(record_entries_read_json(root, &r, false, err, sizeof err), 0); /* lenient: 0 */
    assert_int_equal(r.e[2].c.outcome[OUTCOME_OK], 0);
    record_entries_release(&r);
    json_object_set_new(json_object_get(json_array_get(json_object_get(root, "entries"), 2), "outcomes"), "ok",
                        json_integer(1));
    json_object_set_new(root, "entries_hash", json_string("0000000000000001"));
    assert_int_equal(record_entries_read_json(root, &r, true, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "entries_hash 0000000000000001 does not match"));
    json_object_set_new(json_array_get(json_object_get(root, "entries"), 0), "index", json_integer(7));
    assert_int_equal(record_entries_read_json(root, &r, true, err, sizeof err), KNEE_EFORMAT);
    assert_string_equal(err, "entries[0].index is not 0");
    json_decref(root);
    free(text);
    record_entries_release(&a);
}

static size_t widest(const char *s, size_t *lines)
{
    size_t w = 0, cur = 0;
    *lines = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '\n') {
            (*lines)++;
            w = cur > w ? cur : w;
            cur = 0;
        } else if (((unsigned char)*p & 0xc0) != 0x80) {
            cur++;
        }
    }
    return w;
}

static void test_summary_table(void **state)
{
    (void)state;
    struct run_record rec;
    memset(&rec, 0, sizeof rec);
    make(&rec.entries, 25);
    free(rec.entries.e[7].url);
    rec.entries.e[7].url = xstrdup("http://h/a/very/long/path/that/goes/on/and/on/and/on/and/on/past/the/edge?x=1");
    char *buf = NULL;
    size_t len = 0, lines;
    FILE *f = open_memstream(&buf, &len);
    runreport_print_entries(f, &rec, false);
    fclose(f);
    assert_true(widest(buf, &lines) <= 100);
    assert_int_equal(lines, 1 + 2 + RUNREPORT_ENTRIES_ROWS + 1); /* blank, title, header, rows, more */
    assert_non_null(strstr(buf, "... 15 more (--verbose prints all"));
    assert_non_null(strstr(buf, "404 ×2"));
    /* the worst first: entry 23 (2 failed, the largest max) */
    assert_non_null(strstr(buf, "      23        3        1       2"));
    free(buf);
    f = open_memstream(&buf, &len);
    runreport_print_entries(f, &rec, true);
    fclose(f);
    assert_true(widest(buf, &lines) <= 100);
    assert_int_equal(lines, 1 + 2 + 25);
    assert_non_null(strstr(buf, "GET /a/very/long/path"));
    assert_non_null(strstr(buf, "...\n"));
    free(buf);
    record_entries_release(&rec.entries);
    f = open_memstream(&buf, &len); /* no entries: nothing */
    runreport_print_entries(f, &rec, true);
    fclose(f);
    assert_int_equal(len, 0);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_hash_and_order),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_summary_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
