/* The checks both targets-file fuzz targets (fuzz_targets_http.c, fuzz_targets_jsonl.c) run
 * over whatever the reader makes of the input. Test code, header-only. Body files are looked
 * up in a directory that does not exist, so only an absolute path can name one. */
#ifndef KNEE_TESTS_FUZZ_TARGETS_H
#define KNEE_TESTS_FUZZ_TARGETS_H

#include "workload/workload.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first entries' offsets, lines and URLs, to read them again. */
#define FUZZ_KEEP 8

static inline void fuzz_check_entry(const struct wl_entry *e, uint64_t want_index)
{
    if (e->index != want_index || e->line == 0 || !e->method || !e->url || !*e->method || !*e->url)
        abort();
    if (!(e->weight > 0) || !isfinite(e->weight))
        abort();
    if (!wl_field_ok(e->url, strlen(e->url)))
        abort();
    for (size_t i = 0; i < e->nheaders; i++)
        if (!strchr(e->headers[i], ':') || !wl_field_ok(e->headers[i], strlen(e->headers[i])))
            abort();
    if (e->body_len > 0 && !e->body)
        abort();
}

static inline void fuzz_targets(const uint8_t *data, size_t size, enum wl_format fmt)
{
    struct wl_reader *rd;
    char err[512];
    if (wl_reader_open_mem(&rd, data, size, "t", "/nonexistent-knee-fuzz", fmt, err, sizeof err) != 0)
        abort();
    struct wl_entry e;
    uint64_t n = 0, off[FUZZ_KEEP], line[FUZZ_KEEP];
    char *url[FUZZ_KEEP];
    int k;
    while ((k = wl_reader_next(rd, &e, err, sizeof err)) == 0) {
        fuzz_check_entry(&e, n);
        if (n < FUZZ_KEEP) {
            off[n] = e.offset;
            line[n] = e.line;
            url[n] = strdup(e.url);
        }
        n++;
    }
    if (k != WL_END && strncmp(err, "t:", 2) != 0)
        abort();
    for (uint64_t i = 0; i < n && i < FUZZ_KEEP; i++) {
        if (wl_reader_read_at(rd, off[i], i, line[i], &e, err, sizeof err) != 0)
            abort();
        fuzz_check_entry(&e, i);
        if (strcmp(e.url, url[i]) != 0 || e.offset != off[i])
            abort();
        free(url[i]);
    }
    wl_reader_close(rd);
}

#endif
