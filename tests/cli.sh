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
for c in run sweep merge table plan train report; do
  expect 0 "$c help" -- "$bin" $c --help
  contains "$tmp/out" "--quiet" "$c help lists --quiet"
  contains "$tmp/out" "--progress" "$c help lists --progress"
done
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
contains "$tmp/out" '^  "overlap": "inner",$' "run output: overlap"
contains "$tmp/out" '^  "rule": "paper",$' "run output: rule"
lacks "$tmp/out" tau_per_worker "run output: one tau"
cp "$tmp/out" "$tmp/first"
expect 0 "run per-worker tau" -- "$bin" run "$sc" --set 'method.tau=[1, 3]' \
  --set method.overlap=inner
contains "$tmp/out" '^  "tau": 1,$' "run output: the least tau"
contains "$tmp/out" '^  "tau_per_worker": \[1, 3\],$' "run output: tau_per_worker"
"$bin" run "$sc" >"$tmp/second"
if cmp -s "$tmp/first" "$tmp/second"; then ok; else bad "two runs differ"; fi
# the network keys beyond the ideal model: only when a scenario sets them
for k in transport completion efficiency collective_overhead_ms \
         latency_matrix_ms ring_order dp_bucket_mb bucket_mb host_gbps; do
  lacks "$tmp/first" "\"$k\"" "run output: no $k by default"
done
expect 0 "run per-layer buckets" -- "$bin" run "$sc" --set method.bucket_mb=0
contains "$tmp/out" '^  "bucket_mb": 0,$' "run output: bucket_mb when not 25"
expect 0 "run tcp" -- "$bin" run "$root/scenarios/examples/tcp_idle.json" --variant h10
contains "$tmp/out" '^  "transport": "tcp",$' "run output: transport"
contains "$tmp/out" '^  "tcp_init_window_kb": 14.48,$' "run output: initial window"
expect 0 "run far site" -- "$bin" run "$root/scenarios/examples/far_site.json" \
  --set 'network.ring_order=[2, 0, 1]' --set network.efficiency=0.9
contains "$tmp/out" '^  "latency_matrix_ms": \[\[0, 10, 50\], \[10, 0, 50\], \[50, 50, 0\]\],$' \
  "run output: latency matrix"
lacks "$tmp/out" '"latency_ms"' "run output: no latency_ms with a matrix"
contains "$tmp/out" '^  "ring_order": \[2, 0, 1\],$' "run output: ring order"
contains "$tmp/out" '^  "completion": "member",$' "run output: completion"
contains "$tmp/out" '^  "efficiency": 0.9,$' "run output: efficiency"
expect 2 "member completion with late continue" -- "$bin" run \
  "$root/scenarios/examples/far_site.json" --set method.late=continue
contains "$tmp/err" 'network.completion: "member" cannot be combined with method.late "continue"' \
  "member completion refuses late continue"

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

# The trace and the result cannot share stdout (two JSON documents).
expect 2 "trace and result on stdout" -- "$bin" run "$sc" --trace -
contains "$tmp/err" "both on stdout" "trace and result on stdout"

# --trace writes a valid Chrome trace.
expect 0 "trace" -- "$bin" run "$sc" --set steps=30 --trace "$tmp/trace.json"
contains "$tmp/trace.json" '"forward L0"' "trace"
contains "$tmp/trace.json" '"allreduce L' "trace"
if command -v python3 >"$tmp/null"; then
  if python3 -m json.tool "$tmp/trace.json" >"$tmp/null"; then ok; else bad "trace is not JSON"; fi
  if python3 -m json.tool "$tmp/first" >"$tmp/null"; then ok; else bad "result is not JSON"; fi
fi

