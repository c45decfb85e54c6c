/*
 * faults.c -- failure/repair processes of the workers: random (GSL) or
 * read from a trace file.
 *
 * Random mode.  Worker w owns the generator rng_stream(seed, RNG_FAULTS, w)
 * and draws, per call of faults_next(), one up time then one down time, in
 * that order, so its sequence depends only on (seed, w).  Up times are
 * exponential with mean mtbf_s, or Weibull with shape k and scale
 * mtbf_s / Gamma(1 + 1/k) (mean mtbf_s); down times are exponential with
 * mean mttr_s.  Each period is rounded to the nearest nanosecond and made
 * at least 1 ns.  The first failure is at the first up time after 0; each
 * later up time starts at the previous repair.  A period beyond the int64
 * nanosecond range means "never": a failure that would fall there ends the
 * worker's failures (faults_next returns 0), a repair there is INT64_MAX.
 *
 * Trace mode (spec->trace != NULL; it takes precedence over mtbf_s, which
 * is then ignored).  Lines are
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
 * The trace is parsed whole (faults_trace_parse, from bytes; the scenario
 * loader parses it too, so a bad trace is an input error before any run);
 * a file is at most FAULTS_TRACE_MAX_BYTES bytes and a NUL byte is an
 * error at its line.
 *
 * Errors are one line, "path:line: what is wrong (expected ...)"; a file
 * that cannot be opened or read gives "path: cannot open: <reason>" or
 * "path: cannot read: <reason>", and a bad spec "faults: ...".
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "sim/engine/faults.h"
#include "sim/base/msg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_gamma.h>

#include "sim/base/rng.h"

enum { MODE_NONE, MODE_RANDOM, MODE_TRACE };

/* Trace times above this many seconds do not fit int64 nanoseconds. */
#define TRACE_MAX_S 9.2e9
/* Smallest Weibull shape: keeps Gamma(1 + 1/k) finite (GSL's limit is
 * 171) and the distribution within reason. */
#define WEIBULL_MIN_SHAPE 0.01

typedef struct {
    int64_t fail, repair;
} period;

typedef struct {
    period *p;
    size_t len, cap, next; /* next: the period faults_next returns next */
    int64_t last_ns;       /* time of the last transition, -1 before any */
    double last_s;         /* the same, in seconds as written */
    int down;              /* state after the last transition */
} plist;

struct faults_trace {
    int n;          /* workers */
    plist *w;       /* each worker's periods */
};

struct faults {
    int n, mode;
    faults_dist dist;
    double mtbf_s, mttr_s, weibull_shape, weibull_scale;
    gsl_rng **rng;  /* MODE_RANDOM: one generator per worker */
    int64_t *clock; /* MODE_RANDOM: end of each worker's last down period */
    plist *trace;   /* MODE_TRACE: each worker's periods */
};

/* Seconds to nanoseconds, rounded to nearest, at least 1, INT64_MAX when
 * out of range (or NaN). */
static int64_t period_ns(double s) {
    double v = s * 1e9;
    if (!(v < 9.2e18)) return INT64_MAX;
    int64_t ns = (int64_t)llround(v);
    return ns < 1 ? 1 : ns;
}

/* ---- random failures ----------------------------------------------------- */

/* Checks the random part of the spec; 0 or -1 with a message. */
static int check_random(const faults_spec *s, char *err, size_t errlen) {
    if (!(s->mtbf_s >= 0 && isfinite(s->mtbf_s))) {
        msg_set(err, errlen, 0, "faults: mtbf_s %g is invalid (expected a finite "
            "number of seconds >= 0)", s->mtbf_s);
        return -1;
    }
    if (s->mtbf_s == 0) return 0;
    if (!(s->mttr_s > 0 && isfinite(s->mttr_s))) {
        msg_set(err, errlen, 0, "faults: mttr_s %g is invalid (expected a finite "
            "number of seconds > 0 when mtbf_s > 0)", s->mttr_s);
        return -1;
    }
    if (s->dist != FAULTS_EXPONENTIAL && s->dist != FAULTS_WEIBULL) {
        msg_set(err, errlen, 0, "faults: unknown distribution %d (expected "
            "exponential or weibull)", (int)s->dist);
        return -1;
    }
    if (s->dist == FAULTS_WEIBULL &&
        !(s->weibull_shape >= WEIBULL_MIN_SHAPE &&
          isfinite(s->weibull_shape))) {
        msg_set(err, errlen, 0, "faults: weibull_shape %g is invalid (expected a "
            "finite number >= %g)", s->weibull_shape, WEIBULL_MIN_SHAPE);
        return -1;
    }
    return 0;
}

