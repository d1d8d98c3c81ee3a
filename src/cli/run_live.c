/* knee run --live on a terminal: taking the screen over and giving it back. Restoring matters
 * more than drawing: a run that ends, fails, is stopped with Ctrl-C or exits any other way
 * must leave the shell's screen as it was, so the restore is one async-signal-safe function
 * (write(2), tcsetattr) called from cli_live_finish, from atexit and around Ctrl-Z. */
#include "cli/run_live.h"

#include "core/units.h"
#include "plan/plan.h"
#include "termplot/termplot.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define ENTER_SCREEN "\033[?1049h\033[?25l\033[H\033[2J" /* alternate screen, cursor hidden, cleared */
#define LEAVE_SCREEN "\033[?25h\033[?1049l"              /* cursor shown, main screen back */

static struct cli_live *active_live; /* the one view on screen, for atexit and SIGTSTP */
static struct sigaction old_tstp;
static bool atexit_set;

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the terminal is gone: nothing more to do */
        p += w;
        n -= (size_t)w;
    }
}

/* Async-signal-safe: the screen and the echo as they were. */
static void term_leave(const struct cli_live *l)
{
    write_all(l->fd, LEAVE_SCREEN, sizeof LEAVE_SCREEN - 1);
    if (l->echo_off)
        tcsetattr(STDIN_FILENO, TCSANOW, &l->saved_tio);
}

/* Async-signal-safe: the alternate screen, and standard input without echo, so that keys typed
 * during the run do not scribble over the view. */
static void term_enter(const struct cli_live *l)
{
    if (l->echo_off) {
        struct termios t = l->saved_tio;
        t.c_lflag &= ~(tcflag_t)ECHO;
        tcsetattr(STDIN_FILENO, TCSANOW, &t);
    }
    write_all(l->fd, ENTER_SCREEN, sizeof ENTER_SCREEN - 1);
}

static void restore_at_exit(void)
{
    if (active_live)
        term_leave(active_live);
}

/* Ctrl-Z: give the terminal back, stop as the default action would, take it again on SIGCONT
 * (the next frame redraws everything). */
static void on_tstp(int sig)
{
    int saved_errno = errno;
    struct cli_live *l = active_live;
    if (l)
        term_leave(l);
    struct sigaction dfl, mine;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGTSTP, &dfl, &mine);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTSTP);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig); /* stops here until SIGCONT */
    sigaction(SIGTSTP, &mine, NULL);
    if (l)
        term_enter(l);
    errno = saved_errno;
}

int cli_live_check(const struct cmd_spec *spec, int fd)
{
    if (isatty(fd))
        return 0;
    return opt_fail(spec, "--live needs a terminal on standard output (it is a pipe or a file here); "
                          "--progress prints one line a second on stderr instead");
}

void cli_live_head(const struct run_config *cfg, struct live_head *h)
{
    const struct plan *p = &cfg->plan;
    memset(h, 0, sizeof *h);
    if (p->ntargets == 1)
        snprintf(h->title, sizeof h->title, "%s", p->targets[0].url);
    else
        snprintf(h->title, sizeof h->title, "%zu targets", p->ntargets);
    double own_rate = 0;
    uint32_t own_clients = 0;
    bool shared = false; /* a target without its own rate or clients takes a share of the plan's */
    for (size_t i = 0; i < p->ntargets; i++) {
        own_rate += p->targets[i].rate;
        own_clients += p->targets[i].connections;
        shared |= p->open_loop ? p->targets[i].rate <= 0 : p->targets[i].connections == 0;
    }
    h->open_loop = p->open_loop;
    if (p->open_loop && p->ramp) {
        h->rate = (shared ? p->ramp_from : 0) + own_rate;
        h->rate_to = (shared ? p->ramp_to : 0) + own_rate;
    } else if (p->open_loop && p->nstages) {
        double peak = 0;
        for (size_t j = 0; j < p->nstages; j++)
            peak = fmax(peak, fmax(p->stages[j].from, p->stages[j].to));
        h->rate = (shared ? peak : 0) + own_rate;
        h->nstages = p->nstages;
    } else if (p->open_loop) {
        h->rate = (shared ? p->rate : 0) + own_rate;
    } else if (p->nstages) { /* closed-loop stages: their peak of clients */
        for (size_t j = 0; j < p->nstages; j++)
            h->connections = (uint32_t)fmax(h->connections, fmax(p->stages[j].from, p->stages[j].to));
        h->nstages = p->nstages;
    } else {
        h->connections = (shared ? p->connections : 0) + own_clients;
    }
    h->total_s = (double)p->duration_ns / 1e9;
    h->requests = p->duration_ns ? 0 : p->requests;
    h->warmup_s = (double)p->warmup_ns / 1e9;
    h->lag_limit_set = cfg->lag_limit_ns > 0;
}

