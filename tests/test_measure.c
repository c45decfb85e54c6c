/*
 * test_measure.c -- the measurements of sim/study/measure.h: the five
 * formats read from the files of tests/data/measure/ (each row, its
 * overrides and where it came from), the overrides as the scenario
 * loader reads them, every refusal with its message (file:line:col and
 * what) and code, and the two estimators against their closed forms
 * computed by hand.
 *
 * The tests run from the repository root.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/config/scenario.h"
#include "sim/study/measure.h"
#include "check_main.h"

#define DATA "tests/data/measure/"
#define RUNS_HEADER_LINE                                                       \
    "method,workers,params,codec,H,fragments,tau,steps,step_time_s,"           \
    "bandwidth_gbps,latency_ms,wall_s"
#define RUNS_HEADER RUNS_HEADER_LINE "\n"

static char err[2048];

/* The bytes of the file at path, NUL-terminated (*len of them). */
static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}

/* meas_load of path into *m, which must succeed. */
static void load(meas_set *m, const char *path) {
    int rc = meas_load(m, path, err, sizeof err);
    ck_assert_msg(rc == 0, "%s: %s", path, err);
}

/* load of tests/data/measure/file, read as format f (its name `name`),
 * giving `rows` rows. */
static void load_as(meas_set *m, const char *file, meas_format f,
                    const char *name, int rows) {
    char path[128];
    snprintf(path, sizeof path, DATA "%s", file);
    load(m, path);
    const meas_file *mf = &m->file[m->nfiles - 1];
    ck_assert_str_eq(mf->path, path);
    ck_assert_int_eq(mf->format, f);
    ck_assert_str_eq(meas_format_name(f), name);
    ck_assert_int_eq(mf->rows, rows);
}

/* meas_parse of the len bytes at text as `name` into *m (zeroed first):
 * the code. */
static int parse_n(meas_set *m, const char *name, const char *text,
                   size_t len) {
    memset(m, 0, sizeof *m);
    err[0] = 0;
    return meas_parse(m, text, len, name, err, sizeof err);
}

static int parse(meas_set *m, const char *name, const char *text) {
    return parse_n(m, name, text, strlen(text));
}

/* text as `name` is refused with exactly the message want; nothing is
 * left in the set. */
static void refused(const char *name, const char *text, const char *want) {
    meas_set m;
    int rc = parse(&m, name, text);
    ck_assert_msg(rc == MSG_EINPUT, "accepted (%d): %s", rc, text);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(m.nfiles + m.nrows + m.nsteps + m.noutages, 0);
    meas_free(&m);
}

/* A runs file: the header, then row. */
static void runs_refused(const char *row, const char *want) {
    char text[1024];
    snprintf(text, sizeof text, RUNS_HEADER "%s\n", row);
    refused("runs.csv", text, want);
}

static void ck_close(double got, double want) {
    ck_assert_msg(fabs(got - want) <= 1e-12 * fmax(1, fabs(want)),
                  "%.17g, expected %.17g", got, want);
}

/* ---------------------------------------------------------------------
 * Runs
 */

START_TEST(runs_file) {
    meas_set m = {0};
    load_as(&m, "runs.csv", MEAS_FORMAT_RUNS, "runs", 3);
    ck_assert_int_eq(m.nfiles, 1);
    size_t len;
    char *bytes = slurp(DATA "runs.csv", &len);
    ck_assert_uint_eq(m.file[0].digest, scn_digest_bytes(bytes, len));
    free(bytes);
    ck_assert_int_eq(m.nrows, 3);
    const meas_row *dp = &m.rows[0], *st = &m.rows[2];
    ck_assert_int_eq(dp->kind, MEAS_RUN);
    ck_assert_int_eq(dp->file, 0);
    ck_assert_int_eq(dp->line, 4);
    ck_assert_double_eq(dp->measured_s, 181.25);
    ck_assert_double_eq(dp->sync_blocked_s, 81.2);
    ck_assert(isnan(dp->compute_s));
    /* DP's empty H, fragments and tau set nothing */
    const char *want[] = {"method.name=dp",
                          "workers.count=4",
                          "model.params=150000000",
                          "method.codec=fp32",
                          "steps=200",
                          "model.step_time_s=0.5",
                          "network.bandwidth_gbps=10",
                          "network.latency_ms=20"};
    const int col[] = {1, 4, 6, 12, 20, 24, 28, 31};
    ck_assert_int_eq(dp->nset, 8);
    for (int i = 0; i < 8; i++) {
        ck_assert_str_eq(dp->sets[i], want[i]);
        ck_assert_int_eq(dp->set_col[i], col[i]);
    }
    ck_assert_int_eq(st->line, 6);
    ck_assert_int_eq(st->nset, 11);
    ck_assert_str_eq(st->sets[3], "method.codec=e3m0");
    ck_assert_str_eq(st->sets[4], "method.H=100");
    ck_assert_str_eq(st->sets[5], "method.fragments=4");
    ck_assert_str_eq(st->sets[6], "method.tau=5");
    ck_assert(isnan(st->sync_blocked_s)); /* the empty last field */
    meas_free(&m);
    ck_assert_int_eq(m.nfiles + m.nrows, 0);
    ck_assert_ptr_null(m.rows);
}
END_TEST

/* Columns in another order, CRLF line ends, quoted and padded fields,
 * integers as pandas writes them, the optional columns, a word that reads
 * as JSON, comments and blank lines, a trailing empty line. */
