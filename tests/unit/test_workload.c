/* Unit tests for src/workload: both targets formats entry by entry (vegeta's file read as is,
 * comments, CRLF, repeated headers, body files, every error with its FILE:LINE), entries read
 * back at their offsets, a million-line file from a pipe in bounded memory, CSV and JSONL
 * feeds, the three orders of wl_pick (each shuffle cycle a permutation), and templates
 * (built-ins, names, escapes, errors, determinism, expansion without allocation). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "workload/workload.h"

#include "fixture_tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static char err[512];

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static struct wl_reader *open_str(const char *s, enum wl_format fmt)
{
    struct wl_reader *rd;
    assert_int_equal(wl_reader_open_mem(&rd, s, strlen(s), "t.txt", tmpdir, fmt, err, sizeof err), 0);
    return rd;
}

/* The first error reading s to the end: its message ("" when none). */
static const char *first_error(const char *s, enum wl_format fmt)
{
    struct wl_reader *rd = open_str(s, fmt);
    struct wl_entry e;
    int k;
    err[0] = '\0';
    while ((k = wl_reader_next(rd, &e, err, sizeof err)) == 0)
        ;
    if (k == WL_END)
        err[0] = '\0';
    else
        assert_int_equal(k, KNEE_EINVAL);
    wl_reader_close(rd);
    return err;
}

static void test_formats(void **state)
{
    (void)state;
    assert_int_equal(wl_format_for_path("t.jsonl"), WL_FORMAT_JSONL);
    assert_int_equal(wl_format_for_path("a/t.ndjson"), WL_FORMAT_JSONL);
    assert_int_equal(wl_format_for_path("t.txt"), WL_FORMAT_HTTP);
    assert_int_equal(wl_format_for_path("-"), WL_FORMAT_HTTP);
    enum wl_format f;
    assert_int_equal(wl_format_parse("jsonl", &f), 0);
    assert_int_equal(f, WL_FORMAT_JSONL);
    assert_int_equal(wl_format_parse("http", &f), 0);
    assert_int_equal(f, WL_FORMAT_HTTP);
    assert_int_equal(wl_format_parse("json", &f), KNEE_EINVAL);
    enum wl_order o;
    assert_int_equal(wl_order_parse("shuffle", &o), 0);
    assert_int_equal(o, WL_ORDER_SHUFFLE);
    assert_int_equal(wl_order_parse("random", &o), 0);
    assert_int_equal(o, WL_ORDER_RANDOM);
    assert_int_equal(wl_order_parse("sequential", &o), 0);
    assert_int_equal(o, WL_ORDER_SEQUENTIAL);
    assert_int_equal(wl_order_parse("rand", &o), KNEE_EINVAL);
}

/* A vegeta targets file as its README shows one: comments, repeated headers, a body file. */
static void test_http_vegeta_file(void **state)
{
    (void)state;
    write_file("body.json", "{\"id\": 1}\n");
    const char *s = "# vegeta targets\r\n"
                    "GET http://goku:9090/path/to/dragon?item=ball\r\n"
                    "X-Account-ID: 8675309\r\n"
                    "\r\n"
                    "\r\n"
                    "DELETE http://goku:9090/path/to/remove\r\n"
                    "Confirmation-Token: 90215\r\n"
                    "# a comment inside an entry\r\n"
                    "Authorization: Token DEADBEEF\r\n"
                    "X-Many: 1\r\n"
                    "X-Many:2\r\n"
                    "X-Empty:\r\n"
                    "\n"
                    "POST http://goku:9090/things\n"
                    "  Content-Type :  application/json  \n"
                    "@body.json\n"
                    "PATCH http://goku:9090/{{id}}\n";
    struct wl_reader *rd = open_str(s, WL_FORMAT_HTTP);
    assert_true(wl_reader_seekable(rd));
    struct wl_entry e;
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_int_equal(e.index, 0);
    assert_int_equal(e.line, 2);
    assert_int_equal(e.offset, 18);
    assert_string_equal(e.method, "GET");
    assert_string_equal(e.url, "http://goku:9090/path/to/dragon?item=ball");
    assert_int_equal(e.nheaders, 1);
    assert_string_equal(e.headers[0], "X-Account-ID: 8675309");
    assert_null(e.body);
    assert_null(e.name);
    assert_true(e.weight == 1);

    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_int_equal(e.index, 1);
    assert_int_equal(e.line, 6);
    assert_string_equal(e.method, "DELETE");
    assert_int_equal(e.nheaders, 5);
    assert_string_equal(e.headers[4], "X-Empty:");
    assert_string_equal(e.headers[0], "Confirmation-Token: 90215");
    assert_string_equal(e.headers[1], "Authorization: Token DEADBEEF");
    assert_string_equal(e.headers[2], "X-Many: 1");
    assert_string_equal(e.headers[3], "X-Many: 2");

    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_int_equal(e.line, 14);
    assert_string_equal(e.method, "POST");
    assert_int_equal(e.nheaders, 1);
    assert_string_equal(e.headers[0], "Content-Type: application/json");
    assert_int_equal(e.body_len, 10);
    assert_memory_equal(e.body, "{\"id\": 1}\n", 10);

    /* the body ends an entry (vegeta): the next line starts another; {{ skips the URL check */
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_int_equal(e.line, 17);
    assert_string_equal(e.url, "http://goku:9090/{{id}}");
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), WL_END);
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), WL_END);
    wl_reader_close(rd);
}

