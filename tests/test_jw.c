/*
 * test_jw.c -- the JSON writer: the string escaper (RFC 8259: quotes,
 * backslashes, every control character, UTF-8 passed through), numbers
 * (shortest exact, inf as a string, NaN as null), and the layouts the
 * outputs use (one member a line, inline, wrapped, nested, raw values).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jw.h"
#include "check_main.h"

static char *text;
static size_t len;
static FILE *f;
static jw w;

static void begin(void) {
    f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    jw_init(&w, f);
}

/* Ends the stream, compares what was written with want, frees it. */
static void is(const char *want) {
    fclose(f);
    ck_assert_str_eq(text, want);
    free(text);
    text = NULL;
}

START_TEST(test_escape) {
    begin();
    jw_str(&w, NULL, "a\"b\\c");
    is("\"a\\\"b\\\\c\"");
    begin();
    jw_str(&w, NULL, "\n\t\r\x01\x1f x\x7f");
    is("\"\\u000a\\u0009\\u000d\\u0001\\u001f x\x7f\"");
    begin();
    jw_str(&w, NULL, "caf\xc3\xa9");
    is("\"caf\xc3\xa9\"");
    begin();
    jw_str(&w, NULL, "");
    is("\"\"");
}
END_TEST

START_TEST(test_numbers) {
    begin();
    jw_array(&w, NULL);
    jw_num(&w, NULL, 0.1);
    jw_num(&w, NULL, 1000);
    jw_num(&w, NULL, 1e20);
    jw_num(&w, NULL, INFINITY);
    jw_num(&w, NULL, -INFINITY);
    jw_num(&w, NULL, NAN);
    jw_int(&w, NULL, -3);
    jw_int(&w, NULL, 0);
    jw_int(&w, NULL, LLONG_MIN);
    jw_int(&w, NULL, LLONG_MAX);
    jw_u64(&w, NULL, 0);
    jw_u64(&w, NULL, UINT64_MAX);
    jw_bool(&w, NULL, 2);
    jw_bool(&w, NULL, 0);
    jw_null(&w, NULL);
    jw_end(&w);
    is("[0.1, 1000, 1e+20, \"inf\", \"-inf\", null, -3, 0, "
       "-9223372036854775808, 9223372036854775807, 0, "
       "18446744073709551615, true, false, null]\n");
}
END_TEST

START_TEST(test_lines) {
    begin();
    jw_lines(&w, NULL, '{', 2, 0);
    jw_str(&w, "a", "x");
    jw_array(&w, "b");
    jw_int(&w, NULL, 1);
    jw_int(&w, NULL, 2);
    jw_end(&w);
    jw_lines(&w, "c", '[', 4, 2);
    jw_object(&w, NULL);
    jw_int(&w, "d", 1);
    jw_raw(&w, "e", "1.5");
    jw_end(&w);
    jw_object(&w, NULL);
    jw_end(&w);
    jw_end(&w);
    jw_end(&w);
    is("{\n  \"a\": \"x\",\n  \"b\": [1, 2],\n  \"c\": [\n    {\"d\": 1, "
       "\"e\": 1.5},\n    {}\n  ]\n}\n");
}
END_TEST

START_TEST(test_wrap_and_nested) {
    begin();
    jw_object(&w, NULL);
    jw_int(&w, "a", 1);
    jw_wrap(&w, 3);
    jw_int(&w, "b", 2);
    jw_int(&w, "c", 3);
    jw_object(&w, "d");
    jw_int(&w, "x", 0);
    jw_end(&w);
    jw_lines(&w, "e", '[', 0, 0);
    jw_end(&w);
    jw_end(&w);
    is("{\"a\": 1,\n   \"b\": 2, \"c\": 3, \"d\": {\"x\": 0}, \"e\": [\n]}\n");
}
END_TEST

/* A document far longer than the writer's buffer arrives whole, in order,
 * and only once the document ends. */
START_TEST(test_long_document) {
    begin();
    jw_lines(&w, NULL, '[', 0, 0);
    for (int i = 0; i < 5000; i++) jw_int(&w, NULL, i);
    jw_end(&w);
    char *want = malloc(64 * 5000), *p = want;
    p += sprintf(p, "[");
    for (int i = 0; i < 5000; i++) p += sprintf(p, "%s\n%d", i ? "," : "", i);
    sprintf(p, "\n]\n");
    is(want);
    free(want);
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("jw");
    TCase *tc = tcase_create("jw");
    tcase_add_test(tc, test_escape);
    tcase_add_test(tc, test_long_document);
    tcase_add_test(tc, test_numbers);
    tcase_add_test(tc, test_lines);
    tcase_add_test(tc, test_wrap_and_nested);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
