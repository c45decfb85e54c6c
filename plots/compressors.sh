#!/bin/sh
# compressors.sh -- the compressor table of docs/experiments.md: every
# variant of scenarios/train/compressors.json through `dilosim train` (the
# coupled run: the clock of a 1B-parameter model at 1 Gbit/s, the loss of
# the small MLP), then one row per run with the loss at equal steps (the
# last, 400) and at equal simulated hours (the last eval row at or before
# the end of the fastest run; "no eval yet" where a run had not reached
# its first eval row by then), the simulated hours and the WAN bytes.
# Writes NAME.csv and NAME.json per variant, then results.csv and
# results.md (the table) to OUT/compressors/ (OUT is $PLOTS_OUT, default
# plots/out).  About 20 s a run on two cores.  A variant whose CSV and
# summary are there is not run again (FORCE=1 runs everything).
# usage: plots/compressors.sh [path/to/dilosim]
set -e
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
scenario=$root/scenarios/train/compressors.json
out=${PLOTS_OUT:-$root/plots/out}/compressors
mkdir -p "$out"

# The scenario's variants in its order, as dilosim lists them when asked
# for one it does not have.
variants=$("$bin" train "$scenario" --variant '?' 2>&1 |
  sed -n 's/.*(expected one of: \(.*\))$/\1/p' | tr -d ,)
[ -n "$variants" ] || { echo "compressors: no variants in $scenario" >&2; exit 2; }

# field FILE KEY: a top-level scalar of a run's JSON summary.
field() {
  awk -v k="\"$2\":" '$1 == k { v = $2; gsub(/[",]/, "", v); print v; exit }' "$1"
}
for v in $variants; do
  if [ -z "$FORCE" ] && [ -s "$out/$v.csv" ] && [ -s "$out/$v.json" ]; then
    continue
  fi
  echo "compressors: $v" >&2
  "$bin" train "$scenario" --variant "$v" --quiet --out "$out/$v.csv" \
    >"$out/$v.json.tmp"
  mv "$out/$v.json.tmp" "$out/$v.json"
done

# The equal-hours budget: the least simulated time of a whole run.
budget=$(for v in $variants; do field "$out/$v.json" sim_time_s; done |
  sort -g | head -1)

# row VARIANT: the run's figures as one CSV line.
row() {
  awk -F, -v run="$1" -v T="$budget" \
      -v method="$(field "$out/$1.json" method)" \
      -v codec="$(field "$out/$1.json" codec)" '
    /^#/ { next }
    !h++ { for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
      t = $col["sim_time_s"]
      if (t <= T + 1e-9) { at_t = $col["eval_loss_outer_nats"]; step_t = $col["step"] }
      last = $col["eval_loss_outer_nats"]; hours = t / 3600
      wan = $col["wan_bytes"]; steps = $col["step"]
    }
    END {
      # no eval row yet at the budget: the last two fields are empty
      printf "%s,%s,%s,%d,%.4f,%s,%s,%.4f,%.0f\n", run, method, codec, steps,
             last, at_t == "" ? "" : sprintf("%.4f", at_t), step_t, hours, wan
    }' "$out/$1.csv"
}

{
  echo "run,method,codec,steps,eval_loss_nats,eval_loss_at_budget_nats,step_at_budget,sim_time_h,wan_bytes"
  for v in $variants; do row "$v"; done
} >"$out/results.csv"

# results.md: the table as docs/experiments.md shows it.
awk -F, -v T="$budget" '
  NR == 1 { next }
  NR == 2 {
    printf "| run | method | format | eval loss at step %d (nats) | eval loss at %.0f s (nats, step) | simulated hours | WAN bytes |\n", $4, T
    print "|---|---|---|---|---|---|---|"
  }
  {
    b = $6 == "" ? "no eval yet" : $6 " (" $7 ")"
    printf "| %s | %s | %s | %s | %s | %s | %.3g |\n", $1, $2, $3, $5, b, $8, $9
  }
' "$out/results.csv" >"$out/results.md"
echo "compressors: $out/results.md" >&2
