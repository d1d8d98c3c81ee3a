/* --capture NAME=SOURCE: the rule parsed once, then applied to the setup request's response.
 * Every failure names what was missing and what was there instead, because the user reads it
 * once, before any load, with nothing else to go on. */
#include "workload/capture.h"

#include "core/err.h"
#include "workload/internal.h"
#include "workload/workload.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool name_ok(const char *s, size_t n)
{
    if (n == 0 || n > WL_CAPTURE_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    }
    return !(n == 3 && memcmp(s, "seq", 3) == 0) && !(n == 4 && memcmp(s, "uuid", 4) == 0);
}

/* A JSON path: segments joined by '.', none empty, at most WL_CAPTURE_PATH_MAX. */
static bool path_ok(const char *p)
{
    size_t segs = 1;
    if (!*p || *p == '.' || p[strlen(p) - 1] == '.' || strstr(p, ".."))
        return false;
    for (; *p; p++)
        segs += *p == '.';
    return segs <= WL_CAPTURE_PATH_MAX;
}

int wl_capture_parse(const char *spec, struct wl_capture *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *eq = strchr(spec, '=');
    if (!eq)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "expected NAME=SOURCE (SOURCE: header:NAME, cookie:NAME, json:PATH, status or body)");
    size_t n = (size_t)(eq - spec);
    if (!name_ok(spec, n))
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "the name '%.*s': 1 to %d letters, digits, '_' or '-', not seq or uuid (it is what "
                         "{{NAME}} says)",
                         (int)n, spec, WL_CAPTURE_NAME_MAX);
    const char *src = eq + 1;
    static const struct {
        const char *prefix;
        enum wl_capture_kind kind;
    } kinds[] = {{"header:", WL_CAPTURE_HEADER}, {"cookie:", WL_CAPTURE_COOKIE}, {"json:", WL_CAPTURE_JSON}};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t pl = strlen(kinds[i].prefix);
        if (strncmp(src, kinds[i].prefix, pl) != 0)
            continue;
        const char *arg = src + pl;
        if (kinds[i].kind == WL_CAPTURE_JSON && !path_ok(arg))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "json:'%s': a path is keys and list indexes joined by '.' (json:data.token, "
                             "json:items.0.id), none empty, at most %d",
                             arg, WL_CAPTURE_PATH_MAX);
        if (kinds[i].kind != WL_CAPTURE_JSON && !wl_is_token(arg, strlen(arg)))
            return knee_fail(err, errlen, KNEE_EINVAL, "%s'%s': a %s name is an HTTP token", kinds[i].prefix, arg,
                             kinds[i].kind == WL_CAPTURE_HEADER ? "header" : "cookie");
        memcpy(out->name, spec, n);
        out->kind = kinds[i].kind;
        out->arg = xstrdup(arg);
        return 0;
    }
    if (strcmp(src, "status") == 0 || strcmp(src, "body") == 0) {
        memcpy(out->name, spec, n);
        out->kind = src[0] == 's' ? WL_CAPTURE_STATUS : WL_CAPTURE_BODY;
        return 0;
    }
    return knee_fail(err, errlen, KNEE_EINVAL,
                     "unknown source '%s' (header:NAME, cookie:NAME, json:PATH, status or body)", src);
}

void wl_capture_release(struct wl_capture *c)
{
    free(c->arg);
    c->arg = NULL;
}

const char *wl_capture_source(const struct wl_capture *c, char *buf, size_t len)
{
    static const char *const words[] = {"header:", "cookie:", "json:", "status", "body"};
    snprintf(buf, len, "%s%s", words[c->kind], c->arg ? c->arg : "");
    return buf;
}

/* ------------------------------------------------------------------ extraction */

/* The value found (s, n) copied out, after the checks every value passes. */
static int take(const struct wl_capture *c, const char *s, size_t n, char **out, size_t *len, char *err, size_t errlen)
{
    char src[200];
    wl_capture_source(c, src, sizeof src);
    if (n > WL_CAPTURE_VALUE_MAX)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: the value is %zu bytes (at most %u)", src, n,
                         WL_CAPTURE_VALUE_MAX);
    if (!wl_field_ok(s, n))
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "%s: the value holds a control byte (a line break, a NUL): it could go into no header "
                         "and no URL",
                         src);
    *out = xmalloc(n + 1);
    memcpy(*out, s, n);
    (*out)[n] = '\0';
    *len = n;
    return 0;
}

