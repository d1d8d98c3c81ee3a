/* knee run's output files: --json and --hlog opened before the run (so a bad path is exit 2
 * before any request), written after it (a failed write is reported and is exit 1), through
 * core/outfile (never destroying what knee did not create). */
#include "cli/run_output.h"

#include "core/clock.h"
#include "core/err.h"
#include "cli/run_print.h"
#include "html/html.h"
#include "record/record.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 when path can be written (an existing file writable, else its directory), or -errno. */
static int writable(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return -EISDIR;
    if (access(path, F_OK) == 0)
        return access(path, W_OK) == 0 ? 0 : -errno;
    char *copy = xstrdup(path);
    int r = access(dirname(copy), W_OK | X_OK) == 0 ? 0 : -errno;
    free(copy);
    return r;
}

static int check_tags(const struct cmd_spec *spec, const struct run_config *cfg)
{
    for (size_t i = 0; i < cfg->plan.ntargets; i++)
        if (!hlog_tag_valid(cfg->plan.targets[i].name))
            return opt_fail(spec, "--hlog: target name '%s' cannot be an hlog tag (no ',', spaces or tabs)",
                            cfg->plan.targets[i].name);
    return 0;
}

int cli_output_check(const struct cli_output *o, const struct cmd_spec *spec, const struct run_config *cfg)
{
    int r;
    if (o->json_path && strcmp(o->json_path, "-") != 0 && (r = writable(o->json_path)))
        return opt_fail(spec, "--json %s: %s", o->json_path, knee_strerror(r));
    if (cfg->out_path && (r = writable(cfg->out_path)))
        return opt_fail(spec, "--out %s: %s", cfg->out_path, knee_strerror(r));
    if (o->html_path && strcmp(o->html_path, "-") == 0)
        return opt_fail(spec, "--html -: the report needs a file (stdout carries the summary)");
    if (o->html_path && (r = writable(o->html_path)))
        return opt_fail(spec, "--html %s: %s", o->html_path, knee_strerror(r));
    if (o->hlog_path) {
        if (check_tags(spec, cfg))
            return 2;
        if ((r = writable(o->hlog_path)))
            return opt_fail(spec, "--hlog %s: %s", o->hlog_path, knee_strerror(r));
    }
    return 0;
}

/* --hlog: each second's merged latency histogram of each target becomes one interval,
 * tagged with the target's name; the first write error is kept and reported at the end. */
static void on_interval(void *ctx, size_t target, double start_s, double length_s, const struct hdr *latency)
{
    struct cli_output *o = ctx;
    if (o->hlog_err)
        return;
    o->hlog_err = hlog_writer_write(o->hlog, o->targets[target].name, start_s, length_s, latency);
}

/* --hlog with --stream: a target's second of streamed events adds an interval of its first
 * events ("first_event/NAME") and one of its gaps ("event_gap/NAME"), each when it has any. */
static void on_stream_interval(void *ctx, size_t target, double start_s, double length_s, const struct run_stream *st)
{
    struct cli_output *o = ctx;
    const struct hdr *h[2] = {&st->first_event, &st->event_gap};
    const char *prefix[2] = {HLOG_TAG_FIRST_EVENT, HLOG_TAG_EVENT_GAP};
    for (int k = 0; k < 2 && !o->hlog_err; k++) {
        if (!h[k]->counts || !h[k]->total_count)
            continue;
        char tag[HLOG_TAG_MAX + 1];
        snprintf(tag, sizeof tag, "%s%s", prefix[k], o->targets[target].name);
        o->hlog_err = hlog_writer_write(o->hlog, tag, start_s, length_s, h[k]);
    }
}

