/*
 * jw.h -- the one JSON writer of every output (run results, traces, the
 * plan's --json, the training summary).
 *
 * A jw streams one JSON document to a FILE: containers are opened and
 * closed, members and elements are written in order, and the writer puts
 * the separators and the whitespace between them.  A container is either
 * inline ({"a": 1, "b": 2}) or one member per line at a given indent,
 * its closing bracket on a line of its own at another indent:
 *
 *     {
 *       "a": 1,
 *       "b": [1, 2]
 *     }
 *
 * jw_wrap breaks the line before the next member of an inline container
 * (the plan's objects, wrapped at fixed columns).  Every value function
 * takes a key: the member's name inside an object, NULL for an element of
 * an array or the document itself.
 *
 * Numbers go through msg_number (the shortest decimal that reads back as
 * the same double); infinities are written as the strings "inf" and
 * "-inf" (as scenarios spell them) and NaN, a value that does not exist,
 * as null.  Strings are quoted as RFC 8259 says: '"' and '\' preceded by
 * a backslash, every control character below 0x20 as \u00XX (lowercase
 * hex), every other byte as it is (UTF-8 passes through); this is the
 * one JSON string escaper.  The writer never fails: write
 * errors stay in the stream (ferror), for the caller's commit to see.
 * It buffers: its bytes reach the stream when its buffer fills and when
 * the document ends (the outermost jw_end, or a value written as the
 * document itself), so nothing else may write to the stream while a
 * document is open.
 */
#ifndef DILOSIM_JW_H
#define DILOSIM_JW_H

#include <stdint.h>
#include <stdio.h>

/* Containers open at once, at most (the outputs nest five deep). */
#define JW_MAX_DEPTH 16

typedef struct {
    char close; /* '}' or ']' */
    int indent; /* members on their own lines at this indent; -1: inline */
    int close_indent; /* the closing bracket's line, for indent >= 0 */
    int n;            /* members written so far */
} jw_level;

typedef struct {
    FILE *f;
    int depth; /* open containers */
    int wrap;  /* >= 0: the next separator breaks the line here */
    jw_level lv[JW_MAX_DEPTH];
    size_t len; /* bytes in buf, not yet written to f */
    char buf[4096];
} jw;

/* Starts a document on f. */
void jw_init(jw *w, FILE *f);

/* Opens an inline object or array as member key (NULL: an element, or
 * the document). */
void jw_object(jw *w, const char *key);
void jw_array(jw *w, const char *key);

/* Opens an object ('{') or array ('[') whose members each start a line
 * at `indent` spaces, the closing bracket on a line at `close_indent`. */
void jw_lines(jw *w, const char *key, char bracket, int indent,
              int close_indent);

/* Closes the innermost open container; closing the document's outermost
 * one ends the document with a newline. */
void jw_end(jw *w);

/* The separator before the next member of the innermost (inline)
 * container breaks the line and indents the next member by `indent`
 * spaces (",\n     " instead of ", "). */
void jw_wrap(jw *w, int indent);

/* Values, as member key (NULL: an element of an array). */
void jw_num(jw *w, const char *key, double x); /* see above: inf, nan */
void jw_int(jw *w, const char *key, long long x);
void jw_u64(jw *w, const char *key, uint64_t x);
void jw_bool(jw *w, const char *key, int x); /* true for x != 0 */
void jw_null(jw *w, const char *key);
void jw_str(jw *w, const char *key, const char *s);

/* A value already written as JSON text (an exact decimal of seconds, a
 * trace's microseconds): put as it is. */
void jw_raw(jw *w, const char *key, const char *json);

#endif
