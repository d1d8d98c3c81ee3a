/* Unit tests for src/live (knee run --live's view) and cli/run_live.c: fixed seconds give exact
 * lines; no escape code without colour; every line within the screen's width at any width, cut
 * on a character boundary and reset when styled; the footer keeps the last row; the stage line
 * only when set; status codes merged and sorted; the progress by requests; the head from a
 * run_config; and on a pseudo-terminal, the screen taken and given back around the frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/run_live.h"
#include "core/units.h"
#include "live/live.h"

#include <fcntl.h>
#include <math.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static struct live_head head_open(void)
{
    struct live_head h = {.open_loop = true, .rate = 1000, .total_s = 30};
    snprintf(h.title, sizeof h.title, "http://127.0.0.1:8080/");
    return h;
}

/* Second k of a steady run at 1,000/s: p50 0.2 ms, p99 1 ms (5 ms in second 2), one 503 a second. */
static struct run_progress second(int k)
{
    struct run_progress p = {
        .elapsed_s = k + 1,
        .total_s = 30,
        .start_s = k,
        .length_s = 1,
        .planned = 1000,
        .sent = 1000,
        .completed = 998,
        .ok = 997,
        .errors = 1,
        .in_flight = 2,
        .queued = 0,
        .p50_ms = 0.2,
        .p99_ms = k == 2 ? 5.0 : 1.0,
        .late = 0,
        .lag_max_ms = 0.05,
        .lag_limit_ms = 1,
        .cpu_cores = 0.25,
        .cpu_busiest = 0.125,
        .threads = 2,
    };
    p.outcome[OUTCOME_OK] = 997;
    p.outcome[OUTCOME_HTTP_ERROR] = 1;
    p.status[0] = (struct run_progress_status){.code = 200, .count = 997};
    p.status[1] = (struct run_progress_status){.code = 503, .count = 1};
    return p;
}

static void dump(const struct live_screen *s)
{
    for (int i = 0; i < s->height; i++)
        fprintf(stderr, "%2d |%s|\n", i, s->line[i]);
}

static void assert_line(const struct live_screen *s, int row, const char *want)
{
    if (strcmp(s->line[row], want) != 0) {
        dump(s);
        fail_msg("row %d:\n  got  |%s|\n  want |%s|", row, s->line[row], want);
    }
}

/* The text of a line without its escape codes. */
static void strip(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < cap; p++) {
        if (*p == '\033') {
            while (*p && *p != 'm')
                p++;
            if (!*p)
                break;
            continue;
        }
        out[n++] = *p;
    }
    out[n] = '\0';
}

/* A line with escape codes ends unstyled: its last code is the reset. */
static void assert_reset(const char *line)
{
    const char *last = strrchr(line, '\033');
    if (last && strncmp(last, "\033[0m", 4) != 0)
        fail_msg("the line ends styled: %s", line);
}

/* Well-formed UTF-8 (no character cut in the middle). */
static bool utf8_ok(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 1 : *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : *p >= 0xC0 ? 2 : 0;
        if (!n)
            return false;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80)
                return false;
        p += n;
    }
    return true;
}

static void test_exact_lines(void **state)
{
    (void)state;
    struct live_head h = head_open();
    struct live_view *v = live_view_new(&h, false, false);
    struct live_screen s;
    live_screen_init(&s, 80, 20);
    for (int k = 0; k < 4; k++) {
        struct run_progress p = second(k);
        live_view_update(v, &p);
    }
    live_view_render(v, &s);
    assert_line(&s, 0, " knee run --live  open loop 1,000/s for 30s  http://127.0.0.1:8080/ ");
    assert_line(&s, 1, "[########....................................................]  4s / 30s  13%");
    assert_line(&s, 2, "");
    assert_line(&s, 3, "per second       planned       sent  completed  in flight     queued");
    assert_line(&s, 4, "this second        1,000      1,000        998          2          0");
    assert_line(&s, 5, "run mean           1,000      1,000        998");
    assert_line(&s, 6, "");
    assert_line(&s, 7, "latency ms   p50 0.200  p99 1.000  this second");
    assert_line(&s, 8, "  p50 ____  0.200 .. 0.200 ms");
    assert_line(&s, 9, "  p99 __#_  1.00 .. 5.00 ms");
    assert_line(&s, 10, "");
    assert_line(&s, 11, "outcomes     ok 3,988  http_error 4");
    assert_line(&s, 12, "status       200: 3,988  503: 4");
    assert_line(&s, 13, "lag          max 0.050 ms, late 0 (run 0) against 1.00 ms");
    assert_line(&s, 14, "generator    CPU 0.25 cores on 2 threads, busiest 12%");
    assert_line(&s, 15, "");
    assert_line(&s, 16, "Ctrl-C stops planning and drains; twice cancels what is in flight");
    assert_line(&s, 17, "");
    assert_line(&s, 19, "");
    for (int i = 0; i < s.height; i++)
        assert_int_equal(s.cols[i], (int)strlen(s.line[i])); /* ASCII: a byte a cell */
    live_screen_release(&s);
    live_view_free(v);
}

