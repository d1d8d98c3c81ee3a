/* Helpers shared by the files of src/metrics (not part of its API): the registry's structures
 * (registry.c builds them; protobuf.c renders them too) and the text helpers. */
#ifndef KNEE_METRICS_INTERNAL_H
#define KNEE_METRICS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "hist/native.h"
#include "metrics/metrics.h"

struct family {
    char name[METRICS_NAME_MAX + 1];
    char help[METRICS_HELP_MAX + 1];
    char unit[METRICS_NAME_MAX + 1]; /* "" when none */
    enum metrics_type type;
    size_t nlabels;
    char labels[METRICS_MAX_LABELS][METRICS_NAME_MAX + 1];
    size_t nbounds;
    double bounds[METRICS_MAX_BOUNDS];
    char le[METRICS_MAX_BOUNDS][32]; /* the bounds as canonical "le" values */
    size_t max_series;
    bool native; /* also a native histogram (spec.native) */
    int *ids;    /* its series, in declaration order */
    size_t nids, capids;
};

struct series {
    int family;
    size_t off;    /* first value slot */
    char *labels;  /* `a="x",b="y"` escaped, or "" */
    char **values; /* the raw values, to find duplicates */
};

/* Value slots of a series: 1 for counters and gauges; nbounds + 1 bucket counts and the
 * sum for histograms. */
static inline size_t slots_of(const struct family *f)
{
    return f->type == METRICS_HISTOGRAM ? f->nbounds + 2 : 1;
}

struct slot {
    size_t off;
    enum metrics_type type;
    const struct family *fam; /* families never move or die before the registry */
    bool touched;             /* set since the snapshot was made: published */
    bool native_touched;      /* the native histogram too */
};

struct metrics_snapshot {
    const struct metrics_registry *reg;
    size_t nseries;
    struct slot *slots;
    size_t nvalues;
    double *v;
    struct native_hist *nat; /* per series; native families only (the others stay empty) */
};

struct metrics_registry {
    pthread_mutex_t mu;
    struct family *fam[METRICS_MAX_FAMILIES];
    size_t nfam;
    struct series *series;
    size_t nseries, capseries;
    double *pub; /* published values, nvalues of them */
    size_t nvalues, capvalues;
    struct native_hist *pubnat; /* published native histograms, per series (capnat of them) */
    size_t capnat;
    bool classic_pb, classic_rw; /* metrics_set_classic */
    metrics_collect_fn *collect;
    void *collect_ctx;
    struct metrics_snapshot *csnap; /* the collector's view, rebuilt when series are added */
};

/* The protobuf exposition (protobuf.c); the caller holds reg->mu. Returns 0 or -ENOMEM. */
int metrics_render_protobuf_locked(struct metrics_registry *reg, struct pb_buf *out);

/* Run the collector, if any (registry.c); the caller holds reg->mu. */
void metrics_run_collector_locked(struct metrics_registry *reg);

/* True when s[0..n) is well-formed UTF-8 (no overlong forms, no surrogates, at most
 * U+10FFFF): both expositions must be UTF-8. */
bool metrics_utf8_valid(const char *s, size_t n);

/* Escape s[0..n) into out (NUL-terminated; cap >= 2n + 1 always suffices): backslash -> \\,
 * line feed -> \n, and double quote -> \" unless keep_quotes (the 0.0.4 HELP rule; label
 * values and OpenMetrics HELP escape it). Returns the length written. */
size_t metrics_escape(const char *s, size_t n, bool keep_quotes, char *out, size_t cap);

#endif
