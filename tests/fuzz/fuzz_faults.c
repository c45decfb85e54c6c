/*
 * fuzz_faults.c -- libFuzzer target: the fault-trace parser (sim/faults.h,
 * trace mode).
 *
 * Input: one byte, then the trace text.  The byte picks the number of
 * workers, 1 + byte % 8, so that worker fields are in and out of range.
 * The text goes through a temporary file (faults_new takes a path).
 *
 * Checks: no crash, leak or undefined behaviour; a failure returns NULL
 * with one line that starts with the file's name; a success yields, per
 * worker, down periods with 0 <= fail < repair, each failing after the
 * previous repair (times per worker strictly increase), and at most one
 * period per trace line.
 */
#include "../../sim/faults.h"
#include "fuzz.h"

/* The glue to the parser under test (the one place to change when it
 * gets a text entry point): the trace text for nworkers workers, through
 * a temporary file named in path.  Returns the faults, or NULL with the
 * message in err; *skip is set when the input cannot be tried. */
static faults *parse(const char *text, size_t len, int nworkers, char *err,
                     char path[64], int *skip) {
    *skip = fuzz_temp(text, len, path) != 0;
    if (*skip) return NULL;
    faults_spec spec = {.mtbf_s = 0, .mttr_s = 0, .trace = path};
    faults *f = faults_new(&spec, nworkers, 1, err, FUZZ_ERRLEN);
    unlink(path);
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int nworkers = 1 + data[0] % 8;
    const char *text = (const char *)data + 1;
    size_t len = size - 1, lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';

    char err[FUZZ_ERRLEN] = "", path[64];
    int skip;
    faults *f = parse(text, len, nworkers, err, path, &skip);
    if (skip) return 0;
    if (!f) {
        fuzz_check_error("faults_new", -1, err);
        if (strncmp(err, path, strlen(path)) != 0)
            fuzz_fail("message does not start with the file: %s", err);
        return 0;
    }
    size_t periods = 0;
    for (int w = 0; w < nworkers; w++) {
        int64_t fail, repair, last = -1;
        while (faults_next(f, w, &fail, &repair)) {
            if (fail < 0 || repair <= fail || fail <= last)
                fuzz_fail("worker %d: period %lld..%lld after %lld", w,
                          (long long)fail, (long long)repair,
                          (long long)last);
            if (++periods > lines)
                fuzz_fail("%zu periods from %zu lines", periods, lines);
            last = repair;
            if (repair == INT64_MAX) break;
        }
        if (faults_next(f, w, &fail, &repair))
            fuzz_fail("worker %d: a period after the end (or after one "
                      "never repaired)", w);
    }
    int64_t a, b;
    if (faults_next(f, nworkers, &a, &b))
        fuzz_fail("a period for worker %d of %d", nworkers, nworkers);
    faults_free(f);
    return 0;
}
