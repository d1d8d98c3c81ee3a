/* Reading per-request files into groups. The per-row path is kept short because it runs ten
 * million times for a large file: the previous row's group is tried first (rows of one target
 * come in runs), only the needed cells are parsed, and filters run before any number parsing
 * of the value. Every rejected input names its file and line. */
#include "analyze/dataset.h"

#include "core/err.h"
#include "csv/csv.h"
#include "reqlog/reqlog.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int where_parse(const char *s, struct where *w)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s)
        return KNEE_EFORMAT;
    bool neg = eq > s && eq[-1] == '!';
    size_t clen = (size_t)(eq - s) - (neg ? 1 : 0);
    if (clen == 0)
        return KNEE_EFORMAT;
    char *col = xmalloc(clen + 1 + strlen(eq + 1) + 1);
    memcpy(col, s, clen);
    col[clen] = '\0';
    char *val = col + clen + 1;
    strcpy(val, eq + 1);
    w->col = col;
    w->value = val;
    w->negate = neg;
    return 0;
}

int dataset_init(struct dataset *d, const struct load_opts *o)
{
    memset(d, 0, sizeof *d);
    d->o = *o;
    if (!d->o.column)
        d->o.column = "latency_ms";
    if (!(d->o.first_bound > 0))
        d->o.first_bound = 1.0;
    d->has_time = true;
    dbl_init(&d->hist, d->o.first_bound);
    heatmap_init(&d->heat, d->o.first_bound);
    const double *b = o->prom_bounds ? o->prom_bounds : prom_default_bounds_ms;
    size_t nb = o->prom_bounds ? o->nprom : PROM_DEFAULT_NBOUNDS;
    if (prom_init(&d->prom, b, nb) != 0)
        return KNEE_EINVAL;
    d->mapcap = 64;
    d->map = xcalloc(d->mapcap, sizeof *d->map);
    return 0;
}

static void group_free(struct dataset_group *g, bool approx)
{
    free(g->name);
    free(g->v);
    free(g->sec);
    free(g->t);
    if (approx) {
        hdr_release(&g->hdr);
        for (size_t i = 0; g->ring && i < DATASET_RING; i++)
            if (g->ring[i].ready)
                hdr_release(&g->ring[i].h);
    }
    free(g->ring);
    free(g->win_p99);
    free(g->sw);
    free(g->sw_values);
    free(g);
}

void dataset_release(struct dataset *d)
{
    for (size_t i = 0; i < d->ng; i++)
        group_free(d->g[i], d->o.approx);
    free(d->g);
    free(d->map);
    heatmap_release(&d->heat);
    for (size_t i = 0; i < d->nfiles; i++)
        free(d->files[i]);
    memset(d, 0, sizeof *d);
}

/* ---------------------------------------------------------------- groups */

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static void map_insert(struct dataset *d, size_t gi)
{
    const char *name = d->g[gi]->name;
    size_t mask = d->mapcap - 1;
    size_t i = (size_t)hash_bytes(name, strlen(name)) & mask;
    while (d->map[i])
        i = (i + 1) & mask;
    d->map[i] = (uint32_t)gi + 1;
}

static int new_group(struct dataset *d, const char *name, size_t len, size_t *out)
{
    if (d->ng >= DATASET_MAX_GROUPS)
        return KNEE_ETOOBIG;
    struct dataset_group *g = xcalloc(1, sizeof *g);
    g->name = xmalloc(len + 1);
    memcpy(g->name, name, len);
    g->name[len] = '\0';
    if (d->o.approx) {
        int e = hdr_init(&g->hdr, 1, DATASET_HDR_HIGHEST, DATASET_HDR_DIGITS);
        if (e) {
            free(g->name);
            free(g);
            return e;
        }
        g->min = INFINITY;
        g->max = -INFINITY;
        stats_running_init(&g->w);
        g->ring = xcalloc(DATASET_RING, sizeof *g->ring);
    }
    d->g = xrealloc(d->g, (d->ng + 1) * sizeof *d->g);
    d->g[d->ng] = g;
    *out = d->ng++;
    if (2 * d->ng > d->mapcap) {
        free(d->map);
        d->mapcap *= 4;
        d->map = xcalloc(d->mapcap, sizeof *d->map);
        for (size_t i = 0; i < d->ng; i++)
            map_insert(d, i);
    } else {
        map_insert(d, *out);
    }
    return 0;
}

