/*
 * test_sweep.c -- sweeps: the same bytes whatever the number of threads,
 * rows in point order with the point's values, numbers equal to a direct
 * run, the scenario's sweep section and variants, resuming, and every
 * input and runtime error with the files it leaves (none, or the partial
 * file when resuming).
 *
 * Fixtures live in tests/data/sweep/; the tests run from the repository
 * root, and write into a fresh directory under /tmp.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/study/grid.h"
#include "sim/out/report.h"
#include "sim/engine/run.h"
#include "sim/study/sweep.h"
#include "check_main.h"
#include "fifo_feeder.h"
#include "fork_runner.h"

#define DATA "tests/data/sweep/"
#define TINY DATA "tiny.json"
#define PLAIN DATA "plain.json"
#define BROKEN DATA "broken.json"

static const char header_tail[] =
    "compute_utilization,goodput,wall_time_s,compute_time_s,bytes_sent_total,"
    "peak_link_gbps,avg_link_gbps,syncs,failures,lost_compute_s,"
    "recovery_bytes,finished,events\n";

/* tiny.json's sweep section, logspace:-2:1:6. */
static const char *const tiny_bw[6] = {"0.01",
                                       "0.039810717055349734",
                                       "0.15848931924611134",
                                       "0.630957344480193",
                                       "2.5118864315095797",
                                       "10"};

static char dir[64], out[128], partial[160], err[2048];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/test_sweep_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(partial, sizeof partial, "%s.partial", out);
}

static void teardown(void) {
    unlink(out);
    unlink(partial);
    rmdir(dir);
}

static sweep_spec spec_for(const char *scenario, const char *path, int jobs) {
    return (sweep_spec){.scenario = scenario,
                        .jobs = jobs,
                        .out = path,
                        .stream = stdout};
}

/* The whole file, or NULL when it does not exist. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(m);
    for (int c; (c = fgetc(f)) != EOF;) fputc(c, m);
    fclose(m);
    fclose(f);
    return buf;
}

static void spit(const char *path, const char *text, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, n, f), n);
    fclose(f);
}

static int exists(const char *path) {
    return access(path, F_OK) == 0;
}

/* Runs s; expects rc, and on success returns OUT's text (else NULL). */
static char *sweep_expect(const sweep_spec *s, int rc) {
    err[0] = 0;
    int got = sweep_run(s, err, sizeof err);
    ck_assert_msg(got == rc, "sweep returned %d, expected %d: %s", got, rc,
                  err);
    return rc ? NULL : slurp(s->out);
}

/* Checks that text starts with the digest line of a sweep file and
 * removes it: what is left is what the stream gets. */
static char *rows_of(char *text) {
    static const char prefix[] = "# dilosim sweep digest ";
    ck_assert_ptr_nonnull(text);
    size_t n = strlen(prefix);
    ck_assert_msg(!strncmp(text, prefix, n), "no digest line: %.60s", text);
    ck_assert_uint_eq(strspn(text + n, "0123456789abcdef"), 16);
    ck_assert_msg(!strncmp(text + n + 16, " (dilosim 0.8.0, ", 17),
                  "no version after the digest: %.80s", text);
    char *nl = strchr(text, '\n');
    ck_assert_ptr_nonnull(nl);
    memmove(text, nl + 1, strlen(nl + 1) + 1);
    return text;
}

/* The sweep runs tiny.json with its two variants and its section. */
static char *tiny_sweep(int jobs) {
    sweep_spec s = spec_for(TINY, out, jobs);
    return sweep_expect(&s, MSG_OK);
}

/* Line k (0: the header) of text, without its newline, in buf. */
static const char *line_of(const char *text, int k, char *buf, size_t len) {
    for (; k > 0 && text; k--) {
        text = strchr(text, '\n');
        if (text) text++;
    }
    ck_assert_ptr_nonnull(text);
    size_t n = strcspn(text, "\n");
    ck_assert_uint_lt(n, len);
    memcpy(buf, text, n);
    buf[n] = 0;
    return buf;
}

/* Checks that text's header is `keys` followed by the result columns. */
static void header_is(const char *text, const char *keys) {
    char line[1024], want[1024];
    snprintf(want, sizeof want, "%s%s", keys, header_tail);
    want[strlen(want) - 1] = 0; /* the newline */
    ck_assert_str_eq(line_of(text, 0, line, sizeof line), want);
}

static int count_lines(const char *text) {
    int n = 0;
    for (; *text; text++) n += *text == '\n';
    return n;
}

/* ------------------------------------------------------------------ */

START_TEST(test_jobs_give_the_same_bytes) {
    char *one = tiny_sweep(1);
    ck_assert(!exists(partial));
    unlink(out);
    char *two = tiny_sweep(2);
    unlink(out);
    char *many = tiny_sweep(7);
    ck_assert_ptr_nonnull(one);
    ck_assert_str_eq(one, two);
    ck_assert_str_eq(one, many);
    free(one);
    free(two);
    free(many);
}
END_TEST

