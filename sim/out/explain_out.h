/*
 * explain_out.h -- what `dilosim explain` prints of an explained run
 * (sim/engine/explain.h): the sentence a person would say about it, the
 * JSON object of one method, and the text table.  Seconds are printed as
 * exact decimals of the nanosecond counts (report_seconds), so the parts
 * sum to the wall time as printed.
 */
#ifndef DILOSIM_EXPLAIN_OUT_H
#define DILOSIM_EXPLAIN_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/base/jw.h"
#include "sim/config/scenario.h"
#include "sim/engine/explain.h"

/* The sentence a person would say about r, into buf (always terminated);
 * returns the length of the whole sentence, as snprintf does. */
int expl_sentence(const scn_config *c, const expl_result *r, char *buf,
                  size_t n);

/* One method's object, as `dilosim explain --json` prints it:
 * {"method": variant, "label": scn_method_label(c), "wall_time_s": ...,
 *  "parts": {NAME: seconds, ...}, "workers": [...only when they differ...],
 *  "sentence": "..."}.  key: the member's name (NULL: an element). */
void expl_write_json(jw *w, const char *key, const char *variant,
                     const scn_config *c, const expl_result *r);

/* The same method as text: a heading, the table of parts (seconds and
 * % of the wall; a column per worker when they differ), the sentence. */
void expl_write_text(FILE *f, const char *variant, const scn_config *c,
                     const expl_result *r);

#endif