static void test_http_errors(void **state)
{
    (void)state;
    assert_string_equal(first_error("GET http://a/\n\n# x\n\n\n\nContent-Type: x\n", WL_FORMAT_HTTP),
                        "t.txt:7: expected \"METHOD URL\", got \"Content-Type: x\"");
    assert_string_equal(first_error("GET\n", WL_FORMAT_HTTP), "t.txt:1: expected \"METHOD URL\", got \"GET\"");
    assert_string_equal(first_error("GET http://a/ b\n", WL_FORMAT_HTTP),
                        "t.txt:1: expected \"METHOD URL\", got \"GET http://a/ b\"");
    assert_string_equal(first_error("GE(T http://a/\n", WL_FORMAT_HTTP),
                        "t.txt:1: expected \"METHOD URL\", got \"GE(T http://a/\"");
    assert_string_equal(first_error("GET http://a/\nX-A b\n", WL_FORMAT_HTTP),
                        "t.txt:2: expected \"Header: value\", \"@body-file\" or a blank line, got \"X-A b\"");
    assert_string_equal(
        first_error("GET http://a/\nGET http://b/\n", WL_FORMAT_HTTP),
        "t.txt:2: expected \"Header: value\", \"@body-file\" or a blank line, got \"GET http://b/\" (a blank line "
        "separates entries)");
    assert_string_equal(first_error("\n\nPOST http://a/\n@nope.json\n", WL_FORMAT_HTTP),
                        "t.txt:4: @nope.json: No such file or directory");
    assert_string_equal(first_error("POST http://a/\n@/dev/null\n", WL_FORMAT_HTTP),
                        "t.txt:2: @/dev/null: not a regular file");
    assert_string_equal(first_error("POST http://a/\n@\n", WL_FORMAT_HTTP),
                        "t.txt:2: expected a file name after \"@\"");
    const char *bad = first_error("GET ftp://a/\n", WL_FORMAT_HTTP);
    assert_true(strncmp(bad, "t.txt:1: bad URL \"ftp://a/\": ", 29) == 0);
    assert_string_equal(first_error("GET http://a/\nX-A: b\rX-B: c\n", WL_FORMAT_HTTP),
                        "t.txt:2: a control character (byte 0x0d) at column 7");
    assert_string_equal(first_error("GET http://a/\x01\n", WL_FORMAT_HTTP),
                        "t.txt:1: a control character (byte 0x01) at column 14");
    assert_string_equal(first_error("{\"url\":\"http://a/\\u0007{{x}}\"}\n", WL_FORMAT_JSONL),
                        "t.txt:1: a control character in the URL");
    assert_true(wl_field_ok("a\tb", 3));
    assert_false(wl_field_ok("a\rb", 3));
    assert_false(wl_field_ok("a\0b", 3));
    assert_false(wl_field_ok("\x7f", 1));
    assert_true(wl_field_ok("\xc3\xa9", 2));
    /* a NUL byte: not a text file */
    struct wl_reader *rd;
    assert_int_equal(wl_reader_open_mem(&rd, "GET http://a/\0x\n", 16, "b.bin", NULL, WL_FORMAT_HTTP, err, sizeof err),
                     0);
    struct wl_entry e;
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "b.bin:1: a NUL byte (not a text file?)");
    /* the error repeats */
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "b.bin:1: a NUL byte (not a text file?)");
    wl_reader_close(rd);
    /* an empty file, comments only: no entry, no error */
    assert_string_equal(first_error("", WL_FORMAT_HTTP), "");
    assert_string_equal(first_error("# nothing\n\n", WL_FORMAT_HTTP), "");
}

static void test_long_line(void **state)
{
    (void)state;
    size_t n = WL_MAX_LINE + 100;
    char *s = malloc(n + 64);
    assert_non_null(s);
    strcpy(s, "GET http://a/\n\nGET http://a/\nX-Long: ");
    size_t k = strlen(s);
    memset(s + k, 'x', n - k);
    s[n] = '\0';
    assert_string_equal(first_error(s, WL_FORMAT_HTTP), "t.txt:4: line longer than 1048576 bytes");
    /* the long line starts at byte 29: one byte over the cap, then just at it */
    s[29 + WL_MAX_LINE + 1] = '\0';
    assert_string_equal(first_error(s, WL_FORMAT_HTTP), "t.txt:4: line longer than 1048576 bytes");
    s[29 + WL_MAX_LINE] = '\0';
    assert_string_equal(first_error(s, WL_FORMAT_HTTP), "");
    free(s);
}

static void test_read_at(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/many.txt", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 300; i++)
        fprintf(f, "%s\nGET http://h/%d\nX-I: %d\n\n", i % 7 ? "" : "# c", i, i);
    fclose(f);
    struct wl_reader *rd;
    assert_int_equal(wl_reader_open(&rd, path, WL_FORMAT_HTTP, err, sizeof err), 0);
    assert_true(wl_reader_seekable(rd));
    uint64_t off[300], line[300];
    struct wl_entry e;
    for (int i = 0; i < 300; i++) {
        assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
        assert_int_equal(e.index, i);
        off[i] = e.offset;
        line[i] = e.line;
    }
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), WL_END);
    for (int j = 0; j < 300; j++) {
        int i = (j * 37) % 300;
        assert_int_equal(wl_reader_read_at(rd, off[i], (uint64_t)i, line[i], &e, err, sizeof err), 0);
        char want[32];
        snprintf(want, sizeof want, "http://h/%d", i);
        assert_string_equal(e.url, want);
        assert_int_equal(e.index, i);
        assert_int_equal(e.line, line[i]);
        assert_int_equal(e.offset, off[i]);
    }
    /* next goes on after the entry read at */
    assert_int_equal(wl_reader_read_at(rd, off[10], 10, line[10], &e, err, sizeof err), 0);
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_string_equal(e.url, "http://h/11");
    assert_int_equal(e.index, 11);
    assert_int_equal(e.line, line[11]);
    wl_reader_close(rd);
    /* standard input redirected from the file, part-way in: offsets are still the file's */
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_true(lseek(fd, (off_t)off[5], SEEK_SET) == (off_t)off[5]);
    int saved = dup(STDIN_FILENO);
    assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
    assert_int_equal(wl_reader_open(&rd, "-", WL_FORMAT_HTTP, err, sizeof err), 0);
    assert_true(wl_reader_seekable(rd));
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_string_equal(e.url, "http://h/5");
    assert_int_equal(e.offset, off[5]);
    assert_int_equal(wl_reader_read_at(rd, off[7], 2, line[7], &e, err, sizeof err), 0);
    assert_string_equal(e.url, "http://h/7");
    wl_reader_close(rd);
    assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
    close(saved);
    assert_int_equal(wl_reader_open(&rd, "/nonexistent/t.txt", WL_FORMAT_HTTP, err, sizeof err), -ENOENT);
    assert_string_equal(err, "/nonexistent/t.txt: No such file or directory");
}

