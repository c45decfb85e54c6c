#!/bin/sh
# cli_sweep.sh -- command-line tests of `dilosim sweep`: help, exit codes,
# the same bytes whatever --jobs is, an output file that appears whole,
# and a killed sweep that --resume completes to the same bytes; "-"; the
# Gbit of a binary-Gbit scenario in the first line (file, stdout, shards
# and their merge, resume); a bandwidth trace's diurnal key swept.
# usage: tests/cli_sweep.sh [path/to/dilosim]   (run by tests/cli.sh)
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
data=$root/tests/data/sweep
. "$root/tests/cli_lib.sh"

tiny=$data/tiny.json slow=$data/slow.json
# The slow sweep simulates every op (--full), so that it lasts long
# enough to be watched and killed; under the sanitizers (CLI_QUICK=1,
# several times slower) it runs fewer steps, so that it lasts about as
# long.  A --full sweep and a fast one write the same bytes.
q=--full
[ -z "$CLI_QUICK" ] || q="--full --set steps=250"

# Help.
expect 0 "sweep help" -- "$bin" sweep --help
contains "$tmp/out" "--vary KEY=SPEC" "sweep help"
contains "$tmp/out" "logspace:A:B:N" "sweep help"
contains "$tmp/out" "--resume" "sweep help"
expect 0 "main help" -- "$bin" --help
contains "$tmp/out" "sweep SCENARIO.json" "main help"

# Usage and input errors: exit 2, one line, no output file.
expect 2 "bad spec" -- "$bin" sweep "$tiny" --vary network.bandwidth_gbps=logspace:1:2 --out "$tmp/e.csv"
contains "$tmp/err" "^--vary network.bandwidth_gbps=logspace:1:2: expected logspace:A:B:N$" "bad spec message"
expect 2 "jobs 0" -- "$bin" sweep "$tiny" --jobs 0
contains "$tmp/err" "--jobs must be an integer" "jobs message"
expect 2 "jobs not a number" -- "$bin" sweep "$tiny" --jobs two
expect 2 "jobs missing" -- "$bin" sweep "$tiny" --jobs
expect 2 "missing scenario" -- "$bin" sweep "$tmp/nope.json" --out "$tmp/e.csv"
contains "$tmp/err" "nope.json: cannot open" "missing scenario message"
expect 2 "no scenario" -- "$bin" sweep
expect 2 "resume without out" -- "$bin" sweep "$tiny" --resume
expect 2 "unknown variant" -- "$bin" sweep "$tiny" --variant fp4
contains "$tmp/err" "expected one of: dp, streaming" "unknown variant message"
expect 2 "bad point" -- "$bin" sweep "$tiny" --vary network.bandwidth_gbps=1,-1 --out "$tmp/e.csv"
contains "$tmp/err" "^point 2 (variant=dp, network.bandwidth_gbps=-1): " "bad point message"
absent "$tmp/e.csv" "input error"
absent "$tmp/e.csv.partial" "input error"

# stdout and --out agree (the file has the digest line first), whatever
# --jobs is; no progress off a terminal.
expect 0 "jobs 1" -- "$bin" sweep "$tiny" --jobs 1
cp "$tmp/out" "$tmp/one.csv"
if [ -s "$tmp/err" ]; then bad "stderr not empty off a terminal"; else ok; fi
expect 0 "jobs 2" -- "$bin" sweep "$tiny" --jobs 2 --out "$tmp/two.csv"
grep -v '^#' "$tmp/two.csv" >"$tmp/two.rows"
same "$tmp/one.csv" "$tmp/two.rows" "jobs 1 vs 2"
absent "$tmp/two.csv.partial" "after success"
if [ "$(wc -l <"$tmp/two.csv")" -eq 14 ]; then ok; else bad "tiny: not 14 lines"; fi
if head -1 "$tmp/two.csv" |
   grep -q '^# dilosim sweep digest [0-9a-f]\{16\} (dilosim 0\.8\.0, .*)$'; then ok
