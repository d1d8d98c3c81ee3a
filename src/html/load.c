/* knee report's file inputs: knee's binary request log, its per-request CSV and HdrHistogram
 * interval logs, streamed once into the model (the run JSON is json.c). Every error names the
 * file and the line or record. */
#include "html/internal.h"

#include "core/err.h"
#include "csv/csv.h"
#include "hlog/hlog.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *html_input_kind_name(enum html_input_kind k)
{
    switch (k) {
    case HTML_INPUT_REQLOG:
        return "binary log";
    case HTML_INPUT_CSV:
        return "CSV";
    case HTML_INPUT_HLOG:
        return "hlog";
    case HTML_INPUT_JSON:
        return "JSON";
    }
    return "?";
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int html_detect_kind(const char *path, enum html_input_kind *kind, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return knee_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
    char head[512];
    size_t n = fread(head, 1, sizeof head - 1, f);
    int rerr = ferror(f) ? -EIO : 0;
    fclose(f);
    if (rerr)
        return knee_fail(err, errlen, rerr, "%s: read error", path);
    head[n] = '\0';
    if (n == 0)
        return knee_fail(err, errlen, KNEE_EEMPTY, "%s: the file is empty", path);
    if (reqlog_is_log(head, n)) {
        *kind = HTML_INPUT_REQLOG;
        return 0;
    }
    size_t i = 0;
    if (n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0)
        i = 3;
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    if (i < n && head[i] == '{') {
        *kind = HTML_INPUT_JSON;
        return 0;
    }
    const char *first_nl = strchr(head, '\n');
    size_t line1 = first_nl ? (size_t)(first_nl - head) : n;
    if (ends_with(path, ".hlog") || strncmp(head + i, "#[", 2) == 0 ||
        strncmp(head + i, "\"StartTimestamp\"", 16) == 0 || (memmem(head, line1, ",HISTF", 6) != NULL)) {
        *kind = HTML_INPUT_HLOG;
        return 0;
    }
    *kind = HTML_INPUT_CSV;
    return 0;
}

static int claim(struct html_run *run, enum html_input_kind k, const char *path, char *err, size_t errlen)
{
    char **slot = k == HTML_INPUT_JSON ? &run->json_path : k == HTML_INPUT_HLOG ? &run->hlog_path : &run->log_path;
    if (*slot)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: run '%s' already has a %s input (%s): one of each kind per run",
                         path, run->name,
                         k == HTML_INPUT_JSON   ? "JSON"
                         : k == HTML_INPUT_HLOG ? "hlog"
                                                : "per-request log",
                         *slot);
    *slot = xstrdup(path);
    return 0;
}

static void add_source(struct html_run *run, const char *path, const char *kind, uint64_t n, const char *what)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "%s (%s, %llu %s)", path, kind, (unsigned long long)n, what);
    html_run_add_source(run, buf);
}

/* ---- binary request log ---------------------------------------------------------------------- */

