/* Private to load/variant*.c: a request source's compiled entries and state (variant_source.c
 * opens and checks them), the serialisation of one request (variant_build.c) and the threads'
 * rings (variant.c). Not an API: load/variant.h is. */
#ifndef KNEE_LOAD_VARIANT_INTERNAL_H
#define KNEE_LOAD_VARIANT_INTERNAL_H

#include "load/internal.h"
#include "load/variant.h"
#include "load/worker.h"
#include "net/url.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One entry compiled: its templates (an entry without placeholders also has them, literal). */
struct ventry {
    char *method;
    struct wl_template *url;
    struct wl_template **hdr; /* the entry's headers, then the -H lines */
    size_t nhdr;
    struct wl_template *body; /* NULL: none */
    bool literal;             /* no placeholder anywhere: built once (table) */
    bool idempotent, head;
    uint64_t index, line;
    uint64_t repeat; /* sequential order: sends of it per cycle (its weight) */
    double weight;
    /* table, literal: the request built once (variant_prepare) */
    char *h1, *h1_close;
    size_t h1_len, h1_close_len;
    struct h2_request h2;
    bool h2_built;
    struct wl_buf keep_body; /* the body h2 points into */
    /* with placeholders, over HTTP/1.1: the serialised head as a template (wire_compile), so a
     * request is the head and body expanded, nothing parsed or allocated per send */
    char *url_text;
    char **hdr_text;
    char *body_text; /* the body as written (with its placeholders), body_text_len bytes */
    size_t body_text_len;
    /* wire[k]: keep-alive (0) and Connection: close (1). A body without placeholders (or none):
     * the whole request, its Content-Length and body included (wire_whole), one expansion per
     * send; a body with placeholders: the head without Content-Length and its blank line, the
     * body expanded first for its length */
    struct wl_template *wire[2];
    uint64_t wire_id[2]; /* their wl_template_id (wl_marks_rewrite) */
    bool wire_whole;
    bool body_method; /* POST, PUT, PATCH: a Content-Length even for an empty body */
    uint16_t *cols;   /* the feed's columns the request uses (only those are looked up per send) */
    size_t ncols;
};

#define VARIANT_MAX_COLUMNS 256

/* A stream's entries without placeholders, over HTTP/1.1 ("lean": most of a large vegeta file
 * differs only in its URLs): the request's bytes after its target, built by http/client once
 * and kept from entry to entry while the method, headers and body stay the same. */
struct vshape {
    bool valid;
    char *method;
    char **hdr; /* the entry's own headers (the -H lines are every entry's) */
    size_t nhdr;
    char *body; /* NULL: none */
    size_t body_len;
    char *rest[2]; /* " HTTP/1.1\r\nHost: ...\r\n\r\nbody": keep-alive, Connection: close */
    size_t rest_len[2];
    size_t method_len;
    bool idempotent, head;
};

/* --capture's variables (variant_vars.c): named after the feed's columns, valued once bound. */
struct vvars {
    const char **names;      /* the feed's columns, then o.var_names: s->names.names when there are variables */
    size_t ncols;            /* the feed's columns: a variable k is name ncols + k */
    char source[340];        /* for messages: "--feed users.csv or --capture" */
    struct wl_value *values; /* n (o.nvars) owned copies once bound; NULL before */
    size_t n;
    bool *bad_url, *bad_head; /* per variable: its value cannot go into a URL, a header */
};