/* One frame: the size read again (a resized terminal is drawn to its new size), the stop state
 * from the run's handle, the whole screen in one write. */
static void draw(struct cli_live *l)
{
    struct winsize ws;
    int cols = 80, rows = 24;
    if (ioctl(l->fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
        cols = ws.ws_col;
        rows = ws.ws_row;
    }
    live_screen_resize(&l->screen, cols, rows);
    if (l->cfg->stop)
        live_view_set_stopping(l->view, run_stop_level(l->cfg->stop));
    live_view_render(l->view, &l->screen);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return;
    live_screen_write(&l->screen, f);
    fclose(f);
    write_all(l->fd, buf, len);
    free(buf);
}

/* --stages: the stage the run is in at at_s, "2/5 ramp 100 -> 1000/s (60 s)" (or "ramp 4 -> 64
 * clients"), under the
 * progress bar; no line without stages. */
static void stage_line(struct cli_live *l, double at_s)
{
    const struct plan *pl = &l->cfg->plan;
    if (!pl->nstages)
        return;
    size_t j = 0;
    while (j + 1 < pl->nstages && at_s * 1e9 >= (double)plan_stage_end_ns(pl, j))
        j++;
    const struct run_stage *st = &pl->stages[j];
    char text[96], a[32], b[32];
    double len_s = (double)st->duration_ns / 1e9;
    if (st->clients && st->from == st->to)
        snprintf(text, sizeof text, "%zu/%zu hold %.0f client%s (%.0f s)", j + 1, pl->nstages, st->from,
                 st->from == 1 ? "" : "s", len_s);
    else if (st->clients)
        snprintf(text, sizeof text, "%zu/%zu ramp %.0f -> %.0f clients (%.0f s)", j + 1, pl->nstages, st->from, st->to,
                 len_s);
    else if (st->from == st->to)
        snprintf(text, sizeof text, "%zu/%zu hold %s/s (%.0f s)", j + 1, pl->nstages,
                 units_fmt_rate(st->from, a, sizeof a), len_s);
    else
        snprintf(text, sizeof text, "%zu/%zu ramp %s -> %s/s (%.0f s)", j + 1, pl->nstages,
                 units_fmt_rate(st->from, a, sizeof a), units_fmt_rate(st->to, b, sizeof b), len_s);
    live_view_set_stage(l->view, text);
}

static void on_progress(void *ctx, const struct run_progress *p)
{
    struct cli_live *l = ctx;
    if (l->next)
        l->next(l->next_ctx, p);
    live_view_update(l->view, p);
    stage_line(l, p->start_s); /* the stage the second began in */
    draw(l);
}

void cli_live_start(struct cli_live *l, struct run_config *cfg, int fd)
{
    memset(l, 0, sizeof *l);
    l->cfg = cfg;
    l->fd = fd;
    struct live_head h;
    cli_live_head(cfg, &h);
    l->view = live_view_new(&h, termplot_env_utf8(), termplot_env_color());
    live_screen_init(&l->screen, 80, 24);
    l->echo_off = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &l->saved_tio) == 0;
    fflush(stdout); /* what was printed before stays on the main screen */
    fflush(stderr);
    active_live = l;
    if (!atexit_set)
        atexit_set = atexit(restore_at_exit) == 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tstp;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTSTP, &sa, &old_tstp);
    term_enter(l);
    l->active = true;
    draw(l);
    l->next = cfg->on_progress;
    l->next_ctx = cfg->progress_ctx;
    cfg->on_progress = on_progress;
    cfg->progress_ctx = l;
}

void cli_live_finish(struct cli_live *l)
{
    if (!l->active)
        return;
    sigaction(SIGTSTP, &old_tstp, NULL);
    term_leave(l);
    if (l->echo_off)
        tcflush(STDIN_FILENO, TCIFLUSH); /* keys typed during the run are not the shell's next command */
    active_live = NULL;
    l->active = false;
    if (l->cfg->on_progress == on_progress) {
        l->cfg->on_progress = l->next;
        l->cfg->progress_ctx = l->next_ctx;
    }
    live_screen_release(&l->screen);
    live_view_free(l->view);
    l->view = NULL;
}
