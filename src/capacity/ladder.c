/* The ladder: the rates every repetition measures, fixed before the first step. Given as a
 * list (--rates) or made from --max/--min/--steps, geometric by default (a knee is found by
 * ratios: 8x in 7 steps is about 41% per step) or linear (--linear). */
#include "capacity/capacity.h"

#include "core/err.h"
#include "core/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int capacity_ladder_parse(const char *list, double *rates, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    const char *p = list;
    if (!*p)
        return knee_fail(err, errlen, KNEE_EINVAL, "--rates: empty; expected rates such as 500,1000,2000");
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (len == 0)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--rates '%s': an empty item; expected rates such as 500,1000,2000", list);
        if (len >= sizeof item)
            return knee_fail(err, errlen, KNEE_EINVAL, "--rates '%s': item too long", list);
        if (*n == CAPACITY_MAX_RATES)
            return knee_fail(err, errlen, KNEE_EINVAL, "--rates: at most %d rates", CAPACITY_MAX_RATES);
        memcpy(item, p, len);
        item[len] = '\0';
        double r;
        if (units_parse_rate(item, &r) != 0 || !(r > 0) || !isfinite(r))
            return knee_fail(err, errlen, KNEE_EINVAL, "--rates: '%s' is not a rate (500, 2k, 100/s)", item);
        if (*n && !(r > rates[*n - 1]))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--rates '%s': the rates must increase (%s after %g); the ladder is climbed in order",
                             list, item, rates[*n - 1]);
        rates[(*n)++] = r;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

/* v rounded to 3 significant digits. */
static double round3(double v)
{
    if (!(v > 0))
        return v;
    double mag = pow(10, floor(log10(v)) - 2);
    return round(v / mag) * mag;
}

int capacity_ladder_make(double min, double max, size_t steps, bool linear, double *rates, char *err, size_t errlen)
{
    if (!(max > 0) || !isfinite(max))
        return knee_fail(err, errlen, KNEE_EINVAL, "--max must be a rate > 0");
    if (steps < 2 || steps > CAPACITY_MAX_RATES)
        return knee_fail(err, errlen, KNEE_EINVAL, "--steps must be between 2 and %d", CAPACITY_MAX_RATES);
    if (min == 0)
        min = linear ? max / (double)steps : max / CAPACITY_GEOMETRIC_SPAN;
    if (!(min > 0) || !(min < max))
        return knee_fail(err, errlen, KNEE_EINVAL, "--min must be a rate below --max (%g)", max);
    for (size_t i = 0; i < steps; i++) {
        double f = (double)i / (double)(steps - 1);
        double r = linear ? min + (max - min) * f : min * pow(max / min, f);
        rates[i] = i == 0 ? min : i == steps - 1 ? max : round3(r);
        if (i && !(rates[i] > rates[i - 1]))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--steps %zu between %g and %g: rates closer than 3 significant digits; use fewer "
                             "steps or a wider range",
                             steps, min, max);
    }
    return 0;
}