static void test_jsonl(void **state)
{
    (void)state;
    write_file("b.bin", "abc");
    const char *s =
        "{\"url\": \"http://a/1\"}\n"
        "\n"
        "{\"method\": \"POST\", \"url\": \"http://a/2\", \"headers\": {\"A\": \"1\", \"B\": [\"x\", \"y\"]},"
        " \"body\": \"t\\u0000t\", \"name\": \"writes\", \"weight\": 2.5}\r\n"
        "{\"url\": \"http://a/3\", \"body_base64\": \"AAEC\"}\n"
        "{\"url\": \"http://a/{{id}}\", \"body_file\": \"b.bin\"}";
    struct wl_reader *rd = open_str(s, WL_FORMAT_JSONL);
    struct wl_entry e;
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_string_equal(e.method, "GET");
    assert_string_equal(e.url, "http://a/1");
    assert_int_equal(e.nheaders, 0);
    assert_null(e.body);
    assert_null(e.name);
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_int_equal(e.index, 1);
    assert_int_equal(e.line, 3);
    assert_string_equal(e.method, "POST");
    assert_int_equal(e.nheaders, 3);
    assert_string_equal(e.headers[0], "A: 1");
    assert_string_equal(e.headers[1], "B: x");
    assert_string_equal(e.headers[2], "B: y");
    assert_int_equal(e.body_len, 3);
    assert_memory_equal(e.body, "t\0t", 3);
    assert_string_equal(e.name, "writes");
    assert_true(e.weight == 2.5);
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_int_equal(e.body_len, 3);
    assert_memory_equal(e.body, "\0\1\2", 3);
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_int_equal(e.line, 5);
    assert_int_equal(e.body_len, 3);
    assert_memory_equal(e.body, "abc", 3);
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), WL_END);
    wl_reader_close(rd);
}

static void test_jsonl_errors(void **state)
{
    (void)state;
    const enum wl_format J = WL_FORMAT_JSONL;
    assert_string_equal(first_error("{\"url\":\"http://a/\"}\n{\"url\":\"http://a/\",\"metod\":\"GET\"}\n", J),
                        "t.txt:2: unknown key \"metod\" (keys: method, url, headers, body, body_base64, body_file, "
                        "name, weight)");
    assert_string_equal(first_error("\n\n{\"url\":\"http://a/\",\"weight\":0}\n", J),
                        "t.txt:3: \"weight\" must be a number > 0");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"weight\":\"2\"}\n", J),
                        "t.txt:1: \"weight\" must be a number > 0");
    assert_string_equal(first_error("{\"method\":\"GET\"}\n", J), "t.txt:1: \"url\" is required");
    assert_string_equal(first_error("{\"url\":3}\n", J), "t.txt:1: \"url\" must be a string");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"method\":\"G T\"}\n", J),
                        "t.txt:1: \"method\" must be an HTTP token (GET, POST, ...)");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"body\":\"x\",\"body_file\":\"y\"}\n", J),
                        "t.txt:1: at most one of \"body\", \"body_base64\" and \"body_file\"");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"body_base64\":\"AAE\"}\n", J),
                        "t.txt:1: \"body_base64\" is not base64 (RFC 4648, padded) at character 4");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"body_file\":\"nope\"}\n", J),
                        "t.txt:1: body_file nope: No such file or directory");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"headers\":[\"A: b\"]}\n", J),
                        "t.txt:1: \"headers\" must be an object (\"Name\": \"value\" or [values])");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"headers\":{\"A\":1}}\n", J),
                        "t.txt:1: header \"A\": a value must be a string or a list of strings");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"headers\":{\"A\":\"x\\r\\nB: y\"}}\n", J),
                        "t.txt:1: header \"A\": a value may not hold a control character (CR, LF, NUL, ...)");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"headers\":{\"A B\":\"x\"}}\n", J),
                        "t.txt:1: header name \"A B\" is not an HTTP token");
    assert_string_equal(first_error("[1]\n", J), "t.txt:1: expected a JSON object (one per line)");
    assert_string_equal(first_error("{\"url\":\"http://a/\",\"url\":\"http://b/\"}\n", J),
                        "t.txt:1: expected a JSON object: duplicate object key near '\"url\"' (column 24)");
    const char *m = first_error("{\"url\": \"http://a/\"\n", J);
    assert_true(strncmp(m, "t.txt:1: expected a JSON object: ", 33) == 0);
}

/* ---------------------------------------------------------------- bounded memory from a pipe */

/* A million lines; under ASan (slow, and its quarantine makes RSS meaningless) a fifth. */
#if defined(__SANITIZE_ADDRESS__)
#define PIPE_LINES 200000
#else
#define PIPE_LINES 1000000
#endif

struct writer {
    int fd;
    bool jsonl;
};

