/* The summary's warnings, merged by cause and ranked (the most consequential first), and its
 * thresholds. The record keeps its warnings as lines in the order they were found (the JSON
 * lists them so); here each line is given its cause from its words, the causes are printed
 * in rank order, each cause's first line marked "!" and the others of the same cause beneath
 * it. Statistical notes (few samples, the p99's interval, the Poisson check not made, the
 * warm-up) print without --verbose only when they change what a reader may conclude from the
 * headline: a p99 resting on fewer than 10 samples or without an interval. */
#include "runreport/internal.h"

/* Causes in the order they print. */
enum rr_cause {
    RR_BUG,       /* the accounting broke */
    RR_DOWN,      /* not one request succeeded, and what goes with it */
    RR_GENERATOR, /* the generator shaped the run */
    RR_ERRORS,    /* the target failed some requests */
    RR_STOPPED,   /* the run stopped early */
    RR_DRIFT,     /* the service changed over the run */
    RR_OTHER,     /* anything else that needs attention */
    RR_PRECISION, /* a note: few samples, a wide interval */
    RR_NOTE,      /* a note that changes no conclusion */
    RR_CAUSES
};

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A warning's cause from its words (record/finish.c, runcheck, the engine, knee merge). */
static enum rr_cause cause_of(const char *w, bool no_ok)
{
    enum rr_cause target = no_ok ? RR_DOWN : RR_ERRORS;
    if (starts(w, "BUG:"))
        return RR_BUG;
    if (starts(w, "FAILED:") || starts(w, "stopped early after"))
        return RR_DOWN;
    if (starts(w, "ERRORS:") || (strstr(w, "connection attempt") && strstr(w, "failed (refused")) ||
        strstr(w, "still in flight when the drain ended") || strstr(w, "bytes nobody asked for") ||
        strstr(w, "the server allowed none"))
        return target;
    if (starts(w, "GENERATOR-LIMITED") || strstr(w, "never sent (dropped)") ||
        starts(w, "self-check: the actual sends are not a Poisson") || strstr(w, "log writer could not keep up") ||
        starts(w, "the connection pool is capped") || starts(w, "--io ") || starts(w, "load thread "))
        return RR_GENERATOR;
    if (starts(w, "interrupted:") || starts(w, "--until-ci:"))
        return RR_STOPPED;
    if (starts(w, "self-check: not stationary"))
        return RR_DRIFT;
    if ((starts(w, "only ") && strstr(w, "latency sample")) || starts(w, "self-check (precision)"))
        return RR_PRECISION;
    if (starts(w, "warm-up:") || starts(w, "self-check: the Poisson arrivals were not checked") ||
        starts(w, "no per-entry table:"))
        return RR_NOTE;
    return RR_OTHER;
}

/* Whether the line prints: every line with --verbose; else every warning, and the notes that
 * say the headline's p99 cannot be trusted (when there is a latency to trust: some request
 * succeeded). */
static bool shown(const char *w, enum rr_cause k, const struct run_record *v, bool verbose)
{
    if (verbose || k < RR_PRECISION || starts(w, "no per-entry table:")) /* where the table went: always said */
        return true;
    if (k == RR_NOTE || v->no_ok)
        return false;
    return strstr(w, "p99 rests on fewer") || strstr(w, "has no 95% confidence interval");
}

static void thresholds(FILE *out, const struct run_record *v)
{
    char line[4096];
    if (!v->nthresholds)
        return;
    fprintf(out, "\nthresholds\n");
    for (size_t i = 0; i < v->nthresholds; i++) {
        const struct record_threshold *t = &v->thresholds[i];
        char mv[40];
        if (!isfinite(t->measured))
            snprintf(mv, sizeof mv, "no samples");
        else if (strcmp(t->unit, "%") == 0)
            units_fmt_share(t->measured, 4, mv, sizeof mv);
        else
            snprintf(mv, sizeof mv, "%.6g%s%s", t->measured, *t->unit && strcmp(t->unit, "/s") ? " " : "", t->unit);
        fprintf(out, "  %-4s %-28s measured %s\n", t->pass ? "pass" : "FAIL", rr_esc(t->expr, line, sizeof line), mv);
    }
}

void rr_print_warnings(FILE *out, const struct run_record *v, bool verbose)
{
    char line[4096];
    size_t n = v->warnings.n;
    enum rr_cause *cause = xcalloc(n ? n : 1, sizeof *cause);
    bool any[RR_CAUSES] = {false};
    for (size_t i = 0; i < n; i++) {
        cause[i] = cause_of(v->warnings.items[i], v->no_ok);
        any[cause[i]] |= shown(v->warnings.items[i], cause[i], v, verbose);
    }
    bool warned = false, noted = false;
    for (int k = 0; k < RR_CAUSES; k++) {
        if (!any[k])
            continue;
        bool note = k >= RR_PRECISION, first = true;
        if (!note && !warned)
            fprintf(out, "\nwarnings, by cause (the most consequential first)\n");
        if (note && !noted)
            fprintf(out, "\nnotes\n");
        warned |= !note;
        noted |= note;
        for (size_t i = 0; i < n; i++) {
            if (cause[i] != (enum rr_cause)k || !shown(v->warnings.items[i], cause[i], v, verbose))
                continue;
            fprintf(out, "%s%s\n",
                    note    ? "  - "
                    : first ? "  ! "
                            : "    ",
                    rr_esc(v->warnings.items[i], line, sizeof line));
            first = false;
        }
    }
    free(cause);
    thresholds(out, v);
}
