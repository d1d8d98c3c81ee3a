/* Text printers under test, captured (tests/unit/test_lab_say.c, test_lab_tls.c): CAPTURE runs a
 * printer into memory, unwrap joins the lines knee lab wraps at LAB_SAY_WIDTH so phrases can be
 * searched. Test code, header-only. */
#ifndef KNEE_TESTS_CAPTURE_H
#define KNEE_TESTS_CAPTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

/* Run `call`, which prints to the FILE *out it finds in scope, into memory: text then holds what
 * it printed (the caller frees it). */
#define CAPTURE(text, call)                                                                                            \
    do {                                                                                                               \
        size_t len_ = 0;                                                                                               \
        FILE *out = open_memstream(&(text), &len_);                                                                    \
        assert_non_null(out);                                                                                          \
        call;                                                                                                          \
        fclose(out);                                                                                                   \
    } while (0)

/* Joins t's wrapped sentence lines (a newline and two spaces, not a new "- " item) in place;
 * returns t. */
static inline char *unwrap(char *t)
{
    char *w = t;
    for (char *r = t; *r; r++) {
        if (r[0] == '\n' && r[1] == ' ' && r[2] == ' ' && r[3] != '-') {
            *w++ = ' ';
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return t;
}

#endif
