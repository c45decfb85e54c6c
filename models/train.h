/*
 * train.h -- data-parallel, DiLoCo and Streaming DiLoCo on M replicas,
 * exactly, in FP32 on the CPU.
 *
 * Each replica is a full model (a train_model_ops implementation: the nn
 * transformer / MLP, a constant-gradient toy, or the caller's) with its
 * own inner optimizer state and data shard.  The trainer keeps the outer
 * parameters and outer momentum; fragment f owns the slice of them that
 * covers its units.  The schedule (which fragment is taken and applied
 * after which step, which layers a fragment holds) is sim/base/schedule.h,
 * never re-derived here.
 *
 * Sites (train_config.site_replicas = G > 1): each of the M members is a
 * site of G data-parallel replicas, one model and inner optimizer, G data
 * shards (site s, replica k: shard s G + k); an inner step computes the
 * G gradients one after the other in replica order and averages them in
 * FP32 as DP does (the first, plus the others in order, divided by G)
 * before its one optimizer step.  Everything else (syncs, payloads,
 * bytes, the calls below) is per member, as without sites.
 *
 * Units and fragments.  A model's parameters are cut into units (nn:
 * unit 0 embeddings, units 1..L blocks, unit L+1 final norm + head).
 *   TRAIN_MAP_JOIN  the schedule runs over the L blocks (sched.layers =
 *                   units - 2); the embedding unit joins the fragment of
 *                   block 0 and the head unit the fragment of block L-1.
 *   TRAIN_MAP_OWN   the schedule runs over all units in order (embedding,
 *                   blocks, head; sched.layers = units), so the layout
 *                   places the embedding and head like any layer.
 *
 * Semantics (docs/architecture.md, "Semantics both halves share").  For
 * DiLoCo and Streaming DiLoCo, fragment f's sync taken after inner step t and applied after
 * step t + tau:
 *   prepare  every participating replica m computes its pseudo-gradient
 *            delta_m = outer - local over the fragment and ENCODES it with
 *            the codec into a real byte buffer, one encoding per tensor
 *            (codec row length = the tensor's columns; a block of 0 means
 *            one scale per tensor).  The buffer's size, counted as the
 *            bytes replica m sends, is the sum over the fragment's tensors
 *            of codec_wire_bytes: train_fragment_wire_bytes.  The
 *            stateful codecs (powersgd, demo) encode through
 *            models/compress.h, with each replica's error feedback or
 *            residual added first.
 *   apply    the buffers are DECODED and averaged in FP32, summed in
 *            replica order then divided by the participant count
 *            (powersgd: its power iteration over the participants'
 *            factors, whose decoding P Q^T is that average); the
 *            outer Nesterov step (optim_nesterov: outer_lr,
 *            outer_momentum) updates the fragment's outer parameters;
 *            then EVERY replica (participant or not) merges
 *            theta = alpha * local + (1 - alpha) * outer_new on the
 *            fragment (alpha 0 copies the outer values, alpha 1 leaves
 *            the replica untouched: exact, whatever the values).
 *   Inner optimizer state is kept across syncs; only parameters change.
 *   Model averaging: with outer_lr 1, outer_momentum 0 and the lossless
 *   fp32 codec, outer - mean(outer - local) = mean(local), and the
 *   replicas send their local values instead (the same bytes, the same
 *   codec); the outer parameters become their FP32 average.  This is
 *   exact in FP32 where the delta round trip is not: one replica then
 *   reproduces plain training bit for bit.
 * For DP every inner step is a sync of fragment 0 (the whole model):
 * train_inner_step computes replica r's gradient only; prepare encodes the
 * participants' gradients with dp_codec; apply decodes and averages them
 * (as above) and runs one inner optimizer step with that average on every
 * replica, which therefore stay identical.  Clipping applies to the
 * averaged gradient.
 *
 * FedPart (fedpart = 1, DiLoCo or streaming): during inner step t only
 * the fragment whose next pseudo-gradient is taken at the first step
 * t' >= t trains (the one whose turn it is); the other fragments' units
 * are frozen (gradients are computed but not applied; their AdamW state
 * and update counts stay as they are; clipping covers the trained
 * fragment only).  Syncs are DiLoCo's: the same prepare / apply on the
 * same schedule.  So each fragment trains for H/P consecutive steps out
 * of every H, then is averaged.
 *
 * Coupled runs.  An event loop may drive the replicas one by one (the
 * calls of a coupled run, below), so they can be at different steps:
 *   contribute  replica r encodes its payload of fragment f's sync taken
 *               after step `take` when it has done `take` steps (DP: when
 *               its gradient of step take is ready); the first contributor
 *               opens the sync, which is the fragment's only one in flight.
 *   reduce      averages the chosen contributors' payloads (as apply) and
 *               runs the outer step, but merges lazily: each replica r
 *               gets a pending merge of f due at a step m_r (default
 *               take + tau + 1), which lands just before r computes step
 *               m_r, with the fragment's outer values of that moment.  A
 *               second reduce of f before r's merge of f has landed leaves
 *               one pending merge due at the earlier step: a replica that
 *               missed a landing merges only the newest outer values.  A
 *               replica's pending merge of f also lands before it encodes
 *               its next payload of f.  DP reduces update every replica
 *               at once (as apply).
 *   WAIT        (late = TRAIN_LATE_WAIT) a replica may not compute step
 *               take + tau + 1 or later while a sync taken after step
 *               `take` is in flight: the merge would come too late, so
 *               the call is refused, which catches gating bugs of the
 *               loop.  CONTINUE lets it compute on; the merge then lands
 *               at whatever later step the loop names.  DP: a replica
 *               whose gradient is in flight may not compute another one
 *               (the reduce would overwrite it), whatever `late`.
 *   rejoin      a replica that lost its state heals from the outer
 *               parameters (each fragment as of its last reduce), with a
 *               copy of a live replica's inner optimizer and that
 *               replica's step count; the payloads it had already sent
 *               stay in their syncs (the reduce says whether they count).
 *   snapshot    a copy of every replica's parameters, inner optimizer,
 *               step count, data position, and of the outer state;
 *               restoring one rolls the trainer back to it, dropping the
 *               syncs in flight and the pending merges (DP's recovery
 *               from a failure; it works for every method).
 * Lockstep prepare / apply are the same encode, reduce and merge, every
 * merge landing at once.  Refused calls (an error code) leave the trainer
 * unchanged.
 *
 * Inner optimizer.  Each replica's optimizer ranges are the model's
 * tensors (decay flag from nn_tensor.decay); the learning-rate schedule
 * runs on the replica's count of completed inner steps (t = count + 1);
 * AdamW bias correction on each tensor's own update count.
 *
 * Threads.  Replicas' inner steps (and evaluation batches, and encoding)
 * run on a pool of `threads` threads (the calling thread is one of them).
 * Every reduction over replicas or batches runs on the calling thread in
 * replica (batch) order, so results are bit-identical for every thread
 * count.  A trainer itself is not thread-safe: call it from one thread.
 *
 * Errors.  Functions return 0 or a negative MSG_E* code (sim/base/msg.h)
 * and leave a one-line message in train_error(tr): MSG_EINPUT when
 * train_new rejects its configuration (the user's scenario), MSG_EINVAL
 * for a call's argument outside its contract, MSG_ESTATE for a call out
 * of order, MSG_ENUM for a non-finite loss, MSG_ENOMEM.  No printing, no
 * exit.
 */
