#!/bin/sh
# cli_train.sh -- command-line tests of `dilosim train`: help, the CSV
# (header, rows), determinism across runs and thread counts (--jobs, and
# --threads, its former name), where the summary goes and what it holds
# (version, revision, host_time_s), exit codes (out of memory: 1), output
# files written whole or not at all, a run in which no step completes,
# the train.model.layers range, and every shipped scenarios/train example
# (a few steps each).  Seconds.
# usage: tests/cli_train.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

smoke=$root/scenarios/train/mlp_smoke.json

expect 0 "train help" -- "$bin" train --help
contains "$tmp/out" "usage: dilosim train" "train help"
contains "$tmp/out" "eval_loss_outer_nats" "train help"
contains "$tmp/out" "--jobs N" "train help"
lacks "$tmp/out" "--threads" "train help: no --threads"
expect 0 "help lists train" -- "$bin" --help
contains "$tmp/out" "train SCENARIO.json" "help lists train"

# A tiny MLP run: 60 steps, a row every 10 -> the version comment, the
# header and 6 rows.  Without
# --out the CSV goes to stdout and the summary to stderr.
expect 0 "smoke to stdout" -- "$bin" train "$smoke"
cp "$tmp/out" "$tmp/stdout.csv"
lines "$tmp/stdout.csv" 8 "smoke rows"
contains "$tmp/stdout.csv" "^# dilosim 0\.8\.0 (.*)$" "version comment"
head -1 "$tmp/stdout.csv" | grep -q '^# dilosim ' && ok || bad "version comment first"
sed -n 2p "$tmp/stdout.csv" >"$tmp/header"
echo "step,tokens,train_loss_nats,eval_loss_outer_nats,eval_loss_replica_nats,eval_loss_average_nats,bytes_sent,entropy_floor_nats,sim_time_s,sim_compute_utilization,sync_delay_mean_steps,sync_delay_max_steps,wan_bytes" >"$tmp/want"
same "$tmp/header" "$tmp/want" "CSV header"
cp "$tmp/want" "$tmp/want_header"
contains "$tmp/err" '"eval_loss_outer_nats"' "summary on stderr"
contains "$tmp/err" '"gflops_per_s"' "summary on stderr"
# the summary: the build like every JSON result, this machine's time as
# host_time_s (wall_time_s is run's simulated time)
head -3 "$tmp/err" >"$tmp/head"
printf '{\n  "version": "%s",\n  "revision": "%s",\n' \
  "$("$bin" --version | awk '{ print $2 }')" \
  "$(sed -n 's/^# dilosim [^ ]* (\(.*\))$/\1/p' "$tmp/stdout.csv")" >"$tmp/want"
same "$tmp/head" "$tmp/want" "summary: version and revision first"
contains "$tmp/err" '"host_time_s": ' "summary: host_time_s"
lacks "$tmp/err" '"wall_time_s"' "summary: no wall_time_s"
tail -1 "$tmp/stdout.csv" | grep -q '^60,15360,' && ok || bad "last row: step 60, 15360 tokens"

# --out: the same CSV, the summary on stdout; runs repeat byte for byte,
# whatever the thread count.
expect 0 "smoke --out" -- "$bin" train "$smoke" --out "$tmp/a.csv"
same "$tmp/a.csv" "$tmp/stdout.csv" "--out vs stdout"
contains "$tmp/out" '"bytes_per_step"' "summary on stdout"
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" 2>"$tmp/null"; then ok; else bad "summary is not JSON"; fi
"$bin" train "$smoke" --out "$tmp/b.csv" >"$tmp/null"
same "$tmp/a.csv" "$tmp/b.csv" "two runs"
"$bin" train "$smoke" --jobs 1 --out "$tmp/t1.csv" >"$tmp/null"
"$bin" train "$smoke" --jobs 2 --out "$tmp/t2.csv" >"$tmp/null"
same "$tmp/t1.csv" "$tmp/t2.csv" "--jobs 1 vs 2"
same "$tmp/t1.csv" "$tmp/a.csv" "--jobs 1 vs the default"
expect 0 "--threads, the former --jobs" -- "$bin" train "$smoke" --threads 1 --out "$tmp/t3.csv"
same "$tmp/t3.csv" "$tmp/t1.csv" "--threads 1 vs --jobs 1"

