/* Fuzz target: prom_parse_bounds on arbitrary text (a --buckets style flag value), then the
 * histogram built from whatever parsed, observations and every quantile path. */
#include "core/err.h"
#include "hist/prom.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    double b[PROM_MAX_BOUNDS];
    size_t n = 0;
    int rc = prom_parse_bounds(s, b, &n);
    free(s);
    if (rc != 0) {
        if (rc != KNEE_EFORMAT && rc != KNEE_EINVAL)
            abort();
        return 0;
    }
    struct prom_hist p;
    if (prom_init(&p, b, n) != 0)
        abort(); /* what parses must be a valid histogram */
    for (size_t i = 0; i < n; i++) {
        prom_observe(&p, b[i]);
        prom_observe(&p, b[i] * 0.5);
    }
    prom_observe(&p, INFINITY);
    prom_observe(&p, NAN);
    for (double q = -0.5; q <= 1.5; q += 0.125) {
        struct prom_estimate e;
        double v = prom_quantile(&p, q, &e);
        if (q >= 0 && q <= 1 && !isnan(v) && (v < b[0] - fabs(b[0]) || v > b[n - 1]))
            abort(); /* estimates stay within the bounds (or the implicit 0 below the first) */
        if (q >= 0 && q <= 1 && !isnan(v) && e.bucket < n && (v < e.low || v > e.high))
            abort(); /* and inside the bucket the rank fell in (float rounding must not leave it) */
    }
    return 0;
}
