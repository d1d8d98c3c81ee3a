/* Fuzz target for knee compare's reading of a run JSON (through the run record's reader: the load
 * model and the run's flags): any byte string must either give a repetition with a bounded
 * target list, or fail with a message; never crash or leak. */
#include "compare/compare.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct compare_side s;
    compare_side_init(&s, "fuzz");
    struct compare_rep *r = compare_rep_add(&s, "rep");
    char err[512] = "";
    if (compare_rep_load_json_mem(r, data, size, "fuzz.json", err, sizeof err) != 0) {
        if (strlen(err) == 0)
            abort(); /* every failure explains itself */
    } else {
        if (r->model.ntargets > COMPARE_MAX_TARGETS)
            abort();
        char text[512], diffs[16][200];
        compare_model_describe(&r->model, text, sizeof text);
        compare_model_diff(&r->model, &r->model, diffs, 16);
    }
    compare_side_release(&s);
    return 0;
}
