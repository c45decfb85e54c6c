/*
 * scenario.h -- a scenario file (JSON) turned into a validated config.
 *
 * The loader rejects anything it does not understand: syntax errors,
 * unknown or duplicate keys, wrong types, non-finite or out-of-range
 * numbers, inconsistent combinations.  Every message has the form
 *
 *     file:line:col: json.path: what is wrong (expected ...)
 *
 * and points at the offending value (or at the enclosing object for a
 * missing key).  Overrides given on the command line as "a.b.c=value"
 * are applied to the document before validation; a value that parses as
 * JSON is used as such, anything else is taken as a string.  Messages
 * about an override read "--set a.b.c=value: a.b.c: what is wrong" (a
 * sweep's: see scn_doc_load_from).  An unknown key close to exactly one
 * known key names it: "unknown key (did you mean a.b.c? expected ...)".
 *
 * Every key, its default, its unit and its valid range is listed in
 * docs/scenarios.md; the keys of the "train" section (for `dilosim train`) in
 * docs/experiments.md.  Every load validates the train section too; the
 * section itself is handed out by the loaders of scenario_train.h, so
 * that the timing config holds nothing of the trainer.
 *
 * The path "-" reads the scenario from standard input (messages then say
 * "<stdin>" and relative paths are taken from the working directory).  A
 * scenario file is at most SCN_MAX_BYTES bytes.  Loading is safe from
 * several threads at once.  Loaders return 0, MSG_EINPUT for anything
 * wrong with the input (exit 2), or a runtime code (MSG_ENOMEM...).
 */
#ifndef DILOSIM_SCENARIO_H
#define DILOSIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/codec.h"
#include "sim/base/schedule.h"
#include "sim/config/bw_trace.h"
#include "sim/config/kinds.h" /* coll_algo, faults_spec */

#define SCN_MAX_WORKERS 256

/* The revision of the model's defaults and meanings, mixed into every
 * scenario digest: one more whenever a default or what a key means
 * changes, so that a sweep file made before cannot be resumed with rows
 * of after (2: the 25 MB buckets by default). */
#define SCN_MODEL_REVISION 2

/* The default of method.dp_bucket_mb and method.bucket_mb: PyTorch DDP's
 * 25 MB buckets (a framework reduces in buckets, not layer by layer). */
#define SCN_BUCKET_MB 25.0

/* Method sparta's tau where method.tau is not given: the subset taken
 * after step t is merged after step t + 1 (one step of overlap). */
#define SCN_SPARTA_TAU 1
/* Every rate in Gbit/s (a link, a host copy engine, a cost file's
 * bandwidths) lies in [SCN_MIN_GBPS, SCN_MAX_GBPS]. */
#define SCN_MIN_GBPS 1e-6
#define SCN_MAX_GBPS 1e9
#define SCN_PATH_MAX 1024
#define SCN_MAX_BYTES (16 << 20) /* the largest scenario file, bytes */

typedef enum { SCN_ACT_FIRST, SCN_PARAM_FIRST } scn_bwd_order;

/* Which ready reduction the communication stream sends next: the oldest
 * (fifo), or the one the next forward needs first (forward_first: lowest
 * gate step, then lowest layer; a running transfer is never preempted). */
typedef enum { SCN_FIFO, SCN_FORWARD_FIRST } scn_reduce_order;

/* What a worker does when its next step needs a sync that has not
 * completed: wait for it (the forward waits), or continue and merge the
 * result at its first step boundary after the sync completes. */
typedef enum { SCN_LATE_WAIT, SCN_LATE_CONTINUE } scn_late;

/* What a run measures (the "measure" key): the run as scheduled (run: a
 * sync whose apply step lies past the last step is not taken, so the
 * last steps send and wait for nothing), or a steady-state reading
 * (steady: every sync taken after a step up to the last is sent, and the
 * run waits for it, as a longer run would). */
typedef enum { SCN_MEASURE_RUN, SCN_MEASURE_STEADY } scn_measure;

/* What "Gbit" means in bandwidth keys: 1e9 bits (si) or 2^30 (binary). */
typedef enum { SCN_GBIT_SI, SCN_GBIT_BINARY } scn_gbit;

/* Bits in one Gbit: 1e9 (si) or 2^30 (binary). */
double scn_gbit_bits(scn_gbit g);

