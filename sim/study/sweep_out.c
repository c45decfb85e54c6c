/*
 * sweep_out.c -- a sweep's output file: OUT.partial created, or when
 * resuming checked against this sweep and cut after its last complete
 * row, locked against a second sweep, and renamed to OUT once complete
 * (the scheduler that fills it: sweep.c).
 */
#include "sim/study/sweep_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/base/msg.h"
#include "sim/out/outfile.h"
#include "sim/study/sweepfile.h"

/* What a CSV file of this sweep holds. */
typedef struct {
    int digest;       /* 1 ours, -1 another, 0 no digest line */
    sweepfile_id id;  /* what the file says it is (digest != 0) */
    int header;       /* 1 ours, -1 another, 0 none (or cut short) */
    int64_t rows;     /* complete rows after it, each checked */
    long end;         /* offset after the last of them */
    int trailing;     /* bytes follow: a line without its newline */
    int nonempty;     /* the file holds at least one byte */
    int first_cut;    /* its first line has no newline */
    int64_t bad_line; /* > 0: this line is not its point's row */
} scan;

/* Reads path as a CSV file of this sweep: the digest line, the header,
 * rows.  Returns 0 (see *sc), or -1 when it cannot be read (errno). */
static int scan_file(const sweep *sw, const char *path, scan *sc) {
    memset(sc, 0, sizeof *sc);
    /* Not through a link, and without waiting on a FIFO (a partial file
     * that is not a regular file is refused when it is opened). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0) return errno == ENOENT || errno == ELOOP ? 0 : -1;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    str want = {0};
    /* The digest line is compared up to the end of its identity: the
     * version after it says who wrote the file, and a rebuilt dilosim may
     * resume it. */
    const size_t ni = sw->id.len;
    for (int64_t k = -2; (n = getline(&line, &cap, f)) > 0; k++) {
        sc->nonempty = 1;
        if (line[n - 1] != '\n') {
            sc->trailing = 1;
            sc->first_cut =
                k == -2 && !strncmp(line, sw->digest_line,
                                    (size_t)n < ni ? (size_t)n : ni);
            break;
        }
        if (k == -2) {
            if (!sweepfile_parse(line, &sc->id)) break; /* no digest */
            int ours = sc->id.len == ni && !strncmp(line, sw->digest_line, ni);
            sc->digest = ours ? 1 : -1;
            if (sc->digest < 0) break;
        } else if (k == -1) {
            sc->header = strcmp(line, sw->header) ? -1 : 1;
            if (sc->header < 0) break;
        } else {
            want.n = 0;
            if (k < sw->count)
                sweep__point_prefix(sw, sweep__row_point(sw, k), &want);
            if (k >= sw->count || want.oom ||
                (want.n && strncmp(line, want.s, want.n))) {
                sc->bad_line = k + 3;
                break;
            }
            sc->rows++;
        }
        sc->end += (long)n;
    }
    if (sc->header <= 0) sc->end = 0; /* nothing worth keeping */
    int bad = ferror(f);
    free(line);
    free(want.s);
    fclose(f);
    return bad ? -1 : 0;
}

/* 1 if the scanned file holds something and is not this sweep's: another
 * digest, or a complete first line that is no digest (a file cut inside
 * its digest line, or empty, is not foreign: it is started afresh). */
static int foreign(const scan *sc) {
    return sc->digest < 0 ||
           (sc->digest == 0 && sc->nonempty &&
            !(sc->trailing && sc->header == 0 && sc->first_cut));
}

/* "PATH: write error: why" for the rows' output ("write error: why" for
 * the stream). */
int sweep__out_error(const sweep *sw, int e, char *err, size_t errlen) {
    if (!sw->spec->out)
        return msg_set(err, errlen, MSG_EIO, "write error: %s", strerror(e));
    return msg_set(err, errlen, MSG_EIO, "%s: write error: %s",
                   sw->partial ? sw->partial : sw->spec->out, strerror(e));
}

/* The input error of a file written by another sweep (or none), or
 * holding another shard of this one. */
static int other_sweep(const sweep *sw, const char *path, const scan *sc,
                       char *err, size_t errlen) {
    if (!sc->digest)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: no sweep digest "
                       "(expected a first line %.*s)",
                       path, (int)sw->id.len, sw->digest_line);
    if (sc->id.digest == sw->digest) {
        char has[64], want[64];
        sweepfile_describe(&sc->id, has, sizeof has);
        sweepfile_describe(&sw->id, want, sizeof want);
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: holds %s, not %s (same "
                       "sweep)",
                       path, has, want);
    }
    return msg_set(err, errlen, MSG_EINPUT,
                   "%s: written by another "
                   "scenario or sweep (digest %016" PRIx64 " in the file, "
                   "%016" PRIx64 " for this sweep)",
                   path, sc->id.digest, sw->digest);
}

/* The input error of a partial file that is not a regular file. */
static int not_regular(const char *path, char *err, size_t errlen) {
    return msg_set(err, errlen, MSG_EINPUT,
                   "%s: not a regular file (a "
                   "symbolic link, FIFO or device there is never written "
                   "through; remove it)",
                   path);
}

/* "PATH: cannot write: why", an input error for a name too long. */
static int write_error(const char *path, int e, char *err, size_t errlen) {
    return msg_set(err, errlen, e == ENAMETOOLONG ? MSG_EINPUT : MSG_EIO,
                   "%s: cannot write: %s", path, strerror(e));
}

/* Opens TARGET.partial for writing, without truncating, and locks it
 * against another sweep. */
