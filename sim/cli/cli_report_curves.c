/*
 * cli_report_curves.c -- the curves of `dilosim report`'s figures: a
 * sweep's CSV, written to memory by the sweep, read back into one curve
 * per variant and dimension.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/cli/cli_report.h"
#include "sim/study/sweep.h"

void rep_curves_free(curve *c, int n) {
    for (int i = 0; i < n; i++) {
        free(c[i].title);
        free(c[i].x);
        free(c[i].y);
    }
    free(c);
}

int rep_curve_add(curve *c, double x, double y) {
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        double *nx = realloc(c->x, (size_t)cap * sizeof *nx);
        if (nx) c->x = nx;
        double *ny = nx ? realloc(c->y, (size_t)cap * sizeof *ny) : NULL;
        if (!ny) return MSG_ENOMEM;
        c->y = ny;
        c->cap = cap;
    }
    c->x[c->n] = x;
    c->y[c->n++] = y;
    return 0;
}

/* One CSV record (RFC 4180: quoted fields may hold commas, quotes and
 * line breaks) from *pos, split in place into field[0..max-1]; *pos moves
 * past its line break.  Returns the field count, 0 at the end of the
 * text, -1 for a malformed record. */
static int csv_record(char **pos, char **field, int max) {
    char *s = *pos;
    if (!*s) return 0;
    int n = 0;
    for (;;) {
        if (n == max) return -1;
        char *w = s;
        field[n++] = w;
        if (*s == '"') {
            for (s++;; s++) {
                if (!*s) return -1;
                if (*s == '"' && s[1] != '"') break;
                if (*s == '"') s++;
                *w++ = *s;
            }
            s++;
        } else {
            while (*s && *s != ',' && *s != '\n') *w++ = *s++;
        }
        char end = *s;
        *w = 0;
        if (end == ',') {
            s++;
            continue;
        }
        if (end != '\n' && end != 0) return -1;
        *pos = end ? s + 1 : s;
        return n;
    }
}

#define CSV_MAX_FIELDS (SWEEP_MAX_DIMS + 16)

/* The curve titled `title` in c[0..*n-1], added when new. */
static curve *curve_named(curve **c, int *n, const char *title) {
    for (int i = 0; i < *n; i++)
        if (!strcmp((*c)[i].title, title)) return &(*c)[i];
    curve *more = realloc(*c, (size_t)(*n + 1) * sizeof *more);
    if (!more) return NULL;
    *c = more;
    curve *k = &more[(*n)++];
    memset(k, 0, sizeof *k);
    if (!(k->title = strdup(title))) return NULL;
    return k;
}

/* The title of a row's curve: its leading columns before `cu` but the
 * grid's `bw`, "KEY=VALUE" joined by ", " (the variant's value alone),
 * malloc'ed whole however long; `base` (copied) when there are none.
 * NULL when out of memory. */
static char *row_title(char *const *head, char *const *f, int bw, int cu,
                       const char *base) {
    char *title = NULL;
    size_t len = 0;
    FILE *t = open_memstream(&title, &len);
    if (!t) return NULL;
    for (int i = 0; i < cu; i++) {
        if (i == bw) continue;
        int named = strcmp(head[i], "variant");
        fprintf(t, "%s%s%s%s", ftell(t) > 0 ? ", " : "", named ? head[i] : "",
                named ? "=" : "", f[i]);
    }
    if (ftell(t) == 0) fputs(base, t);
    if (fclose(t)) {
        free(title);
        return NULL;
    }
    return title;
}

int rep_csv_curves(char *csv, const char *bw_key, const char *base, curve **out,
                   int *nout, char *err, size_t errlen) {
    char *pos = csv, *f[CSV_MAX_FIELDS], *head[CSV_MAX_FIELDS];
    while (*pos == '#') { /* the note a binary Gbit puts first */
        char *nl = strchr(pos, '\n');
        pos = nl ? nl + 1 : pos + strlen(pos);
    }
    int nh = csv_record(&pos, f, CSV_MAX_FIELDS), bw = -1, cu = -1;
    for (int i = 0; i < nh; i++) {
        head[i] = f[i];
        if (!strcmp(f[i], bw_key)) bw = i;
        if (!strcmp(f[i], "compute_utilization") && cu < 0) cu = i;
    }
    if (bw < 0 || cu < 0)
        return msg_set(err, errlen, MSG_EFAIL, "sweep: unexpected header");
    for (int n; (n = csv_record(&pos, f, CSV_MAX_FIELDS)) != 0;) {
        if (n != nh)
            return msg_set(err, errlen, MSG_EFAIL, "sweep: malformed row");
        char *title = row_title(head, f, bw, cu, base);
        curve *c = title ? curve_named(out, nout, title) : NULL;
        free(title);
        if (!c ||
            rep_curve_add(c, strtod(f[bw], NULL), 100 * strtod(f[cu], NULL)))
            return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    }
    return 0;
}
