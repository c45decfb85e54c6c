/*
 * version.h -- the version of dilosim, and the git revision it was built
 * from (the Makefile passes -DDILOSIM_REVISION="..." where git knows it).
 * Printed by `dilosim --version` and written into every result.
 */
#ifndef DILOSIM_VERSION_H
#define DILOSIM_VERSION_H

#define DILOSIM_VERSION "0.7.0"

#ifndef DILOSIM_REVISION
#define DILOSIM_REVISION "unknown"
#endif

#endif
