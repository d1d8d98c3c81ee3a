/* Pictures on a terminal: a compact histogram with doubling buckets and a sparkline
 * of a value per second, drawn below `knee run`'s and `knee stats`' text when their output is
 * a terminal wide enough. Never when it is a pipe or a file (the text there stays the text);
 * colour only when NO_COLOR is unset or empty and the terminal is not "dumb"; Unicode block
 * characters when the locale's charset is UTF-8, ASCII otherwise. Colour never carries
 * meaning alone: the p99's bucket is also marked in words.
 *
 *     struct termplot tp;
 *     termplot_detect(&tp, STDOUT_FILENO);
 *     if (tp.enabled) {
 *         termplot_histogram(stdout, &tp, "latency (ms) ...", &dbl, p99_ms);
 *         termplot_sparkline(stdout, &tp, "p99 per second", p99s, n, "ms");
 *     }
 *
 * Pure printing over a FILE *; no allocation beyond the stack; thread-safe. */
#ifndef KNEE_TERMPLOT_TERMPLOT_H
#define KNEE_TERMPLOT_TERMPLOT_H

#include "hist/dbl.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TERMPLOT_MIN_COLUMNS 60  /* narrower terminals get no pictures */
#define TERMPLOT_MAX_COLUMNS 160 /* wider ones are drawn this wide */

struct termplot {
    bool enabled; /* fd is a terminal at least TERMPLOT_MIN_COLUMNS wide */
    bool color;   /* ANSI colours: NO_COLOR unset or empty, TERM not "dumb" */
    bool utf8;    /* block characters (LC_ALL, LC_CTYPE or LANG says UTF-8) */
    int columns;  /* the width drawn into (at most TERMPLOT_MAX_COLUMNS) */
};

/* The environment's rules, shared with knee run --live: colour when NO_COLOR is unset or empty
 * and TERM is not "dumb"; UTF-8 when the first of LC_ALL, LC_CTYPE, LANG that is set names it. */
bool termplot_env_color(void);
bool termplot_env_utf8(void);

/* Fill *t for output on fd from isatty, the window size (TIOCGWINSZ, else $COLUMNS) and the
 * environment. */
void termplot_detect(struct termplot *t, int fd);

/* The non-empty buckets of h as horizontal bars scaled to the widest, with each bucket's
 * bounds, count and share; the bucket holding mark (the p99; NAN: none) and those above it
 * in red, the mark's row also labelled "<- p99". title is printed above (NULL: none). */
void termplot_histogram(FILE *out, const struct termplot *t, const char *title, const struct dbl_hist *h,
                        const char *unit, double mark);

/* One line: label, then one cell per value (adjacent values merged by their maximum when
 * there are more than fit), heights on a log scale between the smallest and the largest
 * positive value (linear when they are within a factor 2), a gap for a value that is NAN,
 * then the range ("1.2 .. 250 ms"). The largest cell in red. */
void termplot_sparkline(FILE *out, const struct termplot *t, const char *label, const double *v, size_t n,
                        const char *unit);

#endif
