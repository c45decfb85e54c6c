/*
 * jw.c -- the one JSON writer: separators, indentation, numbers through
 * msg_number, strings through the one escaper.
 */
#include "sim/base/jw.h"

#include <inttypes.h>
#include <math.h>

#include "sim/base/msg.h"

void jw_init(jw *w, FILE *f) {
    w->f = f;
    w->depth = 0;
    w->wrap = -1;
}

void jw_escape(FILE *f, const char *s) {
    fputc('"', f);
    for (;;) {
        /* a run of bytes that need no escape, in one write (a trace has
         * millions of strings) */
        const char *run = s;
        while ((unsigned char)*s >= 0x20 && *s != '"' && *s != '\\') s++;
        if (s > run) fwrite(run, 1, (size_t)(s - run), f);
        if (!*s) break;
        unsigned char ch = (unsigned char)*s++;
        if (ch == '"' || ch == '\\') {
            fputc('\\', f);
            fputc(ch, f);
        } else {
            fprintf(f, "\\u%04x", ch);
        }
    }
    fputc('"', f);
}

static void spaces(FILE *f, int n) {
    static const char blank[] = "                ";
    for (; n > 0; n -= 16) fwrite(blank, 1, n < 16 ? (size_t)n : 16, f);
}

/* What comes before the next member or element of the innermost
 * container: the comma after the one before, and the line break or the
 * blank of the container's layout (or of a pending jw_wrap). */
static void separate(jw *w) {
    if (w->depth == 0) return; /* the document itself */
    jw_level *l = &w->lv[w->depth - 1];
    if (l->n++) fputc(',', w->f);
    if (w->wrap >= 0) {
        fputc('\n', w->f);
        spaces(w->f, w->wrap);
        w->wrap = -1;
    } else if (l->indent >= 0) {
        fputc('\n', w->f);
        spaces(w->f, l->indent);
    } else if (l->n > 1) {
        fputc(' ', w->f);
    }
}

/* The separator, and the key of an object's member. */
static void start(jw *w, const char *key) {
    separate(w);
    if (key) {
        jw_escape(w->f, key);
        fputs(": ", w->f);
    }
}

static void open_container(jw *w, const char *key, char bracket, int indent,
                 int close_indent) {
    start(w, key);
    fputc(bracket, w->f);
    if (w->depth == JW_MAX_DEPTH) return; /* beyond the contract */
    w->lv[w->depth++] = (jw_level){bracket == '{' ? '}' : ']', indent,
                                   close_indent, 0};
}

void jw_object(jw *w, const char *key) { open_container(w, key, '{', -1, 0); }

void jw_array(jw *w, const char *key) { open_container(w, key, '[', -1, 0); }

void jw_lines(jw *w, const char *key, char bracket, int indent,
              int close_indent) {
    open_container(w, key, bracket, indent, close_indent);
}

void jw_end(jw *w) {
    if (w->depth == 0) return;
    const jw_level *l = &w->lv[--w->depth];
    w->wrap = -1;
    if (l->indent >= 0) {
        fputc('\n', w->f);
        spaces(w->f, l->close_indent);
    }
    fputc(l->close, w->f);
    if (w->depth == 0) fputc('\n', w->f);
}

void jw_wrap(jw *w, int indent) { w->wrap = indent; }

void jw_num(jw *w, const char *key, double x) {
    char buf[MSG_NUM_MAX];
    start(w, key);
    if (isinf(x)) fputs(x > 0 ? "\"inf\"" : "\"-inf\"", w->f);
    else if (isnan(x)) fputs("null", w->f);
    else fputs(msg_number(x, buf), w->f);
}

void jw_int(jw *w, const char *key, long long x) {
    start(w, key);
    fprintf(w->f, "%lld", x);
}

void jw_u64(jw *w, const char *key, uint64_t x) {
    start(w, key);
    fprintf(w->f, "%" PRIu64, x);
}

void jw_bool(jw *w, const char *key, int x) {
    start(w, key);
    fputs(x ? "true" : "false", w->f);
}

void jw_null(jw *w, const char *key) {
    start(w, key);
    fputs("null", w->f);
}

void jw_str(jw *w, const char *key, const char *s) {
    start(w, key);
    jw_escape(w->f, s);
}

void jw_raw(jw *w, const char *key, const char *json) {
    start(w, key);
    fputs(json, w->f);
}

FILE *jw_slot(jw *w, const char *key) {
    start(w, key);
    return w->f;
}
