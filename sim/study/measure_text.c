/*
 * measure_text.c -- the two formats other programs write (measure.h):
 * the text output of nccl-tests' all_reduce_perf, whose rows are checked
 * against themselves (algbw = size/time, busbw = algbw x 2(R-1)/R, to the
 * precision printed), and the JSON of iperf3 --json, read through the
 * strict JSON reader so that every message points at the member.
 *
 * nccl-tests prints (src/common.cu) the comment lines "# nThread ...",
 * "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s" (one per
 * rank; older versions have no Group), the column header "#  size count
 * type redop root time algbw busbw #wrong time algbw busbw #wrong" and a
 * units line; then one row per size, "%12li  %12li  %8s  %6s  %6i"
 * followed twice (out of place, in place) by "  %7s  %6.2f  %6.2f  %5li"
 * (time with 2, 1 or 0 decimals below 100 us, below 10 ms, above; #wrong
 * "N/A" or -1 when the results were not checked); and "# Out of bounds
 * values", "# Avg bus bandwidth" at the end.
 */
#include "sim/study/measure_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/config/json.h"

/* ---------------------------------------------------------------------
 * nccl-tests
 */

#define NCCL_MAX_TOKENS 16
#define NCCL_MAX_RANK (1 << 24)

typedef struct {
    const char *s;
    size_t n;
} tok;

/* The blank-separated tokens of the n bytes at s: their count (more than
 * max are counted, not kept). */
static int tokens(const char *s, size_t n, tok *t, int max) {
    int k = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && meas__blank(s[i])) i++;
        if (i == n) break;
        size_t st = i;
        while (i < n && !meas__blank(s[i])) i++;
        if (k < max) t[k] = (tok){s + st, i - st};
        k++;
    }
    return k;
}

static int tok_is(const tok *t, const char *w) {
    return t->n == strlen(w) && memcmp(t->s, w, t->n) == 0;
}

/* A comment line's tokens after its '#' (their count), or -1 for a line
 * that is not a comment. */
static int comment_tokens(const meas__line *ln, tok *t) {
    size_t i = 0;
    while (i < ln->n && meas__blank(ln->s[i])) i++;
    if (i == ln->n || ln->s[i] != '#') return -1;
    return tokens(ln->s + i + 1, ln->n - i - 1, t, NCCL_MAX_TOKENS);
}

/* The column header "#  size count type ..." (its tokens t, k of them). */
static int is_column_header(const tok *t, int k) {
    return k >= 3 && tok_is(&t[0], "size") && tok_is(&t[1], "count") &&
           tok_is(&t[2], "type");
}

int meas__is_nccl(const meas__src *src) {
    meas__line ln = {.no = 0};
    tok t[NCCL_MAX_TOKENS];
    for (size_t pos = 0; meas__next_line(src, &pos, &ln);) {
        int k = comment_tokens(&ln, t);
        if ((k >= 1 && tok_is(&t[0], "nThread")) || is_column_header(t, k))
            return 1;
    }
    return 0;
}

/* Whether the n bytes at s contain w. */
static int contains(const char *s, size_t n, const char *w) {
    size_t m = strlen(w);
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(s + i, w, m) == 0) return 1;
    return 0;
}

/* The ranks the "#  Rank N" lines list, in order of appearance. */
typedef struct {
    int *rank;
    int n, line; /* line: the first such line */
} rank_list;

static int int_cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The n bytes at s as an integer of digits only, at most max: 0 with *v,
 * else -1. */
static int tok_uint(const tok *t, double max, double *v) {
    if (t->n == 0) return -1;
    for (size_t i = 0; i < t->n; i++)
        if (t->s[i] < '0' || t->s[i] > '9') return -1;
    if (meas__decimal(t->s, t->n, v) || *v > max) return -1;
    return 0;
}

