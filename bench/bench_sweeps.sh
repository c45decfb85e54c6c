#!/bin/sh
# bench_sweeps.sh -- wall time of the Table 4 reproduction's sweeps (3
# sizes x 5 methods x 50 bandwidths = 750 runs) with every core, against
# the same sweeps on one core in the same command (goal: under 5 s), and
# CPU time on one core against the same sweeps with --full (every op and
# period simulated; goal: 30x less, identical CSV).
# usage: bench/bench_sweeps.sh [path/to/dilosim]
set -e
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
# Table 4's five methods (the scenarios hold more variants)
table4="--variant data_parallel --variant diloco --variant streaming
        --variant streaming_overlap --variant streaming_overlap_fp4"
sweeps() { # JOBS [--full]
  for s in 1b 10b 100b; do
    "$bin" sweep "$root/scenarios/paper/$s.json" $table4 --jobs "$1" $2 \
      --out "$tmp/$s.$1$2.csv"
  done
}
cpu() { awk '{ print $16 + $17 }' /proc/$$/stat; } # ticks of waited children
t0=$(now); sweeps 1; t1=$(now); sweeps "$(nproc)"; t2=$(now)
for s in 1b 10b 100b; do cmp -s "$tmp/$s.1.csv" "$tmp/$s.$(nproc).csv" ||
  { echo "bench_sweeps: --jobs changed the output of $s" >&2; exit 1; }; done
c0=$(cpu); sweeps 1; c1=$(cpu); sweeps 1 --full; c2=$(cpu)
for s in 1b 10b 100b; do
  tail -n +2 "$tmp/$s.1.csv" >"$tmp/a"; tail -n +2 "$tmp/$s.1--full.csv" >"$tmp/b"
  cmp -s "$tmp/a" "$tmp/b" ||
    { echo "bench_sweeps: --full changed the output of $s" >&2; exit 1; }; done
awk -v a="$c0" -v b="$c1" -v c="$c2" -v hz="$(getconf CLK_TCK)" 'BEGIN {
  fast = (b - a) / hz; full = (c - b) / hz; if (fast <= 0) fast = 1 / hz
  printf "bench_sweeps: 750 runs on 1 core: %.2f s of CPU, --full %.2f s: %.1fx less (goal >= 30x), the same CSV\n", fast, full, full / fast }'
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$(nproc)" 'BEGIN {
  one = b - a; all = c - b
  printf "bench_sweeps: 750 runs (Table 4 reproduction): %.2f s on %d cores, %.2f s on 1 core, speedup %.2fx; goal < 5 s\n", all, n, one, one / all }'
