/* The live view's model (the run so far, from one merged second at a time) and its drawing into
 * a screen of lines. Every line goes through one writer (struct lw) that counts display cells, so
 * no line is ever wider than the screen, a cut never splits a UTF-8 character or an escape code,
 * and a styled line always ends with a reset. */
#include "live/live.h"

#include "core/err.h"
#include "core/units.h"
#include "reqlog/reqlog.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SGR_RESET "\033[0m"
#define SGR_BOLD "\033[1m"
#define SGR_DIM "\033[2m"
#define SGR_REVERSE "\033[7m"
#define SGR_RED "\033[31m"
#define SGR_GREEN "\033[32m"
#define SGR_YELLOW "\033[33m"

/* ------------------------------------------------------------------ the model */

struct live_view *live_view_new(const struct live_head *head, bool utf8, bool color)
{
    struct live_view *v = xcalloc(1, sizeof *v);
    v->head = *head;
    v->head.title[sizeof v->head.title - 1] = '\0';
    v->utf8 = utf8;
    v->color = color;
    v->lag_max_ms = NAN;
    return v;
}

void live_view_free(struct live_view *v)
{
    free(v);
}

/* n responses with `code` into the run's list, kept sorted by code. */
static void add_status(struct live_view *v, uint16_t code, uint64_t n)
{
    size_t i = 0;
    while (i < LIVE_STATUS_MAX && v->status[i].code && v->status[i].code < code)
        i++;
    if (i < LIVE_STATUS_MAX && v->status[i].code == code) {
        v->status[i].count += n;
        return;
    }
    if (i == LIVE_STATUS_MAX || v->status[LIVE_STATUS_MAX - 1].code) { /* full: a code past the list */
        v->status_other += n;
        return;
    }
    memmove(&v->status[i + 1], &v->status[i], (LIVE_STATUS_MAX - 1 - i) * sizeof v->status[0]);
    v->status[i].code = code;
    v->status[i].count = n;
}

void live_view_update(struct live_view *v, const struct run_progress *p)
{
    v->have = true;
    v->last = *p;
    v->elapsed_s = p->elapsed_s;
    v->planned += p->planned;
    v->sent += p->sent;
    v->completed += p->completed;
    for (size_t i = 0; i < OUTCOME_COUNT; i++)
        v->outcome[i] += p->outcome[i];
    for (size_t i = 0; i < RUN_PROGRESS_STATUS_MAX && p->status[i].code; i++)
        add_status(v, p->status[i].code, p->status[i].count);
    v->status_other += p->status_other;
    v->late += p->late;
    if (isfinite(p->lag_max_ms) && !(p->lag_max_ms <= v->lag_max_ms))
        v->lag_max_ms = p->lag_max_ms;
    v->p50_ms[v->nseconds % LIVE_HISTORY] = p->p50_ms;
    v->p99_ms[v->nseconds % LIVE_HISTORY] = p->p99_ms;
    v->nseconds++;
}

/* Copy at most cap - 1 bytes of s, cut on a character boundary. */
static void copy_text(char *dst, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) /* s[n] continues a character: cut before it */
            n--;
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
}

void live_view_set_stage(struct live_view *v, const char *text)
{
    copy_text(v->stage, sizeof v->stage, text ? text : "");
}

void live_view_set_stopping(struct live_view *v, int level)
{
    v->stop_level = level;
}

/* ------------------------------------------------------------------ the screen */

void live_screen_init(struct live_screen *s, int width, int height)
{
    memset(s, 0, sizeof *s);
    live_screen_resize(s, width, height);
}

void live_screen_release(struct live_screen *s)
{
    for (int i = 0; s->line && i < s->height; i++)
        free(s->line[i]);
    free(s->line);
    free(s->cols);
    memset(s, 0, sizeof *s);
}

void live_screen_resize(struct live_screen *s, int width, int height)
{
    width = width < LIVE_MIN_WIDTH ? LIVE_MIN_WIDTH : width;
    height = height < 1 ? 1 : height;
    if (s->line && s->width == width && s->height == height)
        return;
    live_screen_release(s);
    s->width = width;
    s->height = height;
    /* a cell takes at most 4 bytes of UTF-8; the escape codes of a line fit in the rest */
    s->cap = (size_t)width * 4 + 128;
    s->line = xcalloc((unsigned long)height, sizeof *s->line);
    s->cols = xcalloc((unsigned long)height, sizeof *s->cols);
    for (int i = 0; i < height; i++)
        s->line[i] = xcalloc(1, s->cap);
}

