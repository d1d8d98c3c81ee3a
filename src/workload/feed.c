/* A data feed: a CSV file (through src/csv) or JSON lines, loaded whole into one arena of
 * NUL-terminated cells (a feed is data the user sized; the plan never copies it), with the
 * column names a template compiles against. */
#include "workload/workload.h"

#include "core/err.h"
#include "csv/csv.h"
#include "workload/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct wl_feed {
    char **cols;
    size_t ncols;
    size_t nrows;
    char *text; /* every cell, NUL-terminated, row by row */
    size_t textlen, textcap;
    size_t *cell; /* offsets of the cells in text; nrows * ncols + 1 (the end) */
    size_t ncell, cellcap;
    const char *name; /* for messages, during the load */
};

void wl_feed_free(struct wl_feed *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->ncols; i++)
        free(f->cols[i]);
    free(f->cols);
    free(f->text);
    free(f->cell);
    free(f);
}

size_t wl_feed_rows(const struct wl_feed *f)
{
    return f->nrows;
}

size_t wl_feed_columns(const struct wl_feed *f)
{
    return f->ncols;
}

const char *wl_feed_column(const struct wl_feed *f, size_t col)
{
    return col < f->ncols ? f->cols[col] : NULL;
}

const char *wl_feed_cell(const struct wl_feed *f, size_t row, size_t col, size_t *len)
{
    size_t i = row * f->ncols + col;
    *len = f->cell[i + 1] - f->cell[i] - 1;
    return f->text + f->cell[i];
}

/* One cell appended to the arena. */
static int add_cell(struct wl_feed *f, const char *s, size_t n)
{
    if (f->textcap - f->textlen < n + 1) {
        size_t ncap = f->textcap ? f->textcap : 4096;
        while (ncap - f->textlen < n + 1)
            ncap *= 2;
        char *p = realloc(f->text, ncap);
        if (!p)
            return -ENOMEM;
        f->text = p;
        f->textcap = ncap;
    }
    if (f->ncell + 2 > f->cellcap) {
        size_t ncap = f->cellcap ? f->cellcap * 2 : 256;
        size_t *p = realloc(f->cell, ncap * sizeof *p);
        if (!p)
            return -ENOMEM;
        f->cell = p;
        f->cellcap = ncap;
    }
    f->cell[f->ncell++] = f->textlen;
    memcpy(f->text + f->textlen, s, n);
    f->textlen += n;
    f->text[f->textlen++] = '\0';
    f->cell[f->ncell] = f->textlen; /* the end, overwritten by the next cell's start */
    return 0;
}

/* A new column name, checked: non-empty, not a built-in's name, not repeated. */
static int add_column(struct wl_feed *f, const char *s, size_t n, uint64_t line, char *err, size_t errlen)
{
    if (n == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: column %zu has an empty name", f->name,
                         (unsigned long long)line, f->ncols + 1);
    if ((n == 3 && memcmp(s, "seq", 3) == 0) || (n == 4 && memcmp(s, "uuid", 4) == 0) ||
        (n >= 5 && memcmp(s, "rand:", 5) == 0))
        return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: column \"%.*s\" has a built-in placeholder's name",
                         f->name, (unsigned long long)line, (int)n, s);
    for (size_t i = 0; i < f->ncols; i++)
        if (strlen(f->cols[i]) == n && memcmp(f->cols[i], s, n) == 0)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: column \"%.*s\" appears twice (columns %zu and %zu)",
                             f->name, (unsigned long long)line, (int)n, s, i + 1, f->ncols + 1);
    char **cols = realloc(f->cols, (f->ncols + 1) * sizeof *cols);
    if (!cols)
        return -ENOMEM;
    f->cols = cols;
    if (!(f->cols[f->ncols] = strndup(s, n)))
        return -ENOMEM;
    f->ncols++;
    return 0;
}

/* ---------------------------------------------------------------- CSV */

