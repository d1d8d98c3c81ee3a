/* Each load thread's ring of requests prepared ahead of their sends, for a target with a request
 * source (load/variant.h; the source is variant_source.c's, the bytes variant_build.c's). A send
 * takes the next prepared request; the ring is topped up after every loop callback (worker.c,
 * settle_after), so parsing, expansion and serialisation never happen at the send instant
 * unless the ring ran dry (the send is then late by the preparation, which its lag shows). */
#include "core/err.h"
#include "http/client.h"
#include "load/variant_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ the threads' rings */

#define VRING_CAP 1024 /* requests prepared ahead per thread and target (a power of two) */
#define VRING_START 16 /* of a stream, before the run starts (the loop fills the rest; a power of two) */

/* A stream's next entry for this shard into s->cur (under s->mu). 0, WL_END (a pipe's end), or
 * KNEE_EINVAL with the reason in s->error. */
static int stream_advance(struct variant_source *s, uint32_t nshards, uint32_t shard)
{
    char why[1024], where[300];
    struct wl_entry e;
    for (;;) {
        int r = s->restart ? wl_reader_read_at(s->rd, 0, 0, 1, &e, why, sizeof why)
                           : wl_reader_next(s->rd, &e, why, sizeof why);
        s->restart = false;
        if (r == WL_END) {
            if (!s->seekable)
                return WL_END;
            r = wl_reader_read_at(s->rd, 0, 0, 1, &e, why, sizeof why); /* a file cycles */
        }
        if (r) {
            snprintf(s->error, sizeof s->error, "%s", why);
            return KNEE_EINVAL;
        }
        if ((nshards > 1 && e.index % nshards != shard) || !vsource_in_group(s, &e))
            continue;
        if (s->have_cur && !s->lean) /* a lean cur holds nothing but its numbers */
            ventry_release(&s->cur);
        s->have_cur = false;
        s->lean = false;
        if (s->prepared && !s->h2_able) { /* no placeholder: no template, the shape's bytes */
            if ((r = ventry_repeat(s, &e, &s->cur_left, s->error, sizeof s->error)) != 0)
                return KNEE_EINVAL;
            r = variant_lean(s, &e, why, sizeof why);
            if (r < 0) {
                snprintf(s->error, sizeof s->error, "%s:%llu: %s", s->o.targets_path, (unsigned long long)e.line, why);
                return KNEE_EINVAL;
            }
            if (r == 1) {
                s->cur.index = e.index;
                s->cur.line = e.line;
                s->lean = s->have_cur = true;
                return 0;
            }
        }
        ventry_where(s, &e, where, sizeof where);
        if ((r = ventry_repeat(s, &e, &s->cur_left, s->error, sizeof s->error)) != 0 ||
            (r = ventry_compile(s, &e, &s->cur, where, s->error, sizeof s->error)) != 0) {
            ventry_release(&s->cur);
            return KNEE_EINVAL;
        }
        if (s->prepared && !s->h2_able && variant_wire_compile(s, &s->cur, why, sizeof why) != 0) {
            snprintf(s->error, sizeof s->error, "%s: %s", where, why);
            ventry_release(&s->cur);
            return KNEE_EINVAL;
        }
        s->have_cur = true;
        return 0;
    }
}

/* The source failed (r: not WL_END) or ended: the first thread to fail says why (under s->mu). */
static void source_stop(struct variant_source *s, int r)
{
    if (r != WL_END)
        atomic_store(&s->failed, true);
    atomic_store(&s->ended, true);
}

/* Prepare v as request seq from a stream, under s->mu. false when it has no more (a pipe's end,
 * or an entry that could not be used: the source says which). */
static bool prepare_stream(struct variant_source *s, const struct plan *p, uint64_t seq, struct variant *v)
{
    char why[512];
    int r = 0;
    if (atomic_load(&s->ended))
        return false;
    if (s->have_cur && p->shard.count > 1 && s->cur.index % p->shard.count != p->shard.index)
        s->cur_left = 0; /* a pipe's first entry, read before the shard was known: another shard's */
    if (!s->have_cur || s->cur_left == 0)
        r = stream_advance(s, p->shard.count, p->shard.index);
    if (!r) {
        s->cur_left--;
        if (s->lean)
            variant_fill_lean(s, v);
        else
            r = variant_fill(s, &s->cur, seq, v, why, sizeof why);
        if (r)
            snprintf(s->error, sizeof s->error, "%s:%llu: %s", s->o.targets_path, (unsigned long long)s->cur.line, why);
    }
    if (r)
        source_stop(s, r);
    return r == 0;
}

