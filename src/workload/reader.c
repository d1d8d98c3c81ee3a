/* The targets file as a stream: vegeta's http format (a "METHOD URL" line, "Header: value"
 * lines, an optional "@file" body, a blank line between entries, "#" comments) and JSON lines
 * (one object per line), read one entry at a time into storage reused from entry to entry, so
 * a file of any length costs the largest entry's memory. */
#include "workload/workload.h"

#include "core/err.h"
#include "hlog/base64.h"
#include "http/client.h"
#include "net/url.h"
#include "workload/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct wl_reader {
    enum wl_format fmt;
    struct wl_lines lines;
    char *name;     /* the file as messages name it */
    char *dir;      /* body files are relative to it ("" for the working directory) */
    char *mem;      /* wl_reader_open_mem's copy */
    uint64_t line;  /* the last line read (1-based) */
    uint64_t index; /* of the next entry */
    /* the entry being built: strings at offsets in text, pointers fixed when it is done */
    struct wl_buf text;
    size_t *hoff; /* header offsets in text */
    size_t nh, hcap;
    const char **hdrs;
    size_t hdrs_cap;
    struct wl_buf body;     /* jsonl "body" or "body_base64" */
    struct wl_buf filebody; /* the body file body_path names */
    char *body_path;        /* the last body file read, kept for the next entry naming it again */
    bool checked;           /* wl_reader_checked: URLs are not parsed again */
    int failed;             /* the error every call repeats after the first */
    char failmsg[512];
};

enum wl_format wl_format_for_path(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    if ((n >= 6 && strcmp(path + n - 6, ".jsonl") == 0) || (n >= 7 && strcmp(path + n - 7, ".ndjson") == 0))
        return WL_FORMAT_JSONL;
    return WL_FORMAT_HTTP;
}

int wl_format_parse(const char *s, enum wl_format *out)
{
    if (s && strcmp(s, "http") == 0)
        *out = WL_FORMAT_HTTP;
    else if (s && strcmp(s, "jsonl") == 0)
        *out = WL_FORMAT_JSONL;
    else
        return KNEE_EINVAL;
    return 0;
}

static int reader_new(struct wl_reader **out, const char *name, const char *dir, enum wl_format fmt)
{
    struct wl_reader *rd = calloc(1, sizeof *rd);
    if (!rd)
        return -ENOMEM;
    rd->fmt = fmt;
    rd->name = strdup(name);
    rd->dir = strdup(dir ? dir : "");
    if (!rd->name || !rd->dir) {
        free(rd->name);
        free(rd->dir);
        free(rd);
        return -ENOMEM;
    }
    *out = rd;
    return 0;
}

