/* src/workload/: requests as users bring them (issue 26): a targets file read as a stream
 * (vegeta's http format, or JSON lines), a data feed (CSV or JSON lines) and placeholders
 * ({{column}}, {{seq}}, {{rand:A-B}}, {{uuid}}, and variables captured by a setup request) in an
 * entry's URL, headers and body. Pure library: no engine, no threads; the engine (src/load)
 * calls it from its own threads, one object per thread unless said. The formats are described
 * in docs/FORMATS.md ("Targets files", "Feeds and placeholders"). */
#ifndef KNEE_WORKLOAD_WORKLOAD_H
#define KNEE_WORKLOAD_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- the targets file */

enum wl_format { WL_FORMAT_HTTP, WL_FORMAT_JSONL };

/* The format a path implies: ".jsonl"/".ndjson" -> JSONL, anything else (".txt", "-") -> HTTP.
 * `--targets-format` overrides. Pure; any thread. */
enum wl_format wl_format_for_path(const char *path);
/* "http" / "jsonl" -> 0 and *out; else KNEE_EINVAL (*out untouched). */
int wl_format_parse(const char *s, enum wl_format *out);

/* The longest line a targets file or feed may have (a cap: these are the user's files, but a
 * binary file given by mistake must not grow a buffer without end). Longer: an error naming
 * the line. */
#define WL_MAX_LINE (1u << 20)

/* True when s[0..len) holds no control byte other than HTAB (no CR, LF, NUL, DEL): what a URL
 * or a header line may carry on the wire (RFC 9110 field values). The readers check what they
 * read; a caller checks a URL or header after expanding it (a feed's value may hold anything).
 * Pure; any thread. */
bool wl_field_ok(const char *s, size_t len);

/* One entry, as read (templates not expanded yet: the strings may hold {{...}}). All strings
 * NUL-terminated and owned by the reader: valid until the next wl_reader_next/_read_at or close. */
struct wl_entry {
    uint64_t index;     /* 0-based, file order */
    uint64_t line;      /* 1-based line it starts on */
    uint64_t offset;    /* byte offset it starts at (wl_reader_read_at takes it back) */
    const char *method; /* "GET" when the entry names none (jsonl) */
    const char *url;
    const char *const *headers; /* "Name: value" (a jsonl list value gives one line per item) */
    size_t nheaders;
    const char *body; /* NULL when none; may contain NULs (body_base64, a body file) */
    size_t body_len;
    const char *name; /* jsonl "name": the group it is reported under; NULL when none */
    double weight;    /* jsonl "weight" (> 0, finite); 1 when none */
};

struct wl_reader;

/* Open path ("-": standard input, not closed by wl_reader_close) in fmt. Bodies from files
 * (`@path` in http, "body_file" in jsonl) are read when their entry is read, relative to the
 * targets file's directory (the working directory for "-"), at most HTTP_CLIENT_MAX_BODY
 * bytes. 0, or a KNEE_ code (-errno for an open failure) with "FILE: reason" in err. */
int wl_reader_open(struct wl_reader **out, const char *path, enum wl_format fmt, char *err, size_t errlen);
/* The same over size bytes of memory (copied: the caller keeps ownership), named name in
 * messages, body files relative to dir (NULL: the working directory). Seekable. For tests and
 * fuzzing. */
int wl_reader_open_mem(struct wl_reader **out, const void *data, size_t size, const char *name, const char *dir,
                       enum wl_format fmt, char *err, size_t errlen);
/* True when the source can be read again (a regular file, memory): wl_reader_read_at works. */
bool wl_reader_seekable(const struct wl_reader *rd);
/* The next entry in file order: 0 (*e filled), WL_END at the end, or KNEE_EINVAL with
 * "FILE:LINE: what was expected" (a malformed line, an unreadable body file, ...); after an
 * error the reader is spent (further calls repeat the error). Memory is bounded by the largest
 * entry, never by the file. */
