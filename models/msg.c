/*
 * msg.c -- the error space, one-line messages, exact number formatting.
 */
#include "msg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int msg_vset(char *err, size_t errlen, int rc, const char *fmt,
             va_list ap) {
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
