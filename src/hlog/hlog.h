/* HdrHistogram interval logs (.hlog, "Histogram log format version 1.3"): the writer knee run
 * uses, a reader with the reference reader's semantics, exact accumulation and merging of
 * intervals. Written from
 * the HdrHistogram project's log format description; docs/FORMATS.md says
 * what knee writes.
 *
 * Values in knee's logs are nanoseconds; the Interval_Max column is written with a max-value
 * unit ratio of 1e6 so it reads in milliseconds, as the Java tools expect. Every object here
 * is single-threaded (one per thread). */
#ifndef KNEE_HLOG_HLOG_H
#define KNEE_HLOG_HLOG_H

#include "hist/hdr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define HLOG_FORMAT_VERSION "1.3"
#define HLOG_MAX_VALUE_UNIT_RATIO 1e6    /* ns -> ms in the Interval_Max column */
#define HLOG_TAG_MAX 255                 /* bytes in a tag */
#define HLOG_LINE_MAX ((size_t)32 << 20) /* a longer line is refused, not buffered */

/* ---- writer ------------------------------------------------------------------------------ */

struct hlog_writer;

/* Start a log on f: writes the header — "#[<comment>]" (NULL: "#[Logged with knee VERSION]"),
 * "#[Histogram log format version 1.3]", "#[StartTime: S (seconds since epoch), DATE]",
 * "#[BaseTime: S (seconds since epoch)]" with S = start_time_epoch_s, and the column legend.
 * Interval start times are then written relative to that BaseTime. The writer does not own f.
 * Returns 0, KNEE_EINVAL (start time not finite or negative), or -errno of a failed write. */
int hlog_writer_open(struct hlog_writer **out, FILE *f, double start_time_epoch_s, const char *comment);

/* Append one interval: "[Tag=T,]start,length,max,HISTF…" with start_s relative to the
 * BaseTime, length_s its length, max the histogram's max / 1e6 (ms for ns values), all "%.3f"
 * as Java prints them, and the histogram compressed V2 in base64. tag NULL = untagged; a tag
 * must be 1..HLOG_TAG_MAX printable bytes without ',', space, CR, LF or tab (KNEE_EINVAL).
 * h->overflow_count is not representable in the format and is not written.
 * Returns 0, KNEE_EINVAL, or an error of hlog_encode / -errno. */
int hlog_writer_write(struct hlog_writer *w, const char *tag, double start_s, double length_s, const struct hdr *h);

/* Flush and free the writer (NULL is a no-op); does not fclose f. Returns 0 or -errno when any
 * write to f failed. */
int hlog_writer_close(struct hlog_writer *w);

/* True when s is a valid tag (see hlog_writer_write). */
bool hlog_tag_valid(const char *s);

/* knee run --hlog with --stream: a target's per-second first-event and event-gap histograms are
 * tagged with one of these prefixes before its name ("first_event/api"); its latency keeps the
 * bare name. */
#define HLOG_TAG_FIRST_EVENT "first_event/"
#define HLOG_TAG_EVENT_GAP "event_gap/"
enum hlog_tag_kind { HLOG_TAG_LATENCY, HLOG_TAG_KIND_FIRST_EVENT, HLOG_TAG_KIND_EVENT_GAP };
/* What a tag's intervals hold, by its prefix (NULL: untagged, latency); *target (may be NULL)
 * gets the tag past the prefix (the tag itself for latency; NULL for NULL). */
enum hlog_tag_kind hlog_tag_kind(const char *tag, const char **target);

/* ---- reader ------------------------------------------------------------------------------ */

/* One interval line, as read. */
struct hlog_entry {
    bool tagged;
    char tag[HLOG_TAG_MAX + 1]; /* "" when untagged */
    double timestamp_s;         /* the StartTimestamp column as written */
    double start_s;             /* absolute start, seconds since the epoch (or the log's base) */
    double offset_s;            /* start_s minus the log's StartTime */
    double length_s;            /* Interval_Length */
    double max_column;          /* Interval_Max as written (not used: the histogram knows) */
    size_t line;                /* 1-based line number */
    const char *histogram;      /* the base64 column; valid until the next hlog_reader_next */
    size_t histogram_len;
};