static int open_partial(sweep *sw, char *err, size_t errlen) {
    /* Never through a link, a FIFO or a device: the file is truncated,
     * rewritten and renamed over OUT (O_NONBLOCK: a FIFO does not hang the
     * open; it is refused just below). */
    int fd =
        open(sw->partial,
             O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    struct stat st;
    if (fd < 0 && (errno == ELOOP || errno == ENXIO)) /* link; FIFO */
        return not_regular(sw->partial, err, errlen);
    if (fd < 0) return write_error(sw->partial, errno, err, errlen);
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
        close(fd);
        return not_regular(sw->partial, err, errlen);
    }
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_SETLK, &lk)) {
        close(fd);
        return msg_set(err, errlen, MSG_EFAIL,
                       "%s: in use by another "
                       "sweep",
                       sw->partial);
    }
    sw->own_partial = 1;
    if (!(sw->f = fdopen(fd, "w"))) {
        close(fd);
        return write_error(sw->partial, errno, err, errlen);
    }
    return MSG_OK;
}

/* What TARGET.partial holds that a resumed sweep keeps: *keep bytes (0:
 * start afresh, digest and header included) making sw->kept rows. */
static int check_partial(sweep *sw, long *keep, char *err, size_t errlen) {
    scan sc;
    *keep = 0;
    if (scan_file(sw, sw->partial, &sc))
        return msg_set(err, errlen, MSG_EIO, "%s: cannot read: %s", sw->partial,
                       strerror(errno));
    if (foreign(&sc)) return other_sweep(sw, sw->partial, &sc, err, errlen);
    if (sc.header < 0)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: header differs from "
                       "this sweep",
                       sw->partial);
    if (sc.bad_line)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s:%lld: row differs from "
                       "this sweep",
                       sw->partial, (long long)sc.bad_line);
    *keep = sc.end; /* 0 when missing, empty or cut inside the header */
    sw->kept = sc.rows;
    return MSG_OK;
}

/* Sets up sw->f.  Returns MSG_OK, or 1 when OUT is already complete
 * (resume: nothing to do), or an error. */
int sweep__open_output(sweep *sw, char *err, size_t errlen) {
    const sweep_spec *s = sw->spec;
    int rc, fresh = 1;
    if (!s->out) {
        if (s->resume || s->nshards)
            return msg_set(err, errlen, MSG_EINPUT,
                           "%s needs an output "
                           "file",
                           s->resume ? "resuming" : "a shard");
        sw->f = s->stream;
    } else {
        outfile_mode mode;
        if ((rc = outfile_resolve(s->out, &sw->target, &mode, err, errlen)))
            return rc;
        if (mode == OUTFILE_THROUGH) { /* a device or FIFO: no partial */
            if (s->resume)
                return msg_set(err, errlen, MSG_EINPUT,
                               "%s: not a "
                               "regular file: nothing to resume",
                               s->out);
            int fd = outfile_open_through(sw->target);
            if (fd < 0 || !(sw->f = fdopen(fd, "w"))) {
                int e = errno;
                if (fd >= 0) close(fd);
                return write_error(s->out, e, err, errlen);
            }
            sw->through = 1;
        } else {
            scan sc;
            if (s->resume && !scan_file(sw, sw->target, &sc)) {
                if (foreign(&sc))
                    return other_sweep(sw, s->out, &sc, err, errlen);
                if (sc.header > 0 && sc.rows == sw->count && !sc.trailing)
                    return 1;
            }
            size_t n = strlen(sw->target);
            if (!(sw->partial = malloc(n + sizeof ".partial")))
                return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
            memcpy(sw->partial, sw->target, n);
            memcpy(sw->partial + n, ".partial", sizeof ".partial");
            /* Read before locking: closing any descriptor of the file
             * would drop our lock. */
            long keep = 0;
            if ((s->resume && (rc = check_partial(sw, &keep, err, errlen))) ||
                (rc = open_partial(sw, err, errlen)))
                return rc;
            if (ftruncate(fileno(sw->f), keep) || fseek(sw->f, keep, SEEK_SET))
                return write_error(sw->partial, errno, err, errlen);
            fresh = keep == 0;
        }
    }
    sw->written = sw->kept;
    if (fresh && s->out) fputs(sw->digest_line, sw->f);
    else if (fresh && *sw->gbit_note) /* a stream: the line, no identity */
        fprintf(sw->f, "%s%s", SWEEPFILE_STREAM_PREFIX,
                sw->digest_line + sw->id.len);
    if (fresh) fputs(sw->header, sw->f);
    if (fflush(sw->f)) return sweep__out_error(sw, errno, err, errlen);
    return MSG_OK;
}

/* Closes the output; fsyncs TARGET.partial and renames it to TARGET on
 * success, removes it on failure unless resuming. */
int sweep__finish(sweep *sw, int rc, char *err, size_t errlen) {
    const sweep_spec *s = sw->spec;
    if (!sw->f) return rc;
    if (sw->f == s->stream) {
        if (!rc && (fflush(sw->f) || ferror(sw->f)))
            rc = sweep__out_error(sw, errno ? errno : EIO, err, errlen);
        return rc;
    }
    errno = 0;
    int bad = fflush(sw->f) != 0 || ferror(sw->f);
    if (!bad && sw->partial && fsync(fileno(sw->f))) bad = 1;
    int e = errno ? errno : EIO;
    if (!rc && bad) rc = sweep__out_error(sw, e, err, errlen);
    /* Renamed while the descriptor still holds the lock: closing first
     * would let another sweep take the file between close and rename. */
    if (!rc && sw->partial && rename(sw->partial, sw->target))
        rc = write_error(s->out, errno, err, errlen);
    if (fclose(sw->f) && !rc) rc = sweep__out_error(sw, errno, err, errlen);
    sw->f = NULL;
    if (rc && sw->own_partial && !s->resume) unlink(sw->partial);
    return rc;
}
