#!/bin/sh
# cli_setfrom.sh -- --set-from FILE.json on every scenario command: the
# same output as the equivalent --set options, an explicit --set winning
# over the file, errors that point into the file (exit 2, one line,
# nothing written), and the file checked against every variant.
# usage: tests/cli_setfrom.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"
scn=$root/scenarios/default.json
short="--set steps=200"

cat >"$tmp/fit.json" <<'JSON'
{
  "network.efficiency": 0.93,
  "network.collective_overhead_ms": 2.5,
  "fit": {"keys": ["network.efficiency", "network.collective_overhead_ms"],
          "stderr": [0.01, 0.5],
          "covariance": [[0.0001, 0.001], [0.001, 0.25]],
          "rows": 12}
}
JSON
sets="--set network.efficiency=0.93 --set network.collective_overhead_ms=2.5"

# --- The same as the --set options, on every command ----------------------
expect 0 "run --set" -- "$bin" run "$scn" $short $sets --out "$tmp/a.run"
expect 0 "run --set-from" -- "$bin" run "$scn" $short --set-from "$tmp/fit.json" \
  --out "$tmp/b.run"
same "$tmp/a.run" "$tmp/b.run" "run --set-from equals --set"
smoke=$root/scenarios/train/mlp_smoke.json
expect 0 "train --set" -- "$bin" train "$smoke" $sets --out "$tmp/a.train" --quiet
expect 0 "train --set-from" -- "$bin" train "$smoke" --set-from "$tmp/fit.json" \
  --out "$tmp/b.train" --quiet
same "$tmp/a.train" "$tmp/b.train" "train --set-from equals --set"
expect 0 "sweep --set" -- "$bin" sweep "$scn" $short $sets --vary method.H=50,100 \
  --out "$tmp/a.csv" --quiet
expect 0 "sweep --set-from" -- "$bin" sweep "$scn" $short --set-from "$tmp/fit.json" \
  --vary method.H=50,100 --out "$tmp/b.csv" --quiet
same "$tmp/a.csv" "$tmp/b.csv" "sweep --set-from equals --set"
expect 0 "table --set" -- "$bin" table "$scn" $short $sets --grid 1,10 --csv --out "$tmp/a.tab"
expect 0 "table --set-from" -- "$bin" table "$scn" $short --set-from "$tmp/fit.json" \
  --grid 1,10 --csv --out "$tmp/b.tab"
same "$tmp/a.tab" "$tmp/b.tab" "table --set-from equals --set"
# (plan with the fit block adds the least bandwidth's interval over its
# draws, tests/cli_plan.sh: here the same overrides without it)
printf '{"network.efficiency": 0.93, "network.collective_overhead_ms": 2.5}\n' \
  >"$tmp/nofit.json"
expect 0 "plan --set" -- "$bin" plan "$scn" $short $sets --target-cu 0.9 --json --out "$tmp/a.pl"
expect 0 "plan --set-from" -- "$bin" plan "$scn" $short --set-from "$tmp/nofit.json" \
  --target-cu 0.9 --json --out "$tmp/b.pl"
same "$tmp/a.pl" "$tmp/b.pl" "plan --set-from equals --set"

# An explicit --set of the same key wins, wherever it stands.
expect 0 "--set after" -- "$bin" run "$scn" $short --set-from "$tmp/fit.json" \
  --set network.efficiency=0.5 --out "$tmp/c.json"
expect 0 "--set before" -- "$bin" run "$scn" $short --set network.efficiency=0.5 \
  --set-from "$tmp/fit.json" --out "$tmp/d.json"
expect 0 "--set only" -- "$bin" run "$scn" $short --set network.efficiency=0.5 \
  --set network.collective_overhead_ms=2.5 --out "$tmp/e.json"
same "$tmp/c.json" "$tmp/e.json" "--set after --set-from wins"
same "$tmp/d.json" "$tmp/e.json" "--set before --set-from wins"

# A value reaches the scenario exactly as written (17 digits, not 15).
printf '{"network.efficiency": 0.30000000000000004}' >"$tmp/exact.json"
expect 0 "17 digits" -- "$bin" run "$scn" $short --set-from "$tmp/exact.json" --out "$tmp/x1.json"
expect 0 "17 digits --set" -- "$bin" run "$scn" $short \
  --set network.efficiency=0.30000000000000004 --out "$tmp/x2.json"
expect 0 "15 digits --set" -- "$bin" run "$scn" $short --set network.efficiency=0.3 \
  --out "$tmp/x3.json"
