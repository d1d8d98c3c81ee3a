/* The HdrHistogram V2 encoding, uncompressed and zlib-compressed, written from the byte
 * layout of the HdrHistogram V2 encoding (the Java reference's
 * encodeIntoByteBuffer / encodeIntoCompressedByteBuffer): a 40-byte big-endian header
 * (cookie, payload length, normalizing index offset, significant digits, lowest and highest
 * trackable value, integer-to-double ratio) followed by the counts as ZigZag LEB128-64b9B
 * varints in which a run of zero counts is one negative number.
 *
 * The decoder treats its input as hostile: every length it reads is checked against the
 * bytes present and against what the header's parameters permit, the inflated output is
 * bounded by that (no zip bombs), and no allocation is sized by an unchecked number. */
#ifndef KNEE_HLOG_CODEC_H
#define KNEE_HLOG_CODEC_H

#include "hist/hdr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HLOG_V2_COOKIE 0x1c849313u            /* uncompressed V2, as written */
#define HLOG_V2_COMPRESSED_COOKIE 0x1c849314u /* zlib-compressed V2, as written */
#define HLOG_V2_HEADER_BYTES 40
#define HLOG_VARINT_MAX_BYTES 9
/* knee's range: the largest counts array a decoded histogram may have (2^21 entries, 16 MiB).
 * It holds every 1..4-digit histogram up to INT64_MAX and 5 digits up to ~4e9 units; a header
 * asking for more is refused rather than allocated. */
#define HLOG_MAX_COUNTS_LEN ((size_t)1 << 21)

/* ZigZag + LEB128-64b9B (HdrHistogram's ZigZagEncoding): writes 1..9 bytes at p and returns
 * the count. p must have HLOG_VARINT_MAX_BYTES of room. */
size_t hlog_varint_put(uint8_t *p, int64_t v);
/* Read one varint from p[0..len). Returns the bytes consumed (1..9) and stores the value in
 * *v, or 0 when len ends inside the varint. */
size_t hlog_varint_get(const uint8_t *p, size_t len, int64_t *v);

/* The 40-byte V2 header, decoded. */
struct hlog_v2_header {
    uint32_t cookie;
    uint32_t payload_len;
    int32_t normalizing_index_offset;
    int32_t sig_digits;
    int64_t lowest;
    int64_t highest;
    double int_to_double_ratio;
};

/* Reusable encoder/decoder state: the zlib streams and the buffers, so that encoding or
 * decoding an interval allocates nothing after the first few calls. One per thread. */
struct hlog_codec;
struct hlog_codec *hlog_codec_new(void);
void hlog_codec_free(struct hlog_codec *c); /* NULL is a no-op */

/* Encode h. compressed selects the zlib form (deflate level 9, as the Java log writer).
 * *out points into c's buffer, valid until the next call on c. Values counted in
 * h->overflow_count are not part of the encoding: V2 has no field for them (callers report
 * them). Returns 0 or KNEE_ENEG (a negative count: h is corrupt), KNEE_EFORMAT (zlib failed). */
int hlog_encode(struct hlog_codec *c, const struct hdr *h, bool compressed, const uint8_t **out, size_t *out_len);

/* Compressed encoding as base64 (the .hlog histogram column). *text is NUL-terminated and
 * lives in c until the next call. Errors as hlog_encode. */
int hlog_encode_base64(struct hlog_codec *c, const struct hdr *h, const char **text, size_t *text_len);

/* Decode a V2 encoding, compressed or not (told apart by the cookie), into out, which this
 * initialises (hdr_init) on success only: the caller then owns it (hdr_release). total_count,
 * min_value and max_value are established from the counts as the Java decoder does (max =
 * highest equivalent value of the highest non-zero bucket). If why is not NULL it receives a
 * one-line reason on failure. Errors:
 *   KNEE_ETRUNC     fewer bytes than the header or a length field promises (length lies)
 *   KNEE_ECOOKIE    not an HdrHistogram encoding
 *   KNEE_EVERSION   a V0/V1 encoding (HdrHistogram before 2.1)
 *   KNEE_EUNSUPPORTED a DoubleHistogram, or a normalizing index offset / conversion ratio
 *   KNEE_EFORMAT    malformed header, zlib data, or payload (zero run past the end, …)
 *   KNEE_ERANGE     parameters outside knee's range (sig digits not 1..5, counts array
 *                   longer than HLOG_MAX_COUNTS_LEN, or a count beyond highest trackable)
 *   KNEE_ETOOBIG    inflated data longer than the header allows
 *   KNEE_EOVERFLOW  the counts sum beyond INT64_MAX */
int hlog_decode(struct hlog_codec *c, const uint8_t *buf, size_t len, struct hdr *out, char *why, size_t whylen);

/* Base64 text → hlog_decode. KNEE_EFORMAT for bad base64 (why names the offset). */
int hlog_decode_base64(struct hlog_codec *c, const char *text, size_t len, struct hdr *out, char *why, size_t whylen);

/* hlog_decode / hlog_decode_base64 into a histogram that may already be initialised (*h_ready):
 * when its lowest, highest and digits equal the encoding's its memory is reused (reset and
 * refilled: no allocation per interval), otherwise it is released and initialised afresh. On
 * success *h_ready is true; on failure h is released and *h_ready false. Errors as hlog_decode. */
int hlog_decode_reuse(struct hlog_codec *c, const uint8_t *buf, size_t len, struct hdr *h, bool *h_ready, char *why,
                      size_t whylen);
int hlog_decode_base64_reuse(struct hlog_codec *c, const char *text, size_t len, struct hdr *h, bool *h_ready,
                             char *why, size_t whylen);

/* Inflate a compressed V2 encoding back to its uncompressed form (header + payload), with the
 * same bounds as hlog_decode; *out lives in c until the next call. For tests and tools that
 * want the varints themselves. */
int hlog_inflate(struct hlog_codec *c, const uint8_t *buf, size_t len, const uint8_t **out, size_t *out_len, char *why,
                 size_t whylen);

/* Parse the 40-byte header at p (len >= 40) without validating it. */
void hlog_v2_header_parse(const uint8_t *p, struct hlog_v2_header *hd);

#endif
