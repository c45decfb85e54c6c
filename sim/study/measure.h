/*
 * measure.h -- what was measured on a buyer's own cluster, read strictly
 * for `dilosim calibrate`: runs, collectives, streams, step times and
 * outages, each row knowing the file and line it came from.
 *
 * The formats (meas_load tells them apart by their content):
 *
 * - Runs: a CSV whose header holds the columns
 *     method,workers,params,codec,H,fragments,tau,steps,step_time_s,
 *     bandwidth_gbps,latency_ms,wall_s
 *   in any order, and optionally sync_blocked_s and compute_s.  One row a
 *   run; a row describes the run's world (as the scenario keys
 *   method.name, workers.count, model.params, method.codec, method.H,
 *   method.fragments, method.tau, steps, model.step_time_s,
 *   network.bandwidth_gbps, network.latency_ms), the base scenario the
 *   rest.  An empty field sets nothing (DP has no H).  Any further column
 *   named by a dotted scenario key (network.efficiency) sets that key,
 *   its field read as --set reads a value (JSON, else a string): the
 *   world a row has that the fixed columns do not say.
 * - Collectives: the text output of nccl-tests' all_reduce_perf: its
 *   "#  Rank ..." lines give the ranks; each data row "size count type
 *   redop root time algbw busbw #wrong time algbw busbw #wrong" one warm
 *   all-reduce of `size` bytes among the ranks, taking the out-of-place
 *   `time` (us).
 * - Streams: the JSON of `iperf3 --json`: end.sum_sent.bytes moved over
 *   start.test_start.num_streams TCP connections in end.sum_sent.seconds.
 * - Step times: a CSV with the header worker,step,seconds: one inner step
 *   of one worker.
 * - Outages: a CSV with the header worker,down_s,up_s: one failure of one
 *   worker, from the instant it went down to the one it was back.
 *
 * A line starting with '#' in a CSV is a comment.  Errors are one line,
 * "FILE:LINE:COL: what is wrong (expected ...)" (COL the field's first
 * byte), MSG_EINPUT.
 *
 * The details, all checked:
 *
 * - Every file is read whole (at most MEAS_MAX_BYTES); a UTF-8 byte order
 *   mark at its start is skipped (columns count from after it, in code
 *   points), a NUL byte is an error.  Lines end in "\n" or "\r\n".
 * - Detection: a text whose first byte past blanks is '{' is JSON (an
 *   iperf3 result, or an error at its syntax); one with the comment lines
 *   nccl-tests prints ("# nThread ..." or the column header "#  size
 *   count type ...") is all_reduce_perf's output; otherwise the first
 *   line that is neither blank nor a comment is a CSV header, and the
 *   format is the one whose column names it holds most of.
 * - CSV: fields are separated by ',' and trimmed of blanks (spaces and
 *   tabs) at both ends; a field may be quoted as RFC 4180 says ("a,b",
 *   "" for a quote inside) but must end on its line (a quoted line end
 *   is refused).  Blank lines and comments ('#' as the first byte past
 *   blanks) are skipped anywhere.  Each column once; every row has one
 *   field per column.  Numbers are decimal (sign, digits, '.', exponent;
 *   no hex, inf or nan); an integer column takes any number of integer
 *   value up to 2^53 ("4", "4.0" as pandas writes it, "1e3").
 * - Runs: workers, H, fragments and steps are integers >= 1, tau >= 0;
 *   params, step_time_s, bandwidth_gbps and wall_s numbers > 0,
 *   latency_ms, sync_blocked_s and compute_s >= 0; method and codec a
 *   word (the scenario loader checks it when the overrides are applied).
 *   wall_s must not be empty.
 * - nccl-tests: the ranks are the distinct numbers of the "#  Rank N"
 *   lines (with several processes each may list its own): every rank
 *   0..R-1 must be listed, R >= 2.  A data row has 13 fields (12 in
 *   versions without the root column); size 0 rows are skipped; count
 *   must divide size into elements of 1, 2, 4 or 8 bytes; out-of-place
 *   algbw must be size/time and busbw algbw x 2(R-1)/R, each to the
 *   precision printed (a file whose columns are in another order, or of
 *   all_gather or reduce_scatter, busbw (R-1)/R algbw, is refused); a
 *   #wrong other than 0 (a count of wrong elements, N/A or -1: not
 *   checked) in either half is refused: a wrong result is not a
 *   measurement.  A "time" column headed "cputime" (-C 1) is refused.
 *   Other comment lines are skipped, and so are the lines of NCCL's own
 *   log (NCCL_DEBUG: "NCCL INFO", "NCCL WARN"); any other line is an
 *   error.
 * - iperf3: a TCP test (protocol "UDP" or any other is refused: its rate
 *   is the one the sender was told to use); a member "error" is refused,
 *   quoting it; so is a --bidir test (two directions at once).  A -R
 *   test (start.test_start.reverse 1) measures the server-to-client
 *   direction: accepted, with meas_row.reverse 1.  bytes and seconds
 *   must be > 0, num_streams an integer >= 1.  Duplicate keys in the
 *   objects read are errors.
 * - Step times: worker an integer 0..SCN_MAX_WORKERS-1, step an integer
 *   >= 0, seconds > 0; a (worker, step) given twice, in this file or in
 *   one loaded before, is an error.
 * - Outages: worker as above, 0 <= down_s < up_s.
 */
