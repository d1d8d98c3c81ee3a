/* Fuzz target for the targets file reader in vegeta's http format: any bytes give entries
 * numbered in order, with well-formed strings (a token method, "Name: value" headers), or an
 * error naming the file and a line; an entry read again at its offset is the same entry. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_targets(data, size, WL_FORMAT_HTTP);
    return 0;
}