int wl_reader_open(struct wl_reader **out, const char *path, enum wl_format fmt, char *err, size_t errlen)
{
    *out = NULL;
    bool std_in = strcmp(path, "-") == 0;
    int fd = std_in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return knee_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
    char dir[4096] = "";
    const char *slash = std_in ? NULL : strrchr(path, '/');
    if (slash && (size_t)(slash - path) + 2 < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s/", (int)(slash - path), path);
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    struct wl_reader *rd;
    if (reader_new(&rd, std_in ? "(stdin)" : path, dir, fmt) != 0) {
        if (!std_in)
            close(fd);
        return knee_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
    }
    wl_lines_init_fd(&rd->lines, fd, !std_in);
    *out = rd;
    return 0;
}

int wl_reader_open_mem(struct wl_reader **out, const void *data, size_t size, const char *name, const char *dir,
                       enum wl_format fmt, char *err, size_t errlen)
{
    *out = NULL;
    struct wl_reader *rd;
    if (reader_new(&rd, name ? name : "(memory)", dir && *dir ? dir : "", fmt) != 0)
        return knee_fail(err, errlen, -ENOMEM, "out of memory");
    if (dir && *dir && dir[strlen(dir) - 1] != '/') {
        char *d = malloc(strlen(dir) + 2);
        if (d) {
            sprintf(d, "%s/", dir);
            free(rd->dir);
            rd->dir = d;
        }
    }
    rd->mem = malloc(size ? size : 1);
    if (!rd->mem) {
        wl_reader_close(rd);
        return knee_fail(err, errlen, -ENOMEM, "out of memory");
    }
    if (size)
        memcpy(rd->mem, data, size);
    wl_lines_init_mem(&rd->lines, rd->mem, size);
    *out = rd;
    return 0;
}

void wl_reader_checked(struct wl_reader *rd)
{
    rd->checked = true;
}

bool wl_reader_seekable(const struct wl_reader *rd)
{
    return rd->lines.seekable;
}

void wl_reader_close(struct wl_reader *rd)
{
    if (!rd)
        return;
    wl_lines_release(&rd->lines);
    free(rd->name);
    free(rd->dir);
    free(rd->mem);
    wl_buf_release(&rd->text);
    wl_buf_release(&rd->body);
    wl_buf_release(&rd->filebody);
    free(rd->hoff);
    free(rd->hdrs);
    free(rd->body_path);
    free(rd);
}

/* ---------------------------------------------------------------- building an entry */

static int buf_put(struct wl_buf *b, const char *s, size_t n)
{
    if (b->cap - b->len < n + 1) {
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap - b->len < n + 1)
            ncap *= 2;
        char *p = realloc(b->p, ncap);
        if (!p)
            return -ENOMEM;
        b->p = p;
        b->cap = ncap;
    }
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

/* A string into the entry's text, NUL-terminated; its offset in *off. */
static int put_str(struct wl_reader *rd, const char *s, size_t n, size_t *off)
{
    *off = rd->text.len;
    int k = buf_put(&rd->text, s, n);
    if (k == 0)
        rd->text.len++; /* keep the NUL */
    return k;
}

/* A header "name: value" into the entry. */
static int put_header(struct wl_reader *rd, const char *name, size_t nlen, const char *value, size_t vlen)
{
    if (rd->nh == rd->hcap) {
        size_t ncap = rd->hcap ? rd->hcap * 2 : 16;
        size_t *p = realloc(rd->hoff, ncap * sizeof *p);
        if (!p)
            return -ENOMEM;
        rd->hoff = p;
        rd->hcap = ncap;
    }
    rd->hoff[rd->nh++] = rd->text.len;
    /* "Name: value", or "Name:" for an empty value (no trailing space) */
    if (buf_put(&rd->text, name, nlen) || buf_put(&rd->text, ": ", vlen ? 2 : 1) || buf_put(&rd->text, value, vlen))
        return -ENOMEM;
    rd->text.len++;
    return 0;
}

static void entry_begin(struct wl_reader *rd, struct wl_entry *e, uint64_t off)
{
    memset(e, 0, sizeof *e);
    e->index = rd->index;
    e->line = rd->line;
    e->offset = off;
    e->weight = 1;
    rd->text.len = 0;
    rd->body.len = 0;
    rd->nh = 0;
}

/* Pointers from offsets, once the text no longer moves. */
static int entry_finish(struct wl_reader *rd, struct wl_entry *e, size_t moff, size_t uoff, size_t noff)
{
    if (rd->nh > rd->hdrs_cap) {
        const char **p = realloc(rd->hdrs, rd->nh * sizeof *p);
        if (!p)
            return -ENOMEM;
        rd->hdrs = p;
        rd->hdrs_cap = rd->nh;
    }
    for (size_t i = 0; i < rd->nh; i++)
        rd->hdrs[i] = rd->text.p + rd->hoff[i];
    e->method = rd->text.p + moff;
    e->url = rd->text.p + uoff;
    e->name = noff == SIZE_MAX ? NULL : rd->text.p + noff;
    e->headers = rd->hdrs;
    e->nheaders = rd->nh;
    rd->index++;
    return 0;
}

/* The error of the line being read: "FILE:LINE: ..." into err, kept to repeat. */
static int fail_at(struct wl_reader *rd, char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail_at(struct wl_reader *rd, char *err, size_t errlen, int code, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(rd->failmsg, sizeof rd->failmsg, "%s:%llu: %s", rd->name, (unsigned long long)rd->line, what);
    rd->failed = code;
    return knee_fail(err, errlen, code, "%s", rd->failmsg);
}

/* The next line into s and n (counted); 0 at the end, 1 read, <0 with the error set. */
static int next_line(struct wl_reader *rd, char **s, size_t *n, uint64_t *off, char *err, size_t errlen)
{
    int k = wl_lines_next(&rd->lines, s, n, off);
    if (k == 1) {
        rd->line++;
        return 1;
    }
    if (k == 0)
        return 0;
    rd->line++;
    if (k == KNEE_ETOOBIG)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "line longer than %u bytes", (unsigned)WL_MAX_LINE);
    return fail_at(rd, err, errlen, KNEE_EINVAL, "read error: %s", strerror(-k));
}

/* A URL with no placeholder must parse now; one with "{{" is checked after expansion. in_line:
 * it is part of a line check_line passed (no control byte to look for again). */
static int check_url(struct wl_reader *rd, const char *url, size_t len, bool in_line, char *err, size_t errlen)
{
    char q[80];
    if (len == 0)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "expected a URL, got nothing");
    if (!in_line && !wl_field_ok(url, len))
        return fail_at(rd, err, errlen, KNEE_EINVAL, "a control character in the URL");
    if (rd->checked || strstr(url, "{{"))
        return 0;
    struct url u;
    char why[256];
    int k = url_parse(url, &u, why, sizeof why);
    url_release(&u);
    if (k != 0)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "bad URL %s: %s", wl_quote(url, len, q, sizeof q), why);
    return 0;
}

