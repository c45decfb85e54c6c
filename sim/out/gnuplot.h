/*
 * gnuplot.h -- line figures drawn by gnuplot as SVG text, for the HTML
 * report (`dilosim report`).
 *
 * A figure is described as plain data (curves of x, y points, axis labels
 * and ranges); gnuplot_script writes the gnuplot program that draws it
 * with the data inline (datablocks) and the SVG on standard output, and
 * gnuplot_svg runs `gnuplot`, found on PATH, as a child process: the
 * program goes to its standard input and the SVG comes back through a
 * pipe, so no file is written anywhere.  Text in the figure (labels,
 * curve titles) is drawn as given (gnuplot's enhanced-text markup is off)
 * and escaped by gnuplot's SVG terminal.
 */
#ifndef DILOSIM_GNUPLOT_H
#define DILOSIM_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

#define GNUPLOT_MAX_OUTPUT (64 << 20) /* the largest SVG accepted, bytes */

/* One curve: n points (x[i], y[i]); points that are not finite, or with
 * x <= 0 on a log x axis, are left out. */
typedef struct {
    const char *title; /* legend entry; NULL: none */
    int n;
    const double *x, *y;
    int dashed; /* 1: a dashed line without points */
} gnuplot_curve;

/* How a curve (not a dashed one) is drawn. */
typedef struct {
    const char *color; /* "#rrggbb" (gnuplot_method_color); NULL:
                                 the palette's colours in turn */
    int dash;          /* gnuplot dash type >= 1; 0: solid, then
                                 another once the colours repeat */
} gnuplot_style;

typedef struct {
    const char *title; /* above the plot; NULL: none */
    const char *xlabel, *ylabel;
    int logx;          /* 1: log10 x axis */
    double xmin, xmax; /* NAN: automatic */
    double ymin, ymax; /* NAN: automatic */
    int width, height; /* pixels; <= 0: 900 x 480 */
    const char *key;   /* gnuplot `set key` arguments; NULL:
                                 "outside below horizontal" */
    int ncurves;
    const gnuplot_curve *curve;
    const gnuplot_style *style; /* ncurves of them; NULL: every curve in
                                   the palette's colours in turn */
} gnuplot_figure;

/* The colour of a method in every figure, "#rrggbb", by the keys of
 * plots/palette.gp (which holds the same colours for the gnuplot scripts):
 * "dp", "diloco", "streaming" (tau 0), "streaming_overlap" (tau >= 1),
 * "streaming_overlap_fp4" (tau >= 1, 4-bit payloads), "outer" (outer-step
 * overlap, delayed), "eager", "fedpart".  NULL for any other key. */
const char *gnuplot_method_color(const char *key);

/* Writes s as a gnuplot single-quoted string ('' for a quote; control
 * characters, which would end the command, as blanks). */
void gnuplot_quote(FILE *f, const char *s);

/* Writes the gnuplot program of fig: the svg terminal on standard
 * output, each curve's points as a datablock, one `plot` command. */
void gnuplot_script(FILE *f, const gnuplot_figure *fig);

/* Runs `gnuplot` (from PATH) on the program script[0..len-1] and returns
 * what it wrote on standard output in *out (malloc'ed, NUL-terminated;
 * its length in *outlen).  Returns 0, or a negative MSG_E* code with one
 * line in err: MSG_EFAIL when gnuplot is not on PATH ("gnuplot: not
 * found on PATH ..."), cannot be started, or ends with an error (the
 * last line it wrote on stderr is quoted), MSG_ENOMEM, MSG_EIO.  *out is
 * NULL on failure. */
int gnuplot_run(const char *script, size_t len, char **out, size_t *outlen,
                char *err, size_t errlen);

/* Checks that gnuplot runs and has the svg terminal (a short program of
 * its own).  Returns 0 or gnuplot_run's error. */
int gnuplot_check(char *err, size_t errlen);

/* gnuplot_script, then gnuplot_run: the figure as an SVG document in
 * *svg (malloc'ed).  Returns 0 or gnuplot_run's error. */
int gnuplot_svg(const gnuplot_figure *fig, char **svg, char *err,
                size_t errlen);

#endif
