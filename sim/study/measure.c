/*
 * measure.c -- the measurements of a buyer's cluster (measure.h): a file
 * read whole, its format told from its content, and the three CSV
 * formats (runs, step times, outages) read strictly, row by row, into the
 * set; nccl-tests and iperf3 are measure_text.c's.
 *
 * A file is all or nothing: what a failed file appended is taken back, so
 * the set holds exactly the files that were read.
 */
#include "sim/study/measure_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jw.h"
#include "sim/base/msg.h"
#include "sim/config/json.h"

#define EXACT_INT 9007199254740992.0 /* 2^53 */

/* What every "none of the formats" message expects. */
#define FORMATS                                                                \
    "expected a runs CSV (method,workers,params,codec,H,fragments,tau,"        \
    "steps,step_time_s,bandwidth_gbps,latency_ms,wall_s), the output of "      \
    "nccl-tests' all_reduce_perf, the JSON of iperf3 --json, a step-time "     \
    "CSV (worker,step,seconds) or an outage CSV (worker,down_s,up_s)"

/* ---------------------------------------------------------------------
 * Shared helpers (measure_int.h)
 */

int meas__vfail(const meas__src *src, int line, int col, const char *path,
                const char *fmt, va_list ap) {
    char msg[512];
    msg_vset(msg, sizeof msg, 0, fmt, ap);
    return msg_set(src->err, src->errlen, MSG_EINPUT, "%s:%d:%d: %s%s%s",
                   src->name, line, col, path ? path : "", path ? ": " : "",
                   msg);
}

int meas__fail(const meas__src *src, int line, int col, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = meas__vfail(src, line, col, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int meas__oom(const meas__src *src) {
    return msg_set(src->err, src->errlen, MSG_ENOMEM, "%s: out of memory",
                   src->name);
}

int meas__blank(char c) {
    return c == ' ' || c == '\t';
}

int meas__next_line(const meas__src *src, size_t *pos, meas__line *ln) {
    if (*pos >= src->len) return 0;
    const char *s = src->text + *pos;
    const char *nl = memchr(s, '\n', src->len - *pos);
    size_t n = nl ? (size_t)(nl - s) : src->len - *pos;
    *pos += n + (nl != NULL);
    ln->s = s;
    ln->n = n > 0 && s[n - 1] == '\r' ? n - 1 : n;
    ln->no++;
    return 1;
}

int meas__col(const meas__line *ln, const char *p) {
    int col = 1;
    for (const char *q = ln->s; q < p; q++)
        if (((unsigned char)*q & 0xC0) != 0x80) col++;
    return col;
}

static int is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* Digits from s[*i] on: how many. */
static size_t digits(const char *s, size_t n, size_t *i) {
    size_t d = 0;
    while (*i < n && is_digit(s[*i])) (*i)++, d++;
    return d;
}

int meas__decimal(const char *s, size_t n, double *out) {
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    size_t d = digits(s, n, &i);
    if (i < n && s[i] == '.') {
        i++;
        d += digits(s, n, &i);
    }
    if (d == 0) return 1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (digits(s, n, &i) == 0) return 1;
    }
    if (i != n) return 1;
    char small[64], *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) return 2;
    memcpy(buf, s, n);
    buf[n] = 0;
    errno = 0;
    double v = strtod(buf, NULL);
    int range = errno == ERANGE || !isfinite(v);
    if (buf != small) free(buf);
    if (range) return 2;
    *out = v;
    return 0;
}

/* Room for one more of the n items of sz bytes at *p.  The capacity is
 * the least power of two above n, at least 16: it never shrinks, so a
 * count cut back (a failed file) still has its room. */
static int grow(void **p, int n, size_t sz) {
    if (n == INT_MAX) return -1;
    if (n > 0 && (n < 16 || (n & (n - 1)))) return 0;
    size_t cap = n < 16 ? 16 : 2 * (size_t)n;
    void *q = realloc(*p, cap * sz);
    if (!q) return -1;
    *p = q;
    return 0;
}

