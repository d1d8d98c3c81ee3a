/* Unit tests for core/pb.h, the protobuf wire-format writer: hand-checked bytes for every
 * encoding (varints at their length boundaries, zigzag, two's complement int64, doubles,
 * strings), nested messages whose length needs one and two varint bytes (the reserved prefix
 * compacted), packed fields, reset and release, and the test-side reader reading it back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/pb.h"
#include "unit/pb_decode.h"

#include <math.h>
#include <string.h>

static void expect_bytes(const struct pb_buf *b, const uint8_t *want, size_t n)
{
    assert_false(b->failed);
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
}

static void test_varints(void **state)
{
    (void)state;
    struct pb_buf b;
    pb_buf_init(&b);
    pb_uint(&b, 1, 0);
    pb_uint(&b, 1, 1);
    pb_uint(&b, 1, 127);
    pb_uint(&b, 1, 128);
    pb_uint(&b, 1, 300);
    const uint8_t want[] = {0x08, 0x00, 0x08, 0x01, 0x08, 0x7f, 0x08, 0x80, 0x01, 0x08, 0xac, 0x02};
    expect_bytes(&b, want, sizeof want);

    pb_buf_reset(&b);
    pb_uint(&b, 2, UINT64_MAX); /* ten bytes, the last 0x01 */
    const uint8_t max[] = {0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    expect_bytes(&b, max, sizeof max);

    pb_buf_reset(&b);
    pb_uint(&b, 16, 1); /* field 16: the tag itself takes two bytes (0x80 0x01) */
    const uint8_t f16[] = {0x80, 0x01, 0x01};
    expect_bytes(&b, f16, sizeof f16);
    pb_buf_release(&b);
}

static void test_signed(void **state)
{
    (void)state;
    struct pb_buf b;
    pb_buf_init(&b);
    /* zigzag: 0→0, -1→1, 1→2, -2→3, 2147483647→4294967294, INT64_MIN→UINT64_MAX */
    pb_sint(&b, 1, 0);
    pb_sint(&b, 1, -1);
    pb_sint(&b, 1, 1);
    pb_sint(&b, 1, -2);
    pb_sint(&b, 1, -64); /* 127: one byte */
    pb_sint(&b, 1, 64);  /* 128: two bytes */
    const uint8_t want[] = {0x08, 0x00, 0x08, 0x01, 0x08, 0x02, 0x08, 0x03, 0x08, 0x7f, 0x08, 0x80, 0x01};
    expect_bytes(&b, want, sizeof want);

    pb_buf_reset(&b);
    pb_sint(&b, 1, INT64_MIN);
    pb_sint(&b, 1, INT64_MAX);
    struct pbd d = pbd_of(b.data, b.len);
    struct pbd_field f;
    assert_int_equal(pbd_next(&d, &f), 1);
    assert_true(f.u == UINT64_MAX);
    assert_true(pbd_zigzag(f.u) == INT64_MIN);
    assert_int_equal(pbd_next(&d, &f), 1);
    assert_true(f.u == UINT64_MAX - 1);
    assert_true(pbd_zigzag(f.u) == INT64_MAX);
    assert_int_equal(pbd_next(&d, &f), 0);

    /* int64: -1 is ten bytes of two's complement. */
    pb_buf_reset(&b);
    pb_int(&b, 3, -1);
    pb_int(&b, 3, 1700000000000LL);
    const uint8_t neg[] = {0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                           0xff, 0x01, 0x18, 0x80, 0xd0, 0x95, 0xff, 0xbc, 0x31};
    expect_bytes(&b, neg, sizeof neg);
    pb_buf_release(&b);
}

static void test_double_and_strings(void **state)
{
    (void)state;
    struct pb_buf b;
    pb_buf_init(&b);
    pb_double(&b, 1, 1.0);  /* 0x3ff0000000000000, little endian */
    pb_double(&b, 2, -0.5); /* 0xbfe0000000000000 */
    pb_string(&b, 3, "le");
    pb_bytes(&b, 4, "", 0);
    const uint8_t want[] = {0x09, 0, 0, 0, 0,    0,    0,    0xf0, 0x3f, 0x11, 0,    0,
                            0,    0, 0, 0, 0xe0, 0xbf, 0x1a, 0x02, 'l',  'e',  0x22, 0x00};
    expect_bytes(&b, want, sizeof want);

    pb_buf_reset(&b);
    pb_double(&b, 1, INFINITY);
    pb_double(&b, 1, 0.001);
    struct pbd d = pbd_of(b.data, b.len);
    struct pbd_field f;
    assert_int_equal(pbd_next(&d, &f), 1);
    assert_int_equal(f.wt, PB_WT_FIXED64);
    assert_true(isinf(pbd_double(&f)));
    assert_int_equal(pbd_next(&d, &f), 1);
    assert_true(pbd_double(&f) == 0.001);
    pb_buf_release(&b);
}

