/* Unit tests for src/csv: splitting, quoting, CRLF, blank lines, BOM, line numbers (also
 * after quoted line breaks), every error with its line, caps, records that straddle buffer
 * refills (checked against a plain reference parser), and the number parser bit for bit
 * against strtod. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/rng.h"
#include "csv/csv.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct csv_reader *open_str(const char *s)
{
    struct csv_reader *r;
    assert_int_equal(csv_reader_open_mem(&r, s, strlen(s), NULL), 0);
    return r;
}

/* Render a record as "f1|f2|f3@line" for compact comparisons. */
static const char *show(const struct csv_record *rec)
{
    static char out[4096];
    size_t k = 0;
    for (size_t i = 0; i < rec->n; i++) {
        k += (size_t)snprintf(out + k, sizeof out - k, "%s%s", i ? "|" : "", rec->field[i]);
        assert_int_equal(strlen(rec->field[i]), rec->len[i]);
    }
    snprintf(out + k, sizeof out - k, "@%llu", (unsigned long long)rec->line);
    return out;
}

static void expect_records(const char *input, const char *const *want, size_t nwant)
{
    struct csv_reader *r = open_str(input);
    struct csv_record rec;
    for (size_t i = 0; i < nwant; i++) {
        int k = csv_next(r, &rec);
        if (k != 1)
            fail_msg("record %zu: csv_next = %d (%s)", i, k, csv_reader_error(r));
        assert_string_equal(show(&rec), want[i]);
    }
    assert_int_equal(csv_next(r, &rec), 0);
    assert_int_equal(csv_next(r, &rec), 0);
    csv_reader_close(r);
}

#define EXPECT(input, ...)                                                                                             \
    do {                                                                                                               \
        const char *const w_[] = {__VA_ARGS__};                                                                        \
        expect_records(input, w_, sizeof w_ / sizeof w_[0]);                                                           \
    } while (0)

static void test_plain(void **state)
{
    (void)state;
    EXPECT("server,start_s,latency_ms\nA,0.01,10.5\nB,0.02,3\n", "server|start_s|latency_ms@1", "A|0.01|10.5@2",
           "B|0.02|3@3");
    EXPECT("a,b\r\n1,2\r\n", "a|b@1", "1|2@2");         /* CRLF */
    EXPECT("a,b\n1,2", "a|b@1", "1|2@2");               /* no final newline */
    EXPECT("a,b\r\n1,2\r", "a|b@1", "1|2@2");           /* CR at the very end */
    EXPECT("\n\na,b\n\n\r\n1,2\n\n", "a|b@3", "1|2@6"); /* blank lines skipped, lines counted */
    EXPECT("\xEF\xBB\xBFx,y\n1,2\n", "x|y@1", "1|2@2"); /* UTF-8 BOM */
    EXPECT(",\n,,\n", "|@1", "||@2");                   /* empty fields */
    EXPECT("a\n", "a@1");
    EXPECT("a b , c\"d\n", "a b | c\"d@1"); /* spaces kept; a stray quote mid-field is text */
}

static void test_empty_input(void **state)
{
    (void)state;
    struct csv_reader *r = open_str("");
    struct csv_record rec;
    assert_int_equal(csv_next(r, &rec), 0);
    csv_reader_close(r);
    r = open_str("\n\r\n\n");
    assert_int_equal(csv_next(r, &rec), 0);
    csv_reader_close(r);
}

static void test_quoted(void **state)
{
    (void)state;
    EXPECT("\"a,b\",c\n", "a,b|c@1");
    EXPECT("\"say \"\"hi\"\"\",x\n", "say \"hi\"|x@1");
    EXPECT("\"\",\"\"\n", "|@1");
    EXPECT("\"two\nlines\",x\nnext,y\n", "two\nlines|x@1", "next|y@3"); /* line numbers go on */
    EXPECT("\"crlf\r\ninside\",x\r\nnext,y\r\n", "crlf\r\ninside|x@1", "next|y@3");
    EXPECT("x,\"q\"\r\ny,\"r\"", "x|q@1", "y|r@2");
    EXPECT("x,\"q\"\r", "x|q@1");
    EXPECT("\"\"\"\"\n", "\"@1");
    EXPECT("a,\"b\"\n\n\"c\",d\n", "a|b@1", "c|d@3");
    struct csv_reader *r = open_str("\"q\",plain\n");
    struct csv_record rec;
    assert_int_equal(csv_next(r, &rec), 1);
    assert_true(rec.quoted[0]);
    assert_false(rec.quoted[1]);
    csv_reader_close(r);
}