/* What the Gbit of a CSV of npoints points, nbinary of them counting
 * binary Gbit, is, as its comment line ends: "" when none does (1e9 bits,
 * the default), "; Gbit = 2^30 bits (network.gbit binary)" when all do,
 * "; Gbit = 2^30 bits where network.gbit is binary, else 1e9 bits"
 * otherwise. */
const char *scn_gbit_note(int64_t nbinary, int64_t npoints);

/* How a flow uses its share of the links: at once (ideal), or as a TCP
 * connection with slow start and restart after idle (tcp). */
typedef enum { SCN_TRANSPORT_IDEAL, SCN_TRANSPORT_TCP } scn_transport;

/* When a worker passes the gate of an all-reduce: once the whole group's
 * is over (group), or once it has received its own result (member). */
typedef enum { SCN_COMPLETION_GROUP, SCN_COMPLETION_MEMBER } scn_completion;

/* How a reduction crosses a scenario of sites (network.site_allreduce):
 * hierarchical (reduce inside each site, all-reduce between the site
 * leaders over the WAN, broadcast inside), or one ring over every
 * accelerator of every site. */
typedef enum { SCN_SITE_HIERARCHICAL, SCN_SITE_RING } scn_site_allreduce;

/* The most workers a network.latency_matrix_ms may describe. */
#define SCN_MAX_MATRIX 64

