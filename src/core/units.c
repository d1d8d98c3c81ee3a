/* Unit parsing and printing. The suffix tables below are the single source of truth. */
#include "core/units.h"

#include "core/clock.h"
#include "core/err.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Beyond this magnitude a fixed-point number is a wall of digits (1.79e308 would print 309 of
 * them): the formatters switch to scientific notation with the same significant digits. */
#define UNITS_FIXED_MAX 1e15

struct unit {
    const char *suffix;
    double factor;
};

static const struct unit duration_units[] = {
    {"ns", 1.0}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"min", 60e9}, {"h", 3600e9},
};

static const struct unit count_units[] = {
    {"k", 1e3},
    {"K", 1e3},
    {"M", 1e6},
    {"G", 1e9},
};

/* Split "12.5ms" into a number and a suffix; the number must be a plain decimal. */
static int split_number(const char *s, double *num, const char **suffix)
{
    if (!s || !*s)
        return KNEE_EFORMAT;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '+')
        return KNEE_EFORMAT;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE)
        return KNEE_EFORMAT;
    /* Reject hex floats, inf and nan spelled out: only digits, a dot, an exponent. */
    for (const char *p = s; p < end; p++)
        if (!(isdigit((unsigned char)*p) || *p == '.' || *p == '-' || *p == 'e' || *p == 'E'))
            return KNEE_EFORMAT;
    if (!isfinite(v))
        return KNEE_EFORMAT;
    *num = v;
    *suffix = end;
    return 0;
}

static int lookup(const struct unit *units, size_t n, const char *suffix, double *factor)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(units[i].suffix, suffix) == 0) {
            *factor = units[i].factor;
            return 0;
        }
    return KNEE_EFORMAT;
}

int units_parse_duration_ns(const char *s, uint64_t default_unit_ns, uint64_t *out_ns)
{
    double v, factor = (double)default_unit_ns;
    const char *suffix;
    int r = split_number(s, &v, &suffix);
    if (r)
        return r;
    if (*suffix && lookup(duration_units, sizeof duration_units / sizeof *duration_units, suffix, &factor))
        return KNEE_EFORMAT;
    if (v < 0)
        return KNEE_ENEG;
    double ns = v * factor;
    if (ns > 1e18)
        return KNEE_ERANGE;
    *out_ns = (uint64_t)llround(ns);
    return 0;
}

int units_parse_rate(const char *s, double *out_per_s)
{
    double v, factor = 1.0;
    const char *suffix;
    int r = split_number(s, &v, &suffix);
    if (r)
        return r;
    if (*suffix && *suffix != '/') {
        if (lookup(count_units, sizeof count_units / sizeof *count_units, (char[]){suffix[0], 0}, &factor))
            return KNEE_EFORMAT;
        suffix++;
    }
    if (*suffix) {
        if (strcmp(suffix, "/s") == 0)
            ;
        else if (strcmp(suffix, "/m") == 0 || strcmp(suffix, "/min") == 0)
            factor /= 60.0;
        else
            return KNEE_EFORMAT;
    }
    if (v < 0)
        return KNEE_ENEG;
    if (v == 0)
        return KNEE_ERANGE;
    *out_per_s = v * factor;
    return 0;
}

int units_parse_count(const char *s, uint64_t *out)
{
    double v, factor = 1.0;
    const char *suffix;
    int r = split_number(s, &v, &suffix);
    if (r)
        return r;
    if (*suffix && lookup(count_units, sizeof count_units / sizeof *count_units, suffix, &factor))
        return KNEE_EFORMAT;
    if (v < 0)
        return KNEE_ENEG;
    double x = v * factor;
    if (x > 9e18)
        return KNEE_ERANGE;
    if (x != floor(x))
        return KNEE_EFORMAT;
    *out = (uint64_t)x;
    return 0;
}

int units_parse_share(const char *s, double *out)
{
    double v;
    const char *suffix;
    int r = split_number(s, &v, &suffix);
    if (r)
        return r;
    if (strcmp(suffix, "%") == 0)
        v /= 100.0;
    else if (*suffix)
        return KNEE_EFORMAT;
    if (v < 0)
        return KNEE_ENEG;
    if (v > 1)
        return KNEE_ERANGE;
    *out = v;
    return 0;
}

