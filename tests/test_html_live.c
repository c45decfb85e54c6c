/*
 * test_html_live.c -- the interactive page's writer (html_live.h): the
 * panel right after <body>, its style before </head>, the config, module
 * and script before </body>, the static page's #summary renamed, the
 * scenario's text safe inside a <script>, and the module check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/study/html_live.h"
#include "check_main.h"

static const char page[] =
    "<!DOCTYPE html>\n<html>\n<head>\n<title>t</title>\n</head>\n<body>\n"
    "<section id=\"summary\"><a href=\"#summary\">top</a></section>\n"
    "<p>static</p>\n</body>\n</html>\n";

/* The page written with spec s, malloc'ed. */
static char *live(const html_live_spec *s) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    html_live_write(f, page, strlen(page), s);
    ck_assert_int_eq(fclose(f), 0);
    return text;
}

static const html_live_spec spec = {"a<b>.json", "{\"x\": \"</script>\"}",
                                    "var dilosimEngine = 1;", "logspace:-1:3:9",
                                    0.95};

/* The offset of needle in text; fails when absent. */
static size_t at(const char *text, const char *needle) {
    const char *p = strstr(text, needle);
    ck_assert_msg(p != NULL, "'%s' not in the page", needle);
    return (size_t)(p - text);
}

START_TEST(places) {
    char *t = live(&spec);
    size_t head = at(t, "</head>"), body = at(t, "<body>");
    size_t panel = at(t, "<section id=\"live\">"), end = at(t, "</body>");
    ck_assert_uint_lt(at(t, "<style>"), head);
    ck_assert_uint_lt(body, panel);
    ck_assert_uint_lt(panel, at(t, "<p>static</p>"));
    ck_assert_uint_lt(at(t, "<p>static</p>"), at(t, "id=\"live-config\""));
    ck_assert_uint_lt(at(t, "var dilosimEngine = 1;"), end);
    ck_assert_uint_lt(at(t, "var dilosimEngine = 1;"),
                      at(t, "live.js -- the live panel"));
    ck_assert_uint_lt(at(t, "live.js -- the live panel"), end);
    ck_assert_uint_lt(at(t, "id=\"live-config\""),
                      at(t, "var dilosimEngine = 1;"));
    /* the whole static page is there, in order, with its end */
    ck_assert_uint_lt(end, at(t, "</html>"));
    free(t);
}
END_TEST

START_TEST(ids) {
    char *t = live(&spec);
    at(t, "<section id=\"summary-static\"><a href=\"#summary-static\">");
    /* one #summary: the panel's */
    size_t first = at(t, "id=\"summary\"");
    ck_assert_ptr_null(strstr(t + first + 1, "id=\"summary\""));
    ck_assert_uint_gt(first, at(t, "<section id=\"live\">"));
    ck_assert_ptr_nonnull(strstr(t, "id=\"cu\" data-value=\"\""));
    free(t);
}
END_TEST

START_TEST(escaped) {
    char *t = live(&spec);
    /* the name in the heading as HTML, in the config as JSON without '<' */
    at(t, "Live: a&lt;b&gt;.json");
    at(t, "\"path\": \"a\\u003cb>.json\"");
    at(t, "\\u003c/script>");
    /* the only </script> are the page's own three */
    int n = 0;
    for (const char *p = t; (p = strstr(p, "</script>")); p++) n++;
    ck_assert_int_eq(n, 3);
    at(t, "\"grid\": \"logspace:-1:3:9\"");
    at(t, "\"target\": 0.95");
    free(t);
}
END_TEST

START_TEST(module_check) {
    char err[256];
    const char *ok = "var dilosimEngine = function () {};";
    ck_assert_int_eq(html_live_check(ok, strlen(ok), err, sizeof err), 0);
    const char *tag = "var dilosimEngine; s = '</SCRIPT>';";
    ck_assert_int_eq(html_live_check(tag, strlen(tag), err, sizeof err),
                     MSG_EFAIL);
    ck_assert_ptr_nonnull(strstr(err, "</script"));
    const char *other = "console.log(1)";
    ck_assert_int_eq(html_live_check(other, strlen(other), err, sizeof err),
                     MSG_EFAIL);
    char nul[] = "var dilosimEngine;\0x";
    ck_assert_int_eq(html_live_check(nul, sizeof nul - 1, err, sizeof err),
                     MSG_EFAIL);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("html_live");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, places);
    tcase_add_test(tc, ids);
    tcase_add_test(tc, escaped);
    tcase_add_test(tc, module_check);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
