/*
 * fifo_feeder.h -- a FIFO that counts its readers, for tests of how often
 * a file is read.
 *
 * A thread writes texts[k] (the last one again once they run out) to the
 * k-th opening of a FIFO, waiting after each until that reader has closed
 * it (no descriptor of this process names the FIFO), so every opening gets
 * exactly one text.  A FIFO can be read once: a second parse of it shows
 * as a second reader, and a file read twice (a fault trace: by the loader,
 * then by the run) can differ between the two reads. */
#ifndef DILOSIM_TESTS_FIFO_FEEDER_H
#define DILOSIM_TESTS_FIFO_FEEDER_H

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char dir[64], path[96];
    const char *const *texts;
    int ntexts;
    pthread_mutex_t mu;
    int served, stop;
    pthread_t th;
} feeder;

/* The whole file of path (at most len - 1 bytes) in buf: the text a test
 * then feeds through the FIFO. */
static inline void feeder_read_text(const char *path, char *buf, size_t len) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = 0;
    fclose(f);
}

static int feeder_stopped(feeder *f) {
    pthread_mutex_lock(&f->mu);
    int stop = f->stop;
    pthread_mutex_unlock(&f->mu);
    return stop;
}

/* How many descriptors of this process are open on the FIFO. */
static int fifo_users(const char *path) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 0;
    int users = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char link[300], to[256];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, to, sizeof to - 1);
        if (n > 0) {
            to[n] = 0;
            users += !strcmp(to, path);
        }
    }
    closedir(d);
    return users;
}

/* Waits until fifo_users(path) is want (1: at least one more than the
 * feeder's own), or the feeder is stopped. */
static void await_users(feeder *f, int more) {
    struct timespec ms = {0, 1000000};
    while (!feeder_stopped(f) &&
           (more ? fifo_users(f->path) < 2 : fifo_users(f->path) > 0))
        nanosleep(&ms, NULL);
}

/* Each opening: write while holding the FIFO until the reader's own
 * descriptor shows (it cannot see the end of the text before), close, then
 * wait until the reader has closed it too. */
static void *feed(void *arg) {
    feeder *f = arg;
    for (;;) {
        int fd = open(f->path, O_WRONLY);
        if (fd < 0 || feeder_stopped(f)) {
            if (fd >= 0) close(fd);
            return NULL;
        }
        pthread_mutex_lock(&f->mu);
        int k = f->served < f->ntexts ? f->served : f->ntexts - 1;
        f->served++;
        pthread_mutex_unlock(&f->mu);
        size_t n = strlen(f->texts[k]);
        ssize_t w = write(fd, f->texts[k], n);
        await_users(f, 1);
        close(fd);
        if (w != (ssize_t)n) return NULL;
        await_users(f, 0);
    }
}

/* Starts a feeder of a FIFO named `name` in a fresh directory. */
static void feeder_start(feeder *f, const char *name, const char *const *texts,
                         int ntexts) {
    memset(f, 0, sizeof *f);
    signal(SIGPIPE, SIG_IGN);
    snprintf(f->dir, sizeof f->dir, "/tmp/test_fifo_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/%s", f->dir, name);
    ck_assert_int_eq(mkfifo(f->path, 0600), 0);
    f->texts = texts;
    f->ntexts = ntexts;
    pthread_mutex_init(&f->mu, NULL);
    ck_assert_int_eq(pthread_create(&f->th, NULL, feed, f), 0);
}

/* Stops the feeder (waking it if it waits for a reader); returns how many
 * readers it served. */
static int feeder_stop(feeder *f) {
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_mutex_unlock(&f->mu);
    int fd = open(f->path, O_RDONLY | O_NONBLOCK);
    pthread_join(f->th, NULL);
    if (fd >= 0) close(fd);
    unlink(f->path);
    rmdir(f->dir);
    pthread_mutex_destroy(&f->mu);
    return f->served;
}

#endif
