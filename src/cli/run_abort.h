/* knee run --abort-if RULE / --abort-after D: the rules parsed (abort/abort.h), an evaluator
 * chained in front of the run's per-second callbacks (on_interval for the latencies,
 * on_progress for the counts, on_live for the generator's verdict), and the run's stop handle
 * asked to stop planning and drain, as Ctrl-C does, when a rule fires. Everything here runs on
 * the thread of run_execute (the engine's per-second merge), never on a load thread. */
#ifndef KNEE_CLI_RUN_ABORT_H
#define KNEE_CLI_RUN_ABORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abort/abort.h"
#include "cli/opt.h"
#include "cli/runopts.h"
#include "load/run.h"

struct cli_abort {
    struct abort_rule rules[ABORT_MAX_RULES];
    size_t n;
    uint64_t after_ns;
    /* while installed */
    struct abort_eval *ev;
    const struct run_config *cfg; /* its stop handle is asked to stop when a rule fires */
    run_interval_fn *next_interval;
    void *next_interval_ctx;
    run_stream_interval_fn *next_stream_interval;
    void *next_stream_interval_ctx;
    run_progress_fn *next_progress;
    void *next_progress_ctx;
    run_live_fn *next_live;
    void *next_live_ctx;
    int64_t live_bound_ns; /* the one bucket bound of the live numbers when nobody else gathers them */
};

/* --abort-if and --abort-after (o, parsed with spec) into *a (zeroed first). 0, or the exit code
 * 2 after one line naming the flag and the rule: a malformed rule (what was expected), more than
 * ABORT_MAX_RULES, a stage rule (this knee has no --stages yet: "needs --stages"), a
 * generator_limited rule in a closed loop, --abort-after without --abort-if. */
int cli_abort_parse(struct cli_abort *a, const struct runopts *o, const struct cmd_spec *spec,
                    const struct run_config *cfg);

/* Chain the evaluator in front of cfg's on_interval, on_progress and on_live (call it after the
 * others are set, before run_execute; nothing when there is no rule). cfg->stop must be set
 * when the run starts: a rule that fires asks it to stop (level 1, unless a stop was asked). */
void cli_abort_install(struct cli_abort *a, struct run_config *cfg);

/* After run_execute: the callbacks restored, and res marked (record_set_aborted) when a rule
 * fired. True when one fired (knee run exits 99). Frees the evaluator. */
bool cli_abort_finish(struct cli_abort *a, struct run_config *cfg, struct run_record *res);

/* The dry run's lines for the rules ("  --abort-if RULE (...)"). */
void cli_abort_print(FILE *out, const struct cli_abort *a);

#endif
