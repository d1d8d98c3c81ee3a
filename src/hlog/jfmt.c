/* Java-compatible fixed-point formatting: shortest round-trip digits, then HALF_UP. */
#include "hlog/jfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest decimal digits that read back as a (a > 0, finite): digits in d (no dot),
 * value = d[0].d[1..] x 10^exp. Returns the digit count. */
static int shortest(double a, char *d, int *exp)
{
    char tmp[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, a);
        if (strtod(tmp, NULL) == a || p == 17)
            break;
    }
    int n = 0;
    const char *s = tmp;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9')
            d[n++] = *s;
    d[n] = '\0';
    *exp = atoi(s + 1); /* s points at 'e'; the exponent was printed by snprintf */
    /* drop trailing zeros so that "1.000e+00" is the single digit 1 */
    while (n > 1 && d[n - 1] == '0')
        d[--n] = '\0';
    return n;
}

char *jfmt_fixed(char *buf, size_t len, double v, int prec)
{
    if (len == 0)
        return buf;
    if (isnan(v)) {
        snprintf(buf, len, "NaN");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, len, "%s", v > 0 ? "Infinity" : "-Infinity");
        return buf;
    }
    if (prec < 0)
        prec = 0;
    if (prec > 30)
        prec = 30;
    int neg = signbit(v) != 0;
    double a = fabs(v);
    char d[48]; /* 17 digits plus room for a carry */
    int exp = 0, n;
    if (a == 0) {
        d[0] = '0';
        d[1] = '\0';
        n = 1;
    } else {
        n = shortest(a, d, &exp);
    }
    /* keep the digits whose weight 10^(exp-i) is >= 10^-prec */
    int keep = exp + prec + 1;
    if (keep < n) {
        int up = keep >= 0 && d[keep] >= '5';
        if (keep <= 0) {
            /* every digit is below the last printed place: 0, or one unit when the first
             * digit rounds up (keep == 0 and d[0] >= 5) */
            d[0] = up ? '1' : '0';
            d[1] = '\0';
            n = 1;
            exp = up ? -prec : 0;
        } else {
            n = keep;
            d[n] = '\0';
            int i = n - 1;
            while (up && i >= 0) {
                if (d[i] == '9') {
                    d[i] = '0';
                    i--;
                } else {
                    d[i]++;
                    up = 0;
                }
            }
            if (up) { /* carry out of the first digit: 999.5 -> 1000 */
                memmove(d + 1, d, (size_t)n + 1);
                d[0] = '1';
                n++;
                exp++;
            }
        }
    }
    /* lay out: integer digits are those with weight >= 10^0 */
    char out[400];
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    if (exp < 0) {
        out[o++] = '0';
    } else {
        for (int i = 0; i <= exp; i++)
            out[o++] = i < n ? d[i] : '0';
    }
    if (prec > 0) {
        out[o++] = '.';
        for (int k = 1; k <= prec; k++) {
            int i = exp + k; /* digit index with weight 10^-k */
            out[o++] = (i >= 0 && i < n) ? d[i] : '0';
        }
    }
    out[o] = '\0';
    snprintf(buf, len, "%s", out);
    return buf;
}
