/* Private to load/variant*.c: a request source's compiled entries and state (variant_source.c
 * opens and checks them), the serialisation of one request (variant_build.c) and the threads'
 * rings (variant.c). Not an API: load/variant.h is. */
#ifndef KNEE_LOAD_VARIANT_INTERNAL_H
#define KNEE_LOAD_VARIANT_INTERNAL_H

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
    struct wl_template *wire[2]; /* the head without Content-Length and its end: keep-alive, close */
    bool wire_cl;                /* a Content-Length line is due (a body, or POST, PUT, PATCH) */
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
    /* a stream: one reader under mu */
    pthread_mutex_t mu;
    struct wl_reader *rd;
    bool seekable;
    struct ventry cur; /* the entry being sent (repeat times) */
    bool have_cur;
    bool restart; /* a file: the next entry is the first (read_at 0), not the reader's next */
    uint64_t cur_left;
    /* the engine's settings, from variant_prepare */
    bool keepalive, want_close, h2_able, prepared;
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
/* Free what v built for its last request (its buffers stay for the next). */
void variant_drop_own(struct variant *v);

#endif
