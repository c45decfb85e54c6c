/*
 * outfile.c -- atomic output files that follow symbolic links and write
 * through devices and FIFOs, and the signal handler that removes their
 * temporary files (see outfile.h).
 *
 * The table of temporary names is the one piece of process-wide state:
 * a signal handler can reach nothing else.  Its slots are atomic pointers
 * so that the handler reads each one whole; registering and forgetting
 * happen on the thread that opens and commits, which is the main one.
 */
#include "sim/out/outfile.h"
#include "sim/base/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINKS 40 /* symbolic links followed, as Linux's MAXSYMLINKS */
#define TMP_SUFFIX ".tmpXXXXXX"
#define TMP_SHORT ".dilosim.tmpXXXXXX"

/* ---- the temporary names a signal removes ------------------------------- */

static char *_Atomic temps[OUTFILE_MAX_TEMPS];

int outfile_remember(const char *path) {
    char *copy = strdup(path);
    if (!copy) return -1;
    for (int i = 0; i < OUTFILE_MAX_TEMPS; i++) {
        char *expected = NULL;
        if (atomic_compare_exchange_strong(&temps[i], &expected, copy))
            return 0;
    }
    free(copy);
    return -1;
}

void outfile_forget(const char *path) {
    for (int i = 0; i < OUTFILE_MAX_TEMPS; i++) {
        char *p = atomic_load(&temps[i]);
        if (p && !strcmp(p, path) &&
            atomic_compare_exchange_strong(&temps[i], &p, NULL)) {
            free(p);
            return;
        }
    }
}

static void on_signal(int sig) {
    int saved = errno;
    for (int i = 0; i < OUTFILE_MAX_TEMPS; i++) {
        char *p = atomic_load(&temps[i]);
        if (p) unlink(p);
    }
    errno = saved;
    /* SA_RESETHAND restored the default action and SA_NODEFER left the
     * signal unblocked: this ends the process as the signal would have. */
    raise(sig);
}

void outfile_catch_signals(void) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa, old;
        if (sigaction(sigs[i], NULL, &old) || old.sa_handler == SIG_IGN)
            continue; /* an ignored signal (nohup) stays ignored */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- resolving a path --------------------------------------------------- */

static char *str_cat(const char *a, size_t na, const char *b) {
    size_t nb = strlen(b);
    char *s = malloc(na + nb + 1);
    if (!s) return NULL;
    memcpy(s, a, na);
    memcpy(s + na, b, nb + 1);
    return s;
}

/* The contents of the link at path (malloc'ed), or NULL with errno. */
static char *read_link(const char *path, size_t hint) {
    size_t cap = hint + 2 > 64 ? hint + 2 : 64;
    for (;;) {
        char *buf = malloc(cap);
        if (!buf) return NULL;
        ssize_t n = readlink(path, buf, cap);
        if (n < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t)n < cap) {
            buf[n] = 0;
            return buf;
        }
        free(buf);
        cap *= 2;
    }
}

static int resolve_error(const char *path, int e, char *err, size_t errlen) {
    int rc = e == ENOMEM                       ? MSG_ENOMEM
             : e == ENAMETOOLONG || e == ELOOP ? MSG_EINPUT
                                               : MSG_EIO;
    return msg_set(err, errlen, rc, "%s: cannot write: %s", path, strerror(e));
}

/* The descriptor N of this process that path names as /dev/fd/N,
 * /proc/self/fd/N, /proc/thread-self/fd/N or /proc/PID/fd/N (PID this
 * process's), or -1. */
static int own_fd(const char *path) {
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/",
                                       "/proc/thread-self/fd/"};
    char mine[48];
    snprintf(mine, sizeof mine, "/proc/%ld/fd/", (long)getpid());
    const char *n = NULL;
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs && !n; i++)
        if (!strncmp(path, dirs[i], strlen(dirs[i])))
            n = path + strlen(dirs[i]);
    if (!n && !strncmp(path, mine, strlen(mine))) n = path + strlen(mine);
    if (!n || !*n || strspn(n, "0123456789") != strlen(n) || strlen(n) > 9)
        return -1;
    return atoi(n);
}

