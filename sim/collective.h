/*
 * collective.h -- all-reduce of one worker group, as flows on the net.
 *
 * Worker i owns net links 2*i (up: what it sends) and 2*i+1 (down: what it
 * receives); a flow from i to j crosses up(i) and down(j) after the
 * latency lat_ns[i*nworkers + j].
 *
 * Algorithms, for S bytes among M members (in increasing worker id):
 *   ring        2(M-1) steps; in each step every member sends one chunk
 *               (about S/M bytes) to its successor; a step ends when all
 *               its flows end.  Bytes sent by each member: about
 *               2(M-1)/M * S; by the group exactly 2(M-1) S.
 *   all_to_all  reduce-scatter as an all-to-all (every member sends a
 *               chunk to every other at once), then all-gather the same
 *               way.  Same bytes as the ring, latency paid twice.
 *   star        gather: every member but the first sends S to the first;
 *               then broadcast: the first sends S to every other.
 * A group of one member completes at once, sending nothing.
 * Bytes are whole: chunk i of S is coll_chunk_bytes(S, M, i) =
 * floor((i+1)S/M) - floor(iS/M), so the chunks sum to S exactly (which
 * member sends which chunk when is in collective.c).
 *
 * The collectives of one group run one at a time in FIFO order (one
 * communication stream).  Completion is reported through the callback
 * given to coll_new, always from inside net_advance() (never from
 * coll_submit), so the caller never sees re-entrant completions.
 */
#ifndef DILOSIM_COLLECTIVE_H
#define DILOSIM_COLLECTIVE_H

#include <stdint.h>
#include "net.h"
#include "sig.h"

typedef enum { COLL_RING, COLL_ALL_TO_ALL, COLL_STAR } coll_algo;

typedef struct coll coll;

/* Called when a collective completes, with the tag it was submitted with. */
typedef void (*coll_done_fn)(void *ctx, int64_t now, uint64_t tag);

/* A stream over net n for nworkers workers.  lat_ns (nworkers^2 entries)
 * is copied; max_flow_bytes_per_s caps every flow (INFINITY: no cap).
 * Flow tags used on the net are tag_base + small integers; the caller
 * routes net completions whose tag >= tag_base to coll_on_flow_done. */
coll *coll_new(net *n, int nworkers, coll_algo algo, const int64_t *lat_ns,
               double max_flow_bytes_per_s, uint64_t tag_base,
               coll_done_fn done, void *ctx);
void coll_free(coll *c);

/* Queues an all-reduce of `bytes` among the members (a bitmask array of
 * nworkers bytes, nonzero = member, copied).  Returns 0, or MSG_ENOMEM
 * (models/msg.h). */
int coll_submit(coll *c, int64_t now, uint64_t bytes, const uint8_t *members,
                uint64_t tag);

/* Bytes of chunk i (0 <= i < m) when S bytes are split m ways (m >= 1):
 * floor((i+1)S/m) - floor(iS/m); the m chunks sum to S. */
uint64_t coll_chunk_bytes(uint64_t S, int m, int i);

/* To be called from the net's done callback for flows whose tag belongs to
 * this stream. Advances the running collective, starts the next one. */
void coll_on_flow_done(coll *c, int64_t now, int flow, uint64_t flow_tag);

/* A member has failed: queued collectives drop it; the running one, if it
 * includes the worker, restarts from its first step among the remaining
 * members (bytes already moved stay counted). */
void coll_remove_member(coll *c, int64_t now, int worker);

/* Cancels the running collective and drops every queued one, without
 * completion callbacks. */
void coll_clear(coll *c, int64_t now);

/* Collectives queued or running. */
int coll_pending(const coll *c);

/* The caller guarantees that, from now on, the stream is the only user of
 * its net (no other stream, no other flow, no net_link_set) and that it
 * never calls coll_remove_member() or coll_clear().  A ring whose flows
 * all get the same rate and latency then runs every step after its first
 * as one flow per chunk size (at most two), with the same instants, bytes
 * and peaks as M flows; the bytes of those steps reach the net's link
 * counters at the end of the collective or at coll_flush_bytes().  A ring
 * stream also makes the net's signatures leave flow ids out
 * (net_set_anonymous). */
void coll_set_exclusive(coll *c);

/* Brings the net's link counters up to every byte the stream has moved
 * so far (call it before reading them while a collective runs). */
void coll_flush_bytes(coll *c);

/* Appends the stream's state (sig.h): the queued jobs with their members,
 * the running collective's members, step, whether it takes the shortcut,
 * and which flows of its step are still running (their ids and instants
 * are in the net's signature: flow k carries tag tag_base + k). */
void coll_signature(const coll *c, sig_buf *b);

/* Parses "ring" | "all_to_all" | "star"; returns 0 or -1. */
int coll_parse_algo(const char *name, coll_algo *out);
const char *coll_algo_name(coll_algo a);

#endif
