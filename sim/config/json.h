/*
 * json.h -- the strict JSON reader behind every input file: a scanner
 * that checks RFC 8259 with exact positions, the cJSON tree it vouches
 * for, and the position of every node in the text.
 *
 * cJSON alone would not do: it is lenient ("012", "1.", raw newlines in
 * strings, invalid UTF-8) and puts some syntax errors at the end of the
 * input (a trailing comma).  json_parse scans first, then lets cJSON build
 * the tree (whatever the scanner accepts cJSON accepts with the same
 * structure), then walks tree and offsets in lockstep so that every node
 * knows where its key and value are.
 *
 * The scanner also refuses what RFC 8259 allows but a C string cannot
 * carry: \u0000 in a string (it would cut the key or value short).
 *
 * cJSON keeps its last parse error in a global; every cJSON parse of the
 * program goes through json_parse, which serialises them behind one lock,
 * so parsing is safe from several threads at once.
 */
#ifndef DILOSIM_JSON_H
#define DILOSIM_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define JSON_NO_POS ((size_t)-1)
#define JSON_MAX_DEPTH 100       /* nesting levels accepted */
#define JSON_MAX_NUMBER_LEN 63   /* longest number token accepted */
#define JSON_MAX_NODES (1 << 21) /* keys and values in one document */

/* Where a node is in the text: offsets of its key (JSON_NO_POS for an
 * array item or the root) and of its value's first byte. */
typedef struct {
    const cJSON *node;
    size_t key, val;
} json_pos;

typedef struct {
    cJSON *root;   /* the tree, owned by the doc until taken */
    json_pos *pos; /* every node, in document order */
    size_t npos;
} json_doc;

/* Parses text (len bytes, NUL-terminated) strictly into doc.  Returns 0;
 * MSG_EINPUT with the offset of the first syntax error in *err_at and its
 * description ("unexpected ','; expected a value") in msg; MSG_ENOMEM
 * (msg "out of memory").  A NUL byte before len is a syntax error.  On
 * error doc is empty.  Safe to call from several threads at once. */
int json_parse(const char *text, size_t len, json_doc *doc, size_t *err_at,
               char *msg, size_t msglen);

/* Frees the tree (unless taken: set doc->root = NULL first) and the
 * positions; leaves doc empty. */
void json_doc_free(json_doc *doc);

/* The bytes of a UTF-8 byte order mark at the start of text (len bytes):
 * 3, or 0 when there is none.  Every input file may start with one; its
 * reader skips them before json_parse (offsets then count from after
 * it). */
size_t json_bom(const char *text, size_t len);

/* Whether text is one strict JSON value (nothing is kept). */
int json_valid(const char *text);

/* 1-based line and column of offset off in text; a column counts code
 * points (a tab is one). */
void json_line_col(const char *text, size_t off, int *line, int *col);

/* The exact value of the number literal at lit (a token the scanner
 * accepted), as an integer: 0 with *out when it is an integer of
 * magnitude at most 2^53 (so *out is exact); 1 when it is not an integer
 * (1.5, 1.0000000000000001); 2 when its magnitude exceeds 2^53. */
int json_literal_integer(const char *lit, double *out);

/* Whether the number literal at lit has a nonzero digit (so a value of 0
 * read from it is an underflow). */
int json_literal_nonzero(const char *lit);

/* The first member of object obj whose key an earlier member already has:
 * 1 with *dup and *first (the earlier one), 0 when the keys are distinct,
 * MSG_ENOMEM.  Linear in the number of members. */
int json_first_duplicate(const cJSON *obj, const cJSON **dup,
                         const cJSON **first);

/* A map from node addresses to indices (open addressing), for position
 * tables: put replaces the index of a node already there. */
typedef struct {
    const void **key;
    size_t *val;
    size_t n, cap;
} json_map;

int json_map_put(json_map *m, const void *key, size_t val); /* 0, ENOMEM */
int json_map_get(const json_map *m, const void *key, size_t *val); /* 1/0 */
void json_map_free(json_map *m);

/* A map from member keys to members of one object, for merges: built
 * from obj's members (the last of equal keys wins), updated with put. */
typedef struct {
    cJSON **slot;
    size_t n, cap;
} json_keys;

int json_keys_build(json_keys *k, const cJSON *obj);       /* 0, ENOMEM */
cJSON *json_keys_get(const json_keys *k, const char *key); /* or NULL */
int json_keys_put(json_keys *k, cJSON *member);            /* 0, ENOMEM */
void json_keys_free(json_keys *k);

#endif