static void expect_error(const char *input, const struct csv_limits *lim, int nok, int code, uint64_t line,
                         const char *msg)
{
    struct csv_reader *r;
    assert_int_equal(csv_reader_open_mem(&r, input, strlen(input), lim), 0);
    struct csv_record rec;
    for (int i = 0; i < nok; i++)
        assert_int_equal(csv_next(r, &rec), 1);
    assert_int_equal(csv_next(r, &rec), code);
    assert_int_equal(csv_reader_line(r), line);
    if (!strstr(csv_reader_error(r), msg))
        fail_msg("error '%s' lacks '%s'", csv_reader_error(r), msg);
    assert_int_equal(csv_next(r, &rec), code); /* sticky */
    csv_reader_close(r);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("a,b\n1,\"open\n2,3\n", NULL, 1, KNEE_ETRUNC, 2, "inside a quoted field");
    expect_error("a,b\n\n\"x\"y,1\n", NULL, 1, KNEE_EFORMAT, 3, "after a closing quote");
    expect_error("a,b\n\"l1\nl2\"z\n", NULL, 1, KNEE_EFORMAT, 3, "after a closing quote");
    struct csv_limits lim = {.max_record = 16, .max_field = 4, .max_fields = 3};
    expect_error("a,b\n1,2,3,4\n", &lim, 1, KNEE_ETOOBIG, 2, "more than 3 fields");
    expect_error("a,b\n12345,1\n", &lim, 1, KNEE_ETOOBIG, 2, "field 1 is longer than 4");
    expect_error("a,b\n\"12345\",1\n", &lim, 1, KNEE_ETOOBIG, 2, "field 1 is longer than 4");
    expect_error("a,b\n1,2,3,\"4\"\n", &lim, 1, KNEE_ETOOBIG, 2, "more than 3 fields");
    expect_error("a\n0123456789abcdefXYZ\n", &lim, 1, KNEE_ETOOBIG, 2, "longer than 16 bytes");

    /* a NUL byte: not text; the message names the line it is on */
    const char bin[] = "a,b\n1,2\n3,\0\n";
    struct csv_reader *r;
    assert_int_equal(csv_reader_open_mem(&r, bin, sizeof bin - 1, NULL), 0);
    struct csv_record rec;
    assert_int_equal(csv_next(r, &rec), KNEE_EFORMAT);
    assert_int_equal(csv_reader_line(r), 3);
    assert_non_null(strstr(csv_reader_error(r), "not a text file"));
    csv_reader_close(r);

    struct csv_limits zero = {0};
    assert_int_equal(csv_reader_open_mem(&r, "", 0, &zero), KNEE_EINVAL);
    assert_int_equal(csv_reader_open(&r, "/nonexistent/file.csv", NULL), -2);
}

/* A plain reference parser over the whole input: the same rules, no buffering. */
struct ref_rec {
    char **f;
    size_t n;
    uint64_t line;
};

static size_t ref_parse(const char *s, size_t len, struct ref_rec *out, size_t max)
{
    size_t i = 0, nrec = 0;
    uint64_t line = 1;
    char *buf = malloc(len + 1); /* one scratch field buffer, copied out per field */
    while (i < len && nrec < max) {
        if (s[i] == '\n') {
            line++;
            i++;
            continue;
        }
        if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n') {
            line++;
            i += 2;
            continue;
        }
        struct ref_rec *r = &out[nrec++];
        r->line = line;
        r->n = 0;
        r->f = NULL;
        for (;;) {
            size_t w = 0;
            if (s[i] == '"') {
                i++;
                for (;;) {
                    if (s[i] == '"' && i + 1 < len && s[i + 1] == '"') {
                        buf[w++] = '"';
                        i += 2;
                    } else if (s[i] == '"') {
                        i++;
                        break;
                    } else {
                        if (s[i] == '\n')
                            line++;
                        buf[w++] = s[i++];
                    }
                }
                if (i < len && s[i] == '\r')
                    i++;
            } else {
                while (i < len && s[i] != ',' && s[i] != '\n')
                    buf[w++] = s[i++];
                if (w > 0 && buf[w - 1] == '\r')
                    w--;
            }
            buf[w] = '\0';
            r->f = realloc(r->f, (r->n + 1) * sizeof *r->f);
            r->f[r->n++] = strdup(buf);
            if (i >= len || s[i] == '\n') {
                if (i < len)
                    i++;
                line++;
                break;
            }
            i++;
        }
    }
    free(buf);
    return nrec;
}

