/*
 * engine.c -- the C engine as the interactive page calls it: a few
 * functions exported from the WebAssembly module (make wasm) that take
 * the scenario as text and the overrides as `--set` lines and give JSON
 * text back.  Not part of the library: the top layer, like sim/mpi.
 *
 * The scenario lives in the module's own file system (emscripten's
 * MEMFS) under the name the page was written from, so that the loader's
 * messages read as on the command line ("scenarios/default.json:3:5:
 * ..." and "--set KEY=VALUE: ..."), and so that the plan, which reads its
 * scenario from a path, reads it there.
 *
 * Every answer is a malloc'ed NUL-terminated JSON object, freed with
 * dl_free: on success the figures, with the ones the page shows beside
 * each as "*_text", the text `dilosim run` / `plan` print for them
 * (msg_number: the shortest decimal that reads back as the same double;
 * the page shows these, so no JavaScript number formatting touches
 * them); on failure {"error": MESSAGE, "status": EXIT} with the loader's
 * or the engine's one-line message and the exit status the command line
 * would give.  NULL only when out of memory.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/base/jw.h"
#include "sim/base/msg.h"
#include "sim/config/scenario.h"
#include "sim/config/scenario_train.h"
#include "sim/engine/run.h"
#include "sim/out/report.h"
#include "sim/study/plan.h"
#include "sim/study/table.h"
#include "sim/engine/explain.h"
#include "sim/out/explain_out.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#define DL_EXPORT EMSCRIPTEN_KEEPALIVE
#else
#define DL_EXPORT
#endif

#define DL_MAX_SETS 256
#define DL_ERR_MAX 2048
#define DL_BW_KEY "network.bandwidth_gbps"

/* The --set lines of text, split in place (text is the caller's copy):
 * one KEY=VALUE a line, empty lines skipped. */
typedef struct {
    char *buf;
    const char *set[DL_MAX_SETS + 1]; /* one more: the curve's bandwidth */
    int n;
} dl_sets;

static int sets_split(const char *text, dl_sets *s, char *err, size_t n) {
    s->n = 0;
    if (!(s->buf = strdup(text ? text : "")))
        return msg_set(err, n, MSG_ENOMEM, "out of memory");
    for (char *line = s->buf, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        if (!*line) continue;
        if (s->n == DL_MAX_SETS)
            return msg_set(err, n, MSG_EINPUT, "more than %d --set overrides",
                           DL_MAX_SETS);
        s->set[s->n++] = line;
    }
    return 0;
}

/* A JSON answer being written to memory. */
typedef struct {
    char *text;
    size_t len;
    FILE *f;
    jw w;
} dl_out;

static int out_open(dl_out *o) {
    o->text = NULL;
    if (!(o->f = open_memstream(&o->text, &o->len))) return -1;
    jw_init(&o->w, o->f);
    jw_lines(&o->w, NULL, '{', 1, 0);
    return 0;
}

static char *out_close(dl_out *o) {
    jw_end(&o->w);
    if (fclose(o->f)) {
        free(o->text);
        return NULL;
    }
    return o->text;
}

/* {"error": err, "status": the exit status of rc}. */
static char *answer_error(int rc, const char *err) {
    dl_out o;
    if (out_open(&o)) return NULL;
    jw_str(&o.w, "error", err);
    jw_int(&o.w, "status", msg_exit_status(rc));
    return out_close(&o);
}

/* x as a number and, under key_text, as the command line prints it (null
 * when x is not finite: NaN, a value that does not exist). */
static void num_text(jw *w, const char *key, const char *key_text, double x) {
    char buf[MSG_NUM_MAX];
    jw_num(w, key, x);
    if (isfinite(x)) jw_str(w, key_text, msg_number(x, buf));
    else jw_null(w, key_text);
}

static int load(const char *path, const char *variant, const dl_sets *s,
                scn_config *cfg, char *err, size_t n) {
    scn_train train;
    return scn_load_train(path, variant && *variant ? variant : NULL, s->set,
                          s->n, cfg, &train, err, n);
}

DL_EXPORT void dl_free(char *p) {
    free(p);
}

/* Creates the directories of path (as mkdir -p of its dirname). */
static int make_parents(char *path) {
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = 0;
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc && errno != EEXIST) return -1;
    }
    return 0;
}