static int load_csv(struct wl_feed *f, struct csv_reader *r, char *err, size_t errlen)
{
    struct csv_record rec;
    int k;
    bool header = true;
    while ((k = csv_next(r, &rec)) == 1) {
        if (header) {
            for (size_t i = 0; i < rec.n; i++)
                if ((k = add_column(f, rec.field[i], rec.len[i], rec.line, err, errlen)) != 0)
                    return k == -ENOMEM ? knee_fail(err, errlen, k, "%s: out of memory", f->name) : k;
            header = false;
            continue;
        }
        if (rec.n != f->ncols)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: %zu fields, the header has %zu", f->name,
                             (unsigned long long)rec.line, rec.n, f->ncols);
        for (size_t i = 0; i < rec.n; i++)
            if (add_cell(f, rec.field[i], rec.len[i]) != 0)
                return knee_fail(err, errlen, -ENOMEM, "%s: out of memory", f->name);
        f->nrows++;
    }
    if (k < 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: %s", f->name, (unsigned long long)csv_reader_line(r),
                         csv_reader_error(r));
    return 0;
}

/* ---------------------------------------------------------------- JSON lines */

/* workload/internal.h */
int wl_scalar_text(const json_t *v, char *num, size_t numlen, const char **s, size_t *n)
{
    if (json_is_string(v)) {
        *s = json_string_value(v);
        *n = json_string_length(v);
        return memchr(*s, '\0', *n) ? -1 : 0;
    }
    if (json_is_integer(v)) {
        int w = snprintf(num, numlen, "%lld", (long long)json_integer_value(v));
        *s = num;
        *n = (size_t)w;
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        int w = 0;
        if (d == trunc(d) && fabs(d) < 1e17) /* 1e3 and 1.0 are integers: no exponent, no point */
            w = snprintf(num, numlen, "%.0f", d);
        for (int prec = 1; w == 0 && prec <= 17; prec++) {
            w = snprintf(num, numlen, "%.*g", prec, d);
            if (strtod(num, NULL) != d)
                w = 0;
        }
        *s = num;
        *n = (size_t)w;
    } else if (json_is_true(v) || json_is_false(v)) {
        *s = json_is_true(v) ? "true" : "false";
        *n = strlen(*s);
    } else if (json_is_null(v)) {
        *s = "";
        *n = 0;
    } else {
        return -1;
    }
    return 0;
}

/* One object: its keys name the columns (the first line) or must be exactly them. */
static int jsonl_row(struct wl_feed *f, json_t *o, uint64_t line, char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    bool first = f->nrows == 0;
    if (first) {
        json_object_foreach(o, key, v)
        {
            int k = add_column(f, key, strlen(key), line, err, errlen);
            if (k != 0)
                return k == -ENOMEM ? knee_fail(err, errlen, k, "%s: out of memory", f->name) : k;
        }
        if (f->ncols == 0)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: an empty object (the first names the columns)",
                             f->name, (unsigned long long)line);
    }
    json_object_foreach(o, key, v)
    {
        size_t i = 0;
        while (i < f->ncols && strcmp(f->cols[i], key) != 0)
            i++;
        if (i == f->ncols)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: key \"%s\" is not a column (the first line's keys)",
                             f->name, (unsigned long long)line, key);
    }
    for (size_t i = 0; i < f->ncols; i++) {
        json_t *c = json_object_get(o, f->cols[i]);
        if (!c)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: no \"%s\" (every line has the first line's keys)",
                             f->name, (unsigned long long)line, f->cols[i]);
        char num[40];
        const char *s;
        size_t n;
        if (wl_scalar_text(c, num, sizeof num, &s, &n) != 0)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "%s:%llu: \"%s\" must be a string, number, true, false or null (no NUL)", f->name,
                             (unsigned long long)line, f->cols[i]);
        if (add_cell(f, s, n) != 0)
            return knee_fail(err, errlen, -ENOMEM, "%s: out of memory", f->name);
    }
    f->nrows++;
    return 0;
}

