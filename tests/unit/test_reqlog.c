/* Unit tests for src/reqlog: round trip of every field, the exact byte layout of the header
 * and a record, version and magic checks, truncation, fields out of range, write errors,
 * the derived columns and the CSV row; version 2's gap lists (round trip, layout, caps,
 * truncation) and version 1 unchanged beside them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/rng.h"
#include "reqlog/reqlog.h"
#include "unit/fixture_tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *path_of(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void spill(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static struct reqlog_record random_record(struct rng *r, uint32_t ntargets)
{
    struct reqlog_record rec = {
        .planned_ns = rng_next(r),
        .sent_ns = rng_next(r),
        .first_byte_ns = rng_next(r),
        .done_ns = rng_next(r),
        .connect_ns = rng_next(r),
        .bytes = rng_next(r),
        .target = (uint32_t)(rng_next(r) % ntargets),
        .connection = (uint32_t)rng_next(r),
        .status = (uint16_t)rng_next(r),
        .outcome = (uint8_t)(rng_next(r) % OUTCOME_COUNT),
        .flags = (uint8_t)(rng_next(r) & 1),
    };
    return rec;
}

static void assert_record_equal(const struct reqlog_record *a, const struct reqlog_record *b)
{
    assert_int_equal(a->planned_ns, b->planned_ns);
    assert_int_equal(a->sent_ns, b->sent_ns);
    assert_int_equal(a->first_byte_ns, b->first_byte_ns);
    assert_int_equal(a->done_ns, b->done_ns);
    assert_int_equal(a->connect_ns, b->connect_ns);
    assert_int_equal(a->bytes, b->bytes);
    assert_int_equal(a->target, b->target);
    assert_int_equal(a->connection, b->connection);
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->outcome, b->outcome);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->tls_ns, b->tls_ns);
    assert_int_equal(a->protocol, b->protocol);
    assert_int_equal(a->tls, b->tls);
    assert_int_equal(a->entry, b->entry);
}

static void test_outcome_names(void **state)
{
    (void)state;
    const char *want[] = {"ok", "rejected", "http_error", "invalid", "transport", "timeout", "dropped", "cancelled"};
    for (int i = 0; i < OUTCOME_COUNT; i++) {
        assert_string_equal(reqlog_outcome_name((enum reqlog_outcome)i), want[i]);
        enum reqlog_outcome o = OUTCOME_COUNT;
        assert_true(reqlog_outcome_parse(want[i], strlen(want[i]), &o));
        assert_int_equal(o, i);
    }
    assert_string_equal(reqlog_outcome_name(OUTCOME_COUNT), "unknown");
    enum reqlog_outcome o = OUTCOME_CANCELLED;
    assert_false(reqlog_outcome_parse("okay", 4, &o));
    assert_false(reqlog_outcome_parse("ok", 1, &o));
    assert_int_equal(o, OUTCOME_CANCELLED); /* untouched */
}

/* Many records (several writer buffers), read back field by field. */
static void test_round_trip(void **state)
{
    (void)state;
    const char *names[] = {"A", "http://127.0.0.1:8080/product?id=42", ""};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path_of("rt.bin"), names, 3, 0), 0);
    struct rng r;
    rng_seed(&r, 42);
    enum { N = 5000 };
    static struct reqlog_record recs[N];
    for (int i = 0; i < N; i++) {
        recs[i] = random_record(&r, 3);
        assert_int_equal(reqlog_write(w, &recs[i]), 0);
    }
    assert_int_equal(reqlog_writer_count(w), N);
    assert_int_equal(reqlog_writer_close(w), 0);

    size_t len;
    unsigned char *raw = slurp(path_of("rt.bin"), &len);
    size_t header = REQLOG_FIXED_HEADER_SIZE + 2 + 1 + 2 + strlen(names[1]) + 2;
    assert_int_equal(len, header + (size_t)N * REQLOG_RECORD_SIZE);
    free(raw);

    struct reqlog_reader *rd;
    char err[256];
    assert_int_equal(reqlog_reader_open(&rd, path_of("rt.bin"), err, sizeof err), 0);
    assert_int_equal(reqlog_reader_version(rd), 1); /* no gaps: version 1, as older knee reads it */
    assert_false(reqlog_reader_closed_loop(rd));
    assert_false(reqlog_reader_has_gaps(rd));
    assert_int_equal(reqlog_reader_ntargets(rd), 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(reqlog_reader_target(rd, i), names[i]);
    assert_null(reqlog_reader_target(rd, 3));
    struct reqlog_record got;
    for (int i = 0; i < N; i++) {
        assert_int_equal(reqlog_read(rd, &got), 1);
        assert_int_equal(reqlog_reader_record_index(rd), (uint64_t)i);
        assert_record_equal(&got, &recs[i]);
    }
    assert_int_equal(reqlog_read(rd, &got), 0);
    reqlog_reader_close(rd);
}

