/* The protobuf wire-format writer (core/pb.h): varints and fixed64 appended to a growable
 * buffer, nested messages by a reserved 5-byte length that pb_end() fills and compacts. */
#include "core/pb.h"

#include <stdlib.h>
#include <string.h>

#define PB_LEN_RESERVE 5 /* a uint32 varint's longest form */

void pb_buf_init(struct pb_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = false;
}

void pb_buf_release(struct pb_buf *b)
{
    free(b->data);
    pb_buf_init(b);
}

void pb_buf_reset(struct pb_buf *b)
{
    b->len = 0;
    b->failed = false;
}

/* Room for n more bytes; false (and failed set) when there is none. Unlike grow_array, an
 * allocation failure is reported, not fatal: a metrics message must not abort a run. */
static bool pb_room(struct pb_buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n > PB_MAX_LEN - b->len) {
        b->failed = true;
        return false;
    }
    if (b->len + n <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

static size_t pb_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t pb_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
    if (pb_room(b, 10))
        b->len += pb_put_varint(b->data + b->len, v);
}

void pb_tag(struct pb_buf *b, uint32_t field, unsigned wire_type)
{
    pb_varint(b, ((uint64_t)field << 3) | wire_type);
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
    pb_tag(b, field, PB_WT_VARINT);
    pb_varint(b, v);
}

static uint64_t pb_zigzag(int64_t v)
{
    /* (v << 1) ^ (v >> 63), written without shifting a negative value (undefined in C). */
    uint64_t u = (uint64_t)v;
    return (u << 1) ^ (v < 0 ? UINT64_MAX : 0);
}

void pb_sint(struct pb_buf *b, uint32_t field, int64_t v)
{
    pb_tag(b, field, PB_WT_VARINT);
    pb_varint(b, pb_zigzag(v));
}

void pb_int(struct pb_buf *b, uint32_t field, int64_t v)
{
    pb_tag(b, field, PB_WT_VARINT);
    pb_varint(b, (uint64_t)v);
}

static void pb_put_fixed64(struct pb_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    if (!pb_room(b, 8))
        return;
    for (int i = 0; i < 8; i++)
        b->data[b->len++] = (uint8_t)(u >> (8 * i));
}

void pb_double(struct pb_buf *b, uint32_t field, double v)
{
    pb_tag(b, field, PB_WT_FIXED64);
    pb_put_fixed64(b, v);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n)
{
    pb_tag(b, field, PB_WT_LEN);
    pb_varint(b, n);
    if (n && pb_room(b, n)) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    }
}

void pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

size_t pb_begin(struct pb_buf *b, uint32_t field)
{
    pb_tag(b, field, PB_WT_LEN);
    return pb_begin_delimited(b);
}

size_t pb_begin_delimited(struct pb_buf *b)
{
    if (!pb_room(b, PB_LEN_RESERVE))
        return b->len;
    size_t mark = b->len;
    b->len += PB_LEN_RESERVE;
    return mark;
}

void pb_end(struct pb_buf *b, size_t mark)
{
    if (b->failed)
        return;
    size_t body = mark + PB_LEN_RESERVE;
    size_t n = b->len - body;
    if (n > UINT32_MAX) {
        b->failed = true;
        return;
    }
    uint8_t tmp[PB_LEN_RESERVE];
    size_t k = pb_put_varint(tmp, n);
    memcpy(b->data + mark, tmp, k);
    if (k < PB_LEN_RESERVE) {
        memmove(b->data + mark + k, b->data + body, n);
        b->len -= PB_LEN_RESERVE - k;
    }
}

void pb_packed_sint(struct pb_buf *b, uint32_t field, const int64_t *v, size_t n)
{
    if (n == 0)
        return;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += pb_varint_len(pb_zigzag(v[i]));
    pb_tag(b, field, PB_WT_LEN);
    pb_varint(b, len);
    if (!pb_room(b, len))
        return;
    for (size_t i = 0; i < n; i++)
        b->len += pb_put_varint(b->data + b->len, pb_zigzag(v[i]));
}

void pb_packed_uint(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
    if (n == 0)
        return;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += pb_varint_len(v[i]);
    pb_tag(b, field, PB_WT_LEN);
    pb_varint(b, len);
    if (!pb_room(b, len))
        return;
    for (size_t i = 0; i < n; i++)
        b->len += pb_put_varint(b->data + b->len, v[i]);
}

void pb_packed_double(struct pb_buf *b, uint32_t field, const double *v, size_t n)
{
    if (n == 0)
        return;
    pb_tag(b, field, PB_WT_LEN);
    pb_varint(b, 8 * (uint64_t)n);
    for (size_t i = 0; i < n; i++)
        pb_put_fixed64(b, v[i]);
}