int meas__push_row(const meas__src *src, const meas_row *r) {
    meas_set *m = src->m;
    if (grow((void **)&m->rows, m->nrows, sizeof *r)) return meas__oom(src);
    m->rows[m->nrows++] = *r;
    return 0;
}

int meas__push_step(const meas__src *src, const meas_step *s) {
    meas_set *m = src->m;
    if (grow((void **)&m->steps, m->nsteps, sizeof *s)) return meas__oom(src);
    m->steps[m->nsteps++] = *s;
    return 0;
}

int meas__push_outage(const meas__src *src, const meas_outage *o) {
    meas_set *m = src->m;
    if (grow((void **)&m->outages, m->noutages, sizeof *o))
        return meas__oom(src);
    m->outages[m->noutages++] = *o;
    return 0;
}

/* ---------------------------------------------------------------------
 * CSV: fields, columns, values
 */

#define CSV_MAX_FIELDS 16 /* kept of a line; more are counted */

typedef struct {
    const char *s; /* the value, NUL-terminated (in the line's buffer) */
    size_t n;
    int col; /* 1-based column of its first byte (a quote, if quoted) */
} csv_field;

/* Ends the field at out and files it as fld[*nf] (kept when there is
 * room; counted always). */
static void csv_put(char **out, char *start, int col, csv_field *fld, int *nf) {
    if (*nf < CSV_MAX_FIELDS) fld[*nf] = (csv_field){start, *out - start, col};
    *(*out)++ = 0;
    (*nf)++;
}

/* One quoted field from p (at its opening quote) into *out, to the byte
 * past its closing quote: NULL (with the message) when it has none. */
static const char *csv_quoted(const meas__src *src, const meas__line *ln,
                              const char *p, char **out) {
    const char *end = ln->s + ln->n, *open = p++;
    for (;; p++) {
        if (p == end) {
            meas__fail(src, ln->no, meas__col(ln, open),
                       "quoted field without its closing '\"' on this "
                       "line (expected a field that ends on its line)");
            return NULL;
        }
        if (*p == '"' && (p + 1 == end || p[1] != '"')) return p + 1;
        if (*p == '"') p++; /* "" is one quote */
        *(*out)++ = *p;
    }
}

/* Splits ln into *nf fields into buf (ln->n + 1 bytes): unquoted fields
 * trimmed of blanks, quoted ones unquoted.  0, or MSG_EINPUT. */
static int csv_split(const meas__src *src, const meas__line *ln, char *buf,
                     csv_field *fld, int *nf) {
    const char *p = ln->s, *end = ln->s + ln->n;
    char *out = buf;
    for (*nf = 0;;) {
        while (p < end && meas__blank(*p)) p++;
        char *start = out;
        int col = meas__col(ln, p);
        if (p < end && *p == '"') {
            if (!(p = csv_quoted(src, ln, p, &out))) return MSG_EINPUT;
            while (p < end && meas__blank(*p)) p++;
            if (p < end && *p != ',')
                return meas__fail(src, ln->no, meas__col(ln, p),
                                  "text after a quoted field (expected ',' "
                                  "or the end of the line)");
        } else {
            const char *q = p;
            while (q < end && *q != ',') q++;
            const char *last = q;
            while (last > p && meas__blank(last[-1])) last--;
            const char *quote = memchr(p, '"', (size_t)(last - p));
            if (quote)
                return meas__fail(src, ln->no, meas__col(ln, quote),
                                  "'\"' inside an unquoted field (expected "
                                  "the whole field quoted, '\"\"' for a "
                                  "quote)");
            memcpy(out, p, (size_t)(last - p));
            out += last - p;
            p = q;
        }
        csv_put(&out, start, col, fld, nf);
        if (p == end) return 0;
        p++; /* the ',' */
    }
}

/* Whether ln holds nothing (blanks only) or a comment. */
static int csv_skipped(const meas__line *ln) {
    size_t i = 0;
    while (i < ln->n && meas__blank(ln->s[i])) i++;
    return i == ln->n || ln->s[i] == '#';
}

typedef enum { V_WORD, V_INT, V_NUM } csv_kind;

