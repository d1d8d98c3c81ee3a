/* The remote-write flags of the commands that expose metrics (knee run, knee capacity, knee
 * serve): --remote-write URL, --remote-write-interval D, --remote-write-timeout D,
 * --remote-write-label K=V (repeatable), --remote-write-auth-file F, --remote-write-required,
 * as option rows with the same names, help and checks everywhere; and the glue that runs a
 * push (push/push.h) over a metrics registry (metrics_render_remote_write) and says what it did.
 *
 *   struct push_flags pf = {0};
 *   for (int id = 0; id < PUSH_FLAG_COUNT; id++) rows[n++] = push_flags_row(&pf, id);
 *   ... opt_parse ...
 *   if (push_flags_check(&pf, &spec)) return 2;           // before anything starts
 *   struct cli_push *cp;
 *   if (cli_push_start(&pf, &spec, reg, shard_kv, &cp)) return 2 or 1;
 *   ... the producer publishes to reg ...
 *   struct record_remote_write rw;
 *   cli_push_end(cp, &rw);                                 // final push, flush, stats
 */
#ifndef KNEE_CLI_PUSH_FLAGS_H
#define KNEE_CLI_PUSH_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/opt.h"
#include "record/record.h"

#define PUSH_FLAGS_MAX_LABELS 16 /* --remote-write-label, at most */
#define PUSH_INTERVAL_DEFAULT_NS (5 * 1000000000ULL)
#define PUSH_TIMEOUT_DEFAULT_NS (5 * 1000000000ULL)

enum push_flag_id {
    PUSH_FLAG_URL,
    PUSH_FLAG_INTERVAL,
    PUSH_FLAG_TIMEOUT,
    PUSH_FLAG_LABEL,
    PUSH_FLAG_AUTH_FILE,
    PUSH_FLAG_REQUIRED,
    PUSH_FLAG_COUNT
};

/* As parsed; strings point into argv. */
struct push_flags {
    const char *url, *auth_file;
    uint64_t interval_ns, timeout_ns; /* 0: the defaults */
    struct strlist labels;            /* "k=v" */
    bool required;
};

struct metrics_registry;
struct cli_push;

/* The option row `id`, its destination inside f. */
struct opt push_flags_row(struct push_flags *f, enum push_flag_id id);

/* Check the flags without starting anything: the others need --remote-write; the URL
 * (http[s]://, no credentials), the labels (k=v), the auth file (readable, one line "bearer
 * TOKEN" or "basic USER:PASSWORD"), interval and timeout > 0. Returns 0, or 2 after one line
 * on stderr naming the flag (and the file and line). */
int push_flags_check(const struct push_flags *f, const struct cmd_spec *spec);

/* Release what push_flags_check or the parser kept (the labels' array). */
void push_flags_release(struct push_flags *f);

/* Without --remote-write: *out NULL, 0. Else check the flags, render one WriteRequest from reg
 * to check the labels against its families (a label named twice, one of a family's own), and
 * start the push thread (push/push.h) with the labels shard_kv ("shard=I", NULL when not a
 * shard) and the user's. Prints "remote-write to URL every D" on stderr. Returns 0, 2 (bad
 * input, one line on stderr naming the flag) or 1 (could not start). reg must outlive the push. */
int cli_push_start(const struct push_flags *f, const struct cmd_spec *spec, struct metrics_registry *reg,
                   const char *shard_kv, struct cli_push **out);

/* The end (once; later calls only copy the numbers): the final push and the flush (the final
 * values must be published first), the thread joined; what the pushes did into *rw (rw->set
 * false when cp is NULL). */
void cli_push_end(struct cli_push *cp, struct record_remote_write *rw);

/* Free (ends it first when cli_push_end was not called). NULL is a no-op. */
void cli_push_free(struct cli_push *cp);

/* The record's warning for rw when something failed (attention): "remote-write: 2 of 14
 * pushes failed, 3 dropped (queue full); last error: ..."; with --remote-write-required and
 * not one push accepted it comes first in the list. Nothing when everything was accepted. */
void cli_push_warn(const struct record_remote_write *rw, struct warn_list *w);

/* Whether rw fails the exit code: --remote-write-required and not one push accepted. */
bool cli_push_failed_required(const struct record_remote_write *rw);

#endif
