/* Live metrics for Prometheus: a registry of metric families (counters, gauges, classic
 * histograms, optionally also native histograms) with bounded label sets, whole-snapshot
 * publishing, the three expositions a scraper may ask for (the Prometheus text format 0.0.4,
 * OpenMetrics 1.0, and the delimited protobuf MetricFamily messages that carry native
 * histograms) and a Prometheus remote-write 1.0 WriteRequest of the same values.
 * The HTTP endpoint that serves them is metrics/endpoint.h; the families knee run and
 * knee serve expose are metrics/knee_run.h and metrics/knee_serve.h.
 *
 * Typical use (a producer that publishes once per second):
 *     struct metrics_registry *reg = metrics_new();
 *     static const char *const lab[] = {"target", "outcome"};
 *     struct metrics_family_spec spec = {.name = "knee_requests", .help = "...",
 *         .type = METRICS_COUNTER, .labels = lab, .nlabels = 2};
 *     int fam = metrics_family_add(reg, &spec, err, sizeof err);     // once, at set-up
 *     int s = metrics_series_add(reg, fam, (const char *[]){"api", "ok"}, err, sizeof err);
 *     struct metrics_snapshot *snap = metrics_snapshot_new(reg);    // after the series
 *     ... every second: metrics_snapshot_set(snap, s, ok_count); metrics_publish(reg, snap);
 *
 * Threads: families and series are declared by one thread (the producer's); snapshots are
 * the producer's own memory. metrics_publish() and metrics_render() take the registry's
 * mutex, so a publisher waits at most for one rendering of the exposition (a scrape; tens of
 * microseconds for knee's families) and the endpoint never touches a producer's data. Nothing
 * here runs on a request path.
 *
 * Bounded labels: every family has fixed label names and a cap on its label sets
 * (max_series); a label value is at most METRICS_LABEL_VALUE_MAX bytes of UTF-8. Series
 * come from bounded sets (target names, outcome classes, servers), never from per-request
 * values: the cap turns a mistake into a clear error instead of unbounded growth. */
#ifndef KNEE_METRICS_METRICS_H
#define KNEE_METRICS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/pb.h"
#include "hist/native.h"
#include "hist/prom.h"

#define METRICS_MAX_FAMILIES 128
#define METRICS_MAX_LABELS 4
#define METRICS_MAX_BOUNDS PROM_MAX_BOUNDS /* finite bucket bounds per histogram (+Inf is extra) */
#define METRICS_NAME_MAX 96                /* metric and label names, bytes */
#define METRICS_HELP_MAX 256               /* HELP text, bytes */
#define METRICS_LABEL_VALUE_MAX 128        /* one label value, bytes of UTF-8 */
#define METRICS_SERIES_DEFAULT 256         /* label sets per family when the spec says 0 */
#define METRICS_SERIES_MAX 4096            /* label sets per family, at most */
#define METRICS_TOTAL_SERIES_MAX 16384     /* label sets in a registry, at most */

enum metrics_type {
    METRICS_COUNTER,   /* monotonic; exposed as NAME_total */
    METRICS_GAUGE,     /* a value now */
    METRICS_HISTOGRAM, /* classic: NAME_bucket{le} (cumulative, +Inf), NAME_sum, NAME_count;
                          with spec.native also a native histogram (protobuf, remote-write) */
};

enum metrics_format {
    METRICS_FORMAT_TEXT,        /* text/plain; version=0.0.4 */
    METRICS_FORMAT_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
    METRICS_FORMAT_PROTOBUF,    /* application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;
                                   encoding=delimited: varint-length-prefixed MetricFamily messages */
};

/* One metric family. Strings are copied by metrics_family_add(). */
struct metrics_family_spec {
    const char *name; /* [a-zA-Z_][a-zA-Z0-9_]*; counters without "_total" (it is added on
                         exposition); never ending in _total, _created, _bucket, _count,
                         _sum, _gcount, _gsum or _info */
    const char *help; /* one line of UTF-8; escaped on exposition */
    const char *unit; /* "seconds", "bytes", ... or NULL; the name must end in "_<unit>" */
    enum metrics_type type;
    const char *const *labels; /* fixed label names; not "le", not "quantile", not "__..." */
    size_t nlabels;            /* <= METRICS_MAX_LABELS */
    const double *bounds;      /* histograms: finite upper bounds, strictly increasing */
    size_t nbounds;            /* histograms: 1..METRICS_MAX_BOUNDS */
    size_t max_series;         /* cap on label sets; 0 = METRICS_SERIES_DEFAULT */
    bool native;               /* histograms: also a native histogram (hist/native.h, NATIVE_SCHEMA, in the
                                  family's unit), set by metrics_snapshot_set_native; the text formats
                                  carry the classic buckets only */
};

struct metrics_registry;
struct metrics_snapshot;