static int load_jsonl(struct wl_feed *f, struct wl_lines *l, char *err, size_t errlen)
{
    char *s;
    size_t n;
    uint64_t off, line = 0;
    int k;
    while ((k = wl_lines_next(l, &s, &n, &off)) == 1) {
        line++;
        if (strspn(s, " \t") == n)
            continue;
        json_error_t je;
        json_t *o = json_loadb(s, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
        if (!o)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: expected a JSON object: %s (column %d)", f->name,
                             (unsigned long long)line, je.text, je.column);
        k = json_is_object(o) ? jsonl_row(f, o, line, err, errlen)
                              : knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: expected a JSON object (one per line)",
                                          f->name, (unsigned long long)line);
        json_decref(o);
        if (k != 0)
            return k;
    }
    if (k == KNEE_ETOOBIG)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: line longer than %u bytes", f->name,
                         (unsigned long long)line + 1, (unsigned)WL_MAX_LINE);
    if (k < 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: %s", f->name, knee_strerror(k));
    return 0;
}

/* ---------------------------------------------------------------- loading */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int finish(struct wl_feed *f, struct wl_feed **out, int k, char *err, size_t errlen)
{
    if (k == 0 && f->nrows == 0)
        k = knee_fail(err, errlen, KNEE_EINVAL, "%s: no rows (a feed needs %s at least one row)", f->name,
                      f->ncols ? "after its header" : "");
    if (k != 0) {
        wl_feed_free(f);
        return k;
    }
    f->name = NULL;
    *out = f;
    return 0;
}

int wl_feed_load(struct wl_feed **out, const char *path, char *err, size_t errlen)
{
    *out = NULL;
    bool jsonl = ends_with(path, ".jsonl") || ends_with(path, ".ndjson");
    if (!jsonl && !ends_with(path, ".csv"))
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: a feed is a .csv or a .jsonl (.ndjson) file", path);
    struct wl_feed *f = calloc(1, sizeof *f);
    if (!f)
        return knee_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
    f->name = path;
    int k;
    if (jsonl) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            k = knee_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
        } else {
            struct wl_lines l;
            wl_lines_init_fd(&l, fd, true);
            k = load_jsonl(f, &l, err, errlen);
            wl_lines_release(&l);
        }
    } else {
        struct csv_reader *r;
        k = csv_reader_open(&r, path, NULL);
        if (k != 0) {
            k = knee_fail(err, errlen, k, "%s: %s", path, knee_strerror(k));
        } else {
            k = load_csv(f, r, err, errlen);
            csv_reader_close(r);
        }
    }
    return finish(f, out, k, err, errlen);
}

int wl_feed_load_mem(struct wl_feed **out, const void *data, size_t size, bool jsonl, const char *name, char *err,
                     size_t errlen)
{
    *out = NULL;
    struct wl_feed *f = calloc(1, sizeof *f);
    if (!f)
        return knee_fail(err, errlen, -ENOMEM, "out of memory");
    f->name = name ? name : "(memory)";
    int k;
    if (jsonl) {
        struct wl_lines l;
        char *copy = malloc(size ? size : 1);
        if (!copy) {
            wl_feed_free(f);
            return knee_fail(err, errlen, -ENOMEM, "out of memory");
        }
        if (size)
            memcpy(copy, data, size);
        wl_lines_init_mem(&l, copy, size);
        k = load_jsonl(f, &l, err, errlen);
        wl_lines_release(&l);
        free(copy);
    } else {
        struct csv_reader *r;
        k = csv_reader_open_mem(&r, data, size, NULL);
        if (k != 0) {
            k = knee_fail(err, errlen, k, "%s: %s", f->name, knee_strerror(k));
        } else {
            k = load_csv(f, r, err, errlen);
            csv_reader_close(r);
        }
    }
    return finish(f, out, k, err, errlen);
}
