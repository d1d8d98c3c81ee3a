/* Numbers printed the way Java's Formatter prints them (Locale.US), so knee's .hlog lines and
 * percentile tables match the HdrHistogram reference character for character. Java's "%.Nf"
 * rounds the shortest decimal that identifies the double (Double.toString's digits) half-up,
 * where C's printf rounds the exact binary value half-even: 1.005 prints "1.01" in Java and
 * "1.00" in C. Pure functions; thread-safe. */
#ifndef KNEE_HLOG_JFMT_H
#define KNEE_HLOG_JFMT_H

#include <stddef.h>

/* Java String.format(Locale.US, "%.<prec>f", v) into buf (NUL-terminated, truncated to len).
 * prec 0..30. NaN and infinities print as Java does ("NaN", "Infinity", "-Infinity").
 * Returns buf. */
char *jfmt_fixed(char *buf, size_t len, double v, int prec);

#endif
