/* Placeholders in a request's URL, headers and body: compiled once into literal pieces and
 * placeholders, then expanded per request by appending to a buffer the caller reuses (no
 * allocation once it is large enough, no printf: numbers and UUIDs are written by hand). */
#include "workload/workload.h"

#include "core/err.h"
#include "workload/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum piece_kind { PIECE_LITERAL, PIECE_NAME, PIECE_SEQ, PIECE_RAND, PIECE_UUID };

struct piece {
    enum piece_kind kind;
    size_t off, len; /* literal: bytes of t->lit */
    size_t name;     /* PIECE_NAME: index into the names (and values) */
    int64_t lo;      /* PIECE_RAND: [lo, lo + span - 1]; span 0 means all 2^64 values */
    uint64_t span;
    uint64_t ordinal; /* PIECE_RAND, PIECE_UUID: which one of its kind in the template */
};

struct wl_template {
    struct piece *pieces;
    size_t npieces;
    char *lit; /* the literal bytes, "{{{{" already turned into "{{" */
    size_t litlen;
    bool *uses; /* uses[i]: names[i] appears */
    size_t nnames;
    size_t lit_len; /* the literal bytes of all pieces: reserved once per expansion */
    size_t nplace;  /* placeholders */
    size_t *place;  /* their indexes in pieces */
    uint64_t id;    /* unique to this compilation (struct wl_marks tells templates apart by it) */
};

static _Atomic uint64_t template_ids; /* the last id given */

void wl_buf_release(struct wl_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static int add_piece(struct wl_template *t, size_t *cap, struct piece p)
{
    if (p.kind == PIECE_LITERAL && p.len == 0)
        return 0;
    if (p.kind == PIECE_LITERAL && t->npieces > 0 && t->pieces[t->npieces - 1].kind == PIECE_LITERAL) {
        t->pieces[t->npieces - 1].len += p.len; /* adjacent in lit: merge */
        return 0;
    }
    if (t->npieces == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        struct piece *np = realloc(t->pieces, ncap * sizeof *np);
        if (!np)
            return -ENOMEM;
        t->pieces = np;
        *cap = ncap;
    }
    t->pieces[t->npieces++] = p;
    return 0;
}

/* A decimal int64 at s[0..n) (an optional '-', 1 to 19 digits): 0 and *out, else -1. */
static int parse_i64(const char *s, size_t n, int64_t *out)
{
    bool neg = n > 0 && s[0] == '-';
    size_t i = neg ? 1 : 0;
    if (i == n)
        return -1;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if ((!neg && v > (uint64_t)INT64_MAX) || (neg && v > (uint64_t)INT64_MAX + 1))
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* "rand:A-B" after "rand:" (s, n): the piece's range. */
static int parse_rand(const char *s, size_t n, struct piece *p)
{
    /* the separator is the first '-' that is not a leading sign */
    size_t i = (n > 0 && s[0] == '-') ? 1 : 0;
    while (i < n && s[i] != '-')
        i++;
    int64_t a, b;
    if (i >= n || parse_i64(s, i, &a) != 0 || parse_i64(s + i + 1, n - i - 1, &b) != 0 || a > b)
        return -1;
    p->lo = a;
    p->span = (uint64_t)b - (uint64_t)a + 1; /* wraps to 0 for the full int64 range */
    return 0;
}

/* The error for a name that is neither a built-in nor one of names. */
static int unknown_name(const char *nm, size_t n, const struct wl_names *names, char *err, size_t errlen)
{
    char list[256] = "";
    size_t o = 0;
    for (size_t i = 0; names && i < names->n && o + 8 < sizeof list; i++) {
        int w = snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", names->names[i]);
        o += w > 0 ? (size_t)w : 0;
    }
    if (o >= sizeof list - 8)
        memcpy(list + sizeof list - 8, ", ...", 6);
    if (!names || names->n == 0)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "unknown placeholder {{%.*s}} (built-ins: seq, rand:A-B, uuid; no feed columns%s%s)", (int)n,
                         nm, names && names->source ? " in " : "", names && names->source ? names->source : "");
    return knee_fail(err, errlen, KNEE_EINVAL, "no column '%.*s' in %s (columns: %s)", (int)n, nm,
                     names->source ? names->source : "the feed", list);
}

/* The placeholder inside the braces (s, n: trimmed) into *p. */
static int parse_placeholder(const char *s, size_t n, const struct wl_names *names, struct piece *p, char *err,
                             size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (n == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "empty placeholder {{}} (a literal \"{{\" is written \"{{{{\")");
    if (n == 3 && memcmp(s, "seq", 3) == 0) {
        p->kind = PIECE_SEQ;
        return 0;
    }
    if (n == 4 && memcmp(s, "uuid", 4) == 0) {
        p->kind = PIECE_UUID;
        return 0;
    }
    if (n >= 5 && memcmp(s, "rand:", 5) == 0) {
        p->kind = PIECE_RAND;
        if (parse_rand(s + 5, n - 5, p) != 0)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "malformed placeholder {{%.*s}}: expected {{rand:A-B}} with integers A <= B", (int)n, s);
        return 0;
    }
    for (size_t i = 0; names && i < names->n; i++) {
        if (strlen(names->names[i]) == n && memcmp(names->names[i], s, n) == 0) {
            p->kind = PIECE_NAME;
            p->name = i;
            return 0;
        }
    }
    return unknown_name(s, n, names, err, errlen);
}

