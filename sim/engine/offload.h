/*
 * offload.h -- outer state kept in host memory (method.offload_outer):
 * the copies between host and accelerator, and the accelerator memory
 * they occupy.
 *
 * Each worker has one host-to-accelerator and one accelerator-to-host
 * copy engine (PCIe is full duplex), each a FIFO at a fixed rate.  The
 * outer parameters and outer momentum of fragment f are copied in before
 * the worker takes f's pseudo-gradient, and copied out once the worker
 * has merged f's sync (its outer step applied); the next copy-in of f
 * waits for that copy-out.  A fragment occupies accelerator memory from
 * the start of its copy-in to the end of its copy-out, so a fragment
 * merged at a step boundary and the next one taken there are both on the
 * accelerator while their copies run.
 *
 * The module only does arithmetic on instants: the engine asks when a
 * copy ends and schedules what depends on it.  Instants are ns; a copy of
 * b bytes at r bytes/s lasts round(b / r * 1e9) ns (instant copies, far
 * below a ns, take none).
 */
#ifndef DILOSIM_OFFLOAD_H
#define DILOSIM_OFFLOAD_H

#include <stdint.h>

typedef struct offload offload;

/* The copy engines of `workers` workers for `fragments` fragments, at
 * bytes_per_s (> 0) each way.  NULL when out of memory. */
offload *off_new(int workers, int fragments, double bytes_per_s);
void off_free(offload *o);

/* Worker w asks at `now` for the `bytes` of fragment f's outer state
 * (ignored while f is already on its accelerator).  Returns the instant
 * the copy ends: it starts once the engine is free and f's previous
 * copy-out has ended. */
int64_t off_copy_in(offload *o, int w, int f, uint64_t bytes, int64_t now);

/* The instant fragment f's latest copy-in for worker w ends (0: none). */
int64_t off_ready_at(const offload *o, int w, int f);

/* Fragment f's sync is over at `now` for worker w: its state goes back
 * to the host (nothing when f is not on w's accelerator). */
void off_copy_out(offload *o, int w, int f, int64_t now);

/* The most bytes of outer state worker w has had on its accelerator at
 * any instant so far (a fragment still there counts until now). */
uint64_t off_peak_bytes(const offload *o, int w);

#endif
