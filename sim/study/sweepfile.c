/*
 * sweepfile.c -- the first line of sweep files, shards, and merging shards
 * (see sweepfile.h).
 *
 * A merge opens every part once (a FIFO can be read only once) and reads
 * it to check it (its line, its header, its rows counted) before anything
 * is written, then reads the rows again, a row from each part in turn,
 * into the output: a regular file from where its rows start (fseek), any
 * other part (a FIFO, a pipe) from the copy of its rows kept while it
 * was checked.
 */
#include "sim/study/sweepfile.h"
#include "sim/base/msg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/out/outfile.h"
#include "sim/base/version.h"

void sweepfile_line(sweepfile_id *id, char buf[SWEEPFILE_LINE_MAX]) {
    int n = snprintf(buf, SWEEPFILE_LINE_MAX, "%s%016" PRIx64, SWEEPFILE_PREFIX,
                     id->digest);
    if (id->nshards)
        n += snprintf(buf + n, (size_t)(SWEEPFILE_LINE_MAX - n),
                      " shard %d/%d of %lld points", id->shard, id->nshards,
                      (long long)id->npoints);
    id->len = (size_t)n;
    snprintf(buf + n, (size_t)(SWEEPFILE_LINE_MAX - n), " (dilosim %s, %s)\n",
             DILOSIM_VERSION, version_revision());
}

/* The decimal number at *s (digits only, no leading zero, at most max);
 * advances *s past it.  Returns -1 when there is none. */
static int64_t number(const char **s, int64_t max) {
    const char *p = *s;
    int64_t x = 0;
    if (*p < '0' || *p > '9' || (*p == '0' && p[1] >= '0' && p[1] <= '9'))
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        x = 10 * x + (*p - '0');
        if (x > max) return -1;
    }
    *s = p;
    return x;
}

/* Advances *s past word when it starts with it; 1 if it did. */
static int skip(const char **s, const char *word) {
    size_t n = strlen(word);
    if (strncmp(*s, word, n)) return 0;
    *s += n;
    return 1;
}

/* "K/N" at *s, with its bounds checked. */
static int shard_at(const char **s, int *k, int *n) {
    int64_t a = number(s, SWEEPFILE_MAX_SHARDS), b = -1;
    if (a >= 1 && skip(s, "/")) b = number(s, SWEEPFILE_MAX_SHARDS);
    if (b < 1 || a > b) return -1;
    *k = (int)a;
    *n = (int)b;
    return 0;
}

int sweepfile_parse(const char *line, sweepfile_id *id) {
    const char *s = line;
    memset(id, 0, sizeof *id);
    if (!skip(&s, SWEEPFILE_PREFIX) || strspn(s, "0123456789abcdef") != 16)
        return 0;
    for (int i = 0; i < 16; i++)
        id->digest = id->digest << 4 |
                     (uint64_t)(s[i] <= '9' ? s[i] - '0' : s[i] - 'a' + 10);
    s += 16;
    if (skip(&s, " shard ")) {
        if (shard_at(&s, &id->shard, &id->nshards) || !skip(&s, " of ") ||
            (id->npoints = number(&s, INT64_MAX / 2)) < 0 ||
            !skip(&s, " points"))
            return 0;
    }
    if (*s && *s != '\n' && strncmp(s, " (", 2)) return 0;
    id->len = (size_t)(s - line);
    return 1;
}

void sweepfile_describe(const sweepfile_id *id, char *buf, size_t len) {
    if (id->nshards) snprintf(buf, len, "shard %d/%d", id->shard, id->nshards);
    else snprintf(buf, len, "the whole sweep");
}

int64_t sweepfile_rows(int64_t npoints, int k, int n) {
    if (!n) return npoints;
    return npoints >= k ? (npoints - k) / n + 1 : 0;
}

int sweepfile_parse_shard(const char *s, int *k, int *n) {
    int a, b;
    if (shard_at(&s, &a, &b) || *s) return -1;
    *k = a;
    *n = b;
    return 0;
}

/* ---------------------------------------------------------------------
 * Merging
 */

typedef struct {
    const char *path;
    sweepfile_id id;
    char *first;                 /* its first line */
    char *header;                /* its second */
    FILE *f;                     /* a regular file: open from its check to the
                            end of the merge */
    long rows_at;                /*   and the offset of its rows */
    int kept;                    /* else 1: its rows, read while checking, */
    char *rows;                  /*   are kept here */
    size_t nrows, caprows, next; /* bytes in rows, room, the next row */
} part;

/* One line of f into *line (with its newline, if it has one); its length,
 * 0 at the end, -1 on a read error. */
