/* Outputs against inputs and against each other, by device and inode (see io_check.h). A
 * string comparison would miss "./a.json" against "a.json", a symlink or a hard link, and the
 * file an output names is the one core/outfile replaces: a symlink's final target. */
#include "cli/io_check.h"

#include "core/err.h"
#include "core/grow.h"
#include "core/outfile.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void add(struct cli_io_file **v, size_t *n, size_t *cap, const char *flag, const char *path)
{
    if (!path)
        return;
    *v = grow_array(*v, cap, *n + 1, sizeof **v, 8);
    (*v)[(*n)++] = (struct cli_io_file){flag, path};
}

void cli_io_input(struct cli_io *io, const char *flag, const char *path)
{
    add(&io->in, &io->nin, &io->cap_in, flag, path);
}

void cli_io_output(struct cli_io *io, const char *flag, const char *path)
{
    add(&io->out, &io->nout, &io->cap_out, flag, path);
}

void cli_io_release(struct cli_io *io)
{
    free(io->in);
    free(io->out);
    io->in = io->out = NULL;
    io->nin = io->nout = io->cap_in = io->cap_out = 0;
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Where an output lands: the file when it exists; else its directory and its name. */
struct landing {
    bool exists, dir_known;
    struct stat st; /* the file, or its directory */
    const char *name;
};

static void landing_of(const char *path, struct landing *l)
{
    memset(l, 0, sizeof *l);
    if (stat(path, &l->st) == 0) {
        l->exists = true;
        return;
    }
    const char *slash = strrchr(path, '/');
    l->name = slash ? slash + 1 : path;
    char dir[4096];
    size_t len = slash ? (size_t)(slash - path) : 0;
    if (len >= sizeof dir)
        return;
    if (slash && len == 0)
        snprintf(dir, sizeof dir, "/");
    else if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)len, path);
    l->dir_known = stat(dir, &l->st) == 0;
}

static bool same_landing(const struct landing *a, const char *pa, const struct landing *b, const char *pb)
{
    if (a->exists != b->exists)
        return false;
    if (a->exists)
        return same_inode(&a->st, &b->st);
    if (a->dir_known && b->dir_known)
        return same_inode(&a->st, &b->st) && strcmp(a->name, b->name) == 0;
    return strcmp(pa, pb) == 0;
}

static bool has_ext(const char *name, const char *const *exts)
{
    size_t n = strlen(name);
    for (size_t i = 0; exts[i]; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcmp(name + n - e, exts[i]) == 0)
            return true;
    }
    return false;
}

/* True when the existing file st is one of the files dir is read for. */
static bool in_dir(const char *dir, const char *const *exts, const struct stat *st)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *de;
    while (!found && (de = readdir(d))) {
        if (de->d_name[0] == '.' || !has_ext(de->d_name, exts))
            continue;
        char p[8192];
        struct stat s;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        found = stat(p, &s) == 0 && S_ISREG(s.st_mode) && same_inode(&s, st);
    }
    closedir(d);
    return found;
}

/* The input the existing output st is, or NULL. */
static const struct cli_io_file *input_of(const struct cli_io *io, const struct stat *st)
{
    for (size_t i = 0; i < io->nin; i++) {
        struct stat s;
        if (stat(io->in[i].path, &s) != 0)
            continue;
        if (same_inode(&s, st))
            return &io->in[i];
        if (S_ISDIR(s.st_mode) && io->dir_exts && in_dir(io->in[i].path, io->dir_exts, st))
            return &io->in[i];
    }
    return NULL;
}

int cli_io_check(const struct cli_io *io, const struct cmd_spec *spec)
{
    struct landing *l = xcalloc(io->nout ? io->nout : 1, sizeof *l);
    int code = 0;
    for (size_t k = 0; k < io->nout && !code; k++) {
        const struct cli_io_file *o = &io->out[k];
        if (strcmp(o->path, "-") == 0 || outfile_is_special(o->path))
            continue; /* written in place, nothing replaced */
        landing_of(o->path, &l[k]);
        const struct cli_io_file *in = l[k].exists ? input_of(io, &l[k].st) : NULL;
        if (in && in->flag)
            code = opt_fail(spec, "%s %s: is also an input (%s)", o->flag, o->path, in->flag);
        else if (in)
            code = opt_fail(spec, "%s %s: is also an input", o->flag, o->path);
        for (size_t j = 0; j < k && !code; j++) {
            const struct cli_io_file *p = &io->out[j];
            if (strcmp(p->path, "-") != 0 && !outfile_is_special(p->path) &&
                same_landing(&l[k], o->path, &l[j], p->path))
                code = opt_fail(spec, "%s %s: is also the %s output (one file for two outputs)", o->flag, o->path,
                                p->flag);
        }
    }
    free(l);
    return code;
}
