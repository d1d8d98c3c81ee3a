/* Unit tests for src/hlog: base64, the ZigZag LEB128-64b9B varints, the V2 codec against a
 * conformance vector of the V2 encoding, hostile encodings, the log writer and
 * reader, accumulation, merge, and the Java-style numbers and .hgrm table the log tools print (a
 * golden table printed by the Java reference). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/rng.h"
#include "hlog/base64.h"
#include "hlog/codec.h"
#include "hlog/hlog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define HOUR_NS 3600000000000LL

/* ---- helpers ----------------------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

/* An uncompressed V2 encoding with the given header fields and varint payload. */
static size_t make_v2(uint8_t *buf, uint32_t cookie, uint32_t payload_len_field, int32_t nio, int32_t digits,
                      int64_t lowest, int64_t highest, double ratio, const int64_t *vals, size_t nvals)
{
    uint8_t *p = buf + HLOG_V2_HEADER_BYTES;
    for (size_t i = 0; i < nvals; i++)
        p += hlog_varint_put(p, vals[i]);
    size_t payload = (size_t)(p - (buf + HLOG_V2_HEADER_BYTES));
    put32(buf, cookie);
    put32(buf + 4, payload_len_field == UINT32_MAX ? (uint32_t)payload : payload_len_field);
    put32(buf + 8, (uint32_t)nio);
    put32(buf + 12, (uint32_t)digits);
    put64(buf + 16, (uint64_t)lowest);
    put64(buf + 24, (uint64_t)highest);
    uint64_t bits;
    memcpy(&bits, &ratio, sizeof bits);
    put64(buf + 32, bits);
    return HLOG_V2_HEADER_BYTES + payload;
}

/* Wrap raw bytes as a compressed V2 encoding (cookie, length, zlib stream). */
static size_t make_compressed(uint8_t *out, size_t cap, const uint8_t *raw, size_t raw_len)
{
    uLongf zlen = (uLongf)(cap - 8);
    assert_int_equal(compress2(out + 8, &zlen, raw, (uLong)raw_len, 1), Z_OK);
    put32(out, HLOG_V2_COMPRESSED_COOKIE);
    put32(out + 4, (uint32_t)zlen);
    return 8 + zlen;
}

static void fill_random(struct hdr *h, uint64_t seed, int n)
{
    struct rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        double v = rng_lognormal(&r, log(2e6), 1.0);
        int64_t x = (int64_t)v;
        if (x > h->highest)
            x = h->highest;
        assert_int_equal(hdr_record(h, x, 1 + (int64_t)rng_below(&r, 3)), 0);
    }
}

static void assert_same_counts(const struct hdr *a, const struct hdr *b)
{
    assert_int_equal(a->lowest, b->lowest);
    assert_int_equal(a->highest, b->highest);
    assert_int_equal(a->sig_digits, b->sig_digits);
    assert_int_equal(a->counts_len, b->counts_len);
    assert_int_equal(a->total_count, b->total_count);
    assert_int_equal(hdr_max(a), hdr_max(b));
    assert_int_equal(hdr_min(a), hdr_min(b));
    assert_memory_equal(a->counts, b->counts, a->counts_len * sizeof(int64_t));
}

static char *slurp(FILE *f)
{
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    return s;
}

/* ---- base64 ------------------------------------------------------------------------------ */

static void test_base64_rfc4648_vectors(void **state)
{
    (void)state;
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        char enc[32];
        uint8_t dec[32];
        size_t n = strlen(in[i]), got;
        assert_int_equal(base64_encode((const uint8_t *)in[i], n, enc), strlen(out[i]));
        assert_string_equal(enc, out[i]);
        assert_int_equal(base64_decode(out[i], strlen(out[i]), dec, &got, NULL), 0);
        assert_int_equal(got, n);
        assert_memory_equal(dec, in[i], n);
    }
    /* every byte value survives */
    uint8_t all[256], back[256];
    char text[400];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    size_t tn = base64_encode(all, 256, text), got;
    assert_int_equal(base64_decode(text, tn, back, &got, NULL), 0);
    assert_int_equal(got, 256);
    assert_memory_equal(all, back, 256);
}

static void test_base64_rejects(void **state)
{
    (void)state;
    uint8_t out[32];
    size_t n, at;
    assert_int_equal(base64_decode("Zm9", 3, out, &n, &at), KNEE_EFORMAT); /* not a multiple of 4 */
    assert_int_equal(base64_decode("Zm*v", 4, out, &n, &at), KNEE_EFORMAT);
    assert_int_equal(at, 2);
    assert_int_equal(base64_decode("Zg==Zm9v", 8, out, &n, &at), KNEE_EFORMAT); /* padding mid-text */
    assert_int_equal(base64_decode("Z===", 4, out, &n, &at), KNEE_EFORMAT);
    assert_int_equal(base64_decode("Zm=v", 4, out, &n, &at), KNEE_EFORMAT);
    assert_int_equal(base64_decode("Zh==", 4, out, &n, &at), KNEE_EFORMAT); /* non-zero pad bits */
    assert_int_equal(base64_decode("Zm9vYmF=", 8, out, &n, &at), KNEE_EFORMAT);
    assert_int_equal(base64_decode("Zm 9", 4, out, &n, &at), KNEE_EFORMAT);
}

/* ---- varints ----------------------------------------------------------------------------- */