/* A column: its name, the scenario key it sets (runs; NULL none), and
 * what its values are: a word, or an integer / a number >= lo (> lo when
 * lo_open) and <= hi. */
typedef struct {
    const char *name, *key;
    csv_kind kind;
    double lo, hi;
    int lo_open;
} csv_col;

typedef struct {
    meas_format format;
    const csv_col *col;
    int ncols, nrequired; /* the first nrequired must be in the header */
} csv_format;

enum { R_WALL = 11, R_SYNC, R_COMPUTE }; /* the runs columns with no key */

static const csv_col runs_cols[] = {
    {"method", "method.name", V_WORD, 0, 0, 0},
    {"workers", "workers.count", V_INT, 1, EXACT_INT, 0},
    {"params", "model.params", V_NUM, 0, INFINITY, 1},
    {"codec", "method.codec", V_WORD, 0, 0, 0},
    {"H", "method.H", V_INT, 1, EXACT_INT, 0},
    {"fragments", "method.fragments", V_INT, 1, EXACT_INT, 0},
    {"tau", "method.tau", V_INT, 0, EXACT_INT, 0},
    {"steps", "steps", V_INT, 1, EXACT_INT, 0},
    {"step_time_s", "model.step_time_s", V_NUM, 0, INFINITY, 1},
    {"bandwidth_gbps", "network.bandwidth_gbps", V_NUM, 0, INFINITY, 1},
    {"latency_ms", "network.latency_ms", V_NUM, 0, INFINITY, 0},
    {"wall_s", NULL, V_NUM, 0, INFINITY, 1},
    {"sync_blocked_s", NULL, V_NUM, 0, INFINITY, 0},
    {"compute_s", NULL, V_NUM, 0, INFINITY, 0},
};

static const csv_col steps_cols[] = {
    {"worker", NULL, V_INT, 0, SCN_MAX_WORKERS - 1, 0},
    {"step", NULL, V_INT, 0, EXACT_INT, 0},
    {"seconds", NULL, V_NUM, 0, INFINITY, 1},
};

static const csv_col outage_cols[] = {
    {"worker", NULL, V_INT, 0, SCN_MAX_WORKERS - 1, 0},
    {"down_s", NULL, V_NUM, 0, INFINITY, 0},
    {"up_s", NULL, V_NUM, 0, INFINITY, 1},
};

#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))
static const csv_format csv_formats[] = {
    {MEAS_FORMAT_RUNS, runs_cols, NCOLS(runs_cols), 12},
    {MEAS_FORMAT_STEPS, steps_cols, 3, 3},
    {MEAS_FORMAT_OUTAGES, outage_cols, 3, 3},
};

/* "an integer >= 1", "an integer 0..255", "a number > 0". */
static const char *csv_expect(const csv_col *c, char *buf, size_t len) {
    char lo[MSG_NUM_MAX], hi[MSG_NUM_MAX];
    msg_number(c->lo, lo);
    msg_number(c->hi, hi);
    if (c->kind == V_WORD)
        snprintf(buf, len, "a %s name",
                 strcmp(c->name, "codec") ? "method" : "codec");
    else if (c->kind == V_INT && c->hi < EXACT_INT)
        snprintf(buf, len, "an integer %s..%s", lo, hi);
    else
        snprintf(buf, len, "%s %s %s",
                 c->kind == V_INT ? "an integer" : "a number",
                 c->lo_open ? ">" : ">=", lo);
    return buf;
}

/* One value of column c from field f: 0 with *x (numbers), MSG_EINPUT. */
static int csv_value(const meas__src *src, int line, const csv_col *c,
                     const csv_field *f, double *x) {
    char want[96];
    csv_expect(c, want, sizeof want);
    if (c->kind == V_WORD) {
        for (size_t i = 0; i < f->n; i++)
            if ((unsigned char)f->s[i] < 0x20 || f->s[i] == 0x7f)
                return meas__fail(src, line, f->col,
                                  "%s: a control character (expected %s)",
                                  c->name, want);
        return 0;
    }
    int r = meas__decimal(f->s, f->n, x);
    if (r)
        return meas__fail(src, line, f->col, "%s: '%.40s' is %s (expected %s)",
                          c->name, f->s,
                          r == 1 ? "not a number" : "out of range", want);
    if (c->kind == V_INT && *x != floor(*x))
        return meas__fail(src, line, f->col,
                          "%s: '%.40s' is not an integer (expected %s)",
                          c->name, f->s, want);
    if (*x < c->lo || (c->lo_open && *x == c->lo) || *x > c->hi)
        return meas__fail(src, line, f->col,
                          "%s: '%.40s' is out of range (expected %s)", c->name,
                          f->s, want);
    return 0;
}