START_TEST(test_rows_in_point_order) {
    char *text = rows_of(tiny_sweep(2)), line[1024], want[1024];
    header_is(text, "variant,network.bandwidth_gbps,");
    ck_assert_int_eq(count_lines(text), 13);
    /* The variant (document order) slowest, then the bandwidths. */
    static const char *const variants[2] = {"dp", "streaming"};
    for (int p = 0; p < 12; p++) {
        snprintf(want, sizeof want, "%s,%s,", variants[p / 6], tiny_bw[p % 6]);
        line_of(text, p + 1, line, sizeof line);
        ck_assert_msg(strncmp(line, want, strlen(want)) == 0,
                      "row %d: %s (expected it to start with %s)", p + 1, line,
                      want);
    }
    free(text);
}
END_TEST

/* The fields a sweep row holds for r, after its point's values: ratios
 * and rates as shortest decimals, times the exact seconds of the ns
 * counts, bytes whole numbers. */
static void row_fields(const run_result *r, char f[13][48]) {
    char buf[REPORT_SECONDS_MAX];
    snprintf(f[0], 48, "%s", msg_number(r->compute_utilization, buf));
    snprintf(f[1], 48, "%s", msg_number(r->goodput, buf));
    snprintf(f[2], 48, "%s", report_seconds(r->wall_ns, buf));
    snprintf(f[3], 48, "%s", report_seconds(r->compute_ns, buf));
    snprintf(f[4], 48, "%llu", (unsigned long long)r->bytes_sent_total);
    snprintf(f[5], 48, "%s", msg_number(r->peak_link_gbps, buf));
    snprintf(f[6], 48, "%s", msg_number(r->avg_link_gbps, buf));
    snprintf(f[7], 48, "%lld", (long long)r->syncs);
    snprintf(f[8], 48, "%lld", (long long)r->failures);
    snprintf(f[9], 48, "%s", report_seconds(r->lost_ns, buf));
    snprintf(f[10], 48, "%llu", (unsigned long long)r->recovery_bytes);
    snprintf(f[11], 48, "%d", r->finished);
    snprintf(f[12], 48, "%llu", (unsigned long long)r->events);
}

START_TEST(test_row_equals_a_direct_run) {
    char *text = rows_of(tiny_sweep(2)), line[1024];
    /* Row 9: streaming at 10^-1.4 Gbit/s. */
    line_of(text, 9, line, sizeof line);
    char set[128];
    snprintf(set, sizeof set, "network.bandwidth_gbps=%s", tiny_bw[2]);
    const char *sets[] = {set};
    scn_config cfg;
    run_result r;
    ck_assert_int_eq(scn_load_variant(TINY, "streaming", sets, 1, &cfg, err,
                                      sizeof err),
                     0);
    ck_assert_int_eq(run_simulate(&cfg, NULL, &r, err, sizeof err), 0);
    char want[13][48];
    row_fields(&r, want);
    char *save;
    ck_assert_str_eq(strtok_r(line, ",", &save), "streaming");
    ck_assert_str_eq(strtok_r(NULL, ",", &save), tiny_bw[2]);
    for (int i = 0; i < 13; i++) {
        const char *field = strtok_r(NULL, ",", &save);
        ck_assert_ptr_nonnull(field);
        ck_assert_msg(!strcmp(field, want[i]), "column %d: %s (expected %s)",
                      i + 3, field, want[i]);
    }
    ck_assert_ptr_null(strtok_r(NULL, ",", &save));
    ck_assert(r.compute_utilization > 0.2 && r.compute_utilization < 1);
    free(text);
}
END_TEST

/* Exact numbers: DP at 10 Gbit/s on the demo scenario runs 1636.111127 s
 * (an exact ns count), whose double wall_time_s printed as
 * "1636.1111270000001"; the row must say 1636.111127.  bytes_sent_total
 * is 4e12: a whole number, never an exponent.  goodput sits beside
 * compute_utilization. */
START_TEST(test_times_exact_from_ns) {
    const char *vary[] = {"method.name=dp"};
    const char *sets[] = {"network.bandwidth_gbps=10"};
    sweep_spec s = spec_for("scenarios/default.json", out, 1);
    s.vary = vary;
    s.nvary = 1;
    s.sets = sets;
    s.nset = 1;
    char *text = rows_of(sweep_expect(&s, MSG_OK)), line[1024];
    header_is(text, "method.name,");
    ck_assert_str_eq(line_of(text, 1, line, sizeof line),
                     "dp,0.06112054270015364,0.06112054270015364,1636.111127,"
                     "200,4000000000000,10,9.779286832024582,1000,0,0,0,1,"
                     "193000");
    free(text);
}
END_TEST

