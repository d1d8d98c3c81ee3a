/* Doubling growth for heap arrays (core/grow.h). */
#include "core/grow.h"

#include "core/err.h"

#include <stdint.h>

void *grow_array_to(void *p, size_t *cap, size_t need, size_t elem_size, size_t first_cap)
{
    size_t c = *cap ? *cap : first_cap ? first_cap : 1;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            knee_oom();
        c *= 2;
    }
    if (elem_size && c > SIZE_MAX / elem_size)
        knee_oom();
    p = xrealloc(p, c * elem_size);
    *cap = c;
    return p;
}
