/* The binary request log: writer, reader and the derived columns. Bytes are encoded one by
 * one in little-endian order (never by writing a struct), so the format does not depend on
 * the compiler's padding or the host's byte order. */
#include "reqlog/reqlog.h"

#include "core/err.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WRITER_BUF 65536
#define READER_BUF 65536

static const char *const outcome_names[] = {
    "ok", "rejected", "http_error", "invalid", "transport", "timeout", "dropped", "cancelled",
};
_Static_assert(sizeof outcome_names / sizeof *outcome_names == OUTCOME_COUNT,
               "outcome_names is indexed by enum reqlog_outcome");

const char *reqlog_outcome_name(enum reqlog_outcome o)
{
    if ((unsigned)o >= OUTCOME_COUNT)
        return "unknown";
    return outcome_names[o];
}

bool reqlog_outcome_parse(const char *name, size_t len, enum reqlog_outcome *out)
{
    for (int i = 0; i < OUTCOME_COUNT; i++)
        if (strlen(outcome_names[i]) == len && memcmp(outcome_names[i], name, len) == 0) {
            *out = (enum reqlog_outcome)i;
            return true;
        }
    return false;
}

bool reqlog_is_log(const void *head, size_t n)
{
    return n >= REQLOG_MAGIC_LEN && memcmp(head, REQLOG_MAGIC, REQLOG_MAGIC_LEN) == 0;
}

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void encode_record(uint8_t *p, const struct reqlog_record *r)
{
    put_u64(p + 0, r->planned_ns);
    put_u64(p + 8, r->sent_ns);
    put_u64(p + 16, r->first_byte_ns);
    put_u64(p + 24, r->done_ns);
    put_u64(p + 32, r->connect_ns);
    put_u64(p + 40, r->bytes);
    put_u32(p + 48, r->target);
    put_u32(p + 52, r->connection);
    put_u16(p + 56, r->status);
    p[58] = r->outcome;
    p[59] = r->flags;
    put_u64(p + 60, r->tls_ns);
    p[68] = r->protocol;
    p[69] = r->tls;
    p[70] = p[71] = 0;
    put_u64(p + 72, r->entry);
    put_u64(p + 80, r->first_event_ns);
    put_u32(p + 88, r->events);
    put_u32(p + 92, 0);
}

static void decode_record(const uint8_t *p, struct reqlog_record *r)
{
    r->planned_ns = get_u64(p + 0);
    r->sent_ns = get_u64(p + 8);
    r->first_byte_ns = get_u64(p + 16);
    r->done_ns = get_u64(p + 24);
    r->connect_ns = get_u64(p + 32);
    r->bytes = get_u64(p + 40);
    r->target = get_u32(p + 48);
    r->connection = get_u32(p + 52);
    r->status = get_u16(p + 56);
    r->outcome = p[58];
    r->flags = p[59];
    r->tls_ns = get_u64(p + 60);
    r->protocol = p[68];
    r->tls = p[69];
    r->entry = get_u64(p + 72);
    r->first_event_ns = get_u64(p + 80);
    r->events = get_u32(p + 88);
}

/* ---------------------------------------------------------------- writer */

struct reqlog_writer {
    int fd;
    bool own_fd; /* opened here (reqlog_writer_open): closed by reqlog_writer_close */
    int err;     /* first write error, sticky */
    bool gaps;   /* REQLOG_HEADER_FLAG_GAPS: each record followed by its gap list */
    size_t ntargets;
    uint64_t count;
    size_t used;
    uint8_t buf[WRITER_BUF];
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int writer_flush(struct reqlog_writer *w)
{
    if (w->err == 0 && w->used > 0)
        w->err = write_all(w->fd, w->buf, w->used);
    w->used = 0;
    return w->err;
}

/* Append bytes through the buffer (the header can be larger than the buffer). */
static int writer_put(struct reqlog_writer *w, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n > 0 && w->err == 0) {
        size_t room = WRITER_BUF - w->used;
        size_t k = n < room ? n : room;
        memcpy(w->buf + w->used, p, k);
        w->used += k;
        p += k;
        n -= k;
        if (w->used == WRITER_BUF)
            writer_flush(w);
    }
    return w->err;
}