/* The group index of a name (created on first sight). 0 or KNEE_ETOOBIG. */
static int group_of(struct dataset *d, const char *name, size_t len, size_t *out)
{
    if (d->have_last) {
        const char *ln = d->g[d->last_group]->name;
        if (strlen(ln) == len && memcmp(ln, name, len) == 0) {
            *out = d->last_group;
            return 0;
        }
    }
    size_t mask = d->mapcap - 1;
    size_t i = (size_t)hash_bytes(name, len) & mask;
    while (d->map[i]) {
        size_t gi = d->map[i] - 1;
        const char *gn = d->g[gi]->name;
        if (strlen(gn) == len && memcmp(gn, name, len) == 0) {
            *out = d->last_group = gi;
            d->have_last = true;
            return 0;
        }
        i = (i + 1) & mask;
    }
    int e = new_group(d, name, len, out);
    if (e == 0) {
        d->last_group = *out;
        d->have_last = true;
    }
    return e;
}

static int cmp_names(const void *a, const void *b, void *ctx)
{
    const struct dataset *d = ctx;
    return strcmp(d->g[*(const size_t *)a]->name, d->g[*(const size_t *)b]->name);
}

size_t *dataset_name_order(const struct dataset *d)
{
    size_t *ord = xmalloc((d->ng ? d->ng : 1) * sizeof *ord);
    for (size_t i = 0; i < d->ng; i++)
        ord[i] = i;
    qsort_r(ord, d->ng, sizeof *ord, cmp_names, (void *)d);
    return ord;
}

/* ---------------------------------------------------------------- adding values */

static void ring_close(struct dataset_group *g, struct ring_slot *s)
{
    if (g->nwin == g->wincap) {
        g->wincap = g->wincap ? 2 * g->wincap : 64;
        g->win_p99 = xrealloc(g->win_p99, g->wincap * sizeof *g->win_p99);
    }
    g->win_p99[g->nwin++] = (double)hdr_value_at_percentile(&s->h, 99.0) / DATASET_HDR_SCALE;
    s->used = false;
}

static void ring_add(struct dataset_group *g, int64_t sec, int64_t iv)
{
    if (!g->ring_any) {
        g->ring_any = true;
        g->ring_top = sec;
    }
    if (sec > g->ring_top) {
        for (size_t i = 0; i < DATASET_RING; i++)
            if (g->ring[i].used && g->ring[i].sec <= sec - DATASET_RING)
                ring_close(g, &g->ring[i]);
        g->ring_top = sec;
    } else if (sec <= g->ring_top - DATASET_RING) {
        g->late++;
        return;
    }
    struct ring_slot *s = &g->ring[(size_t)(((sec % DATASET_RING) + DATASET_RING) % DATASET_RING)];
    if (!s->ready) {
        if (hdr_init(&s->h, 1, DATASET_HDR_HIGHEST, DATASET_WINDOW_HDR_DIGITS) != 0)
            knee_oom(); /* fixed, valid parameters: only memory can fail */
        s->ready = true;
    }
    if (!s->used) {
        hdr_reset(&s->h);
        s->used = true;
        s->sec = sec;
    }
    hdr_record(&s->h, iv, 1);
}