/* The documented byte layout (docs/FORMATS.md), checked byte by byte. */
static void test_byte_layout(void **state)
{
    (void)state;
    const char *names[] = {"AB"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path_of("layout.bin"), names, 1, 1), 0);
    struct reqlog_record rec = {
        .planned_ns = 0x0102030405060708ull,
        .sent_ns = 0x1112131415161718ull,
        .first_byte_ns = 0x2122232425262728ull,
        .done_ns = 0x3132333435363738ull,
        .connect_ns = 0x4142434445464748ull,
        .bytes = 0x5152535455565758ull,
        .target = 0,
        .connection = 0x61626364u,
        .status = 0x7172,
        .outcome = OUTCOME_TIMEOUT,
        .flags = REQLOG_FLAG_WARMUP,
        .tls_ns = 0x8182838485868788ull,
        .protocol = REQLOG_PROTO_H2,
        .tls = REQLOG_TLS_RESUMED,
        .entry = 0x9192939495969798ull,
        .first_event_ns = 0xa1a2a3a4a5a6a7a8ull,
        .events = 0xb1b2b3b4u,
    };
    assert_int_equal(reqlog_write(w, &rec), 0);
    assert_int_equal(reqlog_writer_close(w), 0);
    size_t len;
    unsigned char *b = slurp(path_of("layout.bin"), &len);
    assert_int_equal(len, 24 + 2 + 2 + 96);
    assert_memory_equal(b, "\x89KRQ\r\n\x1a\n", 8);
    assert_int_equal(b[8], 1); /* version, LE u16 */
    assert_int_equal(b[9], 0);
    assert_int_equal(b[10], 1);  /* flags: closed loop */
    assert_int_equal(b[12], 28); /* header size */
    assert_int_equal(b[16], 96); /* record size */
    assert_int_equal(b[20], 1);  /* ntargets */
    assert_int_equal(b[24], 2);  /* name length */
    assert_memory_equal(b + 26, "AB", 2);
    const unsigned char *p = b + 28;
    assert_int_equal(p[0], 0x08);
    assert_int_equal(p[7], 0x01);
    assert_int_equal(p[8], 0x18);
    assert_int_equal(p[47], 0x51);
    assert_int_equal(p[48], 0);
    assert_int_equal(p[52], 0x64);
    assert_int_equal(p[55], 0x61);
    assert_int_equal(p[56], 0x72);
    assert_int_equal(p[57], 0x71);
    assert_int_equal(p[58], OUTCOME_TIMEOUT);
    assert_int_equal(p[59], 1);
    assert_int_equal(p[60], 0x88); /* tls_ns, appended after the first 60 bytes */
    assert_int_equal(p[67], 0x81);
    assert_int_equal(p[68], 1); /* protocol: h2 */
    assert_int_equal(p[69], 2); /* tls: resumed */
    assert_int_equal(p[70], 0);
    assert_int_equal(p[71], 0);
    assert_int_equal(p[72], 0x98); /* entry, appended after 72 bytes */
    assert_int_equal(p[79], 0x91);
    assert_int_equal(p[80], 0xa8); /* first_event_ns and events, appended after 80 bytes */
    assert_int_equal(p[87], 0xa1);
    assert_int_equal(p[88], 0xb4);
    assert_int_equal(p[91], 0xb1);
    assert_int_equal(p[92], 0);
    assert_int_equal(p[95], 0);
    assert_true(reqlog_is_log(b, len));
    assert_false(reqlog_is_log(b, 7));
    assert_false(reqlog_is_log("server,start_s", 14));

    struct reqlog_reader *rd;
    assert_int_equal(reqlog_reader_open_mem(&rd, b, len, NULL, 0), 0);
    assert_true(reqlog_reader_closed_loop(rd));
    struct reqlog_record got;
    assert_int_equal(reqlog_read(rd, &got), 1);
    assert_record_equal(&got, &rec);
    assert_int_equal(reqlog_read(rd, &got), 0);
    reqlog_reader_close(rd);
    free(b);
}

static unsigned char *small_log(size_t *len)
{
    const char *names[] = {"A", "B"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path_of("small.bin"), names, 2, 0), 0);
    for (uint32_t i = 0; i < 3; i++) {
        struct reqlog_record rec = {.planned_ns = i, .done_ns = 10 + i, .target = i % 2};
        assert_int_equal(reqlog_write(w, &rec), 0);
    }
    assert_int_equal(reqlog_writer_close(w), 0);
    return slurp(path_of("small.bin"), len);
}

