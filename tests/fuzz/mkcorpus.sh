#!/bin/sh
# mkcorpus.sh -- builds the seed corpus of every target under OUTDIR from
# the shipped scenarios/ and the small seeds committed in
# tests/fuzz/corpus/<target>/:
#   scenario, run  every scenarios/**/*.json through SEEDS (seeds.c): the
#                  document, each variant, a few overrides
#   faults         every scenarios/**/*trace*.txt, behind a workers byte
#                  (1 and 4 workers)
#   cost           every scenarios/examples/cost/*.json
#   measure        every tests/data/measure/* (one file of each format)
# usage: tests/fuzz/mkcorpus.sh SEEDS OUTDIR   (from the top of the tree)
set -e
seeds=$1 out=$2
rm -rf "$out"
for t in scenario faults cost run measure; do
  mkdir -p "$out/$t"
  for f in tests/fuzz/corpus/$t/*; do
    [ -f "$f" ] && cp "$f" "$out/$t/"
  done
done
"$seeds" "$out/scenario" $(find scenarios -name '*.json' ! -path '*/cost/*' | sort)
cp "$out/scenario"/* "$out/run/"
for f in $(find scenarios -name '*trace*.txt' | sort); do
  n=$(basename "$f" .txt)
  { printf '\000'; cat "$f"; } >"$out/faults/$n.1"
  { printf '\003'; cat "$f"; } >"$out/faults/$n.4"
done
for f in scenarios/examples/cost/*.json; do
  [ -f "$f" ] && cp "$f" "$out/cost/"
done
for f in tests/data/measure/*; do
  [ -f "$f" ] && cp "$f" "$out/measure/"
done
exit 0
