/* HdrHistogram V2 encoding and decoding (uncompressed and zlib), from the byte layout of the
 * V2 encoding (the Java reference's encodeIntoByteBuffer). Byte-for-byte, the uncompressed form
 * knee writes equals the Java reference's for the same counts: a single zero count is written
 * as 0 and runs of two or more zeros as one negative length, exactly as
 * fillBufferFromCountsArray does. */
#include "hlog/codec.h"

#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "hlog/base64.h"

#define COOKIE_BASE(c) ((c) & ~0xf0u)
#define V2_BASE 0x1c849303u
#define V2_COMPRESSED_BASE 0x1c849304u
#define V1_BASE 0x1c849301u
#define V1_COMPRESSED_BASE 0x1c849302u
#define V0_BASE 0x1c849308u
#define V0_COMPRESSED_BASE 0x1c849309u
#define DOUBLE_COOKIE 0x0c72124eu
#define DOUBLE_COMPRESSED_COOKIE 0x0c72124fu
/* Inflate in windows of this size: the payload is parsed as it streams out of zlib, so a
 * decode never holds the whole inflated payload. */
#define INFLATE_WINDOW 65536

struct hlog_codec {
    z_stream def, inf;
    bool def_ready, inf_ready;
    uint8_t *raw; /* uncompressed encoding (encode) or inflated copy (hlog_inflate) */
    size_t raw_cap;
    uint8_t *zbuf; /* compressed encoding, then room for its base64 */
    size_t zbuf_cap;
    char *text;
    size_t text_cap;
    uint8_t *bin; /* decoded base64 */
    size_t bin_cap;
    bool *out_ready; /* hlog_decode_reuse: the target holds a histogram */
    uint8_t window[INFLATE_WINDOW + HLOG_VARINT_MAX_BYTES];
};

static void grow(void **buf, size_t *cap, size_t need)
{
    if (*cap >= need)
        return;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    *buf = xrealloc(*buf, n);
    *cap = n;
}

struct hlog_codec *hlog_codec_new(void)
{
    return xcalloc(1, sizeof(struct hlog_codec));
}

void hlog_codec_free(struct hlog_codec *c)
{
    if (!c)
        return;
    if (c->def_ready)
        deflateEnd(&c->def);
    if (c->inf_ready)
        inflateEnd(&c->inf);
    free(c->raw);
    free(c->zbuf);
    free(c->text);
    free(c->bin);
    free(c);
}

/* ---- ZigZag LEB128-64b9B ---------------------------------------------------------------- */

size_t hlog_varint_put(uint8_t *p, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); /* zigzag; >> of a negative is arithmetic in gcc/clang */
    size_t n = 0;
    /* 7 bits per byte for up to 8 bytes; a 9th byte carries the top 8 bits whole */
    while (n < 8) {
        if (u < 0x80) {
            p[n++] = (uint8_t)u;
            return n;
        }
        p[n++] = (uint8_t)((u & 0x7f) | 0x80);
        u >>= 7;
    }
    p[n++] = (uint8_t)u;
    return n;
}

size_t hlog_varint_get(const uint8_t *p, size_t len, int64_t *v)
{
    uint64_t u = 0;
    size_t n = 0;
    for (;;) {
        if (n >= len)
            return 0;
        uint8_t b = p[n];
        if (n == 8) {
            u |= (uint64_t)b << 56;
            n++;
            break;
        }
        u |= (uint64_t)(b & 0x7f) << (7 * n);
        n++;
        if (!(b & 0x80))
            break;
    }
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return n;
}

/* ---- header ------------------------------------------------------------------------------- */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

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

void hlog_v2_header_parse(const uint8_t *p, struct hlog_v2_header *hd)
{
    hd->cookie = be32(p);
    hd->payload_len = be32(p + 4);
    hd->normalizing_index_offset = (int32_t)be32(p + 8);
    hd->sig_digits = (int32_t)be32(p + 12);
    hd->lowest = (int64_t)be64(p + 16);
    hd->highest = (int64_t)be64(p + 24);
    uint64_t bits = be64(p + 32);
    memcpy(&hd->int_to_double_ratio, &bits, sizeof bits);
}