#ifndef DILOSIM_TRAIN_H
#define DILOSIM_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "models/train_config.h"
#include "sim/base/msg.h" /* the codes returned */

/* train_run's status when the report callback asked to stop: above 0,
 * so no error code. */
enum { TRAIN_STOPPED = 1 };

typedef struct train train;

/* One report of train_run. */
typedef struct {
    int64_t step;      /* inner steps done by every replica */
    uint64_t tokens;   /* training tokens consumed, all replicas:
                           gradients computed x batch x seq */
    double train_loss; /* mean over replicas of their last step's loss */
    double eval_loss;  /* of the outer parameters (DP: the shared ones) */
    uint64_t bytes;    /* cumulative bytes sent by all replicas */
} train_report;

/* Called by train_run; return 0 to go on, non-zero to stop. */
typedef int (*train_report_fn)(const train_report *r, void *ctx);

/* ---- life cycle ---------------------------------------------------------- */

/* Checks c and builds a trainer: M replicas initialised alike, outer
 * state, data streams, the eval set and the thread pool.  Returns
 * 0 and sets *out, or an error code with a one-line reason in err
 * (*out NULL). */
int train_new(const train_config *c, train **out, char *err, size_t errlen);

/* Frees everything (joins the pool); NULL is allowed. */
void train_free(train *tr);

