/* The subcommand table: one row per command, in the order `knee --help` lists them. */
#include "cli/commands.h"

const struct command knee_commands[] = {
    {"lab", cmd_lab, "reproduce the articles' experiments here and explain them from this run's numbers"},
    {"run", cmd_run, "send load (open or closed loop) and report latency, outcomes and generator lag"},
    {"capacity", cmd_capacity, "how much load a service carries within its SLO (ladder, vote, probe, cross-check)"},
    {"serve", cmd_serve, "run lab target servers with known sources of tail latency"},
    {"compare", cmd_compare, "before/after: repeated runs, the same load model, differences with intervals, a verdict"},
    {"stats", cmd_stats, "every number a latency dashboard shows, and the ones it hides (CSV or knee logs)"},
    {"hlog", cmd_hlog, "HdrHistogram interval logs: show, stats, tags, merge (exact, Java-compatible)"},
    {"merge", cmd_merge, "add up the outputs of the shards of one plan (knee run --shard I/N) exactly"},
    {"report", cmd_report, "one self-contained HTML report (charts and summary) of one or more runs"},
    {"model", cmd_model, "queueing calculators: M/M/1, M/M/c, M/D/1, Little's law, fan-out"},
    {0, 0, 0},
};
