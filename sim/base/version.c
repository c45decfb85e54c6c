/*
 * version.c -- the build's git revision (see version.h).  The Makefile
 * compiles this file with -include $(B)/version_rev.h, which defines
 * DILOSIM_REVISION; other builds (the fuzz targets) get "unknown".
 */
#include "sim/base/version.h"

#ifndef DILOSIM_REVISION
#define DILOSIM_REVISION "unknown"
#endif

const char *version_revision(void) {
    return DILOSIM_REVISION;
}
