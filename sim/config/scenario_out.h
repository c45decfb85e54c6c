/*
 * scenario_out.h -- the layout of what the loader's field pass fills: the
 * timing config and the train section side by side, so that one walk of
 * the root table (which nests the train section's) writes both, in the
 * order of the keys.  Included by scenario.c (which loads into one) and
 * scenario_train.c (whose table's offsets point into it) only, so that
 * the trainer's types stay out of the loader's other files.
 */
#ifndef DILOSIM_SCENARIO_OUT_H
#define DILOSIM_SCENARIO_OUT_H

#include <stddef.h>

#include "sim/config/scenario_int.h"
#include "sim/config/scenario_train.h"

/* The timing tables' offsets (AT) are offsets in cfg, which comes first,
 * so that a scn__out * is also a scn_config *; the train section's
 * (AT_TRAIN) are in train. */
struct scn__out {
    scn_config cfg;
    scn_train train;
};

#define AT_TRAIN(m) (offsetof(scn__out, train) + offsetof(scn_train, m))

#endif
