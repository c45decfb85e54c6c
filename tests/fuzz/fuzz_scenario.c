/*
 * fuzz_scenario.c -- libFuzzer target: the scenario loader with a variant
 * and --set overrides (sim/config/scenario.h).
 *
 * Input: the parts of fuzz.h, cut at NUL bytes:
 *     document \0 variant \0 override \0 override ...
 * An empty or missing variant means the base scenario; up to 8 overrides
 * ("a.b.c=value").  The document goes through a temporary file, so the
 * file reader, the variant merge, the overrides and the validation all
 * run; scn_meta_load reads the same file.
 *
 * Checks: no crash, leak or undefined behaviour (the sanitizers); a
 * failure returns a negative code with one line that names the file or
 * the override; a success gives a config inside the documented ranges.
 */
#include "sim/config/scenario.h"
#include "fuzz.h"

#include <math.h>

/* The glue to the loader under test (the one place to change when its
 * entry points change): loads the document with the variant (NULL: base)
 * and the overrides, and reads its variants and sweep section, both from
 * one temporary file named in path; without a variant, loads the text
 * itself too (scn_load_string: no slack after it, unlike the file
 * reader's buffer).  Returns the file loader's code, or 1 when the input
 * cannot be tried (no temporary file). */
static int load(const char *doc, size_t len, const char *variant,
                const char *const *sets, int nset, scn_config *cfg, char *err,
                int *meta_rc, char *meta_err, char path[64]) {
    if (fuzz_temp(doc, len, path)) return 1;
    static scn_meta meta; /* large: not on the stack */
    int rc = scn_load_variant(path, variant, sets, nset, cfg, err, FUZZ_ERRLEN);
    *meta_rc = scn_meta_load(path, &meta, meta_err, FUZZ_ERRLEN);
    if (*meta_rc == 0 &&
        (meta.nvariants < 0 || meta.nvariants > SCN_MAX_VARIANTS ||
         meta.nsweep < 0 || meta.nsweep > SCN_MAX_SWEEP))
        fuzz_fail("scn_meta_load: %d variants, %d sweep keys", meta.nvariants,
                  meta.nsweep);
    unlink(path);
    if (!variant) {
        static scn_config again;
        char e2[FUZZ_ERRLEN] = "";
        int rc2 = scn_load_string(doc, "fuzz.json", sets, nset, &again, e2,
                                  FUZZ_ERRLEN);
        if (rc2) fuzz_check_error("scn_load_string", rc2, e2);
        /* The same document from a string or a file: the same answer,
         * except for paths, which resolve against different places. */
        const char *why = rc ? err : e2;
        if ((rc == 0) != (rc2 == 0) && !strstr(why, "faults.trace") &&
            !strstr(why, "train.data.path"))
            fuzz_fail("file and string loads disagree (%d, %d): %s", rc, rc2,
                      why);
        if (rc == 0 && rc2 == 0 && cfg->digest != again.digest)
            fuzz_fail("file and string loads give different digests");
    }
    return rc;
}

static int in(double x, double lo, double hi) {
    return x >= lo && x <= hi;
}

