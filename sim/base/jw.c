/*
 * jw.c -- the one JSON writer: separators, indentation, numbers through
 * msg_number, strings through the one escaper.
 */
#include "sim/base/jw.h"

#include <math.h>
#include <string.h>

#include "sim/base/msg.h"

/* Bytes into the writer's buffer, which goes to the stream when it is
 * full and when the document ends: a trace writes millions of short
 * pieces, and one fwrite per buffer costs a fraction of one stdio call
 * per piece. */
static void flush(jw *w) {
    if (w->len) fwrite(w->buf, 1, w->len, w->f);
    w->len = 0;
}

static void put(jw *w, const char *s, size_t n) {
    if (w->len + n > sizeof w->buf) {
        flush(w);
        if (n > sizeof w->buf) {
            fwrite(s, 1, n, w->f);
            return;
        }
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void putch(jw *w, char c) {
    if (w->len == sizeof w->buf) flush(w);
    w->buf[w->len++] = c;
}

static void puts_(jw *w, const char *s) {
    put(w, s, strlen(s));
}

void jw_init(jw *w, FILE *f) {
    w->f = f;
    w->depth = 0;
    w->wrap = -1;
    w->len = 0;
}

/* s as a JSON string, quoted (RFC 8259): '"' and '\' preceded by a
 * backslash, every control character below 0x20 as \u00XX (lowercase
 * hex), every other byte as it is (UTF-8 passes through).  The one JSON
 * string escaper. */
static void escape(jw *w, const char *s) {
    putch(w, '"');
    for (;;) {
        /* a run of bytes that need no escape, copied at once */
        const char *run = s;
        while ((unsigned char)*s >= 0x20 && *s != '"' && *s != '\\') s++;
        if (s > run) put(w, run, (size_t)(s - run));
        if (!*s) break;
        unsigned char ch = (unsigned char)*s++;
        if (ch == '"' || ch == '\\') {
            putch(w, '\\');
            putch(w, (char)ch);
        } else {
            char u[8];
            snprintf(u, sizeof u, "\\u%04x", ch);
            puts_(w, u);
        }
    }
    putch(w, '"');
}

static void spaces(jw *w, int n) {
    static const char blank[] = "                ";
    for (; n > 0; n -= 16) put(w, blank, n < 16 ? (size_t)n : 16);
}

/* What comes before the next member or element of the innermost
 * container: the comma after the one before, and the line break or the
 * blank of the container's layout (or of a pending jw_wrap). */
static void separate(jw *w) {
    if (w->depth == 0) return; /* the document itself */
    jw_level *l = &w->lv[w->depth - 1];
    if (l->n++) putch(w, ',');
    if (w->wrap >= 0) {
        putch(w, '\n');
        spaces(w, w->wrap);
        w->wrap = -1;
    } else if (l->indent >= 0) {
        putch(w, '\n');
        spaces(w, l->indent);
    } else if (l->n > 1) {
        putch(w, ' ');
    }
}

/* The separator, and the key of an object's member. */
static void start(jw *w, const char *key) {
    separate(w);
    if (key) {
        escape(w, key);
        put(w, ": ", 2);
    }
}

/* After a value: one written as the document itself (depth 0) ends the
 * document, so it reaches the stream. */
static void done(jw *w) {
    if (w->depth == 0) flush(w);
}

static void open_container(jw *w, const char *key, char bracket, int indent,
                           int close_indent) {
    start(w, key);
    putch(w, bracket);
    if (w->depth == JW_MAX_DEPTH) return; /* beyond the contract */
    w->lv[w->depth++] =
        (jw_level){bracket == '{' ? '}' : ']', indent, close_indent, 0};
}

void jw_object(jw *w, const char *key) {
    open_container(w, key, '{', -1, 0);
}

void jw_array(jw *w, const char *key) {
    open_container(w, key, '[', -1, 0);
}

void jw_lines(jw *w, const char *key, char bracket, int indent,
              int close_indent) {
    open_container(w, key, bracket, indent, close_indent);
}

void jw_end(jw *w) {
    if (w->depth == 0) return;
    const jw_level *l = &w->lv[--w->depth];
    w->wrap = -1;
    if (l->indent >= 0) {
        putch(w, '\n');
        spaces(w, l->close_indent);
    }
    putch(w, l->close);
    if (w->depth == 0) {
        putch(w, '\n');
        flush(w);
    }
}

void jw_wrap(jw *w, int indent) {
    w->wrap = indent;
}

void jw_num(jw *w, const char *key, double x) {
    char buf[MSG_NUM_MAX];
    start(w, key);
    if (isinf(x)) puts_(w, x > 0 ? "\"inf\"" : "\"-inf\"");
    else if (isnan(x)) puts_(w, "null");
    else puts_(w, msg_number(x, buf));
    done(w);
}

/* The decimal digits of x, written backwards from the end of buf (at
 * least 20 bytes): where they start.  A trace writes millions of these,
 * and one division per digit costs a fraction of a printf. */
static char *digits(uint64_t x, char *end) {
    do *--end = (char)('0' + x % 10);
    while (x /= 10);
    return end;
}

/* x (with a minus sign for neg) as member key. */
static void integer(jw *w, const char *key, uint64_t x, int neg) {
    start(w, key);
    char buf[24], *end = buf + sizeof buf, *p = digits(x, end);
    if (neg) *--p = '-';
    put(w, p, (size_t)(end - p));
    done(w);
}

void jw_int(jw *w, const char *key, long long x) {
    /* -x of the most negative value overflows: negate in unsigned */
    integer(w, key, x < 0 ? 0 - (uint64_t)x : (uint64_t)x, x < 0);
}

void jw_u64(jw *w, const char *key, uint64_t x) {
    integer(w, key, x, 0);
}

void jw_bool(jw *w, const char *key, int x) {
    start(w, key);
    puts_(w, x ? "true" : "false");
    done(w);
}

void jw_null(jw *w, const char *key) {
    start(w, key);
    puts_(w, "null");
    done(w);
}

void jw_str(jw *w, const char *key, const char *s) {
    start(w, key);
    escape(w, s);
    done(w);
}

void jw_raw(jw *w, const char *key, const char *json) {
    start(w, key);
    puts_(w, json);
    done(w);
}
