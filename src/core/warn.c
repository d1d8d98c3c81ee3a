/* Warning lists (core/warn.h): the one appender every module's warnings go through. */
#include "core/warn.h"

#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines are cut at a fixed length, as each module's own appender did before this one: the
 * cut is part of the output (a warning quotes user text, which may be long). */
static char *format(size_t cap, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static char *format(size_t cap, const char *fmt, va_list ap)
{
    char *buf = xmalloc(cap);
    vsnprintf(buf, cap, fmt, ap);
    char *line = xstrdup(buf);
    free(buf);
    return line;
}

static void push(char ***v, size_t *n, char *line)
{
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = line;
}

void warn_strv_vadd(char ***v, size_t *n, size_t cap, const char *fmt, va_list ap)
{
    push(v, n, format(cap, fmt, ap));
}

void warn_strv_add(char ***v, size_t *n, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    warn_strv_vadd(v, n, cap, fmt, ap);
    va_end(ap);
}

void warn_vadd(struct warn_list *w, bool attention, const char *fmt, va_list ap)
{
    warn_strv_vadd(&w->items, &w->n, WARN_MAX_LEN, fmt, ap);
    w->attention |= attention;
}

void warn_add(struct warn_list *w, bool attention, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    warn_vadd(w, attention, fmt, ap);
    va_end(ap);
}

void warn_add_text(struct warn_list *w, bool attention, const char *text)
{
    push(&w->items, &w->n, xstrdup(text));
    w->attention |= attention;
}

void warn_replace(struct warn_list *w, size_t i, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = format(WARN_MAX_LEN, fmt, ap);
    va_end(ap);
    free(w->items[i]);
    w->items[i] = line;
}

void warn_list_release(struct warn_list *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->items[i]);
    free(w->items);
    memset(w, 0, sizeof *w);
}
