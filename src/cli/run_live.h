/* knee run --live: the terminal side of the live view (the view itself is src/live): the
 * check that stdout is a terminal, the alternate screen with the cursor hidden and echo off,
 * one frame per merged second from run_config.on_progress (on the thread of run_execute, never
 * a load thread), the size read again at every frame, and the terminal restored when the run
 * returns, at exit, and across Ctrl-Z. Private to src/cli.
 *
 *     if (cli_live_check(spec, STDOUT_FILENO)) return 2;     // before anything runs
 *     struct cli_live live;
 *     cli_live_start(&live, cfg, STDOUT_FILENO);            // sets cfg->on_progress
 *     run_execute(cfg, ...);                                // Ctrl-C: cfg->stop drains it
 *     cli_live_finish(&live);                               // before the summary prints
 *
 * One live view per process at a time (the restore at exit and the Ctrl-Z handler find it
 * through one static pointer). */
#ifndef KNEE_CLI_RUN_LIVE_H
#define KNEE_CLI_RUN_LIVE_H

#include <stdbool.h>
#include <termios.h>

#include "cli/opt.h"
#include "live/live.h"
#include "load/run.h"

struct cli_live {
    struct run_config *cfg;
    struct live_view *view;
    struct live_screen screen;
    int fd;        /* the terminal drawn on */
    bool active;   /* the alternate screen is on */
    bool echo_off; /* standard input's echo was turned off (saved_tio holds the old) */
    struct termios saved_tio;
    run_progress_fn *next; /* the on_progress set before (--abort-if and the like): called first */
    void *next_ctx;
};

/* 0 when --live can draw on fd; else 2 after "knee run: --live needs a terminal ..." naming
 * what to use instead. */
int cli_live_check(const struct cmd_spec *spec, int fd);

/* Take over the terminal on fd (alternate screen, cursor hidden, echo off), draw the first
 * frame, and set cfg->on_progress/progress_ctx to redraw once a second; a callback already
 * there is kept and called before each frame. The view's head comes from cfg's plan. */
void cli_live_start(struct cli_live *l, struct run_config *cfg, int fd);

/* Give the terminal back as it was (main screen, cursor, echo; typed-ahead input discarded),
 * put back the on_progress it found, and free the view. Idempotent; a zeroed struct is a no-op. */
void cli_live_finish(struct cli_live *l);

/* The view's head from a run's configuration (the title, the load model, the bounds). */
void cli_live_head(const struct run_config *cfg, struct live_head *h);

#endif
