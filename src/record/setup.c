/* The setup request as a run record keeps it (record.h, struct record_setup): copied from the
 * run's configuration into each record, freed with the record's config. */
#include "record/record.h"

#include "core/err.h"

#include <stdlib.h>
#include <string.h>

void record_setup_copy(struct record_setup *dst, const struct record_setup *src)
{
    record_setup_release(dst);
    if (!src || !src->url)
        return;
    dst->url = xstrdup(src->url);
    dst->method = src->method ? xstrdup(src->method) : NULL;
    dst->status = src->status;
    dst->duration_ns = src->duration_ns;
    dst->captured = xcalloc(src->ncaptured + 1, sizeof *dst->captured);
    for (size_t i = 0; i < src->ncaptured; i++)
        dst->captured[i] = xstrdup(src->captured[i]);
    dst->ncaptured = src->ncaptured;
}

void record_setup_release(struct record_setup *s)
{
    for (size_t i = 0; i < s->ncaptured; i++)
        free(s->captured[i]);
    free(s->captured);
    free(s->url);
    free(s->method);
    memset(s, 0, sizeof *s);
}
