/*
 * test_setfile.c -- files of overrides (--set-from FILE.json): members
 * into "key=VALUE" overrides with their positions, the fit block, every
 * error of the file itself with its place, and the loader's errors about
 * one of the file's values pointing into the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/msg.h"
#include "sim/config/scenario.h"
#include "sim/config/setfile.h"
#include "check_main.h"

static char path[64], err[4096];

/* Writes text to a fresh file; its name in path. */
static void put(const char *text) {
    snprintf(path, sizeof path, "/tmp/test_setfile_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* setfile_load of text: its code; the message in err. */
static int load(const char *text, setfile *f) {
    put(text);
    int rc = setfile_load(path, f, err, sizeof err);
    unlink(path);
    return rc;
}

/* The message setfile_load gives for text, after "FILE:" (checked). */
static const char *fails(const char *text) {
    setfile f;
    ck_assert_int_eq(load(text, &f), MSG_EINPUT);
    ck_assert_int_eq(f.nset, 0);
    size_t n = strlen(path);
    ck_assert_msg(!strncmp(err, path, n) && err[n] == ':', "%s", err);
    return err + n + 1;
}

START_TEST(test_members_become_overrides) {
    setfile f;
    const char *t = "\xef\xbb\xbf{\"network.efficiency\": 0.93,\n"
                    " \"method.codec\": \"fp4\", \"workers.speed\": [1, 0.5],\n"
                    " \"fit\": {\"keys\": [\"network.efficiency\"],"
                    " \"stderr\": [0.01], \"covariance\": [[0.0001]],"
                    " \"rows\": 3}}";
    ck_assert_int_eq(load(t, &f), 0);
    ck_assert_int_eq(f.nset, 3);
    ck_assert_str_eq(f.sets[0], "network.efficiency=0.93");
    ck_assert_str_eq(f.sets[1], "method.codec=\"fp4\"");
    ck_assert_str_eq(f.sets[2], "workers.speed=[1, 0.5]"); /* as written */
    /* offsets count from after the byte order mark */
    ck_assert_uint_eq(f.key_off[0], 1);
    ck_assert_uint_eq(f.val_off[0], 23);
    ck_assert_uint_eq(f.key_off[1], 30);
    ck_assert_int_eq(f.nfit, 1);
    ck_assert_str_eq(f.fit_key[0], "network.efficiency");
    ck_assert_double_eq(f.fit_value[0], 0.93);
    ck_assert_double_eq(f.fit_stderr[0], 0.01);
    ck_assert_double_eq(f.fit_cov[0][0], 0.0001);
    setfile_free(&f);
    ck_assert_int_eq(f.nset, 0);
    ck_assert_ptr_null(f.text);
}
END_TEST

START_TEST(test_no_fit_block) {
    setfile f;
    ck_assert_int_eq(load("{\"steps\": 10}", &f), 0);
    ck_assert_int_eq(f.nset, 1);
    setfile_free(&f);
    /* the text of a value, not the value printed again: cJSON would print
     * 0.30000000000000004 as 0.3, one bit off */
    ck_assert_int_eq(load("{\"a.b\": 0.30000000000000004, \"c.d\": "
                          "{\"x\": \"}\\\"]\", \"y\": [1, {}]}}",
                          &f),
                     0);
    ck_assert_str_eq(f.sets[0], "a.b=0.30000000000000004");
    ck_assert_str_eq(f.sets[1], "c.d={\"x\": \"}\\\"]\", \"y\": [1, {}]}");
    ck_assert_int_eq(f.nfit, 0);
    setfile_free(&f);
}
END_TEST

START_TEST(test_errors_of_the_file) {
    ck_assert_str_eq(fails("{\"a\": 1,}"),
                     "1:9: unexpected '}'; expected a string key after ','");
    ck_assert_str_eq(fails("[1]"), "1:1: (root): expected an object of "
                                   "scenario keys and values");
    ck_assert_str_eq(fails("{\"a\": 1,\n \"a\": 2}"), "2:2: a: duplicate key");
    ck_assert_str_eq(fails("{\"network..x\": 1}"),
                     "1:2: network..x: not a scenario key (expected a dotted "
                     "path such as network.efficiency)");
    ck_assert_str_eq(fails("{\"a b\": 1}"),
                     "1:2: a b: not a scenario key (expected a dotted path "
                     "such as network.efficiency)");
    ck_assert_str_eq(fails("{\"fit\": 1}"), "1:9: fit: expected an object");
    ck_assert_str_eq(fails("{\"fit\": {}}"), "1:2: fit: missing \"keys\"");
    ck_assert_str_eq(fails("{\"fit\": {\"keys\": []}}"),
                     "1:18: fit.keys: expected an array of 1 to 16 key names");
    ck_assert_str_eq(fails("{\"a\": \"x\", \"fit\": {\"keys\": [\"a\"]}}"),
                     "1:29: fit.keys: item 0 is not the name of a numeric "
                     "member of the file");
    ck_assert_str_eq(fails("{\"a\": 1, \"fit\": {\"keys\": [\"a\", \"a\"]}}"),
                     "1:32: fit.keys: \"a\" is listed twice");
    ck_assert_str_eq(fails("{\"a\": 1, \"fit\": {\"keys\": [\"a\"]}}"),
                     "1:10: fit: missing \"stderr\"");
    ck_assert_str_eq(fails("{\"a\": 1, \"fit\": {\"keys\": [\"a\"], "
                           "\"stderr\": [1, 2]}}"),
                     "1:43: fit.stderr: expected an array of 1 numbers, one "
                     "a fitted key");
    ck_assert_str_eq(fails("{\"a\": 1, \"fit\": {\"keys\": [\"a\"], "
                           "\"stderr\": [1], \"covariance\": [1]}}"),
                     "1:63: fit.covariance: row 0: expected an array of 1 "
                     "numbers");
    ck_assert_str_eq(fails("{\"a\": 1, \"fit\": {\"keys\": [\"a\"], "
                           "\"stderr\": [0.1], \"covariance\": [[0.02]]}}"),
                     "1:64: fit.covariance: the diagonal's a (0.02) is not "
                     "the square of fit.stderr's (0.1)");
    ck_assert_str_eq(fails("{\"a\": 1, \"b\": 2, \"fit\": {\"keys\": [\"a\", "
                           "\"b\"], \"stderr\": [1, 1], \"covariance\": "
                           "[[1, 0.5], [0.25, 1]]}}"),
                     "1:78: fit.covariance: not symmetric: row 1 item 0 is "
                     "0.25, row 0 item 1 0.5");
}
END_TEST

START_TEST(test_unreadable) {
    setfile f;
    ck_assert_int_eq(setfile_load("/nonexistent/fit.json", &f, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "/nonexistent/fit.json: cannot open: No such file "
                          "or directory");
}
END_TEST

/* The loader names a member of the file for an error in its value (or
 * its key), as the command line passes them (cli_setfrom.c). */
START_TEST(test_loader_points_into_the_file) {
    setfile f;
    ck_assert_int_eq(load("{\"steps\": 5,\n  \"network.efficiency\": 1.5}", &f),
                     0);
    const char *scn = "{\"model\": {\"params\": 1e6, \"layers\": 2, "
                      "\"step_time_s\": 0.1}, \"workers\": {\"count\": 2}, "
                      "\"network\": {\"bandwidth_gbps\": 1}, "
                      "\"method\": {\"name\": \"diloco\", \"H\": 5}}";
    char sp[64];
    snprintf(sp, sizeof sp, "/tmp/test_setfile_scn_XXXXXX");
    int fd = mkstemp(sp);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, scn, strlen(scn)), (ssize_t)strlen(scn));
    close(fd);
    scn_doc *doc;
    ck_assert_int_eq(scn_doc_open(sp, NULL, NULL, 0, &doc, err, sizeof err), 0);
    scn_origin from[2];
    for (int i = 0; i < 2; i++)
        from[i] = (scn_origin){.sweep = -1,
                               .item = -1,
                               .file = "fit.json",
                               .text = f.text,
                               .key_off = f.key_off[i],
                               .val_off = f.val_off[i]};
    scn_config *cfg = malloc(sizeof *cfg);
    ck_assert_int_eq(scn_doc_load_from(doc, (const char *const *)f.sets, from,
                                       2, cfg, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "fit.json:2:25: network.efficiency: 1.5 is out of "
                          "range (expected a number in (0, 1])");
    /* the same overrides as --set name the --set */
    ck_assert_int_eq(scn_doc_load(doc, (const char *const *)f.sets, 2, cfg, err,
                                  sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "--set network.efficiency=1.5: network.efficiency: "
                          "1.5 is out of range (expected a number in (0, 1])");
    free(cfg);
    scn_doc_free(doc);
    unlink(sp);
    setfile_free(&f);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("setfile");
    TCase *tc = tcase_create("setfile");
    tcase_add_test(tc, test_members_become_overrides);
    tcase_add_test(tc, test_no_fit_block);
    tcase_add_test(tc, test_errors_of_the_file);
    tcase_add_test(tc, test_unreadable);
    tcase_add_test(tc, test_loader_points_into_the_file);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