static void test_waiting_and_footer(void **state)
{
    (void)state;
    struct live_head h = {.open_loop = false, .connections = 8, .requests = 1000};
    snprintf(h.title, sizeof h.title, "3 targets");
    struct live_view *v = live_view_new(&h, false, false);
    struct live_screen s;
    live_screen_init(&s, 60, 10);
    live_view_render(v, &s);
    assert_line(&s, 0, " knee run --live  closed loop, 8 clients, 1,000 requests  3 "); /* cut at 60 */
    assert_line(&s, 1, "[..................................................]  0s  0%");
    assert_line(&s, 3, "waiting for the first second of the run ...");
    assert_line(&s, 5, "Ctrl-C stops planning and drains; twice cancels what is in f");
    live_view_set_stopping(v, 1);
    live_view_render(v, &s);
    assert_line(&s, 5, "stopping: draining the requests in flight (Ctrl-C again canc");
    live_view_set_stopping(v, 2);
    live_view_render(v, &s);
    assert_line(&s, 5, "stopping: cancelling the requests in flight");
    /* --requests: the share done counts the requests that ended */
    struct run_progress p = second(0);
    p.total_s = 0;
    p.outcome[OUTCOME_OK] = 97;
    p.outcome[OUTCOME_DROPPED] = 2; /* with 1 http_error: 100 of 1,000 ended */
    live_view_update(v, &p);
    live_view_render(v, &s);
    assert_line(&s, 1, "[#####............................................]  1s  10%");
    live_screen_release(&s);
    live_view_free(v);
}

/* A short terminal loses the middle, never the footer. */
static void test_short_screen(void **state)
{
    (void)state;
    struct live_head h = head_open();
    struct live_view *v = live_view_new(&h, true, true);
    struct run_progress p = second(0);
    live_view_update(v, &p);
    live_view_set_stopping(v, 1);
    struct live_screen s;
    live_screen_init(&s, 80, 6);
    live_view_render(v, &s);
    char text[512];
    strip(s.line[5], text, sizeof text);
    assert_string_equal(text, "stopping: draining the requests in flight (Ctrl-C again cancels them)");
    strip(s.line[4], text, sizeof text);
    assert_string_equal(text, "this second        1,000      1,000        998          2          0");
    live_screen_resize(&s, 80, 1);
    live_view_render(v, &s);
    strip(s.line[0], text, sizeof text);
    assert_string_equal(text, "stopping: draining the requests in flight (Ctrl-C again cancels them)");
    live_screen_release(&s);
    live_view_free(v);
}

static void test_stage_line(void **state)
{
    (void)state;
    struct live_head h = head_open();
    struct live_view *v = live_view_new(&h, false, false);
    struct live_screen s;
    live_screen_init(&s, 80, 24);
    live_view_render(v, &s);
    assert_line(&s, 2, "");
    live_view_set_stage(v, "2/3 hold 500/s");
    live_view_render(v, &s);
    assert_line(&s, 2, "stage 2/3 hold 500/s");
    assert_line(&s, 3, "");
    live_view_set_stage(v, NULL);
    live_view_render(v, &s);
    assert_line(&s, 2, "");
    /* a long stage is cut on a character boundary */
    char lng[200];
    memset(lng, 'x', sizeof lng);
    memcpy(lng + 93, "\u00e9\u00e9", 4); /* bytes 93..96: the second é straddles the cut at 95 */
    lng[199] = '\0';
    live_view_set_stage(v, lng);
    assert_int_equal(strlen(v->stage), 95);
    assert_true(utf8_ok(v->stage));
    live_screen_release(&s);
    live_view_free(v);
}

