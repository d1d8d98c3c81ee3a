/* Per-entry outcome tables of a targets file held as a table (issue 26): every entry of the
 * file is a row with its requests, outcomes, a short list of status codes and its latency's
 * mean and max. The engine counts into one array per load thread indexed by the entry's place
 * in the file (record_entry_count: a few additions, no lock) and adds the arrays up at the end;
 * the run JSON carries them as "entries" (docs/FORMATS.md, "entries"), knee merge adds the
 * shards' by index when they ran the same file (record_entries_hash). Plain data, one owner at
 * a time.
 *
 * No percentiles per entry: a histogram per entry and per load thread would multiply the
 * memory (100,000 entries x threads); the per-request log gives them (knee stats --by entry). */
#ifndef KNEE_RECORD_ENTRIES_H
#define KNEE_RECORD_ENTRIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reqlog/reqlog.h"

#define RUN_ENTRY_CODES 4 /* status codes an entry lists by value; the rest count as "other" */

/* What one entry's requests came to (the warm-up's left out). sent = the outcomes but dropped
 * (an entry is drawn when its request is sent: a request dropped before has none). */
struct run_entry_counts {
    uint64_t outcome[OUTCOME_COUNT];
    uint64_t latency_sum_ns;        /* of the completed requests (every outcome but dropped, cancelled) */
    uint64_t latency_max_ns;        /* the largest of them */
    uint16_t code[RUN_ENTRY_CODES]; /* in the order first seen; 0 ends the list */
    uint64_t code_n[RUN_ENTRY_CODES];
    uint64_t code_other; /* responses with a status beyond the list */
};

/* One request of the entry ended in outcome o after lat_ns (ignored for dropped, cancelled),
 * with status (0: no status line read). The request path's counter: a few instructions. */
static inline void record_entry_count(struct run_entry_counts *c, enum reqlog_outcome o, uint64_t lat_ns, int status)
{
    c->outcome[o]++;
    if (o == OUTCOME_DROPPED || o == OUTCOME_CANCELLED)
        return;
    c->latency_sum_ns += lat_ns;
    if (lat_ns > c->latency_max_ns)
        c->latency_max_ns = lat_ns;
    if (status <= 0 || o > OUTCOME_INVALID)
        return;
    for (int k = 0; k < RUN_ENTRY_CODES; k++) {
        if (c->code[k] == status) {
            c->code_n[k]++;
            return;
        }
        if (c->code[k] == 0) {
            c->code[k] = (uint16_t)(status < 1000 ? status : 999);
            c->code_n[k] = 1;
            return;
        }
    }
    c->code_other++;
}

/* d += s: outcomes, sums, the larger max; s's codes into d's list (a code d has no room for
 * goes to other). Saturating. */
void record_entry_counts_add(struct run_entry_counts *d, const struct run_entry_counts *s);
/* Requests sent (the outcomes but dropped), completed (but dropped and cancelled), failed
 * (record_outcome_failed's: http_error, invalid, transport, timeout). */
uint64_t record_entry_sent(const struct run_entry_counts *c);
uint64_t record_entry_completed(const struct run_entry_counts *c);
uint64_t record_entry_failed(const struct run_entry_counts *c);
/* The mean latency of the completed requests, ms (NAN: none). */
double record_entry_mean_ms(const struct run_entry_counts *c);

/* One entry of the file. */
struct run_entry {
    uint64_t index; /* 0-based, file order */
    char *method;
    char *url;    /* as written (placeholders unexpanded) */
    char *name;   /* JSON lines' "name" (NULL: none) */
    char *target; /* the target it counts for (owned) */
    struct run_entry_counts c;
};

/* The entries of a record: n in file order, and the file's identity (its entry count and a hash
 * of every entry's method, URL and name, record_entries_hash) that knee merge compares. */
struct run_entries {
    size_t n;
    struct run_entry *e;
    uint64_t hash;
};

void record_entries_release(struct run_entries *es);
/* FNV-1a 64 of every entry's method, URL and name, in order (separated by NUL bytes). */
uint64_t record_entries_hash(const struct run_entries *es);
/* d += s by index (same n and hash: the caller checks with record_entries_same). */
void record_entries_add(struct run_entries *d, const struct run_entries *s);
bool record_entries_same(const struct run_entries *a, const struct run_entries *b);
/* A deep copy of s into d (d's contents are not released). */
void record_entries_copy(struct run_entries *d, const struct run_entries *s);

/* The order a summary prints them in: the worst first, by failed requests, then by latency max,
 * then by index. idx[0..es->n) is filled with entry indices. */
void record_entries_worst(const struct run_entries *es, size_t *idx);

/* The JSON (docs/FORMATS.md, "entries"): "entries" (an array in file order) and "entries_hash"
 * (16 hex digits). Nothing when es->n is 0. */
struct jw;
void record_entries_write_json(struct jw *j, const struct run_entries *es);
struct json_t;
/* es from root's "entries" (zeroed first; none: n 0). Lenient (strict false): a missing number
 * reads as 0. Strict (knee merge): KNEE_EFORMAT with "entries[3].outcomes.ok is not a count" or
 * the like in err. Returns 0 or KNEE_EFORMAT. */
int record_entries_read_json(const struct json_t *root, struct run_entries *es, bool strict, char *err, size_t errlen);

#endif