/* What scenario.h and README.md promise of a loaded config. */
static void check_config(const scn_config *c) {
    if (c->workers < 1 || c->workers > SCN_MAX_WORKERS)
        fuzz_fail("workers.count %d", c->workers);
    if (c->layers < 1) fuzz_fail("model.layers %d", c->layers);
    if (c->steps < 1) fuzz_fail("steps %lld", (long long)c->steps);
    if (!(c->params > 0) || !isfinite(c->params))
        fuzz_fail("model.params %g", c->params);
    /* The step time, given or derived from the FLOP keys, is in
     * [1e-9, 1e6] s (fuzz finding scenario-2: a derived one overflowed to
     * inf or underflowed to 0). */
    double st = scn_step_time_s(c);
    if (!(st >= 1e-9 && st <= 1e6))
        fuzz_fail("step time %g s (expected [1e-9, 1e6])", st);
    double sum = c->split[0] + c->split[1] + c->split[2];
    if (!(fabs(sum - 1) <= 1e-9)) fuzz_fail("model.split sums to %g", sum);
    for (int w = 0; w < c->workers; w++) {
        if (!(c->speed[w] > 0) || !isfinite(c->speed[w]))
            fuzz_fail("workers.speed[%d] %g", w, c->speed[w]);
        if (!(c->up_gbps[w] > 0) || !(c->down_gbps[w] > 0))
            fuzz_fail("worker %d bandwidth %g/%g", w, c->up_gbps[w],
                      c->down_gbps[w]);
        if (!(c->latency_ms[w] >= 0) || !isfinite(c->latency_ms[w]))
            fuzz_fail("network.latency_ms[%d] %g", w, c->latency_ms[w]);
    }
    /* Every rate in [SCN_MIN_GBPS, SCN_MAX_GBPS] (a host rate of 1e-9
     * once ran the offloaded run out of memory); a sync timeout of 0 or at
     * least 1 ns (one below rounded to 0, no timeout). */
    for (int w = 0; w < c->workers; w++)
        if (!(isinf(c->up_gbps[w]) ||
              in(c->up_gbps[w], SCN_MIN_GBPS, SCN_MAX_GBPS)) ||
            !(isinf(c->down_gbps[w]) ||
              in(c->down_gbps[w], SCN_MIN_GBPS, SCN_MAX_GBPS)))
            fuzz_fail("worker %d bandwidth %g/%g", w, c->up_gbps[w],
                      c->down_gbps[w]);
    if (!in(c->host_gbps, SCN_MIN_GBPS, SCN_MAX_GBPS))
        fuzz_fail("model.host_gbps %g", c->host_gbps);
    if (!(c->sync_timeout_s == 0 || in(c->sync_timeout_s, 1e-9, 1e9)))
        fuzz_fail("method.sync_timeout_s %g", c->sync_timeout_s);
    if (!in(c->straggler_prob, 0, 1) || !(c->straggler_slowdown >= 1))
        fuzz_fail("stragglers %g x%g", c->straggler_prob,
                  c->straggler_slowdown);
    const sched_spec *s = &c->sched;
    if (s->layers != c->layers) fuzz_fail("sched.layers %d", s->layers);
    /* the paper rule: P <= L, tau < H; torchft's (and the sliced
     * layout's): P <= H, tau < floor(H/P); outer overlaps: tau 0 */
    int narrow = s->rule == SCHED_RULE_TORCHFT || s->layout == SCHED_SLICED;
    if (s->H < 1 || s->P < 1 || s->P > s->layers || (narrow && s->P > s->H))
        fuzz_fail("schedule H %d P %d L %d", s->H, s->P, s->layers);
    if (s->tau < 0 || s->tau >= s->H ||
        (s->overlap != SCHED_INNER && s->tau > 0) ||
        (narrow && s->tau > 0 && s->tau >= s->H / s->P))
        fuzz_fail("schedule tau %d (H %d P %d)", s->tau, s->H, s->P);
    if (!in(s->alpha, 0, 1)) fuzz_fail("method.alpha %g", s->alpha);
    if (c->faults.trace != NULL) fuzz_fail("faults.trace is not NULL");
    if (!(c->faults.mtbf_s >= 0) || !isfinite(c->faults.mtbf_s))
        fuzz_fail("faults.mtbf %g s", c->faults.mtbf_s);
    if (c->faults.mtbf_s > 0 && c->trace_path[0])
        fuzz_fail("both a trace and mtbf %g s", c->faults.mtbf_s);
    if (c->checkpoint_steps < 1)
        fuzz_fail("checkpoint_steps %lld", (long long)c->checkpoint_steps);
    if (memchr(c->trace_path, '\0', SCN_PATH_MAX) == NULL)
        fuzz_fail("trace_path not terminated");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_parts p;
    if (fuzz_split(data, size, &p)) return 0;
    const char *variant, *sets[FUZZ_MAX_PARTS];
    int nset = fuzz_scenario_args(&p, &variant, sets);

    static scn_config cfg; /* large: not on the stack */
    char err[FUZZ_ERRLEN] = "", meta_err[FUZZ_ERRLEN] = "", path[64];
    int meta_rc = 0;
    int rc = load(p.part[0], p.len[0], variant, sets, nset, &cfg, err, &meta_rc,
                  meta_err, path);
    if (rc == 0) {
        check_config(&cfg);
        if (meta_rc != 0)
            fuzz_fail("the scenario loads but scn_meta_load fails: %s",
                      meta_err);
    } else if (rc < 0) {
        fuzz_check_error("scn_load_variant", rc, err);
        if (strncmp(err, path, strlen(path)) != 0 &&
            strncmp(err, "--set ", 6) != 0)
            fuzz_fail("message names neither the file nor an override: "
                      "%s",
                      err);
    }
    if (meta_rc != 0) fuzz_check_error("scn_meta_load", meta_rc, meta_err);
    fuzz_parts_free(&p);
    return 0;
}