/* The last error message ("" when none). */
const char *train_error(const train *tr);

/* ---- the calls an event loop drives -------------------------------------- */

/* One inner step of replica r on its next batch: first the landing of
 * r's pending merges due at or before this step (train_steps + 1), then
 * forward, backward and (not DP) the inner optimizer update (FedPart: the
 * turn's fragment only).  DP: the gradient only; the update happens in
 * train_apply / train_reduce.  MSG_ESTATE, before anything changes,
 * when late is TRAIN_LATE_WAIT and some fragment's sync taken after step
 * `take` is in flight with take + tau + 1 <= the step r would compute;
 * DP: when r's gradient is in fragment 0's sync in flight (whatever
 * late).  MSG_ENUM on a non-finite loss. */
int train_inner_step(train *tr, int r);

/* Takes fragment f's sync for the replicas in `participants` (bit r =
 * replica r; non-empty, within 0..M-1): encodes each one's payload into
 * its own buffer, in parallel (DP: the gradients, which needs a
 * train_inner_step of each participant since the last apply), each
 * after landing the participant's pending merge of f.  The sync's take
 * step is the least step count among the participants (DP: plus one).
 * bytes (M entries, or NULL) receives each replica's encoded size (0 for
 * the others).  MSG_ESTATE when f already has a sync in flight. */
int train_prepare(train *tr, int f, uint64_t participants, uint64_t *bytes);

/* Completes fragment f's sync in flight: averages the payloads of the
 * replicas in `participants` (a non-empty subset of those prepared; the
 * others' payloads are dropped), then the outer step and the merge into
 * every replica now (DP: one inner step of every replica with the
 * average); a pending merge of f is thereby done.  MSG_ESTATE when f
 * has no sync in flight. */
int train_apply(train *tr, int f, uint64_t participants);

/* ---- the calls of a coupled run ------------------------------------------ */

/* Replica r encodes its payload of fragment f's sync taken after step
 * `take`, on the calling thread, exactly as train_prepare does for one
 * participant, after landing r's pending merge of f whatever its due
 * step.  Not DP: r must have done `take` steps; DP: r's gradient must be
 * ready and r must have done take - 1 steps (the gradient is of step
 * take).  When f has a sync in flight, this joins it: its take must be
 * `take` and r not yet a contributor; else this contribution opens it.
 * *bytes (bytes may be NULL) receives the payload's size, which
 * train_bytes counts.  MSG_EINVAL for a bad r or f; MSG_ESTATE for
 * the rest; either leaves the trainer unchanged. */
int train_contribute(train *tr, int r, int f, int64_t take, uint64_t *bytes);

/* Completes fragment f's sync in flight with the payloads of `members`
 * (a subset of its contributors; the others' payloads are dropped).
 * members 0 abandons it: no outer step, no merge.  Otherwise their FP32
 * average in replica order, the outer step (or the model-averaging
 * copy), then: DP, every replica's inner step with the average now (as
 * train_apply); not DP, a pending merge of f into every replica r due at
 * step merge_step[r] (merge_step NULL: take + tau + 1 for all; a
 * negative entry: no merge for r, e.g. a failed replica that will
 * rejoin), which lands as described under "Coupled runs".  MSG_ESTATE
 * when f has no sync in flight or (not DP) a replica has already
 * computed its merge step (train_replica_steps >= merge_step[r]: the
 * result is too late for it); MSG_EINVAL for a bad f or members
 * outside the contributors.  Every check comes first: on an error the
 * trainer is unchanged. */
