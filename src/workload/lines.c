/* The line source of src/workload: lines of a targets file or feed read through a window that
 * grows to the longest line, so reading a file of any length holds one line (or one entry) at
 * a time; plus the small helpers the readers share. */
#include "workload/internal.h"

#include "core/err.h"
#include "workload/workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WL_READ_CHUNK (64u << 10)

void wl_lines_init_fd(struct wl_lines *l, int fd, bool own_fd)
{
    memset(l, 0, sizeof *l);
    l->fd = fd;
    l->own_fd = own_fd;
    struct stat st;
    l->seekable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (l->seekable) { /* offsets are the file's (standard input may start part-way in) */
        off_t at = lseek(fd, 0, SEEK_CUR);
        l->off = at > 0 ? (uint64_t)at : 0;
    }
}

void wl_lines_init_mem(struct wl_lines *l, const char *mem, size_t len)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    l->seekable = true;
    l->mem = mem;
    l->mem_len = len;
}

void wl_lines_release(struct wl_lines *l)
{
    if (l->own_fd && l->fd >= 0)
        close(l->fd);
    free(l->buf);
    memset(l, 0, sizeof *l);
    l->fd = -1;
}

/* Read more input after buf[end]: moves the unread bytes to the front, grows the window when
 * it is full (to at most WL_MAX_LINE + 2 bytes: a full line, its "\r\n"). 1 read, 0 at end of
 * input, KNEE_ETOOBIG when the window is at its cap, -errno. */
static int fill(struct wl_lines *l)
{
    if (l->start > 0) {
        memmove(l->buf, l->buf + l->start, l->end - l->start);
        l->end -= l->start;
        l->start = 0;
    }
    if (l->cap - l->end < 2) { /* room for at least a byte and the NUL we may write */
        size_t max = (size_t)WL_MAX_LINE + 3;
        if (l->cap >= max)
            return KNEE_ETOOBIG;
        size_t ncap = l->cap ? l->cap * 2 : WL_READ_CHUNK;
        if (ncap > max)
            ncap = max;
        char *nb = realloc(l->buf, ncap);
        if (!nb)
            return -ENOMEM;
        l->buf = nb;
        l->cap = ncap;
    }
    size_t room = l->cap - l->end - 1;
    if (l->fd < 0) {
        size_t n = l->mem_len - l->mem_pos < room ? l->mem_len - l->mem_pos : room;
        memcpy(l->buf + l->end, l->mem + l->mem_pos, n);
        l->mem_pos += n;
        l->end += n;
        return n > 0;
    }
    for (;;) {
        ssize_t n = read(l->fd, l->buf + l->end, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        l->end += (size_t)n;
        return n > 0;
    }
}

int wl_lines_next(struct wl_lines *l, char **line, size_t *len, uint64_t *off)
{
    size_t scanned = 0; /* bytes after start known to hold no "\n" */
    for (;;) {
        char *s = l->buf ? l->buf + l->start : NULL;
        size_t have = l->end - l->start;
        char *nl = have > scanned ? memchr(s + scanned, '\n', have - scanned) : NULL;
        if (nl || (l->eof && have > 0)) {
            size_t n = nl ? (size_t)(nl - s) : have;
            size_t consumed = nl ? n + 1 : n;
            if (n > 0 && s[n - 1] == '\r')
                n--;
            if (n > WL_MAX_LINE)
                return KNEE_ETOOBIG;
            s[n] = '\0'; /* over the "\r" or "\n", or the spare byte fill keeps */
            *line = s;
            *len = n;
            *off = l->off;
            l->start += consumed;
            l->off += consumed;
            return 1;
        }
        if (l->eof)
            return 0;
        scanned = have;
        if (scanned > (size_t)WL_MAX_LINE + 1)
            return KNEE_ETOOBIG;
        int k = fill(l);
        if (k < 0)
            return k;
        if (k == 0)
            l->eof = true;
    }
}

int wl_lines_seek(struct wl_lines *l, uint64_t off)
{
    if (!l->seekable)
        return KNEE_EUNSUPPORTED;
    if (l->fd < 0) {
        l->mem_pos = off < l->mem_len ? (size_t)off : l->mem_len;
    } else if (lseek(l->fd, (off_t)off, SEEK_SET) < 0) {
        return -errno;
    }
    l->start = l->end = 0;
    l->off = off;
    l->eof = false;
    return 0;
}

bool wl_is_token(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            continue;
        if (!strchr("!#$%&'*+-.^_`|~", c) || c == '\0')
            return false;
    }
    return true;
}

bool wl_field_ok(const char *s, size_t len)
{
    /* eight bytes at a time (a targets file is read again on every cycle): a word with no byte
     * below 0x20 and none equal to 0x7f is fine (the "has a byte less than n" test, exact for
     * n <= 0x80); from a word with one, byte by byte (a tab is fine) */
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x, y;
        memcpy(&x, s + i, 8);
        y = x ^ (ones * 0x7f);
        if ((((x - ones * 0x20) & ~x) | ((y - ones) & ~y)) & highs)
            break;
    }
    if (i < len && i == (len & ~(size_t)7) && len >= 8) { /* the tail: the last word, overlapping */
        uint64_t x, y;
        memcpy(&x, s + len - 8, 8);
        y = x ^ (ones * 0x7f);
        if (!((((x - ones * 0x20) & ~x) | ((y - ones) & ~y)) & highs))
            return true;
    }
    for (; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return false;
    }
    return true;
}

const char *wl_quote(const char *s, size_t len, char *out, size_t outlen)
{
    size_t max = 60, o = 0;
    if (outlen < 8)
        return "";
    out[o++] = '"';
    for (size_t i = 0; i < len && i < max && o + 6 < outlen; i++)
        out[o++] = (s[i] >= 0x20 && s[i] != 0x7f) || (unsigned char)s[i] >= 0x80 ? s[i] : '?';
    if (len > max && o + 5 < outlen) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o++] = '"';
    out[o] = '\0';
    return out;
}