/* Scan s into t's pieces. */
static int compile_pieces(struct wl_template *t, const char *s, size_t len, const struct wl_names *names, char *err,
                          size_t errlen)
{
    size_t cap = 0, i = 0;
    uint64_t nrand = 0, nuuid = 0;
    while (i < len) {
        const char *open = NULL;
        for (size_t j = i; j + 1 < len; j++) {
            if (s[j] == '{' && s[j + 1] == '{') {
                open = s + j;
                break;
            }
        }
        size_t lit_end = open ? (size_t)(open - s) : len;
        bool esc = open && lit_end + 3 < len && s[lit_end + 2] == '{' && s[lit_end + 3] == '{';
        bool lone = open && !esc && lit_end + 2 < len && s[lit_end + 2] == '{'; /* "{{{x}}": "{" + {{x}} */
        size_t keep = lit_end - i + (esc ? 2 : 0) + (lone ? 1 : 0);
        memcpy(t->lit + t->litlen, s + i, keep);
        struct piece lit = {.kind = PIECE_LITERAL, .off = t->litlen, .len = keep};
        t->litlen += keep;
        if (add_piece(t, &cap, lit) != 0)
            return knee_fail(err, errlen, -ENOMEM, "out of memory");
        if (!open)
            break;
        if (esc || lone) {
            i = lit_end + (esc ? 4 : 1);
            continue;
        }
        const char *body = open + 2, *close = NULL;
        for (const char *c = body; c + 1 < s + len; c++) {
            if (c[0] == '}' && c[1] == '}') {
                close = c;
                break;
            }
        }
        if (!close)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "unclosed \"{{\" at byte %zu (a literal \"{{\" is written \"{{{{\")", lit_end + 1);
        while (body < close && (*body == ' ' || *body == '\t'))
            body++;
        const char *end = close;
        while (end > body && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        struct piece p;
        int k = parse_placeholder(body, (size_t)(end - body), names, &p, err, errlen);
        if (k != 0)
            return k;
        if (p.kind == PIECE_RAND)
            p.ordinal = nrand++;
        if (p.kind == PIECE_UUID)
            p.ordinal = nuuid++;
        if (p.kind == PIECE_NAME)
            t->uses[p.name] = true;
        if (add_piece(t, &cap, p) != 0)
            return knee_fail(err, errlen, -ENOMEM, "out of memory");
        i = (size_t)(close - s) + 2;
    }
    return 0;
}

