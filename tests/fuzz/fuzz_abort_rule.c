/* Fuzz target: abort_rule_parse on arbitrary text (an --abort-if value), then an evaluator of
 * whatever parsed fed a few seconds: a rule that parses must be one the evaluator can judge. */
#include "abort/abort.h"
#include "core/err.h"
#include "record/record.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    struct abort_rule r;
    char err[512];
    int rc = abort_rule_parse(s, &r, err, sizeof err);
    free(s);
    if (rc != 0) {
        if (rc != KNEE_EINVAL || !err[0])
            abort(); /* a refusal always says why */
        return 0;
    }
    if (r.kind != ABORT_GENERATOR_LIMITED && (r.window_s < 1 || r.window_s > ABORT_MAX_WINDOW_S))
        abort();
    double edges[] = {0, 1, 3};
    struct abort_eval *ev = abort_eval_new(&r, 1, 0, 0);
    abort_eval_set_stages(ev, edges, 2);
    struct hdr h;
    if (hdr_init(&h, RUN_HDR_LOWEST, RUN_HDR_HIGHEST, RUN_HDR_SIGDIGITS))
        abort();
    for (int k = 0; k < 4; k++) {
        hdr_reset(&h);
        hdr_record(&h, 1000000LL * (k + 1) * (k + 1), 10);
        abort_eval_add_latency(ev, &h);
        struct abort_second sec = {
            .start_s = k, .length_s = 1, .planned = 10, .sent = 10, .completed = 10, .ok = (uint64_t)(10 - k)};
        sec.errors = sec.completed - sec.ok;
        int fired = abort_eval_second(ev, &sec, NULL);
        if (fired > 0)
            abort(); /* one rule: index 0 or none */
        abort_eval_limited(ev, k + 1, k == 3);
    }
    hdr_release(&h);
    abort_eval_free(ev);
    return 0;
}