else bad "no digest line first"; fi
contains "$tmp/two.csv" "^variant,network.bandwidth_gbps,compute_utilization,goodput,wall_time_s," "header"
contains "$tmp/two.csv" "^streaming,10,1," "last row"
expect 0 "variant and vary" -- "$bin" sweep "$tiny" --variant streaming --vary network.bandwidth_gbps=1,2 --set steps=20
if [ "$(wc -l <"$tmp/out")" -eq 3 ]; then ok; else bad "--variant --vary: not 3 lines"; fi

# The paper scenarios count binary Gbit: a sweep of one says so at the end
# of its first line, after the version (not part of the identity a resume
# compares); to stdout, where an SI sweep starts with the header, it
# starts with that line without the digest.  Shards merge to the same
# bytes, to a file and to stdout, and a cut file resumes to them.
head -1 "$tmp/one.csv" | grep -q '^variant,' && ok || bad "SI sweep to stdout: a line before the header"
p1b=$root/scenarios/paper/1b.json
bsw="sweep $p1b --variant diloco --vary network.bandwidth_gbps=1,2,4 --set steps=200"
note='; Gbit = 2^30 bits (network\.gbit binary)$'
expect 0 "binary Gbit to stdout" -- "$bin" $bsw
cp "$tmp/out" "$tmp/b.rows"
if head -1 "$tmp/b.rows" | grep -q "^# dilosim sweep (dilosim 0\.8\.0, [^)]*)$note"; then ok
else bad "binary Gbit stdout line: $(head -1 "$tmp/b.rows")"; fi
expect 0 "binary Gbit to a file" -- "$bin" $bsw --out "$tmp/b.csv"
if head -1 "$tmp/b.csv" | grep -q "^# dilosim sweep digest [0-9a-f]\{16\} (dilosim 0\.8\.0, [^)]*)$note"; then ok
else bad "binary Gbit file line: $(head -1 "$tmp/b.csv")"; fi
tail -n +2 "$tmp/b.csv" >"$tmp/b.file.rows"
tail -n +2 "$tmp/b.rows" >"$tmp/b.stdout.rows"
same "$tmp/b.file.rows" "$tmp/b.stdout.rows" "binary Gbit: file and stdout rows"
lines "$tmp/b.csv" 5 "binary Gbit: line, header, 3 rows"
for k in 1 2; do
  expect 0 "binary Gbit shard $k/2" -- "$bin" $bsw --shard $k/2 --out "$tmp/b$k.csv"
done
contains "$tmp/b2.csv" "^# dilosim sweep digest [0-9a-f]\{16\} shard 2/2 of 3 points (dilosim .*$note" "binary Gbit shard line"
expect 0 "binary Gbit merge" -- "$bin" merge "$tmp/b2.csv" "$tmp/b1.csv" --out "$tmp/bm.csv"
same "$tmp/bm.csv" "$tmp/b.csv" "binary Gbit: merged shards"
expect 0 "binary Gbit merge to stdout" -- "$bin" merge "$tmp/b1.csv" "$tmp/b2.csv"
same "$tmp/out" "$tmp/b.rows" "binary Gbit: merged shards on stdout"
head -3 "$tmp/b.csv" >"$tmp/br.csv.partial"
expect 0 "binary Gbit resume" -- "$bin" $bsw --out "$tmp/br.csv" --resume
same "$tmp/br.csv" "$tmp/b.csv" "binary Gbit: resumed sweep"
expect 0 "binary Gbit resume again" -- "$bin" $bsw --out "$tmp/br.csv" --resume
contains "$tmp/err" "already complete" "binary Gbit: resume again"

