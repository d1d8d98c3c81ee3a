/* The subcommand table: one row per command, in the order `knee --help` lists them. */
#include "cli/commands.h"

const struct command knee_commands[] = {
    {"run", cmd_run, "send load (open or closed loop) and report latency, outcomes and generator lag"},
    {0, 0, 0},
};
