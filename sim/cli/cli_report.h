/*
 * cli_report.h -- between the files of `dilosim report`: the curves of
 * its figures, and a sweep's CSV read back into them
 * (cli_report_curves.c).
 */
#ifndef DILOSIM_CLI_REPORT_H
#define DILOSIM_CLI_REPORT_H

#include <stddef.h>

/* One curve of a figure: its title and its points. */
typedef struct {
    char *title;
    int n, cap;
    double *x, *y;
} curve;

/* Frees c[0..n-1] and c. */
void rep_curves_free(curve *c, int n);

/* Adds (x, y) to c.  Returns 0 or MSG_ENOMEM. */
int rep_curve_add(curve *c, double x, double y);

/* The sweep's CSV (csv, changed in place) as curves, after its comment
 * lines: x the column named bw_key, y CU in %, one curve per value of
 * the other leading columns (the variant, other dimensions); `base`
 * titles the curve of a scenario without either.  Titles are whole: two
 * curves stay two however long their common prefix.  *out (malloc'ed,
 * *nout of them) grows.  Returns 0, or MSG_EFAIL (a header or row that
 * is not a sweep's) or MSG_ENOMEM with a message in err. */
int rep_csv_curves(char *csv, const char *bw_key, const char *base, curve **out,
                   int *nout, char *err, size_t errlen);

#endif
