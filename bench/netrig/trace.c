/*
 * trace.c -- netrig_trace: the collective durations that dilosim predicts,
 * read from the Chrome trace of `dilosim run SCENARIO --trace T.json`.
 *
 * The rig's scenarios have one layer and a sync after every step (DiLoCo
 * with H 1), so each step has one all-reduce on every worker: a complete
 * event ("ph": "X") of category "allreduce" on the communication track
 * (tid 1), with "ts" and "dur" in microseconds and the step in
 * args.step.  A collective's predicted duration is the last worker's end
 * (ts + dur) minus the first worker's start (ts), the same definition as
 * the rig's measured one (bench/netrig/ring.c).
 *
 * usage: netrig_trace TRACE.json     prints "collective,predicted_s" rows
 * Exit: 0 done, 1 an unreadable or malformed trace, 2 usage.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_MAX_STEPS 100000

/* The whole regular file at path as a NUL-terminated string, or NULL
 * (message in err). */
static char *slurp(const char *path, char *err, size_t errlen) {
    errno = 0;
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len + 1)) &&
        fread(buf, 1, (size_t)len, f) == (size_t)len) {
        buf[len] = '\0';
        fclose(f);
        return buf;
    }
    snprintf(err, errlen, "%s: %s", path,
             errno ? strerror(errno) : "read error");
    free(buf);
    if (f) fclose(f);
    return NULL;
}

static double num(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Fills start[s] and end[s] (us) of step s = 1..max from the trace's
 * all-reduces; returns the last step seen, or -1 (message in err). */
static int collect(const cJSON *root, double *start, double *end, char *err,
                   size_t errlen) {
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    if (!cJSON_IsArray(ev)) {
        snprintf(err, errlen, "no traceEvents array");
        return -1;
    }
    int last = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, ev) {
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        if (!cJSON_IsString(cat) || strcmp(cat->valuestring, "allreduce") ||
            !cJSON_IsString(ph) || strcmp(ph->valuestring, "X") ||
            num(e, "tid") != 1)
            continue;
        double ts = num(e, "ts"), dur = num(e, "dur");
        double step = num(cJSON_GetObjectItemCaseSensitive(e, "args"), "step");
        if (!isfinite(ts) || !isfinite(dur) ||
            !(step >= 1 && step <= TRACE_MAX_STEPS)) {
            snprintf(err, errlen,
                     "an allreduce event without ts, dur or args.step");
            return -1;
        }
        int s = (int)step;
        start[s] = fmin(start[s], ts);
        end[s] = fmax(end[s], ts + dur);
        if (s > last) last = s;
    }
    return last;
}

int main(int argc, char **argv) {
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        puts("usage: netrig_trace TRACE.json\n"
             "The all-reduce durations in a Chrome trace of `dilosim run "
             "--trace`: for each\n"
             "step, the last worker's end minus the first worker's start of "
             "its allreduce\n"
             "events (tid 1), as CSV rows collective,predicted_s.\n"
             "Exit status: 0 done, 1 an unreadable or malformed trace, 2 a "
             "usage error.");
        return 0;
    }
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: netrig_trace TRACE.json (see --help)\n");
        return 2;
    }
    char err[512];
    char *text = slurp(argv[1], err, sizeof err);
    if (!text) {
        fprintf(stderr, "netrig_trace: %s\n", err);
        return 1;
    }
    cJSON *root = cJSON_Parse(text);
    free(text);
    double *start = malloc((TRACE_MAX_STEPS + 1) * sizeof *start);
    double *end = malloc((TRACE_MAX_STEPS + 1) * sizeof *end);
    int last = -1, rc = 1;
    if (!root) snprintf(err, sizeof err, "not JSON");
    else if (!start || !end) snprintf(err, sizeof err, "out of memory");
    else {
        for (int s = 0; s <= TRACE_MAX_STEPS; s++)
            start[s] = INFINITY, end[s] = -INFINITY;
        last = collect(root, start, end, err, sizeof err);
        if (last == 0) snprintf(err, sizeof err, "no allreduce event");
    }
    if (last > 0) {
        printf("collective,predicted_s\n");
        for (int s = 1; s <= last; s++)
            if (isfinite(start[s]))
                printf("%d,%.6f\n", s, (end[s] - start[s]) * 1e-6);
        rc = fflush(stdout) != 0 || ferror(stdout);
        if (rc)
            fprintf(stderr, "netrig_trace: write error: %s\n", strerror(errno));
    } else {
        fprintf(stderr, "netrig_trace: %s: %s\n", argv[1], err);
    }
    cJSON_Delete(root);
    free(start);
    free(end);
    return rc;
}
