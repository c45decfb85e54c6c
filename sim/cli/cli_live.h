/*
 * cli_live.h -- `dilosim report --interactive`: the report's page with the
 * live panel of html_live.h, the engine module found and read here.
 */
#ifndef DILOSIM_CLI_LIVE_H
#define DILOSIM_CLI_LIVE_H

#include <stdio.h>

#include "sim/cli/cli.h"

/* The help lines of --interactive and --wasm. */
#define CLI_LIVE_HELP                                                          \
    {"--interactive", "the page with a live panel first: the engine\n"         \
                      "compiled to WebAssembly answers in the browser as\n"    \
                      "sliders move (one scenario; see --wasm)"},              \
    {                                                                          \
        "--wasm FILE.js", "the engine module of --interactive (default:\n"     \
                          "$DILOSIM_WASM, else build/wasm/dilosim-engine.js\n" \
                          "of the tree of this program, made by make wasm);\n" \
                          "missing, the static page is written"                \
    }

/* Writes the interactive page of scenario (grid: the curve's --grid spec,
 * target: the plan's first target CU) through cli_write: write_static(f,
 * ctx) is the static page, which the live panel is injected into.  The
 * module is --wasm's file, else $DILOSIM_WASM, else
 * ../build/wasm/dilosim-engine.js beside /proc/self/exe's directory; when
 * it does not exist, one line on stderr says so and how to build it, and
 * the static page is written.  Returns the exit status (0: written). */
int cli_live_write(const cli_options *o, const char *scenario, const char *grid,
                   double target,
                   void (*write_static)(FILE *f, const void *ctx),
                   const void *ctx);

#endif
