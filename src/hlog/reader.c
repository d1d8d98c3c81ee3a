/* The .hlog reader, with the semantics of the reference HistogramLogReader: comments, the
 * StartTime/BaseTime header lines, the legend, optional "Tag=" prefixes, and the rule that
 * tells relative timestamps from absolute ones. Every line is bounded (HLOG_LINE_MAX) and
 * every field checked; an error names the file and line. */
#include "hlog/hlog.h"

#include "core/err.h"
#include "hlog/codec.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define YEAR_S (365.0 * 24 * 3600)
#define READ_CHUNK 65536

struct hlog_reader {
    FILE *f;
    char *name;
    struct hlog_codec *codec;
    char *buf; /* buffered input: [pos, end) not yet consumed */
    size_t pos, end, cap;
    bool eof;
    size_t line;
    double start_time_s, base_time_s;
    bool have_start, have_base;
    char err[512];
};

struct hlog_reader *hlog_reader_new(FILE *f, const char *name)
{
    struct hlog_reader *r = xcalloc(1, sizeof *r);
    r->f = f;
    r->name = xstrdup(name ? name : "-");
    r->codec = hlog_codec_new();
    r->cap = READ_CHUNK;
    r->buf = xmalloc(r->cap);
    r->start_time_s = NAN;
    return r;
}

void hlog_reader_free(struct hlog_reader *r)
{
    if (!r)
        return;
    hlog_codec_free(r->codec);
    free(r->buf);
    free(r->name);
    free(r);
}

const char *hlog_reader_error(const struct hlog_reader *r)
{
    return r->err;
}

double hlog_reader_start_time(const struct hlog_reader *r)
{
    return r->have_start ? r->start_time_s : NAN;
}

