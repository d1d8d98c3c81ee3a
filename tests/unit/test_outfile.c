/* Unit tests for src/core/outfile: knee replaces only what it created. Every case runs in a
 * temporary directory; device nodes are made there with mknod (never the machine's /dev). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/knee-outfile-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Files in the directory other than the named ones: no temporary file may be left behind. */
static int stray_files(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".knee-"))
            n++;
    closedir(d);
    return n;
}

static void test_new_file(void **state)
{
    (void)state;
    char p[128], err[256];
    path_of(p, sizeof p, "new.json");
    struct outfile o;
    assert_int_equal(outfile_open(&o, p, err, sizeof err), 0);
    assert_int_equal(o.kind, OUTFILE_RENAME);
    assert_int_equal(access(p, F_OK), -1); /* nothing at the destination until commit */
    fputs("{}\n", o.f);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    assert_string_equal(read_file(p), "{}\n");
    assert_int_equal(stray_files(), 0);
}

static void test_existing_kept_on_abort_replaced_on_commit(void **state)
{
    (void)state;
    char p[128], err[256];
    path_of(p, sizeof p, "old.csv");
    write_file(p, "old content\n");
    assert_int_equal(chmod(p, 0640), 0);
    struct outfile o;
    assert_int_equal(outfile_open(&o, p, err, sizeof err), 0);
    fputs("half a run", o.f);
    outfile_abort(&o);
    assert_string_equal(read_file(p), "old content\n");
    assert_int_equal(stray_files(), 0);

    assert_int_equal(outfile_open(&o, p, err, sizeof err), 0);
    fputs("new\n", o.f);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    assert_string_equal(read_file(p), "new\n");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
}

static void test_symlink_stays_a_symlink(void **state)
{
    (void)state;
    char target[128], link[128], err[256];
    path_of(target, sizeof target, "target.txt");
    path_of(link, sizeof link, "link.txt");
    write_file(target, "before\n");
    assert_int_equal(symlink("target.txt", link), 0);
    struct outfile o;
    assert_int_equal(outfile_open(&o, link, err, sizeof err), 0);
    fputs("after\n", o.f);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    struct stat lst;
    assert_int_equal(lstat(link, &lst), 0);
    assert_true(S_ISLNK(lst.st_mode));
    assert_string_equal(read_file(target), "after\n");
    assert_int_equal(stray_files(), 0);
}

static void test_dangling_symlink_refused(void **state)
{
    (void)state;
    char link[128], err[256];
    path_of(link, sizeof link, "dangling");
    assert_int_equal(symlink("nowhere/x", link), 0);
    struct outfile o;
    assert_true(outfile_open(&o, link, err, sizeof err) < 0);
    assert_non_null(strstr(err, "dangling") ? err : strstr(err, "does not exist"));
    struct stat lst;
    assert_int_equal(lstat(link, &lst), 0);
    assert_true(S_ISLNK(lst.st_mode));
}

static void test_directory_refused(void **state)
{
    (void)state;
    char err[256];
    struct outfile o;
    assert_int_equal(outfile_open(&o, dir, err, sizeof err), -EISDIR);
    assert_non_null(strstr(err, dir));
}

