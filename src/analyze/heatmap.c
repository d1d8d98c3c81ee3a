/* Latency over time as a terminal heatmap: time bins x doubling buckets, in constant memory.
 * Bins begin one second wide; when a new time falls outside what HEATMAP_MAX_BINS bins can
 * span, every bin width doubles and neighbours merge (counts only add, so nothing is lost),
 * which keeps any run — a minute or a week — in at most 4096 x 64 counters. */
#include "analyze/analyze.h"

#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void heatmap_init(struct heatmap *h, double first_bound)
{
    memset(h, 0, sizeof *h);
    h->first_bound = first_bound;
    h->width_s = 1;
    dbl_init(&h->shape, first_bound);
}

void heatmap_release(struct heatmap *h)
{
    free(h->counts);
    h->counts = NULL;
    h->nbins = 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Double the bin width: bin i (index lo+i) moves into floor((lo+i)/2). */
static void coarsen(struct heatmap *h)
{
    int64_t nlo = floor_div(h->lo, 2);
    size_t nn = (size_t)(floor_div(h->lo + (int64_t)h->nbins - 1, 2) - nlo + 1);
    uint64_t *c = xcalloc(HEATMAP_MAX_BINS * DBL_MAX_BUCKETS, sizeof *c);
    for (size_t i = 0; i < h->nbins; i++) {
        size_t j = (size_t)(floor_div(h->lo + (int64_t)i, 2) - nlo);
        for (size_t b = 0; b < DBL_MAX_BUCKETS; b++)
            c[j * DBL_MAX_BUCKETS + b] += h->counts[i * DBL_MAX_BUCKETS + b];
    }
    free(h->counts);
    h->counts = c;
    h->lo = nlo;
    h->nbins = nn;
    h->width_s *= 2;
}

void heatmap_add(struct heatmap *h, double time_s, double value)
{
    size_t b = dbl_bucket_of(&h->shape, value);
    /* times beyond +-2^62 s are not a run: clamp so the index math cannot overflow */
    double t = floor(time_s);
    if (t > 4e18)
        t = 4e18;
    if (t < -4e18)
        t = -4e18;
    int64_t sec = (int64_t)t;
    if (!h->counts) {
        h->counts = xcalloc(HEATMAP_MAX_BINS * DBL_MAX_BUCKETS, sizeof *h->counts);
        h->lo = sec;
        h->nbins = 1;
    }
    for (;;) {
        int64_t bin = floor_div(sec, h->width_s);
        int64_t lo = bin < h->lo ? bin : h->lo;
        int64_t hi = bin > h->lo + (int64_t)h->nbins - 1 ? bin : h->lo + (int64_t)h->nbins - 1;
        if (hi - lo + 1 <= HEATMAP_MAX_BINS) {
            if (lo < h->lo) { /* grow to the left: shift the bins right */
                size_t shift = (size_t)(h->lo - lo);
                memmove(h->counts + shift * DBL_MAX_BUCKETS, h->counts, h->nbins * DBL_MAX_BUCKETS * sizeof *h->counts);
                memset(h->counts, 0, shift * DBL_MAX_BUCKETS * sizeof *h->counts);
                h->lo = lo;
                h->nbins += shift;
            }
            if (hi >= h->lo + (int64_t)h->nbins)
                h->nbins = (size_t)(hi - h->lo + 1);
            h->counts[(size_t)(bin - h->lo) * DBL_MAX_BUCKETS + b]++;
            h->total++;
            return;
        }
        coarsen(h);
    }
}

int64_t heatmap_col_width_s(const struct heatmap *h, int max_cols)
{
    if (h->nbins == 0 || max_cols <= 0)
        return h->width_s;
    size_t per = (h->nbins + (size_t)max_cols - 1) / (size_t)max_cols;
    return h->width_s * (int64_t)per;
}

static void bucket_label(char *buf, size_t len, const struct heatmap *h, size_t b)
{
    const struct dbl_hist *d = &h->shape;
    if (b == DBL_MAX_BUCKETS - 1)
        snprintf(buf, len, "%g..", dbl_lower(d, b));
    else
        snprintf(buf, len, "%g..%g", dbl_lower(d, b), dbl_upper(d, b));
}

uint64_t *heatmap_cells(const struct heatmap *h, int max_cols, struct heatmap_shape *sh)
{
    memset(sh, 0, sizeof *sh);
    if (h->total == 0 || max_cols <= 0)
        return NULL;
    size_t per = (h->nbins + (size_t)max_cols - 1) / (size_t)max_cols;
    size_t ncols = (h->nbins + per - 1) / per;
    uint64_t *cell = xcalloc(ncols * DBL_MAX_BUCKETS, sizeof *cell);
    size_t bmin = DBL_MAX_BUCKETS, bmax = 0;
    uint64_t maxc = 0;
    for (size_t i = 0; i < h->nbins; i++)
        for (size_t b = 0; b < DBL_MAX_BUCKETS; b++) {
            uint64_t c = h->counts[i * DBL_MAX_BUCKETS + b];
            if (!c)
                continue;
            uint64_t *x = &cell[(i / per) * DBL_MAX_BUCKETS + b];
            *x += c;
            if (*x > maxc)
                maxc = *x;
            if (b < bmin)
                bmin = b;
            if (b > bmax)
                bmax = b;
        }
    sh->ncols = ncols;
    sh->col_width_s = h->width_s * (int64_t)per;
    sh->start_s = h->lo * h->width_s;
    sh->bmin = bmin;
    sh->bmax = bmax;
    sh->max_count = maxc;
    return cell;
}

void heatmap_print(FILE *out, const struct heatmap *h, int max_cols, const char *unit)
{
    struct heatmap_shape sh;
    uint64_t *cell = heatmap_cells(h, max_cols, &sh);
    if (!cell)
        return;
    size_t ncols = sh.ncols, bmin = sh.bmin, bmax = sh.bmax;
    uint64_t maxc = sh.max_count;
    /* shade by log(count) so a handful of slow requests still shows next to thousands */
    static const char shade[] = " .:-=+*#%@";
    char label[48];
    int lw = 0;
    for (size_t b = bmin; b <= bmax; b++) {
        bucket_label(label, sizeof label, h, b);
        int l = (int)strlen(label);
        if (l > lw)
            lw = l;
    }
    for (size_t b = bmax + 1; b-- > bmin;) {
        bucket_label(label, sizeof label, h, b);
        fprintf(out, "%*s %s |", lw, label, unit);
        for (size_t c = 0; c < ncols; c++) {
            uint64_t x = cell[c * DBL_MAX_BUCKETS + b];
            int lvl = 0;
            if (x > 0)
                lvl = maxc <= 1 ? 9 : 1 + (int)floor(8.999 * log((double)x) / log((double)maxc));
            fputc(shade[lvl], out);
        }
        fputs("|\n", out);
    }
    /* time axis: the start of the first column, the middle and the end of the last */
    int64_t colw = sh.col_width_s;
    int64_t t0 = sh.start_s;
    int64_t t1 = t0 + (int64_t)ncols * colw;
    int pad = lw + (int)strlen(unit) + 2;
    char a[32], m[32], e[32];
    snprintf(a, sizeof a, "%llds", (long long)t0);
    snprintf(m, sizeof m, "%llds", (long long)(t0 + (int64_t)(ncols / 2) * colw));
    snprintf(e, sizeof e, "%llds", (long long)t1);
    char axis[512];
    size_t w = ncols + 2 < sizeof axis - 1 ? ncols + 2 : sizeof axis - 1;
    memset(axis, ' ', w);
    axis[w] = '\0';
    size_t la = strlen(a), lm = strlen(m), le = strlen(e);
    memcpy(axis, a, la < w ? la : w);
    size_t mid = ncols / 2 + 1;
    if (mid > la + 1 && mid + lm < w - le)
        memcpy(axis + mid, m, lm);
    if (le < w && w - le > la)
        memcpy(axis + w - le, e, le);
    fprintf(out, "%*s%s\n", pad, "", axis);
    fprintf(out, "%*s(one column = %lld s; shade by count, log scale: '.' 1 ... '@' %llu)\n", pad, "", (long long)colw,
            (unsigned long long)maxc);
    free(cell);
}
