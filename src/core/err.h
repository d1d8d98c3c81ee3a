/* Error codes of libknee: every function that can fail returns 0 or a negative code from
 * this list; system failures return -errno (always > -4096, so the ranges never meet). */
#ifndef KNEE_CORE_ERR_H
#define KNEE_CORE_ERR_H

#include <stdarg.h>
#include <stdio.h>

#define KNEE_ERRORS(X)                                                                                                 \
    X(KNEE_EINVAL, -5001, "invalid argument")                                                                          \
    X(KNEE_ENAN, -5002, "value is not a number")                                                                       \
    X(KNEE_EINF, -5003, "value is infinite")                                                                           \
    X(KNEE_ENEG, -5004, "value is negative")                                                                           \
    X(KNEE_ERANGE, -5005, "value out of range")                                                                        \
    X(KNEE_EEMPTY, -5006, "no values")                                                                                 \
    X(KNEE_EMISMATCH, -5007, "incompatible parameters")                                                                \
    X(KNEE_EFORMAT, -5008, "malformed input")                                                                          \
    X(KNEE_ETRUNC, -5009, "truncated input")                                                                           \
    X(KNEE_EOVERFLOW, -5010, "count overflow")                                                                         \
    X(KNEE_ETOOBIG, -5011, "input larger than allowed")                                                                \
    X(KNEE_EVERSION, -5012, "unsupported format version")                                                              \
    X(KNEE_ECOOKIE, -5013, "wrong cookie (not an HdrHistogram encoding)")                                              \
    X(KNEE_EUNSTABLE, -5014, "unstable system (arrival rate >= capacity)")                                             \
    X(KNEE_ENOTFOUND, -5015, "not found")                                                                              \
    X(KNEE_EUNSUPPORTED, -5016, "not supported")

enum knee_err {
    KNEE_OK = 0,
#define KNEE_ERR_ENUM(name, code, msg) name = (code),
    KNEE_ERRORS(KNEE_ERR_ENUM)
#undef KNEE_ERR_ENUM
};

/* The message for a code from KNEE_ERRORS or a negative errno. Never NULL. */
const char *knee_strerror(int code);

/* Write a one-line reason into err (printf-style; nothing when err is NULL or errlen 0) and
 * return code: `return knee_fail(err, errlen, KNEE_EINVAL, "bad --rate '%s'", s);`. The one
 * format-and-return helper of libknee. */
int knee_fail(char *err, unsigned long errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Copy the n bytes of src into dst (dstlen bytes, always NUL-terminated when dstlen > 0) as
 * printable text for one line of a terminal: CR, LF and TAB become \r, \n and \t, every other
 * C0 control byte, DEL, the C1 controls (U+0080..U+009F) and bytes that are not valid UTF-8
 * become \xNN (one per byte); valid UTF-8 text is copied as it is. A backslash is copied as it
 * is (paths stay readable). Returns the length the escaped text needs (without the NUL), as
 * snprintf does, so a caller can size dst. */
unsigned long knee_escape(char *dst, unsigned long dstlen, const char *src, unsigned long n);

/* Print one error line to out: prefix (as it is, e.g. "knee stats: "), then the formatted
 * message with knee_escape applied (a message may quote input: a CSV cell, a log line, a
 * file name), then '\n'. Every command's error lines go through here (cli/opt's opt_fail,
 * the dispatch, knee lab), so no byte of input reaches a terminal as a control sequence. */
void knee_report(FILE *out, const char *prefix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void knee_vreport(FILE *out, const char *prefix, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Abort with a message; used for out-of-memory (knee never limps on after a failed malloc). */
_Noreturn void knee_oom(void);

/* malloc/calloc/realloc that abort on failure (via knee_oom). */
void *xmalloc(unsigned long size);
void *xcalloc(unsigned long n, unsigned long size);
void *xrealloc(void *p, unsigned long size);
char *xstrdup(const char *s);

#endif