static ssize_t read_line(FILE *f, char **line, size_t *cap) {
    ssize_t n = getline(line, cap, f);
    if (n > 0) return n;
    return ferror(f) ? -1 : 0;
}

static int read_error(const part *pt, char *err, size_t errlen) {
    return msg_set(err, errlen, MSG_EIO, "%s: cannot read: %s", pt->path,
                   strerror(errno));
}

/* pt's identity from its first line (n bytes), checked against the first
 * part's (first NULL: pt is the first). */
static int check_first(part *pt, const part *first, const char *line, ssize_t n,
                       char *err, size_t errlen) {
    if (n == 0 || line[n - 1] != '\n' || !sweepfile_parse(line, &pt->id))
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: no sweep digest "
                       "(expected a first line " SWEEPFILE_PREFIX "HEX shard "
                       "K/N of P points, as sweep --shard K/N --out writes)",
                       pt->path);
    if (!pt->id.nshards)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: the whole sweep, not a "
                       "shard (nothing to merge)",
                       pt->path);
    if (first && (first->id.digest != pt->id.digest ||
                  first->id.npoints != pt->id.npoints))
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: a shard of another "
                       "sweep (digest %016" PRIx64 ", %s has %016" PRIx64 ")",
                       pt->path, pt->id.digest, first->path, first->id.digest);
    if (first && first->id.nshards != pt->id.nshards)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: shard %d/%d, but %s is "
                       "shard %d/%d (another split of the sweep)",
                       pt->path, pt->id.shard, pt->id.nshards, first->path,
                       first->id.shard, first->id.nshards);
    if (!(pt->first = strdup(line)))
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    return MSG_OK;
}

/* Keeps a copy of row line (n bytes) of a part that cannot be read
 * again.  Returns 0, or -1 when out of memory. */
static int keep_row(part *pt, const char *line, size_t n) {
    if (pt->nrows + n + 1 > pt->caprows) {
        size_t cap = 2 * (pt->nrows + n + 1);
        char *p = realloc(pt->rows, cap);
        if (!p) return -1;
        pt->rows = p, pt->caprows = cap;
    }
    memcpy(pt->rows + pt->nrows, line, n + 1);
    pt->nrows += n;
    return 0;
}

/* pt's header (the first part's) and rows after it: exactly its shard's
 * count, each with its newline; the rows kept when pt->kept. */
static int check_rows(part *pt, const part *first, FILE *f, char **line,
                      size_t *cap, char *err, size_t errlen) {
    int64_t want = sweepfile_rows(pt->id.npoints, pt->id.shard, pt->id.nshards),
            rows = 0;
    ssize_t n = read_line(f, line, cap);
    if (n < 0) return read_error(pt, err, errlen);
    if (n > 0 && (*line)[n - 1] == '\n' && !(pt->header = strdup(*line)))
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    if (pt->header && first && strcmp(pt->header, first->header))
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: header differs from "
                       "%s's",
                       pt->path, first->path);
    if (!pt->kept && (pt->rows_at = ftell(f)) < 0)
        return read_error(pt, err, errlen);
    while (pt->header && (n = read_line(f, line, cap)) > 0 &&
           (*line)[n - 1] == '\n') {
        if (++rows > want)
            return msg_set(err, errlen, MSG_EINPUT,
                           "%s:%lld: more rows than "
                           "shard %d/%d holds (%lld)",
                           pt->path, (long long)rows + 2, pt->id.shard,
                           pt->id.nshards, (long long)want);
        if (pt->kept && keep_row(pt, *line, (size_t)n))
            return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    }
    if (n < 0) return read_error(pt, err, errlen);
    if (!pt->header || rows < want || n > 0)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: incomplete: shard %d/%d "
                       "has %lld of its %lld rows%s (finish it with sweep "
                       "--shard %d/%d --resume)",
                       pt->path, pt->id.shard, pt->id.nshards, (long long)rows,
                       (long long)want, n > 0 ? " and a cut line" : "",
                       pt->id.shard, pt->id.nshards);
    return MSG_OK;
}

/* Opens part pt, reads it (its line, header and rows) and checks it
 * against the first part (first NULL: pt is the first); pt->f is left
 * open where its rows start (a regular file), or NULL with the rows kept
 * in pt->rows (anything else). */
