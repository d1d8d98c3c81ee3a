/* The per-request log (--out). Load threads fill chunks of binary records in their own
 * memory; a writer thread formats and writes full chunks, so formatting, syscalls and disk
 * stalls stay off the request path. Chunks are recycled; their number is capped, and a load
 * thread waits for a free one only when the writer is hopelessly behind (reported). */
#include "load/internal.h"

#include "core/err.h"
#include "core/outfile.h"
#include "load/shard_hooks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTLOG_MAX_CHUNKS 256 /* ~16 MB of records in flight at most */

struct outlog {
    struct outfile out; /* --out through core/outfile: replaced whole on success, never destroyed */
    FILE *f;            /* out.f (CSV) */
    bool csv, closed_loop, gaps;
    size_t nt;
    char **names;
    struct reqlog_writer *rw;
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv_full, cv_free;
    struct outlog_chunk *full_head, *full_tail, *free_list;
    size_t nallocated;
    bool closing;
    int error;
    char *buf; /* the writer's formatting buffer */
    size_t blen;
    struct run_generator_cpu cpu; /* the writer thread's CPU time, written as it ends */
};

#define OUTLOG_BUF (1u << 20)

static void out_flush(struct outlog *l)
{
    if (l->blen && !l->error && fwrite(l->buf, 1, l->blen, l->f) != l->blen)
        l->error = -(errno ? errno : EIO);
    l->blen = 0;
}

static void out_str(struct outlog *l, const char *s, size_t n)
{
    if (l->blen + n > OUTLOG_BUF)
        out_flush(l);
    memcpy(l->buf + l->blen, s, n);
    l->blen += n;
}

static void csv_row(struct outlog *l, const struct reqlog_record *r)
{
    /* one formatter for the CSV row (reqlog's), so the CSV and the binary log agree */
    char row[512];
    const char *name = r->target < l->nt ? l->names[r->target] : "?";
    size_t n = reqlog_format_csv(r, name, row, sizeof row);
    if (n >= sizeof row) {
        char *big = xmalloc(n + 1);
        reqlog_format_csv(r, name, big, n + 1);
        out_str(l, big, n);
        free(big);
        return;
    }
    out_str(l, row, n);
}

static void write_chunk(struct outlog *l, const struct outlog_chunk *c)
{
    size_t off = 0; /* record i's gaps follow those of the records before it */
    for (size_t i = 0; i < c->n && !l->error; i++) {
        if (l->csv) {
            csv_row(l, &c->rec[i]);
        } else {
            uint32_t n = c->ngap ? c->ngap[i] : 0;
            int r = reqlog_write_gaps(l->rw, &c->rec[i], n ? c->gaps + off : NULL, n);
            off += n;
            if (r)
                l->error = r;
        }
    }
}

void outlog_chunk_gaps(struct outlog_chunk *c, size_t n, const uint64_t *gaps, uint32_t ngaps)
{
    if (!c->ngap)
        c->ngap = xmalloc(OUTLOG_CHUNK_RECORDS * sizeof *c->ngap);
    c->ngap[n] = ngaps;
    if (!ngaps)
        return;
    if (c->gaps_cap - c->gaps_used < ngaps) {
        size_t cap = c->gaps_cap ? c->gaps_cap : 4096;
        while (cap - c->gaps_used < ngaps)
            cap *= 2; /* ngaps <= REQLOG_MAX_GAPS and gaps_used stays near OUTLOG_CHUNK_GAPS: no overflow */
        c->gaps = xrealloc(c->gaps, cap * sizeof *c->gaps);
        c->gaps_cap = cap;
    }
    memcpy(c->gaps + c->gaps_used, gaps, ngaps * sizeof *gaps);
    c->gaps_used += ngaps;
}

/* A chunk back on the free list: empty; a gap array grown far past the usual goes, so one
 * long stream does not keep its memory for the rest of the run. */
static void chunk_reset(struct outlog_chunk *c)
{
    c->n = 0;
    c->gaps_used = 0;
    if (c->gaps_cap > 2 * (size_t)OUTLOG_CHUNK_GAPS) {
        free(c->gaps);
        c->gaps = NULL;
        c->gaps_cap = 0;
    }
}

static void chunk_free(struct outlog_chunk *c)
{
    free(c->ngap);
    free(c->gaps);
    free(c);
}

static void *writer_main(void *arg)
{
    struct outlog *l = arg;
    struct run_generator_cpu cpu0;
    thread_cpu_now(&cpu0);
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->full_head && !l->closing)
            pthread_cond_wait(&l->cv_full, &l->mu);
        struct outlog_chunk *c = l->full_head;
        if (!c)
            break; /* closing and nothing left */
        l->full_head = c->next;
        if (!l->full_head)
            l->full_tail = NULL;
        pthread_mutex_unlock(&l->mu);
        write_chunk(l, c);
        pthread_mutex_lock(&l->mu);
        chunk_reset(c);
        c->next = l->free_list;
        l->free_list = c;
        pthread_cond_broadcast(&l->cv_free);
    }
    pthread_mutex_unlock(&l->mu);
    if (l->csv)
        out_flush(l);
    thread_cpu_since(&cpu0, &l->cpu);
    return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool outlog_wants_gaps(const struct run_config *cfg)
{
    return cfg->stream_gaps && cfg->out_path && !ends_with(cfg->out_path, ".csv");
}