/* ---- encode ------------------------------------------------------------------------------- */

static int encode_raw(struct hlog_codec *c, const struct hdr *h, size_t *raw_len)
{
    /* The payload runs to the highest non-zero count; scanning for it (rather than trusting
     * max_value) keeps a count from ever being dropped. */
    size_t top = h->counts_len;
    while (top > 0 && h->counts[top - 1] == 0)
        top--;
    grow((void **)&c->raw, &c->raw_cap, HLOG_V2_HEADER_BYTES + top * HLOG_VARINT_MAX_BYTES);
    uint8_t *p = c->raw + HLOG_V2_HEADER_BYTES;
    for (size_t i = 0; i < top;) {
        int64_t v = h->counts[i];
        if (v < 0)
            return KNEE_ENEG;
        if (v == 0) {
            size_t run = 1;
            while (i + run < top && h->counts[i + run] == 0)
                run++;
            p += hlog_varint_put(p, run == 1 ? 0 : -(int64_t)run);
            i += run;
        } else {
            p += hlog_varint_put(p, v);
            i++;
        }
    }
    size_t payload = (size_t)(p - (c->raw + HLOG_V2_HEADER_BYTES));
    put32(c->raw, HLOG_V2_COOKIE);
    put32(c->raw + 4, (uint32_t)payload);
    put32(c->raw + 8, 0);
    put32(c->raw + 12, (uint32_t)h->sig_digits);
    put64(c->raw + 16, (uint64_t)h->lowest);
    put64(c->raw + 24, (uint64_t)h->highest);
    double one = 1.0;
    uint64_t bits;
    memcpy(&bits, &one, sizeof bits);
    put64(c->raw + 32, bits);
    *raw_len = HLOG_V2_HEADER_BYTES + payload;
    return 0;
}

int hlog_encode(struct hlog_codec *c, const struct hdr *h, bool compressed, const uint8_t **out, size_t *out_len)
{
    size_t raw_len;
    int r = encode_raw(c, h, &raw_len);
    if (r)
        return r;
    if (!compressed) {
        *out = c->raw;
        *out_len = raw_len;
        return 0;
    }
    if (!c->def_ready) {
        memset(&c->def, 0, sizeof c->def);
        if (deflateInit(&c->def, Z_BEST_COMPRESSION) != Z_OK)
            return KNEE_EFORMAT;
        c->def_ready = true;
    } else {
        deflateReset(&c->def);
    }
    size_t bound = deflateBound(&c->def, (uLong)raw_len);
    grow((void **)&c->zbuf, &c->zbuf_cap, 8 + bound);
    c->def.next_in = c->raw;
    c->def.avail_in = (uInt)raw_len;
    c->def.next_out = c->zbuf + 8;
    c->def.avail_out = (uInt)bound;
    if (deflate(&c->def, Z_FINISH) != Z_STREAM_END)
        return KNEE_EFORMAT;
    size_t zlen = bound - c->def.avail_out;
    put32(c->zbuf, HLOG_V2_COMPRESSED_COOKIE);
    put32(c->zbuf + 4, (uint32_t)zlen);
    *out = c->zbuf;
    *out_len = 8 + zlen;
    return 0;
}

int hlog_encode_base64(struct hlog_codec *c, const struct hdr *h, const char **text, size_t *text_len)
{
    const uint8_t *bin;
    size_t n;
    int r = hlog_encode(c, h, true, &bin, &n);
    if (r)
        return r;
    grow((void **)&c->text, &c->text_cap, base64_encoded_len(n) + 1);
    *text_len = base64_encode(bin, n, c->text);
    *text = c->text;
    return 0;
}

/* ---- decode ------------------------------------------------------------------------------- */

/* Where decoded payload bytes go: into a histogram's counts (decode), or copied out
 * (hlog_inflate). The varint parser keeps its place across inflate windows. */