int live_screen_write(const struct live_screen *s, FILE *out)
{
    for (int i = 0; i < s->height; i++) {
        fprintf(out, "\033[%d;1H%s", i + 1, s->line[i]);
        if (s->cols[i] < s->width)
            fputs("\033[K", out);
    }
    return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

/* ------------------------------------------------------------------ one line */

/* The writer of one line: text is counted in cells (a UTF-8 character is one), escape codes
 * in none; once the line is full, everything after is dropped. */
struct lw {
    char *buf;
    size_t cap, len;
    int col, width;
    bool color, styled, full;
};

#define LW_RESERVE (sizeof SGR_RESET) /* room kept for the closing reset and the NUL */

static void lw_put(struct lw *w, const char *s)
{
    if (!w->buf)
        return; /* a row below the screen */
    while (*s && !w->full) {
        unsigned char c = (unsigned char)*s;
        size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        size_t have = 1;
        while (have < n && ((unsigned char)s[have] & 0xC0) == 0x80)
            have++;
        if (w->col >= w->width || w->len + have + LW_RESERVE > w->cap) {
            w->full = true;
            break;
        }
        if (c < 0x20 || c == 0x7f || (c >= 0x80 && (have != n || c < 0xC0))) /* control or broken */
            w->buf[w->len++] = '?';
        else {
            memcpy(w->buf + w->len, s, have);
            w->len += have;
        }
        w->col++;
        s += have;
    }
    w->buf[w->len] = '\0';
}

static void lw_printf(struct lw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lw_printf(struct lw *w, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    lw_put(w, tmp);
}

/* An SGR code (only with colour; dropped once the line is full). */
static void lw_style(struct lw *w, const char *code)
{
    size_t n = strlen(code);
    if (!w->color || w->full || w->len + n + LW_RESERVE > w->cap)
        return;
    memcpy(w->buf + w->len, code, n + 1);
    w->len += n;
    w->styled = strcmp(code, SGR_RESET) != 0;
}

/* Spaces up to cell `col` (nothing when the line is already there). */
static void lw_pad(struct lw *w, int col)
{
    while (w->col < col && !w->full)
        lw_put(w, " ");
}

/* The screen's next line. */
struct canvas {
    struct live_screen *s;
    int row, limit; /* the next row; rows from limit on are not drawn */
    bool color;
};

static struct lw lw_begin(struct canvas *cv)
{
    struct lw w = {.width = cv->s->width, .color = cv->color, .cap = cv->s->cap};
    w.buf = cv->row < cv->limit ? cv->s->line[cv->row] : NULL;
    w.full = w.buf == NULL; /* past the bottom: nothing is kept */
    if (w.buf)
        w.buf[0] = '\0';
    return w;
}

static void lw_end(struct canvas *cv, struct lw *w)
{
    if (w->buf) {
        if (w->styled) { /* LW_RESERVE kept the room */
            memcpy(w->buf + w->len, SGR_RESET, sizeof SGR_RESET);
            w->len += sizeof SGR_RESET - 1;
        }
        cv->s->cols[cv->row] = w->col;
    }
    cv->row++;
}

static void blank_line(struct canvas *cv)
{
    struct lw w = lw_begin(cv);
    lw_end(cv, &w);
}

/* ------------------------------------------------------------------ numbers */

/* A count per second, rounded: "1,000". */
static const char *per_s(double rate, char *buf, size_t len)
{
    if (!isfinite(rate) || rate < 0)
        return snprintf(buf, len, "-"), buf;
    return units_fmt_count((uint64_t)llround(rate), buf, len);
}

/* A latency in ms with 3 significant digits or so: "0.212", "4.10", "12.3", "250". */
static const char *ms_short(double ms, char *buf, size_t len)
{
    if (!isfinite(ms))
        snprintf(buf, len, "-");
    else if (ms >= 100)
        snprintf(buf, len, "%.0f", ms);
    else if (ms >= 10)
        snprintf(buf, len, "%.1f", ms);
    else if (ms >= 1)
        snprintf(buf, len, "%.2f", ms);
    else
        snprintf(buf, len, "%.3f", ms);
    return buf;
}

/* ------------------------------------------------------------------ the lines */

static void title_line(struct canvas *cv, const struct live_view *v)
{
    const struct live_head *h = &v->head;
    char a[32], b[32], load[96], bound[48] = "";
    if (h->open_loop && h->nstages)
        snprintf(load, sizeof load, "open loop, %zu stage%s up to %s/s", h->nstages, h->nstages == 1 ? "" : "s",
                 per_s(h->rate, a, sizeof a));
    else if (h->open_loop && h->rate_to > 0)
        snprintf(load, sizeof load, "open loop %s -> %s/s", per_s(h->rate, a, sizeof a),
                 per_s(h->rate_to, b, sizeof b));
    else if (h->open_loop)
        snprintf(load, sizeof load, "open loop %s/s", per_s(h->rate, a, sizeof a));
    else if (h->nstages) /* closed-loop stages: connections is their peak */
        snprintf(load, sizeof load, "closed loop, %zu stage%s up to %u client%s", h->nstages,
                 h->nstages == 1 ? "" : "s", h->connections, h->connections == 1 ? "" : "s");
    else
        snprintf(load, sizeof load, "closed loop, %u client%s", h->connections, h->connections == 1 ? "" : "s");
    if (h->total_s > 0)
        snprintf(bound, sizeof bound, " for %s", units_fmt_seconds(h->total_s, 4, a, sizeof a));
    else if (h->requests)
        snprintf(bound, sizeof bound, ", %s requests", units_fmt_count(h->requests, a, sizeof a));
    struct lw w = lw_begin(cv);
    lw_style(&w, SGR_REVERSE);
    lw_printf(&w, " knee run --live  %s%s  %s ", load, bound, h->title); /* a long URL is cut, not the load */
    if (w.color)
        lw_pad(&w, w.width); /* the bar across the screen */
    lw_end(cv, &w);
}

/* The share of the run done: by time, or by requests ended with --requests; NAN unknown. */
static double done_share(const struct live_view *v)
{
    double f = NAN;
    if (v->head.total_s > 0)
        f = v->elapsed_s / v->head.total_s;
    else if (v->head.requests) {
        uint64_t ended = 0;
        for (size_t i = 0; i < OUTCOME_COUNT; i++)
            ended += v->outcome[i];
        f = (double)ended / (double)v->head.requests;
    }
    return f > 1 ? 1 : f;
}

static void progress_line(struct canvas *cv, const struct live_view *v)
{
    char b[32], text[96];
    double f = done_share(v);
    int n = snprintf(text, sizeof text, "%.0fs", v->elapsed_s);
    if (v->head.total_s > 0)
        n += snprintf(text + n, sizeof text - (size_t)n, " / %s", units_fmt_seconds(v->head.total_s, 4, b, sizeof b));
    if (isfinite(f))
        snprintf(text + n, sizeof text - (size_t)n, "  %.0f%%", 100 * f);
    struct lw w = lw_begin(cv);
    int room = w.width - (int)strlen(text) - 4 - (v->last.warmup ? 9 : 0); /* "[", "]", 2 spaces */
    if (isfinite(f) && room >= 10) {
        int bar = room > 60 ? 60 : room;
        int fill = (int)lround(f * bar);
        lw_put(&w, "[");
        lw_style(&w, SGR_GREEN);
        for (int i = 0; i < fill; i++)
            lw_put(&w, v->utf8 ? "\u2588" : "#");
        lw_style(&w, SGR_RESET);
        for (int i = fill; i < bar; i++)
            lw_put(&w, v->utf8 ? "\u2591" : ".");
        lw_put(&w, "]  ");
    }
    lw_put(&w, text);
    if (v->last.warmup) {
        lw_style(&w, SGR_YELLOW);
        lw_put(&w, "  warm-up");
        lw_style(&w, SGR_RESET);
    }
    lw_end(cv, &w);
}

static void stage_line(struct canvas *cv, const struct live_view *v)
{
    if (!v->stage[0])
        return; /* the line exists only with --stages */
    struct lw w = lw_begin(cv);
    lw_style(&w, SGR_BOLD);
    lw_printf(&w, "stage %s", v->stage);
    lw_end(cv, &w);
}

#define COL_LABEL 13 /* the label column of the rate table */
#define COL_NUM 11   /* each number's column */

static void rate_row(struct canvas *cv, const char *label, const double *vals, size_t n)
{
    struct lw w = lw_begin(cv);
    lw_put(&w, label);
    for (size_t i = 0; i < n; i++) {
        char a[32];
        per_s(vals[i], a, sizeof a);
        lw_pad(&w, COL_LABEL + (int)(i + 1) * COL_NUM - (int)strlen(a));
        lw_put(&w, a);
    }
    lw_end(cv, &w);
}

static void rate_lines(struct canvas *cv, const struct live_view *v)
{
    const struct run_progress *p = &v->last;
    struct lw w = lw_begin(cv);
    lw_style(&w, SGR_BOLD);
    lw_put(&w, "per second");
    static const char *const heads[] = {"planned", "sent", "completed", "in flight", "queued"};
    for (int i = 0; i < 5; i++) {
        lw_pad(&w, COL_LABEL + (i + 1) * COL_NUM - (int)strlen(heads[i]));
        lw_put(&w, heads[i]);
    }
    lw_end(cv, &w);
    double len = p->length_s > 0 ? p->length_s : 1;
    double now[5] = {(double)p->planned / len, (double)p->sent / len, (double)p->completed / len, (double)p->in_flight,
                     (double)p->queued};
    rate_row(cv, "this second", now, 5);
    double t = v->elapsed_s > 0 ? v->elapsed_s : 1;
    double mean[3] = {(double)v->planned / t, (double)v->sent / t, (double)v->completed / t};
    rate_row(cv, "run mean", mean, 3);
}

/* The cell of value x among [lo, hi]: a level 0..7, on a log scale when hi > 2 lo. */
static int spark_level(double x, double lo, double hi)
{
    if (!(hi > lo))
        return 0;
    double f = hi > 2 * lo && lo > 0 ? log(x / lo) / log(hi / lo) : (x - lo) / (hi - lo);
    long k = lround(f * 7);
    return k < 0 ? 0 : k > 7 ? 7 : (int)k;
}

/* "  p50 ▁▂▁▇  0.180 .. 4.10 ms": the latest seconds that fit, one cell each. */
static void spark_line(struct canvas *cv, const struct live_view *v, const char *label, const double *ring)
{
    static const char *const blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                         "\u2585", "\u2586", "\u2587", "\u2588"};
    static const char ascii[] = "_.:-=+*#";
    struct lw w = lw_begin(cv);
    lw_printf(&w, "  %s ", label);
    size_t have = v->nseconds < LIVE_HISTORY ? v->nseconds : LIVE_HISTORY;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < have; i++) /* the scale: every second kept, so it does not jump as they scroll */
        if (isfinite(ring[i]) && ring[i] > 0) {
            lo = ring[i] < lo ? ring[i] : lo;
            hi = ring[i] > hi ? ring[i] : hi;
        }
    char a[32], b[32], range[80] = "";
    if (hi >= lo)
        snprintf(range, sizeof range, "  %s .. %s ms", ms_short(lo, a, sizeof a), ms_short(hi, b, sizeof b));
    int room = w.width - w.col - (int)strlen(range);
    if (room < 8) { /* too narrow for the range: the cells alone */
        range[0] = '\0';
        room = w.width - w.col;
    }
    size_t cells = room > 0 ? (size_t)room : 0;
    size_t k = have < cells ? have : cells;
    for (size_t i = v->nseconds - k; i < v->nseconds; i++) {
        double x = ring[i % LIVE_HISTORY];
        if (!(isfinite(x) && x > 0))
            lw_put(&w, " ");
        else if (v->utf8)
            lw_put(&w, blocks[spark_level(x, lo, hi)]);
        else
            lw_printf(&w, "%c", ascii[spark_level(x, lo, hi)]);
    }
    lw_style(&w, SGR_DIM);
    lw_put(&w, range);
    lw_style(&w, SGR_RESET);
    lw_end(cv, &w);
}

