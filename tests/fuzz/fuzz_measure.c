/*
 * fuzz_measure.c -- libFuzzer target: the measurement files of `dilosim
 * calibrate` (meas_parse, sim/study/measure.h) and the two estimators on
 * what they read.
 *
 * Input: the file's text, any bytes, in an allocation of exactly its size
 * plus a terminating NUL.
 *
 * Checks: no crash, leak or undefined behaviour; a failure returns a
 * negative code with one line that starts with the name and leaves the
 * set empty; a success gives one file whose rows are inside the ranges
 * measure.h promises; the same text again into the same set either adds
 * as much or fails (step times: always, every (worker, step) repeats)
 * and then leaves the set as it was; a UTF-8 byte order mark in front
 * changes nothing but the digest; the estimators answer, with finite
 * estimates, or refuse with one line.
 */
#include "sim/study/measure.h"
#include "fuzz.h"

#include <math.h>

#define NAME "meas.txt"

/* The glue to the parser under test (the one place to change when its
 * entry point changes). */
static int parse(meas_set *m, const char *text, size_t len, char *err) {
    return meas_parse(m, text, len, NAME, err, FUZZ_ERRLEN);
}

static int pos(double x) {
    return isfinite(x) && x > 0;
}

static void check_row(const meas_row *r, meas_format f) {
    if (!pos(r->measured_s) || r->line < 1 || r->file != 0)
        fuzz_fail("row: measured %g at line %d of file %d", r->measured_s,
                  r->line, r->file);
    if (f == MEAS_FORMAT_RUNS) {
        if (r->kind != MEAS_RUN || r->nset < 0 || r->nset > MEAS_MAX_SETS)
            fuzz_fail("runs row: kind %d, %d sets", r->kind, r->nset);
        for (int i = 0; i < r->nset; i++)
            if (!memchr(r->sets[i], 0, MEAS_SET_MAX) ||
                !strchr(r->sets[i], '=') || strpbrk(r->sets[i], "\n\r"))
                fuzz_fail("runs row: set %d is not key=value", i);
        if (!(isnan(r->sync_blocked_s) || r->sync_blocked_s >= 0) ||
            !(isnan(r->compute_s) || r->compute_s >= 0))
            fuzz_fail("runs row: %g %g", r->sync_blocked_s, r->compute_s);
    } else if (f == MEAS_FORMAT_NCCL) {
        if (r->kind != MEAS_ALLREDUCE || !pos(r->bytes) || r->ranks < 2)
            fuzz_fail("all-reduce row: %g bytes, %d ranks", r->bytes, r->ranks);
    } else if (r->kind != MEAS_STREAM || !pos(r->bytes) || r->streams < 1 ||
               (r->reverse != 0 && r->reverse != 1)) {
        fuzz_fail("stream row: %g bytes, %d streams", r->bytes, r->streams);
    }
}

/* The rows of the one file read. */
static void check_set(const meas_set *m) {
    const meas_file *f = &m->file[0];
    if (m->nfiles != 1 || f->rows != m->nrows + m->nsteps + m->noutages ||
        f->rows < 1 || strcmp(f->path, NAME))
        fuzz_fail("%d files, %d rows of %d, %d, %d", m->nfiles, f->rows,
                  m->nrows, m->nsteps, m->noutages);
    for (int i = 0; i < m->nrows; i++) check_row(&m->rows[i], f->format);
    for (int i = 0; i < m->nsteps; i++) {
        const meas_step *s = &m->steps[i];
        if (s->worker < 0 || s->worker >= SCN_MAX_WORKERS || s->step < 0 ||
            !pos(s->seconds))
            fuzz_fail("step %d: worker %d step %lld %g s", i, s->worker,
                      (long long)s->step, s->seconds);
    }
    for (int i = 0; i < m->noutages; i++) {
        const meas_outage *o = &m->outages[i];
        if (o->worker < 0 || o->worker >= SCN_MAX_WORKERS ||
            !(o->down_s >= 0) || !(o->up_s > o->down_s) || !isfinite(o->up_s))
            fuzz_fail("outage %d: worker %d %g..%g", i, o->worker, o->down_s,
                      o->up_s);
    }
}

