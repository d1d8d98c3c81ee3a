/* The metric families of knee serve: each server's counters from serve_counters() and, when
 * the servers record it (serve_config.time_bounds_ns), their server time from serve_time() as
 * the histogram knee_serve_time_seconds{outcome="ok"|"rejected"}; polled on every scrape (a
 * collector; the servers' threads are never touched), labelled with the server's bound
 * address and preset. Names and meanings: docs/FORMATS.md "Live metrics".
 *
 * Typical use (cli/cmd_serve.c):
 *     metrics_serve_new(reg, handles, n, &ms, err, sizeof err);  // families + collector
 *     ... servers run; every scrape polls them ...
 *     serve_shutdown(h[i]); serve_join(h[i]) for each i;        // drained: values final
 *     metrics_serve_detach(ms);                // the last poll; before serve_stop() frees the handles
 *     serve_stop(h[i], &final[i]) for each i;
 *     metrics_serve_publish(ms, final);        // the final counters, frozen
 *     metrics_serve_free(ms);                  */
#ifndef KNEE_METRICS_KNEE_SERVE_H
#define KNEE_METRICS_KNEE_SERVE_H

#include <stddef.h>

#include "metrics/metrics.h"
#include "serve/serve.h"

struct metrics_serve;

/* Declare the families and one series per server in reg, and install the collector that
 * polls the n handles on each scrape. Returns 0 and *out, or an error from
 * metrics_family_add/metrics_series_add (KNEE_EINVAL also when the servers' server-time
 * bounds differ) with a reason in err. */
int metrics_serve_new(struct metrics_registry *reg, struct serve_handle *const *handles, size_t n,
                      struct metrics_serve **out, char *err, size_t errlen);

/* Poll the servers one last time and stop polling: afterwards the handles may be freed and
 * scrapes see the values of this moment until metrics_serve_publish(). */
void metrics_serve_detach(struct metrics_serve *m);

/* Publish counters given by the caller (one per server, in the order of _new): the final
 * values serve_stop() returned; the server-time histograms keep their last poll. Call after
 * metrics_serve_detach(). */
void metrics_serve_publish(struct metrics_serve *m, const struct serve_counters *c);

/* Detach (if still attached) and free. NULL is a no-op. */
void metrics_serve_free(struct metrics_serve *m);

#endif