/* A header's columns: col_of[i] is header field i's column, at[c] the
 * header field of column c (-1 absent). */
typedef struct {
    const csv_format *fmt;
    int n;
    int col_of[CSV_MAX_FIELDS]; /* KEY_COL: a runs column named by a key */
    int at[CSV_MAX_FIELDS];
    int line;
    int nkeys; /* the key columns, in header order: their names */
    char key[MEAS_MAX_KEY_COLS][MEAS_SET_MAX];
} csv_header;

#define KEY_COL (-1)

/* Header field f of a runs CSV as a key column.  Returns 0, or the
 * message of a key given twice or one too many. */
static int key_column(const meas__src *src, const meas__line *ln,
                      const csv_field *f, int i, csv_header *h) {
    for (int k = 0; k < h->nkeys; k++)
        if (!strcmp(h->key[k], f->s))
            return meas__fail(src, ln->no, f->col, "column '%s' given twice",
                              f->s);
    if (h->nkeys == MEAS_MAX_KEY_COLS || f->n >= MEAS_SET_MAX / 2)
        return meas__fail(src, ln->no, f->col,
                          "%s: more than %d key columns or a key longer than "
                          "%d bytes",
                          f->s, MEAS_MAX_KEY_COLS, MEAS_SET_MAX / 2 - 1);
    snprintf(h->key[h->nkeys++], MEAS_SET_MAX, "%s", f->s);
    h->col_of[i] = KEY_COL;
    return 0;
}

/* The column named f in fmt, or -1. */
static int csv_find(const csv_format *fmt, const csv_field *f) {
    for (int c = 0; c < fmt->ncols; c++)
        if (strcmp(fmt->col[c].name, f->s) == 0) return c;
    return -1;
}

/* fmt's column names, joined with ", ". */
static const char *csv_names(const csv_format *fmt, char *buf, size_t len) {
    const char *names[CSV_MAX_FIELDS];
    for (int c = 0; c < fmt->ncols; c++) names[c] = fmt->col[c].name;
    return msg_name_list(names, fmt->ncols, buf, len);
}

/* Reads the header of fmt from its nf fields: each a known column, once,
 * the required ones all there. */
static int csv_header_read(const meas__src *src, const meas__line *ln,
                           const csv_field *fld, int nf, const csv_format *fmt,
                           csv_header *h) {
    char names[320];
    csv_names(fmt, names, sizeof names);
    *h = (csv_header){.fmt = fmt, .n = nf, .line = ln->no};
    for (int c = 0; c < CSV_MAX_FIELDS; c++) h->at[c] = -1;
    /* fmt has fewer than CSV_MAX_FIELDS columns: a longer header fails
     * at an unknown or repeated name among its first fields. */
    for (int i = 0; i < nf && i < CSV_MAX_FIELDS; i++) {
        const csv_field *f = &fld[i];
        int c = csv_find(fmt, f);
        if (c < 0 && fmt->format == MEAS_FORMAT_RUNS &&
            scn_key_segments(f->s, f->n) >= 2) {
            int rc = key_column(src, ln, f, i, h);
            if (rc) return rc;
            continue;
        }
        if (c < 0)
            return meas__fail(src, ln->no, f->col,
                              "unknown column '%.40s' (expected one of: %s%s)",
                              f->s, names,
                              fmt->format == MEAS_FORMAT_RUNS
                                  ? "; or a dotted scenario key"
                                  : "");
        if (h->at[c] >= 0)
            return meas__fail(src, ln->no, f->col,
                              "column '%s' given twice (first at column %d)",
                              f->s, fld[h->at[c]].col);
        h->at[c] = i;
        h->col_of[i] = c;
    }
    for (int c = 0; c < fmt->nrequired; c++)
        if (h->at[c] < 0)
            return meas__fail(src, ln->no, 1,
                              "missing column '%s' (expected the columns "
                              "%s%s)",
                              fmt->col[c].name, names,
                              fmt->ncols > fmt->nrequired
                                  ? "; the last ones optional"
                                  : "");
    return 0;
}

