/*
 * test_grid.c -- grid specs: comma lists and their trimming, logspace
 * against the Streaming DiLoCo paper's bandwidth grid, linspace, N = 1,
 * every error message, shortest exact numbers, row-major point order.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/study/grid.h"
#include "check_main.h"

static grid_list g;
static char err[512];

/* Parses spec, expects success with exactly the n values given. */
static void parse_is(int line, const char *spec, int n, ...) {
    int rc = grid_parse("--vary k=x", spec, &g, err, sizeof err);
    ck_assert_msg(rc == 0, "line %d: %s", line, err);
    ck_assert_msg(g.n == n, "line %d: %d values, expected %d", line, g.n, n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const char *want = va_arg(ap, const char *);
        ck_assert_msg(strcmp(g.v[i], want) == 0,
                      "line %d: value %d is \"%s\", expected \"%s\"", line, i,
                      g.v[i], want);
    }
    va_end(ap);
    grid_free(&g);
}
#define PARSE_IS(spec, n, ...) parse_is(__LINE__, spec, n, __VA_ARGS__)

/* Parses spec, expects failure with exactly msg and an empty list. */
static void fails_with(int line, const char *label, const char *spec,
                       const char *msg) {
    g.n = 7;
    g.v = (char **)&g;
    int rc = grid_parse(label, spec, &g, err, sizeof err);
    ck_assert_msg(rc == -1, "line %d: \"%s\" accepted", line, spec);
    ck_assert_msg(strcmp(err, msg) == 0, "line %d:\n   got: %s\nwanted: %s",
                  line, err, msg);
    ck_assert_msg(g.n == 0 && g.v == NULL, "line %d: list not empty", line);
}
#define FAILS(spec, msg) fails_with(__LINE__, "--vary k=" spec, spec, msg)

/* ------------------------------------------------------------------ */

START_TEST(test_lists) {
    PARSE_IS("1,2.5,10", 3, "1", "2.5", "10");
    PARSE_IS("dp,diloco", 2, "dp", "diloco");
    PARSE_IS("7", 1, "7");
    /* Items are trimmed of blanks, inside kept. */
    PARSE_IS("  1 ,\t2.5\t, 10  ", 3, "1", "2.5", "10");
    PARSE_IS("a b, c", 2, "a b", "c");
    /* Commas inside JSON strings, arrays and objects do not split. */
    PARSE_IS("[10,1],[1, 10]", 2, "[10,1]", "[1, 10]");
    PARSE_IS("\"a,b\",c", 2, "\"a,b\"", "c");
    PARSE_IS("\"a\\\",b\",c", 2, "\"a\\\",b\"", "c");
    PARSE_IS("{\"x\": 1, \"y\": [2, 3]},4", 2, "{\"x\": 1, \"y\": [2, 3]}",
             "4");
    /* Values are kept as written (they are --set values, not numbers). */
    PARSE_IS("1e9,0.10,inf", 3, "1e9", "0.10", "inf");
    /* Not a space keyword: a plain (one-item) list. */
    PARSE_IS("logspace", 1, "logspace");
}
END_TEST

/* logspace(-1, 3, 50) as listed to 6 decimals by the paper's tables
 * (reference/bandwidth-grid-gbps.txt). */
static const double paper_grid[50] = {
    0.100000,   0.120679,   0.145635,   0.175751,   0.212095,   0.255955,
    0.308884,   0.372759,   0.449843,   0.542868,   0.655129,   0.790604,
    0.954095,   1.151395,   1.389495,   1.676833,   2.023590,   2.442053,
    2.947052,   3.556480,   4.291934,   5.179475,   6.250552,   7.543120,
    9.102982,   10.985411,  13.257114,  15.998587,  19.306977,  23.299518,
    28.117687,  33.932218,  40.949151,  49.417134,  59.636233,  71.968567,
    86.851137,  104.811313, 126.485522, 152.641797, 184.206997, 222.299648,
    268.269580, 323.745754, 390.693994, 471.486636, 568.986603, 686.648845,
    828.642773, 1000.000000};

