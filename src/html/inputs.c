/* From command-line inputs to runs: explicit `--run NAME=FILE[,FILE...]` specs, and positional
 * files or directories grouped by name (run.json and run.bin are one run, "run"). */
#include "html/internal.h"

#include "core/err.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const known_ext[] = {".json", ".bin", ".csv", ".hlog", ".log"};

static const char *known_extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash : path, '.');
    if (!dot)
        return NULL;
    for (size_t i = 0; i < sizeof known_ext / sizeof known_ext[0]; i++)
        if (strcmp(dot, known_ext[i]) == 0)
            return dot;
    return NULL;
}

struct group {
    char *stem;
    char **files;
    size_t n;
};

struct groups {
    struct group *g;
    size_t n;
};

static void group_add(struct groups *gs, const char *path)
{
    const char *ext = known_extension(path);
    size_t len = ext ? (size_t)(ext - path) : strlen(path);
    struct group *g = NULL;
    for (size_t i = 0; i < gs->n; i++)
        if (strlen(gs->g[i].stem) == len && strncmp(gs->g[i].stem, path, len) == 0)
            g = &gs->g[i];
    if (!g) {
        gs->g = xrealloc(gs->g, (gs->n + 1) * sizeof *gs->g);
        g = &gs->g[gs->n++];
        memset(g, 0, sizeof *g);
        g->stem = xmalloc(len + 1);
        memcpy(g->stem, path, len);
        g->stem[len] = '\0';
    }
    g->files = xrealloc(g->files, (g->n + 1) * sizeof *g->files);
    g->files[g->n++] = xstrdup(path);
}

static void groups_release(struct groups *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        for (size_t j = 0; j < gs->g[i].n; j++)
            free(gs->g[i].files[j]);
        free(gs->g[i].files);
        free(gs->g[i].stem);
    }
    free(gs->g);
}

/* Natural order: rep-2 before rep-10 (knee run --repeat numbers its files without padding). */
static int cmp_str(const void *a, const void *b)
{
    return strverscmp(*(const char *const *)a, *(const char *const *)b);
}

/* A directory's files with a known extension, in natural name order. */
static int add_dir(struct groups *gs, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return knee_fail(err, errlen, -errno, "%s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !known_extension(e->d_name))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = xmalloc(len);
        snprintf(p, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(p);
            continue;
        }
        names = xrealloc(names, (n + 1) * sizeof *names);
        names[n++] = p;
    }
    closedir(d);
    if (!n) {
        free(names);
        return knee_fail(err, errlen, KNEE_EEMPTY, "%s: no .json, .bin, .csv or .hlog files in this directory", dir);
    }
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        group_add(gs, names[i]);
        free(names[i]);
    }
    free(names);
    return 0;
}

/* Load files into a run named name, the JSON first (it says where the warm-up ends, which a
 * CSV needs). A JSON that is a document (knee compare, knee capacity, knee run --repeat's
 * summary) becomes a section of its own; the other files, if any, are the run. */
static int load_group(struct html_report *rep, const char *name, char *const *files, size_t n, char *err, size_t errlen)
{
    enum html_input_kind *kinds = xcalloc(n ? n : 1, sizeof *kinds);
    bool *doc = xcalloc(n ? n : 1, sizeof *doc);
    size_t nrun = 0;
    int r = 0;
    for (size_t i = 0; i < n && !r; i++) {
        r = html_detect_kind(files[i], &kinds[i], err, errlen);
        char schema[64];
        if (!r && kinds[i] == HTML_INPUT_JSON &&
            (r = html_json_schema(files[i], schema, sizeof schema, err, errlen)) == 0 && html_document_schema(schema)) {
            doc[i] = true;
            r = html_report_add_document(rep, name, files[i], err, errlen);
        }
        nrun += !doc[i];
    }
    struct html_run *run = !r && nrun ? html_report_add_run(rep, name) : NULL;
    static const enum html_input_kind order[] = {HTML_INPUT_JSON, HTML_INPUT_REQLOG, HTML_INPUT_CSV, HTML_INPUT_HLOG};
    for (size_t k = 0; run && k < 4 && !r; k++)
        for (size_t i = 0; i < n && !r; i++)
            if (kinds[i] == order[k] && !doc[i]) {
                switch (kinds[i]) {
                case HTML_INPUT_JSON:
                    r = html_run_load_json(run, files[i], err, errlen);
                    break;
                case HTML_INPUT_REQLOG:
                    r = html_run_load_reqlog(run, files[i], err, errlen);
                    break;
                case HTML_INPUT_CSV:
                    r = html_run_load_csv(run, files[i], err, errlen);
                    break;
                case HTML_INPUT_HLOG:
                    r = html_run_load_hlog(run, files[i], err, errlen);
                    break;
                }
            }
    free(doc);
    free(kinds);
    return r;
}

