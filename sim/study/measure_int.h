/*
 * measure_int.h -- what the files of the measurements module share (the
 * module's files only): measure.c reads a file, tells its format and
 * reads the CSV formats; measure_text.c the output of nccl-tests and of
 * iperf3; measure_fit.c the estimators.
 */
#ifndef DILOSIM_MEASURE_INT_H
#define DILOSIM_MEASURE_INT_H

#include <stdarg.h>
#include <stddef.h>

#include "sim/study/measure.h"

/* One file being read: its text and where its messages go. */
typedef struct {
    meas_set *m;
    int file;         /* its index in m->file */
    const char *name; /* the file in messages */
    const char *text; /* past a byte order mark; no NUL before len */
    size_t len;
    char *err;
    size_t errlen;
} meas__src;

/* One line of the text, without its end ("\n", "\r\n"). */
typedef struct {
    const char *s;
    size_t n;
    int no; /* 1-based */
} meas__line;

/* The line at *pos (0 for the first; *pos moves past it): 1 with *ln, 0
 * past the last line (a text ending in "\n" has no empty last line). */
int meas__next_line(const meas__src *src, size_t *pos, meas__line *ln);

/* The 1-based column of byte p of ln (code points, as json_line_col). */
int meas__col(const meas__line *ln, const char *p);

/* "NAME:LINE:COL: " and the message into src->err; returns MSG_EINPUT. */
int meas__fail(const meas__src *src, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The same with "PATH: " before the message (path NULL: none). */
int meas__vfail(const meas__src *src, int line, int col, const char *path,
                const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* "NAME: out of memory"; returns MSG_ENOMEM. */
int meas__oom(const meas__src *src);

/* Whether c is a blank inside a line (space, tab). */
int meas__blank(char c);

/* The n bytes at s as a decimal number ([+-]digits[.digits][e[+-]digits],
 * or a fraction ".5"): 0 with *out; 1 not such a number; 2 out of the
 * range of a finite double. */
int meas__decimal(const char *s, size_t n, double *out);

/* Append one row, step or outage to src->m: 0, or MSG_ENOMEM with the
 * message. */
int meas__push_row(const meas__src *src, const meas_row *r);
int meas__push_step(const meas__src *src, const meas_step *s);
int meas__push_outage(const meas__src *src, const meas_outage *o);

/* Whether the text holds the comment lines of nccl-tests' output. */
int meas__is_nccl(const meas__src *src);

/* The readers of measure_text.c: 0 or the code, with the message. */
int meas__read_nccl(const meas__src *src);
int meas__read_iperf3(const meas__src *src);

#endif
