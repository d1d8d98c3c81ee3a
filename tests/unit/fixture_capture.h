/* The lab sentence tests' capture (tests/unit/test_lab_say.c, test_lab_tls.c): a printer run
 * into memory, and the wrapped sentences joined back into lines so phrases can be searched.
 * Test code, header-only; include it after <cmocka.h>. */
#ifndef KNEE_TESTS_FIXTURE_CAPTURE_H
#define KNEE_TESTS_FIXTURE_CAPTURE_H

#include <stdio.h>

/* Run `call`, a printer writing to the FILE *out this declares, into memory: text (a char *)
 * gets the heap text, which the caller frees. */
#define CAPTURE(text, call)                                                                                            \
    do {                                                                                                               \
        size_t len_ = 0;                                                                                               \
        FILE *out = open_memstream(&(text), &len_);                                                                    \
        assert_non_null(out);                                                                                          \
        call;                                                                                                          \
        fclose(out);                                                                                                   \
    } while (0)

/* The sentences are wrapped at LAB_SAY_WIDTH, continuation lines indented by two spaces: join
 * those lines (in place) so phrases can be searched; a new "- " sentence keeps its line. */
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