static void test_varint_known_bytes(void **state)
{
    (void)state;
    uint8_t b[9];
    assert_int_equal(hlog_varint_put(b, 0), 1);
    assert_int_equal(b[0], 0x00);
    assert_int_equal(hlog_varint_put(b, -1), 1);
    assert_int_equal(b[0], 0x01);
    assert_int_equal(hlog_varint_put(b, 1), 1);
    assert_int_equal(b[0], 0x02);
    assert_int_equal(hlog_varint_put(b, 63), 1);
    assert_int_equal(b[0], 0x7e);
    assert_int_equal(hlog_varint_put(b, 64), 2);
    assert_int_equal(b[0], 0x80);
    assert_int_equal(b[1], 0x01);
    assert_int_equal(hlog_varint_put(b, -82), 2); /* from the conformance vector: a run of 82 zeros */
    assert_int_equal(b[0], 0xa3);
    assert_int_equal(b[1], 0x01);
    /* 9 bytes: the 9th carries 8 bits and no continuation bit */
    assert_int_equal(hlog_varint_put(b, INT64_MAX), 9); /* zigzag 0xff..fe */
    assert_int_equal(b[0], 0xfe);
    for (int i = 1; i < 9; i++)
        assert_int_equal(b[i], 0xff);
    assert_int_equal(hlog_varint_put(b, INT64_MIN), 9);
    assert_int_equal(b[0], 0xff);
    assert_int_equal(b[8], 0xff);
    int64_t v;
    assert_int_equal(hlog_varint_get(b, 9, &v), 9);
    assert_int_equal(v, INT64_MIN);
    assert_int_equal(hlog_varint_get(b, 8, &v), 0); /* truncated */
    assert_int_equal(hlog_varint_get(b, 0, &v), 0);
}

static void test_varint_roundtrip(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 99);
    for (int i = 0; i < 200000; i++) {
        int shift = (int)rng_below(&r, 64);
        int64_t v = (int64_t)(rng_next(&r) >> shift);
        if (i & 1)
            v = -v;
        if (i % 1000 == 0)
            v = i % 3000 == 0 ? INT64_MIN : INT64_MAX;
        uint8_t b[9];
        size_t n = hlog_varint_put(b, v);
        int64_t back;
        assert_int_equal(hlog_varint_get(b, n, &back), n);
        assert_int_equal(back, v);
        assert_int_equal(hlog_varint_get(b, n - 1, &back), 0);
    }
}

/* ---- the conformance vector (§4.6) ------------------------------------------------------- */

static const char vector_b64[] =
    "HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBEJISEuATEZMQ4uASkhIR4nrxg9v2lMaxhvMekILGZkKmcCAEf2CsI=";
static const int64_t vector_varints[] = {12, 9,  9,  5,  8,  11,  14, 11,  4,  5, 8,   13, 9,   9, 6,
                                         33, 37, 46, 23, 39, 139, 86, 173, 22, 8, -82, 1,  -60, 1};

static void test_vector_decodes_exactly(void **state)
{
    (void)state;
    struct hlog_codec *c = hlog_codec_new();
    uint8_t bin[256];
    size_t n;
    assert_int_equal(base64_decode(vector_b64, strlen(vector_b64), bin, &n, NULL), 0);
    assert_int_equal(n, 8 + 69);
    const uint8_t *raw;
    size_t raw_len;
    char why[256];
    assert_int_equal(hlog_inflate(c, bin, n, &raw, &raw_len, why, sizeof why), 0);
    struct hlog_v2_header hd;
    hlog_v2_header_parse(raw, &hd);
    assert_int_equal(hd.cookie, 0x1c849313u);
    assert_int_equal(hd.payload_len, 33);
    assert_int_equal(hd.normalizing_index_offset, 0);
    assert_int_equal(hd.sig_digits, 2);
    assert_int_equal(hd.lowest, 20000);
    assert_int_equal(hd.highest, HOUR_NS);
    assert_true(hd.int_to_double_ratio == 1.0);
    assert_int_equal(raw_len, 40 + 33);
    /* the varints, exactly */
    size_t at = 40, k = 0;
    while (at < raw_len) {
        int64_t v;
        size_t used = hlog_varint_get(raw + at, raw_len - at, &v);
        assert_true(used > 0);
        assert_true(k < sizeof vector_varints / sizeof vector_varints[0]);
        assert_int_equal(v, vector_varints[k]);
        at += used;
        k++;
    }
    assert_int_equal(k, sizeof vector_varints / sizeof vector_varints[0]);

    struct hdr h;
    assert_int_equal(hlog_decode_base64(c, vector_b64, strlen(vector_b64), &h, why, sizeof why), 0);
    assert_int_equal(h.total_count, 741);
    assert_int_equal(h.sig_digits, 2);
    assert_int_equal(h.lowest, 20000);
    assert_int_equal(h.highest, HOUR_NS);
    size_t top = h.counts_len;
    while (h.counts[top - 1] == 0)
        top--;
    assert_int_equal(hdr_value_from_index(&h, top - 1), 2752512);
    assert_int_equal(hdr_max(&h), 2768895); /* the line's max column 2.769 ms */

    /* re-encode: the uncompressed bytes equal the Java encoder's, byte for byte */
    uint8_t java_raw[73];
    memcpy(java_raw, raw, 73);
    const uint8_t *mine;
    size_t mine_len;
    assert_int_equal(hlog_encode(c, &h, false, &mine, &mine_len), 0);
    assert_int_equal(mine_len, 73);
    assert_memory_equal(mine, java_raw, 73);
    /* compressed: decodes to identical counts */
    const char *text;
    size_t tn;
    assert_int_equal(hlog_encode_base64(c, &h, &text, &tn), 0);
    assert_memory_equal(text, "HISTF", 5);
    char *copy = strdup(text);
    struct hdr back;
    assert_int_equal(hlog_decode_base64(c, copy, tn, &back, why, sizeof why), 0);
    assert_same_counts(&h, &back);
    free(copy);
    hdr_release(&back);
    hdr_release(&h);
    hlog_codec_free(c);
}