typedef struct {
    /* model */
    double params;           /* parameters in the model (count) */
    int layers;              /* layers that are synced and reduced */
    double step_time_s;      /* compute time of one inner step, s */
    double tokens_per_step;  /* with chips/peak/mfu when step_time_s is */
    double chips;            /*   not given: 6*params*tokens/(chips*peak*mfu) */
    double peak_tflops;      /*   per chip, TFLOP/s */
    double mfu;              /*   model FLOP utilisation, (0, 1] */
    double split[3];         /* forward, backward-activations, backward-
                                 parameters shares of a step; sum 1 */
    scn_bwd_order bwd_order; /* which backward half runs first per layer */
    uint64_t hidden;         /* row length for per-row codecs; 0: derived
                                 as round(sqrt(params/layers/12)) */
    double host_gbps;        /* host <-> accelerator copies of one worker
                                 (method.offload_outer), Gbit/s */

    /* workers */
    int workers;                   /* M */
    double speed[SCN_MAX_WORKERS]; /* relative compute speed, > 0 */
    double straggler_prob;         /* chance a step is slow, [0, 1] */
    double straggler_slowdown;     /* slow step time factor, >= 1 */

    /* sites (workers.sites): worker i is a site of site_replicas[i]
     * accelerators (or replica groups) joined by an intra-site fabric;
     * the inner steps are data-parallel inside a site, the method's syncs
     * cross the WAN between sites.  has_sites 0: one replica per worker
     * (site_replicas 1, no fabric). */
    int has_sites;
    int site_replicas[SCN_MAX_WORKERS];            /* >= 1 */
    double site_intra_gbps[SCN_MAX_WORKERS];       /* Gbit/s, > 0 */
    double site_intra_latency_us[SCN_MAX_WORKERS]; /* one way, us, >= 0 */
    scn_site_allreduce site_allreduce; /* how a sync crosses the sites */

    /* energy (workers.power_w, network.joules_per_gb); has_power and
     * has_joules_per_gb 0: not given, no energy figures reported */
    int has_power;
    double power_busy_w; /* per accelerator while computing, W >= 0 */
    double power_idle_w; /* per accelerator otherwise, W >= 0 */
    int has_joules_per_gb;
    double joules_per_gb; /* J per 1e9 bytes sent on the WAN, >= 0 */

    /* network (per worker; one scenario value fills all of them) */
    double up_gbps[SCN_MAX_WORKERS]; /* INFINITY = unbounded */
    double down_gbps[SCN_MAX_WORKERS];
    double latency_ms[SCN_MAX_WORKERS]; /* one-way latency between i and j
                                           is (lat[i] + lat[j]) / 2 */
    coll_algo collective;
    scn_reduce_order reduce_order;
    scn_gbit gbit;        /* unit of every *_gbps key */
    double tcp_window_mb; /* per-flow cap window/RTT; 0 none */
    scn_completion completion;
    scn_transport transport;
    double tcp_init_window_kb;     /* tcp: a new or restarted
                                           connection's window, 1e3 bytes */
    int tcp_slow_start_after_idle; /* tcp: restart after idle (Linux's
                                           sysctl of that name), 0 or 1 */
    double efficiency;             /* payload share of line rate,
                                           (0, 1] */
    double collective_overhead_ms; /* fixed cost per collective step */
    double startup_ms;             /* one-time cost of each ordered pair's
                                           first flow (connection set-up) */
    double ack_bytes_per_kb;       /* reverse-path ACK bytes per 1000
                                           payload bytes; 0 none */
    double queue_ms;               /* standing queue added to TCP's round
                                           trip (not to one-way latency) */
    int has_latency_matrix;        /* 1: latency_matrix_ms holds the
                                           one-way latency of each pair
                                           (latency_ms is then unused) */
    double latency_matrix_ms[SCN_MAX_MATRIX * SCN_MAX_MATRIX]; /* i*M+j */
    int has_ring_order;                   /* 1: ring_order was given */
    double ring_order_w[SCN_MAX_WORKERS]; /* network.ring_order as given */
    int ring_order[SCN_MAX_WORKERS];      /* the ring's worker order, a
                                           permutation of 0..M-1 (default
                                           0, 1, ..., M-1) */
    /* network.bandwidth_trace (sim/config/bw_trace.h): a file, resolved
     * against the scenario file's directory ("" none; the loader has read
     * and parsed it), or the diurnal form (bw_diurnal 1; low and high
     * required, period_h 24, phase_h 0, 24 steps by default) */
    char bw_trace_path[SCN_PATH_MAX];
    int bw_diurnal;
    bwt_diurnal diurnal;

    /* method */
    sched_spec sched;               /* method, H, P, tau, alpha, layout, order;
                                tau is the least of the workers' */
    double tau_w[SCN_MAX_WORKERS];  /* method.tau as given, per worker */
    int tau_extra[SCN_MAX_WORKERS]; /* worker i's tau - sched.tau (0 for
                                       DP and DiLoCo) */
    double dp_bucket_mb;   /* DP: gradient buckets of at least this many
                                MB (1e6 bytes) of payload; 0: one bucket
                                per layer (default 25, as PyTorch DDP) */
    double bucket_mb;      /* DiLoCo, streaming: the same for the layers
                                of one fragment's sync (not the sliced
                                layout); default 25 */
    int offload_outer;     /* 1: outer parameters and momentum live in
                                host memory; only fragments in flight are
                                on the accelerator (not DP) */
    codec_spec codec;      /* payload of DiLoCo / streaming syncs */
    codec_spec dp_codec;   /* payload of DP gradient all-reduces */
    scn_late late;         /* DiLoCo, streaming (DP always waits) */
    double sync_timeout_s; /* a sync waits at most this long after its
                                first arrival; 0: for every member */
    int quorum;            /* a sync (DP: a gradient reduce) proceeds only
                                with at least this many members taking
                                part, 1..workers.count (default 1) */

    /* faults */
    faults_spec faults;              /* faults.trace is always NULL (a pointer
                                into the config would dangle in a copy):
                                trace_path[0] != 0 means a trace; set
                                faults.trace = trace_path on the copy
                                you pass to faults_new */
    char trace_path[SCN_PATH_MAX];   /* the trace file, resolved against the
                                      scenario file's directory; "" none.
                                      The loader has read and parsed it
                                      for workers.count workers: it was a
                                      valid trace when the load returned */
    int64_t checkpoint_steps;        /* DP checkpoint interval, steps >= 1 */
    double recovery_bytes_per_param; /* outer parameters a repaired worker
                                       downloads, bytes per parameter */
    int64_t checkpoint_every_steps;  /* a checkpoint after every N-th step,
                                        N >= 0; 0: none (DiLoCo, streaming),
                                        checkpoint_steps (DP): see
                                        scn_checkpoint_every */
    double checkpoint_s; /* s a worker's compute stops to write one */
    double restart_s;    /* s a repaired worker needs before its download
                            (process start, loading) */
    char member_trace_path[SCN_PATH_MAX]; /* faults.membership_trace
                            (sim/config/member_trace.h): the file of joins
                            and leaves, resolved against the scenario
                            file's directory; "" none.  The loader has
                            read and parsed it for workers.count */

    int64_t steps; /* inner steps to simulate, >= 1 */
    uint64_t seed;
    scn_measure measure; /* run (default) or steady */

    /* A 64-bit digest of the resolved document (after the variant and
     * the overrides, without its "variants" and "sweep" sections, keys in
     * document order): two configs with the same digest were loaded from
     * the same effective scenario.  Written as 16 hex digits where a file
     * must remember what it was computed from (sweep --resume). */
    uint64_t digest;

    /* Not a scenario key: 1 makes the engine simulate every op and every
     * period (the `--full` option), 0 lets it fast-forward where the result
     * is the same (run.h).  The loader sets 0; not in the digest. */
    int full;
} scn_config;

