/* One table of units drives both parsing and printing: durations (ns internally), rates
 * (per second), counts (10k, 2M) and shares (1%, 0.01). Parsers accept the whole string or
 * fail; they never read a prefix and ignore the rest. */
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

/* Print a duration with a unit chosen for 3-4 significant digits: "812ns", "12.3us",
 * "4.56ms", "1.23s", "2m03s". Returns buf. */
char *units_fmt_duration(uint64_t ns, char *buf, size_t len);

#endif