#define WL_END 1
int wl_reader_next(struct wl_reader *rd, struct wl_entry *e, char *err, size_t errlen);
/* Seekable readers: the entry that starts at offset (from an earlier e.offset), numbered
 * index/line as given. 0, or a KNEE_ code with FILE:LINE in err (KNEE_EUNSUPPORTED on a pipe).
 * wl_reader_next then goes on with the entry after it. */
int wl_reader_read_at(struct wl_reader *rd, uint64_t offset, uint64_t index, uint64_t line, struct wl_entry *e,
                      char *err, size_t errlen);
/* The entries from here on were read and checked before (a file read again): their URLs are
 * not parsed again (the caller parses what it uses; the other checks stay). */
void wl_reader_checked(struct wl_reader *rd);
void wl_reader_close(struct wl_reader *rd);

/* ---------------------------------------------------------------- the feed */

struct wl_feed; /* loaded whole into memory (a feed is data, not a plan: its size is the user's) */

/* Load a CSV (a header row names the columns: unique, non-empty) or JSONL (each line an object
 * of scalars; the columns are the first line's keys, every line must have exactly them) feed;
 * by extension (.csv, .jsonl/.ndjson; else KNEE_EINVAL naming the file). At least one row.
 * Errors name FILE:LINE. JSONL scalars: a string as is, an integer in decimal, another number
 * as the shortest text that reads back to it (1.0 -> "1", 1e3 -> "1000", 0.1 -> "0.1"),
 * true/false as "true"/"false", null as "". Columns may not be named seq, uuid or rand:... */
int wl_feed_load(struct wl_feed **out, const char *path, char *err, size_t errlen);
/* The same over memory (copied), jsonl or CSV, named name in messages. For tests and fuzzing. */
int wl_feed_load_mem(struct wl_feed **out, const void *data, size_t size, bool jsonl, const char *name, char *err,
                     size_t errlen);
void wl_feed_free(struct wl_feed *f);
/* The accessors below are read-only: any number of threads may share one loaded feed. */
size_t wl_feed_rows(const struct wl_feed *f);
size_t wl_feed_columns(const struct wl_feed *f);
const char *wl_feed_column(const struct wl_feed *f, size_t col); /* its name */
/* The cell (row < rows, col < columns): bytes and length (NUL-terminated too; may hold no NUL). */
const char *wl_feed_cell(const struct wl_feed *f, size_t row, size_t col, size_t *len);

enum wl_order { WL_ORDER_SEQUENTIAL, WL_ORDER_RANDOM, WL_ORDER_SHUFFLE };
int wl_order_parse(const char *s, enum wl_order *out); /* "sequential" "random" "shuffle"; else KNEE_EINVAL */
/* The row (of n > 0; 0 for n == 0) request `seq` uses: sequential seq mod n; random a uniform
 * draw from (seed, seq) (a splitmix64 hash, unbiased reduction); shuffle: cycle seq / n goes
 * through a permutation of the rows seeded by (seed, cycle), each row once per cycle. A pure
 * function of its arguments (every thread and shard agree); shuffle's permutation is computed
 * per call in O(1) memory (a keyed Feistel bijection on the next power of two, cycle walking
 * into [0, n)). */
uint64_t wl_pick(enum wl_order order, uint64_t n, uint64_t seed, uint64_t seq);

/* ---------------------------------------------------------------- placeholders */

/* The names a template may use, besides the built-ins seq, rand:A-B and uuid: the feed's
 * columns, then variables captured by a setup request. Index i of names is value i at expand. */
struct wl_names {
    const char *const *names;
    size_t n;
    const char *source; /* for messages: "--feed users.csv" */
};

struct wl_template; /* literal pieces and placeholders, compiled once; read-only after: shareable */

