/* `knee stats` input as knee's binary request log: the columns a CSV of the same run would
 * have, derived from each record (reqlog_derive), so a log and its CSV give the same report;
 * every rejected input names the file and the record. */
#include "analyze/internal.h"

#include "core/err.h"
#include "csv/csv.h"
#include "reqlog/reqlog.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The columns a binary log offers by name: REQLOG_CSV_HEADER's, then the gaps between events
 * (a log with gaps: one value per gap, so a value column only). One list makes both the enum
 * and the names, so they cannot drift apart. */
#define LOG_COLUMNS(X)                                                                                                 \
    X(LC_SERVER, "server")                                                                                             \
    X(LC_START, "start_s")                                                                                             \
    X(LC_LATENCY, "latency_ms")                                                                                        \
    X(LC_SERVICE, "service_ms")                                                                                        \
    X(LC_TTFB, "ttfb_ms")                                                                                              \
    X(LC_LAG, "lag_ms")                                                                                                \
    X(LC_STATUS, "status")                                                                                             \
    X(LC_OUTCOME, "outcome")                                                                                           \
    X(LC_BYTES, "bytes")                                                                                               \
    X(LC_CONNECTION, "connection")                                                                                     \
    X(LC_WARMUP, "warmup")                                                                                             \
    X(LC_TLS_MS, "tls_ms")                                                                                             \
    X(LC_PROTOCOL, "protocol")                                                                                         \
    X(LC_TLS, "tls")                                                                                                   \
    X(LC_ENTRY, "entry")                                                                                               \
    X(LC_FIRST_EVENT, "first_event_ms")                                                                                \
    X(LC_EVENTS, "events")                                                                                             \
    X(LC_EVENT_GAP, "event_gap_ms")
#define LC_ENUM(id, name) id,
#define LC_NAME(id, name) [id] = name,
enum log_col { LOG_COLUMNS(LC_ENUM) LC_COUNT };
static const char *const log_cols[LC_COUNT] = {LOG_COLUMNS(LC_NAME)};
#undef LC_ENUM
#undef LC_NAME

/* The columns whose cells are words (the rest are numbers). */
static bool log_col_text(int c)
{
    return c == LC_SERVER || c == LC_OUTCOME || c == LC_PROTOCOL || c == LC_TLS;
}

static int log_col_of(const char *name)
{
    for (int i = 0; i < LC_COUNT; i++)
        if (strcmp(name, log_cols[i]) == 0)
            return i;
    return NO_COL;
}

/* The cell value of a derived column: a number (NAN when it does not exist) or, for the
 * text columns, a string. */
static double log_number(const struct reqlog_record *r, const struct reqlog_derived *dv, int c)
{
    switch (c) {
    case LC_START:
        return dv->start_s;
    case LC_LATENCY:
        return dv->latency_ms;
    case LC_SERVICE:
        return dv->service_ms;
    case LC_TTFB:
        return dv->ttfb_ms;
    case LC_LAG:
        return dv->lag_ms;
    case LC_STATUS:
        return r->status;
    case LC_BYTES:
        return (double)r->bytes;
    case LC_CONNECTION:
        return r->connection;
    case LC_WARMUP:
        return (r->flags & REQLOG_FLAG_WARMUP) ? 1 : 0;
    case LC_TLS_MS:
        return dv->tls_ms;
    case LC_ENTRY:
        return r->entry ? (double)(r->entry - 1) : NAN;
    case LC_FIRST_EVENT:
        return dv->first_event_ms;
    case LC_EVENTS:
        return r->events ? (double)(r->events - 1) : NAN;
    default:
        return NAN;
    }
}

static const char *log_text(const struct reqlog_reader *rd, const struct reqlog_record *r, int c, char *buf, size_t len,
                            const struct reqlog_derived *dv)
{
    if (c == LC_SERVER)
        return reqlog_reader_target(rd, r->target);
    if (c == LC_OUTCOME)
        return reqlog_outcome_name((enum reqlog_outcome)r->outcome);
    if (c == LC_PROTOCOL)
        return reqlog_proto_name(r->protocol);
    if (c == LC_TLS)
        return reqlog_tls_name(r->tls);
    double v = log_number(r, dv, c);
    if (isnan(v))
        buf[0] = '\0';
    else if (c == LC_STATUS || c == LC_BYTES || c == LC_CONNECTION || c == LC_WARMUP || c == LC_ENTRY)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, c == LC_START ? "%.9f" : "%.6f", v); /* as the CSV writer prints it */
    return buf;
}

