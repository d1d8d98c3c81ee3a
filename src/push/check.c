/* The remote-write inputs a user gives (URL, auth file, labels) checked before anything starts,
 * and the small pure pieces of the transport (base64, status line, backoff). */
#include "core/err.h"
#include "net/url.h"
#include "push/push.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int push_url_check(const char *url, char *err, size_t errlen)
{
    const char *sep = strstr(url, "://");
    const char *auth = sep ? sep + 3 : url;
    size_t alen = strcspn(auth, "/?#");
    if (memchr(auth, '@', alen))
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "credentials in the URL are not supported (put them in --remote-write-auth-file)");
    if (strchr(url, '#'))
        return knee_fail(err, errlen, KNEE_EINVAL, "a URL with a fragment ('#')");
    struct url u = {0};
    char why[160];
    int rc = url_parse(url, &u, why, sizeof why);
    url_release(&u);
    if (rc)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: %s", url, why);
    return 0;
}

size_t push_base64(const void *in, size_t n, char *out, size_t cap)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t need = (n + 2) / 3 * 4;
    if (cap < need + 1)
        return 0;
    const unsigned char *p = in;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

/* The file's bytes (at most PUSH_AUTH_FILE_MAX) into buf (cap > PUSH_AUTH_FILE_MAX). */
static int auth_read(const char *path, char *buf, size_t cap, size_t *n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: %s", path, strerror(errno));
    *n = fread(buf, 1, cap - 1, f);
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: read error", path);
    if (*n > PUSH_AUTH_FILE_MAX)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: longer than %d bytes", path, PUSH_AUTH_FILE_MAX);
    buf[*n] = '\0';
    return 0;
}

/* The header value from the one line (trimmed, NUL-terminated) of path. */
static int auth_header(const char *path, const char *line, char **header, char *err, size_t errlen)
{
    size_t kw = strcspn(line, " \t");
    const char *arg = line + kw + strspn(line + kw, " \t");
    bool bearer = kw == 6 && strncasecmp(line, "bearer", 6) == 0;
    bool basic = kw == 5 && strncasecmp(line, "basic", 5) == 0;
    if (!bearer && !basic)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "%s:1: expected 'bearer TOKEN' or 'basic USER:PASSWORD' (the first word is neither)", path);
    if (!*arg)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s:1: nothing after '%.*s'", path, (int)kw, line);
    size_t alen = strlen(arg);
    if (bearer) {
        if (strpbrk(arg, " \t"))
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:1: a bearer token without blanks expected", path);
        *header = xmalloc(alen + 8);
        snprintf(*header, alen + 8, "Bearer %s", arg);
        return 0;
    }
    if (!strchr(arg, ':'))
        return knee_fail(err, errlen, KNEE_EINVAL, "%s:1: basic needs USER:PASSWORD (no ':' found)", path);
    size_t cap = (alen + 2) / 3 * 4 + 8;
    *header = xmalloc(cap);
    memcpy(*header, "Basic ", 6);
    push_base64(arg, alen, *header + 6, cap - 6);
    return 0;
}

int push_auth_load(const char *path, char **header, char *err, size_t errlen)
{
    *header = NULL;
    char buf[PUSH_AUTH_FILE_MAX + 2];
    size_t n = 0;
    int rc = auth_read(path, buf, sizeof buf, &n, err, errlen);
    if (rc)
        return rc;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        buf[--n] = '\0';
    char *line = buf + strspn(buf, " \t");
    if (!*line)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: empty (expected 'bearer TOKEN' or 'basic USER:PASSWORD')",
                         path);
    int lineno = 1;
    for (const char *p = line; *p; p++) {
        if (*p == '\n')
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:%d: more than one line", path, lineno + 1);
        if ((unsigned char)*p < 0x20 && *p != '\t')
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:%d: a control character", path, lineno);
        if (*p == 0x7f)
            return knee_fail(err, errlen, KNEE_EINVAL, "%s:%d: a control character", path, lineno);
    }
    if (n != strlen(buf))
        return knee_fail(err, errlen, KNEE_EINVAL, "%s:1: a NUL byte", path);
    return auth_header(path, line, header, err, errlen);
}

/* Whether s (n bytes) is valid UTF-8 without control characters. */
static bool utf8_ok(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7f)
                return false;
            i++;
            continue;
        }
        size_t k = (c & 0xE0) == 0xC0 && c >= 0xC2  ? 1
                   : (c & 0xF0) == 0xE0             ? 2
                   : (c & 0xF8) == 0xF0 && c < 0xF5 ? 3
                                                    : 0;
        if (k == 0 || i + k >= n)
            return false;
        for (size_t j = 1; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
        i += k + 1;
    }
    return true;
}

int push_label_check(const char *kv, size_t *eq, char *err, size_t errlen)
{
    const char *e = strchr(kv, '=');
    if (!e)
        return knee_fail(err, errlen, KNEE_EINVAL, "'%s': expected NAME=VALUE", kv);
    *eq = (size_t)(e - kv);
    if (*eq == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "'%s': no label name before '='", kv);
    for (size_t i = 0; i < *eq; i++) {
        unsigned char c = (unsigned char)kv[i];
        if (!(isalpha(c) || c == '_' || (i > 0 && isdigit(c))) || c >= 0x80)
            return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s' is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", (int)*eq,
                             kv);
    }
    if (*eq >= 2 && kv[0] == '_' && kv[1] == '_')
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s': names starting '__' are Prometheus's own", (int)*eq, kv);
    size_t vlen = strlen(e + 1);
    if (vlen == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "'%s': an empty value (Prometheus drops such a label)", kv);
    if (vlen > PUSH_LABEL_VALUE_MAX)
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s=...': the value is longer than %d bytes", (int)*eq, kv,
                         PUSH_LABEL_VALUE_MAX);
    if (!utf8_ok((const unsigned char *)e + 1, vlen))
        return knee_fail(err, errlen, KNEE_EINVAL, "'%.*s=...': the value is not UTF-8 text", (int)*eq, kv);
    return 0;
}

int push_http_status(const char *buf, size_t len)
{
    if (len < 12 || memcmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ')
        return -1;
    int s = 0;
    for (int i = 9; i < 12; i++) {
        if (!isdigit((unsigned char)buf[i]))
            return -1;
        s = s * 10 + (buf[i] - '0');
    }
    return s >= 100 ? s : -1;
}

bool push_status_retry(int status)
{
    return status >= 500 || status == 429;
}

uint64_t push_backoff_ns(unsigned k, uint64_t cap_ns)
{
    uint64_t w = PUSH_BACKOFF_FIRST_NS;
    for (unsigned i = 1; i < k && w < cap_ns; i++)
        w *= 2;
    return w < cap_ns ? w : cap_ns;
}