struct sink {
    struct hdr *h; /* decode: counts to fill */
    size_t index;  /* next counts index */
    int64_t total; /* running total_count */
    uint8_t *copy; /* inflate: destination, payload_len bytes */
    size_t copied;
};

/* Parse complete varints of p[0..n) into s->h; returns the bytes consumed (the rest is an
 * incomplete varint the next window completes) or a negative error. */
static long sink_counts(struct sink *s, const uint8_t *p, size_t n, char *why, size_t whylen)
{
    struct hdr *h = s->h;
    size_t at = 0;
    while (at < n) {
        int64_t v;
        size_t used = hlog_varint_get(p + at, n - at, &v);
        if (!used)
            break;
        at += used;
        if (v < 0) {
            /* a run of -v zero counts; v == INT64_MIN has no positive counterpart */
            if (v == INT64_MIN || (uint64_t)-v > h->counts_len - s->index)
                return knee_fail(why, whylen, KNEE_EFORMAT,
                                 "zero run of %lld counts runs past the %zu-entry counts array", (long long)v,
                                 h->counts_len);
            s->index += (size_t)-v;
            continue;
        }
        if (s->index >= h->counts_len)
            return knee_fail(why, whylen, KNEE_ERANGE,
                             "a count at index %zu lies beyond the highest trackable value %lld (counts array of %zu)",
                             s->index, (long long)h->highest, h->counts_len);
        if (v > INT64_MAX - s->total)
            return knee_fail(why, whylen, KNEE_EOVERFLOW, "counts sum beyond 2^63-1");
        s->total += v;
        h->counts[s->index++] = v;
    }
    return (long)at;
}

/* Check an inner (uncompressed) header and size the histogram it describes. */
static int check_header(const struct hlog_v2_header *hd, size_t *counts_len, char *why, size_t whylen)
{
    uint32_t base = COOKIE_BASE(hd->cookie);
    /* DoubleHistogram cookies carry no word-size nibble: compare them whole */
    if (hd->cookie == DOUBLE_COOKIE || hd->cookie == DOUBLE_COMPRESSED_COOKIE)
        return knee_fail(why, whylen, KNEE_EUNSUPPORTED, "a DoubleHistogram encoding (knee reads integer histograms)");
    if (base == V1_BASE || base == V0_BASE || base == V1_COMPRESSED_BASE || base == V0_COMPRESSED_BASE)
        return knee_fail(why, whylen, KNEE_EVERSION, "a V0/V1 encoding (cookie 0x%08x, HdrHistogram before 2.1)",
                         hd->cookie);
    if (base != V2_BASE)
        return knee_fail(why, whylen, KNEE_ECOOKIE, "cookie 0x%08x is not an HdrHistogram V2 encoding", hd->cookie);
    if (hd->normalizing_index_offset != 0)
        return knee_fail(why, whylen, KNEE_EUNSUPPORTED, "normalizing index offset %d (a shifted DoubleHistogram)",
                         hd->normalizing_index_offset);
    if (hd->int_to_double_ratio != 1.0)
        return knee_fail(why, whylen, KNEE_EUNSUPPORTED, "integer-to-double ratio %g (a DoubleHistogram)",
                         hd->int_to_double_ratio);
    if (hd->sig_digits < 1 || hd->sig_digits > 5)
        return knee_fail(why, whylen, KNEE_ERANGE, "%d significant digits (knee supports 1..5)", hd->sig_digits);
    if (hd->lowest < 1 || hd->highest / 2 < hd->lowest)
        return knee_fail(why, whylen, KNEE_EFORMAT, "lowest %lld / highest %lld trackable values are inconsistent",
                         (long long)hd->lowest, (long long)hd->highest);
    size_t bytes = hdr_memory_bytes(hd->lowest, hd->highest, hd->sig_digits);
    if (bytes == 0)
        return knee_fail(why, whylen, KNEE_ERANGE,
                         "lowest %lld, highest %lld at %d digits exceeds a 62-bit index space", (long long)hd->lowest,
                         (long long)hd->highest, hd->sig_digits);
    *counts_len = bytes / sizeof(int64_t);
    if (*counts_len > HLOG_MAX_COUNTS_LEN)
        return knee_fail(why, whylen, KNEE_ERANGE,
                         "range exceeds knee's: %lld..%lld at %d digits needs %zu counts (knee's limit %zu)",
                         (long long)hd->lowest, (long long)hd->highest, hd->sig_digits, *counts_len,
                         (size_t)HLOG_MAX_COUNTS_LEN);
    /* every payload entry advances at least one index and takes at most 9 bytes */
    if ((uint64_t)hd->payload_len > (uint64_t)*counts_len * HLOG_VARINT_MAX_BYTES)
        return knee_fail(why, whylen, KNEE_ETOOBIG, "payload length %u is more than %zu counts can take",
                         hd->payload_len, *counts_len);
    return 0;
}

