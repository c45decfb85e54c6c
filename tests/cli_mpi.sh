#!/bin/sh
# cli_mpi.sh -- command-line tests of sharded and MPI sweeps: --shard K/N
# and `dilosim merge` (shards 1..3 merged are the serial sweep's bytes;
# every refusal is one line, exit 2, nothing written), then, when
# dilosim-mpi is built next to dilosim, `mpirun -np 3 dilosim-mpi` sweep,
# table and plan against the serial bytes, and a rank killed midway: the
# run fails with one line, keeps FILE.partial, and --resume finishes it.
# usage: tests/cli_mpi.sh [path/to/dilosim]   (run by tests/cli.sh)
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
data=$root/tests/data/sweep
. "$root/tests/cli_lib.sh"

tiny=$data/tiny.json slow=$data/slow.json

# --- Shards and merge -------------------------------------------------
expect 0 "merge help" -- "$bin" merge --help
contains "$tmp/out" "usage: dilosim merge PART" "merge help"
expect 0 "sweep help" -- "$bin" sweep --help
contains "$tmp/out" "--shard K/N" "sweep help lists --shard"
expect 0 "main help" -- "$bin" --help
contains "$tmp/out" "merge PART" "main help lists merge"
for bad in 0/3 4/3 1/0 x 1/3/4 -1/2; do
  expect 2 "shard $bad" -- "$bin" sweep "$tiny" --shard "$bad" --out "$tmp/e.csv"
  contains "$tmp/err" "^dilosim sweep: --shard must be K/N with 1 <= K <= N" "shard $bad"
  lines "$tmp/err" 1 "shard $bad: one line"
done
expect 2 "shard to stdout" -- "$bin" sweep "$tiny" --shard 1/2
contains "$tmp/err" "--shard needs --out FILE" "shard to stdout"
absent "$tmp/e.csv" "bad shard"

expect 0 "serial stdout" -- "$bin" sweep "$tiny" --jobs 2
cp "$tmp/out" "$tmp/serial.rows"
expect 0 "serial" -- "$bin" sweep "$tiny" --jobs 2 --out "$tmp/serial.csv"
for k in 1 2 3; do
  expect 0 "shard $k/3" -- "$bin" sweep "$tiny" --shard $k/3 --out "$tmp/s$k.csv"
done
if head -1 "$tmp/s2.csv" |
   grep -q '^# dilosim sweep digest [0-9a-f]\{16\} shard 2/3 of 12 points (dilosim '; then ok
else bad "shard line: $(head -1 "$tmp/s2.csv")"; fi
expect 0 "merge" -- "$bin" merge "$tmp/s3.csv" "$tmp/s1.csv" "$tmp/s2.csv" --out "$tmp/m.csv"
same "$tmp/m.csv" "$tmp/serial.csv" "merged shards"
expect 0 "merge to stdout" -- "$bin" merge "$tmp/s1.csv" "$tmp/s2.csv" "$tmp/s3.csv"
same "$tmp/out" "$tmp/serial.rows" "merged shards on stdout"

# Refusals: one line naming the file (or the shard), exit 2, no file.
refuse() { # WHAT PATTERN PART...
  what=$1 pat=$2; shift 2
  expect 2 "merge: $what" -- "$bin" merge "$@" --out "$tmp/r.csv"
  contains "$tmp/err" "$pat" "merge: $what"
  lines "$tmp/err" 1 "merge: $what: one line"
  absent "$tmp/r.csv" "merge: $what"
  no_temp "merge: $what"
}
expect 0 "another sweep's shard" -- \
  "$bin" sweep "$tiny" --set steps=20 --shard 2/3 --out "$tmp/o2.csv"
refuse "another sweep" "^$tmp/o2.csv: a shard of another sweep" \
  "$tmp/s1.csv" "$tmp/o2.csv" "$tmp/s3.csv"
refuse "a missing shard" "^shard 3/3 missing" "$tmp/s1.csv" "$tmp/s2.csv"
refuse "a shard twice" "^$tmp/s2.csv: shard 2/3 again" \
  "$tmp/s1.csv" "$tmp/s2.csv" "$tmp/s2.csv" "$tmp/s3.csv"
head -4 "$tmp/s3.csv" >"$tmp/s3cut.csv"
refuse "an incomplete shard" "^$tmp/s3cut.csv: incomplete: shard 3/3 has 2 of its 4 rows" \
  "$tmp/s1.csv" "$tmp/s2.csv" "$tmp/s3cut.csv"
refuse "the whole sweep" "^$tmp/serial.csv: the whole sweep, not a shard" "$tmp/serial.csv"
expect 2 "merge: no parts" -- "$bin" merge --out "$tmp/r.csv"

# A shard's --resume: from its cut partial file to the shard's bytes.
head -5 "$tmp/s1.csv" >"$tmp/r1.csv.partial"
expect 0 "shard resume" -- "$bin" sweep "$tiny" --shard 1/3 --out "$tmp/r1.csv" --resume
same "$tmp/r1.csv" "$tmp/s1.csv" "resumed shard"
expect 2 "resume another shard" -- "$bin" sweep "$tiny" --shard 2/3 --out "$tmp/r1.csv" --resume
contains "$tmp/err" "r1.csv: holds shard 1/3, not shard 2/3 (same sweep)" "resume another shard"