START_TEST(test_vary_and_the_sweep_section) {
    char line[1024];
    /* A --vary of the section's key replaces its values. */
    const char *vary[] = {"network.bandwidth_gbps=1,2"};
    sweep_spec s = spec_for(TINY, out, 2);
    s.vary = vary;
    s.nvary = 1;
    char *text = rows_of(sweep_expect(&s, MSG_OK));
    ck_assert_int_eq(count_lines(text), 5);
    header_is(text, "variant,network.bandwidth_gbps,");
    ck_assert(!strncmp(line_of(text, 2, line, sizeof line), "dp,2,", 5));
    ck_assert(
        !strncmp(line_of(text, 3, line, sizeof line), "streaming,1,", 12));
    free(text);

    /* Any other --vary is a dimension after the section's; --variant picks
     * variants, in the order given. */
    const char *vary2[] = {"steps=20,30,40"};
    const char *only[] = {"streaming", "dp"};
    s.vary = vary2;
    s.variants = only;
    s.nvariants = 2;
    text = rows_of(sweep_expect(&s, MSG_OK));
    ck_assert_int_eq(count_lines(text), 1 + 2 * 6 * 3);
    header_is(text, "variant,network.bandwidth_gbps,steps,");
    ck_assert(!strncmp(line_of(text, 1, line, sizeof line),
                       "streaming,0.01,20,", 18));
    ck_assert(!strncmp(line_of(text, 3, line, sizeof line),
                       "streaming,0.01,40,", 18));
    ck_assert(!strncmp(line_of(text, 4, line, sizeof line),
                       "streaming,0.039810717055349734,20,", 34));
    ck_assert(
        !strncmp(line_of(text, 19, line, sizeof line), "dp,0.01,20,", 11));
    free(text);

    /* A scenario without variants or section: no variant column, one row
     * per value; with no --vary at all, the one base point. */
    const char *vary3[] = {"workers.count=2,3", "network.latency_ms=0,5"};
    s = spec_for(PLAIN, out, 2);
    s.vary = vary3;
    s.nvary = 2;
    text = rows_of(sweep_expect(&s, MSG_OK));
    ck_assert_int_eq(count_lines(text), 5);
    header_is(text, "workers.count,network.latency_ms,");
    ck_assert(!strncmp(line_of(text, 2, line, sizeof line), "2,5,", 4));
    ck_assert(!strncmp(line_of(text, 3, line, sizeof line), "3,0,", 4));
    free(text);
    s.nvary = 0;
    text = rows_of(sweep_expect(&s, MSG_OK));
    ck_assert_int_eq(count_lines(text), 2);
    header_is(text, "");
    free(text);
}
END_TEST

START_TEST(test_csv_quoting_and_sets) {
    char line[1024];
    /* Per-worker arrays hold commas: quoted as in RFC 4180. */
    const char *vary[] = {"network.bandwidth_gbps=[1,10],\"inf\""};
    const char *sets[] = {"steps=20"};
    sweep_spec s = spec_for(PLAIN, out, 1);
    s.vary = vary;
    s.nvary = 1;
    s.sets = sets;
    s.nset = 1;
    char *text = rows_of(sweep_expect(&s, MSG_OK));
    ck_assert(!strncmp(line_of(text, 1, line, sizeof line), "\"[1,10]\",", 9));
    /* An infinite bandwidth (the string "inf"): full utilization. */
    ck_assert(!strncmp(line_of(text, 2, line, sizeof line),
                       "\"\"\"inf\"\"\",1,", 12));
    free(text);
}
END_TEST

/* With workers.power_w the rows end with the run's energy: DiLoCo, 40
 * steps of 0.01 s on 2 workers, 4 syncs of a bf16 payload of 8e6 bytes
 * that nothing overlaps, 0.064 s each at 1 Gbit/s: wall 0.656 s, each
 * worker busy 0.4 s; (2 x 0.4 x 360 + 2 x 0.256 x 36) J / 3.6e6. */
START_TEST(test_energy_column) {
    char line[1024];
    const char *vary[] = {"network.bandwidth_gbps=1,10"};
    const char *sets[] = {"workers.power_w={\"busy\": 360, \"idle\": 36}"};
    sweep_spec s = spec_for(PLAIN, out, 2);
    s.vary = vary;
    s.nvary = 1;
    s.sets = sets;
    s.nset = 1;
    char *text = rows_of(sweep_expect(&s, MSG_OK));
    line_of(text, 0, line, sizeof line);
    ck_assert_str_eq(line + strlen(line) - 17, ",energy_kwh_total");
    const double idle[] = {0.064, 0.0064};
    for (int k = 0; k < 2; k++) {
        line_of(text, 1 + k, line, sizeof line);
        double want = (2 * 0.4 * 360 + 2 * 4 * idle[k] * 36) / 3.6e6;
        double got = strtod(strrchr(line, ',') + 1, NULL);
        ck_assert_double_eq_tol(got, want, 1e-18);
    }
    free(text);
    unlink(out);
    s.nset = 0; /* without the key: the header and rows as they were */
    text = rows_of(sweep_expect(&s, MSG_OK));
    header_is(text, "network.bandwidth_gbps,");
    free(text);
}
END_TEST

typedef struct {
    int calls;
    double last;
} progress_seen;

static void progress_hook(void *ctx, int64_t done, int64_t total) {
    progress_seen *seen = ctx;
    seen->calls++;
    ck_assert_int_eq(total, 12);
    double fraction = (double)done / (double)total;
    ck_assert(fraction >= seen->last);
    seen->last = fraction;
}

