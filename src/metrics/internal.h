/* Helpers shared by the files of src/metrics (not part of its API). */
#ifndef KNEE_METRICS_INTERNAL_H
#define KNEE_METRICS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..n) is well-formed UTF-8 (no overlong forms, no surrogates, at most
 * U+10FFFF): both expositions must be UTF-8. */
bool metrics_utf8_valid(const char *s, size_t n);

/* Escape s[0..n) into out (NUL-terminated; cap >= 2n + 1 always suffices): backslash -> \\,
 * line feed -> \n, and double quote -> \" unless keep_quotes (the 0.0.4 HELP rule; label
 * values and OpenMetrics HELP escape it). Returns the length written. */
size_t metrics_escape(const char *s, size_t n, bool keep_quotes, char *out, size_t cap);

#endif
