/* Fuzz target for --capture (workload/capture.c): the input's first line is a capture rule,
 * the rest a response (header lines "Name: value" up to a blank line, then the body). Any rule
 * parses or fails with a reason; any response gives a value or a reason; a value is never
 * longer than the cap and never holds a control byte other than a tab. */
#include "workload/capture.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_HEADERS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (!in)
        abort();
    memcpy(in, data, size);
    in[size] = '\0';
    char *nl = memchr(in, '\n', size);
    char *rest = nl ? nl + 1 : in + size;
    if (nl)
        *nl = '\0';
    struct wl_capture c;
    char err[1024];
    if (wl_capture_parse(in, &c, err, sizeof err) != 0) {
        if (!*err)
            abort();
        free(in);
        return 0;
    }
    const char *names[MAX_HEADERS], *values[MAX_HEADERS];
    size_t nh = 0;
    char *p = rest, *end = in + size;
    while (p < end && *p != '\n' && nh < MAX_HEADERS) { /* "Name: value" lines (NULs end them early) */
        char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        *eol = '\0';
        char *colon = strchr(p, ':');
        if (colon) {
            *colon = '\0';
            names[nh] = p;
            values[nh++] = colon + 1;
        }
        p = eol + 1;
    }
    if (p < end && *p == '\n')
        p++;
    struct wl_response r = {.status = 200,
                            .names = names,
                            .values = values,
                            .nheaders = nh,
                            .body = p < end ? p : NULL,
                            .body_len = p < end ? (size_t)(end - p) : 0};
    char *v;
    size_t n;
    if (wl_capture_extract(&c, &r, &v, &n, err, sizeof err) != 0) {
        if (!*err)
            abort();
    } else {
        if (n > WL_CAPTURE_VALUE_MAX || strlen(v) != n)
            abort();
        for (size_t i = 0; i < n; i++)
            if (((unsigned char)v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
                abort();
        free(v);
    }
    wl_capture_release(&c);
    free(in);
    return 0;
}
