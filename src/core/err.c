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
