/* Fuzz target for knee merge's reading of a shard's run JSON (jansson parses; knee reads the
 * shard record, the counts, the histograms carried in base64 and the timeline from whatever
 * the document holds): any byte string, taken as shard 0 of a plan of one, must merge or fail
 * with a message, and a merged result must print; never crash, leak or convert a hostile
 * number out of range. */
#include "merge/internal.h"
#include "runreport/runreport.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t je;
    json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return 0;
    char err[512] = "";
    struct merge_probe p;
    if (merge_json_shard(root, "input", &p, err, sizeof err) != 0 && !err[0])
        abort();
    const char *name = "input";
    struct merge_summary m;
    err[0] = '\0';
    if (merge_summary_from_docs(&m, &root, &name, 1, 0, 0, NULL, NULL, 0, err, sizeof err) != 0) {
        if (!err[0])
            abort(); /* every failure explains itself */
    } else {
        FILE *f = fopen("/dev/null", "w");
        if (!f)
            abort();
        runreport_print_summary(f, &m.res, true);
        m.res.verbose = true;
        record_write_json(f, &m.res, false);
        fclose(f);
        merge_summary_release(&m);
    }
    json_decref(root);
    return 0;
}
