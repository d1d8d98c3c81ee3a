/* The union of interval logs, streamed. knee hlog merge (hlog/merge.c) reads every input whole
 * and sorts its intervals, which serves any logs but holds every histogram of every file in
 * memory at once (a thousand shards × an hour × a few hundred bytes is more than a gigabyte).
 * The shards' logs are each written in time order, so a merge can walk them side by side:
 * one current interval per file, one exact sum per tag for the current slot. Slots are those of
 * knee hlog merge (slot_s seconds from the earliest StartTime, an interval in the slot holding
 * its midpoint), so the output is the same log, interval for interval. */
#include "merge/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "hlog/base64.h"
#include "hlog/codec.h"
#include "hlog/hlog.h"
#include "net/net.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define HLOGS_MAX_TAGS 4096

struct src {
    const char *path;
    FILE *f;
    struct hlog_reader *r;
    bool has;
    struct hlog_entry e;
    int64_t slot;
};

struct tag {
    char *name; /* NULL: untagged */
    struct hlog_acc acc;
    bool used; /* in the current slot */
    double start, end;
};

struct hm {
    struct src *src;
    size_t n;
    struct tag *tags;
    size_t ntags;
    double base, slot_s;
    bool by_start; /* an interval is in the slot of its start (else: of its midpoint) */
    struct hdr tmp;
    bool tmp_ready;
    struct hlog_codec *codec; /* the sparse path's inflater */
    uint8_t *bin;             /* its decoded base64 */
    size_t bin_cap;
    char *err;
    size_t errlen;
};

static int failf(struct hm *h, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(struct hm *h, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->err, h->errlen, fmt, ap);
    va_end(ap);
    return code;
}

static int advance(struct hm *h, struct src *s)
{
    int r = hlog_reader_next(s->r, &s->e);
    if (r < 0)
        return failf(h, r, "%s", hlog_reader_error(s->r));
    s->has = r == 1;
    return 0;
}

static int slot_of(struct hm *h, struct src *s, int64_t *slot)
{
    double at = h->by_start ? s->e.start_s : s->e.start_s + s->e.length_s / 2;
    double k = floor((at - h->base) / h->slot_s);
    if (!(fabs(k) < 9e15))
        return failf(h, KNEE_ERANGE, "%s:%zu: timestamp too far from the others", s->path, s->e.line);
    *slot = (int64_t)k;
    return 0;
}

static struct tag *tag_of(struct hm *h, const struct hlog_entry *e)
{
    for (size_t i = 0; i < h->ntags; i++) {
        bool untagged = h->tags[i].name == NULL;
        if (untagged ? !e->tagged : (e->tagged && strcmp(h->tags[i].name, e->tag) == 0))
            return &h->tags[i];
    }
    if (h->ntags == HLOGS_MAX_TAGS)
        return NULL;
    h->tags = xrealloc(h->tags, (h->ntags + 1) * sizeof *h->tags);
    struct tag *t = &h->tags[h->ntags++];
    memset(t, 0, sizeof *t);
    t->name = e->tagged ? xstrdup(e->tag) : NULL;
    hlog_acc_init(&t->acc);
    return t;
}

/* acc += the interval's histogram index by index, straight from its varints: the slot's sum
 * grows by the few buckets an interval fills instead of a whole histogram being zeroed,
 * decoded and scanned (a 1 ns..1 h, 3-digit histogram has 33,792 counts; an interval of a
 * hundred requests fills about a hundred). Only where the result is the one hlog_acc_add
 * gives: the same bucket layout, every bucket inside the sum's trackable range; the
 * extremes as hdr_recalc + hdr_add set them. The encoding is checked by hlog_inflate, which
 * bounds it as the decoder does. false: not applicable, take the general path (which also
 * reports a malformed histogram with its line). */
