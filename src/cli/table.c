/* The subcommand table: one row per command, in the order `knee --help` lists them. */
#include "cli/commands.h"

const struct command knee_commands[] = {
    {0, 0, 0},
};