static void encode_shard(uint8_t *p, const struct reqlog_shard *sh)
{
    memset(p, 0, REQLOG_SHARD_BLOCK_SIZE);
    if (!sh)
        return;
    put_u32(p + 0, sh->index);
    put_u32(p + 4, sh->count);
    put_u64(p + 8, sh->start_at_unix_ns);
    put_u64(p + 16, sh->plan_id);
}

/* The names (and the shard block, when there is one) fit the header's caps: its size in
 * bytes, or 0 when they do not. */
static size_t header_size_of(const char *const *target_names, size_t ntargets, const struct reqlog_shard *shard)
{
    size_t header_size = REQLOG_FIXED_HEADER_SIZE + (shard ? REQLOG_SHARD_BLOCK_SIZE : 0);
    if (ntargets > REQLOG_MAX_TARGETS || (ntargets > 0 && !target_names))
        return 0;
    for (size_t i = 0; i < ntargets; i++) {
        if (!target_names[i])
            return 0;
        size_t len = strlen(target_names[i]);
        if (len > REQLOG_MAX_NAME_LEN)
            return 0;
        header_size += 2 + len;
    }
    return header_size > REQLOG_MAX_HEADER_SIZE ? 0 : header_size;
}

/* Write the header to fd; *out on success. The fd is closed on failure only when owned. */
static int writer_start(struct reqlog_writer **out, int fd, bool own_fd, size_t header_size,
                        const char *const *target_names, size_t ntargets, unsigned flags,
                        const struct reqlog_shard *shard)
{
    struct reqlog_writer *w = xcalloc(1, sizeof *w);
    w->fd = fd;
    w->own_fd = own_fd;
    w->ntargets = ntargets;
    w->gaps = (flags & REQLOG_HEADER_FLAG_GAPS) != 0;

    uint8_t fixed[REQLOG_FIXED_HEADER_SIZE];
    memcpy(fixed, REQLOG_MAGIC, REQLOG_MAGIC_LEN);
    /* a log without gaps stays version 1, byte for byte: every older knee reads it */
    put_u16(fixed + 8, w->gaps ? REQLOG_VERSION_GAPS : 1);
    put_u16(fixed + 10, (uint16_t)flags);
    put_u32(fixed + 12, (uint32_t)header_size);
    put_u32(fixed + 16, REQLOG_RECORD_SIZE);
    put_u32(fixed + 20, (uint32_t)ntargets);
    writer_put(w, fixed, sizeof fixed);
    for (size_t i = 0; i < ntargets; i++) {
        uint8_t len[2];
        size_t n = strlen(target_names[i]);
        put_u16(len, (uint16_t)n);
        writer_put(w, len, 2);
        writer_put(w, target_names[i], n);
    }
    uint8_t block[REQLOG_SHARD_BLOCK_SIZE];
    encode_shard(block, shard);
    if (shard)
        writer_put(w, block, sizeof block);
    int err = writer_flush(w); /* the header reaches the file even if the run dies early */
    if (err) {
        if (own_fd)
            close(fd);
        free(w);
        return err;
    }
    *out = w;
    return 0;
}

int reqlog_writer_open(struct reqlog_writer **out, const char *path, const char *const *target_names, size_t ntargets,
                       unsigned flags)
{
    return reqlog_writer_open_shard(out, path, target_names, ntargets, flags, NULL);
}

int reqlog_writer_open_shard(struct reqlog_writer **out, const char *path, const char *const *target_names,
                             size_t ntargets, unsigned flags, const struct reqlog_shard *shard)
{
    *out = NULL;
    size_t header_size = header_size_of(target_names, ntargets, shard);
    if (!header_size || (flags & ~REQLOG_HEADER_FLAGS_KNOWN))
        return KNEE_EINVAL;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    return writer_start(out, fd, true, header_size, target_names, ntargets, flags, shard);
}

int reqlog_writer_open_fd(struct reqlog_writer **out, int fd, const char *const *target_names, size_t ntargets,
                          unsigned flags)
{
    return reqlog_writer_open_fd_shard(out, fd, target_names, ntargets, flags, NULL);
}

