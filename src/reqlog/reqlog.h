/* knee's compact binary per-request log: one fixed-size little-endian record per planned
 * request after a versioned header that names the targets (version 2: each record followed by
 * its gaps between events). `knee run --out x.bin` writes it,
 * `knee stats` reads it. The byte layout is specified in docs/FORMATS.md ("Binary request
 * log"); this header is its only implementation. */
#ifndef KNEE_REQLOG_REQLOG_H
#define KNEE_REQLOG_REQLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every planned request ends in exactly one outcome (docs/FORMATS.md gives their meaning). */
enum reqlog_outcome {
    OUTCOME_OK,
    OUTCOME_REJECTED,
    OUTCOME_HTTP_ERROR,
    OUTCOME_INVALID,
    OUTCOME_TRANSPORT,
    OUTCOME_TIMEOUT,
    OUTCOME_DROPPED,
    OUTCOME_CANCELLED,
    OUTCOME_COUNT
};

/* "ok","rejected","http_error","invalid","transport","timeout","dropped","cancelled";
 * "unknown" for a value outside the enum. Never NULL. */
const char *reqlog_outcome_name(enum reqlog_outcome o);
/* The outcome whose name is `name` (len bytes, not necessarily NUL-terminated) into *out;
 * false (and *out untouched) when no outcome has that name. */
bool reqlog_outcome_parse(const char *name, size_t len, enum reqlog_outcome *out);

/* One request. All times are nanoseconds since the run start (CLOCK_MONOTONIC based). */
struct reqlog_record {
    uint64_t planned_ns;    /* planned send time since run start (closed loop: = sent_ns) */
    uint64_t sent_ns;       /* actual send since run start; 0 when never sent (dropped) */
    uint64_t first_byte_ns; /* since run start; 0 when none */
    uint64_t done_ns;       /* complete response (or failure) since run start; 0 when none */
    uint64_t connect_ns;    /* duration of the connect this request waited for; 0 when reused */
    uint64_t bytes;         /* response bytes received */
    uint32_t target;        /* index into the target name table */
    uint32_t connection;    /* connection id */
    uint16_t status;        /* HTTP status, 0 when none */
    uint8_t outcome;        /* enum reqlog_outcome */
    uint8_t flags;          /* bit 0: warm-up (planned inside --warmup) */
    /* appended after the first 60 bytes (a 60-byte record reads them as 0) */
    uint64_t tls_ns;  /* duration of the TLS handshake this request waited for; 0 when none */
    uint8_t protocol; /* REQLOG_PROTO_*: what the connection it went on spoke */
    uint8_t tls;      /* REQLOG_TLS_*: that connection's TLS */
    /* appended after 72 bytes (an older record reads it as 0) */
    uint64_t entry; /* a targets file's entry it sent, plus 1 (0: none: a fixed request, or never sent) */
    /* appended after 80 bytes (knee run --stream; an older record reads them as 0) */
    uint64_t first_event_ns; /* the response's first event since run start; 0 when none */
    uint32_t events;         /* the response's events plus 1 (0: not timed as events) */
};

enum { REQLOG_PROTO_HTTP1, REQLOG_PROTO_H2, REQLOG_PROTO_H3, REQLOG_PROTO_COUNT };
enum { REQLOG_TLS_PLAIN, REQLOG_TLS_FULL, REQLOG_TLS_RESUMED, REQLOG_TLS_COUNT };
/* "h1", "h2"; "plain", "full", "resumed" (the CSV's cells); "?" outside the enums. */
const char *reqlog_proto_name(unsigned p);
const char *reqlog_tls_name(unsigned t);

#define REQLOG_FLAG_WARMUP 0x01u
#define REQLOG_FLAGS_KNOWN 0x01u

/* Format constants (docs/FORMATS.md). A reader of version V accepts files of version <= V;
 * a newer file is KNEE_EVERSION with a message that names both versions. */
#define REQLOG_MAGIC "\x89KRQ\r\n\x1a\n" /* 8 bytes: never valid UTF-8 text, so never a CSV */
#define REQLOG_MAGIC_LEN 8
#define REQLOG_VERSION 2            /* the newest this knee reads; it writes 1 unless the log carries gaps */
#define REQLOG_VERSION_GAPS 2       /* a log with REQLOG_HEADER_FLAG_GAPS: each record followed by its gaps */
#define REQLOG_RECORD_SIZE 96       /* bytes of a record knee writes (version 1: fields appended) */
#define REQLOG_RECORD_SIZE_MIN 60   /* the first version-1 records, without tls_ns, protocol, tls */
#define REQLOG_FIXED_HEADER_SIZE 24 /* magic, version, flags, header_size, record_size, ntargets */
#define REQLOG_HEADER_FLAG_CLOSED_LOOP 0x0001u
#define REQLOG_HEADER_FLAG_GAPS 0x0002u /* version 2: after each record, u32 n and n u64 gaps (ns) */
#define REQLOG_HEADER_FLAGS_KNOWN 0x0003u
#define REQLOG_SHARD_BLOCK_SIZE 24      /* after the names: index, count, start instant, plan id */
#define REQLOG_SHARD_MERGED 0xffffffffu /* reqlog_shard.index of a log merged from count shards */