static void latency_lines(struct canvas *cv, const struct live_view *v)
{
    char a[32], b[32];
    struct lw w = lw_begin(cv);
    lw_style(&w, SGR_BOLD);
    lw_put(&w, "latency ms");
    lw_style(&w, SGR_RESET);
    lw_pad(&w, COL_LABEL);
    lw_printf(&w, "p50 %s  p99 %s  this second", units_fmt_ms(v->last.p50_ms, a, sizeof a),
              units_fmt_ms(v->last.p99_ms, b, sizeof b));
    lw_end(cv, &w);
    spark_line(cv, v, "p50", v->p50_ms);
    spark_line(cv, v, "p99", v->p99_ms);
}

static void outcome_line(struct canvas *cv, const struct live_view *v)
{
    char a[32];
    struct lw w = lw_begin(cv);
    lw_put(&w, "outcomes");
    lw_pad(&w, COL_LABEL);
    lw_printf(&w, "ok %s", units_fmt_count(v->outcome[OUTCOME_OK], a, sizeof a));
    bool errors = false;
    for (int o = OUTCOME_OK + 1; o < OUTCOME_COUNT; o++) {
        if (!v->outcome[o])
            continue;
        errors = true;
        lw_put(&w, "  ");
        lw_style(&w, SGR_RED);
        lw_printf(&w, "%s %s", reqlog_outcome_name((enum reqlog_outcome)o),
                  units_fmt_count(v->outcome[o], a, sizeof a));
        lw_style(&w, SGR_RESET);
    }
    if (!errors)
        lw_put(&w, "  no errors");
    lw_end(cv, &w);
}