/* The response's header names, for a message: "Content-Type, Set-Cookie" (each once). */
static const char *header_list(const struct wl_response *r, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->nheaders && o + 8 < len; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcasecmp(r->names[i], r->names[j]) == 0;
        if (seen)
            continue;
        int w = snprintf(buf + o, len - o, "%s%s", o ? ", " : "", r->names[i]);
        o += w > 0 ? (size_t)w : 0;
    }
    if (o >= len - 8)
        snprintf(buf + len - 8, 8, ", ...");
    return o ? buf : "none";
}

static int from_header(const struct wl_capture *c, const struct wl_response *r, char **out, size_t *len, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < r->nheaders; i++)
        if (strcasecmp(r->names[i], c->arg) == 0)
            return take(c, r->values[i], strlen(r->values[i]), out, len, err, errlen);
    char list[512];
    return knee_fail(err, errlen, KNEE_ENOTFOUND, "header:%s: no such header in the response (headers: %s)", c->arg,
                     header_list(r, list, sizeof list));
}

/* RFC 6265 §5.2: a Set-Cookie value starts "name=value", up to the first ';'; spaces around
 * the name and the value are not theirs. */
static int from_cookie(const struct wl_capture *c, const struct wl_response *r, char **out, size_t *len, char *err,
                       size_t errlen)
{
    char names[512] = "";
    size_t o = 0, want = strlen(c->arg);
    for (size_t i = 0; i < r->nheaders; i++) {
        if (strcasecmp(r->names[i], "Set-Cookie") != 0)
            continue;
        const char *v = r->values[i], *end = v + strcspn(v, ";"), *eq = memchr(v, '=', (size_t)(end - v));
        if (!eq)
            continue;
        const char *ns = v, *ne = eq;
        while (ns < ne && (*ns == ' ' || *ns == '\t'))
            ns++;
        while (ne > ns && (ne[-1] == ' ' || ne[-1] == '\t'))
            ne--;
        const char *vs = eq + 1, *ve = end;
        while (vs < ve && (*vs == ' ' || *vs == '\t'))
            vs++;
        while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        if ((size_t)(ne - ns) == want && memcmp(ns, c->arg, want) == 0)
            return take(c, vs, (size_t)(ve - vs), out, len, err, errlen);
        if (o + (size_t)(ne - ns) + 8 < sizeof names) {
            int w = snprintf(names + o, sizeof names - o, "%s%.*s", o ? ", " : "", (int)(ne - ns), ns);
            o += w > 0 ? (size_t)w : 0;
        }
    }
    return knee_fail(err, errlen, KNEE_ENOTFOUND, "cookie:%s: no Set-Cookie header sets it (cookies set: %s)", c->arg,
                     o ? names : "none");
}

/* An object's keys for a message: "user, expires". */
static const char *key_list(const json_t *o, char *buf, size_t len)
{
    size_t k = 0;
    const char *key;
    const json_t *v;
    buf[0] = '\0';
    json_object_foreach((json_t *)o, key, v)
    {
        (void)v;
        int w = snprintf(buf + k, len - k, "%s%s", k ? ", " : "", key);
        k += w > 0 ? (size_t)w : 0;
        if (k + 8 >= len) {
            snprintf(buf + len - 8, 8, ", ...");
            break;
        }
    }
    return k ? buf : "none: an empty object";
}

static const char *type_name(const json_t *v)
{
    return json_is_object(v)    ? "an object"
           : json_is_array(v)   ? "a list"
           : json_is_string(v)  ? "a string"
           : json_is_null(v)    ? "null"
           : json_is_boolean(v) ? "a boolean"
                                : "a number";
}