/* Without colour not one escape code; with colour each styled line ends reset. */
static void test_no_color(void **state)
{
    (void)state;
    struct live_head h = head_open();
    h.lag_limit_set = true;
    for (int color = 0; color <= 1; color++) {
        struct live_view *v = live_view_new(&h, true, color);
        for (int k = 0; k < 5; k++) {
            struct run_progress p = second(k);
            p.late = k == 4 ? 50 : 0; /* 5% late: over --lag-limit */
            p.cpu_busiest = k == 4 ? 0.95 : 0.1;
            p.warmup = k == 4;
            live_view_update(v, &p);
        }
        struct live_screen s;
        live_screen_init(&s, 100, 24);
        live_view_render(v, &s);
        int escapes = 0;
        for (int i = 0; i < s.height; i++) {
            if (strchr(s.line[i], '\033'))
                escapes++;
            assert_reset(s.line[i]);
        }
        if (color)
            assert_true(escapes >= 5);
        else
            assert_int_equal(escapes, 0);
        char text[512];
        strip(s.line[13], text, sizeof text);
        assert_string_equal(text, "lag          max 0.050 ms, late 50 (run 50) against 1.00 ms  p99 over --lag-limit");
        strip(s.line[14], text, sizeof text);
        assert_string_equal(text, "generator    CPU 0.25 cores on 2 threads, busiest 95%  busy");
        strip(s.line[1], text, sizeof text);
        assert_non_null(strstr(text, "5s / 30s  17%  warm-up"));
        live_screen_release(&s);
        live_view_free(v);
    }
}

/* Every width from the smallest: no line wider than the screen, its cells counted right, the
 * UTF-8 whole, and a styled line reset. */
static void test_narrow_widths(void **state)
{
    (void)state;
    struct live_head h = head_open();
    snprintf(h.title, sizeof h.title, "http://h\u00e9llo.example:8080/a/very/long/path/that/does/not/fit/anywhere");
    struct live_view *v = live_view_new(&h, true, true);
    for (int k = 0; k < 40; k++) {
        struct run_progress p = second(k);
        p.p99_ms = k % 7 == 0 ? NAN : 1.0 + k;
        live_view_update(v, &p);
    }
    live_view_set_stage(v, "1/2 ramp 100 -> 1,000/s over 30s");
    for (int width = 1; width <= 130; width++) {
        struct live_screen s;
        live_screen_init(&s, width, 30);
        assert_int_equal(s.width, width < LIVE_MIN_WIDTH ? LIVE_MIN_WIDTH : width);
        live_view_render(v, &s);
        for (int i = 0; i < s.height; i++) {
            char text[2048];
            strip(s.line[i], text, sizeof text);
            size_t cells = units_text_width(text, strlen(text));
            if ((int)cells != s.cols[i] || s.cols[i] > s.width || !utf8_ok(s.line[i])) {
                dump(&s);
                fail_msg("width %d row %d: %zu cells, cols %d", s.width, i, cells, s.cols[i]);
            }
            assert_reset(s.line[i]);
        }
        live_screen_release(&s);
    }
    live_view_free(v);
}

static void test_sparkline_utf8(void **state)
{
    (void)state;
    struct live_head h = head_open();
    struct live_view *v = live_view_new(&h, true, false);
    double p99[] = {1, 2, 4, 8, 16, 32, 64, 128, NAN, 1};
    for (size_t k = 0; k < sizeof p99 / sizeof p99[0]; k++) {
        struct run_progress p = second((int)k);
        p.p99_ms = p99[k];
        live_view_update(v, &p);
    }
    struct live_screen s;
    live_screen_init(&s, 80, 24);
    live_view_render(v, &s);
    /* log scale 1 .. 128 over 8 levels: each doubling one level; the missing second a gap */
    assert_line(&s, 9, "  p99 \u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588 \u2581  1.00 .. 128 ms");
    assert_int_equal(s.cols[9], 6 + 10 + 16);
    live_screen_release(&s);
    live_view_free(v);
}

/* The latest seconds that fit; the history is a ring of LIVE_HISTORY. */
static void test_sparkline_scrolls(void **state)
{
    (void)state;
    struct live_head h = head_open();
    struct live_view *v = live_view_new(&h, false, false);
    for (int k = 0; k < LIVE_HISTORY + 10; k++) {
        struct run_progress p = second(k);
        p.p99_ms = k == LIVE_HISTORY + 9 ? 2 : 1;
        live_view_update(v, &p);
    }
    assert_int_equal(v->nseconds, LIVE_HISTORY + 10);
    struct live_screen s;
    live_screen_init(&s, 40, 24);
    live_view_render(v, &s);
    assert_line(&s, 9, "  p99 ________________#  1.00 .. 2.00 ms"); /* 40 - 6 - 17: 17 cells */
    live_screen_release(&s);
    live_view_free(v);
}