/* One comment line of pass 1: a rank line, the column header. */
static int nccl_comment(const meas__src *src, const meas__line *ln,
                        const tok *t, int k, rank_list *r) {
    if (is_column_header(t, k))
        for (int i = 3; i < k && i < NCCL_MAX_TOKENS; i++)
            if (tok_is(&t[i], "cputime"))
                return meas__fail(src, ln->no, meas__col(ln, t[i].s),
                                  "the times are CPU times (expected "
                                  "all_reduce_perf's own times: run it "
                                  "without -C 1)");
    if (k < 1 || !tok_is(&t[0], "Rank")) return 0;
    double v;
    if (k < 2 || tok_uint(&t[1], NCCL_MAX_RANK, &v))
        return meas__fail(src, ln->no,
                          meas__col(ln, k < 2 ? t[0].s + t[0].n : t[1].s),
                          "a '#  Rank' line without its rank (expected "
                          "'#  Rank N Group G Pid P on HOST device D ...', N "
                          "0..%d)",
                          NCCL_MAX_RANK);
    if ((r->n & (r->n - 1)) == 0) { /* 0, 1, 2, 4...: double the room */
        int *nr = realloc(r->rank, (size_t)(r->n ? 2 * r->n : 1) * sizeof *nr);
        if (!nr) return meas__oom(src);
        r->rank = nr;
    }
    if (r->n == 0) r->line = ln->no;
    r->rank[r->n++] = (int)v;
    return 0;
}

/* Pass 1: the ranks (every one 0..R-1 listed, R >= 2) into *ranks. */
static int nccl_ranks(const meas__src *src, int *ranks) {
    rank_list r = {NULL, 0, 0};
    meas__line ln = {.no = 0};
    tok t[NCCL_MAX_TOKENS];
    int rc = 0;
    for (size_t pos = 0; !rc && meas__next_line(src, &pos, &ln);) {
        int k = comment_tokens(&ln, t);
        if (k >= 0) rc = nccl_comment(src, &ln, t, k, &r);
    }
    if (!rc && r.n == 0)
        rc = msg_set(src->err, src->errlen, MSG_EINPUT,
                     "%s: no '#  Rank N ...' lines: the ranks are unknown "
                     "(expected all_reduce_perf's whole output, its comment "
                     "lines included)",
                     src->name);
    int distinct = 0;
    if (!rc) {
        qsort(r.rank, (size_t)r.n, sizeof *r.rank, int_cmp);
        for (int i = 0; i < r.n; i++)
            if (i == 0 || r.rank[i] != r.rank[i - 1]) {
                if (r.rank[i] != distinct) break;
                distinct++;
            }
        int last = r.rank[r.n - 1];
        if (distinct != last + 1)
            rc = meas__fail(src, r.line, 1,
                            "the '#  Rank' lines list ranks up to %d but not "
                            "rank %d (expected every rank 0..%d)",
                            last, distinct, last);
        else if (distinct < 2)
            rc = meas__fail(src, r.line, 1,
                            "one rank (expected an all-reduce among 2 ranks "
                            "or more)");
    }
    free(r.rank);
    *ranks = distinct;
    return rc;
}

/* Half a unit of the last digit printed in t ("203.2": 0.05). */
static double half_unit(const tok *t) {
    int decimals = 0, frac = 0;
    double e = 0;
    for (size_t i = 0; i < t->n; i++) {
        char c = t->s[i];
        if (c == '.') frac = 1;
        else if (c == 'e' || c == 'E') {
            if (meas__decimal(t->s + i + 1, t->n - i - 1, &e)) e = 0;
            break;
        } else if (frac) decimals++;
    }
    return 0.5 * pow(10, e - decimals);
}

/* A number >= lo (> lo when open) in token t of column `what`. */
static int nccl_number(const meas__src *src, const meas__line *ln, const tok *t,
                       const char *what, double lo, int open, double *out) {
    if (meas__decimal(t->s, t->n, out) || *out < lo || (open && *out == lo))
        return meas__fail(src, ln->no, meas__col(ln, t->s),
                          "%s '%.*s' (expected a number %s 0)", what,
                          (int)(t->n > 40 ? 40 : t->n), t->s,
                          open ? ">" : ">=");
    return 0;
}

