/* The text details of the expositions: numbers in the forms Prometheus and OpenMetrics
 * parse (and the canonical "le" form of OpenMetrics 1.0, "Canonical Numbers"), escaping,
 * UTF-8 checks, content negotiation on the Accept header (RFC 9110 §12.5.1), and the bucket
 * bounds of --metrics-buckets merged with SLO thresholds. */
#include "metrics/metrics.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "metrics/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const double metrics_default_bounds_s[METRICS_DEFAULT_NBOUNDS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                                  0.25,  0.5,    1,     2.5,  5,     10};

/* ---- numbers ------------------------------------------------------------------------------ */

/* The shortest decimal digits that read back to v (finite, > 0), as in Go's
 * strconv.FormatFloat(v, 'g', -1, 64): digits without the point and the decimal exponent of
 * the first one. C has no shortest-digits printer, so try 1..17 significant digits and keep
 * the first that round-trips through strtod (17 always does for a double). */
static int shortest_digits(double v, char digits[24], int *exp10)
{
    char tmp[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        if (strtod(tmp, NULL) == v || p == 17)
            break;
    }
    int nd = 0;
    const char *c = tmp;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9')
            digits[nd++] = *c;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    *exp10 = atoi(c + 1);
    return nd;
}

/* Go's %g layout for the shortest digits: exponent form when the exponent is below -4 or at
 * least 6 (precision 6 decides when the digits are the shortest), "1e+06", "1.5e-05". */
static size_t format_go_g(double v, char *buf, size_t len)
{
    if (v == 0)
        return (size_t)snprintf(buf, len, "0");
    char digits[24];
    int e;
    const char *sign = v < 0 ? "-" : "";
    int nd = shortest_digits(fabs(v), digits, &e);
    if (e < -4 || e >= 6) {
        char mant[32];
        if (nd == 1)
            snprintf(mant, sizeof mant, "%c", digits[0]);
        else
            snprintf(mant, sizeof mant, "%c.%s", digits[0], digits + 1);
        return (size_t)snprintf(buf, len, "%s%se%c%02d", sign, mant, e < 0 ? '-' : '+', abs(e));
    }
    char fixed[40];
    size_t n = 0;
    if (e < 0) {
        n += (size_t)snprintf(fixed + n, sizeof fixed - n, "0.");
        for (int i = 0; i < -e - 1; i++)
            fixed[n++] = '0';
        n += (size_t)snprintf(fixed + n, sizeof fixed - n, "%s", digits);
    } else {
        for (int i = 0; i <= e; i++)
            fixed[n++] = i < nd ? digits[i] : '0';
        if (nd > e + 1)
            n += (size_t)snprintf(fixed + n, sizeof fixed - n, ".%s", digits + e + 1);
        fixed[n] = '\0';
    }
    return (size_t)snprintf(buf, len, "%s%s", sign, fixed);
}

size_t metrics_format_value(double v, char *buf, size_t len)
{
    if (isnan(v))
        return (size_t)snprintf(buf, len, "NaN");
    if (isinf(v))
        return (size_t)snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
    if (v == floor(v) && fabs(v) < 1e15)
        return (size_t)snprintf(buf, len, "%.0f", v == 0 ? 0.0 : v);
    return format_go_g(v, buf, len);
}