static void test_newer_version_is_a_clear_error(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = small_log(&len);
    b[8] = REQLOG_VERSION + 1;
    spill(path_of("v3.bin"), b, len);
    struct reqlog_reader *rd = (void *)1;
    char err[256] = "";
    assert_int_equal(reqlog_reader_open(&rd, path_of("v3.bin"), err, sizeof err), KNEE_EVERSION);
    assert_null(rd);
    assert_non_null(strstr(err, "version 3 is newer than this knee reads (2)"));
    free(b);
}

static void test_bad_headers(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = small_log(&len);
    struct reqlog_reader *rd;
    char err[256];
    unsigned char *c = malloc(len);

    memcpy(c, b, len);
    c[1] = 'X';
    assert_int_equal(reqlog_reader_open_mem(&rd, c, len, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "magic"));

    assert_int_equal(reqlog_reader_open_mem(&rd, b, 20, err, sizeof err), KNEE_ETRUNC);
    assert_int_equal(reqlog_reader_open_mem(&rd, b, 0, err, sizeof err), KNEE_EFORMAT);
    assert_int_equal(reqlog_reader_open_mem(&rd, b, 25, err, sizeof err), KNEE_ETRUNC);

    memcpy(c, b, len);
    c[8] = 0; /* version 0 */
    assert_int_equal(reqlog_reader_open_mem(&rd, c, len, err, sizeof err), KNEE_EFORMAT);

    memcpy(c, b, len);
    c[16] = 59; /* record smaller than version 1's */
    assert_int_equal(reqlog_reader_open_mem(&rd, c, len, err, sizeof err), KNEE_EFORMAT);

    memcpy(c, b, len);
    c[22] = 0xff; /* ntargets huge */
    assert_int_equal(reqlog_reader_open_mem(&rd, c, len, err, sizeof err), KNEE_ETOOBIG);

    memcpy(c, b, len);
    c[24] = 200; /* first name longer than the header */
    assert_int_equal(reqlog_reader_open_mem(&rd, c, len, err, sizeof err), KNEE_EFORMAT);

    char msg[64];
    assert_int_equal(reqlog_reader_open(&rd, path_of("does-not-exist"), msg, sizeof msg), -2);
    free(c);
    free(b);
}

/* A longer header and record (a later minor revision) are read, the extra bytes skipped. */
static void test_larger_record_and_header_are_skipped(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = small_log(&len);
    size_t hdr = 24 + 3 + 3;
    size_t nlen = hdr + 5 + 3 * 104;
    unsigned char *c = calloc(1, nlen);
    memcpy(c, b, hdr);
    c[12] = (unsigned char)(hdr + 5);
    c[16] = 104;
    for (int i = 0; i < 3; i++)
        memcpy(c + hdr + 5 + i * 104, b + hdr + (size_t)i * 96, 96);
    struct reqlog_reader *rd;
    assert_int_equal(reqlog_reader_open_mem(&rd, c, nlen, NULL, 0), 0);
    struct reqlog_record got;
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(reqlog_read(rd, &got), 1);
        assert_int_equal(got.planned_ns, i);
        assert_int_equal(got.target, i % 2);
    }
    assert_int_equal(reqlog_read(rd, &got), 0);
    reqlog_reader_close(rd);
    free(c);
    free(b);
}

/* A log written before tls_ns, protocol and tls were appended (60-byte records) still reads:
 * the appended fields are 0 (no handshake, HTTP/1.1, plain). */
static void test_sixty_byte_records(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = small_log(&len);
    size_t hdr = 24 + 3 + 3;
    size_t nlen = hdr + 3 * 60;
    unsigned char *c = calloc(1, nlen);
    memcpy(c, b, hdr);
    c[16] = 60;
    for (int i = 0; i < 3; i++) {
        memcpy(c + hdr + i * 60, b + hdr + (size_t)i * 96, 60);
        b[hdr + (size_t)i * 96 + 68] = 1; /* would be h2 if the reader looked past the record */
    }
    struct reqlog_reader *rd;
    assert_int_equal(reqlog_reader_open_mem(&rd, c, nlen, NULL, 0), 0);
    struct reqlog_record got;
    for (uint32_t i = 0; i < 3; i++) {
        memset(&got, 0xee, sizeof got);
        assert_int_equal(reqlog_read(rd, &got), 1);
        assert_int_equal(got.planned_ns, i);
        assert_int_equal(got.done_ns, 10 + i);
        assert_int_equal(got.tls_ns, 0);
        assert_int_equal(got.protocol, REQLOG_PROTO_HTTP1);
        assert_int_equal(got.tls, REQLOG_TLS_PLAIN);
    }
    assert_int_equal(reqlog_read(rd, &got), 0);
    reqlog_reader_close(rd);
    /* 59 bytes is below every version */
    c[16] = 59;
    assert_int_equal(reqlog_reader_open_mem(&rd, c, nlen, NULL, 0), KNEE_EFORMAT);
    free(c);
    free(b);
}