int reqlog_writer_open_fd_shard(struct reqlog_writer **out, int fd, const char *const *target_names, size_t ntargets,
                                unsigned flags, const struct reqlog_shard *shard)
{
    *out = NULL;
    size_t header_size = header_size_of(target_names, ntargets, shard);
    if (!header_size || (flags & ~REQLOG_HEADER_FLAGS_KNOWN))
        return KNEE_EINVAL;
    if (fd < 0)
        return -EBADF;
    return writer_start(out, fd, false, header_size, target_names, ntargets, flags, shard);
}

int reqlog_write(struct reqlog_writer *w, const struct reqlog_record *r)
{
    return reqlog_write_gaps(w, r, NULL, 0);
}

int reqlog_write_gaps(struct reqlog_writer *w, const struct reqlog_record *r, const uint64_t *gaps, uint32_t n)
{
    if (w->err)
        return w->err;
    if (r->target >= w->ntargets || r->outcome >= OUTCOME_COUNT || r->protocol >= REQLOG_PROTO_COUNT ||
        r->tls >= REQLOG_TLS_COUNT || (n && (!w->gaps || !gaps)) || n > REQLOG_MAX_GAPS)
        return KNEE_EINVAL;
    if (w->used + REQLOG_RECORD_SIZE + 4 > WRITER_BUF && writer_flush(w))
        return w->err;
    encode_record(w->buf + w->used, r);
    w->used += REQLOG_RECORD_SIZE;
    if (w->gaps) {
        put_u32(w->buf + w->used, n);
        w->used += 4;
        /* a gap list can be larger than the buffer: through writer_put, a block at a time */
        uint8_t block[512];
        for (uint32_t i = 0; i < n && !w->err;) {
            size_t k = 0;
            for (; k + 8 <= sizeof block && i < n; k += 8, i++)
                put_u64(block + k, gaps[i]);
            writer_put(w, block, k);
        }
        if (w->err)
            return w->err;
    }
    w->count++;
    return 0;
}

uint64_t reqlog_writer_count(const struct reqlog_writer *w)
{
    return w->count;
}

int reqlog_writer_close(struct reqlog_writer *w)
{
    if (!w)
        return 0;
    writer_flush(w);
    int err = w->err;
    if (w->own_fd && close(w->fd) != 0 && err == 0)
        err = -errno;
    free(w);
    return err;
}

/* ---------------------------------------------------------------- reader */

struct reqlog_reader {
    int fd;             /* -1 for a memory reader */
    const uint8_t *mem; /* memory reader: the whole input */
    size_t mem_size, mem_pos;
    unsigned version;
    uint16_t header_flags;
    bool has_gaps; /* REQLOG_HEADER_FLAG_GAPS: a gap list after each record */
    struct reqlog_shard shard;
    uint32_t record_size;
    size_t ntargets;
    char **names;
    uint64_t index; /* records returned so far (index of the next one) */
    uint64_t last_index;
    uint64_t *gaps; /* the last record's gap list, grown as its bytes arrive */
    uint32_t ngaps;
    size_t gaps_cap;
    uint8_t *buf; /* file reader: READER_BUF bytes (a multiple of nothing in particular) */
    size_t buf_len, buf_pos;
    bool eof;
    char err[256];
};

static void set_err(struct reqlog_reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(struct reqlog_reader *rd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rd->err, sizeof rd->err, fmt, ap);
    va_end(ap);
}

/* Read exactly n bytes into dst (or fewer at end of input). Returns bytes read or -errno. */
static long reader_get(struct reqlog_reader *rd, uint8_t *dst, size_t n)
{
    if (rd->fd < 0) {
        size_t left = rd->mem_size - rd->mem_pos;
        size_t k = n < left ? n : left;
        memcpy(dst, rd->mem + rd->mem_pos, k);
        rd->mem_pos += k;
        return (long)k;
    }
    size_t got = 0;
    while (got < n) {
        if (rd->buf_pos == rd->buf_len) {
            if (rd->eof)
                break;
            ssize_t k = read(rd->fd, rd->buf, READER_BUF);
            if (k < 0) {
                if (errno == EINTR)
                    continue;
                return -errno;
            }
            if (k == 0) {
                rd->eof = true;
                break;
            }
            rd->buf_len = (size_t)k;
            rd->buf_pos = 0;
        }
        size_t avail = rd->buf_len - rd->buf_pos;
        size_t k = n - got < avail ? n - got : avail;
        memcpy(dst + got, rd->buf + rd->buf_pos, k);
        rd->buf_pos += k;
        got += k;
    }
    return (long)got;
}