/* Compile s (len bytes; may contain NULs in a body); names may be NULL (no names). Syntax:
 * `{{name}}`, `{{seq}}`, `{{rand:A-B}}` (decimal int64, A <= B, either may be negative:
 * `{{rand:-5--1}}`), `{{uuid}}`; spaces and tabs just inside the braces are ignored
 * (`{{ id }}`). `{{{{` is a literal `{{`; a `{` right before `{{` is literal (`{{{id}}}` is
 * `{`, the value, `}`). An unknown placeholder (not a built-in, not in names), a malformed one
 * ("{{rand:9-1}}", an unclosed "{{") is KNEE_EINVAL with the reason ("no column 'id' in --feed
 * users.csv (columns: name, email)"); the caller adds FILE:LINE or the flag. */
int wl_template_compile(const char *s, size_t len, const struct wl_names *names, struct wl_template **out, char *err,
                        size_t errlen);
void wl_template_free(struct wl_template *t);
/* No placeholder: expanding gives the input itself (the engine builds such requests once). */
bool wl_template_literal(const struct wl_template *t);
/* Whether t uses names[i] (so a caller can tell a feed nobody reads). */
bool wl_template_uses(const struct wl_template *t, size_t i);
/* Whether t has a {{seq}} (a caller keeps a wl_dec for it) and a {{rand}} or {{uuid}} (its
 * bytes then differ per request, not only per feed row or entry). */
bool wl_template_uses_seq(const struct wl_template *t);
bool wl_template_uses_draw(const struct wl_template *t);

struct wl_value {
    const char *s;
    size_t len;
};

/* What one request's expansion draws from. values[i] is names[i]'s value for this request (the
 * feed row's cells, the captured variables; a name at or past nvalues expands to nothing).
 * rand and uuid are drawn from (seed, seq, the placeholder's ordinal among those of its kind
 * in the template): a pure function, the same in every thread and shard. So the first
 * {{uuid}} of a request's URL and the first of its body are the same id (a PUT /items/{{uuid}}
 * with {"id":"{{uuid}}"}), and a second {{uuid}} in one template is another. */
struct wl_dec;
struct wl_ctx {
    uint64_t seq;
    uint64_t seed;
    const struct wl_value *values;
    size_t nvalues;
    const struct wl_dec *seq_dec; /* NULL, or seq in decimal (its digits are copied, not formatted) */
};

/* A counter kept as decimal text: {{seq}} of one load thread's requests (base + step * j), so
 * the next value costs a carry through its last digits, not a formatting per request. Set it
 * with wl_dec_set, advance it with wl_dec_next; the digits are wl_dec_digits(c)[0..c->n).
 * Exact over all of uint64_t (a step past UINT64_MAX wraps as the integer does). One owner. */
#define WL_DEC_MAX 24
struct wl_dec {
    char d[WL_DEC_MAX]; /* the digits end at d + WL_DEC_MAX */
    uint8_t n;          /* how many (1 to 20) */
    uint8_t sn;         /* the step's digits, least significant first: sd[0..sn) (the rest 0) */
    uint8_t sd[20];
    uint64_t v, step;
    uint64_t lim; /* UINT64_MAX - step: past it the next value wraps */
};
/* c := v, advanced by step at each wl_dec_next. */
void wl_dec_set(struct wl_dec *c, uint64_t v, uint64_t step);
/* wl_dec_next's slow path: a carry, a step of two digits or more, a wrap. */
void wl_dec_carry(struct wl_dec *c);
static inline const char *wl_dec_digits(const struct wl_dec *c)
{
    return c->d + WL_DEC_MAX - c->n;
}
/* c := c + step: for a step below 10 and no carry, one digit rewritten; otherwise the step's
 * digits added from the right, carrying; past UINT64_MAX, formatted anew from the wrapped
 * value. */
static inline void wl_dec_next(struct wl_dec *c)
{
    char *last = c->d + WL_DEC_MAX - 1;
    unsigned x = (unsigned)(*last - '0') + c->sd[0];
    if (x < 10 && c->sn <= 1 && c->v <= c->lim) {
        *last = (char)('0' + x);
        c->v += c->step;
        return;
    }
    wl_dec_carry(c);
}

/* A growable byte buffer the caller reuses (no allocation once it is large enough). Zero it to
 * start; set len = 0 to reuse. */
