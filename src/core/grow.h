/* Heap arrays grown by doubling, the one way knee grows them: appends cost amortised O(1),
 * and the first allocation has a size the caller chooses for its use. */
#ifndef KNEE_CORE_GROW_H
#define KNEE_CORE_GROW_H

#include <stddef.h>

/* The slow half of grow_array: always reallocates. */
void *grow_array_to(void *p, size_t *cap, size_t need, size_t elem_size, size_t first_cap);

/* Room for `need` elements of elem_size bytes in the heap array p of *cap elements (p NULL
 * when *cap is 0): when need > *cap, *cap doubles, from first_cap (> 0) when it is 0, until
 * it holds need, and p is reallocated to *cap elements. Returns p, moved or not; the caller
 * stores it back:
 *
 *   b->p = grow_array(b->p, &b->cap, b->len + n + 1, 1, 256);
 *
 * Out of memory, or a size past SIZE_MAX, aborts (knee_oom). A limit on what a peer can make
 * grow stays with the caller, who names it and says what was refused. No state: any thread. */
static inline void *grow_array(void *p, size_t *cap, size_t need, size_t elem_size, size_t first_cap)
{
    return need <= *cap ? p : grow_array_to(p, cap, need, elem_size, first_cap);
}

#endif