bool variant_prep_failed(struct variant_source *s, int r, const char *why)
{
    pthread_mutex_lock(&s->mu);
    if (!atomic_load(&s->failed))
        snprintf(s->error, sizeof s->error, "%s", r == -ENOMEM ? "out of memory" : why);
    source_stop(s, KNEE_EINVAL);
    pthread_mutex_unlock(&s->mu);
    return false;
}

/* s->prep of a table whose every row was built once: v shares the row's bytes. */
static bool prep_shared(struct variant_source *s, uint64_t seq, const struct wl_dec *dec, struct variant *v)
{
    (void)dec;
    variant_share(table_row(s, seq), v);
    return true;
}

/* s->prep of any other table: a row built once is shared, a wire expanded, the rest built
 * field by field (HTTP/2). */
static bool prep_any(struct variant_source *s, uint64_t seq, const struct wl_dec *dec, struct variant *v)
{
    const struct ventry *row = table_row(s, seq);
    if (row->h1) {
        variant_share(row, v);
        return true;
    }
    if (row->wire[0]) {
        int r = variant_fill_wire(s, row, seq, dec, v);
        return r == 0 || variant_prep_failed(s, r, "");
    }
    char why[512];
    int r = variant_fill(s, row, seq, v, why, sizeof why);
    return r == 0 || variant_prep_failed(s, r, why);
}

void variant_choose_prep(struct variant_source *s)
{
    bool shared = true, wire = true;
    s->dec_seq = false;
    for (size_t i = 0; i < s->nrows; i++) {
        shared &= s->rows[i].h1 != NULL;
        wire &= s->rows[i].wire[0] != NULL;
        for (int k = 0; k < 2 && s->rows[i].wire[k]; k++)
            s->dec_seq |= wl_template_uses_seq(s->rows[i].wire[k]);
        if (s->rows[i].body && !s->rows[i].wire_whole)
            s->dec_seq |= wl_template_uses_seq(s->rows[i].body);
    }
    s->prep = s->nrows && shared ? prep_shared : s->nrows && wire ? variant_prep_wire : prep_any;
    variant_render(s); /* a feed's requests small enough to build before the run: shared */
    variant_spans(s);  /* else its cells ready as values */
}

static struct variant *variant_get(struct vring *vr)
{
    struct variant *v = vr->free;
    if (v) {
        vr->free = v->next;
        return v;
    }
    return xcalloc(1, sizeof *v);
}

void variant_put(struct target_rt *t, struct variant *v)
{
    if (v->own_h1 || v->own_h1_close || v->own_h2_built)
        variant_drop_own(v);
    v->next = t->vr.free;
    t->vr.free = v;
}

#define VRING_LOCKED 32 /* a stream's requests prepared per hold of its lock (other threads wait) */

/* Top a table's ring up to its capacity: s->prep per slot (chosen once), {{seq}}'s digits
 * carried along rather than formatted. */
static void fill_table(struct target_rt *t, struct variant_source *s)
{
    struct vring *vr = &t->vr;
    const struct wl_dec *dec = s->dec_seq ? &vr->seq_dec : NULL;
    size_t mask = vr->cap - 1;
    while (vr->len < vr->cap) {
        struct variant *v = variant_get(vr);
        uint64_t seq = vr->base + vr->step * vr->j;
        if (!s->prep(s, seq, dec, v)) {
            variant_put(t, v);
            vr->done = true;
            return;
        }
        v->seq = seq;
        vr->j++;
        if (dec)
            wl_dec_next(&vr->seq_dec);
        vr->slot[(vr->head + vr->len) & mask] = v;
        vr->len++;
    }
}

