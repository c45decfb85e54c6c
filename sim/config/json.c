/*
 * json.c -- the strict JSON reader (see json.h): scanner, tree, positions.
 *
 * The scanner records 2*offset + 1 for a key and 2*offset for a value, in
 * document order.  What it accepts, cJSON accepts with the same structure:
 * it is stricter everywhere (whitespace, numbers, escapes, surrogates,
 * UTF-8, number length, depth), so the walk that pairs tree nodes with
 * offsets never falls out of step.
 */
#include "sim/config/json.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"

#define EXACT_INT 9007199254740992.0 /* 2^53 */

/* ---------------------------------------------------------------------
 * The scanner
 */
typedef struct {
    const char *t;
    size_t i;
    int depth;
    int keep; /* record offsets (else: syntax check only) */
    size_t *offs, n, cap;
    int oom;
    size_t err_at; /* offset of the first syntax error */
    char msg[128]; /* its description */
} scanner;

/* Describes the character at p for "unexpected ..." messages. */
static const char *fmt_char(const char *p, char buf[16]) {
    unsigned char ch = (unsigned char)*p;
    if (ch == 0) snprintf(buf, 16, "end of input");
    else if (ch >= 0x20 && ch < 0x7f) snprintf(buf, 16, "'%c'", ch);
    else snprintf(buf, 16, "byte 0x%02x", ch);
    return buf;
}

void json_line_col(const char *text, size_t off, int *line, int *col) {
    *line = 1, *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\n') ++*line, *col = 1;
        else if ((ch & 0xc0) != 0x80) ++*col; /* not a continuation byte */
    }
}

static int syn_err(scanner *s, size_t at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
    s->err_at = at;
    return -1;
}

static int unexpected(scanner *s, const char *expected) {
    char b[16];
    return syn_err(s, s->i, "unexpected %s; expected %s",
                   fmt_char(s->t + s->i, b), expected);
}

static int note(scanner *s, size_t off, int is_key) {
    if (!s->keep) return 0;
    if (s->n == s->cap) {
        if (s->cap >= (size_t)JSON_MAX_NODES)
            return syn_err(s, off, "more than %d keys and values",
                           JSON_MAX_NODES);
        size_t cap = s->cap ? 2 * s->cap : 64;
        size_t *o = realloc(s->offs, cap * sizeof *o);
        if (!o) {
            s->oom = 1;
            return syn_err(s, off, "out of memory");
        }
        s->offs = o, s->cap = cap;
    }
    s->offs[s->n++] = 2 * off + (size_t)is_key;
    return 0;
}

static void skip_ws(scanner *s) {
    while (s->t[s->i] == ' ' || s->t[s->i] == '\t' || s->t[s->i] == '\n' ||
           s->t[s->i] == '\r')
        s->i++;
}

static int is_digit(char c) {
    return c >= '0' && c <= '9';
}
static int is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
           c == '_';
}

static int hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        int d = is_digit(c)              ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                         : -1;
        if (d < 0) return -1;
        v = 16 * v + (unsigned)d;
    }
    *out = v;
    return 0;
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no
 * overlongs, no surrogates, nothing above U+10FFFF), or 0. */
static int utf8_len(const unsigned char *p) {
    unsigned char c = p[0];
    int n;
    unsigned char lo = 0x80, hi = 0xbf; /* bounds of the second byte */
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong below U+0800 */
        if (c == 0xed) hi = 0x9f; /* U+D800..DFFF */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90; /* overlong below U+10000 */
        if (c == 0xf4) hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0; /* 80..C1, F5..FF */
    }
    if (p[1] < lo || p[1] > hi) return 0;
    for (int k = 2; k < n; k++)
        if ((p[k] & 0xc0) != 0x80) return 0;
    return n;
}