/* 1 when late syncs let the workers continue: `late: continue` and not
 * DP (a DP step needs the previous step's update: it always waits). */
int scn_late_continues(const scn_config *c);

/* The one-way latency from worker i to worker j in ms: the matrix's
 * entry, or (latency_ms[i] + latency_ms[j]) / 2. */
double scn_latency_ms(const scn_config *c, int i, int j);

/* Fills c with the defaults (see docs/scenarios.md). */
void scn_defaults(scn_config *c);

/* Loads and validates a scenario file, applying the overrides
 * ("key.path=value", nset of them) first.  Returns 0, or MSG_EINPUT (or
 * MSG_ENOMEM) with a one-line message in err (file missing, syntax,
 * schema, range). */
int scn_load(const char *path, const char *const *sets, int nset,
             scn_config *out, char *err, size_t errlen);

/* The same from a string; `name` stands for the file name in messages and
 * relative trace paths are taken from the working directory. */
int scn_load_string(const char *text, const char *name, const char *const *sets,
                    int nset, scn_config *out, char *err, size_t errlen);

/* Step time in seconds (given or computed from FLOPs). */
double scn_step_time_s(const scn_config *c);

/* The accelerators of worker i (0 <= i < c->workers), the count the
 * energy figures multiply workers.power_w by: site_replicas[i] (1
 * without sites) times model.chips when the FLOP keys give it (the chips
 * of one replica), else times 1. */
double scn_accelerators(const scn_config *c, int i);

/* The method as a person names it, into buf (always terminated):
 * "Data-parallel", "DiLoCo, H 100, bf16", "Streaming DiLoCo, H 100,
 * overlap 1, 4-bit".  The parts: the method; H (not DP); tau > 0 as
 * "overlap tau", outer or eager overlap by that name; the payload's codec
 * unless it is fp32 (DP: ", <codec> gradients"); with a tau per worker
 * "overlap 1 to 5" (the least and the largest).  Returns the length the
 * whole label has, as snprintf does. */
int scn_method_label(const scn_config *c, char *buf, size_t n);

/*
 * Variants and sweeps.  A scenario may name variants of itself:
 *
 *   "variants": {"data_parallel": {"method": {"name": "dp"}},
 *                "diloco":        {"method": {"name": "diloco"}}}
 *
 * Each variant is a partial scenario deep-merged over the base document
 * (objects merge key by key, anything else replaces) before the --set
 * overrides are applied and before validation, so a variant is validated
 * exactly like the keys it sets.  Variant names keep document order.
 *
 * A scenario may also carry a "sweep" section for `dilosim sweep`:
 *
 *   "sweep": {"network.bandwidth_gbps": "logspace:-1:3:50",
 *             "workers.count": [2, 4, 8]}
 *
 * mapping a dotted key to a grid spec (a string: a comma list,
 * "logspace:A:B:N" or "linspace:A:B:N") or to an array of values.  The
 * base scenario ignores both sections when it is run.
 */
#define SCN_MAX_VARIANTS 32
#define SCN_MAX_SWEEP 16
#define SCN_NAME_MAX 64
#define SCN_SPEC_MAX 4096

typedef struct {
    int nvariants;
    char variant[SCN_MAX_VARIANTS][SCN_NAME_MAX]; /* in document order */
    int nsweep;
    char sweep_key[SCN_MAX_SWEEP][SCN_NAME_MAX * 2];         /* dotted key */
    char sweep_spec[SCN_MAX_SWEEP][SCN_SPEC_MAX];            /* a grid spec; an
        array in the file becomes a comma list of its JSON values */
    int sweep_line[SCN_MAX_SWEEP], sweep_col[SCN_MAX_SWEEP]; /* where its
        value is in the file (1-based) */
} scn_meta;

