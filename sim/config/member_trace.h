/*
 * member_trace.h -- members that come and go (the scenario's
 * faults.membership_trace): a trace file of joins and leaves.
 *
 * A trace file's lines are
 *     t_s worker join|leave
 * separated by blanks (spaces, tabs, a trailing CR); '#' starts a comment
 * anywhere on a line; blank lines are skipped.  At instant t_s (seconds,
 * finite, 0 <= t_s <= 9.2e9, rounded to the nearest nanosecond;
 * non-decreasing over the whole file) worker (0..nworkers-1) joins or
 * leaves the group.  A worker whose first line is a join is absent from
 * time 0 until it; the others are members from time 0.  Per worker the
 * events alternate: a join of a member or a leave of an absent worker is
 * an error.  Events at one instant apply in file order.
 *
 * Errors are one line, "path:line:col: what is wrong (expected ...)" (col
 * the 1-based byte column of the field at fault); a file that cannot be
 * read gives faults_trace_read()'s messages.  Plain parsing, no clock:
 * the scenario loader checks a trace with it and the engine
 * (sim/engine/member.c) parses it again when a run starts and replays
 * the events.
 */
#ifndef DILOSIM_MEMBER_TRACE_H
#define DILOSIM_MEMBER_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* One event: at instant t (ns) worker joins (join 1) or leaves (0). */
typedef struct {
    int64_t t;
    int worker;
    int join;
} mbt_event;

/* A parsed trace file: its events in file (and so time) order. */
typedef struct mbt_trace mbt_trace;

/* Parses a whole trace (len bytes at text; `name` stands for the file in
 * messages) for workers 0..nworkers-1 into *out.  Returns 0, MSG_EINPUT
 * with "name:line:col: what is wrong (expected ...)", or MSG_ENOMEM;
 * *out is NULL on error. */
int mbt_parse(const char *text, size_t len, const char *name, int nworkers,
              mbt_trace **out, char *err, size_t errlen);

/* mbt_parse of the file at path (read by faults_trace_read: its errors
 * too). */
int mbt_load(const char *path, int nworkers, mbt_trace **out, char *err,
             size_t errlen);
void mbt_free(mbt_trace *t);

/* The events of t, *n of them, owned by t. */
const mbt_event *mbt_events(const mbt_trace *t, size_t *n);

/* 1 when worker w (0..nworkers-1) is absent at time 0: its first event
 * is a join. */
int mbt_absent_at_start(const mbt_trace *t, int w);

#endif