static void test_roundtrip_many_shapes(void **state)
{
    (void)state;
    struct hlog_codec *c = hlog_codec_new();
    const int64_t lowest[] = {1, 1, 1000, 1, 1};
    const int64_t highest[] = {HOUR_NS, 1000000, HOUR_NS, 100000000, 2};
    const int digits[] = {3, 1, 2, 5, 2};
    for (size_t k = 0; k < 5; k++) {
        struct hdr h;
        assert_int_equal(hdr_init(&h, lowest[k], highest[k], digits[k]), 0);
        if (k != 4)
            fill_random(&h, k + 1, 5000);
        else
            hdr_record(&h, 1, 3); /* tiny range */
        hdr_record(&h, 0, 2);     /* zeros at index 0 */
        for (int compressed = 0; compressed < 2; compressed++) {
            const uint8_t *bin;
            size_t n;
            assert_int_equal(hlog_encode(c, &h, compressed, &bin, &n), 0);
            uint8_t *copy = malloc(n);
            memcpy(copy, bin, n);
            struct hdr back;
            char why[256];
            assert_int_equal(hlog_decode(c, copy, n, &back, why, sizeof why), 0);
            assert_same_counts(&h, &back);
            hdr_release(&back);
            free(copy);
        }
        hdr_release(&h);
    }
    /* an empty histogram: header only, decodes to nothing */
    struct hdr e, back;
    hdr_init(&e, 1, HOUR_NS, 3);
    const uint8_t *bin;
    size_t n;
    assert_int_equal(hlog_encode(c, &e, false, &bin, &n), 0);
    assert_int_equal(n, 40);
    assert_int_equal(hlog_decode(c, bin, n, &back, NULL, 0), 0);
    assert_int_equal(back.total_count, 0);
    assert_int_equal(hdr_max(&back), 0);
    hdr_release(&back);
    hdr_release(&e);
    hlog_codec_free(c);
}

/* ---- hostile encodings ------------------------------------------------------------------- */

static int decode(const uint8_t *b, size_t n, char *why)
{
    struct hlog_codec *c = hlog_codec_new();
    struct hdr h;
    int r = hlog_decode(c, b, n, &h, why, 256);
    if (r == 0)
        hdr_release(&h);
    hlog_codec_free(c);
    return r;
}

static void test_decode_rejects_bad_headers(void **state)
{
    (void)state;
    uint8_t b[256];
    char why[256];
    int64_t one[] = {5};
    size_t n;
    n = make_v2(b, 0xdeadbeef, UINT32_MAX, 0, 3, 1, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_ECOOKIE);
    assert_non_null(strstr(why, "0xdeadbeef"));
    n = make_v2(b, 0x1c849301, UINT32_MAX, 0, 3, 1, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_EVERSION);
    n = make_v2(b, 0x0c72124e, UINT32_MAX, 0, 3, 1, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_EUNSUPPORTED);
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 4, 3, 1, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_EUNSUPPORTED);
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, 1, HOUR_NS, 2.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_EUNSUPPORTED);
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 0, 1, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_ERANGE);
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 6, 1, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_ERANGE);
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, 0, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_EFORMAT);
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, 100, 150, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_EFORMAT);
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, -5, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_EFORMAT);
    /* a range beyond knee's: 5 digits up to INT64_MAX needs ~6M counts */
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 5, 1, INT64_MAX, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_ERANGE);
    assert_non_null(strstr(why, "range exceeds knee's"));
    /* the index space beyond 62 bits */
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 5, (int64_t)1 << 50, INT64_MAX, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_ERANGE);
    /* too short for anything */
    assert_int_equal(decode(b, 3, why), KNEE_ETRUNC);
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, 1, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, 39, why), KNEE_ETRUNC);
}

static void test_decode_rejects_bad_payloads(void **state)
{
    (void)state;
    uint8_t b[256];
    char why[256];
    size_t n;
    /* payload length lies: more than present */
    int64_t one[] = {5};
    n = make_v2(b, HLOG_V2_COOKIE, 50, 0, 3, 1, HOUR_NS, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_ETRUNC);
    /* payload length larger than the counts array could ever need */
    n = make_v2(b, HLOG_V2_COOKIE, 0xffffffffu - 1, 0, 1, 1, 100, 1.0, one, 1);
    assert_int_equal(decode(b, n, why), KNEE_ETOOBIG);
    /* counts that overflow int64 */
    int64_t big[] = {INT64_MAX, INT64_MAX};
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, 1, HOUR_NS, 1.0, big, 2);
    assert_int_equal(decode(b, n, why), KNEE_EOVERFLOW);
    /* zero runs: past the end, and INT64_MIN which has no positive counterpart */
    int64_t run[] = {-(int64_t)100000000, 1};
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, 1, HOUR_NS, 1.0, run, 2);
    assert_int_equal(decode(b, n, why), KNEE_EFORMAT);
    int64_t minrun[] = {INT64_MIN};
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, 1, HOUR_NS, 1.0, minrun, 1);
    assert_int_equal(decode(b, n, why), KNEE_EFORMAT);
    /* a count beyond the highest trackable value: 2 digits, highest 1000 → 7 buckets of 64 */
    int64_t far[] = {-1000, 1};
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 2, 1, 1000, 1.0, far, 2);
    assert_int_equal(decode(b, n, why), KNEE_EFORMAT);
    /* a payload that ends inside a varint */
    int64_t v[] = {1, 300};
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, 1, HOUR_NS, 1.0, v, 2);
    put32(b + 4, 2); /* cut the 2-byte varint in half */
    assert_int_equal(decode(b, n, why), KNEE_ETRUNC);
    /* bad base64 */
    struct hlog_codec *c = hlog_codec_new();
    struct hdr h;
    assert_int_equal(hlog_decode_base64(c, "HISTF*AA", 8, &h, why, sizeof why), KNEE_EFORMAT);
    assert_non_null(strstr(why, "character 6"));
    assert_int_equal(hlog_decode_base64(c, "HISTFAA", 7, &h, why, sizeof why), KNEE_EFORMAT);
    hlog_codec_free(c);
}

static void test_decode_count_beyond_array(void **state)
{
    (void)state;
    /* exactly at the end of the counts array: index counts_len - 1 is fine, counts_len is not */
    struct hdr ref;
    assert_int_equal(hdr_init(&ref, 1, 1000, 2), 0);
    size_t len = ref.counts_len;
    hdr_release(&ref);
    uint8_t b[64];
    char why[256];
    int64_t last[] = {-(int64_t)(len - 1), 7};
    size_t n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 2, 1, 1000, 1.0, last, 2);
    assert_int_equal(decode(b, n, why), 0);
    int64_t past[] = {-(int64_t)len, 7};
    n = make_v2(b, HLOG_V2_COOKIE, UINT32_MAX, 0, 2, 1, 1000, 1.0, past, 2);
    assert_int_equal(decode(b, n, why), KNEE_ERANGE);
    assert_non_null(strstr(why, "beyond the highest trackable"));
}

