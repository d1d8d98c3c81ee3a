/* Unit tests for load/variant*.c's bytes: every way one request is made (a stream's lean entry
 * from its kept shape, a wire template rewritten in place, the field-by-field build through
 * http/client) gives the same bytes, keep-alive and Connection: close, over entries whose
 * method, headers, body and target change from one to the next. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "load/variant_internal.h"

#include "fixture_tmpdir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[1024];

static void write_file(const char *name, const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* v's bytes equal a field-by-field build's (http/client, the reference). */
static void check_built(struct variant_source *s, const struct ventry *ve, uint64_t seq, const struct variant *v)
{
    struct variant_bufs b = {0};
    char *h1 = NULL, *h1c = NULL, why[512];
    size_t n1 = 0, n2 = 0;
    struct h2_request h2;
    bool h2b = false;
    bool h2_able = s->h2_able;
    s->h2_able = false;
    assert_int_equal(variant_build(s, ve, seq, &b, &h1, &n1, &h1c, &n2, &h2, &h2b, why, sizeof why), 0);
    s->h2_able = h2_able;
    assert_int_equal(v->h1_len, n1);
    assert_memory_equal(v->h1, h1, n1);
    assert_non_null(v->h1_close);
    assert_int_equal(v->h1_close_len, n2);
    assert_memory_equal(v->h1_close, h1c, n2);
    free(h1);
    free(h1c);
    wl_buf_release(&b.url);
    wl_buf_release(&b.hdr);
    wl_buf_release(&b.body);
    free(b.hdr_off);
    free(b.hdr_lines);
}

static void variant_free_bufs(struct variant *v)
{
    variant_drop_own(v);
    wl_buf_release(&v->b.url);
    wl_buf_release(&v->b.hdr);
    wl_buf_release(&v->b.body);
    wl_marks_release(&v->b.marks[0]);
    wl_marks_release(&v->b.marks[1]);
    free(v->b.hdr_off);
    free(v->b.hdr_lines);
}

/* A file's entries read one by one: the lean ones (no placeholder, the first entry's origin as
 * written) give the bytes of their compiled wire and of http/client; the others are refused by
 * variant_lean and still built right through the wire. One variant's buffers serve them all. */
