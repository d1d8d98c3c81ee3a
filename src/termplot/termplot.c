/* Terminal pictures: bars of eighth blocks and a sparkline of eight levels (U+2581..U+2588),
 * or '#' and " .:-=+*#" where the locale is not UTF-8. */
#include "termplot/termplot.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define RED "\033[31m"
#define CYAN "\033[36m"
#define DIM "\033[2m"
#define RESET "\033[0m"

bool termplot_env_utf8(void)
{
    static const char *const vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) /* the first that is set decides, as setlocale does */
            return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
    }
    return false;
}

bool termplot_env_color(void)
{
    const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
    return !(nc && *nc) && !(term && strcmp(term, "dumb") == 0);
}

void termplot_detect(struct termplot *t, int fd)
{
    memset(t, 0, sizeof *t);
    if (!isatty(fd))
        return;
    struct winsize ws;
    int cols = 0;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        cols = ws.ws_col;
    else if (getenv("COLUMNS"))
        cols = atoi(getenv("COLUMNS"));
    if (cols < TERMPLOT_MIN_COLUMNS)
        return;
    t->enabled = true;
    t->columns = cols > TERMPLOT_MAX_COLUMNS ? TERMPLOT_MAX_COLUMNS : cols;
    t->color = termplot_env_color();
    t->utf8 = termplot_env_utf8();
}

/* A bound for a label: up to 4 significant digits, no exponent for the usual range. */
static void bound(char *buf, size_t len, double v)
{
    if (v == 0)
        snprintf(buf, len, "0");
    else if (v >= 100000)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.4g", v);
}

static const char *const eighths[] = {"", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589"};

/* A bar of len/8 characters (len in eighths). */
static void bar(FILE *out, const struct termplot *t, long eighths_len)
{
    if (!t->utf8) {
        for (long k = 0; k < (eighths_len + 4) / 8; k++)
            fputc('#', out);
        return;
    }
    for (long k = 0; k < eighths_len / 8; k++)
        fputs("\u2588", out);
    fputs(eighths[eighths_len % 8], out);
}

void termplot_histogram(FILE *out, const struct termplot *t, const char *title, const struct dbl_hist *h,
                        const char *unit, double mark)
{
    size_t first = DBL_MAX_BUCKETS, last = 0;
    uint64_t max = 0;
    for (size_t i = 0; i < DBL_MAX_BUCKETS; i++)
        if (h->counts[i]) {
            first = first == DBL_MAX_BUCKETS ? i : first;
            last = i;
            max = h->counts[i] > max ? h->counts[i] : max;
        }
    if (first == DBL_MAX_BUCKETS)
        return;
    size_t marked = isfinite(mark) ? dbl_bucket_of(h, mark) : DBL_MAX_BUCKETS;
    char label[DBL_MAX_BUCKETS][48];
    int lw = 0, cw = 1;
    for (size_t i = first; i <= last; i++) {
        char lo[24], hi[24];
        bound(lo, sizeof lo, dbl_lower(h, i));
        bound(hi, sizeof hi, dbl_upper(h, i));
        int n = isinf(dbl_upper(h, i)) ? snprintf(label[i], sizeof label[i], "%s..", lo)
                                       : snprintf(label[i], sizeof label[i], "%s..%s", lo, hi);
        lw = n > lw ? n : lw;
        char c[32];
        n = snprintf(c, sizeof c, "%llu", (unsigned long long)h->counts[i]);
        cw = n > cw ? n : cw;
    }
    /* "  lo..hi ms  count  12.3%  bar <- p99" */
    int width = t->columns - (2 + lw + 1 + (int)strlen(unit) + 2 + cw + 2 + 6 + 1 + 8);
    if (width < 10)
        width = 10;
    if (title)
        fprintf(out, "\n%s\n", title);
    for (size_t i = first; i <= last; i++) {
        uint64_t c = h->counts[i];
        long len = (long)((double)c * 8 * width / (double)max + 0.5);
        if (c && len == 0)
            len = 1;
        bool hot = marked != DBL_MAX_BUCKETS && i >= marked;
        fprintf(out, "  %*s %s  %*llu  %5.1f%% ", lw, label[i], unit, cw, (unsigned long long)c,
                h->total ? 100.0 * (double)c / (double)h->total : 0.0);
        if (t->color && len)
            fputs(hot ? RED : CYAN, out);
        bar(out, t, len);
        if (t->color && len)
            fputs(RESET, out);
        if (i == marked)
            fputs(" <- p99", out);
        fputc('\n', out);
    }
}

void termplot_sparkline(FILE *out, const struct termplot *t, const char *label, const double *v, size_t n,
                        const char *unit)
{
    char rng[96];
    int lw = (int)strlen(label);
    int width = t->columns - (2 + lw + 2 + 2 + 50); /* the range and the merge note after it */
    if (width < 10 || n == 0)
        return;
    /* merge adjacent values by their maximum until they fit */
    size_t per = (n + (size_t)width - 1) / (size_t)width;
    size_t cells = (n + per - 1) / per;
    double cell[TERMPLOT_MAX_COLUMNS];
    double lo = INFINITY, hi = -INFINITY;
    for (size_t c = 0; c < cells; c++) {
        cell[c] = NAN;
        for (size_t i = c * per; i < n && i < (c + 1) * per; i++)
            if (isfinite(v[i]) && (!isfinite(cell[c]) || v[i] > cell[c]))
                cell[c] = v[i];
        if (isfinite(cell[c]) && cell[c] > 0) {
            lo = cell[c] < lo ? cell[c] : lo;
            hi = cell[c] > hi ? cell[c] : hi;
        }
    }
    if (!isfinite(lo))
        return;
    bool logscale = hi > 2 * lo;
    char a[24], b[24];
    bound(a, sizeof a, lo);
    bound(b, sizeof b, hi);
    if (hi == lo)
        snprintf(rng, sizeof rng, "all %s %s", a, unit);
    else
        snprintf(rng, sizeof rng, "%s .. %s %s%s", a, b, unit, logscale ? " (log)" : "");
    static const char *const blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                         "\u2585", "\u2586", "\u2587", "\u2588"};
    static const char ascii[] = ".:-=+*#@";
    fprintf(out, "  %s  ", label);
    for (size_t c = 0; c < cells; c++) {
        if (!isfinite(cell[c]) || cell[c] <= 0) {
            fputc(' ', out);
            continue;
        }
        double f = hi == lo ? 1 : logscale ? log(cell[c] / lo) / log(hi / lo) : (cell[c] - lo) / (hi - lo);
        int level = (int)lround(f * 7);
        level = level < 0 ? 0 : level > 7 ? 7 : level;
        bool top = cell[c] == hi;
        if (t->color && top)
            fputs(RED, out);
        if (t->utf8)
            fputs(blocks[level], out);
        else
            fputc(ascii[level], out);
        if (t->color && top)
            fputs(RESET, out);
    }
    fprintf(out, "  %s%s%s", t->color ? DIM : "", rng, t->color ? RESET : "");
    if (per > 1)
        fprintf(out, "%s, the largest of %zu a cell%s", t->color ? DIM : "", per, t->color ? RESET : "");
    fputc('\n', out);
}