static bool add_sparse(struct hm *h, struct hlog_acc *acc, const struct hlog_entry *e)
{
    struct hdr *a = &acc->h;
    size_t need = base64_decoded_max(e->histogram_len);
    if (need > h->bin_cap) {
        h->bin = xrealloc(h->bin, need);
        h->bin_cap = need;
    }
    size_t n;
    if (base64_decode(e->histogram, e->histogram_len, h->bin, &n, NULL) != 0)
        return false;
    const uint8_t *raw;
    size_t raw_len;
    if (hlog_inflate(h->codec, h->bin, n, &raw, &raw_len, NULL, 0) != 0 || raw_len < HLOG_V2_HEADER_BYTES)
        return false;
    struct hlog_v2_header hd;
    hlog_v2_header_parse(raw, &hd);
    if (hd.cookie != HLOG_V2_COOKIE || hd.normalizing_index_offset != 0 || hd.int_to_double_ratio != 1.0 ||
        hd.sig_digits != a->sig_digits || hd.lowest < 1 ||
        63 - __builtin_clzll((unsigned long long)hd.lowest) != a->unit_magnitude)
        return false;
    if ((size_t)hd.payload_len > raw_len - HLOG_V2_HEADER_BYTES)
        return false;
    const uint8_t *p = raw + HLOG_V2_HEADER_BYTES;
    size_t len = hd.payload_len;
    size_t fit = hdr_index_of(a, a->highest) + 1; /* hdr_add's range */
    if (fit > a->counts_len)
        fit = a->counts_len;
    /* first pass: every bucket inside the range, the total, the extremes */
    size_t idx = 0, at = 0, top = SIZE_MAX, low = SIZE_MAX;
    int64_t total = 0;
    while (at < len) {
        int64_t v;
        size_t used = hlog_varint_get(p + at, len - at, &v);
        if (!used)
            return false;
        at += used;
        if (v < 0) {
            if (v == INT64_MIN || (uint64_t)-v > fit - (idx < fit ? idx : fit))
                return false;
            idx += (size_t)-v;
            continue;
        }
        if (idx >= fit || v > INT64_MAX - total)
            return false;
        if (v > 0) {
            total += v;
            top = idx;
            if (low == SIZE_MAX && idx != 0)
                low = idx;
        }
        idx++;
    }
    if (total > INT64_MAX - a->total_count)
        return false;
    /* second pass: add */
    idx = at = 0;
    while (at < len) {
        int64_t v;
        at += hlog_varint_get(p + at, len - at, &v);
        if (v < 0)
            idx += (size_t)-v;
        else
            a->counts[idx++] += v;
    }
    a->total_count += total;
    if (top != SIZE_MAX) {
        int64_t mx = hdr_value_from_index(a, top);
        if (mx > a->max_value)
            a->max_value = mx;
        if (low != SIZE_MAX) {
            int64_t mn = hdr_value_from_index(a, low);
            if (mn < a->min_value)
                a->min_value = mn;
        }
    }
    acc->added++;
    return true;
}

/* Add every interval of src in slot `cur`, advancing it. */
static int take(struct hm *h, struct src *s, int64_t cur)
{
    while (s->has && s->slot == cur) {
        struct tag *t = tag_of(h, &s->e);
        if (!t)
            return failf(h, KNEE_ETOOBIG, "%s:%zu: more than %d distinct tags", s->path, s->e.line, HLOGS_MAX_TAGS);
        int r;
        if (!t->acc.used || !add_sparse(h, &t->acc, &s->e)) {
            r = hlog_reader_decode_reuse(s->r, &s->e, &h->tmp, &h->tmp_ready);
            if (r)
                return failf(h, r, "%s", hlog_reader_error(s->r));
            char why[256] = "";
            r = hlog_acc_add(&t->acc, &h->tmp, why, sizeof why);
            if (r)
                return failf(h, r, "%s:%zu: %s", s->path, s->e.line, why[0] ? why : knee_strerror(r));
        }
        double a = s->e.start_s, b = s->e.start_s + s->e.length_s;
        if (!t->used) {
            t->used = true;
            t->start = a;
            t->end = b;
        } else {
            t->start = a < t->start ? a : t->start;
            t->end = b > t->end ? b : t->end;
        }
        size_t line = s->e.line;
        if ((r = advance(h, s)))
            return r;
        if (s->has) {
            if ((r = slot_of(h, s, &s->slot)))
                return r;
            if (s->slot < cur)
                return failf(h, KNEE_EFORMAT,
                             "%s:%zu: an interval earlier than line %zu's: the log is not in time order (knee hlog "
                             "merge accepts any order)",
                             s->path, s->e.line, line);
        }
    }
    return 0;
}