/* An empty registry. Aborts on out of memory. */
struct metrics_registry *metrics_new(void);
/* Free the registry (the collector, if any, is not called). NULL is a no-op. */
void metrics_free(struct metrics_registry *reg);

/* Declare a family. Returns its id (>= 0), or KNEE_EINVAL (a name, unit, label or bound
 * breaks the rules above; a duplicate name) or KNEE_ETOOBIG (more than
 * METRICS_MAX_FAMILIES), with a one-line reason in err naming the family. */
int metrics_family_add(struct metrics_registry *reg, const struct metrics_family_spec *spec, char *err, size_t errlen);

/* Declare the series of `family` with these label values (one per label name, in the
 * family's order; NULL when the family has no labels). Declaring the same values again
 * returns the same id. Returns the series id (>= 0), KNEE_EINVAL (unknown family, a value
 * longer than METRICS_LABEL_VALUE_MAX or not UTF-8) or KNEE_ETOOBIG (the family's max_series
 * or METRICS_TOTAL_SERIES_MAX reached: labels must come from bounded sets), with the reason
 * in err. A new series is exposed from then on with value 0 (histograms: empty). */
int metrics_series_add(struct metrics_registry *reg, int family, const char *const *values, char *err, size_t errlen);

/* Number of series declared so far. */
size_t metrics_series_count(struct metrics_registry *reg);

/* A producer's buffer with a value for every series declared so far (all zero). Series
 * declared later are not in it (setting them returns KNEE_EINVAL; create a new snapshot).
 * Aborts on out of memory. */
struct metrics_snapshot *metrics_snapshot_new(struct metrics_registry *reg);
void metrics_snapshot_free(struct metrics_snapshot *snap);

/* Set a counter or gauge. Returns 0, or KNEE_EINVAL for an unknown series, a histogram, or
 * a counter value that is negative, infinite or NaN (gauges take any double). */
int metrics_snapshot_set(struct metrics_snapshot *snap, int series, double v);

/* Set a histogram from per-bucket counts (not cumulative) as struct prom_hist keeps them:
 * counts[i] for bucket i <= bounds[i], counts[nbounds] for +Inf; n must be nbounds + 1.
 * sum is the sum of the observations in the family's unit. Returns 0 or KNEE_EINVAL. */
int metrics_snapshot_set_hist(struct metrics_snapshot *snap, int series, const uint64_t *counts, size_t n, double sum);

/* Set a histogram from a struct prom_hist recorded in another unit: every bound times
 * scale must equal the family's bound (relative difference below 1e-9), and the sum is
 * multiplied by scale (ms → s: scale 1e-3). Returns 0, KNEE_EINVAL, or KNEE_EMISMATCH when
 * the bounds differ. */
int metrics_snapshot_set_prom(struct metrics_snapshot *snap, int series, const struct prom_hist *p, double scale);

/* Set a native histogram family's native values (a copy of h, in the family's unit). Returns
 * 0, or KNEE_EINVAL for an unknown series, a family without spec.native, or a schema other
 * than NATIVE_SCHEMA. The classic buckets are set apart (metrics_snapshot_set_prom), from the
 * same HdrHistograms: the producer sets both. May allocate (aborts on out of memory). */
int metrics_snapshot_set_native(struct metrics_snapshot *snap, int series, const struct native_hist *h);

/* Whether native families also carry their classic buckets in the protobuf exposition
 * (default false: Prometheus with native histograms on ingests the native one only, unless its
 * scrape config asks for classic too) and in metrics_render_remote_write (default true: both,
 * as NAME_bucket/_sum/_count series beside the native NAME). Families without spec.native
 * always carry their classic buckets. */
void metrics_set_classic(struct metrics_registry *reg, bool in_protobuf, bool in_remote_write);

/* Make the snapshot's values the ones every scrape sees from now on (a copy, under the
 * registry's mutex). Only the series the snapshot has set (ever, since its _new) are copied:
 * the others keep their published values, so producers of different families may share a
 * registry. Returns 0, or KNEE_EMISMATCH when the snapshot was made from another registry. */
int metrics_publish(struct metrics_registry *reg, const struct metrics_snapshot *snap);

/* A collector fills `snap` (holding the published values) right before each rendering, on
 * the endpoint's thread, under the registry's mutex: for producers that are polled (knee
 * serve's counters) rather than publishing. It must not call metrics_* functions on reg
 * other than metrics_snapshot_set*(snap, ...). */
typedef void metrics_collect_fn(void *ctx, struct metrics_snapshot *snap);

/* Install (fn != NULL) or remove (fn == NULL) the collector. When this returns, no call of
 * the previous collector is running or will start. */
void metrics_set_collector(struct metrics_registry *reg, metrics_collect_fn *fn, void *ctx);

