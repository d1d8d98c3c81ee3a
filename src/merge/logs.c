/* The shards' binary request logs: their union, every record moved onto one time axis (the
 * shared start instant, where every shard's t0 already is; else each shard's t0 on the wall
 * clock, from its JSON), sorted by planned time (ties: shard, then file order), written as one
 * log whose header says it merges N shards (each shard writes its records in completion order,
 * so the union is sorted in memory, about 120 bytes a record, and every gap between events
 * the logs carry: the merged log carries them, version 2, when any shard's does); and the merged
 * summary's events counted again from them (merge_count_logs). */
#include "merge/internal.h"

#include "core/err.h"
#include "core/outfile.h"
#include "reqlog/reqlog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct item {
    struct reqlog_record r;
    uint32_t shard;
    uint32_t ngaps; /* its gaps: ngaps at gaps.v[gap_off] */
    uint64_t gap_off;
    uint64_t seq;
};

/* Every shard's gaps, one array; an item names its part. */
struct gap_store {
    uint64_t *v;
    size_t n, cap;
    bool any; /* a shard's log carries gaps: the merged log does */
};

static uint64_t gaps_keep(struct gap_store *g, const uint64_t *v, uint32_t n)
{
    uint64_t off = g->n;
    if (n > g->cap - g->n) {
        size_t cap = g->cap ? g->cap : 65536;
        while (cap - g->n < n)
            cap *= 2;
        g->v = xrealloc(g->v, cap * sizeof *g->v);
        g->cap = cap;
    }
    memcpy(g->v + g->n, v, n * sizeof *v);
    g->n += n;
    return off;
}