int outfile_open_through(const char *target) {
    int fd = own_fd(target);
    if (fd < 0) return open(target, O_WRONLY | O_CLOEXEC);
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0) return -1;
    if ((fl & O_ACCMODE) == O_RDONLY) return errno = EBADF, -1;
    return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

int outfile_resolve(const char *path, char **target, outfile_mode *mode,
                    char *err, size_t errlen) {
    *target = NULL;
    *mode = OUTFILE_REPLACE;
    char *cur = strdup(path);
    if (!cur) return resolve_error(path, ENOMEM, err, errlen);
    for (int links = 0;; links++) {
        struct stat st;
        int fd = own_fd(cur);
        if (fd >= 0) { /* one of ours: written through, as it is open */
            int fl = fcntl(fd, F_GETFL);
            if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
                free(cur);
                return resolve_error(path, EBADF, err, errlen);
            }
            *mode = OUTFILE_THROUGH;
            break;
        }
        if (lstat(cur, &st)) {
            int e = errno;
            if (e == ENOENT || e == ENOTDIR || e == EACCES) break;
            free(cur); /* open(2) reports these better */
            return resolve_error(path, e, err, errlen);
        }
        if (S_ISDIR(st.st_mode)) {
            free(cur);
            return resolve_error(path, EISDIR, err, errlen);
        }
        if (!S_ISLNK(st.st_mode)) {
            if (!S_ISREG(st.st_mode)) *mode = OUTFILE_THROUGH;
            break;
        }
        if (links == MAX_LINKS) {
            free(cur);
            return resolve_error(path, ELOOP, err, errlen);
        }
        char *link = read_link(cur, (size_t)st.st_size);
        if (!link) {
            int e = errno;
            free(cur);
            return resolve_error(path, e, err, errlen);
        }
        char *next;
        const char *slash = strrchr(cur, '/');
        if (link[0] == '/' || !slash) next = link;
        else {
            next = str_cat(cur, (size_t)(slash - cur) + 1, link);
            free(link);
        }
        if (!next) {
            free(cur);
            return resolve_error(path, ENOMEM, err, errlen);
        }
        /* A link the kernel follows where its text leads nowhere (/proc's
         * links to pipes, sockets and deleted files): written through. */
        struct stat ns;
        if (own_fd(next) < 0 && lstat(next, &ns) && stat(cur, &st) == 0) {
            free(next);
            if (S_ISDIR(st.st_mode)) {
                free(cur);
                return resolve_error(path, EISDIR, err, errlen);
            }
            *mode = OUTFILE_THROUGH;
            break;
        }
        free(cur);
        cur = next;
    }
    *target = cur;
    return 0;
}

/* ---- opening and committing --------------------------------------------- */

/* Fills the trailing XXXXXX of name with letters and digits. */
static void fill_random(char *name, unsigned attempt) {
    static const char abc[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    uint64_t x = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 30) ^
                 ((uint64_t)getpid() << 16) ^ ((uint64_t)attempt << 48);
    char *p = name + strlen(name) - 6;
    for (int i = 0; i < 6; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        p[i] = abc[(x >> 33) % (sizeof abc - 1)];
    }
}

/* Creates a temporary file named base + suffix (its XXXXXX randomised):
 * fd >= 0 and *name, or -1 with errno. */
static int make_temp(const char *base, size_t nbase, const char *suffix,
                     char **name) {
    *name = str_cat(base, nbase, suffix);
    if (!*name) return errno = ENOMEM, -1;
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        fill_random(*name, attempt);
        int fd = open(*name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) return fd;
        if (errno != EEXIST) break;
    }
    int e = errno;
    free(*name);
    *name = NULL;
    errno = e;
    return -1;
}

