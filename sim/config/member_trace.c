/*
 * member_trace.c -- the parser of membership trace files
 * (member_trace.h): the file read whole (faults_trace_read), split in
 * lines (faults_trace_lines), each line's fields found with their columns
 * (faults_fields), checked against its worker's state and appended to the
 * list of events.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "sim/config/member_trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/config/faults_trace.h"

/* A worker's state while the file is read. */
typedef struct {
    int seen;   /* it has had an event */
    int member; /* after its last event */
    int first;  /* its first event was a join: absent from time 0 */
    long since; /* the line of its last event */
} mstate;

struct mbt_trace {
    mbt_event *e;
    size_t len, cap;
    double last_s; /* the newest event's time as written, -1 before any */
    long last_line;
    int n;      /* workers */
    mstate *st; /* per worker */
};

typedef faults_where where;

/* The message at column col (0-based) of the line. */
#define field_err(at, col, ...) faults_where_err(at, (col) + 1, __VA_ARGS__)

static const char *const LINE_FORM = "'t_s worker join|leave'";

static int parse_worker(const where *at, const faults_token *t, int nworkers,
                        int *w) {
    char *end;
    errno = 0;
    long long v = strtoll(t->s, &end, 10);
    if (t->s[0] < '0' || t->s[0] > '9' || *end)
        return field_err(at, t->col,
                         "bad worker '%.40s' (expected a worker 0..%d)", t->s,
                         nworkers - 1);
    if (errno == ERANGE || v >= nworkers)
        return field_err(at, t->col,
                         "worker %.40s out of range (expected a worker 0..%d)",
                         t->s, nworkers - 1);
    *w = (int)v;
    return 0;
}

static int parse_event(const where *at, const faults_token *t, int *join) {
    if (strcmp(t->s, "join") == 0) *join = 1;
    else if (strcmp(t->s, "leave") == 0) *join = 0;
    else
        return field_err(at, t->col,
                         "unknown event '%.40s' (expected join or leave)",
                         t->s);
    return 0;
}

/* Worker w's event at line at->line agrees with its state: its events
 * alternate (the first may be either). */
static int check_state(mbt_trace *t, const where *at, const faults_token *tok,
                       int w, int join) {
    mstate *m = &t->st[w];
    if (!m->seen) {
        m->seen = 1;
        m->first = join;
    } else if (join && m->member) {
        return field_err(at, tok->col,
                         "worker %d joins but is a member since line %ld "
                         "(expected a leave before its next join)",
                         w, m->since);
    } else if (!join && !m->member) {
        return field_err(at, tok->col,
                         "worker %d leaves but is absent since line %ld "
                         "(expected a join before its next leave)",
                         w, m->since);
    }
    m->member = join;
    m->since = at->line;
    return 0;
}

/* Parses one line (comments and blank lines included): 0, -1 bad, -2 out
 * of memory. */
static int parse_line(mbt_trace *t, const where *at, char *line) {
    faults_token tok[4];
    int n =
        faults_fields3(at, line, tok, LINE_FORM, "event", "worker and event");
    if (n <= 0) return n;
    double s = 0;
    int w = 0, join = 0;
    if (faults_token_time(at, &tok[0], &s) ||
        parse_worker(at, &tok[1], t->n, &w) || parse_event(at, &tok[2], &join))
        return -1;
    if (faults_time_order(at, &tok[0], s, t->last_s, t->last_line) ||
        check_state(t, at, &tok[2], w, join))
        return -1;
    if (t->len == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        mbt_event *p = realloc(t->e, cap * sizeof *p);
        if (!p) return -2;
        t->e = p;
        t->cap = cap;
    }
    t->e[t->len++] = (mbt_event){(int64_t)llround(s * 1e9), w, join};
    t->last_s = s;
    t->last_line = at->line;
    return 0;
}

void mbt_free(mbt_trace *t) {
    if (!t) return;
    free(t->e);
    free(t->st);
    free(t);
}

/* One line of a membership trace (faults_trace_cols). */
static int mline(void *t, char *line, const where *at) {
    return parse_line(t, at, line);
}

int mbt_parse(const char *text, size_t len, const char *name, int nworkers,
              mbt_trace **out, char *err, size_t errlen) {
    *out = NULL;
    if (nworkers < 1)
        return msg_set(err, errlen, MSG_EINPUT, "%s: nworkers must be >= 1",
                       name);
    mbt_trace *t = calloc(1, sizeof *t);
    if (t) t->st = calloc((size_t)nworkers, sizeof *t->st);
    if (!t || !t->st) {
        mbt_free(t);
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", name);
    }
    t->n = nworkers;
    t->last_s = -1;
    for (int w = 0; w < nworkers; w++) t->st[w].member = 1;
    where at = {name, 0, err, errlen};
    int rc = faults_trace_cols(text, len, &at, mline, t);
    if (rc) {
        mbt_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static int parse_any(const char *text, size_t len, const char *name,
                     int nworkers, void *out, char *err, size_t errlen) {
    return mbt_parse(text, len, name, nworkers, out, err, errlen);
}

int mbt_load(const char *path, int nworkers, mbt_trace **out, char *err,
             size_t errlen) {
    *out = NULL;
    return faults_trace_load_with(path, nworkers, out, parse_any, err, errlen);
}

const mbt_event *mbt_events(const mbt_trace *t, size_t *n) {
    *n = t->len;
    return t->e;
}

int mbt_absent_at_start(const mbt_trace *t, int w) {
    return t->st[w].seen && t->st[w].first;
}