/* The whole of fd into b (NUL-terminated), at most HTTP_CLIENT_MAX_BODY bytes: 0, -errno,
 * KNEE_ETOOBIG or -ENOMEM. */
static int read_all(struct wl_buf *b, int fd)
{
    b->len = 0;
    for (;;) {
        if (b->cap - b->len < 4097) {
            size_t ncap = b->cap < (64u << 10) ? (64u << 10) : b->cap * 2;
            char *p = realloc(b->p, ncap);
            if (!p)
                return -ENOMEM;
            b->p = p;
            b->cap = ncap;
        }
        ssize_t n = read(fd, b->p + b->len, b->cap - b->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        b->len += (size_t)n;
        if (b->len > HTTP_CLIENT_MAX_BODY)
            return KNEE_ETOOBIG;
    }
    b->p[b->len] = '\0';
    return 0;
}

/* Read path (relative to the targets file's directory unless absolute) into rd->filebody; the
 * last one read is reused when the next entry names it too (a million entries, one body). */
static int load_body_file(struct wl_reader *rd, const char *label, const char *path, char *err, size_t errlen)
{
    if (*path == '\0')
        return fail_at(rd, err, errlen, KNEE_EINVAL, "expected a file name after \"%s\"", label);
    char full[4096];
    if (snprintf(full, sizeof full, "%s%s", *path == '/' ? "" : rd->dir, path) >= (int)sizeof full)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "%s%s: path too long", label, path);
    if (rd->body_path && strcmp(rd->body_path, full) == 0)
        return 0;
    free(rd->body_path);
    rd->body_path = NULL;
    /* a regular file only: a FIFO or a device ("@/dev/stdin") would block or never end */
    int fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "%s%s: %s", label, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail_at(rd, err, errlen, KNEE_EINVAL, "%s%s: not a regular file", label, path);
    }
    int k = read_all(&rd->filebody, fd);
    close(fd);
    if (k == KNEE_ETOOBIG)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "%s%s: larger than %u bytes (the most a body may be)", label, path,
                       (unsigned)HTTP_CLIENT_MAX_BODY);
    if (k != 0)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "%s%s: %s", label, path, knee_strerror(k));
    rd->body_path = strdup(full);
    return 0;
}

/* ---------------------------------------------------------------- the http format */