static int fail_open(struct reqlog_reader *rd, int code, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        snprintf(errbuf, errlen, "%s", rd->err[0] ? rd->err : knee_strerror(code));
    reqlog_reader_close(rd);
    return code;
}

static int reader_header(struct reqlog_reader *rd)
{
    uint8_t fixed[REQLOG_FIXED_HEADER_SIZE];
    long k = reader_get(rd, fixed, sizeof fixed);
    if (k < 0) {
        set_err(rd, "%s", knee_strerror((int)k));
        return (int)k;
    }
    if ((size_t)k < REQLOG_MAGIC_LEN || memcmp(fixed, REQLOG_MAGIC, REQLOG_MAGIC_LEN) != 0) {
        set_err(rd, "not a knee request log (bad magic)");
        return KNEE_EFORMAT;
    }
    if ((size_t)k < sizeof fixed) {
        set_err(rd, "truncated header (%ld of %d bytes)", k, REQLOG_FIXED_HEADER_SIZE);
        return KNEE_ETRUNC;
    }
    rd->version = get_u16(fixed + 8);
    rd->header_flags = get_u16(fixed + 10);
    uint32_t header_size = get_u32(fixed + 12);
    rd->record_size = get_u32(fixed + 16);
    uint32_t ntargets = get_u32(fixed + 20);
    if (rd->version == 0) {
        set_err(rd, "version 0 is not a valid request log version");
        return KNEE_EFORMAT;
    }
    if (rd->version > REQLOG_VERSION) {
        set_err(rd, "request log version %u is newer than this knee reads (%u): upgrade knee", rd->version,
                REQLOG_VERSION);
        return KNEE_EVERSION;
    }
    rd->has_gaps = (rd->header_flags & REQLOG_HEADER_FLAG_GAPS) != 0;
    if (rd->has_gaps && rd->version < REQLOG_VERSION_GAPS) {
        set_err(rd, "version %u with the gaps flag (gap lists need version %d)", rd->version, REQLOG_VERSION_GAPS);
        return KNEE_EFORMAT;
    }
    if (rd->record_size < REQLOG_RECORD_SIZE_MIN || rd->record_size > REQLOG_MAX_RECORD_SIZE) {
        set_err(rd, "record size %u outside %d..%u", rd->record_size, REQLOG_RECORD_SIZE_MIN, REQLOG_MAX_RECORD_SIZE);
        return KNEE_EFORMAT;
    }
    if (ntargets > REQLOG_MAX_TARGETS) {
        set_err(rd, "%u targets (at most %u)", ntargets, REQLOG_MAX_TARGETS);
        return KNEE_ETOOBIG;
    }
    if (header_size < REQLOG_FIXED_HEADER_SIZE + 2ull * ntargets || header_size > REQLOG_MAX_HEADER_SIZE) {
        set_err(rd, "header size %u does not fit %u targets (or exceeds %u)", header_size, ntargets,
                REQLOG_MAX_HEADER_SIZE);
        return KNEE_EFORMAT;
    }
    rd->names = xcalloc(ntargets ? ntargets : 1, sizeof *rd->names);
    rd->ntargets = ntargets;
    size_t left = header_size - REQLOG_FIXED_HEADER_SIZE;
    for (uint32_t i = 0; i < ntargets; i++) {
        uint8_t lenb[2];
        if (reader_get(rd, lenb, 2) != 2) {
            set_err(rd, "truncated header (name %u of %u)", i, ntargets);
            return KNEE_ETRUNC;
        }
        size_t len = get_u16(lenb);
        if (len > REQLOG_MAX_NAME_LEN || 2 + len > left) {
            set_err(rd, "target name %u: length %zu does not fit the header", i, len);
            return KNEE_EFORMAT;
        }
        left -= 2 + len;
        rd->names[i] = xmalloc(len + 1);
        long got = reader_get(rd, (uint8_t *)rd->names[i], len);
        if (got < 0 || (size_t)got != len) {
            set_err(rd, "truncated header (name %u of %u)", i, ntargets);
            return KNEE_ETRUNC;
        }
        rd->names[i][len] = '\0';
        if (memchr(rd->names[i], '\0', len)) {
            set_err(rd, "target name %u contains a NUL byte", i);
            return KNEE_EFORMAT;
        }
    }
    if (left >= REQLOG_SHARD_BLOCK_SIZE) { /* the shard block (zeros: not a shard's log) */
        uint8_t block[REQLOG_SHARD_BLOCK_SIZE];
        if (reader_get(rd, block, sizeof block) != (long)sizeof block) {
            set_err(rd, "truncated header (shard block)");
            return KNEE_ETRUNC;
        }
        left -= sizeof block;
        rd->shard.index = get_u32(block);
        rd->shard.count = get_u32(block + 4);
        rd->shard.start_at_unix_ns = get_u64(block + 8);
        rd->shard.plan_id = get_u64(block + 16);
        if (rd->shard.count && rd->shard.index >= rd->shard.count && rd->shard.index != REQLOG_SHARD_MERGED) {
            set_err(rd, "shard %u of %u: the index must be below the count", rd->shard.index, rd->shard.count);
            return KNEE_EFORMAT;
        }
    }
    /* Later minor revisions may append header fields: skip what this reader does not know. */
    while (left > 0) {
        uint8_t skip[256];
        size_t n = left < sizeof skip ? left : sizeof skip;
        if (reader_get(rd, skip, n) != (long)n) {
            set_err(rd, "truncated header");
            return KNEE_ETRUNC;
        }
        left -= n;
    }
    return 0;
}