static int cmp_item(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    if (a->r.planned_ns != b->r.planned_ns)
        return a->r.planned_ns < b->r.planned_ns ? -1 : 1;
    if (a->shard != b->shard)
        return a->shard < b->shard ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void shift(uint64_t *t, uint64_t by)
{
    if (*t)
        *t += by;
}

static int write_out(const struct merge_set *s, const char *out_path, const struct item *items, size_t n,
                     const struct gap_store *gaps, char *const *names, size_t nt, bool closed_loop, char *err,
                     size_t errlen)
{
    size_t len = strlen(out_path);
    bool csv = len >= 4 && strcmp(out_path + len - 4, ".csv") == 0;
    struct outfile o;
    char why[512];
    int r = outfile_open(&o, out_path, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "-o %s", why);
    if (csv) {
        fputs(REQLOG_CSV_HEADER "\n", o.f);
        char row[1024];
        for (size_t i = 0; i < n; i++) {
            size_t k = reqlog_format_csv(&items[i].r, names[items[i].r.target], row, sizeof row);
            if (k >= sizeof row) {
                char *big = xmalloc(k + 1);
                reqlog_format_csv(&items[i].r, names[items[i].r.target], big, k + 1);
                fwrite(big, 1, k, o.f);
                free(big);
            } else {
                fwrite(row, 1, k, o.f);
            }
        }
    } else {
        /* the binary writer writes the descriptor outfile opened (a temporary file renamed into
         * place, or a special file in place); the FILE over it stays empty */
        struct reqlog_shard sh = {.index = REQLOG_SHARD_MERGED,
                                  .count = s->count,
                                  .start_at_unix_ns = s->start_at_unix_ns,
                                  .plan_id = s->plan_id};
        struct reqlog_writer *w;
        unsigned flags = (closed_loop ? REQLOG_HEADER_FLAG_CLOSED_LOOP : 0) | (gaps->any ? REQLOG_HEADER_FLAG_GAPS : 0);
        r = reqlog_writer_open_fd_shard(&w, o.fd, (const char *const *)names, nt, flags, &sh);
        if (r) {
            outfile_abort(&o);
            return knee_fail(err, errlen, r, "-o %s: %s", out_path, knee_strerror(r));
        }
        for (size_t i = 0; i < n && !r; i++)
            r = reqlog_write_gaps(w, &items[i].r, items[i].ngaps ? gaps->v + items[i].gap_off : NULL, items[i].ngaps);
        int rc = r ? (reqlog_writer_close(w), r) : reqlog_writer_close(w);
        if (rc) { /* the writer's first write error (-errno) */
            outfile_abort(&o);
            return knee_fail(err, errlen, rc, "-o %s: %s", out_path, knee_strerror(rc));
        }
    }
    r = outfile_commit(&o, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "-o %s", why);
    return 0;
}

int merge_logs(const struct merge_set *s, struct merge_summary *m, const char *out_path, struct merge_log_stats *st,
               char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    if (!merge_set_complete(s, MERGE_LOG))
        return knee_fail(err, errlen, KNEE_EINVAL, "the merged request log needs every shard's binary log");
    struct item *items = NULL;
    size_t n = 0, cap = 0;
    struct gap_store gaps = {0};
    char **names = NULL;
    size_t nt = 0;
    bool closed_loop = false;
    int rc = 0;
    uint64_t t0_min = UINT64_MAX;
    if (m && m->shard_t0_unix_ns)
        for (uint32_t k = 0; k < s->count; k++)
            if (m->shard_t0_unix_ns[k] < t0_min)
                t0_min = m->shard_t0_unix_ns[k];
    for (uint32_t k = 0; k < s->count && !rc; k++) {
        const char *path = s->shards[k].path[MERGE_LOG];
        struct reqlog_reader *rd;
        char why[256];
        rc = reqlog_reader_open(&rd, path, why, sizeof why);
        if (rc) {
            rc = knee_fail(err, errlen, rc, "%s: %s", path, why);
            break;
        }
        size_t rnt = reqlog_reader_ntargets(rd);
        gaps.any |= reqlog_reader_has_gaps(rd);
        if (k == 0) {
            nt = rnt;
            closed_loop = reqlog_reader_closed_loop(rd);
            names = xcalloc(nt ? nt : 1, sizeof *names);
            for (size_t i = 0; i < nt; i++)
                names[i] = xstrdup(reqlog_reader_target(rd, i));
        } else {
            bool same = rnt == nt && reqlog_reader_closed_loop(rd) == closed_loop;
            for (size_t i = 0; same && i < nt; i++)
                same = strcmp(names[i], reqlog_reader_target(rd, i)) == 0;
            if (!same) {
                reqlog_reader_close(rd);
                rc = knee_fail(err, errlen, KNEE_EFORMAT, "%s: its targets differ from %s's", path,
                               s->shards[0].path[MERGE_LOG]);
                break;
            }
        }
        /* shards without a shared start instant: onto the earliest t0 */
        uint64_t by = 0;
        if (!s->start_at_unix_ns && m && m->shard_t0_unix_ns)
            by = m->shard_t0_unix_ns[k] - t0_min;
        struct reqlog_record r;
        int got;
        uint64_t seq = 0;
        while ((got = reqlog_read(rd, &r)) == 1) {
            if (n == cap) {
                cap = cap ? cap * 2 : 65536;
                items = xrealloc(items, cap * sizeof *items);
            }
            r.planned_ns += by;
            shift(&r.sent_ns, by);
            shift(&r.first_byte_ns, by);
            shift(&r.done_ns, by);
            shift(&r.first_event_ns, by);
            const uint64_t *g;
            uint32_t ng;
            reqlog_read_gaps(rd, &g, &ng);
            items[n++] = (struct item){r, k, ng, ng ? gaps_keep(&gaps, g, ng) : 0, seq++};
        }
        if (got == KNEE_ETRUNC) {
            st->truncated_shards++;
            if (m) {
                char w[160];
                snprintf(w, sizeof w, "its request log is truncated after %" PRIu64 " records (%s)", seq, path);
                merge_summary_fail_shard(m, k, w);
            }
        } else if (got < 0) {
            rc = knee_fail(err, errlen, got, "%s: %s", path, reqlog_reader_error(rd));
        }
        reqlog_reader_close(rd);
    }
    if (!rc) {
        qsort(items, n, sizeof *items, cmp_item);
        st->records = n;
        if (out_path)
            rc = write_out(s, out_path, items, n, &gaps, names, nt, closed_loop, err, errlen);
    }
    for (size_t i = 0; i < nt; i++)
        free(names[i]);
    free(names);
    free(items);
    free(gaps.v);
    return rc;
}

/* ---- the events counted again ---- */

/* One shard's per-request log counted into ev[] (every record moved onto the merged axis, as the
 * engine counts them: record_events_add_reqlog); a truncated log, or one that holds another number of
 * requests than its JSON planned, fails its shard. */
static int count_log(struct merge_ctx *c, uint32_t k, const char *path, struct run_events *ev)
{
    struct merge_summary *m = c->m;
    const struct merge_doc *d = &c->docs[k];
    size_t nt = m->res.ntargets;
    struct reqlog_reader *rd;
    char why[256];
    int rc = reqlog_reader_open(&rd, path, why, sizeof why);
    if (rc)
        return merge_fail(c, rc, "%s: %s", path, why);
    bool same = reqlog_reader_ntargets(rd) == nt;
    for (size_t i = 0; same && i < nt; i++)
        same = strcmp(reqlog_reader_target(rd, i), m->res.targets[i].name) == 0;
    if (!same) {
        reqlog_reader_close(rd);
        return merge_fail(c, KNEE_EFORMAT, "%s: its targets are not those of %s", path, d->path);
    }
    struct reqlog_record r;
    uint64_t n = 0;
    int got;
    while ((got = reqlog_read(rd, &r)) == 1) {
        if (d->off_ns) {
            r.planned_ns += d->off_ns;
            r.sent_ns += r.sent_ns ? d->off_ns : 0;
            r.done_ns += r.done_ns ? d->off_ns : 0;
        }
        record_events_add_reqlog(&ev[r.target], &r);
        record_events_add_reqlog(&ev[nt], &r);
        n++;
    }
    if (got == KNEE_ETRUNC)
        merge_summary_fail_shardf(m, k, "its request log is truncated after %" PRIu64 " records (%s)", n, path);
    else if (got < 0)
        rc = merge_fail(c, got, "%s: %s", path, reqlog_reader_error(rd));
    else if (n != d->planned)
        merge_summary_fail_shardf(m, k, "its request log %s holds %" PRIu64 " requests, its JSON planned %" PRIu64,
                                  path, n, d->planned);
    reqlog_reader_close(rd);
    m->log_records += n;
    return rc;
}

static bool same_events(const struct run_events *x, const struct run_events *y)
{
    return x->planned == y->planned && x->sent == y->sent && x->completed == y->completed && x->ok == y->ok &&
           x->sent_before == y->sent_before && x->sent_late == y->sent_late && x->completed_late == y->completed_late &&
           x->sends == y->sends &&
           (!x->sends || (x->first_send_ns == y->first_send_ns && x->last_send_ns == y->last_send_ns));
}

int merge_count_logs(struct merge_ctx *c, const char *const *paths)
{
    struct merge_summary *m = c->m;
    struct run_record *res = &m->res;
    size_t nt = res->ntargets;
    struct run_events *ev = xcalloc(nt + 1, sizeof *ev);
    for (size_t i = 0; i <= nt; i++)
        record_events_init(&ev[i], m->window_start_ns, m->window_end_ns);
    int rc = 0;
    for (uint32_t k = 0; k < c->count && !rc; k++)
        rc = count_log(c, k, paths[k], ev);
    for (size_t i = 0; i <= nt && !rc; i++) {
        struct run_target_result *t = i < nt ? &res->targets[i] : &res->all;
        m->logs_disagree |= c->same_t0 && !same_events(&t->events, &ev[i]);
        t->events = ev[i];
        record_rates_of(&t->events, &t->rates);
    }
    m->rates_from_logs = !rc;
    free(ev);
    return rc;
}