START_TEST(test_stream_and_progress) {
    /* Without an output path the rows go to the stream; progress ends at
     * 1 and is called once per point. */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    progress_seen seen = {0, 0};
    sweep_spec s = spec_for(TINY, NULL, 2);
    s.stream = m;
    s.progress = progress_hook;
    s.progress_ctx = &seen;
    ck_assert_int_eq(sweep_run(&s, err, sizeof err), MSG_OK);
    fclose(m);
    char *file = rows_of(tiny_sweep(1));
    ck_assert_str_eq(buf, file);
    ck_assert_int_eq(seen.calls, 12);
    ck_assert(seen.last == 1);
    free(buf);
    free(file);
}
END_TEST

START_TEST(test_resume) {
    char *whole = tiny_sweep(2);
    unlink(out);
    /* Digest, header, 5 rows, and half of the 6th, as a killed sweep
     * leaves. */
    const char *cut = whole;
    for (int k = 0; k < 7; k++) cut = strchr(cut, '\n') + 1;
    size_t n = (size_t)(cut - whole) + strcspn(cut, "\n") / 2;
    spit(partial, whole, n);
    sweep_spec s = spec_for(TINY, out, 2);
    s.resume = 1;
    char *text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, whole);
    ck_assert(!exists(partial));
    free(text);

    /* Complete already: nothing runs, a note says so, OUT is untouched. */
    char *note = NULL;
    size_t nlen = 0;
    s.log = open_memstream(&note, &nlen);
    ck_assert_int_eq(sweep_run(&s, err, sizeof err), MSG_OK);
    fclose(s.log);
    char want[256];
    snprintf(want, sizeof want,
             "%s: already complete (12 rows); nothing to "
             "do\n",
             out);
    ck_assert_str_eq(note, want);
    free(note);
    s.log = NULL;

    /* A partial file with every row: only the rename is left to do. */
    ck_assert_int_eq(rename(out, partial), 0);
    text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, whole);
    free(text);

    /* Written by another build of dilosim (the version after the digest
     * differs): same digest, so it resumes, and keeps its own line. */
    unlink(out);
    char *older = strdup(whole);
    ck_assert_ptr_nonnull(older);
    char *v = strstr(older, "(dilosim ");
    ck_assert_ptr_nonnull(v);
    memcpy(v + 1, "DILOSIM", 7);
    spit(partial, older, n); /* cut in its 6th row, as above */
    text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, older);
    free(text);
    free(older);

    /* A partial file cut inside its digest line or its header, or empty:
     * start afresh. */
    unlink(out);
    spit(partial, whole, 10);
    text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, whole);
    free(text);
    unlink(out);
    spit(partial, whole, (size_t)(strchr(whole, '\n') - whole) + 20);
    text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, whole);
    free(text);
    unlink(out);
    spit(partial, "", 0);
    text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, whole);
    free(text);

    /* An OUT that is no sweep file is refused, and left alone (defect 3:
     * resume replaced or mixed files of other sweeps). */
    spit(out, "x\n", 2);
    sweep_expect(&s, MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s: no sweep digest (expected a first "
             "line # dilosim sweep digest ",
             out);
    ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
    text = slurp(out);
    ck_assert_str_eq(text, "x\n");
    free(text);
    free(whole);
}
END_TEST

START_TEST(test_resume_of_another_sweep) {
    char *whole = tiny_sweep(1), want[512];
    unlink(out);
    sweep_spec s = spec_for(TINY, out, 2);
    s.resume = 1;
    /* This sweep's digest line, but another header. */
    size_t nd = (size_t)(strchr(whole, '\n') - whole) + 1;
    char *other = malloc(nd + 64);
    memcpy(other, whole, nd);
    strcpy(other + nd, "variant,steps,compute_utilization\n");
    spit(partial, other, strlen(other));
    free(other);
    sweep_expect(&s, MSG_EINPUT);
    snprintf(want, sizeof want, "%s: header differs from this sweep", partial);
    ck_assert_str_eq(err, want);
    ck_assert(exists(partial) && !exists(out));
    /* The right header but a row of another point (line 4). */
    const char *row1 = strchr(strchr(whole, '\n') + 1, '\n') + 1;
    const char *row2 = strchr(row1, '\n') + 1;
    char *bad = strdup(whole);
    bad[row2 - whole] = 'X';
    spit(partial, bad, strlen(bad));
    sweep_expect(&s, MSG_EINPUT);
    snprintf(want, sizeof want, "%s:4: row differs from this sweep", partial);
    ck_assert_str_eq(err, want);
    /* More rows than points. */
    char *more = malloc(strlen(whole) * 2);
    strcpy(more, whole);
    strcat(more, row1);
    spit(partial, more, strlen(more));
    sweep_expect(&s, MSG_EINPUT);
    snprintf(want, sizeof want, "%s:15: row differs from this sweep", partial);
    ck_assert_str_eq(err, want);
    ck_assert(exists(partial) && !exists(out));
    free(more);
    free(bad);
    free(whole);
}
END_TEST

/* Defect 3: resuming checked only the header and each row's values, so
 * a partial (or complete) file of another scenario with the same grid was
 * silently kept.  The digest line of every point's config now refuses
 * it, naming the file and both digests, and leaves the file alone. */