static void test_decode_compressed_lies_and_bombs(void **state)
{
    (void)state;
    uint8_t raw[128], z[256];
    char why[256];
    int64_t v[] = {3, -10, 4};
    size_t rn = make_v2(raw, HLOG_V2_COOKIE, UINT32_MAX, 0, 3, 1, HOUR_NS, 1.0, v, 3);
    size_t zn = make_compressed(z, sizeof z, raw, rn);
    assert_int_equal(decode(z, zn, why), 0);
    /* compressed length longer than the bytes present */
    assert_int_equal(decode(z, zn - 1, why), KNEE_ETRUNC);
    /* the zlib stream cut short (length field adjusted to match) */
    uint8_t cut[256];
    memcpy(cut, z, zn);
    put32(cut + 4, (uint32_t)(zn - 8 - 6));
    int r = decode(cut, zn - 6, why);
    assert_true(r == KNEE_ETRUNC || r == KNEE_EFORMAT);
    /* corrupt deflate data / checksum */
    memcpy(cut, z, zn);
    cut[zn - 1] ^= 0xff;
    assert_int_equal(decode(cut, zn, why), KNEE_EFORMAT);
    /* inner payload length larger than the inflated data */
    put32(raw + 4, (uint32_t)(rn - 40 + 5));
    zn = make_compressed(z, sizeof z, raw, rn);
    assert_int_equal(decode(z, zn, why), KNEE_ETRUNC);
    /* inner payload length smaller than the inflated data: more than the header allows */
    put32(raw + 4, 1);
    zn = make_compressed(z, sizeof z, raw, rn);
    assert_int_equal(decode(z, zn, why), KNEE_ETOOBIG);
    /* the inner cookie must be the uncompressed V2 one */
    put32(raw + 4, (uint32_t)(rn - 40));
    put32(raw, HLOG_V2_COMPRESSED_COOKIE);
    zn = make_compressed(z, sizeof z, raw, rn);
    assert_int_equal(decode(z, zn, why), KNEE_ECOOKIE);
    /* inflates to less than a header */
    zn = make_compressed(z, sizeof z, raw, 20);
    assert_int_equal(decode(z, zn, why), KNEE_ETRUNC);

    /* a zip bomb: 64 MiB of zeros behind a header that promises 100 payload bytes. The decoder
     * inflates no more than the header allows and refuses the rest. */
    size_t bomb_len = (size_t)64 << 20;
    uint8_t *bomb = calloc(1, bomb_len);
    int64_t none[] = {0};
    make_v2(bomb, HLOG_V2_COOKIE, 100, 0, 3, 1, HOUR_NS, 1.0, none, 0);
    size_t cap = compressBound((uLong)bomb_len) + 8;
    uint8_t *zb = malloc(cap);
    size_t zbn = make_compressed(zb, cap, bomb, bomb_len);
    assert_true(zbn < bomb_len / 100);
    assert_int_equal(decode(zb, zbn, why), KNEE_ETOOBIG);
    /* the same bomb with the largest payload length the parameters allow: zero bytes are
     * zero counts, one index each, so the array's end stops it */
    struct hdr ref;
    hdr_init(&ref, 1, HOUR_NS, 3);
    put32(bomb + 4, (uint32_t)(ref.counts_len * 9));
    hdr_release(&ref);
    zbn = make_compressed(zb, cap, bomb, bomb_len);
    assert_int_equal(decode(zb, zbn, why), KNEE_ERANGE);
    free(zb);
    free(bomb);
}

/* ---- writer and reader ------------------------------------------------------------------- */

static void test_writer_reader_roundtrip(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct hlog_writer *w;
    assert_int_equal(hlog_writer_open(&w, f, 1700000000.5, "a test\nlog"), 0);
    struct hdr h[3];
    const char *tags[3] = {NULL, "api", "db-1"};
    for (int i = 0; i < 3; i++) {
        hdr_init(&h[i], 1, HOUR_NS, 3);
        fill_random(&h[i], 10 + (uint64_t)i, 1000);
        assert_int_equal(hlog_writer_write(w, tags[i], 0.25 * i, 1.0, &h[i]), 0);
    }
    assert_int_equal(hlog_writer_write(w, "a,b", 0, 1, &h[0]), KNEE_EINVAL);
    assert_int_equal(hlog_writer_write(w, "a b", 0, 1, &h[0]), KNEE_EINVAL);
    assert_int_equal(hlog_writer_write(w, "", 0, 1, &h[0]), KNEE_EINVAL);
    assert_int_equal(hlog_writer_write(w, "x", NAN, 1, &h[0]), KNEE_EINVAL);
    assert_int_equal(hlog_writer_write(w, "x", 0, -1, &h[0]), KNEE_EINVAL);
    assert_int_equal(hlog_writer_close(w), 0);
    fclose(f);
    assert_true(strncmp(buf,
                        "#[a test log]\n#[Histogram log format version 1.3]\n#[StartTime: 1700000000.500 "
                        "(seconds since epoch), ",
                        100) == 0);
    assert_non_null(strstr(buf,
                           "\n#[BaseTime: 1700000000.500 (seconds since epoch)]\n\"StartTimestamp\","
                           "\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n0.000,1.000,"));
    assert_non_null(strstr(buf, "\nTag=api,0.250,1.000,"));
    assert_non_null(strstr(buf, "\nTag=db-1,0.500,1.000,"));

    f = fmemopen(buf, len, "r");
    struct hlog_reader *r = hlog_reader_new(f, "mem.hlog");
    struct hlog_entry e;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(hlog_reader_next(r, &e), 1);
        assert_int_equal(e.tagged, tags[i] != NULL);
        assert_string_equal(e.tag, tags[i] ? tags[i] : "");
        assert_true(e.timestamp_s == 0.25 * i);
        assert_true(e.offset_s == 0.25 * i);
        assert_true(e.start_s == 1700000000.5 + 0.25 * i);
        assert_true(e.length_s == 1.0);
        assert_int_equal(e.line, 6 + (size_t)i);
        /* the max column: the histogram's max in ms, to the millisecond's thousandth */
        assert_true(fabs(e.max_column - (double)hdr_max(&h[i]) / 1e6) <= 0.0005 + 1e-12);
        struct hdr back;
        assert_int_equal(hlog_reader_decode(r, &e, &back), 0);
        assert_same_counts(&h[i], &back);
        hdr_release(&back);
        hdr_release(&h[i]);
    }
    assert_int_equal(hlog_reader_next(r, &e), 0);
    assert_true(hlog_reader_start_time(r) == 1700000000.5);
    hlog_reader_free(r);
    fclose(f);
    free(buf);
}

