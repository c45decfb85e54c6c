/*
 * setfile.h -- a file of scenario overrides (--set-from FILE.json): a JSON
 * object whose members are dotted scenario keys and their values, the same
 * as that many --set KEY=VALUE, plus an optional "fit" block, written by
 * `dilosim calibrate`, that says how sure each fitted value is:
 *
 *   {
 *     "network.efficiency": 0.9312,
 *     "network.startup_ms": 212.4,
 *     "fit": {
 *       "keys": ["network.efficiency", "network.startup_ms"],
 *       "stderr": [0.004, 12.1],
 *       "covariance": [[1.6e-05, 0.01], [0.01, 146.41]],
 *       ...                     (more members, kept for people: ignored)
 *     }
 *   }
 *
 * Every member but "fit" is an override: its key a dotted scenario path
 * (as --set takes it, "a.b.0.c" for an array's item), its value any JSON
 * value.  Each fitted key (fit.keys) is also a member, whose value is the
 * fit's estimate; fit.stderr and fit.covariance (symmetric, positive
 * semi-definite, its diagonal the squares of stderr to 1e-9 relative) are
 * in the order of fit.keys.  Errors in the file itself are
 * "FILE:line:col: json.path: what is wrong (expected ...)"; errors the
 * scenario loader finds in one of its values point at that value.
 */
#ifndef DILOSIM_SETFILE_H
#define DILOSIM_SETFILE_H

#include <stddef.h>

#define SETFILE_MAX_SETS 64 /* overrides in one file */
#define SETFILE_MAX_FIT 16  /* fitted keys */
#define SETFILE_KEY_MAX 128 /* bytes of a key, with the NUL */

typedef struct setfile {
    const char *path; /* the file, as given */
    char *text;       /* its contents (past a UTF-8 BOM), NUL-terminated */
    int nset;
    char *sets[SETFILE_MAX_SETS];     /* "key=VALUE", VALUE the member's value
                                     printed as compact JSON; in document
                                     order */
    size_t key_off[SETFILE_MAX_SETS]; /* offsets in text of each member's */
    size_t val_off[SETFILE_MAX_SETS]; /*   key and value, for messages */
    /* the fit block (nfit 0: the file has none) */
    int nfit;
    char fit_key[SETFILE_MAX_FIT][SETFILE_KEY_MAX];
    double fit_value[SETFILE_MAX_FIT]; /* the member's value of each key */
    double fit_stderr[SETFILE_MAX_FIT];
    double fit_cov[SETFILE_MAX_FIT][SETFILE_MAX_FIT];
} setfile;

/* Reads and checks the file at path ("-": standard input) into *out.
 * Returns 0, or MSG_EINPUT (the file cannot be read, its syntax, a member
 * that is not a dotted key, a fit block whose keys are not numeric
 * members, a covariance of the wrong shape or not symmetric) or
 * MSG_ENOMEM, with a one-line message in err and *out empty. */
int setfile_load(const char *path, setfile *out, char *err, size_t errlen);

/* Frees what setfile_load allocated; *f is left empty. */
void setfile_free(setfile *f);

#endif