/* The estimators on what was read. */
static void check_fits(const meas_set *m) {
    char err[FUZZ_ERRLEN] = "";
    if (m->nsteps) {
        meas_speeds s;
        int rc = meas_fit_speeds(m, &s, err, FUZZ_ERRLEN);
        if (rc) fuzz_check_error("meas_fit_speeds", rc, err);
        for (int w = 0; !rc && w < s.workers; w++)
            if (!pos(s.speed[w]) || !pos(s.step_time_s) ||
                !(s.straggler_prob >= 0 && s.straggler_prob <= 1) ||
                !(s.straggler_slowdown >= 1))
                fuzz_fail("speeds: %g %g %g %g", s.speed[w], s.step_time_s,
                          s.straggler_prob, s.straggler_slowdown);
    }
    if (m->noutages) {
        double span = 0;
        for (int i = 0; i < m->noutages; i++)
            span = fmax(span, m->outages[i].up_s);
        meas_faults f;
        int rc =
            meas_fit_faults(m, SCN_MAX_WORKERS, span, &f, err, FUZZ_ERRLEN);
        if (rc) fuzz_check_error("meas_fit_faults", rc, err);
        else if (!pos(f.mtbf_hours) || !pos(f.mttr_hours) ||
                 f.failures != m->noutages)
            fuzz_fail("faults: %g %g", f.mtbf_hours, f.mttr_hours);
    }
}

/* The same text once more into m: as much again, or refused with m as it
 * was. */
static void check_again(meas_set *m, const char *text, size_t size) {
    char err[FUZZ_ERRLEN] = "";
    int rows = m->nrows, steps = m->nsteps, outages = m->noutages;
    int rc = parse(m, text, size, err);
    if (rc) {
        fuzz_check_error("meas_parse again", rc, err);
        if (m->nfiles != 1 || m->nrows != rows || m->nsteps != steps ||
            m->noutages != outages)
            fuzz_fail("a refused file changed the set");
    } else if (steps || m->nrows != 2 * rows || m->noutages != 2 * outages ||
               m->nfiles != 2) {
        fuzz_fail("the same file again: %d rows, %d steps, %d outages",
                  m->nrows, m->nsteps, m->noutages);
    }
}

/* Whether two sets read the same rows (field by field: padding is not
 * compared). */
static int same_rows(const meas_set *a, const meas_set *b) {
    if (a->nrows != b->nrows || a->nsteps != b->nsteps ||
        a->noutages != b->noutages)
        return 0;
    for (int i = 0; i < a->nrows; i++) {
        const meas_row *x = &a->rows[i], *y = &b->rows[i];
        if (x->kind != y->kind || x->line != y->line ||
            x->measured_s != y->measured_s || x->nset != y->nset ||
            x->bytes != y->bytes || x->ranks != y->ranks ||
            x->streams != y->streams || x->reverse != y->reverse)
            return 0;
        for (int k = 0; k < x->nset; k++)
            if (strcmp(x->sets[k], y->sets[k]) ||
                x->set_col[k] != y->set_col[k])
                return 0;
    }
    for (int i = 0; i < a->nsteps; i++) {
        const meas_step *x = &a->steps[i], *y = &b->steps[i];
        if (x->line != y->line || x->worker != y->worker ||
            x->step != y->step || x->seconds != y->seconds)
            return 0;
    }
    for (int i = 0; i < a->noutages; i++) {
        const meas_outage *x = &a->outages[i], *y = &b->outages[i];
        if (x->line != y->line || x->worker != y->worker ||
            x->down_s != y->down_s || x->up_s != y->up_s)
            return 0;
    }
    return 1;
}

/* With a byte order mark in front: the same answer. */
static void check_bom(const uint8_t *data, size_t size, int rc, const char *err,
                      const meas_set *m) {
    if (size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) return;
    char *marked = malloc(size + 4);
    if (!marked) return;
    memcpy(marked, "\xEF\xBB\xBF", 3);
    if (size) memcpy(marked + 3, data, size);
    marked[size + 3] = 0;
    meas_set b = {0};
    char e2[FUZZ_ERRLEN] = "";
    int rc2 = parse(&b, marked, size + 3, e2);
    if (rc2 != rc || (rc && strcmp(err, e2)) || (!rc && !same_rows(m, &b)))
        fuzz_fail("a byte order mark changes the answer (%d, %d): %s | %s", rc,
                  rc2, err, e2);
    meas_free(&b);
    free(marked);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    text[size] = 0;
    meas_set m = {0};
    char err[FUZZ_ERRLEN] = "";
    int rc = parse(&m, text, size, err);
    if (rc) {
        fuzz_check_error("meas_parse", rc, err);
        if (strncmp(err, NAME ":", strlen(NAME ":")) != 0)
            fuzz_fail("message does not start with the name: %s", err);
        if (m.nfiles || m.nrows || m.nsteps || m.noutages)
            fuzz_fail("a refused file left something in the set");
    } else {
        check_set(&m);
        check_fits(&m);
    }
    check_bom(data, size, rc, err, &m);
    if (!rc) check_again(&m, text, size);
    meas_free(&m);
    free(text);
    return 0;
}