static void test_lean_and_wire(void **state)
{
    (void)state;
    char path[512], bodyp[512];
    write_file("body.json", "{\"n\": 1}", bodyp, sizeof bodyp);
    const char *text = "GET http://127.0.0.1:8080/a?x=1\nX-A: 1\n\n"
                       "GET http://127.0.0.1:8080/b\nX-A: 1\n\n"
                       "GET http://127.0.0.1:8080/c\nX-A: 2\nX-B: two words\n\n"
                       "POST http://127.0.0.1:8080/p\nContent-Type: application/json\n@body.json\n\n"
                       "POST http://127.0.0.1:8080/p2\nContent-Type: application/json\n@body.json\n\n"
                       "PUT http://127.0.0.1:8080/empty\n\n"
                       "HEAD http://127.0.0.1:8080\n\n"
                       "GET http://127.0.0.1:8080?q=1#frag\n\n"
                       "GET http://127.0.0.1:8080#frag\n\n"
                       "GET http://127.0.0.1:8080/{{seq}}\nX-S: {{seq}}\n\n"
                       "DELETE http://127.0.0.1:8080/d/9\n\n"
                       "GET http://127.0.0.1:8080/again?x=1\nX-A: 1\n\n";
    const bool lean[] = {true, true, true, true, true, true, true, true, true, false, true, true};
    write_file("t.txt", text, path, sizeof path);
    const char *hdrs[] = {"X-All: yes"};
    struct variant_opts o = {.targets_path = path, .format = WL_FORMAT_HTTP, .headers = hdrs, .nheaders = 1};
    struct variant_source *s;
    assert_int_equal(variant_source_open(&s, &o, err, sizeof err), 0);
    assert_int_equal(variant_prepare(s, true, true, false, err, sizeof err), 0);
    struct wl_reader *rd;
    assert_int_equal(wl_reader_open(&rd, path, WL_FORMAT_HTTP, err, sizeof err), 0);
    struct variant v = {0};
    struct wl_entry e;
    char why[512];
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof lean / sizeof *lean; i++) {
            assert_int_equal(round == 0 ? wl_reader_next(rd, &e, err, sizeof err)
                                        : wl_reader_read_at(rd, 0, 0, 1, &e, err, sizeof err),
                             0);
            if (round == 1) /* the second time through: every entry is the first's */
                i = 0;
            struct ventry ve;
            assert_int_equal(ventry_compile(s, &e, &ve, "t.txt", err, sizeof err), 0);
            assert_int_equal(variant_wire_compile(s, &ve, why, sizeof why), 0);
            for (uint64_t seq = 0; seq < 3; seq++) {
                assert_int_equal(variant_fill(s, &ve, seq * 997, &v, why, sizeof why), 0);
                check_built(s, &ve, seq * 997, &v);
            }
            int r = variant_lean(s, &e, why, sizeof why);
            assert_int_equal(r, lean[i] ? 1 : 0);
            if (r == 1) {
                s->cur.index = e.index;
                variant_fill_lean(s, &v);
                check_built(s, &ve, 0, &v);
                assert_int_equal(v.entry, e.index);
                assert_int_equal(v.head, strcmp(e.method, "HEAD") == 0);
            }
            ventry_release(&ve);
            if (round == 1)
                break;
        }
    }
    variant_free_bufs(&v);
    wl_reader_close(rd);
    variant_source_free(s);
}

/* Another origin as written (the same server by another name or port spelling), a URL the
 * target parser refuses: not lean (the full path decides). A header http/client refuses:
 * variant_lean says why. */
static void test_lean_refuses(void **state)
{
    (void)state;
    char path[512];
    write_file("r.txt", "GET http://127.0.0.1:8080/a\n\n", path, sizeof path);
    struct variant_opts o = {.targets_path = path, .format = WL_FORMAT_HTTP};
    struct variant_source *s;
    assert_int_equal(variant_source_open(&s, &o, err, sizeof err), 0);
    assert_int_equal(variant_prepare(s, true, false, false, err, sizeof err), 0);
    char why[512];
    struct wl_entry e = {.method = "GET", .url = "http://127.0.0.1:80800/a"};
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 0);
    e.url = "http://localhost:8080/a";
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 0);
    e.url = "http://127.0.0.1:8080/a b";
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 0);
    e.url = "http://127.0.0.1:8080/\x7f";
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 0);
    /* the target scanned a word at a time: what refuses it anywhere in a long URL */
    e.url = "http://127.0.0.1:8080/a/long/path/segment/x y";
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 0);
    e.url = "http://127.0.0.1:8080/a/long/path/segment/\xc3\xa9";
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 0);
    e.url = "http://127.0.0.1:8080/a/long/path/segment/\x7f/more/bytes";
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 0);
    e.url = "http://127.0.0.1:8080/a/long/path/segment?q=1#frag ment \xc3";
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 1); /* the fragment is never sent */
    assert_int_equal(s->target.len, strlen("/a/long/path/segment?q=1"));
    assert_memory_equal(s->target.p, "/a/long/path/segment?q=1", s->target.len);
    e.url = "http://127.0.0.1:8080/a/long/path/segment/with/~tilde!$&'()*+,;=:@%20";
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 1);
    assert_memory_equal(s->target.p, e.url + strlen("http://127.0.0.1:8080"), s->target.len);
    e.url = "http://127.0.0.1:8080/ok";
    const char *bad[] = {"Connection: keep-alive"};
    e.headers = bad;
    e.nheaders = 1;
    assert_int_equal(variant_lean(s, &e, why, sizeof why), KNEE_EINVAL);
    assert_non_null(strstr(why, "Connection"));
    e.nheaders = 0;
    assert_int_equal(variant_lean(s, &e, why, sizeof why), 1);
    variant_source_free(s);
}