START_TEST(test_resume_of_another_scenario) {
    char *whole = tiny_sweep(1), want[512];
    const char *sets[] = {"steps=7"};
    sweep_spec s = spec_for(TINY, out, 1);
    s.resume = 1;
    s.sets = sets;
    s.nset = 1;
    char file_digest[17];
    memcpy(file_digest, whole + strlen("# dilosim sweep digest "), 16);
    file_digest[16] = 0;
    /* The complete file of the base scenario. */
    sweep_expect(&s, MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s: written by another scenario or sweep "
             "(digest %s in the file, ",
             out, file_digest);
    ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
    ck_assert(strlen(err) == strlen(want) + 16 + strlen(" for this sweep)"));
    const char *mine = err + strlen(want);
    ck_assert(strncmp(mine, file_digest, 16) != 0);
    char *text = slurp(out);
    ck_assert_str_eq(text, whole);
    free(text);
    /* Its partial file, cut after three rows. */
    ck_assert_int_eq(rename(out, partial), 0);
    const char *cut = whole;
    for (int k = 0; k < 5; k++) cut = strchr(cut, '\n') + 1;
    spit(partial, whole, (size_t)(cut - whole));
    sweep_expect(&s, MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s: written by another scenario or sweep "
             "(digest %s in the file, ",
             partial, file_digest);
    ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
    ck_assert(exists(partial) && !exists(out));
    /* The same scenario resumes it. */
    s.nset = 0;
    text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, whole);
    free(text);
    free(whole);
}
END_TEST

START_TEST(test_bad_point_leaves_nothing) {
    /* The lowest bad point is named, whatever the threads; nothing is
     * written, even when resuming. */
    const char *vary[] = {"network.bandwidth_gbps=1,-1,0"};
    for (int resume = 0; resume < 2; resume++)
        for (int jobs = 1; jobs <= 2; jobs++) {
            sweep_spec s = spec_for(TINY, out, jobs);
            s.vary = vary;
            s.nvary = 1;
            s.resume = resume;
            sweep_expect(&s, MSG_EINPUT);
            ck_assert_str_eq(err,
                             "point 2 (variant=dp, "
                             "network.bandwidth_gbps=-1): --vary "
                             "network.bandwidth_gbps=1,-1,0: "
                             "network.bandwidth_gbps: -1 is out of range "
                             "(expected a number in [1e-06, 1000000000] or "
                             "\"inf\", or an array of workers.count = 2 "
                             "such values)");
            ck_assert(!exists(out) && !exists(partial));
        }
    /* An unknown key is a bad point too; the base point has no values. */
    const char *sets[] = {"steps=0"};
    sweep_spec s = spec_for(PLAIN, out, 1);
    s.sets = sets;
    s.nset = 1;
    sweep_expect(&s, MSG_EINPUT);
    ck_assert_str_eq(err, "point 1: --set steps=0: steps: 0 is out of range "
                          "(expected an integer in 1..1000000000000)");
    ck_assert(!exists(out) && !exists(partial));
}
END_TEST

START_TEST(test_missing_trace_at_a_point) {
    /* broken.json's second variant names a missing trace: the loader reads
     * the trace, so this is an input error at point 4 (no longer a runtime
     * failure of the run), and nothing is written. */
    for (int jobs = 1; jobs <= 3; jobs++) {
        sweep_spec s = spec_for(BROKEN, out, jobs);
        sweep_expect(&s, MSG_EINPUT);
        ck_assert_str_eq(err, "point 4 (variant=broken, "
                              "network.bandwidth_gbps=0.1): tests/data/sweep/"
                              "broken.json:9:36: variants.broken.faults.trace: "
                              "tests/data/sweep/missing.trace: cannot open: No "
                              "such file or directory");
        ck_assert(!exists(out) && !exists(partial));
    }
}
END_TEST

/* The scenario is read and parsed once per sweep (it used to be read to
 * plan the sweep and again at every point's load): from a FIFO, which
 * can be read once, 6 points on 2 threads run and its writer saw one
 * reader; the rows are those of the same sweep of the file.  A scenario
 * with variants is read once per variant, so from standard input only
 * with one --variant (read once too); else an input error. */
START_TEST(test_scenario_read_once) {
    static char text[65536];
    feeder_read_text(PLAIN, text, sizeof text);
    const char *texts[] = {text};
    const char *vary[] = {"network.bandwidth_gbps=1,2,4", "method.H=5,10"};
    feeder f;
    feeder_start(&f, "plain.json", texts, 1);
    sweep_spec s = spec_for(f.path, out, 2);
    s.vary = vary;
    s.nvary = 2;
    char *fifo_rows = sweep_expect(&s, MSG_OK);
    ck_assert_int_eq(feeder_stop(&f), 1);
    s.scenario = PLAIN;
    char *file_rows = sweep_expect(&s, MSG_OK);
    ck_assert_int_eq(count_lines(file_rows), 8); /* digest, header, 6 */
    ck_assert_str_eq(fifo_rows, file_rows);
    free(fifo_rows);
    free(file_rows);

    feeder_read_text(TINY, text, sizeof text);
    const char *dp[] = {"dp"};
    feeder_start(&f, "tiny.json", texts, 1);
    ck_assert_ptr_nonnull(freopen(f.path, "rb", stdin));
    s = spec_for("-", out, 2);
    s.variants = dp;
    s.nvariants = 1;
    char *rows = rows_of(sweep_expect(&s, MSG_OK));
    ck_assert_int_eq(feeder_stop(&f), 1);
    ck_assert_int_eq(count_lines(rows), 7); /* header, 6 bandwidths */
    free(rows);
}
END_TEST

