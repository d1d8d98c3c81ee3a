/* The report's timeline: per interval (1 s, doubled with neighbours merged when a run is longer
 * than HTML_MAX_TICKS intervals) the planned, sent, completed and dropped counts, outcomes,
 * the generator's lag histogram and the latency heatmap column. Counts add and HdrHistograms
 * add exactly, so a coarser timeline is the exact sum of the finer one. */
#include "html/internal.h"

#include "core/err.h"
#include "core/grow.h"

#include <stdlib.h>
#include <string.h>

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

void html_timeline_init(struct html_timeline *tl)
{
    memset(tl, 0, sizeof *tl);
    tl->interval_ns = HTML_FIRST_TICK_NS;
}

static void tick_init(struct html_tick *t)
{
    memset(t, 0, sizeof *t);
    dbl_init(&t->heat, HTML_DBL_FIRST_MS);
}

static void hdr_free(struct hdr *h)
{
    if (h) {
        hdr_release(h);
        free(h);
    }
}

static void tick_release(struct html_tick *t)
{
    hdr_free(t->lag);
    hdr_free(t->lat);
    tick_init(t);
}

void html_timeline_release(struct html_timeline *tl)
{
    for (size_t i = 0; i < tl->n; i++)
        tick_release(&tl->ticks[i]);
    free(tl->ticks);
    memset(tl, 0, sizeof *tl);
}

/* *dst += *src for lazily allocated histograms (src is freed). Same layout: exact. */
static void hdr_merge_into(struct hdr **dst, struct hdr **src)
{
    if (!*src)
        return;
    if (!*dst) {
        *dst = *src;
        *src = NULL;
        return;
    }
    if (hdr_add(*dst, *src) != 0) {
        /* cannot happen for the report's own histograms (one layout each); hlog intervals
         * with another layout were refused before they got here */
        knee_oom();
    }
    hdr_free(*src);
    *src = NULL;
}

static void tick_merge(struct html_tick *dst, struct html_tick *src)
{
    dst->planned += src->planned;
    dst->sent += src->sent;
    dst->done += src->done;
    dst->dropped += src->dropped;
    for (int o = 0; o < OUTCOME_COUNT; o++)
        dst->outcome[o] += src->outcome[o];
    dst->warmup |= src->warmup;
    for (int i = 0; i < DBL_MAX_BUCKETS; i++)
        dst->heat.counts[i] += src->heat.counts[i];
    dst->heat.total += src->heat.total;
    hdr_merge_into(&dst->lag, &src->lag);
    hdr_merge_into(&dst->lat, &src->lat);
    tick_release(src);
}

static void coarsen(struct html_timeline *tl)
{
    int64_t nbase = floordiv(tl->base, 2);
    size_t nn = 0;
    for (size_t i = 0; i < tl->n; i++) {
        size_t j = (size_t)(floordiv(tl->base + (int64_t)i, 2) - nbase);
        if (j != i)
            tick_merge(&tl->ticks[j], &tl->ticks[i]);
        nn = j + 1;
    }
    tl->n = nn;
    tl->base = nbase;
    tl->interval_ns *= 2;
}

static void grow(struct html_timeline *tl, size_t n)
{
    tl->ticks = grow_array(tl->ticks, &tl->cap, n, sizeof *tl->ticks, 64);
    for (size_t i = tl->n; i < n; i++)
        tick_init(&tl->ticks[i]);
    tl->n = n;
}

struct html_tick *html_timeline_at(struct html_timeline *tl, int64_t t_ns)
{
    if (!tl->any) {
        tl->any = true;
        tl->base = floordiv(t_ns, tl->interval_ns);
        if (tl->base > 0 && tl->base < HTML_MAX_TICKS / 2)
            tl->base = 0; /* a run's timeline starts at its start (knee's times are since then) */
        tl->n = 0;
    }
    for (;;) {
        int64_t k = floordiv(t_ns, tl->interval_ns);
        int64_t lo = k < tl->base ? k : tl->base;
        int64_t hi = k >= tl->base + (int64_t)tl->n ? k : tl->base + (int64_t)tl->n - 1;
        if (hi - lo >= HTML_MAX_TICKS) {
            coarsen(tl);
            continue;
        }
        if (k < tl->base) { /* prepend */
            size_t add = (size_t)(tl->base - k), old = tl->n;
            grow(tl, old + add);
            memmove(&tl->ticks[add], &tl->ticks[0], old * sizeof *tl->ticks);
            for (size_t i = 0; i < add; i++)
                tick_init(&tl->ticks[i]);
            tl->base = k;
        } else if (k >= tl->base + (int64_t)tl->n) {
            grow(tl, (size_t)(k - tl->base) + 1);
        }
        return &tl->ticks[k - tl->base];
    }
}