struct hlog_reader;

/* Read a log from f (not owned); name labels error messages ("FILE:LINE: why"). The reader
 * follows the reference reader: "#[StartTime: S" and "#[BaseTime: S" comments set the times;
 * without StartTime the first interval's timestamp is the start; without BaseTime, timestamps
 * more than a year before StartTime are relative to it, others absolute. Other '#' lines and
 * the legend are skipped; fields are separated by commas or spaces. */
struct hlog_reader *hlog_reader_new(FILE *f, const char *name);
void hlog_reader_free(struct hlog_reader *r); /* NULL is a no-op */

/* The next interval: 1 and *e filled, 0 at the end, or a negative code with the message in
 * hlog_reader_error (KNEE_EFORMAT for a malformed line, KNEE_ETOOBIG for a line longer than
 * HLOG_LINE_MAX, -errno for a read error). */
int hlog_reader_next(struct hlog_reader *r, struct hlog_entry *e);

/* Decode e's histogram into out (hdr_init'ed on success; the caller releases it). Errors are
 * those of hlog_decode, with the message "FILE:LINE: why" in hlog_reader_error. */
int hlog_reader_decode(struct hlog_reader *r, const struct hlog_entry *e, struct hdr *out);

/* As hlog_reader_decode into a histogram that may be reused across intervals (see
 * hlog_decode_reuse): *h_ready says whether h holds one; no allocation while the intervals'
 * parameters stay the same. */
int hlog_reader_decode_reuse(struct hlog_reader *r, const struct hlog_entry *e, struct hdr *h, bool *h_ready);

/* The last error, "FILE:LINE: why" ("" when none). */
const char *hlog_reader_error(const struct hlog_reader *r);

/* The log's StartTime (seconds since the epoch) once known (after the header or the first
 * interval), else NaN. */
double hlog_reader_start_time(const struct hlog_reader *r);

/* ---- accumulation ------------------------------------------------------------------------ */

/* A running sum of interval histograms, exact (index-wise). The first histogram fixes the
 * bucket layout (significant digits and floor(log2(lowest))); later ones must share it
 * (KNEE_EMISMATCH), as only then is the sum exact. The range grows as the reference's auto-resizing accumulator does
 * (to cover a larger max), so its bucket count — printed in the percentile footer — matches Java's. */
struct hlog_acc {
    struct hdr h;
    bool used;    /* h is initialised */
    size_t added; /* histograms added */
};
void hlog_acc_init(struct hlog_acc *a);
void hlog_acc_release(struct hlog_acc *a);
/* a += src. KNEE_EMISMATCH (another bucket layout; why says which), KNEE_EOVERFLOW (the total
 * would pass INT64_MAX). why may be NULL. */
int hlog_acc_add(struct hlog_acc *a, const struct hdr *src, char *why, size_t whylen);

/* ---- merge ------------------------------------------------------------------------------- */

/* Merge logs exactly, aligned by absolute time: every input interval goes to the slot (of
 * slot_s seconds, counted from the earliest StartTime of the inputs) that holds its midpoint;
 * the intervals of one tag in one slot — from any file — are summed into one output interval
 * whose start and length span them. The output is a valid log (writer header, StartTime and
 * BaseTime = the earliest input StartTime), intervals in time order, tags in order of first
 * appearance. Memory: the inputs' base64 text and two histograms (one decoded interval, one
 * sum), whatever the number of intervals in a slot. Errors: the message ("FILE:LINE: why" for
 * bad input) goes to err; returns KNEE_EMISMATCH (different digits/lowest within a tag), any
 * reader/decoder error, or -errno. */
int hlog_merge(FILE *out, const char *const *paths, size_t npaths, double slot_s, char *err, size_t errlen);

/* The percentile distribution in the reference layout (.hgrm) is hdr_percentiles_print
 * (hist/hdr.h): the same iterator, numbers and footer as Java's outputPercentileDistribution. */

#endif
