/* One check for every command: no output is also an input, and no two outputs are one file.
 * A command lists the files it reads and the outputs it was asked for, then calls
 * cli_io_check before it opens any output; a refusal is exit 2 with nothing touched.
 *
 *   struct cli_io io = {.dir_exts = exts};       exts: what a directory input is read for
 *   cli_io_input(&io, NULL, "s0.json");          a positional input
 *   cli_io_input(&io, "--body", "req.json");     an input a flag names
 *   cli_io_output(&io, "--json", json_path);     NULL paths are ignored
 *   int code = cli_io_check(&io, &spec);         0, or 2 after "knee merge: --json s0.json: is also an input"
 *   cli_io_release(&io);
 *
 * Files are compared by device and inode where they exist (through symlinks and hard links),
 * never by the string: "./a.json" and "a.json" are one file. An output that does not exist
 * yet is no input; two such outputs are one file when their directories are one (device and
 * inode) and their names are equal. Standard output ("-") and the destinations knee writes in
 * place (devices, FIFOs: core/outfile) are never refused: nothing there is replaced. Private
 * to src/cli; not thread-safe. */
#ifndef KNEE_CLI_IO_CHECK_H
#define KNEE_CLI_IO_CHECK_H

#include <stddef.h>

#include "cli/opt.h"

struct cli_io_file {
    const char *flag; /* "--json", "-o"; NULL for a positional argument */
    const char *path; /* borrowed */
};

struct cli_io {
    /* A directory given as an input stands for its regular files with these extensions (".json";
     * NULL-terminated; names starting with '.' excluded), as the commands that read
     * directories read them. NULL: a directory input holds no input this check knows of. */
    const char *const *dir_exts;
    struct cli_io_file *in, *out;
    size_t nin, nout, cap_in, cap_out;
};

/* Add a file the command reads, or an output it writes (flag names it in messages). A NULL
 * path is ignored; the strings are borrowed. */
void cli_io_input(struct cli_io *io, const char *flag, const char *path);
void cli_io_output(struct cli_io *io, const char *flag, const char *path);

/* 0, or 2 after one line: "FLAG PATH: is also an input" (the input's flag added when it has
 * one: "(--body)"), or "FLAG2 PATH2: is also the FLAG1 output (one file for two outputs)". */
int cli_io_check(const struct cli_io *io, const struct cmd_spec *spec);

/* Free the lists ({0} after; safe twice). */
void cli_io_release(struct cli_io *io);

#endif