START_TEST(test_stdin_needs_one_variant) {
    /* "-" with variants and no --variant: read once, it cannot serve two. */
    FILE *in = freopen(TINY, "rb", stdin);
    ck_assert_ptr_nonnull(in);
    sweep_spec s = spec_for("-", out, 1);
    sweep_expect(&s, MSG_EINPUT);
    ck_assert_str_eq(err, "<stdin>: read once, it serves one variant only "
                          "(expected a file for its 2 variants, or one "
                          "--variant)");
    ck_assert(!exists(out) && !exists(partial));
}
END_TEST

/* Defect (error codes): a point whose run failed was always a runtime
 * failure (SWEEP_ERUNTIME, exit 1), though run_simulate can fail on the
 * user's input: a fault trace valid when the points loaded and garbage
 * when the run reads it is MSG_EINPUT, and stays so (exit 2). */
START_TEST(test_run_input_error_is_an_input_error) {
    const char *texts[] = {"30 1 down\n90 1 up\n", "30 1 down\n90 1 up\n",
                           "1.5x up\n"};
    feeder f;
    feeder_start(&f, "trace.txt", texts, 3);
    char scenario[160];
    snprintf(scenario, sizeof scenario, "%s/s.json", f.dir);
    static const char text[] =
        "{\"model\": {\"params\": 4e6, \"layers\": 4, \"step_time_s\": "
        "0.01}, \"workers\": {\"count\": 2}, \"method\": {\"name\": "
        "\"diloco\", \"H\": 10}, \"faults\": {\"trace\": \"trace.txt\"}, "
        "\"steps\": 40}";
    spit(scenario, text, strlen(text));
    const char *vary[] = {"network.bandwidth_gbps=1"};
    sweep_spec s = spec_for(scenario, out, 1);
    s.vary = vary;
    s.nvary = 1;
    sweep_expect(&s, MSG_EINPUT);
    int served = feeder_stop(&f);
    unlink(scenario);
    rmdir(f.dir);
    ck_assert_int_eq(served, 3); /* validation, the point's load, its run */
    ck_assert_int_eq(msg_exit_status(MSG_EINPUT), 2);
    char want[256];
    snprintf(want, sizeof want,
             "point 1 (network.bandwidth_gbps=1): "
             "%s/trace.txt:1: bad time '1.5x'",
             f.dir);
    ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
    ck_assert(!exists(out) && !exists(partial));
}
END_TEST