static int reader_open_common(struct reqlog_reader *rd, struct reqlog_reader **out, char *errbuf, size_t errlen)
{
    int err = reader_header(rd);
    if (err)
        return fail_open(rd, err, errbuf, errlen);
    *out = rd;
    return 0;
}

int reqlog_reader_open(struct reqlog_reader **out, const char *path, char *errbuf, size_t errlen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = -errno;
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "%s", knee_strerror(e));
        return e;
    }
    struct reqlog_reader *rd = xcalloc(1, sizeof *rd);
    rd->fd = fd;
    rd->buf = xmalloc(READER_BUF);
    return reader_open_common(rd, out, errbuf, errlen);
}

int reqlog_reader_open_mem(struct reqlog_reader **out, const void *data, size_t size, char *errbuf, size_t errlen)
{
    *out = NULL;
    struct reqlog_reader *rd = xcalloc(1, sizeof *rd);
    rd->fd = -1;
    rd->mem = data;
    rd->mem_size = size;
    return reader_open_common(rd, out, errbuf, errlen);
}

/* The gap list after record r: its count (capped, and no more than its events allow), then the
 * gaps, read a block at a time so a count the bytes do not back allocates nothing big. */
static int read_gaps(struct reqlog_reader *rd, const struct reqlog_record *r)
{
    unsigned long long idx = (unsigned long long)rd->index;
    uint8_t nb[4];
    long k = reader_get(rd, nb, sizeof nb);
    if (k < 0) {
        set_err(rd, "record %llu: %s", idx, knee_strerror((int)k));
        return (int)k;
    }
    if (k < (long)sizeof nb) {
        set_err(rd, "record %llu: its gap count is truncated (%ld of 4 bytes): the writer did not finish", idx, k);
        return KNEE_ETRUNC;
    }
    uint32_t n = get_u32(nb);
    if (n > REQLOG_MAX_GAPS) {
        set_err(rd, "record %llu: %u gaps (at most %u)", idx, n, REQLOG_MAX_GAPS);
        return KNEE_EFORMAT;
    }
    /* a response of E events has at most E - 1 gaps (events holds E + 1; 0: not timed) */
    if (n && (r->events < 2 || n > r->events - 2)) {
        if (r->events)
            set_err(rd, "record %llu: %u gaps, but only %u events", idx, n, r->events - 1);
        else
            set_err(rd, "record %llu: %u gaps, but it was not timed as events", idx, n);
        return KNEE_EFORMAT;
    }
    for (uint32_t got = 0; got < n;) {
        uint8_t block[8 * 1024];
        uint32_t want = n - got < sizeof block / 8 ? n - got : (uint32_t)(sizeof block / 8);
        if (got + want > rd->gaps_cap) {
            rd->gaps_cap = rd->gaps_cap ? rd->gaps_cap * 2 : 64;
            while (rd->gaps_cap < (size_t)got + want)
                rd->gaps_cap *= 2;
            rd->gaps = xrealloc(rd->gaps, rd->gaps_cap * sizeof *rd->gaps);
        }
        k = reader_get(rd, block, (size_t)want * 8);
        if (k < 0) {
            set_err(rd, "record %llu: %s", idx, knee_strerror((int)k));
            return (int)k;
        }
        if (k < (long)want * 8) {
            set_err(rd, "record %llu: its gap list is truncated (%llu of %u gaps): the writer did not finish", idx,
                    (unsigned long long)got + (unsigned long long)k / 8, n);
            return KNEE_ETRUNC;
        }
        for (uint32_t i = 0; i < want; i++)
            rd->gaps[got + i] = get_u64(block + 8 * i);
        got += want;
    }
    rd->ngaps = n;
    return 0;
}

