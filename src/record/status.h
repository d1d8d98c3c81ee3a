/* Responses counted by HTTP status: one compact table (struct run_status_counts) that a run
 * record keeps per target and for all, and that any other breakdown (a group of targets) can
 * carry too; its arithmetic, its classes (2xx ...), its top codes for a summary line, and its
 * one JSON form, "status_codes": {"200": 90, "404": 10} (docs/FORMATS.md, "status_codes"). */
#ifndef KNEE_RECORD_STATUS_H
#define KNEE_RECORD_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One slot per status 100 .. 599, and one (RUN_STATUS_OTHER) for any status a response line
 * carried outside that range (the JSON's "other"). */
#define RUN_STATUS_MIN 100
#define RUN_STATUS_MAX 599
#define RUN_STATUS_OTHER (RUN_STATUS_MAX - RUN_STATUS_MIN + 1)
#define RUN_STATUS_SLOTS (RUN_STATUS_OTHER + 1)

/* Responses by status: n[status - RUN_STATUS_MIN], n[RUN_STATUS_OTHER] for the rest. Plain
 * counts: zeroed is empty, adding is slot by slot (record_status_add). */
struct run_status_counts {
    uint64_t n[RUN_STATUS_SLOTS];
};

/* The slot of a status (RUN_STATUS_OTHER outside 100 .. 599). */
size_t record_status_slot(int status);
/* The status of a slot (-1 for RUN_STATUS_OTHER or beyond). */
int record_status_of_slot(size_t slot);
/* One response with this status counted (status <= 0: nothing; the caller counts only
 * responses whose status line was read). */
void record_status_count(struct run_status_counts *s, int status);
/* d += s, slot by slot (saturating at UINT64_MAX: a document's counts may be anything). */
void record_status_add(struct run_status_counts *d, const struct run_status_counts *s);
/* Every response counted (saturating). */
uint64_t record_status_total(const struct run_status_counts *s);
/* The responses of a class: cls 1 .. 5 for 1xx .. 5xx, 0 for "other" (outside 100 .. 599). */
uint64_t record_status_class(const struct run_status_counts *s, int cls);
/* True when a response had a status outside 200 .. 399. */
bool record_status_any_failed(const struct run_status_counts *s);

/* One status and its count, for a summary line. status -1: "other". */
struct run_status_entry {
    int status;
    uint64_t count;
};
/* The statuses of s for which want(status, ctx) is true (NULL: every one; "other" is passed
 * as -1), by count, largest first (ties: the smaller status first), up to max of them into
 * out; returns how many there are in all (maybe more than max). */
size_t record_status_top(const struct run_status_counts *s, bool (*want)(int status, void *ctx), void *ctx,
                         struct run_status_entry *out, size_t max);

/* The JSON form (docs/FORMATS.md, "status_codes"): an object of the non-zero slots in numeric
 * order, keyed by the status as decimal text, "other" last. */
struct jw;
void record_status_write_json(struct jw *j, const char *key, const struct run_status_counts *s);

struct json_t; /* jansson's */
/* s from such an object (zeroed first). Lenient (strict false): a missing or non-object value
 * is empty, a value that is not a count is 0, a key that is neither a status of three digits
 * nor "other" is left out (a status of three digits outside 100 .. 599 counts as "other").
 * Strict (knee merge): KNEE_EFORMAT with "status_codes.KEY is not a count" or
 * "status_codes has a key \"KEY\" that is not a status" in err; a missing object is empty.
 * Returns 0. */
int record_status_read_json(const struct json_t *o, struct run_status_counts *s, bool strict, char *err, size_t errlen);

#endif