static int scan_string(scanner *s) {
    size_t start = s->i++;
    for (;;) {
        unsigned char c = (unsigned char)s->t[s->i];
        if (c == '"') break;
        if (c == 0) return syn_err(s, start, "unterminated string");
        if (c < 0x20)
            return syn_err(s, s->i,
                           "raw control character 0x%02x in "
                           "string; expected an escape such as \\n",
                           c);
        if (c >= 0x80) {
            int n = utf8_len((const unsigned char *)s->t + s->i);
            if (!n)
                return syn_err(s, s->i,
                               "invalid UTF-8 at byte 0x%02x in "
                               "string; expected well-formed UTF-8",
                               c);
            s->i += (size_t)n;
            continue;
        }
        if (c != '\\') {
            s->i++;
            continue;
        }
        size_t esc = s->i;
        c = (unsigned char)s->t[++s->i];
        if (c && strchr("\"\\/bfnrt", c)) {
            s->i++;
            continue;
        }
        unsigned u, lo;
        if (c != 'u' || hex4(s->t + s->i + 1, &u))
            return syn_err(s, esc,
                           "invalid escape; expected one of \\\" "
                           "\\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
        s->i += 5;
        if (u == 0)
            return syn_err(s, esc,
                           "\\u0000 in string; expected no NUL "
                           "character");
        /* cJSON refuses unpaired UTF-16 surrogates: so do we. */
        if (u >= 0xdc00 && u <= 0xdfff)
            return syn_err(s, esc, "unpaired UTF-16 surrogate in \\u escape");
        if (u >= 0xd800 && u <= 0xdbff) {
            if (s->t[s->i] != '\\' || s->t[s->i + 1] != 'u' ||
                hex4(s->t + s->i + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
                return syn_err(s, esc,
                               "unpaired UTF-16 surrogate in \\u escape");
            s->i += 6;
        }
    }
    s->i++;
    return 0;
}

static int scan_number(scanner *s) {
    const char *t = s->t;
    size_t st = s->i, i = s->i;
    int ok = 1;
    if (t[i] == '-') i++;
    if (t[i] == '0') i++;
    else if (is_digit(t[i]))
        while (is_digit(t[i])) i++;
    else ok = 0;
    if (ok && t[i] == '.') {
        if (!is_digit(t[++i])) ok = 0;
        while (is_digit(t[i])) i++;
    }
    if (ok && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (t[i] == '+' || t[i] == '-') i++;
        if (!is_digit(t[i])) ok = 0;
        while (is_digit(t[i])) i++;
    }
    /* "012", "1.2.3", "1x": the token must end here. */
    if (is_digit(t[i]) || is_word(t[i]) || t[i] == '.' || t[i] == '+' ||
        t[i] == '-')
        ok = 0;
    if (!ok) return syn_err(s, st, "invalid number");
    if (i - st > JSON_MAX_NUMBER_LEN)
        return syn_err(s, st, "number longer than %d characters",
                       JSON_MAX_NUMBER_LEN);
    s->i = i;
    return 0;
}

/* The byte after a literal is looked at only once the literal matched:
 * the text may end right after its first letters. */
static int scan_literal(scanner *s) {
    static const char *const words[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(words[k]);
        if (strncmp(s->t + s->i, words[k], n) == 0 &&
            !is_word(s->t[s->i + n])) {
            s->i += n;
            return 0;
        }
    }
    return syn_err(s, s->i, "invalid literal; expected true, false or null");
}

static int scan_value(scanner *s);

static int scan_container(scanner *s, char close) {
    int object = close == '}';
    if (++s->depth > JSON_MAX_DEPTH)
        return syn_err(s, s->i, "nesting deeper than %d levels",
                       JSON_MAX_DEPTH);
    s->i++;
    skip_ws(s);
    if (s->t[s->i] == close) {
        s->i++, s->depth--;
        return 0;
    }
    for (int first = 1;; first = 0) {
        skip_ws(s);
        if (object) {
            if (s->t[s->i] != '"')
                return unexpected(s, first ? "a string key or '}'"
                                           : "a string key after ','");
            if (note(s, s->i, 1) || scan_string(s)) return -1;
            skip_ws(s);
            if (s->t[s->i] != ':') return unexpected(s, "':'");
            s->i++;
        }
        if (scan_value(s)) return -1;
        skip_ws(s);
        if (s->t[s->i] == close) break;
        if (s->t[s->i] != ',')
            return unexpected(s, object ? "',' or '}'" : "',' or ']'");
        s->i++;
    }
    s->i++, s->depth--;
    return 0;
}

static int scan_value(scanner *s) {
    skip_ws(s);
    char c = s->t[s->i];
    if (c == '{' || c == '[' || c == '"' || c == '-' || is_digit(c) ||
        c == 't' || c == 'f' || c == 'n')
        if (note(s, s->i, 0)) return -1;
    switch (c) {
    case '{': return scan_container(s, '}');
    case '[': return scan_container(s, ']');
    case '"': return scan_string(s);
    case 't':
    case 'f':
    case 'n': return scan_literal(s);
    default:
        if (c == '-' || is_digit(c)) return scan_number(s);
        return unexpected(s, "a value");
    }
}

/* Scans a whole document: one value, then only whitespace. */
static int scan_document(scanner *s) {
    skip_ws(s);
    if (s->t[s->i] == 0)
        return syn_err(s, s->i, "empty input; expected a JSON object");
    if (scan_value(s)) return -1;
    skip_ws(s);
    if (s->t[s->i] != 0) {
        char b[16];
        return syn_err(s, s->i,
                       "unexpected %s after the document; "
                       "expected end of input",
                       fmt_char(s->t + s->i, b));
    }
    return 0;
}

size_t json_bom(const char *text, size_t len) {
    return len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

int json_valid(const char *text) {
    scanner s = {.t = text, .keep = 0};
    return scan_document(&s) == 0;
}

/* ---------------------------------------------------------------------
 * The tree and its positions
 */

/* cJSON's parse error is a global: one parse at a time. */
static pthread_mutex_t parse_lock = PTHREAD_MUTEX_INITIALIZER;

/* Files node (and its subtree) with the scanner's offsets: 0, 1 when out
 * of step (a bug), -1 out of memory. */
static int locate(json_doc *d, const cJSON *node, size_t key,
                  const size_t *offs, size_t n, size_t *k) {
    if (*k >= n || offs[*k] % 2) return 1;
    d->pos[d->npos++] = (json_pos){node, key, offs[(*k)++] / 2};
    int object = cJSON_IsObject(node);
    if (!object && !cJSON_IsArray(node)) return 0;
    for (const cJSON *ch = node->child; ch; ch = ch->next) {
        size_t ko = JSON_NO_POS;
        if (object) {
            if (*k >= n || offs[*k] % 2 == 0) return 1;
            ko = offs[(*k)++] / 2;
        }
        if (d->npos == n) return 1;
        int r = locate(d, ch, ko, offs, n, k);
        if (r) return r;
    }
    return 0;
}

int json_parse(const char *text, size_t len, json_doc *doc, size_t *err_at,
               char *msg, size_t msglen) {
    memset(doc, 0, sizeof *doc);
    *err_at = 0;
    size_t nul = strlen(text);
    if (nul != len) {
        *err_at = nul;
        return msg_set(msg, msglen, MSG_EINPUT, "NUL byte in input");
    }
    scanner sc = {.t = text, .keep = 1};
    if (scan_document(&sc)) {
        free(sc.offs);
        *err_at = sc.err_at;
        return msg_set(msg, msglen, sc.oom ? MSG_ENOMEM : MSG_EINPUT, "%s",
                       sc.msg);
    }
    pthread_mutex_lock(&parse_lock);
    cJSON *root = cJSON_ParseWithOpts(text, NULL, 1);
    pthread_mutex_unlock(&parse_lock);
    /* cJSON fails only out of memory, as the scanner is stricter. */
    int rc = root ? 0 : MSG_ENOMEM;
    doc->pos = rc ? NULL : malloc((sc.n ? sc.n : 1) * sizeof *doc->pos);
    if (!rc && !doc->pos) rc = MSG_ENOMEM;
    size_t k = 0;
    if (!rc) {
        doc->root = root;
        int r = locate(doc, root, JSON_NO_POS, sc.offs, sc.n, &k);
        if (r < 0) rc = MSG_ENOMEM;
        else if (r > 0 || k != sc.n)
            rc = msg_set(msg, msglen, MSG_EFAIL,
                         "internal error: positions out of step");
    }
    free(sc.offs);
    if (rc == MSG_ENOMEM) msg_set(msg, msglen, rc, "out of memory");
    if (rc) {
        if (!doc->root) cJSON_Delete(root);
        json_doc_free(doc);
    }
    return rc;
}

void json_doc_free(json_doc *doc) {
    cJSON_Delete(doc->root);
    free(doc->pos);
    memset(doc, 0, sizeof *doc);
}

/* ---------------------------------------------------------------------
 * Number literals
 */

/* The literal's significant digits, from its first nonzero digit to its
 * last (at most cap kept; *nd counts them all), and its decimal exponent:
 * |value| = 0.d1 d2 ... d_nd * 10^*exp10. */
static void literal_digits(const char *p, char *dig, int cap, int *nd,
                           long *exp10) {
    int n = 0, last = 0, lead = 1, seen_point = 0;
    long point = 0; /* digits before the decimal point, after leading 0s */
    if (*p == '-') p++;
    for (; is_digit(*p) || *p == '.'; p++) {
        if (*p == '.') {
            seen_point = 1;
            continue;
        }
        if (lead && *p == '0') {
            if (seen_point) point--;
            continue;
        }
        lead = 0;
        if (n < cap) dig[n] = *p;
        n++;
        if (*p != '0') last = n;
        if (!seen_point) point++;
    }
    long e = 0;
    if (*p == 'e' || *p == 'E') {
        e = strtol(p + 1, NULL, 10);
        if (e > 100000) e = 100000;
        if (e < -100000) e = -100000;
    }
    *nd = last;
    *exp10 = point + e;
}

int json_literal_integer(const char *lit, double *out) {
    char dig[JSON_MAX_NUMBER_LEN + 1];
    int nd;
    long e;
    literal_digits(lit, dig, (int)sizeof dig, &nd, &e);
    if (nd == 0) {
        *out = 0;
        return 0;
    }
    if (e < nd) return 1; /* a nonzero digit after the decimal point */
    if (e > 16) return 2; /* 2^53 has 16 digits */
    uint64_t v = 0;
    for (long k = 0; k < e; k++)
        v = 10 * v + (uint64_t)(k < nd ? dig[k] - '0' : 0);
    if (v > (uint64_t)1 << 53) return 2;
    *out = lit[0] == '-' ? -(double)v : (double)v;
    return 0;
}

int json_literal_nonzero(const char *lit) {
    char dig[4];
    int nd;
    long e;
    literal_digits(lit, dig, (int)sizeof dig, &nd, &e);
    return nd > 0;
}

/* ---------------------------------------------------------------------
 * Maps
 */

static size_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33;
    return (size_t)x;
}

static size_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)h;
}

static int map_grow(json_map *m) {
    size_t cap = m->cap ? 2 * m->cap : 64;
    json_map g = {calloc(cap, sizeof *g.key), malloc(cap * sizeof *g.val), 0,
                  cap};
    if (!g.key || !g.val) {
        free(g.key), free(g.val);
        return MSG_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i]) json_map_put(&g, m->key[i], m->val[i]);
    json_map_free(m);
    *m = g;
    return 0;
}