#ifndef DILOSIM_MEASURE_H
#define DILOSIM_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/config/scenario.h"

#define MEAS_MAX_FILES 64
#define MEAS_MAX_KEY_COLS 16 /* columns of a runs CSV named by a key */
#define MEAS_MAX_SETS (11 + MEAS_MAX_KEY_COLS) /* overrides of one run row */
#define MEAS_SET_MAX 96                        /* bytes of one, with the NUL */
#define MEAS_MAX_BYTES (256 << 20) /* the largest measurement file */

typedef enum {
    MEAS_RUN,       /* a whole run: measured = its wall time */
    MEAS_ALLREDUCE, /* one warm all-reduce: measured = its time */
    MEAS_STREAM     /* one iperf3 test: measured = its duration */
} meas_kind;

typedef struct {
    meas_kind kind;
    int file; /* index in meas_set.file */
    int line; /* 1-based line of the row (streams: of "end") */
    double measured_s;
    /* MEAS_RUN: the row's world as overrides, "key=value" in the order of
       the columns above; and the optional columns (NAN: absent).  A word
       is written as it is ("method.codec=fp32") unless it would read as
       JSON ("null", "12"): then as a JSON string, so that --set reads
       the string.  Numbers are the shortest decimal of their value
       (msg_number: "model.params=150000000" for "1.5e8"). */
    int nset;
    char sets[MEAS_MAX_SETS][MEAS_SET_MAX];
    int set_col[MEAS_MAX_SETS]; /* the 1-based column of each one's field */
    double sync_blocked_s, compute_s;
    /* MEAS_ALLREDUCE: bytes among ranks; MEAS_STREAM: bytes over streams */
    double bytes;
    int ranks, streams;
    int reverse; /* MEAS_STREAM: 1 for a -R test (server to client) */
} meas_row;

typedef struct {
    int file, line;
    int worker;
    int64_t step;
    double seconds;
} meas_step;

typedef struct {
    int file, line;
    int worker;
    double down_s, up_s; /* up_s > down_s */
} meas_outage;

typedef enum {
    MEAS_FORMAT_RUNS,
    MEAS_FORMAT_NCCL,
    MEAS_FORMAT_IPERF3,
    MEAS_FORMAT_STEPS,
    MEAS_FORMAT_OUTAGES
} meas_format;

typedef struct {
    char *path;
    meas_format format;
    uint64_t digest; /* scn_digest_bytes of its contents */
    int rows;        /* rows (steps, outages) it gave */
} meas_file;

typedef struct {
    int nfiles;
    meas_file file[MEAS_MAX_FILES];
    int nrows;
    meas_row *rows;
    int nsteps;
    meas_step *steps;
    int noutages;
    meas_outage *outages;
} meas_set;

/* Reads the file at path, tells its format from its content, and appends
 * what it holds to *m (zeroed before the first call).  Returns 0, or
 * MSG_EINPUT (the file cannot be read: "FILE: cannot read: <reason>"; it
 * is larger than MEAS_MAX_BYTES; its format is none of the above; a bad
 * row: the message names file, line and column; a file with no row; more
 * than MEAS_MAX_FILES files) / MSG_ENOMEM, with a one-line message in
 * err; *m then holds what earlier calls appended. */
int meas_load(meas_set *m, const char *path, char *err, size_t errlen);

/* meas_load of the len bytes at text (any bytes; text[len] must be a NUL,
 * as the JSON reader wants), `name` standing for the file in messages and
 * in meas_file.path. */
int meas_parse(meas_set *m, const char *text, size_t len, const char *name,
               char *err, size_t errlen);

/* "runs", "nccl-tests", "iperf3", "step times", "outages". */
const char *meas_format_name(meas_format f);

/* Frees what meas_load appended; *m is left zeroed. */
void meas_free(meas_set *m);

