/*
 * test_sweepfile.c -- the first line of sweep files (whole and shards),
 * the rows of each shard, K/N, and merging shards: the whole sweep's
 * bytes from shards in any order, and every refusal (another sweep,
 * another split, a shard missing, twice or incomplete, a whole file)
 * with nothing written.
 *
 * The shards are those of tests/data/sweep/tiny.json (12 points); the
 * tests run from the repository root and write under /tmp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/msg.h"
#include "sim/study/sweep.h"
#include "sim/study/sweepfile.h"
#include "check_main.h"

#define TINY "tests/data/sweep/tiny.json"

static char dir[64], err[2048];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/test_sweepfile_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* dir/name into buf. */
static const char *at(const char *name, char *buf, size_t len) {
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    for (int c; (c = fgetc(f)) != EOF;) fputc(c, m);
    fclose(m);
    fclose(f);
    return buf;
}

/* Sweeps tiny.json (with one more override, or none) into dir/name: the
 * whole (n 0) or shard k of n. */
static void sweep_to(const char *name, int k, int n, const char *set) {
    char path[128];
    const char *sets[] = {set};
    sweep_spec s = {.scenario = TINY,
                    .jobs = 2,
                    .stream = stdout,
                    .out = at(name, path, sizeof path),
                    .shard = k,
                    .nshards = n,
                    .sets = sets,
                    .nset = set ? 1 : 0};
    ck_assert_msg(sweep_run(&s, err, sizeof err) == 0, "%s", err);
}

/* Merges the parts (names in dir) into dir/merged.csv; returns the code. */
static int merge(const char *const *names, int n) {
    char paths[16][128], out[128];
    const char *parts[16];
    for (int i = 0; i < n; i++)
        parts[i] = at(names[i], paths[i], sizeof paths[i]);
    err[0] = 0;
    return sweepfile_merge(parts, n, at("merged.csv", out, sizeof out), err,
                           sizeof err);
}

/* merge refuses with a message starting with "dir/name:" (name NULL: no
 * file) and containing what; nothing is written. */
static void refused(const char *const *names, int n, const char *name,
                    const char *what) {
    char want[256], path[128];
    ck_assert_int_eq(merge(names, n), MSG_EINPUT);
    if (name) {
        snprintf(want, sizeof want, "%s:", at(name, path, sizeof path));
        ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
    }
    ck_assert_msg(strstr(err, what), "'%s' not in '%s'", what, err);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert(access(at("merged.csv", path, sizeof path), F_OK) != 0);
}