/* Top t's ring up to its capacity (or the source's end). A stream takes its lock once per
 * VRING_LOCKED requests rather than once per request. */
static void vring_fill(struct worker *w, struct target_rt *t)
{
    struct vring *vr = &t->vr;
    struct variant_source *s = t->et->target->source;
    const struct plan *p = &w->e->cfg->plan;
    if (s->table) {
        if (!vr->done)
            fill_table(t, s);
        return;
    }
    while (vr->len < vr->cap && !vr->done) {
        pthread_mutex_lock(&s->mu);
        for (size_t batch = VRING_LOCKED; batch > 0 && vr->len < vr->cap; batch--) {
            struct variant *v = variant_get(vr);
            uint64_t seq = vr->base + vr->step * vr->j;
            if (!prepare_stream(s, p, seq, v)) {
                variant_put(t, v);
                vr->done = true;
                break;
            }
            v->seq = seq;
            vr->j++;
            vr->slot[(vr->head + vr->len) & (vr->cap - 1)] = v;
            vr->len++;
        }
        pthread_mutex_unlock(&s->mu);
    }
}

void vring_init(struct worker *w, struct target_rt *t)
{
    struct vring *vr = &t->vr;
    const struct plan *p = &w->e->cfg->plan;
    uint64_t T = w->e->nworkers, N = p->shard.count ? p->shard.count : 1, I = p->shard.count ? p->shard.index : 0;
    vr->cap = VRING_CAP;
    vr->slot = xcalloc(vr->cap, sizeof *vr->slot);
    vr->base = I + N * w->index; /* the open loop's global index of this thread's j-th request */
    vr->step = N * T;
    wl_dec_set(&vr->seq_dec, vr->base, vr->step);
    /* a stream (a pipe) fills a little now, the rest from the thread's loop, so the threads
     * take its entries as they go rather than the first thread all of them */
    struct variant_source *s = t->et->target->source;
    size_t cap = vr->cap;
    if (!s->table)
        vr->cap = VRING_START;
    vring_fill(w, t);
    vr->cap = cap;
    if (!s->table)
        w->vneed = true;
}

void vring_release(struct target_rt *t)
{
    struct vring *vr = &t->vr;
    for (size_t i = 0; i < vr->len; i++)
        variant_put(t, vr->slot[(vr->head + i) & (vr->cap - 1)]);
    vr->len = 0;
    while (vr->free) {
        struct variant *v = vr->free;
        vr->free = v->next;
        variant_bufs_release(v);
        free(v);
    }
    free(vr->slot);
    vr->slot = NULL;
}

/* t's source has no more for this thread: an entry that could not be used stops the whole run
 * (it drains as after Ctrl-C, and knee run exits 2 naming the entry); a pipe's end only ends
 * this thread's planning of t (the other threads send what they prepared). */
static void source_spent(struct worker *w, const struct target_rt *t)
{
    if (variant_source_error(t->et->target->source)[0])
        run_stop_request(w->e->stop, false);
}

struct variant *vring_pop(struct worker *w, struct target_rt *t)
{
    struct vring *vr = &t->vr;
    if (vr->reserved)
        vr->reserved--;
    if (!vr->len)
        vring_fill(w, t); /* ran dry: prepared at the send, late */
    if (!vr->len) {
        source_spent(w, t);
        return NULL;
    }
    struct variant *v = vr->slot[vr->head];
    vr->head = (vr->head + 1) & (vr->cap - 1);
    vr->len--;
    if (vr->len < vr->cap / 2)
        w->vneed = true;
    return v;
}

bool vring_ready(struct worker *w, struct target_rt *t)
{
    struct vring *vr = &t->vr;
    if (vr->len <= vr->reserved)
        vring_fill(w, t);
    if (vr->len <= vr->reserved) {
        source_spent(w, t);
        return false;
    }
    vr->reserved++;
    return true;
}

void vring_unreserve(struct target_rt *t)
{
    if (t->vr.reserved)
        t->vr.reserved--;
}

void vring_refill(struct worker *w)
{
    w->vneed = false;
    for (size_t i = 0; i < w->nt; i++)
        if (w->t[i].vr.slot)
            vring_fill(w, &w->t[i]);
}