/* #wrong: 0, else refused. */
static int nccl_wrong(const meas__src *src, const meas__line *ln,
                      const tok *t) {
    double w = 0;
    int col = meas__col(ln, t->s);
    if (tok_is(t, "N/A") || (!meas__decimal(t->s, t->n, &w) && w == -1))
        return meas__fail(src, ln->no, col,
                          "#wrong is %.*s: the results were not checked "
                          "(expected 0: run all_reduce_perf with -c 1)",
                          (int)t->n, t->s);
    if (meas__decimal(t->s, t->n, &w) || w != 0)
        return meas__fail(src, ln->no, col,
                          "#wrong is '%.*s': the all-reduce gave wrong "
                          "results (expected 0: a wrong result is not a "
                          "measurement)",
                          (int)(t->n > 40 ? 40 : t->n), t->s);
    return 0;
}

/* The time, algbw, busbw and #wrong of one half of a row (t: its first
 * token): out[0..2] the numbers. */
static int nccl_half(const meas__src *src, const meas__line *ln, const tok *t,
                     double out[3]) {
    int rc = nccl_number(src, ln, &t[0], "time", 0, 1, &out[0]);
    if (!rc) rc = nccl_number(src, ln, &t[1], "algbw", 0, 0, &out[1]);
    if (!rc) rc = nccl_number(src, ln, &t[2], "busbw", 0, 0, &out[2]);
    return rc ? rc : nccl_wrong(src, ln, &t[3]);
}

/* The out-of-place numbers against each other: algbw = size/time and
 * busbw = algbw x 2(R-1)/R, each to the precision of the tokens t (time,
 * algbw, busbw). */
static int nccl_consistent(const meas__src *src, const meas__line *ln,
                           const tok *t, double size, const double x[3],
                           int ranks) {
    const double slack = 1e-6; /* float rounding of the printed rates */
    double dt = half_unit(&t[0]), da = half_unit(&t[1]), db = half_unit(&t[2]);
    double lo = size / ((x[0] + dt) * 1e3);
    double hi = x[0] > dt ? size / ((x[0] - dt) * 1e3) : INFINITY;
    if (x[1] + da < lo * (1 - slack) || x[1] - da > hi * (1 + slack))
        return meas__fail(src, ln->no, meas__col(ln, t[1].s),
                          "algbw %.*s GB/s is not size/time = %.3g GB/s "
                          "(expected algbw = size / time: are the columns "
                          "size count type redop root time algbw busbw "
                          "#wrong?)",
                          (int)t[1].n, t[1].s, size / (x[0] * 1e3));
    double f = 2.0 * (ranks - 1) / ranks;
    double alo = fmax(lo, x[1] - da), ahi = fmin(hi, x[1] + da);
    if (x[2] + db < f * alo * (1 - slack) || x[2] - db > f * ahi * (1 + slack))
        return meas__fail(src, ln->no, meas__col(ln, t[2].s),
                          "busbw %.*s GB/s is not algbw x 2(n-1)/n = %.3g "
                          "GB/s for the %d ranks of the '#  Rank' lines "
                          "(expected the bus bandwidth of an all-reduce "
                          "among them)",
                          (int)t[2].n, t[2].s, f * size / (x[0] * 1e3), ranks);
    return 0;
}

/* Size, count and root of a row (t: size's token; root at t[4] when
 * has_root): *size. */
