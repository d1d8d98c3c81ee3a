/* The streaming CSV reader. Speed comes from three choices: 1 MiB reads into one buffer,
 * a record without a quote character is split with memchr (vectorised in libc) and never
 * copied, and fields are NUL-terminated in place. Records with quotes take a byte-by-byte
 * state machine, run twice: once to find where the record ends (refilling the buffer as
 * needed, without modifying it) and once to unquote in place, so a refill never has to
 * resume a half-rewritten record. */
#include "csv/csv.h"

#include "core/err.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CSV_CHUNK (1u << 20)

struct csv_reader {
    int fd; /* -1 for memory */
    bool own_fd;
    const unsigned char *mem;
    size_t mem_size, mem_pos;
    struct csv_limits lim;
    char *buf; /* cap + 1 bytes: room for the NUL after a last line without '\n' */
    size_t cap, start, end;
    uint64_t base_offset; /* input offset of buf[0] */
    bool eof, at_beginning;
    uint64_t line;     /* physical line of buf[start] */
    uint64_t rec_line; /* line of the last record or error */
    int err;
    char msg[256];
    /* per-record field arrays, grown up to lim.max_fields */
    char **field;
    size_t *len;
    bool *quoted;
    size_t fields_cap;
};

static int fail(struct csv_reader *r, int code, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct csv_reader *r, int code, uint64_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->err = code;
    r->rec_line = line;
    return code;
}

static int reader_new(struct csv_reader **out, const struct csv_limits *lim)
{
    struct csv_reader *r = xcalloc(1, sizeof *r);
    if (lim) {
        r->lim = *lim;
    } else {
        r->lim.max_record = CSV_DEFAULT_MAX_RECORD;
        r->lim.max_field = CSV_DEFAULT_MAX_FIELD;
        r->lim.max_fields = CSV_DEFAULT_MAX_FIELDS;
    }
    if (r->lim.max_record == 0 || r->lim.max_fields == 0) {
        free(r);
        return KNEE_EINVAL;
    }
    r->cap = r->lim.max_record + CSV_CHUNK;
    r->buf = xmalloc(r->cap + 1);
    r->line = 1;
    r->at_beginning = true;
    r->fields_cap = 16;
    r->field = xmalloc(r->fields_cap * sizeof *r->field);
    r->len = xmalloc(r->fields_cap * sizeof *r->len);
    r->quoted = xmalloc(r->fields_cap * sizeof *r->quoted);
    *out = r;
    return 0;
}

int csv_reader_open_fd(struct csv_reader **out, int fd, const struct csv_limits *lim)
{
    *out = NULL;
    int e = reader_new(out, lim);
    if (e)
        return e;
    (*out)->fd = fd;
    return 0;
}

int csv_reader_open(struct csv_reader **out, const char *path, const struct csv_limits *lim)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int e = csv_reader_open_fd(out, fd, lim);
    if (e) {
        close(fd);
        return e;
    }
    (*out)->own_fd = true;
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return 0;
}

int csv_reader_open_mem(struct csv_reader **out, const void *data, size_t size, const struct csv_limits *lim)
{
    *out = NULL;
    int e = reader_new(out, lim);
    if (e)
        return e;
    (*out)->fd = -1;
    (*out)->mem = data;
    (*out)->mem_size = size;
    return 0;
}

void csv_reader_close(struct csv_reader *r)
{
    if (!r)
        return;
    if (r->own_fd)
        close(r->fd);
    free(r->buf);
    free(r->field);
    free(r->len);
    free(r->quoted);
    free(r);
}

const char *csv_reader_error(const struct csv_reader *r)
{
    return r->err ? r->msg : "no error";
}
uint64_t csv_reader_line(const struct csv_reader *r)
{
    return r->rec_line;
}
uint64_t csv_reader_offset(const struct csv_reader *r)
{
    return r->base_offset + r->start;
}

static uint64_t count_newlines(const char *p, size_t n)
{
    uint64_t k = 0;
    const char *end = p + n;
    while ((p = memchr(p, '\n', (size_t)(end - p)))) {
        k++;
        p++;
    }
    return k;
}

