/* `knee stats` input as CSV text: the header resolves the columns once, then the row loop
 * parses only the cells it needs, filters before it parses the value, and names the file and
 * line of every rejected input. */
#include "analyze/internal.h"

#include "core/err.h"
#include "csv/csv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Parse the value cell; empty counts as missing (returns 1). 0 ok, negative: d->err set. */
static int parse_value(struct dataset *d, const char *file, uint64_t line, const char *cell, size_t len, double *v)
{
    if (len == 0) {
        d->missing++;
        return 1;
    }
    int e = csv_parse_double(cell, len, v);
    if (e == KNEE_ENAN)
        return knee_fail(d->err, sizeof d->err, e, "%s:%llu: %s: '%s' is not a number (NaN)", file,
                         (unsigned long long)line, d->o.column, cell);
    if (e == KNEE_EINF)
        return knee_fail(d->err, sizeof d->err, e, "%s:%llu: %s: '%s' is infinite", file, (unsigned long long)line,
                         d->o.column, cell);
    if (e)
        return knee_fail(d->err, sizeof d->err, e, "%s:%llu: %s: '%s' is not a number", file, (unsigned long long)line,
                         d->o.column, cell);
    if (*v < 0)
        return knee_fail(d->err, sizeof d->err, KNEE_ENEG, "%s:%llu: %s: %s is negative (a duration cannot be)", file,
                         (unsigned long long)line, d->o.column, cell);
    return 0;
}

static int parse_time(struct dataset *d, const char *file, uint64_t line, const char *cell, size_t len, double *t)
{
    int e = csv_parse_double(cell, len, t);
    if (e)
        return knee_fail(d->err, sizeof d->err, e, "%s:%llu: time column %s: '%s' is not a number", file,
                         (unsigned long long)line, d->time_col, cell);
    if (*t >= 2147483647.0 || *t < -2147483648.0)
        return knee_fail(d->err, sizeof d->err, KNEE_ERANGE,
                         "%s:%llu: time column %s: %s is out of range (seconds since the start expected)", file,
                         (unsigned long long)line, d->time_col, cell);
    return 0;
}

/* ---------------------------------------------------------------- the header */

static int find_col(const struct csv_record *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->field[i], name) == 0)
            return (int)i;
    return NO_COL;
}

static void list_columns(const struct csv_record *h, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < h->n && k + 8 < len; i++) {
        int n = snprintf(buf + k, len - k, "%s%s", i ? ", " : "", h->field[i]);
        if (n < 0 || (size_t)n >= len - k) {
            snprintf(buf + (len > 5 ? len - 5 : 0), 5, "...");
            break;
        }
        k += (size_t)n;
    }
}

/* The warmup cell of knee's CSV: "1" a warm-up row, "0" or empty not. */
enum warmup_cell { WARMUP_NO, WARMUP_YES, WARMUP_BAD };
static enum warmup_cell warmup_cell(const char *cell, size_t len)
{
    if (len == 0 || (len == 1 && cell[0] == '0'))
        return WARMUP_NO;
    return len == 1 && cell[0] == '1' ? WARMUP_YES : WARMUP_BAD;
}

/* The columns of one CSV file, from its header; NO_COL where absent. */
struct csv_cols {
    size_t n; /* fields in the header: every row must have as many */
    int value, group, time, warmup;
    int where[DATASET_MAX_WHERE];
};

/* "FILE:1: <what>: no column 'NAME' in the header (columns: ...)", as KNEE_ENOTFOUND. */
static int no_column(struct dataset *d, const struct csv_record *h, const char *path, const char *what,
                     const char *name)
{
    char cols[512];
    list_columns(h, cols, sizeof cols);
    return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND, "%s:1: %sno column '%s' in the header (columns: %s)", path,
                     what, name, cols);
}

