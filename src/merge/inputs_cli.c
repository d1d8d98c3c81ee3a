/* Shard files given to knee stats and knee report: stats labels them (and refuses a shard given
 * twice, or shards of two plans, which would be counted as one run); report turns each whole
 * set into one run, merged exactly as knee merge merges it. */
#include "merge/internal.h"

#include "core/err.h"
#include "html/html.h"
#include "runreport/runreport.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The regular files among paths that are shards' outputs (directories and unreadable or
 * foreign files are left to the command). */
static size_t shard_files(const char *const *paths, size_t n, const char **out, struct merge_probe *probes)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        struct merge_probe p;
        char err[256];
        if (stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode) || merge_probe_file(paths[i], &p, err, sizeof err) != 0 ||
            !p.count || p.merged)
            continue;
        if (probes)
            probes[k] = p;
        out[k++] = paths[i];
    }
    return k;
}

int merge_label_inputs(const char *const *paths, size_t n, char *label, size_t len, char *err, size_t errlen)
{
    label[0] = '\0';
    const char **sp = xcalloc(n ? n : 1, sizeof *sp);
    size_t ns = shard_files(paths, n, sp, NULL);
    int r = 0;
    if (ns) {
        struct merge_set set;
        r = merge_set_build(&set, sp, ns, true, err, errlen);
        if (!r) {
            char desc[256];
            merge_set_describe(&set, desc, sizeof desc);
            snprintf(label, len, "inputs: %s%s", desc,
                     set.start_at_unix_ns
                         ? ": one time axis (the shared start instant)"
                         : ": each shard's times count from its own start, so per-second windows mix shards that "
                           "started apart (knee merge -o aligns them on the wall clock)");
            merge_set_release(&set);
            r = 1;
        }
    }
    free(sp);
    return r;
}

/* "shard-3" → "shard" (the name the shards share) */
static void common_stem(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    snprintf(buf, len, "%s", slash ? slash + 1 : path);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf)
        *dot = '\0';
    size_t k = strlen(buf);
    while (k && (strchr("0123456789", buf[k - 1]) || strchr("-_.", buf[k - 1])))
        buf[--k] = '\0';
    if (!k)
        snprintf(buf, len, "shards");
}

int merge_hlog_inputs(const char *const *paths, size_t n, FILE *out, struct merge_hlog_input *in, char *err,
                      size_t errlen)
{
    in->label[0] = in->name[0] = '\0';
    if (n < 2)
        return 0;
    const char **sp = xcalloc(n, sizeof *sp);
    struct merge_probe *pr = xcalloc(n, sizeof *pr);
    size_t ns = shard_files(paths, n, sp, pr);
    int r = 0;
    for (size_t i = 0; i < ns && !r; i++)
        if (pr[i].kind != MERGE_HLOG)
            r = knee_fail(err, errlen, KNEE_EINVAL,
                          "%s: a %s, not an hlog: give the shards' hlogs only (knee merge takes every kind)", sp[i],
                          merge_kind_name(pr[i].kind));
    free(sp);
    free(pr);
    if (r || !ns)
        return r;
    struct merge_set set;
    if ((r = merge_set_build(&set, paths, n, false, err, errlen)))
        return r;
    if (out)
        r = merge_hlogs(&set, out, err, errlen);
    if (!r) {
        char desc[256], stem[128];
        merge_set_describe(&set, desc, sizeof desc);
        snprintf(in->label, sizeof in->label,
                 "inputs: %s: their hlogs merged as knee merge --hlog merges them (each second's intervals summed "
                 "per tag, on the wall clock)",
                 desc);
        common_stem(set.shards[0].path[MERGE_HLOG], stem, sizeof stem);
        snprintf(in->name, sizeof in->name, "%s (%u shards merged)", stem, set.count);
        r = 1;
    }
    merge_set_release(&set);
    return r;
}

