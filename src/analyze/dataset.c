/* Per-request data into groups: the groups (found by name, the previous row's first, since rows
 * of one target come in runs), the values added to them (exact arrays or HDR histograms), and
 * the entry that picks the reader by the file's first bytes (dataset_csv.c, dataset_log.c). The
 * per-row path is kept short because it runs ten million times for a large file. */
#include "analyze/dataset.h"
#include "analyze/internal.h"

#include "core/err.h"
#include "core/grow.h"
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

int dataset_group_of(struct dataset *d, const char *name, size_t len, size_t *out)
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
    g->win_p99 = grow_array(g->win_p99, &g->wincap, g->nwin + 1, sizeof *g->win_p99, 64);
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

void dataset_add_value(struct dataset *d, size_t gi, double v, double t, bool has_t)
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
        if (dataset_group_of(d, path, strlen(path), &file_group) != 0)
            return knee_fail(d->err, sizeof d->err, KNEE_ETOOBIG, "more than %d input files", DATASET_MAX_GROUPS);
        d->by_col = DATASET_BY_FILE;
    }
    int e = reqlog_is_log(head, (size_t)n) ? dataset_load_log(d, src, path, file_group, by_file)
                                           : dataset_load_csv(d, src, path, file_group, by_file);
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
