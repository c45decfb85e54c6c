/*
 * check_main.h -- the main() every Check suite binary shares.
 *
 * A test file defines `Suite *make_suite(void)` and ends with CHECK_MAIN.
 * The binary exits 0 when every test passed.
 */
#ifndef DILOSIM_CHECK_MAIN_H
#define DILOSIM_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#define CHECK_MAIN(make_suite)                                         \
    int main(void) {                                                   \
        SRunner *sr = srunner_create(make_suite());                    \
        srunner_run_all(sr, CK_NORMAL);                                \
        int failed = srunner_ntests_failed(sr);                        \
        srunner_free(sr);                                              \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;                   \
    }

#endif