/* Writes text as the file at path (its directories made): the scenario
 * the other functions read.  Returns NULL-free JSON: {"ok": true} or an
 * error. */
DL_EXPORT char *dl_scenario(const char *path, const char *text) {
    char *p = strdup(path);
    FILE *f = p && !make_parents(p) ? fopen(path, "wb") : NULL;
    free(p);
    int bad = !f || fputs(text, f) == EOF;
    if (f && fclose(f)) bad = 1;
    if (bad) return answer_error(MSG_EIO, "cannot write the scenario");
    dl_out o;
    if (out_open(&o)) return NULL;
    jw_bool(&o.w, "ok", 1);
    return out_close(&o);
}

/* The variants of the scenario at path, each with its method as a person
 * names it (scn_method_label, after the overrides):
 * {"variants": [{"name", "method", "label"}...]} (name null: the base,
 * for a scenario without variants). */
DL_EXPORT char *dl_methods(const char *path, const char *sets) {
    char err[DL_ERR_MAX], label[256];
    dl_sets s;
    scn_meta meta;
    int rc = sets_split(sets, &s, err, sizeof err);
    if (!rc) rc = scn_meta_load(path, &meta, err, sizeof err);
    dl_out o;
    if (rc || out_open(&o)) {
        free(s.buf);
        return rc ? answer_error(rc, err) : NULL;
    }
    jw_lines(&o.w, "variants", '[', 2, 1);
    int n = meta.nvariants ? meta.nvariants : 1;
    for (int i = 0; i < n && !rc; i++) {
        const char *v = meta.nvariants ? meta.variant[i] : NULL;
        scn_config cfg;
        if ((rc = load(path, v, &s, &cfg, err, sizeof err))) break;
        scn_method_label(&cfg, label, sizeof label);
        jw_object(&o.w, NULL);
        if (v) jw_str(&o.w, "name", v);
        else jw_null(&o.w, "name");
        jw_str(&o.w, "method", sched_method_name(cfg.sched.method));
        jw_str(&o.w, "label", label);
        jw_end(&o.w);
    }
    jw_end(&o.w);
    char *text = out_close(&o);
    free(s.buf);
    if (rc) {
        free(text);
        return answer_error(rc, err);
    }
    return text;
}

/* One run of the scenario at path (variant "" or NULL: the base) with
 * the overrides: {"run": the object `dilosim run` prints, "cu_text",
 * "bytes_text", "wall_text", "label", and "explain": expl_write_json's
 * object}. */
DL_EXPORT char *dl_run(const char *path, const char *variant,
                       const char *sets) {
    char err[DL_ERR_MAX], label[256];
    dl_sets s;
    scn_config cfg;
    int rc = sets_split(sets, &s, err, sizeof err);
    if (!rc) rc = load(path, variant, &s, &cfg, err, sizeof err);
    expl_result *ex = rc ? NULL : malloc(sizeof *ex);
    if (!rc && !ex) rc = msg_set(err, sizeof err, MSG_ENOMEM, "out of memory");
    if (!rc) rc = expl_run(&cfg, ex, err, sizeof err);
    run_result *r = ex ? &ex->run : NULL;
    free(s.buf);
    char *run = NULL, *text = NULL;
    size_t len;
    FILE *m = rc ? NULL : open_memstream(&run, &len);
    dl_out o;
    if (m) {
        report_run_json(m, &cfg, r);
        if (fclose(m)) run = NULL;
    }
    if (!rc && run && !out_open(&o)) {
        scn_method_label(&cfg, label, sizeof label);
        jw_str(&o.w, "label", label);
        num_text(&o.w, "cu", "cu_text", r->compute_utilization);
        num_text(&o.w, "bytes", "bytes_text", r->bytes_sent_total);
        num_text(&o.w, "wall_s", "wall_text", r->wall_time_s);
        jw_raw(&o.w, "run", run);
        /* named as `dilosim explain` names it: the variant or the method */
        expl_write_json(&o.w, "explain",
                        variant && *variant
                            ? variant
                            : sched_method_name(cfg.sched.method),
                        &cfg, ex);
        text = out_close(&o);
    }
    free(ex);
    free(run);
    return rc ? answer_error(rc, err) : text;
}

