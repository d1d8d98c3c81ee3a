/* Error messages and the allocation wrappers that turn out-of-memory into an abort. */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *knee_strerror(int code)
{
    switch (code) {
    case KNEE_OK:
        return "success";
#define KNEE_ERR_CASE(name, value, msg)                                                                                \
    case name:                                                                                                         \
        return msg;
        KNEE_ERRORS(KNEE_ERR_CASE)
#undef KNEE_ERR_CASE
    default:
        break;
    }
    if (code < 0 && code > -4096)
        return strerror(-code);
    return "unknown error";
}

int knee_fail(char *err, unsigned long errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0 when it is not one: the
 * shortest form only, no surrogates, nothing above U+10FFFF (RFC 3629). */
static unsigned long utf8_len(const unsigned char *p, unsigned long n)
{
    unsigned long len;
    unsigned cp;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) {
        len = 2;
        cp = p[0] & 0x1Fu;
    } else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        len = 3;
        cp = p[0] & 0x0Fu;
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        len = 4;
        cp = p[0] & 0x07u;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (unsigned long i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    if (cp >= 0x80 && cp <= 0x9F)
        return 0; /* a C1 control: escaped like the C0 ones */
    return len;
}

unsigned long knee_escape(char *dst, unsigned long dstlen, const char *src, unsigned long n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)src;
    unsigned long used = 0;
#define PUT(c)                                                                                                         \
    do {                                                                                                               \
        if (used + 1 < dstlen)                                                                                         \
            dst[used] = (char)(c);                                                                                     \
        used++;                                                                                                        \
    } while (0)
    for (unsigned long i = 0; i < n;) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x7F) {
            PUT(c);
            i++;
            continue;
        }
        unsigned long u = c >= 0x80 ? utf8_len(s + i, n - i) : 0;
        if (u) {
            for (unsigned long k = 0; k < u; k++)
                PUT(s[i + k]);
            i += u;
            continue;
        }
        PUT('\\');
        if (c == '\r' || c == '\n' || c == '\t') {
            PUT(c == '\r' ? 'r' : c == '\n' ? 'n' : 't');
        } else {
            PUT('x');
            PUT(hex[c >> 4]);
            PUT(hex[c & 15]);
        }
        i++;
    }
#undef PUT
    if (dstlen)
        dst[used < dstlen ? used : dstlen - 1] = '\0';
    return used;
}

void knee_vreport(FILE *out, const char *prefix, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0) {
        fprintf(out, "%s(unprintable message)\n", prefix ? prefix : "");
        return;
    }
    char *msg = xmalloc((unsigned long)n + 1);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    unsigned long need = knee_escape(NULL, 0, msg, (unsigned long)n);
    char *line = xmalloc(need + 1);
    knee_escape(line, need + 1, msg, (unsigned long)n);
    fprintf(out, "%s%s\n", prefix ? prefix : "", line);
    free(line);
    free(msg);
}

void knee_report(FILE *out, const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    knee_vreport(out, prefix, fmt, ap);
    va_end(ap);
}

_Noreturn void knee_oom(void)
{
    fputs("knee: out of memory\n", stderr);
    abort();
}

void *xmalloc(unsigned long size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        knee_oom();
    return p;
}

void *xcalloc(unsigned long n, unsigned long size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        knee_oom();
    return p;
}

void *xrealloc(void *p, unsigned long size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        knee_oom();
    return q;
}

char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        knee_oom();
    return d;
}
