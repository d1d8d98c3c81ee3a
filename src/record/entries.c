/* Per-entry outcome tables (record/entries.h): their arithmetic, their identity, the order a
 * summary prints them in, and their JSON form, written and read here only. */
#include "record/entries.h"

#include "core/err.h"
#include "core/json.h"
#include "record/record.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* One code's count into c's list (or other). */
static void add_code(struct run_entry_counts *c, uint16_t code, uint64_t n)
{
    for (int k = 0; k < RUN_ENTRY_CODES; k++) {
        if (c->code[k] == code) {
            c->code_n[k] = sat_add(c->code_n[k], n);
            return;
        }
        if (c->code[k] == 0) {
            c->code[k] = code;
            c->code_n[k] = n;
            return;
        }
    }
    c->code_other = sat_add(c->code_other, n);
}

void record_entry_counts_add(struct run_entry_counts *d, const struct run_entry_counts *s)
{
    for (int o = 0; o < OUTCOME_COUNT; o++)
        d->outcome[o] = sat_add(d->outcome[o], s->outcome[o]);
    d->latency_sum_ns = sat_add(d->latency_sum_ns, s->latency_sum_ns);
    if (s->latency_max_ns > d->latency_max_ns)
        d->latency_max_ns = s->latency_max_ns;
    for (int k = 0; k < RUN_ENTRY_CODES && s->code[k]; k++)
        add_code(d, s->code[k], s->code_n[k]);
    d->code_other = sat_add(d->code_other, s->code_other);
}

uint64_t record_entry_sent(const struct run_entry_counts *c)
{
    uint64_t n = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED)
            n = sat_add(n, c->outcome[o]);
    return n;
}

uint64_t record_entry_completed(const struct run_entry_counts *c)
{
    uint64_t n = record_entry_sent(c);
    return n - (c->outcome[OUTCOME_CANCELLED] < n ? c->outcome[OUTCOME_CANCELLED] : n);
}

uint64_t record_entry_failed(const struct run_entry_counts *c)
{
    uint64_t n = 0;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (record_outcome_failed((enum reqlog_outcome)o))
            n = sat_add(n, c->outcome[o]);
    return n;
}

double record_entry_mean_ms(const struct run_entry_counts *c)
{
    uint64_t n = record_entry_completed(c);
    return n ? (double)c->latency_sum_ns / (double)n / 1e6 : NAN;
}

void record_entries_release(struct run_entries *es)
{
    for (size_t i = 0; i < es->n; i++) {
        free(es->e[i].method);
        free(es->e[i].url);
        free(es->e[i].name);
        free(es->e[i].target);
    }
    free(es->e);
    memset(es, 0, sizeof *es);
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h * 0x100000001b3ULL; /* the separator, a NUL byte (xor 0 leaves h as it is) */
}

uint64_t record_entries_hash(const struct run_entries *es)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < es->n; i++) {
        h = fnv(h, es->e[i].method);
        h = fnv(h, es->e[i].url);
        h = fnv(h, es->e[i].name);
    }
    return h;
}

bool record_entries_same(const struct run_entries *a, const struct run_entries *b)
{
    return a->n == b->n && a->hash == b->hash;
}