static int nccl_sizes(const meas__src *src, const meas__line *ln, const tok *t,
                      int has_root, double *size) {
    double count, root;
    if (tok_uint(&t[0], 9007199254740992.0, size))
        return meas__fail(src, ln->no, meas__col(ln, t[0].s),
                          "size '%.*s' is out of range (expected bytes, an "
                          "integer up to 2^53)",
                          (int)(t[0].n > 40 ? 40 : t[0].n), t[0].s);
    if (*size == 0) return 0;
    double elt = -1;
    if (!tok_uint(&t[1], *size, &count) && count >= 1) elt = *size / count;
    if (elt != 1 && elt != 2 && elt != 4 && elt != 8)
        return meas__fail(src, ln->no, meas__col(ln, t[1].s),
                          "count '%.*s' does not divide size %.*s into "
                          "elements of 1, 2, 4 or 8 bytes (expected the "
                          "count of elements of type %.*s)",
                          (int)(t[1].n > 40 ? 40 : t[1].n), t[1].s, (int)t[0].n,
                          t[0].s, (int)(t[2].n > 20 ? 20 : t[2].n), t[2].s);
    if (has_root &&
        (meas__decimal(t[4].s, t[4].n, &root) || root != floor(root)))
        return meas__fail(src, ln->no, meas__col(ln, t[4].s),
                          "root '%.*s' (expected an integer)",
                          (int)(t[4].n > 40 ? 40 : t[4].n), t[4].s);
    return 0;
}

/* One line of pass 2 that is neither blank nor a comment. */
static int nccl_row(const meas__src *src, const meas__line *ln, int ranks) {
    if (contains(ln->s, ln->n, "NCCL INFO") ||
        contains(ln->s, ln->n, "NCCL WARN"))
        return 0; /* NCCL's own log (NCCL_DEBUG) */
    tok t[NCCL_MAX_TOKENS];
    double size, x[3], y[3];
    int k = tokens(ln->s, ln->n, t, NCCL_MAX_TOKENS);
    if (tok_uint(&t[0], INFINITY, &size))
        return meas__fail(src, ln->no, meas__col(ln, t[0].s),
                          "not a row of all_reduce_perf (expected SIZE COUNT "
                          "TYPE REDOP ROOT, then TIME ALGBW BUSBW #WRONG out "
                          "of place and in place)");
    if (k != 13 && k != 12)
        return meas__fail(src, ln->no, 1,
                          "%d fields (expected 13: size count type redop "
                          "root, then time algbw busbw #wrong out of place "
                          "and in place)",
                          k);
    int has_root = k == 13, o = has_root ? 5 : 4;
    int rc = nccl_sizes(src, ln, t, has_root, &size);
    if (rc || size == 0) return rc;
    rc = nccl_half(src, ln, &t[o], x);
    if (!rc) rc = nccl_half(src, ln, &t[o + 4], y);
    if (!rc) rc = nccl_consistent(src, ln, &t[o], size, x, ranks);
    if (rc) return rc;
    meas_row r;
    memset(&r, 0, sizeof r);
    r.kind = MEAS_ALLREDUCE;
    r.file = src->file;
    r.line = ln->no;
    r.measured_s = x[0] * 1e-6;
    r.bytes = size;
    r.ranks = ranks;
    r.sync_blocked_s = r.compute_s = NAN;
    return meas__push_row(src, &r);
}

int meas__read_nccl(const meas__src *src) {
    int ranks, rc = nccl_ranks(src, &ranks);
    meas__line ln = {.no = 0};
    tok t[NCCL_MAX_TOKENS];
    for (size_t pos = 0; !rc && meas__next_line(src, &pos, &ln);)
        if (comment_tokens(&ln, t) < 0 && tokens(ln.s, ln.n, t, 1) > 0)
            rc = nccl_row(src, &ln, ranks);
    return rc;
}

/* ---------------------------------------------------------------------
 * iperf3 --json
 */

typedef struct {
    const meas__src *src;
    const json_doc *doc;
} ip_ctx;

