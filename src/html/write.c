/* The HTML document: the embedded uPlot and its licence, knee's CSS and chart script, the
 * summary blocks as plain text (readable without JavaScript and when printed), and the data
 * object in a <script type="application/json">. Nothing is loaded from anywhere at view time. */
#include "html/internal.h"

#include "core/err.h"
#include "core/outfile.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *html_chart_library_version(void)
{
    return html_asset_uplot_version;
}

static void html_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

/* The licence inside an HTML comment: "--" may not appear there. */
static void comment_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (s[0] == '-' && s[1] == '-')
            fputs("- ", out);
        else
            fputc(*s, out);
    }
}

/* A script's text may not contain "</script" (the JSON writer escapes '<'; the assets are
 * checked at build time, this is the belt to those braces). */
static void script_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (s[0] == '<' && s[1] == '/' && strncasecmp(s + 2, "script", 6) == 0)
            fputs("<\\/", out), s++;
        else
            fputc(*s, out);
    }
}

/* The responses by status after the warm-up, as a table under the summary (nothing when no
 * input has a status: a log of requests that all failed below HTTP, an older JSON). */
static void status_table(FILE *out, const struct html_run *run, size_t idx)
{
    uint64_t total = record_status_total(&run->status);
    if (!total)
        return;
    fprintf(out,
            "<table class=\"data status-codes\" id=\"status-%zu\"><caption>Responses by HTTP status, after the "
            "warm-up (from %s)</caption>\n<thead><tr><th>status</th><th>count</th><th>share</th></tr></thead>\n"
            "<tbody>\n",
            idx, run->json_status ? "the run's JSON" : "the per-request log");
    for (size_t k = 0; k < RUN_STATUS_SLOTS; k++) {
        if (!run->status.n[k])
            continue;
        int st = record_status_of_slot(k);
        char code[16];
        if (st < 0)
            snprintf(code, sizeof code, "other");
        else
            snprintf(code, sizeof code, "%d", st);
        bool bad = st < 200 || st > 399;
        fprintf(out, "<tr><td%s>%s</td><td>%llu</td><td>%.2f%%</td></tr>\n", bad ? " class=\"bad\"" : "", code,
                (unsigned long long)run->status.n[k], 100.0 * (double)run->status.n[k] / (double)total);
    }
    fputs("</tbody></table>\n", out);
}

/* The per-entry tables of a targets file (the run JSON's "entries"): one row per entry, the worst
 * first (most failed, then the largest latency max), at most HTML_ENTRIES_ROWS of them, each with
 * a bar of its failed share; nothing without entries. */
#define HTML_ENTRIES_ROWS 200
static void entries_table(FILE *out, const struct html_run *run, size_t idx)
{
    const struct run_entries *es = &run->entries;
    if (!es->n)
        return;
    size_t *order = xcalloc(es->n, sizeof *order);
    record_entries_worst(es, order);
    size_t shown = es->n < HTML_ENTRIES_ROWS ? es->n : HTML_ENTRIES_ROWS;
    fprintf(out,
            "<table class=\"data entries\" id=\"entries-%zu\"><caption>Per entry of the targets file, the worst "
            "first (most failed, then the largest max): %zu of %zu%s</caption>\n<thead><tr><th>#</th><th>entry</th>"
            "<th>target</th><th>sent</th><th>ok</th><th>failed</th><th>failed share</th><th>status codes</th>"
            "<th>mean ms</th><th>max ms</th></tr></thead>\n<tbody>\n",
            idx, shown, es->n, shown < es->n ? " (the JSON's \"entries\" has every one)" : "");
    for (size_t r = 0; r < shown; r++) {
        const struct run_entry *e = &es->e[order[r]];
        const struct run_entry_counts *c = &e->c;
        uint64_t sent = record_entry_sent(c), failed = record_entry_failed(c);
        double share = sent ? 100.0 * (double)failed / (double)sent : 0;
        fprintf(out, "<tr><td>%llu</td><td>", (unsigned long long)e->index);
        if (e->name) {
            html_text(out, e->name);
            fputs(": ", out);
        }
        html_text(out, e->method ? e->method : "");
        fputc(' ', out);
        html_text(out, e->url ? e->url : "");
        fputs("</td><td>", out);
        html_text(out, e->target ? e->target : "");
        fprintf(out,
                "</td><td>%llu</td><td>%llu</td><td%s>%llu</td><td><span class=\"bar\" style=\"display:inline-block;"
                "height:0.8em;background:#c0392b;width:%.1fpx\"></span> %.1f%%</td><td>",
                (unsigned long long)sent, (unsigned long long)c->outcome[OUTCOME_OK], failed ? " class=\"bad\"" : "",
                (unsigned long long)failed, share, share);
        for (int k = 0; k < RUN_ENTRY_CODES && c->code[k]; k++)
            fprintf(out, "%s%u \u00d7%llu", k ? ", " : "", (unsigned)c->code[k], (unsigned long long)c->code_n[k]);
        if (c->code_other)
            fprintf(out, "%sother \u00d7%llu", c->code[0] ? ", " : "", (unsigned long long)c->code_other);
        double mean = record_entry_mean_ms(c);
        if (isnan(mean))
            fputs("</td><td>-</td><td>-</td></tr>\n", out);
        else
            fprintf(out, "</td><td>%.3f</td><td>%.3f</td></tr>\n", mean, (double)c->latency_max_ns / 1e6);
    }
    fputs("</tbody></table>\n", out);
    free(order);
}