START_TEST(test_logspace_is_the_paper_grid) {
    ck_assert_int_eq(grid_parse("x", "logspace:-1:3:50", &g, err, sizeof err),
                     0);
    ck_assert_int_eq(g.n, 50);
    for (int i = 0; i < 50; i++) {
        double x = strtod(g.v[i], NULL);
        /* The reference is rounded to 6 decimals: ours, rounded so, is
         * the same text, and within half a unit of the last decimal. */
        char ours[32], ref[32];
        snprintf(ours, sizeof ours, "%.6f", x);
        snprintf(ref, sizeof ref, "%.6f", paper_grid[i]);
        ck_assert_str_eq(ours, ref);
        ck_assert(fabs(x - paper_grid[i]) <= 5e-7 + 1e-12 * x);
        /* The text is the exact double 10^(-1 + i * 4/49). */
        double e = i == 49 ? 3 : -1 + (double)i * (4.0 / 49);
        ck_assert(x == pow(10, e));
    }
    ck_assert_str_eq(g.v[0], "0.1");
    ck_assert_str_eq(g.v[1], "0.12067926406393285");
    ck_assert_str_eq(g.v[49], "1000");
    grid_free(&g);
}
END_TEST

START_TEST(test_spaces) {
    PARSE_IS("linspace:0:1:5", 5, "0", "0.25", "0.5", "0.75", "1");
    PARSE_IS("linspace:2:-2:3", 3, "2", "0", "-2");
    /* As numpy: A + i * ((B - A) / (N - 1)), the last value B exactly;
     * the texts are the exact doubles. */
    PARSE_IS("linspace:0:0.3:4", 4, "0", "0.09999999999999999",
             "0.19999999999999998", "0.3");
    PARSE_IS("logspace:0:2:3", 3, "1", "10", "100");
    PARSE_IS("logspace:2:0:3", 3, "100", "10", "1");
    /* N == 1: A alone (10^A). */
    PARSE_IS("linspace:3:9:1", 1, "3");
    PARSE_IS("logspace:-1:3:1", 1, "0.1");
    /* Blanks around the fields; the keyword is case-sensitive. */
    PARSE_IS(" logspace: 0 : 1 : 2 ", 2, "1", "10");
    PARSE_IS("LOGSPACE:0:1:2", 1, "LOGSPACE:0:1:2");
    /* Large and tiny values stay exact. */
    PARSE_IS("logspace:20:-20:2", 2, "1e+20", "1e-20");
    PARSE_IS("logspace:0:0:3", 3, "1", "1", "1");
}
END_TEST

START_TEST(test_errors) {
    FAILS("", "--vary k=: empty (expected a comma list, logspace:A:B:N or "
              "linspace:A:B:N)");
    FAILS("  ", "--vary k=  : empty (expected a comma list, logspace:A:B:N "
                "or linspace:A:B:N)");
    FAILS("1,,2", "--vary k=1,,2: item 2 is empty (expected a comma list "
                  "such as 1,2.5,10)");
    FAILS("1,2,", "--vary k=1,2,: item 3 is empty (expected a comma list "
                  "such as 1,2.5,10)");
    FAILS(",1", "--vary k=,1: item 1 is empty (expected a comma list such "
                "as 1,2.5,10)");
    FAILS("1, ,2", "--vary k=1, ,2: item 2 is empty (expected a comma list "
                   "such as 1,2.5,10)");
    FAILS("logspace:1:2", "--vary k=logspace:1:2: expected logspace:A:B:N");
    FAILS("logspace:1:2:", "--vary k=logspace:1:2:: expected "
                           "logspace:A:B:N");
    FAILS("logspace:1:2:3:4", "--vary k=logspace:1:2:3:4: expected "
                              "logspace:A:B:N");
    FAILS("logspace:", "--vary k=logspace:: expected logspace:A:B:N");
    FAILS("linspace::2:3", "--vary k=linspace::2:3: expected linspace:A:B:N");
    FAILS("logspace:x:2:3", "--vary k=logspace:x:2:3: A is not a finite "
                            "number: \"x\" (expected logspace:A:B:N)");
    FAILS("linspace:1:2y:3", "--vary k=linspace:1:2y:3: B is not a finite "
                             "number: \"2y\" (expected linspace:A:B:N)");
    FAILS("linspace:nan:2:3", "--vary k=linspace:nan:2:3: A is not a finite "
                              "number: \"nan\" (expected linspace:A:B:N)");
    FAILS("linspace:1:inf:3", "--vary k=linspace:1:inf:3: B is not a finite "
                              "number: \"inf\" (expected linspace:A:B:N)");
    FAILS("linspace:1:1e999:3",
          "--vary k=linspace:1:1e999:3: B is not a "
          "finite number: \"1e999\" (expected linspace:A:B:N)");
    FAILS("logspace:1:2:0", "--vary k=logspace:1:2:0: N is not an integer "
                            "in 1..100000: \"0\" (expected logspace:A:B:N)");
    FAILS("logspace:1:2:-3", "--vary k=logspace:1:2:-3: N is not an integer "
                             "in 1..100000: \"-3\" (expected "
                             "logspace:A:B:N)");
    FAILS("logspace:1:2:2.5",
          "--vary k=logspace:1:2:2.5: N is not an "
          "integer in 1..100000: \"2.5\" (expected logspace:A:B:N)");
    FAILS("linspace:1:2:100001",
          "--vary k=linspace:1:2:100001: N is not an "
          "integer in 1..100000: \"100001\" (expected linspace:A:B:N)");
    FAILS("logspace:1:400:3", "--vary k=logspace:1:400:3: 10^400 is out of "
                              "range (expected exponents in -307..308)");
    FAILS("logspace:-400:1:3", "--vary k=logspace:-400:1:3: 10^-400 is out "
                               "of range (expected exponents in -307..308)");
    FAILS("linspace:-1e308:1e308:3", "--vary k=linspace:-1e308:1e308:3: "
                                     "B - A is out of range");
    /* The label is the caller's. */
    fails_with(__LINE__, "s.json: sweep: k=linspace:1", "linspace:1",
               "s.json: sweep: k=linspace:1: expected linspace:A:B:N");
}
END_TEST