/* The shard block appended to the header after the names (knee run --shard, docs/FORMATS.md):
 * header fields appended within header_size, as the format allows without a version change, so
 * every reader of version 1 reads a shard's log (older ones skip the block). count 0, or no
 * block: the log is not a shard's. Times relative to the run start; with a start instant, that instant is
 * the run start of every shard, so their logs share one time axis. */
struct reqlog_shard {
    uint32_t index, count;
    uint64_t start_at_unix_ns; /* the shared start instant (ns since the epoch); 0 = none */
    uint64_t plan_id;          /* equal in every shard of one plan */
};

/* Caps a reader enforces on the header (a log is peer-controlled input to `knee stats`). */
#define REQLOG_MAX_TARGETS 65536u
#define REQLOG_MAX_NAME_LEN 4096u
#define REQLOG_MAX_HEADER_SIZE (16u << 20)
#define REQLOG_MAX_RECORD_SIZE 4096u
/* A record's gaps at most (a reader refuses more; the run logs a request's first this many, so a
 * stream that never ends cannot eat memory without bound). */
#define REQLOG_MAX_GAPS (1u << 24)

/* True when the first bytes of a file are the log's magic (n may be short). */
bool reqlog_is_log(const void *head, size_t n);

/* ---- writer (one thread; callers serialise access) ---- */
struct reqlog_writer;
/* Create/truncate path and write a versioned header (for knee's own files, such as the lab's
 * temporary logs; a path a user named is opened through core/outfile, which never truncates
 * what it did not create, and handed over with reqlog_writer_open_fd) with the target names (each at most
 * REQLOG_MAX_NAME_LEN bytes, at most REQLOG_MAX_TARGETS of them); records are buffered
 * (64 KiB) and written with write(2). flags are the header's: REQLOG_HEADER_FLAG_CLOSED_LOOP,
 * and REQLOG_HEADER_FLAG_GAPS for a version-2 log whose records carry their gaps (without it
 * the log is version 1, as older knee writes and reads it).
 * Returns 0 and *out, KNEE_EINVAL for bad names/counts/flags, or -errno. */
int reqlog_writer_open(struct reqlog_writer **out, const char *path, const char *const *target_names, size_t ntargets,
                       unsigned flags);
/* The same with the shard block after the names (NULL: none, the header of reqlog_writer_open). */
int reqlog_writer_open_shard(struct reqlog_writer **out, const char *path, const char *const *target_names,
                             size_t ntargets, unsigned flags, const struct reqlog_shard *shard);
/* The same over an open descriptor (an output core/outfile opened): the writer writes to fd
 * and never closes it; reqlog_writer_close flushes and reports the first write error, and the
 * caller then commits or aborts the outfile. */
int reqlog_writer_open_fd(struct reqlog_writer **out, int fd, const char *const *target_names, size_t ntargets,
                          unsigned flags);
/* reqlog_writer_open_fd with the shard block after the names (NULL: none). */
int reqlog_writer_open_fd_shard(struct reqlog_writer **out, int fd, const char *const *target_names, size_t ntargets,
                                unsigned flags, const struct reqlog_shard *shard);
/* Append one record. 0, KNEE_EINVAL (target >= ntargets, outcome >= OUTCOME_COUNT, protocol
 * or tls outside their enums: the record is not written), or the first write error (-errno; sticky: later calls return
 * it). In a log with gaps the record's gap list is empty (n = 0). */
int reqlog_write(struct reqlog_writer *w, const struct reqlog_record *r);
/* Append one record and its n gaps between events (ns, in arrival order). A log without
 * REQLOG_HEADER_FLAG_GAPS takes n = 0 only; n > REQLOG_MAX_GAPS is KNEE_EINVAL (nothing
 * written), as are reqlog_write's. */
int reqlog_write_gaps(struct reqlog_writer *w, const struct reqlog_record *r, const uint64_t *gaps, uint32_t n);
/* Records accepted so far. */
uint64_t reqlog_writer_count(const struct reqlog_writer *w);
/* Flush + close + free; returns the first write error (0 when all went well). NULL is a no-op. */
int reqlog_writer_close(struct reqlog_writer *w);

