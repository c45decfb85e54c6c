#!/bin/sh
# bench_sweeps.sh -- wall time of the Table 4 reproduction's sweeps (3
# sizes x 5 methods x 50 bandwidths = 750 runs) with every core, against
# the same sweeps on one core in the same command.  Goal: under 5 s.
# usage: bench/bench_sweeps.sh [path/to/dilosim]
set -e
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
sweeps() {
  for s in 1b 10b 100b; do
    "$bin" sweep "$root/scenarios/paper/$s.json" --jobs "$1" --out "$tmp/$s.$1.csv"
  done
}
t0=$(now); sweeps 1; t1=$(now); sweeps "$(nproc)"; t2=$(now)
for s in 1b 10b 100b; do cmp -s "$tmp/$s.1.csv" "$tmp/$s.$(nproc).csv" ||
  { echo "bench_sweeps: --jobs changed the output of $s" >&2; exit 1; }; done
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$(nproc)" 'BEGIN {
  one = b - a; all = c - b
  printf "bench_sweeps: 750 runs (Table 4 reproduction): %.2f s on %d cores, %.2f s on 1 core, speedup %.2fx; goal < 5 s\n", all, n, one, one / all }'