static void *write_million(void *arg)
{
    struct writer *w = arg;
    FILE *f = fdopen(w->fd, "w");
    for (int i = 0; i < PIPE_LINES; i++) {
        if (w->jsonl)
            fprintf(f, "{\"method\":\"POST\",\"url\":\"http://127.0.0.1:8080/item/%d\",\"headers\":{\"X-I\":\"%d\"}}\n",
                    i, i);
        else if (i % 2 == 0)
            fprintf(f, "GET http://127.0.0.1:8080/item/%d\n", i);
        else
            fprintf(f, "\n");
    }
    fclose(f);
    return NULL;
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void read_million_from_pipe(bool jsonl)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    int saved = dup(STDIN_FILENO);
    assert_true(saved >= 0);
    assert_int_equal(dup2(p[0], STDIN_FILENO), STDIN_FILENO);
    close(p[0]);
    struct writer w = {.fd = p[1], .jsonl = jsonl};
    pthread_t th;
    long before = max_rss_kb();
    assert_int_equal(pthread_create(&th, NULL, write_million, &w), 0);
    struct wl_reader *rd;
    assert_int_equal(wl_reader_open(&rd, "-", jsonl ? WL_FORMAT_JSONL : WL_FORMAT_HTTP, err, sizeof err), 0);
    assert_false(wl_reader_seekable(rd));
    struct wl_entry e;
    uint64_t n = 0;
    int k;
    while ((k = wl_reader_next(rd, &e, err, sizeof err)) == 0) {
        if (e.index != n)
            fail_msg("entry %llu numbered %llu", (unsigned long long)n, (unsigned long long)e.index);
        n++;
    }
    assert_int_equal(k, WL_END);
    assert_int_equal(n, jsonl ? PIPE_LINES : PIPE_LINES / 2);
    char last[64];
    snprintf(last, sizeof last, "http://127.0.0.1:8080/item/%d", jsonl ? PIPE_LINES - 1 : PIPE_LINES - 2);
    assert_string_equal(e.url, last);
    assert_int_equal(wl_reader_read_at(rd, 0, 0, 1, &e, err, sizeof err), KNEE_EUNSUPPORTED);
    wl_reader_close(rd);
    pthread_join(th, NULL);
    assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
    close(saved);
    long grew_kb = max_rss_kb() - before;
#if defined(__SANITIZE_ADDRESS__)
    grew_kb = 0; /* ASan's quarantine keeps freed blocks (jansson's, per line): RSS says nothing */
#endif
    if (grew_kb > 20 * 1024)
        fail_msg("reading a million lines grew the peak RSS by %ld KiB", grew_kb);
}

static void test_million_lines_from_pipe(void **state)
{
    (void)state;
    read_million_from_pipe(false);
    read_million_from_pipe(true);
}

/* ---------------------------------------------------------------- feeds */

static struct wl_feed *feed_str(const char *s, bool jsonl)
{
    struct wl_feed *f;
    assert_int_equal(wl_feed_load_mem(&f, s, strlen(s), jsonl, "f", err, sizeof err), 0);
    return f;
}

static const char *feed_error(const char *s, bool jsonl)
{
    struct wl_feed *f = NULL;
    int k = wl_feed_load_mem(&f, s, strlen(s), jsonl, "f", err, sizeof err);
    assert_int_not_equal(k, 0);
    assert_null(f);
    return err;
}

static void test_feed_csv(void **state)
{
    (void)state;
    struct wl_feed *f = feed_str("id,name\r\n1,\"Smith, J\"\n2,\n", false);
    assert_int_equal(wl_feed_rows(f), 2);
    assert_int_equal(wl_feed_columns(f), 2);
    assert_string_equal(wl_feed_column(f, 0), "id");
    assert_string_equal(wl_feed_column(f, 1), "name");
    assert_null(wl_feed_column(f, 2));
    size_t n;
    const char *c = wl_feed_cell(f, 0, 1, &n);
    assert_int_equal(n, 8);
    assert_string_equal(c, "Smith, J");
    c = wl_feed_cell(f, 1, 0, &n);
    assert_int_equal(n, 1);
    assert_string_equal(c, "2");
    c = wl_feed_cell(f, 1, 1, &n);
    assert_int_equal(n, 0);
    wl_feed_free(f);

    assert_string_equal(feed_error("id,,x\n1,2,3\n", false), "f:1: column 2 has an empty name");
    assert_string_equal(feed_error("id,x,id\n1,2,3\n", false), "f:1: column \"id\" appears twice (columns 1 and 3)");
    assert_string_equal(feed_error("seq\n1\n", false), "f:1: column \"seq\" has a built-in placeholder's name");
    assert_string_equal(feed_error("a,b\n1,2\n\n3\n", false), "f:4: 1 fields, the header has 2");
    assert_string_equal(feed_error("a,b\n", false), "f: no rows (a feed needs after its header at least one row)");
    assert_string_equal(feed_error("a\n\"x\n", false), "f:2: end of input inside a quoted field (it opens on line 2)");

    char path[512];
    snprintf(path, sizeof path, "%s/users.csv", tmpdir);
    write_file("users.csv", "user,pass\nann,x1\nbob,y2\n");
    assert_int_equal(wl_feed_load(&f, path, err, sizeof err), 0);
    assert_int_equal(wl_feed_rows(f), 2);
    assert_string_equal(wl_feed_cell(f, 1, 0, &n), "bob");
    wl_feed_free(f);
    assert_int_equal(wl_feed_load(&f, "users.txt", err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "users.txt: a feed is a .csv or a .jsonl (.ndjson) file");
    assert_int_not_equal(wl_feed_load(&f, "/nonexistent/u.csv", err, sizeof err), 0);
    assert_string_equal(err, "/nonexistent/u.csv: No such file or directory");
}

static void test_feed_jsonl(void **state)
{
    (void)state;
    struct wl_feed *f = feed_str("{\"s\":\"x\",\"i\":-12,\"r\":0.1,\"e\":1e3,\"t\":true,\"n\":null}\n\n"
                                 "{\"n\":1,\"t\":false,\"e\":2.5,\"r\":1.0,\"i\":0,\"s\":\"\"}",
                                 true);
    assert_int_equal(wl_feed_rows(f), 2);
    assert_int_equal(wl_feed_columns(f), 6);
    const char *want0[] = {"x", "-12", "0.1", "1000", "true", ""};
    const char *want1[] = {"", "0", "1", "2.5", "false", "1"};
    const char *cols[] = {"s", "i", "r", "e", "t", "n"};
    size_t n;
    for (size_t i = 0; i < 6; i++) {
        assert_string_equal(wl_feed_column(f, i), cols[i]);
        assert_string_equal(wl_feed_cell(f, 0, i, &n), want0[i]);
        assert_string_equal(wl_feed_cell(f, 1, i, &n), want1[i]);
    }
    wl_feed_free(f);
    assert_string_equal(feed_error("{\"a\":1}\n{\"a\":1,\"b\":2}\n", true),
                        "f:2: key \"b\" is not a column (the first line's keys)");
    assert_string_equal(feed_error("{\"a\":1,\"b\":2}\n{\"a\":1}\n", true),
                        "f:2: no \"b\" (every line has the first line's keys)");
    assert_string_equal(feed_error("{\"a\":[1]}\n", true),
                        "f:1: \"a\" must be a string, number, true, false or null (no NUL)");
    assert_string_equal(feed_error("{}\n", true), "f:1: an empty object (the first names the columns)");
    assert_string_equal(feed_error("\n\n", true), "f: no rows (a feed needs  at least one row)");
    assert_string_equal(feed_error("{\"a\":1}\n[]\n", true), "f:2: expected a JSON object (one per line)");
}

/* ---------------------------------------------------------------- wl_pick */

static void check_permutations(uint64_t n, uint64_t seed)
{
    unsigned char *seen = calloc(n, 1);
    assert_non_null(seen);
    bool differs = false;
    for (uint64_t cycle = 0; cycle < 3; cycle++) {
        memset(seen, 0, n);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t seq = cycle * n + i;
            uint64_t r = wl_pick(WL_ORDER_SHUFFLE, n, seed, seq);
            if (r >= n || seen[r])
                fail_msg("n %llu cycle %llu: row %llu out of range or twice", (unsigned long long)n,
                         (unsigned long long)cycle, (unsigned long long)r);
            seen[r] = 1;
            if (cycle > 0 && r != wl_pick(WL_ORDER_SHUFFLE, n, seed, i))
                differs = true;
            assert_int_equal(r, wl_pick(WL_ORDER_SHUFFLE, n, seed, seq)); /* pure */
        }
    }
    if (n >= 3)
        assert_true(differs); /* each cycle has its own permutation */
    free(seen);
}