/* The offset of node n's key (at_key, when it has one) or value. */
static size_t ip_off(const ip_ctx *c, const cJSON *n, int at_key) {
    for (size_t i = 0; i < c->doc->npos; i++)
        if (c->doc->pos[i].node == n) {
            const json_pos *p = &c->doc->pos[i];
            return at_key && p->key != JSON_NO_POS ? p->key : p->val;
        }
    return 0;
}

/* "NAME:LINE:COL: path: what", at node at. */
static int ip_fail(const ip_ctx *c, const cJSON *at, int at_key,
                   const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int ip_fail(const ip_ctx *c, const cJSON *at, int at_key,
                   const char *path, const char *fmt, ...) {
    int line, col;
    json_line_col(c->src->text, ip_off(c, at, at_key), &line, &col);
    va_list ap;
    va_start(ap, fmt);
    int rc = meas__vfail(c->src, line, col, path, fmt, ap);
    va_end(ap);
    return rc;
}

/* o (at path) is an object without repeated keys. */
static int ip_object(const ip_ctx *c, const cJSON *o, const char *path) {
    if (!cJSON_IsObject(o))
        return ip_fail(c, o, 0, path,
                       "not an object (expected iperf3's %s object)", path);
    const cJSON *dup, *first;
    int r = json_first_duplicate(o, &dup, &first);
    if (r < 0) return meas__oom(c->src);
    if (r) {
        int line, col;
        json_line_col(c->src->text, ip_off(c, first, 1), &line, &col);
        return ip_fail(c, dup, 1, path,
                       "duplicate key \"%.40s\" (first given at %d:%d)",
                       dup->string, line, col);
    }
    return 0;
}

/* Member name of o (at path), an object when obj; NULL with the message
 * when it is missing. */
static const cJSON *ip_member(const ip_ctx *c, const cJSON *o, const char *path,
                              const char *name, int obj, int *rc) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, name);
    char p[96];
    snprintf(p, sizeof p, "%s%s%s", path, *path ? "." : "", name);
    if (!m && !*path)
        *rc = ip_fail(c, o, 0, "(root)",
                      "no member \"%s\" (expected the JSON of iperf3 --json, "
                      "with \"start\" and \"end\")",
                      name);
    else if (!m)
        *rc = ip_fail(c, o, 0, path, "no member \"%s\" (expected iperf3's %s)",
                      name, p);
    else if (obj) *rc = ip_object(c, m, p);
    return *rc ? NULL : m;
}

/* A finite number > lo (>= when !open) at o.name, an integer when asked. */
static int ip_number(const ip_ctx *c, const cJSON *o, const char *path,
                     const char *name, double lo, int open, int integer,
                     double *out) {
    int rc = 0;
    const cJSON *v = ip_member(c, o, path, name, 0, &rc);
    if (rc) return rc;
    char p[96];
    snprintf(p, sizeof p, "%s.%s", path, name);
    char want[64], got[MSG_NUM_MAX];
    snprintf(want, sizeof want, "%s %s %g", integer ? "an integer" : "a number",
             open ? ">" : ">=", lo);
    if (!cJSON_IsNumber(v))
        return ip_fail(c, v, 0, p, "not a number (expected %s)", want);
    double x = v->valuedouble;
    if (!isfinite(x) || x < lo || (open && x == lo) ||
        (integer && (x != floor(x) || x > 2147483647.0)))
        return ip_fail(c, v, 0, p, "%s is out of range (expected %s)",
                       msg_number(x, got), want);
    *out = x;
    return 0;
}

