/* The .hlog writer: the header Java's HistogramLogWriter writes (format version 1.3,
 * StartTime, BaseTime, legend) and one line per interval with its histogram compressed V2 in
 * base64. Numbers are formatted as Java's Formatter does (hdr_java_fixed), so the text is what
 * the Java writer would produce. */
#include "hlog/hlog.h"

#include "core/err.h"
#include "hlog/codec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct hlog_writer {
    FILE *f;
    struct hlog_codec *codec;
};

bool hlog_tag_valid(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++) {
        unsigned char c = (unsigned char)s[n];
        if (c <= 0x20 || c == ',' || c == 0x7f)
            return false;
    }
    return n >= 1 && n <= HLOG_TAG_MAX;
}

enum hlog_tag_kind hlog_tag_kind(const char *tag, const char **target)
{
    static const struct {
        const char *prefix;
        enum hlog_tag_kind kind;
    } K[] = {{HLOG_TAG_FIRST_EVENT, HLOG_TAG_KIND_FIRST_EVENT}, {HLOG_TAG_EVENT_GAP, HLOG_TAG_KIND_EVENT_GAP}};
    if (target)
        *target = tag;
    for (size_t i = 0; tag && i < sizeof K / sizeof *K; i++) {
        size_t n = strlen(K[i].prefix);
        if (strncmp(tag, K[i].prefix, n) == 0) {
            if (target)
                *target = tag + n;
            return K[i].kind;
        }
    }
    return HLOG_TAG_LATENCY;
}

static int write_status(FILE *f)
{
    return ferror(f) ? -EIO : 0;
}

int hlog_writer_open(struct hlog_writer **out, FILE *f, double start_time_epoch_s, const char *comment)
{
    if (!isfinite(start_time_epoch_s) || start_time_epoch_s < 0)
        return KNEE_EINVAL;
    if (comment) {
        /* one comment line: a newline inside would start a line a reader parses */
        fputs("#[", f);
        for (const char *c = comment; *c; c++)
            fputc(*c == '\n' || *c == '\r' ? ' ' : *c, f);
        fputs("]\n", f);
    } else {
        fprintf(f, "#[Logged with knee %s]\n", KNEE_VERSION);
    }
    fputs("#[Histogram log format version " HLOG_FORMAT_VERSION "]\n", f);
    char secs[64], date[64] = "";
    hdr_java_fixed(secs, sizeof secs, start_time_epoch_s, 3);
    time_t t = (time_t)start_time_epoch_s;
    struct tm tm;
    if (localtime_r(&t, &tm)) /* local time, as Java's Date.toString */
        strftime(date, sizeof date, "%a %b %d %H:%M:%S %Z %Y", &tm);
    fprintf(f, "#[StartTime: %s (seconds since epoch), %s]\n", secs, date);
    fprintf(f, "#[BaseTime: %s (seconds since epoch)]\n", secs);
    fputs("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n", f);
    int r = write_status(f);
    if (r)
        return r;
    struct hlog_writer *w = xcalloc(1, sizeof *w);
    w->f = f;
    w->codec = hlog_codec_new();
    *out = w;
    return 0;
}

int hlog_writer_write(struct hlog_writer *w, const char *tag, double start_s, double length_s, const struct hdr *h)
{
    if (tag && !hlog_tag_valid(tag))
        return KNEE_EINVAL;
    if (!isfinite(start_s) || !isfinite(length_s) || length_s < 0)
        return KNEE_EINVAL;
    const char *text;
    size_t text_len;
    int r = hlog_encode_base64(w->codec, h, &text, &text_len);
    if (r)
        return r;
    char start[64], len[64], max[64];
    hdr_java_fixed(start, sizeof start, start_s, 3);
    hdr_java_fixed(len, sizeof len, length_s, 3);
    hdr_java_fixed(max, sizeof max, (double)hdr_max(h) / HLOG_MAX_VALUE_UNIT_RATIO, 3);
    if (tag)
        fprintf(w->f, "Tag=%s,", tag);
    fprintf(w->f, "%s,%s,%s,", start, len, max);
    fwrite(text, 1, text_len, w->f);
    fputc('\n', w->f);
    return write_status(w->f);
}

int hlog_writer_close(struct hlog_writer *w)
{
    if (!w)
        return 0;
    int r = fflush(w->f) != 0 ? -errno : write_status(w->f);
    hlog_codec_free(w->codec);
    free(w);
    return r;
}
