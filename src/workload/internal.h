/* What the files of src/workload share and nothing else uses: a line source over a descriptor
 * or memory (the targets reader and the JSONL feed read lines through it, with the line cap),
 * the keyed hash behind every random choice, and small text helpers. */
#ifndef KNEE_WORKLOAD_INTERNAL_H
#define KNEE_WORKLOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Lines read through a window that grows to the longest line (capped at WL_MAX_LINE). */
struct wl_lines {
    int fd;        /* -1 for memory */
    bool own_fd;   /* closed by wl_lines_release */
    bool seekable; /* a regular file, or memory */
    const char *mem;
    size_t mem_len, mem_pos;
    char *buf;
    size_t cap, start, end; /* the unread bytes are buf[start, end) */
    uint64_t off;           /* the input offset of buf[start] */
    bool eof;
};

/* Over fd (own_fd: closed at release) or over memory (borrowed: must outlive the source).
 * Pure set-up: no I/O. */
void wl_lines_init_fd(struct wl_lines *l, int fd, bool own_fd);
void wl_lines_init_mem(struct wl_lines *l, const char *mem, size_t len);
void wl_lines_release(struct wl_lines *l);
/* The next line, without its "\n" and a "\r" before it: 1 with *line (NUL-terminated in the
 * window, valid until the next call), *len and *off (its input offset); 0 at the end of
 * input; KNEE_ETOOBIG for a line over WL_MAX_LINE bytes; -errno for a read error. A last
 * line without "\n" counts. */
int wl_lines_next(struct wl_lines *l, char **line, size_t *len, uint64_t *off);
/* Seekable sources: go to input offset off (the next line starts there). 0 or -errno. */
int wl_lines_seek(struct wl_lines *l, uint64_t off);

/* splitmix64's finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mixer. */
static inline uint64_t wl_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* 64 bits keyed by (seed, seq, tag): tags keep the feed's draw, each {{rand}} and each
 * {{uuid}} of one request independent of each other. */
static inline uint64_t wl_hash3(uint64_t seed, uint64_t seq, uint64_t tag)
{
    return wl_mix64(wl_mix64(wl_mix64(seed) ^ seq) ^ (tag * 0xd1b54a32d192ed03ULL));
}

/* A uniform draw in [0, n) (n > 0) from the stream (seed, seq, tag): rejection below the
 * largest multiple of n, so no value is favoured. */
uint64_t wl_below(uint64_t n, uint64_t seed, uint64_t seq, uint64_t tag);

/* Tags of wl_hash3 (the low bits; an ordinal is added above them). */
#define WL_TAG_FEED 1u
#define WL_TAG_RAND 2u
#define WL_TAG_UUID 3u
#define WL_TAG_SHIFT 2u

/* An HTTP token (RFC 9110 tchar+): methods and header names. */
bool wl_is_token(const char *s, size_t len);
/* s[0..len) quoted for a message, cut to about 60 bytes with "..." (into out, outlen bytes). */
const char *wl_quote(const char *s, size_t len, char *out, size_t outlen);

/* A JSON scalar's text (the feed's cells, captured JSON fields): a string as it is (-1 when it
 * holds a NUL), an integer in decimal, another number in the shortest form that reads back to
 * the same double, true/false, null as "" (-1 for an object or a list). *s points into v or
 * into num (numlen >= 32). 0 or -1. */
struct json_t;
int wl_scalar_text(const struct json_t *v, char *num, size_t numlen, const char **s, size_t *n);

#endif