static int temp_path(char *buf, size_t len, const char *suffix)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, len, "%s/knee-merge-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    int fd = mkstemps(buf, (int)strlen(suffix));
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int one_run(struct html_report *rep, const struct merge_set *set, const char *first, char *err, size_t errlen)
{
    char stem[128], name[192], src[400];
    common_stem(first, stem, sizeof stem);
    snprintf(name, sizeof name, "%s (%u shards merged)", stem, set->count);
    struct html_run *run = html_report_add_run(rep, name);
    struct merge_summary m;
    bool have = false;
    int r = 0;
    if (set->have[MERGE_JSON]) {
        if ((r = merge_summary_build(&m, set, NULL, 0, err, errlen)))
            return r;
        have = true;
        if ((r = merge_summary_ticks_from_hlogs(&m, set, err, errlen)))
            goto out;
    }
    if (set->have[MERGE_LOG]) {
        char tmp[512];
        struct merge_log_stats st;
        if (temp_path(tmp, sizeof tmp, ".bin") != 0) {
            r = knee_fail(err, errlen, KNEE_EINVAL, "cannot create a temporary file for the merged log");
            goto out;
        }
        r = merge_logs(set, have ? &m : NULL, tmp, &st, err, errlen);
        if (!r)
            r = html_run_load_reqlog(run, tmp, err, errlen);
        unlink(tmp);
        if (r)
            goto out;
    } else if (set->have[MERGE_HLOG]) {
        char tmp[512];
        if (temp_path(tmp, sizeof tmp, ".hlog") != 0) {
            r = knee_fail(err, errlen, KNEE_EINVAL, "cannot create a temporary file for the merged hlog");
            goto out;
        }
        FILE *f = fopen(tmp, "w");
        r = f ? merge_hlogs(set, f, err, errlen) : knee_fail(err, errlen, KNEE_EINVAL, "%s: cannot write", tmp);
        if (f && fclose(f) != 0 && !r)
            r = knee_fail(err, errlen, KNEE_EINVAL, "%s: cannot write", tmp);
        if (!r)
            r = html_run_load_hlog(run, tmp, err, errlen);
        unlink(tmp);
        if (r)
            goto out;
    }
    if (have) {
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        record_write_json(mem, &m.res, true);
        fclose(mem);
        r = html_run_load_json_mem(run, buf, len, "the merged summary", err, errlen);
        free(buf);
    }
    char desc[256];
    merge_set_describe(set, desc, sizeof desc);
    snprintf(src, sizeof src, "%s, merged as knee merge merges them%s", desc,
             have && m.incomplete ? " (INCOMPLETE: a shard failed)" : "");
    html_run_add_source(run, src);
out:
    if (have)
        merge_summary_release(&m);
    return r;
}

int merge_report_runs(struct html_report *rep, const char *const *paths, size_t n, bool *used, char *err, size_t errlen)
{
    const char **sp = xcalloc(n ? n : 1, sizeof *sp);
    struct merge_probe *pr = xcalloc(n ? n : 1, sizeof *pr);
    size_t ns = shard_files(paths, n, sp, pr);
    bool *done = xcalloc(ns ? ns : 1, sizeof *done);
    const char **group = xcalloc(ns ? ns : 1, sizeof *group);
    int r = 0;
    for (size_t i = 0; i < ns && !r; i++) {
        if (done[i])
            continue;
        size_t g = 0;
        for (size_t j = i; j < ns; j++)
            if (!done[j] && pr[j].plan_id == pr[i].plan_id && pr[j].count == pr[i].count) {
                group[g++] = sp[j];
                done[j] = true;
            }
        struct merge_set set;
        if ((r = merge_set_build(&set, group, g, false, err, errlen)))
            break;
        r = one_run(rep, &set, group[0], err, errlen);
        merge_set_release(&set);
    }
    for (size_t i = 0; i < n; i++) {
        used[i] = false;
        for (size_t j = 0; j < ns; j++)
            used[i] |= paths[i] == sp[j];
    }
    free(sp);
    free(pr);
    free(done);
    free(group);
    return r;
}