int reqlog_read(struct reqlog_reader *rd, struct reqlog_record *r)
{
    uint8_t rec[REQLOG_MAX_RECORD_SIZE];
    rd->last_index = rd->index;
    rd->ngaps = 0;
    long k = reader_get(rd, rec, rd->record_size);
    if (k < 0) {
        set_err(rd, "record %llu: %s", (unsigned long long)rd->index, knee_strerror((int)k));
        return (int)k;
    }
    if (k == 0)
        return 0;
    if ((size_t)k < rd->record_size) {
        set_err(rd, "record %llu is truncated (%ld of %u bytes): the writer did not finish",
                (unsigned long long)rd->index, k, rd->record_size);
        return KNEE_ETRUNC;
    }
    /* a 60-byte record (before tls_ns, protocol, tls were appended) reads them as 0 */
    if (rd->record_size < REQLOG_RECORD_SIZE)
        memset(rec + rd->record_size, 0, REQLOG_RECORD_SIZE - rd->record_size);
    decode_record(rec, r);
    if (r->protocol >= REQLOG_PROTO_COUNT || r->tls >= REQLOG_TLS_COUNT) {
        set_err(rd, "record %llu: protocol %u or tls %u is not defined", (unsigned long long)rd->index, r->protocol,
                r->tls);
        return KNEE_EFORMAT;
    }
    if (r->target >= rd->ntargets) {
        set_err(rd, "record %llu: target %u, but the header names %zu", (unsigned long long)rd->index, r->target,
                rd->ntargets);
        return KNEE_EFORMAT;
    }
    if (r->outcome >= OUTCOME_COUNT) {
        set_err(rd, "record %llu: outcome %u is not defined", (unsigned long long)rd->index, r->outcome);
        return KNEE_EFORMAT;
    }
    if (r->flags & ~REQLOG_FLAGS_KNOWN) {
        set_err(rd, "record %llu: unknown flags 0x%02x", (unsigned long long)rd->index, r->flags);
        return KNEE_EFORMAT;
    }
    if (rd->has_gaps) {
        int e = read_gaps(rd, r);
        if (e)
            return e;
    }
    rd->index++;
    return 1;
}

uint64_t reqlog_reader_record_index(const struct reqlog_reader *rd)
{
    return rd->last_index;
}
const char *reqlog_reader_error(const struct reqlog_reader *rd)
{
    return rd->err[0] ? rd->err : "no error";
}
unsigned reqlog_reader_version(const struct reqlog_reader *rd)
{
    return rd->version;
}
bool reqlog_reader_closed_loop(const struct reqlog_reader *rd)
{
    return (rd->header_flags & REQLOG_HEADER_FLAG_CLOSED_LOOP) != 0;
}
bool reqlog_reader_has_gaps(const struct reqlog_reader *rd)
{
    return rd->has_gaps;
}
void reqlog_read_gaps(const struct reqlog_reader *rd, const uint64_t **gaps, uint32_t *n)
{
    *gaps = rd->gaps;
    *n = rd->ngaps;
}
int reqlog_reader_shard(const struct reqlog_reader *rd, struct reqlog_shard *out)
{
    *out = rd->shard;
    return rd->shard.count ? 1 : 0;
}
size_t reqlog_reader_ntargets(const struct reqlog_reader *rd)
{
    return rd->ntargets;
}
const char *reqlog_reader_target(const struct reqlog_reader *rd, size_t i)
{
    return i < rd->ntargets ? rd->names[i] : NULL;
}