static void test_pick(void **state)
{
    (void)state;
    for (uint64_t seq = 0; seq < 50; seq++)
        assert_int_equal(wl_pick(WL_ORDER_SEQUENTIAL, 7, 1, seq), seq % 7);
    assert_int_equal(wl_pick(WL_ORDER_RANDOM, 0, 1, 5), 0);
    assert_int_equal(wl_pick(WL_ORDER_SHUFFLE, 1, 1, 5), 0);
    const uint64_t ns[] = {1, 2, 3, 1000, 1023, 1024, 1025};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        check_permutations(ns[i], 42);
        check_permutations(ns[i], 7);
    }
    /* random: in range, pure, every row drawn, close to uniform (fixed seed: exact counts) */
    unsigned counts[10] = {0};
    for (uint64_t seq = 0; seq < 100000; seq++) {
        uint64_t r = wl_pick(WL_ORDER_RANDOM, 10, 9, seq);
        assert_true(r < 10);
        counts[r]++;
    }
    for (int i = 0; i < 10; i++)
        assert_in_range(counts[i], 9500, 10500);
    assert_int_equal(wl_pick(WL_ORDER_RANDOM, 1000, 3, 77), wl_pick(WL_ORDER_RANDOM, 1000, 3, 77));
    assert_true(wl_pick(WL_ORDER_RANDOM, UINT64_MAX, 3, 1) != wl_pick(WL_ORDER_RANDOM, UINT64_MAX, 4, 1));
    /* shuffle of a huge n: in range, fast */
    for (uint64_t seq = 0; seq < 1000; seq++)
        assert_true(wl_pick(WL_ORDER_SHUFFLE, (1ULL << 62) + 3, 5, seq) < (1ULL << 62) + 3);
    assert_true(wl_pick(WL_ORDER_SHUFFLE, UINT64_MAX, 5, 12345) < UINT64_MAX);
}

/* ---------------------------------------------------------------- templates */

static const char *const NAMES[] = {"id", "first name", "token"};
static const struct wl_names names = {.names = NAMES, .n = 3, .source = "--feed users.csv"};

/* s expanded under (seq, seed) with values "7", "Ann", "T" into a static string. */
static const char *expand(const char *s, uint64_t seq, uint64_t seed)
{
    static char out[1024];
    struct wl_template *t;
    if (wl_template_compile(s, strlen(s), &names, &t, err, sizeof err) != 0)
        fail_msg("compile %s: %s", s, err);
    const struct wl_value v[] = {{"7", 1}, {"Ann", 3}, {"T", 1}};
    struct wl_ctx ctx = {.seq = seq, .seed = seed, .values = v, .nvalues = 3};
    struct wl_buf b = {0};
    assert_int_equal(wl_template_expand(t, &ctx, &b), 0);
    assert_true(b.len < sizeof out);
    if (b.len > 0)
        memcpy(out, b.p, b.len);
    out[b.len] = '\0';
    wl_buf_release(&b);
    wl_template_free(t);
    return out;
}

static const char *compile_error(const char *s)
{
    struct wl_template *t = NULL;
    assert_int_equal(wl_template_compile(s, strlen(s), &names, &t, err, sizeof err), KNEE_EINVAL);
    assert_null(t);
    return err;
}