static struct hlog_reader *reader_on(const char *text, FILE **f)
{
    *f = fmemopen((void *)text, strlen(text), "r");
    return hlog_reader_new(*f, "t.hlog");
}

/* 3 counts at value 1 (1 ns..1 h, 3 digits), compressed by Python's zlib */
#define H "HISTFAAAACJ42pNpmSzMwMDAxAABzFCaEch0M9ixgMH+A1SEDQBXGwRT"

static void test_reader_time_rules(void **state)
{
    (void)state;
    FILE *f;
    struct hlog_entry e;
    /* no StartTime: the first timestamp is the start; absolute timestamps stay absolute */
    struct hlog_reader *r = reader_on("1441812279.474,1.0,2.0," H "\n1441812280.474,1.0,2.0," H "\n", &f);
    assert_int_equal(hlog_reader_next(r, &e), 1);
    assert_true(e.start_s == 1441812279.474);
    assert_true(e.offset_s == 0);
    assert_int_equal(hlog_reader_next(r, &e), 1);
    assert_true(fabs(e.offset_s - 1.0) < 1e-6);
    hlog_reader_free(r);
    fclose(f);
    /* StartTime without BaseTime, small timestamps: relative to StartTime */
    r = reader_on("#[StartTime: 1441812279.474 (seconds since epoch), Wed Sep 09 08:24:39 PDT 2015]\n"
                  "0.127,1.007,2.769," H "\n",
                  &f);
    assert_int_equal(hlog_reader_next(r, &e), 1);
    assert_true(e.start_s == 1441812279.474 + 0.127);
    assert_true(e.offset_s == 0.127);
    hlog_reader_free(r);
    fclose(f);
    /* StartTime and absolute timestamps within a year: absolute */
    r = reader_on("#[StartTime: 1000000000.0]\n1000000005.0,1,2," H "\n", &f);
    assert_int_equal(hlog_reader_next(r, &e), 1);
    assert_true(e.start_s == 1000000005.0);
    assert_true(e.offset_s == 5.0);
    hlog_reader_free(r);
    fclose(f);
    /* explicit BaseTime; CRLF, blank lines, spaces as separators, comments and legend */
    r = reader_on("#[StartTime: 100.0]\r\n#[BaseTime: 90.0]\r\n\r\n# hello\r\n\"StartTimestamp\",\"x\"\r\n"
                  "Tag=A 20.5 1.0 2.0 " H "\r\n",
                  &f);
    assert_int_equal(hlog_reader_next(r, &e), 1);
    assert_true(e.start_s == 110.5);
    assert_true(e.offset_s == 10.5);
    assert_string_equal(e.tag, "A");
    assert_int_equal(e.line, 6);
    struct hdr h;
    assert_int_equal(hlog_reader_decode(r, &e, &h), 0);
    assert_int_equal(h.total_count, 3);
    hdr_release(&h);
    assert_int_equal(hlog_reader_next(r, &e), 0);
    hlog_reader_free(r);
    fclose(f);
}

static void expect_line_error(const char *text, int code, const char *needle)
{
    FILE *f;
    struct hlog_reader *r = reader_on(text, &f);
    struct hlog_entry e;
    int rc;
    while ((rc = hlog_reader_next(r, &e)) == 1) {
        struct hdr h;
        rc = hlog_reader_decode(r, &e, &h);
        if (rc)
            break;
        hdr_release(&h);
    }
    if (rc != code || !strstr(hlog_reader_error(r), needle))
        fail_msg("'%s': got %d '%s', want %d containing '%s'", text, rc, hlog_reader_error(r), code, needle);
    hlog_reader_free(r);
    fclose(f);
}

static void test_reader_errors_name_the_line(void **state)
{
    (void)state;
    expect_line_error("#[StartTime: 1.0]\n0.0,1.0,2.0\n", KNEE_EFORMAT, "t.hlog:2: truncated line: 3 of 4");
    expect_line_error("0.0,1.0\n", KNEE_EFORMAT, "t.hlog:1: truncated line");
    expect_line_error("# c\n0.0,1.0,2.0," H ",extra\n", KNEE_EFORMAT, "t.hlog:2: more than 4 fields");
    expect_line_error("abc,1.0,2.0," H "\n", KNEE_EFORMAT, "t.hlog:1: bad start timestamp 'abc'");
    expect_line_error("0,-1.0,2.0," H "\n", KNEE_EFORMAT, "bad interval length");
    expect_line_error("0,1.0,nan," H "\n", KNEE_EFORMAT, "bad interval max");
    expect_line_error("Tag=,0,1.0,2.0," H "\n", KNEE_EFORMAT, "empty tag");
    expect_line_error("0,1,2,HISTF*AA\n", KNEE_EFORMAT, "t.hlog:1: histogram: bad base64");
    /* a line cut short: valid base64, but fewer bytes than the encoding's length field says */
    expect_line_error("0,1,2," H "\n0,1,2,HISTFAAAACF42pNpmSzMwMDAxAAB\n", KNEE_ETRUNC,
                      "t.hlog:2: histogram: compressed length 33 but only 13 bytes follow");
    expect_line_error("0,1,2,HISTFAAAACF42pNpmSzMwMDAxAA\n", KNEE_EFORMAT, "t.hlog:1: histogram: base64 length");
    expect_line_error("0,1,2,AAAAAAAAAAAA\n", KNEE_ECOOKIE, "t.hlog:1: histogram: cookie 0x00000000");
    static const char nul[] = "0,1,2,\0AAA\n";
    FILE *f = fmemopen((void *)nul, sizeof nul - 1, "r");
    struct hlog_reader *r = hlog_reader_new(f, "n.hlog");
    struct hlog_entry e;
    assert_int_equal(hlog_reader_next(r, &e), KNEE_EFORMAT);
    assert_non_null(strstr(hlog_reader_error(r), "n.hlog:1: NUL byte"));
    hlog_reader_free(r);
    fclose(f);
}