# --- Output files -----------------------------------------------------
# Defect 1: --out and --trace replaced whatever was at the path (a FIFO,
# a symbolic link, as root even /dev/null) with a regular file.  A FIFO
# receives the data and stays a FIFO; a link is followed, its target
# replaced, and it stays a link.  (No test touches a system file.)
mkdir "$tmp/o"
mkfifo "$tmp/o/fifo"
cat "$tmp/o/fifo" >"$tmp/o/from_fifo" &
reader=$!
expect 0 "out to a FIFO" -- "$bin" run "$sc" --out "$tmp/o/fifo"
reap "$reader"
if [ -p "$tmp/o/fifo" ]; then ok; else bad "FIFO replaced"; fi
same "$tmp/o/from_fifo" "$tmp/first" "data through the FIFO"
mkfifo "$tmp/o/tfifo"
cat "$tmp/o/tfifo" >"$tmp/o/trace_from_fifo" &
reader=$!
expect 0 "trace to a FIFO" -- "$bin" run "$sc" --set steps=5 --trace "$tmp/o/tfifo"
reap "$reader"
if [ -p "$tmp/o/tfifo" ]; then ok; else bad "trace FIFO replaced"; fi
contains "$tmp/o/trace_from_fifo" '"traceEvents"' "trace through the FIFO"
echo old >"$tmp/o/real.json"
chmod 640 "$tmp/o/real.json"
ln -s real.json "$tmp/o/link.json"
expect 0 "out to a link" -- "$bin" run "$sc" --out "$tmp/o/link.json"
if [ -L "$tmp/o/link.json" ]; then ok; else bad "link replaced"; fi
same "$tmp/o/real.json" "$tmp/first" "link target written"
case $(ls -l "$tmp/o/real.json") in -rw-r-----*) ok ;; *) bad "mode not kept" ;; esac
if ls "$tmp/o" | grep -q tmp; then bad "temporary file left"; else ok; fi