/* What step times say about the workers (closed form, no simulation).
 * step_time_s is the median of worker 0's steps (the scenario's
 * model.step_time_s, speed 1); speed[i] that over worker i's median.  A
 * step slower than (1 + MEAS_STRAGGLER_MARGIN) times its worker's median
 * is a straggler's: probability = their share of all steps, slowdown =
 * the mean of their ratio to the median (1 when there is none).  Each
 * estimate with its standard error (NAN where one sample gives none).
 *
 * In the scenario a step of worker i lasts step_time_s / speed[i], times
 * slowdown when it straggles, and the straggler keys apply to every
 * worker alike: so the medians give step_time_s and the speeds, and the
 * stragglers are pooled over all workers' steps.  Exactly:
 *
 * - the median of n values is the middle one of the sorted values (n
 *   odd) or the mean of the two middle ones (n even);
 * - step_time_se = sqrt(pi/2) s_0 / sqrt(n_0) (sqrt(pi/2) = 1.2533, the
 *   large-sample standard error of a median), s_0 the sample standard
 *   deviation (n - 1 in the denominator) of all of worker 0's n_0 steps;
 *   NAN for n_0 = 1;
 * - speed_se[0] = 0 (speed 1 by definition); speed_se[i] = speed[i] x
 *   sqrt((se_0/m_0)^2 + (se_i/m_i)^2) (the ratio of two independent
 *   medians m with the se above), NAN when a worker has one step;
 * - straggler_prob_se = sqrt(p (1 - p) / n), n = steps (all workers);
 * - straggler_slowdown_se = the sample standard deviation of the slow
 *   steps' ratios / sqrt(slow_steps), NAN for fewer than 2 slow steps. */
#define MEAS_STRAGGLER_MARGIN 0.2
typedef struct {
    int workers; /* 1 + the largest worker index; each must have steps */
    double step_time_s, step_time_se;
    double speed[SCN_MAX_WORKERS], speed_se[SCN_MAX_WORKERS];
    double straggler_prob, straggler_prob_se;
    double straggler_slowdown, straggler_slowdown_se;
    int64_t steps, slow_steps;
} meas_speeds;

/* Returns 0, or MSG_EINPUT with a one-line message (no step times, a
 * worker without steps, more than SCN_MAX_WORKERS workers). */
int meas_fit_speeds(const meas_set *m, meas_speeds *out, char *err,
                    size_t errlen);

/* What outages say about failures: over an observed span of `span_s`
 * seconds of `workers` workers (the caller's: the log does not say how
 * long it watched), MTBF = (workers x span - down time) / failures and
 * MTTR = the mean outage, in hours, with standard errors (exponential
 * times: MTBF / sqrt(failures); MTTR: the sample's).
 *
 * MTBF is the mean up time of a worker (the scenario's faults.mtbf_hours:
 * the mean of its up times), the exponential's maximum-likelihood
 * estimate; mttr_hours_se = the sample standard deviation of the outages
 * / sqrt(failures), NAN for one failure. */
typedef struct {
    int64_t failures;
    double mtbf_hours, mtbf_hours_se;
    double mttr_hours, mttr_hours_se;
} meas_faults;

/* Returns 0, or MSG_EINPUT with a one-line message (no outage, an outage
 * past the span or of a worker >= workers, overlapping outages of one
 * worker, workers down for the whole span); MSG_EINVAL for workers
 * outside 1..SCN_MAX_WORKERS or a span that is not a finite number > 0. */
int meas_fit_faults(const meas_set *m, int workers, double span_s,
                    meas_faults *out, char *err, size_t errlen);

/* The estimates as scenario overrides ("key=value", values msg_number's
 * shortest exact decimals), into sets[0..]:
 *   meas_speeds_sets: "model.step_time_s=...", "workers.speed=[1,...]"
 *     (s->workers values: the scenario's workers.count must be that),
 *     "workers.stragglers.probability=...",
 *     "workers.stragglers.slowdown=...";
 *   meas_faults_sets: "faults.mtbf_hours=...", "faults.mttr_hours=...".
 * Each returns the number written (MEAS_SPEEDS_SETS, MEAS_FAULTS_SETS),
 * or MSG_EINVAL when max is smaller. */
#define MEAS_FIT_SET_MAX (64 + SCN_MAX_WORKERS * 32)
#define MEAS_SPEEDS_SETS 4
#define MEAS_FAULTS_SETS 2
int meas_speeds_sets(const meas_speeds *s, char sets[][MEAS_FIT_SET_MAX],
                     int max);
int meas_faults_sets(const meas_faults *f, char sets[][MEAS_FIT_SET_MAX],
                     int max);

#endif