/* Move the unconsumed bytes to the front and read more. 0 (eof set at the end) or an error. */
static int refill(struct csv_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->base_offset += r->start;
        r->end -= r->start;
        r->start = 0;
    }
    size_t room = r->cap - r->end;
    if (room == 0)
        return 0; /* the caller's record cap check reports this */
    size_t want = room < CSV_CHUNK ? room : CSV_CHUNK;
    size_t got;
    if (r->fd < 0) {
        size_t left = r->mem_size - r->mem_pos;
        got = want < left ? want : left;
        memcpy(r->buf + r->end, r->mem + r->mem_pos, got);
        r->mem_pos += got;
    } else {
        ssize_t k;
        do {
            k = read(r->fd, r->buf + r->end, want);
        } while (k < 0 && errno == EINTR);
        if (k < 0)
            return fail(r, -errno, r->line, "read error: %s", strerror(errno));
        got = (size_t)k;
    }
    if (got == 0) {
        r->eof = true;
        return 0;
    }
    /* A NUL byte means binary data: say so with the line it is on, before parsing it. */
    const char *nul = memchr(r->buf + r->end, '\0', got);
    if (nul) {
        uint64_t line = r->line + count_newlines(r->buf + r->start, (size_t)(nul - (r->buf + r->start)));
        r->end += got;
        return fail(r, KNEE_EFORMAT, line, "NUL byte: this is not a text file");
    }
    r->end += got;
    if (r->at_beginning && r->end - r->start >= 3) {
        if (memcmp(r->buf + r->start, "\xEF\xBB\xBF", 3) == 0)
            r->start += 3; /* a UTF-8 byte order mark, as spreadsheets write */
        r->at_beginning = false;
    }
    return 0;
}

static int add_field(struct csv_reader *r, size_t i, char *p, size_t len, bool quoted, uint64_t line)
{
    if (i >= r->lim.max_fields)
        return fail(r, KNEE_ETOOBIG, line, "more than %zu fields in one record", r->lim.max_fields);
    if (len > r->lim.max_field)
        return fail(r, KNEE_ETOOBIG, line, "field %zu is longer than %zu bytes", i + 1, r->lim.max_field);
    if (i >= r->fields_cap) {
        r->fields_cap *= 2;
        r->field = xrealloc(r->field, r->fields_cap * sizeof *r->field);
        r->len = xrealloc(r->len, r->fields_cap * sizeof *r->len);
        r->quoted = xrealloc(r->quoted, r->fields_cap * sizeof *r->quoted);
    }
    r->field[i] = p;
    r->len[i] = len;
    r->quoted[i] = quoted;
    return 0;
}

/* Split a line without quotes: fields end at commas, the line at `len` (any '\r' before the
 * '\n' already removed). */
static int split_plain(struct csv_reader *r, char *p, size_t len, uint64_t line, size_t *nout)
{
    size_t n = 0;
    char *end = p + len;
    for (;;) {
        char *c = memchr(p, ',', (size_t)(end - p));
        char *stop = c ? c : end;
        int e = add_field(r, n++, p, (size_t)(stop - p), false, line);
        if (e)
            return e;
        *stop = '\0';
        if (!c)
            break;
        p = c + 1;
    }
    *nout = n;
    return 0;
}

enum scan { SCAN_DONE, SCAN_MORE, SCAN_ERROR };

/* The quote-aware state machine over p[0..avail). With write == false it only measures:
 * *consumed = bytes of the record including its line break, *lines = line breaks inside it.
 * With write == true (only after a SCAN_DONE) it unquotes in place and records the fields. */
