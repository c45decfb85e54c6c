/*
 * trace_dir.h -- a temporary folder for each test of a suite that reads
 * trace files (a Check fixture: trace_dir_setup, trace_dir_teardown),
 * and the files written into it.  A suite defines TRACE_DIR_TEMPLATE
 * ("/tmp/dilosim-NAME-XXXXXX") before including it.
 */
#ifndef DILOSIM_TRACE_DIR_H
#define DILOSIM_TRACE_DIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

static char dir[] = TRACE_DIR_TEMPLATE;

/* Writes text to dir/name; returns the path (static). */
static const char *trace_file(const char *name, const char *text) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void trace_dir_setup(void) {
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void trace_dir_teardown(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    strcpy(dir, TRACE_DIR_TEMPLATE);
}

#endif