static void test_bad_records(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = small_log(&len);
    size_t hdr = 30;
    struct reqlog_reader *rd;
    struct reqlog_record got;

    /* truncated last record */
    assert_int_equal(reqlog_reader_open_mem(&rd, b, len - 7, NULL, 0), 0);
    assert_int_equal(reqlog_read(rd, &got), 1);
    assert_int_equal(reqlog_read(rd, &got), 1);
    assert_int_equal(reqlog_read(rd, &got), KNEE_ETRUNC);
    assert_int_equal(reqlog_reader_record_index(rd), 2);
    assert_non_null(strstr(reqlog_reader_error(rd), "record 2 is truncated"));
    reqlog_reader_close(rd);

    unsigned char *c = malloc(len);
    struct {
        size_t off;
        unsigned char v;
        const char *msg;
    } cases[] = {
        {hdr + 96 + 48, 2, "target 2"},
        {hdr + 96 + 58, OUTCOME_COUNT, "outcome 8"},
        {hdr + 96 + 59, 0x80, "unknown flags"},
        {hdr + 96 + 68, REQLOG_PROTO_COUNT, "protocol 3"},
        {hdr + 96 + 69, REQLOG_TLS_COUNT, "tls 3"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memcpy(c, b, len);
        c[cases[k].off] = cases[k].v;
        assert_int_equal(reqlog_reader_open_mem(&rd, c, len, NULL, 0), 0);
        assert_int_equal(reqlog_read(rd, &got), 1);
        assert_int_equal(reqlog_read(rd, &got), KNEE_EFORMAT);
        assert_non_null(strstr(reqlog_reader_error(rd), cases[k].msg));
        assert_non_null(strstr(reqlog_reader_error(rd), "record 1"));
        reqlog_reader_close(rd);
    }
    free(c);
    free(b);
}

static void test_writer_rejects_bad_input(void **state)
{
    (void)state;
    struct reqlog_writer *w;
    const char *names[] = {"A"};
    assert_int_equal(reqlog_writer_open(&w, path_of("x"), NULL, 2, 0), KNEE_EINVAL);
    char *longname = malloc(REQLOG_MAX_NAME_LEN + 2);
    memset(longname, 'x', REQLOG_MAX_NAME_LEN + 1);
    longname[REQLOG_MAX_NAME_LEN + 1] = '\0';
    const char *bad[] = {longname};
    assert_int_equal(reqlog_writer_open(&w, path_of("x"), bad, 1, 0), KNEE_EINVAL);
    free(longname);
    assert_true(reqlog_writer_open(&w, "/nonexistent-dir/x.bin", names, 1, 0) < 0);
    assert_int_equal(reqlog_writer_open(&w, path_of("x"), names, 1, 0), 0);
    struct reqlog_record rec = {.target = 1};
    assert_int_equal(reqlog_write(w, &rec), KNEE_EINVAL);
    rec.target = 0;
    rec.outcome = OUTCOME_COUNT;
    assert_int_equal(reqlog_write(w, &rec), KNEE_EINVAL);
    rec.outcome = OUTCOME_OK;
    rec.protocol = REQLOG_PROTO_COUNT;
    assert_int_equal(reqlog_write(w, &rec), KNEE_EINVAL);
    rec.protocol = REQLOG_PROTO_H2;
    rec.tls = REQLOG_TLS_COUNT;
    assert_int_equal(reqlog_write(w, &rec), KNEE_EINVAL);
    assert_int_equal(reqlog_writer_count(w), 0);
    assert_int_equal(reqlog_writer_close(w), 0);
    assert_int_equal(reqlog_writer_close(NULL), 0);
}

/* A full disk: the error surfaces (sticky) and close reports it. */
static void test_write_error_is_reported(void **state)
{
    (void)state;
    /* A machine whose /dev/full was replaced by a regular file (as happened once: a tool that unlinked
     * it) is named here, loudly, instead of passing for a broken test. Opened without O_CREAT
     * through the descriptor variant, so this test can never create /dev/full itself. */
    struct stat st;
    if (stat("/dev/full", &st) == 0 && !S_ISCHR(st.st_mode))
        fail_msg("/dev/full exists but is not a character device: this machine is broken (something removed "
                 "the device node; recreate it with mknod -m 666 /dev/full c 1 7)");
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        skip();
    }
    const char *names[] = {"A"};
    struct reqlog_writer *w;
    int r = reqlog_writer_open_fd(&w, fd, names, 1, 0);
    assert_int_equal(r, -ENOSPC);                     /* the header is flushed at open, so the error shows right away */
    assert_int_equal(fcntl(fd, F_GETFD), FD_CLOEXEC); /* the caller's descriptor is left open */
    close(fd);
}