/* The columns the rows need, as log columns (enum log_col); NO_COL where absent. */
struct log_cols {
    int value, group, time;
    int where[DATASET_MAX_WHERE];
    double where_num[DATASET_MAX_WHERE]; /* a numeric column's --where value (NAN: empty, matches no number) */
};

/* The group column (--by, else "server"), which every file must agree on having. */
static int group_column(struct dataset *d, const char *path, struct log_cols *c)
{
    c->group = log_col_of(d->o.by ? d->o.by : "server");
    if (c->group == NO_COL || c->group == LC_EVENT_GAP)
        return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND, "%s: --by: a request log has no column '%s'%s", path,
                         d->o.by, c->group == LC_EVENT_GAP ? " to group by (one value per gap: --column only)" : "");
    if (d->any_file && !d->by_col)
        return knee_fail(d->err, sizeof d->err, KNEE_EMISMATCH, "%s: has a '%s' column the earlier files lack", path,
                         log_cols[c->group]);
    d->by_col = log_cols[c->group];
    return 0;
}

/* The --where filters' columns, and their values as numbers where the column is one. */
static int where_columns(struct dataset *d, const char *path, struct log_cols *c)
{
    if (d->o.nwhere > DATASET_MAX_WHERE)
        return knee_fail(d->err, sizeof d->err, KNEE_ETOOBIG, "at most 64 --where filters");
    for (size_t i = 0; i < d->o.nwhere; i++) {
        const struct where *w = &d->o.where[i];
        c->where[i] = log_col_of(w->col);
        if (c->where[i] == NO_COL || c->where[i] == LC_EVENT_GAP)
            return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND, "%s: --where: a request log has no column '%s'%s",
                             path, w->col,
                             c->where[i] == LC_EVENT_GAP ? " to filter on (one value per gap: --column only)" : "");
        c->where_num[i] = NAN;
        if (!log_col_text(c->where[i]) && w->value[0] &&
            csv_parse_double(w->value, strlen(w->value), &c->where_num[i]) != 0)
            return knee_fail(d->err, sizeof d->err, KNEE_EFORMAT, "--where %s=%s: %s is a number in a request log",
                             w->col, w->value, w->col);
    }
    return 0;
}

/* Every column the rows need, and the group and time columns in use. 0 or a negative code
 * with d->err set. */
static int log_columns(struct dataset *d, const struct reqlog_reader *rd, const char *path, bool by_file,
                       struct log_cols *c)
{
    c->group = c->time = NO_COL;
    c->value = log_col_of(d->o.column);
    if (c->value == NO_COL || log_col_text(c->value))
        return knee_fail(
            d->err, sizeof d->err, KNEE_ENOTFOUND,
            "%s: a request log has no numeric column '%s' (it has start_s, latency_ms, service_ms, ttfb_ms, "
            "lag_ms, status, bytes, connection, warmup, tls_ms, entry, first_event_ms, events, event_gap_ms)",
            path, d->o.column);
    if (c->value == LC_EVENT_GAP && !reqlog_reader_has_gaps(rd))
        return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND,
                         "%s: event_gap_ms: this log carries no gaps between events (knee run --stream sse|chunks|auto "
                         "--out FILE.bin writes them)",
                         path);
    int e;
    if (!by_file && (e = group_column(d, path, c)) != 0)
        return e;
    c->time = log_col_of(d->o.time ? d->o.time : "start_s");
    if (c->time == NO_COL || log_col_text(c->time) || c->time == LC_EVENT_GAP)
        return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND, "%s: --time: a request log has no numeric column '%s'",
                         path, d->o.time);
    d->time_col = log_cols[c->time];
    return where_columns(d, path, c);
}

/* Every --where filter holds for the record: text columns compare as words, numeric ones as
 * numbers (an empty value matches a cell that has no number). */
static bool where_kept(const struct dataset *d, const struct reqlog_reader *rd, const struct reqlog_record *r,
                       const struct reqlog_derived *dv, const struct log_cols *c)
{
    char buf[64];
    bool keep = true;
    for (size_t i = 0; i < d->o.nwhere && keep; i++) {
        bool eq;
        if (log_col_text(c->where[i])) {
            eq = strcmp(log_text(rd, r, c->where[i], buf, sizeof buf, dv), d->o.where[i].value) == 0;
        } else {
            double x = log_number(r, dv, c->where[i]);
            eq = isnan(c->where_num[i]) ? isnan(x) : x == c->where_num[i];
        }
        keep = eq != d->o.where[i].negate;
    }
    return keep;
}