static int init_random(faults *f, const faults_spec *s, uint64_t seed) {
    f->mode = MODE_RANDOM;
    f->dist = s->dist;
    f->mtbf_s = s->mtbf_s;
    f->mttr_s = s->mttr_s;
    if (s->dist == FAULTS_WEIBULL) {
        f->weibull_shape = s->weibull_shape;
        f->weibull_scale =
            s->mtbf_s / gsl_sf_gamma(1.0 + 1.0 / s->weibull_shape);
    }
    f->rng = calloc((size_t)f->n, sizeof *f->rng);
    f->clock = calloc((size_t)f->n, sizeof *f->clock);
    if (!f->rng || !f->clock) return -1;
    for (int w = 0; w < f->n; w++) {
        f->rng[w] = rng_stream(seed, RNG_FAULTS, (uint32_t)w);
        if (!f->rng[w]) return -1;
    }
    return 0;
}

static double draw_up(faults *f, gsl_rng *r) {
    if (f->dist == FAULTS_WEIBULL)
        return gsl_ran_weibull(r, f->weibull_scale, f->weibull_shape);
    return gsl_ran_exponential(r, f->mtbf_s);
}

static int next_random(faults *f, int w, int64_t *fail_ns,
                       int64_t *repair_ns) {
    int64_t t = f->clock[w];
    if (t == INT64_MAX) return 0;
    int64_t up = period_ns(draw_up(f, f->rng[w]));
    int64_t down = period_ns(gsl_ran_exponential(f->rng[w], f->mttr_s));
    if (up >= INT64_MAX - t) { /* beyond the end of time: never again */
        f->clock[w] = INT64_MAX;
        return 0;
    }
    *fail_ns = t + up;
    *repair_ns = down >= INT64_MAX - *fail_ns ? INT64_MAX : *fail_ns + down;
    f->clock[w] = *repair_ns;
    return 1;
}

/* ---- trace files --------------------------------------------------------- */

/* Appends a down period starting at t, repaired at INT64_MAX until an up
 * line says otherwise. */
static int plist_push(plist *l, int64_t t) {
    if (l->len == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        period *p = realloc(l->p, cap * sizeof *p);
        if (!p) return -1;
        l->p = p;
        l->cap = cap;
    }
    l->p[l->len++] = (period){t, INT64_MAX};
    return 0;
}

/* Where a trace line is: for messages. */
typedef struct {
    const char *path;
    long line;
    char *err;
    size_t errlen;
} where;

