/*
 * msg.h -- the library's error space, one-line error messages and exact
 * number formatting.
 *
 * Every function that can fail returns 0 or one of the negative MSG_E*
 * codes below and writes a one-line message into a caller's buffer
 * (char *err, size_t errlen).  msg_set formats the message and passes the
 * code through, so a failure path is one line:
 *
 *     return msg_set(err, errlen, MSG_EINPUT, "%s: not a number", path);
 *
 * The code says who is to blame: MSG_EINPUT is the user's input (a
 * scenario, an option, a trace or data file; the command exits 2), every
 * other code is a runtime failure (exit 1).  Codes pass through callers
 * unchanged, so the distinction survives any depth of calls.
 *
 * The trainer (models/) answers in this space too.  A configuration it
 * is built from (train_config and the model, optimizer and data
 * configurations in it; a data file that cannot be read included) comes
 * from the user's scenario: a rejected one is MSG_EINPUT.  Once built,
 * its calls answer MSG_EINVAL for an argument outside the call's contract
 * (a replica or fragment index, a mask, a pointer: the caller's mistake,
 * not the input's), MSG_ESTATE for a call out of order, MSG_ENUM for a
 * non-finite loss.
 */
#ifndef DILOSIM_MSG_H
#define DILOSIM_MSG_H

#include <stdarg.h>
#include <stddef.h>

enum {
    MSG_OK = 0,
    MSG_EFAIL = -1,  /* a runtime failure not covered below */
    MSG_ENOMEM = -2, /* out of memory */
    MSG_EIO = -3,    /* a file could not be read or written */
    MSG_EINPUT = -4, /* bad input: scenario, option, trace, data or cost file */
    MSG_EINTR = -5,  /* interrupted by a signal */
    MSG_EINVAL = -6, /* an argument outside a function's contract */
    MSG_ESTATE = -7, /* a call out of order (backward before forward...) */
    MSG_ENUM = -8    /* numerical failure: a non-finite loss */
};

/* Formats fmt into err (at most errlen bytes, always terminated when
 * errlen > 0) and returns rc.  The message is one line: control
 * characters (a key "\n" quoted from a file, say) become '?'. */
int msg_set(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* msg_set with a va_list. */
int msg_vset(char *err, size_t errlen, int rc, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* The code's name ("EINPUT"), and a short description of it ("bad
 * input"); "EUNKNOWN" / "unknown error" for a code not listed above. */
const char *msg_errname(int rc);
const char *msg_strerror(int rc);

/* The process exit status for a code: 0 for MSG_OK, 2 for MSG_EINPUT,
 * 1 for every other failure. */
int msg_exit_status(int rc);

/* Bytes of a formatted number, with the terminating NUL. */
#define MSG_NUM_MAX 32

/* x as the shortest decimal that reads back as x: integers below 1e15
 * without exponent ("1000"), others by the shortest %.Ng ("0.1",
 * "0.12067926406393285", "1e+20"); "inf", "-inf", "nan".  Returns buf. */
const char *msg_number(double x, char buf[MSG_NUM_MAX]);

/* The index of s among names[0..n-1] (exact, case-sensitive match), or
 * -1 when s is NULL or not one of them: the one parser of enum names. */
int msg_parse_name(const char *s, const char *const *names, int n);

/* The one name of names[0..n-1] nearest to s, for "did you mean ...":
 * its index when its edit distance to s (insertions, deletions,
 * substitutions and swaps of two neighbouring characters, each 1: the
 * optimal string alignment distance) is at most max_dist, less than the
 * length of either (a name that replaces all of s is no suggestion), and
 * no other name is as near; else -1 (names of more than MSG_NEAREST_MAX
 * bytes, and such an s, are never near). */
#define MSG_NEAREST_MAX 128
int msg_nearest_name(const char *s, const char *const *names, int n,
                     int max_dist);

/* names[0..n-1] joined with ", " into buf (cut to fit len bytes, always
 * terminated when len > 0), for "(expected one of: ...)".  Returns buf. */
const char *msg_name_list(const char *const *names, int n, char *buf,
                          size_t len);

#endif