/* The plan's least bandwidth for target CU (plan_compute on one method,
 * one thread): {"least_gbps", "least_text", "cu_at_least", "cu_text",
 * "least_status", "latency_limit_ms", "latency_text", "latency_status"},
 * the numbers as `dilosim plan --json` prints them (null when not
 * reached). */
DL_EXPORT char *dl_plan(const char *path, const char *variant, const char *sets,
                        double target) {
    char err[DL_ERR_MAX];
    dl_sets s;
    plan_result *p = malloc(sizeof *p);
    int rc = sets_split(sets, &s, err, sizeof err);
    if (!rc && !p) rc = msg_set(err, sizeof err, MSG_ENOMEM, "out of memory");
    const char *vars[1] = {variant};
    plan_spec spec = {.path = path,
                      .variants = vars,
                      .nvariants = variant && *variant ? 1 : 0,
                      .sets = s.set,
                      .nset = s.n,
                      .target_cu = target,
                      .jobs = 1};
    if (!rc) rc = plan_compute(&spec, p, err, sizeof err);
    free(s.buf);
    char *text = NULL;
    dl_out o;
    if (!rc && !out_open(&o)) {
        const plan_method *m = &p->method[0];
        int reached = m->least.status != TABLE_NOT_REACHED;
        num_text(&o.w, "least_gbps", "least_text",
                 reached ? m->least.v_hi : NAN);
        num_text(&o.w, "cu_at_least", "cu_text",
                 reached ? m->least.cu_hi : NAN);
        jw_str(&o.w, "least_status",
               m->least.status == TABLE_FOUND      ? "found"
               : m->least.status == TABLE_AT_START ? "below_range"
                                                   : "above_range");
        num_text(&o.w, "latency_limit_ms", "latency_text",
                 reached ? m->latency.v_hi : NAN);
        jw_str(&o.w, "latency_status",
               !reached || m->latency.status == TABLE_NOT_REACHED ? "none"
               : m->latency.status == TABLE_AT_START ? "above_range"
                                                     : "found");
        text = out_close(&o);
    }
    free(p);
    return rc ? answer_error(rc, err) : text;
}

/* CU over the bandwidths of grid (a --grid spec): one run per point with
 * network.bandwidth_gbps set last, as `dilosim sweep` sets it:
 * {"gbps": [...], "cu": [...]}. */
DL_EXPORT char *dl_curve(const char *path, const char *variant,
                         const char *sets, const char *grid) {
    char err[DL_ERR_MAX], num[MSG_NUM_MAX], bw[MSG_NUM_MAX + 32];
    dl_sets s;
    double *x = NULL, *cu = NULL;
    int n = 0, rc = sets_split(sets, &s, err, sizeof err);
    if (!rc)
        rc = table_parse_numbers("grid", grid, TABLE_MAX_POINTS, &x, &n, err,
                                 sizeof err);
    if (!rc && !(cu = malloc((size_t)n * sizeof *cu)))
        rc = msg_set(err, sizeof err, MSG_ENOMEM, "out of memory");
    for (int i = 0; i < n && !rc; i++) {
        snprintf(bw, sizeof bw, "%s=%s", DL_BW_KEY, msg_number(x[i], num));
        s.set[s.n] = bw;
        dl_sets one = s;
        one.n = s.n + 1;
        scn_config cfg;
        run_result r;
        if (!(rc = load(path, variant, &one, &cfg, err, sizeof err)) &&
            !(rc = run_simulate(&cfg, NULL, &r, err, sizeof err)))
            cu[i] = r.compute_utilization;
    }
    free(s.buf);
    char *text = NULL;
    dl_out o;
    if (!rc && !out_open(&o)) {
        jw_array(&o.w, "gbps");
        for (int i = 0; i < n; i++) jw_num(&o.w, NULL, x[i]);
        jw_end(&o.w);
        jw_array(&o.w, "cu");
        for (int i = 0; i < n; i++) jw_num(&o.w, NULL, cu[i]);
        jw_end(&o.w);
        text = out_close(&o);
    }
    free(x);
    free(cu);
    return rc ? answer_error(rc, err) : text;
}
