/* The scatter's decimation: per pixel column, per series and per quarter-doubling band, the
 * request with the smallest and the one with the largest value, and how many fell there (see
 * internal.h). Exact extremes survive every merge, so a stall's worst request is always
 * drawn; random sampling would drop it one time in many. */
#include "html/internal.h"

#include "core/err.h"

#include <stdlib.h>
#include <string.h>

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int32_t html_band_of(int64_t v)
{
    if (v <= 0)
        return 0;
    int e = 63 - __builtin_clzll((unsigned long long)v);
    /* the two bits below the leading one: which quarter of [2^e, 2^(e+1)) */
    int q = e >= 2 ? (int)((v >> (e - 2)) & 3) : (int)((v << (2 - e)) & 3);
    return 1 + e * HTML_BANDS_PER_DOUBLING + q;
}

void html_decim_init(struct html_decim *d, size_t ncols, int64_t first_width_ns)
{
    memset(d, 0, sizeof *d);
    d->ncols = ncols < 2 ? 2 : ncols;
    d->width_ns = first_width_ns > 0 ? first_width_ns : 1;
    d->cols = xcalloc(d->ncols, sizeof *d->cols);
}

static void column_release(struct html_column *c)
{
    for (int s = 0; s < HTML_S_COUNT; s++)
        free(c->s[s].v);
    memset(c, 0, sizeof *c);
}

void html_decim_release(struct html_decim *d)
{
    if (!d->cols)
        return;
    for (size_t i = 0; i < d->ncols; i++)
        column_release(&d->cols[i]);
    free(d->cols);
    memset(d, 0, sizeof *d);
}

/* The cell of band b in v (inserted empty, keeping bands sorted, when missing). */
static struct html_cell *cell_of(struct html_cellvec *v, int32_t band)
{
    uint32_t lo = 0, hi = v->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (v->v[mid].band < band)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < v->n && v->v[lo].band == band)
        return &v->v[lo];
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 4;
        v->v = xrealloc(v->v, v->cap * sizeof *v->v);
    }
    memmove(&v->v[lo + 1], &v->v[lo], (v->n - lo) * sizeof *v->v);
    v->n++;
    struct html_cell *c = &v->v[lo];
    memset(c, 0, sizeof *c);
    c->band = band;
    return c;
}

static void cell_merge(struct html_cell *dst, const struct html_cell *src)
{
    if (!src->count)
        return;
    if (!dst->count) {
        *dst = *src;
        return;
    }
    /* ties keep the earlier request, so the result does not depend on merge order */
    if (src->min_v < dst->min_v || (src->min_v == dst->min_v && src->min_t < dst->min_t)) {
        dst->min_v = src->min_v;
        dst->min_t = src->min_t;
    }
    if (src->max_v > dst->max_v || (src->max_v == dst->max_v && src->max_t < dst->max_t)) {
        dst->max_v = src->max_v;
        dst->max_t = src->max_t;
    }
    dst->count += src->count;
}

/* dst += src (src is left empty). */
static void column_merge(struct html_column *dst, struct html_column *src)
{
    for (int s = 0; s < HTML_S_COUNT; s++) {
        struct html_cellvec *sv = &src->s[s];
        for (uint32_t i = 0; i < sv->n; i++)
            cell_merge(cell_of(&dst->s[s], sv->v[i].band), &sv->v[i]);
    }
    dst->dropped += src->dropped;
    column_release(src);
}

/* Double the column width: absolute column k becomes k/2 (rounded down). */
static void coarsen(struct html_decim *d)
{
    int64_t nbase = floordiv(d->base, 2);
    for (size_t i = 0; i < d->ncols; i++) {
        size_t j = (size_t)(floordiv(d->base + (int64_t)i, 2) - nbase); /* j <= i */
        if (j != i) {
            column_merge(&d->cols[j], &d->cols[i]);
        }
    }
    d->base = nbase;
    d->lo = floordiv(d->lo, 2);
    d->hi = floordiv(d->hi, 2);
    d->width_ns *= 2;
}

/* Move the window so that cols[0] is absolute column nbase (all occupied columns stay inside). */
static void shift(struct html_decim *d, int64_t nbase)
{
    int64_t delta = nbase - d->base;
    if (delta > 0) {
        size_t k = (size_t)delta;
        for (size_t i = 0; i < k && i < d->ncols; i++)
            column_release(&d->cols[i]); /* empty: nothing occupied there */
        memmove(&d->cols[0], &d->cols[k], (d->ncols - k) * sizeof *d->cols);
        memset(&d->cols[d->ncols - k], 0, k * sizeof *d->cols);
    } else if (delta < 0) {
        size_t k = (size_t)-delta;
        for (size_t i = d->ncols - k; i < d->ncols; i++)
            column_release(&d->cols[i]);
        memmove(&d->cols[k], &d->cols[0], (d->ncols - k) * sizeof *d->cols);
        memset(&d->cols[0], 0, k * sizeof *d->cols);
    }
    d->base = nbase;
}

static struct html_column *column_at(struct html_decim *d, int64_t t_ns)
{
    int64_t n = (int64_t)d->ncols;
    if (!d->any) {
        d->any = true;
        d->base = floordiv(t_ns, d->width_ns);
        d->lo = d->hi = d->base;
    }
    for (;;) {
        int64_t k = floordiv(t_ns, d->width_ns);
        if (k >= d->base && k < d->base + n) {
            if (k < d->lo)
                d->lo = k;
            if (k > d->hi)
                d->hi = k;
            return &d->cols[k - d->base];
        }
        int64_t lo = k < d->lo ? k : d->lo, hi = k > d->hi ? k : d->hi;
        if (hi - lo < n)
            shift(d, k < d->base ? lo : hi - n + 1);
        else
            coarsen(d);
    }
}

void html_decim_add(struct html_decim *d, enum html_series s, int64_t t_ns, int64_t v_ns)
{
    struct html_column *c = column_at(d, t_ns);
    struct html_cell *cell = cell_of(&c->s[s], html_band_of(v_ns));
    struct html_cell one = {.band = cell->band, .count = 1, .min_t = t_ns, .min_v = v_ns, .max_t = t_ns, .max_v = v_ns};
    cell_merge(cell, &one);
    d->count[s]++;
}

void html_decim_add_dropped(struct html_decim *d, int64_t t_ns)
{
    column_at(d, t_ns)->dropped++;
    d->dropped++;
}

static int cmp_point(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

int64_t *html_decim_points(const struct html_decim *d, enum html_series s, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < d->ncols; i++)
        cap += 2 * (size_t)d->cols[i].s[s].n;
    int64_t *p = xmalloc((cap ? cap : 1) * 2 * sizeof *p);
    size_t k = 0;
    for (size_t i = 0; i < d->ncols; i++) {
        const struct html_cellvec *v = &d->cols[i].s[s];
        for (uint32_t j = 0; j < v->n; j++) {
            const struct html_cell *c = &v->v[j];
            p[2 * k] = c->min_t;
            p[2 * k + 1] = c->min_v;
            k++;
            if (c->max_t != c->min_t || c->max_v != c->min_v) {
                p[2 * k] = c->max_t;
                p[2 * k + 1] = c->max_v;
                k++;
            }
        }
    }
    qsort(p, k, 2 * sizeof *p, cmp_point);
    *n = k;
    return p;
}
