/* A small streaming JSON writer over FILE *: it tracks nesting and commas so callers write
 * keys and values in order. Non-finite numbers are written as null (JSON has no NaN). */
#ifndef KNEE_CORE_JSON_H
#define KNEE_CORE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32

struct jw {
    FILE *out;
    int depth;
    bool first[JW_MAX_DEPTH]; /* no element written yet at this depth */
    bool after_key;
    bool pretty;
};

/* Start a document on out (borrowed; the caller opens, flushes and closes it). pretty: one
 * member per line, indented by two spaces. Nesting is limited to JW_MAX_DEPTH - 1 levels
 * (deeper output is not well formed). Write errors are left in out's error flag (ferror);
 * nothing here returns them. One struct jw per thread. */
void jw_init(struct jw *j, FILE *out, bool pretty);
/* Open and close objects and arrays; calls must nest as the JSON does. */
void jw_object_begin(struct jw *j);
void jw_object_end(struct jw *j);
void jw_array_begin(struct jw *j);
void jw_array_end(struct jw *j);
/* A key inside an object; the next call writes its value. */
void jw_key(struct jw *j, const char *key);
/* Values: s is a NUL-terminated string, written with quotes, backslash and control bytes
 * escaped (RFC 8259); other bytes pass through unchanged. */
void jw_string(struct jw *j, const char *s);
void jw_double(struct jw *j, double v); /* %.17g trimmed: round-trips; null when not finite */
void jw_int(struct jw *j, int64_t v);
void jw_uint(struct jw *j, uint64_t v);
void jw_bool(struct jw *j, bool v);
void jw_null(struct jw *j);
/* key + value shorthands */
void jw_kv_string(struct jw *j, const char *key, const char *s);
void jw_kv_double(struct jw *j, const char *key, double v);
void jw_kv_int(struct jw *j, const char *key, int64_t v);
void jw_kv_uint(struct jw *j, const char *key, uint64_t v);
void jw_kv_bool(struct jw *j, const char *key, bool v);
/* Finish: a newline after the top-level value. */
void jw_end(struct jw *j);

#endif