static int line_err(const where *at, const char *fmt, ...) {
    if (at->err && at->errlen) {
        int k = snprintf(at->err, at->errlen, "%s:%ld: ", at->path, at->line);
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

static int parse_time(const where *at, const char *tok, double *s,
                      int64_t *ns) {
    char *end;
    errno = 0;
    double v = strtod(tok, &end);
    if (end == tok || *end || !isfinite(v))
        return line_err(at, "bad time '%.40s' (expected a finite number of "
                        "seconds)", tok);
    if (v < 0)
        return line_err(at, "negative time '%.40s' (expected seconds >= 0)",
                        tok);
    if (v > TRACE_MAX_S)
        return line_err(at, "time '%.40s' too large (expected at most %g s)",
                        tok, TRACE_MAX_S);
    *s = v;
    *ns = (int64_t)llround(v * 1e9);
    return 0;
}

static int parse_worker(const where *at, const char *tok, int nworkers,
                        int *w) {
    char *end;
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (tok[0] < '0' || tok[0] > '9' || *end)
        return line_err(at, "bad worker '%.40s' (expected an integer "
                        "0..%d)", tok, nworkers - 1);
    if (errno == ERANGE || v >= nworkers)
        return line_err(at, "worker %.40s out of range (expected 0..%d)", tok,
                        nworkers - 1);
    *w = (int)v;
    return 0;
}

static int parse_state(const where *at, const char *tok, int *down) {
    if (strcmp(tok, "0") == 0 || strcmp(tok, "down") == 0) *down = 1;
    else if (strcmp(tok, "1") == 0 || strcmp(tok, "up") == 0) *down = 0;
    else
        return line_err(at, "unknown state '%.40s' (expected 0, 1, down or "
                        "up)", tok);
    return 0;
}

/* Applies one transition of worker w at time (s, ns) to its list. */
static int apply(faults_trace *t, const where *at, int w, double s,
                 int64_t ns, int down) {
    plist *l = &t->w[w];
    if (l->last_ns >= 0 && ns <= l->last_ns)
        return line_err(at, "worker %d: time %.12g s is not after %.12g s "
                        "(times must increase)", w, s, l->last_s);
    if (down == l->down)
        return line_err(at, "worker %d is already %s (states must "
                        "alternate, starting with down)", w,
                        down ? "down" : "up");
    if (down && plist_push(l, ns) < 0) {
        line_err(at, "out of memory");
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
        return line_err(at, "%s%d field%s (expected 'time_s state' or "
                        "'time_s worker state')", n > 3 ? "more than " : "",
                        n > 3 ? 3 : n, n == 1 ? "" : "s");
    double s = 0;
    int64_t ns = 0;
    int w = 0, down = 0;
    if (parse_time(at, fld[0], &s, &ns) < 0) return -1;
    if (n == 3 && parse_worker(at, fld[1], t->n, &w) < 0) return -1;
    if (parse_state(at, fld[n - 1], &down) < 0) return -1;
    return apply(t, at, w, s, ns, down);
}

void faults_trace_free(faults_trace *t) {
    if (!t) return;
    for (int w = 0; w < t->n; w++) free(t->w[w].p);
    free(t->w);
    free(t);
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
    size_t longest = 0;
    for (size_t i = 0, st = 0; i <= len; i++)
        if (i == len || text[i] == '\n') {
            if (i - st > longest) longest = i - st;
            st = i + 1;
        }
    char *line = t && t->w ? malloc(longest + 1) : NULL;
    if (!line) {
        faults_trace_free(t);
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", name);
    }
    t->n = nworkers;
    for (int w = 0; w < nworkers; w++) t->w[w].last_ns = -1;
    where at = {name, 0, err, errlen};
    int rc = 0;
    for (size_t st = 0; st < len && rc == 0;) {
        const char *nl = memchr(text + st, '\n', len - st);
        size_t n = nl ? (size_t)(nl - (text + st)) : len - st;
        at.line++;
        memcpy(line, text + st, n);
        line[n] = 0;
        int r = memchr(line, 0, n) ? line_err(&at, "NUL byte (expected a "
                                              "text line)")
                                   : parse_line(t, &at, line);
        if (r) rc = r == -2 ? MSG_ENOMEM : MSG_EINPUT;
        st += n + 1;
    }
    free(line);
    if (rc) {
        faults_trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int faults_trace_load(const char *path, int nworkers, faults_trace **out,
                      char *err, size_t errlen) {
    *out = NULL;
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
        rc = msg_set(err, errlen, MSG_EINPUT, "%s: larger than %d MiB "
                     "(expected a trace of at most %d bytes)", path,
                     FAULTS_TRACE_MAX_BYTES >> 20, FAULTS_TRACE_MAX_BYTES);
    else if (!rc)
        rc = faults_trace_parse(buf, n, path, nworkers, out, err, errlen);
    free(buf);
    return rc;
}

static int init_trace(faults *f, const char *path, char *err,
                      size_t errlen) {
    f->mode = MODE_TRACE;
    faults_trace *t;
    if (faults_trace_load(path, f->n, &t, err, errlen)) return -1;
    f->trace = t->w; /* the lists move into f */
    free(t);
    return 0;
}

static int next_trace(faults *f, int w, int64_t *fail_ns,
                      int64_t *repair_ns) {
    plist *l = &f->trace[w];
    if (l->next >= l->len) return 0;
    *fail_ns = l->p[l->next].fail;
    *repair_ns = l->p[l->next].repair;
    l->next++;
    return 1;
}

/* ---- the public face ----------------------------------------------------- */

faults *faults_new(const faults_spec *spec, int nworkers, uint64_t seed,
                   char *err, size_t errlen) {
    if (!spec || nworkers < 1) {
        msg_set(err, errlen, 0, "faults: %s", !spec ? "no spec"
            : "nworkers must be >= 1");
        return NULL;
    }
    if (!spec->trace && check_random(spec, err, errlen) < 0) return NULL;
    faults *f = calloc(1, sizeof *f);
    if (!f) {
        msg_set(err, errlen, 0, "faults: out of memory");
        return NULL;
    }
    f->n = nworkers;
    f->mode = MODE_NONE;
    int rc = 0;
    if (spec->trace) rc = init_trace(f, spec->trace, err, errlen);
    else if (spec->mtbf_s > 0 && init_random(f, spec, seed) < 0) {
        msg_set(err, errlen, 0, "faults: out of memory");
        rc = -1;
    }
    if (rc < 0) {
        faults_free(f);
        return NULL;
    }
    return f;
}

void faults_free(faults *f) {
    if (!f) return;
    if (f->rng)
        for (int w = 0; w < f->n; w++)
            if (f->rng[w]) gsl_rng_free(f->rng[w]);
    if (f->trace)
        for (int w = 0; w < f->n; w++) free(f->trace[w].p);
    free(f->rng);
    free(f->clock);
    free(f->trace);
    free(f);
}

/* Returns 0 for a NULL f or a worker out of range, as for a worker that
 * never fails. */
int faults_next(faults *f, int w, int64_t *fail_ns, int64_t *repair_ns) {
    if (!f || w < 0 || w >= f->n) return 0;
    switch (f->mode) {
    case MODE_RANDOM: return next_random(f, w, fail_ns, repair_ns);
    case MODE_TRACE: return next_trace(f, w, fail_ns, repair_ns);
    default: return 0;
    }
}
