/*
 * sweepfile.h -- what a sweep file says it is (its first line), the
 * shards of a sweep, and merging the shards into the whole file.
 *
 * A sweep written with an output file starts with one comment line,
 *
 *     # dilosim sweep digest 0123456789abcdef (dilosim 0.8.0, 29a73df)
 *
 * and a shard of it (the points p with p % N == K-1, in point order; see
 * sweep.h) with
 *
 *     # dilosim sweep digest 0123456789abcdef shard 2/3 of 10000 points
 *       (dilosim 0.8.0, 29a73df)
 *
 * (one line), the digest being the whole sweep's in every shard.  What
 * comes before " (dilosim" is the file's identity: a resumed sweep must
 * find its own there (another sweep, another shard, or the whole sweep
 * for a shard is refused); the version and revision after it only say
 * which build wrote the file.  When the points count binary Gbit, the
 * line ends with what the Gbit/s columns mean (scn_gbit_note), e.g.
 *
 *     # dilosim sweep digest 0123456789abcdef (dilosim 0.8.0, 29a73df);
 *       Gbit = 2^30 bits (network.gbit binary)
 *
 * and a sweep to a stream (no output file, no identity) starts with the
 * line from " (dilosim" on after SWEEPFILE_STREAM_PREFIX:
 *
 *     # dilosim sweep (dilosim 0.8.0, 29a73df); Gbit = 2^30 bits (...)
 *
 * (without the note, a stream has no such line: the header comes first).
 *
 * Merging reads shards 1..N of one sweep and writes the file the whole
 * sweep writes, byte for byte: the digest line without the shard (the
 * version and revision of shard 1's line), the header, then the rows in
 * point order, row p from shard p % N + 1.  To a stream (no output file)
 * it writes what the sweep writes to one: the stream's line when shard
 * 1's line has a Gbit note, the header and the rows.
 */
#ifndef DILOSIM_SWEEPFILE_H
#define DILOSIM_SWEEPFILE_H

#include <stddef.h>
#include <stdint.h>

#define SWEEPFILE_PREFIX "# dilosim sweep digest "
#define SWEEPFILE_STREAM_PREFIX "# dilosim sweep"
#define SWEEPFILE_NOTE "); " /* the end of the version, then a note */
#define SWEEPFILE_MAX_SHARDS 10000000
#define SWEEPFILE_LINE_MAX 256 /* a first line, with its newline */

/* The identity of a sweep file. */
typedef struct {
    uint64_t digest;    /* of the whole sweep */
    int shard, nshards; /* K and N of a shard; 0 and 0 for the whole */
    int64_t npoints;    /* a shard's sweep's points (P); 0 for the whole */
    size_t len;         /* bytes of the identity in the line parsed */
} sweepfile_id;

/* The first line of a file of id, with its newline, written by this build
 * ("... (dilosim VERSION, REVISION)\n"), into buf (SWEEPFILE_LINE_MAX);
 * its identity's length in id->len. */
void sweepfile_line(sweepfile_id *id, char buf[SWEEPFILE_LINE_MAX]);

/* Parses the first line of a file (NUL-terminated, with or without its
 * newline): 1 and *id when it is a sweep file's (the identity followed by
 * a newline, " (" or the end), else 0. */
int sweepfile_parse(const char *line, sweepfile_id *id);

/* "shard 2/3" or "the whole sweep", into buf. */
void sweepfile_describe(const sweepfile_id *id, char *buf, size_t len);

/* Rows of shard k of n of a sweep of npoints (n 0: all of them). */
int64_t sweepfile_rows(int64_t npoints, int k, int n);

/* Parses "K/N", 1 <= K <= N <= SWEEPFILE_MAX_SHARDS, decimal digits only.
 * Returns 0, or -1 (nothing set). */
int sweepfile_parse_shard(const char *s, int *k, int *n);

/* Merges the shard files parts[0..nparts-1] (any order) into out (NULL
 * or "-": stdout, through sim/out/outfile.h: written whole or not at all).
 * The parts must be the shards 1..N of one N of one sweep (same digest),
 * each once, each complete (its header and every row, each ending with
 * its newline), with the same header.  Returns 0, or MSG_EINPUT with
 * "PART: what is wrong" (or "shard K/N missing ...") and nothing
 * written; MSG_EIO, MSG_ENOMEM for a runtime failure (out's messages are
 * outfile's). */
int sweepfile_merge(const char *const *parts, int nparts, const char *out,
                    char *err, size_t errlen);

#endif