static int hlog_slots(const char *const *paths, size_t n, double slot_s, bool by_start, FILE *out, const char *comment,
                      merge_slot_fn *on_slot, void *ctx, char *err, size_t errlen)
{
    struct hm h = {.n = n, .slot_s = slot_s, .by_start = by_start, .base = INFINITY, .err = err, .errlen = errlen};
    err[0] = '\0';
    if (!(slot_s > 0) || !isfinite(slot_s))
        return failf(&h, KNEE_EINVAL, "slot length must be a positive number of seconds");
    uint64_t have = 0;
    net_raise_nofile((uint64_t)n + 64, &have);
    if (have < (uint64_t)n + 16)
        return failf(&h, KNEE_EINVAL,
                     "%zu logs need as many open files, but the limit is %" PRIu64 " (raise ulimit -n)", n, have);
    h.src = xcalloc(n ? n : 1, sizeof *h.src);
    h.codec = hlog_codec_new();
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        struct src *s = &h.src[i];
        s->path = paths[i];
        s->f = fopen(paths[i], "r");
        if (!s->f) {
            rc = failf(&h, -errno, "%s: %s", paths[i], strerror(errno));
            break;
        }
        s->r = hlog_reader_new(s->f, paths[i]);
        rc = advance(&h, s);
        double st = hlog_reader_start_time(s->r);
        if (!rc && isfinite(st) && st < h.base)
            h.base = st;
    }
    if (!rc && !isfinite(h.base))
        rc = failf(&h, KNEE_EEMPTY, "no intervals in the input logs");
    for (size_t i = 0; i < n && !rc; i++)
        if (h.src[i].has)
            rc = slot_of(&h, &h.src[i], &h.src[i].slot);
    struct hlog_writer *w = NULL;
    if (!rc && out) {
        char def[128];
        snprintf(def, sizeof def, "Merged by knee %s from %zu log%s", KNEE_VERSION, n, n == 1 ? "" : "s");
        if ((rc = hlog_writer_open(&w, out, h.base, comment ? comment : def)))
            failf(&h, rc, "writing the merged log: %s", knee_strerror(rc));
    }
    while (!rc) {
        int64_t cur = INT64_MAX;
        for (size_t i = 0; i < n; i++)
            if (h.src[i].has && h.src[i].slot < cur)
                cur = h.src[i].slot;
        if (cur == INT64_MAX)
            break;
        for (size_t i = 0; i < n && !rc; i++)
            rc = take(&h, &h.src[i], cur);
        for (size_t i = 0; i < h.ntags && !rc; i++) {
            struct tag *t = &h.tags[i];
            if (!t->used)
                continue;
            if (on_slot)
                on_slot(ctx, cur, t->start - h.base, t->end - h.base, t->name, &t->acc.h);
            if (w && (rc = hlog_writer_write(w, t->name, t->start - h.base, t->end - t->start, &t->acc.h)))
                failf(&h, rc, "writing the merged log: %s", knee_strerror(rc));
            hdr_reset(&t->acc.h);
            t->used = false;
        }
    }
    if (w) {
        int r2 = hlog_writer_close(w);
        if (!rc && r2)
            rc = failf(&h, r2, "writing the merged log: %s", knee_strerror(r2));
    }
    for (size_t i = 0; i < n; i++) {
        hlog_reader_free(h.src[i].r);
        if (h.src[i].f)
            fclose(h.src[i].f);
    }
    free(h.src);
    for (size_t i = 0; i < h.ntags; i++) {
        free(h.tags[i].name);
        hlog_acc_release(&h.tags[i].acc);
    }
    free(h.tags);
    if (h.tmp_ready)
        hdr_release(&h.tmp);
    hlog_codec_free(h.codec);
    free(h.bin);
    return rc;
}

int merge_hlog_files(const char *const *paths, size_t n, double slot_s, FILE *out, const char *comment,
                     merge_slot_fn *on_slot, void *ctx, char *err, size_t errlen)
{
    return hlog_slots(paths, n, slot_s, false, out, comment, on_slot, ctx, err, errlen);
}

