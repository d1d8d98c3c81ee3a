/* Streaming JSON writer (RFC 8259 strings: quotes, backslash and control bytes escaped). */
#include "core/json.h"

#include <math.h>
#include <stdlib.h>

void jw_init(struct jw *j, FILE *out, bool pretty)
{
    j->out = out;
    j->depth = 0;
    j->first[0] = true;
    j->after_key = false;
    j->pretty = pretty;
}

static void indent(struct jw *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* Called before every value or key: writes the separating comma and indentation. */
static void before(struct jw *j)
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

static void open(struct jw *j, char c)
{
    before(j);
    fputc(c, j->out);
    if (j->depth + 1 < JW_MAX_DEPTH)
        j->depth++;
    j->first[j->depth] = true;
}

static void close_(struct jw *j, char c)
{
    bool empty = j->first[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (!empty)
        indent(j);
    fputc(c, j->out);
}

void jw_object_begin(struct jw *j)
{
    open(j, '{');
}
void jw_object_end(struct jw *j)
{
    close_(j, '}');
}
void jw_array_begin(struct jw *j)
{
    open(j, '[');
}
void jw_array_end(struct jw *j)
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

void jw_key(struct jw *j, const char *key)
{
    before(j);
    write_string(j->out, key);
    fputs(j->pretty ? ": " : ":", j->out);
    j->after_key = true;
}

void jw_string(struct jw *j, const char *s)
{
    before(j);
    if (s)
        write_string(j->out, s);
    else
        fputs("null", j->out);
}

void jw_double(struct jw *j, double v)
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

void jw_int(struct jw *j, int64_t v)
{
    before(j);
    fprintf(j->out, "%lld", (long long)v);
}

void jw_uint(struct jw *j, uint64_t v)
{
    before(j);
    fprintf(j->out, "%llu", (unsigned long long)v);
}

void jw_bool(struct jw *j, bool v)
{
    before(j);
    fputs(v ? "true" : "false", j->out);
}

void jw_null(struct jw *j)
{
    before(j);
    fputs("null", j->out);
}

void jw_kv_string(struct jw *j, const char *key, const char *s)
{
    jw_key(j, key);
    jw_string(j, s);
}
void jw_kv_double(struct jw *j, const char *key, double v)
{
    jw_key(j, key);
    jw_double(j, v);
}
void jw_kv_int(struct jw *j, const char *key, int64_t v)
{
    jw_key(j, key);
    jw_int(j, v);
}
void jw_kv_uint(struct jw *j, const char *key, uint64_t v)
{
    jw_key(j, key);
    jw_uint(j, v);
}
void jw_kv_bool(struct jw *j, const char *key, bool v)
{
    jw_key(j, key);
    jw_bool(j, v);
}

void jw_end(struct jw *j)
{
    fputc('\n', j->out);
}