struct wl_buf {
    char *p;
    size_t len, cap;
};
void wl_buf_release(struct wl_buf *b);

/* Append t expanded under ctx to out (not NUL-terminated). 0 or -ENOMEM (out then keeps
 * what it had). No printf, no allocation once out->cap suffices. */
int wl_template_expand(const struct wl_template *t, const struct wl_ctx *ctx, struct wl_buf *out);

/* Where the last wl_template_expand_marked of a template into a buffer put its placeholders,
 * so the next one into the same buffer can rewrite only them. Zero it to start. */
struct wl_marks {
    uint64_t id; /* the template's (0: none) */
    size_t len;  /* the expansion's length */
    size_t *at;  /* per placeholder: its offset in the buffer, its length, what fills it (a value's
                  * index, WL_MARK_SEQ, WL_MARK_OTHER: {{rand}} and {{uuid}}) */
    size_t cap;
    size_t n; /* placeholders */
};
#define WL_MARK_SEQ ((size_t)-1)
#define WL_MARK_OTHER ((size_t)-2)
void wl_marks_release(struct wl_marks *m);

/* Expand t into out from its start (out->len 0 on entry; out->len is the expansion's length
 * on return): the bytes wl_template_expand gives. When m says out still holds t's last
 * expansion and every placeholder's value has the length it had then, only the placeholders
 * are rewritten (the literal bytes are already there); otherwise t is expanded whole and m
 * records where. Whoever writes out[0, m->len) otherwise sets m->id = 0 (bytes appended after
 * m->len are fine). 0 or -ENOMEM (m then records nothing). */
int wl_template_expand_marked(const struct wl_template *t, const struct wl_ctx *ctx, struct wl_buf *out,
                              struct wl_marks *m);
/* t's id: what m->id says after t was expanded into a buffer (unique to the compilation). */
uint64_t wl_template_id(const struct wl_template *t);

/* n bytes from s to d (apart): a value is mostly a few bytes, so the short ones are copied by
 * two overlapping loads and stores rather than a call into memcpy. */
static inline void wl_copy_short(char *d, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        __builtin_memcpy(&a, s, 8);
        __builtin_memcpy(&b, s + n - 8, 8);
        __builtin_memcpy(d, &a, 8);
        __builtin_memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        __builtin_memcpy(&a, s, 4);
        __builtin_memcpy(&b, s + n - 4, 4);
        __builtin_memcpy(d, &a, 4);
        __builtin_memcpy(d + n - 4, &b, 4);
    } else if (n > 16) {
        __builtin_memcpy(d, s, n);
    } else if (n) {
        d[0] = s[0];
        d[n - 1] = s[n - 1];
        d[n / 2] = s[n / 2];
    }
}

/* wl_template_expand_marked's in-place rewrite, inline in the caller's loop (no call per
 * request): when m says out (out->len 0) holds the last expansion of the template whose id is
 * id, and each {{seq}} (from ctx->seq_dec) and value keeps its length, the placeholders are
 * rewritten, out->len set, true. false otherwise (out untouched apart from placeholders already
 * rewritten: the caller then calls wl_template_expand_marked, which expands whole). */
static inline bool wl_marks_rewrite(const struct wl_marks *m, uint64_t id, const struct wl_ctx *ctx, struct wl_buf *out)
{
    if (m->id != id || out->cap < m->len)
        return false;
    const size_t *at = m->at;
    for (size_t i = 0; i < m->n; i++, at += 3) {
        const char *s;
        size_t n;
        if (at[2] == WL_MARK_SEQ) {
            if (!ctx->seq_dec)
                return false;
            s = wl_dec_digits(ctx->seq_dec);
            n = ctx->seq_dec->n;
        } else if (at[2] < ctx->nvalues) {
            s = ctx->values[at[2]].s;
            n = ctx->values[at[2]].len;
        } else {
            return false;
        }
        if (n != at[1])
            return false;
        wl_copy_short(out->p + at[0], s, n);
    }
    out->len = m->len;
    return true;
}

#endif