/* Release a decode target after a failure (and mark a reused one as no longer ready). */
static void drop_out(struct hlog_codec *c, struct hdr *out)
{
    hdr_release(out);
    if (c->out_ready)
        *c->out_ready = false;
}

static int begin_sink(struct sink *s, const struct hlog_v2_header *hd, size_t counts_len, struct hdr *out,
                      struct hlog_codec *c, char *why, size_t whylen)
{
    memset(s, 0, sizeof *s);
    if (out) {
        if (c->out_ready && *c->out_ready) {
            /* hlog_decode_reuse: same parameters keep the memory (no allocation, no page
             * faults per interval); others start afresh */
            if (out->lowest == hd->lowest && out->highest == hd->highest && out->sig_digits == hd->sig_digits) {
                hdr_reset(out);
                s->h = out;
                return 0;
            }
            drop_out(c, out);
        }
        if (hdr_init(out, hd->lowest, hd->highest, hd->sig_digits) != 0)
            return knee_fail(why, whylen, KNEE_ERANGE, "histogram parameters %lld..%lld at %d digits rejected",
                             (long long)hd->lowest, (long long)hd->highest, hd->sig_digits);
        if (out->counts_len != counts_len) {
            hdr_release(out);
            return knee_fail(why, whylen, KNEE_ERANGE, "counts array size disagrees with the header");
        }
        if (c->out_ready)
            *c->out_ready = true;
        s->h = out;
    } else {
        grow((void **)&c->raw, &c->raw_cap, HLOG_V2_HEADER_BYTES + (size_t)hd->payload_len);
        s->copy = c->raw + HLOG_V2_HEADER_BYTES;
    }
    return 0;
}

/* Feed payload bytes p[0..n) to the sink; *keep receives how many trailing bytes form an
 * incomplete varint (decode) and must be presented again with more data. */
static int feed(struct sink *s, const uint8_t *p, size_t n, size_t *keep, char *why, size_t whylen)
{
    if (s->copy) {
        memcpy(s->copy + s->copied, p, n);
        s->copied += n;
        *keep = 0;
        return 0;
    }
    long used = sink_counts(s, p, n, why, whylen);
    if (used < 0)
        return (int)used;
    *keep = n - (size_t)used;
    return 0;
}

static int decode_plain(const uint8_t *buf, size_t len, struct hdr *out, struct hlog_codec *c, char *why, size_t whylen)
{
    if (len < HLOG_V2_HEADER_BYTES)
        return knee_fail(why, whylen, KNEE_ETRUNC, "%zu bytes, shorter than the 40-byte V2 header", len);
    struct hlog_v2_header hd;
    hlog_v2_header_parse(buf, &hd);
    size_t counts_len;
    int r = check_header(&hd, &counts_len, why, whylen);
    if (r)
        return r;
    if (hd.payload_len > len - HLOG_V2_HEADER_BYTES)
        return knee_fail(why, whylen, KNEE_ETRUNC, "payload length %u but only %zu bytes follow the header",
                         hd.payload_len, len - HLOG_V2_HEADER_BYTES);
    struct sink s;
    if ((r = begin_sink(&s, &hd, counts_len, out, c, why, whylen)))
        return r;
    size_t keep = 0;
    r = feed(&s, buf + HLOG_V2_HEADER_BYTES, hd.payload_len, &keep, why, whylen);
    if (!r && keep)
        r = knee_fail(why, whylen, KNEE_ETRUNC, "payload ends inside a varint");
    if (r) {
        if (out)
            drop_out(c, out);
        return r;
    }
    if (out)
        hdr_recalc(out); /* total, min, max from the counts, as the Java decoder */
    else
        memcpy(c->raw, buf, HLOG_V2_HEADER_BYTES);
    return 0;
}