static int open_error(outfile *of, const char *path, int e, char *err,
                      size_t errlen) {
    free(of->target);
    free(of->tmp);
    free(of->path);
    memset(of, 0, sizeof *of);
    int rc = e == ENOMEM         ? MSG_ENOMEM
             : e == ENAMETOOLONG ? MSG_EINPUT
                                 : MSG_EIO;
    return msg_set(err, errlen, rc, "%s: cannot write: %s", path, strerror(e));
}

int outfile_open(outfile *of, const char *path, char *err, size_t errlen) {
    memset(of, 0, sizeof *of);
    if (!path || !strcmp(path, "-")) {
        of->f = stdout;
        of->is_stdout = 1;
        return 0;
    }
    if (!(of->path = strdup(path)))
        return open_error(of, path, ENOMEM, err, errlen);
    int rc = outfile_resolve(path, &of->target, &of->mode, err, errlen);
    if (rc) {
        free(of->path);
        of->path = NULL;
        return rc;
    }
    int fd;
    if (of->mode == OUTFILE_THROUGH) {
        fd = outfile_open_through(of->target);
        if (fd < 0) return open_error(of, path, errno, err, errlen);
    } else {
        struct stat st;
        int exists = stat(of->target, &st) == 0 && S_ISREG(st.st_mode);
        fd = make_temp(of->target, strlen(of->target), TMP_SUFFIX, &of->tmp);
        if (fd < 0 && errno == ENAMETOOLONG) {
            const char *slash = strrchr(of->target, '/');
            size_t n = slash ? (size_t)(slash - of->target) + 1 : 0;
            fd = make_temp(of->target, n, TMP_SHORT, &of->tmp);
        }
        if (fd < 0) return open_error(of, path, errno, err, errlen);
        if (outfile_remember(of->tmp)) {
            int e = errno ? errno : ENOMEM;
            close(fd);
            unlink(of->tmp);
            return open_error(of, path, e, err, errlen);
        }
        /* The permission bits only: a setuid or setgid bit would pass to
         * a file now owned by whoever runs dilosim (root, say). */
        if (exists) (void)fchmod(fd, st.st_mode & 0777);
    }
    if (!(of->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        if (of->tmp) {
            outfile_forget(of->tmp);
            unlink(of->tmp);
        }
        return open_error(of, path, e, err, errlen);
    }
    return 0;
}

static void drop(outfile *of) {
    if (of->tmp) {
        outfile_forget(of->tmp);
        unlink(of->tmp);
    }
    free(of->tmp);
    free(of->target);
    free(of->path);
    memset(of, 0, sizeof *of);
}

int outfile_commit(outfile *of, char *err, size_t errlen) {
    if (!of->f) return msg_set(err, errlen, MSG_EFAIL, "output not open");
    if (of->is_stdout) {
        errno = 0;
        int bad = fflush(stdout) != 0;
        bad |= ferror(stdout) != 0;
        int e = errno ? errno : EIO;
        clearerr(stdout);
        memset(of, 0, sizeof *of);
        return bad ? msg_set(err, errlen, MSG_EIO, "write error: %s",
                             strerror(e))
                   : 0;
    }
    errno = 0;
    int bad = fflush(of->f) != 0 || ferror(of->f);
    if (!bad && of->tmp && fsync(fileno(of->f))) bad = 1;
    int e = errno ? errno : EIO;
    if (fclose(of->f) && !bad) bad = 1, e = errno;
    of->f = NULL;
    if (!bad && of->tmp && rename(of->tmp, of->target)) {
        bad = 1;
        e = errno;
    }
    if (!bad && of->tmp) {
        outfile_forget(of->tmp);
        free(of->tmp);
        of->tmp = NULL; /* renamed: nothing to remove */
    }
    int rc = bad ? msg_set(err, errlen, MSG_EIO, "%s: write error: %s",
                           of->path, strerror(e))
                 : 0;
    drop(of);
    return rc;
}

void outfile_abort(outfile *of) {
    if (!of->f) return;
    if (of->is_stdout) {
        fflush(stdout);
        memset(of, 0, sizeof *of);
        return;
    }
    fclose(of->f);
    of->f = NULL;
    drop(of);
}