static void test_status_merge(void **state)
{
    (void)state;
    struct live_head h = head_open();
    struct live_view *v = live_view_new(&h, false, false);
    struct run_progress p = {.length_s = 1, .elapsed_s = 1};
    uint16_t codes[] = {503, 200, 404};
    for (size_t i = 0; i < 3; i++)
        p.status[i] = (struct run_progress_status){.code = codes[i], .count = i + 1};
    p.status_other = 7;
    live_view_update(v, &p);
    p.status_other = 0;
    memset(p.status, 0, sizeof p.status);
    for (int i = 0; i < RUN_PROGRESS_STATUS_MAX; i++) /* 16 new codes: the list fills, the rest is other */
        p.status[i] = (struct run_progress_status){.code = (uint16_t)(210 + i), .count = 1};
    live_view_update(v, &p);
    for (int i = 0; i < RUN_PROGRESS_STATUS_MAX; i++)
        p.status[i] = (struct run_progress_status){.code = (uint16_t)(220 + i), .count = 1};
    live_view_update(v, &p);
    assert_int_equal(v->status[0].code, 200);
    assert_int_equal(v->status[0].count, 2);
    assert_int_equal(v->status[1].code, 210);
    /* 200, 404, 503 and 13 of the 16 new ones fit; 3 go to other */
    uint64_t listed = 0;
    for (int i = 0; i < LIVE_STATUS_MAX; i++) {
        assert_true(v->status[i].code != 0);
        if (i)
            assert_true(v->status[i].code > v->status[i - 1].code);
        listed += v->status[i].count;
    }
    assert_int_equal(listed + v->status_other, 1 + 2 + 3 + 7 + 16);
    assert_int_equal(v->status_other, 7 + 3);
    live_view_free(v);
}

static void test_screen_write(void **state)
{
    (void)state;
    struct live_head h = head_open();
    struct live_view *v = live_view_new(&h, false, false);
    struct live_screen s;
    live_screen_init(&s, 70, 3);
    live_view_render(v, &s);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(live_screen_write(&s, f), 0);
    fclose(f);
    /* the progress line fills the row: no erase after it (at the last column it could erase the last cell) */
    assert_string_equal(buf, "\033[1;1H knee run --live  open loop 1,000/s for 30s  http://127.0.0.1:8080/ \033[K"
                             "\033[2;1H[......................................................]  0s / 30s  0%"
                             "\033[3;1HCtrl-C stops planning and drains; twice cancels what is in flight\033[K");
    assert_null(strchr(buf, '\n'));
    free(buf);
    live_screen_release(&s);
    live_view_free(v);
}

static void test_cli_head(void **state)
{
    (void)state;
    struct plan_target t[2] = {{.name = "a", .url = "http://127.0.0.1:1/a"},
                               {.name = "b", .url = "http://127.0.0.1:1/b", .rate = 50}};
    struct run_config cfg = {0};
    cfg.plan = (struct plan){.targets = t,
                             .ntargets = 1,
                             .open_loop = true,
                             .rate = 200,
                             .duration_ns = 10000000000ULL,
                             .warmup_ns = 2000000000ULL};
    struct live_head h;
    cli_live_head(&cfg, &h);
    assert_string_equal(h.title, "http://127.0.0.1:1/a");
    assert_true(h.open_loop);
    assert_true(h.rate == 200 && h.rate_to == 0);
    assert_true(h.total_s == 10 && h.warmup_s == 2);
    assert_int_equal(h.requests, 0);
    assert_false(h.lag_limit_set);
    cfg.plan.ntargets = 2;
    cfg.plan.ramp = true;
    cfg.plan.ramp_from = 100;
    cfg.plan.ramp_to = 300;
    cfg.lag_limit_ns = 5000000;
    cli_live_head(&cfg, &h);
    assert_string_equal(h.title, "2 targets");
    assert_true(h.rate == 150 && h.rate_to == 350); /* a's share of the ramp + b's own 50/s */
    assert_true(h.lag_limit_set);
    /* --stages: the peak, and the title says stages */
    struct run_stage st[2] = {{.from = 100, .to = 100, .duration_ns = 1000000000ULL},
                              {.from = 100, .to = 400, .duration_ns = 2000000000ULL}};
    cfg.plan = (struct plan){
        .targets = t, .ntargets = 1, .open_loop = true, .stages = st, .nstages = 2, .duration_ns = 3000000000ULL};
    cli_live_head(&cfg, &h);
    assert_true(h.rate == 400 && h.rate_to == 0 && h.nstages == 2);
    struct live_view *v = live_view_new(&h, false, false);
    struct live_screen s;
    live_screen_init(&s, 80, 24);
    live_view_render(v, &s);
    assert_non_null(strstr(s.line[0], "open loop, 2 stages up to 400/s for 3s"));
    live_screen_release(&s);
    live_view_free(v);
    /* closed-loop stages: the peak of clients, and the title says stages */
    struct run_stage cs[2] = {{.from = 4, .to = 4, .duration_ns = 1000000000ULL, .clients = true},
                              {.from = 4, .to = 64, .duration_ns = 2000000000ULL, .clients = true}};
    cfg.plan = (struct plan){.targets = t, .ntargets = 1, .stages = cs, .nstages = 2, .duration_ns = 3000000000ULL};
    cli_live_head(&cfg, &h);
    assert_true(!h.open_loop && h.connections == 64 && h.nstages == 2);
    v = live_view_new(&h, false, false);
    live_screen_init(&s, 80, 24);
    live_view_render(v, &s);
    assert_non_null(strstr(s.line[0], "closed loop, 2 stages up to 64 clients for 3s"));
    live_screen_release(&s);
    live_view_free(v);
    cfg.plan = (struct plan){.targets = t, .ntargets = 1, .open_loop = false, .connections = 4, .requests = 100};
    cli_live_head(&cfg, &h);
    assert_false(h.open_loop);
    assert_int_equal(h.connections, 4);
    assert_int_equal(h.requests, 100);
    assert_true(h.total_s == 0);
}

