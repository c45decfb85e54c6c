/*
 * calib_predict.c -- the predictions of a calibration (calib_int.h): each
 * measured row's world as overrides of the base, loaded from the one
 * parsed document (scn_doc_load is safe from several threads), simulated,
 * and read as the time the row measured; many at once on the pool, each a
 * simulation of its own, so that the results do not depend on the
 * threads.
 *
 * The overrides of a prediction, in this order (a later one wins): the
 * base's --set (in the doc), the step times' estimates, the keys' values
 * (msg_number: the shortest decimal that reads back the same), then the
 * row's own world: a run row's columns, or the fixed world of an
 * all-reduce (calib.h).  So a row that sets a fitted key itself keeps its
 * own value (the key's column is 0 there), and the all-reduce's world
 * cannot be moved by a key.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/engine/probe.h"
#include "sim/engine/run.h"
#include "sim/study/calib_int.h"

#define AR_SETS 18    /* the all-reduce world's overrides */
#define AR_SET_MAX 64 /* bytes of one */
#define SET_MAX (CALIB_KEY_MAX + MSG_NUM_MAX + 1)
#define MORE_MAX (CALIB_NSPEED + CALIB_MAX_KEYS + MEAS_MAX_SETS + AR_SETS)

/* ---- the overrides of one prediction ------------------------------------ */

/* The step times' estimates as overrides (meas_speeds_sets):
 * model.step_time_s, the workers' speeds (unless one worker was logged:
 * its speed is 1 whatever the scenario's count), the stragglers. */
static int speed_sets(calib_ctx *c, const meas_speeds *sp) {
    c->speed_buf = malloc(MEAS_SPEEDS_SETS * sizeof *c->speed_buf);
    if (!c->speed_buf) return MSG_ENOMEM;
    int n = meas_speeds_sets(sp, c->speed_buf, MEAS_SPEEDS_SETS);
    for (int i = 0; i < n && i < CALIB_NSPEED; i++)
        if (i != 1 || sp->workers > 1) c->speed[c->nspeed++] = c->speed_buf[i];
    return n < 0 ? n : 0;
}

int calib__open(calib_ctx *c, const calib_spec *spec, char *err,
                size_t errlen) {
    static const char *const defaults[] = CALIB_DEFAULT_KEYS;
    memset(c, 0, sizeof *c);
    c->spec = spec;
    c->nkeys = spec->keys ? spec->nkeys : CALIB_NDEFAULT;
    for (int k = 0; k < c->nkeys && k < CALIB_MAX_KEYS; k++)
        c->key[k] = spec->keys ? spec->keys[k] : defaults[k];
    int rc = scn_doc_open(spec->scenario, NULL, spec->sets, spec->nset, &c->doc,
                          err, errlen);
    if (!rc && spec->speeds && (rc = speed_sets(c, spec->speeds)))
        msg_set(err, errlen, rc, "out of memory");
    if (!rc && !(c->pool = pool_new(spec->jobs < 1 ? 1 : spec->jobs)))
        rc = msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    return rc;
}

void calib__close(calib_ctx *c) {
    free(c->speed_buf);
    scn_doc_free(c->doc);
    pool_free(c->pool);
    memset(c, 0, sizeof *c);
}

/* The fixed world of one warm all-reduce of row->bytes among row->ranks
 * (calib.h), into buf and more[]; returns their count. */