static enum scan scan_quoted(struct csv_reader *r, char *p, size_t avail, bool write, size_t *consumed, uint64_t *lines,
                             size_t *nfields)
{
    size_t i = 0, w = 0, n = 0;
    uint64_t nl = 0;
    uint64_t line0 = r->line;
    for (;;) {
        /* start of a field */
        size_t fstart = w;
        bool quoted = i < avail && p[i] == '"';
        if (quoted) {
            i++;
            for (;;) {
                if (i == avail) {
                    if (!r->eof)
                        return SCAN_MORE;
                    fail(r, KNEE_ETRUNC, line0, "end of input inside a quoted field (it opens on line %llu)",
                         (unsigned long long)line0);
                    return SCAN_ERROR;
                }
                char c = p[i];
                if (c == '"') {
                    if (i + 1 == avail && !r->eof)
                        return SCAN_MORE;
                    if (i + 1 < avail && p[i + 1] == '"') {
                        if (write)
                            p[w] = '"';
                        w++;
                        i += 2;
                        continue;
                    }
                    i++; /* the closing quote */
                    break;
                }
                if (c == '\n')
                    nl++;
                if (write)
                    p[w] = c;
                w++;
                i++;
            }
            /* after a closing quote: a comma, the end of the line (LF or CRLF), or the end */
            if (i == avail && !r->eof)
                return SCAN_MORE;
            if (i < avail && p[i] == '\r') {
                if (i + 1 == avail && !r->eof)
                    return SCAN_MORE;
                if (i + 1 == avail || p[i + 1] == '\n')
                    i++; /* the CR of a CRLF, or a lone CR at the very end */
            }
            if (i < avail && p[i] != ',' && p[i] != '\n') {
                char c = p[i];
                fail(r, KNEE_EFORMAT, line0 + nl,
                     "unexpected '%c' after a closing quote (a quote inside a quoted field is written \"\")",
                     c ? c : '?'); /* printed through knee_report, which escapes control bytes */
                return SCAN_ERROR;
            }
        } else {
            while (i < avail && p[i] != ',' && p[i] != '\n') {
                if (write)
                    p[w] = p[i];
                w++;
                i++;
            }
            if (i == avail && !r->eof)
                return SCAN_MORE;
            /* a '\r' right before the line break belongs to the CRLF */
            if (i < avail && p[i] == '\n' && w > fstart && p[i - 1] == '\r')
                w--;
            else if (i == avail && w > fstart && p[i - 1] == '\r')
                w--;
        }
        if (write) {
            if (add_field(r, n, p + fstart, w - fstart, quoted, line0) != 0)
                return SCAN_ERROR;
        } else if (n >= r->lim.max_fields) {
            fail(r, KNEE_ETOOBIG, line0, "more than %zu fields in one record", r->lim.max_fields);
            return SCAN_ERROR;
        } else if (w - fstart > r->lim.max_field) {
            fail(r, KNEE_ETOOBIG, line0, "field %zu is longer than %zu bytes", n + 1, r->lim.max_field);
            return SCAN_ERROR;
        }
        n++;
        bool end_of_record = i == avail || p[i] == '\n';
        if (write)
            p[w] = '\0'; /* overwrites the delimiter already read, or the spare byte at the end */
        w++;
        if (end_of_record) {
            *consumed = i < avail ? i + 1 : i;
            *lines = nl;
            *nfields = n;
            return SCAN_DONE;
        }
        i++; /* the comma */
    }
}

int csv_next(struct csv_reader *r, struct csv_record *rec)
{
    if (r->err)
        return r->err;
    for (;;) {
        size_t avail = r->end - r->start;
        if (avail == 0 || r->at_beginning) {
            if (r->eof) {
                if (avail == 0)
                    return 0;
                r->at_beginning = false;
            } else {
                int e = refill(r);
                if (e)
                    return e;
                continue;
            }
        }
        char *p = r->buf + r->start;
        char *nl = memchr(p, '\n', avail);
        if (!nl && !r->eof) {
            if (avail > r->lim.max_record)
                return fail(r, KNEE_ETOOBIG, r->line, "a line longer than %zu bytes", r->lim.max_record);
            int e = refill(r);
            if (e)
                return e;
            continue;
        }
        size_t linelen = nl ? (size_t)(nl - p) : avail;
        if (linelen > r->lim.max_record)
            return fail(r, KNEE_ETOOBIG, r->line, "a line longer than %zu bytes", r->lim.max_record);
        if (!memchr(p, '"', linelen)) {
            size_t len = linelen;
            if (len > 0 && p[len - 1] == '\r')
                len--;
            size_t consumed = linelen + (nl ? 1 : 0);
            if (len == 0) { /* a blank line: skipped, as Python's csv module does */
                r->start += consumed;
                r->line++;
                continue;
            }
            size_t n;
            int e = split_plain(r, p, len, r->line, &n);
            if (e)
                return e;
            rec->n = n;
            rec->line = r->rec_line = r->line;
            r->start += consumed;
            r->line++;
            break;
        }
        size_t consumed = 0, n = 0;
        uint64_t lines = 0;
        enum scan s = scan_quoted(r, p, avail, false, &consumed, &lines, &n);
        if (s == SCAN_ERROR)
            return r->err;
        if (s == SCAN_MORE) {
            if (avail > r->lim.max_record)
                return fail(r, KNEE_ETOOBIG, r->line, "a record longer than %zu bytes", r->lim.max_record);
            int e = refill(r);
            if (e)
                return e;
            continue;
        }
        if (consumed > r->lim.max_record + 1)
            return fail(r, KNEE_ETOOBIG, r->line, "a record longer than %zu bytes", r->lim.max_record);
        scan_quoted(r, p, avail, true, &consumed, &lines, &n);
        rec->n = n;
        rec->line = r->rec_line = r->line;
        r->start += consumed;
        r->line += lines + 1;
        break;
    }
    rec->field = r->field;
    rec->len = r->len;
    rec->quoted = r->quoted;
    return 1;
}