/* One step of a path: seg (n bytes) in v. where: the path up to v, for messages. */
static int step(const json_t *v, const char *seg, size_t n, const char *where, const json_t **next, char *err,
                size_t errlen)
{
    if (json_is_object(v)) {
        char key[256];
        if (n >= sizeof key)
            return knee_fail(err, errlen, KNEE_ENOTFOUND, "no key '%.*s...' in %s", 40, seg, where);
        memcpy(key, seg, n);
        key[n] = '\0';
        *next = json_object_get(v, key);
        if (*next)
            return 0;
        char keys[400];
        return knee_fail(err, errlen, KNEE_ENOTFOUND, "no key '%s' in %s (keys: %s)", key, where,
                         key_list(v, keys, sizeof keys));
    }
    if (json_is_array(v)) {
        size_t i = 0, k = 0;
        for (; k < n && seg[k] >= '0' && seg[k] <= '9' && i < ((size_t)1 << 40); k++)
            i = i * 10 + (size_t)(seg[k] - '0');
        if (k != n)
            return knee_fail(err, errlen, KNEE_ENOTFOUND, "'%.*s' in %s: it is a list, indexed by a number from 0",
                             (int)n, seg, where);
        *next = json_array_get(v, i);
        if (*next)
            return 0;
        return knee_fail(err, errlen, KNEE_ENOTFOUND, "no item %zu in %s (it has %zu)", i, where, json_array_size(v));
    }
    return knee_fail(err, errlen, KNEE_ENOTFOUND, "'%.*s' in %s: it is %s, not an object or a list", (int)n, seg, where,
                     type_name(v));
}

/* Walk c->arg in root: the value, or an error naming the missing segment. */
static int walk(const struct wl_capture *c, const json_t *root, const json_t **out, char *err, size_t errlen)
{
    const json_t *v = root;
    const char *seg = c->arg;
    char where[300] = "the body";
    char why[800];
    while (true) {
        size_t n = strcspn(seg, ".");
        int r = step(v, seg, n, where, &v, why, sizeof why);
        if (r)
            return knee_fail(err, errlen, r, "json:%s: %s", c->arg, why);
        if (!seg[n])
            break;
        snprintf(where, sizeof where, "%.*s", (int)(seg + n - c->arg), c->arg);
        seg += n + 1;
    }
    *out = v;
    return 0;
}

static int from_json(const struct wl_capture *c, const struct wl_response *r, char **out, size_t *len, char *err,
                     size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(r->body ? r->body : "", r->body_len, JSON_DECODE_ANY, &je);
    if (!root)
        return knee_fail(err, errlen, KNEE_EINVAL, "json:%s: the body is not JSON (%s, at byte %d)", c->arg, je.text,
                         je.position);
    const json_t *v;
    int rc = walk(c, root, &v, err, errlen);
    if (!rc) {
        char num[64];
        const char *s;
        size_t n;
        if (json_is_null(v) || wl_scalar_text(v, num, sizeof num, &s, &n) != 0)
            rc = knee_fail(err, errlen, KNEE_EINVAL,
                           "json:%s: it is %s; a capture takes a string, a number or a boolean", c->arg,
                           json_is_string(v) ? "a string holding a NUL" : type_name(v));
        else
            rc = take(c, s, n, out, len, err, errlen);
    }
    json_decref(root);
    return rc;
}

int wl_capture_extract(const struct wl_capture *c, const struct wl_response *r, char **out, size_t *len, char *err,
                       size_t errlen)
{
    *out = NULL;
    *len = 0;
    switch (c->kind) {
    case WL_CAPTURE_HEADER:
        return from_header(c, r, out, len, err, errlen);
    case WL_CAPTURE_COOKIE:
        return from_cookie(c, r, out, len, err, errlen);
    case WL_CAPTURE_JSON:
        return from_json(c, r, out, len, err, errlen);
    case WL_CAPTURE_STATUS: {
        char num[16];
        int w = snprintf(num, sizeof num, "%d", r->status);
        return take(c, num, (size_t)w, out, len, err, errlen);
    }
    case WL_CAPTURE_BODY: {
        const char *s = r->body ? r->body : "";
        size_t n = r->body_len;
        while (n && strchr(" \t\r\n", s[0]) && s[0])
            s++, n--;
        while (n && strchr(" \t\r\n", s[n - 1]) && s[n - 1])
            n--;
        return take(c, s, n, out, len, err, errlen);
    }
    }
    return knee_fail(err, errlen, KNEE_EINVAL, "unknown capture");
}