int wl_template_compile(const char *s, size_t len, const struct wl_names *names, struct wl_template **out, char *err,
                        size_t errlen)
{
    *out = NULL;
    struct wl_template *t = calloc(1, sizeof *t);
    if (!t)
        return knee_fail(err, errlen, -ENOMEM, "out of memory");
    t->nnames = names ? names->n : 0;
    t->lit = malloc(len ? len : 1);
    t->uses = calloc(t->nnames ? t->nnames : 1, sizeof *t->uses);
    if (!t->lit || !t->uses) {
        wl_template_free(t);
        return knee_fail(err, errlen, -ENOMEM, "out of memory");
    }
    int k = compile_pieces(t, s, len, names, err, errlen);
    if (k != 0) {
        wl_template_free(t);
        return k;
    }
    t->place = malloc((t->npieces ? t->npieces : 1) * sizeof *t->place);
    if (!t->place) {
        wl_template_free(t);
        return knee_fail(err, errlen, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < t->npieces; i++) {
        if (t->pieces[i].kind == PIECE_LITERAL)
            t->lit_len += t->pieces[i].len;
        else
            t->place[t->nplace++] = i;
    }
    t->id = ++template_ids;
    *out = t;
    return 0;
}

void wl_template_free(struct wl_template *t)
{
    if (!t)
        return;
    free(t->pieces);
    free(t->place);
    free(t->lit);
    free(t->uses);
    free(t);
}

bool wl_template_literal(const struct wl_template *t)
{
    for (size_t i = 0; i < t->npieces; i++)
        if (t->pieces[i].kind != PIECE_LITERAL)
            return false;
    return true;
}

bool wl_template_uses(const struct wl_template *t, size_t i)
{
    return i < t->nnames && t->uses[i];
}

/* Whether t has a placeholder of kind k (or, k2). */
static bool has_kind(const struct wl_template *t, enum piece_kind k, enum piece_kind k2)
{
    for (size_t i = 0; i < t->nplace; i++)
        if (t->pieces[t->place[i]].kind == k || t->pieces[t->place[i]].kind == k2)
            return true;
    return false;
}

uint64_t wl_template_id(const struct wl_template *t)
{
    return t->id;
}

bool wl_template_uses_seq(const struct wl_template *t)
{
    return has_kind(t, PIECE_SEQ, PIECE_SEQ);
}

bool wl_template_uses_draw(const struct wl_template *t)
{
    return has_kind(t, PIECE_RAND, PIECE_UUID);
}

/* ---------------------------------------------------------------- expansion */

/* Room for n more bytes (and a NUL the caller may add). */
static inline int reserve(struct wl_buf *b, size_t n)
{
    if (b->cap - b->len > n)
        return 0;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap - b->len <= n) {
        if (ncap > SIZE_MAX / 2)
            return -ENOMEM;
        ncap *= 2;
    }
    char *p = realloc(b->p, ncap);
    if (!p)
        return -ENOMEM;
    b->p = p;
    b->cap = ncap;
    return 0;
}

/* v in decimal, its digits ending just before end (room for 20): where they start. Two digits
 * per division by a constant, written in place from the end: a {{seq}} costs a few dozen
 * instructions, not a division per digit and a reversal. */
static char *dec_u64(char *end, uint64_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    char *p = end;
    while (v >= 100) {
        uint64_t q = v / 100;
        size_t r = (size_t)(v - q * 100);
        v = q;
        p -= 2;
        p[0] = pairs[2 * r];
        p[1] = pairs[2 * r + 1];
    }
    if (v >= 10) {
        p -= 2;
        p[0] = pairs[2 * v];
        p[1] = pairs[2 * v + 1];
    } else {
        *--p = (char)('0' + v);
    }
    return p;
}

void wl_dec_set(struct wl_dec *c, uint64_t v, uint64_t step)
{
    memset(c, 0, sizeof *c);
    char *p = dec_u64(c->d + WL_DEC_MAX, v);
    c->n = (uint8_t)(c->d + WL_DEC_MAX - p);
    c->v = v;
    c->step = step;
    c->lim = UINT64_MAX - step;
    for (uint64_t x = step; x; x /= 10)
        c->sd[c->sn++] = (uint8_t)(x % 10);
}

void wl_dec_carry(struct wl_dec *c)
{
    if (c->v > c->lim) { /* wraps as the integer does */
        wl_dec_set(c, c->v + c->step, c->step);
        return;
    }
    c->v += c->step;
    char *p = c->d + WL_DEC_MAX - 1;
    unsigned carry = 0;
    size_t i = 0;
    for (; i < c->sn || carry; i++, p--) { /* at most 20 digits: v did not wrap */
        unsigned x = (i < c->n ? (unsigned)(*p - '0') : 0u) + (i < c->sn ? c->sd[i] : 0u) + carry;
        carry = x >= 10;
        *p = (char)('0' + (carry ? x - 10 : x));
    }
    if (i > c->n)
        c->n = (uint8_t)i;
}

/* v in decimal ending before end (room for 20: "-9223372036854775808"): where it starts. */
static char *dec_i64(char *end, int64_t v)
{
    if (v >= 0)
        return dec_u64(end, (uint64_t)v);
    char *p = dec_u64(end, 0 - (uint64_t)v);
    *--p = '-';
    return p;
}

/* A version-4 UUID (RFC 9562 §5.4) from 128 bits: 36 bytes at out. */
static void put_uuid(char *out, uint64_t hi, uint64_t lo)
{
    static const char hex[] = "0123456789abcdef";
    hi = (hi & ~0xf000ULL) | 0x4000ULL;       /* version 4 in bits 48-51 */
    lo = (lo & ~(3ULL << 62)) | (2ULL << 62); /* variant 10 */
    size_t o = 0;
    for (int i = 0; i < 32; i++) {
        if (i == 8 || i == 12 || i == 16 || i == 20)
            out[o++] = '-';
        uint64_t w = i < 16 ? hi : lo;
        out[o++] = hex[(w >> (60 - 4 * (i % 16))) & 0xf];
    }
}