static void trim(char **s, size_t *n)
{
    while (*n > 0 && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
    (*s)[*n] = '\0';
}

/* A line of the http format holds no control byte but HTAB: a CR inside a header line would
 * split it on the wire. */
static int check_line(struct wl_reader *rd, const char *s, size_t n, char *err, size_t errlen)
{
    if (wl_field_ok(s, n))
        return 0;
    size_t i = 0;
    while (i < n && ((unsigned char)s[i] >= 0x20 || s[i] == '\t') && s[i] != 0x7f)
        i++;
    if (s[i] == '\0')
        return fail_at(rd, err, errlen, KNEE_EINVAL, "a NUL byte (not a text file?)");
    return fail_at(rd, err, errlen, KNEE_EINVAL, "a control character (byte 0x%02x) at column %zu",
                   (unsigned)(unsigned char)s[i], i + 1);
}

/* The "METHOD URL" line s (trimmed, non-empty) into the entry. */
static int http_request_line(struct wl_reader *rd, char *s, size_t n, size_t *moff, size_t *uoff, char *err,
                             size_t errlen)
{
    char q[80];
    size_t m = strcspn(s, " \t");
    char *url = s + m;
    size_t ulen = n - m;
    trim(&url, &ulen);
    if (m == n || !wl_is_token(s, m) || ulen == 0 || strcspn(url, " \t") != ulen)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "expected \"METHOD URL\", got %s", wl_quote(s, n, q, sizeof q));
    int k = check_url(rd, url, ulen, true, err, errlen); /* the line was checked */
    if (k != 0)
        return k;
    if (put_str(rd, s, m, moff) != 0 || put_str(rd, url, ulen, uoff) != 0)
        return fail_at(rd, err, errlen, -ENOMEM, "out of memory");
    return 0;
}

/* One header line s (trimmed, non-empty, not "@" or "#"). */
static int http_header_line(struct wl_reader *rd, char *s, size_t n, char *err, size_t errlen)
{
    char q[80];
    char *colon = memchr(s, ':', n);
    size_t nlen = colon ? (size_t)(colon - s) : 0;
    while (nlen > 0 && (s[nlen - 1] == ' ' || s[nlen - 1] == '\t'))
        nlen--;
    if (!colon || !wl_is_token(s, nlen)) {
        size_t m = strcspn(s, " \t");
        bool request = m < n && wl_is_token(s, m) && strstr(s + m, "://");
        return fail_at(rd, err, errlen, KNEE_EINVAL,
                       "expected \"Header: value\", \"@body-file\" or a blank line, got %s%s",
                       wl_quote(s, n, q, sizeof q), request ? " (a blank line separates entries)" : "");
    }
    char *v = colon + 1;
    size_t vlen = n - (size_t)(v - s);
    trim(&v, &vlen);
    if (put_header(rd, s, nlen, v, vlen) != 0)
        return fail_at(rd, err, errlen, -ENOMEM, "out of memory");
    return 0;
}

static int http_next(struct wl_reader *rd, struct wl_entry *e, char *err, size_t errlen)
{
    char *s;
    size_t n;
    uint64_t off;
    int k;
    do {
        k = next_line(rd, &s, &n, &off, err, errlen);
        if (k <= 0)
            return k == 0 ? WL_END : k;
        trim(&s, &n);
    } while (n == 0 || *s == '#');
    entry_begin(rd, e, off);
    size_t moff = 0, uoff = 0;
    if ((k = check_line(rd, s, n, err, errlen)) != 0)
        return k;
    if ((k = http_request_line(rd, s, n, &moff, &uoff, err, errlen)) != 0)
        return k;
    while ((k = next_line(rd, &s, &n, &off, err, errlen)) == 1) {
        trim(&s, &n);
        if (n == 0)
            break;
        if (*s == '#')
            continue;
        if ((k = check_line(rd, s, n, err, errlen)) != 0)
            return k;
        if (*s == '@') {
            char *path = s + 1;
            size_t plen = n - 1;
            trim(&path, &plen);
            if ((k = load_body_file(rd, "@", path, err, errlen)) != 0)
                return k;
            e->body = rd->filebody.p;
            e->body_len = rd->filebody.len;
            break; /* the body ends the entry, as in vegeta */
        }
        if ((k = http_header_line(rd, s, n, err, errlen)) != 0)
            return k;
    }
    if (k < 0)
        return k;
    if (entry_finish(rd, e, moff, uoff, SIZE_MAX) != 0)
        return fail_at(rd, err, errlen, -ENOMEM, "out of memory");
    return 0;
}

/* ---------------------------------------------------------------- the jsonl format */

static const char *const JSONL_KEYS[] = {"method",      "url",       "headers", "body",
                                         "body_base64", "body_file", "name",    "weight"};
#define JSONL_NKEYS (sizeof JSONL_KEYS / sizeof JSONL_KEYS[0])

/* A string member's text (NULL when absent); KNEE_EINVAL when present and not a string, or
 * holding a NUL (allowed only where nul_ok: the body). */
