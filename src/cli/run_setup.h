/* knee run --setup: one request sent before the load, once, blocking (a login), and --capture
 * NAME=SOURCE, the variables taken from its answer that {{NAME}} placeholders use as they use a
 * feed's columns. The flags are checked with the other load options (runopts_build: exit 2
 * before anything is sent, placeholders included, since the names are known then); the request
 * is sent by cli_setup_run, after every check and before the run; its failure ends knee run
 * with exit 3 and nothing else is sent. Private to src/cli.
 *
 *   runopts_build(...)          cli_setup_parse: the flags; the sources learn the names
 *   cli_setup_run(spec, rc)     the request, the captures, the values bound to every source,
 *                               rc->cfg.setup set (the record's "config"."setup")
 *   run_execute(&rc->cfg, ...)  */
#ifndef KNEE_CLI_RUN_SETUP_H
#define KNEE_CLI_RUN_SETUP_H

#include <stddef.h>
#include <stdio.h>

#include "cli/opt.h"
#include "cli/runopts.h"

#define CLI_SETUP_MAX_CAPTURES 32

struct cli_setup;

/* --setup '[METHOD ]URL', --setup-header, --setup-body STR|@FILE and --capture NAME=SOURCE (o,
 * parsed): *out NULL when there is no --setup (and none of the others: each needs it). The
 * request is checked as it will be sent (the method, the URL, each header; no placeholder in
 * the URL or a header: the request is sent as written), each capture parsed (workload/capture.h),
 * names unique. 0 or 2 after opt_fail. */
int cli_setup_parse(const struct cmd_spec *spec, const struct runopts *o, struct cli_setup **out);

/* The --capture names, in flag order (*n of them; NULL and 0 for s NULL). Valid while s is. */
const char *const *cli_setup_names(const struct cli_setup *s, size_t *n);

/* Send the setup request over rc->cfg's transport flags (--cacert, --insecure, --tls-version,
 * --ciphers; HTTP/1.1 only, ALPN http/1.1) within --timeout, take every --capture from the
 * answer, bind the values to every request source of rc, and point rc->cfg.setup at the note
 * the record keeps. Prints one line on out (the answer's status and time, the names captured:
 * never a value). Returns 0; 2 (a TLS flag OpenSSL refuses); or 3 (KNEE_EXIT_NO_OK: no answer,
 * a status other than 2xx, a capture missing from the answer, a value that cannot go where a
 * placeholder puts it), after one line on stderr with the status, the reason and the start of
 * the body. s NULL: 0, nothing sent. Blocking. */
int cli_setup_run(const struct cmd_spec *spec, struct cli_setup *s, struct runopts_config *rc, FILE *out);

/* --dry-run: the setup request and its captures, one line each, indented as the plan's. */
void cli_setup_print_plan(FILE *f, const struct cli_setup *s);

struct cli_io;
/* --setup-body @FILE as an input no output may replace (cli/io_check.h). s may be NULL. */
void cli_setup_inputs(const struct cli_setup *s, struct cli_io *io);

void cli_setup_free(struct cli_setup *s);

#endif
