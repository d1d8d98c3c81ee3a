/* Responses by HTTP status (record/status.h): the table's arithmetic, its classes, its top
 * codes, and its JSON form, written and read here only. */
#include "record/status.h"

#include "core/err.h"
#include "core/json.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t record_status_slot(int status)
{
    return status >= RUN_STATUS_MIN && status <= RUN_STATUS_MAX ? (size_t)(status - RUN_STATUS_MIN) : RUN_STATUS_OTHER;
}

int record_status_of_slot(size_t slot)
{
    return slot < RUN_STATUS_OTHER ? (int)slot + RUN_STATUS_MIN : -1;
}

void record_status_count(struct run_status_counts *s, int status)
{
    if (status > 0)
        s->n[record_status_slot(status)]++;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void record_status_add(struct run_status_counts *d, const struct run_status_counts *s)
{
    for (size_t k = 0; k < RUN_STATUS_SLOTS; k++)
        d->n[k] = sat_add(d->n[k], s->n[k]);
}

uint64_t record_status_total(const struct run_status_counts *s)
{
    uint64_t sum = 0;
    for (size_t k = 0; k < RUN_STATUS_SLOTS; k++)
        sum = sat_add(sum, s->n[k]);
    return sum;
}

uint64_t record_status_class(const struct run_status_counts *s, int cls)
{
    if (cls == 0)
        return s->n[RUN_STATUS_OTHER];
    if (cls < 1 || cls > 5)
        return 0;
    uint64_t sum = 0;
    for (int st = cls * 100; st < cls * 100 + 100; st++)
        sum = sat_add(sum, s->n[record_status_slot(st)]);
    return sum;
}

bool record_status_any_failed(const struct run_status_counts *s)
{
    for (size_t k = 0; k < RUN_STATUS_SLOTS; k++) {
        int st = record_status_of_slot(k);
        if (s->n[k] && (st < 200 || st > 399))
            return true;
    }
    return false;
}

size_t record_status_top(const struct run_status_counts *s, bool (*want)(int status, void *ctx), void *ctx,
                         struct run_status_entry *out, size_t max)
{
    size_t n = 0, kept = 0;
    for (size_t k = 0; k < RUN_STATUS_SLOTS; k++) {
        int st = record_status_of_slot(k);
        if (!s->n[k] || (want && !want(st, ctx)))
            continue;
        n++;
        /* insertion into the kept ones, largest count first; slots come in status order
         * ("other" last), so an equal count stays after the smaller status */
        size_t at = kept;
        while (at > 0 && out[at - 1].count < s->n[k])
            at--;
        if (at >= max)
            continue;
        size_t last = kept < max ? kept : max - 1;
        memmove(out + at + 1, out + at, (last - at) * sizeof *out);
        out[at] = (struct run_status_entry){st, s->n[k]};
        if (kept < max)
            kept++;
    }
    return n;
}

void record_status_write_json(struct jw *j, const char *key, const struct run_status_counts *s)
{
    jw_key(j, key);
    jw_object_begin(j);
    for (size_t k = 0; k < RUN_STATUS_SLOTS; k++) {
        if (!s->n[k])
            continue;
        char name[16];
        int st = record_status_of_slot(k);
        if (st < 0)
            snprintf(name, sizeof name, "other");
        else
            snprintf(name, sizeof name, "%d", st);
        jw_kv_uint(j, name, s->n[k]);
    }
    jw_object_end(j);
}

/* A key's slot: a status of three digits (100 .. 599, else "other"), "other"; -1 for anything else. */
static long slot_of_key(const char *key)
{
    if (strcmp(key, "other") == 0)
        return RUN_STATUS_OTHER;
    if (strlen(key) != 3 || key[0] < '0' || key[0] > '9' || key[1] < '0' || key[1] > '9' || key[2] < '0' ||
        key[2] > '9')
        return -1;
    return (long)record_status_slot(atoi(key));
}

int record_status_read_json(const json_t *o, struct run_status_counts *s, bool strict, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (!json_is_object(o)) {
        if (strict && o && !json_is_null(o))
            return knee_fail(err, errlen, KNEE_EFORMAT, "status_codes is not an object");
        return 0;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        long slot = slot_of_key(key);
        if (slot < 0) {
            if (strict)
                return knee_fail(err, errlen, KNEE_EFORMAT, "status_codes has a key \"%.32s\" that is not a status",
                                 key);
            continue;
        }
        bool is_count = json_is_integer(v) && json_integer_value(v) >= 0;
        if (!is_count) {
            if (strict)
                return knee_fail(err, errlen, KNEE_EFORMAT, "status_codes.%s is not a count", key);
            continue;
        }
        s->n[slot] = sat_add(s->n[slot], (uint64_t)json_integer_value(v));
    }
    return 0;
}