/* ---- reader ---- */
struct reqlog_reader;
/* Open a log: validates magic, version (newer than REQLOG_VERSION: KNEE_EVERSION), header
 * sizes and the name table. On failure returns a negative code and, when errbuf is not NULL,
 * a one-line reason such as "request log version 3 is newer than this knee reads (2): upgrade knee". */
int reqlog_reader_open(struct reqlog_reader **out, const char *path, char *errbuf, size_t errlen);
/* The same over a memory buffer (not copied: it must outlive the reader). For fuzzing. */
int reqlog_reader_open_mem(struct reqlog_reader **out, const void *data, size_t size, char *errbuf, size_t errlen);
/* Next record: 1 and *r, 0 at a clean end, or negative on error (KNEE_ETRUNC for a partial
 * last record or gap list, KNEE_EFORMAT for a field out of range or a gap list longer than
 * REQLOG_MAX_GAPS or than the record's events allow, -errno); reqlog_reader_error says which
 * record and why. */
int reqlog_read(struct reqlog_reader *rd, struct reqlog_record *r);
/* Index (0-based) of the record the last reqlog_read returned or failed on. */
uint64_t reqlog_reader_record_index(const struct reqlog_reader *rd);
const char *reqlog_reader_error(const struct reqlog_reader *rd);
unsigned reqlog_reader_version(const struct reqlog_reader *rd);
bool reqlog_reader_closed_loop(const struct reqlog_reader *rd);
/* The log carries each record's gaps (REQLOG_HEADER_FLAG_GAPS, version 2). */
bool reqlog_reader_has_gaps(const struct reqlog_reader *rd);
/* The gaps (ns) of the record the last reqlog_read returned, in arrival order: *n of them at
 * *gaps (owned by the reader, valid until the next reqlog_read); *n = 0 in a log without gaps.
 * n < events - 1 means the run cut the list at REQLOG_MAX_GAPS. */
void reqlog_read_gaps(const struct reqlog_reader *rd, const uint64_t **gaps, uint32_t *n);
/* The header's shard block: 1 and *out when the log is a shard's (or a merge of shards), 0
 * when not (no block, or count 0: *out zeroed). */
int reqlog_reader_shard(const struct reqlog_reader *rd, struct reqlog_shard *out);
size_t reqlog_reader_ntargets(const struct reqlog_reader *rd);
/* NUL-terminated target name i (< ntargets), owned by the reader. */
const char *reqlog_reader_target(const struct reqlog_reader *rd, size_t i);
/* Close and free; NULL is a no-op. */
void reqlog_reader_close(struct reqlog_reader *rd);

/* ---- the derived per-request columns (shared by the CSV writer and knee stats) ---- */
/* The CSV header knee writes for per-request output, without a trailing newline. */
#define REQLOG_CSV_HEADER                                                                                              \
    "server,start_s,latency_ms,service_ms,ttfb_ms,lag_ms,status,outcome,bytes,connection,warmup,tls_ms,protocol,tls,"  \
    "entry,first_event_ms,events"

/* Derived values; NAN when the request has no such value (a dropped request has no latency).
 *   start_s    = planned / 1e9
 *   latency_ms = (done - planned) / 1e6   when done_ns != 0
 *   service_ms = (done - sent) / 1e6      when sent_ns != 0 and done_ns != 0
 *   ttfb_ms    = (first_byte - sent) / 1e6 when sent_ns != 0 and first_byte_ns != 0
 *   lag_ms     = (sent - planned) / 1e6   when sent_ns != 0
 *   tls_ms     = tls_ns / 1e6              when tls_ns != 0
 *   first_event_ms = (first_event - planned) / 1e6 when first_event_ns != 0
 * A difference that would be negative (a corrupt record) is returned negative, not hidden. */
struct reqlog_derived {
    double start_s, latency_ms, service_ms, ttfb_ms, lag_ms, tls_ms;
    double first_event_ms;
};
void reqlog_derive(const struct reqlog_record *r, struct reqlog_derived *d);

/* Format one CSV row (columns of REQLOG_CSV_HEADER, '\n'-terminated, NUL-terminated) into buf;
 * warmup is 1 for a request planned inside --warmup (REQLOG_FLAG_WARMUP), else 0; entry is the
 * targets file's entry (0-based; empty for a fixed request); events the response's events (empty
 * when it was not timed as events).
 * Times keep nanosecond resolution (start_s %.9f, ms %.6f) so `knee stats` gives the same
 * numbers from the CSV as from the binary log; a value that does not exist is an empty cell;
 * the name is quoted when it holds a comma, quote or line break. Returns the length written,
 * or the length needed (>= len) when buf is too small, as snprintf. */
size_t reqlog_format_csv(const struct reqlog_record *r, const char *target_name, char *buf, size_t len);

#endif
