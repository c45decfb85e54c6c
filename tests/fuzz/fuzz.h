/*
 * fuzz.h -- what the libFuzzer targets of tests/fuzz/ share: cutting an
 * input into NUL-separated parts, a temporary file per iteration for the
 * entry points that read a path, and the checks every target makes of an
 * error message.  Header only (static functions): each target is one .c
 * file linked with the library objects of build-fuzz/.
 *
 * A failed check prints what went wrong to stderr and calls abort(), which
 * libFuzzer reports as a crash and saves as a reproducer.
 */
#ifndef DILOSIM_FUZZ_H
#define DILOSIM_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_MAX_PARTS 10   /* document, variant, up to 8 overrides */
#define FUZZ_ERRLEN 512

/* The input cut at its NUL bytes: part[0] is everything before the first
 * NUL (len[0] bytes), part[1] what follows up to the next, and so on; at
 * most FUZZ_MAX_PARTS parts (the last one ends at the next NUL or at the
 * end).  Each part is a NUL-terminated string in its own allocation of
 * exactly len + 1 bytes, so that AddressSanitizer sees a read past its
 * end. */
typedef struct {
    int n;
    char *part[FUZZ_MAX_PARTS];
    size_t len[FUZZ_MAX_PARTS];
} fuzz_parts;

static inline void fuzz_parts_free(fuzz_parts *p) {
    for (int i = 0; i < p->n; i++) free(p->part[i]);
    p->n = 0;
}

/* Cuts data[0..size) into p.  Returns 0, or -1 when out of memory (the
 * caller then skips the input). */
static inline int fuzz_split(const uint8_t *data, size_t size,
                             fuzz_parts *p) {
    memset(p, 0, sizeof *p);
    size_t i = 0;
    for (;;) {
        size_t start = i;
        while (i < size && data[i] != '\0') i++;
        size_t len = i - start;
        char *s = calloc(len + 1, 1);
        if (!s) {
            fuzz_parts_free(p);
            return -1;
        }
        if (len) memcpy(s, data + start, len);
        p->part[p->n] = s;
        p->len[p->n++] = len;
        if (i >= size || p->n == FUZZ_MAX_PARTS) break;
        i++; /* past the NUL */
    }
    return 0;
}

/* The scenario targets' reading of the parts: part[0] the document,
 * part[1] the variant (NULL when absent or empty), the rest overrides
 * into sets[FUZZ_MAX_PARTS]; returns their count. */
static inline int fuzz_scenario_args(const fuzz_parts *p, const char **variant,
                                     const char **sets) {
    *variant = p->n > 1 && p->part[1][0] ? p->part[1] : NULL;
    int nset = 0;
    for (int i = 2; i < p->n; i++) sets[nset++] = p->part[i];
    return nset;
}

/* Writes len bytes of text to a new file /tmp/dilosim-fuzz-XXXXXX and
 * puts its name in path.  Returns 0, or -1 (nothing left behind).  The
 * caller unlinks the file in the same iteration. */
static inline int fuzz_temp(const char *text, size_t len, char path[64]) {
    strcpy(path, "/tmp/dilosim-fuzz-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, text + done, len - done);
        if (k <= 0) {
            close(fd);
            unlink(path);
            return -1;
        }
        done += (size_t)k;
    }
    if (close(fd) != 0) {
        unlink(path);
        return -1;
    }
    return 0;
}

/* Reports a broken invariant and aborts (a libFuzzer crash). */
static inline void fuzz_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz invariant broken: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* The contract of every failing entry point: a negative code and one
 * non-empty line in err. */
static inline void fuzz_check_error(const char *what, int rc,
                                    const char *err) {
    if (rc >= 0) fuzz_fail("%s: failure code %d is not negative", what, rc);
    if (!err[0]) fuzz_fail("%s: failed (%d) without a message", what, rc);
    if (strpbrk(err, "\n\r"))
        fuzz_fail("%s: message is not one line: %s", what, err);
}

#endif