/* The group column (--by, else "server" when present), which every file must agree on having. */
static int group_column(struct dataset *d, const struct csv_record *h, const char *path, struct csv_cols *c)
{
    const char *by = d->o.by ? d->o.by : "server";
    c->group = find_col(h, by);
    if (c->group == NO_COL && d->o.by)
        return no_column(d, h, path, "--by: ", by);
    if (c->group != NO_COL) {
        if (d->any_file && !d->by_col)
            return knee_fail(d->err, sizeof d->err, KNEE_EMISMATCH,
                             "%s:1: has a '%s' column the earlier files lack: use --by %s on files that all have it",
                             path, by, by);
        d->by_col = d->o.by ? d->o.by : "server";
    } else if (d->by_col) {
        return knee_fail(d->err, sizeof d->err, KNEE_EMISMATCH,
                         "%s:1: no '%s' column to group by, unlike the earlier files", path, d->by_col);
    }
    return 0;
}

/* The time column (--time, else "start_s" when present); without one, no --skip/--until. */
static int time_column(struct dataset *d, const struct csv_record *h, const char *path, struct csv_cols *c)
{
    const char *tname = d->o.time ? d->o.time : "start_s";
    c->time = find_col(h, tname);
    if (c->time == NO_COL && d->o.time)
        return no_column(d, h, path, "--time: ", tname);
    if (c->time == NO_COL) {
        if (isfinite(d->o.skip_s) || isfinite(d->o.until_s))
            return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND,
                             "%s:1: --skip/--until need a time column, and there is no '%s' (use --time COL)", path,
                             tname);
        d->has_time = false;
    } else {
        d->time_col = tname;
    }
    return 0;
}

/* Every column the rows need, from the header h, and what they tell the dataset (the group
 * and time columns in use, a knee log). 0 or a negative code with d->err set. */
static int csv_columns(struct dataset *d, const struct csv_record *h, const char *path, bool by_file,
                       struct csv_cols *c)
{
    c->n = h->n;
    c->group = c->time = c->warmup = NO_COL;
    c->value = find_col(h, d->o.column);
    if (c->value == NO_COL)
        return no_column(d, h, path, "", d->o.column);
    int e;
    if (!by_file && (e = group_column(d, h, path, c)) != 0)
        return e;
    if ((e = time_column(d, h, path, c)) != 0)
        return e;
    if (d->o.nwhere > DATASET_MAX_WHERE)
        return knee_fail(d->err, sizeof d->err, KNEE_ETOOBIG, "at most 64 --where filters");
    for (size_t i = 0; i < d->o.nwhere; i++) {
        c->where[i] = find_col(h, d->o.where[i].col);
        if (c->where[i] == NO_COL)
            return no_column(d, h, path, "--where: ", d->o.where[i].col);
    }
    /* knee's own CSV marks the warm-up (warmup = 1): left out unless --keep-warmup */
    c->warmup = find_col(h, "warmup");
    if (c->warmup != NO_COL)
        d->knee_log = true;
    return 0;
}

/* Every --where filter holds for the row. */
static bool where_kept(const struct dataset *d, const struct csv_record *rec, const struct csv_cols *c)
{
    for (size_t i = 0; i < d->o.nwhere; i++) {
        bool eq = strcmp(rec->field[c->where[i]], d->o.where[i].value) == 0;
        if (eq == d->o.where[i].negate)
            return false;
    }
    return true;
}

/* The rows after the header, each filtered (warm-up, --where, time), its value parsed and
 * added to its group. Returns the last csv_next result (0 at the end of the file, 1 after a
 * row with the wrong number of fields) or a negative code; d->err is set for the errors found
 * here, not for csv_next's. */