struct variant_source {
    struct variant_opts o;
    struct vvars vars;
    char feed_name[300]; /* "--feed users.csv", for messages */
    char *first_url;     /* the first entry's URL, as written */
    char *first_method;
    struct url origin; /* of the first entry */
    struct wl_feed *feed;
    const char **cols;
    size_t *bad_url, *bad_head; /* per column: the first row whose value cannot go into a URL, a header (or SIZE_MAX) */
    struct wl_names names;
    uint64_t entries; /* in the file (0: a pipe) */
    /* a table */
    bool table;
    struct ventry *rows;
    size_t nrows;
    double *cum; /* cumulative weights (random) or repeats (sequential), rows of them */
    double total;
    bool unit; /* sequential and every weight 1: request seq takes row seq % nrows */
    /* a stream: one reader under mu */
    pthread_mutex_t mu;
    struct wl_reader *rd;
    bool seekable;
    size_t origin_n;  /* the first URL's scheme and authority: its length */
    bool opt_literal; /* no -H line holds a placeholder */
    bool lean;        /* cur is lean: its bytes are shape's with target */
    struct vshape shape;
    struct wl_buf target; /* a lean cur's request target */
    struct ventry cur;    /* the entry being sent (repeat times) */
    bool have_cur;
    bool restart; /* a file: the next entry is the first (read_at 0), not the reader's next */
    uint64_t cur_left;
    /* the engine's settings, from variant_prepare */
    bool keepalive, want_close, h2_able, prepared;
    /* a table: how a ring prepares request seq, chosen once by variant_prepare (every row built
     * once, every row a wire template, or either); dec: the ring's {{seq}} in decimal when
     * dec_seq (some row's wire uses it), else NULL. false when it failed (s->error says why) */
    bool (*prep)(struct variant_source *s, uint64_t seq, const struct wl_dec *dec, struct variant *v);
    bool dec_seq;
    /* a table whose requests differ only by the feed's row, rendered before the run
     * (variant_render): request (row i, feed row f) is rend[rend_off[k]..rend_off[k + 1]) for
     * k = (i * rend_rows + f) * rend_ways (+ 1: its Connection: close form) */
    char *rend;
    size_t *rend_off;
    size_t rend_rows, rend_ways;
    /* a feed's cells as values, row after row (variant_spans): a request's values are its row's */
    struct wl_value *spans;
    size_t spans_cols;
    /* the end of a stream and why a run stopped on an entry */
    atomic_bool ended;
    atomic_bool failed;
    char error[2048];
};

/* ---- variant_source.c */
void ventry_release(struct ventry *v);
/* Compile e into v (its templates, its origin checked against the first entry's, the feed's
 * values checked for where they are used). where: "FILE:LINE" or the flag. 0 or KNEE_EINVAL. */
int ventry_compile(const struct variant_source *s, const struct wl_entry *e, struct ventry *v, const char *where,
                   char *err, size_t errlen);
/* Sequential order: e's sends per cycle (its weight, a whole number). 0 or KNEE_EINVAL. */
int ventry_repeat(const struct variant_source *s, const struct wl_entry *e, uint64_t *out, char *err, size_t errlen);
/* "FILE:LINE" of e. */
void ventry_where(const struct variant_source *s, const struct wl_entry *e, char *buf, size_t len);
/* e belongs to s (every entry, or those named s->o.group). */
bool vsource_in_group(const struct variant_source *s, const struct wl_entry *e);

/* ---- variant_vars.c (--capture) */
/* After the feed is open: the variables' names added to s->names. 0 or KNEE_EINVAL. */
int vvars_open(struct variant_source *s, char *err, size_t errlen);
/* The bound values appended to vals[0..n) (the feed's columns): the new count (n before binding). */
size_t vvars_values(const struct variant_source *s, struct wl_value *vals, size_t n);
/* v's use of the bound values (none bound: 0): where a value cannot go, KNEE_EINVAL naming where. */
int vvars_check(const struct variant_source *s, const struct ventry *v, const char *where, char *err, size_t errlen);
void vvars_release(struct vvars *vv);

/* ---- variant_build.c */
/* Expand v for request seq field by field and serialise it (HTTP/1.1, Connection: close when
 * s->want_close, HTTP/2 when s->h2_able) into the heap buffers *h1, *h1_close, *h2. 0, or
 * KNEE_EINVAL with the reason (an expanded URL or header that is not valid), -ENOMEM. */
int variant_build(const struct variant_source *s, const struct ventry *v, uint64_t seq, struct variant_bufs *b,
                  char **h1, size_t *h1_len, char **h1_close, size_t *h1_close_len, struct h2_request *h2,
                  bool *h2_built, char *why, size_t whylen);
/* v's HTTP/1.1 head as one template (v->wire). 0 or KNEE_EINVAL with the reason. */
int variant_wire_compile(const struct variant_source *s, struct ventry *v, char *why, size_t whylen);
/* Point v at request seq of row: the row's shared bytes, its wire templates expanded, or built. */
int variant_fill(struct variant_source *s, const struct ventry *row, uint64_t seq, struct variant *v, char *why,
                 size_t whylen);
