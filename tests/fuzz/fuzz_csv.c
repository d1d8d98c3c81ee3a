/* Fuzz target for the CSV reader and number parser: any bytes must give records whose field
 * lengths match their strings and lines that only go up, or an error with a message; the
 * number parser must agree with strtod whenever it accepts a field. */
#include "csv/csv.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* small caps so the fuzzer reaches them; the first byte picks between two sets */
    struct csv_limits small = {.max_record = 64, .max_field = 16, .max_fields = 8};
    const struct csv_limits *lim = size > 0 && (data[0] & 1) ? &small : NULL;
    struct csv_reader *r;
    if (csv_reader_open_mem(&r, data, size, lim) != 0)
        abort();
    struct csv_record rec;
    uint64_t last_line = 0;
    int k;
    while ((k = csv_next(r, &rec)) == 1) {
        if (rec.n == 0 || rec.line <= last_line)
            abort();
        last_line = rec.line;
        for (size_t i = 0; i < rec.n; i++) {
            if (strlen(rec.field[i]) != rec.len[i])
                abort();
            double v;
            if (csv_parse_double(rec.field[i], rec.len[i], &v) == 0) {
                double w = strtod(rec.field[i], NULL);
                if (memcmp(&v, &w, sizeof v) != 0 && !(v == 0 && w == 0))
                    abort();
            }
        }
    }
    if (k < 0 && (strlen(csv_reader_error(r)) == 0 || csv_reader_line(r) == 0))
        abort();
    if (csv_reader_offset(r) > size)
        abort();
    csv_reader_close(r);
    return 0;
}
