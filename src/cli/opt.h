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

/* Did-you-mean: the candidate a mistyped word most likely meant. Feed every candidate with
 * opt_suggest_add, then read opt_suggest_best. A candidate is chosen when the typed word is a
 * prefix of it and of no other candidate, else when it is the only nearest candidate within an
 * edit distance of 2 (insert, delete, substitute, swap two neighbours; letter case and '_'
 * against '-' cost nothing), and the distance is at most half the typed length (so "--x" does
 * not suggest "--n"). Nothing is allocated; the candidates are borrowed until the answer is read. */
struct opt_suggest {
    const char *typed;
    size_t len;
    const char *prefix_of; /* the candidate typed is a prefix of, if only one */
    size_t nprefix;        /* how many candidates typed is a prefix of */
    const char *nearest;   /* the nearest candidate so far */
    size_t dist;           /* its distance (SIZE_MAX: none yet) */
    size_t nnearest;       /* how many candidates share that distance */
};
void opt_suggest_init(struct opt_suggest *s, const char *typed, size_t len);
void opt_suggest_add(struct opt_suggest *s, const char *candidate);
/* The suggestion, or NULL when none is close enough or two are equally close. */
const char *opt_suggest_best(const struct opt_suggest *s);
/* The same over a NULL-terminated list of words. */
const char *opt_suggest_word(const char *typed, const char *const *words);

/* The edit distance between a[0..alen) and b as opt_suggest measures it (optimal string
 * alignment; case and '_'/'-' ignored); SIZE_MAX when either is longer than 63 bytes. */
size_t opt_edit_distance(const char *a, size_t alen, const char *b);

/* words (NULL-terminated) joined as "a, b, c" into buf (truncated to len); returns buf. The
 * one place lists of choices are written, so they come from the table that defines them. */
const char *opt_word_list(const char *const *words, char *buf, size_t len);

/* A word flag: *out = the index of value in words (NULL-terminated). Else prints
 * "knee <cmd>: --<flag> '<value>': expected one of a, b, c" (and "; did you mean b?" when one
 * is close) and returns 2. */
int opt_parse_word(const struct cmd_spec *spec, const char *flag, const char *value, const char *const *words,
                   int *out);

/* Print "knee <cmd>: <message>" to stderr and return 2 (the exit code for bad input). */
int opt_fail(const struct cmd_spec *spec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
