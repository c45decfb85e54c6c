/*
 * faults_trace.c -- the parser of fault trace files (faults_trace.h):
 * the file read whole (at most FAULTS_TRACE_MAX_BYTES), split in lines,
 * each line checked and applied to its worker's list of down periods.
 *
 * The scenario loader parses a trace to check it, so a bad trace is an
 * input error with its line before any run; the engine (sim/engine/
 * faults.c) parses it again when a run starts and replays the periods.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "sim/config/faults_trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/base/msg.h"

/* Trace times above this many seconds do not fit int64 nanoseconds. */
#define TRACE_MAX_S 9.2e9

/* One worker's periods, and where its parse stands. */
typedef struct {
    faults_period *p;
    size_t len, cap;
    int64_t last_ns; /* time of the last transition, -1 before any */
    double last_s;   /* the same, in seconds as written */
    int down;        /* state after the last transition */
} plist;

struct faults_trace {
    int n;    /* workers */
    plist *w; /* each worker's periods */
};

/* Appends a down period starting at t, repaired at INT64_MAX until an up
 * line says otherwise. */
static int plist_push(plist *l, int64_t t) {
    if (l->len == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        faults_period *p = realloc(l->p, cap * sizeof *p);
        if (!p) return -1;
        l->p = p;
        l->cap = cap;
    }
    l->p[l->len++] = (faults_period){t, INT64_MAX};
    return 0;
}

typedef faults_where where;

