/* Merging .hlog files from several processes or machines into one exact log. Inputs are read
 * whole (their histograms kept as text, a few hundred bytes each), placed on a common time
 * axis by their absolute timestamps, grouped per tag into slots by each interval's midpoint,
 * and each group's histograms summed index-wise, one decoded interval at a time. */
#include "hlog/hlog.h"

#include "core/err.h"
#include "core/grow.h"
#include "hlog/codec.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MERGE_MAX_TAGS 4096

struct item {
    size_t file, line;
    size_t tag; /* index into tags; 0 = untagged */
    double start_s, end_s;
    int64_t slot;
    char *text; /* base64 histogram */
    size_t text_len;
};

struct tag_info {
    char *name; /* NULL for untagged */
    bool seen_params;
    int sig_digits, unit_magnitude;
    int64_t lowest;
    size_t file, line; /* where those parameters were first seen */
};

struct merge {
    const char *const *paths;
    struct item *items;
    size_t n, cap;
    struct tag_info *tags;
    size_t ntags;
    char *err;
    size_t errlen;
};

static int failf(struct merge *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(struct merge *m, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, m->errlen, fmt, ap);
    va_end(ap);
    return code;
}

static int intern_tag(struct merge *m, const struct hlog_entry *e, size_t *id)
{
    for (size_t i = 0; i < m->ntags; i++) {
        bool untagged = m->tags[i].name == NULL;
        if (untagged ? !e->tagged : (e->tagged && strcmp(m->tags[i].name, e->tag) == 0)) {
            *id = i;
            return 0;
        }
    }
    if (m->ntags == MERGE_MAX_TAGS)
        return KNEE_ETOOBIG;
    m->tags = xrealloc(m->tags, (m->ntags + 1) * sizeof *m->tags);
    memset(&m->tags[m->ntags], 0, sizeof *m->tags);
    m->tags[m->ntags].name = e->tagged ? xstrdup(e->tag) : NULL;
    *id = m->ntags++;
    return 0;
}

static int read_file(struct merge *m, size_t fi, double *start_time)
{
    FILE *f = fopen(m->paths[fi], "r");
    if (!f)
        return failf(m, -errno, "%s: %s", m->paths[fi], strerror(errno));
    struct hlog_reader *r = hlog_reader_new(f, m->paths[fi]);
    struct hlog_entry e;
    int rc;
    while ((rc = hlog_reader_next(r, &e)) == 1) {
        size_t tag;
        if (intern_tag(m, &e, &tag)) {
            rc = failf(m, KNEE_ETOOBIG, "%s:%zu: more than %d distinct tags", m->paths[fi], e.line, MERGE_MAX_TAGS);
            break;
        }
        m->items = grow_array(m->items, &m->cap, m->n + 1, sizeof *m->items, 256);
        struct item *it = &m->items[m->n++];
        it->file = fi;
        it->line = e.line;
        it->tag = tag;
        it->start_s = e.start_s;
        it->end_s = e.start_s + e.length_s;
        it->text = xmalloc(e.histogram_len + 1);
        memcpy(it->text, e.histogram, e.histogram_len + 1);
        it->text_len = e.histogram_len;
    }
    if (rc < 0 && !m->err[0])
        failf(m, rc, "%s", hlog_reader_error(r));
    *start_time = hlog_reader_start_time(r);
    hlog_reader_free(r);
    fclose(f);
    return rc < 0 ? rc : 0;
}