int train_reduce(train *tr, int f, uint64_t members, const int64_t *merge_step);

/* One call of a batch: replica's next inner step (fragment -1), its
 * contribution to fragment's sync taken after step `take` (fragment >=
 * 0), or (fragment TRAIN_OP_COPY) a copy of its parameters as its next
 * step would start from: its pending merges due by then land (as
 * train_land), then its train_num_params values go to `copy`.
 * train_batch fills in a step's number (take) and loss, and a copy's
 * take: the step it precedes. */
enum { TRAIN_OP_COPY = -2 };

typedef struct {
    int replica;
    int fragment;
    int64_t take;
    float loss;
    float *copy; /* TRAIN_OP_COPY: where the parameters go */
} train_op;

/* Runs n ops as the same calls one by one in this order would
 * (train_inner_step, train_contribute, a copy): each op is checked, in order,
 * against the state the ops before it left, then the arithmetic runs,
 * each replica's ops in order, replicas in parallel on the pool -- the
 * same bits, since replicas share no state.  On a refused op the ops
 * before it are done and its error is returned.  After a failure of the
 * arithmetic (MSG_ENUM: a non-finite loss; a data error) the first in
 * replica order is returned and the trainer is left as the ops' checks
 * made it: free it.  This is how an event loop gives the trainer the
 * steps of replicas that compute at nearby instants at once. */
int train_batch(train *tr, train_op *ops, int n);

/* Lands replica r's pending merges due at or before its next step (as
 * train_inner_step does first), e.g. to evaluate r between its steps.
 * DP: nothing to land.  MSG_EINVAL for a bad r. */
int train_land(train *tr, int r);

/* Not DP (MSG_EINVAL).  Replica r heals: its parameters become the
 * outer parameters (every fragment as of its last reduce; sparta, which
 * has none: replica src's, or its own when src < 0 or src == r), its inner
 * optimizer state a copy of replica src's (src < 0 or src == r: it keeps
 * its own), its step count `steps` (>= 0; the learning-rate schedule
 * goes on from there); its pending merges are dropped.  Its
 * contributions to syncs in flight stay: those payloads were sent before
 * it lost its state, and train_reduce counts them when r is among the
 * members (or drops them).  Its data stream keeps its position (the
 * batches of discarded work stay consumed) and its gradient count is not
 * changed.  MSG_EINVAL for a bad r, src (>= M) or steps, trainer
 * unchanged. */
int train_rejoin(train *tr, int r, int src, int64_t steps);

/* Replica r's payloads in the syncs in flight are dropped (each sync
 * stays open, with its other contributors): a replica that left and
 * rejoins behind its group contributes to those syncs again, from its
 * new state (a quorum's late joiner).  MSG_EINVAL for a bad r. */
int train_withdraw(train *tr, int r);

/* A snapshot of a trainer's state, to roll back to (DP's recovery from
 * a failure; it works for every method): every replica's parameters,
 * inner optimizer state, step count, DP gradient and whether it is ready,
 * last loss and data-stream position; the outer parameters and outer
 * momentum.  A trainer may have several (a committed checkpoint and the
 * candidate that will replace it). */
typedef struct train_snapshot train_snapshot;

/* The buffers of a snapshot of tr, holding nothing yet; NULL when out of
 * memory.  Free it (before or after tr) with train_snapshot_free. */
train_snapshot *train_snapshot_new(train *tr);
void train_snapshot_free(train_snapshot *s); /* NULL is allowed */

/* Copies tr's state into s (replacing what s held).  MSG_EINVAL when s
 * is not a snapshot of tr. */
int train_snapshot_take(train *tr, train_snapshot *s);

/* Puts s's state back and drops every sync in flight (payloads freed)
 * and every pending merge.  Gradient counts (tokens) and train_bytes are
 * not rolled back: they count the work done.  s keeps its state, for
 * another restore.  MSG_EINVAL when s is not tr's, MSG_ESTATE when it
 * was never taken. */
