/* The one way to append a warning: a list of formatted lines, most important first, and an
 * attention flag that says whether any of them reports something wrong (not only a note such
 * as "few samples"). The run record keeps its warnings in one (record.h); lists that predate it
 * (analyze's report, compare's, html's notes) are bare string arrays that the same appender
 * grows (warn_strv_vadd). Out of memory aborts (core/err.h knee_oom); not thread-safe: a list
 * belongs to one thread at a time. */
#ifndef KNEE_CORE_WARN_H
#define KNEE_CORE_WARN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define WARN_MAX_LEN 1024 /* a warning's bytes, its NUL included: longer text is cut there */

struct warn_list {
    char **items; /* n lines, each owned */
    size_t n;
    bool attention; /* a line added with attention: something went wrong */
};

/* Append one line formatted from fmt (cut at WARN_MAX_LEN - 1 bytes); attention ors into
 * w->attention. A zeroed list is empty and ready. */
void warn_add(struct warn_list *w, bool attention, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void warn_vadd(struct warn_list *w, bool attention, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Append text as it is (not a format, not cut): a line read back from a document. */
void warn_add_text(struct warn_list *w, bool attention, const char *text);

/* Replace line i (i < w->n) with a line formatted from fmt; attention unchanged. */
void warn_replace(struct warn_list *w, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Free every line and zero w. */
void warn_list_release(struct warn_list *w);

/* The appender itself over a bare array: (*v)[(*n)++] = the formatted line, cut at cap - 1
 * bytes (cap >= 1). */
void warn_strv_vadd(char ***v, size_t *n, size_t cap, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
void warn_strv_add(char ***v, size_t *n, size_t cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