static void test_reader_line_cap(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    for (size_t i = 0; i < HLOG_LINE_MAX / 4096 + 2; i++) {
        char block[4096];
        memset(block, 'A', sizeof block);
        fwrite(block, 1, sizeof block, f);
    }
    rewind(f);
    struct hlog_reader *r = hlog_reader_new(f, "long.hlog");
    struct hlog_entry e;
    assert_int_equal(hlog_reader_next(r, &e), KNEE_ETOOBIG);
    assert_non_null(strstr(hlog_reader_error(r), "long.hlog:1: line longer than"));
    hlog_reader_free(r);
    fclose(f);
}

/* ---- accumulation and merge -------------------------------------------------------------- */

static void test_acc_exact_and_growing(void **state)
{
    (void)state;
    struct hdr a, b, m, all;
    hdr_init(&a, 1, 10000, 3);
    hdr_init(&b, 1, HOUR_NS, 3);
    hdr_init(&all, 1, HOUR_NS, 3);
    fill_random(&a, 1, 100);
    for (int i = 0; i < 100; i++)
        hdr_record(&a, i, 1);
    fill_random(&b, 2, 3000);
    hdr_add(&all, &a);
    hdr_add(&all, &b);
    struct hlog_acc acc;
    hlog_acc_init(&acc);
    assert_int_equal(hlog_acc_add(&acc, &a, NULL, 0), 0);
    /* a's range, stretched to its max (the top of 10000's bucket: 10007) */
    assert_int_equal(hdr_max(&a), 10007);
    assert_int_equal(acc.h.highest, 10007);
    assert_int_equal(acc.h.bucket_count, a.bucket_count);
    assert_int_equal(hlog_acc_add(&acc, &b, NULL, 0), 0);
    /* grew to cover b's max, as the reference's auto-resize does */
    assert_int_equal(acc.h.highest, hdr_max(&b));
    assert_int_equal(acc.h.total_count, all.total_count);
    assert_int_equal(hdr_max(&acc.h), hdr_max(&all));
    for (size_t i = 0; i < acc.h.counts_len; i++)
        assert_int_equal(acc.h.counts[i], all.counts[i]);
    for (size_t i = acc.h.counts_len; i < all.counts_len; i++)
        assert_int_equal(all.counts[i], 0);
    hdr_init(&m, 1, HOUR_NS, 2);
    hdr_record(&m, 5, 1);
    char why[256];
    assert_int_equal(hlog_acc_add(&acc, &m, why, sizeof why), KNEE_EMISMATCH);
    assert_non_null(strstr(why, "2 significant digits"));
    hdr_release(&m);
    /* the total would pass INT64_MAX */
    hdr_init(&m, 1, HOUR_NS, 3);
    hdr_record(&m, 5, INT64_MAX - 10);
    assert_int_equal(hlog_acc_add(&acc, &m, why, sizeof why), KNEE_EOVERFLOW);
    hdr_release(&m);
    hlog_acc_release(&acc);
    hdr_release(&a);
    hdr_release(&b);
    hdr_release(&all);
}

static void write_log(const char *path, double start, uint64_t seed, int intervals, int digits, int64_t big)
{
    FILE *f = fopen(path, "w");
    struct hlog_writer *w;
    assert_int_equal(hlog_writer_open(&w, f, start, NULL), 0);
    struct hdr h;
    hdr_init(&h, 1, HOUR_NS, digits);
    for (int i = 0; i < intervals; i++) {
        hdr_reset(&h);
        fill_random(&h, seed * 1000 + (uint64_t)i, 300);
        if (big)
            hdr_record(&h, 1000, big);
        assert_int_equal(hlog_writer_write(w, NULL, i, 1.0, &h), 0);
        assert_int_equal(hlog_writer_write(w, "x", i, 1.0, &h), 0);
    }
    hdr_release(&h);
    assert_int_equal(hlog_writer_close(w), 0);
    fclose(f);
}

/* Sum every interval of tag (NULL: untagged) in path. */
static void sum_log(const char *path, const char *tag, struct hlog_acc *acc, size_t *intervals)
{
    FILE *f = fopen(path, "r");
    struct hlog_reader *r = hlog_reader_new(f, path);
    struct hlog_entry e;
    *intervals = 0;
    while (hlog_reader_next(r, &e) == 1) {
        if (tag ? !e.tagged || strcmp(e.tag, tag) : e.tagged)
            continue;
        struct hdr h;
        assert_int_equal(hlog_reader_decode(r, &e, &h), 0);
        assert_int_equal(hlog_acc_add(acc, &h, NULL, 0), 0);
        hdr_release(&h);
        (*intervals)++;
    }
    hlog_reader_free(r);
    fclose(f);
}

