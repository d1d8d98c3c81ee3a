/* The summary's per-entry table of a targets file held as a table (record/entries.h): one row
 * per entry within 100 columns, the worst RUNREPORT_ENTRIES_ROWS first (most failed, then the
 * largest latency) and a line for the rest, or every entry in file order with --verbose. */
#include "runreport/internal.h"

#include "record/entries.h"

#include <inttypes.h>

/* The entry as the table names it: its name, else its method and URL without the scheme and
 * authority (every entry of a file shares one origin). */
static const char *entry_label(const struct run_entry *e, char *buf, size_t len)
{
    if (e->name && e->name[0]) {
        snprintf(buf, len, "%s", e->name);
        return buf;
    }
    const char *u = e->url ? e->url : "";
    const char *p = strstr(u, "://");
    if (p) {
        p = strchr(p + 3, '/');
        u = p ? p : "/";
    }
    snprintf(buf, len, "%s %s", e->method ? e->method : "", u);
    return buf;
}

/* The statuses of c, the most frequent first, as "404 ×90, 500 ×3" within width columns
 * ("+N" for the rest). */
static void codes_text(const struct run_entry_counts *c, char *buf, size_t len, size_t width)
{
    int order[RUN_ENTRY_CODES];
    int n = 0;
    for (int k = 0; k < RUN_ENTRY_CODES && c->code[k]; k++) {
        int j = n++;
        while (j > 0 && c->code_n[order[j - 1]] < c->code_n[k]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    size_t off = 0, cols = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        char num[32], one[48];
        int w = snprintf(one, sizeof one, "%s%u ×%s", i ? ", " : "", (unsigned)c->code[order[i]],
                         units_fmt_count(c->code_n[order[i]], num, sizeof num));
        size_t one_cols = (size_t)w - 1; /* × is two bytes, one column */
        int more = n - i + (c->code_other ? 1 : 0);
        if (cols + one_cols + (more > 1 ? 4 : 0) > width) {
            snprintf(buf + off, len - off, "%s+%d", i ? ", " : "", more);
            return;
        }
        off += (size_t)snprintf(buf + off, len - off, "%s", one);
        cols += one_cols;
    }
    if (c->code_other)
        snprintf(buf + off, len - off, "%sother", n ? ", " : "");
}

static void entry_row(FILE *out, const struct run_entry *e)
{
    const struct run_entry_counts *c = &e->c;
    char idx[24], f[5][24], codes[96], label[512], esc[1024];
    snprintf(idx, sizeof idx, "%" PRIu64, e->index);
    codes_text(c, codes, sizeof codes, 16);
    size_t ccols = 0; /* pad the codes to 16 columns (× counts one) */
    for (const char *p = codes; *p; p++)
        ccols += ((unsigned char)*p & 0xc0) != 0x80;
    bool done = record_entry_completed(c) > 0;
    fprintf(out, "  %6s %8s %8s %7s %8s %8s  %s%*s ", idx, units_fmt_count(record_entry_sent(c), f[0], 24),
            units_fmt_count(c->outcome[OUTCOME_OK], f[1], 24), units_fmt_count(record_entry_failed(c), f[2], 24),
            units_fmt_ms(record_entry_mean_ms(c), f[3], 24),
            units_fmt_ms(done ? (double)c->latency_max_ns / 1e6 : NAN, f[4], 24), codes,
            (int)(ccols < 16 ? 16 - ccols : 0), "");
    /* the label fills the row up to 100 columns: 2+6+1+8+1+8+1+7+1+8+1+8+2+16+1 = 71 */
    rr_esc(entry_label(e, label, sizeof label), esc, sizeof esc);
    size_t room = 100 - 71;
    if (strlen(esc) > room)
        fprintf(out, "%.*s...\n", (int)(room - 3), esc);
    else
        fprintf(out, "%s\n", esc);
}

void runreport_print_entries(FILE *out, const struct run_record *v, bool verbose)
{
    const struct run_entries *es = &v->entries;
    if (!es->n)
        return;
    bool all = verbose || es->n <= RUNREPORT_ENTRIES_ROWS;
    char n[32], m[32];
    units_fmt_count(es->n, n, sizeof n);
    if (all)
        fprintf(out, "\nentries of the targets file: %s, in file order; latency in ms\n", n);
    else
        fprintf(out, "\nentries of the targets file: %s, the %d worst (most failed, then max); latency in ms\n", n,
                RUNREPORT_ENTRIES_ROWS);
    fprintf(out, "  %6s %8s %8s %7s %8s %8s  %-16s %s\n", "#", "sent", "ok", "failed", "mean", "max", "codes", "entry");
    if (all) {
        for (size_t i = 0; i < es->n; i++)
            entry_row(out, &es->e[i]);
        return;
    }
    size_t *idx = xcalloc(es->n, sizeof *idx);
    record_entries_worst(es, idx);
    for (size_t i = 0; i < RUNREPORT_ENTRIES_ROWS; i++)
        entry_row(out, &es->e[idx[i]]);
    free(idx);
    fprintf(out, "  ... %s more (--verbose prints all; the JSON's \"entries\" has every one)\n",
            units_fmt_count(es->n - RUNREPORT_ENTRIES_ROWS, m, sizeof m));
}
