/* Loading per-request data for `knee stats`: CSV files with a header and knee's binary request
 * logs, filtered (--where, --skip/--until, warm-up) and grouped (--by), into per-group arrays
 * (exact mode: 8 bytes per value plus 4 for its whole second) or into HDR histograms (approx
 * mode: constant memory). Bad input stops the load with one message naming the file and the
 * line (CSV) or record (binary log). Not thread-safe. */
#ifndef KNEE_ANALYZE_DATASET_H
#define KNEE_ANALYZE_DATASET_H

#include "analyze/analyze.h"
#include "hist/dbl.h"
#include "hist/hdr.h"
#include "hist/prom.h"
#include "stats/stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --where COL=VALUE or COL!=VALUE: the cell's text must (not) equal VALUE exactly. */
struct where {
    const char *col;
    const char *value;
    bool negate;
};
/* Parse "outcome=ok" / "status!=200" into *w (pointers into a copy the caller frees via
 * w->col). 0 or KNEE_EFORMAT. */
int where_parse(const char *s, struct where *w);

#define DATASET_BY_FILE "file"
#define DATASET_ALL_GROUP "all" /* the one group of inputs without a group column */
#define DATASET_MAX_GROUPS 10000
#define DATASET_MAX_FILES 4096

struct load_opts {
    const char *column; /* the value column (default "latency_ms") */
    const char *by;     /* group column; NULL: "server" when present; "file": by input file */
    const char *time;   /* time column (seconds); NULL: "start_s" when present */
    double skip_s;      /* keep rows with skip_s <= time < until_s (-INFINITY: from the start) */
    double until_s;     /* INFINITY: no limit */
    const struct where *where;
    size_t nwhere;
    bool approx;        /* HDR histograms instead of arrays */
    bool keep_warmup;   /* keep rows flagged warm-up (binary flag, CSV warmup=1; default: leave them out) */
    double first_bound; /* doubling buckets: first upper bound (1) */
    double under;       /* share-under threshold, column unit */
    const double *prom_bounds;
    size_t nprom;
};

/* Approx mode's per-second windows: the last DATASET_RING seconds of each group stay open
 * (rows may arrive that much out of time order); older seconds are closed into their p99. */
#define DATASET_RING 64
#define DATASET_HDR_SCALE 1000.0 /* HDR records value * 1000 as an integer (ms -> us) */
#define DATASET_HDR_HIGHEST 1000000000000LL
#define DATASET_HDR_DIGITS 3
#define DATASET_WINDOW_HDR_DIGITS 2

struct ring_slot {
    int64_t sec;
    bool used, ready;
    struct hdr h;
};

struct dataset_group {
    char *name;
    uint64_t n;     /* values kept */
    uint64_t under; /* values < opts.under */
    /* exact mode: values in row order, then (dataset_finish) in time order, and their whole
     * seconds; while loading, t holds each row's time (seconds) instead of sec */
    double *v;
    int32_t *sec;
    double *t;
    size_t cap;
    double last_t;      /* the previous row's time, to notice rows out of time order */
    uint64_t unordered; /* rows whose time is earlier than the row before (same group) */
    /* approx mode */
    struct hdr hdr;
    double min, max;
    struct stats_running w; /* running mean and stdev (Welford) */
    struct ring_slot *ring;
    int64_t ring_top;
    bool ring_any;
    double *win_p99; /* closed per-second windows */
    size_t nwin, wincap;
    uint64_t late; /* rows too far out of time order for the per-second windows */
    /* approx second pass: the small windows of this group */
    struct small_window *sw;
    double *sw_values; /* nsw x win_len */
    size_t nsw, sw_len;
    uint64_t seen2; /* rows of this group seen in the second pass */
};

struct dataset {
    struct load_opts o;
    struct dataset_group **g;
    size_t ng;
    uint32_t *map; /* open addressing: group index + 1, 0 empty */
    size_t mapcap;
    size_t last_group; /* cache: rows usually repeat the previous group */
    bool have_last;
    bool has_time; /* every file so far had the time column */
    bool any_file;
    bool pass2; /* approx mode: the small-window pass */
    size_t pass2_group;
    /* streaming over all kept values */
    struct dbl_hist hist;
    struct prom_hist prom;
    struct heatmap heat;
    /* accounting */
    uint64_t rows; /* data rows read */
    uint64_t kept;
    uint64_t missing; /* rows whose value cell was empty (a dropped request has no latency) */
    uint64_t filtered_where, filtered_time, filtered_warmup;
    uint64_t hdr_overflow; /* approx: values above the HDR range (not in its percentiles) */
    uint64_t unordered;    /* kept rows earlier in time than the row before them in their group */
    bool knee_log;         /* an input is knee's own log (binary, or CSV with knee's warmup column) */
    const char *time_col;  /* the time column actually used (or NULL) */
    const char *by_col;    /* the group column actually used ("file", a column, or NULL) */
    size_t nfiles;
    char *files[DATASET_MAX_FILES];
    char err[768];
};

/* 0, or KNEE_EINVAL (bad prom bounds). */
int dataset_init(struct dataset *d, const struct load_opts *o);
void dataset_release(struct dataset *d);
/* Read one file (type by content: binary log magic, else CSV; ".hlog" names are refused).
 * 0, or a negative code with d->err = "FILE:LINE: why" (exit 2 material). */
int dataset_load(struct dataset *d, const char *path);
/* The same, reading `path` but naming the input `name` in messages, titles and --by file
 * groups (knee stats - reads a spooled copy of standard input and calls it "-"). */
int dataset_load_named(struct dataset *d, const char *path, const char *name);
/* Approx mode only: after every file was loaded once, prepare the small windows of group gi,
 * then call dataset_load again for every file (pass 2 only fills those windows). */
void dataset_begin_pass2(struct dataset *d, size_t gi, size_t nwin, size_t win_len);
/* Call once after loading. Exact mode: every group's values are put in time order (knee run
 * writes its logs in completion order; the small windows mean consecutive planned requests),
 * a stable sort by the time column that keeps file order among equal times, and their whole
 * seconds computed; nothing moves when the rows were in order already. Approx mode: the
 * remaining per-second windows are closed (its small windows follow file order: see
 * d->unordered). */
void dataset_finish(struct dataset *d);
/* Group names sorted in name order: the returned array maps rank -> group index. */
size_t *dataset_name_order(const struct dataset *d);

#endif
