#!/bin/sh
# cli_table.sh -- command-line tests of `dilosim table` and `dilosim plan`:
# help, exit codes of bad thresholds, grids and cost files, the exact CSV
# header (named after the swept key, the Gbit in its comment), --out,
# JSON output (with the version), table and plan agreeing where CU is not
# monotone, standard input, and the exit status of a run's input error
# (table, plan and sweep).  Run by tests/cli.sh.
# usage: tests/cli_table.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

sc=$root/tests/data/table/one_layer_dp.json
var=$root/tests/data/table/variants.json
cost=$root/tests/data/table/cost.json

# help
expect 0 "table help" -- "$bin" table --help
contains "$tmp/out" "usage: dilosim table" "table help"
expect 0 "plan help" -- "$bin" plan --help
contains "$tmp/out" "wan_usd_per_gbps_month" "plan help"
"$bin" --help | grep -q "table SCENARIO" && ok || bad "table not in dilosim --help"

# table: thresholds must be increasing numbers in (0, 1]
for t in 0 1.5 -0.5 0.9,0.5 0.5,0.5 abc 0.5,,0.9 ""; do
  expect 2 "--thresholds '$t'" -- "$bin" table "$sc" --thresholds "$t"
done
contains "$tmp/err" "see 'dilosim table --help'" "usage error text"
expect 2 "decreasing grid" -- "$bin" table "$sc" --grid 10,1
expect 2 "bad grid" -- "$bin" table "$sc" --grid logspace:1:2
expect 2 "bad jobs" -- "$bin" table "$sc" --jobs 0
expect 2 "unknown variant" -- "$bin" table "$var" --variant nope --out "$tmp/none.txt"
absent "$tmp/none.txt" "output written on error"
no_temp "unknown variant"
expect 2 "bad key" -- "$bin" table "$sc" --key network.bandwith_gbps
contains "$tmp/err" "bandwith" "bad key message"
expect 2 "table unknown option" -- "$bin" table "$sc" --bogus
expect 2 "table no scenario" -- "$bin" table

# table: CSV header, rows, --out
expect 0 "table csv" -- "$bin" table "$sc" --csv --thresholds 0.5,0.99,1 --grid logspace:-1:1:9
contains "$tmp/out" "^# dilosim 0\.8\.0 (.*)$" "csv version comment"
if [ "$(sed -n 2p "$tmp/out")" = "variant,threshold,grid_gbps,exact_gbps,cu_at_exact,method" ]
then ok; else bad "csv header: $(sed -n 2p "$tmp/out")"; fi
contains "$tmp/out" "^dp,0.5,0.1778279410038923,0.1[56][0-9]*,0.[45][0-9]*,brent$" "csv row"
contains "$tmp/out" "^dp,0.99,,,,not_reached$" "csv row not reached"
lines "$tmp/out" 5 "csv rows"
expect 0 "table below grid" -- "$bin" table "$sc" --csv --thresholds 0.5 --grid 1,10
contains "$tmp/out" "^dp,0.5,1,,,below_grid$" "csv row below grid"
expect 0 "table text" -- "$bin" table "$var" --grid logspace:-1:1:9 --jobs 2
contains "$tmp/out" "^fast: " "text block"
contains "$tmp/out" "^slow: " "text block"
contains "$tmp/out" "<= 0.1 " "text at start"
cp "$tmp/out" "$tmp/text"
expect 0 "table --out" -- "$bin" table "$var" --grid logspace:-1:1:9 --jobs 1 --out "$tmp/t.txt"
same "$tmp/text" "$tmp/t.txt" "--out or --jobs changed the table"

# plan
expect 2 "plan no target" -- "$bin" plan "$sc"
for t in 0 1.01 x; do
  expect 2 "--target-cu $t" -- "$bin" plan "$sc" --target-cu "$t"