static int json_text(struct wl_reader *rd, const json_t *o, const char *key, bool nul_ok, const char **s, size_t *n,
                     char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    *s = NULL;
    *n = 0;
    if (!v)
        return 0;
    if (!json_is_string(v))
        return fail_at(rd, err, errlen, KNEE_EINVAL, "\"%s\" must be a string", key);
    *s = json_string_value(v);
    *n = json_string_length(v);
    if (!nul_ok && memchr(*s, '\0', *n))
        return fail_at(rd, err, errlen, KNEE_EINVAL, "\"%s\" holds a NUL character", key);
    return 0;
}

static int jsonl_header(struct wl_reader *rd, const char *name, const json_t *v, char *err, size_t errlen)
{
    char q[80];
    if (!wl_is_token(name, strlen(name)))
        return fail_at(rd, err, errlen, KNEE_EINVAL, "header name %s is not an HTTP token",
                       wl_quote(name, strlen(name), q, sizeof q));
    size_t nv = json_is_array(v) ? json_array_size(v) : 1;
    for (size_t i = 0; i < nv; i++) {
        const json_t *x = json_is_array(v) ? json_array_get(v, i) : v;
        if (!json_is_string(x))
            return fail_at(rd, err, errlen, KNEE_EINVAL, "header \"%s\": a value must be a string or a list of strings",
                           name);
        const char *s = json_string_value(x);
        size_t n = json_string_length(x);
        if (!wl_field_ok(s, n))
            return fail_at(rd, err, errlen, KNEE_EINVAL,
                           "header \"%s\": a value may not hold a control character (CR, LF, NUL, ...)", name);
        if (put_header(rd, name, strlen(name), s, n) != 0)
            return fail_at(rd, err, errlen, -ENOMEM, "out of memory");
    }
    return 0;
}

/* The body of one of the three keys (at most one present). */
static int jsonl_body(struct wl_reader *rd, struct wl_entry *e, const json_t *o, char *err, size_t errlen)
{
    const char *b, *b64, *file;
    size_t nb, nb64, nfile;
    int k;
    if ((k = json_text(rd, o, "body", true, &b, &nb, err, errlen)) != 0 ||
        (k = json_text(rd, o, "body_base64", false, &b64, &nb64, err, errlen)) != 0 ||
        (k = json_text(rd, o, "body_file", false, &file, &nfile, err, errlen)) != 0)
        return k;
    if ((b != NULL) + (b64 != NULL) + (file != NULL) > 1)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "at most one of \"body\", \"body_base64\" and \"body_file\"");
    if (file) {
        if ((k = load_body_file(rd, "body_file ", file, err, errlen)) != 0)
            return k;
        e->body = rd->filebody.p;
        e->body_len = rd->filebody.len;
    } else if (b || b64) {
        rd->body.len = 0;
        if (buf_put(&rd->body, NULL, 0) != 0 || (b && buf_put(&rd->body, b, nb) != 0))
            return fail_at(rd, err, errlen, -ENOMEM, "out of memory");
        if (b64) {
            size_t need = base64_decoded_max(nb64) + 1, bad = 0, got = 0;
            if (rd->body.cap < need) {
                char *p = realloc(rd->body.p, need);
                if (!p)
                    return fail_at(rd, err, errlen, -ENOMEM, "out of memory");
                rd->body.p = p;
                rd->body.cap = need;
            }
            if (base64_decode(b64, nb64, (uint8_t *)rd->body.p, &got, &bad) != 0)
                return fail_at(rd, err, errlen, KNEE_EINVAL,
                               "\"body_base64\" is not base64 (RFC 4648, padded) at character %zu", bad + 1);
            rd->body.len = got;
            rd->body.p[got] = '\0';
        }
        e->body = rd->body.p;
        e->body_len = rd->body.len;
    }
    return 0;
}