void reqlog_reader_close(struct reqlog_reader *rd)
{
    if (!rd)
        return;
    if (rd->fd >= 0)
        close(rd->fd);
    for (size_t i = 0; i < rd->ntargets && rd->names; i++)
        free(rd->names[i]);
    free(rd->names);
    free(rd->gaps);
    free(rd->buf);
    free(rd);
}

/* ---------------------------------------------------------------- derived columns */

/* Difference a - b in milliseconds, signed so a corrupt record shows up as negative. */
static double diff_ms(uint64_t a, uint64_t b)
{
    return (double)(int64_t)(a - b) / 1e6;
}

void reqlog_derive(const struct reqlog_record *r, struct reqlog_derived *d)
{
    d->start_s = (double)r->planned_ns / 1e9;
    d->latency_ms = r->done_ns ? diff_ms(r->done_ns, r->planned_ns) : NAN;
    d->service_ms = r->sent_ns && r->done_ns ? diff_ms(r->done_ns, r->sent_ns) : NAN;
    d->ttfb_ms = r->sent_ns && r->first_byte_ns ? diff_ms(r->first_byte_ns, r->sent_ns) : NAN;
    d->lag_ms = r->sent_ns ? diff_ms(r->sent_ns, r->planned_ns) : NAN;
    d->tls_ms = r->tls_ns ? (double)r->tls_ns / 1e6 : NAN;
    d->first_event_ms = r->first_event_ns ? diff_ms(r->first_event_ns, r->planned_ns) : NAN;
}

const char *reqlog_proto_name(unsigned p)
{
    static const char *const names[REQLOG_PROTO_COUNT] = {"h1", "h2", "h3"};
    return p < REQLOG_PROTO_COUNT ? names[p] : "?";
}

const char *reqlog_tls_name(unsigned t)
{
    static const char *const names[REQLOG_TLS_COUNT] = {"plain", "full", "resumed"};
    return t < REQLOG_TLS_COUNT ? names[t] : "?";
}

/* Append to buf without overrunning it; keeps counting the length needed. */
struct sbuf {
    char *p;
    size_t len, used;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->used < b->len ? b->len - b->used : 0;
    int n = vsnprintf(room ? b->p + b->used : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->used += (size_t)n;
}

static void sb_putc(struct sbuf *b, char c)
{
    if (b->used + 1 < b->len) {
        b->p[b->used] = c;
        b->p[b->used + 1] = '\0';
    }
    b->used++;
}

static void sb_ms(struct sbuf *b, double v)
{
    if (!isnan(v))
        sb_printf(b, "%.6f", v);
    sb_putc(b, ',');
}

size_t reqlog_format_csv(const struct reqlog_record *r, const char *target_name, char *buf, size_t len)
{
    struct sbuf b = {buf, len, 0};
    if (len)
        buf[0] = '\0';
    if (strpbrk(target_name, ",\"\r\n")) {
        sb_putc(&b, '"');
        for (const char *s = target_name; *s; s++) {
            if (*s == '"')
                sb_putc(&b, '"');
            sb_putc(&b, *s);
        }
        sb_putc(&b, '"');
    } else {
        sb_printf(&b, "%s", target_name);
    }
    struct reqlog_derived d;
    reqlog_derive(r, &d);
    sb_printf(&b, ",%.9f,", d.start_s);
    sb_ms(&b, d.latency_ms);
    sb_ms(&b, d.service_ms);
    sb_ms(&b, d.ttfb_ms);
    sb_ms(&b, d.lag_ms);
    sb_printf(&b, "%u,%s,%llu,%u,%d,", r->status, reqlog_outcome_name((enum reqlog_outcome)r->outcome),
              (unsigned long long)r->bytes, r->connection, (r->flags & REQLOG_FLAG_WARMUP) ? 1 : 0);
    sb_ms(&b, d.tls_ms);
    sb_printf(&b, "%s,%s,", reqlog_proto_name(r->protocol), reqlog_tls_name(r->tls));
    if (r->entry)
        sb_printf(&b, "%llu", (unsigned long long)(r->entry - 1));
    sb_putc(&b, ',');
    sb_ms(&b, d.first_event_ms);
    if (r->events)
        sb_printf(&b, "%u", r->events - 1);
    sb_putc(&b, '\n');
    return b.used;
}