int faults_where_err(const where *at, size_t col, const char *fmt, ...) {
    if (at->err && at->errlen) {
        int k =
            col ? snprintf(at->err, at->errlen, "%s:%ld:%zu: ", at->path,
                           at->line, col)
                : snprintf(at->err, at->errlen, "%s:%ld: ", at->path, at->line);
        if (k >= 0 && (size_t)k < at->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(at->err + k, at->errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
           c == '\f';
}

/* Splits s into at most max blank-separated fields (in place); returns
 * the number of fields found, max + 1 when there are more. */
static int split(char *s, char **field, int max) {
    int n = 0;
    for (;;) {
        while (is_blank(*s)) s++;
        if (!*s) return n;
        if (n == max) return max + 1;
        field[n++] = s;
        while (*s && !is_blank(*s)) s++;
        if (*s) *s++ = '\0';
    }
}

/* A time token at column col (0: the line's): seconds, finite, in
 * [0, TRACE_MAX_S]. */
static int time_at(const where *at, size_t col, const char *tok, double *s) {
    char *end;
    double v = strtod(tok, &end);
    if (end == tok || *end || !isfinite(v))
        return faults_where_err(at, col,
                                "bad time '%.40s' (expected a finite number of "
                                "seconds)",
                                tok);
    if (v < 0)
        return faults_where_err(at, col,
                                "negative time '%.40s' (expected seconds >= 0)",
                                tok);
    if (v > TRACE_MAX_S)
        return faults_where_err(
            at, col, "time '%.40s' too large (expected at most %g s)", tok,
            TRACE_MAX_S);
    *s = v;
    return 0;
}

static int parse_time(const where *at, const char *tok, double *s,
                      int64_t *ns) {
    if (time_at(at, 0, tok, s)) return -1;
    *ns = (int64_t)llround(*s * 1e9);
    return 0;
}

static int parse_worker(const where *at, const char *tok, int nworkers,
                        int *w) {
    char *end;
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (tok[0] < '0' || tok[0] > '9' || *end)
        return faults_where_err(at, 0,
                                "bad worker '%.40s' (expected an integer "
                                "0..%d)",
                                tok, nworkers - 1);
    if (errno == ERANGE || v >= nworkers)
        return faults_where_err(at, 0,
                                "worker %.40s out of range (expected 0..%d)",
                                tok, nworkers - 1);
    *w = (int)v;
    return 0;
}

static int parse_state(const where *at, const char *tok, int *down) {
    if (strcmp(tok, "0") == 0 || strcmp(tok, "down") == 0) *down = 1;
    else if (strcmp(tok, "1") == 0 || strcmp(tok, "up") == 0) *down = 0;
    else
        return faults_where_err(at, 0,
                                "unknown state '%.40s' (expected 0, 1, down or "
                                "up)",
                                tok);
    return 0;
}

/* Applies one transition of worker w at time (s, ns) to its list. */
static int apply(faults_trace *t, const where *at, int w, double s, int64_t ns,
                 int down) {
    plist *l = &t->w[w];
    if (l->last_ns >= 0 && ns <= l->last_ns)
        return faults_where_err(at, 0,
                                "worker %d: time %.12g s is not after %.12g s "
                                "(times must increase)",
                                w, s, l->last_s);
    if (down == l->down)
        return faults_where_err(at, 0,
                                "worker %d is already %s (states must "
                                "alternate, starting with down)",
                                w, down ? "down" : "up");
    if (down && plist_push(l, ns) < 0) {
        faults_where_err(at, 0, "out of memory");
        return -2;
    }
    if (!down) l->p[l->len - 1].repair = ns;
    l->last_ns = ns;
    l->last_s = s;
    l->down = down;
    return 0;
}

/* Parses one line (comments and blank lines included): 0, -1 bad, -2 out
 * of memory. */
static int parse_line(faults_trace *t, const where *at, char *line) {
    char *hash = strchr(line, '#'), *fld[3];
    if (hash) *hash = '\0';
    int n = split(line, fld, 3);
    if (n == 0) return 0;
    if (n != 2 && n != 3)
        return faults_where_err(at, 0,
                                "%s%d field%s (expected 'time_s state' or "
                                "'time_s worker state')",
                                n > 3 ? "more than " : "", n > 3 ? 3 : n,
                                n == 1 ? "" : "s");
    double s = 0;
    int64_t ns = 0;
    int w = 0, down = 0;
    if (parse_time(at, fld[0], &s, &ns) < 0) return -1;
    if (n == 3 && parse_worker(at, fld[1], t->n, &w) < 0) return -1;
    if (parse_state(at, fld[n - 1], &down) < 0) return -1;
    return apply(t, at, w, s, ns, down);
}

/* ---- the fields of a line, for the traces with columns --------------- */

/* Cuts line (its comment already cut) into at most max fields; returns
 * how many, max + 1 when there are more (tok[max] then the first extra
 * one, tok has room for max + 1).  *end is the column just past the
 * last field. */
int faults_fields(char *line, faults_token *tok, int max, size_t *end) {
    int n = 0;
    size_t i = 0;
    for (;;) {
        while (line[i] && strchr(" \t\r\n\v\f", line[i])) i++;
        if (!line[i]) break;
        tok[n] = (faults_token){line + i, i};
        if (n++ == max) return n;
        while (line[i] && !strchr(" \t\r\n\v\f", line[i])) i++;
        *end = i;
        if (line[i]) line[i++] = '\0';
    }
    return n;
}

int faults_fields3(const where *at, char *line, faults_token *tok,
                   const char *form, const char *third, const char *two) {
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    size_t end = 0;
    int n = faults_fields(line, tok, 3, &end);
    if (n > 3)
        return faults_where_err(at, tok[3].col + 1,
                                "trailing '%.40s' after the %s (expected %s "
                                "and nothing more)",
                                tok[3].s, third, form);
    if (n > 0 && n < 3)
        return faults_where_err(at, end + 1, "missing %s (expected %s)",
                                n == 1 ? two : third, form);
    return n;
}

int faults_time_order(const where *at, const faults_token *tok, double s,
                      double last_s, long last_line) {
    if (s >= last_s) return 0;
    return faults_where_err(at, tok->col + 1,
                            "time %.12g s is before %.12g s of line %ld "
                            "(expected non-decreasing times)",
                            s, last_s, last_line);
}

int faults_token_time(const where *at, const faults_token *t, double *s) {
    return time_at(at, t->col + 1, t->s, s);
}

void faults_trace_free(faults_trace *t) {
    if (!t) return;
    for (int w = 0; w < t->n; w++) free(t->w[w].p);
    free(t->w);
    free(t);
}

int faults_trace_lines(const char *text, size_t len, const char *name,
                       int (*fn)(void *ctx, char *line, size_t n), void *ctx,
                       char *err, size_t errlen) {
    size_t longest = 0;
    for (size_t i = 0, st = 0; i <= len; i++)
        if (i == len || text[i] == '\n') {
            if (i - st > longest) longest = i - st;
            st = i + 1;
        }
    char *line = malloc(longest + 1);
    int r = line ? 0 : -2;
    for (size_t st = 0; st < len && r == 0;) {
        const char *nl = memchr(text + st, '\n', len - st);
        size_t n = nl ? (size_t)(nl - (text + st)) : len - st;
        memcpy(line, text + st, n);
        line[n] = 0;
        r = fn(ctx, line, n);
        st += n + 1;
    }
    free(line);
    if (r == -2)
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", name);
    return r ? MSG_EINPUT : 0;
}

/* One line of a failure trace (faults_trace_lines). */
typedef struct {
    faults_trace *t;
    where *at;
} fline_ctx;

static int fline(void *ctx, char *line, size_t n) {
    fline_ctx *c = ctx;
    c->at->line++;
    return memchr(line, 0, n) ? faults_where_err(c->at, 0,
                                                 "NUL byte (expected a "
                                                 "text line)")
                              : parse_line(c->t, c->at, line);
}

int faults_trace_parse(const char *text, size_t len, const char *name,
                       int nworkers, faults_trace **out, char *err,
                       size_t errlen) {
    *out = NULL;
    if (nworkers < 1)
        return msg_set(err, errlen, MSG_EINPUT, "%s: nworkers must be >= 1",
                       name);
    faults_trace *t = calloc(1, sizeof *t);
    if (t) t->w = calloc((size_t)nworkers, sizeof *t->w);
    if (!t || !t->w) {
        faults_trace_free(t);
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", name);
    }
    t->n = nworkers;
    for (int w = 0; w < nworkers; w++) t->w[w].last_ns = -1;
    where at = {name, 0, err, errlen};
    fline_ctx c = {t, &at};
    int rc = faults_trace_lines(text, len, name, fline, &c, err, errlen);
    if (rc) {
        faults_trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int faults_trace_read(const char *path, char **text, size_t *len, char *err,
                      size_t errlen) {
    *text = NULL;
    *len = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return msg_set(err, errlen, MSG_EIO, "%s: cannot open: %s", path,
                       strerror(errno));
    /* The size when the file says it (refused above the cap before any
     * read), else read in growing steps up to the cap. */
    struct stat st;
    size_t cap = 4096, n = 0;
    if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) {
        if (st.st_size > FAULTS_TRACE_MAX_BYTES) n = FAULTS_TRACE_MAX_BYTES + 1;
        else cap = (size_t)st.st_size + 2;
    }
    char *buf = n ? NULL : malloc(cap);
    int rc = 0, e = 0;
    while (n <= FAULTS_TRACE_MAX_BYTES) {
        if (!buf) {
            rc = msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", path);
            break;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, fp);
        n += got;
        if (ferror(fp)) {
            e = errno ? errno : EIO;
            break;
        }
        if (got == 0 || n > FAULTS_TRACE_MAX_BYTES) break;
        if (cap - n < 2) {
            char *nb = realloc(buf, 2 * cap);
            if (!nb) free(buf);
            buf = nb, cap *= 2;
        }
    }
    fclose(fp);
    if (!rc && e)
        rc = msg_set(err, errlen, MSG_EIO, "%s: cannot read: %s", path,
                     strerror(e));
    else if (!rc && n > FAULTS_TRACE_MAX_BYTES)
        rc =
            msg_set(err, errlen, MSG_EINPUT,
                    "%s: larger than %d MiB "
                    "(expected a trace of at most %d bytes)",
                    path, FAULTS_TRACE_MAX_BYTES >> 20, FAULTS_TRACE_MAX_BYTES);
    if (rc) {
        free(buf);
        return rc;
    }
    *text = buf;
    *len = n;
    return 0;
}

/* One line of a trace with columns (faults_trace_cols). */
typedef struct {
    faults_where *at;
    int (*fn)(void *ctx, char *line, const faults_where *at);
    void *ctx;
} cols_ctx;

static int cols_line(void *ctx, char *line, size_t n) {
    cols_ctx *c = ctx;
    c->at->line++;
    const char *nul = memchr(line, 0, n);
    return nul ? faults_where_err(c->at, (size_t)(nul - line) + 1,
                                  "NUL byte (expected a text line)")
               : c->fn(c->ctx, line, c->at);
}

int faults_trace_cols(const char *text, size_t len, faults_where *at,
                      int (*fn)(void *ctx, char *line, const faults_where *at),
                      void *ctx) {
    cols_ctx c = {at, fn, ctx};
    return faults_trace_lines(text, len, at->path, cols_line, &c, at->err,
                              at->errlen);
}

int faults_trace_load_with(const char *path, int nworkers, void *out,
                           int (*parse)(const char *text, size_t len,
                                        const char *name, int nworkers,
                                        void *out, char *err, size_t errlen),
                           char *err, size_t errlen) {
    char *buf;
    size_t n;
    int rc = faults_trace_read(path, &buf, &n, err, errlen);
    if (!rc) rc = parse(buf, n, path, nworkers, out, err, errlen);
    free(buf);
    return rc;
}

int faults_trace_load(const char *path, int nworkers, faults_trace **out,
                      char *err, size_t errlen) {
    *out = NULL;
    char *buf;
    size_t n;
    int rc = faults_trace_read(path, &buf, &n, err, errlen);
    if (!rc) rc = faults_trace_parse(buf, n, path, nworkers, out, err, errlen);
    free(buf);
    return rc;
}

const faults_period *faults_trace_periods(const faults_trace *t, int w,
                                          size_t *n) {
    *n = t->w[w].len;
    return t->w[w].p;
}