/* reqlog_writer_open_fd writes the same bytes as reqlog_writer_open and leaves the descriptor
 * to its owner. */
static void test_writer_on_a_descriptor(void **state)
{
    (void)state;
    char path[] = "/tmp/knee-reqlog-fd-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *names[] = {"A", "B"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open_fd(&w, fd, names, 2, 1), 0);
    struct reqlog_record rec = {.planned_ns = 5, .sent_ns = 6, .done_ns = 9, .target = 1, .flags = REQLOG_FLAG_WARMUP};
    assert_int_equal(reqlog_write(w, &rec), 0);
    assert_int_equal(reqlog_writer_close(w), 0);
    assert_int_equal(write(fd, "", 0), 0); /* still open */
    close(fd);
    struct reqlog_reader *rd;
    char why[256];
    assert_int_equal(reqlog_reader_open(&rd, path, why, sizeof why), 0);
    assert_true(reqlog_reader_closed_loop(rd));
    assert_string_equal(reqlog_reader_target(rd, 1), "B");
    struct reqlog_record back;
    assert_int_equal(reqlog_read(rd, &back), 1);
    assert_int_equal(back.done_ns, 9);
    assert_int_equal(back.flags, REQLOG_FLAG_WARMUP);
    assert_int_equal(reqlog_read(rd, &back), 0);
    reqlog_reader_close(rd);
    unlink(path);
    assert_int_equal(reqlog_writer_open_fd(&w, -1, names, 2, 0), -EBADF);
}

static void test_derive_and_csv(void **state)
{
    (void)state;
    struct reqlog_record rec = {
        .planned_ns = 1500000000ull,    /* 1.5 s */
        .sent_ns = 1500250000ull,       /* lag 0.25 ms */
        .first_byte_ns = 1502250001ull, /* ttfb 2.000001 ms */
        .done_ns = 1510500000ull,       /* latency 10.5 ms, service 10.25 ms */
        .bytes = 1234,
        .target = 0,
        .connection = 7,
        .status = 200,
        .outcome = OUTCOME_OK,
    };
    struct reqlog_derived d;
    reqlog_derive(&rec, &d);
    assert_true(d.start_s == 1.5);
    assert_true(d.latency_ms == 10.5);
    assert_true(d.service_ms == 10.25);
    assert_true(d.ttfb_ms == 2.000001);
    assert_true(d.lag_ms == 0.25);

    char buf[256];
    size_t n = reqlog_format_csv(&rec, "A", buf, sizeof buf);
    assert_string_equal(buf, "A,1.500000000,10.500000,10.250000,2.000001,0.250000,200,ok,1234,7,0,,h1,plain,,,\n");
    assert_int_equal(n, strlen(buf));
    /* the CSV text parses back to the very same doubles */
    assert_true(strtod("2.000001", NULL) == d.ttfb_ms);

    struct reqlog_record dropped = {
        .planned_ns = 2000000000ull, .outcome = OUTCOME_DROPPED, .target = 0, .flags = REQLOG_FLAG_WARMUP};
    reqlog_derive(&dropped, &d);
    assert_true(isnan(d.latency_ms) && isnan(d.service_ms) && isnan(d.ttfb_ms) && isnan(d.lag_ms));
    reqlog_format_csv(&dropped, "a,\"b\"", buf, sizeof buf);
    assert_string_equal(buf, "\"a,\"\"b\"\"\",2.000000000,,,,,0,dropped,0,0,1,,h1,plain,,,\n"); /* warm-up: 1 */

    /* too small a buffer: truncated, NUL-terminated, and the needed length returned */
    char tiny[8];
    n = reqlog_format_csv(&rec, "A", tiny, sizeof tiny);
    assert_int_equal(n, strlen("A,1.500000000,10.500000,10.250000,2.000001,0.250000,200,ok,1234,7,0,,h1,plain,,,\n"));
    assert_int_equal(strlen(tiny), 7);

    /* an HTTP/2 request over a new TLS connection: its handshake, protocol and TLS kind */
    rec.tls_ns = 1234567;
    rec.protocol = REQLOG_PROTO_H2;
    rec.tls = REQLOG_TLS_FULL;
    reqlog_derive(&rec, &d);
    assert_true(d.tls_ms == 1.234567);
    reqlog_format_csv(&rec, "A", buf, sizeof buf);
    assert_string_equal(buf,
                        "A,1.500000000,10.500000,10.250000,2.000001,0.250000,200,ok,1234,7,0,1.234567,h2,full,,,\n");
    /* a streamed response: its first event (from planned) and its events */
    rec.first_event_ns = rec.planned_ns + 3000000;
    rec.events = 5 + 1;
    reqlog_derive(&rec, &d);
    assert_true(d.first_event_ms == 3.0);
    reqlog_format_csv(&rec, "A", buf, sizeof buf);
    assert_string_equal(
        buf, "A,1.500000000,10.500000,10.250000,2.000001,0.250000,200,ok,1234,7,0,1.234567,h2,full,,3.000000,5\n");
    rec.first_event_ns = 0;
    rec.events = 0;
    assert_string_equal(reqlog_proto_name(9), "?");
    assert_string_equal(reqlog_tls_name(REQLOG_TLS_RESUMED), "resumed");

    /* a corrupt record (done before planned) shows a negative latency, not a huge one */
    struct reqlog_record bad = {.planned_ns = 5000000, .sent_ns = 5000000, .done_ns = 4000000};
    reqlog_derive(&bad, &d);
    assert_true(d.latency_ms == -1.0);
}