/* Inflate until `want` bytes are in dst or the stream ends; returns the zlib status. */
static int inflate_some(z_stream *z, uint8_t *dst, size_t want, size_t *got)
{
    z->next_out = dst;
    z->avail_out = (uInt)want;
    int zr = Z_OK;
    while (z->avail_out > 0) {
        uInt before = z->avail_out;
        zr = inflate(z, Z_SYNC_FLUSH);
        if (zr == Z_STREAM_END || (zr != Z_OK && zr != Z_BUF_ERROR))
            break;
        if (z->avail_out == before) /* no progress: input exhausted */
            break;
    }
    *got = want - z->avail_out;
    return zr;
}

static int decode_compressed(struct hlog_codec *c, const uint8_t *buf, size_t len, struct hdr *out, char *why,
                             size_t whylen)
{
    if (len < 8)
        return knee_fail(why, whylen, KNEE_ETRUNC, "%zu bytes, shorter than the 8-byte compressed header", len);
    uint32_t zlen = be32(buf + 4);
    if (zlen > len - 8)
        return knee_fail(why, whylen, KNEE_ETRUNC, "compressed length %u but only %zu bytes follow", zlen, len - 8);
    if (!c->inf_ready) {
        memset(&c->inf, 0, sizeof c->inf);
        if (inflateInit(&c->inf) != Z_OK)
            return knee_fail(why, whylen, KNEE_EFORMAT, "zlib inflateInit failed");
        c->inf_ready = true;
    } else {
        inflateReset(&c->inf);
    }
    z_stream *z = &c->inf;
    z->next_in = (Bytef *)(uintptr_t)(buf + 8);
    z->avail_in = zlen;

    uint8_t head[HLOG_V2_HEADER_BYTES];
    size_t got;
    int zr = inflate_some(z, head, sizeof head, &got);
    if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
        return knee_fail(why, whylen, KNEE_EFORMAT, "zlib: %s", z->msg ? z->msg : "bad compressed data");
    if (got < sizeof head)
        return knee_fail(why, whylen, KNEE_ETRUNC,
                         "compressed data inflates to %zu bytes, less than the 40-byte header", got);
    struct hlog_v2_header hd;
    hlog_v2_header_parse(head, &hd);
    size_t counts_len;
    int r = check_header(&hd, &counts_len, why, whylen);
    if (r)
        return r;
    struct sink s;
    if ((r = begin_sink(&s, &hd, counts_len, out, c, why, whylen)))
        return r;

    /* Stream the payload through a fixed window; never inflate more than payload_len bytes. */
    size_t remaining = hd.payload_len, keep = 0;
    while (remaining > 0) {
        size_t want = remaining < INFLATE_WINDOW ? remaining : INFLATE_WINDOW;
        zr = inflate_some(z, c->window + keep, want, &got);
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
            r = knee_fail(why, whylen, KNEE_EFORMAT, "zlib: %s", z->msg ? z->msg : "bad compressed data");
            goto fail;
        }
        if (got == 0) {
            r = knee_fail(why, whylen, KNEE_ETRUNC, "payload length %u but the compressed data holds only %u bytes",
                          hd.payload_len, hd.payload_len - (uint32_t)remaining);
            goto fail;
        }
        remaining -= got;
        size_t n = keep + got;
        if ((r = feed(&s, c->window, n, &keep, why, whylen)))
            goto fail;
        memmove(c->window, c->window + n - keep, keep);
    }
    if (keep) {
        r = knee_fail(why, whylen, KNEE_ETRUNC, "payload ends inside a varint");
        goto fail;
    }
    /* The stream must end here: zlib then has checked its Adler-32, and anything more is
     * data the header does not account for. A few bytes of room are enough to tell. */
    uint8_t extra[16];
    zr = inflate_some(z, extra, sizeof extra, &got);
    if (got > 0) {
        r = knee_fail(why, whylen, KNEE_ETOOBIG, "compressed data inflates beyond the header's payload length %u",
                      hd.payload_len);
        goto fail;
    }
    if (zr != Z_STREAM_END) {
        r = zr == Z_OK || zr == Z_BUF_ERROR
                ? knee_fail(why, whylen, KNEE_ETRUNC, "compressed data ends before its checksum")
                : knee_fail(why, whylen, KNEE_EFORMAT, "zlib: %s", z->msg ? z->msg : "bad compressed data");
        goto fail;
    }
    if (out)
        hdr_recalc(out); /* total, min, max from the counts, as the Java decoder */
    else
        memcpy(c->raw, head, HLOG_V2_HEADER_BYTES);
    return 0;