static void status_line(struct canvas *cv, const struct live_view *v)
{
    char a[32];
    struct lw w = lw_begin(cv);
    lw_put(&w, "status");
    lw_pad(&w, COL_LABEL);
    if (!v->status[0].code && !v->status_other)
        lw_put(&w, "no response yet");
    for (size_t i = 0; i < LIVE_STATUS_MAX && v->status[i].code; i++) {
        bool bad = v->status[i].code >= 400;
        lw_put(&w, i ? "  " : "");
        lw_style(&w, bad ? SGR_RED : SGR_RESET);
        lw_printf(&w, "%u: %s", v->status[i].code, units_fmt_count(v->status[i].count, a, sizeof a));
        lw_style(&w, SGR_RESET);
    }
    if (v->status_other)
        lw_printf(&w, "  other: %s", units_fmt_count(v->status_other, a, sizeof a));
    lw_end(cv, &w);
}

/* The lag line: the second's largest lag, the sends later than the limit (this second and the
 * run's), the limit. With --lag-limit, more than 1% of a second's sends late means that
 * second's lag p99 is over it, the summary's GENERATOR-LIMITED test. */
static void lag_line(struct canvas *cv, const struct live_view *v)
{
    const struct run_progress *p = &v->last;
    char a[32], b[32], c[32], d[32];
    struct lw w = lw_begin(cv);
    lw_put(&w, "lag");
    lw_pad(&w, COL_LABEL);
    bool over = p->sent && (double)p->late > 0.01 * (double)p->sent;
    lw_printf(&w, "max %s ms, late %s (run %s) against %s ms", ms_short(p->lag_max_ms, a, sizeof a),
              units_fmt_count(p->late, b, sizeof b), units_fmt_count(v->late, c, sizeof c),
              ms_short(p->lag_limit_ms, d, sizeof d));
    if (over) {
        lw_style(&w, v->head.lag_limit_set ? SGR_RED : SGR_YELLOW);
        lw_put(&w, v->head.lag_limit_set ? "  p99 over --lag-limit" : "  >1% late");
        lw_style(&w, SGR_RESET);
    }
    lw_end(cv, &w);
}