same "$tmp/x1.json" "$tmp/x2.json" "--set-from keeps every digit"
if cmp -s "$tmp/x1.json" "$tmp/x3.json"; then bad "0.3 and 0.30000000000000004 give the same run"
else ok; fi

# Standard input.
expect 0 "--set-from -" -- sh -c "'$bin' run '$scn' $short --set-from - \
  --out '$tmp/f.json' <'$tmp/fit.json'"
same "$tmp/f.json" "$tmp/b.run" "--set-from - reads standard input"

# --- Errors point into the file ---------------------------------------------
# expect_err FILE-CONTENT MESSAGE: run and plan fail with exit 2, the one
# line MESSAGE (the file named fit.json here), no output file.
expect_err() {
  printf '%s' "$1" >"$tmp/bad.json"
  for cmd in run plan; do
    rm -f "$tmp/o"
    extra=; [ $cmd = plan ] && extra="--target-cu 0.9"
    (cd "$tmp" && "$bin" $cmd "$scn" $short $extra --set-from bad.json --out o) \
      >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ $got = 2 ]; then ok; else bad "$cmd --set-from '$1': exit $got"; fi
    if [ "$(cat "$tmp/err")" = "$2" ]; then ok
    else bad "$cmd --set-from '$1': got '$(cat "$tmp/err")', expected '$2'"; fi
    absent "$tmp/o" "$cmd --set-from '$1'"
  done
}
expect_err '{"network.efficiency": 1.5}' \
  'bad.json:1:24: network.efficiency: 1.5 is out of range (expected a number in (0, 1])'
expect_err '{"steps": 10,
 "network.efficency": 0.9}' \
  'bad.json:2:2: network.efficency: unknown key (did you mean network.efficiency? expected one of: bandwidth_gbps, up_gbps, down_gbps, latency_ms, collective, reduce_order, gbit, tcp_window_mb, transport, completion, tcp_init_window_kb, tcp_slow_start_after_idle, efficiency, collective_overhead_ms, startup_ms, ack_bytes_per_kb, queue_ms, latency_matrix_ms, ring_order, bandwidth_trace, site_allreduce, joules_per_gb)'
expect_err '{"workers.speed.7": 0.5}' \
  'bad.json:1:21: workers.speed: no element "7" (expected an index in 0..1)'
expect_err '{"network.efficiency": 0.9,}' \
  "bad.json:1:28: unexpected '}'; expected a string key after ','"
expect_err '' 'bad.json:1:1: empty input; expected a JSON object'
expect_err '{"fit": {"keys": ["x"]}}' \
  'bad.json:1:19: fit.keys: item 0 is not the name of a numeric member of the file'
# calibrate: the scenario is --scenario's, its arguments are measurements
m=$root/scenarios/examples/measured
printf '{"network.efficiency": 1.5}' >"$tmp/bad.json"
expect 2 "calibrate --set-from" -- "$bin" calibrate "$m/runs.csv" --scenario "$m/base.json" \
  --fit network.collective_overhead_ms --set-from "$tmp/bad.json" --out "$tmp/fit.out"
contains "$tmp/err" "bad.json:1:24: network.efficiency: 1.5 is out of range" \
  "calibrate: an error of --set-from points into the file"
absent "$tmp/fit.out" "calibrate --set-from: nothing written"
expect 2 "missing file" -- "$bin" run "$scn" --set-from "$tmp/none.json"
contains "$tmp/err" "none.json: cannot open: No such file or directory" "missing file"
expect 2 "no value" -- "$bin" run "$scn" --set-from
contains "$tmp/err" "needs a value" "--set-from without a value"

# The file is checked against every variant: a value that breaks only a
# variant is reported at its place in the file.
cat >"$tmp/var.json" <<'JSON'
{"model": {"params": 1e6, "layers": 4, "step_time_s": 0.1},
 "workers": {"count": 2}, "network": {"bandwidth_gbps": 1},
 "method": {"name": "streaming", "H": 10, "fragments": 2}, "steps": 40,
 "variants": {"two_layers": {"model": {"layers": 2}}}}
JSON
printf '{"method.fragments": 4}' >"$tmp/frag.json"
expect 2 "a variant's error" -- "$bin" plan "$tmp/var.json" --target-cu 0.5 \
  --set-from "$tmp/frag.json"
contains "$tmp/err" "frag.json:1:22: method.fragments: fragments must be in 1..layers = 2" \
  "a variant's error points into the file"
expect 0 "only the base" -- "$bin" run "$tmp/var.json" --set-from "$tmp/frag.json"

finish cli_setfrom
