/*
 * html_live.h -- the page of `dilosim report --interactive`: the static
 * report's page (html.h) with a live panel first, in which the C engine,
 * compiled to WebAssembly (make wasm; sim/wasm/engine.c), answers as the
 * sliders move.
 *
 * The panel's script and style are sim/wasm/live.js and sim/wasm/live.css, built
 * into the program by the Makefile; the module (the .js emcc wrote, the
 * .wasm inside it) and the scenario are inlined too: nothing is fetched.
 * Writers only: nothing here simulates.
 */
#ifndef DILOSIM_HTML_LIVE_H
#define DILOSIM_HTML_LIVE_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *path;     /* the scenario's name, as the command was given
                             it (the loader's messages name it) */
    const char *scenario; /* its text */
    const char *module;   /* the engine's module text (html_live_check) */
    const char *grid;     /* the curve's bandwidths: a --grid spec */
    double target;        /* the plan's target CU at first */
} html_live_spec;

/* Whether module can sit inline in a <script>: 0, or MSG_EFAIL with a
 * message when it holds "</script" (in any case) or a NUL before its end
 * (len bytes), or is not the engine (no "dilosimEngine"). */
int html_live_check(const char *module, size_t len, char *err, size_t errlen);

/* Writes page (the static report's page, len bytes, as html_begin /
 * html_end frame it) with the live panel injected right after <body>,
 * its style before </head> and its scripts before </body>; the static
 * page's id="summary" (and href="#summary") become "summary-static", so
 * that the panel's summary box is the one #summary. */
void html_live_write(FILE *f, const char *page, size_t len,
                     const html_live_spec *s);

#endif
