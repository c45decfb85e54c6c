/*
 * outfile.h -- output files that appear whole or not at all, without ever
 * replacing what is not a regular file.
 *
 * What a path names decides how it is written (outfile_resolve):
 *
 *   - a symbolic link is followed to its final target (relative links
 *     against the directory of the link), and that target is written as
 *     below: the link itself stays a link;
 *   - a regular file, or nothing yet: the data goes to a temporary file
 *     TARGET.tmpXXXXXX in the target's directory (or .dilosim.tmpXXXXXX
 *     there when that name is too long), which is flushed, fsync'ed and
 *     renamed over TARGET by outfile_commit.  A new file gets the mode
 *     open(2) gives under the umask (0666 & ~umask), a replaced one keeps
 *     its mode;
 *   - anything else (a character or block device, a FIFO, a socket) is
 *     opened for writing and written through, in place: /dev/null stays
 *     /dev/null, a FIFO's reader receives the data;
 *   - a descriptor of this process named as /dev/fd/N, /proc/self/fd/N
 *     (so /dev/stdout, /dev/stderr), /proc/thread-self/fd/N or
 *     /proc/PID/fd/N is written through that descriptor (a duplicate of
 *     it), whatever it is open on: a pipe (`| cat`, bash's `>(...)`), a
 *     socket, a terminal, a file opened by the shell (`>>` appends);
 *   - a link the kernel follows but whose text names nothing (another
 *     process's /proc/PID/fd/N on a pipe: "pipe:[1234]") is written
 *     through, opened by its own name;
 *   - a directory is an error.
 *
 * While a temporary file exists its name is registered, so that
 * outfile_catch_signals's handler can remove it on SIGINT, SIGTERM or
 * SIGHUP before the process dies of the signal.
 *
 * Paths have no length limit of their own: a path the system refuses as
 * too long (ENAMETOOLONG) is an input error (MSG_EINPUT, exit 2).
 */
#ifndef DILOSIM_OUTFILE_H
#define DILOSIM_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* How a path is written (outfile_resolve). */
typedef enum {
    OUTFILE_REPLACE, /* regular file or none: temporary file, rename */
    OUTFILE_THROUGH  /* device, FIFO, socket, pipe, a descriptor of
                        ours: written in place */
} outfile_mode;

typedef struct {
    FILE *f;      /* where to write */
    char *path;   /* the path given (NULL for stdout) */
    char *target; /* the file written: path, links followed */
    char *tmp;    /* the temporary file (OUTFILE_REPLACE), or NULL */
    outfile_mode mode;
    int is_stdout;
} outfile;

/* Follows the symbolic links of path (at most 40) to the file it names;
 * *target (malloc'ed, the caller frees) is that file's path and *mode how
 * it would be written.  Only lstat(2) and readlink(2) are used: nothing is
 * opened.  Returns 0, or MSG_EINPUT (a directory, a link loop, a name too
 * long), MSG_EIO or MSG_ENOMEM with "PATH: why" in err. */
int outfile_resolve(const char *path, char **target, outfile_mode *mode,
                    char *err, size_t errlen);

/* Opens the target of an OUTFILE_THROUGH path (outfile_resolve's) for
 * writing: a descriptor of this process that it names is duplicated, any
 * other path opened with open(2).  Returns the new descriptor
 * (close-on-exec), or -1 with errno (EBADF: a descriptor not open for
 * writing). */
int outfile_open_through(const char *target);

/* Opens path for writing (see above); NULL or "-" is stdout.  Returns 0,
 * or a negative MSG_E* code with "PATH: cannot write: why" in err (nothing
 * is left behind). */
int outfile_open(outfile *of, const char *path, char *err, size_t errlen);

/* Finishes the file: flush and error check (stdout too), then for a
 * temporary file fsync, close and rename over the target.  Returns 0, or
 * MSG_EIO with "PATH: write error: why" (stdout: "write error: why") in
 * err; on failure the temporary file is removed.  of is closed either
 * way (stdout is flushed, not closed). */
int outfile_commit(outfile *of, char *err, size_t errlen);

/* Closes of without committing: the temporary file is removed, the
 * target untouched (a written-through target keeps what was written). */
void outfile_abort(outfile *of);

/* Installs the handler of SIGINT, SIGTERM and SIGHUP that removes every
 * registered temporary file (async-signal-safe calls only), then
 * re-raises the signal with its default action.  Call once, from main. */
void outfile_catch_signals(void);

/* Registers a path for removal by the signal handler (a copy is kept);
 * returns 0, or -1 when the table of OUTFILE_MAX_TEMPS is full or out of
 * memory.  outfile_forget takes it back (before the file is renamed or
 * removed).  For temporary files that are not outfiles. */
#define OUTFILE_MAX_TEMPS 16
int outfile_remember(const char *path);
void outfile_forget(const char *path);

#endif