static int csv_rows(struct dataset *d, struct csv_reader *r, const char *path, const struct csv_cols *c,
                    size_t file_group)
{
    struct csv_record rec;
    int k;
    while ((k = csv_next(r, &rec)) == 1) {
        if (rec.n != c->n) {
            knee_fail(d->err, sizeof d->err, KNEE_EFORMAT, "%s:%llu: %zu fields, but the header has %zu", path,
                      (unsigned long long)rec.line, rec.n, c->n);
            break;
        }
        d->rows++;
        if (c->warmup != NO_COL) {
            enum warmup_cell wu = warmup_cell(rec.field[c->warmup], rec.len[c->warmup]);
            if (wu == WARMUP_BAD)
                return knee_fail(d->err, sizeof d->err, KNEE_EFORMAT, "%s:%llu: warmup: '%s' is not 0 or 1", path,
                                 (unsigned long long)rec.line, rec.field[c->warmup]);
            if (wu == WARMUP_YES && !d->o.keep_warmup) {
                d->filtered_warmup++;
                continue;
            }
        }
        if (!where_kept(d, &rec, c)) {
            d->filtered_where++;
            continue;
        }
        double t = 0;
        if (c->time != NO_COL) {
            if ((k = parse_time(d, path, rec.line, rec.field[c->time], rec.len[c->time], &t)) != 0)
                return k;
            if (!dataset_time_kept(d, t)) {
                d->filtered_time++;
                continue;
            }
        }
        double v;
        int pv = parse_value(d, path, rec.line, rec.field[c->value], rec.len[c->value], &v);
        if (pv < 0)
            return pv;
        if (pv > 0)
            continue;
        size_t gi = file_group;
        if (c->group != NO_COL && (k = dataset_group_of(d, rec.field[c->group], rec.len[c->group], &gi)) != 0)
            return knee_fail(d->err, sizeof d->err, k,
                             "%s:%llu: more than %d groups in column '%s': group by something coarser", path,
                             (unsigned long long)rec.line, DATASET_MAX_GROUPS, d->by_col);
        dataset_add_value(d, gi, v, t, c->time != NO_COL);
    }
    return k;
}

/* The header line: 1, or 0 / a negative code with d->err set (an empty file, not CSV text). */
static int csv_header(struct dataset *d, struct csv_reader *r, const char *path, struct csv_record *rec)
{
    int k = csv_next(r, rec);
    if (k == 0)
        return knee_fail(d->err, sizeof d->err, KNEE_EEMPTY, "%s: empty file (no header line)", path);
    if (k < 0) {
        if (k == KNEE_EFORMAT && strstr(csv_reader_error(r), "NUL byte"))
            knee_fail(d->err, sizeof d->err, k,
                      "%s: unknown file type: not CSV text (%s, line %llu) and not a knee request log", path,
                      csv_reader_error(r), (unsigned long long)csv_reader_line(r));
        else
            knee_fail(d->err, sizeof d->err, k, "%s:%llu: %s", path, (unsigned long long)csv_reader_line(r),
                      csv_reader_error(r));
    }
    return k;
}

int dataset_load_csv(struct dataset *d, const char *src, const char *path, size_t file_group, bool by_file)
{
    struct csv_reader *r;
    int e = csv_reader_open(&r, src, NULL);
    if (e)
        return knee_fail(d->err, sizeof d->err, e, "%s: %s", path, knee_strerror(e));
    struct csv_record rec;
    struct csv_cols c;
    int k = csv_header(d, r, path, &rec);
    if (k != 1)
        goto out;
    if ((k = csv_columns(d, &rec, path, by_file, &c)) != 0)
        goto out;
    if (!by_file && c.group == NO_COL &&
        (e = dataset_group_of(d, DATASET_ALL_GROUP, strlen(DATASET_ALL_GROUP), &file_group)) != 0) {
        k = knee_fail(d->err, sizeof d->err, e, "%s: too many groups", path);
        goto out;
    }
    k = csv_rows(d, r, path, &c, file_group);
    if (k < 0 && d->err[0] == '\0')
        knee_fail(d->err, sizeof d->err, k, "%s:%llu: %s", path, (unsigned long long)csv_reader_line(r),
                  csv_reader_error(r));
    if (k == 1 || (k < 0 && strstr(d->err, "fields, but the header")))
        k = KNEE_EFORMAT;
out:
    csv_reader_close(r);
    return k < 0 ? k : 0;
}