void record_entries_add(struct run_entries *d, const struct run_entries *s)
{
    for (size_t i = 0; i < d->n && i < s->n; i++)
        record_entry_counts_add(&d->e[i].c, &s->e[i].c);
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void record_entries_copy(struct run_entries *d, const struct run_entries *s)
{
    d->n = s->n;
    d->hash = s->hash;
    d->e = s->n ? xcalloc(s->n, sizeof *d->e) : NULL;
    for (size_t i = 0; i < s->n; i++) {
        d->e[i] = s->e[i];
        d->e[i].method = dup_or_null(s->e[i].method);
        d->e[i].url = dup_or_null(s->e[i].url);
        d->e[i].name = dup_or_null(s->e[i].name);
        d->e[i].target = dup_or_null(s->e[i].target);
    }
}

static int worse_first(const void *pa, const void *pb, void *ctx)
{
    const struct run_entries *es = ctx;
    const struct run_entry *a = &es->e[*(const size_t *)pa], *b = &es->e[*(const size_t *)pb];
    uint64_t fa = record_entry_failed(&a->c), fb = record_entry_failed(&b->c);
    if (fa != fb)
        return fa > fb ? -1 : 1;
    if (a->c.latency_max_ns != b->c.latency_max_ns)
        return a->c.latency_max_ns > b->c.latency_max_ns ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

void record_entries_worst(const struct run_entries *es, size_t *idx)
{
    for (size_t i = 0; i < es->n; i++)
        idx[i] = i;
    qsort_r(idx, es->n, sizeof *idx, worse_first, (void *)es);
}

/* ------------------------------------------------------------------ JSON */

static void write_codes(struct jw *j, const struct run_entry_counts *c)
{
    jw_key(j, "status_codes");
    jw_object_begin(j);
    /* numeric order, as every "status_codes" is written */
    bool done[RUN_ENTRY_CODES] = {false};
    for (;;) {
        int best = -1;
        for (int k = 0; k < RUN_ENTRY_CODES && c->code[k]; k++)
            if (!done[k] && (best < 0 || c->code[k] < c->code[best]))
                best = k;
        if (best < 0)
            break;
        done[best] = true;
        char key[8];
        snprintf(key, sizeof key, "%u", (unsigned)c->code[best]);
        jw_kv_uint(j, key, c->code_n[best]);
    }
    if (c->code_other)
        jw_kv_uint(j, "other", c->code_other);
    jw_object_end(j);
}

static void write_entry(struct jw *j, const struct run_entry *e)
{
    const struct run_entry_counts *c = &e->c;
    jw_object_begin(j);
    jw_kv_uint(j, "index", e->index);
    jw_kv_string(j, "method", e->method ? e->method : "");
    jw_kv_string(j, "url", e->url ? e->url : "");
    if (e->name)
        jw_kv_string(j, "name", e->name);
    jw_kv_string(j, "target", e->target ? e->target : "");
    jw_kv_uint(j, "sent", record_entry_sent(c));
    jw_kv_uint(j, "completed", record_entry_completed(c));
    jw_kv_uint(j, "failed", record_entry_failed(c));
    jw_key(j, "outcomes");
    jw_object_begin(j);
    for (int o = 0; o < OUTCOME_COUNT; o++)
        if (o != OUTCOME_DROPPED) /* an entry is drawn at the send: never dropped */
            jw_kv_uint(j, reqlog_outcome_name((enum reqlog_outcome)o), c->outcome[o]);
    jw_object_end(j);
    write_codes(j, c);
    jw_key(j, "latency");
    jw_object_begin(j);
    jw_kv_double(j, "mean", record_entry_mean_ms(c));
    jw_kv_double(j, "max", record_entry_completed(c) ? (double)c->latency_max_ns / 1e6 : NAN);
    jw_kv_uint(j, "sum_ns", c->latency_sum_ns);
    jw_kv_uint(j, "max_ns", c->latency_max_ns);
    jw_object_end(j);
    jw_object_end(j);
}

void record_entries_write_json(struct jw *j, const struct run_entries *es)
{
    if (!es->n)
        return;
    char hex[24];
    snprintf(hex, sizeof hex, "%016" PRIx64, es->hash);
    jw_kv_string(j, "entries_hash", hex);
    jw_key(j, "entries");
    jw_array_begin(j);
    for (size_t i = 0; i < es->n; i++)
        write_entry(j, &es->e[i]);
    jw_array_end(j);
}

/* A count at key of o: 0 and true when fine; strict: false when present and not a count. */
static bool read_count(const json_t *o, const char *key, bool strict, uint64_t *out)
{
    const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    *out = 0;
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return true;
    }
    return !strict || !v;
}

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int read_codes(const json_t *o, struct run_entry_counts *c, bool strict, size_t i, char *err, size_t errlen)
{
    if (!json_is_object(o))
        return 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        bool count = json_is_integer(v) && json_integer_value(v) >= 0;
        uint64_t n = count ? (uint64_t)json_integer_value(v) : 0;
        char *end = NULL;
        long code = strcmp(key, "other") == 0 ? 0 : strtol(key, &end, 10);
        bool code_ok = strcmp(key, "other") == 0 || (end && *end == 0 && code >= 100 && code <= 999);
        if (strict && (!count || !code_ok))
            return knee_fail(err, errlen, KNEE_EFORMAT, "entries[%zu].status_codes.%s is not a count of a status", i,
                             key);
        if (!code_ok)
            continue;
        if (code == 0)
            c->code_other = sat_add(c->code_other, n);
        else
            add_code(c, (uint16_t)code, n);
    }
    return 0;
}

