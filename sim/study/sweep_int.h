/*
 * sweep_int.h -- what the two halves of a sweep share (not for other
 * modules): the sweep's state, the growing string its rows are built in,
 * and the calls between the scheduler (sweep.c: plan, validate, run) and
 * the output file (sweep_out.c: open, resume, commit).
 */
#ifndef DILOSIM_SWEEP_INT_H
#define DILOSIM_SWEEP_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/config/scenario.h"
#include "sim/study/grid.h"
#include "sim/study/sweep.h"
#include "sim/study/sweepfile.h"

#define MSG_MAX 1024
#define ERR_MAX 8192 /* a failure's message: room for a path of PATH_MAX */

typedef struct {
    char key[SCN_NAME_MAX * 2]; /* the dotted scenario key */
    const char *spec;           /* its grid spec */
    char label[MSG_MAX];        /* what the user wrote, for messages */
    int from_vary;              /* 1: given (or replaced) by --vary */
    scn_origin from;            /* where its values come from */
    grid_list vals;
} dim;

struct sweep {
    const sweep_spec *spec;
    scn_meta meta;
    int nvar; /* variants run; 0: the base */
    const char *var[SCN_MAX_VARIANTS];
    scn_doc *doc[SCN_MAX_VARIANTS]; /* the file parsed once per variant
                                          (doc[0]: the base when nvar 0) */
    int ndim;
    dim dim[SWEEP_MAX_DIMS];
    int naxis;                    /* the variant axis (when nvar), */
    int size[SWEEP_MAX_DIMS + 1]; /*   then one axis per dimension */
    int64_t npoints;
    int64_t count;                        /* rows of the output: the points of
                                          the shard, or all */
    char *header;                         /* with its newline */
    uint64_t digest;                      /* of every point's config */
    sweepfile_id id;                      /* the output's identity */
    char digest_line[SWEEPFILE_LINE_MAX]; /* its first line (sweepfile.h),
                                          ending with the Gbit note */
    const char *gbit_note;                /* scn_gbit_note of the points */
    int energy; /* some point gives an energy key: energy_kwh_total */

    FILE *f;         /* the rows' stream */
    char *target;    /* OUT, its links followed */
    char *partial;   /* TARGET.partial, or NULL */
    int through;     /* OUT is a device or FIFO */
    int own_partial; /* 1: we hold it (remove on error) */

    /* Shared by the workers, under mu. */
    pthread_mutex_t mu;
    int64_t written;    /* rows written (kept ones too) */
    int64_t kept;       /* rows kept from OUT.partial */
    int64_t done;       /* points run by this process */
    char **rows;        /* finished rows not yet written */
    int failed;         /* stop taking points */
    int64_t fail_point; /* the lowest failed row */
    int fail_rc;
    char fail_msg[ERR_MAX];
};

/* ---------------------------------------------------------------------
 * A growing string, for rows, prefixes and the header
 */
typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} str;

/* The point of row j of the output: the shard's j-th, or j. */
int64_t sweep__row_point(const sweep *sw, int64_t j);

/* Appends the CSV fields of point p's values to b, each followed by a
 * comma (b->oom set when out of memory). */
void sweep__point_prefix(const sweep *sw, int64_t p, str *b);

/* Sets up sw->f (OUT.partial, a device or FIFO written through, or the
 * spec's stream) and writes the digest line and header unless resumed
 * rows are kept (sw->kept, sw->written).  Returns MSG_OK, or 1 when OUT
 * is already complete (resume: nothing to do), or an error. */
int sweep__open_output(sweep *sw, char *err, size_t errlen);

/* "PATH: write error: why" for the rows' output ("write error: why" for
 * the stream), as MSG_EIO. */
int sweep__out_error(const sweep *sw, int e, char *err, size_t errlen);

/* Closes the output; fsyncs TARGET.partial and renames it to TARGET when
 * rc is 0, removes it otherwise unless resuming.  Returns rc, or the
 * error of the close or rename. */
int sweep__finish(sweep *sw, int rc, char *err, size_t errlen);

#endif