/* Free what outlog_open allocated (the file, if open, is closed: a failed open leaves it). */
static void outlog_free(struct outlog *l)
{
    for (size_t i = 0; i < l->nt; i++)
        free(l->names[i]);
    free(l->names);
    free(l->buf);
    free(l);
}

int outlog_open(struct outlog **out, const char *path, const struct engine *e, char *err, size_t errlen)
{
    *out = NULL;
    bool csv = ends_with(path, ".csv");
    struct outlog *l = xcalloc(1, sizeof *l);
    l->csv = csv;
    l->closed_loop = !e->cfg->plan.open_loop;
    l->gaps = outlog_wants_gaps(e->cfg);
    l->nt = e->nt;
    l->names = xcalloc(e->nt, sizeof *l->names);
    for (size_t i = 0; i < e->nt; i++)
        l->names[i] = xstrdup(e->targets[i].target->name);
    char why[512];
    int r = outfile_open(&l->out, path, why, sizeof why);
    if (r) {
        outlog_free(l);
        return knee_fail(err, errlen, r, "--out %s", why);
    }
    if (csv) {
        l->f = l->out.f;
        l->buf = xmalloc(OUTLOG_BUF);
        static const char header[] = REQLOG_CSV_HEADER "\n";
        out_str(l, header, sizeof header - 1);
    } else {
        const char **names = xcalloc(e->nt, sizeof *names);
        for (size_t i = 0; i < e->nt; i++)
            names[i] = e->targets[i].target->name;
        /* the writer writes the descriptor outfile opened; the FILE over it stays empty; --shard:
         * the header names the shard */
        struct reqlog_shard sh;
        unsigned flags =
            (l->closed_loop ? REQLOG_HEADER_FLAG_CLOSED_LOOP : 0) | (l->gaps ? REQLOG_HEADER_FLAG_GAPS : 0);
        r = reqlog_writer_open_fd_shard(&l->rw, l->out.fd, names, e->nt, flags, run_shard_reqlog(e->cfg, &sh));
        free(names);
        if (r) {
            outfile_abort(&l->out);
            outlog_free(l);
            return knee_fail(err, errlen, r, "--out %s: %s", path, knee_strerror(r));
        }
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv_full, NULL);
    pthread_cond_init(&l->cv_free, NULL);
    int pr = pthread_create(&l->tid, NULL, writer_main, l);
    if (pr != 0) {
        /* nothing was written yet: give the file up and report; the run does not start */
        if (!l->csv)
            reqlog_writer_close(l->rw);
        outfile_abort(&l->out);
        pthread_mutex_destroy(&l->mu);
        pthread_cond_destroy(&l->cv_full);
        pthread_cond_destroy(&l->cv_free);
        outlog_free(l);
        return knee_fail(err, errlen, -pr, "--out %s: cannot start the writer thread: %s", path, strerror(pr));
    }
    *out = l;
    return 0;
}

struct outlog_chunk *outlog_take(struct outlog *l, bool *slowed)
{
    pthread_mutex_lock(&l->mu);
    struct outlog_chunk *c;
    for (;;) {
        c = l->free_list;
        if (c) {
            l->free_list = c->next;
            break;
        }
        if (l->nallocated < OUTLOG_MAX_CHUNKS) {
            l->nallocated++;
            pthread_mutex_unlock(&l->mu);
            c = xcalloc(1, sizeof *c); /* no gap arrays until a record has gaps */
            return c;
        }
        *slowed = true;
        pthread_cond_wait(&l->cv_free, &l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    chunk_reset(c);
    c->next = NULL;
    return c;
}

void outlog_submit(struct outlog *l, struct outlog_chunk *c)
{
    pthread_mutex_lock(&l->mu);
    c->next = NULL;
    if (l->full_tail)
        l->full_tail->next = c;
    else
        l->full_head = c;
    l->full_tail = c;
    pthread_cond_signal(&l->cv_full);
    pthread_mutex_unlock(&l->mu);
}

/* Stop the writer thread after it wrote everything submitted; the first write error. */
static int writer_stop(struct outlog *l)
{
    pthread_mutex_lock(&l->mu);
    l->closing = true;
    pthread_cond_signal(&l->cv_full);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->tid, NULL);
    int rc = l->error;
    if (!l->csv) {
        int r = reqlog_writer_close(l->rw);
        if (r && !rc)
            rc = r;
    }
    l->rw = NULL;
    if (rc && outfile_write_error(&l->out))
        rc = -outfile_write_error(&l->out); /* the real reason: ENOSPC, not "I/O error" */
    return rc;
}

static void outlog_end(struct outlog *l)
{
    while (l->free_list) {
        struct outlog_chunk *c = l->free_list;
        l->free_list = c->next;
        chunk_free(c);
    }
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv_full);
    pthread_cond_destroy(&l->cv_free);
    outlog_free(l);
}

void outlog_abort(struct outlog *l)
{
    writer_stop(l);
    outfile_abort(&l->out);
    outlog_end(l);
}

int outlog_close(struct outlog *l, struct run_generator_cpu *cpu)
{
    int rc = writer_stop(l);
    *cpu = l->cpu;
    if (rc) {
        /* the log is not whole: what knee created goes, a special file stays as it is */
        outfile_abort(&l->out);
    } else {
        char why[512];
        rc = outfile_commit(&l->out, why, sizeof why);
    }
    outlog_end(l);
    return rc;
}
