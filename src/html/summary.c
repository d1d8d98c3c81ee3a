/* The summary block of the report. With the run's JSON it is knee run's terminal summary,
 * printed by runreport's one printer from the run's record (json.c, record_read_json).
 * Without one, this file says what a per-request log or an hlog can back — the accounting
 * identities and the latency tables, laid out by the same printer's pieces — and nothing
 * more. */
#include "html/internal.h"

#include "core/err.h"
#include "runreport/runreport.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A target of the model as the printer's pieces take it: a record's target with counts and
 * statistics (no histograms). */
static void view_of(const struct html_target *t, struct run_target_result *v)
{
    memset(v, 0, sizeof *v);
    v->counts.planned = t->planned;
    v->counts.sent = t->sent;
    v->counts.dropped = t->outcome[OUTCOME_DROPPED];
    v->warmup_counts.planned = t->warm_planned;
    v->warmup_counts.sent = t->warm_sent;
    v->warmup_counts.dropped = t->warm_outcome[OUTCOME_DROPPED];
    for (int o = 0; o < OUTCOME_COUNT; o++) {
        v->counts.outcome[o] = t->outcome[o];
        v->warmup_counts.outcome[o] = t->warm_outcome[o];
    }
    record_summary_of(&t->latency, &v->sum.latency_all);
    for (int g = 0; g < HTML_GROUPS && g < RUN_GROUP_COUNT; g++)
        record_summary_of(&t->group[g], &v->sum.latency[g]);
    record_summary_of(&t->service, &v->sum.service);
    record_summary_of(&t->ttfb, &v->sum.ttfb);
    record_summary_of(&t->lag, &v->sum.lag);
    record_summary_of(NULL, &v->sum.connect);
}

/* The targets of a run summed into one (histograms of one layout add exactly). */
static void sum_targets(const struct html_run *run, struct html_target *all)
{
    memset(all, 0, sizeof *all);
    struct hdr *const dst[] = {&all->latency,  &all->group[0], &all->group[1], &all->group[2], &all->group[3],
                               &all->group[4], &all->group[5], &all->service,  &all->ttfb,     &all->lag};
    for (size_t i = 0; i < run->ntargets; i++) {
        const struct html_target *t = &run->targets[i];
        const struct hdr *const src[] = {&t->latency,  &t->group[0], &t->group[1], &t->group[2], &t->group[3],
                                         &t->group[4], &t->group[5], &t->service,  &t->ttfb,     &t->lag};
        for (size_t k = 0; k < sizeof dst / sizeof dst[0]; k++) {
            if (!src[k]->counts)
                continue;
            if (!dst[k]->counts && hdr_init(dst[k], src[k]->lowest, src[k]->highest, src[k]->sig_digits))
                knee_oom();
            hdr_add(dst[k], src[k]);
        }
        all->planned += t->planned;
        all->sent += t->sent;
        all->warm_planned += t->warm_planned;
        all->warm_sent += t->warm_sent;
        for (int o = 0; o < OUTCOME_COUNT; o++) {
            all->outcome[o] += t->outcome[o];
            all->warm_outcome[o] += t->warm_outcome[o];
        }
    }
}

static void release_sum(struct html_target *all)
{
    hdr_release(&all->latency);
    for (int g = 0; g < HTML_GROUPS; g++)
        hdr_release(&all->group[g]);
    hdr_release(&all->service);
    hdr_release(&all->ttfb);
    hdr_release(&all->lag);
}

static void mrequests(FILE *out, const struct html_run *run, const struct run_target_result *all)
{
    bool warm = run->nwarm > 0;
    fprintf(out, "requests%s\n", warm ? " (planned after the warm-up)" : "");
    runreport_print_accounting(out, &all->counts, "  ");
    if (warm) {
        fprintf(out, "  warm-up (not in the statistics below):\n");
        runreport_print_accounting(out, &all->warmup_counts, "    ");
    }
}

/* hlog: one latency table, a row per tag and the tags together. */
static void hlog_summary(FILE *out, const struct html_run *run)
{
    fprintf(out, "latency (ms) per tag, from the hlog's HdrHistograms (interval as the writer recorded it; knee run "
                 "--hlog: T5 - T0 in an open loop)\n");
    runreport_print_table_header(out);
    struct hdr sum;
    memset(&sum, 0, sizeof sum);
    bool ok = true;
    struct run_summary s;
    for (size_t i = 0; i < run->ntargets; i++) {
        const struct hdr *h = &run->targets[i].latency;
        if (!h->counts)
            continue;
        char label[13];
        snprintf(label, sizeof label, "%.12s", run->targets[i].name);
        record_summary_of(h, &s);
        runreport_print_table_row(out, label, &s);
        if (!sum.counts && hdr_init(&sum, h->lowest, h->highest, h->sig_digits))
            knee_oom();
        ok &= hdr_add(&sum, h) == 0;
    }
    if (run->ntargets > 1 && ok) {
        record_summary_of(&sum, &s);
        runreport_print_table_row(out, "all", &s);
    }
    hdr_release(&sum);
    fprintf(out, "percentiles: HdrHistogram (value at rank ceil(p*n))\n");
}

char *html_summary_from_model(const struct html_run *run)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        knee_oom();
    if (run->have_hlog) {
        hlog_summary(out, run);
    } else {
        bool open_loop = run->closed_loop != 1;
        struct html_target all;
        sum_targets(run, &all);
        struct run_target_result *v = xcalloc(1, sizeof *v);
        view_of(&all, v);
        mrequests(out, run, v);
        runreport_print_latency_tables(out, open_loop, v);
        if (run->ntargets > 1)
            for (size_t i = 0; i < run->ntargets; i++) {
                const struct html_target *t = &run->targets[i];
                view_of(t, v);
                char n[256];
                knee_escape(n, sizeof n, t->name, strlen(t->name));
                fprintf(out, "\n--- target %s\n", n);
                runreport_print_accounting(out, &v->counts, "  ");
                runreport_print_latency_tables(out, open_loop, v);
            }
        fprintf(out, "percentiles: HdrHistogram, 3 significant digits (value at rank ceil(p*n))\n");
        free(v);
        release_sum(&all);
    }
    fclose(out);
    return buf;
}
