/*
 * test_outfile.c -- output files: whole or not at all for regular files,
 * written through for FIFOs and devices, symbolic links followed and
 * kept, modes, paths of any length, and temporary files removed by a
 * signal.
 *
 * Everything happens in a fresh directory under /tmp.  The only system
 * files looked at are /dev/null (or /dev/zero, /dev/full), with lstat(2)
 * only (outfile_resolve opens nothing), and the test checks that they are
 * still character devices.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/base/msg.h"
#include "sim/out/outfile.h"
#include "check_main.h"

static char dir[64], err[4096];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/test_outfile_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Removes dir and everything under it (nftw is not in C11 + POSIX here
 * without more feature macros: a small recursion). */
static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st)) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            for (struct dirent *e; (e = readdir(d));) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                size_t n = strlen(path) + strlen(e->d_name) + 2;
                char *sub = malloc(n);
                snprintf(sub, n, "%s/%s", path, e->d_name);
                remove_tree(sub);
                free(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void teardown(void) {
    remove_tree(dir);
}

static char *path_in(const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* The whole file, or NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void spit(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Entries of dir other than . and .. */
static int entries(const char *path) {
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void write_file(const char *path, const char *text) {
    outfile of;
    ck_assert_msg(outfile_open(&of, path, err, sizeof err) == 0, "%s", err);
    fputs(text, of.f);
    ck_assert_msg(outfile_commit(&of, err, sizeof err) == 0, "%s", err);
}

/* ------------------------------------------------------------------ */

START_TEST(test_regular_file_replaced_whole) {
    char *p = path_in("out.txt");
    write_file(p, "one\n");
    char *t = slurp(p);
    ck_assert_str_eq(t, "one\n");
    free(t);
    /* Until commit the old contents stay; abort leaves them. */
    outfile of;
    ck_assert_int_eq(outfile_open(&of, p, err, sizeof err), 0);
    ck_assert_int_eq(of.mode, OUTFILE_REPLACE);
    fputs("two\n", of.f);
    fflush(of.f);
    t = slurp(p);
    ck_assert_str_eq(t, "one\n");
    free(t);
    ck_assert_int_eq(entries(dir), 2); /* out.txt and its temporary file */
    outfile_abort(&of);
    ck_assert_int_eq(entries(dir), 1);
    t = slurp(p);
    ck_assert_str_eq(t, "one\n");
    free(t);
    free(p);
}
END_TEST

/* Defect 1: a FIFO was replaced by a regular file (temp + rename). */
typedef struct {
    const char *path;
    char buf[256];
} reader;

static void *read_fifo(void *arg) {
    reader *r = arg;
    int fd = open(r->path, O_RDONLY);
    if (fd < 0) return NULL;
    size_t n = 0;
    for (ssize_t k; (k = read(fd, r->buf + n, sizeof r->buf - 1 - n)) > 0;)
        n += (size_t)k;
    r->buf[n] = 0;
    close(fd);
    return NULL;
}

START_TEST(test_defect1_fifo_written_through) {
    char *p = path_in("fifo");
    ck_assert_int_eq(mkfifo(p, 0600), 0);
    reader r = {.path = p};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, read_fifo, &r), 0);
    outfile of;
    ck_assert_msg(outfile_open(&of, p, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(of.mode, OUTFILE_THROUGH);
    ck_assert_ptr_null(of.tmp);
    fputs("through the fifo\n", of.f);
    ck_assert_msg(outfile_commit(&of, err, sizeof err) == 0, "%s", err);
    pthread_join(th, NULL);
    ck_assert_str_eq(r.buf, "through the fifo\n");
    struct stat st;
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    ck_assert_int_eq(entries(dir), 1); /* no temporary file */
    free(p);
}
END_TEST

/* Defect 1: a symbolic link was replaced by a regular file. */
START_TEST(test_defect1_symlink_followed_and_kept) {
    char *sub = path_in("sub");
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    char *target = path_in("sub/real.txt");
    spit(target, "old\n");
    /* link1 -> sub/link2 (relative) -> real.txt (relative to sub/) */
    char *link1 = path_in("link1"), *link2 = path_in("sub/link2");
    ck_assert_int_eq(symlink("real.txt", link2), 0);
    ck_assert_int_eq(symlink("sub/link2", link1), 0);
    char *resolved;
    outfile_mode mode;
    ck_assert_int_eq(outfile_resolve(link1, &resolved, &mode, err, sizeof err),
                     0);
    ck_assert_int_eq(mode, OUTFILE_REPLACE);
    struct stat a, b;
    ck_assert_int_eq(stat(resolved, &a), 0);
    ck_assert_int_eq(stat(target, &b), 0);
    ck_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
    free(resolved);

    write_file(link1, "new\n");
    struct stat st;
    ck_assert_int_eq(lstat(link1, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(lstat(link2, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    char *t = slurp(target);
    ck_assert_str_eq(t, "new\n");
    free(t);
    ck_assert_int_eq(entries(sub), 2); /* real.txt, link2: no temp */
    /* A dangling link creates its target; the link stays. */
    char *dang = path_in("dangling");
    ck_assert_int_eq(symlink("sub/created.txt", dang), 0);
    write_file(dang, "made\n");
    ck_assert_int_eq(lstat(dang, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    char *created = path_in("sub/created.txt");
    t = slurp(created);
    ck_assert_str_eq(t, "made\n");
    free(t);
    /* A loop is an input error. */
    char *loop = path_in("loop");
    ck_assert_int_eq(symlink("loop", loop), 0);
    outfile of;
    ck_assert_int_eq(outfile_open(&of, loop, err, sizeof err), MSG_EINPUT);
    free(loop), free(created), free(dang), free(link1), free(link2);
    free(target), free(sub);
}
END_TEST

static int is_chr(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

/* Defect 1: the decision for a character device, made with lstat only;
 * no device is opened here.  /dev/null is the one to check, but the test
 * takes /dev/zero or /dev/full when something else on the machine has
 * already turned /dev/null into a regular file, and checks afterwards
 * that each device it saw is still one. */
START_TEST(test_defect1_device_is_written_through) {
    static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full"};
    int was[3], used = -1;
    for (int i = 0; i < 3; i++) {
        was[i] = is_chr(devs[i]);
        if (was[i] && used < 0) used = i;
    }
    ck_assert_msg(used >= 0, "no character device to look at");
    char *resolved;
    outfile_mode mode;
    ck_assert_int_eq(outfile_resolve(devs[used], &resolved, &mode, err,
                                     sizeof err),
                     0);
    ck_assert_int_eq(mode, OUTFILE_THROUGH);
    ck_assert_str_eq(resolved, devs[used]);
    free(resolved);
    for (int i = 0; i < 3; i++)
        if (was[i]) ck_assert_msg(is_chr(devs[i]), "%s replaced", devs[i]);
    /* A directory is refused. */
    outfile of;
    ck_assert_int_eq(outfile_open(&of, dir, err, sizeof err), MSG_EIO);
    ck_assert_ptr_nonnull(strstr(err, "Is a directory"));
}
END_TEST

START_TEST(test_modes) {
    mode_t old = umask(027);
    char *p = path_in("new.txt");
    write_file(p, "x\n");
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0640); /* 0666 & ~027 */
    ck_assert_int_eq(chmod(p, 0604), 0);
    write_file(p, "y\n");
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0604); /* kept */
    /* Setuid and setgid bits are not: the new file belongs to whoever
     * runs dilosim (root, say), not to the old file's owner. */
    ck_assert_int_eq(chmod(p, 06755), 0);
    write_file(p, "z\n");
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0755);
    umask(old);
    free(p);
}
END_TEST

/* A directory chain under dir making a path of exactly `len` bytes
 * ending in a file name of `last` bytes; returns the path (malloc). */
static char *long_path(size_t len, size_t last) {
    char *p = malloc(len + 1);
    size_t n = (size_t)snprintf(p, len + 1, "%s", dir);
    while (len - n > last + 1) {
        size_t r = len - n, seg = r - last - 2; /* "/" seg, "/" last */
        if (seg > 200) seg = r - 201 == last + 2 ? 199 : 200;
        p[n++] = '/';
        memset(p + n, 'd', seg);
        n += seg;
        p[n] = 0;
        if (mkdir(p, 0700) && errno != EEXIST)
            ck_abort_msg("mkdir %zu bytes: %s", n, strerror(errno));
    }
    p[n++] = '/';
    memset(p + n, 'f', len - n);
    p[len] = 0;
    return p;
}

/* Defect 4: paths of 1024..1029 bytes were written to their 1023-byte
 * prefix (a fixed buffer).  Paths of any length are written exactly
 * where they say, or refused as too long (an input error). */
START_TEST(test_defect4_long_paths) {
    size_t lens[] = {1024, 1027, 1029, 1100};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        char *p = long_path(lens[i], 8);
        ck_assert_uint_eq(strlen(p), lens[i]);
        write_file(p, "long\n");
        char *t = slurp(p);
        ck_assert_ptr_nonnull(t);
        ck_assert_str_eq(t, "long\n");
        free(t);
        char *prefix = strndup(p, 1023);
        ck_assert_int_ne(access(prefix, F_OK), 0);
        free(prefix);
        free(p);
    }
    /* A file name of 250 bytes: the temporary name would be too long, so
     * a short one in the same directory is used. */
    char *p = long_path(strlen(dir) + 251, 250);
    write_file(p, "short temp\n");
    char *t = slurp(p);
    ck_assert_str_eq(t, "short temp\n");
    free(t);
    free(p);
    ck_assert_int_eq(entries(dir), 2); /* the chain and that file */
    /* A name longer than the system takes is an input error. */
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    p = path_in(name);
    outfile of;
    ck_assert_int_eq(outfile_open(&of, p, err, sizeof err), MSG_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "File name too long"));
    free(p);
    /* So is a path longer than PATH_MAX. */
    size_t n = PATH_MAX + 100;
    p = malloc(n + 1);
    snprintf(p, n + 1, "%s", dir);
    for (size_t k = strlen(p); k < n; k += 2) memcpy(p + k, "/.", 2);
    p[n] = 0;
    ck_assert_int_eq(outfile_open(&of, p, err, sizeof err), MSG_EINPUT);
    free(p);
    ck_assert_int_eq(entries(dir), 2);
}
END_TEST

/* Defect 11: a signal left FILE.tmpXXXXXX behind. */
START_TEST(test_defect11_signal_removes_temp) {
    char *p = path_in("trace.json");
    int sigs[] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            outfile_catch_signals();
            outfile of;
            if (outfile_open(&of, p, err, sizeof err)) _exit(3);
            fputs("partial", of.f);
            fflush(of.f);
            char *extra = path_in("other.tmp");
            spit(extra, "x");
            if (outfile_remember(extra)) _exit(4);
            raise(sigs[k]);
            _exit(5); /* not reached */
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k],
                      "status %d", status);
        ck_assert_int_eq(entries(dir), 0);
    }
    free(p);
}
END_TEST

START_TEST(test_stdout_and_commit_errors) {
    outfile of;
    ck_assert_int_eq(outfile_open(&of, "-", err, sizeof err), 0);
    ck_assert(of.is_stdout && of.f == stdout);
    ck_assert_int_eq(outfile_commit(&of, err, sizeof err), 0);
    /* A directory that vanishes before commit: the rename fails, the
     * temporary file is gone with it, the message names the path. */
    char *sub = path_in("gone");
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    char *p = path_in("gone/out.txt");
    ck_assert_int_eq(outfile_open(&of, p, err, sizeof err), 0);
    fputs("x", of.f);
    char *tmp = strdup(of.tmp);
    ck_assert_int_eq(unlink(tmp), 0);
    ck_assert_int_eq(rmdir(sub), 0);
    ck_assert_int_eq(outfile_commit(&of, err, sizeof err), MSG_EIO);
    ck_assert_ptr_nonnull(strstr(err, "out.txt: write error: "));
    ck_assert_ptr_null(of.f);
    free(tmp), free(p), free(sub);
}
END_TEST

/* --out /dev/stdout, /dev/fd/N, /proc/self/fd/N and bash's >(...) failed
 * on a pipe ("cannot write: No such file or directory": the link's text,
 * "pipe:[1234]", was taken for a file name).  A descriptor of this
 * process is written through a duplicate of it; another process's
 * /proc/PID/fd/N on a pipe is opened by its name. */
static void expect_through(const char *path, const char *text) {
    outfile of;
    ck_assert_msg(outfile_open(&of, path, err, sizeof err) == 0, "%s: %s", path,
                  err);
    ck_assert_int_eq(of.mode, OUTFILE_THROUGH);
    ck_assert_ptr_null(of.tmp);
    fputs(text, of.f);
    ck_assert_msg(outfile_commit(&of, err, sizeof err) == 0, "%s", err);
}

static void read_exactly(int fd, const char *want) {
    char buf[256];
    size_t n = 0, len = strlen(want);
    while (n < len) {
        ssize_t k = read(fd, buf + n, len - n);
        ck_assert_int_gt(k, 0);
        n += (size_t)k;
    }
    buf[n] = 0;
    ck_assert_str_eq(buf, want);
}

START_TEST(test_descriptor_paths_written_through) {
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", p[1]);
    expect_through(path, "one\n");
    read_exactly(p[0], "one\n");
    snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
    expect_through(path, "two\n");
    read_exactly(p[0], "two\n");
    snprintf(path, sizeof path, "/proc/%ld/fd/%d", (long)getpid(), p[1]);
    expect_through(path, "three\n");
    read_exactly(p[0], "three\n");
    /* A link to one of them, as /dev/stdout is to /proc/self/fd/1. */
    char *link = path_in("out");
    snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
    ck_assert_int_eq(symlink(path, link), 0);
    expect_through(link, "four\n");
    read_exactly(p[0], "four\n");
    ck_assert_int_eq(entries(dir), 1); /* the link: no temporary file */
    /* A file the descriptor holds open for appending is appended to, not
     * replaced. */
    char *file = path_in("log.txt");
    spit(file, "kept\n");
    struct stat before, after;
    ck_assert_int_eq(stat(file, &before), 0);
    int fd = open(file, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    expect_through(path, "added\n");
    close(fd);
    char *t = slurp(file);
    ck_assert_str_eq(t, "kept\nadded\n");
    ck_assert_int_eq(stat(file, &after), 0);
    ck_assert(before.st_ino == after.st_ino);
    /* Not open, or open for reading only: refused, nothing left. */
    outfile of;
    fd = open(file, O_RDONLY);
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    ck_assert_int_eq(outfile_open(&of, path, err, sizeof err), MSG_EIO);
    ck_assert_ptr_nonnull(strstr(err, "Bad file descriptor"));
    close(fd);
    ck_assert_int_eq(outfile_open(&of, path, err, sizeof err), MSG_EIO);
    /* Another process's descriptor on a pipe: its /proc link's text names
     * nothing, the kernel follows it. */
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    snprintf(path, sizeof path, "/proc/%ld/fd/%d", (long)child, p[1]);
    expect_through(path, "five\n");
    read_exactly(p[0], "five\n");
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(p[0]);
    close(p[1]);
    free(t), free(file), free(link);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("outfile");
    TCase *tc = tcase_create("outfile");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_regular_file_replaced_whole);
    tcase_add_test(tc, test_defect1_fifo_written_through);
    tcase_add_test(tc, test_defect1_symlink_followed_and_kept);
    tcase_add_test(tc, test_defect1_device_is_written_through);
    tcase_add_test(tc, test_modes);
    tcase_add_test(tc, test_defect4_long_paths);
    tcase_add_test(tc, test_defect11_signal_removes_temp);
    tcase_add_test(tc, test_stdout_and_commit_errors);
    tcase_add_test(tc, test_descriptor_paths_written_through);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