START_TEST(lines_round_trip) {
    char line[SWEEPFILE_LINE_MAX];
    sweepfile_id id = {.digest = 0x0123456789abcdefULL}, back;
    sweepfile_line(&id, line);
    ck_assert_uint_eq(id.len, strlen(SWEEPFILE_PREFIX) + 16);
    ck_assert(!strncmp(line,
                       "# dilosim sweep digest 0123456789abcdef "
                       "(dilosim ",
                       49));
    ck_assert(sweepfile_parse(line, &back));
    ck_assert(back.digest == id.digest && back.nshards == 0 &&
              back.len == id.len);
    id = (sweepfile_id){.digest = 42,
                        .shard = 2,
                        .nshards = 3,
                        .npoints = 10000};
    sweepfile_line(&id, line);
    ck_assert(!strncmp(line,
                       "# dilosim sweep digest 000000000000002a shard "
                       "2/3 of 10000 points (dilosim ",
                       75));
    ck_assert(sweepfile_parse(line, &back));
    ck_assert(back.digest == 42 && back.shard == 2 && back.nshards == 3 &&
              back.npoints == 10000 && back.len == id.len);
    /* Without the version, or cut there: the identity alone. */
    ck_assert(
        sweepfile_parse("# dilosim sweep digest 000000000000002a\n", &back));
    ck_assert(
        sweepfile_parse("# dilosim sweep digest 000000000000002a", &back));
    static const char *const bad[] = {
        "# dilosim sweep digest 000000000000002A\n",
        "# dilosim sweep digest 00000000000002a\n",
        "# dilosim sweep digest 000000000000002ab\n",
        "# dilosim sweep digest 000000000000002a shard 0/3 of 9 points\n",
        "# dilosim sweep digest 000000000000002a shard 4/3 of 9 points\n",
        "# dilosim sweep digest 000000000000002a shard 1/3 of x points\n",
        "# dilosim sweep digest 000000000000002a shard 1/3\n",
        "sweep digest 000000000000002a\n",
        "# dilosim 0.7.0 (abc)\n",
        "variant,steps\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(!sweepfile_parse(bad[i], &back), "%s", bad[i]);
    char what[64];
    sweepfile_describe(&id, what, sizeof what);
    ck_assert_str_eq(what, "shard 2/3");
    id.nshards = 0;
    sweepfile_describe(&id, what, sizeof what);
    ck_assert_str_eq(what, "the whole sweep");
}
END_TEST

START_TEST(rows_and_shard_specs) {
    ck_assert_int_eq(sweepfile_rows(12, 0, 0), 12);
    static const int want10[] = {4, 3, 3};
    for (int k = 1; k <= 3; k++) {
        ck_assert_int_eq(sweepfile_rows(12, k, 3), 4);
        ck_assert_int_eq(sweepfile_rows(10, k, 3), want10[k - 1]);
        ck_assert_int_eq(sweepfile_rows(2, k, 3), k <= 2);
    }
    int64_t total = 0;
    for (int k = 1; k <= 7; k++) total += sweepfile_rows(1000, k, 7);
    ck_assert_int_eq(total, 1000);
    int k, n;
    ck_assert_int_eq(sweepfile_parse_shard("2/3", &k, &n), 0);
    ck_assert(k == 2 && n == 3);
    ck_assert_int_eq(sweepfile_parse_shard("1/1", &k, &n), 0);
    ck_assert_int_eq(sweepfile_parse_shard("10000000/10000000", &k, &n), 0);
    static const char *const bad[] = {"0/3",        "4/3",  "1/0",  "01/3",
                                      "1/3x",       "",     "/3",   "1/",
                                      "-1/3",       "+1/3", " 1/3", "1 /3",
                                      "1/10000001", "3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(sweepfile_parse_shard(bad[i], &k, &n) == -1, "'%s'",
                      bad[i]);
}
END_TEST

/* Shards 1..3 merged in any order give the whole sweep's file, byte for
 * byte; so do 13 shards of 12 points (the last one empty). */
START_TEST(merge_gives_the_whole) {
    char path[128];
    sweep_to("whole.csv", 0, 0, NULL);
    char *whole = slurp(at("whole.csv", path, sizeof path));
    sweep_to("a.csv", 1, 3, NULL);
    sweep_to("b.csv", 2, 3, NULL);
    sweep_to("c.csv", 3, 3, NULL);
    const char *order[] = {"c.csv", "a.csv", "b.csv"};
    ck_assert_msg(merge(order, 3) == 0, "%s", err);
    char *merged = slurp(at("merged.csv", path, sizeof path));
    ck_assert_str_eq(merged, whole);
    free(merged);
    unlink(path);

    const char *many[13];
    char names[13][24];
    for (int k = 1; k <= 13; k++) {
        snprintf(names[k - 1], sizeof names[k - 1], "m%d.csv", k);
        sweep_to(names[k - 1], k, 13, NULL);
        many[k - 1] = names[k - 1];
    }
    ck_assert_msg(merge(many, 13) == 0, "%s", err);
    merged = slurp(at("merged.csv", path, sizeof path));
    ck_assert_str_eq(merged, whole);
    free(merged);
    free(whole);
}
END_TEST

START_TEST(merge_refusals) {
    char path[128];
    sweep_to("whole.csv", 0, 0, NULL);
    sweep_to("a.csv", 1, 3, NULL);
    sweep_to("b.csv", 2, 3, NULL);
    sweep_to("c.csv", 3, 3, NULL);
    sweep_to("other.csv", 2, 3, "steps=20");
    sweep_to("half.csv", 1, 2, NULL);

    const char *missing[] = {"a.csv", "c.csv"};
    refused(missing, 2, NULL,
            "shard 2/3 missing (2 of the 3 shards of "
            "sweep ");
    const char *twice[] = {"a.csv", "b.csv", "b.csv", "c.csv"};
    refused(twice, 4, "b.csv", "shard 2/3 again");
    const char *other[] = {"a.csv", "other.csv", "c.csv"};
    refused(other, 3, "other.csv", "a shard of another sweep (digest ");
    const char *split[] = {"a.csv", "b.csv", "half.csv"};
    refused(split, 3, "half.csv", "shard 1/2, but ");
    const char *whole[] = {"whole.csv"};
    refused(whole, 1, "whole.csv", "the whole sweep, not a shard");
    const char *none[] = {"nope.csv"};
    refused(none, 1, "nope.csv", "cannot open: No such file or directory");

    /* Incomplete: a row short, or its last line cut (as a killed sweep's
     * partial file); a row too many. */
    char *b = slurp(at("b.csv", path, sizeof path));
    FILE *f = fopen(at("cut.csv", path, sizeof path), "wb");
    fwrite(b, 1, strlen(b) - 1, f);
    fclose(f);
    const char *cut[] = {"a.csv", "cut.csv", "c.csv"};
    refused(cut, 3, "cut.csv",
            "incomplete: shard 2/3 has 3 of its 4 rows "
            "and a cut line (finish it with sweep --shard 2/3 --resume)");
    size_t n = strlen(b) - 1;
    while (b[n - 1] != '\n') n--; /* the start of the last row */
    f = fopen(at("short.csv", path, sizeof path), "wb");
    fwrite(b, 1, n, f);
    fclose(f);
    const char *shrt[] = {"a.csv", "short.csv", "c.csv"};
    refused(shrt, 3, "short.csv",
            "incomplete: shard 2/3 has 3 of its 4 "
            "rows (finish");
    f = fopen(at("long.csv", path, sizeof path), "wb");
    fprintf(f, "%sx\n", b);
    fclose(f);
    const char *lng[] = {"a.csv", "long.csv", "c.csv"};
    refused(lng, 3, "long.csv", ":7: more rows than shard 2/3 holds (4)");
    f = fopen(at("bare.csv", path, sizeof path), "wb");
    fputs(strchr(b, '\n') + 1, f); /* no digest line */
    fclose(f);
    const char *bare[] = {"a.csv", "bare.csv", "c.csv"};
    refused(bare, 3, "bare.csv", "no sweep digest (expected a first line ");
    free(b);
    ck_assert_int_eq(sweepfile_merge(NULL, 0, NULL, err, sizeof err),
                     MSG_EINPUT);
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("sweepfile");
    TCase *tc = tcase_create("sweepfile");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, lines_round_trip);
    tcase_add_test(tc, rows_and_shard_specs);
    tcase_add_test(tc, merge_gives_the_whole);
    tcase_add_test(tc, merge_refusals);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