/* ---------------------------------------------------------------------
 * CSV rows
 */

/* One row's values by column: has[c] (0: column absent or field empty). */
typedef struct {
    int has[CSV_MAX_FIELDS];
    double x[CSV_MAX_FIELDS];
    const csv_field *f[CSV_MAX_FIELDS];
    const csv_header *h;
    const csv_field *keyf[MEAS_MAX_KEY_COLS]; /* the key columns' fields */
} csv_values;

/* "key=word", the word quoted as JSON when it would read as JSON. */
static int word_set(char *out, const char *key, const char *w) {
    int k;
    if (!json_valid(w)) {
        k = snprintf(out, MEAS_SET_MAX, "%s=%s", key, w);
    } else {
        char *q = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&q, &len);
        if (!f) return -1;
        jw j;
        jw_init(&j, f);
        jw_str(&j, NULL, w);
        int bad = ferror(f);
        if (fclose(f) || bad) {
            free(q);
            return -1;
        }
        k = snprintf(out, MEAS_SET_MAX, "%s=%s", key, q);
        free(q);
    }
    return k < 0 || k >= MEAS_SET_MAX ? 1 : 0;
}

/* The overrides of a runs row, in column order. */
static int runs_sets(const meas__src *src, int line, const csv_values *v,
                     meas_row *r) {
    for (int c = 0; c < R_WALL; c++) {
        if (!v->has[c]) continue;
        const csv_col *col = &runs_cols[c];
        char *out = r->sets[r->nset], num[MSG_NUM_MAX];
        int bad = 0;
        if (col->kind == V_WORD) bad = word_set(out, col->key, v->f[c]->s);
        else
            snprintf(out, MEAS_SET_MAX, "%s=%s", col->key,
                     msg_number(v->x[c], num)); /* always fits */
        if (bad < 0) return meas__oom(src);
        if (bad)
            return meas__fail(src, line, v->f[c]->col,
                              "%s: longer than %d bytes (expected a %s name)",
                              col->name,
                              MEAS_SET_MAX - 2 - (int)strlen(col->key),
                              col->name);
        r->set_col[r->nset++] = v->f[c]->col;
    }
    for (int k = 0; k < v->h->nkeys; k++) { /* as --set reads a value */
        const csv_field *f = v->keyf[k];
        if (f->n == 0) continue;
        int n = snprintf(r->sets[r->nset], MEAS_SET_MAX, "%s=%s", v->h->key[k],
                         f->s);
        if (n < 0 || n >= MEAS_SET_MAX)
            return meas__fail(src, line, f->col,
                              "%s: a value longer than %d bytes", v->h->key[k],
                              MEAS_SET_MAX - 2 - (int)strlen(v->h->key[k]));
        r->set_col[r->nset++] = f->col;
    }
    return 0;
}

static int runs_row(const meas__src *src, int line, const csv_values *v) {
    meas_row r;
    memset(&r, 0, sizeof r);
    r.kind = MEAS_RUN;
    r.file = src->file;
    r.line = line;
    if (!v->has[R_WALL]) {
        int col = v->f[R_WALL]->col;
        return meas__fail(src, line, col,
                          "wall_s: empty (expected the run's wall time: a "
                          "number > 0)");
    }
    r.measured_s = v->x[R_WALL];
    r.sync_blocked_s = v->has[R_SYNC] ? v->x[R_SYNC] : NAN;
    r.compute_s = v->has[R_COMPUTE] ? v->x[R_COMPUTE] : NAN;
    int rc = runs_sets(src, line, v, &r);
    return rc ? rc : meas__push_row(src, &r);
}

