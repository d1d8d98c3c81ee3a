/* Which feed row a request uses: in order, drawn at random, or shuffled once per cycle, each a
 * pure function of (order, n, seed, seq) so every thread and shard computes the same row
 * without sharing anything. The shuffle is a keyed bijection (a Feistel network on the next
 * even power of two, walked back into [0, n)): no table, O(1) memory for any n. */
#include "workload/workload.h"

#include "core/err.h"
#include "workload/internal.h"

#include <string.h>

int wl_order_parse(const char *s, enum wl_order *out)
{
    if (s && strcmp(s, "sequential") == 0)
        *out = WL_ORDER_SEQUENTIAL;
    else if (s && strcmp(s, "random") == 0)
        *out = WL_ORDER_RANDOM;
    else if (s && strcmp(s, "shuffle") == 0)
        *out = WL_ORDER_SHUFFLE;
    else
        return KNEE_EINVAL;
    return 0;
}

uint64_t wl_below(uint64_t n, uint64_t seed, uint64_t seq, uint64_t tag)
{
    /* values below `floor` would make some residues one more likely: draw again (from the same
     * key, stepped), at most a handful of times in expectation */
    uint64_t floor = (0 - n) % n; /* 2^64 mod n */
    for (uint64_t i = 0;; i++) {
        uint64_t x = wl_hash3(seed, seq, tag + (i << 32));
        if (x >= floor)
            return x % n;
    }
}

#define FEISTEL_ROUNDS 6

/* One pass of the keyed permutation of [0, 2^(2 * half)). */
static uint64_t feistel(uint64_t x, unsigned half, const uint64_t *keys)
{
    uint64_t mask = half >= 64 ? UINT64_MAX : (1ULL << half) - 1;
    uint64_t l = (x >> half) & mask, r = x & mask;
    for (int i = 0; i < FEISTEL_ROUNDS; i++) {
        uint64_t t = l ^ (wl_mix64(r ^ keys[i]) & mask);
        l = r;
        r = t;
    }
    return (l << half) | r;
}

/* The position pos of [0, n) under the permutation of cycle `cycle`. */
static uint64_t shuffle(uint64_t n, uint64_t seed, uint64_t cycle, uint64_t pos)
{
    unsigned bits = 0;
    while (bits < 64 && (n - 1) >> bits)
        bits++;
    unsigned half = (bits + 1) / 2;
    if (half == 0)
        half = 1;
    uint64_t keys[FEISTEL_ROUNDS];
    uint64_t k = wl_hash3(seed, cycle, WL_TAG_FEED + (1u << WL_TAG_SHIFT));
    for (int i = 0; i < FEISTEL_ROUNDS; i++)
        keys[i] = k = wl_mix64(k + (uint64_t)i);
    /* cycle walking: a bijection on the larger domain, applied until it lands inside [0, n),
     * is a bijection on [0, n); the domain is < 4n, so about 4 passes at most on average */
    uint64_t x = feistel(pos, half, keys);
    while (x >= n)
        x = feistel(x, half, keys);
    return x;
}

uint64_t wl_pick(enum wl_order order, uint64_t n, uint64_t seed, uint64_t seq)
{
    if (n <= 1)
        return 0;
    switch (order) {
    case WL_ORDER_RANDOM:
        return wl_below(n, seed, seq, WL_TAG_FEED);
    case WL_ORDER_SHUFFLE:
        return shuffle(n, seed, seq / n, seq % n);
    case WL_ORDER_SEQUENTIAL:
    default:
        return seq % n;
    }
}