int units_parse_double(const char *s, double *out)
{
    double v;
    const char *suffix;
    int r = split_number(s, &v, &suffix);
    if (r)
        return r;
    if (*suffix)
        return KNEE_EFORMAT;
    *out = v;
    return 0;
}

char *units_fmt_duration(uint64_t ns, char *buf, size_t len)
{
    double v = (double)ns;
    if (ns < 1000)
        snprintf(buf, len, "%lluns", (unsigned long long)ns);
    else if (ns < NS_PER_MS)
        snprintf(buf, len, "%.3gus", v / 1e3);
    else if (ns < NS_PER_S)
        snprintf(buf, len, "%.3gms", v / 1e6);
    else if (ns < 60 * NS_PER_S)
        snprintf(buf, len, "%.3gs", v / 1e9);
    else
        snprintf(buf, len, "%llum%02llus", (unsigned long long)(ns / (60 * NS_PER_S)),
                 (unsigned long long)((ns / NS_PER_S) % 60));
    return buf;
}

char *units_fmt_seconds(double s, int sig, char *buf, size_t len)
{
    double a = fabs(s);
    if (s == 0)
        snprintf(buf, len, "0");
    else if (a < 1e-6)
        snprintf(buf, len, "%.*gns", sig, s * 1e9);
    else if (a < 1e-3)
        snprintf(buf, len, "%.*gus", sig, s * 1e6);
    else if (a < 1)
        snprintf(buf, len, "%.*gms", sig, s * 1e3);
    else
        snprintf(buf, len, "%.*gs", sig, s);
    return buf;
}

char *units_fmt_count(uint64_t v, char *buf, size_t len)
{
    if (!len)
        return buf;
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 1 < len; i++) { /* o + 1 < len: room for the NUL */
        buf[o++] = tmp[i];
        int left = n - 1 - i;
        if (left > 0 && left % 3 == 0 && o + 1 < len)
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

char *units_fmt_rate(double per_s, char *buf, size_t len)
{
    if (!isfinite(per_s) || fabs(per_s) >= UNITS_FIXED_MAX) {
        snprintf(buf, len, isfinite(per_s) ? "%.4g" : "-", per_s);
        return buf;
    }
    double a = fabs(per_s);
    uint64_t tenths = (uint64_t)llround(a * 10);
    char whole[32];
    units_fmt_count(tenths / 10, whole, sizeof whole);
    snprintf(buf, len, "%s%s.%u", per_s < 0 && tenths ? "-" : "", whole, (unsigned)(tenths % 10));
    return buf;
}

char *units_fmt_ms(double ms, char *buf, size_t len)
{
    if (!isfinite(ms))
        snprintf(buf, len, "-");
    else if (fabs(ms) >= UNITS_FIXED_MAX)
        snprintf(buf, len, "%.6g", ms);
    else if (ms >= 100000)
        snprintf(buf, len, "%.0f", ms);
    else
        snprintf(buf, len, "%.3f", ms);
    return buf;
}

char *units_fmt_fixed(double v, int decimals, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (fabs(v) >= UNITS_FIXED_MAX)
        snprintf(buf, len, "%.6g", v);
    else
        snprintf(buf, len, "%.*f", decimals, v);
    return buf;
}

char *units_fmt_cell(double v, int decimals, char *buf, size_t len)
{
    /* 1e12 ms is 31 years: beyond it no latency is read digit by digit */
    if (isfinite(v) && fabs(v) >= 1e12)
        snprintf(buf, len, "%.2g", v);
    else
        units_fmt_fixed(v, decimals, buf, len);
    return buf;
}

char *units_fmt_share(double fraction, int sig, char *buf, size_t len)
{
    snprintf(buf, len, "%.*g%%", sig, fraction * 100);
    return buf;
}

char *units_fmt_percentile(double q, char *buf, size_t len)
{
    snprintf(buf, len, "p%.6g", q * 100);
    return buf;
}

size_t units_text_width(const char *s, size_t len)
{
    size_t w = 0;
    for (size_t i = 0; i < len; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}
