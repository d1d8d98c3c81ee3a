/* A fast streaming CSV reader (RFC 4180 with the usual tolerance: CRLF or LF, a UTF-8 BOM,
 * blank lines skipped, a missing final newline) and an exact decimal number parser. Records
 * are returned one at a time with their fields split and unquoted in place in a large read
 * buffer, so reading allocates nothing per row. Every error carries the physical line number
 * it happened on. Not thread-safe: one reader per thread. */
#ifndef KNEE_CSV_CSV_H
#define KNEE_CSV_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Caps on what a file can make the reader hold (a CSV is outside input). */
struct csv_limits {
    size_t max_record; /* bytes of one record, line breaks inside quotes included */
    size_t max_field;  /* bytes of one field after unquoting */
    size_t max_fields; /* fields per record */
};
#define CSV_DEFAULT_MAX_RECORD (1u << 20)
#define CSV_DEFAULT_MAX_FIELD (64u << 10)
#define CSV_DEFAULT_MAX_FIELDS 4096u

/* One record. field[i] points at the NUL-terminated, unquoted field i inside the reader's
 * buffer (len[i] bytes; a NUL byte in the input is an error, so there is none inside).
 * Valid until the next csv_next or csv_reader_close; the caller may modify the bytes. */
struct csv_record {
    size_t n; /* number of fields (>= 1) */
    char **field;
    size_t *len;
    bool *quoted;  /* field i was quoted in the file */
    uint64_t line; /* physical line (1-based) the record starts on */
};

struct csv_reader;

/* Open a file for reading (lim NULL: the defaults above). 0, or -errno. */
int csv_reader_open(struct csv_reader **out, const char *path, const struct csv_limits *lim);
/* Read from an already open descriptor (not closed by csv_reader_close). */
int csv_reader_open_fd(struct csv_reader **out, int fd, const struct csv_limits *lim);
/* Read from memory (copied in pieces, the caller keeps ownership). For tests and fuzzing. */
int csv_reader_open_mem(struct csv_reader **out, const void *data, size_t size, const struct csv_limits *lim);

/* The next record: 1 and *rec; 0 at the end of input; negative on error:
 *   KNEE_EFORMAT  a character after a closing quote, or a NUL byte (not a text file)
 *   KNEE_ETRUNC   end of input inside a quoted field
 *   KNEE_ETOOBIG  a record, field or field count over its cap
 *   -errno        a read error
 * After an error csv_reader_error() says what and csv_reader_line() where; the reader stays
 * in the error state (further calls return the same code). */
int csv_next(struct csv_reader *r, struct csv_record *rec);
const char *csv_reader_error(const struct csv_reader *r);
/* The physical line of the last record returned, or of the error. */
uint64_t csv_reader_line(const struct csv_reader *r);
/* Bytes consumed from the input so far (for progress and throughput). */
uint64_t csv_reader_offset(const struct csv_reader *r);
void csv_reader_close(struct csv_reader *r);

/* Parse a decimal number: optional spaces, optional sign, digits with an optional '.', an
 * optional exponent (e/E, sign, digits), optional spaces; nothing else (no hex, no '_').
 * Exact: the result is the correctly rounded double, as strtod in the C locale — a fast path
 * for up to 19 significant digits with a power of ten <= 22 (Clinger 1990: both operands are
 * exact doubles and IEEE division/multiplication rounds once), strtod for everything else.
 * Returns 0, KNEE_ENAN for "nan" spellings, KNEE_EINF for "inf"/"infinity" spellings or an
 * overflow to infinity, KNEE_EFORMAT for anything that is not a number (including empty). */
int csv_parse_double(const char *s, size_t len, double *out);

#endif
