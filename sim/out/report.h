/*
 * report.h -- what a run prints: JSON results, Chrome trace timelines
 * (the files they go to: outfile.h).
 */
#ifndef DILOSIM_REPORT_H
#define DILOSIM_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/base/jw.h"
#include "sim/base/msg.h"

#include "sim/engine/run.h"
#include "sim/config/scenario.h"

/* Bytes of report_seconds' text, with the NUL. */
#define REPORT_SECONDS_MAX 32

/* ns as the exact decimal of seconds, without trailing zeros:
 * 125000000001 -> "125.000000001", 40000000000 -> "40".  Returns buf. */
const char *report_seconds(int64_t ns, char buf[REPORT_SECONDS_MAX]);

/* Writes the result of a run as one JSON object (and a newline): the
 * version, the scenario digest, the resolved inputs, then the figures
 * (docs/scenarios.md lists every field and its unit). */
void report_run_json(FILE *f, const scn_config *cfg, const run_result *r);

/* A Chrome trace-event timeline (opens in Perfetto or chrome://tracing).
 * Only spans whose step lies in first_step..last_step are written (1 and
 * INT64_MAX for all).  begin writes the header and one name record per
 * worker and track, report_trace_span is a run_hooks.span callback (ctx:
 * the report_trace), end closes the array. */
typedef struct {
    FILE *f;
    int64_t first_step, last_step;
    jw w; /* the document, open between begin and end */
} report_trace;

void report_trace_begin(report_trace *t, FILE *f, int workers,
                        int64_t first_step, int64_t last_step);
void report_trace_span(void *ctx, const run_span *s);
void report_trace_end(report_trace *t);

/* The "dur" a span from start_ns to end_ns (0 <= start <= end) gets:
 * "ts" is the exact decimal of start_ns in microseconds, and dur is the
 * exact decimal of the duration when double(ts) + double(dur) equals
 * double(end in microseconds), else the 17-digit decimal of a double d
 * for which double(ts) + d == double(end): a viewer adding them in
 * floating point lands exactly on the next span's ts.  Returns buf. */
const char *report_trace_dur(int64_t start_ns, int64_t end_ns,
                             char buf[MSG_NUM_MAX]);

#endif