/* ---------------------------------------------------------------- version 2: gap lists */

/* A log with gaps: records with none, one and many gaps (a list several writer buffers long)
 * and one not timed as events, read back exactly; the file's size is the layout's. */
static void test_gaps_round_trip(void **state)
{
    (void)state;
    const char *names[] = {"A", "B"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path_of("gaps.bin"), names, 2, REQLOG_HEADER_FLAG_GAPS), 0);
    enum { MANY = 20000 }; /* 160 KB of gaps: more than the writer's 64 KiB buffer */
    static uint64_t many[MANY];
    for (uint32_t i = 0; i < MANY; i++)
        many[i] = i % 7 ? 10000000ull + i : 0;
    uint64_t one = 0x0102030405060708ull;
    struct {
        struct reqlog_record r;
        const uint64_t *g;
        uint32_t n;
    } in[] = {
        {{.planned_ns = 1, .done_ns = 2, .target = 0, .events = 0}, NULL, 0},               /* not timed */
        {{.planned_ns = 3, .done_ns = 4, .target = 1, .events = 1 + 1}, NULL, 0},           /* one event */
        {{.planned_ns = 5, .done_ns = 6, .target = 0, .events = 2 + 1}, &one, 1},           /* two events */
        {{.planned_ns = 7, .done_ns = 8, .target = 1, .events = MANY + 1 + 1}, many, MANY}, /* many */
        {{.planned_ns = 9, .done_ns = 10, .target = 0, .events = 5 + 1, .flags = REQLOG_FLAG_WARMUP}, many, 4},
    };
    size_t nin = sizeof in / sizeof in[0], ngaps = 0;
    for (size_t i = 0; i < nin; i++) {
        if (i == 1)
            assert_int_equal(reqlog_write(w, &in[i].r), 0); /* reqlog_write: an empty gap list */
        else
            assert_int_equal(reqlog_write_gaps(w, &in[i].r, in[i].g, in[i].n), 0);
        ngaps += in[i].n;
    }
    assert_int_equal(reqlog_writer_count(w), nin);
    assert_int_equal(reqlog_writer_close(w), 0);

    size_t len;
    unsigned char *raw = slurp(path_of("gaps.bin"), &len);
    assert_int_equal(len, REQLOG_FIXED_HEADER_SIZE + 3 + 3 + nin * (REQLOG_RECORD_SIZE + 4) + ngaps * 8);
    free(raw);

    struct reqlog_reader *rd;
    char err[256];
    assert_int_equal(reqlog_reader_open(&rd, path_of("gaps.bin"), err, sizeof err), 0);
    assert_int_equal(reqlog_reader_version(rd), 2);
    assert_true(reqlog_reader_has_gaps(rd));
    assert_false(reqlog_reader_closed_loop(rd));
    for (size_t i = 0; i < nin; i++) {
        struct reqlog_record got;
        assert_int_equal(reqlog_read(rd, &got), 1);
        assert_record_equal(&got, &in[i].r);
        assert_int_equal(got.events, in[i].r.events);
        const uint64_t *g;
        uint32_t n = 99;
        reqlog_read_gaps(rd, &g, &n);
        assert_int_equal(n, in[i].n);
        if (n)
            assert_memory_equal(g, in[i].g, n * sizeof *g);
    }
    struct reqlog_record got;
    assert_int_equal(reqlog_read(rd, &got), 0);
    reqlog_reader_close(rd);
}

/* Version 2's bytes: version 2, the gaps flag, then after each record u32 n and n u64 gaps,
 * little endian (docs/FORMATS.md). */
