/*
 * faults_trace.h -- a fault trace file (the scenario's faults.trace): when
 * each worker fails and is repaired, as written in the file.
 *
 * Lines are
 *     time_s state             (worker 0)
 *     time_s worker state
 * separated by blanks (spaces, tabs, a trailing CR); '#' starts a comment
 * anywhere on a line; blank lines are skipped.  time_s is a finite number
 * of seconds, 0 <= time_s <= 9.2e9, rounded to the nearest nanosecond;
 * worker an integer 0..nworkers-1; state 0 or "down", 1 or "up" (lower
 * case).  Lines of different workers may interleave in any order; per
 * worker the times (in ns) strictly increase and the states alternate,
 * starting with down.  A worker whose last line is "down" is never
 * repaired (repair INT64_MAX); a worker without lines never fails.
 *
 * The trace is parsed whole, from bytes; a file is at most
 * FAULTS_TRACE_MAX_BYTES bytes and a NUL byte is an error at its line.
 * Errors are one line, "path:line: what is wrong (expected ...)"; a file
 * that cannot be opened or read gives "path: cannot open: <reason>" or
 * "path: cannot read: <reason>".
 *
 * Plain parsing, no clock: the scenario loader checks a trace with it and
 * the engine (sim/engine/faults.h) replays the periods it gives.
 */
#ifndef DILOSIM_FAULTS_TRACE_H
#define DILOSIM_FAULTS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define FAULTS_TRACE_MAX_BYTES (64 << 20) /* the largest trace file */

/* One down period: the worker fails at `fail` and is repaired at `repair`
 * (ns; > fail, INT64_MAX when it never comes back). */
typedef struct {
    int64_t fail, repair;
} faults_period;

/* A parsed trace: each worker's down periods. */
typedef struct faults_trace faults_trace;

/* Parses a whole trace (len bytes at text, any bytes; `name` stands for
 * the file in messages) for workers 0..nworkers-1 into *out.  Returns 0;
 * MSG_EINPUT with "name:line: what is wrong (expected ...)"; MSG_ENOMEM.
 * *out is NULL on error. */
int faults_trace_parse(const char *text, size_t len, const char *name,
                       int nworkers, faults_trace **out, char *err,
                       size_t errlen);

/* Where a line of a trace file is, for its messages. */
typedef struct {
    const char *path;
    long line;
    char *err;
    size_t errlen;
} faults_where;

/* The message "PATH:LINE: ..." (col 0) or "PATH:LINE:COL: ..." (col >= 1)
 * into at->err.  Returns -1 (an input error, for the parsers' returns). */
int faults_where_err(const faults_where *at, size_t col, const char *fmt, ...);

/* A field of a line: its text (NUL-terminated in place) and its 0-based
 * column. */
typedef struct {
    char *s;
    size_t col;
} faults_token;

/* Cuts line (its comment already cut) into at most max blank-separated
 * fields, in place; returns how many, max + 1 when there are more
 * (tok[max] then the first extra one: tok has room for max + 1).  *end
 * is the column just past the last field.  The bandwidth and membership
 * traces split their lines with it. */
int faults_fields(char *line, faults_token *tok, int max, size_t *end);

/* A line of three fields in the form `form` (e.g. "'t_s link gbps'"):
 * its comment cut, the fields into tok (room for 4).  Returns 0 for a
 * blank line, 3 with three fields, or -1 with the message "trailing 'x'
 * after the <third> (expected <form> and nothing more)" or "missing
 * <two> / <one> (expected <form>)" (names: the third field, the last two
 * and the last one, e.g. "rate", "link and rate"). */
int faults_fields3(const faults_where *at, char *line, faults_token *tok,
                   const char *form, const char *third, const char *two);

/* Times that may not go backwards: -1 with "time S s is before L s of
 * line N (expected non-decreasing times)" at tok's column when s is
 * below last_s (of line last_line), else 0. */
int faults_time_order(const faults_where *at, const faults_token *tok, double s,
                      double last_s, long last_line);

/* A time field: a finite number of seconds in [0, 9.2e9] into *s; else
 * -1 with "bad time", "negative time" or "too large" at its column. */
int faults_token_time(const faults_where *at, const faults_token *t, double *s);

/* The lines of trace `name`: fn(ctx, line, n) for each line of
 * text[0..len) in order (split at '\n'; the last one need not end with
 * one), `line` a NUL-terminated copy of its n bytes, which may hold a NUL
 * byte of the file (the callee says so).  fn returns 0, -1 (an input
 * error, its message in err) or -2 (out of memory); the first nonzero
 * stops.  Returns 0, MSG_EINPUT, or MSG_ENOMEM with its message in err. */
int faults_trace_lines(const char *text, size_t len, const char *name,
                       int (*fn)(void *ctx, char *line, size_t n), void *ctx,
                       char *err, size_t errlen);

/* faults_trace_lines for a trace whose messages have columns: each line
 * counted in at->line (which starts at 0), a NUL byte an error at its
 * column ("NUL byte (expected a text line)"), else fn(ctx, line, at):
 * 0, -1 (its message written with faults_where_err) or -2 (out of
 * memory).  Returns as faults_trace_lines.  The bandwidth and membership
 * traces read their lines with it. */
int faults_trace_cols(const char *text, size_t len, faults_where *at,
                      int (*fn)(void *ctx, char *line, const faults_where *at),
                      void *ctx);

/* Reads the file at path (faults_trace_read) and hands its text to
 * parse(text, len, path, nworkers, out, err, errlen), a trace parser
 * whose *out is its parsed trace (out: the address of the caller's
 * pointer).  Returns faults_trace_read's errors or parse's result. */
int faults_trace_load_with(const char *path, int nworkers, void *out,
                           int (*parse)(const char *text, size_t len,
                                        const char *name, int nworkers,
                                        void *out, char *err, size_t errlen),
                           char *err, size_t errlen);

/* Reads the file at path whole into *text (malloc'd, *len bytes, the
 * caller frees it; NULL on error): 0, MSG_EIO ("path: cannot open:
 * reason", "cannot read"), MSG_EINPUT for a file larger than
 * FAULTS_TRACE_MAX_BYTES, MSG_ENOMEM.  The bandwidth trace's reader
 * (bw_trace.h) reads its files with it too. */
int faults_trace_read(const char *path, char **text, size_t *len, char *err,
                      size_t errlen);

/* faults_trace_parse of the file at path: also MSG_EIO ("path: cannot
 * open: reason", "cannot read") and MSG_EINPUT for a file larger than
 * FAULTS_TRACE_MAX_BYTES. */
int faults_trace_load(const char *path, int nworkers, faults_trace **out,
                      char *err, size_t errlen);
void faults_trace_free(faults_trace *t);

/* Worker w's down periods (w in 0..nworkers-1), in time order: *n of
 * them, owned by t. */
const faults_period *faults_trace_periods(const faults_trace *t, int w,
                                          size_t *n);

#endif