static void random_field(struct rng *g, char *out, size_t *len)
{
    size_t n = rng_below(g, 12);
    size_t k = 0;
    bool quote = rng_below(g, 5) == 0;
    if (quote)
        out[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        static const char plain[] = "abcxyz0123456789.- ";
        static const char special[] = ",\n\"\r";
        if (quote && rng_below(g, 6) == 0) {
            char c = special[rng_below(g, 4)];
            if (c == '\r') { /* keep CR only as part of CRLF so the reference agrees */
                out[k++] = '\r';
                c = '\n';
            }
            out[k++] = c;
            if (c == '"')
                out[k++] = '"';
        } else {
            out[k++] = plain[rng_below(g, sizeof plain - 1)];
        }
    }
    if (quote)
        out[k++] = '"';
    *len = k;
}

/* About 6 MB of random records with long lines, quotes and quoted line breaks: several
 * refills of the 1 MiB reads, records crossing every boundary. */
static void test_random_against_reference(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 7);
    size_t cap = 7u << 20, len = 0;
    char *s = malloc(cap);
    while (len < (6u << 20)) {
        size_t nf = 1 + rng_below(&g, 6);
        if (rng_below(&g, 200) == 0)
            nf = 300; /* an occasional wide row */
        for (size_t f = 0; f < nf; f++) {
            size_t k;
            random_field(&g, s + len, &k);
            len += k;
            if (f + 1 < nf)
                s[len++] = ',';
        }
        if (len > 0 && s[len - 1] == '\n')
            s[len++] = 'z'; /* never end a record in a way that makes a blank-line ambiguity */
        if (rng_below(&g, 2))
            s[len++] = '\r';
        s[len++] = '\n';
        if (rng_below(&g, 50) == 0)
            s[len++] = '\n';
    }
    enum { MAXREC = 400000 };
    struct ref_rec *ref = malloc(MAXREC * sizeof *ref);
    size_t nref = ref_parse(s, len, ref, MAXREC);
    assert_true(nref > 10000);

    struct csv_reader *r;
    assert_int_equal(csv_reader_open_mem(&r, s, len, NULL), 0);
    struct csv_record rec;
    for (size_t i = 0; i < nref; i++) {
        int k = csv_next(r, &rec);
        if (k != 1)
            fail_msg("record %zu: %d %s (line %llu)", i, k, csv_reader_error(r),
                     (unsigned long long)csv_reader_line(r));
        assert_int_equal(rec.line, ref[i].line);
        assert_int_equal(rec.n, ref[i].n);
        for (size_t f = 0; f < rec.n; f++)
            assert_string_equal(rec.field[f], ref[i].f[f]);
    }
    assert_int_equal(csv_next(r, &rec), 0);
    assert_int_equal(csv_reader_offset(r), len);
    csv_reader_close(r);
    for (size_t i = 0; i < nref; i++) {
        for (size_t f = 0; f < ref[i].n; f++)
            free(ref[i].f[f]);
        free(ref[i].f);
    }
    free(ref);
    free(s);
}

struct trickle {
    int fd;
    const char *text;
};

/* Writes one byte at a time so the reader sees many short reads. */
static void *trickle_main(void *arg)
{
    struct trickle *t = arg;
    for (const char *c = t->text; *c; c++) {
        if (write(t->fd, c, 1) != 1)
            break;
        usleep(200);
    }
    close(t->fd);
    return NULL;
}

/* The same through a real file descriptor (a pipe delivers short reads). */
static void test_file_and_pipe(void **state)
{
    (void)state;
    char path[] = "/tmp/knee_test_csv_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "h1,h2\n1,\"x\ny\"\n2,z\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct csv_reader *r;
    assert_int_equal(csv_reader_open(&r, path, NULL), 0);
    struct csv_record rec;
    assert_int_equal(csv_next(r, &rec), 1);
    assert_int_equal(csv_next(r, &rec), 1);
    assert_string_equal(rec.field[1], "x\ny");
    assert_int_equal(csv_next(r, &rec), 1);
    assert_int_equal(rec.line, 4);
    assert_int_equal(csv_next(r, &rec), 0);
    csv_reader_close(r);
    unlink(path);

    int p[2];
    assert_int_equal(pipe(p), 0);
    pthread_t t;
    struct trickle tr = {p[1], text};
    assert_int_equal(pthread_create(&t, NULL, trickle_main, &tr), 0);
    assert_int_equal(csv_reader_open_fd(&r, p[0], NULL), 0);
    int n = 0, k;
    while ((k = csv_next(r, &rec)) == 1)
        n++;
    if (k != 0)
        fail_msg("pipe: %d %s", k, csv_reader_error(r));
    assert_int_equal(n, 3);
    csv_reader_close(r);
    pthread_join(t, NULL);
    close(p[0]);
}

