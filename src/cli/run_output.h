/* The output files of `knee run` beside the terminal summary: --json (a file, or "-" for
 * stdout) and --hlog (the HdrHistogram interval log fed by the run's per-second callback).
 * Private to src/cli; a command that runs several times (--repeat) opens them once. */
#ifndef KNEE_CLI_RUN_OUTPUT_H
#define KNEE_CLI_RUN_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/opt.h"
#include "hlog/hlog.h"
#include "load/run.h"
#include "load/threshold.h"

struct run_output {
    const char *json_path; /* NULL, "-" (stdout) or a file */
    const char *hlog_path; /* NULL or a file */
    FILE *json;            /* the open --json file (NULL for none or stdout) */
    FILE *hlog_file;
    struct hlog_writer *hlog;
    const struct run_target_config *targets; /* the tags of the hlog intervals */
    int hlog_err;                            /* the first --hlog write error */
};

/* Check that the outputs can be written without creating them (--dry-run): an existing file
 * must be writable, else its directory. Returns 0 or 2 after one line naming the flag. */
int run_output_check(const struct run_output *o, const struct cmd_spec *spec, const struct run_config *cfg);

/* Open --json and --hlog (the hlog tags are the target names: checked here) and point
 * cfg->on_interval at the hlog writer. Returns 0 or 2 after one line naming the flag; on 2
 * nothing stays open. */
int run_output_open(struct run_output *o, const struct cmd_spec *spec, struct run_config *cfg);

/* Finish the hlog after the run: true when it was written whole, else false after one line
 * on stderr. */
bool run_output_close_hlog(struct run_output *o);

/* Write the JSON document (when asked) and close its file: true when it was written whole,
 * else false after one line on stderr. */
bool run_output_json(struct run_output *o, const struct run_config *cfg, const struct run_result *res,
                     const struct run_threshold *thr, size_t nthr);

/* Close whatever is still open (error paths). */
void run_output_abort(struct run_output *o);

#endif
