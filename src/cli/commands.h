/* The subcommands. Each lives in src/cli/cmd_<name>.c, parses its own options with an
 * option table (cli/opt.h) and returns the process exit code:
 *   0 ok · 2 usage or bad input · 99 a --threshold failed (knee capacity: --require not met)
 *   · 1 a runtime failure (an output that was asked for and not written among them) · 3 a load
 *   run in which not one request succeeded (KNEE_EXIT_NO_OK: the target is down, refuses, or
 *   every request failed; the numbers are printed, but no latency of a working service was
 *   measured); knee capacity: its verdict is INVALID. */
#ifndef KNEE_CLI_COMMANDS_H
#define KNEE_CLI_COMMANDS_H

#include <stdio.h>

#define KNEE_EXIT_NO_OK 3

struct command {
    const char *name;
    int (*fn)(int argc, char **argv); /* argv[0] is the command name */
    const char *summary;
};

int cmd_model(int argc, char **argv);
/* knee lab: the articles' experiments (src/cli/cmd_lab.c, src/lab). */
int cmd_lab(int argc, char **argv);

/* The table, in the order `knee --help` prints it; terminated by a zero row. */
extern const struct command knee_commands[];

/* knee hlog show|stats|tags|merge (cmd_hlog.c). */
int cmd_hlog(int argc, char **argv);
/* The summary of an .hlog file (knee hlog stats FILE); `knee stats FILE.hlog` may route here.
 * argv[0] is the command name. */
int cmd_hlog_stats(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_stats(int argc, char **argv);
/* knee report: one self-contained HTML report of runs (src/cli/cmd_report.c, src/html). */
int cmd_report(int argc, char **argv);
/* knee merge: the shards of one plan added up (src/cli/cmd_merge.c, src/merge). */
int cmd_merge(int argc, char **argv);
/* knee compare: before/after with repetitions (src/cli/cmd_compare.c, src/compare). */
int cmd_compare(int argc, char **argv);
/* knee run: the load engine (src/cli/cmd_run.c). */
int cmd_run(int argc, char **argv);
/* knee capacity: the ladder, the vote, the probe and the cross-check (src/cli/cmd_capacity.c,
 * src/capacity). */
int cmd_capacity(int argc, char **argv);

/* "knee[ CMD]: unknown KIND 'NAME': did you mean X?" (X the closest row of table, when one is
 * close), else "... (one of a, b, c)", on stderr; returns 2. cmd is "" for knee itself. */
int cli_unknown_command(const char *cmd, const char *kind, const struct command *table, const char *name);

/* Dispatch `knee ARGS...`: --help, --version, `help CMD`, or a command. Returns the exit code. */
int knee_main(int argc, char **argv);

#endif