# --- MPI ----------------------------------------------------------------
mpi=$(dirname "$bin")/dilosim-mpi
if [ ! -x "$mpi" ]; then
  if [ -n "$CLI_QUICK" ]; then echo "cli_mpi: no $mpi here: MPI part skipped"
  elif command -v mpirun >"$tmp/null"; then bad "mpirun is installed but $mpi is not built"
  else echo "cli_mpi: no MPI: MPI part skipped"; fi
  finish cli_mpi
  exit
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run3() { mpirun -q --oversubscribe -np 3 "$mpi" "$@"; }

expect 0 "mpi sweep" -- run3 sweep "$tiny" --jobs 1
same "$tmp/out" "$tmp/serial.rows" "mpi sweep stdout"
expect 0 "mpi sweep --out" -- run3 sweep "$tiny" --jobs 1 --out "$tmp/mpi.csv"
same "$tmp/mpi.csv" "$tmp/serial.csv" "mpi sweep --out"
expect 0 "mpi shard" -- run3 sweep "$tiny" --shard 2/3 --out "$tmp/mpi2.csv"
same "$tmp/mpi2.csv" "$tmp/s2.csv" "mpi shard"
expect 0 "mpi sweep, static" -- env DILOSIM_MPI_SCHEDULE=static \
  mpirun -q --oversubscribe -np 3 "$mpi" sweep "$tiny" --jobs 2
same "$tmp/out" "$tmp/serial.rows" "mpi sweep, static schedule"
for args in "--grid 0.1,0.5,2,8 --csv" "--grid logspace:-1:1:6"; do
  expect 0 "table $args" -- "$bin" table "$tiny" $args --jobs 2
  cp "$tmp/out" "$tmp/table.serial"
  expect 0 "mpi table $args" -- run3 table "$tiny" $args --jobs 1
  same "$tmp/out" "$tmp/table.serial" "mpi table $args"
done
expect 0 "plan" -- "$bin" plan "$tiny" --target-cu 0.5 --sensitivity --train-hours 0.01 \
  --json --out "$tmp/plan.serial"
expect 0 "mpi plan" -- run3 plan "$tiny" --target-cu 0.5 --sensitivity --train-hours 0.01 \
  --json --out "$tmp/plan.mpi"
same "$tmp/plan.mpi" "$tmp/plan.serial" "mpi plan --out"
expect 2 "mpi input error" -- run3 sweep "$tiny" --vary network.bandwidth_gbps=1,-1 --out "$tmp/e.csv"
contains "$tmp/err" "^point 2 (variant=dp, network.bandwidth_gbps=-1): " "mpi input error"
lines "$tmp/err" 1 "mpi input error: one line"
absent "$tmp/e.csv.partial" "mpi input error"
expect 2 "mpi unknown command" -- run3 run "$tiny"
lines "$tmp/err" 1 "mpi unknown command: one line"

# A rank killed midway (SIGKILL): mpirun stops the others; rank 0 says so
# in one line, FILE.partial keeps its rows, and --resume (over MPI) makes
# the serial bytes.  The reference runs fast-forwarded (the same bytes).
short=
[ -z "$CLI_QUICK" ] || short="--set steps=250"
expect 0 "slow reference" -- "$bin" sweep "$slow" $short --out "$tmp/ref.csv"
q="--full --jobs 1 $short"
# Rank 0's note reaches k.err through mpirun's output forwarding, which a
# loaded machine can tear down before it has read the note: up to three
# attempts, until one shows it.
attempt=0
while [ $attempt -lt 3 ]; do
  attempt=$((attempt + 1))
  rm -f "$tmp/k.csv" "$tmp/k.csv.partial"
  mpirun -q --oversubscribe -np 3 "$mpi" sweep "$slow" $q --out "$tmp/k.csv" \
    >"$tmp/k.out" 2>"$tmp/k.err" &
  mp=$! # the ranks are its children
  i=0
  while [ $i -lt 200 ] && [ "$(cat "$tmp/k.csv.partial" 2>"$tmp/null" | wc -l)" -lt 5 ]; do
    sleep 0.05; i=$((i + 1))
  done
  for pid in $(pgrep -P "$mp"); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>"$tmp/null" | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
      kill -9 "$pid"
    fi
  done
  wait "$mp"; got=$?
  [ -s "$tmp/k.err" ] && break
done
if [ "$got" != 0 ]; then ok; else bad "killed rank: exit 0"; fi
contains "$tmp/k.err" "^dilosim-mpi sweep: stopped by a signal (a rank died" "killed rank"
# The note names the partial file (it said "FILE.partial").
contains "$tmp/k.err" "; $tmp/k.csv.partial keeps the rows written: the same command" \
  "killed rank: the partial file named"
lacks "$tmp/k.err" "FILE.partial" "killed rank: no placeholder"
lines "$tmp/k.err" 1 "killed rank: one line"
absent "$tmp/k.csv" "killed rank"
if [ -e "$tmp/k.csv.partial" ]; then ok; else bad "killed rank: no partial file"; fi
kept=$(wc -l <"$tmp/k.csv.partial")
if [ "$kept" -lt "$(wc -l <"$tmp/ref.csv")" ]; then ok; else bad "killed rank: finished ($kept lines)"; fi
expect 0 "mpi resume" -- run3 sweep "$slow" $q --out "$tmp/k.csv" --resume
same "$tmp/k.csv" "$tmp/ref.csv" "resumed after a killed rank"
absent "$tmp/k.csv.partial" "resumed after a killed rank"

finish cli_mpi
