/* Variables captured from a response (knee run --capture NAME=SOURCE): the rules that say where
 * a value comes from (a header, a cookie, a JSON field, the status, the body), parsed from the
 * flag once, then applied to the setup request's response. The values fill {{NAME}}
 * placeholders as a feed's columns do (workload.h, struct wl_names). Pure: no I/O, no threads;
 * any thread may use its own objects. Described in docs/FORMATS.md ("The setup request"). */
#ifndef KNEE_WORKLOAD_CAPTURE_H
#define KNEE_WORKLOAD_CAPTURE_H

#include <stddef.h>

#define WL_CAPTURE_NAME_MAX 64           /* a variable's name, in bytes */
#define WL_CAPTURE_VALUE_MAX (64u << 10) /* a captured value, in bytes (a cookie, a JWT: a few KiB) */
#define WL_CAPTURE_PATH_MAX 32           /* segments of a JSON path */

enum wl_capture_kind {
    WL_CAPTURE_HEADER, /* header:NAME, the first such header's value */
    WL_CAPTURE_COOKIE, /* cookie:NAME, the value of the cookie NAME a Set-Cookie header sets */
    WL_CAPTURE_JSON,   /* json:a.b.0.c, a scalar inside the JSON body */
    WL_CAPTURE_STATUS, /* status, the status code in decimal */
    WL_CAPTURE_BODY,   /* body, the whole body, spaces and line ends around it trimmed */
};

struct wl_capture {
    char name[WL_CAPTURE_NAME_MAX + 1];
    enum wl_capture_kind kind;
    char *arg; /* the header or cookie name, the JSON path as written; NULL for status and body */
};

/* Parse "NAME=SOURCE" (SOURCE: header:H, cookie:C, json:PATH, status, body) into *out (release
 * with wl_capture_release). NAME: 1..WL_CAPTURE_NAME_MAX letters, digits, '_' or '-', not a
 * built-in placeholder (seq, uuid). PATH: segments joined by '.', none empty, at most
 * WL_CAPTURE_PATH_MAX; a segment of digits indexes an array (on an object it is a key). 0, or
 * KNEE_EINVAL with the reason in err (*out then needs no release). */
int wl_capture_parse(const char *spec, struct wl_capture *out, char *err, size_t errlen);
void wl_capture_release(struct wl_capture *c);

/* The source as written after "NAME=": "json:data.token", "status". Returns buf. */
const char *wl_capture_source(const struct wl_capture *c, char *buf, size_t len);

/* The response a capture reads (borrowed pointers; header names and values NUL-terminated, the
 * body may hold NULs). */
struct wl_response {
    int status;
    const char *const *names;
    const char *const *values;
    size_t nheaders;
    const char *body;
    size_t body_len;
};

/* c's value in r: 0 with *out (heap, NUL-terminated, caller frees) and *len; or an error with
 * the reason in err, naming what was missing: KNEE_ENOTFOUND (no such header, cookie, key or
 * index: "no key 'token' in data (keys: user, expires)"), KNEE_EINVAL (the body is not JSON,
 * the field is null, an object or a list, the value holds a control byte (it could go into no
 * header and no URL), or it is longer than WL_CAPTURE_VALUE_MAX). JSON values: a string as it
 * is, an integer in decimal, another number as the shortest text that reads back to it,
 * true/false. */
int wl_capture_extract(const struct wl_capture *c, const struct wl_response *r, char **out, size_t *len, char *err,
                       size_t errlen);

#endif