START_TEST(test_input_errors) {
    static const struct {
        const char *scenario, *vary, *variant, *set, *msg;
    } cases[] = {
        {TINY, "network.bandwidth_gbps=logspace:1:2", NULL, NULL,
         "--vary network.bandwidth_gbps=logspace:1:2: expected "
         "logspace:A:B:N"},
        {TINY, "nokey", NULL, NULL, "--vary nokey: expected KEY=SPEC"},
        {TINY, "=1,2", NULL, NULL, "--vary =1,2: expected KEY=SPEC"},
        {TINY, "steps=", NULL, NULL,
         "--vary steps=: empty (expected a comma list, logspace:A:B:N or "
         "linspace:A:B:N)"},
        {TINY, NULL, "fp4", NULL,
         "--variant fp4: unknown variant (expected one of: dp, streaming)"},
        {PLAIN, NULL, "dp", NULL,
         "--variant dp: unknown variant (tests/data/sweep/plain.json has no "
         "variants)"},
        {TINY, NULL, NULL, "network.bandwidth_gbps=3",
         "--set network.bandwidth_gbps=3: network.bandwidth_gbps is swept "
         "(drop the --set, or give it as --vary network.bandwidth_gbps=3)"},
        {DATA "missing.json", NULL, NULL, NULL,
         "tests/data/sweep/missing.json: cannot open: No such file or "
         "directory"},
        {TINY, "steps=1e99", NULL, NULL,
         "point 1 (variant=dp, network.bandwidth_gbps=0.01, steps=1e99): "
         "--vary steps=1e99: steps: 1e+99 is out of range (expected an "
         "integer in 1..1000000000000)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sweep_spec s = spec_for(cases[i].scenario, out, 2);
        s.vary = &cases[i].vary;
        s.nvary = cases[i].vary != NULL;
        s.variants = &cases[i].variant;
        s.nvariants = cases[i].variant != NULL;
        s.sets = &cases[i].set;
        s.nset = cases[i].set != NULL;
        sweep_expect(&s, MSG_EINPUT);
        ck_assert_str_eq(err, cases[i].msg);
        ck_assert(!exists(out) && !exists(partial));
    }
    /* Twice the same --vary, or --variant. */
    const char *vary[] = {"steps=1,2", "steps=3"};
    sweep_spec s = spec_for(TINY, out, 1);
    s.vary = vary;
    s.nvary = 2;
    sweep_expect(&s, MSG_EINPUT);
    ck_assert_str_eq(err, "--vary steps=3: steps is varied twice");
    const char *twice[] = {"dp", "dp"};
    s = spec_for(TINY, out, 1);
    s.variants = twice;
    s.nvariants = 2;
    sweep_expect(&s, MSG_EINPUT);
    ck_assert_str_eq(err, "--variant dp: given twice");
    /* Resuming without an output file. */
    s = spec_for(TINY, NULL, 1);
    s.resume = 1;
    sweep_expect(&s, MSG_EINPUT);
    ck_assert_str_eq(err, "resuming needs an output file");
}
END_TEST

/* The digest covers the grid as the rows write it: "1.0" and "1" load the
 * same configs but write other rows; and another variant name too. */
START_TEST(test_digest_covers_the_grid) {
    const char *one[] = {"network.bandwidth_gbps=1,10"};
    const char *other[] = {"network.bandwidth_gbps=1.0,10"};
    sweep_spec s = spec_for(PLAIN, out, 1);
    s.vary = one, s.nvary = 1;
    char *a = sweep_expect(&s, MSG_OK);
    unlink(out);
    s.vary = other;
    char *b = sweep_expect(&s, MSG_OK);
    ck_assert_int_ne(strncmp(a, b, 39), 0); /* the digest lines differ */
    ck_assert_ptr_nonnull(strstr(b, "\n1.0,"));
    /* A file of one refused by the other's --resume. */
    s.resume = 1;
    s.vary = one;
    sweep_expect(&s, MSG_EINPUT);
    ck_assert_msg(strstr(err, "written by another scenario or sweep"), "%s",
                  err);
    free(a);
    free(b);
}
END_TEST

/* The text of shard k of n of tiny.json, written to out. */
static char *tiny_shard(int k, int n, int resume) {
    sweep_spec s = spec_for(TINY, out, 2);
    s.shard = k, s.nshards = n, s.resume = resume;
    return sweep_expect(&s, MSG_OK);
}

/* A shard holds every n-th row of the whole (its line says which shard),
 * resumes from its partial file, and refuses another shard's file. */
START_TEST(test_shards) {
    char *whole = rows_of(tiny_sweep(1)), line[1024], want[1024];
    for (int k = 1; k <= 5; k++) {
        unlink(out);
        char *text = tiny_shard(k, 5, 0);
        snprintf(want, sizeof want, " shard %d/5 of 12 points (dilosim ", k);
        ck_assert_msg(strstr(text, want) &&
                          strstr(text, want) < strchr(text, '\n'),
                      "%.100s", text);
        char *nl = strchr(text, '\n');
        memmove(text, nl + 1, strlen(nl + 1) + 1); /* the rows */
        ck_assert_str_eq(line_of(text, 0, line, sizeof line),
                         line_of(whole, 0, want, sizeof want));
        int rows = k <= 2 ? 3 : 2; /* 12 points over 5 shards */
        ck_assert_int_eq(count_lines(text), rows + 1);
        for (int j = 0; j < rows; j++)
            ck_assert_str_eq(line_of(text, j + 1, line, sizeof line),
                             line_of(whole, k + 5 * j, want, sizeof want));
        free(text);
    }
    /* Resumed: the digest line, header and first row, half the second. */
    unlink(out);
    char *full = tiny_shard(2, 3, 0);
    const char *cut = strchr(strchr(strchr(full, '\n') + 1, '\n') + 1, '\n');
    spit(partial, full, (size_t)(cut - full) + 5);
    unlink(out);
    char *again = tiny_shard(2, 3, 1);
    ck_assert_str_eq(again, full);
    /* Shard 1/3, or the whole sweep, refuses shard 2/3's file. */
    sweep_spec s = spec_for(TINY, out, 1);
    s.shard = 1, s.nshards = 3, s.resume = 1;
    sweep_expect(&s, MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s: holds shard 2/3, not shard 1/3 (same "
             "sweep)",
             out);
    ck_assert_str_eq(err, want);
    s.nshards = 0;
    sweep_expect(&s, MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s: holds shard 2/3, not the whole sweep "
             "(same sweep)",
             out);
    ck_assert_str_eq(err, want);
    char *kept = slurp(out);
    ck_assert_str_eq(kept, full);
    /* A shard needs a file; K/N in range. */
    s = spec_for(TINY, NULL, 1);
    s.shard = 1, s.nshards = 3;
    sweep_expect(&s, MSG_EINPUT);
    ck_assert_str_eq(err, "a shard needs an output file");
    s = spec_for(TINY, out, 1);
    s.shard = 4, s.nshards = 3;
    sweep_expect(&s, MSG_EINPUT);
    ck_assert_msg(strstr(err, "--shard 4/3: expected K/N"), "%s", err);
    free(kept);
    free(again);
    free(full);
    free(whole);
}
END_TEST

/* Computes the rows last first, and fails row 3 (as a lost rank). */
static int fail_row_3(void *ctx, sweep *sw, int jobs, char *err,
                      size_t errlen) {
    (void)ctx, (void)jobs;
    for (int64_t j = sweep_count(sw) - 1; j >= sweep_kept(sw); j--) {
        char *row = NULL;
        int rc = j == 3 ? MSG_EFAIL : sweep_compute(sw, j, &row, err, errlen);
        sweep_deliver(sw, j, row, rc, "row 3 lost");
    }
    return MSG_OK;
}

/* Through a runner that computes each row in a child process, last row
 * first (fork_runner.h, as other MPI ranks do): the same bytes, for the
 * whole sweep, a resumed one and a shard; a failing row is the sweep's
 * error, the rows before it kept for --resume. */
START_TEST(test_runner_gives_the_same_bytes) {
    char *whole = tiny_sweep(1);
    unlink(out);
    sweep_spec s = spec_for(TINY, out, 1);
    s.runner = fork_sweep_run;
    char *text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, whole);
    free(text);
    const char *cut = whole;
    for (int k = 0; k < 5; k++) cut = strchr(cut, '\n') + 1;
    unlink(out);
    spit(partial, whole, (size_t)(cut - whole));
    s.resume = 1;
    text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, whole);
    free(text);
    char *shard = tiny_shard(3, 4, 0);
    unlink(out);
    s.resume = 0, s.shard = 3, s.nshards = 4;
    text = sweep_expect(&s, MSG_OK);
    ck_assert_str_eq(text, shard);
    free(text);
    free(shard);

    s = spec_for(TINY, out, 1);
    s.runner = fail_row_3;
    s.resume = 1;
    unlink(out);
    sweep_expect(&s, MSG_EFAIL);
    ck_assert_str_eq(err, "row 3 lost");
    char *kept = slurp(partial);
    ck_assert_ptr_nonnull(kept);
    ck_assert_int_eq(count_lines(kept), 5); /* digest, header, 3 rows */
    ck_assert(!strncmp(kept, whole, strlen(kept)));
    free(kept);
    free(whole);
}
END_TEST