done
expect 0 "plan" -- "$bin" plan "$sc" --target-cu 0.95
contains "$tmp/out" "3.04" "plan least bandwidth"
printf '{"wan_usd_per_gbps_month": 200, "accelerator_usd_per_hour": 2.5, "accelerators": 8, "bandwith": [1]}\n' >"$tmp/c1.json"
expect 2 "cost unknown key" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/c1.json"
contains "$tmp/err" "bandwith: unknown key" "cost unknown key message"
printf '{"wan_usd_per_gbps_month": -1, "accelerator_usd_per_hour": 2.5, "accelerators": 8}\n' >"$tmp/c2.json"
expect 2 "cost negative" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/c2.json"
contains "$tmp/err" "wan_usd_per_gbps_month: must be" "cost range message"
printf '{"wan_usd_per_gbps_month": 1, "accelerators": 8}\n' >"$tmp/c3.json"
expect 2 "cost missing key" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/c3.json"
contains "$tmp/err" "accelerator_usd_per_hour: missing" "cost missing message"
expect 2 "cost file missing" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/nope.json"
expect 0 "plan cost" -- "$bin" plan "$var" --target-cu 0.95 --cost "$cost"
contains "$tmp/out" "cheapest overall" "plan cheapest"
contains "$tmp/out" "^cheapest that meets the target: slow at 10 " "plan cheapest line"
expect 0 "plan json" -- "$bin" plan "$var" --target-cu 0.95 --cost "$cost" --json --out "$tmp/p.json"
if command -v python3 >"$tmp/null"; then
  if python3 -m json.tool "$tmp/p.json" >"$tmp/null"; then ok; else bad "plan --json is not JSON"; fi
fi
contains "$tmp/p.json" '"cheapest": {"name": "slow", "gbps": 10' "plan json cheapest"

# plan --json carries the version and revision, as every JSON result
# (it had neither): the same two lines as `dilosim run` writes.
expect 0 "run for its version" -- "$bin" run "$sc"
sed -n 2,3p "$tmp/out" >"$tmp/run.version"
expect 0 "plan json version" -- "$bin" plan "$sc" --target-cu 0.9 --json
sed -n 2,3p "$tmp/out" >"$tmp/plan.version"
same "$tmp/plan.version" "$tmp/run.version" "plan json: version and revision"
contains "$tmp/plan.version" '^  "version": "0\.8\.0",$' "plan json: version"
contains "$tmp/plan.version" '^  "revision": "' "plan json: revision"

# The value columns are named after the swept key and its unit (with
# --key network.latency_ms they were grid_gbps and exact_gbps).
header() { # KEY... : the CSV header of a table over KEY
  "$bin" table "$sc" --csv --grid 1,2 --thresholds 0.5 "$@" | sed -n 2p
}
if [ "$(header --key network.latency_ms)" = "variant,threshold,grid_latency_ms,exact_latency_ms,cu_at_exact,method" ]
then ok; else bad "latency csv header: $(header --key network.latency_ms)"; fi
if [ "$(header --key network.bandwidth_gbps)" = "variant,threshold,grid_gbps,exact_gbps,cu_at_exact,method" ]
then ok; else bad "bandwidth csv header: $(header --key network.bandwidth_gbps)"; fi
if [ "$(header --key steps)" = "variant,threshold,grid_steps,exact_steps,cu_at_exact,method" ]
then ok; else bad "steps csv header: $(header --key steps)"; fi

# The paper scenarios count binary Gbit: their CSV says so at the end of
# its comment line; an SI scenario's line is as before.
p1b=$root/scenarios/paper/1b.json
expect 0 "table csv, binary Gbit" -- "$bin" table "$p1b" --variant diloco --csv --thresholds 0.5
if head -1 "$tmp/out" | grep -q '^# dilosim 0\.8\.0 ([^)]*); Gbit = 2^30 bits (network\.gbit binary)$'
then ok; else bad "binary Gbit comment: $(head -1 "$tmp/out")"; fi
expect 0 "table csv, SI Gbit" -- "$bin" table "$p1b" --variant diloco --csv --thresholds 0.5 --set network.gbit=si
if head -1 "$tmp/out" | grep -q '^# dilosim 0\.8\.0 ([^)]*)$'; then ok
else bad "SI Gbit comment: $(head -1 "$tmp/out")"; fi