static int check_part(part *pt, const part *first, char *err, size_t errlen) {
    FILE *f = fopen(pt->path, "rb");
    if (!f)
        return msg_set(err, errlen, errno == EMFILE ? MSG_EFAIL : MSG_EINPUT,
                       "%s: cannot open: %s", pt->path, strerror(errno));
    pt->f = f;
    struct stat st;
    if (fstat(fileno(f), &st)) return read_error(pt, err, errlen);
    if (S_ISDIR(st.st_mode))
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: a directory (expected "
                       "a shard file, as sweep --shard K/N --out writes)",
                       pt->path);
    pt->kept = !S_ISREG(st.st_mode);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = read_line(f, &line, &cap);
    int rc = n < 0 ? read_error(pt, err, errlen)
                   : check_first(pt, first, line, n, err, errlen);
    if (!rc) rc = check_rows(pt, first, f, &line, &cap, err, errlen);
    free(line);
    if (!rc && !pt->kept && fseek(f, pt->rows_at, SEEK_SET))
        rc = read_error(pt, err, errlen);
    if (rc || pt->kept) {
        fclose(f);
        pt->f = NULL;
    }
    return rc;
}

/* The next row of part pt into *line; its length, or <= 0 at the end or
 * on an error. */
static ssize_t next_row(part *pt, char **line, size_t *cap) {
    if (pt->f) return read_line(pt->f, line, cap);
    if (pt->next >= pt->nrows) return 0;
    const char *s = pt->rows + pt->next, *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);
    if (n + 1 > *cap) {
        char *p = realloc(*line, n + 1);
        if (!p) return -1;
        *line = p, *cap = n + 1;
    }
    memcpy(*line, s, n);
    (*line)[n] = 0;
    pt->next += n;
    return (ssize_t)n;
}

/* The parts by shard (by[k - 1]), every shard once. */
static int order_parts(part *pt, int nparts, part **by, char *err,
                       size_t errlen) {
    int nshards = pt[0].id.nshards;
    for (int i = 0; i < nparts; i++) {
        part **slot = &by[pt[i].id.shard - 1];
        if (*slot)
            return msg_set(err, errlen, MSG_EINPUT,
                           "%s: shard %d/%d again "
                           "(%s holds it too)",
                           pt[i].path, pt[i].id.shard, nshards, (*slot)->path);
        *slot = &pt[i];
    }
    for (int k = 0; k < nshards; k++)
        if (!by[k])
            return msg_set(err, errlen, MSG_EINPUT,
                           "shard %d/%d missing "
                           "(%d of the %d shards of sweep %016" PRIx64
                           " given)",
                           k + 1, nshards, nparts, nshards, pt[0].id.digest);
    return MSG_OK;
}

/* Writes the whole sweep from the checked parts, by[k] holding shard k+1
 * of n. */
static int write_merged(part **by, int n, const char *out, char *err,
                        size_t errlen) {
    outfile of;
    int rc = outfile_open(&of, out, err, errlen);
    if (rc) return rc;
    const part *p1 = by[0];
    if (!of.is_stdout)
        fprintf(of.f, "%.*s%s", (int)strlen(SWEEPFILE_PREFIX) + 16, p1->first,
                p1->first + p1->id.len);
    else if (strstr(p1->first + p1->id.len, SWEEPFILE_NOTE))
        fprintf(of.f, "%s%s", SWEEPFILE_STREAM_PREFIX, p1->first + p1->id.len);
    fputs(p1->header, of.f);
    char *line = NULL;
    size_t cap = 0;
    for (int64_t p = 0; !rc && p < p1->id.npoints; p++) {
        part *pt = by[p % n];
        ssize_t len = next_row(pt, &line, &cap);
        if (len <= 0 || line[len - 1] != '\n')
            rc = msg_set(err, errlen, MSG_EIO, "%s: changed while merging",
                         pt->path);
        else fputs(line, of.f);
    }
    free(line);
    if (rc) {
        outfile_abort(&of);
        return rc;
    }
    return outfile_commit(&of, err, errlen);
}

int sweepfile_merge(const char *const *parts, int nparts, const char *out,
                    char *err, size_t errlen) {
    if (nparts < 1)
        return msg_set(err, errlen, MSG_EINPUT, "no parts to merge");
    part *pt = calloc((size_t)nparts, sizeof *pt);
    if (!pt) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int rc = MSG_OK;
    for (int i = 0; i < nparts && !rc; i++) {
        pt[i].path = parts[i];
        rc = check_part(&pt[i], i ? &pt[0] : NULL, err, errlen);
    }
    part **by = NULL;
    int n = rc ? 0 : pt[0].id.nshards;
    if (!rc && !(by = calloc((size_t)n, sizeof *by)))
        rc = msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    if (!rc) rc = order_parts(pt, nparts, by, err, errlen);
    if (!rc) rc = write_merged(by, n, out, err, errlen);
    for (int i = 0; i < nparts; i++) {
        if (pt[i].f) fclose(pt[i].f);
        free(pt[i].first);
        free(pt[i].header);
        free(pt[i].rows);
    }
    free(by);
    free(pt);
    return rc;
}