static void add_value(struct dataset *d, size_t gi, double v, double t, bool has_t)
{
    struct dataset_group *g = d->g[gi];
    if (d->pass2) {
        if (gi != d->pass2_group)
            return;
        uint64_t pos = g->seen2++;
        for (size_t i = 0; i < g->nsw; i++)
            if (pos >= g->sw[i].start && pos < g->sw[i].start + g->sw[i].len)
                g->sw_values[i * g->sw_len + (pos - g->sw[i].start)] = v;
        return;
    }
    d->kept++;
    g->n++;
    if (has_t) {
        if (g->n > 1 && t < g->last_t) {
            g->unordered++;
            d->unordered++;
        }
        g->last_t = t;
    }
    if (v < d->o.under)
        g->under++;
    dbl_add(&d->hist, v, 1);
    prom_observe(&d->prom, v);
    int32_t sec = 0;
    if (has_t) {
        heatmap_add(&d->heat, t, v);
        sec = (int32_t)floor(t);
    }
    if (!d->o.approx) {
        if (g->n > g->cap) {
            g->cap = g->cap ? g->cap + g->cap / 2 : 1024;
            g->v = xrealloc(g->v, g->cap * sizeof *g->v);
            g->t = xrealloc(g->t, g->cap * sizeof *g->t);
        }
        g->v[g->n - 1] = v;
        g->t[g->n - 1] = has_t ? t : 0;
        return;
    }
    if (v < g->min)
        g->min = v;
    if (v > g->max)
        g->max = v;
    stats_running_add(&g->w, v);
    int64_t iv = llround(v * DATASET_HDR_SCALE);
    if (hdr_record(&g->hdr, iv, 1) == KNEE_ERANGE)
        d->hdr_overflow++;
    if (has_t)
        ring_add(g, sec, iv);
}

/* Order of two rows of a group: by time, then by their place in the files (stable). */
static int cmp_row_time(const void *a, const void *b, void *ctx)
{
    const double *t = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (t[i] != t[j])
        return t[i] < t[j] ? -1 : 1;
    return (i > j) - (i < j);
}

/* Exact mode: the group's rows in time order, then their whole seconds in g->sec. */
static void group_time_order(struct dataset_group *g)
{
    size_t n = (size_t)g->n;
    if (g->unordered && n > 1) {
        size_t *ord = xmalloc(n * sizeof *ord);
        for (size_t i = 0; i < n; i++)
            ord[i] = i;
        qsort_r(ord, n, sizeof *ord, cmp_row_time, g->t);
        double *v = xmalloc(n * sizeof *v), *t = xmalloc(n * sizeof *t);
        for (size_t i = 0; i < n; i++) {
            v[i] = g->v[ord[i]];
            t[i] = g->t[ord[i]];
        }
        free(ord);
        free(g->v);
        free(g->t);
        g->v = v;
        g->t = t;
        g->cap = n;
    }
    g->sec = xmalloc((n ? n : 1) * sizeof *g->sec);
    for (size_t i = 0; i < n; i++)
        g->sec[i] = (int32_t)floor(g->t[i]);
    free(g->t);
    g->t = NULL;
}

void dataset_finish(struct dataset *d)
{
    if (!d->o.approx) {
        for (size_t gi = 0; gi < d->ng; gi++)
            if (!d->g[gi]->sec)
                group_time_order(d->g[gi]);
        return;
    }
    for (size_t gi = 0; gi < d->ng; gi++) {
        struct dataset_group *g = d->g[gi];
        for (size_t i = 0; i < DATASET_RING; i++)
            if (g->ring[i].used)
                ring_close(g, &g->ring[i]);
    }
}

void dataset_begin_pass2(struct dataset *d, size_t gi, size_t nwin, size_t win_len)
{
    struct dataset_group *g = d->g[gi];
    d->pass2 = true;
    d->pass2_group = gi;
    g->nsw = nwin;
    g->sw_len = win_len;
    g->sw = xcalloc(nwin ? nwin : 1, sizeof *g->sw);
    g->sw_values = xcalloc((nwin ? nwin : 1) * (win_len ? win_len : 1), sizeof *g->sw_values);
    analyze_small_window_bounds((size_t)g->n, nwin, win_len, g->sw);
    g->seen2 = 0;
}

