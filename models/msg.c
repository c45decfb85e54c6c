/*
 * msg.c -- one-line error messages into a caller's buffer.
 */
#include "msg.h"

#include <stdarg.h>
#include <stdio.h>

int msg_set(char *err, size_t errlen, int rc, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}
