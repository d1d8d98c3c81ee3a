/* The output files of `knee run` beside the terminal summary: --json (a file, or "-" for
 * stdout) and --hlog (the HdrHistogram interval log fed by the run's per-second callback).
 * Both go through core/outfile, as --out does inside the engine: an existing file is replaced
 * whole when the run's output is complete (the habit of wrk, k6 and vegeta users), and keeps
 * its old content when the run fails first; a device, FIFO or symlink to one is written in
 * place and never removed. Private to src/cli; a command that runs several times (--repeat)
 * opens them once. */
#ifndef KNEE_CLI_RUN_OUTPUT_H
#define KNEE_CLI_RUN_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/opt.h"
#include "core/outfile.h"
#include "hlog/hlog.h"
#include "load/run.h"
#include "record/threshold.h"

struct cli_output {
    const char *json_path; /* NULL, "-" (stdout) or a file */
    const char *hlog_path; /* NULL or a file */
    const char *html_path; /* --html: NULL or a file */
    struct outfile json;   /* open when json_open */
    struct outfile hlog_file;
    bool json_open, hlog_open;
    struct hlog_writer *hlog;
    const struct plan_target *targets; /* the tags of the hlog intervals */
    int hlog_err;                      /* the first --hlog write error */
};

/* Check that the outputs can be written without creating them (--dry-run): an existing file
 * must be writable, else its directory. Returns 0 or 2 after one line naming the flag. */
int cli_output_check(const struct cli_output *o, const struct cmd_spec *spec, const struct run_config *cfg);

/* Open --json and --hlog (the hlog tags are the target names: checked here) and point
 * cfg->on_interval at the hlog writer. Returns 0 or 2 after one line naming the flag; on 2
 * nothing stays open and nothing was touched. */
int cli_output_open(struct cli_output *o, const struct cmd_spec *spec, struct run_config *cfg);

/* Finish the hlog after the run: true when it was written whole and put in place, else false
 * after one line on stderr naming the path and the reason. */
bool cli_output_close_hlog(struct cli_output *o);

/* Write the record as the JSON document (when asked; record_write_json) and put it in place:
 * true when it was written whole, else false after one line on stderr naming the path and the
 * reason. */
bool cli_output_json(struct cli_output *o, const struct run_record *res);

/* --html: the report of the run (its JSON, and its per-request log or hlog when written)
 * through html_write_report. true when written (or not asked), else false after one line on
 * stderr naming the path and the reason. */
bool cli_output_html(const struct cli_output *o, const struct run_config *cfg, const struct run_record *res);

/* Give up whatever is still open (error paths): files knee created are removed, what existed
 * is as it was. */
void cli_output_abort(struct cli_output *o);

#endif
