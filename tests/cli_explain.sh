#!/bin/sh
# cli_explain.sh -- `dilosim explain`: the help lists every option, text
# and --json on the default scenario and on one with variants, the JSON
# parts summing to wall_time_s exactly as printed (integer ns from the
# digits), errors one line with exit 2 and no output file, --out written
# whole, the same bytes twice.
# usage: tests/cli_explain.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"
scn=$root/scenarios/default.json
vscn=$root/scenarios/examples/tcp_idle.json
short="--set steps=300"

# --- help -------------------------------------------------------------------
expect 0 "explain --help" -- "$bin" explain --help
for opt in --variant --set --set-from --json --out --full --quiet --progress --help; do
  contains "$tmp/out" -- "$opt" "explain --help lists $opt"
done
expect 0 "dilosim --help" -- "$bin" --help
contains "$tmp/out" "explain SCENARIO.json" "the command list names explain"

# --- text and JSON ----------------------------------------------------------
expect 0 "explain text" -- "$bin" explain "$scn" $short
contains "$tmp/out" "^streaming: Streaming DiLoCo" "text: the method's heading"
contains "$tmp/out" "^  compute " "text: the compute row"
contains "$tmp/out" "^  wall " "text: the wall row"
contains "$tmp/out" "payload takes" "text: the sentence"
expect 0 "explain variants text" -- "$bin" explain "$vscn" $short
for v in h1 h10 h100 ideal_h10; do
  contains "$tmp/out" "^$v: DiLoCo" "text: variant $v"
done
expect 0 "explain one variant" -- "$bin" explain "$vscn" $short --variant h10 --json
lines "$tmp/out" 9 "one variant: one object"
contains "$tmp/out" '"method": "h10"' "one variant: its name"

# parts_sum FILE: for each object, the parts and wall_time_s as integer
# ns from their digits; prints "bad" for an object whose parts do not sum.
parts_sum() {
  awk '
    function ns(s,   i, f) {
      i = index(s, "."); if (!i) return s * 1000000000
      f = substr(s, i + 1); while (length(f) < 9) f = f "0"
      return substr(s, 1, i - 1) * 1000000000 + f
    }
    /"wall_time_s"/ { w = $0; sub(/.*"wall_time_s": /, "", w); sub(/,$/, "", w); wall = ns(w) }
    /^    "parts"/ {
      p = $0; sub(/.*\{/, "", p); sub(/\}.*/, "", p)
      n = split(p, kv, ", "); sum = 0
      for (k = 1; k <= n; k++) { v = kv[k]; sub(/.*: /, "", v); sum += ns(v) }
      objects++; if (sum != wall) print "bad " sum " " wall
    }
    END { print objects " objects" }' "$1"
}
for f in "$scn" "$vscn" "$root/scenarios/examples/stragglers.json" \
         "$root/scenarios/examples/failures_trace.json" \
         "$root/scenarios/examples/heterogeneous_links.json"; do
  expect 0 "explain --json $f" -- "$bin" explain "$f" $short --json --out "$tmp/e.json"
  parts_sum "$tmp/e.json" >"$tmp/sum"
  lacks "$tmp/sum" "bad" "JSON parts sum to wall_time_s: $f"
  lacks "$tmp/sum" "^0 objects" "JSON has objects: $f"
done
expect 0 "explain --json variants" -- "$bin" explain "$vscn" $short --json
parts_sum "$tmp/out" >"$tmp/sum"
contains "$tmp/sum" "^4 objects" "JSON: one object per variant"
expect 0 "explain --json stragglers" -- "$bin" explain \
  "$root/scenarios/examples/stragglers.json" $short --json
contains "$tmp/out" '"workers": \[' "JSON: workers when they differ"
expect 0 "explain --json default" -- "$bin" explain "$scn" $short --json
lacks "$tmp/out" '"workers"' "JSON: no workers when they are alike"
contains "$tmp/out" '"label": "Streaming DiLoCo, H 100, overlap 1, 4-bit"' "JSON: the label"

# --- errors: one line, exit 2, nothing written ------------------------------
expect 2 "unknown option" -- "$bin" explain "$scn" --bogus --out "$tmp/x.txt"
lines "$tmp/err" 1 "unknown option: one line"
absent "$tmp/x.txt" "unknown option"
printf '{"steps": -3}\n' >"$tmp/bad.json"
expect 2 "bad scenario" -- "$bin" explain "$tmp/bad.json" --out "$tmp/x.txt"
lines "$tmp/err" 1 "bad scenario: one line"
contains "$tmp/err" "bad.json:1:" "bad scenario: the position"
absent "$tmp/x.txt" "bad scenario"
expect 2 "unknown variant" -- "$bin" explain "$vscn" --variant nope --out "$tmp/x.txt"
lines "$tmp/err" 1 "unknown variant: one line"
absent "$tmp/x.txt" "unknown variant"
expect 2 "missing file" -- "$bin" explain "$tmp/none.json" --out "$tmp/x.txt"
absent "$tmp/x.txt" "missing file"
echo old >"$tmp/keep.txt"; cp "$tmp/keep.txt" "$tmp/keep.want"
expect 2 "error over an existing --out" -- "$bin" explain "$vscn" --variant nope \
  --out "$tmp/keep.txt"
same "$tmp/keep.txt" "$tmp/keep.want" "an error leaves --out as it was"

# --- --out whole, same bytes twice ------------------------------------------
expect 0 "explain --out" -- "$bin" explain "$vscn" $short --out "$tmp/a.txt"
[ -s "$tmp/out" ] && bad "--out: stdout not empty" || ok
no_temp "explain --out"
expect 0 "explain again" -- "$bin" explain "$vscn" $short
same "$tmp/out" "$tmp/a.txt" "--out equals stdout, the same bytes twice"
expect 0 "explain --json twice" -- "$bin" explain "$vscn" $short --json --out "$tmp/b.json"
expect 0 "explain --json --full" -- "$bin" explain "$vscn" $short --json --full --out "$tmp/c.json"
same "$tmp/b.json" "$tmp/c.json" "--full: the same bytes"
# the sentence's payload is one sync's on the wire (1e9 bf16 parameters),
# whatever failures did to the bytes sent
expect 0 "explain with failures" -- "$bin" explain "$root/scenarios/examples/failures.json" \
  --set steps=50000
contains "$tmp/out" "each 2000 MB payload" "the payload of one sync"
finish cli_explain
