/*
 * fuzz_faults.c -- libFuzzer target: the fault-trace parser
 * (sim/config/faults_trace.h) and sim/engine/faults.h in trace mode.
 *
 * Input: one byte, then the trace text.  The byte picks the number of
 * workers, 1 + byte % 8, so that worker fields are in and out of range.
 * The text goes to faults_trace_parse as it is (exact allocation, any
 * bytes); a trace that parses goes through a temporary file to faults_new
 * too, whose periods are checked.
 *
 * Checks: no crash, leak or undefined behaviour; a failure returns a
 * negative code with one line that starts with the name; a success yields, per
 * worker, down periods with 0 <= fail < repair, each failing after the
 * previous repair (times per worker strictly increase), and at most one
 * period per trace line.
 */
#include "sim/engine/faults.h"
#include "fuzz.h"

#define NAME "trace.txt"

/* The glue to the parser under test (the one place to change when its
 * entry points change): parses the trace text for nworkers workers, and
 * when it parses builds the failure processes from it through a temporary
 * file.  Returns the parser's code (err: its message); *f gets the
 * processes (NULL on a parse error, or when no temporary file could be
 * made, or faults_new failed, which is then reported in err). */
static int parse(const char *text, size_t len, int nworkers, char *err,
                 faults **f) {
    faults_trace *t;
    *f = NULL;
    int rc =
        faults_trace_parse(text, len, NAME, nworkers, &t, err, FUZZ_ERRLEN);
    if (rc) return rc;
    faults_trace_free(t);
    char path[64];
    if (fuzz_temp(text, len, path)) return 0;
    faults_spec spec = {.mtbf_s = 0, .mttr_s = 0, .trace = path};
    *f = faults_new(&spec, nworkers, 1, err, FUZZ_ERRLEN);
    unlink(path);
    if (!*f) fuzz_fail("faults_new refused a trace that parsed: %s", err);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int nworkers = 1 + data[0] % 8;
    size_t len = size - 1, lines = 1;
    char *text = malloc(len + 1);
    if (!text) return 0;
    if (len) memcpy(text, data + 1, len);
    text[len] = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';

    char err[FUZZ_ERRLEN] = "";
    faults *f;
    int rc = parse(text, len, nworkers, err, &f);
    free(text);
    if (rc) {
        fuzz_check_error("faults_trace_parse", rc, err);
        if (strncmp(err, NAME ":", strlen(NAME ":")) != 0)
            fuzz_fail("message does not start with the name: %s", err);
        return 0;
    }
    if (!f) return 0;
    size_t periods = 0;
    for (int w = 0; w < nworkers; w++) {
        int64_t fail, repair, last = -1;
        while (faults_next(f, w, &fail, &repair)) {
            if (fail < 0 || repair <= fail || fail <= last)
                fuzz_fail("worker %d: period %lld..%lld after %lld", w,
                          (long long)fail, (long long)repair, (long long)last);
            if (++periods > lines)
                fuzz_fail("%zu periods from %zu lines", periods, lines);
            last = repair;
            if (repair == INT64_MAX) break;
        }
        if (faults_next(f, w, &fail, &repair))
            fuzz_fail("worker %d: a period after the end (or after one "
                      "never repaired)",
                      w);
    }
    int64_t a, b;
    if (faults_next(f, nworkers, &a, &b))
        fuzz_fail("a period for worker %d of %d", nworkers, nworkers);
    faults_free(f);
    return 0;
}
