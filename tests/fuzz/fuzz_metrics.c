/* Fuzz target: what a scraper or a command line hands to src/metrics. The bytes are an
 * Accept header for metrics_negotiate (any bytes, never a crash, always one of the two
 * formats) and a --metrics-buckets value for metrics_bounds_parse (what parses is strictly
 * increasing, finite and above 0, and renders as an le value that reads back exactly). */
#include "core/err.h"
#include "metrics/metrics.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    enum metrics_format f = metrics_negotiate((const char *)data, size);
    if (f != METRICS_FORMAT_TEXT && f != METRICS_FORMAT_OPENMETRICS)
        abort();
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    double b[METRICS_MAX_BOUNDS];
    size_t n = 0;
    char err[160];
    int rc = metrics_bounds_parse(s, b, METRICS_MAX_BOUNDS, &n, err, sizeof err);
    free(s);
    if (rc != 0) {
        if (rc != KNEE_EFORMAT && rc != KNEE_EINVAL && rc != KNEE_ETOOBIG)
            abort();
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(b[i]) || !(b[i] > 0) || (i > 0 && !(b[i] > b[i - 1])))
            abort();
        char le[32];
        metrics_format_le(b[i], le, sizeof le);
        if (strtod(le, NULL) != b[i])
            abort();
    }
    return 0;
}