static void test_merge_exact_and_aligned(void **state)
{
    (void)state;
    char a[] = "/tmp/test_hlog_aXXXXXX", b[] = "/tmp/test_hlog_bXXXXXX", m[] = "/tmp/test_hlog_mXXXXXX";
    close(mkstemp(a));
    close(mkstemp(b));
    close(mkstemp(m));
    write_log(a, 1000.0, 1, 10, 3, 0);
    write_log(b, 1000.3, 2, 10, 3, 0); /* 0.3 s later: midpoints share a slot */
    const char *in[] = {a, b};
    char err[512];
    FILE *f = fopen(m, "w");
    assert_int_equal(hlog_merge(f, in, 2, 1.0, err, sizeof err), 0);
    fclose(f);
    for (int t = 0; t < 2; t++) {
        const char *tag = t ? "x" : NULL;
        struct hlog_acc want, got;
        hlog_acc_init(&want);
        hlog_acc_init(&got);
        size_t na, nb, nm;
        sum_log(a, tag, &want, &na);
        sum_log(b, tag, &want, &nb);
        sum_log(m, tag, &got, &nm);
        assert_int_equal(na, 10);
        assert_int_equal(nm, 10);
        assert_int_equal(got.h.total_count, want.h.total_count);
        assert_memory_equal(got.h.counts, want.h.counts, got.h.counts_len * sizeof(int64_t));
        hlog_acc_release(&want);
        hlog_acc_release(&got);
    }
    /* merged intervals span both inputs' intervals: start 0.000 (StartTime 1000), length 1.3 */
    f = fopen(m, "r");
    char *text = slurp(f);
    fclose(f);
    assert_non_null(strstr(text, "#[StartTime: 1000.000 "));
    assert_non_null(strstr(text, "\n0.000,1.300,"));
    assert_non_null(strstr(text, "\nTag=x,9.000,1.300,"));
    free(text);
    /* a slot of 2 s halves the intervals */
    f = fopen(m, "w");
    assert_int_equal(hlog_merge(f, in, 2, 2.0, err, sizeof err), 0);
    fclose(f);
    struct hlog_acc got;
    hlog_acc_init(&got);
    size_t nm;
    sum_log(m, "x", &got, &nm);
    assert_int_equal(nm, 5);
    hlog_acc_release(&got);
    unlink(a);
    unlink(b);
    unlink(m);
}

/* Java records any value its counts array covers, even above highestTrackableValue:
 * Histogram(1, 1000000, 3) holding 1040000 (encoded by Java, default zlib level). Decoding,
 * summing and merging keep that count. */
static const char above_highest_b64[] = "HISTFAAAACN4nJNpmSzMwMDAwgABzFCaEUzyOznYf4AI3F3PyAQAUdcEng==";

static void test_counts_above_highest_survive(void **state)
{
    (void)state;
    struct hlog_codec *c = hlog_codec_new();
    struct hdr h;
    char why[256];
    assert_int_equal(hlog_decode_base64(c, above_highest_b64, strlen(above_highest_b64), &h, why, sizeof why), 0);
    assert_int_equal(h.highest, 1000000);
    assert_int_equal(h.total_count, 1);
    assert_int_equal(hdr_max(&h), 1040383);
    struct hlog_acc acc;
    hlog_acc_init(&acc);
    assert_int_equal(hlog_acc_add(&acc, &h, why, sizeof why), 0);
    assert_int_equal(hlog_acc_add(&acc, &h, why, sizeof why), 0);
    assert_int_equal(acc.h.total_count, 2);
    assert_int_equal(acc.h.overflow_count, 0);
    assert_int_equal(hdr_max(&acc.h), 1040383);
    assert_int_equal(acc.h.bucket_count, h.bucket_count);
    hlog_acc_release(&acc);

    char in[] = "/tmp/test_hlog_hXXXXXX", out[] = "/tmp/test_hlog_oXXXXXX";
    close(mkstemp(in));
    close(mkstemp(out));
    FILE *f = fopen(in, "w");
    fprintf(f, "#[StartTime: 10.000]\n0.000,1.000,1.040,%s\n0.100,1.000,1.040,%s\n", above_highest_b64,
            above_highest_b64);
    fclose(f);
    const char *ins[] = {in};
    f = fopen(out, "w");
    assert_int_equal(hlog_merge(f, ins, 1, 1.0, why, sizeof why), 0);
    fclose(f);
    struct hlog_acc got;
    hlog_acc_init(&got);
    size_t n;
    sum_log(out, NULL, &got, &n);
    assert_int_equal(n, 1);
    assert_int_equal(got.h.total_count, 2);
    assert_int_equal(hdr_max(&got.h), 1040383);
    hlog_acc_release(&got);
    hdr_release(&h);
    hlog_codec_free(c);
    unlink(in);
    unlink(out);
}

static void test_merge_refuses(void **state)
{
    (void)state;
    char a[] = "/tmp/test_hlog_aXXXXXX", b[] = "/tmp/test_hlog_bXXXXXX";
    close(mkstemp(a));
    close(mkstemp(b));
    write_log(a, 1000.0, 1, 3, 3, 0);
    write_log(b, 1000.0, 2, 3, 2, 0);
    const char *in[] = {a, b};
    char err[512], want[600];
    FILE *out = tmpfile();
    assert_int_equal(hlog_merge(out, in, 2, 1.0, err, sizeof err), KNEE_EMISMATCH);
    snprintf(want, sizeof want, "%s:6: 2 significant digits, lowest value 1, but %s:6 (same tag) has 3 and 1", b, a);
    if (!strstr(err, want))
        fail_msg("got '%s'\nwant '%s'", err, want);
    fclose(out);
    /* counts that overflow when summed */
    write_log(a, 1000.0, 1, 1, 3, INT64_MAX / 2);
    write_log(b, 1000.0, 2, 1, 3, INT64_MAX / 2);
    out = tmpfile();
    assert_int_equal(hlog_merge(out, in, 2, 1.0, err, sizeof err), KNEE_EOVERFLOW);
    assert_non_null(strstr(err, "pass 2^63-1"));
    fclose(out);
    /* a missing file and an empty one */
    const char *missing[] = {"/nonexistent/x.hlog"};
    out = tmpfile();
    assert_true(hlog_merge(out, missing, 1, 1.0, err, sizeof err) < 0);
    assert_non_null(strstr(err, "/nonexistent/x.hlog"));
    FILE *e = fopen(a, "w");
    fclose(e);
    const char *empty[] = {a};
    assert_int_equal(hlog_merge(out, empty, 1, 1.0, err, sizeof err), KNEE_EEMPTY);
    fclose(out);
    unlink(a);
    unlink(b);
}

/* ---- Java-compatible numbers and the .hgrm printer (hist/hdr's, which the .hlog lines and
 * `knee hlog show` rely on to match the reference character for character) ------------------ */

