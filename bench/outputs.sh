#!/bin/sh
# outputs.sh -- every output of the shipped scenarios, written into one
# folder, so that two builds can be compared byte for byte (a refactor
# must not change a single result).
#
# usage: bench/outputs.sh path/to/dilosim OUTDIR [quick]
#
# For every scenario file and every variant (the base, then each name of
# its "variants" section): `run` at full length (fast-forward) and, cut
# to 300 steps, `run` and `run --full`; a Chrome trace of the default
# scenario; every sweep of plots/sweeps.sh (CSV); `table` and `plan` of
# the paper setups and the cost example; `train` (CSV) of every training
# scenario and variant, cut to 60 steps with "quick" (the full lengths
# take about an hour).  The revision string is written as REV, so that
# builds of two commits compare equal; the summary lines that measure the
# host's speed (host_time_s, steps_per_s, tokens_per_s, gflops_per_s)
# are left out.  Then: diff -r OLD NEW.
set -eu
bin=$1
out=$2
quick=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
rev=$("$bin" --version | sed 's/.*(\(.*\))$/\1/')
norm() { sed "s/$rev/REV/g" "$1" >"$1.n" && mv "$1.n" "$1"; }

cd "$root"
for f in $(find scenarios -name '*.json' -not -path '*/cost/*' | LC_ALL=C sort); do
  name=$(echo "$f" | sed 's|^scenarios/||; s|/|_|g; s|\.json$||')
  for v in "" $(jq -r '.variants // {} | keys_unsorted[]' "$f"); do
    tag=$name${v:+.$v}
    set -- ${v:+--variant "$v"}
    "$bin" run "$f" "$@" --quiet >"$out/$tag.run.json" 2>"$out/$tag.run.err" || true
    "$bin" run "$f" "$@" --quiet --set steps=300 >"$out/$tag.run300.json" 2>&1 || true
    "$bin" run "$f" "$@" --quiet --set steps=300 --full >"$out/$tag.full300.json" 2>&1 || true
    for x in run run300 full300; do norm "$out/$tag.$x.json"; done
    if jq -e '.train' "$f" >/dev/null 2>&1; then
      steps=${quick:+--set steps=60}
      "$bin" train "$f" "$@" $steps --quiet --out "$out/$tag.train.csv" \
        >"$out/$tag.train.out" 2>&1 || true
      norm "$out/$tag.train.csv"; norm "$out/$tag.train.out"
      # the host's speed, which no two runs share
      sed -i '/"\(host_time_s\|steps_per_s\|tokens_per_s\|gflops_per_s\)"/d' \
        "$out/$tag.train.out"
    fi
  done
done
"$bin" run scenarios/default.json --quiet --trace "$out/default.trace.json" >/dev/null
PLOTS_OUT=$out/sweeps plots/sweeps.sh "$bin" >/dev/null
for s in $out/sweeps/*; do norm "$s"; done
for p in 1b 10b 100b; do
  "$bin" table scenarios/paper/$p.json --quiet >"$out/table_$p.txt" 2>&1 || true
  "$bin" plan scenarios/paper/$p.json --target-cu 0.8 --quiet >"$out/plan_$p.txt" 2>&1 || true
  norm "$out/table_$p.txt"; norm "$out/plan_$p.txt"
done
"$bin" plan scenarios/default.json --cost scenarios/examples/cost/two_sites.json --target-cu 0.8 --quiet \
  >"$out/plan_cost.txt" 2>&1 || true
norm "$out/plan_cost.txt"
echo "outputs.sh: $(find "$out" -type f | wc -l) files in $out"