static void test_template_expand(void **state)
{
    (void)state;
    assert_string_equal(expand("", 0, 0), "");
    assert_string_equal(expand("/plain", 0, 0), "/plain");
    assert_string_equal(expand("/u/{{id}}?n={{ first name }}&s={{seq}}", 12345, 0), "/u/7?n=Ann&s=12345");
    assert_string_equal(expand("{{seq}}", UINT64_MAX, 0), "18446744073709551615");
    assert_string_equal(expand("{\"a\":{{{id}}}}", 0, 0), "{\"a\":{7}}");
    assert_string_equal(expand("{{{{id}}", 0, 0), "{{id}}");
    assert_string_equal(expand("x{{{{{{token}}}}", 0, 0), "x{{T}}"); /* "{{{{" then {{token}} */
    assert_string_equal(expand("{{{{{token}}", 0, 0), "{{{token}}");
    assert_string_equal(expand("}} { {", 0, 0), "}} { {");
    assert_string_equal(expand("{{rand:5-5}}", 3, 0), "5");
    assert_string_equal(expand("{{rand:-3--3}}", 3, 0), "-3");
    for (uint64_t seq = 0; seq < 2000; seq++) {
        long v = strtol(expand("{{rand:-2-2}}", seq, 11), NULL, 10);
        assert_in_range(v + 2, 0, 4);
        long w = strtol(expand("{{ rand:10-20 }}", seq, 11), NULL, 10);
        assert_in_range(w, 10, 20);
    }
    char full[64];
    strcpy(full, expand("{{rand:-9223372036854775808-9223372036854775807}}", 1, 1));
    assert_true(strlen(full) > 0);
    /* deterministic in (seed, seq); the seed and seq both matter */
    char a[64], b[64];
    strcpy(a, expand("{{rand:0-1000000000}}", 5, 1));
    assert_string_equal(expand("{{rand:0-1000000000}}", 5, 1), a);
    strcpy(b, expand("{{rand:0-1000000000}}", 6, 1));
    assert_string_not_equal(a, b);
    strcpy(b, expand("{{rand:0-1000000000}}", 5, 2));
    assert_string_not_equal(a, b);
}

/* Every decimal the expansion writes (two digits at a time from the end) is printf's. */
static void test_template_digits(void **state)
{
    (void)state;
    char want[64];
    uint64_t p = 1;
    for (int d = 0; d < 20; d++, p *= 10) {
        const uint64_t seqs[] = {p - 1, p, p + 1, p * 5 + 3};
        for (size_t i = 0; i < 4; i++) {
            snprintf(want, sizeof want, "<%llu>", (unsigned long long)seqs[i]);
            assert_string_equal(expand("<{{seq}}>", seqs[i], 0), want);
        }
    }
    assert_string_equal(expand("{{rand:-9223372036854775808--9223372036854775808}}", 3, 0), "-9223372036854775808");
    assert_string_equal(expand("{{rand:9223372036854775807-9223372036854775807}}", 3, 0), "9223372036854775807");
    assert_string_equal(expand("{{rand:-10--10}}|{{rand:0-0}}|{{rand:-1--1}}", 3, 0), "-10|0|-1");
}

/* wl_template_expand_marked gives wl_template_expand's bytes whatever the buffer last held: the
 * same template with values of the same or another length, another template, a template freed
 * and another compiled (no reuse of its address can fool the marks). */
static void test_template_marked(void **state)
{
    (void)state;
    const char *src[] = {"GET /k/{{seq}} HTTP/1.1\r\nX-Id: {{id}}\r\n\r\n", "{{ first name }}={{seq}}&{{uuid}}",
                         "plain, no placeholder", "{{id}}{{seq}}{{rand:1-100000}}"};
    const struct wl_value vals[][3] = {
        {{"7", 1}, {"Ann", 3}, {"T", 1}}, {{"8", 1}, {"Bob", 3}, {"U", 1}}, {{"1234", 4}, {"", 0}, {"V", 1}}};
    struct wl_buf out = {0}, want = {0};
    struct wl_marks m = {0};
    for (int round = 0; round < 3; round++) {
        struct wl_template *t[4];
        for (int i = 0; i < 4; i++)
            assert_int_equal(wl_template_compile(src[i], strlen(src[i]), &names, &t[i], err, sizeof err), 0);
        for (uint64_t seq = 0; seq < 1500; seq += 7) {
            int which = (int)(seq % 13 < 9 ? 0 : seq % 4);
            struct wl_ctx ctx = {
                .seq = seq, .seed = 9, .values = vals[seq % 3 == 2 && seq % 5 ? 2 : seq % 2], .nvalues = 3};
            want.len = 0;
            assert_int_equal(wl_template_expand(t[which], &ctx, &want), 0);
            out.len = 0;
            assert_int_equal(wl_template_expand_marked(t[which], &ctx, &out, &m), 0);
            assert_int_equal(out.len, want.len);
            assert_memory_equal(out.p, want.p, want.len);
        }
        for (int i = 0; i < 4; i++)
            wl_template_free(t[i]);
    }
    wl_marks_release(&m);
    wl_buf_release(&out);
    wl_buf_release(&want);
}

/* wl_dec walks base, base + step, ... in decimal exactly as printf writes them: steps of one
 * and several digits, across every carry and power of ten, and past UINT64_MAX (it wraps as the
 * integer does). */
static void test_dec_counter(void **state)
{
    (void)state;
    const uint64_t bases[] = {0, 1, 7, 95, 999, 99990, 1234567, UINT64_MAX - 40};
    const uint64_t steps[] = {1, 2, 3, 9, 10, 11, 64, 999, 123456789};
    char want[32], got[32];
    struct wl_dec c;
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
        for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
            uint64_t v = bases[b];
            wl_dec_set(&c, v, steps[k]);
            for (int i = 0; i < 3000; i++, v += steps[k]) {
                snprintf(want, sizeof want, "%llu", (unsigned long long)v);
                assert_in_range(c.n, 1, 20);
                memcpy(got, wl_dec_digits(&c), c.n);
                got[c.n] = '\0';
                assert_string_equal(got, want);
                wl_dec_next(&c);
            }
        }
    }
}

