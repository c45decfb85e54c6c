/*
 * msg.h -- one-line error messages written into a caller's buffer.
 *
 * Library functions that can fail take (char *err, size_t errlen) and
 * return an error code; msg_set formats the message and passes the code
 * through, so a failure path is one line: return msg_set(err, n, -1, ...).
 */
#ifndef DILOSIM_MSG_H
#define DILOSIM_MSG_H

#include <stddef.h>

/* Formats fmt into err (at most errlen bytes, always terminated when
 * errlen > 0) and returns rc. */
int msg_set(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
