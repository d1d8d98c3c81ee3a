/* Target collection for the load options (cli/runopts): bare URLs and --target
 * NAME=URL[@R|@Nc] become named targets, then the per-target flags --mix, --method, --header
 * and --body ([T=] for one target, else all) are laid onto them. Private to src/cli. */
#ifndef KNEE_CLI_RUN_TARGETS_H
#define KNEE_CLI_RUN_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/opt.h"
#include "cli/runopts.h"

/* One target's request parts gathered from the flags (strings owned unless noted). */
struct cli_target {
    char *name, *url;
    const char *method;     /* points into argv; NULL = GET */
    struct strlist headers; /* borrowed from argv */
    char *body;
    size_t body_len;
    double rate;          /* @R */
    uint32_t connections; /* @Nc */
    double weight;        /* --mix; 0 = 1 */
    bool file_group;      /* --targets: the entries named `name` (a file whose entries have names) */
};

/* --target specs (in order), then the bare URLs: each URL parsed (errors name it), each bare
 * URL named after host:port (host:port/path when that is taken). *out gets *n targets
 * (allocated even when there are none). Returns 0 or 2 after opt_fail. */
int cli_targets_collect(const struct cmd_spec *spec, const struct strlist *specs, const struct strlist *urls,
                        struct cli_target **out, size_t *n);

/* --mix NAME=W,..., then --method, --header, --body ([T=] prefix: target T only); each file a
 * --body @FILE read is pushed onto body_files (borrowed from argv). Returns 0 or 2 after
 * opt_fail. */
int cli_targets_apply(const struct cmd_spec *spec, const struct runopts *o, struct cli_target *t, size_t n,
                      struct strlist *body_files);

/* --targets FILE: the one target the file's entries make (named after the file, its URL set
 * by cli_targets_sources); URLs and --target are refused with it. 0 or 2 after opt_fail. */
int cli_targets_file(const struct cmd_spec *spec, const struct runopts *o, const struct strlist *urls,
                     struct cli_target **out, size_t *n);

/* The request sources (load/variant.h): the --targets file's, and one for every other target
 * whose URL, headers or body hold a placeholder (or every target, with --feed). (*out)[i] is
 * target i's, or NULL; each entry of a file is read and checked now, its placeholders against
 * the feed's columns and setup's --capture names (setup may be NULL). 0 or 2 after opt_fail. */
struct variant_source;
struct cli_setup;
int cli_targets_sources(const struct cmd_spec *spec, const struct runopts *o, const struct cli_setup *setup,
                        struct cli_target *t, size_t n, struct variant_source ***out);
void cli_targets_sources_free(struct variant_source **s, size_t n);

void cli_targets_free(struct cli_target *t, size_t n);

/* A body flag's value: arg as it is, or @FILE's bytes (at most HTTP_CLIENT_MAX_BODY) into *out
 * (heap, NUL-terminated, *len bytes). flag names it in messages ("--body"). 0 or 2 after
 * opt_fail. */
int cli_read_body(const struct cmd_spec *spec, const char *flag, const char *arg, char **out, size_t *len);

#endif