/* The members of one jsonl object into the entry. */
static int jsonl_fields(struct wl_reader *rd, struct wl_entry *e, const json_t *o, char *err, size_t errlen)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        size_t i = 0;
        while (i < JSONL_NKEYS && strcmp(key, JSONL_KEYS[i]) != 0)
            i++;
        if (i == JSONL_NKEYS) {
            char q[80];
            return fail_at(rd, err, errlen, KNEE_EINVAL,
                           "unknown key %s (keys: method, url, headers, body, body_base64, body_file, name, weight)",
                           wl_quote(key, strlen(key), q, sizeof q));
        }
    }
    const char *m, *u, *name;
    size_t nm, nu, nname;
    size_t moff, uoff, noff = SIZE_MAX;
    int k;
    if ((k = json_text(rd, o, "method", false, &m, &nm, err, errlen)) != 0 ||
        (k = json_text(rd, o, "url", false, &u, &nu, err, errlen)) != 0 ||
        (k = json_text(rd, o, "name", false, &name, &nname, err, errlen)) != 0)
        return k;
    if (m && !wl_is_token(m, nm))
        return fail_at(rd, err, errlen, KNEE_EINVAL, "\"method\" must be an HTTP token (GET, POST, ...)");
    if (!u)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "\"url\" is required");
    if ((k = check_url(rd, u, nu, false, err, errlen)) != 0)
        return k;
    if (put_str(rd, m ? m : "GET", m ? nm : 3, &moff) != 0 || put_str(rd, u, nu, &uoff) != 0 ||
        (name && put_str(rd, name, nname, &noff) != 0))
        return fail_at(rd, err, errlen, -ENOMEM, "out of memory");
    const json_t *w = json_object_get(o, "weight");
    if (w) {
        if (!json_is_number(w) || !(json_number_value(w) > 0) || !isfinite(json_number_value(w)))
            return fail_at(rd, err, errlen, KNEE_EINVAL, "\"weight\" must be a number > 0");
        e->weight = json_number_value(w);
    }
    const json_t *h = json_object_get(o, "headers");
    if (h && !json_is_object(h))
        return fail_at(rd, err, errlen, KNEE_EINVAL, "\"headers\" must be an object (\"Name\": \"value\" or [values])");
    json_object_foreach((json_t *)h, key, v)
    {
        if ((k = jsonl_header(rd, key, v, err, errlen)) != 0)
            return k;
    }
    if ((k = jsonl_body(rd, e, o, err, errlen)) != 0)
        return k;
    if (entry_finish(rd, e, moff, uoff, noff) != 0)
        return fail_at(rd, err, errlen, -ENOMEM, "out of memory");
    return 0;
}

static int jsonl_next(struct wl_reader *rd, struct wl_entry *e, char *err, size_t errlen)
{
    char *s;
    size_t n;
    uint64_t off;
    int k;
    do {
        k = next_line(rd, &s, &n, &off, err, errlen);
        if (k <= 0)
            return k == 0 ? WL_END : k;
    } while (strspn(s, " \t") == n);
    entry_begin(rd, e, off);
    json_error_t je;
    json_t *o = json_loadb(s, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!o)
        return fail_at(rd, err, errlen, KNEE_EINVAL, "expected a JSON object: %s (column %d)", je.text, je.column);
    if (!json_is_object(o))
        k = fail_at(rd, err, errlen, KNEE_EINVAL, "expected a JSON object (one per line)");
    else
        k = jsonl_fields(rd, e, o, err, errlen);
    json_decref(o);
    return k;
}

int wl_reader_next(struct wl_reader *rd, struct wl_entry *e, char *err, size_t errlen)
{
    if (rd->failed)
        return knee_fail(err, errlen, rd->failed, "%s", rd->failmsg);
    return rd->fmt == WL_FORMAT_JSONL ? jsonl_next(rd, e, err, errlen) : http_next(rd, e, err, errlen);
}

int wl_reader_read_at(struct wl_reader *rd, uint64_t offset, uint64_t index, uint64_t line, struct wl_entry *e,
                      char *err, size_t errlen)
{
    if (!rd->lines.seekable)
        return knee_fail(err, errlen, KNEE_EUNSUPPORTED, "%s: cannot be read again (not a regular file)", rd->name);
    int k = wl_lines_seek(&rd->lines, offset);
    if (k != 0)
        return knee_fail(err, errlen, k, "%s: %s", rd->name, knee_strerror(k));
    rd->failed = 0;
    rd->line = line > 0 ? line - 1 : 0;
    rd->index = index;
    k = wl_reader_next(rd, e, err, errlen);
    if (k == WL_END)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s:%llu: no entry at byte %llu", rd->name, (unsigned long long)line,
                         (unsigned long long)offset);
    return k;
}