/* The record's group (--by, else the file's). 0 or a negative code with d->err set. */
static int log_group(struct dataset *d, const struct reqlog_reader *rd, const struct reqlog_record *r,
                     const struct reqlog_derived *dv, const struct log_cols *c, const char *path, size_t *gi)
{
    char buf[64];
    if (c->group == NO_COL)
        return 0;
    const char *name = log_text(rd, r, c->group, buf, sizeof buf, dv);
    int k = dataset_group_of(d, name, strlen(name), gi);
    if (k)
        return knee_fail(d->err, sizeof d->err, k, "%s: more than %d groups in column '%s'", path, DATASET_MAX_GROUPS,
                         d->by_col);
    return 0;
}

/* event_gap_ms: one value per gap of a kept record, at the record's time, in its group; a
 * record without gaps has no value (missing). */
static int log_gap_values(struct dataset *d, const struct reqlog_reader *rd, const struct reqlog_record *r,
                          const struct reqlog_derived *dv, const struct log_cols *c, double t, size_t file_group,
                          const char *path)
{
    const uint64_t *g;
    uint32_t n;
    reqlog_read_gaps(rd, &g, &n);
    if (!n) {
        d->missing++;
        return 0;
    }
    size_t gi = file_group;
    int k = log_group(d, rd, r, dv, c, path, &gi);
    for (uint32_t i = 0; i < n && !k; i++)
        dataset_add_value(d, gi, (double)g[i] / 1e6, t, true);
    return k;
}

/* The records, each filtered (warm-up, --where, time) and its value added to its group.
 * Returns the last reqlog_read result (0 at the end) or a negative code; d->err is set for
 * the errors found here, not for reqlog_read's. */
static int log_rows(struct dataset *d, struct reqlog_reader *rd, const char *path, const struct log_cols *c,
                    size_t file_group)
{
    struct reqlog_record r;
    struct reqlog_derived dv;
    int k;
    while ((k = reqlog_read(rd, &r)) == 1) {
        d->rows++;
        reqlog_derive(&r, &dv);
        if ((r.flags & REQLOG_FLAG_WARMUP) && !d->o.keep_warmup) {
            d->filtered_warmup++;
            continue;
        }
        if (!where_kept(d, rd, &r, &dv, c)) {
            d->filtered_where++;
            continue;
        }
        double t = log_number(&r, &dv, c->time);
        if (isnan(t) || !dataset_time_kept(d, t)) {
            d->filtered_time++;
            continue;
        }
        if (c->value == LC_EVENT_GAP) {
            if ((k = log_gap_values(d, rd, &r, &dv, c, t, file_group, path)) != 0)
                return k;
            continue;
        }
        double v = log_number(&r, &dv, c->value);
        if (isnan(v)) {
            d->missing++;
            continue;
        }
        if (v < 0)
            return knee_fail(d->err, sizeof d->err, KNEE_ENEG,
                             "%s: record %llu: %s = %.6f is negative (a corrupt record: done before planned or sent)",
                             path, (unsigned long long)reqlog_reader_record_index(rd), d->o.column, v);
        size_t gi = file_group;
        if ((k = log_group(d, rd, &r, &dv, c, path, &gi)) != 0)
            return k;
        dataset_add_value(d, gi, v, t, true);
    }
    return k;
}

int dataset_load_log(struct dataset *d, const char *src, const char *path, size_t file_group, bool by_file)
{
    char msg[256];
    struct reqlog_reader *rd;
    int e = reqlog_reader_open(&rd, src, msg, sizeof msg);
    if (e)
        return knee_fail(d->err, sizeof d->err, e, "%s: %s", path, msg);
    d->knee_log = true;
    struct log_cols c;
    int k = log_columns(d, rd, path, by_file, &c);
    if (k == 0) {
        k = log_rows(d, rd, path, &c, file_group);
        if (k < 0 && d->err[0] == '\0')
            knee_fail(d->err, sizeof d->err, k, "%s: %s", path, reqlog_reader_error(rd));
    }
    reqlog_reader_close(rd);
    return k < 0 ? k : 0;
}