static void run_static(FILE *out, const struct html_run *run, size_t idx)
{
    fprintf(out, "<section class=\"run\" id=\"run-%zu\">\n<h2>", idx);
    html_text(out, run->name);
    fputs("</h2>\n<ul class=\"sources\">\n", out);
    for (size_t i = 0; i < run->nsources; i++) {
        fputs("<li>", out);
        html_text(out, run->sources[i]);
        fputs("</li>\n", out);
    }
    fputs("</ul>\n", out);
    if (run->summary_text) {
        fputs("<p class=\"origin\">summary: ", out);
        html_text(out, run->summary_origin ? run->summary_origin : "");
        fputs("</p>\n", out);
        fprintf(out, "<pre class=\"summary\" id=\"summary-%zu\">", idx);
        html_text(out, run->summary_text);
        fputs("</pre>\n", out);
    }
    status_table(out, run, idx);
    entries_table(out, run, idx);
    if (run->nnotes) {
        fputs("<ul class=\"notes\">\n", out);
        for (size_t i = 0; i < run->nnotes; i++) {
            fputs("<li>", out);
            html_text(out, run->notes[i]);
            fputs("</li>\n", out);
        }
        fputs("</ul>\n", out);
    }
    fputs("</section>\n", out);
}

/* A document's section: its title, source, and its verdict and sentences as the document
 * words them (readable without JavaScript); the page adds the tables and charts into
 * #doc-charts-N. */
static void doc_static(FILE *out, const struct html_doc *d, size_t idx)
{
    fprintf(out, "<section class=\"doc\" id=\"doc-%zu\">\n<h2>", idx);
    html_text(out, d->name);
    fputs("</h2>\n<ul class=\"sources\">\n<li>", out);
    html_text(out, d->source);
    fputs("</li>\n</ul>\n", out);
    const char *verdict = json_string_value(json_object_get(d->root, "verdict"));
    if (verdict) {
        fprintf(out, "<p class=\"verdict\" id=\"doc-verdict-%zu\">verdict: ", idx);
        html_text(out, verdict);
        fputs("</p>\n", out);
    }
    const json_t *lines = json_object_get(d->root, d->kind == HTML_DOC_CAPACITY ? "reasons" : "warnings");
    if (json_array_size(lines)) {
        fputs("<ul class=\"notes\">\n", out);
        for (size_t i = 0; i < json_array_size(lines); i++) {
            const char *t = json_string_value(json_array_get(lines, i));
            fputs("<li>", out);
            html_text(out, t ? t : "");
            fputs("</li>\n", out);
        }
        fputs("</ul>\n", out);
    }
    fprintf(out, "<div class=\"doc-charts\" id=\"doc-charts-%zu\"></div>\n</section>\n", idx);
}

/* "2 runs", "1 comparison, 3 runs" */
static void contents(FILE *out, const struct html_report *rep)
{
    static const char *const what[][2] = {{"comparison", "comparisons"},
                                          {"capacity search", "capacity searches"},
                                          {"repetition summary", "repetition summaries"}};
    size_t n[3] = {0};
    for (size_t i = 0; i < rep->ndocs; i++)
        n[rep->docs[i]->kind]++;
    bool first = true;
    for (int k = 0; k < 3; k++)
        if (n[k]) {
            fprintf(out, "%s%zu %s", first ? "" : ", ", n[k], what[k][n[k] != 1]);
            first = false;
        }
    if (rep->nruns || first)
        fprintf(out, "%s%zu run%s", first ? "" : ", ", rep->nruns, rep->nruns == 1 ? "" : "s");
}

