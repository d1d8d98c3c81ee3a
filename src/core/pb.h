/* A protobuf wire-format writer: the few encodings knee's metric messages need (varints,
 * zigzag, fixed64 doubles, length-delimited bytes and nested messages), appended to one
 * growable buffer. No schema, no reflection: the caller writes field numbers from the .proto
 * it follows (Prometheus remote-write, io.prometheus.client). */
#ifndef KNEE_CORE_PB_H
#define KNEE_CORE_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The output. data[0..len) is the message so far. A failed allocation (or a message past
 * PB_MAX_LEN) sets failed: later calls do nothing, and the caller checks failed once at the
 * end instead of after every field. */
struct pb_buf {
    uint8_t *data;
    size_t len, cap;
    bool failed;
};

/* A nested message is at most this long (its length prefix is reserved as 5 bytes, a
 * uint32 varint); longer sets failed. Protobuf itself caps messages at 2 GiB. */
#define PB_MAX_LEN ((size_t)0x7fffffff)

/* An empty buffer (no allocation until the first write). */
void pb_buf_init(struct pb_buf *b);
/* Free the memory; the buffer is empty and usable again. */
void pb_buf_release(struct pb_buf *b);
/* len = 0 and failed = false; keeps the memory for the next message. */
void pb_buf_reset(struct pb_buf *b);

/* Scalar fields. field is the field number (1..2^29-1). Written even when v is 0 (proto3
 * would omit a default; a reader treats both alike, and writing it keeps the code simple). */
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);               /* uint64/uint32: varint */
void pb_sint(struct pb_buf *b, uint32_t field, int64_t v);                /* sint64/sint32: zigzag varint */
void pb_int(struct pb_buf *b, uint32_t field, int64_t v);                 /* int64: two's complement varint */
void pb_double(struct pb_buf *b, uint32_t field, double v);               /* double: fixed64, little endian */
void pb_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n); /* bytes: n may be 0 */
void pb_string(struct pb_buf *b, uint32_t field, const char *s);          /* string: strlen(s) */

/* Open a nested message (or packed repeated field) as field `field`: returns a mark for
 * pb_end(). Fields written until then are its content. Nest as deep as needed; close in
 * reverse order. */
size_t pb_begin(struct pb_buf *b, uint32_t field);
/* Open a message framed by its length alone, without a tag (the delimited streams: each
 * message preceded by its length as a varint); close it with pb_end(). */
size_t pb_begin_delimited(struct pb_buf *b);
/* Close the message opened at mark, writing its length (the buffer is compacted when the
 * length takes fewer than the 5 reserved bytes, so the output is canonical). */
void pb_end(struct pb_buf *b, size_t mark);

/* Packed repeated fields (one length-delimited field holding n values). n = 0 writes
 * nothing (an absent repeated field). */
void pb_packed_sint(struct pb_buf *b, uint32_t field, const int64_t *v, size_t n);
void pb_packed_uint(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);
void pb_packed_double(struct pb_buf *b, uint32_t field, const double *v, size_t n);

/* Raw building blocks, for callers that frame messages themselves (the delimited
 * exposition's length prefix): a bare varint, a bare tag. */
void pb_varint(struct pb_buf *b, uint64_t v);
void pb_tag(struct pb_buf *b, uint32_t field, unsigned wire_type);

/* Wire types. */
#define PB_WT_VARINT 0u
#define PB_WT_FIXED64 1u
#define PB_WT_LEN 2u
#define PB_WT_FIXED32 5u

#endif
