#!/bin/sh
# cli_calibrate.sh -- command-line tests of `dilosim calibrate`: its help,
# a fit end to end on the measurements of tests/data/calibrate/ (runs,
# nccl-tests, iperf3; made with dilosim at network.efficiency 0.85 and
# network.collective_overhead_ms 3, 1% noise), FIT.json's members and fit
# block, the default keys (one at a bound, one dropped), the same bytes
# twice and for any --jobs, FIT.json fed back to
# `dilosim run` with --set-from, the step times' and outages' estimates,
# and bad inputs: one line, exit 2, no FIT.json left.  Run by tests/cli.sh.
# usage: tests/cli_calibrate.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

d=$root/tests/data/calibrate
base=$d/base.json
keys="--fit network.efficiency --fit network.collective_overhead_ms"

# help
expect 0 "calibrate help" -- "$bin" calibrate --help
for w in --scenario --fit --out --span-hours --jobs --json --set-from \
         network.startup_ms network.queue_ms; do
  contains "$tmp/out" "$w" "calibrate help lists $w"
done

# A fit end to end, from efficiency 0.95 and overhead 1 ms.
expect 0 "calibrate" -- "$bin" calibrate "$d/runs.csv" "$d/nccl.txt" "$d/iperf.json" \
  --scenario "$base" $keys --set network.efficiency=0.95 \
  --set network.collective_overhead_ms=1 --out "$tmp/fit.json"
[ -s "$tmp/err" ] && bad "calibrate wrote to stderr: $(head -1 "$tmp/err")" || ok
cp "$tmp/out" "$tmp/report.txt"
contains "$tmp/report.txt" "^calibrate $base: 14 rows from 3 files$" "report title"
contains "$tmp/report.txt" "^network.efficiency  *0.95  *0.85[0-9]*  *0.00[0-9]*$" \
  "report: efficiency"
contains "$tmp/report.txt" "^network.collective_overhead_ms  *1  *[23]\.[0-9]*  *0.0[0-9]*$" \
  "report: overhead"
contains "$tmp/report.txt" "^$d/runs.csv:5  *run  " "report: a run row"
contains "$tmp/report.txt" "^$d/nccl.txt:10  *allreduce  *0.035658 " "report: an all-reduce"
contains "$tmp/report.txt" "^$d/iperf.json:[0-9]*  *stream  *9.93619 " "report: the stream"
contains "$tmp/report.txt" "^0 of 14 rows off by more than 10% at the fit$" "report: outside"
f=$tmp/fit.json
contains "$f" '^  "network.efficiency": 0.85' "FIT.json: efficiency"
contains "$f" '^  "network.collective_overhead_ms": [23]\.' "FIT.json: overhead"
contains "$f" '^    "keys": \["network.efficiency", "network.collective_overhead_ms"\],$' \
  "FIT.json: fit.keys"
contains "$f" '^    "stderr": \[0.00[0-9e.-]*, 0.0[0-9e.-]*\],$' "FIT.json: fit.stderr"
contains "$f" '^    "covariance": \[$' "FIT.json: fit.covariance"
contains "$f" '^    "rows": 14,$' "FIT.json: rows"
contains "$f" '^    "dof": 12,$' "FIT.json: dof"
contains "$f" '"format": "nccl-tests", "digest": "[0-9a-f]\{16\}", "rows": 5}' \
  "FIT.json: inputs"
contains "$f" '^    "dilosim": "' "FIT.json: version"
contains "$f" '^    "at_bound": \[\],$' "FIT.json: at_bound"
lacks "$f" 'revision' "FIT.json: no revision (the same bytes from any build)"

# The same bytes again, with one thread and with three.
expect 0 "calibrate --jobs 1" -- "$bin" calibrate "$d/runs.csv" "$d/nccl.txt" \
  "$d/iperf.json" --scenario "$base" $keys --set network.efficiency=0.95 \
  --set network.collective_overhead_ms=1 --out "$tmp/fit1.json" --jobs 1
same "$tmp/fit1.json" "$f" "FIT.json, --jobs 1"
same "$tmp/out" "$tmp/report.txt" "the report, --jobs 1"
expect 0 "calibrate --jobs 3" -- "$bin" calibrate "$d/runs.csv" "$d/nccl.txt" \
  "$d/iperf.json" --scenario "$base" $keys --set network.efficiency=0.95 \
  --set network.collective_overhead_ms=1 --out "$tmp/fit3.json" --jobs 3 --json
same "$tmp/fit3.json" "$f" "FIT.json, --jobs 3"
contains "$tmp/out" '^  "keys": \[$' "--json: keys"
contains "$tmp/out" '"key": "network.efficiency", "status": "fitted", "base": 0.95' \
  "--json: a key"
contains "$tmp/out" '"line": 10, "kind": "allreduce", "measured_s": 0.0356' "--json: a row"
contains "$tmp/out" '^  "rows_outside_10pct": 0,$' "--json: outside"
no_temp "calibrate"

# The default keys: the set-up (truth 0) at its bound, the queue (ideal
# transport) dropped, both said in FIT.json.
expect 0 "calibrate, the default keys" -- "$bin" calibrate "$d/runs.csv" "$d/nccl.txt" \
  "$d/iperf.json" --scenario "$base" --out "$tmp/fitd.json"
contains "$tmp/out" "^network.startup_ms  *0  *0  *at bound$" "default keys: the set-up"
contains "$tmp/out" "^network.queue_ms  *0  *dropped  no effect on these measurements" \
  "default keys: the queue"