static int chained_calls;
static void chained(void *ctx, const struct run_progress *p)
{
    (void)p;
    assert_ptr_equal(ctx, &chained_calls);
    chained_calls++;
}

/* Everything the terminal received so far (the master side, non-blocking). */
static size_t drain_pty(int master, char *buf, size_t cap, size_t len)
{
    for (;;) {
        ssize_t n = read(master, buf + len, cap - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return len;
}

/* cli/run_live.c on a pseudo-terminal: refused on a pipe, the alternate screen entered and
 * left, a frame per second at the terminal's size, the callback found there kept and put back. */
static void test_cli_live_pty(void **state)
{
    (void)state;
    struct cmd_spec spec = {.name = "run"};
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    assert_int_equal(cli_live_check(&spec, pfd[1]), 2);
    close(pfd[0]);
    close(pfd[1]);
    int master, slave;
    struct winsize ws = {.ws_row = 8, .ws_col = 40};
    assert_int_equal(openpty(&master, &slave, NULL, NULL, &ws), 0);
    fcntl(master, F_SETFL, O_NONBLOCK);
    assert_int_equal(cli_live_check(&spec, slave), 0);
    struct plan_target t = {.name = "t", .url = "http://127.0.0.1:1/"};
    struct run_config cfg = {0};
    cfg.plan = (struct plan){.targets = &t, .ntargets = 1, .open_loop = true, .rate = 10, .duration_ns = 5000000000ULL};
    cfg.on_progress = chained;
    cfg.progress_ctx = &chained_calls;
    chained_calls = 0;
    struct cli_live live;
    cli_live_start(&live, &cfg, slave);
    assert_true(cfg.on_progress != chained);
    static char out[16384];
    size_t len = drain_pty(master, out, sizeof out, 0);
    assert_non_null(strstr(out, "\033[?1049h\033[?25l")); /* the alternate screen, the cursor hidden */
    assert_non_null(strstr(out, "waiting for the first second"));
    assert_null(strstr(out, "\033[9;1H")); /* 8 rows */
    struct run_progress p = second(0);
    cfg.on_progress(cfg.progress_ctx, &p);
    assert_int_equal(chained_calls, 1);
    len = drain_pty(master, out, sizeof out, len);
    assert_non_null(strstr(out, "this second"));
    cli_live_finish(&live);
    cli_live_finish(&live); /* idempotent */
    len = drain_pty(master, out, sizeof out, len);
    assert_non_null(strstr(out, "\033[?25h\033[?1049l"));
    assert_ptr_equal(cfg.on_progress, chained);
    assert_ptr_equal(cfg.progress_ctx, &chained_calls);
    close(slave);
    close(master);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_lines),    cmocka_unit_test(test_waiting_and_footer),
        cmocka_unit_test(test_short_screen),   cmocka_unit_test(test_stage_line),
        cmocka_unit_test(test_no_color),       cmocka_unit_test(test_narrow_widths),
        cmocka_unit_test(test_sparkline_utf8), cmocka_unit_test(test_sparkline_scrolls),
        cmocka_unit_test(test_status_merge),   cmocka_unit_test(test_screen_write),
        cmocka_unit_test(test_cli_head),       cmocka_unit_test(test_cli_live_pty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