static int cmp_item(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    if (a->tag != b->tag)
        return a->tag < b->tag ? -1 : 1;
    if (a->start_s != b->start_s)
        return a->start_s < b->start_s ? -1 : 1;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* One decoded interval and the running sum, kept from group to group so that merging allocates
 * only when the inputs' parameters change. Memory is two histograms whatever the number of
 * intervals in a slot: each is decoded into `one` and added to `sum` at once. */
struct pool {
    struct hdr one, sum;
    bool one_ready, sum_ready;
};

static void pool_release(struct pool *p)
{
    if (p->one_ready)
        hdr_release(&p->one);
    if (p->sum_ready)
        hdr_release(&p->sum);
}

/* The sum's range grows to cover `highest` (same lowest and digits: the same bucket layout, so
 * the sum so far is carried index by index). A group's sum thus ends with the largest range of
 * its intervals, as if it had been sized for all of them at once. fresh: the group's first
 * interval (the sum restarts). 0 or KNEE_ERANGE. */
static int sum_cover(struct pool *p, const struct tag_info *t, int64_t highest, bool fresh)
{
    struct hdr *sum = &p->sum;
    if (fresh && p->sum_ready && sum->lowest == t->lowest && sum->highest == highest &&
        sum->sig_digits == t->sig_digits) {
        hdr_reset(sum);
        return 0;
    }
    if (!fresh && sum->highest >= highest)
        return 0;
    struct hdr bigger;
    if (hdr_init(&bigger, t->lowest, highest, t->sig_digits) != 0)
        return KNEE_ERANGE;
    if (!fresh && hdr_add(&bigger, sum) != 0) { /* cannot fail: same layout, a wider range */
        hdr_release(&bigger);
        return KNEE_ERANGE;
    }
    if (p->sum_ready)
        hdr_release(sum);
    *sum = bigger;
    p->sum_ready = true;
    return 0;
}

/* Item it's histogram, decoded into p->one, checked against its tag's parameters (the first
 * interval of a tag sets them). 0 or the error, with the message. */
static int decode_item(struct merge *m, struct hlog_codec *c, struct pool *p, const struct item *it)
{
    char why[256];
    int rc = hlog_decode_base64_reuse(c, it->text, it->text_len, &p->one, &p->one_ready, why, sizeof why);
    if (rc)
        return failf(m, rc, "%s:%zu: histogram: %s", m->paths[it->file], it->line, why[0] ? why : knee_strerror(rc));
    struct tag_info *t = &m->tags[it->tag];
    const struct hdr *h = &p->one;
    if (!t->seen_params) {
        t->seen_params = true;
        t->sig_digits = h->sig_digits;
        t->lowest = h->lowest;
        t->unit_magnitude = h->unit_magnitude;
        t->file = it->file;
        t->line = it->line;
    } else if (h->sig_digits != t->sig_digits || h->unit_magnitude != t->unit_magnitude) {
        return failf(m, KNEE_EMISMATCH,
                     "%s:%zu: %d significant digits, lowest value %lld, but %s:%zu (same tag) has %d and %lld: "
                     "cannot merge exactly",
                     m->paths[it->file], it->line, h->sig_digits, (long long)h->lowest, m->paths[t->file], t->line,
                     t->sig_digits, (long long)t->lowest);
    }
    return 0;
}

/* Sum items [from, to) (one tag, one slot) and write the result. Each interval is decoded and
 * added before the next is decoded. A decoding or parameter error anywhere in the group is
 * reported before an error of the addition (an overflow), as when every interval was decoded
 * first: after a failed addition the rest are still decoded and checked, no longer added. */
static int write_group(struct merge *m, struct hlog_writer *w, struct hlog_codec *c, struct pool *p, size_t from,
                       size_t to, double base_s)
{
    double start = INFINITY, end = -INFINITY;
    const struct tag_info *t = &m->tags[m->items[from].tag];
    int add_rc = 0;
    char add_err[512] = "";
    for (size_t i = from; i < to; i++) {
        const struct item *it = &m->items[i];
        int rc = decode_item(m, c, p, it);
        if (rc)
            return rc;
        if (it->start_s < start)
            start = it->start_s;
        if (it->end_s > end)
            end = it->end_s;
        if (add_rc)
            continue;
        const struct hdr *h = &p->one;
        /* counts may lie above a histogram's highest trackable value (within its counts
         * array); the sum's range covers them */
        int64_t top = h->total_count > 0 && hdr_max(h) > h->highest ? hdr_max(h) : h->highest;
        if (sum_cover(p, t, top, i == from) != 0) {
            snprintf(add_err, sizeof add_err, "%s:%zu: cannot size the merged histogram", m->paths[m->items[from].file],
                     m->items[from].line);
            add_rc = KNEE_ERANGE;
        } else if (h->total_count > INT64_MAX - p->sum.total_count) {
            snprintf(add_err, sizeof add_err, "%s:%zu: merged counts pass 2^63-1", m->paths[it->file], it->line);
            add_rc = KNEE_EOVERFLOW;
        } else if ((add_rc = hdr_add(&p->sum, h))) {
            snprintf(add_err, sizeof add_err, "%s:%zu: adding: %s", m->paths[it->file], it->line,
                     knee_strerror(add_rc));
        }
    }
    if (add_rc)
        return failf(m, add_rc, "%s", add_err);
    int rc = hlog_writer_write(w, t->name, start - base_s, end - start, &p->sum);
    if (rc)
        failf(m, rc, "writing the merged log: %s", knee_strerror(rc));
    return rc;
}

int hlog_merge(FILE *out, const char *const *paths, size_t npaths, double slot_s, char *err, size_t errlen)
{
    struct merge m = {.paths = paths, .err = err, .errlen = errlen};
    err[0] = '\0';
    int rc = 0;
    double base = INFINITY;
    if (!(slot_s > 0) || !isfinite(slot_s))
        return failf(&m, KNEE_EINVAL, "slot length must be a positive number of seconds");
    for (size_t i = 0; i < npaths && !rc; i++) {
        double start = NAN;
        rc = read_file(&m, i, &start);
        if (!rc && start < base)
            base = start;
    }
    if (!rc && m.n == 0)
        rc = failf(&m, KNEE_EEMPTY, "no intervals in the input logs");
    if (rc)
        goto done;
    for (size_t i = 0; i < m.n; i++) {
        struct item *it = &m.items[i];
        double mid = it->start_s + (it->end_s - it->start_s) / 2;
        double slot = floor((mid - base) / slot_s);
        if (!(fabs(slot) < 9e15)) {
            rc = failf(&m, KNEE_ERANGE, "%s:%zu: timestamp too far from the others", paths[it->file], it->line);
            goto done;
        }
        it->slot = (int64_t)slot;
    }
    qsort(m.items, m.n, sizeof *m.items, cmp_item);

    char comment[128];
    snprintf(comment, sizeof comment, "Merged by knee %s from %zu log%s", KNEE_VERSION, npaths, npaths == 1 ? "" : "s");
    struct hlog_writer *w;
    if ((rc = hlog_writer_open(&w, out, base, comment))) {
        failf(&m, rc, "writing the merged log: %s", knee_strerror(rc));
        goto done;
    }
    struct hlog_codec *c = hlog_codec_new();
    struct pool pool = {0};
    for (size_t i = 0; i < m.n && !rc;) {
        size_t j = i + 1;
        while (j < m.n && m.items[j].slot == m.items[i].slot && m.items[j].tag == m.items[i].tag)
            j++;
        rc = write_group(&m, w, c, &pool, i, j, base);
        i = j;
    }
    pool_release(&pool);
    hlog_codec_free(c);
    int rc2 = hlog_writer_close(w);
    if (!rc && rc2)
        rc = failf(&m, rc2, "writing the merged log: %s", knee_strerror(rc2));
done:
    for (size_t i = 0; i < m.n; i++)
        free(m.items[i].text);
    free(m.items);
    for (size_t i = 0; i < m.ntags; i++)
        free(m.tags[i].name);
    free(m.tags);
    return rc;
}