int cli_output_open(struct cli_output *o, const struct cmd_spec *spec, struct run_config *cfg)
{
    char why[512];
    o->targets = cfg->plan.targets;
    int w;
    /* --out is opened by the engine when the run starts; a path it cannot open is bad input
     * (2) as for the other outputs, found before any request */
    if (cfg->out_path && (w = writable(cfg->out_path)))
        return opt_fail(spec, "--out %s: %s", cfg->out_path, knee_strerror(w));
    if (o->html_path) { /* checked now, written at the end (html_write_report) */
        struct cli_output html_only = {.html_path = o->html_path};
        struct run_config none = {0};
        if (cli_output_check(&html_only, spec, &none))
            return 2;
    }
    if (o->json_path) {
        if (outfile_open(&o->json, o->json_path, why, sizeof why))
            return opt_fail(spec, "--json %s", why);
        o->json_open = true;
    }
    if (!o->hlog_path)
        return 0;
    if (check_tags(spec, cfg)) {
        cli_output_abort(o);
        return 2;
    }
    if (outfile_open(&o->hlog_file, o->hlog_path, why, sizeof why)) {
        opt_fail(spec, "--hlog %s", why);
        cli_output_abort(o);
        return 2;
    }
    o->hlog_open = true;
    char comment[160]; /* --shard: the header names the shard; --start-at: StartTime is the instant (t0) */
    uint64_t start_ns = cli_shard_hlog_comment(cfg, comment, sizeof comment);
    int r = hlog_writer_open(&o->hlog, o->hlog_file.f, (double)(start_ns ? start_ns : clock_wall_ns()) / 1e9,
                             comment[0] ? comment : NULL);
    if (r) {
        opt_fail(spec, "--hlog %s: %s", o->hlog_path, knee_strerror(r));
        cli_output_abort(o);
        return 2;
    }
    cfg->on_interval = on_interval;
    cfg->interval_ctx = o;
    cfg->on_stream_interval = on_stream_interval;
    cfg->stream_interval_ctx = o;
    return 0;
}

/* The reason of a failed write through an outfile: the first write's errno when it is known
 * (ENOSPC rather than "I/O error"), else the hlog writer's own code. */
static int write_error(const struct outfile *f, int fallback)
{
    int e = outfile_write_error(f);
    return e ? -e : fallback;
}

bool cli_output_close_hlog(struct cli_output *o)
{
    if (!o->hlog_open)
        return true;
    int r = hlog_writer_close(o->hlog);
    o->hlog = NULL;
    if (!o->hlog_err && r)
        o->hlog_err = r;
    o->hlog_open = false;
    char why[512];
    if (o->hlog_err) {
        int e = write_error(&o->hlog_file, o->hlog_err);
        outfile_abort(&o->hlog_file);
        knee_report(stderr, "knee run: ", "--hlog %s: %s", o->hlog_path, knee_strerror(e));
        return false;
    }
    if (outfile_commit(&o->hlog_file, why, sizeof why)) {
        knee_report(stderr, "knee run: ", "--hlog %s", why);
        return false;
    }
    return true;
}

bool cli_output_json(struct cli_output *o, const struct run_record *res)
{
    if (!o->json_open)
        return true;
    record_write_json(o->json.f, res, true);
    o->json_open = false;
    char why[512];
    if (outfile_commit(&o->json, why, sizeof why)) {
        knee_report(stderr, "knee run: ", "--json %s", why);
        return false;
    }
    return true;
}

bool cli_output_html(const struct cli_output *o, const struct run_config *cfg, const struct run_record *res)
{
    if (!o->html_path)
        return true;
    char *json = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&json, &len);
    if (!mem)
        knee_oom();
    record_write_json(mem, res, false);
    fclose(mem);
    /* every request when the log was written whole, else the hlog's histograms */
    const char *files[2] = {NULL, NULL};
    if (cfg->out_path && !res->out_error && !outfile_is_special(cfg->out_path))
        files[0] = cfg->out_path;
    else if (o->hlog_path && !o->hlog_err && !outfile_is_special(o->hlog_path))
        files[0] = o->hlog_path;
    struct html_write_opts h = {.name = "run", .json = json, .json_len = len, .files = files};
    char err[1024];
    int r = html_write_report(o->html_path, &h, NULL, err, sizeof err);
    free(json);
    if (r)
        knee_report(stderr, "knee run: ", "--html %s", err);
    return r == 0;
}

void cli_output_abort(struct cli_output *o)
{
    if (o->json_open)
        outfile_abort(&o->json);
    o->json_open = false;
    if (o->hlog)
        hlog_writer_close(o->hlog);
    o->hlog = NULL;
    if (o->hlog_open)
        outfile_abort(&o->hlog_file);
    o->hlog_open = false;
}
