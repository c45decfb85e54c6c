#!/bin/sh
# cli.sh -- command-line tests of bin/dilosim: help, exit codes, output
# files written whole or not at all, determinism, traces, every scenario.
# usage: tests/cli.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

sc=$root/scenarios/default.json

expect 0 "help" -- "$bin" --help
contains "$tmp/out" "usage: dilosim" "help"
expect 0 "run help" -- "$bin" run --help
contains "$tmp/out" "--set KEY=VALUE" "run help"
expect 2 "no command" -- "$bin"
expect 2 "unknown command" -- "$bin" frobnicate
contains "$tmp/err" "unknown command 'frobnicate'" "unknown command"
expect 2 "unknown option" -- "$bin" run "$sc" --bogus
expect 2 "missing value" -- "$bin" run "$sc" --out
expect 2 "no scenario" -- "$bin" run

expect 0 "run default" -- "$bin" run "$sc"
for k in compute_utilization per_worker wall_time_s compute_time_s \
         bytes_sent_total peak_link_gbps avg_link_gbps syncs failures \
         lost_compute_s seed utilization bytes_sent; do
  contains "$tmp/out" "\"$k\"" "run output"
done
cp "$tmp/out" "$tmp/first"
"$bin" run "$sc" >"$tmp/second"
if cmp -s "$tmp/first" "$tmp/second"; then ok; else bad "two runs differ"; fi

# --out: the file appears whole; on an input error nothing is left behind.
expect 0 "run --out" -- "$bin" run "$sc" --out "$tmp/res.json"
if cmp -s "$tmp/first" "$tmp/res.json"; then ok; else bad "--out differs from stdout"; fi
printf '{"model": {"layers": 0}}\n' >"$tmp/badrange.json"
expect 2 "out of range" -- "$bin" run "$tmp/badrange.json" --out "$tmp/none.json"
contains "$tmp/err" "badrange.json:1:22: model.layers:" "range message"
if [ -e "$tmp/none.json" ]; then bad "output written on error"; else ok; fi
if ls "$tmp" | grep -q tmp; then bad "temporary file left"; else ok; fi

printf '{\n  "steps": 10,\n  "model": {"layers": 2,}\n}\n' >"$tmp/syntax.json"
expect 2 "syntax error" -- "$bin" run "$tmp/syntax.json"
contains "$tmp/err" "syntax.json:3:" "syntax message"
expect 2 "missing file" -- "$bin" run "$tmp/nope.json"
contains "$tmp/err" "nope.json" "missing file message"
expect 2 "unknown key" -- "$bin" run "$sc" --set network.bandwith_gbps=3
contains "$tmp/err" "network.bandwith_gbps" "unknown key message"

# --set changes the result.
expect 0 "set" -- "$bin" run "$sc" --set network.bandwidth_gbps=0.5
if cmp -s "$tmp/first" "$tmp/out"; then bad "--set had no effect"; else ok; fi

# --trace writes a valid Chrome trace.
expect 0 "trace" -- "$bin" run "$sc" --set steps=30 --trace "$tmp/trace.json"
contains "$tmp/trace.json" '"forward L0"' "trace"
contains "$tmp/trace.json" '"allreduce L' "trace"
if command -v python3 >/dev/null; then
  if python3 -m json.tool "$tmp/trace.json" >/dev/null; then ok; else bad "trace is not JSON"; fi
  if python3 -m json.tool "$tmp/first" >/dev/null; then ok; else bad "result is not JSON"; fi
fi

# Every shipped scenario loads and runs (shortened).
for f in "$root"/scenarios/*.json "$root"/scenarios/*/*.json; do
  expect 0 "scenario $f" -- "$bin" run "$f" --set steps=300
done

sh "$root/tests/cli_table.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_sweep.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_train.sh" "$bin" || fail=$((fail + 1))
finish cli
