/* knee run --live: the model of the full-screen view of a run (what the run has shown so far,
 * fed once a second from run_config.on_progress) and its drawing into a screen of W x H cells
 * held as lines of text, so that a test reads exactly what a terminal would show without one.
 * The terminal itself (alternate screen, cursor, size, echo, restoring it) is cli/run_live.c's.
 *
 *     struct live_view *v = live_view_new(&head, utf8, color);
 *     struct live_screen s;
 *     live_screen_init(&s, 80, 24);
 *     ... once a second, on the thread that called run_execute:
 *     live_view_update(v, progress);
 *     live_view_render(v, &s);
 *     live_screen_write(&s, stdout);
 *     ...
 *     live_screen_release(&s);
 *     live_view_free(v);
 *
 * What it shows, top to bottom, most important first (a short terminal loses the bottom lines):
 * the plan, elapsed/total with a progress bar, the stage (--stages, when the caller set one),
 * planned/sent/completed per second (this second and the run's mean), in flight and queued, the
 * p50 and p99 of each second as sparklines, the outcomes and status codes so far, the lag
 * against its limit, the load threads' CPU and the Ctrl-C hint (or that the run is stopping).
 * Colour (ANSI, only when asked: NO_COLOR is the caller's to honour) never carries meaning
 * alone; without UTF-8 the sparklines and the bar are ASCII. Not thread-safe: one thread owns
 * a view and its screens. Allocation: live_view_new and live_screen_init only; out of memory
 * aborts (core/err.h's xcalloc). */
#ifndef KNEE_LIVE_LIVE_H
#define KNEE_LIVE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "load/run.h"

#define LIVE_HISTORY 512   /* seconds of p50/p99 kept for the sparklines (the latest shown) */
#define LIVE_STATUS_MAX 16 /* distinct status codes listed over the run; the rest are "other" */
#define LIVE_MIN_WIDTH 20  /* narrower screens are drawn this wide (and cut by the terminal) */

/* What does not change during a run (from the run's configuration). */
struct live_head {
    char title[160];      /* what is loaded: "http://127.0.0.1:8080/", "3 targets" */
    bool open_loop;       /* a rate (open loop), else clients (closed loop) */
    double rate;          /* open loop: the planned rate (/s), the start of a ramp; 0 unknown */
    double rate_to;       /* open loop with --ramp: its end (/s); 0 without */
    uint32_t connections; /* closed loop: clients */
    double total_s;       /* --duration (s); 0 when --requests bounds the run */
    uint64_t requests;    /* --requests; 0 when the duration bounds it */
    double warmup_s;      /* --warmup (s), 0 without */
    bool lag_limit_set;   /* --lag-limit was given: more than 1% of a second's sends late is over it */
    size_t nstages; /* --stages: how many (rate is then their peak; rate_to 0; closed loop: connections their peak of
                       clients) */
};

/* The run as shown so far. Fields are the view's; read them in tests, change them only through
 * the functions below. */
struct live_view {
    struct live_head head;
    bool utf8, color;
    char stage[96]; /* --stages: the stage line ("" = no line); live_view_set_stage */
    int stop_level; /* 0 running, 1 draining (Ctrl-C), 2 cancelling (Ctrl-C twice) */
    bool have;      /* a second has been merged */
    struct run_progress last;
    /* the run so far (warm-up included) */
    double elapsed_s;
    uint64_t planned, sent, completed;
    uint64_t outcome[OUTCOME_COUNT];
    struct run_progress_status status[LIVE_STATUS_MAX]; /* sorted by code */
    uint64_t status_other;
    uint64_t late;
    double lag_max_ms; /* the largest lag of any second so far; NAN before a send */
    /* p50/p99 of each second, the latest LIVE_HISTORY: second i at [i % LIVE_HISTORY] */
    double p50_ms[LIVE_HISTORY], p99_ms[LIVE_HISTORY];
    size_t nseconds;
};

/* A new view (free with live_view_free). utf8: block characters, else ASCII; color: ANSI SGR
 * codes, else none at all. Never NULL. */
struct live_view *live_view_new(const struct live_head *head, bool utf8, bool color);
/* NULL is a no-op. */
void live_view_free(struct live_view *v);

/* Add one merged second (run_progress_fn's p; the engine's seconds come in order). */
void live_view_update(struct live_view *v, const struct run_progress *p);

/* The stage line (--stages): text shown as "stage <text>" under the progress bar; NULL or ""
 * removes the line. Copied (cut at sizeof stage - 1 bytes, on a character boundary). */
void live_view_set_stage(struct live_view *v, const char *text);

/* The stop state for the footer: 0 running, 1 draining, 2 cancelling (run_stop_level). */
void live_view_set_stopping(struct live_view *v, int level);

/* A screen of width x height cells as lines of bytes: UTF-8 text and, with colour, SGR escape
 * codes; line i takes cols[i] cells (never more than width). */
struct live_screen {
    int width, height;
    size_t cap;  /* bytes per line, NUL included */
    char **line; /* height lines, NUL-terminated */
    int *cols;   /* cells each line takes */
};

/* Allocate a screen (width at least LIVE_MIN_WIDTH, height at least 1: smaller are raised). */
void live_screen_init(struct live_screen *s, int width, int height);
/* Resize (reallocates when the size changes; contents are cleared). */
void live_screen_resize(struct live_screen *s, int width, int height);
void live_screen_release(struct live_screen *s);

/* Draw v into s: every line from the top, lines past the content empty. */
void live_view_render(const struct live_view *v, struct live_screen *s);

/* The screen to a terminal: each line at its row (CSI row;1 H), the rest of the row erased
 * where the line is shorter than the screen; no newline, so the terminal never scrolls.
 * Returns what fwrite/fflush report: 0, or -1 with errno. */
int live_screen_write(const struct live_screen *s, FILE *out);

#endif