# Defect 4: a path of 1024..1029 bytes was written to its 1023-byte
# prefix.  A path of 1100 bytes in a deep directory is written exactly
# there; a name the system cannot take is exit 2 with one line.
deep=$tmp/o
seg=dddddddddddddddddddddddddddddddddddddddddddddddddd
while [ $((${#deep} + 51)) -lt 1000 ]; do deep=$deep/$seg; done
mkdir -p "$deep"
long=$deep/
while [ ${#long} -lt 1100 ]; do long=${long}f; done
expect 0 "1100-byte --out" -- "$bin" run "$sc" --out "$long"
same "$long" "$tmp/first" "1100-byte path"
for n in 1024 1027 1029; do
  p=$deep/
  while [ ${#p} -lt $n ]; do p=${p}g; done
  expect 0 "$n-byte --out" -- "$bin" run "$sc" --out "$p"
  same "$p" "$tmp/first" "$n-byte path"
  pre=$(printf %s "$p" | cut -c1-1023)
  absent "$pre" "$n-byte path: 1023-byte prefix"
done
name=$(printf '%300s' | tr ' ' n)
expect 2 "name too long" -- "$bin" run "$sc" --out "$tmp/o/$name"
contains "$tmp/err" "File name too long" "name too long message"
lines "$tmp/err" 1 "name too long: one line"

# Defect 6: a stdout that fails (a full disk) gave exit 0 (train) or a
# message with garbage (run, table, plan).  Now: exit 1 and
# "dilosim CMD: write error: <why>".  /dev/full is opened, never replaced.
if [ -c /dev/full ]; then
  for cmd in run table plan; do
    case $cmd in plan) more="--target-cu 0.5" ;; table) more="--grid 1,10" ;; *) more= ;; esac
    "$bin" $cmd "$sc" $more >/dev/full 2>"$tmp/err"; got=$?
    if [ "$got" = 1 ]; then ok; else bad "$cmd >/dev/full: exit $got"; fi
    contains "$tmp/err" "^dilosim $cmd: write error: No space left on device$" "$cmd >/dev/full"
    lines "$tmp/err" 1 "$cmd >/dev/full: one line"
  done
  if [ -c /dev/full ]; then ok; else bad "/dev/full is no longer a device"; fi
fi

# Defect 11: SIGTERM during a long run left FILE.tmpXXXXXX behind.
mkdir "$tmp/sig"
"$bin" run "$sc" --set steps=100000000 --trace "$tmp/sig/trace.json" >"$tmp/sig.out" 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ] && ! ls "$tmp/sig" | grep -q tmp; do sleep 0.05; i=$((i + 1)); done
if ls "$tmp/sig" | grep -q tmp; then ok; else bad "no temporary file while running"; fi
sleep 0.2
kill -TERM "$pid"
{ wait "$pid"; } 2>"$tmp/null"; got=$?  # (no "Terminated" from the shell)
if [ "$got" = 143 ]; then ok; else bad "SIGTERM: exit $got, expected 143"; fi
if [ -z "$(ls "$tmp/sig")" ]; then ok; else bad "SIGTERM left: $(ls "$tmp/sig")"; fi

# --- Options (getopt_long) --------------------------------------------
expect 0 "--out=FILE --set=K=V" -- \
  "$bin" run "$sc" --out="$tmp/eq.json" --set=network.bandwidth_gbps=0.5
"$bin" run "$sc" --set network.bandwidth_gbps=0.5 >"$tmp/sp.json"
same "$tmp/eq.json" "$tmp/sp.json" "--opt=VALUE forms"
expect 0 "options before the scenario" -- "$bin" run --out "$tmp/before.json" "$sc"
same "$tmp/before.json" "$tmp/first" "options before the scenario"
cp "$sc" "$tmp/-dash.json"
abs=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
(cd "$tmp" && "$abs" run -- -dash.json >"$tmp/dash.out" 2>"$tmp/err"); got=$?
if [ "$got" = 0 ]; then ok; else bad "-- ends options: exit $got"; cat "$tmp/err"; fi
same "$tmp/dash.out" "$tmp/first" "-- ends options"
expect 2 "unknown option after --" -- "$bin" run "$sc" -- --bogus
contains "$tmp/err" "unexpected argument '--bogus'" "after --"
expect 2 "unknown short option" -- "$bin" run "$sc" -x
contains "$tmp/err" "unknown option '-x'" "unknown short option"
expect 2 "unknown short option in a cluster" -- "$bin" run "$sc" -xy
contains "$tmp/err" "unknown option '-x'" "unknown short option in a cluster"
expect 2 "flag with a value" -- "$bin" table "$sc" --csv=1
contains "$tmp/err" "dilosim table: --csv takes no value" "flag with a value"
expect 2 "ambiguous prefix" -- "$bin" sweep "$sc" --v x
contains "$tmp/err" "unknown or ambiguous option '--v'" "ambiguous prefix"
# "-" is the scenario argument (stdin, once the loader reads it), never
# an option.
"$bin" run - <"$sc" >"$tmp/out" 2>"$tmp/err"
if grep -q "option\|unexpected" "$tmp/err"; then bad "'-' taken for an option"; else ok; fi
expect 0 "-h" -- "$bin" table -h
contains "$tmp/out" "usage: dilosim table" "-h"
expect 0 "--quiet" -- "$bin" run "$sc" --quiet
if [ -s "$tmp/err" ]; then bad "--quiet wrote to stderr"; else ok; fi
expect 0 "--progress" -- "$bin" run "$sc" --progress
contains "$tmp/err" "default.json: " "--progress line"
if grep -q "$(printf '\r')" "$tmp/err"; then bad "--progress wrote a carriage return"; else ok; fi
expect 0 "--version" -- "$bin" --version
contains "$tmp/out" "^dilosim 0\.8\.0 (.*)$" "--version"
cp "$tmp/out" "$tmp/version"
expect 0 "version" -- "$bin" version
same "$tmp/out" "$tmp/version" "version and --version"
# The result names the same revision as --version (it once said "unknown").
rev=$(sed -n 's/^dilosim 0\.8\.0 (\(.*\))$/\1/p' "$tmp/version")
expect 0 "run for its revision" -- "$bin" run "$sc" --set steps=10
contains "$tmp/out" "\"revision\": \"$rev\"" "run revision is --version's"
if command -v taskset >"$tmp/which" && taskset -c 0 true 2>"$tmp/which"; then
  # --jobs defaults to the CPUs of the affinity mask: same bytes, and a
  # sweep on one allowed CPU runs one thread (its CPU time <= wall time).
  expect 0 "taskset sweep" -- taskset -c 0 "$bin" sweep "$root/tests/data/sweep/tiny.json"
  "$bin" sweep "$root/tests/data/sweep/tiny.json" --jobs 1 >"$tmp/j1.csv"
  same "$tmp/out" "$tmp/j1.csv" "taskset sweep"
fi

# Every shipped scenario loads and runs (shortened; skipped under the
# sanitizers, CLI_QUICK=1).

[ -n "$CLI_QUICK" ] || for f in "$root"/scenarios/*.json "$root"/scenarios/*/*.json; do
  expect 0 "scenario $f" -- "$bin" run "$f" --set steps=300
done

sh "$root/tests/cli_plots.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_table.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_plan.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_sweep.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_mpi.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_demo.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_readme.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_train.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_report.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_interactive.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_docs.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_install.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_rig.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_inputs.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_setfrom.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_calibrate.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_explain.sh" "$bin" || fail=$((fail + 1))
sh "$root/tests/cli_style.sh" "$bin" || fail=$((fail + 1))
finish cli