int html_run_load_reqlog(struct html_run *run, const char *path, char *err, size_t errlen)
{
    int r = claim(run, HTML_INPUT_REQLOG, path, err, errlen);
    if (r)
        return r;
    struct reqlog_reader *rd;
    char why[512];
    r = reqlog_reader_open(&rd, path, why, sizeof why);
    if (r)
        return knee_fail(err, errlen, r, "%s: %s", path, why);
    size_t nt = reqlog_reader_ntargets(rd);
    const char **names = xcalloc(nt ? nt : 1, sizeof *names);
    for (size_t i = 0; i < nt; i++)
        names[i] = reqlog_reader_target(rd, i);
    r = html_run_begin_requests(run, names, nt, reqlog_reader_closed_loop(rd));
    free(names);
    if (r) {
        reqlog_reader_close(rd);
        return knee_fail(err, errlen, r, "%s: duplicate target names, or the run already has requests", path);
    }
    if (reqlog_reader_closed_loop(rd))
        run->closed_loop = 1;
    struct reqlog_record rec;
    uint64_t n = 0;
    while ((r = reqlog_read(rd, &rec)) == 1) {
        struct html_request rq;
        html_request_from_reqlog(&rec, &rq);
        if (rq.lag_ns < -1 || rq.latency_ns < -1 || rq.service_ns < -1 || rq.ttfb_ns < -1) {
            r = knee_fail(err, errlen, KNEE_EFORMAT, "%s: record %llu: a time before the planned send (corrupt log)",
                          path, (unsigned long long)reqlog_reader_record_index(rd));
            reqlog_reader_close(rd);
            return r;
        }
        if (html_run_add_request(run, &rq) != 0) {
            r = knee_fail(err, errlen, KNEE_ERANGE, "%s: record %llu: a time out of range (corrupt log)", path,
                          (unsigned long long)reqlog_reader_record_index(rd));
            reqlog_reader_close(rd);
            return r;
        }
        n++;
    }
    if (r < 0) {
        r = knee_fail(err, errlen, r, "%s: %s", path, reqlog_reader_error(rd));
        reqlog_reader_close(rd);
        return r;
    }
    reqlog_reader_close(rd);
    add_source(run, path, "binary log", n, "records");
    return 0;
}

/* ---- CSV ------------------------------------------------------------------------------------ */

enum { C_SERVER, C_START, C_LATENCY, C_SERVICE, C_TTFB, C_LAG, C_OUTCOME, C_STATUS, C_N };
static const char *const csv_cols[C_N] = {"server",  "start_s", "latency_ms", "service_ms",
                                          "ttfb_ms", "lag_ms",  "outcome",    "status"};

/* The status cell: empty is none (0); else an integer 1 .. 999 (the log's range). */
static int cell_status(const struct csv_record *rec, long col, const char *path, uint16_t *out, char *err,
                       size_t errlen)
{
    *out = 0;
    if (col < 0 || (size_t)col >= rec->n || rec->len[col] == 0)
        return 0;
    char *end;
    long v = strtol(rec->field[col], &end, 10);
    if (*end || end == rec->field[col] || v < 0 || v > 999)
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s:%llu: status: '%s' is not an HTTP status", path,
                         (unsigned long long)rec->line, rec->field[col]);
    *out = (uint16_t)v;
    return 0;
}

/* A cell in ms (or s for start_s) as integer ns; -1 when empty. */
static int cell_ns(const struct csv_record *rec, long col, double scale, const char *path, int64_t *out, char *err,
                   size_t errlen, const char *name)
{
    *out = -1;
    if (col < 0 || (size_t)col >= rec->n || rec->len[col] == 0)
        return 0;
    double v;
    int r = csv_parse_double(rec->field[col], rec->len[col], &v);
    if (r || !(v >= 0) || v * scale > (double)HTML_MAX_NS)
        return knee_fail(err, errlen, r ? r : KNEE_ERANGE, "%s:%llu: %s: '%s' %s", path, (unsigned long long)rec->line,
                         name, rec->field[col],
                         r       ? "is not a number"
                         : v < 0 ? "is negative (a duration cannot be)"
                                 : "is out of range");
    *out = (int64_t)llround(v * scale);
    return 0;
}