/* A steps or outages row: every field must be given. */
static int log_row(const meas__src *src, int line, const csv_header *h,
                   const csv_values *v) {
    for (int c = 0; c < 3; c++)
        if (!v->has[c]) {
            char want[96];
            return meas__fail(src, line, v->f[c]->col,
                              "%s: empty (expected %s)", h->fmt->col[c].name,
                              csv_expect(&h->fmt->col[c], want, sizeof want));
        }
    if (h->fmt->format == MEAS_FORMAT_STEPS) {
        meas_step s = {src->file, line, (int)v->x[0], (int64_t)v->x[1],
                       v->x[2]};
        return meas__push_step(src, &s);
    }
    if (!(v->x[2] > v->x[1])) {
        char d[MSG_NUM_MAX], u[MSG_NUM_MAX];
        return meas__fail(src, line, v->f[2]->col,
                          "up_s: %s is not after down_s %s (expected up_s > "
                          "down_s)",
                          msg_number(v->x[2], u), msg_number(v->x[1], d));
    }
    meas_outage o = {src->file, line, (int)v->x[0], v->x[1], v->x[2]};
    return meas__push_outage(src, &o);
}

/* One data row of nf fields, as the header says. */
static int csv_row(const meas__src *src, const meas__line *ln,
                   const csv_header *h, const csv_field *fld, int nf) {
    if (nf != h->n) { /* at the first extra field, or the line's end */
        int col = nf > h->n ? fld[h->n].col : meas__col(ln, ln->s + ln->n);
        return meas__fail(src, ln->no, col,
                          "%d field%s, not %d (expected one per column of "
                          "the header at line %d)",
                          nf, nf == 1 ? "" : "s", h->n, h->line);
    }
    csv_values v;
    memset(&v, 0, sizeof v);
    v.h = h;
    for (int i = 0, k = 0; i < nf; i++) {
        int c = h->col_of[i];
        if (c == KEY_COL) {
            v.keyf[k++] = &fld[i];
            continue;
        }
        v.f[c] = &fld[i];
        if (fld[i].n == 0) continue;
        int rc = csv_value(src, ln->no, &h->fmt->col[c], &fld[i], &v.x[c]);
        if (rc) return rc;
        v.has[c] = 1;
    }
    if (h->fmt->format == MEAS_FORMAT_RUNS) return runs_row(src, ln->no, &v);
    return log_row(src, ln->no, h, &v);
}