/* wl_copy_short copies every length from 0 to 40 exactly, touching nothing around it. */
static void test_copy_short(void **state)
{
    (void)state;
    char src[48], dst[64];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (char)('A' + i);
    for (size_t n = 0; n <= 40; n++) {
        memset(dst, '.', sizeof dst);
        wl_copy_short(dst + 8, src, n);
        for (size_t i = 0; i < sizeof dst; i++)
            assert_int_equal(dst[i], i >= 8 && i < 8 + n ? src[i - 8] : '.');
    }
}

/* wl_marks_rewrite rewrites a buffer in place only when it may (the template's last expansion,
 * every value of its length, {{seq}} from a counter), and then gives wl_template_expand's bytes;
 * it declines another template, a value of another length, a {{rand}}, a seq without a counter.
 * wl_template_uses_seq/_draw and wl_template_id say what a template holds and who it is. */
static void test_marks_rewrite(void **state)
{
    (void)state;
    const char *src = "GET /k/{{seq}}?i={{id}} HTTP/1.1\r\nX: {{token}}\r\n\r\n";
    struct wl_template *t, *r, *o;
    assert_int_equal(wl_template_compile(src, strlen(src), &names, &t, err, sizeof err), 0);
    assert_int_equal(wl_template_compile("{{rand:1-9}}", 12, &names, &r, err, sizeof err), 0);
    assert_int_equal(wl_template_compile("{{uuid}}{{id}}", 14, &names, &o, err, sizeof err), 0);
    assert_true(wl_template_uses_seq(t));
    assert_false(wl_template_uses_draw(t));
    assert_false(wl_template_uses_seq(r));
    assert_true(wl_template_uses_draw(r));
    assert_true(wl_template_uses_draw(o));
    assert_true(wl_template_id(t) != wl_template_id(r));
    const struct wl_value a[] = {{"7", 1}, {"Ann", 3}, {"T", 1}}, b[] = {{"8", 1}, {"Bob", 3}, {"U", 1}},
                          c[] = {{"10", 2}, {"Bob", 3}, {"U", 1}};
    struct wl_dec d;
    wl_dec_set(&d, 1000, 1);
    struct wl_buf out = {0}, want = {0};
    struct wl_marks m = {0};
    struct wl_ctx ctx = {.seq = 1000, .values = a, .nvalues = 3, .seq_dec = &d};
    assert_false(wl_marks_rewrite(&m, wl_template_id(t), &ctx, &out)); /* nothing there yet */
    assert_int_equal(wl_template_expand_marked(t, &ctx, &out, &m), 0);
    for (uint64_t seq = 1001; seq < 1100; seq++) {
        wl_dec_next(&d);
        ctx = (struct wl_ctx){.seq = seq, .values = seq % 2 ? b : a, .nvalues = 3, .seq_dec = &d};
        out.len = 0;
        assert_true(wl_marks_rewrite(&m, wl_template_id(t), &ctx, &out));
        want.len = 0;
        assert_int_equal(wl_template_expand(t, &ctx, &want), 0);
        assert_int_equal(out.len, want.len);
        assert_memory_equal(out.p, want.p, want.len);
    }
    out.len = 0;
    ctx.values = c; /* {{id}} of another length */
    assert_false(wl_marks_rewrite(&m, wl_template_id(t), &ctx, &out));
    ctx.values = a;
    ctx.seq_dec = NULL; /* a {{seq}} with no counter: the caller expands */
    assert_false(wl_marks_rewrite(&m, wl_template_id(t), &ctx, &out));
    assert_false(wl_marks_rewrite(&m, wl_template_id(r), &ctx, &out)); /* another template */
    out.len = 0;
    assert_int_equal(wl_template_expand_marked(r, &ctx, &out, &m), 0);
    out.len = 0;
    assert_false(wl_marks_rewrite(&m, wl_template_id(r), &ctx, &out)); /* a {{rand}}: never in place */
    wl_marks_release(&m);
    wl_buf_release(&out);
    wl_buf_release(&want);
    wl_template_free(t);
    wl_template_free(r);
    wl_template_free(o);
}

/* wl_field_ok word by word: every length, a control byte, DEL or a tab at every place. */
static void test_field_ok(void **state)
{
    (void)state;
    char s[48];
    for (size_t len = 0; len <= sizeof s; len++) {
        memset(s, 'a', sizeof s);
        assert_true(wl_field_ok(s, len));
        for (size_t i = 0; i < len; i++) {
            const unsigned char bad[] = {0, 1, '\r', '\n', 0x1f, 0x7f};
            for (size_t k = 0; k < sizeof bad; k++) {
                s[i] = (char)bad[k];
                assert_false(wl_field_ok(s, len));
            }
            const unsigned char good[] = {'\t', ' ', 0x20, 0x7e, 0x80, 0xc3, 0xff};
            for (size_t k = 0; k < sizeof good; k++) {
                s[i] = (char)good[k];
                assert_true(wl_field_ok(s, len));
            }
            s[i] = 'a';
        }
    }
}

/* After wl_reader_checked the URLs are not parsed again; the other checks stay. */
static void test_reader_checked(void **state)
{
    (void)state;
    const char *text = "GET http://h:99999/x\n\nGET http://h/y\n\n";
    assert_string_equal(first_error(text, WL_FORMAT_HTTP),
                        "t.txt:1: bad URL \"http://h:99999/x\": port 99999 out of range 1..65535");
    struct wl_reader *rd = open_str(text, WL_FORMAT_HTTP);
    wl_reader_checked(rd);
    struct wl_entry e;
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_string_equal(e.url, "http://h:99999/x");
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), 0);
    assert_string_equal(e.url, "http://h/y");
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), WL_END);
    wl_reader_close(rd);
    rd = open_str("GET http://h/a\x01b\n", WL_FORMAT_HTTP);
    wl_reader_checked(rd);
    assert_int_equal(wl_reader_next(rd, &e, err, sizeof err), KNEE_EINVAL);
    wl_reader_close(rd);
}

