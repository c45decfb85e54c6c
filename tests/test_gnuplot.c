/*
 * test_gnuplot.c -- figures through gnuplot: the program written for a
 * figure (quoting, datablocks, points left out), and gnuplot run as a
 * child: an SVG back through the pipe (also one larger than any pipe
 * buffer), its errors quoted, and a missing gnuplot reported.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/base/msg.h"
#include "sim/out/gnuplot.h"

static char *script_of(const gnuplot_figure *fig) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    gnuplot_script(f, fig);
    ck_assert_int_eq(fclose(f), 0);
    return text;
}

START_TEST(quote) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    gnuplot_quote(f, "it's \"x\"\nnext\x7f\\");
    gnuplot_quote(f, NULL);
    fclose(f);
    ck_assert_str_eq(text, "'it''s \"x\" next \\'''");
    free(text);
}
END_TEST

START_TEST(script_points) {
    double x[] = {0.1, -1, 1, NAN, 10}, y[] = {1, 2, INFINITY, 4, 5};
    gnuplot_curve c[2] = {{"a'b", 5, x, y, 0}, {NULL, 1, x + 1, y + 1, 1}};
    gnuplot_figure fig = {.xlabel = "bandwidth",
                          .ylabel = "CU (%)",
                          .logx = 1,
                          .xmin = 0.1,
                          .xmax = 10,
                          .ymin = 0,
                          .ymax = NAN,
                          .ncurves = 2,
                          .curve = c};
    char *s = script_of(&fig);
    ck_assert_ptr_nonnull(strstr(s, "set terminal svg size 900,480 "
                                    "noenhanced"));
    ck_assert_ptr_nonnull(strstr(s, "\nset output\n"));
    /* curve 0 keeps (0.1, 1) and (10, 5); curve 1 (x <= 0 on a log axis)
     * has no point and is left out of the plot */
    ck_assert_ptr_nonnull(strstr(s, "$d0 << EOD\n0.10000000000000001 1\n"
                                    "10 5\nEOD\n"));
    ck_assert_ptr_null(strstr(s, "$d1"));
    ck_assert_ptr_nonnull(strstr(s, "set xlabel 'bandwidth'\n"));
    ck_assert_ptr_nonnull(strstr(s, "set logscale x 10"));
    ck_assert_ptr_nonnull(strstr(s, "set xrange [0.10000000000000001:10]"));
    ck_assert_ptr_nonnull(strstr(s, "set yrange [0:*]"));
    ck_assert_ptr_nonnull(strstr(s, "set key outside below horizontal"));
    ck_assert_ptr_nonnull(strstr(s, "plot $d0 using 1:2 with linespoints"));
    ck_assert_ptr_nonnull(strstr(s, "title 'a''b'\n"));
    free(s);
    /* nothing at all to draw: empty axes, not an error */
    fig.ncurves = 1;
    fig.curve = c + 1;
    s = script_of(&fig);
    ck_assert_ptr_nonnull(strstr(s, "plot NaN notitle"));
    free(s);
}
END_TEST

/* A curve's style (its method's colour, a dash type) reaches the plot
 * command; curves without one take the palette's colours in turn. */