# Defect: table and plan answered "what bandwidth does DP 1B need for 95%"
# with 206.5 and 197.5 Gbit/s: CU is not monotone there (the per-layer
# reductions' schedule, docs/reproduction.md), and each took a crossing
# inside its own grid's first bracket.  Both now give the least bandwidth
# from which CU stays >= 0.95 at every bandwidth evaluated, 215.5, and
# say that CU falls.
expect 0 "table: DP 1B at 95%" -- "$bin" table "$p1b" --variant data_parallel --thresholds 0.95 --csv
table_bw=$(awk -F, '$2 == 0.95 { printf "%.4g %s", $4, $6 }' "$tmp/out")
if [ "$table_bw" = "215.5 scan" ]; then ok; else bad "table: DP 1B at 95%: $table_bw"; fi
expect 0 "plan: DP 1B at 95%" -- "$bin" plan "$p1b" --variant data_parallel --target-cu 0.95 --json
plan_bw=$(grep -o '"least_gbps": [0-9.e+-]*' "$tmp/out" | awk '{ printf "%.4g", $2 }')
if [ "$plan_bw" = "215.5" ]; then ok; else bad "plan: DP 1B at 95%: $plan_bw"; fi
contains "$tmp/out" '"cu_falls_with_bandwidth": true' "plan: DP 1B: CU falls"
expect 0 "table text: DP 1B" -- "$bin" table "$p1b" --variant data_parallel --thresholds 0.95
contains "$tmp/out" "^     0.95             222.3           215.5          0.9500  scan$" "table text: DP 1B row"
contains "$tmp/out" "^note: CU is not monotone: it falls from " "table text: DP 1B note"
expect 0 "plan text: DP 1B" -- "$bin" plan "$p1b" --variant data_parallel --target-cu 0.95
contains "$tmp/out" "^data_parallel          215.5   0.9500 " "plan text: DP 1B row"
contains "$tmp/out" "^note: data_parallel: CU falls somewhere as bandwidth grows;$" "plan text: DP 1B note"

# Progress: nothing on stderr off a terminal; with --progress a last line
# counting the table's tasks (9 grid points and 3 rows).
expect 0 "table quiet" -- "$bin" table "$sc" --csv --thresholds 0.5,0.9,0.99 --grid logspace:-1:1:9
if [ -s "$tmp/err" ]; then bad "table wrote to stderr off a terminal"; else ok; fi
expect 0 "table --progress" -- \
  "$bin" table "$sc" --csv --thresholds 0.5,0.9,0.99 --grid logspace:-1:1:9 --progress
contains "$tmp/err" "one_layer_dp.json: done, 12/12, .* elapsed$" "table --progress"
lines "$tmp/err" 1 "table --progress: one line"
expect 0 "plan --progress" -- "$bin" plan "$var" --target-cu 0.9 --progress
contains "$tmp/err" "variants.json: done, \([0-9]*\)/\1, .* elapsed$" "plan --progress"
expect 0 "plan quiet" -- "$bin" plan "$var" --target-cu 0.9
if [ -s "$tmp/err" ]; then bad "plan wrote to stderr off a terminal"; else ok; fi

