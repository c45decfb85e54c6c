/*
 * bw_trace.c -- the parser of bandwidth trace files and the diurnal
 * form's slots (bw_trace.h): the file read whole (faults_trace_read),
 * split in lines, each line's fields found with their columns, checked
 * and appended to the list of steps.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "sim/config/bw_trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/config/faults_trace.h"

#define BWT_MIN_GBPS 1e-6 /* the scenario's bandwidth range (scenario.h) */
#define BWT_MAX_GBPS 1e9
#define BWT_PI 3.14159265358979323846

struct bwt_trace {
    bwt_step *s;
    size_t len, cap;
    double last_s; /* the newest step's time as written, -1 before any */
    long last_line;
};

typedef faults_where where;

/* The message at column col (0-based) of the line. */
#define field_err(at, col, ...) faults_where_err(at, (col) + 1, __VA_ARGS__)

typedef faults_token token;

static const char *const LINE_FORM = "'t_s link gbps'";

static int parse_link(const where *at, const token *t, int nworkers, int *l) {
    if (strcmp(t->s, "all") == 0) {
        *l = -1;
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(t->s, &end, 10);
    if (t->s[0] < '0' || t->s[0] > '9' || *end)
        return field_err(at, t->col,
                         "bad link '%.40s' (expected a worker 0..%d or all)",
                         t->s, nworkers - 1);
    if (errno == ERANGE || v >= nworkers)
        return field_err(at, t->col,
                         "link %.40s out of range (expected a worker 0..%d or "
                         "all)",
                         t->s, nworkers - 1);
    *l = (int)v;
    return 0;
}

static int parse_gbps(const where *at, const token *t, double *g) {
    if (strcmp(t->s, "inf") == 0) {
        *g = INFINITY;
        return 0;
    }
    char *end;
    double v = strtod(t->s, &end);
    if (end == t->s || *end || !isfinite(v) || v != v)
        return field_err(at, t->col,
                         "bad rate '%.40s' (expected a number of Gbit/s in "
                         "[1e-06, 1e+09] or inf)",
                         t->s);
    if (v < BWT_MIN_GBPS || v > BWT_MAX_GBPS)
        return field_err(at, t->col,
                         "rate %.40s is out of range (expected a number of "
                         "Gbit/s in [1e-06, 1e+09] or inf)",
                         t->s);
    *g = v;
    return 0;
}

/* Parses one line (comments and blank lines included): 0, -1 bad, -2 out
 * of memory. */
static int parse_line(bwt_trace *t, const where *at, char *line, int nworkers) {
    token tok[4];
    int n = faults_fields3(at, line, tok, LINE_FORM, "rate", "link and rate");
    if (n <= 0) return n;
    double s = 0, g = 0;
    int l = 0;
    if (faults_token_time(at, &tok[0], &s) ||
        parse_link(at, &tok[1], nworkers, &l) || parse_gbps(at, &tok[2], &g))
        return -1;
    if (faults_time_order(at, &tok[0], s, t->last_s, t->last_line)) return -1;
    if (t->len == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        bwt_step *p = realloc(t->s, cap * sizeof *p);
        if (!p) return -2;
        t->s = p;
        t->cap = cap;
    }
    t->s[t->len++] = (bwt_step){(int64_t)llround(s * 1e9), l, g};
    t->last_s = s;
    t->last_line = at->line;
    return 0;
}

void bwt_free(bwt_trace *t) {
    if (!t) return;
    free(t->s);
    free(t);
}

/* One line of a bandwidth trace (faults_trace_cols). */
typedef struct {
    bwt_trace *t;
    int nworkers;
} bline_ctx;

static int bline(void *ctx, char *line, const where *at) {
    bline_ctx *c = ctx;
    return parse_line(c->t, at, line, c->nworkers);
}

int bwt_parse(const char *text, size_t len, const char *name, int nworkers,
              bwt_trace **out, char *err, size_t errlen) {
    *out = NULL;
    if (nworkers < 1)
        return msg_set(err, errlen, MSG_EINPUT, "%s: nworkers must be >= 1",
                       name);
    bwt_trace *t = calloc(1, sizeof *t);
    if (!t) return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", name);
    t->last_s = -1;
    where at = {name, 0, err, errlen};
    bline_ctx c = {t, nworkers};
    int rc = faults_trace_cols(text, len, &at, bline, &c);
    if (rc) {
        bwt_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static int parse_any(const char *text, size_t len, const char *name,
                     int nworkers, void *out, char *err, size_t errlen) {
    return bwt_parse(text, len, name, nworkers, out, err, errlen);
}

int bwt_load(const char *path, int nworkers, bwt_trace **out, char *err,
             size_t errlen) {
    *out = NULL;
    return faults_trace_load_with(path, nworkers, out, parse_any, err, errlen);
}

const bwt_step *bwt_steps(const bwt_trace *t, size_t *n) {
    *n = t->len;
    return t->s;
}

/* h_k, hours: k slots of period_h / steps each. */
static double slot_hours(const bwt_diurnal *d, int64_t k) {
    return (double)k * d->period_h / d->steps;
}

int64_t bwt_diurnal_start(const bwt_diurnal *d, int64_t k) {
    return (int64_t)llround(slot_hours(d, k) * 3600e9);
}

double bwt_diurnal_gbps(const bwt_diurnal *d, int64_t k) {
    double x = 2 * BWT_PI * (slot_hours(d, k) - d->phase_h) / d->period_h;
    return d->low_gbps + (d->high_gbps - d->low_gbps) * (1 + cos(x)) / 2;
}