static void test_fifo_written_in_place(void **state)
{
    (void)state;
    char p[128], err[256];
    path_of(p, sizeof p, "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    int rd = open(p, O_RDONLY | O_NONBLOCK); /* a reader, so the writer's open does not block */
    assert_true(rd >= 0);
    struct outfile o;
    assert_int_equal(outfile_open(&o, p, err, sizeof err), 0);
    assert_int_equal(o.kind, OUTFILE_SPECIAL);
    assert_true(outfile_is_special(p));
    fputs("through the pipe\n", o.f);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    char buf[64] = {0};
    assert_int_equal(read(rd, buf, sizeof buf - 1), 17);
    assert_string_equal(buf, "through the pipe\n");
    close(rd);
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
}

/* A character device with /dev/full's numbers (1, 7): writes fail with ENOSPC. Needs root
 * (CI runs as root); skipped otherwise. The node must still be a device afterwards. */
static void test_full_device_fails_and_survives(void **state)
{
    (void)state;
    char p[128], err[256];
    path_of(p, sizeof p, "full");
    if (mknod(p, S_IFCHR | 0666, makedev(1, 7)) != 0)
        skip();
    struct outfile o;
    assert_int_equal(outfile_open(&o, p, err, sizeof err), 0);
    assert_int_equal(o.kind, OUTFILE_SPECIAL);
    for (int i = 0; i < 2000; i++)
        fputs("0123456789abcdef0123456789abcdef\n", o.f);
    assert_int_equal(outfile_commit(&o, err, sizeof err), -ENOSPC);
    assert_non_null(strstr(err, p));
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(major(st.st_rdev), 1);
    assert_int_equal(minor(st.st_rdev), 7);
}

/* A symlink to a device (like /dev/stdout -> /proc/self/fd/1) is special too. */
static void test_symlink_to_device_is_special(void **state)
{
    (void)state;
    char p[128], err[256];
    path_of(p, sizeof p, "null-link");
    assert_int_equal(symlink("/dev/null", p), 0);
    assert_true(outfile_is_special(p));
    struct outfile o;
    assert_int_equal(outfile_open(&o, p, err, sizeof err), 0);
    assert_int_equal(o.kind, OUTFILE_SPECIAL);
    fputs("x", o.f);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    struct stat lst;
    assert_int_equal(lstat(p, &lst), 0);
    assert_true(S_ISLNK(lst.st_mode));
}

static void test_stdout(void **state)
{
    (void)state;
    char err[256];
    struct outfile o;
    assert_int_equal(outfile_open(&o, "-", err, sizeof err), 0);
    assert_int_equal(o.kind, OUTFILE_STDOUT);
    assert_ptr_equal(o.f, stdout);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    assert_true(fileno(stdout) == STDOUT_FILENO); /* not closed */
}

/* A directory without write permission: the existing file is written in place, untouched
 * when nothing was written, cut to the new length on commit. Root ignores permissions, so
 * this runs only for other users. */
static void test_inplace_when_no_temp_possible(void **state)
{
    (void)state;
    if (geteuid() == 0)
        skip();
    char sub[128], p[160], err[256];
    path_of(sub, sizeof sub, "ro");
    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(p, sizeof p, "%s/f.txt", sub);
    write_file(p, "a long old content\n");
    assert_int_equal(chmod(sub, 0555), 0);
    struct outfile o;
    assert_int_equal(outfile_open(&o, p, err, sizeof err), 0);
    assert_int_equal(o.kind, OUTFILE_INPLACE);
    outfile_abort(&o);
    assert_string_equal(read_file(p), "a long old content\n");
    assert_int_equal(outfile_open(&o, p, err, sizeof err), 0);
    fputs("short\n", o.f);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    assert_string_equal(read_file(p), "short\n");
    assert_int_equal(chmod(sub, 0755), 0);
}

static void test_abort_on_zeroed_struct(void **state)
{
    (void)state;
    struct outfile o;
    memset(&o, 0, sizeof o);
    outfile_abort(&o);
    outfile_abort(&o);
}

/* The machine itself: if /dev/full is not a character device (a broken earlier run of some
 * tool deleted it), name the machine as broken rather than letting tests fail mysteriously. */
static void test_machine_dev_full_is_a_device(void **state)
{
    (void)state;
    struct stat st;
    if (lstat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) {
        fprintf(stderr, "THIS MACHINE IS BROKEN: /dev/full is not a character device "
                        "(restore it: rm -f /dev/full; mknod -m 666 /dev/full c 1 7)\n");
        fail();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_machine_dev_full_is_a_device),
        cmocka_unit_test_setup_teardown(test_new_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_existing_kept_on_abort_replaced_on_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_stays_a_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dangling_symlink_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_written_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_device_fails_and_survives, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_to_device_is_special, setup, teardown),
        cmocka_unit_test(test_stdout),
        cmocka_unit_test_setup_teardown(test_inplace_when_no_temp_possible, setup, teardown),
        cmocka_unit_test(test_abort_on_zeroed_struct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