/* ---------------------------------------------------------------- shared row checks */

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

static bool time_kept(const struct dataset *d, double t)
{
    return t >= d->o.skip_s && t < d->o.until_s;
}

/* ---------------------------------------------------------------- CSV */

/* A column's index in a header, or NO_COL (an index, not an error code). */
enum { NO_COL = -1 };

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

static int load_csv(struct dataset *d, const char *src, const char *path, size_t file_group, bool by_file)
{
    struct csv_reader *r;
    int e = csv_reader_open(&r, src, NULL);
    if (e)
        return knee_fail(d->err, sizeof d->err, e, "%s: %s", path, knee_strerror(e));
    struct csv_record rec;
    int k = csv_next(r, &rec);
    if (k == 0) {
        csv_reader_close(r);
        return knee_fail(d->err, sizeof d->err, KNEE_EEMPTY, "%s: empty file (no header line)", path);
    }
    if (k < 0) {
        if (k == KNEE_EFORMAT && strstr(csv_reader_error(r), "NUL byte"))
            knee_fail(d->err, sizeof d->err, k,
                      "%s: unknown file type: not CSV text (%s, line %llu) and not a knee request log", path,
                      csv_reader_error(r), (unsigned long long)csv_reader_line(r));
        else
            knee_fail(d->err, sizeof d->err, k, "%s:%llu: %s", path, (unsigned long long)csv_reader_line(r),
                      csv_reader_error(r));
        csv_reader_close(r);
        return k;
    }
    size_t ncols = rec.n;
    char cols[512];
    int vcol = find_col(&rec, d->o.column);
    int gcol = NO_COL, tcol = NO_COL;
    if (vcol == NO_COL) {
        list_columns(&rec, cols, sizeof cols);
        csv_reader_close(r);
        return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND, "%s:1: no column '%s' in the header (columns: %s)",
                         path, d->o.column, cols);
    }
    if (!by_file) {
        const char *by = d->o.by ? d->o.by : "server";
        gcol = find_col(&rec, by);
        if (gcol == NO_COL && d->o.by) {
            list_columns(&rec, cols, sizeof cols);
            csv_reader_close(r);
            return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND,
                             "%s:1: --by: no column '%s' in the header (columns: %s)", path, by, cols);
        }
        if (gcol != NO_COL) {
            if (d->any_file && !d->by_col) {
                csv_reader_close(r);
                return knee_fail(
                    d->err, sizeof d->err, KNEE_EMISMATCH,
                    "%s:1: has a '%s' column the earlier files lack: use --by %s on files that all have it", path, by,
                    by);
            }
            d->by_col = d->o.by ? d->o.by : "server";
        } else if (d->by_col) {
            csv_reader_close(r);
            return knee_fail(d->err, sizeof d->err, KNEE_EMISMATCH,
                             "%s:1: no '%s' column to group by, unlike the earlier files", path, d->by_col);
        }
    }
    const char *tname = d->o.time ? d->o.time : "start_s";
    tcol = find_col(&rec, tname);
    if (tcol == NO_COL && d->o.time) {
        list_columns(&rec, cols, sizeof cols);
        csv_reader_close(r);
        return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND,
                         "%s:1: --time: no column '%s' in the header (columns: %s)", path, tname, cols);
    }
    if (tcol == NO_COL) {
        if (isfinite(d->o.skip_s) || isfinite(d->o.until_s)) {
            csv_reader_close(r);
            return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND,
                             "%s:1: --skip/--until need a time column, and there is no '%s' (use --time COL)", path,
                             tname);
        }
        d->has_time = false;
    } else {
        d->time_col = tname;
    }
    int wcol[64];
    if (d->o.nwhere > 64) {
        csv_reader_close(r);
        return knee_fail(d->err, sizeof d->err, KNEE_ETOOBIG, "at most 64 --where filters");
    }
    for (size_t i = 0; i < d->o.nwhere; i++) {
        wcol[i] = find_col(&rec, d->o.where[i].col);
        if (wcol[i] == NO_COL) {
            list_columns(&rec, cols, sizeof cols);
            csv_reader_close(r);
            return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND,
                             "%s:1: --where: no column '%s' in the header (columns: %s)", path, d->o.where[i].col,
                             cols);
        }
    }
    /* knee's own CSV marks the warm-up (warmup = 1): left out unless --keep-warmup */
    int wucol = find_col(&rec, "warmup");
    if (wucol != NO_COL)
        d->knee_log = true;
    bool use_time = tcol != NO_COL;
    if (!by_file && gcol == NO_COL &&
        (e = group_of(d, DATASET_ALL_GROUP, strlen(DATASET_ALL_GROUP), &file_group)) != 0) {
        csv_reader_close(r);
        return knee_fail(d->err, sizeof d->err, e, "%s: too many groups", path);
    }
    while ((k = csv_next(r, &rec)) == 1) {
        if (rec.n != ncols) {
            knee_fail(d->err, sizeof d->err, KNEE_EFORMAT, "%s:%llu: %zu fields, but the header has %zu", path,
                      (unsigned long long)rec.line, rec.n, ncols);
            break;
        }
        d->rows++;
        if (wucol != NO_COL) {
            enum warmup_cell wu = warmup_cell(rec.field[wucol], rec.len[wucol]);
            if (wu == WARMUP_BAD) {
                k = knee_fail(d->err, sizeof d->err, KNEE_EFORMAT, "%s:%llu: warmup: '%s' is not 0 or 1", path,
                              (unsigned long long)rec.line, rec.field[wucol]);
                break;
            }
            if (wu == WARMUP_YES && !d->o.keep_warmup) {
                d->filtered_warmup++;
                continue;
            }
        }
        bool keep = true;
        for (size_t i = 0; i < d->o.nwhere; i++) {
            bool eq = strcmp(rec.field[wcol[i]], d->o.where[i].value) == 0;
            if (eq == d->o.where[i].negate) {
                keep = false;
                break;
            }
        }
        if (!keep) {
            d->filtered_where++;
            continue;
        }
        double t = 0;
        if (use_time) {
            if ((k = parse_time(d, path, rec.line, rec.field[tcol], rec.len[tcol], &t)) != 0)
                break;
            if (!time_kept(d, t)) {
                d->filtered_time++;
                continue;
            }
        }
        double v;
        int pv = parse_value(d, path, rec.line, rec.field[vcol], rec.len[vcol], &v);
        if (pv < 0) {
            k = pv;
            break;
        }
        if (pv > 0)
            continue;
        size_t gi = file_group;
        if (gcol != NO_COL && (k = group_of(d, rec.field[gcol], rec.len[gcol], &gi)) != 0) {
            knee_fail(d->err, sizeof d->err, k,
                      "%s:%llu: more than %d groups in column '%s': group by something coarser", path,
                      (unsigned long long)rec.line, DATASET_MAX_GROUPS, d->by_col);
            break;
        }
        add_value(d, gi, v, t, use_time);
    }
    if (k < 0 && d->err[0] == '\0')
        knee_fail(d->err, sizeof d->err, k, "%s:%llu: %s", path, (unsigned long long)csv_reader_line(r),
                  csv_reader_error(r));
    if (k == 1 || (k < 0 && strstr(d->err, "fields, but the header")))
        k = KNEE_EFORMAT;
    csv_reader_close(r);
    return k < 0 ? k : 0;
}