/* A worker sweep plans the grid and hands it to its runner: no output, no
 * validation; its rows are the writer's. */
static int check_worker_rows(void *ctx, sweep *sw, int jobs, char *err,
                             size_t errlen) {
    const char *whole = ctx;
    char line[1024], *row;
    ck_assert_int_eq(jobs, 3);
    ck_assert_int_eq(sweep_kept(sw), 0);
    ck_assert_int_eq(sweep_count(sw), 4);
    for (int j = 0; j < 4; j++) {
        ck_assert_int_eq(sweep_compute(sw, j, &row, err, errlen), MSG_OK);
        line_of(whole, 2 + 3 * j, line, sizeof line);
        ck_assert_int_eq(strlen(row), strlen(line) + 1);
        ck_assert(!strncmp(row, line, strlen(line)));
        free(row);
    }
    return MSG_OK;
}

START_TEST(test_worker) {
    char *whole = tiny_sweep(1);
    unlink(out);
    sweep_spec s = spec_for(TINY, out, 3);
    s.worker = 1, s.shard = 1, s.nshards = 3;
    s.runner = check_worker_rows, s.runner_ctx = whole;
    ck_assert_int_eq(sweep_run(&s, err, sizeof err), MSG_OK);
    ck_assert(!exists(out) && !exists(partial));
    free(whole);
}
END_TEST

START_TEST(test_partial_in_use) {
    /* A second sweep does not write over a partial file in use. */
    FILE *f = fopen(partial, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    int ready[2];
    ck_assert_int_eq(pipe(ready), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) { /* hold a lock as a running sweep does */
        int fd = open(partial, O_WRONLY);
        struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fd < 0 || fcntl(fd, F_SETLK, &lk)) _exit(1);
        if (write(ready[1], "x", 1) != 1) _exit(1);
        sleep(30);
        _exit(0);
    }
    char c;
    ck_assert_int_eq(read(ready[0], &c, 1), 1);
    close(ready[0]);
    close(ready[1]);
    sweep_spec s = spec_for(TINY, out, 1);
    sweep_expect(&s, MSG_EFAIL);
    char want[256];
    snprintf(want, sizeof want, "%s: in use by another sweep", partial);
    ck_assert_str_eq(err, want);
    ck_assert(exists(partial));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_jobs_give_the_same_bytes);
    tcase_add_test(tc, test_rows_in_point_order);
    tcase_add_test(tc, test_row_equals_a_direct_run);
    tcase_add_test(tc, test_times_exact_from_ns);
    tcase_add_test(tc, test_vary_and_the_sweep_section);
    tcase_add_test(tc, test_csv_quoting_and_sets);
    tcase_add_test(tc, test_stream_and_progress);
    tcase_add_test(tc, test_resume);
    tcase_add_test(tc, test_resume_of_another_sweep);
    tcase_add_test(tc, test_resume_of_another_scenario);
    tcase_add_test(tc, test_bad_point_leaves_nothing);
    tcase_add_test(tc, test_missing_trace_at_a_point);
    tcase_add_test(tc, test_input_errors);
    tcase_add_test(tc, test_scenario_read_once);
    tcase_add_test(tc, test_stdin_needs_one_variant);
    tcase_add_test(tc, test_run_input_error_is_an_input_error);
    tcase_add_test(tc, test_partial_in_use);
    tcase_add_test(tc, test_digest_covers_the_grid);
    tcase_add_test(tc, test_shards);
    tcase_add_test(tc, test_runner_gives_the_same_bytes);
    tcase_add_test(tc, test_worker);
    tcase_add_test(tc, test_energy_column);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
