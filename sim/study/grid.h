/*
 * grid.h -- the values of one sweep dimension, and the points of several.
 *
 * A grid spec is one of
 *
 *     1,2.5,10            a comma list (items trimmed of blanks; a comma
 *     dp,diloco           inside "...", [...] or {...} does not split, so
 *     [10,1],[1,10]       JSON strings and arrays are single items)
 *     logspace:A:B:N      N values 10^(A + i*(B-A)/(N-1)), i = 0..N-1
 *     linspace:A:B:N      N values A + i*(B-A)/(N-1)
 *
 * and becomes a list of value strings, each usable as the VALUE of a
 * `--set KEY=VALUE`.  As in numpy, the step is (B-A)/(N-1), the last value
 * is B exactly (10^B for logspace), and N == 1 gives A alone (10^A).
 * Generated numbers are written as the shortest decimal that reads back
 * as the same double, so logspace:-1:3:50 gives the Streaming DiLoCo
 * paper's bandwidth grid and a CSV column reads back exactly.
 *
 * Points: K dimensions of n_0, ..., n_{K-1} values make n_0 * ... * n_{K-1}
 * points, numbered row-major: the FIRST dimension varies slowest, the
 * last fastest (point p of sizes {2, 3} is (p / 3, p % 3)).
 */
#ifndef DILOSIM_GRID_H
#define DILOSIM_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/msg.h"

#define GRID_MAX_VALUES 100000   /* values one spec may give */
#define GRID_NUM_MAX MSG_NUM_MAX /* bytes of a formatted number, with NUL */

typedef struct {
    int n;    /* values */
    char **v; /* n NUL-terminated strings, owned */
} grid_list;

/* Parses spec into *out.  Messages read "LABEL: what is wrong (expected
 * ...)", label being what the user wrote (e.g. "--vary k=logspace:1:2").
 * Returns 0, or -1 with one line in err and *out empty (n 0, v NULL).
 * Free the list with grid_free. */
int grid_parse(const char *label, const char *spec, grid_list *out, char *err,
               size_t errlen);

void grid_free(grid_list *l);

/* The number of points of ndim dimensions of sizes n[] (1 when ndim is
 * 0), or -1 when it exceeds max. */
int64_t grid_count(int ndim, const int *n, int64_t max);

/* Point `point` (0 <= point < grid_count) as per-dimension indices idx[],
 * row-major: the first dimension varies slowest. */
void grid_unrank(int ndim, const int *n, int64_t point, int *idx);

#endif
