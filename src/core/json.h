/* A small streaming JSON writer over FILE *: it tracks nesting and commas so callers write
 * keys and values in order. Non-finite numbers are written as null (JSON has no NaN). */
#ifndef KNEE_CORE_JSON_H
#define KNEE_CORE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
    FILE *out;
    int depth;
    bool first[JSON_MAX_DEPTH]; /* no element written yet at this depth */
    bool after_key;
    bool pretty;
};

/* Start a document on out (borrowed; the caller opens, flushes and closes it). pretty: one
 * member per line, indented by two spaces. Nesting is limited to JSON_MAX_DEPTH - 1 levels
 * (deeper output is not well formed). Write errors are left in out's error flag (ferror);
 * nothing here returns them. One struct json per thread. */
void json_init(struct json *j, FILE *out, bool pretty);
/* Open and close objects and arrays; calls must nest as the JSON does. */
void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
/* A key inside an object; the next call writes its value. */
void json_key(struct json *j, const char *key);
/* Values: s is a NUL-terminated string, written with quotes, backslash and control bytes
 * escaped (RFC 8259); other bytes pass through unchanged. */
void json_string(struct json *j, const char *s);
void json_double(struct json *j, double v); /* %.17g trimmed: round-trips; null when not finite */
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* key + value shorthands */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_double(struct json *j, const char *key, double v);
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_bool(struct json *j, const char *key, bool v);
/* Finish: a newline after the top-level value. */
void json_end(struct json *j);

#endif
