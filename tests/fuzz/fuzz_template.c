/* Fuzz target for the template compiler and expansion: any bytes compile (against two names)
 * or fail with a reason; what compiles expands the same twice for one (seed, seq), appends
 * without touching what the buffer held, and a template without placeholders expands to its
 * input with each "{{{{" made "{{". */
#include "workload/workload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* s with "{{{{" made "{{" into out (size bytes at most); the bytes written. */
static size_t unescape(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (i + 3 < n && memcmp(s + i, "{{{{", 4) == 0) {
            out[o++] = '{';
            out[o++] = '{';
            i += 4;
        } else {
            out[o++] = s[i++];
        }
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"a", "b c"};
    const struct wl_names nm = {.names = names, .n = 2, .source = "--feed f.csv"};
    struct wl_template *t;
    char err[512];
    if (wl_template_compile((const char *)data, size, &nm, &t, err, sizeof err) != 0) {
        if (!*err)
            abort();
        return 0;
    }
    const struct wl_value v[] = {{"A", 1}, {"", 0}};
    struct wl_ctx ctx = {.seq = size, .seed = size > 0 ? data[0] : 0, .values = v, .nvalues = 2};
    struct wl_buf a = {0}, b = {0};
    if (wl_template_expand(t, &ctx, &a) != 0)
        abort();
    /* b already holds "xy": the expansion goes after it, the same bytes as in a */
    b.p = malloc(2);
    if (!b.p)
        abort();
    memcpy(b.p, "xy", 2);
    b.len = b.cap = 2;
    if (wl_template_expand(t, &ctx, &b) != 0 || b.len != a.len + 2 || memcmp(b.p, "xy", 2) != 0 ||
        (a.len > 0 && memcmp(b.p + 2, a.p, a.len) != 0))
        abort();
    if (wl_template_literal(t)) {
        char *u = malloc(size + 1);
        size_t n = unescape((const char *)data, size, u);
        if (n != a.len || (n > 0 && memcmp(u, a.p, n) != 0))
            abort();
        free(u);
    }
    wl_template_free(t);
    wl_buf_release(&a);
    wl_buf_release(&b);
    return 0;
}