int json_map_put(json_map *m, const void *key, size_t val) {
    if (2 * (m->n + 1) > m->cap && map_grow(m)) return MSG_ENOMEM;
    size_t i = hash_ptr(key) & (m->cap - 1);
    while (m->key[i] && m->key[i] != key) i = (i + 1) & (m->cap - 1);
    if (!m->key[i]) m->key[i] = key, m->n++;
    m->val[i] = val;
    return 0;
}

int json_map_get(const json_map *m, const void *key, size_t *val) {
    if (!m->cap) return 0;
    size_t i = hash_ptr(key) & (m->cap - 1);
    for (; m->key[i]; i = (i + 1) & (m->cap - 1))
        if (m->key[i] == key) return *val = m->val[i], 1;
    return 0;
}

void json_map_free(json_map *m) {
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

static int keys_grow(json_keys *k) {
    size_t cap = k->cap ? 2 * k->cap : 16;
    json_keys g = {calloc(cap, sizeof *g.slot), 0, cap};
    if (!g.slot) return MSG_ENOMEM;
    for (size_t i = 0; i < k->cap; i++)
        if (k->slot[i]) json_keys_put(&g, k->slot[i]);
    json_keys_free(k);
    *k = g;
    return 0;
}

int json_keys_put(json_keys *k, cJSON *member) {
    if (2 * (k->n + 1) > k->cap && keys_grow(k)) return MSG_ENOMEM;
    size_t i = hash_str(member->string) & (k->cap - 1);
    while (k->slot[i] && strcmp(k->slot[i]->string, member->string) != 0)
        i = (i + 1) & (k->cap - 1);
    if (!k->slot[i]) k->n++;
    k->slot[i] = member;
    return 0;
}

cJSON *json_keys_get(const json_keys *k, const char *key) {
    if (!k->cap) return NULL;
    size_t i = hash_str(key) & (k->cap - 1);
    for (; k->slot[i]; i = (i + 1) & (k->cap - 1))
        if (strcmp(k->slot[i]->string, key) == 0) return k->slot[i];
    return NULL;
}

int json_keys_build(json_keys *k, const cJSON *obj) {
    memset(k, 0, sizeof *k);
    for (cJSON *m = obj->child; m; m = m->next)
        if (json_keys_put(k, m)) {
            json_keys_free(k);
            return MSG_ENOMEM;
        }
    return 0;
}

void json_keys_free(json_keys *k) {
    free(k->slot);
    memset(k, 0, sizeof *k);
}

int json_first_duplicate(const cJSON *obj, const cJSON **dup,
                         const cJSON **first) {
    json_keys k = {0};
    int rc = 0;
    for (cJSON *m = obj->child; m && !rc; m = m->next) {
        cJSON *e = json_keys_get(&k, m->string);
        if (e) {
            *dup = m, *first = e, rc = 1;
        } else if (json_keys_put(&k, m)) {
            rc = MSG_ENOMEM;
        }
    }
    json_keys_free(&k);
    return rc;
}