static void test_java_numbers(void **state)
{
    (void)state;
    /* expected strings printed by Java 17's String.format(Locale.US, ...) */
    struct {
        double v;
        int prec;
        const char *want;
    } cases[] = {
        {1.005, 3, "1.005"},
        {1.005, 2, "1.01"},
        {0.15, 1, "0.2"},
        {1.0625, 3, "1.063"},
        {1.0625, 2, "1.06"},
        {0.45, 1, "0.5"},
        {0.25, 1, "0.3"},
        {0.35, 1, "0.4"},
        {2.0004999999999997, 3, "2.000"},
        {999.9996, 3, "1000.000"},
        {999.9996, 0, "1000"},
        {0.0, 3, "0.000"},
        {0.0004, 3, "0.000"},
        {0.0005, 3, "0.001"},
        {0.0005, 2, "0.00"},
        {123456.789, 2, "123456.79"},
        {123456.789, 0, "123457"},
        {9.995, 2, "10.00"},
        {-0.0001, 3, "-0.000"},
        {5e-324, 3, "0.000"},
        {0.0625, 12, "0.062500000000"},
        {1.0 / 3, 12, "0.333333333333"},
        {2768895 / 1e6, 3, "2.769"},
        {0.45, 20, "0.45000000000000000000"},
        {1e15, 2, "1000000000000000.00"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char b[64];
        hdr_java_fixed(b, sizeof b, cases[i].v, cases[i].prec);
        if (strcmp(b, cases[i].want) != 0)
            fail_msg("%.17g %%.%df: got '%s', Java prints '%s'", cases[i].v, cases[i].prec, b, cases[i].want);
    }
    char b[32];
    hdr_java_fixed(b, sizeof b, NAN, 3);
    assert_string_equal(b, "NaN");
    hdr_java_fixed(b, sizeof b, INFINITY, 3);
    assert_string_equal(b, "Infinity");
    hdr_java_fixed(b, sizeof b, -INFINITY, 3);
    assert_string_equal(b, "-Infinity");
}

/* Printed by the Java reference: Histogram(1, 3600000000000, 3) with 1000..10000 step 1000,
 * 1500000 x5, 2048 and 0; outputPercentileDistribution(out, 2, 1000.0). */
static const char java_golden[] = "       Value     Percentile TotalCount 1/(1-Percentile)\n"
                                  "\n"
                                  "       0.000 0.000000000000          1           1.00\n"
                                  "       3.001 0.250000000000          5           1.33\n"
                                  "       7.003 0.500000000000          9           2.00\n"
                                  "       9.007 0.625000000000         11           2.67\n"
                                  "    1500.159 0.750000000000         17           4.00\n"
                                  "    1500.159 1.000000000000         17\n"
                                  "#[Mean    =      444.430, StdDeviation   =      681.146]\n"
                                  "#[Max     =     1500.159, Total count    =           17]\n"
                                  "#[Buckets =           32, SubBuckets     =         2048]\n";

static void test_printer_golden(void **state)
{
    (void)state;
    struct hdr h;
    hdr_init(&h, 1, HOUR_NS, 3);
    for (int i = 1; i <= 10; i++)
        hdr_record(&h, i * 1000, 1);
    hdr_record(&h, 1500000, 5);
    hdr_record(&h, 2048, 1);
    hdr_record(&h, 0, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(hdr_percentiles_print(f, &h, 2, 1000.0, false), 0);
    fclose(f);
    assert_string_equal(buf, java_golden);
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(hdr_percentiles_print(f, &h, 2, 1000.0, true), 0);
    fclose(f);
    assert_non_null(
        strstr(buf, "\"Value\",\"Percentile\",\"TotalCount\",\"1/(1-Percentile)\"\n0.000,0.000000000000,1,1.00\n"));
    assert_non_null(strstr(buf, "\n1500.159,1.000000000000,17,Infinity\n"));
    free(buf);
    hdr_release(&h);
}

/* The stream tags of knee run --hlog --stream: their kind and target by prefix; anything else
 * (untagged included) is latency, its target the tag itself. */
static void test_tag_kind(void **state)
{
    (void)state;
    const char *t = NULL;
    assert_int_equal(hlog_tag_kind("first_event/api", &t), HLOG_TAG_KIND_FIRST_EVENT);
    assert_string_equal(t, "api");
    assert_int_equal(hlog_tag_kind("event_gap/a/b", &t), HLOG_TAG_KIND_EVENT_GAP);
    assert_string_equal(t, "a/b");
    assert_int_equal(hlog_tag_kind("api", &t), HLOG_TAG_LATENCY);
    assert_string_equal(t, "api");
    assert_int_equal(hlog_tag_kind("first_event", NULL), HLOG_TAG_LATENCY); /* no '/': a target's name */
    assert_int_equal(hlog_tag_kind(NULL, &t), HLOG_TAG_LATENCY);
    assert_null(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64_rfc4648_vectors),
        cmocka_unit_test(test_base64_rejects),
        cmocka_unit_test(test_varint_known_bytes),
        cmocka_unit_test(test_varint_roundtrip),
        cmocka_unit_test(test_vector_decodes_exactly),
        cmocka_unit_test(test_roundtrip_many_shapes),
        cmocka_unit_test(test_decode_rejects_bad_headers),
        cmocka_unit_test(test_decode_rejects_bad_payloads),
        cmocka_unit_test(test_decode_count_beyond_array),
        cmocka_unit_test(test_decode_compressed_lies_and_bombs),
        cmocka_unit_test(test_writer_reader_roundtrip),
        cmocka_unit_test(test_reader_time_rules),
        cmocka_unit_test(test_reader_errors_name_the_line),
        cmocka_unit_test(test_reader_line_cap),
        cmocka_unit_test(test_acc_exact_and_growing),
        cmocka_unit_test(test_merge_exact_and_aligned),
        cmocka_unit_test(test_counts_above_highest_survive),
        cmocka_unit_test(test_merge_refuses),
        cmocka_unit_test(test_java_numbers),
        cmocka_unit_test(test_printer_golden),
        cmocka_unit_test(test_tag_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
