/* A temporary directory for a unit program's files (tests/unit/test_analyze.c, test_html.c,
 * test_reqlog.c): made by the group setup, removed with everything in it by the group
 * teardown, so programs running side by side never share a file. Test code, header-only; one
 * directory per program, named in tmpdir. */
#ifndef KNEE_TESTS_FIXTURE_TMPDIR_H
#define KNEE_TESTS_FIXTURE_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[] = "/tmp/knee-test-XXXXXX";

/* The group setup: makes tmpdir (mkdtemp). 0, or -1 when it cannot. */
static inline int tmpdir_setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* The group teardown: removes tmpdir and its files. 0, or -1 when that failed. */
static inline int tmpdir_teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