int train_snapshot_restore(train *tr, train_snapshot *s);

/* The take step of fragment f's sync in flight, -1 when none (or a bad
 * f), and the mask of the replicas whose payload it holds (0 when none).
 * A sync whose contributors all withdrew is in flight with none. */
int64_t train_sync_take(const train *tr, int f);
uint64_t train_sync_contributors(const train *tr, int f);

/* ---- the lockstep driver ------------------------------------------------- */

/* Step t = train_steps_done + 1 of every replica in lockstep: all inner
 * steps (in parallel), then, from the schedule, the sync taken after t
 * (prepare, all replicas) and the sync applied after t (apply, all
 * replicas); DP: prepare and apply fragment 0. */
int train_step(train *tr);

/* Runs train_step from step 1 to config.steps, evaluating the outer
 * parameters and calling fn (may be NULL) after every eval_interval steps
 * and after the last.  0, TRAIN_STOPPED when fn stopped it, or an
 * error.  MSG_ESTATE when any replica has already stepped. */
int train_run(train *tr, train_report_fn fn, void *ctx);

/* Makes train_run call fn(ctx, t, steps) after every step t (for
 * progress; it must not call into the trainer).  fn NULL: none. */
void train_on_step(train *tr, void (*fn)(void *ctx, int64_t t, int64_t steps),
                   void *ctx);

/* ---- evaluation ---------------------------------------------------------- */

/* Mean loss over the fixed eval set (the same for every method and
 * replica count with the same data config) of: the outer parameters (each
 * fragment as of its last sync; DP: the shared parameters; sparta, which
 * has none: the replicas' average, as below); replica r's
 * parameters; the replicas' FP32 average (summed in replica order, divided
 * by M; allocates one parameter vector for the call). */
int train_eval_outer(train *tr, double *loss);
int train_eval_replica(train *tr, int r, double *loss);
int train_eval_average(train *tr, double *loss);

/* The same evaluations of vectors laid out like the parameters (e.g.
 * copies a TRAIN_OP_COPY made): of `params`; of the FP32 mean of
 * params[0..M-1] (summed in replica order, divided by M, as
 * train_eval_average), a NULL entry standing for that replica's live
 * parameters. */
int train_eval_params(train *tr, const float *params, double *loss);
int train_eval_mean(train *tr, const float *const *params, double *loss);

/* ---- inspection ---------------------------------------------------------- */

int train_replicas(const train *tr);
/* G, the replicas of each site (train_config.site_replicas). */
int train_site_replicas(const train *tr);
size_t train_num_params(const train *tr);
/* The normalised schedule (sched.layers set from the mapping). */
const sched_spec *train_schedule(const train *tr);
/* Replica r's parameters (live; read only). */
const float *train_params(const train *tr, int r);
/* The outer parameters (DP: replica 0's, which all replicas share;
 * sparta: NULL, it has none). */
const float *train_outer(const train *tr);
/* Units of fragment f in increasing order into out (room for every unit);
 * returns their count. */
int train_fragment_units(const train *tr, int f, int *out);
/* Bytes one replica's payload of fragment f takes (DP: f = 0, with
 * dp_codec): sum of codec_wire_bytes over the fragment's tensors. */
uint64_t train_fragment_wire_bytes(const train *tr, int f);
/* Cumulative bytes returned by train_prepare and train_contribute so
 * far, all replicas. */
uint64_t train_bytes(const train *tr);
/* Steps completed by replica r (DP: counted at apply), and by every
 * replica (the minimum). */
int64_t train_replica_steps(const train *tr, int r);
int64_t train_steps_done(const train *tr);
/* Replica r's loss at its last inner step (NAN before the first). */
double train_last_loss(const train *tr, int r);
/* The fragment FedPart trains at replica r's next step (-1 without
 * FedPart). */
int train_fedpart_fragment(const train *tr, int r);
/* The eval chain's entropy rate (the eval loss floor), NAN when unknown. */
double train_entropy_floor(const train *tr);

#endif