/* A source's prep, chosen once by variant_prepare (variant_choose_prep), gives the bytes of a
 * field-by-field build for every request: a feed small enough rendered before the run
 * (variant_render, every order), a {{seq}} from the ring's decimal counter through the wire
 * rewritten in place, a feed with a body placeholder (its Content-Length per request), and a
 * feed too large to render (VARIANT_RENDER_MAX) expanded per request. */
static void check_prep(const char *feed_text, enum wl_order order, const char *url, const char *body, bool want_render,
                       uint64_t nseq)
{
    char feed[512];
    write_file("f.csv", feed_text, feed, sizeof feed);
    const char *hdrs[] = {"X-Name: {{name}}"};
    struct variant_opts o = {.url = url,
                             .method = body ? "POST" : NULL,
                             .headers = hdrs,
                             .nheaders = 1,
                             .body = body,
                             .body_len = body ? strlen(body) : 0,
                             .feed_path = feed,
                             .feed_order = order,
                             .seed = 5};
    struct variant_source *s;
    assert_int_equal(variant_source_open(&s, &o, err, sizeof err), 0);
    assert_int_equal(variant_prepare(s, true, true, false, err, sizeof err), 0);
    assert_int_equal(s->rend != NULL, want_render);
    assert_non_null(s->prep);
    struct wl_dec dec;
    uint64_t step = 3;
    wl_dec_set(&dec, 0, step);
    struct variant v[2] = {{0}, {0}};
    for (uint64_t j = 0; j < nseq; j++) {
        uint64_t seq = j * step;
        struct variant *vj = &v[j % 2]; /* two buffers: each rewritten from the one before */
        assert_true(s->prep(s, seq, s->dec_seq ? &dec : NULL, vj));
        check_built(s, &s->rows[0], seq, vj);
        wl_dec_next(&dec);
    }
    variant_free_bufs(&v[0]);
    variant_free_bufs(&v[1]);
    variant_source_free(s);
}

static void test_prep_paths(void **state)
{
    (void)state;
    const char *small = "id,name\n1,ann\n22,bob\n333,carol\n4444,d\n";
    const enum wl_order orders[] = {WL_ORDER_SEQUENTIAL, WL_ORDER_RANDOM, WL_ORDER_SHUFFLE};
    for (size_t k = 0; k < 3; k++) {
        check_prep(small, orders[k], "http://127.0.0.1:8080/u/{{id}}", NULL, true, 40);
        check_prep(small, orders[k], "http://127.0.0.1:8080/u/{{id}}", "{\"id\": {{id}}}", true, 40);
        check_prep(small, orders[k], "http://127.0.0.1:8080/u/{{id}}?s={{seq}}", NULL, false, 400);
        check_prep(small, orders[k], "http://127.0.0.1:8080/u/{{id}}?r={{rand:1-99}}", "{{uuid}}", false, 40);
    }
    /* {{seq}} crossing powers of ten, the in-place path and the whole expansion in turn */
    check_prep(small, WL_ORDER_SEQUENTIAL, "http://127.0.0.1:8080/k/{{seq}}", "n={{seq}}", false, 4000);
    size_t n = VARIANT_RENDER_MAX + 1, len = 0;
    char *big = malloc(n * 16 + 16);
    assert_non_null(big);
    len += (size_t)sprintf(big, "id,name\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(big + len, "%zu,u%zu\n", i, i % 7);
    check_prep(big, WL_ORDER_SEQUENTIAL, "http://127.0.0.1:8080/u/{{id}}", NULL, false, 300);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lean_and_wire),
        cmocka_unit_test(test_lean_refuses),
        cmocka_unit_test(test_prep_paths),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