# Parse once: "-" reads the scenario from standard input, once, for table,
# plan and sweep (they used to read the file again at every point).
expect 0 "table -" -- sh -c '"$1" table - --csv --grid 1,4,16 <"$2"' sh "$bin" "$sc"
cp "$tmp/out" "$tmp/stdin.csv"
expect 0 "table file" -- "$bin" table "$sc" --csv --grid 1,4,16
same "$tmp/stdin.csv" "$tmp/out" "table - equals table FILE"
expect 0 "plan -" -- sh -c '"$1" plan - --target-cu 0.9 <"$2"' sh "$bin" "$sc"
sed 1d "$tmp/out" >"$tmp/stdin.txt"
contains "$tmp/out" "^plan for -: compute utilization >= 0.9" "plan - title"
expect 0 "plan file" -- "$bin" plan "$sc" --target-cu 0.9
sed 1d "$tmp/out" >"$tmp/file.txt"
same "$tmp/stdin.txt" "$tmp/file.txt" "plan - equals plan FILE"
expect 0 "table - --variant" -- sh -c '"$1" table - --variant slow --grid 1,4 <"$2"' sh "$bin" "$var"
contains "$tmp/out" "^slow: compute utilization" "table - --variant"
expect 2 "table - with variants" -- sh -c '"$1" table - --grid 1,4 <"$2"' sh "$bin" "$var"
contains "$tmp/err" "^<stdin>: read once, it serves one variant only (expected a file for its 2 variants, or one --variant)$" "table - with variants"
expect 2 "plan - with two --variant" -- sh -c '"$1" plan - --target-cu 0.9 --variant slow --variant fast <"$2"' sh "$bin" "$var"
contains "$tmp/err" "^<stdin>: read once, it serves one variant only (expected a file for 2 variants, or one --variant)$" "plan - with two --variant"

# Error codes: a run's input error is exit 2, as the loader's (table and
# plan made every run_simulate failure a runtime one, exit 1; sweep too).
# The fault trace is a FIFO that hands one text to each reading: valid to
# the loads (a method's check, then the point's), garbage to the run.
# feed PID FIFO TEXT...: each TEXT to one opening of FIFO by process PID
# (held open until PID has it open, so one opening gets one TEXT; each
# wait gives up after 5 s or when PID is gone).
feed() {
  pid=$1 fifo=$2; shift 2
  for text in "$@"; do
    exec 3<>"$fifo"   # never blocks; the reader's open then returns
    printf '%s' "$text" >&3
    i=0; until ls -l "/proc/$pid/fd" 2>"$tmp/reap" | grep -q -- "$fifo" ||
               ! kill -0 "$pid" 2>"$tmp/reap" || [ $i -ge 500 ]; do
      sleep 0.01; i=$((i + 1)); done
    exec 3>&-         # the end of the text for the reader
    i=0; while ls -l "/proc/$pid/fd" 2>"$tmp/reap" | grep -q -- "$fifo" &&
               [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
  done
}
mkdir "$tmp/fifo"
mkfifo "$tmp/fifo/trace.txt"
printf '%s\n' '{"model": {"params": 1e6, "layers": 1, "step_time_s": 0.1},' \
  '"workers": {"count": 2}, "method": {"name": "dp"},' \
  '"faults": {"trace": "trace.txt"}, "steps": 20}' >"$tmp/fifo/s.json"
good='30 1 down
90 1 up
'
for cmd in table plan sweep; do
  case $cmd in
    table) more="--grid 1" ;;
    plan) more="--target-cu 0.9" ;;
    sweep) more="--vary network.bandwidth_gbps=1" ;;
  esac
  "$bin" $cmd "$tmp/fifo/s.json" $more --jobs 1 >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  feed "$pid" "$tmp/fifo/trace.txt" "$good" "$good" "1.5x up"
  i=0; while kill -0 "$pid" 2>"$tmp/reap" && [ $i -lt 500 ]; do
    sleep 0.01; i=$((i + 1)); done
  kill "$pid" 2>"$tmp/reap"   # a reader left waiting (a bug): no hang
  wait "$pid"; got=$?
  if [ "$got" = 2 ]; then ok; else bad "$cmd: a run's input error: exit $got, expected 2"; cat "$tmp/err"; fi
  contains "$tmp/err" "trace.txt:1: bad time '1.5x'" "$cmd: a run's input error: message"
  lines "$tmp/err" 1 "$cmd: a run's input error: one line"
done

finish cli_table
