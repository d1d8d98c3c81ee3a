/* Fuzz target for the feed loader: any bytes (the first picks CSV or JSON lines) give a feed
 * of at least one row whose named columns and cells are all readable with the lengths said,
 * or an error naming the feed. */
#include "workload/workload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    bool jsonl = data[0] & 1;
    struct wl_feed *f;
    char err[512];
    if (wl_feed_load_mem(&f, data + 1, size - 1, jsonl, "f", err, sizeof err) != 0) {
        if (strncmp(err, "f:", 2) != 0 && strncmp(err, "f ", 2) != 0)
            abort();
        return 0;
    }
    if (wl_feed_rows(f) == 0 || wl_feed_columns(f) == 0)
        abort();
    for (size_t c = 0; c < wl_feed_columns(f); c++)
        if (!wl_feed_column(f, c) || !*wl_feed_column(f, c))
            abort();
    for (size_t r = 0; r < wl_feed_rows(f); r++) {
        for (size_t c = 0; c < wl_feed_columns(f); c++) {
            size_t len;
            const char *s = wl_feed_cell(f, r, c, &len);
            if (strlen(s) != len)
                abort();
        }
    }
    wl_feed_free(f);
    return 0;
}