/* ---------------------------------------------------------------- binary log */

/* The columns a binary log offers by name: REQLOG_CSV_HEADER's, then the warm-up flag. One
 * list makes both the enum and the names, so they cannot drift apart. */
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
    X(LC_TLS, "tls")
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
    else if (c == LC_STATUS || c == LC_BYTES || c == LC_CONNECTION || c == LC_WARMUP)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, c == LC_START ? "%.9f" : "%.6f", v); /* as the CSV writer prints it */
    return buf;
}

static int load_log(struct dataset *d, const char *src, const char *path, size_t file_group, bool by_file)
{
    char msg[256];
    struct reqlog_reader *rd;
    int e = reqlog_reader_open(&rd, src, msg, sizeof msg);
    if (e)
        return knee_fail(d->err, sizeof d->err, e, "%s: %s", path, msg);
    d->knee_log = true;
    int vc = log_col_of(d->o.column);
    if (vc == NO_COL || log_col_text(vc)) {
        reqlog_reader_close(rd);
        return knee_fail(
            d->err, sizeof d->err, KNEE_ENOTFOUND,
            "%s: a request log has no numeric column '%s' (it has start_s, latency_ms, service_ms, ttfb_ms, "
            "lag_ms, status, bytes, connection, warmup, tls_ms)",
            path, d->o.column);
    }
    int gc = NO_COL;
    if (!by_file) {
        gc = log_col_of(d->o.by ? d->o.by : "server");
        if (gc == NO_COL) {
            reqlog_reader_close(rd);
            return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND, "%s: --by: a request log has no column '%s'", path,
                             d->o.by);
        }
        if (d->any_file && !d->by_col) {
            reqlog_reader_close(rd);
            return knee_fail(d->err, sizeof d->err, KNEE_EMISMATCH, "%s: has a '%s' column the earlier files lack",
                             path, log_cols[gc]);
        }
        d->by_col = log_cols[gc];
    }
    int tc = log_col_of(d->o.time ? d->o.time : "start_s");
    if (tc == NO_COL || log_col_text(tc)) {
        reqlog_reader_close(rd);
        return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND, "%s: --time: a request log has no numeric column '%s'",
                         path, d->o.time);
    }
    d->time_col = log_cols[tc];
    int wc[64];
    double wnum[64];
    if (d->o.nwhere > 64) {
        reqlog_reader_close(rd);
        return knee_fail(d->err, sizeof d->err, KNEE_ETOOBIG, "at most 64 --where filters");
    }
    for (size_t i = 0; i < d->o.nwhere; i++) {
        wc[i] = log_col_of(d->o.where[i].col);
        if (wc[i] == NO_COL) {
            reqlog_reader_close(rd);
            return knee_fail(d->err, sizeof d->err, KNEE_ENOTFOUND, "%s: --where: a request log has no column '%s'",
                             path, d->o.where[i].col);
        }
        wnum[i] = NAN;
        if (!log_col_text(wc[i]) && d->o.where[i].value[0] &&
            csv_parse_double(d->o.where[i].value, strlen(d->o.where[i].value), &wnum[i]) != 0) {
            reqlog_reader_close(rd);
            return knee_fail(d->err, sizeof d->err, KNEE_EFORMAT, "--where %s=%s: %s is a number in a request log",
                             d->o.where[i].col, d->o.where[i].value, d->o.where[i].col);
        }
    }
    struct reqlog_record r;
    struct reqlog_derived dv;
    char buf[64];
    int k;
    while ((k = reqlog_read(rd, &r)) == 1) {
        d->rows++;
        reqlog_derive(&r, &dv);
        if ((r.flags & REQLOG_FLAG_WARMUP) && !d->o.keep_warmup) {
            d->filtered_warmup++;
            continue;
        }
        bool keep = true;
        for (size_t i = 0; i < d->o.nwhere && keep; i++) {
            bool eq;
            if (log_col_text(wc[i])) {
                eq = strcmp(log_text(rd, &r, wc[i], buf, sizeof buf, &dv), d->o.where[i].value) == 0;
            } else {
                double x = log_number(&r, &dv, wc[i]);
                eq = isnan(wnum[i]) ? isnan(x) : x == wnum[i];
            }
            keep = eq != d->o.where[i].negate;
        }
        if (!keep) {
            d->filtered_where++;
            continue;
        }
        double t = log_number(&r, &dv, tc);
        if (isnan(t) || !time_kept(d, t)) {
            d->filtered_time++;
            continue;
        }
        double v = log_number(&r, &dv, vc);
        if (isnan(v)) {
            d->missing++;
            continue;
        }
        if (v < 0) {
            k = knee_fail(d->err, sizeof d->err, KNEE_ENEG,
                          "%s: record %llu: %s = %.6f is negative (a corrupt record: done before planned or sent)",
                          path, (unsigned long long)reqlog_reader_record_index(rd), d->o.column, v);
            break;
        }
        size_t gi = file_group;
        if (gc != NO_COL) {
            const char *name = log_text(rd, &r, gc, buf, sizeof buf, &dv);
            if ((k = group_of(d, name, strlen(name), &gi)) != 0) {
                knee_fail(d->err, sizeof d->err, k, "%s: more than %d groups in column '%s'", path, DATASET_MAX_GROUPS,
                          d->by_col);
                break;
            }
        }
        add_value(d, gi, v, t, true);
    }
    if (k < 0 && d->err[0] == '\0')
        knee_fail(d->err, sizeof d->err, k, "%s: %s", path, reqlog_reader_error(rd));
    reqlog_reader_close(rd);
    return k < 0 ? k : 0;
}

