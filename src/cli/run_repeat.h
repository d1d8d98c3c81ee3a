/* knee run's flags for comparisons: --repeat N [--settle D] --out-dir DIR (the same
 * plan N times, each repetition's log, hlog and JSON in DIR, a summary across them) and
 * --until-ci P (keep an open-loop run going until the p99's 95% interval is narrower than P%
 * of it, --duration being the cap), plus the self-checks every run gets (src/runcheck).
 * Private to src/cli; cmd_run.c adds the rows, calls cli_repeat_main for --repeat, installs
 * --until-ci around its run and calls cli_selfcheck before it prints. */
#ifndef KNEE_CLI_RUN_REPEAT_H
#define KNEE_CLI_RUN_REPEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/opt.h"
#include "cli/runopts.h"
#include "hist/hdr.h"
#include "load/run.h"

#define RUN_REPEAT_MAX 1000
#define RUN_REPEAT_NROWS 4
#define RUN_UNTIL_CI_MIN_S 1 /* --until-ci judges from the first whole second after the warm-up */

struct cli_repeat_flags {
    uint64_t repeat;    /* --repeat N; 0 = not given */
    uint64_t settle_ns; /* --settle D: idle time between repetitions */
    const char *out_dir;
    double until_ci;  /* --until-ci P as a fraction; 0 = not given */
    const char *html; /* knee run --html: the report of DIR (its runs and repeat.json) at the end */
};

/* The rows --repeat, --settle, --out-dir, --until-ci into rows[0..RUN_REPEAT_NROWS). */
size_t cli_repeat_rows(struct cli_repeat_flags *f, struct opt *rows);

/* Check the flags against the configuration (after runopts_build): --settle and --out-dir
 * need --repeat and --repeat needs --out-dir; --out and --hlog are refused with --repeat
 * (each repetition has its own, in DIR); --until-ci needs an open loop bounded by
 * --duration and is refused with --repeat (repetitions must be the same plan). Returns 0 or
 * 2 after one line naming the flag. */
int cli_repeat_check(const struct cli_repeat_flags *f, const struct cmd_spec *spec, const struct run_config *cfg,
                     const char *hlog_path);

/* knee run --repeat N: the repetitions (or, with dry_run, their plan), each repetition's
 * line, the summary across them, DIR/repeat.json and --json (the same summary; "-" is
 * stdout). Returns the exit code: 0; 1 when an accounting identity broke or an output could
 * not be written; 2 for bad input found before the first request; 99 when a --threshold
 * failed in any repetition. */
int cli_repeat_main(const struct cli_repeat_flags *f, const struct cmd_spec *spec, struct runopts_config *rc,
                    const char *json_path, bool progress, bool verbose, bool dry_run);

/* --until-ci for one run: chains itself in front of cfg->on_interval (call it after the
 * other outputs set theirs) and asks cfg->stop to stop planning once the p99's interval is
 * narrow enough. fraction 0: does nothing. */
struct cli_until_ci {
    double fraction;
    struct run_config *cfg;
    run_interval_fn *next;
    void *next_ctx;
    struct hdr h;        /* the measured latencies so far, all targets */
    size_t targets_seen; /* intervals of the current second received */
    double last_start_s;
    bool stopped; /* it asked the run to stop */
    double stopped_at_s, p99_ms, lo_ms, hi_ms;
};
void cli_until_ci_install(struct cli_until_ci *u, struct run_config *cfg, double fraction);
void cli_until_ci_release(struct cli_until_ci *u);

/* After run_execute, before the summary: the self-checks (src/runcheck) as warnings in res,
 * with the request log when cfg->out_path is a binary log of at most a few million records;
 * and, when --until-ci ended the run, the interruption it caused named as such. */
void cli_selfcheck(const struct run_config *cfg, struct run_record *res);

#endif
