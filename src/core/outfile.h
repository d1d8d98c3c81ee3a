/* Output destinations that knee never destroys. Every file knee writes on a user's request
 * (--out, --json, --hlog, -o, --html, --out-dir, lab --out ...) is opened through here, so one
 * rule holds everywhere: knee removes or replaces only what it created in this run.
 *
 * - "-" is standard output, written in place and never closed here.
 * - A path that does not exist, or an existing regular file (also through symlinks), is
 *   written to a new temporary file in the destination's directory (O_CREAT|O_EXCL, named
 *   ".NAME.knee-XXXXXX") that replaces the destination by rename() on commit. The old content
 *   stays whole until the output is complete; a failed or aborted output removes only the
 *   temporary file. A symlink stays a symlink: its final target is replaced. The new file
 *   gets the old file's permission bits (else 0666 & ~umask).
 * - Anything else (a character device such as /dev/null or /dev/full, a FIFO, a socket, a
 *   terminal, /dev/stdout) is opened for writing in place, never truncated, renamed over or
 *   unlinked.
 * - When the directory does not allow a temporary file but the existing regular file is
 *   writable, the file is written in place without O_TRUNC, and cut to the written length on
 *   commit: a failure before the first byte leaves it untouched.
 * - A directory, or a dangling symlink, is refused with the reason.
 *
 * Errors come back as -errno (or KNEE_EINVAL) with a one-line reason naming the path. */
#ifndef KNEE_CORE_OUTFILE_H
#define KNEE_CORE_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct outfile_sink;

enum outfile_kind {
    OUTFILE_STDOUT,  /* "-" */
    OUTFILE_RENAME,  /* a temporary file renamed over the destination on commit */
    OUTFILE_INPLACE, /* an existing regular file written in place (no room for a temporary) */
    OUTFILE_SPECIAL, /* a device, FIFO, socket or terminal: written in place, nothing else */
};

struct outfile {
    FILE *f;    /* write here (buffered); for OUTFILE_STDOUT this is stdout */
    int fd;     /* fileno(f) */
    char *path; /* as the user gave it */
    char *dest; /* the file that is replaced (a symlink's final target), or NULL */
    char *tmp;  /* OUTFILE_RENAME: the temporary file, or NULL once committed/removed */
    enum outfile_kind kind;
    struct outfile_sink *sink; /* behind f: remembers the first write error's errno */
};

/* Open path for writing as described above. On success o->f is ready; release it with
 * outfile_commit or outfile_abort. */
int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen);

/* Finish: flush, check every write (ferror), fsync a renamed file, close, and put it in
 * place. Returns 0, or -errno with the reason in err; on failure whatever knee created is
 * removed and the destination is as it was (see the header comment for in-place files). The
 * struct is released either way. */
int outfile_commit(struct outfile *o, char *err, size_t errlen);

/* Give up: close, remove the temporary file if there is one; the destination is untouched
 * (an in-place regular file keeps its old content only if nothing was written). Safe on a
 * zeroed or already released struct. */
void outfile_abort(struct outfile *o);

/* The errno of the first write through o->f that failed (0: none so far). For a message that
 * names the real reason ("No space left on device") when a writer above the FILE only knows
 * that a write failed. */
int outfile_write_error(const struct outfile *o);

/* True when path names a destination knee writes in place and never replaces ("-", devices,
 * FIFOs, sockets, terminals, through symlinks). */
bool outfile_is_special(const char *path);

#endif