contains "$tmp/fitd.json" '^    "at_bound": \["network.startup_ms"\],$' "default keys: at_bound"
contains "$tmp/fitd.json" '^      {"key": "network.queue_ms", "why": "no effect' "default keys: dropped"
contains "$tmp/fitd.json" '^    "stderr": \[0.00[0-9e.-]*, 0, 0.0[0-9e.-]*\],$' "default keys: stderr"
lacks "$tmp/fitd.json" '"network.queue_ms": ' "default keys: a dropped key is no member"

# FIT.json back into run: the fitted values are the run's.
expect 0 "run --set-from FIT.json" -- "$bin" run "$base" --set-from "$f"
eff=$(sed -n 's/^  "network.efficiency": \(.*\),$/\1/p' "$f")
contains "$tmp/out" "\"efficiency\": $eff" "run --set-from: efficiency"

# Step times and outages: their estimates in FIT.json, applied first.
expect 0 "calibrate with logs" -- "$bin" calibrate "$d/runs2.csv" "$d/nccl.txt" \
  "$d/iperf.json" "$d/steps.csv" "$d/outages.csv" --scenario "$base" $keys \
  --span-hours 100 --out "$tmp/fit2.json"
contains "$tmp/out" "^from the logs (the step times applied to every prediction before the fit):$" \
  "logs: title"
contains "$tmp/fit2.json" '^  "model.step_time_s": 0.05,$' "logs: step time"
contains "$tmp/fit2.json" '^  "workers.speed": \[1, 0.8\],$' "logs: speeds"
contains "$tmp/fit2.json" '^  "workers.speed.1": 0.8,$' "logs: speed of worker 1"
contains "$tmp/fit2.json" '^  "workers.stragglers.probability": 0.08333' "logs: stragglers"
contains "$tmp/fit2.json" '^  "faults.mtbf_hours": ' "logs: MTBF"
contains "$tmp/fit2.json" '^  "faults.mttr_hours": ' "logs: MTTR"
contains "$tmp/fit2.json" '"network.collective_overhead_ms", "model.step_time_s", "workers.speed.1",' \
  "logs: the fit block's keys"
expect 0 "run --set-from the logs' FIT.json" -- "$bin" run "$base" --set-from "$tmp/fit2.json"

# Bad inputs: one line, exit 2, nothing written.
printf 'method,workers,params,codec,H,fragments,tau,steps,step_time_s,bandwidth_gbps,latency_ms,wall_s\ndiloco,2,1e6,fp33,5,,,10,0.05,1,10,1.5\ndp,2,1e6,fp32,,,,10,0.05,1,10,1.2\ndp,2,2e6,fp32,,,,10,0.05,1,10,1.9\n' \
  >"$tmp/badrow.csv"
printf 'method,workers,params,codec,H,fragments,tau,steps,step_time_s,bandwidth_gbps,latency_ms,wall_s\ndp,2,1e6,fp32,,,,10,0.05,1,10,1.2\n' \
  >"$tmp/one.csv"
printf 'hello\n' >"$tmp/junk.txt"
run_bad() { # WHAT PATTERN ARGS...: exit 2, one line matching, no FIT.json
  what=$1 pat=$2; shift 2
  rm -f "$tmp/bad.json"
  expect 2 "$what" -- "$bin" calibrate "$@" --out "$tmp/bad.json"
  lines "$tmp/err" 1 "$what: one line"
  contains "$tmp/err" "$pat" "$what: message"
  absent "$tmp/bad.json" "$what"
}
run_bad "unknown --fit key" "^--fit network.eficiency: unknown key (did you mean network.efficiency?" \
  "$d/runs.csv" --scenario "$base" --fit network.eficiency
run_bad "a row's world" "^$tmp/badrow.csv:2: method.codec: " \
  "$tmp/badrow.csv" --scenario "$base" $keys
run_bad "fewer rows than keys" "^1 row for 2 keys: the fit needs more rows than keys" \
  "$tmp/one.csv" --scenario "$base" $keys
run_bad "a file of no format" "^$tmp/junk.txt" "$tmp/junk.txt" --scenario "$base" $keys
run_bad "no --scenario" "^dilosim calibrate: --scenario BASE.json is required" "$d/runs.csv"
run_bad "no measurement" "^dilosim calibrate: no measurement file given" --scenario "$base"
run_bad "outages without --span-hours" "^dilosim calibrate: an outage log needs --span-hours" \
  "$d/runs.csv" "$d/outages.csv" --scenario "$base" $keys
run_bad "--span-hours without outages" "^dilosim calibrate: --span-hours is the span of an outage log" \
  "$d/runs.csv" --scenario "$base" $keys --span-hours 10
run_bad "a bad --span-hours" "^dilosim calibrate: --span-hours: 'x' is not a number" \
  "$d/runs.csv" "$d/outages.csv" --scenario "$base" $keys --span-hours x
run_bad "a bad base" "^--set network.efficiency=2: network.efficiency: " \
  "$d/runs.csv" --scenario "$base" $keys --set network.efficiency=2
expect 2 "no --out" -- "$bin" calibrate "$d/runs.csv" --scenario "$base"
contains "$tmp/err" "^dilosim calibrate: --out FIT.json is required" "no --out: message"
no_temp "bad inputs"

finish cli_calibrate