/* start.test_start: TCP, not --bidir; *streams and *reverse. */
static int ip_test_start(const ip_ctx *c, const cJSON *ts, double *streams,
                         int *reverse) {
    const char *path = "start.test_start";
    int rc = 0;
    const cJSON *proto = ip_member(c, ts, path, "protocol", 0, &rc);
    if (rc) return rc;
    const char *p = cJSON_IsString(proto) ? proto->valuestring : NULL;
    if (p && strcmp(p, "UDP") == 0)
        return ip_fail(c, proto, 0, "start.test_start.protocol",
                       "a UDP test (expected TCP: a UDP test sends at the "
                       "rate it was given, not at the network's)");
    if (!p || strcmp(p, "TCP") != 0)
        return ip_fail(c, proto, 0, "start.test_start.protocol",
                       "not \"TCP\" (expected a TCP test)");
    rc = ip_number(c, ts, path, "num_streams", 1, 0, 1, streams);
    const cJSON *rev = cJSON_GetObjectItemCaseSensitive(ts, "reverse");
    const cJSON *bi = cJSON_GetObjectItemCaseSensitive(ts, "bidir");
    if (!rc && rev &&
        !(cJSON_IsBool(rev) ||
          (cJSON_IsNumber(rev) &&
           (rev->valuedouble == 0 || rev->valuedouble == 1))))
        return ip_fail(c, rev, 0, "start.test_start.reverse",
                       "not 0 or 1 (expected 0, or 1 for a -R test)");
    if (!rc && bi && !(cJSON_IsNumber(bi) && bi->valuedouble == 0) &&
        !cJSON_IsFalse(bi))
        return ip_fail(c, bi, 0, "start.test_start.bidir",
                       "a --bidir test (expected one direction at a time)");
    *reverse = rev && (cJSON_IsTrue(rev) ||
                       (cJSON_IsNumber(rev) && rev->valuedouble == 1));
    return rc;
}

/* The document's result: the row. */
static int ip_read(const ip_ctx *c, const cJSON *root, meas_row *r) {
    int rc = ip_object(c, root, "(root)"); /* an object: it began with '{' */
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (!rc && e)
        return ip_fail(c, e, 0, "error",
                       "iperf3 reported an error: \"%.200s\" (expected the "
                       "result of a test that ran)",
                       cJSON_IsString(e) ? e->valuestring : "?");
    const cJSON *start = rc ? NULL : ip_member(c, root, "", "start", 1, &rc);
    const cJSON *ts =
        rc ? NULL : ip_member(c, start, "start", "test_start", 1, &rc);
    double streams = 0;
    if (!rc) rc = ip_test_start(c, ts, &streams, &r->reverse);
    const cJSON *end = rc ? NULL : ip_member(c, root, "", "end", 1, &rc);
    const cJSON *bidir =
        end ? cJSON_GetObjectItemCaseSensitive(end, "sum_sent_bidir_reverse")
            : NULL;
    if (bidir)
        return ip_fail(c, bidir, 1, "end.sum_sent_bidir_reverse",
                       "a --bidir test (expected one direction at a time)");
    const cJSON *sum = rc ? NULL : ip_member(c, end, "end", "sum_sent", 1, &rc);
    if (!rc)
        rc = ip_number(c, sum, "end.sum_sent", "bytes", 0, 1, 0, &r->bytes);
    if (!rc)
        rc = ip_number(c, sum, "end.sum_sent", "seconds", 0, 1, 0,
                       &r->measured_s);
    if (rc) return rc;
    int col;
    json_line_col(c->src->text, ip_off(c, end, 1), &r->line, &col);
    r->streams = (int)streams;
    return 0;
}

int meas__read_iperf3(const meas__src *src) {
    json_doc doc;
    size_t at;
    char msg[128];
    int rc = json_parse(src->text, src->len, &doc, &at, msg, sizeof msg);
    if (rc == MSG_EINPUT) {
        int line, col;
        json_line_col(src->text, at, &line, &col);
        return meas__fail(src, line, col, "syntax error (%s)", msg);
    }
    if (rc) return meas__oom(src);
    ip_ctx c = {src, &doc};
    meas_row r;
    memset(&r, 0, sizeof r);
    r.kind = MEAS_STREAM;
    r.file = src->file;
    r.sync_blocked_s = r.compute_s = NAN;
    rc = ip_read(&c, doc.root, &r);
    json_doc_free(&doc);
    return rc ? rc : meas__push_row(src, &r);
}
