/*
 * html_live.c -- the live panel of the interactive page (html_live.h):
 * its controls and answer boxes as HTML, the scenario and the settings as
 * JSON for sim/wasm/live.js, and the static page around them.
 *
 * The panel's ids are sim/wasm/live.js's contract: in-NAME (a field), sl-NAME
 * (its slider), #cu, #bytes, #plan-least (data-value: the figure as the
 * command line prints it), #summary, #live-error, #live-explain,
 * #live-curve.
 */
#include "sim/study/html_live.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/base/codec.h"
#include "sim/base/jw.h"
#include "sim/base/msg.h"
#include "sim/study/html.h"

/* sim/wasm/live.js and sim/wasm/live.css, from $(B)/gen/live_assets.h (the
 * Makefile's -include); a build without it (the fuzz build) has empty
 * ones. */
#ifndef HTML_LIVE_ASSETS
static const char live_js[] = "";
static const char live_css[] = "";
#endif

int html_live_check(const char *module, size_t len, char *err, size_t errlen) {
    if (strlen(module) != len)
        return msg_set(err, errlen, MSG_EFAIL, "the module holds a NUL byte");
    if (!strstr(module, "dilosimEngine"))
        return msg_set(err, errlen, MSG_EFAIL,
                       "not the engine's module (no dilosimEngine)");
    for (const char *p = strchr(module, '<'); p; p = strchr(p + 1, '<'))
        if (p[1] == '/' && !strncasecmp(p + 2, "script", 6))
            return msg_set(err, errlen, MSG_EFAIL,
                           "the module holds </script: it cannot be inlined");
    return 0;
}

/* A field (and a slider when max > min) for one control. */
static void control(FILE *f, const char *id, const char *name, double min,
                    double max, double step) {
    fprintf(f, "<label><span class=\"name\">%s</span>", name);
    if (max > min)
        fprintf(f,
                "<input type=\"range\" id=\"sl-%s\" min=\"%g\" max=\"%g\" "
                "step=\"%g\">",
                id, min, max, step);
    fprintf(f, "<input type=\"text\" id=\"in-%s\" size=\"8\"></label>\n", id);
}

static void controls(FILE *f) {
    fputs("<div class=\"controls\">\n<label><span class=\"name\">method"
          "</span><select id=\"in-variant\"></select></label>\n",
          f);
    control(f, "bw", "bandwidth (Gbit/s, log)", -2, 4, 0.01);
    control(f, "lat", "latency (ms, one way)", 0, 200, 0.5);
    control(f, "workers", "workers", 1, 64, 1);
    control(f, "H", "H (inner steps)", 1, 1000, 1);
    control(f, "fragments", "fragments", 1, 64, 1);
    control(f, "tau", "tau (overlap)", 0, 20, 1);
    fputs("<label><span class=\"name\">codec</span>"
          "<select id=\"in-codec\">",
          f);
    for (int k = 0; k < CODEC_COUNT; k++)
        fprintf(f, "<option>%s</option>", codec_name((codec_kind)k));
    fputs("</select></label>\n", f);
    control(f, "mtbf", "MTBF (hours, 0: none)", 0, 0, 0);
    control(f, "mttr", "MTTR (hours)", 0, 0, 0);
    control(f, "target", "target CU of the plan", 0, 0, 0);
    fputs("</div>\n", f);
}

static void panel(FILE *f, const html_live_spec *s) {
    fputs("<section id=\"live\">\n<h2>Live: ", f);
    html_escape(f, s->path);
    fputs("</h2>\n<p class=\"status\" id=\"live-status\">loading the "
          "engine&hellip; (a page without scripts shows the report below "
          "only)</p>\n"
          "<div id=\"summary\"><span id=\"live-label\"></span>: compute "
          "utilization <span class=\"big\" id=\"cu\" data-value=\"\">"
          "&ndash;</span>, wall time <span id=\"live-wall\"></span>, bytes "
          "on the WAN <span id=\"bytes\" data-value=\"\">&ndash;</span>; "
          "least bandwidth for CU &ge; <span id=\"live-target\"></span>: "
          "<span id=\"plan-least\" data-value=\"\">&ndash;</span>\n"
          "<p id=\"live-sentence\"></p></div>\n"
          "<div id=\"live-error\"></div>\n",
          f);
    controls(f);
    fputs("<h3>Compute utilization against bandwidth</h3>\n"
          "<div id=\"live-curve\"></div>\n"
          "<h3>Where the wall time goes</h3>\n<div id=\"live-explain\">"
          "</div>\n<p class=\"note\">The scenario's keys in the address: "
          "<code>#network.bandwidth_gbps=1&amp;method.H=50</code> (as "
          "<code>--set</code> takes them), <code>variant=NAME</code>, "
          "<code>target_cu=0.95</code>; a link reproduces this view.</p>\n"
          "</section>\n",
          f);
}

/* text as JSON inside a <script>: '<' as \u003c, so no "</script". */
static void script_json(FILE *f, const html_live_spec *s) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m) {
        jw w;
        jw_init(&w, m);
        jw_object(&w, NULL);
        jw_str(&w, "path", s->path);
        jw_str(&w, "grid", s->grid);
        jw_num(&w, "target", s->target);
        jw_str(&w, "scenario", s->scenario);
        jw_end(&w);
    }
    if (!m || fclose(m)) {
        free(text);
        return;
    }
    for (size_t i = 0; i < len; i++)
        if (text[i] == '<') fputs("\\u003c", f);
        else fputc(text[i], f);
    free(text);
}

/* Writes page[from..to) with id="summary" and href="#summary" renamed. */
static void copy_renamed(FILE *f, const char *page, size_t from, size_t to) {
    static const char *const old[] = {"id=\"summary\"", "href=\"#summary\""};
    static const char *const neu[] = {"id=\"summary-static\"",
                                      "href=\"#summary-static\""};
    for (size_t i = from; i < to;) {
        int hit = -1;
        for (int k = 0; k < 2 && hit < 0; k++) {
            size_t n = strlen(old[k]);
            if (i + n <= to && !memcmp(page + i, old[k], n)) hit = k;
        }
        if (hit < 0) {
            fputc(page[i++], f);
            continue;
        }
        fputs(neu[hit], f);
        i += strlen(old[hit]);
    }
}

/* The offset of needle in page[from..len), or len. */
static size_t find(const char *page, size_t len, size_t from,
                   const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = from; i + n <= len; i++)
        if (!strncasecmp(page + i, needle, n)) return i;
    return len;
}

void html_live_write(FILE *f, const char *page, size_t len,
                     const html_live_spec *s) {
    size_t head = find(page, len, 0, "</head>");
    size_t body = find(page, len, head, "<body");
    if (body < len) body = find(page, len, body, ">") + 1;
    if (body > len) body = len;
    size_t end = find(page, len, body, "</body>");
    copy_renamed(f, page, 0, head);
    fprintf(f, "<style>\n%s</style>\n", live_css);
    copy_renamed(f, page, head, body);
    fputc('\n', f);
    panel(f, s);
    copy_renamed(f, page, body, end);
    fputs("<script type=\"application/json\" id=\"live-config\">", f);
    script_json(f, s);
    fputs("</script>\n<script>\n", f);
    fputs(s->module, f);
    fprintf(f, "\n</script>\n<script>\n%s</script>\n", live_js);
    copy_renamed(f, page, end, len);
}
