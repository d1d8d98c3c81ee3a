/* The metrics flags every command with a Prometheus endpoint accepts (knee run, knee capacity,
 * knee serve): --metrics-listen ADDR:PORT, --metrics-linger D, --metrics-buckets LIST, as
 * option rows with the same names, help and checks everywhere, and the bucket bounds they
 * give (the flag's list or knee's default, with the command's SLO thresholds added).
 *
 *   struct metrics_flags mf = {0};
 *   rows[n++] = metrics_flags_row(&mf, METRICS_FLAG_LISTEN, METRICS_FOR_RUN);   // and the others
 *   ... opt_parse ...
 *   double b[METRICS_MAX_BOUNDS]; size_t nb;
 *   if (metrics_flags_check(&mf, &spec, thresholds_s, nthr, b, &nb)) return 2;
 */
#ifndef KNEE_CLI_METRICS_FLAGS_H
#define KNEE_CLI_METRICS_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/opt.h"
#include "metrics/metrics.h"

enum metrics_flag_id { METRICS_FLAG_LISTEN, METRICS_FLAG_LINGER, METRICS_FLAG_BUCKETS, METRICS_FLAG_COUNT };
/* Whose numbers the help texts speak of. */
enum metrics_for { METRICS_FOR_RUN, METRICS_FOR_SERVE };

/* As parsed; strings point into argv. */
struct metrics_flags {
    const char *listen, *buckets;
    uint64_t linger_ns;
    const struct push_flags *push; /* the command's --remote-write flags (cli/push_flags.h) or NULL: with
                                      --remote-write the registry and buckets are made without an endpoint */
};

/* The option row `id` for a command of kind `who`, its destination inside f. */
struct push_flags;

/* Whether the registry is needed: --metrics-listen or --remote-write. */
bool metrics_flags_wanted(const struct metrics_flags *f);

struct opt metrics_flags_row(struct metrics_flags *f, enum metrics_flag_id id, enum metrics_for who);

/* Check the flags (--metrics-linger and --metrics-buckets need --metrics-listen; the address
 * is ADDR:PORT; the buckets are durations) and fill bounds_s (cap METRICS_MAX_BOUNDS) with the
 * buckets in seconds: --metrics-buckets or knee's default, with every value of extra_s (the
 * SLO thresholds, seconds) added as a boundary. Returns 0, or 2 after one line on stderr
 * naming the flag. Without --metrics-listen or --remote-write *nbounds is 0. f->push (when set)
 * is checked too (push_flags_check). */
int metrics_flags_check(const struct metrics_flags *f, const struct cmd_spec *spec, const double *extra_s,
                        size_t nextra, double *bounds_s, size_t *nbounds);

/* "1ms,2.5ms,5ms,..." into buf (for --dry-run and messages). Returns buf. */
const char *metrics_flags_format_bounds(const double *bounds_s, size_t n, char *buf, size_t cap);

/* Wait up to linger_ns, or until SIGINT or SIGTERM arrives (blocked in this thread meanwhile
 * and consumed; the mask is restored after). Returns true when a signal ended the wait. */
bool metrics_flags_linger(uint64_t linger_ns);

#endif
