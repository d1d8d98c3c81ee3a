/* One table of units drives both parsing and printing: durations (ns internally), rates
 * (per second), counts (10k, 2M) and shares (1%, 0.01). Parsers accept the whole string or
 * fail; they never read a prefix and ignore the rest. The printers are the one place where
 * knee formats counts, rates, milliseconds, times and percentages for people. */
#ifndef KNEE_CORE_UNITS_H
#define KNEE_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "250ms", "10s", "1.5m", "2h", "100us", "50ns". A bare number takes default_unit_ns
 * (e.g. NS_PER_S for --duration, NS_PER_MS for --hit-ms). Returns 0 or KNEE_EFORMAT /
 * KNEE_ENEG / KNEE_ERANGE. */
int units_parse_duration_ns(const char *s, uint64_t default_unit_ns, uint64_t *out_ns);

/* "5000", "10k", "1.5M", "100/s", "6000/m" (per minute) → requests per second (> 0).
 * Returns 0 or KNEE_EFORMAT / KNEE_ENEG / KNEE_ERANGE (zero). */
int units_parse_rate(const char *s, double *out_per_s);

/* "1000", "10k", "2M", "1G" → an exact non-negative integer (fractions must land on an integer).
 * Returns 0 or KNEE_EFORMAT / KNEE_ENEG / KNEE_ERANGE (above 9e18). */
int units_parse_count(const char *s, uint64_t *out);

/* "1%", "0.5%", or a plain fraction "0.01" → a fraction in [0, 1]. Returns 0 or
 * KNEE_EFORMAT / KNEE_ENEG / KNEE_ERANGE (above 1). */
int units_parse_share(const char *s, double *out);

/* A plain finite double (no units); for --seed style integers use units_parse_count.
 * Returns 0 or KNEE_EFORMAT. All parsers are pure: *out is written only on success. */
int units_parse_double(const char *s, double *out);

/* Printing. Every formatter writes a NUL-terminated string into buf (truncated to len - 1
 * bytes like snprintf) and returns buf, so it can be used as a printf argument. A value
 * that stands for "no samples" (NaN) prints as "-" where noted. */

/* A duration with a unit chosen for 3-4 significant digits: "812ns", "12.3us", "4.56ms",
 * "1.23s", "2m03s". */
char *units_fmt_duration(uint64_t ns, char *buf, size_t len);

/* A time in seconds (may be negative or fractional) with a unit for `sig` significant digits
 * and no trailing zeros: units_fmt_seconds(0.02333, 4) = "23.33ms"; "812ns", "1.5s"; "0" for
 * exactly 0. Units: ns below 1 us, us below 1 ms, ms below 1 s, else s. */
char *units_fmt_seconds(double s, int sig, char *buf, size_t len);

/* A count with thousands separators: 1234567 → "1,234,567". */
char *units_fmt_count(uint64_t v, char *buf, size_t len);

/* A rate per second, rounded to one decimal, with thousands separators: 12345.67 →
 * "12,345.7"; "-" when not finite (no window to divide by). From 1e15 on, every formatter
 * below that writes fixed-point numbers switches to scientific notation ("1.79e+308", never a
 * 309-digit number). */
char *units_fmt_rate(double per_s, char *buf, size_t len);

/* Milliseconds for a latency table: three decimals ("12.345"), none from 100000 on
 * ("123457"); "-" when not finite (no samples). */
char *units_fmt_ms(double ms, char *buf, size_t len);

/* A plain number with `decimals` digits after the point ("12.3" for 1 decimal); "-" for NaN
 * (no samples). */
char *units_fmt_fixed(double v, int decimals, char *buf, size_t len);

/* A number for a narrow table cell (knee stats' 9-column tables): as units_fmt_fixed ("12.5",
 * "-" for NaN), but from 1e12 on with two significant digits ("1.8e+308"), so any huge value
 * takes at most 8 characters and the columns stay apart; "inf" for an infinity. */
char *units_fmt_cell(double v, int decimals, char *buf, size_t len);

/* A fraction as a percentage with `sig` significant digits: 0.012345, 4 → "1.234%"; 0 → "0%". */
char *units_fmt_share(double fraction, int sig, char *buf, size_t len);

/* A percentile's name from its quantile, up to 6 significant digits: 0.5 → "p50",
 * 0.999 → "p99.9", 0.99999 → "p99.999". */
char *units_fmt_percentile(double q, char *buf, size_t len);

/* Display columns of the UTF-8 byte range s[0..len), for padding and wrapping text: one per
 * character (continuation bytes take none), so "λ·W" and "−" are one column each. knee's own
 * text has no wide or combining characters; bytes that are not UTF-8 count one each. */
size_t units_text_width(const char *s, size_t len);

#endif