static void test_gaps_byte_layout(void **state)
{
    (void)state;
    const char *names[] = {"AB"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path_of("glayout.bin"), names, 1,
                                        REQLOG_HEADER_FLAG_CLOSED_LOOP | REQLOG_HEADER_FLAG_GAPS),
                     0);
    struct reqlog_record rec = {.planned_ns = 1, .events = 3 + 1};
    uint64_t g[2] = {0x1112131415161718ull, 0};
    assert_int_equal(reqlog_write_gaps(w, &rec, g, 2), 0);
    struct reqlog_record none = {.planned_ns = 2, .outcome = OUTCOME_DROPPED};
    assert_int_equal(reqlog_write(w, &none), 0);
    assert_int_equal(reqlog_writer_close(w), 0);
    size_t len;
    unsigned char *b = slurp(path_of("glayout.bin"), &len);
    assert_int_equal(len, 28 + 96 + 4 + 16 + 96 + 4);
    assert_int_equal(b[8], 2); /* version 2 */
    assert_int_equal(b[9], 0);
    assert_int_equal(b[10], 3); /* flags: closed loop | gaps */
    assert_int_equal(b[11], 0);
    assert_int_equal(b[12], 28); /* header size: unchanged */
    assert_int_equal(b[16], 96); /* record size: unchanged */
    const unsigned char *p = b + 28;
    assert_int_equal(p[0], 1);
    assert_int_equal(p[88], 4); /* events */
    static const unsigned char list[4 + 16] = {2,    0,    0,    0,    0x18, 0x17, 0x16, 0x15, 0x14, 0x13,
                                               0x12, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    assert_memory_equal(p + 96, list, sizeof list);
    p += 96 + sizeof list;
    assert_int_equal(p[0], 2); /* the second record */
    assert_int_equal(p[58], OUTCOME_DROPPED);
    static const unsigned char empty[4] = {0, 0, 0, 0};
    assert_memory_equal(p + 96, empty, 4);
    free(b);
}

/* Without the gaps flag the log is version 1 byte for byte: reqlog_write_gaps with no gaps
 * writes what reqlog_write writes, and a gap list is refused. */
static void test_gaps_absent_is_version_1(void **state)
{
    (void)state;
    const char *names[] = {"A"};
    struct reqlog_record rec = {.planned_ns = 7, .done_ns = 9, .events = 3 + 1, .first_event_ns = 8};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path_of("v1a.bin"), names, 1, 0), 0);
    assert_int_equal(reqlog_write(w, &rec), 0);
    assert_int_equal(reqlog_writer_close(w), 0);
    assert_int_equal(reqlog_writer_open(&w, path_of("v1b.bin"), names, 1, 0), 0);
    assert_int_equal(reqlog_write_gaps(w, &rec, NULL, 0), 0);
    uint64_t g[2] = {1, 2};
    assert_int_equal(reqlog_write_gaps(w, &rec, g, 2), KNEE_EINVAL); /* version 1 has no gap lists */
    assert_int_equal(reqlog_writer_count(w), 1);
    assert_int_equal(reqlog_writer_close(w), 0);
    size_t la, lb;
    unsigned char *a = slurp(path_of("v1a.bin"), &la), *b = slurp(path_of("v1b.bin"), &lb);
    assert_int_equal(la, 24 + 3 + 96);
    assert_int_equal(lb, la);
    assert_memory_equal(a, b, la);
    assert_int_equal(a[8], 1);
    assert_int_equal(a[10], 0);
    struct reqlog_reader *rd;
    assert_int_equal(reqlog_reader_open_mem(&rd, a, la, NULL, 0), 0);
    assert_false(reqlog_reader_has_gaps(rd));
    struct reqlog_record got;
    assert_int_equal(reqlog_read(rd, &got), 1);
    const uint64_t *gp;
    uint32_t n = 99;
    reqlog_read_gaps(rd, &gp, &n);
    assert_int_equal(n, 0);
    reqlog_reader_close(rd);
    /* unknown header flags are refused by the writer */
    assert_int_equal(reqlog_writer_open(&w, path_of("x.bin"), names, 1, 0x0004), KNEE_EINVAL);
    free(a);
    free(b);
}

/* A two-record log with gaps: record 0 has events 4 (3 events) and 2 gaps; record 1 none. */
static unsigned char *gap_log(size_t *len)
{
    const char *names[] = {"A"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path_of("glog.bin"), names, 1, REQLOG_HEADER_FLAG_GAPS), 0);
    struct reqlog_record rec = {.planned_ns = 1, .events = 3 + 1};
    uint64_t g[2] = {5, 6};
    assert_int_equal(reqlog_write_gaps(w, &rec, g, 2), 0);
    rec.planned_ns = 2;
    assert_int_equal(reqlog_write(w, &rec), 0);
    assert_int_equal(reqlog_writer_close(w), 0);
    return slurp(path_of("glog.bin"), len);
}