int html_report_add_inputs(struct html_report *rep, const char *const *specs, size_t nspecs, const char *const *paths,
                           size_t npaths, char *err, size_t errlen)
{
    int r = 0;
    for (size_t i = 0; i < nspecs && !r; i++) {
        const char *eq = strchr(specs[i], '=');
        if (!eq || eq == specs[i] || !eq[1])
            return knee_fail(err, errlen, KNEE_EINVAL, "--run '%s': expected NAME=FILE[,FILE...]", specs[i]);
        char *name = xmalloc((size_t)(eq - specs[i]) + 1);
        memcpy(name, specs[i], (size_t)(eq - specs[i]));
        name[eq - specs[i]] = '\0';
        char *list = xstrdup(eq + 1);
        char **files = NULL;
        size_t n = 0;
        for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            files = xrealloc(files, (n + 1) * sizeof *files);
            files[n++] = tok;
        }
        if (!n)
            r = knee_fail(err, errlen, KNEE_EINVAL, "--run '%s': no files", specs[i]);
        else
            r = load_group(rep, name, files, n, err, errlen);
        free(files);
        free(list);
        free(name);
    }
    if (r)
        return r;
    struct groups gs = {0};
    for (size_t i = 0; i < npaths && !r; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0)
            r = knee_fail(err, errlen, -errno, "%s: %s", paths[i], strerror(errno));
        else if (S_ISDIR(st.st_mode))
            r = add_dir(&gs, paths[i], err, errlen);
        else
            group_add(&gs, paths[i]);
    }
    for (size_t i = 0; i < gs.n && !r; i++) {
        /* the run's name: the file name without its extension, or the whole path when two
         * groups share a file name in different directories */
        const char *slash = strrchr(gs.g[i].stem, '/');
        const char *base = slash ? slash + 1 : gs.g[i].stem;
        bool clash = false;
        for (size_t j = 0; j < gs.n; j++) {
            const char *s2 = strrchr(gs.g[j].stem, '/');
            if (j != i && strcmp(s2 ? s2 + 1 : gs.g[j].stem, base) == 0)
                clash = true;
        }
        r = load_group(rep, clash ? gs.g[i].stem : base, gs.g[i].files, gs.g[i].n, err, errlen);
    }
    groups_release(&gs);
    return r;
}

/* The name of a document in memory: the kind its schema says. */
static const char *doc_name(const char *json, size_t len)
{
    if (memmem(json, len, "\"knee-compare/", 14))
        return "compare";
    if (memmem(json, len, "\"knee-capacity/", 15))
        return "capacity";
    return "document";
}

int html_write_report(const char *out_path, const struct html_write_opts *o, bool *output_failed, char *err,
                      size_t errlen)
{
    struct html_report *rep = html_report_new();
    html_report_set_service_time(rep, o->service_s);
    html_report_set_servers(rep, o->servers);
    if (output_failed)
        *output_failed = false;
    int r = 0;
    size_t nfiles = 0;
    while (o->files && o->files[nfiles])
        nfiles++;
    if (!o->name) {
        if (o->json)
            r = html_report_add_document_mem(rep, doc_name(o->json, o->json_len), o->json, o->json_len,
                                             "the command's JSON", err, errlen);
        if (!r && nfiles)
            r = html_report_add_inputs(rep, NULL, 0, o->files, nfiles, err, errlen);
    } else {
        bool doc = false;
        if (o->json) {
            /* a run's JSON goes with its files into one run; a document is a section */
            doc = !memmem(o->json, o->json_len, "\"knee-run/", 10);
            if (doc)
                r = html_report_add_document_mem(rep, o->name, o->json, o->json_len, "the command's JSON", err, errlen);
        }
        if (!r && (!doc || nfiles)) {
            struct html_run *run = html_report_add_run(rep, o->name);
            if (o->summary_text)
                html_run_set_summary_text(run, o->summary_text);
            if (o->json && !doc)
                r = html_run_load_json_mem(run, o->json, o->json_len, "the run's JSON", err, errlen);
            for (size_t i = 0; !r && i < nfiles; i++)
                r = html_run_load_file(run, o->files[i], err, errlen);
        }
    }
    if (!r) {
        r = html_report_write_file(rep, out_path, err, errlen);
        if (r && output_failed)
            *output_failed = true;
    }
    html_report_free(rep);
    return r;
}

int html_write_run_report(const char *out_path, const char *name, const char *json, size_t json_len,
                          const char *summary_text, const char *const *files, char *err, size_t errlen)
{
    struct html_write_opts o = {
        .name = name, .json = json, .json_len = json_len, .summary_text = summary_text, .files = files};
    return html_write_report(out_path, &o, NULL, err, errlen);
}
