/* Per-entry outcome tables of a targets file held as a table (record/entries.h): before the run,
 * the file's entries labelled (method, URL, name, the target each counts for) and every load
 * thread given an array of counters indexed by the entry's place in the file (account.c counts
 * into its own, without a lock); after it, the arrays added up into the record. A streamed file
 * (more than VARIANT_TABLE_MAX entries, or standard input) keeps no per-entry counts (its memory
 * stays bounded): the record says so in a note, and knee stats --by entry reads them from the
 * per-request log. */
#include "load/internal.h"
#include "load/variant_internal.h"

#include "core/err.h"
#include "core/units.h"

#include <stdlib.h>
#include <string.h>

/* The targets file whose entries are counted: the first target's source that is a file held as a
 * table (a file whose entries have names is one source per name, every one over the same file). */
static const struct variant_source *table_file(const struct engine *e, bool *streamed)
{
    const struct variant_source *found = NULL;
    *streamed = false;
    for (size_t i = 0; i < e->nt; i++) {
        const struct variant_source *s = e->targets[i].target->source;
        if (!s || !s->o.targets_path)
            continue;
        if (!s->table)
            *streamed = true;
        else if (!found)
            found = s;
    }
    return *streamed ? NULL : found;
}

/* Label entries [0, n) from the file read again (it was read and checked once already). */
static int label_entries(const struct variant_source *s, struct run_entries *es, char *err, size_t errlen)
{
    char why[1024];
    struct wl_reader *rd;
    if (wl_reader_open(&rd, s->o.targets_path, s->o.format, why, sizeof why) != 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--targets: %s", why);
    wl_reader_checked(rd);
    struct wl_entry we;
    int r;
    while ((r = wl_reader_next(rd, &we, why, sizeof why)) == 0 && we.index < es->n) {
        struct run_entry *x = &es->e[we.index];
        x->index = we.index;
        x->method = xstrdup(we.method ? we.method : "GET");
        x->url = xstrdup(we.url ? we.url : "");
        x->name = we.name ? xstrdup(we.name) : NULL;
    }
    wl_reader_close(rd);
    if (r != 0 && r != WL_END)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s", why);
    for (size_t i = 0; i < es->n; i++) /* an entry the file no longer has (changed under the run) */
        if (!es->e[i].method) {
            es->e[i].index = i;
            es->e[i].method = xstrdup("");
            es->e[i].url = xstrdup("");
        }
    return 0;
}

int entries_prepare(struct engine *e, char *err, size_t errlen)
{
    bool streamed;
    const struct variant_source *file = table_file(e, &streamed);
    e->ent_streamed = streamed;
    if (!file)
        return 0;
    uint64_t n = 0;
    for (size_t i = 0; i < e->nt; i++) {
        const struct variant_source *s = e->targets[i].target->source;
        if (!s || !s->table || !s->o.targets_path || strcmp(s->o.targets_path, file->o.targets_path) != 0)
            continue;
        e->targets[i].entries = true;
        for (size_t k = 0; k < s->nrows; k++)
            if (s->rows[k].index + 1 > n)
                n = s->rows[k].index + 1;
    }
    struct run_entries *es = &e->ents;
    es->n = (size_t)n;
    es->e = xcalloc(es->n, sizeof *es->e);
    for (size_t i = 0; i < e->nt; i++) {
        const struct variant_source *s = e->targets[i].target->source;
        if (!e->targets[i].entries)
            continue;
        for (size_t k = 0; k < s->nrows; k++)
            if (!es->e[s->rows[k].index].target)
                es->e[s->rows[k].index].target = xstrdup(e->targets[i].target->name);
    }
    int rc = label_entries(file, es, err, errlen);
    if (rc)
        return rc;
    es->hash = record_entries_hash(es);
    e->nent = es->n;
    return 0;
}

void entries_release(struct engine *e)
{
    record_entries_release(&e->ents);
}

void entries_collect(struct engine *e, struct run_record *res)
{
    if (e->ent_streamed) {
        char n[32];
        warn_add(&res->warnings, false,
                 "no per-entry table: the targets file was streamed (more than %s entries, or standard input); "
                 "knee stats --by entry gives it from the --out log",
                 units_fmt_count(VARIANT_TABLE_MAX, n, sizeof n));
    }
    if (!e->nent)
        return;
    record_entries_copy(&res->entries, &e->ents);
    for (uint32_t k = 0; k < e->nworkers; k++) {
        const struct worker *w = &e->workers[k];
        if (!w->ent)
            continue;
        for (size_t i = 0; i < e->nent; i++)
            record_entry_counts_add(&res->entries.e[i].c, &w->ent[i]);
    }
}