/* Reads a CSV of fmt: header first, then rows. */
static int read_csv(const meas__src *src, const csv_format *fmt) {
    size_t longest = 0;
    for (size_t i = 0, st = 0; i <= src->len; i++)
        if (i == src->len || src->text[i] == '\n') {
            if (i - st > longest) longest = i - st;
            st = i + 1;
        }
    char *buf = malloc(longest + 1);
    if (!buf) return meas__oom(src);
    csv_header h = {.fmt = NULL};
    csv_field fld[CSV_MAX_FIELDS];
    meas__line ln = {.no = 0};
    int rc = 0, nf;
    for (size_t pos = 0; !rc && meas__next_line(src, &pos, &ln);) {
        if (csv_skipped(&ln)) continue;
        rc = csv_split(src, &ln, buf, fld, &nf);
        if (!rc && !h.fmt) rc = csv_header_read(src, &ln, fld, nf, fmt, &h);
        else if (!rc) rc = csv_row(src, &ln, &h, fld, nf);
    }
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------------
 * Telling the format
 */

/* The CSV format whose column names the header (the first line neither
 * blank nor a comment) holds most of, or NULL (no such line, no name, or
 * a tie); a header that does not split gives its message. */
static int csv_detect(const meas__src *src, const csv_format **out) {
    *out = NULL;
    meas__line ln = {.no = 0};
    size_t pos = 0;
    while (meas__next_line(src, &pos, &ln) && csv_skipped(&ln)) {
    }
    if (ln.no == 0 || csv_skipped(&ln)) return 0;
    char *buf = malloc(ln.n + 1);
    if (!buf) return meas__oom(src);
    csv_field fld[CSV_MAX_FIELDS];
    int nf, best = 0, tie = 0;
    int rc = csv_split(src, &ln, buf, fld, &nf);
    for (int k = 0; !rc && k < 3; k++) {
        int score = 0;
        for (int i = 0; i < nf && i < CSV_MAX_FIELDS; i++)
            score += csv_find(&csv_formats[k], &fld[i]) >= 0;
        if (score > best) best = score, tie = 0, *out = &csv_formats[k];
        else if (score == best && score > 0) tie = 1;
    }
    if (tie) *out = NULL;
    free(buf);
    return rc;
}

/* The first NUL byte: an error at its place. */
static int nul_check(const meas__src *src) {
    const char *z = memchr(src->text, 0, src->len);
    if (!z) return 0;
    meas__line ln = {.no = 0};
    size_t pos = 0;
    while (meas__next_line(src, &pos, &ln) && ln.s + ln.n < z) {
    }
    return meas__fail(src, ln.no, meas__col(&ln, z),
                      "NUL byte (expected a text file)");
}

/* Tells the format and reads the file with it. */
static int read_any(const meas__src *src, meas_format *format) {
    size_t i = 0;
    while (i < src->len && (meas__blank(src->text[i]) || src->text[i] == '\n' ||
                            src->text[i] == '\r'))
        i++;
    if (i < src->len && src->text[i] == '{') {
        *format = MEAS_FORMAT_IPERF3;
        return meas__read_iperf3(src);
    }
    if (meas__is_nccl(src)) {
        *format = MEAS_FORMAT_NCCL;
        return meas__read_nccl(src);
    }
    const csv_format *fmt;
    int rc = csv_detect(src, &fmt);
    if (rc) return rc;
    if (!fmt)
        return msg_set(src->err, src->errlen, MSG_EINPUT,
                       "%s: %s (" FORMATS ")", src->name,
                       i == src->len ? "empty" : "not a measurement file");
    *format = fmt->format;
    return read_csv(src, fmt);
}

/* ---------------------------------------------------------------------
 * The set
 */

/* A (worker, step) and where in the set it is, for the duplicates. */
typedef struct {
    int worker, idx;
    int64_t step;
} step_key;

static int step_key_cmp(const void *a, const void *b) {
    const step_key *x = a, *y = b;
    if (x->worker != y->worker) return x->worker < y->worker ? -1 : 1;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* A (worker, step) given twice among all the set's steps (those of earlier
 * files are distinct): the first repeat in the set's order. */
static int step_duplicates(const meas__src *src) {
    const meas_set *m = src->m;
    step_key *k = malloc((size_t)m->nsteps * sizeof *k);
    if (!k) return meas__oom(src);
    for (int i = 0; i < m->nsteps; i++)
        k[i] = (step_key){m->steps[i].worker, i, m->steps[i].step};
    qsort(k, (size_t)m->nsteps, sizeof *k, step_key_cmp);
    int dup = -1, first = -1;
    for (int i = 1; i < m->nsteps; i++)
        if (k[i].worker == k[i - 1].worker && k[i].step == k[i - 1].step &&
            (dup < 0 || k[i].idx < dup)) {
            int g = i - 1; /* the group's first */
            while (g > 0 && k[g - 1].worker == k[i].worker &&
                   k[g - 1].step == k[i].step)
                g--;
            dup = k[i].idx, first = k[g].idx;
        }
    free(k);
    if (dup < 0) return 0;
    const meas_step *d = &m->steps[dup], *f = &m->steps[first];
    return meas__fail(src, d->line, 1,
                      "worker %d, step %lld: given twice (first at %s:%d; "
                      "expected one time per worker and step)",
                      d->worker, (long long)d->step, m->file[f->file].path,
                      f->line);
}

/* Takes back what a failed file appended. */
static void cut_back(meas_set *m, int nrows, int nsteps, int noutages) {
    m->nrows = nrows;
    m->nsteps = nsteps;
    m->noutages = noutages;
    free(m->file[m->nfiles].path);
    memset(&m->file[m->nfiles], 0, sizeof m->file[0]);
}

/* "FILE: larger than ...". */
static int too_big(const char *path, char *err, size_t errlen) {
    return msg_set(err, errlen, MSG_EINPUT,
                   "%s: larger than %d MiB (expected a measurement file of at "
                   "most %d bytes)",
                   path, MEAS_MAX_BYTES >> 20, MEAS_MAX_BYTES);
}

int meas_parse(meas_set *m, const char *text, size_t len, const char *name,
               char *err, size_t errlen) {
    if (m->nfiles == MEAS_MAX_FILES)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: one file too many (expected at most %d "
                       "measurement files)",
                       name, MEAS_MAX_FILES);
    if (len > MEAS_MAX_BYTES) return too_big(name, err, errlen);
    meas_file *f = &m->file[m->nfiles];
    memset(f, 0, sizeof *f);
    f->path = strdup(name);
    if (!f->path)
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", name);
    f->digest = scn_digest_bytes(text, len);
    size_t bom = json_bom(text, len);
    meas__src src = {m, m->nfiles, name, text + bom, len - bom, err, errlen};
    int nrows = m->nrows, nsteps = m->nsteps, noutages = m->noutages;
    int rc = nul_check(&src);
    if (!rc) rc = read_any(&src, &f->format);
    int got = m->nrows - nrows + m->nsteps - nsteps + m->noutages - noutages;
    if (!rc && got == 0)
        rc = msg_set(err, errlen, MSG_EINPUT,
                     "%s: no measurement in it (expected at least one row of "
                     "%s)",
                     name, meas_format_name(f->format));
    if (!rc && f->format == MEAS_FORMAT_STEPS) rc = step_duplicates(&src);
    if (rc) {
        cut_back(m, nrows, nsteps, noutages);
        return rc;
    }
    f->rows = got;
    m->nfiles++;
    return 0;
}

/* The whole file at path into *out (malloc'd, NUL-terminated). */
static int read_whole(const char *path, char **out, size_t *len, char *err,
                      size_t errlen) {
    FILE *f = fopen(path, "rb");
    int rc = 0, e = f ? 0 : errno;
    if (!f)
        return msg_set(err, errlen, MSG_EINPUT, "%s: cannot read: %s", path,
                       strerror(e));
    /* in growing steps, never past the cap (a larger file stops there) */
    char *b = NULL;
    size_t n = 0, cap = 0;
    while (!rc) {
        if (cap - n < 2) {
            size_t want = cap ? 2 * cap : 65536;
            if (want > (size_t)MEAS_MAX_BYTES + 2) want = MEAS_MAX_BYTES + 2;
            char *nb = realloc(b, want);
            if (!nb) {
                rc =
                    msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", path);
                break;
            }
            b = nb, cap = want;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (n > MEAS_MAX_BYTES) rc = too_big(path, err, errlen);
        else if (got == 0 && ferror(f)) e = errno ? errno : EIO;
        if (got == 0) break;
    }
    fclose(f);
    if (!rc && e)
        rc = msg_set(err, errlen, MSG_EINPUT, "%s: cannot read: %s", path,
                     strerror(e));
    if (rc) {
        free(b);
        return rc;
    }
    b[n] = 0;
    *out = b, *len = n;
    return 0;
}

int meas_load(meas_set *m, const char *path, char *err, size_t errlen) {
    char *text = NULL;
    size_t len = 0;
    int rc = read_whole(path, &text, &len, err, errlen);
    if (rc) return rc;
    rc = meas_parse(m, text, len, path, err, errlen);
    free(text);
    return rc;
}

static const char *const format_names[] = {"runs", "nccl-tests", "iperf3",
                                           "step times", "outages"};

const char *meas_format_name(meas_format f) {
    return f >= MEAS_FORMAT_RUNS && f <= MEAS_FORMAT_OUTAGES ? format_names[f]
                                                             : "unknown";
}

void meas_free(meas_set *m) {
    for (int i = 0; i < m->nfiles; i++) free(m->file[i].path);
    free(m->rows);
    free(m->steps);
    free(m->outages);
    memset(m, 0, sizeof *m);
}