START_TEST(runs_layout) {
    const char *text =
        "\xEF\xBB\xBF# a comment\r\n"
        "wall_s, workers ,method,params,codec,H,fragments,tau,steps,"
        "step_time_s,bandwidth_gbps,latency_ms,compute_s,sync_blocked_s\r\n"
        "\r\n"
        "  # another\r\n"
        "99.5, 4.0 ,\"diloco\",1e8,\"null\",1e2,1,0,200,0.5,10,"
        "\"2\",90,1.5\r\n"
        "12,2,\"a\"\"b\", 2.5e+8 ,fp32,,,,10,.25,0.5,0,,\r\n"
        "\r\n";
    meas_set m;
    ck_assert_msg(parse(&m, "r.csv", text) == 0, "%s", err);
    ck_assert_int_eq(m.nrows, 2);
    const meas_row *a = &m.rows[0], *b = &m.rows[1];
    ck_assert_int_eq(a->line, 5);
    ck_assert_double_eq(a->measured_s, 99.5);
    ck_assert_double_eq(a->compute_s, 90);
    ck_assert_double_eq(a->sync_blocked_s, 1.5);
    /* the overrides in measure.h's order, whatever the columns' */
    const char *want[] = {"method.name=diloco",     "workers.count=4",
                          "model.params=100000000", "method.codec=\"null\"",
                          "method.H=100",           "method.fragments=1",
                          "method.tau=0",           "steps=200",
                          "model.step_time_s=0.5",  "network.bandwidth_gbps=10",
                          "network.latency_ms=2"};
    const int col[] = {12, 7, 21, 25, 32, 36, 38, 40, 44, 48, 51};
    ck_assert_int_eq(a->nset, 11);
    for (int i = 0; i < 11; i++) {
        ck_assert_str_eq(a->sets[i], want[i]);
        ck_assert_int_eq(a->set_col[i], col[i]);
    }
    ck_assert_int_eq(b->line, 6);
    ck_assert_str_eq(b->sets[0], "method.name=a\"b");
    ck_assert_str_eq(b->sets[2], "model.params=250000000");
    ck_assert_str_eq(b->sets[5], "model.step_time_s=0.25");
    ck_assert_str_eq(b->sets[7], "network.latency_ms=0");
    ck_assert(isnan(b->compute_s) && isnan(b->sync_blocked_s));
    meas_free(&m);
}
END_TEST

/* Columns named by a scenario key set it, their fields as --set reads a
 * value, after the fixed columns' overrides; an empty field sets nothing. */
START_TEST(runs_key_columns) {
    const char *text =
        RUNS_HEADER_LINE ",network.efficiency,network.transport"
                         "\n"
                         "dp,2,1e6,fp32,,,,20,0.1,10,0,3,0.93,tcp\n"
                         "dp,2,1e6,fp32,,,,20,0.1,10,0,3,,[1]\n";
    meas_set m;
    ck_assert_msg(parse(&m, "r.csv", text) == 0, "%s", err);
    ck_assert_int_eq(m.rows[0].nset, 10);
    ck_assert_str_eq(m.rows[0].sets[8], "network.efficiency=0.93");
    ck_assert_int_eq(m.rows[0].set_col[8], 32);
    ck_assert_str_eq(m.rows[0].sets[9], "network.transport=tcp");
    ck_assert_int_eq(m.rows[1].nset, 9);
    ck_assert_str_eq(m.rows[1].sets[8], "network.transport=[1]");
    meas_free(&m);
}
END_TEST

/* The overrides of a row are what the scenario loader reads: numbers as
 * numbers, words as strings (a word that reads as JSON too). */