# The reference: an uninterrupted sweep.
expect 0 "reference" -- "$bin" sweep "$slow" $q --jobs 2 --out "$tmp/ref.csv"
expect 0 "fast" -- "$bin" sweep "$slow" ${q#--full} --jobs 2 --out "$tmp/fast.csv"
tail -n +2 "$tmp/fast.csv" >"$tmp/fast.rows"
tail -n +2 "$tmp/ref.csv" >"$tmp/ref.rows"
same "$tmp/fast.rows" "$tmp/ref.rows" "fast-forward = --full"

# OUT is absent until the rename: watch a running sweep.
"$bin" sweep "$slow" $q --jobs 1 --out "$tmp/w.csv" 2>"$tmp/w.err" &
pid=$!
early=0
while kill -0 "$pid" 2>"$tmp/null"; do
  if [ -e "$tmp/w.csv" ] && ! cmp -s "$tmp/w.csv" "$tmp/ref.csv"; then early=1; fi
  sleep 0.05
done
wait "$pid"
if [ "$early" = 0 ]; then ok; else bad "OUT seen before it was complete"; fi
same "$tmp/w.csv" "$tmp/ref.csv" "watched sweep"

# A sweep killed midway leaves no OUT; --resume completes it to the same
# bytes, and a second --resume has nothing to do.
"$bin" sweep "$slow" $q --jobs 1 --out "$tmp/k.csv" 2>"$tmp/k.err" &
pid=$!
sleep 0.3
kill -9 "$pid" 2>"$tmp/null"
wait "$pid" 2>"$tmp/null"
absent "$tmp/k.csv" "killed sweep"
if [ -e "$tmp/k.csv.partial" ]; then ok; else bad "killed sweep: no partial file"; fi
kept=$(wc -l <"$tmp/k.csv.partial")
if [ "$kept" -lt "$(wc -l <"$tmp/ref.csv")" ]; then ok; else bad "killed sweep finished ($kept lines)"; fi
expect 0 "resume" -- "$bin" sweep "$slow" $q --jobs 2 --out "$tmp/k.csv" --resume
same "$tmp/k.csv" "$tmp/ref.csv" "resumed sweep"
absent "$tmp/k.csv.partial" "resumed sweep"
expect 0 "resume again" -- "$bin" sweep "$slow" $q --out "$tmp/k.csv" --resume
contains "$tmp/err" "already complete" "resume again"
same "$tmp/k.csv" "$tmp/ref.csv" "resume again"

# A partial file of another sweep is refused, and kept.
printf 'variant,steps\n' >"$tmp/o.csv.partial"
expect 2 "other partial" -- "$bin" sweep "$tiny" --out "$tmp/o.csv" --resume
contains "$tmp/err" "o.csv.partial: no sweep digest" "other partial"
if [ -e "$tmp/o.csv.partial" ]; then ok; else bad "other partial removed"; fi
absent "$tmp/o.csv" "other partial"

# Defect 3: --resume kept the rows of another scenario when the header
# and the varied values matched.  The file's digest line now refuses it
# (exit 2, one line naming the file and both digests), and keeps it.
expect 0 "digest base" -- "$bin" sweep "$tiny" --out "$tmp/d.csv"
cp "$tmp/d.csv" "$tmp/d.keep"
expect 2 "resume of another scenario" -- \
  "$bin" sweep "$tiny" --set steps=7 --out "$tmp/d.csv" --resume
hex='[0-9a-f]\{16\}'
contains "$tmp/err" \
  "d.csv: written by another scenario or sweep (digest $hex in the file, $hex for this sweep)$" \
  "another scenario"
lines "$tmp/err" 1 "another scenario: one line"
same "$tmp/d.csv" "$tmp/d.keep" "another scenario: file kept"
head -5 "$tmp/d.csv" >"$tmp/d.csv.partial"
rm "$tmp/d.csv"
expect 2 "resume of another scenario's partial" -- \
  "$bin" sweep "$tiny" --set steps=7 --out "$tmp/d.csv" --resume
contains "$tmp/err" "d.csv.partial: written by another scenario or sweep" "another partial"
if [ -e "$tmp/d.csv.partial" ]; then ok; else bad "another scenario's partial removed"; fi
expect 0 "resume of its own partial" -- "$bin" sweep "$tiny" --out "$tmp/d.csv" --resume
same "$tmp/d.csv" "$tmp/d.keep" "resumed partial"

# Output: stdout errors (defect 6), FIFOs and links (defect 1).
if [ -c /dev/full ]; then
  "$bin" sweep "$tiny" >/dev/full 2>"$tmp/err"; got=$?
  if [ "$got" = 1 ]; then ok; else bad "sweep >/dev/full: exit $got"; fi
  contains "$tmp/err" "^dilosim sweep: write error: No space left on device$" "sweep >/dev/full"
fi
mkfifo "$tmp/sfifo"
cat "$tmp/sfifo" >"$tmp/from_sfifo" &
reader=$!
expect 0 "sweep to a FIFO" -- "$bin" sweep "$tiny" --out "$tmp/sfifo"
reap "$reader"
if [ -p "$tmp/sfifo" ]; then ok; else bad "sweep replaced the FIFO"; fi
same "$tmp/from_sfifo" "$tmp/d.keep" "sweep through the FIFO"
absent "$tmp/sfifo.partial" "sweep to a FIFO"
expect 2 "resume into a FIFO" -- "$bin" sweep "$tiny" --out "$tmp/sfifo" --resume
ln -s d.csv "$tmp/dlink.csv"
expect 0 "sweep to a link" -- "$bin" sweep "$tiny" --out "$tmp/dlink.csv" --resume
if [ -L "$tmp/dlink.csv" ]; then ok; else bad "sweep replaced the link"; fi
contains "$tmp/err" "already complete" "resume through a link"
rm "$tmp/d.csv"
expect 0 "sweep to a dangling link" -- "$bin" sweep "$tiny" --out "$tmp/dlink.csv"
if [ -L "$tmp/dlink.csv" ]; then ok; else bad "sweep replaced the link"; fi
same "$tmp/d.csv" "$tmp/d.keep" "sweep through a link"

# Standard input: "-" is read once (it used to be read again for every
# point), so it sweeps a scenario without variants, or one --variant; the
# rows are those of the file.  Several variants from "-": exit 2.
plain=$data/plain.json
expect 0 "sweep -" -- sh -c '"$1" sweep - --vary steps=20,40 <"$2"' sh "$bin" "$plain"
cp "$tmp/out" "$tmp/stdin.csv"
expect 0 "sweep file" -- "$bin" sweep "$plain" --vary steps=20,40
same "$tmp/stdin.csv" "$tmp/out" "sweep - equals sweep FILE"
lines "$tmp/out" 3 "sweep -: header and 2 rows"
expect 0 "sweep - --variant" -- sh -c '"$1" sweep - --variant dp <"$2"' sh "$bin" "$tiny"
cp "$tmp/out" "$tmp/stdin.csv"
expect 0 "sweep file --variant" -- "$bin" sweep "$tiny" --variant dp
same "$tmp/stdin.csv" "$tmp/out" "sweep - --variant equals sweep FILE --variant"
expect 2 "sweep - with variants" -- sh -c '"$1" sweep - <"$2"' sh "$bin" "$tiny"
contains "$tmp/err" "^<stdin>: read once, it serves one variant only" "sweep - with variants"

# OUT.partial is never written through: a link planted there once made a
# sweep truncate and overwrite the link's target, a FIFO made it hang.
mkdir "$tmp/plant"
echo precious >"$tmp/plant/victim"
ln -s "$tmp/plant/victim" "$tmp/plant/o.csv.partial"
expect 2 "partial: a link" -- "$bin" sweep "$tiny" --out "$tmp/plant/o.csv"
contains "$tmp/err" "o.csv.partial: not a regular file" "partial: a link"
if [ "$(cat "$tmp/plant/victim")" = precious ]; then ok; else bad "partial link: target written"; fi
absent "$tmp/plant/o.csv" "partial: a link"
rm "$tmp/plant/o.csv.partial"
mkfifo "$tmp/plant/o.csv.partial"
expect 2 "partial: a FIFO" -- timeout 20 "$bin" sweep "$tiny" --out "$tmp/plant/o.csv" --resume
contains "$tmp/err" "o.csv.partial: not a regular file" "partial: a FIFO"

# A bandwidth trace's diurnal keys are swept as any dotted key: the
# example's line with a higher low rate gives a higher utilization.
expect 0 "sweep diurnal low_gbps" -- "$bin" sweep "$root/scenarios/examples/diurnal.json" \
  --variant streaming --vary network.bandwidth_trace.diurnal.low_gbps=1,10
lines "$tmp/out" 3 "sweep diurnal low_gbps"
contains "$tmp/out" "^variant,network.bandwidth_trace.diurnal.low_gbps,compute_utilization," \
  "sweep diurnal low_gbps"
if awk -F, 'NR == 2 { a = $3 } NR == 3 { b = $3 } END { exit !(a < b && b < 1) }' \
     "$tmp/out"; then ok; else bad "sweep diurnal low_gbps: utilization not rising"; fi

finish cli_sweep