fail:
    if (out)
        drop_out(c, out);
    return r;
}

static int decode_any(struct hlog_codec *c, const uint8_t *buf, size_t len, struct hdr *out, char *why, size_t whylen)
{
    if (len < 4)
        return knee_fail(why, whylen, KNEE_ETRUNC, "%zu bytes, too short for a cookie", len);
    uint32_t base = COOKIE_BASE(be32(buf));
    if (base == V2_COMPRESSED_BASE)
        return decode_compressed(c, buf, len, out, why, whylen);
    if (base == V2_BASE)
        return decode_plain(buf, len, out, c, why, whylen);
    struct hlog_v2_header hd = {.cookie = be32(buf)};
    size_t unused;
    return check_header(&hd, &unused, why, whylen); /* names the cookie's kind; never 0 here */
}

int hlog_decode(struct hlog_codec *c, const uint8_t *buf, size_t len, struct hdr *out, char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    return decode_any(c, buf, len, out, why, whylen);
}

int hlog_decode_reuse(struct hlog_codec *c, const uint8_t *buf, size_t len, struct hdr *h, bool *h_ready, char *why,
                      size_t whylen)
{
    c->out_ready = h_ready;
    int r = hlog_decode(c, buf, len, h, why, whylen);
    c->out_ready = NULL;
    if (r && *h_ready) { /* failed before touching h: keep the promise that h is released */
        hdr_release(h);
        *h_ready = false;
    }
    return r;
}

int hlog_decode_base64_reuse(struct hlog_codec *c, const char *text, size_t len, struct hdr *h, bool *h_ready,
                             char *why, size_t whylen)
{
    c->out_ready = h_ready;
    int r = hlog_decode_base64(c, text, len, h, why, whylen);
    c->out_ready = NULL;
    if (r && *h_ready) { /* failed before touching h: keep the promise that h is released */
        hdr_release(h);
        *h_ready = false;
    }
    return r;
}

int hlog_inflate(struct hlog_codec *c, const uint8_t *buf, size_t len, const uint8_t **out, size_t *out_len, char *why,
                 size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    int r = decode_any(c, buf, len, NULL, why, whylen);
    if (r)
        return r;
    *out = c->raw;
    *out_len = HLOG_V2_HEADER_BYTES + be32(c->raw + 4);
    return 0;
}

int hlog_decode_base64(struct hlog_codec *c, const char *text, size_t len, struct hdr *out, char *why, size_t whylen)
{
    grow((void **)&c->bin, &c->bin_cap, base64_decoded_max(len) + 1);
    size_t n, bad;
    if (base64_decode(text, len, c->bin, &n, &bad) != 0) {
        if (bad >= len)
            return knee_fail(why, whylen, KNEE_EFORMAT, "base64 length %zu is not a multiple of 4", len);
        return knee_fail(why, whylen, KNEE_EFORMAT, "bad base64 at character %zu ('%c')", bad + 1,
                         text[bad] ? text[bad] : '?'); /* escaped where it is printed (knee_report) */
    }
    return hlog_decode(c, c->bin, n, out, why, whylen);
}
