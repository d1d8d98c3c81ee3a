/* Streaming JSON writer (RFC 8259 strings: quotes, backslash and control bytes escaped). */
#include "core/json.h"

#include <math.h>
#include <stdlib.h>

void json_init(struct json *j, FILE *out, bool pretty)
{
    j->out = out;
    j->depth = 0;
    j->first[0] = true;
    j->after_key = false;
    j->pretty = pretty;
}

static void indent(struct json *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* Called before every value or key: writes the separating comma and indentation. */
static void before(struct json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (!j->first[j->depth])
        fputc(',', j->out);
    j->first[j->depth] = false;
    if (j->depth > 0)
        indent(j);
}

static void open(struct json *j, char c)
{
    before(j);
    fputc(c, j->out);
    if (j->depth + 1 < JSON_MAX_DEPTH)
        j->depth++;
    j->first[j->depth] = true;
}

static void close_(struct json *j, char c)
{
    bool empty = j->first[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (!empty)
        indent(j);
    fputc(c, j->out);
}

void json_object_begin(struct json *j)
{
    open(j, '{');
}
void json_object_end(struct json *j)
{
    close_(j, '}');
}
void json_array_begin(struct json *j)
{
    open(j, '[');
}
void json_array_end(struct json *j)
{
    close_(j, ']');
}

static void write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void json_key(struct json *j, const char *key)
{
    before(j);
    write_string(j->out, key);
    fputs(j->pretty ? ": " : ":", j->out);
    j->after_key = true;
}

void json_string(struct json *j, const char *s)
{
    before(j);
    if (s)
        write_string(j->out, s);
    else
        fputs("null", j->out);
}

void json_double(struct json *j, double v)
{
    before(j);
    if (!isfinite(v)) {
        fputs("null", j->out);
        return;
    }
    /* Shortest of %.15g..%.17g that round-trips, so 38.2 prints as 38.2. */
    char buf[32];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, j->out);
}

void json_int(struct json *j, int64_t v)
{
    before(j);
    fprintf(j->out, "%lld", (long long)v);
}

void json_uint(struct json *j, uint64_t v)
{
    before(j);
    fprintf(j->out, "%llu", (unsigned long long)v);
}

void json_bool(struct json *j, bool v)
{
    before(j);
    fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j)
{
    before(j);
    fputs("null", j->out);
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
    json_key(j, key);
    json_string(j, s);
}
void json_kv_double(struct json *j, const char *key, double v)
{
    json_key(j, key);
    json_double(j, v);
}
void json_kv_int(struct json *j, const char *key, int64_t v)
{
    json_key(j, key);
    json_int(j, v);
}
void json_kv_uint(struct json *j, const char *key, uint64_t v)
{
    json_key(j, key);
    json_uint(j, v);
}
void json_kv_bool(struct json *j, const char *key, bool v)
{
    json_key(j, key);
    json_bool(j, v);
}

void json_end(struct json *j)
{
    fputc('\n', j->out);
}
