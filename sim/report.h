/*
 * report.h -- what a run prints: JSON results, Chrome trace timelines
 * (the files they go to: outfile.h).
 */
#ifndef DILOSIM_REPORT_H
#define DILOSIM_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "run.h"
#include "scenario.h"

/* Writes x as the shortest decimal that reads back as the same double
 * ("inf" is written as the string "inf", as scenarios spell it). */
void report_number(FILE *f, double x);

/* Writes the result of a run as one JSON object (and a newline). */
void report_run_json(FILE *f, const scn_config *cfg, const run_result *r);

/* A Chrome trace-event timeline (opens in Perfetto or chrome://tracing):
 * begin writes the header and one name record per worker and track, span
 * is a run_hooks.span callback (ctx: the FILE *), end closes the array. */
void report_trace_begin(FILE *f, int workers);
void report_trace_span(void *ctx, const run_span *s);
void report_trace_end(FILE *f);

#endif