# Options: --set, fewer columns, eval every step, DP.
expect 0 "set" -- "$bin" train "$smoke" --set 'train.eval=["outer"]' --set steps=5 --set train.eval_interval=1
lines "$tmp/out" 7 "eval every step"
contains "$tmp/out" "^step,tokens,train_loss_nats,eval_loss_outer_nats,bytes_sent,entropy_floor_nats,sim_time_s," "outer-only header"
expect 0 "dp" -- "$bin" train "$smoke" --set method.name=dp --set steps=4 --set train.eval_interval=0
lines "$tmp/out" 3 "eval_interval 0: the last step only"

# Input errors: exit 2, one line, no output file, no temporary left.
expect 2 "no train section" -- "$bin" train "$root/scenarios/default.json" --out "$tmp/none.csv"
contains "$tmp/err" "default.json: train: missing (dilosim train needs a \"train\" section)" "missing section message"
expect 2 "bad key" -- "$bin" train "$smoke" --set train.modle.d=3 --out "$tmp/none.csv"
contains "$tmp/err" "train.modle: unknown key" "bad key message"
expect 2 "bad value" -- "$bin" train "$smoke" --set train.model.kind=rnn --out "$tmp/none.csv"
expect 2 "bad jobs" -- "$bin" train "$smoke" --jobs 0 --out "$tmp/none.csv"
contains "$tmp/err" "--jobs must be an integer in 1..256 (got '0')" "bad jobs message"
expect 2 "bad jobs 257" -- "$bin" train "$smoke" --jobs 257 --out "$tmp/none.csv"
expect 2 "bad threads" -- "$bin" train "$smoke" --threads x --out "$tmp/none.csv"
contains "$tmp/err" "--threads must be an integer in 1..256 (got 'x')" "bad threads message"
# train.model.layers: 1..10000 at the key, as the model allows
expect 2 "layers 10001" -- "$bin" train "$smoke" --set train.model.layers=10001 --out "$tmp/none.csv"
contains "$tmp/err" "train.model.layers: 10001 is out of range (expected an integer in 1..10000)" "layers 10001 message"
sed 's/"layers": 2,/"layers": 10001,/' "$smoke" >"$tmp/layers.json"
expect 2 "layers 10001 in the file" -- "$bin" train "$tmp/layers.json" --out "$tmp/none.csv"
contains "$tmp/err" "^$tmp/layers.json:[0-9]*:[0-9]*: train.model.layers: 10001 is out of range" "layers 10001 at the key"
expect 0 "layers 10000" -- "$bin" train "$smoke" --set train.model.layers=10000 \
  --set train.model.d=1 --set train.model.mlp_ratio=1 --set steps=1 \
  --set train.eval_batches=1 --out "$tmp/layers.csv"