/* ---------------------------------------------------------------- numbers */

static const double pow10_exact[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static bool ci_equal(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != word[i])
            return false;
    }
    return true;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

int csv_parse_double(const char *s, size_t len, double *out)
{
    while (len > 0 && is_space(s[0])) {
        s++;
        len--;
    }
    while (len > 0 && is_space(s[len - 1]))
        len--;
    if (len == 0)
        return KNEE_EFORMAT;
    size_t i = 0;
    bool neg = false;
    if (s[i] == '+' || s[i] == '-') {
        neg = s[i] == '-';
        i++;
    }
    if (i < len && (s[i] < '0' || s[i] > '9') && s[i] != '.') {
        const char *w = s + i;
        size_t wl = len - i;
        if (ci_equal(w, wl, "nan"))
            return KNEE_ENAN;
        if (ci_equal(w, wl, "inf") || ci_equal(w, wl, "infinity"))
            return KNEE_EINF;
        return KNEE_EFORMAT;
    }
    uint64_t mant = 0;
    int sig = 0;          /* significant digits taken into mant */
    bool dropped = false; /* a non-zero digit beyond 19 significant ones */
    int exp10 = 0;
    size_t ndigits = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, ndigits++) {
        if (sig < 19) {
            mant = mant * 10 + (uint64_t)(s[i] - '0');
            if (mant)
                sig++;
        } else {
            exp10++;
            dropped |= s[i] != '0';
        }
    }
    if (i < len && s[i] == '.') {
        i++;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, ndigits++) {
            if (sig < 19) {
                mant = mant * 10 + (uint64_t)(s[i] - '0');
                if (mant)
                    sig++;
                exp10--;
            } else {
                dropped |= s[i] != '0';
            }
        }
    }
    if (ndigits == 0)
        return KNEE_EFORMAT;
    bool big_exp = false;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '+' || s[i] == '-')) {
            eneg = s[i] == '-';
            i++;
        }
        if (i == len || s[i] < '0' || s[i] > '9')
            return KNEE_EFORMAT;
        int e = 0;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            if (e < 100000)
                e = e * 10 + (s[i] - '0');
            else
                big_exp = true;
        }
        exp10 += eneg ? -e : e;
    }
    if (i != len)
        return KNEE_EFORMAT;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
    dropped = true; /* excess precision would round twice: always take strtod */
#endif
    if (!dropped && !big_exp && mant <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
        double v = (double)mant;
        v = exp10 < 0 ? v / pow10_exact[-exp10] : v * pow10_exact[exp10];
        *out = neg ? -v : v;
        return 0;
    }
    /* The slow path: the syntax is already checked, so strtod reads exactly these bytes. */
    char small[128];
    char *copy = len < sizeof small ? small : xmalloc(len + 1);
    memcpy(copy, s, len);
    copy[len] = '\0';
    char *end;
    double v = strtod(copy, &end);
    bool whole = (size_t)(end - copy) == len;
    if (copy != small)
        free(copy);
    if (!whole)
        return KNEE_EFORMAT;
    if (v == HUGE_VAL || v == -HUGE_VAL)
        return KNEE_EINF;
    *out = v;
    return 0;
}