static int errf(struct hlog_reader *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int errf(struct hlog_reader *r, int code, const char *fmt, ...)
{
    int n = snprintf(r->err, sizeof r->err, "%s:%zu: ", r->name, r->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof r->err)
        vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

/* The next line (without its '\n' and a trailing '\r'), NUL-terminated in place. Returns 1,
 * 0 at the end, or an error. */
static int next_line(struct hlog_reader *r, char **line, size_t *len)
{
    size_t scanned = r->pos;
    for (;;) {
        char *nl = memchr(r->buf + scanned, '\n', r->end - scanned);
        if (nl || (r->eof && r->end > r->pos)) {
            size_t stop = nl ? (size_t)(nl - r->buf) : r->end;
            if (!nl) { /* last line without a newline: make room for the NUL */
                if (r->end == r->cap)
                    r->buf = xrealloc(r->buf, ++r->cap);
            }
            *line = r->buf + r->pos;
            *len = stop - r->pos;
            r->buf[stop] = '\0';
            r->pos = nl ? stop + 1 : stop;
            if (!nl)
                r->end = r->pos;
            r->line++;
            if (*len && (*line)[*len - 1] == '\r')
                (*line)[--*len] = '\0';
            return 1;
        }
        if (r->eof)
            return 0;
        scanned = r->end;
        /* compact, then grow up to the cap */
        if (r->pos > 0) {
            memmove(r->buf, r->buf + r->pos, r->end - r->pos);
            scanned -= r->pos;
            r->end -= r->pos;
            r->pos = 0;
        }
        if (r->end == r->cap) {
            if (r->cap >= HLOG_LINE_MAX) {
                r->line++;
                return errf(r, KNEE_ETOOBIG, "line longer than %zu bytes", (size_t)HLOG_LINE_MAX);
            }
            r->cap = r->cap * 2 > HLOG_LINE_MAX ? HLOG_LINE_MAX : r->cap * 2;
            r->buf = xrealloc(r->buf, r->cap);
        }
        size_t got = fread(r->buf + r->end, 1, r->cap - r->end, r->f);
        r->end += got;
        if (got == 0) {
            if (ferror(r->f)) {
                r->line++;
                return errf(r, -EIO, "read error");
            }
            r->eof = true;
        }
    }
}

static bool is_delim(char c)
{
    return c == ',' || c == ' ' || c == '\t';
}

/* Split a line into at most max fields at commas/spaces (runs count as one). Returns the
 * number of fields found, or max + 1 when there are more. */
static size_t split(char *s, char **f, size_t max)
{
    size_t n = 0;
    while (*s) {
        while (*s && is_delim(*s))
            s++;
        if (!*s)
            break;
        if (n == max)
            return max + 1;
        f[n++] = s;
        while (*s && !is_delim(*s))
            s++;
        if (*s)
            *s++ = '\0';
    }
    return n;
}

/* A finite decimal number occupying the whole field. */
static bool parse_num(const char *s, double *out)
{
    if (!*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

/* "#[StartTime: 1441812279.474 (seconds …" → the number after the key, when it parses. */
static bool header_time(const char *line, const char *key, double *out)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0)
        return false;
    const char *s = line + k;
    while (*s == ' ' || *s == '\t')
        s++;
    char num[64];
    size_t n = 0;
    while (s[n] && !is_delim(s[n]) && s[n] != ']' && n < sizeof num - 1) {
        num[n] = s[n];
        n++;
    }
    num[n] = '\0';
    return parse_num(num, out);
}

/* The start of a bad field for a message, cut to the buffer. Control bytes are kept: the one
 * place errors are printed (core/err's knee_report) escapes them as \r, \n, \xNN. */
static const char *printable(const char *s, char *buf, size_t len)
{
    size_t o = 0;
    for (; *s && o + 5 < len; s++)
        buf[o++] = *s;
    buf[o] = '\0';
    return buf;
}

int hlog_reader_next(struct hlog_reader *r, struct hlog_entry *e)
{
    char *line = NULL;
    size_t len = 0;
    int rc;
    r->err[0] = '\0';
    while ((rc = next_line(r, &line, &len)) == 1) {
        if (memchr(line, '\0', len))
            return errf(r, KNEE_EFORMAT, "NUL byte in a log line");
        const char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            continue;
        if (*s == '#') {
            double t;
            if (header_time(s, "#[StartTime:", &t)) {
                r->start_time_s = t;
                r->have_start = true;
            } else if (header_time(s, "#[BaseTime:", &t)) {
                r->base_time_s = t;
                r->have_base = true;
            }
            continue;
        }
        if (strncmp(s, "\"StartTimestamp\"", 16) == 0)
            continue;
        char *f[6];
        size_t n = split(line, f, 5);
        size_t at = 0;
        e->tagged = false;
        e->tag[0] = '\0';
        if (n >= 1 && strncmp(f[0], "Tag=", 4) == 0) {
            const char *tag = f[0] + 4;
            char shown[64];
            if (!*tag)
                return errf(r, KNEE_EFORMAT, "empty tag");
            if (strlen(tag) > HLOG_TAG_MAX || !hlog_tag_valid(tag))
                return errf(r, KNEE_EFORMAT, "bad tag '%s'", printable(tag, shown, sizeof shown));
            e->tagged = true;
            memcpy(e->tag, tag, strlen(tag) + 1);
            at = 1;
        }
        if (n > at + 4)
            return errf(r, KNEE_EFORMAT, "more than 4 fields after the tag (want start,length,max,histogram)");
        if (n < at + 4)
            return errf(r, KNEE_EFORMAT, "truncated line: %zu of 4 fields (start,length,max,histogram)", n - at);
        char shown[64];
        if (!parse_num(f[at], &e->timestamp_s))
            return errf(r, KNEE_EFORMAT, "bad start timestamp '%s'", printable(f[at], shown, sizeof shown));
        if (!parse_num(f[at + 1], &e->length_s) || e->length_s < 0)
            return errf(r, KNEE_EFORMAT, "bad interval length '%s'", printable(f[at + 1], shown, sizeof shown));
        if (!parse_num(f[at + 2], &e->max_column))
            return errf(r, KNEE_EFORMAT, "bad interval max '%s'", printable(f[at + 2], shown, sizeof shown));
        /* the reference reader's time rules (HistogramLogReader) */
        if (!r->have_start) {
            r->start_time_s = e->timestamp_s;
            r->have_start = true;
        }
        if (!r->have_base) {
            r->base_time_s = e->timestamp_s < r->start_time_s - YEAR_S ? r->start_time_s : 0.0;
            r->have_base = true;
        }
        e->start_s = e->timestamp_s + r->base_time_s;
        /* in this order the common case (BaseTime == StartTime) is exact */
        e->offset_s = e->timestamp_s + (r->base_time_s - r->start_time_s);
        e->histogram = f[at + 3];
        e->histogram_len = strlen(f[at + 3]);
        e->line = r->line;
        return 1;
    }
    return rc;
}

int hlog_reader_decode(struct hlog_reader *r, const struct hlog_entry *e, struct hdr *out)
{
    bool ready = false;
    return hlog_reader_decode_reuse(r, e, out, &ready);
}

int hlog_reader_decode_reuse(struct hlog_reader *r, const struct hlog_entry *e, struct hdr *h, bool *h_ready)
{
    char why[256];
    int rc = hlog_decode_base64_reuse(r->codec, e->histogram, e->histogram_len, h, h_ready, why, sizeof why);
    if (rc) {
        size_t keep = r->line;
        r->line = e->line;
        errf(r, rc, "histogram: %s", why[0] ? why : knee_strerror(rc));
        r->line = keep;
    }
    return rc;
}
