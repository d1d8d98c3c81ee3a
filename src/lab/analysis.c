/* The lab's analysis and printing helpers: a round's `knee stats` report (src/analyze over
 * the round's sorted request log), the compact summary table, and the wrapped sentences of
 * "what this run shows". The statistics come from src/analyze, src/stats and src/hist. */
#include "lab/internal.h"

#include "analyze/dataset.h"
#include "analyze/report.h"
#include "core/err.h"
#include "core/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void lab_heading(FILE *out, const char *fmt, ...)
{
    va_list ap;
    fputs("\n== ", out);
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

const char *lab_holds(bool ok)
{
    return ok ? "holds" : "DOES NOT HOLD";
}

void lab_print_table_head(FILE *out, const char *indent)
{
    fprintf(out, "%s%-8s%8s%9s%9s%9s%9s%9s%9s%9s%9s\n", indent, "", "count", "mean", "stdev", "p50", "p90", "p95",
            "p99", "p99.9", "max");
}

void lab_print_table_row(FILE *out, const char *indent, const char *name, const struct summary *s)
{
    char b[9][32];
    fprintf(out, "%s%-8s%8zu%9s%9s%9s%9s%9s%9s%9s%9s\n", indent, name, s->count, units_fmt_fixed(s->mean, 1, b[0], 32),
            units_fmt_fixed(s->stdev, 1, b[1], 32), units_fmt_fixed(s->p50, 1, b[2], 32),
            units_fmt_fixed(s->p90, 1, b[3], 32), units_fmt_fixed(s->p95, 1, b[4], 32),
            units_fmt_fixed(s->p99, 1, b[5], 32), units_fmt_fixed(s->p999, 1, b[6], 32),
            units_fmt_fixed(s->max, 1, b[7], 32));
}

int lab_report_build(struct lab_ctx *c, const struct lab_round *rd, const char *column, const char *title,
                     struct lab_report *lr)
{
    memset(lr, 0, sizeof *lr);
    /* The ok requests only: a rejection or an error is a different population (knee stats
     * --where outcome=ok). The log's warm-up flags leave the warm-up out. */
    static const struct where ok_only = {.col = "outcome", .value = "ok", .negate = false};
    struct load_opts lo = {
        .column = column,
        .by = NULL,
        .time = NULL,
        .skip_s = -INFINITY,
        .until_s = INFINITY,
        .where = &ok_only,
        .nwhere = 1,
        .first_bound = 1.0,
        .under = LAB_UNDER_MS,
    };
    int rc = dataset_init(&lr->d, &lo);
    if (rc) {
        fprintf(c->err, "knee lab: round %s: %s\n", rd->name, knee_strerror(rc));
        return rc;
    }
    lr->d_init = true;
    if ((rc = dataset_load(&lr->d, rd->log_path)) != 0) {
        fprintf(c->err, "knee lab: round %s: %s\n", rd->name, lr->d.err);
        return rc;
    }
    if (lr->d.kept == 0) {
        fprintf(c->err, "knee lab: round %s: no ok request to analyse\n", rd->name);
        return KNEE_EEMPTY;
    }
    dataset_finish(&lr->d);
    struct report_opts ro = {.under = LAB_UNDER_MS};
    rc = report_build(&lr->rep, &lr->d, &ro);
    lr->rep_init = true;
    if (rc) {
        fprintf(c->err, "knee lab: round %s: %s\n", rd->name, knee_strerror(rc));
        return rc;
    }
    /* The report's title names its input files; a temporary log's path means nothing to a
     * reader, so the title names the round instead (the files array is only borrowed). */
    lr->label[0] = (char *)title;
    lr->rep.files = lr->label;
    lr->rep.nfiles = 1;
    return 0;
}

void lab_report_release(struct lab_report *lr)
{
    if (lr->rep_init)
        report_release(&lr->rep);
    if (lr->d_init)
        dataset_release(&lr->d);
    lr->rep_init = lr->d_init = false;
}

const struct group_result *lab_report_group(const struct report *rep, const char *name)
{
    for (size_t i = 0; i < rep->ng; i++)
        if (strcmp(rep->groups[i].name, name) == 0)
            return &rep->groups[i];
    return NULL;
}

/* ---- sentences ---- */

void lab_say_add(struct lab_say *s, const char *fmt, ...)
{
    if (s->n >= sizeof s->buf - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(s->buf + s->n, sizeof s->buf - s->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        s->n = s->n + (size_t)k < sizeof s->buf ? s->n + (size_t)k : sizeof s->buf - 1;
}

void lab_say_end(struct lab_say *s, FILE *out)
{
    /* "- " then words, wrapped at LAB_SAY_WIDTH columns, continuation lines indented. */
    const char *p = s->buf;
    size_t col = 0;
    fputs("- ", out);
    col = 2;
    bool first = true;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        size_t len = (size_t)(e - p), w = units_text_width(p, len);
        if (!len)
            break;
        if (!first && col + 1 + w > LAB_SAY_WIDTH) {
            fputs("\n  ", out);
            col = 2;
        } else if (!first) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, len, out);
        col += w;
        first = false;
        p = e;
    }
    fputc('\n', out);
    s->n = 0;
    s->buf[0] = '\0';
}

void lab_say_verdict(struct lab_say *s, FILE *out, bool cond, const char *if_true, const char *if_false)
{
    lab_say_add(s, "%s", cond ? if_true : if_false);
    lab_say_end(s, out);
}

/* ---- a round's validity ---- */

void lab_validity_of(const struct run_record *res, struct lab_validity *v)
{
    memset(v, 0, sizeof *v);
    v->gen_cpu_share = record_generator_cpu_share(&res->env.gen_cpu);
    v->gen_cpu_over = v->gen_cpu_share > RUN_GENERATOR_CPU_BUDGET;
    v->generator_limited = res->generator_limited;
    if (!v->generator_limited)
        return;
    const char *w = NULL;
    for (size_t i = 0; i < res->warnings.n && !w; i++)
        if (strstr(res->warnings.items[i], "GENERATOR-LIMITED"))
            w = res->warnings.items[i];
    if (!w && res->warnings.n)
        w = res->warnings.items[0];
    snprintf(v->warning, sizeof v->warning, "%s",
             w ? w : "GENERATOR-LIMITED: the generator, not the service, shaped this run");
}

void lab_print_round_warnings(FILE *out, const char *indent, const char *round, const struct run_record *res)
{
    if (res->generator_limited)
        fprintf(out,
                "%s! %s is GENERATOR-LIMITED (knee run's verdict, below): knee could not keep to its plan, so its "
                "latencies measure knee's delay as much as the servers'; no conclusion about the servers is drawn from "
                "it\n",
                indent, round);
    lab_print_generator_cpu(out, indent, round, &res->env.gen_cpu);
    for (size_t i = 0; i < res->warnings.n; i++)
        if (strncmp(res->warnings.items[i], "warm-up:", 8) != 0)
            fprintf(out, "%s! %s\n", indent, res->warnings.items[i]);
}

void lab_print_generator_cpu(FILE *out, const char *indent, const char *round, const struct run_generator_cpu *gc)
{
    double share = record_generator_cpu_share(gc);
    if (isnan(share))
        return;
    if (share > RUN_GENERATOR_CPU_BUDGET)
        fprintf(out,
                "%s! %s: knee's own threads took %.1f%% of one core (%.2f s of CPU in %.1f s), over the lab's %.0f%% "
                "budget: the servers in this process had that much less of the machine; the round stands (knee run "
                "judges the sends, and latency is timed from the plan), but the servers' own times may be stretched\n",
                indent, round, 100 * share, gc->user_s + gc->sys_s, gc->wall_s, 100 * RUN_GENERATOR_CPU_BUDGET);
    else
        fprintf(out, "%sgenerator CPU: knee's own threads took %.1f%% of one core over %s (budget %.0f%%)\n", indent,
                100 * share, round, 100 * RUN_GENERATOR_CPU_BUDGET);
}

void lab_cpu_note(struct lab_ctx *c, const char *round, const struct run_record *res)
{
    double share = record_generator_cpu_share(&res->env.gen_cpu);
    if (isnan(share))
        return;
    if (c->gen_n == 0 || share > c->gen_max) {
        c->gen_max = share;
        snprintf(c->gen_max_round, sizeof c->gen_max_round, "%s", round);
    }
    if (c->gen_n == 0 || share < c->gen_min)
        c->gen_min = share;
    c->gen_n++;
    if (share > RUN_GENERATOR_CPU_BUDGET) {
        size_t n = strlen(c->gen_over_rounds);
        if (n + strlen(round) + 8 < sizeof c->gen_over_rounds)
            snprintf(c->gen_over_rounds + n, sizeof c->gen_over_rounds - n, "%s%s %.1f%%", n ? ", " : "", round,
                     100 * share);
        else if (n + 6 < sizeof c->gen_over_rounds && !strstr(c->gen_over_rounds, ", ..."))
            snprintf(c->gen_over_rounds + n, sizeof c->gen_over_rounds - n, ", ...");
        c->gen_over++;
    }
}

void lab_print_cpu_summary(FILE *out, const struct lab_ctx *c)
{
    if (!c->gen_n)
        return;
    fprintf(out,
            "  generator CPU: knee's own threads took %.1f%% to %.1f%% of one core per round over %zu round%s (most: "
            "%s); %zu round%s over the lab's %.0f%% budget\n",
            100 * c->gen_min, 100 * c->gen_max, c->gen_n, c->gen_n == 1 ? "" : "s", c->gen_max_round, c->gen_over,
            c->gen_over == 1 ? "" : "s", 100 * RUN_GENERATOR_CPU_BUDGET);
    if (c->gen_over)
        fprintf(out,
                "  ! over the budget: %s — the servers in this process had that much less of the machine; those "
                "rounds stand (knee run judges the sends), but the servers' own times may be stretched\n",
                c->gen_over_rounds);
}

bool lab_say_invalid(struct lab_say *s, const struct lab_validity *v, const char *what)
{
    if (!v->generator_limited)
        return false;
    lab_say_add(s, "%s was GENERATOR-LIMITED (knee run's verdict, printed with the round)", what);
    return true;
}

const char *lab_change(char *buf, size_t len, double from, double to)
{
    if (!isfinite(from) || !isfinite(to) || from == 0) {
        snprintf(buf, len, "-");
        return buf;
    }
    double ratio = to / from, pct = 100 * (ratio - 1);
    if (fabs(pct) < 0.5)
        snprintf(buf, len, "±0%% (%.2f×)", ratio);
    else if (pct < 0)
        snprintf(buf, len, "−%.0f%% (%.2f×)", -pct, ratio);
    else
        snprintf(buf, len, "+%.0f%% (%.2f×)", pct, ratio);
    return buf;
}