/* Reads the variant names and the sweep section of a scenario file
 * (syntax and the two sections' shapes are checked; the rest is not).
 * Returns 0, or MSG_EINPUT / MSG_ENOMEM with a one-line message. */
int scn_meta_load(const char *path, scn_meta *meta, char *err, size_t errlen);

/* scn_load with a variant merged in first (variant NULL: the base).  An
 * unknown variant name is an error that lists the known ones. */
int scn_load_variant(const char *path, const char *variant,
                     const char *const *sets, int nset, scn_config *out,
                     char *err, size_t errlen);

/*
 * A scenario parsed once and loaded many times (a sweep's points, a
 * table's scan).  scn_doc_open reads the file, checks its syntax, merges
 * the variant (NULL: none) and applies the overrides; errors of those
 * steps show here.  scn_doc_load then copies the resolved document,
 * applies nmore further overrides (numbered after the doc's in messages:
 * "--set a.b=v: a.b: ..."), validates and fills *out, exactly as
 * scn_load_variant with all the overrides would.  Concurrent scn_doc_load
 * calls on one doc are safe; the doc is read-only after scn_doc_open.
 */
typedef struct scn_doc scn_doc;

/* *out gets the doc.  Returns 0, or MSG_EINPUT / MSG_ENOMEM with the
 * message in err (*out is then NULL). */
int scn_doc_open(const char *path, const char *variant, const char *const *sets,
                 int nset, scn_doc **out, char *err, size_t errlen);
/* Returns 0, or MSG_EINPUT / MSG_ENOMEM with the message in err. */
int scn_doc_load(const scn_doc *doc, const char *const *more, int nmore,
                 scn_config *out, char *err, size_t errlen);

/* Where an override of scn_doc_load_from comes from, for its messages. */
typedef struct {
    const char *vary;        /* the --vary KEY=SPEC it was drawn from: messages
                          read "--vary KEY=SPEC: json.path: ...", or NULL */
    int sweep;               /* else >= 0: the member of the file's "sweep"
                          section (in document order) it was drawn from,
                          and */
    int item;                /*   its item when that member is an array:
                          messages read "file:line:col: sweep.KEY[item]:
                          ..." (the path after it when not KEY);
                          else (-1) a --set, or: */
    const char *file;        /* non-NULL (vary NULL, sweep -1): a member of a
                          file of overrides (setfile.h): messages read
                          "FILE:line:col: PATH: ...", the position that of
                          the member's value (its key for a wrong key) */
    const char *text;        /*   the file's text, and the offsets in it of */
    size_t key_off, val_off; /* the member's key and value */
} scn_origin;

/* scn_doc_load with override more[i] drawn from from[i] (from NULL:
 * every one a --set, as scn_doc_load). */
int scn_doc_load_from(const scn_doc *doc, const char *const *more,
                      const scn_origin *from, int nmore, scn_config *out,
                      char *err, size_t errlen);
/* scn_meta_load of the doc's file, as read by scn_doc_open. */
int scn_doc_meta(const scn_doc *doc, scn_meta *meta, char *err, size_t errlen);
void scn_doc_free(scn_doc *doc);

/* The segments of the n bytes at s as a dotted key path ("network.
 * efficiency", "workers.speed.1": segments of letters, digits and '_'),
 * or 0 when they are none (an empty segment, another byte): the syntax
 * of the keys of --set, of a file of overrides, of a measurements CSV's
 * key columns.  Whether the key exists is the loader's to say. */
int scn_key_segments(const char *s, size_t n);

/* The 64-bit digest of n bytes (8 at a time through rng_mix, then the
 * length): what scn_config.digest is of the resolved document's compact
 * print, and what a sweep folds its header and values into. */
uint64_t scn_digest_bytes(const char *s, size_t n);

/* The steps between two checkpoints: a checkpoint follows every step
 * k * N, k >= 1.  DP: faults.checkpoint_every_steps when set, else
 * faults.checkpoint_steps; it is the checkpoint a rollback goes back to
 * (one interval, not two).  DiLoCo and streaming: checkpoint_every_steps
 * (a checkpoint of the outer state), 0 for none. */
static inline int64_t scn_checkpoint_every(const scn_config *c) {
    if (c->checkpoint_every_steps > 0 || c->sched.method != SCHED_DP)
        return c->checkpoint_every_steps;
    return c->checkpoint_steps;
}

#endif