static void test_nested(void **state)
{
    (void)state;
    struct pb_buf b;
    pb_buf_init(&b);
    /* A short message: the 5-byte reserve shrinks to one length byte. */
    size_t m = pb_begin(&b, 1);
    pb_uint(&b, 1, 150);
    pb_end(&b, m);
    const uint8_t want[] = {0x0a, 0x03, 0x08, 0x96, 0x01};
    expect_bytes(&b, want, sizeof want);

    /* Nested twice, the inner one 200 bytes long (a two-byte length, 0xc8 0x01), the outer
     * 1 + 2 + 200 + 2 = 205 bytes (0xcd 0x01), and a field after both. */
    pb_buf_reset(&b);
    char text[197];
    memset(text, 'x', sizeof text);
    size_t outer = pb_begin(&b, 2);
    size_t inner = pb_begin(&b, 3);
    pb_bytes(&b, 1, text, 197); /* tag 1 + length 2 (197 >= 128) + 197 = 200 */
    pb_end(&b, inner);
    pb_uint(&b, 4, 7);
    pb_end(&b, outer);
    pb_uint(&b, 5, 1);
    assert_false(b.failed);
    assert_int_equal(b.len, 1 + 2 + 205 + 2);
    const uint8_t head[] = {0x12, 0xcd, 0x01, 0x1a, 0xc8, 0x01, 0x0a, 0xc5, 0x01, 'x'};
    assert_memory_equal(b.data, head, sizeof head);

    struct pbd d = pbd_of(b.data, b.len);
    struct pbd_field f;
    assert_int_equal(pbd_next(&d, &f), 1);
    assert_int_equal(f.field, 2);
    assert_int_equal(f.len, 205);
    struct pbd o = pbd_of(f.data, f.len);
    assert_int_equal(pbd_next(&o, &f), 1);
    assert_int_equal(f.field, 3);
    assert_int_equal(f.len, 200);
    struct pbd in = pbd_of(f.data, f.len);
    assert_int_equal(pbd_next(&in, &f), 1);
    assert_int_equal(f.len, 197);
    assert_int_equal(f.data[196], 'x');
    assert_int_equal(pbd_next(&in, &f), 0);
    assert_int_equal(pbd_next(&o, &f), 1);
    assert_int_equal(f.field, 4);
    assert_int_equal(f.u, 7);
    assert_int_equal(pbd_next(&o, &f), 0);
    assert_int_equal(pbd_next(&d, &f), 1);
    assert_int_equal(f.field, 5);
    assert_int_equal(pbd_next(&d, &f), 0);

    /* A delimited message: the length alone, no tag. */
    pb_buf_reset(&b);
    m = pb_begin_delimited(&b);
    pb_uint(&b, 1, 150);
    pb_end(&b, m);
    const uint8_t delim[] = {0x03, 0x08, 0x96, 0x01};
    expect_bytes(&b, delim, sizeof delim);

    /* An empty nested message: tag, zero length. */
    pb_buf_reset(&b);
    pb_end(&b, pb_begin(&b, 6));
    const uint8_t empty[] = {0x32, 0x00};
    expect_bytes(&b, empty, sizeof empty);

    /* A large message (70000 bytes: a three-byte length). */
    pb_buf_reset(&b);
    m = pb_begin(&b, 1);
    for (int i = 0; i < 35000; i++)
        pb_uint(&b, 1, 1); /* 2 bytes each */
    pb_end(&b, m);
    assert_false(b.failed);
    assert_int_equal(b.len, 1 + 3 + 70000);
    d = pbd_of(b.data, b.len);
    assert_int_equal(pbd_next(&d, &f), 1);
    assert_int_equal(f.len, 70000);
    pb_buf_release(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
}

static void test_packed(void **state)
{
    (void)state;
    struct pb_buf b;
    pb_buf_init(&b);
    const int64_t deltas[] = {0, -1, 2, 64};
    pb_packed_sint(&b, 4, deltas, 4);
    const double counts[] = {1.0, 2.5};
    pb_packed_double(&b, 5, counts, 2);
    pb_packed_sint(&b, 6, deltas, 0); /* nothing */
    const uint64_t u[] = {1, 300};
    pb_packed_uint(&b, 7, u, 2);
    const uint8_t want[] = {0x22, 0x05, 0x00, 0x01, 0x04, 0x80, 0x01, 0x2a, 0x10, 0,    0,    0,    0,    0,    0,
                            0xf0, 0x3f, 0,    0,    0,    0,    0,    0,    0x04, 0x40, 0x3a, 0x03, 0x01, 0xac, 0x02};
    expect_bytes(&b, want, sizeof want);

    struct pbd d = pbd_of(b.data, b.len);
    struct pbd_field f;
    int64_t back[8];
    double dback[8];
    assert_int_equal(pbd_next(&d, &f), 1);
    assert_int_equal(pbd_packed_sint(&f, back, 8), 4);
    assert_memory_equal(back, deltas, sizeof deltas);
    assert_int_equal(pbd_next(&d, &f), 1);
    assert_int_equal(pbd_packed_double(&f, dback, 8), 2);
    assert_true(dback[1] == 2.5);
    pb_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varints), cmocka_unit_test(test_signed), cmocka_unit_test(test_double_and_strings),
        cmocka_unit_test(test_nested),  cmocka_unit_test(test_packed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