int html_run_load_csv(struct html_run *run, const char *path, char *err, size_t errlen)
{
    int r = claim(run, HTML_INPUT_CSV, path, err, errlen);
    if (r)
        return r;
    if (run->have_requests || run->have_hlog)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: run '%s' already has per-request data", path, run->name);
    struct csv_reader *cr;
    r = csv_reader_open(&cr, path, NULL);
    if (r)
        return knee_fail(err, errlen, r, "%s: %s", path, knee_strerror(r));
    struct csv_record rec;
    r = csv_next(cr, &rec);
    if (r <= 0) {
        r = r ? knee_fail(err, errlen, r, "%s:%llu: %s", path, (unsigned long long)csv_reader_line(cr),
                          csv_reader_error(cr))
              : knee_fail(err, errlen, KNEE_EEMPTY, "%s: the file is empty", path);
        csv_reader_close(cr);
        return r;
    }
    long col[C_N];
    for (int c = 0; c < C_N; c++) {
        col[c] = -1;
        for (size_t i = 0; i < rec.n; i++)
            if (strcmp(rec.field[i], csv_cols[c]) == 0)
                col[c] = (long)i;
    }
    if (col[C_START] < 0 || col[C_LATENCY] < 0) {
        csv_reader_close(cr);
        return knee_fail(err, errlen, KNEE_EFORMAT,
                         "%s:1: needs the columns start_s and latency_ms (knee run --out x.csv)", path);
    }
    run->have_requests = true;
    if (col[C_OUTCOME] < 0)
        html_run_note(run,
                      "%s has no outcome column: every row with a latency is counted as ok, every row without "
                      "one as dropped",
                      path);
    bool warm_known = isfinite(run->warmup_s);
    int64_t warm_end_ns = warm_known ? (int64_t)llround(run->warmup_s * 1e9) : 0;
    if (!warm_known)
        html_run_note(run,
                      "%s: a CSV has no warm-up flag, so every row is in the statistics; give the run's JSON too "
                      "(the same name, .json) to leave the warm-up out",
                      path);
    uint64_t n = 0;
    bool row_error = false; /* a cell was bad (err says which); else the reader failed */
    size_t last_target = SIZE_MAX;
    char last_name[256] = "";
    while ((r = csv_next(cr, &rec)) == 1) {
        struct html_request rq;
        const char *server = col[C_SERVER] >= 0 && (size_t)col[C_SERVER] < rec.n ? rec.field[col[C_SERVER]] : "all";
        if (last_target == SIZE_MAX || strcmp(server, last_name) != 0) {
            last_target = html_run_target(run, server);
            snprintf(last_name, sizeof last_name, "%s", server);
        }
        rq.target = (uint32_t)last_target;
        int64_t lag;
        if ((r = cell_ns(&rec, col[C_START], 1e9, path, &rq.planned_ns, err, errlen, csv_cols[C_START])) ||
            (r = cell_ns(&rec, col[C_LATENCY], 1e6, path, &rq.latency_ns, err, errlen, csv_cols[C_LATENCY])) ||
            (r = cell_ns(&rec, col[C_SERVICE], 1e6, path, &rq.service_ns, err, errlen, csv_cols[C_SERVICE])) ||
            (r = cell_ns(&rec, col[C_TTFB], 1e6, path, &rq.ttfb_ns, err, errlen, csv_cols[C_TTFB])) ||
            (r = cell_ns(&rec, col[C_LAG], 1e6, path, &lag, err, errlen, csv_cols[C_LAG]))) {
            row_error = true;
            break;
        }
        if (rq.planned_ns < 0) {
            r = knee_fail(err, errlen, KNEE_EFORMAT, "%s:%llu: start_s is empty", path, (unsigned long long)rec.line);
            row_error = true;
            break;
        }
        rq.lag_ns = lag;
        if (col[C_OUTCOME] >= 0 && (size_t)col[C_OUTCOME] < rec.n) {
            enum reqlog_outcome o;
            if (!reqlog_outcome_parse(rec.field[col[C_OUTCOME]], rec.len[col[C_OUTCOME]], &o)) {
                r = knee_fail(err, errlen, KNEE_EFORMAT, "%s:%llu: outcome: '%s' is not one of knee's outcomes", path,
                              (unsigned long long)rec.line, rec.field[col[C_OUTCOME]]);
                row_error = true;
                break;
            }
            rq.outcome = (uint8_t)o;
        } else {
            rq.outcome = rq.latency_ns >= 0 ? OUTCOME_OK : OUTCOME_DROPPED;
        }
        if (col[C_LAG] < 0 && rq.outcome != OUTCOME_DROPPED)
            rq.lag_ns = rq.service_ns >= 0 && rq.latency_ns >= rq.service_ns ? rq.latency_ns - rq.service_ns : 0;
        if ((r = cell_status(&rec, col[C_STATUS], path, &rq.status, err, errlen))) {
            row_error = true;
            break;
        }
        rq.warmup = warm_known && rq.planned_ns < warm_end_ns;
        if (html_run_add_request(run, &rq) != 0) {
            r = knee_fail(err, errlen, KNEE_ERANGE, "%s:%llu: a time out of range", path, (unsigned long long)rec.line);
            row_error = true;
            break;
        }
        n++;
    }
    if (r < 0) {
        if (!row_error)
            knee_fail(err, errlen, r, "%s:%llu: %s", path, (unsigned long long)csv_reader_line(cr),
                      csv_reader_error(cr));
        csv_reader_close(cr);
        return r;
    }
    csv_reader_close(cr);
    add_source(run, path, "CSV", n, "rows");
    return 0;
}

