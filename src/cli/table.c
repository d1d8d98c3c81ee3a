/* The subcommand table: one row per command, in the order `knee --help` lists them. */
#include "cli/commands.h"

const struct command knee_commands[] = {
    {"hlog", cmd_hlog, "HdrHistogram interval logs: show, stats, tags, merge (exact, Java-compatible)"},
    {0, 0, 0},
};