/* Placeholder p's bytes for ctx: *s (ctx's value, or tmp with room for 40 bytes) and their
 * length. */
static inline size_t piece_value(const struct piece *p, const struct wl_ctx *ctx, char *tmp, const char **s)
{
    *s = tmp;
    switch (p->kind) {
    case PIECE_NAME:
        if (!ctx->values || p->name >= ctx->nvalues)
            return 0;
        *s = ctx->values[p->name].s;
        return ctx->values[p->name].len;
    case PIECE_SEQ:
        if (ctx->seq_dec) { /* the caller's counter: copied, not formatted */
            *s = wl_dec_digits(ctx->seq_dec);
            return ctx->seq_dec->n;
        }
        *s = dec_u64(tmp + 40, ctx->seq);
        return (size_t)(tmp + 40 - *s);
    case PIECE_RAND: {
        uint64_t tag = WL_TAG_RAND + (p->ordinal << WL_TAG_SHIFT);
        uint64_t x = p->span ? wl_below(p->span, ctx->seed, ctx->seq, tag) : wl_hash3(ctx->seed, ctx->seq, tag);
        *s = dec_i64(tmp + 40, (int64_t)((uint64_t)p->lo + x));
        return (size_t)(tmp + 40 - *s);
    }
    case PIECE_UUID: {
        uint64_t tag = WL_TAG_UUID + (p->ordinal << WL_TAG_SHIFT);
        put_uuid(tmp, wl_hash3(ctx->seed, ctx->seq, tag), wl_hash3(ctx->seed, ctx->seq, tag + (1ULL << 40)));
        return 36;
    }
    default:
        return 0;
    }
}

/* Append t expanded to out; with marks (room for three per placeholder), each placeholder's
 * offset in out, its length and what fills it (struct wl_marks). */
static int expand(const struct wl_template *t, const struct wl_ctx *ctx, struct wl_buf *out, size_t *marks)
{
    size_t start = out->len;
    /* room for the literal bytes once: a placeholder reserves its own bytes and the literal
     * bytes again, so what was reserved up front is never lost to a realloc */
    if (reserve(out, t->lit_len) != 0)
        return -ENOMEM;
    char tmp[40];
    for (size_t i = 0; i < t->npieces; i++) {
        const struct piece *p = &t->pieces[i];
        if (p->kind == PIECE_LITERAL) {
            memcpy(out->p + out->len, t->lit + p->off, p->len);
            out->len += p->len;
            continue;
        }
        const char *s;
        size_t n = piece_value(p, ctx, tmp, &s);
        if (reserve(out, n + t->lit_len) != 0) {
            out->len = start;
            return -ENOMEM;
        }
        if (marks) {
            *marks++ = out->len;
            *marks++ = n;
            *marks++ = p->kind == PIECE_NAME ? p->name : p->kind == PIECE_SEQ ? WL_MARK_SEQ : WL_MARK_OTHER;
        }
        memcpy(out->p + out->len, s, n);
        out->len += n;
    }
    return 0;
}

int wl_template_expand(const struct wl_template *t, const struct wl_ctx *ctx, struct wl_buf *out)
{
    return expand(t, ctx, out, NULL);
}

void wl_marks_release(struct wl_marks *m)
{
    free(m->at);
    memset(m, 0, sizeof *m);
}

int wl_template_expand_marked(const struct wl_template *t, const struct wl_ctx *ctx, struct wl_buf *out,
                              struct wl_marks *m)
{
    char tmp[40];
    if (m->id == t->id && out->len == 0 && out->cap >= m->len) {
        /* out still holds t's last expansion: each placeholder in its place while its value
         * has the length the last one had (a {{seq}} changes length once per power of ten) */
        const size_t *at = m->at;
        for (size_t i = 0; i < t->nplace; i++, at += 3) {
            const char *s;
            size_t n = piece_value(&t->pieces[t->place[i]], ctx, tmp, &s);
            if (n != at[1])
                goto again;
            wl_copy_short(out->p + at[0], s, n);
        }
        out->len = m->len;
        return 0;
    }
again:
    m->id = 0;
    out->len = 0;
    if (m->cap < 3 * t->nplace) {
        size_t *at = realloc(m->at, 3 * t->nplace * sizeof *at);
        if (!at)
            return -ENOMEM;
        m->at = at;
        m->cap = 3 * t->nplace;
    }
    int r = expand(t, ctx, out, m->at);
    if (r == 0) {
        m->id = t->id;
        m->len = out->len;
        m->n = t->nplace;
    }
    return r;
}
