/* Fuzz target for the binary request log reader: any byte string must either open and
 * yield records whose fields are in range, or fail with a message; never crash or leak.
 * A version-2 log's gap lists too: never longer than the cap or than the record's events. */
#include "reqlog/reqlog.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct reqlog_reader *rd;
    char err[256];
    if (reqlog_reader_open_mem(&rd, data, size, err, sizeof err) != 0) {
        if (strlen(err) == 0)
            abort(); /* every failure explains itself */
        return 0;
    }
    struct reqlog_record r;
    char row[512];
    int k;
    volatile uint64_t sum = 0;
    while ((k = reqlog_read(rd, &r)) == 1) {
        if (r.target >= reqlog_reader_ntargets(rd) || r.outcome >= OUTCOME_COUNT)
            abort();
        struct reqlog_derived d;
        reqlog_derive(&r, &d);
        reqlog_format_csv(&r, reqlog_reader_target(rd, r.target), row, sizeof row);
        const uint64_t *g;
        uint32_t n;
        reqlog_read_gaps(rd, &g, &n);
        if (n > REQLOG_MAX_GAPS || (n && (!reqlog_reader_has_gaps(rd) || r.events < 2 || n > r.events - 2)))
            abort();
        for (uint32_t i = 0; i < n; i++) /* every gap readable (ASan checks the bounds) */
            sum += g[i];
    }
    (void)sum;
    if (k < 0 && strlen(reqlog_reader_error(rd)) == 0)
        abort();
    reqlog_reader_close(rd);
    return 0;
}
