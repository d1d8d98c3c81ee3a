/* Option tables: one table per command drives both parsing and --help, so the two can
 * never disagree. Errors name the command and the flag and return exit code 2. */
#ifndef KNEE_CLI_OPT_H
#define KNEE_CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum opt_kind {
    OPT_FLAG,     /* bool *: set to true, takes no value */
    OPT_STR,      /* const char **: the argument as given */
    OPT_LIST,     /* struct strlist *: repeatable, every value kept in order */
    OPT_COUNT,    /* uint64_t *: 1000, 10k, 2M */
    OPT_DOUBLE,   /* double *: a plain finite number */
    OPT_SHARE,    /* double *: 1%, 0.01 */
    OPT_RATE,     /* double *: per second; 5000, 10k, 100/s */
    OPT_DURATION, /* uint64_t * (ns): 250ms, 10s; a bare number is in `unit_ns` (default seconds) */
    OPT_CUSTOM,   /* parse(value, dst, err, errlen) decides */
};

struct strlist {
    const char **v;
    size_t n, cap;
};
/* A growable array of borrowed strings (the strings are not copied or freed). Start from
 * {0}; push aborts on out of memory; release frees the array and leaves it empty ({0}), so
 * releasing twice is harmless. */
void strlist_push(struct strlist *l, const char *s);
void strlist_release(struct strlist *l);

typedef int opt_parse_fn(const char *value, void *dst, char *err, size_t errlen);

struct opt {
    const char *name; /* long name without dashes: "rate" for --rate */
    char short_name;  /* 'r' for -r, or 0 */
    enum opt_kind kind;
    void *dst;
    const char *metavar; /* "R", "D", "FILE"; NULL for flags */
    const char *help;    /* one line; defaults are written into it by the command */
    uint64_t unit_ns;    /* OPT_DURATION: unit of a bare number (0 means seconds) */
    opt_parse_fn *parse; /* OPT_CUSTOM only */
    bool seen;           /* set by opt_parse when the option was given */
};

struct cmd_spec {
    const char *name;    /* "run" or "hlog merge" */
    const char *usage;   /* "[options] URL..." */
    const char *summary; /* one sentence */
    struct opt *opts;
    size_t nopts;
    const char *epilog;        /* examples and notes printed after the options; may be NULL */
    size_t min_args, max_args; /* positional argument bounds; max SIZE_MAX for unbounded */
};

#define OPT_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Parse argv (argv[0] is the command name). Positional arguments are returned in *args
 * (pointers into argv, in order; "--" ends options; the caller strlist_release()s it). Returns:
 *   0  parsed; continue
 *   1  --help printed to stdout; exit 0
 *   2  error printed to stderr as "knee <cmd>: <flag>: <why>"; exit 2
 * On 1 or 2 *args is already released (empty), so the caller may simply return. */
int opt_parse(struct cmd_spec *spec, int argc, char **argv, struct strlist *args);

/* Print the generated help for a command. */
void opt_print_help(const struct cmd_spec *spec, FILE *out);

/* Find an option by long name (for `seen`); NULL when absent. */
const struct opt *opt_find(const struct cmd_spec *spec, const char *name);

/* Flush standard output after a command printed its result there: 0, or 1 (an output that was
 * asked for and not written) after "knee <cmd>: standard output: <why>" on stderr. */
int opt_stdout_done(const struct cmd_spec *spec);

/* Print "knee <cmd>: <message>" to stderr and return 2 (the exit code for bad input). */
int opt_fail(const struct cmd_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