static const char **set_paths(const struct merge_set *s)
{
    const char **p = xcalloc(s->count ? s->count : 1, sizeof *p);
    for (uint32_t k = 0; k < s->count; k++)
        p[k] = s->shards[k].path[MERGE_HLOG];
    return p;
}

int merge_hlogs(const struct merge_set *s, FILE *out, char *err, size_t errlen)
{
    if (!merge_set_complete(s, MERGE_HLOG))
        return knee_fail(err, errlen, KNEE_EINVAL, "the merged hlog needs every shard's hlog (knee run --hlog)");
    char comment[160];
    snprintf(comment, sizeof comment, "Merged by knee %s, shards all/%u, plan %016" PRIx64 ", start at %llu.%09llu",
             KNEE_VERSION, s->count, s->plan_id, (unsigned long long)(s->start_at_unix_ns / NS_PER_S),
             (unsigned long long)(s->start_at_unix_ns % NS_PER_S));
    const char **paths = set_paths(s);
    int r = merge_hlog_files(paths, s->count, 1.0, out, comment, NULL, NULL, err, errlen);
    free(paths);
    return r;
}

/* ---- the merged timeline's percentiles ---- */

struct tick_ctx {
    struct run_record *res;
    bool by_start;
    int64_t slot; /* the slot being summed, -1 before the first */
    double start_s, end_s;
    struct hdr all;
    bool ready;
};

/* The slot's summed histogram (every target) becomes the percentiles of the timeline's
 * interval that starts where the slot's intervals start (one t0), or that holds the slot's
 * midpoint (without). */
static void tick_flush(struct tick_ctx *t)
{
    if (t->slot < 0 || !t->ready || !t->all.total_count)
        return;
    double at = t->by_start ? t->start_s : (t->start_s + t->end_s) / 2;
    struct run_record *res = t->res;
    for (size_t i = 0; i < res->nticks; i++) {
        struct run_tick *k = &res->ticks[i];
        bool here = t->by_start ? fabs(at - k->start_s) < 5e-4 : at >= k->start_s && at < k->start_s + k->length_s;
        if (here) {
            k->p50_ms = (double)hdr_value_at_percentile(&t->all, 50) / 1e6;
            k->p99_ms = (double)hdr_value_at_percentile(&t->all, 99) / 1e6;
            break;
        }
    }
    hdr_reset(&t->all);
}

static void on_tick_slot(void *ctx, int64_t slot, double start_s, double end_s, const char *tag, const struct hdr *sum)
{
    struct tick_ctx *t = ctx;
    if (hlog_tag_kind(tag, NULL) != HLOG_TAG_LATENCY)
        return; /* a target's streamed events (first_event/, event_gap/): not latency */
    if (slot != t->slot) {
        tick_flush(t);
        t->slot = slot;
        t->start_s = start_s;
        t->end_s = end_s;
    }
    t->start_s = start_s < t->start_s ? start_s : t->start_s;
    t->end_s = end_s > t->end_s ? end_s : t->end_s;
    if (!t->ready) {
        if (hdr_init(&t->all, sum->lowest, sum->highest, sum->sig_digits) != 0)
            return;
        t->ready = true;
    }
    if (hdr_add(&t->all, sum) == KNEE_EMISMATCH)
        return;
}

int merge_summary_ticks_from_hlogs(struct merge_summary *m, const struct merge_set *s, char *err, size_t errlen)
{
    if (!merge_set_complete(s, MERGE_HLOG))
        return 0;
    /* one t0 (the hlogs' StartTime is the start instant): the shards log the same intervals
     * (whole seconds cut at the window's edges; a shard's last one ends when it did), each summed
     * exactly with those that start with it; without, per second of the earliest log, as knee
     * hlog merge sums them */
    struct tick_ctx t = {.res = &m->res, .slot = -1, .by_start = m->same_t0};
    const char **paths = set_paths(s);
    int r =
        hlog_slots(paths, s->count, m->same_t0 ? 0.001 : 1.0, m->same_t0, NULL, NULL, on_tick_slot, &t, err, errlen);
    tick_flush(&t);
    free(paths);
    if (t.ready)
        hdr_release(&t.all);
    return r;
}
