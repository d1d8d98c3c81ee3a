/* Output destinations that knee never destroys (see outfile.h for the rules). */
#include "core/outfile.h"

#include "core/err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void outfile_clear(struct outfile *o)
{
    free(o->sink);
    free(o->path);
    free(o->dest);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    o->fd = -1;
}

bool outfile_is_special(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0)
        return true;
    if (stat(path, &st) != 0)
        return false;
    return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* The directory part of path ("." when it has none) and the last component. */
static void split_path(const char *path, char **dir, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        *dir = xstrdup(".");
        *base = path;
    } else if (slash == path) {
        *dir = xstrdup("/");
        *base = slash + 1;
    } else {
        size_t n = (size_t)(slash - path);
        *dir = xmalloc(n + 1);
        memcpy(*dir, path, n);
        (*dir)[n] = '\0';
        *base = slash + 1;
    }
}

/* A new temporary file next to dest, created with O_EXCL (mkostemp), mode like the old file. */
static int make_temp(struct outfile *o, mode_t mode)
{
    char *dir;
    const char *base;
    split_path(o->dest, &dir, &base);
    size_t n = strlen(dir) + strlen(base) + 32;
    char *tmp = xmalloc(n);
    snprintf(tmp, n, "%s/.%s.knee-XXXXXX", dir, base);
    free(dir);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return -e;
    }
    (void)fchmod(fd, mode); /* on failure the file keeps mkostemp's 0600: ours, still safe */
    o->tmp = tmp;
    o->fd = fd;
    return 0;
}

/* The FILE's sink: write(2) in full, remembering the first error's errno, because stdio keeps
 * only an error flag and the user must read "No space left on device", not "I/O error". */
struct outfile_sink {
    int fd;
    int err;       /* the first write or close error's errno; 0 = none */
    off_t written; /* bytes written through the sink */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t len)
{
    struct outfile_sink *k = cookie;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(k->fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (!k->err)
                k->err = n < 0 ? errno : EIO;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)n;
        k->written += (off_t)n;
    }
    return (ssize_t)done;
}

static int sink_close(void *cookie)
{
    struct outfile_sink *k = cookie;
    int r = close(k->fd);
    if (r != 0 && !k->err)
        k->err = errno;
    /* the struct itself is freed by outfile_clear, which still reads err */
    return r;
}

static int attach_stream(struct outfile *o, char *err, size_t errlen)
{
    struct outfile_sink *k = xcalloc(1, sizeof *k);
    k->fd = o->fd;
    o->sink = k;
    cookie_io_functions_t io = {.write = sink_write, .close = sink_close};
    o->f = fopencookie(k, "w", io);
    if (!o->f) {
        int e = errno;
        close(o->fd);
        if (o->tmp)
            unlink(o->tmp);
        int code = knee_fail(err, errlen, -e, "%s: %s", o->path, strerror(e));
        outfile_clear(o);
        return code;
    }
    return 0;
}

int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (!path || !*path)
        return knee_fail(err, errlen, KNEE_EINVAL, "empty output path");
    o->path = xstrdup(path);
    if (strcmp(path, "-") == 0) {
        o->kind = OUTFILE_STDOUT;
        o->f = stdout;
        o->fd = STDOUT_FILENO;
        return 0;
    }

    struct stat lst, st;
    bool exists = lstat(path, &lst) == 0;
    if (!exists && errno != ENOENT) {
        int e = errno;
        outfile_clear(o);
        return knee_fail(err, errlen, -e, "%s: %s", path, strerror(e));
    }
    if (exists && stat(path, &st) != 0) {
        int e = errno;
        outfile_clear(o);
        if (e == ENOENT)
            return knee_fail(err, errlen, -e, "%s: a symlink to a file that does not exist (not followed)", path);
        return knee_fail(err, errlen, -e, "%s: %s", path, strerror(e));
    }
    if (exists && S_ISDIR(st.st_mode)) {
        outfile_clear(o);
        return knee_fail(err, errlen, -EISDIR, "%s: is a directory", path);
    }
    if (exists && !S_ISREG(st.st_mode)) {
        /* devices, FIFOs, sockets, terminals: in place, no O_TRUNC, never replaced */
        int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
            int e = errno;
            outfile_clear(o);
            return knee_fail(err, errlen, -e, "%s: %s", path, strerror(e));
        }
        o->kind = OUTFILE_SPECIAL;
        o->fd = fd;
        return attach_stream(o, err, errlen);
    }

    /* A regular file or a new one: the destination is the symlink's final target. */
    if (exists && S_ISLNK(lst.st_mode)) {
        char *real = realpath(path, NULL);
        if (!real) {
            int e = errno;
            outfile_clear(o);
            return knee_fail(err, errlen, -e, "%s: %s", path, strerror(e));
        }
        o->dest = real;
    } else {
        o->dest = xstrdup(path);
    }
    mode_t um = umask(0);
    umask(um);
    mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~um);
    int r = make_temp(o, mode);
    if (r == 0) {
        o->kind = OUTFILE_RENAME;
        return attach_stream(o, err, errlen);
    }
    if (exists && (r == -EACCES || r == -EPERM || r == -EROFS)) {
        /* no room for a temporary file beside it: write the existing file in place */
        int fd = open(o->dest, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
            o->kind = OUTFILE_INPLACE;
            o->fd = fd;
            return attach_stream(o, err, errlen);
        }
        r = -errno;
    }
    int code = knee_fail(err, errlen, r, "%s: %s", path, strerror(-r));
    outfile_clear(o);
    return code;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
    if (!o->f)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s: not open", o->path ? o->path : "output");
    int e = 0;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        e = o->sink && o->sink->err ? o->sink->err : errno ? errno : EIO;
    if (o->kind == OUTFILE_STDOUT) {
        int code = e ? knee_fail(err, errlen, -e, "%s: %s", "standard output", strerror(e)) : 0;
        clearerr(stdout);
        outfile_clear(o);
        return code;
    }
    if (!e && o->kind == OUTFILE_INPLACE && ftruncate(o->fd, o->sink->written) != 0)
        e = errno;
    if (!e && o->kind == OUTFILE_RENAME && fsync(o->fd) != 0)
        e = errno;
    if (fclose(o->f) != 0 && !e)
        e = o->sink->err ? o->sink->err : errno ? errno : EIO;
    o->f = NULL;
    if (!e && o->kind == OUTFILE_RENAME && rename(o->tmp, o->dest) != 0)
        e = errno;
    if (e && o->tmp)
        unlink(o->tmp);
    int code = e ? knee_fail(err, errlen, -e, "%s: %s", o->path, strerror(e)) : 0;
    outfile_clear(o);
    return code;
}

int outfile_write_error(const struct outfile *o)
{
    return o->sink ? o->sink->err : 0;
}

void outfile_abort(struct outfile *o)
{
    if (o->f && o->kind != OUTFILE_STDOUT)
        fclose(o->f);
    else if (o->f)
        fflush(o->f);
    if (o->tmp)
        unlink(o->tmp);
    outfile_clear(o);
}