static int allreduce_world(const meas_row *row, char buf[][AR_SET_MAX],
                           const char **more) {
    char b[MSG_NUM_MAX];
    int n = 0;
    snprintf(buf[n++], AR_SET_MAX, "workers.count=%d", row->ranks);
    snprintf(buf[n++], AR_SET_MAX, "model.params=%s",
             msg_number(row->bytes / 4, b)); /* fp32: 4 bytes a param */
    snprintf(buf[n++], AR_SET_MAX, "model.step_time_s=%s",
             msg_number(CALIB_AR_STEP_S, b));
    snprintf(buf[n++], AR_SET_MAX, "steps=%d", CALIB_AR_WARMUP + 1);
    static const char *const fixed[] = {"model.layers=1",
                                        "method.name=diloco",
                                        "method.H=1",
                                        "method.fragments=1",
                                        "method.tau=0",
                                        "method.overlap=inner",
                                        "method.codec=fp32",
                                        "method.late=wait",
                                        "method.sync_timeout_s=0",
                                        "method.offload_outer=false",
                                        "workers.speed=1",
                                        "workers.stragglers.probability=0",
                                        "faults.mtbf_hours=0",
                                        "measure=steady"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        snprintf(buf[n++], AR_SET_MAX, "%s", fixed[i]);
    for (int i = 0; i < n; i++) more[i] = buf[i];
    return n;
}

/* The loader's message about a row's world, as the row's: "FILE:LINE: "
 * before it, and "--set KEY=VALUE: " left out where the override is one of
 * the row's own (own[0..nown-1]): "runs.csv:7: method.H: ...". */
static int row_error(const calib_ctx *c, const meas_row *row, int rc,
                     const char *const *own, int nown, const char *msg,
                     char *err, size_t errlen) {
    for (int i = 0; i < nown; i++) {
        size_t n = strlen(own[i]);
        if (!strncmp(msg, "--set ", 6) && !strncmp(msg + 6, own[i], n) &&
            !strncmp(msg + 6 + n, ": ", 2)) {
            msg += 6 + n + 2;
            break;
        }
    }
    return msg_set(err, errlen, rc, "%s:%d: %s",
                   c->spec->m->file[row->file].path, row->line, msg);
}

/* ---- simulations ---------------------------------------------------------- */

/* The last collective of a run, from its "allreduce" spans: the span step
 * (the step after which it was taken) that is the largest, from its first
 * worker's start to its last worker's end (bench/netrig/trace.c's
 * definition). */
typedef struct {
    int64_t step, start, end;
} last_coll;

static void on_span(void *ctx, const run_span *s) {
    last_coll *l = ctx;
    if (s->track != 1 || strcmp(s->name, "allreduce")) return;
    if (s->step > l->step) *l = (last_coll){s->step, s->start_ns, s->end_ns};
    else if (s->step == l->step) {
        if (s->start_ns < l->start) l->start = s->start_ns;
        if (s->end_ns > l->end) l->end = s->end_ns;
    }
}

/* Runs cfg: the wall time, or (spans) the last collective's, in ns. */
static int simulate(const scn_config *cfg, int spans, int64_t *ns, char *msg,
                    size_t msglen) {
    run_result *r = malloc(sizeof *r);
    last_coll l = {-1, 0, 0};
    run_hooks h = {.span = on_span, .span_ctx = &l};
    int rc = r ? run_simulate(cfg, spans ? &h : NULL, r, msg, msglen)
               : msg_set(msg, msglen, MSG_ENOMEM, "out of memory");
    if (!rc && !r->finished)
        rc = msg_set(msg, msglen, MSG_EINPUT,
                     "the simulation does not finish: %s", r->stop_reason);
    if (!rc && spans && l.step < 0)
        rc = msg_set(msg, msglen, MSG_EINPUT,
                     "the simulation made no "
                     "all-reduce");
    if (!rc) *ns = spans ? l.end - l.start : r->wall_ns;
    free(r);
    return rc;
}

int calib__predict(const calib_ctx *c, calib_job *j, char *err, size_t errlen) {
    const meas_row *row = &c->spec->m->rows[j->row];
    char keys[CALIB_MAX_KEYS][SET_MAX], ar[AR_SETS][AR_SET_MAX];
    char msg[CALIB_ERR_MAX], b[MSG_NUM_MAX];
    const char *more[MORE_MAX];
    int n = 0;
    for (int i = 0; i < c->nspeed; i++) more[n++] = c->speed[i];
    for (int k = 0; k < c->nkeys; k++)
        if (j->use[k]) {
            snprintf(keys[k], SET_MAX, "%s=%s", c->key[k],
                     msg_number(j->val[k], b));
            more[n++] = keys[k];
        }
    int own = n;
    if (row->kind == MEAS_RUN)
        for (int i = 0; i < row->nset; i++) more[n++] = row->sets[i];
    else if (row->kind == MEAS_ALLREDUCE)
        n += allreduce_world(row, ar, more + n);
    scn_config *cfg = malloc(sizeof *cfg);
    int64_t ns = 0;
    int rc = cfg ? scn_doc_load(c->doc, more, n, cfg, msg, sizeof msg)
                 : msg_set(msg, sizeof msg, MSG_ENOMEM, "out of memory");
    if (!rc) cfg->full = c->spec->full;
    if (!rc && row->kind == MEAS_STREAM) {
        double bytes = row->bytes;
        rc = bytes >= 1 && bytes < 1.8e19
                 ? probe_stream(cfg, (uint64_t)llround(bytes), row->streams,
                                &ns, msg, sizeof msg)
                 : msg_set(msg, sizeof msg, MSG_EINPUT,
                           "%s bytes cannot be sent", msg_number(bytes, b));
    } else if (!rc) {
        rc = simulate(cfg, row->kind == MEAS_ALLREDUCE, &ns, msg, sizeof msg);
    }
    free(cfg);
    if (rc) return row_error(c, row, rc, more + own, n - own, msg, err, errlen);
    j->s = (double)ns * 1e-9;
    return 0;
}

/* ---- many at once ----------------------------------------------------------- */

typedef struct {
    const calib_ctx *c;
    calib_job *jobs;
    int64_t n, done;
    pthread_mutex_t mu; /* done and the progress calls */
} batch;

static int batch_task(void *ctx, int64_t i, char *err, size_t errlen) {
    batch *b = ctx;
    int rc = calib__predict(b->c, &b->jobs[i], err, errlen);
    const calib_spec *s = b->c->spec;
    pthread_mutex_lock(&b->mu);
    b->done++;
    if (s->progress) s->progress(s->progress_ctx, b->done, b->n);
    pthread_mutex_unlock(&b->mu);
    return rc;
}

int calib__batch(calib_ctx *c, calib_job *jobs, int64_t n, char *err,
                 size_t errlen) {
    batch b = {.c = c, .jobs = jobs, .n = n};
    pthread_mutex_init(&b.mu, NULL);
    int rc = pool_run(c->pool, n, batch_task, &b, err, errlen);
    pthread_mutex_destroy(&b.mu);
    c->runs += b.done;
    return rc;
}

/* ---- the base's values of the keys ------------------------------------------ */

/* The loader is the one reader of keys, so a key's value in the base is
 * read back through it: loaded with the key at a and at 2a, the config's
 * first double (at any 8-byte offset but the digest's) that is not the
 * base's and reads a x scale and 2a x scale, for one scale > 0, is the
 * key's field (a key stored in other units, the hours of faults.*, has
 * scale 3600; one filling every worker's entry, its first); its value in
 * the base is the base's double / scale.  Pairs a, 2a that every range
 * of the schema admits one of: 0.25 and 0.5, or 2 and 4. */
static int field_value(const scn_config *c0, const scn_config *c1,
                       const scn_config *c2, double a, double *out) {
    const char *p0 = (const char *)c0, *p1 = (const char *)c1;
    const char *p2 = (const char *)c2;
    size_t dig = offsetof(scn_config, digest);
    for (size_t off = 0; off + sizeof(double) <= sizeof *c0;
         off += sizeof(double)) {
        double v0, v1, v2;
        if (off == dig) continue;
        memcpy(&v0, p0 + off, sizeof v0);
        memcpy(&v1, p1 + off, sizeof v1);
        memcpy(&v2, p2 + off, sizeof v2);
        double scale = v1 / a;
        if (v1 != v0 && v2 == 2 * v1 && scale > 0 && isfinite(scale)) {
            *out = v0 / scale;
            return 0;
        }
    }
    return -1;
}

/* "--set KEY=A: KEY: what" (the loader's) as "--fit KEY: what". */
static int key_error(const char *key, const char *set, const char *msg,
                     char *err, size_t errlen) {
    size_t n = strlen(set), k = strlen(key);
    if (!strncmp(msg, "--set ", 6) && !strncmp(msg + 6, set, n) &&
        !strncmp(msg + 6 + n, ": ", 2)) {
        msg += 6 + n + 2;
        if (!strncmp(msg, key, k) && !strncmp(msg + k, ": ", 2)) msg += k + 2;
    }
    return msg_set(err, errlen, MSG_EINPUT, "--fit %s: %s", key, msg);
}

/* The value of key in the base c0 (its overrides `more`, nmore of them),
 * through two loads with the key set. */
static int key_value(const calib_ctx *c, const scn_config *c0,
                     const char **more, int nmore, const char *key, double *out,
                     char *err, size_t errlen) {
    static const double pair[] = {0.25, 2};
    scn_config *c1 = malloc(sizeof *c1), *c2 = malloc(sizeof *c2);
    char s1[SET_MAX], s2[SET_MAX], msg[CALIB_ERR_MAX], first[CALIB_ERR_MAX];
    int rc = c1 && c2 ? MSG_EINPUT : MSG_ENOMEM, found = 0, loaded = 0;
    first[0] = 0;
    for (int i = 0; i < 2 && rc == MSG_EINPUT && !found; i++) {
        snprintf(s1, sizeof s1, "%s=%g", key, pair[i]);
        snprintf(s2, sizeof s2, "%s=%g", key, 2 * pair[i]);
        more[nmore] = s1;
        int r1 = scn_doc_load(c->doc, more, nmore + 1, c1, msg, sizeof msg);
        if (r1 && !first[0]) key_error(key, s1, msg, first, sizeof first);
        more[nmore] = s2;
        if (!r1 && !scn_doc_load(c->doc, more, nmore + 1, c2, msg, sizeof msg))
            loaded = 1, found = !field_value(c0, c1, c2, pair[i], out);
        if (r1 && r1 != MSG_EINPUT) rc = r1;
    }
    free(c1);
    free(c2);
    if (found) return 0;
    if (rc == MSG_ENOMEM) return msg_set(err, errlen, rc, "out of memory");
    if (!loaded) return msg_set(err, errlen, MSG_EINPUT, "%s", first);
    return msg_set(err, errlen, MSG_EINPUT,
                   "--fit %s: not a key of one number (expected a key such "
                   "as network.efficiency)",
                   key);
}

int calib__base(const calib_ctx *c, double *values, int *workers,
                uint64_t *digest, char *err, size_t errlen) {
    const char *more[CALIB_NSPEED + 1];
    for (int i = 0; i < c->nspeed; i++) more[i] = c->speed[i];
    scn_config *c0 = malloc(sizeof *c0);
    if (!c0) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int rc = scn_doc_load(c->doc, NULL, 0, c0, err, errlen); /* the base */
    if (!rc) {
        *workers = c0->workers;
        *digest = c0->digest;
        rc = scn_doc_load(c->doc, more, c->nspeed, c0, err, errlen);
    }
    for (int k = 0; !rc && k < c->nkeys; k++)
        rc = key_value(c, c0, more, c->nspeed, c->key[k], &values[k], err,
                       errlen);
    free(c0);
    return rc;
}
