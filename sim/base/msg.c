/*
 * msg.c -- the error space, one-line messages, exact number formatting.
 */
#include "sim/base/msg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int msg_vset(char *err, size_t errlen, int rc, const char *fmt, va_list ap) {
    if (!err || !errlen) return rc;
    vsnprintf(err, errlen, fmt, ap);
    for (char *s = err; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
    return rc;
}

int msg_set(char *err, size_t errlen, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    msg_vset(err, errlen, rc, fmt, ap);
    va_end(ap);
    return rc;
}

static const struct {
    int rc;
    const char *name, *text;
} codes[] = {
    {MSG_OK, "OK", "success"},
    {MSG_EFAIL, "EFAIL", "runtime failure"},
    {MSG_ENOMEM, "ENOMEM", "out of memory"},
    {MSG_EIO, "EIO", "input/output error"},
    {MSG_EINPUT, "EINPUT", "bad input"},
    {MSG_EINTR, "EINTR", "interrupted"},
    {MSG_EINVAL, "EINVAL", "invalid argument"},
    {MSG_ESTATE, "ESTATE", "call out of order"},
    {MSG_ENUM, "ENUM", "numerical failure"},
};

static int code_index(int rc) {
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].rc == rc) return (int)i;
    return -1;
}

const char *msg_errname(int rc) {
    int i = code_index(rc);
    return i < 0 ? "EUNKNOWN" : codes[i].name;
}

const char *msg_strerror(int rc) {
    int i = code_index(rc);
    return i < 0 ? "unknown error" : codes[i].text;
}

int msg_exit_status(int rc) {
    return rc == MSG_OK ? 0 : rc == MSG_EINPUT ? 2 : 1;
}

const char *msg_number(double x, char buf[MSG_NUM_MAX]) {
    if (isnan(x)) {
        snprintf(buf, MSG_NUM_MAX, "nan");
    } else if (isinf(x)) {
        snprintf(buf, MSG_NUM_MAX, x > 0 ? "inf" : "-inf");
    } else if (x == floor(x) && fabs(x) < 1e15) {
        snprintf(buf, MSG_NUM_MAX, "%.0f", x);
    } else {
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, MSG_NUM_MAX, "%.*g", prec, x);
            if (strtod(buf, NULL) == x) break;
        }
    }
    return buf;
}

int msg_parse_name(const char *s, const char *const *names, int n) {
    if (!s) return -1;
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* The optimal string alignment distance of a and b (at most
 * MSG_NEAREST_MAX bytes each). */
static int edit_distance(const char *a, size_t na, const char *b, size_t nb) {
    int rows[3][MSG_NEAREST_MAX + 1]; /* rows i-2, i-1 and i, cyclically */
    for (size_t j = 0; j <= nb; j++) rows[0][j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int *cur = rows[i % 3], *up = rows[(i - 1) % 3];
        const int *up2 = rows[(i + 1) % 3]; /* row i - 2 */
        cur[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int d = up[j - 1] + cost;
            if (up[j] + 1 < d) d = up[j] + 1;
            if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
            int swap =
                i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1];
            if (swap && up2[j - 2] + 1 < d) d = up2[j - 2] + 1;
            cur[j] = d;
        }
    }
    return rows[na % 3][nb];
}

int msg_nearest_name(const char *s, const char *const *names, int n,
                     int max_dist) {
    size_t ns = s ? strlen(s) : MSG_NEAREST_MAX + 1;
    if (ns > MSG_NEAREST_MAX) return -1;
    int best = -1, best_d = max_dist + 1, ties = 0;
    for (int i = 0; i < n; i++) {
        size_t nn = strlen(names[i]);
        if (nn > MSG_NEAREST_MAX ||
            (nn > ns ? nn - ns : ns - nn) > (size_t)max_dist)
            continue;
        int d = edit_distance(s, ns, names[i], nn);
        if ((size_t)d >= ns || (size_t)d >= nn) continue; /* all replaced */
        if (d < best_d) best = i, best_d = d, ties = 0;
        else if (d == best_d) ties++;
    }
    return best >= 0 && !ties ? best : -1;
}

const char *msg_name_list(const char *const *names, int n, char *buf,
                          size_t len) {
    size_t at = 0;
    if (len) buf[0] = 0;
    for (int i = 0; i < n && at + 1 < len; i++) {
        int k = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", names[i]);
        if (k < 0) break;
        at += (size_t)k;
    }
    return buf;
}