START_TEST(script_styles) {
    double x[] = {1, 10}, y[] = {1, 2};
    gnuplot_curve c[3] = {{"dp", 2, x, y, 0},
                          {"dp 2", 2, x, y, 0},
                          {"other", 2, x, y, 0}};
    gnuplot_style st[3] = {{gnuplot_method_color("dp"), 1},
                           {gnuplot_method_color("dp"), 2},
                           {NULL, 0}};
    gnuplot_figure fig = {.xmin = NAN,
                          .xmax = NAN,
                          .ymin = NAN,
                          .ymax = NAN,
                          .ncurves = 3,
                          .curve = c,
                          .style = st};
    ck_assert_str_eq(gnuplot_method_color("dp"), "#d55e00");
    ck_assert_str_eq(gnuplot_method_color("streaming_overlap_fp4"), "#e69f00");
    ck_assert_ptr_null(gnuplot_method_color("bogus"));
    ck_assert_ptr_null(gnuplot_method_color(NULL));
    char *s = script_of(&fig);
    ck_assert_ptr_nonnull(strstr(s, "dt 1 lc rgb '#d55e00' title 'dp'"));
    ck_assert_ptr_nonnull(strstr(s, "dt 2 lc rgb '#d55e00' title 'dp 2'"));
    /* the third curve's turn of the palette: its third colour */
    ck_assert_ptr_nonnull(strstr(s, "dt 1 lc rgb '#009e73' title 'other'"));
    free(s);
}
END_TEST

START_TEST(svg_through_pipe) {
    double x[] = {0.1, 1, 10}, y[] = {10, 50, 90};
    gnuplot_curve c = {"a<b & c", 3, x, y, 0};
    gnuplot_figure fig = {.logx = 1,
                          .xmin = NAN,
                          .xmax = NAN,
                          .ymin = 0,
                          .ymax = 100,
                          .ncurves = 1,
                          .curve = &c};
    char *svg, err[512];
    ck_assert_int_eq(gnuplot_svg(&fig, &svg, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(svg, "<svg"));
    ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
    ck_assert_ptr_nonnull(strstr(svg, "a&lt;b &amp; c")); /* escaped */
    ck_assert_ptr_null(strstr(svg, "<script"));
    free(svg);
}
END_TEST

/* More program and more SVG than a pipe holds: neither side blocks. */
START_TEST(large_figure) {
    enum { N = 40000 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    for (int i = 0; i < N; i++) {
        x[i] = 1 + i;
        y[i] = sin(i * 0.01);
    }
    gnuplot_curve c = {"sine", N, x, y, 0};
    gnuplot_figure fig = {.xmin = NAN,
                          .xmax = NAN,
                          .ymin = NAN,
                          .ymax = NAN,
                          .ncurves = 1,
                          .curve = &c};
    char *svg, err[512];
    ck_assert_int_eq(gnuplot_svg(&fig, &svg, err, sizeof err), 0);
    ck_assert_uint_gt(strlen(svg), 1 << 20);
    ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
    free(svg);
    free(x);
    free(y);
}
END_TEST

START_TEST(errors_quoted) {
    static const char bad[] =
        "set terminal svg\nset output\nplot nosuchfn(x)\n";
    char *out, err[512];
    size_t n;
    ck_assert_int_eq(gnuplot_run(bad, sizeof bad - 1, &out, &n, err,
                                 sizeof err),
                     MSG_EFAIL);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(err, "gnuplot: failed (exit status"));
    ck_assert_ptr_nonnull(strstr(err, "undefined function"));
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_int_eq(gnuplot_check(err, sizeof err), 0);
    /* an empty program is a valid one */
    ck_assert_int_eq(gnuplot_run("", 0, &out, &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 0);
    free(out);
}
END_TEST

START_TEST(missing_gnuplot) {
    char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", "/nonexistent-dilosim-test", 1);
    char *out, err[512];
    size_t n;
    int rc = gnuplot_run("exit\n", 5, &out, &n, err, sizeof err);
    int rc2 = gnuplot_check(err, sizeof err);
    setenv("PATH", path, 1);
    free(path);
    ck_assert_int_eq(rc, MSG_EFAIL);
    ck_assert_int_eq(rc2, MSG_EFAIL);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(err, "gnuplot: not found on PATH"));
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("gnuplot");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, quote);
    tcase_add_test(tc, script_points);
    tcase_add_test(tc, script_styles);
    tcase_add_test(tc, svg_through_pipe);
    tcase_add_test(tc, large_figure);
    tcase_add_test(tc, errors_quoted);
    tcase_add_test(tc, missing_gnuplot);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