static int read_entry(const json_t *v, size_t i, struct run_entry *e, bool strict, char *err, size_t errlen)
{
    if (!json_is_object(v))
        return knee_fail(err, errlen, KNEE_EFORMAT, "entries[%zu] is not an object", i);
    uint64_t idx;
    if (!read_count(v, "index", true, &idx) || (strict && idx != i))
        return knee_fail(err, errlen, KNEE_EFORMAT, "entries[%zu].index is not %zu", i, i);
    e->index = json_is_integer(json_object_get(v, "index")) ? idx : i;
    e->method = dup_or_null(str_of(v, "method"));
    e->url = dup_or_null(str_of(v, "url"));
    e->name = dup_or_null(str_of(v, "name"));
    e->target = dup_or_null(str_of(v, "target"));
    const json_t *oc = json_object_get(v, "outcomes");
    for (int o = 0; o < OUTCOME_COUNT; o++) {
        const char *name = reqlog_outcome_name((enum reqlog_outcome)o);
        if (!read_count(oc, name, strict, &e->c.outcome[o]))
            return knee_fail(err, errlen, KNEE_EFORMAT, "entries[%zu].outcomes.%s is not a count", i, name);
    }
    const json_t *lat = json_object_get(v, "latency");
    if (!read_count(lat, "sum_ns", strict, &e->c.latency_sum_ns) ||
        !read_count(lat, "max_ns", strict, &e->c.latency_max_ns))
        return knee_fail(err, errlen, KNEE_EFORMAT, "entries[%zu].latency: sum_ns or max_ns is not a count", i);
    return read_codes(json_object_get(v, "status_codes"), &e->c, strict, i, err, errlen);
}

int record_entries_read_json(const json_t *root, struct run_entries *es, bool strict, char *err, size_t errlen)
{
    memset(es, 0, sizeof *es);
    const json_t *a = json_is_object(root) ? json_object_get(root, "entries") : NULL;
    if (!a)
        return 0;
    if (!json_is_array(a)) {
        if (strict)
            return knee_fail(err, errlen, KNEE_EFORMAT, "entries is not an array");
        return 0;
    }
    size_t n = json_array_size(a);
    es->e = n ? xcalloc(n, sizeof *es->e) : NULL;
    es->n = n;
    for (size_t i = 0; i < n; i++) {
        int rc = read_entry(json_array_get(a, i), i, &es->e[i], strict, err, errlen);
        if (rc) {
            if (strict) {
                record_entries_release(es);
                return rc;
            }
        }
    }
    es->hash = record_entries_hash(es);
    const char *h = str_of(root, "entries_hash");
    if (strict && h) {
        char hex[24];
        snprintf(hex, sizeof hex, "%016" PRIx64, es->hash);
        if (strcmp(h, hex) != 0) {
            record_entries_release(es);
            return knee_fail(err, errlen, KNEE_EFORMAT, "entries_hash %s does not match its entries (%s)", h, hex);
        }
    }
    return 0;
}
