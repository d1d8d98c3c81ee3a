/* Requests that differ from one send to the next (issue 26): a targets file (vegeta's http
 * format or JSON lines, src/workload), a data feed and placeholders ({{column}}, {{seq}},
 * {{rand:A-B}}, {{uuid}}) in a request's URL, headers and body. A struct variant_source is
 * opened (and every entry checked) before the run, by `knee run` from its flags; a plan target
 * points to it (plan_target.source) and the engine prepares each request's bytes ahead of its
 * send in a ring per load thread (load/variant.c), so the send stays a write of prepared bytes.
 *
 * Two ways to hold a targets file: a table (a file of at most VARIANT_TABLE_MAX entries, or a
 * single target with placeholders: every entry parsed, checked and compiled once; an entry
 * without placeholders is serialised once and shared by every send of it), or a stream (a
 * larger file, read again from the start at its end, or a pipe, read once: one reader shared by
 * the load threads under a lock, one entry in memory at a time). Every entry of a request
 * source shares one origin (scheme, host and port: the connections are the target's). */
#ifndef KNEE_LOAD_VARIANT_H
#define KNEE_LOAD_VARIANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload/workload.h"

#define VARIANT_TABLE_MAX 100000u       /* entries of a file held as a table (more: streamed) */
#define VARIANT_TABLE_BYTES (64u << 20) /* and its size at most */

/* Where the requests come from (knee run's flags). */
struct variant_opts {
    /* --targets FILE|-: NULL for a single target (the fields below marked "single") */
    const char *targets_path;
    enum wl_format format; /* --targets-format, or wl_format_for_path */
    enum wl_order order;   /* --targets-order: sequential or random (weights apply) */
    /* single: one request with placeholders (knee run URL -m -H --body) */
    const char *method; /* NULL: GET */
    const char *url;
    const char *const *headers; /* -H lines: added to every entry of a targets file too */
    size_t nheaders;
    const char *body;
    size_t body_len;
    /* --feed FILE and --feed-order */
    const char *feed_path;
    enum wl_order feed_order;
    uint64_t seed;     /* --seed: random orders, {{rand}}, {{uuid}} */
    const char *group; /* a targets file: only the entries of this "name" (NULL: every entry) */
    /* --capture: names placeholders may use besides the feed's columns (not one of them); their
     * values come from the setup request, bound by variant_source_bind before the run */
    const char *const *var_names;
    size_t nvars;
};

/* A file whose entries have names (JSON lines' "name") is one target per name: its entries,
 * its share of the load (the sum of their weights), its own tables in the summary and JSON. */
#define VARIANT_MAX_GROUPS 64 /* RUN_MAX_TARGETS */
struct variant_group {
    char *name;
    double weight; /* the sum of its entries' weights */
};
/* The names of o.targets_path's entries, in the order they first appear (*n 0: none, or a pipe,
 * read only by the run). Every entry named or none; a name a target may have; at most
 * VARIANT_MAX_GROUPS. 0, or KNEE_EINVAL with FILE:LINE in err. */
int variant_names(const struct variant_opts *o, struct variant_group **out, size_t *n, char *err, size_t errlen);
void variant_groups_free(struct variant_group *g, size_t n);

struct variant_source;

/* Open and check the requests of o: every entry of a file is read and checked before anything is
 * sent (the method, the URL and its origin, every header, the body file, every placeholder
 * against the feed's columns; a pipe's first entry, the rest as they come). 0, or KNEE_EINVAL
 * (exit 2) with "FILE:LINE: what was expected" or the flag in err. */
int variant_source_open(struct variant_source **out, const struct variant_opts *o, char *err, size_t errlen);
void variant_source_free(struct variant_source *s);

/* Bind o.var_names to values (values[i] is var_names[i]'s, n == o.nvars; copied): every
 * request expands them from now on (before, they expand to nothing). The entries that use one
 * are checked with it: a value in a URL may hold no space, '#' or control byte, one in a header
 * no control byte (a pipe's later entries are checked as they are read). Before the run, from
 * one thread. 0, or KNEE_EINVAL with "FILE:LINE: {{NAME}} in the URL: ..." in err. */
int variant_source_bind(struct variant_source *s, const struct wl_value *values, size_t n, char *err, size_t errlen);

/* The URL the target's connections are for (the first entry's, its origin is everyone's). */
const char *variant_source_url(const struct variant_source *s);
/* The first entry's method (a retry of a stale connection's request asks whether it is
 * idempotent: the engine asks per request, variant.idempotent). */
const char *variant_source_method(const struct variant_source *s);
/* Entries in the file (0: a pipe, not known). */
uint64_t variant_source_entries(const struct variant_source *s);
/* One line for --dry-run and the summary: "targets.txt: 1000 entries (http, sequential); feed
 * users.csv: 200 rows (shuffle)". */
void variant_source_describe(const struct variant_source *s, char *buf, size_t len);

/* After a run: the stream (a pipe) ended before the plan did (its last entry was sent), and a
 * run that stopped on an entry that could not be used says why. "" when neither. */
const char *variant_source_error(const struct variant_source *s);
bool variant_source_ended(const struct variant_source *s);

#endif