static void test_template_uuid(void **state)
{
    (void)state;
    char u[128];
    strcpy(u, expand("{{uuid}}", 1, 1));
    assert_int_equal(strlen(u), 36);
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            assert_int_equal(u[i], '-');
        else
            assert_non_null(strchr("0123456789abcdef", u[i]));
    }
    assert_int_equal(u[14], '4');
    assert_non_null(strchr("89ab", u[19]));
    /* the first {{uuid}} of any template of one request is the same id; a second differs */
    char two[128];
    strcpy(two, expand("{{uuid}} {{uuid}}", 1, 1));
    assert_memory_equal(two, u, 36);
    assert_memory_not_equal(two + 37, u, 36);
    assert_string_not_equal(expand("{{uuid}}", 2, 1), u);
    assert_string_not_equal(expand("{{uuid}}", 1, 2), u);
}

static void test_template_errors(void **state)
{
    (void)state;
    assert_string_equal(compile_error("/{{user}}"),
                        "no column 'user' in --feed users.csv (columns: id, first name, token)");
    assert_string_equal(compile_error("{{rand:9-1}}"), "malformed placeholder {{rand:9-1}}: expected {{rand:A-B}} with "
                                                       "integers A <= B");
    assert_string_equal(compile_error("{{rand:1}}"), "malformed placeholder {{rand:1}}: expected {{rand:A-B}} with "
                                                     "integers A <= B");
    assert_string_equal(compile_error("{{rand:1-99999999999999999999}}"),
                        "malformed placeholder {{rand:1-99999999999999999999}}: expected {{rand:A-B}} with integers A "
                        "<= B");
    assert_string_equal(compile_error("ab{{id"), "unclosed \"{{\" at byte 3 (a literal \"{{\" is written \"{{{{\")");
    assert_string_equal(compile_error("{{ }}"), "empty placeholder {{}} (a literal \"{{\" is written \"{{{{\")");
    struct wl_template *t;
    assert_int_equal(wl_template_compile("{{id}}", 6, NULL, &t, err, sizeof err), KNEE_EINVAL);
    assert_string_equal(err, "unknown placeholder {{id}} (built-ins: seq, rand:A-B, uuid; no feed columns)");
}

static void test_template_misc(void **state)
{
    (void)state;
    struct wl_template *t;
    /* a body with NUL bytes is kept whole */
    assert_int_equal(wl_template_compile("a\0b{{token}}\0", 13, &names, &t, err, sizeof err), 0);
    assert_false(wl_template_literal(t));
    assert_false(wl_template_uses(t, 0));
    assert_false(wl_template_uses(t, 1));
    assert_true(wl_template_uses(t, 2));
    assert_false(wl_template_uses(t, 3));
    const struct wl_value v[] = {{"7", 1}};
    struct wl_ctx ctx = {.seq = 1, .values = v, .nvalues = 1}; /* token past nvalues: empty */
    struct wl_buf b = {0};
    assert_int_equal(wl_template_expand(t, &ctx, &b), 0);
    assert_int_equal(b.len, 4);
    assert_memory_equal(b.p, "a\0b\0", 4);
    wl_template_free(t);
    assert_int_equal(wl_template_compile("/x{{{{", 6, &names, &t, err, sizeof err), 0);
    assert_true(wl_template_literal(t));
    b.len = 0;
    assert_int_equal(wl_template_expand(t, &ctx, &b), 0);
    assert_int_equal(b.len, 4);
    assert_memory_equal(b.p, "/x{{", 4);
    wl_template_free(t);
    wl_buf_release(&b);
    /* once the buffer is large enough, expanding does not move it (no allocation) */
    const char *s = "{\"id\":{{id}},\"u\":\"{{uuid}}\",\"r\":{{rand:1-1000000}},\"s\":{{seq}}}";
    assert_int_equal(wl_template_compile(s, strlen(s), &names, &t, err, sizeof err), 0);
    ctx.seed = 3;
    for (uint64_t seq = 0; seq < 10; seq++) {
        ctx.seq = seq;
        b.len = 0;
        assert_int_equal(wl_template_expand(t, &ctx, &b), 0);
    }
    char *p = b.p;
    size_t cap = b.cap;
    for (uint64_t seq = 0; seq < 100000; seq++) {
        ctx.seq = seq;
        b.len = 0;
        assert_int_equal(wl_template_expand(t, &ctx, &b), 0);
    }
    assert_ptr_equal(b.p, p);
    assert_int_equal(b.cap, cap);
    /* appends: two expansions in a row */
    size_t one = b.len;
    assert_int_equal(wl_template_expand(t, &ctx, &b), 0);
    assert_int_equal(b.len, 2 * one);
    assert_memory_equal(b.p, b.p + one, one);
    wl_template_free(t);
    wl_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_http_vegeta_file),
        cmocka_unit_test(test_http_errors),
        cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_read_at),
        cmocka_unit_test(test_jsonl),
        cmocka_unit_test(test_jsonl_errors),
        cmocka_unit_test(test_million_lines_from_pipe),
        cmocka_unit_test(test_feed_csv),
        cmocka_unit_test(test_feed_jsonl),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_template_expand),
        cmocka_unit_test(test_template_uuid),
        cmocka_unit_test(test_template_errors),
        cmocka_unit_test(test_template_misc),
        cmocka_unit_test(test_template_digits),
        cmocka_unit_test(test_template_marked),
        cmocka_unit_test(test_dec_counter),
        cmocka_unit_test(test_copy_short),
        cmocka_unit_test(test_marks_rewrite),
        cmocka_unit_test(test_field_ok),
        cmocka_unit_test(test_reader_checked),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