contains "$tmp/out" '"params": ' "layers 10000 trains"
expect 2 "unknown variant" -- "$bin" train "$smoke" --variant nope --out "$tmp/none.csv"
expect 2 "no scenario" -- "$bin" train
absent "$tmp/none.csv" "input errors"
no_temp "input errors"
# A text file too short for the sequences is an input error too.
printf 'tiny' >"$tmp/tiny.txt"
expect 2 "text too short" -- "$bin" train "$root/scenarios/train/text.json" --set train.data.path="$tmp/tiny.txt" --out "$tmp/none.csv"
contains "$tmp/err" "too few" "text too short message"
absent "$tmp/none.csv" "text too short"
# An output file that cannot be written: exit 1.
expect 1 "unwritable --out" -- "$bin" train "$smoke" --out "$tmp/no/such/dir.csv"
# A model too large for the memory is a runtime failure: exit 1, one
# line, no file (under a 1 GB address-space limit: 2^40 parameters).
# Not under the sanitizers (CLI_QUICK): ASan reserves terabytes of
# address space at start and cannot run under such a limit.
if [ -z "$CLI_QUICK" ]; then
  (ulimit -v 1000000 2>"$tmp/null"
   "$bin" train "$smoke" --set train.model.vocab=16777216 --set train.model.d=65536 \
     --set steps=1 --out "$tmp/big.csv" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc")
  if [ "$(cat "$tmp/rc")" = 1 ]; then ok; else bad "out of memory: exit $(cat "$tmp/rc"), expected 1"; fi
  contains "$tmp/err" "mlp_smoke.json: train: nn: out of memory$" "out of memory message"
  lines "$tmp/err" 1 "out of memory: one line"
  absent "$tmp/big.csv" "out of memory"
fi

# The sparse and integer codecs train, with finite losses: the last row's
# train and outer losses are numbers (not nan or inf).
expect 0 "topk" -- "$bin" train "$smoke" --set method.codec=topk --set method.k_fraction=0.1
tail -1 "$tmp/out" | awk -F, '$1 == 60 && $3 + 0 == $3 && $3 > 0 && $3 < 10 &&
  $4 + 0 == $4 && $4 > 0 && $4 < 10 { ok = 1 } END { exit !ok }' && ok ||
  bad "topk: last row $(tail -1 "$tmp/out")"
expect 0 "int8" -- "$bin" train "$smoke" --set method.codec=int8
tail -1 "$tmp/out" | awk -F, '$1 == 60 && $3 > 0 && $3 < 10 && $4 > 0 &&
  $4 < 10 { ok = 1 } END { exit !ok }' && ok || bad "int8: last row $(tail -1 "$tmp/out")"
expect 2 "k_fraction 0" -- "$bin" train "$smoke" --set method.k_fraction=0
contains "$tmp/err" "method.k_fraction" "k_fraction 0 message"

# The stateful compressors train too, their runs repeat on two threads,
# and a demo chunk smaller than its kept coefficients is refused, with
# nothing written.
for c in powersgd demo; do
  expect 0 "$c" -- "$bin" train "$smoke" --set method.codec=$c --out "$tmp/$c.csv"
  tail -1 "$tmp/$c.csv" | awk -F, '$1 == 60 && $3 > 0 && $3 < 10 && $4 > 0 &&
    $4 < 10 { ok = 1 } END { exit !ok }' && ok || bad "$c: last row $(tail -1 "$tmp/$c.csv")"
  "$bin" train "$smoke" --set method.codec=$c --jobs 2 --out "$tmp/${c}2.csv" >"$tmp/null"
  same "$tmp/$c.csv" "$tmp/${c}2.csv" "$c: --jobs 2"
done
expect 2 "demo_topk over demo_chunk" -- "$bin" train "$smoke" --set method.demo_chunk=4 --out "$tmp/none.csv"
contains "$tmp/err" "method.demo_topk: 8 coefficients of a chunk of 4 (expected at most method.demo_chunk)" "demo_topk message"
absent "$tmp/none.csv" "demo_topk over demo_chunk"

# Every shipped example trains (two steps, one small eval).
for f in "$root"/scenarios/train/*.json; do
  expect 0 "example $f" -- "$bin" train "$f" --set steps=2 --set train.eval_batches=1 --set train.eval_interval=0
  lines "$tmp/out" 3 "example $f"
done

# Defect 6: `train > /dev/full` exited 0 with the CSV lost.
if [ -c /dev/full ]; then
  "$bin" train "$smoke" >/dev/full 2>"$tmp/err"; got=$?
  if [ "$got" = 1 ]; then ok; else bad "train >/dev/full: exit $got"; fi
  contains "$tmp/err" "^dilosim train: write error: No space left on device$" "train >/dev/full"
  lines "$tmp/err" 1 "train >/dev/full: one line"
  # With --out the summary goes to stdout: its loss is reported too.
  "$bin" train "$smoke" --out "$tmp/full.csv" >/dev/full 2>"$tmp/err"; got=$?
  if [ "$got" = 1 ]; then ok; else bad "train --out >/dev/full: exit $got"; fi
  contains "$tmp/err" "^dilosim train: write error: No space left on device$" \
    "train --out >/dev/full"
fi

# No step completes (both workers down from the start): exit 0, the CSV
# has its comment and header and no row, the losses are null, stderr says
# why.
printf '0 0 down\n0 1 down\n' >"$tmp/down.txt"
sed "s|\"seed\": 1,|\"seed\": 1, \"faults\": {\"trace\": \"$tmp/down.txt\"},|" \
  "$smoke" >"$tmp/down.json"
expect 0 "no step completes" -- "$bin" train "$tmp/down.json" --out "$tmp/down.csv"
lines "$tmp/down.csv" 2 "no step completes: comment and header"
sed -n 2p "$tmp/down.csv" >"$tmp/header"
same "$tmp/header" "$tmp/want_header" "no step completes: the header"
contains "$tmp/out" '"steps": 0,' "no step completes: steps"
contains "$tmp/out" '"train_loss_nats": null,' "no step completes: null train loss"
contains "$tmp/out" '"eval_loss_outer_nats": null,' "no step completes: null eval loss"
contains "$tmp/out" '"eval_loss_average_nats": null,' "no step completes: null average"
contains "$tmp/out" '"sim_stop_reason": "every worker is down for good"' "no step completes: the reason"
contains "$tmp/err" "^dilosim train: no step completed: every worker is down for good; the CSV has its header and no row$" "no step completes: stderr"
lines "$tmp/err" 1 "no step completes: one line"
# Progress counts steps (60), not evaluations (6); none off a terminal.
# A diverged loss stops the coupled run: exit 1, one line, no file.
expect 1 "diverged loss" -- "$bin" train "$smoke" --set train.inner.lr=1e6 \
  --set train.inner.clip=0 --out "$tmp/nan.csv"
lines "$tmp/err" 1 "diverged loss: one line"
contains "$tmp/err" "mlp_smoke.json: train: replica 0 step [0-9]*: loss nan$" \
  "diverged loss message"
if [ -e "$tmp/nan.csv" ]; then bad "diverged loss left a file"; else ok; fi
# train.target_loss: the first row at or below it, or none.
expect 0 "target reached" -- "$bin" train "$smoke" --set train.target_loss=3 \
  --out "$tmp/t.csv"
contains "$tmp/out" '"target_reached": true' "target reached"
contains "$tmp/out" '"target_step": 10,' "target step: the first row"
contains "$tmp/out" '"time_to_target_s": ' "time to target"
expect 0 "target missed" -- "$bin" train "$smoke" --set train.target_loss=0.5 \
  --out "$tmp/t.csv"
contains "$tmp/out" '"target_reached": false' "target missed"
if grep -q '"target_step"' "$tmp/out"; then bad "a missed target has a step"; else ok; fi
# --lockstep: the reference, without the sim_* columns, the same numerics.
expect 0 "lockstep" -- "$bin" train "$smoke" --lockstep --out "$tmp/lock.csv"
expect 0 "coupled" -- "$bin" train "$smoke" --out "$tmp/coupled.csv"
grep -v '^#' "$tmp/coupled.csv" | cut -d, -f1-8 >"$tmp/cut.csv"
grep -v '^#' "$tmp/lock.csv" >"$tmp/lock_rows.csv"
same "$tmp/cut.csv" "$tmp/lock_rows.csv" "lockstep = coupled (wait, no faults)"
# A slow network reaches the clock, not the loss (late: wait).
expect 0 "slow link" -- "$bin" train "$smoke" --set network.bandwidth_gbps=0.1 \
  --out "$tmp/slow.csv"
grep -v '^#' "$tmp/slow.csv" | cut -d, -f1-8 >"$tmp/slow_cut.csv"
same "$tmp/slow_cut.csv" "$tmp/lock_rows.csv" "slow link: same loss with wait"
t_fast=$(tail -1 "$tmp/coupled.csv" | cut -d, -f9)
t_slow=$(tail -1 "$tmp/slow.csv" | cut -d, -f9)
awk -v a="$t_slow" -v b="$t_fast" 'BEGIN { exit !(a > b) }' && ok ||
  bad "slow link: sim_time_s $t_slow not above $t_fast"
expect 0 "train --progress" -- "$bin" train "$smoke" --out "$tmp/p.csv" --progress
contains "$tmp/err" "mlp_smoke.json: done, 60/60, .* elapsed$" "train --progress"
expect 0 "train quiet" -- "$bin" train "$smoke" --out "$tmp/p.csv"
if [ -s "$tmp/err" ]; then bad "train wrote to stderr off a terminal"; else ok; fi

finish cli_train