size_t metrics_format_le(double v, char *buf, size_t len)
{
    if (isnan(v))
        return (size_t)snprintf(buf, len, "NaN");
    if (isinf(v))
        return (size_t)snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
    size_t n = format_go_g(v, buf, len);
    if (!strpbrk(buf, ".e") && n + 2 < len) {
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    return n;
}

/* ---- text -------------------------------------------------------------------------------- */

bool metrics_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        size_t k;
        unsigned cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            k = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (n - i <= k) /* the sequence is cut off */
            return false;
        for (size_t j = 1; j <= k; j++) {
            if ((p[i + j] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += k + 1;
    }
    return true;
}

size_t metrics_escape(const char *s, size_t n, bool keep_quotes, char *out, size_t cap)
{
    size_t o = 0;
    if (cap == 0)
        return 0;
    for (size_t i = 0; i < n && o + 2 < cap; i++) {
        char c = s[i];
        if (c == '\\' || (c == '"' && !keep_quotes)) {
            out[o++] = '\\';
            out[o++] = c;
        } else if (c == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = c;
        }
    }
    out[o] = '\0';
    return o;
}

/* ---- content negotiation ------------------------------------------------------------------ */

/* Media ranges are compared case-insensitively; parameters are `;name=value`, the value a
 * token or a quoted string. A q that does not parse ranks the range 0 (ignored). */
struct range {
    const char *type;
    size_t type_len;
    double q;
    const char *version; /* NULL when absent */
    size_t version_len;
    const char *proto, *encoding; /* protobuf's parameters; NULL when absent */
    size_t proto_len, encoding_len;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

static bool eq_ci(const char *a, size_t n, const char *b)
{
    return strlen(b) == n && strncasecmp(a, b, n) == 0;
}

static bool eq(const char *a, size_t n, const char *b)
{
    return strlen(b) == n && memcmp(a, b, n) == 0;
}

/* RFC 9110 qvalue: 0[.ddd] or 1[.000]. Returns -1 when malformed. */
static double parse_q(const char *s, size_t n)
{
    if (n == 0 || n > 5 || (s[0] != '0' && s[0] != '1'))
        return -1;
    double q = s[0] - '0', scale = 0.1;
    if (n > 1) {
        if (s[1] != '.')
            return -1;
        for (size_t i = 2; i < n; i++) {
            if (s[i] < '0' || s[i] > '9')
                return -1;
            q += (s[i] - '0') * scale;
            scale /= 10;
        }
    }
    return q > 1 ? -1 : q;
}

/* Parse one element s[0..n) of the Accept list. */
static void parse_range(const char *s, size_t n, struct range *r)
{
    size_t i = 0;
    *r = (struct range){.q = 1};
    while (i < n && is_space(s[i]))
        i++;
    r->type = s + i;
    while (i < n && s[i] != ';' && !is_space(s[i]))
        i++;
    r->type_len = (size_t)(s + i - r->type);
    while (i < n) {
        while (i < n && (is_space(s[i]) || s[i] == ';'))
            i++;
        const char *name = s + i;
        while (i < n && s[i] != '=' && s[i] != ';' && !is_space(s[i]))
            i++;
        size_t name_len = (size_t)(s + i - name);
        while (i < n && is_space(s[i]))
            i++;
        if (i >= n || s[i] != '=')
            continue;
        i++;
        while (i < n && is_space(s[i]))
            i++;
        const char *val = s + i;
        size_t val_len;
        if (i < n && s[i] == '"') {
            val = s + ++i;
            while (i < n && s[i] != '"')
                i += s[i] == '\\' && i + 1 < n ? 2 : 1;
            val_len = (size_t)(s + (i < n ? i : n) - val);
            if (i < n)
                i++;
        } else {
            while (i < n && s[i] != ';' && !is_space(s[i]))
                i++;
            val_len = (size_t)(s + i - val);
        }
        if (eq_ci(name, name_len, "q")) {
            r->q = parse_q(val, val_len);
            if (r->q < 0)
                r->q = 0;
        } else if (eq_ci(name, name_len, "version")) {
            r->version = val;
            r->version_len = val_len;
        } else if (eq_ci(name, name_len, "proto")) {
            r->proto = val;
            r->proto_len = val_len;
        } else if (eq_ci(name, name_len, "encoding")) {
            r->encoding = val;
            r->encoding_len = val_len;
        }
    }
}

enum metrics_format metrics_negotiate(const char *accept, size_t len)
{
    double om_q = 0, text_q = 0, pb_q = 0;
    size_t i = 0;
    while (accept && i < len) {
        /* One element: up to a comma outside a quoted string. */
        size_t start = i;
        bool quoted = false;
        for (; i < len && (quoted || accept[i] != ','); i++) {
            if (accept[i] == '\\' && quoted && i + 1 < len)
                i++;
            else if (accept[i] == '"')
                quoted = !quoted;
        }
        struct range r;
        parse_range(accept + start, i - start, &r);
        i++;
        if (eq_ci(r.type, r.type_len, "application/vnd.google.protobuf")) {
            /* Only the delimited MetricFamily stream; the text form (encoding=text) is not served. */
            if (r.proto && eq(r.proto, r.proto_len, "io.prometheus.client.MetricFamily") && r.encoding &&
                eq(r.encoding, r.encoding_len, "delimited"))
                pb_q = fmax(pb_q, r.q);
        } else if (eq_ci(r.type, r.type_len, "application/openmetrics-text")) {
            if (!r.version || eq(r.version, r.version_len, "1.0.0"))
                om_q = fmax(om_q, r.q);
        } else if (eq_ci(r.type, r.type_len, "text/plain")) {
            if (!r.version || eq(r.version, r.version_len, "0.0.4"))
                text_q = fmax(text_q, r.q);
        } else if (eq_ci(r.type, r.type_len, "text/*") || eq_ci(r.type, r.type_len, "*/*")) {
            text_q = fmax(text_q, r.q);
        }
    }
    if (pb_q > 0 && pb_q >= om_q && pb_q >= text_q)
        return METRICS_FORMAT_PROTOBUF;
    return om_q > 0 && om_q >= text_q ? METRICS_FORMAT_OPENMETRICS : METRICS_FORMAT_TEXT;
}

/* ---- bucket bounds ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Equal as histogram_quantile's float-precision fix treats neighbouring bounds. */
static bool almost_equal(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

int metrics_bounds_merge(const double *bounds, size_t n, const double *extra, size_t nextra, double *out, size_t cap,
                         size_t *nout, char *err, size_t errlen)
{
    size_t total = n + nextra;
    double *all = xmalloc((total ? total : 1) * sizeof *all);
    for (size_t i = 0; i < total; i++) {
        double v = i < n ? bounds[i] : extra[i - n];
        if (!isfinite(v) || !(v > 0)) {
            free(all);
            return knee_fail(err, errlen, KNEE_EINVAL, "bucket bound %g: bounds must be finite and above 0", v);
        }
        all[i] = v;
    }
    qsort(all, total, sizeof *all, cmp_double);
    size_t k = 0;
    for (size_t i = 0; i < total; i++) {
        if (k > 0 && almost_equal(all[i], out[k - 1]))
            continue;
        if (k == cap) {
            free(all);
            return knee_fail(err, errlen, KNEE_ETOOBIG, "more than %zu bucket bounds (with the thresholds added)", cap);
        }
        out[k++] = all[i];
    }
    free(all);
    *nout = k;
    return 0;
}

int metrics_bounds_parse(const char *s, double *out, size_t cap, size_t *n, char *err, size_t errlen)
{
    double parsed[4 * METRICS_MAX_BOUNDS];
    size_t k = 0;
    const char *c = s;
    for (;;) {
        const char *end = strchr(c, ',');
        size_t len = end ? (size_t)(end - c) : strlen(c);
        char item[64];
        while (len && is_space(*c))
            c++, len--;
        while (len && is_space(c[len - 1]))
            len--;
        if (len == 0 || len >= sizeof item)
            return knee_fail(err, errlen, KNEE_EFORMAT, "'%.*s' is not a duration (5ms, 0.25s, 1s)",
                             (int)(len < sizeof item ? len : sizeof item), c);
        memcpy(item, c, len);
        item[len] = '\0';
        uint64_t ns;
        if (units_parse_duration_ns(item, NS_PER_S, &ns))
            return knee_fail(err, errlen, KNEE_EFORMAT, "'%s' is not a duration (5ms, 0.25s, 1s)", item);
        if (ns == 0)
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s': a bucket bound must be above 0", item);
        if (k == sizeof parsed / sizeof *parsed)
            return knee_fail(err, errlen, KNEE_ETOOBIG, "more than %zu bucket bounds", cap);
        parsed[k++] = (double)ns / 1e9;
        if (!end)
            break;
        c = end + 1;
    }
    return metrics_bounds_merge(parsed, k, NULL, 0, out, cap, n, err, errlen);
}