START_TEST(test_too_many_items) {
    size_t n = 2 * (GRID_MAX_VALUES + 1);
    char *spec = malloc(n);
    ck_assert_ptr_nonnull(spec);
    for (size_t i = 0; i < n; i += 2) spec[i] = '1', spec[i + 1] = ',';
    spec[n - 1] = 0;
    ck_assert_int_eq(grid_parse("L", spec, &g, err, sizeof err), -1);
    ck_assert_str_eq(err, "L: more than 100000 values");
    spec[n - 3] = 0; /* exactly GRID_MAX_VALUES */
    ck_assert_int_eq(grid_parse("L", spec, &g, err, sizeof err), 0);
    ck_assert_int_eq(g.n, GRID_MAX_VALUES);
    grid_free(&g);
    free(spec);
}
END_TEST

START_TEST(test_format_number) {
    static const struct {
        double x;
        const char *s;
    } cases[] = {{0, "0"},
                 {1000, "1000"},
                 {-3, "-3"},
                 {0.1, "0.1"},
                 {2.5, "2.5"},
                 {1e15, "1e+15"},
                 {123456789012345, "123456789012345"},
                 {1.0 / 3, "0.3333333333333333"},
                 {1e-7, "1e-07"},
                 {INFINITY, "inf"},
                 {-INFINITY, "-inf"},
                 {NAN, "nan"}};
    char buf[GRID_NUM_MAX];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        msg_number(cases[i].x, buf);
        ck_assert_str_eq(buf, cases[i].s);
    }
    /* Every finite value reads back exactly. */
    for (double x = 1e-300; x < 1e300; x *= 7.3) {
        msg_number(x, buf);
        ck_assert(strtod(buf, NULL) == x);
    }
}
END_TEST

START_TEST(test_points_row_major) {
    /* Sizes {2, 3, 2}: the first dimension varies slowest. */
    const int n[3] = {2, 3, 2};
    ck_assert_int_eq(grid_count(3, n, 1000), 12);
    int idx[3], p = 0;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 2; c++, p++) {
                grid_unrank(3, n, p, idx);
                ck_assert_int_eq(idx[0], a);
                ck_assert_int_eq(idx[1], b);
                ck_assert_int_eq(idx[2], c);
            }
    /* No dimensions: one point; too many points: -1. */
    ck_assert_int_eq(grid_count(0, n, 1000), 1);
    ck_assert_int_eq(grid_count(3, n, 11), -1);
    const int big[3] = {100000, 100000, 100000};
    ck_assert_int_eq(grid_count(3, big, INT64_MAX), (int64_t)1e15);
    const int huge[4] = {100000, 100000, 100000, 100000};
    ck_assert_int_eq(grid_count(4, huge, INT64_MAX), -1);
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("grid");
    TCase *tc = tcase_create("grid");
    tcase_add_test(tc, test_lists);
    tcase_add_test(tc, test_logspace_is_the_paper_grid);
    tcase_add_test(tc, test_spaces);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_too_many_items);
    tcase_add_test(tc, test_format_number);
    tcase_add_test(tc, test_points_row_major);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