/* ---- hlog ------------------------------------------------------------------------------------ */

int html_run_load_hlog(struct html_run *run, const char *path, char *err, size_t errlen)
{
    int r = claim(run, HTML_INPUT_HLOG, path, err, errlen);
    if (r)
        return r;
    if (run->have_requests) {
        html_run_note(run, "%s not used: the per-request log holds every request the hlog summarises", path);
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (!f)
        return knee_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
    struct hlog_reader *hr = hlog_reader_new(f, path);
    struct hlog_entry e;
    struct hdr h;
    memset(&h, 0, sizeof h);
    bool ready = false;
    uint64_t n = 0, nstream = 0;
    while ((r = hlog_reader_next(hr, &e)) == 1) {
        /* knee run --stream writes each target's first-event and event-gap histograms beside
         * its latency under prefixed tags: they are not targets (nor requests) */
        if (e.tagged && hlog_tag_kind(e.tag, NULL) != HLOG_TAG_LATENCY) {
            nstream++;
            continue;
        }
        r = hlog_reader_decode_reuse(hr, &e, &h, &ready);
        if (r)
            break;
        char why[400];
        r = html_run_add_interval(run, e.tagged ? e.tag : "(untagged)", e.offset_s, e.length_s, &h, why, sizeof why);
        if (r) {
            /* the reader has no message for this one: say which line */
            knee_fail(err, errlen, r, "%s:%zu: %s", path, e.line, why);
            break;
        }
        n++;
    }
    if (r < 0 && hlog_reader_error(hr)[0])
        knee_fail(err, errlen, r, "%s", hlog_reader_error(hr));
    if (ready)
        hdr_release(&h);
    hlog_reader_free(hr);
    fclose(f);
    if (r < 0)
        return r;
    if (n == 0)
        return knee_fail(err, errlen, KNEE_EEMPTY, "%s: no intervals", path);
    run->have_hlog = true;
    add_source(run, path, "hlog", n, "intervals");
    if (nstream)
        html_run_note(run,
                      "%s: %llu intervals of streamed-response histograms (" HLOG_TAG_FIRST_EVENT
                      "*, " HLOG_TAG_EVENT_GAP "*) are not targets: give the run JSON to chart them",
                      path, (unsigned long long)nstream);
    return 0;
}

int html_run_load_file(struct html_run *run, const char *path, char *err, size_t errlen)
{
    enum html_input_kind k;
    int r = html_detect_kind(path, &k, err, errlen);
    if (r)
        return r;
    switch (k) {
    case HTML_INPUT_REQLOG:
        return html_run_load_reqlog(run, path, err, errlen);
    case HTML_INPUT_CSV:
        return html_run_load_csv(run, path, err, errlen);
    case HTML_INPUT_HLOG:
        return html_run_load_hlog(run, path, err, errlen);
    case HTML_INPUT_JSON:
        return html_run_load_json(run, path, err, errlen);
    }
    return KNEE_EINVAL;
}