/* ---------------------------------------------------------------- entry */

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int dataset_load(struct dataset *d, const char *path)
{
    return dataset_load_named(d, path, path);
}

int dataset_load_named(struct dataset *d, const char *src, const char *path)
{
    d->err[0] = '\0';
    if (ends_with(path, ".hlog"))
        return knee_fail(
            d->err, sizeof d->err, KNEE_EUNSUPPORTED,
            "%s: hlog input: use knee hlog ... (an HdrHistogram interval log holds histograms, not requests)", path);
    int fd = open(src, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return knee_fail(d->err, sizeof d->err, -errno, "%s: %s", path, strerror(errno));
    unsigned char head[REQLOG_MAGIC_LEN];
    ssize_t n = read(fd, head, sizeof head);
    int read_errno = errno;
    close(fd);
    if (n < 0)
        return knee_fail(d->err, sizeof d->err, -read_errno, "%s: %s", path, strerror(read_errno));
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
        return knee_fail(d->err, sizeof d->err, KNEE_EFORMAT,
                         "%s: unknown file type: gzip-compressed (decompress it first)", path);
    bool by_file = d->o.by && strcmp(d->o.by, DATASET_BY_FILE) == 0;
    /* the second pass of approx mode reads the same rows again: its counts are not new rows */
    uint64_t saved[7] = {d->rows,        d->kept, d->missing, d->filtered_where, d->filtered_time, d->filtered_warmup,
                         d->hdr_overflow};
    size_t file_group = 0;
    if (!d->pass2) {
        if (d->nfiles >= DATASET_MAX_FILES)
            return knee_fail(d->err, sizeof d->err, KNEE_ETOOBIG, "more than %d input files", DATASET_MAX_FILES);
        d->files[d->nfiles++] = xstrdup(path);
    }
    if (by_file) {
        if (group_of(d, path, strlen(path), &file_group) != 0)
            return knee_fail(d->err, sizeof d->err, KNEE_ETOOBIG, "more than %d input files", DATASET_MAX_GROUPS);
        d->by_col = DATASET_BY_FILE;
    }
    int e = reqlog_is_log(head, (size_t)n) ? load_log(d, src, path, file_group, by_file)
                                           : load_csv(d, src, path, file_group, by_file);
    d->any_file = true;
    if (d->pass2) {
        d->rows = saved[0];
        d->kept = saved[1];
        d->missing = saved[2];
        d->filtered_where = saved[3];
        d->filtered_time = saved[4];
        d->filtered_warmup = saved[5];
        d->hdr_overflow = saved[6];
    }
    return e;
}
