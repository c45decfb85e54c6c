/*
 * check_main.h -- the main() every Check suite binary shares.
 *
 * A test file defines `Suite *make_suite(void)` and ends with CHECK_MAIN.
 * The binary exits 0 when every test passed.
 *
 * Timeouts: Check stops a test after CK_DEFAULT_TIMEOUT seconds (4 unless
 * set), which a loaded two-core machine can exceed on honest tests.  The
 * default here is CHECK_MAIN_TIMEOUT_S, set before the suite is made
 * (tcase_create reads it) unless the environment sets one; test cases
 * that call tcase_set_timeout keep their own.  A timeout only stops a
 * test that hangs: no test depends on being fast.
 *
 * A failing binary ends its output with one line per failed test,
 * "FAILED test: file: message" (from Check's TAP report, the one place
 * that names the test function), so that the name is where one looks.
 */
#ifndef DILOSIM_CHECK_MAIN_H
#define DILOSIM_CHECK_MAIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_MAIN_TIMEOUT_S "600"

/* Prints the "not ok" lines of the TAP file at `path` as FAILED lines. */
static inline void check_main_print_failed(const char *path) {
    FILE *f = fopen(path, "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        /* "not ok N - file:tcase:test: message" */
        if (strncmp(line, "not ok", 6) != 0) continue;
        char *s = strstr(line, " - ");
        s = s ? s + 3 : line;
        char *tc = strchr(s, ':');
        char *name = tc ? strchr(tc + 1, ':') : NULL;
        char *msg = name ? strchr(name + 1, ':') : NULL;
        if (!msg) {
            fprintf(stderr, "FAILED %s", s);
            continue;
        }
        *tc = *name = *msg = '\0';
        fprintf(stderr, "FAILED %s: %s:%s", name + 1, s, msg + 1);
    }
    if (f) fclose(f);
}

static inline int check_main_run(Suite *(*make)(void)) {
    setenv("CK_DEFAULT_TIMEOUT", CHECK_MAIN_TIMEOUT_S, 0);
    char tap[] = "/tmp/dilosim-check-XXXXXX";
    int fd = mkstemp(tap);
    SRunner *sr = srunner_create(make());
    if (fd >= 0) srunner_set_tap(sr, tap);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (fd >= 0) {
        if (failed) check_main_print_failed(tap);
        close(fd);
        unlink(tap);
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#define CHECK_MAIN(make_suite)                                                 \
    int main(void) {                                                           \
        return check_main_run(make_suite);                                     \
    }

#endif