static void cpu_line(struct canvas *cv, const struct live_view *v)
{
    const struct run_progress *p = &v->last;
    struct lw w = lw_begin(cv);
    lw_put(&w, "generator");
    lw_pad(&w, COL_LABEL);
    lw_printf(&w, "CPU %.2f cores on %u thread%s, busiest %.0f%%", p->cpu_cores, p->threads, p->threads == 1 ? "" : "s",
              100 * p->cpu_busiest);
    if (p->cpu_busiest >= 0.9) { /* a load thread near a full core cannot keep a schedule */
        lw_style(&w, SGR_RED);
        lw_put(&w, "  busy");
        lw_style(&w, SGR_RESET);
    }
    lw_end(cv, &w);
}

static void footer_line(struct canvas *cv, const struct live_view *v)
{
    struct lw w = lw_begin(cv);
    if (v->stop_level >= 2) {
        lw_style(&w, SGR_YELLOW);
        lw_put(&w, "stopping: cancelling the requests in flight");
    } else if (v->stop_level == 1) {
        lw_style(&w, SGR_YELLOW);
        lw_put(&w, "stopping: draining the requests in flight (Ctrl-C again cancels them)");
    } else {
        lw_style(&w, SGR_DIM);
        lw_put(&w, "Ctrl-C stops planning and drains; twice cancels what is in flight");
    }
    lw_end(cv, &w);
}

void live_view_render(const struct live_view *v, struct live_screen *s)
{
    for (int i = 0; i < s->height; i++) {
        s->line[i][0] = '\0';
        s->cols[i] = 0;
    }
    /* the footer keeps the last row when the rest does not fit: "stopping" must be seen */
    struct canvas cv = {.s = s, .limit = s->height - 1, .color = v->color};
    title_line(&cv, v);
    progress_line(&cv, v);
    stage_line(&cv, v);
    blank_line(&cv);
    if (!v->have) {
        struct lw w = lw_begin(&cv);
        lw_put(&w, "waiting for the first second of the run ...");
        lw_end(&cv, &w);
    } else {
        rate_lines(&cv, v);
        blank_line(&cv);
        latency_lines(&cv, v);
        blank_line(&cv);
        outcome_line(&cv, v);
        status_line(&cv, v);
        lag_line(&cv, v);
        cpu_line(&cv, v);
    }
    cv.row = cv.row + 1 < s->height - 1 ? cv.row + 1 : s->height - 1; /* after a blank line */
    cv.limit = s->height;
    footer_line(&cv, v);
}
