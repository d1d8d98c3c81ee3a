/* A tiny protobuf wire-format reader for the tests: walks the fields of one message so a
 * test can check what core/pb.h (and the renderers built on it) wrote, without protoc. Not
 * for production: it trusts lengths only as far as the buffer bounds and fails a test on
 * anything malformed. */
#ifndef KNEE_TESTS_PB_DECODE_H
#define KNEE_TESTS_PB_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct pbd {
    const uint8_t *p, *end;
};

/* One field: its number, wire type, and value (varint / fixed64 bits) or bytes. */
struct pbd_field {
    uint32_t field;
    unsigned wt;
    uint64_t u;
    const uint8_t *data;
    size_t len;
};

static inline struct pbd pbd_of(const void *p, size_t n)
{
    struct pbd d = {(const uint8_t *)p, (const uint8_t *)p + n};
    return d;
}

/* A varint; false when it runs past the end or past 10 bytes. */
static inline bool pbd_varint(struct pbd *d, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (d->p >= d->end)
            return false;
        uint8_t c = *d->p++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* The next field: 1, 0 at the end, -1 when malformed. */
static inline int pbd_next(struct pbd *d, struct pbd_field *f)
{
    if (d->p == d->end)
        return 0;
    uint64_t tag;
    if (!pbd_varint(d, &tag))
        return -1;
    f->field = (uint32_t)(tag >> 3);
    f->wt = (unsigned)(tag & 7);
    f->data = NULL;
    f->len = 0;
    f->u = 0;
    switch (f->wt) {
    case 0:
        return pbd_varint(d, &f->u) ? 1 : -1;
    case 1:
        if (d->end - d->p < 8)
            return -1;
        for (int i = 0; i < 8; i++)
            f->u |= (uint64_t)d->p[i] << (8 * i);
        d->p += 8;
        return 1;
    case 2: {
        uint64_t n;
        if (!pbd_varint(d, &n) || n > (uint64_t)(d->end - d->p))
            return -1;
        f->data = d->p;
        f->len = (size_t)n;
        d->p += n;
        return 1;
    }
    default:
        return -1;
    }
}

static inline double pbd_double(const struct pbd_field *f)
{
    double v;
    memcpy(&v, &f->u, sizeof v);
    return v;
}

static inline int64_t pbd_zigzag(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* A packed repeated sint64: up to cap values into out; returns the count, -1 if malformed. */
static inline long pbd_packed_sint(const struct pbd_field *f, int64_t *out, size_t cap)
{
    struct pbd d = pbd_of(f->data, f->len);
    size_t n = 0;
    while (d.p < d.end) {
        uint64_t u;
        if (!pbd_varint(&d, &u) || n == cap)
            return -1;
        out[n++] = pbd_zigzag(u);
    }
    return (long)n;
}

/* A packed repeated double. */
static inline long pbd_packed_double(const struct pbd_field *f, double *out, size_t cap)
{
    if (f->len % 8 || f->len / 8 > cap)
        return -1;
    for (size_t i = 0; i < f->len / 8; i++) {
        uint64_t u = 0;
        for (int k = 0; k < 8; k++)
            u |= (uint64_t)f->data[8 * i + (size_t)k] << (8 * k);
        memcpy(&out[i], &u, sizeof u);
    }
    return (long)(f->len / 8);
}

#endif