START_TEST(runs_sets_reach_the_loader) {
    meas_set m = {0};
    load(&m, DATA "runs.csv");
    const meas_row *r = &m.rows[1]; /* diloco */
    const char *sets[MEAS_MAX_SETS];
    for (int i = 0; i < r->nset; i++) sets[i] = r->sets[i];
    scn_config c;
    int rc = scn_load("tests/data/table/one_layer_dp.json", sets, r->nset, &c,
                      err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(c.sched.method, SCHED_DILOCO);
    ck_assert_int_eq(c.workers, 4);
    ck_assert_double_eq(c.params, 1.5e8);
    ck_assert_int_eq(c.codec.kind, CODEC_FP32);
    ck_assert_int_eq(c.sched.H, 100);
    ck_assert_int_eq(c.steps, 200);
    ck_assert_double_eq(c.step_time_s, 0.5);
    ck_assert_double_eq(c.up_gbps[3], 10);
    ck_assert_double_eq(c.latency_ms[3], 20);
    meas_free(&m);
    /* "null" is a codec name to the loader (an unknown one), not null */
    const char *text = RUNS_HEADER "dp,2,1e6,null,,,,20,0.1,10,0,3\n";
    ck_assert_int_eq(parse(&m, "r.csv", text), 0);
    const char *set = m.rows[0].sets[3];
    ck_assert_str_eq(set, "method.codec=\"null\"");
    rc = scn_load("tests/data/table/one_layer_dp.json", &set, 1, &c, err,
                  sizeof err);
    ck_assert_int_eq(rc, MSG_EINPUT);
    ck_assert_msg(strstr(err, "\"null\"") && !strstr(err, "wrong type"), "%s",
                  err);
    meas_free(&m);
}
END_TEST

START_TEST(runs_refusals) {
    refused("runs.csv", "method,workers,foo\n",
            "runs.csv:1:16: unknown column 'foo' (expected one of: method, "
            "workers, params, codec, H, fragments, tau, steps, step_time_s, "
            "bandwidth_gbps, latency_ms, wall_s, sync_blocked_s, compute_s; "
            "or a dotted scenario key)");
    refused("runs.csv", RUNS_HEADER_LINE ",network.x,network.x\n",
            "runs.csv:1:106: column 'network.x' given twice");
    refused("runs.csv", "method,workers,network..x\n",
            "runs.csv:1:16: unknown column 'network..x' (expected one of: "
            "method, workers, params, codec, H, fragments, tau, steps, "
            "step_time_s, bandwidth_gbps, latency_ms, wall_s, sync_blocked_s, "
            "compute_s; or a dotted scenario key)");
    refused("runs.csv", "method,workers, method\n",
            "runs.csv:1:17: column 'method' given twice (first at column 1)");
    refused("runs.csv",
            "method,workers,params,codec,H,fragments,tau,steps,step_time_s,"
            "bandwidth_gbps,latency_ms\n",
            "runs.csv:1:1: missing column 'wall_s' (expected the columns "
            "method, workers, params, codec, H, fragments, tau, steps, "
            "step_time_s, bandwidth_gbps, latency_ms, wall_s, sync_blocked_s, "
            "compute_s; the last ones optional)");
    runs_refused("dp,4,1e8,fp32,,,,200,0.5,10,20,100,7",
                 "runs.csv:2:36: 13 fields, not 12 (expected one per column "
                 "of the header at line 1)");
    runs_refused("dp,4,1e8,fp32,,,,200,0.5,10,20",
                 "runs.csv:2:31: 11 fields, not 12 (expected one per column "
                 "of the header at line 1)");
    runs_refused("dp,x4,1e8,fp32,,,,200,0.5,10,20,100",
                 "runs.csv:2:4: workers: 'x4' is not a number (expected an "
                 "integer >= 1)");
    runs_refused("dp,2.5,1e8,fp32,,,,200,0.5,10,20,100",
                 "runs.csv:2:4: workers: '2.5' is not an integer (expected an "
                 "integer >= 1)");
    runs_refused("dp,0,1e8,fp32,,,,200,0.5,10,20,100",
                 "runs.csv:2:4: workers: '0' is out of range (expected an "
                 "integer >= 1)");
    runs_refused("dp,4,1e8,fp32,0,,,200,0.5,10,20,100",
                 "runs.csv:2:15: H: '0' is out of range (expected an integer "
                 ">= 1)");
    runs_refused("dp,4,1e8,fp32,,,,1e16,0.5,10,20,100",
                 "runs.csv:2:18: steps: '1e16' is out of range (expected an "
                 "integer >= 1)");
    runs_refused("dp,4,0,fp32,,,,200,0.5,10,20,100",
                 "runs.csv:2:6: params: '0' is out of range (expected a "
                 "number > 0)");
    runs_refused("dp,4,0x10,fp32,,,,200,0.5,10,20,100",
                 "runs.csv:2:6: params: '0x10' is not a number (expected a "
                 "number > 0)");
    runs_refused("dp,4,inf,fp32,,,,200,0.5,10,20,100",
                 "runs.csv:2:6: params: 'inf' is not a number (expected a "
                 "number > 0)");
    runs_refused("dp,4,nan,fp32,,,,200,0.5,10,20,100",
                 "runs.csv:2:6: params: 'nan' is not a number (expected a "
                 "number > 0)");
    runs_refused("dp,4,1e999,fp32,,,,200,0.5,10,20,100",
                 "runs.csv:2:6: params: '1e999' is out of range (expected a "
                 "number > 0)");
    runs_refused("dp,4,1e8,fp32,,,-1,200,0.5,10,20,100",
                 "runs.csv:2:17: tau: '-1' is out of range (expected an "
                 "integer >= 0)");
    runs_refused("dp,4,1e8,fp32,,,,200,0,10,20,100",
                 "runs.csv:2:22: step_time_s: '0' is out of range (expected a "
                 "number > 0)");
    runs_refused("dp,4,1e8,fp32,,,,200,0.5,-10,20,100",
                 "runs.csv:2:26: bandwidth_gbps: '-10' is out of range "
                 "(expected a number > 0)");
    runs_refused("dp,4,1e8,fp32,,,,200,0.5,10,-1,100",
                 "runs.csv:2:29: latency_ms: '-1' is out of range (expected a "
                 "number >= 0)");
    runs_refused("dp,4,1e8,fp32,,,,200,0.5,10,20,",
                 "runs.csv:2:32: wall_s: empty (expected the run's wall time: "
                 "a number > 0)");
    runs_refused("dp,4,1e8,fp32,,,,200,0.5,10,20,0",
                 "runs.csv:2:32: wall_s: '0' is out of range (expected a "
                 "number > 0)");
    refused("runs.csv",
            "method,workers,params,codec,H,fragments,tau,steps,step_time_s,"
            "bandwidth_gbps,latency_ms,wall_s,sync_blocked_s\n"
            "dp,4,1e8,fp32,,,,200,0.5,10,20,100,-1\n",
            "runs.csv:2:36: sync_blocked_s: '-1' is out of range (expected a "
            "number >= 0)");
    runs_refused("dp,4,1e8,\"fp32,,,,200,0.5,10,20,100",
                 "runs.csv:2:10: quoted field without its closing '\"' on "
                 "this line (expected a field that ends on its line)");
    runs_refused("dp,4,1e8,\"fp32\"x,,,,200,0.5,10,20,100",
                 "runs.csv:2:16: text after a quoted field (expected ',' or "
                 "the end of the line)");
    runs_refused("dp,4,1e8,fp\"32,,,,200,0.5,10,20,100",
                 "runs.csv:2:12: '\"' inside an unquoted field (expected the "
                 "whole field quoted, '\"\"' for a quote)");
    runs_refused("dp,4,1e8,fp\00132,,,,200,0.5,10,20,100",
                 "runs.csv:2:10: codec: a control character (expected a codec "
                 "name)");
    char row[256], name[120];
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = 0;
    snprintf(row, sizeof row, "dp,4,1e8,%s,,,,200,0.5,10,20,100", name);
    runs_refused(row, "runs.csv:2:10: codec: longer than 82 bytes (expected "
                      "a codec name)");
}
END_TEST

/* ---------------------------------------------------------------------
 * Step times and outages
 */

START_TEST(logs_files) {
    meas_set m = {0};
    load_as(&m, "steps.csv", MEAS_FORMAT_STEPS, "step times", 11);
    load_as(&m, "outages.csv", MEAS_FORMAT_OUTAGES, "outages", 4);
    ck_assert_int_eq(m.nrows, 0);
    /* worker, step, seconds of each step, lines 3.. of steps.csv */
    const double steps[11][3] = {{0, 0, 0.50}, {1, 0, 0.55}, {0, 1, 0.52},
                                 {1, 1, 0.54}, {0, 2, 0.48}, {1, 2, 0.56},
                                 {0, 3, 0.50}, {1, 3, 0.55}, {0, 4, 0.90},
                                 {1, 4, 1.10}, {1, 5, 0.57}};
    ck_assert_int_eq(m.nsteps, 11);
    for (int i = 0; i < 11; i++) {
        const meas_step *s = &m.steps[i];
        ck_assert(s->file == 0 && s->line == 3 + i);
        ck_assert(s->worker == steps[i][0] && s->step == steps[i][1]);
        ck_assert_double_eq(s->seconds, steps[i][2]);
    }
    /* worker, down_s, up_s of each outage, lines 3.. of outages.csv */
    const double out[4][3] = {{0, 1000, 1600},
                              {1, 5000, 5300},
                              {0, 20000, 21800},
                              {2, 30000, 30300}};
    ck_assert_int_eq(m.noutages, 4);
    for (int i = 0; i < 4; i++) {
        const meas_outage *o = &m.outages[i];
        ck_assert(o->file == 1 && o->line == 3 + i && o->worker == out[i][0]);
        ck_assert(o->down_s == out[i][1] && o->up_s == out[i][2]);
    }
    meas_free(&m);
}
END_TEST

START_TEST(logs_refusals) {
    const char *h = "worker,step,seconds\n";
    char text[256];
    struct {
        const char *rows, *want;
    } c[] = {
        {"256,0,1\n", "steps.csv:2:1: worker: '256' is out of range (expected "
                      "an integer 0..255)"},
        {"-1,0,1\n", "steps.csv:2:1: worker: '-1' is out of range (expected "
                     "an integer 0..255)"},
        {"0,-1,1\n", "steps.csv:2:3: step: '-1' is out of range (expected an "
                     "integer >= 0)"},
        {"0,1.5,1\n", "steps.csv:2:3: step: '1.5' is not an integer (expected "
                      "an integer >= 0)"},
        {"0,1,0\n", "steps.csv:2:5: seconds: '0' is out of range (expected a "
                    "number > 0)"},
        {"0,1,\n", "steps.csv:2:5: seconds: empty (expected a number > 0)"},
        {"0,1,1\n1,1,1\n0,1,2\n",
         "steps.csv:4:1: worker 0, step 1: given twice (first at "
         "steps.csv:2; expected one time per worker and step)"},
        {"", "steps.csv: no measurement in it (expected at least one row of "
             "step times)"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        snprintf(text, sizeof text, "%s%s", h, c[i].rows);
        refused("steps.csv", text, c[i].want);
    }
    refused("steps.csv", "worker,step,secs\n",
            "steps.csv:1:13: unknown column 'secs' (expected one of: worker, "
            "step, seconds)");
    refused("steps.csv", "worker,seconds\n",
            "steps.csv:1:1: missing column 'step' (expected the columns "
            "worker, step, seconds)");
    refused("out.csv", "worker,down_s,up_s\n0,5,5\n",
            "out.csv:2:5: up_s: 5 is not after down_s 5 (expected up_s > "
            "down_s)");
    refused("out.csv", "worker,down_s,up_s\n0,-1,5\n",
            "out.csv:2:3: down_s: '-1' is out of range (expected a number "
            ">= 0)");
    refused("out.csv", "up_s,worker,down_s\n,0,5\n",
            "out.csv:2:1: up_s: empty (expected a number > 0)");
}
END_TEST

/* ---------------------------------------------------------------------
 * nccl-tests
 */

/* text with line `line` edited: its first `from` replaced by `to` (NULL:
 * the line removed); line 0: every line holding from. */
static char *edit(const char *text, int line, const char *from,
                  const char *to) {
    char *out = NULL, *copy = strdup(text);
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    int no = 0;
    for (char *s = copy, *nl; *s; s = nl + 1) {
        nl = strchr(s, '\n');
        *nl = 0;
        no++;
        char *at = line == 0 || no == line ? strstr(s, from) : NULL;
        if (at && !to) continue;
        if (at)
            fprintf(f, "%.*s%s%s\n", (int)(at - s), s, to, at + strlen(from));
        else fprintf(f, "%s\n", s);
    }
    fclose(f);
    free(copy);
    return out;
}

/* The sample output, edited. */
static char *nccl_edit(int line, const char *from, const char *to) {
    char *text = slurp(DATA "all_reduce_4ranks.txt", NULL);
    char *out = edit(text, line, from, to);
    free(text);
    return out;
}

START_TEST(nccl_file) {
    meas_set m = {0};
    load_as(&m, "all_reduce_4ranks.txt", MEAS_FORMAT_NCCL, "nccl-tests", 25);
    ck_assert_int_eq(m.nrows, 25); /* 8 B .. 128 MiB */
    for (int i = 0; i < 25; i++) {
        const meas_row *r = &m.rows[i];
        ck_assert_int_eq(r->kind, MEAS_ALLREDUCE);
        ck_assert_int_eq(r->line, 12 + i);
        ck_assert_double_eq(r->bytes, 8.0 * (1 << i));
        ck_assert_int_eq(r->ranks, 4);
        ck_assert_int_eq(r->nset, 0);
    }
    ck_assert_double_eq(m.rows[0].measured_s, 53.63e-6);
    ck_assert_double_eq(m.rows[17].measured_s, 1289.2e-6);
    ck_assert_double_eq(m.rows[24].measured_s, 162594e-6);
    meas_free(&m);
}
END_TEST

/* What real outputs hold besides: the rank lines of every process, NCCL's
 * own log, a size 0 row, rows without the root column (older versions). */
START_TEST(nccl_variants) {
    meas_set m;
    char *one = slurp(DATA "all_reduce_4ranks.txt", NULL), *two = NULL;
    size_t len;
    FILE *f = open_memstream(&two, &len);
    fprintf(f, "#  Rank  3 Group  0 Pid  20782 on site-d device  0\n%s", one);
    fprintf(f, "site-a:20731:20731 [0] NCCL INFO Bootstrap : Using eth0\n");
    fprintf(f, "           0             0     float     sum      -1     0.06"
               "    0.00    0.00      0     0.05    0.00    0.00      0\n");
    fclose(f);
    ck_assert_msg(parse(&m, "ar.txt", two) == 0, "%s", err);
    ck_assert_int_eq(m.nrows, 25);
    ck_assert_int_eq(m.rows[0].ranks, 4);
    ck_assert_int_eq(m.rows[0].line, 13);
    meas_free(&m);
    char *old = edit(one, 0, "      -1  ", "  ");
    ck_assert_ptr_null(strstr(old, "-1"));
    ck_assert_msg(parse(&m, "ar.txt", old) == 0, "%s", err);
    ck_assert_int_eq(m.nrows, 25);
    ck_assert_double_eq(m.rows[24].measured_s, 162594e-6);
    meas_free(&m);
    free(old);
    free(two);
    free(one);
}
END_TEST

START_TEST(nccl_refusals) {
    /* line (0: every line), what in it is replaced by what (NULL: the line
     * removed), the message */
    struct {
        int line;
        const char *from, *to, *want;
    } c[] = {
        {0, "Rank", NULL,
         "ar.txt: no '#  Rank N ...' lines: the ranks are unknown "
         "(expected all_reduce_perf's whole output, its comment lines "
         "included)"},
        {6, "Rank", NULL,
         "ar.txt:4:1: the '#  Rank' lines list ranks up to 3 but not "
         "rank 2 (expected every rank 0..3)"},
        {4, "Rank  0", "Rank  2",
         "ar.txt:4:1: the '#  Rank' lines list ranks up to 3 but not "
         "rank 0 (expected every rank 0..3)"},
        {5, "Rank  1", "Rank  x",
         "ar.txt:5:10: a '#  Rank' line without its rank (expected '#  "
         "Rank N Group G Pid P on HOST device D ...', N 0..16777216)"},
        /* rank 3 missing: 3 ranks, whose busbw is 4/3 algbw, not 1.5 */
        {7, "Rank", NULL,
         "ar.txt:20:74: busbw 0.10 GB/s is not algbw x 2(n-1)/n = "
         "0.0924 GB/s for the 3 ranks of the '#  Rank' lines "
         "(expected the bus bandwidth of an all-reduce among them)"},
        {10, " time ", " cputime ",
         "ar.txt:10:58: the times are CPU times (expected "
         "all_reduce_perf's own times: run it without -C 1)"},
        {20, "0.05      0    57.47", "0.05      3    57.47",
         "ar.txt:20:84: #wrong is '3': the all-reduce gave wrong "
         "results (expected 0: a wrong result is not a measurement)"},
        {20, "57.47    0.04    0.05      0", "57.47    0.04    0.05      1",
         "ar.txt:20:116: #wrong is '1': the all-reduce gave wrong "
         "results (expected 0: a wrong result is not a measurement)"},
        {20, "      0    57.47", "    N/A    57.47",
         "ar.txt:20:82: #wrong is N/A: the results were not checked "
         "(expected 0: run all_reduce_perf with -c 1)"},
        {20, "      0    57.47", "     -1    57.47",
         "ar.txt:20:83: #wrong is -1: the results were not checked "
         "(expected 0: run all_reduce_perf with -c 1)"},
        /* algbw and busbw swapped: a wrong column order */
        {29, "    0.81    1.22 ", "    1.22    0.81 ",
         "ar.txt:29:66: algbw 1.22 GB/s is not size/time = 0.813 GB/s "
         "(expected algbw = size / time: are the columns size count "
         "type redop root time algbw busbw #wrong?)"},
        {29, " 262144 ", " 262145 ",
         "ar.txt:29:21: count '262145' does not divide size 1048576 "
         "into elements of 1, 2, 4 or 8 bytes (expected the count of "
         "elements of type float)"},
        {29, "  1289.2 ", "    0.00 ",
         "ar.txt:29:58: time '0.00' (expected a number > 0)"},
        {29, "  1289.2 ", "  1289.x ",
         "ar.txt:29:56: time '1289.x' (expected a number > 0)"},
        {29, "      -1 ", "      -x ",
         "ar.txt:29:51: root '-x' (expected an integer)"},
        {29, "1.21      0", "1.21      0  7",
         "ar.txt:29:1: 14 fields (expected 13: size count type redop "
         "root, then time algbw busbw #wrong out of place and in "
         "place)"},
        {12, "           8 ", "99999999999999999999 ",
         "ar.txt:12:1: size '99999999999999999999' is out of range "
         "(expected bytes, an integer up to 2^53)"},
        {12, "           8 ", "mpirun: 8 ",
         "ar.txt:12:1: not a row of all_reduce_perf (expected SIZE "
         "COUNT TYPE REDOP ROOT, then TIME ALGBW BUSBW #WRONG out of "
         "place and in place)"},
        /* the rows gone: the header only */
        {0, "float", NULL,
         "ar.txt: no measurement in it (expected at least one row of "
         "nccl-tests)"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *text = nccl_edit(c[i].line, c[i].from, c[i].to);
        refused("ar.txt", text, c[i].want);
        free(text);
    }
    /* one rank: an all-reduce among nobody else */
    char *t1 = nccl_edit(0, "Rank  1", NULL);
    char *t2 = edit(t1, 0, "Rank  2", NULL), *t3 = edit(t2, 0, "Rank  3", NULL);
    refused("ar.txt", t3,
            "ar.txt:4:1: one rank (expected an all-reduce among 2 ranks or "
            "more)");
    free(t1);
    free(t2);
    free(t3);
}
END_TEST

/* ---------------------------------------------------------------------
 * iperf3
 */

START_TEST(iperf3_file) {
    meas_set m = {0};
    load_as(&m, "iperf3_tcp.json", MEAS_FORMAT_IPERF3, "iperf3", 1);
    ck_assert_int_eq(m.nrows, 1);
    const meas_row *r = &m.rows[0];
    ck_assert_int_eq(r->kind, MEAS_STREAM);
    ck_assert_int_eq(r->line, 185); /* of "end" */
    ck_assert_double_eq(r->bytes, 1584922624);
    ck_assert_double_eq(r->measured_s, 3.000279);
    ck_assert_int_eq(r->streams, 2);
    ck_assert_int_eq(r->reverse, 0);
    meas_free(&m);
    /* a -R test: accepted, noted */
    const char *rev = "{\"start\": {\"test_start\": {\"protocol\": \"TCP\", "
                      "\"num_streams\": 1, \"reverse\": 1}},\n"
                      " \"end\": {\"sum_sent\": {\"bytes\": 10, \"seconds\": "
                      "1e-3}}}";
    ck_assert_msg(parse(&m, "r.json", rev) == 0, "%s", err);
    ck_assert_int_eq(m.rows[0].reverse, 1);
    ck_assert_int_eq(m.rows[0].line, 2);
    ck_assert_int_eq(m.rows[0].streams, 1);
    meas_free(&m);
}
END_TEST

START_TEST(iperf3_refusals) {
#define TS(x) "{\"start\": {\"test_start\": {\"protocol\": " x "}}, "
    refused("x.json", "{\"start\": {}, \"end\": {},}",
            "x.json:1:25: syntax error (unexpected '}'; expected a string key "
            "after ',')");
    refused("x.json",
            "{\"start\": {}, \"intervals\": [], \"end\": {}, \"error\": "
            "\"unable to connect to server: Connection refused\"}",
            "x.json:1:52: error: iperf3 reported an error: \"unable to "
            "connect to server: Connection refused\" (expected the result of "
            "a test that ran)");
    refused("x.json", "{\"end\": {}}",
            "x.json:1:1: (root): no member \"start\" (expected the JSON of "
            "iperf3 --json, with \"start\" and \"end\")");
    refused("x.json", "{\"start\": 3, \"end\": {}}",
            "x.json:1:11: start: not an object (expected iperf3's start "
            "object)");
    refused("x.json", TS("\"UDP\", \"num_streams\": 1") "\"end\": {}}",
            "x.json:1:39: start.test_start.protocol: a UDP test (expected "
            "TCP: a UDP test sends at the rate it was given, not at the "
            "network's)");
    refused("x.json", TS("\"SCTP\", \"num_streams\": 1") "\"end\": {}}",
            "x.json:1:39: start.test_start.protocol: not \"TCP\" (expected a "
            "TCP test)");
    refused("x.json", TS("\"TCP\", \"num_streams\": 0") "\"end\": {}}",
            "x.json:1:61: start.test_start.num_streams: 0 is out of range "
            "(expected an integer >= 1)");
    refused("x.json", TS("\"TCP\", \"num_streams\": \"2\"") "\"end\": {}}",
            "x.json:1:61: start.test_start.num_streams: not a number "
            "(expected an integer >= 1)");
    refused("x.json",
            TS("\"TCP\", \"num_streams\": 1, \"reverse\": 2") "\"end\": {}}",
            "x.json:1:75: start.test_start.reverse: not 0 or 1 (expected 0, "
            "or 1 for a -R test)");
    refused("x.json",
            TS("\"TCP\", \"num_streams\": 1, \"bidir\": 1") "\"end\": {}}",
            "x.json:1:73: start.test_start.bidir: a --bidir test (expected "
            "one direction at a time)");
    refused("x.json", TS("\"TCP\", \"num_streams\": 1") "\"end\": {}}",
            "x.json:1:73: end: no member \"sum_sent\" (expected iperf3's "
            "end.sum_sent)");
    refused("x.json",
            TS("\"TCP\", \"num_streams\": 1") "\"end\": {\"sum_sent\": "
                                              "{\"bytes\": 0, \"seconds\": "
                                              "1}}}",
            "x.json:1:96: end.sum_sent.bytes: 0 is out of range (expected a "
            "number > 0)");
    refused("x.json",
            TS("\"TCP\", \"num_streams\": 1") "\"end\": {\"sum_sent\": "
                                              "{\"bytes\": 10}}}",
            "x.json:1:86: end.sum_sent: no member \"seconds\" (expected "
            "iperf3's end.sum_sent.seconds)");
    refused("x.json",
            TS("\"TCP\", \"num_streams\": 1") "\"end\": {\"sum_sent\": "
                                              "{\"bytes\": 10, \"seconds\": 1, "
                                              "\"bytes\": 3}}}",
            "x.json:1:114: end.sum_sent: duplicate key \"bytes\" (first "
            "given at 1:87)");
    refused("x.json",
            TS("\"TCP\", \"num_streams\": 1") "\"end\": {\"sum_sent\": "
                                              "{\"bytes\": 10, "
                                              "\"seconds\": 1}, "
                                              "\"sum_sent_bidir_reverse\": "
                                              "{}}}",
            "x.json:1:115: end.sum_sent_bidir_reverse: a --bidir test "
            "(expected one direction at a time)");
#undef TS
}
END_TEST

/* ---------------------------------------------------------------------
 * Files and sets
 */

START_TEST(file_refusals) {
    meas_set m = {0};
    ck_assert_int_eq(meas_load(&m, "tests/data/measure/missing.csv", err,
                               sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "tests/data/measure/missing.csv: cannot read: No "
                          "such file or directory");
    ck_assert_int_eq(meas_load(&m, "tests/data/measure", err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "tests/data/measure: cannot read: Is a directory");
    ck_assert_int_eq(m.nfiles, 0);
    const char *formats =
        " (expected a runs CSV "
        "(method,workers,params,codec,H,fragments,tau,"
        "steps,step_time_s,bandwidth_gbps,latency_ms,wall_s), the output "
        "of "
        "nccl-tests' all_reduce_perf, the JSON of iperf3 --json, a "
        "step-time "
        "CSV (worker,step,seconds) or an outage CSV (worker,down_s,up_s))";
    char want[1024];
    snprintf(want, sizeof want, "x.txt: not a measurement file%s", formats);
    refused("x.txt", "hello world\n", want);
    refused("x.txt", "# just a comment\n", want);
    refused("x.txt", "worker\n0\n", want); /* steps or outages? */
    snprintf(want, sizeof want, "x.txt: empty%s", formats);
    refused("x.txt", "", want);
    refused("x.txt", " \r\n\n", want);
    const char nul[] = "worker,step,seconds\n0,0,1\n0,\0001,2\n";
    ck_assert_int_eq(parse_n(&m, "s.csv", nul, sizeof nul - 1), MSG_EINPUT);
    ck_assert_str_eq(err, "s.csv:3:3: NUL byte (expected a text file)");
    meas_free(&m);
    /* columns count from after a byte order mark, in code points */
    refused("s.csv", "\xEF\xBB\xBFworker,step,seconds\n0,0,x\n",
            "s.csv:2:5: seconds: 'x' is not a number (expected a number > 0)");
    refused("s.csv", "worker,step,seconds\n0,0,\"\xC3\xA9\" ,x\n",
            "s.csv:2:10: 4 fields, not 3 (expected one per column of the "
            "header at line 1)");
    ck_assert_int_eq(parse_n(&m, "big.csv", "", (size_t)MEAS_MAX_BYTES + 1),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "big.csv: larger than 256 MiB (expected a "
                          "measurement file of at most 268435456 bytes)");
    meas_free(&m);
}
END_TEST

/* A failed file leaves the set as it was; a (worker, step) of an earlier
 * file is a duplicate too; at most MEAS_MAX_FILES files. */
START_TEST(set_of_files) {
    meas_set m = {0};
    load(&m, DATA "steps.csv");
    const char *bad = "worker,step,seconds\n0,7,1\n1,7,1\n0,8,x\n";
    ck_assert_int_eq(meas_parse(&m, bad, strlen(bad), "b.csv", err, sizeof err),
                     MSG_EINPUT);
    ck_assert_int_eq(m.nfiles, 1);
    ck_assert_int_eq(m.nsteps, 11);
    const char *dup = "worker,step,seconds\n0,7,1\n0,3,0.5\n";
    ck_assert_int_eq(meas_parse(&m, dup, strlen(dup), "d.csv", err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "d.csv:3:1: worker 0, step 3: given twice (first at "
                          "tests/data/measure/steps.csv:9; expected one time "
                          "per worker and step)");
    ck_assert_int_eq(m.nsteps, 11);
    const char *more = "worker,step,seconds\n0,7,1\n";
    ck_assert_int_eq(meas_parse(&m, more, strlen(more), "m.csv", err,
                                sizeof err),
                     0);
    ck_assert_int_eq(m.nfiles, 2);
    ck_assert_int_eq(m.nsteps, 12);
    ck_assert_int_eq(m.steps[11].file, 1);
    ck_assert_str_eq(m.file[1].path, "m.csv");
    ck_assert_uint_eq(m.file[1].digest, scn_digest_bytes(more, strlen(more)));
    for (int i = 2; i < MEAS_MAX_FILES; i++) {
        char text[64];
        snprintf(text, sizeof text, "worker,step,seconds\n0,%d,1\n", 100 + i);
        ck_assert_int_eq(meas_parse(&m, text, strlen(text), "n.csv", err,
                                    sizeof err),
                         0);
    }
    ck_assert_int_eq(m.nfiles, MEAS_MAX_FILES);
    ck_assert_int_eq(meas_load(&m, DATA "runs.csv", err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, DATA "runs.csv: one file too many (expected at most "
                               "64 measurement files)");
    ck_assert_int_eq(m.nfiles, MEAS_MAX_FILES);
    meas_free(&m);
}
END_TEST

/* ---------------------------------------------------------------------
 * The estimators, by hand
 */

static const double sqrt_half_pi = 1.2533141373155002512;

/* steps.csv: worker 0 took 0.50 0.52 0.48 0.50 0.90 s, worker 1 0.55 0.54
 * 0.56 0.55 1.10 0.57 s. */
START_TEST(speeds_by_hand) {
    meas_set m = {0};
    load(&m, DATA "steps.csv");
    meas_speeds s;
    ck_assert_msg(meas_fit_speeds(&m, &s, err, sizeof err) == 0, "%s", err);
    /* medians: 0.50 (the middle of five), (0.55 + 0.56) / 2 (six) */
    double m0 = 0.50, m1 = (0.55 + 0.56) / 2;
    /* sample sds: worker 0's mean 0.58, squares .0064 .0036 .01 .0064
     * .1024; worker 1's mean 0.645, squares .009025 .011025 .007225
     * .009025 .207025 .005625 */
    double sd0 = sqrt(0.1288 / 4), sd1 = sqrt(0.24895 / 5);
    double se0 = sqrt_half_pi * sd0 / sqrt(5),
           se1 = sqrt_half_pi * sd1 / sqrt(6);
    ck_assert_int_eq(s.workers, 2);
    ck_close(s.step_time_s, m0);
    ck_close(s.step_time_se, se0);
    ck_close(s.speed[0], 1);
    ck_close(s.speed_se[0], 0);
    ck_close(s.speed[1], m0 / m1);
    ck_close(s.speed_se[1],
             m0 / m1 * sqrt(pow(se0 / m0, 2) + pow(se1 / m1, 2)));
    /* stragglers: above 0.6 and 0.666 s: 0.90 (ratio 1.8) and 1.10 (ratio
     * 1.10 / 0.555), 2 of 11 steps */
    double r0 = 0.90 / m0, r1 = 1.10 / m1;
    ck_assert_int_eq(s.steps, 11);
    ck_assert_int_eq(s.slow_steps, 2);
    ck_close(s.straggler_prob, 2.0 / 11);
    ck_close(s.straggler_prob_se, sqrt(2.0 / 11 * (9.0 / 11) / 11));
    ck_close(s.straggler_slowdown, (r0 + r1) / 2);
    /* the sd of two values is |a - b| / sqrt(2); over sqrt(2) again */
    ck_close(s.straggler_slowdown_se, fabs(r1 - r0) / 2);
    char sets[MEAS_SPEEDS_SETS][MEAS_FIT_SET_MAX], want[128], num[MSG_NUM_MAX];
    ck_assert_int_eq(meas_speeds_sets(&s, sets, MEAS_SPEEDS_SETS), 4);
    ck_assert_str_eq(sets[0], "model.step_time_s=0.5");
    snprintf(want, sizeof want, "workers.speed=[1,%s]",
             msg_number(m0 / m1, num));
    ck_assert_str_eq(sets[1], want);
    ck_assert_str_eq(sets[2],
                     "workers.stragglers.probability=0.18181818181818182");
    snprintf(want, sizeof want, "workers.stragglers.slowdown=%s",
             msg_number((r0 + r1) / 2, num));
    ck_assert_str_eq(sets[3], want);
    ck_assert_int_eq(meas_speeds_sets(&s, sets, 3), MSG_EINVAL);
    meas_free(&m);
}
END_TEST

/* Three workers of speeds 1, 2 and 0.5; stragglers pooled over them, a
 * step of exactly 1.2 times its median not one; the overrides as the
 * scenario loader reads them. */
START_TEST(stragglers_pooled) {
    const char *text = "worker,step,seconds\n"
                       "0,0,1.0\n0,1,1.0\n0,2,1.0\n0,3,1.2\n0,4,1.25\n"
                       "1,0,0.5\n1,1,0.5\n1,2,0.59\n"
                       "2,0,2.0\n2,1,2.0\n2,2,3.0\n2,3,2.0\n";
    meas_set m;
    ck_assert_msg(parse(&m, "s.csv", text) == 0, "%s", err);
    meas_speeds s;
    ck_assert_msg(meas_fit_speeds(&m, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.workers, 3);
    ck_assert_double_eq(s.step_time_s, 1);
    ck_assert_double_eq(s.speed[1], 2);
    ck_assert_double_eq(s.speed[2], 0.5);
    /* slow: 1.25 (ratio 1.25) and 3.0 (ratio 1.5); not 1.2 nor 0.59 */
    ck_assert_int_eq(s.steps, 12);
    ck_assert_int_eq(s.slow_steps, 2);
    ck_close(s.straggler_prob, 2.0 / 12);
    ck_close(s.straggler_prob_se, sqrt(1.0 / 6 * 5.0 / 6 / 12));
    ck_close(s.straggler_slowdown, 1.375);
    ck_close(s.straggler_slowdown_se, 0.125);
    char sets[MEAS_SPEEDS_SETS + 1][MEAS_FIT_SET_MAX];
    ck_assert_int_eq(meas_speeds_sets(&s, sets, MEAS_SPEEDS_SETS + 1), 4);
    ck_assert_str_eq(sets[0], "model.step_time_s=1");
    ck_assert_str_eq(sets[1], "workers.speed=[1,2,0.5]");
    ck_assert_str_eq(sets[2],
                     "workers.stragglers.probability=0.16666666666666666");
    ck_assert_str_eq(sets[3], "workers.stragglers.slowdown=1.375");
    const char *all[] = {"workers.count=3", sets[0], sets[1], sets[2], sets[3]};
    scn_config c;
    int rc = scn_load("tests/data/table/one_layer_dp.json", all, 5, &c, err,
                      sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_double_eq(c.step_time_s, 1);
    ck_assert_double_eq(c.speed[0], 1);
    ck_assert_double_eq(c.speed[1], 2);
    ck_assert_double_eq(c.speed[2], 0.5);
    ck_assert_double_eq(c.straggler_prob, s.straggler_prob);
    ck_assert_double_eq(c.straggler_slowdown, 1.375);
    meas_free(&m);
    /* none slow: slowdown 1, no se; one step: no se of the median */
    ck_assert_int_eq(parse(&m, "s.csv", "worker,step,seconds\n0,0,2\n"), 0);
    ck_assert_int_eq(meas_fit_speeds(&m, &s, err, sizeof err), 0);
    ck_assert_double_eq(s.step_time_s, 2);
    ck_assert(isnan(s.step_time_se));
    ck_assert_double_eq(s.straggler_prob, 0);
    ck_assert_double_eq(s.straggler_prob_se, 0);
    ck_assert_double_eq(s.straggler_slowdown, 1);
    ck_assert(isnan(s.straggler_slowdown_se));
    meas_free(&m);
}
END_TEST

/* outages.csv, 4 workers over 36000 s: outages of 600, 300, 1800 and 300
 * s. */
START_TEST(faults_by_hand) {
    meas_set m = {0};
    load(&m, DATA "outages.csv");
    meas_faults f;
    ck_assert_msg(meas_fit_faults(&m, 4, 36000, &f, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(f.failures, 4);
    /* up time 4 x 36000 - 3000 = 141000 s over 4 failures */
    ck_close(f.mtbf_hours, 141000.0 / 4 / 3600);
    ck_close(f.mtbf_hours_se, 141000.0 / 4 / 3600 / 2);
    /* mean 750 s; squares 22500 202500 1102500 202500 */
    ck_close(f.mttr_hours, 750.0 / 3600);
    ck_close(f.mttr_hours_se, sqrt(1530000.0 / 3) / 2 / 3600);
    char sets[MEAS_FAULTS_SETS][MEAS_FIT_SET_MAX];
    ck_assert_int_eq(meas_faults_sets(&f, sets, 2), 2);
    ck_assert_str_eq(sets[0], "faults.mtbf_hours=9.791666666666666");
    ck_assert_str_eq(sets[1], "faults.mttr_hours=0.20833333333333334");
    ck_assert_int_eq(meas_faults_sets(&f, sets, 1), MSG_EINVAL);
    const char *all[] = {"workers.count=4", sets[0], sets[1]};
    scn_config c;
    int rc = scn_load("tests/data/table/one_layer_dp.json", all, 3, &c, err,
                      sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_close(c.faults.mtbf_s, 141000.0 / 4);
    ck_close(c.faults.mttr_s, 750);
    meas_free(&m);
    /* one failure: no se of the MTTR */
    ck_assert_int_eq(parse(&m, "o.csv", "worker,down_s,up_s\n1,10,70\n"), 0);
    ck_assert_int_eq(meas_fit_faults(&m, 2, 3600, &f, err, sizeof err), 0);
    ck_close(f.mtbf_hours, (7200.0 - 60) / 3600);
    ck_close(f.mtbf_hours_se, (7200.0 - 60) / 3600);
    ck_close(f.mttr_hours, 60.0 / 3600);
    ck_assert(isnan(f.mttr_hours_se));
    meas_free(&m);
}
END_TEST

START_TEST(fit_refusals) {
    meas_set m = {0};
    meas_speeds s;
    meas_faults f;
    ck_assert_int_eq(meas_fit_speeds(&m, &s, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, "no step times (expected a step-time CSV: "
                          "worker,step,seconds)");
    ck_assert_int_eq(meas_fit_faults(&m, 4, 10, &f, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "no outages (expected an outage CSV: "
                          "worker,down_s,up_s)");
    ck_assert_int_eq(parse(&m, "s.csv",
                           "worker,step,seconds\n0,0,1\n2,0,1\n2,1,1\n"),
                     0);
    ck_assert_int_eq(meas_fit_speeds(&m, &s, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, "worker 1 has no step times (expected steps of "
                          "every worker 0..2)");
    meas_free(&m);
    /* a set made by hand, of a worker the files cannot name */
    meas_step big = {0, 2, SCN_MAX_WORKERS, 0, 1.0};
    meas_set hand = {.nsteps = 1, .steps = &big};
    ck_assert_int_eq(meas_fit_speeds(&hand, &s, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, "step times of 257 workers (expected at most 256)");
    const char *log = "worker,down_s,up_s\n0,100,200\n3,50,60\n0,150,300\n";
    ck_assert_int_eq(parse(&m, "o.csv", log), 0);
    ck_assert_int_eq(meas_fit_faults(&m, 3, 1000, &f, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "o.csv:3:1: worker 3 is not one of the 3 workers "
                          "(expected 0..2)");
    ck_assert_int_eq(meas_fit_faults(&m, 4, 250, &f, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "o.csv:4:1: up_s 300 is past the observed span of "
                          "250 s (expected outages that end within it)");
    ck_assert_int_eq(meas_fit_faults(&m, 4, 1000, &f, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "o.csv:4:1: worker 0: the outage from 150 s to 300 "
                          "s overlaps the one at o.csv:2 (expected one outage "
                          "of a worker at a time)");
    ck_assert_int_eq(meas_fit_faults(&m, 0, 1000, &f, err, sizeof err),
                     MSG_EINVAL);
    ck_assert_int_eq(meas_fit_faults(&m, 4, 0, &f, err, sizeof err),
                     MSG_EINVAL);
    ck_assert_int_eq(meas_fit_faults(&m, 4, NAN, &f, err, sizeof err),
                     MSG_EINVAL);
    ck_assert_str_eq(err, "4 workers over nan s (expected 1..256 workers and a "
                          "span > 0 s)");
    meas_free(&m);
    /* back to back is not an overlap; down for the whole span is refused */
    ck_assert_int_eq(parse(&m, "o.csv",
                           "worker,down_s,up_s\n0,50,100\n0,0,50\n"),
                     0);
    ck_assert_int_eq(meas_fit_faults(&m, 1, 100, &f, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "the 1 workers were down for the whole span of 100 "
                          "s (expected some time up between failures)");
    ck_assert_int_eq(meas_fit_faults(&m, 2, 100, &f, err, sizeof err), 0);
    ck_close(f.mtbf_hours, 100.0 / 2 / 3600);
    meas_free(&m);
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("measure");
    TCase *tc = tcase_create("measure");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, runs_file);
    tcase_add_test(tc, runs_layout);
    tcase_add_test(tc, runs_sets_reach_the_loader);
    tcase_add_test(tc, runs_refusals);
    tcase_add_test(tc, runs_key_columns);
    tcase_add_test(tc, logs_files);
    tcase_add_test(tc, logs_refusals);
    tcase_add_test(tc, nccl_file);
    tcase_add_test(tc, nccl_variants);
    tcase_add_test(tc, nccl_refusals);
    tcase_add_test(tc, iperf3_file);
    tcase_add_test(tc, iperf3_refusals);
    tcase_add_test(tc, file_refusals);
    tcase_add_test(tc, set_of_files);
    tcase_add_test(tc, speeds_by_hand);
    tcase_add_test(tc, stragglers_pooled);
    tcase_add_test(tc, faults_by_hand);
    tcase_add_test(tc, fit_refusals);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
