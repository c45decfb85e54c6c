/*
 * version.h -- the version of dilosim, and the git revision it was built
 * from.  Printed by `dilosim --version` and written into every result
 * (the JSON of `run`, the first comment line of every CSV).
 */
#ifndef DILOSIM_VERSION_H
#define DILOSIM_VERSION_H

#define DILOSIM_VERSION "0.8.0"

/* The git revision of the build (`git describe --always --dirty`), or
 * "unknown" when it was built without git.  Only version.c sees the
 * Makefile's $(B)/version_rev.h, so a new commit rebuilds one object. */
const char *version_revision(void);

#endif