int html_report_write(struct html_report *rep, FILE *out, char *err, size_t errlen)
{
    if (!rep->nruns && !rep->ndocs)
        return knee_fail(err, errlen, KNEE_EINVAL, "no runs to report");
    for (size_t i = 0; i < rep->nruns; i++) {
        struct html_run *run = rep->runs[i];
        if (!run->summary_text && (run->have_requests || run->have_hlog)) {
            run->summary_text = html_summary_from_model(run);
            free(run->summary_origin);
            run->summary_origin = xstrdup(
                run->have_hlog ? "from the hlog's histograms (no run JSON given: the plan, rates, accounting and "
                                 "warnings are in the JSON only)"
                               : "from the per-request log (no run JSON given: the plan, the rates' window, "
                                 "connections, server timing and warnings are in the JSON only)");
        }
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", out);
    fputs("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n", out);
    fprintf(out, "<meta name=\"generator\" content=\"knee %s\">\n<title>knee report: ", KNEE_VERSION);
    for (size_t i = 0; i < rep->ndocs + rep->nruns; i++) {
        if (i)
            fputs(", ", out);
        html_text(out, i < rep->ndocs ? rep->docs[i]->name : rep->runs[i - rep->ndocs]->name);
    }
    fputs("</title>\n<!--\n", out);
    fprintf(out,
            "knee report, written by knee %s: one self-contained file (no network at view time).\n"
            "It embeds uPlot %s (https://github.com/leeoniya/uPlot, npm package uplot), whose licence follows:\n\n",
            KNEE_VERSION, html_asset_uplot_version);
    comment_text(out, HTML_ASSET(html_asset_uplot_license));
    fputs("\n-->\n<style>\n", out);
    fputs(HTML_ASSET(html_asset_uplot_css), out);
    fputs("\n</style>\n<style>\n", out);
    fputs(HTML_ASSET(html_asset_report_css), out);
    fputs("\n</style>\n</head>\n<body>\n<header>\n<h1>knee report</h1>\n", out);
    fputs("<p class=\"meta\">", out);
    contents(out, rep);
    fprintf(out,
            " &middot; written by knee %s &middot; charts drawn by uPlot %s, embedded "
            "&middot; drag on a chart to zoom, double-click to reset, click a legend entry to toggle a series</p>\n",
            KNEE_VERSION, html_asset_uplot_version);
    fputs(
        "<noscript><p class=\"note\">The charts need JavaScript; the summaries below are plain text.</p></noscript>\n",
        out);
    fputs("</header>\n<main>\n<div class=\"documents\" id=\"documents\">\n", out);
    for (size_t i = 0; i < rep->ndocs; i++)
        doc_static(out, rep->docs[i], i);
    fputs("</div>\n<div class=\"runs\" id=\"runs\">\n", out);
    for (size_t i = 0; i < rep->nruns; i++)
        run_static(out, rep->runs[i], i);
    fputs("</div>\n<div id=\"charts\"></div>\n<div id=\"knee-status\" data-state=\"loading\"></div>\n</main>\n", out);
    fputs("<script type=\"application/json\" id=\"knee-data\">", out);
    html_write_data(out, rep);
    fputs("</script>\n<script>\n", out);
    script_text(out, HTML_ASSET(html_asset_uplot_js));
    fputs("\n</script>\n<script>\n", out);
    script_text(out, HTML_ASSET(html_asset_report_js));
    fputs("\n</script>\n</body>\n</html>\n", out);
    if (fflush(out) != 0 || ferror(out))
        return knee_fail(err, errlen, -EIO, "write error");
    return 0;
}

int html_report_write_file(struct html_report *rep, const char *path, char *err, size_t errlen)
{
    struct outfile of;
    char why[512] = "";
    int r = outfile_open(&of, path, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "%s", why);
    r = html_report_write(rep, of.f, why, sizeof why);
    if (r) {
        int e = outfile_write_error(&of);
        outfile_abort(&of);
        return knee_fail(err, errlen, e ? -e : r, "%s: %s", path, e ? strerror(e) : why);
    }
    if (of.kind == OUTFILE_STDOUT) {
        bool bad = fflush(stdout) != 0 || ferror(stdout);
        outfile_abort(&of);
        return bad ? knee_fail(err, errlen, -EIO, "%s: write error", path) : 0;
    }
    r = outfile_commit(&of, why, sizeof why);
    return r ? knee_fail(err, errlen, r, "%s", why) : 0;
}