/* Write the exposition of every family with at least one series: HELP and TYPE (and UNIT in
 * OpenMetrics) lines, then the samples in declaration order; OpenMetrics ends with "# EOF".
 * METRICS_FORMAT_PROTOBUF writes binary: one io.prometheus.client.MetricFamily per family,
 * each preceded by its length as a varint (counters named NAME_total, as client_golang
 * names them; histograms native with their classic buckets as metrics_set_classic says).
 * Runs the collector first. Returns 0, -EIO when out reports a write error, or -ENOMEM. */
int metrics_render(struct metrics_registry *reg, enum metrics_format fmt, FILE *out);

/* The Content-Type of a format, e.g. "text/plain; version=0.0.4; charset=utf-8". */
const char *metrics_content_type(enum metrics_format fmt);

/* Pick the format from an Accept header value (len bytes; NULL or empty: none sent):
 * protobuf when application/vnd.google.protobuf with proto=io.prometheus.client.MetricFamily
 * and encoding=delimited has a q > 0 at least as high as every other acceptable range (as
 * Prometheus 2.42 asks with --enable-feature=native-histograms); else OpenMetrics when application/openmetrics-text
 * (version 1.0.0 or none) has a q > 0 at least as high as every acceptable text/plain (version 0.0.4 or none), text/
 * and wildcard range; else the text format (also the answer for an Accept that allows neither, as Prometheus exporters
 * do). Never fails; bounded work on hostile input. */
enum metrics_format metrics_negotiate(const char *accept, size_t len);

/* A sample value as Prometheus parses it: "+Inf", "-Inf", "NaN"; integral values below
 * 1e15 in magnitude as integers ("1234", never "1.234e+03"); others as metrics_format_le()
 * writes them without the added ".0". Returns the length (buf is always NUL-terminated;
 * 32 bytes always suffice). */
size_t metrics_format_value(double v, char *buf, size_t len);

/* A bucket bound as an "le" label value, in OpenMetrics' canonical form (Go's %g of the
 * shortest round-trip digits, exponent below 1e-4 and from 1e6 on, ".0" added when there is
 * neither a point nor an exponent): 0.005, 0.1, 1.0, 10.0, 100000.0, 1e+06, +Inf. Used in both
 * formats, so an le label never depends on which format a scraper negotiated. */
size_t metrics_format_le(double v, char *buf, size_t len);

/* knee's default latency buckets in seconds: 1ms 2.5ms 5ms 10ms 25ms 50ms 100ms 250ms 500ms
 * 1s 2.5s 5s 10s (client_golang's DefBuckets with 1 ms and 2.5 ms below them). */
#define METRICS_DEFAULT_NBOUNDS 13
extern const double metrics_default_bounds_s[METRICS_DEFAULT_NBOUNDS];

/* Parse a --metrics-buckets value, "5ms,10ms,25ms,100ms,1s" (durations; a bare number is in
 * seconds), into bounds in seconds, sorted and without duplicates. Returns 0, KNEE_EFORMAT
 * (an item is not a duration), KNEE_EINVAL (a zero bound) or KNEE_ETOOBIG (more than cap),
 * with a reason in err naming the item. */
int metrics_bounds_parse(const char *s, double *out, size_t cap, size_t *n, char *err, size_t errlen);

/* The union of bucket bounds and SLO thresholds (both in seconds): sorted, duplicates
 * (equal within a relative 1e-12, as histogram_quantile treats them) removed, so every
 * threshold is a bucket boundary and "share of requests under T" is exact. Returns 0, or
 * KNEE_EINVAL (a value not finite or <= 0) / KNEE_ETOOBIG (more than cap), with a reason. */
int metrics_bounds_merge(const double *bounds, size_t n, const double *extra, size_t nextra, double *out, size_t cap,
                         size_t *nout, char *err, size_t errlen);

/* Render the last published values (after running the collector, as a scrape does) as a
 * Prometheus remote-write 1.0 WriteRequest (uncompressed protobuf, appended to out; the
 * caller snappy-compresses it): every series of every family with at least one series,
 * counters as NAME_total, gauges as NAME, histograms as NAME_bucket{le} (cumulative, "+Inf"
 * last; le as metrics_format_le writes it), NAME_sum and NAME_count samples, and native
 * families as TimeSeries.histograms of NAME (schema NATIVE_SCHEMA; the classic series too
 * unless metrics_set_classic says otherwise). extra_kv holds nextra strings "name=value"
 * (the shard, the user's --remote-write-label) added to every series; the labels of a series
 * are sorted by name, as the protocol requires. Every sample and histogram is stamped ts_ms
 * (milliseconds since the epoch). Returns 0; KNEE_EINVAL when an extra label is not
 * "name=value" with a valid name (not __*, not le), a value of 0..METRICS_LABEL_VALUE_MAX
 * bytes of UTF-8, names twice or a family's own label name; -ENOMEM when out failed; a
 * reason in err. Takes the registry's mutex for the rendering (as a scrape does). */
int metrics_render_remote_write(struct metrics_registry *reg, const char *const *extra_kv, size_t nextra, int64_t ts_ms,
                                struct pb_buf *out, char *err, size_t errlen);

#endif