/* A cut gap list or count is KNEE_ETRUNC; a count over the cap or over the record's events, or
 * the gaps flag in a version-1 header, KNEE_EFORMAT; each names the record. */
static void test_gaps_bad_input(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = gap_log(&len);
    const size_t rec0 = 27, list0 = rec0 + 96, rec1 = list0 + 4 + 16;
    assert_int_equal(len, rec1 + 96 + 4);
    struct reqlog_reader *rd;
    struct reqlog_record got;
    char err[256];

    /* cut inside the first record's gaps, inside its count, inside the second's count */
    size_t cuts[] = {list0 + 4 + 12, list0 + 4 + 8, list0 + 2, len - 1};
    uint64_t at[] = {0, 0, 0, 1};
    const char *msg[] = {"gap list is truncated (1 of 2 gaps)", "gap list is truncated (1 of 2",
                         "gap count is truncated", "gap count is truncated"};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        assert_int_equal(reqlog_reader_open_mem(&rd, b, cuts[k], err, sizeof err), 0);
        if (at[k])
            assert_int_equal(reqlog_read(rd, &got), 1);
        assert_int_equal(reqlog_read(rd, &got), KNEE_ETRUNC);
        assert_int_equal(reqlog_reader_record_index(rd), at[k]);
        assert_non_null(strstr(reqlog_reader_error(rd), msg[k]));
        reqlog_reader_close(rd);
    }

    unsigned char *c = malloc(len);
    /* over the cap: refused before anything is allocated for it */
    memcpy(c, b, len);
    c[list0 + 0] = 0x01;
    c[list0 + 3] = 0x01; /* 0x01000001 > 1 << 24 */
    assert_int_equal(reqlog_reader_open_mem(&rd, c, len, NULL, 0), 0);
    assert_int_equal(reqlog_read(rd, &got), KNEE_EFORMAT);
    assert_non_null(strstr(reqlog_reader_error(rd), "record 0: 16777217 gaps (at most 16777216)"));
    reqlog_reader_close(rd);
    /* more gaps than the events allow (3 events: at most 2) */
    memcpy(c, b, len);
    c[list0] = 3;
    assert_int_equal(reqlog_reader_open_mem(&rd, c, len, NULL, 0), 0);
    assert_int_equal(reqlog_read(rd, &got), KNEE_EFORMAT);
    assert_non_null(strstr(reqlog_reader_error(rd), "record 0: 3 gaps, but only 3 events"));
    reqlog_reader_close(rd);
    memcpy(c, b, len);
    c[rec0 + 88] = 0; /* not timed as events, yet 2 gaps */
    assert_int_equal(reqlog_reader_open_mem(&rd, c, len, NULL, 0), 0);
    assert_int_equal(reqlog_read(rd, &got), KNEE_EFORMAT);
    assert_non_null(strstr(reqlog_reader_error(rd), "not timed as events"));
    reqlog_reader_close(rd);
    /* the gaps flag in a version-1 header */
    memcpy(c, b, len);
    c[8] = 1;
    assert_int_equal(reqlog_reader_open_mem(&rd, c, len, err, sizeof err), KNEE_EFORMAT);
    assert_non_null(strstr(err, "gaps flag"));
    free(c);

    /* the writer refuses a list over the cap (nothing read from the pointer) */
    const char *names[] = {"A"};
    struct reqlog_writer *w;
    assert_int_equal(reqlog_writer_open(&w, path_of("cap.bin"), names, 1, REQLOG_HEADER_FLAG_GAPS), 0);
    struct reqlog_record rec = {.events = UINT32_MAX};
    uint64_t g = 0;
    assert_int_equal(reqlog_write_gaps(w, &rec, &g, REQLOG_MAX_GAPS + 1), KNEE_EINVAL);
    assert_int_equal(reqlog_write_gaps(w, &rec, NULL, 1), KNEE_EINVAL);
    assert_int_equal(reqlog_writer_count(w), 0);
    assert_int_equal(reqlog_writer_close(w), 0);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outcome_names),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_byte_layout),
        cmocka_unit_test(test_newer_version_is_a_clear_error),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_larger_record_and_header_are_skipped),
        cmocka_unit_test(test_sixty_byte_records),
        cmocka_unit_test(test_bad_records),
        cmocka_unit_test(test_writer_rejects_bad_input),
        cmocka_unit_test(test_write_error_is_reported),
        cmocka_unit_test(test_writer_on_a_descriptor),
        cmocka_unit_test(test_derive_and_csv),
        cmocka_unit_test(test_gaps_round_trip),
        cmocka_unit_test(test_gaps_byte_layout),
        cmocka_unit_test(test_gaps_absent_is_version_1),
        cmocka_unit_test(test_gaps_bad_input),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