static void expect_num(const char *s, int code, double want)
{
    double v = -12345;
    int k = csv_parse_double(s, strlen(s), &v);
    if (k != code)
        fail_msg("'%s': code %d, want %d", s, k, code);
    if (code == 0 && !(v == want && signbit(v) == signbit(want)))
        fail_msg("'%s': %.17g, want %.17g", s, v, want);
}

static void test_numbers(void **state)
{
    (void)state;
    expect_num("0", 0, 0.0);
    expect_num("-0", 0, -0.0);
    expect_num("10.5", 0, 10.5);
    expect_num(" 10.5 ", 0, 10.5);
    expect_num("+3", 0, 3.0);
    expect_num(".5", 0, 0.5);
    expect_num("5.", 0, 5.0);
    expect_num("1e3", 0, 1000.0);
    expect_num("1E-3", 0, 0.001);
    expect_num("222.923", 0, 222.923);
    expect_num("0.1", 0, 0.1);
    expect_num("123456789012345678901234567890", 0, 123456789012345678901234567890.0);
    expect_num("9007199254740993", 0, 9007199254740992.0); /* 2^53+1 rounds to even */
    expect_num("1e-400", 0, 0.0);
    expect_num("4.9e-324", 0, 4.9e-324);
    expect_num("0.000000000000000000000000000001", 0, 1e-30);
    expect_num("1e999", KNEE_EINF, 0);
    expect_num("nan", KNEE_ENAN, 0);
    expect_num("NaN", KNEE_ENAN, 0);
    expect_num("-nan", KNEE_ENAN, 0);
    expect_num("inf", KNEE_EINF, 0);
    expect_num("-Infinity", KNEE_EINF, 0);
    const char *bad[] = {"",  " ", "abc",  "1,5",   "1.2.3", "1e",  "1e+", "e5",
                         ".", "-", "0x10", "1_000", "12ms",  "--1", "1 2", "infinit"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_num(bad[i], KNEE_EFORMAT, 0);
    /* not NUL-terminated: only len bytes count */
    double v;
    assert_int_equal(csv_parse_double("12.5xyz", 4, &v), 0);
    assert_true(v == 12.5);
}

/* Random decimals of every shape, compared bit for bit with strtod. */
static void test_numbers_match_strtod(void **state)
{
    (void)state;
    struct rng g;
    rng_seed(&g, 99);
    char s[64];
    for (int it = 0; it < 300000; it++) {
        size_t k = 0;
        if (rng_below(&g, 4) == 0)
            s[k++] = '-';
        size_t nint = rng_below(&g, 22);
        size_t nfrac = rng_below(&g, 4) ? rng_below(&g, 22) : 0;
        for (size_t i = 0; i < nint; i++)
            s[k++] = (char)('0' + rng_below(&g, 10));
        if (nfrac || nint == 0) {
            s[k++] = '.';
            for (size_t i = 0; i < nfrac + (nint == 0); i++)
                s[k++] = (char)('0' + rng_below(&g, 10));
        }
        if (rng_below(&g, 5) == 0)
            k += (size_t)snprintf(s + k, sizeof s - k, "e%d", (int)rng_below(&g, 80) - 40);
        s[k] = '\0';
        double want = strtod(s, NULL);
        double got;
        int r = csv_parse_double(s, k, &got);
        if (r != 0 || memcmp(&got, &want, sizeof got) != 0)
            fail_msg("'%s': %d %.17g, strtod %.17g", s, r, got, want);
    }
    /* the shapes knee writes: %.6f and %.9f of random values */
    for (int it = 0; it < 200000; it++) {
        double x = rng_uniform(&g) * pow(10, (double)rng_below(&g, 8));
        snprintf(s, sizeof s, it % 2 ? "%.6f" : "%.9f", x);
        double want = strtod(s, NULL), got;
        assert_int_equal(csv_parse_double(s, strlen(s), &got), 0);
        assert_memory_equal(&got, &want, sizeof got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_quoted),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_random_against_reference),
        cmocka_unit_test(test_file_and_pipe),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_numbers_match_strtod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