/* Point v at row's bytes built once (row->h1 set: a literal entry of a table). */
static inline void variant_share(const struct ventry *row, struct variant *v)
{
    v->entry = row->index;
    v->idempotent = row->idempotent;
    v->head = row->head;
    v->h1 = row->h1;
    v->h1_len = row->h1_len;
    v->h1_close = row->h1_close;
    v->h1_close_len = row->h1_close_len;
    v->h2 = row->h2_built ? &row->h2 : NULL;
}
/* e as a lean entry of a stream (no placeholder, the first URL's origin as written, a target
 * url_parse takes): s->target and s->shape set, 1; 0 when e is not one (the caller compiles
 * it); KNEE_EINVAL with the reason (http/client's) when its shape cannot be built. */
int variant_lean(struct variant_source *s, const struct wl_entry *e, char *why, size_t whylen);
/* Point v at the lean entry's bytes: shape's method, the target, shape's rest. */
void variant_fill_lean(const struct variant_source *s, struct variant *v);
void vshape_release(struct vshape *sh);

/* Request seq of row (row->wire[0] set) into v's buffers, its wire templates expanded (dec:
 * seq in decimal, or NULL). 0 or -ENOMEM. */
int variant_fill_wire(const struct variant_source *s, const struct ventry *row, uint64_t seq, const struct wl_dec *dec,
                      struct variant *v);
/* s->prep and s->dec_seq for s's table as prepared (variant.c). */
void variant_choose_prep(struct variant_source *s);
/* s->prep of a table whose every row is a wire template (HTTP/1.1, placeholders): expanded
 * into v's buffers, in place when they hold the row's last expansion. */
bool variant_prep_wire(struct variant_source *s, uint64_t seq, const struct wl_dec *dec, struct variant *v);
/* At most this many requests (rows times feed rows) and bytes are rendered before the run. */
#define VARIANT_RENDER_MAX 100000u
#define VARIANT_RENDER_BYTES (16u << 20)
/* When every request of s's table differs from another only by the feed's row (no {{seq}},
 * {{rand}}, {{uuid}} or --capture, HTTP/1.1) and all of them fit VARIANT_RENDER_MAX and
 * VARIANT_RENDER_BYTES: each built now, and s->prep shares them (true). Else false, s as it
 * was. After variant_prepare's wires are compiled. */
bool variant_render(struct variant_source *s);
void variant_rendered_free(struct variant_source *s);
/* A feed's cells as s->spans (at most VARIANT_SPANS_BYTES of them; not with --capture, nor when
 * rendered): a request's values are then a row of it, nothing gathered per send. */
#define VARIANT_SPANS_BYTES (64u << 20)
void variant_spans(struct variant_source *s);
/* Free v's buffers (v itself is the caller's). */
void variant_bufs_release(struct variant *v);
/* A prep failed with r (-ENOMEM or KNEE_EINVAL and why): the first thread to fail says why in
 * s->error, the source stops. false. */
bool variant_prep_failed(struct variant_source *s, int r, const char *why);

/* splitmix64: a uniform double in [0, 1) from (seed, seq) for the weighted random pick. */
static inline double variant_hash01(uint64_t seed, uint64_t seq)
{
    uint64_t z = seed ^ (seq * 0x9e3779b97f4a7c15ULL) ^ 0xa0761d6478bd642fULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* The row of the table request seq uses: its place in the cycle (sequential: an entry of weight
 * w takes w places) or a weighted draw from (seed, seq). */
static inline const struct ventry *table_row(const struct variant_source *s, uint64_t seq)
{
    if (s->unit) /* sequential, every entry once per cycle: no search */
        return &s->rows[s->nrows == 1 ? 0 : seq % s->nrows];
    double x = s->o.order == WL_ORDER_SEQUENTIAL ? (double)(seq % (uint64_t)s->total)
                                                 : variant_hash01(s->o.seed, seq) * s->total;
    size_t lo = 0, hi = s->nrows - 1;
    while (lo < hi) { /* the first row whose cumulative weight exceeds x */
        size_t mid = lo + (hi - lo) / 2;
        if (s->cum[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return &s->rows[lo];
}

/* Free what v built for its last request (its buffers stay for the next). */
void variant_drop_own(struct variant *v);

#endif
