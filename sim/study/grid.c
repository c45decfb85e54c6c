/*
 * grid.c -- grid specs (comma lists, logspace, linspace) to value
 * strings, shortest exact number formatting, row-major point numbering.
 */
#include "sim/study/grid.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grid_err(char *err, size_t errlen, const char *label,
                    const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s: %s", label, msg);
    return -1;
}

void grid_free(grid_list *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->n = 0;
    l->v = NULL;
}

/* Appends the n bytes at s as a value; -1 when out of memory.  The array
 * holds the least power of two >= l->n values, so that a list of 100000
 * items is not copied 100000 times over. */
static int push(grid_list *l, const char *s, size_t n) {
    if ((l->n & (l->n - 1)) == 0) { /* 0, or full at a power of two */
        char **v = realloc(l->v, (size_t)(l->n ? 2 * l->n : 1) * sizeof *v);
        if (!v) return -1;
        l->v = v;
    }
    char **v = l->v;
    if (!(v[l->n] = malloc(n + 1))) return -1;
    memcpy(v[l->n], s, n);
    v[l->n++][n] = 0;
    return 0;
}

static int is_blank(char c) {
    return c == ' ' || c == '\t';
}

/* The bytes [*s, *e) without leading and trailing blanks. */
static void trim(const char **s, const char **e) {
    while (*s < *e && is_blank(**s)) ++*s;
    while (*e > *s && is_blank((*e)[-1])) --*e;
}

/* The end of the comma-list item starting at p: the next comma outside
 * a JSON string and outside brackets, or the end of the text. */
static const char *item_end(const char *p) {
    int depth = 0, in_str = 0;
    for (; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if ((*p == ']' || *p == '}') && depth > 0) {
            depth--;
        } else if (*p == ',' && depth == 0) {
            break;
        }
    }
    return p;
}

static int parse_list(const char *label, const char *spec, grid_list *out,
                      char *err, size_t errlen) {
    for (const char *p = spec;; p++) {
        const char *s = p, *e = item_end(p);
        trim(&s, &e);
        if (s == e)
            return grid_err(err, errlen, label,
                            "item %d is empty (expected "
                            "a comma list such as 1,2.5,10)",
                            out->n + 1);
        if (out->n == GRID_MAX_VALUES)
            return grid_err(err, errlen, label, "more than %d values",
                            GRID_MAX_VALUES);
        if (push(out, s, (size_t)(e - s)))
            return grid_err(err, errlen, label, "out of memory");
        p = item_end(p);
        if (!*p) return 0;
    }
}

/* Splits "kind:A:B:N" into its three fields, trimmed, each at most
 * GRID_NUM_MAX - 1 bytes.  Returns 0, or -1 when the shape is wrong. */
static int split_fields(const char *spec, char f[3][GRID_NUM_MAX]) {
    const char *p = strchr(spec, ':') + 1;
    for (int k = 0; k < 3; k++) {
        const char *e = k < 2 ? strchr(p, ':') : p + strlen(p);
        if (!e) return -1;
        const char *s = p, *end = e;
        trim(&s, &end);
        size_t n = (size_t)(end - s);
        if (n == 0 || n >= GRID_NUM_MAX) return -1;
        memcpy(f[k], s, n);
        f[k][n] = 0;
        p = e + 1;
    }
    return strchr(f[2], ':') ? -1 : 0;
}

/* A finite number, the whole of s. */
static int to_number(const char *s, double *x) {
    char *end;
    errno = 0;
    *x = strtod(s, &end);
    return *end == 0 && isfinite(*x) && errno != ERANGE ? 0 : -1;
}

/* logspace:A:B:N and linspace:A:B:N. */
static int parse_space(const char *label, const char *spec, int logspace,
                       grid_list *out, char *err, size_t errlen) {
    const char *form = logspace ? "logspace:A:B:N" : "linspace:A:B:N";
    char f[3][GRID_NUM_MAX], *end;
    double a, b;
    if (split_fields(spec, f))
        return grid_err(err, errlen, label, "expected %s", form);
    if (to_number(f[0], &a))
        return grid_err(err, errlen, label,
                        "A is not a finite number: "
                        "\"%s\" (expected %s)",
                        f[0], form);
    if (to_number(f[1], &b))
        return grid_err(err, errlen, label,
                        "B is not a finite number: "
                        "\"%s\" (expected %s)",
                        f[1], form);
    errno = 0;
    long n = strtol(f[2], &end, 10);
    if (*end || errno || n < 1 || n > GRID_MAX_VALUES)
        return grid_err(err, errlen, label,
                        "N is not an integer in 1..%d: "
                        "\"%s\" (expected %s)",
                        GRID_MAX_VALUES, f[2], form);
    for (int k = 0; k < 2 && logspace; k++)
        if (!isnormal(pow(10, k ? b : a)))
            return grid_err(err, errlen, label,
                            "10^%s is out of range "
                            "(expected exponents in -307..308)",
                            f[k]);
    double step = n > 1 ? (b - a) / (double)(n - 1) : 0;
    if (!isfinite(step))
        return grid_err(err, errlen, label, "B - A is out of range");
    for (long i = 0; i < n; i++) {
        /* As numpy: start + i * step, the last one exactly B. */
        double y = i == n - 1 && n > 1 ? b : a + (double)i * step;
        char buf[GRID_NUM_MAX];
        msg_number(logspace ? pow(10, y) : y, buf);
        if (push(out, buf, strlen(buf)))
            return grid_err(err, errlen, label, "out of memory");
    }
    return 0;
}

int grid_parse(const char *label, const char *spec, grid_list *out, char *err,
               size_t errlen) {
    out->n = 0;
    out->v = NULL;
    const char *s = spec, *e = spec + strlen(spec);
    trim(&s, &e);
    int rc;
    if (s == e)
        rc = grid_err(err, errlen, label,
                      "empty (expected a comma list, "
                      "logspace:A:B:N or linspace:A:B:N)");
    else if (!strncmp(s, "logspace:", 9) || !strncmp(s, "linspace:", 9))
        rc = parse_space(label, s, s[1] == 'o', out, err, errlen);
    else rc = parse_list(label, spec, out, err, errlen);
    if (rc) grid_free(out);
    return rc;
}

int64_t grid_count(int ndim, const int *n, int64_t max) {
    int64_t total = 1;
    for (int k = 0; k < ndim; k++) {
        if (n[k] < 0 || (n[k] > 0 && total > max / n[k])) return -1;
        total *= n[k];
    }
    return total > max ? -1 : total;
}

void grid_unrank(int ndim, const int *n, int64_t point, int *idx) {
    for (int k = ndim; k-- > 0;) {
        idx[k] = (int)(point % n[k]);
        point /= n[k];
    }
}
